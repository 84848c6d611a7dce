//! The crate's error type.

use augur_solver::{Interruption, SolverError};
use augur_source::{Diagnostic, Location};
use std::time::Duration;

/// Why a check could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The user's input is wrong: a model file, a properties file, a property, a constant.
    /// The diagnostic is located (file, line, column, caret) when the cause is in a text.
    #[error("{}", .0.message)]
    Input(Box<Diagnostic>),
    /// A value given for a constant that nothing declares or uses (most likely a typo).
    #[error(
        "no constant `{name}` is declared in the model or the properties file, and no property uses it"
    )]
    UnusedConstant {
        /// The constant's name.
        name: String,
    },
    /// A [`crate::Limits`] value stopped the work.
    #[error("{0}")]
    Stopped(Stop),
    /// A numerical solver failed (did not converge, or was asked for what it cannot do).
    #[error(transparent)]
    Solver(SolverError),
    /// Writing an output stream failed (a closed pipe, a full disk).
    #[error("writing the output: {0}")]
    Write(std::io::Error),
    /// A limit of the implementation (more than 2^32 states, ...) or a bug.
    #[error("{0}")]
    Internal(String),
}

/// Which limit of [`crate::Limits`] stopped the work, and how far it got.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stop {
    /// The model has more states than [`crate::Limits::max_states`].
    #[error(
        "state limit exceeded: the model has more than {limit} states ({states} found, {explored} explored so far)"
    )]
    TooManyStates {
        /// The limit.
        limit: usize,
        /// States found when the exploration stopped.
        states: usize,
        /// States whose successors had been computed.
        explored: usize,
    },
    /// [`crate::Limits::timeout`] (or the deadline) passed.
    #[error("time limit exceeded{}", after.map(|d| format!(" (after {:.1} s)", d.as_secs_f64())).unwrap_or_default())]
    Timeout {
        /// The time limit, when known.
        after: Option<Duration>,
    },
    /// [`crate::Limits::cancel`] was called.
    #[error("cancelled")]
    Cancelled,
}

impl CheckError {
    /// A user error with the given message and no location.
    pub fn input(message: impl Into<String>) -> CheckError {
        CheckError::Input(Box::new(Diagnostic::error(message)))
    }

    /// A user error located at `location`.
    pub fn at(message: impl Into<String>, location: Location) -> CheckError {
        CheckError::Input(Box::new(Diagnostic::error(message).at(location)))
    }

    /// The error as a diagnostic, for rendering (`to_string()` gives the caret display);
    /// unlocated errors carry only their message.
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            CheckError::Input(d) => (**d).clone(),
            other => Diagnostic::error(other.to_string()),
        }
    }

    /// Where the cause is, when it is in a text.
    pub fn location(&self) -> Option<&Location> {
        match self {
            CheckError::Input(d) => d.location.as_ref(),
            _ => None,
        }
    }

    /// Whether the failure is not the user's: a numerical solver that did not converge, a
    /// limit of the implementation, a bug (the CLI's exit code 2). Limits hit
    /// ([`CheckError::Stopped`]) and bad input are the user's (exit code 1).
    pub fn is_internal(&self) -> bool {
        matches!(
            self,
            CheckError::Internal(_) | CheckError::Solver(SolverError::NotConverged { .. })
        )
    }

    /// The limit that stopped the work, if one did.
    pub fn stop(&self) -> Option<&Stop> {
        match self {
            CheckError::Stopped(s) => Some(s),
            _ => None,
        }
    }
}

impl From<SolverError> for CheckError {
    fn from(e: SolverError) -> Self {
        match e {
            SolverError::Interrupted(Interruption::Cancelled) => {
                CheckError::Stopped(Stop::Cancelled)
            }
            SolverError::Interrupted(Interruption::Deadline) => {
                CheckError::Stopped(Stop::Timeout { after: None })
            }
            e => CheckError::Solver(e),
        }
    }
}

impl From<augur_ltl::LtlError> for CheckError {
    /// Interruptions are stops, solver failures solver errors; the size limits of the LTL
    /// construction are limits hit by the user's formula (exit code 1, like the state limit);
    /// anything else is an implementation limit.
    fn from(e: augur_ltl::LtlError) -> Self {
        use augur_ltl::LtlError as L;
        match e {
            L::Solver(e) => e.into(),
            e @ (L::AutomatonTooLarge { .. }
            | L::ProductTooLarge { .. }
            | L::StepBoundTooLarge { .. }
            | L::TooManyPropositions(_)) => CheckError::input(e.to_string()),
            e => CheckError::Internal(e.to_string()),
        }
    }
}

impl From<augur_pctl::PctlError> for CheckError {
    /// Resolution errors carry their own located diagnostic; parse errors are located by
    /// [`crate::Properties`], which knows their text (here they keep only their message).
    fn from(e: augur_pctl::PctlError) -> Self {
        match e {
            augur_pctl::PctlError::Resolve(d) => CheckError::Input(d),
            other => CheckError::input(other.to_string()),
        }
    }
}

/// `Result` with [`CheckError`].
pub type Result<T, E = CheckError> = std::result::Result<T, E>;
