//! Constants: resolving `const` declarations that refer to each other, and `--const` strings.

use crate::ast::{ConstDecl, Expr, Value};
use crate::error::{ExprError, Result};
use std::collections::HashMap;

/// Evaluates constant declarations that may refer to each other in any order.
///
/// A constant's value is its entry in `overrides` when there is one (e.g. from `--const`),
/// else its defining expression, which may name other constants of `decls` only. Returns
/// every constant with its value, in declaration order. Ints are accepted for `double`
/// constants (and converted); any other type difference is an error.
/// Overrides naming no declared constant are ignored (callers that combine several sources of
/// constants decide whether that is an error).
///
/// Errors: [`ExprError::UndefinedConstants`] naming every constant without a value (directly or
/// through a dependency), [`ExprError::CyclicConstants`] naming a cycle,
/// [`ExprError::DuplicateConstant`], [`ExprError::Undeclared`] for other names,
/// [`ExprError::ConstantType`], and evaluation errors.
///
/// ```
/// use augur_expr::{evaluate_constants, parse_expr, ConstDecl, Type, Value};
/// let decls = vec![
///     ConstDecl { name: "M".into(), ty: Type::Int, value: Some(parse_expr("N*2").unwrap()) },
///     ConstDecl { name: "N".into(), ty: Type::Int, value: None },
///     ConstDecl { name: "p".into(), ty: Type::Double, value: Some(parse_expr("1/M").unwrap()) },
/// ];
/// let vals = evaluate_constants(&decls, &[("N".into(), Value::Int(2))]).unwrap();
/// assert_eq!(vals[0], ("M".to_string(), Value::Int(4)));
/// assert_eq!(vals[2], ("p".to_string(), Value::Double(0.25)));
/// ```
pub fn evaluate_constants(
    decls: &[ConstDecl],
    overrides: &[(String, Value)],
) -> Result<Vec<(String, Value)>> {
    evaluate_constants_at(decls, overrides).map_err(|(_, e)| e)
}

/// [`evaluate_constants`], with the index in `decls` of the declaration an error concerns
/// (the constant without a value, the first of a cycle, the second of a duplicate, the one
/// whose definition failed to evaluate), so that callers can point at it in their text.
pub fn evaluate_constants_at(
    decls: &[ConstDecl],
    overrides: &[(String, Value)],
) -> std::result::Result<Vec<(String, Value)>, (usize, ExprError)> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, d) in decls.iter().enumerate() {
        if index.insert(d.name.as_str(), i).is_some() {
            return Err((i, ExprError::DuplicateConstant(d.name.clone())));
        }
    }
    let over: HashMap<&str, Value> = overrides.iter().map(|(n, v)| (n.as_str(), *v)).collect();

    // Undefined constants: no override and no expression.
    let undefined: Vec<String> = decls
        .iter()
        .filter(|d| d.value.is_none() && !over.contains_key(d.name.as_str()))
        .map(|d| d.name.clone())
        .collect();
    if let Some(first) = undefined.first() {
        let at = index[first.as_str()];
        return Err((at, ExprError::UndefinedConstants(undefined)));
    }

    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Active,
        Done,
    }
    let n = decls.len();
    let mut state = vec![State::New; n];
    let mut values: Vec<Option<Value>> = vec![None; n];

    // Iterative depth-first evaluation in dependency order (no recursion on user input).
    for root in 0..n {
        if state[root] == State::Done {
            continue;
        }
        let mut stack: Vec<usize> = vec![root];
        while let Some(&i) = stack.last() {
            let d = &decls[i];
            if state[i] == State::Done {
                stack.pop();
                continue;
            }
            let deps: Vec<usize> = match (over.get(d.name.as_str()), &d.value) {
                (Some(_), _) | (None, None) => Vec::new(),
                (None, Some(e)) => {
                    let mut deps = Vec::new();
                    for id in e.idents() {
                        match index.get(id.as_str()) {
                            Some(&j) => deps.push(j),
                            None => return Err((i, ExprError::Undeclared(id))),
                        }
                    }
                    deps
                }
            };
            state[i] = State::Active;
            let mut pushed = false;
            for j in deps {
                match state[j] {
                    State::Done => {}
                    State::Active => {
                        // `stack` holds the active path; the cycle is j .. i, j.
                        let start = stack.iter().position(|&k| k == j).unwrap_or(0);
                        let mut cycle: Vec<String> = stack[start..]
                            .iter()
                            .map(|&k| decls[k].name.clone())
                            .collect();
                        cycle.push(decls[j].name.clone());
                        return Err((stack[start], ExprError::CyclicConstants(cycle)));
                    }
                    State::New => {
                        stack.push(j);
                        pushed = true;
                        break;
                    }
                }
            }
            if pushed {
                continue;
            }
            let raw = match (over.get(d.name.as_str()), &d.value) {
                (Some(v), _) => *v,
                (None, Some(e)) => e
                    .eval(|name| index.get(name).and_then(|&j| values[j]))
                    .map_err(|e| (i, e))?,
                (None, None) => {
                    return Err((i, ExprError::UndefinedConstants(vec![d.name.clone()])))
                }
            };
            let v = raw.coerce(d.ty).ok_or_else(|| {
                (
                    i,
                    ExprError::ConstantType {
                        name: d.name.clone(),
                        declared: d.ty,
                        value: raw.to_string(),
                        found: raw.ty(),
                    },
                )
            })?;
            values[i] = Some(v);
            state[i] = State::Done;
            stack.pop();
        }
    }
    decls
        .iter()
        .zip(values)
        .enumerate()
        .map(|(i, (d, v))| {
            v.map(|v| (d.name.clone(), v))
                .ok_or_else(|| (i, ExprError::UndefinedConstants(vec![d.name.clone()])))
        })
        .collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses a literal value as written on the command line: `3`, `-2`, `0.5`, `1e-3`, `true`,
