//! The tools' logic, independent of the transport: [`Server::tools`] lists them (name,
//! description, JSON schema), [`Server::call`] runs one. The rmcp glue ([`crate::stdio`])
//! only forwards.
//!
//! Sessions: an agent cannot switch the monitor off through this server. A session is opened
//! by the harness (`--session ID` at start, or the harness-only `open_session` tool); a gate
//! on an unknown or expired id is refused with a block decision, never restarted at the start
//! state; sessions idle longer than the time to live expire (their ids are remembered and
//! refused); at the maximum number of sessions new ones are refused and open ones are never
//! evicted. `reset`, `record(executed=false)`, `approve`, `deny`, `open_session` and
//! `end_session` are harness-only ([`Config::harness`]).

use crate::error::{ErrorKind, Result, ToolError};
use crate::ops::{self, CheckRequest, ModelSource};
use crate::pause::{self, PendingPause};
use augur_check::Limits;
use augur_gate::burned::BurnedIds;
use augur_gate::journal::{self, Journal, Loaded};
use augur_gate::session::DecisionReport;
use augur_gate::{Action, Monitor, Policy, Session, ToolCall, Verdict};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// The server's configuration (the options of `augur mcp`).
#[derive(Clone, Debug)]
pub struct Config {
    /// The compiled monitor the sessions gate with.
    pub monitor: Arc<Monitor>,
    /// The policy.
    pub policy: Arc<Policy>,
    /// The folder `model_path` is read from (`None`: only `model_text`).
    pub root: Option<PathBuf>,
    /// Enables the harness-only tools. Set by whoever starts the server (the harness), never
    /// by the agent.
    pub harness: bool,
    /// Sessions opened at start: (id, category).
    pub sessions: Vec<(String, Option<String>)>,
    /// At most this many open sessions; beyond it new sessions are refused.
    pub max_sessions: usize,
    /// A session idle for longer expires (its id is then refused).
    pub session_ttl: Duration,
    /// The time limit of one check, horizon or PAC request.
    pub timeout: Duration,
    /// The largest model a request may build (states).
    pub max_states: usize,
    /// The most transitions a learned model's implicit (smoothed) rows may expand to.
    pub max_smoothed_transitions: usize,
    /// At most this many checks run at once; more are refused (busy).
    pub max_concurrent_checks: usize,
    /// The largest `model_text` (bytes).
    pub max_text_bytes: usize,
    /// The largest horizon of a `horizon` request.
    pub max_horizon: usize,
    /// The size in bits of the filter that keeps burned ids once the exact list of the latest
    /// max(4 × max_sessions, 4096) has rolled over ([`BurnedIds`]).
    pub burned_bits: u64,
    /// The state journal (`--state FILE`): every session move and burned id, restored at
    /// start ([`augur_gate::journal`]). `None`: a restart resets every session.
    pub state: Option<PathBuf>,
    /// Gateway mode (`augur mcp --upstream`, [`crate::gateway`]): the names of the proxied
    /// tools (as served and as the upstreams name them). The gateway gates and records those
    /// calls itself, so `record` is refused without [`Config::harness`], and a `gate` on one of
    /// these names is answered without moving the session (`"dry_run": true`). `None`: not a
    /// gateway. Shared with the gateway, which adds the tools an upstream lists later (a
    /// restart, `notifications/tools/list_changed`); names are never removed.
    pub gateway_tools: Option<Arc<RwLock<HashSet<String>>>>,
}

/// Defaults of [`Config`].
pub mod defaults {
    /// Open sessions at most.
    pub const MAX_SESSIONS: usize = 1000;
    /// Seconds of idleness before a session expires.
    pub const SESSION_TTL_SECS: u64 = 3600;
    /// Seconds per check.
    pub const TIMEOUT_SECS: f64 = 10.0;
    /// States per model.
    pub const MAX_STATES: usize = 1_000_000;
    /// Transitions of a learned model's implicit rows (the model readers' default).
    pub const MAX_SMOOTHED_TRANSITIONS: usize = augur_formats::DEFAULT_MAX_SMOOTHED_TRANSITIONS;
    /// Concurrent checks.
    pub const MAX_CONCURRENT_CHECKS: usize = 2;
    /// Bytes of `model_text`.
    pub const MAX_TEXT_BYTES: usize = 4 << 20;
    /// The largest horizon.
    pub const MAX_HORIZON: usize = 10_000;
    /// Properties per check.
    pub const MAX_PROPERTIES: usize = 64;
    /// Bytes of a session id.
    pub const MAX_ID_BYTES: usize = 128;
}

impl Config {
    /// A configuration with the defaults, for `monitor` and `policy`.
    pub fn new(monitor: Arc<Monitor>, policy: Arc<Policy>) -> Config {
        Config {
            monitor,
            policy,
            root: None,
            harness: false,
            sessions: Vec::new(),
            max_sessions: defaults::MAX_SESSIONS,
            session_ttl: Duration::from_secs(defaults::SESSION_TTL_SECS),
            timeout: Duration::from_secs_f64(defaults::TIMEOUT_SECS),
            max_states: defaults::MAX_STATES,
            max_smoothed_transitions: defaults::MAX_SMOOTHED_TRANSITIONS,
            max_concurrent_checks: defaults::MAX_CONCURRENT_CHECKS,
            max_text_bytes: defaults::MAX_TEXT_BYTES,
            max_horizon: defaults::MAX_HORIZON,
            burned_bits: BurnedIds::DEFAULT_BITS,
            state: None,
            gateway_tools: None,
        }
    }
}

/// The built-in monitor: SafetyDrift's 5-state risk-level chain (`models/safetydrift.tra`),
/// compiled for `P=? [ F<=5 "violated" ]` with the built-in classifier.
pub fn default_monitor() -> std::result::Result<Monitor, ToolError> {
    use augur_formats::explicit::{read_prism_explicit_from, ExplicitInputs};
    use std::io::Cursor;
    use std::path::Path;
    let mut tra = Cursor::new(include_str!("../../../models/safetydrift.tra"));
    let mut lab = Cursor::new(include_str!("../../../models/safetydrift.lab"));
    let mut sta = Cursor::new(include_str!("../../../models/safetydrift.sta"));
    let inputs = ExplicitInputs {
        tra: (Path::new("safetydrift.tra"), &mut tra),
        lab: Some((Path::new("safetydrift.lab"), &mut lab)),
        srew: None,
        trew: None,
        sta: Some((Path::new("safetydrift.sta"), &mut sta)),
    };
    let (dtmc, _) =
        read_prism_explicit_from(inputs, &Default::default()).map_err(|e| ToolError::format(&e))?;
    let opts = augur_monitor::compile::CompileOptions::new("P=? [ F<=5 \"violated\" ]");
    augur_monitor::compile::compile_dtmcs(
        vec![augur_monitor::compile::Source::new(dtmc, "safetydrift.tra")],
        &opts,
    )
    .map_err(|e| ToolError::monitor(&e))
}

