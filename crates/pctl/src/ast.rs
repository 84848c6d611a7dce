//! The PCTL abstract syntax tree (PRISM syntax, DTMC fragment, plus Storm's `T` operator).

use crate::Spanned;
use augur_expr::{BinaryOp, ConstDecl, Expr, Func};
use augur_source::Span;
use serde::{Deserialize, Serialize};

/// A comparison in a bound `P⋈p`, `R⋈r`, `S⋈p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Comparison {
    /// `<`
    #[serde(rename = "<")]
    Lt,
    /// `<=`
    #[serde(rename = "<=")]
    Le,
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `>=`
    #[serde(rename = ">=")]
    Ge,
}

/// `min` / `max` of `Pmin`, `Pmax`, `R{"r"}min`, `Rmax`: over an interval model, nature
/// resolves the intervals to minimise / maximise the value (on a DTMC they change nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Optimum {
    /// `min`
    Min,
    /// `max`
    Max,
}

impl Optimum {
    /// `"min"` or `"max"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Optimum::Min => "min",
            Optimum::Max => "max",
        }
    }

    /// The other one (`G φ = ¬F ¬φ` turns max into min).
    pub fn flip(self) -> Optimum {
        match self {
            Optimum::Min => Optimum::Max,
            Optimum::Max => Optimum::Min,
        }
    }
}

/// The bound of a `P`, `R`, `S` or `T` operator: a query `=?` or a comparison with a threshold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// `=?`: compute the value.
    Query,
    /// `⋈ threshold`: compare the value with a threshold (an expression, may name constants).
    Compare(Comparison, Spanned<Expr>),
}

/// A step bound on a temporal operator. Bounds are integer expressions and may name constants;
/// they become step counts when the property is resolved ([`crate::resolve`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepBound {
    /// No bound.
    Unbounded,
    /// `<k`
    Lt(Spanned<Expr>),
    /// `<=k`
    Le(Spanned<Expr>),
    /// `>k`
    Gt(Spanned<Expr>),
    /// `>=k`
    Ge(Spanned<Expr>),
    /// `=k`
    Eq(Spanned<Expr>),
    /// `[k1,k2]`
    Interval(Spanned<Expr>, Spanned<Expr>),
}

/// How a reward structure is referred to in `R{...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RewardRef {
    /// `R{"name"}`
    Name(String),
    /// `R{1}` (1-based index, as in PRISM)
    Index(u32),
}

/// The operator of PRISM's `filter(op, property, states)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FilterOp {
    /// Minimum over the states.
    Min,
    /// Maximum over the states.
    Max,
    /// The states attaining the minimum.
    Argmin,
    /// The states attaining the maximum.
    Argmax,
    /// Number of states where the (boolean) property holds.
    Count,
    /// Sum over the states.
    Sum,
    /// Average over the states.
    Avg,
    /// Value in the first (lowest-index) state.
    First,
    /// `[min, max]` over the states.
    Range,
    /// Whether the property holds in all the states.
    Forall,
    /// Whether the property holds in some state.
    Exists,
    /// Value in the single state of the filter (error when there is not exactly one).
    State,
    /// Print the values of the (non-zero) states.
    Print,
    /// Print the values of all the states.
    Printall,
}

/// The operator of an [`StateFormula::Apply`]: arithmetic, a comparison, a conditional or a
/// function call whose operands are state formulas (the boolean connectives have their own
/// variants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operator {
    /// Unary minus `-φ`.
    Neg,
    /// `φ op ψ` for an arithmetic or comparison operator (`+ - * / = != < <= > >=`).
    Binary(BinaryOp),
    /// `c ? a : b`.
    Ite,
    /// `f(φ, ...)` (also `φ ^ ψ`, which is `pow(φ, ψ)`).
    Call(Func),
}

