//! `augur learn`: learn a DTMC from traces (optionally through an abstraction spec). The
//! work is `augur_learn::pipeline`'s; this module reads the arguments and prints the summary.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use augur_abstraction::{Abstraction, TraceFormat};
use augur_learn::counts::KeyedCounts;
use augur_learn::learn::Unobserved;
use augur_learn::pipeline::{
    count_from_indexed, count_from_indexed_counts, count_from_traces, learn_from_counts,
    learn_from_indexed, learn_from_indexed_counts, learn_from_traces, output_paths, write_learned,
    CountsOutcome, IndexedTraces, LearnOptions, LearnedModel, ParallelJsonl, ReadProgress,
};
use serde_json::json;

/// Arguments of `augur learn`.
#[derive(clap::Args, Debug)]
pub struct LearnArgs {
    /// The trace file: JSON Lines (one trace per line), CSV long form (`.csv`), or a step table
    /// in Parquet (`.parquet`) or Arrow IPC (`.arrow`, `.ipc`, `.feather`): one row per step.
    #[arg(required_unless_present = "from_counts")]
    pub traces: Option<PathBuf>,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// Learn from counts files (written by `--counts-only`; any number of them, summed)
    /// instead of traces, exactly as from the traces they were counted from.
    /// Each is JSON or a Parquet counts table (`.parquet`).
    #[arg(long, value_name = "COUNTS.json", num_args = 1.., conflicts_with_all = ["traces", "counts_only", "skip_invalid"])]
    pub from_counts: Vec<PathBuf>,
    /// Write the transition counts, keyed by state name (docs/scale.md), to the output
    /// instead of learning a model: counts of shards are summed by `--from-counts`. An output
    /// ending in `.parquet` is written as a Parquet counts table, else as JSON.
    #[arg(long)]
    pub counts_only: bool,
    /// Abstraction spec (TOML) mapping concrete steps to abstract states. Without it, steps
    /// must be named abstract states (`{"state": "NAME"}`).
    #[arg(long, value_name = "SPEC")]
    pub abstraction: Option<PathBuf>,
    /// Laplace smoothing parameter α ≥ 0, added to every valid transition of every row.
    #[arg(long, default_value_t = 0.0, value_name = "A")]
    pub alpha: f64,
    /// Learn an interval DTMC whose intervals hold simultaneously, for every row, with the
    /// probability --confidence (docs/robust.md): check it with Pmin/Pmax.
    #[arg(long, conflicts_with_all = ["counts_only", "alpha", "final_absorbing"])]
    pub intervals: bool,
    /// With --intervals: the confidence level, in (0, 1).
    #[arg(long, value_name = "C", requires = "intervals", value_parser = parse_confidence)]
    pub confidence: Option<f64>,
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
    /// Keep the outgoing probabilities of these states (by name; repeat the option or separate
    /// names by commas) symbolic: the model is a parametric DTMC whose parameters are named
    /// after the state and the successor (`p_work_done`), the most observed successor's
    /// probability 1 minus the others (docs/parametric.md); `augur pac MODEL --param-box`
    /// gives the box of them the data allows.
    #[arg(long, value_name = "STATE", value_delimiter = ',', conflicts_with_all = ["intervals", "counts_only"])]
    pub parametric: Vec<String>,
    /// Output model (Augur JSON, with the transition counts for `augur pac`), or with
    /// `--counts-only` the counts file.
    #[arg(short, long, value_name = "MODEL.json")]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// JSON Lines: the threads counting the traces [default: the number of cores]. With 1,
    /// the file is read line by line as a stream (the reader CSV files also use); with more,
    /// in blocks of some megabytes, each cut into one part per thread. Both give the same
    /// model and the same errors.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// The confidence of learned intervals when --confidence is not given.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// `--confidence`: a number in (0, 1).
pub(crate) fn parse_confidence(s: &str) -> std::result::Result<f64, String> {
    let c: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number (give a confidence in (0, 1), e.g. 0.95)"))?;
    augur_learn::intervals::check_confidence(c)
        .map(|()| c)
        .map_err(|_| format!("{s} is not in (0, 1) (give a confidence such as 0.95)"))
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
    let Some(traces) = &args.traces else {
        return from_counts(args, spec.as_ref(), &opts, out);
    };
    let file_name = traces.display().to_string();
    let columnar = augur_columnar::ColumnarFormat::from_path(traces).is_some();
    if args.columns.given() && !columnar {
        anyhow::bail!(
            "{file_name}: --preset, --trace-id-column, --order-column and --state-column apply \
             to Parquet and Arrow step tables (.parquet, .arrow, .ipc, .feather) only"
        );
    }
    let with_note = |e: augur_learn::LearnError| match e {
        // Concrete values without a spec: say how to give one.
        e @ augur_learn::LearnError::Step { .. } if spec.is_none() => anyhow::Error::new(
            e.diagnostic()
                .with_note("give --abstraction SPEC to abstract concrete values"),
        ),
        e => e.into(),
    };
    let table = if !columnar {
        None
    } else if spec.is_none() && opts.order == 1 {
        // A first-order chain without a spec: a table in order is counted while it is read.
        match augur_columnar::count_steps(traces, &args.columns.columns()?)? {
            augur_columnar::StepsRead::Counted(counts) => {
                if args.counts_only {
                    let outcome =
                        count_from_indexed_counts(counts, &file_name, &opts).map_err(with_note)?;
                    write_counts(&outcome.counts, &args.output)?;
                    return counts_summary(args, &file_name, &outcome, out);
                }
                let outcome =
                    learn_from_indexed_counts(counts, &file_name, &opts).map_err(with_note)?;
                return learned_summary(args, &file_name, outcome, out);
            }
            augur_columnar::StepsRead::Table(t) => Some(t),
        }
    } else {
        Some(augur_columnar::read_steps(
            traces,
            &args.columns.columns()?,
        )?)
    };
    let threads = match args.threads {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let format = TraceFormat::from_path(traces);
    let progress = ReadProgressLine::new(traces);
    if table.is_none() && format == TraceFormat::JsonLines && threads > 1 {
        // The parallel reader, block by block.
        let file = File::open(traces).with_context(|| format!("{file_name}: cannot open"))?;
        let mut report = |p: ReadProgress| progress.show(p.bytes, p.steps);
        let read = ParallelJsonl {
            input: file,
            file: &file_name,
            spec: spec.as_ref(),
            opts: &opts,
            threads,
            progress: &mut report,
        };
        if args.counts_only {
            let outcome = read.count().map_err(with_note)?;
            progress.finish();
            write_counts(&outcome.counts, &args.output)?;
            return counts_summary(args, &file_name, &outcome, out);
        }
        let outcome = read.learn().map_err(with_note)?;
        progress.finish();
        return learned_summary(args, &file_name, outcome, out);
    }
    // A step table without a spec: its states are numbered already, counted as they are.
    if let (Some(t), None) = (&table, &spec) {
        let indexed = IndexedTraces {
            names: &t.state_names,
            offsets: &t.offsets,
            states: &t.states,
        };
        if args.counts_only {
            let outcome = count_from_indexed(indexed, &file_name, &opts).map_err(with_note)?;
            progress.finish();
            write_counts(&outcome.counts, &args.output)?;
            return counts_summary(args, &file_name, &outcome, out);
        }
        let outcome = learn_from_indexed(indexed, &file_name, &opts).map_err(with_note)?;
        progress.finish();
        return learned_summary(args, &file_name, outcome, out);
    }
    // (A step table has been read whole by now.)
    let read = std::rc::Rc::new(std::cell::Cell::new(if table.is_some() {
        progress.size
    } else {
        0
    }));
    let steps = std::cell::Cell::new(0u64);
    let reader: Box<dyn Iterator<Item = augur_abstraction::Result<augur_abstraction::Trace>> + '_> =
        match &table {
            Some(t) => Box::new(t.traces().map(Ok)),
            None => {
                let file =
                    File::open(traces).with_context(|| format!("{file_name}: cannot open"))?;
                let file = CountingRead {
                    inner: file,
                    read: std::rc::Rc::clone(&read),
                };
                augur_abstraction::read_traces(Box::new(BufReader::new(file)), format, &file_name)
            }
        };
    // The sequential reader's progress: bytes read and the steps of the traces read.
    let reader = reader.inspect(|item| {
        if let Ok(t) = item {
            steps.set(steps.get() + t.steps.len() as u64);
        }
        progress.show(read.get(), steps.get());
    });
    if args.counts_only {
        let outcome =
            count_from_traces(reader, &file_name, spec.as_ref(), &opts).map_err(with_note)?;
        progress.finish();
        write_counts(&outcome.counts, &args.output)?;
        return counts_summary(args, &file_name, &outcome, out);
    }
    let outcome = learn_from_traces(reader, &file_name, spec.as_ref(), &opts).map_err(with_note)?;
    progress.finish();
    learned_summary(args, &file_name, outcome, out)
}

/// The summary of a model learned from traces.
fn learned_summary(
    args: &LearnArgs,
    file_name: &str,
    outcome: augur_learn::pipeline::LearnOutcome,
    out: &mut dyn Write,
) -> Result<()> {
    let skipped: Vec<(usize, String)> = outcome
        .skipped
        .iter()
        .map(|s| (s.line, s.error.to_string()))
        .collect();
    summarize(
        args,
        file_name,
        json!({ "traces_file": file_name }),
        outcome.models,
        outcome.traces_read,
        &skipped,
        out,
    )
}

/// A reader that counts the bytes read (for the progress line).
struct CountingRead<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// The progress line of a long learn on stderr: bytes read (of the file's size) and steps
/// per second; shown only when stderr is a terminal, once reading has taken a second.
struct ReadProgressLine {
    bar: Option<indicatif::ProgressBar>,
    start: std::time::Instant,
    size: u64,
}

impl ReadProgressLine {
    fn new(path: &std::path::Path) -> Self {
        use std::io::IsTerminal;
        ReadProgressLine {
            bar: std::io::stderr()
                .is_terminal()
                .then(indicatif::ProgressBar::hidden),
            start: std::time::Instant::now(),
            size: std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }

    fn show(&self, bytes: u64, steps: u64) {
        let Some(bar) = &self.bar else { return };
        let elapsed = self.start.elapsed();
        if elapsed < std::time::Duration::from_secs(1) {
            return;
        }
        if bar.is_hidden() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} reading {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
        }
        let mb = |b: u64| b as f64 / 1e6;
        let rate = steps as f64 / elapsed.as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{:.0} of {:.0} MB, {steps} steps, {rate:.0} steps/s",
            mb(bytes),
            mb(self.size.max(bytes)),
        ));
        bar.tick();
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `--from-counts`: sum the counts files and learn from them.
fn from_counts(
    args: &LearnArgs,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
    out: &mut dyn Write,
) -> Result<()> {
    let mut shards = Vec::with_capacity(args.from_counts.len());
    let mut names = Vec::new();
    for path in &args.from_counts {
        let name = path.display().to_string();
        let counts = read_counts(path)?;
        counts.check().map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if counts.order != opts.order {
            bail!(
                "{name}: the counts are of order {}; give --order {} to learn from them",
                counts.order,
                counts.order
            );
        }
        shards.push(counts);
        names.push(name);
    }
    let models = learn_from_counts(&shards, spec, opts).map_err(|e| match e {
        augur_learn::LearnError::BadCounts(m) => {
            anyhow::anyhow!("{}: {m}", names.join(", "))
        }
        e => e.into(),
    })?;
    let traces: u64 = shards
        .iter()
        .flat_map(|s| &s.groups)
        .map(|g| g.traces)
        .sum();
    summarize(
        args,
        &names.join(", "),
        json!({ "counts_files": names }),
        models,
        traces,
        &[],
        out,
    )
}

/// Whether a counts file is a Parquet table (by its extension) rather than JSON.
fn is_parquet(path: &std::path::Path) -> bool {
    augur_columnar::ColumnarFormat::from_path(path) == Some(augur_columnar::ColumnarFormat::Parquet)
}

/// Reads keyed counts: a Parquet counts table (`.parquet`, `.pq`) or JSON (docs/scale.md).
pub(crate) fn read_counts(path: &std::path::Path) -> Result<KeyedCounts> {
    if is_parquet(path) {
        return Ok(augur_columnar::read_counts_parquet(path)?);
    }
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Ok(KeyedCounts::from_json(text, path)?)
}

/// Writes keyed counts: as a Parquet counts table to a `.parquet` or `.pq` file, else JSON.
fn write_counts(counts: &KeyedCounts, path: &std::path::Path) -> Result<()> {
    if is_parquet(path) {
        return Ok(augur_columnar::write_counts_parquet(path, counts)?);
    }
    let name = path.display().to_string();
    let file = File::create(path).with_context(|| format!("{name}: cannot create"))?;
    let mut w = std::io::BufWriter::new(file);
    counts
        .write_json(&mut w)
        .with_context(|| format!("{name}: cannot write"))?;
    writeln!(w)
        .and_then(|()| w.flush())
        .with_context(|| format!("{name}: cannot write"))?;
    Ok(())
}

/// The summary of `--counts-only`.
fn counts_summary(
    args: &LearnArgs,
    file_name: &str,
    outcome: &CountsOutcome,
    out: &mut dyn Write,
) -> Result<()> {
    let groups: Vec<_> = outcome
        .counts
        .groups
        .iter()
        .map(|g| {
            json!({
                "category": g.category,
                "traces": g.traces,
                "steps": g.steps,
                "states": g.states.len(),
                "transitions": g.transitions.len(),
                "invalid_transitions": g.invalid.iter().map(|t| t.2).sum::<u64>(),
            })
        })
        .collect();
    let summary = json!({
        "traces_read": outcome.traces_read,
        "skipped": outcome.skipped.len(),
        "skipped_lines": outcome.skipped.iter().map(|s| json!({"line": s.line, "error": s.error.to_string()})).collect::<Vec<_>>(),
        "output": args.output.display().to_string(),
        "groups": groups,
    });
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&summary)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "read {} traces from {file_name}{}",
        outcome.traces_read,
        if outcome.skipped.is_empty() {
            String::new()
        } else {
            format!(", skipped {} bad lines/traces", outcome.skipped.len())
        }
    )?;
    for s in &outcome.skipped {
        writeln!(out, "  skipped: {}", s.error)?;
    }
    for g in &outcome.counts.groups {
        let cat = g
            .category
            .as_ref()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        writeln!(
            out,
            "wrote counts{cat} to {}: {} traces, {} steps, {} states, {} transitions",
            args.output.display(),
            g.traces,
            g.steps,
            g.states.len(),
            g.transitions.len()
        )?;
    }
    Ok(())
}