/// A tool: name, description, input schema, and whether only the harness may call it.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// The name.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// The JSON schema of its arguments.
    pub schema: Value,
    /// Harness-only.
    pub harness: bool,
}

/// A tool call's answer: the JSON value (MCP `structuredContent`, and its text as the
/// content), or a tool error (`isError: true`) with the located message.
pub type ToolResult = Result<Value>;

/// Why a call is not a tool call at all (answered with a JSON-RPC error).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No such tool.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// The arguments are not a JSON object.
    #[error("the arguments of `{0}` must be a JSON object")]
    NotAnObject(String),
}

struct Entry {
    session: Session,
    last: Instant,
    pause: Option<PendingPause>,
}

struct Sessions {
    open: HashMap<String, Entry>,
    /// The latest burned ids, exactly (at most max(4 × max_sessions, 4096)), oldest first.
    gone: HashSet<String>,
    gone_order: VecDeque<String>,
    /// Every burned id, in a Bloom filter (no false negatives): what keeps an id refused once
    /// the exact list has rolled over.
    burned: BurnedIds,
    /// (last use, id) in time order; an entry is stale when the session was used since.
    order: VecDeque<(Instant, String)>,
    next_pause: u64,
    journal: Option<Journal>,
    /// Ids burned since the last commit.
    unsaved_burns: Vec<String>,
    /// Sessions moved since the last commit.
    dirty: Vec<String>,
    pause_saved: u64,
}

/// The MCP server's state: the configuration and the sessions.
pub struct Server {
    cfg: Config,
    sessions: Mutex<Sessions>,
    checks_running: AtomicUsize,
    tools: Vec<ToolSpec>,
    /// The clock's origin: an `Instant` and the Unix time then (journal times are Unix
    /// seconds).
    epoch: (Instant, u64),
    startup: String,
}

fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

fn session_prop() -> Value {
    json!({"type": "string", "description": "The session id the harness gave you (or that open_session returned)."})
}

fn model_props(extra: Value) -> Value {
    let mut m = json!({
        "model_text": {"type": "string", "description": "The text of the model (default: the PRISM language; see format). Exactly one of model_text and model_path."},
        "model_path": {"type": "string", "description": "A model file under the server's --root folder (.pm/.prism, .tra with its .lab, .drn, .json). Exactly one of model_text and model_path."},
        "format": {"type": "string", "enum": ["prism", "drn", "json", "tra"], "description": "The format of model_text (default prism)."},
        "constants": {"description": "Values of constants: \"N=3,p=0.5\" or {\"N\": 3, \"p\": 0.5}.", "type": ["string", "object"]},
    });
    if let (Some(m), Value::Object(e)) = (m.as_object_mut(), extra) {
        m.extend(e);
    }
    m
}

