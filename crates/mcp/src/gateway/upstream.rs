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

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
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

/// A running upstream.
struct Live {
    client: RunningService<RoleClient, ()>,
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
    /// An upstream, not started yet.
    pub fn new(spec: UpstreamSpec, max_line: usize, timeout: Duration) -> Upstream {
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
        }
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

    /// Calls `tool` with `args` on the upstream, starting it first when it is down. `sent` is
    /// called just before the request is handed to the client.
    pub async fn call(
        &self,
        tool: &str,
        args: serde_json::Map<String, serde_json::Value>,
        sent: impl FnOnce(),
    ) -> Result<CallToolResult, Fault> {
        let live = self.live().await?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        sent();
        match tokio::time::timeout(self.timeout, live.client.peer().call_tool(params)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(rmcp::ServiceError::McpError(e))) => Err(Fault::Rpc(format!(
                "upstream `{}` answered the call with an error: {} (code {})",
                self.spec.name, e.message, e.code.0
            ))),
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
                        "it did not answer within the time limit of {} s (--upstream-timeout)",
                        self.timeout.as_secs_f64()
                    ),
                )
                .await),
        }
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
        Fault::Failed(format!(
            "upstream `{}` failed: {why}; it was stopped and is restarted on the next call",
            self.spec.name
        ))
    }

    /// The running process, started when it is down (and its back-off has passed).
    async fn live(&self) -> Result<Arc<Live>, Fault> {
        let mut st = self.state.lock().await;
        if let State::Up(live) = &*st {
            match live.fault() {
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
            return Err(Fault::NotStarted(format!(
                "upstream `{}` is down ({reason}); the next start attempt is in {:.1} s",
                self.spec.name,
                retry_at.duration_since(now).as_secs_f64()
            )));
        }
        let (failures, was_started) = (*failures, reason.as_str() != "not started");
        let start_limit = self.timeout.max(START_TIMEOUT);
        match tokio::time::timeout(start_limit, self.start()).await {
            Ok(Ok(live)) => {
                if was_started {
                    self.restarts
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
                Err(Fault::NotStarted(format!(
                    "upstream `{}` (`{}`) could not be started: {why}",
                    self.spec.name,
                    self.spec.command_line()
                )))
            }
        }
    }

    async fn start(&self) -> Result<Live, String> {
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
        let client = ().serve((rmcp_in, stdin)).await.map_err(|e| {
            match fault.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                Some(why) => why,
                None => format!("the MCP initialisation failed ({e})"),
            }
        })?;
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
