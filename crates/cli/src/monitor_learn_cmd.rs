//! `augur monitor learn RUNS -o MONITOR.json`: the monitor `monitor eval` evaluates, learned
//! from all the labelled runs of a file (`augur_monitor::eval::train_monitor`, the function
//! each round of `eval` calls on its training runs), checked against the policy it will be
//! gated with, written, and summarised with the PAC status of its learned rows.

use crate::error::CliError;
use crate::monitor_cmd::{load_policy, monitor_options, user};
use augur_gate::monitor::{PacStatus, Table};
use augur_gate::{Policy, Session};
use augur_monitor::eval::{
    choose_ask_at, choose_threshold, first_at, replay_probabilities_with, threshold_policy,
    train_monitor, ASK_SHARE,
};
use augur_monitor::runs::{read_runs_file, Label, Run};
use augur_source::number::Approx;
use clap::Args;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `augur monitor learn`.
#[derive(Args, Debug)]
pub struct LearnArgs {
    /// Labelled runs (JSON Lines, one run per line: OpenAI-style `messages` or `steps`;
    /// docs/monitor.md).
    runs: PathBuf,
    /// The property, the horizon, α, the classifier and the chain, as `monitor eval` takes
    /// them.
    #[command(flatten)]
    chain: crate::options::ChainArgs,
    /// The policy the monitor will be gated with (TOML, docs/monitor.md): its `trusted_tools`
    /// say whose results are trusted while learning, and it is checked against the learned
    /// monitor; default: the built-in policy.
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    #[command(flatten)]
    pac: crate::options::PacStatusArgs,
    /// Output monitor file.
    #[arg(short, long, value_name = "MONITOR.json")]
    output: PathBuf,
    /// Also write the policy to gate the learned monitor with: `--policy`'s (or an empty one)
    /// with its `thresholds` replaced by one `block` at the threshold `monitor eval` chooses
    /// on these runs (P = 1, the rules' VIOLATED states, when no threshold tells the runs
    /// apart) and `ask_at` as `monitor eval` chooses it (the pause tier's threshold).
    #[arg(long, value_name = "POLICY.toml")]
    policy_out: Option<PathBuf>,
    /// Constants, method, precision, JSON summary and limits of the compilation, as for
    /// `monitor eval`.
    #[command(flatten)]
    opts: crate::options::ModelOptions,
}

/// How many states short of their PAC bound are listed per table in the text summary (the
/// JSON lists them all).
const SHORT_LISTED: usize = 10;

/// One table's PAC status: counts of its rows by status, and the rows short of their bound.
struct TableStatus<'a> {
    table: &'a Table,
    runs: usize,
    observed: usize,
    /// Its rows by PAC status.
    pac: augur_monitor::eval::PacCounts,
    /// (model state, observations, more needed), most needed first.
    short: Vec<(usize, u64, u64)>,
}