/// A PCTL state formula.
///
/// Boolean expressions over model variables and constants are kept as one [`Expr`] leaf
/// (`StateFormula::Expr`); the boolean connectives of this enum are used where an operand is
/// not a plain expression (a label, a `P`/`R`/`S` operator, a filter).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateFormula {
    /// A boolean expression over variables and constants (`true`, `x>=3`, `s=1 & t!=2`).
    Expr(Spanned<Expr>),
    /// `"label"` (the span covers the quotes).
    Label(Spanned<String>),
    /// `!φ`
    Not(Box<StateFormula>),
    /// `φ & ψ`
    And(Box<StateFormula>, Box<StateFormula>),
    /// `φ | ψ`
    Or(Box<StateFormula>, Box<StateFormula>),
    /// `φ => ψ`
    Implies(Box<StateFormula>, Box<StateFormula>),
    /// `φ <=> ψ`
    Iff(Box<StateFormula>, Box<StateFormula>),
    /// `P⋈p [ path ]` / `P=? [ path ]`
    Prob {
        /// `Pmin` / `Pmax`, `None` for `P`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opt: Option<Optimum>,
        /// The bound or query; its span covers the operator (`P>=0.5`).
        bound: Spanned<Bound>,
        /// The path formula.
        path: Box<PathFormula>,
    },
    /// `R{"name"}⋈r [ reward path ]` / `R=? [ ... ]`
    Reward {
        /// The reward structure (the first one when omitted).
        structure: Option<RewardRef>,
        /// `Rmin` / `Rmax` (`R{"r"}min`), `None` for `R`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opt: Option<Optimum>,
        /// The bound or query; its span covers the operator (`R{"cost"}<=3`).
        bound: Spanned<Bound>,
        /// The reward path formula.
        path: Box<RewardPath>,
    },
    /// `S⋈p [ φ ]` / `S=? [ φ ]`: long-run probability of being in φ-states.
    Steady {
        /// The bound or query; its span covers the operator (`S=?`).
        bound: Spanned<Bound>,
        /// The state formula whose long-run probability is measured.
        formula: Box<StateFormula>,
    },
    /// Storm's `T=? [ F φ ]`: expected number of steps until φ.
    Time {
        /// The bound or query; its span covers the operator (`T=?`).
        bound: Spanned<Bound>,
        /// The target (`F φ`).
        target: Box<StateFormula>,
    },
    /// An operator applied to state formulas of which at least one is not a plain expression
    /// (`P=? [ F s=7 ] + 0.5`, `round(1 + P=? [ F<=1 d=6 ])`, `pow(2*"one", d+3)`): its value
    /// in a state is the operator applied to the operands' values in that state.
    Apply {
        /// The operator; its span covers the whole application.
        op: Spanned<Operator>,
        /// The operands (one for `Neg`, two for `Binary`, three for `Ite`).
        args: Vec<StateFormula>,
    },
    /// `filter(op, property, states)`; `states` is `true` when omitted.
    Filter {
        /// The filter operator; its span covers `filter(op`.
        op: Spanned<FilterOp>,
        /// The filtered property.
        property: Box<StateFormula>,
        /// The states the filter ranges over.
        states: Box<StateFormula>,
    },
}

/// A PCTL path formula (inside `P[...]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathFormula {
    /// `X φ`
    Next(StateFormula),
    /// `φ U ψ` with a step bound
    Until(StateFormula, StateFormula, Spanned<StepBound>),
    /// `F ψ` with a step bound
    Eventually(StateFormula, Spanned<StepBound>),
    /// `G φ` with a step bound
    Globally(StateFormula, Spanned<StepBound>),
    /// `φ W ψ` with a step bound
    WeakUntil(StateFormula, StateFormula, Spanned<StepBound>),
    /// `φ R ψ` with a step bound
    Release(StateFormula, StateFormula, Spanned<StepBound>),
    /// An LTL formula: temporal operators nested inside each other or combined with `!`, `&`,
    /// `|`, `=>`, `<=>` (`G F "a"`, `"a" U ("b" U "c")`, `(F "a") & (G "b")`). Only formulas
    /// that are not one of the PCTL forms above are kept here (the parser and
    /// [`LtlPath::into_path`] make sure of it), so the AST stays canonical.
    Ltl(Box<LtlPath>),
}

