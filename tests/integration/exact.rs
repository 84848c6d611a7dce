//! `--method exact` end to end: exact rationals reach the output (`--exact-format`, JSON),
//! explicit files are read as the decimals they are written in, thresholds are compared
//! exactly, rational `--const` values are exact in the PRISM builder, and `--const` ranges
//! (experiments). Every expected value is derived by hand (closed forms in the comments and in
//! `models/README.md`).

use crate::util::{self, augur, code, fail, ok, stderr, stdout_json};
use std::path::{Path, PathBuf};

fn model(name: &str) -> String {
    util::model(name).display().to_string()
}

/// Writes `text` to `dir/name` and returns its path.
fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("writing a test model");
    p
}

/// From 0: to 1 with 0.1, to 2 with 0.2, to 3 with 0.7; 1, 2, 3 absorbing. P(F s=1|s=2) is
/// 0.1 + 0.2 = 3/10 exactly, while 0.1 + 0.2 in doubles is 0.30000000000000004.
const POINT_THREE: &str = "dtmc
module m
  s : [0..3] init 0;
  [] s=0 -> 0.1 : (s'=1) + 0.2 : (s'=2) + 0.7 : (s'=3);
  [] s>0 -> true;
endmodule
label \"goal\" = s=1 | s=2;
";

/// From 0: to 1 with p, to 2 with 1-p; P(F s=1) = p.
const COIN: &str = "dtmc
const double p;
module m
  s : [0..2] init 0;
  [] s=0 -> p : (s'=1) + 1-p : (s'=2);
  [] s>0 -> true;
endmodule
";

/// Geometric trials with success p: P(F<=N g=1) = 1 - (1-p)^N.
const TRIALS: &str = "dtmc
const double p;
module trials
  g : [0..1] init 0;
  [] g=0 -> p : (g'=1) + 1-p : (g'=0);
  [] g=1 -> true;
endmodule
";

#[test]
fn exact_results_are_printed_as_fractions() {
    // models/README.md: P(win) = 32/275, P(ruin) = 243/275, E[duration] = 211/11 (closed
    // forms of the gambler's ruin with p = 0.4, N = 10, i = 5).
    let out = ok(&[
        "check",
        &model("gambler.drn"),
        &model("gambler.props"),
        "--method",
        "exact",
    ]);
    assert!(out.contains("win: P=? [ F \"win\" ] = 32/275 ("), "{out}");
    assert!(
        out.contains("ruin: P=? [ F \"ruin\" ] = 243/275 ("),
        "{out}"
    );
    assert!(
        out.contains("duration: R{\"steps\"}=? [ F \"done\" ] = 211/11 ("),
        "{out}"
    );
    // No rounded bounds next to an exact value.
    for line in out.lines() {
        let value = line.split(" ] = ").nth(1).unwrap_or("");
        assert!(!value.contains('['), "{line}");
    }
}

#[test]
fn exact_format_decimal_and_json() {
    // models/README.md: P(F "six") = 1/6, E[coin flips] = 11/3.
    let die = model("die.json");
    let out = ok(&[
        "check",
        &die,
        "--prop",
        "P=? [ F \"six\" ]",
        "--prop",
        "R{\"coin_flips\"}=? [ F \"done\" ]",
        "--prop",
        "P=? [ F \"one\" | \"two\" | \"three\" ]",
        "--method",
        "exact",
        "--exact-format",
        "decimal",
    ]);
    let sixth = format!("0.1{}...", "6".repeat(29)); // 30 significant digits
    assert!(
        out.contains(&format!("P=? [ F \"six\" ] = {sixth} (")),
        "{out}"
    );
    let eleven_thirds = format!("3.{}...", "6".repeat(29));
    assert!(out.contains(&format!("= {eleven_thirds} (")), "{out}");
    // 3 × 1/6 = 1/2: a terminating decimal is printed whole.
    assert!(out.contains("| \"three\" ] = 0.5 ("), "{out}");

    let o = augur(&[
        "check",
        &die,
        "--prop",
        "P=? [ F \"six\" ]",
        "--method",
        "exact",
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let j = stdout_json(&o);
    let r = &j["results"][0];
    assert_eq!(r["exact"], "1/6");
    // The bounds are the outward rounding of 1/6: lo < 1/6 < hi, adjacent doubles.
    let (lo, hi) = (
        r["bounds"][0].as_f64().unwrap(),
        r["bounds"][1].as_f64().unwrap(),
    );
    assert!(lo < hi && 6.0 * lo <= 1.0 && 6.0 * hi >= 1.0, "{r}");
    assert_eq!(f64::from_bits(lo.to_bits() + 1), hi);
    // Outside exact mode there is no "exact" field.
    let o = augur(&["check", &die, "--prop", "P=? [ F \"six\" ]", "--json"]);
    assert!(stdout_json(&o)["results"][0].get("exact").is_none());
}

#[test]
fn thresholds_are_compared_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "point3.pm", POINT_THREE);
    let m = m.display().to_string();
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "P=? [ F \"goal\" ]",
        "--prop",
        "P>0.3 [ F \"goal\" ]",
        "--prop",
        "P>=0.3 [ F \"goal\" ]",
        "--prop",
        "P<3/10 [ F \"goal\" ]",
        "--method",
        "exact",
    ]);
    // 1/10 + 2/10 = 3/10: not above 0.3, at least 0.3, not below 3/10 (PRISM's exact mode).
    assert!(out.contains("P=? [ F \"goal\" ] = 3/10 ("), "{out}");
    assert!(out.contains("P>0.3 [ F \"goal\" ] = false"), "{out}");
    assert!(out.contains("P>=0.3 [ F \"goal\" ] = true"), "{out}");
    assert!(out.contains("P<3/10 [ F \"goal\" ] = false"), "{out}");
    // G is the complement: P(G !goal) = 7/10.
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "P=? [ G !\"goal\" ]",
        "--method",
        "exact",
    ]);
    assert!(out.contains("= 7/10 ("), "{out}");
}

