//! The crate's error type.

use augur_source::{Diagnostic, Location, SourceFile, Span};

/// Errors of the gate: reading its files (monitor files, classifier rules, policies, journals,
/// action lines) and using them together.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// A located error in a user's text (a classifier, a policy, a monitor file, a journal, an
    /// action line): rendered with the file, line, column and a caret.
    #[error("{}", .0.message)]
    Input(Box<Diagnostic>),
    /// A file that cannot be read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A monitor used with the wrong kind of action (a concrete state for a classifier
    /// monitor, a tool call for an abstraction monitor), or files that do not belong together.
    #[error("{0}")]
    Mismatch(String),
}

/// Result alias of the crate.
pub type Result<T, E = GateError> = std::result::Result<T, E>;

impl GateError {
    /// A located error at byte range `span` of `source` (named `file`).
    pub fn at(file: &str, source: &str, span: Span, message: impl Into<String>) -> GateError {
        GateError::Input(Box::new(
            Diagnostic::error(message).at(SourceFile::new(file, source).location(span)),
        ))
    }

    /// A located error at `location`.
    pub fn located(location: Location, message: impl Into<String>) -> GateError {
        GateError::Input(Box::new(Diagnostic::error(message).at(location)))
    }

    /// A located error from a TOML parse error of `source`.
    pub(crate) fn toml(file: &str, source: &str, e: &toml::de::Error) -> GateError {
        let message = e.message().trim().to_string();
        match e.span() {
            Some(span) => GateError::at(file, source, Span::new(span.start, span.end), message),
            None => GateError::Input(Box::new(
                Diagnostic::error(message).at(Location::file(file)),
            )),
        }
    }

    /// The diagnostic of this error: located for [`GateError::Input`], a plain message
    /// otherwise. Its `Display` is what a front-end prints.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            GateError::Input(d) => (**d).clone(),
            e => Diagnostic::error(e.to_string()),
        }
    }

    /// The rendered message (`error: ...`, with the location and caret when there is one).
    pub fn render(&self) -> String {
        self.diagnostic().render()
    }
}
