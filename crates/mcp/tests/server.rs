//! The MCP server's tools in-process: decisions, the session rules that keep the monitor on,
//! the checker tools, limits and errors. (The stdio protocol: tests/stdio.rs over in-memory
//! pipes; with a real client, tests/python/test_mcp_stdio.py, run by scripts/test.)

use augur_gate::Policy;
use augur_mcp::server::default_monitor;
use augur_mcp::{CallError, Config, ErrorKind, Server};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn config(harness: bool, policy: Option<&str>) -> Config {
    let policy = match policy {
        Some(p) => Policy::parse(p, "policy.toml").unwrap(),
        None => Policy::default(),
    };
    let mut cfg = Config::new(Arc::new(default_monitor().unwrap()), Arc::new(policy));
    cfg.harness = harness;
    cfg.sessions.push(("run".into(), None));
    cfg
}

fn ok(s: &Server, tool: &str, args: Value) -> Value {
    match s.call(tool, Some(args)) {
        Ok(Ok(v)) => v,
        other => panic!("{tool}: {other:?}"),
    }
}

fn err(s: &Server, tool: &str, args: Value) -> augur_mcp::ToolError {
    match s.call(tool, Some(args)) {
        Ok(Err(e)) => e,
        other => panic!("{tool}: expected a tool error, got {other:?}"),
    }
}

/// P(F≤5 violated) from each state of models/safetydrift.tra, by squaring the matrix here
/// (independently of the checker): [P⁵]_{i,4}.
fn p5() -> Vec<f64> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/safetydrift.tra"
    ))
    .unwrap();
    let mut m = [[0.0f64; 5]; 5];
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        m[f[0].parse::<usize>().unwrap()][f[1].parse::<usize>().unwrap()] = f[2].parse().unwrap();
    }
    let mut acc = m;
    for _ in 1..5 {
        let mut next = [[0.0; 5]; 5];
        for i in 0..5 {
            for j in 0..5 {
                next[i][j] = (0..5).map(|k| acc[i][k] * m[k][j]).sum();
            }
        }
        acc = next;
    }
    (0..5).map(|i| acc[i][4]).collect()
}

fn gate(s: &Server, tool: &str, args: Value) -> Value {
    ok(
        s,
        "gate",
        json!({"session": "run", "tool": tool, "args": args}),
    )
}

#[test]
fn a_scripted_session_goes_allow_warn_block_with_the_chains_probabilities() {
    let s = Server::new(config(false, None)).unwrap();
    let p = p5();
    let d = gate(&s, "read_file", json!({"path": "/workspace/customers.csv"}));
    assert_eq!(d["verdict"], "allow", "{d}");
    let d = gate(&s, "read_file", json!({"path": "/workspace/.env"}));
    assert_eq!(d["verdict"], "warn", "{d}");
    let state = d["state"].as_str().unwrap().to_string();
    // The probability is the chain's value in the projected state.
    let names = ["safe", "mild", "elevated", "critical", "violated"];
    let i = names
        .iter()
        .position(|n| state.eq_ignore_ascii_case(n))
        .unwrap();
    assert!(
        (d["probability"].as_f64().unwrap() - p[i]).abs() < 1e-9,
        "{d} vs {}",
        p[i]
    );
    let d = gate(
        &s,
        "write_file",
        json!({"path": "/tmp/summary.txt", "content": "..."}),
    );
    assert_eq!(d["verdict"], "warn");
    // OpenAI-style arguments as a JSON string.
    let d = ok(
        &s,
        "gate",
        json!({"session": "run", "tool": "send_email", "args": "{\"recipients\": [\"mark.black@gmail.com\"], \"body\": \"x\"}"}),
    );
    assert_eq!(d["verdict"], "block");
    assert_eq!(d["probability"], 1.0);
    assert!(d["reason"].as_str().unwrap().contains("send_email"), "{d}");
    let sum = ok(&s, "summary", json!({"session": "run"}));
    assert_eq!(
        (&sum["steps"], &sum["allow"], &sum["warn"], &sum["block"]),
        (&json!(4), &json!(1), &json!(2), &json!(1))
    );
    let st = ok(&s, "session_state", json!({"session": "run"}));
    assert_eq!(st["steps"], 4);
}

