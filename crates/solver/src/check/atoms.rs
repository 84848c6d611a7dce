//! Evaluation of expression atoms (`x>=3`, `s=1 & t!=2`, thresholds, step bounds) over the
//! state valuations of a DTMC and the constants of the check context.

use super::{CheckError, Result};
use augur_dtmc::Dtmc;
use augur_expr::{Expr, ExprError, Value};
use std::collections::HashMap;

/// Evaluate `expr` with augur-expr's evaluator, resolving identifiers with `lookup`.
pub(crate) fn eval(expr: &Expr, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value> {
    expr.eval(lookup).map_err(|e| match e {
        ExprError::Undeclared(name) => {
            CheckError::Expr(format!("unknown variable or constant `{name}`"))
        }
        other => CheckError::Expr(other.to_string()),
    })
}

pub(crate) fn as_f64(v: Value) -> Result<f64> {
    match v {
        Value::Int(i) => Ok(i as f64),
        Value::Double(d) => Ok(d),
        Value::Bool(b) => Err(CheckError::Expr(format!(
            "expected a number, found the boolean {b}"
        ))),
    }
}

/// Evaluate a state-independent expression (thresholds, step bounds, discount factors).
pub(crate) fn eval_const(expr: &Expr, constants: &HashMap<String, Value>) -> Result<Value> {
    eval(expr, &|name| constants.get(name).copied())
}

/// Evaluate an expression in every state. Identifiers are model variables first, then constants.
pub(crate) fn eval_states(
    dtmc: &Dtmc,
    expr: &Expr,
    constants: &HashMap<String, Value>,
) -> Result<Vec<Value>> {
    let n = dtmc.num_states();
    // A state-independent expression is evaluated once.
    if let Ok(v) = eval_const(expr, constants) {
        return Ok(vec![v; n]);
    }
    let Some(vals) = &dtmc.valuations else {
        // Reports the unknown identifier (the model has no variables).
        return eval_const(expr, constants).map(|v| vec![v; n]);
    };
    let index: HashMap<&str, usize> = vals
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    // Fold the constants in once, so the per-state evaluation only looks up variables
    // (model formulas expand into large constant-heavy trees, e.g. in oscillators).
    let folded = expr
        .substitute(|name| {
            if index.contains_key(name) {
                None
            } else {
                constants.get(name).map(|v| Expr::from(*v))
            }
        })
        .simplify();
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        if s >= vals.num_states() {
            return Err(CheckError::Model(format!(
                "the valuations do not cover state {s}"
            )));
        }
        let lookup = |name: &str| {
            index
                .get(name)
                .and_then(|&i| vals.get(s, i))
                .or_else(|| constants.get(name).copied())
        };
        out.push(eval(&folded, &lookup)?);
    }
    Ok(out)
}
