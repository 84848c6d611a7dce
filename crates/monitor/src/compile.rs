//! `monitor compile`: check a property in every state of one model per category (plus a
//! fallback) and store the tables a running agent needs, so that it needs no solver.
//!
//! Per table: the property's value with sound bounds, the horizon curve `P(φ U≤h ψ)` for
//! `h = 1..H`, the expected steps to the target, the most probable path from every state to the
//! target, and (learned models) the learning status of every state. All checking goes through
//! the `checker` module.

use crate::checker::{self, Checker, LoadedModel, MonitorProperty};
use crate::error::{MonitorError, Result};
use augur_abstraction::Abstraction;
use augur_check::{CheckOptions, LoadOptions, Method, Model};
use augur_dtmc::Dtmc;
use augur_expr::Value;
use augur_gate::classifier::Classifier;
use augur_gate::dtr::{
    DataExposure, Predicates, Prov, Reversibility, RiskLevel, SafetyState, ToolEscalation,
    NUM_CHAIN_STATES, NUM_DTRP_STATES, NUM_DTR_STATES,
};
use augur_gate::monitor::{
    EmbeddedFile, ExplanationTable, ExplanationsSection, IntervalSource, LearningStatus, Mapping,
    ModelInfo, Monitor, PacStatus, ProvenanceSection, RobustSection, RobustTable, Runtime,
    Sections, Table, FORMAT, VERSION,
};
use augur_learn::learn::{wilson_interval, TransitionCounts, WILSON_Z95};
use augur_learn::pac::{pac_report, PacBound};
use augur_pctl::{PathFormula, StateFormula};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::path::PathBuf;

/// Largest horizon curve accepted.
pub const MAX_HORIZON: u32 = 10_000;

/// Memory budget of one table's horizon curve: states × H entries at most (2^25 doubles,
/// 256 MiB while compiling, and as many numbers in the monitor file). A larger product is a
/// located error naming the horizon and the state count, before anything is allocated.
pub const MAX_CURVE_ENTRIES: u64 = 1 << 25;

/// What to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// The property: `P=? [ F ψ ]`, `P=? [ F<=k ψ ]`, `P=? [ φ U<=k ψ ]`, ...
    pub property: String,
    /// The horizon curve's length H (default: the property's bound, else 10).
    pub horizon: Option<u32>,
    /// How actions map to states (default: chosen from the models).
    pub mapping: Option<Mapping>,
    /// Classifier rules for `dtr` / `risk-level` (default: the built-in rule set).
    pub classifier: Option<Classifier>,
    /// The abstraction spec for `abstraction` (its text and file name).
    pub abstraction: Option<(String, String)>,
    /// `(ε, δ)` of the PAC status stored for learned models.
    pub pac: (f64, f64),
    /// How model files are loaded: the constants (also usable in the property, as with
    /// `augur check --const`), deadlock fixing, exact numbers, and the state, time and
    /// cancellation [`augur_check::Limits`].
    pub load: LoadOptions,
    /// How the tables are checked: the method (default: topological interval iteration —
    /// sound bounds, and every SCC of a monotone (d, t, r) chain solved in closed form —
    /// rather than `auto`'s exact elimination, whose rationals grow with learned
    /// probabilities), the precision and the time and cancellation limits.
    pub check: CheckOptions,
    /// Compile the `robust` section (`--robust`): tables of `Pmax` over interval models, on
    /// which sessions then decide.
    pub robust: Option<RobustOptions>,
    /// Compile the `explanations` section (`--explain`): the most probable continuation of
    /// every state, per horizon, for the reasons of decisions at `warn` and above.
    pub explanations: bool,
    /// Give a `risk-level` monitor the `provenance` section: sessions track where each call's
    /// destination and payload came from, and the risk level of `(d, t, r, p)` (rule 14
    /// included) picks the chain's state (the built-in gateway and Claude Code monitors,
    /// `augur_gate::builtin`). A 180-state `dtr` model has the section anyway.
    pub provenance: bool,
}

/// The confidence of intervals learned at compile time when none is given (as for
/// `augur learn --intervals`).
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// What `monitor compile --robust` asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RobustOptions {
    /// `--confidence`: the level at which intervals are learned from a model's counts
    /// (default [`DEFAULT_CONFIDENCE`]). An interval model keeps its own intervals: a
    /// confidence given for it must be the one it records.
    pub confidence: Option<f64>,
}

impl CompileOptions {
    /// Options for a property, everything else by default.
    pub fn new(property: &str) -> CompileOptions {
        CompileOptions {
            property: property.to_string(),
            horizon: None,
            mapping: None,
            classifier: None,
            abstraction: None,
            pac: (0.1, 0.05),
            load: LoadOptions::default(),
            check: CheckOptions {
                method: Method::Topological,
                ..CheckOptions::default()
            },
            robust: None,
            explanations: false,
            provenance: false,
        }
    }

    /// The same options with `limits` for loading and checking.
    pub fn with_limits(mut self, limits: augur_check::Limits) -> CompileOptions {
        self.load.limits = limits.clone();
        self.check.limits = limits;
        self
    }
}

