//! Type checking and evaluation, with PRISM's typing rules.
//!
//! - `+ - *` and unary `-`: int when both operands are int, double when either is double.
//! - `/`: always double (`1/2` is `0.5`); a zero divisor (int or double) is an error
//!   ([`ExprError::DivisionByZero`]) rather than an infinity.
//! - `= !=`: two numbers (int promotes to double) or two booleans; `< <= > >=`: numbers.
//! - `! & | => <=>`: booleans. `c ? a : b`: `c` boolean, `a` and `b` both numbers (double if
//!   either is) or both booleans.
//! - `min`, `max`: numbers, int when all are int. `floor`, `ceil`, `round`: a number, result
//!   int. `pow(x, y)`: int when both are int (a negative int exponent is an error), else double.
//!   `mod(i, n)`: ints, `n > 0`, result in `[0, n)`. `log(x, b)`: numbers, result double.
//!
//! Evaluation is lazy where PRISM's is: `&`, `|`, `=>` short-circuit and `c ? a : b` evaluates
//! only the chosen branch (so `x>0 & 1/x>2` never divides by zero). The value of `c ? a : b`
//! is the chosen branch's value as is (an int branch of a double-typed conditional yields an
//! int; [`Value::as_f64`] reads both). Integer arithmetic is checked (64 bits): overflow is an
//! error. Results that are NaN are errors ([`ExprError::NotANumber`]).

use crate::ast::{BinaryOp, Expr, Func, Type, UnaryOp, Value};
use crate::error::{ExprError, Result};
use crate::syntax::arity;

fn mismatch(e: &Expr, message: impl Into<String>) -> ExprError {
    ExprError::TypeMismatch {
        expr: e.to_string(),
        message: message.into(),
    }
}

fn check_arity(func: Func, n: usize) -> Result<()> {
    let (lo, hi) = arity(func);
    if n < lo || hi.is_some_and(|h| n > h) {
        let expected = match hi {
            Some(h) if h == lo => format!("{lo}"),
            Some(h) => format!("{lo} to {h}"),
            None => format!("at least {lo}"),
        };
        return Err(ExprError::Arity {
            func: func.name().to_string(),
            expected,
            found: n,
        });
    }
    Ok(())
}

impl Expr {
    /// Type-checks the expression; `lookup` gives the type of each identifier in scope
    /// (`None`: undeclared).
    ///
    /// ```
    /// use augur_expr::{parse_expr, Type};
    /// let e = parse_expr("x/2 + 1").unwrap();
    /// let ty = e.type_check(|n| (n == "x").then_some(Type::Int)).unwrap();
    /// assert_eq!(ty, Type::Double);
    /// ```
    pub fn type_check(&self, lookup: impl Fn(&str) -> Option<Type>) -> Result<Type> {
        self.type_check_dyn(&lookup)
    }

    fn type_check_dyn(&self, lookup: &dyn Fn(&str) -> Option<Type>) -> Result<Type> {
        match self {
            Expr::Int(_) => Ok(Type::Int),
            Expr::Double(_) | Expr::Decimal(..) => Ok(Type::Double),
            Expr::Bool(_) => Ok(Type::Bool),
            Expr::Ident(n) => lookup(n).ok_or_else(|| ExprError::Undeclared(n.clone())),
            Expr::Unary(UnaryOp::Neg, a) => match a.type_check_dyn(lookup)? {
                t @ (Type::Int | Type::Double) => Ok(t),
                t => Err(mismatch(self, format!("`-` needs a number, found {t}"))),
            },
            Expr::Unary(UnaryOp::Not, a) => match a.type_check_dyn(lookup)? {
                Type::Bool => Ok(Type::Bool),
                t => Err(mismatch(self, format!("`!` needs a bool, found {t}"))),
            },
            Expr::Binary(op, l, r) => {
                let lt = l.type_check_dyn(lookup)?;
                let rt = r.type_check_dyn(lookup)?;
                binary_type(self, *op, lt, rt)
            }
            Expr::Ite(c, a, b) => {
                let ct = c.type_check_dyn(lookup)?;
                if ct != Type::Bool {
                    return Err(mismatch(
                        self,
                        format!("the condition must be a bool, found {ct}"),
                    ));
                }
                let at = a.type_check_dyn(lookup)?;
                let bt = b.type_check_dyn(lookup)?;
                match (at, bt) {
                    (Type::Bool, Type::Bool) => Ok(Type::Bool),
                    (Type::Int, Type::Int) => Ok(Type::Int),
                    (x, y) if x.is_numeric() && y.is_numeric() => Ok(Type::Double),
                    (x, y) => Err(mismatch(self, format!("branches have types {x} and {y}"))),
                }
            }
            Expr::Call(func, args) => {
                check_arity(*func, args.len())?;
                let tys = args
                    .iter()
                    .map(|a| a.type_check_dyn(lookup))
                    .collect::<Result<Vec<_>>>()?;
                if let Some(t) = tys.iter().find(|t| !t.is_numeric()) {
                    return Err(mismatch(
                        self,
                        format!("`{}` needs numbers, found {t}", func.name()),
                    ));
                }
                let all_int = tys.iter().all(|t| *t == Type::Int);
                match func {
                    Func::Min | Func::Max | Func::Pow => {
                        Ok(if all_int { Type::Int } else { Type::Double })
                    }
                    Func::Floor | Func::Ceil | Func::Round => Ok(Type::Int),
                    Func::Mod => {
                        if all_int {
                            Ok(Type::Int)
                        } else {
                            Err(mismatch(self, "`mod` needs ints"))
                        }
                    }
                    Func::Log => Ok(Type::Double),
                }
            }
        }
    }

