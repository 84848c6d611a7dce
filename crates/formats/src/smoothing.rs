//! Implicit rows: a learned chain kept as its observed counts and its smoothing rule, never
//! as the dense matrix that smoothing makes (every valid successor of a row gets an entry, so
//! 13 unconstrained boolean predicates make 8,192 rows of 8,192 entries each).
//!
//! The rule is validity-aware Laplace smoothing (`augur-learn`'s `learn_with`): for a row `i`
//! with valid successors `V(i)` and observed counts `c_ij` (all with `j ∈ V(i)`),
//!
//! - α = 0 and some observation: `c_ij / Σ_k c_ik` for the observed `j` (the empirical
//!   frequencies);
//! - `V(i) = ∅`: a self-loop;
//! - α = 0, no observation, [`UnobservedRule::Absorbing`] and `i ∈ V(i)`: a self-loop;
//! - α = 0 and no observation otherwise: `1 / |V(i)|` over `V(i)` (uniform);
//! - α > 0: `(c_ij + α) / (Σ_k c_ik + α·|V(i)|)` over `V(i)`.
//!
//! [`SmoothedRows`] holds the counts by row and the rule, with the sets `V(i)` shared between
//! rows ([`SuccessorSet::All`] for "every state", the usual case without validity
//! constraints). [`SmoothedRows::num_transitions`] counts the entries of the smoothed chain
//! without making them, so a reader can refuse a chain too large to hold before allocating it;
//! [`SmoothedRows::for_each_entry`] makes them, computing each probability exactly as
//! `learn_with` does (bit for bit).
//!
//! In an Augur JSON file the rule is the `smoothing` field and the counts the `transitions` of
//! the `counts` field ([`crate::json`]).
//!
//! ```
//! use augur_formats::smoothing::{Smoothing, SmoothedRows, SuccessorSet, UnobservedRule};
//! let rule = Smoothing {
//!     alpha: 1.0,
//!     unobserved: UnobservedRule::Uniform,
//!     successor_sets: vec![SuccessorSet::All],
//!     successors: vec![0, 0, 0],
//! };
//! // One observation 0 -> 1.
//! let rows = SmoothedRows::new(3, rule, &[(0, 1, 1)]).unwrap();
//! assert_eq!(rows.num_transitions(), 9);
//! let mut row0 = Vec::new();
//! rows.for_each_entry(|i, j, p| if i == 0 { row0.push((j, p)) });
//! assert_eq!(row0, [(0, 1.0 / 4.0), (1, 2.0 / 4.0), (2, 1.0 / 4.0)]);
//! ```

use serde::{Deserialize, Serialize};

/// What a row without observations becomes when α = 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnobservedRule {
    /// The uniform distribution over its valid successors.
    #[default]
    Uniform,
    /// A self-loop when the self-loop is valid; uniform otherwise.
    Absorbing,
}

/// A set of valid successors: every state, or the listed ones (sorted, without duplicates).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SuccessorSet {
    /// Every state of the model (`"all"` in JSON).
    All,
    /// The listed states, sorted, without duplicates.
    List(Vec<u32>),
}

impl SuccessorSet {
    /// The number of states in the set, in a model of `n` states.
    pub fn len(&self, n: usize) -> usize {
        match self {
            SuccessorSet::All => n,
            SuccessorSet::List(v) => v.len(),
        }
    }

    /// Whether `s` is in the set (of a model of `n` states).
    pub fn contains(&self, s: u32, n: usize) -> bool {
        match self {
            SuccessorSet::All => (s as usize) < n,
            SuccessorSet::List(v) => v.binary_search(&s).is_ok(),
        }
    }

    /// Calls `f` on each state of the set, in increasing order.
    fn for_each(&self, n: usize, mut f: impl FnMut(u32)) {
        match self {
            SuccessorSet::All => (0..n as u32).for_each(f),
            SuccessorSet::List(v) => v.iter().for_each(|&s| f(s)),
        }
    }
}

