//! LTL formulas that are neither co-safe nor safe (`G F`, `F G`, conjunctions of both) on small
//! interval DTMCs whose values are derived by hand (derivations in the comments), with the
//! default method (sound bounds) and with `--method exact`, including a case where nature needs
//! memory beyond the formula's deterministic automaton.

use augur_check::{
    CheckOptions, CheckSession, Format, LoadOptions, Method, Model, Scalar, StateValues,
};

/// From `s=0` nature sends `[0.3,0.6]` to `s=1` (`a`) and the rest to the trap `s=3`; `s=1`
/// goes to `s=2` and `s=2` back to `s=1` with at least 1/2 at every visit (its self-loop has
/// at most 1/2). Inside `{1, 2}` every resolution visits `s=1` infinitely often almost surely
/// (each visit to `s=2` moves on with probability ≥ 1/2), and the trap never sees `a`: so
/// `P(G F a) = P(0 → 1)`, in `[0.3, 0.6]`, and `F G !a` is its complement.
const CYCLE: &str = "dtmc
module m
  s : [0..3] init 0;
  [] s=0 -> [0.3,0.6] : (s'=1) + [0.4,0.7] : (s'=3);
  [] s=1 -> 1 : (s'=2);
  [] s=2 -> [0.5,1] : (s'=1) + [0,0.5] : (s'=2);
  [] s=3 -> true;
endmodule
label \"a\" = s=1;
";

/// Two self-looping states, `s=1` (`a`) and `s=2` (`b`), joined through the hub `s=0`, which
/// loses exactly 1/2 to the trap `s=3` at every visit. The start `s=4` goes to `s=1` or `s=2`
/// with 1/2 each. End components: `{1}`, `{2}`, `{3}` (the hub cannot keep its mass), so no
/// run sees both `a` and `b` forever: `Pmax(G F a & G F b) = 0`, while `G F a` alone has
/// `Pmax` = 1/2·1 (stay at `s=1`) + 1/2·(1/2) (from `s=2` via the hub, which reaches `s=1`
/// with at most 1/2) = 3/4, and `Pmin = 0` (nature leaves `s=1` for the hub and sends the
/// hub's other half to `s=2`, where it stays). `HUB_FREE` is the same with the hub's loss in
/// `[0, 1/2]`: then `{0, 1, 2}` is an end component seeing both, and the conjunction's `Pmax`
/// is 1.
const HUB: &str = "dtmc
module m
  s : [0..4] init 4;
  [] s=4 -> 0.5 : (s'=1) + 0.5 : (s'=2);
  [] s=1 -> [0,1] : (s'=1) + [0,1] : (s'=0);
  [] s=2 -> [0,1] : (s'=2) + [0,1] : (s'=0);
  [] s=0 -> [0,0.5] : (s'=1) + [0,0.5] : (s'=2) + [0.5,0.5] : (s'=3);
  [] s=3 -> true;
endmodule
label \"a\" = s=1;
label \"b\" = s=2;
";

const HUB_FREE: &str = "dtmc
module m
  s : [0..4] init 4;
  [] s=4 -> 0.5 : (s'=1) + 0.5 : (s'=2);
  [] s=1 -> [0,1] : (s'=1) + [0,1] : (s'=0);
  [] s=2 -> [0,1] : (s'=2) + [0,1] : (s'=0);
  [] s=0 -> [0,1] : (s'=1) + [0,1] : (s'=2) + [0,0.5] : (s'=3);
  [] s=3 -> true;
endmodule
label \"a\" = s=1;
label \"b\" = s=2;
";

/// `s=0` (`a`) goes to `s=1` (`b`) with `[0.2,1]` or to `s=2` (neither) with `[0,0.8]`;
/// `s=1` goes back to `s=0` or on to `s=2`, `s=2` back to `s=0`. The start `s=3` goes to
/// `s=0` or to `s=4` (`a`, absorbing: `a` never followed by `b`) with 1/2 each. The same
/// chain states `{0, 1, 2}` are visited forever with or without the edge `0 → 2` (in the
/// product, `s=2` after `a` is a state of its own); the edge decides `F G (a => X b)`: nature keeping `0 → 1` only (mass 1 there, allowed as its upper
/// bound is 1) satisfies it, so `Pmax` = 1/2; nature sending 0.8 to `s=2` at every visit to
/// `s=0` violates it infinitely often almost surely: `Pmin` = 0.
const EDGE: &str = "dtmc
module m
  s : [0..4] init 3;
  [] s=3 -> 0.5 : (s'=0) + 0.5 : (s'=4);
  [] s=0 -> [0.2,1] : (s'=1) + [0,0.8] : (s'=2);
  [] s=1 -> [0,1] : (s'=0) + [0,1] : (s'=2);
  [] s=2 -> 1 : (s'=0);
  [] s=4 -> true;
endmodule
label \"a\" = s=0 | s=4;
label \"b\" = s=1;
";

/// `s=0 → s=1 → s=2`, and `s=2` back to `s=0` (`[7/8, 1]`) or to `s=1` (`[0, 1/8]`); `a` at
/// `s=1`, `b` at `s=0` and `s=2`. `F G (a => X X b)` fails at every `1 → 2 → 1` (two steps
/// after `a`, `s=1` has no `b`) and holds on `0 → 1 → 2 → 0`. The automaton reaches `s=1` in
/// the same state along `0 → 1` and along `2 → 1` (after `s=2`'s `b` nothing is pending), so
/// the product's end component keeps the same three states with or without the edge
/// `2 → 1`, and only that edge decides acceptance. The start `s=3` goes to `s=0` with
/// `[1/4, 3/4]` or to `s=4` (`a` forever, never `b`: violated). `Pmax` = 3/4 (nature avoids
/// `2 → 1`); `Pmin` = 0 (nature takes it with 1/8 at every visit: infinitely often).
const REPEAT: &str = "dtmc
module m
  s : [0..4] init 3;
  [] s=3 -> [0.25,0.75] : (s'=0) + [0.25,0.75] : (s'=4);
  [] s=0 -> 1 : (s'=1);
  [] s=1 -> 1 : (s'=2);
  [] s=2 -> [0.875,1] : (s'=0) + [0,0.125] : (s'=1);
  [] s=4 -> true;
endmodule
label \"a\" = s=1 | s=4;
label \"b\" = s=0 | s=2;
";

/// Nature needs memory that the formula's `af` automaton does not keep. `s=1` (`a`) and `s=6`
/// both lead to `s=2`, then `s=3`, where nature picks `s=4` (`b`) or `s=5` (`c`); from `s=4` and
/// `s=5` it picks `s=1` or `s=6`. `F G (a => X X X b) & G F c & G F a`: the cycle
/// `1 2 3 4 6 2 3 5 1 …` satisfies it surely (after `a` at `s=1`, three steps on is `s=4`;
/// `a` and `c` recur), so `Pmax` = 1. At `s=3` that nature must remember whether it came from
/// `s=1`, but the automaton state there is the same either way (a fresh `G` branch started at
/// `s=2` absorbs the older one's pending `b`): a nature that is memoryless over the automaton's
/// product gets 0. `Pmin` = 0 (nature always picks `s=4`: `c` never holds).
const MEMORYFUL: &str = "dtmc
module m
  s : [1..6] init 1;
  [] s=1 | s=6 -> 1 : (s'=2);
  [] s=2 -> 1 : (s'=3);
  [] s=3 -> [0,1] : (s'=4) + [0,1] : (s'=5);
  [] s=4 | s=5 -> [0,1] : (s'=1) + [0,1] : (s'=6);
endmodule
label \"a\" = s=1;
label \"b\" = s=4;
label \"c\" = s=5;
";

fn num(model: &str, prop: &str, method: Method) -> f64 {
    let m = Model::from_text("m.prism", model, Format::Prism, &LoadOptions::default()).unwrap();
    let options = CheckOptions {
        epsilon: 1e-12,
        method,
        ..CheckOptions::default()
    };
    let mut s = CheckSession::new(&m, options);
    match s
        .check_str(prop)
        .unwrap_or_else(|e| panic!("{prop}: {e}"))
        .value
    {
        Scalar::Num(x) => x,
        b => panic!("{prop}: {b:?}"),
    }
}

/// `prop` is `want`, by the default method and exactly.
fn expect(model: &str, prop: &str, want: f64) {
    for method in [Method::Auto, Method::Exact] {
        let got = num(model, prop, method);
        assert!(
            (got - want).abs() <= 1e-9,
            "{prop} ({method:?}): got {got}, want {want}"
        );
    }
}

#[test]
fn g_f_and_f_g_are_the_chance_of_entering_the_cycle() {
    expect(CYCLE, "Pmax=? [ G F \"a\" ]", 0.6);
    expect(CYCLE, "Pmin=? [ G F \"a\" ]", 0.3);
    expect(CYCLE, "Pmax=? [ F G !\"a\" ]", 0.7);
    expect(CYCLE, "Pmin=? [ F G !\"a\" ]", 0.4);
    // `F G a` never holds (the cycle leaves `a` every other step, the trap has no `a`).
    expect(CYCLE, "Pmax=? [ F G \"a\" ]", 0.0);
}

#[test]
fn g_f_of_both_needs_one_end_component_seeing_both() {
    expect(HUB, "Pmax=? [ (G F \"a\") & (G F \"b\") ]", 0.0);
    expect(HUB, "Pmin=? [ (G F \"a\") & (G F \"b\") ]", 0.0);
    expect(HUB, "Pmax=? [ G F \"a\" ]", 0.75);
    expect(HUB, "Pmin=? [ G F \"a\" ]", 0.0);
    // Either one: nature maximising stays where it starts (`Pmax` 1); nature minimising sends
    // `s=1` and `s=2` to the hub at every visit, which loses 1/2 to the trap each time, so the
    // trap is reached with probability 1 (`Pmin` 0).
    expect(HUB, "Pmax=? [ (G F \"a\") | (G F \"b\") ]", 1.0);
    expect(HUB, "Pmin=? [ (G F \"a\") | (G F \"b\") ]", 0.0);
    expect(HUB_FREE, "Pmax=? [ (G F \"a\") & (G F \"b\") ]", 1.0);
    expect(HUB_FREE, "Pmin=? [ (G F \"a\") & (G F \"b\") ]", 0.0);
}

#[test]
fn the_kept_edges_decide_not_only_the_states() {
    expect(REPEAT, "Pmax=? [ F G (\"a\" => X X \"b\") ]", 0.75);
    expect(REPEAT, "Pmin=? [ F G (\"a\" => X X \"b\") ]", 0.0);
    expect(REPEAT, "Pmax=? [ G F (\"a\" & X X !\"b\") ]", 1.0);
    expect(REPEAT, "Pmin=? [ G F (\"a\" & X X !\"b\") ]", 0.25);
}

#[test]
fn an_avoidable_edge_to_a_bad_state() {
    expect(EDGE, "Pmax=? [ F G (\"a\" => X \"b\") ]", 0.5);
    expect(EDGE, "Pmin=? [ F G (\"a\" => X \"b\") ]", 0.0);
    // The negation: `G F (a & X !b)`, the extremes swapped.
    expect(EDGE, "Pmax=? [ G F (\"a\" & X !\"b\") ]", 1.0);
    expect(EDGE, "Pmin=? [ G F (\"a\" & X !\"b\") ]", 0.5);
}

#[test]
fn nature_may_remember_what_the_automaton_forgets() {
    let f = "(F G (\"a\" => X X X \"b\")) & (G F \"c\") & (G F \"a\")";
    expect(MEMORYFUL, &format!("Pmax=? [ {f} ]"), 1.0);
    expect(MEMORYFUL, &format!("Pmin=? [ {f} ]"), 0.0);
}

/// A nested `Pmin>=θ [ G F a ]` is a state set: in `CYCLE`, `s=1` and `s=2` have `Pmin` 1
/// (inside the cycle), `s=0` 0.3, the trap 0.
#[test]
fn nested_and_filters() {
    let m = Model::from_text("m.prism", CYCLE, Format::Prism, &LoadOptions::default()).unwrap();
    let mut s = CheckSession::new(&m, CheckOptions::default());
    let r = s
        .check_str("filter(count, Pmin>=0.5 [ G F \"a\" ])")
        .unwrap();
    assert_eq!(r.value, Scalar::Num(2.0));
    let r = s
        .check_str("filter(min, Pmax=? [ G F \"a\" ], s<3)")
        .unwrap();
    match r.value {
        Scalar::Num(x) => assert!((x - 0.6).abs() < 1e-6, "{x}"),
        v => panic!("{v:?}"),
    }
}

/// `s=0` keeps at most 1 − 10⁻¹³ on its self-loop, so nature must send at least 10⁻¹³ to the
/// absorbing `s=1` at every step and `s=0` is left almost surely: `Pmax(F G s=0) = 0` and
/// `Pmin(G F s=1) = 1`, as the exact `Pmax(G s=0) = 0`. The float end-component test counts a
/// row within 10⁻¹² of full as full; under `--method exact` the end components must be decided
/// in rationals, as the exact solver decides them (it reported 1 − 10⁻¹³ and 10⁻¹³).
const ALMOST_FULL: &str = "dtmc
module m
  s : [0..1] init 0;
  [] s=0 -> [0,1] : (s'=1) + [0,0.9999999999999] : (s'=0);
  [] s=1 -> true;
endmodule
";

#[test]
fn exact_end_components_are_decided_in_rationals() {
    for (prop, want) in [
        ("Pmax=? [ F G s=0 ]", 0.0),
        ("Pmin=? [ G F s=1 ]", 1.0),
        ("Pmax=? [ G s=0 ]", 0.0),
    ] {
        assert_eq!(num(ALMOST_FULL, prop, Method::Exact), want, "{prop}");
    }
}

/// `s=1` loops with probability `0.9999999995`: the loader accepts the row (its upper bounds
/// sum to 1 within the tolerance 1e-9), so it is read as full (the loop is certain). Nature
/// sends between 1/4 and 3/4 from `s=0` to the loop (`a`), the rest to `s=2`. Without the
/// normalisation on reading, the float end-component test (rounding slack 1e-12) missed the
/// loop while the iteration used it: `Pmax [ G F a ] = 0` but `Pmin = 1/4`.
const NEARLY_FULL: &str = "dtmc
module m
  s : [0..2] init 0;
  [] s=0 -> [0.25,0.75] : (s'=1) + [0.25,0.75] : (s'=2);
  [] s=1 -> [0.9999999995,0.9999999995] : (s'=1);
  [] s=2 -> true;
endmodule
label \"a\" = s=1;
";

/// The bounds of `prop` by the default method (the value twice when it has none).
fn float_bounds(model: &str, prop: &str) -> (f64, f64) {
    let m = Model::from_text("m.prism", model, Format::Prism, &LoadOptions::default()).unwrap();
    let mut s = CheckSession::new(&m, CheckOptions::default());
    let r = s.check_str(prop).unwrap_or_else(|e| panic!("{prop}: {e}"));
    match r.states {
        StateValues::Num(v) => match v.bounds {
            Some((lo, hi)) => (lo[0], hi[0]),
            None => (v.values[0], v.values[0]),
        },
        StateValues::Bool(_) => panic!("{prop}: a number expected"),
    }
}

#[test]
fn a_row_full_within_the_tolerance_is_full_for_every_decision() {
    // The exact reference: the same model with the loop written as 1 (exact mode refuses the
    // row as written: its bounds sum to less than 1, exactly).
    let full = NEARLY_FULL.replace("[0.9999999995,0.9999999995]", "[1,1]");
    for (f, want_max, want_min) in [("G F \"a\"", 0.75, 0.25), ("F G \"a\"", 0.75, 0.25)] {
        let (max, min) = (format!("Pmax=? [ {f} ]"), format!("Pmin=? [ {f} ]"));
        let (qmax, qmin) = (
            num(&full, &max, Method::Exact),
            num(&full, &min, Method::Exact),
        );
        assert_eq!((qmax, qmin), (want_max, want_min), "{f} exactly");
        let (max_lo, max_hi) = float_bounds(NEARLY_FULL, &max);
        let (min_lo, min_hi) = float_bounds(NEARLY_FULL, &min);
        assert!(
            min_lo <= max_hi,
            "{f}: Pmin [{min_lo}, {min_hi}] above Pmax [{max_lo}, {max_hi}]"
        );
        assert!(
            max_lo <= qmax && qmax <= max_hi,
            "{max}: {qmax} outside [{max_lo}, {max_hi}]"
        );
        assert!(
            min_lo <= qmin && qmin <= min_hi,
            "{min}: {qmin} outside [{min_lo}, {min_hi}]"
        );
    }
}