    /// Evaluates the expression; `env` gives the value of each identifier (`None`: undeclared).
    ///
    /// ```
    /// use augur_expr::{parse_expr, Value};
    /// let e = parse_expr("s=2 ? 1/4 : mod(7, 3)").unwrap();
    /// assert_eq!(e.eval(|_| Some(Value::Int(2))).unwrap(), Value::Double(0.25));
    /// assert_eq!(e.eval(|_| Some(Value::Int(0))).unwrap(), Value::Int(1));
    /// ```
    pub fn eval(&self, env: impl Fn(&str) -> Option<Value>) -> Result<Value> {
        self.eval_dyn(&env)
    }

    /// Evaluates an expression that must be boolean.
    pub fn eval_bool(&self, env: impl Fn(&str) -> Option<Value>) -> Result<bool> {
        match self.eval_dyn(&env)? {
            Value::Bool(b) => Ok(b),
            v => Err(mismatch(self, format!("expected a bool, found {}", v.ty()))),
        }
    }

    /// Evaluates an expression that must be numeric, as a double.
    pub fn eval_f64(&self, env: impl Fn(&str) -> Option<Value>) -> Result<f64> {
        let v = self.eval_dyn(&env)?;
        v.as_f64()
            .ok_or_else(|| mismatch(self, "expected a number, found bool"))
    }

    /// Evaluates an expression that must be an int.
    pub fn eval_i64(&self, env: impl Fn(&str) -> Option<Value>) -> Result<i64> {
        let v = self.eval_dyn(&env)?;
        v.as_i64()
            .ok_or_else(|| mismatch(self, format!("expected an int, found {}", v.ty())))
    }

