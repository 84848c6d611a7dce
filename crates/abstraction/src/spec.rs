//! The abstraction spec (TOML) and the [`Abstraction`] it defines.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use augur_expr::{parse_expr, Expr, ExprError, Type, Value};
use fixedbitset::FixedBitSet;
use serde::Deserialize;
use toml::Spanned;

use crate::bexpr::{PredicateExpr, PredicateRef};
use crate::error::{AbstractionError, Result};

/// At most this many predicates (one bit each in a `u64`).
pub const MAX_PREDICATES: usize = 64;

/// At most this many valid abstract states are enumerated.
pub const MAX_STATES: usize = 1 << 22;

/// At most this many partial assignments are visited while enumerating.
const MAX_VISITS: u64 = 1 << 27;

/// The suffix primed names get when the text is handed to the expression parser.
const NEXT_SUFFIX: &str = "__next";

/// The kind of a concrete variable.
#[derive(Clone, Debug, PartialEq)]
pub enum VarKind {
    /// `{ type = "bool" }`
    Bool,
    /// `{ type = "int", min = 0, max = 300 }` (bounds inclusive).
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// `{ type = "double" }`
    Double,
    /// `{ type = "enum", values = ["a", "b"] }`: in expressions the variable is an int (the
    /// position of its value, from 0) and each value name is a constant, so `loc = kitchen`
    /// and `level >= HIGH` (in declaration order) work.
    Enum(Vec<String>),
}

/// A concrete state variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: VarKind,
}

/// A predicate over the concrete variables.
#[derive(Clone, Debug, PartialEq)]
pub struct Predicate {
    /// Its name (bit `i` of an abstract state for the `i`-th predicate).
    pub name: String,
    /// Its expression as written.
    pub text: String,
    expr: Expr,
}

#[derive(Clone, Copy, Debug)]
enum Binding {
    Var(usize),
    EnumConst(i64),
}

