use super::*;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use proptest::prelude::*;

fn names() -> Vec<String> {
    vec!["p".into(), "q".into()]
}

fn idx(s: &str) -> Option<usize> {
    match s {
        "p" => Some(0),
        "q" => Some(1),
        _ => None,
    }
}

fn f(text: &str) -> RatFunc {
    parse(text, 2, &idx).unwrap()
}

fn q(n: i64, d: i64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}

#[test]
fn cancels_and_prints_like_prism() {
    assert_eq!(
        f("(p^2)/(p^2+p)").display(&names()).to_string(),
        "(p)/(p+1)"
    );
    assert_eq!(
        f("-p/(2*p-4)").display(&names()).to_string(),
        "(-p)/(2*p-4)"
    );
    assert_eq!(f("1/2").display(&names()).to_string(), "1/2");
    assert_eq!(f("(1-p)/2").display(&names()).to_string(), "(-p+1)/2");
    assert_eq!(f("p*q - q*p").display(&names()).to_string(), "0");
    assert_eq!(f("0.25*p").display(&names()).to_string(), "p/4");
    assert_eq!(f("(p+q)*(p-q)/(p+q)"), f("p-q"));
}

#[test]
fn parse_errors_are_located() {
    let e = parse("p + r", 2, &idx).unwrap_err();
    assert_eq!(
        (e.to_string().as_str(), e.offset()),
        ("`r` is not a parameter", 4)
    );
    let e = parse("p / (q - q)", 2, &idx).unwrap_err();
    assert_eq!(e.to_string(), "division by zero");
    let e = parse("p +", 2, &idx).unwrap_err();
    assert_eq!(e.offset(), 3);
    let e = parse("(p", 2, &idx).unwrap_err();
    assert_eq!(e.to_string(), "expected `)`");
}

#[test]
fn decimals_are_exact() {
    assert_eq!(decimal("0.1"), Some(q(1, 10)));
    assert_eq!(decimal("1.5e-3"), Some(q(3, 2000)));
    assert_eq!(decimal("2E2"), Some(q(200, 1)));
    assert_eq!(decimal("."), None);
}

/// A random polynomial-ish expression text over p and q.
fn expr_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (1i64..5).prop_map(|k| k.to_string()),
        Just("p".to_string()),
        Just("q".to_string()),
        (1i64..5, 1i64..5).prop_map(|(a, b)| format!("({a}/{b})")),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}+{b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}-{b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}*{b})")),
        ]
    })
}

