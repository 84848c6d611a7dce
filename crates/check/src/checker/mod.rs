//! The PCTL checker: walks a [`ResolvedFormula`] bottom-up over a [`Dtmc`] and returns the value
//! of every state ([`StateValues`]), reducing every operator to the numerical problems of
//! `augur-solver`.
//!
//! Semantics follow PRISM (verified against PRISM's regression tests in `shared/prism-tests`):
//!
//! * Step bounds arrive as step counts `[lower, upper]` ([`Steps`]; `<k` is `≤k−1`, `>k` is
//!   `≥k+1`, `=k` is `[k,k]`, checked when the property was resolved). `φ U[a,b] ψ` (`b`
//!   possibly ∞) is computed as PRISM does: first the remainder `φ U≤(b−a) ψ` (unbounded
//!   `φ U ψ` when `b = ∞`; the indicator of ψ when `b = a`), then `a` sweeps of "stay in φ":
//!   `x(s) ← [s⊨φ]·Σ_t P(s,t)·x(t)`.
//! * `F b ψ = true U b ψ`; `G b φ = ¬(F b ¬φ)`; `φ R b ψ = ¬(¬φ U b ¬ψ)`;
//!   `φ W b ψ = ¬((φ∧¬ψ) U b (¬φ∧¬ψ))` (PRISM's rewriting); the negations are `1 − p`, with the
//!   bounds swapped.
//! * Rewards use the expected one-step reward `r(s) = state(s) + Σ_t P(s,t)·trans(s,t)`, except
//!   `I=k`, which (like PRISM) uses the state rewards only: `P^k·state`. `C≤k = Σ_{i<k} E[r(X_i)]`;
//!   discounted `C{discount=d}≤k = Σ_{i<k} d^i·E[r(X_i)]` and `C{discount=d} = Σ_i d^i·E[r(X_i)]`
//!   (checked against PRISM's 22.5, 50, 7.73775, 20.4755); `F φ` is ∞ where φ is reached with
//!   probability < 1; `C` is ∞ where a BSCC with a positive reward is reachable; `S` is the
//!   long-run average of `r`. A co-safe LTL formula `R [ φ ]` is `F` on the product with φ's
//!   automaton (`ltl_reward`).
//! * `P⋈p`, `R⋈r`, `S⋈p` with sound bounds `[lo, hi]` straddling the threshold in some state:
//!   the value is recomputed with a 1000× smaller ε (twice, down to 1e-14); if a state is still
//!   undecided, the point value decides and a note says so ([`CheckResult::notes`]).
//! * Properties-file labels are evaluated once per [`Checker`] (they are shared by every
//!   property that uses them).
//!
//! Nothing here validates a bound or a name: [`augur_pctl::Resolver`] did, once. The checker's
//! own errors are runtime conditions (an empty filter, a numerical failure, a limit hit).

mod atoms;
mod exact_expr;
mod huge_k;
mod ltl_reward;
mod robust;
mod robust_exact;
mod robust_ltl;
mod robust_omega;
#[cfg(test)]
mod tests;

use crate::error::{CheckError, Result};
use crate::result::{
    Bounds, CheckResult, InitialFilter, MethodUsed, NumValues, Scalar, StateValues,
};
use augur_dtmc::{Dtmc, Matrix, RewardStructure, StateSet};
use augur_pctl::BigRational;
use augur_pctl::{
    Comparison, FilterOp, ResolvedFormula, ResolvedLabel, ResolvedLtl, ResolvedPath,
    ResolvedProperty, ResolvedRewardPath, Steps, Threshold,
};
use augur_solver::exact_steps::{self, StepRow, Stepper, StepsError};
use augur_solver::{bounded, exact, Interrupt, SolveOptions, SolverError};
use augur_source::{SourceFile, Span};
use num_traits::{One, Signed, Zero};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Checks resolved properties on one model. The transpose of the transition matrix (needed by
/// every unbounded operator) is built once, on first use, and kept for the following
/// properties, as are the values of properties-file labels.
pub struct Checker<'a> {
    dtmc: &'a Dtmc,
    /// The options as given.
    base: SolveOptions,
    /// The options of the current computation (ε is refined for straddling thresholds).
    options: SolveOptions,
    transpose: Option<Matrix>,
    /// Values of properties-file labels, by the address of their shared definition (the
    /// `Arc` is kept, so the address cannot be reused).
    labels: HashMap<usize, (Arc<ResolvedLabel>, StateSet)>,
    /// Values of the named properties referred to (`"p"`), by the address of their shared
    /// definition and the bits of the ε they were computed with: each is computed once per
    /// property checked, however often (and however deeply nested) it is referred to.
    /// Cleared for each property.
    references: HashMap<(usize, u64), (Arc<ResolvedLabel>, StateValues)>,
    /// How many times a referred property was computed (not taken from `references`).
    #[cfg(test)]
    reference_evaluations: usize,
    /// Methods used by numeric sub-computations of the current property, in order.
    methods: Vec<MethodUsed>,
    notes: Vec<String>,
    /// The texts being checked (the property's, then those of the labels entered), for
    /// locating errors.
    sources: Vec<Arc<SourceFile>>,
    /// The values of the model's formulas that properties name (PRISM-language models).
    formulas: Option<Box<atoms::FormulaValues<'a>>>,
    /// The state limit ([`crate::Limits::max_states`]): LTL automata and products count
    /// against it.
    max_states: Option<usize>,
}

impl<'a> Checker<'a> {
    /// The same checker, evaluating the model formulas a property names (left there by name
    /// when too large to write out) through `formulas`.
    pub(crate) fn with_formulas(mut self, formulas: Box<atoms::FormulaValues<'a>>) -> Self {
        self.formulas = Some(formulas);
        self
    }

    /// A checker for `dtmc` with the solver options (method, precision, interrupt).
    pub fn new(dtmc: &'a Dtmc, options: SolveOptions) -> Checker<'a> {
        Checker {
            dtmc,
            base: options.clone(),
            options,
            transpose: None,
            labels: HashMap::new(),
            references: HashMap::new(),
            #[cfg(test)]
            reference_evaluations: 0,
            methods: Vec::new(),
            notes: Vec::new(),
            sources: Vec::new(),
            formulas: None,
            max_states: None,
        }
    }

    /// The same checker with a state limit for the LTL automata and products it builds.
    pub fn with_max_states(mut self, max_states: Option<usize>) -> Self {
        self.max_states = max_states;
        self
    }

    /// How many times a referred property was computed since the checker was made (a
    /// reference answered from the cache does not count).
    #[cfg(test)]
    pub(crate) fn reference_evaluations(&self) -> usize {
        self.reference_evaluations
    }

    /// The model.
    pub fn dtmc(&self) -> &'a Dtmc {
        self.dtmc
    }

    /// Replaces the solver options for the following checks (e.g. a new interrupt).
    pub fn set_options(&mut self, options: SolveOptions) {
        self.base = options;
    }

    /// Forget the state of the previous property (keeps the transpose and the labels).
    fn reset(&mut self, source: &Arc<SourceFile>) {
        self.options = self.base.clone();
        self.references.clear();
        self.methods.clear();
        self.notes.clear();
        self.sources.clear();
        self.sources.push(Arc::clone(source));
    }

    /// The value of `formula` (written in `source`) in every state.
    pub fn values(
        &mut self,
        formula: &ResolvedFormula,
        source: &Arc<SourceFile>,
    ) -> Result<StateValues> {
        self.reset(source);
        self.state(formula)
    }

    /// Checks a property and extracts the value reported for it: at the initial state; for a
    /// top-level filter, the filter's value; for several initial states, PRISM's convention
    /// (`forall` over them for a boolean property, `range` for a numeric one — the reported
    /// value is the minimum and `initial_filter` says so).
    pub fn check(&mut self, property: &ResolvedProperty) -> Result<CheckResult> {
        let start = Instant::now();
        self.reset(&property.source);
        let mut r = self.property_result(&property.formula)?;
        r.name = property.name.clone();
        r.property = property.text.clone();
        r.seconds = start.elapsed().as_secs_f64();
        Ok(r)
    }

