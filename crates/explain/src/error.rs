//! The crate's error type.

use augur_source::{Diagnostic, Location};

/// Why an explanation could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// Loading, resolving or checking failed (the checker's own error, located when its cause
    /// is in a text).
    #[error(transparent)]
    Check(#[from] augur_check::CheckError),
    /// The user's request cannot be explained as asked (a property `explain` does not handle,
    /// an unknown `--from` state, a model too large for `--minimal`); located when the cause is
    /// in a text.
    #[error("{}", .0.message)]
    Input(Box<Diagnostic>),
    /// A search stopped at its budget (paths or search nodes) before it was done.
    #[error("{what}: the search stopped at its budget of {limit} {unit}{hint}")]
    Budget {
        /// What was being searched.
        what: &'static str,
        /// The budget.
        limit: usize,
        /// What the budget counts.
        unit: &'static str,
        /// How to raise it, if it can be raised.
        hint: String,
    },
    /// Writing an output (a DOT or PRISM file) failed.
    #[error("{0}")]
    Write(String),
}

impl ExplainError {
    /// A user error with the given message and no location.
    pub fn input(message: impl Into<String>) -> ExplainError {
        ExplainError::Input(Box::new(Diagnostic::error(message)))
    }

    /// A user error located at `location`.
    pub fn at(message: impl Into<String>, location: Location) -> ExplainError {
        ExplainError::Input(Box::new(Diagnostic::error(message).at(location)))
    }

    /// The error as a diagnostic, for rendering (located ones with their caret).
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            ExplainError::Check(e) => e.diagnostic(),
            ExplainError::Input(d) => (**d).clone(),
            other => Diagnostic::error(other.to_string()),
        }
    }

    /// Whether the failure is not the user's (a solver of the checker that did not converge).
    pub fn is_internal(&self) -> bool {
        match self {
            ExplainError::Check(e) => e.is_internal(),
            _ => false,
        }
    }
}

/// `Result` with [`ExplainError`].
pub type Result<T, E = ExplainError> = std::result::Result<T, E>;
