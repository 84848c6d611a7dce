//! Tests of the session layer: loading, constants, compilation, limits, the JSON report.

use crate::*;
use augur_dtmc::{Dtmc, DtmcBuilder};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `N` states in a line, the last absorbing: `x` counts up to N-1.
fn line_model(n: usize) -> String {
    format!(
        "dtmc\nmodule m\n  x : [0..{last}] init 0;\n  [] x<{last} -> (x'=x+1);\n  [] x={last} -> true;\nendmodule\nlabel \"end\" = x={last};\n",
        last = n - 1
    )
}

/// A 300-state cycle with one unit of reward in state 0 only: above the size where huge step
/// bounds are taken by repeated squaring, and its expected reward per step never settles, so
/// `C<=10^12` sweeps until a limit stops it. From state 0, `C<=k` is 1 for 1 <= k <= 300.
fn big_cycle() -> Dtmc {
    let n = 300;
    let mut b = DtmcBuilder::new(n);
    for s in 0..n as u32 {
        b.add_transition(s, (s + 1) % n as u32, 1.0).unwrap();
    }
    b.add_initial(0).unwrap();
    let r = b.add_reward_structure(Some("steps"));
    b.add_state_reward(r, 0, 1.0).unwrap();
    b.build().unwrap().0
}

fn load_text(text: &str, limits: Limits) -> Result<Model> {
    let opts = LoadOptions {
        limits,
        ..LoadOptions::default()
    };
    Model::from_text("line.pm", text, Format::Prism, &opts)
}

#[test]
fn shared_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Model>();
    both::<CompiledProperties>();
    both::<CompiledProperty>();
    both::<Properties>();
    both::<Limits>();
    both::<CheckResult>();
    both::<Report>();
    both::<CheckError>();
    both::<Constants>();
    both::<CheckSession<'static>>();
}

#[test]
fn the_state_limit_stops_an_exploration_with_the_count_so_far() {
    let text = line_model(5000);
    let m = load_text(&text, Limits::default().with_max_states(5000)).unwrap();
    assert_eq!(m.dtmc().num_states(), 5000);
    let e = load_text(&text, Limits::default().with_max_states(1000)).unwrap_err();
    assert_eq!(
        e.stop(),
        Some(&Stop::TooManyStates {
            limit: 1000,
            states: 1001,
            explored: 999
        })
    );
    assert!(!e.is_internal());
    assert_eq!(
        e.to_string(),
        "state limit exceeded: the model has more than 1000 states (1001 found, 999 explored so far)"
    );
    // Explicit models are refused where the file declares their size, before reading on.
    let json = r#"{"states": 3, "initial": [0], "rows": [[[1, 1]], [[2, 1]], [[2, 1]]]}"#;
    let opts = LoadOptions {
        limits: Limits::default().with_max_states(2),
        ..LoadOptions::default()
    };
    let e = Model::from_text("m.json", json, Format::Json, &opts).unwrap_err();
    assert!(!e.is_internal());
    assert!(
        e.to_string()
            .contains("the file declares 3 states, more than the limit of 2"),
        "{e}"
    );
    let at = e.location().expect("located");
    assert_eq!((at.line, at.column), (1, 12));
}

#[test]
fn a_cancelled_load_or_check_stops() {
    let limits = Limits::default();
    limits.cancel();
    let e = load_text(&line_model(5000), limits.clone()).unwrap_err();
    assert_eq!(e.stop(), Some(&Stop::Cancelled));
    // A check cancelled from another thread while it runs: `C<=k` with a huge k sweeps until
    // stopped.
    let d = big_cycle();
    let limits = Limits::default();
    let handle = limits.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        handle.cancel();
    });
    let options = CheckOptions {
        limits,
        ..CheckOptions::default()
    };
    let start = Instant::now();
    let e = CheckSession::for_dtmc(&d, options)
        .check_str("R=? [ C<=1000000000000 ]")
        .unwrap_err();
    canceller.join().unwrap();
    assert_eq!(e.stop(), Some(&Stop::Cancelled));
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[test]
fn a_timeout_stops_a_check_and_the_properties_after_it() {
    let d = big_cycle();
    let model = Model::from_dtmc(d);
    let mut props = Properties::new();
    props.add("--prop", "R=? [ C<=3 ]").unwrap();
    props.add("--prop", "R=? [ C<=1000000000000 ]").unwrap();
    props.add("--prop", "R=? [ C<=4 ]").unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let options = CheckOptions {
        limits: Limits::default().with_timeout(Duration::from_millis(300)),
        ..CheckOptions::default()
    };
    let outcomes = CheckSession::new(&model, options).check_all(&compiled);
    assert_eq!(outcomes[0].as_ref().unwrap().value, Scalar::Num(1.0));
    let timeout = Stop::Timeout {
        after: Some(Duration::from_millis(300)),
    };
    for o in &outcomes[1..] {
        let e = o.as_ref().unwrap_err();
        assert_eq!(e.stop(), Some(&timeout));
        assert_eq!(e.to_string(), "time limit exceeded (after 0.3 s)");
    }
    // A deadline already passed stops the exploration of a PRISM model too.
    let late = Limits::default().with_deadline(Instant::now());
    let e = load_text(&line_model(5000), late).unwrap_err();
    assert!(matches!(e.stop(), Some(Stop::Timeout { .. })), "{e:?}");
}

