//! [`RatFunc`]: a rational function `num / den` over the rationals in lowest terms.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use polycore::{Monomial, Order};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A sparse multivariate polynomial with rational coefficients (polycore's, graded reverse
/// lexicographic order, variable `i` the `i`-th parameter).
pub type Poly = polycore::Poly<BigRational>;

/// The monomial order every polynomial of this crate uses.
pub(crate) fn order() -> Order {
    Order::GRevLex
}

/// A rational function of `n` parameters, `num / den`, with no common factor (cancelled by
/// their gcd) and `den` monic (leading coefficient 1): two equal functions have the same
/// representation, so `==` is equality of functions. Zero is `0 / 1`.
///
/// Every function of one computation has the same number of parameters ([`RatFunc::nvars`]);
/// the arithmetic operators take references (`&a + &b`) and panic on a division by the zero
/// function, which callers rule out first ([`RatFunc::is_zero`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatFunc {
    num: Poly,
    den: Poly,
}

/// `gcd(f, g)` and the cofactors `f / gcd`, `g / gcd`; the trivial split when either is a
/// constant (no gcd is computed).
fn cofactors(f: &Poly, g: &Poly) -> (Poly, Poly, Poly) {
    if f.is_constant() || g.is_constant() || f.is_zero() || g.is_zero() {
        let one = Poly::constant(BigRational::one(), f.nvars, order());
        return (one, f.clone(), g.clone());
    }
    zippel_gcd::cofactors(f, g)
}

impl RatFunc {
    /// The constant `q` as a function of `n` parameters.
    pub fn constant(q: BigRational, n: usize) -> RatFunc {
        RatFunc {
            num: Poly::constant(q, n, order()),
            den: Poly::constant(BigRational::one(), n, order()),
        }
    }

    /// The constant 0.
    pub fn zero(n: usize) -> RatFunc {
        RatFunc::constant(BigRational::zero(), n)
    }

    /// The constant 1.
    pub fn one(n: usize) -> RatFunc {
        RatFunc::constant(BigRational::one(), n)
    }

    /// The integer `k`.
    pub fn integer(k: i64, n: usize) -> RatFunc {
        RatFunc::constant(BigRational::from_integer(k.into()), n)
    }

