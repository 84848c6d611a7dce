//! Second methods for [`crate::OmegaProduct`] on random small interval chains: every
//! memoryless resolution of the intervals over the states of the chain × `af` automaton
//! product (nature fixes one vertex distribution per product state) is a DTMC whose
//! probability of the formula, from the DTMC LTL checker (BSCCs and the Master-Theorem judge,
//! a different decision procedure), lies within `[Pmin, Pmax]`; point intervals give the
//! DTMC's value; `Pmin ≤ Pmax` (two different products: the formula's and its negation's);
//! natures with memory of their own (the chain × memory is a DTMC) lie within `[Pmin, Pmax]`.

use crate::automaton::Automaton;
use crate::product::{explore, letters};
use crate::{
    probabilities, Ltl, LtlError, LtlOptions, OmegaProduct, RowBounds, CHOICE_ENTRY, NO_ENTRY,
};
use augur_dtmc::{Matrix, StateSet};
use augur_solver::robust::{self, IntervalRows};
use augur_solver::{Interrupt, SolveOptions};
use proptest::prelude::*;
use sprs::CsMatI;

/// An interval chain: pattern (values: the upper bounds) and tight bounds per entry.
struct Chain {
    matrix: Matrix,
    lo: Vec<f64>,
    hi: Vec<f64>,
}

/// State `s` has the successors `t` with `mask[s·n + t]` (itself when none), each with the
/// weight `weight % 4` (the first 1 when all are 0), widened by `[0, 1/8, 1/4, 1/2, 1][width % 5]`
/// both ways within [0, 1], then tightened (rounding residues below 1e-12 cleared); entries
/// whose upper bound is 0 are dropped.
fn chain(n: usize, mask: &[bool], weight: &[u8], width: &[u8]) -> Chain {
    let widths = [0.0, 0.125, 0.25, 0.5, 1.0];
    let (mut ptr, mut idx, mut lo, mut hi) = (vec![0u32], Vec::new(), Vec::new(), Vec::new());
    for s in 0..n {
        let mut succ: Vec<usize> = (0..n).filter(|&t| mask[s * n + t]).collect();
        if succ.is_empty() {
            succ.push(s);
        }
        let mut w: Vec<f64> = succ
            .iter()
            .map(|&t| f64::from(weight[s * n + t] % 4))
            .collect();
        if w.iter().all(|&x| x == 0.0) {
            w[0] = 1.0;
        }
        let total: f64 = w.iter().sum();
        let (mut l, mut h): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
        for (k, &t) in succ.iter().enumerate() {
            let p = w[k] / total;
            let d = widths[width[s * n + t] as usize % 5];
            l.push((p - d).max(0.0));
            h.push((p + d).min(1.0));
        }
        let (sl, sh): (f64, f64) = (l.iter().sum(), h.iter().sum());
        let (l0, h0) = (l.clone(), h.clone());
        for k in 0..succ.len() {
            l[k] = l[k].max(1.0 - (sh - h0[k]));
            h[k] = h[k].min(1.0 - (sl - l0[k]));
            // Rounding residues of the sums are not bounds (a lower bound of 1e-16 would be
            // an edge nature cannot avoid, leaking forever).
            if l[k] < 1e-12 {
                l[k] = 0.0;
            }
        }
        for (k, &t) in succ.iter().enumerate() {
            if h[k] > 0.0 {
                idx.push(t as u32);
                lo.push(l[k]);
                hi.push(h[k]);
            }
        }
        ptr.push(idx.len() as u32);
    }
    let matrix = CsMatI::new((n, n), ptr, idx, hi.clone());
    Chain { matrix, lo, hi }
}

fn set(n: usize, bits: u8) -> StateSet {
    let mut s = StateSet::with_capacity(n);
    for i in 0..n {
        if bits >> i & 1 == 1 {
            s.insert(i);
        }
    }
    s
}

