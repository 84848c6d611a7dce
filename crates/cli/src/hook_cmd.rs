//! `augur hook claude-code`: the runtime monitor behind Claude Code's hooks, for the client's
//! built-in tools (Bash, Write, Edit, Read, WebFetch, ...), which an MCP gateway never sees.
//!
//! Claude Code runs the command once per event with the event's JSON on stdin
//! (`session_id`, `hook_event_name`, and per event `prompt`, `tool_name`, `tool_input`,
//! `tool_response`, `tool_use_id`). Each run locks the state file, restores the Claude Code
//! session's monitor session (its provenance store included), handles the event, saves the
//! state and answers:
//!
//! - `UserPromptSubmit`: the prompt is observed as trusted text (the user's request);
//! - `PreToolUse`: the call is gated; allow → no output (Claude Code's own permission rules
//!   apply as without the hook), warn → a `systemMessage` for the user, pause →
//!   `permissionDecision: "ask"`, block → `permissionDecision: "deny"` with the reason;
//! - `PostToolUse` (and `PostToolUseFailure`): the call is recorded as executed and its result
//!   observed as a tool's result (untrusted unless the policy's `trusted_tools` names it);
//! - `SessionStart` opens the session, `SessionEnd` ends it; other events are ignored.
//!
//! Every failure (bad stdin, an unreadable or corrupt state file, a monitor that does not
//! load) is a message on stderr and exit code 2, which blocks the tool call in `PreToolUse`
//! (Claude Code treats other non-zero codes as non-blocking): the hook fails closed.
//!
//! Without `--monitor` the hook gates with the built-in Claude Code monitor and its policy
//! (`augur_gate::builtin`): no compile step. Authentic prompts (issue 39, docs/mcp.md
//! "Threat model"): the state file's secret is `FILE.key` (0600, created with the state
//! file); the state file ends with a MAC keyed by it, and a bad MAC fails closed; a process
//! that cannot read the key (the agent's sandboxed shell) cannot run the hook at all. A
//! `UserPromptSubmit` while a tool call is in flight (gated, no `PostToolUse` yet) is not
//! observed and marks the session's provenance lost; the prompt itself goes on (a
//! `systemMessage` says so) so that a prompt the user queued is not lost. `--gateway SOCKET`
//! sends every event with the gateway's secret (`SOCKET.key`).

use augur_gate::journal::{monitor_hash, unix_now};
use augur_gate::provenance::ObservationSource;
use augur_gate::session::{Action, FullSnapshot, ToolCall};
use augur_gate::{Mapping, Monitor, Policy, Session, Verdict};
use augur_mcp::hook::{result_text, tool_name};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `augur hook`.
#[derive(Args, Debug)]
pub struct HookArgs {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Subcommand, Debug)]
enum HookCommand {
    /// Claude Code's hooks (PreToolUse, PostToolUse, UserPromptSubmit, SessionStart,
    /// SessionEnd): the event's JSON on stdin, the answer in the hook protocol on stdout;
    /// any failure exits with code 2, which blocks the tool call (docs/mcp.md).
    ClaudeCode(ClaudeCodeArgs),
}

#[derive(Args, Debug)]
struct ClaudeCodeArgs {
    /// The monitor (`augur monitor compile`); default: the built-in Claude Code monitor
    /// (SafetyDrift's risk-level chain with provenance and the Claude Code rules, with the
    /// policy models/claude-code/policy.toml). Write an absolute path: Claude Code runs hooks
    /// in the project.
    #[arg(long, value_name = "MONITOR.json")]
    monitor: Option<PathBuf>,
    /// The state file, shared by the hook's runs (locked while one runs; created when
    /// missing). Keep it outside the project, where the agent's tools do not write.
    #[arg(long, value_name = "FILE", required_unless_present = "gateway")]
    state: Option<PathBuf>,
    /// Thresholds → verdicts (docs/monitor.md §2); default: with the built-in monitor its
    /// policy (block a VIOLATED call, warn at P ≥ 0.9), else block at P ≥ 0.9, pause at 0.6,
    /// warn at 0.3.
    #[arg(long, value_name = "POLICY.toml")]
    policy: Option<PathBuf>,
    /// Refuse a monitor compiled with an older version of a built-in classifier (the
    /// default); `--strict-classifier=false` uses it with a warning.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    strict_classifier: bool,
    /// The category new sessions open with (the monitor's table for it).
    #[arg(long)]
    category: Option<String>,
    /// Gate against a running gateway's session instead of a state file: the Unix socket of
    /// `augur mcp ... --hook-socket PATH` (its monitor, policy and session). No socket, or
    /// any error, denies the call (exit 2).
    #[arg(long, value_name = "SOCKET", conflicts_with_all = ["monitor", "state", "policy", "category"])]
    gateway: Option<PathBuf>,
}

