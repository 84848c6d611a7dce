//! Rational functions as text: PRISM's and Storm's notation out ([`RatFunc::display`]), and
//! in ([`parse`]): `+ - * / ^`, parentheses, integers, decimals (`0.25`, `1e-3`), and
//! parameter names.

use crate::error::{RatFuncError, Result};
use crate::func::{IntPoly, RatFunc};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::One;
use std::fmt;

/// [`RatFunc::display`].
pub struct Display<'a> {
    f: &'a RatFunc,
    names: &'a [String],
}

impl RatFunc {
    /// The function in PRISM's and Storm's notation with the parameters named `names`:
    /// `(p^2)/(p+1)`, `-p/(2*p-4)`, `1/2`; integer coefficients, the denominator's leading
    /// coefficient positive.
    pub fn display<'a>(&'a self, names: &'a [String]) -> Display<'a> {
        Display { f: self, names }
    }
}

fn monomial(exps: &[u32], names: &[String]) -> String {
    let mut parts = Vec::new();
    for (i, &e) in exps.iter().enumerate() {
        let name = names.get(i).map_or_else(|| format!("x{i}"), Clone::clone);
        match e {
            0 => {}
            1 => parts.push(name),
            e => parts.push(format!("{name}^{e}")),
        }
    }
    parts.join("*")
}

/// A polynomial with integer coefficients as PRISM writes it: `2*p^2-p+1`.
pub fn poly_text(p: &IntPoly, names: &[String]) -> String {
    if p.terms.is_empty() {
        return "0".into();
    }
    let mut out = String::new();
    for (k, (m, c)) in p.terms.iter().enumerate() {
        let mono = monomial(m, names);
        let term = if mono.is_empty() {
            c.to_string()
        } else if c.is_one() {
            mono
        } else if *c == -BigInt::one() {
            format!("-{mono}")
        } else {
            format!("{c}*{mono}")
        };
        if k > 0 && !term.starts_with('-') {
            out.push('+');
        }
        out.push_str(&term);
    }
    out
}

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, d) = self.f.integer_form();
        let num = poly_text(&n, self.names);
        let single = n.terms.len() <= 1;
        match d.terms.as_slice() {
            [(m, c)] if m.iter().all(|&e| e == 0) => {
                if c.is_one() {
                    f.write_str(&num)
                } else if single {
                    write!(f, "{num}/{c}")
                } else {
                    write!(f, "({num})/{c}")
                }
            }
            _ => write!(f, "({num})/({})", poly_text(&d, self.names)),
        }
    }
}

/// Reads a rational function of `n` parameters from `text`; `param(name)` is the index of a
/// parameter name (`None`: not a parameter, an error at the name).
pub fn parse(text: &str, n: usize, param: &dyn Fn(&str) -> Option<usize>) -> Result<RatFunc> {
    let mut p = Parser {
        text,
        pos: 0,
        n,
        param,
    };
    p.skip_ws();
    let f = p.expr()?;
    p.skip_ws();
    if p.pos < text.len() {
        return Err(p.err("unexpected text after the expression"));
    }
    Ok(f)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    n: usize,
    param: &'a dyn Fn(&str) -> Option<usize>,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> RatFuncError {
        RatFuncError::Parse {
            message: message.into(),
            offset: self.pos,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Result<RatFunc> {
        let mut acc = self.term()?;
        loop {
            if self.eat(b'+') {
                acc = &acc + &self.term()?;
            } else if self.eat(b'-') {
                acc = &acc - &self.term()?;
            } else {
                return Ok(acc);
            }
        }
    }

    fn term(&mut self) -> Result<RatFunc> {
        let mut acc = self.unary()?;
        loop {
            if self.eat(b'*') {
                acc = &acc * &self.unary()?;
            } else if self.eat(b'/') {
                let at = self.pos;
                let d = self.unary()?;
                if d.is_zero() {
                    self.pos = at;
                    return Err(self.err("division by zero"));
                }
                acc = &acc / &d;
            } else {
                return Ok(acc);
            }
        }
    }

    fn unary(&mut self) -> Result<RatFunc> {
        if self.eat(b'-') {
            return Ok(-&self.unary()?);
        }
        if self.eat(b'+') {
            return self.unary();
        }
        self.power()
    }

    fn power(&mut self) -> Result<RatFunc> {
        let base = self.atom()?;
        if !self.eat(b'^') {
            return Ok(base);
        }
        self.skip_ws();
        let neg = self.eat(b'-');
        self.skip_ws();
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let e: u32 = self.text[start..self.pos].parse().map_err(|_| {
            self.pos = start;
            self.err("an exponent must be an integer (at most 2^32 - 1)")
        })?;
        if e > 100_000 {
            self.pos = start;
            return Err(self.err("exponent larger than 100000"));
        }
        let mut acc = RatFunc::one(self.n);
        let mut b = base;
        let mut k = e;
        while k > 0 {
            if k & 1 == 1 {
                acc = &acc * &b;
            }
            k >>= 1;
            if k > 0 {
                b = &b * &b;
            }
        }
        if neg {
            return acc.recip().ok_or_else(|| {
                self.pos = start;
                self.err("0 to a negative power")
            });
        }
        Ok(acc)
    }

    fn atom(&mut self) -> Result<RatFunc> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let e = self.expr()?;
                if !self.eat(b')') {
                    return Err(self.err("expected `)`"));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'.') {
                    self.pos += 1;
                }
                if matches!(self.peek(), Some(b'e' | b'E')) {
                    let save = self.pos;
                    self.pos += 1;
                    if matches!(self.peek(), Some(b'+' | b'-')) {
                        self.pos += 1;
                    }
                    if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                            self.pos += 1;
                        }
                    } else {
                        self.pos = save;
                    }
                }
                let q = decimal(&self.text[start..self.pos]).ok_or_else(|| {
                    self.pos = start;
                    self.err("not a number")
                })?;
                Ok(RatFunc::constant(q, self.n))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    self.pos += 1;
                }
                let name = &self.text[start..self.pos];
                match (self.param)(name) {
                    Some(i) if i < self.n => Ok(RatFunc::var(i, self.n)),
                    _ => {
                        self.pos = start;
                        Err(self.err(format!("`{name}` is not a parameter")))
                    }
                }
            }
            None => Err(self.err("unexpected end of the expression")),
            Some(_) => Err(self.err("expected a number, a parameter or `(`")),
        }
    }
}

/// The exact rational of a decimal numeral (`0.25`, `3`, `1.5e-3`).
pub fn decimal(text: &str) -> Option<BigRational> {
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mantissa, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    if exp.unsigned_abs() > 10_000 {
        return None;
    }
    let digits: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = exp - frac.len() as i32;
    let ten = BigInt::from(10);
    let q = if scale >= 0 {
        BigRational::from_integer(digits * num_traits::pow(ten, scale as usize))
    } else {
        BigRational::new(digits, num_traits::pow(ten, (-scale) as usize))
    };
    Some(q)
}

/// `q` as text: `1/3`, `-2`.
pub fn rational_text(q: &BigRational) -> String {
    if q.is_integer() {
        q.numer().to_string()
    } else {
        format!("{}/{}", q.numer(), q.denom())
    }
}
