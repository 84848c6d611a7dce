//! Line-oriented reading helpers shared by the text formats.

use crate::error::{FormatError, Result};
use augur_source::{Location, Span};
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
    /// The current line's bytes as read (checked for UTF-8 before they reach `buf`).
    raw: Vec<u8>,
    /// Bytes of the file before the current line.
    offset: usize,
}

impl<'p, R: BufRead> Lines<'p, R> {
    pub fn new(reader: R, path: &'p Path) -> Self {
        Lines {
            reader,
            buf: String::with_capacity(128),
            line: 0,
            path,
            raw: Vec::with_capacity(128),
            offset: 0,
        }
    }

    /// A reader whose next line is line `line + 1` of the file, starting `offset` bytes into
    /// it (for reading one line again with the messages it would have had in place).
    pub fn resume(reader: R, path: &'p Path, line: usize, offset: usize) -> Self {
        Lines {
            line,
            offset,
            ..Lines::new(reader, path)
        }
    }

    /// The reader after the current line, the current line's number, and the offset of the
    /// next line in the file.
    pub fn into_rest(self) -> (R, usize, usize) {
        (self.reader, self.line, self.offset + self.raw.len())
    }

    /// Reads the next line into `buf`; `false` at end of file.
    pub fn advance(&mut self) -> Result<bool> {
        self.buf.clear();
        self.offset += self.raw.len();
        self.raw.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.raw)
            .map_err(|e| FormatError::Io {
                path: self.path.to_path_buf(),
                source: e,
            })?;
        if n == 0 {
            return Ok(false);
        }
        match std::str::from_utf8(&self.raw) {
            Ok(text) => self.buf.push_str(text),
            Err(_) => {
                let file = self.path.display().to_string();
                let d = augur_source::decode_utf8_at(
                    &file,
                    self.raw.clone(),
                    self.line + 1,
                    self.offset,
                )
                .expect_err("not UTF-8");
                let location = d.location.clone().unwrap_or_else(|| Location::file(file));
                return Err(FormatError::syntax(location, d.message));
            }
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

    /// A syntax error on the current line, under `token` if it is a slice of `buf` (else
    /// under the whole line).
    pub fn err(&self, token: Option<&str>, message: impl Into<String>) -> FormatError {
        FormatError::syntax(self.location(token), message)
    }

    /// The location of `token` (a slice of `buf`) on the current line, or of the whole line
    /// (without surrounding blanks) when `token` is `None` or not a slice of `buf`.
    pub fn location(&self, token: Option<&str>) -> Location {
        let span = token
            .and_then(|t| span_of(&self.buf, t))
            .unwrap_or_else(|| trimmed_span(&self.buf));
        Location::in_line_bytes(self.path.display().to_string(), self.line, &self.buf, span)
    }

    /// The location of the `field`-th whitespace-separated field of the current line (the
    /// whole line when it has fewer fields).
    pub fn field_location(&self, field: usize) -> Location {
        self.location(self.buf.split_whitespace().nth(field))
    }

    /// The location of the start of an empty or missing line `line` (an empty file, the end
    /// of the file).
    pub fn end_location(&self, line: usize) -> Location {
        end_location(self.path, line)
    }
}

/// Calls `f` with each line of `reader` (its bytes with the `\n`, the line's number, and
/// its offset in the file), numbering from `line + 1` at file offset `offset`: the lines are
/// handed over where the reader's buffer holds them, copied only when one straddles two
/// fills of the buffer. Returns the number of the last line.
pub(crate) fn for_each_line(
    mut reader: impl BufRead,
    path: &Path,
    mut line: usize,
    mut offset: usize,
    mut f: impl FnMut(&[u8], usize, usize) -> Result<()>,
) -> Result<usize> {
    let io = |e| FormatError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        let len = buf.len();
        if len == 0 {
            break;
        }
        let mut start = 0;
        if !carry.is_empty() {
            let Some(i) = memchr::memchr(b'\n', buf) else {
                carry.extend_from_slice(buf);
                reader.consume(len);
                continue;
            };
            carry.extend_from_slice(&buf[..=i]);
            line += 1;
            f(&carry, line, offset)?;
            offset += carry.len();
            carry.clear();
            start = i + 1;
        }
        let rest = &buf[start..];
        let mut from = 0;
        for i in memchr::memchr_iter(b'\n', rest) {
            let text = &rest[from..=i];
            line += 1;
            f(text, line, offset)?;
            offset += text.len();
            from = i + 1;
        }
        carry.extend_from_slice(&rest[from..]);
        reader.consume(len);
    }
    if !carry.is_empty() {
        line += 1;
        f(&carry, line, offset)?;
    }
    Ok(line)
}

