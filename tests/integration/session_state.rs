//! Issue 22 class 3: sessions survive restarts and never reopen. `monitor gate --state FILE`
//! journals every session move and burned id; a gate killed with SIGKILL (no chance to clean
//! up) and started again with the same journal resumes every session where it was, keeps
//! burned ids refused, restores every complete line of a journal cut by the crash, and refuses
//! (located error, exit 1) a journal written for another monitor or one that is not a journal.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use crate::util;

fn compile(dir: &Path, name: &str, bound: u32) -> PathBuf {
    let out = dir.join(name);
    let prop = format!("P=? [ F<={bound} \"violated\" ]");
    let o = util::augur(&[
        "monitor",
        "compile",
        "models/safetydrift.tra",
        "--prop",
        &prop,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// A running `augur monitor gate`, driven line by line.
struct Gate {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Gate {
    fn start(dir: &Path, m: &Path, extra: &[&str]) -> Gate {
        let mut child = util::cmd()
            .current_dir(dir)
            .args([
                "monitor",
                "gate",
                "--monitor",
                m.to_str().unwrap(),
                "--state",
                "state.jsonl",
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Gate {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) -> Value {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut out = String::new();
        self.stdout.read_line(&mut out).unwrap();
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?}"))
    }

    fn gate(&mut self, session: &str, tool: &str) -> Value {
        let args = match tool {
            "execute_python" => r#"{"code": "1+1"}"#,
            "get_webpage" => r#"{"url": "www.informations.com"}"#,
            "send_money" => r#"{"recipient": "XX", "amount": 1}"#,
            _ => "{}",
        };
        self.send(&format!(
            "{{\"session\": \"{session}\", \"tool\": \"{tool}\", \"args\": {args}}}"
        ))
    }

    /// SIGKILL: no destructor, no flush, no goodbye.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// The session walks SAFE → MILD → ELEVATED → CRITICAL (the 5×5 matrix's scripted session,
/// crates/monitor/src/session/tests.rs), then send_money is blocked (it would be VIOLATED).
fn walk_to_critical(g: &mut Gate, id: &str) {
    for (tool, verdict) in [
        ("get_current_day", "allow"),
        ("get_iban", "warn"),
        ("execute_python", "warn"),
        ("get_webpage", "warn"),
    ] {
        let d = g.gate(id, tool);
        assert_eq!(d["verdict"], verdict, "{d}");
    }
    let d = g.gate(id, "send_money");
    assert_eq!(d["verdict"], "block", "{d}");
    assert_eq!(d["state_before"], "critical", "{d}");
}

/// Gate a session to block, kill the gate, start it again on the same journal: the same id
/// is still at CRITICAL with its step count, and send_money is still blocked; a
/// fresh gate (no journal) would have started it at SAFE.
#[test]
fn a_killed_gate_resumes_its_sessions_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile(dir.path(), "m.json", 5);
    let mut g = Gate::start(dir.path(), &m, &[]);
    walk_to_critical(&mut g, "a");
    let fresh = g.gate("b", "send_money");
    assert_eq!(fresh["state_before"], "safe", "{fresh}");
    g.kill();

    let mut g = Gate::start(dir.path(), &m, &[]);
    let d = g.gate("a", "send_money");
    assert_eq!(d["verdict"], "block", "{d}");
    assert_eq!(d["state_before"], "critical", "{d}");
    assert_eq!(d["step"], 5, "{d}");
    // An approved action recorded after the restart moves the restored session on: VIOLATED.
    let r = g.send(
        r#"{"session": "a", "record": {"tool": "send_money", "args": {"recipient": "XX", "amount": 1}}, "executed": true}"#,
    );
    assert_eq!(r["state"], "violated", "{r}");
    g.kill();

    // VIOLATED survives a second crash and stays absorbing.
    let mut g = Gate::start(dir.path(), &m, &[]);
    let d = g.gate("a", "get_current_day");
    assert_eq!(d["state_before"], "violated", "{d}");
    assert_eq!(d["verdict"], "block", "{d}");
    g.kill();
}

/// An evicted (burned) id stays refused after a crash and a restart.
#[test]
fn a_burned_id_stays_refused_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile(dir.path(), "m.json", 5);
    let mut g = Gate::start(dir.path(), &m, &["--max-sessions", "1"]);
    assert_eq!(g.gate("old", "get_iban")["verdict"], "warn");
    // Opening "new" evicts "old" (capacity 1): its id is burned.
    assert_eq!(g.gate("new", "get_current_day")["verdict"], "allow");
    let d = g.gate("old", "get_current_day");
    assert_eq!(d["verdict"], "block", "{d}");
    g.kill();

    let mut g = Gate::start(dir.path(), &m, &["--max-sessions", "1"]);
    let d = g.gate("old", "get_current_day");
    assert_eq!(d["verdict"], "block", "{d}");
    assert!(
        d["rule"].as_str().unwrap().contains("session_closed"),
        "{d}"
    );
    // The open one came back open.
    let d = g.gate("new", "get_current_day");
    assert_eq!(
        (&d["verdict"], &d["step"]),
        (&"allow".into(), &1.into()),
        "{d}"
    );
    g.kill();
}

fn restart_stderr(dir: &Path, m: &Path) -> (Option<i32>, String) {
    let o = util::cmd()
        .current_dir(dir)
        .args([
            "monitor",
            "gate",
            "--monitor",
            m.to_str().unwrap(),
            "--state",
            "state.jsonl",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A journal whose last line was cut by a crash: every complete line is restored, the cut one
/// dropped, and the start-up message says both.
#[test]
fn a_journal_cut_mid_line_restores_every_complete_line() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile(dir.path(), "m.json", 5);
    let mut g = Gate::start(dir.path(), &m, &[]);
    walk_to_critical(&mut g, "a");
    g.kill();
    let journal = dir.path().join("state.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    // Cut the last complete line in half, as a crash in the middle of its write would.
    let body = text.trim_end_matches('\n');
    let last_start = body.rfind('\n').unwrap() + 1;
    let cut = &text[..last_start + (body.len() - last_start) / 2];
    std::fs::write(&journal, cut).unwrap();
    let lines = cut.lines().count();

    let (code, err) = restart_stderr(dir.path(), &m);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("1 open session"), "{err}");
    assert!(
        err.contains(&format!("line {lines} of state.jsonl was cut by a crash")),
        "{err}"
    );
    // The last line was send_money's (blocked: the session did not move): the session is
    // at CRITICAL from the line before it.
    let mut g = Gate::start(dir.path(), &m, &[]);
    let d = g.gate("a", "send_money");
    assert_eq!(d["state_before"], "critical", "{d}");
    g.kill();
}

/// The stderr of a gate refused at start, with the temporary folder's monitor hashes kept
/// (they are the monitor's content).
fn refused(dir: &Path, m: &Path) -> String {
    let (code, err) = restart_stderr(dir, m);
    assert_eq!(code, Some(1), "{err}");
    err
}

/// A journal written for another monitor is refused (exit 1, located at its header), never
/// a silent start from the safe state.
#[test]
fn a_journal_for_another_monitor_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m5 = compile(dir.path(), "m5.json", 5);
    let m3 = compile(dir.path(), "m3.json", 3);
    let mut g = Gate::start(dir.path(), &m5, &[]);
    walk_to_critical(&mut g, "a");
    g.kill();
    insta::assert_snapshot!(refused(dir.path(), &m3));
    // The journal is untouched: the monitor it belongs to still resumes it.
    let mut g = Gate::start(dir.path(), &m5, &[]);
    assert_eq!(g.gate("a", "send_money")["state_before"], "critical");
    g.kill();
}

/// A file that is not a journal, another server's journal and a corrupt line are located
/// errors, never a start from the safe state.
#[test]
fn a_foreign_or_corrupt_journal_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile(dir.path(), "m.json", 5);
    let journal = dir.path().join("state.jsonl");
    std::fs::write(&journal, "session a was at CRITICAL\n").unwrap();
    insta::assert_snapshot!("foreign_file", refused(dir.path(), &m));

    std::fs::remove_file(&journal).unwrap();
    let mut g = Gate::start(dir.path(), &m, &[]);
    walk_to_critical(&mut g, "a");
    g.kill();
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Another server's journal.
    let header = lines[0].replace("\"server\":\"gate\"", "\"server\":\"mcp\"");
    std::fs::write(&journal, format!("{header}\n{}\n", lines[1..].join("\n"))).unwrap();
    let err = refused(dir.path(), &m);
    assert!(err.contains("written by `augur mcp`"), "{err}");
    assert!(err.contains("state.jsonl:1:"), "{err}");
    // A session whose model state is out of the table.
    let i = lines.len() - 1;
    lines[i] = lines[i].replace("\"state\":3", "\"state\":7");
    std::fs::write(&journal, format!("{}\n", lines.join("\n"))).unwrap();
    let err = refused(dir.path(), &m);
    assert!(err.contains(&format!("state.jsonl:{}", i + 1)), "{err}");
    assert!(err.contains("out of range"), "{err}");
    // A line that is not an entry.
    lines[i] = "{\"op\": \"teleport\", \"id\": \"a\"}".into();
    std::fs::write(&journal, format!("{}\n", lines.join("\n"))).unwrap();
    insta::assert_snapshot!("bad_entry", refused(dir.path(), &m));
}

/// Without --state the start-up message says that a restart resets every session; with it,
/// which journal was restored and how many sessions and burned ids it held.
#[test]
fn the_start_up_message_says_what_a_restart_does() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile(dir.path(), "m.json", 5);
    let o = util::cmd()
        .args(["monitor", "gate", "--monitor", m.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("a restart of this process resets every session"),
        "{err}"
    );
    let (_, err) = restart_stderr(dir.path(), &m);
    assert!(
        err.contains("started a new state journal state.jsonl"),
        "{err}"
    );
    let mut g = Gate::start(dir.path(), &m, &["--max-sessions", "1"]);
    g.gate("x", "get_iban");
    g.gate("y", "get_iban");
    g.kill();
    let (_, err) = restart_stderr(dir.path(), &m);
    assert!(
        err.contains("restored the state journal state.jsonl: 1 open session, 1 burned id"),
        "{err}"
    );
}

/// A running `augur mcp`, driven over stdio (JSON-RPC lines).
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(dir: &Path) -> Mcp {
        let mut child = util::cmd()
            .current_dir(dir)
            .args(["mcp", "--session", "main", "--state", "state.jsonl"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut m = Mcp {
            child,
            stdin,
            stdout,
            next: 1,
        };
        m.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        writeln!(
            m.stdin,
            r#"{{"jsonrpc": "2.0", "method": "notifications/initialized"}}"#
        )
        .unwrap();
        m
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        let v = self.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": args}),
        );
        v["result"]["structuredContent"].clone()
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

/// `augur mcp --state`: killed (SIGKILL) after `main` reached CRITICAL and started again by
/// its client with the same command line, the server resumes `main` at CRITICAL; without the
/// journal `--session main` would open it at SAFE.
#[test]
fn a_killed_mcp_server_resumes_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Mcp::start(dir.path());
    for (tool, args) in [
        ("get_current_day", serde_json::json!({})),
        ("get_iban", serde_json::json!({})),
        ("execute_python", serde_json::json!({"code": "1+1"})),
        (
            "get_webpage",
            serde_json::json!({"url": "www.informations.com"}),
        ),
    ] {
        let d = s.call(
            "gate",
            serde_json::json!({"session": "main", "tool": tool, "args": args}),
        );
        assert!(d["verdict"] == "allow" || d["verdict"] == "warn", "{d}");
    }
    let st = s.call("session_state", serde_json::json!({"session": "main"}));
    assert_eq!(st["state"], "critical", "{st}");
    s.kill();
    let mut s = Mcp::start(dir.path());
    let st = s.call("session_state", serde_json::json!({"session": "main"}));
    assert_eq!(
        (&st["state"], &st["steps"]),
        (&"critical".into(), &4.into()),
        "{st}"
    );
    let d = s.call(
        "gate",
        serde_json::json!({"session": "main", "tool": "send_money", "args": {"recipient": "XX", "amount": 1}}),
    );
    assert_eq!(d["verdict"], "block", "{d}");
    s.kill();
}
