//! `augur learn --parametric STATE` and `augur pac --param-box` (issue 38, item 5): a learned
//! row kept symbolic, checked as a function and over the box the data allows.
//!
//! The traces are written so that the counts are known: from `start`, 40 times to `start`,
//! 200 to `work`, 20 to `unsafe` (260 departures); from `work`, 40 to `start`, 20 to `unsafe`,
//! 140 to `done` (200). `unsafe` and `done` end every trace (absorbing with `--final-absorbing`).
//! With `work`'s row symbolic (`done`, the most observed, is 1 minus the others), the
//! probability of reaching `unsafe` from `start` solves, by hand,
//! `x = 20/260 + 40/260 x + 200/260 y`, `y = p_u + p_s x`, so
//! `x = (1 + 10 p_u) / (11 - 10 p_s)` (`p_s = p_work_start`, `p_u = p_work_unsafe`), which is
//! `2/9` at the estimates `p_s = 40/200`, `p_u = 20/200`.

use crate::util::{augur, code, stderr, stdout, stdout_json};
use augur_ratfun::RatFunc;
use num_rational::BigRational;
use std::path::{Path, PathBuf};

const PARAMS: &str = "p_work_start,p_work_unsafe";

/// Each trace below is written this many times (enough departures for a box that keeps
/// every transition positive).
const COPIES: usize = 10;

