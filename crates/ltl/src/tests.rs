//! Tests: hand-derived values, and differential tests against second computations — path
//! enumeration with a direct evaluation of LTL on lassos, the solver's until probabilities for
//! formulas with PCTL reductions, BSCC closed forms for `G F`/`F G`, and complement identities.

use super::*;
use augur_dtmc::{Matrix, StateSet};
use augur_solver::{graph, until_probabilities, SolveOptions};
use proptest::prelude::*;
use sprs::TriMatI;

fn chain(n: usize, edges: &[(usize, usize, f64)]) -> Matrix {
    let mut t = TriMatI::<f64, u32>::new((n, n));
    for &(s, d, p) in edges {
        t.add_triplet(s, d, p);
    }
    t.to_csr()
}

fn set(n: usize, states: &[usize]) -> StateSet {
    let mut s = StateSet::with_capacity(n);
    for &x in states {
        s.insert(x);
    }
    s
}

fn probs(m: &Matrix, aps: &[StateSet], f: &Ltl) -> Vec<f64> {
    let r = probabilities(
        m,
        None,
        aps,
        f,
        &LtlOptions::default(),
        &SolveOptions::default(),
    )
    .unwrap();
    // The default method is sound: the value lies within its bounds.
    let (lo, hi) = r.solution.bounds.clone().expect("sound bounds");
    for s in 0..lo.len() {
        assert!(lo[s] <= r.solution.values[s] + 1e-12 && r.solution.values[s] <= hi[s] + 1e-12);
    }
    r.solution.values
}

fn ap(i: u32) -> Ltl {
    Ltl::Ap(i)
}

#[test]
fn hand_derived_values() {
    // 0 → 1 (1/2), 0 → 2 (1/2); 1 → 1; 2 → 3 (1/3), 2 → 0 (2/3); 3 → 3.
    // a = {1}, b = {3}. P0(F a) = 1/2 + 1/2·2/3·P0(F a) ⇒ P0(F a) = (1/2)/(1 − 1/3) = 3/4.
    let m = chain(
        4,
        &[
            (0, 1, 0.5),
            (0, 2, 0.5),
            (1, 1, 1.0),
            (2, 3, 1.0 / 3.0),
            (2, 0, 2.0 / 3.0),
            (3, 3, 1.0),
        ],
    );
    let aps = [set(4, &[1]), set(4, &[3])];
    let v = probs(&m, &aps, &Ltl::eventually(ap(0)));
    assert!((v[0] - 0.75).abs() < 1e-12, "{v:?}");
    // G F a = F G a = F a here (1 and 3 are absorbing).
    let v = probs(&m, &aps, &Ltl::globally(Ltl::eventually(ap(0))));
    assert!((v[0] - 0.75).abs() < 1e-12);
    let v = probs(&m, &aps, &Ltl::eventually(Ltl::globally(ap(0))));
    assert!((v[0] - 0.75).abs() < 1e-12);
    // X X b from 0: 0 → 2 → 3: 1/2 · 1/3 = 1/6.
    let v = probs(&m, &aps, &Ltl::next(Ltl::next(ap(1))));
    assert!((v[0] - 1.0 / 6.0).abs() < 1e-12);
    // !a U (X b): from 0, X b fails at 0 (successors 1, 2), !a holds; at 2, X b has 1/3;
    // at 1, a holds and X b fails. p0 = 1/2·p2, p2 = 1/3 + 2/3·p0 ⇒ p0 = 1/6 + 1/3·p0 = 1/4.
    let v = probs(&m, &aps, &Ltl::until(Ltl::not(ap(0)), Ltl::next(ap(1))));
    assert!((v[0] - 0.25).abs() < 1e-12, "{v:?}");
}

