//! Learning a DTMC from abstract traces (Pro2Guard's Algorithm 1, done so rows sum to 1).
//!
//! The input is a stream of traces, each a sequence of abstract state indices `0..n`.
//! [`TransitionCounts`] counts the observed transitions, keeping apart the ones the caller's
//! [`Validity`] rejects (counted and reported, never used). [`learn`] turns the counts into a
//! [`Dtmc`] with *validity-aware Laplace smoothing*: for a row `i` with valid successors `V(i)`
//! and counts `c_ij`,
//!
//! ```text
//! P(i, j) = (c_ij + α) / (Σ_{k ∈ V(i)} c_ik + α·|V(i)|)   for j ∈ V(i),   0 otherwise,
//! ```
//!
//! a row with no observation and α = 0 gets the uniform distribution over `V(i)`, and a row with
//! `V(i) = ∅` becomes absorbing (a self-loop), which the [`LearnReport`] lists.
//!
//! The learner knows nothing about predicates or expressions: validity is the small
//! [`Validity`] trait (any `Fn(u32, u32) -> bool` is one), so the abstraction crate and the CLI
//! glue the two together.
//!
//! ```
//! use augur_learn::{learn, AllValid, TransitionCounts};
//! let mut counts = TransitionCounts::new(2);
//! counts.observe_trace(&[0, 0, 1], &AllValid);
//! counts.observe_trace(&[0, 1, 1], &AllValid);
//! let learned = learn(&counts, &AllValid, 0.0).unwrap();
//! // Row 0 saw 0->0 once and 0->1 twice.
//! assert_eq!(learned.dtmc.matrix.get(0, 1).copied(), Some(2.0 / 3.0));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::{LearnError, Result};
use augur_dtmc::{Dtmc, Matrix};
use augur_formats::smoothing::{
    RowKind, SmoothedRows, Smoothing, SmoothingError, SuccessorSet, UnobservedRule,
};

/// Which abstract transitions are possible. Implemented by every `Fn(u32, u32) -> bool`.
pub trait Validity {
    /// Whether the move `from -> to` is semantically possible.
    fn is_valid_transition(&self, from: u32, to: u32) -> bool;

    /// Whether every state of `0..num_states` is a valid successor of `from`, when that is
    /// known without asking about each (a fast path: learning then keeps the row's successors
    /// as "all states" without listing them). The default says `false` (not known).
    fn every_successor_valid(&self, _from: u32, _num_states: usize) -> bool {
        false
    }

    /// The valid successors of `from` among `0..num_states`, sorted. The default scans all states.
    fn valid_successors(&self, from: u32, num_states: usize) -> Vec<u32> {
        if self.every_successor_valid(from, num_states) {
            return (0..num_states as u32).collect();
        }
        (0..num_states as u32)
            .filter(|&to| self.is_valid_transition(from, to))
            .collect()
    }

    /// How many valid successors `from` has among `0..num_states`.
    fn num_valid_successors(&self, from: u32, num_states: usize) -> usize {
        if self.every_successor_valid(from, num_states) {
            return num_states;
        }
        self.valid_successors(from, num_states).len()
    }
}

impl<F: Fn(u32, u32) -> bool> Validity for F {
    fn is_valid_transition(&self, from: u32, to: u32) -> bool {
        self(from, to)
    }
}

/// Every transition is valid (traces that are already abstract, without a spec).
#[derive(Clone, Copy, Debug, Default)]
pub struct AllValid;

impl Validity for AllValid {
    fn is_valid_transition(&self, _from: u32, _to: u32) -> bool {
        true
    }
    fn every_successor_valid(&self, _from: u32, _num_states: usize) -> bool {
        true
    }
    fn valid_successors(&self, _from: u32, num_states: usize) -> Vec<u32> {
        (0..num_states as u32).collect()
    }
    fn num_valid_successors(&self, _from: u32, num_states: usize) -> usize {
        num_states
    }
}

/// What one trace contributed, as returned by [`TransitionCounts::observe_trace`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceContribution {
    /// Valid transitions counted.
    pub counted: u64,
    /// Invalid transitions seen and dropped.
    pub invalid: u64,
}

/// Transition counts between abstract states `0..num_states`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransitionCounts {
    rows: Vec<BTreeMap<u32, u64>>,
    invalid: BTreeMap<(u32, u32), u64>,
    initial: BTreeMap<u32, u64>,
    determined: BTreeSet<u32>,
    traces: u64,
    steps: u64,
}

impl TransitionCounts {
    /// Empty counts over `num_states` states.
    pub fn new(num_states: usize) -> Self {
        TransitionCounts {
            rows: vec![BTreeMap::new(); num_states],
            ..Default::default()
        }
    }

    /// Number of states.
    pub fn num_states(&self) -> usize {
        self.rows.len()
    }

    /// Grow the state space to at least `n` states (for traces whose state names are discovered
    /// as they are read).
    pub fn ensure_states(&mut self, n: usize) {
        if self.rows.len() < n {
            self.rows.resize(n, BTreeMap::new());
        }
    }

