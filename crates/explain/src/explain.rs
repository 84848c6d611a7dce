//! The entry point of front-ends: a property (PCTL text) on a loaded model explained —
//! resolved by `augur-check` like any `--prop`, its sets of states computed by the checker,
//! then the paths, the subsystem or the reward contributions computed by this crate, in one
//! serialisable [`Explanation`].

use crate::error::{ExplainError, Result};
use crate::listing::{PathStates, TreeBuilder};
use crate::paths::{Found, PathGoal, PathSearch};
use crate::rewards;
use crate::subsystem::{self, SubChain, Subsystem};
use augur_check::{CheckOptions, CheckSession, Constants, Model, Properties, StateValues};
use augur_dtmc::StateSet;
use augur_pctl::{Comparison, ResolvedFormula, ResolvedPath, ResolvedRewardPath, Steps};
use augur_source::{SourceFile, Span};
use serde::Serialize;
use std::sync::Arc;

/// Which critical subsystem to find.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubsystemKind {
    /// Grown from the states ranked by their share of the probability, then pruned
    /// ([`subsystem::grow`]).
    Heuristic,
    /// A minimum one, exactly ([`subsystem::minimal`]; small models only).
    Minimal,
}

/// What to explain and how.
#[derive(Clone, Debug)]
pub struct Request {
    /// The property: `P<=θ [ φ U ψ ]`, `P<θ [ F ψ ]`, `U<=k`/`F<=k`, `P=? [...]`, or
    /// `R{"r"}<=r [ F ψ ]` / `R{"r"}=? [ F ψ ]`.
    pub property: String,
    /// The name errors in the property's text are located in (`--prop`).
    pub source_name: String,
    /// Values of constants.
    pub constants: Constants,
    /// How many paths to list.
    pub paths: usize,
    /// The start state: an index, or a boolean state formula that holds in exactly one state
    /// (`None`: the model's initial state).
    pub from: Option<String>,
    /// A critical subsystem to find, if any.
    pub subsystem: Option<SubsystemKind>,
    /// At most this many paths are enumerated (to count the paths needed to exceed the
    /// threshold).
    pub max_paths: usize,
    /// State names (a learned model's), by index.
    pub names: Option<Vec<String>>,
    /// How to check (the limits apply to the checker's parts and to every search: the time
    /// limit and cancellation of `options.limits`).
    pub options: CheckOptions,
    /// At most this many states in the listed paths together (the sum of their lengths),
    /// `None` for no limit: [`MAX_LISTED_STATES`] by default, the bound of a document that
    /// lists them all (`--json`, Python, MCP); the CLI's text output, which folds loops and
    /// writes one path at a time, has none.
    pub max_listed_states: Option<usize>,
}

impl Request {
    /// A request for the `paths` most probable paths of `property`, with the defaults.
    pub fn new(property: impl Into<String>, paths: usize) -> Request {
        Request {
            property: property.into(),
            source_name: "--prop".into(),
            constants: Constants::default(),
            paths,
            from: None,
            subsystem: None,
            max_paths: DEFAULT_MAX_PATHS,
            names: None,
            options: CheckOptions::default(),
            max_listed_states: Some(MAX_LISTED_STATES),
        }
    }
}

/// The default of [`Request::max_paths`].
pub const DEFAULT_MAX_PATHS: usize = 100_000;

/// At most this many paths are listed ([`Request::paths`]): the CLI's `--paths`, Python's and
/// MCP's `paths` alike.
pub const MAX_LISTED_PATHS: usize = 10_000;

/// The default of [`Request::max_listed_states`]: a document of 1,000,000 states is some
/// 40 MB of JSON.
pub const MAX_LISTED_STATES: usize = 1_000_000;

/// A state as reported: its index and its name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateRef {
    /// The index.
    pub index: u32,
    /// The name: a learned model's state name, else `state S (x=..,y=..)` with its valuation,
    /// else `state S`.
    pub name: String,
}