#[test]
fn recurrence_in_a_probabilistic_bscc() {
    // One BSCC {0, 1, 2}: 0 → 1 | 2 (1/2 each), 1 → 0, 2 → 0. a = {1}, b = {2}.
    // Almost surely both 1 and 2 are visited infinitely often (although some paths avoid 2).
    let m = chain(3, &[(0, 1, 0.5), (0, 2, 0.5), (1, 0, 1.0), (2, 0, 1.0)]);
    let aps = [set(3, &[1]), set(3, &[2])];
    let gf = |i| Ltl::globally(Ltl::eventually(ap(i)));
    let both = Ltl::and(gf(0), gf(1));
    assert_eq!(probs(&m, &aps, &both), vec![1.0; 3]);
    // F G a: never (state 0 is not a), F G !b: never.
    assert_eq!(
        probs(&m, &aps, &Ltl::eventually(Ltl::globally(ap(0)))),
        vec![0.0; 3]
    );
    assert_eq!(
        probs(&m, &aps, &Ltl::eventually(Ltl::globally(Ltl::not(ap(1))))),
        vec![0.0; 3]
    );
    // G (a => X X a): from 1 the path goes 1 → 0 → 1 or 2; fails a.s.
    let f = Ltl::globally(Ltl::Implies(
        Box::new(ap(0)),
        Box::new(Ltl::next(Ltl::next(ap(0)))),
    ));
    assert_eq!(probs(&m, &aps, &f), vec![0.0; 3]);
    // G F (a & X X a): happens infinitely often a.s. (each visit of 1 has chance 1/2).
    let f = Ltl::globally(Ltl::eventually(Ltl::and(
        ap(0),
        Ltl::next(Ltl::next(ap(0))),
    )));
    assert_eq!(probs(&m, &aps, &f), vec![1.0; 3]);
    // (G F a) U b-free variants: a R (F b) = F b always (true a.s.).
    let f = Ltl::Release(Box::new(ap(0)), Box::new(Ltl::eventually(ap(1))));
    assert_eq!(probs(&m, &aps, &f), vec![1.0; 3]);
}

#[test]
fn limits_and_errors() {
    let m = chain(2, &[(0, 1, 1.0), (1, 1, 1.0)]);
    let err = probabilities(
        &m,
        None,
        &[],
        &ap(0),
        &LtlOptions::default(),
        &SolveOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, LtlError::Dimensions(_)), "{err}");
    let options = LtlOptions {
        max_product_states: 3,
        ..LtlOptions::default()
    };
    let aps = [set(2, &[1])];
    let f = Ltl::next(Ltl::next(Ltl::next(ap(0))));
    let err = probabilities(&m, None, &aps, &f, &options, &SolveOptions::default()).unwrap_err();
    assert!(
        matches!(err, LtlError::ProductTooLarge { limit: 3 }),
        "{err}"
    );
}

#[test]
fn bounded_expansions() {
    // One path 0 → 1 → 2 → 3 → 3 …, a = {2}: F[2,2] a holds, F<=1 a does not, F>=3 a does not.
    let m = chain(4, &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 3, 1.0)]);
    let aps = [set(4, &[2])];
    let within = |l, u| Ltl::eventually_bounded(ap(0), StepInterval { lower: l, upper: u });
    assert_eq!(probs(&m, &aps, &within(2, Some(2)))[0], 1.0);
    assert_eq!(probs(&m, &aps, &within(0, Some(1)))[0], 0.0);
    assert_eq!(probs(&m, &aps, &within(3, None))[0], 0.0);
    assert_eq!(probs(&m, &aps, &within(1, None))[0], 1.0);
    let g = Ltl::globally_bounded(
        Ltl::not(ap(0)),
        StepInterval {
            lower: 0,
            upper: Some(1),
        },
    );
    assert_eq!(probs(&m, &aps, &g)[0], 1.0);
}

// ----- random chains and formulas -----

/// A small xorshift generator (tests only).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A chain whose transient states `0..k` form a DAG (edges to higher transient states or to
/// cycle states) and whose BSCCs are deterministic cycles: every path is a lasso, and there are
/// finitely many, so `P(φ)` is a finite sum. Returns (matrix, letters, cycle successor map).
struct LassoChain {
    matrix: Matrix,
    letters: Vec<u64>,
    transient: usize,
    /// For a cycle state, its (only) successor.
    next_on_cycle: Vec<usize>,
}