    fn check(&self, s: u32) -> Result<()> {
        if (s as usize) < self.rows.len() {
            Ok(())
        } else {
            Err(LearnError::StateOutOfRange {
                index: s,
                num_states: self.rows.len(),
            })
        }
    }

    /// Count one trace: its first state as an initial state, and each consecutive pair as a
    /// transition (valid ones counted, invalid ones recorded apart). An empty trace counts
    /// nothing. Errors if an index is out of range (nothing is counted then).
    pub fn try_observe_trace(
        &mut self,
        states: &[u32],
        validity: &dyn Validity,
    ) -> Result<TraceContribution> {
        for &s in states {
            self.check(s)?;
        }
        let Some(&first) = states.first() else {
            return Ok(TraceContribution::default());
        };
        self.traces += 1;
        self.steps += states.len() as u64;
        *self.initial.entry(first).or_insert(0) += 1;
        let mut contribution = TraceContribution::default();
        for pair in states.windows(2) {
            let (from, to) = (pair[0], pair[1]);
            if validity.is_valid_transition(from, to) {
                *self.rows[from as usize].entry(to).or_insert(0) += 1;
                contribution.counted += 1;
            } else {
                *self.invalid.entry((from, to)).or_insert(0) += 1;
                contribution.invalid += 1;
            }
        }
        Ok(contribution)
    }

    /// [`Self::try_observe_trace`], growing the state space to fit the trace first.
    pub fn observe_trace(&mut self, states: &[u32], validity: &dyn Validity) -> TraceContribution {
        if let Some(&max) = states.iter().max() {
            self.ensure_states(max as usize + 1);
        }
        // Cannot fail: every index is in range now.
        self.try_observe_trace(states, validity).unwrap_or_default()
    }

    /// Observed valid transitions from `from` to `to`.
    pub fn count(&self, from: u32, to: u32) -> u64 {
        self.rows
            .get(from as usize)
            .and_then(|r| r.get(&to))
            .copied()
            .unwrap_or(0)
    }

    /// `n_p`: the number of valid transitions observed out of `state`.
    pub fn row_total(&self, state: u32) -> u64 {
        self.rows
            .get(state as usize)
            .map(|r| r.values().sum())
            .unwrap_or(0)
    }

