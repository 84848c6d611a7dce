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
    /// `&`
    And,
    /// `|`
    Or,
    /// `=>`
    Implies,
    /// `<=>`
    Iff,
    /// A comparison: `=`, `!=`, `<`, `<=`, `>`, `>=` (serialised as the comparison's own
    /// name, `"eq"`, `"lt"`, ...).
    #[serde(untagged)]
    Cmp(Cmp),
}

/// A comparison operator, the relational part of [`BinaryOp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cmp {
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
}

impl Cmp {
    /// Every comparison.
    pub const ALL: [Cmp; 6] = [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge];

    /// Whether `a cmp b` holds, for any ordered values (IEEE comparisons for doubles: every
    /// comparison with NaN but `!=` is false).
    #[inline]
    pub fn holds<T: PartialOrd + ?Sized>(self, a: &T, b: &T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }

    /// The comparison with its operands swapped: `a cmp b` iff `b cmp.flip() a`.
    pub fn flip(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            c => c,
        }
    }

    /// Whether it is `=` or `!=` (the comparisons defined on booleans too).
    pub fn is_equality(self) -> bool {
        matches!(self, Cmp::Eq | Cmp::Ne)
    }
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
    /// A double literal whose exact value is not the decimal its `f64` prints as (more
    /// significant digits than a double holds, e.g. `0.333333333333333333333333`): the nearest
    /// `f64` and the text as written, so that exact mode reads the number written.
    Decimal(f64, Box<str>),
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

/// The literal `text` (read as `value`): [`Expr::Double`] when `value` prints as a decimal of
/// the same exact value as `text` (`0.1`, `1e-30`, `2.50`), else [`Expr::Decimal`].
///
/// ```
/// use augur_expr::{double_literal, Expr};
/// assert_eq!(double_literal(0.1, "0.1"), Expr::Double(0.1));
/// assert_eq!(double_literal(1e-30, "1e-30"), Expr::Double(1e-30));
/// assert_eq!(double_literal(2.5, "2.500"), Expr::Double(2.5));
/// let third = "0.333333333333333333333333";
/// assert_eq!(double_literal(1.0 / 3.0, third), Expr::Decimal(1.0 / 3.0, third.into()));
/// ```
pub fn double_literal(value: f64, text: &str) -> Expr {
    // At most 15 significant digits (and a normal double): the decimal is the shortest that
    // reads back as `value` (any two such decimals are distinct doubles), so it is the one
    // `value` prints as; no need to print it.
    let significant = text
        .bytes()
        .take_while(|b| !matches!(b, b'e' | b'E'))
        .filter(u8::is_ascii_digit)
        .skip_while(|&b| b == b'0')
        .count();
    if significant <= 15 && value.is_normal() {
        return Expr::Double(value);
    }
    double_literal_printed(value, text)
}

/// [`double_literal`] by printing `value` and comparing the decimals.
fn double_literal_printed(value: f64, text: &str) -> Expr {
    match (
        normalise_decimal(text),
        normalise_decimal(&format!("{value:e}")),
    ) {
        (Some(a), Some(b)) if a == b => Expr::Double(value),
        (None, _) => Expr::Double(value),
        _ => Expr::Decimal(value, text.into()),
    }
}

/// The significant digits (no leading or trailing zeros) and the exponent of the last one, of a
/// decimal `[-]digits[.digits][e[+-]digits]`; `None` when `text` is not of that form.
fn normalise_decimal(text: &str) -> Option<(bool, String, i64)> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (mantissa, exp) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{int}{frac}");
    let mut exp = exp.checked_sub(i64::try_from(frac.len()).ok()?)?;
    let digits = digits.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    exp = exp.checked_add(i64::try_from(digits.len() - trimmed.len()).ok()?)?;
    if trimmed.is_empty() {
        return Some((false, String::new(), 0));
    }
    Some((neg, trimmed.to_string(), exp))
}

#[cfg(test)]
mod double_literal_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_short_cut_agrees_with_printing(
            int in "[0-9]{0,9}",
            frac in "[0-9]{0,9}",
            exp in prop::option::of(-330i32..330),
        ) {
            let mut text = int.clone();
            if !frac.is_empty() {
                text = format!("{text}.{frac}");
            }
            if text.is_empty() || text == "." {
                text = "0".into();
            }
            if let Some(e) = exp {
                text = format!("{text}e{e}");
            }
            if let Ok(v) = text.parse::<f64>() {
                if v.is_finite() {
                    prop_assert_eq!(double_literal(v, &text), double_literal_printed(v, &text));
                }
            }
        }
    }
}
