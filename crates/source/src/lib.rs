//! augur-source: where an error is in a user's text, and the one way Augur prints it.
//!
//! Every parser and reader of Augur (expressions, PCTL, the PRISM language, explicit files,
//! JSON models, traces, abstraction specs, monitor policies) reports its errors through the
//! types of this crate, so that every front-end (the CLI, the MCP server, the Python package)
//! shows them alike: the file, line and column, the offending line and a caret under the cause.
//!
//! Main types:
//! - [`SourceFile`]: a named text with a line index; turns byte [`Span`]s into [`Location`]s.
//! - [`Location`]: file, 1-based line and column (in characters), the width of the caret and
//!   the text of the line. Streaming readers that never hold the whole file build one directly
//!   with [`Location::in_line`].
//! - [`Diagnostic`]: a severity, a message, an optional location and notes; its `Display` is the
//!   rendered form.
//! - [`json::JsonPath`]: a place in a JSON document (`transitions[3][1]`), located in its text
//!   for errors found after deserialising.
//!
//! ```
//! use augur_source::{Diagnostic, SourceFile, Span};
//! let src = SourceFile::new("--prop", "P=? [ F<0 \"goal\" ]");
//! let d = Diagnostic::error("step bound `<0` admits no step").at(src.location(Span::new(7, 9)));
//! assert_eq!(
//!     d.to_string(),
//!     "error: step bound `<0` admits no step\n \
//!      --> --prop:1:8\n  \
//!      |\n\
//!      1 | P=? [ F<0 \"goal\" ]\n  \
//!      |        ^^\n"
//! );
//! ```
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};
use std::fmt;

pub mod json;
pub mod number;

/// The reward structures of a model as an error message lists them: `1 "cost", 2 (unnamed)`,
/// or `none`. PRISM numbers reward structures from 1; a name is quoted.
pub fn reward_structure_list(names: &[String]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.is_empty() {
                format!("{} (unnamed)", i + 1)
            } else {
                format!("{} \"{n}\"", i + 1)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A byte range `[start, end)` in a source text.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte (`end == start` for a point).
    pub end: usize,
}

impl Span {
    /// The span `[start, end)`; a reversed pair is swapped.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start.min(end),
            end: start.max(end),
        }
    }

    /// The empty span at `offset`.
    pub fn point(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span is a point.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(r: std::ops::Range<usize>) -> Span {
        Span::new(r.start, r.end)
    }
}

/// A named source text (a file, `--prop`, an MCP request) with an index of its line starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    name: String,
    text: String,
    /// Byte offset of the start of every line (the first is 0).
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// A source named `name` (shown in messages) with the given text.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// The name shown in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of lines (a text without a newline has one line).
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The text of 1-based line `line`, without its line ending (`None` past the end).
    pub fn line_text(&self, line: usize) -> Option<&str> {
        let start = *self.line_starts.get(line.checked_sub(1)?)?;
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&next| next - 1);
        let s = self.text.get(start..end)?;
        Some(s.strip_suffix('\r').unwrap_or(s))
    }

    /// The 1-based line and column (in characters) of byte `offset` (clamped into the text and
    /// moved back to a character boundary).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = self.floor_char_boundary(offset);
        let line_idx = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line_idx];
        let column = self.text[start..offset].chars().count() + 1;
        (line_idx + 1, column)
    }

    /// The location of `span`: its first line and column; the caret covers the span's part on
    /// that line (at least one character).
    pub fn location(&self, span: Span) -> Location {
        let (line, column) = self.line_col(span.start);
        let line_text = self.line_text(line).unwrap_or("").to_string();
        let start = self.floor_char_boundary(span.start);
        let end = self.floor_char_boundary(span.end.max(start));
        let width = self.text[start..end]
            .split('\n')
            .next()
            .unwrap_or("")
            .trim_end_matches('\r')
            .chars()
            .count();
        Location {
            file: self.name.clone(),
            line,
            column,
            width: width.max(1),
            line_text: Some(line_text),
        }
    }

    fn floor_char_boundary(&self, offset: usize) -> usize {
        let mut o = offset.min(self.text.len());
        while !self.text.is_char_boundary(o) {
            o -= 1;
        }
        o
    }
}