#[test]
fn progress_reports_builds_properties_and_sweeps() {
    let building = Arc::new(AtomicUsize::new(0));
    let properties = Arc::new(AtomicUsize::new(0));
    let solving = Arc::new(AtomicUsize::new(0));
    let (b, p, s) = (building.clone(), properties.clone(), solving.clone());
    let limits = Limits::default().with_progress(move |e| {
        let c = match e {
            Progress::Building { .. } => &b,
            Progress::Property { .. } => &p,
            Progress::Solving { .. } => &s,
        };
        c.fetch_add(1, Ordering::Relaxed);
    });
    let model = load_text(&line_model(20000), limits.clone()).unwrap();
    assert!(building.load(Ordering::Relaxed) >= 2);
    let mut props = Properties::new();
    props.add("--prop", "P=? [ F<=19999 \"end\" ]").unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let options = CheckOptions {
        limits,
        ..CheckOptions::default()
    };
    let r = CheckSession::new(&model, options).check_all(&compiled);
    assert_eq!(r[0].as_ref().unwrap().value, Scalar::Num(1.0));
    assert_eq!(properties.load(Ordering::Relaxed), 1);
    // 20,000 sweeps of a 20,000-state chain take longer than the 50 ms progress interval.
    assert!(solving.load(Ordering::Relaxed) >= 1);
}

#[test]
fn models_load_from_text_in_every_readable_format() {
    let opts = LoadOptions::default();
    let prism = Model::from_text("c.pm", &line_model(3), Format::Prism, &opts).unwrap();
    let json = r#"{"states": 3, "initial": [0], "rows": [[[1, 1]], [[2, 1]], [[2, 1]]], "labels": {"end": [2]}}"#;
    let drn = "@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n3\n@nr_choices\n3\n@model\nstate 0 init\n\taction 0\n\t\t1 : 1\nstate 1\n\taction 0\n\t\t2 : 1\nstate 2 end\n\taction 0\n\t\t2 : 1\n";
    let tra = "3 3\n0 1 1\n1 2 1\n2 2 1\n";
    for (m, format) in [(json, Format::Json), (drn, Format::Drn), (tra, Format::Tra)] {
        let model = Model::from_text("m", m, format, &opts).unwrap();
        assert_eq!(model.dtmc().num_states(), 3, "{format}");
        assert_eq!(model.dtmc().matrix, prism.dtmc().matrix, "{format}");
    }
    assert!(Model::from_text("m.dot", "", Format::Dot, &opts).is_err());
    // A PRISM error is a user error.
    let e =
        Model::from_text("bad.pm", "dtmc\nmodule m endmodule x", Format::Prism, &opts).unwrap_err();
    assert!(
        matches!(e, CheckError::Input(_)) && !e.is_internal(),
        "{e:?}"
    );
}

