//! `--method exact` on interval DTMCs (issue 23, item 3): `Pmin`/`Pmax` in rationals by policy
//! iteration over nature's choices. Expected values are derived by hand in the comments, or
//! are PRISM's RESULT values of its interval-DTMC regression tests (`test.prism`, quoted).

use crate::util::{self, augur, code, stderr, stdout_json};
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writing a test model");
    p
}

/// The exact result (`"exact"`) and the `value` of each property, in order.
fn exact_results(
    model: &Path,
    props: &[&str],
    method: &str,
) -> Vec<(Option<String>, f64, Vec<f64>)> {
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
    let json = stdout_json(&out);
    json["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let bounds = r["bounds"]
                .as_array()
                .map(|b| b.iter().map(|x| x.as_f64().unwrap()).collect())
                .unwrap_or_default();
            (
                r["exact"].as_str().map(str::to_string),
                r["value"].as_f64().expect("a number"),
                bounds,
            )
        })
        .collect()
}

/// PRISM's `test.prism` (prism-tests/functionality/verify/idtmc): from 0, `[0.1,0.2]` to 1 and
/// `[0.8,0.9]` to 2, both absorbing. Its RESULT lines: Pmin/Pmax of `F s=1` are 0.1/0.2, of
/// `F s=2` 0.8/0.9, and `G !s=1` is the complement of `F s=1` with min and max swapped.
const PRISM_TEST: &str = "dtmc
module M
	s : [0..3];
	[] s=0 -> [0.1,0.2]:(s'=1) + [0.8,0.9]:(s'=2);
	[] s>0 -> true;
endmodule
";

#[test]
fn prism_idtmc_test_results_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "test.prism", PRISM_TEST);
    let got = exact_results(
        &m,
        &[
            "Pmin=? [ F s=1 ]",
            "Pmax=? [ F s=1 ]",
            "Pmin=? [ F s=2 ]",
            "Pmax=? [ F s=2 ]",
            "Pmin=? [ G !s=1 ]",
            "Pmax=? [ G !s=1 ]",
            "Pmin=? [ G !s=2 ]",
            "Pmax=? [ G !s=2 ]",
        ],
        "exact",
    );
    let exact: Vec<&str> = got.iter().map(|g| g.0.as_deref().unwrap()).collect();
    assert_eq!(
        exact,
        ["1/10", "1/5", "4/5", "9/10", "4/5", "9/10", "1/10", "1/5"]
    );
}

/// From 0: `[1/3,2/3]` to 1 and `[1/3,2/3]` to the goal 2; from 1: `[1/2,1]` back to 0 and
/// `[0,1/2]` to the failure 3. `Pmin`: nature sends 1/2 of 1's mass to 3 (x1 = x0/2) and 2/3
/// of 0's to 1 (x1 < 1): x0 = 2/3·x0/2 + 1/3, so x0 = 1/2, x1 = 1/4. `Pmax`: 1 returns all its
/// mass to 0 (x1 = x0) and 0 gives 2/3 to the goal: x0 = 1/3·x0 + 2/3, so x0 = 1.
/// `Pmax [ X s=2 ]` = 2/3, `Pmin [ F<=2 s=2 ]` = 1/3 (0 → 1 → 0 needs two steps, 0 → 2 one).
/// The bounds are thirds: only the rational builder gets them exactly.
const LOOP: &str = "dtmc
module m
  s : [0..3] init 0;
  [] s=0 -> [1/3,2/3] : (s'=1) + [1/3,2/3] : (s'=2);
  [] s=1 -> [1/2,1] : (s'=0) + [0,1/2] : (s'=3);
  [] s>1 -> true;
endmodule
";