/// A model to compile, in memory.
pub struct Source {
    /// The model (a PRISM model's constants and formulas are usable in the property).
    pub model: Model,
    /// A name for messages and the monitor file.
    pub name: String,
    /// SHA-256 of its source bytes (or of its contents for in-memory models).
    pub sha256: String,
    /// Its category (`None`: the fallback).
    pub category: Option<String>,
    /// Transition counts, when learned.
    pub counts: Option<TransitionCounts>,
    /// For an interval model: the confidence its intervals hold with and the method that
    /// learned them, as its metadata records (`metadata.learned.intervals`).
    pub interval_confidence: Option<(f64, String)>,
}

impl Source {
    /// A fallback model without counts; the hash is of its transitions.
    pub fn new(dtmc: Dtmc, name: &str) -> Source {
        Source::from_model(Model::from_dtmc(dtmc).named(name), name)
    }

    /// A fallback model without counts, from a loaded model; the hash is of its transitions.
    pub fn from_model(model: Model, name: &str) -> Source {
        let sha256 = dtmc_hash(model.dtmc());
        Source {
            model,
            name: name.to_string(),
            sha256,
            category: None,
            counts: None,
            interval_confidence: None,
        }
    }
}

/// A hash of a chain's contents (for models that were never a file).
pub fn dtmc_hash(dtmc: &Dtmc) -> String {
    let mut bytes = Vec::new();
    for (r, row) in dtmc.matrix.outer_iterator().enumerate() {
        for (c, &p) in row.iter() {
            bytes.extend_from_slice(&(r as u64).to_le_bytes());
            bytes.extend_from_slice(&(c as u64).to_le_bytes());
            bytes.extend_from_slice(&p.to_le_bytes());
        }
    }
    for (name, set) in &dtmc.labels {
        bytes.extend_from_slice(name.as_bytes());
        for s in set.ones() {
            bytes.extend_from_slice(&(s as u64).to_le_bytes());
        }
    }
    checker::sha256_hex([bytes.as_slice()])
}

/// A model file given on the command line: `PATH` or `CATEGORY=PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelArg {
    /// The category given explicitly.
    pub category: Option<String>,
    /// The model file.
    pub path: PathBuf,
}

impl ModelArg {
    /// Parse `PATH` or `CATEGORY=PATH`.
    pub fn parse(s: &str) -> ModelArg {
        match s.split_once('=') {
            Some((c, p)) if !c.is_empty() && !c.contains('/') && !c.contains('\\') => ModelArg {
                category: Some(c.to_string()),
                path: PathBuf::from(p),
            },
            _ => ModelArg {
                category: None,
                path: PathBuf::from(s),
            },
        }
    }
}

/// Load model files and compile them. A model's category is the one given (`CAT=PATH`),
/// else the learner's (`augur learn --by-category` writes it in the model's metadata), else
/// none (the fallback).
///
/// The property is parsed before any model is loaded (a syntax error comes before a long
/// build); models are loaded under `opts.load` (constants, limits).
pub fn compile(models: &[ModelArg], opts: &CompileOptions) -> Result<Monitor> {
    checker::parse_property(&opts.property)?;
    let mut sources = Vec::new();
    for m in models {
        let LoadedModel {
            model,
            counts,
            metadata,
            sha256,
        } = checker::load_model(&m.path, &opts.load, opts.robust.is_some())?;
        let learned_category = metadata
            .as_ref()
            .and_then(|md| md.pointer("/learned/category"))
            .and_then(|c| c.as_str())
            .map(str::to_string);
        let recorded = metadata
            .as_ref()
            .and_then(|md| md.pointer("/learned/intervals"));
        let interval_confidence = recorded.and_then(|iv| {
            let c = iv.get("confidence")?.as_f64()?;
            let method = iv.get("method").and_then(|m| m.as_str()).unwrap_or("");
            Some((c, method.to_string()))
        });
        sources.push(Source {
            model,
            name: m.path.display().to_string(),
            sha256,
            category: m.category.clone().or(learned_category),
            counts,
            interval_confidence,
        });
    }
    compile_dtmcs(sources, opts)
}

/// The parts of the property the monitor file records, from its text as parsed: the canonical
/// property, its target `ψ` and the `φ` of `φ U ψ`.
struct Printed {
    text: String,
    target: String,
    stay: Option<String>,
}

fn printed(p: &augur_pctl::Property) -> Result<Printed> {
    let (stay, target) = match &p.formula {
        StateFormula::Prob { path, .. } => match path.as_ref() {
            PathFormula::Eventually(t, _) => (None, t),
            PathFormula::Until(s, t, _) => (Some(s), t),
            _ => return Err(MonitorError::Property(checker::PATH_QUERY.to_string())),
        },
        _ => return Err(MonitorError::Property(checker::PATH_QUERY.to_string())),
    };
    Ok(Printed {
        text: p.to_string(),
        target: target.to_string(),
        stay: stay.map(|s| s.to_string()),
    })
}

fn risk_label_states(dtmc: &Dtmc) -> Option<[u32; 5]> {
    let mut out = [0u32; 5];
    for level in RiskLevel::ALL {
        let hits: Vec<_> = dtmc
            .labels
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(level.as_str()))
            .collect();
        let [(_, set)] = hits.as_slice() else {
            return None;
        };
        let mut ones = set.ones();
        let (Some(s), None) = (ones.next(), ones.next()) else {
            return None;
        };
        out[level.index()] = s as u32;
    }
    Some(out)
}

