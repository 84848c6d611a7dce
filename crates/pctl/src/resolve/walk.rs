//! Walks over the syntax tree (before resolution): rewriting its expressions, collecting its identifiers and labels, its spans.

use super::*;

impl StateFormula {
    /// Applies `f` to every expression of the formula (expression leaves, thresholds, step
    /// bounds, reward bounds, discount factors), rebuilding the formula; spans are kept.
    pub fn map_exprs(&self, f: &mut dyn FnMut(&Expr) -> Expr) -> StateFormula {
        use StateFormula as S;
        let bound = |b: &Spanned<Bound>, f: &mut dyn FnMut(&Expr) -> Expr| {
            b.map(|b| match b {
                Bound::Query => Bound::Query,
                Bound::Compare(c, e) => Bound::Compare(*c, e.map(|e| f(e))),
            })
        };
        match self {
            S::Expr(e) => S::Expr(e.map(|e| f(e))),
            S::Label(l) => S::Label(l.clone()),
            S::Not(a) => S::Not(Box::new(a.map_exprs(f))),
            S::And(l, r) => S::And(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Or(l, r) => S::Or(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Implies(l, r) => S::Implies(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Iff(l, r) => S::Iff(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Prob {
                opt,
                bound: b,
                path,
            } => S::Prob {
                opt: *opt,
                bound: bound(b, f),
                path: Box::new(path.map_exprs(f)),
            },
            S::Reward {
                structure,
                opt,
                bound: b,
                path,
            } => S::Reward {
                structure: structure.clone(),
                opt: *opt,
                bound: bound(b, f),
                path: Box::new(match &**path {
                    RewardPath::Reachability(a) => RewardPath::Reachability(a.map_exprs(f)),
                    RewardPath::Cumulative { bound, discount } => RewardPath::Cumulative {
                        bound: bound.as_ref().map(|e| e.map(|e| f(e))),
                        discount: discount.as_ref().map(|e| e.map(|e| f(e))),
                    },
                    RewardPath::Instantaneous(k) => RewardPath::Instantaneous(k.map(|e| f(e))),
                    RewardPath::LongRun => RewardPath::LongRun,
                    RewardPath::Ltl(l) => RewardPath::Ltl(l.map_exprs(f)),
                }),
            },
            S::Steady { bound: b, formula } => S::Steady {
                bound: bound(b, f),
                formula: Box::new(formula.map_exprs(f)),
            },
            S::Time { bound: b, target } => S::Time {
                bound: bound(b, f),
                target: Box::new(target.map_exprs(f)),
            },
            S::Filter {
                op,
                property,
                states,
            } => S::Filter {
                op: *op,
                property: Box::new(property.map_exprs(f)),
                states: Box::new(states.map_exprs(f)),
            },
            S::Apply { op, args } => S::Apply {
                op: *op,
                args: args.iter().map(|a| a.map_exprs(f)).collect(),
            },
        }
    }

    /// Replaces identifiers in every expression of the formula (see [`Expr::substitute`]).
    pub fn substitute(&self, f: impl Fn(&str) -> Option<Expr>) -> StateFormula {
        self.map_exprs(&mut |e| e.substitute(&f))
    }

    /// The identifiers (variables, constants) named anywhere in the formula, bounds included.
    pub fn idents(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.map_exprs(&mut |e| {
            out.extend(e.idents());
            e.clone()
        });
        out
    }

    /// The labels (`"name"`) used in the formula.
    pub fn labels(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_labels(&mut out);
        out
    }

    pub(super) fn collect_labels(&self, out: &mut BTreeSet<String>) {
        use StateFormula as S;
        match self {
            S::Expr(_) => {}
            S::Label(l) => {
                out.insert(l.node.clone());
            }
            S::Not(a) => a.collect_labels(out),
            S::And(l, r) | S::Or(l, r) | S::Implies(l, r) | S::Iff(l, r) => {
                l.collect_labels(out);
                r.collect_labels(out);
            }
            S::Prob { path, .. } => match &**path {
                PathFormula::Next(a)
                | PathFormula::Eventually(a, _)
                | PathFormula::Globally(a, _) => a.collect_labels(out),
                PathFormula::Until(a, b, _)
                | PathFormula::WeakUntil(a, b, _)
                | PathFormula::Release(a, b, _) => {
                    a.collect_labels(out);
                    b.collect_labels(out);
                }
                PathFormula::Ltl(l) => l.collect_labels(out),
            },
            S::Reward { path, .. } => match &**path {
                RewardPath::Reachability(a) => a.collect_labels(out),
                RewardPath::Ltl(l) => l.collect_labels(out),
                _ => {}
            },
            S::Steady { formula, .. } => formula.collect_labels(out),
            S::Time { target, .. } => target.collect_labels(out),
            S::Filter {
                property, states, ..
            } => {
                property.collect_labels(out);
                states.collect_labels(out);
            }
            S::Apply { args, .. } => {
                for a in args {
                    a.collect_labels(out);
                }
            }
        }
    }

    /// The byte span of the formula's text, as far as the parser recorded it: expressions and
    /// labels exactly, operators from their keyword to their bound (`P>=0.5`), filters up to
    /// their operator, connectives from their first to their last recorded part.
    pub fn span(&self) -> Span {
        use StateFormula as S;
        match self {
            S::Expr(e) => e.span,
            S::Label(l) => l.span,
            S::Not(a) => a.span(),
            S::And(l, r) | S::Or(l, r) | S::Implies(l, r) | S::Iff(l, r) => {
                join(l.span(), r.span())
            }
            S::Prob { bound, .. }
            | S::Reward { bound, .. }
            | S::Steady { bound, .. }
            | S::Time { bound, .. } => bound.span,
            S::Filter { op, .. } => op.span,
            S::Apply { op, .. } => op.span,
        }
    }
}

/// The join of two spans, ignoring empty (unrecorded) ones.
pub(super) fn join(a: Span, b: Span) -> Span {
    match (a == Span::default(), b == Span::default()) {
        (true, _) => b,
        (_, true) => a,
        _ => a.join(b),
    }
}

/// Applies `f` to the expressions of a step bound.
pub(super) fn map_step_bound(
    b: &Spanned<StepBound>,
    f: &mut dyn FnMut(&Expr) -> Expr,
) -> Spanned<StepBound> {
    let mut g = |e: &Spanned<Expr>| e.map(|e| f(e));
    b.map(|b| match b {
        StepBound::Unbounded => StepBound::Unbounded,
        StepBound::Lt(e) => StepBound::Lt(g(e)),
        StepBound::Le(e) => StepBound::Le(g(e)),
        StepBound::Gt(e) => StepBound::Gt(g(e)),
        StepBound::Ge(e) => StepBound::Ge(g(e)),
        StepBound::Eq(e) => StepBound::Eq(g(e)),
        StepBound::Interval(a, b) => StepBound::Interval(g(a), g(b)),
    })
}

impl LtlPath {
    /// Applies `f` to every expression of the formula (see [`StateFormula::map_exprs`]).
    pub fn map_exprs(&self, f: &mut dyn FnMut(&Expr) -> Expr) -> LtlPath {
        use LtlPath as L;
        let m = |a: &LtlPath, f: &mut dyn FnMut(&Expr) -> Expr| Box::new(a.map_exprs(f));
        match self {
            L::State(s) => L::State(s.map_exprs(f)),
            L::Not(a) => L::Not(m(a, f)),
            L::And(a, b) => L::And(m(a, f), m(b, f)),
            L::Or(a, b) => L::Or(m(a, f), m(b, f)),
            L::Implies(a, b) => L::Implies(m(a, f), m(b, f)),
            L::Iff(a, b) => L::Iff(m(a, f), m(b, f)),
            L::Next(a) => L::Next(m(a, f)),
            L::Eventually(a, k) => {
                let k = map_step_bound(k, f);
                L::Eventually(m(a, f), k)
            }
            L::Globally(a, k) => {
                let k = map_step_bound(k, f);
                L::Globally(m(a, f), k)
            }
            L::Until(a, b, k) => {
                let k = map_step_bound(k, f);
                L::Until(m(a, f), m(b, f), k)
            }
            L::WeakUntil(a, b, k) => {
                let k = map_step_bound(k, f);
                L::WeakUntil(m(a, f), m(b, f), k)
            }
            L::Release(a, b, k) => {
                let k = map_step_bound(k, f);
                L::Release(m(a, f), m(b, f), k)
            }
        }
    }

    pub(super) fn collect_labels(&self, out: &mut BTreeSet<String>) {
        use LtlPath as L;
        match self {
            L::State(s) => s.collect_labels(out),
            L::Not(a) | L::Next(a) | L::Eventually(a, _) | L::Globally(a, _) => {
                a.collect_labels(out)
            }
            L::And(a, b)
            | L::Or(a, b)
            | L::Implies(a, b)
            | L::Iff(a, b)
            | L::Until(a, b, _)
            | L::WeakUntil(a, b, _)
            | L::Release(a, b, _) => {
                a.collect_labels(out);
                b.collect_labels(out);
            }
        }
    }
}

impl PathFormula {
    /// Applies `f` to every expression of the path formula (see [`StateFormula::map_exprs`]).
    pub fn map_exprs(&self, f: &mut dyn FnMut(&Expr) -> Expr) -> PathFormula {
        let sb = map_step_bound;
        match self {
            PathFormula::Ltl(l) => PathFormula::Ltl(Box::new(l.map_exprs(f))),
            PathFormula::Next(a) => PathFormula::Next(a.map_exprs(f)),
            PathFormula::Eventually(a, k) => {
                let k = sb(k, f);
                PathFormula::Eventually(a.map_exprs(f), k)
            }
            PathFormula::Globally(a, k) => {
                let k = sb(k, f);
                PathFormula::Globally(a.map_exprs(f), k)
            }
            PathFormula::Until(a, c, k) => {
                let k = sb(k, f);
                PathFormula::Until(a.map_exprs(f), c.map_exprs(f), k)
            }
            PathFormula::WeakUntil(a, c, k) => {
                let k = sb(k, f);
                PathFormula::WeakUntil(a.map_exprs(f), c.map_exprs(f), k)
            }
            PathFormula::Release(a, c, k) => {
                let k = sb(k, f);
                PathFormula::Release(a.map_exprs(f), c.map_exprs(f), k)
            }
        }
    }
}
