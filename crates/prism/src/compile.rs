//! Type checking and compilation of [`Expr`] ASTs into the typed trees of [`crate::eval`],
//! resolving variables to slots, substituting formulas and folding constants.
//!
//! Each formula's body is compiled once per scope ([`FormulaCache`]). A formula whose compiled
//! tree is small is copied in place wherever its name appears, as written. A larger one becomes
//! a *derived slot*: its value is computed once per state into the value array, after the state
//! variables, and its uses read that slot (`IntExpr::Slot`, ...). So thirty formulas
//! `f{i} = f{i-1} + f{i-1}` cost a few slots instead of 2^30 nodes.

use crate::eval::{decimal_rational, BoolExpr, IntExpr, RealExpr};
use augur_expr::{BinaryOp, Expr, Func, Type, UnaryOp, Value};
use num_bigint::BigInt;
use num_rational::BigRational;
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};

/// Formulas whose compiled tree has more nodes than this become derived slots (by default):
/// smaller ones are copied in place, so ordinary models compile exactly as when every formula
/// was inlined.
pub const DEFAULT_INLINE_LIMIT: u64 = 48;

/// The most nodes that copies of formulas may add to one compiled expression. Only formulas
/// that cannot be derived slots are copied at full size: real-valued ones in exact mode (see
/// [`FormulaCache`]); beyond this, compiling fails with an error naming the formula.
pub const MAX_INLINED_NODES: u64 = 1 << 20;

/// A formula computed once per state into a derived slot of the value array.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedFormula {
    /// The formula's name.
    pub name: String,
    /// Its slot (the value; the status entry is `slot + 1`, see [`crate::eval`]).
    pub slot: u16,
    /// Its compiled body (reading only state variables and earlier derived slots).
    pub value: TypedExpr,
}

/// The compiled formulas of one scope: each body is compiled once, and a formula whose tree has
/// more than the inline limit of nodes becomes a [`DerivedFormula`] (in the order formulas are
/// first compiled, so a formula comes after the ones it reads).
///
/// Exact mode: a real-valued formula is never a derived slot, since the slot holds an `f64`
/// and exact probabilities need the formula's rational value; it is copied in place, as
/// before, within [`MAX_INLINED_NODES`] per expression (beyond that, a located error names the
/// formula). Integer and boolean formulas are exact in a slot and are derived in both modes.
#[derive(Debug)]
pub struct FormulaCache {
    /// Formulas with more nodes than this become derived slots.
    inline_limit: u64,
    /// The next free slot of the value array (two entries per derived slot).
    next_slot: Cell<usize>,
    /// Each compiled formula as its uses see it (its tree, or a slot leaf), with its size.
    compiled: RefCell<FxHashMap<String, (TypedExpr, u64)>>,
    /// The derived formulas, in evaluation order.
    derived: RefCell<Vec<DerivedFormula>>,
    /// Nodes copied from compiled formulas into the expression being compiled.
    inlined: Cell<u64>,
}

impl FormulaCache {
    /// A cache whose derived slots start at `first_slot` (the number of state variables) and
    /// that derives formulas of more than `inline_limit` nodes.
    pub fn new(first_slot: usize, inline_limit: u64) -> FormulaCache {
        FormulaCache {
            inline_limit,
            next_slot: Cell::new(first_slot),
            compiled: RefCell::default(),
            derived: RefCell::default(),
            inlined: Cell::new(0),
        }
    }

    /// A cache that copies every formula in place (for constant expressions, where a formula
    /// that depends on the state is an error anyway).
    pub fn inline_only() -> FormulaCache {
        FormulaCache::new(0, u64::MAX)
    }

    /// The derived formulas, in evaluation order.
    pub fn into_derived(self) -> Vec<DerivedFormula> {
        self.derived.into_inner()
    }

    /// The length of the value array: state variables and derived slots.
    pub fn values_len(&self) -> usize {
        self.next_slot.get()
    }

    /// Takes `size` more nodes copied from formula `name` into the current expression.
    fn charge(&self, name: &str, size: u64, exact_real: bool) -> CompileResult<()> {
        let total = self.inlined.get().saturating_add(size);
        if total > MAX_INLINED_NODES {
            let why = if exact_real {
                " (exact mode keeps real-valued formulas in place, to compute them exactly)"
            } else {
                ""
            };
            return Err(CompileError::ident(
                format!(
                    "formula `{name}` makes this expression larger than {MAX_INLINED_NODES} \
                     operators{why}"
                ),
                name,
            ));
        }
        self.inlined.set(total);
        Ok(())
    }

    /// A new derived slot for `value` (`None` when the slots of the value array are used up).
    fn derive(&self, name: &str, value: TypedExpr) -> Option<TypedExpr> {
        let slot = self.next_slot.get();
        if slot + 1 > u16::MAX as usize {
            return None;
        }
        self.next_slot.set(slot + 2);
        let slot = slot as u16;
        let leaf = match &value {
            TypedExpr::Int(_) => TypedExpr::Int(IntExpr::Slot(slot)),
            TypedExpr::Real(_) => TypedExpr::Real(RealExpr::Slot(slot)),
            // A conjunction keeps its leading single-variable tests beside the slot (`a & b`
            // with `a` such tests is `a & slot`): used in a larger conjunction they are moved
            // to its front as when the formula is written in place, so a false test still
            // stops the evaluation before a conjunct that would fail (and guard prefilters
            // still see them). The same for a disjunction.
            TypedExpr::Bool(BoolExpr::And(xs)) => {
                TypedExpr::Bool(BoolExpr::And(with_simple_prefix(xs, BoolExpr::Slot(slot))))
            }
            TypedExpr::Bool(BoolExpr::Or(xs)) => {
                TypedExpr::Bool(BoolExpr::Or(with_simple_prefix(xs, BoolExpr::Slot(slot))))
            }
            TypedExpr::Bool(_) => TypedExpr::Bool(BoolExpr::Slot(slot)),
        };
        self.derived.borrow_mut().push(DerivedFormula {
            name: name.to_string(),
            slot,
            value,
        });
        Some(leaf)
    }
}

