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

/// Reads a user-named input file; failures are user errors naming the file.
pub fn read_input(path: &std::path::Path) -> Result<String, CliError> {
    let mut text = std::fs::read_to_string(path)
        .map_err(|e| CliError::user(format!("error: cannot read {}: {e}", path.display())))?;
    // A byte-order mark (Windows editors) is not part of the text.
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Writes one diagnostic line (warning, note, per-property error) to stderr. Unlike
/// `eprintln!`, it never panics: a closed stderr only loses the message.
pub fn diag(msg: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{msg}");
}
