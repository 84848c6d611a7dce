//! Unit tests of the checker. Expected values are closed forms derived in the comments, or
//! PRISM's own regression results (`shared/prism-tests`, quoted with the property). Formulas
//! are written as text and go through the parser and the resolver, as a user's would.

use crate::error::CheckError;
use crate::result::{Bounds, CheckResult, InitialFilter, Scalar, StateValues};
use crate::{check_str, CheckOptions, CheckSession, Constants, Method, Model, Properties};
use augur_dtmc::{Dtmc, Matrix, RewardStructure, StateSet};
use proptest::prelude::*;

// ---------- helpers ----------

fn matrix(n: usize, edges: &[(u32, u32, f64)]) -> Matrix {
    let mut tri = sprs::TriMatI::<f64, u32>::new((n, n));
    for &(s, t, p) in edges {
        tri.add_triplet(s as usize, t as usize, p);
    }
    tri.to_csr()
}

/// A DTMC whose single variable `s` equals the state index.
fn chain(n: usize, edges: &[(u32, u32, f64)]) -> Dtmc {
    super::test_support::indexed(matrix(n, edges))
}

fn res(d: &Dtmc, text: &str) -> CheckResult {
    check_str(d, text).unwrap_or_else(|e| panic!("{text}: {}", e.diagnostic()))
}

/// The value reported for a property (at the initial state).
fn value(d: &Dtmc, text: &str) -> f64 {
    match res(d, text).value {
        Scalar::Num(v) => v,
        Scalar::Bool(b) => panic!("{text}: expected a number, got {b}"),
    }
}

/// The value of every state.
fn nums(d: &Dtmc, text: &str) -> Vec<f64> {
    match res(d, text).states {
        StateValues::Num(n) => n.values,
        StateValues::Bool(_) => panic!("{text}: expected numbers"),
    }
}

/// The states where a boolean property holds.
fn holds(d: &Dtmc, text: &str) -> Vec<usize> {
    match res(d, text).states {
        StateValues::Bool(s) => s.ones().collect(),
        StateValues::Num(_) => panic!("{text}: expected a truth value"),
    }
}

fn error(d: &Dtmc, text: &str) -> CheckError {
    match check_str(d, text) {
        Ok(r) => panic!("{text} was checked: {r:?}"),
        Err(e) => e,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + b.abs()) || (a.is_infinite() && a == b)
}

// ---------- PRISM's bounded-reach-1: s = 0 → 1 → 2 → 3 → 4 ⟲ ----------

fn bounded_reach_1() -> Dtmc {
    chain(
        5,
        &[
            (0, 1, 1.0),
            (1, 2, 1.0),
            (2, 3, 1.0),
            (3, 4, 1.0),
            (4, 4, 1.0),
        ],
    )
}

#[test]
fn prism_bounded_reach_1_globally_finally_until_release() {
    let d = bounded_reach_1();
    // (property, PRISM's RESULT) from bounded-reach-1.prism.props.
    let cases: &[(&str, f64)] = &[
        ("P=? [ G<1 s<2 ]", 1.0),
        ("P=? [ G<2 s<2 ]", 1.0),
        ("P=? [ G<3 s<2 ]", 0.0),
        ("P=? [ G<=0 s<2 ]", 1.0),
        ("P=? [ G<=1 s<2 ]", 1.0),
        ("P=? [ G<=2 s<2 ]", 0.0),
        ("P=? [ G>0 s>2 ]", 0.0),
        ("P=? [ G>1 s>2 ]", 0.0),
        ("P=? [ G>2 s>2 ]", 1.0),
        ("P=? [ G>=2 s>2 ]", 0.0),
        ("P=? [ G>=3 s>2 ]", 1.0),
        ("P=? [ G[1,3] (s=1 | s=2 | s=3) ]", 1.0),
        ("P=? [ G[1,3] (s=1 | s=3) ]", 0.0),
        ("P=? [ G=3 s=3 ]", 1.0),
        ("P=? [ G=3 s=2 ]", 0.0),
        ("P=? [ F<1 s=2 ]", 0.0),
        ("P=? [ F<2 s=2 ]", 0.0),
        ("P=? [ F<3 s=2 ]", 1.0),
        ("P=? [ F<=1 s=2 ]", 0.0),
        ("P=? [ F<=2 s=2 ]", 1.0),
        ("P=? [ F>1 s=2 ]", 1.0),
        ("P=? [ F>2 s=2 ]", 0.0),
        ("P=? [ F>=2 s=2 ]", 1.0),
        ("P=? [ F>=3 s=2 ]", 0.0),
        ("P=? [ F[1,3] s=0 ]", 0.0),
        ("P=? [ F[1,3] s=3 ]", 1.0),
        ("P=? [ F[1,3] s=4 ]", 0.0),
        ("P=? [ F=2 s=1 ]", 0.0),
        ("P=? [ F=2 s=2 ]", 1.0),
        ("P=? [ s<2 U=2 s=2 ]", 1.0),
        ("P=? [ s<1 U=2 s=2 ]", 0.0),
        ("P=? [ s<2 U>2 s=2 ]", 0.0),
        ("P=? [ s<2 U>=2 s=2 ]", 1.0),
        ("P=? [ false U>=0 true ]", 1.0),
        ("P=? [ false U>0 true ]", 0.0),
        ("P=? [ true U>=3 s=4 ]", 1.0),
        ("P=? [ true U>=3 s=2 ]", 0.0),
        ("P=? [ false U>=0 s=0 ]", 1.0),
        ("P=? [ false U>0 s=0 ]", 0.0),
        ("P=? [ s=1 U>1 true ]", 0.0),
        ("P=? [ s<3 U>3 true ]", 0.0),
        ("P=? [ s<3 U>=3 true ]", 1.0),
        ("P=? [ s<3 U[4,10] true ]", 0.0),
        ("P=? [ s<3 U[3,10] true ]", 1.0),
        ("P=? [ s<4 U[3,4] s<4 ]", 1.0),
        ("P=? [ s<4 U[4,4] s<4 ]", 0.0),
        ("P=? [ s!=3 U[3,3] s=3 ]", 1.0),
        ("P=? [ s!=3 U[4,4] s=3 ]", 0.0),
        ("P=? [ s!=3 U[1,2] s=3 ]", 0.0),
        ("P=? [ s!=3 U[2,3] s=3 ]", 1.0),
        ("P=? [ s!=3 U[1,3] s=3 ]", 1.0),
        ("P=? [ s!=3 U[4,6] s=3 ]", 0.0),
        ("P=? [ s!=3 U[3,6] s=3 ]", 1.0),
        ("P=? [ false R<3 s<3 ]", 1.0),
        ("P=? [ false R<=3 s<3 ]", 0.0),
        ("P=? [ false R=3 s=3 ]", 1.0),
        ("P=? [ false R=3 s!=3 ]", 0.0),
        ("P=? [ false R>=1 true ]", 1.0),
        ("P=? [ false R<1 false ]", 0.0),
        ("P=? [ true R<1 false ]", 0.0),
        ("P=? [ true R>1 false ]", 1.0),
        ("P=? [ s=4 R>1 s>1 ]", 1.0),
        ("P=? [ s=4 R>1 s>2 ]", 0.0),
        ("P=? [ s=4 R[1,3] (s>=1 & s<=3) ]", 1.0),
        ("P=? [ s=4 R[1,3] (s>=1 & s<3) ]", 0.0),
        ("P=? [ s=3 R[1,4] (s>=1 & s<=3) ]", 1.0),
        ("P=? [ s=3 R[1,4] (s>=1 & s<3) ]", 0.0),
    ];
    for (text, want) in cases {
        let got = value(&d, text);
        assert!(close(got, *want), "{text}: got {got}, PRISM says {want}");
    }
}

