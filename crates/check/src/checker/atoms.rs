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
    if computed.is_empty() {
        if let Some(out) = keyed(vals, expr, &used, n) {
            return out;
        }
    }
    per_state(vals, expr, &used, &computed, n)
}

/// [`eval_states`] state by state.
fn per_state(
    vals: &augur_dtmc::Valuations,
    expr: &Expr,
    used: &[(String, usize)],
    computed: &[(String, Arc<Vec<Value>>)],
    n: usize,
) -> Result<Vec<Value>, String> {
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

/// At most this many bits of fields key an expression's table (64 Ki entries).
const KEY_BITS_MAX: u32 = 16;

/// [`eval_states`] for an expression over integer and boolean variables whose fields together
/// take at most [`KEY_BITS_MAX`] bits: it is evaluated once per distinct valuation of the
/// variables it reads (a table indexed by their fields, filled as states meet them), the same
/// evaluation as state by state, so values and errors are the same. `None` when it does not
/// apply (a double variable, too many bits, or a table larger than the number of states).
fn keyed(
    vals: &augur_dtmc::Valuations,
    expr: &Expr,
    used: &[(String, usize)],
    n: usize,
) -> Option<Result<Vec<Value>, String>> {
    let mut keys = Vec::with_capacity(used.len());
    let mut total = 0u32;
    for &(_, col) in used {
        let key = vals.field_key(col)?;
        total += key.2;
        keys.push((col, key, total - key.2));
    }
    if total > KEY_BITS_MAX || (1usize << total) > n.max(1) {
        return None;
    }
    let mut table: Vec<Option<Value>> = vec![None; 1 << total];
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        let mut key = 0usize;
        for &(_, field, at) in &keys {
            key |= (vals.field(s, field) as usize) << at;
        }
        let v = match table[key] {
            Some(v) => v,
            None => {
                let lookup = |name: &str| {
                    let k = used.iter().position(|(u, _)| u == name)?;
                    let (col, field, _) = keys[k];
                    vals.value_of_field(col, vals.field(s, field))
                };
                let v = match expr.eval(lookup) {
                    Ok(v) => v,
                    Err(e) => return Some(Err(message(e))),
                };
                table[key] = Some(v);
                v
            }
        };
        out.push(v);
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_dtmc::Valuations;
    use augur_expr::Type;

    /// The table path gives the same values and the same errors as evaluating state by state.
    #[test]
    fn keyed_evaluation_agrees_with_per_state_evaluation() {
        let n = 600;
        let mut values = Vec::new();
        let mut r: u64 = 7;
        for _ in 0..n {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            values.push(Value::Int((r >> 33) as i64 % 16 - 3));
            values.push(Value::Bool((r >> 20) & 1 == 1));
            values.push(Value::Int((r >> 40) as i64 % 4));
        }
        let vals = Valuations::new(
            vec!["x".into(), "b".into(), "y".into()],
            vec![Type::Int, Type::Bool, Type::Int],
            values,
        );
        for text in [
            "x > 1",
            "x*y + (b ? 1 : 0)",
            "b & x != y",
            "x / y > 1",
            "mod(x, y) = 1",
            "pow(x, y) >= 4",
            "z > 1",
        ] {
            let expr = augur_expr::parse_expr(text).unwrap();
            let used: Vec<(String, usize)> = expr
                .idents()
                .into_iter()
                .filter_map(|name| vals.index_of(&name).map(|i| (name, i)))
                .collect();
            let fast = keyed(&vals, &expr, &used, n).expect("the table path applies");
            let slow = per_state(&vals, &expr, &used, &[], n);
            assert_eq!(fast, slow, "{text}");
        }
        // Too many bits for a table: not applied.
        let wide = Valuations::new(
            vec!["w".into()],
            vec![Type::Int],
            (0..n as i64).map(|i| Value::Int(i * 1000)).collect(),
        );
        let expr = augur_expr::parse_expr("w > 5").unwrap();
        assert!(keyed(&wide, &expr, &[("w".into(), 0)], n).is_none());
    }
}