/// The format name of the state file.
const FORMAT: &str = "augur-hook-state";
/// Its version (2: the state's JSON on the first line, `{"mac": ...}` on the second).
const VERSION: u32 = 2;
/// How long a gated call counts as in flight without its PostToolUse (Claude Code's longest
/// Bash time limit is 10 minutes; a call the user refused or interrupted gets none).
const IN_FLIGHT_SECS: u64 = 15 * 60;
/// Sessions kept; beyond it the least recently used is ended (its id refused from then on).
const MAX_SESSIONS: usize = 64;
/// Ended session ids remembered (refused); the oldest are forgotten beyond it.
const MAX_ENDED: usize = 4096;
/// Tool calls remembered per session (to match a PostToolUse to its PreToolUse).
const MAX_CALLS: usize = 256;
/// The largest hook input read (a bigger one is an error: exit 2).
const MAX_INPUT: u64 = 64 << 20;

/// The state file: every Claude Code session's monitor session.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    format: String,
    version: u32,
    /// `journal::monitor_hash` of the monitor the sessions gate with.
    monitor: String,
    sessions: BTreeMap<String, SavedSession>,
    /// Ended and evicted session ids, oldest first: refused, never reopened at the start.
    #[serde(default)]
    ended: VecDeque<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedSession {
    /// Last use (Unix seconds).
    t: u64,
    /// The monitor session with its provenance store.
    state: FullSnapshot,
    /// The latest gated calls, oldest first.
    #[serde(default)]
    calls: VecDeque<GatedCall>,
    /// Calls let through and not yet reported done (tool-use id → Unix seconds): a prompt
    /// arriving meanwhile could come from one of them.
    #[serde(default)]
    in_flight: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GatedCall {
    /// Claude Code's `tool_use_id`.
    id: String,
    /// The session step of its decision.
    step: u32,
    /// Whether the decision advanced the session (allow, warn).
    advanced: bool,
}

/// The hook input (the fields used; others are ignored).
#[derive(Debug, Deserialize)]
struct HookInput {
    session_id: String,
    hook_event_name: String,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Option<Value>,
    #[serde(default)]
    tool_response: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    tool_use_id: Option<String>,
}

/// A failure: the message for stderr (exit code 2).
struct Fail(String);

/// Run `augur hook`.
pub fn run(args: &HookArgs) -> ExitCode {
    let HookCommand::ClaudeCode(a) = &args.command;
    let mut out = std::io::stdout().lock();
    match claude_code(a) {
        Ok(answer) => {
            if let Some(v) = answer {
                if writeln!(out, "{v}").and_then(|()| out.flush()).is_err() {
                    return ExitCode::from(2);
                }
            }
            ExitCode::SUCCESS
        }
        Err(Fail(msg)) => {
            let msg = msg.trim_end();
            let _ = writeln!(std::io::stderr(), "augur hook claude-code: {msg}");
            ExitCode::from(2)
        }
    }
}

fn load_monitor(a: &ClaudeCodeArgs) -> Result<(Arc<Monitor>, Arc<Policy>), Fail> {
    let builtin = |e: augur_gate::GateError| Fail(e.render());
    let (monitor, default_policy) = match &a.monitor {
        None => (
            augur_gate::builtin::claude_code_monitor().map_err(builtin)?,
            augur_gate::builtin::claude_code_policy().map_err(builtin)?,
        ),
        Some(path) => {
            let monitor = Monitor::load(path).map_err(|e| Fail(e.render()))?;
            let shown = path.display().to_string();
            if monitor.mapping == Mapping::Abstraction {
                return Err(Fail(format!(
                    "{shown}: an abstraction monitor gates states, not tool calls; compile one with --states dtr or risk-level"
                )));
            }
            if let Some(stale) = monitor.stale_classifier() {
                let msg = stale.message(&shown, &monitor);
                if a.strict_classifier {
                    return Err(Fail(format!(
                        "{msg}; refused (--strict-classifier=false uses it anyway)"
                    )));
                }
                eprintln!("warning: augur hook claude-code: {msg}");
            }
            if !monitor.tracks_provenance() {
                eprintln!("warning: augur hook claude-code: {shown} has no provenance section: provenance is off (a value injected through a tool's result is not traced); leave out --monitor for the built-in Claude Code monitor, or compile a (d, t, r, p) one");
            }
            (monitor, Policy::default())
        }
    };
    let policy = match &a.policy {
        Some(p) => Policy::from_file(p).map_err(|e| Fail(e.render()))?,
        None => default_policy,
    };
    let (monitor, policy) = (Arc::new(monitor), Arc::new(policy));
    // The policy must fit the monitor for the sessions' category.
    Session::new(&monitor, &policy, a.category.as_deref()).map_err(|e| Fail(e.render()))?;
    Ok((monitor, policy))
}

/// Reads the hook input on stdin: the raw bytes, and the event or why it is not one.
fn read_input() -> Result<(Vec<u8>, Result<HookInput, String>), Fail> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut raw)
        .map_err(|e| Fail(format!("reading the hook input on stdin: {e}")))?;
    let parsed: Result<HookInput, String> = if raw.len() as u64 > MAX_INPUT {
        Err(format!("the hook input is larger than {MAX_INPUT} bytes"))
    } else if raw.iter().all(u8::is_ascii_whitespace) {
        Err("no hook input on stdin (Claude Code sends the event's JSON)".into())
    } else {
        serde_json::from_slice(&raw).map_err(|e| {
            let m = e.to_string();
            let m = m.split(" at line ").next().unwrap_or_default();
            format!(
                "<stdin>:{}:{}: the hook input is not the JSON of a Claude Code hook event: {m}",
                e.line(),
                e.column()
            )
        })
    };
    Ok((raw, parsed))
}

