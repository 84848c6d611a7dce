//! Helpers on [`Value`] and [`Type`].

use crate::ast::{Type, Value};
use std::fmt;

impl Value {
    /// The value's type.
    pub fn ty(&self) -> Type {
        match self {
            Value::Int(_) => Type::Int,
            Value::Double(_) => Type::Double,
            Value::Bool(_) => Type::Bool,
        }
    }

    /// The value as a double (ints are converted); `None` for booleans.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Double(d) => Some(d),
            Value::Bool(_) => None,
        }
    }

    /// The value as an int; `None` for doubles and booleans.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    /// The value as a boolean; `None` for numbers.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// Converts the value to type `ty` where PRISM allows it implicitly (int to double);
    /// `None` otherwise.
    pub fn coerce(&self, ty: Type) -> Option<Value> {
        match (*self, ty) {
            (v, t) if v.ty() == t => Some(v),
            (Value::Int(i), Type::Double) => Some(Value::Double(i as f64)),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// Ints as digits, doubles in Rust's shortest round-trip form (always with a `.` or an
    /// exponent, e.g. `1.0`, `0.1`, `1e-7`; `inf`, `-inf`, `NaN` for non-finite values),
    /// booleans as `true` / `false`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d:?}"),
            Value::Bool(b) => write!(f, "{b}"),
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Type::Int => "int",
            Type::Double => "double",
            Type::Bool => "bool",
        })
    }
}

impl Type {
    /// Whether the type is numeric (int or double).
    pub fn is_numeric(self) -> bool {
        matches!(self, Type::Int | Type::Double)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_and_display() {
        assert_eq!(Value::Int(3).as_f64(), Some(3.0));
        assert_eq!(Value::Double(0.5).as_i64(), None);
        assert_eq!(Value::Bool(true).as_bool(), Some(true));
        assert_eq!(Value::Int(2).as_bool(), None);
        assert_eq!(Value::Double(1.0).to_string(), "1.0");
        assert_eq!(Value::Double(1e-7).to_string(), "1e-7");
        assert_eq!(Value::Int(-4).to_string(), "-4");
        assert_eq!(Value::Int(2).coerce(Type::Double), Some(Value::Double(2.0)));
        assert_eq!(Value::Double(2.0).coerce(Type::Int), None);
        assert_eq!(Type::Double.to_string(), "double");
    }
}