/// The location of the start of an empty or missing line `line` of the file at `path`.
pub(crate) fn end_location(path: &Path, line: usize) -> Location {
    Location::in_line(path.display().to_string(), line.max(1), 1, 1, "")
}

/// The byte range of `token` within `line`, if `token` is a sub-slice of `line`.
pub(crate) fn span_of(line: &str, token: &str) -> Option<Span> {
    let start = line.as_ptr() as usize;
    let t = token.as_ptr() as usize;
    if t >= start && t + token.len() <= start + line.len() {
        Some(Span::new(t - start, t - start + token.len()))
    } else {
        None
    }
}

/// The span of `line` without leading and trailing blanks (the whole line as the cause).
pub(crate) fn trimmed_span(line: &str) -> Span {
    let start = line.len() - line.trim_start().len();
    Span::new(start, line.trim_end().len().max(start))
}

/// The location of field `field` (whitespace-separated) of line `line` of the file at
/// `path`, read again from the file: for errors found after the file was read (a row that
/// does not sum to 1, found when the model is built). Only the file's name when it cannot be
/// read again.
pub(crate) fn reread_location(path: &Path, line: usize, field: usize) -> Location {
    use std::io::BufRead as _;
    let name = path.display().to_string();
    let text = crate::confine::open(path).ok().and_then(|f| {
        std::io::BufReader::new(f)
            .lines()
            .nth(line.checked_sub(1)?)?
            .ok()
    });
    match text {
        Some(text) => {
            let text = if line == 1 {
                text.trim_start_matches('\u{feff}').to_string()
            } else {
                text
            };
            let span = text
                .split_whitespace()
                .nth(field)
                .and_then(|t| span_of(&text, t))
                .unwrap_or_else(|| trimmed_span(&text));
            Location::in_line_bytes(name, line, &text, span)
        }
        None if line > 0 => Location::line(name, line),
        None => Location::file(name),
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

/// The bounds `lo, hi` written inside the brackets of an interval (`inner`), checked with
/// [`augur_dtmc::interval::interval_ok`]: `bad()` when they are not two reals, an error under
/// `token` naming the interval as `text` when they are out of order or outside `[0, 1]`.
pub(crate) fn interval_bounds(
    lines: &Lines<'_, impl BufRead>,
    token: &str,
    inner: &str,
    text: &str,
    bad: impl Fn() -> FormatError,
) -> Result<(f64, f64)> {
    let (l, h) = inner.split_once(',').ok_or_else(&bad)?;
    let (lo, hi) = (
        parse_real(l.trim()).ok_or_else(&bad)?,
        parse_real(h.trim()).ok_or_else(&bad)?,
    );
    if !augur_dtmc::interval::interval_ok(lo, hi) {
        let what = if lo > hi {
            "has lo > hi"
        } else {
            "is not within [0, 1]"
        };
        return Err(lines.err(Some(token), format!("interval {text} {what}")));
    }
    Ok((lo, hi))
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
        assert_eq!(span_of(line, tok), Some(Span::new(5, 8)));
        assert_eq!(span_of(line, "abc"), None);
        assert_eq!(trimmed_span("  a b \t"), Span::new(2, 5));
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
