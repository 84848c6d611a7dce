//! augur-gate: the runtime of Augur's monitor. A compiled monitor file decides allow / warn /
//! pause / block before every agent action, without linking the checker: a gate is a table
//! lookup that allocates nothing.
//!
//! ```text
//! monitor file (compiled offline by augur-monitor) ──Monitor::load──▶ Monitor
//! user request, tool results ──Session::observe──▶ provenance (values → first seen where)
//! agent action ──Classifier (d, t, r) + provenance, or Abstraction──▶ abstract state
//!       ──table lookup──▶ P, bounds ──Policy──▶ Decision {allow|warn|pause|block, P, reason}
//! ```
//!
//! Main types:
//! - [`Monitor`]: the compiled tables (one per category plus a fallback), read from JSON.
//! - [`dtr::SafetyState`]: SafetyDrift's `(d, t, r)` state, its monotone update and risk rules.
//! - [`Classifier`]: TOML rules mapping a tool call to implications `(d', t', r')`.
//! - [`Policy`]: thresholds → verdicts, horizon, always-block/allow lists, enforcement mode.
//! - [`provenance::Provenance`]: the values a session has seen and where each was first seen.
//! - [`intent::Intent`]: what the user's request named and delegated, the injection signals
//!   seen, and the tier (block / pause / the user's) of a call's untrusted values.
//! - [`counterparty`]: the recipients of records the user authored in a result (known
//!   payees and contacts), which the intent decides as the user's.
//! - [`Session`]: one agent run; [`Session::gate`] returns a [`Decision`] without allocating.
//! - [`SessionStore`] and [`journal`]: many sessions with limits, surviving a restart.
//! - [`builtin`]: the monitors compiled into the binary (the gateway's and the Claude Code
//!   hook's) and the versions of the built-in rule sets (stale monitor files).
//!
//! Invariants: no checker, solver or model reader is linked (a test reads `cargo metadata`);
//! a gate allocates nothing; every failure (a closed session, an unknown tool shape, a limit)
//! fails closed, never to `allow`.
//!
//! ```
//! use augur_gate::{Action, Monitor, Policy, Session, ToolCall, Verdict};
//! use std::sync::Arc;
//! // A monitor compiled by `augur monitor compile` (the SafetyDrift risk-level chain).
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/safetydrift-risk.json");
//! let monitor = Arc::new(Monitor::load(std::path::Path::new(file)).unwrap());
//! let mut session = Session::new(&monitor, &Arc::new(Policy::default()), None).unwrap();
//! let args = serde_json::json!({"path": "/workspace/notes.txt"});
//! let d = session.gate(&Action::Tool(ToolCall::new("read_file", &args)));
//! assert_eq!(d.verdict, Verdict::Allow);
//! ```
#![deny(missing_docs)]

pub mod builtin;
pub mod burned;
pub mod classifier;
pub mod counterparty;
pub mod dtr;
mod error;
pub mod injection;
pub mod intent;
pub mod journal;
pub mod monitor;
pub mod policy;
pub mod provenance;
pub mod session;
pub mod store;
mod text;
pub mod words;

pub use classifier::Classifier;
pub use error::{GateError, Result};
pub use monitor::{Mapping, Monitor};
pub use policy::{Mode, Policy, Verdict};
pub use session::{Action, AuditRecord, Decision, Session, ToolCall};
pub use store::SessionStore;
pub use text::{read_text, sha256_hex};
pub use words::NamePattern;
