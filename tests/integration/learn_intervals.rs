//! Learned interval DTMCs (`augur learn --intervals`, docs/robust.md): the coverage test of
//! issue 23 and the command line.
//!
//! Coverage: for each of 200 seeds, traces simulated from the known chain
//! `models/agent4/agent4.pm` (P(F "unsafe") = 17/59 from its start, derived by hand in the
//! model's comment) are learned, in process, through the learner's own pipeline with the
//! model's abstraction spec, as an interval DTMC at confidence 1 − δ; `Pmin` and `Pmax` of
//! `F "unsafe"` are checked and the true value must lie in `[Pmin, Pmax]` in at least
//! 1 − δ of the seeds, for δ = 0.05 and δ = 0.2. The coverage is printed with its Wilson
//! interval. The same loop with intervals that are too narrow (per-entry Wilson intervals at
//! z = 0.5, no union bound) must fail the same check: the assertion can fail.

use std::path::Path;

use augur_abstraction::{Abstraction, TraceFormat, TraceReader};
use augur_check::{CheckOptions, CheckSession, Constants, LoadOptions, Model, Properties};
use augur_learn::intervals::LearnedIntervals;
use augur_learn::learn::{wilson_interval, MAX_LEARNED_TRANSITIONS, WILSON_Z95};
use augur_learn::pipeline::{learn_from_traces, LearnOptions, LearnedModel};
use augur_learn::simulate::{state_names, Simulator};

use crate::util;

/// P(F "unsafe") of models/agent4/agent4.pm from its start state, by hand: 17/59.
const TRUE_VALUE: f64 = 17.0 / 59.0;
/// Seeds of the coverage test.
const SEEDS: u64 = 200;
/// Traces per seed.
const TRACES: usize = 200;

