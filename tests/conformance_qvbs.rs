//! Conformance with the QVBS DTMC benchmarks in `../shared/qvbs` (reference values computed
//! by Storm in exact arithmetic): every instance of `instances.json` is built and checked
//! through `augur check --json`; the reachable state and transition counts must equal the
//! full-model counts (`states_full`, `transitions_full`), and every named property must be
//! within 1e-6 relative of the reference (`"inf"` where the reference is `∞`, booleans for
//! `P>=1` properties).
//!
//! The large instances (more than 100,000 states or 1,000,000 transitions, or model files
//! over 500 kB) are too slow for a debug build: they are in the `#[ignore]`d test
//! `qvbs_large_instances`. Run them with a release build:
//!
//! ```text
//! cargo test --release --test conformance_qvbs -- --include-ignored
//! ```
//!
//! Without `../shared` the tests print a notice and pass, except under `CI=true`.

mod conformance_common;

use conformance_common::{augur, close, shared_dir};
use serde_json::Value as Json;
use std::path::Path;

const REL: f64 = 1e-6;

fn is_large(inst: &Json, qvbs: &Path) -> bool {
    let states = inst["states_full"].as_u64().unwrap_or(0);
    let transitions = inst["transitions_full"].as_u64().unwrap_or(0);
    let file = qvbs
        .join(inst["model"].as_str().unwrap_or(""))
        .join(inst["file"].as_str().unwrap_or(""));
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    states > 100_000 || transitions > 1_000_000 || size > 500_000
}

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

/// Checks one instance; returns the failures (empty when everything matches).
fn check_instance(inst: &Json, qvbs: &Path) -> Vec<String> {
    let id = inst["id"].as_str().unwrap_or("?");
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
    let run = augur(&args);
    let mut failures = Vec::new();
    if run.code != 0 {
        failures.push(format!(
            "{id}: exit code {}: {}",
            run.code,
            run.stderr.trim()
        ));
        return failures;
    }
    let out: Json = match serde_json::from_str(&run.stdout) {
        Ok(j) => j,
        Err(e) => return vec![format!("{id}: output is not JSON ({e}): {}", run.stdout)],
    };
    for (key, want) in [
        ("states", "states_full"),
        ("transitions", "transitions_full"),
    ] {
        if out["model"][key].as_u64() != inst[want].as_u64() {
            failures.push(format!(
                "{id}: {key} {} but the reference full model has {}",
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
            failures.push(format!("{id}: no result for property \"{name}\""));
            continue;
        };
        let got = &res["value"];
        let want = &reference["approx"];
        let ok = match (want, reference["exact"].as_str()) {
            (Json::Bool(b), _) => got.as_bool() == Some(*b),
            (_, Some("∞")) => got.as_str() == Some("inf"),
            (Json::String(s), _) if s == "∞" => got.as_str() == Some("inf"),
            (Json::Number(n), _) => {
                let w = n.as_f64().unwrap_or(f64::NAN);
                let in_bounds = res["bounds"].as_array().is_some_and(|b| {
                    let lo = b.first().and_then(Json::as_f64).unwrap_or(f64::NAN);
                    let hi = b.get(1).and_then(Json::as_f64).unwrap_or(f64::NAN);
                    lo <= w && w <= hi && close(lo, w, REL, 0.0) && close(hi, w, REL, 0.0)
                });
                got.as_f64().is_some_and(|g| close(g, w, REL, 0.0)) || in_bounds
            }
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{id}: \"{name}\" = {got} (bounds {}), reference {want}",
                res["bounds"]
            ));
        }
    }
    failures
}

fn run_instances(large: bool) {
    let Some(qvbs) = shared_dir("qvbs") else {
        return;
    };
    let text = std::fs::read_to_string(qvbs.join("instances.json")).expect("instances.json");
    let instances: Vec<Json> = serde_json::from_str(&text).expect("instances.json is a JSON list");
    assert!(!instances.is_empty());
    let mut failures = Vec::new();
    let mut ran = 0;
    for inst in instances.iter().filter(|i| is_large(i, &qvbs) == large) {
        ran += 1;
        let f = check_instance(inst, &qvbs);
        eprintln!(
            "{}: {}",
            inst["id"],
            if f.is_empty() { "ok" } else { "FAILED" }
        );
        failures.extend(f);
    }
    assert!(ran > 0, "no instance selected");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn qvbs_small_instances() {
    run_instances(false);
}

#[test]
#[ignore = "large instances: run with --release -- --include-ignored"]
fn qvbs_large_instances() {
    run_instances(true);
}
