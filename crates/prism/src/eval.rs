//! Compiled expressions: typed trees with variables resolved to slots of a value array and
//! constants folded, evaluated without string look-ups or allocation.
//!
//! A state is presented to the evaluators as `&[i64]`, one entry per state variable
//! (booleans as 0/1). Real-valued expressions are evaluated in `f64`, and, for
//! probabilities under exact mode, also in exact rational arithmetic ([`RealExpr::eval_q`]).
//!
//! After the state variables, the array may hold *derived slots*: the values of large formulas
//! computed once per state (see [`crate::compile::FormulaCache`]). Each takes two entries:
//! the value (an integer, a boolean as 0/1, or a real as the bits of its `f64`) and a status,
//! 0 when the value was computed, else the code of the [`EvalError`] its evaluation met
//! ([`EvalError::code`]). The `Slot` leaves read them and raise that error only when read, so
//! computing a formula eagerly never fails where compiling it in place would not.

pub use augur_expr::Cmp;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::fmt;

/// A failure while evaluating an expression in a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// `x / 0`.
    DivisionByZero,
    /// `mod(x, 0)` or a negative divisor.
    ModuloByZero,
    /// Integer overflow.
    Overflow,
    /// `pow(i, n)` on integers with `n < 0`.
    NegativeExponent,
    /// `floor`/`ceil` of a non-finite or out-of-range value.
    NotFinite,
    /// Exact evaluation met an operation without an exact rational result
    /// (`log`, `pow` with a non-integer exponent, an irrational constant).
    Inexact,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EvalError::DivisionByZero => "division by zero",
            EvalError::ModuloByZero => "mod with a non-positive divisor",
            EvalError::Overflow => "integer overflow",
            EvalError::NegativeExponent => "pow of integers with a negative exponent",
            EvalError::NotFinite => "floor/ceil of a non-finite or out-of-range value",
            EvalError::Inexact => "a value that has no exact rational result (log, pow with a non-integer exponent) in exact mode",
        })
    }
}

impl EvalError {
    /// The error's code in a derived slot's status entry (never 0, which means "computed").
    pub fn code(self) -> i64 {
        match self {
            EvalError::DivisionByZero => 1,
            EvalError::ModuloByZero => 2,
            EvalError::Overflow => 3,
            EvalError::NegativeExponent => 4,
            EvalError::NotFinite => 5,
            EvalError::Inexact => 6,
        }
    }

    /// The error of a status code ([`EvalError::code`]); `None` for 0 (no error).
    pub fn from_code(code: i64) -> Option<EvalError> {
        Some(match code {
            0 => return None,
            1 => EvalError::DivisionByZero,
            2 => EvalError::ModuloByZero,
            3 => EvalError::Overflow,
            4 => EvalError::NegativeExponent,
            5 => EvalError::NotFinite,
            _ => EvalError::Inexact,
        })
    }
}

type R<T> = Result<T, EvalError>;

/// The value of the derived slot `s` of `v` (its status entry follows it), or the error met
/// when it was computed.
#[inline]
fn slot(v: &[i64], s: u16) -> R<i64> {
    let s = s as usize;
    match EvalError::from_code(v[s + 1]) {
        None => Ok(v[s]),
        Some(e) => Err(e),
    }
}

/// An integer-valued compiled expression.
#[derive(Clone, Debug, PartialEq)]
pub enum IntExpr {
    /// A constant.
    Const(i64),
    /// The variable in this slot.
    Var(u16),
    /// The value of the integer formula computed in this derived slot.
    Slot(u16),
    /// `-e`
    Neg(Box<IntExpr>),
    /// `a + b`
    Add(Box<IntExpr>, Box<IntExpr>),
    /// `a - b`
    Sub(Box<IntExpr>, Box<IntExpr>),
    /// `a * b`
    Mul(Box<IntExpr>, Box<IntExpr>),
    /// `c ? a : b`
    Ite(Box<BoolExpr>, Box<IntExpr>, Box<IntExpr>),
    /// `min(...)`
    Min(Vec<IntExpr>),
    /// `max(...)`
    Max(Vec<IntExpr>),
    /// `floor(x)`
    Floor(Box<RealExpr>),
    /// `ceil(x)`
    Ceil(Box<RealExpr>),
    /// `pow(a, b)` on integers
    Pow(Box<IntExpr>, Box<IntExpr>),
    /// `mod(a, b)`
    Mod(Box<IntExpr>, Box<IntExpr>),
}

