//! `augur learn` on Parquet step tables (one row per step) and `augur simulate -o
//! traces.parquet`: the same model as from the same traces in JSON Lines, steps sorted by the
//! order column, and errors naming the file, the column and its option.

use std::path::Path;

use augur_columnar::{write_steps_parquet, Columns};

use crate::util;

fn run(args: &[&str]) -> std::process::Output {
    util::cmd().args(args).output().unwrap()
}

fn model_without_metadata(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("metadata");
    v
}

#[test]
fn parquet_traces_learn_the_same_model_as_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    for out in ["t.parquet", "t.jsonl"] {
        let o = run(&[
            "simulate",
            "models/safetydrift.tra",
            "-n",
            "3000",
            "--max-steps",
            "12",
            "--seed",
            "1",
            "-o",
            &d(out),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for (traces, model) in [("t.parquet", "p.json"), ("t.jsonl", "j.json")] {
        let o = run(&["learn", &d(traces), "--alpha", "0.5", "-o", &d(model)]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let p = model_without_metadata(&dir.path().join("p.json"));
    let j = model_without_metadata(&dir.path().join("j.json"));
    assert!(p["counts"]["transitions"].as_array().unwrap().len() > 5);
    assert_eq!(p, j);
}

#[test]
fn parquet_over_many_row_groups_learns_the_same_models_and_counts_as_json_lines() {
    // About 300 000 steps: several row groups read in parallel, traces crossing them.
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    for out in ["t.parquet", "t.jsonl"] {
        let o = run(&[
            "simulate",
            "models/safetydrift.tra",
            "-n",
            "30000",
            "--max-steps",
            "12",
            "--seed",
            "7",
            "-o",
            &d(out),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let options: [&[&str]; 3] = [
        &["--final-absorbing"],
        &["--order", "2", "--alpha", "0.1"],
        &["--end-state", "done"],
    ];
    for (i, extra) in options.iter().enumerate() {
        for (traces, model) in [("t.parquet", "p"), ("t.jsonl", "j")] {
            let (t, out) = (d(traces), d(&format!("{model}{i}.json")));
            let mut args: Vec<&str> = vec!["learn", &t, "-o", &out];
            args.extend_from_slice(extra);
            let o = run(&args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let p = model_without_metadata(&dir.path().join(format!("p{i}.json")));
        let j = model_without_metadata(&dir.path().join(format!("j{i}.json")));
        assert_eq!(p, j, "options {extra:?}");
    }
    for (traces, counts) in [("t.parquet", "p.counts.json"), ("t.jsonl", "j.counts.json")] {
        let o = run(&["learn", &d(traces), "--counts-only", "-o", &d(counts)]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
    assert_eq!(read("p.counts.json"), read("j.counts.json"));
}

#[test]
fn steps_are_sorted_by_the_order_column_within_each_trace() {
    // Rows in no order, timestamps as the order column: trace t1 is a b c, t2 is a c.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spans.parquet");
    let columns = Columns {
        trace_id: "tid".into(),
        order: "ts".into(),
        state: vec!["tool".into()],
    };
    let rows = [
        ("t1", 300, "c"),
        ("t2", 50, "c"),
        ("t1", 100, "a"),
        ("t2", 10, "a"),
        ("t1", 200, "b"),
    ];
    write_steps_parquet(&path, rows, &columns).unwrap();
    let out = dir.path().join("m.json");
    let o = run(&[
        "learn",
        path.to_str().unwrap(),
        "--trace-id-column",
        "tid",
        "--order-column",
        "ts",
        "--state-column",
        "tool",
        "--final-absorbing",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let names: Vec<String> =
        serde_json::from_value(doc["metadata"]["state_names"].clone()).unwrap();
    let idx = |n: &str| names.iter().position(|x| x == n).unwrap() as u64;
    let mut counts: Vec<(u64, u64, u64)> =
        serde_json::from_value(doc["counts"]["transitions"].clone()).unwrap();
    counts.sort_unstable();
    // a->b once, b->c once, a->c once; a has two successors with one count each.
    let mut expected = vec![
        (idx("a"), idx("b"), 1),
        (idx("b"), idx("c"), 1),
        (idx("a"), idx("c"), 1),
    ];
    expected.sort_unstable();
    assert_eq!(counts, expected);
}

/// A user error's stderr, the temporary directory replaced by `DIR`.
fn user_error(dir: &Path, args: &[&str]) -> String {
    let o = run(args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(o.stdout.is_empty());
    stderr.replace(dir.to_str().unwrap(), "DIR")
}

#[test]
fn missing_mistyped_and_ambiguous_columns_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    write_steps_parquet(
        &path,
        [("t1", 0, "a"), ("t1", 1, "b"), ("t1", 1, "c")],
        &Columns::default(),
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let out = dir.path().join("m.json");
    let o = out.to_str().unwrap();
    insta::assert_snapshot!(
        "parquet_missing_column",
        user_error(dir.path(), &["learn", p, "--state-column", "tool", "-o", o])
    );
    insta::assert_snapshot!(
        "parquet_mistyped_order",
        user_error(
            dir.path(),
            &["learn", p, "--order-column", "state", "-o", o]
        )
    );
    insta::assert_snapshot!(
        "parquet_duplicate_order",
        user_error(dir.path(), &["learn", p, "-o", o])
    );
    insta::assert_snapshot!(
        "parquet_unknown_preset",
        user_error(dir.path(), &["learn", p, "--preset", "nope", "-o", o])
    );
    let garbage = dir.path().join("g.parquet");
    std::fs::write(&garbage, "not parquet\n").unwrap();
    let stderr = user_error(dir.path(), &["learn", garbage.to_str().unwrap(), "-o", o]);
    assert!(
        stderr.contains("DIR/g.parquet: not a readable Parquet file"),
        "{stderr}"
    );
    let jsonl = dir.path().join("t.jsonl");
    std::fs::write(&jsonl, "{\"steps\": [{\"state\": \"a\"}]}\n").unwrap();
    insta::assert_snapshot!(
        "parquet_options_on_json_lines",
        user_error(
            dir.path(),
            &[
                "learn",
                jsonl.to_str().unwrap(),
                "--order-column",
                "ts",
                "-o",
                o
            ]
        )
    );
}