#[test]
fn constants_reach_the_model_the_file_and_the_properties() {
    let text = "dtmc\nconst int N;\nmodule m\n  x : [0..N] init 0;\n  [] x<N -> (x'=x+1);\n  [] x=N -> true;\nendmodule\nformula done = x=N;\n";
    let constants = Constants::parse("N=4,k=2").unwrap();
    let opts = LoadOptions {
        constants: constants.clone(),
        ..LoadOptions::default()
    };
    let model = Model::from_text("n.pm", text, Format::Prism, &opts).unwrap();
    assert_eq!(
        model.constants(),
        &[("N".to_string(), augur_expr::Value::Int(4))]
    );
    // The file's constant uses the model's; k is used directly; `done` is the model's formula.
    let props = Properties::parse_file(
        "p.props",
        "const int T = N+1;\nP=? [ F<=T done ]\nP=? [ F<=k done ]\nP=? [ F<=(N-1) done ]",
    )
    .unwrap();
    let compiled = props.compile(&model, &constants).unwrap();
    assert_eq!(
        compiled.constants.get("T"),
        Some(&augur_expr::Value::Int(5))
    );
    let values: Vec<Scalar> = CheckSession::new(&model, CheckOptions::default())
        .check_all(&compiled)
        .into_iter()
        .map(|r| r.unwrap().value)
        .collect();
    assert_eq!(
        values,
        [Scalar::Num(1.0), Scalar::Num(0.0), Scalar::Num(0.0)]
    );
    // A value that nothing declares or uses is a typo.
    let e = props
        .compile(&model, &Constants::parse("N=4,q=1").unwrap())
        .unwrap_err();
    assert!(
        matches!(&e, CheckError::UnusedConstant { name } if name == "q"),
        "{e:?}"
    );
    // A property that does not resolve keeps its located error; the others compile.
    let mut two = Properties::new();
    two.add("--prop", "P=? [ F \"nope\" ]").unwrap();
    two.add("--prop", "P=? [ F done ]").unwrap();
    let c = two
        .compile(&model, &Constants::parse("N=4").unwrap())
        .unwrap();
    assert!(c.items[0].resolved.is_err() && c.items[1].resolved.is_ok());
    let mut s = CheckSession::new(&model, CheckOptions::default());
    let e = s.check(&c.items[0]).unwrap_err();
    assert_eq!(
        e.location().map(|l| (l.file.as_str(), l.column)),
        Some(("--prop", 9))
    );
}

#[test]
fn the_report_is_the_documented_json() {
    let mut b = DtmcBuilder::new(3);
    b.add_transition(0, 1, 0.5).unwrap();
    b.add_transition(0, 2, 0.5).unwrap();
    b.add_transition(1, 1, 1.0).unwrap();
    b.add_transition(2, 2, 1.0).unwrap();
    b.add_initial(0).unwrap();
    b.add_initial(1).unwrap();
    b.add_label_state("goal", 1).unwrap();
    let r = b.add_reward_structure(Some("r"));
    b.add_state_reward(r, 0, 1.0).unwrap();
    let model = Model::from_dtmc(b.build().unwrap().0);
    let mut props = Properties::new();
    for p in [
        "\"p\": P=? [ F \"goal\" ]",
        "R=? [ F \"goal\" ]",
        "P>0.5 [ F \"goal\" ]",
        "filter(print, P=? [ X \"goal\" ], true)",
        "P=? [ F \"nope\" ]",
    ] {
        props.add("--prop", p).unwrap();
    }
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let mut report = Report::new(&model);
    let outcomes = CheckSession::new(&model, CheckOptions::default()).check_all(&compiled);
    for (p, o) in compiled.items.iter().zip(&outcomes) {
        report.push(p.name.as_deref(), &p.text, o, true);
    }
    let j: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["model"]["states"], 3);
    assert_eq!(j["model"]["transitions"], 4);
    assert_eq!(j["model"]["initial"], serde_json::json!([0, 1]));
    let r = &j["results"];
    // Two initial states: PRISM's range filter, the minimum reported.
    assert_eq!(r[0]["name"], "p");
    assert_eq!(r[0]["property"], "P=? [ F \"goal\" ]");
    assert_eq!(r[0]["value"], 0.5);
    let b = r[0]["bounds"].as_array().unwrap();
    assert!(
        b[0].as_f64().unwrap() <= 0.5 && 0.5 <= b[1].as_f64().unwrap(),
        "{b:?}"
    );
    assert_eq!(
        r[0]["filter"],
        serde_json::json!({"op": "range", "initial_states": 2, "min": 0.5, "max": 1.0})
    );
    assert_eq!(r[0]["states"], serde_json::json!([0.5, 1.0, 0.0]));
    assert!(r[0]["method"].as_str().is_some() && r[0]["seconds"].is_number());
    assert!(r[0].get("error").is_none() && r[0].get("notes").is_none());
    // Infinite rewards are "inf" (from state 0 the goal is missed with probability 1/2; the
    // minimum over the initial states is state 1's 0).
    assert_eq!(r[1]["value"], 0.0);
    assert_eq!(r[1]["filter"]["max"], "inf");
    assert_eq!(r[1]["states"], serde_json::json!(["inf", 0.0, "inf"]));
    assert_eq!(r[1]["name"], serde_json::Value::Null);
    assert_eq!(r[2]["value"], false);
    assert_eq!(
        r[2]["filter"],
        serde_json::json!({"op": "forall", "initial_states": 2})
    );
    assert_eq!(r[3]["printed"], serde_json::json!([[0, 0.5], [1, 1.0]]));
    // An error: value, bounds and method null, the message in "error".
    assert_eq!(r[4]["value"], serde_json::Value::Null);
    assert_eq!(r[4]["bounds"], serde_json::Value::Null);
    assert_eq!(r[4]["method"], serde_json::Value::Null);
    assert!(r[4]["error"]
        .as_str()
        .unwrap()
        .starts_with("unknown label \"nope\""));
    // The JSON reads back into the same report.
    let back: Report = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(back, report);
    // The documented schema names every field the report writes.
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/json.md"))
        .unwrap();
    for field in [
        "schema_version",
        "model",
        "states",
        "transitions",
        "initial",
        "build_seconds",
        "results",
        "name",
        "property",
        "value",
        "bounds",
        "method",
        "seconds",
        "filter",
        "initial_states",
        "min",
        "max",
        "notes",
        "printed",
        "error",
    ] {
        assert!(
            doc.contains(&format!("`{field}`")),
            "docs/json.md does not describe `{field}`"
        );
    }
    assert!(doc.contains(&format!("`\"schema_version\": {SCHEMA_VERSION}`")));
}

