//! Resolution: a parsed [`Property`], the values of the constants, the properties file's labels,
//! the PRISM model's formulas and the names the model defines ([`ModelNames`]) give a
//! [`ResolvedProperty`], the form the checker takes.
//!
//! This is the one place where bounds and thresholds are checked, with one wording (the parser
//! calls the same functions on bounds that name no constant, so that `augur parse` reports them
//! too):
//! - probability thresholds (`P`, `S`) are numbers in `[0, 1]`, reward and time thresholds
//!   (`R`, `T`) non-negative numbers: `P>=1.5` and `P>=p` with `p = 1.5` both give
//!   "probability bound 1.5 is outside [0, 1]";
//! - step bounds (`F<=k`, `U[a,b]`, `C<=k`, `I=k`) are non-negative **integers**, as in PRISM:
//!   `F<=3.0` and `F<=k` with `k = 3.0` are both refused; `<0` and empty intervals are errors;
//! - discount factors are numbers in `[0, 1]`.
//!
//! Resolution also substitutes constants and folds them (once, instead of at every use),
//! expands the model's formulas, turns step bounds into step counts ([`Steps`]) and thresholds
//! into numbers that keep their exact rational beside the `f64` ([`Number`]), resolves every
//! label (a model label, a properties-file label resolved once and shared, or the initial
//! states) and every reward structure (to its index), type-checks every expression against the
//! model's variables, and checks that booleans and numbers are used where they belong. Every
//! error is a [`PctlError::Resolve`] located in the property's text with a caret.
//!
//! ```
//! use augur_pctl::{parse_property, resolve::{ModelNames, Resolver}};
//! use augur_expr::Value;
//! use augur_source::SourceFile;
//! use std::{collections::BTreeMap, sync::Arc};
//! let model = ModelNames { labels: vec!["goal".into()], ..ModelNames::default() };
//! let text = "P>=p [ F<=k \"goal\" ]";
//! let source = Arc::new(SourceFile::new("--prop", text));
//! let p = parse_property(text).unwrap();
//! let consts = BTreeMap::from([("p".to_string(), Value::Double(0.5)), ("k".to_string(), Value::Int(3))]);
//! let r = Resolver::new(&model, &consts).resolve(&p, &source).unwrap();
//! assert_eq!(r.text, "P>=p [ F<=k \"goal\" ]");
//! let consts = BTreeMap::from([("p".to_string(), Value::Double(0.5)), ("k".to_string(), Value::Double(3.0))]);
//! let err = Resolver::new(&model, &consts).resolve(&p, &source).unwrap_err();
//! assert_eq!(err.to_string(), "step bound must be an integer, found 3.0");
//! assert_eq!((err.line(), err.column()), (1, 11));
//! ```

use crate::ast::*;
use crate::error::{PctlError, Result};
use crate::Spanned;
use augur_expr::{decimal_rational, Exact, Expr, ExprError, Type, UnaryOp, Value};
use augur_source::{Diagnostic, SourceFile, Span};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// The checks (shared with the parser, which runs them on bounds that name no constant).

/// What a `P`/`S` or `R`/`T` threshold measures.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BoundKind {
    /// A probability: in `[0, 1]`.
    Probability,
    /// An expected reward or time: non-negative.
    Reward,
}

/// Checks the value of a threshold.
pub(crate) fn threshold(kind: BoundKind, v: Value) -> Result<f64, String> {
    let Some(x) = v.as_f64() else {
        return Err(format!("the bound must be a number, found {v}"));
    };
    match kind {
        _ if x.is_nan() => Err(format!("the bound must be a number, found {v}")),
        BoundKind::Probability if !(0.0..=1.0).contains(&x) => {
            Err(format!("probability bound {v} is outside [0, 1]"))
        }
        BoundKind::Reward if x < 0.0 => Err(format!("reward bound {v} is negative")),
        _ => Ok(x),
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
pub(crate) fn discount(v: Value) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("discount factor {v} is not in [0, 1]")),
    }
}

/// The message for `<0`.
pub(crate) const EMPTY_LT: &str = "step bound `<0` admits no step (use `<=0` or a larger bound)";

/// The message for `[a,b]` with `a > b`.
pub(crate) fn empty_interval(a: i64, b: i64) -> String {
    format!("step interval [{a},{b}] is empty")
}

// ---------------------------------------------------------------------------------------------
// Traversals of the parsed AST.

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

    fn collect_labels(&self, out: &mut BTreeSet<String>) {
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
fn join(a: Span, b: Span) -> Span {
    match (a == Span::default(), b == Span::default()) {
        (true, _) => b,
        (_, true) => a,
        _ => a.join(b),
    }
}

/// Applies `f` to the expressions of a step bound.
fn map_step_bound(b: &Spanned<StepBound>, f: &mut dyn FnMut(&Expr) -> Expr) -> Spanned<StepBound> {
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

    fn collect_labels(&self, out: &mut BTreeSet<String>) {
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

// ---------------------------------------------------------------------------------------------
// The resolved form.

/// What a property may name in the model it is checked on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelNames {
    /// The model's labels (`"init"` and `"deadlock"` included when the model defines them).
    pub labels: Vec<String>,
    /// The model's variables and their types (empty when the model has no valuations).
    pub variables: Vec<(String, Type)>,
    /// The model's reward structures in order (`R{1}` is the first); `""` for unnamed ones.
    pub reward_structures: Vec<String>,
}

/// Whether a state formula has a truth value or a number in every state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A truth value per state (a set of states).
    Bool,
    /// A number per state.
    Num,
}

/// A threshold or discount factor: the `f64` the solvers use and the exact rational of the text
/// it came from (`0.7` is `7/10`; a constant's value is read as the decimal it prints as).
#[derive(Clone, Debug, PartialEq)]
pub struct Number {
    /// The value.
    pub value: f64,
    /// The exact value (the decimal of `value` when `exact_error` is set).
    pub exact: BigRational,
    /// Why the text has no exact rational (`log`, a rational past
    /// [`augur_expr::MAX_RATIONAL_BITS`]): exact mode reports it at `span`.
    pub exact_error: Option<ExprError>,
    /// Where it is written.
    pub span: Span,
}

/// `⋈ threshold` of a `P`, `R`, `S` or `T` operator.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// The comparison.
    pub cmp: Comparison,
    /// The threshold (in `[0, 1]` for `P` and `S`, non-negative for `R` and `T`).
    pub value: Number,
}

