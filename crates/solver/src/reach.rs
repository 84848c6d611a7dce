//! Unbounded until probabilities and expected rewards.

use crate::graph;
use crate::linear::{self, Problem, Solved};
use crate::numeric::{Result, Solution, SolveOptions, SolverError};
use augur_dtmc::{Matrix, StateSet};
use num_rational::BigRational;

/// Assembles a per-state [`Solution`] from known values and the solution on the unknowns.
/// The exact values are kept when the unknowns were solved exactly and every known value is
/// exact: `known_exact` when given, else the known `f64`s (0, 1, ∞ from graph analysis).
pub(crate) fn assemble(
    mut known: Vec<f64>,
    known_exact: Option<&[BigRational]>,
    unknowns: &[u32],
    solved: Solved,
) -> Solution {
    let exact = solved.exact.map(|x| {
        let mut all: Vec<Option<BigRational>> = match known_exact {
            Some(k) => k.iter().cloned().map(Some).collect(),
            None => known
                .iter()
                .map(|&v| crate::exact::to_rational(v))
                .collect(),
        };
        for (k, &s) in unknowns.iter().enumerate() {
            all[s as usize] = x.get(k).cloned();
        }
        all
    });
    let bounds = solved.bounds.map(|(lo, hi)| {
        let mut l = known.clone();
        let mut h = known.clone();
        for (k, &s) in unknowns.iter().enumerate() {
            l[s as usize] = lo[k];
            h[s as usize] = hi[k];
        }
        (l, h)
    });
    for (k, &s) in unknowns.iter().enumerate() {
        known[s as usize] = solved.values[k];
    }
    Solution {
        values: known,
        bounds,
        method: solved.method,
        exact,
    }
}

fn check_dims(matrix: &Matrix, transpose: &Matrix, sets: &[&StateSet]) -> Result<()> {
    let n = matrix.rows();
    if matrix.cols() != n || transpose.rows() != n || transpose.cols() != n {
        return Err(SolverError::Unsupported(format!(
            "matrix is {}×{} and its transpose {}×{}: expected square and matching",
            matrix.rows(),
            matrix.cols(),
            transpose.rows(),
            transpose.cols()
        )));
    }
    if !matrix.is_csr() || !transpose.is_csr() {
        return Err(SolverError::Unsupported(
            "matrices must be in CSR storage".into(),
        ));
    }
    for s in sets {
        if s.ones().any(|x| x >= n) {
            return Err(SolverError::Unsupported(format!(
                "state set mentions a state ≥ {n}"
            )));
        }
    }
    Ok(())
}

fn check_exact(matrix: &Matrix, exact: Option<&[BigRational]>) -> Result<()> {
    if let Some(e) = exact {
        if e.len() != matrix.nnz() {
            return Err(SolverError::Unsupported(format!(
                "{} exact probabilities for {} transitions",
                e.len(),
                matrix.nnz()
            )));
        }
    }
    Ok(())
}

fn check_values(what: &str, v: &[f64], n: usize, nonneg: bool) -> Result<()> {
    if v.len() != n {
        return Err(SolverError::Unsupported(format!(
            "{} {what} for {n} states",
            v.len()
        )));
    }
    if let Some((s, x)) = v
        .iter()
        .enumerate()
        .find(|(_, x)| !x.is_finite() || (nonneg && **x < 0.0))
    {
        return Err(SolverError::Unsupported(format!(
            "{what}: state {s} has value {x:?} (must be finite{})",
            if nonneg { " and non-negative" } else { "" }
        )));
    }
    Ok(())
}

/// `P(φ U ψ)` for every state.
///
/// Prob0/Prob1 first ([`graph::prob0`], [`graph::prob1`]), then the linear system on the
/// remaining states solved by `opts.method`. `transpose` is the transpose of `matrix`
/// ([`graph::transpose`]); `exact`, when given, holds the exact transition probabilities aligned
/// with `matrix.data()` (used by the exact method; otherwise every `f64` is taken as the exact
/// dyadic rational it is).
pub fn until_probabilities(
    matrix: &Matrix,
    transpose: &Matrix,
    exact: Option<&[BigRational]>,
    phi: &StateSet,
    psi: &StateSet,
    opts: &SolveOptions,
) -> Result<Solution> {
    check_dims(matrix, transpose, &[phi, psi])?;
    check_exact(matrix, exact)?;
    let n = matrix.rows();
    let no = graph::prob0(transpose, phi, psi);
    let yes = graph::prob1(matrix, transpose, phi, psi, &no);
    let mut known = vec![0.0; n];
    let mut unknowns = Vec::new();
    for (s, k) in known.iter_mut().enumerate() {
        if yes.contains(s) {
            *k = 1.0;
        } else if !no.contains(s) {
            unknowns.push(s as u32);
        }
    }
    let problem = Problem {
        matrix,
        exact,
        constant: vec![0.0; unknowns.len()],
        constant_exact: None,
        unknowns,
        known: &known,
        known_exact: None,
        lower: 0.0,
        upper: Some(1.0),
    };
    let solved = linear::solve(&problem, opts)?;
    let unknowns = problem.unknowns;
    Ok(assemble(known, None, &unknowns, solved))
}

