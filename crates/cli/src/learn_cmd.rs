//! `augur learn`: learn a DTMC from traces (optionally through an abstraction spec).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use augur_abstraction::{Abstraction, StepKind, TraceFormat, TraceReader};
use augur_dtmc::json::DtmcJson;
use augur_dtmc::learn::{learn_with, AllValid, TransitionCounts, Unobserved, Validity};
use augur_dtmc::{Dtmc, Valuations};
use augur_expr::{Type, Value};
use serde_json::json;

/// Arguments of `augur learn`.
#[derive(clap::Args, Debug)]
pub struct LearnArgs {
    /// The trace file: JSON Lines (one trace per line) or CSV long form (`.csv`).
    pub traces: PathBuf,
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
    /// Output model (Augur JSON, with the transition counts for `augur pac`).
    #[arg(short, long, value_name = "MODEL.json")]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One model being learned: its counts and, without a spec, its state names.
#[derive(Default)]
struct Group {
    counts: TransitionCounts,
    names: Vec<String>,
    index: HashMap<String, u32>,
}

/// A skipped trace or line, for the summary.
struct Skipped {
    line: usize,
    message: String,
}

fn sanitize(category: &str) -> String {
    let s: String = category
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

fn category_path(out: &Path, category: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    out.with_file_name(format!("{stem}.{}.json", sanitize(category)))
}

/// Run `augur learn`, printing the summary to `out`.
pub fn run(args: &LearnArgs, out: &mut dyn Write) -> Result<()> {
    if !(args.alpha.is_finite() && args.alpha >= 0.0) {
        bail!("--alpha must be a finite number >= 0, got {}", args.alpha);
    }
    let spec = match &args.abstraction {
        Some(p) => Some(Abstraction::from_file(p)?),
        None => None,
    };
    let file_name = args.traces.display().to_string();
    let file = File::open(&args.traces).with_context(|| format!("{file_name}: cannot open"))?;
    let reader = TraceReader::new(
        BufReader::new(file),
        TraceFormat::from_path(&args.traces),
        &file_name,
    );

    let spec_validity = spec
        .as_ref()
        .map(|a| move |i: u32, j: u32| -> bool { a.is_valid_transition_idx(i, j) });
    let validity: &dyn Validity = match &spec_validity {
        Some(v) => v,
        None => &AllValid,
    };

    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut read_traces = 0u64;
    let mut states_buf: Vec<u32> = Vec::new();
    for item in reader {
        let trace = match item {
            Ok(t) => t,
            Err(e) => {
                if args.skip_invalid {
                    let line = e.location().map_or(0, |l| l.line);
                    skipped.push(Skipped {
                        line,
                        message: e.to_string(),
                    });
                    continue;
                }
                return Err(e.into());
            }
        };
        read_traces += 1;
        let key = if args.by_category {
            trace
                .category
                .clone()
                .unwrap_or_else(|| "uncategorized".into())
        } else {
            String::new()
        };
        let group = groups.entry(key).or_insert_with(|| Group {
            counts: TransitionCounts::new(spec.as_ref().map_or(0, |a| a.num_states())),
            ..Default::default()
        });
        // Map the steps to state indices; nothing is recorded unless the whole trace maps.
        states_buf.clear();
        let mut new_names: Vec<String> = Vec::new();
        let mut failure = None;
        for step in &trace.steps {
            let r = match (&spec, &step.kind) {
                (Some(a), _) => a.step_state(step, &file_name).map_err(anyhow::Error::from),
                (None, StepKind::Named(name)) => Ok(match group.index.get(name) {
                    Some(&i) => i,
                    None => {
                        let pos = new_names.iter().position(|n| n == name);
                        let k = pos.unwrap_or_else(|| {
                            new_names.push(name.clone());
                            new_names.len() - 1
                        });
                        (group.names.len() + k) as u32
                    }
                }),
                (None, StepKind::Values(_)) => Err(anyhow::anyhow!(
                    "{file_name}:{}: trace `{}` has a step with concrete variable values; \
                     give --abstraction SPEC to abstract them, or name abstract states with \
                     {{\"state\": \"NAME\"}}",
                    step.line,
                    trace.id
                )),
            };
            match r {
                Ok(s) => states_buf.push(s),
                Err(e) => {
                    failure = Some((step.line, e));
                    break;
                }
            }
        }
        if let Some((line, e)) = failure {
            if args.skip_invalid {
                skipped.push(Skipped {
                    line,
                    message: e.to_string(),
                });
                continue;
            }
            return Err(e);
        }
        for name in new_names {
            group.index.insert(name.clone(), group.names.len() as u32);
            group.names.push(name);
        }
        if spec.is_none() {
            group.counts.ensure_states(group.names.len());
        }
        group.counts.try_observe_trace(&states_buf, validity)?;
    }

    if groups.values().all(|g| g.counts.traces() == 0) {
        bail!(
            "{file_name}: no trace with at least one step{}",
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" ({} skipped)", skipped.len())
            }
        );
    }

