//! Bounded (finite-horizon) computations: every one is a fixed number of sparse
//! matrix-vector products `x ← P·x` over CSR rows, with two buffers swapped between sweeps
//! (no allocation inside the sweep loops) and u32 state indices. Each checks its
//! [`Interrupt`] once per sweep.

use crate::exact::{next_down, next_up};
use crate::numeric::{Interrupt, Result};
use augur_dtmc::{Matrix, StateSet};

/// Borrowed CSR arrays of the transition matrix, for the sweep loops.
#[derive(Clone, Copy)]
struct Csr<'a> {
    /// Row pointers (`rows + 1` entries).
    indptr: &'a [u32],
    /// Column of every stored entry.
    indices: &'a [u32],
    /// Probability of every stored entry.
    data: &'a [f64],
}

impl<'a> Csr<'a> {
    fn new(matrix: &'a Matrix) -> Self {
        let (indptr, indices, data) = crate::graph::raw(matrix);
        Csr {
            indptr,
            indices,
            data,
        }
    }

    /// `(P·x)(s)`.
    #[inline]
    fn row_dot(&self, s: usize, x: &[f64]) -> f64 {
        let (lo, hi) = (self.indptr[s] as usize, self.indptr[s + 1] as usize);
        let mut acc = 0.0;
        for (&c, &p) in self.indices[lo..hi].iter().zip(&self.data[lo..hi]) {
            acc += p * x[c as usize];
        }
        acc
    }
}

/// The states of a set as a list of u32 indices.
pub fn state_list(set: &StateSet, n: usize) -> Vec<u32> {
    set.ones().filter(|&s| s < n).map(|s| s as u32).collect()
}

/// Indicator vector of a state set.
pub fn indicator(set: &StateSet, n: usize) -> Vec<f64> {
    let mut v = vec![0.0; n];
    for s in set.ones().filter(|&s| s < n) {
        v[s] = 1.0;
    }
    v
}

/// `k` steps of the chain `matrix`, for the bounded operators (`U≤k`, `C≤k`, `I=k`): run as
/// sweeps, one per step, each stopping early at an exact fixed point (so a huge `k` on a
/// converging chain costs only the sweeps until nothing changes), or, made by
/// [`Horizon::any_k`], by repeated squaring where a huge `k` on a small chain makes it pay
/// ([`crate::huge_k`]). `stop` is checked once per sweep or squaring.
#[derive(Clone, Copy, Debug)]
pub struct Horizon<'a> {
    pub(crate) matrix: &'a Matrix,
    pub(crate) k: u64,
    pub(crate) stop: &'a Interrupt,
    /// Whether repeated squaring may be used.
    squaring: bool,
}

impl<'a> Horizon<'a> {
    /// `k` steps of `matrix` by sweeps, one per step.
    pub fn new(matrix: &'a Matrix, k: u64, stop: &'a Interrupt) -> Self {
        Horizon {
            matrix,
            k,
            stop,
            squaring: false,
        }
    }

    /// `k` steps of `matrix` for any `k`: by repeated squaring where it pays.
    pub fn any_k(matrix: &'a Matrix, k: u64, stop: &'a Interrupt) -> Self {
        Horizon {
            squaring: true,
            ..Horizon::new(matrix, k, stop)
        }
    }

    /// `k` sweeps of `x(s) ← Σ_t P(s,t)·x(t)` on the rows in `rows` from `init`; every other
    /// entry keeps its initial value.
    pub fn rows(&self, rows: &[u32], init: Vec<f64>) -> Result<Vec<f64>> {
        if self.squaring && crate::huge_k::squaring_pays(self.matrix.rows(), self.k) {
            return crate::huge_k::rows_by_squaring(self, rows, init);
        }
        let csr = Csr::new(self.matrix);
        let mut x = init;
        let mut y = x.clone();
        for i in 0..self.k {
            self.stop.check(i)?;
            let mut changed = false;
            for &s in rows {
                let s = s as usize;
                let v = csr.row_dot(s, &x);
                changed |= v != x[s];
                y[s] = v;
            }
            std::mem::swap(&mut x, &mut y);
            if !changed {
                break;
            }
        }
        Ok(x)
    }

