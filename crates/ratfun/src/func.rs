//! [`RatFunc`]: a rational function `num / den` with integer-coefficient polynomials in
//! lowest terms.

use crate::poly::{cofactors, Poly};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A rational function of `n` parameters, `num / den`: integer-coefficient polynomials with
/// no common factor (cancelled by their gcd), no common integer factor of all their
/// coefficients, and the denominator's leading coefficient positive. Two equal functions have
/// the same representation, so `==` is equality of functions. Zero is `0 / 1`.
///
/// Every function of one computation has the same number of parameters ([`RatFunc::nvars`]);
/// the arithmetic operators take references (`&a + &b`) and panic on a division by the zero
/// function, which callers rule out first ([`RatFunc::is_zero`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RatFunc {
    num: Poly,
    den: Poly,
}

impl RatFunc {
    /// The constant `q` as a function of `n` parameters.
    pub fn constant(q: BigRational, n: usize) -> RatFunc {
        if q.is_zero() {
            return RatFunc::zero(n);
        }
        RatFunc {
            num: Poly::constant(q.numer().clone(), n),
            den: Poly::constant(q.denom().clone(), n),
        }
    }

    /// The constant 0.
    pub fn zero(n: usize) -> RatFunc {
        RatFunc {
            num: Poly::zero(n),
            den: Poly::constant(BigInt::one(), n),
        }
    }

    /// The constant 1.
    pub fn one(n: usize) -> RatFunc {
        RatFunc::integer(1, n)
    }

    /// The integer `k`.
    pub fn integer(k: i64, n: usize) -> RatFunc {
        RatFunc::constant(BigRational::from_integer(k.into()), n)
    }

    /// The `i`-th parameter.
    pub fn var(i: usize, n: usize) -> RatFunc {
        RatFunc {
            num: Poly::var(i, n),
            den: Poly::constant(BigInt::one(), n),
        }
    }

    /// `num / den` in lowest terms (`None` when `den` is the zero polynomial).
    pub fn from_polys(num: Poly, den: Poly) -> Option<RatFunc> {
        if den.is_zero() {
            return None;
        }
        let (_, n, d) = cofactors(&num, &den);
        Some(RatFunc::normalised(n, d))
    }

    /// `num / den`, already without a common polynomial factor: divided by the integer gcd of
    /// all coefficients, the denominator's leading coefficient made positive.
    fn normalised(mut num: Poly, mut den: Poly) -> RatFunc {
        let n = den.nvars();
        if num.is_zero() {
            return RatFunc::zero(n);
        }
        // The denominator's content first (often 1, or one constant), then the numerator's
        // coefficients until the gcd reaches 1.
        let g = num.content_with(den.content());
        if !g.is_one() {
            num = num.div_scalar(&g);
            den = den.div_scalar(&g);
        }
        if den.lc_negative() {
            num.negate();
            den.negate();
        }
        RatFunc { num, den }
    }

    /// The number of parameters.
    pub fn nvars(&self) -> usize {
        self.den.nvars()
    }

    /// The numerator (coprime to the denominator).
    pub fn numerator(&self) -> &Poly {
        &self.num
    }

    /// The denominator (its leading coefficient positive).
    pub fn denominator(&self) -> &Poly {
        &self.den
    }

    /// Whether this is the zero function.
    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// Whether this is the constant 1.
    pub fn is_one(&self) -> bool {
        self.den.is_constant() && self.num.is_constant() && self.num == self.den
    }

    /// The value, when the function is a constant.
    pub fn as_constant(&self) -> Option<BigRational> {
        if !self.den.is_constant() || !self.num.is_constant() {
            return None;
        }
        let n = self.num.lc().cloned().unwrap_or_else(BigInt::zero);
        Some(BigRational::new(n, self.den.lc()?.clone()))
    }

    /// Whether the function is a polynomial (its denominator a constant).
    pub fn is_polynomial(&self) -> bool {
        self.den.is_constant()
    }

