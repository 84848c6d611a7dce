//! One upstream MCP server: a child process the gateway starts, talks to as an MCP client
//! (rmcp's client over the child's stdin/stdout) and restarts after a fault.
//!
//! The child's output goes through a line filter before rmcp reads it (rmcp would drop a
//! line that is not JSON and leave the call waiting): a line that is not JSON, or longer than
//! the result cap, stops the upstream with that reason, and the calls in flight on it fail
//! at once with it. Faults — the process exits, a call exceeds the time limit, malformed or
//! oversized output — stop the process (killed) and mark the upstream down; the next call
//! starts it again. Starts that fail are retried with back-off (0.5 s doubling up to 30 s);
//! within the back-off a call fails at once, naming the time of the next attempt. An upstream
//! is never dropped: every call either reaches a running process or gets an error result.
//!
//! The upstream's `notifications/{tools,resources,prompts}/list_changed`, and each restart,
//! are reported on the gateway's event channel ([`Changed`]): the gateway then lists the
//! upstream's tools again and tells its own client.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ResultType, Tool,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use std::future::Future;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};

use super::config::UpstreamSpec;
use crate::stdio::{read_line, Line};

/// Why an upstream call did not give a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The upstream could not be started (or is in its back-off): the call was not sent.
    NotStarted(String),
    /// The call was sent and the upstream failed (crash, time limit, malformed or oversized
    /// output): its outcome is unknown.
    Failed(String),
    /// The upstream answered the call with a JSON-RPC error (it is still running).
    Rpc(String),
}

impl Fault {
    /// Whether the call may have run on the upstream.
    pub fn maybe_executed(&self) -> bool {
        !matches!(self, Fault::NotStarted(_))
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Fault::NotStarted(m) | Fault::Failed(m) | Fault::Rpc(m) => m,
        }
    }
}

/// What changed on an upstream (reported with its index on the gateway's event channel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Changed {
    /// It sent `notifications/tools/list_changed`.
    Tools,
    /// It sent `notifications/resources/list_changed`.
    Resources,
    /// It sent `notifications/prompts/list_changed`.
    Prompts,
    /// It was started again after a fault: its tools may differ from the last listing.
    Restarted,
}

/// The sender of the gateway's event channel: (upstream index, what changed).
pub type Events = tokio::sync::mpsc::UnboundedSender<(usize, Changed)>;

/// The gateway's MCP client handler for one upstream: it reports the upstream's
/// `list_changed` notifications on the event channel (the rest is rmcp's default: requests
/// from the upstream, e.g. sampling or elicitation, are declined).
#[derive(Clone)]
struct Listener {
    index: usize,
    events: Events,
}

impl Listener {
    fn report(&self, what: Changed) {
        // The gateway is gone when the channel is closed: nothing to tell.
        let _ = self.events.send((self.index, what));
    }
}

impl ClientHandler for Listener {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.report(Changed::Tools);
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.report(Changed::Resources);
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.report(Changed::Prompts);
        std::future::ready(())
    }
}

/// What an upstream declared at initialisation beyond tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// It serves resources.
    pub resources: bool,
    /// It serves prompts.
    pub prompts: bool,
}

/// A running upstream.
struct Live {
    client: RunningService<RoleClient, Listener>,
    child: Mutex<Option<tokio::process::Child>>,
    /// Set by the output filter when it stopped the connection (the reason).
    fault: Arc<Mutex<Option<String>>>,
    generation: u64,
}

impl Live {
    fn kill(&self) {
        if let Some(mut c) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // kill_on_drop does the rest if start_kill fails.
            let _ = c.start_kill();
            tokio::spawn(async move {
                let _ = c.wait().await;
            });
        }
    }

    fn fault(&self) -> Option<String> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

enum State {
    Up(Arc<Live>),
    Down {
        /// Consecutive failed starts.
        failures: u32,
        /// No start before this.
        retry_at: Instant,
        /// Why it is down (for the next call's error when a start fails).
        reason: String,
    },
}

/// An upstream server and its process.
pub struct Upstream {
    spec: UpstreamSpec,
    state: tokio::sync::Mutex<State>,
    /// The longest line (bytes) accepted from the upstream.
    max_line: usize,
    /// The time limit of a call (and of a start, at least [`START_TIMEOUT`]).
    timeout: Duration,
    generation: std::sync::atomic::AtomicU64,
    restarts: std::sync::atomic::AtomicU64,
    listener: Listener,
    capabilities: Mutex<Capabilities>,
}