fn repo(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The known chain, its spec and the traces of `seed` as JSON Lines text.
struct Setup {
    chain: augur_dtmc::Dtmc,
    names: Vec<String>,
    spec: Abstraction,
}

impl Setup {
    fn new() -> Setup {
        let model = Model::load(&repo("models/agent4/agent4.pm"), &LoadOptions::default())
            .expect("the known chain");
        let chain = model.dtmc().clone();
        let names = state_names(&chain);
        let spec = Abstraction::from_file(&repo("models/agent4/spec.toml")).expect("the spec");
        Setup { chain, names, spec }
    }

    /// `TRACES` traces of the chain from `seed`, learned (point model; intervals are made
    /// from its counts).
    fn learn(&self, seed: u64) -> LearnedModel {
        let mut text = String::new();
        for trace in Simulator::new(&self.chain, seed, 10_000)
            .unwrap()
            .take(TRACES)
        {
            let steps: Vec<String> = trace
                .iter()
                .map(|&s| format!("{{\"state\": \"{}\"}}", self.names[s as usize]))
                .collect();
            text.push_str(&format!("{{\"steps\": [{}]}}\n", steps.join(", ")));
        }
        let reader = TraceReader::new(text.as_bytes(), TraceFormat::JsonLines, "sim.jsonl");
        let mut out = learn_from_traces(
            reader,
            "sim.jsonl",
            Some(&self.spec),
            &LearnOptions::default(),
        )
        .unwrap();
        out.models.remove(0)
    }
}

/// `[Pmin, Pmax]` of `F "unsafe"` on the model's interval DTMC (the outer ends of the
/// checker's guaranteed bounds).
fn robust_range(m: &LearnedModel) -> (f64, f64) {
    let dtmc = m.to_dtmc(MAX_LEARNED_TRANSITIONS).unwrap();
    assert!(dtmc.is_interval());
    let model = Model::from_dtmc(dtmc);
    let props = Properties::parse_file(
        "coverage",
        "Pmin=? [ F \"unsafe\" ]\nPmax=? [ F \"unsafe\" ]\n",
    )
    .unwrap();
    let compiled = props.compile(&model, &Constants::default()).unwrap();
    let mut session = CheckSession::new(&model, CheckOptions::default());
    let r: Vec<_> = session
        .check_all(&compiled)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let num = |r: &augur_check::CheckResult| match r.value {
        augur_check::Scalar::Num(v) => v,
        other => panic!("a number, not {other:?}"),
    };
    let lo = r[0].bounds.map_or(num(&r[0]), |b| b.lo);
    let hi = r[1].bounds.map_or(num(&r[1]), |b| b.hi);
    (lo, hi)
}

/// Intervals too narrow to hold: each entry's Wilson interval at z = 0.5 (about 38% each),
/// without a union bound.
fn too_narrow(m: &LearnedModel) -> LearnedIntervals {
    let mut iv = m.intervals.clone().unwrap();
    for s in 0..iv.indptr.len() - 1 {
        let n = m.counts.row_total(s as u32);
        let row = iv.indptr[s] as usize..iv.indptr[s + 1] as usize;
        if n == 0 || row.len() < 2 {
            continue;
        }
        for k in row {
            let (lo, hi) = wilson_interval(m.counts.count(s as u32, iv.targets[k]), n, 0.5);
            iv.lo[k] = lo;
            iv.hi[k] = hi;
        }
    }
    iv
}

/// How many of the seeds cover the true value, with intervals made by `make` at `confidence`.
fn coverage(
    setup: &Setup,
    confidence: f64,
    make: &dyn Fn(&LearnedModel) -> LearnedIntervals,
) -> (u64, f64) {
    let mut covered = 0;
    let mut width = 0.0;
    for seed in 0..SEEDS {
        let mut m = setup.learn(seed);
        m.learn_intervals(confidence).unwrap();
        m.intervals = Some(make(&m));
        let (lo, hi) = robust_range(&m);
        width += hi - lo;
        if lo <= TRUE_VALUE && TRUE_VALUE <= hi {
            covered += 1;
        }
    }
    (covered, width / SEEDS as f64)
}

fn report(what: &str, confidence: f64, (covered, width): (u64, f64)) -> f64 {
    let (lo, hi) = wilson_interval(covered, SEEDS, WILSON_Z95);
    let rate = covered as f64 / SEEDS as f64;
    eprintln!(
        "{what}, confidence {confidence}: the true value {TRUE_VALUE:.6} lies in [Pmin, Pmax] \
         in {covered} of {SEEDS} seeds ({rate:.3}; Wilson 95% interval [{lo:.3}, {hi:.3}]), \
         mean width {width:.4}"
    );
    rate
}

#[test]
fn learned_intervals_cover_the_true_value() {
    let setup = Setup::new();
    for delta in [0.05, 0.2] {
        let confidence = 1.0 - delta;
        let c = coverage(&setup, confidence, &|m| m.intervals.clone().unwrap());
        let rate = report("learned intervals", confidence, c);
        assert!(
            rate >= confidence,
            "coverage {rate} below the confidence {confidence}"
        );
    }
}

#[test]
fn too_narrow_intervals_fail_the_coverage_check() {
    // The check of the test above, on intervals that do not hold: it must fail.
    let setup = Setup::new();
    let c = coverage(&setup, 0.95, &too_narrow);
    let rate = report("too narrow (Wilson z = 0.5, no union bound)", 0.95, c);
    assert!(
        rate < 0.95,
        "too-narrow intervals covered in {rate} of the seeds: the coverage test could not fail"
    );
}

#[test]
fn learn_intervals_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("t.jsonl");
    let model = dir.path().join("m.json");
    let (t, m) = (traces.to_str().unwrap(), model.to_str().unwrap());
    let pm = repo("models/agent4/agent4.pm");
    let spec = repo("models/agent4/spec.toml");
    let out = util::augur(&[
        "simulate",
        pm.to_str().unwrap(),
        "-n",
        "500",
        "--max-steps",
        "1000",
        "--seed",
        "3",
        "-o",
        t,
    ]);
    assert!(out.status.success());
    let out = util::augur(&[
        "learn",
        t,
        "--abstraction",
        spec.to_str().unwrap(),
        "--intervals",
        "--confidence",
        "0.9",
        "-o",
        m,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("hold simultaneously with 90% confidence (6 estimated"),
        "{stdout}"
    );
    // The model records its confidence and method, and lists intervals.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let iv = &doc["metadata"]["learned"]["intervals"];
    assert_eq!(iv["confidence"], 0.9);
    assert_eq!(iv["method"], "beta-mixture-union");
    assert_eq!(iv["pairs"], 6);
    assert!(doc["intervals"].is_array() && doc.get("transitions").is_none());
    let out = util::augur(&["check", m, "--prop", "Pmax=? [ F \"unsafe\" ]"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("  the true probability is ≤ 0.") && stdout.contains("with 90% confidence"),
        "{stdout}"
    );
    let out = util::augur(&[
        "check",
        m,
        "--prop",
        "Pmax=? [ F \"unsafe\" ]",
        "--prop",
        "Pmin=? [ F \"unsafe\" ]",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &report["results"];
    assert_eq!(r[0]["confidence"]["level"], 0.9);
    let upper = r[0]["confidence"]["upper"].as_f64().unwrap();
    let lower = r[1]["confidence"]["lower"].as_f64().unwrap();
    assert!(
        lower <= TRUE_VALUE && TRUE_VALUE <= upper,
        "{lower} {upper}"
    );
    assert_eq!(upper, r[0]["bounds"][1].as_f64().unwrap());
    // The same from counts.
    let counts = dir.path().join("c.json");
    let c = counts.to_str().unwrap();
    let sp = spec.to_str().unwrap();
    assert!(
        util::augur(&["learn", t, "--abstraction", sp, "--counts-only", "-o", c])
            .status
            .success()
    );
    let m2 = dir.path().join("m2.json");
    let out = util::augur(&[
        "learn",
        "--from-counts",
        c,
        "--abstraction",
        sp,
        "--intervals",
        "--confidence",
        "0.9",
        "-o",
        m2.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let doc2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m2).unwrap()).unwrap();
    assert_eq!(doc2["intervals"], doc["intervals"]);
}

#[test]
fn bad_confidence_is_a_user_error() {
    for (bad, name) in [
        ("1.5", "confidence_above_one"),
        ("0", "confidence_zero"),
        ("x", "confidence_not_a_number"),
    ] {
        let out = util::augur(&[
            "learn",
            "models/end-state/traces.jsonl",
            "--intervals",
            "--confidence",
            bad,
            "-o",
            "never-written.json",
        ]);
        assert_eq!(out.status.code(), Some(1));
        insta::assert_snapshot!(name, String::from_utf8_lossy(&out.stderr));
    }
    // --confidence without --intervals, and --intervals with --alpha.
    for (args, name) in [
        (&["--confidence", "0.9"][..], "confidence_without_intervals"),
        (&["--intervals", "--alpha", "1"][..], "intervals_with_alpha"),
    ] {
        let mut a = vec!["learn", "models/end-state/traces.jsonl", "-o", "never.json"];
        a.extend_from_slice(args);
        let out = util::augur(&a);
        assert_eq!(out.status.code(), Some(1));
        insta::assert_snapshot!(name, String::from_utf8_lossy(&out.stderr));
    }
}

/// `augur pac --width`: following its advice on simulated data brings the width near the
/// target (within a factor 1.5 either way: 3296 more traces give 0.106 for 0.1), and the parts
/// of the width add up to about it.
#[test]
fn following_the_width_advice_shrinks_the_width_as_predicted() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let pm = repo("models/agent4/agent4.pm");
    let spec = repo("models/agent4/spec.toml");
    let (pm, spec) = (pm.to_str().unwrap(), spec.to_str().unwrap());
    let simulate = |n: u64, seed: u64, out: &str| {
        let o = util::augur(&[
            "simulate",
            pm,
            "-n",
            &n.to_string(),
            "--max-steps",
            "1000",
            "--seed",
            &seed.to_string(),
            "-o",
            out,
        ]);
        assert!(o.status.success());
    };
    let learn = |traces: &str, out: &str| {
        let o = util::augur(&[
            "learn",
            traces,
            "--abstraction",
            spec,
            "--intervals",
            "-o",
            out,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let advice = |model: &str| -> serde_json::Value {
        let o = util::augur(&[
            "pac",
            model,
            "--width",
            "0.1",
            "--prop",
            "P=? [ F \"unsafe\" ]",
            "--json",
        ]);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    simulate(200, 1, &p("a.jsonl"));
    learn(&p("a.jsonl"), &p("a.json"));
    let before = advice(&p("a.json"));
    let width = before["width"].as_f64().unwrap();
    assert!(width > 0.2, "{before}");
    assert_eq!(before["holds"], false);
    // The parts of the width (each state's row fixed in turn) add up to about the width.
    let parts: f64 = before["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["contribution"].as_f64().unwrap())
        .sum();
    assert!(
        parts > 0.7 * width && parts < 1.3 * width,
        "{parts} {width}"
    );
    let more = before["more_traces"].as_u64().unwrap();
    assert!(more > 200, "{before}");
    // Follow the advice: that many more traces of the same agent.
    simulate(more, 2, &p("b.jsonl"));
    let all = format!(
        "{}{}",
        std::fs::read_to_string(p("a.jsonl")).unwrap(),
        std::fs::read_to_string(p("b.jsonl")).unwrap()
    );
    std::fs::write(p("ab.jsonl"), all).unwrap();
    learn(&p("ab.jsonl"), &p("ab.json"));
    let after = advice(&p("ab.json"));
    let w = after["width"].as_f64().unwrap();
    eprintln!("advice: {more} more traces; the width after them: {w} (target 0.1)");
    assert!(
        (0.1 / 1.5..=0.1 * 1.5).contains(&w),
        "width {w} after {more} more traces: {after}"
    );
    assert_eq!(after["traces"].as_u64().unwrap(), 200 + more);
}

#[test]
fn width_advice_errors() {
    let dir = tempfile::tempdir().unwrap();
    let point = dir.path().join("p.json");
    let pt = point.to_str().unwrap();
    assert!(
        util::augur(&["learn", "models/end-state/traces.jsonl", "-o", pt])
            .status
            .success()
    );
    for (args, name) in [
        (
            vec!["pac", pt, "--width", "0.1", "--prop", "P=? [ F \"bad\" ]"],
            "width_on_a_point_model",
        ),
        (
            vec!["pac", pt, "--width", "0.1", "--prop", "P<0.1 [ F \"bad\" ]"],
            "width_of_a_bound",
        ),
        (
            vec!["pac", pt, "--width", "2", "--prop", "P=? [ F \"bad\" ]"],
            "width_above_one",
        ),
        (vec!["pac", pt, "--width", "0.1"], "width_without_prop"),
        (
            vec!["pac", pt, "--width", "0.1", "--prop", "P=? [ F \"bad\" ) ]"],
            "width_prop_syntax_error",
        ),
    ] {
        let out = util::augur(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr).replace(pt, "DIR/p.json");
        insta::assert_snapshot!(name, stderr);
    }
}

/// Without a spec, the final states' rows keep `[0, small]` to every other state: `Pmax` of
/// reaching one is 1, and `check` says why (not "because of smoothing").
#[test]
fn a_pmax_of_one_from_unobserved_transitions_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    let m = dir.path().join("m.json");
    let pm = repo("models/agent4/agent4.pm");
    let o = util::augur(&[
        "simulate",
        pm.to_str().unwrap(),
        "-n",
        "300",
        "--max-steps",
        "1000",
        "--seed",
        "1",
        "-o",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let o = util::augur(&[
        "learn",
        t.to_str().unwrap(),
        "--intervals",
        "-o",
        m.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let o = util::augur(&[
        "check",
        m.to_str().unwrap(),
        "--prop",
        "Pmax=? [ F \"{unsafe}\" ]",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stdout.starts_with("Pmax=? [ F \"{unsafe}\" ] = 1 "),
        "{stdout}"
    );
    assert!(
        stderr.contains("= 1 only because of the learned intervals: on the observed runs"),
        "{stderr}"
    );
    // No number of traces narrows [0, small] to nothing: pac --width says so.
    let o = util::augur(&[
        "pac",
        m.to_str().unwrap(),
        "--width",
        "0.1",
        "--prop",
        "P=? [ F \"{unsafe}\" ]",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pmax"], 1.0);
    assert_eq!(v["more_traces"], serde_json::Value::Null, "{v}");
}
