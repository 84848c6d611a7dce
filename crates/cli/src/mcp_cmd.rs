//! `augur mcp [--monitor M.json] [--policy P.toml] [--root DIR] [--session ID[=CATEGORY]]...
//! [--harness] [--upstream NAME=COMMAND]... [--upstream-config FILE] [--audit FILE]`: the MCP
//! server over stdio, or with upstreams the gateway in front of them (glue over `augur-mcp`;
//! docs/mcp.md).

use crate::error::CliError;
use crate::limits::{LimitArgs, LimitDefaults};
use crate::options::Seconds;
use augur_gate::{Monitor, Policy};
use augur_mcp::server::defaults;
use augur_mcp::{Config, Server};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `augur mcp`.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// The compiled monitor (`augur monitor compile`); default: SafetyDrift's 5-state
    /// risk-level chain with `P=? [ F<=5 "violated" ]` and the built-in classifier; as a
    /// gateway, the same chain with provenance (a value first seen in a tool's result and
    /// used as a destination or payload is VIOLATED), with the Claude Code rules when
    /// --hook-socket is given.
    #[arg(long, value_name = "MONITOR.json")]
    pub monitor: Option<PathBuf>,
    /// Refuse a monitor compiled with an older version of a built-in classifier (the
    /// default); `--strict-classifier=false` serves with it and a warning.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub strict_classifier: bool,
    /// The policy (TOML); default: block at P >= 0.9, pause at 0.6, warn at 0.3.
    #[arg(long, value_name = "POLICY.toml")]
    pub policy: Option<PathBuf>,
    /// The folder `model_path` arguments are read from (default: none; only `model_text`).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Open a session with this id at start (repeatable); `ID=CATEGORY` selects a category.
    #[arg(long = "session", value_name = "ID[=CATEGORY]")]
    pub sessions: Vec<String>,
    /// Enable the harness-only tools (open_session, end_session, reset, approve, deny,
    /// record with executed=false). Set by the harness, never by the agent.
    #[arg(long)]
    pub harness: bool,
    /// At most this many open sessions; new ones are refused beyond it.
    #[arg(long, value_name = "N", default_value_t = defaults::MAX_SESSIONS)]
    pub max_sessions: usize,
    /// Close sessions idle for this many seconds (an expired id is refused, never restarted;
    /// default 3600).
    #[arg(long, value_name = "SECONDS")]
    pub session_ttl: Option<Seconds>,
    /// The limits of each check, horizon, explain or PAC request.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Journal every session move and burned id to this file and restore them at start, so
    /// that a crash and restart resumes every session (docs/mcp.md); without it a restart
    /// resets every session to its start state.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Size in bits of the filter that keeps burned session ids refused once the exact list
    /// of the latest max(4 x max-sessions, 4096) rolls over (a fresh id is refused with
    /// probability about (1 - e^(-7n/BITS))^7 after n burned ids).
    #[arg(long, value_name = "BITS", default_value_t = augur_gate::burned::BurnedIds::DEFAULT_BITS)]
    pub burned_bits: u64,
    /// Gateway mode: start this MCP server (stdio) and serve its tools through the monitor
    /// (repeatable). COMMAND is split like a shell's words, e.g. `mail=python3 mail_server.py`;
    /// a URL instead (`web=http://127.0.0.1:8000/mcp`, or `https://`) is a streamable-HTTP server.
    #[arg(long = "upstream", value_name = "NAME=COMMAND|URL")]
    pub upstreams: Vec<String>,
    /// Gateway mode: the upstreams of an `mcpServers` JSON file (Claude Code's and Cursor's
    /// format: `{"mcpServers": {"name": {"command", "args", "env"}}}`, or `{"url", "headers"}`
    /// for a streamable-HTTP server).
    #[arg(long, value_name = "FILE")]
    pub upstream_config: Option<PathBuf>,
    /// Gateway: the PEM file of the certificate authority of the `https://` upstreams (a
    /// private CA): its certificates are then their only trusted roots (a server's `"ca"` in
    /// the `--upstream-config` file takes precedence); without it, the system's roots.
    #[arg(long, value_name = "FILE")]
    pub upstream_ca: Option<PathBuf>,
    /// Gateway: listen on this Unix socket (mode 0600) for `augur hook claude-code --gateway
    /// PATH`, which gates the client's built-in tools against this connection's session.
    #[arg(long, value_name = "PATH")]
    pub hook_socket: Option<PathBuf>,
    /// Gateway: the time limit of an upstream's start and of each proxied call (default 60).
    #[arg(long, value_name = "SECONDS")]
    pub upstream_timeout: Option<Seconds>,
    /// Gateway: how long a paused call may wait for the user's answer (MCP elicitation) or
    /// the harness's `approve` (default 600).
    #[arg(long, value_name = "SECONDS")]
    pub pause_timeout: Option<Seconds>,
    /// Gateway: the largest message accepted from an upstream (bytes, default 16777216); a
    /// longer result fails the call and restarts the upstream.
    #[arg(long, value_name = "BYTES")]
    pub max_result_bytes: Option<usize>,
    /// Gateway: write one JSON line per proxied call to this file (appended, flushed per line).
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Gateway: the user's request, passed by the harness (observed as trusted text at start,
    /// as the `begin_task` tool would).
    #[arg(long, value_name = "TEXT")]
    pub request: Option<String>,
}

