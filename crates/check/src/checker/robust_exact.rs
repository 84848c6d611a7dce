//! `--method exact` on an interval DTMC: `Pmin`/`Pmax` of `X`, `U`, `F`, `G`, `W`, `R` (every
//! step bound) and `Rmin`/`Rmax` of `F`, `C<=k`, `I=k` in rational arithmetic (see
//! `augur_solver::robust_exact`); co-safe and safe LTL in `robust_ltl`. Unbounded until and
//! reachability rewards start from the order of the float robust solver's values and run
//! policy iteration on nature's choices; step-bounded forms are exact robust sweeps. Every
//! other operator is a located user error naming the default method.

use super::robust::RobustReward;
use super::Checker;
use crate::error::{CheckError, Result};
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::{RewardStructure, StateSet};
use augur_pctl::BigRational;
use augur_pctl::{Optimum, ResolvedPath, Steps};
use augur_solver::robust::{self, IntervalRows};
use augur_solver::robust_exact::{self, ExactRows};
use augur_solver::SolverError;
use augur_source::Span;
use num_traits::{Signed, Zero};

impl Checker<'_> {
    /// `Pmin`/`Pmax` of a path formula in exact arithmetic.
    pub(super) fn robust_exact_path(
        &mut self,
        path: &ResolvedPath,
        opt: Optimum,
        span: Span,
    ) -> Result<NumValues> {
        let max = opt == Optimum::Max;
        let rows = ExactRows::of(self.dtmc).map_err(|e| self.exact_error(e, span))?;
        match path {
            ResolvedPath::Next(phi) => {
                let set = self.bool_of(phi)?;
                let all = self.full();
                let x = robust_exact::bounded_sweeps(
                    &rows,
                    &all,
                    super::rational_indicator(&set, self.n()),
                    1,
                    max,
                    &self.options,
                )
                .map_err(|e| self.exact_error(e, span))?;
                Ok(rational(x, MethodUsed::Next))
            }
            ResolvedPath::Until(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                self.exact_until(&rows, &phi, &psi, b, max, span)
            }
            ResolvedPath::Eventually(psi, b) => {
                let psi = self.bool_of(psi)?;
                let all = self.full();
                self.exact_until(&rows, &all, &psi, b, max, span)
            }
            ResolvedPath::Globally(phi, b) => {
                let phi = self.bool_of(phi)?;
                let not_phi = self.not(&phi);
                let all = self.full();
                Ok(self
                    .exact_until(&rows, &all, &not_phi, b, !max, span)?
                    .complement())
            }
            ResolvedPath::WeakUntil(phi, psi, b) => {
                let (left, right) = self.weak_until_sets(phi, psi)?;
                Ok(self
                    .exact_until(&rows, &left, &right, b, !max, span)?
                    .complement())
            }
            ResolvedPath::Release(phi, psi, b) => {
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let (np, nq) = (self.not(&phi), self.not(&psi));
                Ok(self
                    .exact_until(&rows, &np, &nq, b, !max, span)?
                    .complement())
            }
            ResolvedPath::Ltl(f) => self.robust_ltl(f, max, span),
        }
    }

    fn exact_until(
        &mut self,
        rows: &ExactRows,
        phi: &StateSet,
        psi: &StateSet,
        steps: &Steps,
        max: bool,
        span: Span,
    ) -> Result<NumValues> {
        let n = self.n();
        let (rest, method) = match steps.upper {
            Some(u) => {
                let window = u.saturating_sub(steps.lower);
                let mut active = phi.clone();
                active.difference_with(psi);
                let x = robust_exact::bounded_sweeps(
                    rows,
                    &active,
                    super::rational_indicator(psi, n),
                    window,
                    max,
                    &self.options,
                )
                .map_err(|e| self.exact_error(e, span))?;
                (x, MethodUsed::Bounded { steps: window })
            }
            None => {
                // The float robust solution orders the successors for the first policy.
                let float_rows = IntervalRows::of(self.dtmc).expect("an interval model");
                // A float solver that does not converge only costs the hint (policy iteration
                // starts from the row order then); a stop is a stop.
                let hint = match robust::until(&float_rows, phi, psi, max, &self.options) {
                    Ok(h) => Some(h.values),
                    Err(e @ SolverError::Interrupted(_)) => return Err(e.into()),
                    Err(_) => None,
                };
                let sol = robust_exact::until(rows, phi, psi, max, hint.as_deref(), &self.options)
                    .map_err(|e| self.exact_error(e, span))?;
                (
                    sol.values,
                    MethodUsed::Solver(format!(
                        "exact robust policy iteration ({} policies)",
                        sol.iterations
                    )),
                )
            }
        };
        if steps.lower == 0 {
            return Ok(rational(rest, method));
        }
        // `a` exact sweeps of "stay in φ" (as the default method): the first reads the
        // remainder everywhere (a ψ-state outside φ counts at step `a`), afterwards the states
        // outside φ are 0.
        let k = steps.lower;
        let sweep = |c: &Self, x, k| {
            robust_exact::bounded_sweeps(rows, phi, x, k, max, &c.options)
                .map_err(|e| c.exact_error(e, span))
        };
        let mut x = sweep(self, rest, 1)?;
        for (s, v) in x.iter_mut().enumerate() {
            if !phi.contains(s) {
                *v = BigRational::zero();
            }
        }
        let x = sweep(self, x, k - 1)?;
        Ok(rational(
            x,
            MethodUsed::RestrictedSteps {
                inner: Box::new(method),
                steps: k,
            },
        ))
    }

    /// `Rmin`/`Rmax` of a reward path formula in exact arithmetic: `F φ` by policy iteration
    /// (infinite where nature can miss φ), `C≤k` and `I=k` by exact robust sweeps. The rewards
    /// are the model's exact ones, or the decimals their doubles print as; negative rewards
    /// are refused (policy iteration's argument needs rewards ≥ 0).
    pub(super) fn robust_exact_reward(
        &mut self,
        rs: &RewardStructure,
        path: RobustReward<'_>,
        max: bool,
        span: Span,
    ) -> Result<NumValues> {
        let rows = ExactRows::of(self.dtmc).map_err(|e| self.exact_error(e, span))?;
        let n = self.n();
        let (state, trans) = self.exact_robust_rewards(rs, span)?;
        let stop = |c: &Self, e| c.exact_error(e, span);
        match path {
            RobustReward::Reach(phi) => {
                let target = self.bool_of(phi)?;
                let float_rows = IntervalRows::of(self.dtmc).expect("an interval model");
                let float_state = rs.state.clone().unwrap_or_else(|| vec![0.0; n]);
                // The float solution orders the successors for the first policy; a float
                // solver that fails only costs the hint.
                let hint = match robust::reach_rewards(
                    &float_rows,
                    &target,
                    &float_state,
                    rs.transition.as_deref(),
                    max,
                    &self.options,
                ) {
                    Ok(h) => Some(h.values),
                    Err(e @ SolverError::Interrupted(_)) => return Err(e.into()),
                    Err(_) => None,
                };
                let sol = robust_exact::reach_rewards(
                    &rows,
                    &target,
                    &state,
                    trans.as_deref(),
                    max,
                    hint.as_deref(),
                    &self.options,
                )
                .map_err(|e| stop(self, e))?;
                Ok(NumValues::rational(
                    sol.values,
                    MethodUsed::Solver(format!(
                        "exact robust policy iteration ({} policies)",
                        sol.iterations
                    )),
                ))
            }
            RobustReward::Cumulative(k) => {
                let x = robust_exact::step_rewards(
                    &rows,
                    &state,
                    trans.as_deref(),
                    k,
                    false,
                    max,
                    &self.options,
                )
                .map_err(|e| stop(self, e))?;
                Ok(rational(
                    x,
                    MethodUsed::Cumulative {
                        steps: k,
                        discounted: false,
                    },
                ))
            }
            RobustReward::Instantaneous(k) => {
                let x =
                    robust_exact::step_rewards(&rows, &state, None, k, true, max, &self.options)
                        .map_err(|e| stop(self, e))?;
                Ok(rational(x, MethodUsed::Instantaneous { steps: k }))
            }
        }
    }

    /// The state and transition rewards of `rs` in rationals for the exact robust solver: the
    /// model's exact ones, or the decimals their doubles print as; a negative reward is a
    /// located error (policy iteration's argument needs rewards ≥ 0).
    #[allow(clippy::type_complexity)]
    pub(super) fn exact_robust_rewards(
        &self,
        rs: &augur_dtmc::RewardStructure,
        span: Span,
    ) -> Result<(Vec<BigRational>, Option<Vec<BigRational>>)> {
        self.one_step(rs)?; // checks the lengths
        let n = self.n();
        let dec = |x: f64| {
            augur_solver::exact::from_decimal(x)
                .ok_or_else(|| CheckError::input(format!("model: a reward is not finite ({x})")))
        };
        let exact_state = rs.exact.as_ref().and_then(|e| e.state.as_ref());
        let exact_trans = rs.exact.as_ref().and_then(|e| e.transition.as_ref());
        let state: Vec<BigRational> = match (&rs.state, exact_state) {
            (Some(v), Some(q)) if q.len() == v.len() => q.clone(),
            (Some(v), _) => v.iter().map(|&x| dec(x)).collect::<Result<_>>()?,
            (None, _) => vec![BigRational::zero(); n],
        };
        let trans: Option<Vec<BigRational>> = match (&rs.transition, exact_trans) {
            (Some(t), Some(q)) if q.len() == t.len() => Some(q.clone()),
            (Some(t), _) => Some(t.iter().map(|&x| dec(x)).collect::<Result<_>>()?),
            (None, _) => None,
        };
        if state
            .iter()
            .chain(trans.iter().flatten())
            .any(|q| q.is_negative())
        {
            return Err(self.error_at(
                span,
                "`--method exact` on an interval DTMC needs rewards >= 0 (this structure has \
                 a negative one)",
            ));
        }
        Ok((state, trans))
    }

    /// A refusal of the exact robust solver (size, budget) as a user error at the property;
    /// interruptions stay stops.
    pub(super) fn exact_error(&self, e: SolverError, span: Span) -> CheckError {
        match e {
            SolverError::Unsupported(m) => self.error_at(span, m),
            e => e.into(),
        }
    }
}

