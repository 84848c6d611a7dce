//! The sparse DTMC type.

use crate::error::{DtmcError, Result};
use augur_expr::Value;
use fixedbitset::FixedBitSet;
use num_rational::BigRational;
use serde::{Deserialize, Serialize};
use sprs::CsMatI;

/// A state set, one bit per state.
pub type StateSet = FixedBitSet;

/// The transition matrix: CSR, u32 column indices and row pointers, f64 probabilities.
pub type Matrix = CsMatI<f64, u32, u32>;

/// A reward structure: a reward per state and/or per transition (PRISM's `rewards "name"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewardStructure {
    /// The structure's name (`None` for PRISM's unnamed `rewards ... endrewards`).
    pub name: Option<String>,
    /// Reward earned in each state (one entry per state), if the structure has state rewards.
    pub state: Option<Vec<f64>>,
    /// Reward earned on each transition, aligned with the transition matrix's stored entries
    /// (`matrix.data()[i]` ↔ `transition[i]`), if the structure has transition rewards.
    pub transition: Option<Vec<f64>>,
    /// The exact rewards, when the source was read exactly (PRISM models under
    /// `--method exact`: a reward `1/3` is 1/3, not the decimal of its double); `None` means
    /// each reward is the decimal its double prints as.
    #[serde(skip)]
    pub exact: Option<Box<ExactRewards>>,
}

/// The exact rewards of a [`RewardStructure`] (exact mode), laid out as its doubles.
#[derive(Clone, Debug, PartialEq)]
pub struct ExactRewards {
    /// The reward of each state, when the structure has state rewards.
    pub state: Option<Vec<BigRational>>,
    /// The reward of each stored transition (aligned with the matrix's entries), when the
    /// structure has transition rewards.
    pub transition: Option<Vec<BigRational>>,
}

pub use crate::valuations::{PackedColumn, Valuations};

/// A labelled discrete-time Markov chain.
///
/// Invariants (established by [`crate::DtmcBuilder`] and every reader):
/// every row of `matrix` has at least one entry, its entries are in `[0, 1]` and sum to 1
/// within 1e-9; `labels` bitsets and reward vectors have one entry per state;
/// `initial` is non-empty and in range.
#[derive(Clone, Debug)]
pub struct Dtmc {
    /// Transition probabilities, CSR, rows = source states.
    pub matrix: Matrix,
    /// Initial states, sorted, without duplicates.
    pub initial: Vec<u32>,
    /// Labels by name (including `"init"` and `"deadlock"` when the source defines them).
    pub labels: Vec<(String, StateSet)>,
    /// Reward structures, in declaration order (`R{1}` is the first).
    pub rewards: Vec<RewardStructure>,
    /// State valuations, if known.
    pub valuations: Option<Valuations>,
    /// Exact transition probabilities aligned with `matrix.data()`, when the source was read
    /// exactly (PRISM models under `--method exact`); `None` means the f64 entries are exact
    /// as they stand (every f64 is a dyadic rational).
    pub exact: Option<Vec<BigRational>>,
    /// For an interval DTMC, the `[lo, hi]` bounds of every transition, aligned with
    /// `matrix.data()` (whose values are then one resolution of the intervals, see
    /// [`crate::interval`]); `None` for a DTMC.
    pub intervals: Option<Box<crate::Intervals>>,
}

impl RewardStructure {
    /// The structure's display name (`"r"` numbering is the caller's business; unnamed is `""`).
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// True when some state or transition reward is negative.
    pub fn has_negative(&self) -> bool {
        self.state.iter().flatten().any(|&r| r < 0.0)
            || self.transition.iter().flatten().any(|&r| r < 0.0)
    }
}

/// Formats a value as PRISM writes it (`1`, `0.5`, `true`); doubles round-trip exactly.
pub fn format_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Double(d) => format_f64(*d),
    }
}

/// Formats an f64 so that parsing it back gives the same bits (shortest round-trip digits),
/// always with a `.` or an exponent so it reads back as a double (`1.0`, `0.25`, `1e-20`).
pub fn format_f64(x: f64) -> String {
    format!("{x:?}")
}

impl Dtmc {
    /// Number of states.
    pub fn num_states(&self) -> usize {
        self.matrix.rows()
    }

    /// Number of stored transitions (non-zero entries).
    pub fn num_transitions(&self) -> usize {
        self.matrix.nnz()
    }

    /// The row pointer array of the CSR matrix (`num_states + 1` entries).
    pub fn row_ptr(&self) -> &[u32] {
        self.matrix.indptr().into_raw_storage()
    }

