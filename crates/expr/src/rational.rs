//! Exact rationals of numbers as they are written: a decimal literal (`0.1` is 1/10, `1e-30`
//! is 10⁻³⁰, `1/3` is 1/3) and the decimal a double prints as (`0.7` stored as the nearest
//! `f64` becomes 7/10). The PRISM builder and the property resolver both read numbers this
//! way in exact mode. [`eval_exact`] evaluates a whole expression in rationals, within the
//! size budget [`MAX_RATIONAL_BITS`].

use crate::ast::{BinaryOp, Cmp, Expr, Func, UnaryOp};
use crate::error::{ExprError, Result};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

/// The size budget of one exact rational: at most this many bits in its numerator and
/// denominator together (2¹⁶ = 65,536 bits, about 19,700 decimal digits; `pow(1/3, 5000)`
/// takes 7,926). A result past it is an [`ExprError::RationalTooLarge`], never a rounded
/// value. The budget keeps every operation fast: reducing a fraction costs a gcd, quadratic
/// in the size.
pub const MAX_RATIONAL_BITS: u64 = 1 << 16;

/// The bits of a rational's numerator and denominator together.
pub fn rational_bits(q: &BigRational) -> u64 {
    q.numer().bits() + q.denom().bits()
}

/// A value of exact evaluation: a rational or a truth value.
#[derive(Clone, Debug, PartialEq)]
pub enum Exact {
    /// A number (ints and reals alike).
    Num(BigRational),
    /// A truth value.
    Bool(bool),
}

