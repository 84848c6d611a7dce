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

use crate::Span;
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
