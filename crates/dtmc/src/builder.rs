//! [`DtmcBuilder`]: the one checked way to assemble a [`Dtmc`].

use crate::error::{DtmcError, Result};
use crate::model::{
    row_sum_ok, Dtmc, Matrix, RewardStructure, StateSet, Valuations, ROW_SUM_TOLERANCE,
};
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// What the builder did besides copying: fixed deadlocks, merged duplicate entries, dropped
/// zero-probability entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// States that had no successor and got a self-loop (sorted).
    pub deadlocks_fixed: Vec<u32>,
    /// Number of duplicate `(src, dst)` entries merged by summing.
    pub duplicates_merged: usize,
    /// Number of entries with probability 0 that were dropped.
    pub zeros_dropped: usize,
}

#[derive(Clone, Debug)]
struct RewardSpec {
    name: Option<String>,
    state: Option<Vec<f64>>,
    transition: Vec<(u32, u32, f64)>,
    row: Vec<(u32, f64)>,
    has_transition: bool,
}

/// Assembles a [`Dtmc`] from transitions added in any order, and checks it.
///
/// Duplicate `(src, dst)` entries are merged by summing their probabilities (as PRISM does for
/// several updates leading to the same state). [`DtmcBuilder::build`] checks that every
/// probability is finite and in [0, 1], that every row sums to 1 within 1e-9 (the error names
/// the state, its sum and its valuation when known), and that there is an initial state.
/// Rows without successors are an error unless [`DtmcBuilder::fix_deadlocks`] is set, in which
/// case they get a self-loop and are listed in the [`BuildReport`].
///
/// The built model always has the labels `"init"` (the initial states) and `"deadlock"` (the
/// states whose deadlock was fixed), first, unless they were given explicitly.
///
/// ```
/// use augur_dtmc::DtmcBuilder;
/// let mut b = DtmcBuilder::new(2);
/// b.add_transition(0, 1, 0.5)?;
/// b.add_transition(0, 0, 0.5)?;
/// b.add_transition(1, 1, 1.0)?;
/// b.add_initial(0)?;
/// b.add_label_state("goal", 1)?;
/// let (dtmc, report) = b.build()?;
/// assert_eq!(dtmc.num_transitions(), 3);
/// assert!(report.deadlocks_fixed.is_empty());
/// # Ok::<(), augur_dtmc::DtmcError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DtmcBuilder {
    num_states: usize,
    entries: Entries,
    exact: Option<Vec<BigRational>>,
    initial: Vec<u32>,
    labels: Vec<(String, StateSet)>,
    /// The position of each label in `labels` (a linear search made reading 100,000 labels
    /// quadratic).
    label_positions: std::collections::HashMap<String, usize>,
    rewards: Vec<RewardSpec>,
    valuations: Option<Valuations>,
    fix_deadlocks: bool,
}

impl DtmcBuilder {
    /// A builder for a model with `num_states` states (indices `0..num_states`).
    pub fn new(num_states: usize) -> Self {
        DtmcBuilder {
            num_states,
            entries: Entries::Sorted {
                starts: Vec::new(),
                targets: Vec::new(),
                probs: Vec::new(),
            },
            exact: None,
            initial: Vec::new(),
            labels: Vec::new(),
            label_positions: Default::default(),
            rewards: Vec::new(),
            valuations: None,
            fix_deadlocks: false,
        }
    }

    /// Like [`DtmcBuilder::new`], reserving room for `transitions` entries.
    pub fn with_capacity(num_states: usize, transitions: usize) -> Self {
        let mut b = Self::new(num_states);
        if let Entries::Sorted { targets, probs, .. } = &mut b.entries {
            targets.reserve(transitions);
            probs.reserve(transitions);
        }
        b
    }

    /// The number of states.
    pub fn num_states(&self) -> usize {
        self.num_states
    }

    /// Changes the number of states (e.g. while exploring a model). Shrinking below a state
    /// already used makes [`DtmcBuilder::build`] fail with an out-of-range error.
    pub fn set_num_states(&mut self, n: usize) {
        self.num_states = n;
    }

    /// Whether to give states without successors a self-loop (reported in
    /// [`BuildReport::deadlocks_fixed`]) instead of failing. Default: `false`.
    pub fn fix_deadlocks(&mut self, yes: bool) -> &mut Self {
        self.fix_deadlocks = yes;
        self
    }

    fn check_state(&self, s: u32) -> Result<()> {
        if (s as usize) < self.num_states {
            Ok(())
        } else {
            Err(DtmcError::StateOutOfRange {
                state: s.into(),
                num_states: self.num_states,
            })
        }
    }

    /// Adds probability `prob` to the transition `src -> dst`.
    /// Fails at once if a state is out of range or `prob` is not a number in [0, 1].
    pub fn add_transition(&mut self, src: u32, dst: u32, prob: f64) -> Result<()> {
        self.check_state(src)?;
        self.check_state(dst)?;
        if !(0.0..=1.0).contains(&prob) {
            return Err(DtmcError::BadProbability { src, dst, prob });
        }
        self.entries.push(src, dst, prob);
        if let Some(ex) = &mut self.exact {
            ex.push(BigRational::from_float(prob).unwrap_or_else(BigRational::zero));
        }
        Ok(())
    }

