//! The chain of the observed runs: what the traces say without smoothing, with their ends.
//!
//! A learned model's rows put probability on transitions never observed (α on every valid
//! successor with `--alpha`; the uniform distribution out of a state never left), and they say
//! nothing of where runs stop: a trace's end is not a transition. [`observed_runs_chain`] keeps
//! only what the traces show: from each state, its observed valid transitions and the runs that
//! ended there, each with its empirical frequency, the ends going to one extra absorbing state
//! (the last) where no label holds. The number of runs that ended in a state comes from the
//! counts alone: its visits (runs started there, plus observed transitions into it, valid or
//! not) minus the transitions out of it (valid or not).
//!
//! The front-ends check an unbounded property whose value is 1 on the learned model again on
//! this chain: a value below 1 there means that some observed runs stopped, or cycle among
//! observed transitions, without satisfying it, so the 1 comes from the transitions that
//! smoothing adds and from not modelling where runs end (`--end-state` models it).

use std::collections::BTreeMap;

use crate::end_state::grow_by_one_state;
use crate::error::{LearnError, Result};
use crate::learn::TransitionCounts;
use augur_dtmc::{Dtmc, Matrix};

/// How many traces ended in each state, from the counts (see the module docs).
pub fn trace_ends(counts: &TransitionCounts) -> BTreeMap<u32, u64> {
    let n = counts.num_states();
    let mut visits = vec![0u64; n];
    let mut left = vec![0u64; n];
    for (&s, &c) in counts.initial() {
        visits[s as usize] = visits[s as usize].saturating_add(c);
    }
    for from in 0..n as u32 {
        for (to, c) in counts.row(from) {
            visits[to as usize] = visits[to as usize].saturating_add(c);
            left[from as usize] = left[from as usize].saturating_add(c);
        }
    }
    for (&(from, to), &c) in counts.invalid() {
        visits[to as usize] = visits[to as usize].saturating_add(c);
        left[from as usize] = left[from as usize].saturating_add(c);
    }
    (0..n)
        .filter(|&s| visits[s] > left[s])
        .map(|s| (s as u32, visits[s] - left[s]))
        .collect()
}

/// The chain of the observed runs of a learned model `learned` with its `counts`: its states
/// (same labels, valuations and initial states; no rewards, which are for other operators) and one more, the last, absorbing,
/// where the runs end (no label holds there, every variable is false or 0, no reward). Row `i`:
/// `c_ij / (n_i + e_i)` for its observed valid transitions and `e_i / (n_i + e_i)` to the end,
/// where `e_i` runs ended in `i`; a state neither left nor ended in keeps a self-loop.
pub fn observed_runs_chain(counts: &TransitionCounts, learned: &Dtmc) -> Result<Dtmc> {
    let n = learned.num_states();
    if counts.num_states() != n {
        return Err(LearnError::BadCounts(format!(
            "the counts have {} states, the model {n}",
            counts.num_states()
        )));
    }
    let ends = trace_ends(counts);
    let stop = n as u32;
    let mut indptr = Vec::with_capacity(n + 2);
    let mut indices = Vec::new();
    let mut data = Vec::new();
    indptr.push(0u32);
    for i in 0..n as u32 {
        let ended = ends.get(&i).copied().unwrap_or(0);
        let total = counts.row_total(i).saturating_add(ended);
        if total == 0 {
            indices.push(i);
            data.push(1.0);
        } else {
            for (j, c) in counts.row(i) {
                indices.push(j);
                data.push(c as f64 / total as f64);
            }
            if ended > 0 {
                indices.push(stop);
                data.push(ended as f64 / total as f64);
            }
        }
        indptr.push(indices.len() as u32);
    }
    indices.push(stop);
    data.push(1.0);
    indptr.push(indices.len() as u32);
    let matrix = Matrix::try_new((n + 1, n + 1), indptr, indices, data)
        .map_err(|(_, _, _, e)| LearnError::BadCounts(format!("matrix structure: {e}")))?;
    let mut dtmc = Dtmc {
        matrix,
        initial: learned.initial.clone(),
        labels: learned.labels.clone(),
        rewards: Vec::new(),
        valuations: learned.valuations.clone(),
        exact: None,
        intervals: None,
    };
    grow_by_one_state(&mut dtmc, None);
    Ok(dtmc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{learn, AllValid};

    /// Traces `ok ok bad`, `ok`, `ok ok`: from ok, 2 moves to ok, 1 to bad, 2 runs ended; bad
    /// was never left and 1 run ended there.
    #[test]
    fn rows_of_observed_moves_and_ends() {
        let mut c = TransitionCounts::new(2);
        c.observe_trace(&[0, 0, 1], &AllValid);
        c.observe_trace(&[0], &AllValid);
        c.observe_trace(&[0, 0], &AllValid);
        assert_eq!(trace_ends(&c), BTreeMap::from([(0, 2), (1, 1)]));
        let smoothed = learn(&c, &AllValid, 1.0).unwrap().dtmc;
        let o = observed_runs_chain(&c, &smoothed).unwrap();
        let p = |i: usize, j: usize| o.matrix.get(i, j).copied();
        assert_eq!(
            (p(0, 0), p(0, 1), p(0, 2)),
            (Some(0.4), Some(0.2), Some(0.4))
        );
        assert_eq!((p(1, 1), p(1, 2), p(2, 2)), (None, Some(1.0), Some(1.0)));
        assert_eq!(o.initial, smoothed.initial);
        assert!(observed_runs_chain(&TransitionCounts::new(3), &smoothed).is_err());
    }

    #[test]
    fn invalid_moves_are_visits_and_departures() {
        let valid = |f: u32, t: u32| t >= f;
        let mut c = TransitionCounts::new(2);
        // 1 -> 0 is invalid (dropped); the run ends in 0.
        c.observe_trace(&[0, 1, 0], &valid);
        assert_eq!(trace_ends(&c), BTreeMap::from([(0, 1)]));
    }
}
