//! The gateway (`augur mcp --upstream NAME=COMMAND`, `--upstream-config FILE`): Augur between
//! an MCP client (the agent) and the tool servers it uses. The gateway starts each upstream
//! server as a child process ([`upstream`]), lists its tools and serves them under their own
//! names (`UPSTREAM__tool` only on a clash, [`config::exposed_names`]), beside Augur's own
//! tools and `begin_task`. Every proxied `tools/call`:
//!
//! 1. is gated with the connection's session (the classifier sees the upstream's own tool
//!    name, the provenance store the call's arguments);
//! 2. block: an error result with the reason; the upstream never sees the call. pause: a
//!    result telling the model to stop and ask the user, with a `pause_id` the harness may
//!    `approve` within `--pause-timeout` (the call then runs). allow and warn: forwarded (a
//!    warn adds a note to the result);
//! 3. the upstream's result is observed as untrusted text (the session's provenance store)
//!    before it is returned, and the execution is recorded; a fault (crash, time limit,
//!    malformed or oversized output) is an error result, and a call whose outcome is unknown
//!    counts as executed;
//! 4. with `--audit FILE`, one JSON line is written and flushed ([`audit`]) before the answer
//!    leaves. If it cannot be written, the answer is withheld and later calls are refused.
//!
//! Tool lists change: an upstream's `notifications/tools/list_changed`, and each restart
//! after a fault, make the gateway list that upstream's tools again; new tools are served,
//! removed ones are refused with an error naming the change, and the client gets
//! `notifications/tools/list_changed`. Resources and prompts of the upstreams are proxied too
//! (`resources/list`, `resources/templates/list`, `resources/read`, `prompts/list`,
//! `prompts/get`; prompt names prefixed `UPSTREAM__` and resource URIs rewritten
//! `augur-upstream://UPSTREAM/URI` only on a clash); what is read (resource text, prompt
//! messages) is observed as untrusted text before it is returned. A paused call asks the user
//! through MCP elicitation (`elicitation/create`) when the client declared that capability:
//! accepted with `approve: true`, the call runs; anything else (decline, cancel, no answer
//! within `--pause-timeout`, an error) denies it.
//!
//! Sessions: the connection (one client per stdio process) gets one session (the first
//! `--session` id, else a fresh one). `begin_task` (the user's request, observed as trusted
//! text) is accepted until the first call is forwarded to an upstream; the server's
//! instructions tell the model to call it first.

mod call;
mod pause;
mod routing;

use call::*;
pub use pause::ASK_KEY;
use pause::*;
use routing::*;

pub mod audit;
pub mod config;
#[cfg(unix)]
pub mod hook_socket;
#[cfg(feature = "http-upstream")]
pub mod tls;
pub mod upstream;

use crate::server::{Config, ProxiedDecision, Server};
use crate::stdio::Handler;
use audit::{AuditLine, AuditLog};
use augur_gate::classifier::{Classifier, ToolDeclaration, ToolProfile};
use augur_gate::Verdict;
use config::UpstreamSpec;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ContentBlock,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ServerCapabilities, ServerConfig, ServerRequest, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};
use upstream::{Changed, Fault, Upstream};

/// Defaults of [`GatewayOptions`].
pub mod defaults {
    /// Seconds an upstream call (and an upstream's start) may take.
    pub const UPSTREAM_TIMEOUT_SECS: f64 = 60.0;
    /// Seconds a paused call may wait for `approve`.
    pub const PAUSE_TIMEOUT_SECS: u64 = 600;
    /// The largest message (bytes) accepted from an upstream: 16 MiB, rmcp's own stdio limit.
    pub const MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;
}

/// The gateway's options (`augur mcp --upstream ...`).
#[derive(Clone, Debug)]
pub struct GatewayOptions {
    /// The upstream servers, in order.
    pub upstreams: Vec<UpstreamSpec>,
    /// The time limit of each call (and of an upstream's start, at least
    /// [`upstream::START_TIMEOUT`]).
    pub upstream_timeout: Duration,
    /// How long a paused call may wait for `approve`.
    pub pause_timeout: Duration,
    /// The largest message accepted from an upstream (a longer one stops the upstream and
    /// fails the call).
    pub max_result_bytes: usize,
    /// The audit log (`--audit FILE`).
    pub audit: Option<PathBuf>,
    /// The connection's session id (the first `--session`); `None`: a fresh one.
    pub session: Option<String>,
    /// The user's request, passed by the harness (`--request`): observed as trusted text at
    /// start, as `begin_task` would.
    pub request: Option<String>,
    /// The Unix socket through which `augur hook claude-code --gateway` gates the client's
    /// built-in tools against the connection's session (`--hook-socket`, [`hook_socket`]).
    pub hook_socket: Option<PathBuf>,
}

