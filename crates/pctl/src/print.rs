//! The canonical printer (PRISM syntax).
//!
//! One text per AST: operators as `P>=0.5 [ F "goal" ]`, `R{"cost"}=? [ C<=10 ]`,
//! `S=? [ up ]`, `T=? [ F "done" ]`, `filter(max, R=? [ F "stable" ], "init")` (the states
//! argument is omitted when it is `true`), step bounds glued to their operator (`U<=k`,
//! `F[1,3]`), connectives spaced (`"a" & x>1`), expressions printed by `augur-expr` with the
//! fewest parentheses. For every AST the parser produces, `parse(print(ast)) == ast`.

use crate::ast::*;
use crate::Spanned;
use augur_expr::print::prec;
use augur_expr::{ConstDecl, Expr, Type};
use std::fmt::{self, Display, Formatter, Write};

impl Display for Comparison {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
        })
    }
}

impl Display for Bound {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Query => f.write_str("=?"),
            Bound::Compare(c, e) => write!(f, "{c}{e}"),
        }
    }
}

/// A step count written right after an operator (`<=k`, `=k`): a unary-level expression, in
/// parentheses otherwise. A name that is also a function name is parenthesised, since
/// `F<=floor (x=1)` would read as a call.
struct StepCount<'a>(&'a Expr);

impl Display for StepCount<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Expr::Ident(n)
                if matches!(
                    n.as_str(),
                    "floor" | "ceil" | "round" | "pow" | "mod" | "log"
                ) =>
            {
                write!(f, "({n})")
            }
            e => write!(f, "{}", e.display_at(prec::NEG)),
        }
    }
}

impl Display for StepBound {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            StepBound::Unbounded => Ok(()),
            StepBound::Lt(e) => write!(f, "<{}", StepCount(e)),
            StepBound::Le(e) => write!(f, "<={}", StepCount(e)),
            StepBound::Gt(e) => write!(f, ">{}", StepCount(e)),
            StepBound::Ge(e) => write!(f, ">={}", StepCount(e)),
            StepBound::Eq(e) => write!(f, "={}", StepCount(e)),
            StepBound::Interval(a, b) => write!(f, "[{a},{b}]"),
        }
    }
}

impl Display for RewardRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            RewardRef::Name(n) => write!(f, "{{\"{n}\"}}"),
            RewardRef::Index(i) => write!(f, "{{{i}}}"),
        }
    }
}

impl FilterOp {
    /// The operator's name in `filter(op, ...)`.
    pub fn name(self) -> &'static str {
        match self {
            FilterOp::Min => "min",
            FilterOp::Max => "max",
            FilterOp::Argmin => "argmin",
            FilterOp::Argmax => "argmax",
            FilterOp::Count => "count",
            FilterOp::Sum => "sum",
            FilterOp::Avg => "avg",
            FilterOp::First => "first",
            FilterOp::Range => "range",
            FilterOp::Forall => "forall",
            FilterOp::Exists => "exists",
            FilterOp::State => "state",
            FilterOp::Print => "print",
            FilterOp::Printall => "printall",
        }
    }
}