// ---- issue 13: the rest of the property language, checked end to end ----

/// PRISM's `dtmc_pctl.pm` regression model (shared/prism-tests): from s=0, P(F s=2) = 1/6
/// (PRISM's RESULT); from s=1, x1 = ½·x0 + ¼ with x0 = ½·x1 gives x1 = 1/3.
const PCTL_MODEL: &str = "dtmc\nmodule M\ns:[0..5];\n[] s=0 -> 0.5:(s'=1) + 0.5:(s'=3);\n[] s=1 -> 0.5:(s'=0) + 0.25:(s'=2) + 0.25:(s'=4);\n[r] s=2 -> 1:(s'=5);\n[] s=3 -> 1:(s'=3);\n[] s=4 -> 1:(s'=4);\n[] s=5 -> 1:(s'=2);\nendmodule\nrewards \"time\"\ntrue : 1;\nendrewards\n";

/// Checks every property of `file` on [`PCTL_MODEL`]; each outcome as a number (booleans as
/// 0/1) or the rendered error.
fn check_file(file: &str) -> Vec<std::result::Result<f64, String>> {
    let model = load_text(PCTL_MODEL, Limits::default()).unwrap();
    let props = Properties::parse_file("t.props", file).unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let mut session = CheckSession::new(&model, CheckOptions::default());
    session
        .check_all(&compiled)
        .into_iter()
        .map(|r| match r {
            Ok(r) => Ok(match r.value {
                Scalar::Num(x) => x,
                Scalar::Bool(b) => f64::from(u8::from(b)),
            }),
            Err(e) => Err(e.to_string()),
        })
        .collect()
}

fn assert_values(file: &str, expected: &[f64]) {
    assert_values_within(file, expected, 1e-9);
}

fn assert_values_within(file: &str, expected: &[f64], tolerance: f64) {
    let got = check_file(file);
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        let g = g.as_ref().unwrap_or_else(|m| panic!("property {i}: {m}"));
        assert!((g - e).abs() < tolerance, "property {i}: {g} != {e}");
    }
}

#[test]
fn operators_inside_arithmetic_are_computed_state_by_state() {
    assert_values(
        "P=? [ F s=2 ]\n\
         P=? [ F s=2 ] + 0.5\n\
         round(1 + P=? [ X s=1 ])\n\
         0.0 + filter(sum, P=? [ X s=1 ])\n\
         P>=0.1 [ F s=2 ] & P<0.2 [ F s=2 ]\n\
         P>=0.2 [ F s=2 ] | P>0.9 [ F s=2 ]\n\
         filter(max, 2 * P=? [ F s=2 ], s<=1)\n\
         (s=0 ? P=? [ F s=2 ] : 1) ^ 2;\n\
         -P=? [ X s=1 ]",
        &[
            1.0 / 6.0,
            1.0 / 6.0 + 0.5,
            2.0, // round(1.5): PRISM rounds ties up
            0.5, // only s=0 moves to s=1
            1.0,
            0.0,
            2.0 / 3.0,
            1.0 / 36.0,
            -0.5,
        ],
    );
}