fn rational(x: Vec<BigRational>, method: MethodUsed) -> NumValues {
    NumValues::rational(x.into_iter().map(Some).collect(), method)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{arb, bounds, exact_finite, random_idtmc};
    use augur_dtmc::Dtmc;
    use augur_pctl::BigRational;
    use proptest::prelude::*;

    /// The exact values and the default method's bounds of `prop` in every state.
    fn both(d: &Dtmc, prop: &str) -> (Vec<BigRational>, (Vec<f64>, Vec<f64>)) {
        (exact_finite(d, prop), bounds(d, prop))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// On random small interval DTMCs, the exact `Pmin`/`Pmax` of `F`, `U` and `G` lies in
        /// every state within the sound bounds of the float robust solver (interval iteration,
        /// with deflation of end components for `Pmax`): two independent algorithms.
        #[test]
        fn exact_values_lie_within_the_float_bounds(
            (n, mask, units, down, up, goal) in arb()
        ) {
            let d = random_idtmc(n, &mask, &units, &down, &up);
            let avoid = (goal + 1) % n;
            for prop in [
                format!("Pmax=? [ F s={goal} ]"),
                format!("Pmin=? [ F s={goal} ]"),
                format!("Pmax=? [ s!={avoid} U s={goal} ]"),
                format!("Pmin=? [ s!={avoid} U s={goal} ]"),
                format!("Pmax=? [ G s!={goal} ]"),
                format!("Pmin=? [ G s!={goal} ]"),
            ] {
                let (q, (lo, hi)) = both(&d, &prop);
                for s in 0..n {
                    let (l, h) = (
                        BigRational::from_float(lo[s]).unwrap(),
                        BigRational::from_float(hi[s]).unwrap(),
                    );
                    prop_assert!(
                        l <= q[s] && q[s] <= h,
                        "{prop} in state {s}: exact {} outside [{}, {}]", q[s], lo[s], hi[s]
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod reward_tests {
    use super::super::test_support::{arb, random_idtmc, values};
    use crate::Method;
    use augur_dtmc::{Dtmc, RewardStructure};
    use augur_pctl::BigRational;
    use proptest::prelude::*;

    /// `d` with one reward structure: state rewards `state[s] % 3` and transition rewards
    /// `trans[e] % 2` (zeros included, so nature may find zero-reward end components).
    fn with_rewards(mut d: Dtmc, state: &[u8], trans: &[u8]) -> Dtmc {
        let n = d.num_states();
        let nnz = d.matrix.nnz();
        d.rewards = vec![RewardStructure {
            name: Some("r".into()),
            state: Some((0..n).map(|s| f64::from(state[s] % 3)).collect()),
            transition: Some(
                (0..nnz)
                    .map(|e| f64::from(trans[e % trans.len()] % 2))
                    .collect(),
            ),
            exact: None,
        }];
        d
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// On random small interval DTMCs with state and transition rewards, the exact
        /// `Rmin`/`Rmax` of `F`, `C<=k` and `I=k` agree with the default method's robust value
        /// iteration (a second algorithm): infinite in the same states; elsewhere within its
        /// guaranteed bounds, or, for `Rmin` with zero-reward end components (lower values
        /// only), above its lifted lower value.
        #[test]
        fn exact_rewards_agree_with_the_float_robust_iteration(
            (n, mask, units, down, up, goal) in arb(),
            state in proptest::collection::vec(any::<u8>(), 6),
            trans in proptest::collection::vec(any::<u8>(), 36),
        ) {
            let d = with_rewards(random_idtmc(n, &mask, &units, &down, &up), &state, &trans);
            for prop in [
                format!("R{{\"r\"}}max=? [ F s={goal} ]"),
                format!("R{{\"r\"}}min=? [ F s={goal} ]"),
                "R{\"r\"}max=? [ C<=3 ]".to_string(),
                "R{\"r\"}min=? [ C<=3 ]".to_string(),
                "R{\"r\"}max=? [ I=2 ]".to_string(),
                "R{\"r\"}min=? [ I=2 ]".to_string(),
            ] {
                let exact = values(&d, &prop, Method::Exact).exact.expect("exact values");
                let float = values(&d, &prop, Method::Auto);
                for s in 0..n {
                    let v = float.values[s];
                    match &exact[s] {
                        None => prop_assert!(v.is_infinite(), "{prop} in {s}: exact ∞, float {v}"),
                        Some(q) => {
                            prop_assert!(v.is_finite(), "{prop} in {s}: exact {q}, float ∞");
                            let (lo, hi) = match &float.bounds {
                                Some((lo, hi)) => (lo[s], hi[s]),
                                None => (v, f64::INFINITY),
                            };
                            let l = BigRational::from_float(lo).unwrap();
                            prop_assert!(l <= *q, "{prop} in {s}: exact {q} below {lo}");
                            if hi.is_finite() {
                                let h = BigRational::from_float(hi).unwrap();
                                prop_assert!(*q <= h, "{prop} in {s}: exact {q} above {hi}");
                            }
                        }
                    }
                }
            }
        }
    }
}
