//! The crate's error type.

use augur_gate::GateError;
use augur_source::{Diagnostic, Location, Span};

/// Errors of the monitor: reading its files (classifier rules, policies, monitor files, action
/// lines, labelled runs), compiling a monitor, evaluating one.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// An error of the runtime gate's files and types, or a located error in a user's text (a
    /// classifier, a policy, a monitor file, an action line, a run): rendered with the file,
    /// line, column and a caret ([`GateError::Input`]).
    #[error(transparent)]
    Gate(#[from] GateError),
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
    /// An evaluation that cannot run (too few runs, a split without an unsafe run, ...).
    #[error("{0}")]
    Eval(String),
    /// Drawing a plot failed.
    #[error("plot: {0}")]
    Plot(String),
}

/// Result alias of the crate.
pub type Result<T, E = MonitorError> = std::result::Result<T, E>;

impl MonitorError {
    /// A located error at byte range `span` of `source` (named `file`).
    pub fn at(file: &str, source: &str, span: Span, message: impl Into<String>) -> MonitorError {
        GateError::at(file, source, span, message).into()
    }

    /// A located error at `location`.
    pub fn located(location: Location, message: impl Into<String>) -> MonitorError {
        GateError::located(location, message).into()
    }

    /// A located error from its diagnostic.
    pub fn input(diagnostic: Diagnostic) -> MonitorError {
        GateError::Input(Box::new(diagnostic)).into()
    }

    /// A file that cannot be read or written.
    pub fn io(file: impl Into<String>, source: std::io::Error) -> MonitorError {
        GateError::Io {
            file: file.into(),
            source,
        }
        .into()
    }

    /// Files or actions that do not belong together ([`GateError::Mismatch`]).
    pub fn mismatch(message: impl Into<String>) -> MonitorError {
        GateError::Mismatch(message.into()).into()
    }

    /// The diagnostic of this error: located for a located input error, a plain message
    /// otherwise. Its `Display` is what a front-end prints.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            MonitorError::Gate(e) => e.diagnostic(),
            e => Diagnostic::error(e.to_string()),
        }
    }

    /// The rendered message (`error: ...`, with the location and caret when there is one).
    pub fn render(&self) -> String {
        self.diagnostic().render()
    }
}