#[test]
fn unknown_and_expired_sessions_are_blocked_never_restarted() {
    let mut cfg = config(true, None);
    cfg.session_ttl = Duration::from_secs(60);
    let s = Server::new(cfg).unwrap();
    let d = ok(
        &s,
        "gate",
        json!({"session": "other", "tool": "read_file", "args": {"path": "a.txt"}}),
    );
    assert_eq!(d["verdict"], "block");
    assert_eq!(d["refused"], "unknown");
    // Still unknown: a gate does not open it.
    assert_eq!(s.open_sessions(), 1);
    assert_eq!(
        err(&s, "summary", json!({"session": "other"})).kind,
        ErrorKind::Refused
    );

    let t0 = Instant::now();
    let args = json!({"session": "run", "tool": "read_file", "args": {"path": "a.txt"}});
    assert_eq!(
        s.call_at("gate", Some(args.clone()), t0).unwrap().unwrap()["verdict"],
        "allow"
    );
    let later = t0 + Duration::from_secs(120);
    let d = s
        .call_at("gate", Some(args.clone()), later)
        .unwrap()
        .unwrap();
    assert_eq!(
        (&d["verdict"], &d["refused"]),
        (&json!("block"), &json!("expired"))
    );
    // The harness cannot reopen an expired id either: ids are not reused.
    let e = s
        .call_at("open_session", Some(json!({"session": "run"})), later)
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
}

#[test]
fn at_the_maximum_new_sessions_are_refused_and_open_ones_kept() {
    let mut cfg = config(true, None);
    cfg.max_sessions = 3;
    let s = Server::new(cfg).unwrap();
    let a = ok(&s, "open_session", json!({}))["session"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&s, "open_session", json!({"session": "b"}));
    let e = err(&s, "open_session", json!({"session": "c"}));
    assert_eq!(e.kind, ErrorKind::Refused);
    assert!(e.message.contains("maximum of 3"), "{}", e.message);
    for id in ["run", a.as_str(), "b"] {
        let d = ok(
            &s,
            "gate",
            json!({"session": id, "tool": "read_file", "args": {"path": "x"}}),
        );
        assert_eq!(d["verdict"], "allow", "{id}: {d}");
    }
    ok(&s, "end_session", json!({"session": "b"}));
    ok(&s, "open_session", json!({"session": "c"}));
    let d = ok(&s, "gate", json!({"session": "b", "tool": "read_file"}));
    assert_eq!(d["refused"], "expired");
}

#[test]
fn the_agent_cannot_switch_the_monitor_off() {
    let s = Server::new(config(false, None)).unwrap();
    let names: Vec<&str> = s.tools().map(|t| t.name).collect();
    for t in ["reset", "approve", "deny", "open_session", "end_session"] {
        assert!(!names.contains(&t), "{t} listed without --harness");
        let e = err(&s, t, json!({"session": "run", "pause_id": "pause-1"}));
        assert_eq!(e.kind, ErrorKind::Refused, "{t}");
        assert!(e.message.contains("harness-only"), "{}", e.message);
    }
    gate(&s, "read_file", json!({"path": "/workspace/.env"}));
    let before = ok(&s, "session_state", json!({"session": "run"}))["state"].clone();
    let e = err(
        &s,
        "record",
        json!({"session": "run", "tool": "read_file", "args": {"path": "/workspace/.env"}, "executed": false}),
    );
    assert!(e.message.contains("harness-only"), "{}", e.message);
    assert_eq!(
        ok(&s, "session_state", json!({"session": "run"}))["state"],
        before
    );
    assert_ne!(before, "safe");
}

