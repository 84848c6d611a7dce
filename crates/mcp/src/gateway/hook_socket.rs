//! The gateway's hook socket (`augur mcp ... --hook-socket PATH`): a Unix socket, mode 0600,
//! through which `augur hook claude-code --gateway PATH` gates the client's built-in tools
//! (Bash, Write, WebFetch, ...) against the connection's session — the same session, and so
//! the same provenance store, as the MCP tools the gateway proxies.
//!
//! One request per connection: the hook's event as Claude Code sent it (one JSON line), one
//! JSON line back. `PreToolUse` is gated ([`Server::gate_proxied`]: the session moves on allow
//! and warn) and answered `{"verdict", "probability", "reason"}`; `PostToolUse` (and
//! `PostToolUseFailure`) records a call that ran without having moved the session (a pause the
//! user let through in the client) and observes its result as a tool's result (untrusted
//! unless the policy trusts the tool); `UserPromptSubmit` observes the prompt as the user's
//! request (trusted: Claude Code sends it, not the model); `augur/input_lost` (the hook could
//! not read an input, perhaps a tool result) marks the session's provenance as lost, so that
//! a value not seen in the user's words since counts as untrusted; other events are answered
//! `{}`.
//! An error is `{"error": MESSAGE}`, which the hook turns into exit code 2 (the call denied).
//!
//! **Authentic events** (issue 39, docs/mcp.md "Threat model"): the gateway writes a fresh
//! secret to `PATH.key` (0600) at start, and every event must carry it
//! ([`crate::hook::SECRET_FIELD`]): one without it is refused (and, not being a gate, marks
//! the session's provenance lost). A `UserPromptSubmit` that arrives while a tool call is in
//! flight — after a `PreToolUse` the gateway let through and before its `PostToolUse`, or
//! while a proxied MCP call waits for its upstream — could come from that tool (the agent's
//! shell running `augur hook` itself): it is not observed, the session's provenance is marked
//! lost, and the answer is `{"refused": "in_flight", "message": ...}`, which the hook shows to
//! the user without blocking the prompt (a prompt the user queued is not lost). `Stop` (the
//! agent's turn ended) clears what is in flight; so does age: a call in flight for more than
//! [`IN_FLIGHT_MAX`] is taken to have been refused or interrupted in the client.
//!
//! The socket is created in a fresh 0700 directory, made 0600, then renamed into place, so
//! that it is never reachable by other users; a file already at PATH is refused unless it is a
//! socket (a previous gateway's), which is replaced. At exit the gateway removes the path only
//! while it is still its own socket ([`SocketFile::remove`]).
//!
//! At most [`MAX_CONNECTIONS`] connections are served at once; one past that is answered with
//! an error at once, unread, and since it may have been a tool's result the session's
//! provenance is lost (fail closed).

use crate::hook::{result_text, tool_name};
use crate::server::Server;
use augur_gate::Verdict;
use serde_json::{json, Map, Value};
use std::collections::{HashSet, VecDeque};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;

/// The longest request accepted (a tool result observed through the hook): 16 MiB.
pub const MAX_REQUEST: u64 = 16 * 1024 * 1024;

/// The most connections served at once (each reads at most [`MAX_REQUEST`] bytes).
pub const MAX_CONNECTIONS: usize = 64;

