//! The parametric checker against the exact point checker: on random small chains, every
//! property's function evaluated at random rational points equals what `--method exact`
//! computes on the chain instantiated there (`--const p=3/17`); and region verdicts against
//! dense sampling of the box.

use crate::space::{parse_params, parse_region};
use crate::{PValue, ParamChecker, ParametricModel};
use augur_check::{
    CheckOptions, CheckSession, Constants, LoadOptions, Method, Model, Properties, Scalar,
};
use num_rational::BigRational;
use proptest::prelude::*;

/// Probability expressions over p and q, in pairs that sum to 1 (each a valid split for p, q
/// in (0, 1)).
const SPLITS: [(&str, &str); 7] = [
    ("p", "1-p"),
    ("q", "1-q"),
    ("p*q", "1-p*q"),
    ("(1-p)*q", "1-(1-p)*q"),
    ("0.3", "0.7"),
    ("p/2", "1-p/2"),
    ("q*q", "1-q*q"),
];

/// A random chain over `s` in `0..n`: each state splits between two successors.
fn model_text(n: usize, rows: &[(usize, usize, usize)], reward_param: bool) -> String {
    let mut t = String::from("dtmc\nconst double p;\nconst double q;\nmodule m\n");
    t.push_str(&format!("  s : [0..{}] init 0;\n", n - 1));
    for (i, &(a, b, k)) in rows.iter().enumerate() {
        let (f, g) = SPLITS[k % SPLITS.len()];
        t.push_str(&format!("  [] s={i} -> {f} : (s'={a}) + {g} : (s'={b});\n"));
    }
    t.push_str("endmodule\nrewards \"r\"\n");
    for i in 0..n {
        if reward_param && i % 2 == 0 {
            t.push_str(&format!("  s={i} : p + {i};\n"));
        } else {
            t.push_str(&format!("  s={i} : {};\n", i + 1));
        }
    }
    t.push_str("  [] s=0 : 2;\nendrewards\n");
    t
}

fn properties(n: usize) -> Vec<String> {
    let last = n - 1;
    vec![
        format!("P=? [ F s={last} ]"),
        format!("P=? [ s<{last} U s=1 ]"),
        format!("P=? [ X s={last} ]"),
        format!("P=? [ F<=3 s={last} ]"),
        format!("P=? [ G s!={last} ]"),
        format!("P=? [ s!=1 W s={last} ]"),
        format!("R{{\"r\"}}=? [ F s={last} ]"),
        "R{\"r\"}=? [ C<=3 ]".to_string(),
        "R{\"r\"}=? [ I=2 ]".to_string(),
        "R{\"r\"}=? [ S ]".to_string(),
        format!("S=? [ s={last} ]"),
    ]
}

fn rows_strategy() -> impl Strategy<Value = (usize, Vec<(usize, usize, usize)>)> {
    (2usize..6).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec((0..n, 0..n, 0usize..7), n),
        )
    })
}

