//! The pest parser for `grammar/pctl.pest` and the builder from pest pairs to the AST, with
//! the parse-time semantic checks.

use crate::ast::*;
use crate::error::{PctlError, Result};
use crate::resolve::{self as checks, BoundKind};
use crate::Spanned;
use augur_expr::{BinaryOp, ConstDecl, Expr, Func, SyntaxError, Type, UnaryOp, Value};
use augur_source::Span;
use pest::iterators::Pair;
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "../../../grammar/expr.pest"]
#[grammar = "../../../grammar/pctl.pest"]
struct PctlParser;

augur_expr::expr_builder!();

pub(crate) fn describe(rule: &Rule) -> String {
    match rule {
        Rule::property | Rule::path_or_state | Rule::state_formula | Rule::sf_implies => {
            "property".into()
        }
        Rule::sf_iff | Rule::sf_or | Rule::sf_and | Rule::sf_not => "state formula".into(),
        Rule::prob_op => "`P`".into(),
        Rule::reward_op => "`R`".into(),
        Rule::steady_op => "`S`".into(),
        Rule::time_op => "`T`".into(),
        Rule::lra_op | Rule::kw_lra => "`LRA`".into(),
        Rule::old_filter | Rule::old_filter_req | Rule::old_filter_kw => "filter (`{states}`, `{min}`, `{max}`)".into(),
        Rule::sf_eq | Rule::sf_rel | Rule::sf_add | Rule::sf_mul | Rule::sf_unary | Rule::sf_pow => "state formula".into(),
        Rule::sf_call => "function call".into(),
        Rule::storm_discount => "`discount=d`".into(),
        Rule::cumul_op => "`<=` or `<`".into(),
        Rule::storm_k => "step bound".into(),
        Rule::filter => "`filter`".into(),
        Rule::quoted => "\"label\"".into(),
        Rule::bound => "`=?` or a comparison (`<`, `<=`, `>`, `>=`)".into(),
        Rule::cmp_op => "comparison".into(),
        Rule::query => "`=?`".into(),
        Rule::reward_ref => "`{\"name\"}`".into(),
        Rule::filter_op => "filter operator (min, max, argmin, argmax, count, sum, avg, first, range, forall, exists, state, print, printall)".into(),
        Rule::next_path | Rule::unary_path | Rule::unary_temporal => "path formula".into(),
        Rule::binary_temporal => "temporal operator (`U`, `W`, `R`)".into(),
        Rule::step_bound | Rule::step_op => "step bound (`<=k`, `<k`, `=k` or `[a,b]`)".into(),
        Rule::reward_path | Rule::cumulative | Rule::instantaneous | Rule::long_run => {
            "reward formula (F, C, C<=k, I=k, S)".into()
        }
        Rule::discount => "`{discount=d}`".into(),
        Rule::const_decl => "`const` declaration".into(),
        Rule::label_def => "`label` definition".into(),
        Rule::const_type => "type (int, double, bool)".into(),
        Rule::kw_const => "`const`".into(),
        Rule::kw_label => "`label`".into(),
        Rule::kw_filter => "`filter`".into(),
        Rule::kw_p => "`P`".into(),
        Rule::kw_r => "`R`".into(),
        Rule::optimum => "`min` or `max`".into(),
        Rule::kw_s => "`S`".into(),
        Rule::kw_t => "`T`".into(),
        Rule::kw_x => "`X`".into(),
        Rule::kw_f => "`F`".into(),
        Rule::kw_c => "`C`".into(),
        Rule::kw_i => "`I`".into(),
        Rule::property_main => "property".into(),
        Rule::properties_file | Rule::file_item => "property, `const` or `label`".into(),
        Rule::quoted_text => "name".into(),
        Rule::sf_atom => "state formula".into(),
        Rule::path_operand => "path formula".into(),
        Rule::cumul_bound => "step bound".into(),
        other => describe_expr_rule(other),
    }
}