fn claude_code(a: &ClaudeCodeArgs) -> Result<Option<Value>, Fail> {
    let Some(state_path) = &a.state else {
        let Some(socket) = &a.gateway else {
            return Err(Fail(
                "give --state FILE (and --monitor, else the built-in Claude Code monitor), or --gateway SOCKET".into(),
            ));
        };
        return through_gateway(socket);
    };
    let (monitor, policy) = load_monitor(a)?;
    let (raw, parsed) = read_input()?;
    let _lock = lock(state_path)?;
    let secret = secret_of(state_path)?;
    let mut state = read_state(state_path, &monitor, &secret)?;
    let input = match parsed {
        Ok(i) => i,
        Err(msg) => {
            // The input may have been a tool result that is now never observed: the session
            // it belongs to (every session, when its id cannot be found) fails closed from
            // now on.
            let id = session_id_in(&raw);
            let mut marked = 0;
            for (sid, s) in state.sessions.iter_mut() {
                if id.as_deref().is_none_or(|i| i == sid.as_str()) {
                    s.state.session.provenance_lost = true;
                    marked += 1;
                }
            }
            if marked > 0 {
                write_state(state_path, &state, &secret)?;
            }
            return Err(Fail(if marked > 0 {
                format!("{msg}; {marked} session(s) now treat values not seen in the user's prompts since as untrusted")
            } else {
                msg
            }));
        }
    };
    let now = unix_now();
    let answer = handle(&mut state, &input, &monitor, &policy, a, now)?;
    write_state(state_path, &state, &secret)?;
    Ok(answer)
}

/// The state file's secret (`FILE.key`): read; created with a fresh secret when neither it
/// nor the state file exists yet. A state file without its key, or a key the process cannot
/// read (the agent's sandboxed shell), fails closed.
fn secret_of(state: &Path) -> Result<augur_mcp::hook::Secret, Fail> {
    use augur_mcp::hook::{key_path, read_key_file, write_key_file, Secret};
    let key = key_path(state);
    if std::fs::symlink_metadata(&key).is_err() && std::fs::symlink_metadata(state).is_err() {
        let secret = Secret::random();
        write_key_file(&key, &secret).map_err(|e| {
            Fail(format!(
                "{}: cannot write the hook's secret: {e}",
                key.display()
            ))
        })?;
        return Ok(secret);
    }
    read_key_file(&key).map_err(|m| {
        Fail(format!(
            "{m}; if the key was lost, delete {} to start over (every session then starts again and trusts nothing it saw before)",
            state.display()
        ))
    })
}