/// An LTL path formula (inside `P[...]`, see [`PathFormula::Ltl`]). Boolean connectives
/// appear only where an operand is itself temporal; connectives between state formulas are
/// kept in [`LtlPath::State`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LtlPath {
    /// A state formula (an atomic proposition of the LTL formula).
    State(StateFormula),
    /// `!φ`
    Not(Box<LtlPath>),
    /// `φ & ψ`
    And(Box<LtlPath>, Box<LtlPath>),
    /// `φ | ψ`
    Or(Box<LtlPath>, Box<LtlPath>),
    /// `φ => ψ`
    Implies(Box<LtlPath>, Box<LtlPath>),
    /// `φ <=> ψ`
    Iff(Box<LtlPath>, Box<LtlPath>),
    /// `X φ`
    Next(Box<LtlPath>),
    /// `φ U ψ` with a step bound
    Until(Box<LtlPath>, Box<LtlPath>, Spanned<StepBound>),
    /// `φ W ψ` with a step bound
    WeakUntil(Box<LtlPath>, Box<LtlPath>, Spanned<StepBound>),
    /// `φ R ψ` with a step bound
    Release(Box<LtlPath>, Box<LtlPath>, Spanned<StepBound>),
    /// `F φ` with a step bound
    Eventually(Box<LtlPath>, Spanned<StepBound>),
    /// `G φ` with a step bound
    Globally(Box<LtlPath>, Spanned<StepBound>),
}

impl LtlPath {
    /// The path formula this LTL formula is: one of the PCTL forms when every operand of its
    /// (single) temporal operator is a state formula, [`PathFormula::Ltl`] otherwise; `None`
    /// for a state formula (no temporal operator).
    pub fn into_path(self) -> Option<PathFormula> {
        use LtlPath as L;
        let st = |b: &LtlPath| matches!(b, L::State(_));
        let unbox = |b: Box<LtlPath>| match *b {
            L::State(s) => s,
            _ => unreachable!("checked to be a state formula"),
        };
        Some(match self {
            L::State(_) => return None,
            L::Next(a) if st(&a) => PathFormula::Next(unbox(a)),
            L::Eventually(a, k) if st(&a) => PathFormula::Eventually(unbox(a), k),
            L::Globally(a, k) if st(&a) => PathFormula::Globally(unbox(a), k),
            L::Until(a, b, k) if st(&a) && st(&b) => PathFormula::Until(unbox(a), unbox(b), k),
            L::WeakUntil(a, b, k) if st(&a) && st(&b) => {
                PathFormula::WeakUntil(unbox(a), unbox(b), k)
            }
            L::Release(a, b, k) if st(&a) && st(&b) => PathFormula::Release(unbox(a), unbox(b), k),
            other => PathFormula::Ltl(Box::new(other)),
        })
    }

    /// Whether the formula is syntactically co-safe: in negation normal form it has no
    /// unbounded `G`, `W` or `R` (step-bounded ones unroll into `X`), so every path that
    /// satisfies it has a finite prefix all of whose extensions satisfy it. An operand of
    /// `<=>` counts with both polarities. The formulas `R[...]` accepts besides `F φ`.
    pub fn is_co_safe(&self) -> bool {
        self.co_safe(true)
    }

    /// Whether the formula, under an even (`positive`) or odd number of negations, is co-safe.
    fn co_safe(&self, positive: bool) -> bool {
        use LtlPath as L;
        let bounded = |k: &Spanned<StepBound>| {
            matches!(
                k.node,
                StepBound::Lt(_) | StepBound::Le(_) | StepBound::Eq(_) | StepBound::Interval(..)
            )
        };
        match self {
            L::State(_) => true,
            L::Not(a) => a.co_safe(!positive),
            L::And(a, b) | L::Or(a, b) => a.co_safe(positive) && b.co_safe(positive),
            L::Implies(a, b) => a.co_safe(!positive) && b.co_safe(positive),
            L::Iff(a, b) => [a, b].iter().all(|x| x.co_safe(true) && x.co_safe(false)),
            L::Next(a) => a.co_safe(positive),
            // `F` (and `!G`) and `U` (and `!R`, `!W`: `!(a W b)` is `!b U (!a & !b)`) are
            // least fixpoints; `G`, `W`, `R` (and their negations' duals) greatest ones,
            // co-safe only when a step bound unrolls them.
            L::Eventually(a, k) => (positive || bounded(k)) && a.co_safe(positive),
            L::Globally(a, k) => (!positive || bounded(k)) && a.co_safe(positive),
            L::Until(a, b, k) => {
                (positive || bounded(k)) && a.co_safe(positive) && b.co_safe(positive)
            }
            L::WeakUntil(a, b, k) | L::Release(a, b, k) => {
                (!positive || bounded(k)) && a.co_safe(positive) && b.co_safe(positive)
            }
        }
    }