fn tool_specs() -> Vec<ToolSpec> {
    let action_props = json!({
        "session": session_prop(),
        "tool": {"type": "string", "description": "The name of the tool you are about to call."},
        "args": {"description": "The arguments you are about to pass to it (an object, or a JSON string holding one).", "type": ["object", "string"]},
        "state": {"type": "object", "description": "For monitors compiled over an abstraction spec: the concrete state the action leads to (variable -> value), instead of tool arguments."},
    });
    let mut record_props = action_props.clone();
    record_props["executed"] = json!({"type": "boolean", "description": "Whether the action was executed (default true). false (the action did not happen) is harness-only."});
    vec![
        ToolSpec {
            name: "gate",
            description: "Call this BEFORE every other tool call, with the tool's name and the exact arguments you intend to use. Returns the runtime monitor's decision: verdict allow (go ahead), warn (go ahead with care; the reason says why), pause (stop and wait: a person must approve; do not call the tool) or block (do not call the tool; choose another way or stop), with the probability of reaching an unsafe state within the horizon and the reason. An unknown or expired session is always blocked.",
            schema: obj(action_props.clone(), &["session"]),
            harness: false,
        },
        ToolSpec {
            name: "record",
            description: "Tell the monitor what happened to an action: executed=true when a tool call ran (e.g. one that was not gated, or one a person approved). The monitor's state moves as if the action was allowed.",
            schema: obj(record_props, &["session", "tool"]),
            harness: false,
        },
        ToolSpec {
            name: "session_state",
            description: "The session's current monitor state: the model state, (d, t, r) and risk level for classifier monitors, the step count, a pending pause.",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: false,
        },
        ToolSpec {
            name: "summary",
            description: "The session's counts: actions gated, decisions per verdict (allow, warn, pause, block), the peak probability and risk, actions executed despite a pause or block.",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: false,
        },
        ToolSpec {
            name: "check",
            description: "Model-check PCTL properties on a discrete-time Markov chain (the PRISM language, or explicit formats). Returns the results as `augur check --json` prints them: per property the value, sound bounds, the method and time. A model or property error is returned as a tool error with the file, line, column and a caret.",
            schema: obj(
                model_props(json!({
                    "properties": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "PCTL properties, e.g. [\"P=? [ F<=5 \\\"unsafe\\\" ]\"]."},
                    "method": {"type": "string", "description": "auto (default, sound), exact, interval, topological, power, jacobi, gauss-seidel, closed-form."},
                    "all_states": {"type": "boolean", "description": "Also report every state's value."},
                })),
                &["properties"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "horizon",
            description: "The curve P(F<=h target) for h = 1..max from the initial state (and with all_states every state's), for a label or boolean state formula `target`.",
            schema: obj(
                model_props(json!({
                    "target": {"type": "string", "description": "A label (e.g. \"unsafe\") or a boolean state formula."},
                    "max": {"type": "integer", "minimum": 1, "description": "The largest horizon."},
                    "all_states": {"type": "boolean"},
                })),
                &["target", "max"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "explain",
            description: "Why is a probability or expected reward so large? For `P<=θ [ φ U ψ ]` (or `F ψ`, `U<=k`, `F<=k`, `P=?`): the most probable paths that satisfy the path formula (states by name, probability, cumulative probability) and how many of them already exceed θ (a counterexample); with `subsystem` a small set of states whose sub-chain alone exceeds θ (`heuristic`, or `minimal` for small models), as DOT (`dot`) or a PRISM model (`prism`) that `check` confirms. For `R{\"r\"}<=r [ F ψ ]`: the paths and states carrying most of the expected reward.",
            schema: obj(
                model_props(json!({
                    "property": {"type": "string", "description": "One property, e.g. \"P<=0.1 [ F \\\"unsafe\\\" ]\"."},
                    "paths": {"type": "integer", "minimum": 0, "maximum": ops::MAX_EXPLAIN_PATHS, "description": "How many paths to list (default 10)."},
                    "from": {"type": "string", "description": "The start state: an index, or a boolean state formula that holds in one state (default: the initial state)."},
                    "subsystem": {"type": "string", "enum": ["heuristic", "minimal"], "description": "Find a critical subsystem: grown from the states ranked by their share of the probability (then pruned), or a minimum one exactly (small models)."},
                    "dot": {"type": "boolean", "description": "Include the subsystem in DOT, the paths highlighted (`dot`)."},
                    "prism": {"type": "boolean", "description": "Include the subsystem as a PRISM model (`subsystem_model`), its leaving transitions to a sink."},
                })),
                &["property"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "pac",
            description: "PAC sample-size bounds: for a learned model (Augur JSON with transition counts, as `augur learn` writes it), whether every state has enough observations for accuracy epsilon with confidence 1-delta and how many more are needed; or the calculator form with `states` (and p_hat, observations).",
            schema: obj(
                json!({
                    "model_text": {"type": "string", "description": "The learned model's JSON text."},
                    "model_path": {"type": "string", "description": "The learned model's file under --root."},
                    "epsilon": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "delta": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                    "hoeffding": {"type": "boolean", "description": "Use the Hoeffding bound instead of Pro2Guard's (Chen et al.)."},
                    "states": {"type": "integer", "minimum": 1, "description": "Calculator: the number of states."},
                    "p_hat": {"type": "number", "description": "Calculator: the binding successor's empirical probability (default: the worst case 1/2)."},
                    "observations": {"type": "integer", "minimum": 0, "description": "Calculator: observations out of the state."},
                }),
                &["epsilon", "delta"],
            ),
            harness: false,
        },
        ToolSpec {
            name: "open_session",
            description: "Harness only: open a monitor session (at the start state). Returns its id.",
            schema: obj(
                json!({
                    "session": {"type": "string", "description": "The id to use (default: a fresh one)."},
                    "category": {"type": "string", "description": "The run's category (selects the monitor's table and the policy's overrides)."},
                }),
                &[],
            ),
            harness: true,
        },
        ToolSpec {
            name: "end_session",
            description: "Harness only: close a session (its id is refused afterwards).",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: true,
        },
        ToolSpec {
            name: "reset",
            description: "Harness only: put a session back at the start state with fresh counts.",
            schema: obj(json!({"session": session_prop()}), &["session"]),
            harness: true,
        },
        ToolSpec {
            name: "approve",
            description: "Harness only: a person approved the paused action `pause_id`; it is executed, and the session moves to the state it leads to.",
            schema: obj(json!({"session": session_prop(), "pause_id": {"type": "string"}}), &["session", "pause_id"]),
            harness: true,
        },
        ToolSpec {
            name: "deny",
            description: "Harness only: a person denied the paused action `pause_id`; it is not executed and the session stays where it is.",
            schema: obj(json!({"session": session_prop(), "pause_id": {"type": "string"}}), &["session", "pause_id"]),
            harness: true,
        },
    ]
}

// Argument accessors: a missing or mistyped argument is a tool error naming it.
fn opt_str<'a>(a: &'a Map<String, Value>, k: &str) -> Result<Option<&'a str>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ToolError::param(format!("`{k}` must be a string"))),
    }
}
fn req_str<'a>(a: &'a Map<String, Value>, k: &str) -> Result<&'a str> {
    opt_str(a, k)?.ok_or_else(|| ToolError::param(format!("`{k}` is required")))
}
fn opt_bool(a: &Map<String, Value>, k: &str) -> Result<Option<bool>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(ToolError::param(format!("`{k}` must be true or false"))),
    }
}
fn opt_f64(a: &Map<String, Value>, k: &str) -> Result<Option<f64>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(_) => Err(ToolError::param(format!("`{k}` must be a number"))),
    }
}
fn opt_u64(a: &Map<String, Value>, k: &str) -> Result<Option<u64>> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| ToolError::param(format!("`{k}` must be a non-negative integer"))),
        Some(_) => Err(ToolError::param(format!(
            "`{k}` must be a non-negative integer"
        ))),
    }
}
fn check_keys(a: &Map<String, Value>, spec: &ToolSpec) -> Result<()> {
    let known = spec.schema["properties"].as_object();
    for k in a.keys() {
        if !known.is_some_and(|m| m.contains_key(k)) {
            return Err(ToolError::param(format!(
                "`{}` has no argument `{k}`",
                spec.name
            )));
        }
    }
    Ok(())
}

fn valid_id(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > defaults::MAX_ID_BYTES
        || id.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(ToolError::param(format!(
            "a session id is 1 to {} bytes without spaces or control characters",
            defaults::MAX_ID_BYTES
        )));
    }
    Ok(())
}

/// Releases a check slot when dropped.
struct CheckSlot<'a>(&'a AtomicUsize);
impl Drop for CheckSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Server {
    /// A server; the sessions of `cfg.sessions` are opened now. Errors when one cannot be
    /// opened (a category without a table, a duplicate id) or there are more than the
    /// maximum.
    ///
    /// With [`Config::state`] the journal is read first (sessions come back in their state,
    /// burned ids stay burned; a journal of another monitor or server, or a corrupt one, is
    /// an error), then compacted; a `--session` id the journal holds open is kept as it is,
    /// one it holds burned stays refused (said in [`Server::startup_message`]).
    pub fn new(cfg: Config) -> Result<Server> {
        let mut server = Server {
            sessions: Mutex::new(Sessions {
                open: HashMap::new(),
                gone: HashSet::new(),
                gone_order: VecDeque::new(),
                burned: BurnedIds::new(cfg.burned_bits),
                order: VecDeque::new(),
                next_pause: 1,
                journal: None,
                unsaved_burns: Vec::new(),
                dirty: Vec::new(),
                pause_saved: 1,
            }),
            checks_running: AtomicUsize::new(0),
            tools: tool_specs(),
            epoch: (Instant::now(), journal::unix_now()),
            startup: String::new(),
            cfg,
        };
        let now = server.epoch.0;
        let mut notes = Vec::new();
        if let Some(path) = server.cfg.state.clone() {
            let r = server
                .restore(&path)
                .map_err(|e| ToolError::new(ErrorKind::Param, e.render()))?;
            notes.push(r.message("augur mcp"));
        } else {
            notes.push("augur mcp: sessions are kept in memory only; a restart of this process resets every session to its start state (--state FILE keeps them)".to_string());
        }
        for (id, cat) in server.cfg.sessions.clone() {
            let known = {
                let s = server.lock();
                if s.open.contains_key(&id) {
                    Some(false)
                } else if s.gone.contains(&id) || s.burned.contains(&id) {
                    Some(true)
                } else {
                    None
                }
            };
            match known {
                Some(false) => {}
                Some(true) => notes.push(format!(
                    "augur mcp: --session {id}: the journal holds it as ended or expired; it stays refused (ids are never reused)"
                )),
                None => {
                    server.open(Some(&id), cat.as_deref(), now)?;
                }
            }
        }
        server
            .commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        server.startup = notes.join("\n");
        Ok(server)
    }

