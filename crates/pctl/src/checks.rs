//! Range checks on bounds, shared by the parser (constant-free bounds, located errors) and
//! [`StateFormula::instantiate`] (after constants are known).

use crate::ast::*;
use crate::error::{PctlError, Result};
use augur_expr::{Expr, Value};
use std::collections::BTreeSet;

/// What a `P`/`S` or `R`/`T` threshold measures.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BoundKind {
    /// A probability: in `[0, 1]`.
    Probability,
    /// An expected reward or time: non-negative.
    Reward,
}

/// Checks the value of a threshold.
pub(crate) fn threshold(kind: BoundKind, v: Value) -> Result<(), String> {
    let Some(x) = v.as_f64() else {
        return Err(format!("the bound must be a number, found {v}"));
    };
    match kind {
        BoundKind::Probability if !(0.0..=1.0).contains(&x) => {
            Err(format!("probability bound {v} is outside [0, 1]"))
        }
        BoundKind::Reward if x < 0.0 => Err(format!("reward bound {v} is negative")),
        _ => Ok(()),
    }
}

/// Checks a step count (`F<=k`, `C<=k`, `I=k`, interval ends): a non-negative int.
pub(crate) fn step_count(v: Value, what: &str) -> Result<i64, String> {
    match v {
        Value::Int(k) if k < 0 => Err(format!("{what} {k} is negative")),
        Value::Int(k) => Ok(k),
        v => Err(format!("{what} must be an integer, found {v}")),
    }
}

/// Checks a discount factor: a number in `[0, 1]`.
pub(crate) fn discount(v: Value) -> Result<(), String> {
    match v.as_f64() {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(()),
        _ => Err(format!("discount factor {v} is not in [0, 1]")),
    }
}

/// The message for `<0`.
pub(crate) const EMPTY_LT: &str = "step bound `<0` admits no step (use `<=0` or a larger bound)";

/// The message for `[a,b]` with `a > b`.
pub(crate) fn empty_interval(a: i64, b: i64) -> String {
    format!("step interval [{a},{b}] is empty")
}

