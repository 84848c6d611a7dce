//! Whole `monitor gate` sessions with a state journal (issue 22, class 3): JSON lines
//! `{"session", "tool", "args", "executed"?, "wait"?}` drive a `SessionStore` (capacity 3,
//! ttl 5 s) that journals every move; a line `restart` drops the store and restores a new one
//! from the journal. Findings: a panic; a journal the store wrote that it cannot read back;
//! a restored session that differs from the one before the restart; an id once refused that
//! opens again; a session that leaves VIOLATED.
#![no_main]
use augur_gate::dtr::RiskLevel;
use augur_gate::session::{Action, SessionSnapshot, ToolCall};
use augur_gate::store::{SessionRefused, SessionStore};
use augur_gate::{Monitor, Policy};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

fn monitor() -> Arc<Monitor> {
    static M: OnceLock<Arc<Monitor>> = OnceLock::new();
    M.get_or_init(|| Arc::new(augur_mcp::server::default_monitor().expect("built-in monitor")))
        .clone()
}

fn snapshots(store: &SessionStore) -> HashMap<String, SessionSnapshot> {
    store
        .sessions()
        .map(|(id, s)| (id.to_string(), s.snapshot()))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("augur-fuzz-gate-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let policy = Arc::new(Policy::default());
    let new_store = || SessionStore::new(monitor(), Arc::clone(&policy), Some(5), 3).with_burned_bits(4096);
    let mut store = new_store();
    let mut now = 1_000u64;
    store.restore(&path, now).expect("a new journal");
    let mut refused: HashSet<String> = HashSet::new();
    for line in data.split(|&b| b == b'\n') {
        if line == b"restart" {
            store.expire(now);
            store.commit().expect("journal write");
            let before = snapshots(&store);
            drop(store);
            store = new_store();
            store.restore(&path, now).expect("the store's own journal reads back");
            assert_eq!(before, snapshots(&store), "a restart changed the sessions");
            continue;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        now += m.get("wait").and_then(Value::as_u64).unwrap_or(0).min(100);
        let Some(id) = m.get("session").and_then(Value::as_str) else {
            continue;
        };
        let tool = m.get("tool").and_then(Value::as_str).unwrap_or("");
        let args = m.get("args").cloned().unwrap_or(Value::Null);
        let action = Action::Tool(ToolCall::new(tool, &args));
        match store.get(id, m.get("category").and_then(Value::as_str), now) {
            Err(SessionRefused::Expired) => {
                refused.insert(id.to_string());
            }
            Err(SessionRefused::Open(_)) => {}
            Ok(s) => {
                assert!(!refused.contains(id), "burned id `{id}` reopened");
                let was = s.dtr().risk_level() == RiskLevel::Violated;
                match m.get("executed").and_then(Value::as_bool) {
                    Some(ex) => {
                        s.record(&action, ex);
                    }
                    None => {
                        s.gate(&action);
                    }
                }
                if was {
                    assert_eq!(s.dtr().risk_level(), RiskLevel::Violated, "left VIOLATED");
                }
            }
        }
        store.commit().expect("journal write");
    }
    let _ = std::fs::remove_file(&path);
});
