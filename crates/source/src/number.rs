//! How every number is written for humans (the CLI's text output, notes and messages): the
//! one rule, in one place. JSON keeps full doubles and never goes through here.
//!
//! - A value with sound bounds `[lo, hi]` is written as the shortest decimal that reads back
//!   (parses to a double) inside `[lo, hi]`; among the equally short ones, the one nearest the
//!   value ([`within`]).
//! - A value computed in floating point without bounds (horizon curves, bounded operators,
//!   rewards) is written as the shortest decimal within [`ULPS`] units in the last place of it
//!   ([`approx`]): `0.0514`, not `0.05140000000000001`.
//! - A value that must read back exactly (a sound bound itself) is the shortest round-trip
//!   decimal ([`exact`]).
//! - Very large and very small magnitudes (below `1e-5`, from `1e16` up) are written with an
//!   exponent (`1e308`, `2.5e-10`), never as hundreds of digits; infinities as `inf`/`-inf`.
//!
//! ```
//! use augur_source::number::{approx, exact, within};
//! assert_eq!(approx(0.05140000000000001), "0.0514");
//! assert_eq!(approx(0.1 + 0.2), "0.3");
//! assert_eq!(exact(0.1 + 0.2), "0.30000000000000004");
//! assert_eq!(within(0.45392, 0.4539, 0.454), "0.454");
//! assert_eq!(approx(1e308), "1e308");
//! assert_eq!(approx(f64::INFINITY), "inf");
//! ```

use std::fmt;

/// How far (in units in the last place) an unbounded floating-point value may be rounded.
pub const ULPS: u32 = 8;

/// The shortest decimal that reads back inside `[lo, hi]`, nearest `x` among the equally
/// short ones. `x` outside `[lo, hi]` widens the interval to include it; a NaN anywhere gives
/// [`exact`]`(x)`.
pub fn within(x: f64, lo: f64, hi: f64) -> String {
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return exact(x);
    }
    if x.is_infinite() {
        return exact(x);
    }
    let (lo, hi) = (lo.min(x), hi.max(x));
    if lo <= 0.0 && 0.0 <= hi {
        return "0".into();
    }
    if hi < 0.0 {
        return format!("-{}", positive(-x, -hi, -lo));
    }
    positive(x, lo, hi)
}

/// The shortest decimal within [`ULPS`] units in the last place of `x` (a value computed in
/// floating point, without bounds).
pub fn approx(x: f64) -> String {
    if !x.is_finite() {
        return exact(x);
    }
    let (mut lo, mut hi) = (x, x);
    for _ in 0..ULPS {
        lo = lo.next_down();
        hi = hi.next_up();
    }
    // Never across zero: a tiny value stays tiny (and keeps its sign).
    if x > 0.0 {
        lo = lo.max(f64::MIN_POSITIVE.min(x));
    } else if x < 0.0 {
        hi = hi.min(-f64::MIN_POSITIVE.min(-x));
    }
    within(x, lo.max(f64::MIN), hi.min(f64::MAX))
}

/// The shortest decimal that reads back as `x` exactly (`inf`, `-inf`, `NaN` as such).
pub fn exact(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x == f64::INFINITY {
        "inf".into()
    } else if x == f64::NEG_INFINITY {
        "-inf".into()
    } else if x == 0.0 {
        "0".into()
    } else if x < 0.0 {
        format!("-{}", positive(-x, -x, -x))
    } else {
        positive(x, x, x)
    }
}

/// [`approx`] as a `Display` value, for `format!`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Approx(pub f64);

impl fmt::Display for Approx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&approx(self.0))
    }
}

/// `0 < lo <= x <= hi`, all finite or `hi` infinite.
fn positive(x: f64, lo: f64, hi: f64) -> String {
    let ok = |m: u64, k: i32| {
        let v = parse(m, k);
        lo <= v && v <= hi
    };
    for p in 1..=17usize {
        // `x` correctly rounded to `p` significant digits: `d.ddd…e±E`.
        let (m, k) = split(&format!("{:.*e}", p - 1, x));
        if ok(m, k) {
            return render(m, k);
        }
        // The decimal on the other side of `x` at the same position. When rounding up
        // carried into the next decade (0.9996 → 1.00), the one below is in `x`'s own decade:
        // p nines one place further right (0.999).
        let (other, ok_k) = if parse(m, k) > x {
            if m == 10u64.pow(p as u32 - 1) && decade(x) < k + p as i32 - 1 {
                (Some(10u64.pow(p as u32) - 1), k - 1)
            } else {
                (m.checked_sub(1), k)
            }
        } else {
            (m.checked_add(1), k)
        };
        if let Some(o) = other.filter(|&o| o > 0 && ok(o, ok_k)) {
            return render(o, ok_k);
        }
    }
    // 17 significant digits always read back as `x`.
    let (m, k) = split(&format!("{:.16e}", x));
    render(m, k)
}

