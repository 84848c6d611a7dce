//! Exact rational arithmetic: conversions between `f64` and [`BigRational`], and sparse Gaussian
//! (state) elimination over exact fractions.
//!
//! Every finite `f64` is a dyadic rational, so [`to_rational`] is exact; results computed with
//! [`BigRational`] are exact for the model as read, and [`to_f64_bounds`] rounds them outwards.

use crate::numeric::{Interrupt, SolverError};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The exact rational value of a finite `f64` (`None` for NaN and infinities).
pub fn to_rational(x: f64) -> Option<BigRational> {
    BigRational::from_float(x)
}

/// The rational written by the shortest decimal of a finite `x` (`0.1` is 1/10, not the
/// dyadic rational of its `f64`); `None` for NaN and infinities.
pub fn from_decimal(x: f64) -> Option<BigRational> {
    if !x.is_finite() {
        return None;
    }
    // `{:e}`: the shortest round-trip digits, with an exponent (`1e-30`, `1.25e2`).
    let s = format!("{x:e}");
    let (mantissa, exp) = s.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let numer: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = exp - i32::try_from(frac.len()).ok()?;
    let ten = BigRational::from_integer(BigInt::from(10));
    let q = BigRational::from_integer(numer) * num_traits::pow::Pow::pow(ten, scale);
    Some(if neg { -q } else { q })
}

/// The `f64` nearest to `q` (saturating to ±∞ for huge values).
pub fn to_f64(q: &BigRational) -> f64 {
    match q.to_f64() {
        Some(x) => x,
        None => {
            if q.is_negative() {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
    }
}

/// The next representable `f64` above `x` (for finite `x`).
pub(crate) fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    if x > 0.0 {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    }
}

/// The next representable `f64` below `x` (for finite `x`).
pub(crate) fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// An interval `[lo, hi]` of `f64`s containing `q`, as tight as possible: `lo == hi` when `q` is
/// exactly representable.
pub fn to_f64_bounds(q: &BigRational) -> (f64, f64) {
    let x = to_f64(q);
    if !x.is_finite() {
        return if x > 0.0 {
            (f64::MAX, f64::INFINITY)
        } else {
            (f64::NEG_INFINITY, f64::MIN)
        };
    }
    match to_rational(x) {
        Some(r) if &r == q => (x, x),
        Some(r) if &r > q => (next_down(x), x),
        Some(_) => (x, next_up(x)),
        None => (x, x),
    }
}

/// A linear system `x = A·x + b` over exact rationals: `rows[i]` holds the off-diagonal entries
/// `(j, A[i][j])`, `diag[i]` the diagonal entry.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExactSystem {
    pub rows: Vec<Vec<(u32, BigRational)>>,
    pub diag: Vec<BigRational>,
    pub b: Vec<BigRational>,
}

/// Why exact elimination gave up.
#[derive(Debug)]
pub(crate) enum ExactFailure {
    /// The work budget was exhausted (the system is too large or the numbers grew too much).
    Budget,
    /// `1 - A[i][i] = 0` when eliminating a state: the system is singular.
    Singular,
    /// The caller's [`Interrupt`] stopped the elimination.
    Interrupted(SolverError),
}

fn size_of(q: &BigRational) -> u64 {
    q.numer().bits() + q.denom().bits()
}

