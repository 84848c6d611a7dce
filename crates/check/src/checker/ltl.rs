//! LTL path formulas inside P operators: translation to automata and the product (augur-ltl).

use super::*;

impl<'a> Checker<'a> {
    /// `P(φ)` for an LTL formula: its maximal state subformulas become atomic propositions
    /// (each a set of states, computed like any state formula — nested `P` operators
    /// included), then `augur-ltl` builds the product with the formula's deterministic
    /// automaton, finds the accepting BSCCs and solves their reachability with the solver
    /// (sound bounds with the default method).
    ///
    /// The automaton and the product count against the state limit (`--max-states`, the
    /// `max_states` of Python and MCP) as a model does: past it, an error located at the `P`
    /// operator (`span`) that names the option.
    pub(super) fn ltl(&mut self, f: &ResolvedLtl, span: Span) -> Result<NumValues> {
        let options = self.ltl_options();
        let mut aps = Vec::new();
        let formula = self.ltl_formula(f, &mut aps, &options)?;
        let exact = self.dtmc.exact.as_deref();
        let r = augur_ltl::probabilities(
            self.matrix(),
            exact,
            &aps,
            &formula,
            &options,
            &self.options,
        )
        .map_err(|e| self.ltl_error(e, span))?;
        let method = format!(
            "LTL product ({} states, {} automaton states, {} of {} BSCCs accepting); {}",
            r.product_states, r.automaton_states, r.accepting_bsccs, r.bsccs, r.solution.method
        );
        Ok(self.keep_exact(NumValues {
            values: r.solution.values,
            bounds: r.solution.bounds,
            method: MethodUsed::Solver(method),
            exact: r.solution.exact,
        }))
    }

    /// The limits of LTL automata and products: the defaults, within the state limit.
    pub(super) fn ltl_options(&self) -> augur_ltl::LtlOptions {
        let mut options = augur_ltl::LtlOptions::default();
        if let Some(max) = self.max_states {
            options.max_product_states = options.max_product_states.min(max);
            options.max_automaton_states = options.max_automaton_states.min(max);
        }
        options
    }

    /// An error of the LTL construction: a size limit hit is a user error located at the `P`
    /// operator (`span`), naming `--max-states` when that limit is the one hit.
    pub(super) fn ltl_error(&self, e: augur_ltl::LtlError, span: Span) -> CheckError {
        match e {
            augur_ltl::LtlError::ProductTooLarge { limit }
            | augur_ltl::LtlError::AutomatonTooLarge { limit }
                if self.max_states == Some(limit) =>
            {
                self.error_at(
                    span,
                    format!("{e}: the state limit (raise it with --max-states) bounds it"),
                )
            }
            e @ (augur_ltl::LtlError::ProductTooLarge { .. }
            | augur_ltl::LtlError::AutomatonTooLarge { .. }) => self.error_at(span, e.to_string()),
            e => e.into(),
        }
    }

    /// The `augur_ltl` formula of `f`, with the state sets of its propositions in `aps`
    /// (equal sets share one proposition); step bounds are unrolled.
    pub(super) fn ltl_formula(
        &mut self,
        f: &ResolvedLtl,
        aps: &mut Vec<StateSet>,
        options: &augur_ltl::LtlOptions,
    ) -> Result<augur_ltl::Ltl> {
        use augur_ltl::{Ltl, StepInterval};
        use ResolvedLtl as R;
        let sub =
            |c: &mut Self, g: &ResolvedLtl, aps: &mut Vec<StateSet>| c.ltl_formula(g, aps, options);
        let interval = |c: &Self, steps: &Steps| -> Result<Option<StepInterval>> {
            if steps.lower == 0 && steps.upper.is_none() {
                return Ok(None);
            }
            let largest = steps.upper.unwrap_or(steps.lower);
            if largest > options.max_step_bound {
                return Err(c.error_at(
                    steps.span,
                    format!(
                        "step bound {largest} inside an LTL formula is above the limit {} (bounded operators nested in LTL are unrolled step by step)",
                        options.max_step_bound
                    ),
                ));
            }
            Ok(Some(StepInterval {
                lower: steps.lower,
                upper: steps.upper,
            }))
        };
        // Unrolling copies the operands once per step: refuse, before building it, a formula
        // that would outgrow `max_formula_size` (nested bounds multiply).
        let unrolled = |c: &Self, steps: &Steps, operands: usize| -> Result<()> {
            let copies = steps
                .upper
                .unwrap_or(steps.lower)
                .saturating_add(steps.lower)
                .saturating_add(1);
            let size = (copies as usize).saturating_mul(operands.saturating_add(4));
            if size > options.max_formula_size {
                return Err(c.error_at(
                    steps.span,
                    format!(
                        "the LTL formula is too large once this step bound is unrolled (more than {} nodes; bounded operators nested in LTL are unrolled step by step, so nested bounds multiply)",
                        options.max_formula_size
                    ),
                ));
            }
            Ok(())
        };
        Ok(match f {
            R::State(s) => {
                let set = self.bool_of(s)?;
                let i = match aps.iter().position(|a| *a == set) {
                    Some(i) => i,
                    None => {
                        aps.push(set);
                        aps.len() - 1
                    }
                };
                Ltl::Ap(i as u32)
            }
            R::Not(a) => Ltl::not(sub(self, a, aps)?),
            R::And(a, b) => Ltl::and(sub(self, a, aps)?, sub(self, b, aps)?),
            R::Or(a, b) => Ltl::or(sub(self, a, aps)?, sub(self, b, aps)?),
            R::Implies(a, b) => {
                Ltl::Implies(Box::new(sub(self, a, aps)?), Box::new(sub(self, b, aps)?))
            }
            R::Iff(a, b) => Ltl::Iff(Box::new(sub(self, a, aps)?), Box::new(sub(self, b, aps)?)),
            R::Next(a) => Ltl::next(sub(self, a, aps)?),
            R::Eventually(a, k) => {
                let a = sub(self, a, aps)?;
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, a.size())?;
                }
                match i {
                    None => Ltl::eventually(a),
                    Some(i) => Ltl::eventually_bounded(a, i),
                }
            }
            R::Globally(a, k) => {
                let a = sub(self, a, aps)?;
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, a.size())?;
                }
                match i {
                    None => Ltl::globally(a),
                    Some(i) => Ltl::globally_bounded(a, i),
                }
            }
            R::Until(a, b, k) => {
                let (a, b) = (sub(self, a, aps)?, sub(self, b, aps)?);
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, 2 * (a.size() + b.size()))?;
                }
                match i {
                    None => Ltl::until(a, b),
                    Some(i) => Ltl::until_bounded(a, b, i),
                }
            }
            R::WeakUntil(a, b, k) => {
                let (a, b) = (sub(self, a, aps)?, sub(self, b, aps)?);
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, 2 * (a.size() + b.size()))?;
                }
                match i {
                    None => Ltl::WeakUntil(Box::new(a), Box::new(b)),
                    Some(i) => Ltl::weak_until_bounded(a, b, i),
                }
            }
            R::Release(a, b, k) => {
                let (a, b) = (sub(self, a, aps)?, sub(self, b, aps)?);
                let i = interval(self, k)?;
                if i.is_some() {
                    unrolled(self, k, 2 * (a.size() + b.size()))?;
                }
                match i {
                    None => Ltl::Release(Box::new(a), Box::new(b)),
                    Some(i) => Ltl::release_bounded(a, b, i),
                }
            }
        })
    }
}
