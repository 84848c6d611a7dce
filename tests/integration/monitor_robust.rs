//! `monitor compile --robust` and `--explain` end to end (the optional sections `robust` and
//! `explanations` of monitor file version 2; docs/monitor.md, docs/robust.md,
//! docs/explain.md), and version-2 files without them deciding as version-1 files did.

use serde_json::Value;
use std::path::Path;

use crate::util::{self, augur, augur_stdin};

const INTERVALS: &str = "tests/fixtures/monitor/risk-intervals.json";

fn compile(args: &[&str]) -> std::process::Output {
    let mut a = vec!["monitor", "compile"];
    a.extend_from_slice(args);
    augur(&a)
}

fn gate(monitor: &Path, policy: &str, input: &str) -> Vec<Value> {
    let o = augur_stdin(
        &[
            "monitor",
            "gate",
            "--monitor",
            monitor.to_str().unwrap(),
            "--policy",
            policy,
        ],
        input,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    util::stdout_json_lines(&o)
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The hand-derived interval chain (crates/monitor/src/compile_tests.rs): Pmax(F≤2 violated)
/// is 0.51 at safe and 0.76 at mild, the stored resolution's P 0.3892 and 0.656. A warn
/// threshold of 0.45 warns on the bound where the point value would allow.
#[test]
fn robust_monitor_from_an_interval_model_decides_on_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.json");
    let o = compile(&[
        INTERVALS,
        "--prop",
        "P=? [ F<=2 \"violated\" ]",
        "--robust",
        "--json",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &summary["tables"][0];
    assert!(
        (t["initial_value"].as_f64().unwrap() - 0.3892).abs() < 1e-12,
        "{t}"
    );
    assert!(
        (t["initial_bound"].as_f64().unwrap() - 0.51).abs() < 1e-12,
        "{t}"
    );
    assert_eq!(t["intervals"], "model");
    assert!(t["confidence"].is_null());
    let file = read(&m);
    assert_eq!(file["version"], 2);
    let r = &file["sections"]["robust"]["tables"][0];
    let want = [0.51, 0.76, 0.0, 0.0, 1.0];
    for (i, w) in want.iter().enumerate() {
        assert!((r["value"][i].as_f64().unwrap() - w).abs() < 1e-12, "{r}");
    }
    let d = gate(
        &m,
        "tests/fixtures/monitor/warn-045.toml",
        "{\"session\": \"s\", \"tool\": \"get_current_day\", \"arguments\": {}}\n",
    );
    assert_eq!(d[0]["verdict"], "warn");
    assert!((d[0]["probability"].as_f64().unwrap() - 0.3892).abs() < 1e-12);
    assert!((d[0]["bound"].as_f64().unwrap() - 0.51).abs() < 1e-12);
    insta::assert_snapshot!(d[0]["reason"].as_str().unwrap());
}

/// Robust tables from a learned model's counts state their confidence, and are never below
/// the point values; decisions carry the bound and the confidence.
#[test]
fn robust_monitor_from_learned_counts_states_its_confidence() {
    let dir = tempfile::tempdir().unwrap();
    let sd = dir.path().join("sd.json");
    util::ok(&[
        "learn",
        "models/safetydrift/traces.jsonl",
        "--abstraction",
        "models/safetydrift/spec.toml",
        "--alpha",
        "0.1",
        "-o",
        sd.to_str().unwrap(),
    ]);
    let m = dir.path().join("m.json");
    let o = compile(&[
        sd.to_str().unwrap(),
        "--prop",
        "P=? [ F<=5 \"VIOLATED\" ]",
        "--robust",
        "--confidence",
        "0.9",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "(intervals learned from its counts, 0.9 confidence); decisions use the bound"
        ),
        "{out}"
    );
    let file = read(&m);
    let r = &file["sections"]["robust"]["tables"][0];
    assert_eq!(r["intervals"], "learned");
    assert_eq!(r["confidence"], 0.9);
    assert_eq!(r["method"], "beta-mixture-union");
    let point = &file["tables"][0];
    for (field, pfield) in [("value", "value"), ("curve", "curve"), ("upper", "value")] {
        let (a, b) = (
            r[field].as_array().unwrap(),
            point[pfield].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!(x.as_f64().unwrap() >= y.as_f64().unwrap(), "{field}");
        }
    }
    let input = std::fs::read_to_string(util::root().join("models/monitor/actions.jsonl")).unwrap();
    for d in gate(&m, "models/monitor/policy.toml", &input) {
        if d.get("verdict").is_some() && d["rule"].as_str().is_some_and(|r| !r.starts_with("fail"))
        {
            assert_eq!(d["confidence"], 0.9, "{d}");
            assert!(d["bound"].as_f64().unwrap() >= d["probability"].as_f64().unwrap());
        }
    }
}

/// Files compiled now without the optional sections (version 2) give, byte for byte, the
/// decisions the version-1 fixtures gave (tests/fixtures/monitor-v1, made by the commands of
/// its README); with `--explain` the verdicts and probabilities stay the same.
#[test]
fn version_2_files_without_the_sections_decide_as_version_1_files() {
    let dir = tempfile::tempdir().unwrap();
    let sd = dir.path().join("sd-all.json");
    util::ok(&[
        "learn",
        "models/safetydrift/traces.jsonl",
        "--abstraction",
        "models/safetydrift/spec.toml",
        "--alpha",
        "0.1",
        "-o",
        sd.to_str().unwrap(),
    ]);
    let input = std::fs::read_to_string(util::root().join("models/monitor/actions.jsonl")).unwrap();
    let fx = util::root().join("tests/fixtures/monitor-v1");
    for (name, model, prop) in [
        ("dtr", sd.to_str().unwrap(), "P=? [ F<=5 \"VIOLATED\" ]"),
        (
            "risk",
            "models/safetydrift.tra",
            "P=? [ F<=5 \"violated\" ]",
        ),
    ] {
        let m = dir.path().join(format!("{name}.json"));
        util::ok(&[
            "monitor",
            "compile",
            model,
            "--prop",
            prop,
            "-o",
            m.to_str().unwrap(),
        ]);
        assert_eq!(read(&m)["version"], 2);
        assert!(read(&m).get("sections").is_none());
        let o = augur_stdin(
            &[
                "monitor",
                "gate",
                "--monitor",
                m.to_str().unwrap(),
                "--policy",
                "models/monitor/policy.toml",
            ],
            &input,
        );
        let want = std::fs::read_to_string(fx.join(format!("{name}-v1.gate.jsonl"))).unwrap();
        // Everything but `bounds`, `rule` and `reason`: the version-1 fixtures were compiled
        // when step-bounded values carried zero-width bounds (they now carry the sweeps'
        // rounding-error bounds), and the rule a call is classified by, named in both texts,
        // is the built-in classifier's of today (version 6 classifies a local `write_file` by
        // `local-file-write`, with the same implication as `modify-file` before).
        let without_bounds = |text: &str| -> Vec<serde_json::Value> {
            text.lines()
                .map(|l| {
                    let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                    if let Some(o) = v.as_object_mut() {
                        o.remove("bounds");
                        o.remove("rule");
                        o.remove("reason");
                    }
                    v
                })
                .collect()
        };
        assert_eq!(
            without_bounds(&String::from_utf8_lossy(&o.stdout)),
            without_bounds(&want),
            "{name}"
        );
        // With --explain: the same verdicts and probabilities.
        let e = dir.path().join(format!("{name}-explain.json"));
        util::ok(&[
            "monitor",
            "compile",
            model,
            "--prop",
            prop,
            "--explain",
            "-o",
            e.to_str().unwrap(),
        ]);
        let plain = gate(&m, "models/monitor/policy.toml", &input);
        let explained = gate(&e, "models/monitor/policy.toml", &input);
        assert_eq!(plain.len(), explained.len());
        for (a, b) in plain.iter().zip(&explained) {
            assert_eq!(a.get("verdict"), b.get("verdict"));
            assert_eq!(a.get("probability"), b.get("probability"));
        }
    }
}

/// The reasons of the learned (d, t, r) monitor with `--explain`: at warn and above, the kind
/// of action the most probable continuation takes and its share of the risk.
#[test]
fn explained_reasons_of_the_learned_dtr_monitor() {
    let dir = tempfile::tempdir().unwrap();
    let sd = dir.path().join("sd.json");
    util::ok(&[
        "learn",
        "models/safetydrift/traces.jsonl",
        "--abstraction",
        "models/safetydrift/spec.toml",
        "--alpha",
        "0.1",
        "-o",
        sd.to_str().unwrap(),
    ]);
    let m = dir.path().join("m.json");
    util::ok(&[
        "monitor",
        "compile",
        sd.to_str().unwrap(),
        "--prop",
        "P=? [ F<=5 \"VIOLATED\" ]",
        "--explain",
        "-o",
        m.to_str().unwrap(),
    ]);
    let input = std::fs::read_to_string(util::root().join("models/monitor/actions.jsonl")).unwrap();
    let mut reasons = Vec::new();
    for d in gate(&m, "models/monitor/policy.toml", &input) {
        let Some(r) = d["reason"].as_str() else {
            continue;
        };
        let warned =
            d["verdict"] != "allow" && !d["rule"].as_str().unwrap_or("").starts_with("fail");
        let p = d["probability"].as_f64().unwrap_or(0.0);
        let expected = warned && p > 0.0 && d["risk"] != "VIOLATED";
        assert_eq!(d.get("continuation").is_some(), expected, "{d}");
        if let Some(c) = d.get("continuation") {
            let share = c["share"].as_f64().unwrap();
            let want = c["probability"].as_f64().unwrap() / d["probability"].as_f64().unwrap();
            assert!((share - want.min(1.0)).abs() < 1e-9, "{d}");
        }
        reasons.push(format!("{} → {}: {r}", d["tool"], d["verdict"]));
    }
    insta::assert_snapshot!(reasons.join("\n"));
}

#[test]
fn robust_options_errors() {
    // An interval model without --robust, --confidence for an interval model, --confidence
    // without --robust, a model without intervals or counts.
    let e = util::fail(&[
        "monitor",
        "compile",
        INTERVALS,
        "--prop",
        "P=? [ F<=2 \"violated\" ]",
        "-o",
        "/dev/null",
    ]);
    assert!(
        e.contains("an interval DTMC") && e.contains("compile it with --robust"),
        "{e}"
    );
    let e = util::fail(&[
        "monitor",
        "compile",
        INTERVALS,
        "--prop",
        "P=? [ F<=2 \"violated\" ]",
        "--robust",
        "--confidence",
        "0.9",
        "-o",
        "/dev/null",
    ]);
    assert!(
        e.contains("given without a confidence: --confidence 0.9 cannot change them"),
        "{e}"
    );
    let o = augur(&[
        "monitor",
        "compile",
        INTERVALS,
        "--prop",
        "P=? [ F<=2 \"violated\" ]",
        "--confidence",
        "0.9",
        "-o",
        "/dev/null",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--robust"));
    let e = util::fail(&[
        "monitor",
        "compile",
        "models/safetydrift.tra",
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "--robust",
        "-o",
        "/dev/null",
    ]);
    assert!(e.contains("--robust needs intervals"), "{e}");
    let o = augur(&[
        "monitor",
        "compile",
        INTERVALS,
        "--prop",
        "P=? [ F<=2 \"violated\" ]",
        "--robust",
        "--confidence",
        "1.5",
        "-o",
        "/dev/null",
    ]);
    assert_ne!(o.status.code(), Some(0));
}

/// The messages of the robust options' user errors (exit code 1), as a user sees them.
#[test]
fn robust_user_errors_snapshot() {
    let prop = "P=? [ F<=2 \"violated\" ]";
    let cases: [&[&str]; 3] = [
        &[
            "monitor",
            "compile",
            INTERVALS,
            "--prop",
            prop,
            "-o",
            "/dev/null",
        ],
        &[
            "monitor",
            "compile",
            INTERVALS,
            "--prop",
            prop,
            "--robust",
            "--confidence",
            "0.9",
            "-o",
            "/dev/null",
        ],
        &[
            "monitor",
            "compile",
            "models/safetydrift.tra",
            "--prop",
            "P=? [ F<=5 \"violated\" ]",
            "--robust",
            "-o",
            "/dev/null",
        ],
    ];
    let all: Vec<String> = cases.iter().map(|a| util::fail(a)).collect();
    insta::assert_snapshot!(all.join("\n"));
}