/// The least time limit of a start (spawn and MCP initialisation): interpreters and `npx`
/// take seconds to start, more than a call's `--upstream-timeout` may allow.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The back-off before start attempt `failures + 1` after `failures` failed starts.
pub fn backoff(failures: u32) -> Duration {
    if failures == 0 {
        return Duration::ZERO;
    }
    let ms = 500u64.saturating_mul(1u64 << (failures - 1).min(16));
    Duration::from_millis(ms.min(30_000))
}

impl Upstream {
    /// An upstream, not started yet: the `index`th of the gateway, which hears of its changes
    /// on `events`.
    pub fn new(
        spec: UpstreamSpec,
        max_line: usize,
        timeout: Duration,
        index: usize,
        events: Events,
    ) -> Upstream {
        Upstream {
            spec,
            state: tokio::sync::Mutex::new(State::Down {
                failures: 0,
                retry_at: Instant::now(),
                reason: "not started".into(),
            }),
            max_line,
            timeout,
            generation: 0.into(),
            restarts: 0.into(),
            listener: Listener { index, events },
            capabilities: Mutex::new(Capabilities::default()),
        }
    }

    /// What it declared at its last start (resources, prompts).
    pub fn capabilities(&self) -> Capabilities {
        *self.capabilities.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// How many times it was started after its first start.
    pub fn restarts(&self) -> u64 {
        self.restarts.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Starts it (when it is not running) and lists its tools.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Fault> {
        let live = self.live().await?;
        match tokio::time::timeout(self.timeout, live.client.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(self
                .fail(&live, format!("listing its tools failed: {e}"))
                .await),
            Err(_) => Err(self
                .fail(
                    &live,
                    format!("it did not list its tools within {:?}", self.timeout),
                )
                .await),
        }
    }

    /// Sends one request (`what` names it in messages) to the upstream, starting it first when
    /// it is down, within the time limit; faults as for [`Upstream::call`].
    async fn request<T, F, Fut>(&self, what: &str, send: F) -> Result<T, Fault>
    where
        F: FnOnce(rmcp::Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, rmcp::ServiceError>>,
    {
        self.request_then(what, || {}, send).await
    }

    /// [`Upstream::request`], calling `sent` just before the request is handed to the client.
    async fn request_then<T, F, Fut>(
        &self,
        what: &str,
        sent: impl FnOnce(),
        send: F,
    ) -> Result<T, Fault>
    where
        F: FnOnce(rmcp::Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let live = self.live().await?;
        let peer = live.client.peer().clone();
        sent();
        match tokio::time::timeout(self.timeout, send(peer)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(Fault::Rpc(self.spec.scrub(&format!(
                "upstream `{}` answered {what} with an error: {} (code {})",
                self.spec.name, e.message, e.code.0
            )))),
            Ok(Err(e)) => {
                // Give the output filter a moment to say why the connection closed.
                let why = match live.fault() {
                    Some(w) => w,
                    None => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        live.fault()
                            .unwrap_or_else(|| format!("the connection failed ({e})"))
                    }
                };
                Err(self.fail(&live, why).await)
            }
            Err(_) => Err(self
                .fail(
                    &live,
                    format!(
                        "it did not answer {what} within the time limit of {} s (--upstream-timeout)",
                        self.timeout.as_secs_f64()
                    ),
                )
                .await),
        }
    }

    /// Its resources (`resources/list`, every page).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Fault> {
        self.request(
            "resources/list",
            |p| async move { p.list_all_resources().await },
        )
        .await
    }

    /// Its resource templates (`resources/templates/list`, every page).
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Fault> {
        self.request("resources/templates/list", |p| async move {
            p.list_all_resource_templates().await
        })
        .await
    }

    /// Reads the resource `uri` (`resources/read`).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Fault> {
        let params = ReadResourceRequestParams::new(uri);
        let mut r = self
            .request("resources/read", |p| async move {
                p.read_resource(params).await
            })
            .await?;
        r.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(r)
    }