#[test]
fn rational_constants_are_exact_in_the_prism_builder() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "coin.pm", COIN).display().to_string();
    // P(F s=1) = p = 1/3 exactly (not 3333333333333333/10^16, the decimal of its double).
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "P=? [ F s=1 ]",
        "--const",
        "p=1/3",
        "--method",
        "exact",
    ]);
    assert!(out.contains("P=? [ F s=1 ] = 1/3 ("), "{out}");
    // Bounded operators are computed in doubles, also in exact mode (docs/exact.md):
    // 1 - (2/3)^3 = 19/27 (the bounded operator in rationals).
    let m = write(dir.path(), "trials.pm", TRIALS).display().to_string();
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "P=? [ F<=3 g=1 ]",
        "--const",
        "p=1/3",
        "--method",
        "exact",
    ]);
    assert!(out.contains("P=? [ F<=3 g=1 ] = 19/27 ("), "{out}");
}

#[test]
fn const_ranges_run_an_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "trials.pm", TRIALS).display().to_string();
    // P(F<=N g=1) = 1 - (1-p)^N: N=1: p; N=2: 1-(1-p)^2. p = 1/4: 1/4, 7/16; p = 1/2: 1/2, 3/4
    // (bounded operators are exact too: printed as fractions).
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "P=? [ F<=N g=1 ]",
        "--const",
        "N=1:2,p=1/4:1/4:1/2",
        "--method",
        "exact",
    ]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(rows[0], vec!["N", "p", "P=? [ F<=N g=1 ]"], "{out}");
    assert_eq!(rows[1], vec!["1", "0.25", "1/4"], "{out}");
    assert_eq!(rows[2], vec!["1", "0.5", "1/2"], "{out}");
    assert_eq!(rows[3], vec!["2", "0.25", "7/16"], "{out}");
    assert_eq!(rows[4], vec!["2", "0.5", "3/4"], "{out}");
    assert_eq!(rows.len(), 5, "{out}");
    // Unbounded in exact mode: P(F s=1) = p, printed as the rational.
    let coin = write(dir.path(), "coin.pm", COIN).display().to_string();
    let out = ok(&[
        "check",
        &coin,
        "--prop",
        "P=? [ F s=1 ]",
        "--const",
        "p=1/4:1/4:1/2",
        "--method",
        "exact",
    ]);
    let cells: Vec<&str> = out.split_whitespace().collect();
    assert!(cells.ends_with(&["0.25", "1/4", "0.5", "1/2"]), "{out}");

    // N=1:2:5 is 1, 3, 5 (PRISM's start:step:end); with p = 1/2: 1/2, 7/8, 31/32; JSON.
    let o = augur(&[
        "check",
        &m,
        "--prop",
        "\"reach\": P=? [ F<=N g=1 ]",
        "--const",
        "N=1:2:5",
        "--const",
        "p=0.5",
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let j = stdout_json(&o);
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["constants"], serde_json::json!(["N"]));
    let runs = j["runs"].as_array().unwrap();
    let got: Vec<(i64, f64)> = runs
        .iter()
        .map(|r| {
            (
                r["constants"]["N"].as_i64().unwrap(),
                r["results"][0]["value"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, vec![(1, 0.5), (3, 0.875), (5, 0.96875)]);
    assert_eq!(runs[0]["results"][0]["name"], "reach");
    assert_eq!(runs[0]["model"]["states"], 2);
}

#[test]
fn a_bad_range_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "coin.pm", COIN).display().to_string();
    let err = fail(&[
        "check",
        &m,
        "--prop",
        "P=? [ F s=1 ]",
        "--const",
        "p=0.5,N=5:1",
    ]);
    assert!(err.contains("has no value"), "{err}");
    assert!(err.contains("--const:1:"), "{err}");
    assert!(err.contains("^^^"), "{err}");
    let err = fail(&["check", &m, "--prop", "P=? [ F s=1 ]", "--const", "p=0:0:1"]);
    assert!(err.contains("step of a range must not be 0"), "{err}");
}

/// A chain from 0 to 1 with probability `p` (a constant defined by `consts`), else to 2:
/// P(F s=1) = p.
fn with_p(consts: &str) -> String {
    format!(
        "dtmc
{consts}
module m
  s : [0..2] init 0;
  [] s=0 -> p : (s'=1) + 1-p : (s'=2);
  [] s>0 -> true;
endmodule
"
    )
}

/// `augur check` of `model` (written to a temporary file) with `props`, in exact mode or not;
/// the output.
fn check_text(model: &str, props: &[&str], exact: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "m.pm", model).display().to_string();
    let mut args = vec!["check".to_string(), m];
    for p in props {
        args.push("--prop".into());
        args.push(p.to_string());
    }
    if exact {
        args.push("--method".into());
        args.push("exact".into());
    }
    ok(&args)
}

