//! The model compiled for exploration: variables laid out in bit-packed words, commands,
//! labels and rewards as compiled expressions, and the initial states.

use crate::ast::{Command, ModelSpan, Update, VarDecl, VarType};
use crate::compile::{
    type_name, ConstValue, DerivedFormula, FormulaCache, Scope, TypedExpr, VarRef,
};
use crate::error::{PrismError, Result};
use crate::eval::{BoolExpr, Cmp, IntExpr, RealExpr};
use crate::model::PrismModel;
use augur_expr::Expr;
use rustc_hash::FxHashMap;

/// A state variable's place in the packed state.
#[derive(Clone, Debug)]
pub(crate) struct VarInfo {
    pub name: String,
    pub is_bool: bool,
    pub lo: i64,
    pub hi: i64,
    pub word: u32,
    pub shift: u32,
    /// Unshifted mask of the field (`2^width - 1`).
    pub mask: u64,
    /// Owning module, `None` for globals.
    pub owner: Option<usize>,
}

/// The value assigned by `x' = e`.
#[derive(Clone, Debug)]
pub(crate) enum AssignedValue {
    Int(IntExpr),
    Bool(BoolExpr),
}

#[derive(Clone, Debug)]
pub(crate) struct CompiledAssignment {
    pub slot: u16,
    pub value: AssignedValue,
}

#[derive(Clone, Debug)]
pub(crate) struct CompiledUpdate {
    pub prob: RealExpr,
    /// The upper bound of an interval update `[prob, upper] : ...`.
    pub upper: Option<RealExpr>,
    pub assigns: Vec<CompiledAssignment>,
}

/// Up to three single-variable tests that a command's guard requires (its leading simple
/// conjuncts), stored contiguously so that most disabled commands are rejected without
/// walking their guard's tree.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prefilter {
    pub len: u8,
    pub tests: [(u16, Cmp, i64); 3],
}

impl Prefilter {
    fn of(guard: &BoolExpr) -> Prefilter {
        let mut p = Prefilter {
            len: 0,
            tests: [(0, Cmp::Eq, 0); 3],
        };
        let conjuncts: &[BoolExpr] = match guard {
            BoolExpr::And(xs) => xs,
            g => std::slice::from_ref(g),
        };
        for c in conjuncts {
            if p.len as usize == p.tests.len() {
                break;
            }
            let t = match c {
                BoolExpr::VarCmp(op, s, k) => (*s, *op, *k),
                BoolExpr::Var(s) => (*s, Cmp::Ne, 0),
                BoolExpr::Not(a) => match **a {
                    BoolExpr::Var(s) => (s, Cmp::Eq, 0),
                    _ => break,
                },
                _ => break,
            };
            p.tests[p.len as usize] = t;
            p.len += 1;
        }
        p
    }

    /// Whether the tests hold in `v` (when false, the guard is false).
    #[inline]
    pub fn passes(&self, v: &[i64]) -> bool {
        self.tests[..self.len as usize]
            .iter()
            .all(|&(s, op, k)| op.holds(&v[s as usize], &k))
    }
}

#[derive(Clone, Debug)]
pub(crate) struct CompiledCommand {
    pub module: usize,
    pub action: Option<u32>,
    pub guard: BoolExpr,
    pub updates: Vec<CompiledUpdate>,
    pub span: ModelSpan,
    /// Global variables written by some update (to detect conflicting synchronised writes).
    pub global_writes: Vec<u16>,
}

/// An action and, for every module whose alphabet contains it, that module's commands.
#[derive(Clone, Debug)]
pub(crate) struct ActionInfo {
    pub name: String,
    pub modules: Vec<Vec<u32>>,
}

/// Which choices a transition-reward item applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ActionMatch {
    Unlabelled,
    Action(u32),
    /// An action no module has: the item never applies.
    Never,
}

#[derive(Clone, Debug)]
pub(crate) struct CompiledReward {
    pub name: Option<String>,
    pub state: Vec<(BoolExpr, RealExpr, ModelSpan)>,
    pub trans: Vec<(ActionMatch, BoolExpr, RealExpr, ModelSpan)>,
}