/// A real-valued compiled expression.
#[derive(Clone, Debug, PartialEq)]
pub enum RealExpr {
    /// A constant, with its exact rational value when known.
    Const(f64, Option<Box<BigRational>>),
    /// The value (`f64` bits) of the real formula computed in this derived slot. Never built
    /// in exact mode (a real-valued formula is inlined there, to stay exact).
    Slot(u16),
    /// An integer expression used as a real.
    FromInt(Box<IntExpr>),
    /// `-e`
    Neg(Box<RealExpr>),
    /// `a + b`
    Add(Box<RealExpr>, Box<RealExpr>),
    /// `a - b`
    Sub(Box<RealExpr>, Box<RealExpr>),
    /// `a * b`
    Mul(Box<RealExpr>, Box<RealExpr>),
    /// `a / b`
    Div(Box<RealExpr>, Box<RealExpr>),
    /// `c ? a : b`
    Ite(Box<BoolExpr>, Box<RealExpr>, Box<RealExpr>),
    /// `min(...)`
    Min(Vec<RealExpr>),
    /// `max(...)`
    Max(Vec<RealExpr>),
    /// `pow(a, b)`
    Pow(Box<RealExpr>, Box<RealExpr>),
    /// `log(x, base)`
    Log(Box<RealExpr>, Box<RealExpr>),
    /// Parameter `i` of a parametric build, with the value the `f64` evaluation gives it
    /// (the reference point whose chain has the model's graph).
    Param(u16, f64),
}

/// A boolean compiled expression.
#[derive(Clone, Debug, PartialEq)]
pub enum BoolExpr {
    /// A constant.
    Const(bool),
    /// The boolean variable in this slot.
    Var(u16),
    /// The value of the boolean formula computed in this derived slot.
    Slot(u16),
    /// `!e`
    Not(Box<BoolExpr>),
    /// `a & b & ...`
    And(Vec<BoolExpr>),
    /// `a | b | ...`
    Or(Vec<BoolExpr>),
    /// `a => b`
    Implies(Box<BoolExpr>, Box<BoolExpr>),
    /// `a <=> b` (also `=` on booleans)
    Iff(Box<BoolExpr>, Box<BoolExpr>),
    /// `c ? a : b`
    Ite(Box<BoolExpr>, Box<BoolExpr>, Box<BoolExpr>),
    /// `slot op k`: the common case of a variable compared with a constant.
    VarCmp(Cmp, u16, i64),
    /// Integer comparison.
    CmpI(Cmp, Box<IntExpr>, Box<IntExpr>),
    /// Real comparison.
    CmpR(Cmp, Box<RealExpr>, Box<RealExpr>),
    /// A comparison of reals in exact rationals (exact mode): `x*0.1 = 0.3` holds at `x = 3`.
    CmpQ(Cmp, Box<RealExpr>, Box<RealExpr>),
}

