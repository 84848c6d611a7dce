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
use augur_expr::{decimal_rational, BinaryOp, Exact, Expr, ExprError, Type, UnaryOp, Value};
use augur_source::{Diagnostic, Severity, SourceFile, Span};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// The checks (shared with the parser, which runs them on bounds that name no constant).

mod resolved;
mod walk;

pub use resolved::{
    ExactForm, Kind, ModelNames, Number, ResolvedFormula, ResolvedLabel, ResolvedLtl, ResolvedPath,
    ResolvedProperty, ResolvedRewardPath, Steps, Threshold,
};

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

// ---------------------------------------------------------------------------------------------
// The resolved form.

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
    /// The declared ranges of integer variables.
    ranges: HashMap<&'a str, (i64, i64)>,
    /// Warnings found while resolving, not yet taken ([`Resolver::take_warnings`]).
    warnings: Vec<Diagnostic>,
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
        PctlError::Resolve(Box::new(self.diagnostic(Severity::Error, span, message)))
    }

    fn diagnostic(&self, severity: Severity, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(severity, message).at(self.source.location(span))
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
            ranges: model
                .ranges
                .iter()
                .map(|(n, lo, hi)| (n.as_str(), (*lo, *hi)))
                .collect(),
            warnings: Vec::new(),
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

    /// The warnings found by the properties resolved since the last call, in order: a
    /// comparison of an integer variable with a constant that no value of its declared range
    /// satisfies ([`ModelNames::ranges`]: `s=5` with `s : [0..3]`), located at the expression.
    ///
    /// ```
    /// use augur_pctl::{parse_property, resolve::{ModelNames, Resolver}};
    /// use augur_expr::Type;
    /// use augur_source::SourceFile;
    /// use std::{collections::BTreeMap, sync::Arc};
    /// let model = ModelNames {
    ///     variables: vec![("s".into(), Type::Int)],
    ///     ranges: vec![("s".into(), 0, 3)],
    ///     ..ModelNames::default()
    /// };
    /// let text = "P=? [ F s=5 ]";
    /// let source = Arc::new(SourceFile::new("--prop", text));
    /// let consts = BTreeMap::new();
    /// let mut resolver = Resolver::new(&model, &consts);
    /// resolver.resolve(&parse_property(text).unwrap(), &source).unwrap();
    /// let warnings = resolver.take_warnings();
    /// assert_eq!(warnings[0].message, "s=5 never holds: s ranges over 0..3");
    /// ```
    pub fn take_warnings(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.warnings)
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

    fn expr(&mut self, e: &Spanned<Expr>, at: At<'_>) -> Result<ResolvedFormula> {
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
                let label = match &err {
                    ExprError::Undeclared(name) if self.is_label(name) => Some(name.clone()),
                    _ => None,
                };
                let d = at.diagnostic(
                    Severity::Error,
                    e.span,
                    why.unwrap_or_else(|| expr_message(err)),
                );
                PctlError::Resolve(Box::new(match label {
                    Some(name) => d.with_note(format!(
                        "did you mean the label \"{name}\"? labels are written in quotes"
                    )),
                    None => d,
                }))
            })?;
        for (cmp, name, (lo, hi)) in never_holds(&substituted, &self.ranges) {
            let shown = cmp.to_string();
            let span = written_at(at.source.text(), e.span, &shown).unwrap_or(e.span);
            let message = format!("{shown} never holds: {name} ranges over {lo}..{hi}");
            self.warnings
                .push(at.diagnostic(Severity::Warning, span, message));
        }
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

    /// Whether `name` is a label of the model or of the properties file.
    fn is_label(&self, name: &str) -> bool {
        self.model.labels.iter().any(|m| m == name) || self.label_defs.contains_key(name)
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
            let known = augur_source::reward_structure_list(names);
            at.err(
                span,
                format!("unknown reward structure {what} (the model has {known})"),
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

/// The comparisons of an integer variable with a number in `e` that no value of the
/// variable's declared range satisfies (`s=5`, `s>3`, `s<0`, `2.5=s` with `s : [0..3]`): each
/// comparison (as written), the variable and its range. Comparisons that some value in the
/// range satisfies are not reported.
pub(crate) fn never_holds<'e>(
    e: &'e Expr,
    ranges: &HashMap<&str, (i64, i64)>,
) -> Vec<(&'e Expr, &'e str, (i64, i64))> {
    let mut found = Vec::new();
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match e {
            Expr::Binary(BinaryOp::Cmp(cmp), l, r) => {
                // `c cmp s` reads as `s cmp' c`.
                let var = match (&**l, &**r) {
                    (Expr::Ident(v), c) => Some((v, *cmp, c)),
                    (c, Expr::Ident(v)) => Some((v, cmp.flip(), c)),
                    _ => None,
                };
                let hit = var.and_then(|(v, cmp, c)| {
                    let (lo, hi) = *ranges.get(v.as_str())?;
                    let c = match c {
                        Expr::Int(i) => *i as f64,
                        Expr::Double(x) | Expr::Decimal(x, _) => *x,
                        _ => return None,
                    };
                    // Some value of the range satisfies `v cmp c` iff one of these does: the
                    // ends (for `<`, `>`, `!=`) and the integers around `c` (for `=`).
                    let (lo_f, hi_f) = (lo as f64, hi as f64);
                    let candidates = [
                        lo_f,
                        hi_f,
                        c.floor().clamp(lo_f, hi_f),
                        c.ceil().clamp(lo_f, hi_f),
                    ];
                    let never = !c.is_nan() && !candidates.iter().any(|x| cmp.holds(x, &c));
                    never.then_some((v.as_str(), (lo, hi)))
                });
                match hit {
                    Some((v, range)) => found.push((e, v, range)),
                    None => stack.extend([&**r, &**l]),
                }
            }
            Expr::Binary(_, l, r) => stack.extend([&**r, &**l]),
            Expr::Unary(_, a) => stack.push(a),
            Expr::Ite(c, a, b) => stack.extend([&**b, &**a, &**c]),
            Expr::Call(_, args) => stack.extend(args.iter().rev()),
            _ => {}
        }
    }
    found
}

/// Where in `span` of `text` the expression printed as `shown` is written (`s = 5` for `s=5`:
/// the same characters but for white space, not inside a longer name or number); `None` when
/// it is not written so (a constant folded: `s=N` printed `s=4`).
fn written_at(text: &str, span: Span, shown: &str) -> Option<Span> {
    let written = text.get(span.start..span.end)?;
    let want: Vec<char> = shown.chars().filter(|c| !c.is_whitespace()).collect();
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    for (start, first) in written.char_indices() {
        if Some(&first) != want.first() || written[..start].ends_with(word) {
            continue;
        }
        let mut chars = written[start..]
            .char_indices()
            .filter(|(_, c)| !c.is_whitespace());
        let mut end = start;
        let matched = want.iter().all(|w| match chars.next() {
            Some((i, c)) if c == *w => {
                end = start + i + c.len_utf8();
                true
            }
            _ => false,
        });
        if matched && !written[end..].starts_with(word) {
            return Some(Span::new(span.start + start, span.start + end));
        }
    }
    None
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
