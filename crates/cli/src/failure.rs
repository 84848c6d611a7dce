//! The error type of the binary's commands, carrying the exit code.

use std::fmt;

/// A failed command: a user error (exit 1: bad file, bad property, unknown name) or an
/// internal one (exit 2).
#[derive(Debug)]
pub enum Failure {
    /// Something the user can fix; the message says what and where.
    User(String),
    /// A failure of Augur itself (or of the numerics).
    Internal(String),
    /// Already reported on stderr; only the exit code remains.
    Reported(i32),
}

impl Failure {
    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::User(_) => 1,
            Failure::Internal(_) => 2,
            Failure::Reported(code) => *code,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::User(m) | Failure::Internal(m) => f.write_str(m),
            Failure::Reported(code) => write!(f, "failed (exit code {code})"),
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Internal(format!("I/O error: {e}"))
    }
}

impl From<Failure> for crate::error::CliError {
    fn from(f: Failure) -> Self {
        use crate::error::CliError;
        match f {
            // Located parse errors come rendered, with their own `error:` prefix.
            Failure::User(m) if m.starts_with("error") => CliError::User(m),
            Failure::User(m) => CliError::User(format!("error: {m}")),
            Failure::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
            Failure::Reported(code) => CliError::Reported(u8::try_from(code).unwrap_or(2)),
        }
    }
}