impl IntExpr {
    /// Evaluates in the state `v`.
    pub fn eval(&self, v: &[i64]) -> R<i64> {
        Ok(match self {
            IntExpr::Const(c) => *c,
            IntExpr::Var(s) => v[*s as usize],
            IntExpr::Slot(s) => slot(v, *s)?,
            IntExpr::Neg(a) => a.eval(v)?.checked_neg().ok_or(EvalError::Overflow)?,
            IntExpr::Add(a, b) => a
                .eval(v)?
                .checked_add(b.eval(v)?)
                .ok_or(EvalError::Overflow)?,
            IntExpr::Sub(a, b) => a
                .eval(v)?
                .checked_sub(b.eval(v)?)
                .ok_or(EvalError::Overflow)?,
            IntExpr::Mul(a, b) => a
                .eval(v)?
                .checked_mul(b.eval(v)?)
                .ok_or(EvalError::Overflow)?,
            IntExpr::Ite(c, a, b) => {
                if c.eval(v)? {
                    a.eval(v)?
                } else {
                    b.eval(v)?
                }
            }
            IntExpr::Min(xs) => {
                let mut m = i64::MAX;
                for x in xs {
                    m = m.min(x.eval(v)?);
                }
                m
            }
            IntExpr::Max(xs) => {
                let mut m = i64::MIN;
                for x in xs {
                    m = m.max(x.eval(v)?);
                }
                m
            }
            IntExpr::Floor(x) => to_int(x.eval(v)?.floor())?,
            IntExpr::Ceil(x) => to_int(x.eval(v)?.ceil())?,
            IntExpr::Pow(a, b) => int_pow(a.eval(v)?, b.eval(v)?)?,
            IntExpr::Mod(a, b) => {
                let d = b.eval(v)?;
                if d <= 0 {
                    return Err(EvalError::ModuloByZero);
                }
                a.eval(v)?.rem_euclid(d)
            }
        })
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<i64> {
        match self {
            IntExpr::Const(c) => Some(*c),
            _ => None,
        }
    }
}

fn to_int(x: f64) -> R<i64> {
    if x.is_finite() && x.abs() < 9.2e18 {
        Ok(x as i64)
    } else {
        Err(EvalError::NotFinite)
    }
}

fn int_pow(base: i64, exp: i64) -> R<i64> {
    if exp < 0 {
        return Err(EvalError::NegativeExponent);
    }
    let e = u32::try_from(exp).map_err(|_| EvalError::Overflow);
    match base {
        0 => Ok(if exp == 0 { 1 } else { 0 }),
        1 => Ok(1),
        -1 => Ok(if exp % 2 == 0 { 1 } else { -1 }),
        _ => base.checked_pow(e?).ok_or(EvalError::Overflow),
    }
}

impl RealExpr {
    /// Evaluates in the state `v` in `f64`.
    pub fn eval(&self, v: &[i64]) -> R<f64> {
        Ok(match self {
            RealExpr::Const(c, _) => *c,
            RealExpr::Slot(s) => f64::from_bits(slot(v, *s)? as u64),
            RealExpr::FromInt(i) => i.eval(v)? as f64,
            RealExpr::Neg(a) => -a.eval(v)?,
            RealExpr::Add(a, b) => a.eval(v)? + b.eval(v)?,
            RealExpr::Sub(a, b) => a.eval(v)? - b.eval(v)?,
            RealExpr::Mul(a, b) => a.eval(v)? * b.eval(v)?,
            RealExpr::Div(a, b) => {
                let d = b.eval(v)?;
                if d == 0.0 {
                    return Err(EvalError::DivisionByZero);
                }
                a.eval(v)? / d
            }
            RealExpr::Ite(c, a, b) => {
                if c.eval(v)? {
                    a.eval(v)?
                } else {
                    b.eval(v)?
                }
            }
            RealExpr::Min(xs) => {
                let mut m = f64::INFINITY;
                for x in xs {
                    m = m.min(x.eval(v)?);
                }
                m
            }
            RealExpr::Max(xs) => {
                let mut m = f64::NEG_INFINITY;
                for x in xs {
                    m = m.max(x.eval(v)?);
                }
                m
            }
            RealExpr::Pow(a, b) => {
                let (x, y) = (a.eval(v)?, b.eval(v)?);
                if x == 0.0 && y < 0.0 {
                    return Err(EvalError::DivisionByZero);
                }
                if y.fract() == 0.0 && y.abs() <= i32::MAX as f64 {
                    x.powi(y as i32)
                } else {
                    x.powf(y)
                }
            }
            RealExpr::Log(a, b) => a.eval(v)?.ln() / b.eval(v)?.ln(),
            RealExpr::Param(_, x) => *x,
        })
    }

