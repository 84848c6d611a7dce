//! Evaluation of expression atoms (`x>=3`, `s=1 & t!=2`, thresholds, step bounds) over the
//! state valuations of a DTMC and the constants of the check context.

use super::{CheckError, Result};
use augur_dtmc::Dtmc;
use augur_expr::{BinaryOp, Expr, Func, UnaryOp, Value};
use std::collections::HashMap;

/// Evaluate `expr`, resolving identifiers with `lookup`.
pub(crate) fn eval(expr: &Expr, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value> {
    match expr {
        Expr::Int(i) => Ok(Value::Int(*i)),
        Expr::Double(d) => Ok(Value::Double(*d)),
        Expr::Bool(b) => Ok(Value::Bool(*b)),
        Expr::Ident(name) => lookup(name)
            .ok_or_else(|| CheckError::Expr(format!("unknown variable or constant `{name}`"))),
        Expr::Unary(op, e) => {
            let v = eval(e, lookup)?;
            match (op, v) {
                (UnaryOp::Neg, Value::Int(i)) => i
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(|| CheckError::Expr("integer overflow in negation".into())),
                (UnaryOp::Neg, Value::Double(d)) => Ok(Value::Double(-d)),
                (UnaryOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
                (op, v) => Err(CheckError::Expr(format!(
                    "operator {op:?} cannot be applied to {}",
                    describe(v)
                ))),
            }
        }
        Expr::Binary(op, l, r) => {
            // Short-circuit boolean operators so that `x>0 & y/x>1` behaves as expected.
            match op {
                BinaryOp::And | BinaryOp::Or | BinaryOp::Implies => {
                    let a = as_bool(eval(l, lookup)?)?;
                    let short = match op {
                        BinaryOp::And => (!a).then_some(false),
                        BinaryOp::Or => a.then_some(true),
                        _ => (!a).then_some(true),
                    };
                    if let Some(v) = short {
                        return Ok(Value::Bool(v));
                    }
                    return Ok(Value::Bool(as_bool(eval(r, lookup)?)?));
                }
                _ => {}
            }
            let a = eval(l, lookup)?;
            let b = eval(r, lookup)?;
            binary(*op, a, b)
        }
        Expr::Ite(c, a, b) => {
            if as_bool(eval(c, lookup)?)? {
                eval(a, lookup)
            } else {
                eval(b, lookup)
            }
        }
        Expr::Call(f, args) => {
            let vals = args
                .iter()
                .map(|a| eval(a, lookup))
                .collect::<Result<Vec<_>>>()?;
            call(*f, &vals)
        }
    }
}

fn describe(v: Value) -> String {
    match v {
        Value::Int(i) => format!("the integer {i}"),
        Value::Double(d) => format!("the double {d}"),
        Value::Bool(b) => format!("the boolean {b}"),
    }
}

pub(crate) fn as_bool(v: Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(CheckError::Expr(format!(
            "expected a boolean, found {}",
            describe(other)
        ))),
    }
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

fn binary(op: BinaryOp, a: Value, b: Value) -> Result<Value> {
    use Value::{Bool, Double, Int};
    let overflow = || CheckError::Expr(format!("integer overflow in {op:?}"));
    Ok(match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => match (a, b) {
            (Int(x), Int(y)) => Int(match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                _ => x.checked_mul(y),
            }
            .ok_or_else(overflow)?),
            _ => {
                let (x, y) = (as_f64(a)?, as_f64(b)?);
                Double(match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    _ => x * y,
                })
            }
        },
        BinaryOp::Div => Double(as_f64(a)? / as_f64(b)?),
        BinaryOp::Eq | BinaryOp::Ne => {
            let eq = match (a, b) {
                (Bool(x), Bool(y)) => x == y,
                (Int(x), Int(y)) => x == y,
                (Bool(_), _) | (_, Bool(_)) => {
                    return Err(CheckError::Expr(format!(
                        "cannot compare {} with {}",
                        describe(a),
                        describe(b)
                    )))
                }
                _ => as_f64(a)? == as_f64(b)?,
            };
            Bool(if op == BinaryOp::Eq { eq } else { !eq })
        }
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            let ord = match (a, b) {
                (Int(x), Int(y)) => x.partial_cmp(&y),
                _ => as_f64(a)?.partial_cmp(&as_f64(b)?),
            };
            let Some(ord) = ord else {
                return Ok(Bool(false));
            };
            Bool(match op {
                BinaryOp::Lt => ord.is_lt(),
                BinaryOp::Le => ord.is_le(),
                BinaryOp::Gt => ord.is_gt(),
                _ => ord.is_ge(),
            })
        }
        BinaryOp::And => Bool(as_bool(a)? && as_bool(b)?),
        BinaryOp::Or => Bool(as_bool(a)? || as_bool(b)?),
        BinaryOp::Implies => Bool(!as_bool(a)? || as_bool(b)?),
        BinaryOp::Iff => Bool(as_bool(a)? == as_bool(b)?),
    })
}

