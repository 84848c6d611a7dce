//! Exact rationals of numbers as they are written: a decimal literal (`0.1` is 1/10, `1e-30`
//! is 10⁻³⁰, `1/3` is 1/3) and the decimal a double prints as (`0.7` stored as the nearest
//! `f64` becomes 7/10). The PRISM builder and the property resolver both read numbers this
//! way in exact mode.

use num_bigint::BigInt;
use num_rational::BigRational;

/// The exact rational a literal spells: a decimal (`0.333333333333333333333333`, `1e-30`,
/// `2.5E+3`, with an optional sign) or a fraction of two such (`1/3`). `None` when `text` is
/// neither, when a denominator is zero, or when an exponent is beyond ±10,000.
pub fn literal_rational(text: &str) -> Option<BigRational> {
    let t = text.trim();
    if let Some((a, b)) = t.split_once('/') {
        let (a, b) = (literal_rational(a)?, literal_rational(b)?);
        return (b != BigRational::from_integer(BigInt::from(0))).then(|| a / b);
    }
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (mantissa, exp) = match t.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || exp.abs() > 10_000
    {
        return None;
    }
    let numer: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = exp - i32::try_from(frac.len()).ok()?;
    let ten = BigRational::from_integer(BigInt::from(10));
    let q = BigRational::from_integer(numer) * num_traits::pow::Pow::pow(ten, scale);
    Some(if neg { -q } else { q })
}

/// The exact rational of the shortest decimal that reads back as `x` (Rust's round-trip
/// form: `0.7` is 7/10, `1e-7` is 1/10⁷); `None` for NaN and infinities.
pub fn decimal_rational(x: f64) -> Option<BigRational> {
    if !x.is_finite() {
        return None;
    }
    // `{x}` is the shortest round-trip representation, never in exponent form.
    let text = format!("{x}");
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.as_str()),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let numer: BigInt = format!("{int}{frac}").parse().ok()?;
    let denom = num_traits::pow(BigInt::from(10), frac.len());
    let q = BigRational::new(numer, denom);
    Some(if neg { -q } else { q })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    #[test]
    fn literals_are_the_rationals_they_spell() {
        assert_eq!(literal_rational("0.1"), Some(q(1, 10)));
        assert_eq!(literal_rational("-2.5E+3"), Some(q(-2500, 1)));
        assert_eq!(literal_rational("1/3"), Some(q(1, 3)));
        assert_eq!(literal_rational(" 3 "), Some(q(3, 1)));
        let tiny = literal_rational("1e-30").unwrap();
        assert_eq!(tiny * num_traits::pow(q(10, 1), 30), q(1, 1));
        for bad in ["", ".", "1/0", "x", "1e99999", "1.2.3"] {
            assert_eq!(literal_rational(bad), None, "{bad}");
        }
    }

    #[test]
    fn doubles_are_the_decimals_they_print_as() {
        assert_eq!(decimal_rational(0.7), Some(q(7, 10)));
        assert_eq!(decimal_rational(-1.25), Some(q(-5, 4)));
        assert_eq!(decimal_rational(1e-7), Some(q(1, 10_000_000)));
        assert_eq!(decimal_rational(3.0), Some(q(3, 1)));
        assert_eq!(decimal_rational(f64::NAN), None);
        assert_eq!(decimal_rational(f64::INFINITY), None);
    }
}
