//! augur-pctl: PCTL properties in PRISM syntax (DTMC fragment, plus Storm's `T=? [ F φ ]`).
//!
//! Main types: [`Property`] and [`PropertiesFile`] (the results of [`parse_property`] and
//! [`parse_properties`]), the formula ASTs [`StateFormula`], [`PathFormula`], [`RewardPath`],
//! and the located error [`PctlError`] (turn it into an `augur_source::Diagnostic` with [`PctlError::diagnostic`]).
//! Every AST type prints its canonical PRISM text with `Display` (see [`print`](mod@print)) and
//! (de)serialises with serde.
//!
//! ```
//! use augur_pctl::{parse_property, parse_properties, StateFormula};
//! let p = parse_property(r#""safe": P<=0.01 [ F<=T "crash" ]"#).unwrap();
//! assert_eq!(p.name.as_deref(), Some("safe"));
//! assert!(matches!(p.formula, StateFormula::Prob { .. }));
//! assert_eq!(p.to_string(), r#""safe": P<=0.01 [ F<=T "crash" ]"#);
//!
//! let file = parse_properties("const int T = 5;\nP=? [ F<=T s=2 ] // bounded\nR{\"r\"}=? [ C ];").unwrap();
//! assert_eq!(file.constants.len(), 1);
//! assert_eq!(file.properties.len(), 2);
//!
//! let err = parse_property("P=? [ F<0 \"goal\" ]").unwrap_err();
//! assert_eq!((err.line(), err.column()), (1, 8));
//! ```
//!
//! Plain boolean expressions over variables and constants are one [`StateFormula::Expr`]
//! leaf (`s=1 & t!=2` is one expression); the connectives of [`StateFormula`] appear only where
//! an operand is a label, a `P`/`R`/`S`/`T` operator or a filter. Names (labels, variables,
//! constants) are not resolved here: that happens when a property is checked against a model.
//!
//! Checks done at parse time (each a [`PctlError::Invalid`] with the location): probability
//! bounds outside `[0, 1]` and negative reward bounds (when the bound names no constant),
//! negative, empty (`<0`, `[5,2]`) or non-integer step bounds (when they name no constant),
//! discount factors outside `[0, 1]`, a path formula where a state formula belongs
//! (`S=? [ F "up" ]`) and the reverse (`P=? [ "up" ]`), reward indices below 1, and duplicate
//! constant, label or property names in a file.
//!
//! Once constant values are known (model, properties file, `--const`),
//! [`StateFormula::instantiate`] substitutes them, folds constant subexpressions and re-runs the
//! same range checks on the bounds that have become constant. [`StateFormula::idents`],
//! [`StateFormula::labels`], [`StateFormula::substitute`] and [`StateFormula::map_exprs`] help
//! resolve names against a model.
//!
//! Parse limits: brackets nest at most [`augur_expr::syntax::MAX_NESTING`] deep, and a formula
//! has at most [`augur_expr::syntax::MAX_DEPTH`] connectives and operators (expressions at most
//! that depth), so that no input can exhaust the stack; larger inputs are located errors.
#![deny(missing_docs)]

mod ast;
mod checks;
mod error;
mod parser;
pub mod print;

pub use ast::*;
pub use error::{PctlError, Result};
pub use parser::{parse_properties, parse_property};
pub use print::const_decl_to_string;

#[cfg(test)]
mod tests;
