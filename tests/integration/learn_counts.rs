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

/// Counts as a Parquet table (`--counts-only -o counts.parquet`): the same model as the JSON
/// counts and as the traces, by category and of order 2; shards as Parquet and JSON, in any
/// order, sum to the whole; `pac --counts` reads them.
#[test]
fn parquet_counts_learn_the_same_models_as_json_counts_and_as_the_traces() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let traces = "models/safetydrift/traces.jsonl";
    let spec = "models/safetydrift/spec.toml";
    let cases: [(&str, &[&str]); 3] = [
        (traces, &["--abstraction", spec, "--by-category"]),
        (
            "models/end-state/traces.jsonl",
            &["--order", "2", "--end-state", "done"],
        ),
        (traces, &["--abstraction", spec, "--order", "2"]),
    ];
    for (i, (traces, extra)) in cases.iter().enumerate() {
        let (cj, cp) = (d(&format!("c{i}.json")), d(&format!("c{i}.parquet")));
        for c in [&cj, &cp] {
            let mut a = vec!["learn", traces, "--counts-only", "-o", s(c)];
            a.extend_from_slice(extra);
            ok(&a);
        }
        let mut models = Vec::new();
        for (src, out) in [
            (vec![*traces], "t.json"),
            (vec!["--from-counts", s(&cj)], "j.json"),
            (vec!["--from-counts", s(&cp)], "p.json"),
        ] {
            let o = d(&format!("{i}{out}"));
            let mut a = vec!["learn"];
            a.extend_from_slice(&src);
            a.extend_from_slice(&["--alpha", "0.25", "-o", s(&o)]);
            a.extend_from_slice(extra);
            ok(&a);
            let files: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let n = p.file_name().unwrap().to_str().unwrap();
                    n.starts_with(&format!("{i}{}", &out[..1])) && n.ends_with(".json")
                })
                .collect();
            let mut docs = std::collections::BTreeMap::new();
            for f in files {
                let mut v = read(&f);
                v["metadata"]["learned"] = Value::Null;
                let name = f.file_name().unwrap().to_str().unwrap()[2..].to_string();
                docs.insert(name, v);
            }
            models.push(docs);
        }
        assert!(!models[0].is_empty());
        assert_eq!(models[0], models[1], "case {i}: JSON counts");
        assert_eq!(models[0], models[2], "case {i}: Parquet counts");
        // `pac --counts` gives the same report for both forms.
        if extra.contains(&"--by-category") {
            continue;
        }
        let pac = |c: &Path| -> Value {
            let mut a = vec![
                "pac",
                "--counts",
                s(c),
                "--epsilon",
                "0.2",
                "--delta",
                "0.1",
            ];
            a.extend_from_slice(&["--json", "--all"]);
            serde_json::from_str(&ok(&a)).unwrap()
        };
        let (x, y) = (pac(&cj), pac(&cp));
        assert!(x["per_state"].as_array().unwrap().len() > 2);
        assert_eq!(x, y, "case {i}: pac");
    }
    // Shards: Parquet and JSON counts, summed in two orders, give the whole's model.
    let parts = shards(dir.path(), traces, &[37, 150]);
    let counts: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let out = d(&format!("shard{k}.counts.{}", ["parquet", "json"][k % 2]));
            ok(&[
                "learn",
                s(p),
                "--abstraction",
                spec,
                "--counts-only",
                "-o",
                s(&out),
            ]);
            out
        })
        .collect();
    let whole = d("whole.json");
    ok(&["learn", traces, "--abstraction", spec, "-o", s(&whole)]);
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        let out = d("sum.json");
        ok(&[
            "learn",
            "--from-counts",
            s(&counts[order[0]]),
            s(&counts[order[1]]),
            s(&counts[order[2]]),
            "--abstraction",
            spec,
            "-o",
            s(&out),
        ]);
        let (a, b) = (read(&whole), read(&out));
        for field in ["transitions", "initial", "labels", "counts"] {
            assert_eq!(a[field], b[field], "{field}, shards in order {order:?}");
        }
    }
}

/// A Parquet file that is not a counts table: the missing or mistyped column named, exit 1.
#[test]
fn parquet_counts_with_missing_or_mistyped_columns_are_located_errors() {
    use augur_columnar::{write_steps_parquet, Columns};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let user_error = |args: &[&str]| {
        let o = crate::util::augur(args);
        let e = crate::util::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        e.replace(dir.path().to_str().unwrap(), "DIR")
    };
    // A step table given as counts: no column `kind`.
    let steps = dir.path().join("steps.parquet");
    write_steps_parquet(&steps, [("t1", 0, "a")], &Columns::default()).unwrap();
    insta::assert_snapshot!(
        "parquet_counts_missing_column",
        user_error(&["learn", "--from-counts", s(&steps), "-o", s(&out)])
    );
    // `from_state` holds integers.
    let typed = dir.path().join("typed.parquet");
    let columns = Columns {
        trace_id: "kind".into(),
        order: "from_state".into(),
        state: vec!["to_state".into()],
    };
    write_steps_parquet(&typed, [("step", 0, "a")], &columns).unwrap();
    insta::assert_snapshot!(
        "parquet_counts_mistyped_column",
        user_error(&[
            "pac",
            "--counts",
            s(&typed),
            "--epsilon",
            "0.1",
            "--delta",
            "0.1"
        ])
    );
    // Parquet counts of order 1 learned as order 2.
    let c = dir.path().join("c.parquet");
    ok(&[
        "learn",
        "models/end-state/traces.jsonl",
        "--counts-only",
        "-o",
        s(&c),
    ]);
    assert!(user_error(&[
        "learn",
        "--from-counts",
        s(&c),
        "--order",
        "2",
        "-o",
        s(&out)
    ])
    .contains("the counts are of order 1; give --order 1"));
}