    /// What the server says at start on stderr: whether a restart resets sessions, or which
    /// journal was restored (open sessions, burned ids).
    pub fn startup_message(&self) -> &str {
        &self.startup
    }

    /// Unix seconds of `t`.
    fn unix_of(&self, t: Instant) -> u64 {
        let (base, unix) = self.epoch;
        match t.checked_duration_since(base) {
            Some(d) => unix + d.as_secs(),
            None => unix.saturating_sub(base.duration_since(t).as_secs()),
        }
    }

    fn restore(&self, path: &std::path::Path) -> augur_monitor::Result<journal::Restored> {
        let header = journal::Header::new("mcp", &self.cfg.monitor);
        let loaded = journal::load(path, &header)?;
        let mut report = journal::Restored {
            path: path.display().to_string(),
            existed: loaded.existed,
            partial: loaded.partial,
            ..Default::default()
        };
        let (base, unix) = self.epoch;
        let ttl = self.cfg.session_ttl;
        let asked = self.cfg.burned_bits;
        let mut open: HashMap<String, (u64, Entry)> = HashMap::new();
        let mut guard = self.lock();
        let s = &mut *guard;
        for (line, e) in loaded.entries {
            match e {
                journal::Entry::Session {
                    id,
                    t,
                    session,
                    pause,
                } => {
                    let restored = Session::restore(&self.cfg.monitor, &self.cfg.policy, &session)
                        .map_err(|err| {
                            Loaded::error_at(path, line, format!("session `{id}`: {err}"))
                        })?;
                    let pause = match pause {
                        None => None,
                        Some(v) => {
                            Some(serde_json::from_value::<PendingPause>(v).map_err(|err| {
                                Loaded::error_at(
                                    path,
                                    line,
                                    format!("session `{id}`: pause: {err}"),
                                )
                            })?)
                        }
                    };
                    open.insert(
                        id,
                        (
                            t,
                            Entry {
                                session: restored,
                                last: base,
                                pause,
                            },
                        ),
                    );
                }
                journal::Entry::Burn { id } => {
                    open.remove(&id);
                    remember_gone(s, &self.cfg, id, true);
                }
                journal::Entry::Gone { ids } => {
                    for id in ids {
                        open.remove(&id);
                        remember_gone(s, &self.cfg, id, false);
                    }
                }
                ref f @ journal::Entry::Filter { .. } => {
                    let f = f
                        .to_filter()
                        .unwrap_or_else(|| Err("not a filter".into()))
                        .map_err(|m| Loaded::error_at(path, line, m))?;
                    if s.burned.count() == 0 {
                        // The journal's filter, of the size it was written with.
                        s.burned = f;
                    } else {
                        s.burned
                            .union(&f)
                            .map_err(|m| Loaded::error_at(path, line, m))?;
                    }
                }
                journal::Entry::NextPause { n } => s.next_pause = s.next_pause.max(n),
            }
        }
        if s.burned.bits() != BurnedIds::new(asked).bits() {
            report.kept_bits = Some((asked, s.burned.bits()));
        }
        let mut open: Vec<(String, (u64, Entry))> = open.into_iter().collect();
        open.sort_by(|a, b| (a.1 .0, &a.0).cmp(&(b.1 .0, &b.0)));
        for (id, (t, mut e)) in open {
            let age = Duration::from_secs(unix.saturating_sub(t));
            if age > ttl {
                report.expired += 1;
                remember_gone(s, &self.cfg, id, true);
                continue;
            }
            e.last = base.checked_sub(age).unwrap_or(base);
            s.order.push_back((e.last, id.clone()));
            s.open.insert(id, e);
        }
        report.open = s.open.len();
        report.burned = s.burned.count();
        s.unsaved_burns.clear();
        s.dirty.clear();
        s.pause_saved = s.next_pause;
        let entries = self.snapshot_entries(s);
        s.journal = Some(Journal::create(path, header, &entries)?);
        Ok(report)
    }

    /// The journal entries of the sessions now (compaction).
    fn snapshot_entries(&self, s: &Sessions) -> Vec<journal::Entry> {
        let mut v = vec![
            journal::Entry::filter(&s.burned),
            journal::Entry::Gone {
                ids: s.gone_order.iter().cloned().collect(),
            },
            journal::Entry::NextPause { n: s.next_pause },
        ];
        let mut open: Vec<(&String, &Entry)> = s.open.iter().collect();
        open.sort_by(|a, b| (a.1.last, a.0).cmp(&(b.1.last, b.0)));
        for (id, e) in open {
            v.push(self.session_entry(id, e));
        }
        v
    }

    fn session_entry(&self, id: &str, e: &Entry) -> journal::Entry {
        journal::Entry::Session {
            id: id.to_string(),
            t: self.unix_of(e.last),
            session: Box::new(e.session.snapshot()),
            pause: e.pause.as_ref().and_then(|p| serde_json::to_value(p).ok()),
        }
    }

    /// Write what changed to the journal (burned ids, moved sessions, the pause counter),
    /// compacting it when it has grown too large.
    fn commit(&self) -> augur_monitor::Result<()> {
        let mut guard = self.lock();
        let s = &mut *guard;
        if s.journal.is_none() {
            s.unsaved_burns.clear();
            s.dirty.clear();
            return Ok(());
        }
        let mut entries: Vec<journal::Entry> = s
            .unsaved_burns
            .drain(..)
            .map(|id| journal::Entry::Burn { id })
            .collect();
        let dirty = std::mem::take(&mut s.dirty);
        for id in dirty {
            if let Some(e) = s.open.get(&id) {
                entries.push(self.session_entry(&id, e));
            }
        }
        if s.next_pause != s.pause_saved {
            entries.push(journal::Entry::NextPause { n: s.next_pause });
            s.pause_saved = s.next_pause;
        }
        if let Some(j) = s.journal.as_mut() {
            j.append(&entries)?;
        }
        if s.journal.as_ref().is_some_and(Journal::wants_compaction) {
            let snap = self.snapshot_entries(s);
            if let Some(j) = s.journal.as_mut() {
                j.compact(&snap)?;
            }
        }
        Ok(())
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The tools this server offers (the harness-only ones only with [`Config::harness`]).
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.iter().filter(|t| self.cfg.harness || !t.harness)
    }

