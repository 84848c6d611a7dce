//! Locating a value of a JSON document by its path, for errors found after deserialising
//! (serde reports line and column only for syntax and shape errors).
//!
//! ```
//! use augur_source::json::JsonPath;
//! use augur_source::{SourceFile, Span};
//! let text = "{\"states\": 2,\n \"transitions\": [[0, 1, 1], [1, 7, 1]]}";
//! let path = JsonPath::root().key("transitions").index(1).index(1);
//! assert_eq!(path.to_string(), "transitions[1][1]");
//! let span = path.span_in(text).unwrap();
//! assert_eq!(&text[span.start..span.end], "7");
//! let loc = SourceFile::new("m.json", text).location(span);
//! assert_eq!((loc.line, loc.column), (2, 33));
//! ```

use crate::{Diagnostic, Location, Span};
use jsonc_parser::tokens::Token;
use jsonc_parser::Scanner;
use std::fmt;

/// One step of a [`JsonPath`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum JsonSegment {
    /// A member of an object.
    Key(String),
    /// An element of an array (0-based).
    Index(usize),
}

/// A path from the root of a JSON document to one of its values, e.g. `rewards[0].state`.
/// `Display` prints it the way Augur's messages name places in a JSON model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct JsonPath {
    segments: Vec<JsonSegment>,
}

impl JsonPath {
    /// The document itself.
    pub fn root() -> JsonPath {
        JsonPath::default()
    }

    /// The member `key` of the object at this path.
    pub fn key(mut self, key: impl Into<String>) -> JsonPath {
        self.segments.push(JsonSegment::Key(key.into()));
        self
    }

    /// The element `index` of the array at this path.
    pub fn index(mut self, index: usize) -> JsonPath {
        self.segments.push(JsonSegment::Index(index));
        self
    }

    /// The steps, from the root.
    pub fn segments(&self) -> &[JsonSegment] {
        &self.segments
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// The byte range of the value at this path in the JSON text `text` (the whole value: a
    /// scalar, or an array or object from its opening to its closing bracket). `None` when the
    /// text does not parse that far or has no such value. Memory is constant: the text is
    /// scanned, not parsed into a tree.
    pub fn span_in(&self, text: &str) -> Option<Span> {
        let mut sc = Scanner::new(text);
        let mut tok = next(&mut sc)?;
        for seg in &self.segments {
            match (seg, tok) {
                (JsonSegment::Key(key), Token::OpenBrace) => {
                    tok = next(&mut sc)?;
                    loop {
                        let Token::String(name) = tok else {
                            return None;
                        };
                        if !matches!(next(&mut sc)?, Token::Colon) {
                            return None;
                        }
                        tok = next(&mut sc)?;
                        if name == key.as_str() {
                            break;
                        }
                        skip_value(&mut sc, tok)?;
                        match next(&mut sc)? {
                            Token::Comma => tok = next(&mut sc)?,
                            _ => return None,
                        }
                    }
                }
                (JsonSegment::Index(i), Token::OpenBracket) => {
                    tok = next(&mut sc)?;
                    for _ in 0..*i {
                        if matches!(tok, Token::CloseBracket) {
                            return None;
                        }
                        skip_value(&mut sc, tok)?;
                        match next(&mut sc)? {
                            Token::Comma => tok = next(&mut sc)?,
                            _ => return None,
                        }
                    }
                    if matches!(tok, Token::CloseBracket) {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        let start = sc.token_start();
        skip_value(&mut sc, tok)?;
        Some(Span::new(start, sc.token_end()))
    }
}

/// The next token that is not a comment.
fn next<'a>(sc: &mut Scanner<'a>) -> Option<Token<'a>> {
    loop {
        match sc.scan().ok()?? {
            Token::CommentLine(_) | Token::CommentBlock(_) => continue,
            t => return Some(t),
        }
    }
}

/// Moves past the value starting with `first` (the scanner's current token), leaving the
/// scanner on its last token.
fn skip_value(sc: &mut Scanner<'_>, first: Token<'_>) -> Option<()> {
    let mut depth = 0usize;
    let mut tok = first;
    loop {
        match tok {
            Token::OpenBrace | Token::OpenBracket => depth += 1,
            Token::CloseBrace | Token::CloseBracket => depth = depth.checked_sub(1)?,
            Token::Comma | Token::Colon if depth == 0 => return None,
            _ => {}
        }
        if depth == 0 {
            return Some(());
        }
        tok = next(sc)?;
    }
}

impl fmt::Display for JsonPath {
    /// `transitions[3][1]`, `rewards[0].state`, `labels["a b"]`; the root is `(document)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.segments.is_empty() {
            return f.write_str("(document)");
        }
        for (i, s) in self.segments.iter().enumerate() {
            match s {
                JsonSegment::Index(k) => write!(f, "[{k}]")?,
                JsonSegment::Key(k)
                    if !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                JsonSegment::Key(k) => write!(f, "[{k:?}]")?,
            }
        }
        Ok(())
    }
}

/// Parses `text` (the contents of `file`) as any JSON document `T`,
/// with errors located at the offending value (file `file`, line, column; for shape errors the
/// value's JSON path is named in the message). The error is a located [`Diagnostic`].
pub fn parse_json<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<T, Box<Diagnostic>> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        use serde_path_to_error::Segment;
        let at = e.path().to_string();
        // The value being read, when the path leads to one in the text.
        let mut json_path = Some(JsonPath::root());
        for seg in e.path().iter() {
            json_path = match (json_path, seg) {
                (Some(p), Segment::Seq { index }) => Some(p.index(*index)),
                (Some(p), Segment::Map { key }) => Some(p.key(key.clone())),
                _ => None,
            };
        }
        let e = e.into_inner();
        // At the end of the input the cause is the missing rest, after the last character.
        let offset = if e.is_eof() {
            text.trim_end().len()
        } else {
            offset_of_line_col(text, e.line(), e.column())
        };
        let message = strip_position(&e);
        let span = match json_path.filter(|p| !p.is_root()) {
            _ if message.starts_with("unknown field `") => {
                // serde stops after the key: point at the key itself.
                let key = message.split('`').nth(1).unwrap_or("");
                let quoted = format!("\"{key}\"");
                let upto = (offset + 1).min(text.len());
                text.get(..upto)
                    .and_then(|t| t.rfind(&quoted))
                    .map_or(Span::point(offset), |i| Span::new(i, i + quoted.len()))
            }
            Some(p) if e.is_data() => p.span_in(text).unwrap_or(Span::point(offset)),
            _ => Span::point(offset),
        };
        let message = if at.is_empty() || at == "." || at == "?" {
            message
        } else {
            format!("{at}: {message}")
        };
        Box::new(Diagnostic::error(message).at(location_in(text, file, span)))
    })
}

