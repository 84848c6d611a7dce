//! The gate with the monitor file's optional sections `robust` and `explanations`
//! (`monitor compile --robust --explain`; docs/monitor.md): the same classified tool calls
//! gated by the 60-state SafetyDrift (d, t, r) monitor (H = 20) without and with both
//! sections, in one run so that both see the same load. With the sections the gate adds one
//! table lookup (the robust bound); the continuation is looked up and its text formatted only
//! when a decision is rendered (`Session::reason`, measured apart).
//!
//! Run with `cargo bench --bench monitor_sections`. Times are the benchmark thread's CPU
//! time (`CLOCK_THREAD_CPUTIME_ID`), as in benches/monitor.rs.

use augur_gate::dtr::{DataExposure, Reversibility, SafetyState, ToolEscalation};
use augur_gate::monitor::Mapping;
use augur_gate::session::{Action, ToolCall};
use augur_gate::{Policy, Session};
use augur_monitor::compile::{compile_dtmcs, CompileOptions, RobustOptions, Source};
use augur_monitor::eval::learn_dtr;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::hint::black_box;
use std::sync::Arc;

/// The (d, t, r) trajectories of models/safetydrift/traces.jsonl (300 synthetic runs).
fn safetydrift_trajectories() -> Vec<Vec<SafetyState>> {
    let text = std::fs::read_to_string("models/safetydrift/traces.jsonl")
        .expect("run from the repository root");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    SafetyState::new(
                        DataExposure::parse(s["d"].as_str().unwrap()).unwrap(),
                        ToolEscalation::parse(s["t"].as_str().unwrap()).unwrap(),
                        Reversibility::parse(s["r"].as_str().unwrap()).unwrap(),
                    )
                })
                .collect()
        })
        .collect()
}

fn sixty_state_source() -> Source {
    let trajs = safetydrift_trajectories();
    let refs: Vec<&[SafetyState]> = trajs.iter().map(Vec::as_slice).collect();
    let (dtmc, counts) = learn_dtr(&refs, 0.1).unwrap();
    let mut s = Source::new(dtmc, "safetydrift 60-state");
    s.counts = Some(counts);
    s
}
fn opts(sections: bool) -> CompileOptions {
    let mut o = CompileOptions::new("P=? [ F<=5 \"VIOLATED\" ]");
    o.horizon = Some(20);
    o.mapping = Some(Mapping::Dtr);
    if sections {
        o.robust = Some(RobustOptions::default());
        o.explanations = true;
    }
    o
}

#[path = "support/thread_cpu.rs"]
mod thread_cpu;
use thread_cpu::ThreadCpu;

type C = Criterion<ThreadCpu>;

fn bench_gate_sections(c: &mut C) {
    // A policy that warns often, so that rendered reasons carry the continuation.
    let policy = Arc::new(
        Policy::parse(
            "version = 1\nthresholds = [{ at = 0.9, verdict = \"block\" }, { at = 0.1, verdict = \"warn\" }]\n",
            "bench",
        )
        .unwrap(),
    );
    let args = json!({"recipients": ["mark.black@gmail.com"], "subject": "Quarterly numbers",
                      "body": "Hi Mark, the summary is attached. Best, Emma"});
    let read_args = json!({"file_path": "/workspace/reports/q3-summary.txt"});
    let mut g = c.benchmark_group("monitor gate sections");
    for (name, sections) in [("without sections", false), ("robust + explanations", true)] {
        let m = Arc::new(compile_dtmcs(vec![sixty_state_source()], &opts(sections)).unwrap());
        assert_eq!(m.sections.robust.is_some(), sections);
        let mut s = Session::new(&m, &policy, None).unwrap();
        g.bench_function(format!("with classification, {name}"), |b| {
            let mut i = 0u32;
            b.iter(|| {
                i = i.wrapping_add(1);
                if i.is_multiple_of(8) {
                    s.reset();
                }
                let (tool, a) = if i.is_multiple_of(2) {
                    ("read_file", &read_args)
                } else {
                    ("send_email", &args)
                };
                black_box(s.gate(&Action::Tool(ToolCall::new(black_box(tool), black_box(a)))))
            })
        });
        g.bench_function(format!("gate + reason, {name}"), |b| {
            let mut i = 0u32;
            b.iter(|| {
                i = i.wrapping_add(1);
                if i.is_multiple_of(8) {
                    s.reset();
                }
                let d = s.gate(&Action::Tool(ToolCall::new(
                    black_box("read_file"),
                    &read_args,
                )));
                black_box(s.reason(&d))
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = bench_gate_sections
}
criterion_main!(benches);