#[test]
fn prism_bounded_reach_1_errors() {
    // PRISM's regression tests expect errors for these; they are located in the property.
    let d = bounded_reach_1();
    for text in [
        "P=? [ G<0 s=1 ]",
        "P=? [ G[1,0] true ]",
        "P=? [ G[-1,1] true ]",
        "P=? [ F<0 s=2 ]",
    ] {
        let e = error(&d, text);
        assert!(
            matches!(e, CheckError::Input(_)) && e.location().is_some(),
            "{text}: {e:?}"
        );
    }
}

#[test]
fn step_bounds_name_constants() {
    // PRISM: `const int k = 2; P=? [ G=(k) (s=2) ]` is 1.
    let d = bounded_reach_1();
    let mut s = CheckSession::for_dtmc(&d, CheckOptions::default())
        .with_constants(&Constants::parse("k=2").unwrap());
    assert_eq!(
        s.check_str("P=? [ G=(k) (s=2) ]").unwrap().value,
        Scalar::Num(1.0)
    );
}

// ---------- issue 9: one validation site ----------

#[test]
fn the_checker_takes_resolved_bounds_only() {
    // A step bound from a constant must be an integer, as a literal one (the checker used to
    // accept k = 3.0); a threshold from a constant is checked with the literal's message.
    let d = bounded_reach_1();
    let with = |c: &str, p: &str| {
        CheckSession::for_dtmc(&d, CheckOptions::default())
            .with_constants(&Constants::parse(c).unwrap())
            .check_str(p)
    };
    let lit = error(&d, "P=? [ F<=3.0 s=3 ]");
    let named = with("k=3.0", "P=? [ F<=k s=3 ]").unwrap_err();
    assert_eq!(lit.to_string(), "step bound must be an integer, found 3.0");
    assert_eq!(named.to_string(), lit.to_string());
    assert_eq!(named.location().map(|l| l.column), Some(10));
    assert_eq!(
        with("k=3", "P=? [ F<=k s=3 ]").unwrap().value,
        Scalar::Num(1.0)
    );
    let lit = error(&d, "P>=1.5 [ F s=3 ]");
    let named = with("p=1.5", "P>=p [ F s=3 ]").unwrap_err();
    assert_eq!(lit.to_string(), "probability bound 1.5 is outside [0, 1]");
    assert_eq!(named.to_string(), lit.to_string());
    // Both render with a caret under the bound.
    assert_eq!(
        named.diagnostic().to_string(),
        "error: probability bound 1.5 is outside [0, 1]\n --> <property>:1:4\n  |\n1 | P>=p [ F s=3 ]\n  |    ^\n"
    );
}

// ---------- a 3-state chain with closed forms ----------

/// 0 → 0 (1/2), 1 (1/4), 2 (1/4); 1 and 2 absorbing. "goal" = {1}.
fn lazy() -> Dtmc {
    let mut d = chain(
        3,
        &[
            (0, 0, 0.5),
            (0, 1, 0.25),
            (0, 2, 0.25),
            (1, 1, 1.0),
            (2, 2, 1.0),
        ],
    );
    let mut goal = StateSet::with_capacity(3);
    goal.insert(1);
    d.labels.push(("goal".into(), goal));
    d.rewards.push(RewardStructure {
        name: Some("time0".into()),
        state: Some(vec![1.0, 0.0, 0.0]),
        transition: None,
        exact: None,
    });
    d
}

