//! `augur monitor compile | gate | replay | eval | learn | agentdojo`: the runtime monitor's commands
//! (glue over `augur-monitor`).

use crate::error::CliError;
use crate::options::{deprecated, Seconds};
use augur_gate::burned::BurnedIds;
use augur_gate::journal::unix_now;
use augur_gate::provenance::ObservationSource;
use augur_gate::session::{report, Action, AuditRecord, ToolCall};
use augur_gate::store::{SessionRefused, SessionStore};
use augur_gate::{Classifier, Mapping, Monitor, NamePattern, Policy, Session, Verdict};
use augur_monitor::agentdojo::{self, Converted, Tasks};
use augur_monitor::compile::{compile, CompileOptions, ModelArg};
use augur_monitor::eval::evaluate;
use augur_monitor::runs::read_runs_file;
use augur_monitor::MonitorError;
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Arguments of `augur monitor`.
#[derive(Args, Debug)]
pub struct MonitorArgs {
    #[command(subcommand)]
    command: MonitorCommand,
}

#[derive(Subcommand, Debug)]
enum MonitorCommand {
    /// Check a property in every state of each model and save the tables a running agent needs.
    Compile(CompileArgs),
    /// Gate actions read as JSON Lines on stdin; one decision per line on stdout.
    Gate(GateArgs),
    /// Replay labelled runs step by step (state, P, verdict).
    Replay(ReplayArgs),
    /// Learn on a training split, compile, replay the test split, report with baselines.
    Eval(EvalArgs),
    /// Learn the monitor `eval` evaluates from all the labelled runs of a file and write it.
    Learn(crate::monitor_learn_cmd::LearnArgs),
    /// Write labelled runs from AgentDojo exports.
    Agentdojo(AgentdojoArgs),
}

#[derive(Args, Debug)]
struct CompileArgs {
    /// Models (.tra, .drn, .json, .pm): `PATH` or `CATEGORY=PATH`. A learned model's category
    /// comes from `augur learn --by-category`; a model without one is the fallback.
    #[arg(required = true)]
    models: Vec<String>,
    /// The property: `P=? [ F<=5 "violated" ]`, `P=? [ F "unsafe" ]`, `P=? [ !"ok" U<=10 "bad" ]`.
    #[arg(long, value_name = "PCTL")]
    prop: String,
    /// Length H of the horizon curve P(F<=h target), h = 1..H (default: the property's bound, else 10).
    #[arg(long, value_name = "H")]
    horizon: Option<u32>,
    /// How actions map to states: dtr, risk-level or abstraction (default: from the model).
    #[arg(long, value_name = "MAPPING")]
    mapping: Option<String>,
    /// Deprecated spelling of --mapping.
    #[arg(
        long = "states",
        value_name = "MAPPING",
        hide = true,
        conflicts_with = "mapping"
    )]
    states: Option<String>,
    /// Classifier rules (TOML) for dtr / risk-level (default: the built-in rules, models/classifier.toml).
    #[arg(long, value_name = "RULES")]
    classifier: Option<PathBuf>,
    /// Abstraction spec (TOML) for --mapping abstraction.
    #[arg(long, value_name = "SPEC")]
    abstraction: Option<PathBuf>,
    #[command(flatten)]
    pac: crate::options::PacStatusArgs,
    /// Also compile robust upper bounds (Pmax over interval models: intervals learned from
    /// a model's counts, or an interval model's own) and decide on them (docs/robust.md).
    #[arg(long)]
    robust: bool,
    /// With --robust: the confidence of intervals learned from counts, in (0, 1) (default 0.95).
    #[arg(long, value_name = "C", requires = "robust", value_parser = crate::learn_cmd::parse_confidence)]
    confidence: Option<f64>,
    /// Also compile the most probable continuation of every state, so that decisions at warn
    /// and above say what kind of action it takes and its share of the risk (docs/explain.md).
    #[arg(long)]
    explain: bool,
    /// Output monitor file.
    #[arg(short, long, value_name = "MONITOR.json")]
    output: PathBuf,
    /// Constants, method, precision, JSON summary, deadlocks and limits, as for `augur check`
    /// (`--method auto`, the default, is topological interval iteration for monitors).
    #[command(flatten)]
    opts: crate::options::ModelOptions,
}

#[derive(Args, Debug)]
struct GateArgs {
    /// The compiled monitor (`augur monitor compile` or `augur monitor learn`); default: the
    /// built-in default monitor (`augur mcp --upstream`'s).
    #[arg(long, value_name = "MONITOR.json")]
    monitor: Option<PathBuf>,
    /// Deprecated spelling of --monitor (the monitor file as the first argument).
    #[arg(value_name = "MONITOR.json", hide = true)]
    monitor_arg: Option<PathBuf>,
    /// Thresholds → verdicts (TOML, docs/monitor.md); default: block at P ≥ 0.9, pause at 0.6,
    /// warn at 0.3.
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    /// Append every decision to this file as a JSON line (audit log).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// Close sessions idle for this many seconds (an expired id is refused, never restarted;
    /// default: never).
    #[arg(long, value_name = "SECONDS")]
    session_ttl: Option<Seconds>,
    /// Keep at most this many sessions open (the least recently used is evicted and refused).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_sessions: usize,
    /// Size in bits of the filter of burned (expired, evicted) session ids: a burned id is
    /// never reopened; a fresh id is refused with probability about (1 - e^(-7n/BITS))^7
    /// after n burned ids (default 2^23 bits = 1 MiB: 1e-6 at 200 000 burned ids).
    #[arg(long, value_name = "BITS", default_value_t = augur_gate::burned::BurnedIds::DEFAULT_BITS)]
    burned_bits: u64,
    /// Journal every session move and burned id to this file and restore them at start, so
    /// that a crash and restart resumes every session (docs/monitor.md); without it a
    /// restart resets every session to its start state.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// (Not an option: a file given after the monitor, answered with how input is read.)
    #[arg(hide = true, value_name = "ACTIONS")]
    extra: Vec<PathBuf>,
}

