//! Exact evaluation of the operators applied to state formulas (`P=? [..] + P=? [..]`,
//! `min(..)`, comparisons) in exact mode: every operand a rational or a boolean, the result
//! the rational (or truth value) it denotes. Anything without an exact rational result
//! (`log`, `pow` with a non-integer exponent, a division by zero) gives `None`, and the
//! caller keeps the double result, printed as a double.

use augur_expr::{BinaryOp, Expr, Func, UnaryOp};
use augur_pctl::BigRational;
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

/// A value in exact evaluation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Q {
    /// A rational number.
    Num(BigRational),
    /// A truth value.
    Bool(bool),
}

/// `e` evaluated exactly with `env` for its identifiers; `None` when it has no exact rational
/// value.
pub(crate) fn eval(e: &Expr, env: &dyn Fn(&str) -> Option<Q>) -> Option<Q> {
    let num = |e: &Expr| match eval(e, env)? {
        Q::Num(q) => Some(q),
        Q::Bool(_) => None,
    };
    let boolean = |e: &Expr| match eval(e, env)? {
        Q::Bool(b) => Some(b),
        Q::Num(_) => None,
    };
    Some(match e {
        Expr::Int(i) => Q::Num(BigRational::from_integer(BigInt::from(*i))),
        Expr::Double(d) => Q::Num(augur_expr::decimal_rational(*d)?),
        Expr::Decimal(_, text) => Q::Num(augur_expr::literal_rational(text)?),
        Expr::Bool(b) => Q::Bool(*b),
        Expr::Ident(name) => env(name)?,
        Expr::Unary(UnaryOp::Neg, a) => Q::Num(-num(a)?),
        Expr::Unary(UnaryOp::Not, a) => Q::Bool(!boolean(a)?),
        Expr::Binary(op, a, b) => match op {
            BinaryOp::And => Q::Bool(boolean(a)? & boolean(b)?),
            BinaryOp::Or => Q::Bool(boolean(a)? | boolean(b)?),
            BinaryOp::Implies => Q::Bool(!boolean(a)? | boolean(b)?),
            BinaryOp::Iff => Q::Bool(boolean(a)? == boolean(b)?),
            BinaryOp::Eq | BinaryOp::Ne => {
                let eq = eval(a, env)? == eval(b, env)?;
                Q::Bool(if *op == BinaryOp::Eq { eq } else { !eq })
            }
            _ => {
                let (x, y) = (num(a)?, num(b)?);
                match op {
                    BinaryOp::Add => Q::Num(x + y),
                    BinaryOp::Sub => Q::Num(x - y),
                    BinaryOp::Mul => Q::Num(x * y),
                    BinaryOp::Div if !y.is_zero() => Q::Num(x / y),
                    BinaryOp::Lt => Q::Bool(x < y),
                    BinaryOp::Le => Q::Bool(x <= y),
                    BinaryOp::Gt => Q::Bool(x > y),
                    BinaryOp::Ge => Q::Bool(x >= y),
                    _ => return None,
                }
            }
        },
        Expr::Ite(c, a, b) => {
            if boolean(c)? {
                eval(a, env)?
            } else {
                eval(b, env)?
            }
        }
        Expr::Call(f, args) => {
            let xs = args.iter().map(num).collect::<Option<Vec<_>>>()?;
            match f {
                Func::Min => Q::Num(xs.into_iter().min()?),
                Func::Max => Q::Num(xs.into_iter().max()?),
                Func::Floor => Q::Num(xs.first()?.floor()),
                Func::Ceil => Q::Num(xs.first()?.ceil()),
                // PRISM's round: ⌊x + 1/2⌋.
                Func::Round => {
                    let half = BigRational::new(1.into(), 2.into());
                    Q::Num((xs.first()? + half).floor())
                }
                Func::Pow => {
                    let (x, k) = (xs.first()?, xs.get(1)?);
                    if !k.is_integer() {
                        return None;
                    }
                    let k = k.to_integer().to_i32().filter(|k| k.abs() <= 4096)?;
                    if x.is_zero() && k < 0 {
                        return None;
                    }
                    Q::Num(num_traits::pow::Pow::pow(x.clone(), k))
                }
                Func::Mod => {
                    let (x, y) = (xs.first()?, xs.get(1)?);
                    if !x.is_integer() || !y.is_integer() || !y.is_positive() {
                        return None;
                    }
                    // PRISM's mod of integers: the non-negative remainder.
                    let (x, y) = (x.to_integer(), y.to_integer());
                    let r = ((x % &y) + &y) % &y;
                    Q::Num(BigRational::from_integer(r))
                }
                Func::Log => return None,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn operators_over_rationals() {
        let env = |name: &str| match name {
            "#0" => Some(Q::Num(q(1, 10))),
            "#1" => Some(Q::Num(q(1, 28))),
            _ => None,
        };
        let hole = |i: usize| Box::new(Expr::Ident(format!("#{i}")));
        let sum = Expr::Binary(BinaryOp::Add, hole(0), hole(1));
        assert_eq!(eval(&sum, &env), Some(Q::Num(q(19, 140))));
        let lt = Expr::Binary(BinaryOp::Lt, hole(1), hole(0));
        assert_eq!(eval(&lt, &env), Some(Q::Bool(true)));
        let min = Expr::Call(Func::Min, vec![*hole(0), *hole(1)]);
        assert_eq!(eval(&min, &env), Some(Q::Num(q(1, 28))));
        // 0.1 + 0.2 is 3/10 exactly.
        let p = Expr::Binary(
            BinaryOp::Add,
            Box::new(Expr::Double(0.1)),
            Box::new(Expr::Double(0.2)),
        );
        assert_eq!(eval(&p, &env), Some(Q::Num(q(3, 10))));
        let div0 = Expr::Binary(BinaryOp::Div, hole(0), Box::new(Expr::Int(0)));
        assert_eq!(eval(&div0, &env), None);
        let log = Expr::Call(Func::Log, vec![*hole(0), Expr::Int(2)]);
        assert_eq!(eval(&log, &env), None);
        let m = Expr::Call(Func::Mod, vec![Expr::Int(-7), Expr::Int(3)]);
        assert_eq!(eval(&m, &env), Some(Q::Num(q(2, 1))));
    }
}
