//! `augur simulate`: seeded traces of a DTMC in the JSON Lines trace format.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use augur_learn::simulate::{state_names, write_trace_jsonl, Simulator};
use serde_json::json;

/// Arguments of `augur simulate`.
#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// The model (.json, .tra, .drn; .pm/.prism when the PRISM front-end supports it).
    pub model: PathBuf,
    /// Values of the model's undefined constants, e.g. `N=3,p=0.5` (repeatable).
    #[arg(long = "const", value_name = "N=V,...")]
    pub consts: Vec<String>,
    /// Number of traces.
    #[arg(short = 'n', long = "traces", value_name = "N")]
    pub traces: usize,
    /// Maximum number of transitions per trace (a trace stops early in an absorbing state).
    #[arg(long, value_name = "K")]
    pub max_steps: usize,
    /// Random seed (the same seed gives the same traces).
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// A category written into every trace.
    #[arg(long)]
    pub category: Option<String>,
    /// Output file (default: standard output); `OUT.parquet` writes a Parquet step table
    /// (columns trace_id, step, state; one row per step) that `augur learn` reads.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --output: print a JSON summary (traces, steps, output, seed) instead of a line of
    /// text. (The traces are JSON Lines, or a Parquet step table when OUT ends in `.parquet`.)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
}

/// Run `augur simulate`, writing traces to `--output` or to `out`.
pub fn run(args: &SimulateArgs, out: &mut dyn Write) -> Result<()> {
    // Errors of loading print through their diagnostics (`learning_error` in main).
    let located = |e: augur_check::CheckError| crate::error::check_diagnostic(&e);
    let constants = crate::check_cmd::constants(&args.consts).map_err(located)?;
    let limits = args.limits.limits().map_err(|e| match e {
        crate::error::CliError::User(m) => anyhow::anyhow!("{}", m.trim_start_matches("error: ")),
        other => anyhow::anyhow!("{other:?}"),
    })?;
    let load = augur_check::LoadOptions {
        constants,
        limits,
        ..augur_check::LoadOptions::default()
    };
    let model = augur_check::Model::load(&args.model, &load).map_err(located)?;
    model.require_point("simulation").map_err(located)?;
    for w in model.warnings() {
        crate::error::diag(format_args!("warning: {w}"));
    }
    let dtmc = model.into_dtmc();
    let names = state_names(&dtmc);
    let sim = Simulator::new(&dtmc, args.seed, args.max_steps)
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.model.display()))?;
    let parquet = args.output.as_deref().is_some_and(|p| {
        augur_columnar::ColumnarFormat::from_path(p)
            == Some(augur_columnar::ColumnarFormat::Parquet)
    });
    if parquet {
        // A step table (trace_id, step, state), one row per step: what `augur learn` reads
        // from Parquet. Categories are not a column of it.
        let path = args.output.as_deref().unwrap_or(std::path::Path::new(""));
        if args.category.is_some() {
            anyhow::bail!("--category is not written to a Parquet step table (only JSON Lines)");
        }
        let traces: Vec<Vec<u32>> = sim.take(args.traces).collect();
        let ids: Vec<String> = (0..traces.len()).map(|i| format!("sim-{i}")).collect();
        let steps = traces.iter().zip(&ids).flat_map(|(t, id)| {
            t.iter()
                .enumerate()
                .map(|(k, &s)| (id.as_str(), k as i64, names[s as usize].as_str()))
        });
        augur_columnar::write_steps_parquet(path, steps, &augur_columnar::Columns::default())?;
        let steps_total: usize = traces.iter().map(Vec::len).sum();
        return summary(args, out, steps_total as u64);
    }
    let mut file_out;
    let w: &mut dyn Write = match &args.output {
        Some(p) => {
            let f = File::create(p).with_context(|| format!("{}: cannot create", p.display()))?;
            file_out = BufWriter::new(f);
            &mut file_out
        }
        None => out,
    };
    let mut steps_total = 0u64;
    for (i, trace) in sim.take(args.traces).enumerate() {
        steps_total += trace.len() as u64;
        write_trace_jsonl(&mut *w, i, &trace, &names, args.category.as_deref())?;
    }
    w.flush()?;
    summary(args, out, steps_total)
}

/// Prints what `--output` received.
fn summary(args: &SimulateArgs, out: &mut dyn Write, steps_total: u64) -> Result<()> {
    if let Some(p) = &args.output {
        let p = p.display().to_string();
        if args.json {
            let v = json!({"traces": args.traces, "steps": steps_total, "output": p, "seed": args.seed});
            writeln!(out, "{v}")?;
        } else {
            writeln!(
                out,
                "wrote {} traces ({steps_total} steps) to {p} (seed {})",
                args.traces, args.seed
            )?;
        }
    }
    Ok(())
}