#[derive(Args, Debug)]
struct ReplayArgs {
    /// The compiled monitor (`augur monitor compile`).
    #[arg(long, value_name = "MONITOR.json")]
    monitor: Option<PathBuf>,
    /// Labelled runs (JSON Lines: messages or steps). (Deprecated: `MONITOR RUNS`, the monitor
    /// file first.)
    #[arg(value_name = "RUNS", num_args = 1..=2, required = true)]
    files: Vec<PathBuf>,
    /// Thresholds → verdicts (TOML, docs/monitor.md); default: block at P ≥ 0.9, pause at 0.6,
    /// warn at 0.3.
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    /// One JSON line per step instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// Labelled runs (JSON Lines).
    runs: PathBuf,
    /// The property, the horizon, α, the classifier and the chain, as `monitor learn` takes
    /// them.
    #[command(flatten)]
    chain: crate::options::ChainArgs,
    /// Fraction of runs (per label) in the test split.
    #[arg(long, value_name = "F", default_value_t = 0.3)]
    test_fraction: f64,
    /// k-fold cross-validation instead of one split.
    #[arg(long, value_name = "K", conflicts_with_all = ["hold_out_category", "hold_out_model"])]
    folds: Option<usize>,
    /// Learn on every other category, test on one; each category once.
    #[arg(long, conflicts_with = "hold_out_model")]
    hold_out_category: bool,
    /// Learn on every other model's runs (the runs' `model`), test on one; each model once.
    #[arg(long)]
    hold_out_model: bool,
    /// Random seed (the same seed gives the same split).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// The matrix baseline's chain (a model file); default: the paper's 5×5 risk-level
    /// chain, models/safetydrift.tra, built into the binary.
    #[arg(long, value_name = "MODEL")]
    matrix: Option<PathBuf>,
    /// Flag with this policy's verdicts instead of a threshold chosen on the training split.
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    /// The least verdict that flags a run (main table and curve): warn, pause or block.
    /// Default: warn with --policy, block without (the learned threshold blocks, the rules'
    /// fallbacks pause).
    #[arg(long, value_name = "VERDICT")]
    flag_at: Option<String>,
    /// Keyword baseline patterns, comma-separated (default: a built-in list).
    #[arg(long, value_name = "WORDS")]
    keywords: Option<String>,
    /// Write roc.svg, horizons.svg and lead.svg into this folder.
    #[arg(long, value_name = "DIR")]
    plots: Option<PathBuf>,
    /// Constants, method, precision, JSON report, deadlocks and limits, as for `augur check`
    /// (for every compilation and the --matrix model; `--method auto`, the default, is
    /// topological interval iteration for monitors).
    #[command(flatten)]
    opts: crate::options::ModelOptions,
}

#[derive(Args, Debug)]
struct AgentdojoArgs {
    /// AgentDojo export files (agentdojo-<model>.jsonl).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// agentdojo_v1_tasks.json (the injection tasks' ground truth).
    #[arg(long, value_name = "FILE")]
    tasks: PathBuf,
    /// Output runs file (JSON Lines).
    #[arg(short, long, value_name = "RUNS.jsonl")]
    output: PathBuf,
    /// List every run whose label and violation step disagree (by default only their count).
    #[arg(short, long)]
    verbose: bool,
}

/// The paper's 5×5 risk-level chain (models/safetydrift.tra with its companions), built in:
/// `monitor eval`'s default matrix baseline works from any directory.
const SAFETYDRIFT: augur_check::ExplicitTexts<'static> = augur_check::ExplicitTexts {
    tra: include_str!("../../../models/safetydrift.tra"),
    lab: Some(include_str!("../../../models/safetydrift.lab")),
    srew: Some(include_str!("../../../models/safetydrift.srew")),
    trew: None,
    sta: Some(include_str!("../../../models/safetydrift.sta")),
};

/// A user-named text file (a byte-order mark dropped); failures are user errors.
fn read_file(p: &Path) -> Result<String, CliError> {
    augur_check::read_text(p).map_err(|e| CliError::User(e.diagnostic().render()))
}

pub(crate) fn user(e: impl Into<MonitorError>) -> CliError {
    match e.into() {
        // A limit hit names the option that raises it, as for `augur check`.
        MonitorError::Stopped(s) => {
            crate::error::check_diagnostic(&augur_check::CheckError::Stopped(s)).into()
        }
        e => CliError::User(e.render()),
    }
}

pub(crate) fn load_policy(p: &Option<PathBuf>) -> Result<Policy, CliError> {
    match p {
        Some(p) => Policy::from_file(p).map_err(user),
        None => Ok(Policy::default()),
    }
}

/// Run `augur monitor`.
pub fn run(args: &MonitorArgs, out: &mut dyn Write) -> Result<(), CliError> {
    match &args.command {
        MonitorCommand::Compile(a) => run_compile(a, out),
        MonitorCommand::Gate(a) => run_gate(a, out),
        MonitorCommand::Replay(a) => run_replay(a, out),
        MonitorCommand::Eval(a) => run_eval(a, out),
        MonitorCommand::Learn(a) => crate::monitor_learn_cmd::run(a, out),
        MonitorCommand::Agentdojo(a) => run_agentdojo(a, out),
    }
}