/// A step bound as step counts: the path must reach its target at a step in
/// `lower..=upper` (`upper == None`: unbounded above). `<k` is `≤k−1`, `>k` is `≥k+1`, `=k` is
/// `[k,k]`, no bound is `[0,∞)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    /// The first step at which the target counts.
    pub lower: u64,
    /// The last step at which the target counts (`None`: no limit).
    pub upper: Option<u64>,
    /// Where the bound is written (the operator's position when there is none).
    pub span: Span,
}

impl Steps {
    /// `[0, ∞)`.
    pub fn unbounded() -> Steps {
        Steps {
            lower: 0,
            upper: None,
            span: Span::default(),
        }
    }

    /// `[0, k]`.
    pub fn at_most(k: u64) -> Steps {
        Steps {
            lower: 0,
            upper: Some(k),
            span: Span::default(),
        }
    }
}

/// A properties-file label (or a named property another property refers to), resolved once
/// and shared by every formula that uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedLabel {
    /// The label's name.
    pub name: String,
    /// Its definition.
    pub formula: ResolvedFormula,
    /// The text the definition is written in (for errors located inside it).
    pub source: Arc<SourceFile>,
}

/// Exact mode's form of an expression that reads model variables
/// ([`ResolvedFormula::Expr`]'s `exact_form`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExactForm {
    /// The expression as written: constants not substituted, nothing folded.
    pub expr: Expr,
    /// The exact values of the constants it names.
    pub constants: Vec<(String, Exact)>,
}

/// A resolved state formula: constants substituted, names resolved, types checked.
#[derive(Clone, Debug, PartialEq)]
pub enum ResolvedFormula {
    /// An expression over the model's variables only (constants substituted and folded).
    Expr {
        /// The expression.
        expr: Expr,
        /// Its type (`Bool`, `Int` or `Double`).
        ty: Type,
        /// The exact value of an expression that names no model variable, as written
        /// (`1/3` and `--const p=1/3` are 1/3, not the decimal of their `f64`;
        /// `1/10 + 2/10 > 3/10` is false; see [`exact_result`]), or why it has none in
        /// rationals (exact mode reports it at `span`); `None` when the expression reads a
        /// model variable or a real constant without an exact value.
        exact: Option<std::result::Result<Exact, ExprError>>,
        /// Exact mode's form of an expression that reads model variables: as written, with
        /// constants replaced by their exact values and nothing folded into doubles
        /// (`pow(1/3, 5000) * x` stays a rational); `None` for a constant expression (see
        /// `exact`) or when a constant has no known exact value.
        exact_form: Option<ExactForm>,
        /// Where it is written.
        span: Span,
    },
    /// A label of the model.
    Label {
        /// The label's name.
        name: String,
        /// Where it is written.
        span: Span,
    },
    /// `"init"` in a model that has no such label: its initial states.
    Initial {
        /// Where it is written.
        span: Span,
    },
    /// A properties-file label.
    FileLabel {
        /// Its resolved definition (shared).
        label: Arc<ResolvedLabel>,
        /// Where it is used.
        span: Span,
    },
    /// `!φ`
    Not(Box<ResolvedFormula>),
    /// `φ & ψ`
    And(Box<ResolvedFormula>, Box<ResolvedFormula>),
    /// `φ | ψ`
    Or(Box<ResolvedFormula>, Box<ResolvedFormula>),
    /// `φ => ψ`
    Implies(Box<ResolvedFormula>, Box<ResolvedFormula>),
    /// `φ <=> ψ`
    Iff(Box<ResolvedFormula>, Box<ResolvedFormula>),
    /// `P⋈p [ path ]` / `P=? [ path ]`
    Prob {
        /// `Pmin` / `Pmax` (`None` for `P`).
        opt: Option<Optimum>,
        /// The threshold, `None` for `=?`.
        threshold: Option<Threshold>,
        /// The path formula.
        path: Box<ResolvedPath>,
        /// Where the operator is written (`P>=0.5`).
        span: Span,
    },
    /// `R{...}⋈r [ ... ]` / `R=? [ ... ]`
    Reward {
        /// The reward structure's index in the model (0-based).
        structure: usize,
        /// `Rmin` / `Rmax` (`None` for `R`).
        opt: Option<Optimum>,
        /// The threshold, `None` for `=?`.
        threshold: Option<Threshold>,
        /// The reward path formula.
        path: Box<ResolvedRewardPath>,
        /// Where the operator is written.
        span: Span,
    },
    /// `S⋈p [ φ ]` / `S=? [ φ ]`
    Steady {
        /// The threshold, `None` for `=?`.
        threshold: Option<Threshold>,
        /// The state formula.
        formula: Box<ResolvedFormula>,
        /// Where the operator is written.
        span: Span,
    },
    /// `T=? [ F φ ]`
    Time {
        /// The threshold, `None` for `=?`.
        threshold: Option<Threshold>,
        /// The target.
        target: Box<ResolvedFormula>,
        /// Where the operator is written.
        span: Span,
    },
    /// A reference to a named property of the properties file (`"ex4"`): its formula's value.
    Reference {
        /// The property, resolved (shared; its `source` is the text it is written in).
        property: Arc<ResolvedLabel>,
        /// Where it is referred to.
        span: Span,
    },
    /// An operator applied to state formulas (`P=? [ F s=7 ] + 0.5`): its value in a state is
    /// `expr` evaluated with `#0`, `#1`, ... bound to the operands' values in that state.
    Apply {
        /// The operator over the operands `#0`, `#1`, ... (type-checked).
        expr: Expr,
        /// The operands.
        args: Vec<ResolvedFormula>,
        /// The operands' types, as `expr` was checked with.
        arg_types: Vec<Type>,
        /// The type of the result.
        ty: Type,
        /// Where it is written.
        span: Span,
    },
    /// `filter(op, property, states)`
    Filter {
        /// The operator.
        op: FilterOp,
        /// The filtered property.
        property: Box<ResolvedFormula>,
        /// The states (boolean).
        states: Box<ResolvedFormula>,
        /// Where `filter(op` is written.
        span: Span,
    },
}

