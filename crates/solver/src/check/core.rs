//! The unbounded numerical problems the checker delegates to the numeric core.
//!
//! INTERIM: the solver-core work (graph module, `until_probabilities`, `reachability_rewards`,
//! `total_rewards`, `long_run_average`) was not on main when the checker was written. These
//! functions have the agreed signatures and are real (graph precomputation + a direct dense LU
//! solve, limited to a few thousand unknowns), so the checker is testable end to end; when the
//! core lands, their bodies become calls to it.

use crate::numeric::{Result, Solution, SolveOptions, SolverError};
use augur_dtmc::{Matrix, StateSet};
use nalgebra::{DMatrix, DVector};

/// Largest number of unknowns the interim dense solve accepts.
const MAX_DENSE: usize = 4000;

fn full(n: usize) -> StateSet {
    let mut s = StateSet::with_capacity(n);
    s.insert_range(..);
    s
}

/// States that can reach `target` through `through`-states (target included), by a backward
/// search on the transpose.
fn backward_reach(transpose: &Matrix, through: &StateSet, target: &StateSet) -> StateSet {
    let n = transpose.rows();
    let mut seen = StateSet::with_capacity(n);
    let mut stack: Vec<u32> = Vec::new();
    for s in target.ones().filter(|&s| s < n) {
        seen.insert(s);
        stack.push(s as u32);
    }
    while let Some(t) = stack.pop() {
        if let Some(row) = transpose.outer_view(t as usize) {
            for (pred, &p) in row.iter() {
                if p > 0.0 && !seen.contains(pred) && through.contains(pred) {
                    seen.insert(pred);
                    stack.push(pred as u32);
                }
            }
        }
    }
    seen
}

/// Solve `x(s) = Σ_t P(s,t)·x(t) + b(s)` for `s ∈ unknowns`, with the values of the other states
/// fixed in `x`. Dense LU (interim).
fn solve_dense(matrix: &Matrix, unknowns: &[u32], b: &[f64], x: &mut [f64]) -> Result<()> {
    let m = unknowns.len();
    if m == 0 {
        return Ok(());
    }
    if m > MAX_DENSE {
        return Err(SolverError::Unsupported(format!(
            "the checker's interim direct solver is limited to {MAX_DENSE} unknowns ({m} here)"
        )));
    }
    let n = matrix.rows();
    let mut pos = vec![u32::MAX; n];
    for (i, &s) in unknowns.iter().enumerate() {
        pos[s as usize] = i as u32;
    }
    let mut a = DMatrix::<f64>::identity(m, m);
    let mut rhs = DVector::<f64>::zeros(m);
    for (i, &s) in unknowns.iter().enumerate() {
        rhs[i] = b[s as usize];
        if let Some(row) = matrix.outer_view(s as usize) {
            for (t, &p) in row.iter() {
                let j = pos[t];
                if j == u32::MAX {
                    rhs[i] += p * x[t];
                } else {
                    a[(i, j as usize)] -= p;
                }
            }
        }
    }
    let sol = a.lu().solve(&rhs).ok_or_else(|| {
        SolverError::Unsupported("singular linear system in the direct solve".into())
    })?;
    for (i, &s) in unknowns.iter().enumerate() {
        x[s as usize] = sol[i];
    }
    Ok(())
}

/// `(prob0, prob1)` of `φ U ψ`: the states with probability exactly 0 and exactly 1.
pub(crate) fn prob01(transpose: &Matrix, phi: &StateSet, psi: &StateSet) -> (StateSet, StateSet) {
    let n = transpose.rows();
    let can = backward_reach(transpose, phi, psi);
    let mut no = full(n);
    no.difference_with(&can);
    // States that can reach a prob-0 state through φ∧¬ψ have probability < 1.
    let mut phi_not_psi = phi.clone();
    phi_not_psi.difference_with(psi);
    let bad = backward_reach(transpose, &phi_not_psi, &no);
    let mut yes = full(n);
    yes.difference_with(&bad);
    (no, yes)
}

fn exact_solution(values: Vec<f64>, method: String) -> Solution {
    Solution {
        bounds: Some((values.clone(), values.clone())),
        values,
        method,
    }
}

/// `P(φ U ψ)` for every state.
pub(crate) fn until_probabilities(
    matrix: &Matrix,
    transpose: &Matrix,
    phi: &StateSet,
    psi: &StateSet,
    _opts: &SolveOptions,
) -> Result<Solution> {
    let n = matrix.rows();
    let (no, yes) = prob01(transpose, phi, psi);
    let mut x = vec![0.0; n];
    let mut unknowns = Vec::new();
    for (s, xs) in x.iter_mut().enumerate() {
        if yes.contains(s) {
            *xs = 1.0;
        } else if !no.contains(s) {
            unknowns.push(s as u32);
        }
    }
    let b = vec![0.0; n];
    solve_dense(matrix, &unknowns, &b, &mut x)?;
    for v in &mut x {
        *v = v.clamp(0.0, 1.0);
    }
    Ok(exact_solution(
        x,
        format!("closed-form LU ({} unknowns)", unknowns.len()),
    ))
}

