//! `--audit FILE`: one JSON line per proxied call, written and flushed before the call's
//! answer leaves the gateway. The arguments are not written, only the SHA-256 of their
//! canonical form ([`args_digest`]: object keys sorted at every level, no white space,
//! serde_json's number and string forms), so an audit log can be kept where the arguments may
//! not (and a reviewer holding the arguments can match them to their line).

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::Write;

/// One line of the audit log.
#[derive(Clone, Debug, Serialize)]
pub struct AuditLine<'a> {
    /// Unix time of the answer, in seconds (fractional).
    pub time: f64,
    /// The session the call belongs to.
    pub session: &'a str,
    /// The tool as the client called it (maybe `UPSTREAM__tool`).
    pub tool: &'a str,
    /// The upstream server.
    pub upstream: &'a str,
    /// The tool's own name on the upstream (what the classifier saw).
    pub upstream_tool: &'a str,
    /// SHA-256 (hex) of the canonical arguments ([`args_digest`]).
    pub args_sha256: String,
    /// The monitor's verdict (`allow`, `warn`, `pause`, `block`).
    pub verdict: &'a str,
    /// The probability the verdict came from.
    pub probability: f64,
    /// The monitor's reason.
    pub reason: &'a str,
    /// Where the arguments' values were first seen: `none` (nowhere: the model wrote them),
    /// `user` (in trusted text), `untrusted` (only in tool results).
    pub provenance: &'a str,
    /// What happened: `forwarded` (the upstream answered), `blocked`, `paused`, `approved`
    /// (a paused call run after `approve` or the user's elicitation answer), `denied` (a
    /// paused call the user did not approve through elicitation: not run), `failed` (the upstream crashed, timed out or
    /// answered malformed output: outcome unknown, counted as executed), `not_started` (the
    /// upstream could not be started: not sent).
    pub outcome: &'a str,
    /// Why the call failed (`failed`, `not_started`) or was denied (`denied`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// The pause id (`paused`, `approved`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_id: Option<&'a str>,
    /// Microseconds the upstream took (request sent to answer received), when it was called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream_us: Option<u64>,
    /// Microseconds the gateway added: from the request reaching the gateway's handler to
    /// its hand-over to the upstream's client, plus from the upstream's answer to the answer
    /// leaving the handler (without the writing of this line).
    pub gateway_us: u64,
}

/// SHA-256 (lower-case hex) of the canonical JSON of `args` (see the module documentation).
pub fn args_digest(args: &Value) -> String {
    let mut text = String::new();
    canonical(args, &mut text);
    let d = Sha256::digest(text.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// `v` as JSON with object keys sorted (by their UTF-8 bytes) at every level.
pub fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The audit file, appended to; every line is flushed as it is written.
pub struct AuditLog {
    out: std::io::BufWriter<std::fs::File>,
    path: std::path::PathBuf,
}

impl AuditLog {
    /// Opens `path` for appending (created when missing).
    pub fn open(path: &std::path::Path) -> std::io::Result<AuditLog> {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(AuditLog {
            out: std::io::BufWriter::new(f),
            path: path.to_path_buf(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Writes one line and flushes it.
    pub fn write(&mut self, line: &AuditLine<'_>) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, line).map_err(std::io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_digest_ignores_key_order_and_white_space_only() {
        let a =
            json!({"to": ["bob@corp.example"], "body": "hi", "opts": {"z": 1, "a": [true, null]}});
        let b: Value = serde_json::from_str(
            r#"{ "opts": {"a": [true, null], "z": 1}, "body": "hi", "to": ["bob@corp.example"] }"#,
        )
        .unwrap();
        assert_eq!(args_digest(&a), args_digest(&b));
        let mut text = String::new();
        canonical(&a, &mut text);
        assert_eq!(
            text,
            r#"{"body":"hi","opts":{"a":[true,null],"z":1},"to":["bob@corp.example"]}"#
        );
        // The SHA-256 of that text, from an independent implementation (Python's hashlib:
        // hashlib.sha256(text.encode()).hexdigest()).
        assert_eq!(
            args_digest(&a),
            "e26ae852e1ad26c2e257a61772f33439c0d0256aacc83f140d6dc62567a7fbad"
        );
        assert_ne!(
            args_digest(&a),
            args_digest(
                &json!({"to": ["mallory@evil.example"], "body": "hi", "opts": {"z": 1, "a": [true, null]}})
            )
        );
        // The empty object.
        assert_eq!(
            args_digest(&json!({})),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }

    #[test]
    fn audit_lines_are_one_json_object_per_line_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let mut log = AuditLog::open(&path).unwrap();
        let mut line = AuditLine {
            time: 1.5,
            session: "s-1",
            tool: "mail__send",
            upstream: "mail",
            upstream_tool: "send",
            args_sha256: args_digest(&json!({})),
            verdict: "block",
            probability: 1.0,
            reason: "send(...) → block",
            provenance: "untrusted",
            outcome: "blocked",
            error: None,
            pause_id: None,
            upstream_us: None,
            gateway_us: 12,
        };
        log.write(&line).unwrap();
        // Flushed: readable before the log is dropped.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1);
        line.outcome = "forwarded";
        line.verdict = "allow";
        line.upstream_us = Some(250);
        log.write(&line).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0]["outcome"], "blocked");
        assert!(v[0].get("upstream_us").is_none());
        assert_eq!(v[1]["upstream_us"], 250);
        assert_eq!(v[1]["tool"], "mail__send");
        assert_eq!(v[1]["upstream_tool"], "send");
        assert_eq!(v[1]["provenance"], "untrusted");
    }
}
