//! Boolean expressions over predicate bits, compiled from augur-expr expressions, with two- and
//! three-valued evaluation (the latter decides a constraint on a partial assignment).

use augur_expr::{BinaryOp, Expr, UnaryOp, Value};

/// A boolean expression over the current (`Cur`) and next (`Next`) values of predicates.
#[derive(Clone, Debug, PartialEq)]
pub enum BExpr {
    /// A constant.
    Const(bool),
    /// Predicate `i` in the current state.
    Cur(u8),
    /// Predicate `i` in the next state (`name'`).
    Next(u8),
    /// Negation.
    Not(Box<BExpr>),
    /// Conjunction.
    And(Box<BExpr>, Box<BExpr>),
    /// Disjunction.
    Or(Box<BExpr>, Box<BExpr>),
    /// Equivalence (`<=>` and `=` on booleans).
    Iff(Box<BExpr>, Box<BExpr>),
    /// `c ? a : b`.
    Ite(Box<BExpr>, Box<BExpr>, Box<BExpr>),
}

/// How an identifier resolves when compiling to [`BExpr`].
pub(crate) enum BRef {
    Cur(u8),
    Next(u8),
}

impl BExpr {
    /// Compile a type-checked boolean expression whose identifiers all resolve with `resolve`.
    /// Sub-expressions without identifiers are evaluated (e.g. `1 < 2`). Returns a message
    /// on failure.
    pub(crate) fn compile(
        e: &Expr,
        resolve: &dyn Fn(&str) -> Option<BRef>,
    ) -> Result<BExpr, String> {
        if e.idents().is_empty() {
            return match e.eval(|_| None) {
                Ok(Value::Bool(b)) => Ok(BExpr::Const(b)),
                Ok(v) => Err(format!("`{e}` is {}, not a boolean", v.ty())),
                Err(err) => Err(err.to_string()),
            };
        }
        let c = |x: &Expr| BExpr::compile(x, resolve).map(Box::new);
        Ok(match e {
            Expr::Bool(b) => BExpr::Const(*b),
            Expr::Ident(n) => match resolve(n) {
                Some(BRef::Cur(i)) => BExpr::Cur(i),
                Some(BRef::Next(i)) => BExpr::Next(i),
                None => return Err(format!("undeclared name `{n}`")),
            },
            Expr::Unary(UnaryOp::Not, a) => BExpr::Not(c(a)?),
            Expr::Binary(op, l, r) => {
                let (l, r) = (c(l)?, c(r)?);
                match op {
                    BinaryOp::And => BExpr::And(l, r),
                    BinaryOp::Or => BExpr::Or(l, r),
                    BinaryOp::Implies => BExpr::Or(Box::new(BExpr::Not(l)), r),
                    BinaryOp::Iff | BinaryOp::Eq => BExpr::Iff(l, r),
                    BinaryOp::Ne => BExpr::Not(Box::new(BExpr::Iff(l, r))),
                    _ => return Err(format!("`{e}` is not a boolean combination of predicates")),
                }
            }
            Expr::Ite(i, a, b) => BExpr::Ite(c(i)?, c(a)?, c(b)?),
            _ => return Err(format!("`{e}` is not a boolean combination of predicates")),
        })
    }

    /// Evaluate with current bits `cur` and next bits `next`.
    pub fn eval(&self, cur: u64, next: u64) -> bool {
        match self {
            BExpr::Const(b) => *b,
            BExpr::Cur(i) => cur >> i & 1 == 1,
            BExpr::Next(i) => next >> i & 1 == 1,
            BExpr::Not(a) => !a.eval(cur, next),
            BExpr::And(a, b) => a.eval(cur, next) && b.eval(cur, next),
            BExpr::Or(a, b) => a.eval(cur, next) || b.eval(cur, next),
            BExpr::Iff(a, b) => a.eval(cur, next) == b.eval(cur, next),
            BExpr::Ite(c, a, b) => {
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
            BExpr::Const(b) => Some(*b),
            BExpr::Cur(i) => (known >> i & 1 == 1).then_some(cur >> i & 1 == 1),
            BExpr::Next(_) => None,
            BExpr::Not(a) => a.eval3(cur, known).map(|b| !b),
            BExpr::And(a, b) => match (a.eval3(cur, known), b.eval3(cur, known)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            BExpr::Or(a, b) => match (a.eval3(cur, known), b.eval3(cur, known)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            BExpr::Iff(a, b) => match (a.eval3(cur, known), b.eval3(cur, known)) {
                (Some(x), Some(y)) => Some(x == y),
                _ => None,
            },
            BExpr::Ite(c, a, b) => match c.eval3(cur, known) {
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

    fn cur(i: u8) -> Box<BExpr> {
        Box::new(BExpr::Cur(i))
    }

    #[test]
    fn three_valued_agrees_with_every_completion() {
        // (p0 & !p1) | (p2 <=> p0), ite(p1, p2, !p2)
        let exprs = [
            BExpr::Or(
                Box::new(BExpr::And(cur(0), Box::new(BExpr::Not(cur(1))))),
                Box::new(BExpr::Iff(cur(2), cur(0))),
            ),
            BExpr::Ite(cur(1), cur(2), Box::new(BExpr::Not(cur(2)))),
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