    /// Whether the formula's top is a temporal operator (`X`, `F`, `G`, `U`, `W`, `R`).
    pub fn is_temporal(&self) -> bool {
        use LtlPath as L;
        matches!(
            self,
            L::Next(_)
                | L::Eventually(..)
                | L::Globally(..)
                | L::Until(..)
                | L::WeakUntil(..)
                | L::Release(..)
        )
    }
}

impl PathFormula {
    /// This path formula as an LTL formula (the PCTL forms become their LTL nodes).
    pub fn to_ltl(&self) -> LtlPath {
        use LtlPath as L;
        let b = |s: &StateFormula| Box::new(L::State(s.clone()));
        match self {
            PathFormula::Next(a) => L::Next(b(a)),
            PathFormula::Eventually(a, k) => L::Eventually(b(a), k.clone()),
            PathFormula::Globally(a, k) => L::Globally(b(a), k.clone()),
            PathFormula::Until(a, c, k) => L::Until(b(a), b(c), k.clone()),
            PathFormula::WeakUntil(a, c, k) => L::WeakUntil(b(a), b(c), k.clone()),
            PathFormula::Release(a, c, k) => L::Release(b(a), b(c), k.clone()),
            PathFormula::Ltl(l) => (**l).clone(),
        }
    }
}

/// A reward path formula (inside `R[...]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RewardPath {
    /// `F φ`: reward accumulated until φ is reached (infinite where that has probability < 1).
    Reachability(StateFormula),
    /// `C<=k`, `C` (total), optionally discounted `C{discount=d}`.
    Cumulative {
        /// The step bound `<=k`, or `None` for total reward.
        bound: Option<Spanned<Expr>>,
        /// The discount factor, when given.
        discount: Option<Spanned<Expr>>,
    },
    /// `I=k`: expected state reward at step k.
    Instantaneous(Spanned<Expr>),
    /// `S`: long-run average reward.
    LongRun,
    /// A co-safe LTL formula other than an unbounded `F φ` (`X F "a"`, `"a" U "b"`,
    /// `(F "a") & (F "b")`): the reward accumulated until the path's prefix satisfies it
    /// (infinite where that has probability < 1), as PRISM's `R=? [ φ ]` (see
    /// [`LtlPath::is_co_safe`]).
    Ltl(LtlPath),
}

/// One property of a properties file (or of `--prop`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Property {
    /// The property's name (`"name": ...`), if any.
    pub name: Option<String>,
    /// The formula.
    pub formula: StateFormula,
    /// Where the property is in the text it was parsed from (ignored by `==` and serde).
    #[serde(skip)]
    pub span: Span,
}

impl PartialEq for Property {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.formula == other.formula
    }
}

impl Property {
    /// An unnamed property without a source span.
    pub fn new(formula: StateFormula) -> Property {
        Property {
            name: None,
            formula,
            span: Span::default(),
        }
    }
}

/// `label "name" = expr;` in a properties file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelDef {
    /// The label's name (its span covers the quoted name).
    pub name: Spanned<String>,
    /// Its defining state formula.
    pub formula: StateFormula,
}

/// A parsed properties file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PropertiesFile {
    /// `const` declarations, in order.
    pub constants: Vec<ConstDecl>,
    /// `label` definitions, in order.
    pub labels: Vec<LabelDef>,
    /// The properties, in order (without the rejected ones).
    pub properties: Vec<Property>,
    /// Properties that parsed but were rejected by a check of the parser (a bound out of
    /// range, a path formula where a state formula belongs, a duplicate name), each with its
    /// located error; the file's other properties are unaffected.
    #[serde(skip)]
    pub rejected: Vec<RejectedProperty>,
}

/// A property of a properties file that the parser rejected ([`PropertiesFile::rejected`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RejectedProperty {
    /// Its position among all the file's properties (the accepted and the rejected ones).
    pub index: usize,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// Its text as written.
    pub text: String,
    /// Where it is written.
    pub span: Span,
    /// Why it was rejected (located in the file's text).
    pub error: crate::PctlError,
}