/// An abstraction: variables, predicates, validity constraints and labels, with the set of
/// valid abstract states enumerated. Abstract states are `u64` bit-vectors (bit `i` = predicate
/// `i`, in the order the spec lists them) and are numbered `0..num_states()` in increasing
/// bit-vector order.
#[derive(Clone, Debug)]
pub struct Abstraction {
    variables: Vec<Variable>,
    predicates: Vec<Predicate>,
    monotone: u64,
    exclusive: Vec<(u64, Vec<String>)>,
    invalid_state: Option<PredicateExpr>,
    invalid_transition: Option<PredicateExpr>,
    labels: Vec<(String, PredicateExpr)>,
    states: Vec<u64>,
    index: HashMap<u64, u32>,
    bindings: HashMap<String, Binding>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecToml {
    #[serde(default)]
    variables: BTreeMap<String, Spanned<VarToml>>,
    predicates: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    validity: ValidityToml,
    #[serde(default)]
    labels: BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VarToml {
    #[serde(rename = "type")]
    ty: Spanned<String>,
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
    values: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ValidityToml {
    #[serde(default)]
    monotone: Vec<Spanned<String>>,
    #[serde(default)]
    exclusive: Vec<Spanned<Vec<Spanned<String>>>>,
    invalid_state: Option<Spanned<String>>,
    invalid_transition: Option<Spanned<String>>,
}

/// Parsing context: the spec's text and file name, for located errors.
struct Ctx<'a> {
    file: &'a str,
    src: &'a str,
}

impl Ctx<'_> {
    fn err(&self, offset: usize, msg: impl Into<String>) -> AbstractionError {
        AbstractionError::spec(self.file, self.src, offset, msg)
    }

    fn err_span(&self, start: usize, end: usize, msg: impl Into<String>) -> AbstractionError {
        AbstractionError::spec_span(
            self.file,
            self.src,
            augur_source::Span::new(start, end),
            msg,
        )
    }

    /// Byte offset of the first character inside a string value whose span is `span`.
    fn content_start(&self, span: &Range<usize>) -> usize {
        let rest = self.src.get(span.start..).unwrap_or("");
        if rest.starts_with("\"\"\"") || rest.starts_with("'''") {
            let after = &rest[3..];
            let nl = if after.starts_with("\r\n") {
                2
            } else if after.starts_with('\n') {
                1
            } else {
                0
            };
            span.start + 3 + nl
        } else {
            span.start + 1
        }
    }

    /// Parse the expression in a string value. With `primes`, `name'` is accepted and becomes
    /// `name__next`. Errors point into the spec.
    fn parse(&self, value: &Spanned<String>, primes: bool) -> Result<(Expr, Located)> {
        let base = self.content_start(&value.span());
        let text = value.get_ref();
        let (rewritten, inserted) = if primes {
            rewrite_primes(text)
        } else {
            (text.clone(), Vec::new())
        };
        let located = Located {
            base,
            text: text.clone(),
            inserted,
        };
        match parse_expr(&rewritten) {
            Ok(e) => Ok((e, located)),
            Err(e) => Err(self.err_span(
                located.map(e.span.start),
                located.map(e.span.end),
                format!("syntax error: {}", e.message),
            )),
        }
    }

    /// A located error for an expression error (undeclared names and type errors).
    fn expr_err(&self, loc: &Located, e: &ExprError, context: &str) -> AbstractionError {
        match e {
            ExprError::Undeclared(name) => {
                let shown = name.strip_suffix(NEXT_SUFFIX).map(|n| format!("{n}'"));
                let shown = shown.as_deref().unwrap_or(name);
                let (at, len) = find_ident(&loc.text, shown).map_or((0, 0), |i| (i, shown.len()));
                self.err_span(
                    loc.base + at,
                    loc.base + at + len,
                    format!("undeclared name `{shown}` in {context}"),
                )
            }
            other => self.err(loc.base, format!("{other} in {context}")),
        }
    }
}

/// Where an expression's text sits in the spec, and how the parser's offsets map back.
struct Located {
    base: usize,
    text: String,
    /// Offsets (in the rewritten text) where a `'` became `__next`.
    inserted: Vec<usize>,
}

impl Located {
    fn map(&self, offset: usize) -> usize {
        let shift = self.inserted.iter().filter(|&&p| p < offset).count() * (NEXT_SUFFIX.len() - 1);
        self.base + offset.saturating_sub(shift)
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Replace `name'` by `name__next`; returns the new text and the rewritten offsets of the primes.
fn rewrite_primes(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len() + 8);
    let mut inserted = Vec::new();
    let mut prev_ident = false;
    for c in text.chars() {
        if c == '\'' && prev_ident {
            inserted.push(out.len());
            out.push_str(NEXT_SUFFIX);
            prev_ident = false;
        } else {
            out.push(c);
            prev_ident = is_ident_char(c);
        }
    }
    (out, inserted)
}

/// Byte offset of `name` as a whole word in `text`.
fn find_ident(text: &str, name: &str) -> Option<usize> {
    let bare = name.trim_end_matches('\'');
    let mut from = 0;
    while let Some(i) = text[from..].find(name) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let after_ok = if name.ends_with('\'') {
            true
        } else {
            !after.is_some_and(|c| is_ident_char(c) || c == '\'')
        };
        if !before.is_some_and(is_ident_char) && after_ok {
            return Some(at);
        }
        from = at + bare.len().max(1);
    }
    None
}

fn is_identifier(name: &str) -> bool {
    matches!(parse_expr(name), Ok(Expr::Ident(n)) if n == name)
}

/// The variables of the spec (in file order) and the bindings of their names and of the
/// enum values.
fn parse_variables(
    ctx: &Ctx<'_>,
    variables: BTreeMap<String, Spanned<VarToml>>,
) -> Result<(Vec<Variable>, HashMap<String, Binding>)> {
    let mut parsed = Vec::new();
    let mut bindings: HashMap<String, Binding> = HashMap::new();
    let mut const_origin: HashMap<String, String> = HashMap::new();
    let vars = sorted_by_span(variables);
    for (i, (name, v)) in vars.iter().enumerate() {
        if !is_identifier(name) {
            return Err(ctx.err(
                v.span().start,
                format!("`{name}` is not a valid variable name"),
            ));
        }
        bindings.insert(name.clone(), Binding::Var(i));
    }
    for (name, v) in vars {
        let kind = variable_kind(ctx, &name, v, &mut bindings, &mut const_origin)?;
        parsed.push(Variable { name, kind });
    }
    Ok((parsed, bindings))
}

/// The kind of variable `name` from its `{ type = ..., ... }` table; an enum's values are
/// bound as constants (`const_origin`: the variable that first listed each value).
fn variable_kind(
    ctx: &Ctx<'_>,
    name: &str,
    v: Spanned<VarToml>,
    bindings: &mut HashMap<String, Binding>,
    const_origin: &mut HashMap<String, String>,
) -> Result<VarKind> {
    let at = v.span().start;
    let v = v.into_inner();
    let ty_at = v.ty.span().start;
    Ok(match v.ty.get_ref().as_str() {
        "bool" | "double" | "int" | "enum" => {
            let t = v.ty.get_ref().as_str();
            if t != "int" {
                if let Some(m) = v.min.as_ref().or(v.max.as_ref()) {
                    return Err(ctx.err(
                        m.span().start,
                        format!("`min`/`max` only apply to int variables, `{name}` is {t}"),
                    ));
                }
            }
            if t != "enum" {
                if let Some(vals) = &v.values {
                    let off = vals.first().map_or(at, |s| s.span().start);
                    return Err(ctx.err(
                        off,
                        format!("`values` only applies to enum variables, `{name}` is {t}"),
                    ));
                }
            }
            match t {
                "bool" => VarKind::Bool,
                "double" => VarKind::Double,
                "int" => {
                    let (Some(min), Some(max)) = (&v.min, &v.max) else {
                        return Err(
                            ctx.err(at, format!("int variable `{name}` needs `min` and `max`"))
                        );
                    };
                    if min.get_ref() > max.get_ref() {
                        return Err(ctx.err(
                            min.span().start,
                            format!(
                                "int variable `{name}`: min {} > max {}",
                                min.get_ref(),
                                max.get_ref()
                            ),
                        ));
                    }
                    VarKind::Int {
                        min: *min.get_ref(),
                        max: *max.get_ref(),
                    }
                }
                _ => VarKind::Enum(enum_values(
                    ctx,
                    name,
                    at,
                    v.values,
                    bindings,
                    const_origin,
                )?),
            }
        }
        other => {
            return Err(ctx.err(
                ctx.content_start(&v.ty.span()).max(ty_at),
                format!("unknown variable type `{other}` (expected bool, int, double or enum)"),
            ));
        }
    })
}

/// The values of enum variable `name` (declared at `at`), each bound as a constant: its
/// position, which must be the same in every variable that lists it.
fn enum_values(
    ctx: &Ctx<'_>,
    name: &str,
    at: usize,
    values: Option<Vec<Spanned<String>>>,
    bindings: &mut HashMap<String, Binding>,
    const_origin: &mut HashMap<String, String>,
) -> Result<Vec<String>> {
    let Some(vals) = values else {
        return Err(ctx.err(at, format!("enum variable `{name}` needs `values = [...]`")));
    };
    if vals.is_empty() {
        return Err(ctx.err(at, format!("enum variable `{name}` has no values")));
    }
    let mut names = Vec::new();
    for (i, val) in vals.iter().enumerate() {
        let vn = val.get_ref();
        let off = ctx.content_start(&val.span());
        if !is_identifier(vn) {
            return Err(ctx.err(
                off,
                format!(
                    "enum value `{vn}` is not an identifier (letters, digits, `_`; not a keyword)"
                ),
            ));
        }
        if names.contains(vn) {
            return Err(ctx.err(off, format!("enum value `{vn}` is listed twice")));
        }
        match bindings.get(vn) {
            Some(Binding::Var(_)) => {
                return Err(ctx.err(off, format!("enum value `{vn}` has the name of a variable")));
            }
            Some(Binding::EnumConst(j)) if *j != i as i64 => {
                return Err(ctx.err(off, format!("enum value `{vn}` is at position {i} here but {j} in `{}`: enum values shared between variables must have the same position", const_origin[vn])));
            }
            _ => {}
        }
        bindings.insert(vn.clone(), Binding::EnumConst(i as i64));
        const_origin.insert(vn.clone(), name.to_string());
        names.push(vn.clone());
    }
    Ok(names)
}

/// The predicates (in file order), each a boolean expression over the variables, and their
/// bit positions.
fn parse_predicates(
    ctx: &Ctx<'_>,
    predicates: BTreeMap<String, Spanned<String>>,
    variables: &[Variable],
    bindings: &HashMap<String, Binding>,
) -> Result<(Vec<Predicate>, HashMap<String, u8>)> {
    let var_type = |n: &str| -> Option<Type> {
        match bindings.get(n)? {
            Binding::Var(i) => Some(match variables[*i].kind {
                VarKind::Bool => Type::Bool,
                VarKind::Double => Type::Double,
                VarKind::Int { .. } | VarKind::Enum(_) => Type::Int,
            }),
            Binding::EnumConst(_) => Some(Type::Int),
        }
    };
    let preds = sorted_by_span(predicates);
    if preds.is_empty() {
        return Err(ctx.err(0, "the spec declares no predicate ([predicates] is empty)"));
    }
    if preds.len() > MAX_PREDICATES {
        let at = preds[MAX_PREDICATES].1.span().start;
        return Err(ctx.err(at, format!("too many predicates: at most {MAX_PREDICATES}")));
    }
    let pred_index: HashMap<String, u8> = preds
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.clone(), i as u8))
        .collect();
    let mut parsed = Vec::new();
    for (name, text) in &preds {
        let start = text.span().start;
        if !is_identifier(name) {
            return Err(ctx.err(start, format!("`{name}` is not a valid predicate name")));
        }
        if bindings.contains_key(name) {
            return Err(ctx.err(
                start,
                format!("predicate `{name}` has the name of a variable or enum value"),
            ));
        }
        let (expr, loc) = ctx.parse(text, false)?;
        for id in expr.idents() {
            if pred_index.contains_key(&id) && var_type(&id).is_none() {
                let at = find_ident(&loc.text, &id).unwrap_or(0);
                return Err(ctx.err(
                    loc.base + at,
                    format!(
                        "predicate `{name}` uses predicate `{id}`: predicates are over variables"
                    ),
                ));
            }
        }
        let ty = expr
            .type_check(var_type)
            .map_err(|e| ctx.expr_err(&loc, &e, &format!("predicate `{name}`")))?;
        if ty != Type::Bool {
            return Err(ctx.err(loc.base, format!("predicate `{name}` is {ty}, not bool")));
        }
        parsed.push(Predicate {
            name: name.clone(),
            text: text.get_ref().clone(),
            expr,
        });
    }
    Ok((parsed, pred_index))
}

