//! The table of common tool calls and their verdicts in docs/monitor.md is what the shipped
//! classifier (`models/classifier.toml`) and a monitor compiled from the shipped SafetyDrift
//! chain (`models/safetydrift.tra`, `P=? [ F<=5 "violated" ]`, default policy) answer: each row
//! is run in a fresh session (after the row's `before` call), and its verdict and classifier
//! rule are compared with the table's.

use augur_gate::session::{Action, ToolCall};
use augur_gate::{Policy, Session, Verdict};
use augur_monitor::compile::{compile_dtmcs, CompileOptions, Source};
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
            augur_gate::classifier::Matched::Rule { rule, .. } => {
                cl.rules()[rule as usize].id.as_str()
            }
            augur_gate::classifier::Matched::Default => "default",
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

/// The provenance table of docs/monitor.md (issue 25): in a fresh session of a 180-state
/// `(d, t, r, p)` monitor, the user's request is observed, `read_file` is gated and its result
/// observed, then the row's call is gated; its p and its risk level and rule are the table's.
/// (Risk levels and p come from the classifier and the rules, not from the learned chain.)
#[test]
fn the_provenance_table_of_docs_monitor_md_is_what_sessions_answer() {
    use augur_gate::dtr::{Prov, SafetyState};
    use augur_gate::provenance::ObservationSource as O;
    let doc = std::fs::read_to_string(root().join("docs/monitor.md")).unwrap();
    let begin = doc
        .find("<!-- provenance-table: begin -->")
        .expect("table start marker");
    let end = doc
        .find("<!-- provenance-table: end -->")
        .expect("table end marker");
    let (dtmc, _) = augur_monitor::eval::learn_dtrp(&[&[SafetyState::START]], 0.1).unwrap();
    let m = Arc::new(
        compile_dtmcs(
            vec![Source::new(dtmc, "dtrp")],
            &CompileOptions::new("P=? [ F<=5 \"VIOLATED\" ]"),
        )
        .unwrap(),
    );
    let policy = Arc::new(Policy::default());
    let mut rows = 0;
    let mut untrusted = 0;
    for line in doc[begin..end].lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim().trim_matches('|').split(" | ").collect();
        if cells[0].trim() == "#" {
            continue;
        }
        assert_eq!(cells.len(), 7, "{line}");
        let mut s = Session::new(&m, &policy, None).unwrap();
        s.observe(O::User, None, code(cells[1]));
        let read = json!({"file_path": "notes.txt"});
        s.gate(&Action::Tool(ToolCall::new("read_file", &read)));
        s.observe(O::Tool, Some("read_file"), code(cells[2]));
        let tool: String = serde_json::from_str(code(cells[3])).unwrap();
        let args: Value = serde_json::from_str(code(cells[4])).unwrap();
        let d = s.gate(&Action::Tool(ToolCall::new(&tool, &args)));
        let p = d.dtr_after.unwrap().p;
        assert_eq!(Some(p), Prov::parse(cells[5]), "{line}: {}", s.reason(&d));
        let (level, rule) = d.risk_after.unwrap();
        assert_eq!(
            format!("{level}, rule {rule}"),
            cells[6].trim(),
            "{line}: {}",
            s.reason(&d)
        );
        rows += 1;
        untrusted += usize::from(p == Prov::Untrusted);
    }
    assert!(rows >= 8 && untrusted >= 3, "{rows} rows");
}