#[test]
fn literals_are_the_rationals_they_spell() {
    // PRISM's exact-evaluation case: 1/3 is not 0.333333333333333333333333, so p = 0. In
    // doubles both round to the same double (1/3 is 1.9e-17 from it, half the spacing there is
    // 2.8e-17, the literal 3.3e-25 from 1/3), so p = 1/2.
    let m = with_p("const double p = (1/3 = 0.333333333333333333333333 ? 1/2 : 0);");
    let out = check_text(&m, &["P=? [ F s=1 ]"], true);
    assert!(out.contains("P=? [ F s=1 ] = 0 ("), "{out}");
    let out = check_text(&m, &["P=? [ F s=1 ]"], false);
    assert!(out.contains("P=? [ F s=1 ] = 0.5"), "{out}");

    // 30 significant digits: the rational written (numerator odd and not a multiple of 5, so
    // the fraction is in lowest terms).
    let m = with_p("const double p = 0.123456789012345678901234567891;");
    let out = check_text(&m, &["P=? [ F s=1 ]"], true);
    assert!(
        out.contains("= 123456789012345678901234567891/1000000000000000000000000000000 ("),
        "{out}"
    );
}

#[test]
fn a_threshold_a_double_rounds_across() {
    // p = 1/2 + 10^-28: above 1/2 exactly; its double is 0.5, not above 0.5.
    let m = with_p("const double p = 0.5000000000000000000000000001;");
    let out = check_text(&m, &["P>1/2 [ F s=1 ]", "P<=0.5 [ F s=1 ]"], true);
    assert!(out.contains("P>1/2 [ F s=1 ] = true"), "{out}");
    assert!(out.contains("P<=0.5 [ F s=1 ] = false"), "{out}");
    let out = check_text(&m, &["P>1/2 [ F s=1 ]"], false);
    assert!(out.contains("P>1/2 [ F s=1 ] = false"), "{out}");
}

#[test]
fn nested_constants_and_guards_are_exact() {
    // c = 3·(1/10) − 3/10 = 0 exactly, so p = 1/4; in doubles 3·0.1 − 0.3 = 5.55e-17 ≠ 0, p = 1/2.
    let m = with_p(
        "const double a = 0.1;
const double b = 3*a;
const double c = b - 0.3;
const double p = c = 0 ? 1/4 : 1/2;",
    );
    let out = check_text(&m, &["P=? [ F s=1 ]"], true);
    assert!(out.contains("P=? [ F s=1 ] = 1/4 ("), "{out}");
    let out = check_text(&m, &["P=? [ F s=1 ]"], false);
    assert!(out.contains("P=? [ F s=1 ] = 0.5"), "{out}");

    // A guard over a variable: x·0.1 = 0.3 holds at x = 3 in rationals, not in doubles.
    let guard = "dtmc
module m
  x : [0..3] init 3;
  s : [0..2] init 0;
  [] s=0 & x*0.1 = 0.3 -> (s'=1);
  [] s=0 & !(x*0.1 = 0.3) -> (s'=2);
  [] s>0 -> true;
endmodule
";
    let out = check_text(guard, &["P=? [ F s=1 ]"], true);
    assert!(out.contains("P=? [ F s=1 ] = 1 ("), "{out}");
    let out = check_text(guard, &["P=? [ F s=1 ]"], false);
    assert!(out.contains("P=? [ F s=1 ] = 0 ("), "{out}");
}

#[test]
fn log_has_no_exact_value() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "log.pm",
        "dtmc
module m
  s : [0..2] init 0;
  [] s=0 -> log(4,2)/4 : (s'=1) + 1/2 : (s'=2);
  [] s>0 -> true;
endmodule
",
    )
    .display()
    .to_string();
    let err = fail(&["check", &m, "--prop", "P=? [ F s=1 ]", "--method", "exact"]);
    assert!(err.contains("no exact rational result"), "{err}");
    assert!(err.contains(":4:"), "{err}");
    // Outside exact mode log(4,2)/4 = 1/2.
    let out = ok(&["check", &m, "--prop", "P=? [ F s=1 ]"]);
    assert!(out.contains("= 0.5"), "{out}");
}