/// Compiles the constraints over predicates (validity, labels).
struct Constraints<'a> {
    ctx: &'a Ctx<'a>,
    /// The bit of each predicate.
    pred_index: &'a HashMap<String, u8>,
    /// The names of variables and enum values (which constraints may not use).
    bindings: &'a HashMap<String, Binding>,
}

impl Constraints<'_> {
    /// Compiles a boolean expression over predicates (`primes`: also over their next values,
    /// `name'`); `what` names it in errors.
    fn compile(&self, value: &Spanned<String>, primes: bool, what: &str) -> Result<PredicateExpr> {
        let (expr, loc) = self.ctx.parse(value, primes)?;
        let ty_of = |n: &str| -> Option<Type> {
            if self.pred_index.contains_key(n) {
                return Some(Type::Bool);
            }
            let base = n.strip_suffix(NEXT_SUFFIX)?;
            (primes && self.pred_index.contains_key(base)).then_some(Type::Bool)
        };
        for id in expr.idents() {
            if ty_of(&id).is_none() && self.bindings.contains_key(&id) {
                let at = find_ident(&loc.text, &id).unwrap_or(0);
                return Err(self.ctx.err(loc.base + at, format!("`{id}` is a concrete variable or enum value: {what} is over predicates only")));
            }
        }
        let ty = expr
            .type_check(ty_of)
            .map_err(|e| self.ctx.expr_err(&loc, &e, what))?;
        if ty != Type::Bool {
            return Err(self.ctx.err(loc.base, format!("{what} is {ty}, not bool")));
        }
        let resolve = |n: &str| -> Option<PredicateRef> {
            if let Some(&i) = self.pred_index.get(n) {
                return Some(PredicateRef::Cur(i));
            }
            let base = n.strip_suffix(NEXT_SUFFIX)?;
            self.pred_index.get(base).map(|&i| PredicateRef::Next(i))
        };
        PredicateExpr::compile(&expr, &resolve)
            .map_err(|m| self.ctx.err(loc.base, format!("{m} in {what}")))
    }

    /// The bit of the predicate named by `s`; `what` names the list in errors.
    fn predicate_bit(&self, s: &Spanned<String>, what: &str) -> Result<u64> {
        match self.pred_index.get(s.get_ref()) {
            Some(&i) => Ok(1u64 << i),
            None => Err(self.ctx.err(
                self.ctx.content_start(&s.span()),
                format!("undeclared predicate `{}` in {what}", s.get_ref()),
            )),
        }
    }
}