    fn property_result(&mut self, formula: &ResolvedFormula) -> Result<CheckResult> {
        let dtmc = self.dtmc;
        let values = self.state(formula)?;
        let mut methods: Vec<MethodUsed> = Vec::new();
        for m in self.methods.drain(..) {
            if !methods.contains(&m) {
                methods.push(m);
            }
        }
        let init: Vec<usize> = dtmc
            .initial
            .iter()
            .map(|&s| s as usize)
            .filter(|&s| s < dtmc.num_states())
            .collect();
        let first = *init
            .first()
            .ok_or_else(|| CheckError::input("the model has no initial state"))?;
        let mut printed = None;
        let is_filter = match formula {
            ResolvedFormula::Filter { op, states, .. } => {
                if matches!(op, FilterOp::Print | FilterOp::Printall) {
                    let set = self.bool_of(states)?;
                    let mut list = Vec::new();
                    for s in set.ones() {
                        let v = values.at(s);
                        let zero = matches!(v, Scalar::Bool(false)) || v == Scalar::Num(0.0);
                        if *op == FilterOp::Printall || !zero {
                            list.push((s as u32, v));
                        }
                    }
                    printed = Some(list);
                    // print filters return the inner values: report at the initial state(s)
                    false
                } else {
                    true
                }
            }
            _ => false,
        };
        let exact = match &values {
            StateValues::Num(n) if self.exact_mode() => {
                if is_filter || init.len() == 1 {
                    n.exact_at(first).cloned()
                } else {
                    // PRISM's range over the initial states reports the minimum.
                    init.iter()
                        .map(|&s| n.exact_at(s).cloned())
                        .collect::<Option<Vec<_>>>()
                        .and_then(|x| x.into_iter().min())
                }
            }
            _ => None,
        };
        let (value, bounds, initial_filter) = if is_filter || init.len() == 1 {
            let b = match &values {
                StateValues::Num(n) => n.bounds_at(first),
                StateValues::Bool(_) => None,
            };
            (values.at(first), b, None)
        } else {
            match &values {
                StateValues::Bool(set) => {
                    let all = init.iter().all(|&s| set.contains(s));
                    (
                        Scalar::Bool(all),
                        None,
                        Some(InitialFilter::Forall { count: init.len() }),
                    )
                }
                StateValues::Num(n) => {
                    let fold = |v: &[f64], f: fn(f64, f64) -> f64, init_v: f64| {
                        init.iter().map(|&s| v[s]).fold(init_v, f)
                    };
                    let min = fold(&n.values, f64::min, f64::INFINITY);
                    let max = fold(&n.values, f64::max, f64::NEG_INFINITY);
                    let b = n.bounds.as_ref().map(|(lo, hi)| Bounds {
                        lo: fold(lo, f64::min, f64::INFINITY),
                        hi: fold(hi, f64::min, f64::INFINITY),
                    });
                    (
                        Scalar::Num(min),
                        b,
                        Some(InitialFilter::Range {
                            count: init.len(),
                            min,
                            max,
                        }),
                    )
                }
            }
        };
        let method = match &values {
            StateValues::Num(n) => n.method.clone(),
            StateValues::Bool(_) => match methods.len() {
                0 => MethodUsed::Graph,
                1 => methods.remove(0),
                _ => MethodUsed::Several(methods),
            },
        };
        Ok(CheckResult {
            name: None,
            property: String::new(),
            states: values,
            value,
            bounds,
            exact,
            method,
            initial_filter,
            printed,
            notes: std::mem::take(&mut self.notes),
            seconds: 0.0,
        })
    }

    fn n(&self) -> usize {
        self.dtmc.num_states()
    }

