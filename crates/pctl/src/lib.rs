//! augur-pctl: PCTL properties in PRISM syntax.
#![deny(missing_docs)]

mod ast;
pub use ast::*;
