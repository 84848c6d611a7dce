//! [`Poly`]: sparse multivariate polynomials with integer coefficients, the numerators and
//! denominators of [`crate::RatFunc`].
//!
//! Terms are kept in descending graded reverse lexicographic order with flat exponent storage
//! (no allocation per term). Multiplication collects the products and sorts them once (not
//! one merge per term of a factor); exact division and the gcd are delegated to `polycore`'s
//! sparse exact division and the `zippel-gcd` crate, after a cheap modular test that proves
//! most coprime pairs coprime without a gcd.

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use polycore::{Monomial, Order};
use std::cmp::Ordering;

/// A sparse multivariate polynomial with integer coefficients in `nvars` variables (variable
/// `i` the `i`-th parameter), its terms in descending graded reverse lexicographic order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Poly {
    nvars: usize,
    /// Term `k`'s exponents: `exps[k * nvars..(k + 1) * nvars]`.
    exps: Vec<u32>,
    coefs: Vec<BigInt>,
}

/// Graded reverse lexicographic comparison of two exponent vectors.
pub(crate) fn grevlex(a: &[u32], b: &[u32]) -> Ordering {
    let (da, db): (u64, u64) = (
        a.iter().map(|&e| u64::from(e)).sum(),
        b.iter().map(|&e| u64::from(e)).sum(),
    );
    if da != db {
        return da.cmp(&db);
    }
    for (x, y) in a.iter().zip(b).rev() {
        if x != y {
            // A smaller exponent in the last differing variable is the greater monomial.
            return y.cmp(x);
        }
    }
    Ordering::Equal
}

impl Poly {
    /// The zero polynomial.
    pub fn zero(nvars: usize) -> Poly {
        Poly {
            nvars,
            exps: Vec::new(),
            coefs: Vec::new(),
        }
    }

    /// The constant `c`.
    pub fn constant(c: BigInt, nvars: usize) -> Poly {
        if c.is_zero() {
            return Poly::zero(nvars);
        }
        Poly {
            nvars,
            exps: vec![0; nvars],
            coefs: vec![c],
        }
    }

    /// The variable `x_i`.
    pub fn var(i: usize, nvars: usize) -> Poly {
        let mut exps = vec![0; nvars];
        exps[i] = 1;
        Poly {
            nvars,
            exps,
            coefs: vec![BigInt::one()],
        }
    }

    /// The polynomial of the given terms (in any order; like terms are added, zeros dropped).
    pub fn from_terms(nvars: usize, terms: impl IntoIterator<Item = (Vec<u32>, BigInt)>) -> Poly {
        let mut exps = Vec::new();
        let mut coefs = Vec::new();
        for (e, c) in terms {
            assert_eq!(e.len(), nvars, "a term with the wrong number of variables");
            exps.extend_from_slice(&e);
            coefs.push(c);
        }
        Poly::normalise(nvars, exps, coefs)
    }

    /// Sorts flat terms, adds like terms and drops zeros.
    fn normalise(nvars: usize, exps: Vec<u32>, coefs: Vec<BigInt>) -> Poly {
        let n = coefs.len();
        let mut idx: Vec<u32> = (0..n as u32).collect();
        let ex = |k: u32| &exps[k as usize * nvars..(k as usize + 1) * nvars];
        idx.sort_unstable_by(|&a, &b| grevlex(ex(b), ex(a)));
        let mut out = Poly::zero(nvars);
        let mut coefs: Vec<Option<BigInt>> = coefs.into_iter().map(Some).collect();
        for k in idx {
            let c = coefs[k as usize].take().expect("each term once");
            let e = ex(k);
            if !out.is_empty() && out.exps_of(out.len() - 1) == e {
                let last = out.coefs.last_mut().expect("a term");
                *last += c;
            } else {
                if out.coefs.last().is_some_and(Zero::is_zero) {
                    out.pop();
                }
                out.exps.extend_from_slice(e);
                out.coefs.push(c);
            }
        }
        if out.coefs.last().is_some_and(Zero::is_zero) {
            out.pop();
        }
        out
    }

    fn pop(&mut self) {
        self.coefs.pop();
        self.exps.truncate(self.coefs.len() * self.nvars);
    }

    /// The number of variables.
    pub fn nvars(&self) -> usize {
        self.nvars
    }

    /// The number of terms.
    pub fn len(&self) -> usize {
        self.coefs.len()
    }

    /// Whether this is the zero polynomial.
    pub fn is_empty(&self) -> bool {
        self.coefs.is_empty()
    }

    /// Whether this is the zero polynomial.
    pub fn is_zero(&self) -> bool {
        self.coefs.is_empty()
    }

