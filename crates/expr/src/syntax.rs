//! Located syntax errors and the pest-pair-to-[`Expr`] builder shared by every Augur grammar.

use crate::ast::{BinaryOp, Expr, Func, UnaryOp};
use augur_source::{Diagnostic, Location, SourceFile, Span};
use pest::error::{ErrorVariant, InputLocation, LineColLocation};
use pest::iterators::Pair;
use pest::RuleType;
use std::fmt;

/// Maximum bracket nesting (`(`, `[`, `{`) accepted by the parsers. Deeper inputs are
/// rejected with a located error instead of exhausting the stack.
pub const MAX_NESTING: usize = 100;

/// Maximum depth of an expression tree built by the parsers (`a+b+c` has depth 3). Deeper
/// inputs (e.g. a sum of thousands of terms) are rejected with a located error, so that the
/// recursive printer, type checker and evaluator never exhaust the stack.
pub const MAX_DEPTH: usize = 2000;

/// A syntax (or parse-time semantic) error located in the source text.
///
/// Used by every Augur parser (expressions, PCTL, the PRISM language). `line` and `column` are
/// 1-based; `column` counts characters. The error does not know the name of the text it was
/// found in: [`SyntaxError::diagnostic`] takes the [`SourceFile`] and gives the
/// [`Diagnostic`] that every front-end renders the same way (line, caret under the span).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// What went wrong, e.g. `expected expression` or `probability bound 1.5 is outside [0, 1]`.
    pub message: String,
    /// Byte range of the offending text (empty for a position).
    pub span: Span,
    /// 1-based line of `span.start`.
    pub line: usize,
    /// 1-based column (in characters) of `span.start`.
    pub column: usize,
    /// What the parser expected at this point (may be empty).
    pub expected: Vec<String>,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for SyntaxError {}

impl SyntaxError {
    /// An error covering the byte range `start..end` of `source`; line and column are
    /// computed from `source` (offsets past the end or inside a character are clamped).
    pub fn at(source: &str, start: usize, end: usize, message: impl Into<String>) -> Self {
        let mut start = start.min(source.len());
        while !source.is_char_boundary(start) {
            start -= 1;
        }
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = source[line_start..start].chars().count() + 1;
        SyntaxError {
            message: message.into(),
            span: Span::new(start, end.max(start).min(source.len())),
            line,
            column,
            expected: Vec::new(),
        }
    }

    /// An error covering the text of a pest span.
    /// Trailing whitespace that pest includes in a rule's span is left out.
    pub fn from_span(span: pest::Span<'_>, message: impl Into<String>) -> Self {
        let (line, column) = span.start_pos().line_col();
        let text = span.as_str();
        let len = text.trim_end().len();
        SyntaxError {
            message: message.into(),
            span: Span::new(span.start(), span.start() + len.max(1).min(text.len())),
            line,
            column,
            expected: Vec::new(),
        }
    }

    /// Converts a pest error, naming the expected rules with `describe` (see
    /// [`describe_rule`] for the names of this crate's rules). Prefer
    /// [`SyntaxError::from_pest_in`], which can point further into the input.
    pub fn from_pest<R: RuleType>(
        err: pest::error::Error<R>,
        describe: impl Fn(&R) -> String,
    ) -> Self {
        Self::convert(err, None, &describe)
    }

    /// Converts a pest error raised while parsing `source`. When pest tracked parse attempts
    /// (`pest::set_error_detail(true)`, which Augur's parsers turn on), the error points at the
    /// furthest position any token was tried (e.g. at the missing `[` in `P=? F x`) and names
    /// the brackets and separators expected there.
    pub fn from_pest_in<R: RuleType>(
        err: pest::error::Error<R>,
        source: &str,
        describe: impl Fn(&R) -> String,
    ) -> Self {
        Self::convert(err, Some(source), &describe)
    }

