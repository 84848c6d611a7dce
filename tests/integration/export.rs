//! `augur export --to prism` keeps what properties mean (issue 14, item 4): every property of
//! the example models gives the same value on the model and on its PRISM export read back.

use crate::util::{augur as run, model, stdout_json};
use serde_json::Value as Json;

/// The values of `augur check MODEL PROPS [--const C] --json`, in order.
fn values(model_path: &str, props: &str, consts: &[&str]) -> Vec<Json> {
    let mut args = vec!["check", model_path, props, "--json"];
    for c in consts {
        args.extend(["--const", c]);
    }
    let out = run(&args);
    assert!(
        out.status.success(),
        "augur {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_json(&out)["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["value"].clone())
        .collect()
}

fn same(a: &Json, b: &Json) -> bool {
    match (a.as_f64(), b.as_f64()) {
        // The default method is sound to 1e-6 (relative); the export numbers its states
        // differently, so the iterations may stop at different points inside that precision.
        (Some(x), Some(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1e-300),
        _ => a == b,
    }
}

/// Export `name` to PRISM, read it back and compare every property of its `.props` file.
/// Returns the exported text.
fn round_trip(name: &str, props: &str, consts: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let m = model(name).display().to_string();
    let props = model(props).display().to_string();
    let exported = dir.path().join("exported.pm");
    let mut args = vec!["export", m.as_str(), "--to", "prism", "-o"];
    let exported_s = exported.display().to_string();
    args.push(&exported_s);
    for c in consts {
        args.extend(["--const", c]);
    }
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = values(&m, &props, consts);
    // The export defines the constants (with the values given), so it needs no --const.
    let after = values(&exported_s, &props, &[]);
    assert_eq!(before.len(), after.len());
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        assert!(
            same(b, a),
            "{name}, property {}: {b} before export, {a} after",
            i + 1
        );
    }
    std::fs::read_to_string(&exported).unwrap()
}

#[test]
fn die_keeps_its_variables() {
    // die.json has valuations (s, d): `F s=7 & d=6` must mean the same after export.
    let text = round_trip("die.json", "die.props", &[]);
    assert!(text.contains("  s : [0..7] init 0;"), "{text}");
}

#[test]
fn gambler_round_trips() {
    round_trip("gambler.drn", "gambler.props", &[]);
}

#[test]
fn safetydrift_keeps_its_variable() {
    let text = round_trip("safetydrift.tra", "safetydrift.props", &[]);
    assert!(text.contains("  risk : [0.."), "{text}");
}

#[test]
fn prism_examples_round_trip() {
    round_trip("merge.pm", "merge.props", &[]);
    // ring3.props uses the model's formula `total`; sync3.props its constant `p`.
    let ring3 = round_trip("ring3.pm", "ring3.props", &[]);
    assert!(ring3.contains("formula total = "), "{ring3}");
    let sync3 = round_trip("sync3.pm", "sync3.props", &["p=0.2"]);
    assert!(sync3.contains("const double p = 0.2;"), "{sync3}");
}

#[test]
fn a_model_without_valuations_gets_an_index_that_cannot_clash() {
    // A model variable named `s` (die.json) and an index variable would have clashed before:
    // without valuations the index is `_s`, and the file says why.
    let dir = tempfile::tempdir().unwrap();
    let tra = dir.path().join("m.tra");
    std::fs::write(&tra, "2 3\n0 0 0.5\n0 1 0.5\n1 1 1\n").unwrap();
    let lab = dir.path().join("m.lab");
    std::fs::write(&lab, "0=\"init\" 1=\"s\"\n0: 0\n1: 1\n").unwrap();
    let out = run(&["export", tra.to_str().unwrap(), "--to", "prism"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("_s is the state index"), "{text}");
    assert!(text.contains("  _s : [0..1] init 0;"), "{text}");
    let pm = dir.path().join("m.pm");
    std::fs::write(&pm, text.as_bytes()).unwrap();
    let chk = run(&[
        "check",
        pm.to_str().unwrap(),
        "--prop",
        "P=? [ X \"s\" ]",
        "--json",
    ]);
    assert!(
        chk.status.success(),
        "{}",
        String::from_utf8_lossy(&chk.stderr)
    );
    assert_eq!(stdout_json(&chk)["results"][0]["value"].as_f64(), Some(0.5));
}

/// Issue 42, item 7: an explicit model's `.sta` gives its variables to properties. Knuth's die
/// exported to `.tra` + `.sta` and read back: `F s=7 & d=6` is 1/6 and `F s=7 & d>3` is 1/2
/// (each face has probability 1/6); without the `.sta` the variables are unknown.
#[test]
fn variables_of_an_exported_sta_answer_properties() {
    let dir = tempfile::tempdir().unwrap();
    let tra = dir.path().join("die.tra");
    let tra_s = tra.display().to_string();
    let m = model("die.json").display().to_string();
    let out = run(&["export", &m, "--to", "tra", "-o", &tra_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sta = std::fs::read_to_string(dir.path().join("die.sta")).unwrap();
    assert!(sta.starts_with("(s,d)\n0:(0,0)\n"), "{sta}");
    let props = dir.path().join("die.props");
    std::fs::write(
        &props,
        "P=? [ F s=7 & d=6 ];\nP=? [ F s=7 & d>3 ];\nP=? [ F d=0 & s=7 ];\n",
    )
    .unwrap();
    let got = values(&tra_s, &props.display().to_string(), &[]);
    assert_eq!(got.len(), 3);
    let want = [1.0 / 6.0, 0.5, 0.0];
    for (g, w) in got.iter().zip(want) {
        assert!(same(g, &Json::from(w)), "{got:?}");
    }
    // `explain` names the states of its paths by their valuations.
    let out = run(&["explain", &tra_s, "--prop", "P=? [ F s=7 & d=6 ]"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("(s=7,d=6)"), "{text}");
    std::fs::remove_file(dir.path().join("die.sta")).unwrap();
    let out = run(&["check", &tra_s, "--prop", "P=? [ F s=7 ]"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains('s'), "{err}");
}