impl Serialize for SuccessorSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SuccessorSet::All => s.serialize_str("all"),
            SuccessorSet::List(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SuccessorSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = SuccessorSet;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"all\" or a list of states")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SuccessorSet, E> {
                if v == "all" {
                    Ok(SuccessorSet::All)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<SuccessorSet, A::Error> {
                let mut v = Vec::new();
                while let Some(s) = seq.next_element::<u32>()? {
                    v.push(s);
                }
                Ok(SuccessorSet::List(v))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The smoothing rule of a learned chain (the `smoothing` field of an Augur JSON model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Smoothing {
    /// The smoothing parameter α ≥ 0.
    pub alpha: f64,
    /// What a row without observations becomes when α = 0.
    #[serde(default)]
    pub unobserved: UnobservedRule,
    /// The distinct sets of valid successors.
    pub successor_sets: Vec<SuccessorSet>,
    /// For each state, the index of its set of valid successors in `successor_sets`.
    pub successors: Vec<u32>,
}

/// Why a rule and its counts do not make a chain. Each variant names the part of the rule or
/// the counts it is about, so that a reader can locate it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SmoothingError {
    /// α is negative or not a number.
    #[error("alpha = {0}: it must be a finite number >= 0")]
    BadAlpha(f64),
    /// `successors` does not have one entry per state.
    #[error("{len} entries for {states} states")]
    SuccessorsLength {
        /// Entries given.
        len: usize,
        /// States of the model.
        states: usize,
    },
    /// A state's set index out of range.
    #[error("set {index} out of range ({sets} sets)")]
    NoSuchSet {
        /// The state whose entry it is.
        state: usize,
        /// The index given.
        index: u32,
        /// The number of sets.
        sets: usize,
    },
    /// A listed successor out of range, or the list not strictly increasing.
    #[error("{message}")]
    BadSet {
        /// The set.
        set: usize,
        /// The position in its list.
        position: usize,
        /// What is wrong.
        message: String,
    },
    /// An observed transition with a state out of range.
    #[error("state {state} out of range ({states} states)")]
    CountState {
        /// The position of the count.
        index: usize,
        /// 0 for the source, 1 for the target.
        element: usize,
        /// The state.
        state: u32,
        /// States of the model.
        states: usize,
    },
    /// An observed transition that is not a valid successor of its row.
    #[error(
        "state {to} is not a valid successor of state {from} (smoothing.successor_sets[{set}])"
    )]
    CountNotValid {
        /// The position of the count.
        index: usize,
        /// The source.
        from: u32,
        /// The target.
        to: u32,
        /// The set of the source.
        set: usize,
    },
    /// The counts of a row add up past `u64::MAX`.
    #[error("the counts of state {state} add up past 2^64 - 1")]
    CountOverflow {
        /// The position of the count that overflowed.
        index: usize,
        /// The row.
        state: u32,
    },
    /// α so large that a row's total overflows (its entries would be 0).
    #[error("alpha = {}: alpha × {successors} valid successors overflows", augur_dtmc::format_f64(*.alpha))]
    AlphaTooLarge {
        /// α.
        alpha: f64,
        /// The valid successors of the row.
        successors: usize,
        /// The row.
        state: u32,
    },
}

/// A learned chain kept implicitly: its observed counts by row and its [`Smoothing`] rule.
#[derive(Clone, Debug, PartialEq)]
pub struct SmoothedRows {
    num_states: usize,
    rule: Smoothing,
    /// Row `i`'s counts are `count_to/count_n[count_ptr[i]..count_ptr[i + 1]]`, by target.
    count_ptr: Vec<usize>,
    count_to: Vec<u32>,
    count_n: Vec<u64>,
    /// Σ of each row's counts.
    totals: Vec<u64>,
}

/// The kind of a smoothed row (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// α = 0 and observations: the empirical frequencies.
    Empirical,
    /// No valid successor: a self-loop.
    NoSuccessor,
    /// α = 0, no observation, [`UnobservedRule::Absorbing`]: a self-loop.
    UnobservedAbsorbing,
    /// α = 0, no observation: uniform over the valid successors.
    UnobservedUniform,
    /// α > 0: Laplace smoothing over the valid successors.
    Smoothed,
}

