//! The `augur` command-line tool.

mod check_cmd;
mod export_cmd;
mod failure;
mod horizon_cmd;
mod model;

use clap::{Parser, Subcommand};

/// A probabilistic model checker for discrete-time Markov chains.
#[derive(Parser, Debug)]
#[command(name = "augur", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check PCTL properties on a model.
    Check(check_cmd::CheckArgs),
    /// The all-horizon table P(F<=h target) for h = 1..H.
    Horizon(horizon_cmd::HorizonArgs),
    /// Convert a model to another format.
    Export(export_cmd::ExportArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Check(a) => check_cmd::run(a),
        Command::Horizon(a) => horizon_cmd::run(a),
        Command::Export(a) => export_cmd::run(a),
    };
    if let Err(f) = result {
        if !matches!(f, failure::Failure::Reported(_)) {
            let msg = f.to_string();
            // Located parse errors come rendered, with their own `error:` prefix.
            if msg.starts_with("error") {
                eprintln!("{msg}");
            } else {
                eprintln!("error: {msg}");
            }
        }
        std::process::exit(f.exit_code());
    }
}
