//! Tests of the numerical core through its public API: random DTMCs (every method against the
//! dense closed form), the Haddad–Monmege chains, the SafetyDrift matrix, steady state.
#![allow(clippy::needless_range_loop)]

use augur_dtmc::{Matrix, StateSet};
use augur_solver::{
    absorbing_analysis, discounted_total_rewards, graph, long_run_average, reachability_rewards,
    sweep, total_rewards, until_probabilities, Method, Solution, SolveOptions, SolverError,
};
use proptest::prelude::*;
use sprs::TriMatI;

fn matrix(n: usize, edges: &[(usize, usize, f64)]) -> Matrix {
    let mut t = TriMatI::<f64, u32>::new((n, n));
    for &(s, d, p) in edges {
        t.add_triplet(s, d, p);
    }
    t.to_csr()
}

fn set(n: usize, xs: impl IntoIterator<Item = usize>) -> StateSet {
    let mut s = StateSet::with_capacity(n);
    for x in xs {
        s.insert(x);
    }
    s
}

fn all(n: usize) -> StateSet {
    set(n, 0..n)
}

fn opts(method: Method, epsilon: f64) -> SolveOptions {
    SolveOptions {
        method,
        epsilon,
        relative: true,
        max_iterations: 10_000_000,
        ..SolveOptions::default()
    }
}

/// A small deterministic generator (xorshift64*), so that a proptest seed fixes a whole chain.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A random DTMC: some absorbing states, the rest with 1–4 random successors (weights in
/// [0.05, 1], normalised), so both transient parts and recurrent classes (cycles among the
/// non-absorbing states) occur.
fn random_dtmc(seed: u64, n: usize, absorbing_percent: usize) -> Matrix {
    let mut r = Rng(seed | 1);
    let mut edges = Vec::new();
    for s in 0..n {
        if r.below(100) < absorbing_percent {
            edges.push((s, s, 1.0));
            continue;
        }
        let k = 1 + r.below(4);
        let mut succ: Vec<(usize, f64)> = Vec::new();
        for _ in 0..k {
            let d = r.below(n);
            let w = 0.05 + 0.95 * r.unit();
            match succ.iter_mut().find(|(x, _)| *x == d) {
                Some(e) => e.1 += w,
                None => succ.push((d, w)),
            }
        }
        let total: f64 = succ.iter().map(|e| e.1).sum();
        for (d, w) in succ {
            edges.push((s, d, w / total));
        }
    }
    matrix(n, &edges)
}

fn random_set(seed: u64, n: usize, percent: usize) -> StateSet {
    let mut r = Rng(seed.wrapping_mul(7919) | 1);
    set(
        n,
        (0..n)
            .filter(|_| r.below(100) < percent)
            .collect::<Vec<_>>(),
    )
}

const SOUND: [Method; 4] = [
    Method::Interval,
    Method::Topological,
    Method::Exact,
    Method::Auto,
];
const UNSOUND: [Method; 3] = [Method::GaussSeidel, Method::Jacobi, Method::Power];

fn assert_close(a: f64, b: f64, tol: f64, what: &str) {
    if a.is_infinite() || b.is_infinite() {
        assert_eq!(a, b, "{what}");
        return;
    }
    let scale = a.abs().max(b.abs()).max(1.0);
    assert!((a - b).abs() <= tol * scale, "{what}: {a} vs {b}");
}

