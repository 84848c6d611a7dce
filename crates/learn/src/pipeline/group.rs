//! One model being counted: its counts, state names and tuples ([`Group`]), the dense
//! counting of first-order traces without a spec, and the validity of tuples and of a spec.

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashMap;

use augur_abstraction::Abstraction;

use crate::counts::{GroupCounts, StateKey};
use crate::error::{LearnError, Result};
use crate::learn::{CountsJson, TransitionCounts, Validity};

/// One model being learned: its counts and, without a spec, its state names; for order
/// k > 1 the tuples of abstract states that are its states.
#[derive(Default)]
pub(super) struct Group {
    pub(super) counts: TransitionCounts,
    pub(super) names: Vec<String>,
    pub(super) index: FxHashMap<String, u32>,
    pub(super) tuples: Vec<Vec<u32>>,
    pub(super) tuple_index: HashMap<Vec<u32>, u32>,
    /// The last state of each trace → how many traces ended there.
    pub(super) ends: BTreeMap<u32, u64>,
    /// Traces of a first-order chain without a spec counted but not yet in `counts`.
    pub(super) dense: DenseCounts,
}

/// The id of the tuple of base states `t` among a group's `tuples`, numbered by first
/// appearance (`index`: their ids).
fn tuple_id(tuples: &mut Vec<Vec<u32>>, index: &mut HashMap<Vec<u32>, u32>, t: &[u32]) -> u32 {
    match index.get(t) {
        Some(&id) => id,
        None => {
            let id = tuples.len() as u32;
            tuples.push(t.to_vec());
            index.insert(t.to_vec(), id);
            id
        }
    }
}

/// The traces of a first-order chain without a spec (every move valid), counted in dense
/// arrays before they are added to a group's [`TransitionCounts`] at once ([`Group::flush`]):
/// a map entry per step would cost more than reading the step.
#[derive(Default)]
pub(super) struct DenseCounts {
    /// States `0..side` fit (0: nothing counted yet).
    pub(super) side: usize,
    /// `pairs[from * side + to]`: transitions counted.
    pub(super) pairs: Vec<u64>,
    pub(super) initial: Vec<u64>,
    pub(super) ends: Vec<u64>,
    pub(super) traces: u64,
    pub(super) steps: u64,
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
    /// An empty group whose states are `names`, numbered in that order (the names
    /// themselves are not kept: [`Group::names`] stays empty).
    pub(super) fn indexing(names: &[String]) -> Group {
        Group {
            index: names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i as u32))
                .collect(),
            ..Group::default()
        }
    }

    /// Adds the traces counted in [`Self::dense`] to the counts (and the ends), emptying it.
    pub(super) fn flush(&mut self) -> Result<()> {
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
    pub(super) fn observe_dense(&mut self, states: &[u32]) -> Result<bool> {
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
    pub(super) fn base_names(&self, spec: Option<&Abstraction>) -> Vec<String> {
        match spec {
            Some(a) => a.valid_states().iter().map(|&c| a.state_name(c)).collect(),
            None => self.names.clone(),
        }
    }

    /// The counts keyed by state name (see [`crate::counts`]).
    pub(super) fn to_keyed(
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
    pub(super) fn absorb(&mut self, later: Group, spec: bool, k: usize) {
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
                    tuple_id(&mut self.tuples, &mut self.tuple_index, &t)
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
    pub(super) fn add_keyed(
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
                    tuple_id(&mut self.tuples, &mut self.tuple_index, &t)
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
    pub(super) fn observe_tuples(
        &mut self,
        states: &[u32],
        k: usize,
        validity: &dyn Validity,
        tuple_buf: &mut Vec<u32>,
    ) -> Result<()> {
        tuple_buf.clear();
        for i in 0..states.len() {
            let t = &states[(i + 1).saturating_sub(k)..=i];
            tuple_buf.push(tuple_id(&mut self.tuples, &mut self.tuple_index, t));
        }
        self.counts.ensure_states(self.tuples.len());
        let tv = TupleValidity::new(&self.tuples, k, validity);
        self.counts.try_observe_trace(tuple_buf, &tv)?;
        count_end(&mut self.ends, tuple_buf);
        Ok(())
    }
}

/// Validity of a k-th order chain over tuples: `j` extends `i` by one state, by a move that
/// is valid between their last states. The successors of a tuple are found through an index
/// of the tuples by their first states (made on first use), not by trying every tuple: linear
/// in the tuples, not quadratic.
pub(super) struct TupleValidity<'a> {
    tuples: &'a [Vec<u32>],
    order: usize,
    base: &'a dyn Validity,
    /// Tuple ids by their states but the last, sorted.
    by_prefix: std::cell::OnceCell<HashMap<&'a [u32], Vec<u32>>>,
}

impl<'a> TupleValidity<'a> {
    pub(super) fn new(tuples: &'a [Vec<u32>], order: usize, base: &'a dyn Validity) -> Self {
        TupleValidity {
            tuples,
            order,
            base,
            by_prefix: std::cell::OnceCell::new(),
        }
    }

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
        let Some(ti) = self.tuples.get(from as usize) else {
            return Vec::new();
        };
        let index = self.by_prefix.get_or_init(|| {
            let mut m: HashMap<&[u32], Vec<u32>> = HashMap::new();
            for (j, t) in self.tuples.iter().enumerate() {
                if let Some((_, prefix)) = t.split_last() {
                    m.entry(prefix).or_default().push(j as u32);
                }
            }
            m
        });
        let keep = ti.len().min(self.order - 1);
        index
            .get(&ti[ti.len() - keep..])
            .into_iter()
            .flatten()
            .copied()
            .filter(|&j| (j as usize) < num_states && self.valid(from, j))
            .collect()
    }
    fn num_valid_successors(&self, from: u32, num_states: usize) -> usize {
        self.valid_successors(from, num_states).len()
    }
}

/// The validity of a spec on state indices, knowing when every move is valid.
pub(super) struct SpecValidity<'a>(pub(super) &'a Abstraction);

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

/// Above this many states, pairs are counted in a hash map rather than a dense matrix.
pub(super) const DENSE_PAIRS_MAX_STATES: usize = 1024;

/// Records the last state of a trace (nothing for an empty one), for an end state now or
/// when learning from the counts later.
pub(super) fn count_end(ends: &mut BTreeMap<u32, u64>, trace: &[u32]) {
    if let Some(&last) = trace.last() {
        *ends.entry(last).or_insert(0) += 1;
    }
}
