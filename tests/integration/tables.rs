//! Every table the CLI prints is aligned whatever the length of its cells (issue 14,
//! item 11), and each command that prints one has `--json`.

use crate::util::{augur as run, ok, stdout_json};

/// The char column where `word` starts in `line`.
fn column(line: &str, word: &str) -> Option<usize> {
    let byte = line.find(word)?;
    Some(line[..byte].chars().count())
}

#[test]
fn pac_columns_align_with_long_state_names() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("mw.json");
    let m = m.to_str().unwrap();
    ok(&[
        "learn",
        "models/microwave/traces.jsonl",
        "--abstraction",
        "models/microwave/spec.toml",
        "--alpha",
        "0.1",
        "-o",
        m,
    ]);
    let text = ok(&["pac", m, "--epsilon", "0.1", "--delta", "0.05", "--all"]);
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("state "))
        .expect("a header line");
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .copied()
        .take_while(|l| !l.starts_with("PAC:"))
        .collect();
    // The names differ in length ({} ... {fork_inside,open,toggled}); every verdict starts
    // in the same column, and so does every right-aligned count's end.
    assert!(rows.len() >= 10, "{text}");
    let verdict = |r: &str| {
        ["fixed by validity", "ok", "never observed", "not enough"]
            .iter()
            .filter_map(|w| column(r, w))
            .min()
    };
    let first = verdict(rows[0]).expect("a verdict");
    for r in &rows {
        assert_eq!(verdict(r), Some(first), "misaligned row {r:?} in\n{text}");
    }
    // The same report as JSON.
    let j = stdout_json(&run(&[
        "pac",
        m,
        "--epsilon",
        "0.1",
        "--delta",
        "0.05",
        "--json",
    ]));
    assert_eq!(j["per_state"].as_array().unwrap().len(), 18);
}

#[test]
fn horizon_table_is_aligned() {
    let text = ok(&[
        "horizon",
        "models/safetydrift.tra",
        "--target",
        "\"violated\"",
        "--max",
        "3",
    ]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    // Right-aligned numbers: every line ends in the same column.
    let width = lines[0].chars().count();
    assert!(lines.iter().all(|l| l.chars().count() == width), "{text}");
}

#[test]
fn horizon_names_states_by_valuation() {
    // safetydrift.sta gives the states their risk level (issue 14, item 5).
    let text = ok(&[
        "horizon",
        "models/safetydrift.tra",
        "--target",
        "\"violated\"",
        "--max",
        "1",
    ]);
    assert!(
        text.lines().nth(1).unwrap().starts_with("state 0 (risk=0)"),
        "{text}"
    );
    let j = stdout_json(&run(&[
        "horizon",
        "models/safetydrift.tra",
        "--target",
        "\"violated\"",
        "--max",
        "1",
        "--json",
    ]));
    assert_eq!(j["state_names"][4], "state 4 (risk=4)");
}
