//! The canonical printer (PRISM syntax).
//!
//! One text per AST: operators as `P>=0.5 [ F "goal" ]`, `R{"cost"}=? [ C<=10 ]`,
//! `S=? [ up ]`, `T=? [ F "done" ]`, `filter(max, R=? [ F "stable" ], "init")` (the states
//! argument is omitted when it is `true`), step bounds glued to their operator (`U<=k`,
//! `F[1,3]`), connectives spaced (`"a" & x>1`), expressions printed by `augur-expr` with the
//! fewest parentheses. For every AST the parser produces, `parse(print(ast)) == ast`.

use crate::ast::*;
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
        StateFormula::Prob { bound, path } => write!(f, "P{bound} [ {path} ]"),
        StateFormula::Reward {
            structure,
            bound,
            path,
        } => {
            f.write_char('R')?;
            if let Some(s) = structure {
                write!(f, "{s}")?;
            }
            write!(f, "{bound} [ {path} ]")
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
