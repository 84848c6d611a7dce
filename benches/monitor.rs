//! Runtime-monitor benchmarks (issue 10's numbers):
//! - `gate` on a compiled monitor: the table lookup and state update alone
//!   (`gate_classified`), and with classification of a typical tool call with arguments;
//! - compiling the 60-state SafetyDrift (d, t, r) monitor with H = 20;
//! - replay of labelled runs already in memory (steps/s), JSON parsing measured apart.
//!
//! - provenance: observing a 10 kB tool result (values new to the store, and values already
//!   stored), and the provenance of one argument.
//!
//! Run with `cargo bench --bench monitor`. Times are the benchmark thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), not wall time: on a machine shared with other builds, wall
//! time counts the time the thread waits for a core. The AgentDojo replay reads `models/agentdojo/runs`
//! (skipped without it).

use augur_monitor::compile::{compile_dtmcs, CompileOptions, Source};
use augur_monitor::dtr::{DataExposure, Reversibility, SafetyState, ToolEscalation};
use augur_monitor::eval::{learn_dtr, replay_probabilities, EvalOptions};
use augur_monitor::monitor::Mapping;
use augur_monitor::runs::{read_runs, Run};
use augur_monitor::session::{Action, ToolCall};
use augur_monitor::{Policy, Session};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
// std's black_box: criterion 0.5's reads its argument byte by byte (volatile), which for a
// 200-byte decision costs more than the gate itself.
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

fn opts(h: u32) -> CompileOptions {
    let mut o = CompileOptions::new("P=? [ F<=5 \"VIOLATED\" ]");
    o.horizon = Some(h);
    o.mapping = Some(Mapping::Dtr);
    o
}

/// Criterion measurement of the thread's CPU time.
struct ThreadCpu;

struct DurationFormatter;

impl criterion::measurement::ValueFormatter for DurationFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e-3, "µs")
        } else if typical < 1e9 {
            (1e-6, "ms")
        } else {
            (1e-9, "s")
        };
        for v in values {
            *v *= factor;
        }
        unit
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        throughput: &Throughput,
        values: &mut [f64],
    ) -> &'static str {
        let (n, unit) = match throughput {
            Throughput::Bytes(b) | Throughput::BytesDecimal(b) => (*b as f64, "B/s"),
            Throughput::Elements(e) => (*e as f64, "elem/s"),
        };
        for v in values {
            *v = n * 1e9 / *v;
        }
        unit
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

impl criterion::measurement::Measurement for ThreadCpu {
    type Intermediate = cpu_time::ThreadTime;
    type Value = std::time::Duration;
    fn start(&self) -> Self::Intermediate {
        cpu_time::ThreadTime::now()
    }
    fn end(&self, i: Self::Intermediate) -> Self::Value {
        i.elapsed()
    }
    fn add(&self, a: &Self::Value, b: &Self::Value) -> Self::Value {
        *a + *b
    }
    fn zero(&self) -> Self::Value {
        std::time::Duration::ZERO
    }
    fn to_f64(&self, v: &Self::Value) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn criterion::measurement::ValueFormatter {
        &DurationFormatter
    }
}

type C = Criterion<ThreadCpu>;

