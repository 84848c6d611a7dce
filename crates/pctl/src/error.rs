//! The crate's error type.

use augur_expr::SyntaxError;

/// An error in a property or properties file, located in the source text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PctlError {
    /// The text does not follow the PCTL grammar.
    #[error("{0}")]
    Syntax(SyntaxError),
    /// The text parses but is not a valid property: a probability bound outside `[0, 1]`, a
    /// negative reward bound, a negative, empty or non-integer step bound, a path formula
    /// where a state formula belongs (or the reverse), a duplicate name, ...
    #[error("{0}")]
    Invalid(SyntaxError),
}

impl PctlError {
    /// The location and message.
    pub fn located(&self) -> &SyntaxError {
        match self {
            PctlError::Syntax(e) | PctlError::Invalid(e) => e,
        }
    }

    /// 1-based line of the error.
    pub fn line(&self) -> usize {
        self.located().line
    }

    /// 1-based column (in characters) of the error.
    pub fn column(&self) -> usize {
        self.located().column
    }

    /// Renders the error with the offending line and a caret (see [`SyntaxError::render`]).
    pub fn render(&self, source: &str, name: &str) -> String {
        self.located().render(source, name)
    }
}

impl From<SyntaxError> for PctlError {
    fn from(e: SyntaxError) -> Self {
        PctlError::Syntax(e)
    }
}

/// `Result` with [`PctlError`].
pub type Result<T, E = PctlError> = std::result::Result<T, E>;
