//! Solver benchmarks: sparse sweeps, step-bounded and unbounded reachability on generated
//! chains of 10⁵ and 10⁶ states, and one benchmark per solver path of the default method
//! (`solver_paths`: sparse direct (multifrontal LU), dense direct per block, interval iteration, exact).
//!
//! Run with `cargo bench -p augur-solver --bench solver`. Each sweep group reports its throughput in bytes
//! touched per sweep (CSR arrays + gathered vector entries + written entries, see
//! `augur_solver::sweep::bytes_per_sweep`); the unbounded group prints the iterations used, so
//! time per sweep = time / (2 × iterations) for interval iteration (a lower and an upper sweep).

use augur_dtmc::{Matrix, StateSet};
use augur_solver::{graph, sweep, until_probabilities, Method, SolveOptions};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use num_rational::BigRational;
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

/// A biased walk on the interior of a `k×k` grid (walk2d's chain: 0.3 east, 0.22 west, 0.26
/// north, 0.22 south; the border absorbing): one SCC of `(k−1)²` unknowns, the case for a
/// sparse direct solve. Goal: the east border.
fn grid(k: usize) -> (Matrix, StateSet) {
    let side = k + 1;
    let id = |x: usize, y: usize| (x * side + y) as u32;
    let n = side * side;
    let mut indptr: Vec<u32> = vec![0];
    let mut indices: Vec<u32> = Vec::new();
    let mut data: Vec<f64> = Vec::new();
    let mut goal = StateSet::with_capacity(n);
    for x in 0..side {
        for y in 0..side {
            if x == 0 || y == 0 || x == k || y == k {
                indices.push(id(x, y));
                data.push(1.0);
                if x == k {
                    goal.insert(id(x, y) as usize);
                }
            } else {
                // Sorted by column: west, south, north, east.
                for (t, p) in [
                    (id(x - 1, y), 0.22),
                    (id(x, y - 1), 0.22),
                    (id(x, y + 1), 0.26),
                    (id(x + 1, y), 0.3),
                ] {
                    indices.push(t);
                    data.push(p);
                }
            }
            indptr.push(indices.len() as u32);
        }
    }
    (Matrix::new((n, n), indptr, indices, data), goal)
}

