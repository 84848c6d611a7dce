//! The crate's error type.

use augur_source::{Diagnostic, Location, Span};

/// Errors of reading an abstraction spec, abstracting states and reading traces.
#[derive(Debug, thiserror::Error)]
pub enum AbstractionError {
    /// An error in the abstraction spec: bad TOML, an undeclared name, a type error, a
    /// contradiction leaving no valid state. Rendered with the line and a caret by
    /// [`AbstractionError::diagnostic`].
    #[error("{location}: {message}")]
    Spec {
        /// Where.
        location: Location,
        /// What.
        message: String,
    },
    /// A bad line in a trace file, or a step the abstraction cannot map.
    #[error("{location}: {message}")]
    Trace {
        /// Where: file, line, and the column of the offending field or value.
        location: Location,
        /// What.
        message: String,
    },
    /// A concrete or named state that the abstraction cannot map (no location: the caller adds
    /// it with [`AbstractionError::at_step`] or [`AbstractionError::at_line`]).
    #[error("{0}")]
    State(String),
    /// A concrete value that the abstraction cannot take (missing, of the wrong type, out of
    /// range), naming the variable so that the location can point at its value.
    #[error("{message}")]
    Value {
        /// The variable.
        variable: String,
        /// What is wrong.
        message: String,
    },
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

impl AbstractionError {
    /// A spec error at byte `offset` of `source`.
    pub(crate) fn spec(
        file: &str,
        source: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Self {
        AbstractionError::spec_span(file, source, Span::point(offset), message)
    }

    /// A spec error covering `span` of `source`.
    pub(crate) fn spec_span(
        file: &str,
        source: &str,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        AbstractionError::Spec {
            location: Location::at(file, source, span),
            message: message.into(),
        }
    }

    /// Turn a [`AbstractionError::State`] or [`AbstractionError::Value`] into a trace error
    /// located at line `line` of `file`, without a column (other variants are kept). Prefer
    /// [`AbstractionError::at_step`], which points at the step or the value.
    pub fn at_line(self, file: &str, line: usize) -> Self {
        match self {
            AbstractionError::State(message) | AbstractionError::Value { message, .. } => {
                AbstractionError::Trace {
                    location: Location::line(file, line),
                    message,
                }
            }
            e => e,
        }
    }

    /// Turn a [`AbstractionError::State`] or [`AbstractionError::Value`] about `step` into a
    /// trace error located in `file` with a caret under the step, or under the variable's value
    /// for a [`AbstractionError::Value`] (other variants are kept).
    pub fn at_step(self, file: &str, step: &crate::Step) -> Self {
        let (message, variable) = match self {
            // A named step's cause is its name.
            AbstractionError::State(message) => (
                message,
                matches!(step.kind, crate::StepKind::Named(_)).then(|| "state".to_string()),
            ),
            AbstractionError::Value { variable, message } => (message, Some(variable)),
            e => return e,
        };
        AbstractionError::Trace {
            location: step.location(file, variable.as_deref()),
            message,
        }
    }

    /// The error as a [`Diagnostic`]: located errors with their line and a caret.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            AbstractionError::Spec { location, message }
            | AbstractionError::Trace { location, message } => {
                Diagnostic::error(message).at(location.clone())
            }
            AbstractionError::Io { file, source } => {
                Diagnostic::error(format!("{file}: cannot read: {source}"))
            }
            e => Diagnostic::error(e.to_string()),
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
