//! `augur pac`: PAC sample-size bounds, for a learned model or as a calculator.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use augur_formats::json::parse_json;
use augur_learn::counts::KeyedCounts;
use augur_learn::pac::{pac_report, required_samples, PacBound};
use augur_learn::pipeline::{learn_from_counts, LearnOptions};
use augur_learn::{CountsJson, TransitionCounts};
use serde_json::json;

/// Arguments of `augur pac`.
#[derive(clap::Args, Debug)]
pub struct PacArgs {
    /// A learned model (Augur JSON with transition counts, as written by `augur learn`).
    /// Without it, the calculator form: --states, --p-hat and optionally --observations.
    pub model: Option<PathBuf>,
    /// Transition counts as a file of their own instead of a MODEL: the keyed counts of
    /// `augur learn --counts-only` (docs/scale.md; categories summed; JSON or a `.parquet`
    /// counts table), or the `"counts"`
    /// object of a learned model (`num_states`, `transitions: [[from, to, count], ...]`, ...).
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub counts: Option<PathBuf>,
    /// Accuracy ε in (0, 1).
    #[arg(long)]
    pub epsilon: f64,
    /// Confidence δ in (0, 1); each state gets δ' = δ/m.
    #[arg(long)]
    pub delta: f64,
    /// Use the Hoeffding bound ln(2/δ')/(2ε²) instead of Pro2Guard's (Chen et al.).
    #[arg(long)]
    pub hoeffding: bool,
    /// Calculator: the number of states m.
    #[arg(long, value_name = "M")]
    pub states: Option<usize>,
    /// Calculator: the observations n_p out of the state.
    #[arg(long, value_name = "N")]
    pub observations: Option<u64>,
    /// Calculator: the empirical probability p̂ of the binding successor (closest to 1/2);
    /// omit for the worst case p̂ = 1/2 (a state not yet observed).
    #[arg(long, value_name = "P")]
    pub p_hat: Option<f64>,
    /// List every state, not only those short of their bound.
    #[arg(long)]
    pub all: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Exit with code 3 when the PAC requirement does not hold (a model: some state short of
    /// its bound; the calculator: --observations fewer than required), so that a script or a
    /// CI job can gate on it.
    #[arg(long)]
    pub assert: bool,
}

/// Run `augur pac`, printing to `out`. Returns whether the PAC condition holds (the
/// calculator: whether the given observations suffice).
pub fn run(args: &PacArgs, out: &mut dyn Write) -> Result<bool> {
    let bound = if args.hoeffding {
        PacBound::Hoeffding
    } else {
        PacBound::ChenEtAl
    };
    match args.model.as_ref().or(args.counts.as_ref()) {
        None => calculator(args, bound, out),
        Some(path) => {
            if args.states.is_some() || args.observations.is_some() || args.p_hat.is_some() {
                bail!(
                    "--states/--observations/--p-hat are for the calculator form, without a MODEL"
                );
            }
            model_report(args, path, bound, out)
        }
    }
}

fn calculator(args: &PacArgs, bound: PacBound, out: &mut dyn Write) -> Result<bool> {
    let Some(m) = args.states else {
        bail!("give a MODEL.json, or --states M (with --p-hat P and --observations N) for the calculator");
    };
    let exact = required_samples(args.p_hat, m, args.epsilon, args.delta, bound)?;
    let required = exact.ceil() as u64;
    let holds = args.observations.map(|n| n >= required);
    if args.json {
        let v = json!({
            "bound": bound,
            "states": m,
            "epsilon": args.epsilon,
            "delta": args.delta,
            "delta_prime": args.delta / m as f64,
            "p_hat": args.p_hat,
            "required_exact": exact,
            "required": required,
            "observations": args.observations,
            "holds": holds,
            "more_needed": args.observations.map(|n| required.saturating_sub(n)),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        let which = match bound {
            PacBound::ChenEtAl => format!(
                "(2/ε²)·ln(2/δ')·(1/4 − (max(0, |1/2 − p̂| − 2ε/3))²) with p̂ = {}",
                args.p_hat
                    .map_or("1/2 (worst case)".to_string(), |p| p.to_string())
            ),
            PacBound::Hoeffding => "ln(2/δ')/(2ε²) (Hoeffding)".to_string(),
        };
        writeln!(
            out,
            "required n ≥ {exact:.2} → {required} observations (m = {m}, ε = {}, δ = {}, δ' = {}, bound {which})",
            args.epsilon,
            args.delta,
            args.delta / m as f64
        )?;
        if let Some(n) = args.observations {
            if n >= required {
                writeln!(out, "N = {n} is enough")?;
            } else {
                writeln!(out, "N = {n} is not enough: {} more needed", required - n)?;
            }
        }
    }
    Ok(holds.unwrap_or(true))
}

fn model_report(
    args: &PacArgs,
    path: &std::path::Path,
    bound: PacBound,
    out: &mut dyn Write,
) -> Result<bool> {
    /// A learned model, as far as `pac` reads it.
    #[derive(serde::Deserialize)]
    struct Learned {
        counts: Option<CountsJson>,
        metadata: Option<serde_json::Value>,
    }
    let name = path.display().to_string();
    // A Parquet counts table (`augur learn --counts-only -o counts.parquet`) is keyed counts.
    let parquet = args.counts.is_some()
        && augur_columnar::ColumnarFormat::from_path(path)
            == Some(augur_columnar::ColumnarFormat::Parquet);
    let text = if parquet {
        String::new()
    } else {
        std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read"))?
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    /// Only the format tag of a counts file, to tell the keyed schema from the older one.
    #[derive(serde::Deserialize)]
    struct Tag {
        format: Option<serde_json::Value>,
    }
    let keyed = parquet
        || args.counts.is_some()
            && serde_json::from_str::<Tag>(text).is_ok_and(|t| t.format.is_some());
    let mut keyed_names = None;
    let (counts, metadata): (CountsJson, Option<serde_json::Value>) = if keyed {
        // Keyed counts (`augur learn --counts-only`, docs/scale.md): learned as
        // `--from-counts` does (categories summed, no spec), for their counts and names.
        let counts: KeyedCounts = crate::learn_cmd::read_counts(path)?;
        counts.check().map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let opts = LearnOptions {
            order: counts.order,
            ..LearnOptions::default()
        };
        let mut models = learn_from_counts(&[counts], None, &opts)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let model = models.remove(0);
        keyed_names = Some(model.state_names);
        (model.counts.to_json(), None)
    } else if args.counts.is_some() {
        (parse_json(text, path)?, None)
    } else {
        // (The model itself is not built: only its counts matter here.)
        let doc: Learned = parse_json(text, path)?;
        let Some(counts) = doc.counts else {
            bail!("{name}: the model has no transition counts (learn it with `augur learn` to keep them)");
        };
        (counts, doc.metadata)
    };
    let counts = TransitionCounts::from_json_within(&counts, augur_check::DEFAULT_MAX_STATES)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let names: Vec<String> = keyed_names
        .or_else(|| {
            metadata
                .as_ref()
                .and_then(|m| m.get("state_names"))
                .and_then(|v| serde_json::from_value(v.clone()).ok())
        })
        .filter(|v: &Vec<String>| v.len() == counts.num_states())
        .unwrap_or_else(|| (0..counts.num_states()).map(|i| format!("s{i}")).collect());
    let report = pac_report(&counts, args.epsilon, args.delta, bound)?;
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        if let Some(states) = v.get_mut("per_state").and_then(|s| s.as_array_mut()) {
            for s in states.iter_mut() {
                let i = s["state"].as_u64().unwrap_or(0) as usize;
                s["name"] = json!(names.get(i));
            }
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(report.holds);
    }
    writeln!(
        out,
        "{name}: {} states, ε = {}, δ = {} (δ' = {:.3e}), bound {}",
        report.states,
        report.epsilon,
        report.delta,
        report.delta_prime,
        match bound {
            PacBound::ChenEtAl => "Pro2Guard (Chen et al.)",
            PacBound::Hoeffding => "Hoeffding",
        }
    )?;
    let shown: Vec<_> = report
        .per_state
        .iter()
        .filter(|s| args.all || !s.holds)
        .collect();
    if !shown.is_empty() {
        let mut t = crate::table::new(
            &["state", "n_p", "p̂", "required", "more", "verdict"],
            &[1, 2, 3, 4],
        );
        for s in shown {
            let verdict = if s.determined {
                "fixed by validity"
            } else if s.holds {
                "ok"
            } else if s.observations == 0 {
                "never observed"
            } else {
                "not enough"
            };
            t.add_row(vec![
                names[s.state as usize].clone(),
                s.observations.to_string(),
                s.binding_p_hat.map_or("-".into(), |p| format!("{p:.3}")),
                s.required.to_string(),
                s.more_needed.to_string(),
                verdict.to_string(),
            ]);
        }
        write!(out, "{}", crate::table::render(&t, "  "))?;
    }
    let ok = report.per_state.iter().filter(|s| s.holds).count();
    if report.holds {
        writeln!(out, "PAC: holds for all {} states", report.states)?;
    } else {
        writeln!(
            out,
            "PAC: does not hold: {ok} of {} states satisfy their bound ({} never observed{}); {} more observations needed in total",
            report.states,
            report.unvisited,
            if report.holds_on_visited {
                "; every observed state does"
            } else {
                ""
            },
            report.total_more_needed
        )?;
    }
    Ok(report.holds)
}