fn call(f: Func, args: &[Value]) -> Result<Value> {
    use Value::{Double, Int};
    let arity = |n: usize| -> Result<()> {
        if args.len() == n {
            Ok(())
        } else {
            Err(CheckError::Expr(format!(
                "{f:?} expects {n} arguments, got {}",
                args.len()
            )))
        }
    };
    match f {
        Func::Min | Func::Max => {
            if args.is_empty() {
                return Err(CheckError::Expr(format!(
                    "{f:?} needs at least one argument"
                )));
            }
            if args.iter().all(|a| matches!(a, Int(_))) {
                let ints = args.iter().filter_map(|a| match a {
                    Int(i) => Some(*i),
                    _ => None,
                });
                let v = if f == Func::Min {
                    ints.min()
                } else {
                    ints.max()
                };
                return v
                    .map(Int)
                    .ok_or_else(|| CheckError::Expr("empty argument list".into()));
            }
            let mut acc = as_f64(args[0])?;
            for a in &args[1..] {
                let x = as_f64(*a)?;
                acc = if f == Func::Min {
                    acc.min(x)
                } else {
                    acc.max(x)
                };
            }
            Ok(Double(acc))
        }
        Func::Floor | Func::Ceil => {
            arity(1)?;
            let x = as_f64(args[0])?;
            let y = if f == Func::Floor {
                x.floor()
            } else {
                x.ceil()
            };
            if !y.is_finite() || y.abs() > 9.0e18 {
                return Err(CheckError::Expr(format!(
                    "{f:?}({x}) is not a valid integer"
                )));
            }
            Ok(Int(y as i64))
        }
        Func::Pow => {
            arity(2)?;
            match (args[0], args[1]) {
                (Int(b), Int(e)) if e >= 0 => {
                    let e = u32::try_from(e)
                        .map_err(|_| CheckError::Expr("integer overflow in pow".into()))?;
                    b.checked_pow(e)
                        .map(Int)
                        .ok_or_else(|| CheckError::Expr("integer overflow in pow".into()))
                }
                (a, b) => Ok(Double(as_f64(a)?.powf(as_f64(b)?))),
            }
        }
        Func::Mod => {
            arity(2)?;
            match (args[0], args[1]) {
                (Int(_), Int(0)) => Err(CheckError::Expr("mod by zero".into())),
                (Int(a), Int(b)) => Ok(Int(a.rem_euclid(b))),
                _ => Err(CheckError::Expr("mod expects two integers".into())),
            }
        }
        Func::Log => {
            arity(2)?;
            Ok(Double(as_f64(args[0])?.ln() / as_f64(args[1])?.ln()))
        }
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
    let width = vals.names.len();
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        let row = vals
            .values
            .get(s * width..(s + 1) * width)
            .ok_or_else(|| CheckError::Model(format!("the valuations do not cover state {s}")))?;
        let lookup = |name: &str| {
            vals.names
                .iter()
                .position(|v| v == name)
                .map(|i| row[i])
                .or_else(|| constants.get(name).copied())
        };
        out.push(eval(expr, &lookup)?);
    }
    Ok(out)
}