fn assert_bounds_contain(sol: &Solution, reference: &[f64], what: &str) {
    let (lo, hi) = sol
        .bounds
        .as_ref()
        .expect("sound method must report bounds");
    for (s, &v) in reference.iter().enumerate() {
        if v.is_infinite() {
            assert_eq!(lo[s], v, "{what}: lower bound at {s}");
            continue;
        }
        // Slack for the rounding of the dense LU reference only.
        let slack = 1e-11 * v.abs().max(1.0);
        assert!(
            lo[s] - slack <= v && v <= hi[s] + slack,
            "{what}: state {s}: {v} not in [{}, {}] ({})",
            lo[s],
            hi[s],
            sol.method
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn until_every_method_agrees_with_closed_form(
        seed in any::<u64>(), n in 2usize..40, absorbing in 0usize..40, phi_pct in 60usize..101, psi_pct in 5usize..30
    ) {
        let m = random_dtmc(seed, n, absorbing);
        let mt = graph::transpose(&m);
        let phi = random_set(seed ^ 0xabc, n, phi_pct);
        let psi = random_set(seed ^ 0xdef, n, psi_pct);
        let reference = until_probabilities(&m, &mt, None, &phi, &psi, &opts(Method::ClosedForm, 1e-6)).unwrap();
        for method in SOUND {
            let sol = until_probabilities(&m, &mt, None, &phi, &psi, &opts(method, 1e-10)).unwrap();
            for s in 0..n {
                assert_close(sol.values[s], reference.values[s], 1e-8, &format!("{method:?} state {s}"));
            }
            assert_bounds_contain(&sol, &reference.values, &format!("{method:?}"));
        }
        let exact = until_probabilities(&m, &mt, None, &phi, &psi, &opts(Method::Exact, 1e-6)).unwrap();
        for s in 0..n {
            assert_close(exact.values[s], reference.values[s], 1e-10, "exact vs closed form");
        }
        for method in UNSOUND {
            let sol = until_probabilities(&m, &mt, None, &phi, &psi, &opts(method, 1e-13)).unwrap();
            prop_assert!(sol.bounds.is_none() || sol.method.starts_with("graph"));
            for s in 0..n {
                assert_close(sol.values[s], reference.values[s], 1e-8, &format!("{method:?} state {s}"));
            }
        }
        // Prob0 / Prob1 against the exact values and step-bounded reachability.
        let p0 = graph::prob0(&mt, &phi, &psi);
        let p1 = graph::prob1(&m, &mt, &phi, &psi, &p0);
        let bounded = sweep::bounded_until(&m, &phi, &psi, n as u64);
        let mut mid = phi.clone();
        mid.difference_with(&psi);
        let to_zero = sweep::bounded_until(&m, &mid, &p0, n as u64);
        let (lo, hi) = exact.bounds.as_ref().unwrap();
        for s in 0..n {
            // P > 0 iff ψ is reached with positive probability within n steps.
            prop_assert_eq!(p0.contains(s), bounded[s] == 0.0, "prob0 at {}", s);
            // P = 1 iff no Prob0 state can be reached through φ ∧ ¬ψ.
            prop_assert_eq!(p1.contains(s), !p0.contains(s) && to_zero[s] == 0.0, "prob1 at {}", s);
            if p0.contains(s) { prop_assert_eq!(exact.values[s], 0.0); }
            if p1.contains(s) { prop_assert_eq!(exact.values[s], 1.0); }
            if !p0.contains(s) && !p1.contains(s) {
                // Exact bounds strictly inside (0, 1).
                prop_assert!(lo[s] > 0.0 && hi[s] < 1.0, "state {} in ({}, {})", s, lo[s], hi[s]);
            }
        }
    }

    #[test]
    fn rewards_every_method_agrees_with_closed_form(
        seed in any::<u64>(), n in 2usize..40, absorbing in 0usize..40, target_pct in 5usize..30
    ) {
        let m = random_dtmc(seed, n, absorbing);
        let mt = graph::transpose(&m);
        let target = random_set(seed ^ 0x123, n, target_pct);
        let mut r = Rng(seed ^ 0x5555);
        let rewards: Vec<f64> = (0..n).map(|_| if r.below(4) == 0 { 0.0 } else { r.unit() * 3.0 }).collect();
        let reference = reachability_rewards(&m, &mt, None, &target, &rewards, &opts(Method::ClosedForm, 1e-6)).unwrap();
        // Infinity exactly where reaching the target is not almost sure.
        let all_s = all(n);
        let reach = until_probabilities(&m, &mt, None, &all_s, &target, &opts(Method::Exact, 1e-6)).unwrap();
        for s in 0..n {
            prop_assert_eq!(reference.values[s].is_infinite(), reach.values[s] < 1.0, "inf at {}", s);
            if target.contains(s) { prop_assert_eq!(reference.values[s], 0.0); }
        }
        for method in SOUND {
            let sol = reachability_rewards(&m, &mt, None, &target, &rewards, &opts(method, 1e-10)).unwrap();
            for s in 0..n {
                assert_close(sol.values[s], reference.values[s], 1e-8, &format!("{method:?} state {s}"));
            }
            assert_bounds_contain(&sol, &reference.values, &format!("{method:?} rewards"));
        }
        for method in UNSOUND {
            let sol = reachability_rewards(&m, &mt, None, &target, &rewards, &opts(method, 1e-13)).unwrap();
            for s in 0..n {
                assert_close(sol.values[s], reference.values[s], 1e-8, &format!("{method:?} state {s}"));
            }
        }
        // Total reward with the target made absorbing (and reward-free) equals the reachability
        // reward where the latter is finite.
        let mut edges = Vec::new();
        for (s, row) in m.outer_iterator().enumerate() {
            if target.contains(s) {
                edges.push((s, s, 1.0));
            } else {
                for (d, &p) in row.iter() { edges.push((s, d, p)); }
            }
        }
        let ma = matrix(n, &edges);
        let mat = graph::transpose(&ma);
        let r0: Vec<f64> = (0..n).map(|s| if target.contains(s) { 0.0 } else { rewards[s] }).collect();
        let total = total_rewards(&ma, &mat, None, &r0, &opts(Method::Auto, 1e-10)).unwrap();
        for s in 0..n {
            if reference.values[s].is_finite() {
                assert_close(total.values[s], reference.values[s], 1e-8, &format!("total at {s}"));
            }
        }
    }

    #[test]
    fn long_run_methods_agree_and_match_lazy_power(
        seed in any::<u64>(), n in 2usize..14, absorbing in 0usize..30
    ) {
        let m = random_dtmc(seed, n, absorbing);
        let mt = graph::transpose(&m);
        let mut r = Rng(seed ^ 0x777);
        let values: Vec<f64> = (0..n).map(|_| r.unit()).collect();
        // Independent reference: the lazy chain (P + I)/2 is aperiodic with the same stationary
        // distributions and BSCC reach probabilities; its powers applied to `values` converge to
        // the long-run average. Dense repeated squaring (Q^(2^60), rows renormalised): a fixed number of steps
        // (20,000 once) stops far from the limit on chains that mix slowly (proptest found one).
        let mut q = vec![vec![0.0; n]; n];
        for (s, row) in q.iter_mut().enumerate() {
            row[s] += 0.5;
            let (cols, vals) = (m.outer_view(s).unwrap().indices().to_vec(), m.outer_view(s).unwrap().data().to_vec());
            for (c, v) in cols.iter().zip(vals) { row[*c as usize] += 0.5 * v; }
        }
        for _ in 0..60 {
            let mut sq = vec![vec![0.0; n]; n];
            for i in 0..n { for k in 0..n { let a = q[i][k]; if a != 0.0 { for j in 0..n { sq[i][j] += a * q[k][j]; } } } }
            // keep the rows stochastic against rounding drift (which squaring would amplify)
            for row in &mut sq { let t: f64 = row.iter().sum(); for v in row.iter_mut() { *v /= t; } }
            q = sq;
        }
        let x: Vec<f64> = (0..n).map(|i| (0..n).map(|j| q[i][j] * values[j]).sum()).collect();
        let exact = long_run_average(&m, &mt, None, &values, &opts(Method::Exact, 1e-6)).unwrap();
        for s in 0..n {
            assert_close(exact.values[s], x[s], 1e-7, &format!("exact vs lazy power at {s}"));
        }
        // Gauss-Seidel is left out: its stopping rule (a small change between sweeps) is not a
        // precision guarantee, and proptest found chains where it stops 1e-8 away.
        for method in [Method::Auto, Method::Interval, Method::Topological, Method::ClosedForm] {
            let sol = long_run_average(&m, &mt, None, &values, &opts(method, 1e-10)).unwrap();
            for s in 0..n {
                assert_close(sol.values[s], exact.values[s], 1e-8, &format!("{method:?} at {s}"));
            }
            if let Some((lo, hi)) = &sol.bounds {
                for s in 0..n {
                    prop_assert!(lo[s] <= exact.values[s] + 1e-12 && exact.values[s] <= hi[s] + 1e-12);
                }
            }
        }
        // Steady-state probabilities of all states sum to 1 in every state.
        let mut sum = vec![0.0; n];
        for t in 0..n {
            let ind: Vec<f64> = (0..n).map(|s| if s == t { 1.0 } else { 0.0 }).collect();
            let sol = long_run_average(&m, &mt, None, &ind, &opts(Method::Auto, 1e-10)).unwrap();
            for s in 0..n { sum[s] += sol.values[s]; }
        }
        for (s, v) in sum.iter().enumerate() {
            assert_close(*v, 1.0, 1e-8, &format!("steady-state sum at {s}"));
        }
    }
}

/// The Haddad–Monmege chain (../shared/qvbs/haddad-monmege/haddad-monmege.pm): x in [0..2N],
/// init N; x=N → p: x−1, 1−p: x+1; 0<x<N → ½: x−1, ½: N; N<x<2N → ½: x+1, ½: N; 0 and 2N
/// absorbing.
fn haddad_monmege(n: usize, p: f64) -> Matrix {
    let mut e = Vec::new();
    for x in 0..=2 * n {
        if x == 0 || x == 2 * n {
            e.push((x, x, 1.0));
        } else if x == n {
            e.push((x, x - 1, p));
            e.push((x, x + 1, 1.0 - p));
        } else if x < n {
            e.push((x, x - 1, 0.5));
            e.push((x, n, 0.5));
        } else {
            e.push((x, x + 1, 0.5));
            e.push((x, n, 0.5));
        }
    }
    matrix(2 * n + 1, &e)
}

fn check_haddad_monmege(n: usize, steps_reference: f64) {
    let m = haddad_monmege(n, 0.7);
    let mt = graph::transpose(&m);
    let size = 2 * n + 1;
    let target = set(size, [0]);
    let done = set(size, [0, 2 * n]);
    // Plain value iteration with the naive stopping rule stops far from the answer.
    let power = until_probabilities(
        &m,
        &mt,
        None,
        &all(size),
        &target,
        &opts(Method::Power, 1e-6),
    )
    .unwrap();
    assert!(
        (power.values[n] - 0.7).abs() > 0.1,
        "power answered {} for N={n}",
        power.values[n]
    );
    // The default gets 0.7; its bounds contain the truth. (The truth for the chain as built is
    // p/(p + fl(1−p)), within 1e-16 of 0.7, since fl(1 − 0.7) is not exactly 0.3.)
    let auto =
        until_probabilities(&m, &mt, None, &all(size), &target, &SolveOptions::default()).unwrap();
    assert_close(auto.values[n], 0.7, 1e-6, "HM target");
    let (lo, hi) = auto.bounds.as_ref().unwrap();
    assert!(
        lo[n] <= 0.7 + 1e-15 && 0.7 - 1e-15 <= hi[n],
        "[{}, {}]",
        lo[n],
        hi[n]
    );
    assert!(auto.method.starts_with("exact"), "{}", auto.method);
    // Expected steps to {0, 2N} (Storm's T=? [F "Done"]), reference from QVBS.
    let ones = vec![1.0; size];
    let steps =
        reachability_rewards(&m, &mt, None, &done, &ones, &SolveOptions::default()).unwrap();
    let v = steps.values[n];
    assert!(
        ((v - steps_reference) / steps_reference).abs() <= 1e-6,
        "HM steps {v} vs {steps_reference}"
    );
    let (lo, hi) = steps.bounds.as_ref().unwrap();
    let rel = 1e-12 * steps_reference;
    assert!(lo[n] - rel <= steps_reference && steps_reference <= hi[n] + rel);
}

#[test]
fn haddad_monmege_20() {
    check_haddad_monmege(20, 1572862.0);
}

#[test]
fn haddad_monmege_100() {
    check_haddad_monmege(100, 1901475900342344102245054808062.0);
}

/// The Haddad–Monmege trap inside a large model: a prefix of 100,000 states (each stays with
/// ½ or moves on with ½, so each is its own SCC) leads into the chain of N=600 (1,199 unknowns
/// in one SCC, expected steps ~10^180). Every prefix state reaches the target with the chain's
/// probability p/(p + fl(1−p)) (the prefix is left surely); the default method must answer it
/// within ε, and its bounds must contain it.
#[test]
fn haddad_monmege_600_embedded_in_a_large_model() {
    let (n, prefix) = (600usize, 100_000usize);
    let hm = haddad_monmege(n, 0.7);
    let size = prefix + 2 * n + 1;
    let mut e = Vec::new();
    for i in 0..prefix {
        let next = if i + 1 < prefix { i + 1 } else { prefix + n };
        e.push((i, i, 0.5));
        e.push((i, next, 0.5));
    }
    for (v, (s, d)) in hm.iter() {
        e.push((prefix + s as usize, prefix + d as usize, *v));
    }
    let m = matrix(size, &e);
    let mt = graph::transpose(&m);
    let target = set(size, [prefix]);
    let sol =
        until_probabilities(&m, &mt, None, &all(size), &target, &SolveOptions::default()).unwrap();
    // The exact value for the chain as built, from p and fl(1 − p) as rationals.
    let p = 0.7f64;
    let q = 1.0 - p;
    let truth = p / (p + q);
    let (lo, hi) = sol.bounds.as_ref().unwrap();
    for s in [0, prefix / 2, prefix - 1, prefix + n] {
        assert_close(sol.values[s], 0.7, 1e-6, "embedded HM target");
        assert!(
            lo[s] <= truth + 1e-15 && truth - 1e-15 <= hi[s],
            "[{}, {}] at {s}",
            lo[s],
            hi[s]
        );
        assert!(
            hi[s] - lo[s] <= 1e-6 * lo[s],
            "[{}, {}] too wide",
            lo[s],
            hi[s]
        );
    }
    assert!(sol.method.contains("exact"), "{}", sol.method);
}

#[test]
fn haddad_monmege_sound_iteration() {
    // Interval iteration is slow on this chain (N=10 keeps the test fast) but, being sound, must
    // not stop early.
    let m = haddad_monmege(10, 0.7);
    let mt = graph::transpose(&m);
    let target = set(21, [0]);
    for method in [Method::Interval, Method::Topological] {
        let sol =
            until_probabilities(&m, &mt, None, &all(21), &target, &opts(method, 1e-6)).unwrap();
        assert_close(sol.values[10], 0.7, 1e-6, &format!("{method:?}"));
        let (lo, hi) = sol.bounds.as_ref().unwrap();
        assert!(lo[10] <= 0.7 + 1e-15 && 0.7 - 1e-15 <= hi[10]);
    }
}

/// SafetyDrift's aggregate matrix over risk levels (../shared/reference/README.md), rows SAFE,
/// MILD, ELEVATED, CRITICAL, VIOLATED.
fn safety_drift() -> Matrix {
    matrix(
        5,
        &[
            (0, 0, 0.54),
            (0, 1, 0.32),
            (0, 2, 0.14),
            (1, 1, 0.74),
            (1, 2, 0.13),
            (1, 4, 0.13),
            (2, 2, 0.81),
            (2, 3, 0.12),
            (2, 4, 0.07),
            (3, 3, 0.93),
            (3, 4, 0.07),
            (4, 4, 1.0),
        ],
    )
}

#[test]
fn safety_drift_absorbing_analysis() {
    // Q is upper triangular, so t = N·1 solves backwards:
    // t_C = 1/0.07; t_E = (1 + 0.12 t_C)/0.19 = 1/0.07; t_M = (1 + 0.13 t_E)/0.26 = 1000/91;
    // t_S = (1 + 0.32 t_M + 0.14 t_E)/0.46 = (3 + 320/91)/0.46 = 29650/2093 ≈ 14.1663.
    let expected = [29650.0 / 2093.0, 1000.0 / 91.0, 1.0 / 0.07, 1.0 / 0.07];
    let m = safety_drift();
    let targets = set(5, [4]);
    for method in [Method::Auto, Method::Interval, Method::Exact] {
        let a = absorbing_analysis(&m, &targets, &opts(method, 1e-12)).unwrap();
        assert_eq!(a.transient, vec![0, 1, 2, 3]);
        assert_eq!(a.absorbing, vec![4]);
        for i in 0..4 {
            assert_close(a.absorbed(i), 1.0, 1e-9, "absorption probability");
            assert_close(
                a.expected_steps[i],
                expected[i],
                1e-9,
                &format!("steps {i}"),
            );
        }
        if method == Method::Auto {
            let n = a.fundamental.as_ref().unwrap();
            // N[C][C] = 1/(1 − 0.93).
            assert_close(n[(3, 3)], 1.0 / 0.07, 1e-9, "N[C][C]");
        }
    }
    // P(VIOLATED within 5 | MILD) ≈ 0.454 from the rounded matrix (README).
    let within5 = sweep::bounded_until(&m, &all(5), &targets, 5);
    assert!((within5[1] - 0.454).abs() < 5e-4, "{}", within5[1]);
    assert!((within5[3] - 0.304).abs() < 5e-4, "{}", within5[3]);
}

#[test]
fn absorbing_with_unabsorbed_states() {
    // 0 → 1 (½) | 2 (½); 1 absorbing target; 2 absorbing non-target: never absorbed.
    let m = matrix(3, &[(0, 1, 0.5), (0, 2, 0.5), (1, 1, 1.0), (2, 2, 1.0)]);
    let a = absorbing_analysis(&m, &set(3, [1]), &SolveOptions::default()).unwrap();
    assert!(a.fundamental.is_none());
    assert_close(a.absorbed(0), 0.5, 1e-12, "absorbed");
    assert_eq!(a.absorbed(1), 0.0);
    assert!(a.expected_steps[0].is_infinite());
}

#[test]
fn long_run_periodic_two_cycle() {
    // 0 → {1: ½, 2: ½}; 1 ↔ 2 (period 2); 3 absorbing. π on {1,2} = (½, ½).
    let m = matrix(
        4,
        &[
            (0, 1, 0.5),
            (0, 3, 0.5),
            (1, 2, 1.0),
            (2, 1, 1.0),
            (3, 3, 1.0),
        ],
    );
    let mt = graph::transpose(&m);
    let values = [0.0, 4.0, 0.0, 2.0];
    for method in [
        Method::Auto,
        Method::Exact,
        Method::Interval,
        Method::ClosedForm,
        Method::Power,
    ] {
        let sol = long_run_average(&m, &mt, None, &values, &opts(method, 1e-10)).unwrap();
        // From 0: ½·(½·4 + ½·0) + ½·2 = 2; in the cycle 2; in 3: 2.
        for s in 0..4 {
            assert_close(sol.values[s], 2.0, 1e-8, &format!("{method:?} {s}"));
        }
    }
    // Negative values are shifted and shifted back.
    let values = [5.0, -1.0, 3.0, -4.0];
    let sol = long_run_average(&m, &mt, None, &values, &SolveOptions::default()).unwrap();
    assert_close(sol.values[0], 0.5 * 1.0 + 0.5 * -4.0, 1e-12, "shifted");
    let (lo, hi) = sol.bounds.unwrap();
    assert!(lo[0] <= -1.5 && -1.5 <= hi[0]);
}

#[test]
fn total_rewards_infinite_and_finite() {
    // 0 → 1 (½) | 2 (½); 1 absorbing with reward 1 (infinite), 2 absorbing reward 0;
    // 3 → 2 with reward 5: total 5. 4 → 4/2 with reward 1: expected visits 2 → 2.
    let m = matrix(
        5,
        &[
            (0, 1, 0.5),
            (0, 2, 0.5),
            (1, 1, 1.0),
            (2, 2, 1.0),
            (3, 2, 1.0),
            (4, 4, 0.5),
            (4, 2, 0.5),
        ],
    );
    let mt = graph::transpose(&m);
    let r = [0.0, 1.0, 0.0, 5.0, 1.0];
    for method in [
        Method::Auto,
        Method::Exact,
        Method::Interval,
        Method::Jacobi,
    ] {
        let sol = total_rewards(&m, &mt, None, &r, &opts(method, 1e-10)).unwrap();
        assert!(sol.values[0].is_infinite() && sol.values[1].is_infinite());
        assert_eq!(sol.values[2], 0.0);
        assert_close(sol.values[3], 5.0, 1e-9, "total 3");
        assert_close(sol.values[4], 2.0, 1e-9, "total 4");
    }
}

#[test]
fn discounted_totals_by_the_stopping_chain() {
    // The two-cycle 0 ⇄ 1 with rewards 1 and 3: v0 = 1 + d·v1, v1 = 3 + d·v0, so
    // v0 = (1 + 3d)/(1 − d²), v1 = (3 + d)/(1 − d²) (by hand); 2 absorbing without reward: 0.
    let m = matrix(3, &[(0, 1, 1.0), (1, 0, 1.0), (2, 2, 1.0)]);
    let r = [1.0, 3.0, 0.0];
    for d in [0.0, 0.5, 0.999999] {
        let v0 = (1.0 + 3.0 * d) / (1.0 - d * d);
        let v1 = (3.0 + d) / (1.0 - d * d);
        for method in [
            Method::Auto,
            Method::Interval,
            Method::Topological,
            Method::Exact,
        ] {
            let result = discounted_total_rewards(&m, &r, d, &opts(method, 1e-9));
            // Interval iteration contracts by d per sweep on this cycle: for d = 0.999999 it
            // needs about 2·10⁷ sweeps, more than its iteration limit, and must then refuse
            // (with a finite last difference: the upper sequence starts at max r / (1 − d)),
            // never answer wrongly. Auto and exact answer every discount.
            let sol = match result {
                Err(SolverError::NotConverged { difference, .. })
                    if d > 0.99 && matches!(method, Method::Interval | Method::Topological) =>
                {
                    assert!(
                        difference.is_finite(),
                        "{method:?}: difference {difference}"
                    );
                    continue;
                }
                other => other.unwrap(),
            };
            assert_eq!(sol.values.len(), 3);
            assert_close(sol.values[0], v0, 1e-7, "v0");
            assert_close(sol.values[1], v1, 1e-7, "v1");
            assert_eq!(sol.values[2], 0.0);
            // (For d close to 1 the reference itself carries a relative rounding error of
            // about 1e-10, beyond the slack of the bounds check.)
            if method != Method::Exact && d <= 0.5 {
                assert_bounds_contain(&sol, &[v0, v1, 0.0], "discounted");
            }
        }
    }
    assert!(discounted_total_rewards(&m, &r, 1.0, &opts(Method::Auto, 1e-9)).is_err());
}

#[test]
fn exact_probabilities_override_floats() {
    // With exact entries 1/3, 2/3 the answer is exactly 1/3 (0.333... as f64 bounds).
    use num_bigint::BigInt;
    use num_rational::BigRational;
    let third = 1.0 / 3.0;
    let m = matrix(
        3,
        &[(0, 1, third), (0, 2, 1.0 - third), (1, 1, 1.0), (2, 2, 1.0)],
    );
    let mt = graph::transpose(&m);
    let q = |a: i64, b: i64| BigRational::new(BigInt::from(a), BigInt::from(b));
    let ex = vec![q(1, 3), q(2, 3), q(1, 1), q(1, 1)];
    let sol = until_probabilities(
        &m,
        &mt,
        Some(&ex),
        &all(3),
        &set(3, [1]),
        &opts(Method::Exact, 1e-6),
    )
    .unwrap();
    let (lo, hi) = sol.bounds.unwrap();
    assert!(lo[0] < hi[0], "1/3 is not a float: bounds must differ");
    assert!(lo[0] <= third && third <= hi[0]);
}

#[test]
fn closed_form_refuses_huge_systems_and_errors_are_reported() {
    let n = 6000;
    // A chain 0 → 1 → … → n−1 with escape ½ to an absorbing failure state n.
    let mut e: Vec<(usize, usize, f64)> = Vec::new();
    for s in 0..n - 1 {
        e.push((s, s + 1, 0.5));
        e.push((s, n, 0.5));
    }
    e.push((n - 1, n - 1, 1.0));
    e.push((n, n, 1.0));
    let m = matrix(n + 1, &e);
    let mt = graph::transpose(&m);
    let goal = set(n + 1, [n - 1]);
    let r = until_probabilities(
        &m,
        &mt,
        None,
        &all(n + 1),
        &goal,
        &opts(Method::ClosedForm, 1e-6),
    );
    assert!(matches!(r, Err(augur_solver::SolverError::Unsupported(_))));
    // Topological: every state its own SCC, closed form per state: 2^-(n-1-s), exact in floats.
    let sol = until_probabilities(
        &m,
        &mt,
        None,
        &all(n + 1),
        &goal,
        &opts(Method::Topological, 1e-6),
    )
    .unwrap();
    assert_eq!(sol.values[n - 11], 0.5f64.powi(10));
    // Wrong sizes are errors, not panics.
    let r = reachability_rewards(&m, &mt, None, &goal, &[1.0], &SolveOptions::default());
    assert!(r.is_err());
}

#[test]
fn large_chain_default_method_matches_gauss_seidel() {
    // 10⁵ states: i → i+1 (0.6; the last transient state → 0), → a pseudo-random state (0.3), → goal / fail (0.05 each).
    // Mostly one big SCC, so Auto uses topological interval iteration.
    let n = 100_000;
    let (goal, fail) = (n - 2, n - 1);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut e = Vec::with_capacity(4 * n);
    for i in 0..n - 2 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % (n as u64 - 2)) as usize;
        e.push((i, goal, 0.05));
        e.push((i, fail, 0.05));
        // The last transient state wraps around to 0.
        e.push((i, if i + 1 == goal { 0 } else { i + 1 }, 0.6));
        e.push((i, j, 0.3));
    }
    e.push((goal, goal, 1.0));
    e.push((fail, fail, 1.0));
    let m = matrix(n, &e);
    let mt = graph::transpose(&m);
    let target = set(n, [goal]);
    let auto =
        until_probabilities(&m, &mt, None, &all(n), &target, &SolveOptions::default()).unwrap();
    assert!(auto.method.contains("topological"), "{}", auto.method);
    let gs = until_probabilities(
        &m,
        &mt,
        None,
        &all(n),
        &target,
        &opts(Method::GaussSeidel, 1e-13),
    )
    .unwrap();
    let (lo, hi) = auto.bounds.as_ref().unwrap();
    for s in (0..n).step_by(997) {
        assert_close(auto.values[s], gs.values[s], 1e-6, "large chain");
        assert!(lo[s] <= gs.values[s] + 1e-12 && gs.values[s] <= hi[s] + 1e-12);
    }
    // Symmetry: every transient state enters goal and fail with the same probability (0.05)
    // and the rest stays transient, so the value is exactly ½ everywhere.
    for s in (0..n - 2).step_by(101) {
        assert_close(auto.values[s], 0.5, 1e-6, "symmetry");
        assert!(lo[s] <= 0.5 && 0.5 <= hi[s]);
    }
}