#[test]
fn a_discounted_reward_is_exact_for_the_discount_as_written() {
    // The two-cycle 0 ⇄ 1 with reward 1 in state 0: v0 = 1/(1 − d²) (by hand). The discount
    // is the rational written (0.999999 is 999999/10⁶, not its double): with it the answer
    // is 10¹²/1999999 = 500000.25000012500…, while the rational of the doubles' chain differs
    // from it in the sixth significant digit.
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "cycle.pm",
        "dtmc\nmodule m\n  s : [0..1] init 0;\n  [] s=0 -> (s'=1);\n  [] s=1 -> (s'=0);\nendmodule\nrewards s=0 : 1; endrewards\n",
    );
    let o = augur(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "R=? [ C{discount=0.999999} ]",
        "--method",
        "exact",
        "--json",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let json = stdout_json(&o);
    let r = &json["results"][0];
    assert_eq!(r["exact"], "1000000000000/1999999", "{r}");
    let v = r["value"].as_f64().unwrap();
    let exact = 1e12 / 1_999_999.0;
    assert!((v - exact).abs() / exact < 1e-4, "{v} vs {exact}");
}

/// s0 →1/10→ s1, s0 →9/10→ s2, s1 →1/3→ s3, s1 →2/3→ s0; s2, s3 absorbing; a reward of 1/10
/// in every state.
const LOOP: &str = "dtmc
const double q = 1/3;
module m
  s : [0..3] init 0;
  [] s=0 -> 0.1 : (s'=1) + 0.9 : (s'=2);
  [] s=1 -> q : (s'=3) + 1-q : (s'=0);
  [] s>=2 -> true;
endmodule
rewards \"tenth\"
  true : 0.1;
endrewards
";

#[test]
fn bounded_operators_and_arithmetic_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "loop.pm", LOOP);
    let m = m.display().to_string();
    // Closed forms: s3 is reached from s0 at step 2 (1/10·1/3 = 1/30) and again after each
    // further round trip s0 → s1 → s0 (probability 1/10·2/3 = 1/15, two steps), so
    // P(F s=3) = (1/30)/(1 − 1/15) = 1/28, P(F<=3) = 1/30, P(F<=5) = 1/30 + 1/30·1/15.
    let cases: Vec<(&str, String)> = vec![
        ("P=? [ F s=3 ]", "1/28".into()),
        ("P=? [ F<=3 s=3 ]", "1/30".into()),
        ("P=? [ F<=5 s=3 ]", "8/225".into()),     // 1/30 + 1/450
        ("P=? [ s<3 U<=4 s=3 ]", "8/225".into()), // the same paths
        ("P=? [ F=3 s=3 ]", "1/30".into()),       // s3 absorbing: reached by step 3
        ("P=? [ F>=3 s=3 ]", "1/28".into()),      // the same: s3 absorbing
        ("P=? [ X s=1 ]", "1/10".into()),
        ("P=? [ G<=2 s!=1 ]", "9/10".into()), // s1 only at step 1, from s0
        ("P=? [ X s=1 ] + P=? [ F s=3 ]", "19/140".into()), // 1/10 + 1/28
        ("P=? [ F s=3 ] + 1/3", "31/84".into()), // the literal as written: 1/28 + 1/3
        // A model's real constant is the rational the exact build computed: 1/28 + 1/3.
        ("P=? [ F s=3 ] + q", "31/84".into()),
        ("P>=q [ X s=1 ]", "false".into()),         // 1/10 < 1/3
        ("P=? [ F<=3 s=3 ] = q/10", "true".into()), // 1/30
        ("min(P=? [ F<=3 s=3 ], P=? [ F s=3 ])", "1/30".into()),
        ("P=? [ F s=3 ] * 28", "1".into()),
        ("filter(sum, P=? [ F<=3 s=3 ])", "25/18".into()), // 1/30 + 1/3 + 0 + 1
        // A reward of 1/10 per step.
        ("R=? [ C<=3 ]", "3/10".into()),
        ("R=? [ C<=1000000000000 ]", "100000000000".into()), // P·r = r: closed form
        ("R=? [ I=2 ]", "1/10".into()),
        ("R=? [ C{discount=0.5}<=3 ]", "7/40".into()), // 1/10·(1 + 1/2 + 1/4)
        ("R=? [ C{discount=0.5} ]", "1/5".into()),     // 1/10 / (1 − 1/2)
        ("P>=1/30 [ F<=3 s=3 ] & P<1/28 [ F<=5 s=3 ]", "true".into()),
        ("P>1/30 [ F<=3 s=3 ]", "false".into()),
        ("P=? [ X s=1 ] + P=? [ F s=3 ] = 19/140", "true".into()),
    ];
    let mut args = vec!["check".to_string(), m.clone()];
    for (p, _) in &cases {
        args.push("--prop".into());
        args.push(p.to_string());
    }
    args.extend(["--method".into(), "exact".into()]);
    let out = ok(&args);
    for (p, want) in &cases {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{p} = ")))
            .unwrap_or_else(|| panic!("no line for {p}: {out}"));
        assert!(
            line.starts_with(&format!("{p} = {want} (")),
            "{p}: want {want}: {line}"
        );
    }
}

