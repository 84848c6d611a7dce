//! augur-mcp: Augur as an MCP server (`augur mcp`, stdio, on the official `rmcp` SDK). An
//! agent calls `gate` before every tool call and gets the runtime monitor's decision; `check`,
//! `horizon` and `pac` run the checker. The agent is a client of this server, so it cannot
//! switch the monitor off: sessions are opened by the harness, unknown and expired sessions
//! are refused, the tools that move the monitor back are harness-only, files are read only
//! under `--root`, and every request runs under [`augur_check::Limits`].
//!
//! Main types:
//! - [`Server`]: the tools' logic ([`Server::tools`], [`Server::call`]), with the sessions.
//! - [`Config`]: the server's options.
//! - [`ops`]: loading, checking, the horizon curve and PAC reports as the tools (and the
//!   Python package) call them.
//! - [`pause`]: a paused action's id and its `approve` / `deny` (shared with the Python
//!   package).
//! - [`hook`]: what a client's hooks send (tool names, result text), for `augur hook`.
//! - [`ToolError`]: a tool's failure with the located message.
//! - `stdio::serve_stdio` (feature `stdio`, on by default): the rmcp server on stdin/stdout.
//! - `gateway` (feature `stdio`): `augur mcp --upstream`, Augur between an MCP client and
//!   its tool servers: every proxied call gated, every result observed.
//!
//! ```
//! use augur_mcp::{Config, Server};
//! use std::sync::Arc;
//! let monitor = Arc::new(augur_mcp::server::default_monitor().unwrap());
//! let mut cfg = Config::new(monitor, Arc::new(augur_gate::Policy::default()));
//! cfg.sessions.push(("run-1".into(), None));
//! let server = Server::new(cfg).unwrap();
//! let args = serde_json::json!({"session": "run-1", "tool": "read_file", "args": {"path": "notes.txt"}});
//! let decision = server.call("gate", Some(args)).unwrap().unwrap();
//! assert_eq!(decision["verdict"], "allow");
//! // An id the harness did not open is refused (blocked), never started at the safe state.
//! let args = serde_json::json!({"session": "made-up", "tool": "read_file"});
//! let decision = server.call("gate", Some(args)).unwrap().unwrap();
//! assert_eq!(decision["verdict"], "block");
//! ```
#![deny(missing_docs)]

mod error;
#[cfg(feature = "stdio")]
pub mod gateway;
pub mod hook;
pub mod ops;
pub mod pause;
pub mod server;
#[cfg(feature = "stdio")]
pub mod stdio;

pub use error::{ErrorKind, Result, ToolError};
pub use server::{CallError, Config, Server, ToolSpec};