/// Run `augur mcp` until the client closes stdin.
pub fn run(args: &McpArgs) -> Result<(), CliError> {
    let user = |e: augur_gate::GateError| CliError::User(e.render());
    let gateway = args.upstream_config.is_some() || !args.upstreams.is_empty();
    let monitor = match &args.monitor {
        Some(p) => {
            let m = Monitor::load(p).map_err(user)?;
            let shown = p.display().to_string();
            if let Some(stale) = m.stale_classifier() {
                let msg = stale.message(&shown, &m);
                if gateway && args.strict_classifier {
                    return Err(CliError::User(format!(
                        "error: --monitor {msg}; refused (--strict-classifier=false serves with it anyway)"
                    )));
                }
                eprintln!("warning: augur mcp: --monitor {msg}");
            }
            if gateway && !m.tracks_provenance() {
                eprintln!("warning: augur mcp: --monitor {shown} has no provenance section: provenance is off, so a value injected through a tool's result is not traced (leave out --monitor for the built-in provenance-aware monitor)");
            }
            m
        }
        // The gateway sees every result: its default tracks provenance (the hook socket's
        // built-in tools need the Claude Code rules, which extend the default ones).
        None if gateway && args.hook_socket.is_some() => {
            augur_gate::builtin::claude_code_monitor().map_err(user)?
        }
        None if gateway => augur_gate::builtin::gateway_monitor().map_err(user)?,
        None => augur_mcp::server::default_monitor()
            .map_err(|e| CliError::Internal(anyhow::anyhow!(e.message)))?,
    };
    let policy = match &args.policy {
        Some(p) => Policy::from_file(p).map_err(user)?,
        // The built-in monitors' chain has its own policy (augur_gate::builtin::gateway_policy).
        None if gateway && args.monitor.is_none() => {
            augur_gate::builtin::gateway_policy().map_err(user)?
        }
        None => Policy::default(),
    };
    let (timeout, max_states, max_smoothed_transitions) = args.limits.values(LimitDefaults {
        timeout: Some(Duration::from_secs_f64(defaults::TIMEOUT_SECS)),
        max_states: defaults::MAX_STATES,
        max_smoothed_transitions: defaults::MAX_SMOOTHED_TRANSITIONS,
    });
    if args.max_sessions == 0 {
        return Err(CliError::user("error: --max-sessions must be at least 1"));
    }
    if !(64..=augur_gate::burned::BurnedIds::MAX_BITS).contains(&args.burned_bits) {
        return Err(CliError::user(format!(
            "error: --burned-bits must be in 64..={} (1 GiB), got {}",
            augur_gate::burned::BurnedIds::MAX_BITS,
            args.burned_bits
        )));
    }
    if let Some(root) = &args.root {
        if !root.is_dir() {
            return Err(CliError::user(format!(
                "error: --root {}: not a folder",
                root.display()
            )));
        }
    }
    let mut cfg = Config::new(Arc::new(monitor), Arc::new(policy));
    cfg.root = args.root.clone();
    cfg.harness = args.harness;
    cfg.max_sessions = args.max_sessions;
    cfg.session_ttl = args
        .session_ttl
        .map_or(Duration::from_secs(defaults::SESSION_TTL_SECS), |s| s.0);
    if let Some(t) = timeout {
        cfg.timeout = t;
    }
    cfg.max_states = max_states;
    cfg.max_smoothed_transitions = max_smoothed_transitions;
    cfg.sessions = args
        .sessions
        .iter()
        .map(|s| match s.split_once('=') {
            Some((id, cat)) => (id.to_string(), Some(cat.to_string())),
            None => (s.clone(), None),
        })
        .collect();
    cfg.state = args.state.clone();
    cfg.burned_bits = args.burned_bits;
    if !gateway {
        for (flag, set) in [
            ("--audit", args.audit.is_some()),
            ("--request", args.request.is_some()),
            ("--upstream-ca", args.upstream_ca.is_some()),
            ("--hook-socket", args.hook_socket.is_some()),
            ("--upstream-timeout", args.upstream_timeout.is_some()),
            ("--pause-timeout", args.pause_timeout.is_some()),
            ("--max-result-bytes", args.max_result_bytes.is_some()),
        ] {
            if set {
                return Err(CliError::user(format!(
                    "error: {flag} is an option of the gateway: give --upstream NAME=COMMAND or --upstream-config FILE"
                )));
            }
        }
    }
    if gateway {
        return run_gateway(args, cfg);
    }
    if args.sessions.is_empty() && !args.harness {
        eprintln!("warning: augur mcp: no --session and no --harness: no session can be opened, so every `gate` call will be blocked (unknown session). Give --session ID (the id the agent passes), --harness (the harness opens sessions with open_session), or --upstream (the gateway opens one per connection)");
    }
    let server = Server::new(cfg).map_err(|e| {
        // A journal error is rendered already (located at its line).
        if e.message.starts_with("error") {
            CliError::User(e.message)
        } else {
            CliError::User(format!("error: --session: {}", e.message))
        }
    })?;
    eprintln!("{}", server.startup_message());
    augur_mcp::stdio::serve_stdio(server)
        .map_err(|e| CliError::Internal(anyhow::Error::new(e).context("the MCP server")))
}

