//! `augur learn`: learn a DTMC from traces (optionally through an abstraction spec). The
//! work is `augur_learn::pipeline`'s; this module reads the arguments and prints the summary.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use augur_abstraction::{Abstraction, TraceFormat, TraceReader};
use augur_learn::learn::Unobserved;
use augur_learn::pipeline::{learn_from_traces, output_paths, write_learned, LearnOptions};
use serde_json::json;

/// Arguments of `augur learn`.
#[derive(clap::Args, Debug)]
pub struct LearnArgs {
    /// The trace file: JSON Lines (one trace per line), CSV long form (`.csv`), or a step table
    /// in Parquet (`.parquet`) or Arrow IPC (`.arrow`, `.ipc`, `.feather`): one row per step.
    pub traces: PathBuf,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// Abstraction spec (TOML) mapping concrete steps to abstract states. Without it, steps
    /// must be named abstract states (`{"state": "NAME"}`).
    #[arg(long, value_name = "SPEC")]
    pub abstraction: Option<PathBuf>,
    /// Laplace smoothing parameter α ≥ 0, added to every valid transition of every row.
    #[arg(long, default_value_t = 0.0, value_name = "A")]
    pub alpha: f64,
    /// Learn one model per trace category (written as OUT-stem.CATEGORY.json).
    #[arg(long)]
    pub by_category: bool,
    /// Skip bad trace lines (and traces with bad steps) and count them, instead of failing.
    #[arg(long)]
    pub skip_invalid: bool,
    /// With α = 0, make states that are never left (seen only where traces end) absorbing,
    /// instead of giving them the uniform distribution over their valid successors.
    #[arg(long)]
    pub final_absorbing: bool,
    /// Learn a k-th order chain: a first-order chain over the tuples of the last k states
    /// (named `(a,b)`, labelled like their last state).
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub order: usize,
    /// Model where runs end: every trace's last state moves to an extra absorbing state NAME
    /// (labelled "NAME"), so that `P=? [ F "unsafe" ]` is the probability of reaching unsafe
    /// before the run ends (without it, smoothing makes every reachable state's value 1).
    #[arg(long, value_name = "NAME")]
    pub end_state: Option<String>,
    /// Output model (Augur JSON, with the transition counts for `augur pac`).
    #[arg(short, long, value_name = "MODEL.json")]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The columns of a Parquet or Arrow step table (see `augur_columnar::Columns`).
#[derive(clap::Args, Debug, Default)]
pub struct ColumnArgs {
    /// Column names of a known exporter: `default` (trace_id, step, state) or `otel-genai`
    /// (trace_id, start_time_unix_nano, gen_ai.tool.name); the options below override it.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Parquet/Arrow: the trace id column [default: trace_id].
    #[arg(long, value_name = "COLUMN")]
    pub trace_id_column: Option<String>,
    /// Parquet/Arrow: the column ordering a trace's steps (step index or timestamp)
    /// [default: step].
    #[arg(long, value_name = "COLUMN")]
    pub order_column: Option<String>,
    /// Parquet/Arrow: the state column; repeat it to name a state by several columns (their
    /// values joined with `|`) [default: state].
    #[arg(long, value_name = "COLUMN")]
    pub state_column: Vec<String>,
}

impl ColumnArgs {
    fn given(&self) -> bool {
        self.preset.is_some()
            || self.trace_id_column.is_some()
            || self.order_column.is_some()
            || !self.state_column.is_empty()
    }