impl<'a> TableStatus<'a> {
    fn new(table: &'a Table, runs: &[Run]) -> TableStatus<'a> {
        let learning = table.learning.as_deref().unwrap_or(&[]);
        let mut short: Vec<(usize, u64, u64)> = learning
            .iter()
            .enumerate()
            .filter(|(_, l)| l.pac == PacStatus::Short)
            .map(|(s, l)| (s, l.observations, l.more_needed))
            .collect();
        short.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        TableStatus {
            table,
            runs: match &table.category {
                Some(c) => runs
                    .iter()
                    .filter(|r| r.category.as_deref() == Some(c))
                    .count(),
                None => runs.len(),
            },
            observed: learning.iter().filter(|l| l.observations > 0).count(),
            pac: augur_monitor::eval::PacCounts::of_rows(learning),
            short,
        }
    }

    fn name(&self) -> &str {
        self.table.category.as_deref().unwrap_or("fallback")
    }

    fn more_needed(&self) -> u64 {
        self.short.iter().map(|s| s.2).sum()
    }

    fn to_json(&self) -> Value {
        let short: Vec<Value> = self
            .short
            .iter()
            .map(|&(s, n, more)| {
                json!({"state": s, "name": self.table.state_names.get(s),
                       "observations": n, "more_needed": more})
            })
            .collect();
        json!({"category": self.table.category, "runs": self.runs,
               "states": self.table.model.states, "observed": self.observed,
               "holds": self.pac.holds, "short": self.short.len(), "determined": self.pac.determined,
               "unobserved": self.pac.unobserved, "more_needed": self.more_needed(),
               "initial_value": self.table.value[self.table.initial as usize],
               "short_states": short})
    }
}

/// Run `augur monitor learn`.
pub fn run(a: &LearnArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let start = std::time::Instant::now();
    let file = a.runs.display().to_string();
    let runs = read_runs_file(&a.runs).map_err(user)?;
    let unsafe_n = runs.iter().filter(|r| r.label == Label::Unsafe).count();
    let safe_n = runs.len() - unsafe_n;
    if runs.is_empty() {
        return Err(CliError::user(format!(
            "error: {file}: no run (one labelled run per line, docs/monitor.md)"
        )));
    }
    if unsafe_n == 0 || safe_n == 0 {
        let (missing, have) = if unsafe_n == 0 {
            ("unsafe", "safe")
        } else {
            ("safe", "unsafe")
        };
        return Err(CliError::user(format!(
            "error: {file}: no {missing} run among its {} runs (all {have}): a monitor learned \
             without {missing} runs has never seen what it must tell apart; add runs labelled \
             \"{missing}\"",
            runs.len()
        )));
    }
    let mut opts = a.chain.eval_options()?;
    (opts.load, opts.check) = monitor_options(&a.opts)?;
    opts.pac = a.pac.pac()?;
    let policy = load_policy(&a.policy)?;
    if a.policy.is_some() {
        // As `monitor eval --policy`: its trusted tools (else the default ones).
        opts.policy = Some(policy.clone());
    }
    let refs: Vec<&Run> = runs.iter().collect();
    let monitor = Arc::new(train_monitor(&refs, &opts).map_err(user)?);
    // The policy must work with the monitor (a `horizon` beyond its curve, ...) before the
    // file is written: the gate would refuse them together.
    let policy = Arc::new(policy);
    for t in &monitor.tables {
        Session::new(&monitor, &policy, t.category.as_deref()).map_err(user)?;
    }
    monitor.save(&a.output).map_err(user)?;
    let secs = start.elapsed().as_secs_f64();
    // The threshold `monitor eval` would choose on these runs (as its training split), with
    // what it flags there: training figures, optimistic.
    let trusted = match &opts.policy {
        Some(p) => &p.base.trusted_tools,
        None => &opts.trusted_tools,
    };
    let traces = replay_probabilities_with(&monitor, &refs, None, trusted).map_err(user)?;
    let threshold = choose_threshold(&refs, &traces);
    let flagged = |label: Label| {
        refs.iter()
            .zip(&traces)
            .filter(|(r, t)| r.label == label && first_at(t, threshold).is_some())
            .count()
    };
    let (unsafe_flagged, safe_flagged) = (flagged(Label::Unsafe), flagged(Label::Safe));
    // The pause tier's `ask_at`, as `monitor eval` chooses it on its training runs.
    let ask_at = choose_ask_at(
        &monitor,
        &threshold_policy(threshold, trusted),
        &refs,
        ASK_SHARE,
    )
    .map_err(user)?;
    if let Some(path) = &a.policy_out {
        write_policy(a, &monitor, threshold, ask_at, path)?;
    }
    let tables: Vec<TableStatus<'_>> = monitor
        .tables
        .iter()
        .map(|t| TableStatus::new(t, &runs))
        .collect();
    let categories: Vec<&str> = tables
        .iter()
        .filter_map(|t| t.table.category.as_deref())
        .collect();
    let calls: usize = runs.iter().map(|r| r.steps.len()).sum();
    let chain = if opts.provenance {
        "960-state (d, t, r, p, i, u)"
    } else {
        "60-state (d, t, r)"
    };
    let (epsilon, delta) = opts.pac;
    if a.opts.load.json {
        let doc = json!({"output": a.output.display().to_string(), "runs": runs.len(),
            "safe": safe_n, "unsafe": unsafe_n, "tool_calls": calls, "categories": categories,
            "chain": chain, "alpha": opts.alpha, "property": monitor.property,
            "horizon_max": monitor.horizon_max, "pac": {"epsilon": epsilon, "delta": delta},
            "tables": tables.iter().map(TableStatus::to_json).collect::<Vec<_>>(),
            "threshold": {"at": threshold.is_finite().then_some(threshold),
                          "unsafe_flagged": unsafe_flagged, "safe_flagged": safe_flagged},
            "ask_at": ask_at,
            "seconds": secs});
        writeln!(out, "{doc}")?;
        return Ok(());
    }
    writeln!(
        out,
        "read {} runs from {file}: {safe_n} safe, {unsafe_n} unsafe; {}; {calls} tool calls",
        runs.len(),
        match categories.len() {
            0 => "no categories".to_string(),
            n => format!(
                "{n} categor{} ({})",
                if n == 1 { "y" } else { "ies" },
                categories.join(", ")
            ),
        }
    )?;
    writeln!(
        out,
        "learned the {chain} chain per category and on all runs (α = {}), compiled {} (horizon curve h = 1..{}) in {secs:.3} s",
        Approx(opts.alpha),
        monitor.property,
        monitor.horizon_max
    )?;
    writeln!(
        out,
        "PAC status of the learned rows (ε = {}, δ = {}, as `augur pac` computes it):",
        Approx(epsilon),
        Approx(delta)
    )?;
    let mut t = crate::table::new(
        &[
            "table",
            "runs",
            "P at start",
            "observed",
            "hold",
            "short",
            "more needed",
            "fixed",
            "never observed",
        ],
        &[1, 2, 3, 4, 5, 6, 7, 8],
    );
    for s in &tables {
        t.add_row(vec![
            s.name().to_string(),
            s.runs.to_string(),
            format!("{:.6}", s.table.value[s.table.initial as usize]),
            format!("{} of {}", s.observed, s.table.model.states),
            s.pac.holds.to_string(),
            s.short.len().to_string(),
            s.more_needed().to_string(),
            s.pac.determined.to_string(),
            s.pac.unobserved.to_string(),
        ]);
    }
    write!(out, "{}", crate::table::render(&t, "  "))?;
    for s in tables.iter().filter(|s| !s.short.is_empty()) {
        writeln!(
            out,
            "states of {} short of their bound (observations n_p, more needed):",
            s.name()
        )?;
        let mut t = crate::table::new(&["state", "n_p", "more"], &[1, 2]);
        for &(state, n, more) in s.short.iter().take(SHORT_LISTED) {
            t.add_row(vec![
                s.table
                    .state_names
                    .get(state)
                    .cloned()
                    .unwrap_or_else(|| format!("s{state}")),
                n.to_string(),
                more.to_string(),
            ]);
        }
        write!(out, "{}", crate::table::render(&t, "  "))?;
        if s.short.len() > SHORT_LISTED {
            writeln!(
                out,
                "  ({} more; --json lists them all)",
                s.short.len() - SHORT_LISTED
            )?;
        }
    }
    if threshold.is_finite() {
        writeln!(
            out,
            "threshold as `monitor eval` chooses it on these runs (training figures, optimistic): P ≥ {threshold:.4} flags {unsafe_flagged} of {unsafe_n} unsafe and {safe_flagged} of {safe_n} safe runs{}",
            if a.policy.is_none() {
                "; the default policy blocks at P ≥ 0.9, pauses at 0.6, warns at 0.3 (--policy for yours)"
            } else {
                ""
            }
        )?;
    } else {
        writeln!(
            out,
            "no threshold flags an unsafe run of these runs before a safe one: the chain does not tell them apart"
        )?;
    }
    writeln!(
        out,
        "pause tier as `monitor eval` chooses it on these runs (a value from content the user delegated, an unrequested change after an injection): {}",
        match ask_at {
            None => format!(
                "every such call asked (at most {:.0}% of the benign and of the injected safe runs pause)",
                ASK_SHARE * 100.0
            ),
            Some(x) => format!(
                "asked from P ≥ {:.4}, warned below (the lowest at which at most {:.0}% of the benign and of the injected safe runs pause)",
                x,
                ASK_SHARE * 100.0
            ),
        }
    )?;
    let policy_arg = a
        .policy_out
        .as_ref()
        .or(a.policy.as_ref())
        .map_or(String::new(), |p| format!(" --policy {}", p.display()));
    if let Some(p) = &a.policy_out {
        writeln!(
            out,
            "wrote {}: block at P ≥ {}{}",
            p.display(),
            block_at(threshold),
            ask_at.map_or(String::new(), |x| format!(", ask from P ≥ {x}"))
        )?;
    }
    writeln!(
        out,
        "wrote {}: gate with it: augur monitor gate --monitor {}{policy_arg} (or --monitor {} for augur mcp and augur hook claude-code)",
        a.output.display(),
        a.output.display(),
        a.output.display()
    )?;
    Ok(())
}

/// The block threshold `--policy-out` writes: the chosen one, or 1 (the rules' VIOLATED
/// states) when none tells the runs apart.
fn block_at(threshold: f64) -> f64 {
    if threshold.is_finite() {
        threshold
    } else {
        1.0
    }
}

/// Writes `--policy`'s keys (or `version = 1` alone) with `thresholds` replaced by one block
/// at [`block_at`], checked as the gate will load it, with the learned monitor.
fn write_policy(
    a: &LearnArgs,
    monitor: &Arc<augur_gate::Monitor>,
    threshold: f64,
    ask_at: Option<f64>,
    path: &std::path::Path,
) -> Result<(), CliError> {
    let mut doc: toml::Table = match &a.policy {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| CliError::user(format!("error: {}: {e}", p.display())))?;
            text.parse()
                .map_err(|e| CliError::user(format!("error: {}: {e}", p.display())))?
        }
        None => toml::Table::new(),
    };
    doc.entry("version").or_insert(toml::Value::Integer(1));
    let mut block = toml::Table::new();
    block.insert("at".into(), toml::Value::Float(block_at(threshold)));
    block.insert("verdict".into(), toml::Value::String("block".into()));
    block.insert(
        "message".into(),
        toml::Value::String("the threshold monitor learn chose on its runs".into()),
    );
    doc.insert(
        "thresholds".into(),
        toml::Value::Array(vec![toml::Value::Table(block)]),
    );
    match ask_at {
        Some(x) => {
            doc.insert("ask_at".into(), toml::Value::Float(x));
        }
        None => {
            doc.remove("ask_at");
        }
    }
    let text = format!(
        "# Written by `augur monitor learn {}`: block at the threshold `monitor eval` chooses on\n\
         # these runs (training figures, optimistic: measure with `monitor eval` before relying on it).\n{}",
        a.runs.display(),
        toml::to_string(&doc).map_err(|e| CliError::Internal(anyhow::anyhow!(e)))?
    );
    let shown = path.display().to_string();
    let policy = Arc::new(Policy::parse(&text, &shown).map_err(user)?);
    for t in &monitor.tables {
        Session::new(monitor, &policy, t.category.as_deref()).map_err(user)?;
    }
    std::fs::write(path, text)
        .map_err(|e| CliError::user(format!("error: cannot write {shown}: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        learn: LearnArgs,
    }

    /// The command's defaults are `monitor eval`'s ([`augur_monitor::eval::EvalOptions::new`]),
    /// so that a monitor learned without options is the one eval's rounds learn.
    #[test]
    fn defaults_are_evals() {
        let cli = Cli::parse_from(["x", "runs.jsonl", "-o", "m.json"]);
        let mut opts = cli.learn.chain.eval_options().unwrap();
        (opts.load, opts.check) = monitor_options(&cli.learn.opts).unwrap();
        opts.pac = cli.learn.pac.pac().unwrap();
        let e = augur_monitor::eval::EvalOptions::new();
        assert_eq!(opts.property, e.property);
        assert_eq!(opts.horizon, e.horizon);
        assert_eq!(opts.alpha, e.alpha);
        assert_eq!(opts.provenance, e.provenance);
        assert_eq!(opts.pac, e.pac);
        assert_eq!(opts.check.method, e.check.method);
        assert_eq!(opts.check.epsilon, e.check.epsilon);
        let runs = augur_monitor::runs::read_runs(
            &include_bytes!("../../../models/monitor/runs.jsonl")[..],
            "runs.jsonl",
        )
        .unwrap();
        let refs: Vec<&Run> = runs.iter().collect();
        let default = train_monitor(&refs, &augur_monitor::eval::EvalOptions::new()).unwrap();
        assert_eq!(
            train_monitor(&refs, &opts).unwrap().to_json(),
            default.to_json()
        );
    }
}