/// A resolved path formula.
#[derive(Clone, Debug, PartialEq)]
pub enum ResolvedPath {
    /// `X φ`
    Next(ResolvedFormula),
    /// `φ U ψ`
    Until(ResolvedFormula, ResolvedFormula, Steps),
    /// `F ψ`
    Eventually(ResolvedFormula, Steps),
    /// `G φ`
    Globally(ResolvedFormula, Steps),
    /// `φ W ψ`
    WeakUntil(ResolvedFormula, ResolvedFormula, Steps),
    /// `φ R ψ`
    Release(ResolvedFormula, ResolvedFormula, Steps),
    /// An LTL formula (temporal operators nested or combined by connectives).
    Ltl(ResolvedLtl),
}

/// A resolved LTL path formula (see [`LtlPath`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ResolvedLtl {
    /// A state formula.
    State(ResolvedFormula),
    /// `!φ`
    Not(Box<ResolvedLtl>),
    /// `φ & ψ`
    And(Box<ResolvedLtl>, Box<ResolvedLtl>),
    /// `φ | ψ`
    Or(Box<ResolvedLtl>, Box<ResolvedLtl>),
    /// `φ => ψ`
    Implies(Box<ResolvedLtl>, Box<ResolvedLtl>),
    /// `φ <=> ψ`
    Iff(Box<ResolvedLtl>, Box<ResolvedLtl>),
    /// `X φ`
    Next(Box<ResolvedLtl>),
    /// `φ U ψ`
    Until(Box<ResolvedLtl>, Box<ResolvedLtl>, Steps),
    /// `φ W ψ`
    WeakUntil(Box<ResolvedLtl>, Box<ResolvedLtl>, Steps),
    /// `φ R ψ`
    Release(Box<ResolvedLtl>, Box<ResolvedLtl>, Steps),
    /// `F φ`
    Eventually(Box<ResolvedLtl>, Steps),
    /// `G φ`
    Globally(Box<ResolvedLtl>, Steps),
}

/// A resolved reward path formula.
#[derive(Clone, Debug, PartialEq)]
pub enum ResolvedRewardPath {
    /// `F φ`
    Reachability(ResolvedFormula),
    /// `C<=k`, `C`, `C{discount=d}`, `C{discount=d}<=k`.
    Cumulative {
        /// The number of steps, `None` for the total.
        steps: Option<u64>,
        /// The discount factor, when given.
        discount: Option<Number>,
    },
    /// `I=k`
    Instantaneous(u64),
    /// `S`
    LongRun,
    /// A co-safe LTL formula (PRISM's co-safe LTL reward): the reward accumulated until the
    /// path's prefix satisfies it.
    Ltl(ResolvedLtl),
}

/// A property ready to check on the model it was resolved against.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedProperty {
    /// The property's name, if any.
    pub name: Option<String>,
    /// The property as the user wrote it, in canonical form (before constants and formulas
    /// were substituted).
    pub text: String,
    /// The resolved formula.
    pub formula: ResolvedFormula,
    /// The text the property is written in.
    pub source: Arc<SourceFile>,
    /// Where the property is in `source`.
    pub span: Span,
}

impl ResolvedFormula {
    /// Whether the formula has a truth value or a number in every state.
    pub fn kind(&self) -> Kind {
        use ResolvedFormula as R;
        match self {
            R::Expr { ty, .. } => {
                if *ty == Type::Bool {
                    Kind::Bool
                } else {
                    Kind::Num
                }
            }
            R::Label { .. }
            | R::Initial { .. }
            | R::FileLabel { .. }
            | R::Not(_)
            | R::And(..)
            | R::Or(..)
            | R::Implies(..)
            | R::Iff(..) => Kind::Bool,
            R::Prob { threshold, .. }
            | R::Reward { threshold, .. }
            | R::Steady { threshold, .. }
            | R::Time { threshold, .. } => {
                if threshold.is_some() {
                    Kind::Bool
                } else {
                    Kind::Num
                }
            }
            R::Reference { property, .. } => property.formula.kind(),
            R::Apply { ty, .. } => {
                if *ty == Type::Bool {
                    Kind::Bool
                } else {
                    Kind::Num
                }
            }
            R::Filter { op, property, .. } => match op {
                FilterOp::Min
                | FilterOp::Max
                | FilterOp::Sum
                | FilterOp::Avg
                | FilterOp::Range
                | FilterOp::Count => Kind::Num,
                FilterOp::Argmin | FilterOp::Argmax | FilterOp::Forall | FilterOp::Exists => {
                    Kind::Bool
                }
                FilterOp::First | FilterOp::State | FilterOp::Print | FilterOp::Printall => {
                    property.kind()
                }
            },
        }
    }

