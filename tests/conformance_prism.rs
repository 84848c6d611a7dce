//! Conformance with PRISM's own DTMC regression tests in `../shared/prism-tests`: every
//! property of every `*.props` file, paired with the `// RESULT: value` line above it, is
//! checked through `augur check --json` against the model of the same stem. Numbers and
//! fractions must agree to 1e-9 (relative, or absolute for 0), `Infinity` is `"inf"`,
//! `true`/`false` are booleans, and `Error` means the property must be rejected with exit
//! code 1 and an error located in the properties file (its line and column).
//!
//! Each property is checked on its own (in a temporary properties file holding the file's
//! `const` declarations, then the property), so that one rejected property does not hide the
//! others. Without `../shared` the test prints a notice and passes, except under `CI=true`.

mod conformance_common;

use conformance_common::{augur, close, shared_dir};
use serde_json::Value as Json;
use std::path::Path;

const TOL: f64 = 1e-9;

/// `(expected, property text, line of the property in the original file)`.
fn cases(props: &str) -> (Vec<String>, Vec<(String, String, usize)>) {
    let mut consts = Vec::new();
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for (i, line) in props.lines().enumerate() {
        let t = line.trim();
        if let Some(r) = t.strip_prefix("// RESULT:") {
            pending = Some(r.trim().to_string());
        } else if t.is_empty() || t.starts_with("//") {
            continue;
        } else if t.starts_with("const ") {
            consts.push(t.to_string());
        } else if let Some(r) = pending.take() {
            out.push((r, t.to_string(), i + 1));
        }
    }
    (consts, out)
}

fn parse_expected(s: &str) -> Option<Json> {
    match s {
        "true" => Some(Json::Bool(true)),
        "false" => Some(Json::Bool(false)),
        "Infinity" => Some(Json::String("inf".into())),
        _ => {
            let v = if let Some((n, d)) = s.split_once('/') {
                n.trim().parse::<f64>().ok()? / d.trim().parse::<f64>().ok()?
            } else {
                s.parse::<f64>().ok()?
            };
            serde_json::Number::from_f64(v).map(Json::Number)
        }
    }
}

fn check_case(
    model: &Path,
    consts: &[String],
    expected: &str,
    prop: &str,
    dir: &Path,
) -> Option<String> {
    let file = dir.join("case.props");
    let mut text = String::new();
    for c in consts {
        text.push_str(c);
        text.push('\n');
    }
    text.push_str(prop);
    text.push('\n');
    std::fs::write(&file, &text).expect("writing a temporary properties file");
    let prop_line = consts.len() + 1;
    let args = vec![
        "check".to_string(),
        model.display().to_string(),
        file.display().to_string(),
        "--json".to_string(),
        "--epsilon".to_string(),
        "1e-10".to_string(),
    ];
    let run = augur(&args);
    let what = format!("{} [{prop}] (RESULT: {expected})", model.display());
    if expected == "Error" {
        let located = run.stderr.contains(&format!("case.props:{prop_line}:"));
        return if run.code == 1 && located {
            None
        } else {
            Some(format!(
                "{what}: expected a located error (exit 1), got exit {} stderr {:?} stdout {:?}",
                run.code, run.stderr, run.stdout
            ))
        };
    }
    if run.code != 0 {
        return Some(format!("{what}: exit {}: {}", run.code, run.stderr.trim()));
    }
    let out: Json = match serde_json::from_str(&run.stdout) {
        Ok(j) => j,
        Err(e) => return Some(format!("{what}: output is not JSON ({e})")),
    };
    let got = &out["results"][0]["value"];
    let want = parse_expected(expected)?;
    let ok = match (&want, got) {
        (Json::Number(w), Json::Number(g)) => close(
            g.as_f64().unwrap_or(f64::NAN),
            w.as_f64().unwrap_or(f64::NAN),
            TOL,
            TOL,
        ),
        (w, g) => w == g,
    };
    if ok {
        None
    } else {
        Some(format!("{what}: got {got}"))
    }
}

#[test]
fn prism_regression_properties() {
    let Some(dir) = shared_dir("prism-tests") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temporary directory");
    let mut props_files: Vec<_> = std::fs::read_dir(&dir)
        .expect("reading prism-tests")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "props"))
        .collect();
    props_files.sort();
    assert!(!props_files.is_empty());
    let mut failures = Vec::new();
    let mut total = 0;
    for props in &props_files {
        // `model.pm.props` belongs to `model.pm`.
        let model = props.with_extension("");
        let text = std::fs::read_to_string(props).expect("reading a props file");
        let (consts, cases) = cases(&text);
        assert!(!cases.is_empty(), "{}: no RESULT lines", props.display());
        for (expected, prop, _line) in cases {
            total += 1;
            if parse_expected(&expected).is_none() && expected != "Error" {
                failures.push(format!(
                    "{}: cannot read RESULT {expected}",
                    props.display()
                ));
                continue;
            }
            if let Some(f) = check_case(&model, &consts, &expected, &prop, tmp.path()) {
                failures.push(f);
            }
        }
    }
    eprintln!("{total} properties checked, {} failed", failures.len());
    assert!(
        failures.is_empty(),
        "{} of {total} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