/// The product's rows with their bounds.
fn bounds(c: &Chain, p: &OmegaProduct) -> (Vec<f64>, Vec<f64>) {
    let b = |v: &[f64], e: u32, choice: f64| match e {
        NO_ENTRY => 1.0,
        CHOICE_ENTRY => choice,
        e => v[e as usize],
    };
    (
        p.rows
            .source_entry
            .iter()
            .map(|&e| b(&c.lo, e, 0.0))
            .collect(),
        p.rows
            .source_entry
            .iter()
            .map(|&e| b(&c.hi, e, 1.0))
            .collect(),
    )
}

/// `[lower, upper]` of `Pmax(f)` from every chain state.
fn pmax(c: &Chain, aps: &[StateSet], f: &Ltl) -> Result<(Vec<f64>, Vec<f64>), LtlError> {
    let p = OmegaProduct::build(
        &c.matrix,
        RowBounds {
            lo: &c.lo,
            hi: &c.hi,
            exact: None,
        },
        aps,
        f,
        &LtlOptions::default(),
        &Interrupt::default(),
    )?;
    let (lo, hi) = bounds(c, &p);
    let rows = IntervalRows {
        ptr: &p.rows.ptr,
        idx: &p.rows.idx,
        lo: &lo,
        hi: &hi,
    };
    let mut all = StateSet::with_capacity(p.num_states());
    all.insert_range(..);
    let opts = SolveOptions {
        epsilon: 1e-10,
        ..SolveOptions::default()
    };
    let sol = robust::until(&rows, &all, &p.good, true, &opts)?;
    let (l, h) = sol.bounds.expect("sound bounds");
    let pick = |v: &[f64]| p.rows.initial.iter().map(|&q| v[q as usize]).collect();
    Ok((pick(&l), pick(&h)))
}

/// The DTMC over the states of the chain × `af` automaton of `f` (decided states absorbing)
/// in which every row is the vertex of its intervals that fills the entries in the order of
/// `keys` (each gets its lower bound, the rest of the mass goes to the entries in that order up
/// to their upper bounds), and `P(f)` there from every chain state's initial product state, as
/// `[lower, upper]` by the DTMC LTL checker.
fn resolved(c: &Chain, aps: &[StateSet], f: &Ltl, keys: &[u8]) -> (Vec<f64>, Vec<f64>) {
    let n = c.matrix.rows();
    let letter = letters(n, aps);
    let options = LtlOptions::default();
    let mut aut = Automaton::new(
        options.max_automaton_states,
        options.max_automaton_cells,
        Interrupt::default(),
    );
    let root = aut.nnf(f, false);
    let e = explore(
        &c.matrix,
        &letter,
        &mut aut,
        root,
        &options,
        &Interrupt::default(),
        true,
    )
    .unwrap();
    let b = |v: &[f64], k: u32| if k == NO_ENTRY { 1.0 } else { v[k as usize] };
    let lo: Vec<f64> = e.rows.source_entry.iter().map(|&k| b(&c.lo, k)).collect();
    let hi: Vec<f64> = e.rows.source_entry.iter().map(|&k| b(&c.hi, k)).collect();
    let np = e.model_state.len();
    let mut data = lo.clone();
    for s in 0..np {
        let r = e.rows.ptr[s] as usize..e.rows.ptr[s + 1] as usize;
        let mut order: Vec<usize> = r.clone().collect();
        order.sort_by_key(|&k| (keys[k % keys.len()], k));
        let mut rest = 1.0 - r.clone().map(|k| lo[k]).sum::<f64>();
        for k in order {
            let add = (hi[k] - lo[k]).min(rest).max(0.0);
            data[k] += add;
            rest -= add;
        }
    }
    let m: Matrix = CsMatI::new((np, np), e.rows.ptr.clone(), e.rows.idx.clone(), data);
    let lifted: Vec<StateSet> = aps
        .iter()
        .map(|a| {
            let mut out = StateSet::with_capacity(np);
            for (q, &s) in e.model_state.iter().enumerate() {
                if a.contains(s as usize) {
                    out.insert(q);
                }
            }
            out
        })
        .collect();
    let opts = SolveOptions {
        epsilon: 1e-10,
        ..SolveOptions::default()
    };
    let r = probabilities(&m, None, &lifted, f, &options, &opts).unwrap();
    let (l, h) = r.solution.bounds.expect("sound bounds");
    let pick = |v: &[f64]| e.rows.initial.iter().map(|&q| v[q as usize]).collect();
    (pick(&l), pick(&h))
}