#[test]
fn lazy_chain_probabilities() {
    let d = lazy();
    // X goal = 1/4 from 0.
    assert!(close(value(&d, "P=? [ X \"goal\" ]"), 0.25));
    // F goal: x = 1/2 x + 1/4 ⇒ x = 1/2.
    assert!(close(value(&d, "P=? [ F \"goal\" ]"), 0.5));
    for k in 0..8i32 {
        // F≤k goal = Σ_{i<k} (1/2)^i / 4 = (1 − 2^−k)/2; G≤k ¬goal is its complement.
        let want = (1.0 - 0.5f64.powi(k)) / 2.0;
        assert!(
            close(value(&d, &format!("P=? [ F<={k} \"goal\" ]")), want),
            "F<={k}"
        );
        let g = format!("P=? [ G<={k} !\"goal\" ]");
        assert!(close(value(&d, &g), 1.0 - want), "G<={k}");
        // F=k goal: goal is absorbing, so P(X_k ∈ goal) = (1 − 2^−k)/2 as well.
        assert!(
            close(value(&d, &format!("P=? [ F={k} \"goal\" ]")), want),
            "F={k}"
        );
        // s=0 U>=k goal: positions 0..k−1 in state 0 (prob (1/2)^(k−1) for the moves
        // 1..k−1), then from X_k the value of s=0 U goal: 1/2·1/2 (X_k = 0) + 1/4·1 (goal) = 1/2;
        // so 2^−k for k ≥ 1, and plain until (1/2) for k = 0.
        let want_u = if k == 0 { 0.5 } else { 0.5f64.powi(k) };
        let u = format!("P=? [ s=0 U>={k} \"goal\" ]");
        assert!(close(value(&d, &u), want_u), "U>={k}");
        // G>=k (s=0 | goal) = 1 − P(F>=k state 2); state 2 is absorbing and reached with
        // probability 1/2 (at any time), so P(X_i = 2 for some i ≥ k) = 1/2 for every k.
        let gk = format!("P=? [ G>={k} (s=0 | \"goal\") ]");
        assert!(close(value(&d, &gk), 0.5), "G>={k}");
    }
    // W and G unbounded: s=0 W goal = P(never reach 2) = 1/2; G s=0 = 0.
    assert!(close(value(&d, "P=? [ s=0 W \"goal\" ]"), 0.5));
    assert!(close(value(&d, "P=? [ G s=0 ]"), 0.0));
    // s=0 W<=k goal: goal by step k through 0, or still in 0 at step k:
    // (1 − 2^−k)/2 + 2^−k.
    for k in 0..6i32 {
        let want = (1.0 - 0.5f64.powi(k)) / 2.0 + 0.5f64.powi(k);
        let w = format!("P=? [ s=0 W<={k} \"goal\" ]");
        assert!(close(value(&d, &w), want), "W<={k}");
    }
}

#[test]
fn lazy_chain_rewards() {
    let d = lazy();
    // Reward 1 per step spent in 0: expected visits to 0 = 1/(1 − 1/2) = 2.
    assert!(close(value(&d, "R{\"time0\"}=? [ F !s=0 ]"), 2.0));
    assert!(close(value(&d, "R{\"time0\"}=? [ C ]"), 2.0));
    // F goal has probability 1/2 < 1: infinite.
    assert_eq!(value(&d, "R{\"time0\"}=? [ F \"goal\" ]"), f64::INFINITY);
    for k in 0..8i32 {
        let half = 0.5f64;
        // C≤k = Σ_{i<k} 2^−i = 2(1 − 2^−k); I=k = 2^−k.
        let c = value(&d, &format!("R{{\"time0\"}}=? [ C<={k} ]"));
        assert!(close(c, 2.0 * (1.0 - half.powi(k))));
        let i = value(&d, &format!("R{{\"time0\"}}=? [ I={k} ]"));
        assert!(close(i, half.powi(k)));
        // Discounted d = 0.9: Σ_{i<k} (0.45)^i.
        let dc = value(&d, &format!("R{{\"time0\"}}=? [ C{{discount=0.9}}<={k} ]"));
        assert!(close(dc, (1.0 - 0.45f64.powi(k)) / 0.55));
    }
    // Discounted total: v0 = 1 + 0.45 v0 = 1/0.55, with sound bounds around it.
    let dt = "R{\"time0\"}=? [ C{discount=0.9} ]";
    let Bounds { lo, hi } = res(&d, dt).bounds.unwrap();
    assert!(lo <= 1.0 / 0.55 && 1.0 / 0.55 <= hi);
    assert!(close(value(&d, dt), 1.0 / 0.55) || (hi - lo) < 1e-5);
    // Long-run: every state ends in a BSCC without reward: 0. Time T=?[F !s=0] = 2.
    assert!(close(value(&d, "R{\"time0\"}=? [ S ]"), 0.0));
    assert!(close(value(&d, "T=? [ F !s=0 ]"), 2.0));
    // S=? [goal] = P(F goal) = 1/2.
    assert!(close(value(&d, "S=? [ \"goal\" ]"), 0.5));
}

#[test]
fn comparisons() {
    let d = lazy();
    // Values of P=? [F "goal"]: state 0: 1/2, state 1: 1, state 2: 0.
    assert_eq!(holds(&d, "P>=0.5 [ F \"goal\" ]"), vec![0, 1]);
    assert_eq!(holds(&d, "P>0.5 [ F \"goal\" ]"), vec![1]);
    assert_eq!(holds(&d, "P<0.5 [ F \"goal\" ]"), vec![2]);
    assert_eq!(holds(&d, "P<=0 [ F \"goal\" ]"), vec![2]);
    assert!(matches!(
        error(&d, "P>=1.5 [ F \"goal\" ]"),
        CheckError::Input(_)
    ));
}

// ---------- PRISM's reward tests ----------

/// dtmc_rewards.pm: 0 → 1 → 2 → 3 ⟲, with PRISM's reward structures a, a_state, b, b_state.
/// Transition rewards are aligned with the stored entries (one per row here).
fn dtmc_rewards() -> Dtmc {
    let mut d = chain(4, &[(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 3, 1.0)]);
    let rs = |name: &str, state: [f64; 4], trans: Option<[f64; 4]>| RewardStructure {
        name: Some(name.into()),
        state: Some(state.to_vec()),
        transition: trans.map(|t| t.to_vec()),
        exact: None,
    };
    d.rewards = vec![
        rs("a", [2.0, 5.0, 11.0, 0.0], Some([3.0, 7.0, 0.0, 0.0])),
        rs("a_state", [5.0, 12.0, 11.0, 0.0], None),
        rs("b", [2.0, 5.0, 11.0, 17.0], Some([3.0, 7.0, 0.0, 13.0])),
        rs("b_state", [5.0, 12.0, 11.0, 30.0], None),
    ];
    d
}

