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
//!   long-run average of `r`.
//! * `P⋈p`, `R⋈r`, `S⋈p` with sound bounds `[lo, hi]` straddling the threshold in some state:
//!   the value is recomputed with a 1000× smaller ε (twice, down to 1e-14); if a state is still
//!   undecided, the point value decides and a note says so ([`CheckResult::notes`]).
//! * Properties-file labels are evaluated once per [`Checker`] (they are shared by every
//!   property that uses them).
//!
//! Nothing here validates a bound or a name: [`augur_pctl::Resolver`] did, once. The checker's
//! own errors are runtime conditions (an empty filter, a numerical failure, a limit hit).

mod atoms;
#[cfg(test)]
mod tests;

use crate::error::{CheckError, Result};
use crate::result::{
    Bounds, CheckResult, InitialFilter, MethodUsed, NumValues, Scalar, StateValues,
};
use augur_dtmc::{Dtmc, Matrix, RewardStructure, StateSet};
use augur_pctl::{
    Comparison, FilterOp, ResolvedFormula, ResolvedLabel, ResolvedPath, ResolvedProperty,
    ResolvedRewardPath, Steps, Threshold,
};
use augur_solver::{bounded, SolveOptions, SolverError};
use augur_source::{SourceFile, Span};
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
    /// Methods used by numeric sub-computations of the current property, in order.
    methods: Vec<MethodUsed>,
    notes: Vec<String>,
    /// The texts being checked (the property's, then those of the labels entered), for
    /// locating errors.
    sources: Vec<Arc<SourceFile>>,
}

