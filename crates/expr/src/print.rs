//! The canonical printer: PRISM syntax with the fewest parentheses the precedence needs.
//!
//! Arithmetic and comparison operators are printed without spaces (`x+1`, `s=2`), boolean
//! connectives and the conditional with spaces (`s=2 | t<3`, `c ? 1 : 2`). For every
//! expression produced by the parser, `parse_expr(&e.to_string()) == Ok(e)`. Expressions that
//! the parser never produces print as equal-valued text that parses to a different tree:
//! negative literals (`Int(-1)` prints `-1`, which parses as the negation of `1`) and
//! non-finite doubles (`(1.0/0.0)`, `(-1.0/0.0)`, `(0.0/0.0)`).

use crate::ast::{BinaryOp, Cmp, Expr, Func, UnaryOp};
use std::fmt::{self, Write};

/// Precedence levels of the expression grammar, loosest first. A subexpression whose level
/// is below the level required at its position is parenthesised.
pub mod prec {
    /// `c ? a : b`
    pub const ITE: u8 = 0;
    /// `=>`
    pub const IMPLIES: u8 = 1;
    /// `<=>`
    pub const IFF: u8 = 2;
    /// `|`
    pub const OR: u8 = 3;
    /// `&`
    pub const AND: u8 = 4;
    /// `!` (prefix)
    pub const NOT: u8 = 5;
    /// `=`, `!=`
    pub const EQ: u8 = 6;
    /// `<`, `<=`, `>`, `>=`
    pub const REL: u8 = 7;
    /// `+`, `-`
    pub const ADD: u8 = 8;
    /// `*`, `/`
    pub const MUL: u8 = 9;
    /// unary `-` (and negative literals)
    pub const NEG: u8 = 10;
    /// literals, identifiers, calls, parenthesised expressions
    pub const ATOM: u8 = 11;
}

impl Cmp {
    /// The comparison's PRISM symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::Eq => "=",
            Cmp::Ne => "!=",
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        }
    }
}

impl BinaryOp {
    /// Every binary operator.
    pub const ALL: [BinaryOp; 14] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Cmp(Cmp::Eq),
        BinaryOp::Cmp(Cmp::Ne),
        BinaryOp::Cmp(Cmp::Lt),
        BinaryOp::Cmp(Cmp::Le),
        BinaryOp::Cmp(Cmp::Gt),
        BinaryOp::Cmp(Cmp::Ge),
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Implies,
        BinaryOp::Iff,
    ];

    /// The operator written `symbol` in PRISM's syntax (the inverse of [`BinaryOp::symbol`]).
    pub fn from_symbol(symbol: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.symbol() == symbol)
    }

    /// The operator's PRISM symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Cmp(c) => c.symbol(),
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::Implies => "=>",
            BinaryOp::Iff => "<=>",
        }
    }

    /// The operator's precedence level (see [`prec`]).
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::Add | BinaryOp::Sub => prec::ADD,
            BinaryOp::Mul | BinaryOp::Div => prec::MUL,
            BinaryOp::Cmp(Cmp::Eq | Cmp::Ne) => prec::EQ,
            BinaryOp::Cmp(_) => prec::REL,
            BinaryOp::And => prec::AND,
            BinaryOp::Or => prec::OR,
            BinaryOp::Implies => prec::IMPLIES,
            BinaryOp::Iff => prec::IFF,
        }
    }

    fn spaced(self) -> bool {
        matches!(
            self,
            BinaryOp::And | BinaryOp::Or | BinaryOp::Implies | BinaryOp::Iff
        )
    }
}

impl Func {
    /// Every built-in function.
    pub const ALL: [Func; 8] = [
        Func::Min,
        Func::Max,
        Func::Floor,
        Func::Ceil,
        Func::Round,
        Func::Pow,
        Func::Mod,
        Func::Log,
    ];

    /// The function named `name` in PRISM (the inverse of [`Func::name`]).
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The function's PRISM name.
    pub fn name(self) -> &'static str {
        match self {
            Func::Min => "min",
            Func::Max => "max",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Round => "round",
            Func::Pow => "pow",
            Func::Mod => "mod",
            Func::Log => "log",
        }
    }
}