#[test]
fn prism_dtmc_rewards() {
    let d = dtmc_rewards();
    let inf = f64::INFINITY;
    let cases: &[(&str, &str, f64)] = &[
        ("a", "C<=0", 0.0),
        ("a", "C<=1", 5.0),
        ("a", "C<=2", 17.0),
        ("a", "C<=3", 28.0),
        ("a", "C", 28.0),
        ("b", "C", inf),
        ("a", "I=0", 2.0),
        ("a", "I=1", 5.0),
        ("a", "I=2", 11.0),
        ("a", "I=3", 0.0),
        ("a", "F s=0", 0.0),
        ("a", "F s=1", 5.0),
        ("a", "F s=2", 17.0),
        ("a", "F s>2", 28.0),
        ("a", "S", 0.0),
        ("a_state", "C<=0", 0.0),
        ("a_state", "C<=1", 5.0),
        ("a_state", "C<=2", 17.0),
        ("a_state", "C<=3", 28.0),
        ("a_state", "C", 28.0),
        ("b_state", "C", inf),
        ("a_state", "I=0", 5.0),
        ("a_state", "I=1", 12.0),
        ("a_state", "I=2", 11.0),
        ("a_state", "I=3", 0.0),
        ("a_state", "F s=2", 17.0),
        ("a_state", "F s>2", 28.0),
        ("a_state", "S", 0.0),
    ];
    for (name, path, want) in cases {
        let text = format!("R{{\"{name}\"}}=? [ {path} ]");
        let got = value(&d, &text);
        assert!(close(got, *want), "{text}: got {got}, PRISM says {want}");
    }
}

/// dtmc_rewards_bsccs.pm: 0 → 1 (0.4), 3 (0.6); {1,2} and {3,4} are 2-cycles.
fn rewards_bsccs() -> Dtmc {
    let mut d = chain(
        5,
        &[
            (0, 1, 0.4),
            (0, 3, 0.6),
            (1, 2, 1.0),
            (2, 1, 1.0),
            (3, 4, 1.0),
            (4, 3, 1.0),
        ],
    );
    d.rewards = vec![
        RewardStructure {
            name: Some("a".into()),
            state: Some(vec![2.0, 0.0, 0.0, 0.0, 0.0]),
            transition: None,
            exact: None,
        },
        RewardStructure {
            name: Some("b".into()),
            state: Some(vec![2.0, 5.0, 0.0, 0.0, 0.0]),
            transition: None,
            exact: None,
        },
        // [] s=3 : 5 — the transition reward of state 3's single transition (entry index 4).
        RewardStructure {
            name: Some("c".into()),
            state: Some(vec![2.0, 0.0, 0.0, 0.0, 0.0]),
            transition: Some(vec![0.0, 0.0, 0.0, 0.0, 5.0, 0.0]),
            exact: None,
        },
    ];
    d
}

#[test]
fn prism_dtmc_rewards_bsccs() {
    let d = rewards_bsccs();
    let inf = f64::INFINITY;
    assert!(close(value(&d, "R{\"a\"}=? [ F s>0 ]"), 2.0));
    assert_eq!(value(&d, "R{\"a\"}=? [ F s=1 | s=2 ]"), inf);
    assert_eq!(value(&d, "R{\"a\"}=? [ F s=3 | s=4 ]"), inf);
    assert!(close(value(&d, "R{\"a\"}=? [ C ]"), 2.0));
    assert_eq!(value(&d, "R{\"b\"}=? [ C ]"), inf);
    assert_eq!(value(&d, "R{\"c\"}=? [ C ]"), inf);
    for (s, want) in [(0, inf), (1, inf), (2, inf), (3, 0.0), (4, 0.0)] {
        let f = format!("filter(state, R{{\"b\"}}=? [ C ], s={s})");
        assert_eq!(value(&d, &f), want, "{f}");
    }
    // Long-run: b = 0.4 · (5+0)/2 = 1; c = 0.6 · (5+0)/2 = 1.5 (transition reward counts).
    assert!(close(value(&d, "R{\"a\"}=? [ S ]"), 0.0));
    assert!(close(value(&d, "R{\"b\"}=? [ S ]"), 1.0));
    assert!(close(value(&d, "R{\"c\"}=? [ S ]"), 1.5));
}

/// dtmc_pctl.pm / dtmc_rewards2.pm (same chain): rewards "r": state 4 earns 3, the
/// transition out of 2 earns 17.
fn dtmc_pctl() -> Dtmc {
    let mut d = chain(
        6,
        &[
            (0, 1, 0.5),
            (0, 3, 0.5),
            (1, 0, 0.5),
            (1, 2, 0.25),
            (1, 4, 0.25),
            (2, 5, 1.0),
            (3, 3, 1.0),
            (4, 4, 1.0),
            (5, 2, 1.0),
        ],
    );
    // Stored entries in CSR order: 0:(0,1) 1:(0,3) 2:(1,0) 3:(1,2) 4:(1,4) 5:(2,5) 6 7 8.
    let mut trans = vec![0.0; 9];
    trans[5] = 17.0;
    d.rewards = vec![
        RewardStructure {
            name: Some("time".into()),
            state: Some(vec![1.0; 6]),
            transition: None,
            exact: None,
        },
        RewardStructure {
            name: Some("r".into()),
            state: Some(vec![0.0, 0.0, 0.0, 0.0, 3.0, 0.0]),
            transition: Some(trans),
            exact: None,
        },
    ];
    d
}

#[test]
fn prism_dtmc_pctl_and_rewards2() {
    let d = dtmc_pctl();
    let inf = f64::INFINITY;
    let checks: &[(&str, f64)] = &[
        ("P=? [ X s=1 ]", 0.5),
        ("P=? [ F s=2 ]", 1.0 / 6.0),
        ("P=? [ F s=2 | s=4 ]", 1.0 / 3.0),
        ("P=? [ F<=0 s=2 ]", 0.0),
        ("P=? [ F<=2 s=2 ]", 0.125),
        ("P=? [ F<4 s=2 ]", 0.125),
        ("P=? [ F<=10 s=2 ]", 0.16650390625),
        ("P=? [ G s<2 ]", 0.0),
        ("P=? [ G<=4 s<2 ]", 0.0625),
        ("P=? [ s!=1 U s=3 ]", 0.5),
        ("P=? [ s!=1 U<=1 s=3 ]", 0.5),
        ("R{\"r\"}=? [ C<=10 ]", 14.060546875),
        ("R{\"r\"}=? [ S ]", 23.0 / 12.0),
        ("R{\"r\"}=? [ F s>2 ]", 17.0 / 6.0),
        ("R{\"time\"}=? [ F s>2 ]", 13.0 / 6.0),
        ("R{\"r\"}=? [ F s>3 ]", inf),
        ("R{\"r\"}=? [ I=4 ]", 15.0 / 32.0),
        ("R{\"r\"}=? [ C ]", inf),
    ];
    for (text, want) in checks {
        let got = value(&d, text);
        assert!(close(got, *want), "{text}: got {got}, PRISM says {want}");
    }
}

