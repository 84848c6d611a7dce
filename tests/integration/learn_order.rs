//! `augur learn --order k`: a k-th order chain as a first-order chain over k-tuples.

use crate::util;

#[test]
fn learn_order_two_builds_a_chain_over_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("t.jsonl");
    std::fs::write(
        &traces,
        "{\"steps\": [{\"state\": \"x\"}, {\"state\": \"a\"}, {\"state\": \"y\"}]}\n{\"steps\": [{\"state\": \"z\"}, {\"state\": \"a\"}, {\"state\": \"w\"}]}\n",
    )
    .unwrap();
    let out = dir.path().join("m.json");
    let o = util::cmd()
        .args([
            "learn",
            traces.to_str().unwrap(),
            "--order",
            "2",
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(
        doc["metadata"]["state_names"],
        serde_json::json!(["(x)", "(x,a)", "(a,y)", "(z)", "(z,a)", "(a,w)"])
    );
    assert_eq!(doc["metadata"]["learned"]["order"], 2);
    // From "x a" the chain surely goes to y: P(F "y") = 1 from (x), 0 from (z).
    let o = util::cmd()
        .args([
            "check",
            out.to_str().unwrap(),
            "--prop",
            "P=? [ F \"y\" ]",
            "--all-states",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let states = &v["results"][0]["states"];
    assert_eq!(
        (states[0].as_f64(), states[3].as_f64()),
        (Some(1.0), Some(0.0)),
        "{v}"
    );
    let o = util::cmd()
        .args([
            "learn",
            traces.to_str().unwrap(),
            "--order",
            "0",
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid order 0"));
}
