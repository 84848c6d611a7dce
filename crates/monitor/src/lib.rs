//! augur-monitor: a checked DTMC turned into a runtime monitor that decides before every agent
//! action.
//!
//! ```text
//! learned or written DTMC ──compile (checker: all states, all horizons)──▶ Monitor (monitor.json)
//! agent action ──Classifier (d, t, r) or Abstraction──▶ abstract state ──table lookup──▶ P, bounds
//!       ──Policy (thresholds, always_block, mode)──▶ Decision {allow|warn|pause|block, P, reason, path}
//! ```
//!
//! Main types:
//! - [`dtr::SafetyState`]: SafetyDrift's `(d, t, r)` state, its monotone update and 12 risk rules.
//! - [`Classifier`]: TOML rules mapping a tool call to implications `(d', t', r')`.
//! - [`Policy`]: thresholds → verdicts, horizon, always-block/allow lists, enforcement mode.
//! - [`Monitor`]: the compiled tables (one per category plus a fallback), saved as JSON.
//! - [`Session`]: one agent run; [`Session::gate`] returns a [`Decision`] without allocating.
//! - [`eval`]: learn on a training split, compile, replay the test split, report.
//!
//! ```
//! use augur_monitor::{compile::{compile_dtmcs, CompileOptions, Source}, Action, Policy, Session, ToolCall, Verdict};
//! use std::sync::Arc;
//! // The SafetyDrift risk-level chain (5 states labelled safe .. violated).
//! let (dtmc, _) = augur_formats::read_model(
//!     std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/safetydrift.tra")),
//!     &Default::default(),
//! ).unwrap();
//! let opts = CompileOptions::new("P=? [ F<=5 \"violated\" ]");
//! let monitor = Arc::new(compile_dtmcs(vec![Source::new(dtmc, "safetydrift.tra")], &opts).unwrap());
//! let mut session = Session::new(&monitor, &Arc::new(Policy::default()), None).unwrap();
//! let args = serde_json::json!({"path": "/workspace/notes.txt"});
//! let d = session.gate(&Action::Tool(ToolCall::new("read_file", &args)));
//! assert_eq!(d.verdict, Verdict::Allow);
//! ```
#![deny(missing_docs)]

pub mod agentdojo;
mod checker;
pub mod compile;
mod error;
pub mod eval;
pub mod plot;
pub mod runs;

pub use error::{MonitorError, Result};

#[cfg(test)]
mod session_tests;
