//! Issue 22 class 3 for `augur mcp`: sessions survive a restart with `--state FILE`, burned
//! ids never reopen (also after the exact list rolls over), and sessions expire on time
//! (an expiry queue, not a throttled scan).

use augur_gate::Policy;
use augur_mcp::server::default_monitor;
use augur_mcp::{Config, ErrorKind, Server};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(harness: bool, state: Option<&Path>) -> Config {
    let mut cfg = Config::new(
        Arc::new(default_monitor().unwrap()),
        Arc::new(Policy::default()),
    );
    cfg.harness = harness;
    cfg.sessions.push(("main".into(), None));
    cfg.state = state.map(Path::to_path_buf);
    cfg
}

fn ok(s: &Server, tool: &str, args: Value) -> Value {
    match s.call(tool, Some(args)) {
        Ok(Ok(v)) => v,
        other => panic!("{tool}: {other:?}"),
    }
}

fn gate(s: &Server, id: &str, tool: &str, args: Value) -> Value {
    ok(
        s,
        "gate",
        json!({"session": id, "tool": tool, "args": args}),
    )
}

/// CRITICAL: the 5×5 chain's scripted session (crates/monitor/src/session/tests.rs).
fn walk_to_critical(s: &Server, id: &str) {
    for (tool, args) in [
        ("get_current_day", json!({})),
        ("get_iban", json!({})),
        ("execute_python", json!({"code": "1+1"})),
        ("get_webpage", json!({"url": "www.informations.com"})),
    ] {
        let d = gate(s, id, tool, args);
        assert!(d["verdict"] == "allow" || d["verdict"] == "warn", "{d}");
    }
    let d = gate(s, id, "send_money", json!({"recipient": "XX", "amount": 1}));
    assert_eq!(d["verdict"], "block", "{d}");
    assert_eq!(d["state_before"], "critical", "{d}");
}

/// A server dropped without any shutdown (the journal is written per call, nothing is left
/// to flush) and started again on the same journal: `main` is at CRITICAL with its counts,
/// its pending pause is still answerable, an ended id stays refused, and `--session main`
/// does not reset it.
#[test]
fn a_restarted_server_resumes_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("state.jsonl");
    let s = Server::new(config(true, Some(&journal))).unwrap();
    assert!(
        s.startup_message().contains("started a new state journal"),
        "{}",
        s.startup_message()
    );
    walk_to_critical(&s, "main");
    ok(&s, "open_session", json!({"session": "done"}));
    ok(&s, "end_session", json!({"session": "done"}));
    // A server-issued id: 128 random bits.
    let p = ok(&s, "open_session", json!({}))["session"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(p.len(), 2 + 32, "{p}");
    assert_eq!(gate(&s, &p, "get_iban", json!({}))["verdict"], "warn");
    drop(s);

    let s = Server::new(config(true, Some(&journal))).unwrap();
    let msg = s.startup_message().to_string();
    assert!(msg.contains("2 open sessions, 1 burned id"), "{msg}");
    let st = ok(&s, "session_state", json!({"session": "main"}));
    assert_eq!(
        (&st["state"], &st["steps"]),
        (&json!("critical"), &json!(5)),
        "{st}"
    );
    let d = gate(
        &s,
        "main",
        "send_money",
        json!({"recipient": "XX", "amount": 1}),
    );
    assert_eq!(
        (&d["verdict"], &d["state_before"]),
        (&json!("block"), &json!("critical"))
    );
    let d = gate(&s, "done", "get_current_day", json!({}));
    assert_eq!(
        (&d["verdict"], &d["refused"]),
        (&json!("block"), &json!("expired"))
    );
    let e = s
        .call("open_session", Some(json!({"session": "done"})))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
    let st = ok(&s, "session_state", json!({"session": p}));
    assert_eq!(
        (&st["state"], &st["steps"]),
        (&json!("mild"), &json!(1)),
        "{st}"
    );
}

/// A pause pending at the crash is still answerable after the restart, and a later pause
/// gets a new id.
#[test]
fn a_pending_pause_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("state.jsonl");
    let policy = "version = 1\nthresholds = [ { at = 0.95, verdict = \"block\" }, { at = 0.2, verdict = \"pause\" } ]\n";
    let cfg = || {
        let mut c = config(true, Some(&journal));
        c.policy = Arc::new(Policy::parse(policy, "policy.toml").unwrap());
        c
    };
    let s = Server::new(cfg()).unwrap();
    let d = gate(&s, "main", "read_file", json!({"path": "/workspace/.env"}));
    assert_eq!(d["verdict"], "pause", "{d}");
    let pid = d["pause_id"].as_str().unwrap().to_string();
    let projected = d["state"].clone();
    drop(s);
    let s = Server::new(cfg()).unwrap();
    let st = ok(&s, "session_state", json!({"session": "main"}));
    assert_eq!(st["pending_pause"]["pause_id"], pid.as_str(), "{st}");
    let r = ok(&s, "approve", json!({"session": "main", "pause_id": pid}));
    assert_eq!(
        (&r["changed"], &r["state"]),
        (&json!(true), &projected),
        "{r}"
    );
    let d = gate(&s, "main", "read_file", json!({"path": "/workspace/.env"}));
    assert_eq!(d["verdict"], "pause", "{d}");
    assert_ne!(d["pause_id"], pid.as_str(), "{d}");
}