#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub vars: Vec<VarInfo>,
    pub words: usize,
    pub commands: Vec<CompiledCommand>,
    /// Guard prefilters, by command id.
    pub prefilters: Vec<Prefilter>,
    /// The unlabelled commands filed by the value their guard requires.
    pub unlabelled_index: crate::index::CommandIndex,
    pub actions: Vec<ActionInfo>,
    /// Per action, per module: its commands filed likewise.
    pub action_index: Vec<Vec<crate::index::CommandIndex>>,
    pub labels: Vec<(String, BoolExpr, ModelSpan)>,
    pub rewards: Vec<CompiledReward>,
    pub initial: Vec<Vec<i64>>,
    pub module_names: Vec<String>,
    /// The formulas computed once per state into derived slots, in evaluation order.
    pub derived: Vec<DerivedFormula>,
    /// The length of the value array: the state variables, then two entries per derived slot.
    pub values_len: usize,
}

/// Most initial valuations `init ... endinit` may enumerate.
const MAX_INIT_ENUMERATION: u128 = 1 << 28;

impl Program {
    /// Compiles the model with the constants' values: variables laid out in packed words,
    /// actions numbered, commands, labels and reward structures compiled, initial states
    /// enumerated. Formulas of more than `inline_limit` nodes become derived slots
    /// ([`crate::compile::FormulaCache`]).
    pub(crate) fn compile(
        model: &PrismModel,
        consts: &FxHashMap<String, ConstValue>,
        exact: bool,
        inline_limit: u64,
    ) -> Result<Program> {
        Program::compile_with(model, consts, exact, &[], inline_limit)
    }

    /// [`Program::compile`] for a parametric build: exact constants, and `params` compiled
    /// to [`crate::eval::RealExpr::Param`] leaves.
    pub(crate) fn compile_param(
        model: &PrismModel,
        consts: &FxHashMap<String, ConstValue>,
        params: &[(String, f64)],
        inline_limit: u64,
    ) -> Result<Program> {
        Program::compile_with(model, consts, true, params, inline_limit)
    }

    fn compile_with(
        model: &PrismModel,
        consts: &FxHashMap<String, ConstValue>,
        exact: bool,
        params: &[(String, f64)],
        inline_limit: u64,
    ) -> Result<Program> {
        let ast = &model.ast;
        let no_vars: FxHashMap<String, VarRef> = FxHashMap::default();
        let formulas: FxHashMap<String, Expr> = ast
            .formulas
            .iter()
            .map(|f| (f.name.clone(), f.body.clone()))
            .collect();
        let const_cache = FormulaCache::inline_only();
        let const_scope = Scope {
            consts,
            vars: &no_vars,
            formulas: &formulas,
            cache: &const_cache,
            exact,
            params,
        };

        // Variables: globals, then each module's, bit-packed without straddling words.
        let mut decls: Vec<(&VarDecl, Option<usize>)> =
            ast.globals.iter().map(|v| (v, None)).collect();
        for (m, module) in ast.modules.iter().enumerate() {
            decls.extend(module.vars.iter().map(|v| (v, Some(m))));
        }
        let (vars, inits, words) = layout_variables(model, &const_scope, &decls)?;

        let var_refs: FxHashMap<String, VarRef> = vars
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    v.name.clone(),
                    VarRef {
                        slot: i as u16,
                        is_bool: v.is_bool,
                    },
                )
            })
            .collect();
        let cache = FormulaCache::new(vars.len(), inline_limit);
        let scope = Scope {
            consts,
            vars: &var_refs,
            formulas: &formulas,
            cache: &cache,
            exact,
            params,
        };

        // Actions, in order of first appearance.
        let (action_ids, mut actions) = number_actions(model);
        let (commands, unlabelled) =
            compile_commands(model, &scope, &vars, &action_ids, &mut actions)?;
        let labels = compile_labels(model, &scope)?;
        let rewards = compile_rewards(model, &scope, &action_ids)?;
        let init_predicate = compile_init_predicate(model, &scope, &decls)?;
        let values_len = cache.values_len();
        let derived = cache.into_derived();
        let initial = match init_predicate {
            None => vec![inits],
            Some((pred, span)) => enumerate_initial(&vars, &derived, values_len, &pred)
                .map_err(|m| model.error_at(span, m))?,
        };

        let prefilters: Vec<Prefilter> = commands.iter().map(|c| Prefilter::of(&c.guard)).collect();
        let unlabelled_index = crate::index::CommandIndex::new(&unlabelled, &prefilters);
        let action_index = actions
            .iter()
            .map(|a| {
                a.modules
                    .iter()
                    .map(|cmds| crate::index::CommandIndex::new(cmds, &prefilters))
                    .collect()
            })
            .collect();
        Ok(Program {
            vars,
            words,
            prefilters,
            commands,
            unlabelled_index,
            actions,
            action_index,
            labels,
            rewards,
            initial,
            module_names: ast.modules.iter().map(|m| m.name.clone()).collect(),
            derived,
            values_len,
        })
    }

    /// Computes the derived slots of `v` (the state variables are set; `v` has
    /// [`Program::values_len`] entries).
    #[inline]
    pub(crate) fn fill_derived(&self, v: &mut [i64]) {
        fill_derived(&self.derived, v);
    }

    /// `(x=1, b=true)`
    pub(crate) fn describe(&self, vals: &[i64]) -> String {
        let parts: Vec<String> = self
            .vars
            .iter()
            .zip(vals)
            .map(|(v, x)| {
                if v.is_bool {
                    format!("{}={}", v.name, *x != 0)
                } else {
                    format!("{}={}", v.name, x)
                }
            })
            .collect();
        format!("({})", parts.join(", "))
    }
}

