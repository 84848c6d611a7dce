//! `augur learn --counts-only` / `--from-counts`: counts keyed by state name, summed over
//! shards, learn the same model as the whole trace set.

use std::path::Path;

use serde_json::Value;

use crate::util::{fail, ok};

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Splits `traces` into shards of the given line counts (the rest in the last).
fn shards(dir: &Path, traces: &str, sizes: &[usize]) -> Vec<std::path::PathBuf> {
    let text = std::fs::read_to_string(traces).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut at: usize = 0;
    for (i, &n) in sizes.iter().chain([&usize::MAX]).enumerate() {
        let end = at.saturating_add(n).min(lines.len());
        let p = dir.join(format!("shard{i}.jsonl"));
        std::fs::write(&p, lines[at..end].join("\n") + "\n").unwrap();
        out.push(p);
        at = end;
    }
    out
}

/// Counts a trace file with `extra` options, returning the counts file.
fn count(dir: &Path, traces: &Path, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join(format!(
        "{}.counts.json",
        traces.file_stem().unwrap().to_str().unwrap()
    ));
    let mut args = vec!["learn", s(traces), "--counts-only", "-o", s(&out)];
    args.extend_from_slice(extra);
    ok(&args);
    out
}

/// The counts as a map (category, kind, key) -> count: independent of listing order.
fn keyed(counts: &Value) -> std::collections::BTreeMap<String, u64> {
    let mut m = std::collections::BTreeMap::new();
    for g in counts["groups"].as_array().unwrap() {
        let cat = g["category"].to_string();
        *m.entry(format!("{cat} traces")).or_insert(0) += g["traces"].as_u64().unwrap();
        *m.entry(format!("{cat} steps")).or_insert(0) += g["steps"].as_u64().unwrap();
        for kind in ["initial", "transitions", "invalid", "ends"] {
            for e in g[kind].as_array().unwrap() {
                let e = e.as_array().unwrap();
                let key: Vec<String> = e[..e.len() - 1].iter().map(|v| v.to_string()).collect();
                *m.entry(format!("{cat} {kind} {}", key.join(" ")))
                    .or_insert(0) += e[e.len() - 1].as_u64().unwrap();
            }
        }
    }
    m
}

#[test]
fn shard_counts_sum_to_the_counts_of_the_whole_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "models/safetydrift/spec.toml";
    let whole = count(
        dir.path(),
        Path::new("models/safetydrift/traces.jsonl"),
        &["--abstraction", spec, "--by-category"],
    );
    let parts = shards(dir.path(), "models/safetydrift/traces.jsonl", &[37, 150]);
    let counts: Vec<_> = parts
        .iter()
        .map(|p| count(dir.path(), p, &["--abstraction", spec, "--by-category"]))
        .collect();
    // Summed by hand (an independent sum of the JSON): the shards' counts add up to the whole's.
    let mut sum = std::collections::BTreeMap::new();
    for c in &counts {
        for (k, v) in keyed(&read(c)) {
            *sum.entry(k).or_insert(0) += v;
        }
    }
    assert_eq!(sum, keyed(&read(&whole)));
    // Learned from the shards, in two orders: the same model as from the traces.
    let from_traces = dir.path().join("t.json");
    ok(&[
        "learn",
        "models/safetydrift/traces.jsonl",
        "--abstraction",
        spec,
        "--alpha",
        "0.5",
        "-o",
        s(&from_traces),
    ]);
    for order in [[0, 1, 2], [2, 0, 1]] {
        let out = dir.path().join("c.json");
        ok(&[
            "learn",
            "--from-counts",
            s(&counts[order[0]]),
            s(&counts[order[1]]),
            s(&counts[order[2]]),
            "--abstraction",
            spec,
            "--alpha",
            "0.5",
            "-o",
            s(&out),
        ]);
        let (a, b) = (read(&from_traces), read(&out));
        for field in ["transitions", "initial", "labels", "counts"] {
            assert_eq!(a[field], b[field], "{field}, shards in order {order:?}");
        }
    }
}

