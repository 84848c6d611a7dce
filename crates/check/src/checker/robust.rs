//! `Pmin`/`Pmax`/`Rmin`/`Rmax` over an interval DTMC (see `augur_solver::robust`): nature
//! resolves the intervals anew at every step, to minimise or to maximise.
//!
//! * `X`, `U` (bounded, unbounded, with a lower step bound: the remainder, then `a` robust
//!   sweeps of "stay in φ"), `F`; `G b φ = ¬(F b ¬φ)`, `φ R b ψ = ¬(¬φ U b ¬ψ)`,
//!   `φ W b ψ = ¬((φ∧¬ψ) U b (¬φ∧¬ψ))` with min and max swapped (nature minimising `G`
//!   maximises `F ¬φ`).
//! * Rewards: `F φ` (infinite where nature can miss φ with positive probability: `Pmin < 1`
//!   for `Rmax`, `Pmax < 1` for `Rmin`), `C≤k`, `I=k`; a transition reward is collected with
//!   the mass nature gives the transition. Co-safe LTL (`Rmax=? [ X F φ ]`) in `ltl_reward`.
//! * A model whose intervals are all points (`lo = hi`) is a DTMC: its `Pmin`/`Pmax` are
//!   checked as `P` (every operator, exact arithmetic included).

use super::Checker;
use crate::error::{CheckError, Result};
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::StateSet;
use augur_pctl::{Optimum, ResolvedFormula, ResolvedPath, ResolvedRewardPath, Steps};
use augur_solver::robust::{self, IntervalRows};
use augur_source::Span;

impl<'a> Checker<'a> {
    /// Whether the model is an interval DTMC with at least one proper interval (`lo < hi`).
    pub(super) fn robust(&self) -> bool {
        self.dtmc
            .intervals
            .as_ref()
            .is_some_and(|iv| iv.lo.iter().zip(&iv.hi).any(|(l, h)| l < h))
    }

    /// [`super::sweep_error`] for `k` robust sweeps: each row's inner problem (the successors
    /// sorted by value, the interval mass assigned greedily, the rest computed by subtraction)
    /// rounds every probability it assigns as well, so the width is squared.
    fn robust_sweep_error(&self, k: u64, scale: f64) -> f64 {
        let longest = super::longest_row(&self.dtmc.matrix);
        super::sweep_error((longest + 2) * (longest + 2), k, scale)
    }