    /// The range of positions in `matrix.indices()` / `matrix.data()` that holds row `s`.
    ///
    /// Panics if `s >= num_states()` (an internal invariant, not user input).
    pub fn row_range(&self, s: usize) -> std::ops::Range<usize> {
        let ptr = self.row_ptr();
        ptr[s] as usize..ptr[s + 1] as usize
    }

    /// The successors of state `s` with their probabilities (empty if `s` is out of range).
    pub fn successors(&self, s: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let range = if s < self.num_states() {
            self.row_range(s)
        } else {
            0..0
        };
        self.matrix.indices()[range.clone()]
            .iter()
            .copied()
            .zip(self.matrix.data()[range].iter().copied())
    }

    /// The position of transition `src -> dst` in `matrix.data()`, if the model has it.
    pub fn transition_index(&self, src: u32, dst: u32) -> Option<usize> {
        let s = src as usize;
        if s >= self.num_states() {
            return None;
        }
        let range = self.row_range(s);
        let start = range.start;
        self.matrix.indices()[range]
            .binary_search(&dst)
            .ok()
            .map(|i| start + i)
    }

    /// The CSR matrix of the transpose (row `t` lists the predecessors `s` of `t` with
    /// `P(s,t)`), for backward searches. Built on each call in O(states + transitions):
    /// compute it once and keep it.
    pub fn transpose(&self) -> Matrix {
        transpose_csr(&self.matrix)
    }

