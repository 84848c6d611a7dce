//! LTL through the binary: temporal operators inside connectives (issue 13, item 10), read as
//! PRISM and Storm read them, and located errors outside `P[...]`.

use crate::util::{self, augur, code, ok, stderr};

/// 0 → {0.1: 1, 0.9: 2}, 1 → {1/3: 3, 2/3: 0}, 2 and 3 absorbing; "a" is s=1, "b" is s!=3.
fn chain() -> String {
    util::fixture("ltl_item10.pm").display().to_string()
}

fn value(line: &str) -> f64 {
    // `P=? [ ... ] = 0.0642857142857143 [lo, hi] (method)`
    let after = line
        .split("] = ")
        .nth(1)
        .unwrap_or_else(|| panic!("{line}"));
    let number = after.split_whitespace().next().unwrap();
    number.parse().unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn temporal_operators_inside_connectives_are_checked() {
    let model = &chain();
    // Hand-derived: F ("a" & G "b") is 27/28 - 9/10 = 9/140; F (s=2 & G s!=1) is 27/28, while
    // (F s=2) & (G s!=1) is 0.9; !F "a" is 0.9.
    for (property, expected) in [
        (r#"P=? [ F "a" & G "b" ]"#, 9.0 / 140.0),
        ("P=? [ F s=2 & G s!=1 ]", 27.0 / 28.0),
        ("P=? [ (F s=2) & (G s!=1) ]", 0.9),
        (r#"P=? [ !F "a" ]"#, 0.9),
        (r#"P=? [ G ("b" => F "a") ]"#, 1.0 / 28.0),
    ] {
        let out = ok(&["check", model, "--prop", property]);
        let line = out.lines().next().unwrap_or_default();
        let v = value(line);
        assert!((v - expected).abs() < 1e-9, "{property}: {out}");
    }
    // The reading is shown by `augur parse`.
    let out = ok(&["parse", "--prop", r#"P=? [ G F "a" | F G "b" ]"#]);
    assert_eq!(out.trim(), r#"P=? [ G F ("a" | (F G "b")) ]"#);
}

#[test]
fn temporal_operators_outside_a_path_formula_are_located() {
    let model = &chain();
    let out = augur(&["check", model, "--prop", r#""a" & F "b""#]);
    assert_eq!(code(&out), 1);
    let err = stderr(&out);
    assert!(err.contains("`F` is a temporal operator"), "{err}");
    assert!(err.contains(":1:7") && err.contains('^'), "{err}");
    let out = augur(&["check", model, "--prop", r#"P=? [ "a" U "b" U "a" ]"#]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains('^'), "{}", stderr(&out));
}