    fn matrix(&self) -> &'a Matrix {
        &self.dtmc.matrix
    }

    /// The `width` of [`sweep_error`] for this chain: its longest row, or n + 1 when the
    /// chain is small enough for `huge_k`'s dense squaring.
    fn sweep_width(&self) -> usize {
        let longest = longest_row(self.matrix());
        if self.n() < huge_k::DENSE_MAX_STATES {
            longest.max(self.n() + 1)
        } else {
            longest
        }
    }

    fn transpose(&mut self) -> &Matrix {
        let m = &self.dtmc.matrix;
        self.transpose
            .get_or_insert_with(|| augur_solver::graph::transpose(m))
    }

    /// A user error located at `span` in the text being checked.
    fn error_at(&self, span: Span, message: impl Into<String>) -> CheckError {
        match self.sources.last() {
            Some(src) => CheckError::at(message, src.location(span)),
            None => CheckError::input(message),
        }
    }

    fn full(&self) -> StateSet {
        let mut s = StateSet::with_capacity(self.n());
        s.insert_range(..);
        s
    }

    fn not(&self, set: &StateSet) -> StateSet {
        let mut s = self.full();
        s.difference_with(set);
        s
    }

    fn bool_of(&mut self, f: &ResolvedFormula) -> Result<StateSet> {
        match self.state(f)? {
            StateValues::Bool(s) => Ok(s),
            StateValues::Num(_) => Err(CheckError::Internal(format!(
                "a numeric formula where the resolver checked for a boolean one: {f:?}"
            ))),
        }
    }

    /// `φ W ψ` = ¬(¬ψ U (¬φ ∧ ¬ψ)): the sets (φ ∧ ¬ψ, ¬φ ∧ ¬ψ) of that until, whose
    /// complement is the weak until (also `R`, rewritten to `W` by the resolver).
    fn weak_until_sets(
        &mut self,
        phi: &ResolvedFormula,
        psi: &ResolvedFormula,
    ) -> Result<(StateSet, StateSet)> {
        let phi = self.bool_of(phi)?;
        let psi = self.bool_of(psi)?;
        let not_psi = self.not(&psi);
        let mut left = phi.clone();
        left.intersect_with(&not_psi);
        let mut right = self.not(&phi);
        right.intersect_with(&not_psi);
        Ok((left, right))
    }

    fn file_label(&mut self, label: &Arc<ResolvedLabel>) -> Result<StateSet> {
        let key = Arc::as_ptr(label) as usize;
        if let Some((_, set)) = self.labels.get(&key) {
            return Ok(set.clone());
        }
        self.sources.push(Arc::clone(&label.source));
        let set = self.bool_of(&label.formula);
        self.sources.pop();
        let set = set?;
        self.labels.insert(key, (Arc::clone(label), set.clone()));
        Ok(set)
    }

    fn state(&mut self, f: &ResolvedFormula) -> Result<StateValues> {
        use ResolvedFormula as R;
        Ok(match f {
            R::Expr {
                expr,
                span,
                exact,
                exact_form,
                ty,
            } => {
                // Exact mode: a constant expression is its exact value (`1/10 + 2/10 > 3/10`
                // is false), or the reason it has none is a located error.
                match exact.as_ref().filter(|_| self.exact_mode()) {
                    Some(Ok(exact_expr::Q::Bool(b))) => {
                        return Ok(StateValues::Bool(if *b {
                            self.full()
                        } else {
                            StateSet::with_capacity(self.n())
                        }));
                    }
                    Some(Ok(exact_expr::Q::Num(q))) => {
                        let q = vec![Some(q.clone()); self.n()];
                        return Ok(StateValues::Num(NumValues::rational(
                            q,
                            MethodUsed::Expression,
                        )));
                    }
                    Some(Err(e)) => {
                        return Err(self.error_at(*span, exact_expr::no_exact_value(e, None)));
                    }
                    None => {}
                }
                let dtmc = self.dtmc;
                let none = |_: &str| None;
                let formulas: &atoms::FormulaValues<'_> = match &self.formulas {
                    Some(f) => f.as_ref(),
                    None => &none,
                };
                let vals = atoms::eval_states(dtmc, expr, formulas)
                    .map_err(|message| self.error_at(*span, message))?;
                let n = self.n();
                if self.exact_mode() && exact.is_none() {
                    // Exact mode: the expression over the states' values in rationals
                    // (`s*0.1 = 0.3` holds at s = 3; `s/3` is a fraction).
                    // The unfolded form: the folded `expr` holds the doubles of constant
                    // parts (`pow(1/3, 5000) * x` would be 0 * x).
                    let (form, constants) = match exact_form {
                        Some(f) => (&f.expr, f.constants.as_slice()),
                        None => (expr, &[][..]),
                    };
                    if let Some(v) = self.exact_state_values(form, constants, *span)? {
                        return Ok(v);
                    }
                }
                if vals.iter().all(|v| matches!(v, augur_expr::Value::Bool(_))) {
                    let mut set = StateSet::with_capacity(n);
                    for (s, v) in vals.iter().enumerate() {
                        if *v == augur_expr::Value::Bool(true) {
                            set.insert(s);
                        }
                    }
                    StateValues::Bool(set)
                } else {
                    let values = vals
                        .into_iter()
                        .map(|v| {
                            v.as_f64().ok_or_else(|| {
                                self.error_at(*span, format!("expected a number, found {v}"))
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    // Exact mode: integers are exact (constants were answered above).
                    let q = match exact {
                        Some(_) => None,
                        None => values
                            .iter()
                            .map(|&x| {
                                (x.fract() == 0.0)
                                    .then(|| BigRational::from_float(x))
                                    .flatten()
                                    .map(Some)
                            })
                            .collect::<Option<Vec<_>>>()
                            .filter(|_| *ty == augur_expr::Type::Int),
                    };
                    match q.filter(|_| self.exact_mode()) {
                        Some(q) => StateValues::Num(NumValues::rational(q, MethodUsed::Expression)),
                        None => StateValues::Num(NumValues::exact(values, MethodUsed::Expression)),
                    }
                }
            }
            R::Label { name, span } => match self.dtmc.label(name) {
                Some(set) => StateValues::Bool(set.clone()),
                None => return Err(self.error_at(*span, format!("unknown label \"{name}\""))),
            },
            R::Initial { .. } => {
                let mut s = StateSet::with_capacity(self.n());
                for &i in &self.dtmc.initial {
                    if (i as usize) < self.n() {
                        s.insert(i as usize);
                    }
                }
                StateValues::Bool(s)
            }
            R::FileLabel { label, .. } => StateValues::Bool(self.file_label(label)?),
            R::Not(a) => {
                let a = self.bool_of(a)?;
                StateValues::Bool(self.not(&a))
            }
            R::And(a, b) => {
                let mut a = self.bool_of(a)?;
                a.intersect_with(&self.bool_of(b)?);
                StateValues::Bool(a)
            }
            R::Or(a, b) => {
                let mut a = self.bool_of(a)?;
                a.union_with(&self.bool_of(b)?);
                StateValues::Bool(a)
            }
            R::Implies(a, b) => {
                let a = self.bool_of(a)?;
                let mut r = self.not(&a);
                r.union_with(&self.bool_of(b)?);
                StateValues::Bool(r)
            }
            R::Iff(a, b) => {
                let a = self.bool_of(a)?;
                let b = self.bool_of(b)?;
                let mut x = a.clone();
                x.symmetric_difference_with(&b);
                StateValues::Bool(self.not(&x))
            }
            R::Prob {
                opt,
                threshold,
                path,
                span,
            } => match (self.direction("P", *opt, *span)?, opt) {
                (true, Some(o)) => self.bounded_op(
                    threshold.as_ref(),
                    "P",
                    |c| c.robust_path(path, *o, *span),
                    Some(1.0),
                )?,
                _ => {
                    self.bounded_op(threshold.as_ref(), "P", |c| c.path(path, *span), Some(1.0))?
                }
            },
            R::Reward {
                structure,
                opt,
                threshold,
                path,
                span,
            } => match (self.direction("R", *opt, *span)?, opt) {
                (true, Some(o)) => self.bounded_op(
                    threshold.as_ref(),
                    "R",
                    |c| c.robust_reward(*structure, path, *span, *o),
                    None,
                )?,
                _ => self.bounded_op(
                    threshold.as_ref(),
                    "R",
                    |c| c.reward(*structure, path, *span),
                    None,
                )?,
            },
            R::Steady { span, .. } | R::Time { span, .. } if self.robust() => {
                return Err(self.error_at(
                    *span,
                    "`S` and `T` have no min/max form: they are not supported on interval DTMCs; \
                     use Pmin/Pmax or Rmin/Rmax",
                ))
            }
            R::Steady {
                threshold, formula, ..
            } => self.bounded_op(
                threshold.as_ref(),
                "S",
                |c| {
                    let set = c.bool_of(formula)?;
                    let ind = bounded::indicator(&set, c.n());
                    c.long_run(&ind, None)
                },
                Some(1.0),
            )?,
            R::Time {
                threshold, target, ..
            } => self.bounded_op(
                threshold.as_ref(),
                "T",
                |c| {
                    let set = c.bool_of(target)?;
                    let ones = vec![1.0; c.n()];
                    c.reach_rewards(&set, &ones, None)
                },
                None,
            )?,
            R::Filter {
                op,
                property,
                states,
                span,
            } => self.filter(*op, property, states, *span)?,
            R::Reference { property, .. } => {
                let key = (
                    Arc::as_ptr(property) as usize,
                    self.options.epsilon.to_bits(),
                );
                if let Some((_, v)) = self.references.get(&key) {
                    return Ok(v.clone());
                }
                #[cfg(test)]
                {
                    self.reference_evaluations += 1;
                }
                self.sources.push(Arc::clone(&property.source));
                let v = self.state(&property.formula);
                self.sources.pop();
                let v = v?;
                self.references
                    .insert(key, (Arc::clone(property), v.clone()));
                v
            }
            R::Apply {
                expr,
                args,
                arg_types,
                ty,
                span,
            } => self.apply(expr, args, arg_types, *ty, *span)?,
        })
    }

    /// An operator over state formulas, state by state. The result has bounds when every
    /// numeric operand is exact (its bounds are its value); otherwise none (the operator need
    /// not be monotone), and the point values are reported.
    fn apply(
        &mut self,
        expr: &augur_expr::Expr,
        args: &[ResolvedFormula],
        arg_types: &[augur_expr::Type],
        ty: augur_expr::Type,
        span: Span,
    ) -> Result<StateValues> {
        use augur_expr::{Type, Value};
        let n = self.n();
        let mut operands = Vec::with_capacity(args.len());
        let mut exact = true;
        let mut method = None;
        for a in args {
            let v = self.state(a)?;
            if let StateValues::Num(num) = &v {
                let is_exact = match &num.bounds {
                    Some((lo, hi)) => lo == &num.values && hi == &num.values,
                    None => false,
                };
                exact &= is_exact;
                if method.is_none() && num.method != MethodUsed::Expression {
                    method = Some(num.method.clone());
                }
            }
            operands.push(v);
        }
        let names: Vec<String> = (0..args.len()).map(|i| format!("#{i}")).collect();
        let mut values = Vec::with_capacity(n);
        let mut set = StateSet::with_capacity(n);
        for s in 0..n {
            let env = |name: &str| -> Option<Value> {
                let i = names.iter().position(|m| m == name)?;
                Some(match operands[i].at(s) {
                    Scalar::Bool(b) => Value::Bool(b),
                    Scalar::Num(x) if arg_types[i] == Type::Int && x.fract() == 0.0 => {
                        Value::Int(x as i64)
                    }
                    Scalar::Num(x) => Value::Double(x),
                })
            };
            let v = expr.eval(env).map_err(|e| {
                // The operands are placeholders (`#0`): the caret shows the text instead.
                let what = match e {
                    augur_expr::ExprError::DivisionByZero(_) => "division by zero".to_string(),
                    e => e.to_string(),
                };
                self.error_at(span, format!("in state {s}: {what}"))
            })?;
            match v {
                Value::Bool(b) => {
                    if b {
                        set.insert(s);
                    }
                }
                v => values.push(v.as_f64().unwrap_or(f64::NAN)),
            }
        }
        let method = method.unwrap_or(MethodUsed::Expression);
        // Exact mode: the operator over the operands' rationals, when every numeric operand
        // has them and the operator has an exact result in every state.
        if self.exact_mode() {
            let numeric_exact = operands.iter().all(|o| match o {
                StateValues::Num(num) => num.exact.is_some(),
                StateValues::Bool(_) => true,
            });
            let exact = if numeric_exact {
                let mut out = Vec::with_capacity(n);
                for s in 0..n {
                    let env = |name: &str| -> Option<exact_expr::Q> {
                        let i: usize = name.strip_prefix('#')?.parse().ok()?;
                        Some(match operands.get(i)? {
                            StateValues::Bool(b) => exact_expr::Q::Bool(b.contains(s)),
                            StateValues::Num(num) => exact_expr::Q::Num(num.exact_at(s)?.clone()),
                        })
                    };
                    // Every operand is exact: no exact result is the operator's (issue 13,
                    // item 8: exact mode answers exactly or says it cannot).
                    let v = exact_expr::eval(expr, &env).map_err(|e| {
                        self.error_at(span, exact_expr::no_exact_value(&e, Some(s)))
                    })?;
                    out.push(v);
                }
                Some(out)
            } else {
                None
            };
            if let Some(exact) = exact {
                if ty == Type::Bool {
                    let mut set = StateSet::with_capacity(n);
                    for (s, v) in exact.iter().enumerate() {
                        if *v == exact_expr::Q::Bool(true) {
                            set.insert(s);
                        }
                    }
                    return Ok(StateValues::Bool(set));
                }
                let q = exact
                    .into_iter()
                    .map(|v| match v {
                        exact_expr::Q::Num(q) => Some(Some(q)),
                        exact_expr::Q::Bool(_) => None,
                    })
                    .collect::<Option<Vec<_>>>();
                if let Some(q) = q {
                    return Ok(StateValues::Num(NumValues::rational(q, method)));
                }
            }
        }
        if ty == Type::Bool {
            return Ok(StateValues::Bool(set));
        }
        Ok(StateValues::Num(if exact {
            NumValues::exact(values, method)
        } else {
            NumValues {
                values,
                bounds: None,
                method,
                exact: None,
            }
        }))
    }

    /// `OP=?` or `OP⋈t`: compute the values, then compare (refining sound bounds that
    /// straddle the threshold).
    fn bounded_op(
        &mut self,
        threshold: Option<&Threshold>,
        op: &str,
        compute: impl Fn(&mut Self) -> Result<NumValues>,
        max: Option<f64>,
    ) -> Result<StateValues> {
        // A probability (P, S) read from decimals can come out a few ulps above 1 (the f64 rows
        // of `0.54 0.32 0.14` sum to 1 + 2^-54); clamp values and bounds into [0, max], which
        // can only move them towards the true value.
        let compute = |c: &mut Self| -> Result<NumValues> {
            let num = no_nan(compute(c)?, op)?;
            Ok(match max {
                Some(m) => num.map_monotone(|v| v.into_iter().map(|x| x.clamp(0.0, m)).collect()),
                None => num,
            })
        };
        let num = compute(self)?;
        self.methods.push(num.method.clone());
        let Some(threshold) = threshold else {
            return Ok(StateValues::Num(num));
        };
        let (cmp, t) = (threshold.cmp, threshold.value.value);
        if let Some(exact) = num.exact.as_ref().filter(|_| self.exact_mode()) {
            // Exact values against the exact threshold (`P>1/2` against 1/2 + 10^-30 is
            // true): no rounding to decide.
            self.exact_number(&threshold.value)?;
            let q = &threshold.value.exact;
            let mut set = StateSet::with_capacity(self.n());
            for (s, x) in exact.iter().enumerate() {
                let holds = match x {
                    Some(x) => compare_exact(x, cmp, q),
                    // Infinite: above every threshold.
                    None => matches!(cmp, Comparison::Gt | Comparison::Ge),
                };
                if holds {
                    set.insert(s);
                }
            }
            return Ok(StateValues::Bool(set));
        }
        let mut num = num;
        let saved = self.options.clone();
        let mut undecided = undecided_states(&num, cmp, t);
        let mut rounds = 0;
        while undecided > 0 && rounds < 2 && self.options.epsilon > 1e-14 {
            self.options.epsilon = (self.options.epsilon / 1000.0).max(1e-14);
            num = compute(self)?;
            undecided = undecided_states(&num, cmp, t);
            rounds += 1;
        }
        if rounds > 0 {
            self.notes.push(format!(
                "{op}{cmp} {}: bounds straddled the threshold; recomputed with ε = {:.0e}",
                augur_source::number::exact(t),
                self.options.epsilon
            ));
        }
        self.options = saved;
        if undecided > 0 {
            self.notes.push(format!(
                "{op}{cmp} {}: {undecided} state(s) undecided by the bounds; decided by the point value",
                augur_source::number::exact(t),
            ));
        }
        let mut set = StateSet::with_capacity(self.n());
        for (s, &v) in num.values.iter().enumerate() {
            if compare(v, cmp, t) {
                set.insert(s);
            }
        }
        Ok(StateValues::Bool(set))
    }

    /// The probabilities of `path` (written in the `P` operator at `span`).
    fn path(&mut self, path: &ResolvedPath, span: Span) -> Result<NumValues> {
        match path {
            ResolvedPath::Next(phi) => {
                let set = self.bool_of(phi)?;
                if self.exact_mode() {
                    let rows = vec![StepRow::Sweep; self.n()];
                    let x = self.iterate_exact(
                        rational_indicator(&set, self.n()),
                        1,
                        &rows,
                        None,
                        "X",
                    )?;
                    return Ok(NumValues::rational(
                        x.into_iter().map(Some).collect(),
                        MethodUsed::Next,
                    ));
                }
                let ind = bounded::indicator(&set, self.n());
                let all: Vec<u32> = (0..self.n() as u32).collect();
                let x = bounded::sweep_rows(self.matrix(), &all, ind, 1, &self.options.interrupt)?;
                Ok(NumValues::exact(x, MethodUsed::Next))
            }
            ResolvedPath::Until(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                self.until(&phi, &psi, b)
            }
            ResolvedPath::Eventually(psi, b) => {
                let psi = self.bool_of(psi)?;
                let all = self.full();
                self.until(&all, &psi, b)
            }
            ResolvedPath::Globally(phi, b) => {
                let phi = self.bool_of(phi)?;
                let not_phi = self.not(&phi);
                let all = self.full();
                Ok(self.until(&all, &not_phi, b)?.complement())
            }
            ResolvedPath::WeakUntil(phi, psi, b) => {
                let (left, right) = self.weak_until_sets(phi, psi)?;
                Ok(self.until(&left, &right, b)?.complement())
            }
            ResolvedPath::Release(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let (np, nq) = (self.not(&phi), self.not(&psi));
                Ok(self.until(&np, &nq, b)?.complement())
            }
            ResolvedPath::Ltl(f) => self.ltl(f, span),
        }
    }

    /// `P(φ)` for an LTL formula: its maximal state subformulas become atomic propositions
    /// (each a set of states, computed like any state formula — nested `P` operators
    /// included), then `augur-ltl` builds the product with the formula's deterministic
    /// automaton, finds the accepting BSCCs and solves their reachability with the solver
    /// (sound bounds with the default method).
    ///
    /// The automaton and the product count against the state limit (`--max-states`, the
    /// `max_states` of Python and MCP) as a model does: past it, an error located at the `P`
    /// operator (`span`) that names the option.
    fn ltl(&mut self, f: &ResolvedLtl, span: Span) -> Result<NumValues> {
        let options = self.ltl_options();
        let mut aps = Vec::new();
        let formula = self.ltl_formula(f, &mut aps, &options)?;
        let exact = self.dtmc.exact.as_deref();
        let r = augur_ltl::probabilities(
            self.matrix(),
            exact,
            &aps,
            &formula,
            &options,
            &self.options,
        )
        .map_err(|e| self.ltl_error(e, span))?;
        let method = format!(
            "LTL product ({} states, {} automaton states, {} of {} BSCCs accepting); {}",
            r.product_states, r.automaton_states, r.accepting_bsccs, r.bsccs, r.solution.method
        );
        Ok(self.keep_exact(NumValues {
            values: r.solution.values,
            bounds: r.solution.bounds,
            method: MethodUsed::Solver(method),
            exact: r.solution.exact,
        }))
    }

    /// The limits of LTL automata and products: the defaults, within the state limit.
    fn ltl_options(&self) -> augur_ltl::LtlOptions {
        let mut options = augur_ltl::LtlOptions::default();
        if let Some(max) = self.max_states {
            options.max_product_states = options.max_product_states.min(max);
            options.max_automaton_states = options.max_automaton_states.min(max);
        }
        options
    }

    /// An error of the LTL construction: a size limit hit is a user error located at the `P`
    /// operator (`span`), naming `--max-states` when that limit is the one hit.
    fn ltl_error(&self, e: augur_ltl::LtlError, span: Span) -> CheckError {
        match e {
            augur_ltl::LtlError::ProductTooLarge { limit }
            | augur_ltl::LtlError::AutomatonTooLarge { limit }
                if self.max_states == Some(limit) =>
            {
                self.error_at(
                    span,
                    format!("{e}: the state limit (raise it with --max-states) bounds it"),
                )
            }
            e @ (augur_ltl::LtlError::ProductTooLarge { .. }
            | augur_ltl::LtlError::AutomatonTooLarge { .. }) => self.error_at(span, e.to_string()),
            e => e.into(),
        }
    }

    /// The `augur_ltl` formula of `f`, with the state sets of its propositions in `aps`
    /// (equal sets share one proposition); step bounds are unrolled.
    fn ltl_formula(
        &mut self,
        f: &ResolvedLtl,
        aps: &mut Vec<StateSet>,
        options: &augur_ltl::LtlOptions,
    ) -> Result<augur_ltl::Ltl> {
        use augur_ltl::{Ltl, StepInterval};
        use ResolvedLtl as R;
        let sub =
            |c: &mut Self, g: &ResolvedLtl, aps: &mut Vec<StateSet>| c.ltl_formula(g, aps, options);
        let interval = |c: &Self, steps: &Steps| -> Result<Option<StepInterval>> {
            if steps.lower == 0 && steps.upper.is_none() {
                return Ok(None);
            }
            let largest = steps.upper.unwrap_or(steps.lower);
            if largest > options.max_step_bound {
                return Err(c.error_at(
                    steps.span,
                    format!(
                        "step bound {largest} inside an LTL formula is above the limit {} (bounded operators nested in LTL are unrolled step by step)",
                        options.max_step_bound
                    ),
                ));
            }
            Ok(Some(StepInterval {
                lower: steps.lower,
                upper: steps.upper,
            }))
        };
        // Unrolling copies the operands once per step: refuse, before building it, a formula
        // that would outgrow `max_formula_size` (nested bounds multiply).
        let unrolled = |c: &Self, steps: &Steps, operands: usize| -> Result<()> {
            let copies = steps
                .upper
                .unwrap_or(steps.lower)
                .saturating_add(steps.lower)
                .saturating_add(1);
            let size = (copies as usize).saturating_mul(operands.saturating_add(4));
            if size > options.max_formula_size {
                return Err(c.error_at(
                    steps.span,
                    format!(
                        "the LTL formula is too large once this step bound is unrolled (more than {} nodes; bounded operators nested in LTL are unrolled step by step, so nested bounds multiply)",
                        options.max_formula_size
                    ),
                ));
            }
            Ok(())
        };
        Ok(match f {
            R::State(s) => {
                let set = self.bool_of(s)?;
                let i = match aps.iter().position(|a| *a == set) {
                    Some(i) => i,
                    None => {
                        aps.push(set);
                        aps.len() - 1
                    }
                };
                Ltl::Ap(i as u32)
            }
            R::Not(a) => Ltl::not(sub(self, a, aps)?),
            R::And(a, b) => Ltl::and(sub(self, a, aps)?, sub(self, b, aps)?),
            R::Or(a, b) => Ltl::or(sub(self, a, aps)?, sub(self, b, aps)?),
            R::Implies(a, b) => {
                Ltl::Implies(Box::new(sub(self, a, aps)?), Box::new(sub(self, b, aps)?))
            }
            R::Iff(a, b) => Ltl::Iff(Box::new(sub(self, a, aps)?), Box::new(sub(self, b, aps)?)),
            R::Next(a) => Ltl::next(sub(self, a, aps)?),
            R::Eventually(a, k) => {
                let a = sub(self, a, aps)?;
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, a.size())?;
                }
                match i {
                    None => Ltl::eventually(a),
                    Some(i) => Ltl::eventually_bounded(a, i),
                }
            }
            R::Globally(a, k) => {
                let a = sub(self, a, aps)?;
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, a.size())?;
                }
                match i {
                    None => Ltl::globally(a),
                    Some(i) => Ltl::globally_bounded(a, i),
                }
            }
            R::Until(a, b, k) => {
                let (a, b) = (sub(self, a, aps)?, sub(self, b, aps)?);
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, 2 * (a.size() + b.size()))?;
                }
                match i {
                    None => Ltl::until(a, b),
                    Some(i) => Ltl::until_bounded(a, b, i),
                }
            }
            R::WeakUntil(a, b, k) => {
                let (a, b) = (sub(self, a, aps)?, sub(self, b, aps)?);
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, 2 * (a.size() + b.size()))?;
                }
                match i {
                    None => Ltl::WeakUntil(Box::new(a), Box::new(b)),
                    Some(i) => Ltl::weak_until_bounded(a, b, i),
                }
            }
            R::Release(a, b, k) => {
                let (a, b) = (sub(self, a, aps)?, sub(self, b, aps)?);
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, 2 * (a.size() + b.size()))?;
                }
                match i {
                    None => Ltl::Release(Box::new(a), Box::new(b)),
                    Some(i) => Ltl::release_bounded(a, b, i),
                }
            }
        })
    }

    /// `P(φ U b ψ)` for every state (PRISM's semantics of every step bound).
    fn until(&mut self, phi: &StateSet, psi: &StateSet, steps: &Steps) -> Result<NumValues> {
        if self.exact_mode() && (steps.upper.is_some() || steps.lower > 0) {
            return self.until_exact(phi, psi, steps);
        }
        let matrix = self.matrix();
        let rest = match steps.upper {
            Some(u) => {
                let window = u.saturating_sub(steps.lower);
                NumValues::swept(
                    huge_k::bounded_until(matrix, phi, psi, window, &self.options.interrupt)?,
                    MethodUsed::Bounded { steps: window },
                    sweep_error(self.sweep_width(), window, 1.0),
                    true,
                )
                .exact_on(psi)
            }
            None => {
                let opts = self.options.clone();
                let exact = self.dtmc.exact.as_deref();
                let t = self.transpose();
                let sol = augur_solver::until_probabilities(matrix, t, exact, phi, psi, &opts)?;
                self.keep_exact(sol.into())
            }
        };
        if steps.lower == 0 {
            return Ok(rest);
        }
        let k = steps.lower;
        let method = MethodUsed::RestrictedSteps {
            inner: Box::new(rest.method.clone()),
            steps: k,
        };
        let stop = self.options.interrupt.clone();
        let mut lo_hi = None;
        if let Some((lo, hi)) = rest.bounds {
            lo_hi = Some((
                huge_k::restricted_steps(matrix, phi, lo, k, &stop)?,
                huge_k::restricted_steps(matrix, phi, hi, k, &stop)?,
            ));
        }
        let error = sweep_error(self.sweep_width(), k, 1.0);
        Ok(NumValues {
            values: huge_k::restricted_steps(matrix, phi, rest.values, k, &stop)?,
            bounds: lo_hi,
            method,
            exact: None,
        }
        .widened(error, true))
    }

    /// [`Checker::until`] with a step bound in exact mode: the bounded part by rational
    /// sweeps with the model's exact probabilities, within the budget of
    /// [`exact_steps::MAX_RATIONAL_OPS`] multiply-adds (past it, an error at the bound).
    fn until_exact(&mut self, phi: &StateSet, psi: &StateSet, steps: &Steps) -> Result<NumValues> {
        let n = self.n();
        let (rest, rest_method) = match steps.upper {
            Some(u) => {
                let window = u.saturating_sub(steps.lower);
                let rows: Vec<StepRow> = (0..n)
                    .map(|s| {
                        if psi.contains(s) {
                            StepRow::Keep
                        } else if phi.contains(s) {
                            StepRow::Sweep
                        } else {
                            StepRow::Zero
                        }
                    })
                    .collect();
                let x = self.iterate_exact(
                    rational_indicator(psi, n),
                    window,
                    &rows,
                    Some(steps.span),
                    "the step bound",
                )?;
                (x, MethodUsed::Bounded { steps: window })
            }
            None => {
                let opts = self.options.clone();
                let matrix = self.matrix();
                let exact = self.dtmc.exact.as_deref();
                let t = self.transpose();
                let sol: NumValues =
                    augur_solver::until_probabilities(matrix, t, exact, phi, psi, &opts)?.into();
                let x = sol
                    .exact
                    .and_then(|x| x.into_iter().collect::<Option<Vec<_>>>());
                match x {
                    Some(x) => (x, sol.method),
                    None => {
                        return Err(CheckError::Internal(
                            "exact mode: the unbounded until has no exact result".into(),
                        ))
                    }
                }
            }
        };
        if steps.lower == 0 {
            return Ok(NumValues::rational(
                rest.into_iter().map(Some).collect(),
                rest_method,
            ));
        }
        let k = steps.lower;
        let rows: Vec<StepRow> = (0..n)
            .map(|s| {
                if phi.contains(s) {
                    StepRow::Sweep
                } else {
                    StepRow::Zero
                }
            })
            .collect();
        let x = self.iterate_exact(rest, k, &rows, Some(steps.span), "the step bound")?;
        Ok(NumValues::rational(
            x.into_iter().map(Some).collect(),
            MethodUsed::RestrictedSteps {
                inner: Box::new(rest_method),
                steps: k,
            },
        ))
    }

    /// The rational stepper of exact mode over the model's exact probabilities, within the
    /// budget of [`exact_steps::MAX_RATIONAL_OPS`] multiply-adds.
    fn stepper<'s>(&self, stop: &'s Interrupt) -> Result<Stepper<'s>>
    where
        'a: 's,
    {
        Ok(Stepper::new(
            self.matrix(),
            self.dtmc.exact.as_deref(),
            exact_steps::MAX_RATIONAL_OPS,
            stop,
        )?)
    }

    /// `k` exact sweeps of `v` with the row rules `rows`, within the exact budget (past it,
    /// [`Checker::steps_error`] located at `span`, naming `what`).
    fn iterate_exact(
        &self,
        v: Vec<BigRational>,
        k: u64,
        rows: &[StepRow],
        span: Option<Span>,
        what: &str,
    ) -> Result<Vec<BigRational>> {
        let stop = self.options.interrupt.clone();
        let mut st = self.stepper(&stop)?;
        st.iterate(v, k, rows)
            .map_err(|e| self.steps_error(e, span, what))
    }

    /// The error of an exact step-bounded computation: past the budget, a user error located
    /// at `span` (the step bound) that names the sound alternative.
    fn steps_error(&self, e: StepsError, span: Option<Span>, what: &str) -> CheckError {
        match e {
            StepsError::Solver(e) => e.into(),
            e @ StepsError::OverBudget { .. } => {
                let message = format!(
                    "exact mode: {what} is too large to compute in exact rationals: {e}; \
                     the default method (--method auto) computes it in double precision"
                );
                match span {
                    Some(span) => self.error_at(span, message),
                    None => CheckError::input(message),
                }
            }
        }
    }

    /// The exact expected one-step reward `state(s) + Σ_t P(s,t)·trans(s,t)` of exact mode:
    /// the model's exact probabilities and exact rewards (a PRISM model's `1/3` is 1/3), or,
    /// for a model read from numbers, each reward the decimal it prints as (`0.1` is 1/10),
    /// as the exact solvers read them.
    fn one_step_exact(&self, rs: &RewardStructure) -> Result<Vec<BigRational>> {
        self.one_step(rs)?; // checks the lengths
        let n = self.n();
        let dec = |x: f64| {
            exact::from_decimal(x)
                .ok_or_else(|| CheckError::input(format!("model: a reward is not finite ({x})")))
        };
        let exact_state = rs.exact.as_ref().and_then(|e| e.state.as_ref());
        let exact_trans = rs.exact.as_ref().and_then(|e| e.transition.as_ref());
        let mut out = match (&rs.state, exact_state) {
            (Some(v), Some(q)) if q.len() == v.len() => q.clone(),
            (Some(v), _) => v.iter().map(|&x| dec(x)).collect::<Result<Vec<_>>>()?,
            (None, _) => vec![BigRational::zero(); n],
        };
        if let Some(tr) = &rs.transition {
            let exact_trans = exact_trans.filter(|q| q.len() == tr.len());
            let ptr = self.dtmc.row_ptr();
            let data = self.matrix().data();
            let probs = self.dtmc.exact.as_deref();
            for (s, o) in out.iter_mut().enumerate() {
                for e in ptr[s] as usize..ptr[s + 1] as usize {
                    let r = match exact_trans {
                        Some(q) if q[e].is_zero() => continue,
                        Some(q) => q[e].clone(),
                        None if tr[e] == 0.0 => continue,
                        None => dec(tr[e])?,
                    };
                    let p = match probs {
                        Some(p) => p[e].clone(),
                        None => exact::to_rational(data[e]).unwrap_or_else(BigRational::zero),
                    };
                    *o += p * r;
                }
            }
        }
        Ok(out)
    }

    /// `expr` evaluated in rationals in every state (exact mode), from the states' valuations:
    /// `None` when it reads a name the valuations lack (a model formula computed per state),
    /// so the caller keeps its double evaluation; an error when it has no rational value
    /// (`log`, a non-integer `pow`).
    fn exact_state_values(
        &self,
        expr: &augur_expr::Expr,
        constants: &[(String, exact_expr::Q)],
        span: Span,
    ) -> Result<Option<StateValues>> {
        let n = self.n();
        let mut idents = expr.idents();
        idents.retain(|name| !constants.iter().any(|(c, _)| c == name));
        let vals = match &self.dtmc.valuations {
            Some(v) => Some(v),
            None if idents.is_empty() => None,
            None => return Ok(None),
        };
        let mut used: Vec<(String, usize)> = Vec::new();
        for name in idents {
            match vals.and_then(|v| v.index_of(&name)) {
                Some(i) => used.push((name.to_string(), i)),
                None => return Ok(None),
            }
        }
        let mut out = Vec::with_capacity(n);
        for s in 0..n {
            let env = |name: &str| -> Option<exact_expr::Q> {
                if let Some((_, q)) = constants.iter().find(|(c, _)| c == name) {
                    return Some(q.clone());
                }
                let &(_, i) = used.iter().find(|(u, _)| u == name)?;
                Some(match vals?.get(s, i)? {
                    augur_expr::Value::Int(k) => {
                        exact_expr::Q::Num(BigRational::from_integer(k.into()))
                    }
                    augur_expr::Value::Bool(b) => exact_expr::Q::Bool(b),
                    augur_expr::Value::Double(x) => {
                        exact_expr::Q::Num(augur_expr::decimal_rational(x)?)
                    }
                })
            };
            let v = exact_expr::eval(expr, &env)
                .map_err(|e| self.error_at(span, exact_expr::no_exact_value(&e, Some(s))))?;
            out.push(v);
        }
        if out.iter().all(|v| matches!(v, exact_expr::Q::Bool(_))) {
            let mut set = StateSet::with_capacity(n);
            for (s, v) in out.iter().enumerate() {
                if *v == exact_expr::Q::Bool(true) {
                    set.insert(s);
                }
            }
            return Ok(Some(StateValues::Bool(set)));
        }
        let q = out
            .into_iter()
            .map(|v| match v {
                exact_expr::Q::Num(q) => Some(Some(q)),
                exact_expr::Q::Bool(_) => None,
            })
            .collect::<Option<Vec<_>>>();
        Ok(q.map(|q| StateValues::Num(NumValues::rational(q, MethodUsed::Expression))))
    }

    /// Exact mode: a threshold or discount without an exact rational (past the size budget,
    /// `log`) is a located error, never its double.
    fn exact_number(&self, number: &augur_pctl::resolve::Number) -> Result<()> {
        match &number.exact_error {
            Some(e) => Err(self.error_at(number.span, exact_expr::no_exact_value(e, None))),
            None => Ok(()),
        }
    }

    /// The reward structure `index` of the model.
    fn structure(&self, index: usize, span: Span) -> Result<&'a RewardStructure> {
        self.dtmc.rewards.get(index).ok_or_else(|| {
            self.error_at(
                span,
                format!(
                    "reward structure {} does not exist (the model has {})",
                    index + 1,
                    self.dtmc.rewards.len()
                ),
            )
        })
    }

    /// Expected one-step reward `state(s) + Σ_t P(s,t)·trans(s,t)`.
    fn one_step(&self, rs: &RewardStructure) -> Result<Vec<f64>> {
        let n = self.n();
        if let Some(v) = rs.state.as_ref().filter(|v| v.len() != n) {
            return Err(CheckError::input(format!(
                "model: a state reward vector has {} entries for {n} states",
                v.len()
            )));
        }
        let nnz = self.matrix().nnz();
        if let Some(t) = rs.transition.as_ref().filter(|t| t.len() != nnz) {
            return Err(CheckError::input(format!(
                "model: a transition reward vector has {} entries for {nnz} transitions",
                t.len()
            )));
        }
        Ok(self.dtmc.expected_one_step_rewards(rs))
    }

    fn reward(
        &mut self,
        structure: usize,
        path: &ResolvedRewardPath,
        span: Span,
    ) -> Result<NumValues> {
        let rs = self.structure(structure, span)?;
        let matrix = self.matrix();
        let stop = self.options.interrupt.clone();
        match path {
            ResolvedRewardPath::Reachability(phi) => {
                let target = self.bool_of(phi)?;
                let (r, q) = self.reach_reward_inputs(rs)?;
                self.reach_rewards(&target, &r, q.as_deref())
            }
            ResolvedRewardPath::Ltl(f) => {
                let (r, q) = self.reach_reward_inputs(rs)?;
                self.ltl_reach_rewards(f, &r, q.as_deref(), span)
            }
            ResolvedRewardPath::Cumulative { steps, discount } if self.exact_mode() => {
                if let Some(d) = discount {
                    self.exact_number(d)?;
                }
                let d = discount
                    .as_ref()
                    .map_or_else(BigRational::one, |d| d.exact.clone());
                match steps {
                    Some(k) => {
                        let r = self.one_step_exact(rs)?;
                        let mut st = self.stepper(&stop)?;
                        let x = st
                            .cumulative(r, &d, *k)
                            .map_err(|e| self.steps_error(e, Some(span), "the step bound"))?;
                        Ok(NumValues::rational(
                            x.into_iter().map(Some).collect(),
                            MethodUsed::Cumulative {
                                steps: *k,
                                discounted: !d.is_one(),
                            },
                        ))
                    }
                    None if !d.is_one() => {
                        let r = self.one_step_exact(rs)?;
                        let x = exact_steps::discounted_total(
                            matrix,
                            self.dtmc.exact.as_deref(),
                            r,
                            &d,
                            &stop,
                        )?;
                        Ok(NumValues::rational(
                            x.into_iter().map(Some).collect(),
                            MethodUsed::Solver(format!("exact ({} unknowns)", self.n())),
                        ))
                    }
                    None => {
                        let mut r = self.one_step(rs)?;
                        // The exact one-step rewards (with transition rewards, not the
                        // decimal of `r`'s doubles).
                        let q = self.one_step_exact(rs)?;
                        nonzero_where_exact(&mut r, &q);
                        let opts = self.options.clone();
                        let exact = self.dtmc.exact.as_deref();
                        let t = self.transpose();
                        let sol = augur_solver::total_rewards_exact(
                            matrix,
                            t,
                            exact,
                            &r,
                            Some(&q),
                            &opts,
                        )?;
                        Ok(self.keep_exact(sol.into()))
                    }
                }
            }
            ResolvedRewardPath::Instantaneous(k) if self.exact_mode() => {
                let mut r = rs.clone();
                r.transition = None;
                let v = self.one_step_exact(&r)?;
                let rows = vec![StepRow::Sweep; self.n()];
                let x = self.iterate_exact(v, *k, &rows, Some(span), "the step bound")?;
                Ok(NumValues::rational(
                    x.into_iter().map(Some).collect(),
                    MethodUsed::Instantaneous { steps: *k },
                ))
            }
            ResolvedRewardPath::Cumulative { steps, discount } => {
                let r = self.one_step(rs)?;
                let d = discount.as_ref().map_or(1.0, |d| d.value);
                match steps {
                    Some(k) => {
                        let x = huge_k::cumulative(matrix, &r, d, *k, &stop)?;
                        // Every partial sum is at most k·R in magnitude (R the largest
                        // one-step reward), the closed-form finish included; a discount d < 1
                        // shrinks step i's error by d^i, so at most 1/(1 − d) steps count.
                        let steps = if d < 1.0 {
                            (*k).min((1.0 / (1.0 - d)).ceil() as u64)
                        } else {
                            *k
                        };
                        let scale = max_abs(&x) + steps as f64 * max_abs(&r);
                        let error = sweep_error(self.sweep_width(), steps, scale);
                        let nonnegative = r.iter().all(|&v| v >= 0.0);
                        Ok(NumValues::swept(
                            x,
                            MethodUsed::Cumulative {
                                steps: *k,
                                discounted: d < 1.0,
                            },
                            error,
                            nonnegative,
                        ))
                    }
                    None if d < 1.0 => self.discounted_total(&r, d),
                    None => {
                        let q = if self.exact_inputs() {
                            Some(self.one_step_exact(rs)?)
                        } else {
                            None
                        };
                        let opts = self.options.clone();
                        let matrix = self.matrix();
                        let exact = self.dtmc.exact.as_deref();
                        let t = self.transpose();
                        let sol = augur_solver::total_rewards_exact(
                            matrix,
                            t,
                            exact,
                            &r,
                            q.as_deref(),
                            &opts,
                        )?;
                        Ok(self.keep_exact(sol.into()))
                    }
                }
            }
            ResolvedRewardPath::Instantaneous(k) => {
                let v = match &rs.state {
                    Some(v) if v.len() == self.n() => v.clone(),
                    Some(v) => {
                        return Err(CheckError::input(format!(
                            "model: a state reward vector has {} entries for {} states",
                            v.len(),
                            self.n()
                        )))
                    }
                    None => vec![0.0; self.n()],
                };
                let (scale, nonnegative) = (max_abs(&v), v.iter().all(|&r| r >= 0.0));
                let x = huge_k::power_apply(matrix, v, *k, &stop)?;
                let error = sweep_error(self.sweep_width(), *k, scale);
                Ok(NumValues::swept(
                    x,
                    MethodUsed::Instantaneous { steps: *k },
                    error,
                    nonnegative,
                ))
            }
            ResolvedRewardPath::LongRun => {
                let r = self.one_step(rs)?;
                let q = if self.exact_inputs() {
                    Some(self.one_step_exact(rs)?)
                } else {
                    None
                };
                self.long_run(&r, q.as_deref())
            }
        }
    }

    /// `R=? [ C{discount=d} ]`: value iteration when it needs few sweeps (it contracts by
    /// `d` per sweep) and its values stay finite; otherwise (a discount close to 1, values
    /// beyond the doubles) the linear system of a chain stopping with probability `1 − d`,
    /// solved by the configured sound method. Negative rewards: value iteration only.
    fn discounted_total(&self, r: &[f64], d: f64) -> Result<NumValues> {
        let o = self.options.clone();
        let matrix = self.matrix();
        let nonnegative = r.iter().all(|&x| x >= 0.0);
        // Sweeps for the contraction to shrink an error of 1 below ε (1 − d)/d.
        let predicted = ((o.epsilon * (1.0 - d)).ln() / d.ln()).ceil();
        if !nonnegative || predicted <= DISCOUNT_SWEEPS as f64 {
            let budget = if nonnegative {
                o.max_iterations.min(DISCOUNT_SWEEPS)
            } else {
                o.max_iterations
            };
            let dt = bounded::discounted_total(
                matrix,
                r,
                d,
                o.epsilon,
                o.relative,
                budget,
                &o.interrupt,
            )?;
            match dt {
                Some(dt) if dt.values.iter().chain(&dt.hi).all(|v| v.is_finite()) => {
                    return Ok(NumValues {
                        values: dt.values,
                        bounds: Some((dt.lo, dt.hi)),
                        method: MethodUsed::DiscountedIteration { sweeps: dt.sweeps },
                        exact: None,
                    })
                }
                _ if !nonnegative => {
                    return Err(SolverError::NotConverged {
                        method: "discounted value iteration".into(),
                        iterations: budget,
                        difference: f64::INFINITY,
                    }
                    .into())
                }
                _ => {}
            }
        }
        let mut values: NumValues =
            augur_solver::discounted_total_rewards(matrix, r, d, &o)?.into();
        // The stopping chain's probabilities d·p and 1 − d are doubles: an exact elimination
        // of it is exact for that chain, not for the discount as written (0.999999 is not
        // 999999/10⁶ as a double), so no rational is claimed (docs/exact.md).
        values.exact = None;
        Ok(values)
    }

    /// The one-step rewards of `rs` for a reachability reward, and their exact values when the
    /// solver gets exact inputs (a reward exactly 0 is then 0 in the doubles too).
    fn reach_reward_inputs(
        &self,
        rs: &RewardStructure,
    ) -> Result<(Vec<f64>, Option<Vec<BigRational>>)> {
        let mut r = self.one_step(rs)?;
        let q = if self.exact_inputs() {
            Some(self.one_step_exact(rs)?)
        } else {
            None
        };
        if let Some(q) = &q {
            nonzero_where_exact(&mut r, q);
        }
        Ok((r, q))
    }

    /// Expected reward until `target`; `q`: the exact one-step rewards (exact mode).
    fn reach_rewards(
        &mut self,
        target: &StateSet,
        r: &[f64],
        q: Option<&[BigRational]>,
    ) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol = augur_solver::reachability_rewards_exact(matrix, t, exact, target, r, q, &opts)?;
        Ok(self.keep_exact(sol.into()))
    }

    /// Long-run average of `v`; `q`: its exact values (exact mode).
    fn long_run(&mut self, v: &[f64], q: Option<&[BigRational]>) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol = augur_solver::long_run_average_exact(matrix, t, exact, v, q, &opts)?;
        Ok(self.keep_exact(sol.into()))
    }

    /// Whether results are reported as exact rationals (`Method::Exact`: the model's
    /// probabilities are the rationals written).
    fn exact_mode(&self) -> bool {
        self.options.method == augur_solver::Method::Exact
    }

    /// Whether the solvers get exact inputs: in exact mode, and in the default mode for a model
    /// that carries its exact probabilities (a small PRISM model, see `Model::load`), so that
    /// the default method's exact elimination gives the exact value of the model as written
    /// (bounds one ulp wide must contain it: `0.7`'s double is not 7/10).
    fn exact_inputs(&self) -> bool {
        self.exact_mode() || self.dtmc.exact.is_some()
    }

    /// Drops the exact rationals of a solver's result outside exact mode (there they would
    /// be exact for the `f64` model only, not for the numbers written).
    fn keep_exact(&self, mut num: NumValues) -> NumValues {
        if !self.exact_mode() {
            num.exact = None;
        }
        num
    }

    /// `filter(op, property, states)`: the property aggregated over the states (PRISM's
    /// filters), the same value in every state (`argmin`/`argmax`: the set of states).
    fn filter(
        &mut self,
        op: FilterOp,
        property: &ResolvedFormula,
        states: &ResolvedFormula,
        span: Span,
    ) -> Result<StateValues> {
        let n = self.n();
        let inner = self.state(property)?;
        let set = self.bool_of(states)?;
        let states: Vec<usize> = set.ones().filter(|&s| s < n).collect();
        if states.is_empty() {
            return Err(self.error_at(span, "the filter's state set is empty"));
        }
        Ok(match (op, &inner) {
            (FilterOp::Print | FilterOp::Printall, _) => inner,
            (FilterOp::First, _) | (FilterOp::State, _) => {
                if op == FilterOp::State && states.len() != 1 {
                    return Err(self.error_at(
                        span,
                        format!(
                            "filter state needs exactly one state, the filter has {}",
                            states.len()
                        ),
                    ));
                }
                let s = states[0];
                match &inner {
                    StateValues::Bool(b) => everywhere_bool(n, b.contains(s)),
                    StateValues::Num(num) => everywhere_num(
                        n,
                        num.values[s],
                        num.bounds.as_ref().map(|(lo, hi)| (lo[s], hi[s])),
                        num.method.clone(),
                        num.exact_at(s).cloned(),
                    ),
                }
            }
            (FilterOp::Count, StateValues::Bool(b)) => {
                let c = states.iter().filter(|&&s| b.contains(s)).count();
                let q = self
                    .exact_mode()
                    .then(|| BigRational::from_integer(c.into()));
                everywhere_num(
                    n,
                    c as f64,
                    Some((c as f64, c as f64)),
                    MethodUsed::Count,
                    q,
                )
            }
            (FilterOp::Forall, StateValues::Bool(b)) => {
                everywhere_bool(n, states.iter().all(|&s| b.contains(s)))
            }
            (FilterOp::Exists, StateValues::Bool(b)) => {
                everywhere_bool(n, states.iter().any(|&s| b.contains(s)))
            }
            (FilterOp::Count | FilterOp::Forall | FilterOp::Exists, _) => {
                return Err(self.error_at(span, format!("filter {op} needs a boolean property")))
            }
            (_, StateValues::Bool(_)) => {
                return Err(self.error_at(span, format!("filter {op} needs a numeric property")))
            }
            (_, StateValues::Num(num)) => aggregate_numeric(op, num, &states, n)?,
        })
    }
}

