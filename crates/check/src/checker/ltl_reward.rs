//! Co-safe LTL rewards `R=? [ φ ]` (PRISM's `checkRewardCoSafeLTL`): the expected reward
//! accumulated until the path's prefix satisfies φ, infinite where that happens with
//! probability < 1; `Rmin`/`Rmax` of it on interval DTMCs.
//!
//! The product is `augur_ltl::PrefixProduct`: a product state `(s, q)` stands for "the path from
//! `s` must satisfy `q`" (`q` has not read `s` yet) and moves to `(t, δ(q, L(s)))`. PRISM's
//! product state is `(s, δ(q, L(s)))` (its initial state is `(s, δ(q₀, L(s)))`): the automaton
//! has read `s`. So a good prefix `s₀…sᵢ` (the first whose letters take the automaton to
//! `true`) ends, in PRISM's product, in the accepting state `(sᵢ, true)`, and in ours in the
//! state `(sᵢ, qᵢ)` with `δ(qᵢ, L(sᵢ)) = true`: the goal here is those states (every successor
//! of such a state is in the automaton state `true`), plus the `true` states themselves (a
//! formula that holds from the start). The reward collected is that of `s₀ … sᵢ₋₁` and of the
//! transitions between `s₀ … sᵢ`, as in PRISM: `R=? [ φ ]` is 0 where the first state alone
//! satisfies φ, and `R=? [ X F a ]` counts the first state's reward even if it satisfies `a`.
//! A product state copies its chain state's rewards (state reward; one transition reward per
//! copied entry); the decided states' self-loops carry none. The `false` states never reach
//! the goal, so the reward is infinite wherever the formula can be violated with positive
//! probability (PRISM's convention: infinite where the goal is reached with probability < 1).
//!
//! On a DTMC the product is a DTMC and `F goal` is solved by the solver's reachability rewards
//! (sound bounds, or exact elimination with exact inputs); on an interval DTMC the product is an
//! interval DTMC (each product row copies the chain row's intervals, see `robust_ltl`), solved
//! by the robust reachability rewards (`Rmax` infinite where nature can avoid the goal, `Rmin`
//! where it cannot reach it almost surely) or, with `--method exact`, by exact robust policy
//! iteration.

use super::Checker;
use crate::error::{CheckError, Result};
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::{Matrix, StateSet};
use augur_ltl::{Fragment, PrefixProduct, NO_ENTRY};
use augur_pctl::{BigRational, ResolvedLtl};
use augur_solver::robust::{self, IntervalRows};
use augur_solver::robust_exact::{self, ExactRows};
use augur_solver::SolverError;
use augur_source::Span;
use num_traits::{One, Zero};
use sprs::CsMatI;

/// The product states where the reward stops: the automaton state is `true`, or the state's
/// letter takes it there (every successor of an undecided state has the same automaton state,
/// so the first one tells).
fn goal_states(product: &PrefixProduct) -> StateSet {
    let np = product.num_states();
    let mut goal = product.accepting.clone();
    goal.grow(np);
    for p in 0..np {
        if product.accepting.contains(p) || product.rejecting.contains(p) {
            continue;
        }
        let first = product.ptr[p] as usize;
        if first < product.ptr[p + 1] as usize
            && product.accepting.contains(product.idx[first] as usize)
        {
            goal.insert(p);
        }
    }
    goal
}

/// `values` of the product states, lifted from the chain: the chain state's value in every
/// undecided product state, `zero` in the decided ones (automaton state `true` or `false`).
fn lift<T: Clone>(product: &PrefixProduct, values: &[T], zero: T) -> Vec<T> {
    product
        .model_state
        .iter()
        .enumerate()
        .map(|(p, &s)| {
            if product.accepting.contains(p) || product.rejecting.contains(p) {
                zero.clone()
            } else {
                values[s as usize].clone()
            }
        })
        .collect()
}

/// `values` of the product's entries, copied from the chain's entries (`fill` on a decided
/// state's self-loop).
fn per_entry<T: Clone>(product: &PrefixProduct, values: &[T], fill: T) -> Vec<T> {
    product
        .source_entry
        .iter()
        .map(|&e| {
            if e == NO_ENTRY {
                fill.clone()
            } else {
                values[e as usize].clone()
            }
        })
        .collect()
}

/// The values of the product states `(s, φ)`, one per chain state.
fn project(num: NumValues, initial: &[u32]) -> NumValues {
    let pick = |v: &[f64]| -> Vec<f64> { initial.iter().map(|&p| v[p as usize]).collect() };
    NumValues {
        values: pick(&num.values),
        bounds: num.bounds.as_ref().map(|(lo, hi)| (pick(lo), pick(hi))),
        method: num.method,
        exact: num
            .exact
            .map(|x| initial.iter().map(|&p| x[p as usize].clone()).collect()),
    }
}