/// The value of a constant: its `f64`/int/bool value, and for reals the exact rational when
/// known.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// An integer.
    Int(i64),
    /// A real, with its exact value when known.
    Real(f64, Option<BigRational>),
    /// A boolean.
    Bool(bool),
}

impl ConstValue {
    /// The PRISM type.
    pub fn ty(&self) -> Type {
        match self {
            ConstValue::Int(_) => Type::Int,
            ConstValue::Real(..) => Type::Double,
            ConstValue::Bool(_) => Type::Bool,
        }
    }

    /// As a shared [`Value`].
    pub fn to_value(&self) -> Value {
        match self {
            ConstValue::Int(i) => Value::Int(*i),
            ConstValue::Real(f, _) => Value::Double(*f),
            ConstValue::Bool(b) => Value::Bool(*b),
        }
    }

    /// From a shared [`Value`] (a real gets the rational of its shortest decimal form).
    pub fn from_value(v: &Value) -> ConstValue {
        match v {
            Value::Int(i) => ConstValue::Int(*i),
            Value::Double(f) => ConstValue::Real(*f, decimal_rational(*f)),
            Value::Bool(b) => ConstValue::Bool(*b),
        }
    }

    pub(crate) fn to_typed(&self) -> TypedExpr {
        match self {
            ConstValue::Int(i) => TypedExpr::Int(IntExpr::Const(*i)),
            ConstValue::Real(f, q) => TypedExpr::Real(RealExpr::Const(*f, q.clone().map(Box::new))),
            ConstValue::Bool(b) => TypedExpr::Bool(BoolExpr::Const(*b)),
        }
    }
}

/// A compiled expression of one of the three types.
#[derive(Clone, Debug, PartialEq)]
pub enum TypedExpr {
    /// An integer expression.
    Int(IntExpr),
    /// A real expression.
    Real(RealExpr),
    /// A boolean expression.
    Bool(BoolExpr),
}

impl TypedExpr {
    /// The type.
    pub fn ty(&self) -> Type {
        match self {
            TypedExpr::Int(_) => Type::Int,
            TypedExpr::Real(_) => Type::Double,
            TypedExpr::Bool(_) => Type::Bool,
        }
    }

    /// The constant value, if folded to a constant.
    pub fn as_const(&self) -> Option<ConstValue> {
        match self {
            TypedExpr::Int(IntExpr::Const(i)) => Some(ConstValue::Int(*i)),
            TypedExpr::Real(RealExpr::Const(f, q)) => {
                Some(ConstValue::Real(*f, q.as_deref().cloned()))
            }
            TypedExpr::Bool(BoolExpr::Const(b)) => Some(ConstValue::Bool(*b)),
            _ => None,
        }
    }
}

/// A compile error; `ident` names the identifier involved (to locate it in the source).
#[derive(Clone, Debug, PartialEq)]
pub struct CompileError {
    /// What is wrong.
    pub message: String,
    /// The identifier the error is about, if any.
    pub ident: Option<String>,
}

impl CompileError {
    fn new(message: impl Into<String>) -> Self {
        CompileError {
            message: message.into(),
            ident: None,
        }
    }
    fn ident(message: impl Into<String>, ident: &str) -> Self {
        CompileError {
            message: message.into(),
            ident: Some(ident.to_string()),
        }
    }
}

type CompileResult<T> = Result<T, CompileError>;

/// A state variable as seen by the compiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarRef {
    /// Slot in the value array.
    pub slot: u16,
    /// Whether it is boolean (else integer).
    pub is_bool: bool,
}

/// What identifiers mean while compiling.
pub struct Scope<'a> {
    /// Constants with values.
    pub consts: &'a FxHashMap<String, ConstValue>,
    /// State variables (empty for constant expressions).
    pub vars: &'a FxHashMap<String, VarRef>,
    /// Formulas (each body is compiled once, when first used).
    pub formulas: &'a FxHashMap<String, Expr>,
    /// The compiled formulas and derived slots of this scope.
    pub cache: &'a FormulaCache,
    /// Whether to keep exact rational values of real constants.
    pub exact: bool,
    /// The parameters of a parametric build (name, value at the reference point): each
    /// compiles to [`RealExpr::Param`] with its index, before any constant of that name.
    pub params: &'a [(String, f64)],
}

