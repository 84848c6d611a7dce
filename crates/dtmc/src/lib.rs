//! augur-dtmc: the sparse DTMC.
#![deny(missing_docs)]

mod model;
pub use model::*;
