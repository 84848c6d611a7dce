//! The first hour of a new user (issue 28): wrong files answered with a hint, PRISM's option
//! spellings, built-in defaults that do not depend on the working directory, and numbers
//! printed without floating-point noise.

use crate::util;
use std::process::Command;

/// Runs augur from the repository root: exit code 1, nothing on stdout; the stderr.
fn user_error(args: &[&str]) -> String {
    let out = util::augur(args);
    let stderr = util::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: {}", util::stdout(&out));
    stderr
}

// ---------- wrong files ----------

#[test]
fn check_with_the_model_and_the_properties_swapped_says_so() {
    insta::assert_snapshot!(user_error(&[
        "check",
        "models/die.props",
        "models/die.json"
    ]));
}

#[test]
fn check_with_a_properties_file_as_the_model_says_so() {
    insta::assert_snapshot!(user_error(&["check", "models/die.props"]));
}

#[test]
fn gate_with_a_model_instead_of_a_monitor_says_how_to_compile_one() {
    insta::assert_snapshot!(user_error(&[
        "monitor",
        "gate",
        "--monitor",
        "models/safetydrift.tra"
    ]));
}

#[test]
fn replay_with_a_model_instead_of_a_monitor_says_how_to_compile_one() {
    let e = user_error(&[
        "monitor",
        "replay",
        "--monitor",
        "models/safetydrift.tra",
        "models/monitor/runs.jsonl",
    ]);
    assert!(e.contains("is a model, not a monitor file"), "{e}");
}

#[test]
fn gate_with_an_actions_file_argument_says_input_is_read_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.json");
    util::ok(&[
        "monitor",
        "compile",
        "models/safetydrift.tra",
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "-o",
        m.to_str().unwrap(),
    ]);
    let e = user_error(&[
        "monitor",
        "gate",
        "--monitor",
        m.to_str().unwrap(),
        "models/monitor/actions.jsonl",
    ]);
    insta::assert_snapshot!(e.replace(m.to_str().unwrap(), "m.json"));
}

/// A `.tra` alone: a warning when it is loaded, and an unknown label names the missing `.lab`.
#[test]
fn a_tra_without_its_lab_is_noticed_and_named_by_an_unknown_label() {
    let dir = tempfile::tempdir().unwrap();
    let tra = dir.path().join("chain.tra");
    std::fs::copy(util::model("safetydrift.tra"), &tra).unwrap();
    let out = util::augur(&[
        "check",
        tra.to_str().unwrap(),
        "--prop",
        "P=? [ F \"violated\" ]",
    ]);
    assert_eq!(util::code(&out), 1);
    let e = util::stderr(&out);
    let d = dir.path().display().to_string();
    insta::assert_snapshot!(e.replace(&d, "DIR"));
    // With the `.lab` beside it: no warning, the label is known.
    std::fs::copy(util::model("safetydrift.lab"), dir.path().join("chain.lab")).unwrap();
    let out = util::augur(&[
        "check",
        tra.to_str().unwrap(),
        "--prop",
        "P=? [ F \"violated\" ]",
    ]);
    assert_eq!(util::code(&out), 0, "{}", util::stderr(&out));
    assert_eq!(util::stderr(&out), "");
}

// ---------- PRISM's spellings ----------

#[test]
fn prisms_pf_pctl_prop_and_const_spellings_are_accepted() {
    // The die: P(six) = 1/6 (models/README.md); sync3 with p=0.2: P(F<=2 "both") = 0.27.
    for flag in ["-pf", "-pctl", "-prop"] {
        let out = util::ok(&["check", "models/die.json", flag, "P=? [ F \"six\" ]"]);
        assert!(
            out.starts_with("P=? [ F \"six\" ] = 0.16666666666666666 "),
            "{flag}: {out}"
        );
    }
    let out = util::ok(&[
        "check",
        "models/sync3.pm",
        "-const",
        "p=0.2",
        "-pf",
        "P=? [ F<=2 \"both\" ]",
    ]);
    assert!(out.starts_with("P=? [ F<=2 \"both\" ] = 0.27 "), "{out}");
    // PRISM's `-const N=3,K=2`: several constants in one argument.
    let e = user_error(&[
        "check",
        "models/sync3.pm",
        "-const",
        "p=0.2,q=1",
        "-pf",
        "P=? [ F \"both\" ]",
    ]);
    assert!(e.contains("--const q"), "{e}");
}