/// The chain under a nature with three memory states: in chain state `s` with memory `m` it
/// plays the vertex of `s`'s intervals that fills the entries in the order of
/// `keys[(s·3 + m)·…]`, and on moving to `t` its memory becomes `update[(m·n + t) % …] % 3`.
/// The joint chain over `(s, m)` is a DTMC; `P(f)` there from `(s, 0)`, as `[lower, upper]` by
/// the DTMC LTL checker.
fn with_memory(
    c: &Chain,
    aps: &[StateSet],
    f: &Ltl,
    keys: &[u8],
    update: &[u8],
) -> (Vec<f64>, Vec<f64>) {
    const M: usize = 3;
    let n = c.matrix.rows();
    let (ptr, idx) = (c.matrix.indptr().into_raw_storage(), c.matrix.indices());
    let (mut jptr, mut jidx, mut jval) = (vec![0u32], Vec::new(), Vec::new());
    for s in 0..n {
        for m in 0..M {
            let r = ptr[s] as usize..ptr[s + 1] as usize;
            let mut p: Vec<f64> = r.clone().map(|e| c.lo[e]).collect();
            let mut order: Vec<usize> = (0..r.len()).collect();
            order.sort_by_key(|&k| (keys[((s * M + m) * 7 + k) % keys.len()], k));
            let mut rest = 1.0 - p.iter().sum::<f64>();
            for k in order {
                let e = r.start + k;
                let add = (c.hi[e] - c.lo[e]).min(rest).max(0.0);
                p[k] += add;
                rest -= add;
            }
            let mut row: Vec<(u32, f64)> = r
                .clone()
                .zip(&p)
                .map(|(e, &pe)| {
                    let t = idx[e] as usize;
                    let m2 = update[(m * n + t) % update.len()] as usize % M;
                    ((t * M + m2) as u32, pe)
                })
                .collect();
            row.sort_by_key(|x| x.0);
            for (t, pe) in row {
                jidx.push(t);
                jval.push(pe);
            }
            jptr.push(jidx.len() as u32);
        }
    }
    let joint: Matrix = CsMatI::new((n * M, n * M), jptr, jidx, jval);
    let lifted: Vec<StateSet> = aps
        .iter()
        .map(|a| {
            let mut out = StateSet::with_capacity(n * M);
            for j in 0..n * M {
                if a.contains(j / M) {
                    out.insert(j);
                }
            }
            out
        })
        .collect();
    let opts = SolveOptions {
        epsilon: 1e-10,
        ..SolveOptions::default()
    };
    let r = probabilities(&joint, None, &lifted, f, &LtlOptions::default(), &opts).unwrap();
    let (l, h) = r.solution.bounds.expect("sound bounds");
    (
        (0..n).map(|s| l[s * M]).collect(),
        (0..n).map(|s| h[s * M]).collect(),
    )
}

fn formulas() -> Vec<(&'static str, Ltl)> {
    let (a, b) = (Ltl::Ap(0), Ltl::Ap(1));
    let gf = |x: Ltl| Ltl::globally(Ltl::eventually(x));
    let fg = |x: Ltl| Ltl::eventually(Ltl::globally(x));
    vec![
        ("G F a", gf(a.clone())),
        ("F G a", fg(a.clone())),
        ("G F a & G F b", Ltl::and(gf(a.clone()), gf(b.clone()))),
        ("G F a | F G b", Ltl::or(gf(a.clone()), fg(b.clone()))),
        (
            "F G (a => X b)",
            fg(Ltl::or(Ltl::not(a.clone()), Ltl::next(b.clone()))),
        ),
        (
            "F G (a => X X b)",
            fg(Ltl::or(
                Ltl::not(a.clone()),
                Ltl::next(Ltl::next(b.clone())),
            )),
        ),
        (
            "G !b & G F a",
            Ltl::and(Ltl::globally(Ltl::not(b.clone())), gf(a.clone())),
        ),
        (
            "G F (a & X !a)",
            gf(Ltl::and(a.clone(), Ltl::next(Ltl::not(a.clone())))),
        ),
        ("a U G b", Ltl::until(a.clone(), Ltl::globally(b.clone()))),
    ]
}