#[test]
fn a_bounded_operator_past_the_exact_budget_is_refused() {
    // The loop s0 ⇄ s1 never reaches a fixed point, and the rationals grow with every step:
    // a million steps do not fit in the budget. A located error that names the default
    // method, not a double labelled exact.
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "loop.pm", LOOP);
    let m = m.display().to_string();
    let err = fail(&[
        "check",
        &m,
        "--prop",
        "P=? [ F<=1000000 s=3 ]",
        "--method",
        "exact",
    ]);
    assert!(
        err.contains("exact mode: the step bound is too large"),
        "{err}"
    );
    assert!(err.contains("--method auto"), "{err}");
    assert!(err.contains("--> --prop:1:8"), "{err}");
    // The default method answers it.
    let out = ok(&["check", &m, "--prop", "P=? [ F<=1000000 s=3 ]"]);
    // 1/28, printed as the shortest decimal inside the sweeps' rounding-error bounds.
    assert!(out.contains("P=? [ F<=1000000 s=3 ] = 0.0357142"), "{out}");
}

#[test]
fn an_operator_without_an_exact_value_over_results_is_refused() {
    // Over exact results, `log` and `pow` with a non-integer exponent have no rational value:
    // exact mode says so, located, instead of printing a double under the exact method. An
    // integer power is exact: (1/28)^2 = 1/784.
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "loop.pm", LOOP);
    let m = m.display().to_string();
    for prop in ["log(P=? [ F s=3 ], 2)", "pow(P=? [ F s=3 ], 0.5) > 0.1"] {
        let err = fail(&["check", &m, "--prop", prop, "--method", "exact"]);
        assert!(
            err.contains("exact mode: cannot compute this in rationals in state 0"),
            "{err}"
        );
        assert!(
            err.contains("--> --prop:1:1") && err.contains("--method auto"),
            "{err}"
        );
        // The default method answers it.
        ok(&["check", &m, "--prop", prop]);
    }
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "pow(P=? [ F s=3 ], 2)",
        "--method",
        "exact",
    ]);
    assert!(out.contains("= 1/784"), "{out}");
    // A division by zero names no internal placeholder.
    let err = fail(&[
        "check",
        &m,
        "--prop",
        "P=? [ F s=3 ] / (P=? [ X s=1 ] - 1/10)",
    ]);
    assert!(
        err.contains("error: in state 0: division by zero\n"),
        "{err}"
    );
    assert!(!err.contains('#'), "{err}");
}

#[test]
fn reachability_and_total_rewards_with_transition_rewards_are_exact() {
    // s0 → 1/3 → s1 (absorbing), 2/3 → s0; each step from s0 earns 0.2 (state) + 0.1
    // (transition): 3/10 per step, 3 steps expected, so 9/10. The doubles' one-step reward
    // 0.2 + (1/3)·0.1 + (2/3)·0.1 is 0.30000000000000004: read as its decimal it gave
    // 22500000000000003/25000000000000000.
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "tr.pm",
        "dtmc
module m
  s : [0..1] init 0;
  [go] s=0 -> 1/3 : (s'=1) + 2/3 : (s'=0);
  [] s=1 -> true;
endmodule
rewards \"r\"
  s=0 : 0.2;
  [go] true : 0.1;
endrewards
",
    )
    .display()
    .to_string();
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "R=? [ F s=1 ]",
        "--prop",
        "R=? [ C ]",
        "--method",
        "exact",
    ]);
    assert!(out.contains("R=? [ F s=1 ] = 9/10 "), "{out}");
    assert!(out.contains("R=? [ C ] = 9/10 "), "{out}");
}

