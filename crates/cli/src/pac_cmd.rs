//! `augur pac`: PAC sample-size bounds, for a learned model or as a calculator.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use augur_formats::json::parse_json;
use augur_learn::counts::KeyedCounts;
use augur_learn::pac::{pac_report, required_samples, PacBound};
use augur_learn::pipeline::{learn_from_counts, LearnOptions};
use augur_learn::{CountsJson, TransitionCounts};
use augur_source::number::{approx, Approx};
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
    #[arg(long, required_unless_present_any = ["width", "param_box"])]
    pub epsilon: Option<f64>,
    /// Confidence δ in (0, 1); each state gets δ' = δ/m.
    #[arg(long, required_unless_present_any = ["width", "param_box"])]
    pub delta: Option<f64>,
    /// Width advice: how many more traces (and from which states) are predicted to bring
    /// Pmax − Pmin of --prop below W on the learned interval model (docs/robust.md). Takes a
    /// model learned with `--intervals`, or keyed counts (--counts, with --confidence).
    #[arg(long, value_name = "W", conflicts_with_all = ["epsilon", "delta", "hoeffding", "states", "observations", "p_hat"])]
    pub width: Option<f64>,
    /// With --width: the property, `P=? [ ... ]` (or Pmin/Pmax), whose width is asked about.
    #[arg(long, value_name = "PCTL", requires = "width")]
    pub prop: Option<String>,
    /// With --width and --counts, or --param-box: the confidence of the intervals [default:
    /// 0.95] (a model learned with --intervals has its own).
    #[arg(long, value_name = "C", value_parser = crate::learn_cmd::parse_confidence)]
    pub confidence: Option<f64>,
    /// The box the data allows for the rows a model learned with `augur learn --parametric`
    /// keeps symbolic: each parameter's interval, holding simultaneously with --confidence,
    /// and the `--param`/`--region` options that check the model over it
    /// (docs/parametric.md).
    #[arg(long, conflicts_with_all = ["epsilon", "delta", "width", "counts", "hoeffding", "states", "observations", "p_hat"])]
    pub param_box: bool,
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
    /// List every state, not only those short of their bound (with --width: every state with
    /// a part of the width, not only the 20 largest).
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
    if args.param_box {
        return param_box(args, out);
    }
    if args.confidence.is_some() && args.counts.is_none() {
        bail!("--confidence goes with --counts (and --width), or with --param-box");
    }
    if let Some(width) = args.width {
        return width_report(args, width, out);
    }
    let (Some(epsilon), Some(delta)) = (args.epsilon, args.delta) else {
        bail!("give --epsilon and --delta (or --width)");
    };
    let bound = if args.hoeffding {
        PacBound::Hoeffding
    } else {
        PacBound::ChenEtAl
    };
    match args.model.as_ref().or(args.counts.as_ref()) {
        None => calculator(args, epsilon, delta, bound, out),
        Some(path) => {
            if args.states.is_some() || args.observations.is_some() || args.p_hat.is_some() {
                bail!(
                    "--states/--observations/--p-hat are for the calculator form, without a MODEL"
                );
            }
            model_report(args, path, epsilon, delta, bound, out)
        }
    }
}

