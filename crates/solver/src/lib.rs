//! augur-solver
#![deny(missing_docs)]