#[test]
fn a_pause_carries_an_id_that_the_harness_approves_or_denies() {
    let policy = "version = 1\nthresholds = [ { at = 0.95, verdict = \"block\" }, { at = 0.2, verdict = \"pause\" } ]\n";
    let s = Server::new(config(true, Some(policy))).unwrap();
    let d = gate(&s, "read_file", json!({"path": "/workspace/.env"}));
    assert_eq!(d["verdict"], "pause", "{d}");
    let pid = d["pause_id"].as_str().unwrap().to_string();
    assert_eq!(d["advanced"], false);
    let st = ok(&s, "session_state", json!({"session": "run"}));
    assert_eq!(st["pending_pause"]["pause_id"], pid.as_str());
    let projected = d["state"].clone();
    // Denied: the session stays.
    let r = ok(&s, "deny", json!({"session": "run", "pause_id": pid}));
    assert_eq!(r["changed"], false);
    assert_eq!(r["state"], "safe");
    assert_eq!(
        err(&s, "approve", json!({"session": "run", "pause_id": pid})).kind,
        ErrorKind::Refused
    );
    // Approved: the session moves to the projected state.
    let d = gate(&s, "read_file", json!({"path": "/workspace/.env"}));
    let pid = d["pause_id"].as_str().unwrap().to_string();
    let r = ok(&s, "approve", json!({"session": "run", "pause_id": pid}));
    assert_eq!((&r["changed"], &r["state"]), (&json!(true), &projected));
    ok(&s, "reset", json!({"session": "run"}));
    assert_eq!(
        ok(&s, "session_state", json!({"session": "run"}))["state"],
        "safe"
    );
}

#[test]
fn malformed_calls_are_errors_and_the_server_keeps_serving() {
    let s = Server::new(config(false, None)).unwrap();
    assert_eq!(
        s.call("no_such_tool", None).unwrap_err(),
        CallError::UnknownTool("no_such_tool".into())
    );
    assert!(matches!(
        s.call("gate", Some(json!([1, 2]))),
        Err(CallError::NotAnObject(_))
    ));
    assert_eq!(err(&s, "gate", json!({"tool": "x"})).kind, ErrorKind::Param);
    assert_eq!(
        err(&s, "gate", json!({"session": 3, "tool": "x"})).kind,
        ErrorKind::Param
    );
    assert_eq!(
        err(
            &s,
            "gate",
            json!({"session": "run", "tool": "x", "bogus": 1})
        )
        .kind,
        ErrorKind::Param
    );
    assert_eq!(
        err(
            &s,
            "gate",
            json!({"session": "run", "tool": "x", "args": "{not json"})
        )
        .kind,
        ErrorKind::Param
    );
    assert_eq!(
        err(&s, "check", json!({"properties": ["P=? [ F \"a\" ]"]})).kind,
        ErrorKind::Param
    );
    assert_eq!(
        gate(&s, "read_file", json!({"path": "x"}))["verdict"],
        "allow"
    );
}

const COIN: &str = "dtmc\nconst double p;\nmodule coin\n  x : [0..2] init 0;\n  [] x=0 -> p : (x'=1) + (1-p) : (x'=2);\n  [] x>0 -> true;\nendmodule\nlabel \"heads\" = x=1;\n";

#[test]
fn check_gives_the_json_of_augur_check() {
    let s = Server::new(config(false, None)).unwrap();
    let r = ok(
        &s,
        "check",
        json!({"model_text": COIN, "properties": ["\"h\": P=? [ F \"heads\" ]", "P>=0.3 [ F x=2 ]"], "constants": {"p": 0.25}}),
    );
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["model"]["states"], 3);
    assert_eq!(r["results"][0]["name"], "h");
    assert_eq!(r["results"][0]["value"], 0.25);
    assert_eq!(r["results"][1]["value"], true);
    let r = ok(
        &s,
        "check",
        json!({"model_text": COIN, "properties": ["P=? [ F \"heads\" ]"], "constants": "p=0.5", "all_states": true}),
    );
    assert_eq!(r["results"][0]["states"], json!([0.5, 1.0, 0.0]));
}

