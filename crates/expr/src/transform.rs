//! Structural utilities: substitution, free identifiers, constant folding.

use crate::ast::{BinaryOp, Expr, UnaryOp, Value};
use std::collections::BTreeSet;

impl From<Value> for Expr {
    fn from(v: Value) -> Self {
        match v {
            Value::Int(i) => Expr::Int(i),
            Value::Double(d) => Expr::Double(d),
            Value::Bool(b) => Expr::Bool(b),
        }
    }
}

impl Expr {
    /// Replaces every identifier `n` for which `f(n)` is `Some(e)` by `e` (in one pass: the
    /// replacements are not themselves substituted). Used for constants, formulas and module
    /// renaming.
    ///
    /// ```
    /// use augur_expr::{parse_expr, Expr};
    /// let e = parse_expr("x + N").unwrap();
    /// let s = e.substitute(|n| (n == "N").then(|| Expr::Int(3)));
    /// assert_eq!(s.to_string(), "x+3");
    /// ```
    pub fn substitute(&self, f: impl Fn(&str) -> Option<Expr>) -> Expr {
        self.substitute_dyn(&f)
    }

    fn substitute_dyn(&self, f: &dyn Fn(&str) -> Option<Expr>) -> Expr {
        match self {
            Expr::Ident(n) => f(n).unwrap_or_else(|| self.clone()),
            Expr::Int(_) | Expr::Double(_) | Expr::Decimal(..) | Expr::Bool(_) => self.clone(),
            Expr::Unary(op, a) => Expr::Unary(*op, Box::new(a.substitute_dyn(f))),
            Expr::Binary(op, l, r) => Expr::Binary(
                *op,
                Box::new(l.substitute_dyn(f)),
                Box::new(r.substitute_dyn(f)),
            ),
            Expr::Ite(c, a, b) => Expr::Ite(
                Box::new(c.substitute_dyn(f)),
                Box::new(a.substitute_dyn(f)),
                Box::new(b.substitute_dyn(f)),
            ),
            Expr::Call(func, args) => {
                Expr::Call(*func, args.iter().map(|a| a.substitute_dyn(f)).collect())
            }
        }
    }

    /// The identifiers occurring in the expression (variables, constants, formula names).
    pub fn idents(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_idents(&mut out);
        out
    }

    fn collect_idents(&self, out: &mut BTreeSet<String>) {
        match self {
            Expr::Ident(n) => {
                out.insert(n.clone());
            }
            Expr::Int(_) | Expr::Double(_) | Expr::Decimal(..) | Expr::Bool(_) => {}
            Expr::Unary(_, a) => a.collect_idents(out),
            Expr::Binary(_, l, r) => {
                l.collect_idents(out);
                r.collect_idents(out);
            }
            Expr::Ite(c, a, b) => {
                c.collect_idents(out);
                a.collect_idents(out);
                b.collect_idents(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.collect_idents(out)),
        }
    }

    /// Whether the expression names no identifier.
    pub fn is_closed(&self) -> bool {
        match self {
            Expr::Ident(_) => false,
            Expr::Int(_) | Expr::Double(_) | Expr::Decimal(..) | Expr::Bool(_) => true,
            Expr::Unary(_, a) => a.is_closed(),
            Expr::Binary(_, l, r) => l.is_closed() && r.is_closed(),
            Expr::Ite(c, a, b) => c.is_closed() && a.is_closed() && b.is_closed(),
            Expr::Call(_, args) => args.iter().all(Expr::is_closed),
        }
    }

    /// Constant folding: every subexpression without identifiers whose evaluation succeeds
    /// (with a finite result) is replaced by its value; `c ? a : b` with a constant condition
    /// is replaced by the chosen branch, and `&`, `|`, `=>` with a constant boolean left operand
    /// that decides the result are folded (as evaluation short-circuits). Subexpressions whose
    /// evaluation fails (division by zero, type errors) are kept, so evaluating the result
    /// reports the same error as evaluating the original.
    ///
    /// ```
    /// use augur_expr::parse_expr;
    /// let e = parse_expr("x + 2*3 - (true ? 1 : 2)").unwrap();
    /// assert_eq!(e.simplify().to_string(), "x+6-1");
    /// ```
    pub fn simplify(&self) -> Expr {
        let folded = match self {
            Expr::Ident(_) | Expr::Int(_) | Expr::Double(_) | Expr::Decimal(..) | Expr::Bool(_) => {
                return self.clone()
            }
            Expr::Unary(op, a) => Expr::Unary(*op, Box::new(a.simplify())),
            Expr::Binary(op, l, r) => {
                let l = l.simplify();
                if let (BinaryOp::And | BinaryOp::Or | BinaryOp::Implies, Expr::Bool(b)) = (op, &l)
                {
                    let decided = match op {
                        BinaryOp::And => !*b,
                        BinaryOp::Or => *b,
                        _ => !*b,
                    };
                    if decided {
                        return Expr::Bool(*op != BinaryOp::And);
                    }
                }
                Expr::Binary(*op, Box::new(l), Box::new(r.simplify()))
            }
            Expr::Ite(c, a, b) => {
                let c = c.simplify();
                match c {
                    Expr::Bool(true) => return a.simplify(),
                    Expr::Bool(false) => return b.simplify(),
                    c => Expr::Ite(Box::new(c), Box::new(a.simplify()), Box::new(b.simplify())),
                }
            }
            Expr::Call(f, args) => Expr::Call(*f, args.iter().map(Expr::simplify).collect()),
        };
        if folded.is_closed() {
            match folded.eval_dyn(&|_| None) {
                Ok(Value::Double(d)) if !d.is_finite() => folded,
                Ok(v) => Expr::from(v),
                Err(_) => folded,
            }
        } else {
            folded
        }
    }

    /// `!e`, folding a literal and removing a double negation.
    pub fn negated(self) -> Expr {
        match self {
            Expr::Bool(b) => Expr::Bool(!b),
            Expr::Unary(UnaryOp::Not, a) => *a,
            e => Expr::Unary(UnaryOp::Not, Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse_expr;

    #[test]
    fn idents_and_substitute() {
        let e = parse_expr("x + y*min(z, x) > N ? a : b").unwrap();
        let ids: Vec<String> = e.idents().into_iter().collect();
        assert_eq!(ids, ["N", "a", "b", "x", "y", "z"]);
        let s = e.substitute(|n| {
            if n == "x" {
                Some(parse_expr("x1+1").unwrap())
            } else {
                None
            }
        });
        assert_eq!(s.to_string(), "x1+1+y*min(z, x1+1)>N ? a : b");
    }

    #[test]
    fn simplify_keeps_errors_and_folds_constants() {
        assert_eq!(
            parse_expr("1/0 + x").unwrap().simplify().to_string(),
            "1/0+x"
        );
        assert_eq!(
            parse_expr("pow(2, 10) * y").unwrap().simplify().to_string(),
            "1024*y"
        );
        assert_eq!(
            parse_expr("false & 1/0 > 1")
                .unwrap()
                .simplify()
                .to_string(),
            "false"
        );
        assert_eq!(
            parse_expr("x | 1 < 2").unwrap().simplify().to_string(),
            "x | true"
        );
        assert_eq!(
            parse_expr("3 > 2 ? x : y").unwrap().simplify().to_string(),
            "x"
        );
        assert_eq!(parse_expr("-(2)").unwrap().simplify(), crate::Expr::Int(-2));
    }
}