/// The time a gateway may take to answer the hook (a gate takes microseconds; a result
/// observed, milliseconds).
const GATEWAY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// One request to the gateway's hook socket: `request` as one JSON line, the answer read to
/// the end of the connection.
fn ask_gateway(socket: &Path, request: &Value) -> Result<Value, Fail> {
    use std::os::unix::net::UnixStream;
    let shown = socket.display();
    let mut stream = UnixStream::connect(socket).map_err(|e| {
        Fail(format!(
            "--gateway {shown}: cannot reach the gateway ({e}); is `augur mcp --hook-socket {shown}` running?"
        ))
    })?;
    let fail = |e: std::io::Error| Fail(format!("--gateway {shown}: {e}"));
    stream
        .set_read_timeout(Some(GATEWAY_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(GATEWAY_TIMEOUT)))
        .map_err(fail)?;
    let mut line = serde_json::to_vec(request).map_err(|e| Fail(e.to_string()))?;
    line.push(b'\n');
    stream.write_all(&line).map_err(fail)?;
    let mut answer = Vec::new();
    stream
        .take(1 << 20)
        .read_to_end(&mut answer)
        .map_err(fail)?;
    serde_json::from_slice(&answer).map_err(|e| {
        Fail(format!(
            "--gateway {shown}: the gateway's answer is not JSON ({e})"
        ))
    })
}

/// Tells the gateway that an input may have been a tool result never observed (its session
/// then trusts nothing it saw before), and says so in the failure `msg` when it took it.
fn input_lost(socket: &Path, secret: &augur_mcp::hook::Secret, msg: String) -> Fail {
    let told = ask_gateway(
        socket,
        &json!({"hook_event_name": "augur/input_lost", augur_mcp::hook::SECRET_FIELD: secret.hex()}),
    )
    .ok()
    .filter(|a| a.get("error").is_none());
    Fail(match told {
        Some(_) => format!("{msg}; the gateway's session now treats values not seen in the user's prompts since as untrusted"),
        None => msg,
    })
}

/// `--gateway SOCKET`: the event goes to the running gateway (`augur mcp --hook-socket`),
/// which gates or observes it in its connection's session; its answer becomes the hook's.
fn through_gateway(socket: &Path) -> Result<Option<Value>, Fail> {
    let (_, parsed) = read_input()?;
    // The gateway's secret: a process that cannot read it (the agent's sandboxed shell)
    // cannot speak for Claude Code.
    let secret = augur_mcp::hook::read_key_file(&augur_mcp::hook::key_path(socket)).map_err(|m| {
        let shown = socket.display();
        if std::fs::symlink_metadata(socket).is_err() {
            // No gateway at all (its key goes with its socket).
            Fail(format!(
                "--gateway {shown}: cannot reach the gateway (no socket); is `augur mcp --hook-socket {shown}` running?"
            ))
        } else {
            Fail(format!("--gateway {shown}: {m}"))
        }
    })?;
    let input = parsed.map_err(|msg| input_lost(socket, &secret, msg))?;
    let shown = socket.display();
    let event = input.hook_event_name.clone();
    // An event that is not a gate (a tool's result, the user's prompt) that the gateway did
    // not take is a result never observed.
    let lost = |e: Fail| -> Fail {
        if event == "PreToolUse" {
            e
        } else {
            input_lost(socket, &secret, e.0)
        }
    };
    let answer = ask_gateway(
        socket,
        &json!({
            "hook_event_name": input.hook_event_name,
            "session_id": input.session_id,
            "prompt": input.prompt,
            "tool_name": input.tool_name,
            "tool_input": input.tool_input,
            "tool_response": input.tool_response,
            "error": input.error,
            "tool_use_id": input.tool_use_id,
            augur_mcp::hook::SECRET_FIELD: secret.hex(),
        }),
    )
    .map_err(lost)?;
    if let Some(e) = answer.get("error") {
        return Err(lost(Fail(format!(
            "--gateway {shown}: {}",
            e.as_str().unwrap_or("the gateway refused the event")
        ))));
    }
    if answer.get("refused").is_some() {
        // A prompt not recorded as the user's (a tool was in flight): it goes on, and the
        // user is told.
        let msg = answer
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("Augur: this prompt was not recorded as your request");
        return Ok(Some(json!({ "systemMessage": msg })));
    }
    if input.hook_event_name != "PreToolUse" {
        return Ok(None);
    }
    let verdict = answer.get("verdict").and_then(Value::as_str);
    let reason = format!(
        "augur gateway: {} (P = {:.4}): {}",
        verdict.unwrap_or("?"),
        answer
            .get("probability")
            .and_then(Value::as_f64)
            .unwrap_or(1.0),
        answer.get("reason").and_then(Value::as_str).unwrap_or("")
    );
    let decide = |d: &str| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": d,
                "permissionDecisionReason": reason,
            }
        })
    };
    match verdict {
        Some("allow") => Ok(None),
        Some("warn") => Ok(Some(json!({ "systemMessage": reason }))),
        Some("pause") => Ok(Some(decide("ask"))),
        Some("block") => Ok(Some(decide("deny"))),
        _ => Err(Fail(format!(
            "--gateway {shown}: the gateway's answer has no verdict: {answer}"
        ))),
    }
}