/// One value per state (a state's expected one-step reward, or the value whose long-run
/// average is asked), with the exact rationals of the values when the caller has them
/// (aligned with `values`; exact mode: a reward `0.1` is 1/10, and an expected one-step reward
/// with transition rewards, `state + Σ P·trans`, is not the decimal of its double). Without
/// them the exact method takes each double as its own rational. `From` a slice of doubles.
#[derive(Clone, Copy, Debug)]
pub struct Rewards<'a> {
    /// The values, one per state.
    pub values: &'a [f64],
    /// Their exact rationals, if known.
    pub exact: Option<&'a [BigRational]>,
}

impl Rewards<'_> {
    /// Exact values, when given, are one per state, as the doubles.
    fn check_exact(&self) -> Result<()> {
        match self.exact {
            Some(q) if q.len() != self.values.len() => Err(SolverError::Unsupported(format!(
                "exact rewards: {} entries for {} states",
                q.len(),
                self.values.len()
            ))),
            _ => Ok(()),
        }
    }
}

impl<'a> From<&'a [f64]> for Rewards<'a> {
    fn from(values: &'a [f64]) -> Self {
        Rewards {
            values,
            exact: None,
        }
    }
}

impl<'a> From<&'a Vec<f64>> for Rewards<'a> {
    fn from(values: &'a Vec<f64>) -> Self {
        Rewards::from(values.as_slice())
    }
}

impl<'a, const N: usize> From<&'a [f64; N]> for Rewards<'a> {
    fn from(values: &'a [f64; N]) -> Self {
        Rewards::from(values.as_slice())
    }
}

/// Expected reward accumulated until reaching `target` (PRISM `R=? [F target]`), where
/// `rewards` gives the expected reward of one step from each state (state reward plus the
/// probability-weighted transition rewards). `f64::INFINITY` where `P(F target) < 1`, 0 on
/// `target`. Rewards must be finite and non-negative.
pub fn reachability_rewards<'a>(
    matrix: &Matrix,
    transpose: &Matrix,
    exact: Option<&[BigRational]>,
    target: &StateSet,
    rewards: impl Into<Rewards<'a>>,
    opts: &SolveOptions,
) -> Result<Solution> {
    let rewards = rewards.into();
    check_dims(matrix, transpose, &[target])?;
    rewards.check_exact()?;
    check_exact(matrix, exact)?;
    let n = matrix.rows();
    check_values("rewards", rewards.values, n, true)?;
    let mut all = StateSet::with_capacity(n);
    all.insert_range(..);
    let no = graph::prob0(transpose, &all, target);
    let sure = graph::prob1(matrix, transpose, &all, target, &no);
    solve_earning(matrix, transpose, exact, rewards, None, opts, |s| {
        if !sure.contains(s) {
            Start::Infinite
        } else if target.contains(s) {
            Start::Zero
        } else {
            Start::Candidate
        }
    })
}

/// Backward search on the transpose from `from`, through states of `within` only.
pub(crate) fn backward_within(transpose: &Matrix, from: &StateSet, within: &StateSet) -> StateSet {
    let mut start = from.clone();
    start.intersect_with(within);
    graph::backward_through(transpose, &start, within)
}

/// Expected total reward (PRISM `R=? [C]`): `f64::INFINITY` where a bottom SCC containing a
/// state with positive reward is reachable with positive probability; otherwise the expected
/// sum of `rewards` along the path (finite). Rewards must be finite and non-negative.
pub fn total_rewards<'a>(
    matrix: &Matrix,
    transpose: &Matrix,
    exact: Option<&[BigRational]>,
    rewards: impl Into<Rewards<'a>>,
    opts: &SolveOptions,
) -> Result<Solution> {
    let rewards = rewards.into();
    rewards.check_exact()?;
    total_rewards_within(matrix, transpose, exact, rewards, None, opts)
}

/// [`total_rewards`] with an optional upper bound on every value that the caller knows
/// (interval iteration starts its upper sequence there instead of deriving one).
fn total_rewards_within(
    matrix: &Matrix,
    transpose: &Matrix,
    exact: Option<&[BigRational]>,
    rewards: Rewards<'_>,
    upper: Option<f64>,
    opts: &SolveOptions,
) -> Result<Solution> {
    check_dims(matrix, transpose, &[])?;
    check_exact(matrix, exact)?;
    let n = matrix.rows();
    check_values("rewards", rewards.values, n, true)?;
    let bsccs = graph::bsccs(matrix);
    let mut bad_bscc = StateSet::with_capacity(n);
    let mut in_bscc = StateSet::with_capacity(n);
    for b in &bsccs {
        let positive = b.iter().any(|&s| rewards.values[s as usize] > 0.0);
        for &s in b {
            in_bscc.insert(s as usize);
            if positive {
                bad_bscc.insert(s as usize);
            }
        }
    }
    let mut all = StateSet::with_capacity(n);
    all.insert_range(..);
    let infinite = backward_within(transpose, &bad_bscc, &all);
    // The transient states are candidates (all BSCC states left are 0).
    solve_earning(matrix, transpose, exact, rewards, upper, opts, |s| {
        if infinite.contains(s) {
            Start::Infinite
        } else if in_bscc.contains(s) {
            Start::Zero
        } else {
            Start::Candidate
        }
    })
}

