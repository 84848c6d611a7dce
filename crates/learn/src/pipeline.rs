//! From a trace file to learned models: read traces (with or without an abstraction spec),
//! map their steps to abstract states, count transitions (by category if asked), learn one
//! DTMC per group, and write each as Augur JSON with its transition counts (which `pac` reads).
//!
//! ```
//! use augur_abstraction::{TraceFormat, TraceReader};
//! use augur_learn::pipeline::{learn_from_traces, LearnOptions};
//! let traces = "{\"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}]}\n\
//!               {\"steps\": [{\"state\": \"a\"}, {\"state\": \"a\"}]}\n";
//! let reader = TraceReader::new(traces.as_bytes(), TraceFormat::JsonLines, "t.jsonl");
//! let outcome = learn_from_traces(reader, "t.jsonl", None, &LearnOptions::default()).unwrap();
//! let model = &outcome.models[0];
//! assert_eq!(model.state_names, ["a", "b"]);
//! let dtmc = model.to_dtmc(augur_learn::learn::MAX_LEARNED_TRANSITIONS).unwrap();
//! assert_eq!(dtmc.matrix.get(0, 1).copied(), Some(0.5));
//! ```
//!
//! With [`LearnOptions::order`] `k > 1` the learned chain is of order k, built as a first-order
//! chain over k-tuples of states (SafetyDrift's product embedding): the state after step i is
//! the tuple of the last `min(k, i+1)` abstract states, named `(a,b)`; a tuple moves only to the
//! tuples that extend it by one state (and, with a spec, only by a valid transition of its last
//! state); a tuple has the labels and valuation of its last state, so properties written for
//! the first-order chain apply unchanged.

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use augur_abstraction::{Abstraction, StepKind, Trace};
use augur_dtmc::{Dtmc, StateSet, Valuations};
use augur_expr::{Type, Value};
use augur_formats::json::{write_json_document, DtmcJson};
use augur_formats::smoothing::SmoothedRows;

use crate::counts::{GroupCounts, KeyedCounts, StateKey};
use crate::end_state::{self, EndValidity};
use crate::error::{LearnError, Result};
use crate::intervals::LearnedIntervals;
pub use crate::jsonl::ReadProgress;
use crate::learn::{
    smoothed_rows, AllValid, CountsJson, LearnReport, TransitionCounts, Unobserved, Validity,
};

/// How to learn from a trace file.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnOptions {
    /// Laplace smoothing parameter α ≥ 0, added to every valid transition of every row.
    pub alpha: f64,
    /// One model per trace category (traces without one are `uncategorized`).
    pub by_category: bool,
    /// Skip bad trace lines (and traces with bad steps), listing them, instead of failing.
    pub skip_invalid: bool,
    /// What a state that is never left (seen only where traces end) becomes with α = 0.
    pub unobserved: Unobserved,
    /// The chain's order k (1: an ordinary chain; k > 1: a chain over k-tuples of states).
    pub order: usize,
    /// Model trace ends: every trace's last state moves to an extra absorbing state of this
    /// name (labelled with it; see [`crate::end_state`]).
    pub end_state: Option<String>,
}

impl Default for LearnOptions {
    fn default() -> Self {
        LearnOptions {
            alpha: 0.0,
            by_category: false,
            skip_invalid: false,
            unobserved: Unobserved::Uniform,
            order: 1,
            end_state: None,
        }
    }
}

/// A skipped trace or line (with [`LearnOptions::skip_invalid`]).
#[derive(Debug)]
pub struct Skipped {
    /// Its line (0 when unknown).
    pub line: usize,
    /// Why it was skipped (located).
    pub error: LearnError,
}

/// One learned model, its rows kept implicitly (the counts and the smoothing rule; see
/// [`LearnedModel::to_dtmc`] for the chain itself).
#[derive(Debug)]
pub struct LearnedModel {
    /// Its category (with [`LearnOptions::by_category`]).
    pub category: Option<String>,
    /// The rows: the observed counts and the smoothing rule.
    pub rows: SmoothedRows,
    /// The labels (the spec's labels and predicates, or one label per named state).
    pub labels: Vec<(String, StateSet)>,
    /// The valuations (the predicates' values), when learned with a spec.
    pub valuations: Option<Valuations>,
    /// The initial states: those traces started in.
    pub initial: Vec<u32>,
    /// The transition counts it was learned from.
    pub counts: TransitionCounts,
    /// What the learner did to unobserved and dead-end states.
    pub report: LearnReport,
    /// The name of each state: `{a,b}` (the true predicates) with a spec, the trace's name
    /// without.
    pub state_names: Vec<String>,
    /// With [`LearnedModel::learn_intervals`]: the model is the interval DTMC of these rows
    /// (see [`crate::intervals`]) instead of the smoothed chain.
    pub intervals: Option<LearnedIntervals>,
}

/// The most transitions a learned model's file lists explicitly (`transitions`); a model
/// with more is written with its rows implicit (`smoothing` over the `counts`).
pub const MAX_EXPLICIT_TRANSITIONS: u64 = 1 << 16;

impl LearnedModel {
    /// The number of states.
    pub fn num_states(&self) -> usize {
        self.rows.num_states()
    }

    /// The number of transitions of the smoothed chain (counted, not made).
    pub fn num_transitions(&self) -> u64 {
        self.rows.num_transitions()
    }

    /// The chain (the interval DTMC with [`Self::learn_intervals`]), with its labels and
    /// valuations; refused with [`LearnError::TooManyTransitions`] when it has more than
    /// `limit` transitions.
    pub fn to_dtmc(&self, limit: usize) -> Result<Dtmc> {
        if let Some(iv) = &self.intervals {
            if iv.num_transitions() > limit {
                return Err(LearnError::TooManyTransitions {
                    transitions: iv.num_transitions() as u64,
                    states: self.num_states(),
                    limit,
                });
            }
            return iv.to_dtmc(self.shell());
        }
        let mut d = self.shell();
        d.matrix = crate::learn::materialise(&self.rows, limit)?;
        Ok(d)
    }

    /// Makes this model the interval DTMC whose intervals hold simultaneously with
    /// `confidence` (see [`crate::intervals`]), from its counts and valid successors (α and
    /// the rule for unobserved rows play no part). Refused when it would have more than
    /// [`crate::learn::MAX_LEARNED_TRANSITIONS`] transitions.
    pub fn learn_intervals(&mut self, confidence: f64) -> Result<()> {
        let iv = crate::intervals::learn_intervals(
            &self.rows,
            confidence,
            crate::learn::MAX_LEARNED_TRANSITIONS,
        )?;
        // Checked here, so that writing the model cannot fail (and fall back to the point
        // model) later.
        iv.to_dtmc(self.shell())?;
        self.intervals = Some(iv);
        Ok(())
    }

    /// The model without its transitions (every row empty): labels, valuations, initial
    /// states.
    fn shell(&self) -> Dtmc {
        shell(
            self.num_states(),
            self.initial.clone(),
            self.labels.clone(),
            self.valuations.clone(),
        )
    }
}

/// A chain of `n` states without transitions, to carry labels and valuations.
fn shell(
    n: usize,
    initial: Vec<u32>,
    labels: Vec<(String, StateSet)>,
    valuations: Option<Valuations>,
) -> Dtmc {
    Dtmc {
        matrix: augur_dtmc::Matrix::new((n, n), vec![0; n + 1], Vec::new(), Vec::new()),
        initial,
        labels,
        rewards: Vec::new(),
        valuations,
        exact: None,
        intervals: None,
    }
}

/// What [`learn_from_traces`] read and learned.
#[derive(Debug)]
pub struct LearnOutcome {
    /// Traces read (including those of categories that were then empty).
    pub traces_read: u64,
    /// Skipped lines and traces.
    pub skipped: Vec<Skipped>,
    /// The learned models, in category order (one without `by_category`).
    pub models: Vec<LearnedModel>,
}

/// One model being learned: its counts and, without a spec, its state names; for order
/// k > 1 the tuples of abstract states that are its states.
#[derive(Default)]
struct Group {
    counts: TransitionCounts,
    names: Vec<String>,
    index: FxHashMap<String, u32>,
    tuples: Vec<Vec<u32>>,
    tuple_index: HashMap<Vec<u32>, u32>,
    /// The last state of each trace → how many traces ended there.
    ends: BTreeMap<u32, u64>,
    /// Traces of a first-order chain without a spec counted but not yet in `counts`.
    dense: DenseCounts,
}