    /// Evaluates in the state `v` in exact rational arithmetic (guards and conditions inside
    /// are evaluated in `f64`).
    pub fn eval_q(&self, v: &[i64]) -> R<BigRational> {
        Ok(match self {
            RealExpr::Const(_, Some(q)) => (**q).clone(),
            RealExpr::Const(_, None) => return Err(EvalError::Inexact),
            // Not built in exact mode; its `f64` has no exact meaning.
            RealExpr::Slot(_) => return Err(EvalError::Inexact),
            RealExpr::FromInt(i) => BigRational::from_integer(BigInt::from(i.eval(v)?)),
            RealExpr::Neg(a) => -a.eval_q(v)?,
            RealExpr::Add(a, b) => a.eval_q(v)? + b.eval_q(v)?,
            RealExpr::Sub(a, b) => a.eval_q(v)? - b.eval_q(v)?,
            RealExpr::Mul(a, b) => a.eval_q(v)? * b.eval_q(v)?,
            RealExpr::Div(a, b) => {
                let d = b.eval_q(v)?;
                if d.is_zero() {
                    return Err(EvalError::DivisionByZero);
                }
                a.eval_q(v)? / d
            }
            RealExpr::Ite(c, a, b) => {
                if c.eval(v)? {
                    a.eval_q(v)?
                } else {
                    b.eval_q(v)?
                }
            }
            RealExpr::Min(xs) | RealExpr::Max(xs) => {
                let is_min = matches!(self, RealExpr::Min(_));
                let mut best: Option<BigRational> = None;
                for x in xs {
                    let q = x.eval_q(v)?;
                    best = Some(match best {
                        None => q,
                        Some(b) => {
                            if (q < b) == is_min {
                                q
                            } else {
                                b
                            }
                        }
                    });
                }
                best.ok_or(EvalError::Inexact)?
            }
            RealExpr::Pow(a, b) => {
                let e = b.eval_q(v)?;
                if !e.is_integer() {
                    return Err(EvalError::Inexact);
                }
                let e = e.to_integer().to_i32().ok_or(EvalError::Overflow)?;
                let x = a.eval_q(v)?;
                if x.is_zero() && e < 0 {
                    return Err(EvalError::DivisionByZero);
                }
                if e.unsigned_abs() > 100_000 {
                    return Err(EvalError::Overflow);
                }
                let p = num_traits::pow::pow(x, e.unsigned_abs() as usize);
                if e < 0 {
                    p.recip()
                } else {
                    p
                }
            }
            RealExpr::Log(..) | RealExpr::Param(..) => return Err(EvalError::Inexact),
        })
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<f64> {
        match self {
            RealExpr::Const(c, _) => Some(*c),
            _ => None,
        }
    }
}

impl BoolExpr {
    /// Evaluates in the state `v`.
    pub fn eval(&self, v: &[i64]) -> R<bool> {
        Ok(match self {
            BoolExpr::Const(b) => *b,
            BoolExpr::Var(s) => v[*s as usize] != 0,
            BoolExpr::Slot(s) => slot(v, *s)? != 0,
            BoolExpr::VarCmp(op, s, k) => op.holds(&v[*s as usize], k),
            BoolExpr::Not(a) => !a.eval(v)?,
            BoolExpr::And(xs) => {
                for x in xs {
                    if !x.eval(v)? {
                        return Ok(false);
                    }
                }
                true
            }
            BoolExpr::Or(xs) => {
                for x in xs {
                    if x.eval(v)? {
                        return Ok(true);
                    }
                }
                false
            }
            BoolExpr::Implies(a, b) => !a.eval(v)? || b.eval(v)?,
            BoolExpr::Iff(a, b) => a.eval(v)? == b.eval(v)?,
            BoolExpr::Ite(c, a, b) => {
                if c.eval(v)? {
                    a.eval(v)?
                } else {
                    b.eval(v)?
                }
            }
            BoolExpr::CmpI(op, a, b) => op.holds(&a.eval(v)?, &b.eval(v)?),
            BoolExpr::CmpR(op, a, b) => op.holds(&a.eval(v)?, &b.eval(v)?),
            BoolExpr::CmpQ(op, a, b) => op.holds(&a.eval_q(v)?, &b.eval_q(v)?),
        })
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<bool> {
        match self {
            BoolExpr::Const(b) => Some(*b),
            _ => None,
        }
    }
}

pub use augur_expr::{decimal_rational, literal_rational};

/// The exact rational as an `f64` (nearest).
pub fn rational_to_f64(q: &BigRational) -> f64 {
    if let Some(f) = q.to_f64() {
        if f.is_finite() {
            return f;
        }
    }
    // Very large numerators/denominators: scale down by powers of two.
    let n = q.numer().bits() as i64;
    let d = q.denom().bits() as i64;
    let shift = n - d;
    let scaled = if shift > 0 {
        q / BigRational::from_integer(BigInt::one() << (shift as usize))
    } else {
        q * BigRational::from_integer(BigInt::one() << ((-shift) as usize))
    };
    let f = scaled.to_f64().unwrap_or(0.0);
    let r = f * 2f64.powi(shift.clamp(-2000, 2000) as i32);
    if q.is_negative() && r > 0.0 {
        -r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn decimal_literals_become_their_written_rationals() {
        assert_eq!(decimal_rational(0.7), Some(q(7, 10)));
        assert_eq!(decimal_rational(0.02), Some(q(1, 50)));
        assert_eq!(decimal_rational(-1.25), Some(q(-5, 4)));
        assert_eq!(decimal_rational(3.0), Some(q(3, 1)));
        assert_eq!(decimal_rational(1e-7), Some(q(1, 10_000_000)));
        assert_eq!(decimal_rational(0.0000000278), Some(q(278, 10_000_000_000)));
        assert_eq!(decimal_rational(f64::NAN), None);
    }

    #[test]
    fn integer_ops_and_errors() {
        let v = [3i64, 0];
        let x = IntExpr::Var(0);
        let e = IntExpr::Pow(Box::new(x.clone()), Box::new(IntExpr::Const(3)));
        assert_eq!(e.eval(&v), Ok(27));
        let e = IntExpr::Pow(Box::new(x.clone()), Box::new(IntExpr::Const(-1)));
        assert_eq!(e.eval(&v), Err(EvalError::NegativeExponent));
        let e = IntExpr::Mod(Box::new(IntExpr::Const(-7)), Box::new(x.clone()));
        assert_eq!(e.eval(&v), Ok(2));
        let e = IntExpr::Mod(Box::new(x.clone()), Box::new(IntExpr::Var(1)));
        assert_eq!(e.eval(&v), Err(EvalError::ModuloByZero));
        let e = IntExpr::Mul(Box::new(IntExpr::Const(i64::MAX)), Box::new(x));
        assert_eq!(e.eval(&v), Err(EvalError::Overflow));
        let e = IntExpr::Floor(Box::new(RealExpr::Const(-2.5, None)));
        assert_eq!(e.eval(&v), Ok(-3));
    }

    #[test]
    fn real_division_by_zero_is_an_error_in_both_modes() {
        let e = RealExpr::Div(
            Box::new(RealExpr::Const(1.0, Some(Box::new(q(1, 1))))),
            Box::new(RealExpr::FromInt(Box::new(IntExpr::Var(0)))),
        );
        assert_eq!(e.eval(&[0]), Err(EvalError::DivisionByZero));
        assert_eq!(e.eval_q(&[0]), Err(EvalError::DivisionByZero));
        assert_eq!(e.eval(&[4]), Ok(0.25));
        assert_eq!(e.eval_q(&[4]), Ok(q(1, 4)));
    }

    #[test]
    fn exact_pow_min_max() {
        let tenth = RealExpr::Const(0.1, Some(Box::new(q(1, 10))));
        let e = RealExpr::Pow(
            Box::new(RealExpr::Sub(
                Box::new(RealExpr::Const(1.0, Some(Box::new(q(1, 1))))),
                Box::new(tenth.clone()),
            )),
            Box::new(RealExpr::FromInt(Box::new(IntExpr::Const(3)))),
        );
        assert_eq!(e.eval_q(&[]), Ok(q(729, 1000)));
        assert!((e.eval(&[]).unwrap() - 0.729).abs() < 1e-15);
        let m = RealExpr::Min(vec![
            tenth.clone(),
            RealExpr::FromInt(Box::new(IntExpr::Const(0))),
        ]);
        assert_eq!(m.eval_q(&[]), Ok(q(0, 1)));
        let m = RealExpr::Max(vec![
            tenth.clone(),
            RealExpr::FromInt(Box::new(IntExpr::Const(0))),
        ]);
        assert_eq!(m.eval_q(&[]), Ok(q(1, 10)));
        let inexact = RealExpr::Pow(
            Box::new(tenth.clone()),
            Box::new(RealExpr::Const(0.5, None)),
        );
        assert_eq!(inexact.eval_q(&[]), Err(EvalError::Inexact));
        let l = RealExpr::Log(
            Box::new(RealExpr::Const(8.0, None)),
            Box::new(RealExpr::Const(2.0, None)),
        );
        assert!((l.eval(&[]).unwrap() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn boolean_short_circuit_and_comparisons() {
        // (x = 0) | (1 / x > 0): the right operand would divide by zero but is not reached.
        let div = RealExpr::Div(
            Box::new(RealExpr::Const(1.0, None)),
            Box::new(RealExpr::FromInt(Box::new(IntExpr::Var(0)))),
        );
        let e = BoolExpr::Or(vec![
            BoolExpr::VarCmp(Cmp::Eq, 0, 0),
            BoolExpr::CmpR(Cmp::Gt, Box::new(div), Box::new(RealExpr::Const(0.0, None))),
        ]);
        assert_eq!(e.eval(&[0]), Ok(true));
        assert_eq!(e.eval(&[2]), Ok(true));
        assert_eq!(e.eval(&[-2]), Ok(false));
        let imp = BoolExpr::Implies(Box::new(BoolExpr::Var(1)), Box::new(BoolExpr::Const(false)));
        assert_eq!(imp.eval(&[0, 0]), Ok(true));
        assert_eq!(imp.eval(&[0, 1]), Ok(false));
    }

    #[test]
    fn rational_to_f64_handles_huge_values() {
        let big = BigRational::from_integer(BigInt::from(10).pow(400u32));
        let f = rational_to_f64(&(BigRational::one() / big.clone()));
        assert_eq!(f, 0.0);
        assert_eq!(rational_to_f64(&q(7, 10)), 0.7);
        let x = BigRational::new(
            BigInt::from(10).pow(400u32) + 1,
            BigInt::from(10).pow(400u32),
        );
        assert!((rational_to_f64(&x) - 1.0).abs() < 1e-15);
    }
}
