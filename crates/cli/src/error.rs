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

/// The diagnostic of a syntax error in the text `text` named `name` (`--prop`, a file).
pub fn located(name: &str, text: &str, e: &augur_pctl::PctlError) -> CliError {
    e.diagnostic(&augur_source::SourceFile::new(name, text))
        .into()
}

/// Parses `--const` strings (later assignments of the same name win); an error is located
/// in the offending string, with a caret under the cause.
pub fn parse_consts(texts: &[String]) -> Result<Vec<(String, augur_expr::Value)>, CliError> {
    let mut out: Vec<(String, augur_expr::Value)> = Vec::new();
    for text in texts {
        let parsed = augur_expr::parse_const_assignments(text).map_err(|e| {
            CliError::from(e.diagnostic(&augur_source::SourceFile::new("--const", text.as_str())))
        })?;
        for (n, v) in parsed {
            out.retain(|(m, _)| *m != n);
            out.push((n, v));
        }
    }
    Ok(out)
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