#[test]
fn a_loop_with_thirds_has_its_hand_derived_values() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "loop.pm", LOOP);
    let got = exact_results(
        &m,
        &[
            "Pmin=? [ F s=2 ]",
            "Pmax=? [ F s=2 ]",
            "Pmax=? [ X s=2 ]",
            "Pmin=? [ F<=2 s=2 ]",
            "filter(max, Pmin=? [ F s=2 ], s=1)",
            "Pmax=? [ s<2 U s=2 ]",
            "Pmin=? [ G s!=3 ]",
        ],
        "exact",
    );
    let exact: Vec<&str> = got.iter().map(|g| g.0.as_deref().unwrap()).collect();
    // G s!=3 = 1 - F s=3 with min and max swapped: Pmax [ F s=3 ] from 0: 1 sends 1/2 to 3,
    // 0 sends 2/3 to 1: y0 = 2/3·(1/2 + y0/2) = 1/3 + y0/3, y0 = 1/2; so Pmin G = 1/2.
    assert_eq!(exact, ["1/2", "1", "2/3", "1/3", "1/4", "1", "1/2"]);
}

/// die-intervals.pm (Storm's and PRISM's Knuth die with nature-controlled coins, every coin
/// `[1/3,2/3]`). d=1 is reached only through 0 →(a) 1 →(b) 3, and 3 →(c) 1 or →(1−c) d=1:
/// x1 = b·(1−c)/(1−b·c), x0 = a·x1, increasing in a and b, decreasing in c. Max: a = b = 2/3,
/// c = 1/3: x1 = (4/9)/(7/9) = 4/7, x0 = 8/21. Min: a = b = 1/3, c = 2/3: x1 = (1/9)/(7/9),
/// x0 = 1/21. The exact values must also lie within the default method's guaranteed bounds
/// (an independent algorithm: interval iteration with deflation).
#[test]
fn die_intervals_exact_is_within_the_float_bounds() {
    let m = util::fixture("idtmc/die-intervals.pm");
    let props = [
        "Pmax=? [ F s=7 & d=1 ]",
        "Pmin=? [ F s=7 & d=1 ]",
        "Pmax=? [ F s=7 & d=6 ]",
        "Pmin=? [ F \"done\" ]",
    ];
    let exact = exact_results(&m, &props, "exact");
    let float = exact_results(&m, &props, "auto");
    for ((e, f), p) in exact.iter().zip(&float).zip(props) {
        let (lo, hi) = (f.2[0], f.2[1]);
        assert!(
            lo <= e.1 && e.1 <= hi,
            "{p}: exact {:?} = {} outside the float bounds [{lo}, {hi}]",
            e.0,
            e.1
        );
    }
    assert_eq!(exact[0].0.as_deref(), Some("8/21"));
    assert_eq!(exact[1].0.as_deref(), Some("1/21"));
    assert_eq!(exact[3].0.as_deref(), Some("1"));
}

