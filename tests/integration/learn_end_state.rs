//! `augur learn --end-state NAME` and the warning of `augur check` for an unbounded probability
//! that is 1 only because of smoothing (issue 14, item 8). Every value is derived by hand on a
//! three-trace set over the states `ok` and `bad`.

use crate::util::{augur, code, fail, ok, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `ok ok bad`, `ok`, `ok ok`. Observed: ok→ok 2, ok→bad 1; runs ended twice in ok, once in bad.
const TRACES: &str =
    "{\"steps\": [{\"state\": \"ok\"}, {\"state\": \"ok\"}, {\"state\": \"bad\"}]}\n\
                      {\"steps\": [{\"state\": \"ok\"}]}\n\
                      {\"steps\": [{\"state\": \"ok\"}, {\"state\": \"ok\"}]}\n";

fn setup(traces: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    std::fs::write(&t, traces).unwrap();
    (dir, t)
}

fn learn(dir: &Path, traces: &Path, extra: &[&str], out: &str) -> PathBuf {
    let m = dir.join(out);
    let mut args = vec!["learn", traces.to_str().unwrap(), "-o", m.to_str().unwrap()];
    args.extend_from_slice(extra);
    ok(&args);
    m
}

/// The value printed for one property (`PROP = VALUE (...)`).
fn value(model: &Path, prop: &str) -> (f64, String) {
    let o = augur(&["check", model.to_str().unwrap(), "--prop", prop, "--json"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    (v["results"][0]["value"].as_f64().unwrap(), stderr(&o))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// With the end state DONE, α = 0: from ok, 2/5 to ok, 1/5 to bad, 2/5 to DONE, so
/// x = 2/5·x + 1/5 gives P(F bad) = 1/3. With α = 1 (three valid successors each):
/// ok → (3, 2, 3)/8, so x = 3/8·x + 2/8 gives 2/5. DONE is absorbing and labelled.
#[test]
fn end_state_makes_violation_before_the_end_answerable() {
    let (dir, t) = setup(TRACES);
    let m0 = learn(dir.path(), &t, &["--end-state", "DONE"], "m0.json");
    let (p, warn) = value(&m0, "P=? [ F \"bad\" ]");
    assert!(close(p, 1.0 / 3.0), "{p}");
    assert!(!warn.contains("smoothing"), "{warn}");
    let m1 = learn(
        dir.path(),
        &t,
        &["--end-state", "DONE", "--alpha", "1"],
        "m1.json",
    );
    assert!(close(value(&m1, "P=? [ F \"bad\" ]").0, 0.4));
    assert!(close(value(&m1, "P=? [ F \"DONE\" ]").0, 1.0));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&m1).unwrap()).unwrap();
    assert_eq!(
        doc["metadata"]["state_names"],
        serde_json::json!(["ok", "bad", "DONE"])
    );
    assert_eq!(doc["metadata"]["learned"]["end_state"], "DONE");
    // DONE: only its self-loop; bad: (0 + 1, 0 + 1, 1 + 1) / 4.
    let t = doc["transitions"].as_array().unwrap();
    let p = |a: u64, b: u64| {
        t.iter()
            .find(|e| e[0] == a && e[1] == b)
            .map(|e| e[2].as_f64().unwrap())
    };
    assert_eq!((p(2, 2), p(2, 0)), (Some(1.0), None));
    assert_eq!((p(1, 0), p(1, 2)), (Some(0.25), Some(0.5)));
    // The summary says where the ends went.
    let out = ok(&[
        "learn",
        dir.path().join("t.jsonl").to_str().unwrap(),
        "--end-state",
        "DONE",
        "-o",
        dir.path().join("m2.json").to_str().unwrap(),
    ]);
    assert!(
        out.contains("trace ends move to the absorbing state DONE (label \"DONE\")"),
        "{out}"
    );
}

/// Without an end state, smoothing makes P(F bad) 1; on the observed runs it is 1/3 (the
/// same chain as with the end state and α = 0), so `check` warns. Bounded properties and a 1
/// that every observed run supports get no warning.
#[test]
fn a_one_made_by_smoothing_is_warned_about() {
    let (dir, t) = setup(TRACES);
    let m = learn(dir.path(), &t, &["--alpha", "1"], "m.json");
    let (p, warn) = value(&m, "P=? [ F \"bad\" ]");
    assert!(close(p, 1.0), "{p}");
    assert!(
        warn.contains(
            "warning: P=? [ F \"bad\" ] = 1 only because of smoothing: on the observed runs"
        ) && warn.contains("it is 0.333"),
        "{warn}"
    );
    assert!(warn.contains("--end-state NAME"), "{warn}");
    // α = 0: bad was never left, so its row is uniform over {ok, bad}: the value is 1 again.
    let m0 = learn(dir.path(), &t, &[], "m0.json");
    assert!(value(&m0, "P=? [ F \"bad\" ]")
        .1
        .contains("only because of smoothing"));
    // Bounded: not concerned.
    let (_, warn) = value(&m, "P=? [ F<=50 \"bad\" ]");
    assert!(!warn.contains("smoothing"), "{warn}");
    // Every observed run reaches bad: the 1 is the data's, no warning.
    let (dir2, t2) = setup(
        "{\"steps\": [{\"state\": \"ok\"}, {\"state\": \"bad\"}]}\n\
         {\"steps\": [{\"state\": \"ok\"}, {\"state\": \"ok\"}, {\"state\": \"bad\"}]}\n",
    );
    let m2 = learn(dir2.path(), &t2, &["--alpha", "1"], "m.json");
    let (p, warn) = value(&m2, "P=? [ F \"bad\" ]");
    assert!(close(p, 1.0) && !warn.contains("smoothing"), "{p} {warn}");
    // A model that was not learned has no counts: no warning.
    let (_, warn) = value(
        &crate::util::model("safetydrift.tra"),
        "P=? [ F \"violated\" ]",
    );
    assert!(!warn.contains("smoothing"), "{warn}");
}

#[test]
fn end_state_names_are_checked() {
    let (dir, t) = setup(TRACES);
    let out = dir.path().join("m.json");
    let e = fail(&[
        "learn",
        t.to_str().unwrap(),
        "--end-state",
        "ok",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        e.contains("invalid end state `ok`: the learned model already has a state of that name"),
        "{e}"
    );
    let e = fail(&[
        "learn",
        t.to_str().unwrap(),
        "--end-state",
        "run end",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        e.contains("invalid end state `run end`: it must be an identifier"),
        "{e}"
    );
}

/// With an abstraction spec the end state gets every predicate false and its own variable.
#[test]
fn end_state_with_a_spec() {
    let dir = tempfile::tempdir().unwrap();
    let m = learn(
        dir.path(),
        &crate::util::model("microwave/traces.jsonl"),
        &[
            "--abstraction",
            crate::util::model("microwave/spec.toml").to_str().unwrap(),
            "--alpha",
            "0.1",
            "--end-state",
            "DONE",
        ],
        "mw.json",
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    let names = doc["metadata"]["state_names"].as_array().unwrap();
    assert_eq!((names.len(), names[18].as_str()), (19, Some("DONE")));
    // Every run ends: P(F DONE) = 1; the end state satisfies no predicate.
    assert!(close(value(&m, "P=? [ F DONE ]").0, 1.0));
    let out = ok(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "filter(forall, !fork_inside & !open, \"DONE\")",
    ]);
    assert!(out.contains("= true"), "{out}");
}