/// dtmc_total_reward.prism: 0 → 1, 2 (1/2 each), both absorbing; state 2 earns 5.
#[test]
fn prism_total_and_discounted_reward() {
    let mut d = chain(3, &[(0, 1, 0.5), (0, 2, 0.5), (1, 1, 1.0), (2, 2, 1.0)]);
    d.rewards = vec![RewardStructure {
        name: Some("r".into()),
        state: Some(vec![0.0, 0.0, 5.0]),
        transition: None,
        exact: None,
    }];
    let at = |p: &str, s: i64| format!("filter(state, R{{\"r\"}}=? [ {p} ], s={s})");
    assert_eq!(value(&d, "R{\"r\"}=? [ C ]"), f64::INFINITY);
    assert_eq!(value(&d, &at("C", 1)), 0.0);
    assert_eq!(value(&d, &at("C", 2)), f64::INFINITY);
    assert!(close(value(&d, "R{\"r\"}=? [ C<=5 ]"), 10.0));
    assert!(close(value(&d, &at("C<=5", 2)), 25.0));
    // Discounted: PRISM's 22.5, 0, 50 (to the solver's precision, 1e-6 relative).
    let tol = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert!(tol(value(&d, "R{\"r\"}=? [ C{discount=0.9} ]"), 22.5));
    assert!(tol(value(&d, &at("C{discount=0.9}", 1)), 0.0));
    assert!(tol(value(&d, &at("C{discount=0.9}", 2)), 50.0));
    assert!(close(
        value(&d, "R{\"r\"}=? [ C{discount=0.9}<=5 ]"),
        7.73775
    ));
    assert!(close(value(&d, &at("C{discount=0.9}<=5", 2)), 20.4755));
}

/// dtmc_steady_2.pm: 0 → 1, 2 (1/2 each), 1 → 0, 2 → 0 (periodic: naive iteration oscillates).
#[test]
fn prism_steady_2() {
    let d = chain(3, &[(0, 1, 0.5), (0, 2, 0.5), (1, 0, 1.0), (2, 0, 1.0)]);
    assert!(close(value(&d, "S=? [ s=0 ]"), 0.5));
    assert!(close(value(&d, "S=? [ s=1 ]"), 0.25));
    assert!(close(value(&d, "S=? [ s=2 ]"), 0.25));
    assert!(close(value(&d, "S=? [ s=0 | s=1 | s=2 ]"), 1.0));
}

/// pctl-until.prism with its properties-file labels.
#[test]
fn prism_pctl_until_with_file_labels() {
    let d = chain(
        5,
        &[
            (0, 1, 1.0),
            (1, 2, 0.6),
            (1, 3, 0.4),
            (2, 2, 1.0),
            (3, 3, 1.0),
            (4, 4, 1.0),
        ],
    );
    let model = Model::from_dtmc(d);
    let props = Properties::parse_file(
        "pctl-until.props",
        "label \"phi\" = s=0 | s=1 | s=3;\nlabel \"target\" = s=2;\n\
         P=? [ \"phi\" U \"target\" ]\nP=? [ s=1 U \"target\" ]\n\
         P=? [ \"phi\" U<=1 \"target\" ]\nP=? [ \"phi\" U<=2 \"target\" ]\nP=? [ \"phi\" U<2 \"target\" ]",
    )
    .unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let got: Vec<f64> = CheckSession::new(&model, CheckOptions::default())
        .check_all(&compiled)
        .into_iter()
        .map(|r| match r.unwrap().value {
            Scalar::Num(x) => x,
            Scalar::Bool(_) => panic!(),
        })
        .collect();
    for (g, w) in got.iter().zip([0.6, 0.0, 0.0, 0.6, 0.0]) {
        assert!(close(*g, w), "{got:?}");
    }
}

// ---------- atoms, filters, errors ----------

#[test]
fn unknown_names_are_reported() {
    let d = lazy();
    let e = error(&d, "\"nope\"").to_string();
    assert!(
        e.contains("\"nope\"") && e.contains("\"goal\"") && e.contains("\"init\""),
        "{e}"
    );
    assert_eq!(
        error(&d, "x>=3").to_string(),
        "unknown variable or constant `x`"
    );
    let e = error(&d, "R{\"cost\"}=? [ S ]").to_string();
    assert!(e.contains("\"cost\"") && e.contains("\"time0\""), "{e}");
    assert!(error(&d, "R{2}=? [ S ]").to_string().contains("number 2"));
    // Default structure = the first.
    assert!(close(value(&d, "R=? [ I=1 ]"), 0.5));
}