    fn convert<R: RuleType>(
        err: pest::error::Error<R>,
        source: Option<&str>,
        describe: &dyn Fn(&R) -> String,
    ) -> Self {
        let mut span = match err.location {
            InputLocation::Pos(p) => Span::point(p),
            InputLocation::Span((s, e)) => Span::new(s, e),
        };
        let (mut line, mut column) = match err.line_col {
            LineColLocation::Pos(lc) | LineColLocation::Span(lc, _) => lc,
        };
        let ErrorVariant::ParsingError {
            positives,
            negatives,
        } = &err.variant
        else {
            let message = match &err.variant {
                ErrorVariant::CustomError { message } => message.clone(),
                ErrorVariant::ParsingError { .. } => String::new(),
            };
            return SyntaxError {
                message,
                span,
                line,
                column,
                expected: Vec::new(),
            };
        };
        let describe_all = |rules: &[R]| {
            let mut out: Vec<String> = Vec::new();
            for r in rules {
                let d = describe(r);
                if !d.is_empty() && !out.contains(&d) {
                    out.push(d);
                }
            }
            out
        };
        let mut expected = describe_all(positives);
        let mut unexpected = describe_all(negatives);
        if let Some(attempts) = err.parse_attempts() {
            let further = match source {
                // (Only when some token was expected there: positions reached inside a
                // negative lookahead, such as `!keyword`, are not progress.)
                Some(src)
                    if attempts.max_position > span.start
                        && attempts.max_position <= src.len()
                        && !attempts.expected_tokens().is_empty() =>
                {
                    let moved =
                        SyntaxError::at(src, attempts.max_position, attempts.max_position, "");
                    span = moved.span;
                    line = moved.line;
                    column = moved.column;
                    // The rules pest names belong to the earlier position.
                    expected.clear();
                    unexpected.clear();
                    true
                }
                _ => false,
            };
            if further || attempts.max_position == span.start {
                let has_expr = expected.iter().any(|e| e == "expression");
                let mut tokens: Vec<String> = Vec::new();
                let mut operator = false;
                for t in attempts.expected_tokens() {
                    let t = t.to_string();
                    if is_structural_token(&t) {
                        if !(has_expr && t == "(") {
                            let d = format!("`{t}`");
                            if !tokens.contains(&d) && !expected.contains(&d) {
                                tokens.push(d);
                            }
                        }
                    } else if is_operator_token(&t) {
                        operator = true;
                    }
                }
                if operator && !expected.iter().any(|e| e == "operator") {
                    expected.push("operator".into());
                }
                tokens.append(&mut expected);
                expected = tokens;
            }
        }
        if expected.is_empty() {
            // Nothing was expected here: pest stopped inside a word (e.g. after matching a
            // keyword in a lookahead). Point at the start of that word.
            if let Some(src) = source {
                let before = src.get(..span.start).unwrap_or("");
                let start = before
                    .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map_or(0, |i| i + 1);
                if start < span.start {
                    let moved = SyntaxError::at(src, start, start, "");
                    span = moved.span;
                    line = moved.line;
                    column = moved.column;
                }
            }
        }
        let mut message = if expected.is_empty() {
            match source.map(|src| token_at(src, span.start)) {
                Some(Some(tok)) => format!("unexpected `{tok}`"),
                Some(None) => "unexpected end of input".to_string(),
                None => "unexpected input".to_string(),
            }
        } else {
            format!("expected {}", join_alternatives(&expected))
        };
        if !unexpected.is_empty() {
            message.push_str(&format!(" (found {})", join_alternatives(&unexpected)));
        }
        SyntaxError {
            message,
            span,
            line,
            column,
            expected,
        }
    }

    /// Where the error is in `source` (the text it was parsed from, with its name): line,
    /// column and a caret as wide as the span's part of that line.
    pub fn location(&self, source: &SourceFile) -> Location {
        source.location(self.span)
    }

    /// The error as a [`Diagnostic`] located in `source`, ready to print:
    ///
    /// ```
    /// use augur_source::SourceFile;
    /// let err = augur_expr::parse_expr("x + * 2").unwrap_err();
    /// let text = err.diagnostic(&SourceFile::new("--prop", "x + * 2")).to_string();
    /// assert!(text.contains("--prop:1:5"));
    /// assert!(text.ends_with("    ^\n"));
    /// ```
    pub fn diagnostic(&self, source: &SourceFile) -> Diagnostic {
        Diagnostic::error(&self.message).at(self.location(source))
    }
}

/// Literal tokens worth naming in "expected ..." messages: brackets and separators (operators
/// are summarised as "operator").
fn is_structural_token(token: &str) -> bool {
    matches!(
        token,
        ")" | "]" | "}" | "," | ":" | ";" | "(" | "[" | "{" | "=?"
    )
}

