//! Bounded operators with a huge step bound (`C<=1000000000`, `F=99999999999`, `I=k`): the
//! sweeps of [`crate::bounded`] take one pass per step, which never ends for such `k`
//! on a chain that never reaches a fixed point (a periodic one) or, for cumulative rewards,
//! at all. Here:
//!
//! - on a small chain (at most [`DENSE_MAX_STATES`] states) the `k`-th power of the sweep's
//!   affine map is taken by repeated squaring of a dense matrix: `O(n³ log k)`, periodic or not;
//! - otherwise a discounted cumulative reward stops at an exact fixed point of its sweep, and
//!   an undiscounted one once the expected one-step reward `P^i·r` no longer changes, after
//!   which the value grows linearly and is finished in closed form; every other operator
//!   keeps the solver's sweeps (which stop at an exact fixed point), and all of them honour the
//!   time limit and cancellation through the [`Interrupt`] once per sweep.

use crate::bounded::Horizon;
use crate::numeric::Interrupt;
use crate::Result;
use augur_dtmc::Matrix;

/// The largest chain whose step matrix is squared densely (256² entries, 512 KiB).
pub const DENSE_MAX_STATES: usize = 256;

/// Below this many steps the sweeps are at least as cheap as squaring.
pub(crate) fn squaring_pays(n: usize, k: u64) -> bool {
    n <= DENSE_MAX_STATES && k > 64 && k / 8 > n as u64
}

/// A dense square matrix, row-major.
#[derive(Clone)]
struct Dense {
    n: usize,
    a: Vec<f64>,
}

impl Dense {
    fn identity(n: usize) -> Dense {
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            a[i * n + i] = 1.0;
        }
        Dense { n, a }
    }

    fn mul(&self, other: &Dense) -> Dense {
        let n = self.n;
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            let row = &mut c[i * n..(i + 1) * n];
            for k in 0..n {
                let x = self.a[i * n + k];
                if x != 0.0 {
                    for (cj, &bj) in row.iter_mut().zip(&other.a[k * n..(k + 1) * n]) {
                        *cj += x * bj;
                    }
                }
            }
        }
        Dense { n, a: c }
    }

    fn apply(&self, v: &[f64]) -> Vec<f64> {
        let n = self.n;
        (0..n)
            .map(|i| {
                self.a[i * n..(i + 1) * n]
                    .iter()
                    .zip(v)
                    .map(|(a, b)| a * b)
                    .sum()
            })
            .collect()
    }

    /// `self^k` by repeated squaring, checking the interrupt once per squaring.
    fn pow(&self, mut k: u64, stop: &Interrupt) -> Result<Dense> {
        let mut result = Dense::identity(self.n);
        let mut base = self.clone();
        let mut i = 0;
        while k > 0 {
            stop.check(i)?;
            if k & 1 == 1 {
                result = result.mul(&base);
            }
            k >>= 1;
            if k > 0 {
                base = base.mul(&base);
            }
            i += 1;
        }
        Ok(result)
    }
}

/// The sweep matrix: row `s` is `P(s, ·)` where `swept[s]`, else the unit row `e_s` (the
/// entry is kept).
fn sweep_matrix(matrix: &Matrix, swept: &[bool]) -> Dense {
    let n = matrix.rows();
    let mut d = Dense {
        n,
        a: vec![0.0; n * n],
    };
    for (s, r) in matrix.outer_iterator().enumerate() {
        if swept[s] {
            for (t, &p) in r.iter() {
                d.a[s * n + t] += p;
            }
        } else {
            d.a[s * n + s] = 1.0;
        }
    }
    d
}

/// [`Horizon::rows`] by repeated squaring of the sweep's matrix.
pub(crate) fn rows_by_squaring(
    horizon: &Horizon<'_>,
    rows: &[u32],
    init: Vec<f64>,
) -> Result<Vec<f64>> {
    let mut swept = vec![false; horizon.matrix.rows()];
    for &s in rows {
        swept[s as usize] = true;
    }
    let m = sweep_matrix(horizon.matrix, &swept);
    Ok(m.pow(horizon.k, horizon.stop)?.apply(&init))
}