    /// The observed successors of `state` with their counts, by successor index.
    pub fn row(&self, state: u32) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.rows
            .get(state as usize)
            .into_iter()
            .flat_map(|r| r.iter().map(|(&t, &c)| (t, c)))
    }

    /// Number of traces counted (non-empty ones).
    pub fn traces(&self) -> u64 {
        self.traces
    }

    /// Number of trace steps (states) counted.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Number of observed invalid transitions (dropped).
    pub fn invalid_total(&self) -> u64 {
        self.invalid.values().sum()
    }

    /// The observed invalid transitions `(from, to) -> count`.
    pub fn invalid(&self) -> &BTreeMap<(u32, u32), u64> {
        &self.invalid
    }

    /// How often each state started a trace.
    pub fn initial(&self) -> &BTreeMap<u32, u64> {
        &self.initial
    }

    /// States with at least one observed valid outgoing transition or that started a trace or
    /// were the target of one: the states "seen".
    pub fn states_seen(&self) -> usize {
        let mut seen = vec![false; self.rows.len()];
        for &s in self.initial.keys() {
            seen[s as usize] = true;
        }
        for (from, row) in self.rows.iter().enumerate() {
            if !row.is_empty() {
                seen[from] = true;
            }
            for &to in row.keys() {
                seen[to as usize] = true;
            }
        }
        for &(from, to) in self.invalid.keys() {
            seen[from as usize] = true;
            seen[to as usize] = true;
        }
        seen.iter().filter(|&&b| b).count()
    }

    /// Record which states have at most one valid successor: their rows are fixed by validity
    /// (a self-loop or a forced move), nothing is estimated, and PAC bounds do not apply to them.
    pub fn mark_determined(&mut self, validity: &dyn Validity) {
        let n = self.num_states();
        self.determined = (0..n as u32)
            .filter(|&s| validity.num_valid_successors(s, n) <= 1)
            .collect();
    }

    /// The states marked by [`Self::mark_determined`].
    pub fn determined(&self) -> &BTreeSet<u32> {
        &self.determined
    }

    /// Add another set of counts over the same states into this one. A count that would
    /// pass 2^64 - 1 is an error naming it, and then nothing is added (a wrapped sum would
    /// give a wrong p̂).
    pub fn merge(&mut self, other: &TransitionCounts) -> Result<()> {
        let overflow = |what: String| {
            LearnError::BadCounts(format!("{what}: the counts add up past 2^64 - 1"))
        };
        let add = |a: u64, b: u64, what: &dyn Fn() -> String| {
            a.checked_add(b).ok_or_else(|| overflow(what()))
        };
        // Check every sum first, so that a failed merge leaves the counts as they were.
        let get = |from: usize, to: u32| {
            self.rows
                .get(from)
                .and_then(|r| r.get(&to))
                .copied()
                .unwrap_or(0)
        };
        for (from, row) in other.rows.iter().enumerate() {
            let mut total = self.rows.get(from).map_or(0u64, |r| r.values().sum());
            for (&to, &c) in row {
                add(get(from, to), c, &|| format!("transition {from} -> {to}"))?;
                total = add(total, c, &|| format!("the transitions from state {from}"))?;
            }
        }
        for (&(f, t), &c) in &other.invalid {
            let have = self.invalid.get(&(f, t)).copied().unwrap_or(0);
            add(have, c, &|| format!("invalid transition {f} -> {t}"))?;
        }
        for (&s, &c) in &other.initial {
            let have = self.initial.get(&s).copied().unwrap_or(0);
            add(have, c, &|| format!("initial state {s}"))?;
        }
        let traces = add(self.traces, other.traces, &|| "traces".to_string())?;
        let steps = add(self.steps, other.steps, &|| "steps".to_string())?;
        self.ensure_states(other.num_states());
        for (from, row) in other.rows.iter().enumerate() {
            for (&to, &c) in row {
                *self.rows[from].entry(to).or_insert(0) += c;
            }
        }
        for (&k, &c) in &other.invalid {
            *self.invalid.entry(k).or_insert(0) += c;
        }
        for (&s, &c) in &other.initial {
            *self.initial.entry(s).or_insert(0) += c;
        }
        self.determined.extend(other.determined.iter().copied());
        self.traces = traces;
        self.steps = steps;
        Ok(())
    }

    /// Adds `other`'s counts, its state `i` being this one's `map[i]` (every state of
    /// `other` must be mapped into this one's states).
    pub(crate) fn merge_mapped(&mut self, other: &TransitionCounts, map: &[u32]) {
        for (from, row) in other.rows.iter().enumerate() {
            let f = map[from] as usize;
            for (&to, &c) in row {
                *self.rows[f].entry(map[to as usize]).or_insert(0) += c;
            }
        }
        for (&(f, t), &c) in &other.invalid {
            *self
                .invalid
                .entry((map[f as usize], map[t as usize]))
                .or_insert(0) += c;
        }
        for (&s, &c) in &other.initial {
            *self.initial.entry(map[s as usize]).or_insert(0) += c;
        }
        self.determined
            .extend(other.determined.iter().map(|&s| map[s as usize]));
        self.traces += other.traces;
        self.steps += other.steps;
    }

    /// Adds one state, the end state of [`crate::end_state`], and counts `ends` (the last
    /// state of each trace → how many traces ended there) as transitions into it. Returns its
    /// index. Traces and steps are not counted again. Errors if a state is out of range.
    pub fn observe_ends(&mut self, ends: &BTreeMap<u32, u64>) -> Result<u32> {
        for &s in ends.keys() {
            self.check(s)?;
        }
        let end = self.rows.len() as u32;
        self.rows.push(BTreeMap::new());
        for (&from, &c) in ends {
            *self.rows[from as usize].entry(end).or_insert(0) += c;
        }
        Ok(end)
    }

    /// The Wilson 95% interval of the transition probability `from -> to`, from the raw counts.
    pub fn wilson(&self, from: u32, to: u32) -> (f64, f64) {
        wilson_interval(self.count(from, to), self.row_total(from), WILSON_Z95)
    }

    /// The serialisable form kept in a learned model's JSON.
    pub fn to_json(&self) -> CountsJson {
        CountsJson {
            num_states: self.rows.len(),
            traces: self.traces,
            steps: self.steps,
            initial: self.initial.iter().map(|(&s, &c)| (s, c)).collect(),
            transitions: self
                .rows
                .iter()
                .enumerate()
                .flat_map(|(f, r)| r.iter().map(move |(&t, &c)| (f as u32, t, c)))
                .collect(),
            invalid: self.invalid.iter().map(|(&(f, t), &c)| (f, t, c)).collect(),
            determined: self.determined.iter().copied().collect(),
        }
    }

    /// Rebuild counts from their JSON form, checking every index, that the number of states
    /// fits in memory (fallible allocation, not an abort) and that no count or row total
    /// overflows `u64` (a wrapped sum would give a wrong p̂).
    pub fn from_json(json: &CountsJson) -> Result<Self> {
        Self::from_json_within(json, usize::MAX)
    }

    /// [`TransitionCounts::from_json`], refusing more than `max_states` states.
    pub fn from_json_within(json: &CountsJson, max_states: usize) -> Result<Self> {
        let n = json.num_states;
        if n > max_states || n > u32::MAX as usize + 1 {
            return Err(LearnError::BadCounts(format!(
                "num_states is {n}, more than the limit of {} states",
                max_states.min(u32::MAX as usize + 1)
            )));
        }
        let mut rows = Vec::new();
        if rows.try_reserve_exact(n).is_err() {
            return Err(LearnError::BadCounts(format!(
                "num_states is {n}: more states than memory can hold"
            )));
        }
        rows.resize(n, BTreeMap::new());
        let mut c = TransitionCounts {
            rows,
            ..Default::default()
        };
        c.traces = json.traces;
        c.steps = json.steps;
        let overflow = |what: String| {
            LearnError::BadCounts(format!("{what}: the counts add up past 2^64 - 1"))
        };
        for &(s, n) in &json.initial {
            c.check(s)?;
            let e = c.initial.entry(s).or_insert(0);
            *e = e
                .checked_add(n)
                .ok_or_else(|| overflow(format!("initial state {s}")))?;
        }
        let mut totals: BTreeMap<u32, u64> = BTreeMap::new();
        for &(f, t, n) in &json.transitions {
            c.check(f)?;
            c.check(t)?;
            let e = c.rows[f as usize].entry(t).or_insert(0);
            *e = e
                .checked_add(n)
                .ok_or_else(|| overflow(format!("transition {f} -> {t}")))?;
            let total = totals.entry(f).or_insert(0);
            *total = total
                .checked_add(n)
                .ok_or_else(|| overflow(format!("the transitions from state {f}")))?;
        }
        for &(f, t, n) in &json.invalid {
            c.check(f)?;
            c.check(t)?;
            let e = c.invalid.entry((f, t)).or_insert(0);
            *e = e
                .checked_add(n)
                .ok_or_else(|| overflow(format!("invalid transition {f} -> {t}")))?;
        }
        for &s in &json.determined {
            c.check(s)?;
            c.determined.insert(s);
        }
        Ok(c)
    }
}