#[test]
fn long_run_rewards_are_exact() {
    // s0 ⇄ s1, each leaving with probability 1/3: π = (1/2, 1/2). A state reward of 0.1 in
    // s0 gives 1/20 (it gave half of the double 0.1's own rational); with 0.2 in
    // s0 and 0.1 on s0's transitions the one-step reward is 3/10 (0.30000000000000004 in
    // doubles) and the long-run average 3/20.
    let dir = tempfile::tempdir().unwrap();
    let text = |rewards: &str| {
        format!(
            "dtmc
module m
  s : [0..1] init 0;
  [a] s=0 -> 1/3 : (s'=1) + 2/3 : (s'=0);
  [] s=1 -> 1/3 : (s'=0) + 2/3 : (s'=1);
endmodule
rewards \"r\"
{rewards}
endrewards
"
        )
    };
    for (name, rewards, want) in [
        ("state.pm", "  s=0 : 0.1;", "1/20"),
        ("both.pm", "  s=0 : 0.2;\n  [a] true : 0.1;", "3/20"),
    ] {
        let m = write(dir.path(), name, &text(rewards))
            .display()
            .to_string();
        let out = ok(&["check", &m, "--prop", "R=? [ S ]", "--method", "exact"]);
        assert!(out.contains(&format!("R=? [ S ] = {want} ")), "{out}");
    }
}

#[test]
fn state_expressions_in_properties_are_exact() {
    // LOOP's s takes 0..3: s*0.1 = 0.3 holds at s = 3 in rationals (in doubles 3·0.1 is
    // 0.30000000000000004, and PRISM's default answers 0); P(F s=3) + s/3 is 1/28 in s0.
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "loop.pm", LOOP).display().to_string();
    let out = ok(&[
        "check",
        &m,
        "--prop",
        "filter(count, s*0.1 = 0.3)",
        "--prop",
        "P=? [ F s=3 ] + s/3 + 1/7",
        "--method",
        "exact",
    ]);
    assert!(out.contains("filter(count, s*0.1=0.3) = 1 "), "{out}");
    assert!(out.contains("= 5/28 "), "{out}"); // 1/28 + 0 + 4/28
    let out = ok(&["check", &m, "--prop", "filter(count, s*0.1 = 0.3)"]);
    assert!(out.contains("filter(count, s*0.1=0.3) = 0 "), "{out}");
    let err = fail(&[
        "check",
        &m,
        "--prop",
        "log(s+1, 2) > 1",
        "--method",
        "exact",
    ]);
    assert!(
        err.contains("exact mode: cannot compute this in rationals"),
        "{err}"
    );
}

/// From 0: to 1 when `x > 0`, else to 2 (issue 22, class 7). `x = 3^-5000` underflows to 0
/// as a double; as a rational it is positive, so exact mode reaches 1 with probability 1.
const TINY: &str = "dtmc
const double x = pow(1/3, 5000);
module m
  s : [0..2] init 0;
  [] s=0 & x > 0 -> (s'=1);
  [] s=0 & !(x > 0) -> (s'=2);
  [] s>0 -> true;
endmodule
label \"one\" = s=1;
";

#[test]
fn constant_arithmetic_in_properties_is_exact() {
    let gambler = model("gambler.drn");
    let check = |prop: &str, exact: bool| {
        let mut args = vec!["check", gambler.as_str(), "--prop", prop];
        if exact {
            args.extend(["--method", "exact"]);
        }
        ok(&args)
    };
    // 1/10 + 2/10 = 3/10 exactly; in doubles it is 0.30000000000000004 > 0.3.
    let out = check("1/10 + 2/10 > 3/10", true);
    assert!(out.contains("= false ("), "{out}");
    let out = check("1/10 + 2/10 > 3/10", false);
    assert!(out.contains("= true ("), "{out}");
    let out = check("0.1 + 0.2 = 0.3 & !(1/3 + 1/3 + 1/3 != 1)", true);
    assert!(out.contains("= true ("), "{out}");
    // 3^-5000 as a double is 0; as a rational it is positive, and is printed in full:
    // 1/3^5000, whose denominator has ⌊5000·log10 3⌋ + 1 = 2386 digits and ends in 1
    // (3^4 = 81, and 4 divides 5000).
    let out = check("pow(1/3, 5000) > 0", true);
    assert!(out.contains("= true ("), "{out}");
    let out = check("pow(1/3, 5000)", true);
    let value = out.split(" = ").nth(1).unwrap().split(' ').next().unwrap();
    let denom = value.strip_prefix("1/").expect("a fraction 1/3^5000");
    assert_eq!(denom.len(), 2386, "{value}");
    assert!(denom.ends_with('1') && denom.bytes().all(|b| b.is_ascii_digit()));
    // Thresholds too: P(F "win") = 32/275 is above 3^-5000, and P(F false) = 0 is not at
    // least 3^-5000 (it is at least the double 0 the threshold rounds to).
    let out = check("P>pow(1/3, 5000) [ F \"win\" ]", true);
    assert!(out.contains("= true ("), "{out}");
    let out = check("P>=pow(1/3, 5000) [ F false ]", true);
    assert!(out.contains("= false ("), "{out}");
    let out = check("P>=pow(1/3, 5000) [ F false ]", false);
    assert!(out.contains("= true ("), "{out}");
    // The integers are exact too: 2^100 = 1267650600228229401496703205376.
    let out = check("pow(2, 100)", true);
    assert!(out.contains("= 1267650600228229401496703205376 ("), "{out}");
}

#[test]
fn a_tiny_model_constant_stays_positive_in_guards_and_properties() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "tiny.pm", TINY);
    let m = m.to_str().unwrap();
    let exact = |prop: &str| ok(&["check", m, "--prop", prop, "--method", "exact"]);
    let out = exact("P=? [ F \"one\" ]");
    assert!(out.contains("= 1 ("), "{out}");
    let out = exact("x > 0");
    assert!(out.contains("= true ("), "{out}");
    // 1 - 3^-5000 < 1 holds in rationals (in doubles 1 - 0 < 1 does not).
    let out = exact("1 - x < 1");
    assert!(out.contains("= true ("), "{out}");
    let out = exact("P>=x [ F \"one\" ]");
    assert!(out.contains("= true ("), "{out}");
    // P(F s=2) = 0 is below 3^-5000.
    let out = exact("P>=x [ F s=2 ]");
    assert!(out.contains("= false ("), "{out}");
    // The default method computes in doubles, where x is 0.
    let out = ok(&["check", m, "--prop", "x > 0"]);
    assert!(out.contains("= false ("), "{out}");
    // Mixed with a model variable the constant part stays exact (it was folded into the
    // double 0 before the exact evaluation): 3^-5000 · (s + 1) > 0 in every state.
    let out = exact("filter(forall, x * (s + 1) > 0)");
    assert!(out.contains("= true ("), "{out}");
    let out = exact("filter(forall, pow(1/3, 5000) * (s + 1) > 0)");
    assert!(out.contains("= true ("), "{out}");
    let out = ok(&["check", m, "--prop", "filter(forall, x * (s + 1) > 0)"]);
    assert!(out.contains("= false ("), "{out}");
    // 3^-5 · (s + 1) at the initial state s = 0 is 1/243, not the decimal of its double.
    let out = exact("pow(1/3, 5) * (s + 1)");
    assert!(out.contains("= 1/243 ("), "{out}");
    // 1/10 + 2/10 next to a variable: s·(1/10 + 2/10) = 3/10 holds at s = 1 exactly.
    let out = exact("filter(count, s * (1/10 + 2/10) = 3/10)");
    assert!(out.contains("= 1 ("), "{out}");
}

