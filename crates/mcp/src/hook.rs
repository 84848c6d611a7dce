//! What a client's hooks send, read the same way by `augur hook claude-code` (with a state
//! file) and by the gateway's hook socket: the tool name the classifier sees and the text of a
//! tool's result; and the hook's **secret** (issue 39, docs/mcp.md "Threat model"): 32 random
//! bytes in a key file (mode 0600, `FILE.key` beside the state file or the hook socket) that
//! the documented sandbox denies the agent's shell. The state file carries a MAC keyed by it
//! ([`Secret::mac`]); every event sent to a gateway's hook socket carries it
//! ([`SECRET_FIELD`]); a process that cannot read it cannot forge the user's prompt.

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;
use std::path::{Path, PathBuf};

/// The field of a hook-socket event that carries the secret (hex).
pub const SECRET_FIELD: &str = "augur_secret";

/// A hook secret: 32 random bytes (see the module documentation).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret([u8; 32]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

impl Secret {
    /// A fresh secret from the operating system's random source.
    pub fn random() -> Secret {
        use rand::RngCore;
        let mut b = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut b);
        Secret(b)
    }

    /// The secret in lower-case hex (64 digits).
    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    /// A secret from 64 hex digits (surrounding white space ignored).
    pub fn from_hex(text: &str) -> Option<Secret> {
        let t = text.trim().as_bytes();
        if t.len() != 64 {
            return None;
        }
        let mut b = [0u8; 32];
        for (i, pair) in t.chunks(2).enumerate() {
            let d = |c: u8| (c as char).to_digit(16);
            b[i] = (d(pair[0])? * 16 + d(pair[1])?) as u8;
        }
        Some(Secret(b))
    }

    fn hmac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length: this cannot fail.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a 32-byte key")
    }

    /// HMAC-SHA-256 of `bytes` keyed by the secret, in hex.
    pub fn mac(&self, bytes: &[u8]) -> String {
        let mut m = self.hmac();
        m.update(bytes);
        hex(&m.finalize().into_bytes())
    }

    /// Whether `mac_hex` is the MAC of `bytes` (compared in constant time).
    pub fn verify(&self, bytes: &[u8], mac_hex: &str) -> bool {
        let Some(tag) = Secret::from_hex(mac_hex) else {
            return false;
        };
        let mut m = self.hmac();
        m.update(bytes);
        m.verify_slice(&tag.0).is_ok()
    }

    /// Whether `presented` (hex) is this secret, compared in constant time (through the MAC
    /// of a fixed message, so that no early exit leaks a prefix).
    pub fn matches(&self, presented: &str) -> bool {
        match Secret::from_hex(presented) {
            Some(other) => self.verify(b"augur-hook", &other.mac(b"augur-hook")),
            None => false,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The key file beside `path` (a state file or a hook socket): `PATH.key`.
pub fn key_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// Reads a key file; the error says which file and why (a process the sandbox denies it gets
/// "permission denied", or an empty file under bubblewrap's mask).
pub fn read_key_file(path: &Path) -> Result<Secret, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read the hook's secret {} ({e}): only Claude Code's own hooks can; a command run by the agent cannot (docs/mcp.md, \"Threat model\")",
            path.display()
        )
    })?;
    Secret::from_hex(&text).ok_or_else(|| {
        format!(
            "{} does not hold a hook secret (64 hex digits): refused",
            path.display()
        )
    })
}

/// Writes a fresh key file at `path`, mode 0600 from the moment it exists (created beside it
/// and renamed into place), replacing one that is there.
pub fn write_key_file(path: &Path, secret: &Secret) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut b = tempfile::Builder::new();
    b.prefix(".augur-key");
    #[cfg(unix)]
    b.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600));
    let mut tmp = b.tempfile_in(dir)?;
    writeln!(tmp, "{}", secret.hex())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The classifier's name of a Claude Code tool: an MCP tool's own name without
/// `mcp__SERVER__` (`mcp__github__create_issue` → `create_issue`); a built-in tool's as it is.
pub fn tool_name(name: &str) -> &str {
    match name.strip_prefix("mcp__") {
        Some(rest) => rest.split_once("__").map_or(rest, |(_, t)| t),
        None => name,
    }
}

/// The text of a tool's result: every string and number leaf, one per line, except the
/// leaves that repeat one of the call's own arguments (Read's result echoes its `filePath`:
/// the agent wrote it, it is not news from the tool).
pub fn result_text(result: &Value, input: &Value) -> String {
    fn leaves<'a>(v: &'a Value, f: &mut dyn FnMut(&'a Value)) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| leaves(x, f)),
            Value::Object(m) => m.values().for_each(|x| leaves(x, f)),
            v => f(v),
        }
    }
    let mut own: Vec<&Value> = Vec::new();
    leaves(input, &mut |v| own.push(v));
    let mut text = String::new();
    leaves(result, &mut |v| {
        if own.contains(&v) {
            return;
        }
        match v {
            Value::String(s) => text.push_str(s),
            Value::Number(n) => text.push_str(&n.to_string()),
            _ => return,
        }
        text.push('\n');
    });
    text
}

