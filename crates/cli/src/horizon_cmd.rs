//! `augur horizon MODEL --target LABEL --max H [--const N=3] [--json]`: the all-horizon table
//! P(F≤h target) for h = 1..H and every state (glue over `augur-check`).

use crate::error::CliError;
use augur_check::{CheckSession, Model, Scalar};
use clap::Args;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `augur horizon`.
#[derive(Args, Debug)]
pub struct HorizonArgs {
    /// The model (.tra, .drn, .json, .pm/.prism).
    pub model: PathBuf,
    /// The target: a label (with or without quotes) or a boolean state formula.
    #[arg(long)]
    pub target: String,
    /// The largest horizon H.
    #[arg(long = "max", value_name = "H")]
    pub max_h: usize,
    #[command(flatten)]
    pub opts: crate::options::LoadArgs,
    #[command(flatten)]
    pub ignored: crate::options::IgnoredSolverArgs,
}

/// Run `augur horizon`.
pub fn run(args: &HorizonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    args.ignored.note("horizon");
    let (constants, load) = args.opts.resolve(false)?;
    let options = augur_check::CheckOptions {
        limits: load.limits.clone(),
        ..augur_check::CheckOptions::default()
    };
    if args.max_h == 0 {
        return Err(CliError::user("error: --max must be at least 1"));
    }
    let model = Model::load(&args.model, &load)?;
    model.require_point("a horizon table")?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let mut session = CheckSession::new(&model, options).with_constants(&constants);
    let table = session.horizon(&args.target, "--target", args.max_h)?;
    let n = table.num_states;
    let at = |s: usize, h: usize| table.get(s, h).unwrap_or(f64::NAN);
    // States by name (a learned model) or valuation, as `check` prints them.
    let names = crate::check_cmd::learned_state_names(&args.model, n);
    let label = |s: usize| crate::check_cmd::state_label(&model, names.as_deref(), s);
    if args.opts.json {
        let rows: Vec<Json> = (0..n)
            .map(|s| {
                Json::Array(
                    (1..=args.max_h)
                        .map(|h| serde_json::to_value(Scalar::Num(at(s, h))).unwrap_or(Json::Null))
                        .collect(),
                )
            })
            .collect();
        let doc = json!({
            "target": args.target.trim().trim_matches('"'),
            "max": args.max_h,
            "states": n,
            "state_names": (0..n).map(label).collect::<Vec<_>>(),
            "initial": model.dtmc().initial,
            "table": rows,
        });
        writeln!(out, "{doc}")?;
    } else {
        let mut header = vec!["state".to_string()];
        header.extend((1..=args.max_h).map(|h| format!("h={h}")));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let right: Vec<usize> = (1..=args.max_h).collect();
        let mut t = crate::table::new(&header, &right);
        for s in 0..n {
            let mut row = vec![label(s)];
            // Floating-point values without bounds: the shortest decimal within 8 ulps.
            row.extend((1..=args.max_h).map(|h| augur_source::number::approx(at(s, h))));
            t.add_row(row);
        }
        write!(out, "{}", crate::table::render(&t, ""))?;
    }
    Ok(())
}
