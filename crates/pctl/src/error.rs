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
    /// The property does not fit the model and constants it is resolved against
    /// ([`crate::resolve`]): a bound out of range once its constants are known, an unknown
    /// name, a number where a truth value belongs, ... Located in the property's text.
    #[error("{}", .0.message)]
    Resolve(Box<Diagnostic>),
}

impl PctlError {
    /// The location and message of a parse error (`None` for [`PctlError::Resolve`], which
    /// carries its own [`Diagnostic`]).
    pub fn located(&self) -> Option<&SyntaxError> {
        match self {
            PctlError::Syntax(e) | PctlError::Invalid(e) => Some(e),
            PctlError::Resolve(_) => None,
        }
    }

    /// What is wrong, without the location.
    pub fn message(&self) -> &str {
        match self {
            PctlError::Resolve(d) => &d.message,
            PctlError::Syntax(e) | PctlError::Invalid(e) => &e.message,
        }
    }

    /// 1-based line of the error (0 when the error is not located in a text).
    pub fn line(&self) -> usize {
        match self {
            PctlError::Resolve(d) => d.location.as_ref().map_or(0, |l| l.line),
            e => e.located().map_or(0, |e| e.line),
        }
    }

    /// 1-based column (in characters) of the error (0 when the error is not located).
    pub fn column(&self) -> usize {
        match self {
            PctlError::Resolve(d) => d.location.as_ref().map_or(0, |l| l.column),
            e => e.located().map_or(0, |e| e.column),
        }
    }

    /// The error as a [`Diagnostic`], located in `source` (the text that was parsed, with
    /// its name: a properties file, `--prop`, ...) when the error is located; a
    /// [`PctlError::Resolve`] carries its own diagnostic (which knows its source).
    ///
    /// ```
    /// use augur_source::SourceFile;
    /// let text = "P=? [ F<0 \"goal\" ]";
    /// let err = augur_pctl::parse_property(text).unwrap_err();
    /// let d = err.diagnostic(&SourceFile::new("--prop", text));
    /// assert!(d.to_string().contains(" --> --prop:1:8\n"));
    /// ```
    pub fn diagnostic(&self, source: &SourceFile) -> Diagnostic {
        match self {
            PctlError::Resolve(d) => (**d).clone(),
            e => match e.located() {
                Some(s) => s.diagnostic(source),
                None => Diagnostic::error(self.to_string()).at(Location::file(source.name())),
            },
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
