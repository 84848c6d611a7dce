//! A parsed and statically checked PRISM model, constant evaluation, and the helpers that let
//! properties use the model's constants, formulas and labels.

use crate::ast::{ModelAst, ModelSpan};
use crate::compile::{
    type_name, CompileError, ConstValue, DerivedFormula, FormulaCache, Scope, TypedExpr, VarRef,
    DEFAULT_INLINE_LIMIT,
};
use crate::error::{PrismError, Result};
use augur_expr::{ConstDecl, Expr, Type, Value};
use num_rational::BigRational;
use rustc_hash::FxHashMap;

/// A PRISM model (DTMC): the syntax tree plus the source text, for located errors.
///
/// Made by [`crate::parse_model`]; built into a [`augur_dtmc::Dtmc`] by [`PrismModel::build`].
#[derive(Clone, Debug)]
pub struct PrismModel {
    pub(crate) ast: ModelAst,
    pub(crate) file: String,
    pub(crate) source: String,
    /// The number of nodes of each formula's expansion (saturating).
    pub(crate) formula_sizes: FxHashMap<String, u64>,
}

/// The most nodes that model formulas, written out, may add to one expression of a property
/// ([`PrismModel::expand_formulas`]).
pub const MAX_PROPERTY_EXPANSION: u64 = 1 << 20;

/// Constants given from outside the model (`--const`): their values, and the exact rationals
/// of those written as fractions or decimals (exact mode keeps `1/3`, not its double).
type GivenConstants<'a> = (&'a [(String, Value)], &'a [(String, BigRational)]);

impl PrismModel {
    /// The syntax tree.
    pub fn ast(&self) -> &ModelAst {
        &self.ast
    }

    /// The file name given to the parser.
    pub fn file_name(&self) -> &str {
        &self.file
    }

    /// The model's constant declarations, in file order.
    pub fn constants(&self) -> Vec<ConstDecl> {
        self.ast.constants.iter().map(|c| c.decl.clone()).collect()
    }

    /// Names of the constants that have no value in the file (they must be given).
    pub fn undefined_constants(&self) -> Vec<String> {
        self.ast
            .constants
            .iter()
            .filter(|c| c.decl.value.is_none())
            .map(|c| c.decl.name.clone())
            .collect()
    }

    /// The formulas `(name, body)`, in file order (bodies as written).
    pub fn formulas(&self) -> Vec<(String, Expr)> {
        self.ast
            .formulas
            .iter()
            .map(|f| (f.name.clone(), f.body.clone()))
            .collect()
    }

    /// The labels `(name, expression)` defined in the file, in file order.
    pub fn labels(&self) -> Vec<(String, Expr)> {
        self.ast
            .labels
            .iter()
            .map(|l| (l.name.clone(), l.body.clone()))
            .collect()
    }

    /// Names of the reward structures (`None` for unnamed ones), in file order.
    pub fn reward_names(&self) -> Vec<Option<String>> {
        self.ast.rewards.iter().map(|r| r.name.clone()).collect()
    }

    /// Names and types of the state variables, in valuation order (globals, then each
    /// module's variables).
    pub fn variables(&self) -> Vec<(String, Type)> {
        self.ast
            .globals
            .iter()
            .chain(self.ast.modules.iter().flat_map(|m| m.vars.iter()))
            .map(|v| {
                let ty = match v.kind {
                    crate::ast::VarType::Bool => Type::Bool,
                    crate::ast::VarType::Int { .. } => Type::Int,
                };
                (v.name.clone(), ty)
            })
            .collect()
    }

    /// The declared ranges `(name, lo, hi)` of the integer state variables whose bounds
    /// evaluate with the constants' values `consts` (`x : [0..N]`), in valuation order.
    pub fn variable_ranges(&self, consts: &[(String, Value)]) -> Vec<(String, i64, i64)> {
        let env = |n: &str| consts.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        self.ast
            .globals
            .iter()
            .chain(self.ast.modules.iter().flat_map(|m| m.vars.iter()))
            .filter_map(|v| match &v.kind {
                crate::ast::VarType::Int { lo, hi } => Some((
                    v.name.clone(),
                    lo.eval_i64(env).ok()?,
                    hi.eval_i64(env).ok()?,
                )),
                crate::ast::VarType::Bool => None,
            })
            .collect()
    }