impl SmoothedRows {
    /// Checks the rule and the counts `(from, to, count)` over `num_states` states (counts of
    /// the same transition are added) and keeps them. Nothing proportional to the number of
    /// transitions of the smoothed chain is allocated.
    pub fn new(
        num_states: usize,
        rule: Smoothing,
        counts: &[(u32, u32, u64)],
    ) -> Result<SmoothedRows, SmoothingError> {
        let n = num_states;
        if !(rule.alpha.is_finite() && rule.alpha >= 0.0) {
            return Err(SmoothingError::BadAlpha(rule.alpha));
        }
        if rule.successors.len() != n {
            return Err(SmoothingError::SuccessorsLength {
                len: rule.successors.len(),
                states: n,
            });
        }
        for (set, s) in rule.successor_sets.iter().enumerate() {
            if let SuccessorSet::List(v) = s {
                for (position, &t) in v.iter().enumerate() {
                    let message = if t as usize >= n {
                        format!("state {t} out of range ({n} states)")
                    } else if position > 0 && v[position - 1] >= t {
                        "the states of a set must be listed in increasing order, each once".into()
                    } else {
                        continue;
                    };
                    return Err(SmoothingError::BadSet {
                        set,
                        position,
                        message,
                    });
                }
            }
        }
        for (state, &index) in rule.successors.iter().enumerate() {
            if index as usize >= rule.successor_sets.len() {
                return Err(SmoothingError::NoSuchSet {
                    state,
                    index,
                    sets: rule.successor_sets.len(),
                });
            }
        }
        // Counting sort of the counts by row, then by target within each row.
        let mut count_ptr = vec![0usize; n + 1];
        for (index, &(f, t, _)) in counts.iter().enumerate() {
            for (element, s) in [(0, f), (1, t)] {
                if s as usize >= n {
                    return Err(SmoothingError::CountState {
                        index,
                        element,
                        state: s,
                        states: n,
                    });
                }
            }
            let set = rule.successors[f as usize] as usize;
            if !rule.successor_sets[set].contains(t, n) {
                return Err(SmoothingError::CountNotValid {
                    index,
                    from: f,
                    to: t,
                    set,
                });
            }
            count_ptr[f as usize + 1] += 1;
        }
        for i in 0..n {
            count_ptr[i + 1] += count_ptr[i];
        }
        let mut order: Vec<usize> = (0..counts.len()).collect();
        order.sort_by_key(|&k| (counts[k].0, counts[k].1, k));
        let mut rows = SmoothedRows {
            num_states: n,
            rule,
            count_ptr: vec![0; n + 1],
            count_to: Vec::with_capacity(counts.len()),
            count_n: Vec::with_capacity(counts.len()),
            totals: vec![0; n],
        };
        let mut k = 0;
        for i in 0..n {
            let mut total = 0u64;
            let start = rows.count_to.len();
            for &index in &order[count_ptr[i]..count_ptr[i + 1]] {
                let (_, t, c) = counts[index];
                let overflow = SmoothingError::CountOverflow {
                    index,
                    state: i as u32,
                };
                total = total.checked_add(c).ok_or(overflow.clone())?;
                if rows.count_to.len() > start && rows.count_to.last() == Some(&t) {
                    if let Some(last) = rows.count_n.last_mut() {
                        *last = last.checked_add(c).ok_or(overflow)?;
                    }
                } else {
                    rows.count_to.push(t);
                    rows.count_n.push(c);
                }
                k += 1;
            }
            rows.totals[i] = total;
            rows.count_ptr[i + 1] = rows.count_to.len();
        }
        debug_assert_eq!(k, counts.len());
        // A total that overflows f64 (the entries would all be 0).
        for i in 0..n {
            if rows.kind(i) == RowKind::Smoothed {
                rows.smoothed_total(i)?;
            }
        }
        Ok(rows)
    }