    /// `P(φ U≤k ψ)` for every state: `k` sweeps over the φ∧¬ψ rows from the indicator of ψ
    /// (other states keep 1 on ψ, 0 elsewhere).
    pub fn until(&self, phi: &StateSet, psi: &StateSet) -> Result<Vec<f64>> {
        let n = self.matrix.rows();
        let mut maybe = phi.clone();
        maybe.difference_with(psi);
        self.rows(&state_list(&maybe, n), indicator(psi, n))
    }

    /// `P^k·v`: the expectation of `v(X_k)` from every state.
    pub fn power_apply(&self, v: Vec<f64>) -> Result<Vec<f64>> {
        let all: Vec<u32> = (0..self.matrix.rows() as u32).collect();
        self.rows(&all, v)
    }

    /// `k` sweeps of `x(s) ← [s ∈ φ]·Σ_t P(s,t)·x(t)` over every state from `init`: the
    /// probability of staying in φ for `k` steps (positions `0..k`) and then collecting `x`
    /// at position `k`. After the first sweep the states outside φ hold 0 for good, so the
    /// other `k − 1` are sweeps of the φ rows.
    pub fn restricted(&self, phi: &StateSet, init: Vec<f64>) -> Result<Vec<f64>> {
        if self.k == 0 {
            return Ok(init);
        }
        self.stop.check(0)?;
        let csr = Csr::new(self.matrix);
        let n = self.matrix.rows();
        let first = (0..n)
            .map(|s| {
                if phi.contains(s) {
                    csr.row_dot(s, &init)
                } else {
                    0.0
                }
            })
            .collect();
        let rest = Horizon {
            k: self.k - 1,
            ..*self
        };
        rest.rows(&state_list(phi, n), first)
    }

    /// `x_k` with `x_0 = 0`, `x_{i+1} = r + d·P·x_i`: the expected reward (discounted by `d`,
    /// `d = 1` for plain cumulative reward) collected in the first `k` steps,
    /// `Σ_{i<k} d^i·E[r(X_i)]`.
    pub fn cumulative(&self, rewards: &[f64], discount: f64) -> Result<Vec<f64>> {
        if self.squaring && self.k > 64 {
            return crate::huge_k::cumulative(self, rewards, discount);
        }
        let csr = Csr::new(self.matrix);
        let n = self.matrix.rows();
        let mut x = vec![0.0; n];
        let mut y = vec![0.0; n];
        for i in 0..self.k {
            self.stop.check(i)?;
            for (s, ys) in y.iter_mut().enumerate() {
                *ys = rewards[s] + discount * csr.row_dot(s, &x);
            }
            std::mem::swap(&mut x, &mut y);
        }
        Ok(x)
    }
}

/// The result of [`discounted_total`].
#[derive(Clone, Debug, PartialEq)]
pub struct Discounted {
    /// The value of every state.
    pub values: Vec<f64>,
    /// Guaranteed lower bounds.
    pub lo: Vec<f64>,
    /// Guaranteed upper bounds.
    pub hi: Vec<f64>,
    /// Sweeps performed.
    pub sweeps: u64,
}

