//! Tests of parsing and building, on small models whose chains are worked out by hand.

use crate::{parse_model, BuildOptions, PrismError};
use augur_dtmc::Dtmc;
use augur_expr::Value;
use num_rational::BigRational;

fn build(src: &str) -> (Dtmc, crate::ExplorationReport) {
    build_with(src, &[], &BuildOptions::default())
}

fn build_with(
    src: &str,
    consts: &[(String, Value)],
    opts: &BuildOptions<'_>,
) -> (Dtmc, crate::ExplorationReport) {
    let m = parse_model(src, "test.pm").unwrap_or_else(|e| panic!("{e}"));
    m.build(consts, opts).unwrap_or_else(|e| panic!("{e}"))
}

fn err(src: &str) -> PrismError {
    match parse_model(src, "test.pm") {
        Err(e) => e,
        Ok(m) => match m.build(&[], &BuildOptions::default()) {
            Err(e) => e,
            Ok(_) => panic!("expected an error"),
        },
    }
}

/// The state index whose valuation has `name = value` for every pair.
fn state(d: &Dtmc, want: &[(&str, Value)]) -> usize {
    let v = d.valuations.as_ref().unwrap();
    (0..d.num_states())
        .find(|&s| {
            want.iter().all(|(name, val)| {
                let i = v.names.iter().position(|x| x == name).unwrap();
                v.get(s, i) == Some(*val)
            })
        })
        .unwrap_or_else(|| panic!("no state {want:?}"))
}

fn prob(d: &Dtmc, s: usize, t: usize) -> f64 {
    *d.matrix.get(s, t).unwrap_or(&0.0)
}

fn int(name: &str, v: i64) -> (&str, Value) {
    (name, Value::Int(v))
}