/// Lays the variables out in packed words (in `decls` order, no field straddling two words):
/// their places, their initial values and the number of words per state.
fn layout_variables(
    model: &PrismModel,
    const_scope: &Scope<'_>,
    decls: &[(&VarDecl, Option<usize>)],
) -> Result<(Vec<VarInfo>, Vec<i64>, usize)> {
    if decls.len() > u16::MAX as usize {
        return Err(PrismError::Limit {
            message: format!("{} state variables (at most {})", decls.len(), u16::MAX),
        });
    }
    let mut vars: Vec<VarInfo> = Vec::new();
    let mut inits: Vec<i64> = Vec::new();
    let (mut word, mut bit) = (0u32, 0u32);
    for (decl, owner) in decls {
        let (is_bool, lo, hi, init) = range_and_initial_value(model, const_scope, decl)?;
        let span = (hi as i128 - lo as i128) as u128;
        let width = 128 - span.leading_zeros();
        if width > 64 {
            return Err(model.error_at(decl.span, "variable range too wide (more than 64 bits)"));
        }
        if bit + width > 64 {
            word += 1;
            bit = 0;
        }
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        vars.push(VarInfo {
            name: decl.name.clone(),
            is_bool,
            lo,
            hi,
            word,
            shift: bit,
            mask,
            owner: *owner,
        });
        inits.push(init);
        bit += width;
    }
    let words = if vars.is_empty() {
        1
    } else {
        word as usize + 1
    };
    Ok((vars, inits, words))
}