fn lasso_chain(seed: u64, num_aps: u32) -> LassoChain {
    let mut rng = Rng(seed | 1);
    let k = 1 + rng.below(5) as usize;
    let num_cycles = 1 + rng.below(2) as usize;
    let mut cycles = Vec::new();
    let mut n = k;
    for _ in 0..num_cycles {
        let len = 1 + rng.below(3) as usize;
        cycles.push((n..n + len).collect::<Vec<_>>());
        n += len;
    }
    let mut next_on_cycle = vec![usize::MAX; n];
    let mut edges = Vec::new();
    for c in &cycles {
        for (i, &s) in c.iter().enumerate() {
            let t = c[(i + 1) % c.len()];
            next_on_cycle[s] = t;
            edges.push((s, t, 1.0));
        }
    }
    for s in 0..k {
        // 1..3 distinct successors among higher transient states and cycle states.
        let mut succ: Vec<usize> = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let t = if s + 1 < k && rng.below(2) == 0 {
                s + 1 + rng.below((k - s - 1) as u64) as usize
            } else {
                k + rng.below((n - k) as u64) as usize
            };
            if !succ.contains(&t) {
                succ.push(t);
            }
        }
        let weights: Vec<u64> = succ.iter().map(|_| 1 + rng.below(4)).collect();
        let total: u64 = weights.iter().sum();
        for (t, w) in succ.into_iter().zip(weights) {
            edges.push((s, t, w as f64 / total as f64));
        }
    }
    let letters = (0..n).map(|_| rng.below(1 << num_aps)).collect();
    LassoChain {
        matrix: chain(n, &edges),
        letters,
        transient: k,
        next_on_cycle,
    }
}

fn aps_of(letters: &[u64], num_aps: u32) -> Vec<StateSet> {
    (0..num_aps)
        .map(|i| {
            let states: Vec<usize> = (0..letters.len())
                .filter(|&s| letters[s] >> i & 1 == 1)
                .collect();
            set(letters.len(), &states)
        })
        .collect()
}

/// `P_s(φ)` by enumerating every path (a lasso) and evaluating φ on it directly.
fn enumerate(c: &LassoChain, f: &Ltl, s: usize, prefix: &mut Vec<u64>, p: f64) -> f64 {
    if s >= c.transient {
        let mut cycle = vec![c.letters[s]];
        let mut t = c.next_on_cycle[s];
        while t != s {
            cycle.push(c.letters[t]);
            t = c.next_on_cycle[t];
        }
        return if f.holds_on_lasso(prefix, &cycle) {
            p
        } else {
            0.0
        };
    }
    prefix.push(c.letters[s]);
    let mut total = 0.0;
    let ptr = c.matrix.indptr().into_raw_storage().to_vec();
    for e in ptr[s] as usize..ptr[s + 1] as usize {
        let t = c.matrix.indices()[e] as usize;
        total += enumerate(c, f, t, prefix, p * c.matrix.data()[e]);
    }
    prefix.pop();
    total
}

fn formula(num_aps: u32) -> impl Strategy<Value = Ltl> {
    let leaf = prop_oneof![
        6 => (0..num_aps).prop_map(Ltl::Ap),
        1 => Just(Ltl::True),
        1 => Just(Ltl::False),
    ];
    leaf.prop_recursive(4, 16, 2, |inner| {
        let b = |f: fn(Box<Ltl>, Box<Ltl>) -> Ltl, i: BoxedStrategy<Ltl>| {
            (i.clone(), i).prop_map(move |(a, b)| f(Box::new(a), Box::new(b)))
        };
        let i = inner.boxed();
        prop_oneof![
            i.clone().prop_map(Ltl::not),
            i.clone().prop_map(Ltl::next),
            i.clone().prop_map(Ltl::eventually),
            i.clone().prop_map(Ltl::globally),
            b(Ltl::And, i.clone()),
            b(Ltl::Or, i.clone()),
            b(Ltl::Implies, i.clone()),
            b(Ltl::Iff, i.clone()),
            b(Ltl::Until, i.clone()),
            b(Ltl::WeakUntil, i.clone()),
            b(Ltl::Release, i),
        ]
    })
}

/// A random chain (any structure): `n` states, 1–3 successors each, random labels.
fn random_chain(seed: u64, num_aps: u32) -> (Matrix, Vec<u64>) {
    let mut rng = Rng(seed | 1);
    let n = 2 + rng.below(6) as usize;
    let mut edges = Vec::new();
    for s in 0..n {
        let mut succ: Vec<usize> = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let t = rng.below(n as u64) as usize;
            if !succ.contains(&t) {
                succ.push(t);
            }
        }
        let weights: Vec<u64> = succ.iter().map(|_| 1 + rng.below(4)).collect();
        let total: u64 = weights.iter().sum();
        for (t, w) in succ.into_iter().zip(weights) {
            edges.push((s, t, w as f64 / total as f64));
        }
    }
    let letters = (0..n).map(|_| rng.below(1 << num_aps)).collect();
    (chain(n, &edges), letters)
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
}