impl Scope<'_> {
    /// Compiles `e`.
    pub fn compile(&self, e: &Expr) -> CompileResult<TypedExpr> {
        let mut expanding = Vec::new();
        self.cache.inlined.set(0);
        self.compile_expr(e, &mut expanding)
    }

    /// The compiled formula `name` with body `body`: from the cache, or compiled now (then
    /// derived into a slot when large).
    fn formula(
        &self,
        name: &str,
        body: &Expr,
        expanding: &mut Vec<String>,
    ) -> CompileResult<TypedExpr> {
        let cache = self.cache;
        if let Some((t, size)) = cache.compiled.borrow().get(name) {
            cache.charge(name, *size, self.exact && t.ty() == Type::Double)?;
            return Ok(t.clone());
        }
        if expanding.iter().any(|s| s == name) {
            return Err(CompileError::ident(
                format!(
                    "formula `{name}` is defined in terms of itself ({} -> {name})",
                    expanding.join(" -> ")
                ),
                name,
            ));
        }
        expanding.push(name.to_string());
        let t = self.compile_expr(body, expanding);
        expanding.pop();
        let mut t = t?;
        let mut size = nodes(&t, MAX_INLINED_NODES);
        // A real in exact mode stays in place (see `FormulaCache`); so does a single variable
        // test, which costs no more than reading a slot.
        let exact_real = self.exact && t.ty() == Type::Double;
        let simple = matches!(&t, TypedExpr::Bool(b) if is_simple_test(b));
        let derivable = !exact_real && !simple && size > 1;
        if size > cache.inline_limit && derivable && t.as_const().is_none() {
            if let Some(leaf) = cache.derive(name, t.clone()) {
                size = nodes(&leaf, MAX_INLINED_NODES);
                t = leaf;
            }
        }
        cache
            .compiled
            .borrow_mut()
            .insert(name.to_string(), (t.clone(), size));
        Ok(t)
    }

    /// Compiles a boolean expression.
    pub fn compile_bool(&self, e: &Expr, what: &str) -> CompileResult<BoolExpr> {
        match self.compile(e)? {
            TypedExpr::Bool(b) => Ok(b),
            t => Err(CompileError::new(format!(
                "{what} must be boolean, found {}",
                type_name(t.ty())
            ))),
        }
    }

    /// Compiles a numeric expression as a real.
    pub fn compile_real(&self, e: &Expr, what: &str) -> CompileResult<RealExpr> {
        let t = self.compile(e)?;
        to_real(t).map_err(|ty| {
            CompileError::new(format!("{what} must be numeric, found {}", type_name(ty)))
        })
    }

    /// Compiles `e`; `expanding` holds the formulas whose bodies are being compiled, outermost
    /// first (a formula met again while its body is compiled is defined in terms of itself).
    fn compile_expr(&self, e: &Expr, expanding: &mut Vec<String>) -> CompileResult<TypedExpr> {
        Ok(match e {
            Expr::Int(i) => TypedExpr::Int(IntExpr::Const(*i)),
            Expr::Double(f) => {
                let q = if self.exact {
                    decimal_rational(*f)
                } else {
                    None
                };
                TypedExpr::Real(RealExpr::Const(*f, q.map(Box::new)))
            }
            // More digits than a double holds: exact mode reads the text.
            Expr::Decimal(f, text) => {
                let q = if self.exact {
                    crate::eval::literal_rational(text)
                } else {
                    None
                };
                TypedExpr::Real(RealExpr::Const(*f, q.map(Box::new)))
            }
            Expr::Bool(b) => TypedExpr::Bool(BoolExpr::Const(*b)),
            Expr::Ident(name) => {
                if let Some(i) = self.params.iter().position(|(p, _)| p == name) {
                    TypedExpr::Real(RealExpr::Param(i as u16, self.params[i].1))
                } else if let Some(v) = self.vars.get(name) {
                    if v.is_bool {
                        TypedExpr::Bool(BoolExpr::Var(v.slot))
                    } else {
                        TypedExpr::Int(IntExpr::Var(v.slot))
                    }
                } else if let Some(c) = self.consts.get(name) {
                    let mut t = c.to_typed();
                    if !self.exact {
                        if let TypedExpr::Real(RealExpr::Const(_, q)) = &mut t {
                            *q = None;
                        }
                    }
                    t
                } else if let Some(body) = self.formulas.get(name) {
                    self.formula(name, body, expanding)?
                } else {
                    return Err(CompileError::ident(
                        format!("unknown identifier `{name}`"),
                        name,
                    ));
                }
            }
            Expr::Unary(op, a) => {
                let a = self.compile_expr(a, expanding)?;
                match (op, a) {
                    (UnaryOp::Neg, TypedExpr::Int(a)) => fold_i(IntExpr::Neg(Box::new(a))),
                    (UnaryOp::Neg, TypedExpr::Real(a)) => self.fold_r(RealExpr::Neg(Box::new(a))),
                    (UnaryOp::Not, TypedExpr::Bool(a)) => fold_b(BoolExpr::Not(Box::new(a))),
                    (UnaryOp::Neg, t) => return Err(type_err("operand of `-`", "numeric", &t)),
                    (UnaryOp::Not, t) => return Err(type_err("operand of `!`", "boolean", &t)),
                }
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (
                    self.compile_expr(a, expanding)?,
                    self.compile_expr(b, expanding)?,
                );
                self.binary(*op, a, b)?
            }
            Expr::Ite(c, a, b) => {
                let c = match self.compile_expr(c, expanding)? {
                    TypedExpr::Bool(c) => c,
                    t => return Err(type_err("condition of `? :`", "boolean", &t)),
                };
                let (a, b) = (
                    self.compile_expr(a, expanding)?,
                    self.compile_expr(b, expanding)?,
                );
                if let Some(k) = c.as_const() {
                    // Fold the condition; the branches keep their own types (unified below).
                    let (x, y) = unify(a, b)?;
                    return Ok(if k { x } else { y });
                }
                let c = Box::new(c);
                match unify(a, b)? {
                    (TypedExpr::Int(a), TypedExpr::Int(b)) => {
                        TypedExpr::Int(IntExpr::Ite(c, Box::new(a), Box::new(b)))
                    }
                    (TypedExpr::Real(a), TypedExpr::Real(b)) => {
                        TypedExpr::Real(RealExpr::Ite(c, Box::new(a), Box::new(b)))
                    }
                    (TypedExpr::Bool(a), TypedExpr::Bool(b)) => {
                        TypedExpr::Bool(BoolExpr::Ite(c, Box::new(a), Box::new(b)))
                    }
                    _ => return Err(CompileError::new("branches of `? :` have different types")),
                }
            }
            Expr::Call(f, args) => {
                let args = args
                    .iter()
                    .map(|a| self.compile_expr(a, expanding))
                    .collect::<CompileResult<Vec<_>>>()?;
                self.call(*f, args)?
            }
        })
    }

    fn binary(&self, op: BinaryOp, a: TypedExpr, b: TypedExpr) -> CompileResult<TypedExpr> {
        use BinaryOp::*;
        Ok(match op {
            Add | Sub | Mul => match (a, b) {
                (TypedExpr::Int(a), TypedExpr::Int(b)) => {
                    let (a, b) = (Box::new(a), Box::new(b));
                    fold_i(match op {
                        Add => IntExpr::Add(a, b),
                        Sub => IntExpr::Sub(a, b),
                        _ => IntExpr::Mul(a, b),
                    })
                }
                (a, b) => {
                    let sym = op.symbol();
                    let a = to_real(a).map_err(|t| type_err_ty(sym, "numeric", t))?;
                    let b = to_real(b).map_err(|t| type_err_ty(sym, "numeric", t))?;
                    let (a, b) = (Box::new(a), Box::new(b));
                    self.fold_r(match op {
                        Add => RealExpr::Add(a, b),
                        Sub => RealExpr::Sub(a, b),
                        _ => RealExpr::Mul(a, b),
                    })
                }
            },
            Div => {
                let a = to_real(a).map_err(|t| type_err_ty("/", "numeric", t))?;
                let b = to_real(b).map_err(|t| type_err_ty("/", "numeric", t))?;
                self.fold_r(RealExpr::Div(Box::new(a), Box::new(b)))
            }
            BinaryOp::Cmp(cmp) => {
                match (a, b) {
                    (TypedExpr::Bool(a), TypedExpr::Bool(b)) if cmp.is_equality() => {
                        let iff = fold_b(BoolExpr::Iff(Box::new(a), Box::new(b)));
                        match (cmp, iff) {
                            (augur_expr::Cmp::Eq, t) => t,
                            (_, TypedExpr::Bool(x)) => fold_b(BoolExpr::Not(Box::new(x))),
                            (_, t) => t,
                        }
                    }
                    (TypedExpr::Int(a), TypedExpr::Int(b)) => match (&a, &b) {
                        (IntExpr::Var(s), IntExpr::Const(k)) => {
                            TypedExpr::Bool(BoolExpr::VarCmp(cmp, *s, *k))
                        }
                        (IntExpr::Const(k), IntExpr::Var(s)) => {
                            TypedExpr::Bool(BoolExpr::VarCmp(cmp.flip(), *s, *k))
                        }
                        _ => fold_b(BoolExpr::CmpI(cmp, Box::new(a), Box::new(b))),
                    },
                    (a, b) => {
                        let sym = op.symbol();
                        let a = to_real(a).map_err(|t| type_err_ty(sym, "numeric", t))?;
                        let b = to_real(b).map_err(|t| type_err_ty(sym, "numeric", t))?;
                        // Exact mode: reals compare as the rationals they are
                        // (`1/3 = 0.333333333333333333333333` is false), constants at once.
                        if self.exact {
                            return Ok(fold_b(BoolExpr::CmpQ(cmp, Box::new(a), Box::new(b))));
                        }
                        fold_b(BoolExpr::CmpR(cmp, Box::new(a), Box::new(b)))
                    }
                }
            }
            And | Or | Implies | Iff => {
                let sym = op.symbol();
                let a = match a {
                    TypedExpr::Bool(a) => a,
                    t => return Err(type_err(&format!("operand of `{sym}`"), "boolean", &t)),
                };
                let b = match b {
                    TypedExpr::Bool(b) => b,
                    t => return Err(type_err(&format!("operand of `{sym}`"), "boolean", &t)),
                };
                match op {
                    And => fold_b(BoolExpr::And(flatten(a, b, true))),
                    Or => fold_b(BoolExpr::Or(flatten(a, b, false))),
                    Implies => fold_b(BoolExpr::Implies(Box::new(a), Box::new(b))),
                    _ => fold_b(BoolExpr::Iff(Box::new(a), Box::new(b))),
                }
            }
        })
    }

    fn call(&self, f: Func, args: Vec<TypedExpr>) -> CompileResult<TypedExpr> {
        let name = f.name();
        let arity = |n: usize| -> CompileResult<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(CompileError::new(format!(
                    "`{name}` takes {n} argument{}, found {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                )))
            }
        };
        Ok(match f {
            Func::Min | Func::Max => {
                if args.is_empty() {
                    return Err(CompileError::new(format!(
                        "`{name}` needs at least one argument"
                    )));
                }
                if args.iter().all(|a| matches!(a, TypedExpr::Int(_))) {
                    let xs = args
                        .into_iter()
                        .filter_map(|a| match a {
                            TypedExpr::Int(i) => Some(i),
                            _ => None,
                        })
                        .collect();
                    fold_i(if f == Func::Min {
                        IntExpr::Min(xs)
                    } else {
                        IntExpr::Max(xs)
                    })
                } else {
                    let xs = args
                        .into_iter()
                        .map(|a| to_real(a).map_err(|t| type_err_ty(name, "numeric", t)))
                        .collect::<CompileResult<Vec<_>>>()?;
                    self.fold_r(if f == Func::Min {
                        RealExpr::Min(xs)
                    } else {
                        RealExpr::Max(xs)
                    })
                }
            }
            Func::Floor | Func::Ceil | Func::Round => {
                arity(1)?;
                let mut args = args;
                let a = args.remove(0);
                if let TypedExpr::Int(i) = a {
                    TypedExpr::Int(i)
                } else {
                    let r = to_real(a).map_err(|t| type_err_ty(name, "numeric", t))?;
                    fold_i(match f {
                        Func::Floor => IntExpr::Floor(Box::new(r)),
                        Func::Ceil => IntExpr::Ceil(Box::new(r)),
                        // PRISM rounds halves up: round(x) = floor(x + 0.5).
                        _ => IntExpr::Floor(Box::new(RealExpr::Add(
                            Box::new(r),
                            Box::new(RealExpr::Const(0.5, None)),
                        ))),
                    })
                }
            }
            Func::Pow => {
                arity(2)?;
                let mut it = args.into_iter();
                let (a, b) = match (it.next(), it.next()) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return Err(CompileError::new("`pow` takes 2 arguments")),
                };
                match (a, b) {
                    (TypedExpr::Int(a), TypedExpr::Int(b)) => {
                        fold_i(IntExpr::Pow(Box::new(a), Box::new(b)))
                    }
                    (a, b) => {
                        let a = to_real(a).map_err(|t| type_err_ty(name, "numeric", t))?;
                        let b = to_real(b).map_err(|t| type_err_ty(name, "numeric", t))?;
                        self.fold_r(RealExpr::Pow(Box::new(a), Box::new(b)))
                    }
                }
            }
            Func::Mod => {
                arity(2)?;
                let mut it = args.into_iter();
                match (it.next(), it.next()) {
                    (Some(TypedExpr::Int(a)), Some(TypedExpr::Int(b))) => {
                        fold_i(IntExpr::Mod(Box::new(a), Box::new(b)))
                    }
                    _ => return Err(CompileError::new("`mod` takes two integer arguments")),
                }
            }
            Func::Log => {
                arity(2)?;
                let mut it = args.into_iter();
                let (a, b) = match (it.next(), it.next()) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return Err(CompileError::new("`log` takes 2 arguments")),
                };
                let a = to_real(a).map_err(|t| type_err_ty(name, "numeric", t))?;
                let b = to_real(b).map_err(|t| type_err_ty(name, "numeric", t))?;
                self.fold_r(RealExpr::Log(Box::new(a), Box::new(b)))
            }
        })
    }

    fn fold_r(&self, e: RealExpr) -> TypedExpr {
        if !r_children_const(&e) {
            return TypedExpr::Real(e);
        }
        match e.eval(&[]) {
            Ok(f) => {
                let q = if self.exact { e.eval_q(&[]).ok() } else { None };
                TypedExpr::Real(RealExpr::Const(f, q.map(Box::new)))
            }
            Err(_) => TypedExpr::Real(e),
        }
    }
}

