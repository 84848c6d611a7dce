//! Sparse matrix-vector sweeps: the building block of step-bounded reachability.
//!
//! No allocation happens inside a sweep: callers own the vectors.

use crate::graph;
use augur_dtmc::{Matrix, StateSet};

/// `y = M·x`, i.e. `y[s] = Σ_t M(s,t)·x[t]`, for a CSR matrix `M`.
///
/// # Panics
/// If `x` or `y` is shorter than the matrix dimension (a caller invariant).
pub fn mat_vec(matrix: &Matrix, x: &[f64], y: &mut [f64]) {
    let (ptr, idx, val) = graph::raw(matrix);
    for (s, out) in y.iter_mut().enumerate().take(matrix.rows()) {
        let mut acc = 0.0;
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            acc += val[e] * x[idx[e] as usize];
        }
        *out = acc;
    }
}

/// Bytes a [`mat_vec`] sweep reads and writes: the CSR arrays (row pointers, column indices,
/// values), one read of `x` per stored entry and one write of `y` per row.
pub fn bytes_per_sweep(matrix: &Matrix) -> u64 {
    let n = matrix.rows() as u64;
    let nnz = matrix.nnz() as u64;
    // ptr: (n+1)·4, indices: nnz·4, values: nnz·8, x gathers: nnz·8, y: n·8.
    (n + 1) * 4 + nnz * 4 + nnz * 8 + nnz * 8 + n * 8
}

/// `P(φ U≤k ψ)` for every state, by `k` sweeps: `x₀ = [ψ]`, then
/// `x_{i+1}(s) = 1` on ψ, `0` outside `φ ∪ ψ`, `Σ_t P(s,t)·x_i(t)` otherwise.
///
/// State sets shorter than the matrix count as not containing the missing states.
pub fn bounded_until(matrix: &Matrix, phi: &StateSet, psi: &StateSet, k: u64) -> Vec<f64> {
    let n = matrix.rows();
    let (ptr, idx, val) = graph::raw(matrix);
    let mut x: Vec<f64> = (0..n)
        .map(|s| if psi.contains(s) { 1.0 } else { 0.0 })
        .collect();
    // The states that are iterated: φ ∧ ¬ψ.
    let active: Vec<u32> = (0..n)
        .filter(|&s| phi.contains(s) && !psi.contains(s))
        .map(|s| s as u32)
        .collect();
    let mut y = x.clone();
    for _ in 0..k {
        for &s in &active {
            let s = s as usize;
            let mut acc = 0.0;
            for e in ptr[s] as usize..ptr[s + 1] as usize {
                acc += val[e] * x[idx[e] as usize];
            }
            y[s] = acc;
        }
        std::mem::swap(&mut x, &mut y);
    }
    x
}

/// The expected reward of one step from every state: `state[s] + Σ_t P(s,t)·transition(s,t)`,
/// with `transition` aligned with `matrix.data()` (the form every reward solver of this crate
/// takes). Missing parts count as 0; vectors of the wrong length give `None`.
pub fn step_rewards(
    matrix: &Matrix,
    state: Option<&[f64]>,
    transition: Option<&[f64]>,
) -> Option<Vec<f64>> {
    let n = matrix.rows();
    let (ptr, _, val) = graph::raw(matrix);
    let mut out = match state {
        Some(v) if v.len() == n => v.to_vec(),
        Some(_) => return None,
        None => vec![0.0; n],
    };
    if let Some(t) = transition {
        if t.len() != val.len() {
            return None;
        }
        for (s, o) in out.iter_mut().enumerate() {
            for e in ptr[s] as usize..ptr[s + 1] as usize {
                *o += val[e] * t[e];
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sprs::TriMatI;

    #[test]
    fn bounded_until_matches_hand_computation() {
        // 0 -> 0 (1/2) | 1 (1/2); 1 absorbing target. P(F≤k 1 | 0) = 1 - 2^-k.
        let mut t = TriMatI::<f64, u32>::new((2, 2));
        t.add_triplet(0, 0, 0.5);
        t.add_triplet(0, 1, 0.5);
        t.add_triplet(1, 1, 1.0);
        let m: Matrix = t.to_csr();
        let mut all = StateSet::with_capacity(2);
        all.insert_range(..);
        let mut goal = StateSet::with_capacity(2);
        goal.insert(1);
        for k in 0..6 {
            let x = bounded_until(&m, &all, &goal, k);
            assert_eq!(x[0], 1.0 - 0.5f64.powi(k as i32));
            assert_eq!(x[1], 1.0);
        }
        let mut y = vec![0.0; 2];
        mat_vec(&m, &[1.0, 3.0], &mut y);
        assert_eq!(y, vec![2.0, 3.0]);
        assert_eq!(bytes_per_sweep(&m), 3 * 4 + 3 * 4 + 3 * 16 + 2 * 8);
        // Rewards: state 0 earns 1, the move 0 → 1 earns 4 (probability ½): 1 + 2 = 3.
        let r = step_rewards(&m, Some(&[1.0, 0.0]), Some(&[0.0, 4.0, 0.0])).unwrap();
        assert_eq!(r, vec![3.0, 0.0]);
        assert!(step_rewards(&m, Some(&[1.0]), None).is_none());
    }
}
