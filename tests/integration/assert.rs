//! `--assert` (issue 14, item 1): a false boolean property (`check`) or an unmet PAC
//! requirement (`pac`) exits with code 3, so that a script or a CI job can gate on it; without
//! `--assert` the same runs exit 0; user errors keep exit code 1.

use crate::util::{augur, code, stderr, stdout};

const SD: &str = "models/safetydrift.tra";

#[test]
fn a_false_property_exits_3_with_assert_and_0_without() {
    // P(F<=5 violated) from SAFE is 0.2671295398 (models/README.md, exact matrix powers).
    let prop = "P<=0.001 [ F<=5 \"violated\" ]";
    let o = augur(&["check", SD, "--prop", prop, "--assert"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert!(stdout(&o).contains("= false"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("1 of 1 boolean properties do not hold") && err.contains(prop),
        "{err}"
    );
    let o = augur(&["check", SD, "--prop", prop]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn all_true_exits_0_and_only_the_false_ones_are_named() {
    let o = augur(&[
        "check",
        SD,
        "--prop",
        "P<=0.3 [ F<=5 \"violated\" ]",
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "--assert",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = augur(&[
        "check",
        SD,
        "--prop",
        "\"low\": P<=0.3 [ F<=5 \"violated\" ]",
        "--prop",
        "\"high\": P>=0.3 [ F<=5 \"violated\" ]",
        "--assert",
    ]);
    assert_eq!(code(&o), 3);
    let err = stderr(&o);
    assert!(
        err.contains("1 of 2") && err.contains("\"high\"") && !err.contains("\"low\""),
        "{err}"
    );
}

#[test]
fn assert_without_a_boolean_property_is_a_user_error() {
    let o = augur(&["check", SD, "--prop", "P=? [ F \"violated\" ]", "--assert"]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("no boolean property"), "{}", stderr(&o));
}

#[test]
fn an_error_outranks_the_assertion() {
    // An unknown label is a user error (1), even though the other property is false.
    let o = augur(&[
        "check",
        SD,
        "--prop",
        "P<=0.001 [ F<=5 \"violated\" ]",
        "--prop",
        "P=? [ F \"nope\" ]",
        "--assert",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

#[test]
fn pac_calculator_and_model_exit_3_when_the_bound_is_not_met() {
    // Pro2Guard's worked example: 1088 observations needed (models/learning.md derives it).
    let calc = |n: &str| {
        augur(&[
            "pac",
            "--states",
            "10",
            "--observations",
            n,
            "--p-hat",
            "0.2",
            "--epsilon",
            "0.05",
            "--delta",
            "0.01",
            "--assert",
        ])
    };
    assert_eq!(code(&calc("400")), 3);
    assert!(stderr(&calc("400")).contains("PAC requirement does not hold"));
    assert_eq!(code(&calc("1088")), 0);
    assert_eq!(code(&calc("1087")), 3);
    // A learned model short of its bound (the microwave example: 1236 more needed).
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("mw.json");
    let m = m.to_str().unwrap();
    let o = augur(&[
        "learn",
        "models/microwave/traces.jsonl",
        "--abstraction",
        "models/microwave/spec.toml",
        "--alpha",
        "0.1",
        "-o",
        m,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = augur(&["pac", m, "--epsilon", "0.1", "--delta", "0.05", "--assert"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let o = augur(&["pac", m, "--epsilon", "0.1", "--delta", "0.05"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn help_documents_exit_code_3() {
    let o = augur(&["--help"]);
    assert!(stdout(&o).contains("3 a requirement checked with --assert does not hold"));
    let o = augur(&["check", "--help"]);
    assert!(stdout(&o).contains("--assert"));
}

/// Issue 14, item 5: `filter(print, ...)` on a learned model prints the state names.
#[test]
fn printed_states_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    std::fs::write(
        &t,
        "{\"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}]}\n{\"steps\": [{\"state\": \"a\"}, {\"state\": \"c\"}]}\n",
    )
    .unwrap();
    let m = dir.path().join("m.json");
    let o = augur(&["learn", t.to_str().unwrap(), "-o", m.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = augur(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "filter(print, P=? [ X \"b\" ])",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // From a: b and c with 1/2 each (the empirical frequencies).
    assert!(stdout(&o).contains("  a: 0.5\n"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("state 0"), "{}", stdout(&o));
}