thread_local! {
    /// Formula nodes built so far by the current parse on this thread (see [`count_node`]).
    static NODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Expression operators folded so far by the current parse (see [`counted`]).
    static EXPR_NODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts the node just built: a formula node with [`count_node`], an expression operator
/// (folded from operands that are all expressions) against its own budget of
/// [`augur_expr::syntax::MAX_DEPTH`], as the expression builder bounds expressions.
fn counted(f: StateFormula, span: pest::Span<'_>) -> Result<StateFormula> {
    if matches!(f, StateFormula::Expr(_)) {
        let n = EXPR_NODES.with(|c| {
            let n = c.get() + 1;
            c.set(n);
            n
        });
        if n > augur_expr::syntax::MAX_DEPTH {
            return Err(PctlError::Syntax(SyntaxError::from_span(
                span,
                format!(
                    "expression too large (more than {} operators)",
                    augur_expr::syntax::MAX_DEPTH
                ),
            )));
        }
    } else {
        count_node(span)?;
    }
    Ok(f)
}

/// Counts one formula node (a connective, an operator, or a connective folded into an
/// expression). A parse builds at most [`augur_expr::syntax::MAX_DEPTH`] of them, which bounds
/// the depth of the formula tree (expression leaves are bounded by the expression builder), so
/// printing, checking and dropping a parsed formula cannot exhaust the stack.
fn count_node(span: pest::Span<'_>) -> Result<()> {
    let n = NODES.with(|c| {
        let n = c.get() + 1;
        c.set(n);
        n
    });
    if n > augur_expr::syntax::MAX_DEPTH {
        Err(PctlError::Syntax(SyntaxError::from_span(
            span,
            format!(
                "formula too large (more than {} operators and connectives)",
                augur_expr::syntax::MAX_DEPTH
            ),
        )))
    } else {
        Ok(())
    }
}

/// The byte range of a pest span, without the whitespace that implicit whitespace rules leave
/// at its end.
fn sp(span: pest::Span<'_>) -> Span {
    Span::new(span.start(), span.start() + span.as_str().trim_end().len())
}

/// Starts counting nodes afresh: the limits hold for each formula (a property, a label's
/// definition, a constant's value), not for a whole file.
fn reset_counts() {
    NODES.with(|c| c.set(0));
    EXPR_NODES.with(|c| c.set(0));
}

fn run(rule: Rule, text: &str) -> Result<Pair<'_, Rule>> {
    reset_counts();
    pest::set_error_detail(true);
    augur_expr::syntax::check_nesting(text)?;
    let mut pairs = PctlParser::parse(rule, text).map_err(|e| {
        let e = SyntaxError::from_pest_in(e, text, describe);
        PctlError::Syntax(crate::hints::operator_hint(text, e.span.start).unwrap_or(e))
    })?;
    pairs
        .next()
        .ok_or_else(|| PctlError::Syntax(SyntaxError::at(text, 0, 0, "expected a property")))
}

/// Parses a single property, optionally named (`"name": ...`) and followed by `;`.
pub fn parse_property(text: &str) -> Result<Property> {
    let pair = run(Rule::property_main, text)?;
    build_property(pair)
}

/// Parses a properties file.
///
/// A syntax error stops the file (as in PRISM). A property that parses but breaks a rule the
/// parser checks (a bound out of range, a path formula where a state formula belongs, a
/// duplicate name) is kept in [`PropertiesFile::rejected`] with its located error, and the
/// other properties are still read. Properties on separate lines need no `;` between them,
/// but two on one line do: `d (d+1)` is an error, not the two properties `d` and `(d+1)`.
pub fn parse_properties(text: &str) -> Result<PropertiesFile> {
    let pair = run(Rule::properties_file, text)?;
    let mut file = PropertiesFile::default();
    // The end of the previous property (to check what separates it from the next item).
    let mut previous_end: Option<usize> = None;
    for item in pair.into_inner() {
        if let Some(end) = previous_end.take() {
            let start = item.as_span().start();
            let gap = text.get(end..start).unwrap_or("");
            if item.as_rule() != Rule::EOI && !gap.contains(';') && !gap.contains('\n') {
                return Err(PctlError::Syntax(SyntaxError::at(
                    text,
                    start,
                    start + 1,
                    "expected an operator, or `;` before another property on the same line",
                )));
            }
        }
        reset_counts();
        match item.as_rule() {
            Rule::const_decl => {
                let span = item.as_span();
                let decl = build_const(item)?;
                if file.constants.iter().any(|c| c.name == decl.name) {
                    return Err(invalid(
                        span,
                        format!("constant `{}` is declared twice", decl.name),
                    ));
                }
                file.constants.push(decl);
            }
            Rule::label_def => {
                let span = item.as_span();
                let mut inner = item.into_inner();
                let (_kw, name, formula) = (
                    next(&mut inner, span)?,
                    next(&mut inner, span)?,
                    next(&mut inner, span)?,
                );
                let name_span = name.as_span();
                let name = Spanned::new(quoted_text(name), sp(name_span));
                if file.labels.iter().any(|l| l.name == name) {
                    return Err(invalid(
                        name_span,
                        format!("label \"{}\" is defined twice", name.node),
                    ));
                }
                let formula = build_state_formula(formula)?;
                file.labels.push(LabelDef { name, formula });
            }
            Rule::property => {
                let span = item.as_span();
                previous_end = Some(sp(span).end);
                let name = item
                    .clone()
                    .into_inner()
                    .find(|p| p.as_rule() == Rule::quoted)
                    .map(quoted_text);
                let index = file.properties.len() + file.rejected.len();
                let duplicate = name.as_ref().is_some_and(|name| {
                    file.properties
                        .iter()
                        .any(|p| p.name.as_ref() == Some(name))
                        || file.rejected.iter().any(|r| r.name.as_ref() == Some(name))
                });
                let built = if duplicate {
                    Err(invalid(
                        span,
                        format!(
                            "property \"{}\" is defined twice",
                            name.clone().unwrap_or_default()
                        ),
                    ))
                } else {
                    build_property(item)
                };
                match built {
                    Ok(prop) => file.properties.push(prop),
                    Err(error @ PctlError::Invalid(_)) => file.rejected.push(RejectedProperty {
                        index,
                        name,
                        text: span.as_str().trim_end().to_string(),
                        span: sp(span),
                        error,
                    }),
                    Err(other) => return Err(other),
                }
            }
            Rule::EOI => {}
            _ => return Err(internal(&item)),
        }
    }
    Ok(file)
}

fn invalid(span: pest::Span<'_>, message: impl Into<String>) -> PctlError {
    PctlError::Invalid(SyntaxError::from_span(span, message))
}

