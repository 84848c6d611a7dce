//! The `augur` command-line tool.
//!
//! Each subcommand lives in its own module (`parse_cmd`, ...) exposing an `Args` struct
//! (clap derive) and `fn run(args, out) -> Result<(), CliError>`; `main` only dispatches and maps
//! errors to exit codes: 0 success, 1 user error (bad file, bad property, bad arguments),
//! 2 internal error. Only this crate prints.

mod check_cmd;
mod error;
mod export_cmd;
mod failure;
mod horizon_cmd;
mod model;
mod parse_cmd;

use clap::{Parser, Subcommand};
use error::CliError;
use std::io::Write;
use std::process::ExitCode;

/// Augur: a probabilistic model checker for discrete-time Markov chains.
#[derive(Debug, Parser)]
#[command(name = "augur", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands (one module each).
#[derive(Debug, Subcommand)]
enum Command {
    /// Parse PCTL properties and print them in canonical form (or as JSON).
    Parse(parse_cmd::ParseArgs),
    /// Check PCTL properties on a model.
    Check(check_cmd::CheckArgs),
    /// The all-horizon table P(F<=h target) for h = 1..H.
    Horizon(horizon_cmd::HorizonArgs),
    /// Convert a model to another format.
    Export(export_cmd::ExportArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors; every other argument error is a user error.
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::Parse(args) => parse_cmd::run(&args, &mut out),
        Command::Check(args) => check_cmd::run(&args).map_err(CliError::from),
        Command::Horizon(args) => horizon_cmd::run(&args).map_err(CliError::from),
        Command::Export(args) => export_cmd::run(&args).map_err(CliError::from),
    };
    let result = result.and_then(|()| out.flush().map_err(CliError::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::BrokenPipe) => ExitCode::SUCCESS,
        Err(CliError::Reported(code)) => ExitCode::from(code),
        Err(CliError::User(msg)) => {
            eprint!("{msg}");
            if !msg.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(1)
        }
        Err(CliError::Internal(e)) => {
            eprintln!("internal error: {e:#}");
            ExitCode::from(2)
        }
    }
}
