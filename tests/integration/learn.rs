//! End-to-end tests of `augur learn`, `augur pac` and `augur simulate`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{fail, ok};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn read_json(p: &Path) -> Value {
    json(&std::fs::read_to_string(p).unwrap())
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The model's transitions as (src, dst) -> prob.
fn matrix(model: &Value) -> std::collections::BTreeMap<(u64, u64), f64> {
    model["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                (t[0].as_u64().unwrap(), t[1].as_u64().unwrap()),
                t[2].as_f64().unwrap(),
            )
        })
        .collect()
}

fn label(model: &Value, name: &str) -> Vec<u64> {
    let labels = model["labels"].as_array().unwrap();
    let l = labels.iter().find(|l| l["name"] == name).unwrap();
    l["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

fn state_names(model: &Value) -> Vec<String> {
    serde_json::from_value(model["metadata"]["state_names"].clone()).unwrap()
}

#[test]
fn pac_calculator_reproduces_the_worked_example() {
    // Pro2Guard: m = 10, ε = 0.05, δ = 0.01, p̂ = 0.2: about 1087 (by hand: 1087.77), 400 not enough.
    let v = json(&ok(&[
        "pac",
        "--states",
        "10",
        "--observations",
        "400",
        "--p-hat",
        "0.2",
        "--epsilon",
        "0.05",
        "--delta",
        "0.01",
        "--json",
    ]));
    let exact = v["required_exact"].as_f64().unwrap();
    assert!((1087.0..1088.0).contains(&exact), "{exact}");
    assert_eq!(v["required"], 1088);
    assert_eq!(v["holds"], false);
    assert_eq!(v["more_needed"], 688);
    let text = ok(&[
        "pac",
        "--states",
        "10",
        "--observations",
        "400",
        "--p-hat",
        "0.2",
        "--epsilon",
        "0.05",
        "--delta",
        "0.01",
    ]);
    assert!(
        text.contains("1088") && text.contains("not enough"),
        "{text}"
    );
    // 1088 suffices.
    let v = json(&ok(&[
        "pac",
        "--states",
        "10",
        "--observations",
        "1088",
        "--p-hat",
        "0.2",
        "--epsilon",
        "0.05",
        "--delta",
        "0.01",
        "--json",
    ]));
    assert_eq!(v["holds"], true);
    // Hoeffding: ln(2000)/(2·0.05²) = 1520.18.
    let v = json(&ok(&[
        "pac",
        "--states",
        "10",
        "--epsilon",
        "0.05",
        "--delta",
        "0.01",
        "--hoeffding",
        "--json",
    ]));
    assert_eq!(v["required"], 1521);
    let e = fail(&[
        "pac",
        "--states",
        "10",
        "--p-hat",
        "0.2",
        "--epsilon",
        "2",
        "--delta",
        "0.01",
    ]);
    assert!(e.contains("epsilon"), "{e}");
}

#[test]
fn learn_microwave_with_spec() {
    let dir = tmp();
    let model = dir.path().join("mw.json");
    let alpha = 0.5;
    let summary = json(&ok(&[
        "learn",
        "models/microwave/traces.jsonl",
        "--abstraction",
        "models/microwave/spec.toml",
        "--alpha",
        "0.5",
        "-o",
        s(&model),
        "--json",
    ]));
    let m = &summary["models"][0];
    assert_eq!(summary["traces_read"], 201);
    assert_eq!(m["traces"], 201);
    // The generator script adds exactly one impossible move (mw-glitch).
    assert_eq!(m["invalid_transitions_dropped"], 1);
    assert_eq!(m["states"], 18);

    let v = read_json(&model);
    let p = matrix(&v);
    let names = state_names(&v);
    // Rows sum to 1.
    for i in 0..18u64 {
        let sum: f64 = p.iter().filter(|((a, _), _)| *a == i).map(|(_, x)| x).sum();
        assert!((sum - 1.0).abs() < 1e-12, "row {i} sums to {sum}");
    }
    // With α > 0 every valid successor has an entry, and each entry is
    // (count + α)/(row total + α·|valid successors|), from the counts kept in the file.
    let counts = &v["counts"]["transitions"];
    let count = |a: u64, b: u64| {
        counts
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t[0] == a && t[1] == b)
            .map_or(0, |t| t[2].as_u64().unwrap())
    };
    for i in 0..18u64 {
        let row: Vec<_> = p.iter().filter(|((a, _), _)| *a == i).collect();
        let total: u64 = (0..18).map(|j| count(i, j)).sum();
        let valid = row.len() as f64;
        for ((_, j), &x) in row {
            let expect = (count(i, *j) as f64 + alpha) / (total as f64 + alpha * valid);
            assert!((x - expect).abs() < 1e-12);
        }
    }
    // Invalid transitions get no mass: the fork never leaves a closed microwave.
    let idx = |n: &str| names.iter().position(|x| x == n).unwrap() as u64;
    assert!(!p.contains_key(&(idx("{fork_inside}"), idx("{holding}"))));
    assert!(p.contains_key(&(idx("{fork_inside,open}"), idx("{holding,open}"))));
    // The heated fork is terminal (fixed by validity).
    assert_eq!(
        p.get(&(idx("{fork_inside,toggled}"), idx("{fork_inside,toggled}"))),
        Some(&1.0)
    );
    // The unsafe label is exactly the states with fork_inside and toggled.
    let mut expect: Vec<u64> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.contains("fork_inside") && n.contains("toggled"))
        .map(|(i, _)| i as u64)
        .collect();
    expect.sort();
    assert_eq!(label(&v, "unsafe"), expect);
    assert_eq!(expect.len(), 2);

    // `augur check` answers PCTL on the learned model; compare with value iteration on the
    // matrix read back from the file (a second method).
    let c = json(&ok(&[
        "check",
        s(&model),
        "--prop",
        "P=? [ F \"unsafe\" ]",
        "--json",
    ]));
    let checked = c["results"][0]["value"].as_f64().unwrap();
    let unsafe_states = label(&v, "unsafe");
    let mut x: Vec<f64> = (0..18)
        .map(|i| if unsafe_states.contains(&i) { 1.0 } else { 0.0 })
        .collect();
    for _ in 0..20000 {
        let mut y = vec![0.0; 18];
        for (&(a, b), &pr) in &p {
            y[a as usize] += pr * x[b as usize];
        }
        for &u in &unsafe_states {
            y[u as usize] = 1.0;
        }
        x = y;
    }
    let init = v["initial"][0].as_u64().unwrap() as usize;
    assert_eq!(v["initial"].as_array().unwrap().len(), 1);
    assert!((checked - x[init]).abs() < 1e-9, "{checked} vs {}", x[init]);
    assert!(checked > 0.0 && checked < 0.2, "{checked}");

    // Simulating the learned model names states `{a,b}` (from the predicate valuations), which
    // `augur learn --abstraction` reads back as abstract states: only valid moves appear.
    let sim = dir.path().join("sim.jsonl");
    ok(&[
        "simulate",
        s(&model),
        "-n",
        "500",
        "--max-steps",
        "30",
        "--seed",
        "5",
        "-o",
        s(&sim),
    ]);
    let again = dir.path().join("again.json");
    let sum = json(&ok(&[
        "learn",
        s(&sim),
        "--abstraction",
        "models/microwave/spec.toml",
        "-o",
        s(&again),
        "--json",
    ]));
    assert_eq!(sum["models"][0]["traces"], 500);
    assert_eq!(sum["models"][0]["invalid_transitions_dropped"], 0);
    assert_eq!(state_names(&read_json(&again)), names);

    // The learned model exports to the PRISM language (one module; its variables when its
    // valuations tell the states apart, else a state index).
    let pm = dir.path().join("mw.pm");
    ok(&["export", s(&model), "--to", "prism", "-o", s(&pm)]);
    let text = std::fs::read_to_string(&pm).unwrap();
    assert!(
        text.contains("dtmc") && text.contains("label \"unsafe\""),
        "{text}"
    );

    // PAC on the learned model.
    let r = json(&ok(&[
        "pac",
        s(&model),
        "--epsilon",
        "0.1",
        "--delta",
        "0.05",
        "--json",
    ]));
    assert_eq!(r["states"], 18);
    assert_eq!(r["holds"], false);
    let per = r["per_state"].as_array().unwrap();
    let terminal = per
        .iter()
        .find(|x| x["name"] == "{fork_inside,toggled}")
        .unwrap();
    assert_eq!(terminal["determined"], true);
    // The same from the counts alone (`--counts FILE`).
    let counts_file = dir.path().join("counts.json");
    std::fs::write(&counts_file, v["counts"].to_string()).unwrap();
    let r2 = json(&ok(&[
        "pac",
        "--counts",
        s(&counts_file),
        "--epsilon",
        "0.1",
        "--delta",
        "0.05",
        "--json",
    ]));
    assert_eq!(r2["total_more_needed"], r["total_more_needed"]);
    let text = ok(&["pac", s(&model), "--epsilon", "0.1", "--delta", "0.05"]);
    assert!(
        text.contains("not enough") && text.contains("more observations needed"),
        "{text}"
    );
}