/// How long a connection may take to send its request.
const READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a built-in tool call counts as in flight without its `PostToolUse` (a call the
/// user refused in the client's prompt, or interrupted, never gets one): longer than Claude
/// Code's longest `Bash` time limit (10 minutes).
pub const IN_FLIGHT_MAX: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The session's secret and what counts as in flight (see the module documentation).
pub struct Auth {
    /// The secret every event must carry.
    pub secret: crate::hook::Secret,
    /// Where it is (for messages).
    pub key_file: PathBuf,
    /// Proxied MCP calls waiting for their upstream.
    pub proxied_in_flight: Arc<std::sync::atomic::AtomicUsize>,
}

/// Built-in tool calls let through and not yet reported done: tool-use id → since when.
#[derive(Default)]
struct Flights(std::collections::HashMap<String, std::time::Instant>);

impl Flights {
    fn start(&mut self, id: &str) {
        if self.0.len() >= 1024 {
            self.0.clear();
        }
        self.0.insert(id.to_string(), std::time::Instant::now());
    }

    fn end(&mut self, id: &str) {
        self.0.remove(id);
    }

    fn busy(&mut self) -> usize {
        self.0.retain(|_, t| t.elapsed() < IN_FLIGHT_MAX);
        self.0.len()
    }
}

/// The tool-use ids of the calls gated with a verdict that moved the session (allow, warn),
/// the newest 1,024: their PostToolUse does not record them a second time.
#[derive(Default)]
struct Advanced {
    order: VecDeque<String>,
    set: HashSet<String>,
}

impl Advanced {
    fn insert(&mut self, id: String) {
        if self.set.insert(id.clone()) {
            self.order.push_back(id);
            while self.order.len() > 1024 {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }
}

/// A bound hook socket's file: its path, and which file it is (device and inode), so that the
/// gateway removes its path at exit only while the path is still this socket.
pub struct SocketFile {
    path: PathBuf,
    id: (u64, u64),
}

impl SocketFile {
    /// Whether the socket's path is still this socket.
    pub fn is_ours(&self) -> bool {
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.id)
    }

    /// Removes the socket's path, unless another file (another gateway's socket, bound
    /// after this one was deleted) is there now.
    pub fn remove(&self) {
        if self.is_ours() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds the socket at `path` (0600 from the moment it exists): the listener for [`serve`]
/// and the socket's file.
pub fn bind(
    path: &Path,
    before_publish: impl FnOnce() -> Result<(), String>,
) -> Result<(UnixListener, SocketFile), String> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            // A socket someone still listens on is another gateway's: taking it over would
            // gate that gateway's client against this session (which has not seen its
            // results). Only a dead one (a gateway that did not clean up) is replaced.
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(format!(
                    "--hook-socket {shown}: another process (a running gateway?) listens on it; \
                     give each gateway its own socket"
                ));
            }
            std::fs::remove_file(path)
                .map_err(|e| format!("--hook-socket {shown}: cannot replace the old socket: {e}"))?
        }
        Ok(_) => {
            return Err(format!(
                "--hook-socket {shown}: a file that is not a socket is there; choose another path"
            ))
        }
        Err(_) => {}
    }
    // Bound inside a fresh 0700 directory beside PATH: until the chmod to 0600 the socket has
    // the umask's mode, and nobody else can reach it there; then it is renamed into place.
    let mut dir = path.as_os_str().to_owned();
    dir.push(format!(".{}.d", std::process::id()));
    let dir = PathBuf::from(dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            format!(
                "--hook-socket {shown}: cannot create {}: {e}",
                dir.display()
            )
        })?;
    let tmp = dir.join("hook.sock");
    let bound = UnixListener::bind(&tmp)
        .map_err(|e| format!("--hook-socket {shown}: cannot bind: {e}"))
        .and_then(|listener| {
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
                .and_then(|()| std::fs::symlink_metadata(&tmp))
                .map_err(|e| format!("--hook-socket {shown}: {e}"))
                .and_then(|m| {
                    // What a client needs beside the socket (the secret's file) is written
                    // before the socket appears: a client that sees the socket finds it.
                    before_publish()?;
                    std::fs::rename(&tmp, path)
                        .map_err(|e| format!("--hook-socket {shown}: {e}"))?;
                    let file = SocketFile {
                        path: path.to_path_buf(),
                        id: (m.dev(), m.ino()),
                    };
                    Ok((listener, file))
                })
        });
    let _ = std::fs::remove_file(&tmp);
    let _ = std::fs::remove_dir(&dir);
    bound
}