/// `false`, or a fraction `1/3` (as PRISM accepts, a double). Digits only (with an optional
/// sign) give an int; a `.`, an exponent or a `/` gives a double.
pub fn parse_value(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Some((num, den)) = t.split_once('/') {
        let num = parse_value(num)?.as_f64()?;
        let den = parse_value(den)?.as_f64()?;
        if den == 0.0 || num.is_nan() {
            return None;
        }
        return Some(Value::Double(num / den)).filter(|v| v.as_f64().is_some_and(f64::is_finite));
    }
    match t {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<i64>().ok().map(Value::Int);
    }
    // Only plain decimal syntax (no `inf`, `NaN`).
    if !digits.is_empty()
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && digits
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.')
    {
        return t
            .parse::<f64>()
            .ok()
            .filter(|d| d.is_finite())
            .map(Value::Double);
    }
    None
}

/// Parses `--const` style assignments: `N=3,p=0.5,flag=true` (spaces around names and values
/// are allowed; an empty string gives no assignments).
///
/// ```
/// use augur_expr::{parse_const_assignments, Value};
/// let a = parse_const_assignments("N=3, p=0.5,b=true").unwrap();
/// assert_eq!(a, vec![("N".into(), Value::Int(3)), ("p".into(), Value::Double(0.5)), ("b".into(), Value::Bool(true))]);
/// ```
pub fn parse_const_assignments(text: &str) -> Result<Vec<(String, Value)>> {
    let mut out: Vec<(String, Value)> = Vec::new();
    if text.trim().is_empty() {
        return Ok(out);
    }
    let mut offset = 0;
    for part in text.split(',') {
        let at = offset;
        offset += part.len() + 1;
        // The byte range of `sub` (a slice of `part`) in `text`, without surrounding spaces.
        let span_of = |sub: &str| {
            let trimmed = sub.trim();
            let start = at + (trimmed.as_ptr() as usize - part.as_ptr() as usize);
            augur_source::Span::new(start, start + trimmed.len())
        };
        let bad = |message: &str, cause: &str| ExprError::BadAssignment {
            text: part.trim().to_string(),
            message: message.to_string(),
            span: span_of(if cause.trim().is_empty() { part } else { cause }),
        };
        let Some((name, value)) = part.split_once('=') else {
            return Err(bad("expected NAME=VALUE", part));
        };
        if !is_identifier(name.trim()) {
            return Err(bad("the name is not an identifier", name));
        }
        let name = name.trim();
        if value.contains(':') {
            return Err(bad(
                "ranges (a:b or a:step:b) are not supported; give a single value",
                value,
            ));
        }
        let Some(v) = parse_value(value) else {
            return Err(bad(
                "the value must be an int, a double (`0.5`, `1/3`), true or false",
                value,
            ));
        };
        if out.iter().any(|(n, _)| n == name) {
            return Err(bad("the constant is assigned twice", name));
        }
        out.push((name.to_string(), v));
    }
    Ok(out)
}