/// The journal's last line cut by a crash: the complete lines are restored and the start-up
/// message says which line was dropped.
#[test]
fn a_cut_journal_restores_its_complete_lines() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("state.jsonl");
    let s = Server::new(config(false, Some(&journal))).unwrap();
    walk_to_critical(&s, "main");
    drop(s);
    let text = std::fs::read_to_string(&journal).unwrap();
    let body = text.trim_end_matches('\n');
    let last = body.rfind('\n').unwrap() + 1;
    std::fs::write(&journal, &text[..last + 10]).unwrap();
    let n = text[..last].lines().count() + 1;
    let s = Server::new(config(false, Some(&journal))).unwrap();
    let msg = s.startup_message();
    assert!(
        msg.contains(&format!("line {n} of {} was cut", journal.display())),
        "{msg}"
    );
    let st = ok(&s, "session_state", json!({"session": "main"}));
    assert_eq!(st["state"], "critical", "{st}");
}

/// A journal for another monitor, or the gate's journal, is refused: never a fresh start.
#[test]
fn a_journal_for_another_monitor_or_server_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("state.jsonl");
    let s = Server::new(config(false, Some(&journal))).unwrap();
    walk_to_critical(&s, "main");
    drop(s);
    let text = std::fs::read_to_string(&journal).unwrap();
    let hash = augur_gate::journal::monitor_hash(&default_monitor().unwrap());
    std::fs::write(&journal, text.replace(&hash, &"0".repeat(64))).unwrap();
    let e = Server::new(config(false, Some(&journal))).err().unwrap();
    assert!(e.message.contains("another monitor"), "{}", e.message);
    assert!(e.message.contains("state.jsonl:1:"), "{}", e.message);
    std::fs::write(
        &journal,
        text.replace("\"server\":\"mcp\"", "\"server\":\"gate\""),
    )
    .unwrap();
    let e = Server::new(config(false, Some(&journal))).err().unwrap();
    assert!(
        e.message.contains("written by `augur monitor gate`"),
        "{}",
        e.message
    );
}

/// Without a journal the start-up message says that a restart resets every session.
#[test]
fn without_a_journal_the_start_up_message_warns() {
    let s = Server::new(config(false, None)).unwrap();
    assert!(
        s.startup_message()
            .contains("a restart of this process resets every session"),
        "{}",
        s.startup_message()
    );
}

/// The exact list of burned ids holds max(4 × max_sessions, 4096); past it, the Bloom filter
/// keeps the oldest refused (main's code forgot them: the first id reopened at the safe state).
#[test]
fn a_burned_id_stays_refused_after_the_exact_list_rolls_over() {
    let mut cfg = config(true, None);
    cfg.max_sessions = 1;
    cfg.sessions.clear();
    let s = Server::new(cfg).unwrap();
    for i in 0..4200 {
        let id = format!("r{i}");
        ok(&s, "open_session", json!({"session": id}));
        ok(&s, "end_session", json!({"session": id}));
    }
    for id in ["r0", "r1", "r100"] {
        let e = s
            .call("open_session", Some(json!({"session": id})))
            .unwrap()
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused, "{id}");
        let d = gate(&s, id, "get_current_day", json!({}));
        assert_eq!(
            (&d["verdict"], &d["refused"]),
            (&json!("block"), &json!("expired")),
            "{id}"
        );
    }
}

/// A session expires as soon as it has been idle for longer than the ttl, on the next call
/// (main's code scanned at most once a second: a session could be used up to a second past
/// its expiry).
#[test]
fn a_session_expires_on_time() {
    let mut cfg = config(true, None);
    cfg.session_ttl = Duration::from_secs(10);
    cfg.sessions.push(("other".into(), None));
    let s = Server::new(cfg).unwrap();
    let t0 = Instant::now();
    let g = |id: &str, t: Instant| {
        s.call_at(
            "gate",
            Some(json!({"session": id, "tool": "get_current_day"})),
            t,
        )
        .unwrap()
        .unwrap()
    };
    assert_eq!(g("main", t0)["verdict"], "allow");
    // A call at 9.8 s (main's code swept then, and not again within a second).
    assert_eq!(
        g("other", t0 + Duration::from_millis(9_800))["verdict"],
        "allow"
    );
    let d = g("main", t0 + Duration::from_millis(10_500));
    assert_eq!(
        (&d["verdict"], &d["refused"]),
        (&json!("block"), &json!("expired")),
        "{d}"
    );
    // "other" was used at 9.8 s: open until 19.8 s.
    assert_eq!(
        g("other", t0 + Duration::from_millis(19_000))["verdict"],
        "allow"
    );
}

/// A `--session main` that the journal holds as ended stays refused after a restart (the
/// start-up message says so): the command line cannot reopen it at the safe state.
#[test]
fn a_session_on_the_command_line_that_the_journal_burned_stays_refused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("state.jsonl");
    let s = Server::new(config(true, Some(&journal))).unwrap();
    gate(&s, "main", "get_iban", json!({}));
    ok(&s, "end_session", json!({"session": "main"}));
    drop(s);
    let s = Server::new(config(true, Some(&journal))).unwrap();
    assert!(
        s.startup_message()
            .contains("--session main: the journal holds it as ended or expired"),
        "{}",
        s.startup_message()
    );
    let d = gate(&s, "main", "get_current_day", json!({}));
    assert_eq!(
        (&d["verdict"], &d["refused"]),
        (&json!("block"), &json!("expired")),
        "{d}"
    );
}