#[test]
fn learn_named_traces_gives_empirical_frequencies() {
    let dir = tmp();
    let traces = dir.path().join("t.jsonl");
    std::fs::write(
        &traces,
        "{\"id\": \"a\", \"steps\": [{\"state\": \"idle\"}, {\"state\": \"busy\"}, {\"state\": \"done\"}]}\n\
         {\"id\": \"b\", \"steps\": [{\"state\": \"idle\"}, {\"state\": \"idle\"}, {\"state\": \"busy\"}, {\"state\": \"busy\"}]}\n\
         {\"id\": \"c\", \"steps\": [{\"state\": \"busy\"}, {\"state\": \"done\"}]}\n",
    )
    .unwrap();
    let model = dir.path().join("m.json");
    let sum = json(&ok(&["learn", s(&traces), "-o", s(&model), "--json"]));
    assert_eq!(sum["models"][0]["steps"], 9);
    assert_eq!(sum["models"][0]["states_seen"], 3);
    let v = read_json(&model);
    let names = state_names(&v);
    assert_eq!(names, ["idle", "busy", "done"]);
    let p = matrix(&v);
    // idle: ->busy 2, ->idle 1; busy: ->done 2, ->busy 1; done: never left -> uniform over all 3.
    assert_eq!(p[&(0, 1)], 2.0 / 3.0);
    assert_eq!(p[&(0, 0)], 1.0 / 3.0);
    assert!(
        !p.contains_key(&(0, 2)),
        "α = 0: unobserved transitions stay 0"
    );
    assert_eq!(p[&(1, 2)], 2.0 / 3.0);
    assert_eq!(p[&(2, 0)], 1.0 / 3.0);
    // Initial states are the states traces start in; each state is labelled with its name.
    assert_eq!(v["initial"], serde_json::json!([0, 1]));
    assert_eq!(label(&v, "done"), [2]);
    // --final-absorbing: `done`, only seen where traces end, becomes absorbing instead.
    let sum = json(&ok(&[
        "learn",
        s(&traces),
        "-o",
        s(&model),
        "--final-absorbing",
        "--json",
    ]));
    assert_eq!(sum["models"][0]["unobserved_absorbing"], 1);
    let p = matrix(&read_json(&model));
    assert_eq!(p[&(2, 2)], 1.0);
    assert!(!p.contains_key(&(2, 0)));
}

