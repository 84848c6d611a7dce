//! The integration tests of augur-check, one binary: each module is one of the files beside
//! this one (`cargo test -p augur-check --test check MODULE::`).

mod ltl;
mod robust;
mod robust_omega;
