//! Issue 22 class 4: the gate stream never dies. Every way its reader could stop (invalid
//! UTF-8, NUL bytes, a line of only whitespace, non-object JSON, a line over the 16 MiB limit,
//! EOF in the middle of a line) is answered per line while the stream goes on; the audit log
//! is flushed per decision, so a killed gate leaves one audit line per decision it answered.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::util;

fn compile_risk(dir: &Path) -> PathBuf {
    let out = dir.join("m.json");
    let o = util::augur(&[
        "monitor",
        "compile",
        "models/safetydrift.tra",
        "--prop",
        "P=? [ F<=5 \"violated\" ]",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Runs `augur monitor gate` on raw bytes (written from a thread: the input is larger than a
/// pipe's buffer).
fn gate_bytes(m: &Path, input: Vec<u8>) -> (std::process::ExitStatus, Vec<Value>, String) {
    let mut child = util::cmd()
        .args(["monitor", "gate", "--monitor", m.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let ls = util::stdout_json_lines(&o);
    (
        o.status,
        ls,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn every_kind_of_bad_line_gets_an_error_and_the_stream_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile_risk(dir.path());
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"session\": \"a\", \"tool\": \"get_iban\"}\n"); // 1
    input.extend_from_slice(b"{\"session\": \"a\", \"tool\": \"get_\xff\xfeiban\"}\n"); // 2
    input.extend_from_slice(b"{\"session\": \"a\", \"tool\": \"x\0y\"}\n"); // 3
    input.extend_from_slice(b" \t \r\n"); // 4: only whitespace, skipped
    input.extend_from_slice(b"[1, 2]\n"); // 5
    input.extend_from_slice(b"\"a string\"\n"); // 6
                                                // 7: a line of 17 MiB (over the limit), valid JSON but never parsed.
    input.extend_from_slice(b"{\"session\": \"a\", \"tool\": \"get_iban\", \"pad\": \"");
    input.resize(input.len() + (17 << 20), b'x');
    input.extend_from_slice(b"\"}\n");
    input.extend_from_slice(b"{\"session\": \"a\", \"tool\": \"get_current_day\"}\n"); // 8
    input.extend_from_slice(b"{\"session\": \"a\", \"tool\""); // 9: EOF mid-line
    let (status, ls, err) = gate_bytes(&m, input);
    assert!(status.success(), "{err}");
    assert_eq!(ls.len(), 8, "{ls:?}");
    assert_eq!(ls[0]["verdict"], "warn");
    let msg = |i: usize| ls[i]["error"]["message"].as_str().unwrap_or("").to_string();
    let line = |i: usize| ls[i]["error"]["line"].as_u64();
    assert!(msg(1).contains("not valid UTF-8"), "{}", ls[1]);
    assert_eq!(
        (line(1), ls[1]["error"]["column"].as_u64()),
        (Some(2), Some(31))
    );
    assert!(msg(2).contains("control character"), "{}", ls[2]);
    assert_eq!(line(2), Some(3));
    assert!(msg(3).contains("expected a JSON object"), "{}", ls[3]);
    assert_eq!(line(3), Some(5));
    assert!(msg(4).contains("expected a JSON object"), "{}", ls[4]);
    assert!(msg(5).contains("longer than 16777216 bytes"), "{}", ls[5]);
    assert_eq!(line(5), Some(7));
    // The session survived all of it: get_iban made it MILD, reading the date keeps it there.
    assert_eq!(ls[6]["verdict"], "warn", "{}", ls[6]);
    assert_eq!(ls[6]["step"], 1);
    assert!(msg(7).contains("EOF"), "{}", ls[7]);
    assert_eq!(line(7), Some(9));
}

/// The audit log is flushed per decision: a gate killed (SIGKILL, no chance to flush) after
/// three block decisions leaves exactly three audit lines.
#[test]
fn a_killed_gate_leaves_one_audit_line_per_decision() {
    let dir = tempfile::tempdir().unwrap();
    let m = compile_risk(dir.path());
    let audit = dir.path().join("audit.jsonl");
    let mut child = util::cmd()
        .args([
            "monitor",
            "gate",
            "--monitor",
            m.to_str().unwrap(),
            "--audit",
        ])
        .arg(&audit)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // A concrete state sent to a classifier monitor is blocked (fail closed) every time.
    for i in 0..3 {
        writeln!(
            stdin,
            "{{\"session\": \"s{i}\", \"state\": {{\"x\": {i}}}}}"
        )
        .unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["verdict"], "block", "{v}");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let log = std::fs::read_to_string(&audit).unwrap();
    let recs: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 3, "{log}");
    assert!(recs.iter().all(|r| r["verdict"] == "block"));
}