/// `"session_id": "..."` in an input that is not valid JSON (to mark that session).
fn session_id_in(raw: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let at = text.find("\"session_id\"")?;
    let rest = text[at + 12..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string())
}

/// The advisory lock of the state file (`FILE.lock` beside it), held until dropped.
fn lock(state: &Path) -> Result<std::fs::File, Fail> {
    use fs4::fs_std::FileExt;
    let mut name = state.as_os_str().to_owned();
    name.push(".lock");
    let path = PathBuf::from(name);
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| {
            Fail(format!(
                "{}: cannot open the lock file: {e}",
                path.display()
            ))
        })?;
    FileExt::lock_exclusive(&f)
        .map_err(|e| Fail(format!("{}: cannot lock: {e}", path.display())))?;
    Ok(f)
}

fn read_state(
    path: &Path,
    monitor: &Monitor,
    secret: &augur_mcp::hook::Secret,
) -> Result<StateFile, Fail> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(StateFile {
                format: FORMAT.into(),
                version: VERSION,
                monitor: monitor_hash(monitor),
                sessions: BTreeMap::new(),
                ended: VecDeque::new(),
            })
        }
        Err(e) => {
            return Err(Fail(format!(
                "{}: cannot read the state file: {e}",
                path.display()
            )))
        }
    };
    let fix = "delete it to start over (every session then starts again and trusts nothing it saw before)";
    // The state's JSON, then its MAC: only this hook, holding the secret, wrote it.
    let (body, mac) = match text.trim_end_matches('\n').rsplit_once('\n') {
        Some((body, tail)) => (
            body,
            serde_json::from_str::<Value>(tail)
                .ok()
                .and_then(|v| v.get("mac").and_then(Value::as_str).map(str::to_string)),
        ),
        None => (text.as_str(), None),
    };
    let authentic = mac
        .as_deref()
        .is_some_and(|m| secret.verify(body.as_bytes(), m));
    if !authentic {
        return Err(Fail(format!(
            "{}: the state file does not carry a valid MAC of the hook's secret ({}): something other than this hook wrote it (or it predates the MAC); it is not trusted; {fix}",
            path.display(),
            augur_mcp::hook::key_path(path).display()
        )));
    }
    let state: StateFile = serde_json::from_str(body).map_err(|e| {
        let m = e.to_string();
        let m = m.split(" at line ").next().unwrap_or_default().to_string();
        Fail(format!(
            "{}:{}:{}: not a state file of `augur hook claude-code`: {m}; {fix}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    if state.format != FORMAT || state.version != VERSION {
        return Err(Fail(format!(
            "{}: format `{}` version {}, expected `{FORMAT}` version {VERSION}; {fix}",
            path.display(),
            state.format,
            state.version
        )));
    }
    if state.monitor != monitor_hash(monitor) {
        return Err(Fail(format!(
            "{}: the sessions in it were gated with another monitor than {}; use another state file, or {fix}",
            path.display(),
            "--monitor"
        )));
    }
    Ok(state)
}

/// Write the state and its MAC to a temporary file beside it, then rename it over the old
/// one (a crash leaves the old state or the new one, never half of one).
fn write_state(
    path: &Path,
    state: &StateFile,
    secret: &augur_mcp::hook::Secret,
) -> Result<(), Fail> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fail = |e: &dyn std::fmt::Display| {
        Fail(format!(
            "{}: cannot write the state file: {e}",
            path.display()
        ))
    };
    let body = serde_json::to_vec(state).map_err(|e| fail(&e))?;
    let mac = json!({ "mac": secret.mac(&body) });
    let mut b = tempfile::Builder::new();
    b.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600));
    let mut tmp = b.tempfile_in(dir).map_err(|e| fail(&e))?;
    let mut w = std::io::BufWriter::new(tmp.as_file_mut());
    w.write_all(&body)
        .and_then(|()| writeln!(w))
        .and_then(|()| writeln!(w, "{mac}"))
        .and_then(|()| w.flush())
        .map_err(|e| fail(&e))?;
    drop(w);
    tmp.as_file().sync_all().map_err(|e| fail(&e))?;
    tmp.persist(path).map_err(|e| fail(&e.error))?;
    Ok(())
}