#[test]
fn init_label_and_filters() {
    let d = lazy();
    assert_eq!(holds(&d, "\"init\""), vec![0]);
    // P=? [ F "goal" ] is 1/2, 1, 0.
    let f = "P=? [ F \"goal\" ]";
    let flt = |op: &str, states: &str| format!("filter({op}, {f}, {states})");
    assert!(close(value(&d, &flt("sum", "true")), 1.5));
    assert!(close(value(&d, &flt("avg", "true")), 0.5));
    assert!(close(value(&d, &flt("max", "!\"goal\"")), 0.5));
    assert!(close(value(&d, &flt("min", "true")), 0.0));
    assert!(close(value(&d, &flt("first", "!s=0")), 1.0));
    let r = res(&d, &flt("range", "true"));
    assert_eq!(
        (r.value, r.bounds),
        (Scalar::Num(0.0), Some(Bounds { lo: 0.0, hi: 1.0 }))
    );
    assert_eq!(r.method.to_string(), "range over 3 states");
    assert_eq!(holds(&d, &flt("argmax", "true")), vec![1]);
    // count / forall / exists on a boolean property.
    let b = |op: &str| format!("filter({op}, P>0.2 [ F \"goal\" ])");
    assert!(close(value(&d, &b("count")), 2.0));
    assert_eq!(res(&d, &b("forall")).value, Scalar::Bool(false));
    assert_eq!(res(&d, &b("exists")).value, Scalar::Bool(true));
    // state needs exactly one state; sum needs numbers; empty filters are errors — located.
    let e = error(&d, &flt("state", "true"));
    assert_eq!(
        e.to_string(),
        "filter state needs exactly one state, the filter has 3"
    );
    assert_eq!(e.location().map(|l| l.column), Some(1));
    assert!(error(&d, &b("sum")).to_string().contains("numeric"));
    assert_eq!(
        error(&d, &flt("min", "false")).to_string(),
        "the filter's state set is empty"
    );
    // print: the inner values, listed for the non-zero filter states.
    let pr = res(&d, &flt("print", "true"));
    assert_eq!(
        pr.printed,
        Some(vec![(0, Scalar::Num(0.5)), (1, Scalar::Num(1.0))])
    );
}

#[test]
fn several_initial_states_use_prism_filters() {
    let mut d = lazy();
    d.initial = vec![0, 1];
    let r = res(&d, "P=? [ F \"goal\" ]");
    assert_eq!(r.value, Scalar::Num(0.5));
    assert_eq!(
        r.initial_filter,
        Some(InitialFilter::Range {
            count: 2,
            min: 0.5,
            max: 1.0
        })
    );
    let r = res(&d, "P>=0.6 [ F \"goal\" ]");
    assert_eq!(r.value, Scalar::Bool(false));
    assert_eq!(r.initial_filter, Some(InitialFilter::Forall { count: 2 }));
}

#[test]
fn label_cycles_are_errors() {
    let model = Model::from_dtmc(lazy());
    let props = Properties::parse_file("l.props", "label \"a\" = !\"a\";\n\"a\"").unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let e = compiled.items[0].resolved.as_ref().unwrap_err();
    assert_eq!(e.message, "label \"a\" is defined in terms of itself");
    assert_eq!(
        e.location.as_ref().map(|l| (l.line, l.column)),
        Some((1, 14))
    );
}

#[test]
fn file_labels_are_evaluated_once_per_session() {
    // A chain of labels, each used twice by the next: resolution and checking stay linear
    // (every label is resolved once, shared, and its states computed once).
    let model = Model::from_dtmc(lazy());
    let mut text = String::from("label \"l0\" = \"goal\";\n");
    for i in 1..40 {
        text.push_str(&format!(
            "label \"l{i}\" = \"l{}\" & \"l{}\";\n",
            i - 1,
            i - 1
        ));
    }
    text.push_str("P=? [ F \"l39\" ]");
    let props = Properties::parse_file("chain.props", &text).unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let r = CheckSession::new(&model, CheckOptions::default())
        .check(&compiled.items[0])
        .unwrap();
    assert_eq!(r.value, Scalar::Num(0.5));
}

#[test]
fn horizon_table_matches_bounded_reachability() {
    let d = dtmc_pctl();
    let mut s = CheckSession::for_dtmc(&d, CheckOptions::default());
    let t = s.horizon("s=2", "target", 10).unwrap();
    assert_eq!(t.get(0, 2), Some(0.125)); // PRISM: F<=2 s=2 = 1/8
    assert_eq!(t.get(0, 10).map(|v| close(v, 0.16650390625)), Some(true));
    for h in 1..=10 {
        let v = nums(&d, &format!("P=? [ F<={h} s=2 ]"));
        for (s, vs) in v.iter().enumerate() {
            assert!(close(t.get(s, h).unwrap(), *vs));
        }
    }
    assert_eq!(t.get(0, 0), None);
    assert_eq!(t.get(0, 11), None);
    // Targets: a label, quoted or not; not a number; errors located in the target's text.
    let d = lazy();
    let mut s = CheckSession::for_dtmc(&d, CheckOptions::default());
    assert_eq!(
        s.horizon("goal", "t", 2).unwrap(),
        s.horizon("\"goal\"", "t", 2).unwrap()
    );
    let e = s.horizon("s+1", "--target", 2).unwrap_err();
    assert_eq!(e.to_string(), "expected a label or a boolean state formula");
    assert_eq!(e.location().map(|l| l.file.as_str()), Some("--target"));
    assert!(s
        .horizon("nope", "t", 2)
        .unwrap_err()
        .to_string()
        .contains("\"goal\""));
    assert!(s.horizon("goal", "t", 0).is_err());
    assert!(s.horizon("goal", "t", usize::MAX).is_err());
}

// ---------- properties over random chains ----------

/// A random DTMC on `n` states from raw weights (zero weights = no edge; every row gets at
/// least a self-loop).
fn random_dtmc(n: usize, weights: &[u8]) -> Dtmc {
    let mut edges = Vec::new();
    for s in 0..n {
        let row = &weights[s * n..(s + 1) * n];
        let total: u32 = row.iter().map(|&w| w as u32).sum();
        if total == 0 {
            edges.push((s as u32, s as u32, 1.0));
        } else {
            for (t, &w) in row.iter().enumerate() {
                if w > 0 {
                    edges.push((s as u32, t as u32, w as f64 / total as f64));
                }
            }
        }
    }
    chain(n, &edges)
}

fn dense(d: &Dtmc) -> nalgebra::DMatrix<f64> {
    let n = d.num_states();
    let mut m = nalgebra::DMatrix::zeros(n, n);
    for (p, (s, t)) in d.matrix.iter() {
        m[(s as usize, t as usize)] = *p;
    }
    m
}

/// `(false | s=i | s=j | ...)`: the states of `bits` as a formula.
fn set_formula(bits: &[bool]) -> String {
    let mut f = String::from("(false");
    for (i, _) in bits.iter().enumerate().filter(|(_, &b)| b) {
        f.push_str(&format!(" | s={i}"));
    }
    f.push(')');
    f
}

