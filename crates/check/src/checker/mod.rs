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

mod filters;
mod ltl;
mod rationals;
mod rewards;

use rationals::*;

mod atoms;
mod exact_expr;
use augur_solver::huge_k;
mod ltl_reward;
mod robust;
mod robust_exact;
mod robust_ltl;
mod robust_omega;
#[cfg(test)]
mod test_support;
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
use augur_solver::bounded::{self, Horizon};
use augur_solver::exact_steps::{self, StepRow, Stepper, StepsError};
use augur_solver::{exact, Interrupt, SolveOptions, SolverError};
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
    /// The interval rows the reading normalised, when the current property's float method
    /// checked them (said in its method and JSON).
    normalised: Option<augur_dtmc::interval::Normalised>,
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
            normalised: None,
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
        // Checked on interval rows the reading had to normalise: the method says so.
        let method = match self.normalised.take() {
            Some(c) => MethodUsed::Normalised {
                inner: Box::new(method),
                rows: c.rows,
                first_state: c.first_state,
            },
            None => method,
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
                // is false), or the reason it has none is a located error. PRISM's typing
                // first: an integer `pow` with a negative exponent is the error it is in every
                // other method (rationals would happily answer `pow(2, -1)` = 1/2).
                if self.exact_mode() && exact.is_some() {
                    if let Err(e @ augur_expr::ExprError::NegativeExponent(_)) = expr.eval(|_| None)
                    {
                        return Err(self.error_at(*span, e.to_string()));
                    }
                }
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
                    |c| {
                        c.robust_path(path, *o, *span)
                            .map_err(|e| c.tiny_bounds(e, *span))
                    },
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
                    |c| {
                        c.robust_reward(*structure, path, *span, *o)
                            .map_err(|e| c.tiny_bounds(e, *span))
                    },
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
                let x = Horizon::new(self.matrix(), 1, &self.options.interrupt).rows(&all, ind)?;
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
                    Horizon::any_k(matrix, window, &self.options.interrupt).until(phi, psi)?,
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
        let stop = self.options.interrupt.clone();
        let error = sweep_error(self.sweep_width(), k, 1.0);
        rest.restricted(k, error, |x| {
            Ok(Horizon::any_k(matrix, k, &stop).restricted(phi, x)?)
        })
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

fn compare(v: f64, c: Comparison, t: f64) -> bool {
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
