//! The PCTL checker: walks a [`StateFormula`] bottom-up over a [`Dtmc`] and returns the value
//! of every state ([`Values`]).
//!
//! Semantics follow PRISM (verified against PRISM's regression tests in `shared/prism-tests`):
//!
//! * Step bounds: `<k` is `≤k−1` (error when `k ≤ 0`), `>k` is `≥k+1`, `=k` is `[k,k]`;
//!   negative bounds and empty intervals are errors. `φ U[a,b] ψ` (any bound with lower end
//!   `a` and upper end `b`, possibly ∞) is computed as PRISM does: first the remainder
//!   `φ U≤(b−a) ψ` (unbounded `φ U ψ` when `b = ∞`; the indicator of ψ when `b = a`), then `a`
//!   sweeps of "stay in φ": `x(s) ← [s⊨φ]·Σ_t P(s,t)·x(t)`.
//! * `F b ψ = true U b ψ`; `G b φ = ¬(F b ¬φ)`; `φ R b ψ = ¬(¬φ U b ¬ψ)`;
//!   `φ W b ψ = ¬((φ∧¬ψ) U b (¬φ∧¬ψ))` (PRISM's rewriting); the negations are `1 − p`, with the
//!   bounds swapped.
//! * Rewards use the expected one-step reward `r(s) = state(s) + Σ_t P(s,t)·trans(s,t)`, except
//!   `I=k`, which (like PRISM) uses the state rewards only: `P^k·state`. `C≤k = Σ_{i<k} E[r(X_i)]`;
//!   discounted `C{discount=d}≤k = Σ_{i<k} d^i·E[r(X_i)]` and `C{discount=d} = Σ_i d^i·E[r(X_i)]`
//!   (checked against PRISM's 22.5, 50, 7.73775, 20.4755); `F φ` is ∞ where φ is reached with
//!   probability < 1; `C` is ∞ where a BSCC with a positive reward is reachable; `S` is the
//!   long-run average of `r`.
//! * `P⋈p`, `R⋈r`, `S⋈p` with sound bounds `[lo, hi]` straddling the threshold in some state:
//!   the value is recomputed with a 1000× smaller ε (twice, down to 1e-14); if a state is still
//!   undecided, the point value decides and a note says so ([`PropertyResult::notes`]).
//!
//! The main entry points are [`check`] (per-state values of a formula) and [`check_property`]
//! (the value at the initial states, as reported by `augur check`).
//!
//! ```
//! use augur_solver::check::{check, CheckContext, Values};
//! use augur_dtmc::{Dtmc, Matrix, StateSet};
//! use augur_pctl::{Bound, PathFormula, StateFormula, StepBound};
//! use augur_expr::Expr;
//! // 0 → {0: 1/2, 1: 1/2}, 1 → 1 (absorbing, labelled "goal")
//! let mut tri = sprs::TriMatI::<f64, u32>::new((2, 2));
//! tri.add_triplet(0, 0, 0.5);
//! tri.add_triplet(0, 1, 0.5);
//! tri.add_triplet(1, 1, 1.0);
//! let mut goal = StateSet::with_capacity(2);
//! goal.insert(1);
//! let dtmc = Dtmc { matrix: tri.to_csr(), initial: vec![0], labels: vec![("goal".into(), goal)],
//!                   rewards: vec![], valuations: None, exact: None };
//! let f = StateFormula::Prob { bound: Bound::Query, path: Box::new(PathFormula::Eventually(
//!     StateFormula::Label("goal".into()), StepBound::Le(Expr::Int(2)))) };
//! let Values::Num { values, .. } = check(&dtmc, &f, &CheckContext::default()).unwrap() else { panic!() };
//! assert!((values[0] - 0.75).abs() < 1e-12);
//! ```

mod atoms;
mod bounded;
#[cfg(test)]
mod tests;

pub use bounded::{horizon_table, HorizonTable};

use crate::numeric::{SolveOptions, SolverError};
use augur_dtmc::{Dtmc, DtmcError, Matrix, RewardStructure, StateSet};
use augur_expr::{Expr, Value};
use augur_pctl::{
    Bound, Comparison, FilterOp, PathFormula, RewardPath, RewardRef, StateFormula, StepBound,
};
use std::collections::HashMap;

