//! Evaluation of expression atoms (`x>=3`, `s=1 & t!=2`) over the state valuations of a DTMC.
//! Constants were substituted and folded when the property was resolved: only the model's
//! variables remain.

use augur_dtmc::Dtmc;
use augur_expr::{Expr, ExprError, Value};

/// The message for an expression that does not evaluate.
fn message(e: ExprError) -> String {
    match e {
        ExprError::Undeclared(name) => format!("unknown variable or constant `{name}`"),
        other => other.to_string(),
    }
}

/// Evaluate an expression in every state (the error is a message; the caller locates it).
pub(crate) fn eval_states(dtmc: &Dtmc, expr: &Expr) -> Result<Vec<Value>, String> {
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
    let used: Vec<(String, usize)> = expr
        .idents()
        .into_iter()
        .filter_map(|name| vals.index_of(&name).map(|i| (name, i)))
        .collect();
    if vals.num_states() < n {
        let s = vals.num_states();
        return Err(format!("model: the valuations do not cover state {s}"));
    }
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        let lookup = |name: &str| {
            used.iter()
                .find(|(u, _)| u == name)
                .and_then(|&(_, i)| vals.get(s, i))
        };
        out.push(expr.eval(lookup).map_err(message)?);
    }
    Ok(out)
}
