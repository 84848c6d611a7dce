//! `augur export MODEL --to tra|drn|json|dot|prism [-o OUT] [--json]` and the shared model
//! options (`crate::options`) (glue over `augur-check`).

use crate::error::CliError;
use augur_check::{Format, Model};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `augur export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The model to read (.tra, .drn, .json, .pm/.prism).
    pub model: PathBuf,
    /// The format to write: tra, drn, json, dot or prism.
    #[arg(long, value_name = "FORMAT")]
    pub to: String,
    /// Output file (standard output when omitted; for `tra` the .lab/.srew/.trew/.sta are
    /// written next to it).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Parameters of a parametric model (`p,q`, as `augur check --param`): written with their
    /// functions (DRN only).
    #[arg(long = "param", value_name = "P[=LO:HI],...")]
    pub param: Vec<String>,
    #[command(flatten)]
    pub opts: crate::options::LoadArgs,
    #[command(flatten)]
    pub ignored: crate::options::IgnoredSolverArgs,
}

/// Run `augur export`.
pub fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if !args.param.is_empty() {
        return crate::param_cmd::export(args, out);
    }
    let format: Format = args
        .to
        .parse()
        .map_err(|e| CliError::User(format!("error: {e}")))?;
    args.ignored.note("export");
    let (_, load) = args.opts.resolve(false)?;
    let model = Model::load(&args.model, &load)?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let dtmc = model.dtmc();
    let summary = |outputs: Vec<String>, text: Option<String>| {
        serde_json::json!({
            "format": args.to,
            "states": dtmc.num_states(),
            "transitions": dtmc.num_transitions(),
            "outputs": outputs,
            "text": text,
        })
    };
    match &args.output {
        Some(path) => {
            let written = model.write_to_path(format, path)?;
            if args.opts.json {
                let outputs = written.iter().map(|p| p.display().to_string()).collect();
                writeln!(out, "{}", summary(outputs, None))?;
            } else {
                for p in written {
                    crate::error::diag(format_args!("wrote {}", p.display()));
                }
            }
        }
        None => {
            if format == Format::Tra {
                crate::error::diag(format_args!(
                    "note: only the .tra part goes to standard output; use -o OUT.tra to also \
                     write the .lab/.srew/.trew/.sta files"
                ));
            }
            if args.opts.json {
                let mut buf = Vec::new();
                model.write(format, &mut buf)?;
                let text = String::from_utf8_lossy(&buf).into_owned();
                writeln!(out, "{}", summary(Vec::new(), Some(text)))?;
            } else {
                model.write(format, out)?;
            }
            out.flush()?;
        }
    }
    Ok(())
}
