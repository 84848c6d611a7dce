//! End-to-end tests of the PRISM-language models in `models/` (expected values derived by
//! hand in the `.props` files, one `// RESULT:` line above every property), and of the
//! located errors the binary gives for malformed PRISM files.

use crate::util::results::PropsFile;
use crate::util::{self, code, stderr, stdout};
use serde_json::Value as Json;
use std::path::PathBuf;

fn models() -> PathBuf {
    util::root().join("models")
}

fn augur(args: &[&str]) -> (i32, String, String) {
    let o = util::augur(args);
    (code(&o), stdout(&o), stderr(&o))
}

/// Checks every property of `NAME.props` against its RESULT line (1e-9 relative); returns the
/// JSON output.
fn check_model(name: &str, consts: Option<&str>) -> Json {
    let model = models().join(format!("{name}.pm"));
    let props = models().join(format!("{name}.props"));
    let model_s = model.display().to_string();
    let props_s = props.display().to_string();
    let mut args = vec!["check", &model_s, &props_s, "--json"];
    if let Some(c) = consts {
        args.push("--const");
        args.push(c);
    }
    let (code, stdout, stderr) = augur(&args);
    assert_eq!(code, 0, "{name}: {stderr}");
    let out: Json = serde_json::from_str(&stdout).expect("JSON output");
    let want = PropsFile::read(&props)
        .unwrap_or_else(|e| panic!("{e}"))
        .cases;
    let results = out["results"].as_array().expect("results");
    assert_eq!(results.len(), want.len(), "{name}: one RESULT per property");
    for (r, w) in results.iter().zip(&want) {
        let got = &r["value"];
        assert!(
            w.expected.matches(got, 1e-9),
            "{name}: {} = {got}, expected {}",
            r["property"],
            w.expected
        );
    }
    out
}