/// Serves the hook socket: one task per connection, one request each.
pub async fn serve(listener: UnixListener, server: Arc<Server>, session: String, auth: Auth) {
    let advanced = Arc::new(Mutex::new(Advanced::default()));
    let auth = Arc::new(auth);
    let flights = Arc::new(Mutex::new(Flights::default()));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors, say: the hook gets no answer (and denies); try again
            // shortly rather than spin.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let (server, session, advanced) =
            (Arc::clone(&server), session.clone(), Arc::clone(&advanced));
        let (auth, flights) = (Arc::clone(&auth), Arc::clone(&flights));
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            // Too many at once: answered unread. It may have been a tool's result, never to
            // be observed now: the session trusts nothing it saw before (fail closed).
            tokio::spawn(async move {
                let _ = server.lose_provenance(&session);
                let (_, mut write) = stream.into_split();
                let answer = json!({"error": format!(
                    "the gateway serves at most {MAX_CONNECTIONS} hook connections at once"
                )});
                let _ = write.write_all(format!("{answer}\n").as_bytes()).await;
                let _ = write.shutdown().await;
            });
            continue;
        };
        tokio::spawn(async move {
            let _slot = slot;
            let (read, mut write) = stream.into_split();
            let mut line = Vec::new();
            let mut reader = BufReader::new(read.take(MAX_REQUEST + 1));
            // Whether the request was a gate (PreToolUse): its failure denies the call, and
            // no result went unobserved.
            let mut gate = false;
            let read = tokio::time::timeout(READ_TIMEOUT, reader.read_until(b'\n', &mut line));
            let answer = match read.await {
                // A connection closed without a byte (a liveness probe): nothing to answer.
                Ok(Ok(0)) => return,
                Err(_) => {
                    json!({"error": format!("no request within {} s", READ_TIMEOUT.as_secs())})
                }
                Ok(Err(e)) => json!({"error": format!("reading the request failed: {e}")}),
                Ok(Ok(_)) if line.len() as u64 > MAX_REQUEST => {
                    json!({"error": format!("the request is longer than {MAX_REQUEST} bytes")})
                }
                Ok(Ok(_)) => match serde_json::from_slice::<Value>(&line) {
                    Ok(Value::Object(event)) => {
                        gate = event.get("hook_event_name").and_then(Value::as_str)
                            == Some("PreToolUse");
                        // Gating takes the session lock and may write the journal: off the
                        // runtime's thread.
                        let (srv, ses) = (Arc::clone(&server), session.clone());
                        tokio::task::spawn_blocking(move || {
                            handle(&srv, &ses, &advanced, &auth, &flights, &event)
                        })
                        .await
                        .unwrap_or_else(|e| json!({"error": format!("the gate failed: {e}")}))
                    }
                    Ok(_) => json!({"error": "the request is not a JSON object"}),
                    Err(e) => json!({"error": format!("the request is not JSON: {e}")}),
                },
            };
            if answer.get("error").is_some() && !gate {
                // A request the gateway could not take may have been a tool's result, now
                // never observed: the session trusts nothing it saw before (fail closed).
                let _ = server.lose_provenance(&session);
            }
            let mut out = answer.to_string();
            out.push('\n');
            let _ = write.write_all(out.as_bytes()).await;
            let _ = write.shutdown().await;
        });
    }
}