/// Errors of the checker.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// An expression could not be evaluated (unknown identifier, type error, ...).
    #[error("{0}")]
    Expr(String),
    /// A label that neither the model nor the properties file defines.
    #[error("unknown label \"{name}\" (known labels: {known})")]
    UnknownLabel {
        /// The label asked for.
        name: String,
        /// The labels that exist, comma-separated.
        known: String,
    },
    /// A reward structure that the model does not have.
    #[error("unknown reward structure {name} (the model has: {known})")]
    UnknownRewards {
        /// The structure asked for, as written.
        name: String,
        /// The structures that exist.
        known: String,
    },
    /// A property that is not well-formed for checking (bad bound, wrong operand type, ...).
    #[error("{0}")]
    Invalid(String),
    /// The model is inconsistent with what the checker needs.
    #[error("model: {0}")]
    Model(String),
    /// A numerical error from the solver.
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// Result alias of the checker.
pub type Result<T, E = CheckError> = std::result::Result<T, E>;

/// What the checker needs besides the model and the formula.
#[derive(Clone, Debug, Default)]
pub struct CheckContext {
    /// Constant values by name (from the model, the properties file and `--const`).
    pub constants: HashMap<String, Value>,
    /// Labels defined in the properties file (`label "name" = ...;`).
    pub labels: HashMap<String, StateFormula>,
    /// Options for the numerical solvers.
    pub options: SolveOptions,
}

/// The value of a formula in every state.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// A boolean per state: the set of states where it holds.
    Bool(StateSet),
    /// A number per state.
    Num {
        /// The value of every state (`f64::INFINITY` for infinite rewards).
        values: Vec<f64>,
        /// Guaranteed `[lo, hi]` per state when every step was sound.
        bounds: Option<(Vec<f64>, Vec<f64>)>,
        /// What computed it.
        method: String,
    },
}

/// One value (of one state, or of a filter).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A truth value.
    Bool(bool),
    /// A number (possibly infinite).
    Num(f64),
}

/// How the reported value was obtained from the values at several initial states.
#[derive(Clone, Debug, PartialEq)]
pub enum InitialFilter {
    /// Boolean property: it holds in all `count` initial states (`forall`).
    Forall {
        /// Number of initial states.
        count: usize,
    },
    /// Numeric property: the range `[min, max]` over `count` initial states; the reported value
    /// is `min`.
    Range {
        /// Number of initial states.
        count: usize,
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
}

/// The result of checking one property, as reported to the user.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyResult {
    /// The values of every state.
    pub values: Values,
    /// The value at the (single) initial state, the value of a top-level filter, or the
    /// PRISM filter over several initial states (see `initial_filter`).
    pub value: Scalar,
    /// Sound bounds of `value`, when known.
    pub bounds: Option<(f64, f64)>,
    /// The method(s) used.
    pub method: String,
    /// Set when the model has several initial states and the property is not a filter.
    pub initial_filter: Option<InitialFilter>,
    /// For a top-level `print`/`printall` filter: the printed `(state, value)` pairs.
    pub printed: Option<Vec<(u32, Scalar)>>,
    /// Remarks worth showing (undecided comparisons, ...).
    pub notes: Vec<String>,
}

/// Check a formula: the value of every state.
pub fn check(dtmc: &Dtmc, formula: &StateFormula, ctx: &CheckContext) -> Result<Values> {
    CheckSession::new(dtmc, ctx).check(formula)
}

/// Check a property and extract the value reported for it: at the initial state; for a
/// top-level filter, the filter's value; for several initial states, PRISM's convention
/// (`forall` over them for a boolean property, `range` for a numeric one — the reported value
/// is the minimum and `initial_filter` says so).
pub fn check_property(
    dtmc: &Dtmc,
    formula: &StateFormula,
    ctx: &CheckContext,
) -> Result<PropertyResult> {
    CheckSession::new(dtmc, ctx).check_property(formula)
}

/// Several properties on one model: the transpose of the transition matrix (needed by every
/// unbounded operator) is built once, on first use, and kept for the following properties.
pub struct CheckSession<'a> {
    checker: Checker<'a>,
}

impl<'a> CheckSession<'a> {
    /// A session on `dtmc` with `ctx`.
    pub fn new(dtmc: &'a Dtmc, ctx: &'a CheckContext) -> Self {
        CheckSession {
            checker: Checker::new(dtmc, ctx),
        }
    }

    /// The value of every state (as [`check`]).
    pub fn check(&mut self, formula: &StateFormula) -> Result<Values> {
        self.checker.reset();
        self.checker.state(formula)
    }

    /// The reported value of a property (as [`check_property`]).
    pub fn check_property(&mut self, formula: &StateFormula) -> Result<PropertyResult> {
        self.checker.reset();
        property_result(&mut self.checker, formula)
    }
}