/// Discounted total reward `v = r + d·P·v` (`0 ≤ d < 1`; PRISM `R=? [ C{discount=d} ]`) as
/// the expected total reward of a chain that stops with probability `1 − d` at every step:
/// each row is scaled by `d` and sends `1 − d` to an extra absorbing state without reward.
/// The system is solved by the configured (sound by default) method, so a discount close to 1
/// (where value iteration needs millions of sweeps) or a periodic chain costs no more than any
/// other expected-reward query. Rewards must be finite and non-negative.
pub fn discounted_total_rewards(
    matrix: &Matrix,
    rewards: &[f64],
    discount: f64,
    opts: &SolveOptions,
) -> Result<Solution> {
    let n = matrix.rows();
    check_values("rewards", rewards, n, true)?;
    if !(0.0..1.0).contains(&discount) {
        return Err(SolverError::Unsupported(format!(
            "discount {discount:?}: must be in [0, 1)"
        )));
    }
    let stop = 1.0 - discount;
    let (ptr, col, val) = graph::raw(matrix);
    let mut indptr = Vec::with_capacity(n + 2);
    let mut indices = Vec::with_capacity(col.len() + n + 1);
    let mut data = Vec::with_capacity(col.len() + n + 1);
    indptr.push(0u32);
    for s in 0..n {
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            if discount > 0.0 {
                indices.push(col[e]);
                data.push(discount * val[e]);
            }
        }
        indices.push(n as u32);
        data.push(stop);
        indptr.push(indices.len() as u32);
    }
    indices.push(n as u32);
    data.push(1.0);
    indptr.push(indices.len() as u32);
    let stopping = Matrix::try_new((n + 1, n + 1), indptr, indices, data)
        .map_err(|(_, _, _, e)| SolverError::Unsupported(format!("discounted chain: {e}")))?;
    let transpose = graph::transpose(&stopping);
    let mut r = rewards.to_vec();
    r.push(0.0);
    // Every value is at most max r · (1 + d + d² + …) = max r / (1 − d); the margin covers
    // the rounding of the division (a few ulps), so the bound stays an upper bound.
    let max_r = rewards.iter().copied().fold(0.0, f64::max);
    let upper = (max_r / stop) * (1.0 + 8.0 * f64::EPSILON);
    let upper = upper.is_finite().then_some(upper);
    let mut solution = total_rewards_within(&stopping, &transpose, None, (&r).into(), upper, opts)?;
    solution.values.truncate(n);
    if let Some((lo, hi)) = &mut solution.bounds {
        lo.truncate(n);
        hi.truncate(n);
    }
    Ok(solution)
}

/// Where a state of an expected-reward system starts.
#[derive(Clone, Copy)]
enum Start {
    /// Its value is infinite.
    Infinite,
    /// Its value is 0.
    Zero,
    /// Its value is solved for (0 where no positive reward can be collected from it).
    Candidate,
}

/// Solves the expected-reward system on the candidates (`start`) that can still earn a
/// positive reward: among them, the value is 0 exactly where no positive reward can be
/// collected before leaving them (a backward search from the positive-reward candidates).
fn solve_earning(
    matrix: &Matrix,
    transpose: &Matrix,
    exact: Option<&[BigRational]>,
    rewards: Rewards<'_>,
    upper: Option<f64>,
    opts: &SolveOptions,
    start: impl Fn(usize) -> Start,
) -> Result<Solution> {
    let n = matrix.rows();
    let mut known = vec![0.0; n];
    let mut candidates = StateSet::with_capacity(n);
    let mut positive = StateSet::with_capacity(n);
    for (s, k) in known.iter_mut().enumerate() {
        match start(s) {
            Start::Infinite => *k = f64::INFINITY,
            Start::Zero => {}
            Start::Candidate => {
                candidates.insert(s);
                if rewards.values[s] > 0.0 {
                    positive.insert(s);
                }
            }
        }
    }
    let earning = backward_within(transpose, &positive, &candidates);
    let unknowns: Vec<u32> = earning.ones().map(|s| s as u32).collect();
    let constant = unknowns
        .iter()
        .map(|&s| rewards.values[s as usize])
        .collect();
    let constant_exact = rewards
        .exact
        .map(|q| unknowns.iter().map(|&s| q[s as usize].clone()).collect());
    let problem = Problem {
        matrix,
        exact,
        constant,
        constant_exact,
        unknowns,
        known: &known,
        known_exact: None,
        lower: 0.0,
        upper,
    };
    let solved = linear::solve(&problem, opts)?;
    let unknowns = problem.unknowns;
    Ok(assemble(known, None, &unknowns, solved))
}
