//! The crate's error type: what a tool call answers when it cannot do what it was asked.

use augur_check::CheckError;
use augur_source::Location;
use serde::Serialize;

/// What kind of failure a [`ToolError`] is (the Python package maps each to an exception
/// class).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A located error in a text the caller gave (a model, a property, a constant): file,
    /// line and column are known.
    Parse,
    /// A model or property that cannot be used, without a location (an unknown label, a
    /// model with no initial state, a file that cannot be read).
    Model,
    /// A limit stopped the work (`max_states`, the time limit, a cancellation).
    Limit,
    /// A request parameter is missing, of the wrong type or out of range.
    Param,
    /// The request is not allowed: a harness-only tool, a file outside `--root`, an unknown
    /// or expired session, the maximum number of sessions reached.
    Refused,
    /// A failure that is not the caller's (a solver that did not converge, a bug).
    Internal,
}

/// A tool call's failure, with the located message (rendered with the line and a caret when
/// the cause is in a text).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// The kind.
    pub kind: ErrorKind,
    /// The message as the CLI prints it (located: `file:line:column: error: ...` with the
    /// line and a caret).
    pub message: String,
    /// Where, when the cause is in a text.
    pub location: Option<Location>,
}

/// The crate's result type.
pub type Result<T, E = ToolError> = std::result::Result<T, E>;

impl ToolError {
    /// A bad parameter.
    pub fn param(message: impl Into<String>) -> ToolError {
        ToolError {
            kind: ErrorKind::Param,
            message: message.into(),
            location: None,
        }
    }

    /// A refused request.
    pub fn refused(message: impl Into<String>) -> ToolError {
        ToolError {
            kind: ErrorKind::Refused,
            message: message.into(),
            location: None,
        }
    }

    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
            location: None,
        }
    }

    /// The located error of the checker.
    pub fn check(e: &CheckError) -> ToolError {
        let d = e.diagnostic();
        let kind = if e.stop().is_some() {
            ErrorKind::Limit
        } else if e.is_internal() {
            ErrorKind::Internal
        } else if d.location.is_some() {
            ErrorKind::Parse
        } else {
            ErrorKind::Model
        };
        ToolError {
            kind,
            message: d.render().trim_end().to_string(),
            location: d.location.clone(),
        }
    }

    /// The error of an explanation (`explain`): the checker's as [`ToolError::check`], a
    /// search budget as a limit, a request it cannot explain located in its text when it can be.
    pub fn explain(e: &augur_explain::ExplainError) -> ToolError {
        use augur_explain::ExplainError as E;
        match e {
            E::Check(c) => ToolError::check(c),
            E::Budget { .. } => ToolError::new(ErrorKind::Limit, e.to_string()),
            e if e.is_internal() => ToolError::new(ErrorKind::Internal, e.to_string()),
            e => {
                let d = e.diagnostic();
                ToolError::located(&d, d.render(), ErrorKind::Model)
            }
        }
    }

    /// The located error of the monitor.
    pub fn monitor(e: &augur_monitor::MonitorError) -> ToolError {
        let d = e.diagnostic();
        let unlocated = match e {
            augur_monitor::MonitorError::Stopped(_) => ErrorKind::Limit,
            _ => ErrorKind::Model,
        };
        ToolError::located(&d, e.render(), unlocated)
    }

    /// The located error of the gate (a monitor file, a classifier, a policy, a journal).
    pub fn gate(e: &augur_gate::GateError) -> ToolError {
        let d = e.diagnostic();
        ToolError::located(&d, e.render(), ErrorKind::Model)
    }

    /// The error of the learner (PAC parameters, transition counts).
    pub fn learn(e: &augur_learn::LearnError) -> ToolError {
        let d = e.diagnostic();
        ToolError::located(&d, d.render(), ErrorKind::Param)
    }

    /// The error of a reader.
    pub fn format(e: &augur_formats::FormatError) -> ToolError {
        let d = e.diagnostic();
        ToolError::located(&d, d.render(), ErrorKind::Model)
    }

    /// A parse error when the diagnostic is located in a text, else `unlocated`.
    fn located(d: &augur_source::Diagnostic, message: String, unlocated: ErrorKind) -> ToolError {
        ToolError {
            kind: if d.location.is_some() {
                ErrorKind::Parse
            } else {
                unlocated
            },
            message: message.trim_end().to_string(),
            location: d.location.clone(),
        }
    }
}