    /// Adds an exactly known probability to `src -> dst`; the model then carries
    /// [`Dtmc::exact`] (entries added with [`DtmcBuilder::add_transition`] count as the exact
    /// dyadic value of their f64).
    pub fn add_transition_exact(&mut self, src: u32, dst: u32, prob: BigRational) -> Result<()> {
        let f = prob.to_f64().unwrap_or(f64::NAN);
        if prob < BigRational::zero() || prob > BigRational::from_integer(1.into()) {
            return Err(DtmcError::BadProbability { src, dst, prob: f });
        }
        self.check_state(src)?;
        self.check_state(dst)?;
        if self.exact.is_none() {
            self.exact = Some(
                self.entries
                    .probs()
                    .map(|p| BigRational::from_float(p).unwrap_or_else(BigRational::zero))
                    .collect(),
            );
        }
        self.entries.push(src, dst, f);
        if let Some(ex) = &mut self.exact {
            ex.push(prob);
        }
        Ok(())
    }

    /// Adds a whole row: `(dst, prob)` pairs from `src`.
    pub fn add_row(&mut self, src: u32, row: impl IntoIterator<Item = (u32, f64)>) -> Result<()> {
        for (dst, p) in row {
            self.add_transition(src, dst, p)?;
        }
        Ok(())
    }

    /// Marks `s` as an initial state.
    pub fn add_initial(&mut self, s: u32) -> Result<()> {
        self.check_state(s)?;
        self.initial.push(s);
        Ok(())
    }

    /// Adds state `s` to label `name` (creating the label).
    pub fn add_label_state(&mut self, name: &str, s: u32) -> Result<()> {
        self.check_state(s)?;
        let i = self.label_index(name);
        let set = &mut self.labels[i].1;
        if set.len() <= s as usize {
            set.grow(s as usize + 1);
        }
        set.insert(s as usize);
        Ok(())
    }

    /// Declares a label (possibly empty) and returns its position; labels keep declaration
    /// order.
    pub fn label_index(&mut self, name: &str) -> usize {
        match self.label_positions.get(name) {
            Some(&i) => i,
            None => {
                self.labels.push((name.to_string(), StateSet::new()));
                self.label_positions
                    .insert(name.to_string(), self.labels.len() - 1);
                self.labels.len() - 1
            }
        }
    }

    /// Adds the states of `set` to label `name`. Fails if the set has a state out of range.
    pub fn add_label(&mut self, name: &str, set: &StateSet) -> Result<()> {
        let i = self.label_index(name);
        for s in set.ones() {
            self.check_state(s as u32)?;
            if s > u32::MAX as usize {
                return Err(DtmcError::StateOutOfRange {
                    state: s as u64,
                    num_states: self.num_states,
                });
            }
            let l = &mut self.labels[i].1;
            if l.len() <= s {
                l.grow(s + 1);
            }
            l.insert(s);
        }
        Ok(())
    }

    /// Declares a reward structure and returns its index (`R{i+1}` in PCTL).
    pub fn add_reward_structure(&mut self, name: Option<&str>) -> usize {
        self.rewards.push(RewardSpec {
            name: name.map(str::to_string),
            state: None,
            transition: Vec::new(),
            row: Vec::new(),
            has_transition: false,
        });
        self.rewards.len() - 1
    }

    fn reward_spec(&mut self, r: usize) -> Result<&mut RewardSpec> {
        let n = self.rewards.len();
        self.rewards.get_mut(r).ok_or_else(|| {
            DtmcError::Invalid(format!("reward structure {r} not declared ({n} declared)"))
        })
    }

    /// Adds `value` to the state reward of `s` in structure `r`.
    pub fn add_state_reward(&mut self, r: usize, s: u32, value: f64) -> Result<()> {
        self.check_state(s)?;
        if !value.is_finite() {
            return Err(DtmcError::BadReward {
                what: format!("of state {s}"),
                value,
            });
        }
        let n = self.num_states;
        let spec = self.reward_spec(r)?;
        let v = spec.state.get_or_insert_with(|| vec![0.0; n]);
        if v.len() < n {
            v.resize(n, 0.0);
        }
        v[s as usize] += value;
        Ok(())
    }

    /// Declares that structure `r` has state rewards (all 0 until added), so that it is
    /// `Some` in the model even if every reward is 0.
    pub fn declare_state_rewards(&mut self, r: usize) -> Result<()> {
        let n = self.num_states;
        let spec = self.reward_spec(r)?;
        spec.state.get_or_insert_with(|| vec![0.0; n]);
        Ok(())
    }

