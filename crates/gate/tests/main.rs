//! The integration tests of augur-gate, one binary: each module is one of the files beside
//! this one (`cargo test -p augur-gate --test gate MODULE::`).

mod adaptive;
mod injection_fixture;
mod provenance_collision;
mod session_text;
mod tiers;
mod trust;
mod unseen_tools;