    /// The highest exponent of parameter `i` in the numerator and in the denominator.
    pub fn degrees(&self, i: usize) -> (u32, u32) {
        (self.num.degree(i), self.den.degree(i))
    }

    /// Which parameters occur.
    pub fn occurring(&self) -> Vec<bool> {
        let mut out = vec![false; self.nvars()];
        for p in [&self.num, &self.den] {
            for (m, _) in p.terms() {
                for (o, e) in out.iter_mut().zip(m) {
                    *o |= *e > 0;
                }
            }
        }
        out
    }

    /// The value at the point `x` (one rational per parameter), `None` at a pole.
    pub fn eval(&self, x: &[BigRational]) -> Option<BigRational> {
        let d = self.den.eval(x);
        if d.is_zero() {
            return None;
        }
        Some(self.num.eval(x) / d)
    }

    /// The value at `x` in floating point (NaN or an infinity at a pole).
    pub fn eval_f64(&self, x: &[f64]) -> f64 {
        self.compiled().eval(x)
    }

    /// The function with parameter `i` replaced by the rational `v` (still a function of
    /// `n` parameters; `i` no longer occurs). `None` when the denominator vanishes there.
    pub fn substitute(&self, i: usize, v: &BigRational) -> Option<RatFunc> {
        // Both scaled by the same power of v's denominator.
        let d = self.num.degree(i).max(self.den.degree(i));
        let num = self.num.eval_var_scaled(i, v.numer(), v.denom(), d);
        let den = self.den.eval_var_scaled(i, v.numer(), v.denom(), d);
        RatFunc::from_polys(num, den)
    }

    /// The partial derivative in parameter `i`.
    pub fn derivative(&self, i: usize) -> RatFunc {
        // (n/d)' = (n' d - n d') / d^2
        let dn = self.num.derivative(i);
        let dd = self.den.derivative(i);
        let top = dn.mul(&self.den).sub(&self.num.mul(&dd));
        let bottom = self.den.mul(&self.den);
        RatFunc::from_polys(top, bottom).expect("a non-zero denominator squared")
    }

    /// `1 / self` (`None` for the zero function).
    pub fn recip(&self) -> Option<RatFunc> {
        if self.is_zero() {
            return None;
        }
        let (mut num, mut den) = (self.den.clone(), self.num.clone());
        if den.lc_negative() {
            num.negate();
            den.negate();
        }
        Some(RatFunc { num, den })
    }

    /// `1 - self`.
    pub fn one_minus(&self) -> RatFunc {
        &RatFunc::one(self.nvars()) - self
    }

    /// The numerator and denominator with coprime integer coefficients, the denominator's
    /// leading coefficient positive: the form [`RatFunc`]'s `Display` and the JSON
    /// coefficient lists use.
    pub fn integer_form(&self) -> (IntPoly, IntPoly) {
        let f = |p: &Poly| IntPoly {
            terms: p.terms().map(|(e, c)| (e.to_vec(), c.clone())).collect(),
        };
        (f(&self.num), f(&self.den))
    }

    /// A form of the function cheap to evaluate in floating point many times (regions,
    /// sampling).
    pub fn compiled(&self) -> CompiledFunc {
        // Coefficients beyond the range of doubles are scaled down together.
        let shift = self
            .num
            .max_bits()
            .max(self.den.max_bits())
            .saturating_sub(900);
        CompiledFunc {
            num: self.num.f64_terms(shift),
            den: self.den.f64_terms(shift),
        }
    }
}

/// A polynomial with integer coefficients: `(exponents, coefficient)` per term, in
/// descending graded order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntPoly {
    /// The terms.
    pub terms: Vec<(Vec<u32>, BigInt)>,
}

/// A rational function with `f64` coefficients ([`RatFunc::compiled`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledFunc {
    num: Vec<(Vec<u32>, f64)>,
    den: Vec<(Vec<u32>, f64)>,
}