/// The traces of a first-order chain without a spec (every move valid), counted in dense
/// arrays before they are added to a group's [`TransitionCounts`] at once ([`Group::flush`]):
/// a map entry per step would cost more than reading the step.
#[derive(Default)]
struct DenseCounts {
    /// States `0..side` fit (0: nothing counted yet).
    side: usize,
    /// `pairs[from * side + to]`: transitions counted.
    pairs: Vec<u64>,
    initial: Vec<u64>,
    ends: Vec<u64>,
    traces: u64,
    steps: u64,
}

impl DenseCounts {
    /// Counts a non-empty trace whose states are all below `side`.
    #[inline]
    fn observe(&mut self, states: &[u32]) {
        let (Some(&first), Some(&last)) = (states.first(), states.last()) else {
            return;
        };
        self.traces += 1;
        self.steps += states.len() as u64;
        self.initial[first as usize] += 1;
        self.ends[last as usize] += 1;
        let side = self.side;
        for w in states.windows(2) {
            self.pairs[w[0] as usize * side + w[1] as usize] += 1;
        }
    }
}

impl Group {
    /// Adds the traces counted in [`Self::dense`] to the counts (and the ends), emptying it.
    fn flush(&mut self) -> Result<()> {
        let d = &mut self.dense;
        if d.traces == 0 {
            return Ok(());
        }
        let side = d.side;
        let nonzero = |v: &[u64]| -> Vec<(u32, u64)> {
            v.iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(s, &c)| (s as u32, c))
                .collect()
        };
        let json = CountsJson {
            // (Every state counted is below the number of states: see `observe_dense`.)
            num_states: self.counts.num_states(),
            traces: d.traces,
            steps: d.steps,
            initial: nonzero(&d.initial),
            transitions: d
                .pairs
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(i, &c)| ((i / side) as u32, (i % side) as u32, c))
                .collect(),
            invalid: Vec::new(),
            determined: Vec::new(),
        };
        for (s, c) in nonzero(&d.ends) {
            let e = self.ends.entry(s).or_insert(0);
            *e = e
                .checked_add(c)
                .ok_or_else(|| LearnError::BadCounts("the counts add up past 2^64 - 1".into()))?;
        }
        d.pairs.fill(0);
        d.initial.fill(0);
        d.ends.fill(0);
        d.traces = 0;
        d.steps = 0;
        self.counts.merge(&TransitionCounts::from_json(&json)?)?;
        Ok(())
    }

    /// Counts a trace of a first-order chain without a spec (its states numbered, below
    /// `names.len()`, and the counts grown to that many states) densely, while there are at most [`DENSE_PAIRS_MAX_STATES`] states;
    /// `false` when it was not counted (too many states).
    fn observe_dense(&mut self, states: &[u32]) -> Result<bool> {
        let n = self.names.len();
        if n > DENSE_PAIRS_MAX_STATES {
            self.flush()?;
            return Ok(false);
        }
        if n > self.dense.side {
            self.flush()?;
            let side = n.next_power_of_two().clamp(16, DENSE_PAIRS_MAX_STATES);
            self.dense = DenseCounts {
                side,
                pairs: vec![0; side * side],
                initial: vec![0; side],
                ends: vec![0; side],
                ..DenseCounts::default()
            };
        }
        self.dense.observe(states);
        Ok(true)
    }

    /// The names of the base (first-order) states: the spec's, or those seen.
    fn base_names(&self, spec: Option<&Abstraction>) -> Vec<String> {
        match spec {
            Some(a) => a.valid_states().iter().map(|&c| a.state_name(c)).collect(),
            None => self.names.clone(),
        }
    }

    /// The counts keyed by state name (see [`crate::counts`]).
    fn to_keyed(
        &self,
        category: Option<String>,
        spec: Option<&Abstraction>,
        k: usize,
    ) -> GroupCounts {
        let base = self.base_names(spec);
        let key = |i: u32| -> StateKey {
            if k > 1 {
                StateKey::Tuple(
                    self.tuples[i as usize]
                        .iter()
                        .map(|&s| base[s as usize].clone())
                        .collect(),
                )
            } else {
                StateKey::Name(base[i as usize].clone())
            }
        };
        let j = self.counts.to_json();
        let mut initial: Vec<_> = j.initial.iter().map(|&(s, c)| (key(s), c)).collect();
        let mut transitions: Vec<_> = j
            .transitions
            .iter()
            .map(|&(f, t, c)| (key(f), key(t), c))
            .collect();
        let mut invalid: Vec<_> = j
            .invalid
            .iter()
            .map(|&(f, t, c)| (key(f), key(t), c))
            .collect();
        let mut ends: Vec<_> = self.ends.iter().map(|(&s, &c)| (key(s), c)).collect();
        initial.sort();
        transitions.sort();
        invalid.sort();
        ends.sort();
        GroupCounts {
            category,
            traces: self.counts.traces(),
            steps: self.counts.steps(),
            states: (0..self.counts.num_states() as u32).map(key).collect(),
            initial,
            transitions,
            invalid,
            ends,
        }
    }

    /// Adds the counts of `later` (counted by another [`Counter`] over the traces that follow
    /// this group's in the file): its base states (names, unless `spec`) and, for order
    /// `k > 1`, its tuples are numbered after this group's in the order `later` met them, as
    /// one group counting both parts in order would number them.
    fn absorb(&mut self, later: Group, spec: bool, k: usize) {
        let base: Vec<u32> = if spec {
            Vec::new()
        } else {
            later
                .names
                .into_iter()
                .map(|name| match self.index.get(&name) {
                    Some(&i) => i,
                    None => {
                        let i = self.names.len() as u32;
                        self.index.insert(name.clone(), i);
                        self.names.push(name);
                        i
                    }
                })
                .collect()
        };
        let base_of = |b: u32| if spec { b } else { base[b as usize] };
        let map: Vec<u32> = if k > 1 {
            later
                .tuples
                .iter()
                .map(|t| {
                    let t: Vec<u32> = t.iter().map(|&b| base_of(b)).collect();
                    match self.tuple_index.get(&t) {
                        Some(&i) => i,
                        None => {
                            let i = self.tuples.len() as u32;
                            self.tuples.push(t.clone());
                            self.tuple_index.insert(t, i);
                            i
                        }
                    }
                })
                .collect()
        } else if spec {
            (0..later.counts.num_states() as u32).collect()
        } else {
            base
        };
        if k > 1 {
            self.counts.ensure_states(self.tuples.len());
        } else if !spec {
            self.counts.ensure_states(self.names.len());
        }
        self.counts.merge_mapped(&later.counts, &map);
        for (s, c) in later.ends {
            *self.ends.entry(map[s as usize]).or_insert(0) += c;
        }
    }

    /// Adds keyed counts to this group: their states numbered after the group's own, in the
    /// order listed (with a spec, `spec_index` maps a name to the spec's state).
    fn add_keyed(
        &mut self,
        g: &GroupCounts,
        spec_index: Option<&HashMap<String, u32>>,
        k: usize,
    ) -> Result<()> {
        let names = &mut self.names;
        let index = &mut self.index;
        let mut base = |name: &str| -> Result<u32> {
            match spec_index {
                Some(m) => m.get(name).copied().ok_or_else(|| {
                    LearnError::BadCounts(format!(
                        "state `{name}` is not a state of the abstraction spec"
                    ))
                }),
                None => Ok(match index.get(name) {
                    Some(&i) => i,
                    None => {
                        let i = names.len() as u32;
                        names.push(name.to_string());
                        index.insert(name.to_string(), i);
                        i
                    }
                }),
            }
        };
        let mut local: HashMap<&StateKey, u32> = HashMap::with_capacity(g.states.len());
        for s in &g.states {
            let i = match s {
                StateKey::Name(n) if k == 1 => base(n)?,
                StateKey::Tuple(t) if k > 1 && (1..=k).contains(&t.len()) => {
                    let t: Vec<u32> = t.iter().map(|n| base(n)).collect::<Result<_>>()?;
                    match self.tuple_index.get(&t) {
                        Some(&i) => i,
                        None => {
                            let i = self.tuples.len() as u32;
                            self.tuples.push(t.clone());
                            self.tuple_index.insert(t, i);
                            i
                        }
                    }
                }
                s => {
                    return Err(LearnError::BadCounts(format!(
                        "state {} does not fit a chain of order {k}",
                        s.display()
                    )))
                }
            };
            local.insert(s, i);
        }
        if k > 1 {
            self.counts.ensure_states(self.tuples.len());
        } else if spec_index.is_none() {
            self.counts.ensure_states(self.names.len());
        }
        let idx = |s: &StateKey| -> Result<u32> {
            local.get(s).copied().ok_or_else(|| {
                LearnError::BadCounts(format!(
                    "state {} is counted but not listed in `states`",
                    s.display()
                ))
            })
        };
        let json = CountsJson {
            num_states: self.counts.num_states(),
            traces: g.traces,
            steps: g.steps,
            initial: g
                .initial
                .iter()
                .map(|(s, c)| Ok((idx(s)?, *c)))
                .collect::<Result<_>>()?,
            transitions: g
                .transitions
                .iter()
                .map(|(f, t, c)| Ok((idx(f)?, idx(t)?, *c)))
                .collect::<Result<_>>()?,
            invalid: g
                .invalid
                .iter()
                .map(|(f, t, c)| Ok((idx(f)?, idx(t)?, *c)))
                .collect::<Result<_>>()?,
            determined: Vec::new(),
        };
        let counts = TransitionCounts::from_json(&json)?;
        self.counts.merge(&counts)?;
        for (s, c) in &g.ends {
            let e = self.ends.entry(idx(s)?).or_insert(0);
            *e = e
                .checked_add(*c)
                .ok_or_else(|| LearnError::BadCounts("the counts add up past 2^64 - 1".into()))?;
        }
        Ok(())
    }
}