#[test]
fn old_style_filters_take_the_first_state_or_the_min_or_max() {
    assert_values(
        "P=? [ F s=2 {s=1} ]\n\
         P=? [ F s=2 {s<=1}{min} ]\n\
         P=? [ F s=2 {s<=1}{max} ]\n\
         P=? [ F s=2 {s<=1}{min}{max} ]\n\
         P=? [ F s=2 {\"init\"} ]",
        &[1.0 / 3.0, 1.0 / 6.0, 1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0],
    );
}

#[test]
fn references_to_named_properties() {
    assert_values(
        "\"reach\": P=? [ F s=2 ]\n\
         \"twice\": 2 * \"reach\"\n\
         pow(3 * \"reach\", 2)\n\
         filter(count, \"reach\" > 0.5)\n\
         filter(forall, \"big\" <=> (s=2 | s=5))\n\
         \"big\": P>=1 [ F s=2 ]",
        // the cycle {2, 5} is the only set reaching s=2 surely
        &[1.0 / 6.0, 1.0 / 3.0, 0.25, 2.0, 1.0, 0.0],
    );
    let got = check_file("\"a\": \"b\" + 1\n\"b\": \"a\"\nP=? [ F s=2 ]");
    assert!(
        got[0].as_ref().unwrap_err().contains("refers to itself"),
        "{got:?}"
    );
    assert!((got[2].as_ref().unwrap() - 1.0 / 6.0).abs() < 1e-12);
}

/// A chain of 30 named properties, each using the previous one twice: `"p0"` is
/// P(F s=2) = 1/6, `"pk"` is `("p(k-1)" + "p(k-1)") / 2`, so every one is 1/6 again.
/// Evaluated at every use, the last would cost 2^30 evaluations of `"p0"`; evaluated once
/// per property, 30 (issue 22, class 1).
#[test]
fn nested_references_are_each_computed_once() {
    let mut file = String::from("\"p0\": P=? [ F s=2 ]\n");
    for k in 1..=30 {
        file.push_str(&format!("\"p{k}\": (\"p{j}\" + \"p{j}\") / 2\n", j = k - 1));
    }
    file.push_str("\"p30\" * 6 + \"p30\" * 0\n");
    let model = load_text(PCTL_MODEL, Limits::default()).unwrap();
    let props = Properties::parse_file("t.props", &file).unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    let mut session = CheckSession::new(&model, CheckOptions::default());
    let last = compiled.items.last().unwrap();
    let r = session.check(last).unwrap();
    let Scalar::Num(x) = r.value else {
        panic!("a number")
    };
    assert!((x - 1.0).abs() < 1e-9, "{x}");
    // p30 .. p0: each computed once for this property.
    assert_eq!(session.checker().reference_evaluations(), 31);
    // A second property computes them again (the cache is per property), once each.
    session.check(&compiled.items[30]).unwrap();
    assert_eq!(session.checker().reference_evaluations(), 31 + 30);
}

#[test]
fn storm_spellings_equal_prism_forms() {
    // long-run: the chain reaches the cycle {2,5} with probability 1/6 and spends half its
    // time in s=2 there: 1/12.
    // (the unbounded discounted sums by value iteration: to its precision)
    assert_values_within(
        "LRA=? [ s=2 ]\nS=? [ s=2 ]\nR{\"time\"}=? [ C<3 ]\nR{\"time\"}=? [ C<=2 ]\n\
         R{\"time\"}=? [ Cdiscount=0.5 ]\nR{\"time\"}=? [ C{discount=0.5} ]\n\
         R{\"time\"}=? [ C<=2discount=0.5 ]\nR{\"time\"}=? [ LRA ]",
        &[1.0 / 12.0, 1.0 / 12.0, 2.0, 2.0, 2.0, 2.0, 1.5, 1.0],
        1e-5,
    );
}