impl GatewayOptions {
    /// Options with the defaults for `upstreams`.
    pub fn new(upstreams: Vec<UpstreamSpec>) -> GatewayOptions {
        GatewayOptions {
            upstreams,
            upstream_timeout: Duration::from_secs_f64(defaults::UPSTREAM_TIMEOUT_SECS),
            pause_timeout: Duration::from_secs(defaults::PAUSE_TIMEOUT_SECS),
            max_result_bytes: defaults::MAX_RESULT_BYTES,
            audit: None,
            session: None,
            request: None,
            hook_socket: None,
        }
    }
}

/// Why the gateway did not serve.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// A user error at start (an upstream that cannot be started, an audit file that cannot
    /// be opened, a session that cannot be opened): the message, rendered.
    #[error("{0}")]
    Start(String),
    /// An input/output failure while serving.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The name of the tool that takes the user's request.
pub const BEGIN_TASK: &str = "begin_task";

/// The scheme of a resource URI rewritten on a clash: `augur-upstream://UPSTREAM/URI`.
pub const CLASH_SCHEME: &str = "augur-upstream://";

/// A tool of an upstream as the gateway serves it.
struct Proxied {
    exposed: String,
    upstream: usize,
    original: String,
    tool: Tool,
    /// What the tool's declaration (description, input schema, annotations) says of it,
    /// read once when the upstream lists it: it may only raise the classification of its
    /// calls (issue 40; [`augur_gate::classifier::Classifier::profile`]).
    profile: Option<ToolProfile>,
}

/// The proxied tools, rebuilt when an upstream's tool list changes.
#[derive(Default)]
struct Table {
    /// Each upstream's last tool listing.
    listed: Vec<Vec<Tool>>,
    tools: Vec<Arc<Proxied>>,
    by_name: HashMap<String, Arc<Proxied>>,
    /// Names served before and not now: name → the upstream that dropped it.
    gone: HashMap<String, String>,
}

/// Where the gateway sends a resource URI or a prompt name: exposed → (upstream, original).
#[derive(Default)]
struct Routes {
    resources: HashMap<String, (usize, String)>,
    prompts: HashMap<String, (usize, String)>,
    /// The literal start of each upstream's URI templates (up to the first `{`).
    templates: Vec<(usize, String)>,
}

struct Inner {
    server: Arc<Server>,
    base: Handler,
    upstreams: Vec<Upstream>,
    table: RwLock<Table>,
    /// Augur's own tool names and `begin_task`: an upstream tool of such a name is prefixed.
    reserved: Vec<String>,
    /// The names [`Config::gateway_tools`] holds (shared with the server).
    gateway_tools: Arc<RwLock<HashSet<String>>>,
    routes: Mutex<Routes>,
    /// The client, once it is initialised (for `list_changed` notifications).
    client: Mutex<Option<Peer<RoleServer>>>,
    session: String,
    /// A call was forwarded to an upstream: `begin_task` is refused from now on.
    forwarded: AtomicBool,
    /// Proxied calls sent to an upstream and not answered yet: a user prompt that the hook
    /// socket receives meanwhile is refused (it could come from a tool, [`hook_socket`]).
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
    /// The gateway's paused calls: pause id → (proxied tool, when).
    pauses: Mutex<HashMap<String, (Arc<Proxied>, Instant)>>,
    /// The paused call put to the user in an `input_required` result (protocol 2026-07-28):
    /// its `requestState` (the pause id and 128 random bits) → the question. Only the newest
    /// (the session has one pending pause); answered or superseded entries are removed.
    asks: Mutex<HashMap<String, Ask>>,
    audit: Option<Mutex<AuditLog>>,
    audit_broken: AtomicBool,
    pause_timeout: Duration,
    instructions: String,
}

/// The gateway's MCP handler.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