/// The `(d, t, r)` of every model state, from valuations `d`, `t`, `r` (level indices or
/// names) or from the threshold predicates of `models/safetydrift/spec.toml`.
fn dtr_of_states(dtmc: &Dtmc) -> std::result::Result<Vec<SafetyState>, String> {
    let Some(v) = &dtmc.valuations else {
        return Err("the model has no state valuations (variables d, t, r, or the predicates of models/safetydrift/spec.toml)".into());
    };
    let col = |name: &str| v.names.iter().position(|n| n == name);
    let n = dtmc.num_states();
    let row = |s: usize| {
        v.row(s)
            .ok_or_else(|| format!("the valuations do not cover state {s}"))
    };
    if let (Some(d), Some(t), Some(r)) = (col("d"), col("t"), col("r")) {
        let p = col("p");
        // The chain's predicates (issue 41): `i` and `u` columns, and p = 3 for DELEGATED.
        let (i, u) = (col("i"), col("u"));
        let chain = i.is_some() && u.is_some();
        let mut out = Vec::with_capacity(n);
        for s in 0..n {
            let x = row(s)?;
            let idx = |v: &Value| match v {
                Value::Int(i) => usize::try_from(*i).ok(),
                _ => None,
            };
            let flag = |c: Option<usize>| match c.map(|c| idx(&x[c])) {
                None => Some(false),
                Some(Some(0)) => Some(false),
                Some(Some(1)) => Some(true),
                Some(_) => None,
            };
            let st = (|| {
                let (prov, delegated) = match p.map(|p| idx(&x[p])) {
                    Some(Some(3)) if chain => (Prov::User, true),
                    Some(v) => (Prov::from_index(v?)?, false),
                    None => (Prov::None, false),
                };
                Some(
                    SafetyState::new(
                        DataExposure::from_index(idx(&x[d])?)?,
                        ToolEscalation::from_index(idx(&x[t])?)?,
                        Reversibility::from_index(idx(&x[r])?)?,
                    )
                    .with_p(prov)
                    .with_x(Predicates {
                        delegated,
                        signal: flag(i)?,
                        unrequested: flag(u)?,
                    }),
                )
            })()
            .ok_or_else(|| format!("state {s}: d, t, r (and p, i, u) are not level indices"))?;
            out.push(st);
        }
        return Ok(out);
    }
    let preds = [
        "d_public",
        "d_internal",
        "d_sensitive",
        "d_credentials",
        "t_file_write",
        "t_code_exec",
        "t_network",
        "r_partial",
        "r_irreversible",
    ];
    let cols: Option<Vec<usize>> = preds.iter().map(|p| col(p)).collect();
    let Some(cols) = cols else {
        return Err("the model's valuations have neither variables d, t, r nor the predicates d_public .. r_irreversible of models/safetydrift/spec.toml".into());
    };
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        let x = row(s)?;
        let bit = |i: usize| matches!(x[cols[i]], Value::Bool(true));
        let d = (0..4).filter(|&i| bit(i)).count();
        let t = (4..7).filter(|&i| bit(i)).count();
        let r = if bit(8) {
            2
        } else if bit(7) {
            1
        } else {
            0
        };
        out.push(SafetyState::new(
            DataExposure::from_index(d).unwrap_or(DataExposure::None),
            ToolEscalation::from_index(t).unwrap_or(ToolEscalation::ReadOnly),
            Reversibility::from_index(r).unwrap_or(Reversibility::FullyReversible),
        ));
    }
    Ok(out)
}

fn state_names(dtmc: &Dtmc) -> Vec<String> {
    let n = dtmc.num_states();
    let mut names: Vec<Option<String>> = vec![None; n];
    // A label held by exactly one state names it; else the valuation; else `s<i>`.
    for (name, set) in &dtmc.labels {
        if name == "init" || set.count_ones(..) != 1 {
            continue;
        }
        if let Some(s) = set.ones().next() {
            if s < n && names[s].is_none() {
                names[s] = Some(name.clone());
            }
        }
    }
    if let Some(v) = &dtmc.valuations {
        let k = v.names.len();
        for (s, slot) in names.iter_mut().enumerate() {
            if slot.is_none() && k > 0 {
                let parts: Vec<String> = (0..k)
                    .map(|i| match v.get(s, i) {
                        Some(x) => format!("{}={x}", v.names[i]),
                        None => format!("{}=?", v.names[i]),
                    })
                    .collect();
                *slot = Some(parts.join(","));
            }
        }
    }
    names
        .into_iter()
        .enumerate()
        .map(|(s, n)| n.unwrap_or_else(|| format!("s{s}")))
        .collect()
}

#[derive(PartialEq)]
struct Entry(f64, u32);
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Max-heap on probability.
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
    }
}