#[test]
fn pmax_on_a_dtmc_is_p_with_a_note() {
    let out = util::ok(&["check", "models/die.json", "--prop", "Pmax=? [ F \"six\" ]"]);
    assert!(
        out.starts_with("Pmax=? [ F \"six\" ] = 0.16666666666666666 "),
        "{out}"
    );
    assert!(
        out.contains("note: `Pmax` on a model without intervals is `P`"),
        "{out}"
    );
}

// ---------- built-in defaults ----------

/// `monitor eval`'s matrix baseline is built in: the same report from any directory, and the
/// same as with `--matrix models/safetydrift.tra`.
#[test]
fn monitor_eval_runs_from_another_directory() {
    let runs = util::model("monitor/runs.jsonl");
    let run_in = |dir: &std::path::Path, more: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_augur"))
            .current_dir(dir)
            .args([
                "monitor",
                "eval",
                runs.to_str().unwrap(),
                "--test-fraction",
                "0.5",
                "--json",
            ])
            .args(more)
            .output()
            .unwrap();
        assert_eq!(util::code(&out), 0, "{}", util::stderr(&out));
        let mut v = util::stdout_json(&out);
        // Timings differ between runs.
        if let Some(o) = v.as_object_mut() {
            o.remove("seconds");
        }
        v
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let built_in = run_in(elsewhere.path(), &[]);
    let given = run_in(util::root(), &["--matrix", "models/safetydrift.tra"]);
    assert_eq!(built_in, given);
    assert!(
        built_in.to_string().contains("matrix"),
        "the report has the matrix baseline: {built_in}"
    );
}

#[test]
fn a_bad_matrix_names_the_option() {
    let e = user_error(&[
        "monitor",
        "eval",
        "models/monitor/runs.jsonl",
        "--matrix",
        "models/no-such-matrix.tra",
    ]);
    insta::assert_snapshot!(e);
}

// ---------- numbers ----------

/// Floating-point noise is gone from human output (issue 28, item 6), while `--json` keeps the
/// doubles: sync3's P(F "both") is 0.427 = (1 − 0.8³)(1 − 0.5³) (models/README.md), computed
/// as 0.42700000000000005.
#[test]
fn values_print_as_the_shortest_decimal_their_bounds_allow() {
    let out = util::ok(&[
        "explain",
        "models/sync3.pm",
        "--const",
        "p=0.2",
        "--prop",
        "P<=0.3 [ F \"both\" ]",
        "--paths",
        "2",
    ]);
    assert!(
        out.starts_with("P<=0.3 [ F \"both\" ] from state 0 (x=0,y=0,n=0): P = 0.427,"),
        "{out}"
    );
    // 0.8 · 0.5 · 0.2 = 0.08 is 0.08000000000000002 in floating point.
    assert!(out.contains(" 0.08 "), "{out}");
    assert!(!out.contains("0000000"), "{out}");
    let horizon = util::ok(&[
        "horizon",
        "models/safetydrift.tra",
        "--target",
        "violated",
        "--max",
        "2",
    ]);
    assert!(horizon.contains(" 0.0514"), "{horizon}");
    assert!(!horizon.contains("0.05140000000000001"), "{horizon}");
    let json = util::stdout_json(&util::augur(&[
        "horizon",
        "models/safetydrift.tra",
        "--target",
        "violated",
        "--max",
        "2",
        "--json",
    ]));
    // The JSON keeps the double computed (0.05140000000000001), which reads back to itself.
    let v = json["table"][0][1].as_f64().unwrap();
    assert!(
        (v - 0.0514).abs() < 1e-15 && v.to_string() != "0.0514",
        "{v}"
    );
}