    pub(crate) fn eval_dyn(&self, env: &dyn Fn(&str) -> Option<Value>) -> Result<Value> {
        match self {
            Expr::Int(i) => Ok(Value::Int(*i)),
            Expr::Double(d) | Expr::Decimal(d, _) => Ok(Value::Double(*d)),
            Expr::Bool(b) => Ok(Value::Bool(*b)),
            Expr::Ident(n) => env(n).ok_or_else(|| ExprError::Undeclared(n.clone())),
            Expr::Unary(UnaryOp::Neg, a) => match a.eval_dyn(env)? {
                Value::Int(i) => i
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or_else(|| ExprError::Overflow(self.to_string())),
                Value::Double(d) => Ok(Value::Double(-d)),
                Value::Bool(_) => Err(mismatch(self, "`-` needs a number, found bool")),
            },
            Expr::Unary(UnaryOp::Not, a) => match a.eval_dyn(env)? {
                Value::Bool(b) => Ok(Value::Bool(!b)),
                v => Err(mismatch(
                    self,
                    format!("`!` needs a bool, found {}", v.ty()),
                )),
            },
            Expr::Binary(op @ (BinaryOp::And | BinaryOp::Or | BinaryOp::Implies), l, r) => {
                let lb = bool_operand(self, l.eval_dyn(env)?)?;
                let short = match op {
                    BinaryOp::And => (!lb).then_some(false),
                    BinaryOp::Or => lb.then_some(true),
                    _ => (!lb).then_some(true),
                };
                match short {
                    Some(v) => Ok(Value::Bool(v)),
                    None => Ok(Value::Bool(bool_operand(self, r.eval_dyn(env)?)?)),
                }
            }
            Expr::Binary(op, l, r) => {
                let lv = l.eval_dyn(env)?;
                let rv = r.eval_dyn(env)?;
                eval_binary(self, *op, lv, rv)
            }
            Expr::Ite(c, a, b) => match c.eval_dyn(env)? {
                Value::Bool(true) => a.eval_dyn(env),
                Value::Bool(false) => b.eval_dyn(env),
                v => Err(mismatch(
                    self,
                    format!("the condition must be a bool, found {}", v.ty()),
                )),
            },
            Expr::Call(func, args) => {
                check_arity(*func, args.len())?;
                let vals = args
                    .iter()
                    .map(|a| a.eval_dyn(env))
                    .collect::<Result<Vec<_>>>()?;
                eval_call(self, *func, &vals)
            }
        }
    }
}

fn bool_operand(e: &Expr, v: Value) -> Result<bool> {
    v.as_bool()
        .ok_or_else(|| mismatch(e, format!("operands must be bools, found {}", v.ty())))
}

fn binary_type(e: &Expr, op: BinaryOp, lt: Type, rt: Type) -> Result<Type> {
    use BinaryOp::*;
    let numeric = lt.is_numeric() && rt.is_numeric();
    match op {
        Add | Sub | Mul => {
            if !numeric {
                Err(mismatch(
                    e,
                    format!("`{}` needs numbers, found {lt} and {rt}", op.symbol()),
                ))
            } else if lt == Type::Int && rt == Type::Int {
                Ok(Type::Int)
            } else {
                Ok(Type::Double)
            }
        }
        Div => {
            if numeric {
                Ok(Type::Double)
            } else {
                Err(mismatch(
                    e,
                    format!("`/` needs numbers, found {lt} and {rt}"),
                ))
            }
        }
        Cmp(c) if !c.is_equality() => {
            if numeric {
                Ok(Type::Bool)
            } else {
                Err(mismatch(
                    e,
                    format!("`{}` needs numbers, found {lt} and {rt}", op.symbol()),
                ))
            }
        }
        Cmp(_) => {
            if numeric || (lt == Type::Bool && rt == Type::Bool) {
                Ok(Type::Bool)
            } else {
                Err(mismatch(e, format!("cannot compare {lt} with {rt}")))
            }
        }
        And | Or | Implies | Iff => {
            if lt == Type::Bool && rt == Type::Bool {
                Ok(Type::Bool)
            } else {
                Err(mismatch(
                    e,
                    format!("`{}` needs bools, found {lt} and {rt}", op.symbol()),
                ))
            }
        }
    }
}

fn not_nan(e: &Expr, d: f64) -> Result<Value> {
    if d.is_nan() {
        Err(ExprError::NotANumber(e.to_string()))
    } else {
        Ok(Value::Double(d))
    }
}

