//! The `robust` and `explanations` sections: values derived by hand on small chains, the
//! bound never below the point value (proptest), round trips and refusals.

use super::*;
use augur_dtmc::{DtmcBuilder, Intervals};
use augur_gate::dtr::SafetyState;
use augur_gate::policy::{Policy, Verdict};
use augur_gate::session::{Action, Session, ToolCall};
use proptest::prelude::*;
use serde_json::{json, Value as Json};
use std::sync::Arc;

const LEVELS: [&str; 5] = ["safe", "mild", "elevated", "critical", "violated"];

/// A 5-state chain labelled safe..violated with the given rows.
fn risk_chain(rows: &[&[(u32, f64)]]) -> Dtmc {
    let mut b = DtmcBuilder::new(5);
    for (s, row) in rows.iter().enumerate() {
        b.add_row(s as u32, row.iter().copied()).unwrap();
    }
    for (s, l) in LEVELS.iter().enumerate() {
        b.add_label_state(l, s as u32).unwrap();
    }
    b.add_initial(0).unwrap();
    b.build().unwrap().0
}

/// The interval chain of the hand-derived example:
/// safe → safe [0.5, 0.7], → mild [0.2, 0.4], → violated [0.1, 0.2];
/// mild → safe [0.3, 0.5], → violated [0.5, 0.7]; the others absorbing.
fn interval_chain() -> Dtmc {
    let d = risk_chain(&[
        &[(0, 0.6), (1, 0.3), (4, 0.1)],
        &[(0, 0.5), (4, 0.5)],
        &[(2, 1.0)],
        &[(3, 1.0)],
        &[(4, 1.0)],
    ]);
    let lo = vec![0.5, 0.2, 0.1, 0.3, 0.5, 1.0, 1.0, 1.0];
    let hi = vec![0.7, 0.4, 0.2, 0.5, 0.7, 1.0, 1.0, 1.0];
    Dtmc::from_interval_bounds(d, lo, hi).unwrap()
}

fn opts(prop: &str, robust: bool, explain: bool) -> CompileOptions {
    let mut o = CompileOptions::new(prop);
    o.robust = robust.then_some(RobustOptions::default());
    o.explanations = explain;
    o
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
}