/// A small chain written by hand: 0 -> {0: .3, 1: .7}, 1 -> {0: .5, 2: .5}, 2 absorbing.
fn generator(dir: &Path) -> PathBuf {
    let p = dir.join("gen.json");
    std::fs::write(
        &p,
        r#"{"states": 3, "initial": [0],
            "transitions": [[0, 0, 0.3], [0, 1, 0.7], [1, 0, 0.5], [1, 2, 0.5], [2, 2, 1.0]],
            "labels": [{"name": "a", "states": [0]}, {"name": "b", "states": [1]}, {"name": "c", "states": [2]}]}"#,
    )
    .unwrap();
    p
}

#[test]
fn simulate_is_reproducible_and_learn_recovers_the_generator() {
    let dir = tmp();
    let gen = generator(dir.path());
    let t1 = dir.path().join("t1.jsonl");
    let t2 = dir.path().join("t2.jsonl");
    ok(&[
        "simulate",
        s(&gen),
        "-n",
        "3000",
        "--max-steps",
        "40",
        "--seed",
        "11",
        "-o",
        s(&t1),
    ]);
    ok(&[
        "simulate",
        s(&gen),
        "-n",
        "3000",
        "--max-steps",
        "40",
        "--seed",
        "11",
        "-o",
        s(&t2),
    ]);
    let a = std::fs::read_to_string(&t1).unwrap();
    assert_eq!(a, std::fs::read_to_string(&t2).unwrap());
    let other = ok(&[
        "simulate",
        s(&gen),
        "-n",
        "50",
        "--max-steps",
        "40",
        "--seed",
        "12",
    ]);
    assert_ne!(
        a.lines().take(50).collect::<Vec<_>>(),
        other.lines().collect::<Vec<_>>()
    );
    // Traces stop in the absorbing state after its self-loop: `c` only ends a trace, twice
    // (or once when the trace reaches 40 steps).
    for line in a.lines() {
        let t = json(line);
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(steps[0]["state"], "a");
        assert!(steps.len() <= 41);
        let first_c = steps.iter().position(|st| st["state"] == "c");
        if let Some(p) = first_c {
            assert!(p + 2 == steps.len() || p + 1 == steps.len() && steps.len() == 41);
            assert!(steps[p..].iter().all(|st| st["state"] == "c"));
        }
    }
    let model = dir.path().join("learned.json");
    ok(&["learn", s(&t1), "-o", s(&model)]);
    let v = read_json(&model);
    let names = state_names(&v);
    let idx = |n: &str| names.iter().position(|x| x == n).unwrap() as u64;
    let p = matrix(&v);
    // Thousands of observations per row: the standard deviation of each estimate is below
    // 0.01, so 0.04 is a 4-sigma tolerance.
    for (from, to, truth) in [
        ("a", "a", 0.3),
        ("a", "b", 0.7),
        ("b", "a", 0.5),
        ("b", "c", 0.5),
    ] {
        let est = p.get(&(idx(from), idx(to))).copied().unwrap_or(0.0);
        assert!((est - truth).abs() < 0.04, "{from}->{to}: {est} vs {truth}");
    }
    assert!(!p.contains_key(&(idx("a"), idx("c"))));
    // The absorbing state is learned as absorbing from its recorded self-loop.
    assert_eq!(p.get(&(idx("c"), idx("c"))), Some(&1.0));
}