/// The decimal exponent of `x` (`x` = d.ddd × 10^e), read from its shortest representation.
fn decade(x: f64) -> i32 {
    format!("{x:e}")
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0)
}

/// `d.ddde±E` → (the digits as an integer `m`, `k`) with value `m × 10^k`.
fn split(s: &str) -> (u64, i32) {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let frac = mant.split_once('.').map_or(0, |(_, f)| f.len());
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(0), exp - frac as i32)
}

fn parse(m: u64, k: i32) -> f64 {
    format!("{m}e{k}").parse().unwrap_or(f64::NAN)
}

/// `m × 10^k` in plain notation when `1e-5 <= value < 1e16`, else with an exponent.
fn render(mut m: u64, mut k: i32) -> String {
    while m > 0 && m.is_multiple_of(10) {
        m /= 10;
        k += 1;
    }
    let digits = m.to_string();
    let n = digits.len() as i32;
    // The value is d.ddd × 10^e.
    let e = k + n - 1;
    if (-5..16).contains(&e) {
        if k >= 0 {
            format!("{digits}{}", "0".repeat(k as usize))
        } else if e >= 0 {
            let (int, frac) = digits.split_at((e + 1) as usize);
            format!("{int}.{frac}")
        } else {
            format!("0.{}{digits}", "0".repeat((-e - 1) as usize))
        }
    } else if n == 1 {
        format!("{digits}e{e}")
    } else {
        format!("{}.{}e{e}", &digits[..1], &digits[1..])
    }
}

#[cfg(test)]
mod tests {
    use super::{approx, exact, within, ULPS};
    use num_bigint::BigInt;
    use num_traits::{One, Signed, Zero};
    use proptest::prelude::*;

    type Q = num_rational::BigRational;

    #[test]
    fn the_float_noise_of_the_issue_is_gone() {
        assert_eq!(approx(0.05140000000000001), "0.0514");
        assert_eq!(approx(0.42700000000000005), "0.427");
        assert_eq!(approx(0.14250000000000002), "0.1425");
        assert_eq!(approx(1.0), "1");
        assert_eq!(approx(-2.5e-10), "-2.5e-10");
        assert_eq!(approx(1e16), "1e16");
        assert_eq!(approx(123.0), "123");
        assert_eq!(approx(0.00001), "0.00001");
        assert_eq!(approx(f64::MAX), "1.797693134862315e308");
        assert_eq!(exact(f64::MAX), "1.7976931348623157e308");
        assert_eq!(exact(5e-324), "5e-324");
        assert_eq!(exact(f64::NEG_INFINITY), "-inf");
        assert_eq!(within(0.3, 0.25, 0.35), "0.3");
        assert_eq!(within(0.15, 0.14, 0.2), "0.2");
        assert_eq!(within(0.5, -1.0, 1.0), "0");
        assert_eq!(within(14.5, 10.0, 20.0), "10");
        assert_eq!(within(-0.45, -0.46, -0.44), "-0.45");
    }

    /// The exact rational of a finite double.
    fn q(x: f64) -> Q {
        Q::from_float(x).expect("finite")
    }

    /// The reals that read back inside `[lo, hi]` (`0 < lo <= hi` finite): the open interval
    /// between the midpoints to the neighbouring doubles (ties excluded, conservatively).
    fn reads_back_inside(lo: f64, hi: f64) -> (Q, Q) {
        let two = Q::from_integer(2.into());
        let l = (q(lo.next_down()) + q(lo)) / &two;
        let h = if hi == f64::MAX {
            q(hi) + (q(hi) - q(hi.next_down())) / &two
        } else {
            (q(hi) + q(hi.next_up())) / &two
        };
        (l, h)
    }