/// One reported path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathReport {
    /// Its probability (0 only when it is below the smallest positive double, about 5e-324:
    /// `log10_probability` has it then).
    pub probability: f64,
    /// The decimal logarithm of its probability (summed in log space along the path, finite
    /// for every path).
    pub log10_probability: f64,
    /// The probability of this path and those listed before it.
    pub cumulative: f64,
    /// For a reward property: the reward earned along it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// For a reward property: `probability · reward`, its share of the expected reward.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Its states, the start first (shared with the other paths' in a tree of prefixes;
    /// serialised as the list of `{"index", "name"}`).
    pub states: PathStates,
}

/// The threshold of the property.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThresholdReport {
    /// `<=` or `<`.
    pub op: &'static str,
    /// The bound.
    pub value: f64,
}

/// A critical subsystem as reported.
#[derive(Clone, Debug, Serialize)]
pub struct SubsystemReport {
    /// `heuristic` or `minimal`.
    pub method: &'static str,
    /// Its number of states (the sink not counted).
    pub size: usize,
    /// Transitions among its states.
    pub transitions: usize,
    /// The sub-chain's probability, checked by `augur-check` (sound bounds).
    pub probability: subsystem::Mass,
    /// Whether its probability exceeds the threshold.
    pub exceeds: bool,
    /// Sub-chains checked (heuristic) or subsets evaluated (minimal).
    pub searched: usize,
    /// Its states, in the order they were added.
    pub states: Vec<StateRef>,
}

/// The reward contributions as reported.
#[derive(Clone, Debug, Serialize)]
pub struct RewardReport {
    /// The reward structure's name.
    pub structure: String,
    /// The states contributing most (at most the number of paths asked for, at least 10).
    pub states: Vec<ContributionReport>,
    /// The sum of all states' contributions (the expected reward, up to `remaining`).
    pub total: f64,
    /// The probability mass not yet in ψ when the propagation stopped.
    pub remaining: f64,
    /// How many of the most probable paths were ranked by weight.
    pub ranked_paths: usize,
    /// The probability of never reaching ψ from the start (of entering a state from which ψ
    /// cannot be reached): positive exactly when the expected reward is infinite for that
    /// reason.
    pub missed: f64,
    /// Where the paths that miss ψ go: the states from which ψ cannot be reached that they
    /// enter first, with the probability of doing so (largest first, at most 10).
    pub missed_into: Vec<MissReport>,
    /// Why the expected reward is infinite, when it is: `missed` (ψ is missed with positive
    /// probability) or `overflow` (ψ is reached with probability 1, and the sum of the rewards
    /// exceeds the largest double); `None` when it is finite.
    pub infinite: Option<&'static str>,
}

/// A state where paths that miss ψ go.
#[derive(Clone, Debug, Serialize)]
pub struct MissReport {
    /// The state (ψ cannot be reached from it).
    pub state: StateRef,
    /// The probability of entering it before ψ.
    pub probability: f64,
}

/// One state's contribution.
#[derive(Clone, Debug, Serialize)]
pub struct ContributionReport {
    /// The state.
    pub state: StateRef,
    /// Its expected one-step reward.
    pub reward: f64,
    /// Its expected visits before ψ.
    pub visits: f64,
    /// `reward · visits`.
    pub contribution: f64,
    /// Its share of the total (`None` when the total is infinite or 0).
    pub share: Option<f64>,
}

/// The explanation of one property at one state.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The property (canonical text).
    pub property: String,
    /// `probability` or `reward`.
    pub kind: &'static str,
    /// The start state.
    pub start: StateRef,
    /// The property's value at the start (the checker's).
    pub value: f64,
    /// The threshold, for `P<=θ`, `P<θ`, `R<=r`, `R<r`.
    pub threshold: Option<ThresholdReport>,
    /// Whether the value violates the threshold (`None` for `=?`).
    pub violated: Option<bool>,
    /// The paths, most probable first (for rewards: largest weight first).
    pub paths: Vec<PathReport>,
    /// The number of most probable paths whose mass (for rewards: weight) exceeds the
    /// threshold: the smallest path set that is a counterexample. `None` when there is no
    /// threshold, or not within the paths enumerated.
    pub paths_to_exceed: Option<usize>,
    /// How many paths were enumerated.
    pub paths_enumerated: usize,
    /// Their probability in total.
    pub mass_enumerated: f64,
    /// Whether every path was enumerated (there are no more).
    pub all_paths: bool,
    /// The critical subsystem, when asked for.
    pub subsystem: Option<SubsystemReport>,
    /// The reward contributions, for a reward property.
    pub rewards: Option<RewardReport>,
    /// Remarks.
    pub notes: Vec<String>,
}