    /// Its prompts (`prompts/list`, every page).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Fault> {
        self.request(
            "prompts/list",
            |p| async move { p.list_all_prompts().await },
        )
        .await
    }

    /// Gets the prompt `name` with `args` (`prompts/get`).
    pub async fn get_prompt(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<GetPromptResult, Fault> {
        let mut params = GetPromptRequestParams::new(name);
        if let Some(a) = args {
            params = params.with_arguments(a);
        }
        let mut r = self
            .request("prompts/get", |p| async move { p.get_prompt(params).await })
            .await?;
        r.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(r)
    }

    /// Calls `tool` with `args` on the upstream, starting it first when it is down. `sent` is
    /// called just before the request is handed to the client.
    pub async fn call(
        &self,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        sent: impl FnOnce(),
    ) -> Result<CallToolResult, Fault> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let mut r = self
            .request_then(
                "the call",
                sent,
                |p| async move { p.call_tool(params).await },
            )
            .await?;
        // An upstream on a protocol before 2026-07-28 sends no `resultType`; a client on
        // 2026-07-28 requires it (rmcp strips it again for older clients).
        r.result_type.get_or_insert(ResultType::COMPLETE);
        Ok(r)
    }

    /// Stops `live` (when it is still the running process) and returns the fault.
    async fn fail(&self, live: &Arc<Live>, why: String) -> Fault {
        live.kill();
        let mut st = self.state.lock().await;
        if let State::Up(cur) = &*st {
            if cur.generation == live.generation {
                *st = State::Down {
                    failures: 0,
                    retry_at: Instant::now(),
                    reason: why.clone(),
                };
            }
        }
        Fault::Failed(self.spec.scrub(&format!(
            "upstream `{}` failed: {why}; it was stopped and is restarted on the next call",
            self.spec.name
        )))
    }

    /// The running process, started when it is down (and its back-off has passed).
    async fn live(&self) -> Result<Arc<Live>, Fault> {
        let mut st = self.state.lock().await;
        if let State::Up(live) = &*st {
            let why = live.fault().or_else(|| {
                live.client
                    .is_closed()
                    .then(|| "its connection closed".to_string())
            });
            match why {
                None => return Ok(Arc::clone(live)),
                Some(why) => {
                    live.kill();
                    *st = State::Down {
                        failures: 0,
                        retry_at: Instant::now(),
                        reason: why,
                    };
                }
            }
        }
        let State::Down {
            failures,
            retry_at,
            reason,
        } = &*st
        else {
            unreachable!("handled above")
        };
        let now = Instant::now();
        if now < *retry_at {
            return Err(Fault::NotStarted(self.spec.scrub(&format!(
                "upstream `{}` is down ({reason}); the next start attempt is in {:.1} s",
                self.spec.name,
                retry_at.duration_since(now).as_secs_f64()
            ))));
        }
        let (failures, was_started) = (*failures, reason.as_str() != "not started");
        let start_limit = self.timeout.max(START_TIMEOUT);
        match tokio::time::timeout(start_limit, self.start()).await {
            Ok(Ok(live)) => {
                if let Some(info) = live.client.peer().peer_info() {
                    *self.capabilities.lock().unwrap_or_else(|p| p.into_inner()) = Capabilities {
                        resources: info.capabilities.resources.is_some(),
                        prompts: info.capabilities.prompts.is_some(),
                    };
                }
                if was_started {
                    self.restarts
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    // Its tools may have changed while it was down: the gateway lists them again.
                    self.listener.report(Changed::Restarted);
                }
                let live = Arc::new(live);
                *st = State::Up(Arc::clone(&live));
                Ok(live)
            }
            outcome => {
                let why = match outcome {
                    Ok(Err(e)) => e,
                    _ => format!(
                        "it did not complete the MCP initialisation within {} s",
                        start_limit.as_secs_f64()
                    ),
                };
                let failures = failures + 1;
                *st = State::Down {
                    failures,
                    retry_at: Instant::now() + backoff(failures),
                    reason: why.clone(),
                };
                // Named by its name and program only (its arguments, URL credentials and
                // environment may hold secrets: the message reaches the agent and the audit).
                Err(Fault::NotStarted(self.spec.scrub(&format!(
                    "upstream `{}` (`{}`) could not be started: {why}",
                    self.spec.name,
                    self.spec.shown()
                ))))
            }
        }
    }

    async fn start(&self) -> Result<Live, String> {
        if let Some(url) = &self.spec.url {
            return self.start_http(url).await;
        }
        let mut cmd = tokio::process::Command::new(&self.spec.command);
        cmd.args(&self.spec.args)
            .envs(self.spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| e.to_string())?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("its standard input and output could not be opened".into());
        };
        let fault = Arc::new(Mutex::new(None));
        let (mut to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
        let max_line = self.max_line;
        let pump_fault = Arc::clone(&fault);
        tokio::spawn(async move {
            let mut input = BufReader::new(stdout);
            let mut line = Vec::new();
            let why = loop {
                line.clear();
                match read_line(&mut input, &mut line, max_line).await {
                    Err(e) => break format!("reading its output failed ({e})"),
                    Ok(Line::Eof) => break "it exited (its output ended)".to_string(),
                    Ok(Line::Oversized) => {
                        break format!(
                            "it sent a message longer than {max_line} bytes (the cap, --max-result-bytes)"
                        )
                    }
                    Ok(Line::Complete) => {
                        let body = trim_line(&line);
                        if body.iter().all(u8::is_ascii_whitespace) {
                            continue;
                        }
                        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                            let shown: String = String::from_utf8_lossy(&body[..body.len().min(80)]).into();
                            break format!("it wrote a line that is not JSON ({e}): {shown:?}");
                        }
                        if to_rmcp.write_all(body).await.is_err()
                            || to_rmcp.write_all(b"\n").await.is_err()
                            || to_rmcp.flush().await.is_err()
                        {
                            return;
                        }
                    }
                }
            };
            *pump_fault.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
            // Dropping `to_rmcp` closes rmcp's input: the calls in flight fail now.
        });
        let client = self
            .listener
            .clone()
            .serve((rmcp_in, stdin))
            .await
            .map_err(
                |e| match fault.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                    Some(why) => why,
                    None => format!("the MCP initialisation failed ({e})"),
                },
            )?;
        Ok(Live {
            client,
            child: Mutex::new(Some(child)),
            fault,
            generation: self
                .generation
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }
}