/// The session of a Claude Code session id, restored (or opened: `trusting` says whether a
/// new session starts with what it has seen — nothing — or has lost it).
fn session(
    state: &StateFile,
    id: &str,
    monitor: &Arc<Monitor>,
    policy: &Arc<Policy>,
    category: Option<&str>,
    fresh_trusting: bool,
) -> Result<(Session, VecDeque<GatedCall>), Fail> {
    if state.ended.iter().any(|e| e == id) {
        return Err(Fail(format!(
            "session {id} was ended (or evicted from the state file); its monitor state is gone, so it is refused: start a new Claude Code session"
        )));
    }
    match state.sessions.get(id) {
        Some(s) => {
            let session = Session::restore_full(monitor, policy, &s.state)
                .map_err(|e| Fail(format!("session {id} in the state file: {e}")))?;
            Ok((session, s.calls.clone()))
        }
        None => {
            let mut s = Session::new(monitor, policy, category).map_err(|e| Fail(e.render()))?;
            if !fresh_trusting {
                // A tool event of a session the state file does not hold: what it saw before
                // is unknown (the file was deleted or replaced): fail closed.
                s.lose_provenance();
            }
            Ok((s, VecDeque::new()))
        }
    }
}

fn save(state: &mut StateFile, id: &str, s: &Session, calls: VecDeque<GatedCall>, now: u64) {
    let in_flight = state
        .sessions
        .get(id)
        .map(|o| o.in_flight.clone())
        .unwrap_or_default();
    state.sessions.insert(
        id.to_string(),
        SavedSession {
            t: now,
            state: s.full_snapshot(),
            calls,
            in_flight,
        },
    );
    while state.sessions.len() > MAX_SESSIONS {
        let Some(lru) = state
            .sessions
            .iter()
            .filter(|(k, _)| k.as_str() != id)
            .min_by_key(|&(k, v)| (v.t, k))
            .map(|(k, _)| k.clone())
        else {
            break;
        };
        state.sessions.remove(&lru);
        end(state, lru);
    }
}

fn end(state: &mut StateFile, id: String) {
    state.ended.push_back(id);
    while state.ended.len() > MAX_ENDED {
        state.ended.pop_front();
    }
}