    /// Where the formula is written (see [`StateFormula::span`]).
    pub fn span(&self) -> Span {
        use ResolvedFormula as R;
        match self {
            R::Expr { span, .. }
            | R::Label { span, .. }
            | R::Initial { span }
            | R::FileLabel { span, .. }
            | R::Prob { span, .. }
            | R::Reward { span, .. }
            | R::Steady { span, .. }
            | R::Time { span, .. }
            | R::Reference { span, .. }
            | R::Apply { span, .. }
            | R::Filter { span, .. } => *span,
            R::Not(a) => a.span(),
            R::And(l, r) | R::Or(l, r) | R::Implies(l, r) | R::Iff(l, r) => {
                join(l.span(), r.span())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The resolver.

/// Why the formula expansion left a name in place ([`Resolver::with_unexpanded_formulas`]).
type Unexpanded<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// Resolves properties against one model, one set of constants and one properties file's
/// labels. Properties-file labels are resolved on first use and shared (an [`Arc`]) by every
/// property resolved with the same resolver.
pub struct Resolver<'a> {
    model: &'a ModelNames,
    constants: &'a BTreeMap<String, Value>,
    expand: Option<&'a dyn Fn(&Expr) -> Expr>,
    /// For a model formula left unexpanded (too large to write out): why.
    unexpanded: Option<&'a Unexpanded<'a>>,
    label_defs: HashMap<&'a str, (&'a LabelDef, Arc<SourceFile>)>,
    resolved_labels: HashMap<String, Arc<ResolvedLabel>>,
    /// Properties-file labels being resolved (cycle detection).
    in_progress: Vec<String>,
    variables: HashMap<&'a str, Type>,
    /// Named properties that others may refer to (`"name"`), with their texts.
    named: HashMap<&'a str, (&'a Property, Arc<SourceFile>)>,
    resolved_named: HashMap<String, Arc<ResolvedLabel>>,
    /// Named properties being resolved (cycle detection).
    named_in_progress: Vec<String>,
    /// Exact values of constants (given as `1/3`, or defined by rational arithmetic), used
    /// for the exact rationals of thresholds instead of the decimal of their `f64`.
    exact: BTreeMap<String, BigRational>,
}

/// Where an error found while resolving is located: the text being resolved.
#[derive(Clone, Copy)]
struct At<'s> {
    source: &'s Arc<SourceFile>,
}

impl At<'_> {
    fn err(&self, span: Span, message: impl Into<String>) -> PctlError {
        PctlError::Resolve(Box::new(
            Diagnostic::error(message).at(self.source.location(span)),
        ))
    }
}