fn point() -> impl Strategy<Value = Vec<BigRational>> {
    proptest::collection::vec((-20i64..20, 1i64..9).prop_map(|(a, b)| q(a, b)), 2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn ring_laws(a in expr_text(), b in expr_text(), c in expr_text()) {
        let (a, b, c) = (f(&a), f(&b), f(&c));
        prop_assert_eq!(&a + &b, &b + &a);
        prop_assert_eq!(&a * &b, &b * &a);
        prop_assert_eq!(&(&a + &b) + &c, &a + &(&b + &c));
        prop_assert_eq!(&(&a * &b) * &c, &a * &(&b * &c));
        prop_assert_eq!(&a * &(&b + &c), &(&a * &b) + &(&a * &c));
        prop_assert!((&a - &a).is_zero());
        if !b.is_zero() {
            prop_assert_eq!(&(&a / &b) * &b, a.clone());
        }
    }

    #[test]
    fn gcd_divides_both_and_leaves_coprime_cofactors(a in expr_text(), b in expr_text(), c in expr_text()) {
        // (a c) / (b c) cancels to a / b: the gcd found c's factors in both.
        let (a, b, c) = (f(&a), f(&b), f(&c));
        prop_assume!(!b.is_zero() && !c.is_zero());
        let lhs = &(&a * &c) / &(&b * &c);
        prop_assert_eq!(&lhs, &(&a / &b));
        // Numerator and denominator have no common factor: gcd(num, den) = 1.
        let (g, _, _) = crate::poly::cofactors(lhs.numerator(), lhs.denominator());
        prop_assert!(g.is_constant() || lhs.is_zero());
        // No integer factor common to all coefficients; the denominator's leading one positive.
        let content = lhs.numerator().content().gcd(&lhs.denominator().content());
        prop_assert!(content == BigInt::from(1));
        prop_assert!(lhs.denominator().lc().is_some_and(|l| l.is_positive()));
    }

    #[test]
    fn evaluation_is_a_homomorphism(a in expr_text(), b in expr_text(), x in point()) {
        let (fa, fb) = (f(&a), f(&b));
        let (va, vb) = (fa.eval(&x).unwrap(), fb.eval(&x).unwrap());
        prop_assert_eq!((&fa + &fb).eval(&x).unwrap(), &va + &vb);
        prop_assert_eq!((&fa * &fb).eval(&x).unwrap(), &va * &vb);
        prop_assert_eq!((&fa - &fb).eval(&x).unwrap(), &va - &vb);
        if !vb.is_zero() && !fb.is_zero() {
            if let Some(v) = (&fa / &fb).eval(&x) {
                prop_assert_eq!(v, &va / &vb);
            }
        }
        // The printed form reads back as the same function.
        let back = parse(&fa.display(&names()).to_string(), 2, &idx).unwrap();
        prop_assert_eq!(back, fa.clone());
        let fl = fa.eval_f64(&[rational_f64(&x[0]), rational_f64(&x[1])]);
        let ex = rational_f64(&va);
        prop_assert!((fl - ex).abs() <= 1e-9 * ex.abs().max(1.0));
    }
}

/// A random polynomial in p and q with small integer coefficients.
fn poly() -> impl Strategy<Value = Poly> {
    proptest::collection::vec(((0u32..4, 0u32..4), -5i64..6), 0..6).prop_map(|terms| {
        Poly::from_terms(
            2,
            terms
                .into_iter()
                .map(|((a, b), c)| (vec![a, b], BigInt::from(c))),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn polynomial_arithmetic(a in poly(), b in poly(), c in poly()) {
        prop_assert_eq!(a.mul(&b), b.mul(&a));
        prop_assert_eq!(a.mul(&b.add(&c)), a.mul(&b).add(&a.mul(&c)));
        prop_assert!(a.sub(&a).is_zero());
        if !b.is_zero() {
            prop_assert_eq!(a.mul(&b).div_exact(&b), Some(a.clone()));
        }
        // The terms are strictly descending.
        let t: Vec<_> = a.terms().collect();
        for w in t.windows(2) {
            prop_assert_eq!(crate::poly::grevlex(w[0].0, w[1].0), std::cmp::Ordering::Greater);
        }
    }

    #[test]
    fn cofactors_divide_out_the_gcd(a in poly(), b in poly(), c in poly()) {
        prop_assume!(!a.is_zero() && !b.is_zero() && !c.is_zero());
        let (f, h) = (a.mul(&c), b.mul(&c));
        let (g, x, y) = crate::poly::cofactors(&f, &h);
        prop_assert_eq!(g.mul(&x), f.clone());
        prop_assert_eq!(g.mul(&y), h.clone());
        // c divides the gcd: c's non-constant part is found.
        let cc = c.div_scalar(&c.content());
        prop_assert!(g.div_exact(&cc).is_some(), "{:?} does not divide {:?}", cc, g);
    }
}

/// The value at a point term by term in rationals: the oracle of [`Poly::eval`]'s integer
/// evaluation.
fn eval_term_by_term(p: &crate::Poly, x: &[BigRational]) -> BigRational {
    let mut total = BigRational::from_integer(BigInt::from(0));
    for (e, c) in p.terms() {
        let mut t = BigRational::from_integer(c.clone());
        for (&k, xi) in e.iter().zip(x) {
            t *= num_traits::pow(xi.clone(), k as usize);
        }
        total += t;
    }
    total
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn integer_evaluation_agrees_with_term_by_term_rationals(a in expr_text(), x in point()) {
        let fa = f(&a);
        for p in [fa.numerator(), fa.denominator()] {
            prop_assert_eq!(p.eval(&x), eval_term_by_term(p, &x));
        }
    }
}