/// Where something is in a user's text: file, line and column, and (when known) the text of
/// the line, for the caret display.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    /// The file name as the user gave it (or `--prop`, `<model_text>`, ...).
    pub file: String,
    /// 1-based line (0 when only the file is known).
    pub line: usize,
    /// 1-based column in characters (0 when only the line is known).
    pub column: usize,
    /// Number of characters the caret covers (at least 1 when the column is known).
    pub width: usize,
    /// The text of the line, without its line ending, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_text: Option<String>,
}

impl Location {
    /// The location of the byte range `span` in `source` (a one-off [`SourceFile`]; build a
    /// `SourceFile` once when locating many spans of the same text).
    pub fn at(file: &str, source: &str, span: Span) -> Location {
        SourceFile::new(file, source).location(span)
    }

    /// A column on a line whose text the caller holds (streaming readers of large files).
    /// `column` is 1-based in characters; `width` the number of characters to underline.
    pub fn in_line(
        file: impl Into<String>,
        line: usize,
        column: usize,
        width: usize,
        line_text: impl Into<String>,
    ) -> Location {
        let text: String = line_text.into();
        let text = text.trim_end_matches(['\n', '\r']).to_string();
        Location {
            file: file.into(),
            line,
            column,
            width: if column == 0 { 0 } else { width.max(1) },
            line_text: Some(text),
        }
    }

    /// The character-column and width of the byte range `bytes` of `line_text`, as
    /// [`Location::in_line`] wants them (for readers that split a line into fields).
    pub fn in_line_bytes(
        file: impl Into<String>,
        line: usize,
        line_text: &str,
        bytes: Span,
    ) -> Location {
        let sf = SourceFile::new("", line_text);
        let mut loc = sf.location(bytes);
        loc.file = file.into();
        loc.line = line;
        loc
    }

    /// A whole line, without a column.
    pub fn line(file: impl Into<String>, line: usize) -> Location {
        Location {
            file: file.into(),
            line,
            column: 0,
            width: 0,
            line_text: None,
        }
    }

    /// Only the file.
    pub fn file(file: impl Into<String>) -> Location {
        Location::line(file, 0)
    }
}

/// The text of `bytes` read from `file`, or, when they are not valid UTF-8, a diagnostic at
/// the first invalid byte: its line and column (counted in the valid text before it), the
/// line shown with the invalid bytes replaced, and its byte offset in the message.
///
/// ```
/// let d = augur_source::decode_utf8("m.pm", b"dtmc\nmodule \xff m\n".to_vec()).unwrap_err();
/// assert_eq!(d.location.as_ref().map(|l| (l.line, l.column)), Some((2, 8)));
/// assert!(d.message.contains("byte 12"));
/// ```
pub fn decode_utf8(file: &str, bytes: Vec<u8>) -> Result<String, Box<Diagnostic>> {
    decode_utf8_at(file, bytes, 1, 0)
}

/// [`decode_utf8`] for a piece of a file (a line of a streaming reader) that starts on line
/// `first_line`, at byte `first_offset` of the file.
pub fn decode_utf8_at(
    file: &str,
    bytes: Vec<u8>,
    first_line: usize,
    first_offset: usize,
) -> Result<String, Box<Diagnostic>> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or("");
        let line = first_line + valid.matches('\n').count();
        let line_start = valid.rfind('\n').map_or(0, |i| i + 1);
        let column = valid[line_start..].chars().count() + 1;
        let line_end = bytes[offset..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| offset + i);
        let line_text = String::from_utf8_lossy(&bytes[line_start..line_end]);
        Box::new(
            Diagnostic::error(format!(
                "not valid UTF-8: byte {} (0x{:02x}) starts no character",
                first_offset + offset,
                bytes[offset]
            ))
            .at(Location::in_line(file, line, column, 1, line_text)),
        )
    })
}

