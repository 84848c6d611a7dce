//! `augur explain`'s numbers (issue 26), model building not counted:
//! - `paths_1000/crowds.6-15`: the 1,000 most probable paths of the first property of
//!   crowds.6-15 (`"positive": P=? [ F observe0>1 ]`, 2.46 M states) — the target set, the
//!   backward Dijkstra and the search (`paths_1000_search`), and the whole `explain` call with
//!   the checker's value at the initial state (`paths_1000_explain`);
//! - `subsystem/crowds.6-10`: the critical-subsystem heuristic for `P<=0.05 [ F observe0>1 ]`
//!   on crowds.6-10 (the probability is 0.1455; `AUGUR_BENCH_THETA` sets another bound, e.g.
//!   0.0728, 0.1 and 0.131 for 0.5 ×, 0.69 × and 0.9 × of it): the target set, the transpose,
//!   the property's value in every state (the checker; the ranking's input) and
//!   `subsystem::grow`.
//!
//! Needs `../shared/qvbs/crowds` (skipped without it). Run with
//! `nice -n 10 cargo bench -p augur-explain --bench explain`; wall-clock time (the checker's dense blocks use
//! two threads).

use augur_check::{CheckOptions, CheckSession, Constants, LoadOptions, Model, StateValues};
use augur_explain::paths::{PathGoal, PathSearch};
use augur_explain::{explain, Request, SubsystemKind};
use criterion::{criterion_group, criterion_main, Criterion};
use std::path::PathBuf;
use std::time::Duration;

fn crowds(total: u32, size: u32) -> Option<(Model, Constants)> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/qvbs/crowds/crowds.prism");
    if !path.exists() {
        eprintln!(
            "{} not found: the explain benchmarks need ../shared",
            path.display()
        );
        return None;
    }
    let constants = Constants::parse(&format!("TotalRuns={total},CrowdSize={size}")).ok()?;
    let opts = LoadOptions {
        constants: constants.clone(),
        ..LoadOptions::default()
    };
    Some((Model::load(&path, &opts).expect("crowds builds"), constants))
}

/// Whether the benchmarks named `name...` are selected by the command line's filter (the
/// models are built only for the selected ones).
fn selected(name: &str) -> bool {
    match std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        Some(f) => name.contains(&f) || f.contains(name),
        None => true,
    }
}

fn paths(c: &mut Criterion) {
    if !selected("paths_1000") {
        return;
    }
    let Some((model, constants)) = crowds(6, 15) else {
        return;
    };
    let mut group = c.benchmark_group("paths_1000");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("paths_1000_search/crowds.6-15", |b| {
        b.iter(|| {
            let mut session =
                CheckSession::new(&model, CheckOptions::default()).with_constants(&constants);
            let psi = session.states("observe0>1", "target").expect("target");
            let dtmc = model.dtmc();
            let transpose = dtmc.transpose();
            let f = PathGoal {
                phi: None,
                psi: &psi,
                bound: None,
            };
            let mut search = PathSearch::new(dtmc, &transpose, f, dtmc.initial[0] as usize);
            let mut n = 0;
            while n < 1000 && search.next_path().expect("search").is_some() {
                n += 1;
            }
            assert_eq!(n, 1000);
        })
    });
    group.bench_function("paths_1000_explain/crowds.6-15", |b| {
        let mut r = Request::new("P=? [ F observe0>1 ]", 1000);
        r.constants = constants.clone();
        b.iter(|| {
            let e = explain(&model, &r).expect("explain").explanation;
            assert_eq!(e.paths.len(), 1000);
        })
    });
    group.finish();
}

fn subsystem(c: &mut Criterion) {
    if !selected("subsystem") {
        return;
    }
    let Some((model, constants)) = crowds(6, 10) else {
        return;
    };
    let mut group = c.benchmark_group("subsystem");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(20));
    let theta = std::env::var("AUGUR_BENCH_THETA").unwrap_or_else(|_| "0.05".into());
    let mut r = Request::new(format!("P<={theta} [ F observe0>1 ]"), 1);
    r.constants = constants;
    r.subsystem = Some(SubsystemKind::Heuristic);
    let e = explain(&model, &r).expect("explain").explanation;
    let s = e.subsystem.as_ref().expect("a subsystem");
    eprintln!(
        "crowds.6-10, θ = {theta}: subsystem of {} states (of {}), probability {}, {} sub-chains checked",
        s.size,
        model.dtmc().num_states(),
        s.probability.value,
        s.searched
    );
    // The heuristic alone: the target set, the transpose, the property's value in every state
    // (the checker) and `subsystem::grow` (the whole `explain` call also counts the paths
    // needed to exceed θ, up to `max_paths`).
    group.bench_function("subsystem/crowds.6-10", |b| {
        let t: f64 = theta.parse().expect("a number");
        b.iter(|| {
            let mut session =
                CheckSession::new(&model, CheckOptions::default()).with_constants(&r.constants);
            let psi = session.states("observe0>1", "target").expect("target");
            let dtmc = model.dtmc();
            let transpose = dtmc.transpose();
            let f = PathGoal {
                phi: None,
                psi: &psi,
                bound: None,
            };
            let values = match session
                .check_str("P=? [ F observe0>1 ]")
                .expect("check")
                .states
            {
                StateValues::Num(v) => v.values,
                StateValues::Bool(_) => unreachable!("a probability"),
            };
            let exceeds = |x: f64| x > t;
            let s = augur_explain::subsystem::grow(
                dtmc,
                &transpose,
                f,
                dtmc.initial[0] as usize,
                &values,
                &exceeds,
                &CheckOptions::default(),
            )
            .expect("grow")
            .expect("a subsystem");
            assert!(s.probability.lo > t);
        })
    });
    group.finish();
}

criterion_group!(benches, paths, subsystem);
criterion_main!(benches);
