//! Step-bounded operators in exact rational arithmetic (`--method exact`): bounded until,
//! restricted steps, `X`, instantaneous and (discounted) cumulative rewards, computed with the
//! model's exact transition probabilities, one sparse rational matrix-vector product per step,
//! and the discounted total reward by exact elimination.
//!
//! Rational numbers grow with every step, so the work is bounded: a computation may spend at
//! most a budget of operations ([`MAX_RATIONAL_OPS`] by default): a step costs, for each
//! transition of a row it updates, `1 + w²` where `w` counts the 64-bit words of its two
//! operands (the probability and the successor's current value) beyond the first, so 10⁷
//! multiply-adds of small numbers, fewer as the numbers grow (multiplying and normalising
//! are quadratic in the words). A step bound whose steps do not fit is refused
//! ([`StepsError::OverBudget`]) before the step that would pass the budget, never answered
//! inexactly. Sweeps stop early at an exact fixed point (an absorbing chain reaches
//! one), and a cumulative reward whose expected one-step reward `P^i·r` stops changing is
//! finished in closed form, so a huge bound on such a chain costs only the steps until then.
//! Every step checks the [`Interrupt`] (deadline, cancellation, progress).

use crate::exact::{self as ex, ExactFailure, ExactSystem};
use crate::graph;
use crate::numeric::{Interrupt, SolverError};
use augur_dtmc::Matrix;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The default budget of one exact step-bounded computation: 10⁷ operations (a multiply-add
/// of two small rationals is one; see the module's documentation), seconds.
pub const MAX_RATIONAL_OPS: u64 = 10_000_000;

/// The largest power of a discount factor computed in a closed form, in bits of its numerator
/// and denominator (2²⁴ bits, 2 MiB each).
const MAX_POWER_BITS: u64 = 1 << 24;

/// Why an exact step-bounded computation gave no result.
#[derive(Debug, thiserror::Error)]
pub enum StepsError {
    /// The steps asked for do not fit in the budget of rational multiply-adds.
    #[error(
        "{steps} steps need more than the budget of {budget} exact rational operations (stopped after {done} steps without reaching a fixed point; the next step costs {per_step})"
    )]
    OverBudget {
        /// The step bound.
        steps: u64,
        /// Steps done when the budget ran out.
        done: u64,
        /// The cost of the step that did not fit.
        per_step: u64,
        /// The budget.
        budget: u64,
    },
    /// The solver failed or was interrupted.
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// The result type of this module.
pub type StepsResult<T> = std::result::Result<T, StepsError>;

/// What a step does to a state's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepRow {
    /// `x(s) ← Σ_t P(s,t)·x(t)`.
    Sweep,
    /// `x(s)` is kept.
    Keep,
    /// `x(s) ← 0`.
    Zero,
}

/// Steps in rational arithmetic over one chain, within a budget of multiply-adds.
pub struct Stepper<'a> {
    ptr: &'a [u32],
    idx: &'a [u32],
    probs: Vec<BigRational>,
    /// 64-bit words of each probability's numerator and denominator.
    prob_words: Vec<u64>,
    budget: u64,
    used: u64,
    stop: &'a Interrupt,
}

