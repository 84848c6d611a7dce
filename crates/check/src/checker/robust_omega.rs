//! `Pmin`/`Pmax` of LTL formulas that are neither co-safe nor safe (`G F a`, `F G a`,
//! `(G !h) & (G F g)`, …) over an interval DTMC.
//!
//! `augur_ltl::OmegaProduct` builds the product of the model's transitions with a
//! limit-deterministic automaton of the formula (the `af` automaton, then a guess of the
//! Master Theorem's sets `X`, `Y` made by nature, then safety formulas and `G F` monitors; see
//! `augur_ltl::omega`) and the union of its accepting end components.
//!
//! * `Pmax φ` = the robust maximal probability of reaching them (sound interval iteration, or
//!   exact policy iteration with `--method exact`; the guesses are rows with `[0, 1]` on each
//!   option).
//! * `Pmin φ = 1 − Pmax ¬φ`: the product of the negation's automaton, bounds flipped.
//!
//! The product and the automaton count against the state limit.

use super::Checker;
use crate::error::Result;
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::StateSet;
use augur_ltl::{Ltl, LtlError, OmegaProduct, CHOICE_ENTRY, NO_ENTRY};
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
            e @ LtlError::TooManyGuesses { .. } => self.error_at(span, e.to_string()),
            e => self.ltl_error(e, span),
        })?;
        let lo: Vec<f64> = product
            .source_entry
            .iter()
            .map(|&e| match e {
                NO_ENTRY => 1.0,
                CHOICE_ENTRY => 0.0,
                e => iv.lo[e as usize],
            })
            .collect();
        let hi: Vec<f64> = product
            .source_entry
            .iter()
            .map(|&e| match e {
                NO_ENTRY | CHOICE_ENTRY => 1.0,
                e => iv.hi[e as usize],
            })
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
            "robust LTL product with the limit-deterministic automaton{} ({np} states, {} \
             automaton states, {} guesses, {} accepting end components): reaching them",
            if max { "" } else { " of the negation" },
            product.automaton_states,
            product.guesses,
            product.accepting_components,
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