/// The location of `span` of `text` (the contents of `file`), without copying the text.
pub fn location_in(text: &str, file: &str, span: Span) -> Location {
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[..line_start].matches('\n').count() + 1;
    Location::in_line_bytes(
        file.to_string(),
        line,
        &text[line_start..line_end],
        Span::new(
            start - line_start,
            span.end.min(line_end).max(start) - line_start,
        ),
    )
}

/// The byte offset of serde's 1-based line and column (the column counts bytes; 0 means the
/// start of the line).
fn offset_of_line_col(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for _ in 1..line.max(1) {
        match text[offset..].find('\n') {
            Some(i) => offset += i + 1,
            None => return text.len(),
        }
    }
    let line_len = text[offset..].find('\n').unwrap_or(text.len() - offset);
    let mut o = offset + column.saturating_sub(1).min(line_len);
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(text: &'a str, path: &JsonPath) -> Option<&'a str> {
        path.span_in(text).map(|s| &text[s.start..s.end])
    }

    #[test]
    fn finds_nested_values() {
        let text = r#"{"a": {"b": [1, {"c": "x\"y"}, [2, 3]]}, "d": true, "e": null}"#;
        let p = JsonPath::root();
        assert_eq!(at(text, &p), Some(text));
        assert_eq!(at(text, &p.clone().key("d")), Some("true"));
        assert_eq!(at(text, &p.clone().key("e")), Some("null"));
        let b = p.clone().key("a").key("b");
        assert_eq!(at(text, &b.clone().index(0)), Some("1"));
        assert_eq!(at(text, &b.clone().index(1).key("c")), Some(r#""x\"y""#));
        assert_eq!(at(text, &b.clone().index(2)), Some("[2, 3]"));
        assert_eq!(at(text, &b.clone().index(2).index(1)), Some("3"));
        // Missing members and elements, and paths through scalars.
        assert_eq!(at(text, &b.clone().index(3)), None);
        assert_eq!(at(text, &p.clone().key("zz")), None);
        assert_eq!(at(text, &p.clone().key("d").index(0)), None);
        assert_eq!(at("[]", &JsonPath::root().index(0)), None);
        assert_eq!(at("{", &JsonPath::root().key("a")), None);
    }

    #[test]
    fn displays_like_messages() {
        let p = JsonPath::root()
            .key("rewards")
            .index(0)
            .key("state")
            .index(2);
        assert_eq!(p.to_string(), "rewards[0].state[2]");
        assert_eq!(
            JsonPath::root().key("labels").key("a b").to_string(),
            "labels[\"a b\"]"
        );
        assert_eq!(JsonPath::root().to_string(), "(document)");
    }
}