    /// The exponents of term `k`.
    pub fn exps_of(&self, k: usize) -> &[u32] {
        &self.exps[k * self.nvars..(k + 1) * self.nvars]
    }

    /// The coefficient of term `k`.
    pub fn coef_of(&self, k: usize) -> &BigInt {
        &self.coefs[k]
    }

    /// The terms, `(exponents, coefficient)`, in descending order.
    pub fn terms(&self) -> impl Iterator<Item = (&[u32], &BigInt)> + '_ {
        (0..self.len()).map(move |k| (self.exps_of(k), &self.coefs[k]))
    }

    /// Whether the polynomial is a constant (zero included).
    pub fn is_constant(&self) -> bool {
        match self.len() {
            0 => true,
            1 => self.exps.iter().all(|&e| e == 0),
            _ => false,
        }
    }

    /// The leading coefficient (`None` for zero).
    pub fn lc(&self) -> Option<&BigInt> {
        self.coefs.first()
    }

    /// The highest exponent of `x_i`.
    pub fn degree(&self, i: usize) -> u32 {
        (0..self.len())
            .map(|k| self.exps[k * self.nvars + i])
            .max()
            .unwrap_or(0)
    }

    /// The gcd of the coefficients (positive; 0 for zero).
    pub fn content(&self) -> BigInt {
        self.content_with(BigInt::zero())
    }

    /// The gcd of `g` and the coefficients (stops as soon as it is 1).
    pub fn content_with(&self, g: BigInt) -> BigInt {
        let mut g = g.into_parts().1;
        for c in &self.coefs {
            if g.is_one() {
                break;
            }
            g = uint_gcd(&g, c.magnitude());
        }
        BigInt::from(g)
    }

    /// `c * self`.
    pub fn scale(&self, c: &BigInt) -> Poly {
        if c.is_zero() {
            return Poly::zero(self.nvars);
        }
        Poly {
            nvars: self.nvars,
            exps: self.exps.clone(),
            coefs: self.coefs.iter().map(|a| a * c).collect(),
        }
    }

    /// `self / c` for a `c` dividing every coefficient.
    pub fn div_scalar(&self, c: &BigInt) -> Poly {
        Poly {
            nvars: self.nvars,
            exps: self.exps.clone(),
            coefs: self.coefs.iter().map(|a| a / c).collect(),
        }
    }

    /// `-self`, in place.
    pub fn negate(&mut self) {
        for c in &mut self.coefs {
            *c = -std::mem::take(c);
        }
    }

    /// `self + sign * o`, merging the sorted term lists.
    fn merge(&self, o: &Poly, negate: bool) -> Poly {
        let n = self.nvars;
        let mut out = Poly {
            nvars: n,
            exps: Vec::with_capacity(self.exps.len() + o.exps.len()),
            coefs: Vec::with_capacity(self.len() + o.len()),
        };
        let (mut i, mut j) = (0, 0);
        let other = |c: &BigInt| if negate { -c } else { c.clone() };
        while i < self.len() || j < o.len() {
            let side = if i == self.len() {
                Ordering::Less
            } else if j == o.len() {
                Ordering::Greater
            } else {
                grevlex(self.exps_of(i), o.exps_of(j))
            };
            match side {
                Ordering::Greater => {
                    out.exps.extend_from_slice(self.exps_of(i));
                    out.coefs.push(self.coefs[i].clone());
                    i += 1;
                }
                Ordering::Less => {
                    out.exps.extend_from_slice(o.exps_of(j));
                    out.coefs.push(other(&o.coefs[j]));
                    j += 1;
                }
                Ordering::Equal => {
                    let c = if negate {
                        &self.coefs[i] - &o.coefs[j]
                    } else {
                        &self.coefs[i] + &o.coefs[j]
                    };
                    if !c.is_zero() {
                        out.exps.extend_from_slice(self.exps_of(i));
                        out.coefs.push(c);
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        out
    }

    /// `self + o`.
    pub fn add(&self, o: &Poly) -> Poly {
        self.merge(o, false)
    }

    /// `self - o`.
    pub fn sub(&self, o: &Poly) -> Poly {
        self.merge(o, true)
    }

    /// `self * o`.
    pub fn mul(&self, o: &Poly) -> Poly {
        let n = self.nvars;
        if self.is_zero() || o.is_zero() {
            return Poly::zero(n);
        }
        let (a, b) = if self.len() >= o.len() {
            (self, o)
        } else {
            (o, self)
        };
        if b.len() <= 4 {
            // A few shifted copies of the long factor, merged: no sort.
            let mut terms = b.terms();
            let (e0, c0) = terms.next().expect("a term");
            let mut acc = a.mul_term(e0, c0);
            for (e, c) in terms {
                acc = acc.add(&a.mul_term(e, c));
            }
            return acc;
        }
        let mut exps = Vec::with_capacity(a.len() * b.len() * n);
        let mut coefs = Vec::with_capacity(a.len() * b.len());
        for (eb, cb) in b.terms() {
            for (ea, ca) in a.terms() {
                exps.extend(ea.iter().zip(eb).map(|(x, y)| x + y));
                coefs.push(ca * cb);
            }
        }
        Poly::normalise(n, exps, coefs)
    }

    /// `c x^e · self` (a monomial times a polynomial keeps the order).
    fn mul_term(&self, e: &[u32], c: &BigInt) -> Poly {
        let n = self.nvars;
        let mut exps = self.exps.clone();
        if e.iter().any(|&x| x > 0) {
            for (k, x) in exps.iter_mut().enumerate() {
                *x += e[k % n];
            }
        }
        let coefs = if c.is_one() {
            self.coefs.clone()
        } else {
            self.coefs.iter().map(|x| x * c).collect()
        };
        Poly {
            nvars: n,
            exps,
            coefs,
        }
    }

    /// `self / d` when `d` divides `self` exactly (`None` otherwise).
    pub fn div_exact(&self, d: &Poly) -> Option<Poly> {
        if d.is_zero() {
            return None;
        }
        if d.is_constant() {
            let c = &d.coefs[0];
            return self
                .coefs
                .iter()
                .all(|a| a.is_multiple_of(c))
                .then(|| self.div_scalar(c));
        }
        let terms = |p: &Poly| -> Vec<(Vec<u32>, BigInt)> {
            p.terms().map(|(e, c)| (e.to_vec(), c.clone())).collect()
        };
        let q = polycore::division::exact_lex(self.nvars, &terms(self), &terms(d), None)?;
        Some(Poly::from_terms(self.nvars, q))
    }

    /// The partial derivative in `x_i`.
    pub fn derivative(&self, i: usize) -> Poly {
        let terms = self.terms().filter(|(e, _)| e[i] > 0).map(|(e, c)| {
            let mut e = e.to_vec();
            let k = e[i];
            e[i] -= 1;
            (e, c * BigInt::from(k))
        });
        Poly::from_terms(self.nvars, terms.collect::<Vec<_>>())
    }

    /// `b^d · self(x_i = a / b)` for `d` at least the degree in `x_i` (an integer polynomial).
    pub fn eval_var_scaled(&self, i: usize, a: &BigInt, b: &BigInt, d: u32) -> Poly {
        let terms = self.terms().map(|(e, c)| {
            let mut e = e.to_vec();
            let k = std::mem::take(&mut e[i]);
            let v = c
                * num_traits::pow(a.clone(), k as usize)
                * num_traits::pow(b.clone(), (d - k) as usize);
            (e, v)
        });
        Poly::from_terms(self.nvars, terms.collect::<Vec<_>>())
    }

    /// The value at a rational point. With `x_i = a_i / b_i` and `D_i` the degree in `x_i`,
    /// the sum is taken over the integers, `sum c · prod a_i^k_i · b_i^(D_i - k_i)`, then
    /// divided once by `prod b_i^D_i`: one normalisation instead of one per term, and each
    /// power computed once for all the terms that share it.
    pub fn eval(&self, x: &[BigRational]) -> BigRational {
        let n = self.nvars.min(x.len());
        // Per variable: the exponents that occur, each with a^k · b^(D - k).
        let mut tables: Vec<Vec<(u32, BigInt)>> = Vec::with_capacity(n);
        let mut denom = BigInt::one();
        for (i, xi) in x.iter().enumerate().take(n) {
            let mut ks: Vec<u32> = self.terms().map(|(e, _)| e[i]).collect();
            ks.sort_unstable();
            ks.dedup();
            let d = ks.last().copied().unwrap_or(0);
            let (a, b) = (xi.numer(), xi.denom());
            // a^k ascending, b^(d - k) descending, each by the step from the previous one.
            let mut a_pow = Vec::with_capacity(ks.len());
            let (mut acc, mut at) = (BigInt::one(), 0u32);
            for &k in &ks {
                acc *= num_traits::pow(a.clone(), (k - at) as usize);
                at = k;
                a_pow.push(acc.clone());
            }
            let mut table = vec![(0u32, BigInt::zero()); ks.len()];
            let (mut acc, mut at) = (BigInt::one(), d);
            for (j, &k) in ks.iter().enumerate().rev() {
                acc *= num_traits::pow(b.clone(), (at - k) as usize);
                at = k;
                table[j] = (k, &a_pow[j] * &acc);
            }
            denom *= num_traits::pow(b.clone(), d as usize);
            tables.push(table);
        }
        let mut total = BigInt::zero();
        for (e, c) in self.terms() {
            let mut t = c.clone();
            for (table, &k) in tables.iter().zip(e) {
                let j = table.partition_point(|(kk, _)| *kk < k);
                t *= &table[j].1;
            }
            total += t;
        }
        BigRational::new(total, denom)
    }

    /// The polycore form (rational coefficients), for the gcd.
    fn to_polycore(&self) -> polycore::Poly<BigRational> {
        let terms = self
            .terms()
            .map(|(e, c)| {
                (
                    Monomial::new(e.to_vec()),
                    BigRational::from_integer(c.clone()),
                )
            })
            .collect();
        polycore::Poly {
            terms,
            nvars: self.nvars,
            order: Order::GRevLex,
        }
    }

    /// Back from a polycore polynomial with integer coefficients.
    fn from_polycore(p: &polycore::Poly<BigRational>) -> Poly {
        let terms = p.terms.iter().map(|(m, c)| {
            debug_assert!(c.is_integer());
            (m.exps().to_vec(), c.to_integer())
        });
        Poly::from_terms(p.nvars, terms.collect::<Vec<_>>())
    }

    /// The exponents every term has at least (the largest monomial dividing the polynomial).
    fn min_exps(&self) -> Vec<u32> {
        let mut m = self.exps_of(0).to_vec();
        for k in 1..self.len() {
            for (a, &b) in m.iter_mut().zip(self.exps_of(k)) {
                *a = (*a).min(b);
            }
        }
        m
    }

    /// Divides by the monomial with exponents `m` (which divides every term).
    fn div_monomial(&self, m: &[u32]) -> Poly {
        let n = self.nvars;
        let mut exps = self.exps.clone();
        for (k, x) in exps.iter_mut().enumerate() {
            *x -= m[k % n.max(1)];
        }
        Poly {
            nvars: n,
            exps,
            coefs: self.coefs.clone(),
        }
    }

    /// The leading coefficient's sign as `±1`.
    pub(crate) fn lc_negative(&self) -> bool {
        self.lc().is_some_and(Signed::is_negative)
    }

    /// The coefficients as `f64`, all scaled by `2^-shift` (`shift` keeps huge coefficients
    /// in range; the same shift for a numerator and its denominator leaves the quotient).
    pub(crate) fn f64_terms(&self, shift: u64) -> Vec<(Vec<u32>, f64)> {
        self.terms()
            .map(|(e, c)| (e.to_vec(), scaled_f64(c, shift)))
            .collect()
    }

    /// The most bits of a coefficient.
    pub(crate) fn max_bits(&self) -> u64 {
        self.coefs.iter().map(BigInt::bits).max().unwrap_or(0)
    }
}

/// `gcd(a, b)`: by one remainder and a word gcd when either fits a word (the common case: a
/// denominator's constant against a numerator's coefficients), else by Lehmer's algorithm
/// (num-bigint's binary gcd is quadratic with a large constant on long operands).
fn uint_gcd(a: &BigUint, b: &BigUint) -> BigUint {
    if a.is_zero() {
        return b.clone();
    }
    if b.is_zero() {
        return a.clone();
    }
    let word = |small: u64, big: &BigUint| -> BigUint {
        let r = (big % small).to_u64().expect("a remainder below a word");
        BigUint::from(small.gcd(&r))
    };
    if let Some(x) = a.to_u64() {
        return word(x, b);
    }
    if let Some(y) = b.to_u64() {
        return word(y, a);
    }
    polycore::lehmer::gcd(a, b)
}

/// `c / 2^shift` as the nearest `f64`.
fn scaled_f64(c: &BigInt, shift: u64) -> f64 {
    if shift == 0 {
        return c.to_f64().unwrap_or(f64::NAN);
    }
    let bits = c.bits();
    if bits <= shift.saturating_sub(1100) {
        return 0.0;
    }
    // Keep 64 significant bits, then scale by the exact power of two.
    let drop = bits.saturating_sub(64);
    let top = (c >> drop).to_f64().unwrap_or(0.0);
    top * 2f64.powi((drop as i64 - shift as i64).clamp(-2000, 2000) as i32)
}

/// `(g, f / g, h / g)` for a gcd `g` of `f` and `h` (up to an integer factor, which the
/// caller's normalisation removes). Constants, monomials and pairs that a modular image
/// proves coprime need no gcd computation.
pub(crate) fn cofactors(f: &Poly, h: &Poly) -> (Poly, Poly, Poly) {
    let n = f.nvars;
    let one = || Poly::constant(BigInt::one(), n);
    if f.is_zero() || h.is_zero() || f.is_constant() || h.is_constant() {
        return (one(), f.clone(), h.clone());
    }
    // The monomial part of the gcd, then the rest.
    let (mf, mh) = (f.min_exps(), h.min_exps());
    let m: Vec<u32> = mf.iter().zip(&mh).map(|(a, b)| *a.min(b)).collect();
    let has_m = m.iter().any(|&e| e > 0);
    let (f1, h1) = if has_m {
        (f.div_monomial(&m), h.div_monomial(&m))
    } else {
        (f.clone(), h.clone())
    };
    let (g, a, b) = if f1.len() == 1 || h1.len() == 1 || coprime(&f1, &h1) {
        (one(), f1, h1)
    } else {
        let (g, a, b) = zippel_gcd::cofactors(&f1.to_polycore(), &h1.to_polycore());
        (
            Poly::from_polycore(&g),
            Poly::from_polycore(&a),
            Poly::from_polycore(&b),
        )
    };
    if has_m {
        let mono = Poly {
            nvars: n,
            exps: m,
            coefs: vec![BigInt::one()],
        };
        (g.mul(&mono), a, b)
    } else {
        (g, a, b)
    }
}

/// A 62-bit prime for the modular coprimality test.
const PRIME: u64 = 4_611_686_018_427_387_847;

/// Whether a modular image proves `gcd(f, h)` constant: for every variable both depend on,
/// the other variables are set to pseudo-random residues that keep both degrees in that
/// variable, and the univariate gcd of the images is constant. (A non-constant gcd has a
/// positive degree in some variable, and its image keeps that degree, since its leading
/// coefficient divides the inputs', which do not vanish; so it would show.) `false` means
/// "not proven", never "not coprime".
fn coprime(f: &Poly, h: &Poly) -> bool {
    let n = f.nvars;
    static FIELD: std::sync::OnceLock<polycore::fast::PrimeField> = std::sync::OnceLock::new();
    let field = *FIELD.get_or_init(|| polycore::fast::PrimeField::new(PRIME).expect("a prime"));
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15 ^ ((f.len() as u64) << 20) ^ (h.len() as u64);
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % (PRIME - 2) + 2
    };
    let fr: Vec<u64> = f.coefs.iter().map(residue).collect();
    let hr: Vec<u64> = h.coefs.iter().map(residue).collect();
    for k in 0..n {
        let (df, dh) = (f.degree(k), h.degree(k));
        if df == 0 || dh == 0 {
            continue;
        }
        let point: Vec<u64> = (0..n).map(|_| next()).collect();
        let (uf, uh) = (image(f, &fr, k, &point), image(h, &hr, k, &point));
        if uf.len() != df as usize + 1 || uh.len() != dh as usize + 1 {
            return false;
        }
        let g = field.gcd(&uf, &uh);
        if g.len() > 1 {
            return false;
        }
    }
    true
}

/// `c mod PRIME`.
fn residue(c: &BigInt) -> u64 {
    let r = (c.magnitude() % PRIME).to_u64().expect("a residue");
    if c.is_negative() && r != 0 {
        PRIME - r
    } else {
        r
    }
}

/// The univariate image in `x_k` (dense, lowest degree first, no trailing zeros) of `p` with
/// every other variable set to `point`, modulo [`PRIME`].
fn image(p: &Poly, res: &[u64], k: usize, point: &[u64]) -> Vec<u64> {
    let mulm = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) % u128::from(PRIME)) as u64;
    let powm = |mut b: u64, mut e: u32| {
        let mut acc = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                acc = mulm(acc, b);
            }
            b = mulm(b, b);
            e >>= 1;
        }
        acc
    };
    let mut out = vec![0u64; p.degree(k) as usize + 1];
    for (t, &c) in res.iter().enumerate() {
        let e = p.exps_of(t);
        let mut v = c;
        for (i, (&x, &ei)) in point.iter().zip(e).enumerate() {
            if i != k && ei > 0 {
                v = mulm(v, powm(x, ei));
            }
        }
        let d = e[k] as usize;
        out[d] = ((u128::from(out[d]) + u128::from(v)) % u128::from(PRIME)) as u64;
    }
    while out.len() > 1 && out.last() == Some(&0) {
        out.pop();
    }
    out
}
