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
//!   components) go to `robust_omega` (a limit-deterministic automaton and the accepting end
//!   components of its product).
//!
//! The product counts against the state limit as the DTMC's does, and is solved by the robust
//! interval iteration (sound bounds) or, with `--method exact`, by exact policy iteration.

use super::Checker;
use crate::error::Result;
use crate::result::{MethodUsed, NumValues};
use augur_dtmc::StateSet;
use augur_ltl::{Fragment, PrefixProduct, ProductRows, CHOICE_ENTRY, NO_ENTRY};
use augur_pctl::ResolvedLtl;
use augur_solver::robust::{self, IntervalRows};
use augur_solver::robust_exact::{self, ExactRows};
use augur_solver::SolverError;
use augur_source::Span;

impl Checker<'_> {
    /// `Pmax` (`max`) or `Pmin` of the LTL formula `f` (written in the `P` operator at `span`)
    /// in every state of the interval model.
    pub(super) fn robust_ltl(
        &mut self,
        f: &ResolvedLtl,
        max: bool,
        span: Span,
    ) -> Result<NumValues> {
        let options = self.ltl_options();
        let mut aps = Vec::new();
        let formula = self.ltl_formula(f, &mut aps, &options)?;
        let product = match PrefixProduct::build(
            self.matrix(),
            &aps,
            &formula,
            &options,
            &self.options.interrupt,
        ) {
            Ok(p) => p,
            // `G F a` and the like: `robust_omega` (a limit-deterministic automaton).
            Err(augur_ltl::LtlError::NotPrefixDecided) => {
                return self.robust_omega(&formula, &aps, max, span)
            }
            Err(e) => return Err(self.ltl_error(e, span)),
        };
        let (target, reach_max, complement) = match product.fragment {
            Fragment::CoSafe => (&product.accepting, max, false),
            Fragment::Safe => (&product.rejecting, !max, true),
        };
        let what = format!(
            "robust LTL product ({} states, {} automaton states, {})",
            product.num_states(),
            product.automaton_states,
            match product.fragment {
                Fragment::CoSafe => "co-safe: reaching the accepting states",
                Fragment::Safe => "safe: avoiding the rejecting states",
            }
        );
        let num = self.robust_product_until(&product.rows, target, reach_max, what, span)?;
        Ok(if complement { num.complement() } else { num })
    }
}