/// A variable's `(is_bool, lo, hi, initial value)`, its bounds and initial value evaluated as
/// constants and checked.
fn range_and_initial_value(
    model: &PrismModel,
    const_scope: &Scope<'_>,
    decl: &VarDecl,
) -> Result<(bool, i64, i64, i64)> {
    let const_int = |e: &Expr, what: &str| -> Result<i64> {
        match const_scope.compile(e) {
            Ok(TypedExpr::Int(IntExpr::Const(v))) => Ok(v),
            Ok(t) if crate::param::typed_param(&t).is_some() => {
                let i = crate::param::typed_param(&t).unwrap_or(0) as usize;
                let name = &const_scope.params[i].0;
                Err(PrismError::at(
                    &model.file,
                    &model.source,
                    model.locate_ident(decl.span, name),
                    format!(
                        "parameter `{name}` in the {what} of `{}` would change the states; parameters may appear in probabilities and rewards only",
                        decl.name
                    ),
                ))
            }
            Ok(t) if t.as_const().is_some() => Err(model.error_at(
                decl.span,
                format!(
                    "type error: {what} of `{}` must be an int, found {}",
                    decl.name,
                    type_name(t.ty())
                ),
            )),
            Ok(_) => Err(model.error_at(
                decl.span,
                format!("{what} of `{}` must be constant", decl.name),
            )),
            Err(e) => {
                Err(model.compile_error(decl.span, &format!("in {what} of `{}`", decl.name), e))
            }
        }
    };
    Ok(match &decl.kind {
        VarType::Bool => {
            let init = match &decl.init {
                None => 0,
                Some(e) => match const_scope.compile(e) {
                    Ok(TypedExpr::Bool(BoolExpr::Const(b))) => b as i64,
                    Ok(t) if t.as_const().is_some() => {
                        return Err(model.error_at(
                            decl.span,
                            format!(
                                "type error: initial value of `{}` must be a bool, found {}",
                                decl.name,
                                type_name(t.ty())
                            ),
                        ))
                    }
                    Ok(_) => {
                        return Err(model.error_at(
                            decl.span,
                            format!("initial value of `{}` must be constant", decl.name),
                        ))
                    }
                    Err(e) => {
                        return Err(model.compile_error(
                            decl.span,
                            &format!("in the initial value of `{}`", decl.name),
                            e,
                        ))
                    }
                },
            };
            (true, 0, 1, init)
        }
        VarType::Int { lo, hi } => {
            let lo = const_int(lo, "lower bound")?;
            let hi = const_int(hi, "upper bound")?;
            if lo > hi {
                return Err(model.error_at(
                    decl.span,
                    format!("variable `{}` has an empty range [{lo}..{hi}]", decl.name),
                ));
            }
            let init = match &decl.init {
                None => lo,
                Some(e) => const_int(e, "initial value")?,
            };
            if init < lo || init > hi {
                return Err(model.error_at(
                    decl.span,
                    format!(
                        "initial value {init} of `{}` is outside its range [{lo}..{hi}]",
                        decl.name
                    ),
                ));
            }
            (false, lo, hi, init)
        }
    })
}

/// The actions of all modules, numbered in order of first appearance.
fn number_actions(model: &PrismModel) -> (FxHashMap<String, u32>, Vec<ActionInfo>) {
    let mut action_ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut actions: Vec<ActionInfo> = Vec::new();
    for module in &model.ast.modules {
        for c in &module.commands {
            if let Some(a) = &c.action {
                if !action_ids.contains_key(a) {
                    action_ids.insert(a.clone(), actions.len() as u32);
                    actions.push(ActionInfo {
                        name: a.clone(),
                        modules: Vec::new(),
                    });
                }
            }
        }
    }
    (action_ids, actions)
}

/// Compiles every module's commands (numbered in file order); returns them with the ids of
/// the unlabelled ones, and records in `actions` each module's commands of each action.
fn compile_commands(
    model: &PrismModel,
    scope: &Scope<'_>,
    vars: &[VarInfo],
    action_ids: &FxHashMap<String, u32>,
    actions: &mut [ActionInfo],
) -> Result<(Vec<CompiledCommand>, Vec<u32>)> {
    let mut commands = Vec::new();
    let mut unlabelled = Vec::new();
    for (m, module) in model.ast.modules.iter().enumerate() {
        let mut per_action: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut action_order: Vec<u32> = Vec::new();
        for c in &module.commands {
            let guard = scope
                .compile_bool(&c.guard, "guard")
                .map_err(|e| model.compile_error(c.span, "in the guard", e))?;
            let mut updates = Vec::new();
            let mut global_writes: Vec<u16> = Vec::new();
            for u in &c.updates {
                updates.push(compile_update(
                    model,
                    scope,
                    vars,
                    m,
                    c,
                    u,
                    &mut global_writes,
                )?);
            }
            let action = c.action.as_ref().and_then(|a| action_ids.get(a).copied());
            let id = commands.len() as u32;
            match action {
                None => unlabelled.push(id),
                Some(a) => {
                    if !per_action.contains_key(&a) {
                        action_order.push(a);
                    }
                    per_action.entry(a).or_default().push(id);
                }
            }
            commands.push(CompiledCommand {
                module: m,
                action,
                guard,
                updates,
                span: c.span,
                global_writes,
            });
        }
        for a in action_order {
            if let Some(cmds) = per_action.remove(&a) {
                actions[a as usize].modules.push(cmds);
            }
        }
    }
    Ok((commands, unlabelled))
}