    /// The names of all the server's tools, harness-only ones included.
    pub fn all_tool_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name)
    }

    /// The number of open sessions.
    pub fn open_sessions(&self) -> usize {
        self.lock().open.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        // A panic while holding the lock cannot leave the map inconsistent in a way that
        // matters more than refusing service; recover the guard.
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs tool `name` with `args` now.
    pub fn call(
        &self,
        name: &str,
        args: Option<Value>,
    ) -> std::result::Result<ToolResult, CallError> {
        self.call_at(name, args, Instant::now())
    }

    /// Runs tool `name` with `args` at time `now` (for tests of expiry).
    pub fn call_at(
        &self,
        name: &str,
        args: Option<Value>,
        now: Instant,
    ) -> std::result::Result<ToolResult, CallError> {
        let Some(spec) = self.tools.iter().find(|t| t.name == name) else {
            return Err(CallError::UnknownTool(name.to_string()));
        };
        let args = match args {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Err(CallError::NotAnObject(name.to_string())),
        };
        if spec.harness && !self.cfg.harness {
            return Ok(Err(ToolError::refused(format!(
                "`{name}` is a harness-only tool: it is enabled only when the server is started with --harness"
            ))));
        }
        if let Err(e) = check_keys(&args, spec) {
            return Ok(Err(e));
        }
        let result = match name {
            "gate" => self.gate(&args, now),
            "record" if self.cfg.gateway_tools.is_some() && !self.cfg.harness => {
                Err(ToolError::refused(
                    "`record` is refused in gateway mode: the gateway records the calls it forwards itself",
                ))
            }
            "record" => self.record(&args, now),
            "session_state" => self.session_state(&args, now),
            "summary" => self.summary(&args, now),
            "open_session" => self.open_tool(&args, now),
            "end_session" => self.end_session(&args, now),
            "reset" => self.with_session(&args, now, |id, e| {
                e.session.reset();
                e.pause = None;
                Ok(json!({"session": id, "reset": true}))
            }),
            "approve" => self.answer_pause(&args, now, true),
            "deny" => self.answer_pause(&args, now, false),
            "check" => self.heavy(|| self.check(&args)),
            "horizon" => self.heavy(|| self.horizon(&args)),
            "explain" => self.heavy(|| self.explain(&args)),
            "pac" => self.heavy(|| self.pac(&args)),
            _ => Err(ToolError::new(
                ErrorKind::Internal,
                format!("tool `{name}` has no handler"),
            )),
        };
        // The journal holds every move before its answer leaves: when it cannot be written,
        // the answer is withheld (a tool error), never an unjournaled allow.
        if let Err(e) = self.commit() {
            return Ok(Err(ToolError::new(
                ErrorKind::Internal,
                format!(
                    "the state journal cannot be written ({}); the answer is withheld",
                    e.render().trim_start_matches("error: ")
                ),
            )));
        }
        Ok(result)
    }

    fn open_tool(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let id = opt_str(args, "session")?;
        let cat = opt_str(args, "category")?;
        let id = self.open(id, cat, now)?;
        Ok(json!({"session": id}))
    }

    /// Expire the sessions idle for longer than the time to live: O(1) amortised per call
    /// (the queue's front is the least recently used session once its stale entries, of
    /// sessions used again since, are dropped).
    fn sweep(&self, s: &mut Sessions, now: Instant) {
        let ttl = self.cfg.session_ttl;
        while let Some((t, id)) = s.order.front() {
            let live = s.open.get(id).is_some_and(|e| e.last == *t);
            if !live {
                s.order.pop_front();
                continue;
            }
            if now.saturating_duration_since(*t) <= ttl {
                return;
            }
            if let Some((_, id)) = s.order.pop_front() {
                s.open.remove(&id);
                self.bury(s, id);
            }
        }
    }

    /// Mark `id` used at `now` (the expiry queue gets an entry; stale ones are dropped in
    /// bulk when they outnumber the open sessions, amortised O(1)).
    fn touch(s: &mut Sessions, id: &str, now: Instant) {
        if let Some(e) = s.open.get_mut(id) {
            if e.last != now {
                e.last = now;
                s.order.push_back((now, id.to_string()));
            }
        }
        if s.order.len() > 2 * s.open.len() + 64 {
            let open = &s.open;
            s.order
                .retain(|(t, k)| open.get(k).is_some_and(|e| e.last == *t));
        }
        if s.journal.is_some() && !s.dirty.iter().any(|d| d == id) {
            s.dirty.push(id.to_string());
        }
    }

    fn bury(&self, s: &mut Sessions, id: String) {
        remember_gone(s, &self.cfg, id, true);
    }

    /// Whether `id` was ever used (open, or burned: exactly among the latest, or in the
    /// filter).
    fn used(s: &Sessions, id: &str) -> bool {
        s.open.contains_key(id) || s.gone.contains(id) || s.burned.contains(id)
    }

    fn open(&self, id: Option<&str>, category: Option<&str>, now: Instant) -> Result<String> {
        let mut s = self.lock();
        self.sweep(&mut s, now);
        if s.open.len() >= self.cfg.max_sessions {
            return Err(ToolError::refused(format!(
                "the maximum of {} open sessions is reached; end a session first",
                self.cfg.max_sessions
            )));
        }
        let id = match id {
            Some(id) => {
                valid_id(id)?;
                if Self::used(&s, id) {
                    return Err(ToolError::refused(format!(
                        "session `{id}` exists or existed: ids are not reused"
                    )));
                }
                id.to_string()
            }
            None => loop {
                let id = format!("s-{:032x}", rand::random::<u128>());
                if !Self::used(&s, &id) {
                    break id;
                }
            },
        };
        let session = Session::new(&self.cfg.monitor, &self.cfg.policy, category)
            .map_err(|e| ToolError::gate(&e))?;
        s.open.insert(
            id.clone(),
            Entry {
                session,
                last: now,
                pause: None,
            },
        );
        s.order.push_back((now, id.clone()));
        Self::touch(&mut s, &id, now);
        Ok(id)
    }

    fn refusal(&self, s: &Sessions, id: &str) -> (&'static str, String) {
        if s.gone.contains(id) || s.burned.contains(id) {
            (
                "expired",
                format!("session `{id}` has expired or was ended; it is never restarted: ask the harness for a new session"),
            )
        } else {
            (
                "unknown",
                format!("session `{id}` is unknown: use the session id the harness gave you"),
            )
        }
    }

    /// Runs `f` on an open session; an unknown or expired id is a refused tool error.
    fn with_session(
        &self,
        args: &Map<String, Value>,
        now: Instant,
        f: impl FnOnce(&str, &mut Entry) -> Result<Value>,
    ) -> Result<Value> {
        let id = req_str(args, "session")?;
        let mut s = self.lock();
        self.sweep(&mut s, now);
        if !s.open.contains_key(id) {
            let (_, why) = self.refusal(&s, id);
            return Err(ToolError::refused(why));
        }
        Self::touch(&mut s, id, now);
        let e = s
            .open
            .get_mut(id)
            .ok_or_else(|| ToolError::refused("the session is gone"))?;
        f(id, e)
    }

    fn gate(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let id = req_str(args, "session")?;
        let tool = opt_str(args, "tool")?;
        let state = match args.get("state") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err(ToolError::param("`state` must be an object")),
        };
        if tool.is_none() && state.is_none() {
            return Err(ToolError::param("give `tool` (with `args`) or `state`"));
        }
        let raw = args.get("args").cloned().unwrap_or(Value::Null);
        let call_args = match raw {
            Value::Null => Value::Object(Map::new()),
            v @ (Value::Object(_) | Value::String(_)) => {
                ToolCall::parse_args(v).map_err(|e| ToolError::param(format!("`args`: {e}")))?
            }
            _ => {
                return Err(ToolError::param(
                    "`args` must be an object or a JSON string",
                ))
            }
        };
        let mut guard = self.lock();
        let s = &mut *guard;
        self.sweep(s, now);
        let next_pause = s.next_pause;
        if !s.open.contains_key(id) {
            let (kind, why) = self.refusal(s, id);
            return Ok(json!({
                "session": id,
                "tool": tool.unwrap_or(""),
                "verdict": Verdict::Block,
                "probability": 1.0,
                "refused": kind,
                "rule": format!("fail_closed: {kind}_session"),
                "reason": format!("{}: {why} → block", tool.unwrap_or("action")),
            }));
        }
        Self::touch(s, id, now);
        let e = s
            .open
            .get_mut(id)
            .ok_or_else(|| ToolError::refused("the session is gone"))?;
        let action = match state {
            Some(st) => Action::State { tool, state: st },
            None => Action::Tool(ToolCall::new(tool.unwrap_or(""), &call_args)),
        };
        let proxied = self.cfg.gateway_tools.as_ref().is_some_and(|t| {
            tool.is_some_and(|n| t.read().unwrap_or_else(|e| e.into_inner()).contains(n))
        });
        if proxied {
            // The gateway gates this call when it is made: answer on a copy of the session.
            let mut dry = e.session.clone();
            let d = dry.gate(&action);
            let mut v = serde_json::to_value(dry.report(&d, id))
                .map_err(|err| ToolError::new(ErrorKind::Internal, err.to_string()))?;
            v["dry_run"] = json!(true);
            v["note"] = json!("the gateway gates this tool itself when you call it; this answer did not move the session");
            return Ok(v);
        }
        let d = e.session.gate(&action);
        let report: DecisionReport = e.session.report(&d, id);
        let mut v = serde_json::to_value(&report)
            .map_err(|err| ToolError::new(ErrorKind::Internal, err.to_string()))?;
        let pid = PendingPause::after_gate(
            &mut e.pause,
            d.verdict,
            || format!("pause-{next_pause}"),
            tool,
            &call_args,
            state,
        );
        if let Some(pid) = pid {
            v["pause_id"] = json!(pid);
            s.next_pause += 1;
        }
        Ok(v)
    }

    fn record(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let executed = opt_bool(args, "executed")?.unwrap_or(true);
        if !executed && !self.cfg.harness {
            return Err(ToolError::refused(
                "record with executed=false is harness-only: it would move the monitor back; start the server with --harness",
            ));
        }
        let tool = req_str(args, "tool")?;
        let call_args = match args.get("args").cloned().unwrap_or(Value::Null) {
            Value::Null => Value::Object(Map::new()),
            v @ (Value::Object(_) | Value::String(_)) => {
                ToolCall::parse_args(v).map_err(|e| ToolError::param(format!("`args`: {e}")))?
            }
            _ => {
                return Err(ToolError::param(
                    "`args` must be an object or a JSON string",
                ))
            }
        };
        let state = match args.get("state") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(_) => return Err(ToolError::param("`state` must be an object")),
        };
        self.with_session(args, now, |id, e| {
            let action = match &state {
                Some(st) => Action::State {
                    tool: Some(tool),
                    state: st,
                },
                None => Action::Tool(ToolCall::new(tool, &call_args)),
            };
            let changed = e.session.record(&action, executed);
            e.pause = None;
            Ok(json!({"session": id, "changed": changed, "state": state_name(&e.session)}))
        })
    }

    fn answer_pause(
        &self,
        args: &Map<String, Value>,
        now: Instant,
        approve: bool,
    ) -> Result<Value> {
        let pid = req_str(args, "pause_id")?;
        self.with_session(args, now, |id, e| {
            let changed = pause::answer(&mut e.session, &mut e.pause, pid, approve)?;
            Ok(json!({
                "session": id,
                "pause_id": pid,
                "approved": approve,
                "changed": changed,
                "state": state_name(&e.session),
            }))
        })
    }

    fn end_session(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let id = req_str(args, "session")?;
        let mut s = self.lock();
        self.sweep(&mut s, now);
        if s.open.remove(id).is_none() {
            let (_, why) = self.refusal(&s, id);
            return Err(ToolError::refused(why));
        }
        self.bury(&mut s, id.to_string());
        Ok(json!({"session": id, "ended": true}))
    }

    fn session_state(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        self.with_session(args, now, |id, e| {
            let s = &e.session;
            let classifier = s.monitor().classifier().is_some();
            Ok(json!({
                "session": id,
                "category": s.category(),
                "state": state_name(s),
                "dtr": classifier.then(|| s.dtr().to_string()),
                "risk": classifier.then(|| s.dtr().risk_level()),
                "steps": s.summary().steps,
                "pending_pause": e.pause.as_ref().map(|p| json!({"pause_id": p.id, "tool": p.tool})),
            }))
        })
    }

    fn summary(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        self.with_session(args, now, |id, e| {
            let sum = e.session.summary();
            Ok(json!({
                "session": id,
                "steps": sum.steps,
                "allow": sum.decisions[Verdict::Allow as usize],
                "warn": sum.decisions[Verdict::Warn as usize],
                "pause": sum.decisions[Verdict::Pause as usize],
                "block": sum.decisions[Verdict::Block as usize],
                "peak_probability": sum.peak_probability,
                "peak_risk": sum.peak_risk,
                "overridden": sum.overridden,
                "state": state_name(&e.session),
            }))
        })
    }

    fn limits(&self) -> Limits {
        Limits::default()
            .with_max_states(self.cfg.max_states)
            .with_max_smoothed_transitions(self.cfg.max_smoothed_transitions)
            .with_timeout(self.cfg.timeout)
            .with_deadline(Instant::now() + self.cfg.timeout)
    }

    fn heavy(&self, f: impl FnOnce() -> Result<Value>) -> Result<Value> {
        let n = self.checks_running.fetch_add(1, Ordering::SeqCst);
        let _slot = CheckSlot(&self.checks_running);
        if n >= self.cfg.max_concurrent_checks {
            return Err(ToolError::refused(format!(
                "busy: {} checks are running (the server's maximum); try again later",
                self.cfg.max_concurrent_checks
            )));
        }
        f()
    }

    fn source<'a>(&self, args: &'a Map<String, Value>) -> Result<ModelSource<'a>> {
        let text = opt_str(args, "model_text")?;
        let path = opt_str(args, "model_path")?;
        match (text, path) {
            (Some(t), None) => {
                if t.len() > self.cfg.max_text_bytes {
                    return Err(ToolError::refused(format!(
                        "model_text has {} bytes; this server takes at most {}",
                        t.len(),
                        self.cfg.max_text_bytes
                    )));
                }
                Ok(ModelSource::Text {
                    text: t,
                    format: opt_str(args, "format")?,
                })
            }
            (None, Some(p)) => {
                if args.get("format").is_some_and(|f| !f.is_null()) {
                    return Err(ToolError::param(
                        "`format` is for model_text; a file's format comes from its extension",
                    ));
                }
                Ok(ModelSource::Path(p))
            }
            (Some(_), Some(_)) => Err(ToolError::param(
                "give exactly one of model_text and model_path, not both",
            )),
            (None, None) => Err(ToolError::param("give model_text or model_path")),
        }
    }

    fn check(&self, args: &Map<String, Value>) -> Result<Value> {
        let props = match args.get("properties") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|p| {
                    p.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| ToolError::param("`properties` must be a list of strings"))
                })
                .collect::<Result<Vec<_>>>()?,
            Some(Value::String(s)) => vec![s.clone()],
            _ => {
                return Err(ToolError::param(
                    "`properties` (a list of PCTL strings) is required",
                ))
            }
        };
        if props.len() > defaults::MAX_PROPERTIES {
            return Err(ToolError::refused(format!(
                "{} properties; at most {} per request",
                props.len(),
                defaults::MAX_PROPERTIES
            )));
        }
        let method = opt_str(args, "method")?
            .map(ops::parse_method)
            .transpose()?;
        let constants = ops::constants_from_json(args.get("constants"))?;
        let source = self.source(args)?;
        let limits = self.limits();
        let exact = method == Some(augur_check::Method::Exact);
        let model = ops::load_model(source, self.cfg.root.as_deref(), &constants, exact, &limits)?;
        let req = CheckRequest {
            properties: props,
            constants,
            method,
            all_states: opt_bool(args, "all_states")?.unwrap_or(false),
        };
        let out = ops::check(&model, &req, &limits)?;
        if let Some((_, first)) = out.errors.first() {
            let mut e = first.clone();
            let all: Vec<&str> = out.errors.iter().map(|(_, e)| e.message.as_str()).collect();
            e.message = format!("{}\n\n{}", all.join("\n"), out.report.to_json());
            return Err(e);
        }
        serde_json::to_value(&out.report)
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))
    }

    fn horizon(&self, args: &Map<String, Value>) -> Result<Value> {
        let target = req_str(args, "target")?;
        let max = opt_u64(args, "max")?.ok_or_else(|| ToolError::param("`max` is required"))?;
        if max == 0 || max > self.cfg.max_horizon as u64 {
            return Err(ToolError::param(format!(
                "`max` must be in 1..={}",
                self.cfg.max_horizon
            )));
        }
        let all_states = opt_bool(args, "all_states")?.unwrap_or(false);
        let constants = ops::constants_from_json(args.get("constants"))?;
        let source = self.source(args)?;
        let limits = self.limits();
        let model = ops::load_model(source, self.cfg.root.as_deref(), &constants, false, &limits)?;
        if all_states && model.dtmc().num_states().saturating_mul(max as usize) > 1_000_000 {
            return Err(ToolError::refused(
                "the table for all states would have more than 1,000,000 entries; ask for the initial state's curve (all_states=false)",
            ));
        }
        ops::horizon(
            &model,
            target,
            max as usize,
            &constants,
            all_states,
            &limits,
        )
    }

    fn explain(&self, args: &Map<String, Value>) -> Result<Value> {
        let property = req_str(args, "property")?.to_string();
        let paths = opt_u64(args, "paths")?.unwrap_or(10) as usize;
        let subsystem = ops::parse_subsystem(opt_str(args, "subsystem")?)?;
        let constants = ops::constants_from_json(args.get("constants"))?;
        let source = self.source(args)?;
        let limits = self.limits();
        let model = ops::load_model(source, self.cfg.root.as_deref(), &constants, false, &limits)?;
        let req = ops::ExplainRequest {
            property,
            constants,
            paths,
            from: opt_str(args, "from")?.map(str::to_string),
            subsystem,
            dot: opt_bool(args, "dot")?.unwrap_or(false),
            prism: opt_bool(args, "prism")?.unwrap_or(false),
            names: None,
        };
        ops::explain(&model, &req, &limits)
    }

    fn pac(&self, args: &Map<String, Value>) -> Result<Value> {
        let epsilon =
            opt_f64(args, "epsilon")?.ok_or_else(|| ToolError::param("`epsilon` is required"))?;
        let delta =
            opt_f64(args, "delta")?.ok_or_else(|| ToolError::param("`delta` is required"))?;
        let hoeffding = opt_bool(args, "hoeffding")?.unwrap_or(false);
        let states = opt_u64(args, "states")?;
        let text = opt_str(args, "model_text")?;
        let path = opt_str(args, "model_path")?;
        match (states, text, path) {
            (Some(m), None, None) => ops::pac_calculator(
                m as usize,
                opt_f64(args, "p_hat")?,
                opt_u64(args, "observations")?,
                epsilon,
                delta,
                hoeffding,
            ),
            (None, Some(t), None) => {
                if t.len() > self.cfg.max_text_bytes {
                    return Err(ToolError::refused("model_text is too large"));
                }
                ops::pac_learned(ops::TEXT_NAME, t, epsilon, delta, hoeffding)
            }
            (None, None, Some(p)) => {
                let real = ops::resolve_under(self.cfg.root.as_deref(), p)?;
                let meta = std::fs::metadata(&real)
                    .map_err(|e| ToolError::new(ErrorKind::Model, format!("{p}: {e}")))?;
                if meta.len() > self.cfg.max_text_bytes as u64 {
                    return Err(ToolError::refused(format!("{p} is too large")));
                }
                let text = augur_check::read_text(&real).map_err(|e| ToolError::check(&e))?;
                ops::pac_learned(p, &text, epsilon, delta, hoeffding)
            }
            _ => Err(ToolError::param(
                "give exactly one of model_text, model_path (a learned model) or states (the calculator)",
            )),
        }
    }
}