/// A numeric filter (`min`, `max`, `sum`, `avg`, `argmin`, `argmax`, `range`) of `num` over
/// `states` (not empty), in a chain of `n` states; exact when every state's value is.
fn aggregate_numeric(
    op: FilterOp,
    num: &NumValues,
    states: &[usize],
    n: usize,
) -> Result<StateValues> {
    let pick =
        |v: &[f64], f: fn(f64, f64) -> f64, init: f64| states.iter().map(|&s| v[s]).fold(init, f);
    let (values, bounds, method) = (&num.values, &num.bounds, &num.method);
    let exact: Option<Vec<BigRational>> =
        states.iter().map(|&s| num.exact_at(s).cloned()).collect();
    let exact_min = exact.as_ref().and_then(|x| x.iter().min().cloned());
    let exact_max = exact.as_ref().and_then(|x| x.iter().max().cloned());
    let (mn, mx) = (
        pick(values, f64::min, f64::INFINITY),
        pick(values, f64::max, f64::NEG_INFINITY),
    );
    Ok(match op {
        FilterOp::Min | FilterOp::Max => {
            let (v, f, init): (f64, fn(f64, f64) -> f64, f64) = if op == FilterOp::Min {
                (mn, f64::min, f64::INFINITY)
            } else {
                (mx, f64::max, f64::NEG_INFINITY)
            };
            let b = bounds
                .as_ref()
                .map(|(lo, hi)| (pick(lo, f, init), pick(hi, f, init)));
            let q = if op == FilterOp::Min {
                exact_min
            } else {
                exact_max
            };
            everywhere_num(n, v, b, method.clone(), q)
        }
        FilterOp::Sum | FilterOp::Avg => {
            let k = if op == FilterOp::Avg {
                states.len() as f64
            } else {
                1.0
            };
            let sum = |v: &[f64]| states.iter().map(|&s| v[s]).sum::<f64>() / k;
            let b = bounds.as_ref().map(|(lo, hi)| (sum(lo), sum(hi)));
            let q = exact.map(|x| {
                let total: BigRational = x.into_iter().sum();
                total / BigRational::from_integer((k as i64).into())
            });
            match q {
                // The exact sum decides the double and its bounds.
                Some(q) => StateValues::Num(NumValues::rational(vec![Some(q); n], method.clone())),
                None => everywhere_num(n, sum(values), b, method.clone(), None),
            }
        }
        FilterOp::Argmin | FilterOp::Argmax => {
            let target = if op == FilterOp::Argmin { mn } else { mx };
            let target_q = if op == FilterOp::Argmin {
                exact_min
            } else {
                exact_max
            };
            let mut s = StateSet::with_capacity(n);
            for &st in states {
                let hit = match &target_q {
                    Some(q) => num.exact_at(st) == Some(q),
                    None => values[st] == target,
                };
                if hit {
                    s.insert(st);
                }
            }
            StateValues::Bool(s)
        }
        FilterOp::Range => {
            // The value is the minimum; the bounds are [min lo, max hi], an interval
            // containing the values of all the filter's states.
            let b = match bounds {
                Some((lo, hi)) => (
                    pick(lo, f64::min, f64::INFINITY),
                    pick(hi, f64::max, f64::NEG_INFINITY),
                ),
                None => (mn, mx),
            };
            everywhere_num(
                n,
                mn,
                Some(b),
                MethodUsed::Range {
                    states: states.len(),
                },
                exact_min,
            )
        }
        // Handled above.
        FilterOp::Print
        | FilterOp::Printall
        | FilterOp::First
        | FilterOp::State
        | FilterOp::Count
        | FilterOp::Forall
        | FilterOp::Exists => return Err(CheckError::Internal(format!("unexpected filter {op}"))),
    })
}

