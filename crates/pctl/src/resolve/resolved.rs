//! The resolved property: every name bound, every constant evaluated, every bound checked; what the checker walks.

use super::walk::join;
use super::*;

/// What a property may name in the model it is checked on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelNames {
    /// The model's labels (`"init"` and `"deadlock"` included when the model defines them).
    pub labels: Vec<String>,
    /// The model's variables and their types (empty when the model has no valuations).
    pub variables: Vec<(String, Type)>,
    /// The model's reward structures in order (`R{1}` is the first); `""` for unnamed ones.
    pub reward_structures: Vec<String>,
    /// The declared ranges `[lo..hi]` of the model's integer variables (PRISM-language models;
    /// empty otherwise): a comparison that no value in the range satisfies (`s=5` with
    /// `s : [0..3]`) is warned about ([`crate::resolve::Resolver::take_warnings`]).
    pub ranges: Vec<(String, i64, i64)>,
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
