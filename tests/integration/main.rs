//! The end-to-end tests of the `augur` binary, in one test binary (ripgrep's `tests/` layout:
//! one module per area, helpers in the shared `util` module). The data-driven conformance
//! tests on `../shared` are the other binary, `tests/conformance/main.rs`.
//!
//! Run one area with a filter: `cargo test --test integration -- learn::`.

#[path = "../util/mod.rs"]
mod util;

mod agentdojo;
mod architecture;
mod assert;
mod bad_input;
mod built_chains;
mod check;
mod errors;
mod exact;
mod explain;
mod export;
mod first_hour;
mod gate_stream;
mod gateway;
mod hook;
mod hook_session;
mod hook_trust;
mod hostile_input;
mod large_inputs;
mod learn;
mod learn_counts;
mod learn_end_state;
mod learn_intervals;
mod learn_order;
mod learn_parametric;
mod learn_parquet;
mod learn_threads;
mod ltl;
mod ltl_reward;
mod monitor;
mod monitor_learn;
mod monitor_robust;
mod mutation;
mod options;
mod param;
mod parse;
mod prism_models;
mod provenance;
mod robust_exact;
mod robust_ltl;
mod session_state;
mod tables;
mod type_names;
