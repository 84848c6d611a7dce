//! Learning benchmarks: counting transitions, validity-aware smoothing, abstraction of
//! concrete states, and simulation.
//!
//! Run with `cargo bench --bench learn`.

use augur_abstraction::Abstraction;
use augur_expr::Value;
use augur_learn::simulate::Simulator;
use augur_learn::{learn, AllValid, TransitionCounts};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

/// 20 000 pseudo-random traces of 50 steps over 500 states (a random walk with local moves).
fn traces() -> Vec<Vec<u32>> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    (0..20_000)
        .map(|_| {
            let mut s = 0u32;
            (0..50)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    s = (s + (x % 5) as u32 + 498) % 500;
                    s
                })
                .collect()
        })
        .collect()
}

fn bench_learn(c: &mut Criterion) {
    let ts = traces();
    let steps: u64 = ts.iter().map(|t| t.len() as u64).sum();
    let mut g = c.benchmark_group("learn");
    g.throughput(Throughput::Elements(steps));
    g.bench_function("count 10^6 steps, 500 states", |b| {
        b.iter(|| {
            let mut counts = TransitionCounts::new(500);
            for t in &ts {
                counts.try_observe_trace(t, &AllValid).unwrap();
            }
            black_box(counts.traces())
        })
    });
    let mut counts = TransitionCounts::new(500);
    for t in &ts {
        counts.try_observe_trace(t, &AllValid).unwrap();
    }
    let local = |f: u32, t: u32| (t + 500 - f) % 500 <= 4 || (f + 500 - t) % 500 <= 4;
    g.bench_function("smooth alpha=0.1, 500 states, local validity", |b| {
        b.iter(|| black_box(learn(&counts, &local, 0.1).unwrap().dtmc.num_transitions()))
    });
    let model = learn(&counts, &local, 0.1).unwrap().dtmc;
    g.bench_function("simulate 1000 traces of 100 steps", |b| {
        b.iter(|| {
            let sim = Simulator::new(&model, 7, 100).unwrap();
            black_box(sim.take(1000).map(|t| t.len()).sum::<usize>())
        })
    });
    g.finish();
}

fn bench_abstraction(c: &mut Criterion) {
    let spec = include_str!("../models/safetydrift/spec.toml");
    let mut g = c.benchmark_group("abstraction");
    g.bench_function("parse + enumerate SafetyDrift spec (60 of 512)", |b| {
        b.iter(|| black_box(Abstraction::parse(spec, "spec.toml").unwrap().num_states()))
    });
    let abs = Abstraction::parse(spec, "spec.toml").unwrap();
    let states: Vec<[Value; 3]> = (0..60)
        .map(|i| [Value::Int(i % 5), Value::Int(i / 5 % 4), Value::Int(i / 20)])
        .collect();
    g.throughput(Throughput::Elements(states.len() as u64));
    g.bench_function("abstract 60 concrete states", |b| {
        b.iter(|| {
            states
                .iter()
                .map(|s| abs.abstract_state(s).unwrap())
                .sum::<u32>()
        })
    });
    g.bench_function("all 3600 transition validity checks", |b| {
        b.iter(|| {
            (0..60u32)
                .flat_map(|i| (0..60u32).map(move |j| (i, j)))
                .filter(|&(i, j)| abs.is_valid_transition_idx(i, j))
                .count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench_learn, bench_abstraction);
criterion_main!(benches);