/// The most probable path from every state to `target`, moving only through `stay` states
/// (all states for F): Dijkstra on the reversed graph with the product of probabilities.
fn most_probable_paths(
    dtmc: &Dtmc,
    stay: Option<&fixedbitset::FixedBitSet>,
    target: &fixedbitset::FixedBitSet,
) -> (Vec<Option<u32>>, Vec<f64>) {
    let n = dtmc.num_states();
    let t = dtmc.matrix.transpose_view().to_csr();
    let mut best = vec![0.0f64; n];
    let mut next: Vec<Option<u32>> = vec![None; n];
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    for s in target.ones().filter(|&s| s < n) {
        best[s] = 1.0;
        heap.push(Entry(1.0, s as u32));
    }
    while let Some(Entry(p, v)) = heap.pop() {
        let v = v as usize;
        if done[v] {
            continue;
        }
        done[v] = true;
        if let Some(row) = t.outer_view(v) {
            for (u, &q) in row.iter() {
                if target.contains(u) || done[u] || q <= 0.0 {
                    continue;
                }
                if stay.is_some_and(|st| !st.contains(u)) {
                    continue;
                }
                let cand = p * q;
                if cand > best[u] {
                    best[u] = cand;
                    next[u] = Some(v as u32);
                    heap.push(Entry(cand, u as u32));
                }
            }
        }
    }
    (next, best)
}

fn learning_status(
    counts: &TransitionCounts,
    n: usize,
    pac: (f64, f64),
) -> Option<Vec<LearningStatus>> {
    if counts.num_states() != n {
        return None;
    }
    let report = pac_report(counts, pac.0, pac.1, PacBound::ChenEtAl).ok()?;
    let mut out = Vec::with_capacity(n);
    for s in 0..n as u32 {
        let total = counts.row_total(s);
        let top = counts.row(s).map(|(_, c)| c).max().unwrap_or(0);
        let (lo, hi) = wilson_interval(top, total, WILSON_Z95);
        let p = &report.per_state[s as usize];
        let status = if p.determined {
            PacStatus::Determined
        } else if total == 0 {
            PacStatus::Unobserved
        } else if p.holds {
            PacStatus::Holds
        } else {
            PacStatus::Short
        };
        out.push(LearningStatus {
            observations: total,
            wilson: [lo, hi],
            pac: status,
            more_needed: p.more_needed,
        });
    }
    Some(out)
}