    /// The state set of a label, if the model has it.
    pub fn label(&self, name: &str) -> Option<&StateSet> {
        self.labels.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// The state set of a label, or an [`DtmcError::UnknownLabel`] error listing the labels
    /// the model has.
    pub fn label_or_err(&self, name: &str) -> Result<&StateSet> {
        self.label(name).ok_or_else(|| DtmcError::UnknownLabel {
            name: name.to_string(),
            available: self.labels.iter().map(|(n, _)| n.clone()).collect(),
        })
    }

    /// The label names, in order.
    pub fn label_names(&self) -> impl Iterator<Item = &str> {
        self.labels.iter().map(|(n, _)| n.as_str())
    }

    /// Adds a label, or replaces the states of an existing label with the same name.
    /// The set is resized to the number of states (extra bits beyond it are dropped).
    pub fn set_label(&mut self, name: &str, mut states: StateSet) {
        let n = self.num_states();
        if states.len() > n {
            let mut t = StateSet::with_capacity(n);
            t.extend(states.ones().filter(|&i| i < n));
            states = t;
        } else {
            states.grow(n);
        }
        match self.labels.iter_mut().find(|(l, _)| l == name) {
            Some((_, s)) => *s = states,
            None => self.labels.push((name.to_string(), states)),
        }
    }

    /// The initial states as a bitset.
    pub fn initial_set(&self) -> StateSet {
        let mut set = StateSet::with_capacity(self.num_states());
        for &s in &self.initial {
            if (s as usize) < self.num_states() {
                set.insert(s as usize);
            }
        }
        set
    }

    /// Adds the label `"init"` (the initial states) if the model does not have it.
    pub fn add_init_label(&mut self) {
        if self.label("init").is_none() {
            let set = self.initial_set();
            self.labels.insert(0, ("init".to_string(), set));
        }
    }

    /// Adds the label `"deadlock"` with the given states (e.g. the states whose deadlock was
    /// fixed by a self-loop, see [`crate::BuildReport`]) if the model does not have it,
    /// right after `"init"` (or first).
    /// Out-of-range states are ignored.
    pub fn add_deadlock_label(&mut self, states: &[u32]) {
        if self.label("deadlock").is_none() {
            let n = self.num_states();
            let mut set = StateSet::with_capacity(n);
            set.extend(states.iter().map(|&s| s as usize).filter(|&s| s < n));
            let pos = self
                .labels
                .iter()
                .position(|(l, _)| l == "init")
                .map_or(0, |i| i + 1);
            self.labels.insert(pos, ("deadlock".to_string(), set));
        }
    }

    /// A reward structure by name.
    pub fn reward_structure(&self, name: &str) -> Option<&RewardStructure> {
        self.rewards
            .iter()
            .find(|r| r.name.as_deref() == Some(name))
    }

    fn unknown_reward(&self, what: String) -> DtmcError {
        DtmcError::UnknownRewardStructure {
            what,
            available: self
                .rewards
                .iter()
                .map(|r| r.display_name().to_string())
                .collect(),
        }
    }

    /// A reward structure by name (PCTL `R{"name"}`), or an error listing the structures.
    pub fn reward_named(&self, name: &str) -> Result<&RewardStructure> {
        self.reward_structure(name)
            .ok_or_else(|| self.unknown_reward(format!("\"{name}\"")))
    }

    /// A reward structure by 1-based index (PCTL `R{2}`), or an error listing the structures.
    pub fn reward_indexed(&self, one_based: u32) -> Result<&RewardStructure> {
        (one_based as usize)
            .checked_sub(1)
            .and_then(|i| self.rewards.get(i))
            .ok_or_else(|| self.unknown_reward(format!("number {one_based}")))
    }

    /// The first reward structure (PCTL `R=? [...]` without `{...}`), or an error if there is
    /// none.
    pub fn default_reward(&self) -> Result<&RewardStructure> {
        self.rewards
            .first()
            .ok_or_else(|| self.unknown_reward("(the default)".into()))
    }

    /// The valuation of state `s` as `(x=1,y=true)`, if the model has valuations.
    pub fn describe_state(&self, s: usize) -> Option<String> {
        self.valuations.as_ref().and_then(|v| v.describe(s))
    }

    /// The expected reward earned in one step from each state:
    /// `state(s) + Σ_t P(s,t)·transition(s,t)` (missing parts count as 0).
    /// This is the per-step reward of cumulative, reachability and long-run reward properties.
    pub fn expected_one_step_rewards(&self, r: &RewardStructure) -> Vec<f64> {
        let n = self.num_states();
        let mut out = match &r.state {
            Some(v) if v.len() == n => v.clone(),
            _ => vec![0.0; n],
        };
        if let Some(tr) = &r.transition {
            let data = self.matrix.data();
            if tr.len() == data.len() {
                let ptr = self.row_ptr();
                for (s, o) in out.iter_mut().enumerate() {
                    let (a, b) = (ptr[s] as usize, ptr[s + 1] as usize);
                    let mut acc = 0.0;
                    for (p, rw) in data[a..b].iter().zip(&tr[a..b]) {
                        acc += p * rw;
                    }
                    *o += acc;
                }
            }
        }
        out
    }

    /// Checks every invariant of the type (see the type's documentation); readers and the
    /// builder guarantee them, so this is for models assembled by hand.
    pub fn validate(&self) -> Result<()> {
        let n = self.num_states();
        if self.matrix.cols() != n {
            return Err(DtmcError::Invalid(format!(
                "matrix is {}x{}, not square",
                n,
                self.matrix.cols()
            )));
        }
        if !self.matrix.is_csr() {
            return Err(DtmcError::Invalid("matrix is not CSR".into()));
        }
        if n > u32::MAX as usize {
            return Err(DtmcError::Invalid("more than 2^32-1 states".into()));
        }
        for s in 0..n {
            let range = self.row_range(s);
            if range.is_empty() {
                return Err(DtmcError::Deadlock {
                    states: vec![s as u32],
                });
            }
            let mut sum = 0.0;
            for (&t, &p) in self.matrix.indices()[range.clone()]
                .iter()
                .zip(&self.matrix.data()[range])
            {
                if !(0.0..=1.0).contains(&p) {
                    return Err(DtmcError::BadProbability {
                        src: s as u32,
                        dst: t,
                        prob: p,
                    });
                }
                sum += p;
            }
            if !row_sum_ok(sum) {
                return Err(DtmcError::RowSum {
                    state: s as u32,
                    sum,
                    valuation: self.describe_state(s),
                });
            }
        }
        if self.initial.is_empty() {
            return Err(DtmcError::NoInitialState);
        }
        if !self.initial.windows(2).all(|w| w[0] < w[1]) {
            return Err(DtmcError::Invalid(
                "initial states not sorted and distinct".into(),
            ));
        }
        if let Some(&s) = self.initial.iter().find(|&&s| s as usize >= n) {
            return Err(DtmcError::StateOutOfRange {
                state: s.into(),
                num_states: n,
            });
        }
        for (name, set) in &self.labels {
            if set.len() != n {
                return Err(DtmcError::Invalid(format!(
                    "label \"{name}\" has {} bits for {n} states",
                    set.len()
                )));
            }
        }
        for r in &self.rewards {
            let rname = r.display_name();
            if let Some(v) = &r.state {
                if v.len() != n {
                    return Err(DtmcError::Invalid(format!(
                        "reward structure \"{rname}\" has {} state rewards for {n} states",
                        v.len()
                    )));
                }
                if let Some((s, &x)) = v.iter().enumerate().find(|(_, x)| !x.is_finite()) {
                    return Err(DtmcError::BadReward {
                        what: format!("of state {s}"),
                        value: x,
                    });
                }
            }
            if let Some(v) = &r.transition {
                if v.len() != self.num_transitions() {
                    return Err(DtmcError::Invalid(format!(
                        "reward structure \"{rname}\" has {} transition rewards for {} transitions",
                        v.len(),
                        self.num_transitions()
                    )));
                }
                if let Some(&x) = v.iter().find(|x| !x.is_finite()) {
                    return Err(DtmcError::BadReward {
                        what: "of a transition".into(),
                        value: x,
                    });
                }
            }
        }
        if let Some(v) = &self.valuations {
            v.check_shape(n)?;
        }
        if let Some(e) = &self.exact {
            if e.len() != self.num_transitions() {
                return Err(DtmcError::Invalid(format!(
                    "{} exact probabilities for {} transitions",
                    e.len(),
                    self.num_transitions()
                )));
            }
        }
        Ok(())
    }
}

/// Tolerance on row sums: `|Σ_t P(s,t) − 1| <= ROW_SUM_TOLERANCE`.
pub const ROW_SUM_TOLERANCE: f64 = 1e-9;

/// Whether a row sum is 1 within [`ROW_SUM_TOLERANCE`].
pub fn row_sum_ok(sum: f64) -> bool {
    (sum - 1.0).abs() <= ROW_SUM_TOLERANCE
}

/// Matrices with at least this many entries are transposed on two threads (below, starting a
/// second thread costs more than it saves).
const TRANSPOSE_PARALLEL_MIN: usize = 1 << 20;

/// The transpose of a square or rectangular CSR matrix, as CSR (counting sort, O(n + nnz)).
/// Large matrices are transposed on two threads, each filling the rows of the transpose of
/// one half of the columns (each reads every entry and writes half of them: the scattered
/// writes are the cost).
pub fn transpose_csr(m: &Matrix) -> Matrix {
    let (rows, cols) = m.shape();
    let ptr = m.indptr();
    let ptr = ptr.raw_storage();
    let indices = m.indices();
    let data = m.data();
    let mut counts = vec![0u32; cols + 1];
    for &c in indices {
        counts[c as usize + 1] += 1;
    }
    for i in 0..cols {
        counts[i + 1] += counts[i];
    }
    let tptr = counts;
    let nnz = indices.len();
    let mut tind = vec![0u32; nnz];
    let mut tdata = vec![0.0; nnz];
    // Fills the rows `c0..c1` of the transpose into `ind`/`val` (which start at entry
    // `tptr[c0]`), in increasing source order, so each row comes out sorted.
    let fill = |c0: usize, c1: usize, ind: &mut [u32], val: &mut [f64]| {
        let base = tptr[c0];
        let mut next: Vec<u32> = tptr[c0..c1].iter().map(|&p| p - base).collect();
        for r in 0..rows {
            for k in ptr[r] as usize..ptr[r + 1] as usize {
                let c = indices[k] as usize;
                if c >= c0 && c < c1 {
                    let pos = next[c - c0] as usize;
                    ind[pos] = r as u32;
                    val[pos] = data[k];
                    next[c - c0] += 1;
                }
            }
        }
    };
    if nnz < TRANSPOSE_PARALLEL_MIN {
        fill(0, cols, &mut tind, &mut tdata);
    } else {
        // The column where half of the entries are filled.
        let half = tptr.partition_point(|&p| (p as usize) < nnz / 2).min(cols);
        let split = tptr[half] as usize;
        let (ia, ib) = tind.split_at_mut(split);
        let (va, vb) = tdata.split_at_mut(split);
        std::thread::scope(|s| {
            let h = s.spawn(|| fill(half, cols, ib, vb));
            fill(0, half, ia, va);
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        });
    }
    Matrix::new((cols, rows), tptr, tind, tdata)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against sprs's own transpose, below and above the size where two threads fill it.
    #[test]
    fn transpose_agrees_with_sprs() {
        for (rows, per_row) in [(1_000usize, 7usize), (150_000, 8)] {
            let mut r: u64 = 3;
            let mut t = sprs::TriMatI::<f64, u32>::new((rows, rows));
            for s in 0..rows {
                for k in 0..per_row {
                    r = r
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // A skew towards low columns makes the halves uneven in columns.
                    let c = ((r >> 33) as usize % rows) * ((r >> 20) as usize % 2 + 1) / 2;
                    t.add_triplet(s, c, (s * per_row + k) as f64);
                }
            }
            let m: Matrix = t.to_csr();
            let expected: Matrix = m.transpose_view().to_csr();
            let got = transpose_csr(&m);
            assert_eq!(got.nnz() >= TRANSPOSE_PARALLEL_MIN, rows > 1_000);
            assert_eq!(got.indptr().raw_storage(), expected.indptr().raw_storage());
            assert_eq!(got.indices(), expected.indices());
            assert_eq!(got.data(), expected.data());
        }
    }
}
