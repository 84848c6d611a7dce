//! Co-safe LTL rewards `R=? [ φ ]` through `augur check` (PRISM's co-safe LTL reward: the
//! reward accumulated until the path's prefix satisfies φ), on a DTMC and an interval DTMC,
//! with the default method (sound bounds) and `--method exact`. The values are derived by hand
//! in the comments (the unit tests of `augur-check`'s `ltl_reward` derive them at length).

use crate::util::{self, augur, code, stderr, stdout_json};
use serde_json::Value as Json;

fn fixture(name: &str) -> String {
    util::fixture(&format!("ltl_reward/{name}"))
        .display()
        .to_string()
}

/// The JSON result of each property under `method`.
fn results(model: &str, props: &[&str], method: &str) -> Vec<Json> {
    let mut args = vec![
        "check".to_string(),
        model.to_string(),
        "--method".into(),
        method.into(),
        "--json".into(),
    ];
    for p in props {
        args.push("--prop".into());
        args.push((*p).into());
    }
    let out = augur(&args);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    stdout_json(&out)["results"]
        .as_array()
        .expect("results")
        .clone()
}

/// Each property's exact value (`--method exact`, "inf" for infinity), after checking that the
/// default method's bounds contain it (the value itself when it is an exact integer or
/// infinity, else within 1e-9 relative).
fn exact_within_bounds(model: &str, props: &[&str]) -> Vec<String> {
    let exact = results(model, props, "exact");
    let float = results(model, props, "auto");
    let mut out = Vec::new();
    for ((e, f), p) in exact.iter().zip(&float).zip(props) {
        let (text, value) = match (&e["exact"], &e["value"]) {
            (Json::String(q), v) => (q.clone(), v.as_f64().expect("a number")),
            (_, Json::String(s)) if s == "inf" => ("inf".to_string(), f64::INFINITY),
            other => panic!("{p}: {other:?}"),
        };
        if value.is_infinite() {
            assert_eq!(f["value"], "inf", "{p}: {f}");
        } else {
            let b = f["bounds"].as_array().expect("bounds");
            let (lo, hi) = (b[0].as_f64().unwrap(), b[1].as_f64().unwrap());
            let slack = 1e-9 * value.abs().max(1.0);
            assert!(
                lo - slack <= value && value <= hi + slack,
                "{p}: exact {text} outside the default method's bounds [{lo}, {hi}]"
            );
        }
        out.push(text);
    }
    out
}

/// `cycle.pm`: 0 → 1 or 2 (1/2 each) → 0; reward "r" 1, 2, 4 in the states and 10 on 1 → 0.
/// * `(F "one") & (F "two")`: the path alternates 0 and excursions x₁, x₂, …; the prefix is
///   good at the first excursion `x_k` of the other type than x₁ (k − 1 geometric(1/2):
///   E[k] = 3). Counted (PRISM): the k states 0 (1 each), the k − 1 excursions of x₁'s type
///   (mean reward 3), the k − 1 returns from them (10 each when x₁ = 1): 3 + 2·3 + ½·2·10 = 19;
///   with "time" (one per state before the completing one): 2k − 1 → 5.
/// * `X F s=0`: the first state counts though it satisfies `s=0`: from 0, 1 + 3 + ½·10 = 9.
/// * `(s=0 | s=1) U s=2` = `F s=2` (the path stays in 0, 1 before 2): x₀ = 1 + ½·x₁,
///   x₁ = 2 + 10 + x₀ → 14. `s=0 U s=2` fails in 1 (probability ½): infinite.
/// * `filter(avg, …)` of `X F s=0` over 0, 1, 2: (9 + 12 + 4)/3 = 25/3; `R<=20` of the until
///   holds in 0 (14).
#[test]
fn dtmc_values_derived_by_hand() {
    let m = fixture("cycle.pm");
    let got = exact_within_bounds(
        &m,
        &[
            "R{\"r\"}=? [ (F \"one\") & (F \"two\") ]",
            "R{\"time\"}=? [ (F \"one\") & (F \"two\") ]",
            "R{\"r\"}=? [ X F s=0 ]",
            "R{\"r\"}=? [ (s=0 | s=1) U s=2 ]",
            "R{\"r\"}=? [ F s=2 ]",
            "R{\"r\"}=? [ s=0 U s=2 ]",
            "filter(avg, R{\"r\"}=? [ X F s=0 ])",
        ],
    );
    assert_eq!(got, ["19", "5", "9", "14", "14", "inf", "25/3"]);
    let b = results(&m, &["R{\"r\"}<=20 [ (s=0 | s=1) U s=2 ]"], "auto");
    assert_eq!(b[0]["value"], true);
    // Nested: `X F s=0` is 9, 12, 4 in the states 0, 1, 2: `R<=10` holds in 0 and 2 (count 2),
    // `R>10` in 1 only, reached from 0 in one step with probability 1/2.
    let got = exact_within_bounds(&m, &["P=? [ X R{\"r\"}>10 [ X F s=0 ] ]"]);
    assert_eq!(got, ["1/2"]);
    let c = results(&m, &["filter(count, R{\"r\"}<=10 [ X F s=0 ])"], "exact");
    assert_eq!(c[0]["value"].as_f64(), Some(2.0));
}