#[test]
fn model_and_property_errors_are_tool_errors_with_the_located_message() {
    let s = Server::new(config(false, None)).unwrap();
    let e = err(
        &s,
        "check",
        json!({"model_text": COIN, "properties": ["P=? [ F \"heads\" "], "constants": "p=0.5"}),
    );
    assert_eq!(e.kind, ErrorKind::Parse);
    let loc = e.location.as_ref().unwrap();
    assert_eq!((loc.file.as_str(), loc.line), ("property 1", 1));
    assert!(e.message.contains('^'), "{}", e.message);
    let bad = COIN.replace("(x'=2)", "(x'=)");
    let e = err(
        &s,
        "check",
        json!({"model_text": bad, "properties": ["P=? [ F \"heads\" ]"], "constants": "p=0.5"}),
    );
    assert_eq!(e.kind, ErrorKind::Parse);
    assert_eq!(e.location.as_ref().unwrap().file, "model_text");
    assert_eq!(e.location.as_ref().unwrap().line, 5);
    let e = err(
        &s,
        "check",
        json!({"model_text": COIN, "properties": ["P=? [ F \"tails\" ]"], "constants": "p=0.5"}),
    );
    assert!(e.message.contains("tails"), "{}", e.message);
}

#[test]
fn files_are_read_only_under_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("coin.pm"), COIN).unwrap();
    std::fs::write(dir.path().join("secret.pm"), "top secret\n").unwrap();
    let no_root = Server::new(config(false, None)).unwrap();
    let e = err(
        &no_root,
        "check",
        json!({"model_path": "coin.pm", "properties": ["P=? [ F \"heads\" ]"]}),
    );
    assert_eq!(e.kind, ErrorKind::Refused);
    let mut cfg = config(false, None);
    cfg.root = Some(root.clone());
    let s = Server::new(cfg).unwrap();
    let r = ok(
        &s,
        "check",
        json!({"model_path": "coin.pm", "properties": ["P=? [ F \"heads\" ]"], "constants": "p=0.125"}),
    );
    assert_eq!(r["results"][0]["value"], 0.125);
    let outside = dir.path().join("secret.pm").display().to_string();
    for p in ["../secret.pm", outside.as_str()] {
        let e = err(
            &s,
            "check",
            json!({"model_path": p, "properties": ["P=? [ F \"heads\" ]"]}),
        );
        assert_eq!(e.kind, ErrorKind::Refused, "{p}: {}", e.message);
        assert!(!e.message.contains("top secret"));
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("secret.pm"), root.join("link.pm")).unwrap();
        let e = err(
            &s,
            "check",
            json!({"model_path": "link.pm", "properties": ["P=? [ F \"heads\" ]"]}),
        );
        assert_eq!(e.kind, ErrorKind::Refused);
        assert!(!e.message.contains("top secret"));
    }
}