#[test]
fn bad_trace_lines_are_located_and_can_be_skipped() {
    let dir = tmp();
    let traces = dir.path().join("bad.jsonl");
    std::fs::write(
        &traces,
        "{\"id\": \"a\", \"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n\
         {\"id\": \"b\", \"steps\": [{\"state\": \"x\"}\n\
         {\"id\": \"c\", \"steps\": [{\"state\": \"y\"}, {\"state\": \"x\"}]}\n",
    )
    .unwrap();
    let model = dir.path().join("m.json");
    let e = fail(&["learn", s(&traces), "-o", s(&model)]);
    assert!(e.starts_with("error: invalid JSON: EOF"), "{e}");
    assert!(e.contains("bad.jsonl:2:37\n"), "{e}");
    let sum = json(&ok(&[
        "learn",
        s(&traces),
        "-o",
        s(&model),
        "--skip-invalid",
        "--json",
    ]));
    assert_eq!(sum["skipped"], 1);
    assert_eq!(sum["skipped_lines"][0]["line"], 2);
    assert_eq!(sum["models"][0]["traces"], 2);

    // A concrete step that the spec rejects: located at its line.
    let traces = dir.path().join("mw.jsonl");
    std::fs::write(
        &traces,
        "{\"id\": 1, \"steps\": [{\"fork_at\": \"counter\", \"door_open\": false, \"power\": false, \"task_done\": false}]}\n\
         {\"id\": 2, \"steps\": [{\"fork_at\": \"oven\", \"door_open\": false, \"power\": false, \"task_done\": false}]}\n\
         {\"id\": 3, \"steps\": [{\"fork_at\": \"hand\", \"door_open\": true, \"power\": true, \"task_done\": false}]}\n",
    )
    .unwrap();
    let spec = "models/microwave/spec.toml";
    let e = fail(&["learn", s(&traces), "--abstraction", spec, "-o", s(&model)]);
    assert!(
        e.starts_with("error: variable `fork_at`: expected one of counter"),
        "{e}"
    );
    // The caret is under the rejected value.
    assert!(e.contains("mw.jsonl:2:33\n"), "{e}");
    let sum = json(&ok(&[
        "learn",
        s(&traces),
        "--abstraction",
        spec,
        "-o",
        s(&model),
        "--skip-invalid",
        "--json",
    ]));
    assert_eq!(sum["skipped"], 2);
    assert!(sum["skipped_lines"][1]["error"]
        .as_str()
        .unwrap()
        .contains(": the state abstracts to {holding,open,toggled}"));
    assert!(sum["skipped_lines"][1]["error"]
        .as_str()
        .unwrap()
        .contains("mw.jsonl:3:"));

    // Concrete steps without a spec.
    let e = fail(&["learn", s(&traces), "-o", s(&model)]);
    assert!(
        e.contains("mw.jsonl:1:") && e.contains("--abstraction"),
        "{e}"
    );
}

