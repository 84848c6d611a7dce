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

mod args;
#[cfg(feature = "stdio")]
mod proxied;
mod schema;
mod sessions;
mod tools;

#[cfg(feature = "stdio")]
pub(crate) use proxied::ProxiedDecision;
pub use schema::ToolSpec;
use schema::*;
use sessions::*;

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
    let mut tra = Cursor::new(include_str!("../../../../models/safetydrift.tra"));
    let mut lab = Cursor::new(include_str!("../../../../models/safetydrift.lab"));
    let mut sta = Cursor::new(include_str!("../../../../models/safetydrift.sta"));
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
            "reset" => args::parse::<args::SessionArgs>(&args).and_then(|a| {
                self.with_session(&a.session, now, |id, e| {
                    e.session.reset();
                    e.pause = None;
                    Ok(json!({"session": id, "reset": true}))
                })
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
}
