//! Solver benchmarks: sparse sweeps, step-bounded and unbounded reachability on generated
//! chains of 10⁵ and 10⁶ states.
//!
//! Run with `cargo bench -p augur-solver --bench solver`. Each sweep group reports its throughput in bytes
//! touched per sweep (CSR arrays + gathered vector entries + written entries, see
//! `augur_solver::sweep::bytes_per_sweep`); the unbounded group prints the iterations used, so
//! time per sweep = time / (2 × iterations) for interval iteration (a lower and an upper sweep).

use augur_dtmc::{Matrix, StateSet};
use augur_solver::{graph, sweep, until_probabilities, SolveOptions};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

/// A generated chain of `n` states: state `i < n−2` moves to `i+1` w.p. 0.6, to a
/// pseudo-random state w.p. 0.3, and to the absorbing `goal = n−2` / `fail = n−1` w.p. 0.05
/// each. Rows are built sorted, so the CSR is valid as constructed.
fn chain(n: usize) -> Matrix {
    let goal = n - 2;
    let fail = n - 1;
    let mut indptr: Vec<u32> = Vec::with_capacity(n + 1);
    let mut indices: Vec<u32> = Vec::with_capacity(4 * n);
    let mut data: Vec<f64> = Vec::with_capacity(4 * n);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    indptr.push(0);
    for i in 0..n {
        if i >= goal {
            indices.push(i as u32);
            data.push(1.0);
        } else {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let j = (x % (n as u64 - 2)) as usize;
            let mut row: Vec<(usize, f64)> = vec![(goal, 0.05), (fail, 0.05)];
            for (d, p) in [(i + 1, 0.6), (j, 0.3)] {
                match row.iter_mut().find(|e| e.0 == d) {
                    Some(e) => e.1 += p,
                    None => row.push((d, p)),
                }
            }
            row.sort_by_key(|e| e.0);
            for (d, p) in row {
                indices.push(d as u32);
                data.push(p);
            }
        }
        indptr.push(indices.len() as u32);
    }
    Matrix::new((n, n), indptr, indices, data)
}

fn sizes() -> [usize; 2] {
    [100_000, 1_000_000]
}

fn bench_sweeps(c: &mut Criterion) {
    let mut g = c.benchmark_group("mat_vec_sweep");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    for n in sizes() {
        let m = chain(n);
        let x: Vec<f64> = (0..n).map(|i| (i % 7) as f64 / 7.0).collect();
        let mut y = vec![0.0; n];
        g.throughput(Throughput::Bytes(sweep::bytes_per_sweep(&m)));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| sweep::mat_vec(black_box(&m), black_box(&x), &mut y))
        });
    }
    g.finish();
}

fn bench_bounded(c: &mut Criterion) {
    const K: u64 = 50;
    let mut g = c.benchmark_group("bounded_reach_50_steps");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for n in sizes() {
        let m = chain(n);
        let mut all = StateSet::with_capacity(n);
        all.insert_range(..);
        let mut goal = StateSet::with_capacity(n);
        goal.insert(n - 2);
        g.throughput(Throughput::Bytes(sweep::bytes_per_sweep(&m) * K));
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| sweep::bounded_until(black_box(&m), &all, &goal, K))
        });
    }
    g.finish();
}

fn bench_unbounded(c: &mut Criterion) {
    let mut g = c.benchmark_group("unbounded_reach_default_method");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for n in sizes() {
        let m = chain(n);
        let mt = graph::transpose(&m);
        let mut all = StateSet::with_capacity(n);
        all.insert_range(..);
        let mut goal = StateSet::with_capacity(n);
        goal.insert(n - 2);
        let opts = SolveOptions::default();
        if let Ok(sol) = until_probabilities(&m, &mt, None, &all, &goal, &opts) {
            eprintln!(
                "n = {n}: {} ; bytes per sweep {}",
                sol.method,
                sweep::bytes_per_sweep(&m)
            );
        }
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| until_probabilities(black_box(&m), &mt, None, &all, &goal, &opts))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_sweeps, bench_bounded, bench_unbounded);
criterion_main!(benches);