/// Serves the gateway on stdin/stdout until the client closes stdin: starts the upstreams,
/// lists their tools, builds the [`Server`] from `cfg` (its [`Config::gateway_tools`] set
/// here), opens the connection's session, then calls `started` (the server and the session
/// id, for the start messages) and serves.
// Not generic and never inlined: the gateway's futures (rmcp, tokio, the upstreams) are then
// compiled here, in this crate's profile (unoptimised in the release build, Cargo.toml), not
// again in the binary's (about a third of its compile time).
#[inline(never)]
pub fn serve_gateway_stdio(
    cfg: Config,
    opts: GatewayOptions,
    started: &dyn Fn(&Server, &str),
) -> Result<(), GatewayError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(8)
        .build()?;
    rt.block_on(async move {
        let hook_socket = opts.hook_socket.clone();
        let gateway = Gateway::start(cfg, opts).await?;
        #[cfg(unix)]
        let mut socket_file = None;
        #[cfg(unix)]
        if let Some(path) = &hook_socket {
            // The session's secret, in `PATH.key` (0600): every event must carry it. Written
            // before the socket is renamed into place.
            let secret = crate::hook::Secret::random();
            let key = crate::hook::key_path(path);
            let (listener, file) = hook_socket::bind(path, || {
                crate::hook::write_key_file(&key, &secret).map_err(|e| {
                    format!(
                        "--hook-socket {}: cannot write the hook's secret {}: {e}",
                        path.display(),
                        key.display()
                    )
                })
            })
            .map_err(|m| GatewayError::Start(format!("error: {m}")))?;
            socket_file = Some((file, key));
            tokio::spawn(hook_socket::serve(
                listener,
                Arc::clone(&gateway.inner.server),
                gateway.inner.session.clone(),
                hook_socket::Auth {
                    secret,
                    key_file: crate::hook::key_path(path),
                    proxied_in_flight: Arc::clone(&gateway.inner.in_flight),
                },
            ));
        }
        #[cfg(not(unix))]
        if hook_socket.is_some() {
            return Err(GatewayError::Start(
                "error: --hook-socket needs Unix sockets, which this system does not have".into(),
            ));
        }
        started(&gateway.inner.server, &gateway.inner.session);
        let served =
            crate::stdio::serve_handler(gateway, tokio::io::stdin(), tokio::io::stdout()).await;
        #[cfg(unix)]
        if let Some((file, key)) = &socket_file {
            // The gateway is gone: a hook finds no socket and denies (exit 2). A socket bound
            // at the path since (another gateway's) is left alone, and so is its key.
            if file.is_ours() {
                let _ = std::fs::remove_file(key);
            }
            file.remove();
        }
        served?;
        Ok(())
    })
}

/// What `t`'s declaration says of it, by `classifier`'s rules (see
/// [`augur_gate::classifier::Classifier::profile`]).
fn tool_profile(classifier: &Classifier, t: &Tool) -> ToolProfile {
    let schema = Value::Object((*t.input_schema).clone());
    let annotations = t
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok());
    classifier.profile(&ToolDeclaration {
        name: &t.name,
        description: t.description.as_deref(),
        input_schema: Some(&schema),
        annotations: annotations.as_ref(),
    })
}

/// Builds the proxied-tool table from each upstream's listing; names served in `previous`
/// and missing now go to `gone` (and leave it when they come back).
fn build_table(
    names: &[&str],
    listed: Vec<Vec<Tool>>,
    reserved: &[&str],
    previous: Option<&Table>,
    classifier: Option<&Classifier>,
) -> Table {
    let originals: Vec<Vec<String>> = listed
        .iter()
        .map(|ts| ts.iter().map(|t| t.name.to_string()).collect())
        .collect();
    let exposed = config::exposed_names(names, &originals, reserved);
    let mut table = Table::default();
    for (i, (ts, ex)) in listed.iter().zip(exposed).enumerate() {
        for (t, name) in ts.iter().zip(ex) {
            if table.by_name.contains_key(&name) {
                // The same upstream listed a name twice: keep the first.
                continue;
            }
            let mut served = t.clone();
            served.name = name.clone().into();
            let profile = classifier.map(|c| tool_profile(c, t));
            let p = Arc::new(Proxied {
                exposed: name.clone(),
                upstream: i,
                original: t.name.to_string(),
                tool: served,
                profile,
            });
            table.by_name.insert(name, Arc::clone(&p));
            table.tools.push(p);
        }
    }
    if let Some(prev) = previous {
        table.gone = prev
            .gone
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain(
                prev.tools
                    .iter()
                    .map(|p| (p.exposed.clone(), names[p.upstream].to_string())),
            )
            .filter(|(k, _)| !table.by_name.contains_key(k))
            .collect();
    }
    table.listed = listed;
    table
}

