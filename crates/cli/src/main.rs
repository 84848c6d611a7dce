//! The `augur` command-line tool.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod learn_cmd;
mod pac_cmd;
mod simulate_cmd;

/// A probabilistic model checker for DTMCs, with learning from traces and PAC bounds.
#[derive(Parser, Debug)]
#[command(name = "augur", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Learn a DTMC from traces (validity-aware Laplace smoothing), keeping the counts.
    Learn(learn_cmd::LearnArgs),
    /// PAC sample-size bounds for a learned model, or the calculator form.
    Pac(pac_cmd::PacArgs),
    /// Write seeded random traces of a DTMC in the JSON Lines trace format.
    Simulate(simulate_cmd::SimulateArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Learn(a) => learn_cmd::run(a, &mut out),
        Command::Pac(a) => pac_cmd::run(a, &mut out).map(|_| ()),
        Command::Simulate(a) => simulate_cmd::run(a, &mut out),
    };
    let _ = out.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