impl Checker<'_> {
    /// `Pmax` (`reach_max`) or `Pmin` of reaching `target` in an interval product, per model
    /// state (through `rows.initial`): robust interval iteration (sound bounds), or exact
    /// policy iteration under `--method exact` with the float solution as its first policy's
    /// hint. `what` names the product in the method.
    pub(super) fn robust_product_until(
        &mut self,
        rows: &ProductRows,
        target: &StateSet,
        reach_max: bool,
        what: String,
        span: Span,
    ) -> Result<NumValues> {
        let iv = self.dtmc.intervals.as_deref().expect("an interval model");
        let bound = |v: &[f64], e: u32, choice: f64| match e {
            NO_ENTRY => 1.0,
            CHOICE_ENTRY => choice,
            e => v[e as usize],
        };
        let lo: Vec<f64> = rows
            .source_entry
            .iter()
            .map(|&e| bound(&iv.lo, e, 0.0))
            .collect();
        let hi: Vec<f64> = rows
            .source_entry
            .iter()
            .map(|&e| bound(&iv.hi, e, 1.0))
            .collect();
        let interval_rows = IntervalRows {
            ptr: &rows.ptr,
            idx: &rows.idx,
            lo: &lo,
            hi: &hi,
        };
        let np = rows.ptr.len().saturating_sub(1);
        let mut all = StateSet::with_capacity(np);
        all.insert_range(..);
        let pick =
            |v: &[f64]| -> Vec<f64> { rows.initial.iter().map(|&p| v[p as usize]).collect() };
        let float = robust::until(&interval_rows, &all, target, reach_max, &self.options);
        Ok(if self.exact_mode() {
            // The float solution orders the successors for the first policy (a solver that
            // does not converge only costs the hint; a stop is a stop).
            let hint = match float {
                Ok(h) => Some(h.values),
                Err(e @ SolverError::Interrupted(_)) => return Err(e.into()),
                Err(_) => None,
            };
            let exact = ExactRows::of(self.dtmc)
                .and_then(|r| r.product(rows.ptr.to_vec(), rows.idx.to_vec(), &rows.source_entry))
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
            let q = rows
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        arb, bounds, exact_finite as exact, points_and_one_interval, random_idtmc,
        random_idtmc_with,
    };
    use augur_dtmc::Dtmc;
    use proptest::prelude::*;

    /// The model `d` with its intervals resolved to one vertex per row: every transition gets
    /// its `lo`, the rest of the mass goes to the successors in the order of `keys` (one key per
    /// transition), each up to its `hi`. A DTMC (no intervals): one memoryless nature.
    fn resolve(d: &Dtmc, keys: &[u8]) -> Dtmc {
        let iv = d.intervals.as_deref().expect("an interval model");
        let ptr = d.row_ptr().to_vec();
        let mut data = iv.lo.clone();
        for s in 0..d.num_states() {
            let r = ptr[s] as usize..ptr[s + 1] as usize;
            let mut order: Vec<usize> = r.clone().collect();
            order.sort_by_key(|&e| keys[e % keys.len()]);
            let mut rest = 1.0 - r.clone().map(|e| iv.lo[e]).sum::<f64>();
            for e in order {
                let add = (iv.hi[e] - iv.lo[e]).min(rest).max(0.0);
                data[e] += add;
                rest -= add;
            }
        }
        let mut m = d.clone();
        m.intervals = None;
        m.exact = None;
        m.matrix.data_mut().copy_from_slice(&data);
        m
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// The same property through both code paths: `F F s=g` is an LTL formula (nested
        /// temporal operators: the interval product with its automaton), `F s=g` the robust
        /// PCTL reachability; `G G s!=g` is a safe LTL formula (1 − reaching the automaton's
        /// `false`), `G s!=g` the PCTL complement. Exact values are equal in every state; the
        /// default method's bounds overlap.
        #[test]
        fn ltl_reachability_equals_the_robust_reachability(
            (n, mask, units, down, up, goal) in arb()
        ) {
            let d = random_idtmc(n, &mask, &units, &down, &up);
            for (ltl, pctl) in [
                (format!("Pmax=? [ F F s={goal} ]"), format!("Pmax=? [ F s={goal} ]")),
                (format!("Pmin=? [ F F s={goal} ]"), format!("Pmin=? [ F s={goal} ]")),
                (format!("Pmax=? [ G G s!={goal} ]"), format!("Pmax=? [ G s!={goal} ]")),
                (format!("Pmin=? [ G G s!={goal} ]"), format!("Pmin=? [ G s!={goal} ]")),
            ] {
                prop_assert_eq!(exact(&d, &ltl), exact(&d, &pctl), "{} vs {}", ltl, pctl);
                let (a, b) = (bounds(&d, &ltl), bounds(&d, &pctl));
                for s in 0..n {
                    prop_assert!(
                        a.0[s] <= b.1[s] + 1e-12 && b.0[s] <= a.1[s] + 1e-12,
                        "{ltl} in state {s}: [{}, {}] vs {pctl}: [{}, {}]", a.0[s], a.1[s], b.0[s], b.1[s]
                    );
                }
            }
        }

        /// A point resolution of the intervals (one vertex per row, in a random order) is a
        /// DTMC whose LTL probabilities, from the DTMC checker (product with BSCCs, a second
        /// method), lie within `[Pmin, Pmax]` (the sound bounds) in every state, for a co-safe
        /// and a safe formula.
        #[test]
        fn a_point_resolution_lies_between_pmin_and_pmax(
            (n, mask, units, down, up, goal) in arb(),
            keys in proptest::collection::vec(any::<u8>(), 36),
        ) {
            let d = random_idtmc(n, &mask, &units, &down, &up);
            let point = resolve(&d, &keys);
            let other = (goal + 1) % n;
            for f in [
                format!("(F s={goal}) & (F s={other})"),
                format!("G (s={goal} => X s!={other})"),
                format!("(s!={other} U s={goal}) & F<=3 s={other}"),
                // Neither co-safe nor safe: `robust_omega`.
                format!("G F s={goal}"),
                format!("F G s!={other}"),
                format!("(G F s={goal}) & (G F s={other})"),
                format!("F G (s={goal} => X X s!={other})"),
            ] {
                let (min, max) = (
                    bounds(&d, &format!("Pmin=? [ {f} ]")),
                    bounds(&d, &format!("Pmax=? [ {f} ]")),
                );
                let p = bounds(&point, &format!("P=? [ {f} ]"));
                for s in 0..n {
                    prop_assert!(
                        min.0[s] <= p.1[s] + 1e-9 && p.0[s] <= max.1[s] + 1e-9,
                        "{f} in state {s}: P in [{}, {}] outside [{}, {}]",
                        p.0[s], p.1[s], min.0[s], max.1[s]
                    );
                }
            }
        }

        /// Intervals that are points give the DTMC checker's LTL values (exactly): the chain
        /// gets one extra state with a proper interval, unreachable from the others, so the
        /// robust LTL path runs (a model of points only is checked as a DTMC).
        #[test]
        fn point_intervals_give_the_dtmc_ltl_values(
            (n, mask, units, _down, _up, goal) in arb()
        ) {
            let d = points_and_one_interval(n, &mask, &units);
            let point = {
                let mut m = d.clone();
                m.intervals = None;
                m.exact = None;
                m
            };
            let other = (goal + 1) % n;
            for f in [
                format!("(F s={goal}) & (F s={other})"),
                format!("G (s={goal} => X s!={other})"),
                format!("(X s={other}) U s={goal}"),
                format!("G F s={goal}"),
                format!("(F G s!={other}) | (G F s={goal})"),
            ] {
                let max = exact(&d, &format!("Pmax=? [ {f} ]"));
                let min = exact(&d, &format!("Pmin=? [ {f} ]"));
                let p = exact(&point, &format!("P=? [ {f} ]"));
                prop_assert_eq!(&max[..n], &p[..n], "{}", f);
                prop_assert_eq!(&min[..n], &p[..n], "{}", f);
            }
        }

        /// Rows within the load tolerance of full, and lower bounds of any size: the drawn
        /// model with some rows made full (`hi` = the drawn point, so `Σhi = 1`) and tiny
        /// lower bounds (`10⁻¹⁷` to `10⁻¹²`, rounding residues among them) put on some
        /// transitions whose lower bound was 0 is the exact reference (`--method exact`, in
        /// rationals: a positive lower bound is an edge, whatever its size, issue 39); the
        /// default method checks the same model with the full rows' upper bounds scaled by
        /// `1 − δ` (`δ < 10⁻⁹`: upper bounds summing to just below 1, as the loader accepts,
        /// then normalised). `Pmin ≤ Pmax` (the float bounds overlap) and the exact values lie
        /// within the float bounds — the qualitative answers included — for `F`, `G` and LTL
        /// formulas that go through end components (`G F`, `F G`).
        #[test]
        fn rows_within_the_tolerance_keep_pmin_below_pmax(
            (n, mask, units, down, up, goal) in arb(),
            full in proptest::collection::vec(any::<bool>(), 6),
            shortfall in proptest::collection::vec(0u32..1000, 6),
            residue in proptest::collection::vec(0usize..6, 36),
        ) {
            let mut up = up.clone();
            for s in 0..n {
                if full[s] {
                    up[s * n..(s + 1) * n].fill(0);
                }
            }
            const RESIDUES: [f64; 6] = [0.0, 1e-17, 5.551115123125783e-17, 3e-16, 1e-13, 1e-12];
            let d = random_idtmc_with(n, &mask, &units, &down, &up, |s, t, lo, hi| {
                let lo = if lo == 0.0 { RESIDUES[residue[s * 6 + t]] } else { lo };
                (lo, hi)
            });
            let perturbed = random_idtmc_with(n, &mask, &units, &down, &up, |s, t, lo, hi| {
                let hi = if full[s] {
                    // Scaled by 1 − δ, δ in (0, 1e-9).
                    hi * (1.0 - (f64::from(shortfall[s]) + 1.0) * 1e-12)
                } else {
                    hi
                };
                let lo = if lo == 0.0 { RESIDUES[residue[s * 6 + t]] } else { lo.min(hi) };
                (lo, hi)
            });
            let other = (goal + 1) % n;
            for f in [
                format!("F s={goal}"),
                format!("G s!={goal}"),
                format!("G F s={goal}"),
                format!("F G s!={other}"),
            ] {
                let (pmin, pmax) = (format!("Pmin=? [ {f} ]"), format!("Pmax=? [ {f} ]"));
                let (qmin, qmax) = (exact(&d, &pmin), exact(&d, &pmax));
                let (min, max) = (bounds(&perturbed, &pmin), bounds(&perturbed, &pmax));
                for s in 0..n {
                    prop_assert!(
                        min.0[s] <= max.1[s],
                        "{f} in state {s}: Pmin in [{}, {}] above Pmax in [{}, {}]",
                        min.0[s], min.1[s], max.0[s], max.1[s]
                    );
                    for (q, b, what) in [(&qmin[s], &min, "Pmin"), (&qmax[s], &max, "Pmax")] {
                        let q = num_traits::ToPrimitive::to_f64(q).expect("a probability");
                        prop_assert!(
                            b.0[s] - 1e-9 <= q && q <= b.1[s] + 1e-9,
                            "{what} {f} in state {s}: exact {q} outside [{}, {}]", b.0[s], b.1[s]
                        );
                    }
                }
            }
        }
    }
}
