//! augur-monitor: the offline side of Augur's runtime monitor. It turns a checked DTMC into
//! the monitor file that [`augur_gate`] reads at runtime, and measures monitors on labelled runs.
//!
//! ```text
//! learned or written DTMC ──compile (checker: all states, all horizons)──▶ monitor file
//! labelled runs ──eval (learn on a split, compile, replay the rest)──▶ report, curves, plots
//! AgentDojo runs ──agentdojo (converter)──▶ labelled runs
//! ```
//!
//! Main items:
//! - [`compile`]: [`compile::compile_dtmcs`] / [`compile::compile`] check the property in every
//!   state of each model and save the tables a running agent needs ([`augur_gate::Monitor`]).
//! - [`eval`]: learn on a training split, compile, replay the test split, report
//!   ([`eval::evaluate`]); the baselines beside it.
//! - [`runs`]: labelled runs (JSON Lines), [`agentdojo`]: the AgentDojo converter,
//!   [`plot`]: the evaluation's SVG plots.
//!
//! The gate itself (classifier, policy, provenance, sessions) is [`augur_gate`], which links no
//! checker; this crate is the only monitor crate that does.
//!
//! ```
//! use augur_monitor::compile::{compile_dtmcs, CompileOptions, Source};
//! use augur_gate::{Action, Policy, Session, ToolCall, Verdict};
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