#[test]
fn one_counts_file_learns_the_same_model_bit_for_bit_with_order_and_end_state() {
    let dir = tempfile::tempdir().unwrap();
    for traces in [
        "models/end-state/traces.jsonl",
        "models/safetydrift/traces.jsonl",
    ] {
        let spec: &[&str] = if traces.contains("safetydrift") {
            &["--abstraction", "models/safetydrift/spec.toml"]
        } else {
            &[]
        };
        for order in ["1", "2", "3"] {
            let mut opts = vec!["--order", order];
            opts.extend_from_slice(spec);
            let c = count(dir.path(), Path::new(traces), &opts);
            let direct = dir.path().join("direct.json");
            let via = dir.path().join("via.json");
            let mut a = vec!["learn", traces, "-o", s(&direct), "--end-state", "done"];
            a.extend_from_slice(&opts);
            ok(&a);
            let mut b = vec![
                "learn",
                "--from-counts",
                s(&c),
                "-o",
                s(&via),
                "--end-state",
                "done",
            ];
            b.extend_from_slice(&opts);
            ok(&b);
            let (mut x, mut y) = (read(&direct), read(&via));
            // Only the provenance differs.
            x["metadata"]["learned"] = Value::Null;
            y["metadata"]["learned"] = Value::Null;
            assert_eq!(x, y, "{traces} order {order}");
        }
    }
}

#[test]
fn bad_counts_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let c = count(dir.path(), Path::new("models/end-state/traces.jsonl"), &[]);
    let out = dir.path().join("m.json");
    // Counts of order 1 learned as order 2.
    let e = fail(&[
        "learn",
        "--from-counts",
        s(&c),
        "--order",
        "2",
        "-o",
        s(&out),
    ]);
    assert!(
        e.contains("the counts are of order 1; give --order 1"),
        "{e}"
    );
    // A state counted but not listed.
    let mut v = read(&c);
    v["groups"][0]["states"] = serde_json::json!(["ok"]);
    std::fs::write(&c, v.to_string()).unwrap();
    let e = fail(&["learn", "--from-counts", s(&c), "-o", s(&out)]);
    assert!(
        e.contains("state `bad` is counted but not listed in `states`"),
        "{e}"
    );
    // Not a counts file at all.
    std::fs::write(
        &c,
        "{\"format\": \"other\", \"version\": 1, \"order\": 1, \"groups\": []}",
    )
    .unwrap();
    let e = fail(&["learn", "--from-counts", s(&c), "-o", s(&out)]);
    assert!(e.contains("format is `other`, not `augur-counts`"), "{e}");
    // A malformed one: located.
    std::fs::write(&c, "{\"format\": \"augur-counts\",\n \"version\": }").unwrap();
    let e = fail(&["learn", "--from-counts", s(&c), "-o", s(&out)]);
    assert!(e.contains(":2:"), "{e}");
}

#[test]
fn pac_reads_keyed_counts_as_it_reads_the_model_learned_from_them() {
    // The PAC report of keyed counts (with order 1 and 2) is the report of the model learned
    // from the same traces: the same states, names and observations.
    let dir = tempfile::tempdir().unwrap();
    let traces = Path::new("models/end-state/traces.jsonl");
    for order in ["1", "2"] {
        let c = count(dir.path(), traces, &["--order", order]);
        let model = dir.path().join("m.json");
        ok(&["learn", s(traces), "--order", order, "-o", s(&model)]);
        let pac = ["--epsilon", "0.2", "--delta", "0.1", "--json", "--all"];
        let mut a = vec!["pac", s(&model)];
        a.extend_from_slice(&pac);
        let mut b = vec!["pac", "--counts", s(&c)];
        b.extend_from_slice(&pac);
        let (x, y): (Value, Value) = (
            serde_json::from_str(&ok(&a)).unwrap(),
            serde_json::from_str(&ok(&b)).unwrap(),
        );
        assert!(x["per_state"].as_array().unwrap().len() >= 2);
        assert!(x["per_state"][0]["name"].is_string());
        assert_eq!(x, y, "order {order}");
    }
}
