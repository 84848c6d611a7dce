//! `augur learn --threads N` on JSON Lines: the parallel reader (N > 1, the default on a
//! machine of several cores) writes the very files the sequential one (`--threads 1`) writes,
//! and fails with the very same messages.

use std::path::Path;

use crate::util::{self, fail, ok};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The files written in a directory: (name, bytes), by name.
type Files = Vec<(String, Vec<u8>)>;

/// The files `augur learn TRACES EXTRA -o OUT` writes, with `--threads` 1, 2 and 3, are the
/// same bytes, and so are the summaries.
fn same_files(traces: &Path, extra: &[&str], out_name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut seen: Option<(String, Files)> = None;
    for threads in ["1", "2", "3"] {
        let sub = dir.path().join(threads);
        std::fs::create_dir(&sub).unwrap();
        let out = sub.join(out_name);
        let mut args = vec!["learn", s(traces), "-o", s(&out), "--threads", threads];
        args.extend_from_slice(extra);
        let summary = ok(&args).replace(s(&sub), "DIR");
        let mut files: Files = std::fs::read_dir(&sub)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        assert!(!files.is_empty());
        match &seen {
            None => seen = Some((summary, files)),
            Some((summary1, files1)) => {
                assert_eq!(&summary, summary1, "{extra:?}, {threads} threads");
                assert!(
                    &files == files1,
                    "{extra:?}: {threads} threads wrote other files"
                );
            }
        }
    }
}

#[test]
fn the_parallel_reader_writes_what_the_sequential_one_writes() {
    let dir = tempfile::tempdir().unwrap();
    // 20 000 simulated traces (about 4 MB), with a category.
    let traces = dir.path().join("sd.jsonl");
    ok(&[
        "simulate",
        "models/safetydrift.tra",
        "-n",
        "20000",
        "--max-steps",
        "12",
        "--seed",
        "3",
        "--category",
        "sim",
        "-o",
        s(&traces),
    ]);
    for extra in [
        &[][..],
        &["--alpha", "0.1", "--order", "2"],
        &["--end-state", "done", "--by-category"],
        &["--counts-only"],
    ] {
        same_files(&traces, extra, "m.json");
    }
    let spec = "models/safetydrift/spec.toml";
    let examples = util::model("safetydrift/traces.jsonl");
    for extra in [
        &["--abstraction", spec][..],
        &["--abstraction", spec, "--by-category", "--order", "3"],
        &["--abstraction", spec, "--counts-only", "--end-state", "end"],
    ] {
        same_files(&examples, extra, "m.json");
    }
}

#[test]
fn the_parallel_reader_fails_as_the_sequential_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("bad.jsonl");
    let mut text = String::new();
    for i in 0..40_000 {
        text += &format!(
            "{{\"id\": {i}, \"steps\": [{{\"state\": \"s{}\"}}]}}\n",
            i % 7
        );
    }
    text += "{\"steps\": [{\"state\": \"s1\"}, {\"state\": \"s2\"]}\n";
    std::fs::write(&traces, &text).unwrap();
    let out = dir.path().join("m.json");
    let run = |threads: &str| fail(&["learn", s(&traces), "-o", s(&out), "--threads", threads]);
    let sequential = run("1");
    assert!(sequential.contains(":40001:"), "{sequential}");
    assert_eq!(run("2"), sequential);
    assert!(!out.exists());
}