fn bench_compile(c: &mut C) {
    let mut g = c.benchmark_group("monitor compile");
    g.bench_function("60-state SafetyDrift (d,t,r), H = 20", |b| {
        b.iter_batched(
            || vec![sixty_state_source()],
            |src| black_box(compile_dtmcs(src, &opts(20)).unwrap()),
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

fn bench_gate(c: &mut C) {
    let m = Arc::new(compile_dtmcs(vec![sixty_state_source()], &opts(20)).unwrap());
    let policy = Arc::new(Policy::default());
    let mut s = Session::new(&m, &policy, None).unwrap();
    let args = json!({"recipients": ["mark.black@gmail.com"], "subject": "Quarterly numbers",
                      "body": "Hi Mark, the summary is attached. Best, Emma"});
    let classifier = m.classifier().unwrap();
    let c_send = classifier.classify("send_email", &args).unwrap();
    let read_args = json!({"file_path": "/workspace/reports/q3-summary.txt"});
    let c_read = classifier.classify("read_file", &read_args).unwrap();
    let mut g = c.benchmark_group("monitor gate");
    g.bench_function("lookup + state update (classified)", |b| {
        let mut i = 0u32;
        b.iter(|| {
            i = i.wrapping_add(1);
            if i.is_multiple_of(8) {
                s.reset();
            }
            let c = if i.is_multiple_of(2) { c_read } else { c_send };
            black_box(s.gate_classified(black_box("send_email"), c))
        })
    });
    g.bench_function("with classification (send_email, 3 arguments)", |b| {
        let mut i = 0u32;
        b.iter(|| {
            i = i.wrapping_add(1);
            if i.is_multiple_of(8) {
                s.reset();
            }
            black_box(s.gate(&Action::Tool(ToolCall::new(
                black_box("send_email"),
                black_box(&args),
            ))))
        })
    });
    g.bench_function("with classification (read_file, 1 argument)", |b| {
        let mut i = 0u32;
        b.iter(|| {
            i = i.wrapping_add(1);
            if i.is_multiple_of(8) {
                s.reset();
            }
            black_box(s.gate(&Action::Tool(ToolCall::new(
                black_box("read_file"),
                black_box(&read_args),
            ))))
        })
    });
    g.finish();
}

fn agentdojo_runs_text() -> Option<String> {
    use std::io::Read as _;
    let dir = std::path::Path::new("models/agentdojo");
    let tasks = std::fs::read_to_string(dir.join("agentdojo_v1_tasks.json")).ok()?;
    let tasks = augur_monitor::agentdojo::Tasks::parse(&tasks, "tasks").ok()?;
    let mut conv = augur_monitor::agentdojo::Converted::default();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("runs"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for p in files {
        let name = p.file_name()?.to_string_lossy().to_string();
        if name.starts_with("agentdojo-") && name.ends_with(".jsonl.gz") {
            let mut text = String::new();
            flate2::read::MultiGzDecoder::new(std::fs::File::open(&p).ok()?)
                .read_to_string(&mut text)
                .ok()?;
            augur_monitor::agentdojo::convert(text.as_bytes(), &name, &tasks, &mut conv).ok()?;
        }
    }
    Some(conv.runs.iter().map(|r| r.to_json_line() + "\n").collect())
}

fn bench_replay(c: &mut C) {
    let Some(text) = agentdojo_runs_text() else {
        eprintln!("models/agentdojo/runs not readable: replay benchmark skipped");
        return;
    };
    let runs: Vec<Run> = read_runs(text.as_bytes(), "agentdojo").unwrap();
    let refs: Vec<&Run> = runs.iter().collect();
    let steps: u64 = runs.iter().map(|r| r.steps.len() as u64).sum();
    let m = Arc::new(augur_monitor::eval::train_monitor(&refs, &EvalOptions::new()).unwrap());
    let mut g = c.benchmark_group("monitor replay");
    g.throughput(Throughput::Elements(steps));
    g.bench_function("AgentDojo, 776 runs in memory (steps/s)", |b| {
        b.iter(|| black_box(replay_probabilities(&m, &refs, None).unwrap()))
    });
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("AgentDojo runs JSON parsing (bytes/s)", |b| {
        b.iter(|| black_box(read_runs(text.as_bytes(), "agentdojo").unwrap()))
    });
    g.finish();
    // Observing real tool results (beside the dense synthetic 10 kB of `bench_provenance`):
    // every run's user request and tool results, each run in a fresh store.
    use augur_monitor::provenance::{Origin, Provenance};
    use augur_monitor::runs::ObservationSource;
    let results: u64 = runs
        .iter()
        .flat_map(|r| &r.observations)
        .filter(|o| o.source == ObservationSource::Tool)
        .map(|o| o.text.len() as u64)
        .sum();
    let mut g = c.benchmark_group("provenance");
    g.throughput(Throughput::Bytes(results));
    g.bench_function("observe AgentDojo's tool results (bytes/s)", |b| {
        b.iter(|| {
            for r in &runs {
                let mut p = Provenance::new();
                for o in &r.observations {
                    let origin = match o.source {
                        ObservationSource::User => Origin::User,
                        ObservationSource::System => continue,
                        ObservationSource::Tool => Origin::Tool {
                            tool: o.tool.as_deref().unwrap_or(""),
                            step: o.step.unwrap_or(0) as u32,
                        },
                    };
                    black_box(p.observe(origin, black_box(&o.text)));
                }
                black_box(p);
            }
        })
    });
    g.finish();
}

/// A 10 kB tool result: an inbox listing with addresses, links, amounts, IBANs and prose.
fn tool_result_10kb() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < 10_000 {
        s.push_str(&format!(
            "- id: '{i}'\n  sender: person{i}@example{m}.com\n  subject: Meeting notes {i}\n  body: Hi, \
             please review the draft at https://www.docs{m}.example.org/d/{i}/edit before Friday. \
             The invoice of $1,{i:03}.50 goes to IBAN DE89370400440532013{i:03}, call +1 555 010 {i:04}. \
             Attached: /shared/reports/q{m}.pdf. Thanks, and see you at the meeting room.\n",
            m = i % 7
        ));
        i += 1;
    }
    s.truncate(10_000);
    s
}

fn bench_provenance(c: &mut C) {
    use augur_monitor::provenance::{Origin, Provenance};
    let text = tool_result_10kb();
    let origin = Origin::Tool {
        tool: "read_inbox",
        step: 1,
    };
    let mut g = c.benchmark_group("provenance");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("observe 10 kB tool result, values new", |b| {
        b.iter_batched(
            Provenance::new,
            |mut p| {
                p.observe(origin, black_box(&text));
                p
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let mut p = Provenance::new();
    p.observe(Origin::User, "Please pay the invoice in my inbox.");
    p.observe(origin, &text);
    g.bench_function("observe 10 kB tool result, values stored", |b| {
        b.iter(|| black_box(p.observe(origin, black_box(&text))))
    });
    g.throughput(Throughput::Elements(1));
    let args = json!({"recipient": "DE89370400440532013004", "amount": 1004.5,
        "subject": "Invoice", "date": "2022-03-01"});
    g.bench_function("provenance_of a send_money call's arguments", |b| {
        b.iter(|| black_box(p.provenance_of(black_box(&args))))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadCpu);
    targets = bench_compile, bench_gate, bench_replay, bench_provenance
}
criterion_main!(benches);
