//! The conformance tests: a data-driven test binary (`harness = false`, `libtest-mimic`) in
//! which every reference case is a test of its own, by name.
//!
//! - `prism::FILE:LINE` — every property of PRISM's DTMC regression suite in
//!   `../shared/prism-tests`, paired with the `// RESULT: value` line above it, checked through
//!   `augur check --json --epsilon 1e-10` on the model of the same stem (`model.pm.props`
//!   belongs to `model.pm`). Numbers and fractions agree to 1e-9 (relative, absolute for 0),
//!   `Infinity` is `"inf"`, `true`/`false` are booleans, and `Error` means the property is
//!   rejected with exit code 1 and an error located in the properties file. Each property is
//!   checked on its own, in a temporary properties file holding the file's declarations, so
//!   one rejected property does not hide the others.
//! - `qvbs::ID` — every instance of `../shared/qvbs/instances.json` (reference values computed
//!   by Storm in exact arithmetic): the reachable state and transition counts equal the
//!   full-model counts, and every named property is within 1e-6 relative of the reference.
//!   The large instances (more than 100,000 states or 1,000,000 transitions, or model files
//!   over 500 kB) are too slow for a debug build and are ignored unless asked for:
//!   `cargo test --release --test conformance -- --include-ignored`.
//!
//! - `idtmc::FILE:LINE[CONSTS]` and `storm_idtmc::NAME` — interval DTMCs (see `idtmc.rs`):
//!   PRISM's interval-DTMC regression suite in `../shared/prism-tests-idtmc` and Storm's robust
//!   DTMC test values, to 1e-6.
//! - `param::FILE:LINE[ARGS]` — parametric DTMCs (see `param.rs`): every property of PRISM's
//!   parametric suite in `../shared/prism-tests-param` equal to PRISM's rational function.
//! - `docs::FILE` — the documents as tests (see `docs.rs`, its `DOCUMENTS`): the command blocks
//!   of README.md, docs/*.md and models/*.md run as written, their output (and the JSON files
//!   they write that a document shows) compared with the document; `docs::FILE:LINE` for a
//!   block that needs external data (its error must say where the data comes from), is not run
//!   (ignored, with the reason) or runs only in release builds.
//!
//! Without `../shared` each of its groups is one test, shown as ignored with the reason; under
//! `CI=true` it fails instead. Before running, the binary prints how many cases it found.
//! Filter as with any test binary: `cargo test --test conformance -- qvbs::crowds`.

#[path = "../util/mod.rs"]
mod util;

mod docs;
mod idtmc;
mod param;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use util::results::{Expected, PropsFile};

/// Tolerance of the PRISM regression results (relative; absolute for 0).
const PRISM_TOL: f64 = 1e-9;
/// Tolerance of the QVBS reference values (relative).
const QVBS_REL: f64 = 1e-6;

fn main() {
    let args = Arguments::from_args();
    let run_large = args.ignored || args.include_ignored;
    let mut trials = Vec::new();
    let prism = prism_trials(&mut trials);
    let qvbs = qvbs_trials(&mut trials, run_large);
    let docs = docs::trials(&mut trials);
    let idtmc = idtmc::trials(&mut trials);
    let param = param::trials(&mut trials);
    eprintln!("conformance: {prism}; {qvbs}; {docs}; {idtmc}; {param}");
    libtest_mimic::run(&args, trials).exit();
}

/// The one test standing for a group whose data is missing: ignored with the reason, or a
/// failure under `CI=true`.
fn missing(name: &str, reason: String) -> Trial {
    if util::under_ci() {
        Trial::test(name, move || {
            Err(format!("{reason} (required under CI=true)").into())
        })
    } else {
        Trial::ignorable_test(name, move || Ok(Completion::ignored_with(reason)))
    }
}

// ---------- PRISM's regression suite ----------

