//! [`RatFuncError`].

/// What can go wrong with rational-function text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RatFuncError {
    /// A malformed expression, at a byte offset of the text.
    #[error("{message}")]
    Parse {
        /// What is wrong.
        message: String,
        /// Where (a byte offset into the parsed text).
        offset: usize,
    },
}

impl RatFuncError {
    /// The byte offset the error is at.
    pub fn offset(&self) -> usize {
        match self {
            RatFuncError::Parse { offset, .. } => *offset,
        }
    }
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, RatFuncError>;
