//! The expression AST shared by PCTL atoms, the PRISM language and abstraction predicates.

use serde::{Deserialize, Serialize};

/// The type of an expression or a declared name (PRISM's three basic types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Type {
    /// Integers (`int`, and bounded variables `[lo..hi]`).
    Int,
    /// Double-precision reals (`double`).
    Double,
    /// Booleans (`bool`).
    Bool,
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnaryOp {
    /// Arithmetic negation `-e`.
    Neg,
    /// Boolean negation `!e`.
    Not,
}

/// A binary operator, in PRISM's syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (always real division, as in PRISM: `1/2` is `0.5`).
    Div,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&`
    And,
    /// `|`
    Or,
    /// `=>`
    Implies,
    /// `<=>`
    Iff,
}

/// A built-in function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Func {
    /// `min(a, b, ...)`
    Min,
    /// `max(a, b, ...)`
    Max,
    /// `floor(x)` (int result)
    Floor,
    /// `ceil(x)` (int result)
    Ceil,
    /// `round(x)` (int result; ties round up, as in PRISM: `round(-1.5)` is `-1`)
    Round,
    /// `pow(x, y)` (int when both are int)
    Pow,
    /// `mod(i, n)` (ints)
    Mod,
    /// `log(x, base)`
    Log,
}

/// An expression. Identifiers are resolved late (against a symbol table or valuation),
/// so the same AST serves before and after a model is known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expr {
    /// Integer literal.
    Int(i64),
    /// Double literal.
    Double(f64),
    /// Boolean literal.
    Bool(bool),
    /// A variable, constant or formula name.
    Ident(String),
    /// `op e`
    Unary(UnaryOp, Box<Expr>),
    /// `l op r`
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Ite(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `f(args)`
    Call(Func, Vec<Expr>),
}

/// A runtime value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A double.
    Double(f64),
    /// A boolean.
    Bool(bool),
}

/// `const TYPE NAME [= value];` as written in PRISM models and properties files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConstDecl {
    /// The constant's name.
    pub name: String,
    /// Its declared type.
    pub ty: Type,
    /// Its defining expression, or `None` when the value must come from the command line.
    pub value: Option<Expr>,
}