impl Expr {
    /// The precedence level of the expression's outermost operator (see [`prec`]).
    pub fn precedence(&self) -> u8 {
        match self {
            Expr::Int(i) if *i < 0 => prec::NEG,
            Expr::Double(d) if d.is_finite() && d.is_sign_negative() => prec::NEG,
            Expr::Decimal(_, t) if t.starts_with('-') => prec::NEG,
            Expr::Int(_)
            | Expr::Double(_)
            | Expr::Decimal(..)
            | Expr::Bool(_)
            | Expr::Ident(_)
            | Expr::Call(..) => prec::ATOM,
            Expr::Unary(UnaryOp::Neg, _) => prec::NEG,
            Expr::Unary(UnaryOp::Not, _) => prec::NOT,
            Expr::Binary(op, ..) => op.precedence(),
            Expr::Ite(..) => prec::ITE,
        }
    }

    /// Displays the expression in a context that requires precedence at least `min`
    /// (parenthesised when its own level is lower). `e.display_at(prec::ITE)` is `e.to_string()`.
    pub fn display_at(&self, min: u8) -> impl fmt::Display + '_ {
        AtLevel(self, min)
    }
}

struct AtLevel<'a>(&'a Expr, u8);

impl fmt::Display for AtLevel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_at(f, self.0, self.1)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_at(f, self, prec::ITE)
    }
}

fn write_double(f: &mut fmt::Formatter<'_>, d: f64) -> fmt::Result {
    if d.is_nan() {
        f.write_str("(0.0/0.0)")
    } else if d.is_infinite() {
        f.write_str(if d > 0.0 { "(1.0/0.0)" } else { "(-1.0/0.0)" })
    } else {
        // Rust's `{:?}` is the shortest text that reads back as the same f64 and always has a
        // `.` or an exponent, so it re-parses as a double.
        write!(f, "{d:?}")
    }
}

fn write_at(f: &mut fmt::Formatter<'_>, e: &Expr, min: u8) -> fmt::Result {
    let p = e.precedence();
    if p < min {
        f.write_char('(')?;
        write_at(f, e, prec::ITE)?;
        return f.write_char(')');
    }
    match e {
        Expr::Int(i) => write!(f, "{i}"),
        Expr::Double(d) => write_double(f, *d),
        // As written: the text re-parses to the same literal.
        Expr::Decimal(_, text) => f.write_str(text),
        Expr::Bool(b) => write!(f, "{b}"),
        Expr::Ident(name) => f.write_str(name),
        Expr::Unary(UnaryOp::Neg, a) => {
            f.write_char('-')?;
            // `--x` would still parse, but keep a negative literal operand readable.
            write_at(f, a, prec::ATOM)
        }
        Expr::Unary(UnaryOp::Not, a) => {
            f.write_char('!')?;
            write_at(f, a, prec::NOT)
        }
        Expr::Binary(op, l, r) => {
            let lp = op.precedence();
            write_at(f, l, lp)?;
            if op.spaced() {
                write!(f, " {} ", op.symbol())?;
                write_at(f, r, lp + 1)
            } else {
                f.write_str(op.symbol())?;
                // Avoid `a--b` and `a<-b`-style runs that read badly: space before a leading `-`.
                let rhs = AtLevel(r, lp + 1).to_string();
                if rhs.starts_with('-') {
                    f.write_char(' ')?;
                }
                f.write_str(&rhs)
            }
        }
        Expr::Ite(c, a, b) => {
            write_at(f, c, prec::IMPLIES)?;
            f.write_str(" ? ")?;
            write_at(f, a, prec::IMPLIES)?;
            f.write_str(" : ")?;
            write_at(f, b, prec::ITE)
        }
        Expr::Call(func, args) => {
            write!(f, "{}(", func.name())?;
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_at(f, a, prec::ITE)?;
            }
            f.write_char(')')
        }
    }
}
