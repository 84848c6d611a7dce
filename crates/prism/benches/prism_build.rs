//! Building the state space of QVBS instances from their PRISM files (parse + explore), the
//! part of `augur check` that `augur-prism` owns.
//!
//! ```text
//! cargo bench -p augur-prism --bench prism_build
//! ```
//!
//! Needs `../shared/qvbs` beside the repository (skips with a notice otherwise). Storm's
//! build times for the same instances on a 2-core machine are in `../shared/qvbs/README.md`
//! (crowds.6-10: 0.77 s, egl.5-8: 0.81 s, nand.20-1: 0.11 s); `benches/compare_storm.py`
//! measures both side by side.

use augur_expr::Value;
use augur_prism::{parse_model, BuildOptions};
use criterion::{criterion_group, criterion_main, Criterion};
use std::path::PathBuf;
use std::time::Duration;

fn instance(c: &mut Criterion, name: &str, file: &str, consts: &[(&str, Value)]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/qvbs")
        .join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipping {name}: {} not found", path.display());
        return;
    };
    let consts: Vec<(String, Value)> = consts.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    let mut group = c.benchmark_group("prism_build");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function(name, |b| {
        b.iter(|| {
            let model = parse_model(&text, file).expect("model parses");
            let (dtmc, _) = model
                .build(&consts, &BuildOptions::default())
                .expect("model builds");
            dtmc.num_transitions()
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    instance(
        c,
        "nand.20-1",
        "nand/nand.prism",
        &[("N", Value::Int(20)), ("K", Value::Int(1))],
    );
    instance(
        c,
        "egl.5-8",
        "egl/egl.prism",
        &[("N", Value::Int(5)), ("L", Value::Int(8))],
    );
    instance(
        c,
        "crowds.6-10",
        "crowds/crowds.prism",
        &[("TotalRuns", Value::Int(6)), ("CrowdSize", Value::Int(10))],
    );
}

criterion_group!(prism, benches);
criterion_main!(prism);
