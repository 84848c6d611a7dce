//! The crate's error type.

use crate::ast::Type;
use crate::syntax::SyntaxError;

/// Errors of parsing, type checking and evaluating expressions and constants.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExprError {
    /// The text is not a well-formed expression.
    #[error("{0}")]
    Syntax(#[from] SyntaxError),
    /// An identifier that is neither a variable nor a constant in scope.
    #[error("undeclared identifier `{0}`")]
    Undeclared(String),
    /// An operator or function applied to operands of the wrong type.
    #[error("type error in `{expr}`: {message}")]
    TypeMismatch {
        /// The offending (sub)expression, printed.
        expr: String,
        /// What was expected and found.
        message: String,
    },
    /// Division by zero (of ints or doubles): `x/0`.
    #[error("division by zero in `{0}`")]
    DivisionByZero(String),
    /// `mod(i, n)` with `n <= 0`.
    #[error("modulo by a non-positive number in `{0}`")]
    ModuloByNonPositive(String),
    /// `pow(i, n)` of ints with `n < 0`.
    #[error("negative exponent in integer power `{0}`")]
    NegativeExponent(String),
    /// Integer arithmetic that does not fit in 64 bits.
    #[error("integer overflow in `{0}`")]
    Overflow(String),
    /// A result that is not a number (NaN) or infinite where an int is needed, e.g. `log(-1, 2)`.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// A value with no exact rational in exact mode: `log`, `pow` with a non-integer exponent.
    #[error("`{0}` has no exact rational value")]
    NotRational(String),
    /// An exact rational past the size budget
    /// ([`MAX_RATIONAL_BITS`](crate::rational::MAX_RATIONAL_BITS)).
    #[error(
        "`{expr}` is too large to compute as an exact rational (at least {bits} bits of numerator \
         and denominator; the budget is {} bits)",
        crate::rational::MAX_RATIONAL_BITS
    )]
    RationalTooLarge {
        /// The (sub)expression, printed.
        expr: String,
        /// Its size or a lower bound of it, in bits.
        bits: u64,
    },
    /// A function called with the wrong number of arguments.
    #[error("function `{func}` takes {expected} arguments, found {found}")]
    Arity {
        /// The function's name.
        func: String,
        /// The accepted number of arguments, in words.
        expected: String,
        /// The number given.
        found: usize,
    },
    /// Constants that have neither a defining expression nor a value from the command line.
    #[error("undefined constant{}: {}", if .0.len() == 1 { "" } else { "s" }, .0.join(", "))]
    UndefinedConstants(Vec<String>),
    /// Constants whose definitions depend on each other in a cycle (names in cycle order).
    #[error("cyclic constant definitions: {}", .0.join(" -> "))]
    CyclicConstants(Vec<String>),
    /// A constant declared twice.
    #[error("constant `{0}` is declared more than once")]
    DuplicateConstant(String),
    /// A value that does not fit the declared type of a constant.
    #[error("constant `{name}` is declared {declared} but its value {value} is {found}")]
    ConstantType {
        /// The constant's name.
        name: String,
        /// Its declared type.
        declared: Type,
        /// The value given.
        value: String,
        /// The value's type.
        found: Type,
    },
    /// A malformed `--const` assignment string.
    #[error("invalid constant assignment `{text}`: {message}")]
    BadAssignment {
        /// The offending part of the string.
        text: String,
        /// Why it is invalid.
        message: String,
        /// Byte range of the cause in the whole string (the name, the value or the
        /// assignment), for a caret.
        span: augur_source::Span,
    },
}

impl ExprError {
    /// Byte range in the parsed text of a syntax error or a bad `--const` assignment.
    pub fn span(&self) -> Option<augur_source::Span> {
        match self {
            ExprError::Syntax(e) => Some(e.span),
            ExprError::BadAssignment { span, .. } => Some(*span),
            _ => None,
        }
    }

    /// The error as a [`Diagnostic`](augur_source::Diagnostic), located in `source` when the
    /// error has a [span](ExprError::span) in it (e.g. `SourceFile::new("--const", text)`).
    pub fn diagnostic(&self, source: &augur_source::SourceFile) -> augur_source::Diagnostic {
        let message = match self {
            ExprError::Syntax(e) => e.message.clone(),
            e => e.to_string(),
        };
        augur_source::Diagnostic::error(message).at_opt(self.span().map(|s| source.location(s)))
    }
}

/// `Result` with [`ExprError`].
pub type Result<T, E = ExprError> = std::result::Result<T, E>;
