//! The PCTL abstract syntax tree (PRISM syntax, DTMC fragment, plus Storm's `T` operator).

use crate::Spanned;
use augur_expr::{ConstDecl, Expr};
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
        /// The bound or query; its span covers the operator (`P>=0.5`).
        bound: Spanned<Bound>,
        /// The path formula.
        path: Box<PathFormula>,
    },
    /// `R{"name"}⋈r [ reward path ]` / `R=? [ ... ]`
    Reward {
        /// The reward structure (the first one when omitted).
        structure: Option<RewardRef>,
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
    /// The properties, in order.
    pub properties: Vec<Property>,
}