/// The word (identifier characters) or single character starting at byte `pos`, if any.
fn token_at(src: &str, pos: usize) -> Option<&str> {
    let rest = src.get(pos..)?;
    let first = rest.chars().next()?;
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let len = if is_word(first) {
        rest.find(|c: char| !is_word(c)).unwrap_or(rest.len())
    } else {
        first.len_utf8()
    };
    rest.get(..len)
}

/// Operator tokens (summarised as "operator" in messages).
fn is_operator_token(token: &str) -> bool {
    matches!(
        token,
        "=>" | "<=>"
            | "|"
            | "&"
            | "!="
            | "="
            | "<="
            | ">="
            | "<"
            | ">"
            | "+"
            | "-"
            | "*"
            | "/"
            | "^"
            | "?"
    )
}

fn join_alternatives(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

/// Human-readable name of a rule of `expr.pest`, given the rule's name (`format!("{:?}", rule)`).
/// Names of other rules are returned with `_` replaced by spaces.
pub fn describe_rule(name: &str) -> String {
    match name {
        "expr" | "implies_expr" | "iff_expr" | "or_expr" | "and_expr" | "not_expr" | "eq_expr"
        | "rel_expr" | "add_expr" | "mul_expr" | "unary_expr" => "expression".into(),
        "implies_op" | "iff_op" | "or_op" | "and_op" | "eq_op" | "rel_op" | "add_op" | "mul_op"
        | "pow_op" => "operator".into(),
        "not_op" => "`!`".into(),
        "neg_op" => "`-`".into(),
        "double_lit" | "int_lit" => "number".into(),
        "bool_lit" => "`true` or `false`".into(),
        "call" => "function call".into(),
        "func_name" => "function name".into(),
        "ident" => "identifier".into(),
        "keyword" => "keyword".into(),
        "EOI" => "end of input".into(),
        "expr_main" | "pow_expr" | "primary" => "expression".into(),
        "ident_char" => "identifier".into(),
        "WHITESPACE" => "whitespace".into(),
        "COMMENT" => "comment".into(),
        // Keywords of every grammar (`kw_const`): the keyword itself, never the rule's name.
        other => match other.strip_prefix("kw_") {
            Some(kw) => format!("`{kw}`"),
            None => other.replace('_', " "),
        },
    }
}

/// Whether `description`, the text an error message shows for the grammar rule `rule_name`
/// (`format!("{rule:?}")`), gives the rule's name away (`kw const`, `sf_atom`, `properties
/// file`): the parsers' tests check every rule of their grammar with it.
pub fn leaks_rule_name(rule_name: &str, description: &str) -> bool {
    description.contains('_')
        || description.starts_with("kw ")
        || description == rule_name && rule_name.chars().any(|c| c.is_ascii_uppercase())
        || rule_name.contains('_') && description == rule_name.replace('_', " ")
}

/// The rules of a grammar whose description gives their name away ([`leaks_rule_name`]), as
/// lines `rule NAME is described as `TEXT``: the parsers' tests assert that there are none.
pub fn leaked_rule_names<R: std::fmt::Debug>(
    rules: &[R],
    describe: impl Fn(&R) -> String,
) -> Vec<String> {
    rules
        .iter()
        .map(|rule| (format!("{rule:?}"), describe(rule)))
        .filter(|(name, text)| leaks_rule_name(name, text))
        .map(|(name, text)| format!("rule {name} is described as `{text}`"))
        .collect()
}

/// Rejects inputs whose brackets nest deeper than [`MAX_NESTING`] (before handing them to a
/// recursive-descent parser). Brackets inside `"..."` strings and `//` comments are ignored.
pub fn check_nesting(source: &str) -> Result<(), SyntaxError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut in_comment = false;
    let mut prev = '\0';
    for (i, c) in source.char_indices() {
        if in_comment {
            if c == '\n' {
                in_comment = false;
            }
        } else if in_string {
            if c == '"' || c == '\n' {
                in_string = false;
            }
        } else {
            match c {
                '"' => in_string = true,
                '/' if prev == '/' => in_comment = true,
                '(' | '[' | '{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(SyntaxError::at(
                            source,
                            i,
                            i + 1,
                            format!("brackets nested more than {MAX_NESTING} deep"),
                        ));
                    }
                }
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        prev = if in_comment { '\0' } else { c };
    }
    Ok(())
}