/// Compile in-memory models (see [`compile`]).
pub fn compile_dtmcs(sources: Vec<Source>, opts: &CompileOptions) -> Result<Monitor> {
    if sources.is_empty() {
        return Err(MonitorError::Model("no model to compile".into()));
    }
    let parsed = checker::parse_property(&opts.property)?;
    // The property resolved on every model (constants, labels and formulas may differ), with
    // the monitor's restrictions; its step bound must be the same on all.
    let mut props: Vec<MonitorProperty> = Vec::with_capacity(sources.len());
    for src in &sources {
        let p = checker::resolve_property(
            &opts.property,
            &src.model,
            &opts.load.constants,
            MAX_HORIZON,
        )?;
        if let Some(first) = props.first() {
            if first.bound != p.bound {
                let show = |b: Option<u32>| b.map_or("none".to_string(), |k| k.to_string());
                return Err(MonitorError::located(
                    p.resolved.source.location(p.bound_span),
                    format!(
                        "the step bound is {} on {} but {} on {}: a monitor has one horizon",
                        show(p.bound),
                        src.name,
                        show(first.bound),
                        sources[0].name
                    ),
                ));
            }
        }
        props.push(p);
    }
    let printed = printed(&parsed)?;
    let bound = props.first().and_then(|p| p.bound);
    let h = match opts.horizon.or(bound) {
        Some(h) if (1..=MAX_HORIZON).contains(&h) => h,
        Some(h) => {
            return Err(MonitorError::Property(format!(
                "horizon {h}: choose 1 to {MAX_HORIZON}"
            )))
        }
        None => 10,
    };
    // The horizon curves' memory budget (n × H doubles per table), checked before any is made.
    for (src, prop) in sources.iter().zip(&props) {
        let n = src.model.dtmc().num_states() as u64;
        if n * u64::from(h) > MAX_CURVE_ENTRIES {
            let location = match opts.horizon {
                Some(_) => augur_source::SourceFile::new("--horizon", h.to_string())
                    .location(augur_source::Span::new(0, h.to_string().len())),
                None => prop.resolved.source.location(prop.bound_span),
            };
            return Err(MonitorError::located(
                location,
                format!(
                    "the horizon curve of {} would hold {n} states × {h} horizons = {} numbers, over the budget of {MAX_CURVE_ENTRIES} (states × --horizon); choose --horizon {} or less, or a smaller abstraction",
                    src.name,
                    n * u64::from(h),
                    (MAX_CURVE_ENTRIES / n).max(1)
                ),
            ));
        }
    }
    // Categories: at most one table each, at most one fallback.
    for (i, s) in sources.iter().enumerate() {
        if let Some(j) = sources[..i].iter().position(|o| o.category == s.category) {
            return Err(MonitorError::Model(match &s.category {
                Some(c) => format!("{} and {} are both for category `{c}`", sources[j].name, s.name),
                None => format!("{} and {} are both fallback models (no category); give one a category with CATEGORY=PATH", sources[j].name, s.name),
            }));
        }
    }
    let abstraction = match &opts.abstraction {
        Some((text, file)) => {
            Some(Abstraction::parse(text, file).map_err(|e| MonitorError::input(e.diagnostic()))?)
        }
        None => None,
    };
    let mapping = match opts.mapping {
        Some(m) => m,
        None if abstraction.is_some() => Mapping::Abstraction,
        None => {
            let d = sources[0].model.dtmc();
            if risk_label_states(d).is_some() {
                Mapping::RiskLevel
            } else if [NUM_DTR_STATES, NUM_DTRP_STATES, NUM_CHAIN_STATES].contains(&d.num_states())
                && dtr_of_states(d).is_ok()
            {
                Mapping::Dtr
            } else {
                return Err(MonitorError::Model(format!(
                    "{}: cannot tell how actions map to its {} states: it is neither the risk-level chain (one state labelled each of safe, mild, elevated, critical, violated) nor a 60-state (d, t, r), 180-state (d, t, r, p) or 960-state chain (d, t, r, p, i, u) model; give --states and, for --states abstraction, --abstraction SPEC",
                    sources[0].name,
                    d.num_states()
                )));
            }
        }
    };
    if mapping == Mapping::Abstraction && abstraction.is_none() {
        return Err(MonitorError::Model(
            "--states abstraction needs the abstraction spec (--abstraction SPEC)".into(),
        ));
    }
    if opts.robust.is_none() {
        for src in &sources {
            src.model
                .require_point("the monitor's probability tables (compile it with --robust)")
                .map_err(checker::check_error)?;
        }
    }
    if let Some(c) = opts.robust.and_then(|r| r.confidence) {
        if !(c > 0.0 && c < 1.0) {
            return Err(MonitorError::Property(format!(
                "--confidence {c}: give a confidence in (0, 1), e.g. 0.95"
            )));
        }
    }
    let mut tables = Vec::with_capacity(sources.len());
    let mut robust = Vec::new();
    let mut explanations = Vec::new();
    for (src, prop) in sources.iter().zip(&props) {
        let (t, r, e) = compile_table(src, prop, h, mapping, abstraction.as_ref(), opts)?;
        tables.push(t);
        robust.extend(r);
        explanations.extend(e);
    }
    let classifier = match mapping {
        Mapping::Abstraction => None,
        _ => {
            let c = opts
                .classifier
                .clone()
                .unwrap_or_else(Classifier::default_rules);
            Some(c)
        }
    };
    let mut monitor = Monitor {
        format: FORMAT.into(),
        version: VERSION,
        property: printed.text,
        target: printed.target,
        stay: printed.stay,
        property_horizon: bound,
        horizon_max: h,
        mapping,
        classifier: classifier.as_ref().map(|c| EmbeddedFile {
            file: c.file().to_string(),
            text: c.source().to_string(),
            sha256: checker::sha256_hex([c.source().as_bytes()]),
            // A built-in rule set (or a copy of one) records its version: a later Augur
            // whose rules are newer calls this file stale.
            builtin: augur_gate::builtin::current(c.source()),
        }),
        abstraction: opts.abstraction.as_ref().map(|(text, file)| EmbeddedFile {
            file: file.clone(),
            text: text.clone(),
            sha256: checker::sha256_hex([text.as_bytes()]),
            builtin: None,
        }),
        pac: Some([opts.pac.0, opts.pac.1]),
        sections: Sections {
            provenance: if mapping == Mapping::Dtr
                && tables.iter().any(|t| t.map.len() == NUM_CHAIN_STATES)
            {
                Some(ProvenanceSection::with_predicates())
            } else {
                ((mapping == Mapping::Dtr && tables.iter().any(|t| t.map.len() == NUM_DTRP_STATES))
                    || (mapping == Mapping::RiskLevel && opts.provenance))
                    .then(ProvenanceSection::current)
            },
            robust: opts.robust.map(|r| RobustSection {
                confidence: r.confidence,
                tables: robust,
            }),
            explanations: opts.explanations.then_some(ExplanationsSection {
                tables: explanations,
            }),
        },
        tables,
        runtime: Runtime::default(),
    };
    monitor.prepare("<compiled monitor>", None)?;
    Ok(monitor)
}