impl Upstream {
    /// Connects to a streamable-HTTP upstream (rmcp's transport on a reqwest client of
    /// [`super::tls::http_client`]: TLS for `https://`, the upstream's `ca` or the platform's
    /// roots): its `headers` on every request, messages over the result cap refused by the
    /// client. A refused certificate is recorded in the fault slot, which names it in the
    /// start's error and in the error of a call that fails on a new connection.
    #[cfg(feature = "http-upstream")]
    async fn start_http(&self, url: &str) -> Result<Live, String> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        use rmcp::transport::StreamableHttpClientTransport;
        let mut headers = std::collections::HashMap::new();
        for (k, v) in &self.spec.headers {
            let name = http::HeaderName::try_from(k.as_str())
                .map_err(|e| format!("the header name `{k}` is not valid ({e})"))?;
            let value = http::HeaderValue::try_from(v.as_str())
                .map_err(|e| format!("the value of header `{k}` is not valid ({e})"))?;
            headers.insert(name, value);
        }
        let fault: super::tls::Slot = Arc::new(Mutex::new(None));
        let http = super::tls::http_client(url, self.spec.ca.as_deref(), Arc::clone(&fault))?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        config.custom_headers = headers;
        config.max_json_response_size = self.max_line;
        config.max_sse_event_size = self.max_line;
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let client = self.listener.clone().serve(transport).await.map_err(|e| {
            match fault.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                Some(why) => why,
                // rmcp's initialisation error does not chain its transport error: start
                // the chain there (the HTTP client's reason is at its end).
                None => format!(
                    "the MCP initialisation over HTTP failed ({})",
                    match &e {
                        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
                            super::tls::error_chain(error.error.as_ref())
                        }
                        other => super::tls::error_chain(other),
                    }
                ),
            }
        })?;
        Ok(Live {
            client,
            child: Mutex::new(None),
            fault,
            generation: self
                .generation
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    #[cfg(not(feature = "http-upstream"))]
    async fn start_http(&self, url: &str) -> Result<Live, String> {
        Err(super::config::check_url(url)
            .err()
            .unwrap_or_else(|| "no HTTP client in this build".into()))
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_half_a_second_to_thirty() {
        let got: Vec<u64> = (0..10).map(|f| backoff(f).as_millis() as u64).collect();
        assert_eq!(
            got,
            [0, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]
        );
        assert_eq!(backoff(u32::MAX), Duration::from_secs(30));
    }
}