/// Most single-variable tests kept beside a derived conjunction's or disjunction's slot.
const MAX_KEPT_TESTS: usize = 8;

/// The distinct single-variable tests leading `xs` (at most [`MAX_KEPT_TESTS`]), then `slot`.
fn with_simple_prefix(xs: &[BoolExpr], slot: BoolExpr) -> Vec<BoolExpr> {
    let mut out: Vec<BoolExpr> = Vec::new();
    for x in xs.iter().take_while(|x| is_simple_test(x)) {
        if out.len() == MAX_KEPT_TESTS {
            break;
        }
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out.push(slot);
    out
}

/// Whether a boolean expression is a single variable test (cannot fail, costs one load).
pub(crate) fn is_simple_test(b: &BoolExpr) -> bool {
    match b {
        BoolExpr::VarCmp(..) | BoolExpr::Var(_) | BoolExpr::Const(_) => true,
        BoolExpr::Not(a) => matches!(**a, BoolExpr::Var(_)),
        _ => false,
    }
}

/// Moves single variable tests to the front of a conjunction/disjunction (stable), so that
/// short-circuiting usually decides before any arithmetic. Such tests cannot fail, so the
/// reordering never introduces an evaluation error (it may only avoid one).
fn cheap_first(xs: Vec<BoolExpr>) -> Vec<BoolExpr> {
    let (mut simple, rest): (Vec<BoolExpr>, Vec<BoolExpr>) =
        xs.into_iter().partition(is_simple_test);
    simple.extend(rest);
    simple
}

fn flatten(a: BoolExpr, b: BoolExpr, and: bool) -> Vec<BoolExpr> {
    let mut out = Vec::new();
    for x in [a, b] {
        match x {
            BoolExpr::And(xs) if and => out.extend(xs),
            BoolExpr::Or(xs) if !and => out.extend(xs),
            x => out.push(x),
        }
    }
    out
}

fn unify(a: TypedExpr, b: TypedExpr) -> CompileResult<(TypedExpr, TypedExpr)> {
    Ok(match (a, b) {
        (TypedExpr::Int(a), TypedExpr::Real(b)) => {
            (TypedExpr::Real(int_to_real(a)), TypedExpr::Real(b))
        }
        (TypedExpr::Real(a), TypedExpr::Int(b)) => {
            (TypedExpr::Real(a), TypedExpr::Real(int_to_real(b)))
        }
        (a, b) if a.ty() == b.ty() => (a, b),
        (a, b) => {
            return Err(CompileError::new(format!(
                "branches of `? :` have incompatible types {} and {}",
                type_name(a.ty()),
                type_name(b.ty())
            )))
        }
    })
}

fn int_to_real(i: IntExpr) -> RealExpr {
    match i {
        IntExpr::Const(c) => RealExpr::Const(
            c as f64,
            Some(Box::new(BigRational::from_integer(BigInt::from(c)))),
        ),
        i => RealExpr::FromInt(Box::new(i)),
    }
}

/// Converts a numeric compiled expression to a real one; `Err(type)` for booleans.
pub fn to_real(t: TypedExpr) -> Result<RealExpr, Type> {
    match t {
        TypedExpr::Int(i) => Ok(int_to_real(i)),
        TypedExpr::Real(r) => Ok(r),
        TypedExpr::Bool(_) => Err(Type::Bool),
    }
}

fn fold_i(e: IntExpr) -> TypedExpr {
    let all_const = match &e {
        IntExpr::Const(_) | IntExpr::Var(_) | IntExpr::Slot(_) => false,
        IntExpr::Neg(a) => a.as_const().is_some(),
        IntExpr::Add(a, b)
        | IntExpr::Sub(a, b)
        | IntExpr::Mul(a, b)
        | IntExpr::Pow(a, b)
        | IntExpr::Mod(a, b) => a.as_const().is_some() && b.as_const().is_some(),
        IntExpr::Ite(..) => false,
        IntExpr::Min(xs) | IntExpr::Max(xs) => xs.iter().all(|x| x.as_const().is_some()),
        IntExpr::Floor(r) | IntExpr::Ceil(r) => r.as_const().is_some(),
    };
    if all_const {
        if let Ok(v) = e.eval(&[]) {
            return TypedExpr::Int(IntExpr::Const(v));
        }
    }
    TypedExpr::Int(e)
}

fn r_children_const(e: &RealExpr) -> bool {
    match e {
        RealExpr::Const(..) | RealExpr::Slot(_) | RealExpr::Param(..) => false,
        RealExpr::FromInt(i) => i.as_const().is_some(),
        RealExpr::Neg(a) => a.as_const().is_some(),
        RealExpr::Add(a, b)
        | RealExpr::Sub(a, b)
        | RealExpr::Mul(a, b)
        | RealExpr::Div(a, b)
        | RealExpr::Pow(a, b)
        | RealExpr::Log(a, b) => a.as_const().is_some() && b.as_const().is_some(),
        RealExpr::Ite(..) => false,
        RealExpr::Min(xs) | RealExpr::Max(xs) => xs.iter().all(|x| x.as_const().is_some()),
    }
}

fn fold_b(e: BoolExpr) -> TypedExpr {
    let foldable = match &e {
        BoolExpr::Const(_)
        | BoolExpr::Var(_)
        | BoolExpr::Slot(_)
        | BoolExpr::VarCmp(..)
        | BoolExpr::Ite(..) => false,
        BoolExpr::Not(a) => a.as_const().is_some(),
        BoolExpr::Implies(a, b) | BoolExpr::Iff(a, b) => {
            a.as_const().is_some() && b.as_const().is_some()
        }
        BoolExpr::And(xs) => {
            // false & anything = false; drop `true` operands.
            if xs.iter().any(|x| x.as_const() == Some(false)) {
                return TypedExpr::Bool(BoolExpr::Const(false));
            }
            let rest: Vec<BoolExpr> = match e {
                BoolExpr::And(xs) => xs
                    .into_iter()
                    .filter(|x| x.as_const() != Some(true))
                    .collect(),
                _ => Vec::new(),
            };
            return TypedExpr::Bool(match rest.len() {
                0 => BoolExpr::Const(true),
                1 => rest.into_iter().next().unwrap_or(BoolExpr::Const(true)),
                _ => BoolExpr::And(cheap_first(rest)),
            });
        }
        BoolExpr::Or(xs) => {
            if xs.iter().any(|x| x.as_const() == Some(true)) {
                return TypedExpr::Bool(BoolExpr::Const(true));
            }
            let rest: Vec<BoolExpr> = match e {
                BoolExpr::Or(xs) => xs
                    .into_iter()
                    .filter(|x| x.as_const() != Some(false))
                    .collect(),
                _ => Vec::new(),
            };
            return TypedExpr::Bool(match rest.len() {
                0 => BoolExpr::Const(false),
                1 => rest.into_iter().next().unwrap_or(BoolExpr::Const(false)),
                _ => BoolExpr::Or(cheap_first(rest)),
            });
        }
        BoolExpr::CmpI(_, a, b) => a.as_const().is_some() && b.as_const().is_some(),
        BoolExpr::CmpR(_, a, b) | BoolExpr::CmpQ(_, a, b) => {
            a.as_const().is_some() && b.as_const().is_some()
        }
    };
    if foldable {
        if let Ok(v) = e.eval(&[]) {
            return TypedExpr::Bool(BoolExpr::Const(v));
        }
    }
    TypedExpr::Bool(e)
}

/// The number of nodes of `t`, counted up to a little more than `cap` (then the count stops:
/// the caller only compares it with `cap`).
pub fn nodes(t: &TypedExpr, cap: u64) -> u64 {
    let mut n = 0u64;
    match t {
        TypedExpr::Int(e) => int_nodes(e, &mut n, cap),
        TypedExpr::Real(e) => real_nodes(e, &mut n, cap),
        TypedExpr::Bool(e) => bool_nodes(e, &mut n, cap),
    }
    n
}

fn int_nodes(e: &IntExpr, n: &mut u64, cap: u64) {
    *n += 1;
    if *n > cap {
        return;
    }
    match e {
        IntExpr::Const(_) | IntExpr::Var(_) | IntExpr::Slot(_) => {}
        IntExpr::Neg(a) => int_nodes(a, n, cap),
        IntExpr::Add(a, b)
        | IntExpr::Sub(a, b)
        | IntExpr::Mul(a, b)
        | IntExpr::Pow(a, b)
        | IntExpr::Mod(a, b) => {
            int_nodes(a, n, cap);
            int_nodes(b, n, cap);
        }
        IntExpr::Ite(c, a, b) => {
            bool_nodes(c, n, cap);
            int_nodes(a, n, cap);
            int_nodes(b, n, cap);
        }
        IntExpr::Min(xs) | IntExpr::Max(xs) => xs.iter().for_each(|x| int_nodes(x, n, cap)),
        IntExpr::Floor(r) | IntExpr::Ceil(r) => real_nodes(r, n, cap),
    }
}

fn real_nodes(e: &RealExpr, n: &mut u64, cap: u64) {
    *n += 1;
    if *n > cap {
        return;
    }
    match e {
        RealExpr::Const(..) | RealExpr::Slot(_) | RealExpr::Param(..) => {}
        RealExpr::FromInt(i) => int_nodes(i, n, cap),
        RealExpr::Neg(a) => real_nodes(a, n, cap),
        RealExpr::Add(a, b)
        | RealExpr::Sub(a, b)
        | RealExpr::Mul(a, b)
        | RealExpr::Div(a, b)
        | RealExpr::Pow(a, b)
        | RealExpr::Log(a, b) => {
            real_nodes(a, n, cap);
            real_nodes(b, n, cap);
        }
        RealExpr::Ite(c, a, b) => {
            bool_nodes(c, n, cap);
            real_nodes(a, n, cap);
            real_nodes(b, n, cap);
        }
        RealExpr::Min(xs) | RealExpr::Max(xs) => xs.iter().for_each(|x| real_nodes(x, n, cap)),
    }
}

fn bool_nodes(e: &BoolExpr, n: &mut u64, cap: u64) {
    *n += 1;
    if *n > cap {
        return;
    }
    match e {
        BoolExpr::Const(_) | BoolExpr::Var(_) | BoolExpr::Slot(_) | BoolExpr::VarCmp(..) => {}
        BoolExpr::Not(a) => bool_nodes(a, n, cap),
        BoolExpr::And(xs) | BoolExpr::Or(xs) => xs.iter().for_each(|x| bool_nodes(x, n, cap)),
        BoolExpr::Implies(a, b) | BoolExpr::Iff(a, b) => {
            bool_nodes(a, n, cap);
            bool_nodes(b, n, cap);
        }
        BoolExpr::Ite(c, a, b) => {
            bool_nodes(c, n, cap);
            bool_nodes(a, n, cap);
            bool_nodes(b, n, cap);
        }
        BoolExpr::CmpI(_, a, b) => {
            int_nodes(a, n, cap);
            int_nodes(b, n, cap);
        }
        BoolExpr::CmpR(_, a, b) | BoolExpr::CmpQ(_, a, b) => {
            real_nodes(a, n, cap);
            real_nodes(b, n, cap);
        }
    }
}

/// The PRISM name of a type.
pub fn type_name(t: Type) -> &'static str {
    match t {
        Type::Int => "int",
        Type::Double => "double",
        Type::Bool => "bool",
    }
}