/// Every long computation stops at its `Interrupt`: a set cancellation flag, a passed deadline
/// (checked once per sweep, so even the first sweep stops), and the progress callback sees the
/// sweeps.
#[test]
fn interrupts_stop_iterations_eliminations_and_bounded_operators() {
    use augur_solver::{bounded, Interrupt, Interruption, SolverError};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let m = haddad_monmege(30, 0.7);
    let mt = graph::transpose(&m);
    let n = m.rows();
    let (phi, psi) = (all(n), set(n, [n - 1]));
    let cancelled = Interrupt {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Interrupt::default()
    };
    let late = Interrupt {
        deadline: Some(Instant::now() - Duration::from_millis(1)),
        ..Interrupt::default()
    };
    let is = |r: Result<Solution, SolverError>, want: Interruption| matches!(r, Err(SolverError::Interrupted(w)) if w == want);
    for method in [
        Method::Auto,
        Method::Exact,
        Method::Interval,
        Method::Topological,
        Method::GaussSeidel,
        Method::Jacobi,
        Method::Power,
    ] {
        let mut o = opts(method, 1e-6);
        o.interrupt = cancelled.clone();
        let r = until_probabilities(&m, &mt, None, &phi, &psi, &o);
        assert!(is(r, Interruption::Cancelled), "{method:?}");
        o.interrupt = late.clone();
        let r = until_probabilities(&m, &mt, None, &phi, &psi, &o);
        assert!(is(r, Interruption::Deadline), "{method:?}");
    }
    // Without an interrupt the same problem is solved.
    let r = until_probabilities(&m, &mt, None, &phi, &psi, &opts(Method::Auto, 1e-6));
    assert!(r.is_ok(), "{r:?}");
    let stopped = |r: Result<Vec<f64>, SolverError>| {
        matches!(r, Err(SolverError::Interrupted(Interruption::Cancelled)))
    };
    let five = bounded::Horizon::new(&m, 5, &cancelled);
    assert!(stopped(five.until(&phi, &psi)));
    assert!(stopped(five.cumulative(&vec![1.0; n], 1.0)));
    assert!(stopped(five.power_apply(vec![1.0; n])));
    assert!(stopped(five.restricted(&phi, vec![1.0; n])));
    assert!(bounded::horizon_table(&m, &psi, 3, &cancelled).is_err());
    assert!(
        bounded::discounted_total(&m, &vec![1.0; n], 0.5, 1e-6, true, 100, &cancelled).is_err()
    );
    // Zero steps need no sweep: nothing to interrupt.
    assert!(bounded::Horizon::new(&m, 0, &cancelled)
        .until(&phi, &psi)
        .is_ok());
    // The callback sees every sweep, and may cancel (as a front-end polling for Ctrl-C does).
    let flag = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(AtomicU64::new(0));
    let (f2, s2) = (Arc::clone(&flag), Arc::clone(&seen));
    let watching = Interrupt {
        cancel: Some(Arc::clone(&flag)),
        on_sweep: Some(Arc::new(move |sweeps| {
            s2.store(sweeps, Ordering::Relaxed);
            if sweeps >= 3 {
                f2.store(true, Ordering::Relaxed);
            }
        })),
        ..Interrupt::default()
    };
    let r = bounded::Horizon::new(&m, 1000, &watching).until(&phi, &psi);
    assert!(stopped(r));
    assert_eq!(seen.load(Ordering::Relaxed), 3);
}