#[test]
fn three_modules_synchronise_with_product_probabilities() {
    // [go] fires only when every module with `go` in its alphabet has an enabled [go]:
    // a flips a fair coin, b picks 0/1 with 1/4, 3/4, c just moves. Product of probabilities.
    let src = "dtmc
module a  x : [0..2];  [go] x=0 -> 0.5:(x'=1) + 0.5:(x'=2); endmodule
module b  y : [0..2];  [go] y=0 -> 0.25:(y'=1) + 0.75:(y'=2); endmodule
module c  z : [0..1];  [go] z=0 -> (z'=1); endmodule
";
    let (d, r) = build(src);
    // Initial state + 4 successors, all absorbing (deadlocks fixed with self-loops).
    assert_eq!(d.num_states(), 5);
    assert_eq!(r.deadlocks, 4);
    let s0 = state(&d, &[int("x", 0), int("y", 0), int("z", 0)]);
    for (x, y, p) in [(1, 1, 0.125), (1, 2, 0.375), (2, 1, 0.125), (2, 2, 0.375)] {
        let t = state(&d, &[int("x", x), int("y", y), int("z", 1)]);
        assert!((prob(&d, s0, t) - p).abs() < 1e-15);
    }
}

#[test]
fn a_module_without_an_enabled_command_blocks_the_action() {
    // c has `go` in its alphabet but its only [go] needs z=1: `go` never fires; the
    // unlabelled command of a is the only choice. d has no `go`, so it does not take part.
    let src = "dtmc
module a  x : [0..2];  [go] x=0 -> (x'=1); [] x=0 -> (x'=2); endmodule
module c  z : [0..1];  [go] z=1 -> (z'=0); endmodule
module d  w : [0..1];  [other] w=0 -> (w'=1); endmodule
";
    let (d, _) = build(src);
    let s0 = state(&d, &[int("x", 0), int("z", 0), int("w", 0)]);
    let unl = state(&d, &[int("x", 2), int("z", 0), int("w", 0)]);
    let oth = state(&d, &[int("x", 0), int("z", 0), int("w", 1)]);
    // Two choices in s0 (the unlabelled command and [other]): 1/2 each (PRISM's DTMC rule).
    assert_eq!(prob(&d, s0, unl), 0.5);
    assert_eq!(prob(&d, s0, oth), 0.5);
    assert_eq!(d.matrix.outer_view(s0).unwrap().nnz(), 2);
}

#[test]
fn several_synchronising_commands_give_all_combinations() {
    // a has two enabled [s] commands, b one: two choices, each 1/2.
    let src = "dtmc
module a  x : [0..2];  [s] x=0 -> (x'=1); [s] x=0 -> (x'=2); endmodule
module b  y : [0..1];  [s] y=0 -> (y'=1); endmodule
";
    let (d, r) = build(src);
    let s0 = state(&d, &[int("x", 0), int("y", 0)]);
    assert_eq!(prob(&d, s0, state(&d, &[int("x", 1), int("y", 1)])), 0.5);
    assert_eq!(prob(&d, s0, state(&d, &[int("x", 2), int("y", 1)])), 0.5);
    assert_eq!(r.multi_choice_states, 1);
    assert!(
        r.warnings.iter().any(|w| w.contains("(x=0, y=0)")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn steady_1_interleaving_is_uniform_over_modules() {
    // PRISM's dtmc_steady_1: in (s=1, t=0) both modules' unlabelled commands are enabled.
    let src = "dtmc
module m1 s: [0..2] init 0; [] s=0 -> 1/4:(s'=0) + 1/2:(s'=1) + 1/4:(s'=2); [] s>0 -> true; endmodule
module m2 t: [0..2] init 0; [] true -> 1/2:(t'=0) + 1/4:(t'=1) + 1/4:(t'=2); endmodule
";
    let (d, _) = build(src);
    assert_eq!(d.num_states(), 9);
    let a = state(&d, &[int("s", 1), int("t", 0)]);
    // m1's `true` keeps the state (1/2 · 1); m2 moves t: 1/2·1/2 to t=0 (the same state).
    assert!((prob(&d, a, a) - 0.75).abs() < 1e-15);
    assert!((prob(&d, a, state(&d, &[int("s", 1), int("t", 1)])) - 0.125).abs() < 1e-15);
}

#[test]
fn renaming_copies_variables_actions_and_formula_bodies() {
    let src = "dtmc
formula ready1 = x1 = 0;
module p1 x1 : [0..1]; [tick] ready1 -> (x1'=1); [] x1=1 -> (x1'=1); endmodule
module p2 = p1 [x1=x2, tick=tock] endmodule
";
    let m = parse_model(src, "r.pm").unwrap();
    let ast = m.ast();
    assert_eq!(ast.modules[1].name, "p2");
    assert_eq!(ast.modules[1].vars[0].name, "x2");
    assert_eq!(ast.modules[1].commands[0].action.as_deref(), Some("tock"));
    let (d, _) = m.build(&[], &BuildOptions::default()).unwrap();
    // tick and tock are independent actions: from (0,0) each fires with 1/2.
    let s0 = state(&d, &[int("x1", 0), int("x2", 0)]);
    assert_eq!(prob(&d, s0, state(&d, &[int("x1", 1), int("x2", 0)])), 0.5);
    assert_eq!(prob(&d, s0, state(&d, &[int("x1", 0), int("x2", 1)])), 0.5);
}

#[test]
fn rewards_state_and_transition_with_merging() {
    // Two unlabelled commands lead to the same successor: probabilities merge (1/2 + 1/2)
    // and the transition reward becomes the probability-weighted mean (2·1/2 + 6·1/2 = 4).
    let src = "dtmc
module m x : [0..1]; [] x=0 -> (x'=1); [b] x=0 -> (x'=1); [] x=1 -> true; endmodule
rewards \"r\"
  x=0 : 10;
  [] x=0 : 2;
  [b] x=0 : 6;
  x=1 : 1;
endrewards
rewards
  [] true : 3;
endrewards
";
    let (d, _) = build(src);
    let s0 = state(&d, &[int("x", 0)]);
    let s1 = state(&d, &[int("x", 1)]);
    assert_eq!(prob(&d, s0, s1), 1.0);
    let r = d.reward_structure("r").unwrap();
    assert_eq!(r.state.as_ref().unwrap()[s0], 10.0);
    assert_eq!(r.state.as_ref().unwrap()[s1], 1.0);
    let tr = r.transition.as_ref().unwrap();
    let pos = |s: usize, t: usize| -> usize {
        let start = d.matrix.indptr().outer_inds_sz(s).start;
        start
            + d.matrix
                .outer_view(s)
                .unwrap()
                .indices()
                .iter()
                .position(|&c| c as usize == t)
                .unwrap()
    };
    assert_eq!(tr[pos(s0, s1)], 4.0);
    assert_eq!(tr[pos(s1, s1)], 0.0);
    // Unnamed structure: state rewards absent, transition rewards only on [] (3·1/2 in s0).
    let u = &d.rewards[1];
    assert!(u.name.is_none() && u.state.is_none());
    assert_eq!(u.transition.as_ref().unwrap()[pos(s0, s1)], 1.5);
    assert_eq!(u.transition.as_ref().unwrap()[pos(s1, s1)], 3.0);
}

#[test]
fn labels_init_deadlock_and_init_block() {
    let src = "dtmc
module m x : [0..3]; b : bool; [] x<2 -> (x'=x+1); endmodule
label \"two\" = x=2;
init x<=1 & !b endinit
";
    let (d, r) = build(src);
    assert_eq!(r.initial_states, 2);
    assert_eq!(d.initial, vec![0, 1]);
    assert_eq!(d.num_states(), 3);
    let two = state(&d, &[int("x", 2)]);
    assert!(d.label("two").unwrap().contains(two));
    assert!(d.label("deadlock").unwrap().contains(two));
    assert_eq!(d.label("deadlock").unwrap().count_ones(..), 1);
    assert_eq!(d.label("init").unwrap().count_ones(..), 2);
    assert_eq!(prob(&d, two, two), 1.0);
}

#[test]
fn constants_from_outside_and_dependencies() {
    let src = "dtmc
const int M = 2*N;
const int N;
const double p;
const double q = 1 - p;
module m x : [0..M] init N; [] x>0 -> p:(x'=x-1) + q:(x'=min(x+1, M)); [] x=0 -> true; endmodule
";
    let m = parse_model(src, "c.pm").unwrap();
    assert_eq!(
        m.undefined_constants(),
        vec!["N".to_string(), "p".to_string()]
    );
    match m.build(&[], &BuildOptions::default()) {
        Err(PrismError::MissingConstants { names, .. }) => assert_eq!(names, vec!["N", "p"]),
        other => panic!("{other:?}"),
    }
    let consts = vec![
        ("N".to_string(), Value::Int(2)),
        ("p".to_string(), Value::Double(0.3)),
    ];
    let (d, r) = m.build(&consts, &BuildOptions::default()).unwrap();
    assert_eq!(d.num_states(), 5);
    assert!(r.constants.contains(&("M".to_string(), Value::Int(4))));
    let vals = m.constant_values(&consts).unwrap();
    assert_eq!(vals[0], ("M".to_string(), Value::Int(4)));
    // An int constant given a double is rejected.
    let bad = vec![
        ("N".to_string(), Value::Double(2.5)),
        ("p".to_string(), Value::Double(0.3)),
    ];
    assert!(matches!(
        m.build(&bad, &BuildOptions::default()),
        Err(PrismError::BadConstant { .. })
    ));
}

#[test]
fn exact_mode_reads_literals_as_rationals() {
    let src = "dtmc
const double p = 0.7;
module m x : [0..2]; [] x=0 -> p:(x'=1) + (1-p):(x'=2); [] x>0 -> true; endmodule
";
    let opts = BuildOptions {
        exact: true,
        ..Default::default()
    };
    let (d, _) = build_with(src, &[], &opts);
    let exact = d.exact.as_ref().unwrap();
    assert_eq!(exact.len(), d.num_transitions());
    let s0 = state(&d, &[int("x", 0)]);
    let row = d.matrix.indptr().outer_inds_sz(s0);
    let q: Vec<BigRational> = exact[row].to_vec();
    assert_eq!(
        q,
        vec![
            BigRational::new(7.into(), 10.into()),
            BigRational::new(3.into(), 10.into())
        ]
    );
    // The f64 entries are the nearest doubles of the exact values (0.3, not 1 - 0.7).
    assert_eq!(
        d.matrix.data()[d.matrix.indptr().outer_inds_sz(s0).start + 1],
        0.3
    );
}

fn located(e: &PrismError) -> (usize, usize) {
    let l = e.location().unwrap_or_else(|| panic!("not located: {e}"));
    (l.line, l.column)
}

#[test]
fn unsupported_model_types_are_located() {
    let e = err("// comment\nmdp\nmodule m x : [0..1]; [] true -> true; endmodule\n");
    assert_eq!(located(&e), (2, 1));
    assert!(e.to_string().contains("not supported: `mdp`"), "{e}");
    let e = err("ctmc\nmodule m x : [0..1]; [] true -> 2.5 : true; endmodule\n");
    assert!(e.to_string().contains("not supported: `ctmc`"), "{e}");
    let e = err("dtmc\nmodule m x : [0..1]; [] true -> true; endmodule\nsystem m endsystem\n");
    assert_eq!(located(&e), (3, 1));
    let e = err("module m x : [0..1]; [] true -> true; endmodule\n");
    assert!(e.to_string().contains("missing model type"), "{e}");
}

#[test]
fn syntax_errors_are_located() {
    let e = err("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> (x'=1) +;\nendmodule\n");
    assert_eq!(located(&e).0, 4, "{e}");
    let e = err("dtmc\nmodule m\n  x : [0..1]\n  [] x=0 -> (x'=1);\nendmodule\n");
    assert_eq!(located(&e).0, 4, "{e}");
    assert!(e.diagnostic().to_string().contains('^'));
}

#[test]
fn semantic_errors_are_located() {
    // Unknown identifier: points at it.
    let e = err("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 & y>1 -> (x'=1);\nendmodule\n");
    assert_eq!(located(&e), (4, 12), "{e}");
    assert!(e.to_string().contains("unknown identifier `y`"));
    // Type error in an update.
    let e = err("dtmc\nmodule m\n  x : [0..1];\n  [] x=0 -> (x'=0.5);\nendmodule\n");
    assert_eq!(located(&e).0, 4, "{e}");
    // Duplicate variable.
    let e = err("dtmc\nmodule a x : [0..1]; endmodule\nmodule b\n x : [0..1];\nendmodule\n");
    assert_eq!(located(&e), (4, 2), "{e}");
    // Updating another module's variable.
    let e = err("dtmc\nmodule a x : [0..1]; endmodule\nmodule b y : [0..1];\n [] true -> (x'=1);\nendmodule\n");
    assert_eq!(located(&e), (4, 14), "{e}");
    // Redefining a built-in label.
    let e = err("dtmc\nmodule a x : [0..1]; endmodule\nlabel \"init\" = x=0;\n");
    assert_eq!(located(&e), (3, 1), "{e}");
    // Renaming that leaves a variable unrenamed.
    let e = err("dtmc\nmodule a x : [0..1]; y : bool; endmodule\nmodule b = a [x=z] endmodule\n");
    assert_eq!(located(&e), (3, 1), "{e}");
    assert!(e.to_string().contains("must rename variable `y`"), "{e}");
    // A constant defined in terms of itself.
    let e =
        err("dtmc\nconst int c1 = c2;\nconst int c2 = c1 + 1;\nmodule a x : [0..1]; endmodule\n");
    assert!(e.to_string().contains("in terms of itself"), "{e}");
}

#[test]
fn build_errors_name_state_and_command() {
    // Out of range.
    let e = err("dtmc\nmodule m\n  x : [0..2];\n  [] true -> (x'=x+1);\nendmodule\n");
    let s = e.to_string();
    assert!(
        s.contains("leaves the range [0..2]") && s.contains("(x=2)") && s.contains("test.pm:4:3"),
        "{s}"
    );
    // Probabilities not summing to one.
    let e = err("dtmc\nmodule m\n  x : [0..2];\n  [] x=0 -> 0.5:(x'=1) + 0.4:(x'=2);\n  [] x>0 -> true;\nendmodule\n");
    assert!(e.to_string().contains("sum to 0.9"), "{e}");
    // Probability outside [0, 1].
    let e = err("dtmc\nmodule m\n  x : [0..2];\n  [] x=0 -> 1.5:(x'=1) + -0.5:(x'=2);\n  [] x>0 -> true;\nendmodule\n");
    assert!(e.to_string().contains("not in [0, 1]"), "{e}");
    // Division by zero, with the state.
    let e = err("dtmc\nmodule m\n  x : [0..2];\n  [] x<2 -> 1/(1-x):(x'=x+1) + (1 - 1/(1-x)):(x'=x);\n  [] x=2 -> true;\nendmodule\n");
    let s = e.to_string();
    assert!(s.contains("division by zero") && s.contains("(x=1)"), "{s}");
    // Deadlocks are an error on request.
    let m = parse_model(
        "dtmc\nmodule m x : [0..1]; [] x=0 -> (x'=1); endmodule\n",
        "d.pm",
    )
    .unwrap();
    let opts = BuildOptions {
        fix_deadlocks: false,
        ..Default::default()
    };
    let e = m.build(&[], &opts).unwrap_err();
    assert!(
        e.to_string().contains("deadlock") && e.to_string().contains("(x=1)"),
        "{e}"
    );
}

#[test]
fn formulas_expand_into_property_expressions() {
    let m = parse_model("dtmc\nformula f = x + 1;\nformula g = f * 2;\nmodule m x : [0..1]; [] true -> true; endmodule\n", "f.pm").unwrap();
    let e = augur_expr::parse_expr("g > 3").unwrap();
    let expanded = m.expand_formulas(&e);
    assert_eq!(
        expanded,
        augur_expr::parse_expr("((x + 1) * 2) > 3").unwrap()
    );
    assert_eq!(m.formulas().len(), 2);
}

#[test]
fn progress_is_reported() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let last = AtomicUsize::new(0);
    let cb = |p: crate::BuildProgress| {
        if p.done {
            last.store(p.states, Ordering::SeqCst);
        }
    };
    let opts = BuildOptions {
        progress: Some(&cb),
        ..Default::default()
    };
    let (d, _) = build_with(
        "dtmc\nmodule m x : [0..40000]; [] x<40000 -> (x'=x+1); [] x=40000 -> true; endmodule\n",
        &[],
        &opts,
    );
    assert_eq!(last.load(Ordering::SeqCst), d.num_states());
    assert_eq!(d.num_states(), 40001);
}

#[test]
fn builds_stop_at_the_callers_limits() {
    use crate::StopReason;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};
    let src =
        "dtmc\nmodule m x : [0..40000]; [] x<40000 -> (x'=x+1); [] x=40000 -> true; endmodule\n";
    let m = parse_model(src, "line.pm").unwrap();
    let run = |opts: &BuildOptions<'_>| m.build(&[], opts).map(|(d, _)| d.num_states());
    // Exactly at the limit is fine; one state more stops, with the count so far.
    let at = |n| BuildOptions {
        max_states: Some(n),
        ..Default::default()
    };
    assert_eq!(run(&at(40001)), Ok(40001));
    let err = run(&at(1000)).unwrap_err();
    assert_eq!(
        err,
        PrismError::Stopped {
            reason: StopReason::MaxStates(1000),
            states: 1001,
            explored: 999,
        }
    );
    assert_eq!(
        err.to_string(),
        "the model has more than 1000 states (1001 states found, 999 explored so far)"
    );
    // Initial states count too.
    let many_init = parse_model(
        "dtmc\nmodule m x : [0..9]; [] true -> true; endmodule\ninit true endinit\n",
        "init.pm",
    )
    .unwrap();
    let e = many_init.build(&[], &at(3)).unwrap_err();
    assert!(
        matches!(
            e,
            PrismError::Stopped {
                reason: StopReason::MaxStates(3),
                ..
            }
        ),
        "{e:?}"
    );
    // A set cancellation flag and a passed deadline stop at the next check.
    let flag = AtomicBool::new(true);
    let cancelled = BuildOptions {
        cancel: Some(&flag),
        ..Default::default()
    };
    let e = run(&cancelled).unwrap_err();
    assert!(
        matches!(e, PrismError::Stopped { reason: StopReason::Cancelled, explored, .. } if explored == crate::build::CHECK_EVERY),
        "{e:?}"
    );
    let late = BuildOptions {
        deadline: Some(Instant::now() - Duration::from_millis(1)),
        ..Default::default()
    };
    let e = run(&late).unwrap_err();
    assert!(
        matches!(
            e,
            PrismError::Stopped {
                reason: StopReason::Deadline,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn wide_states_use_several_words() {
    // 70 booleans need two words; 5 more 40-bit variables need more.
    let mut src = String::from("dtmc\nmodule m\n");
    for i in 0..70 {
        src.push_str(&format!("b{i} : bool;\n"));
    }
    for i in 0..5 {
        src.push_str(&format!("w{i} : [0..1000000000000] init 999999999999;\n"));
    }
    src.push_str("[] !b69 -> (b69'=true) & (w4'=1000000000000);\n[] b69 -> true;\nendmodule\n");
    let (d, _) = build(&src);
    assert_eq!(d.num_states(), 2);
    let s = state(
        &d,
        &[
            ("b69", Value::Bool(true)),
            ("w4", Value::Int(1_000_000_000_000)),
            ("w0", Value::Int(999_999_999_999)),
        ],
    );
    assert_eq!(s, 1);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn parser_never_panics_on_random_text(s in "\\PC{0,200}") {
            let _ = parse_model(&s, "fuzz.pm");
        }

        #[test]
        fn parser_never_panics_on_mutated_models(cut in 0usize..400, insert in "[\\[\\]();:+&'=<>!x0-9 .]{0,6}") {
            let base = "dtmc\nconst int N = 3;\nformula f = x < N;\nmodule m\n  x : [0..N] init 0;\n  b : bool;\n  [a] f & !b -> 0.5:(x'=x+1) + 0.5:(b'=true);\n  [] x=N | b -> true;\nendmodule\nlabel \"done\" = x=N;\nrewards \"r\" [a] true : 1; x>0 : x/2; endrewards\n";
            let cut = cut.min(base.len());
            let mut s = base[..cut].to_string();
            s.push_str(&insert);
            s.push_str(&base[cut..]);
            if let Ok(m) = parse_model(&s, "fuzz.pm") {
                let _ = m.build(&[], &BuildOptions::default());
            }
        }
    }
}

/// Formulas computed once per state into derived slots (issue 15, item 3).
mod derived_formulas {
    use super::*;
    use crate::compile::DEFAULT_INLINE_LIMIT;

    /// `formula {p}0 = {base}; formula {p}{i} = {p}{i-1} + {p}{i-1};` up to `{p}{n}`: the last
    /// is `2^n * base`, 2^n copies of `base` written out.
    fn doubling(p: &str, base: &str, n: usize) -> String {
        let mut s = format!("formula {p}0 = {base};\n");
        for i in 1..=n {
            s.push_str(&format!("formula {p}{i} = {p}{} + {p}{};\n", i - 1, i - 1));
        }
        s
    }

    /// The build with every non-trivial formula derived (limit 0), with the default limit, and
    /// with every formula in place: the same chain (or the same error message) each time.
    fn same_all_ways(src: &str, opts: &BuildOptions<'_>) -> std::result::Result<String, String> {
        same_ways(src, opts, true)
    }

    /// [`same_all_ways`], without writing every formula in place unless `inline_all` (a model
    /// whose formulas are too large to write out).
    fn same_ways(
        src: &str,
        opts: &BuildOptions<'_>,
        inline_all: bool,
    ) -> std::result::Result<String, String> {
        let m = parse_model(src, "test.pm").map_err(|e| e.to_string())?;
        let run = |limit: u64| {
            m.build_with_inline_limit(&[], opts, limit)
                .map(|(d, r)| {
                    let labels: Vec<(&String, Vec<usize>)> = d
                        .labels
                        .iter()
                        .map(|(n, set)| (n, set.ones().collect()))
                        .collect();
                    format!(
                        "{:?}\n{:?}\n{labels:?}\n{:?}\n{:?}\n{:?}\n{r:?}",
                        d.matrix, d.initial, d.rewards, d.valuations, d.exact
                    )
                })
                .map_err(|e| e.to_string())
        };
        let derived = run(0);
        assert_eq!(derived, run(DEFAULT_INLINE_LIMIT), "default limit\n{src}");
        if inline_all {
            assert_eq!(derived, run(u64::MAX), "inlined\n{src}");
        }
        derived
    }

    /// f30 = 2^30·x is used in a guard, an update, a label, a reward and init...endinit.
    fn thirty_doublings() -> String {
        format!(
            "dtmc\n{}module m\n  x : [0..3];\n  \
             [] f30 < 3221225472 -> 0.5:(x'=min(3, x + 1 + mod(f30, 2))) + 0.5:true;\n  \
             [] f30 >= 3221225472 -> true;\nendmodule\n\
             init f30 <= 1073741824 endinit\n\
             label \"big\" = f30 > 5;\n\
             rewards \"r\" true : f30 / 1073741824; endrewards\n",
            doubling("f", "x", 30)
        )
    }

    #[test]
    fn thirty_doubling_formulas_are_computed_once_per_state() {
        let (d, _) = build(&thirty_doublings());
        // init: f30 = 2^30·x <= 2^30, so x = 0 or 1; x < 3 moves up with 1/2.
        assert_eq!(d.num_states(), 4);
        assert_eq!(d.initial, vec![0, 1]);
        for x in 0..3 {
            let (s, t) = (state(&d, &[int("x", x)]), state(&d, &[int("x", x + 1)]));
            assert_eq!(prob(&d, s, t), 0.5);
            assert_eq!(prob(&d, s, s), 0.5);
        }
        let s3 = state(&d, &[int("x", 3)]);
        assert_eq!(prob(&d, s3, s3), 1.0);
        // "big": 2^30·x > 5 iff x >= 1. The reward f30 / 2^30 is x.
        let big = d.label("big").unwrap();
        let rew = d.rewards[0].state.as_ref().unwrap();
        for x in 0..4 {
            let s = state(&d, &[int("x", x)]);
            assert_eq!(big.contains(s), x >= 1);
            assert_eq!(rew[s], x as f64);
        }
    }

    #[test]
    fn thirty_doubling_formulas_in_exact_mode() {
        // Integer formulas are derived in exact mode too; a real one (r5 = 32·x/10) stays in
        // place, and the probability r5/32 = x/10 is exact.
        let src = format!(
            "dtmc\n{}{}module m\n  x : [0..3] init 1;\n  \
             [] f30 < 3221225472 -> r5/32 : (x'=x+1) + 1 - r5/32 : true;\n  \
             [] f30 >= 3221225472 -> true;\nendmodule\n",
            doubling("f", "x", 30),
            doubling("r", "x/10", 5)
        );
        let opts = BuildOptions {
            exact: true,
            ..Default::default()
        };
        let (d, _) = build_with(&src, &[], &opts);
        assert_eq!(d.num_states(), 3);
        let exact = d.exact.as_ref().unwrap();
        let q = |n: i64, k: i64| BigRational::new(n.into(), k.into());
        // Row of x=1: to x=2 with 1/10, stay with 9/10 (entries in target order).
        let (s1, s2) = (state(&d, &[int("x", 1)]), state(&d, &[int("x", 2)]));
        let row: Vec<(usize, BigRational)> = d
            .matrix
            .indptr()
            .outer_inds_sz(s1)
            .map(|k| (d.matrix.indices()[k] as usize, exact[k].clone()))
            .collect();
        assert_eq!(row, {
            let mut r = vec![(s1, q(9, 10)), (s2, q(1, 10))];
            r.sort_by_key(|e| e.0);
            r
        });
        same_ways(&src, &opts, false).unwrap();
    }

    #[test]
    fn a_huge_real_formula_in_exact_mode_is_a_located_limit_error() {
        // 2^25 copies of x/10: computed once per state normally, but exact mode keeps a real
        // formula in place, and that is refused with the formula's name.
        let src = format!(
            "dtmc\n{}module m\n  x : [0..1];\n  [] r25 > 1 -> true;\n  [] r25 <= 1 -> (x'=1);\nendmodule\n",
            doubling("r", "x/10", 25)
        );
        let (d, _) = build(&src);
        assert_eq!(d.num_states(), 2);
        let m = parse_model(&src, "test.pm").unwrap();
        let opts = BuildOptions {
            exact: true,
            ..Default::default()
        };
        let e = m.build(&[], &opts).unwrap_err().to_string();
        assert!(e.contains("formula `r") && e.contains("exact mode"), "{e}");
        assert!(e.contains("test.pm:"), "{e}");
    }

    #[test]
    fn a_derived_formula_fails_only_where_it_is_read() {
        // q = mod(12, x) fails at x = 0, where the guard does not read it (x > 0 first).
        let src = "dtmc\nformula q = mod(12, x) + mod(12, x);\nmodule m\n  x : [0..2];\n  \
                   [] x = 0 -> (x'=1);\n  [] x > 0 & q > 0 -> (x'=2);\nendmodule\n\
                   label \"q\" = x > 0 & q = 0;\n";
        let ok = same_all_ways(src, &BuildOptions::default()).unwrap();
        assert!(ok.contains("deadlock"), "{ok}");
        // Read at x = 0: the same located message whether derived or in place.
        let bad = src.replace("x > 0 & q > 0", "q > 0 | x = 2");
        let e = same_all_ways(&bad, &BuildOptions::default()).unwrap_err();
        assert!(e.contains("mod with a non-positive divisor"), "{e}");
        let bad = src.replace("x > 0 & q = 0", "q = 0");
        let e = same_all_ways(&bad, &BuildOptions::default()).unwrap_err();
        assert!(e.contains("label \"q\""), "{e}");
    }

    #[test]
    fn derived_and_inlined_formulas_agree_on_ordinary_models() {
        let models = [
            "dtmc\nconst int N = 3;\nformula f = x < N;\nformula g = f & !b;\nmodule m\n  x : [0..N] init 0;\n  b : bool;\n  [a] g -> 0.5:(x'=x+1) + 0.5:(b'=true);\n  [] x=N | b -> true;\nendmodule\nlabel \"done\" = x=N;\nrewards \"r\" [a] g : 1; x>0 : x/2; endrewards\n".to_string(),
            "dtmc\nformula p = x / 4;\nformula up = min(x + 1, 4);\nformula c = x > 1 ? p : 1 - p;\nmodule m\n  x : [0..4] init 0;\n  y : bool init false;\n  [] !y -> c : (x'=up) + 1 - c : (y'=x>2);\n  [] y -> true;\nendmodule\nrewards true : c * 3 + pow(2, x); endrewards\n".to_string(),
            format!("dtmc\n{}{}module m\n  x : [0..3] init 0;\n  y : [0..3] init 0;\n  [s] g8 & x < 3 -> 0.5:(x'=x+1) + 0.5:(y'=mod(h6, 4));\n  [s] !(g8 & x < 3) -> true;\nendmodule\nmodule n\n  z : [0..1] init 0;\n  [s] true -> (z'=1-z);\nendmodule\nlabel \"g\" = g8 | h6 > 20;\n", doubling("g", "x < 2 | y = 1", 8).replace(" + ", " & "), doubling("h", "x * y + z", 6)),
        ];
        for src in &models {
            same_all_ways(src, &BuildOptions::default()).unwrap();
            let exact = BuildOptions {
                exact: true,
                ..Default::default()
            };
            same_all_ways(src, &exact).unwrap();
        }
        same_ways(&thirty_doublings(), &BuildOptions::default(), false)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn a_renamed_module_keeps_the_formulas_it_does_not_rename() {
        // m2 copies m1 with x renamed to y: f30 reads x, so it is copied (too large: refused,
        // with the module's name); g30 reads only c, kept by name and computed once per state.
        let base = format!(
            "dtmc\nglobal c : [0..1];\n{}{}module m1\n  x : [0..1];\n  [] USE -> (x'=1);\nendmodule\nmodule m2 = m1 [x=y] endmodule\n",
            doubling("f", "x", 30),
            doubling("g", "c + 1", 30)
        );
        let (d, _) = build(&base.replace("USE", "x = 0 & g30 > 5"));
        // (x, y) goes from (0, 0) to (1, 1) either way: 4 states, the last a deadlock.
        assert_eq!(d.num_states(), 4);
        let e = err(&base.replace("USE", "f30 < 5"));
        let e = e.to_string();
        assert!(e.contains("module `m2` copies formula `f30`"), "{e}");
        assert!(e.contains("test.pm:"), "{e}");
    }

    #[test]
    fn a_property_expansion_stops_at_the_limit_and_says_why() {
        let src = format!(
            "dtmc\n{}module m\n  x : [0..1];\n  [] true -> true;\nendmodule\n",
            doubling("f", "x", 30)
        );
        let m = parse_model(&src, "test.pm").unwrap();
        // f19 written out has 2^20 - 1 nodes: expanded; f20 and f30 are left by name.
        let e = augur_expr::parse_expr("f19 > 5 & f20 > 5 | f30 > 5").unwrap();
        let idents = m.expand_formulas(&e).idents();
        assert!(
            idents.contains("x") && !idents.contains("f19"),
            "{idents:?}"
        );
        assert!(
            idents.contains("f20") && idents.contains("f30"),
            "{idents:?}"
        );
        let why = m.unexpanded_formula_message("f30").unwrap();
        assert!(
            why.contains("formula `f30`") && why.contains("1048576"),
            "{why}"
        );
        assert!(why.contains("label"), "{why}");
        assert_eq!(m.unexpanded_formula_message("x"), None);
        // Two uses of f19 exceed the budget of one expression: the second is left by name.
        let e = augur_expr::parse_expr("f19 > f19").unwrap();
        assert!(m.expand_formulas(&e).idents().contains("f19"));
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        /// Integer expressions over x, y and the formulas before formula `k`.
        fn int_expr(k: usize) -> impl Strategy<Value = String> {
            let mut leaves = vec!["x".to_string(), "y".to_string(), "1".into(), "2".into()];
            leaves.extend((0..k).map(|j| format!("f{j}")));
            let leaf = proptest::sample::select(leaves);
            leaf.prop_recursive(4, 24, 3, |inner| {
                prop_oneof![
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} - {b})")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} * {b})")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("min({a}, {b})")),
                    (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("mod({a}, {b})")),
                    (inner.clone(), inner.clone(), inner.clone())
                        .prop_map(|(c, a, b)| format!("({c} > {a} ? {a} : {b})")),
                    (inner.clone(), inner)
                        .prop_map(|(a, b)| format!("({a} / ({b} + 0.5) > 1 ? 1 : 0)")),
                ]
            })
        }

        fn model() -> impl Strategy<Value = String> {
            (int_expr(0), int_expr(1), int_expr(2), int_expr(3), 0usize..4).prop_map(
                |(a, b, c, d, g)| {
                    format!(
                        "dtmc\nformula f0 = {a};\nformula f1 = {b};\nformula f2 = {c};\nformula f3 = {d};\n\
                         formula ok = x < 3 & f{g} > 0;\n\
                         module m\n  x : [0..3] init 0;\n  y : [0..2] init 0;\n  \
                         [] ok -> 0.5:(x'=mod(f2, 4)) + 0.5:(y'=mod(f3, 3));\n  \
                         [] !ok -> (x'=mod(x + 1, 4));\nendmodule\n\
                         label \"l\" = y = 1 & f1 > f0;\nrewards true : f3 / 2; endrewards\n"
                    )
                },
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]
            #[test]
            fn derived_and_inlined_formulas_give_the_same_chain_or_error(src in model()) {
                let _ = same_all_ways(&src, &BuildOptions::default());
            }
        }
    }
}

#[test]
fn formula_values_in_every_state_agree_with_the_written_out_formula() {
    // g = (x + 2*y) * (x + 2*y) - y, doubled through d1..d6 (64·g): small enough to write
    // out, and large enough that `formula_values` computes d6 through derived slots. Both
    // ways give the same value in every state of the built chain, and the closed form.
    let mut src = String::from("dtmc\nformula g = (x + 2*y) * (x + 2*y) - y;\nformula d0 = g;\n");
    for i in 1..=6 {
        src.push_str(&format!("formula d{i} = d{} + d{};\n", i - 1, i - 1));
    }
    src.push_str(
        "module m\n  x : [0..3] init 0;\n  y : [0..2] init 0;\n  \
         [] true -> 0.5:(x'=mod(x+1,4)) + 0.5:(y'=mod(y+1,3));\nendmodule\n",
    );
    let m = parse_model(&src, "f.pm").unwrap();
    let d = m
        .build(&[], &BuildOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
        .0;
    let vals = d.valuations.as_ref().unwrap();
    assert_eq!(d.num_states(), 12);
    let computed = m.formula_values("d6", &[], vals).unwrap().unwrap();
    let written = m.expand_formulas(&augur_expr::Expr::Ident("d6".into()));
    assert!(!written.idents().contains("d0"), "written out: {written}");
    assert_eq!(computed.len(), d.num_states());
    for (s, &got) in computed.iter().enumerate() {
        let (x, y) = match (vals.get(s, 0), vals.get(s, 1)) {
            (Some(Value::Int(x)), Some(Value::Int(y))) => (x, y),
            other => panic!("{other:?}"),
        };
        let closed = 64 * ((x + 2 * y) * (x + 2 * y) - y);
        assert_eq!(got, Value::Int(closed), "state {s}");
        let direct = written
            .eval(|n| match n {
                "x" => Some(Value::Int(x)),
                "y" => Some(Value::Int(y)),
                _ => None,
            })
            .unwrap();
        assert_eq!(direct, got, "state {s}");
    }
    assert_eq!(
        m.formula_type("d6", &[]).unwrap().unwrap(),
        augur_expr::Type::Int
    );
    // Not a formula; a formula that does not compile is an error naming it.
    assert!(m.formula_values("x", &[], vals).is_none());
    let bad = parse_model(
        "dtmc\nformula h = nope + 1;\nmodule m\n  x : [0..1] init 0;\n  [] true -> true;\nendmodule\n",
        "h.pm",
    )
    .unwrap();
    let e = bad.formula_type("h", &[]).unwrap().unwrap_err();
    assert!(e.contains("formula `h`") && e.contains("nope"), "{e}");
    // All at once: every formula that compiles, with its type; the broken one left out.
    let types = m.formula_types(&[]);
    assert_eq!(types.len(), 8, "{types:?}");
    assert!(types.iter().all(|(_, t)| *t == augur_expr::Type::Int));
    assert!(bad.formula_types(&[]).is_empty());
}

#[test]
fn no_grammar_rule_name_reaches_a_message() {
    // Every rule of the PRISM grammar (and of the expression grammar it includes) is
    // described in words, never by its name (issue 15, item 11).
    use crate::parser::{describe, Rule};
    let leaks = augur_expr::syntax::leaked_rule_names(Rule::all_rules(), describe);
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}

#[test]
fn variable_ranges_are_the_declared_ones_with_the_constants_values() {
    let src = "dtmc\nconst int N;\nglobal g : [-1..N] init 0;\nmodule a\n  s : [0..N+2] init 0;\n  b : bool init false;\n  [] true -> (s'=s);\nendmodule\nmodule c = a [s=t, b=d] endmodule\n";
    let m = parse_model(src, "r.pm").unwrap();
    let consts = [("N".to_string(), Value::Int(3))];
    assert_eq!(
        m.variable_ranges(&consts),
        [
            ("g".to_string(), -1, 3),
            ("s".to_string(), 0, 5),
            ("t".to_string(), 0, 5)
        ]
    );
    // A bound that does not evaluate (no value for `N`) leaves its variable out.
    assert!(m.variable_ranges(&[]).is_empty());
}