fn until_values(m: &Matrix, phi: &StateSet, psi: &StateSet) -> Vec<f64> {
    let t = graph::transpose(m);
    until_probabilities(m, &t, None, phi, psi, &SolveOptions::default())
        .unwrap()
        .values
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every path of a lasso chain enumerated, φ evaluated on each by LTL's semantics.
    #[test]
    fn agrees_with_path_enumeration(seed in any::<u64>(), f in formula(2)) {
        let c = lasso_chain(seed, 2);
        let aps = aps_of(&c.letters, 2);
        let v = probs(&c.matrix, &aps, &f);
        for (s, &value) in v.iter().enumerate() {
            let expected = enumerate(&c, &f, s, &mut Vec::new(), 1.0);
            prop_assert!((value - expected).abs() < 1e-9, "state {} of {:?}: {} vs {} for {}", s, c.letters, value, expected, f);
        }
    }

    /// On any chain: P(φ) + P(!φ) = 1 and P(φ & ψ) + P(φ & !ψ) = P(φ).
    #[test]
    fn complement_identities(seed in any::<u64>(), f in formula(2), g in formula(2)) {
        let (m, letters) = random_chain(seed, 2);
        let aps = aps_of(&letters, 2);
        let p = probs(&m, &aps, &f);
        let q = probs(&m, &aps, &Ltl::not(f.clone()));
        let sum: Vec<f64> = p.iter().zip(&q).map(|(a, b)| a + b).collect();
        prop_assert!(close(&sum, &vec![1.0; p.len()]), "{} on {:?}: {:?} + {:?}", f, letters, p, q);
        let a = probs(&m, &aps, &Ltl::and(f.clone(), g.clone()));
        let b = probs(&m, &aps, &Ltl::and(f.clone(), Ltl::not(g)));
        let split: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        prop_assert!(close(&split, &p));
    }

    /// Formulas with PCTL reductions against the solver's until probabilities, and G F / F G
    /// against the BSCC closed forms.
    #[test]
    fn agrees_with_reductions(seed in any::<u64>()) {
        let (m, letters) = random_chain(seed, 2);
        let n = letters.len();
        let aps = aps_of(&letters, 2);
        let (a, b) = (aps[0].clone(), aps[1].clone());
        let mut all = StateSet::with_capacity(n);
        all.insert_range(..);
        let not = |s: &StateSet| {
            let mut c = s.clone();
            c.toggle_range(..);
            c
        };
        // F a, a U b, G a = 1 − F !a, a R b = 1 − (!a U !b), a W b = 1 − (a & !b) U (!a & !b).
        prop_assert!(close(&probs(&m, &aps, &Ltl::eventually(ap(0))), &until_values(&m, &all, &a)));
        prop_assert!(close(&probs(&m, &aps, &Ltl::until(ap(0), ap(1))), &until_values(&m, &a, &b)));
        let g: Vec<f64> = until_values(&m, &all, &not(&a)).iter().map(|x| 1.0 - x).collect();
        prop_assert!(close(&probs(&m, &aps, &Ltl::globally(ap(0))), &g));
        let r: Vec<f64> = until_values(&m, &not(&a), &not(&b)).iter().map(|x| 1.0 - x).collect();
        prop_assert!(close(&probs(&m, &aps, &Ltl::Release(Box::new(ap(0)), Box::new(ap(1)))), &r));
        let mut a_nb = a.clone();
        a_nb.intersect_with(&not(&b));
        let mut na_nb = not(&a);
        na_nb.intersect_with(&not(&b));
        let w: Vec<f64> = until_values(&m, &a_nb, &na_nb).iter().map(|x| 1.0 - x).collect();
        prop_assert!(close(&probs(&m, &aps, &Ltl::WeakUntil(Box::new(ap(0)), Box::new(ap(1)))), &w));
        // X F a = Σ_t P(s,t)·P_t(F a); X X b likewise from the indicator of b.
        let fa = until_values(&m, &all, &a);
        let ptr = m.indptr().into_raw_storage();
        let step = |x: &[f64]| -> Vec<f64> {
            (0..n).map(|s| (ptr[s] as usize..ptr[s + 1] as usize)
                .map(|e| m.data()[e] * x[m.indices()[e] as usize]).sum()).collect()
        };
        prop_assert!(close(&probs(&m, &aps, &Ltl::next(Ltl::eventually(ap(0)))), &step(&fa)));
        let ib: Vec<f64> = (0..n).map(|s| if b.contains(s) { 1.0 } else { 0.0 }).collect();
        prop_assert!(close(&probs(&m, &aps, &Ltl::next(Ltl::next(ap(1)))), &step(&step(&ib))));
        // G F a = P(reach a BSCC with an a-state); F G a = P(reach a BSCC inside a).
        let (mut some_a, mut all_a) = (StateSet::with_capacity(n), StateSet::with_capacity(n));
        for c in graph::bsccs(&m) {
            if c.iter().any(|&s| a.contains(s as usize)) {
                c.iter().for_each(|&s| some_a.insert(s as usize));
            }
            if c.iter().all(|&s| a.contains(s as usize)) {
                c.iter().for_each(|&s| all_a.insert(s as usize));
            }
        }
        prop_assert!(close(&probs(&m, &aps, &Ltl::globally(Ltl::eventually(ap(0)))), &until_values(&m, &all, &some_a)));
        prop_assert!(close(&probs(&m, &aps, &Ltl::eventually(Ltl::globally(ap(0)))), &until_values(&m, &all, &all_a)));
    }
}