fn type_err(what: &str, expected: &str, found: &TypedExpr) -> CompileError {
    type_err_ty(what, expected, found.ty())
}

fn type_err_ty(what: &str, expected: &str, found: Type) -> CompileError {
    CompileError::new(format!(
        "type error: {what} must be {expected}, found {}",
        type_name(found)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_expr::Cmp;

    fn id(s: &str) -> Box<Expr> {
        Box::new(Expr::Ident(s.into()))
    }
    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    struct Env {
        consts: FxHashMap<String, ConstValue>,
        vars: FxHashMap<String, VarRef>,
        formulas: FxHashMap<String, Expr>,
        cache: FormulaCache,
    }

    fn env() -> Env {
        let mut consts = FxHashMap::default();
        consts.insert("N".into(), ConstValue::Int(4));
        consts.insert("p".into(), ConstValue::Real(0.7, decimal_rational(0.7)));
        let mut vars = FxHashMap::default();
        vars.insert(
            "x".into(),
            VarRef {
                slot: 0,
                is_bool: false,
            },
        );
        vars.insert(
            "b".into(),
            VarRef {
                slot: 1,
                is_bool: true,
            },
        );
        let mut formulas = FxHashMap::default();
        formulas.insert(
            "f".into(),
            bin(
                BinaryOp::Cmp(Cmp::Lt),
                Expr::Ident("x".into()),
                Expr::Ident("N".into()),
            ),
        );
        formulas.insert("loop1".into(), Expr::Ident("loop2".into()));
        formulas.insert("loop2".into(), Expr::Ident("loop1".into()));
        Env {
            consts,
            vars,
            formulas,
            cache: FormulaCache::new(2, DEFAULT_INLINE_LIMIT),
        }
    }

    fn scope(e: &Env, exact: bool) -> Scope<'_> {
        Scope {
            consts: &e.consts,
            vars: &e.vars,
            formulas: &e.formulas,
            cache: &e.cache,
            exact,
            params: &[],
        }
    }

    #[test]
    fn constants_fold_with_exact_values() {
        let e = env();
        let s = scope(&e, true);
        // 1 - p  ->  3/10 exactly, f64 0.30000000000000004
        let t = s
            .compile(&bin(BinaryOp::Sub, Expr::Int(1), Expr::Ident("p".into())))
            .unwrap();
        match t {
            TypedExpr::Real(RealExpr::Const(f, Some(q))) => {
                assert!((f - 0.3).abs() < 1e-15);
                assert_eq!(*q, BigRational::new(3.into(), 10.into()));
            }
            other => panic!("{other:?}"),
        }
        // N*2 is an int constant; N/2 a real.
        assert_eq!(
            s.compile(&bin(BinaryOp::Mul, Expr::Ident("N".into()), Expr::Int(2)))
                .unwrap(),
            TypedExpr::Int(IntExpr::Const(8))
        );
        assert_eq!(
            s.compile(&bin(BinaryOp::Div, Expr::Ident("N".into()), Expr::Int(8)))
                .unwrap()
                .as_const(),
            Some(ConstValue::Real(
                0.5,
                Some(BigRational::new(1.into(), 2.into()))
            ))
        );
    }

    #[test]
    fn formulas_expand_and_cycles_are_reported() {
        let e = env();
        let s = scope(&e, false);
        let g = s.compile_bool(&Expr::Ident("f".into()), "guard").unwrap();
        assert_eq!(g, BoolExpr::VarCmp(Cmp::Lt, 0, 4));
        assert_eq!(g.eval(&[3, 0]), Ok(true));
        let err = s.compile(&Expr::Ident("loop1".into())).unwrap_err();
        assert!(
            err.message.contains("in terms of itself"),
            "{}",
            err.message
        );
    }

    #[test]
    fn type_errors() {
        let e = env();
        let s = scope(&e, false);
        let err = s
            .compile(&bin(BinaryOp::Add, Expr::Ident("b".into()), Expr::Int(1)))
            .unwrap_err();
        assert!(err.message.contains("numeric"), "{}", err.message);
        let err = s
            .compile(&bin(
                BinaryOp::And,
                Expr::Ident("x".into()),
                Expr::Bool(true),
            ))
            .unwrap_err();
        assert!(err.message.contains("boolean"), "{}", err.message);
        let err = s.compile(&Expr::Ident("nope".into())).unwrap_err();
        assert_eq!(err.ident.as_deref(), Some("nope"));
        let err = s
            .compile(&Expr::Ite(
                id("b"),
                Box::new(Expr::Int(1)),
                Box::new(Expr::Bool(true)),
            ))
            .unwrap_err();
        assert!(err.message.contains("incompatible"), "{}", err.message);
    }

    #[test]
    fn boolean_equality_and_mixed_comparisons() {
        let e = env();
        let s = scope(&e, false);
        let t = s
            .compile_bool(
                &bin(
                    BinaryOp::Cmp(Cmp::Eq),
                    Expr::Ident("b".into()),
                    Expr::Bool(false),
                ),
                "g",
            )
            .unwrap();
        assert_eq!(t.eval(&[0, 0]), Ok(true));
        assert_eq!(t.eval(&[0, 1]), Ok(false));
        let t = s
            .compile_bool(
                &bin(
                    BinaryOp::Cmp(Cmp::Gt),
                    Expr::Ident("x".into()),
                    Expr::Ident("p".into()),
                ),
                "g",
            )
            .unwrap();
        assert_eq!(t.eval(&[1, 0]), Ok(true));
        assert_eq!(t.eval(&[0, 0]), Ok(false));
        // 2 < x written with the constant first.
        let t = s
            .compile_bool(
                &bin(
                    BinaryOp::Cmp(Cmp::Lt),
                    Expr::Int(2),
                    Expr::Ident("x".into()),
                ),
                "g",
            )
            .unwrap();
        assert_eq!(t, BoolExpr::VarCmp(Cmp::Gt, 0, 2));
    }

    #[test]
    fn functions_type_and_fold() {
        let e = env();
        let s = scope(&e, true);
        let t = s
            .compile(&Expr::Call(Func::Pow, vec![Expr::Int(6), Expr::Int(3)]))
            .unwrap();
        assert_eq!(t, TypedExpr::Int(IntExpr::Const(216)));
        let t = s
            .compile(&Expr::Call(
                Func::Max,
                vec![
                    bin(BinaryOp::Sub, Expr::Ident("N".into()), Expr::Int(1)),
                    Expr::Int(1),
                ],
            ))
            .unwrap();
        assert_eq!(t, TypedExpr::Int(IntExpr::Const(3)));
        let t = s
            .compile(&Expr::Call(Func::Floor, vec![Expr::Double(2.5)]))
            .unwrap();
        assert_eq!(t, TypedExpr::Int(IntExpr::Const(2)));
        let t = s
            .compile(&Expr::Call(
                Func::Min,
                vec![Expr::Ident("x".into()), Expr::Double(2.5)],
            ))
            .unwrap();
        assert_eq!(t.ty(), Type::Double);
        let err = s
            .compile(&Expr::Call(
                Func::Mod,
                vec![Expr::Double(2.5), Expr::Int(2)],
            ))
            .unwrap_err();
        assert!(err.message.contains("integer"));
        let err = s.compile(&Expr::Call(Func::Floor, vec![])).unwrap_err();
        assert!(err.message.contains("1 argument"));
    }

    #[test]
    fn constant_and_folds_short_circuit() {
        let e = env();
        let s = scope(&e, false);
        let t = s
            .compile_bool(
                &bin(BinaryOp::And, Expr::Bool(true), Expr::Ident("b".into())),
                "g",
            )
            .unwrap();
        assert_eq!(t, BoolExpr::Var(1));
        let t = s
            .compile_bool(
                &bin(BinaryOp::Or, Expr::Ident("b".into()), Expr::Bool(true)),
                "g",
            )
            .unwrap();
        assert_eq!(t, BoolExpr::Const(true));
    }
}