/// Solves `x = A·x + b` exactly by state elimination in Markowitz order (eliminate first the
/// unknown with the fewest predecessors × successors, to limit fill-in), then back-substitution.
///
/// `budget` bounds the work (sum of operand sizes in bits over all multiply-adds); `None` means
/// unbounded.
pub(crate) fn solve(
    sys: ExactSystem,
    budget: Option<u64>,
    stop: &Interrupt,
) -> Result<Vec<BigRational>, ExactFailure> {
    let n = sys.b.len();
    let mut rows: Vec<FxHashMap<u32, BigRational>> = sys
        .rows
        .into_iter()
        .map(|r| {
            let mut m = FxHashMap::default();
            for (j, v) in r {
                if !v.is_zero() {
                    *m.entry(j).or_insert_with(BigRational::zero) += v;
                }
            }
            m
        })
        .collect();
    let mut diag = sys.diag;
    let mut b = sys.b;
    let mut preds: Vec<FxHashSet<u32>> = vec![FxHashSet::default(); n];
    for (i, r) in rows.iter().enumerate() {
        for &j in r.keys() {
            preds[j as usize].insert(i as u32);
        }
    }
    let mut eliminated = vec![false; n];
    let mut stamp = vec![0u32; n];
    let mut heap: BinaryHeap<Reverse<(u64, u32, u32)>> = BinaryHeap::with_capacity(n);
    for i in 0..n {
        let cost = preds[i].len() as u64 * rows[i].len() as u64;
        heap.push(Reverse((cost, i as u32, 0)));
    }
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut work: u64 = 0;
    let one = BigRational::one();
    while let Some(Reverse((_, s, st))) = heap.pop() {
        let su = s as usize;
        if eliminated[su] || stamp[su] != st {
            continue;
        }
        // Once per eliminated unknown.
        stop.check(order.len() as u64)
            .map_err(ExactFailure::Interrupted)?;
        // Normalise row s: x_s = (b_s + Σ A[s][t] x_t) / (1 - A[s][s]).
        let denom = &one - &diag[su];
        if denom.is_zero() {
            return Err(ExactFailure::Singular);
        }
        let f = denom.recip();
        let row_s: Vec<(u32, BigRational)> = rows[su].drain().map(|(t, v)| (t, v * &f)).collect();
        b[su] = &b[su] * &f;
        diag[su] = BigRational::zero();
        eliminated[su] = true;
        for &(t, _) in &row_s {
            preds[t as usize].remove(&s);
        }
        let ps: Vec<u32> = preds[su].drain().collect();
        for p in ps {
            // Also once per updated row: late pivots of a filled-in system update thousands of
            // rows of huge rationals each, far too long between two checks per pivot.
            stop.check(order.len() as u64)
                .map_err(ExactFailure::Interrupted)?;
            let pu = p as usize;
            let Some(a) = rows[pu].remove(&s) else {
                continue;
            };
            for (t, v) in &row_s {
                let prod = &a * v;
                work += size_of(&prod);
                if *t == p {
                    diag[pu] += prod;
                } else {
                    match rows[pu].get_mut(t) {
                        Some(e) => *e += prod,
                        None => {
                            rows[pu].insert(*t, prod);
                            preds[*t as usize].insert(p);
                        }
                    }
                }
            }
            let prod = &a * &b[su];
            work += size_of(&prod);
            b[pu] += prod;
            stamp[pu] += 1;
            let cost = preds[pu].len() as u64 * rows[pu].len() as u64;
            heap.push(Reverse((cost, p, stamp[pu])));
            if let Some(limit) = budget {
                if work > limit {
                    return Err(ExactFailure::Budget);
                }
            }
        }
        for &(t, _) in &row_s {
            let tu = t as usize;
            if !eliminated[tu] {
                stamp[tu] += 1;
                let cost = preds[tu].len() as u64 * rows[tu].len() as u64;
                heap.push(Reverse((cost, t, stamp[tu])));
            }
        }
        // Keep the normalised row for back-substitution.
        rows[su] = row_s.into_iter().collect();
        order.push(s);
    }
    // Back-substitution in reverse elimination order: the row of s mentions only states
    // eliminated after s.
    let mut x: Vec<BigRational> = vec![BigRational::zero(); n];
    for &s in order.iter().rev() {
        let su = s as usize;
        let mut v = b[su].clone();
        for (t, a) in &rows[su] {
            v += a * &x[*t as usize];
        }
        x[su] = v;
    }
    Ok(x)
}

/// Convenience: the exact rational of an `f64` known to be finite (0 otherwise).
pub(crate) fn rat(x: f64) -> BigRational {
    to_rational(x).unwrap_or_else(|| BigRational::from_integer(BigInt::zero()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    #[test]
    fn bounds_round_outwards() {
        let third = q(1, 3);
        let (lo, hi) = to_f64_bounds(&third);
        assert!(lo < hi);
        assert!(to_rational(lo).unwrap() < third && third < to_rational(hi).unwrap());
        assert_eq!(to_f64_bounds(&q(1, 4)), (0.25, 0.25));
    }

    #[test]
    fn gambler_ruin_exact() {
        // Fair gambler's ruin on 0..4, absorbing at 0 and 4, target 4: x_i = i/4.
        // Unknowns 1,2,3: x1 = 1/2 x2, x2 = 1/2 x1 + 1/2 x3, x3 = 1/2 x2 + 1/2.
        let h = q(1, 2);
        let sys = ExactSystem {
            rows: vec![
                vec![(1, h.clone())],
                vec![(0, h.clone()), (2, h.clone())],
                vec![(1, h.clone())],
            ],
            diag: vec![q(0, 1), q(0, 1), q(0, 1)],
            b: vec![q(0, 1), q(0, 1), h.clone()],
        };
        let x = solve(sys, None, &Interrupt::default()).unwrap();
        assert_eq!(x, vec![q(1, 4), q(1, 2), q(3, 4)]);
    }

    #[test]
    fn self_loops_and_singular() {
        // x = 1/2 x + 1/4  =>  x = 1/2.
        let sys = ExactSystem {
            rows: vec![vec![]],
            diag: vec![q(1, 2)],
            b: vec![q(1, 4)],
        };
        assert_eq!(
            solve(sys, None, &Interrupt::default()).unwrap(),
            vec![q(1, 2)]
        );
        let sys = ExactSystem {
            rows: vec![vec![]],
            diag: vec![q(1, 1)],
            b: vec![q(1, 4)],
        };
        assert!(matches!(
            solve(sys, None, &Interrupt::default()),
            Err(ExactFailure::Singular)
        ));
    }
}