fn eval_binary(e: &Expr, op: BinaryOp, lv: Value, rv: Value) -> Result<Value> {
    use BinaryOp::*;
    let overflow = || ExprError::Overflow(e.to_string());
    match (op, lv, rv) {
        (Add, Value::Int(a), Value::Int(b)) => {
            a.checked_add(b).map(Value::Int).ok_or_else(overflow)
        }
        (Sub, Value::Int(a), Value::Int(b)) => {
            a.checked_sub(b).map(Value::Int).ok_or_else(overflow)
        }
        (Mul, Value::Int(a), Value::Int(b)) => {
            a.checked_mul(b).map(Value::Int).ok_or_else(overflow)
        }
        (Cmp(c), Value::Bool(a), Value::Bool(b)) if c.is_equality() => {
            Ok(Value::Bool(c.holds(&a, &b)))
        }
        (Iff, Value::Bool(a), Value::Bool(b)) => Ok(Value::Bool(a == b)),
        (Cmp(c), Value::Int(a), Value::Int(b)) => Ok(Value::Bool(c.holds(&a, &b))),
        (Add | Sub | Mul | Div | Cmp(_), _, _) => {
            let (Some(a), Some(b)) = (lv.as_f64(), rv.as_f64()) else {
                return Err(match binary_type(e, op, lv.ty(), rv.ty()) {
                    Err(err) => err,
                    Ok(_) => mismatch(e, "operands must be numbers"),
                });
            };
            match op {
                Add => not_nan(e, a + b),
                Sub => not_nan(e, a - b),
                Mul => not_nan(e, a * b),
                Div => {
                    if b == 0.0 {
                        Err(ExprError::DivisionByZero(e.to_string()))
                    } else {
                        not_nan(e, a / b)
                    }
                }
                Cmp(c) => Ok(Value::Bool(c.holds(&a, &b))),
                And | Or | Implies | Iff => unreachable!("matched by the outer arm"),
            }
        }
        (And | Or | Implies | Iff, _, _) => Err(match binary_type(e, op, lv.ty(), rv.ty()) {
            Err(err) => err,
            Ok(_) => mismatch(e, "operands must be bools"),
        }),
    }
}

fn to_int(e: &Expr, d: f64) -> Result<Value> {
    if !d.is_finite() {
        return Err(ExprError::NotANumber(e.to_string()));
    }
    // i64::MIN is exactly representable; the open upper bound 2^63 is too.
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        return Err(ExprError::Overflow(e.to_string()));
    }
    Ok(Value::Int(d as i64))
}

/// Invariant: `vals.len()` satisfies `arity(func)` (checked by the caller with `check_arity`),
/// so the argument indexing below is in bounds.
fn eval_call(e: &Expr, func: Func, vals: &[Value]) -> Result<Value> {
    let mut nums = Vec::with_capacity(vals.len());
    for v in vals {
        match v.as_f64() {
            Some(x) => nums.push(x),
            None => {
                return Err(mismatch(
                    e,
                    format!("`{}` needs numbers, found bool", func.name()),
                ))
            }
        }
    }
    let ints: Option<Vec<i64>> = vals.iter().map(Value::as_i64).collect();
    match func {
        Func::Min | Func::Max => {
            if let Some(ints) = ints {
                let v = if func == Func::Min {
                    ints.iter().min()
                } else {
                    ints.iter().max()
                };
                v.map(|v| Value::Int(*v))
                    .ok_or_else(|| mismatch(e, "no arguments"))
            } else {
                let mut acc = nums[0];
                for &x in &nums[1..] {
                    acc = if func == Func::Min {
                        acc.min(x)
                    } else {
                        acc.max(x)
                    };
                }
                not_nan(e, acc)
            }
        }
        Func::Floor => match vals[0] {
            Value::Int(i) => Ok(Value::Int(i)),
            _ => to_int(e, nums[0].floor()),
        },
        Func::Ceil => match vals[0] {
            Value::Int(i) => Ok(Value::Int(i)),
            _ => to_int(e, nums[0].ceil()),
        },
        Func::Round => match vals[0] {
            Value::Int(i) => Ok(Value::Int(i)),
            // PRISM rounds ties up: round(-1.5) = -1.
            _ => {
                let x = nums[0];
                let f = x.floor();
                to_int(e, if x - f >= 0.5 { f + 1.0 } else { f })
            }
        },
        Func::Pow => match ints.as_deref() {
            Some(&[base, exp]) => {
                if exp < 0 {
                    return Err(ExprError::NegativeExponent(e.to_string()));
                }
                let exp = u32::try_from(exp).map_err(|_| ExprError::Overflow(e.to_string()))?;
                base.checked_pow(exp)
                    .map(Value::Int)
                    .ok_or_else(|| ExprError::Overflow(e.to_string()))
            }
            _ => not_nan(e, nums[0].powf(nums[1])),
        },
        Func::Mod => match ints.as_deref() {
            Some(&[i, n]) => {
                if n <= 0 {
                    Err(ExprError::ModuloByNonPositive(e.to_string()))
                } else {
                    Ok(Value::Int(i.rem_euclid(n)))
                }
            }
            _ => Err(mismatch(e, "`mod` needs ints")),
        },
        Func::Log => not_nan(e, nums[0].ln() / nums[1].ln()),
    }
}