fn arb() -> impl Strategy<Value = (usize, Vec<bool>, Vec<u8>, Vec<u8>, u8, u8)> {
    (2usize..=4).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec(proptest::bool::weighted(0.5), n * n),
            proptest::collection::vec(any::<u8>(), n * n),
            proptest::collection::vec(any::<u8>(), n * n),
            any::<u8>(),
            any::<u8>(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random vertex resolutions over product states lie within `[Pmin, Pmax]`, and
    /// `Pmin ≤ Pmax`.
    #[test]
    fn memoryless_resolutions_lie_between_pmin_and_pmax(
        (n, mask, weight, width, abits, bbits) in arb(),
        keys in proptest::collection::vec(any::<u8>(), 64),
    ) {
        let c = chain(n, &mask, &weight, &width);
        let aps = [set(n, abits), set(n, bbits)];
        for (name, f) in formulas() {
            let max = pmax(&c, &aps, &f).unwrap();
            let neg = pmax(&c, &aps, &Ltl::not(f.clone())).unwrap();
            let min: (Vec<f64>, Vec<f64>) = (
                neg.1.iter().map(|x| 1.0 - x).collect(),
                neg.0.iter().map(|x| 1.0 - x).collect(),
            );
            let p = resolved(&c, &aps, &f, &keys);
            for s in 0..n {
                prop_assert!(
                    min.0[s] <= max.1[s] + 1e-9,
                    "{name} in {s}: Pmin [{}, {}] above Pmax [{}, {}]",
                    min.0[s], min.1[s], max.0[s], max.1[s]
                );
                prop_assert!(
                    min.0[s] <= p.1[s] + 1e-9 && p.0[s] <= max.1[s] + 1e-9,
                    "{name} in {s}: P in [{}, {}] outside Pmin [{}, {}], Pmax [{}, {}]",
                    p.0[s], p.1[s], min.0[s], min.1[s], max.0[s], max.1[s]
                );
            }
        }
    }

    /// Natures with memory of their own (three states, updated on every move), whose chains
    /// are checked by the DTMC LTL checker, lie within `[Pmin, Pmax]` too.
    #[test]
    fn natures_with_memory_lie_between_pmin_and_pmax(
        (n, mask, weight, width, abits, bbits) in arb(),
        keys in proptest::collection::vec(any::<u8>(), 96),
        update in proptest::collection::vec(any::<u8>(), 12),
    ) {
        let c = chain(n, &mask, &weight, &width);
        let aps = [set(n, abits), set(n, bbits)];
        for (name, f) in formulas() {
            let max = pmax(&c, &aps, &f).unwrap();
            let neg = pmax(&c, &aps, &Ltl::not(f.clone())).unwrap();
            let p = with_memory(&c, &aps, &f, &keys, &update);
            for s in 0..n {
                prop_assert!(
                    1.0 - neg.1[s] <= p.1[s] + 1e-9 && p.0[s] <= max.1[s] + 1e-9,
                    "{name} in {s}: P in [{}, {}] outside Pmin [{}, {}], Pmax [{}, {}]",
                    p.0[s], p.1[s], 1.0 - neg.1[s], 1.0 - neg.0[s], max.0[s], max.1[s]
                );
            }
        }
    }

    /// Point intervals (every width 0): `Pmin = Pmax` = the DTMC LTL checker's value.
    #[test]
    fn point_intervals_give_the_dtmc_value(
        (n, mask, weight, _width, abits, bbits) in arb(),
    ) {
        let zero = vec![0u8; n * n];
        let c = chain(n, &mask, &weight, &zero);
        let aps = [set(n, abits), set(n, bbits)];
        let opts = SolveOptions { epsilon: 1e-10, ..SolveOptions::default() };
        // The chain's values are its upper bounds, here its probabilities.
        for (name, f) in formulas() {
            let max = pmax(&c, &aps, &f).unwrap();
            let neg = pmax(&c, &aps, &Ltl::not(f.clone())).unwrap();
            let d = probabilities(&c.matrix, None, &aps, &f, &LtlOptions::default(), &opts)
                .unwrap();
            let (dl, dh) = d.solution.bounds.clone().expect("sound bounds");
            for s in 0..n {
                let (lo, hi) = (1.0 - neg.1[s], 1.0 - neg.0[s]);
                prop_assert!(
                    (max.0[s] - dh[s]) <= 1e-8 && (dl[s] - max.1[s]) <= 1e-8,
                    "{name} in {s}: Pmax [{}, {}] vs P [{}, {}]", max.0[s], max.1[s], dl[s], dh[s]
                );
                prop_assert!(
                    (lo - dh[s]) <= 1e-8 && (dl[s] - hi) <= 1e-8,
                    "{name} in {s}: Pmin [{lo}, {hi}] vs P [{}, {}]", dl[s], dh[s]
                );
            }
        }
    }
}

/// More temporal subformulas than the automaton may guess among is an error naming the limit,
/// never a partial answer.
#[test]
fn too_many_guesses_is_an_error() {
    let c = chain(2, &[true; 4], &[1; 4], &[4; 4]);
    let aps: Vec<StateSet> = (0..6).map(|i| set(2, i as u8 % 3)).collect();
    // Six `G F pᵢ`: twelve temporal subformulas.
    let f = (1..6).fold(Ltl::globally(Ltl::eventually(Ltl::Ap(0))), |acc, i| {
        Ltl::and(acc, Ltl::globally(Ltl::eventually(Ltl::Ap(i))))
    });
    let err = OmegaProduct::build(
        &c.matrix,
        RowBounds {
            lo: &c.lo,
            hi: &c.hi,
            exact: None,
        },
        &aps,
        &f,
        &LtlOptions::default(),
        &Interrupt::default(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            LtlError::TooManyGuesses {
                subformulas: 12,
                limit: 10
            }
        ),
        "{err}"
    );
}

/// Nature with memory beyond the `af` automaton's states (hand-derived; the same chain as
/// `MEMORYFUL` in `crates/check/tests/robust_omega.rs`): `Pmax = 1`.
#[test]
fn nature_may_remember_what_the_automaton_forgets() {
    // 0 (a) → 1; 5 → 1; 1 → 2; 2 → {3 (b), 4 (c)}; 3, 4 → {0, 5}, the choices [0, 1].
    let mut mask = vec![false; 36];
    for (s, t) in [
        (0, 1),
        (5, 1),
        (1, 2),
        (2, 3),
        (2, 4),
        (3, 0),
        (3, 5),
        (4, 0),
        (4, 5),
    ] {
        mask[s * 6 + t] = true;
    }
    let c = chain(6, &mask, &[1; 36], &[4; 36]);
    let aps = [set(6, 0b000001), set(6, 0b001000), set(6, 0b010000)];
    let (a, b, cc) = (Ltl::Ap(0), Ltl::Ap(1), Ltl::Ap(2));
    let f = Ltl::and(
        Ltl::eventually(Ltl::globally(Ltl::or(
            Ltl::not(a.clone()),
            Ltl::next(Ltl::next(Ltl::next(b))),
        ))),
        Ltl::and(
            Ltl::globally(Ltl::eventually(cc)),
            Ltl::globally(Ltl::eventually(a)),
        ),
    );
    let (lo, _) = pmax(&c, &aps, &f).unwrap();
    assert_eq!(lo, vec![1.0; 6]);
}