/// `e` evaluated in exact rationals, `env` giving the identifiers' values (`None`: an
/// [`ExprError::Undeclared`]). Literals are the rationals they spell (`0.1` is 1/10, a
/// double literal the decimal it prints as); `+ - * /`, comparisons, `min`, `max`, `floor`,
/// `ceil`, `round`, `mod` and `pow` with an integer exponent are exact. Errors: `log` and
/// `pow` with a non-integer exponent ([`ExprError::NotRational`]), a division by zero, a
/// value past [`MAX_RATIONAL_BITS`] ([`ExprError::RationalTooLarge`], checked before a power
/// is computed), a number where a truth value is needed or the reverse.
///
/// ```
/// use augur_expr::{eval_exact, parse_expr, Exact};
/// let e = parse_expr("1/10 + 2/10 > 3/10").unwrap();
/// assert_eq!(eval_exact(&e, &|_| None), Ok(Exact::Bool(false)));
/// let tiny = parse_expr("pow(1/3, 5000)").unwrap();
/// let Ok(Exact::Num(q)) = eval_exact(&tiny, &|_| None) else { panic!() };
/// assert!(num_traits::Signed::is_positive(&q));
/// ```
pub fn eval_exact(e: &Expr, env: &dyn Fn(&str) -> Option<Exact>) -> Result<Exact> {
    let num = |x: &Expr| match eval_exact(x, env)? {
        Exact::Num(q) => Ok(q),
        Exact::Bool(_) => Err(mismatch(x, "expected a number, found a boolean")),
    };
    let boolean = |x: &Expr| match eval_exact(x, env)? {
        Exact::Bool(b) => Ok(b),
        Exact::Num(_) => Err(mismatch(x, "expected a boolean, found a number")),
    };
    let checked = |q: BigRational| {
        let bits = rational_bits(&q);
        if bits > MAX_RATIONAL_BITS {
            Err(ExprError::RationalTooLarge {
                expr: e.to_string(),
                bits,
            })
        } else {
            Ok(Exact::Num(q))
        }
    };
    match e {
        Expr::Int(i) => Ok(Exact::Num(BigRational::from_integer(BigInt::from(*i)))),
        Expr::Double(d) => decimal_rational(*d)
            .map(Exact::Num)
            .ok_or_else(|| ExprError::NotANumber(e.to_string())),
        Expr::Decimal(_, text) => literal_rational(text)
            .map(Exact::Num)
            .ok_or_else(|| ExprError::NotRational(e.to_string())),
        Expr::Bool(b) => Ok(Exact::Bool(*b)),
        Expr::Ident(name) => env(name).ok_or_else(|| ExprError::Undeclared(name.clone())),
        Expr::Unary(UnaryOp::Neg, a) => Ok(Exact::Num(-num(a)?)),
        Expr::Unary(UnaryOp::Not, a) => Ok(Exact::Bool(!boolean(a)?)),
        Expr::Binary(op, a, b) => match op {
            // Short-circuit as the double evaluation does.
            BinaryOp::And => Ok(Exact::Bool(boolean(a)? && boolean(b)?)),
            BinaryOp::Or => Ok(Exact::Bool(boolean(a)? || boolean(b)?)),
            BinaryOp::Implies => Ok(Exact::Bool(!boolean(a)? || boolean(b)?)),
            BinaryOp::Iff => Ok(Exact::Bool(boolean(a)? == boolean(b)?)),
            BinaryOp::Cmp(c) if c.is_equality() => {
                let eq = eval_exact(a, env)? == eval_exact(b, env)?;
                Ok(Exact::Bool(eq == (*c == Cmp::Eq)))
            }
            _ => {
                let (x, y) = (num(a)?, num(b)?);
                match op {
                    BinaryOp::Add => checked(x + y),
                    BinaryOp::Sub => checked(x - y),
                    BinaryOp::Mul => checked(x * y),
                    BinaryOp::Div if y.is_zero() => Err(ExprError::DivisionByZero(e.to_string())),
                    BinaryOp::Div => checked(x / y),
                    BinaryOp::Cmp(c) => Ok(Exact::Bool(c.holds(&x, &y))),
                    _ => unreachable!("connectives are matched above"),
                }
            }
        },
        Expr::Ite(c, a, b) => {
            if boolean(c)? {
                eval_exact(a, env)
            } else {
                eval_exact(b, env)
            }
        }
        Expr::Call(f, args) => {
            let xs = args.iter().map(num).collect::<Result<Vec<_>>>()?;
            let arity = |n: usize| {
                if xs.len() < n {
                    Err(ExprError::Arity {
                        func: f.name().to_string(),
                        expected: n.to_string(),
                        found: xs.len(),
                    })
                } else {
                    Ok(())
                }
            };
            match f {
                Func::Min | Func::Max => {
                    arity(1)?;
                    let it = xs.into_iter();
                    let best = if *f == Func::Min { it.min() } else { it.max() };
                    Ok(Exact::Num(best.unwrap_or_else(BigRational::zero)))
                }
                Func::Floor => {
                    arity(1)?;
                    Ok(Exact::Num(xs[0].floor()))
                }
                Func::Ceil => {
                    arity(1)?;
                    Ok(Exact::Num(xs[0].ceil()))
                }
                // PRISM's round: ⌊x + 1/2⌋.
                Func::Round => {
                    arity(1)?;
                    let half = BigRational::new(1.into(), 2.into());
                    Ok(Exact::Num((&xs[0] + half).floor()))
                }
                Func::Pow => {
                    arity(2)?;
                    let (x, k) = (&xs[0], &xs[1]);
                    if !k.is_integer() {
                        return Err(ExprError::NotRational(e.to_string()));
                    }
                    if x.is_zero() && k.is_negative() {
                        return Err(ExprError::DivisionByZero(e.to_string()));
                    }
                    // |x| ≤ 1 with an integer numerator and denominator of one bit each:
                    // 0, 1, -1 raised to any power stay that small.
                    let small = x.numer().bits() <= 1 && x.denom().bits() <= 1;
                    if small {
                        let even = (k.to_integer() % BigInt::from(2)).is_zero();
                        let v = if x.is_zero() {
                            BigRational::from_integer(BigInt::from(i32::from(k.is_zero())))
                        } else if x.is_negative() && !even {
                            -BigRational::from_integer(1.into())
                        } else {
                            BigRational::from_integer(1.into())
                        };
                        return Ok(Exact::Num(v));
                    }
                    // At least (bits - 1) per factor in numerator or denominator: refuse
                    // before computing a power past the budget.
                    let per = (x.numer().bits().max(1) - 1) + (x.denom().bits().max(1) - 1);
                    let k_abs = k.to_integer().abs().to_u64();
                    let too_large = match k_abs {
                        Some(k) => per.max(1).saturating_mul(k) > MAX_RATIONAL_BITS,
                        None => true,
                    };
                    if too_large {
                        return Err(ExprError::RationalTooLarge {
                            expr: e.to_string(),
                            bits: k_abs.map_or(u64::MAX, |k| per.max(1).saturating_mul(k)),
                        });
                    }
                    let k = k.to_integer().to_i64().unwrap_or(0);
                    let p = num_traits::pow::pow(x.clone(), k.unsigned_abs() as usize);
                    checked(if k < 0 { p.recip() } else { p })
                }
                Func::Mod => {
                    arity(2)?;
                    let (x, y) = (&xs[0], &xs[1]);
                    if !x.is_integer() || !y.is_integer() {
                        return Err(mismatch(e, "mod takes integers"));
                    }
                    if !y.is_positive() {
                        return Err(ExprError::ModuloByNonPositive(e.to_string()));
                    }
                    // PRISM's mod of integers: the non-negative remainder.
                    let (x, y) = (x.to_integer(), y.to_integer());
                    let r = ((x % &y) + &y) % &y;
                    Ok(Exact::Num(BigRational::from_integer(r)))
                }
                Func::Log => Err(ExprError::NotRational(e.to_string())),
            }
        }
    }
}