/// The load and check options of a monitor command: `--method auto` keeps the monitor's
/// default method (topological interval iteration); any other is used as given.
pub(crate) fn monitor_options(
    o: &crate::options::ModelOptions,
) -> Result<(augur_check::LoadOptions, augur_check::CheckOptions), CliError> {
    let (_, load, given) = o.resolve()?;
    let mut check = CompileOptions::new("").check;
    if given.method != augur_check::Method::Auto {
        check.method = given.method;
    }
    check.epsilon = given.epsilon;
    check.limits = given.limits;
    Ok((load, check))
}

fn run_compile(a: &CompileArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let start = std::time::Instant::now();
    let mut opts = CompileOptions::new(&a.prop);
    (opts.load, opts.check) = monitor_options(&a.opts)?;
    opts.horizon = a.horizon;
    opts.pac = a.pac.pac()?;
    opts.robust = a.robust.then_some(augur_monitor::compile::RobustOptions {
        confidence: a.confidence,
    });
    opts.explanations = a.explain;
    if a.states.is_some() {
        deprecated(
            "`augur monitor compile --states` is now --mapping (the old spelling works until 0.2)",
        );
    }
    if let Some(s) = a.mapping.as_ref().or(a.states.as_ref()) {
        opts.mapping = Some(Mapping::parse(s).ok_or_else(|| {
            CliError::user(format!(
                "error: --mapping {s}: expected dtr, risk-level or abstraction"
            ))
        })?);
    }
    if let Some(c) = &a.classifier {
        opts.classifier = Some(Classifier::from_file(c).map_err(user)?);
    }
    if let Some(p) = &a.abstraction {
        let text = read_file(p)?;
        opts.abstraction = Some((text, p.display().to_string()));
    }
    let models: Vec<ModelArg> = a.models.iter().map(|m| ModelArg::parse(m)).collect();
    let monitor = compile(&models, &opts).map_err(user)?;
    monitor.save(&a.output).map_err(user)?;
    let secs = start.elapsed().as_secs_f64();
    let robust = |i: usize| {
        monitor
            .sections
            .robust
            .as_ref()
            .and_then(|r| r.tables.get(i))
    };
    let tables: Vec<Value> = monitor
        .tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut v = json!({"category": t.category, "model": t.model.file, "states": t.model.states,
                   "initial_value": t.value[t.initial as usize],
                   "unobserved_states": t.learning.as_ref().map(|l| l.iter().filter(|s| s.pac == augur_gate::monitor::PacStatus::Unobserved).count())});
            if let Some(r) = robust(i) {
                v["initial_bound"] = json!(r.upper[t.initial as usize]);
                v["confidence"] = json!(r.confidence);
                v["intervals"] = json!(r.intervals);
            }
            v
        })
        .collect();
    if a.opts.load.json {
        let doc = json!({"output": a.output.display().to_string(), "property": monitor.property,
            "mapping": monitor.mapping.as_str(), "horizon_max": monitor.horizon_max, "tables": tables, "seconds": secs});
        writeln!(out, "{doc}")?;
    } else {
        writeln!(
            out,
            "wrote {}: {} ({} mapping, horizon curve h = 1..{}), {} table(s) in {:.3} s",
            a.output.display(),
            monitor.property,
            monitor.mapping.as_str(),
            monitor.horizon_max,
            monitor.tables.len(),
            secs
        )?;
        for (i, t) in monitor.tables.iter().enumerate() {
            let unobserved = t.learning.as_ref().map(|l| {
                l.iter()
                    .filter(|s| s.pac == augur_gate::monitor::PacStatus::Unobserved)
                    .count()
            });
            writeln!(
                out,
                "  {}: {} ({} states), P at the start state = {:.6}{}",
                t.category.as_deref().unwrap_or("fallback"),
                t.model.file,
                t.model.states,
                t.value[t.initial as usize],
                unobserved.map_or(String::new(), |u| format!(
                    ", {u} states never observed in training"
                ))
            )?;
            if let Some(r) = robust(i) {
                let how = match (r.intervals, r.confidence) {
                    (augur_gate::monitor::IntervalSource::Learned, Some(c)) => {
                        format!("intervals learned from its counts, {c} confidence")
                    }
                    (_, Some(c)) => format!("the model's intervals, {c} confidence"),
                    (_, None) => "the model's intervals, given without a confidence".into(),
                };
                writeln!(
                    out,
                    "    robust bound at the start state = {:.6} ({how}); decisions use the bound",
                    r.upper[t.initial as usize]
                )?;
            }
        }
    }
    Ok(())
}

/// An error object for a bad input line; the stream goes on.
fn line_error(lineno: usize, e: &MonitorError) -> Value {
    let d = e.diagnostic();
    json!({"error": {"message": d.message, "line": lineno,
        "column": d.location.as_ref().map(|l| l.column).filter(|&c| c > 0)}, "line": lineno})
}

fn parse_gate_line(line: &str, lineno: usize) -> Result<Map<String, Value>, MonitorError> {
    let v: Value = serde_json::from_str(line).map_err(|e| {
        let col = e.column();
        MonitorError::located(
            augur_source::Location::in_line("<stdin>", lineno, col.max(1), 1, line),
            e.to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_string(),
        )
    })?;
    match v {
        Value::Object(m) => Ok(m),
        _ => Err(MonitorError::located(
            augur_source::Location::line("<stdin>", lineno),
            "expected a JSON object",
        )),
    }
}

