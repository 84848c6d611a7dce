//! Paths and probabilities derived by hand, and the properties that must hold on random
//! chains (checked against `augur-check`, an independent computation).

use crate::paths::{PathGoal, PathSearch};
use crate::stop::Clock;
use crate::subsystem::{self, SmallChain};
use crate::{explain, Request, SubsystemKind};
use augur_check::{check_str, CheckOptions, Format, LoadOptions, Model, Scalar};
use augur_dtmc::{Dtmc, DtmcBuilder, StateSet};
use proptest::prelude::*;

fn chain(n: usize, edges: &[(u32, u32, f64)], target: &[usize]) -> Dtmc {
    let mut b = DtmcBuilder::new(n);
    for &(s, t, p) in edges {
        b.add_transition(s, t, p).unwrap();
    }
    b.add_initial(0).unwrap();
    for &t in target {
        b.add_label_state("goal", t as u32).unwrap();
    }
    b.build().unwrap().0
}

fn set(n: usize, states: &[usize]) -> StateSet {
    let mut s = StateSet::with_capacity(n);
    for &x in states {
        s.insert(x);
    }
    s
}

/// 0 loops with 1/2, goes to the goal 1 with 3/10 and to the trap 2 with 1/5: the k-th most
/// probable path is `0^k 1`, of probability (1/2)^k · 3/10; P(F goal) = 3/10 / (1 − 1/2) = 3/5.
fn loop_chain() -> Dtmc {
    chain(
        3,
        &[
            (0, 0, 0.5),
            (0, 1, 0.3),
            (0, 2, 0.2),
            (1, 1, 1.0),
            (2, 2, 1.0),
        ],
        &[1],
    )
}

#[test]
fn paths_of_a_loop_are_exact() {
    let d = loop_chain();
    let psi = set(3, &[1]);
    let f = PathGoal {
        phi: None,
        psi: &psi,
        bound: None,
    };
    let mut s = PathSearch::new(&d, &d.transpose(), f, 0);
    for k in 0..20u32 {
        let p = s.next_path().unwrap().unwrap();
        let mut expected = vec![0u32; k as usize + 1];
        expected.push(1);
        assert_eq!(p.states, expected);
        let exact = 0.5f64.powi(k as i32) * 0.3;
        assert!(
            (p.probability - exact).abs() <= 1e-15 * exact,
            "{k}: {}",
            p.probability
        );
    }
}

#[test]
fn bounded_paths_count_steps() {
    let d = loop_chain();
    let psi = set(3, &[1]);
    let f = PathGoal {
        phi: None,
        psi: &psi,
        bound: Some(2),
    };
    let mut s = PathSearch::new(&d, &d.transpose(), f, 0);
    let a = s.next_path().unwrap().unwrap();
    let b = s.next_path().unwrap().unwrap();
    assert_eq!((a.states, a.probability), (vec![0, 1], 0.3));
    assert_eq!((b.states, b.probability), (vec![0, 0, 1], 0.15));
    // A third would need 3 steps.
    assert_eq!(s.next_path().unwrap(), None);
}

#[test]
fn paths_stay_in_phi_and_stop_at_the_first_psi_state() {
    // 0 → 1 (0.5) | 2 (0.5); 1 → 3; 2 → 3; 3 → 4 (goal too, but after 3). φ excludes 2.
    let d = chain(
        5,
        &[
            (0, 1, 0.5),
            (0, 2, 0.5),
            (1, 3, 1.0),
            (2, 3, 1.0),
            (3, 4, 1.0),
            (4, 4, 1.0),
        ],
        &[3, 4],
    );
    let (phi, psi) = (set(5, &[0, 1, 3, 4]), set(5, &[3, 4]));
    let f = PathGoal {
        phi: Some(&phi),
        psi: &psi,
        bound: None,
    };
    let mut s = PathSearch::new(&d, &d.transpose(), f, 0);
    let p = s.next_path().unwrap().unwrap();
    assert_eq!((p.states, p.probability), (vec![0, 1, 3], 0.5));
    assert_eq!(s.next_path().unwrap(), None);
}

fn prism(text: &str) -> Model {
    Model::from_text("t.pm", text, Format::Prism, &LoadOptions::default()).unwrap()
}

