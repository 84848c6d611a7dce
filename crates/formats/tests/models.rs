//! The example models in `models/`: structure, and their documented values recomputed here by
//! elementary means on the matrix as read (independently of the solver crate).

use augur_dtmc::Dtmc;
use augur_formats::{read_model, ReadOptions};
use std::path::PathBuf;

fn model(name: &str) -> Dtmc {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    let (d, report) = read_model(&path, &ReadOptions::default()).unwrap();
    assert!(report.deadlocks_fixed.is_empty(), "{name}: deadlocks");
    d.validate().unwrap();
    for s in 0..d.num_states() {
        let sum: f64 = d.successors(s).map(|(_, p)| p).sum();
        assert!((sum - 1.0).abs() < 1e-12, "{name}: row {s} sums to {sum}");
    }
    d
}

fn states(d: &Dtmc, label: &str) -> Vec<usize> {
    d.label_or_err(label).unwrap().ones().collect()
}

/// x ← P·x (one backward step of bounded reachability), with target states kept at 1.
fn step(d: &Dtmc, x: &[f64], target: &[usize]) -> Vec<f64> {
    (0..d.num_states())
        .map(|s| {
            if target.contains(&s) {
                1.0
            } else {
                d.successors(s).map(|(t, p)| p * x[t as usize]).sum()
            }
        })
        .collect()
}

#[test]
fn safetydrift() {
    let d = model("safetydrift.tra");
    assert_eq!(d.num_states(), 5);
    assert_eq!(d.num_transitions(), 12);
    assert_eq!(d.initial, vec![0]);
    for (i, l) in ["safe", "mild", "elevated", "critical", "violated"]
        .iter()
        .enumerate()
    {
        assert_eq!(states(&d, l), vec![i]);
    }
    assert_eq!(d.describe_state(3).unwrap(), "(risk=3)");
    let steps = d.reward_structure("steps").unwrap();
    assert_eq!(steps.state.as_deref(), Some(&[1.0, 1.0, 1.0, 1.0, 0.0][..]));

    // P(F<=h violated) by h vector-matrix products.
    let target = [4];
    let mut x = vec![0.0, 0.0, 0.0, 0.0, 1.0];
    for _ in 0..5 {
        x = step(&d, &x, &target);
    }
    // Exact values [P^5]_{i,4} from rational matrix powers (models/README.md).
    let exact = [0.2671295398, 0.4539288013, 0.3043116307, 0.3043116307, 1.0];
    for (a, b) in x.iter().zip(exact) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    assert!((x[1] - 0.453929).abs() < 5e-7);
    // CRITICAL: closed form 1 - 0.93^5.
    assert!((x[3] - (1.0 - 0.93f64.powi(5))).abs() < 1e-12);

    // Expected steps: t = (I - Q)^{-1} 1 by back substitution (Q is upper triangular).
    let q = |i: usize, j: usize| {
        d.successors(i)
            .find(|&(t, _)| t as usize == j)
            .map_or(0.0, |(_, p)| p)
    };
    let mut t = [0.0f64; 4];
    for i in (0..4).rev() {
        let mut rhs = 1.0;
        for (j, tj) in t.iter().enumerate().skip(i + 1) {
            rhs += q(i, j) * tj;
        }
        assert!((0..i).all(|j| q(i, j) == 0.0), "Q not upper triangular");
        t[i] = rhs / (1.0 - q(i, i));
    }
    let expected = [29650.0 / 2093.0, 1000.0 / 91.0, 100.0 / 7.0, 100.0 / 7.0];
    for (a, b) in t.iter().zip(expected) {
        assert!((a - b).abs() < 1e-12 * b, "{a} vs {b}");
    }
    assert!((t[0] - 14.17).abs() < 0.005);

    // Absorption is certain from every transient state: iterate to convergence.
    let mut x = vec![0.0, 0.0, 0.0, 0.0, 1.0];
    for _ in 0..2000 {
        x = step(&d, &x, &target);
    }
    for v in &x {
        assert!((v - 1.0).abs() < 1e-12);
    }
}