fn bad_line(lineno: usize, msg: impl Into<String>) -> MonitorError {
    MonitorError::located(augur_source::Location::line("<stdin>", lineno), msg)
}

/// A line's tool name, arguments and concrete state.
type ActionParts = (Option<String>, Value, Option<Map<String, Value>>);

/// The action of a line (`tool`/`args` or `state`), or of a record line's `record` object.
fn action_parts(m: &Map<String, Value>, lineno: usize) -> Result<ActionParts, MonitorError> {
    let tool = match m.get("tool") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad_line(lineno, "`tool` must be a string")),
    };
    let args = ToolCall::parse_args(m.get("args").cloned().unwrap_or(Value::Object(Map::new())))
        .map_err(|e| bad_line(lineno, e))?;
    let state = match m.get("state") {
        None | Some(Value::Null) => None,
        Some(Value::Object(s)) => Some(s.clone()),
        Some(_) => {
            return Err(bad_line(
                lineno,
                "`state` must be an object of variable values",
            ))
        }
    };
    if tool.is_none() && state.is_none() {
        return Err(bad_line(
            lineno,
            "an action needs `tool` (with `args`) or `state`",
        ));
    }
    Ok((tool, args, state))
}

/// Loads a monitor file; a model given instead (`.tra`, `.drn`, `.pm`, ...) is answered with
/// how to compile one.
fn load_monitor(path: &Path) -> Result<Monitor, CliError> {
    let model = matches!(
        augur_check::Format::from_path(path),
        Some(
            augur_check::Format::Tra
                | augur_check::Format::Drn
                | augur_check::Format::Prism
                | augur_check::Format::Dot
        )
    ) || matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("lab" | "srew" | "trew" | "sta")
    );
    if model {
        let p = path.display();
        return Err(CliError::User(format!(
            "error: {p} is a model, not a monitor file: compile the model into a monitor \
             first, then gate with it:\n  augur monitor compile {p} --prop 'P=? [ F<=5 \"violated\" ]' -o m.json\n  augur monitor gate m.json < actions.jsonl"
        )));
    }
    let m = Monitor::load(path).map_err(user)?;
    // A monitor compiled with an older built-in classifier is used, but said (issue 39; the
    // gateway and the hook refuse it).
    if let Some(stale) = m.stale_classifier() {
        eprintln!(
            "warning: {}",
            stale.message(&path.display().to_string(), &m)
        );
    }
    Ok(m)
}

/// The monitor file of `gate` and `replay`: `--monitor`, or (deprecated) the first argument.
fn monitor_path<'a>(
    command: &str,
    flag: Option<&'a PathBuf>,
    positional: Option<&'a PathBuf>,
) -> Result<&'a PathBuf, CliError> {
    match (flag, positional) {
        (Some(m), None) => Ok(m),
        (None, Some(m)) => {
            deprecated(&format!(
                "`augur monitor {command} MONITOR` is now `augur monitor {command} --monitor MONITOR` (the old spelling works until 0.2)"
            ));
            Ok(m)
        }
        (Some(_), Some(p)) => Err(CliError::User(format!(
            "error: unexpected argument `{}`: the monitor is given by --monitor",
            p.display()
        ))),
        (None, None) => Err(CliError::user(format!(
            "error: `augur monitor {command}` needs the monitor file: --monitor MONITOR.json"
        ))),
    }
}