/// Expected reward accumulated until reaching `target` (0 on target states, ∞ where
/// the target is reached with probability < 1).
pub(crate) fn reachability_rewards(
    matrix: &Matrix,
    transpose: &Matrix,
    target: &StateSet,
    rewards: &[f64],
    _opts: &SolveOptions,
) -> Result<Solution> {
    let n = matrix.rows();
    let (_, yes) = prob01(transpose, &full(n), target);
    let mut x = vec![0.0; n];
    let mut unknowns = Vec::new();
    for (s, xs) in x.iter_mut().enumerate() {
        if !yes.contains(s) {
            *xs = f64::INFINITY;
        } else if !target.contains(s) {
            unknowns.push(s as u32);
        }
    }
    solve_dense(matrix, &unknowns, rewards, &mut x)?;
    Ok(exact_solution(
        x,
        format!("closed-form LU ({} unknowns)", unknowns.len()),
    ))
}

/// Bottom strongly connected components (interim: by forward reachability sets, quadratic).
pub(crate) fn bsccs(matrix: &Matrix, transpose: &Matrix) -> Result<Vec<Vec<u32>>> {
    let n = matrix.rows();
    if n > 20_000 {
        return Err(SolverError::Unsupported(format!(
            "the checker's interim BSCC search is limited to 20000 states ({n} here)"
        )));
    }
    let all = full(n);
    let mut assigned = StateSet::with_capacity(n);
    let mut out = Vec::new();
    for s in 0..n {
        if assigned.contains(s) {
            continue;
        }
        // Forward closure of s.
        let mut fwd = StateSet::with_capacity(n);
        fwd.insert(s);
        let mut stack = vec![s];
        while let Some(t) = stack.pop() {
            if let Some(row) = matrix.outer_view(t) {
                for (u, &p) in row.iter() {
                    if p > 0.0 && !fwd.contains(u) {
                        fwd.insert(u);
                        stack.push(u);
                    }
                }
            }
        }
        // s is in a BSCC iff every state it reaches can reach it back.
        let mut single = StateSet::with_capacity(n);
        single.insert(s);
        let back = backward_reach(transpose, &all, &single);
        if fwd.is_subset(&back) {
            assigned.union_with(&fwd);
            out.push(fwd.ones().map(|u| u as u32).collect());
        }
    }
    Ok(out)
}

/// Expected total reward `Σ_i r(X_i)` (∞ where a BSCC with positive reward is reachable).
pub(crate) fn total_rewards(
    matrix: &Matrix,
    transpose: &Matrix,
    rewards: &[f64],
    _opts: &SolveOptions,
) -> Result<Solution> {
    let n = matrix.rows();
    let mut zero_bscc = StateSet::with_capacity(n);
    let mut pos_bscc = StateSet::with_capacity(n);
    for b in bsccs(matrix, transpose)? {
        let positive = b.iter().any(|&s| rewards[s as usize] != 0.0);
        for s in b {
            if positive {
                pos_bscc.insert(s as usize);
            } else {
                zero_bscc.insert(s as usize);
            }
        }
    }
    let inf = backward_reach(transpose, &full(n), &pos_bscc);
    let mut x = vec![0.0; n];
    let mut unknowns = Vec::new();
    for (s, xs) in x.iter_mut().enumerate() {
        if inf.contains(s) {
            *xs = f64::INFINITY;
        } else if !zero_bscc.contains(s) {
            unknowns.push(s as u32);
        }
    }
    solve_dense(matrix, &unknowns, rewards, &mut x)?;
    Ok(exact_solution(
        x,
        format!("closed-form LU ({} unknowns)", unknowns.len()),
    ))
}

/// Long-run average of `values`: per BSCC the stationary average, weighted by the probability
/// of reaching each BSCC.
pub(crate) fn long_run_average(
    matrix: &Matrix,
    transpose: &Matrix,
    values: &[f64],
    opts: &SolveOptions,
) -> Result<Solution> {
    let n = matrix.rows();
    let mut result = vec![0.0; n];
    let all = full(n);
    for b in bsccs(matrix, transpose)? {
        let m = b.len();
        if m > MAX_DENSE {
            return Err(SolverError::Unsupported(format!(
                "the checker's interim stationary solver is limited to {MAX_DENSE} states per BSCC"
            )));
        }
        // Stationary distribution: π(I − P_B) = 0, Σπ = 1 (replace the last equation).
        let mut pos = vec![u32::MAX; n];
        for (i, &s) in b.iter().enumerate() {
            pos[s as usize] = i as u32;
        }
        let mut a = DMatrix::<f64>::zeros(m, m);
        for (i, &s) in b.iter().enumerate() {
            a[(i, i)] += 1.0;
            if let Some(row) = matrix.outer_view(s as usize) {
                for (t, &p) in row.iter() {
                    let j = pos[t];
                    if j != u32::MAX {
                        // column i of the transposed system: (I − P)^T π = 0
                        a[(j as usize, i)] -= p;
                    }
                }
            }
        }
        let mut rhs = DVector::<f64>::zeros(m);
        for j in 0..m {
            a[(m - 1, j)] = 1.0;
        }
        rhs[m - 1] = 1.0;
        let pi = a
            .lu()
            .solve(&rhs)
            .ok_or_else(|| SolverError::Unsupported("singular stationary system".into()))?;
        let avg: f64 = b
            .iter()
            .enumerate()
            .map(|(i, &s)| pi[i] * values[s as usize])
            .sum();
        let mut set = StateSet::with_capacity(n);
        for &s in &b {
            set.insert(s as usize);
        }
        let reach = until_probabilities(matrix, transpose, &all, &set, opts)?;
        for (r, p) in result.iter_mut().zip(&reach.values) {
            *r += p * avg;
        }
    }
    Ok(Solution {
        values: result,
        bounds: None,
        method: "closed-form LU (stationary distributions per BSCC)".into(),
    })
}
