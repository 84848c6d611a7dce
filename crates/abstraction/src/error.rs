//! The crate's error type.

use std::fmt;

/// A position in a user's file, with the offending line for a caret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file's name as given by the user (or `<spec>` for text without a file).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters (0 when only the line is known).
    pub column: usize,
    /// The text of the line (empty when not available).
    pub source_line: String,
}

impl Location {
    /// The location of byte offset `offset` in `source`.
    pub fn at(file: &str, source: &str, offset: usize) -> Location {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = source[line_start..offset].chars().count() + 1;
        let source_line = source[line_start..]
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        Location {
            file: file.to_string(),
            line,
            column,
            source_line,
        }
    }

    /// A line without a column (trace files).
    pub fn line(file: &str, line: usize) -> Location {
        Location {
            file: file.to_string(),
            line,
            column: 0,
            source_line: String::new(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column > 0 {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// Errors of reading an abstraction spec, abstracting states and reading traces.
#[derive(Debug, thiserror::Error)]
pub enum AbstractionError {
    /// An error in the abstraction spec: bad TOML, an undeclared name, a type error, a
    /// contradiction leaving no valid state. Displayed with the line and a caret.
    #[error("{location}: {message}{}", caret(.location))]
    Spec {
        /// Where.
        location: Location,
        /// What.
        message: String,
    },
    /// A bad line in a trace file.
    #[error("{location}: {message}")]
    Trace {
        /// Where (file and line).
        location: Location,
        /// What.
        message: String,
    },
    /// A concrete or named state that the abstraction cannot map (no location: the caller adds
    /// it with [`AbstractionError::at_line`]).
    #[error("{0}")]
    State(String),
    /// A file that cannot be read. The I/O error is the `source` (not repeated in the message,
    /// so that `{:#}` chains print it once).
    #[error("{file}: cannot read")]
    Io {
        /// The file's name.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

fn caret(loc: &Location) -> String {
    if loc.source_line.is_empty() || loc.column == 0 {
        return String::new();
    }
    let pad: String = loc
        .source_line
        .chars()
        .take(loc.column - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("\n  | {}\n  | {}^", loc.source_line, pad)
}

impl AbstractionError {
    /// A spec error at byte `offset` of `source`.
    pub(crate) fn spec(
        file: &str,
        source: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Self {
        AbstractionError::Spec {
            location: Location::at(file, source, offset),
            message: message.into(),
        }
    }

    /// Turn a [`AbstractionError::State`] into a located trace error (other variants are kept).
    pub fn at_line(self, file: &str, line: usize) -> Self {
        match self {
            AbstractionError::State(message) => AbstractionError::Trace {
                location: Location::line(file, line),
                message,
            },
            e => e,
        }
    }

    /// The location of the error, if it has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            AbstractionError::Spec { location, .. } | AbstractionError::Trace { location, .. } => {
                Some(location)
            }
            _ => None,
        }
    }
}

/// `Result` with [`AbstractionError`].
pub type Result<T, E = AbstractionError> = std::result::Result<T, E>;