#[test]
fn gambler() {
    let d = model("gambler.drn");
    assert_eq!(d.num_states(), 11);
    assert_eq!(d.initial, vec![5]);
    assert_eq!(states(&d, "win"), vec![10]);
    assert_eq!(states(&d, "ruin"), vec![0]);
    assert_eq!(states(&d, "done"), vec![0, 10]);
    let steps = d.reward_structure("steps").unwrap();
    let r = d.expected_one_step_rewards(steps);
    assert_eq!(r[0] + r[10], 0.0);
    assert!(r[1..10].iter().all(|&x| x == 1.0));

    // Solve x_i = p x_{i+1} + q x_{i-1} + c_i (i = 1..9) with given boundary values by the
    // Thomas algorithm, reading p and q from the matrix.
    let solve = |x0: f64, x10: f64, c: f64| -> Vec<f64> {
        let n = 9;
        let (mut a, mut b, mut cc, mut rhs) =
            (vec![0.0; n], vec![1.0; n], vec![0.0; n], vec![c; n]);
        for k in 0..n {
            let i = k + 1;
            for (t, p) in d.successors(i) {
                let t = t as usize;
                if t + 1 == i {
                    a[k] = -p;
                } else if t == i + 1 {
                    cc[k] = -p;
                } else {
                    panic!("unexpected transition {i} -> {t}");
                }
            }
        }
        rhs[0] -= a[0] * x0;
        rhs[n - 1] -= cc[n - 1] * x10;
        for k in 1..n {
            let m = a[k] / b[k - 1];
            b[k] -= m * cc[k - 1];
            rhs[k] -= m * rhs[k - 1];
        }
        let mut x = vec![0.0; n];
        x[n - 1] = rhs[n - 1] / b[n - 1];
        for k in (0..n - 1).rev() {
            x[k] = (rhs[k] - cc[k] * x[k + 1]) / b[k];
        }
        let mut full = vec![x0];
        full.extend(x);
        full.push(x10);
        full
    };
    let (p, q, n) = (0.4f64, 0.6f64, 10);
    let ratio = q / p;
    let win = solve(0.0, 1.0, 0.0);
    let dur = solve(0.0, 0.0, 1.0);
    for i in 0..=10 {
        let closed_win = (1.0 - ratio.powi(i)) / (1.0 - ratio.powi(n));
        let closed_dur = f64::from(i) / (q - p) - (f64::from(n) / (q - p)) * closed_win;
        let i = i as usize;
        assert!(
            (win[i] - closed_win).abs() < 1e-12,
            "{i}: {} vs {closed_win}",
            win[i]
        );
        assert!(
            (dur[i] - closed_dur).abs() < 1e-10,
            "{i}: {} vs {closed_dur}",
            dur[i]
        );
    }
    assert!((win[5] - 32.0 / 275.0).abs() < 1e-14);
    assert!((dur[5] - 211.0 / 11.0).abs() < 1e-12);
}

#[test]
fn die() {
    let d = model("die.json");
    assert_eq!(d.num_states(), 13);
    assert_eq!(d.initial, vec![0]);
    assert_eq!(states(&d, "six"), vec![12]);
    assert_eq!(states(&d, "done"), (7..13).collect::<Vec<_>>());
    assert_eq!(d.describe_state(12).unwrap(), "(s=7,d=6)");
    // Value iteration; the error shrinks by 1/4 every two steps, so 200 steps is exact in f64.
    for (label, _) in [
        ("one", 7),
        ("two", 8),
        ("three", 9),
        ("four", 10),
        ("five", 11),
        ("six", 12),
    ] {
        let target = states(&d, label);
        let mut x: Vec<f64> = (0..13)
            .map(|s| f64::from(u8::from(target.contains(&s))))
            .collect();
        for _ in 0..200 {
            x = step(&d, &x, &target);
        }
        assert!((x[0] - 1.0 / 6.0).abs() < 1e-15, "{label}: {}", x[0]);
    }
    let flips = d.reward_structure("coin_flips").unwrap();
    let r = d.expected_one_step_rewards(flips);
    let mut e = vec![0.0; 13];
    for _ in 0..200 {
        e = (0..13)
            .map(|s| {
                if s >= 7 {
                    0.0
                } else {
                    r[s] + d.successors(s).map(|(t, p)| p * e[t as usize]).sum::<f64>()
                }
            })
            .collect();
    }
    assert!((e[0] - 11.0 / 3.0).abs() < 1e-14, "{}", e[0]);
}