/// The prefix product's value of `f` on a point chain: reachability of `true` (co-safe) or
/// 1 − reachability of `false` (safe) on the product whose entries copy the chain's; `None`
/// when the formula is neither.
fn prefix_probs(m: &Matrix, aps: &[StateSet], f: &Ltl) -> Option<Vec<f64>> {
    let p = match PrefixProduct::build(m, aps, f, &LtlOptions::default(), &Default::default()) {
        Ok(p) => p,
        Err(LtlError::NotPrefixDecided) => return None,
        Err(e) => panic!("{f}: {e}"),
    };
    let np = p.num_states();
    let data: Vec<f64> = p
        .rows
        .source_entry
        .iter()
        .map(|&e| {
            if e == NO_ENTRY {
                1.0
            } else {
                m.data()[e as usize]
            }
        })
        .collect();
    let pm: Matrix = sprs::CsMatI::new((np, np), p.rows.ptr.clone(), p.rows.idx.clone(), data);
    let mut all = StateSet::with_capacity(np);
    all.insert_range(..);
    let (target, flip) = match p.fragment {
        Fragment::CoSafe => (&p.accepting, false),
        Fragment::Safe => (&p.rejecting, true),
    };
    let v = until_values(&pm, &all, target);
    Some(
        p.rows
            .initial
            .iter()
            .map(|&i| {
                if flip {
                    1.0 - v[i as usize]
                } else {
                    v[i as usize]
                }
            })
            .collect(),
    )
}

#[test]
fn prefix_products_classify_formulas() {
    let m = chain(2, &[(0, 1, 1.0), (1, 1, 1.0)]);
    let aps = vec![set(2, &[1]), set(2, &[0])];
    let fragment = |f: &Ltl| {
        PrefixProduct::build(&m, &aps, f, &LtlOptions::default(), &Default::default())
            .map(|p| p.fragment)
    };
    let (a, b) = (ap(0), ap(1));
    let fab = Ltl::and(Ltl::eventually(a.clone()), Ltl::eventually(b.clone()));
    assert_eq!(fragment(&fab).unwrap(), Fragment::CoSafe);
    // Its negation is safe; a bounded G unrolls into X and &: co-safe (and safe).
    assert_eq!(fragment(&Ltl::not(fab.clone())).unwrap(), Fragment::Safe);
    let g2 = Ltl::globally_bounded(
        a.clone(),
        StepInterval {
            lower: 0,
            upper: Some(2),
        },
    );
    assert_eq!(fragment(&g2).unwrap(), Fragment::CoSafe);
    // F a & G b, G F a: neither.
    for f in [
        Ltl::and(Ltl::eventually(a.clone()), Ltl::globally(b)),
        Ltl::globally(Ltl::eventually(a)),
    ] {
        assert!(
            matches!(fragment(&f), Err(LtlError::NotPrefixDecided)),
            "{f}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On any chain, a co-safe or safe formula's probability through the prefix product (decided
    /// states absorbing, reachability of `true` or of `false`) equals the BSCC product's.
    #[test]
    fn prefix_products_agree_with_the_bscc_product(seed in any::<u64>(), f in formula(2)) {
        let (m, letters) = random_chain(seed, 2);
        let aps = aps_of(&letters, 2);
        if let Some(v) = prefix_probs(&m, &aps, &f) {
            let w = probs(&m, &aps, &f);
            prop_assert!(close(&v, &w), "{} on {:?}: {:?} vs {:?}", f, letters, v, w);
        }
    }
}
