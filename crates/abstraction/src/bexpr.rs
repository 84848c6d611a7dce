//! Boolean expressions over predicate bits, compiled from augur-expr expressions, with two- and
//! three-valued evaluation (the latter decides a constraint on a partial assignment).

use augur_expr::{BinaryOp, Cmp, Expr, UnaryOp, Value};

/// A boolean expression over the current (`Cur`) and next (`Next`) values of predicates.
#[derive(Clone, Debug, PartialEq)]
pub enum PredicateExpr {
    /// A constant.
    Const(bool),
    /// Predicate `i` in the current state.
    Cur(u8),
    /// Predicate `i` in the next state (`name'`).
    Next(u8),
    /// Negation.
    Not(Box<PredicateExpr>),
    /// Conjunction.
    And(Box<PredicateExpr>, Box<PredicateExpr>),
    /// Disjunction.
    Or(Box<PredicateExpr>, Box<PredicateExpr>),
    /// Equivalence (`<=>` and `=` on booleans).
    Iff(Box<PredicateExpr>, Box<PredicateExpr>),
    /// `c ? a : b`.
    Ite(Box<PredicateExpr>, Box<PredicateExpr>, Box<PredicateExpr>),
}

/// How an identifier resolves when compiling to [`PredicateExpr`].
pub(crate) enum PredicateRef {
    Cur(u8),
    Next(u8),
}

impl PredicateExpr {
    /// Compile a type-checked boolean expression whose identifiers all resolve with `resolve`.
    /// Sub-expressions without identifiers are evaluated (e.g. `1 < 2`). Returns a message
    /// on failure.
    pub(crate) fn compile(
        e: &Expr,
        resolve: &dyn Fn(&str) -> Option<PredicateRef>,
    ) -> Result<PredicateExpr, String> {
        if e.idents().is_empty() {
            return match e.eval(|_| None) {
                Ok(Value::Bool(b)) => Ok(PredicateExpr::Const(b)),
                Ok(v) => Err(format!("`{e}` is {}, not a boolean", v.ty())),
                Err(err) => Err(err.to_string()),
            };
        }
        let c = |x: &Expr| PredicateExpr::compile(x, resolve).map(Box::new);
        Ok(match e {
            Expr::Bool(b) => PredicateExpr::Const(*b),
            Expr::Ident(n) => match resolve(n) {
                Some(PredicateRef::Cur(i)) => PredicateExpr::Cur(i),
                Some(PredicateRef::Next(i)) => PredicateExpr::Next(i),
                None => return Err(format!("undeclared name `{n}`")),
            },
            Expr::Unary(UnaryOp::Not, a) => PredicateExpr::Not(c(a)?),
            Expr::Binary(op, l, r) => {
                let (l, r) = (c(l)?, c(r)?);
                match op {
                    BinaryOp::And => PredicateExpr::And(l, r),
                    BinaryOp::Or => PredicateExpr::Or(l, r),
                    BinaryOp::Implies => PredicateExpr::Or(Box::new(PredicateExpr::Not(l)), r),
                    BinaryOp::Iff | BinaryOp::Cmp(Cmp::Eq) => PredicateExpr::Iff(l, r),
                    BinaryOp::Cmp(Cmp::Ne) => {
                        PredicateExpr::Not(Box::new(PredicateExpr::Iff(l, r)))
                    }
                    _ => return Err(format!("`{e}` is not a boolean combination of predicates")),
                }
            }
            Expr::Ite(i, a, b) => PredicateExpr::Ite(c(i)?, c(a)?, c(b)?),
            _ => return Err(format!("`{e}` is not a boolean combination of predicates")),
        })
    }

    /// Evaluate with current bits `cur` and next bits `next`.
    pub fn eval(&self, cur: u64, next: u64) -> bool {
        match self {
            PredicateExpr::Const(b) => *b,
            PredicateExpr::Cur(i) => cur >> i & 1 == 1,
            PredicateExpr::Next(i) => next >> i & 1 == 1,
            PredicateExpr::Not(a) => !a.eval(cur, next),
            PredicateExpr::And(a, b) => a.eval(cur, next) && b.eval(cur, next),
            PredicateExpr::Or(a, b) => a.eval(cur, next) || b.eval(cur, next),
            PredicateExpr::Iff(a, b) => a.eval(cur, next) == b.eval(cur, next),
            PredicateExpr::Ite(c, a, b) => {
                if c.eval(cur, next) {
                    a.eval(cur, next)
                } else {
                    b.eval(cur, next)
                }
            }
        }
    }

    /// Three-valued evaluation over the current state only, where the bits in `known` are
    /// assigned (values in `cur`) and the others unknown: `Some(b)` when the value is decided
    /// whatever the unknown bits are (Kleene logic; sound, possibly `None` when decided).
    pub fn eval3(&self, cur: u64, known: u64) -> Option<bool> {
        match self {
            PredicateExpr::Const(b) => Some(*b),
            PredicateExpr::Cur(i) => (known >> i & 1 == 1).then_some(cur >> i & 1 == 1),
            PredicateExpr::Next(_) => None,
            PredicateExpr::Not(a) => a.eval3(cur, known).map(|b| !b),
            PredicateExpr::And(a, b) => match (a.eval3(cur, known), b.eval3(cur, known)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            PredicateExpr::Or(a, b) => match (a.eval3(cur, known), b.eval3(cur, known)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            PredicateExpr::Iff(a, b) => match (a.eval3(cur, known), b.eval3(cur, known)) {
                (Some(x), Some(y)) => Some(x == y),
                _ => None,
            },
            PredicateExpr::Ite(c, a, b) => match c.eval3(cur, known) {
                Some(true) => a.eval3(cur, known),
                Some(false) => b.eval3(cur, known),
                None => match (a.eval3(cur, known), b.eval3(cur, known)) {
                    (Some(x), Some(y)) if x == y => Some(x),
                    _ => None,
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cur(i: u8) -> Box<PredicateExpr> {
        Box::new(PredicateExpr::Cur(i))
    }

    #[test]
    fn three_valued_agrees_with_every_completion() {
        // (p0 & !p1) | (p2 <=> p0), ite(p1, p2, !p2)
        let exprs = [
            PredicateExpr::Or(
                Box::new(PredicateExpr::And(
                    cur(0),
                    Box::new(PredicateExpr::Not(cur(1))),
                )),
                Box::new(PredicateExpr::Iff(cur(2), cur(0))),
            ),
            PredicateExpr::Ite(cur(1), cur(2), Box::new(PredicateExpr::Not(cur(2)))),
        ];
        for e in &exprs {
            for known in 0u64..8 {
                for partial in 0u64..8 {
                    let partial = partial & known;
                    if let Some(v) = e.eval3(partial, known) {
                        // Every completion of the unknown bits gives v.
                        for fill in 0u64..8 {
                            let full = partial | (fill & !known & 7);
                            assert_eq!(e.eval(full, 0), v);
                        }
                    }
                    if known == 7 {
                        assert_eq!(e.eval3(partial, known), Some(e.eval(partial, 0)));
                    }
                }
            }
        }
    }
}
