//! Parametric builds ([`PrismModel::build_parametric`]): undefined `const double`s declared
//! parameters keep their names, every probability and reward becomes an exact rational
//! function of them ([`augur_ratfun::RatFunc`]), computed beside the `f64` chain at a reference
//! point (a chain with the model's graph, whose labels, valuations and reward structures the
//! rest of Augur reads).
//!
//! A parameter may appear in probabilities, rewards and formulas used there; in a guard, a
//! label, a reward's guard, an update's value, a variable's range or initial value, or a
//! constant's definition it would change the graph (or the states), and is refused with a
//! located message.

use crate::build::{BuildOptions, ExplorationReport};
use crate::compile::{ConstValue, TypedExpr, DEFAULT_INLINE_LIMIT};
use crate::error::{PrismError, Result};
use crate::eval::{BoolExpr, EvalError, IntExpr, RealExpr};
use crate::model::PrismModel;
use crate::program::{AssignedValue, Program};
use augur_dtmc::Dtmc;
use augur_expr::Value;
use augur_ratfun::RatFunc;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use rustc_hash::FxHashMap;

pub use augur_ratfun::ParametricValues;

impl PrismModel {
    /// Builds the model with `params` (name, value at the reference point) as parameters:
    /// the chain at the reference point (its graph is the model's when every function is
    /// positive there) and the exact function of every probability and reward. `consts`
    /// gives the other undefined constants. Parameters in guards, labels, ranges, initial
    /// values, updates' values and constants' definitions are refused, located.
    pub fn build_parametric(
        &self,
        consts: &[(String, Value)],
        params: &[(String, f64)],
        opts: &BuildOptions<'_>,
    ) -> Result<(Dtmc, ExplorationReport, ParametricValues)> {
        for (name, _) in params {
            if !self
                .ast
                .constants
                .iter()
                .any(|c| c.decl.name == *name && c.decl.value.is_none())
            {
                return Err(PrismError::BadConstant {
                    message: format!(
                        "--param {name}: the model has no undefined constant `{name}` (a parameter is an undefined `const double`)"
                    ),
                });
            }
        }
        let mut overrides: Vec<(String, Value)> = consts.to_vec();
        overrides.extend(params.iter().map(|(n, v)| (n.clone(), Value::Double(*v))));
        let exact_given: Vec<(String, BigRational)> = opts.exact_constants.to_vec();
        let cvals = self.eval_constants_param(&overrides, &exact_given, params)?;
        let map: FxHashMap<String, ConstValue> = cvals
            .iter()
            .filter(|(n, _)| !params.iter().any(|(p, _)| p == n))
            .cloned()
            .collect();
        let program = Program::compile_param(self, &map, params, DEFAULT_INLINE_LIMIT)?;
        self.refuse_params_in_structure(&program, params)?;
        let mut report = ExplorationReport {
            constants: cvals
                .iter()
                .filter(|(n, _)| !params.iter().any(|(p, _)| p == n))
                .map(|(n, v)| (n.clone(), v.to_value()))
                .collect(),
            ..ExplorationReport::default()
        };
        if program
            .commands
            .iter()
            .any(|c| c.updates.iter().any(|u| u.upper.is_some()))
        {
            return Err(PrismError::BadConstant {
                message: "a parametric model cannot have interval updates `[lo, hi] : ...`".into(),
            });
        }
        let opts = BuildOptions {
            exact: false,
            ..*opts
        };
        let mut values = None;
        let names: Vec<String> = params.iter().map(|(n, _)| n.clone()).collect();
        let dtmc = self.explore_param(&program, &opts, &mut report, &names, &mut values)?;
        let mut values = values.unwrap_or_else(|| ParametricValues {
            params: Vec::new(),
            transitions: Vec::new(),
            state_rewards: Vec::new(),
            transition_rewards: Vec::new(),
        });
        values.params = params.iter().map(|(n, _)| n.clone()).collect();
        Ok((dtmc, report, values))
    }