    /// The number of states.
    pub fn num_states(&self) -> usize {
        self.num_states
    }

    /// The smoothing rule.
    pub fn rule(&self) -> &Smoothing {
        &self.rule
    }

    /// The observed counts `(from, to, count)`, by row and target.
    pub fn counts(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        (0..self.num_states).flat_map(move |i| {
            let r = self.count_ptr[i]..self.count_ptr[i + 1];
            self.count_to[r.clone()]
                .iter()
                .zip(&self.count_n[r])
                .map(move |(&t, &c)| (i as u32, t, c))
        })
    }

    fn set(&self, i: usize) -> &SuccessorSet {
        &self.rule.successor_sets[self.rule.successors[i] as usize]
    }

    /// The kind of row `i` (see the module docs).
    pub fn kind(&self, i: usize) -> RowKind {
        let alpha = self.rule.alpha;
        let observed = self.totals[i];
        let set = self.set(i);
        if alpha == 0.0 && observed > 0 {
            RowKind::Empirical
        } else if set.len(self.num_states) == 0 {
            RowKind::NoSuccessor
        } else if observed == 0
            && alpha == 0.0
            && self.rule.unobserved == UnobservedRule::Absorbing
            && set.contains(i as u32, self.num_states)
        {
            RowKind::UnobservedAbsorbing
        } else if observed == 0 && alpha == 0.0 {
            RowKind::UnobservedUniform
        } else {
            RowKind::Smoothed
        }
    }

    /// The denominator of a smoothed row, `observed + α·|V(i)|` (as `learn_with` computes it).
    fn smoothed_total(&self, i: usize) -> Result<f64, SmoothingError> {
        let successors = self.set(i).len(self.num_states);
        let total = self.totals[i] as f64 + self.rule.alpha * successors as f64;
        if total.is_finite() {
            Ok(total)
        } else {
            Err(SmoothingError::AlphaTooLarge {
                alpha: self.rule.alpha,
                successors,
                state: i as u32,
            })
        }
    }

    /// The number of entries of row `i` of the smoothed chain.
    pub fn row_len(&self, i: usize) -> usize {
        match self.kind(i) {
            RowKind::Empirical => self.count_ptr[i + 1] - self.count_ptr[i],
            RowKind::NoSuccessor | RowKind::UnobservedAbsorbing => 1,
            RowKind::UnobservedUniform | RowKind::Smoothed => self.set(i).len(self.num_states),
        }
    }

    /// The number of transitions of the smoothed chain, computed without making them (at most
    /// `n²`, so it fits in a `u64` for any `n` that fits in memory).
    pub fn num_transitions(&self) -> u64 {
        (0..self.num_states).map(|i| self.row_len(i) as u64).sum()
    }

