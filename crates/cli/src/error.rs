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
    /// `--assert`: the command ran, and a checked requirement does not hold (a false boolean
    /// property, an unmet PAC bound). The message is printed to stderr; exit code 3.
    AssertionFailed(String),
}

impl CliError {
    /// A user error with the given message.
    pub fn user(msg: impl Into<String>) -> Self {
        CliError::User(msg.into())
    }
}

impl From<augur_source::Diagnostic> for CliError {
    /// A user error printed the one way located errors are printed (line and caret).
    fn from(d: augur_source::Diagnostic) -> Self {
        CliError::User(d.render())
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

/// The diagnostic of a checking error as the CLI prints it: a limit hit names the option that
/// raises it, an unused constant the `--const` it came from.
pub fn check_diagnostic(e: &augur_check::CheckError) -> augur_source::Diagnostic {
    use augur_check::{CheckError, Stop};
    match e {
        CheckError::UnusedConstant { name } => {
            augur_source::Diagnostic::error(format!("--const {name}: {e}"))
        }
        CheckError::Stopped(Stop::TooManyStates { .. }) => e
            .diagnostic()
            .with_note("raise the limit with --max-states N"),
        CheckError::Stopped(Stop::Timeout { .. }) => e
            .diagnostic()
            .with_note("raise the limit with --timeout SECONDS"),
        e => e.diagnostic(),
    }
}

impl From<augur_check::CheckError> for CliError {
    /// Located errors are rendered with their caret; limits hit name the option that raises
    /// them; numerical failures and bugs are internal errors (exit code 2).
    fn from(e: augur_check::CheckError) -> Self {
        match e {
            augur_check::CheckError::Write(io) => CliError::from(io),
            ref e if e.is_internal() => CliError::Internal(anyhow::anyhow!("{e}")),
            e => check_diagnostic(&e).into(),
        }
    }
}

/// Writes one diagnostic line (warning, note, per-property error) to stderr. Unlike
/// `eprintln!`, it never panics: a closed stderr only loses the message.
pub fn diag(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
