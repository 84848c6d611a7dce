//! [`CheckSession`]: checking properties on one model under [`CheckOptions`], and the all-horizon
//! table.

use crate::checker::Checker;
use crate::constants::Constants;
use crate::error::{CheckError, Result, Stop};
use crate::limits::{Limits, Progress};
use crate::model::{names_of, Model};
use crate::properties::{parse_error, CompiledProperties, CompiledProperty};
use crate::result::{CheckResult, StateValues};
use augur_dtmc::{Dtmc, StateSet};
use augur_expr::{Expr, Value};
use augur_pctl::{Kind, ModelNames, Property, ResolvedFormula, Resolver, StateFormula};
use augur_solver::bounded::HorizonTable;
use augur_solver::{Method, SolveOptions};
use augur_source::SourceFile;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// The largest all-horizon table [`CheckSession::horizon`] builds (states × horizons): 2^24
/// entries, 128 MiB of `f64` — with the text or JSON made of it, well within memory (200
/// million entries, 1.6 GB before printing, aborted the process).
pub const MAX_HORIZON_ENTRIES: usize = 1 << 24;

/// How to check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The method for linear equation systems (default [`Method::Auto`], sound).
    pub method: Method,
    /// Requested precision (default 1e-6).
    pub epsilon: f64,
    /// Whether `epsilon` is relative (default) or absolute.
    pub relative: bool,
    /// Iteration budget of iterative methods.
    pub max_iterations: u64,
    /// Time and cancellation limits (the state limit applies when loading).
    pub limits: Limits,
}

impl Default for CheckOptions {
    fn default() -> Self {
        let s = SolveOptions::default();
        CheckOptions {
            method: s.method,
            epsilon: s.epsilon,
            relative: s.relative,
            max_iterations: s.max_iterations,
            limits: Limits::default(),
        }
    }
}

impl CheckOptions {
    /// Checks the values (`epsilon` in `(0, 1)`).
    pub fn validate(&self) -> Result<()> {
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(CheckError::input(format!(
                "the precision (epsilon) must be in (0, 1), got {}",
                self.epsilon
            )));
        }
        Ok(())
    }

    fn solve_options(&self, deadline: Option<Instant>) -> SolveOptions {
        SolveOptions {
            method: self.method,
            epsilon: self.epsilon,
            relative: self.relative,
            max_iterations: self.max_iterations,
            interrupt: self.limits.interrupt(deadline),
        }
    }
}

/// The model's formula expansion (PRISM-language models).
type Expand<'m> = Box<dyn Fn(&Expr) -> Expr + Send + Sync + 'm>;

/// Why the formula expansion left a name in place (a formula too large to write out).
type Unexpanded<'m> = Box<dyn Fn(&str) -> Option<String> + Send + Sync + 'm>;

/// What a property may use of the model being checked.
struct Scope<'m> {
    names: ModelNames,
    constants: BTreeMap<String, Value>,
    /// The model's formula expansion (PRISM-language models).
    expand: Option<Expand<'m>>,
    /// Why the expansion left a name in place.
    unexpanded: Option<Unexpanded<'m>>,
}

/// Checks properties on one model. Work is shared between the properties of a session: the
/// transpose of the transition matrix and the values of properties-file labels are computed
/// once.
///
/// ```
/// use augur_check::{check_str, Scalar};
/// use augur_dtmc::DtmcBuilder;
/// // 0 → 0 (1/2) | 1 (1/2); 1 absorbing, labelled "goal".
/// let mut b = DtmcBuilder::new(2);
/// b.add_transition(0, 0, 0.5).unwrap();
/// b.add_transition(0, 1, 0.5).unwrap();
/// b.add_transition(1, 1, 1.0).unwrap();
/// b.add_initial(0).unwrap();
/// b.add_label_state("goal", 1).unwrap();
/// let (dtmc, _) = b.build().unwrap();
/// let r = check_str(&dtmc, "P=? [ F<=2 \"goal\" ]").unwrap();
/// assert_eq!(r.value, Scalar::Num(0.75));
/// assert_eq!(r.method.to_string(), "bounded (2 steps)");
/// ```
pub struct CheckSession<'m> {
    scope: Scope<'m>,
    checker: Checker<'m>,
    options: CheckOptions,
}