fn prism_trials(trials: &mut Vec<Trial>) -> String {
    let dir = match util::shared_dir("prism-tests") {
        Ok(d) => d,
        Err(reason) => {
            trials.push(missing("prism", reason));
            return "prism-tests absent".into();
        }
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "props"));
    files.sort();
    let (mut n_files, mut n_cases) = (0, 0);
    for props in files {
        let file_name = props
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parsed = match PropsFile::read(&props) {
            Ok(p) if !p.cases.is_empty() => p,
            Ok(_) => {
                let msg = format!("{}: no RESULT lines", props.display());
                trials.push(Trial::test(format!("prism::{file_name}"), move || {
                    Err(msg.into())
                }));
                continue;
            }
            Err(e) => {
                trials.push(Trial::test(format!("prism::{file_name}"), move || {
                    Err(e.into())
                }));
                continue;
            }
        };
        n_files += 1;
        // `model.pm.props` belongs to `model.pm`.
        let model = props.with_extension("");
        for case in &parsed.cases {
            n_cases += 1;
            let (model, parsed, case) = (model.clone(), parsed.clone(), case.clone());
            trials.push(Trial::test(
                format!("prism::{file_name}:{}", case.line),
                move || prism_case(&model, &parsed, &case),
            ));
        }
    }
    format!("{n_cases} PRISM regression properties in {n_files} files")
}

fn prism_case(model: &Path, file: &PropsFile, case: &util::results::Case) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let props = tmp.path().join("case.props");
    std::fs::write(&props, file.text_with([case.property.as_str()]))
        .map_err(|e| format!("writing {}: {e}", props.display()))?;
    let prop_line = file.decls.len() + 1;
    let model_s = model.display().to_string();
    let props_s = props.display().to_string();
    let run = util::augur(&["check", &model_s, &props_s, "--json", "--epsilon", "1e-10"]);
    let (code, stdout, stderr) = (util::code(&run), util::stdout(&run), util::stderr(&run));
    let what = format!("`{}` (RESULT: {})", case.property, case.expected);
    if case.expected == Expected::Error {
        let located = stderr.contains(&format!("case.props:{prop_line}:"));
        return if code == 1 && located {
            Ok(())
        } else {
            Err(format!(
                "{what}: expected a located error (exit 1), got exit {code}\nstderr: {stderr}\nstdout: {stdout}"
            )
            .into())
        };
    }
    if code != 0 {
        return Err(format!("{what}: exit {code}: {}", stderr.trim()).into());
    }
    let out: Json = serde_json::from_str(&stdout)
        .map_err(|e| format!("{what}: output is not JSON ({e}): {stdout}"))?;
    let got = &out["results"][0]["value"];
    if case.expected.matches(got, PRISM_TOL) {
        Ok(())
    } else {
        Err(format!("{what}: got {got}").into())
    }
}

// ---------- QVBS ----------

fn qvbs_trials(trials: &mut Vec<Trial>, run_large: bool) -> String {
    let qvbs = match util::shared_dir("qvbs") {
        Ok(d) => d,
        Err(reason) => {
            trials.push(missing("qvbs", reason));
            return "qvbs absent".into();
        }
    };
    let instances: Vec<Json> = match std::fs::read_to_string(qvbs.join("instances.json"))
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(list) => list,
        Err(e) => {
            let msg = format!("{}/instances.json: {e}", qvbs.display());
            trials.push(Trial::test("qvbs", move || Err(msg.into())));
            return "qvbs unreadable".into();
        }
    };
    let (mut small, mut large) = (0, 0);
    for inst in instances {
        let id = inst["id"].as_str().unwrap_or("?").to_string();
        let name = format!("qvbs::{id}");
        if is_large(&inst, &qvbs) {
            large += 1;
            if run_large {
                let qvbs = qvbs.clone();
                trials.push(
                    Trial::test(name, move || qvbs_instance(&inst, &qvbs)).with_ignored_flag(true),
                );
            } else {
                let reason = format!(
                    "large instance ({} states): run with --release -- --include-ignored",
                    inst["states_full"]
                );
                trials.push(Trial::ignorable_test(name, move || {
                    Ok(Completion::ignored_with(reason))
                }));
            }
        } else {
            small += 1;
            let qvbs = qvbs.clone();
            trials.push(Trial::test(name, move || qvbs_instance(&inst, &qvbs)));
        }
    }
    format!(
        "{} QVBS instances ({large} large, run only with --include-ignored)",
        small + large
    )
}