/// The table of one model: the property's value in every state, the horizon curve, expected
/// steps, most probable paths to the target, and how the monitor's states map to the model's;
/// with the robust and explanation tables when asked for.
fn compile_table(
    src: &Source,
    prop: &MonitorProperty,
    h: u32,
    mapping: Mapping,
    abstraction: Option<&Abstraction>,
    opts: &CompileOptions,
) -> Result<(Table, Option<RobustTable>, Option<ExplanationTable>)> {
    // An interval model's point tables are of the resolution its file stores (see
    // `Dtmc::from_interval_bounds`): one chain inside the intervals.
    let point_model;
    let model = if src.model.dtmc().is_interval() {
        let mut d = src.model.dtmc().clone();
        d.intervals = None;
        point_model = Model::from_dtmc(d).named(src.name.clone());
        &point_model
    } else {
        &src.model
    };
    let dtmc = model.dtmc();
    let n = dtmc.num_states();
    let name = &src.name;
    let at = |e: MonitorError| match e {
        MonitorError::Check(m) => MonitorError::Check(format!("{name}: {m}")),
        e => e,
    };
    let mut checker = Checker::new(model, &opts.check, prop.resolved.source.clone());
    let span = prop.resolved.formula.span();
    let checked = checker.numbers(&prop.resolved.formula).map_err(at)?;
    let curve = checker
        .horizon_curve(prop.stay.as_ref(), &prop.target, span, h as usize)
        .map_err(at)?;
    let steps = checker.expected_steps(&prop.target, span).map_err(at)?;
    let target_set = checker.states(&prop.target).map_err(at)?;
    let stay_set = match &prop.stay {
        Some(s) => Some(checker.states(s).map_err(at)?),
        None => None,
    };
    let (path_next, path_probability) = most_probable_paths(dtmc, stay_set.as_ref(), &target_set);
    let map = state_map(mapping, dtmc, name, abstraction)?;
    let mut names = state_names(dtmc);
    match mapping {
        Mapping::Abstraction => {
            if let Some(a) = &abstraction {
                names = a.valid_states().iter().map(|&c| a.state_name(c)).collect();
            }
        }
        // A (d, t, r) state is named by its triple: CREDENTIALS·NETWORK·IRREVERSIBLE (with p,
        // and a chain state with its predicates: `…·DELEGATED·i·u`).
        Mapping::Dtr => {
            if let Ok(dtr) = dtr_of_states(dtmc) {
                names = dtr.iter().map(|s| s.chain_name()).collect();
            }
        }
        Mapping::RiskLevel => {}
    }
    let initial = match mapping {
        Mapping::Dtr => map[SafetyState::START.index()],
        Mapping::RiskLevel => map[RiskLevel::Safe.index()],
        Mapping::Abstraction => dtmc.initial.first().copied().unwrap_or(0),
    };
    let learning = src
        .counts
        .as_ref()
        .and_then(|c| learning_status(c, n, opts.pac));
    let clamp = |v: Vec<f64>| {
        v.into_iter()
            .map(|x| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) })
            .collect::<Vec<_>>()
    };
    let value = clamp(checked.values);
    let curve = clamp(curve);
    let path_probability = clamp(path_probability);
    let robust = match opts.robust {
        Some(r) => Some(robust_table(src, prop, h, r, opts, &value, &curve).map_err(at)?),
        None => None,
    };
    let explanations = opts.explanations.then(|| {
        let (next, probability) =
            bounded_most_probable_paths(dtmc, stay_set.as_ref(), &target_set, h);
        let (value_next, value_probability) = match prop.bound {
            Some(k) if k <= h => {
                let col = |v: &[f64]| -> Vec<f64> {
                    (0..n).map(|s| v[s * h as usize + k as usize - 1]).collect()
                };
                (
                    (0..n)
                        .map(|s| next[s * h as usize + k as usize - 1])
                        .collect(),
                    col(&probability),
                )
            }
            // The property's own bound is beyond the curve: its column, computed apart.
            Some(k) => bounded_column(dtmc, stay_set.as_ref(), &target_set, k),
            None => (path_next.clone(), path_probability.clone()),
        };
        ExplanationTable {
            value_next,
            value_probability: clamp(value_probability),
            next,
            probability: clamp(probability),
        }
    });
    let table = Table {
        category: src.category.clone(),
        model: ModelInfo {
            file: src.name.clone(),
            sha256: src.sha256.clone(),
            states: n,
            transitions: dtmc.num_transitions(),
        },
        state_names: names,
        initial,
        map,
        value,
        lower: clamp(checked.lower),
        upper: clamp(checked.upper),
        curve,
        expected_steps: steps
            .into_iter()
            .map(|x| x.is_finite().then_some(x))
            .collect(),
        path_next,
        path_probability,
        learning,
    };
    Ok((table, robust, explanations))
}

/// The robust table of one model: `Pmax` of the property and its curve over the model's
/// intervals (an interval model's own, or learned from its counts at the confidence asked),
/// never below the point values `value` and `curve` (the point chain is one resolution of the
/// intervals, so only rounding or the solver's precision could put it above).
fn robust_table(
    src: &Source,
    prop: &MonitorProperty,
    h: u32,
    r: RobustOptions,
    opts: &CompileOptions,
    value: &[f64],
    curve: &[f64],
) -> Result<RobustTable> {
    let name = &src.name;
    let learned_model;
    let (model, intervals, confidence, method) = if src.model.dtmc().is_interval() {
        let recorded = src.interval_confidence.clone();
        if let Some(c) = r.confidence {
            if recorded.as_ref().map(|x| x.0) != Some(c) {
                let has = match &recorded {
                    Some((rc, _)) => format!("hold with confidence {rc}"),
                    None => "are given without a confidence".to_string(),
                };
                return Err(MonitorError::Model(format!(
                    "{name} is an interval model whose intervals {has}: --confidence {c} cannot change them; learn them again (`augur learn --intervals --confidence {c}`) or compile the learned point model, whose counts give intervals at any confidence"
                )));
            }
        }
        let (c, m) = match recorded {
            Some((c, m)) => (Some(c), (!m.is_empty()).then_some(m)),
            None => (None, None),
        };
        (&src.model, IntervalSource::Model, c, m)
    } else {
        let counts = src.counts.as_ref().ok_or_else(|| {
            MonitorError::Model(format!(
                "{name}: --robust needs intervals: a learned model with its transition counts (as `augur learn` writes it), or an interval model (`augur learn --intervals`, or lo/hi in the model file)"
            ))
        })?;
        let c = r.confidence.unwrap_or(DEFAULT_CONFIDENCE);
        let d = intervals_from_counts(src.model.dtmc(), counts, c)
            .map_err(|m| MonitorError::Model(format!("{name}: intervals from its counts: {m}")))?;
        learned_model = Model::from_dtmc(d).named(name.clone());
        (
            &learned_model,
            IntervalSource::Learned,
            Some(c),
            Some(augur_learn::intervals::INTERVAL_METHOD.to_string()),
        )
    };
    let mut checker = Checker::new(model, &opts.check, prop.resolved.source.clone());
    let formula = match &prop.resolved.formula {
        augur_pctl::ResolvedFormula::Prob {
            threshold,
            path,
            span,
            ..
        } => augur_pctl::ResolvedFormula::Prob {
            opt: Some(augur_pctl::Optimum::Max),
            threshold: threshold.clone(),
            path: path.clone(),
            span: *span,
        },
        f => f.clone(),
    };
    let checked = checker.numbers(&formula)?;
    let target = checker.states(&prop.target)?;
    let stay = match &prop.stay {
        Some(s) => Some(checker.states(s)?),
        None => None,
    };
    let rcurve = checker.robust_curve(stay.as_ref(), &target, h as usize)?;
    let up = |v: Vec<f64>, point: &[f64]| -> Vec<f64> {
        v.into_iter()
            .zip(point)
            .map(|(x, &p)| {
                let x = if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) };
                x.max(p)
            })
            .collect()
    };
    let rvalue = up(checked.values, value);
    let upper = up(checked.upper, &rvalue);
    Ok(RobustTable {
        intervals,
        confidence,
        method,
        value: rvalue,
        upper,
        curve: up(rcurve, curve),
    })
}

