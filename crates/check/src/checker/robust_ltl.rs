//! `Pmin`/`Pmax` of co-safe and safe LTL formulas over an interval DTMC.
//!
//! The product of the model's transitions with the formula's deterministic automaton
//! (`augur_ltl::PrefixProduct`: `(s, q) → (t, δ(q, L(s)))` for every stored `s → t`) is an
//! interval DTMC: the row of `(s, q)` copies the row of `s` entry by entry, distinct successors
//! `t` going to distinct product states, so each product row's intervals are the original row's.
//! Nature resolving the product's rows is nature with the memory of `q`; for reachability on
//! the product memoryless nature is optimal, so this is the usual semantics (nature may choose
//! anew at every step, knowing the history).
//!
//! * Co-safe formulas (no `G`, `W`, `R` in negation normal form; bounded operators are
//!   unrolled): a path satisfies φ exactly when the automaton reaches `true` (formula
//!   progression reaches `true` on a good prefix), so `Pmin`/`Pmax` of φ are `Pmin`/`Pmax` of
//!   reaching the `true` product states.
//! * Safe formulas (no `F`, `U`): a path violates φ exactly when the automaton reaches `false`,
//!   so `Pmax φ = 1 − Pmin(F false)` and `Pmin φ = 1 − Pmax(F false)`.
//! * Other formulas (`G F a`: the acceptance depends on what nature does forever, inside end
//!   components) are a located user error.
//!
//! The product counts against the state limit as the DTMC's does, and is solved by the robust
//! interval iteration (sound bounds) or, with `--method exact`, by exact policy iteration.

use super::Checker;
use crate::error::Result;
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::StateSet;
use augur_ltl::{Fragment, PrefixProduct, NO_ENTRY};
use augur_pctl::ResolvedLtl;
use augur_solver::robust::{self, IntervalRows};
use augur_solver::robust_exact::{self, ExactRows};
use augur_solver::SolverError;
use augur_source::Span;

impl Checker<'_> {
    /// `Pmax` (`max`) or `Pmin` of the LTL formula `f` (written in the `P` operator at `span`)
    /// in every state of the interval model.
    pub(super) fn robust_ltl(&mut self, f: &ResolvedLtl, max: bool, span: Span) -> Result<NumValues> {
        let options = self.ltl_options();
        let mut aps = Vec::new();
        let formula = self.ltl_formula(f, &mut aps, &options)?;
        let product = PrefixProduct::build(
            self.matrix(),
            &aps,
            &formula,
            &options,
            &self.options.interrupt,
        )
        .map_err(|e| match e {
            augur_ltl::LtlError::NotPrefixDecided => self.error_at(
                span,
                format!(
                    "{e}; interval DTMCs answer co-safe formulas (X, U, F and bounded \
                     operators, e.g. `F a & F b`) and safe ones (X, G, W, R and bounded \
                     operators, e.g. `G a | G b`)"
                ),
            ),
            e => self.ltl_error(e, span),
        })?;
        let (target, reach_max, complement) = match product.fragment {
            Fragment::CoSafe => (&product.accepting, max, false),
            Fragment::Safe => (&product.rejecting, !max, true),
        };
        let iv = self.dtmc.intervals.as_deref().expect("an interval model");
        let bound = |v: &[f64], e: u32| if e == NO_ENTRY { 1.0 } else { v[e as usize] };
        let lo: Vec<f64> = product.source_entry.iter().map(|&e| bound(&iv.lo, e)).collect();
        let hi: Vec<f64> = product.source_entry.iter().map(|&e| bound(&iv.hi, e)).collect();
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
            "robust LTL product ({np} states, {} automaton states, {})",
            product.automaton_states,
            match product.fragment {
                Fragment::CoSafe => "co-safe: reaching the accepting states",
                Fragment::Safe => "safe: avoiding the rejecting states",
            }
        );
        let pick = |v: &[f64]| -> Vec<f64> {
            product.initial.iter().map(|&p| v[p as usize]).collect()
        };
        let float = robust::until(&rows, &all, target, reach_max, &self.options);
        let num = if self.exact_mode() {
            // The float solution orders the successors for the first policy (a solver that
            // does not converge only costs the hint; a stop is a stop).
            let hint = match float {
                Ok(h) => Some(h.values),
                Err(e @ SolverError::Interrupted(_)) => return Err(e.into()),
                Err(_) => None,
            };
            let exact = ExactRows::of(self.dtmc)
                .and_then(|r| {
                    r.product(product.ptr.clone(), product.idx.clone(), &product.source_entry)
                })
                .map_err(|e| self.exact_error(e, span))?;
            let sol = robust_exact::until(
                &exact,
                &all,
                target,
                reach_max,
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
        Ok(if complement { num.complement() } else { num })
    }
}
