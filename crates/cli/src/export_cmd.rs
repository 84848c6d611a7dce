//! `augur export MODEL --to tra|drn|json|dot|prism [-o OUT]` (glue over `augur-check`).

use crate::check_cmd::constants;
use crate::error::CliError;
use crate::limits::LimitArgs;
use augur_check::{Format, LoadOptions, Model};
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
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Run `augur export`.
pub fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let format: Format = args
        .to
        .parse()
        .map_err(|e| CliError::User(format!("error: {e}")))?;
    let load = LoadOptions {
        constants: constants(&args.consts)?,
        exact: false,
        fix_deadlocks: !args.no_fix_deadlocks,
        limits: args.limits.limits()?,
    };
    let model = Model::load(&args.model, &load)?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    match &args.output {
        Some(path) => {
            for p in model.write_to_path(format, path)? {
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
            model.write(format, out)?;
            out.flush()?;
        }
    }
    Ok(())
}
