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
//!
//! `one_command_per_state/N`: a chain of N states written as `augur explain --output` and
//! `augur export --to prism` write models, one module with one command per state (issue 43,
//! item 4: 10^6 commands load in under 10 s), parsed and built: the PRISM reader's cost per
//! command. `cargo bench -p augur-prism --bench prism_build -- one_command` runs only these.

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

/// A chain of `n` states, one command per state (`s=i` to `i+1` or back to 0 with 1/2 each).
fn one_command_per_state_model(n: usize) -> String {
    let mut t = format!("dtmc\n\nmodule augur_model\n  s : [0..{}] init 0;\n", n - 1);
    for s in 0..n {
        let next = (s + 1).min(n - 1);
        t.push_str(&format!("  [] s={s} -> 0.5:(s'={next}) + 0.5:(s'=0);\n"));
    }
    t.push_str("endmodule\n");
    t
}

fn one_command_per_state(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_command_per_state");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    for n in [10_000, 100_000] {
        let text = one_command_per_state_model(n);
        group.bench_function(format!("{n}"), |b| {
            b.iter(|| {
                let model = parse_model(&text, "chain.pm").expect("model parses");
                let (dtmc, _) = model
                    .build(&[], &BuildOptions::default())
                    .expect("model builds");
                assert_eq!(dtmc.num_states(), n);
                dtmc.num_transitions()
            })
        });
    }
    group.finish();
}

criterion_group!(prism, benches, one_command_per_state);
criterion_main!(prism);