/// `cycle-intervals.pm`: the excursion's probabilities in [1/4, 3/4]. Nature, knowing which
/// goal was visited (the product's automaton state), makes the completing excursion as unlikely
/// (`Rmax`: 1/4, E[k] = 5, time 2·5 − 1 = 9) or as likely (`Rmin`: 3/4, E[k] = 7/3, time 11/3)
/// as it can; `X F s=0` from 0 is 1 + the excursion's reward: at most ¼·2 + ¾·4 (9/2 in all),
/// at least ¾·2 + ¼·4 (7/2).
#[test]
fn interval_values_derived_by_hand() {
    let m = fixture("cycle-intervals.pm");
    let got = exact_within_bounds(
        &m,
        &[
            "R{\"time\"}max=? [ (F \"one\") & (F \"two\") ]",
            "R{\"time\"}min=? [ (F \"one\") & (F \"two\") ]",
            "R{\"r\"}max=? [ X F s=0 ]",
            "R{\"r\"}min=? [ X F s=0 ]",
        ],
    );
    assert_eq!(got, ["9", "11/3", "9/2", "7/2"]);
    // Nested: `Rmin` of `X F s=0` is 7/2, 2, 4 in 0, 1, 2: above 3 in 0 and 2; nature reaches
    // 2 from 0 with at most 3/4.
    let got = exact_within_bounds(&m, &["Pmax=? [ X R{\"r\"}min>3 [ X F s=0 ] ]"]);
    assert_eq!(got, ["3/4"]);
}

/// Only the co-safe R formulas changed: `R=? [ F φ ]` stays the PCTL reachability reward
/// (its method names no product).
#[test]
fn plain_eventually_stays_pctl() {
    let r = results(&fixture("cycle.pm"), &["R{\"r\"}=? [ F s=2 ]"], "auto");
    let method = r[0]["method"].as_str().unwrap();
    assert!(!method.contains("product"), "{method}");
}

/// The product (10 states here: 3 chain states times the automaton of `(F a) & (F b)`) counts
/// against `--max-states`, on a DTMC and on an interval DTMC: past it, an error at the `R`
/// operator naming the option, exit code 1; never a value.
#[test]
fn the_product_counts_against_the_state_limit() {
    for (model, prop) in [
        ("cycle.pm", "R=? [ (F \"one\") & (F \"two\") ]"),
        ("cycle-intervals.pm", "Rmax=? [ (F \"one\") & (F \"two\") ]"),
    ] {
        let m = fixture(model);
        let out = augur(&["check", &m, "--max-states", "5", "--prop", prop]);
        assert_eq!(code(&out), 1, "{prop}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("more than 5 states") && err.contains("--max-states"),
            "{err}"
        );
        assert!(err.contains("--prop:1:1"), "{err}");
        let out = augur(&["check", &m, "--max-states", "10", "--prop", prop]);
        assert_eq!(code(&out), 0, "{prop}: {}", stderr(&out));
    }
}
