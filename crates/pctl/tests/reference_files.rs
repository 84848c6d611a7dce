//! Parses the property files of PRISM's regression suite (`../shared/prism-tests`) and of the
//! QVBS benchmarks (`../shared/qvbs`), relative to the workspace root.
//!
//! Each property of a PRISM test file is preceded by `// RESULT: value` (read by
//! `tests/util/results.rs`, the one RESULT reader); those whose value is `Error` must be
//! rejected with a located error, all others must parse. When a folder is absent its test is
//! listed as ignored with the reason (libtest-mimic's ignored-with-reason, as the conformance
//! binary does), except under `CI=true`, where it fails.

use augur_pctl::{parse_properties, parse_property};
use libtest_mimic::{Arguments, Completion, Trial};

// The repository's one reader of `// RESULT:` lines (shared with the `augur` package's test
// binaries).
#[allow(dead_code)]
#[path = "../../../tests/util/results.rs"]
mod results;
use results::{Expected, PropsFile};
use std::path::{Path, PathBuf};

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        trial(
            "prism_regression_properties",
            "prism-tests",
            prism_regression_properties,
        ),
        trial("qvbs_properties", "qvbs", qvbs_properties),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// The test `name` on `../shared/FOLDER`: run when the folder is there; else ignored with the
/// reason, or a failure under `CI=true`.
fn trial(name: &str, folder: &str, test: fn(&Path)) -> Trial {
    // crates/pctl -> workspace root -> its parent holds `shared`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("..").join("shared").join(folder);
    let reason = format!(
        "needs ../shared/{folder} (reference data, not in this repository): {} not found",
        dir.display()
    );
    if dir.is_dir() {
        Trial::test(name, move || {
            test(&dir);
            Ok(())
        })
    } else if std::env::var("CI").as_deref() == Ok("true") {
        Trial::test(name, move || {
            Err(format!("{reason} (required under CI=true)").into())
        })
    } else {
        Trial::ignorable_test(name, move || Ok(Completion::ignored_with(reason)))
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

fn prism_regression_properties(dir: &Path) {
    let files = files_with_ext(dir, &["props"]);
    assert!(!files.is_empty(), "no .props files in {}", dir.display());
    let (mut accepted, mut rejected) = (0, 0);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.display().to_string();
        let tests = PropsFile::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Every property on its own, checked against its RESULT line.
        for case in &tests.cases {
            let (line, prop) = (case.line, &case.property);
            let single = parse_property(prop);
            if case.expected == Expected::Error {
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
        // The declarations and the properties that are not `Error` parse as a properties
        // file, with the same number of properties, and its canonical text parses back to the
        // same file.
        let good: Vec<&str> = tests
            .cases
            .iter()
            .filter(|c| c.expected != Expected::Error)
            .map(|c| c.property.as_str())
            .collect();
        let good_text = tests.text_with(good.iter().copied());
        let parsed = parse_properties(&good_text).unwrap_or_else(|e| {
            panic!(
                "{}",
                e.diagnostic(&augur_source::SourceFile::new(
                    name.as_str(),
                    good_text.as_str()
                ))
            )
        });
        assert_eq!(parsed.properties.len(), good.len(), "{name}");
        let printed = parsed.to_string();
        assert_eq!(parse_properties(&printed).unwrap(), parsed, "{name}");
        // In the file with its Error properties, each of them is rejected alone, with its
        // located error (the first at its line), and the others are still read.
        let errors: Vec<usize> = tests
            .cases
            .iter()
            .filter(|c| c.expected == Expected::Error)
            .map(|c| c.line)
            .collect();
        if let Some(&line) = errors.first() {
            match parse_properties(&text) {
                Ok(f) => {
                    assert_eq!(f.properties.len(), good.len(), "{name}");
                    assert_eq!(f.rejected.len(), errors.len(), "{name}");
                    assert_eq!(f.rejected[0].error.line(), line, "{name}");
                }
                Err(err) => assert_eq!(err.line(), line, "{name}: {err}"),
            }
        }
    }
    // The six `Error` properties of bounded-reach-1 (G<0, G[1,0], G[-1,1], F<0, F[1,0], F[-1,1]).
    assert!(rejected >= 6, "only {rejected} Error properties found");
    assert!(accepted > 100, "only {accepted} properties found");
}

fn qvbs_properties(dir: &Path) {
    let files = files_with_ext(dir, &["props", "prctl"]);
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
