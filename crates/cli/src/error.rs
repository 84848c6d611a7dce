//! The outcome of a subcommand, mapped to the exit code by `main`.

/// Why a subcommand failed.
#[derive(Debug)]
pub enum CliError {
    /// A user error (bad file, bad property, bad option): the message, already formatted
    /// (located errors rendered with their line and caret), printed to stderr; exit code 1.
    User(String),
    /// A bug or an environment failure: printed as `internal error: ...`; exit code 2.
    Internal(anyhow::Error),
    /// Stdout was closed (`augur ... | head`): stop quietly.
    BrokenPipe,
}

impl CliError {
    /// A user error with the given message.
    pub fn user(msg: impl Into<String>) -> Self {
        CliError::User(msg.into())
    }
}

impl From<std::io::Error> for CliError {
    /// I/O errors reaching `main` come from writing the output.
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Internal(anyhow::Error::new(e).context("writing the output"))
        }
    }
}

impl From<serde_json::Error> for CliError {
    fn from(e: serde_json::Error) -> Self {
        CliError::Internal(anyhow::Error::new(e).context("serialising JSON"))
    }
}

impl From<augur_check::CheckError> for CliError {
    /// Located errors are rendered with their caret; limits hit name the option that raises
    /// them; numerical failures and bugs are internal errors (exit code 2).
    fn from(e: augur_check::CheckError) -> Self {
        use augur_check::{CheckError, Stop};
        match e {
            CheckError::Write(io) => CliError::from(io),
            CheckError::UnusedConstant { ref name } => {
                CliError::User(format!("error: --const {name}: {e}"))
            }
            CheckError::Stopped(ref stop) => {
                let note = match stop {
                    Stop::TooManyStates { .. } => Some("raise the limit with --max-states N"),
                    Stop::Timeout { .. } => Some("raise the limit with --timeout SECONDS"),
                    Stop::Cancelled => None,
                };
                let mut d = e.diagnostic();
                if let Some(n) = note {
                    d = d.with_note(n);
                }
                CliError::User(d.to_string())
            }
            ref e if e.is_internal() => CliError::Internal(anyhow::anyhow!("{e}")),
            e => CliError::User(e.diagnostic().to_string()),
        }
    }
}

/// Writes one diagnostic line (warning, note, per-property error) to stderr. Unlike
/// `eprintln!`, it never panics: a closed stderr only loses the message.
pub fn diag(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