/// `v` (with bounds `b` and exact value `q`) in each of `n` states.
fn everywhere_num(
    n: usize,
    v: f64,
    b: Option<(f64, f64)>,
    method: MethodUsed,
    q: Option<BigRational>,
) -> StateValues {
    StateValues::Num(NumValues {
        values: vec![v; n],
        bounds: b.map(|(lo, hi)| (vec![lo; n], vec![hi; n])),
        method,
        exact: q.map(|q| vec![Some(q); n]),
    })
}

/// The indicator of `set` over `n` states, in rationals.
/// A bound of the rounding error of `k` floating-point sweeps of a chain whose rows have at
/// most `width` entries, on values of magnitude at most `scale` at every step (the sweeps of a
/// step-bounded operator). Each sweep computes, per state, a dot product of at most `width`
/// terms, from stored probabilities that are themselves rounded, plus a reward: by the
/// standard bound of a dot product (Higham, *Accuracy and Stability of Numerical Algorithms*,
/// §3.1) it errs by at most γ·scale with γ = m·u/(1 − m·u), m = `width` + 2, u = 2⁻⁵³. A
/// row's weights sum to at most 1 + γ, so it carries the earlier errors forward growing them
/// by that factor at most: after `k` sweeps the error is at most k·γ·scale·(1 + γ)^k. The
/// repeated squaring of a small chain (`huge_k`) errs alike with `width` = n + 1 (the error
/// of a product of squarings doubles with each squaring while the power doubles); the
/// undiscounted cumulative reward finished in closed form there is covered by the caller's
/// `scale` (it passes k·R beside the largest value). Twice that, for what the argument
/// rounds away (the clamping of rows that sum a few ulps above 1).
pub(crate) fn sweep_error(width: usize, k: u64, scale: f64) -> f64 {
    let u = f64::EPSILON / 2.0;
    let m = (width + 2) as f64;
    let gamma = m * u / (1.0 - m * u);
    let k = k as f64;
    2.0 * k * gamma * scale * (k * gamma).exp()
}