/// The labels of the spec (in file order), each a constraint over predicates.
fn parse_labels(
    constraints: &Constraints<'_>,
    labels: BTreeMap<String, Spanned<String>>,
) -> Result<Vec<(String, PredicateExpr)>> {
    let mut parsed = Vec::new();
    for (name, text) in sorted_by_span(labels) {
        if !is_identifier(&name) {
            return Err(constraints.ctx.err(
                text.span().start,
                format!("`{name}` is not a valid label name"),
            ));
        }
        if constraints.pred_index.contains_key(&name) {
            return Err(constraints.ctx.err(
                text.span().start,
                format!(
                    "label `{name}` has the name of a predicate (predicates are labels already)"
                ),
            ));
        }
        let e = constraints.compile(&text, false, &format!("label `{name}`"))?;
        parsed.push((name, e));
    }
    Ok(parsed)
}

fn sorted_by_span<T>(map: BTreeMap<String, Spanned<T>>) -> Vec<(String, Spanned<T>)> {
    let mut v: Vec<_> = map.into_iter().collect();
    v.sort_by_key(|(_, s)| s.span().start);
    v
}

impl Abstraction {
    /// Read a spec from a file.
    pub fn from_file(path: &std::path::Path) -> Result<Abstraction> {
        let name = path.display().to_string();
        let src = std::fs::read_to_string(path).map_err(|source| AbstractionError::Io {
            file: name.clone(),
            source,
        })?;
        Abstraction::parse(&src, &name)
    }