fn arb_case() -> impl Strategy<Value = (usize, Vec<u8>, Vec<bool>, Vec<bool>, i64, i64)> {
    (2usize..7).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec(prop_oneof![3 => Just(0u8), 2 => 1u8..10], n * n),
            proptest::collection::vec(any::<bool>(), n),
            proptest::collection::vec(any::<bool>(), n),
            0i64..6,
            0i64..6,
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `φ U[a,b] ψ` equals the dense computation e_s·A^a·Σ_{j≤b−a} B^j·1_ψ with
    /// A = diag(φ)·P (stay in φ) and B = diag(φ∧¬ψ)·P (stay in φ without ψ): the probability
    /// that ψ first holds at some i ∈ [a, b] with φ at all earlier positions.
    #[test]
    fn bounded_until_equals_dense_products((n, w, phi, psi, a, len) in arb_case()) {
        let d = random_dtmc(n, &w);
        let pm = dense(&d);
        let b = a + len;
        let diag = |bits: Vec<bool>| nalgebra::DMatrix::from_diagonal(&nalgebra::DVector::from_iterator(
            n, bits.into_iter().map(|x| if x { 1.0 } else { 0.0 })));
        let amat = diag(phi.clone()) * &pm;
        let bmat = diag(phi.iter().zip(&psi).map(|(&f, &g)| f && !g).collect()) * &pm;
        let mut acc = nalgebra::DVector::from_iterator(n, psi.iter().map(|&x| if x { 1.0 } else { 0.0 }));
        let mut term = acc.clone();
        // Σ_{j=0}^{len} B^j 1_ψ, but B^j only continues from non-ψ φ-states: the j-th term is
        // restricted to first hits, which B guarantees by zeroing rows of ψ-states.
        for _ in 0..len {
            term = &bmat * term;
            acc += &term;
        }
        for _ in 0..a {
            acc = &amat * acc;
        }
        let (f, g) = (set_formula(&phi), set_formula(&psi));
        let got = nums(&d, &format!("P=? [ {f} U[{a},{b}] {g} ]"));
        for s in 0..n {
            prop_assert!((got[s] - acc[s]).abs() < 1e-12, "state {s}: {} vs {}", got[s], acc[s]);
        }
        // U<=k is the same as U[0,k].
        let got_le = nums(&d, &format!("P=? [ {f} U<={len} {g} ]"));
        let mut acc0 = nalgebra::DVector::from_iterator(n, psi.iter().map(|&x| if x { 1.0 } else { 0.0 }));
        let mut t0 = acc0.clone();
        for _ in 0..len {
            t0 = &bmat * t0;
            acc0 += &t0;
        }
        for s in 0..n {
            prop_assert!((got_le[s] - acc0[s]).abs() < 1e-12);
        }
    }

    /// Duality identities (disjoint decompositions of the path events, bounded by k):
    /// P(φ W≤k ψ) = P(φ U≤k ψ) + P(G≤k (φ∧¬ψ)) and
    /// P(φ R≤k ψ) = P(ψ U≤k (φ∧ψ)) + P(G≤k (ψ∧¬φ)); and the one-step unrolling
    /// P(F≤k+1 ψ) = [ψ] + [¬ψ]·Σ_t P(s,t)·P_t(F≤k ψ) against the matrix itself.
    #[test]
    fn duality_identities((n, w, phi, psi, k, _l) in arb_case()) {
        let d = random_dtmc(n, &w);
        let (f, g) = (set_formula(&phi), set_formula(&psi));
        let wv = nums(&d, &format!("P=? [ {f} W<={k} {g} ]"));
        let uv = nums(&d, &format!("P=? [ {f} U<={k} {g} ]"));
        let gv = nums(&d, &format!("P=? [ G<={k} ({f} & !{g}) ]"));
        let rv = nums(&d, &format!("P=? [ {f} R<={k} {g} ]"));
        let u2 = nums(&d, &format!("P=? [ {g} U<={k} ({f} & {g}) ]"));
        let g2 = nums(&d, &format!("P=? [ G<={k} ({g} & !{f}) ]"));
        for s in 0..n {
            prop_assert!((wv[s] - uv[s] - gv[s]).abs() < 1e-12, "W at {s}");
            prop_assert!((rv[s] - u2[s] - g2[s]).abs() < 1e-12, "R at {s}");
        }
        // One-step unrolling of F≤k+1 against the matrix itself.
        let fk = nums(&d, &format!("P=? [ F<={k} {g} ]"));
        let fk1 = nums(&d, &format!("P=? [ F<={} {g} ]", k + 1));
        let pm = dense(&d);
        for s in 0..n {
            let next: f64 = (0..n).map(|t| pm[(s, t)] * fk[t]).sum();
            let want = if psi[s] { 1.0 } else { next };
            prop_assert!((fk1[s] - want).abs() < 1e-12);
        }
        // Unbounded duality with the (sound) unbounded solver: W = U + G(φ∧¬ψ).
        let wu = nums(&d, &format!("P=? [ {f} W {g} ]"));
        let uu = nums(&d, &format!("P=? [ {f} U {g} ]"));
        let gu = nums(&d, &format!("P=? [ G ({f} & !{g}) ]"));
        for s in 0..n {
            prop_assert!((wu[s] - uu[s] - gu[s]).abs() < 1e-9, "unbounded W at {s}");
        }
    }

    /// The horizon table's row h equals F≤h for every h.
    #[test]
    fn horizon_rows_equal_bounded_f((n, w, _phi, psi, k, _l) in arb_case()) {
        let d = random_dtmc(n, &w);
        let g = set_formula(&psi);
        let h = (k + 1) as usize;
        let t = CheckSession::for_dtmc(&d, CheckOptions::default()).horizon(&g, "target", h).unwrap();
        for hh in 1..=h {
            let f = nums(&d, &format!("P=? [ F<={hh} {g} ]"));
            prop_assert_eq!(t.horizon(hh).unwrap(), &f[..]);
        }
    }
}

