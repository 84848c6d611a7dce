//! augur-expr: the typed expression language shared by PCTL, the PRISM language and
//! abstraction predicates.
//!
//! Main types: [`Expr`] (the AST), [`Value`] and [`Type`], [`ConstDecl`]; errors are
//! [`ExprError`] and, for located syntax errors shared by every Augur parser, [`SyntaxError`].
//!
//! - Parsing: [`parse_expr`] (or `str::parse::<Expr>`); PRISM's syntax and precedence (see
//!   `grammar/expr.pest`).
//! - Printing: `Display` for [`Expr`] gives canonical text with the fewest parentheses,
//!   and `parse_expr(&e.to_string()) == Ok(e)` for parsed expressions (see [`print`](mod@print)).
//! - Typing and evaluation: [`Expr::type_check`], [`Expr::eval`] (rules in [`semantics`]).
//! - Utilities: [`Expr::substitute`], [`Expr::idents`], [`Expr::simplify`],
//!   [`evaluate_constants`], [`parse_const_assignments`].
//!
//! ```
//! use augur_expr::{parse_expr, Type, Value};
//! let e = parse_expr("x < N & !done").unwrap();
//! let ty = e.type_check(|n| match n { "x" | "N" => Some(Type::Int), "done" => Some(Type::Bool), _ => None });
//! assert_eq!(ty.unwrap(), Type::Bool);
//! let v = e.eval(|n| match n { "x" => Some(Value::Int(1)), "N" => Some(Value::Int(3)), "done" => Some(Value::Bool(false)), _ => None });
//! assert_eq!(v.unwrap(), Value::Bool(true));
//! ```
//!
//! # Reusing the grammar
//!
//! Other grammars include `grammar/expr.pest` by listing it first among several
//! `#[grammar = ...]` attributes of their own pest parser (paths relative to the crate's `src`),
//! and call [`expr_builder!`] in the same module to get
//! `fn build_expr(pair: Pair<'_, Rule>) -> Result<Expr, SyntaxError>`:
//!
//! ```no_run
//! // Compiled, not run (no input to parse): the items at the top level, as in a crate.
//! #[derive(pest_derive::Parser)]
//! #[grammar = "../../../grammar/expr.pest"]
//! #[grammar = "../../../grammar/pctl.pest"]
//! struct PctlParser;
//! augur_expr::expr_builder!();
//! # fn main() {}
//! ```
//!
//! The rules available to the including grammar (see the comments in `expr.pest`):
//! - `expr`: the entry rule, a full expression including `c ? a : b`;
//! - one rule per precedence level, loosest first: `implies_expr`, `iff_expr`, `or_expr`,
//!   `and_expr`, `not_expr`, `eq_expr`, `rel_expr`, `add_expr`, `mul_expr`, `unary_expr`
//!   (an including grammar can use, e.g., `eq_expr` as an atom of its own boolean level);
//! - `ident` (PRISM identifier, never a keyword), `int_lit`, `double_lit`, `bool_lit`, `call`;
//! - `keyword` (PRISM's reserved words, followed by a non-identifier character);
//! - `WHITESPACE` and `COMMENT` (`//` to end of line): defined here for all grammars, which
//!   must not redefine them.
//!
//! `build_expr` accepts a pair of any of the level rules, literals, `ident` or `call`. Syntax
//! errors from pest convert with [`SyntaxError::from_pest`] (the macro also writes
//! `describe_expr_rule`, naming rules for messages), and [`syntax::check_nesting`] rejects
//! absurdly deep bracket nesting before parsing.
#![deny(missing_docs)]

mod ast;
mod consts;
mod error;
pub mod print;
pub mod rational;
pub mod semantics;
pub mod syntax;
mod transform;
mod value;

pub use ast::*;
pub use consts::{
    evaluate_constants, evaluate_constants_at, parse_const_assignments, parse_value,
    substitute_constants,
};
pub use error::{ExprError, Result};
pub use rational::{
    decimal_rational, eval_exact, literal_rational, rational_bits, Exact, MAX_RATIONAL_BITS,
};
pub use syntax::{parse_expr, SyntaxError};

#[doc(hidden)]
pub use pest;

#[cfg(test)]
mod tests;