impl<'a> Checker<'a> {
    /// A checker for `dtmc` with the solver options (method, precision, interrupt).
    pub fn new(dtmc: &'a Dtmc, options: SolveOptions) -> Checker<'a> {
        Checker {
            dtmc,
            base: options.clone(),
            options,
            transpose: None,
            labels: HashMap::new(),
            methods: Vec::new(),
            notes: Vec::new(),
            sources: Vec::new(),
        }
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
            R::Expr { expr, span, .. } => {
                let dtmc = self.dtmc;
                let vals = atoms::eval_states(dtmc, expr)
                    .map_err(|message| self.error_at(*span, message))?;
                let n = self.n();
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
                    StateValues::Num(NumValues::exact(values, MethodUsed::Expression))
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
                threshold, path, ..
            } => self.bounded_op(threshold.as_ref(), "P", |c| c.path(path), Some(1.0))?,
            R::Reward {
                structure,
                threshold,
                path,
                span,
            } => self.bounded_op(
                threshold.as_ref(),
                "R",
                |c| c.reward(*structure, path, *span),
                None,
            )?,
            R::Steady {
                threshold, formula, ..
            } => self.bounded_op(
                threshold.as_ref(),
                "S",
                |c| {
                    let set = c.bool_of(formula)?;
                    let ind = bounded::indicator(&set, c.n());
                    c.long_run(&ind)
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
                    c.reach_rewards(&set, &ones)
                },
                None,
            )?,
            R::Filter {
                op,
                property,
                states,
                span,
            } => self.filter(*op, property, states, *span)?,
        })
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
            let num = compute(c)?;
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
                "{op}{cmp} {t}: bounds straddled the threshold; recomputed with ε = {:.0e}",
                self.options.epsilon
            ));
        }
        self.options = saved;
        if undecided > 0 {
            self.notes.push(format!(
                "{op}{cmp} {t}: {undecided} state(s) undecided by the bounds; decided by the point value",
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

    fn path(&mut self, path: &ResolvedPath) -> Result<NumValues> {
        match path {
            ResolvedPath::Next(phi) => {
                let set = self.bool_of(phi)?;
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
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let not_psi = self.not(&psi);
                let mut left = phi.clone();
                left.intersect_with(&not_psi);
                let mut right = self.not(&phi);
                right.intersect_with(&not_psi);
                Ok(self.until(&left, &right, b)?.complement())
            }
            ResolvedPath::Release(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let (np, nq) = (self.not(&phi), self.not(&psi));
                Ok(self.until(&np, &nq, b)?.complement())
            }
        }
    }

    /// `P(φ U b ψ)` for every state (PRISM's semantics of every step bound).
    fn until(&mut self, phi: &StateSet, psi: &StateSet, steps: &Steps) -> Result<NumValues> {
        let matrix = self.matrix();
        let rest = match steps.upper {
            Some(u) => {
                let window = u.saturating_sub(steps.lower);
                NumValues::exact(
                    bounded::bounded_until(matrix, phi, psi, window, &self.options.interrupt)?,
                    MethodUsed::Bounded { steps: window },
                )
            }
            None => {
                let opts = self.options.clone();
                let exact = self.dtmc.exact.as_deref();
                let t = self.transpose();
                augur_solver::until_probabilities(matrix, t, exact, phi, psi, &opts)?.into()
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
                bounded::restricted_steps(matrix, phi, lo, k, &stop)?,
                bounded::restricted_steps(matrix, phi, hi, k, &stop)?,
            ));
        }
        Ok(NumValues {
            values: bounded::restricted_steps(matrix, phi, rest.values, k, &stop)?,
            bounds: lo_hi,
            method,
        })
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
                let r = self.one_step(rs)?;
                self.reach_rewards(&target, &r)
            }
            ResolvedRewardPath::Cumulative { steps, discount } => {
                let r = self.one_step(rs)?;
                let d = discount.as_ref().map_or(1.0, |d| d.value);
                match steps {
                    Some(k) => {
                        let x = bounded::cumulative(matrix, &r, d, *k, &stop)?;
                        Ok(NumValues::exact(
                            x,
                            MethodUsed::Cumulative {
                                steps: *k,
                                discounted: d < 1.0,
                            },
                        ))
                    }
                    None if d < 1.0 => {
                        let o = &self.options;
                        let dt = bounded::discounted_total(
                            matrix,
                            &r,
                            d,
                            o.epsilon,
                            o.relative,
                            o.max_iterations,
                            &stop,
                        )?
                        .ok_or_else(|| SolverError::NotConverged {
                            method: "discounted value iteration".into(),
                            iterations: o.max_iterations,
                            difference: f64::NAN,
                        })?;
                        Ok(NumValues {
                            values: dt.values,
                            bounds: Some((dt.lo, dt.hi)),
                            method: MethodUsed::DiscountedIteration { sweeps: dt.sweeps },
                        })
                    }
                    None => {
                        let opts = self.options.clone();
                        let exact = self.dtmc.exact.as_deref();
                        let t = self.transpose();
                        Ok(augur_solver::total_rewards(matrix, t, exact, &r, &opts)?.into())
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
                let x = bounded::power_apply(matrix, v, *k, &stop)?;
                Ok(NumValues::exact(x, MethodUsed::Instantaneous { steps: *k }))
            }
            ResolvedRewardPath::LongRun => {
                let r = self.one_step(rs)?;
                self.long_run(&r)
            }
        }
    }

    fn reach_rewards(&mut self, target: &StateSet, r: &[f64]) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        Ok(augur_solver::reachability_rewards(matrix, t, exact, target, r, &opts)?.into())
    }

    fn long_run(&mut self, v: &[f64]) -> Result<NumValues> {
        let opts = self.options.clone();
        let matrix = self.matrix();
        let exact = self.dtmc.exact.as_deref();
        let t = self.transpose();
        Ok(augur_solver::long_run_average(matrix, t, exact, v, &opts)?.into())
    }

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
        let everywhere_num = |v: f64, b: Option<(f64, f64)>, method: MethodUsed| {
            StateValues::Num(NumValues {
                values: vec![v; n],
                bounds: b.map(|(lo, hi)| (vec![lo; n], vec![hi; n])),
                method,
            })
        };
        let everywhere_bool = |b: bool| {
            let mut s = StateSet::with_capacity(n);
            if b {
                s.insert_range(..);
            }
            StateValues::Bool(s)
        };
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
                    StateValues::Bool(b) => everywhere_bool(b.contains(s)),
                    StateValues::Num(num) => everywhere_num(
                        num.values[s],
                        num.bounds.as_ref().map(|(lo, hi)| (lo[s], hi[s])),
                        num.method.clone(),
                    ),
                }
            }
            (FilterOp::Count, StateValues::Bool(b)) => {
                let c = states.iter().filter(|&&s| b.contains(s)).count();
                everywhere_num(c as f64, Some((c as f64, c as f64)), MethodUsed::Count)
            }
            (FilterOp::Forall, StateValues::Bool(b)) => {
                everywhere_bool(states.iter().all(|&s| b.contains(s)))
            }
            (FilterOp::Exists, StateValues::Bool(b)) => {
                everywhere_bool(states.iter().any(|&s| b.contains(s)))
            }
            (FilterOp::Count | FilterOp::Forall | FilterOp::Exists, _) => {
                return Err(self.error_at(span, format!("filter {op} needs a boolean property")))
            }
            (_, StateValues::Bool(_)) => {
                return Err(self.error_at(span, format!("filter {op} needs a numeric property")))
            }
            (_, StateValues::Num(num)) => {
                let pick = |v: &[f64], f: fn(f64, f64) -> f64, init: f64| {
                    states.iter().map(|&s| v[s]).fold(init, f)
                };
                let (values, bounds, method) = (&num.values, &num.bounds, &num.method);
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
                            mn,
                            Some(b),
                            MethodUsed::Range {
                                states: states.len(),
                            },
                        )
                    }
                    // Handled above.
                    FilterOp::Print
                    | FilterOp::Printall
                    | FilterOp::First
                    | FilterOp::State
                    | FilterOp::Count
                    | FilterOp::Forall
                    | FilterOp::Exists => {
                        return Err(CheckError::Internal(format!("unexpected filter {op}")))
                    }
                }
            }
        })
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
fn undecided_states(num: &NumValues, c: Comparison, t: f64) -> usize {
    let Some((lo, hi)) = &num.bounds else {
        return 0;
    };
    lo.iter()
        .zip(hi)
        .filter(|(&l, &h)| compare(l, c, t) != compare(h, c, t))
        .count()
}
