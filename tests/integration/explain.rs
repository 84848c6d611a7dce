//! `augur explain` end to end: the paths of a model with values derived by hand, the critical
//! subsystem written as a PRISM model and re-checked by `augur check` (which confirms the
//! violation), the JSON output, the DOT picture, and located errors.

use crate::util::{augur as run, model, stderr, stdout, stdout_json};

/// sync3 with p = 0.2 (models/sync3.props): x comes up with 0.2 per step, y with 0.5, three
/// steps. The most probable path to "both" is both up at once (0.2·0.5 = 0.1); then y first,
/// x at step 2 (0.8·0.5 · 0.2 = 0.08); then y first, x at step 3 (0.8·0.5 · 0.8 · 0.2 = 0.064).
#[test]
fn paths_of_sync3_are_exact() {
    let out = run(&[
        "explain",
        model("sync3.pm").to_str().unwrap(),
        "--const",
        "p=0.2",
        "--prop",
        "P<=0.3 [ F \"both\" ]",
        "--paths",
        "3",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = stdout_json(&out);
    assert!((j["value"].as_f64().unwrap() - 0.427).abs() < 1e-12);
    assert_eq!(j["violated"], true);
    let probs: Vec<f64> = j["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["probability"].as_f64().unwrap())
        .collect();
    for (got, want) in probs.iter().zip([0.1, 0.08, 0.064]) {
        assert!((got - want).abs() < 1e-15, "{probs:?}");
    }
    assert_eq!(j["paths"][0]["states"][1]["name"], "state 1 (x=1,y=1,n=1)");
    // 0.1 + 0.08 + 0.064 + 0.04 (x first, y second: 0.2·0.5 · 1 · 0.5... = 0.05) ...: the
    // counterexample needs the paths until the mass passes 0.3.
    let n = j["paths_to_exceed"].as_u64().unwrap() as usize;
    assert!(n > 3);
}

/// The subsystem, written as a PRISM model, re-checked by `augur check` on its own: the
/// violation is confirmed (the property is false there too), for the heuristic and the exact
/// minimum, with the property written on labels and on variables.
#[test]
fn subsystem_is_rechecked_by_check() {
    let dir = tempfile::tempdir().unwrap();
    for (prop, minimal) in [
        ("P<=0.3 [ F \"both\" ]", false),
        ("P<=0.3 [ F x=1&y=1 ]", true),
        ("P<0.2 [ true U<=2 \"both\" ]", false),
    ] {
        let file = dir.path().join("sub.pm");
        let file_s = file.to_str().unwrap();
        let m = model("sync3.pm");
        let mut args = vec![
            "explain",
            m.to_str().unwrap(),
            "--const",
            "p=0.2",
            "--prop",
            prop,
            "--output",
            file_s,
            "--json",
        ];
        if minimal {
            args.push("--minimal");
        } else {
            args.push("--subsystem");
        }
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let j = stdout_json(&out);
        let size = j["subsystem"]["size"].as_u64().unwrap();
        assert!(size < 16, "{j}");
        let check = run(&["check", file_s, "--prop", prop, "--json"]);
        assert!(check.status.success(), "{}", stderr(&check));
        let c = stdout_json(&check);
        assert_eq!(c["results"][0]["value"], false, "{prop}: {c}");
    }
}

/// A probability spread over millions of equally likely paths (the lattice walk of
/// `tests/fixtures/explain/lattice30.pm`, `P = P(Bin(30, 1/2) >= 20)` in closed form): the
/// subsystem heuristic ranks states, not paths, so it answers at θ = 0.5 × and 0.9 × the
/// probability (where the 100,000 most probable paths carry less than a tenth of it), and the
/// subsystem written out is re-checked by `augur check`, which confirms the violation.
#[test]
fn subsystem_of_a_probability_spread_over_many_paths() {
    let exact = 53_009_102.0 / f64::from(1u32 << 30);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sub.pm");
    let file_s = file.to_str().unwrap();
    for fraction in [0.5, 0.9] {
        let prop = format!("P<={} [ F \"far\" ]", exact * fraction);
        let out = run(&[
            "explain",
            "tests/fixtures/explain/lattice30.pm",
            "--prop",
            &prop,
            "--paths",
            "1",
            "--subsystem",
            "--output",
            file_s,
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let j = stdout_json(&out);
        assert!((j["value"].as_f64().unwrap() - exact).abs() < 1e-12, "{j}");
        // The paths enumerated (100,000 by default) do not come near θ.
        assert!(j["paths_to_exceed"].is_null(), "{j}");
        let s = &j["subsystem"];
        assert_eq!(s["exceeds"], true);
        assert!(s["probability"]["lo"].as_f64().unwrap() > exact * fraction);
        // Fewer states than the 496 of the lattice (the states with x + y <= 30).
        assert!(s["size"].as_u64().unwrap() < 496, "{s}");
        let check = run(&["check", file_s, "--prop", &prop, "--json"]);
        assert!(check.status.success(), "{}", stderr(&check));
        let c = stdout_json(&check);
        assert_eq!(c["results"][0]["value"], false, "{prop}: {c}");
    }
}

#[test]
fn minimal_subsystem_of_the_gambler_is_the_direct_path() {
    // From 5, the direct path 5 → 6 → ... → 10 has probability 0.4^5 = 0.01024 > 0.01: the six
    // states of that path are a subsystem, and no five states reach "win" from 5.
    let out = run(&[
        "explain",
        model("gambler.drn").to_str().unwrap(),
        "--prop",
        "P<=0.01 [ F \"win\" ]",
        "--minimal",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = stdout_json(&out);
    assert_eq!(j["subsystem"]["size"], 6);
    assert!((j["paths"][0]["probability"].as_f64().unwrap() - 0.01024).abs() < 1e-15);
    assert_eq!(j["paths_to_exceed"], 1);
}

#[test]
fn dot_highlights_the_paths() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sub.dot");
    let out = run(&[
        "explain",
        model("sync3.pm").to_str().unwrap(),
        "--const",
        "p=0.2",
        "--prop",
        "P<=0.3 [ F \"both\" ]",
        "--paths",
        "1",
        "--dot",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dot = std::fs::read_to_string(&file).unwrap();
    assert!(dot.starts_with("digraph {"));
    // The one path highlighted: 0 → 1 with 0.2·0.5.
    assert_eq!(dot.matches("color=red").count(), 1, "{dot}");
    assert!(dot.contains("label=\"0.1\", color=red"), "{dot}");
    assert!(stdout(&out).contains("Critical subsystem"));
}

#[test]
fn rewards_are_explained() {
    let out = run(&[
        "explain",
        model("die.json").to_str().unwrap(),
        "--prop",
        "R{\"coin_flips\"}<=3 [ F \"done\" ]",
        "--paths",
        "2",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let j = stdout_json(&out);
    // 11/3 flips in expectation; the contributions add up to it.
    let total = j["rewards"]["total"].as_f64().unwrap();
    assert!((total - 11.0 / 3.0).abs() < 1e-9, "{total}");
    assert_eq!(j["kind"], "reward");
}

#[test]
fn unsupported_properties_are_located_errors() {
    let out = run(&[
        "explain",
        model("gambler.drn").to_str().unwrap(),
        "--prop",
        "P>=0.5 [ F \"win\" ]",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&out));
}

#[test]
fn minimal_refuses_large_models() {
    let out = run(&[
        "explain",
        "tests/fixtures/explain/walk30.pm",
        "--prop",
        "P<=0.001 [ F \"top\" ]",
        "--minimal",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!(stderr(&out));
}

#[test]
fn from_must_name_one_state() {
    let out = run(&[
        "explain",
        "models/sync3.pm",
        "--const",
        "p=0.2",
        "--prop",
        "P<=0.3 [ F \"both\" ]",
        "--from",
        "n=1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&out));
    let out = run(&[
        "explain",
        model("sync3.pm").to_str().unwrap(),
        "--const",
        "p=0.2",
        "--prop",
        "P<=0.3 [ F \"both\" ]",
        "--from",
        "x=1&y=0&n=1",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    // From (x=1,y=0,n=1): y comes up in one of the two steps left: 1 − 0.5² = 0.75.
    assert!((stdout_json(&out)["value"].as_f64().unwrap() - 0.75).abs() < 1e-12);
}