    fn rows(&self) -> IntervalRows<'a> {
        IntervalRows::of(self.dtmc).expect("an interval model")
    }

    /// The error for `P`/`R` without `min`/`max` on an interval model, or the note for
    /// `min`/`max` on a DTMC; `Ok(true)` when the robust checker must compute the value.
    pub(super) fn direction(&mut self, op: &str, opt: Option<Optimum>, span: Span) -> Result<bool> {
        match (self.dtmc.is_interval(), opt) {
            (true, None) => Err(self.error_at(
                span,
                format!(
                    "`{op}` on an interval DTMC: nature resolves the intervals, so say which way: \
                     `{op}min` (the least value) or `{op}max` (the greatest)"
                ),
            )),
            (false, Some(o)) => {
                let note = format!(
                    "`{op}{}` on a model without intervals is `{op}` (nothing to minimise or maximise)",
                    o.as_str()
                );
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
                Ok(false)
            }
            (true, Some(_)) => {
                self.note_normalised();
                Ok(self.robust())
            }
            (false, None) => Ok(false),
        }
    }

    /// Outside `--method exact`, notes that the reading normalised rows of the interval
    /// model within the load tolerance ([`augur_dtmc::Intervals::normalised`]): the float
    /// methods check the normalised bounds (said in the result's method and JSON, and in a
    /// note), exact mode the bounds as written.
    fn note_normalised(&mut self) {
        let Some(c) = self.dtmc.intervals.as_ref().and_then(|iv| iv.normalised) else {
            return;
        };
        if self.exact_mode() {
            return;
        }
        self.normalised = Some(c);
        let first = match self.dtmc.describe_state(c.first_state as usize) {
            Some(v) => format!("state {} {v}", c.first_state),
            None => format!("state {}", c.first_state),
        };
        let note = format!(
            "interval model: {} row(s) whose bounds miss 1 by at most the load tolerance {:e} were scaled on reading to hold a distribution (first: {first}); every bound kept its sign, so no qualitative answer changed; `--method exact` reads the bounds as written",
            c.rows,
            augur_dtmc::interval::INTERVAL_TOLERANCE
        );
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// A robust iteration that did not converge on a model with tiny positive lower bounds
    /// (each an exit nature cannot avoid, kept as written whatever its size: issue 39) says
    /// why and what answers it: a located error, never another model's value.
    pub(super) fn tiny_bounds(&self, e: CheckError, span: Span) -> CheckError {
        let CheckError::Solver(augur_solver::SolverError::NotConverged { .. }) = &e else {
            return e;
        };
        let Some(iv) = self.dtmc.intervals.as_ref() else {
            return e;
        };
        let tiny: Vec<f64> = iv
            .lo
            .iter()
            .copied()
            .filter(|&l| l > 0.0 && l < 1e-9)
            .collect();
        let Some(min) = tiny.iter().copied().reduce(f64::min) else {
            return e;
        };
        self.error_at(
            span,
            format!(
                "{e}: the interval model has {} positive lower bound(s) below 1e-9 (the smallest {min:e}); each is an exit nature cannot avoid (a bound above 0 is kept as written, however small), and they leak too slowly for the iteration to meet its precision. `--method exact` decides it exactly (a lower bound written as a float expression such as `0.1*3 - 0.3` is then its rational value, 0)",
                tiny.len()
            ),
        )
    }

    /// `Pmin`/`Pmax` of a path formula.
    pub(super) fn robust_path(
        &mut self,
        path: &ResolvedPath,
        opt: Optimum,
        span: Span,
    ) -> Result<NumValues> {
        if self.exact_mode() {
            return self.robust_exact_path(path, opt, span);
        }
        let max = opt == Optimum::Max;
        match path {
            ResolvedPath::Next(phi) => {
                let set = self.bool_of(phi)?;
                let x = indicator(&set, self.n());
                let all = self.full();
                let v = robust::bounded_sweeps(&self.rows(), &all, x, 1, max, &self.options)?;
                Ok(NumValues::exact(v, MethodUsed::Next))
            }
            ResolvedPath::Until(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                self.robust_until(&phi, &psi, b, max)
            }
            ResolvedPath::Eventually(psi, b) => {
                let psi = self.bool_of(psi)?;
                let all = self.full();
                self.robust_until(&all, &psi, b, max)
            }
            ResolvedPath::Globally(phi, b) => {
                let phi = self.bool_of(phi)?;
                let not_phi = self.not(&phi);
                let all = self.full();
                Ok(self.robust_until(&all, &not_phi, b, !max)?.complement())
            }
            ResolvedPath::WeakUntil(phi, psi, b) => {
                let (left, right) = self.weak_until_sets(phi, psi)?;
                Ok(self.robust_until(&left, &right, b, !max)?.complement())
            }
            ResolvedPath::Release(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let (np, nq) = (self.not(&phi), self.not(&psi));
                Ok(self.robust_until(&np, &nq, b, !max)?.complement())
            }
            ResolvedPath::Ltl(f) => self.robust_ltl(f, max, span),
        }
    }

    fn robust_until(
        &mut self,
        phi: &StateSet,
        psi: &StateSet,
        steps: &Steps,
        max: bool,
    ) -> Result<NumValues> {
        let rows = self.rows();
        let n = self.n();
        let rest = match steps.upper {
            Some(u) => {
                let window = u.saturating_sub(steps.lower);
                let mut active = phi.clone();
                active.difference_with(psi);
                let x = robust::bounded_sweeps(
                    &rows,
                    &active,
                    indicator(psi, n),
                    window,
                    max,
                    &self.options,
                )?;
                NumValues::swept(
                    x,
                    MethodUsed::Bounded { steps: window },
                    self.robust_sweep_error(window, 1.0),
                    true,
                )
                .exact_on(psi)
            }
            None => {
                let sol = robust::until(&rows, phi, psi, max, &self.options)?;
                NumValues {
                    values: sol.values,
                    bounds: sol.bounds,
                    method: MethodUsed::Solver(format!(
                        "robust interval iteration ({} sweeps)",
                        sol.sweeps
                    )),
                    exact: None,
                }
            }
        };
        if steps.lower == 0 {
            return Ok(rest);
        }
        // `a` sweeps of "stay in φ": x(s) ← [s⊨φ]·opt Σ P·x.
        let k = steps.lower;
        // The first sweep reads the remainder everywhere (a ψ-state outside φ counts at step
        // `a`); afterwards the states outside φ are 0.
        let opts = &self.options;
        rest.restricted(k, self.robust_sweep_error(k, 1.0), |x| {
            let x = robust::bounded_sweeps(&rows, phi, x, 1, max, opts)?;
            let x = zero_outside(x, phi);
            Ok(robust::bounded_sweeps(&rows, phi, x, k - 1, max, opts)?)
        })
    }

    /// `Rmin`/`Rmax` of a reward path formula: co-safe LTL in `ltl_reward`, `F φ`, `C≤k` and
    /// `I=k` by the float robust solver or, in exact mode, `robust_exact_reward`.
    pub(super) fn robust_reward(
        &mut self,
        structure: usize,
        path: &ResolvedRewardPath,
        span: Span,
        opt: Optimum,
    ) -> Result<NumValues> {
        let max = opt == Optimum::Max;
        let path = match path {
            ResolvedRewardPath::Reachability(phi) => RobustReward::Reach(phi),
            ResolvedRewardPath::Cumulative {
                steps: Some(k),
                discount: None,
            } => RobustReward::Cumulative(*k),
            ResolvedRewardPath::Instantaneous(k) => RobustReward::Instantaneous(*k),
            ResolvedRewardPath::Ltl(f) => return self.robust_ltl_reward(structure, f, max, span),
            ResolvedRewardPath::Cumulative { .. } | ResolvedRewardPath::LongRun => {
                return Err(self.error_at(
                    span,
                    "total, discounted and long-run rewards (`C`, `C{discount=d}`, `S`) are not \
                     supported on interval DTMCs yet; `F φ`, `C<=k` and `I=k` are",
                ))
            }
        };
        let rs = self.structure(structure, span)?;
        if self.exact_mode() {
            return self.robust_exact_reward(rs, path, max, span);
        }
        let n = self.n();
        let state = rs.state.clone().unwrap_or_else(|| vec![0.0; n]);
        let trans = rs.transition.as_deref();
        let rows = self.rows();
        match path {
            RobustReward::Reach(phi) => {
                let target = self.bool_of(phi)?;
                let sol = robust::reach_rewards(&rows, &target, &state, trans, max, &self.options)?;
                Ok(NumValues {
                    values: sol.values,
                    bounds: sol.bounds,
                    method: MethodUsed::Solver(format!(
                        "robust value iteration ({} sweeps)",
                        sol.sweeps
                    )),
                    exact: None,
                })
            }
            RobustReward::Cumulative(k) => {
                let x = robust::step_rewards(&rows, &state, trans, k, false, max, &self.options)?;
                let r = state
                    .iter()
                    .chain(trans.into_iter().flatten())
                    .fold(0.0, |m: f64, v| m.max(v.abs()));
                let nonnegative = state
                    .iter()
                    .chain(trans.into_iter().flatten())
                    .all(|&v| v >= 0.0);
                let error = self.robust_sweep_error(k, k as f64 * 2.0 * r);
                Ok(NumValues::swept(
                    x,
                    MethodUsed::Cumulative {
                        steps: k,
                        discounted: false,
                    },
                    error,
                    nonnegative,
                ))
            }
            RobustReward::Instantaneous(k) => {
                let x = robust::step_rewards(&rows, &state, None, k, true, max, &self.options)?;
                let scale = state.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
                let nonnegative = state.iter().all(|&v| v >= 0.0);
                let error = self.robust_sweep_error(k, scale);
                Ok(NumValues::swept(
                    x,
                    MethodUsed::Instantaneous { steps: k },
                    error,
                    nonnegative,
                ))
            }
        }
    }
}

/// The reward paths of the interval solvers, float and exact.
#[derive(Clone, Copy)]
pub(super) enum RobustReward<'p> {
    /// `F φ`.
    Reach(&'p ResolvedFormula),
    /// `C≤k`.
    Cumulative(u64),
    /// `I=k`.
    Instantaneous(u64),
}

fn indicator(set: &StateSet, n: usize) -> Vec<f64> {
    (0..n)
        .map(|s| if set.contains(s) { 1.0 } else { 0.0 })
        .collect()
}

fn zero_outside(mut x: Vec<f64>, set: &StateSet) -> Vec<f64> {
    for (s, v) in x.iter_mut().enumerate() {
        if !set.contains(s) {
            *v = 0.0;
        }
    }
    x
}