    /// Declares that structure `r` has transition rewards (all 0 until added).
    pub fn declare_transition_rewards(&mut self, r: usize) -> Result<()> {
        self.reward_spec(r)?.has_transition = true;
        Ok(())
    }

    /// Adds `value` to the reward of transition `src -> dst` in structure `r`. The transition
    /// must exist when the model is built.
    pub fn add_transition_reward(
        &mut self,
        r: usize,
        src: u32,
        dst: u32,
        value: f64,
    ) -> Result<()> {
        self.check_state(src)?;
        self.check_state(dst)?;
        if !value.is_finite() {
            return Err(DtmcError::BadReward {
                what: format!("of transition {src} -> {dst}"),
                value,
            });
        }
        let spec = self.reward_spec(r)?;
        spec.has_transition = true;
        spec.transition.push((src, dst, value));
        Ok(())
    }

    /// Adds `value` to the reward of every transition leaving `s` in structure `r` (an
    /// action reward, as in PRISM's `[] guard : value;` or DRN's `action 0 [value]`): the
    /// expected one-step reward of `s` grows by `value`. Applied at build time, after deadlock
    /// fixing.
    pub fn add_row_reward(&mut self, r: usize, s: u32, value: f64) -> Result<()> {
        self.check_state(s)?;
        if !value.is_finite() {
            return Err(DtmcError::BadReward {
                what: format!("of the transitions of state {s}"),
                value,
            });
        }
        let spec = self.reward_spec(r)?;
        spec.has_transition = true;
        spec.row.push((s, value));
        Ok(())
    }

    /// Sets the state valuations (checked against the number of states at build time).
    pub fn set_valuations(&mut self, v: Valuations) {
        self.valuations = Some(v);
    }

    /// Checks everything and builds the model.
    pub fn build(self) -> Result<(Dtmc, BuildReport)> {
        let DtmcBuilder {
            num_states: n,
            entries,
            exact,
            mut initial,
            labels,
            label_positions: _,
            rewards,
            valuations,
            fix_deadlocks,
        } = self;
        if n > u32::MAX as usize {
            return Err(DtmcError::Invalid("more than 2^32-1 states".into()));
        }
        if let Some((s, t)) = entries.first_out_of_range(n) {
            return Err(DtmcError::StateOutOfRange {
                state: u64::from(s.max(t)),
                num_states: n,
            });
        }
        let mut report = BuildReport::default();
        let (indptr, indices, data, exact_out) = match entries {
            Entries::Sorted {
                starts,
                targets,
                probs,
            } if exact.is_none() => sorted_rows(
                n,
                (starts, targets, probs),
                fix_deadlocks,
                valuations.as_ref(),
                &mut report,
            )?,
            entries => any_order_rows(
                n,
                entries.into_triples(),
                exact,
                fix_deadlocks,
                valuations.as_ref(),
                &mut report,
            )?,
        };
        let matrix = Matrix::try_new((n, n), indptr, indices, data)
            .map_err(|(_, _, _, e)| DtmcError::Invalid(format!("matrix structure: {e}")))?;

        initial.sort_unstable();
        initial.dedup();
        if initial.is_empty() {
            return Err(DtmcError::NoInitialState);
        }
        // States may have been checked against a larger count (see `set_num_states`).
        let out_of_range = |s: usize| DtmcError::StateOutOfRange {
            state: s as u64,
            num_states: n,
        };
        if let Some(&s) = initial.iter().find(|&&s| s as usize >= n) {
            return Err(out_of_range(s as usize));
        }

        let mut dtmc = Dtmc {
            matrix,
            initial,
            labels: Vec::with_capacity(labels.len() + 2),
            rewards: Vec::with_capacity(rewards.len()),
            valuations: None,
            exact: exact_out,
            intervals: None,
        };

        for (name, mut set) in labels {
            if let Some(s) = set.ones().find(|&s| s >= n) {
                return Err(out_of_range(s));
            }
            if set.len() > n {
                let mut t = StateSet::with_capacity(n);
                t.union_with(&set);
                set = t;
            }
            set.grow(n);
            dtmc.labels.push((name, set));
        }
        if let Some(set) = dtmc.label("init") {
            if *set != dtmc.initial_set() {
                return Err(DtmcError::Invalid(format!(
                    "the label \"init\" ({:?}) differs from the initial states ({:?})",
                    set.ones().collect::<Vec<_>>(),
                    dtmc.initial
                )));
            }
        }
        dtmc.add_init_label();
        dtmc.add_deadlock_label(&report.deadlocks_fixed);

        for spec in rewards {
            if let Some(v) = &spec.state {
                if let Some(s) = (n..v.len()).find(|&s| v[s] != 0.0) {
                    return Err(out_of_range(s));
                }
            }
            let state = spec.state.map(|mut v| {
                v.resize(n, 0.0);
                v
            });
            let transition = if spec.has_transition {
                let mut v = vec![0.0; dtmc.num_transitions()];
                for (s, t, r) in spec.transition {
                    let k = dtmc
                        .transition_index(s, t)
                        .ok_or(DtmcError::NoSuchTransition { src: s, dst: t })?;
                    v[k] += r;
                }
                for (s, r) in spec.row {
                    if s as usize >= n {
                        return Err(out_of_range(s as usize));
                    }
                    for k in dtmc.row_range(s as usize) {
                        v[k] += r;
                    }
                }
                Some(v)
            } else {
                None
            };
            dtmc.rewards.push(RewardStructure {
                name: spec.name,
                state,
                transition,
                exact: None,
            });
        }

        if let Some(v) = valuations {
            v.check_shape(n)?;
            dtmc.valuations = Some(v);
        }
        Ok((dtmc, report))
    }
}