const LOOP_PM: &str = "dtmc
module m
  s : [0..2] init 0;
  [] s=0 -> 0.5:(s'=0) + 0.3:(s'=1) + 0.2:(s'=2);
  [] s>0 -> true;
endmodule
label \"goal\" = s=1;";

#[test]
fn paths_needed_to_exceed_the_threshold() {
    // Cumulative mass after n paths: 0.6·(1 − 0.5^n): 0.3, 0.45, 0.525 > 0.5.
    let m = prism(LOOP_PM);
    let e = explain(&m, &Request::new("P<=0.5 [ F \"goal\" ]", 2))
        .unwrap()
        .explanation;
    assert_eq!(e.violated, Some(true));
    assert!((e.value - 0.6).abs() < 1e-12);
    assert_eq!(e.paths.len(), 2);
    assert!((e.paths[1].cumulative - 0.45).abs() < 1e-15);
    assert_eq!(e.paths[1].states.refs()[1].name, "state 0 (s=0)");
    assert_eq!(e.paths_to_exceed, Some(3));
    // `<` counts a mass equal to the threshold: 0.3 ≥ 0.3 after 1 path (`<=`: 2 paths).
    let e = explain(&m, &Request::new("P<0.3 [ F \"goal\" ]", 1))
        .unwrap()
        .explanation;
    assert_eq!(e.paths_to_exceed, Some(1));
    let e = explain(&m, &Request::new("P<=0.3 [ F \"goal\" ]", 1))
        .unwrap()
        .explanation;
    assert_eq!(e.paths_to_exceed, Some(2));
    // A property that holds has no counterexample.
    let e = explain(&m, &Request::new("P<=0.7 [ F \"goal\" ]", 3))
        .unwrap()
        .explanation;
    assert_eq!((e.violated, e.paths_to_exceed), (Some(false), None));
}

#[test]
fn subsystems_of_the_loop() {
    // {0, 1} already has everything: P = 0.6 > 0.5; {0} alone has nothing.
    let m = prism(LOOP_PM);
    for kind in [SubsystemKind::Heuristic, SubsystemKind::Minimal] {
        let mut r = Request::new("P<=0.5 [ F s=1 ]", 1);
        r.subsystem = Some(kind);
        let x = explain(&m, &r).unwrap();
        let s = x.explanation.subsystem.clone().unwrap();
        assert_eq!(s.size, 2);
        assert!(s.exceeds && (s.probability.value - 0.6).abs() < 1e-12);
        let mut text = Vec::new();
        x.write_prism(&m, &mut text).unwrap().unwrap();
        let text = String::from_utf8(text).unwrap();
        let sub = prism(&text);
        let r = check_str(sub.dtmc(), "P=? [ F s=1 ]");
        // The exported model keeps the variable `s`: the property means the same there.
        let back = augur_check::CheckSession::new(&sub, CheckOptions::default())
            .check_str("P=? [ F s=1 ]")
            .unwrap();
        assert!(r.is_ok());
        assert_eq!(back.value, Scalar::Num(0.6));
    }
}

#[test]
fn reward_contributions_sum_to_the_expected_reward() {
    // Knuth–Yao die: 11/3 expected coin flips.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/die.json");
    let m = Model::load(&path, &LoadOptions::default()).unwrap();
    let mut r = Request::new("R{\"coin_flips\"}<=3 [ F \"done\" ]", 3);
    r.max_paths = 2000;
    let e = explain(&m, &r).unwrap().explanation;
    assert!((e.value - 11.0 / 3.0).abs() < 1e-9);
    assert_eq!(e.violated, Some(true));
    let c = e.rewards.unwrap();
    assert!((c.total - 11.0 / 3.0).abs() < 1e-9, "{}", c.total);
    // The first flip is made once, always: its contribution is 1.
    assert_eq!(c.states[0].visits, 1.0);
    // Paths: each weight is probability × flips; the most probable paths take 3 flips with
    // probability 1/8 each (weight 3/8).
    assert_eq!(e.paths[0].reward, Some(3.0));
    assert_eq!(e.paths[0].weight, Some(0.375));
}

#[test]
fn unsupported_properties_are_located() {
    let m = prism(LOOP_PM);
    let err = explain(&m, &Request::new("P>=0.5 [ F s=1 ]", 1))
        .err()
        .unwrap();
    let d = err.diagnostic();
    assert!(d.message.contains("upper bound"), "{}", d.message);
    assert_eq!(d.location.unwrap().column, 1);
    let err = explain(&m, &Request::new("P=? [ G s=0 ]", 1))
        .err()
        .unwrap();
    assert!(err.diagnostic().location.is_some());
}

/// The flows of [`subsystem::ranking`], derived by hand: on an acyclic chain, the probability
/// of the paths through each state; with a cycle, expected visits × probability to go on.
#[test]
fn flows_are_visits_times_values() {
    // 0 → 2 (0.3) | 1 (0.5) | 3 (0.2); 1 → 2 (0.4) | 3 (0.6); 2 the goal, 3 a trap.
    let mut b = DtmcBuilder::new(4);
    for (s, t, p) in [
        (0, 2, 0.3),
        (0, 1, 0.5),
        (0, 3, 0.2),
        (1, 2, 0.4),
        (1, 3, 0.6),
    ] {
        b.add_transition(s, t, p).unwrap();
    }
    b.add_transition(2, 2, 1.0).unwrap();
    b.add_transition(3, 3, 1.0).unwrap();
    b.add_initial(0).unwrap();
    b.add_label_state("goal", 2).unwrap();
    let d = b.build().unwrap().0;
    let psi = goal(&d);
    let f = PathGoal {
        phi: None,
        psi: &psi,
        bound: None,
    };
    let values = [0.5, 0.4, 1.0, 0.0];
    let got = subsystem::flows(&d, &d.transpose(), &f, 0, &values, &Clock::unlimited()).unwrap();
    // The goal is reached with 0.3 + 0.5·0.4 = 0.5; the paths through 1 carry 0.5·0.4 = 0.2;
    // the trap cannot help and is not ranked.
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], (0, 1.0));
    assert_eq!(got[1].0, 2);
    assert!((got[1].1 - 0.5).abs() < 1e-15);
    assert_eq!(got[2].0, 1);
    assert!((got[2].1 - 0.2).abs() < 1e-15);

    // A cycle: 0 → 0 (0.5) | 1 (0.25) | 2 (0.25); 1 → 0; 2 the goal. Visits ξ0 = 1 + 0.5·ξ0
    // + ξ1 and ξ1 = 0.25·ξ0, so ξ0 = 4 and ξ1 = 1; the goal is reached with 0.25·4 = 1.
    let mut b = DtmcBuilder::new(3);
    for (s, t, p) in [
        (0, 0, 0.5),
        (0, 1, 0.25),
        (0, 2, 0.25),
        (1, 0, 1.0),
        (2, 2, 1.0),
    ] {
        b.add_transition(s, t, p).unwrap();
    }
    b.add_initial(0).unwrap();
    b.add_label_state("goal", 2).unwrap();
    let d = b.build().unwrap().0;
    let psi = goal(&d);
    let f = PathGoal {
        phi: None,
        psi: &psi,
        bound: None,
    };
    // Values of 1 everywhere (the goal is certain); 1's flow is then its visits.
    let got = subsystem::flows(
        &d,
        &d.transpose(),
        &f,
        0,
        &[1.0, 1.0, 1.0],
        &Clock::unlimited(),
    )
    .unwrap();
    let flow = |s: u32| got.iter().find(|x| x.0 == s).unwrap().1;
    assert!((flow(1) - 1.0).abs() < 1e-9, "{got:?}");
    assert!((flow(2) - 1.0).abs() < 1e-9, "{got:?}");
}