/// The rules of `expr.pest` that [`build_expr_with`] understands. A grammar that includes
/// `expr.pest` maps its own `Rule` enum onto these (the [`expr_builder!`](crate::expr_builder)
/// macro writes that mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExprRule {
    /// `expr` (conditional level, the entry rule)
    Expr,
    /// `implies_expr`
    Implies,
    /// `iff_expr`
    Iff,
    /// `or_expr`
    Or,
    /// `and_expr`
    And,
    /// `not_expr`
    Not,
    /// `eq_expr`
    Eq,
    /// `rel_expr`
    Rel,
    /// `add_expr`
    Add,
    /// `mul_expr`
    Mul,
    /// `unary_expr`
    Unary,
    /// `pow_expr` (`a ^ b`, built as `pow(a, b)`)
    Pow,
    /// any operator token rule (`implies_op`, ..., `neg_op`)
    Op,
    /// `double_lit`
    Double,
    /// `int_lit`
    Int,
    /// `bool_lit`
    Bool,
    /// `call`
    Call,
    /// `func_name`
    FuncName,
    /// `ident`
    Ident,
}

/// Builds an [`Expr`] from a pair of any expression rule of `expr.pest`, for a parser whose
/// `Rule` enum is `R`; `classify` maps `R` onto [`ExprRule`] (`None` for rules that are not
/// expression rules). Prefer the [`expr_builder!`](crate::expr_builder) macro, which writes
/// `classify` for you.
pub fn build_expr_with<R: RuleType>(
    pair: Pair<'_, R>,
    classify: &dyn Fn(R) -> Option<ExprRule>,
) -> Result<Expr, SyntaxError> {
    Builder { classify }.build(pair).map(|(e, _)| e)
}

struct Builder<'c, R> {
    classify: &'c dyn Fn(R) -> Option<ExprRule>,
}

/// The number of arguments a function accepts: `(min, max)`, `None` for unbounded.
pub fn arity(f: Func) -> (usize, Option<usize>) {
    match f {
        Func::Min | Func::Max => (1, None),
        Func::Floor | Func::Ceil | Func::Round => (1, Some(1)),
        Func::Pow | Func::Mod | Func::Log => (2, Some(2)),
    }
}

/// The error for a call of `f` (written `name`, at `span`) with `found` arguments, if that is
/// not a number it accepts ([`arity`]).
pub fn check_arity(
    f: Func,
    found: usize,
    span: pest::Span<'_>,
) -> std::result::Result<(), SyntaxError> {
    let (lo, hi) = arity(f);
    if found >= lo && hi.is_none_or(|h| found <= h) {
        return Ok(());
    }
    let want = match hi {
        Some(h) if h == lo => format!("{lo}"),
        Some(h) => format!("{lo} to {h}"),
        None => format!("at least {lo}"),
    };
    Err(SyntaxError::from_span(
        span,
        format!(
            "function `{}` takes {want} argument{}, found {found}",
            f.name(),
            if want == "1" { "" } else { "s" },
        ),
    ))
}