/// A biased walk on a `k`×`k` grid (as models/walk2d.pm): inner states move to their four
/// neighbours, the border absorbs. Returns the matrix and the east border (the target).
fn grid_walk(k: usize) -> (Matrix, StateSet) {
    let id = |x: usize, y: usize| y * k + x;
    let mut e = Vec::new();
    let mut east = Vec::new();
    for y in 0..k {
        for x in 0..k {
            let s = id(x, y);
            if x == 0 || y == 0 || x == k - 1 || y == k - 1 {
                e.push((s, s, 1.0));
                if x == k - 1 {
                    east.push(s);
                }
            } else {
                e.push((s, id(x + 1, y), 0.3));
                e.push((s, id(x - 1, y), 0.22));
                e.push((s, id(x, y + 1), 0.26));
                e.push((s, id(x, y - 1), 0.22));
            }
        }
    }
    (matrix(k * k, &e), set(k * k, east))
}

#[test]
fn interrupts_stop_direct_block_solves() {
    use augur_solver::{Interrupt, Interruption, SolverError};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    // One SCC of 48² unknowns: above the exact limit, answered by a certified sparse LU solve
    // (the multifrontal one) without a single iteration (so the interrupt must be checked
    // around the block solve).
    let (m, east) = grid_walk(50);
    let mt = graph::transpose(&m);
    let n = m.rows();
    let free = until_probabilities(&m, &mt, None, &all(n), &east, &SolveOptions::default())
        .expect("solved without an interrupt");
    assert!(free.method.contains("multifrontal LU"), "{}", free.method);
    for (interrupt, want) in [
        (
            Interrupt {
                cancel: Some(Arc::new(AtomicBool::new(true))),
                ..Interrupt::default()
            },
            Interruption::Cancelled,
        ),
        (
            Interrupt {
                deadline: Some(Instant::now() - Duration::from_millis(1)),
                ..Interrupt::default()
            },
            Interruption::Deadline,
        ),
    ] {
        let o = SolveOptions {
            interrupt,
            ..SolveOptions::default()
        };
        let r = until_probabilities(&m, &mt, None, &all(n), &east, &o);
        assert!(
            matches!(r, Err(SolverError::Interrupted(w)) if w == want),
            "{want:?}: {:?}",
            r.map(|s| s.method)
        );
    }
}

