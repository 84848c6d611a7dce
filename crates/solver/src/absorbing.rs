//! Absorbing-chain analysis (SafetyDrift): with the target states made absorbing and the
//! transient block `Q`, the fundamental matrix `N = (I − Q)⁻¹`, absorption probabilities
//! `B = N·R` and expected steps to absorption `t = N·1`.

use crate::graph;
use crate::numeric::{Method, Result, SolveOptions, SolverError};
use crate::reach::{reachability_rewards, until_probabilities};
use augur_dtmc::{Matrix, StateSet};
use nalgebra::DMatrix;

/// The fundamental matrix is computed densely only up to this many transient states.
const FUNDAMENTAL_MAX: usize = 2_000;
/// Largest dense absorption-probability table (transient × absorbing entries).
const ABSORPTION_MAX_ENTRIES: usize = 50_000_000;

/// The result of [`absorbing_analysis`].
#[derive(Clone, Debug, PartialEq)]
pub struct Absorption {
    /// The transient (non-target) states, increasing: the row order of every table below.
    pub transient: Vec<u32>,
    /// The absorbing (target) states, increasing: the column order of `absorption`.
    pub absorbing: Vec<u32>,
    /// `N = (I − Q)⁻¹` (rows and columns in `transient` order), when the transient part is
    /// small (at most 2000 states), every transient state is absorbed with probability 1 (else
    /// `I − Q` is singular), and the method is `Auto` or `ClosedForm`.
    pub fundamental: Option<DMatrix<f64>>,
    /// `B[i][j]` = probability that transient state `transient[i]` is absorbed in
    /// `absorbing[j]` (first target hit).
    pub absorption: DMatrix<f64>,
    /// Expected number of steps to absorption from each transient state (`f64::INFINITY` when
    /// absorption has probability < 1).
    pub expected_steps: Vec<f64>,
    /// How it was computed.
    pub method: String,
}

impl Absorption {
    /// Total absorption probability of the `i`-th transient state (row sum of `absorption`).
    pub fn absorbed(&self, i: usize) -> f64 {
        self.absorption.row(i).sum()
    }
}

/// Absorbing-chain analysis for the target set `targets` (made absorbing: their outgoing
/// transitions are ignored).
///
/// Small chains whose transient states are all absorbed with probability 1 get the dense
/// fundamental matrix (nalgebra LU) when `opts.method` is `Auto` or `ClosedForm`; otherwise
/// absorption probabilities are computed per absorbing state as `P(¬targets U {a})` and expected
/// steps as reachability rewards, with the selected method.
pub fn absorbing_analysis(
    matrix: &Matrix,
    targets: &StateSet,
    opts: &SolveOptions,
) -> Result<Absorption> {
    let n = matrix.rows();
    if matrix.cols() != n {
        return Err(SolverError::Unsupported("matrix must be square".into()));
    }
    if targets.ones().any(|s| s >= n) {
        return Err(SolverError::Unsupported(format!(
            "target set mentions a state ≥ {n}"
        )));
    }
    let transient: Vec<u32> = (0..n as u32)
        .filter(|&s| !targets.contains(s as usize))
        .collect();
    let absorbing: Vec<u32> = targets.ones().map(|s| s as u32).collect();
    let (t, a) = (transient.len(), absorbing.len());
    if t.saturating_mul(a) > ABSORPTION_MAX_ENTRIES {
        return Err(SolverError::Unsupported(format!(
            "absorption table of {t}×{a} entries is too large"
        )));
    }
    let transpose = graph::transpose(matrix);
    let mut all = StateSet::with_capacity(n);
    all.insert_range(..);
    let no = graph::prob0(&transpose, &all, targets);
    let sure = graph::prob1(matrix, &transpose, &all, targets, &no);
    let all_absorbed = transient.iter().all(|&s| sure.contains(s as usize));
    let dense_ok = matches!(opts.method, Method::Auto | Method::ClosedForm);
    if all_absorbed && dense_ok && t <= FUNDAMENTAL_MAX {
        let mut local = vec![u32::MAX; n];
        for (i, &s) in transient.iter().enumerate() {
            local[s as usize] = i as u32;
        }
        let mut col_of = vec![u32::MAX; n];
        for (j, &s) in absorbing.iter().enumerate() {
            col_of[s as usize] = j as u32;
        }
        let (ptr, idx, val) = graph::raw(matrix);
        let mut i_q = DMatrix::<f64>::identity(t, t);
        let mut r = DMatrix::<f64>::zeros(t, a);
        for (i, &s) in transient.iter().enumerate() {
            let s = s as usize;
            for e in ptr[s] as usize..ptr[s + 1] as usize {
                let d = idx[e] as usize;
                if local[d] != u32::MAX {
                    i_q[(i, local[d] as usize)] -= val[e];
                } else {
                    r[(i, col_of[d] as usize)] += val[e];
                }
            }
        }
        let fundamental = i_q.lu().try_inverse().ok_or_else(|| {
            SolverError::Unsupported("I − Q is singular: some state is never absorbed".into())
        })?;
        let absorption = &fundamental * &r;
        let expected_steps = fundamental.row_iter().map(|row| row.sum()).collect();
        return Ok(Absorption {
            transient,
            absorbing,
            fundamental: Some(fundamental),
            absorption,
            expected_steps,
            method: format!("fundamental matrix (dense LU, {t} transient states)"),
        });
    }
    // Iterative: one until problem per absorbing state, one reward problem for the steps.
    let mut phi = StateSet::with_capacity(n);
    phi.insert_range(..);
    phi.difference_with(targets);
    let mut absorption = DMatrix::<f64>::zeros(t, a);
    let mut method = String::new();
    for (j, &target) in absorbing.iter().enumerate() {
        let mut psi = StateSet::with_capacity(n);
        psi.insert(target as usize);
        let sol = until_probabilities(matrix, &transpose, None, &phi, &psi, opts)?;
        for (i, &s) in transient.iter().enumerate() {
            absorption[(i, j)] = sol.values[s as usize];
        }
        if j == 0 {
            method = format!("absorption: {}", sol.method);
        }
    }
    let ones = vec![1.0; n];
    let steps = reachability_rewards(matrix, &transpose, None, targets, &ones, opts)?;
    let expected_steps = transient
        .iter()
        .map(|&s| steps.values[s as usize])
        .collect();
    method.push_str(&format!("; expected steps: {}", steps.method));
    Ok(Absorption {
        transient,
        absorbing,
        fundamental: None,
        absorption,
        expected_steps,
        method,
    })
}