/// The CSR rows (`indptr`, `indices`, `data`, and the exact probabilities when kept) of a
/// model's entries.
type Rows = (Vec<u32>, Vec<u32>, Vec<f64>, Option<Vec<BigRational>>);

/// [`DtmcBuilder::build`]'s rows from entries in any order: a counting sort of the entries'
/// positions by source, then each row sorted by target (duplicates summed in the order they
/// were added), zeros dropped, deadlocks fixed or refused, every row checked.
fn any_order_rows(
    n: usize,
    entries: Vec<(u32, u32, f64)>,
    exact: Option<Vec<BigRational>>,
    fix_deadlocks: bool,
    valuations: Option<&Valuations>,
    report: &mut BuildReport,
) -> Result<Rows> {
    // Counting sort of entry positions by source, then sort each row by target.
    let mut ptr: Vec<u32> = Vec::new();
    if ptr.try_reserve_exact(n + 1).is_err() {
        return Err(DtmcError::Invalid(format!(
            "{n} states: more than memory can hold"
        )));
    }
    ptr.resize(n + 1, 0);
    for e in &entries {
        ptr[e.0 as usize + 1] += 1;
    }
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    let mut next: Vec<u32> = ptr[..n].to_vec();
    let mut order = vec![0u32; entries.len()];
    for (k, e) in entries.iter().enumerate() {
        let slot = &mut next[e.0 as usize];
        order[*slot as usize] = k as u32;
        *slot += 1;
    }
    drop(next);

    let mut indptr: Vec<u32> = Vec::with_capacity(n + 1);
    let mut indices: Vec<u32> = Vec::with_capacity(entries.len());
    let mut data: Vec<f64> = Vec::with_capacity(entries.len());
    let mut exact_out: Option<Vec<BigRational>> =
        exact.as_ref().map(|_| Vec::with_capacity(entries.len()));
    indptr.push(0);
    for s in 0..n {
        let row = &mut order[ptr[s] as usize..ptr[s + 1] as usize];
        row.sort_unstable_by_key(|&k| (entries[k as usize].1, k));
        let mut sum = 0.0;
        let row_start = indices.len();
        for &k in row.iter() {
            let (_, t, p) = entries[k as usize];
            let ex = exact.as_ref().map(|e| &e[k as usize]);
            let is_zero = match ex {
                Some(x) => x.is_zero(),
                None => p == 0.0,
            };
            if is_zero {
                report.zeros_dropped += 1;
                continue;
            }
            if indices.len() > row_start && indices.last() == Some(&t) {
                report.duplicates_merged += 1;
                if let Some(d) = data.last_mut() {
                    *d += p;
                }
                if let (Some(eo), Some(x)) = (exact_out.as_mut(), ex) {
                    if let Some(last) = eo.last_mut() {
                        *last += x;
                    }
                }
            } else {
                indices.push(t);
                data.push(p);
                if let (Some(eo), Some(x)) = (exact_out.as_mut(), ex) {
                    eo.push(x.clone());
                }
            }
            sum += p;
        }
        if indices.len() == row_start {
            if fix_deadlocks {
                report.deadlocks_fixed.push(s as u32);
                indices.push(s as u32);
                data.push(1.0);
                if let Some(eo) = exact_out.as_mut() {
                    eo.push(BigRational::from_integer(1.into()));
                }
                sum = 1.0;
            } else {
                let states: Vec<u32> = (s..n)
                    .filter(|&q| {
                        let r = &order[ptr[q] as usize..ptr[q + 1] as usize];
                        r.iter().all(|&k| entries[k as usize].2 == 0.0)
                    })
                    .map(|q| q as u32)
                    .collect();
                return Err(DtmcError::Deadlock { states });
            }
        }
        let valuation = || valuations.and_then(|v| v.describe(s));
        // Merged duplicates may exceed 1 by rounding: tolerate that (clamping to 1),
        // reject anything beyond the row-sum tolerance.
        for k in row_start..data.len() {
            if data[k] > 1.0 {
                if data[k] - 1.0 <= ROW_SUM_TOLERANCE {
                    data[k] = 1.0;
                } else {
                    return Err(DtmcError::BadProbability {
                        src: s as u32,
                        dst: indices[k],
                        prob: data[k],
                    });
                }
            }
        }
        if !row_sum_ok(sum) {
            return Err(DtmcError::RowSum {
                state: s as u32,
                sum,
                valuation: valuation(),
            });
        }
        indptr.push(indices.len() as u32);
    }
    if indices.len() > u32::MAX as usize {
        return Err(DtmcError::Invalid("more than 2^32-1 transitions".into()));
    }
    Ok((indptr, indices, data, exact_out))
}