/// The interval model of a learned chain's counts at `confidence`
/// ([`augur_learn::intervals::learn_intervals`]: every interval holds simultaneously with
/// that probability). A row's valid successors are the point chain's transitions from it
/// (a learned chain smoothed with α > 0 has an entry for every valid successor); every interval
/// is widened, where needed, to hold the point chain's probability (a superset of a confidence
/// region is one too), so that the point chain is one resolution and `Pmax` is never below
/// its value.
pub fn intervals_from_counts(
    dtmc: &Dtmc,
    counts: &TransitionCounts,
    confidence: f64,
) -> std::result::Result<Dtmc, String> {
    use augur_formats::smoothing::{SmoothedRows, Smoothing, SuccessorSet, UnobservedRule};
    let n = dtmc.num_states();
    if counts.num_states() != n {
        return Err(format!(
            "the counts are of {} states, the model has {n}",
            counts.num_states()
        ));
    }
    let mut sets: Vec<SuccessorSet> = Vec::new();
    let mut index: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
    let mut successors = Vec::with_capacity(n);
    for s in 0..n {
        let row: Vec<u32> = dtmc.matrix.indices()[dtmc.row_range(s)].to_vec();
        let next = sets.len() as u32;
        let i = *index.entry(row.clone()).or_insert_with(|| {
            sets.push(SuccessorSet::List(row));
            next
        });
        successors.push(i);
    }
    let observed: Vec<(u32, u32, u64)> = (0..n as u32)
        .flat_map(|s| counts.row(s).map(move |(t, c)| (s, t, c)))
        .filter(|t| t.2 > 0)
        .collect();
    for &(s, t, _) in &observed {
        if dtmc.transition_index(s, t).is_none() {
            return Err(format!(
                "the counts have transition {s} -> {t}, which the model does not have (a model learned with --alpha 0 lists only the transitions it observed: learn it with --alpha > 0, or with --intervals)"
            ));
        }
    }
    let rule = Smoothing {
        alpha: 0.0,
        unobserved: UnobservedRule::Uniform,
        successor_sets: sets,
        successors,
    };
    let rows = SmoothedRows::new(n, rule, &observed).map_err(|e| e.to_string())?;
    let mut iv = augur_learn::intervals::learn_intervals(
        &rows,
        confidence,
        augur_learn::learn::MAX_LEARNED_TRANSITIONS.max(dtmc.num_transitions()),
    )
    .map_err(|e| e.to_string())?;
    for s in 0..n {
        for k in iv.indptr[s] as usize..iv.indptr[s + 1] as usize {
            let p = dtmc
                .transition_index(s as u32, iv.targets[k])
                .map_or(0.0, |i| dtmc.matrix.data()[i]);
            iv.lo[k] = iv.lo[k].min(p);
            iv.hi[k] = iv.hi[k].max(p);
        }
    }
    let shell = Dtmc {
        matrix: augur_dtmc::Matrix::new((n, n), vec![0; n + 1], Vec::new(), Vec::new()),
        initial: dtmc.initial.clone(),
        labels: dtmc.labels.clone(),
        rewards: Vec::new(),
        valuations: dtmc.valuations.clone(),
        exact: None,
        intervals: None,
    };
    iv.to_dtmc(shell).map_err(|e| e.to_string())
}