/// A random chain: `n` states, each with 1 to 3 successors of random weights; the goal is
/// the last state (absorbing), a trap the one before (absorbing).
fn random_chain() -> impl Strategy<Value = Dtmc> {
    (3usize..=20)
        .prop_flat_map(|n| {
            let rows = proptest::collection::vec(
                proptest::collection::vec((0..n as u32, 1u32..10), 1..=3),
                n,
            );
            (Just(n), rows)
        })
        .prop_map(|(n, rows)| {
            let mut b = DtmcBuilder::new(n);
            for (s, row) in rows.iter().enumerate() {
                if s + 2 >= n {
                    b.add_transition(s as u32, s as u32, 1.0).unwrap();
                    continue;
                }
                let total: u32 = row.iter().map(|(_, w)| w).sum();
                let mut merged = std::collections::BTreeMap::new();
                for &(t, w) in row {
                    *merged.entry(t).or_insert(0) += w;
                }
                for (t, w) in merged {
                    b.add_transition(s as u32, t, f64::from(w) / f64::from(total))
                        .unwrap();
                }
            }
            b.add_initial(0).unwrap();
            b.add_label_state("goal", n as u32 - 1).unwrap();
            b.build().unwrap().0
        })
}

fn goal(d: &Dtmc) -> StateSet {
    d.label("goal").unwrap().clone()
}

