//! The AgentDojo runs shipped in `models/agentdojo/runs/` (issue 28, item 1): the converter reads
//! them compressed, its counts are the data set's own (its README: 776 runs, 194 per model, 83
//! violating: gpt-4o-mini 21, gpt-4-0125 33, llama-3-70b 26, claude-3.5-sonnet 3), the
//! compressed and the plain files give the same runs, and a damaged or missing file is a clear
//! error.

use std::io::Read as _;

use crate::util;

fn runs_dir() -> std::path::PathBuf {
    util::root().join("models/agentdojo/runs")
}

fn shipped_runs() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(runs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.gz"))
        .collect();
    v.sort();
    v
}

fn convert(files: &[std::path::PathBuf], out: &std::path::Path) -> String {
    convert_with(files, out, &[])
}

fn convert_with(files: &[std::path::PathBuf], out: &std::path::Path, more: &[&str]) -> String {
    let mut args: Vec<String> = vec!["monitor".into(), "agentdojo".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.push("--tasks".into());
    args.push(
        util::root()
            .join("models/agentdojo/agentdojo_v1_tasks.json")
            .display()
            .to_string(),
    );
    args.push("-o".into());
    args.push(out.display().to_string());
    args.extend(more.iter().map(|s| s.to_string()));
    util::ok(&args)
}

/// The converter prints a summary; the runs whose label and violation step disagree are
/// listed one a line only with `--verbose` (issue 42, item 8).
#[test]
fn the_converter_prints_a_summary_and_the_details_with_verbose() {
    let dir = tempfile::tempdir().unwrap();
    let files = shipped_runs();
    let out = dir.path().join("runs.jsonl");
    let quiet = convert(&files, &out);
    let verbose = convert_with(&files, &out, &["--verbose"]);
    let disagree = |text: &str| {
        let line = text
            .lines()
            .find(|l| l.starts_with("label and violation step disagree on "))
            .unwrap_or_else(|| panic!("{text}"))
            .to_string();
        line["label and violation step disagree on ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap()
    };
    let n = disagree(&quiet);
    assert!(n > 0, "{quiet}");
    assert_eq!(disagree(&verbose), n);
    let listed = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("  ") && l.contains(": "))
            .count()
    };
    assert_eq!(listed(&quiet), 0, "{quiet}");
    assert!(quiet.contains("--verbose lists them"), "{quiet}");
    assert_eq!(listed(&verbose), n, "{verbose}");
    assert!(quiet.lines().count() <= 4, "{quiet}");
}

#[test]
fn the_shipped_runs_convert_with_the_data_sets_own_counts() {
    let dir = tempfile::tempdir().unwrap();
    let files = shipped_runs();
    assert_eq!(files.len(), 4, "four models: {files:?}");
    let out = dir.path().join("runs.jsonl");
    let printed = convert(&files, &out);
    assert!(
        printed.contains("776 runs (83 unsafe, 76 with a violation step)"),
        "{printed}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let mut per_model = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        // Ids are `<model>:<suite>:<line>`: the model named without `.jsonl` or `.gz`.
        let model = id.split(':').next().unwrap().to_string();
        assert!(!model.contains(".jsonl"), "{id}");
        let e = per_model.entry(model).or_default();
        e.0 += 1;
        if v["label"] == "unsafe" {
            e.1 += 1;
        }
    }
    let want = [
        ("claude-3-5-sonnet-20241022", 3),
        ("gpt-4-0125-preview", 33),
        ("gpt-4o-mini-2024-07-18", 21),
        ("meta-llama_Llama-3-70b-chat-hf", 26),
    ];
    for (model, unsafe_runs) in want {
        assert_eq!(
            per_model.get(model),
            Some(&(194, unsafe_runs)),
            "{model}: {per_model:?}"
        );
    }
}

#[test]
fn compressed_and_plain_exports_give_the_same_runs() {
    let dir = tempfile::tempdir().unwrap();
    let gz = shipped_runs()[0].clone();
    let plain = dir.path().join(
        gz.file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".gz"),
    );
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    std::fs::write(&plain, &text).unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    convert(&[gz], &a);
    convert(&[plain], &b);
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        std::fs::read_to_string(&b).unwrap()
    );
}

#[test]
fn a_damaged_or_missing_export_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // A gzip header followed by garbage: an error naming the file, never a panic.
    let bad = dir.path().join("agentdojo-x.jsonl.gz");
    let gz = std::fs::read(&shipped_runs()[0]).unwrap();
    let mut damaged = gz[..40].to_vec();
    damaged.extend_from_slice(&[0xff; 64]);
    std::fs::write(&bad, damaged).unwrap();
    let tasks = util::root().join("models/agentdojo/agentdojo_v1_tasks.json");
    let args = |f: &std::path::Path| {
        vec![
            "monitor".to_string(),
            "agentdojo".into(),
            f.display().to_string(),
            "--tasks".into(),
            tasks.display().to_string(),
            "-o".into(),
            dir.path().join("o.jsonl").display().to_string(),
        ]
    };
    let err = util::fail(&args(&bad));
    assert!(err.contains("agentdojo-x.jsonl.gz"), "{err}");
    let err = util::fail(&args(std::path::Path::new("no-such-export.jsonl")));
    assert!(err.contains("no-such-export.jsonl: no such file"), "{err}");
    assert!(err.contains("models/agentdojo/runs/"), "{err}");
}
