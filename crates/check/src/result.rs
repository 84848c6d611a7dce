//! What a check produces: per-state values, the reported value with its bounds, and the method.

use augur_dtmc::StateSet;
use augur_pctl::BigRational;
use augur_solver::Solution;
use num_traits::{One, Zero};
use std::fmt;

/// One value: a truth value or a number (possibly infinite).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A truth value.
    Bool(bool),
    /// A number (`f64::INFINITY` for infinite expected rewards).
    Num(f64),
}

impl fmt::Display for Scalar {
    /// `true`/`false`, or the number as [`augur_source::number::approx`] writes a floating-point
    /// value without bounds: the shortest decimal within 8 ulps of it (`0.0514`, not
    /// `0.05140000000000001`), with an exponent when it is very large or very small (`1e308`,
    /// `2.5e-10`), `inf`/`-inf`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Num(x) => f.write_str(&augur_source::number::approx(x)),
        }
    }
}

/// Guaranteed bounds `[lo, hi]` around a value (sound methods only; `lo == hi` when exact).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Bounds {
    /// Whether `x` lies in `[lo, hi]`.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// What computed a value. `Display` gives the text `augur check` prints in parentheses
/// (`exact (9 unknowns)`, `bounded (5 steps)`, `graph`, ...).
#[derive(Clone, Debug, PartialEq)]
pub enum MethodUsed {
    /// Graph analysis only: labels, expressions and their boolean combinations.
    Graph,
    /// An expression evaluated in every state.
    Expression,
    /// `X φ`: one matrix-vector product.
    Next,
    /// A step-bounded until: `steps` sweeps (stopping early at a fixed point).
    Bounded {
        /// The window of steps.
        steps: u64,
    },
    /// An unbounded problem, as the numerical solver describes its method
    /// (`exact (9 unknowns)`, `topological interval iteration (...)`, ...).
    Solver(String),
    /// `inner`, then `steps` sweeps of "stay in φ" (a step bound with a lower end).
    RestrictedSteps {
        /// How the remainder was computed.
        inner: Box<MethodUsed>,
        /// The lower end of the step bound.
        steps: u64,
    },
    /// `C<=k`, optionally discounted.
    Cumulative {
        /// `k`.
        steps: u64,
        /// Whether a discount factor below 1 applied.
        discounted: bool,
    },
    /// `C{discount=d}` (unbounded): value iteration with the contraction bound.
    DiscountedIteration {
        /// Sweeps performed.
        sweeps: u64,
    },
    /// `I=k`.
    Instantaneous {
        /// `k`.
        steps: u64,
    },
    /// `filter(count, ...)`.
    Count,
    /// `filter(range, ...)`.
    Range {
        /// Number of states in the filter.
        states: usize,
    },
    /// Several computations (a boolean combination of operators), in order, without repeats.
    Several(Vec<MethodUsed>),
    /// `inner`, on an interval model some of whose rows the reading scaled to hold a
    /// distribution ([`augur_dtmc::Intervals::normalised`]).
    Normalised {
        /// How the value was computed.
        inner: Box<MethodUsed>,
        /// Rows scaled.
        rows: u32,
        /// The first of them.
        first_state: u32,
    },
}

impl MethodUsed {
    /// The interval rows the reading normalised for this result (see
    /// [`MethodUsed::Normalised`]), if any.
    pub fn normalised_rows(&self) -> Option<u32> {
        match self {
            MethodUsed::Normalised { rows, .. } => Some(*rows),
            _ => None,
        }
    }
}

impl fmt::Display for MethodUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MethodUsed::Graph => f.write_str("graph"),
            MethodUsed::Expression => f.write_str("expression"),
            MethodUsed::Next => f.write_str("one matrix-vector product"),
            MethodUsed::Bounded { steps } => write!(f, "bounded ({steps} steps)"),
            MethodUsed::Solver(s) => f.write_str(s),
            MethodUsed::RestrictedSteps { inner, steps } => {
                write!(f, "{inner} + {steps} restricted steps")
            }
            MethodUsed::Cumulative { steps, discounted } => {
                let what = if *discounted {
                    "discounted cumulative"
                } else {
                    "cumulative"
                };
                write!(f, "{what} ({steps} steps)")
            }
            MethodUsed::DiscountedIteration { sweeps } => {
                write!(f, "discounted value iteration ({sweeps} sweeps, sound)")
            }
            MethodUsed::Instantaneous { steps } => write!(f, "instantaneous ({steps} steps)"),
            MethodUsed::Count => f.write_str("count"),
            MethodUsed::Range { states } => write!(f, "range over {states} states"),
            MethodUsed::Normalised {
                inner,
                rows,
                first_state,
            } => write!(
                f,
                "{inner}; on the interval model as normalised: {rows} row(s) scaled to hold a distribution (first: state {first_state})"
            ),
            MethodUsed::Several(ms) => {
                for (i, m) in ms.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{m}")?;
                }
                Ok(())
            }
        }
    }
}