impl<R: RuleType> Builder<'_, R> {
    fn unexpected(&self, pair: &Pair<'_, R>) -> SyntaxError {
        SyntaxError::from_span(
            pair.as_span(),
            format!(
                "internal parser error: unexpected rule {:?}",
                pair.as_rule()
            ),
        )
    }

    fn too_deep(span: pest::Span<'_>) -> SyntaxError {
        SyntaxError::from_span(
            span,
            format!("expression nested too deeply (more than {MAX_DEPTH} levels)"),
        )
    }

    /// Builds the expression and returns it with its depth (a leaf has depth 1). Trees deeper
    /// than [`MAX_DEPTH`] are rejected before they are built, so that printing, evaluating and
    /// dropping them cannot exhaust the stack.
    fn build(&self, pair: Pair<'_, R>) -> Result<(Expr, usize), SyntaxError> {
        let span = pair.as_span();
        let Some(kind) = (self.classify)(pair.as_rule()) else {
            return Err(self.unexpected(&pair));
        };
        let node = |d: usize| {
            if d > MAX_DEPTH {
                Err(Self::too_deep(span))
            } else {
                Ok(d)
            }
        };
        match kind {
            ExprRule::Expr => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return Err(SyntaxError::from_span(
                        span,
                        "internal parser error: empty expression",
                    ));
                };
                let (cond, dc) = self.build(first)?;
                match (inner.next(), inner.next()) {
                    (Some(a), Some(b)) => {
                        let (a, da) = self.build(a)?;
                        let (b, db) = self.build(b)?;
                        let d = node(1 + dc.max(da).max(db))?;
                        Ok((Expr::Ite(Box::new(cond), Box::new(a), Box::new(b)), d))
                    }
                    _ => Ok((cond, dc)),
                }
            }
            ExprRule::Implies
            | ExprRule::Iff
            | ExprRule::Or
            | ExprRule::And
            | ExprRule::Eq
            | ExprRule::Rel
            | ExprRule::Add
            | ExprRule::Mul => {
                let mut inner = pair.into_inner();
                let Some(first) = inner.next() else {
                    return Err(SyntaxError::from_span(
                        span,
                        "internal parser error: empty operand",
                    ));
                };
                let (mut acc, mut depth) = self.build(first)?;
                while let Some(op) = inner.next() {
                    let Some(bop) = BinaryOp::from_symbol(op.as_str()) else {
                        return Err(self.unexpected(&op));
                    };
                    let Some(rhs) = inner.next() else {
                        return Err(self.unexpected(&op));
                    };
                    let (rhs, dr) = self.build(rhs)?;
                    depth = node(1 + depth.max(dr))?;
                    acc = Expr::Binary(bop, Box::new(acc), Box::new(rhs));
                }
                Ok((acc, depth))
            }
            ExprRule::Not | ExprRule::Unary => {
                let op = if kind == ExprRule::Not {
                    UnaryOp::Not
                } else {
                    UnaryOp::Neg
                };
                let mut prefixes = 0usize;
                let mut operand = None;
                for p in pair.into_inner() {
                    if (self.classify)(p.as_rule()) == Some(ExprRule::Op) {
                        prefixes += 1;
                    } else {
                        operand = Some(p);
                    }
                }
                let Some(operand) = operand else {
                    return Err(SyntaxError::from_span(
                        span,
                        "internal parser error: missing operand",
                    ));
                };
                if prefixes > MAX_DEPTH {
                    return Err(Self::too_deep(span));
                }
                let (mut e, d) = self.build(operand)?;
                let d = node(d + prefixes)?;
                for _ in 0..prefixes {
                    e = Expr::Unary(op, Box::new(e));
                }
                Ok((e, d))
            }
            ExprRule::Pow => {
                let mut inner = pair.into_inner();
                let Some(base) = inner.next() else {
                    return Err(SyntaxError::from_span(
                        span,
                        "internal parser error: missing operand",
                    ));
                };
                let (base, db) = self.build(base)?;
                // inner: [pow_op, exponent] or nothing
                match (inner.next(), inner.next()) {
                    (Some(_), Some(exp)) => {
                        let (exp, de) = self.build(exp)?;
                        let d = node(1 + db.max(de))?;
                        Ok((Expr::Call(Func::Pow, vec![base, exp]), d))
                    }
                    _ => Ok((base, db)),
                }
            }
            ExprRule::Double => {
                let text = pair.as_str();
                match text.parse::<f64>() {
                    Ok(v) if v.is_finite() => Ok((crate::ast::double_literal(v, text), 1)),
                    _ => Err(SyntaxError::from_span(
                        span,
                        format!("number `{text}` is out of range"),
                    )),
                }
            }
            ExprRule::Int => {
                let text = pair.as_str();
                text.parse::<i64>().map(|i| (Expr::Int(i), 1)).map_err(|_| {
                    SyntaxError::from_span(span, format!("integer `{text}` is out of range"))
                })
            }
            ExprRule::Bool => Ok((Expr::Bool(pair.as_str() == "true"), 1)),
            ExprRule::Ident => Ok((Expr::Ident(pair.as_str().to_string()), 1)),
            ExprRule::Call => {
                let mut inner = pair.into_inner();
                let Some(name) = inner.next() else {
                    return Err(SyntaxError::from_span(
                        span,
                        "internal parser error: missing function",
                    ));
                };
                let Some(func) = Func::from_name(name.as_str()) else {
                    return Err(self.unexpected(&name));
                };
                let mut args = Vec::new();
                let mut depth = 0;
                for a in inner {
                    let (a, d) = self.build(a)?;
                    depth = depth.max(d);
                    args.push(a);
                }
                let depth = node(depth + 1)?;
                check_arity(func, args.len(), span)?;
                Ok((Expr::Call(func, args), depth))
            }
            ExprRule::Op | ExprRule::FuncName => Err(self.unexpected(&pair)),
        }
    }
}