/// The transitions added to a [`DtmcBuilder`], as they came.
#[derive(Clone, Debug)]
enum Entries {
    /// Each entry so far came after the one before it in `(source, target)` order (what
    /// PRISM's exported `.tra` files hold): kept as CSR rows already, so that
    /// [`DtmcBuilder::build`] neither sorts nor copies them. `starts[s]` is where row `s`
    /// begins in `targets` / `probs`, for the rows up to the last source added.
    Sorted {
        starts: Vec<u32>,
        targets: Vec<u32>,
        probs: Vec<f64>,
    },
    /// In any order, as `(source, target, probability)`; sorted by `build`.
    Any(Vec<(u32, u32, f64)>),
}

impl Entries {
    fn push(&mut self, src: u32, dst: u32, prob: f64) {
        if let Entries::Sorted {
            starts,
            targets,
            probs,
        } = self
        {
            let rows = starts.len();
            let next_row = src as usize >= rows;
            let in_order = if next_row {
                // A gap of empty rows is kept only while the row starts stay small next to
                // the entries (a sparse file with huge state indices goes to `Any`).
                src as usize <= 2 * targets.len() + 1024 && targets.len() < u32::MAX as usize
            } else {
                src as usize + 1 == rows
                    && targets.len() > starts[rows - 1] as usize
                    && targets.last().is_some_and(|&t| t < dst)
            };
            if in_order {
                if next_row {
                    starts.resize(src as usize + 1, targets.len() as u32);
                }
                targets.push(dst);
                probs.push(prob);
                return;
            }
            *self = Entries::Any(std::mem::replace(self, Entries::Any(Vec::new())).into_triples());
        }
        if let Entries::Any(v) = self {
            v.push((src, dst, prob));
        }
    }

    /// The probabilities in the order they were added.
    fn probs(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            Entries::Sorted { probs, .. } => Box::new(probs.iter().copied()),
            Entries::Any(v) => Box::new(v.iter().map(|e| e.2)),
        }
    }

    /// The first entry (in the order added) with a state not below `n`.
    fn first_out_of_range(&self, n: usize) -> Option<(u32, u32)> {
        match self {
            Entries::Sorted {
                starts, targets, ..
            } => {
                let end = |s: usize| starts.get(s + 1).map_or(targets.len(), |&x| x as usize);
                (0..starts.len()).find_map(|s| {
                    let row = &targets[starts[s] as usize..end(s)];
                    let t = if s >= n {
                        row.first()
                    } else {
                        row.iter().find(|&&t| t as usize >= n)
                    };
                    t.map(|&t| (s as u32, t))
                })
            }
            Entries::Any(v) => v
                .iter()
                .find(|e| e.0 as usize >= n || e.1 as usize >= n)
                .map(|e| (e.0, e.1)),
        }
    }

    /// The entries as `(source, target, probability)`, in the order they were added.
    fn into_triples(self) -> Vec<(u32, u32, f64)> {
        match self {
            Entries::Sorted {
                starts,
                targets,
                probs,
            } => {
                let mut v = Vec::with_capacity(targets.len());
                for s in 0..starts.len() {
                    let end = starts.get(s + 1).map_or(targets.len(), |&x| x as usize);
                    for k in starts[s] as usize..end {
                        v.push((s as u32, targets[k], probs[k]));
                    }
                }
                v
            }
            Entries::Any(v) => v,
        }
    }
}