#[test]
fn straddling_bounds_are_refined_then_noted() {
    // P(F goal) from 0 is exactly 1/2. With the sound interval method and a threshold of
    // exactly 1/2 the bounds [0.5 − δ, 0.5 + δ] straddle it: the checker refines (smaller ε)
    // and, if still undecided, decides by the point value and says so.
    let d = lazy();
    let opts = CheckOptions {
        method: Method::Interval,
        ..CheckOptions::default()
    };
    let mut s = CheckSession::for_dtmc(&d, opts);
    let r = s.check_str("P>=0.5 [ F \"goal\" ]").unwrap();
    let undecided = r.notes.iter().any(|n| n.contains("undecided"));
    let refined = r.notes.iter().any(|n| n.contains("recomputed"));
    let exact_bounds =
        s.check_str("P=? [ F \"goal\" ]").unwrap().bounds == Some(Bounds { lo: 0.5, hi: 0.5 });
    // Either the method pinned the value exactly (no note needed) or the notes say what happened.
    assert!(exact_bounds || (refined && undecided), "{:?}", r.notes);
    // A threshold away from the value is decided by the bounds without notes.
    let r = s.check_str("P>=0.4 [ F \"goal\" ]").unwrap();
    assert_eq!(r.value, Scalar::Bool(true));
    assert!(r.notes.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Reward operators against dense linear algebra: `C<=k = Σ_{i<k} P^i r`,
    /// `C{discount=d}<=k = Σ_{i<k} (dP)^i r`, `I=k = P^k r_state`, and the discounted total
    /// `(I − dP)^{-1} r` inside the reported sound bounds. `r` = state + expected transition
    /// reward.
    #[test]
    fn rewards_equal_dense_sums((n, w, _phi, _psi, k, _l) in arb_case(),
                                state_r in proptest::collection::vec(0u8..5, 7),
                                trans_r in proptest::collection::vec(0u8..5, 49),
                                disc_n in 1u32..19) {
        // A discount with a short decimal (d = disc_n / 20), written exactly in the property.
        let disc = f64::from(disc_n) / 20.0;
        let mut d = random_dtmc(n, &w);
        let state: Vec<f64> = state_r[..n].iter().map(|&x| x as f64).collect();
        let trans: Vec<f64> = (0..d.matrix.nnz()).map(|i| trans_r[i % 49] as f64).collect();
        let pm = dense(&d);
        // Expected one-step reward, computed independently from the dense matrix and the
        // CSR-aligned transition rewards.
        let mut r = nalgebra::DVector::from_vec(state.clone());
        for (i, (p, (s, _t))) in d.matrix.iter().enumerate() {
            r[s as usize] += p * trans[i];
        }
        d.rewards = vec![RewardStructure { name: Some("x".into()), state: Some(state.clone()), transition: Some(trans), exact: None }];
        // Σ_{i<k} P^i r and Σ_{i<k} (dP)^i r
        let mut acc = nalgebra::DVector::zeros(n);
        let mut accd = nalgebra::DVector::zeros(n);
        let mut term = r.clone();
        let mut termd = r.clone();
        for _ in 0..k {
            acc += &term;
            accd += &termd;
            term = &pm * term;
            termd = (&pm * termd) * disc;
        }
        let c = nums(&d, &format!("R{{\"x\"}}=? [ C<={k} ]"));
        let cd = nums(&d, &format!("R{{\"x\"}}=? [ C{{discount={disc}}}<={k} ]"));
        for s in 0..n {
            prop_assert!((c[s] - acc[s]).abs() <= 1e-9 * (1.0 + acc[s].abs()));
            prop_assert!((cd[s] - accd[s]).abs() <= 1e-9 * (1.0 + accd[s].abs()));
        }
        // I=k: P^k · state
        let mut pk = nalgebra::DVector::from_vec(state.clone());
        for _ in 0..k {
            pk = &pm * pk;
        }
        let inst = nums(&d, &format!("R{{\"x\"}}=? [ I={k} ]"));
        for s in 0..n {
            prop_assert!((inst[s] - pk[s]).abs() <= 1e-9 * (1.0 + pk[s].abs()));
        }
        // Discounted total: the dense solve lies within the sound bounds.
        let a = nalgebra::DMatrix::<f64>::identity(n, n) - &pm * disc;
        let exact = a.lu().solve(&r).expect("I − dP is invertible for d < 1");
        let StateValues::Num(total) = res(&d, &format!("R{{\"x\"}}=? [ C{{discount={disc}}} ]")).states else {
            panic!("expected numbers")
        };
        let (lo, hi) = total.bounds.clone().expect("bounds");
        for s in 0..n {
            let tol = 1e-9 * (1.0 + exact[s].abs());
            prop_assert!(lo[s] - tol <= exact[s] && exact[s] <= hi[s] + tol, "state {s}: {} not in [{}, {}]", exact[s], lo[s], hi[s]);
            prop_assert!((total.values[s] - exact[s]).abs() <= 2e-6 * exact[s].abs().max(1.0));
        }
    }
}

/// SafetyDrift's 5×5 matrix as printed (models/safetydrift.tra): its decimal rows sum to 1, but
/// three of them sum to 1 + 2^-54 as f64, and `S=? [F "violated"]`-like results came out as
/// 1.0000000000000007 with bounds [1.0000000000000004, 1.0000000000000007] that exclude the
/// true value 1 (VIOLATED is the only BSCC, reached with probability 1).
#[test]
fn probabilities_from_decimal_rows_stay_within_0_and_1() {
    let d = chain(
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
    );
    let StateValues::Num(st) = res(&d, "S=? [ s=4 ]").states else {
        panic!("expected numbers")
    };
    let (lo, hi) = st.bounds.clone().expect("the default method is sound");
    for s in 0..5 {
        assert!(st.values[s] <= 1.0, "state {s}: {}", st.values[s]);
        assert!(close(st.values[s], 1.0), "state {s}: {}", st.values[s]);
        assert!(
            lo[s] <= 1.0 && 1.0 <= hi[s],
            "state {s}: [{}, {}]",
            lo[s],
            hi[s]
        );
    }
    assert!(value(&d, "P=? [ F s=4 ]") <= 1.0);
}