fn calculator(
    args: &PacArgs,
    epsilon: f64,
    delta: f64,
    bound: PacBound,
    out: &mut dyn Write,
) -> Result<bool> {
    let Some(m) = args.states else {
        bail!("give a MODEL.json, or --states M (with --p-hat P and --observations N) for the calculator");
    };
    let exact = required_samples(args.p_hat, m, epsilon, delta, bound)?;
    let required = exact.ceil() as u64;
    let holds = args.observations.map(|n| n >= required);
    if args.json {
        let v = json!({
            "bound": bound,
            "states": m,
            "epsilon": epsilon,
            "delta": delta,
            "delta_prime": delta / m as f64,
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
                args.p_hat.map_or("1/2 (worst case)".to_string(), approx)
            ),
            PacBound::Hoeffding => "ln(2/δ')/(2ε²) (Hoeffding)".to_string(),
        };
        writeln!(
            out,
            "required n ≥ {exact:.2} → {required} observations (m = {m}, ε = {}, δ = {}, δ' = {}, bound {which})",
            Approx(epsilon),
            Approx(delta),
            Approx(delta / m as f64)
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
    epsilon: f64,
    delta: f64,
    bound: PacBound,
    out: &mut dyn Write,
) -> Result<bool> {
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
        (CountsJson::from_json(text, path)?, None)
    } else {
        // (The model itself is not built: only its counts matter here.)
        let doc = augur_learn::LearnedCounts::from_json(text, path)?;
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
    let report = pac_report(&counts, epsilon, delta, bound)?;
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
        Approx(report.epsilon),
        Approx(report.delta),
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

/// The most states whose part of the width `--width` measures (two robust checks each).
const WIDTH_MAX_STATES: usize = 2000;

/// `augur pac --width W --prop 'P=? [ ... ]'`: the width `Pmax − Pmin` of the property on the
/// learned interval model, each state's part of it, and how many more traces (or departures
/// from which states) are predicted to bring it to at most W (docs/robust.md).
fn width_report(args: &PacArgs, target: f64, out: &mut dyn Write) -> Result<bool> {
    use augur_formats::smoothing::{SmoothedRows, Smoothing, SuccessorSet, UnobservedRule};
    use augur_learn::intervals::{
        departures_for_width, fewest_traces, learn_intervals, WidthState,
    };
    if !(target.is_finite() && target > 0.0 && target < 1.0) {
        bail!("--width {target}: give a width in (0, 1)");
    }
    let Some(text) = &args.prop else {
        bail!("--width needs the property: --prop 'P=? [ F \"unsafe\" ]'");
    };
    let path = args.model.as_ref().or(args.counts.as_ref());
    let Some(path) = path else {
        bail!("--width needs a model learned with `augur learn --intervals` (or --counts)");
    };
    let name = path.display().to_string();
    // The path formula: the text after `P=?`, `Pmin=?` or `Pmax=?`.
    let body = text
        .find('[')
        .filter(|&i| matches!(text[..i].trim(), "P=?" | "Pmin=?" | "Pmax=?"))
        .map(|i| &text[i..]);
    let Some(body) = body else {
        bail!(
            "--prop `{text}`: --width takes a probability query, `P=? [ ... ]` (or Pmin=?, Pmax=?)"
        );
    };
    // Syntax errors located in the property as written.
    let diag = |e: augur_check::CheckError| anyhow::Error::new(e.diagnostic());
    augur_check::Properties::new()
        .add("--prop", text)
        .map_err(diag)?;
    // The interval model, its counts, state names and the level of each entry.
    let (model, counts, names, confidence, entry_delta) = if args.counts.is_some() {
        let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read"))?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let keyed = KeyedCounts::from_json(text, path)?;
        keyed.check().map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let opts = LearnOptions {
            order: keyed.order,
            ..LearnOptions::default()
        };
        let mut models =
            learn_from_counts(&[keyed], None, &opts).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let mut m = models.remove(0);
        let confidence = args
            .confidence
            .unwrap_or(crate::learn_cmd::DEFAULT_CONFIDENCE);
        m.learn_intervals(confidence)?;
        let entry_delta = m.intervals.as_ref().map_or(0.0, |iv| iv.entry_delta);
        let dtmc = m.to_dtmc(augur_learn::learn::MAX_LEARNED_TRANSITIONS)?;
        let names = m.state_names.clone();
        (
            augur_check::Model::from_dtmc(dtmc),
            m.counts,
            names,
            confidence,
            entry_delta,
        )
    } else {
        let model =
            augur_check::Model::load(path, &augur_check::LoadOptions::default()).map_err(diag)?;
        let file = std::fs::File::open(path).with_context(|| format!("{name}: cannot open"))?;
        let doc = augur_formats::json::read_json_document(std::io::BufReader::new(file), path)?;
        let learned = doc
            .metadata
            .as_ref()
            .and_then(|m| m.get("learned"))
            .and_then(|l| l.get("intervals"));
        let (Some(iv), true, Some(counts)) = (learned, model.dtmc().is_interval(), doc.counts)
        else {
            bail!(
                "{name}: --width needs a model learned with `augur learn --intervals` (its \
                 intervals, counts and confidence), or keyed counts (--counts)"
            );
        };
        let confidence = iv["confidence"].as_f64().unwrap_or(0.0);
        let entry_delta = iv["entry_delta"].as_f64().unwrap_or(0.0);
        if !(entry_delta > 0.0 && entry_delta < 1.0) {
            bail!("{name}: metadata.learned.intervals.entry_delta is not in (0, 1)");
        }
        let counts: CountsJson =
            serde_json::from_value(counts).map_err(|e| anyhow::anyhow!("{name}: counts: {e}"))?;
        let counts = TransitionCounts::from_json_within(&counts, augur_check::DEFAULT_MAX_STATES)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let n = model.dtmc().num_states();
        if counts.num_states() != n {
            bail!(
                "{name}: the counts have {} states, the model {n}",
                counts.num_states()
            );
        }
        let names = crate::check_cmd::learned_state_names(path, n)
            .unwrap_or_else(|| (0..n).map(|i| format!("s{i}")).collect());
        (model, counts, names, confidence, entry_delta)
    };
    let dtmc = model.dtmc();
    let Some(iv) = dtmc.intervals.as_deref() else {
        bail!("{name}: not an interval model");
    };
    let props =
        augur_check::Properties::parse_file("--prop", &format!("Pmin=? {body}\nPmax=? {body}\n"))
            .map_err(diag)?;
    // [Pmin, Pmax] of a model (with several initial states, the extremes over them).
    let range = |m: &augur_check::Model| -> Result<(f64, f64)> {
        let compiled = props
            .compile(m, &augur_check::Constants::default())
            .map_err(diag)?;
        let mut session = augur_check::CheckSession::new(m, augur_check::CheckOptions::default());
        let mut v = [0.0; 2];
        for (k, r) in session.check_all(&compiled).into_iter().enumerate() {
            let r = r.map_err(diag)?;
            let b = crate::check_cmd::confidence_bound(&r, confidence.clamp(0.01, 0.99))
                .ok_or_else(|| anyhow::anyhow!("--prop `{text}`: not a numeric query"))?;
            v[k] = b.value;
        }
        Ok((v[0], v[1]))
    };
    let (pmin, pmax) = range(&model)?;
    let current = (pmax - pmin).max(0.0);
    // Each estimated row's part: the width minus the width with the row fixed.
    let estimated: Vec<usize> = (0..dtmc.num_states())
        .filter(|&s| dtmc.row_range(s).len() >= 2)
        .collect();
    if estimated.len() > WIDTH_MAX_STATES {
        bail!(
            "{name}: --width measures each state's part of the width with two robust checks; \
             the model has {} estimated rows, more than {WIDTH_MAX_STATES}",
            estimated.len()
        );
    }
    let traces = counts.traces().max(1) as f64;
    let mut states = Vec::with_capacity(estimated.len());
    for &s in &estimated {
        let r = dtmc.row_range(s);
        let targets = &dtmc.matrix.indices()[r.clone()];
        let n = counts.row_total(s as u32);
        let (mut lo, mut hi) = (iv.lo.clone(), iv.hi.clone());
        for (k, &t) in r.clone().zip(targets) {
            let p = if n == 0 {
                1.0 / targets.len() as f64
            } else {
                counts.count(s as u32, t) as f64 / n as f64
            };
            lo[k] = p;
            hi[k] = p;
        }
        let widest = r
            .clone()
            .max_by(|&a, &b| (iv.hi[a] - iv.lo[a]).total_cmp(&(iv.hi[b] - iv.lo[b])))
            .map_or(0, |k| counts.count(s as u32, dtmc.matrix.indices()[k]));
        let fixed = augur_dtmc::Dtmc::from_interval_bounds(dtmc.clone(), lo, hi)
            .map_err(|p| anyhow::anyhow!("{name}: {}", p.message(&|x| x.to_string())))?;
        let (a, b) = range(&augur_check::Model::from_dtmc(fixed))?;
        states.push(WidthState {
            state: s as u32,
            departures: n,
            per_trace: n as f64 / traces,
            contribution: (current - (b - a)).max(0.0),
            widest_count: widest,
            successors: targets.len(),
        });
    }
    const LIMIT: u64 = 1 << 40;
    let holds = current <= target;
    // More traces like these: every count grows by the factor 1 + t/traces (the frequencies
    // kept); the intervals are learned again from those counts (the same rows and valid
    // successors, so the same K and level) and the width checked.
    let n = dtmc.num_states();
    let rule = Smoothing {
        alpha: 0.0,
        unobserved: UnobservedRule::Uniform,
        successor_sets: (0..n)
            .map(|s| SuccessorSet::List(dtmc.matrix.indices()[dtmc.row_range(s)].to_vec()))
            .collect(),
        successors: (0..n as u32).collect(),
    };
    let observed = counts.to_json().transitions;
    // The width after `more[s]` more departures from each state s (frequencies kept; a state
    // never left, uniform over its successors).
    let width_with = |more: &dyn Fn(usize) -> f64| -> Result<f64> {
        let mut scaled: Vec<(u32, u32, u64)> = Vec::with_capacity(observed.len());
        for &(a, b, c) in &observed {
            let n_a = counts.row_total(a).max(1) as f64;
            let f = 1.0 + more(a as usize) / n_a;
            scaled.push((a, b, (c as f64 * f).round().min(1e18) as u64));
        }
        for s in 0..n {
            let m = more(s);
            if counts.row_total(s as u32) == 0 && m > 0.0 {
                let targets = &dtmc.matrix.indices()[dtmc.row_range(s)];
                let each = (m / targets.len() as f64).round().min(1e18) as u64;
                scaled.extend(targets.iter().map(|&t| (s as u32, t, each)));
            }
        }
        let rows = SmoothedRows::new(n, rule.clone(), &scaled)
            .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let iv = learn_intervals(
            &rows,
            confidence,
            augur_learn::learn::MAX_LEARNED_TRANSITIONS,
        )?;
        let (a, b) = range(&augur_check::Model::from_dtmc(iv.to_dtmc(dtmc.clone())?))?;
        Ok((b - a).max(0.0))
    };
    let more_traces = if holds {
        Some(0)
    } else {
        fewest_traces(target, LIMIT, 0.01, |t| {
            width_with(&|s| counts.row_total(s as u32) as f64 * t as f64 / traces)
        })?
    };
    // The targeted departures (from the parts, an additive estimate), kept only when the
    // intervals learned again with them are narrow enough.
    let mut targeted = departures_for_width(current, target, &states, entry_delta, LIMIT);
    if let Some(m) = &targeted {
        let mut by_state = vec![0f64; n];
        for (s, &k) in states.iter().zip(m) {
            by_state[s.state as usize] = k as f64;
        }
        if width_with(&|s| by_state[s])? > target {
            targeted = None;
        }
    }
    let mut shown: Vec<usize> = (0..states.len())
        .filter(|&i| states[i].contribution > 0.0)
        .collect();
    shown.sort_by(|&a, &b| states[b].contribution.total_cmp(&states[a].contribution));
    if args.json {
        let per_state: Vec<_> = shown
            .iter()
            .map(|&i| {
                let s = &states[i];
                json!({
                    "state": s.state,
                    "name": names.get(s.state as usize),
                    "departures": s.departures,
                    "per_trace": s.per_trace,
                    "contribution": s.contribution,
                    "more_with_traces": more_traces.map(|t| (t as f64 * s.per_trace).round() as u64),
                    "more_targeted": targeted.as_ref().map(|m| m[i]),
                })
            })
            .collect();
        let v = json!({
            "property": text,
            "pmin": pmin,
            "pmax": pmax,
            "width": current,
            "target": target,
            "holds": holds,
            "confidence": confidence,
            "entry_delta": entry_delta,
            "traces": counts.traces(),
            "more_traces": more_traces,
            "states": per_state,
            "estimate": "the intervals learned again from the counts grown by the advice, their frequencies kept; the parts of the width (each row fixed in turn) decide the targeted departures",
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(holds);
    }
    let pct = crate::learn_cmd::percent(confidence);
    let shown_target = Approx(target);
    writeln!(
        out,
        "{name}: Pmax − Pmin of {body} is {:.4} (Pmin {:.4}, Pmax {:.4}, {pct} confidence, {} traces); target {shown_target}",
        current, pmin, pmax, counts.traces()
    )?;
    if holds {
        writeln!(out, "the width is already at most {shown_target}")?;
        return Ok(true);
    }
    // The table: the states with a part of at least 0.1% of the width, 20 at most (--all:
    // every state with a part; --json lists them all).
    let listed = shown.len();
    if !args.all {
        shown.retain(|&i| states[i].contribution >= 1e-3 * current);
        shown.truncate(20);
    }
    if !shown.is_empty() {
        let mut t = crate::table::new(
            &[
                "state",
                "departures",
                "per trace",
                "part of width",
                "more (traces)",
                "more (targeted)",
            ],
            &[1, 2, 3, 4, 5],
        );
        for &i in &shown {
            let s = &states[i];
            t.add_row(vec![
                names
                    .get(s.state as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("s{}", s.state)),
                s.departures.to_string(),
                format!("{:.2}", s.per_trace),
                format!("{:.4}", s.contribution),
                more_traces.map_or("-".into(), |t| {
                    ((t as f64 * s.per_trace).round() as u64).to_string()
                }),
                targeted.as_ref().map_or("-".into(), |m| m[i].to_string()),
            ]);
        }
        write!(out, "{}", crate::table::render(&t, "  "))?;
    }
    if shown.len() < listed {
        writeln!(
            out,
            "  ({} more states with a smaller part of the width; --all lists them)",
            listed - shown.len()
        )?;
    }
    match more_traces {
        Some(t) => writeln!(
            out,
            "about {t} more traces like these are predicted to bring the width to at most {shown_target}{}",
            if targeted.is_some() {
                " (or the targeted departures above, from traces started in those states)"
            } else {
                ""
            }
        )?,
        None if targeted.is_some() => writeln!(
            out,
            "more traces like these are not predicted to bring the width to {shown_target}: observe the states above directly (the targeted departures)"
        )?,
        None => writeln!(
            out,
            "neither more traces like these nor the targeted departures are predicted to bring the width to {shown_target} (a transition never observed keeps an interval that more data only narrows; see docs/robust.md)"
        )?,
    }
    writeln!(
        out,
        "note: an estimate: the intervals learned again from the counts grown by the advice, their frequencies kept (more traces: every count by 1 + t/traces); the parts of the width (each row fixed in turn) decide the targeted departures"
    )?;
    Ok(false)
}

/// The JSON of `augur pac MODEL --param-box --json` (written through `serde_json::Value`, so
/// every object's keys come out sorted, as the other reports' do).
#[derive(serde::Serialize)]
struct ParamBoxReport<'a> {
    confidence: f64,
    entry_delta: f64,
    graph_preserving: bool,
    param: &'a str,
    pairs: u64,
    region: &'a str,
    rows: &'a [augur_learn::parametric::RowBox],
}

/// `augur pac MODEL --param-box`: the confidence box of each symbolic row of a model learned
/// with `augur learn --parametric` (augur_learn::parametric), and the options that check the
/// model over it.
fn param_box(args: &PacArgs, out: &mut dyn Write) -> Result<bool> {
    use augur_learn::parametric::{confidence_boxes, recorded_rows, region_options};
    #[derive(serde::Deserialize)]
    struct Learned {
        metadata: Option<serde_json::Value>,
    }
    let Some(path) = &args.model else {
        bail!("--param-box needs a model learned with `augur learn --parametric STATE`");
    };
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("{name}: cannot read"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let doc: Learned = parse_json(text, path)?;
    let Some(rows) = recorded_rows(doc.metadata.as_ref()) else {
        bail!(
            "{name}: no symbolic rows (metadata.learned.parametric): learn the model with `augur learn --parametric STATE[,STATE...]`"
        );
    };
    let confidence = args
        .confidence
        .unwrap_or(crate::learn_cmd::DEFAULT_CONFIDENCE);
    let (boxes, pairs, entry_delta) = confidence_boxes(&rows, confidence)?;
    let (params, region) = region_options(&boxes);
    let preserving = boxes.iter().all(|b| b.graph_preserving());
    if args.json {
        let report = ParamBoxReport {
            confidence,
            entry_delta,
            graph_preserving: preserving,
            param: &params,
            pairs,
            region: &region,
            rows: &boxes,
        };
        let v = serde_json::to_value(&report)?;
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(preserving);
    }
    let pct = crate::learn_cmd::percent(confidence);
    writeln!(
        out,
        "{name}: the rows kept symbolic lie in these intervals simultaneously with {pct} confidence ({pairs} estimated entries, each at level {entry_delta:.3e}):"
    )?;
    let mut t = crate::table::new(
        &[
            "state",
            "successor",
            "parameter",
            "count",
            "estimate",
            "low",
            "high",
        ],
        &[3, 4, 5, 6],
    );
    for b in &boxes {
        for e in &b.entries {
            t.add_row(vec![
                format!("{} ({} departures)", b.state, b.departures),
                e.successor.clone(),
                e.parameter
                    .clone()
                    .unwrap_or_else(|| "1 minus the others".into()),
                e.count.to_string(),
                format!("{:.4}", e.estimate),
                format!("{:.4}", e.lo),
                format!("{:.4}", e.hi),
            ]);
        }
    }
    write!(out, "{}", crate::table::render(&t, "  "))?;
    writeln!(out, "check the model over the box:")?;
    writeln!(
        out,
        "  augur check {name} --prop 'P<=B [ ... ]' --param '{params}' --region '{region}'"
    )?;
    writeln!(
        out,
        "  (--refine 0.95 splits it; `P=? [ ... ]` with --optimize min|max gives the range of the answer over it)"
    )?;
    if !preserving {
        writeln!(
            out,
            "warning: in some row the parameters' upper ends sum to 1 or more (or a lower end is 0): a corner of the box has a transition at 0, and `check` refuses a region where the chain's graph changes; more departures from that state narrow the box"
        )?;
    }
    Ok(preserving)
}