#[test]
fn a_semantic_error_fails_only_its_property() {
    let got = check_file("P=? [ F s=2 ]\nP>=1.5 [ F s=2 ]\nP=? [ F \"nowhere\" ]\nP=? [ X s=1 ]");
    assert!((got[0].as_ref().unwrap() - 1.0 / 6.0).abs() < 1e-12);
    let e = got[1].as_ref().unwrap_err();
    assert!(e.contains("probability bound 1.5 is outside [0, 1]"), "{e}");
    assert!(got[2].as_ref().unwrap_err().contains("unknown label"));
    assert!((got[3].as_ref().unwrap() - 0.5).abs() < 1e-12);
    // a type error in an operator over state formulas is located and fails alone
    let got = check_file("P=? [ F s=2 ] + true\nP=? [ X s=1 ]");
    assert!(
        got[0].as_ref().unwrap_err().contains("`+` needs numbers"),
        "{got:?}"
    );
    assert!(got[1].is_ok());
}

#[test]
fn an_unused_undefined_constant_is_a_warning() {
    let model = load_text(PCTL_MODEL, Limits::default()).unwrap();
    let props =
        Properties::parse_file("t.props", "const double p;\nconst int k;\nP=? [ F<=k s=2 ]")
            .unwrap();
    let compiled = props
        .compile(&model, &Constants::parse("k=2").unwrap())
        .unwrap();
    assert_eq!(
        compiled.warnings,
        vec!["constant `p` of t.props has no value but no property uses it: ignored".to_string()]
    );
    assert!(compiled.items[0].resolved.is_ok());
    // a used one is still an error
    let err = props.compile(&model, &Constants::new()).unwrap_err();
    assert!(err.to_string().contains('k'), "{err}");
}

#[test]
fn a_comparison_outside_a_variables_declared_range_is_a_warning() {
    // `s : [0..5]` in the PRISM model: `s=6` never holds, `s=K` with K = 5 can. A named
    // property referred to by name is warned about once.
    let model = load_text(PCTL_MODEL, Limits::default()).unwrap();
    let props = Properties::parse_file(
        "t.props",
        "const int K = 5;\n\"six\": s=6\nP=? [ F s=K ] * P=? [ F \"six\" ]",
    )
    .unwrap();
    let compiled = props.compile(&model, &Constants::new()).unwrap();
    assert_eq!(
        compiled.warnings,
        ["s=6 never holds: s ranges over 0..5\n --> t.props:2:8\n  |\n2 | \"six\": s=6\n  |        ^^^"]
    );
    assert!(compiled.items.iter().all(|i| i.resolved.is_ok()));
}