fn q(a: i64, b: i64) -> BigRational {
    BigRational::new(a.into(), b.into())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn functions_evaluate_to_the_exact_point_checker(
        (n, rows) in rows_strategy(),
        reward_param in any::<bool>(),
        (a, b) in (1i64..16, 1i64..16),
    ) {
        let text = model_text(n, &rows, reward_param);
        let params = parse_params(&["p,q".to_string()]).unwrap();
        let m = match ParametricModel::from_prism_text("r.pm", &text, params, &LoadOptions::default()) {
            Ok(m) => m,
            // Both parameters must occur; a chain that reads only one of them is fine too.
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n{text}"))),
        };
        let x = [q(a, 17), q(b, 17)];
        let consts = Constants::parse(&format!("p={a}/17,q={b}/17")).unwrap();
        let point_opts = LoadOptions { constants: consts.clone(), exact: true, ..LoadOptions::default() };
        let point = Model::from_text("r.pm", &text, augur_check::Format::Prism, &point_opts).unwrap();
        let mut props = Properties::new();
        for p in properties(n) {
            props.add("--prop", &p).unwrap();
        }
        let compiled = props.compile(&m.model, &Constants::new()).unwrap();
        let point_compiled = props.compile(&point, &consts).unwrap();
        let mut checker = ParamChecker::new(&m, false);
        let opts = CheckOptions { method: Method::Exact, ..CheckOptions::default() };
        let mut session = CheckSession::new(&point, opts);
        for (item, pitem) in compiled.items.iter().zip(&point_compiled.items) {
            let out = checker.check(item.resolved.as_ref().unwrap()).unwrap();
            let exact = session.check(pitem).unwrap();
            let got = out.values[0].clone().unwrap();
            match got {
                PValue::Infinity => prop_assert_eq!(exact.value, Scalar::Num(f64::INFINITY), "{}\n{}", item.text, text),
                PValue::Func(f) => {
                    let v = f.eval(&x).expect("no pole inside (0, 1)");
                    let want = exact.exact.clone().unwrap_or_else(|| {
                        panic!("no exact value for {} ({:?})\n{text}", item.text, exact.value)
                    });
                    prop_assert_eq!(&v, &want, "{} = {} at p={}/17, q={}/17\n{}", item.text, f.display(&m.names()), a, b, text);
                }
            }
        }
    }

    #[test]
    fn region_verdicts_agree_with_dense_sampling(
        (n, rows) in rows_strategy(),
        (a, w) in (1i64..10, 1i64..6),
        th in 1i64..10,
    ) {
        let text = model_text(n, &rows, false);
        let params = parse_params(&["p,q".to_string()]).unwrap();
        let m = ParametricModel::from_prism_text("r.pm", &text, params, &LoadOptions::default()).unwrap();
        let (lo, hi) = (q(a, 20), q((a + w).min(19), 20));
        let region_text = format!("{}<=p<={},{}<=q<={}", lo, hi, lo, hi);
        let region = parse_region(&region_text, &m.params).unwrap();
        let mut props = Properties::new();
        props.add("--prop", &format!("P<={} [ F s={} ]", th as f64 / 10.0, n - 1)).unwrap();
        let compiled = props.compile(&m.model, &Constants::new()).unwrap();
        let prop = compiled.items[0].resolved.as_ref().unwrap();
        let mut checker = ParamChecker::new(&m, false);
        let out = checker.check(prop).unwrap();
        let Some(PValue::Func(f)) = out.values[0].clone() else { return Ok(()) };
        let th_q = q(th, 10);
        let analysis = match crate::regions::analyse(&m, &mut checker, prop, out.threshold.as_ref().unwrap(), &region, Some(0.9), None) {
            Ok(a) => a,
            Err(crate::ParamError::Unsupported(_)) => return Ok(()),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        };
        for (b, v, _) in &analysis.boxes {
            // 5 x 5 points of each decided box, its corners included.
            for i in 0..5i64 {
                for j in 0..5i64 {
                    let x = [
                        &b.bounds[0].0 + (&b.bounds[0].1 - &b.bounds[0].0) * q(i, 4),
                        &b.bounds[1].0 + (&b.bounds[1].1 - &b.bounds[1].0) * q(j, 4),
                    ];
                    let val = f.eval(&x).unwrap();
                    match v {
                        crate::regions::RegionVerdict::Safe => prop_assert!(val <= th_q, "safe box {} has {} > {}", b.text(&m.names()), val, th_q),
                        crate::regions::RegionVerdict::Unsafe => prop_assert!(val > th_q, "unsafe box {} has {} <= {}", b.text(&m.names()), val, th_q),
                        crate::regions::RegionVerdict::Unknown => {}
                    }
                }
            }
        }
    }
}