/// Compiles one update `p : (x'=e) & ...` of command `c` of module `m`, checking that each
/// variable is the module's own (or global, then added to `global_writes`), assigned once,
/// with a value of its type.
fn compile_update(
    model: &PrismModel,
    scope: &Scope<'_>,
    vars: &[VarInfo],
    m: usize,
    c: &Command,
    u: &Update,
    global_writes: &mut Vec<u16>,
) -> Result<CompiledUpdate> {
    let ast = &model.ast;
    let module = &ast.modules[m];
    let prob = scope
        .compile_real(&u.prob, "probability")
        .map_err(|e| model.compile_error(c.span, "in a probability", e))?;
    let upper = match &u.upper {
        Some(h) => Some(
            scope
                .compile_real(h, "probability")
                .map_err(|e| model.compile_error(c.span, "in a probability", e))?,
        ),
        None => None,
    };
    let mut assigns: Vec<CompiledAssignment> = Vec::new();
    for a in &u.assignments {
        let Some(r) = scope.vars.get(&a.var) else {
            return Err(PrismError::at(
                &model.file,
                &model.source,
                model.locate_ident(c.span, &a.var),
                format!("update of `{}`, which is not a variable", a.var),
            ));
        };
        let info = &vars[r.slot as usize];
        if let Some(owner) = info.owner {
            if owner != m {
                return Err(PrismError::at(
                    &model.file,
                    &model.source,
                    model.locate_ident(c.span, &a.var),
                    format!(
                        "module `{}` updates `{}`, a variable of module `{}`",
                        module.name, a.var, ast.modules[owner].name
                    ),
                ));
            }
        } else if !global_writes.contains(&r.slot) {
            global_writes.push(r.slot);
        }
        if assigns.iter().any(|x| x.slot == r.slot) {
            return Err(PrismError::at(
                &model.file,
                &model.source,
                model.locate_ident(c.span, &a.var),
                format!("`{}` is updated twice in the same update", a.var),
            ));
        }
        let t = scope.compile(&a.value).map_err(|e| {
            model.compile_error(c.span, &format!("in the update of `{}`", a.var), e)
        })?;
        let value = match (info.is_bool, t) {
            (true, TypedExpr::Bool(b)) => AssignedValue::Bool(b),
            (false, TypedExpr::Int(i)) => AssignedValue::Int(i),
            (_, t) => {
                return Err(PrismError::at(
                    &model.file,
                    &model.source,
                    model.locate_ident(c.span, &a.var),
                    format!(
                        "type error: `{}` is {} but is assigned a value of type {}",
                        a.var,
                        if info.is_bool { "bool" } else { "int" },
                        type_name(t.ty())
                    ),
                ))
            }
        };
        assigns.push(CompiledAssignment {
            slot: r.slot,
            value,
        });
    }
    Ok(CompiledUpdate {
        prob,
        upper,
        assigns,
    })
}

/// Compiles the labels' expressions.
fn compile_labels(
    model: &PrismModel,
    scope: &Scope<'_>,
) -> Result<Vec<(String, BoolExpr, ModelSpan)>> {
    let mut labels = Vec::new();
    for l in &model.ast.labels {
        let b = scope
            .compile_bool(&l.body, "a label")
            .map_err(|e| model.compile_error(l.span, &format!("in label \"{}\"", l.name), e))?;
        labels.push((l.name.clone(), b, l.span));
    }
    Ok(labels)
}