/// [`Horizon::cumulative`] (`x_k` with `x_0 = 0`, `x_{i+1} = r + d·P·x_i`) for `k` over 64.
pub(crate) fn cumulative(
    horizon: &Horizon<'_>,
    rewards: &[f64],
    discount: f64,
) -> Result<Vec<f64>> {
    let Horizon {
        matrix, k, stop, ..
    } = *horizon;
    let n = matrix.rows();
    if squaring_pays(n + 1, k) {
        // The affine map as an (n+1)-square matrix [[d·P, r], [0, 1]] applied to (0, 1).
        let m1 = n + 1;
        let mut d = Dense {
            n: m1,
            a: vec![0.0; m1 * m1],
        };
        for (s, row) in matrix.outer_iterator().enumerate() {
            for (t, &p) in row.iter() {
                d.a[s * m1 + t] += discount * p;
            }
            d.a[s * m1 + n] = rewards[s];
        }
        d.a[n * m1 + n] = 1.0;
        let mut init = vec![0.0; m1];
        init[n] = 1.0;
        let mut x = d.pow(k, stop)?.apply(&init);
        x.truncate(n);
        return Ok(x);
    }
    if discount < 1.0 {
        // x ← r + d·P·x is a map of x alone: once a sweep changes nothing, no later one does.
        let mut x = vec![0.0; n];
        let mut y = vec![0.0; n];
        for i in 0..k {
            stop.check(i)?;
            let mut changed = false;
            for (s, row) in matrix.outer_iterator().enumerate() {
                let dot: f64 = row.iter().map(|(t, &p)| p * x[t]).sum();
                let v = rewards[s] + discount * dot;
                changed |= v != x[s];
                y[s] = v;
            }
            std::mem::swap(&mut x, &mut y);
            if !changed {
                break;
            }
        }
        return Ok(x);
    }
    // x_k = Σ_{i<k} v_i with v_i = P^i·r. v ← P·v is a map of v alone: once a sweep leaves v
    // unchanged, every later step adds the same v, and x_k = x_{i+1} + (k − i − 1)·v.
    let mut x = vec![0.0; n];
    let mut v = rewards.to_vec();
    let mut v_next = vec![0.0; n];
    for i in 0..k {
        stop.check(i)?;
        for s in 0..n {
            x[s] += v[s];
        }
        let mut changed = false;
        for (s, row) in matrix.outer_iterator().enumerate() {
            let nv: f64 = row.iter().map(|(t, &p)| p * v[t]).sum();
            changed |= nv != v[s];
            v_next[s] = nv;
        }
        std::mem::swap(&mut v, &mut v_next);
        if !changed {
            let left = (k - i - 1) as f64;
            for s in 0..n {
                x[s] += left * v[s];
            }
            return Ok(x);
        }
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_dtmc::DtmcBuilder;

    fn cycle(n: u32) -> Matrix {
        let mut b = DtmcBuilder::new(n as usize);
        for s in 0..n {
            b.add_transition(s, (s + 1) % n, 1.0).unwrap();
        }
        b.add_initial(0).unwrap();
        b.build().unwrap().0.matrix
    }

    #[test]
    fn squaring_matches_the_sweeps() {
        // A 3-cycle with a lazy state: compare with the plain sweeps for moderate k.
        let mut b = DtmcBuilder::new(3);
        b.add_transition(0, 1, 0.5).unwrap();
        b.add_transition(0, 0, 0.5).unwrap();
        b.add_transition(1, 2, 1.0).unwrap();
        b.add_transition(2, 0, 0.3).unwrap();
        b.add_transition(2, 1, 0.7).unwrap();
        b.add_initial(0).unwrap();
        let m = b.build().unwrap().0.matrix;
        let stop = Interrupt::default();
        let r = [1.0, 2.0, 0.5];
        for k in [65, 100, 1000] {
            for d in [1.0, 0.9] {
                let a = Horizon::any_k(&m, k, &stop).cumulative(&r, d).unwrap();
                let b = Horizon::new(&m, k, &stop).cumulative(&r, d).unwrap();
                for (x, y) in a.iter().zip(&b) {
                    assert!(
                        (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                        "k={k} d={d}: {x} vs {y}"
                    );
                }
            }
            let a = Horizon::any_k(&m, k, &stop)
                .power_apply(r.to_vec())
                .unwrap();
            let b = Horizon::new(&m, k, &stop).power_apply(r.to_vec()).unwrap();
            for (x, y) in a.iter().zip(&b) {
                assert!((x - y).abs() <= 1e-12, "k={k}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn huge_k_on_a_periodic_chain_in_closed_form() {
        // On the deterministic 2-cycle, one unit of reward per step: C<=k is k (derived by
        // hand), and P^k·[0,1] alternates with the parity of k.
        let m = cycle(2);
        let stop = Interrupt::default();
        let x = Horizon::any_k(&m, 1_000_000_000, &stop)
            .cumulative(&[1.0, 1.0], 1.0)
            .unwrap();
        assert_eq!(x, vec![1e9, 1e9]);
        let y = Horizon::any_k(&m, 99_999_999_999, &stop)
            .power_apply(vec![0.0, 1.0])
            .unwrap();
        assert_eq!(y, vec![1.0, 0.0]);
        // Discounted: Σ_{i<k} d^i → 1/(1−d) for huge k.
        let z = Horizon::any_k(&m, 1_000_000_000, &stop)
            .cumulative(&[1.0, 1.0], 0.5)
            .unwrap();
        assert!((z[0] - 2.0).abs() < 1e-12, "{z:?}");
    }

    #[test]
    fn large_chains_finish_in_closed_form() {
        // 300 states (above the dense limit), a cycle through all: P^i·r is constant for
        // r = 1, so C<=k = k exactly after one sweep.
        let m = cycle(300);
        let stop = Interrupt::default();
        let x = Horizon::any_k(&m, 1_000_000_000_000, &stop)
            .cumulative(&vec![1.0; 300], 1.0)
            .unwrap();
        assert!(x.iter().all(|&v| v == 1e12), "{:?}", &x[..3]);
    }
}