fn run_gate(a: &GateArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // With --monitor, a file argument is a mistaken actions file (answered below).
    let (positional, extra) = match (&a.monitor, &a.monitor_arg) {
        (Some(_), Some(f)) => (None, Some(f)),
        (_, p) => (p.as_ref(), a.extra.first()),
    };
    let monitor = Arc::new(match (a.monitor.as_ref(), positional) {
        // No monitor given: the built-in default one, as `augur mcp --upstream` serves.
        (None, None) => {
            eprintln!("augur monitor gate: no --monitor: the built-in default monitor (SafetyDrift's risk-level chain with provenance and the built-in classifier); `augur monitor learn RUNS -o monitor.json` learns one from your own runs");
            augur_gate::builtin::gateway_monitor().map_err(user)?
        }
        (flag, positional) => {
            let monitor_file = monitor_path("gate", flag, positional)?;
            if let Some(f) = extra {
                return Err(CliError::User(format!(
                    "error: unexpected argument `{}`: `augur monitor gate` reads the actions (JSON \
                     Lines) from standard input, one decision per line on standard output:\n  augur monitor gate --monitor {} < {}",
                    f.display(),
                    monitor_file.display(),
                    f.display()
                )));
            }
            load_monitor(monitor_file)?
        }
    });
    let policy = Arc::new(load_policy(&a.policy)?);
    // Check the policy against the monitor once, before reading any action.
    for cat in std::iter::once(None).chain(monitor.tables.iter().map(|t| t.category.as_deref())) {
        if monitor.table_for(cat).is_some() {
            Session::new(&monitor, &policy, cat).map_err(user)?;
        }
    }
    let mut audit = match &a.audit {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| CliError::user(format!("error: {}: {e}", p.display())))?,
        )),
        None => None,
    };
    if !(64..=BurnedIds::MAX_BITS).contains(&a.burned_bits) {
        return Err(CliError::user(format!(
            "error: --burned-bits must be in 64..={} (1 GiB), got {}",
            BurnedIds::MAX_BITS,
            a.burned_bits
        )));
    }
    let mut store = SessionStore::new(
        Arc::clone(&monitor),
        Arc::clone(&policy),
        a.session_ttl.map(|s| s.0.as_secs_f64().ceil() as u64),
        a.max_sessions,
    )
    .with_burned_bits(a.burned_bits);
    match &a.state {
        Some(path) => {
            let restored = store.restore(path, unix_now()).map_err(user)?;
            eprintln!("{}", restored.message("augur monitor gate"));
        }
        None => eprintln!(
            "augur monitor gate: sessions are kept in memory only; a restart of this process resets every session to its start state (--state FILE keeps them)"
        ),
    }
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut buf = Vec::new();
    let mut lineno = 0usize;
    loop {
        let got = read_bounded_line(&mut input, &mut buf, MAX_LINE_BYTES)
            .map_err(|e| CliError::Internal(anyhow::Error::new(e).context("reading stdin")))?;
        let answer = match got {
            LineRead::Eof => break,
            LineRead::TooLong => {
                lineno += 1;
                line_error(
                    lineno,
                    &bad_line(
                        lineno,
                        format!(
                            "the line is longer than {MAX_LINE_BYTES} bytes; it was skipped unread"
                        ),
                    ),
                )
            }
            LineRead::Line => {
                lineno += 1;
                match std::str::from_utf8(&buf) {
                    Err(e) => line_error(
                        lineno,
                        &MonitorError::located(
                            augur_source::Location::in_line(
                                "<stdin>",
                                lineno,
                                e.valid_up_to() + 1,
                                1,
                                String::from_utf8_lossy(&buf[..e.valid_up_to()]).into_owned(),
                            ),
                            "the line is not valid UTF-8",
                        ),
                    ),
                    Ok(line) => {
                        if line.trim().is_empty() {
                            continue;
                        }
                        gate_line(&mut store, line, lineno, unix_now(), &mut audit)
                    }
                }
            }
        };
        // The journal holds the session's move before the client sees the decision: a
        // journal that cannot be written stops the gate (no decision without it).
        store.commit().map_err(|e| {
            CliError::Internal(anyhow::Error::new(e).context(
                "writing the state journal (no decision is given without it; the gate stops)",
            ))
        })?;
        writeln!(out, "{answer}")?;
        out.flush()?;
        // The audit line of this decision reaches the file before the next line is read, so
        // a kill after n decisions leaves n audit lines.
        if let Some(w) = audit.as_mut() {
            w.flush().map_err(|e| {
                CliError::Internal(anyhow::Error::new(e).context("writing the audit log"))
            })?;
        }
    }
    Ok(())
}

/// The longest gate line read (16 MiB, as the MCP server); a longer one is answered with an
/// error and skipped without being held in memory.
const MAX_LINE_BYTES: usize = 16 << 20;

/// What [`read_bounded_line`] found.
#[derive(Debug, PartialEq)]
enum LineRead {
    /// A line (without its `\n` / `\r\n`) is in the buffer; a last line without `\n` counts.
    Line,
    /// The line was longer than the limit: it was consumed up to its `\n` and dropped.
    TooLong,
    /// End of input.
    Eof,
}

/// Read one line of raw bytes into `buf`, holding at most `max` bytes of it: a longer line is
/// consumed (to its `\n` or the end of input) through the reader's buffer and dropped.
fn read_bounded_line(
    r: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    buf.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        if !too_long {
            if buf.len() + part.len() > max {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(part);
            }
        }
        let used = done.unwrap_or(chunk.len());
        r.consume(used);
        if done.is_some() {
            break;
        }
    }
    if !any {
        return Ok(LineRead::Eof);
    }
    if too_long {
        buf.clear();
        return Ok(LineRead::TooLong);
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(LineRead::Line)
}