impl<'a> Stepper<'a> {
    /// A stepper over `matrix` with its exact probabilities `exact` (aligned with the stored
    /// entries; `None`: each `f64` entry is exact), spending at most `budget` multiply-adds.
    pub fn new(
        matrix: &'a Matrix,
        exact: Option<&[BigRational]>,
        budget: u64,
        stop: &'a Interrupt,
    ) -> Result<Stepper<'a>, SolverError> {
        let (ptr, idx, val) = graph::raw(matrix);
        let probs = match exact {
            Some(e) if e.len() == val.len() => e.to_vec(),
            Some(e) => {
                return Err(SolverError::Unsupported(format!(
                    "{} exact probabilities for {} transitions",
                    e.len(),
                    val.len()
                )))
            }
            None => val
                .iter()
                .map(|&v| {
                    ex::to_rational(v).ok_or_else(|| {
                        SolverError::Unsupported(format!("non-finite probability {v}"))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let prob_words = probs.iter().map(words).collect();
        Ok(Stepper {
            ptr,
            idx,
            probs,
            prob_words,
            budget,
            used: 0,
            stop,
        })
    }

    /// The number of states.
    pub fn n(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Word operations spent so far.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// One step: `Σ_t P(s,t)·x(t)` for [`StepRow::Sweep`] rows.
    fn step(&self, x: &[BigRational], rows: &[StepRow]) -> Vec<BigRational> {
        (0..self.n())
            .map(|s| match rows[s] {
                StepRow::Sweep => {
                    let mut acc = BigRational::zero();
                    for e in self.ptr[s] as usize..self.ptr[s + 1] as usize {
                        let xt = &x[self.idx[e] as usize];
                        if !xt.is_zero() {
                            acc += &self.probs[e] * xt;
                        }
                    }
                    acc
                }
                StepRow::Keep => x[s].clone(),
                StepRow::Zero => BigRational::zero(),
            })
            .collect()
    }

    /// The cost of one step from `x` over `rows`: per transition of a swept row, one
    /// multiply-add plus the square of the words of its operands beyond the first (the
    /// product and the normalising gcd are quadratic in them).
    fn cost(&self, x: &[BigRational], rows: &[StepRow]) -> u64 {
        let xw: Vec<u64> = x.iter().map(words).collect();
        (0..self.n())
            .filter(|&s| rows[s] == StepRow::Sweep)
            .flat_map(|s| self.ptr[s] as usize..self.ptr[s + 1] as usize)
            .map(|e| {
                let w = self.prob_words[e] + xw[self.idx[e] as usize];
                1 + w * w
            })
            .sum()
    }

    /// Checks the interrupt and charges one step of `per_step` multiply-adds.
    fn charge(&mut self, steps: u64, done: u64, per_step: u64) -> StepsResult<()> {
        self.stop.check(done)?;
        if self.used.saturating_add(per_step) > self.budget {
            return Err(StepsError::OverBudget {
                steps,
                done,
                per_step,
                budget: self.budget,
            });
        }
        self.used += per_step;
        Ok(())
    }

    /// `k` steps from `x` (each row as `rows` says), stopping at an exact fixed point.
    pub fn iterate(
        &mut self,
        mut x: Vec<BigRational>,
        k: u64,
        rows: &[StepRow],
    ) -> StepsResult<Vec<BigRational>> {
        for i in 0..k {
            let per_step = self.cost(&x, rows);
            self.charge(k, i, per_step)?;
            let y = self.step(&x, rows);
            if y == x {
                break;
            }
            x = y;
        }
        Ok(x)
    }

    /// `Σ_{i<k} d^i·P^i·r`: the cumulative reward over `k` steps, discounted by `d` (1: not
    /// discounted). Once `P^i·r` stops changing, the rest is `P^i·r·Σ_{j=i}^{k−1} d^j`.
    pub fn cumulative(
        &mut self,
        r: Vec<BigRational>,
        d: &BigRational,
        k: u64,
    ) -> StepsResult<Vec<BigRational>> {
        let n = self.n();
        let rows = vec![StepRow::Sweep; n];
        let mut acc = vec![BigRational::zero(); n];
        let mut y = r;
        let mut dpow = BigRational::one();
        for i in 0..k {
            for (a, v) in acc.iter_mut().zip(&y) {
                *a += &dpow * v;
            }
            if i + 1 == k {
                break;
            }
            let per_step = self.cost(&y, &rows);
            self.charge(k, i, per_step)?;
            let next = self.step(&y, &rows);
            if next == y {
                // Steps i+1 .. k−1 all add d^j·y.
                let rest = geometric(d, i + 1, k).ok_or(StepsError::OverBudget {
                    steps: k,
                    done: i + 1,
                    per_step,
                    budget: self.budget,
                })?;
                for (a, v) in acc.iter_mut().zip(&y) {
                    *a += &rest * v;
                }
                break;
            }
            y = next;
            if !d.is_one() {
                dpow *= d;
            }
        }
        Ok(acc)
    }
}

/// 64-bit words of a rational's numerator and denominator beyond the first of each (a small
/// rational costs nothing extra).
fn words(q: &BigRational) -> u64 {
    let w = |bits: u64| bits.div_ceil(64).max(1) - 1;
    w(q.numer().bits()) + w(q.denom().bits())
}

/// `Σ_{j=a}^{b−1} d^j` (`a ≤ b`), `None` when `d^b` would be too large to compute.
fn geometric(d: &BigRational, a: u64, b: u64) -> Option<BigRational> {
    if d.is_one() {
        return Some(BigRational::from_integer((b - a).into()));
    }
    if d.is_zero() {
        return Some(if a == 0 && b > 0 {
            BigRational::one()
        } else {
            BigRational::zero()
        });
    }
    let bits = d.numer().bits() + d.denom().bits();
    if b.saturating_mul(bits) > MAX_POWER_BITS {
        return None;
    }
    let pow = |e: u64| num_traits::pow::Pow::pow(d, num_bigint::BigUint::from(e));
    // (d^a − d^b) / (1 − d)
    Some((pow(a) - pow(b)) / (BigRational::one() - d))
}

/// The discounted total reward `x = r + d·P·x` (`0 ≤ d < 1`) of every state, by exact
/// elimination of the whole system (no work budget: the [`Interrupt`] stops it).
pub fn discounted_total(
    matrix: &Matrix,
    exact: Option<&[BigRational]>,
    r: Vec<BigRational>,
    d: &BigRational,
    stop: &Interrupt,
) -> Result<Vec<BigRational>, SolverError> {
    if !(d >= &BigRational::zero() && d < &BigRational::one()) {
        return Err(SolverError::Unsupported(format!(
            "discount {d} is not in [0, 1)"
        )));
    }
    let st = Stepper::new(matrix, exact, 0, stop)?;
    let n = st.n();
    let mut sys = ExactSystem {
        rows: Vec::with_capacity(n),
        diag: vec![BigRational::zero(); n],
        b: r,
    };
    for s in 0..n {
        let mut row = Vec::new();
        for e in st.ptr[s] as usize..st.ptr[s + 1] as usize {
            let t = st.idx[e];
            let a = d * &st.probs[e];
            if t as usize == s {
                sys.diag[s] += a;
            } else {
                row.push((t, a));
            }
        }
        sys.rows.push(row);
    }
    ex::solve(sys, None, stop).map_err(|f| match f {
        ExactFailure::Interrupted(e) => e,
        ExactFailure::Budget => SolverError::Unsupported("exact elimination budget".into()),
        ExactFailure::Singular => {
            SolverError::Unsupported("the discounted system is singular (a discount of 1?)".into())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use sprs::TriMatI;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    /// s0 →1/10→ s1, s0 →9/10→ s2, s1 →1/3→ s3, s1 →2/3→ s0; s2, s3 absorbing.
    fn chain() -> (Matrix, Vec<BigRational>) {
        let entries = [
            (0, 1, q(1, 10)),
            (0, 2, q(9, 10)),
            (1, 0, q(2, 3)),
            (1, 3, q(1, 3)),
            (2, 2, q(1, 1)),
            (3, 3, q(1, 1)),
        ];
        let mut t = TriMatI::<f64, u32>::new((4, 4));
        for (s, d, p) in &entries {
            t.add_triplet(*s, *d, ex::to_f64(p));
        }
        let m: Matrix = t.to_csr();
        // CSR order is row-major, columns ascending: the order of `entries`.
        (m, entries.iter().map(|e| e.2.clone()).collect())
    }

    fn ind(n: usize, s: usize) -> Vec<BigRational> {
        (0..n)
            .map(|i| if i == s { q(1, 1) } else { q(0, 1) })
            .collect()
    }

    #[test]
    fn bounded_reachability_by_hand() {
        let (m, e) = chain();
        let stop = Interrupt::default();
        let mut st = Stepper::new(&m, Some(&e), MAX_RATIONAL_OPS, &stop).unwrap();
        // F<=k s=3: s3 kept, others swept.
        let rows = [
            StepRow::Sweep,
            StepRow::Sweep,
            StepRow::Sweep,
            StepRow::Keep,
        ];
        // Paths to s3 from s0: 0→1→3 (1/30 at step 2), 0→1→0→1→3 (1/30·1/15 at step 4).
        let x = st.iterate(ind(4, 3), 3, &rows).unwrap();
        assert_eq!(x[0], q(1, 30));
        let x = st.iterate(ind(4, 3), 5, &rows).unwrap();
        assert_eq!(x[0], q(1, 30) + q(1, 30) * q(1, 15));
        // X s=1 from s0: 1/10.
        let x = st.iterate(ind(4, 1), 1, &[StepRow::Sweep; 4]).unwrap();
        assert_eq!(x[0], q(1, 10));
    }

    #[test]
    fn cumulative_closed_form_tail() {
        let (m, e) = chain();
        let stop = Interrupt::default();
        let mut st = Stepper::new(&m, Some(&e), MAX_RATIONAL_OPS, &stop).unwrap();
        let r = vec![q(1, 10); 4];
        // A constant reward 1/10: C<=k is k/10 (P·1 = 1 at once: the closed form).
        assert_eq!(st.cumulative(r.clone(), &q(1, 1), 3).unwrap()[0], q(3, 10));
        assert_eq!(
            st.cumulative(r.clone(), &q(1, 1), 1_000_000_000_000)
                .unwrap()[0],
            q(100_000_000_000, 1)
        );
        // Discounted by 1/2: 1/10·(1 + 1/2 + 1/4) = 7/40.
        assert_eq!(st.cumulative(r.clone(), &q(1, 2), 3).unwrap()[0], q(7, 40));
        // Total: 1/10 / (1 − 1/2) = 1/5.
        let x = discounted_total(&m, Some(&e), r, &q(1, 2), &stop).unwrap();
        assert_eq!(x, vec![q(1, 5); 4]);
    }

    #[test]
    fn discounted_total_of_a_reward_in_one_state() {
        let (m, e) = chain();
        let stop = Interrupt::default();
        // Reward 1 in s1 only, d = 1/2: x0 = 1/2·(1/10·x1 + 9/10·x2), x1 = 1 + 1/2·(2/3·x0),
        // x2 = 0 (absorbing without reward) => x0 = 1/20·(1 + x0/3) => x0 = 3/59, x1 = 60/59.
        let r = ind(4, 1);
        let x = discounted_total(&m, Some(&e), r, &q(1, 2), &stop).unwrap();
        assert_eq!(x, vec![q(3, 59), q(60, 59), q(0, 1), q(0, 1)]);
    }

    #[test]
    fn over_budget_is_refused() {
        let (m, e) = chain();
        let stop = Interrupt::default();
        // 6 transitions a step, a budget of 20: three steps fit, not four; s0 and s1 never
        // reach a fixed point under `Sweep` everywhere with an alternating start.
        let mut st = Stepper::new(&m, Some(&e), 20, &stop).unwrap();
        let err = st.iterate(ind(4, 1), 10, &[StepRow::Sweep; 4]).unwrap_err();
        assert!(
            matches!(
                err,
                StepsError::OverBudget {
                    steps: 10,
                    done: 3,
                    per_step: 6,
                    budget: 20
                }
            ),
            "{err:?}"
        );
        // A fixed point is reached within the budget: any bound is answered.
        let mut st = Stepper::new(&m, Some(&e), 20, &stop).unwrap();
        let x = st
            .iterate(
                ind(4, 3),
                u64::MAX,
                &[StepRow::Zero, StepRow::Zero, StepRow::Keep, StepRow::Keep],
            )
            .unwrap();
        assert_eq!(x, ind(4, 3));
    }
}
