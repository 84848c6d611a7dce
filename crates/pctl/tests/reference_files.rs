//! Parses the property files of PRISM's regression suite (`../shared/prism-tests`) and of the
//! QVBS benchmarks (`../shared/qvbs`), relative to the workspace root.
//!
//! Each property of a PRISM test file is preceded by `// RESULT: value`; those whose value is
//! `Error` must be rejected with a located error, all others must parse. When the folders are
//! absent the tests print a notice and pass, except under `CI=true`, where they fail.

use augur_pctl::{parse_properties, parse_property};
use std::path::{Path, PathBuf};

fn shared_dir(name: &str) -> Option<PathBuf> {
    // crates/pctl -> workspace root -> its parent holds `shared`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("..").join("shared").join(name);
    if dir.is_dir() {
        Some(dir)
    } else if std::env::var("CI").as_deref() == Ok("true") {
        panic!("reference folder {} is missing (CI=true)", dir.display());
    } else {
        eprintln!("SKIPPED: reference folder {} not found", dir.display());
        None
    }
}

fn files_with_ext(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| exts.contains(&x))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Splits a PRISM test file into (line number, expected result, property text) for each
/// property, and the text of the file with the `Error` properties removed.
fn split_tests(text: &str) -> (Vec<(usize, String, String)>, String) {
    let mut props = Vec::new();
    let mut good = String::new();
    let mut pending: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(r) = t.strip_prefix("// RESULT:") {
            pending = Some(r.trim().to_string());
            good.push_str(line);
        } else if t.is_empty()
            || t.starts_with("//")
            || t.starts_with("const ")
            || t.starts_with("label ")
        {
            good.push_str(line);
        } else {
            let expected = pending.take().unwrap_or_default();
            if expected != "Error" {
                good.push_str(line);
            }
            props.push((i + 1, expected, t.to_string()));
        }
        good.push('\n');
    }
    (props, good)
}

#[test]
fn prism_regression_properties() {
    let Some(dir) = shared_dir("prism-tests") else {
        return;
    };
    let files = files_with_ext(&dir, &["props"]);
    assert!(!files.is_empty(), "no .props files in {}", dir.display());
    let (mut accepted, mut rejected) = (0, 0);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.display().to_string();
        let (props, good) = split_tests(&text);
        // Every property on its own, checked against its RESULT line.
        for (line, expected, prop) in &props {
            let single = parse_property(prop);
            if expected == "Error" {
                let err = single.expect_err(&format!("{name}:{line}: `{prop}` must be rejected"));
                // The error points into the property (a located message, not a blanket failure).
                assert!(err.column() > 1 && err.line() == 1, "{name}:{line}: {err}");
                rejected += 1;
            } else if let Err(e) = single {
                panic!(
                    "{name}:{line}: `{prop}` must parse:\n{}",
                    e.diagnostic(&augur_source::SourceFile::new(
                        name.as_str(),
                        prop.to_string()
                    ))
                );
            } else {
                accepted += 1;
            }
        }
        // The whole file (without the Error properties) parses as a properties file, with the
        // same number of properties, and its canonical text parses back to the same file.
        let expected_count = props.iter().filter(|(_, r, _)| r != "Error").count();
        let parsed = parse_properties(&good).unwrap_or_else(|e| {
            panic!(
                "{}",
                e.diagnostic(&augur_source::SourceFile::new(name.as_str(), good.as_str()))
            )
        });
        assert_eq!(parsed.properties.len(), expected_count, "{name}");
        let printed = parsed.to_string();
        assert_eq!(parse_properties(&printed).unwrap(), parsed, "{name}");
        // The file with its Error properties is rejected, at the line of the first one.
        if let Some((line, _, _)) = props.iter().find(|(_, r, _)| r == "Error") {
            let err = parse_properties(&text).expect_err(&name);
            assert_eq!(err.line(), *line, "{name}: {err}");
        }
    }
    // The six `Error` properties of bounded-reach-1 (G<0, G[1,0], G[-1,1], F<0, F[1,0], F[-1,1]).
    assert!(rejected >= 6, "only {rejected} Error properties found");
    assert!(accepted > 100, "only {accepted} properties found");
}

#[test]
fn qvbs_properties() {
    let Some(dir) = shared_dir("qvbs") else {
        return;
    };
    let files = files_with_ext(&dir, &["props", "prctl"]);
    assert!(!files.is_empty(), "no property files in {}", dir.display());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.display().to_string();
        let parsed = parse_properties(&text).unwrap_or_else(|e| {
            panic!(
                "{}",
                e.diagnostic(&augur_source::SourceFile::new(name.as_str(), text.as_str()))
            )
        });
        assert!(!parsed.properties.is_empty(), "{name}");
        // All QVBS properties are named.
        assert!(parsed.properties.iter().all(|p| p.name.is_some()), "{name}");
        let printed = parsed.to_string();
        assert_eq!(parse_properties(&printed).unwrap(), parsed, "{name}");
    }
}
