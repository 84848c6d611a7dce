//! The integration tests of augur-formats, one binary: each module is one of the files beside
//! this one (`cargo test -p augur-formats --test formats MODULE::`).

mod large;
mod models;