/// An explanation with what the pictures and exports need.
pub struct Explained {
    /// The report.
    pub explanation: Explanation,
    /// The sub-chain of the subsystem, when one was asked for and found.
    pub subchain: Option<SubChain>,
    /// The listed paths (of a probability; none for a reward).
    pub paths: Vec<PathStates>,
    /// The ψ-states.
    pub target: StateSet,
}

/// What the property asks, taken apart.
struct Parts {
    phi: Option<ResolvedFormula>,
    psi: ResolvedFormula,
    steps: Steps,
    threshold: Option<(Comparison, f64)>,
    reward: Option<usize>,
    value_formula: ResolvedFormula,
    source: Arc<SourceFile>,
    text: String,
}

const SUPPORTED: &str = "explain handles `P<=θ [ φ U ψ ]`, `P<θ [ F ψ ]` (also `U<=k`, `F<=k`, and `P=?`) and `R{\"r\"}<=r [ F ψ ]` (or `R=?`)";

fn take_apart(model: &Model, request: &Request) -> Result<Parts> {
    let mut props = Properties::new();
    props.add(&request.source_name, &request.property)?;
    let compiled = props.compile(model, &request.constants)?;
    let item = compiled
        .items
        .into_iter()
        .next()
        .ok_or_else(|| ExplainError::input("no property to explain"))?;
    let resolved = item
        .resolved
        .map_err(|d| ExplainError::Input(Box::new(d)))?;
    let source = Arc::clone(&resolved.source);
    let at = |span: Span, m: String| ExplainError::at(m, source.location(span));
    let threshold_of = |t: &Option<augur_pctl::Threshold>, span: Span| -> Result<_> {
        match t {
            None => Ok(None),
            Some(t) => match t.cmp {
                Comparison::Le | Comparison::Lt => Ok(Some((t.cmp, t.value.value))),
                _ => Err(at(
                    span,
                    format!("{SUPPORTED}: a counterexample shows that a probability or reward is too large, so the threshold must be an upper bound (`<=`, `<`); for a lower bound, explain the complement"),
                )),
            },
        }
    };
    // A probability or a reward, its threshold (an upper bound) apart from the formula of its
    // value.
    let mut value_formula = resolved.formula.clone();
    let threshold = match &mut value_formula {
        ResolvedFormula::Prob {
            opt: None,
            threshold,
            ..
        }
        | ResolvedFormula::Reward {
            opt: None,
            threshold,
            ..
        } => threshold.take(),
        f => return Err(at(f.span(), SUPPORTED.to_string())),
    };
    let threshold = threshold_of(&threshold, value_formula.span())?;
    match &value_formula {
        ResolvedFormula::Prob { path, span, .. } => {
            let (phi, psi, steps) = match path.as_ref() {
                ResolvedPath::Eventually(t, s) => (None, t.clone(), *s),
                ResolvedPath::Until(f, t, s) => (Some(f.clone()), t.clone(), *s),
                _ => return Err(at(*span, SUPPORTED.to_string())),
            };
            if steps.lower > 0 {
                return Err(at(
                    steps.span,
                    "explain needs an upper step bound (`<=k`, `<k`) or none".to_string(),
                ));
            }
            if steps.upper.is_some_and(|k| k > u64::from(u32::MAX - 1)) {
                return Err(at(steps.span, "step bound too large".to_string()));
            }
            Ok(Parts {
                phi,
                psi,
                steps,
                threshold,
                reward: None,
                value_formula,
                source,
                text: resolved.text.clone(),
            })
        }
        ResolvedFormula::Reward {
            structure,
            path,
            span,
            ..
        } => {
            let ResolvedRewardPath::Reachability(psi) = path.as_ref() else {
                return Err(at(*span, SUPPORTED.to_string()));
            };
            let (psi, reward) = (psi.clone(), Some(*structure));
            Ok(Parts {
                phi: None,
                psi,
                steps: Steps::unbounded(),
                threshold,
                reward,
                value_formula,
                source,
                text: resolved.text.clone(),
            })
        }
        f => Err(at(f.span(), SUPPORTED.to_string())),
    }
}

