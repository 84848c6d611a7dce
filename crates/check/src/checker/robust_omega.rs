//! `Pmin`/`Pmax` of LTL formulas that are neither co-safe nor safe (`G F a`, `F G a`,
//! `(G !h) & (G F g)`, …) over an interval DTMC.
//!
//! `augur_ltl::OmegaProduct` builds the product of the model's transitions with the formula's
//! automaton (an interval chain over product states, as for co-safe formulas) and finds the
//! union of its *good* end components: strongly connected edge sets nature can keep the chain
//! in, with positive mass on each kept edge, on which the formula then holds almost surely (the
//! Master-Theorem judge of the DTMC checker, run on the component's edges; a rejected
//! component's sub-components are searched, see `augur_ltl::omega`).
//!
//! * `Pmax φ` = the robust maximal probability of reaching the good states (sound interval
//!   iteration, or exact policy iteration with `--method exact`).
//! * `Pmin φ = 1 − Pmax ¬φ`: the product of the negation's automaton, bounds flipped.
//!
//! The product and the automaton count against the state limit, and so does the number of end
//! components judged (each keeps its edge set for memoisation).

use super::Checker;
use crate::error::Result;
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::StateSet;
use augur_ltl::{Ltl, LtlError, OmegaProduct, NO_ENTRY};
use augur_solver::robust::{self, IntervalRows};
use augur_solver::robust_exact::{self, ExactRows};
use augur_solver::SolverError;
use augur_source::Span;

impl Checker<'_> {
    /// `Pmax` (`max`) or `Pmin` of the LTL formula `formula` (propositions `aps`, written in
    /// the `P` operator at `span`) in every state of the interval model, for a formula that is
    /// neither co-safe nor safe.
    pub(super) fn robust_omega(
        &mut self,
        formula: &Ltl,
        aps: &[StateSet],
        max: bool,
        span: Span,
    ) -> Result<NumValues> {
        let options = self.ltl_options();
        let goal = if max {
            formula.clone()
        } else {
            Ltl::not(formula.clone())
        };
        let iv = self.dtmc.intervals.as_deref().expect("an interval model");
        let product = OmegaProduct::build(
            self.matrix(),
            &iv.lo,
            &iv.hi,
            aps,
            &goal,
            &options,
            &self.options.interrupt,
        )
        .map_err(|e| match e {
            e @ LtlError::EndComponentsTooMany { limit } => {
                let hint = if self.max_states == Some(limit) {
                    "the state limit bounds it (raise it with --max-states)"
                } else {
                    "acceptance depends on the kept edges in too many ways (the search for \
                     sub-components is exponential in the worst case)"
                };
                self.error_at(span, format!("{e}: {hint}"))
            }
            e => self.ltl_error(e, span),
        })?;
        let bound = |v: &[f64], e: u32| if e == NO_ENTRY { 1.0 } else { v[e as usize] };
        let lo: Vec<f64> = product
            .source_entry
            .iter()
            .map(|&e| bound(&iv.lo, e))
            .collect();
        let hi: Vec<f64> = product
            .source_entry
            .iter()
            .map(|&e| bound(&iv.hi, e))
            .collect();
        let rows = IntervalRows {
            ptr: &product.ptr,
            idx: &product.idx,
            lo: &lo,
            hi: &hi,
        };
        let np = product.num_states();
        let mut all = StateSet::with_capacity(np);
        all.insert_range(..);
        let what = format!(
            "robust LTL product ({np} states, {} automaton states; {} of {} end components \
             judged accepting{}): reaching them",
            product.automaton_states,
            product.good_components,
            product.judged,
            if max { "" } else { ", for the negation" }
        );
        let pick =
            |v: &[f64]| -> Vec<f64> { product.initial.iter().map(|&p| v[p as usize]).collect() };
        let float = robust::until(&rows, &all, &product.good, true, &self.options);
        let num = if self.exact_mode() {
            let hint = match float {
                Ok(h) => Some(h.values),
                Err(e @ SolverError::Interrupted(_)) => return Err(e.into()),
                Err(_) => None,
            };
            let exact = ExactRows::of(self.dtmc)
                .and_then(|r| {
                    r.product(
                        product.ptr.clone(),
                        product.idx.clone(),
                        &product.source_entry,
                    )
                })
                .map_err(|e| self.exact_error(e, span))?;
            let sol = robust_exact::until(
                &exact,
                &all,
                &product.good,
                true,
                hint.as_deref(),
                &self.options,
            )
            .map_err(|e| self.exact_error(e, span))?;
            let q = product
                .initial
                .iter()
                .map(|&p| Some(sol.values[p as usize].clone()))
                .collect();
            NumValues::rational(
                q,
                MethodUsed::Solver(format!(
                    "{what}; exact robust policy iteration ({} policies)",
                    sol.iterations
                )),
            )
        } else {
            let sol = float?;
            NumValues {
                values: pick(&sol.values),
                bounds: sol.bounds.as_ref().map(|(l, h)| (pick(l), pick(h))),
                method: MethodUsed::Solver(format!(
                    "{what}; robust interval iteration ({} sweeps)",
                    sol.sweeps
                )),
                exact: None,
            }
        };
        Ok(if max { num } else { num.complement() })
    }
}