/// Properties with a bound for the lifting test: `P` with every path operator parameter lifting
/// handles (step bounds included), and the rewards `F`, `C<=k`, `I=k`.
fn bounded_properties(n: usize, th: i64) -> Vec<String> {
    let last = n - 1;
    let t = th as f64 / 10.0;
    let r = th as f64;
    vec![
        format!("P<={t} [ F s={last} ]"),
        format!("P>={t} [ s<{last} U<=4 s=1 ]"),
        format!("P<{t} [ X s={last} ]"),
        format!("P<={t} [ F<=3 s={last} ]"),
        format!("P<={t} [ F>=2 s={last} ]"),
        format!("P>{t} [ F[1,3] s={last} ]"),
        format!("P>={t} [ G s!={last} ]"),
        format!("P>={t} [ G<=3 s!={last} ]"),
        format!("P<={t} [ s!=1 W s={last} ]"),
        format!("P>={t} [ s!=1 W<=3 s={last} ]"),
        format!("P<={t} [ s=0 R s!={last} ]"),
        format!("R{{\"r\"}}<={r} [ F s={last} ]"),
        format!("R{{\"r\"}}>={r} [ C<=3 ]"),
        format!("R{{\"r\"}}<={} [ I=2 ]", r / 2.0),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Parameter lifting beyond `F`: every point of a 5 x 5 grid of the box has its value
    /// within the lifted bounds, and a box decided by refinement holds at each of its points.
    #[test]
    fn lifted_bounds_contain_every_sampled_value(
        (n, rows) in rows_strategy(),
        (a, w) in (1i64..10, 1i64..8),
        th in 1i64..10,
    ) {
        let text = model_text(n, &rows, true);
        let params = parse_params(&["p,q".to_string()]).unwrap();
        let m = ParametricModel::from_prism_text("r.pm", &text, params, &LoadOptions::default()).unwrap();
        let (lo, hi) = (q(a, 20), q((a + w).min(19), 20));
        let region = parse_region(&format!("{lo}<=p<={hi},{lo}<=q<={hi}"), &m.params).unwrap();
        let mut props = Properties::new();
        for p in bounded_properties(n, th) {
            props.add("--prop", &p).unwrap();
        }
        let compiled = props.compile(&m.model, &Constants::new()).unwrap();
        let mut checker = ParamChecker::new(&m, false);
        for item in &compiled.items {
            let prop = item.resolved.as_ref().unwrap();
            let out = checker.check(prop).unwrap();
            let th = out.threshold.clone().unwrap();
            let Some(PValue::Func(f)) = out.values[0].clone() else { continue };
            let (l, h) = crate::regions::lifted_bounds(&m, &mut checker, prop, &region)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", item.text)))?;
            let analysis = crate::regions::analyse(&m, &mut checker, prop, &th, &region, Some(0.9), None)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", item.text)))?;
            let grid = |b: &crate::Region, i: i64, j: i64| [
                &b.bounds[0].0 + (&b.bounds[0].1 - &b.bounds[0].0) * q(i, 4),
                &b.bounds[1].0 + (&b.bounds[1].1 - &b.bounds[1].0) * q(j, 4),
            ];
            for i in 0..5i64 {
                for j in 0..5i64 {
                    let v = augur_ratfun::rational_f64(&f.eval(&grid(&region, i, j)).unwrap());
                    prop_assert!(l <= v + 1e-12 && v <= h + 1e-12, "{}: {} outside the lifted [{}, {}]\n{}", item.text, v, l, h, text);
                }
            }
            for (b, verdict, how) in &analysis.boxes {
                for i in 0..5i64 {
                    for j in 0..5i64 {
                        let v = f.eval(&grid(b, i, j)).unwrap();
                        let holds = crate::regions::holds(th.cmp, &v, &th.value.exact);
                        match verdict {
                            crate::regions::RegionVerdict::Safe => prop_assert!(holds, "{}: box {} all-satisfy ({}) but {} there\n{}", item.text, b.text(&m.names()), how, v, text),
                            crate::regions::RegionVerdict::Unsafe => prop_assert!(!holds, "{}: box {} all-violate ({}) but {} there\n{}", item.text, b.text(&m.names()), how, v, text),
                            crate::regions::RegionVerdict::Unknown => {}
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn lifting_refuses_long_run_operators_at_the_operator() {
    let text = model_text(3, &[(1, 2, 0), (0, 2, 1), (2, 0, 2)], true);
    let params = parse_params(&["p,q".to_string()]).unwrap();
    let m =
        ParametricModel::from_prism_text("r.pm", &text, params, &LoadOptions::default()).unwrap();
    let region = parse_region("0.2<=p<=0.3,0.2<=q<=0.3", &m.params).unwrap();
    let mut props = Properties::new();
    props.add("--prop", "S<=0.5 [ s=2 ]").unwrap();
    props.add("--prop", "R{\"r\"}<=3 [ S ]").unwrap();
    props.add("--prop", "R{\"r\"}<=3 [ C ]").unwrap();
    let compiled = props.compile(&m.model, &Constants::new()).unwrap();
    let mut checker = ParamChecker::new(&m, false);
    for (item, what) in compiled.items.iter().zip([
        "the long-run operator S",
        "long-run rewards",
        "total or discounted",
    ]) {
        let prop = item.resolved.as_ref().unwrap();
        let e = crate::regions::lifted_bounds(&m, &mut checker, prop, &region).unwrap_err();
        let d = e.diagnostic();
        assert!(d.message.contains(what), "{}: {}", item.text, d.message);
        let loc = d.location.expect("located");
        assert_eq!((loc.line, loc.column), (1, 1), "{}", item.text);
    }
}

#[test]
fn a_parameter_in_a_guard_is_refused_where_it_is_written() {
    let text = "dtmc\nconst double p;\nmodule m\n  s : [0..1] init 0;\n  [] s=0 & p>0.5 -> (s'=1);\n  [] s=1 -> true;\nendmodule\n";
    let params = parse_params(&["p".to_string()]).unwrap();
    let e = ParametricModel::from_prism_text("g.pm", text, params, &LoadOptions::default())
        .unwrap_err();
    let d = e.diagnostic();
    assert!(
        d.message.contains("parameter `p` in a guard"),
        "{}",
        d.message
    );
    let loc = d.location.unwrap();
    assert_eq!((loc.line, loc.column), (5, 12));
}

#[test]
fn rows_must_sum_to_one_as_functions() {
    let text = "dtmc\nconst double p;\nmodule m\n  s : [0..1] init 0;\n  [] s=0 -> p : (s'=1) + p : (s'=0);\n  [] s=1 -> true;\nendmodule\n";
    let params = parse_params(&["p".to_string()]).unwrap();
    let e = ParametricModel::from_prism_text("g.pm", text, params, &LoadOptions::default())
        .unwrap_err();
    assert!(
        e.diagnostic()
            .message
            .contains("probabilities sum to 2*p, not 1"),
        "{}",
        e.diagnostic().message
    );
}

#[test]
fn given_bounds_refuse_a_chain_that_leaves_them() {
    let text = "dtmc\nconst double p;\nmodule m\n  s : [0..2] init 0;\n  [] s=0 -> 2*p : (s'=1) + 1-2*p : (s'=2);\n  [] s>0 -> true;\nendmodule\n";
    // Within (0, 1/2) the chain is well defined; over [0.1, 0.9] it is not.
    let ok = parse_params(&["p=0.1:0.4".to_string()]).unwrap();
    assert!(ParametricModel::from_prism_text("b.pm", text, ok, &LoadOptions::default()).is_ok());
    let bad = parse_params(&["p=0.1:0.9".to_string()]).unwrap();
    let e =
        ParametricModel::from_prism_text("b.pm", text, bad, &LoadOptions::default()).unwrap_err();
    let m = e.diagnostic().message;
    assert!(
        m.contains("the transition (s=0) -> (s=1) has probability 2*p, which is")
            && m.contains("at p="),
        "{m}"
    );
    // Default bounds: a warning, and the function.
    let def = parse_params(&["p".to_string()]).unwrap();
    let model =
        ParametricModel::from_prism_text("b.pm", text, def, &LoadOptions::default()).unwrap();
    assert_eq!(model.warnings.len(), 1);
}

#[test]
fn optimum_of_a_known_function() {
    // p (1 - p) has its maximum 1/4 at p = 1/2.
    let idx = |s: &str| (s == "p").then_some(0);
    let f = augur_ratfun::parse("p*(1-p)", 1, &idx).unwrap();
    let params = parse_params(&["p".to_string()]).unwrap();
    let r = crate::Region::of(&params);
    let o = crate::optimize::optimize(&f, &r, true, 1e-6);
    assert!((o.value - 0.25).abs() < 1e-9);
    assert!(o.bound.0 <= 0.25 && 0.25 <= o.bound.1);
    assert!(
        (o.bound.1 - o.bound.0) <= 1e-6 * 0.25 + 1e-12,
        "{:?}",
        o.bound
    );
    let o = crate::optimize::optimize(&f, &r, false, 1e-6);
    assert!(o.value.abs() < 1e-12 && o.bound.0 <= 0.0 && o.bound.1 >= 0.0);
}