    /// Refuses a parameter where it would change the graph: guards, labels, reward guards,
    /// update values, initial-state predicates (ranges and initial values are constant
    /// expressions, refused where they are compiled).
    fn refuse_params_in_structure(&self, prog: &Program, params: &[(String, f64)]) -> Result<()> {
        let name = |i: u16| params[i as usize].0.clone();
        for c in &prog.commands {
            if let Some(i) = bool_param(&c.guard) {
                return Err(self.param_error(c.span, &name(i), "a guard"));
            }
            for u in &c.updates {
                for a in &u.assigns {
                    let p = match &a.value {
                        AssignedValue::Int(e) => int_param(e),
                        AssignedValue::Bool(e) => bool_param(e),
                    };
                    if let Some(i) = p {
                        return Err(self.param_error(c.span, &name(i), "an update's value"));
                    }
                }
                if let Some(i) = real_param_in_condition(&u.prob) {
                    return Err(self.param_error(
                        c.span,
                        &name(i),
                        "a condition or integer part of a probability",
                    ));
                }
            }
        }
        for (label, b, span) in &prog.labels {
            if let Some(i) = bool_param(b) {
                return Err(self.param_error(*span, &name(i), &format!("label \"{label}\"")));
            }
        }
        for r in &prog.rewards {
            for (g, v, span) in &r.state {
                if let Some(i) = bool_param(g).or_else(|| real_param_in_condition(v)) {
                    return Err(self.param_error(*span, &name(i), "a reward's guard"));
                }
            }
            for (_, g, v, span) in &r.trans {
                if let Some(i) = bool_param(g).or_else(|| real_param_in_condition(v)) {
                    return Err(self.param_error(*span, &name(i), "a reward's guard"));
                }
            }
        }
        Ok(())
    }

    fn param_error(&self, span: crate::ast::ModelSpan, name: &str, what: &str) -> PrismError {
        PrismError::at(
            &self.file,
            &self.source,
            self.locate_ident(span, name),
            format!(
                "parameter `{name}` in {what} would change the chain's graph; parameters may appear in probabilities and rewards only"
            ),
        )
    }
}

/// The first parameter read by a boolean expression.
pub(crate) fn bool_param(e: &BoolExpr) -> Option<u16> {
    match e {
        BoolExpr::Const(_) | BoolExpr::Var(_) | BoolExpr::Slot(_) | BoolExpr::VarCmp(..) => None,
        BoolExpr::Not(a) => bool_param(a),
        BoolExpr::And(xs) | BoolExpr::Or(xs) => xs.iter().find_map(bool_param),
        BoolExpr::Implies(a, b) | BoolExpr::Iff(a, b) => bool_param(a).or_else(|| bool_param(b)),
        BoolExpr::Ite(c, a, b) => bool_param(c)
            .or_else(|| bool_param(a))
            .or_else(|| bool_param(b)),
        BoolExpr::CmpI(_, a, b) => int_param(a).or_else(|| int_param(b)),
        BoolExpr::CmpR(_, a, b) | BoolExpr::CmpQ(_, a, b) => {
            real_param(a).or_else(|| real_param(b))
        }
    }
}

/// The first parameter read by an integer expression.
pub(crate) fn int_param(e: &IntExpr) -> Option<u16> {
    match e {
        IntExpr::Const(_) | IntExpr::Var(_) | IntExpr::Slot(_) => None,
        IntExpr::Neg(a) => int_param(a),
        IntExpr::Add(a, b)
        | IntExpr::Sub(a, b)
        | IntExpr::Mul(a, b)
        | IntExpr::Pow(a, b)
        | IntExpr::Mod(a, b) => int_param(a).or_else(|| int_param(b)),
        IntExpr::Ite(c, a, b) => bool_param(c)
            .or_else(|| int_param(a))
            .or_else(|| int_param(b)),
        IntExpr::Min(xs) | IntExpr::Max(xs) => xs.iter().find_map(int_param),
        IntExpr::Floor(r) | IntExpr::Ceil(r) => real_param(r),
    }
}

/// The first parameter read by a real expression.
pub(crate) fn real_param(e: &RealExpr) -> Option<u16> {
    match e {
        RealExpr::Param(i, _) => Some(*i),
        RealExpr::Const(..) | RealExpr::Slot(_) => None,
        RealExpr::FromInt(i) => int_param(i),
        RealExpr::Neg(a) => real_param(a),
        RealExpr::Add(a, b)
        | RealExpr::Sub(a, b)
        | RealExpr::Mul(a, b)
        | RealExpr::Div(a, b)
        | RealExpr::Pow(a, b)
        | RealExpr::Log(a, b) => real_param(a).or_else(|| real_param(b)),
        RealExpr::Ite(c, a, b) => bool_param(c)
            .or_else(|| real_param(a))
            .or_else(|| real_param(b)),
        RealExpr::Min(xs) | RealExpr::Max(xs) => xs.iter().find_map(real_param),
    }
}

/// A parameter read where a rational function cannot carry it: a condition, an integer
/// part (`floor`), `min`/`max`, `log`, or an exponent.
fn real_param_in_condition(e: &RealExpr) -> Option<u16> {
    match e {
        RealExpr::Param(..) | RealExpr::Const(..) | RealExpr::Slot(_) => None,
        RealExpr::FromInt(i) => int_param(i),
        RealExpr::Neg(a) => real_param_in_condition(a),
        RealExpr::Add(a, b) | RealExpr::Sub(a, b) | RealExpr::Mul(a, b) | RealExpr::Div(a, b) => {
            real_param_in_condition(a).or_else(|| real_param_in_condition(b))
        }
        RealExpr::Pow(a, b) => real_param_in_condition(a).or_else(|| real_param(b)),
        RealExpr::Log(a, b) => real_param(a).or_else(|| real_param(b)),
        RealExpr::Ite(c, a, b) => bool_param(c)
            .or_else(|| real_param_in_condition(a))
            .or_else(|| real_param_in_condition(b)),
        RealExpr::Min(xs) | RealExpr::Max(xs) => xs.iter().find_map(real_param),
    }
}