impl fmt::Display for Location {
    /// `file:line:col`, `file:line` or `file`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}", self.file),
            (l, 0) => write!(f, "{}:{l}", self.file),
            (l, c) => write!(f, "{}:{l}:{c}", self.file),
        }
    }
}

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input is rejected.
    Error,
    /// The input is accepted, but something deserves attention.
    Warning,
    /// Information.
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// A message about a user's input, optionally located; `Display` renders it the one way Augur
/// prints located messages:
///
/// ```text
/// error: MESSAGE
///  --> FILE:LINE:COL
///   |
/// 3 | the offending line
///   |     ^^^
///   = note: NOTE
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Error, warning or note.
    pub severity: Severity,
    /// What is wrong, one line, without the `error:` prefix.
    pub message: String,
    /// Where, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// Further lines (`= note: ...`): hints, what was expected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error with the given message.
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, message)
    }

    /// A warning with the given message.
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, message)
    }

    /// A diagnostic of any severity.
    pub fn new(severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            message: message.into(),
            location: None,
            notes: Vec::new(),
        }
    }

    /// The same, located at `location`.
    pub fn at(mut self, location: Location) -> Diagnostic {
        self.location = Some(location);
        self
    }

    /// The same, located at `location` when there is one.
    pub fn at_opt(mut self, location: Option<Location>) -> Diagnostic {
        self.location = location;
        self
    }

    /// The same with one more note.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The rendered form (the same as `to_string()`), ending with a newline.
    pub fn render(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: {}", self.severity, self.message)?;
        let mut pad = String::from(" ");
        if let Some(loc) = &self.location {
            let gutter = loc.line.to_string();
            pad = " ".repeat(gutter.len());
            writeln!(f, "{pad}--> {loc}")?;
            if let (Some(text), true) = (&loc.line_text, loc.line > 0) {
                let (text, column, width) = shown_part(text, loc.column, loc.width);
                let loc = Location {
                    column,
                    width,
                    ..Location::line(String::new(), loc.line)
                };
                writeln!(f, "{pad} |")?;
                writeln!(f, "{gutter} | {text}")?;
                if loc.column > 0 {
                    // Reproduce tabs before the column so the caret lines up in a terminal.
                    let before: String = text
                        .chars()
                        .take(loc.column - 1)
                        .map(|c| if c == '\t' { '\t' } else { ' ' })
                        .collect();
                    let shown = text.chars().count().saturating_sub(loc.column - 1);
                    let width = loc.width.min(shown).max(1);
                    writeln!(f, "{pad} | {before}{}", "^".repeat(width))?;
                }
            }
        }
        for note in &self.notes {
            writeln!(f, "{pad} = note: {note}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Lines longer than this many characters are shown as a part around the caret (a learned
/// model's JSON is one line of megabytes).
pub const MAX_SHOWN_LINE_CHARS: usize = 120;

/// How many characters before the caret a shortened line keeps.
const SHOWN_BEFORE_CARET: usize = 40;

/// The part of `text` to show, and the caret's column and width in that part: the whole line
/// when it is short, else at most [`MAX_SHOWN_LINE_CHARS`] characters around the caret, with
/// `…` where the line was cut.
fn shown_part(
    text: &str,
    column: usize,
    width: usize,
) -> (std::borrow::Cow<'_, str>, usize, usize) {
    let n = text.chars().count();
    if n <= MAX_SHOWN_LINE_CHARS {
        return (text.into(), column, width);
    }
    let col0 = column.saturating_sub(1).min(n);
    let start = if column == 0 {
        0
    } else {
        col0.saturating_sub(SHOWN_BEFORE_CARET)
    };
    let end = (start + MAX_SHOWN_LINE_CHARS).min(n);
    let mut shown = String::new();
    if start > 0 {
        shown.push('…');
    }
    shown.extend(text.chars().skip(start).take(end - start));
    if end < n {
        shown.push('…');
    }
    if column == 0 {
        return (shown.into(), 0, 0);
    }
    let column = col0 - start + 1 + usize::from(start > 0);
    let width = width.min(end.saturating_sub(col0)).max(1);
    (shown.into(), column, width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn long_lines_are_shown_around_the_caret() {
        // A one-line file of 10,000 characters with the cause at column 5,001.
        let text = format!("{}{}{}", "a".repeat(5000), "BAD", "b".repeat(4997));
        let d = Diagnostic::error("bad").at(Location::in_line("m.json", 1, 5001, 3, text));
        let out = d.to_string();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[1], " --> m.json:1:5001");
        let shown = lines[3].strip_prefix("1 | ").unwrap();
        assert_eq!(shown.chars().count(), MAX_SHOWN_LINE_CHARS + 2);
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        // The caret is under BAD.
        let caret = lines[4].strip_prefix("  | ").unwrap();
        let at = caret.find('^').unwrap();
        assert_eq!(caret.len() - at, 3);
        let under: String = shown.chars().skip(at).take(3).collect();
        assert_eq!(under, "BAD");
        // Near the start: no leading cut.
        let text = format!("X{}", "c".repeat(500));
        let d = Diagnostic::error("bad").at(Location::in_line("m.json", 1, 1, 1, text));
        let out = d.to_string();
        assert!(out.contains("1 | Xccc") && out.contains("…\n") && out.contains("  | ^\n"));
    }

    #[test]
    fn renders_like_rustc() {
        let src = SourceFile::new("m.pm", "dtmc\nmodule m\n\tx : [0..2] init 3;\nendmodule\n");
        let loc = src.location(Span::new(32, 33));
        assert_eq!((loc.line, loc.column), (3, 19));
        let d = Diagnostic::error("initial value 3 is outside [0..2]")
            .at(loc)
            .with_note("declared here");
        assert_eq!(
            d.to_string(),
            "error: initial value 3 is outside [0..2]\n --> m.pm:3:19\n  |\n3 | \tx : [0..2] init 3;\n  | \t                 ^\n  = note: declared here\n"
        );
    }

    #[test]
    fn unlocated_and_line_only() {
        assert_eq!(Diagnostic::error("boom").to_string(), "error: boom\n");
        let d = Diagnostic::warning("late").at(Location::line("t.jsonl", 12));
        assert_eq!(d.to_string(), "warning: late\n  --> t.jsonl:12\n");
        let d = Diagnostic::error("empty").at(Location::file("x.tra"));
        assert_eq!(d.to_string(), "error: empty\n --> x.tra\n");
    }

    #[test]
    fn streaming_reader_location() {
        let loc = Location::in_line_bytes("bad.tra", 3, "0 7 1\r\n", Span::new(2, 3));
        assert_eq!(loc.to_string(), "bad.tra:3:3");
        let d = Diagnostic::error("state 7 out of range").at(loc);
        assert_eq!(
            d.to_string(),
            "error: state 7 out of range\n --> bad.tra:3:3\n  |\n3 | 0 7 1\n  |   ^\n"
        );
    }

    #[test]
    fn caret_spans_only_the_first_line_and_end_of_input() {
        let src = SourceFile::new("f", "ab\ncd");
        let loc = src.location(Span::new(1, 4));
        assert_eq!((loc.line, loc.column, loc.width), (1, 2, 1));
        let end = src.location(Span::point(5));
        assert_eq!((end.line, end.column, end.width), (2, 3, 1));
        // The caret after the last character still renders one `^`.
        assert!(Diagnostic::error("x")
            .at(end)
            .to_string()
            .ends_with("  |   ^\n"));
    }

    #[test]
    fn multibyte_columns_count_characters() {
        let src = SourceFile::new("f", "é = ü + 1");
        let loc = src.location(Span::new("é = ".len(), "é = ü".len()));
        assert_eq!((loc.line, loc.column, loc.width), (1, 5, 1));
        // An offset inside a character moves back to its start.
        assert_eq!(src.line_col(1), (1, 1));
    }

    #[test]
    fn serialises_for_machine_output() {
        let loc = Location::in_line("a.drn", 4, 2, 3, "@type: dtmc");
        let d = Diagnostic::error("bad").at(loc);
        let j = serde_json::to_value(&d).unwrap();
        assert_eq!(j["location"]["line"], 4);
        assert_eq!(j["location"]["column"], 2);
        assert_eq!(j["severity"], "error");
    }

    proptest! {
        #[test]
        fn line_col_agrees_with_a_scan(text in "[a-c\n\té]{0,60}", off in 0usize..80) {
            let src = SourceFile::new("p", text.clone());
            let (line, col) = src.line_col(off);
            let mut o = off.min(text.len());
            while !text.is_char_boundary(o) { o -= 1; }
            let before = &text[..o];
            prop_assert_eq!(line, before.matches('\n').count() + 1);
            let ls = before.rfind('\n').map_or(0, |i| i + 1);
            prop_assert_eq!(col, before[ls..].chars().count() + 1);
            prop_assert_eq!(src.line_text(line).map(str::to_string),
                text.split('\n').nth(line - 1).map(|s| s.trim_end_matches('\r').to_string()));
        }
    }
}