/// Writes, in the calling module, `fn build_expr(pair: Pair<'_, Rule>) -> Result<Expr, SyntaxError>`
/// for the caller's pest `Rule` enum (a parser that includes `grammar/expr.pest`), plus
/// `fn describe_expr_rule(rule: &Rule) -> String` naming rules for error messages.
///
/// `build_expr` accepts a pair of any expression rule (`expr`, `implies_expr`, ..., `unary_expr`,
/// `ident`, literals, `call`).
///
/// ```no_run
/// // Compiled, not run (no input to parse): the items at the top level, as in a crate.
/// #[derive(pest_derive::Parser)]
/// #[grammar = "../../../grammar/expr.pest"]
/// #[grammar = "../../../grammar/pctl.pest"]
/// struct PctlParser;
/// augur_expr::expr_builder!();
/// // ... build_expr(pair)? where pair.as_rule() == Rule::expr
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! expr_builder {
    () => {
        #[allow(dead_code)]
        fn build_expr(
            pair: $crate::pest::iterators::Pair<'_, Rule>,
        ) -> ::std::result::Result<$crate::Expr, $crate::SyntaxError> {
            fn classify(rule: Rule) -> ::std::option::Option<$crate::syntax::ExprRule> {
                use $crate::syntax::ExprRule as K;
                ::std::option::Option::Some(match rule {
                    Rule::expr => K::Expr,
                    Rule::implies_expr => K::Implies,
                    Rule::iff_expr => K::Iff,
                    Rule::or_expr => K::Or,
                    Rule::and_expr => K::And,
                    Rule::not_expr => K::Not,
                    Rule::eq_expr => K::Eq,
                    Rule::rel_expr => K::Rel,
                    Rule::add_expr => K::Add,
                    Rule::mul_expr => K::Mul,
                    Rule::unary_expr => K::Unary,
                    Rule::pow_expr => K::Pow,
                    Rule::implies_op
                    | Rule::iff_op
                    | Rule::or_op
                    | Rule::and_op
                    | Rule::not_op
                    | Rule::eq_op
                    | Rule::rel_op
                    | Rule::add_op
                    | Rule::mul_op
                    | Rule::neg_op
                    | Rule::pow_op => K::Op,
                    Rule::double_lit => K::Double,
                    Rule::int_lit => K::Int,
                    Rule::bool_lit => K::Bool,
                    Rule::call => K::Call,
                    Rule::func_name => K::FuncName,
                    Rule::ident => K::Ident,
                    _ => return ::std::option::Option::None,
                })
            }
            $crate::syntax::build_expr_with(pair, &classify)
        }

        #[allow(dead_code)]
        fn describe_expr_rule(rule: &Rule) -> ::std::string::String {
            $crate::syntax::describe_rule(&::std::format!("{:?}", rule))
        }
    };
}

mod parser {
    #[derive(pest_derive::Parser)]
    #[grammar = "../../../grammar/expr.pest"]
    pub(super) struct ExprParser;

    crate::expr_builder!();

    pub(super) fn build(
        pair: pest::iterators::Pair<'_, Rule>,
    ) -> Result<crate::Expr, crate::SyntaxError> {
        build_expr(pair)
    }

    pub(super) fn describe(rule: &Rule) -> String {
        describe_expr_rule(rule)
    }
}

/// Parses a complete expression (the whole of `text`).
///
/// ```
/// use augur_expr::{parse_expr, BinaryOp, Expr};
/// let e = parse_expr("1 + 2 * 3").unwrap();
/// assert_eq!(e.to_string(), "1+2*3");
/// assert!(matches!(e, Expr::Binary(BinaryOp::Add, _, _)));
/// ```
pub fn parse_expr(text: &str) -> Result<Expr, SyntaxError> {
    use pest::Parser;
    pest::set_error_detail(true);
    check_nesting(text)?;
    let mut pairs = parser::ExprParser::parse(parser::Rule::expr_main, text)
        .map_err(|e| SyntaxError::from_pest_in(e, text, parser::describe))?;
    match pairs.next() {
        Some(pair) => parser::build(pair),
        None => Err(SyntaxError::at(text, 0, 0, "expected expression")),
    }
}

impl std::str::FromStr for Expr {
    type Err = SyntaxError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_expr(s)
    }
}
