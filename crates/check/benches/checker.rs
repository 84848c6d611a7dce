//! Bounded checking on generated chains of 10^5 and 10^6 states: `P=? [ F<=100 "goal" ]`
//! through the checker, and the all-horizon table for H = 100, reporting the bytes the sweeps
//! touch (criterion throughput). Run with `cargo bench -p augur-check --bench checker`.

use augur_check::{CheckOptions, CheckSession};
use augur_dtmc::{Dtmc, Matrix, StateSet};
use augur_solver::sweep::bytes_per_sweep;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// A random walk on 0..n: from s, to s+1 with 0.5, s−1 with 0.3, stay with 0.2; 0 and n−1
/// absorbing; "goal" = {n−1}.
fn walk(n: usize) -> Dtmc {
    let mut tri = sprs::TriMatI::<f64, u32>::new((n, n));
    tri.add_triplet(0, 0, 1.0);
    tri.add_triplet(n - 1, n - 1, 1.0);
    for s in 1..n - 1 {
        tri.add_triplet(s, s + 1, 0.5);
        tri.add_triplet(s, s - 1, 0.3);
        tri.add_triplet(s, s, 0.2);
    }
    let matrix: Matrix = tri.to_csr();
    let mut goal: StateSet = StateSet::with_capacity(n);
    goal.insert(n - 1);
    Dtmc {
        matrix,
        initial: vec![(n / 2) as u32],
        labels: vec![("goal".into(), goal)],
        rewards: vec![],
        valuations: None,
        exact: None,
        intervals: None,
    }
}

fn bounded(c: &mut Criterion) {
    const H: usize = 100;
    let mut group = c.benchmark_group("bounded");
    group.sample_size(10);
    for n in [100_000usize, 1_000_000] {
        let d = walk(n);
        group.throughput(Throughput::Bytes(bytes_per_sweep(&d.matrix) * H as u64));
        let f = format!("P=? [ F<={H} \"goal\" ]");
        group.bench_with_input(BenchmarkId::new("F<=100", n), &d, |b, d| {
            let mut s = CheckSession::for_dtmc(d, CheckOptions::default());
            b.iter(|| s.check_str(&f).expect("check"))
        });
        group.bench_with_input(BenchmarkId::new("horizon_table_H100", n), &d, |b, d| {
            let mut s = CheckSession::for_dtmc(d, CheckOptions::default());
            b.iter(|| s.horizon("goal", "target", H).expect("table"))
        });
    }
    group.finish();
}

criterion_group!(benches, bounded);
criterion_main!(benches);
