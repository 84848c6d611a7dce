//! The crate's error type.

use augur_expr::SyntaxError;
use augur_source::{Diagnostic, Location, SourceFile};

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
    /// After constants were substituted ([`crate::StateFormula::instantiate`]), a bound is out
    /// of range (the same checks as at parse time, now that the values are known) or does not
    /// evaluate.
    #[error("in `{formula}`: {message}")]
    Instantiate {
        /// The formula, printed after substitution.
        formula: String,
        /// What is wrong.
        message: String,
    },
}

impl PctlError {
    /// The location and message (`None` for [`PctlError::Instantiate`], which concerns a
    /// formula rather than a text).
    pub fn located(&self) -> Option<&SyntaxError> {
        match self {
            PctlError::Syntax(e) | PctlError::Invalid(e) => Some(e),
            PctlError::Instantiate { .. } => None,
        }
    }

    /// 1-based line of the error (0 when the error is not located in a text).
    pub fn line(&self) -> usize {
        self.located().map_or(0, |e| e.line)
    }

    /// 1-based column (in characters) of the error (0 when the error is not located).
    pub fn column(&self) -> usize {
        self.located().map_or(0, |e| e.column)
    }

    /// The error as a [`Diagnostic`], located in `source` (the text that was parsed, with
    /// its name: a properties file, `--prop`, ...) when the error is located.
    ///
    /// ```
    /// use augur_source::SourceFile;
    /// let text = "P=? [ F<0 \"goal\" ]";
    /// let err = augur_pctl::parse_property(text).unwrap_err();
    /// let d = err.diagnostic(&SourceFile::new("--prop", text));
    /// assert!(d.to_string().contains(" --> --prop:1:8\n"));
    /// ```
    pub fn diagnostic(&self, source: &SourceFile) -> Diagnostic {
        match self.located() {
            Some(e) => e.diagnostic(source),
            None => Diagnostic::error(self.to_string()).at(Location::file(source.name())),
        }
    }
}

impl From<SyntaxError> for PctlError {
    fn from(e: SyntaxError) -> Self {
        PctlError::Syntax(e)
    }
}

/// `Result` with [`PctlError`].
pub type Result<T, E = PctlError> = std::result::Result<T, E>;
