//! augur-expr: the typed expression language shared by PCTL, the PRISM language and
//! abstraction predicates.
#![deny(missing_docs)]

mod ast;
pub use ast::*;