/// The most probable path to `target` of at most `h` steps through `stay` states (all states
/// for F), from every state and for `h = 1..=max_h`, state-major (`[s·max_h + h − 1]`): its
/// next state and its probability. `best_h(s) = max_t P(s, t)·best_{h−1}(t)` from
/// `best_0 = [s ∈ target]` (1 at a target state, 0 outside `stay`); ties go to the
/// smaller state.
fn bounded_most_probable_paths(
    dtmc: &Dtmc,
    stay: Option<&fixedbitset::FixedBitSet>,
    target: &fixedbitset::FixedBitSet,
    max_h: u32,
) -> (Vec<Option<u32>>, Vec<f64>) {
    let n = dtmc.num_states();
    let hh = max_h as usize;
    let mut next = vec![None; n * hh];
    let mut prob = vec![0.0; n * hh];
    let mut prev: Vec<f64> = (0..n)
        .map(|s| if target.contains(s) { 1.0 } else { 0.0 })
        .collect();
    let mut cur = prev.clone();
    for h in 1..=hh {
        for s in 0..n {
            let (p, nx) = best_step(dtmc, stay, target, &prev, s);
            cur[s] = p;
            next[s * hh + h - 1] = nx;
            prob[s * hh + h - 1] = p;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (next, prob)
}

/// One step of [`bounded_most_probable_paths`] from state `s`.
fn best_step(
    dtmc: &Dtmc,
    stay: Option<&fixedbitset::FixedBitSet>,
    target: &fixedbitset::FixedBitSet,
    prev: &[f64],
    s: usize,
) -> (f64, Option<u32>) {
    if target.contains(s) {
        return (1.0, None);
    }
    if stay.is_some_and(|st| !st.contains(s)) {
        return (0.0, None);
    }
    let r = dtmc.row_range(s);
    let (idx, data) = (&dtmc.matrix.indices()[r.clone()], &dtmc.matrix.data()[r]);
    let mut best = (0.0, None);
    for (&t, &q) in idx.iter().zip(data) {
        let v = q * prev[t as usize];
        if v > best.0 {
            best = (v, Some(t));
        }
    }
    best
}

/// The column `h = k` of [`bounded_most_probable_paths`] alone (a property bound beyond the
/// curve's horizon).
fn bounded_column(
    dtmc: &Dtmc,
    stay: Option<&fixedbitset::FixedBitSet>,
    target: &fixedbitset::FixedBitSet,
    k: u32,
) -> (Vec<Option<u32>>, Vec<f64>) {
    let n = dtmc.num_states();
    let mut prev: Vec<f64> = (0..n)
        .map(|s| if target.contains(s) { 1.0 } else { 0.0 })
        .collect();
    let mut cur = prev.clone();
    let mut next = vec![None; n];
    for _ in 0..k {
        for s in 0..n {
            let (p, nx) = best_step(dtmc, stay, target, &prev, s);
            cur[s] = p;
            next[s] = nx;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (next, prev)
}

/// For each monitor state (risk level, `(d, t, r)` state or abstract state), the model's
/// state that represents it.
fn state_map(
    mapping: Mapping,
    dtmc: &Dtmc,
    name: &str,
    abstraction: Option<&Abstraction>,
) -> Result<Vec<u32>> {
    let n = dtmc.num_states();
    Ok(match mapping {
        Mapping::RiskLevel => risk_label_states(dtmc)
            .ok_or_else(|| MonitorError::Model(format!("{name}: --states risk-level needs exactly one state labelled each of safe, mild, elevated, critical, violated (any case)")))?
            .to_vec(),
        Mapping::Dtr => {
            let dtr = dtr_of_states(dtmc).map_err(|m| MonitorError::Model(format!("{name}: --states dtr: {m}")))?;
            // A model with a p valuation is a (d, t, r, p) model: all 180 states; with i and u
            // too, the 960-state chain (issue 41).
            let has = |name: &str| dtmc.valuations.as_ref().is_some_and(|v| v.names.iter().any(|n| n == name));
            let chain = has("i") && has("u");
            let size = if chain {
                NUM_CHAIN_STATES
            } else if has("p") {
                NUM_DTRP_STATES
            } else {
                NUM_DTR_STATES
            };
            let mut map = vec![u32::MAX; size];
            for (s, st) in dtr.iter().enumerate() {
                let slot = &mut map[if chain { st.chain_index() } else { st.index() }];
                if *slot != u32::MAX {
                    return Err(MonitorError::Model(format!("{name}: states {} and {s} are both {st}", *slot)));
                }
                *slot = s as u32;
            }
            if let Some(i) = map.iter().position(|&s| s == u32::MAX) {
                let st = if chain {
                    SafetyState::from_chain_index(i).unwrap_or_default().chain_name()
                } else {
                    SafetyState::from_index(i).unwrap_or_default().to_string()
                };
                return Err(MonitorError::Model(format!("{name}: --states dtr: no state is {st} (a (d, t, r) model has all 60 states, a (d, t, r, p) model all 180, a (d, t, r, p, i, u) chain all 960)")));
            }
            map
        }
        Mapping::Abstraction => {
            let a = abstraction.as_ref().ok_or_else(|| MonitorError::Model("no abstraction spec".into()))?;
            if a.num_states() != n {
                return Err(MonitorError::mismatch(format!(
                    "{name} has {n} states but the abstraction spec has {} valid states: the model was not learned with this spec",
                    a.num_states()
                )));
            }
            (0..n as u32).collect()
        }
    })
}

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;