impl Checker<'_> {
    /// The product of the model with the automaton of the co-safe formula `f` (written in the
    /// `R` operator at `span`) and its goal states.
    fn reward_product(&mut self, f: &ResolvedLtl, span: Span) -> Result<(PrefixProduct, StateSet)> {
        let options = self.ltl_options();
        let mut aps = Vec::new();
        let formula = self.ltl_formula(f, &mut aps, &options)?;
        let not_co_safe = |c: &Self| -> CheckError {
            c.error_at(
                span,
                "`R[...]` takes a co-safe LTL formula (the reward is collected until a finite \
                 prefix of the path satisfies it), and this one is not",
            )
        };
        let product = PrefixProduct::build(
            self.matrix(),
            &aps,
            &formula,
            &options,
            &self.options.interrupt,
        )
        .map_err(|e| match e {
            augur_ltl::LtlError::NotPrefixDecided => not_co_safe(self),
            e => self.ltl_error(e, span),
        })?;
        if product.fragment != Fragment::CoSafe {
            return Err(not_co_safe(self));
        }
        let goal = goal_states(&product);
        Ok((product, goal))
    }

    /// `R=? [ φ ]` of the co-safe formula `f` on a DTMC, from the expected one-step rewards `r`
    /// (`q`: their exact values, when the solver gets exact inputs).
    pub(super) fn ltl_reach_rewards(
        &mut self,
        f: &ResolvedLtl,
        r: &[f64],
        q: Option<&[BigRational]>,
        span: Span,
    ) -> Result<NumValues> {
        let (product, goal) = self.reward_product(f, span)?;
        let np = product.num_states();
        let data = per_entry(&product, self.matrix().data(), 1.0);
        let matrix: Matrix = CsMatI::new((np, np), product.ptr.clone(), product.idx.clone(), data);
        let transpose = augur_solver::graph::transpose(&matrix);
        let exact = self
            .dtmc
            .exact
            .as_deref()
            .map(|x| per_entry(&product, x, BigRational::one()));
        let rewards = lift(&product, r, 0.0);
        let rewards_exact = q.map(|q| lift(&product, q, BigRational::zero()));
        let sol = augur_solver::reachability_rewards_exact(
            &matrix,
            &transpose,
            exact.as_deref(),
            &goal,
            &rewards,
            rewards_exact.as_deref(),
            &self.options,
        )?;
        let method = format!(
            "co-safe LTL product ({np} states, {} automaton states); {}",
            product.automaton_states, sol.method
        );
        let mut num = project(sol.into(), &product.initial);
        num.method = MethodUsed::Solver(method);
        Ok(self.keep_exact(num))
    }

    /// `Rmax` (`max`) or `Rmin` of the co-safe formula `f` on an interval DTMC, for the reward
    /// structure `structure` (the `R` operator at `span`).
    pub(super) fn robust_ltl_reward(
        &mut self,
        structure: usize,
        f: &ResolvedLtl,
        max: bool,
        span: Span,
    ) -> Result<NumValues> {
        let rs = self.structure(structure, span)?;
        self.one_step(rs)?; // checks the lengths
        let (product, goal) = self.reward_product(f, span)?;
        let np = product.num_states();
        let iv = self.dtmc.intervals.as_deref().expect("an interval model");
        let lo = per_entry(&product, &iv.lo, 1.0);
        let hi = per_entry(&product, &iv.hi, 1.0);
        let rows = IntervalRows {
            ptr: &product.ptr,
            idx: &product.idx,
            lo: &lo,
            hi: &hi,
        };
        let state = match &rs.state {
            Some(v) => lift(&product, v, 0.0),
            None => vec![0.0; np],
        };
        let trans = rs
            .transition
            .as_deref()
            .map(|t| per_entry(&product, t, 0.0));
        let what = format!(
            "robust co-safe LTL product ({np} states, {} automaton states)",
            product.automaton_states
        );
        let float =
            robust::reach_rewards(&rows, &goal, &state, trans.as_deref(), max, &self.options);
        if !self.exact_mode() {
            let sol = float?;
            return Ok(project(
                NumValues {
                    values: sol.values,
                    bounds: sol.bounds,
                    method: MethodUsed::Solver(format!(
                        "{what}; robust value iteration ({} sweeps)",
                        sol.sweeps
                    )),
                    exact: None,
                },
                &product.initial,
            ));
        }
        // The float solution orders the successors for the first policy (a solver that does
        // not converge only costs the hint; a stop is a stop).
        let hint = match float {
            Ok(h) => Some(h.values),
            Err(e @ SolverError::Interrupted(_)) => return Err(e.into()),
            Err(_) => None,
        };
        let (state_q, trans_q) = self.exact_robust_rewards(rs, span)?;
        let exact_rows = ExactRows::of(self.dtmc)
            .and_then(|r| {
                r.product(
                    product.ptr.clone(),
                    product.idx.clone(),
                    &product.source_entry,
                )
            })
            .map_err(|e| self.exact_error(e, span))?;
        let state_q = lift(&product, &state_q, BigRational::zero());
        let trans_q = trans_q.map(|t| per_entry(&product, &t, BigRational::zero()));
        let sol = robust_exact::reach_rewards(
            &exact_rows,
            &goal,
            &state_q,
            trans_q.as_deref(),
            max,
            hint.as_deref(),
            &self.options,
        )
        .map_err(|e| self.exact_error(e, span))?;
        Ok(project(
            NumValues::rational(
                sol.values,
                MethodUsed::Solver(format!(
                    "{what}; exact robust policy iteration ({} policies)",
                    sol.iterations
                )),
            ),
            &product.initial,
        ))
    }
}
