//! `--method exact` on an interval DTMC: `Pmin`/`Pmax` of `X`, `U`, `F`, `G`, `W`, `R` (with
//! an upper step bound or none) in rational arithmetic (see `augur_solver::robust_exact`).
//! Unbounded until starts from the order of the float robust solver's values and runs
//! policy iteration on nature's choices; step-bounded forms are exact robust sweeps. Every
//! other operator is a located user error naming the default method.

use super::Checker;
use crate::error::{CheckError, Result};
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::StateSet;
use augur_pctl::{Optimum, ResolvedPath, Steps};
use augur_solver::robust::{self, IntervalRows};
use augur_solver::robust_exact::{self, ExactRows};
use augur_solver::SolverError;
use augur_source::Span;
use augur_pctl::BigRational;
use num_traits::{One, Zero};

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
                    indicator_q(&set, self.n()),
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
                let phi = self.bool_of(phi)?;
                let psi = self.bool_of(psi)?;
                let not_psi = self.not(&psi);
                let mut left = phi.clone();
                left.intersect_with(&not_psi);
                let mut right = self.not(&phi);
                right.intersect_with(&not_psi);
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
            ResolvedPath::Ltl(_) => Err(self.error_at(
                span,
                "LTL formulas (temporal operators nested or combined) are not supported on \
                 interval DTMCs; use X, U, F, G, W or R over state formulas",
            )),
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
        if steps.lower > 0 {
            return Err(self.error_at(
                span,
                "`--method exact` on an interval DTMC does not support a lower step bound \
                 (`U>=k`, `U[a,b]`); the default method (`--method auto`) answers it",
            ));
        }
        let n = self.n();
        match steps.upper {
            Some(k) => {
                let mut active = phi.clone();
                active.difference_with(psi);
                let x = robust_exact::bounded_sweeps(
                    rows,
                    &active,
                    indicator_q(psi, n),
                    k,
                    max,
                    &self.options,
                )
                .map_err(|e| self.exact_error(e, span))?;
                Ok(rational(x, MethodUsed::Bounded { steps: k }))
            }
            None => {
                // The float robust solution orders the successors for the first policy.
                let float_rows = IntervalRows::of(self.dtmc).expect("an interval model");
                let hint = robust::until(&float_rows, phi, psi, max, &self.options)?;
                let sol =
                    robust_exact::until(rows, phi, psi, max, Some(&hint.values), &self.options)
                        .map_err(|e| self.exact_error(e, span))?;
                Ok(rational(
                    sol.values,
                    MethodUsed::Solver(format!(
                        "exact robust policy iteration ({} policies)",
                        sol.iterations
                    )),
                ))
            }
        }
    }

    /// A refusal of the exact robust solver (size, budget) as a user error at the property;
    /// interruptions stay stops.
    fn exact_error(&self, e: SolverError, span: Span) -> CheckError {
        match e {
            SolverError::Unsupported(m) => self.error_at(span, m),
            e => e.into(),
        }
    }
}

fn indicator_q(set: &StateSet, n: usize) -> Vec<BigRational> {
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

fn rational(x: Vec<BigRational>, method: MethodUsed) -> NumValues {
    NumValues::rational(x.into_iter().map(Some).collect(), method)
}