/// A number per state, with sound bounds when every step was sound, and how it was computed:
/// the one numeric result type of the checker (the solvers' [`Solution`] converts into it).
#[derive(Clone, Debug, PartialEq)]
pub struct NumValues {
    /// The value of every state (`f64::INFINITY` for infinite rewards).
    pub values: Vec<f64>,
    /// Guaranteed `[lo, hi]` per state, when known.
    pub bounds: Option<(Vec<f64>, Vec<f64>)>,
    /// What computed it.
    pub method: MethodUsed,
    /// The exact rational of every state, when the values were computed exactly for the model
    /// as built (`--method exact`): `None` in an entry whose value is infinite.
    pub exact: Option<Vec<Option<BigRational>>>,
}

impl NumValues {
    /// Values whose bounds are the values themselves (no exact rationals).
    pub fn exact(values: Vec<f64>, method: MethodUsed) -> NumValues {
        NumValues {
            bounds: Some((values.clone(), values.clone())),
            values,
            method,
            exact: None,
        }
    }

    /// Values computed by floating-point sweeps (a step-bounded operator) with bounds
    /// `[v − error, v + error]`, `error` a bound of the sweeps' rounding error
    /// ([`crate::checker`]'s `sweep_error`); with `nonnegative`, the lower bounds stop at 0
    /// (probabilities, non-negative rewards: the exact value cannot be below it).
    pub fn swept(values: Vec<f64>, method: MethodUsed, error: f64, nonnegative: bool) -> NumValues {
        NumValues::exact(values, method).widened(error, nonnegative)
    }

    /// The bounds of the states in `set` collapsed onto their values (values a sweep never
    /// rounds: the target states of a bounded until, 1 throughout).
    pub fn exact_on(mut self, set: &augur_dtmc::StateSet) -> NumValues {
        if let Some((lo, hi)) = &mut self.bounds {
            for s in set.ones() {
                lo[s] = self.values[s];
                hi[s] = self.values[s];
            }
        }
        self
    }

    /// The bounds widened by `error` on each side (further floating-point sweeps applied to
    /// both of them), the lower ones stopping at 0 with `nonnegative`.
    pub fn widened(mut self, error: f64, nonnegative: bool) -> NumValues {
        let floor = if nonnegative { 0.0 } else { f64::NEG_INFINITY };
        if let Some((lo, hi)) = &mut self.bounds {
            for v in lo.iter_mut().filter(|v| v.is_finite()) {
                *v = (*v - error).max(floor);
            }
            for v in hi.iter_mut().filter(|v| v.is_finite()) {
                *v += error;
            }
        }
        self
    }

    /// The values after the `k` sweeps of a lower step bound (`φ U[k, ..] ψ` from the values
    /// of the rest): `restrict` applied to both bounds, then to the values; the method
    /// [`MethodUsed::RestrictedSteps`] over this one; the bounds widened by the sweeps'
    /// rounding `error`.
    pub(crate) fn restricted(
        self,
        k: u64,
        error: f64,
        mut restrict: impl FnMut(Vec<f64>) -> crate::Result<Vec<f64>>,
    ) -> crate::Result<NumValues> {
        let method = MethodUsed::RestrictedSteps {
            inner: Box::new(self.method),
            steps: k,
        };
        let bounds = match self.bounds {
            Some((lo, hi)) => Some((restrict(lo)?, restrict(hi)?)),
            None => None,
        };
        Ok(NumValues {
            values: restrict(self.values)?,
            bounds,
            method,
            exact: None,
        }
        .widened(error, true))
    }

