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
use crate::result::NumValues;
use augur_dtmc::StateSet;
use augur_ltl::{Ltl, LtlError, OmegaProduct, RowBounds};
use augur_solver::robust_exact::ExactRows;
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
        // Under `--method exact` the end components are decided in rationals, as the exact
        // solver's rows are.
        let exact_rows = if self.exact_mode() {
            Some(ExactRows::of(self.dtmc).map_err(|e| self.exact_error(e, span))?)
        } else {
            None
        };
        let product = OmegaProduct::build(
            self.matrix(),
            RowBounds {
                lo: &iv.lo,
                hi: &iv.hi,
                exact: exact_rows.as_ref().map(ExactRows::bounds),
            },
            aps,
            &goal,
            &options,
            &self.options.interrupt,
        )
        .map_err(|e| match e {
            e @ LtlError::TooManyGuesses { .. } => self.error_at(span, e.to_string()),
            e => self.ltl_error(e, span),
        })?;
        let what = format!(
            "robust LTL product with the limit-deterministic automaton{} ({} states, {} \
             automaton states, {} guesses, {} accepting end components): reaching them",
            if max { "" } else { " of the negation" },
            product.num_states(),
            product.automaton_states,
            product.guesses,
            product.accepting_components,
        );
        let num = self.robust_product_until(&product.rows, &product.good, true, what, span)?;
        Ok(if max { num } else { num.complement() })
    }
}