/// From 0: to 1 with probability 3^-5000 · (s + 1), a constant mixed with a variable, else
/// to 2. The double of that probability underflows to 0; exact mode keeps the transition.
const TINY_BRANCH: &str = "dtmc
const double x = pow(1/3, 5000);
module m
  s : [0..2] init 0;
  [] s=0 -> x*(s+1):(s'=1) + (1 - x*(s+1)):(s'=2);
  [] s>0 -> true;
endmodule
label \"one\" = s=1;
";

#[test]
fn a_tiny_probability_mixed_with_a_variable_keeps_its_transition() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "tiny_branch.pm", TINY_BRANCH);
    let m = m.to_str().unwrap();
    let exact = |prop: &str| ok(&["check", m, "--prop", prop, "--method", "exact"]);
    // Prob0 reads the doubles: the transition must not vanish with its underflowed double.
    let out = exact("P>0 [ F \"one\" ]");
    assert!(out.contains("= true ("), "{out}");
    // The value is 3^-5000 exactly: 1/3^5000, a denominator of 2386 digits.
    let out = exact("P=? [ F \"one\" ]");
    let value = out.split(" = ").nth(1).unwrap().split(' ').next().unwrap();
    assert_eq!(
        value.strip_prefix("1/").map(str::len),
        Some(2386),
        "{value}"
    );
    let out = exact("P=? [ F \"one\" ] = x");
    assert!(out.contains("= true ("), "{out}");
}

/// Rewards of 1/3 and 3^-5000 · (s + 1) in a state and on a transition; `done` after one step.
const THIRD_REWARDS: &str = "dtmc
const double x = pow(1/3, 5000);
module m
  s : [0..2] init 0;
  [] s=0 -> 1/2:(s'=1) + 1/2:(s'=2);
  [] s>0 -> true;
endmodule
label \"done\" = s>0;
rewards \"r\"
  s=0 : 1/3;
endrewards
rewards \"t\"
  [] s=0 : 1/3;
endrewards
rewards \"tiny\"
  s=0 : x*(s+1);
endrewards
rewards \"tiny_t\"
  [] s=0 : x*(s+1);
endrewards
";