fn is_large(inst: &Json, qvbs: &Path) -> bool {
    let states = inst["states_full"].as_u64().unwrap_or(0);
    let transitions = inst["transitions_full"].as_u64().unwrap_or(0);
    let file = qvbs
        .join(inst["model"].as_str().unwrap_or(""))
        .join(inst["file"].as_str().unwrap_or(""));
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    states > 100_000 || transitions > 1_000_000 || size > 500_000
}

/// `N=3,p=0.5` from the instance's constants.
fn const_arg(c: &serde_json::Map<String, Json>) -> Option<String> {
    if c.is_empty() {
        return None;
    }
    Some(
        c.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// Checks one instance: state and transition counts, then every named property.
fn qvbs_instance(inst: &Json, qvbs: &Path) -> Result<(), Failed> {
    let dir = qvbs.join(inst["model"].as_str().unwrap_or(""));
    let mut args = vec![
        "check".to_string(),
        dir.join(inst["file"].as_str().unwrap_or(""))
            .display()
            .to_string(),
        dir.join(inst["props"].as_str().unwrap_or(""))
            .display()
            .to_string(),
        "--json".to_string(),
    ];
    if let Some(c) = inst["constants"].as_object().and_then(const_arg) {
        args.push("--const".into());
        args.push(c);
    }
    let run = util::augur(&args);
    if !run.status.success() {
        return Err(format!(
            "exit code {}: {}",
            util::code(&run),
            util::stderr(&run).trim()
        )
        .into());
    }
    let out: Json = serde_json::from_slice(&run.stdout)
        .map_err(|e| format!("output is not JSON ({e}): {}", util::stdout(&run)))?;
    let mut failures = Vec::new();
    for (key, want) in [
        ("states", "states_full"),
        ("transitions", "transitions_full"),
    ] {
        if out["model"][key].as_u64() != inst[want].as_u64() {
            failures.push(format!(
                "{key} {} but the reference full model has {}",
                out["model"][key], inst[want]
            ));
        }
    }
    let results = out["results"].as_array().cloned().unwrap_or_default();
    let refs = inst["refs"].as_object().cloned().unwrap_or_default();
    for (name, reference) in refs {
        let Some(res) = results
            .iter()
            .find(|r| r["name"].as_str() == Some(name.as_str()))
        else {
            failures.push(format!("no result for property \"{name}\""));
            continue;
        };
        if !qvbs_value_ok(res, &reference) {
            failures.push(format!(
                "\"{name}\" = {} (bounds {}), reference {}",
                res["value"], res["bounds"], reference["approx"]
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}

/// A QVBS reference: a boolean, `∞`, or a number matched by the value or by sound bounds
/// within the tolerance that contain it.
fn qvbs_value_ok(res: &Json, reference: &Json) -> bool {
    let got = &res["value"];
    let want = &reference["approx"];
    let infinite = reference["exact"].as_str() == Some("∞") || want.as_str() == Some("∞");
    if infinite {
        return Expected::Infinity.matches(got, 0.0);
    }
    match want {
        Json::Bool(b) => Expected::Bool(*b).matches(got, 0.0),
        Json::Number(n) => {
            let w = n.as_f64().unwrap_or(f64::NAN);
            let in_bounds = res["bounds"].as_array().is_some_and(|b| {
                let lo = b.first().and_then(Json::as_f64).unwrap_or(f64::NAN);
                let hi = b.get(1).and_then(Json::as_f64).unwrap_or(f64::NAN);
                lo <= w
                    && w <= hi
                    && util::results::close(lo, w, QVBS_REL)
                    && util::results::close(hi, w, QVBS_REL)
            });
            Expected::Num(w).matches(got, QVBS_REL) || in_bounds
        }
        _ => false,
    }
}