fn gate_line(
    store: &mut SessionStore,
    line: &str,
    lineno: usize,
    now: u64,
    audit: &mut Option<std::io::BufWriter<std::fs::File>>,
) -> Value {
    let m = match parse_gate_line(line, lineno) {
        Ok(m) => m,
        Err(e) => return line_error(lineno, &e),
    };
    let Some(id) = m
        .get("session")
        .and_then(|s| s.as_str())
        .map(str::to_string)
    else {
        return line_error(
            lineno,
            &bad_line(lineno, "every line needs a `session` id (a string)"),
        );
    };
    let category = m
        .get("category")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    let monitor = Arc::clone(store.monitor());
    // An observation line: text the agent saw (answered with one acknowledgement line).
    if let Some(obs) = m.get("observe") {
        return observe_line(store, &id, category.as_deref(), obs, lineno, now);
    }
    // A record line: what happened to the last gated action.
    if let Some(rec) = m.get("record") {
        let Value::Object(rm) = rec else {
            return line_error(
                lineno,
                &bad_line(lineno, "`record` must be an action object"),
            );
        };
        let executed = match m.get("executed") {
            Some(Value::Bool(b)) => *b,
            _ => {
                return line_error(
                    lineno,
                    &bad_line(lineno, "a record line needs `executed`: true or false"),
                )
            }
        };
        let (tool, args, state) = match action_parts(rm, lineno) {
            Ok(p) => p,
            Err(e) => return line_error(lineno, &e),
        };
        return match store.get(&id, category.as_deref(), now) {
            Ok(s) => {
                let action = match &state {
                    Some(st) => Action::State {
                        tool: tool.as_deref(),
                        state: st,
                    },
                    None => Action::Tool(ToolCall::new(tool.as_deref().unwrap_or(""), &args)),
                };
                let changed = s.record(&action, executed);
                let t = &monitor.tables[monitor.table_for(s.category()).unwrap_or(0)];
                json!({"session": id, "recorded": true, "executed": executed, "changed": changed, "state": t.name(s.state())})
            }
            Err(SessionRefused::Expired) => {
                json!({"session": id, "recorded": false, "error": {"message": "the session has expired or was evicted"}})
            }
            Err(SessionRefused::Open(msg)) => {
                json!({"session": id, "recorded": false, "error": {"message": msg}})
            }
        };
    }
    let (tool, args, state) = match action_parts(&m, lineno) {
        Ok(p) => p,
        Err(e) => return line_error(lineno, &e),
    };
    let action = match &state {
        Some(st) => Action::State {
            tool: tool.as_deref(),
            state: st,
        },
        None => Action::Tool(ToolCall::new(tool.as_deref().unwrap_or(""), &args)),
    };
    let rep = match store.get(&id, category.as_deref(), now) {
        Ok(s) => {
            let d = s.gate(&action);
            s.report(&d, &id)
        }
        Err(refused) => {
            let d = store.refused_decision(tool.as_deref().unwrap_or(""));
            let names = augur_gate::session::Names {
                tool: tool.as_deref().unwrap_or(""),
                ..Default::default()
            };
            let mut r = report(&monitor, store.rules_for(None), &d, &id, &names);
            if let SessionRefused::Open(msg) = refused {
                r.reason = format!("{}: {msg} → block", tool.as_deref().unwrap_or("action"));
                r.rule = "fail_closed: cannot open session".into();
            }
            r
        }
    };
    if let Some(w) = audit.as_mut() {
        if let Ok(s) = serde_json::to_string(&AuditRecord::from_report(&rep)) {
            let _ = writeln!(w, "{s}");
            let _ = w.flush();
        }
    }
    serde_json::to_value(&rep).unwrap_or(Value::Null)
}

/// An observation line, `{"session": "S", "observe": {"source": "user"|"system"|"tool",
/// "tool": "read_file", "step": 2, "args": {...}, "text": "..."}}`: the text goes into the
/// session's provenance store (`args`, optional: the arguments of the call whose result it
/// is); the answer is one line, `{"session": "S", "observed": true, "values": N, "new": M,
/// "skipped": B}` (B: bytes beyond the store's scan limit, not read).
fn observe_line(
    store: &mut SessionStore,
    id: &str,
    category: Option<&str>,
    obs: &Value,
    lineno: usize,
    now: u64,
) -> Value {
    let Value::Object(o) = obs else {
        return line_error(
            lineno,
            &bad_line(
                lineno,
                "`observe` must be an object {\"source\", \"text\", \"tool\"?, \"step\"?, \"args\"?}",
            ),
        );
    };
    let source = match o.get("source").and_then(|s| s.as_str()) {
        Some("user") => ObservationSource::User,
        Some("system") => ObservationSource::System,
        Some("tool") => ObservationSource::Tool,
        _ => {
            return line_error(
                lineno,
                &bad_line(
                    lineno,
                    "`observe.source` must be \"user\", \"system\" or \"tool\"",
                ),
            )
        }
    };
    let Some(text) = o.get("text").and_then(|t| t.as_str()) else {
        return line_error(lineno, &bad_line(lineno, "`observe.text` must be a string"));
    };
    let tool = match o.get("tool") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return line_error(lineno, &bad_line(lineno, "`observe.tool` must be a string")),
    };
    if source == ObservationSource::Tool && tool.is_none() {
        return line_error(
            lineno,
            &bad_line(lineno, "a tool observation needs `observe.tool`"),
        );
    }
    let step = match o.get("step") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().and_then(|k| u32::try_from(k).ok()) {
            Some(k) => Some(k),
            None => {
                return line_error(
                    lineno,
                    &bad_line(lineno, "`observe.step` must be a step number"),
                )
            }
        },
    };
    // The arguments of the call whose result it is (as an action's: an object, or a JSON
    // string holding one): with them the result's values are judged as the session's own
    // tool results are (issue 41: a call on what the request named delegates its result; a
    // trusted tool vouches for none of its own arguments' values).
    let args = match o.get("args") {
        None | Some(Value::Null) => None,
        Some(a) => match ToolCall::parse_args(a.clone()) {
            Ok(v @ Value::Object(_)) => Some(v),
            Ok(_) => {
                return line_error(
                    lineno,
                    &bad_line(
                        lineno,
                        "`observe.args` must be an object (the call's arguments)",
                    ),
                )
            }
            Err(e) => return line_error(lineno, &bad_line(lineno, format!("`observe.args`: {e}"))),
        },
    };
    if args.is_some() && source != ObservationSource::Tool {
        return line_error(
            lineno,
            &bad_line(lineno, "`observe.args` belongs to a tool observation"),
        );
    }
    match store.get(id, category, now) {
        Ok(s) => {
            let st = match (&args, tool) {
                (Some(a), Some(t)) => s.observe_result(t, step, a, text.as_bytes()),
                _ => s.observe_at(source, tool, step, text.as_bytes()),
            };
            json!({"session": id, "observed": true, "values": st.found, "new": st.new, "skipped": st.skipped})
        }
        Err(SessionRefused::Expired) => {
            json!({"session": id, "observed": false, "error": {"message": "the session has expired or was evicted"}})
        }
        Err(SessionRefused::Open(msg)) => {
            json!({"session": id, "observed": false, "error": {"message": msg}})
        }
    }
}