fn internal(pair: &Pair<'_, Rule>) -> PctlError {
    PctlError::Syntax(SyntaxError::from_span(
        pair.as_span(),
        format!("internal parser error: unexpected {:?}", pair.as_rule()),
    ))
}

fn next<'i>(
    it: &mut pest::iterators::Pairs<'i, Rule>,
    span: pest::Span<'i>,
) -> Result<Pair<'i, Rule>> {
    it.next().ok_or_else(|| {
        PctlError::Syntax(SyntaxError::from_span(
            span,
            "internal parser error: missing part",
        ))
    })
}

fn quoted_text(pair: Pair<'_, Rule>) -> String {
    pair.into_inner()
        .next()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default()
}

fn build_const(pair: Pair<'_, Rule>) -> Result<ConstDecl> {
    let mut ty = Type::Int;
    let mut name = String::new();
    let mut value = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::kw_const => {}
            Rule::const_type => {
                ty = match p.as_str() {
                    "double" => Type::Double,
                    "bool" => Type::Bool,
                    _ => Type::Int,
                }
            }
            Rule::ident => name = p.as_str().to_string(),
            Rule::expr => value = Some(build_expr(p)?),
            _ => return Err(internal(&p)),
        }
    }
    Ok(ConstDecl { name, ty, value })
}

fn build_property(pair: Pair<'_, Rule>) -> Result<Property> {
    let span = sp(pair.as_span());
    let mut name = None;
    let mut formula = None;
    for p in pair.into_inner() {
        match p.as_rule() {
            Rule::quoted => name = Some(quoted_text(p)),
            Rule::path_or_state => {
                formula = Some(expect_state(
                    p,
                    "a property must be a state formula; put path formulas inside P[...]",
                )?)
            }
            _ => return Err(internal(&p)),
        }
    }
    match formula {
        Some(formula) => Ok(Property {
            name,
            formula,
            span,
        }),
        None => Err(PctlError::Syntax(SyntaxError::at(
            "",
            0,
            0,
            "internal parser error: empty property",
        ))),
    }
}

/// A parsed `path_or_state`.
enum Built<'i> {
    State(StateFormula),
    Path(Box<PathFormula>, pest::Span<'i>),
}

fn build_path_or_state(pair: Pair<'_, Rule>) -> Result<Built<'_>> {
    let span = pair.as_span();
    let mut inner = pair.clone().into_inner();
    let first = next(&mut inner, span)?;
    if first.as_rule() == Rule::state_formula && inner.next().is_none() {
        return Ok(Built::State(build_state_formula(first)?));
    }
    match build_ltl(pair)?.into_path() {
        Some(p) => Ok(Built::Path(Box::new(p), span)),
        None => Err(PctlError::Syntax(SyntaxError::from_span(
            span,
            "internal parser error: a temporal operator without a path formula",
        ))),
    }
}

/// `l op r` over LTL formulas: a state formula when both are (see [`sf_binary`]).
fn ltl_binary(op: BinaryOp, l: LtlPath, r: LtlPath) -> LtlPath {
    match (l, r) {
        (LtlPath::State(a), LtlPath::State(b)) => LtlPath::State(sf_binary(op, a, b)),
        (l, r) => {
            let (l, r) = (Box::new(l), Box::new(r));
            match op {
                BinaryOp::And => LtlPath::And(l, r),
                BinaryOp::Or => LtlPath::Or(l, r),
                BinaryOp::Implies => LtlPath::Implies(l, r),
                _ => LtlPath::Iff(l, r),
            }
        }
    }
}

/// Builds a path formula in full LTL generality (inside `P[...]`): temporal operators nest,
/// and connectives combine temporal formulas; connectives between state formulas stay state
/// formulas, so the result is canonical.
fn build_ltl(pair: Pair<'_, Rule>) -> Result<LtlPath> {
    let span = pair.as_span();
    match pair.as_rule() {
        Rule::path_or_state => {
            let mut inner = pair.into_inner();
            let left = build_ltl(next(&mut inner, span)?)?;
            let Some(op) = inner.next() else {
                return Ok(left);
            };
            count_node(op.as_span())?;
            let mut bound = Spanned::new(StepBound::Unbounded, sp(op.as_span()));
            let mut right = next(&mut inner, span)?;
            if right.as_rule() == Rule::step_bound {
                bound = build_step_bound(right)?;
                right = next(&mut inner, span)?;
            }
            let (l, r) = (Box::new(left), Box::new(build_ltl(right)?));
            Ok(match op.as_str() {
                "U" => LtlPath::Until(l, r, bound),
                "W" => LtlPath::WeakUntil(l, r, bound),
                _ => LtlPath::Release(l, r, bound),
            })
        }
        Rule::next_path => {
            count_node(span)?;
            let mut it = pair.into_inner();
            let _kw = next(&mut it, span)?;
            Ok(LtlPath::Next(Box::new(build_ltl(next(&mut it, span)?)?)))
        }
        Rule::unary_path => {
            count_node(span)?;
            let mut it = pair.into_inner();
            let op = next(&mut it, span)?;
            let mut bound = Spanned::new(StepBound::Unbounded, sp(op.as_span()));
            let mut operand = next(&mut it, span)?;
            if operand.as_rule() == Rule::step_bound {
                bound = build_step_bound(operand)?;
                operand = next(&mut it, span)?;
            }
            let f = Box::new(build_ltl(operand)?);
            Ok(if op.as_str() == "F" {
                LtlPath::Eventually(f, bound)
            } else {
                LtlPath::Globally(f, bound)
            })
        }
        Rule::state_formula => {
            let mut inner = pair.clone().into_inner();
            let first = next(&mut inner, span)?;
            if inner.next().is_some() {
                // `c ? a : b`: state formulas only (the builder says so otherwise).
                return Ok(LtlPath::State(build_state_formula(pair)?));
            }
            build_ltl(first)
        }
        Rule::sf_implies | Rule::sf_iff | Rule::sf_or | Rule::sf_and => {
            fold_logical(pair, build_ltl, ltl_binary)
        }
        Rule::sf_not => {
            let (not_spans, atom) = prefix_operators(pair)?;
            let mut f = build_ltl(atom)?;
            for &not_span in not_spans.iter().rev() {
                count_node(span)?;
                f = match f {
                    LtlPath::State(s) => LtlPath::State(sf_not(s, not_span)),
                    f => LtlPath::Not(Box::new(f)),
                };
            }
            Ok(f)
        }
        // The arithmetic levels between `!` and an atom: a level without its operator is its
        // one operand (which may be a parenthesised path formula); with an operator it is
        // arithmetic or a comparison, a state formula.
        Rule::sf_eq
        | Rule::sf_rel
        | Rule::sf_add
        | Rule::sf_mul
        | Rule::sf_unary
        | Rule::sf_pow => {
            let mut inner = pair.clone().into_inner();
            let first = next(&mut inner, span)?;
            if inner.next().is_none() && first.as_rule() != Rule::neg_op {
                build_ltl(first)
            } else {
                Ok(LtlPath::State(build_state_formula(pair)?))
            }
        }
        _ => Ok(LtlPath::State(build_state_formula(pair)?)),
    }
}

fn expect_state(pair: Pair<'_, Rule>, message: &str) -> Result<StateFormula> {
    match build_path_or_state(pair)? {
        Built::State(f) => Ok(f),
        Built::Path(_, span) => Err(invalid(span, message)),
    }
}

fn expect_path<'i>(pair: Pair<'i, Rule>, message: &str) -> Result<(PathFormula, pest::Span<'i>)> {
    let span = pair.as_span();
    match build_path_or_state(pair)? {
        Built::Path(p, span) => Ok((*p, span)),
        Built::State(_) => Err(invalid(span, message)),
    }
}

