//! [`ParamError`].

use augur_source::Diagnostic;

/// What can go wrong with a parametric check.
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    /// The user's input (model, property, option) is wrong; located when it comes from a text.
    #[error("{}", .0.message)]
    Input(Box<Diagnostic>),
    /// An error of the point checker (loading, properties).
    #[error(transparent)]
    Check(#[from] augur_check::CheckError),
    /// A property or model this engine does not handle (said why).
    #[error("{0}")]
    Unsupported(String),
}

impl ParamError {
    /// A user error without a location.
    pub fn input(message: impl Into<String>) -> ParamError {
        ParamError::Input(Box::new(Diagnostic::error(message)))
    }

    /// The error as a diagnostic (the one renderer's input).
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            ParamError::Input(d) => (**d).clone(),
            ParamError::Check(e) => e.diagnostic(),
            ParamError::Unsupported(m) => Diagnostic::error(m.clone()),
        }
    }
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, ParamError>;
