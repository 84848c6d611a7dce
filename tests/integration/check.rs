//! End-to-end tests of `augur check`, `augur horizon` and `augur export`.
//!
//! The conformance part runs PRISM's own regression properties (`tests/fixtures/*.props`, copied
//! from `shared/prism-tests` with their `// RESULT:` lines) on hand translations of the PRISM
//! models into explicit files (see `tests/fixtures/README.md`).

use crate::util::results::{Expected, PropsFile};
use crate::util::{augur as run, fixture, model, stdout_json};
use serde_json::Value as Json;
use std::path::Path;

/// The tolerance of the fixtures' RESULT values (relative; absolute for 0). The default
/// `--epsilon` is 1e-6 relative and the default method is sound, so 1e-6 holds.
const TOL: f64 = 1e-6;

/// Check every property of `props` on `model`: the non-error ones together (one JSON run),
/// the `Error` ones one by one (exit code 1).
fn conformance(model: &str, props: &str) {
    conformance_at(&fixture(model), &fixture(props));
}

fn conformance_at(model: &Path, props_path: &Path) {
    let props = props_path.display().to_string();
    let props = props.as_str();
    let file_cases = PropsFile::read(props_path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!file_cases.cases.is_empty(), "{props}: no RESULT lines");
    let dir = tempfile::tempdir().unwrap();
    let good: Vec<_> = file_cases
        .cases
        .iter()
        .filter(|c| c.expected != Expected::Error)
        .collect();
    let file = dir.path().join("good.props");
    std::fs::write(
        &file,
        file_cases.text_with(good.iter().map(|c| c.property.as_str())),
    )
    .unwrap();
    let out = run(&[
        "check",
        model.to_str().unwrap(),
        file.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{props}: exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    let results = j["results"].as_array().expect("results");
    assert_eq!(results.len(), good.len());
    let mut wrong = Vec::new();
    for (c, r) in good.iter().zip(results) {
        if !c.expected.matches(&r["value"], TOL) {
            wrong.push(format!(
                "{}: got {}, PRISM says {}",
                c.property, r["value"], c.expected
            ));
        }
    }
    assert!(wrong.is_empty(), "{props}:\n{}", wrong.join("\n"));
    for c in file_cases
        .cases
        .iter()
        .filter(|c| c.expected == Expected::Error)
    {
        let file = dir.path().join("bad.props");
        std::fs::write(&file, file_cases.text_with([c.property.as_str()])).unwrap();
        let out = run(&["check", model.to_str().unwrap(), file.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{props}: `{}` must be rejected",
            c.property
        );
    }
}

#[test]
fn prism_bounded_reach_1() {
    conformance("bounded-reach-1.tra", "bounded-reach-1.props");
}

#[test]
fn prism_dtmc_total_reward_explicit_with_srew() {
    conformance("dtmc_total_reward.tra", "dtmc_total_reward.props");
}

#[test]
fn prism_dtmc_rewards() {
    conformance("dtmc_rewards.json", "dtmc_rewards.props");
}

#[test]
fn prism_dtmc_rewards_bsccs() {
    conformance("dtmc_rewards_bsccs.json", "dtmc_rewards_bsccs.props");
}

#[test]
fn prism_dtmc_pctl_and_rewards2() {
    conformance("dtmc_pctl.json", "dtmc_pctl.props");
    conformance("dtmc_pctl.json", "dtmc_rewards2.props");
}

#[test]
fn prism_steady_and_until() {
    conformance("dtmc_steady_2.json", "dtmc_steady_2.props");
    conformance("pctl-until.json", "pctl-until.props");
}

#[test]
fn json_shape() {
    let m = fixture("dtmc_pctl.json");
    let out = run(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "\"reach\": P=? [ F s=2 ]",
        "--prop",
        "P>=0.5 [ s!=1 U s=3 ]",
        "--prop",
        "R{\"r\"}=? [ F s>3 ]",
        "--all-states",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    // The documented schema (docs/json.md), versioned.
    assert_eq!(j["schema_version"], 1);
    let model = &j["model"];
    assert_eq!(model["states"], 6);
    assert_eq!(model["transitions"], 9);
    assert_eq!(model["initial"], serde_json::json!([0]));
    assert!(model["build_seconds"].as_f64().is_some());
    let r = j["results"].as_array().unwrap();
    assert_eq!(r.len(), 3);
    for x in r {
        for key in [
            "name", "property", "value", "bounds", "method", "seconds", "states",
        ] {
            assert!(x.get(key).is_some(), "missing {key} in {x}");
        }
        assert_eq!(x["states"].as_array().unwrap().len(), 6);
    }
    assert_eq!(r[0]["name"], "reach");
    assert_eq!(r[1]["name"], Json::Null);
    // P(F s=2) = 1/6 from state 0 (PRISM's dtmc_pctl result); bounds contain it.
    let v = r[0]["value"].as_f64().unwrap();
    assert!((v - 1.0 / 6.0).abs() < 1e-9);
    if let Some(b) = r[0]["bounds"].as_array() {
        assert!(b[0].as_f64().unwrap() <= v + 1e-12 && v - 1e-12 <= b[1].as_f64().unwrap());
    }
    // P(s!=1 U s=3) = 1/2 >= 0.5 at state 0.
    assert_eq!(r[1]["value"], Json::Bool(true));
    // Infinite expected reward is "inf".
    assert_eq!(r[2]["value"], "inf");
    // The property is printed canonically and can be parsed again.
    let text = r[0]["property"].as_str().unwrap();
    let again = run(&["check", m.to_str().unwrap(), "--prop", text, "--json"]);
    assert!(again.status.success());
    assert_eq!(stdout_json(&again)["results"][0]["value"], r[0]["value"]);
}

#[test]
fn human_output_has_one_line_per_property() {
    let m = fixture("dtmc_total_reward.tra");
    let out = run(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "\"c\": R{\"r\"}=? [ C<=5 ]",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("c: "))
        .expect("result line");
    assert!(line.contains(" = 10 "), "{line}");
    assert!(line.ends_with(" s)"), "{line}");
}

#[test]
fn user_errors_exit_1_with_located_messages() {
    let m = fixture("dtmc_pctl.json");
    let m = m.to_str().unwrap();
    // Unknown label: named, with the known ones.
    let out = run(&["check", m, "--prop", "P=? [ F \"nope\" ]"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"nope\"") && err.contains("init"), "{err}");
    // Unknown variable.
    let out = run(&["check", m, "--prop", "P=? [ F x>2 ]"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`x`"));
    // Unknown reward structure lists the known ones.
    let out = run(&["check", m, "--prop", "R{\"cost\"}=? [ C<=2 ]"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"cost\"") && err.contains("\"time\""),
        "{err}"
    );
    // Syntax error: located (line:column) with a caret.
    let out = run(&["check", m, "--prop", "P=? [ F s=2 "]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains('^'), "{err}");
    // Missing model file.
    let out = run(&["check", "/nonexistent/model.tra", "--prop", "P=? [ F s=2 ]"]);
    assert_eq!(out.status.code(), Some(1));
    // A bad properties file names the file.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.props");
    std::fs::write(&bad, "P=? [ F s=2 ];\nP=? [ F s=2 U ];\n").unwrap();
    let out = run(&["check", m, bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.props") && err.contains(":2:"), "{err}");
}

#[test]
fn constants_from_the_command_line() {
    let m = fixture("bounded-reach-1.tra");
    let out = run(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "P=? [ F<=k s=3 ]",
        "--const",
        "k=3",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout_json(&out)["results"][0]["value"].as_f64(), Some(1.0));
    let out = run(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "P=? [ F<=k s=3 ]",
        "--const",
        "k=2",
        "--json",
    ]);
    assert_eq!(stdout_json(&out)["results"][0]["value"].as_f64(), Some(0.0));
}

#[test]
fn horizon_table_json_and_text() {
    // pctl-until: 0 → 1 → {2 (0.6), 3 (0.4)}: P(F<=h "target") = 0, 0.6, 0.6, ... from 0.
    let m = fixture("pctl-until.json");
    let out = run(&[
        "horizon",
        m.to_str().unwrap(),
        "--target",
        "target",
        "--max",
        "3",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    assert_eq!(j["table"][0], serde_json::json!([0.0, 0.6, 0.6]));
    assert_eq!(j["table"][1], serde_json::json!([0.6, 0.6, 0.6]));
    assert_eq!(j["table"][2], serde_json::json!([1.0, 1.0, 1.0]));
    let out = run(&[
        "horizon",
        m.to_str().unwrap(),
        "--target",
        "\"target\"",
        "--max",
        "2",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["state", "h=1", "h=2"]);
    let row = text.lines().nth(1).unwrap();
    assert!(
        row.starts_with("state 0") && row.ends_with("0  0.6"),
        "{text}"
    );
    let out = run(&[
        "horizon",
        m.to_str().unwrap(),
        "--target",
        "nope",
        "--max",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"target\""));
    // A state formula as the target: s=2 is the "target" label's state.
    let out = run(&[
        "horizon",
        m.to_str().unwrap(),
        "--target",
        "s=2",
        "--max",
        "3",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout_json(&out)["table"][0],
        serde_json::json!([0.0, 0.6, 0.6])
    );
}

#[test]
fn export_round_trips_through_every_readable_format() {
    let m = fixture("dtmc_total_reward.tra");
    let dir = tempfile::tempdir().unwrap();
    let prop = "R{\"r\"}=? [ C<=5 ]";
    for fmt in ["tra", "drn", "json"] {
        let out_path = dir.path().join(format!("m.{fmt}"));
        let out = run(&[
            "export",
            m.to_str().unwrap(),
            "--to",
            fmt,
            "-o",
            out_path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{fmt}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let chk = run(&[
            "check",
            out_path.to_str().unwrap(),
            "--prop",
            prop,
            "--json",
        ]);
        assert!(
            chk.status.success(),
            "{fmt}: {}",
            String::from_utf8_lossy(&chk.stderr)
        );
        assert_eq!(
            stdout_json(&chk)["results"][0]["value"].as_f64(),
            Some(10.0),
            "{fmt}"
        );
    }
    // The .tra export writes its companions.
    assert!(dir.path().join("m.lab").is_file());
    assert!(dir.path().join("m.srew").is_file());
    // DOT to stdout.
    let out = run(&["export", m.to_str().unwrap(), "--to", "dot"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("digraph"));
    let out = run(&["export", m.to_str().unwrap(), "--to", "xml"]);
    assert_eq!(out.status.code(), Some(1));
}

// ---------- the project's example models (models/README.md gives the derivations) ----------

#[test]
fn example_models_match_their_derived_values() {
    for m in ["safetydrift.tra", "gambler.drn", "die.json"] {
        let stem = m.split('.').next().unwrap();
        conformance_at(&model(m), &model(&format!("{stem}.props")));
    }
}

#[test]
fn safetydrift_mild_and_expected_steps() {
    // P(F<=5 violated | MILD) = [P^5]_{1,4} = 0.4539288013 (exact rational powers, models/README.md);
    // expected steps from SAFE = 29650/2093 ≈ 14.17 (fundamental matrix by back substitution).
    let out = run(&[
        "check",
        model("safetydrift.tra").to_str().unwrap(),
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "--prop",
        "R{\"steps\"}=? [ F \"violated\" ]",
        "--all-states",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    let p5 = j["results"][0]["states"][1].as_f64().unwrap();
    assert!((p5 - 0.4539288013).abs() < 1e-9, "{p5}");
    let t = j["results"][1]["value"].as_f64().unwrap();
    assert!((t - 29650.0 / 2093.0).abs() < 1e-9 * t, "{t}");
}

#[test]
fn safetydrift_horizon_table_matches_exact_powers() {
    // models/README.md: P(F<=h "violated") for h = 1..5, rows SAFE, MILD, ELEVATED, CRITICAL,
    // from exact rational matrix powers.
    let want = [
        [0.0, 0.13, 0.07, 0.07],
        [0.0514, 0.2353, 0.1351, 0.1351],
        [0.121966, 0.321685, 0.195643, 0.195643],
        [0.19619086, 0.39348049, 0.25194799, 0.25194799],
        [0.2671295398, 0.4539288013, 0.3043116307, 0.3043116307],
    ];
    let out = run(&[
        "horizon",
        model("safetydrift.tra").to_str().unwrap(),
        "--target",
        "violated",
        "--max",
        "5",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    for (h, row) in want.iter().enumerate() {
        for (s, w) in row.iter().enumerate() {
            let got = j["table"][s][h].as_f64().unwrap();
            assert!(
                (got - w).abs() < 1e-12,
                "state {s}, h={}: {got} vs {w}",
                h + 1
            );
        }
    }
    assert_eq!(j["table"][4], serde_json::json!([1.0, 1.0, 1.0, 1.0, 1.0]));
}

#[test]
fn gambler_every_start_state() {
    // Closed form (1 − 1.5^i)/(1 − 1.5^10) for P(win) and
    // i/(q−p) − (N/(q−p))·(1 − 1.5^i)/(1 − 1.5^N) for the expected duration (p = 0.4, N = 10).
    let out = run(&[
        "check",
        model("gambler.drn").to_str().unwrap(),
        "--prop",
        "P=? [ F \"win\" ]",
        "--prop",
        "R{\"steps\"}=? [ F \"done\" ]",
        "--all-states",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    for i in 0..=10 {
        let r = 1.5f64;
        let win = (1.0 - r.powi(i)) / (1.0 - r.powi(10));
        let dur = i as f64 / 0.2 - (10.0 / 0.2) * win;
        let got = j["results"][0]["states"][i as usize].as_f64().unwrap();
        assert!((got - win).abs() < 1e-9, "P(win | {i}) = {got}, want {win}");
        let got = j["results"][1]["states"][i as usize].as_f64().unwrap();
        assert!(
            (got - dur).abs() < 1e-9 * dur.max(1.0),
            "E[duration | {i}] = {got}, want {dur}"
        );
    }
}

#[test]
fn several_initial_states_report_a_filter() {
    // 0 → 2 (1/4), 1 (3/4); 1 → 2; 2 absorbing ("goal"). P(F<=1 goal) is 1/4 from 0 and 1
    // from 1: PRISM's convention over the initial states {0, 1} is the range [1/4, 1].
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("two.json");
    std::fs::write(
        &m,
        r#"{"states": 3, "initial": [0, 1],
            "transitions": [[0, 2, 0.25], [0, 1, 0.75], [1, 2, 1.0], [2, 2, 1.0]],
            "labels": {"goal": [2]}}"#,
    )
    .unwrap();
    let out = run(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "P=? [ F<=1 \"goal\" ]",
        "--prop",
        "P>=0.5 [ F<=1 \"goal\" ]",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = stdout_json(&out);
    assert_eq!(j["model"]["initial"], serde_json::json!([0, 1]));
    let r = &j["results"];
    assert_eq!(r[0]["value"].as_f64(), Some(0.25));
    assert_eq!(r[0]["filter"]["op"], "range");
    assert_eq!(r[0]["filter"]["max"].as_f64(), Some(1.0));
    // Boolean: forall over the initial states (false: it fails in state 0).
    assert_eq!(r[1]["value"], Json::Bool(false));
    assert_eq!(r[1]["filter"]["op"], "forall");
    // The text output says so.
    let out = run(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "P=? [ F<=1 \"goal\" ]",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("range over 2 initial states: [0.25, 1]"),
        "{text}"
    );
}
