//! The MCP request loop with sessions and a state journal (issue 22, class 3): JSON lines
//! `{"name": TOOL, "arguments": ...}` are calls to a harness-mode `augur_mcp::Server`
//! (`--session main`, at most 4 sessions); a line `restart` drops the server and starts a new
//! one on the same journal. Findings: a panic; a server that cannot start on its own journal;
//! a session whose state or step count differs after the restart; a gate on an ended id that
//! is not refused.
#![no_main]
use augur_mcp::{Config, Server};
use augur_gate::{Monitor, Policy};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

fn monitor() -> Arc<Monitor> {
    static M: OnceLock<Arc<Monitor>> = OnceLock::new();
    M.get_or_init(|| Arc::new(augur_mcp::server::default_monitor().expect("built-in monitor")))
        .clone()
}

fn states(s: &Server, ids: &HashSet<String>) -> BTreeMap<String, Value> {
    ids.iter()
        .filter_map(|id| {
            let v = s.call("session_state", Some(json!({"session": id}))).ok()?.ok()?;
            Some((id.clone(), json!([v["state"], v["steps"], v["dtr"], v["pending_pause"]])))
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("augur-fuzz-mcp-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let config = || {
        let mut c = Config::new(monitor(), Arc::new(Policy::default()));
        c.harness = true;
        c.max_sessions = 4;
        c.burned_bits = 4096;
        c.sessions.push(("main".into(), None));
        c.state = Some(path.clone());
        c
    };
    let mut server = Server::new(config()).expect("a new journal");
    let mut seen: HashSet<String> = HashSet::from(["main".to_string()]);
    let mut ended: HashSet<String> = HashSet::new();
    for line in data.split(|&b| b == b'\n') {
        if line == b"restart" {
            let before = states(&server, &seen);
            drop(server);
            server = Server::new(config()).expect("the server's own journal reads back");
            assert_eq!(before, states(&server, &seen), "a restart changed the sessions");
            continue;
        }
        let Ok(Value::Object(m)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let Some(name) = m.get("name").and_then(Value::as_str) else {
            continue;
        };
        if matches!(name, "check" | "horizon" | "pac") {
            continue;
        }
        let args = m.get("arguments").cloned();
        let id = args
            .as_ref()
            .and_then(|a| a.get("session"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let out = server.call(name, args);
        if let (Some(id), Ok(Ok(v))) = (&id, &out) {
            seen.insert(id.clone());
            if name == "end_session" {
                ended.insert(id.clone());
            }
            if let Some(s) = v.get("session").and_then(Value::as_str) {
                seen.insert(s.to_string());
            }
            if name == "gate" && ended.contains(id) {
                assert_eq!(v["verdict"], "block", "an ended id was not refused");
            }
        }
        if let Ok(Ok(v)) = &out {
            if let Some(s) = v.get("session").and_then(Value::as_str) {
                seen.insert(s.to_string());
            }
        }
    }
    let _ = std::fs::remove_file(&path);
});