/// How a state is named: a learned model's name, else `state S (x=..)` with its valuation,
/// else `state S` (as `augur check` prints states).
pub fn state_name(model: &Model, names: Option<&[String]>, s: u32) -> String {
    if let Some(n) = names.and_then(|n| n.get(s as usize)) {
        return n.clone();
    }
    match model.dtmc().describe_state(s as usize) {
        Some(v) => format!("state {s} {v}"),
        None => format!("state {s}"),
    }
}

fn bool_set(
    session: &mut CheckSession<'_>,
    f: &ResolvedFormula,
    source: &Arc<SourceFile>,
) -> Result<StateSet> {
    match session.values(f, source)? {
        StateValues::Bool(s) => Ok(s),
        StateValues::Num(_) => Err(ExplainError::at(
            "expected a boolean state formula",
            source.location(f.span()),
        )),
    }
}

fn start_state(model: &Model, session: &mut CheckSession<'_>, from: Option<&str>) -> Result<usize> {
    let n = model.dtmc().num_states();
    let Some(text) = from else {
        return match model.dtmc().initial.as_slice() {
            [s] => Ok(*s as usize),
            many => Err(ExplainError::input(format!(
                "{}: the model has {} initial states; choose the start with --from STATE",
                model.name(),
                many.len()
            ))),
        };
    };
    if let Ok(i) = text.trim().parse::<usize>() {
        return if i < n {
            Ok(i)
        } else {
            Err(ExplainError::input(format!(
                "--from {i}: the model has {n} states (0 to {})",
                n.saturating_sub(1)
            )))
        };
    }
    let set = session.states(text, "--from")?;
    let mut ones = set.ones();
    match (ones.next(), ones.next()) {
        (Some(s), None) => Ok(s),
        (None, _) => Err(ExplainError::input(format!(
            "--from {text}: no state satisfies it"
        ))),
        (Some(_), Some(_)) => Err(ExplainError::input(format!(
            "--from {text}: {} states satisfy it; it must name one",
            set.count_ones(..)
        ))),
    }
}

