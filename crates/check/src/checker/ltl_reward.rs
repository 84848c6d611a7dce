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
        let first = product.rows.ptr[p] as usize;
        if first < product.rows.ptr[p + 1] as usize
            && product.accepting.contains(product.rows.idx[first] as usize)
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
        .rows
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
        let matrix: Matrix = CsMatI::new(
            (np, np),
            product.rows.ptr.clone(),
            product.rows.idx.clone(),
            data,
        );
        let transpose = augur_solver::graph::transpose(&matrix);
        let exact = self
            .dtmc
            .exact
            .as_deref()
            .map(|x| per_entry(&product, x, BigRational::one()));
        let rewards = lift(&product, r, 0.0);
        let rewards_exact = q.map(|q| lift(&product, q, BigRational::zero()));
        let rewards = augur_solver::Rewards {
            values: &rewards,
            exact: rewards_exact.as_deref(),
        };
        let sol = augur_solver::reachability_rewards(
            &matrix,
            &transpose,
            exact.as_deref(),
            &goal,
            rewards,
            &self.options,
        )?;
        let method = format!(
            "co-safe LTL product ({np} states, {} automaton states); {}",
            product.automaton_states, sol.method
        );
        let mut num = project(sol.into(), &product.rows.initial);
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
            ptr: &product.rows.ptr,
            idx: &product.rows.idx,
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
                &product.rows.initial,
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
                    product.rows.ptr.clone(),
                    product.rows.idx.clone(),
                    &product.rows.source_entry,
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
            &product.rows.initial,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{arb, indexed, points_and_one_interval, random_idtmc, values};
    use crate::{CheckOptions, CheckSession, Method};
    use augur_dtmc::{Dtmc, RewardStructure};
    use augur_pctl::BigRational;
    use proptest::prelude::*;

    /// A model on `n` states (variable `s` = the state's index) with the transitions
    /// `(s, t, lo, hi)` (a DTMC when every `lo = hi`), the state rewards `state` and the
    /// transition rewards `(s, t, r)` (one reward structure).
    fn model(
        n: usize,
        edges: &[(u32, u32, f64, f64)],
        state: &[f64],
        trans: &[(u32, u32, f64)],
    ) -> Dtmc {
        let mut tri = sprs::TriMatI::<f64, u32>::new((n, n));
        for &(s, t, lo, _) in edges {
            tri.add_triplet(s as usize, t as usize, lo);
        }
        let mut d = indexed(tri.to_csr());
        let mut t = vec![0.0; d.matrix.nnz()];
        for &(s, u, r) in trans {
            t[d.transition_index(s, u).expect("a transition")] = r;
        }
        d.rewards.push(RewardStructure {
            name: Some("r".into()),
            state: Some(state.to_vec()),
            transition: Some(t),
            exact: None,
        });
        if edges.iter().any(|&(_, _, lo, hi)| lo < hi) {
            let entries: Vec<_> = edges.to_vec();
            d = Dtmc::from_interval_entries(d, entries).expect("valid intervals");
        }
        d
    }

    /// The exact values (`None`: infinite) in every state.
    fn exact(d: &Dtmc, prop: &str) -> Vec<Option<BigRational>> {
        values(d, prop, Method::Exact)
            .exact
            .expect("exact rationals")
    }

    fn q(a: i64, b: i64) -> Option<BigRational> {
        Some(BigRational::new(a.into(), b.into()))
    }

    /// The default method's value in `state` lies within 1e-5 (relative) of `expected` (the
    /// robust value iteration of rewards stops at ε = 1e-6 without bounds) and its bounds, when
    /// it has some, contain it.
    fn close(d: &Dtmc, prop: &str, state: usize, expected: f64) {
        let v = values(d, prop, Method::Auto);
        let x = v.values[state];
        if expected.is_infinite() {
            assert_eq!(x, expected, "{prop}");
            return;
        }
        assert!(
            (x - expected).abs() <= 1e-5 * expected.abs().max(1.0),
            "{prop}: {x} vs {expected}"
        );
        if let Some((lo, hi)) = &v.bounds {
            assert!(
                lo[state] <= expected + 1e-12 && expected <= hi[state] + 1e-12,
                "{prop}: [{}, {}] misses {expected}",
                lo[state],
                hi[state]
            );
        }
    }

    /// 0 → 1 or 2 (1/2 each), 1 → 0, 2 → 0; state rewards 1, 2, 4; the transition 0 → 1
    /// earns 10.
    fn cycle() -> Dtmc {
        model(
            3,
            &[
                (0, 1, 0.5, 0.5),
                (0, 2, 0.5, 0.5),
                (1, 0, 1.0, 1.0),
                (2, 0, 1.0, 1.0),
            ],
            &[1.0, 2.0, 4.0],
            &[(0, 1, 10.0)],
        )
    }

    /// `R=? [ (F s=1) & (F s=2) ]` from 0 on `cycle`. The path alternates 0 and an excursion
    /// state x₁, x₂, … (1 or 2, 1/2 each). The prefix is good at the first excursion state `x_k`
    /// of the type `x₁` is not: `k − 1` is geometric(1/2) on {1, 2, …} (E = 2) and independent
    /// of `x₁`. Counted (PRISM's convention: every state before the completing one, every
    /// transition up to it): the k visits of 0 (reward 1), the k − 1 excursions of `x₁`'s type
    /// (reward 2 or 4, mean 3), and the transitions 0 → 1 among the k from 0: k − 1 of them when
    /// `x₁ = 1`, one when `x₁ = 2` (mean (2 + 1)/2 = 3/2), 10 each.
    /// Time alone (`"time"`): 2k − 1 states, E = 2·3 − 1 = 5.
    /// State rewards: E[k] + E[k − 1]·3 = 3 + 6 = 9. With the transition reward: 9 + 15 = 24.
    #[test]
    fn both_eventually_on_a_cycle() {
        let mut d = cycle();
        let f = "R=? [ (F s=1) & (F s=2) ]";
        assert_eq!(exact(&d, f)[0], q(24, 1));
        close(&d, f, 0, 24.0);
        d.rewards[0].transition = None;
        assert_eq!(exact(&d, f)[0], q(9, 1));
        d.rewards[0].state = Some(vec![1.0; 3]);
        assert_eq!(exact(&d, f)[0], q(5, 1));
        close(&d, f, 0, 5.0);
    }

    /// `X F s=0` counts the first state even where it satisfies `s=0`: from 0, the reward of 0
    /// (1), of the excursion (2 or 4: 3 on average) and the transition 0 → 1 (10 with
    /// probability 1/2): 1 + 3 + 5 = 9; from 1: its reward 2 (then 0 completes the prefix).
    /// `F s=0` is 0 in 0 (PCTL), as is the co-safe `true U s=0` (the first state completes it).
    #[test]
    fn next_eventually_counts_the_first_state() {
        let d = cycle();
        let x = exact(&d, "R=? [ X F s=0 ]");
        assert_eq!(x, vec![q(9, 1), q(2, 1), q(4, 1)]);
        assert_eq!(exact(&d, "R=? [ F s=0 ]")[0], q(0, 1));
        assert_eq!(exact(&d, "R=? [ true U s=0 ]")[0], q(0, 1));
        close(&d, "R=? [ X F s=0 ]", 0, 9.0);
    }

    /// `(s=0 | s=1) U s=2` from 0: the path stays in {0, 1} until 2, so it is `F s=2`:
    /// x₀ = 1 + ½·(10 + x₁), x₁ = 2 + x₀ → x₀ = 1 + 5 + 1 + x₀/2 → x₀ = 14. `s=0 U s=2` is
    /// violated in 1 (probability 1/2 from 0): infinite, and 0 in 2.
    #[test]
    fn until_equals_eventually_where_they_coincide_and_is_infinite_where_violated() {
        let d = cycle();
        let u = exact(&d, "R=? [ (s=0 | s=1) U s=2 ]");
        assert_eq!(u[0], q(14, 1));
        assert_eq!(u, exact(&d, "R=? [ F s=2 ]"));
        let v = exact(&d, "R=? [ s=0 U s=2 ]");
        assert_eq!(v, vec![None, None, q(0, 1)]);
        close(&d, "R=? [ s=0 U s=2 ]", 0, f64::INFINITY);
        // A bound on it: `R<=20` holds where the value is 14, not where it is infinite.
        let r = CheckSession::for_dtmc(&d, CheckOptions::default())
            .check_str("R<=20 [ (s=0 | s=1) U s=2 ]")
            .unwrap();
        assert!(matches!(r.value, crate::result::Scalar::Bool(true)));
    }

    /// A step bound inside: `(F<=3 s=2) & (F s=1)` with one unit per state on `cycle`. From 2
    /// the bound holds at once; the run 2, 0, x₁, 0, x₂, … completes at the first excursion
    /// `x_j = 1` (position 2j, j geometric(1/2), E = 2): 2j states before it, 4. From 0 and 1
    /// the excursions at positions 1 and 3 (from 0) or 2 (from 1) all miss 2 with probability
    /// 1/4 or 1/2: infinite.
    #[test]
    fn a_step_bound_inside() {
        let mut d = cycle();
        d.rewards[0].state = Some(vec![1.0; 3]);
        d.rewards[0].transition = None;
        let f = "R=? [ (F<=3 s=2) & (F s=1) ]";
        assert_eq!(exact(&d, f), vec![None, None, q(4, 1)]);
        close(&d, f, 2, 4.0);
        close(&d, f, 0, f64::INFINITY);
    }

    /// The interval cycle: 0 → 1 and 0 → 2 each in [1/4, 3/4]. Nature (with the memory of the
    /// automaton state) makes the excursion that completes `(F s=1) & (F s=2)` as unlikely
    /// (`Rmax`: probability 1/4 per excursion, E[k] = 1 + 4) or as likely (`Rmin`: 3/4,
    /// E[k] = 1 + 4/3) as it can; with the time reward the value is 2·E[k] − 1: 9 and 11/3.
    /// `X F s=0` from 0 with state rewards 1, 2, 4: 1 + the excursion's reward, at most
    /// ¼·2 + ¾·4 = 7/2 and at least ¾·2 + ¼·4 = 5/2: 9/2 and 7/2.
    #[test]
    fn interval_cycle() {
        let iv = |state: &[f64]| {
            model(
                3,
                &[
                    (0, 1, 0.25, 0.75),
                    (0, 2, 0.25, 0.75),
                    (1, 0, 1.0, 1.0),
                    (2, 0, 1.0, 1.0),
                ],
                state,
                &[],
            )
        };
        let d = iv(&[1.0; 3]);
        let f = "(F s=1) & (F s=2)";
        assert_eq!(exact(&d, &format!("Rmax=? [ {f} ]"))[0], q(9, 1));
        assert_eq!(exact(&d, &format!("Rmin=? [ {f} ]"))[0], q(11, 3));
        close(&d, &format!("Rmax=? [ {f} ]"), 0, 9.0);
        close(&d, &format!("Rmin=? [ {f} ]"), 0, 11.0 / 3.0);
        let d = iv(&[1.0, 2.0, 4.0]);
        assert_eq!(exact(&d, "Rmax=? [ X F s=0 ]")[0], q(9, 2));
        assert_eq!(exact(&d, "Rmin=? [ X F s=0 ]")[0], q(7, 2));
        close(&d, "Rmax=? [ X F s=0 ]", 0, 4.5);
        close(&d, "Rmin=? [ X F s=0 ]", 0, 3.5);
    }

    /// With 0 → 1 and 0 → 2 each in [0, 1], nature can send every excursion to 1: `Rmax` of
    /// `(F s=1) & (F s=2)` is infinite; `Rmin` sends the second excursion to the other state:
    /// k = 2, time 3. A transition reward on 0 → 2 (5) is collected with the mass nature gives
    /// it: `Rmax` of `X s=2` is infinite (nature may go to 1, violating it), `Rmin` is 1 + 5
    /// (nature must reach the goal: all the mass to 2); `Rmax` of `X (s=1 | s=2)` is 1 + 5 (all
    /// the mass to 2), `Rmin` 1 (all to 1).
    #[test]
    fn interval_infinite_and_transition_rewards() {
        let d = model(
            3,
            &[
                (0, 1, 0.0, 1.0),
                (0, 2, 0.0, 1.0),
                (1, 0, 1.0, 1.0),
                (2, 0, 1.0, 1.0),
            ],
            &[1.0; 3],
            &[(0, 2, 5.0)],
        );
        let f = "(F s=1) & (F s=2)";
        assert_eq!(exact(&d, &format!("Rmax=? [ {f} ]"))[0], None);
        close(&d, &format!("Rmax=? [ {f} ]"), 0, f64::INFINITY);
        // Rmin: the excursions 0 → 1, 0 → 2 (or the reverse): 3 states; the transition 0 → 2
        // once (5): nature takes 0 → 1 first, then 0 → 2 — 8 either way.
        assert_eq!(exact(&d, &format!("Rmin=? [ {f} ]"))[0], q(8, 1));
        close(&d, &format!("Rmin=? [ {f} ]"), 0, 8.0);
        assert_eq!(exact(&d, "Rmax=? [ X s=2 ]")[0], None);
        assert_eq!(exact(&d, "Rmin=? [ X s=2 ]")[0], q(6, 1));
        assert_eq!(exact(&d, "Rmax=? [ X (s=1 | s=2) ]")[0], q(6, 1));
        assert_eq!(exact(&d, "Rmin=? [ X (s=1 | s=2) ]")[0], q(1, 1));
        close(&d, "Rmax=? [ X s=2 ]", 0, f64::INFINITY);
        close(&d, "Rmin=? [ X s=2 ]", 0, 6.0);
    }

    /// A random reward structure in sixteenths (state and transition rewards) for `d`.
    fn with_rewards(mut d: Dtmc, units: &[u8]) -> Dtmc {
        let n = d.num_states();
        let nnz = d.matrix.nnz();
        let r = |i: usize| f64::from(units[i % units.len()] % 33) / 16.0;
        d.rewards = vec![RewardStructure {
            name: Some("r".into()),
            state: Some((0..n).map(r).collect()),
            transition: Some((0..nnz).map(|e| r(e + 7)).collect()),
            exact: None,
        }];
        d
    }

    fn dtmc_of(d: &Dtmc) -> Dtmc {
        let mut m = d.clone();
        m.intervals = None;
        m.exact = None;
        m
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// On random DTMCs with state and transition rewards, the co-safe path (a product with
        /// the automaton) gives the PCTL values: `true U s=g` and `F F s=g` are `F s=g`
        /// (exactly, and the default method's bounds overlap); `X F s=g` is the one-step
        /// reward plus the expected `F s=g` of the successor, computed here from the matrix.
        #[test]
        fn dtmc_ltl_rewards_equal_the_pctl_ones(
            (n, mask, units, _down, _up, goal) in arb(),
            rewards in proptest::collection::vec(any::<u8>(), 40),
        ) {
            let d = with_rewards(dtmc_of(&random_idtmc(n, &mask, &units, &_down, &_up)), &rewards);
            let pctl = format!("R=? [ F s={goal} ]");
            let reach = exact(&d, &pctl);
            for ltl in [format!("R=? [ true U s={goal} ]"), format!("R=? [ F F s={goal} ]")] {
                prop_assert_eq!(&exact(&d, &ltl), &reach, "{} vs {}", ltl, pctl);
                let (a, b) = (values(&d, &ltl, Method::Auto), values(&d, &pctl, Method::Auto));
                let (a, b) = (a.bounds.unwrap(), b.bounds.unwrap());
                for s in 0..n {
                    prop_assert!(a.0[s] <= b.1[s] + 1e-9 && b.0[s] <= a.1[s] + 1e-9,
                        "{ltl} in {s}: [{}, {}] vs [{}, {}]", a.0[s], a.1[s], b.0[s], b.1[s]);
                }
            }
            // X F: r(s) + Σ P(s,t)·trans(s,t) + Σ P(s,t)·R[F](t), ∞ when a successor's is.
            let next = exact(&d, &format!("R=? [ X F s={goal} ]"));
            let ptr = d.row_ptr();
            let dec = |x: f64| BigRational::from_float(x).unwrap();
            let rs = &d.rewards[0];
            let (state, trans) = (rs.state.as_ref().unwrap(), rs.transition.as_ref().unwrap());
            for s in 0..n {
                let mut sum = Some(dec(state[s]));
                let row = ptr[s] as usize..ptr[s + 1] as usize;
                let entries = d.matrix.indices()[row.clone()]
                    .iter()
                    .zip(&d.matrix.data()[row.clone()])
                    .zip(&trans[row]);
                for ((&t, &p), &tr) in entries {
                    sum = match (sum, &reach[t as usize]) {
                        (Some(x), Some(v)) => Some(x + dec(p) * (dec(tr) + v)),
                        _ => None,
                    };
                }
                prop_assert_eq!(&next[s], &sum, "X F in state {}", s);
            }
        }

        /// On random interval DTMCs, `Rmin`/`Rmax` of `true U s=g` through the interval
        /// product equal the robust `F s=g` (exactly: policy iteration on two different
        /// models); the default method's bounds overlap.
        #[test]
        fn robust_ltl_rewards_equal_the_robust_reachability_rewards(
            (n, mask, units, down, up, goal) in arb(),
            rewards in proptest::collection::vec(any::<u8>(), 40),
        ) {
            let d = with_rewards(random_idtmc(n, &mask, &units, &down, &up), &rewards);
            for opt in ["min", "max"] {
                let (ltl, pctl) = (format!("R{opt}=? [ true U s={goal} ]"), format!("R{opt}=? [ F s={goal} ]"));
                prop_assert_eq!(exact(&d, &ltl), exact(&d, &pctl), "{} vs {}", ltl, pctl);
                // The robust value iteration of rewards has no bounds: within 1e-5 relative.
                let (a, b) = (values(&d, &ltl, Method::Auto), values(&d, &pctl, Method::Auto));
                for s in 0..n {
                    let (x, y) = (a.values[s], b.values[s]);
                    prop_assert!(x == y || (x - y).abs() <= 1e-5 * y.abs().max(1.0),
                        "{ltl} in {s}: {x} vs {pctl}: {y}");
                }
            }
        }

        /// Point intervals give the DTMC's co-safe rewards: the chain gets one extra state with
        /// a proper interval, unreachable from the others (so the robust path runs), and
        /// `Rmin` = `Rmax` = the DTMC's `R` (exactly) in the other states.
        #[test]
        fn point_intervals_give_the_dtmc_values(
            (n, mask, units, _down, _up, goal) in arb(),
            rewards in proptest::collection::vec(any::<u8>(), 40),
        ) {
            let d = with_rewards(points_and_one_interval(n, &mask, &units), &rewards);
            let point = dtmc_of(&d);
            let other = (goal + 1) % n;
            for f in [
                format!("(F s={goal}) & (F s={other})"),
                format!("X F s={goal}"),
                format!("(s!={other} U s={goal}) | F<=2 s={other}"),
            ] {
                let p = exact(&point, &format!("R=? [ {f} ]"));
                for opt in ["min", "max"] {
                    let r = exact(&d, &format!("R{opt}=? [ {f} ]"));
                    prop_assert_eq!(&r[..n], &p[..n], "R{} {}", opt, f);
                }
            }
        }
    }
}
