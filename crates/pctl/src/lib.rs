//! augur-pctl: PCTL properties in PRISM syntax (DTMC fragment, plus Storm's `T=? [ F φ ]`).
//!
//! Main types: [`Property`] and [`PropertiesFile`] (the results of [`parse_property`] and
//! [`parse_properties`]), the formula ASTs [`StateFormula`], [`PathFormula`], [`RewardPath`],
//! the resolved form [`ResolvedProperty`] (from [`Resolver`]), and the located error
//! [`PctlError`] (turn it into an `augur_source::Diagnostic` with [`PctlError::diagnostic`]).
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
//! Every part of a parsed formula that an error may concern (expressions, labels, operators,
//! thresholds, step bounds) is a [`Spanned`] value that keeps the byte span of its text (spans
//! are ignored by `==` and serde).
//!
//! Checks done at parse time (each a [`PctlError::Invalid`] with the location): a path formula
//! where a state formula belongs (`S=? [ F "up" ]`) and the reverse (`P=? [ "up" ]`), reward
//! indices below 1, duplicate constant, label or property names in a file, and — on bounds that
//! name no constant — the range checks of [`resolve`] (the same functions, the same words).
//!
//! Once constant values and the model are known, [`resolve::Resolver`] turns a [`Property`]
//! into a [`ResolvedProperty`]: constants substituted, step bounds as step counts, thresholds
//! as numbers (with their exact rationals), labels and reward structures resolved, types
//! checked; every bound is checked there, once. [`StateFormula::idents`],
//! [`StateFormula::labels`], [`StateFormula::substitute`] and [`StateFormula::map_exprs`] help
//! callers inspect and rewrite formulas.
//!
//! Parse limits: brackets nest at most [`augur_expr::syntax::MAX_NESTING`] deep, and a formula
//! has at most [`augur_expr::syntax::MAX_DEPTH`] connectives and operators (expressions at most
//! that depth), so that no input can exhaust the stack; larger inputs are located errors.
#![deny(missing_docs)]

mod ast;
mod error;
mod hints;
mod parser;
pub mod print;
pub mod resolve;
mod spanned;

pub use ast::*;
pub use augur_source::Span;
pub use error::{PctlError, Result};
pub use num_rational::BigRational;
pub use parser::{parse_properties, parse_property};
pub use print::const_decl_to_string;
pub use resolve::{
    Kind, ModelNames, Number, ResolvedFormula, ResolvedLabel, ResolvedLtl, ResolvedPath,
    ResolvedProperty, ResolvedRewardPath, Resolver, Steps, Threshold,
};
pub use spanned::Spanned;

#[cfg(test)]
mod tests;