/// `!f` (written at `span`), kept as one expression when `f` is an expression.
fn sf_not(f: StateFormula, span: Span) -> StateFormula {
    match f {
        StateFormula::Expr(e) => StateFormula::Expr(Spanned::new(
            Expr::Unary(UnaryOp::Not, Box::new(e.node)),
            span.join(e.span),
        )),
        f => StateFormula::Not(Box::new(f)),
    }
}

/// `l op r`, kept as one expression when both operands are expressions.
fn sf_binary(op: BinaryOp, l: StateFormula, r: StateFormula) -> StateFormula {
    match (l, r) {
        (StateFormula::Expr(a), StateFormula::Expr(b)) => StateFormula::Expr(Spanned::new(
            Expr::Binary(op, Box::new(a.node), Box::new(b.node)),
            a.span.join(b.span),
        )),
        (l, r) => {
            let (l, r) = (Box::new(l), Box::new(r));
            match op {
                BinaryOp::And => StateFormula::And(l, r),
                BinaryOp::Or => StateFormula::Or(l, r),
                BinaryOp::Implies => StateFormula::Implies(l, r),
                _ => StateFormula::Iff(l, r),
            }
        }
    }
}

/// `op(args)` over state formulas: one expression when every operand is one, an
/// [`StateFormula::Apply`] otherwise.
fn sf_apply(op: Operator, args: Vec<StateFormula>, span: Span) -> StateFormula {
    if args.iter().all(|a| matches!(a, StateFormula::Expr(_))) {
        let mut exprs: Vec<Expr> = args
            .into_iter()
            .filter_map(|a| match a {
                StateFormula::Expr(e) => Some(e.node),
                _ => None,
            })
            .collect();
        let e = match op {
            Operator::Neg => Expr::Unary(UnaryOp::Neg, Box::new(exprs.remove(0))),
            Operator::Binary(b) => {
                let r = exprs.pop().unwrap_or(Expr::Bool(false));
                let l = exprs.pop().unwrap_or(Expr::Bool(false));
                Expr::Binary(b, Box::new(l), Box::new(r))
            }
            Operator::Ite => {
                let b = exprs.pop().unwrap_or(Expr::Bool(false));
                let a = exprs.pop().unwrap_or(Expr::Bool(false));
                let c = exprs.pop().unwrap_or(Expr::Bool(false));
                Expr::Ite(Box::new(c), Box::new(a), Box::new(b))
            }
            Operator::Call(f) => Expr::Call(f, exprs),
        };
        return StateFormula::Expr(Spanned::new(e, span));
    }
    StateFormula::Apply {
        op: Spanned::new(op, span),
        args,
    }
}