    if args.by_category {
        // Two categories whose names sanitise alike ("a/b", "a_b") would silently overwrite
        // one model with the other.
        let mut paths: Vec<(PathBuf, &str)> = Vec::new();
        for (category, group) in &groups {
            if group.counts.traces() == 0 {
                continue;
            }
            let p = category_path(&args.output, category);
            if let Some((_, other)) = paths.iter().find(|(q, _)| *q == p) {
                bail!(
                    "categories `{other}` and `{category}` would both be written to {}; \
                     rename one of them in the traces",
                    p.display()
                );
            }
            paths.push((p, category));
        }
    }

    let mut models = Vec::new();
    for (category, group) in &mut groups {
        if group.counts.traces() == 0 {
            continue;
        }
        group.counts.mark_determined(validity);
        let unobserved = if args.final_absorbing {
            Unobserved::Absorbing
        } else {
            Unobserved::Uniform
        };
        let learned = learn_with(&group.counts, validity, args.alpha, unobserved)?;
        let mut dtmc = learned.dtmc;
        let names: Vec<String> = match &spec {
            Some(a) => a.valid_states().iter().map(|&c| a.state_name(c)).collect(),
            None => group.names.clone(),
        };
        decorate(&mut dtmc, spec.as_ref(), &names);
        let path = if args.by_category {
            category_path(&args.output, category)
        } else {
            args.output.clone()
        };
        let mut doc = DtmcJson::from_dtmc(&dtmc);
        doc.counts = Some(serde_json::to_value(group.counts.to_json())?);
        doc.metadata = Some(json!({
            "learned": {
                "alpha": args.alpha,
                "traces_file": file_name,
                "abstraction": args.abstraction.as_ref().map(|p| p.display().to_string()),
                "category": if args.by_category { Some(category.clone()) } else { None },
            },
            "state_names": names,
        }));
        let f =
            File::create(&path).with_context(|| format!("{}: cannot create", path.display()))?;
        let mut w = BufWriter::new(f);
        serde_json::to_writer(&mut w, &doc)?;
        writeln!(w)?;
        w.flush()
            .with_context(|| format!("{}: cannot write", path.display()))?;

        let c = &group.counts;
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
            "category": if args.by_category { Some(category.clone()) } else { None },
            "output": path.display().to_string(),
            "traces": c.traces(),
            "steps": c.steps(),
            "states": dtmc.num_states(),
            "states_seen": c.states_seen(),
            "transitions": dtmc.num_transitions(),
            "observed_transitions": c.to_json().transitions.iter().map(|t| t.2).sum::<u64>(),
            "invalid_transitions_dropped": c.invalid_total(),
            "invalid_examples": invalid_examples,
            "absorbing": learned.report.absorbing.iter().map(|&s| names[s as usize].clone()).collect::<Vec<_>>(),
            "unobserved_uniform": learned.report.unobserved_uniform.len(),
            "unobserved_absorbing": learned.report.unobserved_absorbing.len(),
            "initial": dtmc.initial.iter().map(|&s| names[s as usize].clone()).collect::<Vec<_>>(),
        }));
    }

    let summary = json!({
        "traces_read": read_traces,
        "skipped": skipped.len(),
        "skipped_lines": skipped.iter().map(|s| json!({"line": s.line, "error": s.message})).collect::<Vec<_>>(),
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
        for s in &skipped {
            writeln!(out, "  skipped: {}", s.message)?;
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

/// Labels and valuations: with a spec, its labels and predicates, and predicate valuations;
/// without, every state labelled with its name.
fn decorate(dtmc: &mut Dtmc, spec: Option<&Abstraction>, names: &[String]) {
    match spec {
        Some(a) => {
            dtmc.labels = a.labels();
            let k = a.predicates().len();
            let mut values = Vec::with_capacity(a.num_states() * k);
            for &c in a.valid_states() {
                values.extend(a.decode(c).into_iter().map(Value::Bool));
            }
            dtmc.valuations = Some(Valuations::new(
                a.predicates().iter().map(|p| p.name.clone()).collect(),
                vec![Type::Bool; k],
                values,
            ));
        }
        None => {
            let n = dtmc.num_states();
            dtmc.labels = names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let mut set = fixedbitset::FixedBitSet::with_capacity(n);
                    set.insert(i);
                    (name.clone(), set)
                })
                .collect();
        }
    }
}