/// Two choices at s = 0 (each taken with probability 1/2): `a` to 1 earning 1/3, `b` back to
/// 0 with 1/4 or on to 1 with 3/4, earning 1/7. Per visit of 0 the reward is
/// 1/2·1/3 + 1/2·1/7 = 5/21 and 0 is visited 1/(1 − 1/8) = 8/7 times: 40/147.
const MERGED_CHOICES: &str = "dtmc
module m
  s : [0..1] init 0;
  [a] s=0 -> (s'=1);
  [b] s=0 -> 1/4:(s'=0) + 3/4:(s'=1);
  [] s=1 -> true;
endmodule
label \"done\" = s=1;
rewards \"t\"
  [a] true : 1/3;
  [b] true : 1/7;
endrewards
";

#[test]
fn rewards_are_exact_rationals_in_exact_mode() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(dir.path(), "third.pm", THIRD_REWARDS);
    let m = m.to_str().unwrap();
    let exact = |prop: &str| ok(&["check", m, "--prop", prop, "--method", "exact"]);
    // 1/3, not the decimal 3333333333333333/10^16 of its double.
    for prop in [
        "R{\"r\"}=? [ F \"done\" ]",
        "R{\"t\"}=? [ F \"done\" ]",
        "R{\"r\"}=? [ C<=1 ]",
        "R{\"t\"}=? [ C<=5 ]",
        "R{\"r\"}=? [ I=0 ]",
        "R{\"r\"}=? [ C ]",
    ] {
        let out = exact(prop);
        assert!(out.contains("= 1/3 ("), "{prop}: {out}");
    }
    // 3^-5000: its double is 0, so the zero-reward analysis must read the rationals.
    for prop in [
        "R{\"tiny\"}>0 [ F \"done\" ]",
        "R{\"tiny_t\"}>0 [ F \"done\" ]",
        "R{\"tiny\"}=? [ F \"done\" ] = x",
        "R{\"tiny_t\"}=? [ F \"done\" ] = x",
        "R{\"tiny\"}=? [ C ] = x",
        "R{\"tiny\"}>0 [ C<=1 ]",
    ] {
        let out = exact(prop);
        assert!(out.contains("= true ("), "{prop}: {out}");
    }
    let m = write(dir.path(), "merged.pm", MERGED_CHOICES);
    let m = m.to_str().unwrap();
    let out = ok(&[
        "check",
        m,
        "--prop",
        "R{\"t\"}=? [ F \"done\" ]",
        "--method",
        "exact",
    ]);
    assert!(out.contains("= 40/147 ("), "{out}");
}

#[test]
fn rationals_past_the_size_budget_are_located_errors() {
    let gambler = model("gambler.drn");
    for prop in [
        "pow(1/3, 50000) > 0",
        "P>=pow(1/3, 50000) [ F \"win\" ]",
        "pow(1/2, 70000) < 1",
    ] {
        let o = augur(&["check", &gambler, "--prop", prop, "--method", "exact"]);
        assert_eq!(code(&o), 1, "{prop}");
        let err = stderr(&o);
        assert!(
            err.contains("too large to compute as an exact rational"),
            "{err}"
        );
        assert!(err.contains("the budget is 65536 bits"), "{err}");
        assert!(err.contains(" --> --prop:1:"), "{err}");
        assert!(err.contains('^'), "{err}");
        // The default method answers in doubles.
        ok(&["check", &gambler, "--prop", prop]);
    }
}

/// Integer `pow` with a negative exponent is an error in PRISM and in Augur's default
/// method; `--method exact` gives the same error (issue 39) rather than the rational 1/2, in
/// a constant property, beside a `P` operator, inside a filter, and in a state expression.
#[test]
fn integer_pow_with_a_negative_exponent_is_the_same_error_in_every_method() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "pow.pm",
        "dtmc\nconst int c = 0;\nmodule m\n  s : [0..1] init 0;\n  [] s=0 -> 0.5 : (s'=1) + 0.5 : (s'=0);\n  [] s=1 -> true;\nendmodule\n",
    );
    let m = m.to_str().unwrap();
    for prop in [
        "pow(2, c-1)",
        "P=? [ F s=1 ] * pow(2, c-1)",
        "filter(max, pow(2, c-1) * P=? [ F s=1 ])",
        "pow(2, s-1) * P=? [ F s=1 ]",
    ] {
        let mut messages = Vec::new();
        for method in ["auto", "exact", "gauss-seidel"] {
            let o = augur(&["check", m, "--prop", prop, "--method", method]);
            assert_eq!(code(&o), 1, "{prop} --method {method}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains("negative exponent"),
                "{prop} --method {method}: {err}"
            );
            messages.push(err);
        }
        assert!(
            messages.iter().all(|e| e == &messages[0]),
            "{prop}: {messages:?}"
        );
    }
    // A double base is not an integer power: 0.5 in every method.
    let o = augur(&["check", m, "--prop", "pow(2.0, c-1)", "--method", "exact"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(util::stdout(&o).contains("= 1/2"), "{}", util::stdout(&o));
}
