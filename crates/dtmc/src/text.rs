//! Line-oriented reading helpers shared by the text formats.

use crate::error::{DtmcError, Result};
use std::io::BufRead;
use std::path::Path;

/// A buffered line reader that keeps one line buffer (no allocation per line) and the
/// current 1-based line number.
pub(crate) struct Lines<'p, R> {
    reader: R,
    /// The current line, without its line terminator.
    pub buf: String,
    /// The current line number (1-based; 0 before the first line).
    pub line: usize,
    /// The file name for messages.
    pub path: &'p Path,
}

impl<'p, R: BufRead> Lines<'p, R> {
    pub fn new(reader: R, path: &'p Path) -> Self {
        Lines {
            reader,
            buf: String::with_capacity(128),
            line: 0,
            path,
        }
    }

    /// Reads the next line into `buf`; `false` at end of file.
    pub fn advance(&mut self) -> Result<bool> {
        self.buf.clear();
        let n = self
            .reader
            .read_line(&mut self.buf)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidData => {
                    DtmcError::syntax(self.path, self.line + 1, None, "line is not valid UTF-8")
                }
                _ => DtmcError::Io {
                    path: self.path.to_path_buf(),
                    source: e,
                },
            })?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        while self.buf.ends_with('\n') || self.buf.ends_with('\r') {
            self.buf.pop();
        }
        // A byte-order mark (files saved by Windows editors) is not part of the first line:
        // left in, it made the header `2 2` fail as "expected header" with nothing visible.
        if self.line == 1 && self.buf.starts_with('\u{feff}') {
            self.buf.drain(..'\u{feff}'.len_utf8());
        }
        Ok(true)
    }

    /// Reads lines until one that is neither blank nor a comment (starting with `comment`);
    /// `false` at end of file. Comment lines are passed to `on_comment`.
    pub fn advance_content(
        &mut self,
        comment: &str,
        mut on_comment: impl FnMut(&str),
    ) -> Result<bool> {
        loop {
            if !self.advance()? {
                return Ok(false);
            }
            let t = self.buf.trim();
            if t.is_empty() {
                continue;
            }
            if !comment.is_empty() && t.starts_with(comment) {
                on_comment(t);
                continue;
            }
            return Ok(true);
        }
    }

    /// A syntax error on the current line, at the column of `token` if it is a slice of `buf`.
    pub fn err(&self, token: Option<&str>, message: impl Into<String>) -> DtmcError {
        DtmcError::syntax(
            self.path,
            self.line,
            token.and_then(|t| column_of(&self.buf, t)),
            message,
        )
    }
}

/// The 1-based column of `token` within `line`, if `token` is a sub-slice of `line`.
pub(crate) fn column_of(line: &str, token: &str) -> Option<usize> {
    let start = line.as_ptr() as usize;
    let t = token.as_ptr() as usize;
    if t >= start && t <= start + line.len() {
        Some(line[..t - start].chars().count() + 1)
    } else {
        None
    }
}

/// Parses a probability or other non-negative real: a decimal/scientific number or a fraction
/// `a/b`.
pub(crate) fn parse_real(tok: &str) -> Option<f64> {
    if let Some((a, b)) = tok.split_once('/') {
        let a: f64 = a.trim().parse().ok()?;
        let b: f64 = b.trim().parse().ok()?;
        return Some(a / b);
    }
    tok.parse().ok()
}

/// [`fmt_num`] without allocating: a `Display` wrapper.
pub(crate) struct Num(pub f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x.fract() == 0.0 && x.abs() < 1e15 {
            write!(f, "{}", x as i64)
        } else {
            write!(f, "{x:?}")
        }
    }
}

/// Formats a number compactly for the explicit formats: integers without a fraction,
/// everything else with shortest round-trip digits.
pub(crate) fn fmt_num(x: f64) -> String {
    Num(x).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_numbers() {
        let line = "  12 abc";
        let tok = line.split_whitespace().nth(1).unwrap();
        assert_eq!(column_of(line, tok), Some(6));
        assert_eq!(column_of(line, "abc"), None);
        assert_eq!(parse_real("1/4"), Some(0.25));
        assert_eq!(parse_real("2.5e-1"), Some(0.25));
        assert_eq!(parse_real("x"), None);
        assert_eq!(fmt_num(1.0), "1");
        assert_eq!(fmt_num(0.1), "0.1");
        assert_eq!(fmt_num(1e-20), "1e-20");
        assert_eq!(fmt_num(1e-20).parse::<f64>().unwrap(), 1e-20);
        assert_eq!(fmt_num(-3.0), "-3");
        assert_eq!(fmt_num(1e300), "1e300");
    }

    #[test]
    fn a_byte_order_mark_is_dropped_from_the_first_line_only() {
        let text = "\u{feff}2 2\r\n\u{feff}x\n";
        let mut lines = Lines::new(text.as_bytes(), Path::new("m.tra"));
        assert!(lines.advance().unwrap());
        assert_eq!(lines.buf, "2 2");
        assert!(lines.advance().unwrap());
        assert_eq!(lines.buf, "\u{feff}x");
        // And a whole file with a BOM reads.
        let t =
            crate::explicit::read_tra("\u{feff}2 2\n0 1 1\n1 1 1\n".as_bytes(), Path::new("m.tra"));
        assert!(t.is_ok(), "{:?}", t.err());
    }
}
