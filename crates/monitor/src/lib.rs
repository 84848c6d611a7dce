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
pub mod classifier;
pub mod compile;
pub mod dtr;
mod error;
pub mod eval;
pub mod journal;
pub mod monitor;
pub mod plot;
pub mod policy;
pub mod provenance;
pub mod runs;
pub mod session;
mod words;

pub use classifier::Classifier;
pub use error::{MonitorError, Result};
pub use monitor::{Mapping, Monitor};
pub use policy::{Mode, Policy, Verdict};
pub use session::{Action, AuditRecord, Decision, Session, SessionStore, ToolCall};
pub use words::NamePattern;

/// Read a user's text file (a byte-order mark is dropped); failures name the file.
pub(crate) fn read_text(path: &std::path::Path) -> Result<String> {
    let mut text = std::fs::read_to_string(path).map_err(|e| MonitorError::Io {
        file: path.display().to_string(),
        source: e,
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}