/// The number of entries of the matrix's longest row.
pub(crate) fn longest_row(m: &Matrix) -> usize {
    m.indptr().as_slice().map_or(0, |p| {
        p.windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    })
}

/// The largest magnitude among finite values (0 when none).
fn max_abs(values: &[f64]) -> f64 {
    values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0, |m: f64, v| m.max(v.abs()))
}

fn rational_indicator(set: &StateSet, n: usize) -> Vec<BigRational> {
    (0..n)
        .map(|s| {
            if set.contains(s) {
                BigRational::one()
            } else {
                BigRational::zero()
            }
        })
        .collect()
}

/// All `n` states when `b`, none otherwise.
fn everywhere_bool(n: usize, b: bool) -> StateValues {
    let mut s = StateSet::with_capacity(n);
    if b {
        s.insert_range(..);
    }
    StateValues::Bool(s)
}

/// Value iteration for a discounted total reward is used up to this many sweeps; beyond, the
/// linear system is solved instead.
const DISCOUNT_SWEEPS: u64 = 2_000;

fn compare(v: f64, c: Comparison, t: f64) -> bool {
    match c {
        Comparison::Lt => v < t,
        Comparison::Le => v <= t,
        Comparison::Gt => v > t,
        Comparison::Ge => v >= t,
    }
}

