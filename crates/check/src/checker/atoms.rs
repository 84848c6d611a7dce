//! Evaluation of expression atoms (`x>=3`, `s=1 & t!=2`) over the state valuations of a DTMC.
//! Constants were substituted and folded when the property was resolved: only the model's
//! variables remain.

use std::sync::Arc;

use augur_dtmc::Dtmc;
use augur_expr::{Expr, ExprError, Value};

/// The values of a model formula in every state, by name: `None` for a name that is no
/// formula; an error is a message. (A formula too large to write out in a property is left
/// there by name, and evaluated once per state through this.)
pub(crate) type FormulaValues<'a> =
    dyn Fn(&str) -> Option<Result<Arc<Vec<Value>>, String>> + Send + Sync + 'a;

/// The message for an expression that does not evaluate.
fn message(e: ExprError) -> String {
    match e {
        ExprError::Undeclared(name) => format!("unknown variable or constant `{name}`"),
        other => other.to_string(),
    }
}

/// Evaluate an expression in every state (the error is a message; the caller locates it).
pub(crate) fn eval_states(
    dtmc: &Dtmc,
    expr: &Expr,
    formulas: &FormulaValues<'_>,
) -> Result<Vec<Value>, String> {
    let n = dtmc.num_states();
    // A state-independent expression is evaluated once.
    if expr.is_closed() {
        return expr.eval(|_| None).map(|v| vec![v; n]).map_err(message);
    }
    let Some(vals) = &dtmc.valuations else {
        // Reports the unknown identifier (the model has no variables).
        return expr.eval(|_| None).map(|v| vec![v; n]).map_err(message);
    };
    // The few variables the expression reads, with their columns: a short list searched
    // per lookup (no hashing per state and variable).
    let mut used: Vec<(String, usize)> = Vec::new();
    // Model formulas the expression names (too large to be written out in it): their values.
    let mut computed: Vec<(String, Arc<Vec<Value>>)> = Vec::new();
    for name in expr.idents() {
        if let Some(i) = vals.index_of(&name) {
            used.push((name, i));
        } else if let Some(values) = formulas(&name) {
            computed.push((name, values?));
        }
    }
    if vals.num_states() < n || computed.iter().any(|(_, v)| v.len() < n) {
        let s = vals.num_states();
        return Err(format!("model: the valuations do not cover state {s}"));
    }
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        let lookup = |name: &str| match used.iter().find(|(u, _)| u == name) {
            Some(&(_, i)) => vals.get(s, i),
            None => computed.iter().find(|(u, _)| u == name).map(|(_, v)| v[s]),
        };
        out.push(expr.eval(lookup).map_err(message)?);
    }
    Ok(out)
}