fn run_replay(a: &ReplayArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (positional, runs_file) = match a.files.as_slice() {
        [m, r] => (Some(m), r),
        [r] => (None, r),
        _ => return Err(CliError::user("error: give the runs file (and --monitor)")),
    };
    let monitor_file = monitor_path("replay", a.monitor.as_ref(), positional)?;
    let monitor = Arc::new(load_monitor(monitor_file)?);
    let policy = Arc::new(load_policy(&a.policy)?);
    let runs = read_runs_file(runs_file).map_err(user)?;
    for r in &runs {
        let mut s = Session::new(&monitor, &policy, r.category.as_deref()).map_err(user)?;
        if !a.json {
            writeln!(
                out,
                "run {} [{}] {}{}",
                r.id,
                r.category.as_deref().unwrap_or("-"),
                serde_json::to_value(r.label)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                r.violation_step
                    .map_or(String::new(), |v| format!(", violation at step {v}"))
            )?;
        }
        let mut table = crate::table::new(&["step", "tool", "state", "P", "verdict"], &[0, 3]);
        let mut next = 0;
        for (k, step) in r.steps.iter().enumerate() {
            // The run's observations before this call, in order (the user's request, tool
            // results): what the session's provenance store sees.
            augur_monitor::eval::observe_before(&mut s, r, &mut next, k);
            let action = step.action();
            let d = s.gate(&action);
            let rep = s.report(&d, &r.id);
            if a.json {
                writeln!(out, "{}", serde_json::to_string(&rep)?)?;
            } else {
                table.add_row(vec![
                    d.step.to_string(),
                    rep.tool.to_string(),
                    rep.dtr.clone().unwrap_or_else(|| rep.state.clone()),
                    format!("{:.4}", d.probability),
                    d.verdict.to_string(),
                ]);
            }
            if !d.advanced {
                // Replay follows the recorded run: the action did happen.
                s.record(&action, true);
            }
        }
        if !a.json && !r.steps.is_empty() {
            write!(out, "{}", crate::table::render(&table, "  "))?;
        }
    }
    Ok(())
}

fn run_eval(a: &EvalArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let start = std::time::Instant::now();
    let runs = read_runs_file(&a.runs).map_err(user)?;
    let mut opts = a.chain.eval_options()?;
    opts.test_fraction = a.test_fraction;
    opts.folds = a.folds;
    opts.hold_out = if a.hold_out_category {
        Some(augur_monitor::eval::HoldOut::Category)
    } else if a.hold_out_model {
        Some(augur_monitor::eval::HoldOut::Model)
    } else {
        None
    };
    opts.seed = a.seed;
    if let Some(k) = &a.keywords {
        opts.keywords = k
            .split(',')
            .map(|w| {
                NamePattern::new(w)
                    .map_err(|m| CliError::user(format!("error: --keywords `{w}`: {m}")))
            })
            .collect::<Result<_, _>>()?;
    }
    let (load, check) = monitor_options(&a.opts)?;
    let matrix = match &a.matrix {
        Some(path) => augur_check::Model::load(path, &load),
        None => augur_check::Model::from_explicit_texts(
            "models/safetydrift.tra (built in)",
            SAFETYDRIFT,
            &load,
        ),
    };
    let matrix_error = |e: augur_check::CheckError| -> CliError {
        if e.is_internal() {
            return e.into();
        }
        crate::error::check_diagnostic(&e)
            .with_note("the matrix baseline's model: give another with --matrix MODEL (default: the built-in models/safetydrift.tra)")
            .into()
    };
    let matrix = matrix.map_err(matrix_error)?;
    matrix
        .require_point("the monitor's matrix")
        .map_err(matrix_error)?;
    opts.matrix = Some(matrix.into_dtmc());
    opts.load = load;
    opts.check = check;
    opts.policy = match &a.policy {
        Some(p) => Some(Policy::from_file(p).map_err(user)?),
        None => None,
    };
    opts.flag_at = match &a.flag_at {
        Some(v) => Some(Verdict::parse(v).ok_or_else(|| {
            CliError::user(format!(
                "error: --flag-at {v}: expected allow, warn, pause or block"
            ))
        })?),
        None => None,
    };
    let report = evaluate(&runs, &opts).map_err(user)?;
    if let Some(dir) = &a.plots {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::user(format!("error: {}: {e}", dir.display())))?;
        let write = |name: &str, svg: Result<String, MonitorError>| -> Result<(), CliError> {
            let svg = svg.map_err(user)?;
            let p: PathBuf = dir.join(name);
            std::fs::write(&p, svg)
                .map_err(|e| CliError::user(format!("error: {}: {e}", p.display())))
        };
        write("roc.svg", augur_monitor::plot::roc_svg(&report))?;
        write("horizons.svg", augur_monitor::plot::horizons_svg(&report))?;
        write("lead.svg", augur_monitor::plot::lead_svg(&report))?;
    }
    let secs = start.elapsed().as_secs_f64();
    if a.opts.load.json {
        let mut v = serde_json::to_value(&report)?;
        v["seconds"] = json!(secs);
        writeln!(out, "{v}")?;
    } else {
        write!(out, "{}", report.to_text())?;
        writeln!(out, "\n({:.2} s)", secs)?;
    }
    Ok(())
}

