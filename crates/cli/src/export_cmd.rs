//! `augur export MODEL --to tra|drn|json|dot|prism [-o OUT]`.

use crate::error::CliError;
use crate::model::{load_model_with, LoadOptions};
use augur_formats::{write_model, write_model_to_path, Format, FormatError};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `augur export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The model to read (.tra, .drn, .json, .pm/.prism).
    pub model: PathBuf,
    /// The format to write: tra, drn, json, dot or prism.
    #[arg(long)]
    pub to: String,
    /// Output file (standard output when omitted; for `tra` the .lab/.srew/.trew/.sta are
    /// written next to it).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Values of the model's undefined constants (PRISM models), e.g. `N=3,p=0.5`
    /// (repeatable).
    #[arg(long = "const", value_name = "N=V,...")]
    pub consts: Vec<String>,
    /// PRISM models: fail on a deadlock state instead of giving it a self-loop.
    #[arg(long)]
    pub no_fix_deadlocks: bool,
}

/// Run `augur export`.
pub fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let format: Format = args
        .to
        .parse()
        .map_err(|e| CliError::User(format!("error: {e}")))?;
    let consts = crate::error::parse_consts(&args.consts)?;
    let opts = LoadOptions {
        exact: false,
        fix_deadlocks: !args.no_fix_deadlocks,
    };
    let loaded = load_model_with(&args.model, &consts, &opts)?;
    match &args.output {
        Some(path) => {
            let written = write_model_to_path(&loaded.dtmc, format, path)
                .map_err(|e| CliError::User(format!("error: {e}")))?;
            for p in written {
                crate::error::diag(format_args!("wrote {}", p.display()));
            }
        }
        None => {
            if format == Format::Tra {
                crate::error::diag(format_args!(
                    "note: only the .tra part goes to standard output; use -o OUT.tra to also \
                     write the .lab/.srew/.trew/.sta files"
                ));
            }
            write_model(&loaded.dtmc, format, out).map_err(|e| match e {
                // Writing to stdout failed (a closed pipe ends quietly).
                FormatError::Write(io) => CliError::from(io),
                // The model cannot be expressed in the format (e.g. a label name that is not a
                // PRISM identifier): the same user error as with `-o`.
                e => CliError::User(format!("error: {e}")),
            })?;
            out.flush()?;
        }
    }
    Ok(())
}