    /// Values known as exact rationals (`None`: infinite); the `f64` values are the nearest
    /// doubles and the bounds their outward roundings.
    pub fn rational(exact: Vec<Option<BigRational>>, method: MethodUsed) -> NumValues {
        let n = exact.len();
        let (mut values, mut lo, mut hi) = (Vec::with_capacity(n), Vec::new(), Vec::new());
        for q in &exact {
            let (v, (l, h)) = match q {
                Some(q) => (
                    augur_solver::exact::to_f64(q),
                    augur_solver::exact::to_f64_bounds(q),
                ),
                None => (f64::INFINITY, (f64::INFINITY, f64::INFINITY)),
            };
            values.push(v);
            lo.push(l);
            hi.push(h);
        }
        NumValues {
            values,
            bounds: Some((lo, hi)),
            method,
            exact: Some(exact),
        }
    }

    /// The exact rational of state `s`, when known and finite.
    pub fn exact_at(&self, s: usize) -> Option<&BigRational> {
        self.exact.as_ref()?.get(s)?.as_ref()
    }

    /// The bounds of state `s`, when known.
    pub fn bounds_at(&self, s: usize) -> Option<Bounds> {
        self.bounds.as_ref().map(|(lo, hi)| Bounds {
            lo: lo[s],
            hi: hi[s],
        })
    }

    /// Applies a monotone (non-decreasing) map to the values and both bounds.
    pub(crate) fn map_monotone(self, f: impl Fn(Vec<f64>) -> Vec<f64>) -> NumValues {
        NumValues {
            values: f(self.values),
            bounds: self.bounds.map(|(lo, hi)| (f(lo), f(hi))),
            method: self.method,
            exact: self.exact,
        }
    }

    /// `1 − x`, bounds swapped.
    pub(crate) fn complement(self) -> NumValues {
        let flip = |v: Vec<f64>| v.into_iter().map(|x| 1.0 - x).collect::<Vec<_>>();
        let one = BigRational::one();
        NumValues {
            values: flip(self.values),
            bounds: self.bounds.map(|(lo, hi)| (flip(hi), flip(lo))),
            method: self.method,
            exact: self.exact.map(|x| {
                x.into_iter()
                    .map(|q| q.map(|q| &one - q))
                    .collect::<Vec<_>>()
            }),
        }
    }
}

impl From<Solution> for NumValues {
    fn from(s: Solution) -> NumValues {
        NumValues {
            values: s.values,
            bounds: s.bounds,
            method: MethodUsed::Solver(s.method),
            exact: s.exact,
        }
    }
}

/// The value of a formula in every state.
#[derive(Clone, Debug, PartialEq)]
pub enum StateValues {
    /// A truth value per state: the set of states where the formula holds.
    Bool(StateSet),
    /// A number per state.
    Num(NumValues),
}

impl StateValues {
    /// The value of state `s`.
    pub fn at(&self, s: usize) -> Scalar {
        match self {
            StateValues::Bool(set) => Scalar::Bool(set.contains(s)),
            StateValues::Num(n) => Scalar::Num(n.values.get(s).copied().unwrap_or(f64::NAN)),
        }
    }

    /// The value of every state of `0..n`, in order.
    pub fn to_vec(&self, n: usize) -> Vec<Scalar> {
        (0..n).map(|s| self.at(s)).collect()
    }
}

/// How the reported value was obtained from the values at several initial states (PRISM's
/// convention).
#[derive(Clone, Debug, PartialEq)]
pub enum InitialFilter {
    /// Boolean property: it holds in all `count` initial states (`forall`).
    Forall {
        /// Number of initial states.
        count: usize,
    },
    /// Numeric property: the range `[min, max]` over `count` initial states; the reported
    /// value is `min`.
    Range {
        /// Number of initial states.
        count: usize,
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
}

/// The result of checking one property, as reported to the user.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The property's name, if any.
    pub name: Option<String>,
    /// The property as written (canonical text).
    pub property: String,
    /// The values of every state.
    pub states: StateValues,
    /// The value at the (single) initial state, the value of a top-level filter, or the
    /// PRISM filter over several initial states (see `initial_filter`).
    pub value: Scalar,
    /// Sound bounds of `value`, when known.
    pub bounds: Option<Bounds>,
    /// The exact rational of `value`, when it was computed exactly for the model as built
    /// (`Method::Exact`): `bounds` are then its outward rounding to doubles (`lo == hi` when
    /// the rational is a double).
    pub exact: Option<BigRational>,
    /// What computed it.
    pub method: MethodUsed,
    /// Set when the model has several initial states and the property is not a filter.
    pub initial_filter: Option<InitialFilter>,
    /// For a top-level `print`/`printall` filter: the printed `(state, value)` pairs.
    pub printed: Option<Vec<(u32, Scalar)>>,
    /// Remarks worth showing (undecided comparisons, ...).
    pub notes: Vec<String>,
    /// Seconds spent checking it.
    pub seconds: f64,
}