#[test]
fn rational_constants_are_exact_in_thresholds() {
    let model = load_text(PCTL_MODEL, Limits::default()).unwrap();
    let props = Properties::parse_file(
        "t.props",
        "const double p;\nconst double q = p/2;\nP>=p [ F s=2 ]\nP>=q [ F s=2 ]\nP>=0.1 [ F s=2 ]",
    )
    .unwrap();
    let compiled = props
        .compile(&model, &Constants::parse("p=1/3").unwrap())
        .unwrap();
    let exact: Vec<String> = compiled
        .items
        .iter()
        .map(|i| match &i.resolved.as_ref().unwrap().formula {
            augur_pctl::ResolvedFormula::Prob {
                threshold: Some(t), ..
            } => t.value.exact.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(exact, ["1/3", "1/6", "1/10"]);
    assert_eq!(
        compiled.constants["p"],
        augur_expr::Value::Double(1.0 / 3.0)
    );
}

/// The default method's exact elimination solves a small PRISM model with its probabilities
/// and rewards as written (0.7 is 7/10, not its double), so its one-ulp bounds contain the
/// model's values: 70/97 and 13/97 here (by hand: a = 0.7 + 0.3·0.1·a; e = 0.13 + 0.03·e);
/// and an explicit model's decimals are read as written.
#[test]
fn default_bounds_contain_the_value_of_the_model_as_written() {
    let text = "dtmc\nmodule m\n  x : [0..3] init 0;\n  [] x=0 -> 0.7 : (x'=2) + 0.3 : (x'=1);\n  [] x=1 -> 0.1 : (x'=0) + 0.9 : (x'=3);\n  [] x>=2 -> true;\nendmodule\nrewards \"r\"\n  x<2 : 0.1;\nendrewards\n";
    let model = Model::from_text("two.pm", text, Format::Prism, &LoadOptions::default()).unwrap();
    let props = Properties::parse_file("p.props", "P=? [ F x=2 ]\nR{\"r\"}=? [ F x>=2 ]").unwrap();
    let compiled = props.compile(&model, &Constants::default()).unwrap();
    let results: Vec<CheckResult> = CheckSession::new(&model, CheckOptions::default())
        .check_all(&compiled)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let q = |x: f64| BigRational::from_float(x).unwrap();
    // The same chain as an explicit (DRN) model: its decimals as written.
    let drn = "@type: DTMC\n@parameters\n\n@reward_models\n\n@nr_states\n4\n@nr_choices\n4\n@model\nstate 0 init\n\taction 0\n\t\t2 : 0.7\n\t\t1 : 0.3\nstate 1\n\taction 0\n\t\t0 : 0.1\n\t\t3 : 0.9\nstate 2 goal\n\taction 0\n\t\t2 : 1\nstate 3\n\taction 0\n\t\t3 : 1\n";
    let explicit = Model::from_text("two.drn", drn, Format::Drn, &LoadOptions::default()).unwrap();
    let props = Properties::parse_file("p.props", "P=? [ F \"goal\" ]").unwrap();
    let compiled = props.compile(&explicit, &Constants::default()).unwrap();
    let mut results = results;
    results.extend(
        CheckSession::new(&explicit, CheckOptions::default())
            .check_all(&compiled)
            .into_iter()
            .map(|r| r.unwrap()),
    );
    for (r, (num, den)) in results.iter().zip([(70, 97), (13, 97), (70, 97)]) {
        let truth = BigRational::new(num.into(), den.into());
        let Bounds { lo, hi } = r.bounds.unwrap();
        assert!(q(lo) <= truth && truth <= q(hi), "[{lo}, {hi}] for {truth}");
        assert!(hi - lo <= 2.0 * f64::EPSILON * hi, "[{lo}, {hi}]");
    }
}

/// Issue 22 (time of check to time of use): under `augur_formats::confine::within_root`, every
/// file `Model::load` opens is checked after it is opened, whatever a caller checked before: a
/// PRISM file, a `.tra` and each companion that is a link out of the root is refused, and no
/// line of the outside file reaches the message; the same files inside the root load.
#[cfg(unix)]
#[test]
fn a_confined_load_reads_nothing_outside_the_root() {
    use augur_formats::confine::within_root;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let secret = dir.path().join("passwd");
    std::fs::write(&secret, "root:x:0:0:top secret:/root:/bin/sh\n").unwrap();
    let tra = "2 2\n0 1 1\n1 1 1\n";
    std::fs::write(root.join("m.tra"), tra).unwrap();
    std::fs::write(root.join("m.lab"), "0=\"init\" 1=\"goal\"\n0: 0\n1: 1\n").unwrap();
    std::fs::write(
        root.join("m.pm"),
        "dtmc\nmodule m s : [0..1]; [] true -> (s'=1); endmodule\n",
    )
    .unwrap();
    let load = |p: &std::path::Path| {
        within_root(&root, || Model::load(p, &LoadOptions::default())).unwrap()
    };
    assert!(load(&root.join("m.tra")).is_ok());
    assert!(load(&root.join("m.pm")).is_ok());
    let link = |name: &str| {
        let p = root.join(name);
        std::os::unix::fs::symlink(&secret, &p).unwrap();
        p
    };
    let refused = |r: Result<Model>, what: &str| {
        let e = r.err().unwrap_or_else(|| panic!("{what}: loaded"));
        let m = e.diagnostic().render();
        assert!(m.contains("not a file inside the root"), "{what}: {m}");
        assert!(!m.contains("top secret"), "{what}: {m}");
    };
    refused(load(&link("x.pm")), "PRISM file");
    refused(load(&link("y.tra")), ".tra");
    for ext in ["lab", "srew", "trew", "sta"] {
        let stem = format!("c{ext}");
        std::fs::write(root.join(format!("{stem}.tra")), tra).unwrap();
        link(&format!("{stem}.{ext}"));
        refused(load(&root.join(format!("{stem}.tra"))), ext);
    }
    // Unconfined, the same link is followed (the CLI reads what its user names).
    let e = Model::load(&root.join("clab.tra"), &LoadOptions::default())
        .err()
        .unwrap();
    assert!(
        e.diagnostic().render().contains("root:x"),
        "{}",
        e.diagnostic().render()
    );
}