/// The formulas of docs/ltl.md's list, in order (its first fenced block; `//` comments off).
fn ltl_md_formulas() -> Vec<String> {
    let doc = std::fs::read_to_string(util::root().join("docs/ltl.md")).expect("docs/ltl.md");
    let block = doc
        .split("```")
        .nth(1)
        .expect("docs/ltl.md starts with its list of formulas");
    block
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn ltl_formulas_of_the_documentation_on_a_small_chain() {
    // Every formula of docs/ltl.md's list is checked on models/ltl.pm against a value derived
    // by hand (models/ltl.props): a formula the parser stops accepting, or a value that
    // changes, fails here.
    let out = check_model("ltl", None);
    assert_eq!(out["model"]["states"], 8);
    let props = PropsFile::read(&models().join("ltl.props")).unwrap_or_else(|e| panic!("{e}"));
    let checked: Vec<&str> = props.cases.iter().map(|c| c.property.as_str()).collect();
    assert_eq!(
        ltl_md_formulas(),
        checked,
        "docs/ltl.md's list and models/ltl.props hold the same formulas"
    );
    // Exact arithmetic gives the same values (the LTL product copies the exact probabilities).
    let m = models().join("ltl.pm").display().to_string();
    let p = models().join("ltl.props").display().to_string();
    let (code, stdout, stderr) = augur(&["check", &m, &p, "--method", "exact", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let out: Json = serde_json::from_str(&stdout).expect("JSON output");
    let exact: Vec<&str> = out["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["exact"].as_str())
        .collect();
    assert_eq!(
        exact,
        ["25/48", "13/48", "35/48", "7/16", "7/12", "1/3", "1/4"]
    );
}

#[test]
fn sync3_three_modules_with_blocking_and_a_constant() {
    let out = check_model("sync3", Some("p=0.2"));
    // n=0: one state; n=1,2,3: every (x, y): 1 + 3*4 = 13.
    assert_eq!(out["model"]["states"], 13);
}

#[test]
fn sync3_needs_its_constant() {
    let m = models().join("sync3.pm").display().to_string();
    let (code, _, stderr) = augur(&["check", &m, "--prop", "P=? [ F \"both\" ]"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains('p') && stderr.contains("--const"),
        "{stderr}"
    );
}

#[test]
fn sync3_deadlocks_are_an_error_on_request() {
    let m = models().join("sync3.pm").display().to_string();
    let (code, _, stderr) = augur(&[
        "check",
        &m,
        "--prop",
        "P=? [ F \"both\" ]",
        "--const",
        "p=0.2",
        "--no-fix-deadlocks",
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("deadlock") && stderr.contains("n=3"),
        "{stderr}"
    );
}

#[test]
fn ring3_renaming_formulas_and_several_choices() {
    let out = check_model("ring3", None);
    assert_eq!(out["model"]["states"], 27);
}

#[test]
fn merge_transition_rewards_of_merged_choices() {
    let out = check_model("merge", None);
    // s=0 -> {1, 2}, and the self-loops of s=1 and s=2.
    assert_eq!(out["model"]["states"], 3);
    assert_eq!(out["model"]["transitions"], 4);
}

#[test]
fn exact_method_on_a_prism_model() {
    let m = models().join("merge.pm").display().to_string();
    let (code, stdout, stderr) = augur(&[
        "check",
        &m,
        "--prop",
        "P=? [ X s=1 ]",
        "--method",
        "exact",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let out: Json = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["results"][0]["value"].as_f64(), Some(0.75));
}

/// Malformed files: exit code 1 and `file:line:col` of the problem on stderr.
#[test]
fn malformed_models_get_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        // (file text, expected "line:col", expected words)
        (
            "dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> (x'=1) +;\nendmodule\n",
            ":4:",
            "expected",
        ),
        (
            "mdp\nmodule m\n  x : [0..1];\n  [] true -> true;\nendmodule\n",
            ":1:1",
            "not supported",
        ),
        (
            "dtmc\nmodule m\n  x : [0..1];\n  [] x=0 & zz>1 -> (x'=1);\nendmodule\n",
            ":4:12",
            "zz",
        ),
        (
            "dtmc\nmodule m\n  x : [0..1] init 2;\nendmodule\n",
            ":3:3",
            "outside",
        ),
        (
            "dtmc\nmodule m\n  x : [0..1];\n  [] true -> (x'=true);\nendmodule\n",
            ":4:",
            "type",
        ),
    ];
    for (i, (text, at, words)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("bad{i}.pm"));
        std::fs::write(&path, text).unwrap();
        let p = path.display().to_string();
        let (code, _, stderr) = augur(&["check", &p, "--prop", "P=? [ F x=1 ]"]);
        assert_eq!(code, 1, "case {i}: {stderr}");
        assert!(
            stderr.contains(&format!("bad{i}.pm{at}")),
            "case {i}: expected {at} in {stderr}"
        );
        assert!(
            stderr.contains(words),
            "case {i}: expected {words} in {stderr}"
        );
    }
}

#[test]
fn export_a_prism_model_as_tra() {
    let m = models().join("merge.pm").display().to_string();
    let (code, stdout, stderr) = augur(&["export", &m, "--to", "tra"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // merge.pm: s=0 -> s=1 (3/4), s=2 (1/4); s=1 and s=2 loop (see merge.pm).
    assert_eq!(lines[0], "3 4");
    let mut rows: Vec<(u32, u32, f64)> = lines[1..]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    rows.sort_by_key(|r| (r.0, r.1));
    assert_eq!(
        rows,
        vec![(0, 1, 0.75), (0, 2, 0.25), (1, 1, 1.0), (2, 2, 1.0)]
    );
    // Undefined constants are named.
    let s = models().join("sync3.pm").display().to_string();
    let (code, _, stderr) = augur(&["export", &s, "--to", "tra"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("undefined constant p"), "{stderr}");
}

/// Step-bounded operators are computed by floating-point sweeps: their bounds must still
/// contain the exact value. On ring3, "done" within 7 steps has probability 1/16 (6
/// advances of probability 1/2 in 7 steps: 1/2^6 + 6·1/2^7 = 1/16, ring3.props' comment),
/// which the sweeps round to 0.06249999999999999, outside the zero-width bounds reported
/// before. The exact method (rationals) gives the reference; the default method's bounds
/// must hold it.
#[test]
fn step_bounded_bounds_contain_the_exact_value() {
    let m = models().join("ring3.pm").display().to_string();
    for prop in [
        "P=? [ F<=7 \"done\" ]",
        "P=? [ F<=9 \"done\" ]",
        "R{\"work\"}=? [ C<=5 ]",
        "P=? [ F>=2 \"done\" ]",
    ] {
        let run = |method: &str| {
            let (code, stdout, stderr) =
                augur(&["check", &m, "--prop", prop, "--method", method, "--json"]);
            assert_eq!(code, 0, "{prop} {method}: {stderr}");
            let out: Json = serde_json::from_str(&stdout).unwrap();
            out["results"][0].clone()
        };
        let exact = run("exact")["value"].as_f64().unwrap();
        let float = run("auto");
        let (lo, hi) = (
            float["bounds"][0].as_f64().unwrap(),
            float["bounds"][1].as_f64().unwrap(),
        );
        assert!(
            lo <= exact && exact <= hi,
            "{prop}: exact {exact} outside [{lo}, {hi}]"
        );
    }
}