impl Display for FilterOp {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl StateFormula {
    /// The precedence level of the formula's outermost connective, on the scale of
    /// [`augur_expr::print::prec`] (operators, labels and filters are atoms).
    pub fn precedence(&self) -> u8 {
        match self {
            StateFormula::Expr(e) => e.precedence(),
            StateFormula::Not(_) => prec::NOT,
            StateFormula::And(..) => prec::AND,
            StateFormula::Or(..) => prec::OR,
            StateFormula::Implies(..) => prec::IMPLIES,
            StateFormula::Iff(..) => prec::IFF,
            StateFormula::Apply { op, .. } => match op.node {
                Operator::Neg => prec::NEG,
                Operator::Binary(b) => b.precedence(),
                Operator::Ite => prec::ITE,
                Operator::Call(_) => prec::ATOM,
            },
            _ => prec::ATOM,
        }
    }
}

fn write_sf(f: &mut Formatter<'_>, sf: &StateFormula, min: u8) -> fmt::Result {
    if sf.precedence() < min {
        f.write_char('(')?;
        write_sf(f, sf, prec::ITE)?;
        return f.write_char(')');
    }
    let binary = |f: &mut Formatter<'_>, op: &str, l: &StateFormula, r: &StateFormula, p: u8| {
        write_sf(f, l, p)?;
        write!(f, " {op} ")?;
        write_sf(f, r, p + 1)
    };
    match sf {
        StateFormula::Expr(e) => write!(f, "{}", e.display_at(min)),
        StateFormula::Label(l) => write!(f, "\"{l}\""),
        StateFormula::Not(a) => {
            f.write_char('!')?;
            write_sf(f, a, prec::NOT)
        }
        StateFormula::And(l, r) => binary(f, "&", l, r, prec::AND),
        StateFormula::Or(l, r) => binary(f, "|", l, r, prec::OR),
        StateFormula::Implies(l, r) => binary(f, "=>", l, r, prec::IMPLIES),
        StateFormula::Iff(l, r) => binary(f, "<=>", l, r, prec::IFF),
        StateFormula::Apply { op, args } => match (op.node, args.as_slice()) {
            (Operator::Neg, [a]) => {
                f.write_char('-')?;
                write_sf(f, a, prec::NEG)
            }
            (Operator::Binary(b), [l, r]) => {
                let p = b.precedence();
                write_sf(f, l, p)?;
                write!(f, " {} ", b.symbol())?;
                write_sf(f, r, p + 1)
            }
            (Operator::Ite, [c, a, b]) => {
                write_sf(f, c, prec::IMPLIES)?;
                f.write_str(" ? ")?;
                write_sf(f, a, prec::IMPLIES)?;
                f.write_str(" : ")?;
                write_sf(f, b, prec::ITE)
            }
            (Operator::Call(func), args) => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_sf(f, a, prec::ITE)?;
                }
                f.write_char(')')
            }
            // Not built by the parser (wrong number of operands): printed as a call-like form.
            (op, args) => {
                write!(f, "<{op:?}>(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_sf(f, a, prec::ITE)?;
                }
                f.write_char(')')
            }
        },
        StateFormula::Prob { opt, bound, path } => {
            let opt = opt.map_or("", |o| o.as_str());
            write!(f, "P{opt}{bound} [ {path} ]")
        }
        StateFormula::Reward {
            structure,
            opt,
            bound,
            path,
        } => {
            f.write_char('R')?;
            if let Some(s) = structure {
                write!(f, "{s}")?;
            }
            let opt = opt.map_or("", |o| o.as_str());
            write!(f, "{opt}{bound} [ {path} ]")
        }
        StateFormula::Steady { bound, formula } => write!(f, "S{bound} [ {formula} ]"),
        StateFormula::Time { bound, target } => write!(f, "T{bound} [ F {target} ]"),
        StateFormula::Filter {
            op,
            property,
            states,
        } => {
            write!(f, "filter({op}, {property}")?;
            if **states != StateFormula::Expr(Expr::Bool(true).into()) {
                write!(f, ", {states}")?;
            }
            f.write_char(')')
        }
    }
}

impl Display for StateFormula {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write_sf(f, self, prec::ITE)
    }
}

impl Display for PathFormula {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            PathFormula::Next(a) => write!(f, "X {a}"),
            PathFormula::Eventually(a, b) => write!(f, "F{b} {a}"),
            PathFormula::Globally(a, b) => write!(f, "G{b} {a}"),
            PathFormula::Until(l, r, b) => write!(f, "{l} U{b} {r}"),
            PathFormula::WeakUntil(l, r, b) => write!(f, "{l} W{b} {r}"),
            PathFormula::Release(l, r, b) => write!(f, "{l} R{b} {r}"),
            PathFormula::Ltl(l) => write!(f, "{l}"),
        }
    }
}

/// An operand of an LTL connective or temporal operator: a state formula at precedence
/// `min`; a negation, and (as the operand of a connective, `!bare_unary`) a connective, bare
/// where it binds tightly enough; a unary temporal formula bare when `bare_unary` (the operand
/// of a temporal operator); anything else in parentheses.
fn write_ltl_operand(f: &mut Formatter<'_>, l: &LtlPath, min: u8, bare_unary: bool) -> fmt::Result {
    match l {
        LtlPath::State(s) => write_sf(f, s, min),
        LtlPath::Next(_) | LtlPath::Eventually(..) | LtlPath::Globally(..) if bare_unary => {
            write!(f, "{l}")
        }
        LtlPath::Not(_) if min <= prec::NOT => write!(f, "{l}"),
        LtlPath::And(..) if !bare_unary && min <= prec::AND => write!(f, "{l}"),
        LtlPath::Or(..) if !bare_unary && min <= prec::OR => write!(f, "{l}"),
        LtlPath::Iff(..) if !bare_unary && min <= prec::IFF => write!(f, "{l}"),
        LtlPath::Implies(..) if !bare_unary && min <= prec::IMPLIES => write!(f, "{l}"),
        _ => write!(f, "({l})"),
    }
}

