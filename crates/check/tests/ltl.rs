//! LTL properties end to end (parse → resolve → product → solver): PRISM's own LTL regression
//! tests for DTMCs (`prism-tests/functionality/verify/dtmcs/ltl/`: the models and the values of
//! their `// RESULT:` lines, copied below), and the constructs of issue 13 on the same model with
//! values derived by hand.

use augur_check::{check_str, Format, LoadOptions, Model, Scalar};

/// PRISM's `lec17dtmc.pm` (Lecture 17 of Probabilistic Model Checking).
const LEC17: &str = r#"dtmc
module M
s:[0..5];
[] s=0 -> 0.6:(s'=0) + 0.1:(s'=1) + 0.3:(s'=3);
[] s=1 -> 0.2:(s'=3) + 0.3:(s'=4) + 0.5:(s'=2);
[] s=2 -> 1:(s'=5);
[] s=3 -> 1:(s'=4);
[] s=4 -> 1:(s'=3);
[] s=5 -> 0.1:(s'=2) + 0.9:(s'=5);
endmodule
label "a" = s=2 | s=3 | s=5;
label "b" = s=1;
"#;

/// PRISM's `jaeger.prism`.
const JAEGER: &str = r#"dtmc
module tree_160000
s:[1..13] init 1;
[r2]s=1 -> 968/3276:(s'=4) +  2308/3276:(s'=5);
[r2]s=2 -> 122/261:(s'=6) +  139/261:(s'=7);
[r1]s=4 -> 123/239:(s'=8) +  116/239:(s'=9);
[r4]s=6 -> 14/35:(s'=10) +  21/35:(s'=11);
[r4]s=8 -> 14/32:(s'=12) +  18/32:(s'=13);
[r1]s=3 -> 1:(s'=3);
[r1]s=5 -> 1:(s'=5);
[r1]s=7 -> 1:(s'=7);
[r1]s=9 -> 1:(s'=9);
[r1]s=10 -> 1:(s'=10);
[r1]s=11 -> 1:(s'=11);
[r1]s=12 -> 1:(s'=12);
[r1]s=13 -> 1:(s'=13);
endmodule
label "o_000" = s=1;
label "o_010" = s=4;
label "o_100" = s=2;
label "o_110" = s=8|s=6;
label "o_Pr0" = s=11|s=13;
"#;

fn model(text: &str) -> Model {
    Model::from_text("model.pm", text, Format::Prism, &LoadOptions::default()).unwrap()
}

fn number(m: &Model, property: &str) -> f64 {
    let r = check_str(m.dtmc(), property).unwrap_or_else(|e| panic!("{property}: {e}"));
    let Scalar::Num(v) = r.value else {
        panic!("{property}: not a number: {:?}", r.value)
    };
    // The default method is sound: the reported bounds contain the value.
    if let Some(b) = r.bounds {
        assert!(
            b.lo <= v + 1e-12 && v <= b.hi + 1e-12,
            "{property}: {v} outside {b:?}"
        );
    }
    v
}

fn boolean(m: &Model, property: &str) -> bool {
    let r = check_str(m.dtmc(), property).unwrap_or_else(|e| panic!("{property}: {e}"));
    match r.value {
        Scalar::Bool(b) => b,
        v => panic!("{property}: not a boolean: {v:?}"),
    }
}

#[test]
fn prism_lec17_results() {
    let m = model(LEC17);
    for (property, expected) in [
        (r#"P=? [ G F "a" ]"#, 1.0),
        (r#"P=? [ (G !"b")&(G F "a") ]"#, 0.75),
        (r#"P=? [ F G "a" ]"#, 0.125),
        (r#"P=? [ (G ("b"=>(F (!"b"&"a"))))&(F G !"b") ]"#, 1.0),
    ] {
        let v = number(&m, property);
        assert!(
            (v - expected).abs() < 1e-9,
            "{property}: {v}, PRISM {expected}"
        );
    }
    assert!(boolean(&m, "P>=1[ true | (X s=0) ]"));
    assert!(boolean(&m, "P<=0[ (s<4 U s=4) & (s=0 U s=4) ]"));
}

#[test]
fn prism_jaeger_results() {
    let m = model(JAEGER);
    let both = 2143152.0 / 25054848.0;
    let two = 119064.0 / 782964.0;
    for (property, expected) in [
        (
            r#"P=? [( (X ( X  ( "o_110"))) &  (X ( X  ( X ( "o_Pr0"))))) ]"#,
            both,
        ),
        (r#"P=? [ (X ( X  ( "o_110")))  ]"#, two),
        (r#"P=? [  (X ( X  ( X ( "o_Pr0")))) ]"#, both),
    ] {
        let v = number(&m, property);
        assert!(
            (v - expected).abs() < 1e-12,
            "{property}: {v}, PRISM {expected}"
        );
    }
}

/// The forms of issue 13 on `lec17`. From s=0 the chain reaches the BSCC {2,5} (all "a") with
/// probability 0.1/0.4 · 0.5 = 0.125 (via s=1, then s=2) and the cycle {3,4} with 0.875.
#[test]
fn issue_forms_with_hand_derived_values() {
    let m = model(LEC17);
    let close = |p: &str, x: f64| {
        let v = number(&m, p);
        assert!((v - x).abs() < 1e-9, "{p}: {v}, expected {x}");
    };
    // X F s=3: 0.6·P0(F s=3) + 0.1·P1(F s=3) + 0.3 = 0.6·0.875 + 0.1·0.5 + 0.3.
    close("P=? [ X F s=3 ]", 0.875);
    // s=0 U (s=1 U s=4): leave 0 to 1 (0.25), then 1 → 4 directly (0.3).
    close("P=? [ s=0 U (s=1 U s=4) ]", 0.075);
    // F G s=3 never holds (s=3 and s=4 alternate); F G s>=3 holds exactly in the cycle {3,4}.
    close("P=? [ F G s=3 ]", 0.0);
    close("P=? [ F G s>=3 ]", 0.875);
    assert!(!boolean(&m, "P>=1 [ F G s=3 ]"));
    assert!(boolean(&m, "filter(forall, P>=1 [ F G s>=3 ], s=3|s=4)"));
    assert!(!boolean(&m, "filter(forall, P>=1 [ F G s>=3 ], s>=3)"));
    // A P operator inside LTL: P>0.5 [ G "a" ] holds in {2,5} only, reached with 0.125.
    close(r#"P=? [ F P>0.5 [ G "a" ] ]"#, 0.125);
    close(r#"P=? [ G F P>0.5 [ G "a" ] ]"#, 0.125);
    // The same event written as PCTL and as LTL.
    let pctl = number(&m, "P=? [ F s=3 ]");
    close("P=? [ !(G s!=3) ]", pctl);
    // Bounded operators nested in LTL: X F<=1 s=4 from 0: after 3 (0.3, then 4 surely) or
    // after 1 (0.1, then 4 with 0.3); after 0 itself, 4 is 2 steps away.
    close("P=? [ X F<=1 s=4 ]", 0.3 + 0.1 * 0.3);
}

#[test]
fn ltl_errors_are_located() {
    let m = model(LEC17);
    let e = check_str(m.dtmc(), r#"P=? [ G F<=5000 "a" ]"#).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("step bound 5000"), "{text}");
    let e = check_str(m.dtmc(), r#"S=? [ F G "a" ]"#).unwrap_err();
    assert!(e.to_string().contains("state formula"), "{e}");
}

/// The chain of issue 13, item 10: 0 → {0.1: 1, 0.9: 2}, 1 → {1/3: 3, 2/3: 0}, 2 and 3
/// absorbing; "a" is s=1, "b" is s!=3 (shared with the binary's tests in tests/integration).
const ITEM10: &str = include_str!("../../../tests/fixtures/ltl_item10.pm");

#[test]
fn temporal_operators_in_connectives_with_hand_derived_values() {
    let m = model(ITEM10);
    let close = |p: &str, x: f64| {
        let v = number(&m, p);
        assert!((v - x).abs() < 1e-9, "{p}: {v}, expected {x}");
    };
    // From 0: reach 2 with x0 = 0.9 + 0.1·(2/3)·x0 = 27/28, reach 3 with 1/28; reach 2 without
    // visiting 1 with 0.9.
    // F "a" & G "b" is F ("a" & G "b"): some visit to 1 after which 3 never comes, that is
    // visit 1 and end in 2: 27/28 - 9/10 = 9/140. (Here b fails only in the absorbing 3, so
    // the conjunction (F "a") & (G "b") has the same value.)
    close(r#"P=? [ F "a" & G "b" ]"#, 9.0 / 140.0);
    close(r#"P=? [ (F "a") & (G "b") ]"#, 9.0 / 140.0);
    // Where the two readings differ: F (s=2 & G s!=1) is reaching 2 (27/28); the conjunction
    // (F s=2) & (G s!=1) is reaching 2 without visiting 1 (0.9).
    close("P=? [ F s=2 & G s!=1 ]", 27.0 / 28.0);
    close("P=? [ (F s=2) & (G s!=1) ]", 0.9);
    // !F "a": from 0, 1 is reached only by the first step (0.1).
    close(r#"P=? [ !F "a" ]"#, 0.9);
    // G ("b" => F "a"): every b-state is followed by a visit to 1: exactly the paths that end
    // in 3 (those ending in 2 stay in a b-state without "a"): 1/28.
    close(r#"P=? [ G ("b" => F "a") ]"#, 1.0 / 28.0);
    // "b" U "a" & X !"b": stay in b until 1 whose next state is 3: 0.1·(1/3) from 0, plus the
    // returns 0 → 1 → 0: y = 0.1·(1/3 + (2/3)·y), y = (1/30)/(1 - 1/15) = 1/28.
    close(r#"P=? [ "b" U "a" & X !"b" ]"#, 1.0 / 28.0);
    // G F "a" | F G "b" is G F ("a" | F G "b"): every path ends in 2 (b forever) or 3 (not).
    close(r#"P=? [ G F "a" | F G "b" ]"#, 27.0 / 28.0);
    assert!(boolean(&m, r#"P>=1 [ G F "a" | F G "b" | F G !"b" ]"#));
}

/// A small random chain in the PRISM language, with random labels "a" and "b".
fn random_chain(seed: u64) -> String {
    let mut x = seed | 1;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let n = 2 + next(4);
    let mut text = format!("dtmc\nmodule M\ns:[0..{}];\n", n - 1);
    for s in 0..n {
        let k = 1 + next(3);
        let targets: Vec<u64> = (0..k).map(|_| next(n)).collect();
        let weights: Vec<u64> = (0..k).map(|_| 1 + next(4)).collect();
        let total: u64 = weights.iter().sum();
        let updates: Vec<String> = targets
            .iter()
            .zip(&weights)
            .map(|(t, w)| format!("{w}/{total}:(s'={t})"))
            .collect();
        text += &format!("[] s={s} -> {};\n", updates.join(" + "));
    }
    text += "endmodule\n";
    for label in ["a", "b"] {
        let states: Vec<String> = (0..n)
            .filter(|_| next(2) == 0)
            .map(|s| format!("s={s}"))
            .collect();
        let set = if states.is_empty() {
            "false".to_string()
        } else {
            states.join(" | ")
        };
        text += &format!("label \"{label}\" = {set};\n");
    }
    text
}

#[test]
fn temporal_operators_in_connectives_agree_with_equivalent_forms() {
    // Each pair: a formula written with temporal operators inside connectives (PRISM's and
    // Storm's reach to the right) and an equivalent formula that the automaton builds
    // differently: G F and F G formulas are prefix-independent, so G F ("a" & G F "b") is
    // (G F "a") & (G F "b") and G F ("a" | F G "b") is (G F "a") | (F G "b"); the others are
    // complements (1 - P of the dual, by De Morgan and G = !F!).
    let pairs: [(&str, &str, bool); 6] = [
        (r#"G F "a" & G F "b""#, r#"(G F "a") & (G F "b")"#, false),
        (r#"G F "a" | F G "b""#, r#"(G F "a") | (F G "b")"#, false),
        (r#"F G "a" & G F "b""#, r#"(F G "a") & (G F "b")"#, false),
        (r#"F "a" & G "b""#, r#"G !"a" | F !"b""#, true),
        (r#"!F "a" & X "b""#, r#"F ("a" & (X "b"))"#, true),
        (r#""a" U "b" & X "a""#, r#"!"a" R !"b" | X !"a""#, true),
    ];
    for seed in 1..=40u64 {
        let text = random_chain(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let m = model(&text);
        for (written, other, complement) in pairs {
            let v = number(&m, &format!("P=? [ {written} ]"));
            let w = number(&m, &format!("P=? [ {other} ]"));
            let w = if complement { 1.0 - w } else { w };
            assert!(
                (v - w).abs() < 1e-6,
                "{written}: {v}, {other}: {w} (complement: {complement})\n{text}"
            );
        }
    }
}
