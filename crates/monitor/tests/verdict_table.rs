//! The table of common tool calls and their verdicts in docs/monitor.md is what the shipped
//! classifier (`models/classifier.toml`) and a monitor compiled from the shipped SafetyDrift
//! chain (`models/safetydrift.tra`, `P=? [ F<=5 "violated" ]`, default policy) answer: each row
//! is run in a fresh session (after the row's `before` call), and its verdict and classifier
//! rule are compared with the table's.

use augur_monitor::compile::{compile_dtmcs, CompileOptions, Source};
use augur_monitor::session::{Action, ToolCall};
use augur_monitor::{Policy, Session, Verdict};
use serde_json::{json, Value};
use std::sync::Arc;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text between backticks of a cell.
fn code(cell: &str) -> &str {
    cell.trim().trim_matches('`')
}

#[test]
fn the_verdict_table_of_docs_monitor_md_is_what_the_monitor_answers() {
    let doc = std::fs::read_to_string(root().join("docs/monitor.md")).unwrap();
    let begin = doc
        .find("<!-- verdict-table: begin -->")
        .expect("table start marker");
    let end = doc
        .find("<!-- verdict-table: end -->")
        .expect("table end marker");
    let (dtmc, _) =
        augur_formats::read_model(&root().join("models/safetydrift.tra"), &Default::default())
            .unwrap();
    let m = Arc::new(
        compile_dtmcs(
            vec![Source::new(dtmc, "sd")],
            &CompileOptions::new("P=? [ F<=5 \"violated\" ]"),
        )
        .unwrap(),
    );
    let policy = Arc::new(Policy::default());
    let cl = m.classifier().unwrap();
    let mut rows = 0;
    let mut per_verdict = [0usize; 4];
    for line in doc[begin..end].lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").collect();
        if cells[0].trim() == "#" {
            continue;
        }
        assert_eq!(cells.len(), 6, "{line}");
        let tool: String = serde_json::from_str(code(cells[2])).unwrap();
        let args: Value = serde_json::from_str(code(cells[3])).unwrap();
        let want = Verdict::parse(cells[4]).unwrap_or_else(|| panic!("{line}: verdict"));
        let mut s = Session::new(&m, &policy, None).unwrap();
        let before = match cells[1].trim() {
            "—" => None,
            "internal" => Some(json!({"path": "/workspace/report.txt"})),
            "secret" => Some(json!({"path": "/home/u/.ssh/id_rsa"})),
            b => panic!("{line}: unknown `before` {b}"),
        };
        if let Some(a) = before {
            let d = s.gate(&Action::Tool(ToolCall::new("read_file", &a)));
            assert!(
                d.verdict <= Verdict::Warn,
                "{line}: the `before` call must run"
            );
        }
        let d = s.gate(&Action::Tool(ToolCall::new(&tool, &args)));
        assert_eq!(d.verdict, want, "{line}: {}", s.reason(&d));
        let c = cl.classify(&tool, &args).unwrap();
        let rule = match c.matched {
            augur_monitor::classifier::Matched::Rule { rule, .. } => {
                cl.rules()[rule as usize].id.as_str()
            }
            augur_monitor::classifier::Matched::Default => "default",
        };
        assert_eq!(rule, cells[5].trim(), "{line}");
        rows += 1;
        per_verdict[want as usize] += 1;
    }
    assert!(rows >= 40, "{rows} rows");
    // Both sides are in the table: allowed calls and blocked ones.
    assert!(
        per_verdict[Verdict::Allow as usize] >= 5 && per_verdict[Verdict::Block as usize] >= 20
    );
}