impl StateFormula {
    /// Applies `f` to every expression of the formula (expression leaves, thresholds, step
    /// bounds, reward bounds, discount factors), rebuilding the formula.
    pub fn map_exprs(&self, f: &mut dyn FnMut(&Expr) -> Expr) -> StateFormula {
        use StateFormula as S;
        let bound = |b: &Bound, f: &mut dyn FnMut(&Expr) -> Expr| match b {
            Bound::Query => Bound::Query,
            Bound::Compare(c, e) => Bound::Compare(*c, f(e)),
        };
        match self {
            S::Expr(e) => S::Expr(f(e)),
            S::Label(l) => S::Label(l.clone()),
            S::Not(a) => S::Not(Box::new(a.map_exprs(f))),
            S::And(l, r) => S::And(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Or(l, r) => S::Or(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Implies(l, r) => S::Implies(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Iff(l, r) => S::Iff(Box::new(l.map_exprs(f)), Box::new(r.map_exprs(f))),
            S::Prob { bound: b, path } => S::Prob {
                bound: bound(b, f),
                path: Box::new(path.map_exprs(f)),
            },
            S::Reward {
                structure,
                bound: b,
                path,
            } => S::Reward {
                structure: structure.clone(),
                bound: bound(b, f),
                path: Box::new(match &**path {
                    RewardPath::Reachability(a) => RewardPath::Reachability(a.map_exprs(f)),
                    RewardPath::Cumulative { bound, discount } => RewardPath::Cumulative {
                        bound: bound.as_ref().map(&mut *f),
                        discount: discount.as_ref().map(&mut *f),
                    },
                    RewardPath::Instantaneous(k) => RewardPath::Instantaneous(f(k)),
                    RewardPath::LongRun => RewardPath::LongRun,
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

    fn collect_labels(&self, out: &mut BTreeSet<String>) {
        use StateFormula as S;
        match self {
            S::Expr(_) => {}
            S::Label(l) => {
                out.insert(l.clone());
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
            },
            S::Reward { path, .. } => {
                if let RewardPath::Reachability(a) = &**path {
                    a.collect_labels(out);
                }
            }
            S::Steady { formula, .. } => formula.collect_labels(out),
            S::Time { target, .. } => target.collect_labels(out),
            S::Filter {
                property, states, ..
            } => {
                property.collect_labels(out);
                states.collect_labels(out);
            }
        }
    }

    /// Substitutes constant values, folds constant subexpressions ([`Expr::simplify`]) and
    /// re-runs the parse-time range checks on the bounds that have become constant:
    /// probability thresholds in `[0, 1]`, reward thresholds non-negative, step bounds
    /// non-negative integers and non-empty, discount factors in `[0, 1]`. Call it once the
    /// constants of the model, the properties file and `--const` are known.
    ///
    /// ```
    /// use augur_expr::Value;
    /// let p = augur_pctl::parse_property("P>=p [ F<=k \"goal\" ]").unwrap();
    /// let ok = p.formula.instantiate(&[("p".into(), Value::Double(0.5)), ("k".into(), Value::Int(3))]).unwrap();
    /// assert_eq!(ok.to_string(), "P>=0.5 [ F<=3 \"goal\" ]");
    /// assert!(p.formula.instantiate(&[("p".into(), Value::Double(1.5)), ("k".into(), Value::Int(3))]).is_err());
    /// ```
    pub fn instantiate(&self, constants: &[(String, Value)]) -> Result<StateFormula> {
        let substituted = self
            .substitute(|n| {
                constants
                    .iter()
                    .find(|(m, _)| m == n)
                    .map(|(_, v)| Expr::from(*v))
            })
            .map_exprs(&mut |e| e.simplify());
        substituted.check_bounds()?;
        Ok(substituted)
    }

    /// Checks every constant bound of the formula (see [`StateFormula::instantiate`]).
    fn check_bounds(&self) -> Result<()> {
        use StateFormula as S;
        let fail = |message: String| PctlError::Instantiate {
            formula: self.to_string(),
            message,
        };
        let value = |e: &Expr| -> Result<Option<Value>> {
            if e.is_closed() {
                e.eval(|_| None)
                    .map(Some)
                    .map_err(|err| fail(err.to_string()))
            } else {
                Ok(None)
            }
        };
        let bound = |b: &Bound, kind: BoundKind| -> Result<()> {
            if let Bound::Compare(_, e) = b {
                if let Some(v) = value(e)? {
                    threshold(kind, v).map_err(fail)?;
                }
            }
            Ok(())
        };
        let steps = |e: &Expr| -> Result<Option<i64>> {
            match value(e)? {
                Some(v) => step_count(v, "step bound").map(Some).map_err(fail),
                None => Ok(None),
            }
        };
        let step_bound = |sb: &StepBound| -> Result<()> {
            match sb {
                StepBound::Unbounded => Ok(()),
                StepBound::Lt(e) => {
                    if steps(e)? == Some(0) {
                        Err(fail(EMPTY_LT.into()))
                    } else {
                        Ok(())
                    }
                }
                StepBound::Le(e) | StepBound::Gt(e) | StepBound::Ge(e) | StepBound::Eq(e) => {
                    steps(e).map(|_| ())
                }
                StepBound::Interval(a, b) => match (steps(a)?, steps(b)?) {
                    (Some(a), Some(b)) if a > b => Err(fail(empty_interval(a, b))),
                    _ => Ok(()),
                },
            }
        };
        match self {
            S::Expr(_) | S::Label(_) => Ok(()),
            S::Not(a) => a.check_bounds(),
            S::And(l, r) | S::Or(l, r) | S::Implies(l, r) | S::Iff(l, r) => {
                l.check_bounds()?;
                r.check_bounds()
            }
            S::Prob { bound: b, path } => {
                bound(b, BoundKind::Probability)?;
                match &**path {
                    PathFormula::Next(a) => a.check_bounds(),
                    PathFormula::Eventually(a, k) | PathFormula::Globally(a, k) => {
                        step_bound(k)?;
                        a.check_bounds()
                    }
                    PathFormula::Until(a, c, k)
                    | PathFormula::WeakUntil(a, c, k)
                    | PathFormula::Release(a, c, k) => {
                        step_bound(k)?;
                        a.check_bounds()?;
                        c.check_bounds()
                    }
                }
            }
            S::Reward { bound: b, path, .. } => {
                bound(b, BoundKind::Reward)?;
                match &**path {
                    RewardPath::Reachability(a) => a.check_bounds(),
                    RewardPath::Cumulative { bound, discount: d } => {
                        if let Some(k) = bound {
                            steps(k)?;
                        }
                        if let Some(d) = d {
                            if let Some(v) = value(d)? {
                                discount(v).map_err(fail)?;
                            }
                        }
                        Ok(())
                    }
                    RewardPath::Instantaneous(k) => steps(k).map(|_| ()),
                    RewardPath::LongRun => Ok(()),
                }
            }
            S::Steady { bound: b, formula } => {
                bound(b, BoundKind::Probability)?;
                formula.check_bounds()
            }
            S::Time { bound: b, target } => {
                bound(b, BoundKind::Reward)?;
                target.check_bounds()
            }
            S::Filter {
                property, states, ..
            } => {
                property.check_bounds()?;
                states.check_bounds()
            }
        }
    }
}

impl PathFormula {
    /// Applies `f` to every expression of the path formula (see [`StateFormula::map_exprs`]).
    pub fn map_exprs(&self, f: &mut dyn FnMut(&Expr) -> Expr) -> PathFormula {
        let sb = |b: &StepBound, f: &mut dyn FnMut(&Expr) -> Expr| match b {
            StepBound::Unbounded => StepBound::Unbounded,
            StepBound::Lt(e) => StepBound::Lt(f(e)),
            StepBound::Le(e) => StepBound::Le(f(e)),
            StepBound::Gt(e) => StepBound::Gt(f(e)),
            StepBound::Ge(e) => StepBound::Ge(f(e)),
            StepBound::Eq(e) => StepBound::Eq(f(e)),
            StepBound::Interval(a, b) => StepBound::Interval(f(a), f(b)),
        };
        match self {
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