/// Substitutes constant values into an expression (identifiers not in `values` are kept).
pub fn substitute_constants(e: &Expr, values: &[(String, Value)]) -> Expr {
    e.substitute(|n| {
        values
            .iter()
            .find(|(m, _)| m == n)
            .map(|(_, v)| Expr::from(*v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_expr, Type};

    fn decl(name: &str, ty: Type, value: Option<&str>) -> ConstDecl {
        ConstDecl {
            name: name.into(),
            ty,
            value: value.map(|v| parse_expr(v).unwrap()),
        }
    }

    #[test]
    fn any_order_and_overrides() {
        let decls = [
            decl("a", Type::Int, Some("b+c")),
            decl("b", Type::Int, Some("c*2")),
            decl("c", Type::Int, Some("1")),
            decl("d", Type::Double, Some("a")),
        ];
        let v = evaluate_constants(&decls, &[]).unwrap();
        // c = 1, b = 2, a = 3, d = 3.0 (int converted to the declared double).
        assert_eq!(
            v,
            vec![
                ("a".into(), Value::Int(3)),
                ("b".into(), Value::Int(2)),
                ("c".into(), Value::Int(1)),
                ("d".into(), Value::Double(3.0))
            ]
        );
        let v = evaluate_constants(
            &decls,
            &[("c".into(), Value::Int(10)), ("zz".into(), Value::Int(1))],
        )
        .unwrap();
        assert_eq!(v[0], ("a".into(), Value::Int(30)));
    }

    #[test]
    fn errors() {
        let undefined = [
            decl("N", Type::Int, None),
            decl("M", Type::Int, None),
            decl("K", Type::Int, Some("N")),
        ];
        assert_eq!(
            evaluate_constants(&undefined, &[]).unwrap_err(),
            ExprError::UndefinedConstants(vec!["N".into(), "M".into()])
        );
        let cyclic = [
            decl("a", Type::Int, Some("b")),
            decl("b", Type::Int, Some("c+1")),
            decl("c", Type::Int, Some("a")),
        ];
        assert_eq!(
            evaluate_constants(&cyclic, &[]).unwrap_err(),
            ExprError::CyclicConstants(vec!["a".into(), "b".into(), "c".into(), "a".into()])
        );
        let selfref = [decl("a", Type::Int, Some("a+1"))];
        assert!(matches!(
            evaluate_constants(&selfref, &[]),
            Err(ExprError::CyclicConstants(_))
        ));
        let wrong = [decl("a", Type::Int, Some("0.5"))];
        assert!(matches!(
            evaluate_constants(&wrong, &[]),
            Err(ExprError::ConstantType { .. })
        ));
        let unknown = [decl("a", Type::Int, Some("x"))];
        assert_eq!(
            evaluate_constants(&unknown, &[]).unwrap_err(),
            ExprError::Undeclared("x".into())
        );
        let dup = [
            decl("a", Type::Int, Some("1")),
            decl("a", Type::Int, Some("2")),
        ];
        assert_eq!(
            evaluate_constants(&dup, &[]).unwrap_err(),
            ExprError::DuplicateConstant("a".into())
        );
        let div = [decl("a", Type::Double, Some("1/0"))];
        assert!(matches!(
            evaluate_constants(&div, &[]),
            Err(ExprError::DivisionByZero(_))
        ));
    }

    #[test]
    fn assignments() {
        assert_eq!(parse_const_assignments("").unwrap(), vec![]);
        assert_eq!(
            parse_const_assignments("T=-2,x=1e-3").unwrap(),
            vec![
                ("T".into(), Value::Int(-2)),
                ("x".into(), Value::Double(1e-3))
            ]
        );
        for bad in [
            "N", "N=", "3=4", "N=abc", "N=1:5", "N=1,N=2", "N=inf", "N=NaN",
        ] {
            assert!(parse_const_assignments(bad).is_err(), "{bad}");
        }
        // The span is the cause: the value, the name, or the whole assignment.
        for (text, cause) in [
            ("N=3, p= abc ,b=true", "abc"),
            ("N=3,3x=4", "3x"),
            ("N=3, q", "q"),
            ("N=1, N=2", "N"),
            ("N=1:5", "1:5"),
        ] {
            let e = parse_const_assignments(text).unwrap_err();
            let s = e.span().unwrap();
            assert_eq!(&text[s.start..s.end], cause, "{text}");
        }
    }
}