    /// Whether some decimal with at most `p` significant digits lies strictly between `l` and
    /// `h` (`0 < l < h`), by exact arithmetic: for every grid `10^k` that can hold one, the
    /// first multiple above `l`.
    fn exists_shorter(l: &Q, h: &Q, p: u32) -> bool {
        let log = |x: &Q| {
            let f = x.numer().bits() as f64 - x.denom().bits() as f64;
            (f * std::f64::consts::LOG10_2) as i32
        };
        let limit = BigInt::from(10).pow(p);
        for k in (log(l) - p as i32 - 3)..=(log(h) + 3) {
            let unit = if k >= 0 {
                Q::from_integer(BigInt::from(10).pow(k as u32))
            } else {
                Q::one() / Q::from_integer(BigInt::from(10).pow((-k) as u32))
            };
            let c = (l / &unit).floor() + Q::one();
            if c.numer() < &limit && &(c.clone() * &unit) < h && c.is_positive() {
                return true;
            }
        }
        false
    }

    fn significant_digits(s: &str) -> u32 {
        let mant = s.trim_start_matches('-').split('e').next().unwrap_or("");
        let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
        digits
            .trim_start_matches('0')
            .trim_end_matches('0')
            .len()
            .max(1) as u32
    }

    fn check(x: f64, lo: f64, hi: f64) -> Result<(), TestCaseError> {
        let s = within(x, lo, hi);
        let v: f64 = s
            .parse()
            .map_err(|e| TestCaseError::fail(format!("{s}: {e}")))?;
        prop_assert!(lo <= v && v <= hi, "{s} outside [{lo:e}, {hi:e}]");
        prop_assert!(!s.contains("e") || !(1e-5..1e16).contains(&v.abs()), "{s}");
        prop_assert!(s.len() <= 24, "{s} is long");
        if lo > 0.0 {
            let p = significant_digits(&s);
            let (l, h) = reads_back_inside(lo, hi);
            prop_assert!(
                p == 1 || !exists_shorter(&l, &h, p - 1),
                "{s} for [{lo:e}, {hi:e}]: a decimal of {} digits reads back inside",
                p - 1
            );
        }
        Ok(())
    }

    fn positive_double() -> impl Strategy<Value = f64> {
        prop_oneof![
            (1u64..0x7fef_ffff_ffff_ffff).prop_map(f64::from_bits),
            (1e-6f64..1e6),
            (0.0f64..1.0),
        ]
        .prop_filter("positive", |x| *x > 0.0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn exact_is_rusts_shortest_round_trip(x in positive_double()) {
            let s = exact(x);
            prop_assert_eq!(s.parse::<f64>().ok(), Some(x));
            prop_assert_eq!(significant_digits(&s), significant_digits(&format!("{x:e}")));
        }

        #[test]
        fn within_bounds_is_inside_and_shortest(x in positive_double(), a in 0.0f64..1e-3, b in 0.0f64..1e-3) {
            let (lo, hi) = (x * (1.0 - a), (x * (1.0 + b)).min(f64::MAX));
            check(x, lo, hi)?;
        }

        #[test]
        fn approx_is_within_eight_ulps_and_shortest(x in positive_double()) {
            let (mut lo, mut hi) = (x, x);
            for _ in 0..ULPS {
                lo = lo.next_down();
                hi = hi.next_up();
            }
            let (lo, hi) = (lo.max(f64::MIN_POSITIVE.min(x)), hi.min(f64::MAX));
            let s = approx(x);
            prop_assert_eq!(&s, &within(x, lo, hi));
            check(x, lo, hi)?;
            let neg = approx(-x);
            prop_assert_eq!(neg, format!("-{s}"));
        }
    }

    /// Rounding 0.99959… to three digits carries into the next decade (1.00, outside the
    /// bounds); the shortest decimal inside is 0.999, in x's own decade (found by
    /// `within_bounds_is_inside_and_shortest`).
    #[test]
    fn a_rounding_that_carries_into_the_next_decade_still_finds_the_shortest() {
        let x = 0.9995916777606602;
        let lo = x * (1.0 - 0.000_796_39);
        assert_eq!(within(x, lo, x), "0.999");
        check(x, lo, x).unwrap();
        assert_eq!(within(9.9996, 9.995, 9.9996), "9.999");
    }

    #[test]
    fn the_oracle_finds_short_decimals() {
        let (l, h) = reads_back_inside(0.29, 0.31);
        assert!(exists_shorter(&l, &h, 1));
        let (l, h) = reads_back_inside(0.31, 0.39);
        assert!(!exists_shorter(&l, &h, 1));
        assert!(!Q::zero().is_positive());
    }
}