/// The transition counts and metadata of a learned model's JSON, as far as `augur pac` reads
/// them (the model itself is not built).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct LearnedCounts {
    /// The `"counts"` field, if the model kept its counts.
    pub counts: Option<CountsJson>,
    /// The `"metadata"` field.
    pub metadata: Option<serde_json::Value>,
}

impl LearnedCounts {
    /// Parses a learned model's text (`path` names it in errors). Here rather than with a
    /// generic parser in the caller, so that the reading is compiled once, optimised.
    pub fn from_json(text: &str, path: &std::path::Path) -> Result<LearnedCounts> {
        Ok(augur_formats::json::parse_json(text, path)?)
    }
}

/// The counts as stored in a learned model's JSON (`"counts"` field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountsJson {
    /// Number of states.
    pub num_states: usize,
    /// Number of (non-empty) traces counted.
    #[serde(default)]
    pub traces: u64,
    /// Number of trace steps counted.
    #[serde(default)]
    pub steps: u64,
    /// `[state, count]`: how often each state started a trace.
    #[serde(default)]
    pub initial: Vec<(u32, u64)>,
    /// `[from, to, count]` for every observed valid transition.
    pub transitions: Vec<(u32, u32, u64)>,
    /// `[from, to, count]` for every observed invalid (dropped) transition.
    #[serde(default)]
    pub invalid: Vec<(u32, u32, u64)>,
    /// States with at most one valid successor (rows fixed by validity, exempt from PAC).
    #[serde(default)]
    pub determined: Vec<u32>,
}

impl CountsJson {
    /// Parses a counts file's text (`path` names it in errors), compiled once here.
    pub fn from_json(text: &str, path: &std::path::Path) -> Result<CountsJson> {
        Ok(augur_formats::json::parse_json(text, path)?)
    }
}

/// The most transitions [`learn`] and [`learn_with`] make: 2^24 (about 200 MB in memory).
/// Smoothing gives every valid successor of a row an entry, so a spec with many predicates
/// and few validity constraints reaches it quickly (13 unconstrained boolean predicates:
/// 8,192 states, 67 million transitions); [`smoothed_rows`] keeps such a chain implicitly.
pub const MAX_LEARNED_TRANSITIONS: usize = 1 << 24;

