//! augur-prism: the PRISM modelling language (DTMC subset) and state-space construction.
//!
//! Main types: [`Model`] (a parsed, statically checked model file), [`BuildOptions`],
//! [`BuildReport`], [`PrismError`].
#![deny(missing_docs)]

pub mod ast;
mod build;
pub mod compile;
mod error;
pub mod eval;
mod model;
mod parser;
mod program;

pub use build::{BuildOptions, BuildProgress, BuildReport};
pub use error::{Location, PrismError, Result};
pub use model::Model;
pub use parser::parse_model;

#[cfg(test)]
mod tests;