fn handle(
    server: &Server,
    session: &str,
    advanced: &Mutex<Advanced>,
    auth: &Auth,
    flights: &Mutex<Flights>,
    event: &Map<String, Value>,
) -> Value {
    let str_of = |k: &str| event.get(k).and_then(Value::as_str);
    let Some(name) = str_of("hook_event_name") else {
        return json!({"error": "the event has no `hook_event_name`"});
    };
    // Only a process that can read the secret speaks for Claude Code (the documented sandbox
    // denies it to the agent's shell).
    if !str_of(crate::hook::SECRET_FIELD).is_some_and(|s| auth.secret.matches(s)) {
        return json!({"error": format!(
            "the {name} event does not carry this gateway's secret (from {}): refused; only Claude Code's own hooks can read it",
            auth.key_file.display()
        )});
    }
    let flights = || flights.lock().unwrap_or_else(|p| p.into_inner());
    let args = event
        .get("tool_input")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let need = |field: &str| json!({"error": format!("the {name} event has no `{field}` (Claude Code sends it; is the hook registered for the right event?)")});
    match name {
        "PreToolUse" => {
            let Some(tool) = str_of("tool_name") else {
                return need("tool_name");
            };
            let d = server.gate_proxied(session, tool_name(tool), &args, None);
            if d.verdict != Verdict::Block {
                // It may run (a pause is put to the user in the client): in flight until its
                // PostToolUse.
                if let Some(id) = str_of("tool_use_id") {
                    flights().start(id);
                }
            }
            if matches!(d.verdict, Verdict::Allow | Verdict::Warn) {
                if let Some(id) = str_of("tool_use_id") {
                    advanced
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(id.to_string());
                }
            }
            json!({
                "verdict": d.verdict.as_str(),
                "probability": d.probability,
                "reason": d.reason,
                "provenance": d.provenance,
            })
        }
        "PostToolUse" | "PostToolUseFailure" => {
            let Some(tool) = str_of("tool_name") else {
                return need("tool_name");
            };
            let tool = tool_name(tool);
            if let Some(id) = str_of("tool_use_id") {
                flights().end(id);
            }
            let moved = str_of("tool_use_id").is_some_and(|id| {
                advanced
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .set
                    .contains(id)
            });
            // It ran: an allowed call already moved the session; a paused one the user let
            // through, or one never gated, moves it now.
            if !moved {
                if let Err(e) = server.record_proxied(session, tool, &args, None) {
                    return json!({"error": e.message});
                }
            }
            if let Some(r) = event.get("tool_response").or_else(|| event.get("error")) {
                let unread = crate::hook::unreadable(r);
                let text = result_text(r, &args);
                if let Err(e) =
                    server.observe_result(session, tool, &args, &text, unread.as_deref())
                {
                    return json!({"error": e.message});
                }
            }
            json!({})
        }
        "Stop" => {
            // The agent's turn ended: nothing of it is running any more.
            flights().0.clear();
            json!({})
        }
        "UserPromptSubmit" => {
            let Some(prompt) = str_of("prompt") else {
                return need("prompt");
            };
            let busy = flights().busy()
                + auth
                    .proxied_in_flight
                    .load(std::sync::atomic::Ordering::SeqCst);
            if busy > 0 {
                // A tool is running: this prompt may come from it. Not the user's words; what
                // the session trusts is no longer known either (it may have been forged before).
                if let Err(e) = server.lose_provenance(session) {
                    return json!({"error": e.message});
                }
                return json!({
                    "refused": "in_flight",
                    "message": format!("Augur: this prompt arrived while {busy} tool call(s) were running, so it could have come from a tool rather than from you; it was passed on but not recorded as your request, and from now on a value not seen in your prompts counts as untrusted"),
                });
            }
            match server.observe(session, None, prompt) {
                Ok(_) => json!({}),
                Err(e) => json!({"error": e.message}),
            }
        }
        // The hook could not read an input (it may have been a tool result, now never
        // observed): the session trusts nothing it saw before.
        LOST => match server.lose_provenance(session) {
            Ok(()) => json!({}),
            Err(e) => json!({"error": e.message}),
        },
        _ => json!({}),
    }
}

/// The event the hook sends when it could not read Claude Code's input.
pub const LOST: &str = "augur/input_lost";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_socket_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hook.sock");
        std::fs::write(&p, "keep").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let e = rt
            .block_on(async { bind(&p, || Ok(())).map(|_| ()) })
            .unwrap_err();
        assert!(e.contains("not a socket"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "keep");
        std::fs::remove_file(&p).unwrap();
        let mode = rt.block_on(async {
            let _l = bind(&p, || Ok(())).unwrap();
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777
        });
        assert_eq!(mode, 0o600);
        // Bound in a private directory that is gone once the socket is in place.
        let private = dir
            .path()
            .join(format!("hook.sock.{}.d", std::process::id()));
        assert!(!private.exists(), "{}", private.display());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    /// What a client needs beside the socket (the secret's file) is in place before the socket
    /// appears, and a failure to write it leaves no socket behind.
    #[test]
    fn the_secret_is_written_before_the_socket_appears() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hook.sock");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let e = bind(&p, || Err("no room for the key".into())).map(|_| ());
            assert_eq!(e.unwrap_err(), "no room for the key");
            assert!(!p.exists());
            let (_l, file) = bind(&p, || {
                assert!(
                    !p.exists(),
                    "the socket appeared before the secret was written"
                );
                Ok(())
            })
            .unwrap();
            assert!(p.exists());
            file.remove();
        });
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
    }

    /// A gateway whose socket was deleted and bound again by another gateway does not remove
    /// the other's socket when it exits.
    #[test]
    fn a_gateway_removes_only_its_own_socket() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hook.sock");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (_first, first) = bind(&p, || Ok(())).unwrap();
            std::fs::remove_file(&p).unwrap();
            let (_second, second) = bind(&p, || Ok(())).unwrap();
            first.remove();
            assert!(p.exists(), "the first gateway removed the second's socket");
            second.remove();
            assert!(!p.exists());
            // Nothing there any more: nothing to do.
            first.remove();
        });
    }
}