impl Group {
    /// Counts a trace of base states `states` in a chain of order `k` > 1: its states are the
    /// tuples of the last k base states.
    fn observe_tuples(
        &mut self,
        states: &[u32],
        k: usize,
        validity: &dyn Validity,
        tuple_buf: &mut Vec<u32>,
    ) -> Result<()> {
        tuple_buf.clear();
        for i in 0..states.len() {
            let t = &states[(i + 1).saturating_sub(k)..=i];
            let id = match self.tuple_index.get(t) {
                Some(&id) => id,
                None => {
                    let id = self.tuples.len() as u32;
                    self.tuples.push(t.to_vec());
                    self.tuple_index.insert(t.to_vec(), id);
                    id
                }
            };
            tuple_buf.push(id);
        }
        self.counts.ensure_states(self.tuples.len());
        let tv = TupleValidity {
            tuples: &self.tuples,
            order: k,
            base: validity,
        };
        self.counts.try_observe_trace(tuple_buf, &tv)?;
        count_end(&mut self.ends, tuple_buf);
        Ok(())
    }
}

/// Validity of a k-th order chain over tuples: `j` extends `i` by one state, by a move that
/// is valid between their last states.
struct TupleValidity<'a> {
    tuples: &'a [Vec<u32>],
    order: usize,
    base: &'a dyn Validity,
}

impl TupleValidity<'_> {
    fn valid(&self, i: u32, j: u32) -> bool {
        let (Some(ti), Some(tj)) = (self.tuples.get(i as usize), self.tuples.get(j as usize))
        else {
            return false;
        };
        let keep = ti.len().min(self.order - 1);
        let (Some(&a), Some(&b)) = (ti.last(), tj.last()) else {
            return false;
        };
        tj.len() == keep + 1
            && tj[..keep] == ti[ti.len() - keep..]
            && self.base.is_valid_transition(a, b)
    }
}

impl Validity for TupleValidity<'_> {
    fn is_valid_transition(&self, from: u32, to: u32) -> bool {
        self.valid(from, to)
    }
    fn valid_successors(&self, from: u32, num_states: usize) -> Vec<u32> {
        (0..num_states as u32)
            .filter(|&to| self.valid(from, to))
            .collect()
    }
    fn num_valid_successors(&self, from: u32, num_states: usize) -> usize {
        (0..num_states as u32)
            .filter(|&to| self.valid(from, to))
            .count()
    }
}

/// The validity of a spec on state indices, knowing when every move is valid.
struct SpecValidity<'a>(&'a Abstraction);

impl Validity for SpecValidity<'_> {
    fn is_valid_transition(&self, from: u32, to: u32) -> bool {
        self.0.is_valid_transition_idx(from, to)
    }
    fn every_successor_valid(&self, from: u32, num_states: usize) -> bool {
        // The states are the spec's valid states: without transition constraints every one
        // may follow every other.
        !self.0.constrains_transitions()
            && num_states <= self.0.num_states()
            && (from as usize) < num_states
    }
}

/// Checks the options that do not depend on the traces, before reading any.
pub(crate) fn check_options(opts: &LearnOptions) -> Result<()> {
    if !(opts.alpha.is_finite() && opts.alpha >= 0.0) {
        return Err(LearnError::BadAlpha(opts.alpha));
    }
    if !(1..=8).contains(&opts.order) {
        return Err(LearnError::BadOrder(opts.order));
    }
    if let Some(name) = &opts.end_state {
        end_state::check_name(name)?;
    }
    Ok(())
}

/// Counts the traces of `reader` by group (category key), as every learner does. `reader` is
/// an [`augur_abstraction::TraceReader`] or any other source of traces (e.g. the rows of a
/// Parquet step table).
fn count_groups<I: IntoIterator<Item = augur_abstraction::Result<Trace>>>(
    reader: I,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<Counted> {
    check_options(opts)?;
    let mut counter = Counter::new(spec, opts);
    for item in reader {
        counter.add(item, file)?;
    }
    counter.finish(file)
}

/// Counts traces one at a time, by group: what [`count_groups`] does for a whole file, and
/// each thread of the parallel JSON Lines reader ([`crate::jsonl`]) for its part of the
/// file, the parts' counters then [absorbed](Counter::absorb) in file order.
pub(crate) struct Counter<'s> {
    spec: Option<&'s Abstraction>,
    opts: &'s LearnOptions,
    spec_validity: Option<SpecValidity<'s>>,
    /// The groups by key, in the order met; the index of each key; the last group counted
    /// into (the next trace is most often of the same group).
    groups: Vec<(String, Group)>,
    group_index: FxHashMap<String, usize>,
    last_group: usize,
    skipped: Vec<Skipped>,
    traces_read: u64,
    /// Scratch buffers, reused from trace to trace.
    states_buf: Vec<u32>,
    tuple_buf: Vec<u32>,
    new_names: Vec<String>,
}

impl<'s> Counter<'s> {
    /// An empty counter (the options checked by [`check_options`]).
    pub(crate) fn new(spec: Option<&'s Abstraction>, opts: &'s LearnOptions) -> Self {
        Counter {
            spec,
            opts,
            spec_validity: spec.map(SpecValidity),
            groups: Vec::new(),
            group_index: FxHashMap::default(),
            last_group: 0,
            skipped: Vec::new(),
            traces_read: 0,
            states_buf: Vec::new(),
            tuple_buf: Vec::new(),
            new_names: Vec::new(),
        }
    }