/// The monitor's decision on a call the gateway proxies.
#[cfg(feature = "stdio")]
#[derive(Clone, Debug)]
pub(crate) struct ProxiedDecision {
    pub verdict: Verdict,
    pub probability: f64,
    pub reason: String,
    /// `none`, `user` or `untrusted`: where the arguments' values were first seen.
    pub provenance: &'static str,
    pub pause_id: Option<String>,
}

/// The gateway's access to the sessions (crate-private: the gateway is the only caller).
#[cfg(feature = "stdio")]
impl Server {
    /// The connection's session: `id` when it is open, else a fresh one.
    pub(crate) fn connection_session(&self, id: Option<&str>) -> Result<String> {
        if let Some(id) = id {
            if self.lock().open.contains_key(id) {
                return Ok(id.to_string());
            }
            return Err(ToolError::refused(format!(
                "session `{id}` is not open (the journal holds it as ended or expired)"
            )));
        }
        let id = self.open(None, None, Instant::now())?;
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        Ok(id)
    }

    /// Gates a proxied call (the classifier sees the upstream's own tool name): the session
    /// moves on allow and warn; a pause becomes the session's pending pause. An unknown or
    /// expired session, or a journal that cannot be written, is a block.
    pub(crate) fn gate_proxied(&self, id: &str, tool: &str, args: &Value) -> ProxiedDecision {
        let now = Instant::now();
        let block = |reason: String| ProxiedDecision {
            verdict: Verdict::Block,
            probability: 1.0,
            reason,
            provenance: "none",
            pause_id: None,
        };
        let decision = {
            let mut guard = self.lock();
            let s = &mut *guard;
            self.sweep(s, now);
            let next_pause = s.next_pause;
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return block(format!("{tool}: {why} → block"));
            }
            Self::touch(s, id, now);
            let Some(e) = s.open.get_mut(id) else {
                return block(format!("{tool}: the session is gone → block"));
            };
            let provenance = e.session.provenance().provenance_of(args).as_str();
            let d = e.session.gate(&Action::Tool(ToolCall::new(tool, args)));
            let reason = e.session.reason(&d);
            let pause_id = PendingPause::after_gate(
                &mut e.pause,
                d.verdict,
                || format!("pause-{next_pause}"),
                Some(tool),
                args,
                None,
            );
            if pause_id.is_some() {
                s.next_pause += 1;
            }
            ProxiedDecision {
                verdict: d.verdict,
                probability: d.probability,
                reason,
                provenance,
                pause_id,
            }
        };
        match self.commit() {
            Ok(()) => decision,
            Err(e) => block(format!(
                "{tool}: the state journal cannot be written ({}) → block",
                e.render().trim_start_matches("error: ").trim_end()
            )),
        }
    }

    /// Observes `text` in session `id`: the user's request (`tool` `None`, trusted) or the
    /// result of `tool` (untrusted unless the policy trusts the tool). Returns the number of
    /// values found.
    pub(crate) fn observe(&self, id: &str, tool: Option<&str>, text: &str) -> Result<usize> {
        use augur_gate::provenance::ObservationSource;
        let now = Instant::now();
        let stats = {
            let mut guard = self.lock();
            let s = &mut *guard;
            self.sweep(s, now);
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return Err(ToolError::refused(why));
            }
            Self::touch(s, id, now);
            let e = s
                .open
                .get_mut(id)
                .ok_or_else(|| ToolError::refused("the session is gone"))?;
            let source = match tool {
                None => ObservationSource::User,
                Some(_) => ObservationSource::Tool,
            };
            e.session.observe(source, tool, text)
        };
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        Ok(stats.found)
    }

    /// Marks session `id`'s provenance store as lost (something it should have observed was
    /// not, e.g. a hook input that could not be read): from now on a value not seen in the
    /// user's words since counts as untrusted, as in a session restored without its store.
    pub(crate) fn lose_provenance(&self, id: &str) -> Result<()> {
        {
            let mut guard = self.lock();
            let s = &mut *guard;
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return Err(ToolError::refused(why));
            }
            let e = s
                .open
                .get_mut(id)
                .ok_or_else(|| ToolError::refused("the session is gone"))?;
            let mut snap = e.session.full_snapshot();
            snap.session.provenance_lost = true;
            e.session = Session::restore_full(&self.cfg.monitor, &self.cfg.policy, &snap)
                .map_err(|err| ToolError::new(ErrorKind::Internal, err.render()))?;
        }
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))
    }

    /// Records that the proxied call `tool(args)` was executed (its outcome may be unknown).
    pub(crate) fn record_proxied(&self, id: &str, tool: &str, args: &Value) -> Result<()> {
        let now = Instant::now();
        {
            let mut guard = self.lock();
            let s = &mut *guard;
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return Err(ToolError::refused(why));
            }
            Self::touch(s, id, now);
            if let Some(e) = s.open.get_mut(id) {
                e.session
                    .record(&Action::Tool(ToolCall::new(tool, args)), true);
            }
        }
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))
    }

    /// The session's pending pause, when it is `pause_id`: (tool, args).
    /// Answers session `id`'s pending pause `pause_id` for the gateway (a person answered it
    /// through MCP elicitation, or the harness's `approve` was checked by the gateway), then
    /// writes the journal. Refused as `approve`/`deny` are (another id, a gone session).
    pub(crate) fn answer_proxied_pause(
        &self,
        id: &str,
        pause_id: &str,
        approve: bool,
    ) -> Result<Value> {
        let mut args = Map::new();
        args.insert("session".into(), json!(id));
        args.insert("pause_id".into(), json!(pause_id));
        let answered = self.answer_pause(&args, Instant::now(), approve);
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        answered
    }

    pub(crate) fn pending_pause(&self, id: &str, pause_id: &str) -> Option<(String, Value)> {
        let s = self.lock();
        let p = s.open.get(id)?.pause.as_ref()?;
        (p.id == pause_id).then(|| (p.tool.clone(), p.args.clone()))
    }

    /// Whether session `id` has observed anything (a restored one that had: its store is
    /// lost, and what it had seen is unknown).
    pub(crate) fn has_observed(&self, id: &str) -> bool {
        let s = self.lock();
        s.open.get(id).is_some_and(|e| {
            let snap = e.session.snapshot();
            snap.observations > 0 || e.session.provenance_lost()
        })
    }
}

fn state_name(s: &Session) -> String {
    let m = s.monitor();
    let t = m.table_for(s.category()).map(|i| &m.tables[i]);
    t.map_or_else(|| s.state().to_string(), |t| t.name(s.state()).to_string())
}

/// Burn `id`: into the exact list of the latest (bounded: the oldest roll over) and, when
/// `filter`, into the Bloom filter that keeps it refused forever; journaled at the next commit.
fn remember_gone(s: &mut Sessions, cfg: &Config, id: String, filter: bool) {
    if filter {
        s.burned.insert(&id);
        if s.journal.is_some() {
            s.unsaved_burns.push(id.clone());
        }
    }
    if s.gone.insert(id.clone()) {
        s.gone_order.push_back(id);
        let cap = (4 * cfg.max_sessions).max(4096);
        while s.gone_order.len() > cap {
            if let Some(old) = s.gone_order.pop_front() {
                s.gone.remove(&old);
            }
        }
    }
}