    /// Parse a spec from its text; `file` names it in errors.
    pub fn parse(src: &str, file: &str) -> Result<Abstraction> {
        let ctx = Ctx { file, src };
        let spec: SpecToml = toml::from_str(src).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            // (One line: toml puts "expected ..." on a line of its own.)
            let message = e.message().trim().replace('\n', ": ");
            ctx.err_span(span.start, span.end, message)
        })?;

        // Variables and enum constants.
        let (variables, bindings) = parse_variables(&ctx, spec.variables)?;

        // Predicates.
        let (predicates, pred_index) =
            parse_predicates(&ctx, spec.predicates, &variables, &bindings)?;

        // Constraints over predicates.
        let constraints = Constraints {
            ctx: &ctx,
            pred_index: &pred_index,
            bindings: &bindings,
        };
        let validity = spec.validity;
        let mut monotone = 0u64;
        for m in &validity.monotone {
            monotone |= constraints.predicate_bit(m, "validity.monotone")?;
        }
        let mut exclusive = Vec::new();
        for group in &validity.exclusive {
            let mut mask = 0u64;
            let mut names = Vec::new();
            for p in group.get_ref() {
                mask |= constraints.predicate_bit(p, "validity.exclusive")?;
                names.push(p.get_ref().clone());
            }
            exclusive.push((mask, names));
        }
        let invalid_state = match &validity.invalid_state {
            Some(s) => Some(constraints.compile(s, false, "validity.invalid_state")?),
            None => None,
        };
        let invalid_transition = match &validity.invalid_transition {
            Some(s) => Some(constraints.compile(s, true, "validity.invalid_transition")?),
            None => None,
        };
        let labels = parse_labels(&constraints, spec.labels)?;

        let mut abs = Abstraction {
            variables,
            predicates,
            monotone,
            exclusive,
            invalid_state,
            invalid_transition,
            labels,
            states: Vec::new(),
            index: HashMap::new(),
            bindings,
        };
        let contradiction_at = validity
            .invalid_state
            .as_ref()
            .map_or(0, |s| ctx.content_start(&s.span()));
        abs.states = abs.enumerate().map_err(|m| ctx.err(contradiction_at, m))?;
        if abs.states.is_empty() {
            return Err(ctx.err(
                contradiction_at,
                "the validity constraints leave no valid abstract state",
            ));
        }
        abs.index = abs
            .states
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32))
            .collect();
        Ok(abs)
    }

    /// DFS over predicates with pruning of partial assignments that already violate an
    /// exclusive group or make `invalid_state` true.
    fn enumerate(&self) -> std::result::Result<Vec<u64>, String> {
        let k = self.predicates.len();
        let mut out = Vec::new();
        let mut visits = 0u64;
        // Explicit stack of (next predicate, bits, known mask).
        let mut stack = vec![(0usize, 0u64, 0u64)];
        while let Some((i, cur, known)) = stack.pop() {
            visits += 1;
            if visits > MAX_VISITS {
                return Err(format!("the validity constraints prune too little to enumerate the valid states of {k} predicates; add constraints or fewer predicates"));
            }
            if self
                .exclusive
                .iter()
                .any(|(g, _)| (cur & g).count_ones() > 1)
            {
                continue;
            }
            if let Some(e) = &self.invalid_state {
                if e.eval3(cur, known) == Some(true) {
                    continue;
                }
            }
            if i == k {
                if self.invalid_state.as_ref().is_none_or(|e| !e.eval(cur, 0)) {
                    out.push(cur);
                    if out.len() > MAX_STATES {
                        return Err(format!("more than {MAX_STATES} valid abstract states: add validity constraints or use fewer predicates"));
                    }
                }
                continue;
            }
            let bit = 1u64 << i;
            stack.push((i + 1, cur | bit, known | bit));
            stack.push((i + 1, cur, known | bit));
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The concrete variables, in spec order.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// The predicates, in spec order (predicate `i` is bit `i`).
    pub fn predicates(&self) -> &[Predicate] {
        &self.predicates
    }

    /// The valid abstract states (bit-vectors), sorted; state index `i` is `valid_states()[i]`.
    pub fn valid_states(&self) -> &[u64] {
        &self.states
    }

    /// Number of valid abstract states.
    pub fn num_states(&self) -> usize {
        self.states.len()
    }

    /// The index of a valid abstract state.
    pub fn index_of(&self, code: u64) -> Option<u32> {
        self.index.get(&code).copied()
    }

    /// The bit-vector of state index `i`.
    pub fn code_of(&self, index: u32) -> Option<u64> {
        self.states.get(index as usize).copied()
    }

    /// Whether a bit-vector satisfies the state constraints (exclusive groups and
    /// `invalid_state`; bits above the number of predicates must be 0).
    pub fn is_valid_state(&self, code: u64) -> bool {
        self.index.contains_key(&code)
    }

    /// Why a bit-vector is not a valid state (`None` if it is valid).
    pub fn why_invalid(&self, code: u64) -> Option<String> {
        if self.is_valid_state(code) {
            return None;
        }
        let k = self.predicates.len();
        if k < 64 && code >> k != 0 {
            return Some(format!("it has bits beyond the {k} predicates"));
        }
        if let Some((_, names)) = self
            .exclusive
            .iter()
            .find(|(g, _)| (code & g).count_ones() > 1)
        {
            return Some(format!("predicates {} are exclusive", names.join(", ")));
        }
        Some("validity.invalid_state holds in it".to_string())
    }

    /// Whether the move `from -> to` between bit-vectors is valid: both states valid, no
    /// monotone predicate goes from true to false, and `invalid_transition` is false.
    pub fn is_valid_transition(&self, from: u64, to: u64) -> bool {
        self.is_valid_state(from)
            && self.is_valid_state(to)
            && (from & self.monotone & !to) == 0
            && self
                .invalid_transition
                .as_ref()
                .is_none_or(|e| !e.eval(from, to))
    }

    /// Whether some move between two valid states is invalid (`validity.monotone` or
    /// `validity.invalid_transition`); without, every valid state may follow every other.
    pub fn constrains_transitions(&self) -> bool {
        self.monotone != 0 || self.invalid_transition.is_some()
    }

    /// [`Self::is_valid_transition`] on state indices (out of range: invalid).
    pub fn is_valid_transition_idx(&self, from: u32, to: u32) -> bool {
        match (self.code_of(from), self.code_of(to)) {
            (Some(f), Some(t)) => self.is_valid_transition(f, t),
            _ => false,
        }
    }

    /// The value of every predicate in a bit-vector, in predicate order.
    pub fn decode(&self, code: u64) -> Vec<bool> {
        (0..self.predicates.len())
            .map(|i| code >> i & 1 == 1)
            .collect()
    }

    /// The bit-vector of predicate values given in predicate order.
    pub fn encode_bits(&self, values: &[bool]) -> u64 {
        values
            .iter()
            .take(MAX_PREDICATES)
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | (u64::from(b) << i))
    }

    /// The abstract state (bit-vector) of a concrete state, given as one value per variable in
    /// spec order (enum values as `Value::Int` positions).
    pub fn encode(&self, concrete: &[Value]) -> Result<u64> {
        let env = |n: &str| -> Option<Value> {
            match self.bindings.get(n)? {
                Binding::Var(i) => concrete.get(*i).copied(),
                Binding::EnumConst(c) => Some(Value::Int(*c)),
            }
        };
        let mut code = 0u64;
        for (i, p) in self.predicates.iter().enumerate() {
            let b = p.expr.eval_bool(env).map_err(|e| {
                AbstractionError::State(format!("evaluating predicate `{}`: {e}", p.name))
            })?;
            if b {
                code |= 1u64 << i;
            }
        }
        Ok(code)
    }

    /// The index of the valid abstract state of a concrete state; an error explains an
    /// invalid one.
    pub fn abstract_state(&self, concrete: &[Value]) -> Result<u32> {
        let code = self.encode(concrete)?;
        self.index_of(code).ok_or_else(|| {
            AbstractionError::State(format!(
                "the state abstracts to {}, which is not a valid abstract state: {}",
                self.state_name(code),
                self.why_invalid(code).unwrap_or_default()
            ))
        })
    }

    /// The canonical name of a bit-vector: the set of its true predicates, `{a,b}` (`{}` when
    /// none is true).
    pub fn state_name(&self, code: u64) -> String {
        let names: Vec<&str> = self
            .predicates
            .iter()
            .enumerate()
            .filter(|(i, _)| code >> i & 1 == 1)
            .map(|(_, p)| p.name.as_str())
            .collect();
        format!("{{{}}}", names.join(","))
    }

    /// Parse a canonical name `{a,b}` (spaces allowed) back to its bit-vector.
    pub fn parse_state_name(&self, name: &str) -> Result<u64> {
        let inner = name
            .trim()
            .strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .ok_or_else(|| {
                AbstractionError::State(format!(
                    "state name `{name}`: with an abstraction, named states are sets of true predicates like `{{a,b}}`"
                ))
            })?;
        let mut code = 0u64;
        for part in inner.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let i = self
                .predicates
                .iter()
                .position(|p| p.name == part)
                .ok_or_else(|| {
                    AbstractionError::State(format!(
                        "state name `{name}`: unknown predicate `{part}`"
                    ))
                })?;
            code |= 1u64 << i;
        }
        Ok(code)
    }

    /// The spec's `[labels]` names, in spec order.
    pub fn label_names(&self) -> Vec<&str> {
        self.labels.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The valid states (by index) where a label holds: a `[labels]` entry or a predicate name.
    pub fn label_states(&self, name: &str) -> Option<FixedBitSet> {
        let test: Box<dyn Fn(u64) -> bool + '_> =
            if let Some((_, e)) = self.labels.iter().find(|(n, _)| n == name) {
                Box::new(move |c| e.eval(c, 0))
            } else {
                let i = self.predicates.iter().position(|p| p.name == name)?;
                Box::new(move |c| c >> i & 1 == 1)
            };
        let mut set = FixedBitSet::with_capacity(self.states.len());
        for (i, &c) in self.states.iter().enumerate() {
            if test(c) {
                set.insert(i);
            }
        }
        Some(set)
    }

    /// All labels of the abstract model: the spec's `[labels]` (in spec order), then one per
    /// predicate (true where the predicate holds).
    pub fn labels(&self) -> Vec<(String, FixedBitSet)> {
        self.labels
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.predicates.iter().map(|p| p.name.as_str()))
            .filter_map(|n| self.label_states(n).map(|s| (n.to_string(), s)))
            .collect()
    }

    /// The names of the monotone predicates.
    pub fn monotone(&self) -> Vec<&str> {
        self.predicates
            .iter()
            .enumerate()
            .filter(|(i, _)| self.monotone >> i & 1 == 1)
            .map(|(_, p)| p.name.as_str())
            .collect()
    }
}