/// An explicit file's decimals are the rationals written: `[0.1, 0.3]` is 1/10..3/10.
#[test]
fn explicit_interval_files_are_read_as_written() {
    let dir = tempfile::tempdir().unwrap();
    // From 0: [0.1,0.3] to 1, [0.7,0.9] to 2 (absorbing). Pmax F s=1 = 3/10, Pmin = 1/10.
    let tra = write(
        dir.path(),
        "m.tra",
        "3 4\n0 1 [0.1,0.3]\n0 2 [0.7,0.9]\n1 1 [1,1]\n2 2 [1,1]\n",
    );
    write(dir.path(), "m.lab", "0=\"init\" 1=\"goal\"\n0: 0\n1: 1\n");
    let out = augur(&[
        "check",
        tra.to_str().unwrap(),
        "--method",
        "exact",
        "--prop",
        "Pmax=? [ F \"goal\" ]",
        "--prop",
        "Pmin=? [ F \"goal\" ]",
        "--json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json = stdout_json(&out);
    assert_eq!(json["results"][0]["exact"], "3/10");
    assert_eq!(json["results"][1]["exact"], "1/10");
}

fn user_error(args: &[&str]) -> String {
    let out = util::augur(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    err
}

/// A walk of 2501 states: above the exact robust solver's limit.
const BIG: &str = "dtmc
module w
  x : [0..2500] init 0;
  [] x<2500 -> [1/4,3/4] : (x'=x+1) + [1/4,3/4] : (x'=0);
  [] x=2500 -> true;
endmodule
";

#[test]
fn refusals_are_located_user_errors() {
    let dir = tempfile::tempdir().unwrap();
    let big = write(dir.path(), "big.pm", BIG);
    let die = util::fixture("idtmc/die-intervals.pm");
    let die = die.to_str().unwrap();
    insta::assert_snapshot!(
        "too_large",
        user_error(&[
            "check",
            big.to_str().unwrap(),
            "--method",
            "exact",
            "--prop",
            "Pmax=? [ F x=2500 ]"
        ])
    );
    insta::assert_snapshot!(
        "total_rewards",
        user_error(&[
            "check",
            die,
            "--method",
            "exact",
            "--prop",
            "R{\"coin_flips\"}max=? [ C ]"
        ])
    );
}

/// Intervals that are all points are a DTMC with those exact probabilities (`[1/3,1/3]` is
/// 1/3, not the double nearest it), and thresholds are compared exactly: die-intervals'
/// `Pmax` is exactly 8/21 (see above), so `>= 8/21` holds and `> 8/21` does not.
#[test]
fn point_intervals_and_thresholds_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "points.pm",
        "dtmc\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> [1/3,1/3] : (s'=1) + [2/3,2/3] : (s'=2);\n  [] s>0 -> true;\nendmodule\n",
    );
    let got = exact_results(&m, &["Pmax=? [ F s=1 ]"], "exact");
    assert_eq!(got[0].0.as_deref(), Some("1/3"));
    let die = util::fixture("idtmc/die-intervals.pm");
    let out = augur(&[
        "check",
        die.to_str().unwrap(),
        "--method",
        "exact",
        "--prop",
        "Pmax>=8/21 [ F s=7 & d=1 ]",
        "--prop",
        "Pmax>8/21 [ F s=7 & d=1 ]",
        "--json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json = stdout_json(&out);
    assert_eq!(json["results"][0]["value"], true);
    assert_eq!(json["results"][1]["value"], false);
}

/// Lower step bounds, as the default method computes them (the remainder, then sweeps of
/// "stay in φ"). The retry loop: from 0, `a ∈ [0.2,0.5]` to the goal (absorbing), `b ∈
/// [0.1,0.3]` to failure, `c ∈ [0.3,0.6]` back. `F[2,2] goal`: one step to a state whose `X
/// goal` is at most 1/2 (0) or 1 (the goal): max `a + c·1/2` = 1/2 + 2/5·1/2 = 7/10, min
/// `1/5 + 1/2·1/5` = 3/10. `F>=2 goal` is `F goal` here (the goal is absorbing): 5/6 and 2/5.
/// `true U[2,2] s=0`: in `s=0` after exactly two steps, `c` twice: max 3/5 · 3/5 = 9/25.
#[test]
fn lower_step_bounds_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "retry.pm",
        "dtmc\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> [0.2,0.5] : (s'=1) + [0.1,0.3] : (s'=2) + [0.3,0.6] : (s'=0);\n  [] s>0 -> true;\nendmodule\nlabel \"goal\" = s=1;\n",
    );
    let props = [
        "Pmax=? [ F[2,2] \"goal\" ]",
        "Pmin=? [ F[2,2] \"goal\" ]",
        "Pmax=? [ F>=2 \"goal\" ]",
        "Pmin=? [ F>=2 \"goal\" ]",
        "Pmax=? [ true U[2,2] s=0 ]",
    ];
    let exact = exact_results(&m, &props, "exact");
    let got: Vec<&str> = exact.iter().map(|g| g.0.as_deref().unwrap()).collect();
    assert_eq!(got, ["7/10", "3/10", "5/6", "2/5", "9/25"]);
}

/// Rewards in rationals. die-intervals' coin flips until `s=7` (transition rewards, one per
/// flip): from 1, `E₁ = 1 + b·(1 + c·E₁) + (1 − b)·1` (3 returns to 1 with `c`, 4 ends), so
/// `E₁ = 2/(1 − b·c)`; `E₀ = 1 + E₁` (2 is 1's mirror). Rmin at `b·c = 1/9`: 9/4 + 1 = 13/4;
/// Rmax at `b·c = 4/9`: 18/5 + 1 = 23/5. `C<=3`: three flips on every path (no run ends in
/// fewer than three steps): 3. An idle state (`[0,1]` on itself, reward 0) before a step of
/// reward 1: Rmin = 1 (idling forever is worth ∞), Rmax = ∞ (nature idles).
#[test]
fn rewards_are_exact() {
    let die = util::fixture("idtmc/die-intervals.pm");
    let props = [
        "R{\"coin_flips\"}min=? [ F s=7 ]",
        "R{\"coin_flips\"}max=? [ F s=7 ]",
        "R{\"coin_flips\"}max=? [ C<=3 ]",
    ];
    let exact = exact_results(&die, &props, "exact");
    let float = exact_results(&die, &props, "auto");
    let got: Vec<&str> = exact.iter().map(|g| g.0.as_deref().unwrap()).collect();
    assert_eq!(got, ["13/4", "23/5", "3"]);
    // The default method's step-bounded values are exact up to rounding (its `C<=3` is
    // 3.0000000000000004: thirds in doubles), hence the few ulps.
    for ((e, f), p) in exact.iter().zip(&float).zip(props) {
        let ulps = 8.0 * f64::EPSILON * e.1;
        assert!(
            f.2[0] - ulps <= e.1 && e.1 <= f.2[1] + ulps,
            "{p}: {} outside {:?}",
            e.1,
            f.2
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let idle = write(
        dir.path(),
        "idle.pm",
        "dtmc\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> [0,1] : (s'=0) + [0,1] : (s'=1);\n  [] s=1 -> 1 : (s'=2);\n  [] s=2 -> true;\nendmodule\nrewards \"r\" s=1 : 1; endrewards\n",
    );
    let out = augur(&[
        "check",
        idle.to_str().unwrap(),
        "--method",
        "exact",
        "--prop",
        "R{\"r\"}min=? [ F s=2 ]",
        "--prop",
        "R{\"r\"}max=? [ F s=2 ]",
        "--json",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let json = stdout_json(&out);
    assert_eq!(json["results"][0]["exact"], "1");
    assert_eq!(json["results"][1]["value"], "inf");
}

/// Storm's `RobustDtmcPrctlModelCheckerTest` values for brp-32-2 (`P{} [ F "error" ]`: min
/// 2.559615918664207e-10, max 0.0008464876763422187, from Storm's value iteration), answered
/// exactly to within Storm's 1e-6 (relative); and die-intervals' `F "one"`, 9/189 and 72/189.
#[test]
fn storm_reference_values_are_met_exactly() {
    let brp = util::fixture("idtmc/brp-32-2-intervals.pm");
    let got = exact_results(
        &brp,
        &["Pmin=? [ F \"error\" ]", "Pmax=? [ F \"error\" ]"],
        "exact",
    );
    for ((_, v, _), want) in got
        .iter()
        .zip([2.559615918664207e-10, 0.0008464876763422187])
    {
        assert!((v - want).abs() <= 1e-6 * want, "{v} vs Storm's {want}");
    }
    let die = util::fixture("idtmc/die-intervals.pm");
    let got = exact_results(
        &die,
        &["Pmin=? [ F \"one\" ]", "Pmax=? [ F \"one\" ]"],
        "exact",
    );
    assert_eq!(got[0].0.as_deref(), Some("1/21"));
    assert_eq!(got[1].0.as_deref(), Some("8/21"));
}

/// An explicit interval model the reading normalises: state 1's loop `[0.9999999995,
/// 0.9999999995]` holds no distribution as written (the float check tolerates its 5e-10
/// shortfall and scales the row to sum to 1); state 2's lower bound `1e-13` is kept as
/// written (an exit nature cannot avoid). Nature sends 1/4..3/4 from state 0 to the loop
/// (`a`), the rest to state 2, which may stay a while but must leave to the absorbing state 3.
const NORMALISED_TRA: &str = "4 6
0 1 [0.25,0.75]
0 2 [0.25,0.75]
1 1 [0.9999999995,0.9999999995]
2 2 [0,1]
2 3 [1e-13,0.5]
3 3 [1,1]
";

/// The same model as written without anything to normalise.
const CLEAN_TRA: &str = "4 6
0 1 [0.25,0.75]
0 2 [0.25,0.75]
1 1 [1,1]
2 2 [0,1]
2 3 [0,0.5]
3 3 [1,1]
";

/// The notes of `augur check MODEL --prop PROP ARGS`: the human output's note lines and the
/// JSON's `notes`, which must say the same.
fn check_notes(model: &Path, prop: &str, args: &[&str]) -> Vec<String> {
    let mut human = vec!["check", model.to_str().unwrap(), "--prop", prop];
    human.extend_from_slice(args);
    let text = util::ok(&human);
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("  note: "))
        .map(str::to_string)
        .collect();
    human.push("--json");
    let out = augur(&human);
    assert_eq!(code(&out), 0, "{human:?}: {}", stderr(&out));
    let json = stdout_json(&out);
    let notes: Vec<String> = json["results"][0]["notes"]
        .as_array()
        .map(|a| a.iter().map(|n| n.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    assert_eq!(lines, notes, "{human:?}: human and JSON notes differ");
    notes
}

/// What the reading normalised within the load tolerance is said in the method and a note of
/// every robust result of the default method (human and JSON, with the rows counted in
/// `interval_rows_normalised`), and not for a model as written, nor under `--method exact`
/// (which reads the bounds as written); the qualitative answers (0 and 1) are those of the
/// model written without anything to normalise, computed exactly.
#[test]
fn normalised_interval_rows_are_noted() {
    let dir = tempfile::tempdir().unwrap();
    let lab = "0=\"init\" 1=\"a\"\n0: 0\n1: 1\n";
    let normalised = write(dir.path(), "normalised.tra", NORMALISED_TRA);
    write(dir.path(), "normalised.lab", lab);
    let clean = write(dir.path(), "clean.tra", CLEAN_TRA);
    write(dir.path(), "clean.lab", lab);
    let mut all = String::new();
    for prop in ["Pmax=? [ G F \"a\" ]", "Pmin=? [ F \"a\" ]"] {
        let notes = check_notes(&normalised, prop, &[]);
        assert_eq!(notes.len(), 1, "{prop}: {notes:?}");
        all.push_str(&format!("{prop}\n  note: {}\n", notes[0]));
        assert_eq!(
            check_notes(&clean, prop, &[]),
            Vec::<String>::new(),
            "{prop}"
        );
        let exact = check_notes(&clean, prop, &["--method", "exact"]);
        assert_eq!(exact, Vec::<String>::new(), "{prop}");
        let json = |model: &Path, extra: &[&str]| {
            let mut a = vec![
                "check",
                model.to_str().unwrap(),
                "--prop",
                prop,
                "--all-states",
                "--json",
            ];
            a.extend_from_slice(extra);
            let out = augur(&a);
            assert_eq!(code(&out), 0, "{a:?}: {}", stderr(&out));
            stdout_json(&out)["results"][0].clone()
        };
        let float = json(&normalised, &[]);
        assert_eq!(float["interval_rows_normalised"], 1, "{float}");
        let method = float["method"].as_str().unwrap();
        assert!(
            method.contains("1 row(s) scaled to hold a distribution"),
            "{method}"
        );
        all.push_str(&format!("  method: {method}\n"));
        let reference = json(&clean, &["--method", "exact"]);
        assert!(
            reference.get("interval_rows_normalised").is_none(),
            "{reference}"
        );
        for (f, q) in float["states"]
            .as_array()
            .unwrap()
            .iter()
            .zip(reference["states"].as_array().unwrap())
        {
            let q = q.as_f64().unwrap();
            if q == 0.0 || q == 1.0 {
                assert_eq!(f.as_f64().unwrap(), q, "{prop}: {float} vs {reference}");
            }
        }
    }
    insta::assert_snapshot!("normalised_note", all);
}