/// `augur mcp --upstream ...`: the gateway.
fn run_gateway(args: &McpArgs, cfg: Config) -> Result<(), CliError> {
    use augur_mcp::gateway::{self, config, GatewayOptions};
    let mut specs = Vec::new();
    if let Some(path) = &args.upstream_config {
        let text = std::fs::read(path).map_err(|e| {
            CliError::user(format!("error: --upstream-config {}: {e}", path.display()))
        })?;
        let name = path.display().to_string();
        let text =
            augur_source::decode_utf8(&name, text).map_err(|d| CliError::User(d.render()))?;
        specs.extend(config::parse_config(&name, &text).map_err(|e| CliError::User(e.message))?);
    }
    for u in &args.upstreams {
        specs.push(config::parse_upstream_arg(u).map_err(|e| CliError::User(e.message))?);
    }
    if let Some(ca) = &args.upstream_ca {
        config::apply_default_ca(&mut specs, ca).map_err(CliError::User)?;
    }
    let mut opts = GatewayOptions::new(specs);
    if let Some(b) = args.max_result_bytes {
        if b < 1024 {
            return Err(CliError::user(
                "error: --max-result-bytes must be at least 1024",
            ));
        }
        opts.max_result_bytes = b;
    }
    if let Some(t) = args.upstream_timeout {
        opts.upstream_timeout = t.0;
    }
    if let Some(t) = args.pause_timeout {
        opts.pause_timeout = t.0;
    }
    opts.audit = args.audit.clone();
    opts.session = cfg.sessions.first().map(|(id, _)| id.clone());
    opts.request = args.request.clone();
    opts.hook_socket = args.hook_socket.clone();
    gateway::serve_gateway_stdio(cfg, opts, &|server, session| {
        eprintln!("{}", server.startup_message());
        eprintln!("augur mcp: gateway: the connection's session is `{session}`");
    })
    .map_err(|e| match e {
        gateway::GatewayError::Start(m) => CliError::User(m),
        gateway::GatewayError::Io(e) => {
            CliError::Internal(anyhow::Error::new(e).context("the MCP gateway"))
        }
    })
}