proptest! {
    /// Discounted value iteration's bounds contain the exact value of the `f64` model:
    /// one absorbing state with reward r at discount d has the value r/(1 − d), computed here
    /// in rationals from the doubles. (At r = 0.1, d = 0.5 the bounds once ended at
    /// 0.19999999999999998: the iteration's rounding was not covered.)
    #[test]
    fn discounted_iteration_bounds_contain_the_exact_value(
        r in 0.001f64..10.0,
        d in 0.01f64..0.95,
        eps in prop::sample::select(vec![1e-3, 1e-6, 1e-9]),
    ) {
        use num_rational::BigRational;
        let m = matrix(1, &[(0, 0, 1.0)]);
        let q = |x: f64| BigRational::from_float(x).unwrap();
        let exact = q(r) / (BigRational::from_integer(1.into()) - q(d));
        for (rr, dd) in [(r, d), (0.1, 0.5)] {
            let exact = if (rr, dd) == (r, d) {
                exact.clone()
            } else {
                q(0.1) / (BigRational::from_integer(1.into()) - q(0.5))
            };
            let dt = augur_solver::bounded::discounted_total(&m, &[rr], dd, eps, true, 100_000, &augur_solver::Interrupt::default())
                .unwrap()
                .expect("converges");
            prop_assert!(q(dt.lo[0]) <= exact && exact <= q(dt.hi[0]),
                "r={rr} d={dd}: [{}, {}]", dt.lo[0], dt.hi[0]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every sound method's bounds contain the exact value of the `f64` chain, with no slack:
    /// the reference is exact elimination in rationals (each double its own rational).
    #[test]
    fn sound_bounds_contain_the_exact_rational_without_slack(
        seed in any::<u64>(), n in 2usize..30, absorbing in 0usize..30, psi_pct in 5usize..30
    ) {
        use num_rational::BigRational;
        let m = random_dtmc(seed, n, absorbing);
        let mt = graph::transpose(&m);
        let phi = all(n);
        let psi = random_set(seed ^ 0xdef, n, psi_pct);
        let exact = until_probabilities(&m, &mt, None, &phi, &psi, &opts(Method::Exact, 1e-6)).unwrap();
        let q = exact.exact.expect("exact rationals");
        let ones = vec![1.0; n];
        let rexact = reachability_rewards(&m, &mt, None, &psi, &ones, &opts(Method::Exact, 1e-6)).unwrap();
        for method in SOUND {
            for eps in [1e-3, 1e-6, 1e-10] {
                let sol = until_probabilities(&m, &mt, None, &phi, &psi, &opts(method, eps)).unwrap();
                let (lo, hi) = sol.bounds.as_ref().expect("bounds");
                for s in 0..n {
                    let l = BigRational::from_float(lo[s]).unwrap();
                    let h = BigRational::from_float(hi[s]).unwrap();
                    let Some(v) = &q[s] else { continue };
                    prop_assert!(&l <= v && v <= &h,
                        "{:?} eps {}: state {}: [{}, {}] ({})", method, eps, s, lo[s], hi[s], sol.method);
                }
                let sol = reachability_rewards(&m, &mt, None, &psi, &ones, &opts(method, eps)).unwrap();
                let (lo, hi) = sol.bounds.as_ref().expect("bounds");
                let rq = rexact.exact.as_ref().expect("exact rationals");
                for s in 0..n {
                    if lo[s].is_infinite() { continue; }
                    let l = BigRational::from_float(lo[s]).unwrap();
                    let h = BigRational::from_float(hi[s]).unwrap();
                    let Some(v) = &rq[s] else { continue };
                    prop_assert!(&l <= v && v <= &h,
                        "{:?} eps {} rewards: state {}: [{}, {}] ({})", method, eps, s, lo[s], hi[s], sol.method);
                }
            }
        }
    }
}