    /// The index in `groups` of the group of `category` (created empty if new).
    fn group_of(&mut self, category: Option<&str>) -> usize {
        let key = if self.opts.by_category {
            category.unwrap_or("uncategorized")
        } else {
            ""
        };
        if let Some((k, _)) = self.groups.get(self.last_group) {
            if k.len() == key.len() && (key.is_empty() || k == key) {
                return self.last_group;
            }
        }
        let i = match self.group_index.get(key) {
            Some(&i) => i,
            None => {
                let spec = self.spec;
                let counts = TransitionCounts::new(if self.opts.order > 1 {
                    0
                } else {
                    spec.map_or(0, |a| a.num_states())
                });
                self.groups.push((
                    key.to_string(),
                    Group {
                        counts,
                        ..Default::default()
                    },
                ));
                self.group_index
                    .insert(key.to_string(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        self.last_group = i;
        i
    }

    /// Counts one trace (or records its error): nothing of a trace is counted unless all
    /// its steps map. An error is returned unless [`LearnOptions::skip_invalid`].
    pub(crate) fn add(&mut self, item: augur_abstraction::Result<Trace>, file: &str) -> Result<()> {
        let opts = self.opts;
        let trace = match item {
            Ok(t) => t,
            Err(e) if opts.skip_invalid => {
                let error = LearnError::from(e);
                self.skipped.push(Skipped {
                    line: error.line(),
                    error,
                });
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        self.traces_read += 1;
        let spec = self.spec;
        let gi = self.group_of(trace.category.as_deref());
        let group = &mut self.groups[gi].1;
        // Map the steps to state indices; nothing is recorded unless the whole trace maps.
        self.states_buf.clear();
        self.new_names.clear();
        let mut failure = None;
        for step in &trace.steps {
            let r = match (spec, &step.kind) {
                (Some(a), _) => a.step_state(step, file).map_err(LearnError::from),
                (None, StepKind::Named(name)) => Ok(name_index(group, &mut self.new_names, name)),
                (None, StepKind::Values(_)) => Err(LearnError::Step {
                    location: step.location(file, None),
                    message: format!(
                        "trace `{}` has a step with concrete variable values; give an \
                         abstraction spec to abstract them, or name abstract states with \
                         {{\"state\": \"NAME\"}}",
                        trace.id
                    ),
                }),
            };
            match r {
                Ok(s) => self.states_buf.push(s),
                Err(e) => {
                    failure = Some((step.line, e));
                    break;
                }
            }
        }
        if let Some((line, error)) = failure {
            if opts.skip_invalid {
                self.skipped.push(Skipped { line, error });
                return Ok(());
            }
            return Err(error);
        }
        self.record(gi)
    }

    /// Counts a trace whose steps all name their states (`{"state": NAME}`), without a spec,
    /// as [`Self::add`] counts it.
    pub(crate) fn add_named<S: AsRef<str>>(
        &mut self,
        category: Option<&str>,
        names: &[S],
    ) -> Result<()> {
        self.states_buf.clear();
        self.new_names.clear();
        let gi = self.group_of(category);
        let group = &self.groups[gi].1;
        // (A state often follows itself: its name is then not looked up again.)
        let mut prev: Option<(&str, u32)> = None;
        for name in names {
            let name = name.as_ref();
            let s = match prev {
                Some((p, s)) if p == name => s,
                _ => name_index(group, &mut self.new_names, name),
            };
            prev = Some((name, s));
            self.states_buf.push(s);
        }
        self.traces_read += 1;
        self.record(gi)
    }

    /// Counts a trace whose steps the spec maps to `states` (its state indices), as
    /// [`Self::add`] counts it.
    pub(crate) fn add_mapped(&mut self, category: Option<&str>, states: &[u32]) -> Result<()> {
        self.states_buf.clear();
        self.new_names.clear();
        self.states_buf.extend_from_slice(states);
        self.traces_read += 1;
        let gi = self.group_of(category);
        self.record(gi)
    }

    /// Records the trace mapped to `states_buf` (its new names in `new_names`) in group `gi`.
    fn record(&mut self, gi: usize) -> Result<()> {
        let opts = self.opts;
        let k = opts.order;
        let validity: &dyn Validity = match &self.spec_validity {
            Some(v) => v,
            None => &AllValid,
        };
        let group = &mut self.groups[gi].1;
        for name in self.new_names.drain(..) {
            group.index.insert(name.clone(), group.names.len() as u32);
            group.names.push(name);
        }
        let states = &self.states_buf;
        if k > 1 {
            // The states of a k-th order chain: the tuples of the last k abstract states.
            group.observe_tuples(states, k, validity, &mut self.tuple_buf)?;
            return Ok(());
        }
        if self.spec.is_none() {
            group.counts.ensure_states(group.names.len());
            if group.observe_dense(states)? {
                return Ok(());
            }
        }
        group.counts.try_observe_trace(states, validity)?;
        count_end(&mut group.ends, states);
        Ok(())
    }

    /// Adds what `later` counted, from the traces that follow this counter's in the file:
    /// its states are numbered after this counter's, in the order `later` first saw them,
    /// so that the states are numbered as one counter reading both parts in order numbers
    /// them.
    pub(crate) fn absorb(&mut self, later: Counter<'_>) -> Result<()> {
        self.traces_read += later.traces_read;
        self.skipped.extend(later.skipped);
        for (key, mut g) in later.groups {
            g.flush()?;
            let category = self.opts.by_category.then_some(key.as_str());
            // (`key` is the group key of `category`, so this finds or makes that group.)
            let gi = self.group_of(category);
            self.groups[gi]
                .1
                .absorb(g, self.spec.is_some(), self.opts.order);
        }
        Ok(())
    }

    /// Whether a line or trace was skipped ([`LearnOptions::skip_invalid`]).
    pub(crate) fn has_skipped(&self) -> bool {
        !self.skipped.is_empty()
    }

    /// The steps counted so far.
    pub(crate) fn steps(&self) -> u64 {
        self.groups
            .iter()
            .map(|(_, g)| g.counts.steps() + g.dense.steps)
            .sum()
    }

    /// The counted groups, or an error when no trace had a step.
    pub(crate) fn finish(mut self, file: &str) -> Result<Counted> {
        for (_, g) in &mut self.groups {
            g.flush()?;
        }
        if self.groups.iter().all(|(_, g)| g.counts.traces() == 0) {
            return Err(LearnError::EmptyTraceFile {
                file: file.to_string(),
                skipped: self.skipped.len(),
            });
        }
        Ok(Counted {
            groups: self.groups.into_iter().collect(),
            traces_read: self.traces_read,
            skipped: self.skipped,
        })
    }
}

/// The index in `group` of the state named `name`, numbering names not yet in the group
/// after its own in the order met (`new_names`, added to the group when the trace counts).
fn name_index(group: &Group, new_names: &mut Vec<String>, name: &str) -> u32 {
    match group.index.get(name) {
        Some(&i) => i,
        None => {
            let pos = new_names.iter().position(|n| n == name);
            let k = pos.unwrap_or_else(|| {
                new_names.push(name.to_string());
                new_names.len() - 1
            });
            (group.names.len() + k) as u32
        }
    }
}

/// What counting a trace file gives: the groups (by category key) and what was read.
pub(crate) struct Counted {
    groups: BTreeMap<String, Group>,
    traces_read: u64,
    skipped: Vec<Skipped>,
}

/// Learns from the traces of `reader` (named `file` in messages). With a `spec`, steps are
/// concrete values or `{a,b}` names abstracted by it, and only its valid transitions are
/// learned (invalid ones are counted apart); without one, steps must name their states.
/// Nothing of a trace is counted unless all its steps map.
pub fn learn_from_traces<I: IntoIterator<Item = augur_abstraction::Result<Trace>>>(
    reader: I,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    learn_counted(count_groups(reader, file, spec, opts)?, spec, opts)
}

/// [`learn_from_traces`] on a JSON Lines file, read in parallel on `threads` threads (see
/// [`crate::jsonl`]): the same model, bit for bit, and the same errors. `progress` is called
/// after each block read (some megabytes).
pub fn learn_from_jsonl(
    input: impl std::io::Read,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
    threads: usize,
    progress: &mut dyn FnMut(ReadProgress),
) -> Result<LearnOutcome> {
    let counted = crate::jsonl::count_jsonl(input, file, spec, opts, threads, progress)?;
    learn_counted(counted, spec, opts)
}

pub(crate) fn learn_counted(
    counted: Counted,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    let models = build_models(counted.groups, spec, opts)?;
    Ok(LearnOutcome {
        traces_read: counted.traces_read,
        skipped: counted.skipped,
        models,
    })
}

/// What [`count_from_traces`] gives: the keyed counts of a trace file and what was read.
#[derive(Debug)]
pub struct CountsOutcome {
    /// Traces read (those that parsed; skipped lines are in `skipped`).
    pub traces_read: u64,
    /// Skipped lines/traces (with [`LearnOptions::skip_invalid`]).
    pub skipped: Vec<Skipped>,
    /// The counts, keyed by state name (see [`crate::counts`]).
    pub counts: KeyedCounts,
}

/// Counts the traces of `reader` as [`learn_from_traces`] does, without learning: the counts
/// keyed by state name, to be summed with other shards' and learned by [`learn_from_counts`].
/// `opts.alpha` and `opts.unobserved` play no part; `opts.end_state` is recorded (trace ends
/// are always counted, so a model with or without an end state can be learned from them).
pub fn count_from_traces<I: IntoIterator<Item = augur_abstraction::Result<Trace>>>(
    reader: I,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<CountsOutcome> {
    Ok(keyed_outcome(
        count_groups(reader, file, spec, opts)?,
        spec,
        opts,
    ))
}

/// [`count_from_traces`] on a JSON Lines file, read in parallel on `threads` threads (see
/// [`learn_from_jsonl`]).
pub fn count_from_jsonl(
    input: impl std::io::Read,
    file: &str,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
    threads: usize,
    progress: &mut dyn FnMut(ReadProgress),
) -> Result<CountsOutcome> {
    let counted = crate::jsonl::count_jsonl(input, file, spec, opts, threads, progress)?;
    Ok(keyed_outcome(counted, spec, opts))
}

/// Traces whose steps are already numbered states, e.g. a Parquet step table's: trace t's
/// states are `states[offsets[t]..offsets[t + 1]]`, indices into `names`. (The states need
/// not be numbered by first appearance: the learner numbers them so, as it does the named
/// states of a trace file.)
#[derive(Clone, Copy, Debug)]
pub struct IndexedTraces<'a> {
    /// The state names.
    pub names: &'a [String],
    /// Where each trace starts in `states`, and (last) where the last one ends.
    pub offsets: &'a [usize],
    /// Every step's state, trace after trace.
    pub states: &'a [u32],
}

/// Above this many states, pairs are counted in a hash map rather than a dense matrix.
const DENSE_PAIRS_MAX_STATES: usize = 1024;

/// Indexed traces of at least this many steps are counted on several threads.
const PARALLEL_COUNT_MIN_STEPS: usize = 1 << 20;

/// What [`count_indexed`] counts of a range of traces (first-order).
struct IndexedPart {
    /// `dense[from * m + to]` (up to [`DENSE_PAIRS_MAX_STATES`] states), else `sparse`.
    dense: Vec<u64>,
    sparse: HashMap<(u32, u32), u64>,
    initial: Vec<u64>,
    ends: Vec<u64>,
    counted: u64,
    steps: u64,
}

/// Counts indexed traces without a spec (the learner's counts of the same traces read as
/// named steps: the same state numbering, the same counts).
fn count_indexed(traces: IndexedTraces<'_>, file: &str, opts: &LearnOptions) -> Result<Counted> {
    check_indexed_options(opts)?;
    let n = traces.names.len();
    let num_traces = traces.offsets.len().saturating_sub(1);
    let range = |t: usize| traces.offsets[t]..traces.offsets[t + 1];
    // Number the states by first appearance (usually they are already: one check per step).
    let mut next = 0u32;
    let mut in_order = true;
    for &s in traces.states {
        if s as usize >= n {
            return Err(LearnError::StateOutOfRange {
                index: s,
                num_states: n,
            });
        }
        if s >= next {
            if s > next {
                in_order = false;
                break;
            }
            next += 1;
        }
    }
    let renumbered: Vec<u32>;
    let mut names: Vec<String>;
    let states: &[u32] = if in_order {
        names = traces.names[..next as usize].to_vec();
        traces.states
    } else {
        let mut map = vec![u32::MAX; n];
        names = Vec::new();
        renumbered = traces
            .states
            .iter()
            .map(|&s| {
                let m = &mut map[s as usize];
                if *m == u32::MAX {
                    *m = names.len() as u32;
                    names.push(traces.names[s as usize].clone());
                }
                *m
            })
            .collect();
        &renumbered
    };
    let key = if opts.by_category {
        "uncategorized".to_string()
    } else {
        String::new()
    };
    let mut group = Group {
        index: names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect(),
        ..Group::default()
    };
    let m = names.len();
    if opts.order > 1 {
        group.names = std::mem::take(&mut names);
        let mut tuple_buf = Vec::new();
        for t in 0..num_traces {
            group.observe_tuples(&states[range(t)], opts.order, &AllValid, &mut tuple_buf)?;
        }
    } else {
        // Count pairs in a dense matrix (or a hash map for many states), then hand the
        // totals to the counts at once. Many traces are counted in parts on several threads
        // (the parts' counts then added).
        let is_dense = m <= DENSE_PAIRS_MAX_STATES;
        let count_part = |ts: std::ops::Range<usize>| -> IndexedPart {
            let mut p = IndexedPart {
                dense: if is_dense { vec![0; m * m] } else { Vec::new() },
                sparse: HashMap::new(),
                initial: vec![0u64; m],
                ends: vec![0u64; m],
                counted: 0,
                steps: 0,
            };
            for t in ts {
                let trace = &states[range(t)];
                let (Some(&first), Some(&last)) = (trace.first(), trace.last()) else {
                    continue;
                };
                p.counted += 1;
                p.steps += trace.len() as u64;
                p.initial[first as usize] += 1;
                p.ends[last as usize] += 1;
                if is_dense {
                    for w in trace.windows(2) {
                        p.dense[w[0] as usize * m + w[1] as usize] += 1;
                    }
                } else {
                    for w in trace.windows(2) {
                        *p.sparse.entry((w[0], w[1])).or_insert(0) += 1;
                    }
                }
            }
            p
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let IndexedPart {
            dense,
            sparse,
            initial,
            ends,
            counted,
            steps,
        } = if threads > 1 && is_dense && states.len() >= PARALLEL_COUNT_MIN_STEPS {
            // Parts of about equal steps, at trace boundaries.
            let mut cuts = vec![0usize];
            for i in 1..threads {
                let target = states.len() * i / threads;
                let t = traces
                    .offsets
                    .partition_point(|&o| o < target)
                    .min(num_traces);
                if t > *cuts.last().unwrap_or(&0) {
                    cuts.push(t);
                }
            }
            cuts.push(num_traces);
            let parts: Vec<IndexedPart> = std::thread::scope(|s| {
                let handles: Vec<_> = cuts
                    .windows(2)
                    .map(|w| {
                        let count_part = &count_part;
                        let r = w[0]..w[1];
                        s.spawn(move || count_part(r))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            let mut parts = parts.into_iter();
            let mut sum = parts.next().unwrap_or_else(|| count_part(0..0));
            for p in parts {
                for (a, b) in sum.dense.iter_mut().zip(&p.dense) {
                    *a += b;
                }
                for (a, b) in sum.initial.iter_mut().zip(&p.initial) {
                    *a += b;
                }
                for (a, b) in sum.ends.iter_mut().zip(&p.ends) {
                    *a += b;
                }
                sum.counted += p.counted;
                sum.steps += p.steps;
            }
            sum
        } else {
            count_part(0..num_traces)
        };
        let mut transitions: Vec<(u32, u32, u64)> = if !is_dense {
            sparse.into_iter().map(|((f, t), c)| (f, t, c)).collect()
        } else {
            dense
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(i, &c)| ((i / m) as u32, (i % m) as u32, c))
                .collect()
        };
        transitions.sort_unstable();
        let counts = IndexedCounts {
            names,
            transitions,
            initial,
            ends,
            traces: counted,
            steps,
        };
        return counted_first_order(counts, num_traces as u64, file, opts);
    }
    if group.counts.traces() == 0 {
        return Err(LearnError::EmptyTraceFile {
            file: file.to_string(),
            skipped: 0,
        });
    }
    Ok(Counted {
        groups: BTreeMap::from([(key, group)]),
        traces_read: num_traces as u64,
        skipped: Vec::new(),
    })
}

/// The first-order counts of traces whose states are numbered, counted already (e.g. by a
/// Parquet reader while it reads, without an array of steps): what [`count_from_indexed`]
/// counts of the same traces. States are numbered by first appearance along the traces
/// (trace after trace, each in step order), as the learner numbers the states of a trace
/// file; that numbering is the learned model's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexedCounts {
    /// The state names, by first appearance.
    pub names: Vec<String>,
    /// `(from, to, n)`: transitions observed, indices into `names`, each pair at most once.
    pub transitions: Vec<(u32, u32, u64)>,
    /// Traces starting in each state (`names.len()` entries).
    pub initial: Vec<u64>,
    /// Traces ending in each state (`names.len()` entries).
    pub ends: Vec<u64>,
    /// Traces counted (each of at least one step).
    pub traces: u64,
    /// Steps counted.
    pub steps: u64,
}

/// Checks the options a first-order count without a spec depends on.
fn check_indexed_options(opts: &LearnOptions) -> Result<()> {
    if !(opts.alpha.is_finite() && opts.alpha >= 0.0) {
        return Err(LearnError::BadAlpha(opts.alpha));
    }
    if !(1..=8).contains(&opts.order) {
        return Err(LearnError::BadOrder(opts.order));
    }
    if let Some(name) = &opts.end_state {
        end_state::check_name(name)?;
    }
    Ok(())
}

/// The one group of first-order counts (`traces_read`: traces read, empty ones included).
fn counted_first_order(
    counts: IndexedCounts,
    traces_read: u64,
    file: &str,
    opts: &LearnOptions,
) -> Result<Counted> {
    let IndexedCounts {
        names,
        transitions,
        initial,
        ends,
        traces,
        steps,
    } = counts;
    let m = names.len();
    if initial.len() != m || ends.len() != m {
        return Err(LearnError::BadCounts(format!(
            "{m} states but {} initial and {} end counts",
            initial.len(),
            ends.len()
        )));
    }
    let key = if opts.by_category {
        "uncategorized".to_string()
    } else {
        String::new()
    };
    let pairs = |v: Vec<u64>| -> Vec<(u32, u64)> {
        v.into_iter()
            .enumerate()
            .filter(|&(_, c)| c > 0)
            .map(|(s, c)| (s as u32, c))
            .collect()
    };
    let mut group = Group {
        index: names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i as u32))
            .collect(),
        ..Group::default()
    };
    group.ends = pairs(ends).into_iter().collect();
    group.counts = TransitionCounts::from_json(&CountsJson {
        num_states: m,
        traces,
        steps,
        initial: pairs(initial),
        transitions,
        invalid: Vec::new(),
        determined: Vec::new(),
    })?;
    group.names = names;
    if group.counts.traces() == 0 {
        return Err(LearnError::EmptyTraceFile {
            file: file.to_string(),
            skipped: 0,
        });
    }
    Ok(Counted {
        groups: BTreeMap::from([(key, group)]),
        traces_read,
        skipped: Vec::new(),
    })
}

/// Checks first-order counts for [`learn_from_indexed_counts`]: the options, and order 1.
fn counted_from_indexed_counts(
    counts: IndexedCounts,
    file: &str,
    opts: &LearnOptions,
) -> Result<Counted> {
    check_indexed_options(opts)?;
    if opts.order != 1 {
        return Err(LearnError::BadCounts(format!(
            "{file}: first-order counts cannot give a chain of order {}",
            opts.order
        )));
    }
    let traces = counts.traces;
    counted_first_order(counts, traces, file, opts)
}

/// [`learn_from_indexed`] for traces counted already ([`IndexedCounts`], first order only):
/// the same model as from the traces.
///
/// ```
/// use augur_learn::pipeline::{learn_from_indexed_counts, IndexedCounts, LearnOptions};
/// // Two traces: a b, a a.
/// let counts = IndexedCounts {
///     names: vec!["a".into(), "b".into()],
///     transitions: vec![(0, 0, 1), (0, 1, 1)],
///     initial: vec![2, 0],
///     ends: vec![1, 1],
///     traces: 2,
///     steps: 4,
/// };
/// let outcome = learn_from_indexed_counts(counts, "t.parquet", &LearnOptions::default()).unwrap();
/// assert_eq!(outcome.models[0].counts.count(0, 1), 1);
/// ```
pub fn learn_from_indexed_counts(
    counts: IndexedCounts,
    file: &str,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    learn_counted(counted_from_indexed_counts(counts, file, opts)?, None, opts)
}

/// [`count_from_indexed`] for traces counted already ([`IndexedCounts`], first order only).
pub fn count_from_indexed_counts(
    counts: IndexedCounts,
    file: &str,
    opts: &LearnOptions,
) -> Result<CountsOutcome> {
    let counted = counted_from_indexed_counts(counts, file, opts)?;
    Ok(keyed_outcome(counted, None, opts))
}

/// [`learn_from_traces`] for traces whose states are already numbered (and need no spec):
/// the same model as from the same traces read as named steps, counted without a string per
/// step.
///
/// ```
/// use augur_learn::pipeline::{learn_from_indexed, IndexedTraces, LearnOptions};
/// let names = ["b".to_string(), "a".to_string()];
/// // Two traces: a b, a a.
/// let traces = IndexedTraces { names: &names, offsets: &[0, 2, 4], states: &[1, 0, 1, 1] };
/// let outcome = learn_from_indexed(traces, "t.parquet", &LearnOptions::default()).unwrap();
/// assert_eq!(outcome.models[0].state_names, ["a", "b"]);
/// assert_eq!(outcome.models[0].counts.count(0, 1), 1);
/// ```
pub fn learn_from_indexed(
    traces: IndexedTraces<'_>,
    file: &str,
    opts: &LearnOptions,
) -> Result<LearnOutcome> {
    learn_counted(count_indexed(traces, file, opts)?, None, opts)
}

/// [`count_from_traces`] for traces whose states are already numbered (and need no spec).
pub fn count_from_indexed(
    traces: IndexedTraces<'_>,
    file: &str,
    opts: &LearnOptions,
) -> Result<CountsOutcome> {
    let counted = count_indexed(traces, file, opts)?;
    Ok(keyed_outcome(counted, None, opts))
}

/// The keyed counts of counted groups.
pub(crate) fn keyed_outcome(
    counted: Counted,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> CountsOutcome {
    let groups = counted
        .groups
        .iter()
        .filter(|(_, g)| g.counts.traces() > 0)
        .map(|(category, g)| {
            g.to_keyed(opts.by_category.then(|| category.clone()), spec, opts.order)
        })
        .collect();
    CountsOutcome {
        traces_read: counted.traces_read,
        skipped: counted.skipped,
        counts: KeyedCounts::new(opts.order, opts.end_state.clone(), groups),
    }
}

/// Learns from keyed counts (any number of shards, summed), exactly as from the traces they
/// were counted from: a single shard gives the very model `learn_from_traces` gives (the same
/// state numbering); summed shards number states in the order they first appear in the
/// shards as given. `opts.order` must be the shards' order; `opts.by_category` learns one
/// model per category (otherwise all categories are summed into one); the spec, if the counts
/// were made with one, must be given again (states are matched to it by name).
pub fn learn_from_counts(
    shards: &[KeyedCounts],
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<Vec<LearnedModel>> {
    if !(opts.alpha.is_finite() && opts.alpha >= 0.0) {
        return Err(LearnError::BadAlpha(opts.alpha));
    }
    if let Some(name) = &opts.end_state {
        end_state::check_name(name)?;
    }
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let spec_index: HashMap<String, u32> = spec
        .map(|a| {
            a.valid_states()
                .iter()
                .enumerate()
                .map(|(i, &c)| (a.state_name(c), i as u32))
                .collect()
        })
        .unwrap_or_default();
    for shard in shards {
        shard.check()?;
        if shard.order != opts.order {
            return Err(LearnError::BadCounts(format!(
                "the counts are of order {}, but order {} was asked for",
                shard.order, opts.order
            )));
        }
        for g in &shard.groups {
            let key = if opts.by_category {
                g.category.clone().unwrap_or_else(|| "uncategorized".into())
            } else {
                String::new()
            };
            let group = groups.entry(key).or_insert_with(|| Group {
                counts: TransitionCounts::new(if opts.order > 1 {
                    0
                } else {
                    spec.map_or(0, |a| a.num_states())
                }),
                ..Default::default()
            });
            group.add_keyed(g, spec.map(|_| &spec_index), opts.order)?;
        }
    }
    if groups.values().all(|g| g.counts.traces() == 0) {
        return Err(LearnError::NoTraces);
    }
    build_models(groups, spec, opts)
}

/// Learns one model per group of counted traces.
fn build_models(
    groups: BTreeMap<String, Group>,
    spec: Option<&Abstraction>,
    opts: &LearnOptions,
) -> Result<Vec<LearnedModel>> {
    let k = opts.order;
    let spec_validity = spec.map(SpecValidity);
    let validity: &dyn Validity = match &spec_validity {
        Some(v) => v,
        None => &AllValid,
    };
    let mut models = Vec::new();
    for (category, mut group) in groups {
        if group.counts.traces() == 0 {
            continue;
        }
        let base_names: Vec<String> = match spec {
            Some(a) => a.valid_states().iter().map(|&c| a.state_name(c)).collect(),
            None => group.names.clone(),
        };
        let tuples = std::mem::take(&mut group.tuples);
        let tv = TupleValidity {
            tuples: &tuples,
            order: k,
            base: validity,
        };
        let v: &dyn Validity = if k > 1 { &tv } else { validity };
        let end = match opts.end_state {
            Some(_) => Some(group.counts.observe_ends(&group.ends)?),
            None => None,
        };
        let ev;
        let v: &dyn Validity = match end {
            Some(end) => {
                ev = EndValidity { base: v, end };
                &ev
            }
            None => v,
        };
        group.counts.mark_determined(v);
        let (rows, mut report) = smoothed_rows(&group.counts, v, opts.alpha, opts.unobserved)?;
        if let Some(end) = end {
            // The end state is absorbing by validity, not an unobserved row.
            report.unobserved_uniform.retain(|&s| s != end);
        }
        let initial: Vec<u32> = group.counts.initial().keys().copied().collect();
        let mut dtmc = shell(rows.num_states(), initial, Vec::new(), None);
        let mut state_names: Vec<String> = if k > 1 {
            tuples
                .iter()
                .map(|t| {
                    let parts: Vec<&str> =
                        t.iter().map(|&s| base_names[s as usize].as_str()).collect();
                    format!("({})", parts.join(","))
                })
                .collect()
        } else {
            base_names.clone()
        };
        if k > 1 {
            let last: Vec<u32> = tuples
                .iter()
                .map(|t| t.last().copied().unwrap_or(0))
                .collect();
            decorate_tuples(&mut dtmc, spec, &base_names, &last);
        } else {
            decorate(&mut dtmc, spec, &state_names);
        }
        if let Some(name) = &opts.end_state {
            end_state::check_unused(name, &state_names, &dtmc)?;
            end_state::decorate(&mut dtmc, name);
            state_names.push(name.clone());
        }
        models.push(LearnedModel {
            category: opts.by_category.then_some(category),
            rows,
            labels: dtmc.labels,
            valuations: dtmc.valuations,
            initial: dtmc.initial,
            counts: group.counts,
            report,
            state_names,
            intervals: None,
        });
    }
    Ok(models)
}

/// Records the last state of a trace (nothing for an empty one), for an end state now or
/// when learning from the counts later.
fn count_end(ends: &mut BTreeMap<u32, u64>, trace: &[u32]) {
    if let Some(&last) = trace.last() {
        *ends.entry(last).or_insert(0) += 1;
    }
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

/// Labels and valuations of a chain over tuples: those of each tuple's last state.
fn decorate_tuples(
    dtmc: &mut Dtmc,
    spec: Option<&Abstraction>,
    base_names: &[String],
    last: &[u32],
) {
    let n = dtmc.num_states();
    let lift = |set: &fixedbitset::FixedBitSet| {
        let mut out = fixedbitset::FixedBitSet::with_capacity(n);
        for (t, &s) in last.iter().enumerate() {
            if set.contains(s as usize) {
                out.insert(t);
            }
        }
        out
    };
    match spec {
        Some(a) => {
            dtmc.labels = a
                .labels()
                .iter()
                .map(|(name, set)| (name.clone(), lift(set)))
                .collect();
            let k = a.predicates().len();
            let mut values = Vec::with_capacity(n * k);
            for &s in last {
                let code = a.code_of(s).unwrap_or(0);
                values.extend(a.decode(code).into_iter().map(Value::Bool));
            }
            dtmc.valuations = Some(Valuations::new(
                a.predicates().iter().map(|p| p.name.clone()).collect(),
                vec![Type::Bool; k],
                values,
            ));
        }
        None => {
            dtmc.labels = base_names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let mut one = fixedbitset::FixedBitSet::with_capacity(base_names.len());
                    one.insert(i);
                    (name.clone(), lift(&one))
                })
                .collect();
        }
    }
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

/// The file of a category's model next to `out`: `OUT-stem.CATEGORY.json` (the category with
/// characters other than letters, digits, `-` and `_` replaced by `_`).
pub fn category_path(out: &Path, category: &str) -> PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    out.with_file_name(format!("{stem}.{}.json", sanitize(category)))
}

/// The file of each model: `out` itself, or with categories [`category_path`]. Two
/// categories that would be written to the same file are an error (one model would silently
/// overwrite the other).
pub fn output_paths(models: &[LearnedModel], out: &Path) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = Vec::with_capacity(models.len());
    for (i, m) in models.iter().enumerate() {
        let Some(category) = &m.category else {
            paths.push(out.to_path_buf());
            continue;
        };
        let p = category_path(out, category);
        if let Some(j) = paths.iter().position(|q| *q == p) {
            return Err(LearnError::CategoryClash {
                first: models[j].category.clone().unwrap_or_default(),
                second: category.clone(),
                path: p,
            });
        }
        debug_assert_eq!(paths.len(), i);
        paths.push(p);
    }
    Ok(paths)
}

/// The JSON document of a learned model: the model, its transition counts (`"counts"`, read
/// by `pac`) and `metadata` (the state names are added as `"state_names"`). An interval model
/// ([`LearnedModel::learn_intervals`]) lists its `intervals` (and its confidence is recorded by
/// the caller in `metadata`).
///
/// A model with at most [`MAX_EXPLICIT_TRANSITIONS`] transitions lists them (`transitions`,
/// readable by any Augur JSON reader); a larger one keeps its rows implicit: the smoothing
/// rule (`smoothing`) over the observed counts, which readers expand (see
/// [`augur_formats::smoothing`]).
pub fn learned_document(model: &LearnedModel, metadata: serde_json::Value) -> DtmcJson {
    learned_document_with(model, metadata, MAX_EXPLICIT_TRANSITIONS)
}

/// [`learned_document`], listing the transitions of models with at most `explicit_up_to`.
pub fn learned_document_with(
    model: &LearnedModel,
    metadata: serde_json::Value,
    explicit_up_to: u64,
) -> DtmcJson {
    // An interval model is always listed (its rows have no implicit form). (Its bounds were
    // checked when learned: making the model cannot fail.)
    let interval = model
        .intervals
        .as_ref()
        .and_then(|iv| Some((iv.metadata(), iv.to_dtmc(model.shell()).ok()?)));
    let mut recorded = None;
    let explicit = if let Some((meta, d)) = interval {
        recorded = Some(meta);
        Some(d)
    } else if model.num_transitions() <= explicit_up_to {
        // (Cannot fail: the count is within the limit.)
        model.to_dtmc(explicit_up_to as usize).ok()
    } else {
        None
    };
    let mut doc = match explicit {
        Some(d) => DtmcJson::from_dtmc(&d),
        None => {
            let mut doc = DtmcJson::from_dtmc(&model.shell());
            doc.transitions = None;
            doc.smoothing = Some(model.rows.rule().clone());
            doc
        }
    };
    doc.counts = serde_json::to_value(model.counts.to_json()).ok();
    let mut metadata = match metadata {
        serde_json::Value::Object(m) => m,
        serde_json::Value::Null => serde_json::Map::new(),
        other => {
            let mut m = serde_json::Map::new();
            m.insert("info".into(), other);
            m
        }
    };
    metadata.insert(
        "state_names".into(),
        serde_json::Value::from(model.state_names.clone()),
    );
    if let Some(meta) = recorded {
        // `metadata.learned.intervals`: the confidence `augur check` states.
        let learned = metadata
            .entry("learned")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(l) = learned.as_object_mut() {
            l.insert(
                "intervals".into(),
                serde_json::to_value(meta).unwrap_or_default(),
            );
        }
    }
    doc.metadata = Some(serde_json::Value::Object(metadata));
    doc
}

/// Writes a learned model to `path` as Augur JSON with its counts (see [`learned_document`]).
pub fn write_learned(model: &LearnedModel, path: &Path, metadata: serde_json::Value) -> Result<()> {
    let io = |what: &'static str| {
        move |source| LearnError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    };
    let f = std::fs::File::create(path).map_err(io("cannot create"))?;
    let mut w = BufWriter::new(f);
    write_json_document(&learned_document(model, metadata), &mut w)?;
    w.flush().map_err(io("cannot write"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::MAX_LEARNED_TRANSITIONS as MAX;
    use augur_abstraction::{TraceFormat, TraceReader};

    fn run(traces: &str, spec: Option<&Abstraction>, opts: &LearnOptions) -> Result<LearnOutcome> {
        let reader = TraceReader::new(traces.as_bytes(), TraceFormat::JsonLines, "t.jsonl");
        learn_from_traces(reader, "t.jsonl", spec, opts)
    }

    #[test]
    fn categories_learn_apart_and_clash_on_file_names() {
        let traces = "{\"category\": \"a/b\", \"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n\
                      {\"category\": \"a_b\", \"steps\": [{\"state\": \"x\"}, {\"state\": \"x\"}]}\n";
        let opts = LearnOptions {
            by_category: true,
            ..LearnOptions::default()
        };
        let out = run(traces, None, &opts).unwrap();
        assert_eq!(out.models.len(), 2);
        assert_eq!(out.models[0].category.as_deref(), Some("a/b"));
        assert_eq!(
            out.models[0]
                .to_dtmc(MAX)
                .unwrap()
                .matrix
                .get(0, 1)
                .copied(),
            Some(1.0)
        );
        assert_eq!(
            out.models[1]
                .to_dtmc(MAX)
                .unwrap()
                .matrix
                .get(0, 0)
                .copied(),
            Some(1.0)
        );
        let e = output_paths(&out.models, Path::new("dir/m.json")).unwrap_err();
        assert!(matches!(e, LearnError::CategoryClash { .. }), "{e}");
        assert!(e.to_string().contains("dir/m.a_b.json"), "{e}");
    }

    #[test]
    fn bad_steps_are_located_or_skipped() {
        let traces =
            "{\"steps\": [{\"state\": \"x\"}, {\"v\": 1}]}\n{\"steps\": [{\"state\": \"x\"}]}\n";
        let e = run(traces, None, &LearnOptions::default()).unwrap_err();
        let d = e.diagnostic().to_string();
        assert!(d.contains(" --> t.jsonl:1:28\n"), "{d}");
        let opts = LearnOptions {
            skip_invalid: true,
            ..LearnOptions::default()
        };
        let out = run(traces, None, &opts).unwrap();
        assert_eq!((out.traces_read, out.skipped.len()), (2, 1));
        assert_eq!(out.skipped[0].line, 1);
        // Nothing left to learn from.
        let e = run("{\"steps\": [{\"v\": 1}]}\n", None, &opts).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.jsonl: no trace with at least one step (1 skipped)"
        );
    }

    #[test]
    fn learned_models_are_written_with_their_counts() {
        let out = run(
            "{\"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n",
            None,
            &LearnOptions::default(),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        write_learned(
            &out.models[0],
            &path,
            serde_json::json!({"learned": {"alpha": 0.0}}),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: DtmcJson = augur_formats::json::parse_json(&text, &path).unwrap();
        assert!(doc.counts.is_some());
        let meta = doc.metadata.unwrap();
        assert_eq!(meta["state_names"], serde_json::json!(["x", "y"]));
        assert_eq!(meta["learned"]["alpha"], 0.0);
    }

    /// Many indexed traces (counted in parts on several threads): the counts of the same
    /// traces read as named steps, by the sequential counter.
    #[test]
    fn many_indexed_traces_count_as_the_traces_do() {
        let names: Vec<String> = (0..7).map(|i| format!("s{i}")).collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let (mut offsets, mut states) = (vec![0usize], Vec::new());
        while states.len() < PARALLEL_COUNT_MIN_STEPS + 1000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 13) as usize;
            for k in 0..len {
                states.push(((x >> (3 * k + 5)) % 7) as u32);
            }
            offsets.push(states.len());
        }
        let indexed = IndexedTraces {
            names: &names,
            offsets: &offsets,
            states: &states,
        };
        let traces: Vec<augur_abstraction::Result<Trace>> = offsets
            .windows(2)
            .map(|w| {
                Ok(Trace {
                    id: String::new(),
                    category: None,
                    line: 0,
                    steps: states[w[0]..w[1]]
                        .iter()
                        .map(|&s| augur_abstraction::Step {
                            line: 0,
                            kind: StepKind::Named(names[s as usize].clone()),
                            source: None,
                        })
                        .collect(),
                })
            })
            .collect();
        for opts in [
            LearnOptions::default(),
            LearnOptions {
                end_state: Some("end".into()),
                ..LearnOptions::default()
            },
        ] {
            let a = count_from_indexed(indexed, "t", &opts).unwrap();
            let b = count_from_traces(
                traces.iter().map(|t| match t {
                    Ok(t) => Ok(t.clone()),
                    Err(_) => unreachable!(),
                }),
                "t",
                None,
                &opts,
            )
            .unwrap();
            assert_eq!(a.counts, b.counts);
            assert_eq!(a.counts.groups[0].steps, states.len() as u64);
        }
    }

    /// Counts made elsewhere (a Parquet reader counting while it reads) give the counts and
    /// the model of their traces; counts that do not fit together, or a chain of order 2 from
    /// first-order counts, are errors.
    #[test]
    fn indexed_counts_give_the_counts_and_model_of_their_traces() {
        let names: Vec<String> = vec!["a".into(), "b".into(), "c".into()];
        // Traces: a b b c, b, a c a.
        let (offsets, states) = (vec![0, 4, 5, 8], vec![0, 1, 1, 2, 1, 0, 2, 0]);
        let indexed = IndexedTraces {
            names: &names,
            offsets: &offsets,
            states: &states,
        };
        let counts = IndexedCounts {
            names: names.clone(),
            transitions: vec![(0, 1, 1), (0, 2, 1), (1, 1, 1), (1, 2, 1), (2, 0, 1)],
            initial: vec![2, 1, 0],
            ends: vec![1, 1, 1],
            traces: 3,
            steps: 8,
        };
        for opts in [
            LearnOptions::default(),
            LearnOptions {
                end_state: Some("end".into()),
                alpha: 0.5,
                ..LearnOptions::default()
            },
        ] {
            let a = count_from_indexed_counts(counts.clone(), "t", &opts).unwrap();
            let b = count_from_indexed(indexed, "t", &opts).unwrap();
            assert_eq!(a.counts, b.counts);
            let a = learn_from_indexed_counts(counts.clone(), "t", &opts).unwrap();
            let b = learn_from_indexed(indexed, "t", &opts).unwrap();
            let (a, b) = (&a.models[0], &b.models[0]);
            assert_eq!(a.state_names, b.state_names);
            assert_eq!(a.initial, b.initial);
            // (Debug: the rows, counts and report, not the label sets' addresses.)
            assert_eq!(format!("{:?}", a.rows), format!("{:?}", b.rows));
            assert_eq!(format!("{:?}", a.counts), format!("{:?}", b.counts));
            assert_eq!(format!("{:?}", a.report), format!("{:?}", b.report));
            let labels = |m: &LearnedModel| -> Vec<(String, Vec<usize>)> {
                m.labels
                    .iter()
                    .map(|(n, s)| (n.clone(), s.ones().collect()))
                    .collect()
            };
            assert_eq!(labels(a), labels(b));
        }
        let order2 = LearnOptions {
            order: 2,
            ..LearnOptions::default()
        };
        assert!(matches!(
            learn_from_indexed_counts(counts.clone(), "t", &order2),
            Err(LearnError::BadCounts(_))
        ));
        let short = IndexedCounts {
            ends: vec![1, 1],
            ..counts.clone()
        };
        assert!(matches!(
            learn_from_indexed_counts(short, "t", &LearnOptions::default()),
            Err(LearnError::BadCounts(_))
        ));
        let out_of_range = IndexedCounts {
            transitions: vec![(0, 3, 1)],
            ..counts
        };
        assert!(learn_from_indexed_counts(out_of_range, "t", &LearnOptions::default()).is_err());
    }

    /// A second-order chain is a first-order chain over pairs: after `x a` comes `y`, after
    /// `z a` comes `w` (a first-order chain can only say 1/2 each from `a`).
    #[test]
    fn second_order_chain_over_pairs() {
        let traces = "{\"steps\": [{\"state\": \"x\"}, {\"state\": \"a\"}, {\"state\": \"y\"}]}\n\
                      {\"steps\": [{\"state\": \"z\"}, {\"state\": \"a\"}, {\"state\": \"w\"}]}\n";
        let first = run(traces, None, &LearnOptions::default()).unwrap();
        let m1 = &first.models[0];
        let a = m1.state_names.iter().position(|n| n == "a").unwrap();
        let y = m1.state_names.iter().position(|n| n == "y").unwrap();
        assert_eq!(
            m1.to_dtmc(MAX).unwrap().matrix.get(a, y).copied(),
            Some(0.5)
        );
        let opts = LearnOptions {
            order: 2,
            ..LearnOptions::default()
        };
        let second = run(traces, None, &opts).unwrap();
        let m = &second.models[0];
        assert_eq!(
            m.state_names,
            ["(x)", "(x,a)", "(a,y)", "(z)", "(z,a)", "(a,w)"]
        );
        let md = m.to_dtmc(MAX).unwrap();
        let at = |i: usize, j: usize| md.matrix.get(i, j).copied();
        assert_eq!(at(0, 1), Some(1.0));
        assert_eq!(at(1, 2), Some(1.0));
        assert_eq!(at(4, 5), Some(1.0));
        assert_eq!(at(1, 5), None);
        // A tuple carries the label of its last state.
        let label_a = md.label("a").unwrap();
        assert_eq!(label_a.ones().collect::<Vec<_>>(), [1, 4]);
        // With smoothing, a tuple's valid successors are the tuples that extend it.
        let smoothed = run(
            traces,
            None,
            &LearnOptions {
                order: 2,
                alpha: 1.0,
                ..LearnOptions::default()
            },
        )
        .unwrap();
        let s = &smoothed.models[0].to_dtmc(MAX).unwrap();
        // (x,a) can go to (a,y) and (a,w): (1 + 1) / 3 and 1 / 3.
        assert!((s.matrix.get(1, 2).copied().unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.matrix.get(1, 5).copied().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert!(run(
            traces,
            None,
            &LearnOptions {
                order: 0,
                ..LearnOptions::default()
            }
        )
        .is_err());
    }
}