/// Issue 22: the companions of an explicit model (`.lab`, `.srew`, `.trew`, `.sta`) go
/// through the root check too. A `.tra` under the root whose `.lab` is a link to a file outside
/// is refused, and the error shows neither the outside path nor its contents (before, the
/// link was followed and the outside file's first line was quoted in the parse error).
#[cfg(unix)]
#[test]
fn companion_files_stay_under_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let secret = dir.path().join("passwd");
    std::fs::write(&secret, "root:x:0:0:top secret:/root:/bin/sh\n").unwrap();
    let tra = "2 2\n0 1 1\n1 1 1\n";
    let lab = "0=\"init\" 1=\"goal\"\n0: 0\n1: 1\n";
    std::fs::write(root.join("m.tra"), tra).unwrap();
    std::fs::write(root.join("m.lab"), lab).unwrap();
    let mut cfg = config(false, None);
    cfg.root = Some(root.clone());
    let s = Server::new(cfg).unwrap();
    let prop = json!(["P=? [ F \"goal\" ]"]);
    // The companion inside the root is read.
    let r = ok(
        &s,
        "check",
        json!({"model_path": "m.tra", "properties": prop}),
    );
    assert_eq!(r["results"][0]["value"], 1.0);
    // A malformed one inside the root is named relative to it.
    std::fs::write(root.join("bad.tra"), tra).unwrap();
    std::fs::write(root.join("bad.lab"), "0=\"init\"\nx: 0\n").unwrap();
    let e = err(
        &s,
        "check",
        json!({"model_path": "bad.tra", "properties": prop}),
    );
    assert_eq!(e.kind, ErrorKind::Parse, "{}", e.message);
    assert!(e.message.contains("bad.lab:2:"), "{}", e.message);
    assert!(
        !e.message.contains(dir.path().to_str().unwrap()),
        "{}",
        e.message
    );
    assert_eq!(e.location.as_ref().unwrap().file, "bad.lab");
    for ext in ["lab", "srew", "trew", "sta"] {
        let name = format!("l{ext}");
        std::fs::write(root.join(format!("{name}.tra")), tra).unwrap();
        if ext != "lab" {
            std::fs::write(root.join(format!("{name}.lab")), lab).unwrap();
        }
        std::os::unix::fs::symlink(&secret, root.join(format!("{name}.{ext}"))).unwrap();
        let e = err(
            &s,
            "check",
            json!({"model_path": format!("{name}.tra"), "properties": prop}),
        );
        assert_eq!(e.kind, ErrorKind::Refused, "{ext}: {}", e.message);
        assert!(
            e.message.contains(&format!("{name}.{ext}")),
            "{}",
            e.message
        );
        let shown = secret.display().to_string();
        for leak in [
            "top secret",
            "root:x",
            "passwd",
            shown.as_str(),
            dir.path().to_str().unwrap(),
        ] {
            assert!(!e.message.contains(leak), "{ext}: {leak} in {}", e.message);
        }
    }
}

#[test]
fn every_request_runs_under_the_limits() {
    let mut cfg = config(false, None);
    cfg.max_states = 1000;
    let s = Server::new(cfg).unwrap();
    let big = "dtmc\nmodule m\n  x : [0..100000] init 0;\n  [] x<100000 -> 0.5 : (x'=x+1) + 0.5 : (x'=0);\n  [] x=100000 -> true;\nendmodule\n";
    let e = err(
        &s,
        "check",
        json!({"model_text": big, "properties": ["P=? [ F x=100000 ]"]}),
    );
    assert_eq!(e.kind, ErrorKind::Limit, "{}", e.message);
    assert!(e.message.contains("state limit"), "{}", e.message);
    let e = err(
        &s,
        "horizon",
        json!({"model_text": COIN, "target": "heads", "max": 1_000_000, "constants": "p=0.5"}),
    );
    assert_eq!(e.kind, ErrorKind::Param);
}

#[test]
fn a_learned_model_past_the_smoothed_transition_limit_is_refused() {
    // Three states, every row smoothed over all three (alpha = 1): 9 transitions. Row 0 saw
    // 0 -> 1 once, so P(0 -> 1) = (1 + 1) / (1 + 3) = 1/2.
    let learned = json!({
        "states": 3, "initial": [0],
        "smoothing": {"alpha": 1.0, "unobserved": "uniform",
                      "successor_sets": ["all"], "successors": [0, 0, 0]},
        "counts": {"num_states": 3, "traces": 1, "steps": 1,
                   "initial": [[0, 1]], "transitions": [[0, 1, 1]]},
        "labels": {"b": [1]}
    })
    .to_string();
    let args = json!({"model_text": learned, "format": "json", "properties": ["P=? [ X \"b\" ]"]});
    let mut cfg = config(false, None);
    cfg.max_smoothed_transitions = 8;
    let e = err(&Server::new(cfg).unwrap(), "check", args.clone());
    assert!(
        e.message
            .contains("9 transitions, more than the limit of 8"),
        "{}",
        e.message
    );
    let r = ok(&Server::new(config(false, None)).unwrap(), "check", args);
    assert_eq!(r["results"][0]["value"], 0.5, "{r}");
}