/// How an exact rational is written (`--exact-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExactFormat {
    /// `p/q` in lowest terms (an integer without `/1`), as Storm prints exact results.
    #[default]
    Fraction,
    /// The decimal expansion: complete when it terminates, else [`DECIMAL_DIGITS`]
    /// significant digits followed by `...`.
    Decimal,
}

/// Significant digits of a non-terminating decimal in [`ExactFormat::Decimal`].
pub const DECIMAL_DIGITS: usize = 30;

/// `q` written in `format`.
///
/// ```
/// use augur_check::{format_exact, BigRational, ExactFormat};
/// let third = BigRational::new(1.into(), 3.into());
/// assert_eq!(format_exact(&third, ExactFormat::Fraction), "1/3");
/// assert_eq!(format_exact(&third, ExactFormat::Decimal), "0.333333333333333333333333333333...");
/// let q = BigRational::new((-5).into(), 4.into());
/// assert_eq!(format_exact(&q, ExactFormat::Decimal), "-1.25");
/// ```
pub fn format_exact(q: &BigRational, format: ExactFormat) -> String {
    match format {
        ExactFormat::Fraction => q.to_string(),
        ExactFormat::Decimal => decimal(q),
    }
}

fn decimal(q: &BigRational) -> String {
    use num_bigint::BigInt;
    let neg = *q < BigRational::zero();
    let num = if neg {
        -q.numer().clone()
    } else {
        q.numer().clone()
    };
    let den = q.denom().clone();
    let int = &num / &den;
    let mut rem = &num % &den;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&int.to_string());
    if rem.is_zero() {
        return out;
    }
    out.push('.');
    // `den` (lowest terms) is 2^a·5^b exactly when the expansion terminates, after max(a, b)
    // digits; otherwise DECIMAL_DIGITS significant digits and `...`.
    let terminating = {
        let (mut d, mut twos, mut fives) = (den.clone(), 0usize, 0usize);
        let (two, five) = (BigInt::from(2), BigInt::from(5));
        while (&d % &two).is_zero() {
            d /= &two;
            twos += 1;
        }
        while (&d % &five).is_zero() {
            d /= &five;
            fives += 1;
        }
        d.is_one().then_some(twos.max(fives))
    };
    let mut significant = if int.is_zero() {
        0
    } else {
        int.to_string().len()
    };
    let ten = BigInt::from(10);
    let mut digits = 0;
    while !rem.is_zero() {
        if terminating.is_none() && significant >= DECIMAL_DIGITS {
            out.push_str("...");
            return out;
        }
        rem *= &ten;
        let d = &rem / &den;
        rem = &rem % &den;
        let digit = d.to_string();
        if significant > 0 || digit != "0" {
            significant += 1;
        }
        out.push_str(&digit);
        digits += 1;
        debug_assert!(terminating.is_none_or(|t| digits <= t));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Scalar;

    #[test]
    fn numbers_print_in_the_shortest_form_within_eight_ulps() {
        for (x, text) in [
            (1.0, "1"),
            (0.4539288013, "0.4539288013"),
            (0.0, "0"),
            (1e308, "1e308"),
            (f64::MAX, "1.797693134862315e308"),
            (0.05140000000000001, "0.0514"),
            (2.5e-10, "2.5e-10"),
            (-1e-300, "-1e-300"),
            (1e15, "1000000000000000"),
            (f64::INFINITY, "inf"),
        ] {
            let shown = Scalar::Num(x).to_string();
            assert_eq!(shown, text);
            if x.is_finite() {
                let back = shown.parse::<f64>().unwrap();
                assert!((back - x).abs() <= 8.0 * (x.next_up() - x).abs(), "{shown}");
            }
        }
    }
}