fn handle(
    state: &mut StateFile,
    input: &HookInput,
    monitor: &Arc<Monitor>,
    policy: &Arc<Policy>,
    a: &ClaudeCodeArgs,
    now: u64,
) -> Result<Option<Value>, Fail> {
    let id = input.session_id.as_str();
    let category = a.category.as_deref();
    let event = input.hook_event_name.as_str();
    let need = |field: &str| {
        Fail(format!(
            "the {event} input has no `{field}` (Claude Code sends it; is this hook registered for the right event?)"
        ))
    };
    // The tool and its arguments of a tool event (no arguments: `{}`).
    let tool_call = move || {
        let name = input
            .tool_name
            .as_deref()
            .ok_or_else(|| need("tool_name"))?;
        let args = input
            .tool_input
            .clone()
            .unwrap_or(Value::Object(Map::new()));
        Ok::<_, Fail>((name, args))
    };
    match event {
        "SessionStart" => {
            let (s, calls) = session(state, id, monitor, policy, category, true)?;
            save(state, id, &s, calls, now);
            Ok(None)
        }
        "SessionEnd" => {
            if state.sessions.remove(id).is_some() {
                end(state, id.to_string());
            }
            Ok(None)
        }
        "UserPromptSubmit" => {
            let prompt = input.prompt.as_deref().ok_or_else(|| need("prompt"))?;
            let (mut s, calls) = session(state, id, monitor, policy, category, true)?;
            let busy = state.sessions.get_mut(id).map_or(0, |o| {
                o.in_flight
                    .retain(|_, since| now.saturating_sub(*since) < IN_FLIGHT_SECS);
                o.in_flight.len()
            });
            if busy > 0 {
                // A tool is running: this prompt could come from it (the agent's shell
                // running the hook). Not the user's words, and what the session trusted
                // before is no longer known either. The prompt goes on: one the user queued
                // is not lost.
                s.lose_provenance();
                save(state, id, &s, calls, now);
                return Ok(Some(json!({
                    "systemMessage": format!("Augur: this prompt arrived while {busy} tool call(s) were running, so it could have come from a tool rather than from you; it was passed on but not recorded as your request, and from now on a value not seen in your prompts counts as untrusted")
                })));
            }
            s.observe(ObservationSource::User, None, prompt);
            save(state, id, &s, calls, now);
            Ok(None)
        }
        "Stop" => {
            // The agent's turn ended: none of its calls is running any more.
            if let Some(o) = state.sessions.get_mut(id) {
                o.in_flight.clear();
            }
            Ok(None)
        }
        "PreToolUse" => {
            let (name, args) = tool_call()?;
            let (mut s, mut calls) = session(state, id, monitor, policy, category, false)?;
            let d = s.gate(&Action::Tool(ToolCall::new(tool_name(name), &args)));
            let report = s.report(&d, id);
            if let Some(use_id) = &input.tool_use_id {
                calls.retain(|c| &c.id != use_id);
                calls.push_back(GatedCall {
                    id: use_id.clone(),
                    step: d.step,
                    advanced: d.advanced,
                });
                while calls.len() > MAX_CALLS {
                    calls.pop_front();
                }
            }
            save(state, id, &s, calls, now);
            if d.verdict != Verdict::Block {
                // It may run (a pause is put to the user): in flight until its PostToolUse.
                if let (Some(use_id), Some(o)) = (&input.tool_use_id, state.sessions.get_mut(id)) {
                    if o.in_flight.len() >= MAX_CALLS {
                        o.in_flight.clear();
                    }
                    o.in_flight.insert(use_id.clone(), now);
                }
            }
            let reason = format!(
                "augur monitor: {} (P = {:.4}; {}): {}",
                report.verdict.as_str(),
                report.probability,
                report.rule,
                report.reason
            );
            Ok(match d.verdict {
                Verdict::Allow => None,
                Verdict::Warn => Some(json!({ "systemMessage": reason })),
                Verdict::Pause => Some(json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "ask",
                        "permissionDecisionReason": reason,
                    }
                })),
                Verdict::Block => Some(json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": reason,
                    }
                })),
            })
        }
        "PostToolUse" | "PostToolUseFailure" => {
            let (name, args) = tool_call()?;
            let (mut s, calls) = session(state, id, monitor, policy, category, false)?;
            let gated = input
                .tool_use_id
                .as_ref()
                .and_then(|u| calls.iter().find(|c| &c.id == u))
                .cloned();
            let tool = tool_name(name);
            // It ran: an allowed call already moved the session; a paused one (the user
            // said yes) or one never gated moves it now.
            if !gated.as_ref().is_some_and(|c| c.advanced) {
                s.record(&Action::Tool(ToolCall::new(tool, &args)), true);
            }
            let result = input.tool_response.as_ref().or(input.error.as_ref());
            if let Some(r) = result {
                let text = result_text(r, &args);
                let step = gated.map(|c| c.step);
                let stats = s.observe_result(tool, step, &args, text.as_bytes());
                let source = format!("the result of `{tool}`");
                if let Some(what) = augur_mcp::hook::unreadable(r) {
                    s.mark_unread(&what, &source);
                }
                if stats.skipped > 0 {
                    s.mark_unread(
                        &format!("the last {} bytes of a long result", stats.skipped),
                        &source,
                    );
                }
            }
            save(state, id, &s, calls, now);
            if let (Some(use_id), Some(o)) = (&input.tool_use_id, state.sessions.get_mut(id)) {
                o.in_flight.remove(use_id);
            }
            Ok(None)
        }
        // Notification, Stop, SubagentStop, PreCompact, ...: nothing to gate or observe.
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_id_is_found_in_broken_json() {
        assert_eq!(
            session_id_in(br#"{"session_id": "abc", "tool_response": {"x": "#).as_deref(),
            Some("abc")
        );
        assert_eq!(session_id_in(b"garbage"), None);
    }
}
