//! Exact evaluation of the operators applied to state formulas (`P=? [..] + P=? [..]`,
//! `min(..)`, comparisons) in exact mode: every operand a rational or a boolean, the result
//! the rational (or truth value) it denotes. Anything without an exact rational result
//! (`log`, `pow` with a non-integer exponent, a division by zero) gives `None`, and the
//! caller keeps the double result, printed as a double.

use augur_expr::{Expr, ExprError};

/// A value in exact evaluation: a rational or a truth value.
pub(crate) use augur_expr::Exact as Q;

/// `e` evaluated exactly with `env` for its identifiers ([`augur_expr::eval_exact`]: the same
/// rules and size budget as constants); the error says why it has no exact rational value.
pub(crate) fn eval(e: &Expr, env: &dyn Fn(&str) -> Option<Q>) -> Result<Q, ExprError> {
    augur_expr::eval_exact(e, env)
}

/// The message of exact mode for an expression without an exact value in state `s` (`None`:
/// a constant, the same in every state).
pub(crate) fn no_exact_value(err: &ExprError, state: Option<usize>) -> String {
    let at = state.map_or_else(String::new, |s| format!(" in state {s}"));
    format!(
        "exact mode: cannot compute this in rationals{at}: {err}; the default method \
         (--method auto) computes it in double precision"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_expr::{BinaryOp, Func};
    use augur_pctl::BigRational;

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
        assert_eq!(eval(&sum, &env), Ok(Q::Num(q(19, 140))));
        let lt = Expr::Binary(BinaryOp::Cmp(augur_expr::Cmp::Lt), hole(1), hole(0));
        assert_eq!(eval(&lt, &env), Ok(Q::Bool(true)));
        let min = Expr::Call(Func::Min, vec![*hole(0), *hole(1)]);
        assert_eq!(eval(&min, &env), Ok(Q::Num(q(1, 28))));
        // 0.1 + 0.2 is 3/10 exactly.
        let p = Expr::Binary(
            BinaryOp::Add,
            Box::new(Expr::Double(0.1)),
            Box::new(Expr::Double(0.2)),
        );
        assert_eq!(eval(&p, &env), Ok(Q::Num(q(3, 10))));
        let div0 = Expr::Binary(BinaryOp::Div, hole(0), Box::new(Expr::Int(0)));
        assert!(eval(&div0, &env).is_err());
        let log = Expr::Call(Func::Log, vec![*hole(0), Expr::Int(2)]);
        assert!(eval(&log, &env).is_err());
        let m = Expr::Call(Func::Mod, vec![Expr::Int(-7), Expr::Int(3)]);
        assert_eq!(eval(&m, &env), Ok(Q::Num(q(2, 1))));
    }
}