/// [`DtmcBuilder::build`]'s rows from entries added in order (no duplicates, rows sorted):
/// the entries are the CSR arrays already, used as they are unless a zero is dropped or a
/// deadlock fixed; every row is checked as in [`any_order_rows`].
fn sorted_rows(
    n: usize,
    (starts, targets, probs): (Vec<u32>, Vec<u32>, Vec<f64>),
    fix_deadlocks: bool,
    valuations: Option<&Valuations>,
    report: &mut BuildReport,
) -> Result<Rows> {
    // Entries are in range (checked by `build`), so `starts.len() <= n`.
    let end = |s: usize| starts.get(s + 1).map_or(targets.len(), |&x| x as usize);
    let row = |s: usize| match starts.get(s) {
        Some(&a) => a as usize..end(s),
        None => 0..0,
    };
    let as_they_are =
        starts.len() == n && (0..n).all(|s| !row(s).is_empty()) && !probs.contains(&0.0);
    if as_they_are {
        for s in 0..n {
            let sum: f64 = probs[row(s)].iter().fold(0.0, |a, &p| a + p);
            if !row_sum_ok(sum) {
                return Err(DtmcError::RowSum {
                    state: s as u32,
                    sum,
                    valuation: valuations.and_then(|v| v.describe(s)),
                });
            }
        }
        let mut indptr = starts;
        indptr.push(targets.len() as u32);
        let (mut indices, mut data) = (targets, probs);
        indices.shrink_to_fit();
        data.shrink_to_fit();
        return Ok((indptr, indices, data, None));
    }
    let mut indptr: Vec<u32> = Vec::new();
    if indptr.try_reserve_exact(n + 1).is_err() {
        return Err(DtmcError::Invalid(format!(
            "{n} states: more than memory can hold"
        )));
    }
    let mut indices: Vec<u32> = Vec::with_capacity(targets.len());
    let mut data: Vec<f64> = Vec::with_capacity(targets.len());
    indptr.push(0);
    for s in 0..n {
        let row_start = indices.len();
        let mut sum = 0.0;
        for k in row(s) {
            if probs[k] == 0.0 {
                report.zeros_dropped += 1;
                continue;
            }
            indices.push(targets[k]);
            data.push(probs[k]);
            sum += probs[k];
        }
        if indices.len() == row_start {
            if !fix_deadlocks {
                let states = (s..n)
                    .filter(|&q| probs[row(q)].iter().all(|&p| p == 0.0))
                    .map(|q| q as u32)
                    .collect();
                return Err(DtmcError::Deadlock { states });
            }
            report.deadlocks_fixed.push(s as u32);
            indices.push(s as u32);
            data.push(1.0);
            sum = 1.0;
        }
        if !row_sum_ok(sum) {
            return Err(DtmcError::RowSum {
                state: s as u32,
                sum,
                valuation: valuations.and_then(|v| v.describe(s)),
            });
        }
        indptr.push(indices.len() as u32);
    }
    Ok((indptr, indices, data, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Entries added in `(source, target)` order (kept as CSR rows) build the same model,
        /// report and errors as the same entries added in reverse (sorted by `build`).
        #[test]
        fn entries_in_order_build_as_in_any_order(
            rows in proptest::collection::vec(
                (proptest::collection::btree_set(0u32..6, 0..4), 0u8..4),
                1..6,
            ),
            fix in proptest::prelude::any::<bool>(),
        ) {
            let n = rows.len();
            let mut triples = Vec::new();
            for (s, (targets, kind)) in rows.iter().enumerate() {
                let targets: std::collections::BTreeSet<u32> =
                    targets.iter().map(|t| t % n as u32).collect();
                let len = targets.len() as f64;
                for (i, &t) in targets.iter().enumerate() {
                    let p = match kind {
                        0 if i == 0 => 0.0,
                        1 => 0.5,
                        _ => 1.0 / len,
                    };
                    triples.push((s as u32, t, p));
                }
            }
            let build = |entries: &[(u32, u32, f64)], sorted: bool| {
                let mut b = DtmcBuilder::new(n);
                for &(s, t, p) in entries {
                    b.add_transition(s, t, p).unwrap();
                }
                assert_eq!(matches!(b.entries, Entries::Sorted { .. }), sorted);
                b.add_initial(0).unwrap();
                b.fix_deadlocks(fix);
                match b.build() {
                    Ok((d, report)) => {
                        let labels: Vec<(String, Vec<usize>)> = d
                            .labels
                            .iter()
                            .map(|(name, set)| (name.clone(), set.ones().collect()))
                            .collect();
                        format!("{:?} {:?} {labels:?} {report:?}", d.matrix, d.initial)
                    }
                    Err(e) => format!("{e:?}"),
                }
            };
            let mut reversed = triples.clone();
            reversed.reverse();
            proptest::prop_assert_eq!(
                build(&triples, true),
                build(&reversed, triples.len() < 2)
            );
        }
    }

    #[test]
    fn a_far_source_is_kept_as_an_entry_not_as_empty_rows() {
        let mut b = DtmcBuilder::new(u32::MAX as usize);
        b.add_transition(0, 0, 1.0).unwrap();
        assert!(matches!(b.entries, Entries::Sorted { .. }));
        b.add_transition(4_000_000_000, 0, 1.0).unwrap();
        assert!(matches!(&b.entries, Entries::Any(v) if v.len() == 2));
    }

    #[test]
    fn merges_duplicates_and_sorts() {
        let mut b = DtmcBuilder::new(3);
        b.add_transition(0, 2, 0.25).unwrap();
        b.add_transition(0, 1, 0.5).unwrap();
        b.add_transition(0, 2, 0.25).unwrap();
        b.add_transition(1, 1, 1.0).unwrap();
        b.add_transition(2, 0, 0.0).unwrap();
        b.add_transition(2, 2, 1.0).unwrap();
        b.add_initial(0).unwrap();
        let (d, rep) = b.build().unwrap();
        assert_eq!(d.matrix.indices(), &[1, 2, 1, 2]);
        assert_eq!(d.matrix.data(), &[0.5, 0.5, 1.0, 1.0]);
        assert_eq!(rep.duplicates_merged, 1);
        assert_eq!(rep.zeros_dropped, 1);
        assert_eq!(d.label_names().collect::<Vec<_>>(), ["init", "deadlock"]);
        d.validate().unwrap();
    }

    #[test]
    fn row_sum_error_names_state_sum_and_valuation() {
        let mut b = DtmcBuilder::new(2);
        b.add_transition(0, 1, 1.0).unwrap();
        b.add_transition(1, 0, 0.5).unwrap();
        b.add_transition(1, 1, 0.4).unwrap();
        b.add_initial(0).unwrap();
        b.set_valuations(Valuations::new(
            vec!["x".into()],
            vec![augur_expr::Type::Int],
            vec![augur_expr::Value::Int(7), augur_expr::Value::Int(8)],
        ));
        let e = b.build().unwrap_err();
        match &e {
            DtmcError::RowSum { state, sum, .. } => {
                assert_eq!(*state, 1);
                assert!((sum - 0.9).abs() < 1e-15);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(e.to_string(), "row of state 1 (x=8) sums to 0.9, not 1");
    }

    #[test]
    fn rejects_bad_probabilities_and_ranges() {
        let mut b = DtmcBuilder::new(2);
        assert!(matches!(
            b.add_transition(0, 1, f64::NAN),
            Err(DtmcError::BadProbability { .. })
        ));
        assert!(matches!(
            b.add_transition(0, 1, 1.5),
            Err(DtmcError::BadProbability { .. })
        ));
        assert!(matches!(
            b.add_transition(0, 1, -0.1),
            Err(DtmcError::BadProbability { .. })
        ));
        assert!(matches!(
            b.add_transition(0, 2, 0.1),
            Err(DtmcError::StateOutOfRange {
                state: 2,
                num_states: 2
            })
        ));
        // Merged duplicates above 1.
        b.add_transition(0, 1, 0.75).unwrap();
        b.add_transition(0, 1, 0.75).unwrap();
        b.add_transition(1, 1, 1.0).unwrap();
        b.add_initial(0).unwrap();
        assert!(matches!(
            b.build(),
            Err(DtmcError::BadProbability { src: 0, dst: 1, .. })
        ));
    }

    #[test]
    fn deadlocks_error_or_fixed() {
        let mk = || {
            let mut b = DtmcBuilder::new(3);
            b.add_transition(0, 1, 1.0).unwrap();
            b.add_initial(0).unwrap();
            b
        };
        match mk().build() {
            Err(DtmcError::Deadlock { states }) => assert_eq!(states, vec![1, 2]),
            other => panic!("unexpected {other:?}"),
        }
        let mut b = mk();
        b.fix_deadlocks(true);
        let (d, rep) = b.build().unwrap();
        assert_eq!(rep.deadlocks_fixed, vec![1, 2]);
        assert_eq!(d.successors(2).collect::<Vec<_>>(), vec![(2, 1.0)]);
        let dl: Vec<usize> = d.label("deadlock").unwrap().ones().collect();
        assert_eq!(dl, vec![1, 2]);
    }

    #[test]
    fn merged_rounding_above_one_is_clamped() {
        // 9/28 + 18/28 + 1/28 = 1.0000000000000002 in f64 (summed left to right).
        let parts = [9.0 / 28.0, 18.0 / 28.0, 1.0 / 28.0];
        assert!(parts.iter().sum::<f64>() > 1.0);
        let mut b = DtmcBuilder::new(1);
        b.add_row(0, parts.iter().map(|&p| (0, p))).unwrap();
        b.add_initial(0).unwrap();
        let (d, _) = b.build().unwrap();
        assert_eq!(d.matrix.data(), &[1.0]);
        d.validate().unwrap();
    }

    #[test]
    fn init_label_must_match_initial_states() {
        let mut b = DtmcBuilder::new(2);
        b.add_row(0, [(1, 1.0)]).unwrap();
        b.add_row(1, [(1, 1.0)]).unwrap();
        b.add_initial(0).unwrap();
        b.add_label_state("init", 1).unwrap();
        let e = b.build().unwrap_err();
        assert!(
            e.to_string().contains("differs from the initial states"),
            "{e}"
        );
    }

    #[test]
    fn needs_an_initial_state() {
        let mut b = DtmcBuilder::new(1);
        b.add_transition(0, 0, 1.0).unwrap();
        assert!(matches!(b.build(), Err(DtmcError::NoInitialState)));
    }

    #[test]
    fn rewards_transpose_and_expected_rewards() {
        let mut b = DtmcBuilder::new(3);
        b.add_row(0, [(1, 0.25), (2, 0.75)]).unwrap();
        b.add_row(1, [(1, 1.0)]).unwrap();
        b.add_row(2, [(0, 0.5), (2, 0.5)]).unwrap();
        b.add_initial(0).unwrap();
        let r = b.add_reward_structure(Some("cost"));
        b.add_state_reward(r, 0, 1.0).unwrap();
        b.add_transition_reward(r, 0, 2, 4.0).unwrap();
        b.add_transition_reward(r, 2, 0, 2.0).unwrap();
        let bad = b.add_reward_structure(None);
        b.add_transition_reward(bad, 1, 1, 1.0).unwrap();
        let (d, _) = b.build().unwrap();
        let rs = d.reward_named("cost").unwrap();
        assert_eq!(d.reward_indexed(1).unwrap(), rs);
        assert_eq!(d.default_reward().unwrap(), rs);
        assert_eq!(
            d.reward_indexed(3).unwrap_err().to_string(),
            "no reward structure number 3 (the model has 1 \"cost\", 2 (unnamed))"
        );
        assert!(d.reward_indexed(0).is_err());
        assert!(d.reward_named("x").is_err());
        // state 0: 1 + 0.75*4 = 4; state 1: 0; state 2: 0.5*2 = 1.
        assert_eq!(d.expected_one_step_rewards(rs), vec![4.0, 0.0, 1.0]);
        let t = d.transpose();
        // Predecessors of 0: 2 (0.5); of 1: 0 (0.25), 1 (1.0); of 2: 0 (0.75), 2 (0.5).
        assert_eq!(t.indptr().raw_storage(), &[0, 1, 3, 5]);
        assert_eq!(t.indices(), &[2, 0, 1, 0, 2]);
        assert_eq!(t.data(), &[0.5, 0.25, 1.0, 0.75, 0.5]);

        let mut b = DtmcBuilder::new(1);
        b.add_row(0, [(0, 1.0)]).unwrap();
        b.add_initial(0).unwrap();
        let r = b.add_reward_structure(None);
        b.add_transition_reward(r, 0, 0, 1.0).unwrap();
        b.set_num_states(2);
        b.add_transition_reward(r, 0, 1, 1.0).unwrap();
        b.add_transition(1, 1, 1.0).unwrap();
        assert!(matches!(
            b.build(),
            Err(DtmcError::NoSuchTransition { src: 0, dst: 1 })
        ));
    }

    #[test]
    fn row_rewards_and_shrinking() {
        let mut b = DtmcBuilder::new(2);
        b.add_row(0, [(0, 0.5), (1, 0.5)]).unwrap();
        b.add_initial(0).unwrap();
        b.fix_deadlocks(true);
        let r = b.add_reward_structure(Some("a"));
        b.add_row_reward(r, 0, 2.0).unwrap();
        b.add_row_reward(r, 1, 3.0).unwrap();
        b.add_transition_reward(r, 0, 1, 1.0).unwrap();
        let (d, rep) = b.build().unwrap();
        assert_eq!(rep.deadlocks_fixed, vec![1]);
        assert_eq!(d.rewards[0].transition, Some(vec![2.0, 3.0, 3.0]));
        assert_eq!(d.expected_one_step_rewards(&d.rewards[0]), vec![2.5, 3.0]);

        let mut b = DtmcBuilder::new(3);
        b.add_row(0, [(0, 1.0)]).unwrap();
        b.add_initial(0).unwrap();
        b.add_label_state("x", 2).unwrap();
        b.set_num_states(1);
        assert!(matches!(
            b.build(),
            Err(DtmcError::StateOutOfRange {
                state: 2,
                num_states: 1
            })
        ));
    }

    #[test]
    fn exact_probabilities_are_kept_aligned() {
        use num_bigint::BigInt;
        let third = BigRational::new(BigInt::from(1), BigInt::from(3));
        let mut b = DtmcBuilder::new(2);
        b.add_transition(1, 1, 1.0).unwrap();
        b.add_transition_exact(0, 1, third.clone()).unwrap();
        b.add_transition_exact(0, 0, third.clone()).unwrap();
        b.add_transition_exact(0, 0, third.clone()).unwrap();
        b.add_initial(0).unwrap();
        let (d, _) = b.build().unwrap();
        let ex = d.exact.as_ref().unwrap();
        assert_eq!(ex.len(), 3);
        assert_eq!(ex[0], third.clone() + third.clone());
        assert_eq!(ex[1], third);
        assert_eq!(ex[2], BigRational::from_integer(1.into()));
    }

    #[test]
    fn label_helpers() {
        let mut b = DtmcBuilder::new(2);
        b.add_row(0, [(1, 1.0)]).unwrap();
        b.add_row(1, [(1, 1.0)]).unwrap();
        b.add_initial(0).unwrap();
        b.add_label_state("goal", 1).unwrap();
        let (mut d, _) = b.build().unwrap();
        assert!(d.label_or_err("goal").unwrap().contains(1));
        let e = d.label_or_err("nope").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown label \"nope\" (the model has: init, deadlock, goal)"
        );
        let mut s = StateSet::with_capacity(2);
        s.insert(0);
        d.set_label("goal", s);
        assert_eq!(d.label("goal").unwrap().ones().collect::<Vec<_>>(), vec![0]);
        d.validate().unwrap();
    }
}