fn true_probability(d: &Dtmc) -> f64 {
    match check_str(d, "P=? [ F \"goal\" ]").unwrap().value {
        Scalar::Num(x) => x,
        v => panic!("{v:?}"),
    }
}

/// Every subset of the relevant states containing the start, by size: the smallest size whose
/// sub-chain exceeds the threshold.
fn exhaustive_minimum(chain: &SmallChain, exceeds: &dyn Fn(f64) -> bool) -> Option<u32> {
    let m = chain.len() as u32;
    let mut best: Option<u32> = None;
    for mask in 0u32..(1 << m) {
        if mask & 1 == 0 {
            continue;
        }
        let size = mask.count_ones();
        if best.is_some_and(|b| size >= b) {
            continue;
        }
        if exceeds(chain.mass(mask).unwrap()) {
            best = Some(size);
        }
    }
    best
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Disjoint paths: the mass of the most probable paths never exceeds the probability the
    /// checker computes, and they come in order.
    #[test]
    fn path_mass_is_at_most_the_probability(d in random_chain(), k in 1usize..200) {
        let psi = goal(&d);
        let f = PathGoal { phi: None, psi: &psi, bound: None };
        let mut s = PathSearch::new(&d, &d.transpose(), f, 0);
        let (mut mass, mut last) = (0.0, 1.0f64);
        for _ in 0..k {
            let Some(p) = s.next_path().unwrap() else { break };
            prop_assert!(p.probability <= last * (1.0 + 1e-12));
            last = p.probability;
            mass += p.probability;
        }
        prop_assert!(mass <= true_probability(&d) + 1e-12);
    }

    /// The heuristic's subsystem, re-checked by the checker on its own (exported and read back),
    /// exceeds the threshold.
    #[test]
    fn heuristic_subsystem_exceeds(d in random_chain(), fraction in 0.05f64..0.95) {
        let p = true_probability(&d);
        prop_assume!(p > 1e-6);
        let theta = p * fraction;
        let psi = goal(&d);
        let f = PathGoal { phi: None, psi: &psi, bound: None };
        let exceeds = |x: f64| x > theta;
        let values = match check_str(&d, "P=? [ F \"goal\" ]").unwrap().states {
            augur_check::StateValues::Num(v) => v.values,
            v => panic!("{v:?}"),
        };
        let s = subsystem::grow(&d, &d.transpose(), f, 0, &values, &exceeds, &CheckOptions::default())
            .unwrap()
            .expect("a subsystem");
        let sub = subsystem::restrict(&d, &s.states, &f).unwrap();
        let mut text = Vec::new();
        augur_formats::prism_export::write_prism(&sub.for_export(), &mut text).unwrap();
        let back = prism(&String::from_utf8(text).unwrap());
        let r = check_str(back.dtmc(), "P=? [ F \"goal\" ]").unwrap();
        let lo = r.bounds.map_or(0.0, |b| b.lo);
        prop_assert!(lo > theta, "{lo} <= {theta}");
        prop_assert!(s.states.len() <= d.num_states());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

    /// `--minimal` finds the size an exhaustive search over all subsets finds, and its set
    /// exceeds the threshold when checked by the checker.
    #[test]
    fn minimal_matches_exhaustive_search(d in random_chain(), fraction in 0.05f64..0.95) {
        let p = true_probability(&d);
        prop_assume!(p > 1e-6);
        let theta = p * fraction;
        let psi = goal(&d);
        let f = PathGoal { phi: None, psi: &psi, bound: None };
        let exceeds = |x: f64| x > theta;
        let t = d.transpose();
        let chain = SmallChain::new(&d, &t, &f, 0, 20).unwrap().unwrap();
        let expected = exhaustive_minimum(&chain, &exceeds);
        let found = subsystem::minimal(&d, &t, f, 0, &exceeds, &CheckOptions::default(), usize::MAX).unwrap();
        prop_assert_eq!(found.as_ref().map(|s| s.states.len() as u32), expected);
        if let Some(s) = found {
            prop_assert!(s.probability.lo > theta);
        }
    }
}

/// Issue 43: K paths around a loop share their prefixes (memory linear in K, not K²), carry
/// their probabilities in log space (none is 0), and the listing's limits are errors.
#[test]
fn many_paths_share_their_prefixes_and_keep_their_logarithms() {
    let m = prism(LOOP_PM);
    let k = 2000;
    let mut r = Request::new("P=? [ F \"goal\" ]", k);
    r.max_listed_states = None;
    let e = explain(&m, &r).unwrap().explanation;
    assert_eq!(e.paths.len(), k);
    // Path i (from 1) is 0^i 1: probability 0.3 · 0.5^(i−1).
    for (i, p) in e.paths.iter().enumerate() {
        let want = 0.3f64.log10() + i as f64 * 0.5f64.log10();
        assert!(
            (p.log10_probability - want).abs() < 1e-9 * want.abs().max(1.0),
            "{i}"
        );
        assert_eq!(p.states.len(), i + 2);
    }
    // 0.3 · 2^−1999 is below the smallest double; its logarithm is not.
    let last = &e.paths[k - 1];
    assert_eq!(last.probability, 0.0);
    assert!(
        last.log10_probability < -602.0,
        "{}",
        last.log10_probability
    );
    let mut want = vec![0u32; k];
    want.push(1);
    assert_eq!(last.states.indices(), want);
    // The 2000 paths list 2,003,000 states; their tree keeps one node per prefix.
    let tree = last.states.tree();
    assert!(tree.len() <= 2 * k + 1, "{} nodes", tree.len());
    // A document lists at most MAX_LISTED_STATES states: the same request with the default is
    // refused, naming the option.
    let Err(err) = explain(&m, &Request::new("P=? [ F \"goal\" ]", k)) else {
        panic!("a document of 2,003,000 states")
    };
    let text = err.to_string();
    assert!(matches!(err, crate::ExplainError::Budget { .. }), "{text}");
    assert!(
        text.contains("--paths") && text.contains("2003000"),
        "{text}"
    );
    // And no more than MAX_LISTED_PATHS paths are listed at all.
    let Err(err) = explain(
        &m,
        &Request::new("P=? [ F \"goal\" ]", crate::MAX_LISTED_PATHS + 1),
    ) else {
        panic!("10,001 paths")
    };
    let err = err.to_string();
    assert!(
        err.contains("--paths 10001") && err.contains("10000"),
        "{err}"
    );
}

fn cancelled() -> augur_check::Limits {
    let l = augur_check::Limits::default();
    l.cancel();
    l
}

fn is_cancelled<T: std::fmt::Debug>(r: crate::Result<T>) -> bool {
    matches!(
        r,
        Err(crate::ExplainError::Check(
            augur_check::CheckError::Stopped(augur_check::Stop::Cancelled)
        ))
    )
}

/// Issue 43: every search honours the cancellation flag (Ctrl-C in Python, a cancelled MCP
/// request) and the time limit: the path search, the exact minimum, the heuristic's ranking
/// and the reward propagation.
#[test]
fn every_search_stops_when_cancelled() {
    let d = loop_chain();
    let t = d.transpose();
    let psi = set(3, &[1]);
    let f = PathGoal {
        phi: None,
        psi: &psi,
        bound: None,
    };
    let mut s = PathSearch::new(&d, &t, f, 0).with_limits(&cancelled());
    let mut r = Ok(None);
    for _ in 0..5000 {
        r = s.next_found();
        if r.is_err() {
            break;
        }
    }
    assert!(is_cancelled(r));
    let options = CheckOptions {
        limits: cancelled(),
        ..CheckOptions::default()
    };
    let exceeds = |x: f64| x > 0.1;
    assert!(is_cancelled(subsystem::minimal(
        &d, &t, f, 0, &exceeds, &options, 1000
    )));
    assert!(is_cancelled(subsystem::grow(
        &d,
        &t,
        f,
        0,
        &[0.6, 1.0, 0.0],
        &exceeds,
        &options
    )));
    let mut rewarded = d.clone();
    rewarded.rewards.push(augur_dtmc::RewardStructure {
        name: Some("r".into()),
        state: Some(vec![1.0; 3]),
        transition: None,
        exact: None,
    });
    assert!(is_cancelled(crate::rewards::contributions(
        &rewarded,
        &t,
        &rewarded.rewards[0],
        &psi,
        0,
        crate::rewards::Propagation::default(),
        &options.limits
    )));
}

/// Issue 43: a step bound of a billion on a small chain: the exact search's mass stops at the
/// fixed point of the bounded iteration (the unbounded value, 0.6) instead of taking a billion
/// steps per subset.
#[test]
fn a_huge_step_bound_ends_at_the_fixed_point() {
    let d = loop_chain();
    let t = d.transpose();
    let psi = set(3, &[1]);
    let f = PathGoal {
        phi: None,
        psi: &psi,
        bound: Some(1_000_000_000),
    };
    let chain = SmallChain::new(&d, &t, &f, 0, 20).unwrap().unwrap();
    let all = (1u32 << chain.len()) - 1;
    assert!((chain.mass(all).unwrap() - 0.6).abs() < 1e-15);
}

const MISSED_PM: &str = "dtmc
module m
  s : [0..3] init 0;
  [] s=0 -> 0.5:(s'=1) + 0.5:(s'=2);
  [] s=1 -> (s'=3);
  [] s=2 -> (s'=2);
  [] s=3 -> true;
endmodule
rewards \"r\"
  true : 1;
endrewards
label \"goal\" = s=3;";

const OVERFLOW_PM: &str = "dtmc
module m
  s : [0..1] init 0;
  [] s=0 -> 0.5:(s'=0) + 0.5:(s'=1);
  [] s=1 -> true;
endmodule
rewards \"r\"
  s=0 : 1e308;
endrewards
label \"goal\" = s=1;";

/// Issue 43: an infinite expected reward is explained by what makes it infinite: ψ missed
/// with probability 1/2 (into the trap 2), or, with ψ reached almost surely (2 expected visits
/// of a state earning 1e308), a sum past the largest double; never a NaN share.
#[test]
fn an_infinite_reward_is_explained_by_its_cause() {
    let e = explain(
        &prism(MISSED_PM),
        &Request::new("R{\"r\"}<=3 [ F \"goal\" ]", 2),
    )
    .unwrap()
    .explanation;
    assert_eq!(e.value, f64::INFINITY);
    let r = e.rewards.as_ref().unwrap();
    assert_eq!(r.infinite, Some("missed"));
    assert_eq!(r.missed, 0.5);
    assert_eq!(r.missed_into[0].state.index, 2);
    // The contributions while ψ can be reached: state 0 once, state 1 half the time.
    assert_eq!(r.total, 1.5);
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("missed with probability 0.5")),
        "{:?}",
        e.notes
    );
    let e = explain(
        &prism(OVERFLOW_PM),
        &Request::new("R{\"r\"}<=3 [ F \"goal\" ]", 2),
    )
    .unwrap()
    .explanation;
    assert_eq!(e.value, f64::INFINITY);
    let r = e.rewards.as_ref().unwrap();
    assert_eq!(r.infinite, Some("overflow"));
    assert_eq!(r.missed, 0.0);
    assert!((r.states[0].visits - 2.0).abs() < 1e-12);
    assert_eq!(r.states[0].share, None);
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("reached with probability 1")),
        "{:?}",
        e.notes
    );
    let json = serde_json::to_string(&e).unwrap();
    assert!(
        !json.contains("NaN") && !json.contains("missed with positive"),
        "{json}"
    );
}