impl<'m> CheckSession<'m> {
    /// A session on a loaded model (its constants and formulas are usable in properties).
    pub fn new(model: &'m Model, options: CheckOptions) -> CheckSession<'m> {
        CheckSession {
            scope: Scope {
                names: model.property_names(),
                constants: model.constants().iter().cloned().collect(),
                expand: Some(Box::new(|e: &Expr| model.expand_formulas(e))),
                unexpanded: Some(Box::new(|name: &str| {
                    model.unexpanded_formula_message(name)
                })),
            },
            checker: Checker::new(model.dtmc(), options.solve_options(None))
                .with_max_states(options.limits.max_states)
                .with_formulas(Box::new(|name: &str| {
                    model
                        .formula_values(name)
                        .map(|r| r.map(std::sync::Arc::new))
                })),
            options,
        }
    }

    /// A session on a bare DTMC (no constants, no formulas).
    pub fn for_dtmc(dtmc: &'m Dtmc, options: CheckOptions) -> CheckSession<'m> {
        CheckSession {
            scope: Scope {
                names: names_of(dtmc),
                constants: BTreeMap::new(),
                expand: None,
                unexpanded: None,
            },
            checker: Checker::new(dtmc, options.solve_options(None))
                .with_max_states(options.limits.max_states),
            options,
        }
    }

    /// The same session with values for constants, usable by [`CheckSession::check_str`] and
    /// [`CheckSession::horizon`] (compiled properties carry their own).
    pub fn with_constants(mut self, constants: &Constants) -> CheckSession<'m> {
        for (n, v) in constants.as_slice() {
            self.scope.constants.insert(n.clone(), *v);
        }
        self
    }

    /// The DTMC.
    pub fn dtmc(&self) -> &'m Dtmc {
        self.checker.dtmc()
    }

    /// Starts an operation under the limits: its deadline.
    fn start(&mut self) -> Result<Option<Instant>> {
        let deadline = self.options.limits.deadline_from_now();
        self.options.limits.check(deadline)?;
        self.checker
            .set_options(self.options.solve_options(deadline));
        Ok(deadline)
    }

    fn run(&mut self, p: &CompiledProperty) -> Result<CheckResult> {
        let resolved = p
            .resolved
            .as_ref()
            .map_err(|d| CheckError::Input(Box::new(d.clone())))?;
        self.checker
            .check(resolved)
            .map_err(|e| self.options.limits.solver_error(e))
    }

