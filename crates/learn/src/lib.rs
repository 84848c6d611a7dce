//! augur-learn: learning DTMCs from agent traces, PAC bounds, and simulation.
//!
//! - [`learn`](mod@learn): [`TransitionCounts`] (observed transitions, invalid ones kept
//!   apart), [`learn()`] / [`learn_with`] (validity-aware Laplace smoothing, Pro2Guard's
//!   Algorithm 1 made to give rows that sum to 1), Wilson intervals; validity is the
//!   [`Validity`] trait, so the learner needs no abstraction.
//! - [`counts`]: counts keyed by state name ([`counts::KeyedCounts`]), the artefact shards
//!   are summed in (`augur learn --counts-only`, `--from-counts`); [`counts_table`]: the
//!   same counts from the rows of a counts table (one count per row, as `docs/sql/counts.sql`
//!   gives them on a SQL engine).
//! - [`intervals`]: learned interval DTMCs whose intervals hold simultaneously with a stated
//!   confidence (`augur learn --intervals`), and the width advice of `augur pac --width`.
//! - [`end_state`]: trace ends as an absorbing state of their own (`--end-state NAME`), so
//!   that "a violation before the run ends" is a question the model can answer.
//! - [`observed`]: the chain of the observed runs ([`observed::observed_runs_chain`]: the
//!   observed transitions and where runs ended), to tell a value that only smoothing makes 1.
//! - [`parametric`]: learned rows kept symbolic (`augur learn --parametric STATE`), a
//!   parametric DTMC, and the confidence box of each such row (`augur pac --param-box`).
//! - [`pac`]: PAC sample-size bounds per state ([`pac::pac_report`], [`pac::required_samples`]).
//! - [`simulate`]: seeded, reproducible traces of a DTMC ([`simulate::Simulator`]).
//! - [`pipeline`]: the trace file → model pipeline every front-end uses (the CLI's `learn`,
//!   the monitor, the MCP server): read traces with or without an abstraction spec, learn by
//!   category, write the learned model with its counts.
//!
//! Errors are [`LearnError`] ([`Result`]); located ones (spec, trace lines, steps) render with
//! a caret through [`LearnError::diagnostic`]. This is the only Augur crate that depends on
//! `rand`.
//!
//! ```
//! use augur_learn::{learn, AllValid, TransitionCounts};
//! use augur_learn::pac::{pac_report, PacBound};
//! let mut counts = TransitionCounts::new(2);
//! for _ in 0..50 {
//!     counts.observe_trace(&[0, 1, 1], &AllValid);
//! }
//! let learned = learn(&counts, &AllValid, 0.0)?;
//! assert_eq!(learned.dtmc.matrix.get(0, 1).copied(), Some(1.0));
//! let report = pac_report(&counts, 0.1, 0.05, PacBound::ChenEtAl)?;
//! assert_eq!(report.states, 2);
//! # Ok::<(), augur_learn::LearnError>(())
//! ```
#![deny(missing_docs)]

pub mod counts;
pub mod counts_table;
pub mod end_state;
mod error;
pub mod intervals;
mod jsonl;
pub mod learn;
pub mod observed;
pub mod pac;
pub mod parametric;
pub mod pipeline;
pub mod simulate;

pub use error::{LearnError, Result};
pub use learn::{
    learn, learn_with, AllValid, CountsJson, LearnReport, Learned, LearnedCounts, TransitionCounts,
    Unobserved, Validity,
};
