//! augur-dtmc: the sparse DTMC.
#![deny(missing_docs)]

mod model;
pub use model::*;
pub mod learn;
pub mod pac;
pub mod simulate;