/// Explains `request.property` on `model`: the checker's value at the start state, the most
/// probable paths (with the number needed to exceed the threshold), the critical subsystem
/// when asked for, and for a reward property the states and paths that carry most of it.
pub fn explain(model: &Model, request: &Request) -> Result<Explained> {
    if request.paths > MAX_LISTED_PATHS {
        return Err(ExplainError::input(format!(
            "--paths {}: at most {MAX_LISTED_PATHS} paths are listed (Python's and MCP's `paths` have the same limit)",
            request.paths
        )));
    }
    model.require_point("explain")?;
    let dtmc = model.dtmc();
    let parts = take_apart(model, request)?;
    let mut session =
        CheckSession::new(model, request.options.clone()).with_constants(&request.constants);
    let start = start_state(model, &mut session, request.from.as_deref())?;
    let psi = bool_set(&mut session, &parts.psi, &parts.source)?;
    let phi = match &parts.phi {
        Some(f) => Some(bool_set(&mut session, f, &parts.source)?),
        None => None,
    };
    let values = match session.values(&parts.value_formula, &parts.source)? {
        StateValues::Num(v) => v.values,
        StateValues::Bool(_) => {
            return Err(ExplainError::input("the property has no number to explain"))
        }
    };
    let value = values[start];
    let names = request.names.as_deref();
    let name = |s: u32| StateRef {
        index: s,
        name: state_name(model, names, s),
    };
    let bound = parts.steps.upper.map(|k| k as u32);
    let formula = PathGoal {
        phi: phi.as_ref(),
        psi: &psi,
        bound,
    };
    let threshold = parts.threshold;
    let exceeds = move |x: f64| match threshold {
        Some((Comparison::Lt, t)) => x >= t,
        Some((_, t)) => x > t,
        None => false,
    };
    let violated = threshold.map(|_| exceeds(value));
    let mut notes = Vec::new();
    let transpose = dtmc.transpose();
    // The subsystem (first: `--minimal` refuses a large model before any path is searched).
    let mut subchain = None;
    let subsystem_report = match request.subsystem {
        None => None,
        Some(_) if parts.reward.is_some() => {
            return Err(ExplainError::input(
                "--subsystem explains a probability (`P<=θ [ ... ]`), not a reward",
            ))
        }
        Some(_) if violated != Some(true) => {
            notes.push(match violated {
                None => "no critical subsystem: the property has no threshold (`P<=θ`)".into(),
                _ => format!("no critical subsystem: the property holds (the probability {value} does not exceed the threshold)"),
            });
            None
        }
        Some(kind) => {
            let found: Option<Subsystem> = match kind {
                SubsystemKind::Heuristic => subsystem::grow(
                    dtmc,
                    &transpose,
                    formula,
                    start,
                    &values,
                    &exceeds,
                    &request.options,
                )?,
                SubsystemKind::Minimal => subsystem::minimal(
                    dtmc,
                    &transpose,
                    formula,
                    start,
                    &exceeds,
                    &request.options,
                    subsystem::MINIMAL_BUDGET,
                )
                .map_err(|e| match e {
                    ExplainError::Input(d) => {
                        ExplainError::input(format!("{}: --minimal: {}", model.name(), d.message))
                    }
                    e => e,
                })?,
            };
            match found {
                None => {
                    notes.push("no subsystem exceeds the threshold".into());
                    None
                }
                Some(s) => {
                    subchain = Some(subsystem::restrict(dtmc, &s.states, &formula)?);
                    Some(SubsystemReport {
                        method: match kind {
                            SubsystemKind::Heuristic => "heuristic",
                            SubsystemKind::Minimal => "minimal",
                        },
                        size: s.states.len(),
                        transitions: s.transitions,
                        exceeds: exceeds(s.probability.lo),
                        probability: s.probability,
                        searched: s.checks,
                        states: s.states.iter().map(|&x| name(x)).collect(),
                    })
                }
            }
        }
    };
    let mut search =
        PathSearch::new(dtmc, &transpose, formula, start).with_limits(&request.options.limits);
    // Paths: for a probability, the K most probable, then more (up to max_paths) until their
    // mass exceeds the threshold; for a reward, the most probable ones ranked by weight. Only
    // the leaves of the search's tree of prefixes are kept (a path's states are walked from
    // the tree when it is reported).
    let reward = parts.reward.map(|r| &dtmc.rewards[r]);
    let to_rank = match reward {
        Some(_) => request
            .paths
            .saturating_mul(10)
            .max(1000)
            .min(request.max_paths),
        None => request.paths,
    };
    let mut listed: Vec<Found> = Vec::new();
    let (mut enumerated, mut mass, mut to_exceed, mut all_paths) = (0usize, 0.0, None, false);
    loop {
        let want_more = enumerated < to_rank
            || (reward.is_none()
                && violated == Some(true)
                && to_exceed.is_none()
                && enumerated < request.max_paths);
        if !want_more {
            break;
        }
        let next = match search.next_found() {
            Ok(next) => next,
            // Past the paths asked for, the count of those needed to exceed the threshold
            // stops at the search's budget with a note, not an error.
            Err(ExplainError::Budget { limit, unit, .. }) if enumerated >= to_rank => {
                notes.push(format!(
                    "the paths needed to exceed the threshold were counted up to the search's budget of {limit} {unit}"
                ));
                break;
            }
            Err(e) => return Err(e),
        };
        let Some(p) = next else {
            all_paths = true;
            break;
        };
        enumerated += 1;
        mass += p.probability;
        if reward.is_none() && to_exceed.is_none() && threshold.is_some() && exceeds(mass) {
            to_exceed = Some(enumerated);
        }
        if listed.len() < to_rank {
            listed.push(p);
        }
    }
    // The paths reported, in order (for a reward: the heaviest), with their reward and weight.
    let mut chosen: Vec<(Found, Option<(f64, f64)>)> = Vec::new();
    let mut rewards_report = None;
    match reward {
        None => {
            chosen.extend(listed.iter().map(|&f| (f, None)));
            if violated == Some(true) && to_exceed.is_none() {
                notes.push(format!(
                    "the {enumerated} most probable paths have probability {mass} in total: not above the threshold (more paths: --max-paths)"
                ));
            }
        }
        Some(r) => {
            let mut memo = PathRewards::default();
            let mut ranked: Vec<(f64, f64, usize)> = Vec::with_capacity(listed.len());
            for (i, p) in listed.iter().enumerate() {
                let acc = memo.reward(&search, dtmc, r, p.prefix);
                ranked.push((p.probability * acc, acc, i));
            }
            drop(memo);
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.2.cmp(&b.2)));
            let mut weight = 0.0;
            for (i, &(w, acc, k)) in ranked.iter().enumerate() {
                weight += w;
                if to_exceed.is_none() && threshold.is_some() && exceeds(weight) {
                    to_exceed = Some(i + 1);
                }
                if i < request.paths {
                    chosen.push((listed[k], Some((acc, w))));
                }
            }
            let c = rewards::contributions(
                dtmc,
                &transpose,
                r,
                &psi,
                start,
                rewards::Propagation::default(),
                &request.options.limits,
            )?;
            let shown = request.paths.max(10);
            let finite_total = c.total.is_finite() && c.total != 0.0;
            let infinite = if !value.is_infinite() {
                None
            } else if c.misses {
                Some("missed")
            } else {
                Some("overflow")
            };
            rewards_report = Some(RewardReport {
                structure: r.display_name().to_string(),
                states: c
                    .states
                    .iter()
                    .take(shown)
                    .map(|x| ContributionReport {
                        state: name(x.state),
                        reward: x.reward,
                        visits: x.visits,
                        contribution: x.contribution,
                        share: finite_total.then(|| x.contribution / c.total),
                    })
                    .collect(),
                total: c.total,
                remaining: c.remaining,
                ranked_paths: listed.len(),
                missed: c.missed,
                missed_into: c
                    .missed_into
                    .iter()
                    .take(10)
                    .map(|&(s, p)| MissReport {
                        state: name(s),
                        probability: p,
                    })
                    .collect(),
                infinite,
            });
            match infinite {
                Some("missed") => {
                    let into: Vec<String> = c
                        .missed_into
                        .iter()
                        .take(3)
                        .map(|&(s, p)| format!("{} ({p})", name(s).name))
                        .collect();
                    notes.push(format!(
                        "the expected reward is infinite because ψ is missed with probability {} (as in PRISM, the reward of `F ψ` is infinite unless ψ is reached with probability 1): the paths that miss it enter {}{}, from which ψ cannot be reached; the contributions are those of the paths while ψ can still be reached",
                        c.missed,
                        into.join(", "),
                        if c.missed_into.len() > 3 {
                            format!(" and {} more such states", c.missed_into.len() - 3)
                        } else {
                            String::new()
                        }
                    ));
                }
                Some(_) => notes.push(format!(
                    "the expected reward is infinite although ψ is reached with probability 1: the rewards add up past the largest double (about 1.8e308){}; the states listed contribute the most, and shares of an infinite total are not given",
                    if c.total.is_finite() {
                        format!(" (the contributions found add up to {}, the rest is in the steps not propagated)", c.total)
                    } else {
                        String::new()
                    }
                )),
                None => {}
            }
        }
    }
    // The listed states (for a document), before any name is made.
    let listed_states: usize = chosen.iter().map(|(f, _)| f.steps as usize + 1).sum();
    if let Some(limit) = request.max_listed_states {
        if listed_states > limit {
            let mut total = 0usize;
            let within = chosen
                .iter()
                .take_while(|(f, _)| {
                    total += f.steps as usize + 1;
                    total <= limit
                })
                .count();
            return Err(ExplainError::Budget {
                what: "the paths listed",
                limit,
                unit: "states (the paths' lengths added up)",
                hint: format!(
                    ": the {} paths asked for list {listed_states} states, and only the first {within} fit; ask for fewer paths (--paths, Python's and MCP's `paths`), or read them in `augur explain`'s text output (without --json), which writes one path at a time and folds loops",
                    chosen.len()
                ),
            });
        }
    }
    let mut tree = TreeBuilder::new();
    let name_of = |s: u32| state_name(model, names, s);
    let leaves: Vec<u32> = chosen
        .iter()
        .map(|(f, _)| tree.add(&search, f.prefix, &name_of))
        .collect();
    drop(search);
    let tree = tree.finish();
    let mut paths: Vec<PathReport> = Vec::with_capacity(chosen.len());
    let mut cumulative = 0.0;
    for ((f, rw), leaf) in chosen.iter().zip(leaves) {
        cumulative += f.probability;
        paths.push(PathReport {
            probability: f.probability,
            log10_probability: f.ln_probability / std::f64::consts::LN_10,
            cumulative,
            reward: rw.map(|(acc, _)| acc),
            weight: rw.map(|(_, w)| w),
            states: PathStates::new(Arc::clone(&tree), leaf, f.steps + 1),
        });
    }
    let shown: Vec<PathStates> = match reward {
        None => paths.iter().map(|p| p.states.clone()).collect(),
        Some(_) => Vec::new(),
    };
    let explanation = Explanation {
        property: parts.text,
        kind: if reward.is_some() {
            "reward"
        } else {
            "probability"
        },
        start: name(start as u32),
        value,
        threshold: threshold.map(|(c, v)| ThresholdReport {
            op: if c == Comparison::Lt { "<" } else { "<=" },
            value: v,
        }),
        violated,
        paths_to_exceed: to_exceed,
        paths_enumerated: enumerated,
        mass_enumerated: mass,
        all_paths,
        subsystem: subsystem_report,
        rewards: rewards_report,
        notes,
        paths,
    };
    Ok(Explained {
        explanation,
        subchain,
        paths: shown,
        target: psi,
    })
}