/// z for a two-sided 95% interval (the 0.975 quantile of the standard normal).
pub const WILSON_Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z`.
/// With no trials the interval is `[0, 1]`.
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = (successes.min(trials)) as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// What [`learn`] did besides estimating probabilities.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LearnReport {
    /// States with no valid successor, made absorbing with a self-loop.
    pub absorbing: Vec<u32>,
    /// States with valid successors but no observation and α = 0: given the uniform
    /// distribution over their valid successors.
    pub unobserved_uniform: Vec<u32>,
    /// States with a valid self-loop but no observation and α = 0, made absorbing because
    /// [`Unobserved::Absorbing`] was asked for.
    pub unobserved_absorbing: Vec<u32>,
    /// Observed invalid transitions that were dropped.
    pub invalid_dropped: u64,
}

/// A learned chain and the report of how it was made.
#[derive(Clone, Debug)]
pub struct Learned {
    /// The learned DTMC: no labels and no valuations (the caller adds them), initial states the
    /// states traces started in.
    pub dtmc: Dtmc,
    /// The smoothing parameter used.
    pub alpha: f64,
    /// Special cases met.
    pub report: LearnReport,
}

/// What a row with no observation and α = 0 becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unobserved {
    /// The uniform distribution over its valid successors (the default).
    #[default]
    Uniform,
    /// A self-loop, when the self-loop is valid (e.g. states seen only at the end of traces,
    /// where runs stop); uniform otherwise.
    Absorbing,
}

/// Learn a DTMC from counts with validity-aware Laplace smoothing (see the module docs).
///
/// With α = 0 and an observed row, only observed entries are stored (the others are exactly 0);
/// with α > 0 every valid successor gets an entry.
pub fn learn(counts: &TransitionCounts, validity: &dyn Validity, alpha: f64) -> Result<Learned> {
    learn_with(counts, validity, alpha, Unobserved::Uniform)
}

/// [`learn`], choosing what rows without observations become when α = 0. The chain is made
/// from [`smoothed_rows`]; one with more than [`MAX_LEARNED_TRANSITIONS`] transitions is
/// refused (counted before anything is made).
pub fn learn_with(
    counts: &TransitionCounts,
    validity: &dyn Validity,
    alpha: f64,
    unobserved: Unobserved,
) -> Result<Learned> {
    let (rows, report) = smoothed_rows(counts, validity, alpha, unobserved)?;
    let matrix = materialise(&rows, MAX_LEARNED_TRANSITIONS)?;
    Ok(Learned::of_matrix(matrix, counts, alpha, report))
}

impl Learned {
    /// The chain of `matrix` (no labels or rewards yet), starting in the observed initial
    /// states of `counts`.
    pub(crate) fn of_matrix(
        matrix: Matrix,
        counts: &TransitionCounts,
        alpha: f64,
        report: LearnReport,
    ) -> Learned {
        let initial: Vec<u32> = counts.initial.keys().copied().collect();
        Learned {
            dtmc: Dtmc {
                matrix,
                initial,
                labels: Vec::new(),
                rewards: Vec::new(),
                valuations: None,
                exact: None,
                intervals: None,
            },
            alpha,
            report,
        }
    }
}

/// The learned chain kept implicitly: the counts and the smoothing rule (α, what unobserved
/// rows become, each row's valid successors — sets shared between rows, "all states" without
/// listing them when `validity` says so), and the report of what the rule does to each row.
/// Nothing proportional to the smoothed chain's transitions is made; see
/// [`augur_formats::smoothing`] for the rule and [`materialise`] for the matrix.
pub fn smoothed_rows(
    counts: &TransitionCounts,
    validity: &dyn Validity,
    alpha: f64,
    unobserved: Unobserved,
) -> Result<(SmoothedRows, LearnReport)> {
    if !(alpha.is_finite() && alpha >= 0.0) {
        return Err(LearnError::BadAlpha(alpha));
    }
    if counts.initial.is_empty() {
        return Err(LearnError::NoTraces);
    }
    let n = counts.num_states();
    let mut sets: Vec<SuccessorSet> = Vec::new();
    let mut index: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut all: Option<u32> = None;
    let mut successors: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n as u32 {
        let list = if validity.every_successor_valid(i, n) {
            None
        } else {
            Some(validity.valid_successors(i, n)).filter(|v| v.len() < n)
        };
        let k = match list {
            None => *all.get_or_insert_with(|| {
                sets.push(SuccessorSet::All);
                sets.len() as u32 - 1
            }),
            Some(v) => match index.get(&v) {
                Some(&k) => k,
                None => {
                    sets.push(SuccessorSet::List(v.clone()));
                    index.insert(v, sets.len() as u32 - 1);
                    sets.len() as u32 - 1
                }
            },
        };
        successors.push(k);
    }
    let rule = Smoothing {
        alpha,
        unobserved: match unobserved {
            Unobserved::Uniform => UnobservedRule::Uniform,
            Unobserved::Absorbing => UnobservedRule::Absorbing,
        },
        successor_sets: sets,
        successors,
    };
    let triples: Vec<(u32, u32, u64)> = (0..n as u32)
        .flat_map(|i| counts.row(i).map(move |(j, c)| (i, j, c)))
        .collect();
    let rows = SmoothedRows::new(n, rule, &triples).map_err(|e| match e {
        SmoothingError::BadAlpha(a) => LearnError::BadAlpha(a),
        SmoothingError::AlphaTooLarge {
            alpha, successors, ..
        } => LearnError::AlphaTooLarge { alpha, successors },
        e => LearnError::BadCounts(e.to_string()),
    })?;
    let mut report = LearnReport {
        invalid_dropped: counts.invalid_total(),
        ..Default::default()
    };
    for i in 0..n {
        match rows.kind(i) {
            RowKind::NoSuccessor => report.absorbing.push(i as u32),
            RowKind::UnobservedAbsorbing => report.unobserved_absorbing.push(i as u32),
            RowKind::UnobservedUniform => report.unobserved_uniform.push(i as u32),
            _ => {}
        }
    }
    Ok((rows, report))
}

/// The matrix of implicit rows, refused with [`LearnError::TooManyTransitions`] when it
/// would have more than `limit` transitions (counted before anything is allocated).
pub fn materialise(rows: &SmoothedRows, limit: usize) -> Result<Matrix> {
    let n = rows.num_states();
    let transitions = rows.num_transitions();
    if transitions > limit as u64 || transitions > u64::from(u32::MAX) {
        return Err(LearnError::TooManyTransitions {
            transitions,
            states: n,
            limit,
        });
    }
    let mut indptr: Vec<u32> = Vec::with_capacity(n + 1);
    indptr.push(0);
    let mut end = 0u32;
    for i in 0..n {
        end += rows.row_len(i) as u32;
        indptr.push(end);
    }
    let mut indices: Vec<u32> = Vec::with_capacity(transitions as usize);
    let mut data: Vec<f64> = Vec::with_capacity(transitions as usize);
    rows.for_each_entry(|_, j, p| {
        indices.push(j);
        data.push(p);
    });
    Matrix::try_new((n, n), indptr, indices, data)
        .map_err(|(_, _, _, e)| LearnError::BadCounts(format!("matrix structure: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row_sum(d: &Dtmc, i: usize) -> f64 {
        d.matrix
            .outer_view(i)
            .map(|r| r.data().iter().sum())
            .unwrap_or(0.0)
    }

    #[test]
    fn merging_counts_never_wraps() {
        let counts = |transitions: Vec<(u32, u32, u64)>, traces: u64| {
            TransitionCounts::from_json(&CountsJson {
                num_states: 2,
                traces,
                steps: 0,
                initial: vec![(0, 1)],
                transitions,
                invalid: vec![],
                determined: vec![],
            })
            .unwrap()
        };
        let big = counts(vec![(0, 1, u64::MAX)], 1);
        // The same transition: its count would wrap.
        let mut a = big.clone();
        let e = a.merge(&counts(vec![(0, 1, 1)], 1)).unwrap_err();
        assert!(e.to_string().contains("transition 0 -> 1"), "{e}");
        assert_eq!(a, big, "a failed merge changes nothing");
        // Another transition of the same row: the row's total would wrap.
        let e = a.merge(&counts(vec![(0, 0, 1)], 1)).unwrap_err();
        assert!(
            e.to_string().contains("the transitions from state 0"),
            "{e}"
        );
        // The number of traces.
        let e = a.merge(&counts(vec![], u64::MAX)).unwrap_err();
        assert!(e.to_string().contains("traces"), "{e}");
        assert_eq!(a, big);
        // Sums that fit are added.
        a.merge(&counts(vec![(1, 0, 2)], 1)).unwrap();
        assert_eq!((a.count(0, 1), a.count(1, 0), a.traces()), (u64::MAX, 2, 2));
    }

    #[test]
    fn alpha_zero_gives_empirical_frequencies() {
        let mut c = TransitionCounts::new(3);
        // Row 0: 0->1 three times, 0->2 once.
        c.observe_trace(&[0, 1], &AllValid);
        c.observe_trace(&[0, 1], &AllValid);
        c.observe_trace(&[0, 1], &AllValid);
        c.observe_trace(&[0, 2, 2], &AllValid);
        let l = learn(&c, &AllValid, 0.0).unwrap();
        assert_eq!(l.dtmc.matrix.get(0, 1).copied(), Some(0.75));
        assert_eq!(l.dtmc.matrix.get(0, 2).copied(), Some(0.25));
        assert_eq!(l.dtmc.matrix.get(0, 0), None);
        // State 1 was never left: uniform over its 3 valid successors.
        assert_eq!(l.report.unobserved_uniform, vec![1]);
        assert_eq!(l.dtmc.matrix.get(1, 2).copied(), Some(1.0 / 3.0));
        assert_eq!(l.dtmc.matrix.get(2, 2).copied(), Some(1.0));
        assert_eq!(l.dtmc.initial, vec![0]);
    }

    #[test]
    fn alpha_positive_is_count_plus_alpha_over_total_plus_alpha_times_valid() {
        // Valid: j >= i (a monotone chain 0 -> 1 -> 2).
        let valid = |f: u32, t: u32| t >= f;
        let mut c = TransitionCounts::new(3);
        c.observe_trace(&[0, 0, 1, 2], &valid);
        c.observe_trace(&[0, 1, 0], &valid); // 1 -> 0 is invalid: dropped
        let alpha = 0.5;
        let l = learn(&c, &valid, alpha).unwrap();
        assert_eq!(l.report.invalid_dropped, 1);
        // Row 0: counts 0->0: 1, 0->1: 2, 0->2: 0; 3 valid successors.
        let tot = 3.0 + alpha * 3.0;
        assert_eq!(l.dtmc.matrix.get(0, 0).copied(), Some((1.0 + alpha) / tot));
        assert_eq!(l.dtmc.matrix.get(0, 1).copied(), Some((2.0 + alpha) / tot));
        assert_eq!(l.dtmc.matrix.get(0, 2).copied(), Some(alpha / tot));
        // Row 1: 1->2 once; valid successors {1, 2}; 1 -> 0 invalid gets no entry at all.
        let tot1 = 1.0 + alpha * 2.0;
        assert_eq!(l.dtmc.matrix.get(1, 0), None);
        assert_eq!(l.dtmc.matrix.get(1, 1).copied(), Some(alpha / tot1));
        assert_eq!(l.dtmc.matrix.get(1, 2).copied(), Some((1.0 + alpha) / tot1));
        for i in 0..3 {
            assert!((row_sum(&l.dtmc, i) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn unobserved_rows_can_be_absorbing() {
        let mut c = TransitionCounts::new(3);
        c.observe_trace(&[0, 1], &AllValid);
        c.observe_trace(&[0, 2], &AllValid);
        // 2 may not loop: it stays uniform over {0, 1}.
        let valid = |f: u32, t: u32| !(f == 2 && t == 2);
        let l = learn_with(&c, &valid, 0.0, Unobserved::Absorbing).unwrap();
        assert_eq!(l.report.unobserved_absorbing, vec![1]);
        assert_eq!(l.report.unobserved_uniform, vec![2]);
        assert_eq!(l.dtmc.matrix.get(1, 1).copied(), Some(1.0));
        assert_eq!(l.dtmc.matrix.get(2, 0).copied(), Some(0.5));
        // With α > 0 the option changes nothing: every valid successor gets α.
        let l = learn_with(&c, &valid, 1.0, Unobserved::Absorbing).unwrap();
        assert_eq!(l.dtmc.matrix.get(1, 0).copied(), Some(1.0 / 3.0));
    }

    #[test]
    fn no_valid_successor_is_absorbing() {
        let valid = |f: u32, _t: u32| f == 0;
        let mut c = TransitionCounts::new(2);
        c.observe_trace(&[0, 1, 0], &valid);
        let l = learn(&c, &valid, 1.0).unwrap();
        assert_eq!(l.report.absorbing, vec![1]);
        assert_eq!(l.dtmc.matrix.get(1, 1).copied(), Some(1.0));
        assert_eq!(l.dtmc.matrix.get(1, 0), None);
        assert_eq!(l.report.invalid_dropped, 1);
    }

    #[test]
    fn errors() {
        let c = TransitionCounts::new(2);
        assert!(matches!(
            learn(&c, &AllValid, 0.0),
            Err(LearnError::NoTraces)
        ));
        let mut c = TransitionCounts::new(2);
        c.observe_trace(&[0], &AllValid);
        assert!(matches!(
            learn(&c, &AllValid, -1.0),
            Err(LearnError::BadAlpha(_))
        ));
        assert!(matches!(
            learn(&c, &AllValid, f64::NAN),
            Err(LearnError::BadAlpha(_))
        ));
        let mut c = TransitionCounts::new(2);
        assert!(matches!(
            c.try_observe_trace(&[0, 5], &AllValid),
            Err(LearnError::StateOutOfRange { index: 5, .. })
        ));
        assert_eq!(c.traces(), 0);
    }

    #[test]
    fn wilson_known_values() {
        // Independent reference: for 0 successes out of n, the Wilson upper bound is
        // z²/(n + z²) (the centre and half-width coincide). n = 10, z = 1.96: 3.8416/13.8416.
        let (lo, hi) = wilson_interval(0, 10, 1.96);
        assert!(lo.abs() < 1e-15);
        assert!((hi - 3.8416 / 13.8416).abs() < 1e-12);
        // Symmetry: k of n and n-k of n are mirror images.
        let (a, b) = wilson_interval(3, 20, WILSON_Z95);
        let (c, d) = wilson_interval(17, 20, WILSON_Z95);
        assert!((a - (1.0 - d)).abs() < 1e-12 && (b - (1.0 - c)).abs() < 1e-12);
        assert_eq!(wilson_interval(0, 0, WILSON_Z95), (0.0, 1.0));
    }

    #[test]
    fn counts_json_round_trip() {
        let valid = |f: u32, t: u32| t >= f;
        let mut c = TransitionCounts::new(4);
        c.observe_trace(&[0, 1, 3, 2], &valid);
        c.observe_trace(&[1, 1], &valid);
        c.mark_determined(&valid);
        assert_eq!(c.determined().iter().copied().collect::<Vec<_>>(), vec![3]);
        let back = TransitionCounts::from_json(&c.to_json()).unwrap();
        assert_eq!(back, c);
        let mut bad = c.to_json();
        bad.transitions.push((9, 0, 1));
        assert!(TransitionCounts::from_json(&bad).is_err());
    }

    proptest! {
        #[test]
        fn rows_sum_to_one_and_invalid_get_zero(
            traces in proptest::collection::vec(proptest::collection::vec(0u32..6, 0..12), 1..8),
            alpha in prop_oneof![Just(0.0), 0.0f64..3.0],
        ) {
            // Valid: |from - to| <= 2 and not (from = 5, to != 5).
            let valid = |f: u32, t: u32| f.abs_diff(t) <= 2 && !(f == 5 && t != 5);
            let mut c = TransitionCounts::new(6);
            for t in &traces {
                c.observe_trace(t, &valid);
            }
            prop_assume!(!c.initial().is_empty());
            let l = learn(&c, &valid, alpha).unwrap();
            for i in 0..6u32 {
                prop_assert!((row_sum(&l.dtmc, i as usize) - 1.0).abs() < 1e-12);
                for j in 0..6u32 {
                    if !valid(i, j) && !l.report.absorbing.contains(&i) {
                        prop_assert!(l.dtmc.matrix.get(i as usize, j as usize).is_none());
                    }
                }
            }
        }
    }

    /// `learn_with` as it was before rows were kept implicitly (the dense materialisation,
    /// row by row), the reference the implicit rows must reproduce bit for bit.
    fn reference_learn_with(
        counts: &TransitionCounts,
        validity: &dyn Validity,
        alpha: f64,
        unobserved: Unobserved,
    ) -> Result<Learned> {
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(LearnError::BadAlpha(alpha));
        }
        if counts.initial.is_empty() {
            return Err(LearnError::NoTraces);
        }
        let n = counts.num_states();
        let mut report = LearnReport {
            invalid_dropped: counts.invalid_total(),
            ..Default::default()
        };
        let mut indptr: Vec<u32> = Vec::with_capacity(n + 1);
        let mut indices: Vec<u32> = Vec::new();
        let mut data: Vec<f64> = Vec::new();
        indptr.push(0);
        for i in 0..n as u32 {
            let row = &counts.rows[i as usize];
            let observed: u64 = row.values().sum();
            if alpha == 0.0 && observed > 0 {
                // Empirical frequencies; the counted transitions are valid by construction.
                let total = observed as f64;
                for (&j, &c) in row {
                    indices.push(j);
                    data.push(c as f64 / total);
                }
            } else {
                let succ = validity.valid_successors(i, n);
                if succ.is_empty() {
                    report.absorbing.push(i);
                    indices.push(i);
                    data.push(1.0);
                } else if observed == 0
                    && alpha == 0.0
                    && unobserved == Unobserved::Absorbing
                    && succ.binary_search(&i).is_ok()
                {
                    report.unobserved_absorbing.push(i);
                    indices.push(i);
                    data.push(1.0);
                } else if observed == 0 && alpha == 0.0 {
                    report.unobserved_uniform.push(i);
                    let p = 1.0 / succ.len() as f64;
                    for j in succ {
                        indices.push(j);
                        data.push(p);
                    }
                } else {
                    let total = observed as f64 + alpha * succ.len() as f64;
                    for j in succ {
                        let c = row.get(&j).copied().unwrap_or(0) as f64;
                        indices.push(j);
                        data.push((c + alpha) / total);
                    }
                }
            }
            indptr.push(indices.len() as u32);
        }
        let matrix = Matrix::try_new((n, n), indptr, indices, data)
            .map_err(|(_, _, _, e)| LearnError::BadCounts(format!("matrix structure: {e}")))?;
        Ok(Learned::of_matrix(matrix, counts, alpha, report))
    }

    proptest! {
        #[test]
        fn implicit_rows_materialise_as_the_dense_learner_did(
            n in 1usize..7,
            valid_bits in proptest::collection::vec(any::<bool>(), 49),
            traces in proptest::collection::vec(proptest::collection::vec(0u32..7, 1..10), 1..6),
            alpha in prop_oneof![Just(0.0), Just(0.1), Just(1.0), 0.0f64..3.0],
            absorbing in any::<bool>(),
        ) {
            let valid = |f: u32, t: u32| valid_bits[f as usize * 7 + t as usize];
            let mut c = TransitionCounts::new(n);
            for t in &traces {
                let t: Vec<u32> = t.iter().map(|&s| s % n as u32).collect();
                c.observe_trace(&t, &valid);
            }
            let unobserved = if absorbing { Unobserved::Absorbing } else { Unobserved::Uniform };
            let want = reference_learn_with(&c, &valid, alpha, unobserved).unwrap();
            let got = learn_with(&c, &valid, alpha, unobserved).unwrap();
            let (gp, wp) = (got.dtmc.matrix.indptr(), want.dtmc.matrix.indptr());
            prop_assert_eq!(gp.raw_storage(), wp.raw_storage());
            prop_assert_eq!(got.dtmc.matrix.indices(), want.dtmc.matrix.indices());
            let bits = |d: &[f64]| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(got.dtmc.matrix.data()), bits(want.dtmc.matrix.data()));
            prop_assert_eq!(&got.report, &want.report);
            prop_assert_eq!(&got.dtmc.initial, &want.dtmc.initial);
            // The count of transitions made without making them.
            let (rows, _) = smoothed_rows(&c, &valid, alpha, unobserved).unwrap();
            prop_assert_eq!(rows.num_transitions(), want.dtmc.matrix.nnz() as u64);
        }
    }
}
