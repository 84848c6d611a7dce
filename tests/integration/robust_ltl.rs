//! LTL on interval DTMCs (issue 23, item 2): co-safe and safe formulas, and those that are
//! neither (`G F`, `F G`): `Pmin`/`Pmax` through the
//! interval product with the formula's automaton, with the default method (sound bounds) and
//! `--method exact` (rationals). Values are derived by hand in the comments.

use crate::util::{self, augur, code, stderr, stdout_json};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writing a test model");
    p
}

/// `(exact, value, bounds)` of each property under `method`.
fn results(model: &Path, props: &[&str], method: &str) -> Vec<(Option<String>, f64, Vec<f64>)> {
    let mut args = vec![
        "check".to_string(),
        model.display().to_string(),
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
        .iter()
        .map(|r| {
            let bounds = r["bounds"]
                .as_array()
                .map(|b| b.iter().filter_map(|x| x.as_f64()).collect())
                .unwrap_or_default();
            (
                r["exact"].as_str().map(str::to_string),
                r["value"].as_f64().unwrap_or(f64::NAN),
                bounds,
            )
        })
        .collect()
}

/// Exact values, and each within the default method's guaranteed bounds.
fn exact_within_bounds(model: &Path, props: &[&str]) -> Vec<String> {
    let exact = results(model, props, "exact");
    let float = results(model, props, "auto");
    for ((e, f), p) in exact.iter().zip(&float).zip(props) {
        let (lo, hi) = (f.2[0], f.2[1]);
        assert!(
            lo <= e.1 && e.1 <= hi,
            "{p}: exact {:?} = {} outside the float bounds [{lo}, {hi}]",
            e.0,
            e.1
        );
    }
    exact
        .into_iter()
        .map(|e| e.0.expect("an exact value"))
        .collect()
}

/// Nature trades between the goals: from 0, `p ∈ [0.2,0.8]` to `a` (1), the rest to `b` (2);
/// `a` goes on to `b` with `q₁ ∈ [0.1,0.5]`, `b` to `a` with `q₂ ∈ [0.3,0.6]`, else the sink 3.
/// `(F a) & (F b)` = `p·q₁ + (1−p)·q₂`: max 0.2·0.5 + 0.8·0.6 = 29/50, min 0.8·0.1 + 0.2·0.3 =
/// 7/50; its negation `G !a | G !b` is safe: 1 − those, min and max swapped.
const TRADE: &str = "dtmc
module m
  s : [0..3] init 0;
  [] s=0 -> [0.2,0.8] : (s'=1) + [0.2,0.8] : (s'=2);
  [] s=1 -> [0.1,0.5] : (s'=2) + [0.5,0.9] : (s'=3);
  [] s=2 -> [0.3,0.6] : (s'=1) + [0.4,0.7] : (s'=3);
  [] s=3 -> true;
endmodule
label \"a\" = s=1;
label \"b\" = s=2;
";

/// Nature with memory: each visit to 0 ends in the sink with probability 1/2 and splits the
/// rest between `a` and `b`, which both return to 0. Remembering what was seen, nature sends
/// the first half to `a` and the second to `b`: Pmax `(F a) & (F b)` = 1/4 (a memoryless
/// split reaches at most 1/6); from `a` only `b` is missing: 1/2; Pmin = 0.
const MEMORY: &str = "dtmc
module m
  s : [0..3] init 0;
  [] s=0 -> [0,1] : (s'=1) + [0,1] : (s'=2) + [1/2,1/2] : (s'=3);
  [] s=1 | s=2 -> 1 : (s'=0);
  [] s=3 -> true;
endmodule
label \"a\" = s=1;
label \"b\" = s=2;
";

#[test]
fn cosafe_and_safe_ltl_have_their_hand_derived_values() {
    let dir = tempfile::tempdir().unwrap();
    let trade = write(dir.path(), "trade.pm", TRADE);
    assert_eq!(
        exact_within_bounds(
            &trade,
            &[
                "Pmax=? [ (F \"a\") & (F \"b\") ]",
                "Pmin=? [ (F \"a\") & (F \"b\") ]",
                "Pmax=? [ (G !\"a\") | (G !\"b\") ]",
                "Pmin=? [ (G !\"a\") | (G !\"b\") ]",
            ]
        ),
        ["29/50", "7/50", "43/50", "21/50"]
    );
    let memory = write(dir.path(), "memory.pm", MEMORY);
    assert_eq!(
        exact_within_bounds(
            &memory,
            &[
                "Pmax=? [ (F \"a\") & (F \"b\") ]",
                "Pmin=? [ (F \"a\") & (F \"b\") ]",
                "filter(max, Pmax=? [ (F \"a\") & (F \"b\") ], s=1)",
                // Within 3 steps (0, a, 0, b) the same 1/4; within 2, b is out of reach.
                "Pmax=? [ (F<=3 \"a\") & (F<=3 \"b\") ]",
                "Pmax=? [ (F<=2 \"a\") & (F<=2 \"b\") ]",
                // a and b both hold with Pmax 1/2, s=0 has 1/4: two states above 0.3.
                "filter(count, Pmax>0.3 [ (F \"a\") & (F \"b\") ])",
            ]
        ),
        ["1/4", "0", "1/2", "1/4", "0", "2"]
    );
}

/// die-intervals.pm: `d=1` holds only in `s=7`, so `(F d=1) & (F s=7)` is `F (s=7 & d=1)`,
/// whose values are derived in `robust_exact.rs`: 8/21 and 1/21 (the issue's example).
#[test]
fn the_issues_example_is_answered() {
    let die = util::fixture("idtmc/die-intervals.pm");
    assert_eq!(
        exact_within_bounds(
            &die,
            &[
                "Pmax=? [ (F d=1) & (F s=7) ]",
                "Pmin=? [ (F d=1) & (F s=7) ]"
            ]
        ),
        ["8/21", "1/21"]
    );
}

/// Formulas that are neither co-safe nor safe (issue 23): `d=1` holds only in the absorbing
/// `s=7, d=1`, so `G F d=1` and `F G d=1` are `F (s=7 & d=1)`: 8/21 and 1/21, as above. In
/// `MEMORY` every visit to `s=0` falls to the trap with 1/2, so no run sees `a` forever:
/// `Pmax(G F a) = 0`, and `Pmin(F G !a) = 1`.
#[test]
fn g_f_and_f_g_are_answered() {
    let die = util::fixture("idtmc/die-intervals.pm");
    assert_eq!(
        exact_within_bounds(
            &die,
            &[
                "Pmax=? [ G F d=1 ]",
                "Pmin=? [ G F d=1 ]",
                "Pmax=? [ F G d=1 ]",
                "Pmin=? [ F G d=1 ]",
                "Pmin=? [ G F s=7 ]",
            ]
        ),
        ["8/21", "1/21", "8/21", "1/21", "1"]
    );
    let dir = tempfile::tempdir().unwrap();
    let memory = write(dir.path(), "memory.pm", MEMORY);
    assert_eq!(
        exact_within_bounds(&memory, &["Pmax=? [ G F \"a\" ]", "Pmin=? [ F G !\"a\" ]"]),
        ["0", "1"]
    );
}

/// Every state to every state with `[0, 1]`.
const COMPLETE: &str = "dtmc
module m
  s : [0..4] init 0;
  [] true -> [0,1] : (s'=0) + [0,1] : (s'=1) + [0,1] : (s'=2) + [0,1] : (s'=3) + [0,1] : (s'=4);
endmodule
label \"a\" = s<=2;
label \"b\" = s=1 | s=3;
";

/// Limits are located user errors: the product counts against `--max-states`, and a formula
/// that is neither co-safe nor safe may have at most 10 temporal subformulas (its automaton
/// guesses among the sets of them).
#[test]
fn refusals_are_located_user_errors() {
    let die = util::fixture("idtmc/die-intervals.pm");
    let die = die.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = augur(args);
        assert_eq!(code(&out), 1, "{args:?}: {}", stderr(&out));
        stderr(&out)
    };
    insta::assert_snapshot!(
        "product_limit",
        run(&[
            "check",
            die,
            "--max-states",
            "15",
            "--prop",
            "Pmax=? [ (F d=1) & (F s=7) ]"
        ])
    );
    insta::assert_snapshot!(
        "omega_product_limit",
        run(&[
            "check",
            die,
            "--max-states",
            "40",
            "--prop",
            "Pmax=? [ G F d=1 ]"
        ])
    );
    let dir = tempfile::tempdir().unwrap();
    let complete = write(dir.path(), "complete.pm", COMPLETE);
    let complete = complete.to_str().unwrap();
    insta::assert_snapshot!(
        "too_many_guesses",
        run(&[
            "check",
            complete,
            "--prop",
            "Pmax=? [ G F s=0 & G F s=1 & G F s=2 & G F s=3 & G F s=4 & G F \"a\" ]"
        ])
    );
    // Within the limits it is answered: nature keeps `s=3` forever (`a` never holds).
    assert_eq!(
        exact_within_bounds(
            Path::new(complete),
            &["Pmax=? [ F G (\"a\" => X X \"b\") ]"]
        ),
        ["1"]
    );
}