    /// The checker (for the tests' counters).
    #[cfg(test)]
    pub(crate) fn checker(&self) -> &Checker<'m> {
        &self.checker
    }

    /// Checks one compiled property (the time limit starts now).
    pub fn check(&mut self, property: &CompiledProperty) -> Result<CheckResult> {
        self.start()?;
        self.run(property)
    }

    /// Checks every property in order, calling `each` with its position and outcome as soon
    /// as it is known (a front-end prints as it goes). One time limit covers them all; once a
    /// limit stops a property, the following ones are not attempted and report the same stop.
    pub fn check_each(
        &mut self,
        properties: &CompiledProperties,
        mut each: impl FnMut(usize, &CompiledProperty, Result<CheckResult>),
    ) {
        let count = properties.len();
        let started = self.start();
        let mut stopped: Option<Stop> = started.err().and_then(|e| e.stop().cloned());
        for (index, p) in properties.items.iter().enumerate() {
            if let Some(s) = &stopped {
                each(index, p, Err(CheckError::Stopped(s.clone())));
                continue;
            }
            self.options
                .limits
                .report(Progress::Property { index, count });
            let outcome = self.run(p);
            if let Err(CheckError::Stopped(s)) = &outcome {
                stopped = Some(s.clone());
            }
            each(index, p, outcome);
        }
    }

    /// Checks every property in order (see [`CheckSession::check_each`]).
    pub fn check_all(&mut self, properties: &CompiledProperties) -> Vec<Result<CheckResult>> {
        let mut out = Vec::with_capacity(properties.len());
        self.check_each(properties, |_, _, r| out.push(r));
        out
    }

    /// Parses, resolves and checks one property written as text.
    pub fn check_str(&mut self, property: &str) -> Result<CheckResult> {
        let source = Arc::new(SourceFile::new("<property>", property));
        let parsed = augur_pctl::parse_property(property).map_err(|e| parse_error(e, &source))?;
        let resolved = self
            .resolver()
            .resolve(&parsed, &source)
            .map_err(|e| parse_error(e, &source))?;
        self.start()?;
        self.checker
            .check(&resolved)
            .map_err(|e| self.options.limits.solver_error(e))
    }

    fn resolver(&self) -> Resolver<'_> {
        let r = Resolver::new(&self.scope.names, &self.scope.constants);
        let r = match &self.scope.unexpanded {
            Some(why) => r.with_unexpanded_formulas(&**why),
            None => r,
        };
        match &self.scope.expand {
            Some(expand) => r.with_formulas(&**expand),
            None => r,
        }
    }

    /// The states satisfying a boolean state formula written in `source` (a label, quoted or
    /// not, or any formula such as `s>=3 & !"done"`).
    pub fn states(&mut self, formula: &str, source_name: &str) -> Result<StateSet> {
        let name = formula.trim().trim_matches('"');
        if let Some(set) = self.dtmc().label(name) {
            return Ok(set.clone());
        }
        let source = Arc::new(SourceFile::new(source_name, formula));
        let parsed: Property =
            augur_pctl::parse_property(formula).map_err(|e| parse_error(e, &source))?;
        // A bare identifier is meant as a label name.
        let f = match parsed.formula {
            StateFormula::Expr(e) => match &e.node {
                Expr::Ident(id) => StateFormula::Label(e.map(|_| id.clone())),
                _ => StateFormula::Expr(e),
            },
            f => f,
        };
        let resolved = self
            .resolver()
            .resolve_formula(&f, &source)
            .map_err(|e| parse_error(e, &source))?;
        if resolved.kind() != Kind::Bool {
            return Err(CheckError::at(
                "expected a label or a boolean state formula",
                source.location(resolved.span()),
            ));
        }
        self.start()?;
        match self
            .checker
            .values(&resolved, &source)
            .map_err(|e| self.options.limits.solver_error(e))?
        {
            StateValues::Bool(set) => Ok(set),
            StateValues::Num(_) => Err(CheckError::Internal(
                "a boolean formula gave numbers".into(),
            )),
        }
    }

    /// The value of a resolved state formula in every state (a set of states for a boolean
    /// one), under the limits (the time limit starts now). `source` is the text the formula was
    /// resolved from, for errors located in it. Front-ends that inspect a compiled property
    /// (the monitor takes its path formula apart) check its parts with this.
    pub fn values(
        &mut self,
        formula: &ResolvedFormula,
        source: &Arc<SourceFile>,
    ) -> Result<StateValues> {
        self.start()?;
        self.checker
            .values(formula, source)
            .map_err(|e| self.options.limits.solver_error(e))
    }

    /// The all-horizon table `P(F≤h target)` for `h = 1..=max_h` and every state, in
    /// `max_h` sweeps (the monitor's table). `target` is a label (quoted or not) or a boolean
    /// state formula; errors in it are located in a text named `source_name`.
    pub fn horizon(
        &mut self,
        target: &str,
        source_name: &str,
        max_h: usize,
    ) -> Result<HorizonTable> {
        let set = self.states(target, source_name)?;
        self.horizon_of(&set, max_h)
    }

    /// The all-horizon table `P(F≤h target)` of a set of target states (see
    /// [`CheckSession::horizon`]).
    pub fn horizon_of(&mut self, set: &StateSet, max_h: usize) -> Result<HorizonTable> {
        let n = self.dtmc().num_states();
        if self.dtmc().is_interval() {
            return Err(CheckError::input(
                "an interval DTMC has no single chain for a horizon table; check it with Pmin/Pmax",
            ));
        }
        check_horizon_size(n, max_h)?;
        let deadline = self.start()?;
        let stop = self.options.limits.interrupt(deadline);
        augur_solver::bounded::horizon_table(&self.dtmc().matrix, set, max_h, &stop)
            .map_err(|e| self.options.limits.solver_error(e.into()))
    }
}