/// Where the AgentDojo data comes from, for the error when a file is missing.
const AGENTDOJO_SOURCE: &str = "the AgentDojo runs ship in models/agentdojo/runs/ \
(agentdojo-<model>.jsonl.gz, read compressed or not; exports of runs of the AgentDojo benchmark, \
https://github.com/ethz-spylab/agentdojo, ETH Zurich SPY Lab, MIT licence) and the tasks in \
models/agentdojo/agentdojo_v1_tasks.json";

/// A file read as text lines, decompressed when it is gzip (recognised by its magic bytes, not
/// its name): the AgentDojo runs ship compressed in `models/agentdojo/runs/`.
fn open_maybe_gzip(f: &Path) -> Result<Box<dyn std::io::BufRead>, CliError> {
    use std::io::BufRead as _;
    let cannot =
        |e: std::io::Error| CliError::user(format!("error: cannot read {}: {e}", f.display()));
    let file = std::fs::File::open(f).map_err(cannot)?;
    let mut reader = std::io::BufReader::new(file);
    let gzip = reader
        .fill_buf()
        .map_err(cannot)?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(std::io::BufReader::new(
            flate2::bufread::MultiGzDecoder::new(reader),
        ))
    } else {
        Box::new(reader)
    })
}

fn run_agentdojo(a: &AgentdojoArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if let Some(missing) = std::iter::once(&a.tasks)
        .chain(&a.files)
        .find(|p| !p.is_file())
    {
        return Err(CliError::user(format!(
            "error: {}: no such file\n  note: {AGENTDOJO_SOURCE}",
            missing.display()
        )));
    }
    let text = read_file(&a.tasks)?;
    let tasks = Tasks::parse(&text, &a.tasks.display().to_string()).map_err(user)?;
    let mut conv = Converted::default();
    for f in &a.files {
        let reader = open_maybe_gzip(f)?;
        agentdojo::convert(reader, &f.display().to_string(), &tasks, &mut conv).map_err(user)?;
    }
    write_runs(&a.output, &conv)?;
    let unsafe_n = conv
        .runs
        .iter()
        .filter(|r| r.label == augur_monitor::runs::Label::Unsafe)
        .count();
    writeln!(
        out,
        "wrote {}: {} runs ({} unsafe, {} with a violation step), {} tool calls",
        a.output.display(),
        conv.runs.len(),
        unsafe_n,
        conv.runs
            .iter()
            .filter(|r| r.violation_step.is_some())
            .count(),
        conv.runs.iter().map(|r| r.steps.len()).sum::<usize>()
    )?;
    let unknown = conv
        .disagreements
        .iter()
        .filter(|d| d.what.starts_with("unsafe"))
        .count();
    writeln!(
        out,
        "label and violation step disagree on {} runs: {} unsafe runs without a matching call, {} safe injected runs with one",
        conv.disagreements.len(),
        unknown,
        conv.disagreements.len() - unknown
    )?;
    writeln!(
        out,
        "violation steps from identifiers: {} moved from the first call with a ground-truth tool name; {} safe injected runs with an attempted violation",
        conv.moved, conv.attempted
    )?;
    if a.verbose {
        for d in &conv.disagreements {
            writeln!(out, "  {}: {}", d.id, d.what)?;
        }
    } else if !conv.disagreements.is_empty() {
        writeln!(out, "  (--verbose lists them, one line a run)")?;
    }
    Ok(())
}

fn write_runs(path: &Path, conv: &Converted) -> Result<(), CliError> {
    let f = std::fs::File::create(path)
        .map_err(|e| CliError::user(format!("error: {}: {e}", path.display())))?;
    let mut w = std::io::BufWriter::new(f);
    for r in &conv.runs {
        writeln!(w, "{}", r.to_json_line())
            .map_err(|e| CliError::user(format!("error: {}: {e}", path.display())))?;
    }
    w.flush()
        .map_err(|e| CliError::user(format!("error: {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::{read_bounded_line, LineRead};

    fn all(input: &[u8], max: usize, cap: usize) -> Vec<(LineRead, Vec<u8>)> {
        // A small reader buffer, so lines span many fill_buf calls.
        let mut r = std::io::BufReader::with_capacity(cap, input);
        let mut buf = Vec::new();
        let mut v = Vec::new();
        loop {
            let got = read_bounded_line(&mut r, &mut buf, max).unwrap();
            if got == LineRead::Eof {
                return v;
            }
            v.push((got, buf.clone()));
        }
    }

    #[test]
    fn lines_over_the_limit_are_skipped_and_the_next_line_is_read() {
        let input = b"short\nthis line is too long\r\nok\r\nlast without newline";
        for cap in [1, 3, 8, 64] {
            let got = all(input, 10, cap);
            assert_eq!(
                got,
                vec![
                    (LineRead::Line, b"short".to_vec()),
                    (LineRead::TooLong, vec![]),
                    (LineRead::Line, b"ok".to_vec()),
                    (LineRead::TooLong, vec![]),
                ],
                "cap {cap}"
            );
        }
        let got = all(b"a\n\nb\xff\x00\n", 10, 2);
        assert_eq!(
            got,
            vec![
                (LineRead::Line, b"a".to_vec()),
                (LineRead::Line, vec![]),
                (LineRead::Line, b"b\xff\x00".to_vec()),
            ]
        );
        // Exactly the limit is a line.
        assert_eq!(
            all(b"0123456789\n", 10, 4),
            vec![(LineRead::Line, b"0123456789".to_vec())]
        );
    }
}