impl CompiledFunc {
    /// The numerator's terms, `(exponents, coefficient)` (scaled by the same power of two as
    /// the denominator's when the exact coefficients exceed the range of doubles).
    pub fn numerator(&self) -> &[(Vec<u32>, f64)] {
        &self.num
    }

    /// The denominator's terms, scaled like [`CompiledFunc::numerator`]'s.
    pub fn denominator(&self) -> &[(Vec<u32>, f64)] {
        &self.den
    }

    /// The value at `x`.
    pub fn eval(&self, x: &[f64]) -> f64 {
        let e = |terms: &[(Vec<u32>, f64)]| -> f64 {
            terms
                .iter()
                .map(|(m, c)| {
                    m.iter()
                        .zip(x)
                        .fold(*c, |acc, (&k, &xi)| acc * xi.powi(k as i32))
                })
                .sum()
        };
        e(&self.num) / e(&self.den)
    }
}

/// The nearest `f64` of a rational (0 or an infinity beyond the range of doubles).
pub fn rational_f64(q: &BigRational) -> f64 {
    if let Some(f) = q.to_f64() {
        if f.is_finite() {
            return f;
        }
    }
    let shift = q.numer().bits() as i64 - q.denom().bits() as i64;
    let scaled = if shift > 0 {
        q / BigRational::from_integer(BigInt::one() << (shift as usize))
    } else {
        q * BigRational::from_integer(BigInt::one() << ((-shift) as usize))
    };
    scaled.to_f64().unwrap_or(0.0) * 2f64.powi(shift.clamp(-2000, 2000) as i32)
}

impl Add for &RatFunc {
    type Output = RatFunc;
    fn add(self, o: &RatFunc) -> RatFunc {
        if self.is_zero() {
            return o.clone();
        }
        if o.is_zero() {
            return self.clone();
        }
        if self.den == o.den {
            let n = self.num.add(&o.num);
            if self.den.is_constant() {
                return RatFunc::normalised(n, self.den.clone());
            }
            let (_, n, d) = cofactors(&n, &self.den);
            return RatFunc::normalised(n, d);
        }
        // b = g b', d = g d': a/b + c/d = (a d' + c b') / (g b' d'), and only g can share a
        // factor with the new numerator.
        let (g, b1, d1) = cofactors(&self.den, &o.den);
        let n = self.num.mul(&d1).add(&o.num.mul(&b1));
        let (_, n, g1) = cofactors(&n, &g);
        RatFunc::normalised(n, b1.mul(&d1).mul(&g1))
    }
}

impl Sub for &RatFunc {
    type Output = RatFunc;
    fn sub(self, o: &RatFunc) -> RatFunc {
        self + &(-o)
    }
}

impl Neg for &RatFunc {
    type Output = RatFunc;
    fn neg(self) -> RatFunc {
        let mut num = self.num.clone();
        num.negate();
        RatFunc {
            num,
            den: self.den.clone(),
        }
    }
}

impl Mul for &RatFunc {
    type Output = RatFunc;
    fn mul(self, o: &RatFunc) -> RatFunc {
        if self.is_zero() || o.is_zero() {
            return RatFunc::zero(self.nvars());
        }
        if self.is_one() {
            return o.clone();
        }
        if o.is_one() {
            return self.clone();
        }
        // (a/b)(c/d) with a, d and c, b cancelled crosswise.
        let (_, a, d) = cofactors(&self.num, &o.den);
        let (_, c, b) = cofactors(&o.num, &self.den);
        RatFunc::normalised(a.mul(&c), b.mul(&d))
    }
}

impl Div for &RatFunc {
    type Output = RatFunc;
    fn div(self, o: &RatFunc) -> RatFunc {
        let inv = o.recip().expect("division by the zero function");
        self.mul(&inv)
    }
}