/// The reward earned along paths of a search, memoised over its tree of prefixes (a path's
/// reward is its parent prefix's plus one step's), so that ranking K paths of up to L steps
/// costs the prefixes walked, not K · L.
#[derive(Default)]
struct PathRewards {
    known: std::collections::HashMap<u32, f64>,
}

impl PathRewards {
    fn reward(
        &mut self,
        search: &PathSearch<'_>,
        dtmc: &augur_dtmc::Dtmc,
        r: &augur_dtmc::RewardStructure,
        leaf: u32,
    ) -> f64 {
        let mut up = Vec::new();
        let mut at = leaf;
        let mut acc = 0.0;
        while at != u32::MAX {
            if let Some(&v) = self.known.get(&at) {
                acc = v;
                break;
            }
            up.push(at);
            at = search.node(at).1;
        }
        for &p in up.iter().rev() {
            let (state, parent) = search.node(p);
            if parent != u32::MAX {
                let from = search.node(parent).0;
                acc += rewards::step_reward(dtmc, r, from, state);
            }
            self.known.insert(p, acc);
        }
        acc
    }
}

impl Explained {
    /// The subsystem in DOT (petgraph), the listed paths highlighted; `None` without one.
    pub fn dot(&self, model: &Model, names: Option<&[String]>) -> Option<String> {
        let sub = self.subchain.as_ref()?;
        let taken = self
            .paths
            .first()
            .map(|p| p.tree().transitions())
            .unwrap_or_default();
        let g = crate::dot::graph(sub, &|s| self.target.contains(s as usize), &taken, &|s| {
            state_name(model, names, s)
        });
        Some(crate::dot::to_dot(&g))
    }

    /// The subsystem as a PRISM-language model (every transition leaving it going to one added
    /// sink state; the model's constants, formulas, variables and labels kept, so that the
    /// property checks on it as written); `None` without one.
    pub fn write_prism(&self, model: &Model, w: &mut dyn std::io::Write) -> Option<Result<()>> {
        let sub = self.subchain.as_ref()?;
        let source = model.prism_source();
        let header = format!(
            "// A critical subsystem of {} for {}: {} of its states, the last state of this\n\
             // model an added sink that every transition leaving them goes to (augur explain).\n",
            model.name(),
            self.explanation.property,
            sub.states.len()
        );
        let written = w
            .write_all(header.as_bytes())
            .map_err(|e| ExplainError::Write(e.to_string()))
            .and_then(|()| {
                augur_formats::prism_export::write_prism_with(&sub.for_export(), &source, w)
                    .map_err(|e| ExplainError::Write(e.to_string()))
            });
        Some(written)
    }
}