#[test]
fn bad_spec_is_located() {
    let dir = tmp();
    let spec = dir.path().join("spec.toml");
    std::fs::write(
        &spec,
        "[variables]\nx = { type = \"int\", min = 0, max = 3 }\n\n[predicates]\np = \"x > 1 & y\"\n",
    )
    .unwrap();
    let e = fail(&[
        "learn",
        "models/microwave/traces.jsonl",
        "--abstraction",
        s(&spec),
        "-o",
        s(&dir.path().join("m.json")),
    ]);
    assert!(e.starts_with("error: undeclared name `y`"), "{e}");
    assert!(e.contains("spec.toml:5:14\n"), "{e}");
    assert!(e.ends_with("  |              ^\n"), "{e}");
}

#[test]
fn by_category_and_csv() {
    let dir = tmp();
    let out = dir.path().join("sd.json");
    let sum = json(&ok(&[
        "learn",
        "models/safetydrift/traces.jsonl",
        "--abstraction",
        "models/safetydrift/spec.toml",
        "--by-category",
        "--alpha",
        "0.1",
        "-o",
        s(&out),
        "--json",
    ]));
    let models = sum["models"].as_array().unwrap();
    assert_eq!(models.len(), 2);
    let traces: u64 = models.iter().map(|m| m["traces"].as_u64().unwrap()).sum();
    assert_eq!(traces, 300);
    for cat in ["benign", "injected"] {
        let v = read_json(&dir.path().join(format!("sd.{cat}.json")));
        assert_eq!(v["states"], 60);
        assert_eq!(v["metadata"]["learned"]["category"], cat);
        // The five risk labels partition the 60 states.
        let mut all: Vec<u64> = ["SAFE", "MILD", "ELEVATED", "CRITICAL", "VIOLATED"]
            .iter()
            .flat_map(|l| label(&v, l))
            .collect();
        all.sort();
        assert_eq!(all, (0..60).collect::<Vec<u64>>());
    }

    // CSV long form, same learning.
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        "trace,step,state\nt1,0,idle\nt1,1,busy\nt2,0,idle\nt2,1,idle\nt2,2,busy\n",
    )
    .unwrap();
    let m = dir.path().join("csv.json");
    let sum = json(&ok(&["learn", s(&csv), "-o", s(&m), "--json"]));
    assert_eq!(sum["models"][0]["traces"], 2);
    let v = read_json(&m);
    assert_eq!(matrix(&v)[&(0, 1)], 2.0 / 3.0);
}

/// Issue 14, item 7: `--final-absorbing` with `--alpha > 0` has no effect; it is said, not
/// silently ignored (and not said with `--alpha 0`).
#[test]
fn final_absorbing_with_smoothing_warns() {
    let dir = tmp();
    let t = dir.path().join("t.jsonl");
    std::fs::write(
        &t,
        "{\"steps\": [{\"state\": \"a\"}, {\"state\": \"b\"}]}\n",
    )
    .unwrap();
    let m = dir.path().join("m.json");
    let run = |alpha: &str| {
        crate::util::augur(&[
            "learn",
            s(&t),
            "--final-absorbing",
            "--alpha",
            alpha,
            "-o",
            s(&m),
        ])
    };
    let o = run("0.1");
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: --final-absorbing has no effect with --alpha 0.1"),
        "{err}"
    );
    let o = run("0");
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
}