/// A horizon table of `n` states up to `max_h`: at least one horizon, at most
/// [`MAX_HORIZON_ENTRIES`] entries.
fn check_horizon_size(n: usize, max_h: usize) -> Result<()> {
    if max_h == 0 {
        return Err(CheckError::input("the largest horizon must be at least 1"));
    }
    if n.checked_mul(max_h).is_none_or(|c| c > MAX_HORIZON_ENTRIES) {
        return Err(CheckError::input(format!(
            "the table would have {n} × {max_h} entries (at most {MAX_HORIZON_ENTRIES}); choose a smaller horizon"
        )));
    }
    Ok(())
}

impl CheckSession<'_> {
    /// The robust horizon curve of an interval DTMC: `Pmax` (or `Pmin`, `maximise = false`)
    /// of `stay U≤h target` (`stay = None`: `F≤h target`) for `h = 1..=max_h`, state-major
    /// (`out[s·max_h + h − 1]`): `max_h` robust sweeps in all, each row's inner problem solved
    /// exactly (docs/robust.md). Errors for a model without intervals, a table over
    /// [`MAX_HORIZON_ENTRIES`] entries, or a limit hit.
    pub fn robust_horizon_of(
        &mut self,
        stay: Option<&StateSet>,
        target: &StateSet,
        max_h: usize,
        maximise: bool,
    ) -> Result<Vec<f64>> {
        let dtmc = self.dtmc();
        let n = dtmc.num_states();
        let Some(rows) = augur_solver::robust::IntervalRows::of(dtmc) else {
            return Err(CheckError::input(
                "a robust horizon curve needs an interval DTMC (probabilities in [lo, hi])",
            ));
        };
        check_horizon_size(n, max_h)?;
        let deadline = self.start()?;
        let opts = self.options.solve_options(deadline);
        let mut active = match stay {
            Some(s) => s.clone(),
            None => {
                let mut all = StateSet::with_capacity(n);
                all.insert_range(..);
                all
            }
        };
        active.difference_with(target);
        let mut x: Vec<f64> = (0..n)
            .map(|s| if target.contains(s) { 1.0 } else { 0.0 })
            .collect();
        let mut out = vec![0.0; n * max_h];
        for h in 1..=max_h {
            x = augur_solver::robust::bounded_sweeps(&rows, &active, x, 1, maximise, &opts)
                .map_err(|e| self.options.limits.solver_error(e.into()))?;
            for (s, &v) in x.iter().enumerate() {
                out[s * max_h + h - 1] = v;
            }
        }
        Ok(out)
    }
}

/// Checks one property, written as text, on a DTMC with the default options: the convenience
/// for tests and examples (`check_str(&dtmc, "P=? [ s<2 U=2 s=2 ]")`).
pub fn check_str(dtmc: &Dtmc, property: &str) -> Result<CheckResult> {
    CheckSession::for_dtmc(dtmc, CheckOptions::default()).check_str(property)
}