#[test]
fn a_filters_range_prints_as_a_range() {
    // safetydrift's P(F<=5 "violated") over every state: from 0.2671295398 (SAFE) to 1
    // (VIOLATED), models/README.md.
    let out = util::ok(&[
        "check",
        "models/safetydrift.tra",
        "--prop",
        "filter(range, P=? [ F<=5 \"violated\" ])",
    ]);
    // The least value's lower bound and the greatest value's upper bound (the sweeps'
    // rounding error bounds them: 0.26712953979999...).
    assert!(
        out.starts_with("filter(range, P=? [ F<=5 \"violated\" ]) = [0.26712953")
            && out.contains(", 1] (range over 5 states"),
        "{out}"
    );
}

#[test]
fn huge_thresholds_print_compactly_in_notes_and_messages() {
    let e = user_error(&[
        "check",
        "models/die.json",
        "--epsilon",
        "1e300",
        "--prop",
        "P=? [ F \"six\" ]",
    ]);
    assert_eq!(e, "error: --epsilon must be in (0, 1), got 1e300\n");
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(
        &policy,
        "version = 1\nthresholds = [ { at = 1e300, verdict = \"block\" } ]\n",
    )
    .unwrap();
    let m = dir.path().join("m.json");
    util::ok(&[
        "monitor",
        "compile",
        "models/safetydrift.tra",
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "-o",
        m.to_str().unwrap(),
    ]);
    let e = user_error(&[
        "monitor",
        "gate",
        "--monitor",
        m.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert!(e.contains("threshold 1e300 is not a probability"), "{e}");
}

/// The model's and the properties' warnings are in `--json` (`warnings`), as the text output
/// prints them on stderr (issue 42, item 5): a nondeterministic choice resolved uniformly.
#[test]
fn the_models_warnings_are_in_the_json_report() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("choice.pm");
    std::fs::write(
        &m,
        "dtmc\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> (s'=1);\n  [] s=0 -> (s'=2);\n  [] s>0 -> true;\nendmodule\n",
    )
    .unwrap();
    let m = m.to_str().unwrap();
    let o = util::augur(&["check", m, "--prop", "P=? [ F s=1 ]"]);
    assert_eq!(util::code(&o), 0, "{}", util::stderr(&o));
    let printed: Vec<String> = util::stderr(&o)
        .lines()
        .filter_map(|l| l.strip_prefix("warning: ").map(str::to_string))
        .collect();
    assert!(!printed.is_empty(), "{}", util::stderr(&o));
    let o = util::augur(&["check", m, "--prop", "P=? [ F s=1 ]", "--json"]);
    assert_eq!(util::code(&o), 0, "{}", util::stderr(&o));
    let doc = util::stdout_json(&o);
    let listed: Vec<String> = doc["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, printed);
    // Resolved uniformly: each choice half the time.
    assert_eq!(doc["results"][0]["value"], 0.5);
    // A model without warnings has no `warnings` field.
    let doc = util::stdout_json(&util::augur(&[
        "check",
        "models/die.json",
        "--prop",
        "P=? [ F \"one\" ]",
        "--json",
    ]));
    assert!(doc.get("warnings").is_none(), "{doc}");
}

// ---------- optional features (issue 42, item 4) ----------

/// `augur --version` lists the optional cargo features the binary was built with: `+` on, `-`
/// off, as this test crate (the same package, the same features) was built.
#[test]
fn version_lists_the_optional_features_as_built() {
    let out = util::augur(&["--version"]);
    assert!(out.status.success());
    let mark = |on: bool, name: &str| format!("{}{name}", if on { '+' } else { '-' });
    let expected = format!(
        "augur {} (features: {} {})\n",
        env!("CARGO_PKG_VERSION"),
        mark(cfg!(feature = "parquet"), "parquet"),
        mark(cfg!(feature = "http-upstream"), "http-upstream")
    );
    assert_eq!(util::stdout(&out), expected);
}