/// Every solver path of the default method, and the iterative methods for comparison, on the
/// problems that select them: the random chain of 10⁵ states (one large expander-like SCC:
/// interval iteration), the grid (sparse direct LU, certified), many small cycles (dense direct
/// LU per block), and a small system (exact elimination).
fn bench_paths(c: &mut Criterion) {
    let mut g = c.benchmark_group("solver_paths");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    let run = |g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
               name: &str,
               m: &Matrix,
               goal: &StateSet,
               method: Method| {
        let mt = graph::transpose(m);
        let n = m.rows();
        let mut all = StateSet::with_capacity(n);
        all.insert_range(..);
        let opts = SolveOptions {
            method,
            ..SolveOptions::default()
        };
        if let Ok(sol) = until_probabilities(m, &mt, None, &all, goal, &opts) {
            eprintln!("{name}: {}", sol.method);
        }
        g.bench_function(name, |b| {
            b.iter(|| until_probabilities(black_box(m), &mt, None, &all, goal, &opts))
        });
    };
    // Sparse direct (the multifrontal LU since issue 12; faer's LU is its fallback) against
    // topological interval iteration on the 200×200 grid.
    let (m, goal) = grid(200);
    run(
        &mut g,
        "grid200_default_sparse_direct",
        &m,
        &goal,
        Method::Auto,
    );
    run(
        &mut g,
        "grid200_topological_interval",
        &m,
        &goal,
        Method::Topological,
    );
    // The multifrontal LU on a grid of 159,201 interior states (a third of walk2d's).
    let (m, goal) = grid(400);
    run(
        &mut g,
        "grid400_default_multifrontal",
        &m,
        &goal,
        Method::Auto,
    );
    // Dense direct per block: 20,000 cycles of 5 states, each leaving with 1/10 per step.
    let cycles = 20_000;
    let n = cycles * 5 + 2;
    let (win, lose) = (n - 2, n - 1);
    let mut t = sprs::TriMatI::<f64, u32>::new((n, n));
    for c in 0..cycles {
        for k in 0..5 {
            let s = c * 5 + k;
            t.add_triplet(s, c * 5 + (k + 1) % 5, 0.9);
            t.add_triplet(s, if k == 0 { win } else { lose }, 0.1);
        }
    }
    t.add_triplet(win, win, 1.0);
    t.add_triplet(lose, lose, 1.0);
    let m: Matrix = t.to_csr();
    let mut goal = StateSet::with_capacity(n);
    goal.insert(win);
    run(
        &mut g,
        "cycles_default_dense_direct",
        &m,
        &goal,
        Method::Auto,
    );
    run(
        &mut g,
        "cycles_topological_interval",
        &m,
        &goal,
        Method::Topological,
    );
    // Expander-like SCC: refused by the direct path, solved by interval iteration.
    let m = chain(100_000);
    let mut goal = StateSet::with_capacity(100_000);
    goal.insert(100_000 - 2);
    run(
        &mut g,
        "random_chain_default_iteration",
        &m,
        &goal,
        Method::Auto,
    );
    // Exact elimination (the default for at most 1,000 unknowns with cycles, within its work
    // budget), with the exact probabilities a small model carries (22/100, not the double of
    // 0.22). A 5×5 interior: a grid's elimination grows its numbers fast, and at 11×11 it is
    // over the budget already (the direct path answers there).
    let (m, goal) = grid(6);
    let exact: Vec<BigRational> = m
        .data()
        .iter()
        .map(|&p| BigRational::new(((p * 100.0).round() as i64).into(), 100.into()))
        .collect();
    let mt = graph::transpose(&m);
    let mut all = StateSet::with_capacity(m.rows());
    all.insert_range(..);
    let opts = SolveOptions::default();
    let sol = until_probabilities(&m, &mt, Some(&exact), &all, &goal, &opts).unwrap();
    assert!(sol.method.starts_with("exact"), "{}", sol.method);
    eprintln!("grid6_default_exact: {}", sol.method);
    g.bench_function("grid6_default_exact", |b| {
        b.iter(|| until_probabilities(black_box(&m), &mt, Some(&exact), &all, &goal, &opts))
    });
    g.finish();
}

/// The robust solver (`augur_solver::robust`, interval DTMCs): `chain(n)` with every
/// probability `p` widened to `[0.99p, min(1, 1.01p)]`; `Pmax` and `Pmin` of reaching the goal
/// by interval iteration (with end-component deflation for `Pmax`) and 50 robust sweeps of
/// `Pmax(F≤50 goal)`, beside the DTMC's default method on the unwidened chain
/// (`unbounded_reach_default_method`).
fn bench_robust(c: &mut Criterion) {
    use augur_solver::robust::{self, IntervalRows};
    let mut g = c.benchmark_group("robust_reach");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    let n = 100_000;
    let m = chain(n);
    let lo: Vec<f64> = m.data().iter().map(|p| 0.99 * p).collect();
    let hi: Vec<f64> = m.data().iter().map(|p| (1.01 * p).min(1.0)).collect();
    let indptr = m.indptr();
    let rows = IntervalRows {
        ptr: indptr.raw_storage(),
        idx: m.indices(),
        lo: &lo,
        hi: &hi,
    };
    let mut all = StateSet::with_capacity(n);
    all.insert_range(..);
    let mut goal = StateSet::with_capacity(n);
    goal.insert(n - 2);
    let opts = SolveOptions::default();
    for (name, max) in [("pmax", true), ("pmin", false)] {
        if let Ok(sol) = robust::until(&rows, &all, &goal, max, &opts) {
            eprintln!("{name}, n = {n}: {} sweeps", sol.sweeps);
        }
        g.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter(|| robust::until(black_box(&rows), &all, &goal, max, &opts))
        });
    }
    let mut init = vec![0.0; n];
    init[n - 2] = 1.0;
    let mut active = all.clone();
    active.set(n - 2, false);
    g.bench_function(BenchmarkId::new("pmax_bounded_50", n), |b| {
        b.iter(|| robust::bounded_sweeps(black_box(&rows), &active, init.clone(), 50, true, &opts))
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_sweeps,
    bench_bounded,
    bench_unbounded,
    bench_paths,
    bench_robust
);
criterion_main!(benches);