    /// The `i`-th parameter.
    pub fn var(i: usize, n: usize) -> RatFunc {
        RatFunc {
            num: Poly::var(i, n, order()),
            den: Poly::constant(BigRational::one(), n, order()),
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

    /// `num / den`, already without a common factor: made monic.
    fn normalised(num: Poly, den: Poly) -> RatFunc {
        let n = den.nvars;
        if num.is_zero() {
            return RatFunc::zero(n);
        }
        match den.lc() {
            Some(l) if !l.is_one() => {
                let inv = l.recip();
                RatFunc {
                    num: num.scale(&inv),
                    den: den.scale(&inv),
                }
            }
            _ => RatFunc { num, den },
        }
    }

    /// The number of parameters.
    pub fn nvars(&self) -> usize {
        self.den.nvars
    }

    /// The numerator (coprime to the denominator).
    pub fn numerator(&self) -> &Poly {
        &self.num
    }

    /// The denominator (monic).
    pub fn denominator(&self) -> &Poly {
        &self.den
    }

    /// Whether this is the zero function.
    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// Whether this is the constant 1.
    pub fn is_one(&self) -> bool {
        self.den.is_constant() && self.num.is_constant() && self.num.lc().is_some_and(One::is_one)
    }

    /// The value, when the function is a constant.
    pub fn as_constant(&self) -> Option<BigRational> {
        if !self.den.is_constant() || !self.num.is_constant() {
            return None;
        }
        Some(self.num.lc().cloned().unwrap_or_else(BigRational::zero))
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
            for (m, _) in &p.terms {
                for (o, e) in out.iter_mut().zip(m.exps()) {
                    *o |= *e > 0;
                }
            }
        }
        out
    }

    /// The value at the point `x` (one rational per parameter), `None` at a pole.
    pub fn eval(&self, x: &[BigRational]) -> Option<BigRational> {
        let d = eval_poly(&self.den, x);
        if d.is_zero() {
            return None;
        }
        Some(eval_poly(&self.num, x) / d)
    }

    /// The value at `x` in floating point (NaN or an infinity at a pole).
    pub fn eval_f64(&self, x: &[f64]) -> f64 {
        eval_poly_f64(&self.num, x) / eval_poly_f64(&self.den, x)
    }

    /// The function with parameter `i` replaced by the rational `v` (still a function of
    /// `n` parameters; `i` no longer occurs). `None` when the denominator vanishes there.
    pub fn substitute(&self, i: usize, v: &BigRational) -> Option<RatFunc> {
        let num = self.num.eval_var(i, v);
        let den = self.den.eval_var(i, v);
        RatFunc::from_polys(num, den)
    }

    /// The partial derivative in parameter `i`.
    pub fn derivative(&self, i: usize) -> RatFunc {
        // (n/d)' = (n' d - n d') / d^2
        let dn = self.num.derivative(i);
        let dd = self.den.derivative(i);
        let top = &(&dn * &self.den) - &(&self.num * &dd);
        let bottom = &self.den * &self.den;
        RatFunc::from_polys(top, bottom).expect("a non-zero denominator squared")
    }

    /// `1 / self` (`None` for the zero function).
    pub fn recip(&self) -> Option<RatFunc> {
        if self.is_zero() {
            return None;
        }
        Some(RatFunc::normalised(self.den.clone(), self.num.clone()))
    }

    /// `1 - self`.
    pub fn one_minus(&self) -> RatFunc {
        &RatFunc::one(self.nvars()) - self
    }

    /// The numerator and denominator scaled to coprime integer coefficients, the
    /// denominator's leading coefficient positive: the form [`RatFunc`]'s `Display` and the
    /// JSON coefficient lists use.
    pub fn integer_form(&self) -> (IntPoly, IntPoly) {
        let mut l = BigInt::one();
        for p in [&self.num, &self.den] {
            for (_, c) in &p.terms {
                l = l.lcm(c.denom());
            }
        }
        let scaled = |p: &Poly| -> Vec<(Vec<u32>, BigInt)> {
            p.terms
                .iter()
                .map(|(m, c)| (m.exps().to_vec(), c.numer() * (&l / c.denom())))
                .collect()
        };
        let (mut n, mut d) = (scaled(&self.num), scaled(&self.den));
        let mut g = BigInt::zero();
        for (_, c) in n.iter().chain(d.iter()) {
            g = g.gcd(c);
        }
        if !g.is_zero() && !g.is_one() {
            for (_, c) in n.iter_mut().chain(d.iter_mut()) {
                *c = &*c / &g;
            }
        }
        if d.first().is_some_and(|(_, c)| c.is_negative()) {
            for (_, c) in n.iter_mut().chain(d.iter_mut()) {
                *c = -&*c;
            }
        }
        (IntPoly { terms: n }, IntPoly { terms: d })
    }

    /// A form of the function cheap to evaluate in floating point many times (regions,
    /// sampling).
    pub fn compiled(&self) -> CompiledFunc {
        let f = |p: &Poly| -> Vec<(Vec<u32>, f64)> {
            p.terms
                .iter()
                .map(|(m, c)| (m.exps().to_vec(), rational_f64(c)))
                .collect()
        };
        CompiledFunc {
            num: f(&self.num),
            den: f(&self.den),
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

fn eval_poly(p: &Poly, x: &[BigRational]) -> BigRational {
    let mut total = BigRational::zero();
    for (m, c) in &p.terms {
        let mut t = c.clone();
        for (&k, xi) in m.exps().iter().zip(x) {
            if k > 0 {
                t *= num_traits::pow(xi.clone(), k as usize);
            }
        }
        total += t;
    }
    total
}

fn eval_poly_f64(p: &Poly, x: &[f64]) -> f64 {
    p.terms
        .iter()
        .map(|(m, c)| {
            m.exps()
                .iter()
                .zip(x)
                .fold(rational_f64(c), |acc, (&k, &xi)| acc * xi.powi(k as i32))
        })
        .sum()
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
            let n = &self.num + &o.num;
            if self.den.is_constant() {
                return RatFunc::normalised(n, self.den.clone());
            }
            let (_, n, d) = cofactors(&n, &self.den);
            return RatFunc::normalised(n, d);
        }
        // b = g b', d = g d': a/b + c/d = (a d' + c b') / (g b' d'), and only g can share a
        // factor with the new numerator.
        let (g, b1, d1) = cofactors(&self.den, &o.den);
        let n = &(&self.num * &d1) + &(&o.num * &b1);
        let (_, n, g1) = cofactors(&n, &g);
        RatFunc::normalised(n, &(&b1 * &d1) * &g1)
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
        RatFunc {
            num: -&self.num,
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
        RatFunc::normalised(&a * &c, &b * &d)
    }
}

impl Div for &RatFunc {
    type Output = RatFunc;
    fn div(self, o: &RatFunc) -> RatFunc {
        let inv = o.recip().expect("division by the zero function");
        self.mul(&inv)
    }
}

/// A monomial of `n` variables with the given exponents.
pub fn monomial(exps: &[u32]) -> Monomial {
    Monomial::new(exps.to_vec())
}