impl<'a> Resolver<'a> {
    /// A resolver for `model` with the given constant values (the model's, the properties
    /// file's and the command line's, already evaluated).
    pub fn new(model: &'a ModelNames, constants: &'a BTreeMap<String, Value>) -> Resolver<'a> {
        Resolver {
            model,
            constants,
            expand: None,
            unexpanded: None,
            label_defs: HashMap::new(),
            resolved_labels: HashMap::new(),
            in_progress: Vec::new(),
            named: HashMap::new(),
            resolved_named: HashMap::new(),
            named_in_progress: Vec::new(),
            exact: BTreeMap::new(),
            variables: model
                .variables
                .iter()
                .map(|(n, t)| (n.as_str(), *t))
                .collect(),
        }
    }

    /// Expands the model's formulas (PRISM `formula` definitions) in every expression first.
    pub fn with_formulas(mut self, expand: &'a dyn Fn(&Expr) -> Expr) -> Resolver<'a> {
        self.expand = Some(expand);
        self
    }

    /// Explains names that the formula expansion ([`Resolver::with_formulas`]) left in place:
    /// `why(name)` is the message for an expression that reads `name` (a model formula too
    /// large to write out), `None` for other names (then the name is unknown).
    pub fn with_unexpanded_formulas(mut self, why: &'a Unexpanded<'a>) -> Resolver<'a> {
        self.unexpanded = Some(why);
        self
    }

    /// The labels of a properties file written in `source` (usable by every property).
    pub fn with_labels(mut self, labels: &'a [LabelDef], source: Arc<SourceFile>) -> Resolver<'a> {
        for l in labels {
            self.label_defs
                .insert(l.name.node.as_str(), (l, Arc::clone(&source)));
        }
        self
    }

    /// Named properties (written in `source`) that properties may refer to by name (`"ex4"`,
    /// as PRISM resolves them). A model or properties-file label of the same name is preferred.
    pub fn with_properties(
        mut self,
        properties: impl IntoIterator<Item = (&'a Property, Arc<SourceFile>)>,
    ) -> Resolver<'a> {
        for (p, source) in properties {
            if let Some(name) = &p.name {
                self.named.entry(name.as_str()).or_insert((p, source));
            }
        }
        self
    }

    /// Exact values of constants (`--const p=1/3`): thresholds naming them get exact
    /// rationals (the `f64` values still come from the constants given to [`Resolver::new`]).
    pub fn with_exact_constants(mut self, exact: &BTreeMap<String, BigRational>) -> Resolver<'a> {
        self.exact = exact.clone();
        self
    }

    /// Resolves a property written in `source`.
    pub fn resolve(
        &mut self,
        property: &Property,
        source: &Arc<SourceFile>,
    ) -> Result<ResolvedProperty> {
        let formula = self.resolve_formula(&property.formula, source)?;
        Ok(ResolvedProperty {
            name: property.name.clone(),
            text: property.formula.to_string(),
            formula,
            source: Arc::clone(source),
            span: property.span,
        })
    }

    /// Resolves a state formula written in `source`.
    pub fn resolve_formula(
        &mut self,
        formula: &StateFormula,
        source: &Arc<SourceFile>,
    ) -> Result<ResolvedFormula> {
        let at = At { source };
        match self.expand {
            Some(expand) => self.state(&formula.map_exprs(&mut |e| expand(e)), at),
            None => self.state(formula, at),
        }
    }

    fn state(&mut self, f: &StateFormula, at: At<'_>) -> Result<ResolvedFormula> {
        use ResolvedFormula as R;
        use StateFormula as S;
        Ok(match f {
            S::Expr(e) => self.expr(e, at)?,
            S::Label(l) => self.label(l, at)?,
            S::Not(a) => R::Not(Box::new(self.boolean(a, at)?)),
            S::And(l, r) => R::And(
                Box::new(self.boolean(l, at)?),
                Box::new(self.boolean(r, at)?),
            ),
            S::Or(l, r) => R::Or(
                Box::new(self.boolean(l, at)?),
                Box::new(self.boolean(r, at)?),
            ),
            S::Implies(l, r) => R::Implies(
                Box::new(self.boolean(l, at)?),
                Box::new(self.boolean(r, at)?),
            ),
            S::Iff(l, r) => R::Iff(
                Box::new(self.boolean(l, at)?),
                Box::new(self.boolean(r, at)?),
            ),
            S::Prob { opt, bound, path } => R::Prob {
                opt: *opt,
                threshold: self.threshold(bound, BoundKind::Probability, at)?,
                path: Box::new(self.path(path, at)?),
                span: bound.span,
            },
            S::Reward {
                structure,
                opt,
                bound,
                path,
            } => R::Reward {
                opt: *opt,
                structure: self.structure(structure.as_ref(), bound.span, at)?,
                threshold: self.threshold(bound, BoundKind::Reward, at)?,
                path: Box::new(self.reward_path(path, at)?),
                span: bound.span,
            },
            S::Steady { bound, formula } => R::Steady {
                threshold: self.threshold(bound, BoundKind::Probability, at)?,
                formula: Box::new(self.boolean(formula, at)?),
                span: bound.span,
            },
            S::Time { bound, target } => R::Time {
                threshold: self.threshold(bound, BoundKind::Reward, at)?,
                target: Box::new(self.boolean(target, at)?),
                span: bound.span,
            },
            S::Apply { op, args } => self.apply(op, args, at)?,
            S::Filter {
                op,
                property,
                states,
            } => {
                let inner = self.state(property, at)?;
                let need = match op.node {
                    FilterOp::Count | FilterOp::Forall | FilterOp::Exists => Some(Kind::Bool),
                    FilterOp::Min
                    | FilterOp::Max
                    | FilterOp::Argmin
                    | FilterOp::Argmax
                    | FilterOp::Sum
                    | FilterOp::Avg
                    | FilterOp::Range => Some(Kind::Num),
                    FilterOp::First | FilterOp::State | FilterOp::Print | FilterOp::Printall => {
                        None
                    }
                };
                if let Some(k) = need.filter(|k| *k != inner.kind()) {
                    let what = if k == Kind::Bool {
                        "boolean"
                    } else {
                        "numeric"
                    };
                    return Err(at.err(
                        property.span(),
                        format!("filter {} needs a {what} property", op.node),
                    ));
                }
                R::Filter {
                    op: op.node,
                    property: Box::new(inner),
                    states: Box::new(self.boolean(states, at)?),
                    span: op.span,
                }
            }
        })
    }

    /// `op(args)` where some operand is not a plain expression: resolves the operands and
    /// type-checks the operator over placeholders `#0`, `#1`, ... of their types.
    fn apply(
        &mut self,
        op: &Spanned<Operator>,
        args: &[StateFormula],
        at: At<'_>,
    ) -> Result<ResolvedFormula> {
        let mut resolved = Vec::with_capacity(args.len());
        let mut types = Vec::with_capacity(args.len());
        for a in args {
            let r = self.state(a, at)?;
            types.push(value_type(&r));
            resolved.push(r);
        }
        let mut holes = (0..args.len()).map(|i| Expr::Ident(format!("#{i}")));
        let mut hole = || holes.next().unwrap_or(Expr::Bool(false));
        let expr = match op.node {
            Operator::Neg => Expr::Unary(UnaryOp::Neg, Box::new(hole())),
            Operator::Binary(b) => {
                let l = hole();
                Expr::Binary(b, Box::new(l), Box::new(hole()))
            }
            Operator::Ite => {
                let (c, a) = (hole(), hole());
                Expr::Ite(Box::new(c), Box::new(a), Box::new(hole()))
            }
            Operator::Call(f) => Expr::Call(f, (0..args.len()).map(|_| hole()).collect()),
        };
        let ty = expr
            .type_check(|name| {
                name.strip_prefix('#')
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| types.get(i).copied())
            })
            .map_err(|err| {
                // Name the operands as written, not as placeholders.
                let written = StateFormula::Apply {
                    op: *op,
                    args: args.to_vec(),
                };
                let message = match err {
                    ExprError::TypeMismatch { message, .. } => {
                        format!("{message} in {written}")
                    }
                    other => format!("{} in {written}", expr_message(other)),
                };
                at.err(op.span, message)
            })?;
        Ok(ResolvedFormula::Apply {
            expr,
            args: resolved,
            arg_types: types,
            ty,
            span: op.span,
        })
    }

    /// A state formula that must be boolean.
    fn boolean(&mut self, f: &StateFormula, at: At<'_>) -> Result<ResolvedFormula> {
        let r = self.state(f, at)?;
        if r.kind() == Kind::Num {
            return Err(at.err(
                f.span(),
                format!("expected a boolean state formula, found a numeric one: {f}"),
            ));
        }
        Ok(r)
    }

    fn expr(&self, e: &Spanned<Expr>, at: At<'_>) -> Result<ResolvedFormula> {
        // Model variables first, then constants (as PRISM, which forbids the clash).
        let substituted = e
            .substitute(|name| {
                if self.variables.contains_key(name) {
                    None
                } else {
                    self.constants.get(name).map(|v| Expr::from(*v))
                }
            })
            .simplify();
        let ty = substituted
            .type_check(|name| self.variables.get(name).copied())
            .map_err(|err| {
                let why = match (&err, self.unexpanded) {
                    (ExprError::Undeclared(name), Some(why)) => why(name),
                    _ => None,
                };
                at.err(e.span, why.unwrap_or_else(|| expr_message(err)))
            })?;
        // A real constant without a known exact value (a model's `const double q = 1/3;`
        // reaches the resolver as its double) would be read as the decimal of its double:
        // not claimed exact.
        let known = |name: &String| {
            self.exact.contains_key(name)
                || matches!(
                    self.constants.get(name),
                    Some(Value::Int(_) | Value::Bool(_))
                )
        };
        let exact = if substituted.is_closed() && e.idents().iter().all(known) {
            Some(exact_result(&e.node, self.constants, &self.exact))
        } else {
            None
        };
        let exact_form = match exact {
            Some(_) => None,
            None => self.exact_form(&e.node),
        };
        Ok(ResolvedFormula::Expr {
            expr: substituted,
            ty,
            exact,
            exact_form,
            span: e.span,
        })
    }

    /// Exact mode's form of an expression over model variables: the expression as written,
    /// nothing folded, with the exact values of the constants it names, so that
    /// `pow(1/3, 5000) * x` keeps its rational instead of the double that [`Expr::simplify`]
    /// folds it into. `None` when a name is neither a model variable nor a constant with a
    /// known exact value (exact mode then keeps the folded form).
    fn exact_form(&self, e: &Expr) -> Option<ExactForm> {
        let mut constants = Vec::new();
        for name in e.idents() {
            if self.variables.contains_key(name.as_str()) {
                continue;
            }
            let value = match (
                self.exact.get(name.as_str()),
                self.constants.get(name.as_str()),
            ) {
                (Some(q), _) => Exact::Num(q.clone()),
                (None, Some(Value::Int(i))) => {
                    Exact::Num(BigRational::from_integer(BigInt::from(*i)))
                }
                (None, Some(Value::Bool(b))) => Exact::Bool(*b),
                _ => return None,
            };
            constants.push((name, value));
        }
        Some(ExactForm {
            expr: e.clone(),
            constants,
        })
    }

    fn label(&mut self, l: &Spanned<String>, at: At<'_>) -> Result<ResolvedFormula> {
        let name = l.node.as_str();
        if self.model.labels.iter().any(|m| m == name) {
            return Ok(ResolvedFormula::Label {
                name: name.to_string(),
                span: l.span,
            });
        }
        if let Some(done) = self.resolved_labels.get(name) {
            return Ok(ResolvedFormula::FileLabel {
                label: Arc::clone(done),
                span: l.span,
            });
        }
        if let Some((def, source)) = self.label_defs.get(name).cloned() {
            if self.in_progress.iter().any(|n| n == name) {
                return Err(at.err(
                    l.span,
                    format!("label \"{name}\" is defined in terms of itself"),
                ));
            }
            self.in_progress.push(name.to_string());
            let def_at = At { source: &source };
            let formula = match self.expand {
                Some(expand) => self.boolean(&def.formula.map_exprs(&mut |e| expand(e)), def_at),
                None => self.boolean(&def.formula, def_at),
            };
            self.in_progress.pop();
            let resolved = Arc::new(ResolvedLabel {
                name: name.to_string(),
                formula: formula?,
                source,
            });
            self.resolved_labels
                .insert(name.to_string(), Arc::clone(&resolved));
            return Ok(ResolvedFormula::FileLabel {
                label: resolved,
                span: l.span,
            });
        }
        if let Some(done) = self.resolved_named.get(name) {
            return Ok(ResolvedFormula::Reference {
                property: Arc::clone(done),
                span: l.span,
            });
        }
        if let Some((prop, source)) = self.named.get(name).cloned() {
            if self.named_in_progress.iter().any(|n| n == name) {
                return Err(at.err(l.span, format!("property \"{name}\" refers to itself")));
            }
            self.named_in_progress.push(name.to_string());
            let def_at = At { source: &source };
            let formula = match self.expand {
                Some(expand) => self.state(&prop.formula.map_exprs(&mut |e| expand(e)), def_at),
                None => self.state(&prop.formula, def_at),
            };
            self.named_in_progress.pop();
            let formula = formula.map_err(|e| match e {
                PctlError::Resolve(d) => at.err(
                    l.span,
                    format!(
                        "property \"{name}\" (referred to here) does not resolve: {}",
                        d.message
                    ),
                ),
                other => other,
            })?;
            let resolved = Arc::new(ResolvedLabel {
                name: name.to_string(),
                formula,
                source,
            });
            self.resolved_named
                .insert(name.to_string(), Arc::clone(&resolved));
            return Ok(ResolvedFormula::Reference {
                property: resolved,
                span: l.span,
            });
        }
        if name == "init" {
            return Ok(ResolvedFormula::Initial { span: l.span });
        }
        let mut known: Vec<&str> = self
            .model
            .labels
            .iter()
            .map(String::as_str)
            .chain(self.label_defs.keys().copied())
            .chain(["init"])
            .collect();
        known.sort_unstable();
        known.dedup();
        let known: Vec<String> = known.iter().map(|k| format!("\"{k}\"")).collect();
        Err(at.err(
            l.span,
            format!(
                "unknown label \"{name}\" (known labels: {})",
                known.join(", ")
            ),
        ))
    }

    fn structure(&self, r: Option<&RewardRef>, span: Span, at: At<'_>) -> Result<usize> {
        let names = &self.model.reward_structures;
        let found = match r {
            None => (!names.is_empty()).then_some(0),
            Some(RewardRef::Name(n)) => names.iter().position(|m| m == n),
            Some(RewardRef::Index(i)) => (*i as usize).checked_sub(1).filter(|&i| i < names.len()),
        };
        found.ok_or_else(|| {
            let what = match r {
                None => "(the default)".to_string(),
                Some(RewardRef::Name(n)) => format!("\"{n}\""),
                Some(RewardRef::Index(i)) => format!("number {i}"),
            };
            let known = if names.is_empty() {
                "no reward structures".to_string()
            } else {
                names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        if n.is_empty() {
                            format!("{} (unnamed)", i + 1)
                        } else {
                            format!("\"{n}\"")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            at.err(
                span,
                format!("unknown reward structure {what} (the model has: {known})"),
            )
        })
    }

    /// Evaluates a bound (threshold, step count, discount): an expression over constants only.
    fn constant(&self, e: &Spanned<Expr>, what: &str, at: At<'_>) -> Result<Value> {
        e.eval(|name| self.constants.get(name).copied())
            .map_err(|err| match err {
                ExprError::Undeclared(name) if self.variables.contains_key(name.as_str()) => at
                    .err(
                        e.span,
                        format!("{what} must be constant, but `{name}` is a model variable"),
                    ),
                ExprError::Undeclared(name) => {
                    at.err(e.span, format!("unknown constant `{name}` in the {what}"))
                }
                other => at.err(e.span, other.to_string()),
            })
    }

    fn number(&self, e: &Spanned<Expr>, value: f64) -> Number {
        let (exact, exact_error) = match exact_result(e, self.constants, &self.exact) {
            Ok(Exact::Num(q)) => (Some(q), None),
            // Too large or not rational: exact mode reports it; the default uses `value`.
            Err(err @ (ExprError::RationalTooLarge { .. } | ExprError::NotRational(_))) => {
                (None, Some(err))
            }
            _ => (None, None),
        };
        Number {
            value,
            exact: exact
                .or_else(|| decimal_rational(value))
                .unwrap_or_else(BigRational::zero),
            exact_error,
            span: e.span,
        }
    }

    fn threshold(
        &self,
        bound: &Spanned<Bound>,
        kind: BoundKind,
        at: At<'_>,
    ) -> Result<Option<Threshold>> {
        let Bound::Compare(cmp, e) = &bound.node else {
            return Ok(None);
        };
        let v = self.constant(e, "bound", at)?;
        let x = threshold(kind, v).map_err(|m| at.err(e.span, m))?;
        Ok(Some(Threshold {
            cmp: *cmp,
            value: self.number(e, x),
        }))
    }

    fn step(&self, e: &Spanned<Expr>, what: &str, at: At<'_>) -> Result<u64> {
        let v = self.constant(e, what, at)?;
        let k = step_count(v, what).map_err(|m| at.err(e.span, m))?;
        Ok(k.unsigned_abs())
    }

    fn steps(&self, b: &Spanned<StepBound>, at: At<'_>) -> Result<Steps> {
        let k = |e: &Spanned<Expr>| self.step(e, "step bound", at);
        let (lower, upper) = match &b.node {
            StepBound::Unbounded => (0, None),
            StepBound::Lt(e) => match k(e)? {
                0 => return Err(at.err(b.span, EMPTY_LT)),
                k => (0, Some(k - 1)),
            },
            StepBound::Le(e) => (0, Some(k(e)?)),
            StepBound::Gt(e) => (k(e)?.saturating_add(1), None),
            StepBound::Ge(e) => (k(e)?, None),
            StepBound::Eq(e) => {
                let k = k(e)?;
                (k, Some(k))
            }
            StepBound::Interval(a, c) => {
                let (lo, hi) = (k(a)?, k(c)?);
                if hi < lo {
                    return Err(at.err(b.span, empty_interval(lo as i64, hi as i64)));
                }
                (lo, Some(hi))
            }
        };
        Ok(Steps {
            lower,
            upper,
            span: b.span,
        })
    }

    fn path(&mut self, p: &PathFormula, at: At<'_>) -> Result<ResolvedPath> {
        use PathFormula as P;
        use ResolvedPath as RP;
        Ok(match p {
            P::Next(a) => RP::Next(self.boolean(a, at)?),
            P::Until(a, c, k) => RP::Until(
                self.boolean(a, at)?,
                self.boolean(c, at)?,
                self.steps(k, at)?,
            ),
            P::Eventually(a, k) => RP::Eventually(self.boolean(a, at)?, self.steps(k, at)?),
            P::Globally(a, k) => RP::Globally(self.boolean(a, at)?, self.steps(k, at)?),
            P::WeakUntil(a, c, k) => RP::WeakUntil(
                self.boolean(a, at)?,
                self.boolean(c, at)?,
                self.steps(k, at)?,
            ),
            P::Release(a, c, k) => RP::Release(
                self.boolean(a, at)?,
                self.boolean(c, at)?,
                self.steps(k, at)?,
            ),
            P::Ltl(l) => RP::Ltl(self.ltl(l, at)?),
        })
    }

    fn ltl(&mut self, l: &LtlPath, at: At<'_>) -> Result<ResolvedLtl> {
        use LtlPath as L;
        use ResolvedLtl as R;
        let b = |s: &mut Self, x: &LtlPath| s.ltl(x, at).map(Box::new);
        Ok(match l {
            L::State(s) => R::State(self.boolean(s, at)?),
            L::Not(a) => R::Not(b(self, a)?),
            L::And(x, y) => R::And(b(self, x)?, b(self, y)?),
            L::Or(x, y) => R::Or(b(self, x)?, b(self, y)?),
            L::Implies(x, y) => R::Implies(b(self, x)?, b(self, y)?),
            L::Iff(x, y) => R::Iff(b(self, x)?, b(self, y)?),
            L::Next(a) => R::Next(b(self, a)?),
            L::Eventually(a, k) => R::Eventually(b(self, a)?, self.steps(k, at)?),
            L::Globally(a, k) => R::Globally(b(self, a)?, self.steps(k, at)?),
            L::Until(x, y, k) => R::Until(b(self, x)?, b(self, y)?, self.steps(k, at)?),
            L::WeakUntil(x, y, k) => R::WeakUntil(b(self, x)?, b(self, y)?, self.steps(k, at)?),
            L::Release(x, y, k) => R::Release(b(self, x)?, b(self, y)?, self.steps(k, at)?),
        })
    }

    fn reward_path(&mut self, p: &RewardPath, at: At<'_>) -> Result<ResolvedRewardPath> {
        Ok(match p {
            RewardPath::Reachability(a) => ResolvedRewardPath::Reachability(self.boolean(a, at)?),
            RewardPath::Cumulative { bound, discount: d } => ResolvedRewardPath::Cumulative {
                steps: match bound {
                    Some(k) => Some(self.step(k, "step bound", at)?),
                    None => None,
                },
                discount: match d {
                    Some(e) => {
                        let v = self.constant(e, "discount factor", at)?;
                        let x = discount(v).map_err(|m| at.err(e.span, m))?;
                        Some(self.number(e, x))
                    }
                    None => None,
                },
            },
            RewardPath::Instantaneous(k) => {
                ResolvedRewardPath::Instantaneous(self.step(k, "step", at)?)
            }
            RewardPath::LongRun => ResolvedRewardPath::LongRun,
            RewardPath::Ltl(l) => ResolvedRewardPath::Ltl(self.ltl(l, at)?),
        })
    }
}

/// The type of a resolved formula's value in a state (`P=?` is a double; `filter(count, ...)`
/// an int, as in PRISM).
fn value_type(f: &ResolvedFormula) -> Type {
    match f {
        ResolvedFormula::Expr { ty, .. } | ResolvedFormula::Apply { ty, .. } => *ty,
        ResolvedFormula::Reference { property, .. } => value_type(&property.formula),
        ResolvedFormula::Filter {
            op: FilterOp::Count,
            ..
        } => Type::Int,
        ResolvedFormula::Filter {
            op: FilterOp::First | FilterOp::State | FilterOp::Print | FilterOp::Printall,
            property,
            ..
        } => value_type(property),
        other => match other.kind() {
            Kind::Bool => Type::Bool,
            Kind::Num => Type::Double,
        },
    }
}

/// The message for an expression that does not type-check.
fn expr_message(e: ExprError) -> String {
    match e {
        ExprError::Undeclared(name) => format!("unknown variable or constant `{name}`"),
        other => other.to_string(),
    }
}

/// The exact value of a constant arithmetic expression (`1/3` is `1/3`, not its `f64`): literals
/// read as decimals, constants from `exact` (else as the decimal of their value), evaluated by
/// [`augur_expr::eval_exact`]. `None` for anything without an exact rational (see
/// [`exact_result`] for the reason).
pub fn exact_value(
    e: &Expr,
    constants: &BTreeMap<String, Value>,
    exact: &BTreeMap<String, BigRational>,
) -> Option<BigRational> {
    match exact_result(e, constants, exact) {
        Ok(Exact::Num(q)) => Some(q),
        _ => None,
    }
}

/// A constant expression evaluated in exact rationals ([`augur_expr::eval_exact`]): constants
/// from `exact`, else their value (a double as the decimal it prints as); the error says why
/// it has no exact value (a name that is not a constant, `log`, a rational past
/// [`augur_expr::MAX_RATIONAL_BITS`], ...).
pub fn exact_result(
    e: &Expr,
    constants: &BTreeMap<String, Value>,
    exact: &BTreeMap<String, BigRational>,
) -> std::result::Result<Exact, ExprError> {
    let env = |n: &str| match exact.get(n) {
        Some(q) => Some(Exact::Num(q.clone())),
        None => match constants.get(n)? {
            Value::Int(i) => Some(Exact::Num(BigRational::from_integer(BigInt::from(*i)))),
            Value::Double(d) => decimal_rational(*d).map(Exact::Num),
            Value::Bool(b) => Some(Exact::Bool(*b)),
        },
    };
    augur_expr::eval_exact(e, &env)
}

impl Number {
    /// A number without a source (its exact value is the decimal it prints as).
    pub fn from_f64(value: f64) -> Number {
        Number {
            value,
            exact: decimal_rational(value).unwrap_or_else(BigRational::zero),
            exact_error: None,
            span: Span::default(),
        }
    }
}