    /// Calls `f(from, to, probability)` for every entry of the smoothed chain, by row and
    /// target, with each probability computed as `learn_with` computes it.
    pub fn for_each_entry(&self, mut f: impl FnMut(u32, u32, f64)) {
        let n = self.num_states;
        let alpha = self.rule.alpha;
        for i in 0..n {
            let r = self.count_ptr[i]..self.count_ptr[i + 1];
            let (to, counts) = (&self.count_to[r.clone()], &self.count_n[r]);
            let from = i as u32;
            match self.kind(i) {
                RowKind::Empirical => {
                    let total = self.totals[i] as f64;
                    for (&j, &c) in to.iter().zip(counts) {
                        f(from, j, c as f64 / total);
                    }
                }
                RowKind::NoSuccessor | RowKind::UnobservedAbsorbing => f(from, from, 1.0),
                RowKind::UnobservedUniform => {
                    let set = self.set(i);
                    let p = 1.0 / set.len(n) as f64;
                    set.for_each(n, |j| f(from, j, p));
                }
                RowKind::Smoothed => {
                    // Checked by `new`: the total is finite.
                    let Ok(total) = self.smoothed_total(i) else {
                        continue;
                    };
                    let mut k = 0;
                    self.set(i).for_each(n, |j| {
                        // The counts are sorted and within the set: a merge.
                        let c = if to.get(k) == Some(&j) {
                            k += 1;
                            counts[k - 1]
                        } else {
                            0
                        } as f64;
                        f(from, j, (c + alpha) / total);
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(alpha: f64, sets: Vec<SuccessorSet>, successors: Vec<u32>) -> Smoothing {
        Smoothing {
            alpha,
            unobserved: UnobservedRule::Uniform,
            successor_sets: sets,
            successors,
        }
    }

    #[test]
    fn counts_and_entries_agree() {
        // State 0 may go to 0 and 1, state 1 nowhere, state 2 anywhere.
        let sets = vec![
            SuccessorSet::List(vec![0, 1]),
            SuccessorSet::List(vec![]),
            SuccessorSet::All,
        ];
        let r =
            SmoothedRows::new(3, rule(0.5, sets, vec![0, 1, 2]), &[(0, 1, 2), (0, 1, 1)]).unwrap();
        // Row 0: 2 entries; row 1: a self-loop; row 2: 3 entries.
        assert_eq!(r.num_transitions(), 6);
        let mut entries = Vec::new();
        r.for_each_entry(|i, j, p| entries.push((i, j, p)));
        assert_eq!(entries.len(), 6);
        assert_eq!(entries[0], (0, 0, 0.5 / 4.0));
        assert_eq!(entries[1], (0, 1, 3.5 / 4.0));
        assert_eq!(entries[2], (1, 1, 1.0));
        assert_eq!(entries[3], (2, 0, 1.0 / 3.0));
        assert_eq!(r.counts().collect::<Vec<_>>(), [(0, 1, 3)]);
    }

    #[test]
    fn bad_rules_and_counts_are_refused() {
        let all = || vec![SuccessorSet::All];
        let e = |r: Smoothing, c: &[(u32, u32, u64)]| SmoothedRows::new(2, r, c).unwrap_err();
        assert!(matches!(
            e(rule(-1.0, all(), vec![0, 0]), &[]),
            SmoothingError::BadAlpha(_)
        ));
        assert!(matches!(
            e(rule(0.0, all(), vec![0]), &[]),
            SmoothingError::SuccessorsLength { len: 1, states: 2 }
        ));
        assert!(matches!(
            e(rule(0.0, all(), vec![0, 1]), &[]),
            SmoothingError::NoSuchSet { state: 1, .. }
        ));
        let unsorted = vec![SuccessorSet::List(vec![1, 0])];
        assert!(matches!(
            e(rule(0.0, unsorted, vec![0, 0]), &[]),
            SmoothingError::BadSet {
                set: 0,
                position: 1,
                ..
            }
        ));
        assert!(matches!(
            e(rule(0.0, all(), vec![0, 0]), &[(0, 2, 1)]),
            SmoothingError::CountState {
                index: 0,
                element: 1,
                ..
            }
        ));
        let one = vec![SuccessorSet::List(vec![1])];
        assert!(matches!(
            e(rule(0.0, one, vec![0, 0]), &[(0, 0, 1)]),
            SmoothingError::CountNotValid { index: 0, .. }
        ));
        assert!(matches!(
            e(rule(0.0, all(), vec![0, 0]), &[(0, 0, u64::MAX), (0, 1, 1)]),
            SmoothingError::CountOverflow { state: 0, .. }
        ));
        assert!(matches!(
            e(rule(f64::MAX, all(), vec![0, 0]), &[]),
            SmoothingError::AlphaTooLarge { successors: 2, .. }
        ));
    }
}