/// Discounted total reward `v = r + d·P·v` (0 ≤ d < 1) by value iteration from 0.
///
/// The iteration is a contraction with factor `d` in the sup norm, so after a sweep with
/// change `δ = ‖x_{n+1} − x_n‖∞` the fixed point is within `d/(1−d)·δ` of `x_{n+1}`: the
/// returned bounds are `x ± d/(1−d)·δ`, and the loop stops when that radius is below
/// `epsilon` (when `relative`: below `ε·min(1, smallest non-zero |value|)`, so every value is
/// within ε relative, and zero values within ε absolute).
/// `None` when `max_iterations` sweeps do not reach the precision.
pub fn discounted_total(
    matrix: &Matrix,
    rewards: &[f64],
    discount: f64,
    epsilon: f64,
    relative: bool,
    max_iterations: u64,
    stop: &Interrupt,
) -> Result<Option<Discounted>> {
    let csr = Csr::new(matrix);
    let n = matrix.rows();
    let mut x = vec![0.0; n];
    let mut y = vec![0.0; n];
    let factor = discount / (1.0 - discount);
    let nonnegative = rewards.iter().all(|&r| r >= 0.0);
    let ptr = matrix.indptr();
    let ptr = ptr.raw_storage();
    let max_row = ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) as f64;
    for it in 1..=max_iterations {
        stop.check(it - 1)?;
        let mut delta: f64 = 0.0;
        // Smallest non-zero |value| (relative criterion) — zero values need `radius ≤ ε`.
        let mut scale = f64::INFINITY;
        for (s, ys) in y.iter_mut().enumerate() {
            let v = rewards[s] + discount * csr.row_dot(s, &x);
            delta = delta.max((v - x[s]).abs());
            if v != 0.0 {
                scale = scale.min(v.abs());
            }
            *ys = v;
        }
        std::mem::swap(&mut x, &mut y);
        let radius = factor * delta;
        // Relative: every non-zero value within ε·|value| (values ≥ 1 within ε·1 at least).
        let target = if relative {
            epsilon * scale.min(1.0)
        } else {
            epsilon
        };
        if radius <= target || radius == 0.0 {
            // Rounding: each computed value `r + d·Σ P·x` is within (row length + 2)·u of its
            // exact evaluation (relative to the largest value), and through the contraction
            // these errors add up to at most that over (1 − d): the computed iterate is that
            // close to the exact one. Without this margin, 0.1 per step at d = 1/2 gave
            // [0.1999998…, 0.19999999999999998], excluding the value 0.2.
            let xmax = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let round = (max_row + 3.0) * f64::EPSILON * xmax / (1.0 - discount);
            // With non-negative rewards the exact iterates increase monotonically from 0
            // towards the fixed point, so they are lower bounds themselves.
            let lo = if nonnegative {
                x.iter().map(|v| next_down((v - round).max(0.0))).collect()
            } else {
                x.iter().map(|v| next_down(v - radius - round)).collect()
            };
            let hi = x.iter().map(|v| next_up(v + radius + round)).collect();
            return Ok(Some(Discounted {
                values: x,
                lo,
                hi,
                sweeps: it,
            }));
        }
    }
    Ok(None)
}

/// The all-horizon table: `P(F≤h target)` for `h = 1..=max_h` and every state, from one
/// pass of `max_h` sweeps. Row `h−1` of the row-major table holds horizon `h`.
#[derive(Clone, Debug, PartialEq)]
pub struct HorizonTable {
    /// Number of states (row length).
    pub num_states: usize,
    /// The largest horizon `H` (number of rows).
    pub max_h: usize,
    /// Row-major values: `data[(h−1)·num_states + s] = P_s(F≤h target)`.
    pub data: Vec<f64>,
}

impl HorizonTable {
    /// `P_s(F≤h target)` (`1 ≤ h ≤ max_h`), or `None` out of range.
    pub fn get(&self, state: usize, h: usize) -> Option<f64> {
        if h == 0 || h > self.max_h || state >= self.num_states {
            return None;
        }
        self.data.get((h - 1) * self.num_states + state).copied()
    }

    /// All states' values for horizon `h` (`1 ≤ h ≤ max_h`).
    pub fn horizon(&self, h: usize) -> Option<&[f64]> {
        if h == 0 || h > self.max_h {
            return None;
        }
        self.data
            .get((h - 1) * self.num_states..h * self.num_states)
    }
}

/// Compute the all-horizon table `P(F≤h target)`, `h = 1..=max_h`, for every state with
/// `max_h` sweeps over the non-target rows: row `h` is computed from row `h−1` in place in the
/// table (no other buffer, no allocation in the loop).
pub fn horizon_table(
    matrix: &Matrix,
    target: &StateSet,
    max_h: usize,
    stop: &Interrupt,
) -> Result<HorizonTable> {
    let csr = Csr::new(matrix);
    let n = matrix.rows();
    let mut data = vec![0.0; n * max_h];
    let prev0 = indicator(target, n);
    let mut rest = StateSet::with_capacity(n);
    rest.insert_range(..);
    rest.difference_with(target);
    let rows = state_list(&rest, n);
    for h in 0..max_h {
        stop.check(h as u64)?;
        let (done, todo) = data.split_at_mut(h * n);
        let prev: &[f64] = if h == 0 { &prev0 } else { &done[(h - 1) * n..] };
        let cur = &mut todo[..n];
        for s in target.ones().filter(|&s| s < n) {
            cur[s] = 1.0;
        }
        for &s in &rows {
            cur[s as usize] = csr.row_dot(s as usize, prev);
        }
    }
    Ok(HorizonTable {
        num_states: n,
        max_h,
        data,
    })
}