fn traces(dir: &Path) -> PathBuf {
    let mut lines = Vec::new();
    let mut add = |times: usize, steps: &[&str]| {
        for _ in 0..times * COPIES {
            let steps: Vec<String> = steps
                .iter()
                .map(|s| format!("{{\"state\": \"{s}\"}}"))
                .collect();
            lines.push(format!(
                "{{\"id\": \"t{}\", \"steps\": [{}]}}",
                lines.len(),
                steps.join(", ")
            ));
        }
    };
    add(2, &["start", "unsafe"]);
    add(10, &["start", "work", "done"]);
    add(2, &["start", "work", "unsafe"]);
    add(4, &["start", "start", "work", "start", "work", "done"]);
    let path = dir.join("traces.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Learns the model (with `extra` options) into `dir/NAME`.
fn learn(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let t = traces(dir);
    let out = dir.join(name);
    let mut args = vec![
        "learn",
        t.to_str().unwrap(),
        "--final-absorbing",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = augur(&args);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    out
}

fn q(a: i64, b: i64) -> BigRational {
    BigRational::new(a.into(), b.into())
}

/// The hand-derived function, over the parameters in the order of `names`.
fn closed_form(names: &[String]) -> RatFunc {
    let idx = |s: &str| names.iter().position(|x| x == s);
    augur_ratfun::parse(
        "(1+10*p_work_unsafe)/(11-10*p_work_start)",
        names.len(),
        &idx,
    )
    .unwrap()
}

#[test]
fn a_symbolic_row_gives_the_hand_derived_function_and_the_point_value() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.json");
    let run = augur(&[
        "learn",
        traces(dir.path()).to_str().unwrap(),
        "--final-absorbing",
        "--parametric",
        "work",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let text = stdout(&run);
    assert!(
        text.contains(
            "state work kept symbolic: p_work_start, p_work_unsafe (to done: 1 minus them)"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("--param {PARAMS}")), "{text}");
    let run = augur(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "P=? [ F \"unsafe\" ]",
        "--param",
        PARAMS,
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let out = stdout_json(&run);
    let names: Vec<String> = out["model"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["p_work_start", "p_work_unsafe"]);
    let idx = |s: &str| names.iter().position(|x| x == s);
    let got =
        augur_ratfun::parse(out["results"][0]["function"].as_str().unwrap(), 2, &idx).unwrap();
    assert!(
        (&got - &closed_form(&names)).is_zero(),
        "{}",
        out["results"][0]["function"]
    );
    // At the estimates: 2/9 by hand, and what the point checker gives on the model learned
    // without --parametric.
    let at = got.eval(&[q(4, 20), q(2, 20)]).unwrap();
    assert_eq!(at, q(2, 9));
    let point = learn(dir.path(), "point.json", &[]);
    let run = augur(&[
        "check",
        point.to_str().unwrap(),
        "--prop",
        "P=? [ F \"unsafe\" ]",
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let v = stdout_json(&run)["results"][0]["value"].as_f64().unwrap();
    assert!((v - 2.0 / 9.0).abs() < 1e-9, "{v}");
}

/// The box of `pac --param-box` (JSON): per parameter `(lo, hi)`, and the options.
fn param_box(m: &Path, confidence: &str) -> (Vec<(String, f64, f64)>, String, String) {
    let run = augur(&[
        "pac",
        m.to_str().unwrap(),
        "--param-box",
        "--confidence",
        confidence,
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let out = stdout_json(&run);
    let mut entries = Vec::new();
    for e in out["rows"][0]["entries"].as_array().unwrap() {
        entries.push((
            e["parameter"].as_str().unwrap_or("").to_string(),
            e["lo"].as_f64().unwrap(),
            e["hi"].as_f64().unwrap(),
        ));
    }
    (
        entries,
        out["param"].as_str().unwrap().to_string(),
        out["region"].as_str().unwrap().to_string(),
    )
}

#[test]
fn the_box_is_the_anytime_intervals_of_the_row_tightened_by_its_sum() {
    let dir = tempfile::tempdir().unwrap();
    let m = learn(dir.path(), "m.json", &["--parametric", "work"]);
    let (entries, params, region) = param_box(&m, "0.9");
    // One row of three successors: K = 3, each entry at level 0.1/3 (the module docs of
    // augur_learn::intervals); the successors in state order: start, unsafe, done.
    let de = 0.1 / 3.0;
    let raw = [
        augur_learn::intervals::entry_interval(40, 200, de),
        augur_learn::intervals::entry_interval(20, 200, de),
        augur_learn::intervals::entry_interval(140, 200, de),
    ];
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(names, vec!["p_work_start", "p_work_unsafe", ""]);
    let (sum_lo, sum_hi): (f64, f64) =
        (raw.iter().map(|r| r.0).sum(), raw.iter().map(|r| r.1).sum());
    for (e, r) in entries.iter().zip(&raw) {
        let want_lo = r.0.max(1.0 - (sum_hi - r.1));
        let want_hi = r.1.min(1.0 - (sum_lo - r.0));
        assert!(
            (e.1 - want_lo).abs() < 1e-9 && (e.2 - want_hi).abs() < 1e-9,
            "{e:?} {r:?}"
        );
    }
    // The options round outward.
    let mut it = region.split(',');
    for e in &entries[..2] {
        let part = it.next().unwrap();
        let bits: Vec<&str> = part.split("<=").collect();
        assert_eq!(bits[1], e.0);
        assert!(bits[0].parse::<f64>().unwrap() <= e.1 && bits[2].parse::<f64>().unwrap() >= e.2);
    }
    assert!(params.starts_with("p_work_start="), "{params}");
    // The text form prints the command to paste.
    let run = augur(&["pac", m.to_str().unwrap(), "--param-box"]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let text = stdout(&run);
    assert!(text.contains("95% confidence"), "{text}");
    assert!(text.contains("--region '"), "{text}");
}

#[test]
fn the_answer_over_the_box_agrees_with_the_closed_form() {
    let dir = tempfile::tempdir().unwrap();
    let m = learn(dir.path(), "m.json", &["--parametric", "work"]);
    let (entries, params, region) = param_box(&m, "0.95");
    let names = vec!["p_work_start".to_string(), "p_work_unsafe".to_string()];
    let f = closed_form(&names);
    // The region's ends as written (decimals, exact).
    let ends: Vec<(BigRational, BigRational)> = region
        .split(',')
        .map(|part| {
            let b: Vec<&str> = part.split("<=").collect();
            (
                augur_ratfun::decimal(b[0]).unwrap(),
                augur_ratfun::decimal(b[2]).unwrap(),
            )
        })
        .collect();
    assert_eq!(ends.len(), 2, "{entries:?}");
    // f grows with both parameters: its range over the box is at the low and high corners.
    let lo = f.eval(&[ends[0].0.clone(), ends[1].0.clone()]).unwrap();
    let hi = f.eval(&[ends[0].1.clone(), ends[1].1.clone()]).unwrap();
    for (th, want) in [
        (augur_ratfun::rational_f64(&hi) + 0.01, "all satisfy"),
        (augur_ratfun::rational_f64(&lo) - 0.01, "all violate"),
    ] {
        let prop = format!("P<={th:.4} [ F \"unsafe\" ]");
        let out = stdout(&augur(&[
            "check",
            m.to_str().unwrap(),
            "--prop",
            &prop,
            "--param",
            &params,
            "--region",
            &region,
        ]));
        assert!(out.contains(want), "{prop}: {out}");
    }
    // In between: refined boxes agree with f at their corners.
    let th = (augur_ratfun::rational_f64(&lo) + augur_ratfun::rational_f64(&hi)) / 2.0;
    let th_q = augur_ratfun::decimal(&format!("{th:.4}")).unwrap();
    let run = augur(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        &format!("P<={th:.4} [ F \"unsafe\" ]"),
        "--param",
        &params,
        "--region",
        &region,
        "--refine",
        "0.9",
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let out = stdout_json(&run);
    let boxes = out["results"][0]["region"]["boxes"].as_array().unwrap();
    let mut decided = 0;
    for b in boxes {
        // `{"p_work_start": ["LO", "HI"], ...}`, exact rationals.
        let num = |v: &serde_json::Value| -> BigRational {
            let s = v.as_str().unwrap();
            match s.split_once('/') {
                Some((a, b)) => {
                    augur_ratfun::decimal(a).unwrap() / augur_ratfun::decimal(b).unwrap()
                }
                None => augur_ratfun::decimal(s).unwrap(),
            }
        };
        let parts: Vec<(BigRational, BigRational)> = names
            .iter()
            .map(|n| (num(&b["box"][n][0]), num(&b["box"][n][1])))
            .collect();
        let top = f.eval(&[parts[0].1.clone(), parts[1].1.clone()]).unwrap();
        let bottom = f.eval(&[parts[0].0.clone(), parts[1].0.clone()]).unwrap();
        match b["verdict"].as_str().unwrap() {
            "safe" => {
                decided += 1;
                assert!(top <= th_q, "{b}")
            }
            "unsafe" => {
                decided += 1;
                assert!(bottom > th_q, "{b}")
            }
            _ => {}
        }
    }
    assert!(decided > 0, "{out}");
}

#[test]
fn bad_parametric_states_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let t = traces(dir.path());
    let out = dir.path().join("m.json");
    for (state, needle) in [
        ("nosuch", "no state named `nosuch`"),
        ("done", "state `done` has one successor (`done`)"),
    ] {
        let run = augur(&[
            "learn",
            t.to_str().unwrap(),
            "--final-absorbing",
            "--parametric",
            state,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code(&run), 1, "{state}");
        assert!(stderr(&run).contains(needle), "{}", stderr(&run));
    }
    // A model without symbolic rows has no box.
    let m = learn(dir.path(), "point.json", &[]);
    let run = augur(&["pac", m.to_str().unwrap(), "--param-box"]);
    assert_eq!(code(&run), 1);
    assert!(
        stderr(&run).contains("no symbolic rows"),
        "{}",
        stderr(&run)
    );
}
