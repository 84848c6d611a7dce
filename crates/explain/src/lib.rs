//! augur-explain: counterexamples and explanations of PCTL answers on DTMCs.
//!
//! - [`paths`]: the most probable paths of `φ U ψ` / `φ U≤k ψ` from a state, one at a time, in
//!   order ([`paths::PathSearch`], a k-shortest-walks search in `−ln p`); a prefix of them
//!   whose mass exceeds `θ` is a counterexample to `P<=θ`.
//! - [`subsystem`]: critical subsystems — a set of states whose sub-chain (transitions leaving
//!   it redirected to a sink) alone exceeds `θ`: [`subsystem::grow`] (heuristic, from the most
//!   probable paths), [`subsystem::minimal`] (exact, branch and bound, small models).
//! - [`rewards`]: for `R{"r"} [ F ψ ]`, each state's contribution `visits · r` and the reward
//!   each path carries.
//! - [`dot`]: the subsystem as a petgraph graph and its DOT, the paths highlighted.
//! - [`explain()`]: the front-ends' entry point (CLI `augur explain`, MCP tool `explain`, Python
//!   `augur_mc.explain`): a property as text on a loaded [`augur_check::Model`], its state sets
//!   computed by the checker, and one serialisable [`Explanation`].
//!
//! The crate knows DTMCs and sets of states; resolving and checking go through `augur-check`.
//!
//! ```
//! use augur_check::{Format, LoadOptions, Model};
//! use augur_explain::{explain, Request, SubsystemKind};
//! // From 0: to the goal 2 with 0.3, to 1 with 0.5, to the sink 3 with 0.2; 1 → 2 (0.4) | 3.
//! let text = "dtmc
//! module m
//!   s : [0..3] init 0;
//!   [] s=0 -> 0.3:(s'=2) + 0.5:(s'=1) + 0.2:(s'=3);
//!   [] s=1 -> 0.4:(s'=2) + 0.6:(s'=3);
//!   [] s>=2 -> true;
//! endmodule
//! label \"goal\" = s=2;";
//! let model = Model::from_text("m.pm", text, Format::Prism, &LoadOptions::default()).unwrap();
//! let mut request = Request::new("P<=0.4 [ F \"goal\" ]", 5);
//! request.subsystem = Some(SubsystemKind::Minimal);
//! let e = explain(&model, &request).unwrap().explanation;
//! assert_eq!(e.violated, Some(true)); // P = 0.3 + 0.5·0.4 = 0.5 > 0.4
//! assert_eq!(e.paths.len(), 2);
//! assert_eq!(e.paths[0].probability, 0.3);
//! assert_eq!(e.paths_to_exceed, Some(2)); // 0.3 alone is not above 0.4; 0.3 + 0.2 is
//! assert_eq!(e.subsystem.unwrap().size, 3); // {0, 1, 2}
//! ```
#![deny(missing_docs)]

pub mod dot;
mod error;
mod explain;
pub mod listing;
pub mod paths;
pub mod rewards;
mod stop;
pub mod subsystem;

pub use error::{ExplainError, Result};
pub use explain::{
    explain, state_name, ContributionReport, Explained, Explanation, MissReport, PathReport,
    Request, RewardReport, StateRef, SubsystemKind, SubsystemReport, ThresholdReport,
    DEFAULT_MAX_PATHS, MAX_LISTED_PATHS, MAX_LISTED_STATES,
};
pub use listing::{PathStates, PathTree};

#[cfg(test)]
mod tests;
