//! The integration tests of augur-monitor, one binary: each module is one of the files beside
//! this one (`cargo test -p augur-monitor --test monitor MODULE::`).

mod gate_fixtures;
mod library_use;
mod verdict_table;