fn compare_exact(v: &BigRational, c: Comparison, t: &BigRational) -> bool {
    match c {
        Comparison::Lt => v < t,
        Comparison::Le => v <= t,
        Comparison::Gt => v > t,
        Comparison::Ge => v >= t,
    }
}

/// States whose sound bounds do not decide `value ⋈ t`.
fn undecided_states(num: &NumValues, c: Comparison, t: f64) -> usize {
    let Some((lo, hi)) = &num.bounds else {
        return 0;
    };
    lo.iter()
        .zip(hi)
        .filter(|(&l, &h)| compare(l, c, t) != compare(h, c, t))
        .count()
}

/// Refuses values or bounds that are not numbers: an overflow (rewards near `f64::MAX` summed
/// to `inf − inf`) must be an error, never a NaN printed as a value or compared with a
/// threshold (where it would silently give `false`).
fn no_nan(num: NumValues, op: &str) -> Result<NumValues> {
    let nan = |v: &[f64]| v.iter().any(|x| x.is_nan());
    let bad = nan(&num.values)
        || num
            .bounds
            .as_ref()
            .is_some_and(|(lo, hi)| nan(lo) || nan(hi));
    if bad {
        return Err(CheckError::input(format!(
            "{op}: the computation overflowed (the model's rewards or values are too large \
             for double precision: a sum reached inf − inf); scale them down"
        )));
    }
    Ok(num)
}

/// Exact mode: the one-step rewards' doubles `r` beside their rationals `q`, with a reward
/// whose double underflowed to 0 (`3^-5000 · 1/2`) made the smallest double of its sign, so
/// that the graph analyses reading `r` (states of zero reward) see what the rationals say.
fn nonzero_where_exact(r: &mut [f64], q: &[BigRational]) {
    for (x, q) in r.iter_mut().zip(q) {
        if *x == 0.0 && !q.is_zero() {
            *x = if q.is_negative() {
                -f64::from_bits(1)
            } else {
                f64::from_bits(1)
            };
        }
    }
}
