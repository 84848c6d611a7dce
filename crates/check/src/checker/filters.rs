//! PRISM's filters (`filter(op, φ, states)`) and the initial-state aggregation of a result.

use super::*;

impl<'a> Checker<'a> {
    /// `filter(op, property, states)`: the property aggregated over the states (PRISM's
    /// filters), the same value in every state (`argmin`/`argmax`: the set of states).
    pub(super) fn filter(
        &mut self,
        op: FilterOp,
        property: &ResolvedFormula,
        states: &ResolvedFormula,
        span: Span,
    ) -> Result<StateValues> {
        let n = self.n();
        let inner = self.state(property)?;
        let set = self.bool_of(states)?;
        let states: Vec<usize> = set.ones().filter(|&s| s < n).collect();
        if states.is_empty() {
            return Err(self.error_at(span, "the filter's state set is empty"));
        }
        Ok(match (op, &inner) {
            (FilterOp::Print | FilterOp::Printall, _) => inner,
            (FilterOp::First, _) | (FilterOp::State, _) => {
                if op == FilterOp::State && states.len() != 1 {
                    return Err(self.error_at(
                        span,
                        format!(
                            "filter state needs exactly one state, the filter has {}",
                            states.len()
                        ),
                    ));
                }
                let s = states[0];
                match &inner {
                    StateValues::Bool(b) => everywhere_bool(n, b.contains(s)),
                    StateValues::Num(num) => everywhere_num(
                        n,
                        num.values[s],
                        num.bounds.as_ref().map(|(lo, hi)| (lo[s], hi[s])),
                        num.method.clone(),
                        num.exact_at(s).cloned(),
                    ),
                }
            }
            (FilterOp::Count, StateValues::Bool(b)) => {
                let c = states.iter().filter(|&&s| b.contains(s)).count();
                let q = self
                    .exact_mode()
                    .then(|| BigRational::from_integer(c.into()));
                everywhere_num(
                    n,
                    c as f64,
                    Some((c as f64, c as f64)),
                    MethodUsed::Count,
                    q,
                )
            }
            (FilterOp::Forall, StateValues::Bool(b)) => {
                everywhere_bool(n, states.iter().all(|&s| b.contains(s)))
            }
            (FilterOp::Exists, StateValues::Bool(b)) => {
                everywhere_bool(n, states.iter().any(|&s| b.contains(s)))
            }
            (FilterOp::Count | FilterOp::Forall | FilterOp::Exists, _) => {
                return Err(self.error_at(span, format!("filter {op} needs a boolean property")))
            }
            (_, StateValues::Bool(_)) => {
                return Err(self.error_at(span, format!("filter {op} needs a numeric property")))
            }
            (_, StateValues::Num(num)) => aggregate_numeric(op, num, &states, n)?,
        })
    }
}

/// A numeric filter (`min`, `max`, `sum`, `avg`, `argmin`, `argmax`, `range`) of `num` over
/// `states` (not empty), in a chain of `n` states; exact when every state's value is.
pub(super) fn aggregate_numeric(
    op: FilterOp,
    num: &NumValues,
    states: &[usize],
    n: usize,
) -> Result<StateValues> {
    let pick =
        |v: &[f64], f: fn(f64, f64) -> f64, init: f64| states.iter().map(|&s| v[s]).fold(init, f);
    let (values, bounds, method) = (&num.values, &num.bounds, &num.method);
    let exact: Option<Vec<BigRational>> =
        states.iter().map(|&s| num.exact_at(s).cloned()).collect();
    let exact_min = exact.as_ref().and_then(|x| x.iter().min().cloned());
    let exact_max = exact.as_ref().and_then(|x| x.iter().max().cloned());
    let (mn, mx) = (
        pick(values, f64::min, f64::INFINITY),
        pick(values, f64::max, f64::NEG_INFINITY),
    );
    Ok(match op {
        FilterOp::Min | FilterOp::Max => {
            let (v, f, init): (f64, fn(f64, f64) -> f64, f64) = if op == FilterOp::Min {
                (mn, f64::min, f64::INFINITY)
            } else {
                (mx, f64::max, f64::NEG_INFINITY)
            };
            let b = bounds
                .as_ref()
                .map(|(lo, hi)| (pick(lo, f, init), pick(hi, f, init)));
            let q = if op == FilterOp::Min {
                exact_min
            } else {
                exact_max
            };
            everywhere_num(n, v, b, method.clone(), q)
        }
        FilterOp::Sum | FilterOp::Avg => {
            let k = if op == FilterOp::Avg {
                states.len() as f64
            } else {
                1.0
            };
            let sum = |v: &[f64]| states.iter().map(|&s| v[s]).sum::<f64>() / k;
            let b = bounds.as_ref().map(|(lo, hi)| (sum(lo), sum(hi)));
            let q = exact.map(|x| {
                let total: BigRational = x.into_iter().sum();
                total / BigRational::from_integer((k as i64).into())
            });
            match q {
                // The exact sum decides the double and its bounds.
                Some(q) => StateValues::Num(NumValues::rational(vec![Some(q); n], method.clone())),
                None => everywhere_num(n, sum(values), b, method.clone(), None),
            }
        }
        FilterOp::Argmin | FilterOp::Argmax => {
            let target = if op == FilterOp::Argmin { mn } else { mx };
            let target_q = if op == FilterOp::Argmin {
                exact_min
            } else {
                exact_max
            };
            let mut s = StateSet::with_capacity(n);
            for &st in states {
                let hit = match &target_q {
                    Some(q) => num.exact_at(st) == Some(q),
                    None => values[st] == target,
                };
                if hit {
                    s.insert(st);
                }
            }
            StateValues::Bool(s)
        }
        FilterOp::Range => {
            // The value is the minimum; the bounds are [min lo, max hi], an interval
            // containing the values of all the filter's states.
            let b = match bounds {
                Some((lo, hi)) => (
                    pick(lo, f64::min, f64::INFINITY),
                    pick(hi, f64::max, f64::NEG_INFINITY),
                ),
                None => (mn, mx),
            };
            everywhere_num(
                n,
                mn,
                Some(b),
                MethodUsed::Range {
                    states: states.len(),
                },
                exact_min,
            )
        }
        // Handled above.
        FilterOp::Print
        | FilterOp::Printall
        | FilterOp::First
        | FilterOp::State
        | FilterOp::Count
        | FilterOp::Forall
        | FilterOp::Exists => return Err(CheckError::Internal(format!("unexpected filter {op}"))),
    })
}

/// `v` (with bounds `b` and exact value `q`) in each of `n` states.
pub(super) fn everywhere_num(
    n: usize,
    v: f64,
    b: Option<(f64, f64)>,
    method: MethodUsed,
    q: Option<BigRational>,
) -> StateValues {
    StateValues::Num(NumValues {
        values: vec![v; n],
        bounds: b.map(|(lo, hi)| (vec![lo; n], vec![hi; n])),
        method,
        exact: q.map(|q| vec![Some(q); n]),
    })
}

/// All `n` states when `b`, none otherwise.
pub(super) fn everywhere_bool(n: usize, b: bool) -> StateValues {
    let mut s = StateSet::with_capacity(n);
    if b {
        s.insert_range(..);
    }
    StateValues::Bool(s)
}
