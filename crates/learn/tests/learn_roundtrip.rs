//! Simulate a known chain, learn it back, and check the estimates (round trip and empirical PAC).

use augur_dtmc::{Dtmc, Matrix};
use augur_learn::pac::{pac_report, PacBound};
use augur_learn::simulate::Simulator;
use augur_learn::{learn, TransitionCounts, Validity};

/// A DTMC from explicit rows (each sorted by column), initial state 0.
fn dtmc(rows: &[&[(u32, f64)]]) -> Dtmc {
    let n = rows.len();
    let mut indptr = vec![0u32];
    let mut indices = Vec::new();
    let mut data = Vec::new();
    for r in rows {
        for &(j, p) in *r {
            indices.push(j);
            data.push(p);
        }
        indptr.push(indices.len() as u32);
    }
    Dtmc {
        matrix: Matrix::new((n, n), indptr, indices, data),
        initial: vec![0],
        labels: vec![],
        rewards: vec![],
        valuations: None,
        exact: None,
        intervals: None,
    }
}

/// The generator's support as the validity relation ("known support").
struct Support<'a>(&'a Dtmc);
impl Validity for Support<'_> {
    fn is_valid_transition(&self, from: u32, to: u32) -> bool {
        self.0.matrix.get(from as usize, to as usize).is_some()
    }
}

/// Two transient states 0, 1, goal 2 and failure 3 (both absorbing).
/// x0 = P(F goal | 0) solves x0 = .2 x0 + .5 x1, x1 = .4 x0 + .4: x0 = 1/3, x1 = 8/15.
fn generator() -> Dtmc {
    dtmc(&[
        &[(0, 0.2), (1, 0.5), (3, 0.3)],
        &[(0, 0.4), (2, 0.4), (3, 0.2)],
        &[(2, 1.0)],
        &[(3, 1.0)],
    ])
}

/// P(F 2 | 0) on a chain with the generator's structure, by solving the 2x2 system
/// (I − A) x = b with Cramer's rule (an independent method from the simulation).
fn reach_goal(d: &Dtmc) -> f64 {
    let p = |i: usize, j: usize| d.matrix.get(i, j).copied().unwrap_or(0.0);
    let (a, b, c, e) = (1.0 - p(0, 0), -p(0, 1), -p(1, 0), 1.0 - p(1, 1));
    let (b0, b1) = (p(0, 2), p(1, 2));
    (b0 * e - b * b1) / (a * e - b * c)
}

#[test]
fn generator_closed_form() {
    assert!((reach_goal(&generator()) - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn round_trip_within_wilson_intervals() {
    let gen = generator();
    let valid = Support(&gen);
    let mut counts = TransitionCounts::new(4);
    for t in Simulator::new(&gen, 2024, 30).unwrap().take(1500) {
        counts.try_observe_trace(&t, &valid).unwrap();
    }
    assert_eq!(counts.invalid_total(), 0);
    counts.mark_determined(&valid);
    let learned = learn(&counts, &valid, 0.0).unwrap().dtmc;
    let mut entries = 0;
    let mut inside = 0;
    for i in 0..2u32 {
        for (j, &p) in gen.matrix.outer_view(i as usize).unwrap().iter() {
            entries += 1;
            let (lo, hi) = counts.wilson(i, j as u32);
            let est = learned.matrix.get(i as usize, j).copied().unwrap_or(0.0);
            assert!(lo <= est && est <= hi);
            if lo <= p && p <= hi {
                inside += 1;
            }
        }
    }
    // 95% intervals: with 6 estimated entries, at most one outside is already unlikely.
    assert!(inside + 1 >= entries, "{inside} of {entries} inside");
    // Absorbing rows are exact (validity leaves a single successor).
    assert_eq!(learned.matrix.get(2, 2).copied(), Some(1.0));
    assert_eq!(learned.matrix.get(3, 3).copied(), Some(1.0));
    // Rows sum to 1.
    for row in learned.matrix.outer_iterator() {
        assert!((row.data().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

/// Simulate from `seed` until the PAC condition holds, learn, and return the learned
/// reachability probability.
fn pac_run(seed: u64, epsilon: f64, delta: f64) -> f64 {
    let gen = generator();
    let valid = Support(&gen);
    let mut counts = TransitionCounts::new(4);
    counts.mark_determined(&valid);
    let mut sim = Simulator::new(&gen, seed, 100).unwrap();
    loop {
        for _ in 0..10 {
            let t = sim.next().unwrap();
            counts.try_observe_trace(&t, &valid).unwrap();
        }
        let r = pac_report(&counts, epsilon, delta, PacBound::ChenEtAl).unwrap();
        if r.holds {
            break;
        }
    }
    reach_goal(&learn(&counts, &valid, 0.0).unwrap().dtmc)
}

fn empirical_pac(seeds: u64, epsilon: f64, delta: f64) {
    let truth = 1.0 / 3.0;
    let off = (0..seeds)
        .filter(|&s| (pac_run(s, epsilon, delta) - truth).abs() > epsilon)
        .count();
    let frac = off as f64 / seeds as f64;
    eprintln!("{off} of {seeds} runs off by more than ε = {epsilon} (δ = {delta})");
    assert!(
        frac <= delta,
        "{off} of {seeds} runs off by more than {epsilon}"
    );
}

/// Fast version: 40 seeds at ε = 0.1, δ = 0.1.
#[test]
fn empirical_pac_small() {
    empirical_pac(40, 0.1, 0.1);
}

/// Slow version (run with
/// `cargo test -p augur-dtmc --test learn_roundtrip -- --ignored empirical_pac_many_seeds`):
/// 1000 seeds at ε = 0.05, δ = 0.05.
#[test]
#[ignore = "slow: 1000 seeds; run with --ignored empirical_pac_many_seeds"]
fn empirical_pac_many_seeds() {
    empirical_pac(1000, 0.05, 0.05);
}
