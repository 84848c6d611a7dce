//! `gate` on a compiled monitor allocates nothing: counted with an instrumented global
//! allocator over many decisions (tool calls with classification, already classified calls,
//! concrete states for an abstraction monitor).

use augur_monitor::compile::{compile_dtmcs, CompileOptions, Source};
use augur_monitor::session::{Action, ToolCall};
use augur_monitor::{Policy, Session};
use serde_json::json;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;
use std::sync::Arc;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The counts are global, so this file has one test running both checks in turn: with two
/// tests, the test harness allocates (to record and print the first one's result) while the
/// other one is counting.
#[test]
fn gate_allocates_nothing() {
    gate_on_a_dtmc_monitor();
    gate_on_an_abstraction_monitor();
}

fn models() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

fn gate_on_a_dtmc_monitor() {
    let (dtmc, _) =
        augur_formats::read_model(&models().join("safetydrift.tra"), &Default::default()).unwrap();
    let m = Arc::new(
        compile_dtmcs(
            vec![Source::new(dtmc, "sd")],
            &CompileOptions::new("P=? [ F<=5 \"violated\" ]"),
        )
        .unwrap(),
    );
    let policy = Arc::new(
        Policy::parse(
            "always_block = [\"wipe all data\"]\nunobserved = \"warn\"",
            "p",
        )
        .unwrap(),
    );
    let mut s = Session::new(&m, &policy, None).unwrap();
    let calls = [
        ("read_file", json!({"path": "/workspace/report.txt"})),
        ("read_file", json!({"path": "/home/u/.ssh/id_rsa"})),
        (
            "send_email",
            json!({"recipients": ["mark@gmail.com"], "subject": "hi", "body": "see attached"}),
        ),
        ("get_iban", json!({})),
        ("wipe_all_data", json!({})),
        ("frobnicate", json!({"x": [1, 2, {"y": "z"}]})),
    ];
    let classified: Vec<_> = calls
        .iter()
        .map(|(t, a)| (*t, m.classifier().unwrap().classify(t, a).unwrap()))
        .collect();
    // Warm up (lazy statics, first use of anything).
    for (t, a) in &calls {
        s.gate(&Action::Tool(ToolCall::new(t, a)));
    }
    let region = Region::new(GLOBAL);
    let mut blocks = 0;
    for i in 0..1000u32 {
        if i.is_multiple_of(7) {
            s.reset();
        }
        for (t, a) in &calls {
            let d = s.gate(&Action::Tool(ToolCall::new(t, a)));
            blocks += usize::from(d.verdict == augur_monitor::Verdict::Block);
        }
        for (t, c) in &classified {
            s.gate_classified(t, *c);
        }
    }
    let stats = region.change();
    assert!(blocks > 0);
    assert_eq!(stats.allocations, 0, "{stats:?}");
    assert_eq!(stats.reallocations, 0, "{stats:?}");
}

fn gate_on_an_abstraction_monitor() {
    let spec = std::fs::read_to_string(models().join("microwave/spec.toml")).unwrap();
    let traces = models().join("microwave/traces.jsonl");
    // A chain over the spec's states: learn it the simple way (every trace abstracted).
    let abs = augur_abstraction::Abstraction::parse(&spec, "spec.toml").unwrap();
    let reader = augur_abstraction::TraceReader::new(
        std::io::BufReader::new(std::fs::File::open(&traces).unwrap()),
        augur_abstraction::TraceFormat::JsonLines,
        "traces.jsonl",
    );
    let validity = |i: u32, j: u32| abs.is_valid_transition_idx(i, j);
    let mut counts = augur_learn::learn::TransitionCounts::new(abs.num_states());
    for t in reader {
        let t = t.unwrap();
        let states: Result<Vec<u32>, _> = t.steps.iter().map(|s| abs.step_state(s, "t")).collect();
        if let Ok(states) = states {
            counts.try_observe_trace(&states, &validity).unwrap();
        }
    }
    let learned = augur_learn::learn::learn(&counts, &validity, 0.1).unwrap();
    let mut dtmc = learned.dtmc;
    dtmc.labels = abs.labels();
    let mut opts = CompileOptions::new("P=? [ F<=5 \"unsafe\" ]");
    opts.abstraction = Some((spec.clone(), "spec.toml".into()));
    let m = Arc::new(compile_dtmcs(vec![Source::new(dtmc, "mw")], &opts).unwrap());
    let mut s = Session::new(&m, &Arc::new(Policy::default()), None).unwrap();
    let states = [
        json!({"fork_at": "counter", "door_open": false, "power": false, "task_done": false}),
        json!({"fork_at": "hand", "door_open": true, "power": false, "task_done": false}),
    ];
    let maps: Vec<_> = states
        .iter()
        .map(|v| v.as_object().unwrap().clone())
        .collect();
    for st in &maps {
        s.gate(&Action::State {
            tool: None,
            state: st,
        });
    }
    let region = Region::new(GLOBAL);
    for _ in 0..1000 {
        for st in &maps {
            s.gate(&Action::State {
                tool: Some("move"),
                state: st,
            });
        }
    }
    let stats = region.change();
    assert_eq!(stats.allocations, 0, "{stats:?}");
}