    /// Replaces every formula name in `e` by its (recursively expanded) body, so that a
    /// property can use the model's formulas. Names that are not formulas are kept. A formula
    /// defined in terms of itself is left unexpanded at the point of the cycle (building the
    /// model reports that cycle as an error). So is a formula whose expansion would take the
    /// formulas written out in `e` beyond [`MAX_PROPERTY_EXPANSION`] nodes (thirty formulas
    /// `f{i} = f{i-1} + f{i-1}` make 2^30): [`PrismModel::unexpanded_formula_message`] says
    /// why to the user whose property reads it.
    pub fn expand_formulas(&self, e: &Expr) -> Expr {
        let map: FxHashMap<&str, &Expr> = self
            .ast
            .formulas
            .iter()
            .map(|f| (f.name.as_str(), &f.body))
            .collect();
        // Each formula is expanded once (the parser bounds the expansions' depth).
        struct Expander<'m> {
            map: FxHashMap<&'m str, &'m Expr>,
            sizes: &'m FxHashMap<String, u64>,
            done: std::cell::RefCell<FxHashMap<String, Expr>>,
            active: std::cell::RefCell<Vec<String>>,
            /// Nodes written out into `e` so far.
            written: std::cell::Cell<u64>,
        }
        impl Expander<'_> {
            fn expand(&self, e: &Expr) -> Expr {
                e.substitute(|n| {
                    let body = self.map.get(n)?;
                    if self.active.borrow().is_empty() {
                        // A formula named in `e` itself: its expansion must fit the budget (those
                        // it uses are part of it).
                        let size = self.sizes.get(n).copied().unwrap_or(u64::MAX);
                        let total = self.written.get().saturating_add(size);
                        if total > MAX_PROPERTY_EXPANSION {
                            return None;
                        }
                        self.written.set(total);
                    }
                    if let Some(x) = self.done.borrow().get(n) {
                        return Some(x.clone());
                    }
                    if self.active.borrow().iter().any(|s| s == n) {
                        return None;
                    }
                    self.active.borrow_mut().push(n.to_string());
                    let x = self.expand(body);
                    self.active.borrow_mut().pop();
                    self.done.borrow_mut().insert(n.to_string(), x.clone());
                    Some(x)
                })
            }
        }
        Expander {
            map,
            sizes: &self.formula_sizes,
            done: Default::default(),
            active: Default::default(),
            written: Default::default(),
        }
        .expand(e)
    }

    /// Why a formula name is left in an expression by [`PrismModel::expand_formulas`]: for a
    /// formula of the model, the message for a property that reads it (too large to write out);
    /// `None` for other names.
    pub fn unexpanded_formula_message(&self, name: &str) -> Option<String> {
        self.ast.formulas.iter().find(|f| f.name == name)?;
        Some(format!(
            "formula `{name}` is too large to use in a property (written out, the formulas here \
             have more than {MAX_PROPERTY_EXPANSION} operators); use it through a label of the \
             model, which is computed once per state: `label \"{name}_ok\" = {name} ...;`"
        ))
    }

    /// The type of every formula of the model that compiles with the constants' values
    /// `consts` (each compiled once, in one scope), in declaration order.
    pub fn formula_types(&self, consts: &[(String, Value)]) -> Vec<(String, Type)> {
        let names: Vec<&str> = self.ast.formulas.iter().map(|f| f.name.as_str()).collect();
        let (compiled, _, _) = self.compile_formulas(&names, consts, &self.variables());
        names
            .iter()
            .zip(compiled)
            .filter_map(|(n, t)| Some((n.to_string(), t.ok()?.ty())))
            .collect()
    }

    /// The type of formula `name` (`None` when the model has no such formula), compiled with
    /// the constants' values `consts`; an error is the compiler's message.
    pub fn formula_type(
        &self,
        name: &str,
        consts: &[(String, Value)],
    ) -> Option<std::result::Result<Type, String>> {
        let vars = self.variables();
        Some(
            self.compile_formula(name, consts, &vars)?
                .map(|(t, _, _)| t.ty()),
        )
    }

    /// The value of formula `name` in every state of a chain built from this model with the
    /// constants' values `consts`, whose states have the valuations `valuations` (`None` when
    /// the model has no such formula). The formula is compiled as the build compiles it: its
    /// large parts become derived slots, computed once per state, so a formula too large to
    /// write out in a property ([`PrismModel::expand_formulas`]) is evaluated in time linear
    /// in its definitions. An error (a variable the valuations lack, a value that does not
    /// evaluate in some state) is a message naming the formula.
    pub fn formula_values(
        &self,
        name: &str,
        consts: &[(String, Value)],
        valuations: &augur_dtmc::Valuations,
    ) -> Option<std::result::Result<Vec<Value>, String>> {
        let vars: Vec<(String, Type)> = valuations
            .names
            .iter()
            .cloned()
            .zip(valuations.types.iter().copied())
            .collect();
        let (t, derived, len) = match self.compile_formula(name, consts, &vars)? {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        let mut v = vec![0i64; len];
        let mut out = Vec::with_capacity(valuations.num_states());
        for s in 0..valuations.num_states() {
            for (i, slot) in v.iter_mut().enumerate().take(vars.len()) {
                *slot = match valuations.get(s, i) {
                    Some(Value::Int(x)) => x,
                    Some(Value::Bool(b)) => i64::from(b),
                    _ => 0,
                };
            }
            crate::program::fill_derived(&derived, &mut v);
            let value = match &t {
                TypedExpr::Int(e) => e.eval(&v).map(Value::Int),
                TypedExpr::Real(e) => e.eval(&v).map(Value::Double),
                TypedExpr::Bool(e) => e.eval(&v).map(Value::Bool),
            };
            match value {
                Ok(x) => out.push(x),
                Err(e) => {
                    return Some(Err(format!(
                        "formula `{name}` cannot be evaluated in state {s}: {e}"
                    )))
                }
            }
        }
        Some(Ok(out))
    }

    /// Compiles each formula of `names` over the variables `vars` (slot `i` is `vars[i]`) in
    /// one scope, so a formula the others read is compiled once, with derived slots after the
    /// variables: each result (the typed tree, or the compiler's message naming the formula),
    /// the derived formulas and the value array's length.
    #[allow(clippy::type_complexity)]
    fn compile_formulas(
        &self,
        names: &[&str],
        consts: &[(String, Value)],
        vars: &[(String, Type)],
    ) -> (
        Vec<std::result::Result<TypedExpr, String>>,
        Vec<DerivedFormula>,
        usize,
    ) {
        if vars.len() >= u16::MAX as usize / 2 {
            let why = |name: &&str| {
                Err(format!(
                    "formula `{name}`: the model has too many variables to evaluate it in a property"
                ))
            };
            return (names.iter().map(why).collect(), Vec::new(), vars.len());
        }
        let consts: FxHashMap<String, ConstValue> = consts
            .iter()
            .map(|(n, v)| (n.clone(), ConstValue::from_value(v)))
            .collect();
        let var_refs: FxHashMap<String, VarRef> = vars
            .iter()
            .enumerate()
            .map(|(i, (n, t))| {
                let r = VarRef {
                    slot: i as u16,
                    is_bool: *t == Type::Bool,
                };
                (n.clone(), r)
            })
            .collect();
        let formulas: FxHashMap<String, Expr> = self
            .ast
            .formulas
            .iter()
            .map(|f| (f.name.clone(), f.body.clone()))
            .collect();
        let cache = FormulaCache::new(vars.len(), DEFAULT_INLINE_LIMIT);
        let scope = Scope {
            consts: &consts,
            vars: &var_refs,
            formulas: &formulas,
            cache: &cache,
            exact: false,
            params: &[],
        };
        let compiled = names
            .iter()
            .map(|name| {
                scope
                    .compile(&Expr::Ident(name.to_string()))
                    .map_err(|e| format!("formula `{name}`: {}", e.message))
            })
            .collect();
        let len = cache.values_len();
        (compiled, cache.into_derived(), len)
    }

    /// [`PrismModel::compile_formulas`] for one formula (`None`: the model has no such
    /// formula).
    #[allow(clippy::type_complexity)]
    fn compile_formula(
        &self,
        name: &str,
        consts: &[(String, Value)],
        vars: &[(String, Type)],
    ) -> Option<std::result::Result<(TypedExpr, Vec<DerivedFormula>, usize), String>> {
        self.ast.formulas.iter().find(|f| f.name == name)?;
        let (mut compiled, derived, len) = self.compile_formulas(&[name], consts, vars);
        Some(compiled.pop()?.map(|t| (t, derived, len)))
    }

    /// Values of all the model's constants, in declaration order, given values for the
    /// undefined ones (`overrides` may name other constants too: it wins over the file, and
    /// names the model does not declare are ignored, since they may be meant for a properties
    /// file). Fails naming every undefined constant without a value.
    pub fn constant_values(&self, overrides: &[(String, Value)]) -> Result<Vec<(String, Value)>> {
        Ok(self
            .eval_constants(overrides, &[], false)?
            .into_iter()
            .map(|(n, v)| (n, v.to_value()))
            .collect())
    }

    /// Byte offset of the identifier `ident` inside `span` (whole word), else the span start.
    pub(crate) fn locate_ident(&self, span: ModelSpan, ident: &str) -> usize {
        let text = self.source.get(span.start..span.end).unwrap_or("");
        let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut from = 0;
        while let Some(i) = text[from..].find(ident) {
            let at = from + i;
            let before_ok = text[..at].chars().next_back().is_none_or(|c| !is_id(c));
            let after_ok = text[at + ident.len()..]
                .chars()
                .next()
                .is_none_or(|c| !is_id(c));
            if before_ok && after_ok {
                return span.start + at;
            }
            from = at + ident.len().max(1);
            if from >= text.len() {
                break;
            }
        }
        span.start
    }

    /// A located error inside `span` (at the identifier the compile error names, if any).
    pub(crate) fn compile_error(&self, span: ModelSpan, what: &str, e: CompileError) -> PrismError {
        let offset = match &e.ident {
            Some(id) => self.locate_ident(span, id),
            None => span.start,
        };
        PrismError::at(
            &self.file,
            &self.source,
            offset,
            format!("{what}: {}", e.message),
        )
    }

    /// The location of the start of `span` (for errors that keep their own message).
    pub(crate) fn location_of(&self, span: ModelSpan) -> Option<Box<augur_source::Location>> {
        match self.error_at(span, "") {
            PrismError::Located { location, .. } => Some(Box::new(location)),
            _ => None,
        }
    }

    /// The span of a constant's name in its declaration, to point a caret at the name.
    fn const_name_span(&self, c: &crate::ast::ConstDef) -> ModelSpan {
        let start = self.locate_ident(c.span, &c.decl.name);
        ModelSpan { start, ..c.span }
    }

    /// A located error at the start of `span`.
    pub(crate) fn error_at(&self, span: ModelSpan, message: impl Into<String>) -> PrismError {
        PrismError::at(&self.file, &self.source, span.start, message)
    }

    /// [`PrismModel::eval_constants`] for a parametric build (exact; `overrides` include the
    /// parameters at their reference values): a constant defined from a parameter is refused
    /// (its value would be folded at the reference point), located at its name.
    pub(crate) fn eval_constants_param(
        &self,
        overrides: &[(String, Value)],
        exact_overrides: &[(String, BigRational)],
        params: &[(String, f64)],
    ) -> Result<Vec<(String, ConstValue)>> {
        for c in &self.ast.constants {
            let Some(e) = &c.decl.value else { continue };
            if let Some(p) = e
                .idents()
                .into_iter()
                .find(|i| params.iter().any(|(n, _)| n == i))
            {
                return Err(self.error_at(
                    self.const_name_span(c),
                    format!(
                        "constant `{}` is defined from parameter `{p}`: a parametric model reads parameters in probabilities and rewards (write `formula {} = ...;` instead)",
                        c.decl.name, c.decl.name
                    ),
                ));
            }
        }
        self.eval_constants(overrides, exact_overrides, true)
    }

    /// Evaluates every constant (in dependency order), in exact arithmetic too when `exact`.
    pub(crate) fn eval_constants(
        &self,
        overrides: &[(String, Value)],
        exact_overrides: &[(String, BigRational)],
        exact: bool,
    ) -> Result<Vec<(String, ConstValue)>> {
        let consts = &self.ast.constants;
        let missing: Vec<&crate::ast::ConstDef> = consts
            .iter()
            .filter(|c| c.decl.value.is_none() && !overrides.iter().any(|(n, _)| *n == c.decl.name))
            .collect();
        if let Some(first) = missing.first() {
            return Err(PrismError::MissingConstants {
                names: missing.iter().map(|c| c.decl.name.clone()).collect(),
                location: self.location_of(self.const_name_span(first)),
            });
        }
        let index: FxHashMap<&str, usize> = consts
            .iter()
            .enumerate()
            .map(|(i, c)| (c.decl.name.as_str(), i))
            .collect();
        let mut state = vec![0u8; consts.len()]; // 0 = todo, 1 = in progress, 2 = done
        let mut values: FxHashMap<String, ConstValue> = FxHashMap::default();
        let mut order = Vec::with_capacity(consts.len());
        for i in 0..consts.len() {
            self.visit_const(
                i,
                &index,
                &mut state,
                &mut values,
                &mut order,
                (overrides, exact_overrides),
                exact,
            )?;
        }
        // Declaration order for the caller.
        order.sort_unstable();
        Ok(order
            .into_iter()
            .map(|i: usize| {
                let name = consts[i].decl.name.clone();
                let v = values.get(&name).cloned().unwrap_or(ConstValue::Int(0));
                (name, v)
            })
            .collect())
    }

    #[allow(clippy::too_many_arguments)]
    fn visit_const(
        &self,
        i: usize,
        index: &FxHashMap<&str, usize>,
        state: &mut [u8],
        values: &mut FxHashMap<String, ConstValue>,
        order: &mut Vec<usize>,
        given: GivenConstants<'_>,
        exact: bool,
    ) -> Result<()> {
        let (overrides, exact_overrides) = given;
        let c = &self.ast.constants[i];
        match state[i] {
            2 => return Ok(()),
            1 => {
                return Err(self.error_at(
                    c.span,
                    format!("constant `{}` is defined in terms of itself", c.decl.name),
                ))
            }
            _ => {}
        }
        state[i] = 1;
        let declared = c.decl.ty;
        let value = if let Some((_, v)) = overrides.iter().find(|(n, _)| *n == c.decl.name) {
            let mut given = ConstValue::from_value(v);
            // The rational as written (`1/3`), not the decimal of its `f64`.
            if let (ConstValue::Real(_, q), Some((_, exact_q))) = (
                &mut given,
                exact_overrides.iter().find(|(n, _)| *n == c.decl.name),
            ) {
                *q = Some(exact_q.clone());
            }
            convert(given, declared).ok_or_else(|| PrismError::BadConstant {
                message: format!(
                    "--const {}={}: the model declares `{}` as {}",
                    c.decl.name,
                    display_value(v),
                    c.decl.name,
                    type_name(declared)
                ),
            })?
        } else if let Some(e) = &c.decl.value {
            for d in &e.idents() {
                if let Some(&j) = index.get(d.as_str()) {
                    self.visit_const(j, index, state, values, order, given, exact)?;
                }
            }
            let empty_vars = FxHashMap::default();
            let empty_formulas = FxHashMap::default();
            let cache = FormulaCache::inline_only();
            let scope = Scope {
                consts: values,
                vars: &empty_vars,
                formulas: &empty_formulas,
                cache: &cache,
                exact,
                params: &[],
            };
            let what = format!("in the definition of constant `{}`", c.decl.name);
            let t = scope.compile(e).map_err(|err| {
                let err = match &err.ident {
                    Some(id) if !index.contains_key(id.as_str()) && self.is_non_constant(id) => {
                        CompileError {
                            message: format!("`{id}` is not a constant"),
                            ident: err.ident.clone(),
                        }
                    }
                    _ => err,
                };
                self.compile_error(c.span, &what, err)
            })?;
            let mut v = t.as_const().ok_or_else(|| {
                self.error_at(c.span, format!("{what}: the value is not constant"))
            })?;
            if let ConstValue::Real(_, q @ None) = &mut v {
                if exact {
                    *q = self.exact_constant(e, values, c, &what)?;
                }
            }
            let vt = v.ty();
            convert(v, declared).ok_or_else(|| {
                self.error_at(
                    c.span,
                    format!(
                        "type error: constant `{}` is declared {} but its value is {}",
                        c.decl.name,
                        type_name(declared),
                        type_name(vt)
                    ),
                )
            })?
        } else {
            return Err(PrismError::MissingConstants {
                names: vec![c.decl.name.clone()],
                location: self.location_of(self.const_name_span(c)),
            });
        };
        values.insert(c.decl.name.clone(), value);
        state[i] = 2;
        order.push(i);
        Ok(())
    }

    /// Exact mode: a real constant whose compiled value has no rational (the compiler's
    /// folding gave up) evaluated by [`augur_expr::eval_exact`], within its size budget: the
    /// rational, `None` when it has none (`log`: an error where it is used), or a located
    /// error when it is past the budget (never its rounded double).
    fn exact_constant(
        &self,
        e: &augur_expr::Expr,
        values: &FxHashMap<String, ConstValue>,
        c: &crate::ast::ConstDef,
        what: &str,
    ) -> Result<Option<BigRational>> {
        let env = |name: &str| match values.get(name)? {
            ConstValue::Int(i) => Some(augur_expr::Exact::Num(BigRational::from_integer(
                (*i).into(),
            ))),
            ConstValue::Real(_, q) => q.clone().map(augur_expr::Exact::Num),
            ConstValue::Bool(b) => Some(augur_expr::Exact::Bool(*b)),
        };
        match augur_expr::eval_exact(e, &env) {
            Ok(augur_expr::Exact::Num(q)) => Ok(Some(q)),
            Err(err @ augur_expr::ExprError::RationalTooLarge { .. }) => Err(self.error_at(
                self.const_name_span(c),
                format!("{what}: exact mode: {err}; the default method (--method auto) computes it in double precision"),
            )),
            _ => Ok(None),
        }
    }

    fn is_non_constant(&self, id: &str) -> bool {
        self.ast.formulas.iter().any(|f| f.name == id)
            || self.variables().iter().any(|(n, _)| n == id)
    }
}

/// Converts a constant value to a declared type (int → double allowed).
fn convert(v: ConstValue, ty: Type) -> Option<ConstValue> {
    match (v, ty) {
        (v @ ConstValue::Int(_), Type::Int) => Some(v),
        (ConstValue::Int(i), Type::Double) => Some(ConstValue::Real(
            i as f64,
            Some(num_rational::BigRational::from_integer(i.into())),
        )),
        (v @ ConstValue::Real(..), Type::Double) => Some(v),
        (v @ ConstValue::Bool(_), Type::Bool) => Some(v),
        _ => None,
    }
}

fn display_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Double(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
    }
}