/// Compiles the reward structures, splitting state and transition rewards.
fn compile_rewards(
    model: &PrismModel,
    scope: &Scope<'_>,
    action_ids: &FxHashMap<String, u32>,
) -> Result<Vec<CompiledReward>> {
    let mut rewards = Vec::new();
    for r in &model.ast.rewards {
        let mut state = Vec::new();
        let mut trans = Vec::new();
        for item in &r.items {
            let g = scope
                .compile_bool(&item.guard, "a reward guard")
                .map_err(|e| model.compile_error(item.span, "in a reward guard", e))?;
            let v = scope
                .compile_real(&item.value, "a reward")
                .map_err(|e| model.compile_error(item.span, "in a reward", e))?;
            match &item.action {
                None => state.push((g, v, item.span)),
                Some(None) => trans.push((ActionMatch::Unlabelled, g, v, item.span)),
                Some(Some(a)) => {
                    let m = action_ids
                        .get(a)
                        .map_or(ActionMatch::Never, |&id| ActionMatch::Action(id));
                    trans.push((m, g, v, item.span));
                }
            }
        }
        rewards.push(CompiledReward {
            name: r.name.clone(),
            state,
            trans,
        });
    }
    Ok(rewards)
}

/// The compiled `init ... endinit` predicate and its place, if the model has one (then no
/// variable may have its own initial value).
fn compile_init_predicate(
    model: &PrismModel,
    scope: &Scope<'_>,
    decls: &[(&VarDecl, Option<usize>)],
) -> Result<Option<(BoolExpr, ModelSpan)>> {
    let Some((e, span)) = &model.ast.init else {
        return Ok(None);
    };
    if let Some(d) = decls.iter().find(|(d, _)| d.init.is_some()) {
        return Err(model.error_at(
            d.0.span,
            format!(
                "variable `{}` has an initial value, which is not allowed with `init ... endinit`",
                d.0.name
            ),
        ));
    }
    let pred = scope
        .compile_bool(e, "the initial-states predicate")
        .map_err(|err| model.compile_error(*span, "in init ... endinit", err))?;
    Ok(Some((pred, *span)))
}

/// Computes the derived slots of `v` in order: each value, or the code of the error its
/// evaluation met (raised only where the slot is read; see [`crate::eval`]).
pub(crate) fn fill_derived(derived: &[DerivedFormula], v: &mut [i64]) {
    for d in derived {
        let r = match &d.value {
            TypedExpr::Int(e) => e.eval(v),
            TypedExpr::Real(e) => e.eval(v).map(|x| x.to_bits() as i64),
            TypedExpr::Bool(e) => e.eval(v).map(i64::from),
        };
        let s = d.slot as usize;
        (v[s], v[s + 1]) = match r {
            Ok(x) => (x, 0),
            Err(e) => (0, e.code()),
        };
    }
}

/// All valuations in the variables' ranges satisfying `pred`, in lexicographic order
/// (the first variable varying slowest).
fn enumerate_initial(
    vars: &[VarInfo],
    derived: &[DerivedFormula],
    values_len: usize,
    pred: &BoolExpr,
) -> std::result::Result<Vec<Vec<i64>>, String> {
    let mut total: u128 = 1;
    for v in vars {
        total = total.saturating_mul((v.hi as i128 - v.lo as i128 + 1) as u128);
    }
    if total > MAX_INIT_ENUMERATION {
        return Err(format!(
            "init ... endinit ranges over {total} valuations (at most {MAX_INIT_ENUMERATION} are enumerated)"
        ));
    }
    let mut out = Vec::new();
    let mut cur: Vec<i64> = vars.iter().map(|v| v.lo).collect();
    cur.resize(values_len.max(vars.len()), 0);
    loop {
        fill_derived(derived, &mut cur);
        match pred.eval(&cur) {
            Ok(true) => out.push(cur[..vars.len()].to_vec()),
            Ok(false) => {}
            Err(e) => return Err(format!("in init ... endinit: {e}")),
        }
        // Odometer, last variable fastest.
        let mut i = vars.len();
        loop {
            if i == 0 {
                if out.is_empty() {
                    return Err("init ... endinit: no valuation satisfies the predicate".into());
                }
                return Ok(out);
            }
            i -= 1;
            if cur[i] < vars[i].hi {
                cur[i] += 1;
                break;
            }
            cur[i] = vars[i].lo;
        }
    }
}