    /// The columns these options name.
    pub fn columns(&self) -> Result<augur_columnar::Columns> {
        let mut c = augur_columnar::Columns::preset(self.preset.as_deref().unwrap_or("default"))?;
        if let Some(t) = &self.trace_id_column {
            c.trace_id.clone_from(t);
        }
        if let Some(o) = &self.order_column {
            c.order.clone_from(o);
        }
        if !self.state_column.is_empty() {
            c.state.clone_from(&self.state_column);
        }
        Ok(c)
    }
}

/// Run `augur learn`, printing the summary to `out`.
pub fn run(args: &LearnArgs, out: &mut dyn Write) -> Result<()> {
    let spec = match &args.abstraction {
        Some(p) => Some(Abstraction::from_file(p).map_err(augur_learn::LearnError::from)?),
        None => None,
    };
    let file_name = args.traces.display().to_string();
    let columnar = augur_columnar::ColumnarFormat::from_path(&args.traces).is_some();
    if args.columns.given() && !columnar {
        anyhow::bail!(
            "{file_name}: --preset, --trace-id-column, --order-column and --state-column apply \
             to Parquet and Arrow step tables (.parquet, .arrow, .ipc, .feather) only"
        );
    }
    if args.final_absorbing && args.alpha > 0.0 {
        // Smoothing gives every valid successor of a never-left state a probability, so
        // there is nothing left for --final-absorbing to decide: say so instead of ignoring it.
        crate::error::diag(format_args!(
            "warning: --final-absorbing has no effect with --alpha {} > 0 (smoothing gives every \
             valid successor of a never-left state a probability); use --alpha 0 for absorbing \
             end states",
            args.alpha
        ));
    }
    let opts = LearnOptions {
        alpha: args.alpha,
        by_category: args.by_category,
        skip_invalid: args.skip_invalid,
        unobserved: if args.final_absorbing {
            Unobserved::Absorbing
        } else {
            Unobserved::Uniform
        },
        order: args.order,
        end_state: args.end_state.clone(),
    };
    let learned = if columnar {
        let table = augur_columnar::read_steps(&args.traces, &args.columns.columns()?)?;
        learn_from_traces(table.traces().map(Ok), &file_name, spec.as_ref(), &opts)
    } else {
        let file = File::open(&args.traces).with_context(|| format!("{file_name}: cannot open"))?;
        let reader = TraceReader::new(
            BufReader::new(file),
            TraceFormat::from_path(&args.traces),
            &file_name,
        );
        learn_from_traces(reader, &file_name, spec.as_ref(), &opts)
    };
    let outcome = learned.map_err(|e| match e {
        // Concrete values without a spec: say how to give one.
        e @ augur_learn::LearnError::Step { .. } if spec.is_none() => anyhow::Error::new(
            e.diagnostic()
                .with_note("give --abstraction SPEC to abstract concrete values"),
        ),
        e => e.into(),
    })?;
    let paths = output_paths(&outcome.models, &args.output)?;

    let mut models = Vec::new();
    for (m, path) in outcome.models.iter().zip(&paths) {
        let metadata = json!({
            "learned": {
                "alpha": args.alpha,
                "traces_file": file_name,
                "abstraction": args.abstraction.as_ref().map(|p| p.display().to_string()),
                "category": m.category,
                "order": args.order,
                "end_state": args.end_state,
            },
        });
        write_learned(m, path, metadata)?;
        let names = &m.state_names;
        let c = &m.counts;
        let invalid_examples: Vec<_> = {
            let mut v: Vec<_> = c.invalid().iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1));
            v.into_iter()
                .take(5)
                .map(|(&(f, t), &n)| {
                    json!({"from": names.get(f as usize), "to": names.get(t as usize), "count": n})
                })
                .collect()
        };
        models.push(json!({
            "category": m.category,
            "output": path.display().to_string(),
            "traces": c.traces(),
            "steps": c.steps(),
            "states": m.num_states(),
            "states_seen": c.states_seen(),
            "transitions": m.num_transitions(),
            "observed_transitions": c.to_json().transitions.iter().map(|t| t.2).sum::<u64>(),
            "invalid_transitions_dropped": c.invalid_total(),
            "invalid_examples": invalid_examples,
            "absorbing": m.report.absorbing.iter().map(|&s| names[s as usize].clone()).collect::<Vec<_>>(),
            "unobserved_uniform": m.report.unobserved_uniform.len(),
            "unobserved_absorbing": m.report.unobserved_absorbing.len(),
            "initial": m.initial.iter().map(|&s| names[s as usize].clone()).collect::<Vec<_>>(),
        }));
    }
    let read_traces = outcome.traces_read;
    let skipped: Vec<(usize, String)> = outcome
        .skipped
        .iter()
        .map(|s| (s.line, s.error.to_string()))
        .collect();

    let summary = json!({
        "traces_read": read_traces,
        "skipped": skipped.len(),
        "skipped_lines": skipped.iter().map(|(line, message)| json!({"line": line, "error": message})).collect::<Vec<_>>(),
        "alpha": args.alpha,
        "models": models,
    });
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
    } else {
        writeln!(
            out,
            "read {read_traces} traces from {file_name}{}",
            if skipped.is_empty() {
                String::new()
            } else {
                format!(", skipped {} bad lines/traces", skipped.len())
            }
        )?;
        for (_, message) in &skipped {
            writeln!(out, "  skipped: {message}")?;
        }
        for m in &models {
            let cat = m["category"]
                .as_str()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            writeln!(
                out,
                "wrote {}{cat}: {} traces, {} steps, {} states ({} seen), {} transitions, {} invalid transitions dropped",
                m["output"].as_str().unwrap_or(""),
                m["traces"],
                m["steps"],
                m["states"],
                m["states_seen"],
                m["transitions"],
                m["invalid_transitions_dropped"],
            )?;
            if let Some(a) = m["absorbing"].as_array().filter(|a| !a.is_empty()) {
                writeln!(
                    out,
                    "  {} states without valid successor made absorbing",
                    a.len()
                )?;
            }
            let u = m["unobserved_uniform"].as_u64().unwrap_or(0);
            if u > 0 {
                writeln!(
                    out,
                    "  {u} never-left states got the uniform distribution over their valid successors (--final-absorbing makes them absorbing)"
                )?;
            }
            if let Some(name) = &args.end_state {
                writeln!(
                    out,
                    "  trace ends move to the absorbing state {name} (label \"{name}\")"
                )?;
            }
            let u = m["unobserved_absorbing"].as_u64().unwrap_or(0);
            if u > 0 {
                writeln!(
                    out,
                    "  {u} never-left states made absorbing (--final-absorbing)"
                )?;
            }
        }
    }
    Ok(())
}