/// Pmax of `F≤2 violated` by hand (the greedy row problem: every successor its lo, the rest
/// to the successors of highest value first, up to their hi):
/// h = 1: safe 0.1 + 0.1 (violated to its hi) = 0.2; mild 0.5 + 0.2 = 0.7.
/// h = 2: safe 0.5·0.2 + 0.2·0.7 + 0.1·1 = 0.34, + 0.1·1 (violated) + 0.1·0.7 (mild) = 0.51;
/// mild 0.3·0.2 + 0.5·1 + 0.2·1 = 0.76.
/// The point tables are of the resolution the model stores, lo + t·(hi − lo) with
/// t = (1 − Σlo)/(Σhi − Σlo): safe (0.58, 0.28, 0.14), mild (0.4, 0.6):
/// P(F≤2) = 0.58·0.14 + 0.28·0.6 + 0.14 = 0.3892 at safe, 0.4·0.14 + 0.6 = 0.656 at mild.
#[test]
fn robust_tables_match_hand_derived_pmax() {
    let src = Source::new(interval_chain(), "idtmc");
    let m = compile_dtmcs(vec![src], &opts("P=? [ F<=2 \"violated\" ]", true, false)).unwrap();
    let t = &m.tables[0];
    assert!(
        close(&t.value, &[0.3892, 0.656, 0.0, 0.0, 1.0]),
        "{:?}",
        t.value
    );
    let r = m.sections.robust.as_ref().unwrap();
    assert_eq!(r.confidence, None);
    let rt = &r.tables[0];
    assert_eq!(rt.intervals, IntervalSource::Model);
    assert_eq!(rt.confidence, None);
    assert!(
        close(&rt.value, &[0.51, 0.76, 0.0, 0.0, 1.0]),
        "{:?}",
        rt.value
    );
    assert!(close(&rt.upper, &rt.value));
    // State-major, h = 1, 2.
    let want = [0.2, 0.51, 0.7, 0.76, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
    assert!(close(&rt.curve, &want), "{:?}", rt.curve);
    // Unbounded: Pmax(F violated) = 1 from safe and mild (nature cannot avoid it forever:
    // every resolution leaves {safe, mild} with probability ≥ 0.1 per step).
    let src = Source::new(interval_chain(), "idtmc");
    let m = compile_dtmcs(vec![src], &opts("P=? [ F \"violated\" ]", true, false)).unwrap();
    let rt = &m.sections.robust.as_ref().unwrap().tables[0];
    assert!(rt.value[0] > 1.0 - 1e-5 && rt.upper[0] >= rt.value[0]);
    assert_eq!(rt.value[2], 0.0);
}

#[test]
fn an_interval_model_needs_robust_and_keeps_its_own_confidence() {
    let src = Source::new(interval_chain(), "idtmc");
    let e = compile_dtmcs(vec![src], &opts("P=? [ F<=2 \"violated\" ]", false, false))
        .unwrap_err()
        .to_string();
    assert!(e.contains("interval DTMC") && e.contains("--robust"), "{e}");
    let src = Source::new(interval_chain(), "idtmc");
    let mut o = opts("P=? [ F<=2 \"violated\" ]", true, false);
    o.robust = Some(RobustOptions {
        confidence: Some(0.9),
    });
    let e = compile_dtmcs(vec![src], &o).unwrap_err().to_string();
    assert!(
        e.contains("given without a confidence") && e.contains("--confidence 0.9"),
        "{e}"
    );
    // A point model without counts has no intervals.
    let d = risk_chain(&[
        &[(1, 1.0)],
        &[(4, 1.0)],
        &[(2, 1.0)],
        &[(3, 1.0)],
        &[(4, 1.0)],
    ]);
    let e = compile_dtmcs(
        vec![Source::new(d, "point")],
        &opts("P=? [ F<=2 \"violated\" ]", true, false),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--robust needs intervals"), "{e}");
}

fn policy(text: &str) -> Arc<Policy> {
    Arc::new(Policy::parse(text, "policy.toml").unwrap())
}

/// `get_current_day` is SAFE: the session projects the safe state, whose point value 0.3892
/// is below a warn threshold of 0.45 and whose bound 0.51 is above it.
#[test]
fn sessions_decide_on_the_bound_and_show_both() {
    let src = Source::new(interval_chain(), "idtmc");
    let m = compile_dtmcs(vec![src], &opts("P=? [ F<=2 \"violated\" ]", true, false)).unwrap();
    let mut without = m.clone();
    without.sections.robust = None;
    let p = policy("version = 1\nthresholds = [{ at = 0.45, verdict = \"warn\" }]\n");
    let args = json!({});
    let act = Action::Tool(ToolCall::new("get_current_day", &args));
    let m = Arc::new(m);
    let mut s = Session::new(&m, &p, None).unwrap();
    let d = s.gate(&act);
    assert_eq!(d.verdict, Verdict::Warn);
    assert!((d.probability - 0.3892).abs() < 1e-12);
    assert!((d.bound.unwrap() - 0.51).abs() < 1e-12);
    assert_eq!(d.decided(), d.bound.unwrap());
    let reason = s.reason(&d);
    assert!(
        reason.contains("= 0.39 (robust bound 0.51 over the model's intervals) ≥ 0.45 → warn"),
        "{reason}"
    );
    let r = serde_json::to_value(s.report(&d, "x")).unwrap();
    assert_eq!(r["bound"].as_f64(), d.bound);
    assert!(r["confidence"].is_null());
    // Without the section the same monitor allows, on the point value.
    let mut s = Session::new(&Arc::new(without), &p, None).unwrap();
    let d = s.gate(&act);
    assert_eq!((d.verdict, d.bound), (Verdict::Allow, None));
    let r = serde_json::to_value(s.report(&d, "x")).unwrap();
    assert!(r.get("bound").is_none());
    // A policy horizon reads the robust curve: h = 1 at safe is 0.2 (point 0.14).
    let p1 = policy("version = 1\nhorizon = 1\nthresholds = [{ at = 0.15, verdict = \"warn\" }]\n");
    let mut s = Session::new(&m, &p1, None).unwrap();
    let d = s.gate(&act);
    assert!((d.probability - 0.14).abs() < 1e-12 && (d.bound.unwrap() - 0.2).abs() < 1e-12);
    assert_eq!(d.verdict, Verdict::Warn);
}

#[test]
fn the_sections_round_trip_and_bad_ones_are_located() {
    let src = Source::new(interval_chain(), "idtmc");
    let m = compile_dtmcs(vec![src], &opts("P=? [ F<=2 \"violated\" ]", true, true)).unwrap();
    let text = m.to_json();
    let back = Monitor::from_json(&text, "m.json").unwrap();
    assert_eq!(back.sections, m.sections);
    assert_eq!(back.to_json(), text);
    // A bound below its point value is refused, located at it.
    let mut v: Json = serde_json::from_str(&text).unwrap();
    v["sections"]["robust"]["tables"][0]["value"][1] = json!(0.5);
    let e = Monitor::from_json(&serde_json::to_string_pretty(&v).unwrap(), "m.json")
        .unwrap_err()
        .render();
    assert!(
        e.contains(
            "robust tables[0].value[1] = 0.5 is not a probability at least the point value 0.656"
        ),
        "{e}"
    );
    assert!(e.contains("m.json:"), "{e}");
    // A table of the wrong length, a next state out of range.
    let mut v: Json = serde_json::from_str(&text).unwrap();
    v["sections"]["robust"]["tables"][0]["curve"] = json!([0.5]);
    let e = Monitor::from_json(&v.to_string(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("curve has 1 entries, expected 10"), "{e}");
    let mut v: Json = serde_json::from_str(&text).unwrap();
    v["sections"]["explanations"]["tables"][0]["next"][0] = json!(9);
    let e = Monitor::from_json(&v.to_string(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("next[0] is not a state"), "{e}");
    // A field of a section this Augur does not know is refused (deny_unknown_fields).
    let mut v: Json = serde_json::from_str(&text).unwrap();
    v["sections"]["robust"]["tables"][0]["lower"] = json!([]);
    assert!(Monitor::from_json(&v.to_string(), "m.json").is_err());
}

/// The most probable continuation, by hand: safe → mild 0.5, → elevated 0.3, → safe 0.2;
/// mild → violated 0.4, → safe 0.6; elevated → critical 0.9, → safe 0.1; critical → violated
/// 0.5, → critical 0.5. Within 3 steps from safe: safe→mild→violated 0.2,
/// safe→elevated→critical→violated 0.135, safe→safe→mild→violated 0.04; the total
/// P(F≤3) = 0.5·0.4 + 0.3·0.45 + 0.2·0.2 = 0.375 (P(F≤2) = 0.4 at mild, 0.45 at elevated,
/// 0.2 at safe), so the share is 0.2/0.375 = 53.3%. Within 1 step safe cannot reach it.
fn explained_chain() -> Dtmc {
    risk_chain(&[
        &[(0, 0.2), (1, 0.5), (2, 0.3)],
        &[(0, 0.6), (4, 0.4)],
        &[(0, 0.1), (3, 0.9)],
        &[(3, 0.5), (4, 0.5)],
        &[(4, 1.0)],
    ])
}

#[test]
fn explanations_match_hand_derived_paths() {
    let src = Source::new(explained_chain(), "chain");
    let m = compile_dtmcs(vec![src], &opts("P=? [ F<=3 \"violated\" ]", false, true)).unwrap();
    assert!((m.tables[0].value[0] - 0.375).abs() < 1e-12);
    let e = &m.sections.explanations.as_ref().unwrap().tables[0];
    // State-major, h = 1..3.
    assert_eq!(&e.next[0..3], &[None, Some(1), Some(1)]);
    assert!(close(&e.probability[0..3], &[0.0, 0.2, 0.2]));
    // elevated: h = 1 none, h = 2, 3 via critical (0.45).
    assert_eq!(&e.next[6..9], &[None, Some(3), Some(3)]);
    assert!(close(&e.probability[6..9], &[0.0, 0.45, 0.45]));
    // critical: straight to violated; violated itself: nothing.
    assert_eq!(&e.next[9..12], &[Some(4); 3]);
    assert_eq!(&e.next[12..15], &[None; 3]);
    // The property's own column is h = 3.
    assert_eq!(e.value_next[0], Some(1));
    assert!((e.value_probability[0] - 0.2).abs() < 1e-12);
    let c = m.explanation(0, 0, Some(3)).unwrap();
    assert_eq!((c.from, c.next), (0, 1));
    assert!((c.share - 0.2 / 0.375).abs() < 1e-12);
    assert!(m.explanation(0, 0, Some(1)).is_none());
    assert!(m.explanation(0, 4, Some(3)).is_none());
    // The unbounded property uses the point table's most probable path.
    let src = Source::new(explained_chain(), "chain");
    let m = compile_dtmcs(vec![src], &opts("P=? [ F \"violated\" ]", false, true)).unwrap();
    let e = &m.sections.explanations.as_ref().unwrap().tables[0];
    assert_eq!(e.value_next, m.tables[0].path_next);
    // A curve shorter than the property's bound: the property's column is computed apart.
    let src = Source::new(explained_chain(), "chain");
    let mut o = opts("P=? [ F<=3 \"violated\" ]", false, true);
    o.horizon = Some(2);
    let m = compile_dtmcs(vec![src], &o).unwrap();
    let e = &m.sections.explanations.as_ref().unwrap().tables[0];
    assert_eq!(e.next.len(), 10);
    assert_eq!(e.value_next[0], Some(1));
    assert!((e.value_probability[0] - 0.2).abs() < 1e-12);
}

/// A decision at warn says the continuation; at allow it does not.
#[test]
fn decisions_at_warn_state_the_continuation() {
    let src = Source::new(explained_chain(), "chain");
    let m = Arc::new(
        compile_dtmcs(vec![src], &opts("P=? [ F<=3 \"violated\" ]", false, true)).unwrap(),
    );
    let args = json!({});
    let act = Action::Tool(ToolCall::new("get_current_day", &args));
    let warn = policy("version = 1\nthresholds = [{ at = 0.3, verdict = \"warn\" }]\n");
    let mut s = Session::new(&m, &warn, None).unwrap();
    let d = s.gate(&act);
    assert_eq!(d.verdict, Verdict::Warn);
    let reason = s.reason(&d);
    assert!(
        reason.ends_with(
            "; most probable continuation: a step from safe to mild (53.3% of the risk, path probability 0.200)"
        ),
        "{reason}"
    );
    let r = serde_json::to_value(s.report(&d, "x")).unwrap();
    assert_eq!(r["continuation"]["next"], "mild");
    assert_eq!(r["continuation"]["action"], "a step from safe to mild");
    assert!((r["continuation"]["share"].as_f64().unwrap() - 0.2 / 0.375).abs() < 1e-12);
    let allow = policy("version = 1\nthresholds = [{ at = 0.5, verdict = \"warn\" }]\n");
    let mut s = Session::new(&m, &allow, None).unwrap();
    let d = s.gate(&act);
    assert_eq!(d.verdict, Verdict::Allow);
    assert!(!s.reason(&d).contains("continuation"));
    assert!(serde_json::to_value(s.report(&d, "x"))
        .unwrap()
        .get("continuation")
        .is_none());
}

#[test]
fn dtr_steps_in_words() {
    use augur_gate::dtr::{DataExposure as D, Prov, Reversibility as R, ToolEscalation as T};
    let st = |d, t, r| SafetyState::new(d, t, r);
    let a = st(D::Internal, T::ReadOnly, R::FullyReversible);
    let cases = [
        (
            st(D::Sensitive, T::Network, R::FullyReversible),
            "a network send of sensitive data",
        ),
        (
            st(D::Sensitive, T::Network, R::Irreversible),
            "an irreversible network send of sensitive data",
        ),
        (
            st(D::Internal, T::FileWrite, R::Partially),
            "a partly reversible file write with internal data exposed",
        ),
        (
            st(D::Credentials, T::ReadOnly, R::FullyReversible),
            "a read of credentials",
        ),
        (
            st(D::Internal, T::CodeExec, R::FullyReversible),
            "a code run with internal data exposed",
        ),
    ];
    for (b, want) in cases {
        assert_eq!(dtr_action_for_tests(a, b), want);
    }
    // t already at NETWORK: the tool is not known, only what it exposed.
    let n = st(D::Internal, T::Network, R::Irreversible);
    assert_eq!(
        dtr_action_for_tests(n, st(D::Sensitive, T::Network, R::Irreversible)),
        "an irreversible action exposing sensitive data"
    );
    assert_eq!(
        dtr_action_for_tests(
            a,
            st(D::Internal, T::Network, R::Irreversible).with_p(Prov::Untrusted)
        ),
        "an irreversible network send with internal data exposed to an untrusted destination"
    );
}

fn dtr_action_for_tests(a: SafetyState, b: SafetyState) -> String {
    augur_gate::session::dtr_action(a, b)
}

/// Random counts over a random small chain: the learned intervals hold the point chain
/// (Laplace-smoothed with α), and Pmax ≥ P in every state, for bounded and unbounded
/// reachability, as the checker computes them on the two models.
fn counts_strategy() -> impl Strategy<Value = (usize, Vec<Vec<u64>>, f64, f64)> {
    (2usize..5).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec(prop::collection::vec(0u64..60, n), n),
            prop::sample::select(vec![0.1, 0.5, 1.0, 5.0, 50.0]),
            prop::sample::select(vec![0.5, 0.9, 0.95, 0.99]),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn the_bound_is_never_below_the_point_value((n, rows, alpha, conf) in counts_strategy()) {
        let mut counts = augur_learn::TransitionCounts::new(n);
        for (s, row) in rows.iter().enumerate() {
            for (t, &c) in row.iter().enumerate() {
                for _ in 0..c {
                    counts.observe_trace(&[s as u32, t as u32], &augur_learn::learn::AllValid);
                }
            }
        }
        let mut d = augur_learn::learn::learn(&counts, &augur_learn::learn::AllValid, alpha).unwrap().dtmc;
        let mut set = augur_dtmc::StateSet::with_capacity(n);
        set.insert(n - 1);
        d.labels.push(("t".into(), set));
        d.initial = vec![0];
        let iv = intervals_from_counts(&d, &counts, conf).unwrap();
        let Intervals { lo, hi, .. } = iv.intervals.as_deref().unwrap().clone();
        for s in 0..n as u32 {
            for k in d.row_range(s as usize) {
                let t = d.matrix.indices()[k];
                let j = iv.transition_index(s, t).expect("every point transition kept");
                let p = d.matrix.data()[k];
                prop_assert!(lo[j] <= p && p <= hi[j], "{s}->{t}: {p} not in [{}, {}]", lo[j], hi[j]);
            }
        }
        for (pmax, p) in [
            ("Pmax=? [ F<=3 \"t\" ]", "P=? [ F<=3 \"t\" ]"),
            ("Pmax=? [ F \"t\" ]", "P=? [ F \"t\" ]"),
        ] {
            let nums = |r: augur_check::CheckResult| match r.states {
                augur_check::StateValues::Num(v) => v.values,
                augur_check::StateValues::Bool(_) => unreachable!("a probability"),
            };
            let up = nums(augur_check::check_str(&iv, pmax).unwrap());
            let point = nums(augur_check::check_str(&d, p).unwrap());
            for s in 0..n {
                prop_assert!(up[s] >= point[s] - 1e-5, "{pmax} at {s}: {} < {}", up[s], point[s]);
            }
        }
    }
}