fn mismatch(e: &Expr, message: &str) -> ExprError {
    ExprError::TypeMismatch {
        expr: e.to_string(),
        message: message.to_string(),
    }
}

/// The exact rational a literal spells: a decimal (`0.333333333333333333333333`, `1e-30`,
/// `2.5E+3`, with an optional sign) or a fraction of two such (`1/3`). `None` when `text` is
/// neither, when a denominator is zero, or when an exponent is beyond ±10,000.
pub fn literal_rational(text: &str) -> Option<BigRational> {
    let t = text.trim();
    if let Some((a, b)) = t.split_once('/') {
        let (a, b) = (literal_rational(a)?, literal_rational(b)?);
        return (b != BigRational::from_integer(BigInt::from(0))).then(|| a / b);
    }
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (mantissa, exp) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || exp.abs() > 10_000
    {
        return None;
    }
    let numer: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = exp - i32::try_from(frac.len()).ok()?;
    let ten = BigRational::from_integer(BigInt::from(10));
    let q = BigRational::from_integer(numer) * num_traits::pow::Pow::pow(ten, scale);
    Some(if neg { -q } else { q })
}

/// The exact rational of the shortest decimal that reads back as `x` (Rust's round-trip
/// form: `0.7` is 7/10, `1e-7` is 1/10⁷); `None` for NaN and infinities.
pub fn decimal_rational(x: f64) -> Option<BigRational> {
    if !x.is_finite() {
        return None;
    }
    // `{x}` is the shortest round-trip representation, never in exponent form.
    let text = format!("{x}");
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.as_str()),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let numer: BigInt = format!("{int}{frac}").parse().ok()?;
    let denom = num_traits::pow(BigInt::from(10), frac.len());
    let q = BigRational::new(numer, denom);
    Some(if neg { -q } else { q })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    #[test]
    fn literals_are_the_rationals_they_spell() {
        assert_eq!(literal_rational("0.1"), Some(q(1, 10)));
        assert_eq!(literal_rational("-2.5E+3"), Some(q(-2500, 1)));
        assert_eq!(literal_rational("1/3"), Some(q(1, 3)));
        assert_eq!(literal_rational(" 3 "), Some(q(3, 1)));
        let tiny = literal_rational("1e-30").unwrap();
        assert_eq!(tiny * num_traits::pow(q(10, 1), 30), q(1, 1));
        for bad in ["", ".", "1/0", "x", "1e99999", "1.2.3"] {
            assert_eq!(literal_rational(bad), None, "{bad}");
        }
    }

    #[test]
    fn doubles_are_the_decimals_they_print_as() {
        assert_eq!(decimal_rational(0.7), Some(q(7, 10)));
        assert_eq!(decimal_rational(-1.25), Some(q(-5, 4)));
        assert_eq!(decimal_rational(1e-7), Some(q(1, 10_000_000)));
        assert_eq!(decimal_rational(3.0), Some(q(3, 1)));
        assert_eq!(decimal_rational(f64::NAN), None);
        assert_eq!(decimal_rational(f64::INFINITY), None);
    }

    fn exact(text: &str) -> Result<Exact> {
        eval_exact(&crate::parse_expr(text).unwrap(), &|_| None)
    }

    #[test]
    fn constant_arithmetic_is_exact() {
        // In doubles 0.1 + 0.2 > 0.3 holds; in rationals it does not.
        assert_eq!(exact("1/10 + 2/10 > 3/10"), Ok(Exact::Bool(false)));
        assert_eq!(exact("0.1 + 0.2 = 0.3"), Ok(Exact::Bool(true)));
        assert_eq!(exact("1/3 * 3"), Ok(Exact::Num(q(1, 1))));
        assert_eq!(exact("mod(-7, 3)"), Ok(Exact::Num(q(2, 1))));
        assert_eq!(exact("round(-5/2)"), Ok(Exact::Num(q(-2, 1))));
        assert_eq!(exact("pow(-1, 99999999999)"), Ok(Exact::Num(q(-1, 1))));
        assert_eq!(exact("pow(0, 0)"), Ok(Exact::Num(q(1, 1))));
        assert_eq!(exact("pow(2, -3)"), Ok(Exact::Num(q(1, 8))));
        // 3^5000 has ⌈5000·log2(3)⌉ = 7925 bits: the value is 1/3^5000 exactly.
        let Ok(Exact::Num(tiny)) = exact("pow(1/3, 5000)") else {
            panic!("pow(1/3, 5000) is exact");
        };
        assert!(tiny > BigRational::zero());
        assert_eq!(*tiny.numer(), BigInt::from(1));
        assert_eq!(*tiny.denom(), num_traits::pow(BigInt::from(3), 5000));
        assert_eq!(rational_bits(&tiny), 1 + 7925);
        assert!(matches!(exact("log(8, 2)"), Err(ExprError::NotRational(_))));
        assert!(matches!(
            exact("pow(2, 1/2)"),
            Err(ExprError::NotRational(_))
        ));
        assert!(matches!(
            exact("1/(1-1)"),
            Err(ExprError::DivisionByZero(_))
        ));
        assert!(matches!(
            exact("pow(0, -1)"),
            Err(ExprError::DivisionByZero(_))
        ));
        assert!(matches!(exact("x + 1"), Err(ExprError::Undeclared(_))));
    }

    #[test]
    fn rationals_past_the_budget_are_refused() {
        // 2^(2^16) needs 2^16 + 1 bits (and one for the denominator): past the budget.
        match exact("pow(2, 65536)") {
            Err(ExprError::RationalTooLarge { expr, bits }) => {
                assert_eq!(expr, "pow(2, 65536)");
                assert!(bits > MAX_RATIONAL_BITS);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            exact("pow(1/3, 10000000000)"),
            Err(ExprError::RationalTooLarge { .. })
        ));
        // A product past the budget is caught after the multiplication (3^25000: 39,625 bits).
        let big = "pow(3, 25000)";
        assert!(matches!(exact(big), Ok(Exact::Num(_))));
        assert!(matches!(
            exact(&format!("{big} * {big} * {big}")),
            Err(ExprError::RationalTooLarge { .. })
        ));
        // Just inside the budget: 2^(2^16 - 2) has 2^16 - 1 bits, its denominator 1.
        assert!(matches!(exact("pow(2, 65534)"), Ok(Exact::Num(_))));
    }
}