/// Writes the learned models and prints the summary.
fn summarize(
    args: &LearnArgs,
    file_name: &str,
    source: serde_json::Value,
    mut learned: Vec<LearnedModel>,
    read_traces: u64,
    skipped: &[(usize, String)],
    out: &mut dyn Write,
) -> Result<()> {
    let paths = output_paths(&learned, &args.output)?;
    if args.intervals {
        let confidence = args.confidence.unwrap_or(DEFAULT_CONFIDENCE);
        for m in &mut learned {
            m.learn_intervals(confidence)?;
        }
    }

    let mut models = Vec::new();
    for (m, path) in learned.iter().zip(&paths) {
        let metadata = json!({
            "learned": {
                "alpha": args.alpha,
                "abstraction": args.abstraction.as_ref().map(|p| p.display().to_string()),
                "category": m.category,
                "order": args.order,
                "end_state": args.end_state,
            },
        });
        let mut metadata = metadata;
        if let (Some(l), Some(src)) = (metadata["learned"].as_object_mut(), source.as_object()) {
            l.extend(src.clone());
        }
        let symbolic = if args.parametric.is_empty() {
            write_learned(m, path, metadata)?;
            None
        } else {
            Some(write_symbolic(m, path, metadata, &args.parametric)?)
        };
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
            "transitions": m.intervals.as_ref().map_or(m.num_transitions(), |iv| iv.num_transitions() as u64),
            "observed_transitions": c.to_json().transitions.iter().map(|t| t.2).sum::<u64>(),
            "invalid_transitions_dropped": c.invalid_total(),
            "invalid_examples": invalid_examples,
            "absorbing": m.report.absorbing.iter().map(|&s| names[s as usize].clone()).collect::<Vec<_>>(),
            "unobserved_uniform": m.report.unobserved_uniform.len(),
            "unobserved_absorbing": m.report.unobserved_absorbing.len(),
            "initial": m.initial.iter().map(|&s| names[s as usize].clone()).collect::<Vec<_>>(),
            "intervals": m.intervals.as_ref().map(|iv| iv.metadata()),
            "parametric": symbolic,
        }));
    }

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
        for (_, message) in skipped {
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
            if let Some(iv) = m["intervals"].as_object() {
                let c = iv["confidence"].as_f64().unwrap_or(0.0);
                writeln!(
                    out,
                    "  an interval DTMC: its intervals hold simultaneously with {} confidence ({} estimated transition probabilities, each at level {:.3e}); check it with Pmin/Pmax",
                    percent(c),
                    iv["pairs"],
                    iv["entry_delta"].as_f64().unwrap_or(0.0),
                )?;
            }
            if let Some(rows) = m["parametric"].as_array() {
                let mut all = Vec::new();
                for r in rows {
                    let params: Vec<&str> = r["successors"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| s["parameter"].as_str())
                        .collect();
                    let dependent = r["successors"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|s| s["parameter"].is_null())
                        .and_then(|s| s["name"].as_str())
                        .unwrap_or("");
                    writeln!(
                        out,
                        "  state {} kept symbolic: {} (to {dependent}: 1 minus them)",
                        r["name"].as_str().unwrap_or(""),
                        params.join(", ")
                    )?;
                    all.extend(params);
                }
                writeln!(
                    out,
                    "  a parametric DTMC: check it with --param {}; `augur pac {} --param-box` gives the box the data allows",
                    all.join(","),
                    m["output"].as_str().unwrap_or("")
                )?;
            }
            if let Some(a) = m["absorbing"].as_array().filter(|a| !a.is_empty()) {
                writeln!(
                    out,
                    "  {} states without valid successor made absorbing",
                    a.len()
                )?;
            }
            let u = m["unobserved_uniform"].as_u64().unwrap_or(0);
            if u > 0 && args.intervals {
                writeln!(
                    out,
                    "  {u} never-left states got the interval [0, 1] on each of their valid successors"
                )?;
            } else if u > 0 {
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

/// Writes a learned model with the rows of `states` symbolic (`--parametric`); returns the
/// rows as recorded in its metadata.
fn write_symbolic(
    m: &LearnedModel,
    path: &std::path::Path,
    metadata: serde_json::Value,
    states: &[String],
) -> Result<serde_json::Value> {
    use augur_learn::parametric::{make_symbolic, symbolic_rows};
    let doc = augur_learn::pipeline::learned_document(m, metadata);
    let Some(transitions) = &doc.transitions else {
        bail!(
            "--parametric: the learned model has more than {} transitions, written with implicit rows: none can be made symbolic",
            augur_learn::pipeline::MAX_EXPLICIT_TRANSITIONS
        );
    };
    let rows = symbolic_rows(transitions, &m.state_names, &m.counts, states)?;
    let value = make_symbolic(serde_json::to_value(&doc)?, &rows, &m.counts)?;
    let name = path.display().to_string();
    let file = File::create(path).with_context(|| format!("{name}: cannot create"))?;
    let mut w = std::io::BufWriter::new(file);
    serde_json::to_writer(&mut w, &value).with_context(|| format!("{name}: cannot write"))?;
    writeln!(w)
        .and_then(|()| w.flush())
        .with_context(|| format!("{name}: cannot write"))?;
    Ok(serde_json::to_value(&rows)?)
}

/// A confidence as a percentage: `95%`, `99.9%`.
pub(crate) fn percent(c: f64) -> String {
    format!("{}%", (c * 1e6).round() / 1e4)
}