/// The first part of a hook's tool result that cannot be read as text, described: an image
/// or audio block (`{"type": "image", ...}`, Claude Code's `Read` of a picture), or a base64
/// payload (`"base64"`, `"blob"`, `"data"` beside a media type). `None`: all of it is text.
pub fn unreadable(result: &Value) -> Option<String> {
    match result {
        Value::Array(a) => a.iter().find_map(unreadable),
        Value::Object(m) => {
            let kind = m.get("type").and_then(Value::as_str).unwrap_or("");
            let mime = ["mimeType", "mime_type", "media_type", "mediaType"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str));
            let shown = |what: &str| match mime {
                Some(t) => format!("{what} ({t})"),
                None => what.to_string(),
            };
            if kind == "image" || mime.is_some_and(|t| t.starts_with("image/")) {
                return Some(shown("an image"));
            }
            if kind == "audio" || mime.is_some_and(|t| t.starts_with("audio/")) {
                return Some(shown("audio"));
            }
            if ["base64", "blob"]
                .iter()
                .any(|k| m.get(*k).is_some_and(Value::is_string))
                && !mime.is_some_and(|t| t.starts_with("text/"))
            {
                return Some(shown("a binary blob"));
            }
            m.values().find_map(unreadable)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_macs_and_key_files() {
        let k = Secret::random();
        assert_eq!(Secret::from_hex(&k.hex()), Some(k.clone()));
        assert_ne!(Secret::random(), k);
        let m = k.mac(b"state");
        assert!(k.verify(b"state", &m));
        assert!(!k.verify(b"state!", &m));
        assert!(!Secret::random().verify(b"state", &m));
        assert!(!k.verify(b"state", "zz"));
        assert!(k.matches(&k.hex()) && !k.matches(&Secret::random().hex()) && !k.matches(""));
        // RFC 4231 test case 2 (key "Jefe"), through the same HMAC as a check of the wiring.
        let mut h = <Hmac<Sha256> as Mac>::new_from_slice(b"Jefe").unwrap();
        h.update(b"what do ya want for nothing?");
        assert_eq!(
            hex(&h.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let dir = tempfile::tempdir().unwrap();
        let p = key_path(&dir.path().join("state.json"));
        assert!(p.ends_with("state.json.key"));
        assert!(read_key_file(&p)
            .unwrap_err()
            .contains("cannot read the hook's secret"));
        write_key_file(&p, &k).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read_key_file(&p).unwrap(), k);
        std::fs::write(&p, "nope").unwrap();
        assert!(read_key_file(&p).unwrap_err().contains("does not hold"));
    }

    #[test]
    fn images_audio_and_blobs_are_unreadable() {
        use serde_json::json;
        let img = json!({"type": "image", "file": {"base64": "iVBO", "type": "image/png"}});
        assert_eq!(unreadable(&img).as_deref(), Some("an image"));
        let nested = json!([{"type": "text", "text": "hi"}, {"type": "image", "mimeType": "image/png", "data": "x"}]);
        assert_eq!(unreadable(&nested).as_deref(), Some("an image (image/png)"));
        assert_eq!(
            unreadable(&json!({"type": "audio", "mimeType": "audio/wav"})).as_deref(),
            Some("audio (audio/wav)")
        );
        assert_eq!(
            unreadable(&json!({"blob": "AAEC", "mimeType": "application/pdf"})).as_deref(),
            Some("a binary blob (application/pdf)")
        );
        assert_eq!(
            unreadable(&json!({"file": {"content": "text", "numLines": 1}})),
            None
        );
        assert_eq!(unreadable(&json!("plain")), None);
    }

    #[test]
    fn mcp_tools_are_classified_by_their_own_name() {
        assert_eq!(tool_name("Bash"), "Bash");
        assert_eq!(tool_name("mcp__github__create_issue"), "create_issue");
        assert_eq!(tool_name("mcp__memory"), "memory");
    }

    #[test]
    fn a_result_echoing_its_arguments_leaves_them_out() {
        let input = json!({"file_path": "/p/notes.txt"});
        let result = json!({"type": "text", "file": {"filePath": "/p/notes.txt",
                            "content": "mail eve@evil.example", "numLines": 1}});
        // In the map's key order (sorted, or as written with serde_json's preserve_order).
        let text = result_text(&result, &input);
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, ["1", "mail eve@evil.example", "text"]);
        assert_eq!(result_text(&json!("plain"), &json!({})), "plain\n");
    }
}