fn property_result(checker: &mut Checker<'_>, formula: &StateFormula) -> Result<PropertyResult> {
    let dtmc = checker.dtmc;
    let values = checker.state(formula)?;
    let mut methods: Vec<String> = Vec::new();
    for m in checker.methods.drain(..) {
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
        .ok_or_else(|| CheckError::Model("the model has no initial state".into()))?;
    let mut printed = None;
    let is_filter = match formula {
        StateFormula::Filter { op, states, .. } => {
            if matches!(op, FilterOp::Print | FilterOp::Printall) {
                let states = checker.state(states)?;
                let Values::Bool(set) = states else {
                    return Err(CheckError::Invalid(
                        "the states of a filter must be a boolean formula".into(),
                    ));
                };
                let mut list = Vec::new();
                for s in set.ones() {
                    let v = scalar_at(&values, s);
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
    let (value, bounds, initial_filter) = if is_filter || init.len() == 1 {
        let b = match &values {
            Values::Num {
                bounds: Some((lo, hi)),
                ..
            } => Some((lo[first], hi[first])),
            _ => None,
        };
        (scalar_at(&values, first), b, None)
    } else {
        match &values {
            Values::Bool(set) => {
                let all = init.iter().all(|&s| set.contains(s));
                (
                    Scalar::Bool(all),
                    None,
                    Some(InitialFilter::Forall { count: init.len() }),
                )
            }
            Values::Num { values, bounds, .. } => {
                let min = init
                    .iter()
                    .map(|&s| values[s])
                    .fold(f64::INFINITY, f64::min);
                let max = init
                    .iter()
                    .map(|&s| values[s])
                    .fold(f64::NEG_INFINITY, f64::max);
                let b = bounds.as_ref().map(|(lo, hi)| {
                    (
                        init.iter().map(|&s| lo[s]).fold(f64::INFINITY, f64::min),
                        init.iter().map(|&s| hi[s]).fold(f64::INFINITY, f64::min),
                    )
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
        Values::Num { method, .. } => method.clone(),
        Values::Bool(_) if methods.is_empty() => "graph".to_string(),
        Values::Bool(_) => methods.join("; "),
    };
    Ok(PropertyResult {
        values,
        value,
        bounds,
        method,
        initial_filter,
        printed,
        notes: std::mem::take(&mut checker.notes),
    })
}

/// The value of one state.
fn scalar_at(values: &Values, s: usize) -> Scalar {
    match values {
        Values::Bool(set) => Scalar::Bool(set.contains(s)),
        Values::Num { values, .. } => Scalar::Num(values.get(s).copied().unwrap_or(f64::NAN)),
    }
}

/// A numeric result under construction.
#[derive(Clone, Debug)]
struct Num {
    values: Vec<f64>,
    bounds: Option<(Vec<f64>, Vec<f64>)>,
    method: String,
}

impl Num {
    fn exact(values: Vec<f64>, method: impl Into<String>) -> Num {
        Num {
            bounds: Some((values.clone(), values.clone())),
            values,
            method: method.into(),
        }
    }

    /// Apply a monotone (non-decreasing) map to the values and both bounds.
    fn map_monotone(self, f: impl Fn(Vec<f64>) -> Vec<f64>) -> Num {
        Num {
            values: f(self.values),
            bounds: self.bounds.map(|(lo, hi)| (f(lo), f(hi))),
            method: self.method,
        }
    }

    /// `1 − x`, bounds swapped.
    fn complement(self) -> Num {
        let flip = |v: Vec<f64>| v.into_iter().map(|x| 1.0 - x).collect::<Vec<_>>();
        Num {
            values: flip(self.values),
            bounds: self.bounds.map(|(lo, hi)| (flip(hi), flip(lo))),
            method: self.method,
        }
    }

    fn into_values(self) -> Values {
        Values::Num {
            values: self.values,
            bounds: self.bounds,
            method: self.method,
        }
    }
}

/// Lower and upper ends of a step bound (`None` = unbounded above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Steps {
    lower: u64,
    upper: Option<u64>,
}

struct Checker<'a> {
    dtmc: &'a Dtmc,
    ctx: &'a CheckContext,
    options: SolveOptions,
    transpose: Option<Matrix>,
    /// Property-file labels being evaluated (cycle detection).
    label_stack: Vec<String>,
    /// Methods used by numeric sub-computations, in order.
    methods: Vec<String>,
    notes: Vec<String>,
}

impl<'a> Checker<'a> {
    fn new(dtmc: &'a Dtmc, ctx: &'a CheckContext) -> Self {
        Checker {
            dtmc,
            ctx,
            options: ctx.options,
            transpose: None,
            label_stack: Vec::new(),
            methods: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Forget the state of the previous property (keeps the transpose).
    fn reset(&mut self) {
        self.options = self.ctx.options;
        self.label_stack.clear();
        self.methods.clear();
        self.notes.clear();
    }

    fn n(&self) -> usize {
        self.dtmc.num_states()
    }

    fn matrix(&self) -> &'a Matrix {
        &self.dtmc.matrix
    }

    fn transpose(&mut self) -> &Matrix {
        let m = &self.dtmc.matrix;
        self.transpose
            .get_or_insert_with(|| crate::graph::transpose(m))
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

    fn bool_of(&mut self, f: &StateFormula) -> Result<StateSet> {
        match self.state(f)? {
            Values::Bool(s) => Ok(s),
            Values::Num { .. } => Err(CheckError::Invalid(format!(
                "expected a boolean state formula, found a numeric one: {f:?}"
            ))),
        }
    }

    fn const_value(&self, e: &Expr) -> Result<Value> {
        atoms::eval_const(e, &self.ctx.constants)
    }

    fn const_f64(&self, e: &Expr, what: &str) -> Result<f64> {
        let v = self.const_value(e)?;
        atoms::as_f64(v).map_err(|_| CheckError::Invalid(format!("{what} must be a number")))
    }

    fn const_int(&self, e: &Expr, what: &str) -> Result<i64> {
        match self.const_value(e)? {
            Value::Int(i) => Ok(i),
            Value::Double(d) if d.fract() == 0.0 && d.abs() < 9.0e18 => Ok(d as i64),
            other => Err(CheckError::Invalid(format!(
                "{what} must be an integer, found {other:?}"
            ))),
        }
    }

    fn steps(&self, b: &StepBound) -> Result<Steps> {
        let nonneg = |e: &Expr, what: &str| -> Result<u64> {
            let k = self.const_int(e, what)?;
            u64::try_from(k)
                .map_err(|_| CheckError::Invalid(format!("{what} must not be negative (got {k})")))
        };
        Ok(match b {
            StepBound::Unbounded => Steps {
                lower: 0,
                upper: None,
            },
            StepBound::Lt(e) => {
                let k = nonneg(e, "the step bound")?;
                if k == 0 {
                    return Err(CheckError::Invalid(
                        "the step bound `<0` admits no step".into(),
                    ));
                }
                Steps {
                    lower: 0,
                    upper: Some(k - 1),
                }
            }
            StepBound::Le(e) => Steps {
                lower: 0,
                upper: Some(nonneg(e, "the step bound")?),
            },
            StepBound::Gt(e) => Steps {
                lower: nonneg(e, "the step bound")?.saturating_add(1),
                upper: None,
            },
            StepBound::Ge(e) => Steps {
                lower: nonneg(e, "the step bound")?,
                upper: None,
            },
            StepBound::Eq(e) => {
                let k = nonneg(e, "the step bound")?;
                Steps {
                    lower: k,
                    upper: Some(k),
                }
            }
            StepBound::Interval(a, b) => {
                let lo = nonneg(a, "the interval's lower bound")?;
                let hi = nonneg(b, "the interval's upper bound")?;
                if hi < lo {
                    return Err(CheckError::Invalid(format!(
                        "the step interval [{lo},{hi}] is empty"
                    )));
                }
                Steps {
                    lower: lo,
                    upper: Some(hi),
                }
            }
        })
    }

    fn label(&mut self, name: &str) -> Result<StateSet> {
        if let Some(set) = self.dtmc.label(name) {
            return Ok(set.clone());
        }
        if let Some(def) = self.ctx.labels.get(name) {
            if self.label_stack.iter().any(|l| l == name) {
                return Err(CheckError::Invalid(format!(
                    "label \"{name}\" is defined in terms of itself"
                )));
            }
            self.label_stack.push(name.to_string());
            let r = self.bool_of(def);
            self.label_stack.pop();
            return r;
        }
        if name == "init" {
            let mut s = StateSet::with_capacity(self.n());
            for &i in &self.dtmc.initial {
                if (i as usize) < self.n() {
                    s.insert(i as usize);
                }
            }
            return Ok(s);
        }
        let mut known: Vec<String> = self
            .dtmc
            .labels
            .iter()
            .map(|(n, _)| n.clone())
            .chain(self.ctx.labels.keys().cloned())
            .collect();
        if !known.iter().any(|k| k == "init") {
            known.push("init".into());
        }
        known.sort();
        known.dedup();
        Err(CheckError::UnknownLabel {
            name: name.to_string(),
            known: known
                .iter()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    fn state(&mut self, f: &StateFormula) -> Result<Values> {
        let n = self.n();
        Ok(match f {
            StateFormula::Expr(e) => {
                let vals = atoms::eval_states(self.dtmc, e, &self.ctx.constants)?;
                if vals.iter().all(|v| matches!(v, Value::Bool(_))) {
                    let mut set = StateSet::with_capacity(n);
                    for (s, v) in vals.iter().enumerate() {
                        if *v == Value::Bool(true) {
                            set.insert(s);
                        }
                    }
                    Values::Bool(set)
                } else {
                    let values = vals
                        .into_iter()
                        .map(atoms::as_f64)
                        .collect::<Result<Vec<_>>>()?;
                    Num::exact(values, "expression").into_values()
                }
            }
            StateFormula::Label(name) => Values::Bool(self.label(name)?),
            StateFormula::Not(a) => {
                let a = self.bool_of(a)?;
                Values::Bool(self.not(&a))
            }
            StateFormula::And(a, b) => {
                let mut a = self.bool_of(a)?;
                a.intersect_with(&self.bool_of(b)?);
                Values::Bool(a)
            }
            StateFormula::Or(a, b) => {
                let mut a = self.bool_of(a)?;
                a.union_with(&self.bool_of(b)?);
                Values::Bool(a)
            }
            StateFormula::Implies(a, b) => {
                let a = self.bool_of(a)?;
                let mut r = self.not(&a);
                r.union_with(&self.bool_of(b)?);
                Values::Bool(r)
            }
            StateFormula::Iff(a, b) => {
                let a = self.bool_of(a)?;
                let b = self.bool_of(b)?;
                let mut x = a.clone();
                x.symmetric_difference_with(&b);
                Values::Bool(self.not(&x))
            }
            StateFormula::Prob { bound, path } => {
                self.bounded_op(bound, "P", |c| c.path(path), Some(1.0))?
            }
            StateFormula::Reward {
                structure,
                bound,
                path,
            } => self.bounded_op(bound, "R", |c| c.reward(structure.as_ref(), path), None)?,
            StateFormula::Steady { bound, formula } => self.bounded_op(
                bound,
                "S",
                |c| {
                    let set = c.bool_of(formula)?;
                    let ind = bounded::indicator(&set, c.n());
                    c.long_run(&ind)
                },
                Some(1.0),
            )?,
            StateFormula::Time { bound, target } => self.bounded_op(
                bound,
                "T",
                |c| {
                    let set = c.bool_of(target)?;
                    let ones = vec![1.0; c.n()];
                    c.reach_rewards(&set, &ones)
                },
                None,
            )?,
            StateFormula::Filter {
                op,
                property,
                states,
            } => self.filter(*op, property, states)?,
        })
    }

    /// `OP=?` or `OP⋈t`: compute the values, then compare (refining sound bounds that
    /// straddle the threshold).
    fn bounded_op(
        &mut self,
        bound: &Bound,
        op: &str,
        compute: impl Fn(&mut Self) -> Result<Num>,
        max: Option<f64>,
    ) -> Result<Values> {
        // A probability (P, S) read from decimals can come out a few ulps above 1 (the f64 rows
        // of `0.54 0.32 0.14` sum to 1 + 2^-54); clamp values and bounds into [0, max], which
        // can only move them towards the true value.
        let compute = |c: &mut Self| -> Result<Num> {
            let num = compute(c)?;
            Ok(match max {
                Some(m) => num.map_monotone(|v| v.into_iter().map(|x| x.clamp(0.0, m)).collect()),
                None => num,
            })
        };
        let num = compute(self)?;
        self.methods.push(num.method.clone());
        let Bound::Compare(cmp, threshold) = bound else {
            return Ok(num.into_values());
        };
        let t = self.const_f64(threshold, "the threshold")?;
        if t.is_nan() || t < 0.0 || max.is_some_and(|m| t > m) {
            return Err(CheckError::Invalid(format!(
                "the threshold of {op} must be in [0, {}] (got {t})",
                max.map_or("∞".to_string(), |m| m.to_string())
            )));
        }
        let mut num = num;
        let saved = self.options;
        let mut undecided = undecided_states(&num, *cmp, t);
        let mut rounds = 0;
        while undecided > 0 && rounds < 2 && self.options.epsilon > 1e-14 {
            self.options.epsilon = (self.options.epsilon / 1000.0).max(1e-14);
            num = compute(self)?;
            undecided = undecided_states(&num, *cmp, t);
            rounds += 1;
        }
        if rounds > 0 {
            self.notes.push(format!(
                "{op}{} {t}: bounds straddled the threshold; recomputed with ε = {:.0e}",
                cmp_text(*cmp),
                self.options.epsilon
            ));
        }
        self.options = saved;
        if undecided > 0 {
            self.notes.push(format!(
                "{op}{} {t}: {undecided} state(s) undecided by the bounds; decided by the point value",
                cmp_text(*cmp),
            ));
        }
        let mut set = StateSet::with_capacity(self.n());
        for (s, &v) in num.values.iter().enumerate() {
            if compare(v, *cmp, t) {
                set.insert(s);
            }
        }
        Ok(Values::Bool(set))
    }

    fn path(&mut self, path: &PathFormula) -> Result<Num> {
        match path {
            PathFormula::Next(phi) => {
                let set = self.bool_of(phi)?;
                let ind = bounded::indicator(&set, self.n());
                let all: Vec<u32> = (0..self.n() as u32).collect();
                let x = bounded::sweep_rows(self.matrix(), &all, ind, 1);
                Ok(Num::exact(x, "one matrix-vector product"))
            }
            PathFormula::Until(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                self.until(&phi, &psi, b)
            }
            PathFormula::Eventually(psi, b) => {
                let psi = self.bool_of(psi)?;
                let all = self.full();
                self.until(&all, &psi, b)
            }
            PathFormula::Globally(phi, b) => {
                let phi = self.bool_of(phi)?;
                let not_phi = self.not(&phi);
                let all = self.full();
                Ok(self.until(&all, &not_phi, b)?.complement())
            }
            PathFormula::WeakUntil(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let not_psi = self.not(&psi);
                let mut left = phi.clone();
                left.intersect_with(&not_psi);
                let mut right = self.not(&phi);
                right.intersect_with(&not_psi);
                Ok(self.until(&left, &right, b)?.complement())
            }
            PathFormula::Release(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let (np, nq) = (self.not(&phi), self.not(&psi));
                Ok(self.until(&np, &nq, b)?.complement())
            }
        }
    }

    /// `P(φ U b ψ)` for every state (PRISM's semantics of every step bound).
    fn until(&mut self, phi: &StateSet, psi: &StateSet, b: &StepBound) -> Result<Num> {
        let steps = self.steps(b)?;
        let matrix = self.matrix();
        let rest = match steps.upper {
            Some(u) => {
                let window = u - steps.lower;
                Num::exact(
                    bounded::bounded_until(matrix, phi, psi, window),
                    format!("bounded ({window} steps)"),
                )
            }
            None => {
                let opts = self.options;
                let exact = self.dtmc.exact.as_deref();
                let t = self.transpose();
                let sol = crate::until_probabilities(matrix, t, exact, phi, psi, &opts)?;
                Num {
                    values: sol.values,
                    bounds: sol.bounds,
                    method: sol.method,
                }
            }
        };
        if steps.lower == 0 {
            return Ok(rest);
        }
        let k = steps.lower;
        let mut r = rest.map_monotone(|v| bounded::restricted_steps(matrix, phi, v, k));
        r.method = format!("{} + {k} restricted steps", r.method);
        Ok(r)
    }

    /// The reward structure of `R{...}` (the dtmc crate's lookups, whose errors list the
    /// model's structures).
    fn structure(&self, r: Option<&RewardRef>) -> Result<&'a RewardStructure> {
        let d = self.dtmc;
        let found = match r {
            None => d.default_reward(),
            Some(RewardRef::Name(n)) => d.reward_named(n),
            Some(RewardRef::Index(i)) => d.reward_indexed(*i),
        };
        found.map_err(|e| match e {
            DtmcError::UnknownRewardStructure { what, available } => CheckError::UnknownRewards {
                name: what,
                known: if available.is_empty() {
                    "no reward structures".into()
                } else {
                    available
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
                },
            },
            other => CheckError::Model(other.to_string()),
        })
    }

    /// Expected one-step reward `state(s) + Σ_t P(s,t)·trans(s,t)`.
    fn one_step(&self, rs: &RewardStructure) -> Result<Vec<f64>> {
        let n = self.n();
        if let Some(v) = rs.state.as_ref().filter(|v| v.len() != n) {
            return Err(CheckError::Model(format!(
                "a state reward vector has {} entries for {n} states",
                v.len()
            )));
        }
        let nnz = self.matrix().nnz();
        if let Some(t) = rs.transition.as_ref().filter(|t| t.len() != nnz) {
            return Err(CheckError::Model(format!(
                "a transition reward vector has {} entries for {nnz} transitions",
                t.len()
            )));
        }
        Ok(self.dtmc.expected_one_step_rewards(rs))
    }

    fn reward(&mut self, r: Option<&RewardRef>, path: &RewardPath) -> Result<Num> {
        let rs = self.structure(r)?;
        let matrix = self.matrix();
        match path {
            RewardPath::Reachability(phi) => {
                let target = self.bool_of(phi)?;
                let r = self.one_step(rs)?;
                self.reach_rewards(&target, &r)
            }
            RewardPath::Cumulative { bound, discount } => {
                let r = self.one_step(rs)?;
                let d = match discount {
                    None => 1.0,
                    Some(e) => {
                        let d = self.const_f64(e, "the discount factor")?;
                        if !(0.0..=1.0).contains(&d) {
                            return Err(CheckError::Invalid(format!(
                                "the discount factor must be in [0, 1] (got {d})"
                            )));
                        }
                        d
                    }
                };
                match bound {
                    Some(k) => {
                        let k = self.const_int(k, "the step bound of C")?;
                        let k = u64::try_from(k).map_err(|_| {
                            CheckError::Invalid(format!(
                                "the step bound of C must not be negative (got {k})"
                            ))
                        })?;
                        let x = bounded::cumulative(matrix, &r, d, k);
                        let what = if d < 1.0 {
                            "discounted cumulative"
                        } else {
                            "cumulative"
                        };
                        Ok(Num::exact(x, format!("{what} ({k} steps)")))
                    }
                    None if d < 1.0 => {
                        let o = self.options;
                        let dt = bounded::discounted_total(
                            matrix,
                            &r,
                            d,
                            o.epsilon,
                            o.relative,
                            o.max_iterations,
                        )
                        .ok_or_else(|| SolverError::NotConverged {
                            method: "discounted value iteration".into(),
                            iterations: o.max_iterations,
                            difference: f64::NAN,
                        })?;
                        Ok(Num {
                            values: dt.values,
                            bounds: Some((dt.lo, dt.hi)),
                            method: format!(
                                "discounted value iteration ({} sweeps, sound)",
                                dt.sweeps
                            ),
                        })
                    }
                    None => {
                        let opts = self.options;
                        let exact = self.dtmc.exact.as_deref();
                        let t = self.transpose();
                        let sol = crate::total_rewards(matrix, t, exact, &r, &opts)?;
                        Ok(Num {
                            values: sol.values,
                            bounds: sol.bounds,
                            method: sol.method,
                        })
                    }
                }
            }
            RewardPath::Instantaneous(k) => {
                let k = self.const_int(k, "the step of I")?;
                let k = u64::try_from(k).map_err(|_| {
                    CheckError::Invalid(format!("the step of I must not be negative (got {k})"))
                })?;
                let v = match &rs.state {
                    Some(v) if v.len() == self.n() => v.clone(),
                    Some(v) => {
                        return Err(CheckError::Model(format!(
                            "a state reward vector has {} entries for {} states",
                            v.len(),
                            self.n()
                        )))
                    }
                    None => vec![0.0; self.n()],
                };
                let x = bounded::power_apply(matrix, v, k);
                Ok(Num::exact(x, format!("instantaneous ({k} steps)")))
            }
            RewardPath::LongRun => {
                let r = self.one_step(rs)?;
                self.long_run(&r)
            }
        }
    }

    fn reach_rewards(&mut self, target: &StateSet, r: &[f64]) -> Result<Num> {
        let opts = self.options;
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol = crate::reachability_rewards(matrix, t, exact, target, r, &opts)?;
        Ok(Num {
            values: sol.values,
            bounds: sol.bounds,
            method: sol.method,
        })
    }

    fn long_run(&mut self, v: &[f64]) -> Result<Num> {
        let opts = self.options;
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        let sol = crate::long_run_average(matrix, t, exact, v, &opts)?;
        Ok(Num {
            values: sol.values,
            bounds: sol.bounds,
            method: sol.method,
        })
    }

    fn filter(
        &mut self,
        op: FilterOp,
        property: &StateFormula,
        states: &StateFormula,
    ) -> Result<Values> {
        let n = self.n();
        let inner = self.state(property)?;
        let set = match self.state(states)? {
            Values::Bool(s) => s,
            Values::Num { .. } => {
                return Err(CheckError::Invalid(
                    "the states of a filter must be a boolean formula".into(),
                ))
            }
        };
        let states: Vec<usize> = set.ones().filter(|&s| s < n).collect();
        if states.is_empty() {
            return Err(CheckError::Invalid(
                "the filter's state set is empty".into(),
            ));
        }
        let everywhere_num = |v: f64, b: Option<(f64, f64)>, method: String| Values::Num {
            values: vec![v; n],
            bounds: b.map(|(lo, hi)| (vec![lo; n], vec![hi; n])),
            method,
        };
        let everywhere_bool = |b: bool| {
            let mut s = StateSet::with_capacity(n);
            if b {
                s.insert_range(..);
            }
            Values::Bool(s)
        };
        let need_num =
            |what: &str| CheckError::Invalid(format!("filter {what} needs a numeric property"));
        let need_bool =
            |what: &str| CheckError::Invalid(format!("filter {what} needs a boolean property"));
        Ok(match (op, &inner) {
            (FilterOp::Print | FilterOp::Printall, _) => inner,
            (FilterOp::First, _) | (FilterOp::State, _) => {
                if op == FilterOp::State && states.len() != 1 {
                    return Err(CheckError::Invalid(format!(
                        "filter state needs exactly one state, the filter has {}",
                        states.len()
                    )));
                }
                let s = states[0];
                match &inner {
                    Values::Bool(b) => everywhere_bool(b.contains(s)),
                    Values::Num {
                        values,
                        bounds,
                        method,
                    } => everywhere_num(
                        values[s],
                        bounds.as_ref().map(|(lo, hi)| (lo[s], hi[s])),
                        method.clone(),
                    ),
                }
            }
            (FilterOp::Count, Values::Bool(b)) => {
                let c = states.iter().filter(|&&s| b.contains(s)).count();
                everywhere_num(c as f64, Some((c as f64, c as f64)), "count".into())
            }
            (FilterOp::Forall, Values::Bool(b)) => {
                everywhere_bool(states.iter().all(|&s| b.contains(s)))
            }
            (FilterOp::Exists, Values::Bool(b)) => {
                everywhere_bool(states.iter().any(|&s| b.contains(s)))
            }
            (FilterOp::Count, _) => return Err(need_bool("count")),
            (FilterOp::Forall, _) => return Err(need_bool("forall")),
            (FilterOp::Exists, _) => return Err(need_bool("exists")),
            (_, Values::Bool(_)) => return Err(need_num(&format!("{op:?}").to_lowercase())),
            (
                _,
                Values::Num {
                    values,
                    bounds,
                    method,
                },
            ) => {
                let pick = |v: &[f64], f: fn(f64, f64) -> f64, init: f64| {
                    states.iter().map(|&s| v[s]).fold(init, f)
                };
                let (mn, mx) = (
                    pick(values, f64::min, f64::INFINITY),
                    pick(values, f64::max, f64::NEG_INFINITY),
                );
                match op {
                    FilterOp::Min | FilterOp::Max => {
                        let (v, f, init): (f64, fn(f64, f64) -> f64, f64) = if op == FilterOp::Min {
                            (mn, f64::min, f64::INFINITY)
                        } else {
                            (mx, f64::max, f64::NEG_INFINITY)
                        };
                        let b = bounds
                            .as_ref()
                            .map(|(lo, hi)| (pick(lo, f, init), pick(hi, f, init)));
                        everywhere_num(v, b, method.clone())
                    }
                    FilterOp::Sum | FilterOp::Avg => {
                        let k = if op == FilterOp::Avg {
                            states.len() as f64
                        } else {
                            1.0
                        };
                        let sum = |v: &[f64]| states.iter().map(|&s| v[s]).sum::<f64>() / k;
                        let b = bounds.as_ref().map(|(lo, hi)| (sum(lo), sum(hi)));
                        everywhere_num(sum(values), b, method.clone())
                    }
                    FilterOp::Argmin | FilterOp::Argmax => {
                        let target = if op == FilterOp::Argmin { mn } else { mx };
                        let mut s = StateSet::with_capacity(n);
                        for &st in &states {
                            if values[st] == target {
                                s.insert(st);
                            }
                        }
                        Values::Bool(s)
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
                        everywhere_num(mn, Some(b), format!("range over {} states", states.len()))
                    }
                    // Handled above.
                    FilterOp::Print
                    | FilterOp::Printall
                    | FilterOp::First
                    | FilterOp::State
                    | FilterOp::Count
                    | FilterOp::Forall
                    | FilterOp::Exists => {
                        return Err(CheckError::Invalid(format!("unexpected filter {op:?}")))
                    }
                }
            }
        })
    }
}

fn cmp_text(c: Comparison) -> &'static str {
    match c {
        Comparison::Lt => "<",
        Comparison::Le => "<=",
        Comparison::Gt => ">",
        Comparison::Ge => ">=",
    }
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
fn undecided_states(num: &Num, c: Comparison, t: f64) -> usize {
    let Some((lo, hi)) = &num.bounds else {
        return 0;
    };
    lo.iter()
        .zip(hi)
        .filter(|(&l, &h)| compare(l, c, t) != compare(h, c, t))
        .count()
}