#[test]
fn horizon_and_pac() {
    let s = Server::new(config(false, None)).unwrap();
    // P(F<=h x=2) in a chain that moves 0 -> 1 -> 2 with probability 1/2 per step at state 0.
    let m = "dtmc\nmodule m\n  x : [0..1] init 0;\n  [] x=0 -> 0.5 : (x'=1) + 0.5 : (x'=0);\n  [] x=1 -> true;\nendmodule\nlabel \"done\" = x=1;\n";
    let r = ok(
        &s,
        "horizon",
        json!({"model_text": m, "target": "done", "max": 4}),
    );
    let curve: Vec<f64> = r["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (h, v) in curve.iter().enumerate() {
        assert!(
            (v - (1.0 - 0.5f64.powi(h as i32 + 1))).abs() < 1e-12,
            "{curve:?}"
        );
    }
    // Calculator: Hoeffding ln(2/δ')/(2ε²) with m = 1, ε = 0.1, δ = 0.05.
    let r = ok(
        &s,
        "pac",
        json!({"states": 1, "epsilon": 0.1, "delta": 0.05, "hoeffding": true, "observations": 100}),
    );
    let expect = (2.0f64 / 0.05).ln() / (2.0 * 0.01);
    assert!((r["required_exact"].as_f64().unwrap() - expect).abs() < 1e-9);
    assert_eq!(r["holds"], false);
    let e = err(
        &s,
        "pac",
        json!({"states": 1, "epsilon": 2.0, "delta": 0.05}),
    );
    assert_eq!(e.kind, ErrorKind::Param);
}

/// `explain`: the most probable paths of a chain derived by hand, the counterexample's size,
/// the subsystem's PRISM text (which `check` confirms) and DOT, and located errors.
#[test]
fn explain_tool() {
    let s = Server::new(config(false, None)).unwrap();
    assert!(s.tools().any(|t| t.name == "explain"));
    // 0 loops with 1/2, reaches "goal" with 3/10: the k-th path 0^k 1 has (1/2)^k · 3/10.
    let m = "dtmc\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> 0.5:(s'=0) + 0.3:(s'=1) + 0.2:(s'=2);\n  [] s>0 -> true;\nendmodule\nlabel \"goal\" = s=1;\n";
    let r = ok(
        &s,
        "explain",
        json!({"model_text": m, "property": "P<=0.5 [ F \"goal\" ]", "paths": 3, "subsystem": "minimal", "prism": true, "dot": true}),
    );
    let probs: Vec<f64> = r["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["probability"].as_f64().unwrap())
        .collect();
    assert_eq!(probs, vec![0.3, 0.15, 0.075]);
    assert_eq!(r["paths_to_exceed"], 3);
    assert_eq!(r["subsystem"]["size"], 2);
    assert!(r["dot"].as_str().unwrap().starts_with("digraph"));
    let sub = r["subsystem_model"].as_str().unwrap();
    let c = ok(
        &s,
        "check",
        json!({"model_text": sub, "properties": ["P<=0.5 [ F \"goal\" ]"]}),
    );
    assert_eq!(c["results"][0]["value"], false, "{c}");
    // A lower bound cannot be explained by paths: a located error.
    let e = err(
        &s,
        "explain",
        json!({"model_text": m, "property": "P>=0.5 [ F \"goal\" ]"}),
    );
    assert_eq!(e.kind, ErrorKind::Parse, "{}", e.message);
    assert_eq!(e.location.unwrap().column, 1);
    let e = err(
        &s,
        "explain",
        json!({"model_text": m, "property": "P<=0.5 [ F \"goal\" ]", "subsystem": "best"}),
    );
    assert_eq!(e.kind, ErrorKind::Param);
}