/// Whether a real expression reads the state (a variable or a derived slot).
pub(crate) fn reads_state(e: &RealExpr) -> bool {
    fn int(e: &IntExpr) -> bool {
        match e {
            IntExpr::Const(_) => false,
            IntExpr::Var(_) | IntExpr::Slot(_) | IntExpr::Ite(..) => true,
            IntExpr::Neg(a) => int(a),
            IntExpr::Add(a, b)
            | IntExpr::Sub(a, b)
            | IntExpr::Mul(a, b)
            | IntExpr::Pow(a, b)
            | IntExpr::Mod(a, b) => int(a) || int(b),
            IntExpr::Min(xs) | IntExpr::Max(xs) => xs.iter().any(int),
            IntExpr::Floor(r) | IntExpr::Ceil(r) => reads_state(r),
        }
    }
    match e {
        RealExpr::Param(..) | RealExpr::Const(..) => false,
        RealExpr::Slot(_) | RealExpr::Ite(..) => true,
        RealExpr::FromInt(i) => int(i),
        RealExpr::Neg(a) => reads_state(a),
        RealExpr::Add(a, b)
        | RealExpr::Sub(a, b)
        | RealExpr::Mul(a, b)
        | RealExpr::Div(a, b)
        | RealExpr::Pow(a, b)
        | RealExpr::Log(a, b) => reads_state(a) || reads_state(b),
        RealExpr::Min(xs) | RealExpr::Max(xs) => xs.iter().any(reads_state),
    }
}

/// Evaluates a real expression in state `v` as a rational function of `n` parameters.
pub(crate) fn eval_rf(
    e: &RealExpr,
    v: &[i64],
    n: usize,
) -> std::result::Result<RatFunc, EvalError> {
    Ok(match e {
        RealExpr::Param(i, _) => RatFunc::var(*i as usize, n),
        RealExpr::Neg(a) => -&eval_rf(a, v, n)?,
        RealExpr::Add(a, b) => &eval_rf(a, v, n)? + &eval_rf(b, v, n)?,
        RealExpr::Sub(a, b) => &eval_rf(a, v, n)? - &eval_rf(b, v, n)?,
        RealExpr::Mul(a, b) => &eval_rf(a, v, n)? * &eval_rf(b, v, n)?,
        RealExpr::Div(a, b) => {
            let d = eval_rf(b, v, n)?;
            if d.is_zero() {
                return Err(EvalError::DivisionByZero);
            }
            &eval_rf(a, v, n)? / &d
        }
        RealExpr::Ite(c, a, b) => {
            if c.eval(v)? {
                eval_rf(a, v, n)?
            } else {
                eval_rf(b, v, n)?
            }
        }
        RealExpr::Pow(a, b) if real_param(a).is_some() => {
            let k = b.eval_q(v)?;
            if !k.is_integer() {
                return Err(EvalError::Inexact);
            }
            let k = k.to_integer().to_i32().ok_or(EvalError::Overflow)?;
            if k.unsigned_abs() > 10_000 {
                return Err(EvalError::Overflow);
            }
            let base = eval_rf(a, v, n)?;
            let mut acc = RatFunc::one(n);
            for _ in 0..k.unsigned_abs() {
                acc = &acc * &base;
            }
            if k < 0 {
                acc.recip().ok_or(EvalError::DivisionByZero)?
            } else {
                acc
            }
        }
        // No parameter below: the exact rational.
        _ => RatFunc::constant(e.eval_q(v)?, n),
    })
}

/// The exact rational of an integer, as a function.
#[allow(dead_code)]
pub(crate) fn int_rf(k: i64, n: usize) -> RatFunc {
    RatFunc::constant(BigRational::from_integer(BigInt::from(k)), n)
}

/// Whether a compiled constant expression reads a parameter.
pub(crate) fn typed_param(t: &TypedExpr) -> Option<u16> {
    match t {
        TypedExpr::Int(e) => int_param(e),
        TypedExpr::Real(e) => real_param(e),
        TypedExpr::Bool(e) => bool_param(e),
    }
}

/// Whether a rational is zero (helper for the explorer).
#[allow(dead_code)]
pub(crate) fn is_zero_q(q: &BigRational) -> bool {
    q.is_zero()
}