impl Gateway {
    /// Starts the upstreams and lists their tools (an upstream that cannot be started, or
    /// does not list its tools, is an error), then opens the connection's session.
    pub async fn start(mut cfg: Config, opts: GatewayOptions) -> Result<Gateway, GatewayError> {
        config::check_distinct(&opts.upstreams).map_err(|e| GatewayError::Start(e.message))?;
        let (events, changes) = tokio::sync::mpsc::unbounded_channel();
        let upstreams: Vec<Upstream> = opts
            .upstreams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Upstream::new(
                    s.clone(),
                    opts.max_result_bytes,
                    opts.upstream_timeout,
                    i,
                    events.clone(),
                )
            })
            .collect();
        drop(events);
        let mut listed = Vec::with_capacity(upstreams.len());
        for u in &upstreams {
            let tools = u.list_tools().await.map_err(|f| {
                GatewayError::Start(format!("error: --upstream {}: {}", u.name(), f.message()))
            })?;
            listed.push(tools);
        }
        let names: Vec<&str> = upstreams.iter().map(Upstream::name).collect();
        // Augur's own tools keep their names, harness-only ones included.
        let probe = Server::new(Config::new(
            Arc::clone(&cfg.monitor),
            Arc::clone(&cfg.policy),
        ))
        .map_err(|e| GatewayError::Start(e.message))?;
        let mut reserved: Vec<String> = probe.all_tool_names().map(str::to_string).collect();
        reserved.push(BEGIN_TASK.to_string());
        let reserved_refs: Vec<&str> = reserved.iter().map(String::as_str).collect();
        let table = build_table(
            &names,
            listed,
            &reserved_refs,
            None,
            cfg.monitor.classifier(),
        );
        let gateway_tools: HashSet<String> = table
            .tools
            .iter()
            .flat_map(|p| [p.exposed.clone(), p.original.clone()])
            .collect();
        let gateway_tools = Arc::new(RwLock::new(gateway_tools));
        cfg.gateway_tools = Some(Arc::clone(&gateway_tools));
        let server = Arc::new(Server::new(cfg).map_err(|e| {
            GatewayError::Start(if e.message.starts_with("error") {
                e.message
            } else {
                format!("error: --session: {}", e.message)
            })
        })?);
        let session = server
            .connection_session(opts.session.as_deref())
            .map_err(|e| GatewayError::Start(format!("error: --session: {}", e.message)))?;
        let audit = match &opts.audit {
            None => None,
            Some(p) => Some(Mutex::new(AuditLog::open(p).map_err(|e| {
                GatewayError::Start(format!("error: --audit {}: {e}", p.display()))
            })?)),
        };
        let forwarded = server.has_observed(&session);
        if let Some(request) = &opts.request {
            if forwarded {
                return Err(GatewayError::Start(format!(
                    "error: --request: session `{session}` was restored from the journal after it had observed tool results; the request cannot be trusted now"
                )));
            }
            server
                .observe(&session, None, request)
                .map_err(|e| GatewayError::Start(format!("error: --request: {}", e.message)))?;
        }
        let instructions = format!(
            "Augur gateway (session `{session}`). The tools of the upstream servers ({}) pass through Augur's runtime monitor. FIRST, before any other tool, call `begin_task` with the user's request word for word (it is refused once a tool result has come back). A call may come back blocked or paused instead of running: do not retry it; for a paused call stop and ask the user. Your own `gate` calls on these tools are not needed (the gateway gates them) and do not move the session.",
            names.join(", ")
        );
        let base = Handler::new(Arc::clone(&server));
        let inner = Arc::new(Inner {
            server,
            base,
            upstreams,
            table: RwLock::new(table),
            reserved,
            gateway_tools,
            routes: Mutex::new(Routes::default()),
            client: Mutex::new(None),
            session,
            forwarded: AtomicBool::new(forwarded),
            in_flight: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            pauses: Mutex::new(HashMap::new()),
            asks: Mutex::new(HashMap::new()),
            audit,
            audit_broken: AtomicBool::new(false),
            pause_timeout: opts.pause_timeout,
            instructions,
        });
        tokio::spawn(follow_changes(Arc::downgrade(&inner), changes));
        Ok(Gateway { inner })
    }

    /// The connection's session id.
    pub fn session(&self) -> &str {
        &self.inner.session
    }

    /// The names the proxied tools are served under now.
    pub fn proxied_names(&self) -> Vec<String> {
        self.inner
            .table
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .tools
            .iter()
            .map(|p| p.exposed.clone())
            .collect()
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let mut caps = ServerCapabilities::builder()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_prompts_list_changed()
            .enable_resources_list_changed()
            .enable_tool_list_changed()
            .build();
        // Resources and prompts only when some upstream has them.
        if self.with(true).is_empty() {
            caps.resources = None;
        }
        if self.with(false).is_empty() {
            caps.prompts = None;
        }
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(
                "augur-gateway",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.inner.instructions.clone())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.remember_client(&context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.remember_client(&context.peer);
        let mut tools = self.inner.base.tools();
        tools.push(Self::begin_task_tool());
        let t = self.inner.table.read().unwrap_or_else(|e| e.into_inner());
        tools.extend(t.tools.iter().map(|p| p.tool.clone()));
        Ok(ListToolsResult {
            tools,
            ..Default::default()
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (resources, _) = self.list_resources_routed().await?;
        Ok(ListResourcesResult {
            resources,
            ..Default::default()
        })
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (_, resource_templates) = self.list_resources_routed().await?;
        Ok(ListResourceTemplatesResult {
            resource_templates,
            ..Default::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let mut route = self.route_resource(&uri);
        if route.is_none() {
            // Not listed yet (or listed before a change): list, then route again.
            self.list_resources_routed().await?;
            route = self.route_resource(&uri);
        }
        let Some((i, original)) = route else {
            return Err(ErrorData::resource_not_found(
                format!("no upstream serves the resource `{uri}` (list the resources first)"),
                None,
            ));
        };
        let up = &self.inner.upstreams[i];
        let mut r: ReadResourceResult = up
            .read_resource(&original)
            .await
            .map_err(|f| upstream_error(&f))?;
        let mut read = Readable::default();
        for c in &mut r.contents {
            if let Ok(v) = serde_json::to_value(&*c) {
                read.contents(&v);
            }
            match c {
                ResourceContents::TextResourceContents { uri: u, .. }
                | ResourceContents::BlobResourceContents { uri: u, .. }
                    if *u == original =>
                {
                    u.clone_from(&uri);
                }
                // Kinds of content this rmcp does not know yet: as they are.
                _ => {}
            }
        }
        observe_read(&self.inner, &format!("resource {original}"), &read)?;
        Ok(r.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self.list_prompts_routed().await?;
        Ok(ListPromptsResult {
            prompts,
            ..Default::default()
        })
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name;
        let lookup = |g: &Gateway| {
            g.inner
                .routes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .prompts
                .get(&name)
                .cloned()
        };
        let mut route = lookup(self);
        if route.is_none() {
            self.list_prompts_routed().await?;
            route = lookup(self);
        }
        let Some((i, original)) = route else {
            return Err(ErrorData::invalid_params(
                format!("no upstream serves the prompt `{name}` (list the prompts first)"),
                None,
            ));
        };
        let r: GetPromptResult = self.inner.upstreams[i]
            .get_prompt(&original, request.arguments)
            .await
            .map_err(|f| upstream_error(&f))?;
        let mut read = Readable::default();
        if let Some(d) = &r.description {
            read.block(&json!({"type": "text", "text": d}));
        }
        for m in &r.messages {
            match serde_json::to_value(&m.content) {
                Ok(v) => read.block(&v),
                Err(_) => content_text(&m.content, &mut read.text),
            }
        }
        observe_read(&self.inner, &format!("prompt {original}"), &read)?;
        Ok(r.into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let t0 = Instant::now();
        self.remember_client(&context.peer);
        let inner = &self.inner;
        let name = request.name.as_ref();
        if name == BEGIN_TASK {
            return Ok(self.begin_task(request.arguments.as_ref()).into());
        }
        match self.lookup(name) {
            Err(gone) => return Ok(gone.into()),
            Ok(Some(p)) => {
                // The retry of a call answered with `input_required`: the user's answer to
                // its pause, never a new call.
                if let Some(state) = request.request_state.as_deref() {
                    return Ok(self
                        .answered(
                            state,
                            name,
                            request.arguments.as_ref(),
                            request.input_responses.as_ref(),
                            t0,
                        )
                        .await
                        .into());
                }
                let args = request.arguments.unwrap_or_default();
                let result = self.proxied(Arc::clone(&p), args, t0, None).await;
                return Ok(self.paused(result, p, &context, t0).await);
            }
            Ok(None) => {}
        }
        if name == "approve" && inner.server.config().harness {
            if let Some(args) = &request.arguments {
                if let Some(pid) = args.get("pause_id").and_then(Value::as_str) {
                    if let Some(answer) = self.approve(args, pid, t0).await {
                        return Ok(answer.into());
                    }
                }
            }
        }
        self.inner.base.call_tool(request, context).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        Tool::new(name.to_string(), "a tool", Arc::new(Map::new()))
    }

    fn served(t: &Table) -> Vec<(String, usize, String)> {
        t.tools
            .iter()
            .map(|p| (p.exposed.clone(), p.upstream, p.original.clone()))
            .collect()
    }

    #[test]
    fn a_relisted_table_serves_new_tools_and_remembers_removed_ones() {
        let names = ["mail", "notes"];
        let reserved = ["gate", BEGIN_TASK];
        let first = build_table(
            &names,
            vec![vec![tool("send"), tool("read")], vec![tool("list")]],
            &reserved,
            None,
            None,
        );
        assert_eq!(
            served(&first),
            [
                ("send".into(), 0, "send".into()),
                ("read".into(), 0, "read".into()),
                ("list".into(), 1, "list".into()),
            ]
        );
        assert!(first.gone.is_empty());
        // notes drops `list` and adds `read` (now a clash) and `gate` (reserved).
        let second = build_table(
            &names,
            vec![
                vec![tool("send"), tool("read")],
                vec![tool("read"), tool("gate")],
            ],
            &reserved,
            Some(&first),
            None,
        );
        assert_eq!(
            served(&second),
            [
                ("send".into(), 0, "send".into()),
                ("mail__read".into(), 0, "read".into()),
                ("notes__read".into(), 1, "read".into()),
                ("notes__gate".into(), 1, "gate".into()),
            ]
        );
        let mut gone: Vec<(&str, &str)> = second
            .gone
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        gone.sort_unstable();
        assert_eq!(gone, [("list", "notes"), ("read", "mail")]);
        // `list` comes back: served again, no longer gone; `read` stays gone.
        let third = build_table(
            &names,
            vec![vec![tool("send")], vec![tool("list")]],
            &reserved,
            Some(&second),
            None,
        );
        assert!(third.by_name.contains_key("list") && !third.gone.contains_key("list"));
        assert_eq!(third.gone.get("read").map(String::as_str), Some("mail"));
        assert_eq!(
            third.gone.get("mail__read").map(String::as_str),
            Some("mail")
        );
    }

    /// Each proxied tool's declaration is read once, when the table is built: annotations
    /// and schema raise (a destructive tool, a send by its schema), never lower (a send
    /// annotated read-only stays a send).
    #[test]
    fn a_table_reads_each_tools_declaration_once() {
        use augur_gate::classifier::Declared;
        use rmcp::model::ToolAnnotations;
        let schema = json!({"type": "object", "properties": {
            "to": {"type": "string", "format": "email"}, "body": {"type": "string"}}});
        let declared = |name: &str, ann: ToolAnnotations| {
            Tool::new(
                name.to_string(),
                "a tool",
                Arc::new(schema.as_object().cloned().unwrap_or_default()),
            )
            .with_annotations(ann)
        };
        let cl = Classifier::default_rules();
        let t = build_table(
            &["up"],
            vec![vec![
                declared("wipe_records", ToolAnnotations::new().destructive(true)),
                declared("dispatch", ToolAnnotations::new().read_only(true)),
                tool("get_report"),
            ]],
            &[],
            None,
            Some(&cl),
        );
        let profile = |n: &str| t.by_name[n].profile.expect("a classifier gives profiles");
        assert!(profile("wipe_records").by.contains(Declared::DESTRUCTIVE));
        assert!(profile("dispatch").by.contains(Declared::SCHEMA_SEND));
        assert!(profile("get_report").by.is_empty());
        let args = json!({"to": "x@evil.example", "body": "hi"});
        let c = cl
            .classify_declared("dispatch", &args, None, Some(&profile("dispatch")))
            .unwrap();
        assert_eq!(
            c.implication.t,
            augur_gate::dtr::ToolEscalation::Network,
            "read-only declared, still a send"
        );
    }
}