/// A left-associative chain of `=>`, `<=>`, `|` or `&` (one precedence level), each operand
/// built by `build` and joined by `join`; each operator counts as a node.
fn fold_logical<T>(
    pair: Pair<'_, Rule>,
    build: fn(Pair<'_, Rule>) -> Result<T>,
    join: fn(BinaryOp, T, T) -> T,
) -> Result<T> {
    let span = pair.as_span();
    let mut inner = pair.into_inner();
    let mut acc = build(next(&mut inner, span)?)?;
    while let Some(op) = inner.next() {
        let bop = BinaryOp::from_symbol(op.as_str()).ok_or_else(|| internal(&op))?;
        let rhs = build(next(&mut inner, span)?)?;
        count_node(op.as_span())?;
        acc = join(bop, acc, rhs);
    }
    Ok(acc)
}

/// The prefix operators (`!`, unary `-`) of a `sf_not`/`sf_unary` pair, with their spans in
/// order, and the operand they apply to; more than `MAX_DEPTH` of them is an error.
fn prefix_operators(pair: Pair<'_, Rule>) -> Result<(Vec<Span>, Pair<'_, Rule>)> {
    let span = pair.as_span();
    let mut atom = None;
    let mut op_spans = Vec::new();
    for p in pair.into_inner() {
        if matches!(p.as_rule(), Rule::not_op | Rule::neg_op) {
            op_spans.push(sp(p.as_span()));
        } else {
            atom = Some(p);
        }
    }
    if op_spans.len() > augur_expr::syntax::MAX_DEPTH {
        return Err(PctlError::Syntax(SyntaxError::from_span(
            span,
            "formula nested too deeply",
        )));
    }
    let Some(atom) = atom else {
        return Err(PctlError::Syntax(SyntaxError::from_span(
            span,
            "internal parser error: missing operand",
        )));
    };
    Ok((op_spans, atom))
}

fn build_state_formula(pair: Pair<'_, Rule>) -> Result<StateFormula> {
    let span = pair.as_span();
    match pair.as_rule() {
        Rule::state_formula => {
            let mut inner = pair.into_inner();
            let cond = build_state_formula(next(&mut inner, span)?)?;
            let (Some(a), Some(b)) = (inner.next(), inner.next()) else {
                return Ok(cond);
            };
            let (a, b) = (build_state_formula(a)?, build_state_formula(b)?);
            counted(sf_apply(Operator::Ite, vec![cond, a, b], sp(span)), span)
        }
        Rule::sf_implies | Rule::sf_iff | Rule::sf_or | Rule::sf_and => {
            fold_logical(pair, build_state_formula, sf_binary)
        }
        Rule::sf_eq | Rule::sf_rel | Rule::sf_add | Rule::sf_mul => {
            let mut inner = pair.into_inner();
            let first = next(&mut inner, span)?;
            let start = first.as_span().start();
            let mut acc = build_state_formula(first)?;
            while let Some(op) = inner.next() {
                let bop = BinaryOp::from_symbol(op.as_str()).ok_or_else(|| internal(&op))?;
                let rhs_pair = next(&mut inner, span)?;
                let end = sp(rhs_pair.as_span()).end;
                let rhs = build_state_formula(rhs_pair)?;
                acc = counted(
                    sf_apply(Operator::Binary(bop), vec![acc, rhs], Span::new(start, end)),
                    op.as_span(),
                )?;
            }
            Ok(acc)
        }
        Rule::sf_not | Rule::sf_unary => {
            let is_not = pair.as_rule() == Rule::sf_not;
            let (op_spans, atom) = prefix_operators(pair)?;
            let mut f = build_state_formula(atom)?;
            let end = sp(span).end;
            for &op_span in op_spans.iter().rev() {
                f = counted(
                    if is_not {
                        sf_not(f, op_span)
                    } else {
                        sf_apply(Operator::Neg, vec![f], Span::new(op_span.start, end))
                    },
                    span,
                )?;
            }
            Ok(f)
        }
        Rule::sf_pow => {
            let mut inner = pair.into_inner();
            let base = build_state_formula(next(&mut inner, span)?)?;
            match (inner.next(), inner.next()) {
                (Some(_), Some(exp)) => {
                    let exp = build_state_formula(exp)?;
                    counted(
                        sf_apply(Operator::Call(Func::Pow), vec![base, exp], sp(span)),
                        span,
                    )
                }
                _ => Ok(base),
            }
        }
        Rule::sf_call => {
            let mut inner = pair.into_inner();
            let name = next(&mut inner, span)?;
            let func = Func::from_name(name.as_str()).ok_or_else(|| internal(&name))?;
            let args = inner.map(build_state_formula).collect::<Result<Vec<_>>>()?;
            augur_expr::syntax::check_arity(func, args.len(), span).map_err(PctlError::Syntax)?;
            counted(sf_apply(Operator::Call(func), args, sp(span)), span)
        }
        Rule::double_lit | Rule::int_lit | Rule::bool_lit | Rule::ident => Ok(StateFormula::Expr(
            Spanned::new(build_expr(pair)?, sp(span)),
        )),
        _ => build_atom(pair),
    }
}

fn build_atom(pair: Pair<'_, Rule>) -> Result<StateFormula> {
    let span = pair.as_span();
    if matches!(
        pair.as_rule(),
        Rule::prob_op
            | Rule::steady_op
            | Rule::lra_op
            | Rule::time_op
            | Rule::reward_op
            | Rule::filter
    ) {
        count_node(span)?;
    }
    match pair.as_rule() {
        Rule::quoted => Ok(StateFormula::Label(Spanned::new(
            quoted_text(pair),
            sp(span),
        ))),
        Rule::path_or_state => expect_state(
            pair,
            "a path formula cannot stand where a state formula belongs; put it inside P[...]",
        ),
        Rule::prob_op => {
            let mut it = pair.into_inner();
            let kw = next(&mut it, span)?;
            let opt = optimum_of(&kw.as_str()[1..]);
            let bound = build_bound(kw.as_span(), next(&mut it, span)?, BoundKind::Probability)?;
            let operand = next(&mut it, span)?;
            let pspan = operand.as_span();
            let path = build_ltl(operand)?.into_path().ok_or_else(|| {
                invalid(
                    pspan,
                    "P[...] needs a path formula (X, F, G, U, W or R), not a state formula",
                )
            })?;
            old_filter(
                StateFormula::Prob {
                    opt,
                    bound,
                    path: Box::new(path),
                },
                it.next(),
            )
        }
        Rule::steady_op | Rule::lra_op => {
            let mut it = pair.into_inner();
            let kw = next(&mut it, span)?;
            let bound = build_bound(kw.as_span(), next(&mut it, span)?, BoundKind::Probability)?;
            let formula = expect_state(
                next(&mut it, span)?,
                "S[...] takes a state formula, not a path formula",
            )?;
            old_filter(
                StateFormula::Steady {
                    bound,
                    formula: Box::new(formula),
                },
                it.next(),
            )
        }
        Rule::time_op => {
            let mut it = pair.into_inner();
            let kw = next(&mut it, span)?;
            let bound = build_bound(kw.as_span(), next(&mut it, span)?, BoundKind::Reward)?;
            let (path, pspan) = expect_path(
                next(&mut it, span)?,
                "T[...] takes `F φ`, not a state formula",
            )?;
            match path {
                PathFormula::Eventually(
                    target,
                    Spanned {
                        node: StepBound::Unbounded,
                        ..
                    },
                ) => old_filter(
                    StateFormula::Time {
                        bound,
                        target: Box::new(target),
                    },
                    it.next(),
                ),
                _ => Err(invalid(pspan, "T[...] takes an unbounded `F φ`")),
            }
        }
        Rule::reward_op => {
            let mut structure = None;
            let mut bound = None;
            let mut path = None;
            let mut filter = None;
            let mut kw_span = span;
            let mut opt = None;
            for p in pair.into_inner() {
                match p.as_rule() {
                    Rule::old_filter => filter = Some(p),
                    Rule::kw_r => {
                        kw_span = p.as_span();
                        opt = optimum_of(&p.as_str()[1..]);
                    }
                    Rule::optimum => {
                        if opt.is_some() {
                            return Err(invalid(
                                p.as_span(),
                                "`min`/`max` is written once: `R{\"r\"}min=?` or `Rmin=?`",
                            ));
                        }
                        opt = optimum_of(p.as_str());
                    }
                    Rule::reward_ref => structure = Some(build_reward_ref(p)?),
                    Rule::bound => bound = Some(build_bound(kw_span, p, BoundKind::Reward)?),
                    Rule::reward_path => path = Some(build_reward_path(p)?),
                    Rule::path_or_state => path = Some(build_reward_ltl(p)?),
                    _ => return Err(internal(&p)),
                }
            }
            match (bound, path) {
                (Some(bound), Some(path)) => old_filter(
                    StateFormula::Reward {
                        structure,
                        opt,
                        bound,
                        path: Box::new(path),
                    },
                    filter,
                ),
                _ => Err(PctlError::Syntax(SyntaxError::from_span(
                    span,
                    "internal parser error: incomplete R",
                ))),
            }
        }
        Rule::filter => {
            let mut it = pair.into_inner();
            let kw = next(&mut it, span)?;
            let op_pair = next(&mut it, span)?;
            let op_span = sp(kw.as_span()).join(sp(op_pair.as_span()));
            let op = match op_pair.as_str() {
                "min" => FilterOp::Min,
                "max" => FilterOp::Max,
                "argmin" => FilterOp::Argmin,
                "argmax" => FilterOp::Argmax,
                "count" => FilterOp::Count,
                "sum" => FilterOp::Sum,
                "avg" => FilterOp::Avg,
                "first" => FilterOp::First,
                "range" => FilterOp::Range,
                "forall" => FilterOp::Forall,
                "exists" => FilterOp::Exists,
                "state" => FilterOp::State,
                "print" => FilterOp::Print,
                _ => FilterOp::Printall,
            };
            let msg = "filter(...) takes state formulas; put path formulas inside P[...]";
            let property = expect_state(next(&mut it, span)?, msg)?;
            let states = match it.next() {
                Some(p) => expect_state(p, msg)?,
                None => StateFormula::Expr(Expr::Bool(true).into()),
            };
            Ok(StateFormula::Filter {
                op: Spanned::new(op, op_span),
                property: Box::new(property),
                states: Box::new(states),
            })
        }
        Rule::next_path | Rule::unary_path => {
            let op = pair.into_inner().next().map_or(span, |p| p.as_span());
            Err(invalid(
                op,
                format!(
                    "`{}` is a temporal operator and cannot stand here: temporal operators belong \
                     inside P[...], as operands of `!`, `&`, `|`, `=>`, `<=>` or of each other",
                    op.as_str()
                ),
            ))
        }
        _ => Err(internal(&pair)),
    }
}

/// PRISM's original filter syntax inside an operator's brackets (`P=? [ F "goal" {x=1} ]`,
/// `S=? [ s=0 {"init"}{min} ]`), as PRISM reads it: the value in the first state of the filter,
/// or the minimum (`{min}`), the maximum (`{max}`) or both (`{min}{max}`: the range) over its
/// states. Built as the equivalent `filter(first | min | max | range, operator, states)`.
fn old_filter(operator: StateFormula, filter: Option<Pair<'_, Rule>>) -> Result<StateFormula> {
    let Some(filter) = filter else {
        return Ok(operator);
    };
    let span = filter.as_span();
    let mut it = filter.into_inner();
    let states = build_state_formula(next(&mut it, span)?)?;
    let (mut min, mut max) = (false, false);
    for req in it {
        let text = req.as_str();
        if text.contains("min") {
            min = true;
        } else {
            max = true;
        }
    }
    let op = match (min, max) {
        (true, true) => FilterOp::Range,
        (true, false) => FilterOp::Min,
        (false, true) => FilterOp::Max,
        (false, false) => FilterOp::First,
    };
    count_node(span)?;
    Ok(StateFormula::Filter {
        op: Spanned::new(op, sp(span)),
        property: Box::new(operator),
        states: Box::new(states),
    })
}

fn build_reward_ref(pair: Pair<'_, Rule>) -> Result<RewardRef> {
    let span = pair.as_span();
    let p = next(&mut pair.into_inner(), span)?;
    match p.as_rule() {
        Rule::quoted => Ok(RewardRef::Name(quoted_text(p))),
        _ => match p.as_str().parse::<u32>() {
            Ok(i) if i >= 1 => Ok(RewardRef::Index(i)),
            _ => Err(invalid(
                p.as_span(),
                "reward structure indices start at 1 (and must fit in 32 bits)",
            )),
        },
    }
}

/// Evaluates a bound expression that names no constant; `None` when it names one (checked
/// later, against the model's constants).
fn closed_value(e: &Expr, span: pest::Span<'_>) -> Result<Option<Value>> {
    if !e.is_closed() {
        return Ok(None);
    }
    e.eval(|_| None)
        .map(Some)
        .map_err(|err| invalid(span, err.to_string()))
}

/// The bound of an operator whose keyword (`P`, `R`, ...) is at `kw`; the result's span covers
/// the operator from its keyword to the end of the bound (`P>=0.5`, `R{"c"}=?`).
fn build_bound(
    kw: pest::Span<'_>,
    pair: Pair<'_, Rule>,
    kind: BoundKind,
) -> Result<Spanned<Bound>> {
    let span = pair.as_span();
    let op_span = Span::new(kw.start(), span.end());
    let mut it = pair.into_inner();
    let first = next(&mut it, span)?;
    if first.as_rule() == Rule::query {
        return Ok(Spanned::new(Bound::Query, op_span));
    }
    let cmp = match first.as_str() {
        "<" => Comparison::Lt,
        "<=" => Comparison::Le,
        ">" => Comparison::Gt,
        _ => Comparison::Ge,
    };
    let ep = next(&mut it, span)?;
    let espan = ep.as_span();
    let e = build_expr(ep)?;
    if let Some(v) = closed_value(&e, espan)? {
        checks::threshold(kind, v).map_err(|m| invalid(espan, m))?;
    }
    Ok(Spanned::new(
        Bound::Compare(cmp, Spanned::new(e, sp(espan))),
        op_span,
    ))
}

/// Checks a constant-free step count: an int, at least `min`.
fn check_steps(e: &Expr, span: pest::Span<'_>, what: &str) -> Result<Option<i64>> {
    match closed_value(e, span)? {
        None => Ok(None),
        Some(v) => checks::step_count(v, what)
            .map(Some)
            .map_err(|m| invalid(span, m)),
    }
}

fn build_step_bound(pair: Pair<'_, Rule>) -> Result<Spanned<StepBound>> {
    let span = pair.as_span();
    let at = |b: StepBound| Spanned::new(b, sp(span));
    let mut it = pair.into_inner();
    let first = next(&mut it, span)?;
    if first.as_rule() == Rule::step_op {
        let ep = next(&mut it, span)?;
        let espan = ep.as_span();
        let e = build_expr(ep)?;
        let k = check_steps(&e, espan, "step bound")?;
        let op = first.as_str();
        if op == "<" && k == Some(0) {
            return Err(invalid(span, checks::EMPTY_LT));
        }
        let e = Spanned::new(e, sp(espan));
        Ok(at(match op {
            "<" => StepBound::Lt(e),
            "<=" => StepBound::Le(e),
            ">" => StepBound::Gt(e),
            ">=" => StepBound::Ge(e),
            _ => StepBound::Eq(e),
        }))
    } else {
        let lo_span = first.as_span();
        let lo = build_expr(first)?;
        let hp = next(&mut it, span)?;
        let hi_span = hp.as_span();
        let hi = build_expr(hp)?;
        let a = check_steps(&lo, lo_span, "step bound")?;
        let b = check_steps(&hi, hi_span, "step bound")?;
        if let (Some(a), Some(b)) = (a, b) {
            if a > b {
                return Err(invalid(span, checks::empty_interval(a, b)));
            }
        }
        Ok(at(StepBound::Interval(
            Spanned::new(lo, sp(lo_span)),
            Spanned::new(hi, sp(hi_span)),
        )))
    }
}

/// The path formula of `R[...]` that is not `C`, `I=k` or `S`: `F φ` (reachability reward),
/// or a co-safe LTL formula (PRISM's co-safe LTL reward: `X F "a"`, `"a" U "b"`); a step-bounded
/// `F φ` (PRISM refuses it too: the reward within k steps is `C<=k`) and other path formulas
/// are errors at the formula.
fn build_reward_ltl(pair: Pair<'_, Rule>) -> Result<RewardPath> {
    const WHAT: &str = "R[...] takes a reward formula: F φ, C, C<=k, C{discount=d}, I=k, S \
                        or a co-safe LTL formula";
    let pspan = pair.as_span();
    match build_ltl(pair)?.into_path() {
        None => Err(invalid(pspan, format!("{WHAT}, not a state formula"))),
        Some(PathFormula::Eventually(
            target,
            Spanned {
                node: StepBound::Unbounded,
                ..
            },
        )) => Ok(RewardPath::Reachability(target)),
        Some(PathFormula::Eventually(..)) => Err(invalid(
            pspan,
            format!(
                "{WHAT}; a step-bounded `F` is not one (as in PRISM): the reward accumulated \
                 within k steps is `C<=k`"
            ),
        )),
        Some(path) => {
            let ltl = path.to_ltl();
            if ltl.is_co_safe() {
                Ok(RewardPath::Ltl(ltl))
            } else {
                Err(invalid(
                    pspan,
                    format!(
                        "{WHAT} (the reward is collected until a finite prefix of the path \
                         satisfies it); this one is not co-safe: in negation normal form it has \
                         an unbounded `G`, `W` or `R`"
                    ),
                ))
            }
        }
    }
}

fn build_reward_path(pair: Pair<'_, Rule>) -> Result<RewardPath> {
    let span = pair.as_span();
    let p = next(&mut pair.into_inner(), span)?;
    let pspan = p.as_span();
    match p.as_rule() {
        Rule::cumulative => {
            let mut bound = None;
            let mut discount = None;
            let mut strict = false;
            let mut op_start = pspan.start();
            for q in p.into_inner() {
                match q.as_rule() {
                    Rule::kw_c => {}
                    Rule::discount | Rule::storm_discount => {
                        let qspan = q.as_span();
                        let ep = next(&mut q.into_inner(), qspan)?;
                        let espan = ep.as_span();
                        let d = build_expr(ep)?;
                        if let Some(v) = closed_value(&d, espan)? {
                            checks::discount(v).map_err(|m| invalid(espan, m))?;
                        }
                        discount = Some(Spanned::new(d, sp(espan)));
                    }
                    Rule::cumul_op => {
                        strict = q.as_str() == "<";
                        op_start = q.as_span().start();
                    }
                    Rule::cumul_bound => {
                        let qspan = q.as_span();
                        let ep = next(&mut q.into_inner(), qspan)?;
                        let espan = ep.as_span();
                        let k = if ep.as_rule() == Rule::storm_k {
                            // `C<=10discount=0.9`: the bound glued to Storm's discount
                            match ep.as_str().parse::<i64>() {
                                Ok(i) => Expr::Int(i),
                                Err(_) if ep.as_str().starts_with(|c: char| c.is_ascii_digit()) => {
                                    return Err(invalid(
                                        espan,
                                        format!("integer `{}` is out of range", ep.as_str()),
                                    ))
                                }
                                Err(_) => Expr::Ident(ep.as_str().to_string()),
                            }
                        } else {
                            build_expr(ep)?
                        };
                        let closed = check_steps(&k, espan, "step bound")?;
                        // Storm's `C<k` is `C<=k-1`, as `F<k` is `F<=k-1`.
                        let k = if strict {
                            if closed == Some(0) {
                                return Err(PctlError::Invalid(SyntaxError::at(
                                    qspan.get_input(),
                                    op_start,
                                    qspan.end(),
                                    checks::EMPTY_LT,
                                )));
                            }
                            match k {
                                Expr::Int(i) => Expr::Int(i - 1),
                                k => {
                                    Expr::Binary(BinaryOp::Sub, Box::new(k), Box::new(Expr::Int(1)))
                                }
                            }
                        } else {
                            k
                        };
                        bound = Some(Spanned::new(k, sp(espan)));
                    }
                    _ => return Err(internal(&q)),
                }
            }
            Ok(RewardPath::Cumulative { bound, discount })
        }
        Rule::instantaneous => {
            let mut it = p.into_inner();
            let _kw = next(&mut it, pspan)?;
            let ep = next(&mut it, pspan)?;
            let espan = ep.as_span();
            let k = build_expr(ep)?;
            check_steps(&k, espan, "step")?;
            Ok(RewardPath::Instantaneous(Spanned::new(k, sp(espan))))
        }
        Rule::long_run => Ok(RewardPath::LongRun),
        _ => Err(internal(&p)),
    }
}

/// `Some(min)` / `Some(max)` for the text after `P`/`R` (`"min"`, `"max"`), `None` otherwise.
fn optimum_of(text: &str) -> Option<crate::ast::Optimum> {
    match text {
        "min" => Some(crate::ast::Optimum::Min),
        "max" => Some(crate::ast::Optimum::Max),
        _ => None,
    }
}
