//! The crate's error type.

use augur_source::{Diagnostic, Location, SourceFile, Span};

/// Errors of the monitor: reading its files (classifier rules, policies, monitor files, action
/// lines, labelled runs), compiling a monitor, evaluating one.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// A located error in a user's text (a classifier, a policy, a monitor file, an action
    /// line, a run): rendered with the file, line, column and a caret.
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
    /// A model that cannot be loaded or does not fit the monitor (no such label, wrong number
    /// of states, an unknown state mapping, ...).
    #[error("{0}")]
    Model(String),
    /// A property that cannot be compiled into a monitor.
    #[error("{0}")]
    Property(String),
    /// The checker failed on a model.
    #[error("{0}")]
    Check(String),
    /// A limit (states, time, cancellation) stopped loading or checking a model.
    #[error("{0}")]
    Stopped(augur_check::Stop),
    /// A monitor used with the wrong kind of action (a concrete state for a classifier
    /// monitor, a tool call for an abstraction monitor), or files that do not belong together.
    #[error("{0}")]
    Mismatch(String),
    /// An evaluation that cannot run (too few runs, a split without an unsafe run, ...).
    #[error("{0}")]
    Eval(String),
    /// Drawing a plot failed.
    #[error("plot: {0}")]
    Plot(String),
}

impl From<augur_gate::GateError> for MonitorError {
    fn from(e: augur_gate::GateError) -> MonitorError {
        use augur_gate::GateError as G;
        match e {
            G::Input(d) => MonitorError::Input(d),
            G::Io { file, source } => MonitorError::Io { file, source },
            G::Mismatch(m) => MonitorError::Mismatch(m),
        }
    }
}

/// Result alias of the crate.
pub type Result<T, E = MonitorError> = std::result::Result<T, E>;

impl MonitorError {
    /// A located error at byte range `span` of `source` (named `file`).
    pub fn at(file: &str, source: &str, span: Span, message: impl Into<String>) -> MonitorError {
        MonitorError::Input(Box::new(
            Diagnostic::error(message).at(SourceFile::new(file, source).location(span)),
        ))
    }

    /// A located error at `location`.
    pub fn located(location: Location, message: impl Into<String>) -> MonitorError {
        MonitorError::Input(Box::new(Diagnostic::error(message).at(location)))
    }

    /// The diagnostic of this error: located for [`MonitorError::Input`], a plain message
    /// otherwise. Its `Display` is what a front-end prints.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            MonitorError::Input(d) => (**d).clone(),
            e => Diagnostic::error(e.to_string()),
        }
    }

    /// The rendered message (`error: ...`, with the location and caret when there is one).
    pub fn render(&self) -> String {
        self.diagnostic().render()
    }
}