impl Display for LtlPath {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let binary = |f: &mut Formatter<'_>, op: &str, l: &LtlPath, r: &LtlPath, p: u8| {
            write_ltl_operand(f, l, p, false)?;
            write!(f, " {op} ")?;
            write_ltl_operand(f, r, p + 1, false)
        };
        let temporal =
            |f: &mut Formatter<'_>, op: &str, l: &LtlPath, r: &LtlPath, b: &Spanned<StepBound>| {
                write_ltl_operand(f, l, prec::ITE, false)?;
                write!(f, " {op}{b} ")?;
                write_ltl_operand(f, r, prec::ITE, true)
            };
        match self {
            LtlPath::State(s) => write!(f, "{s}"),
            LtlPath::Not(a) => {
                f.write_char('!')?;
                write_ltl_operand(f, a, prec::NOT, false)
            }
            LtlPath::And(l, r) => binary(f, "&", l, r, prec::AND),
            LtlPath::Or(l, r) => binary(f, "|", l, r, prec::OR),
            LtlPath::Implies(l, r) => binary(f, "=>", l, r, prec::IMPLIES),
            LtlPath::Iff(l, r) => binary(f, "<=>", l, r, prec::IFF),
            LtlPath::Next(a) => {
                f.write_str("X ")?;
                write_ltl_operand(f, a, prec::ITE, true)
            }
            LtlPath::Eventually(a, b) => {
                write!(f, "F{b} ")?;
                write_ltl_operand(f, a, prec::ITE, true)
            }
            LtlPath::Globally(a, b) => {
                write!(f, "G{b} ")?;
                write_ltl_operand(f, a, prec::ITE, true)
            }
            LtlPath::Until(l, r, b) => temporal(f, "U", l, r, b),
            LtlPath::WeakUntil(l, r, b) => temporal(f, "W", l, r, b),
            LtlPath::Release(l, r, b) => temporal(f, "R", l, r, b),
        }
    }
}

impl Display for RewardPath {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            RewardPath::Reachability(a) => write!(f, "F {a}"),
            RewardPath::Cumulative { bound, discount } => {
                f.write_char('C')?;
                if let Some(d) = discount {
                    write!(f, "{{discount={d}}}")?;
                }
                if let Some(k) = bound {
                    write!(f, "<={k}")?;
                }
                Ok(())
            }
            RewardPath::Instantaneous(k) => write!(f, "I={k}"),
            RewardPath::LongRun => f.write_char('S'),
            RewardPath::Ltl(l) => {
                // A path whose text starts like one of R's own operators (`S ]`, `C<=k`,
                // `I=k`) would read back as that operator: parenthesised, it reads
                // back as the LTL path it is.
                let text = l.to_string();
                let mut chars = text.chars();
                let own = matches!(chars.next(), Some('S' | 'C' | 'I'))
                    && !chars
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if own {
                    write!(f, "({text})")
                } else {
                    f.write_str(&text)
                }
            }
        }
    }
}

impl Display for Property {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.name {
            write!(f, "\"{n}\": ")?;
        }
        write!(f, "{}", self.formula)
    }
}

impl Display for LabelDef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "label \"{}\" = {};", self.name, self.formula)
    }
}

/// Prints a constant declaration as in a properties file: `const int N = 3;`, `const double p;`.
pub fn const_decl_to_string(c: &ConstDecl) -> String {
    let ty = match c.ty {
        Type::Int => "int",
        Type::Double => "double",
        Type::Bool => "bool",
    };
    match &c.value {
        Some(v) => format!("const {ty} {} = {v};", c.name),
        None => format!("const {ty} {};", c.name),
    }
}

impl Display for PropertiesFile {
    /// Constants, then labels, then properties, one per line, each ending with `;` (so that a
    /// property starting with `-` or `(` cannot continue the previous one).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for c in &self.constants {
            writeln!(f, "{}", const_decl_to_string(c))?;
        }
        for l in &self.labels {
            writeln!(f, "{l}")?;
        }
        for p in &self.properties {
            writeln!(f, "{p};")?;
        }
        Ok(())
    }
}
