//! Unit tests of the spec, the enumeration, encoding and the trace readers.

use augur_expr::Value;
use proptest::prelude::*;

use crate::{Abstraction, AbstractionError, RawValue, StepKind, TraceFormat, TraceReader};

const SAFETYDRIFT: &str = include_str!("../../../models/safetydrift/spec.toml");
const MICROWAVE: &str = include_str!("../../../models/microwave/spec.toml");

fn spec(src: &str) -> Abstraction {
    match Abstraction::parse(src, "spec.toml") {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    }
}

fn spec_err(src: &str) -> (usize, usize, String) {
    match Abstraction::parse(src, "spec.toml") {
        Ok(_) => panic!("expected an error"),
        Err(AbstractionError::Spec { location, message }) => {
            assert_eq!(location.file, "spec.toml");
            (location.line, location.column, message)
        }
        Err(e) => panic!("not a spec error: {e}"),
    }
}

const FOUR: &str = r#"
[variables]
x = { type = "int", min = 0, max = 15 }
[predicates]
a = "x = 1"
b = "x = 2"
c = "x = 3"
d = "x >= 8"
[validity]
exclusive = [["a", "b", "c"]]
monotone = ["d"]
[labels]
unsafe = "d & (a | b)"
"#;

#[test]
fn exclusive_prunes_states_and_monotone_prunes_transitions() {
    let abs = spec(FOUR);
    // a, b, c: at most one true (4 combinations) times d free (2): 8 of the 16 bit-vectors.
    assert_eq!(abs.num_states(), 8);
    for &c in abs.valid_states() {
        assert!((c & 0b0111).count_ones() <= 1);
    }
    assert!(!abs.is_valid_state(0b0011));
    assert!(abs.why_invalid(0b0011).unwrap().contains("exclusive"));
    // d (bit 3) is monotone: it never goes from true to false.
    assert!(abs.is_valid_transition(0b0000, 0b1000));
    assert!(!abs.is_valid_transition(0b1000, 0b0000));
    assert!(!abs.is_valid_transition(0b1001, 0b0001));
    assert!(abs.is_valid_transition(0b1001, 0b1010));
    // Transitions out of or into an invalid state are invalid.
    assert!(!abs.is_valid_transition(0b0011, 0b0000));
    // Count the valid transitions: from a state without d, all 8 targets; with d, the 4 with d.
    let n = abs.num_states() as u32;
    let valid = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .filter(|&(i, j)| abs.is_valid_transition_idx(i, j))
        .count();
    assert_eq!(valid, 4 * 8 + 4 * 4);
}

#[test]
fn unsafe_spec_compiles_to_exactly_the_expected_states() {
    let abs = spec(FOUR);
    let set = abs.label_states("unsafe").unwrap();
    // Expected by hand: d with a, or d with b: bit-vectors 0b1001 and 0b1010.
    let expected: Vec<usize> = [0b1001u64, 0b1010]
        .iter()
        .map(|&c| abs.index_of(c).unwrap() as usize)
        .collect();
    assert_eq!(set.ones().collect::<Vec<_>>(), expected);
    // Predicates are labels too.
    assert_eq!(abs.label_states("d").unwrap().count_ones(..), 4);
    assert!(abs.label_states("nope").is_none());
    let names: Vec<String> = abs.labels().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["unsafe", "a", "b", "c", "d"]);
}

#[test]
fn invalid_state_prunes_with_three_valued_logic() {
    // A chain of implications p_{i+1} => p_i over 20 predicates has 21 valid states; the search
    // must not visit 2^20 leaves (it would still finish, so check the count and the result).
    let mut src =
        String::from("[variables]\nx = { type = \"int\", min = 0, max = 30 }\n[predicates]\n");
    for i in 0..20 {
        src.push_str(&format!("p{i} = \"x > {i}\"\n"));
    }
    let cond: Vec<String> = (0..19).map(|i| format!("(p{} & !p{i})", i + 1)).collect();
    src.push_str(&format!(
        "[validity]\ninvalid_state = \"{}\"\n",
        cond.join(" | ")
    ));
    let abs = spec(&src);
    assert_eq!(abs.num_states(), 21);
    for x in 0..=30 {
        let s = abs.abstract_state(&[Value::Int(x)]).unwrap();
        let code = abs.code_of(s).unwrap();
        assert_eq!(code.count_ones() as i64, x.min(20));
    }
}

#[test]
fn sixty_four_predicates_with_constraints() {
    // 64 predicates, all mutually exclusive: 65 valid states; bits 63 works.
    let mut src =
        String::from("[variables]\nx = { type = \"int\", min = 0, max = 100 }\n[predicates]\n");
    let names: Vec<String> = (0..64).map(|i| format!("q{i}")).collect();
    for (i, n) in names.iter().enumerate() {
        src.push_str(&format!("{n} = \"x = {i}\"\n"));
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    src.push_str(&format!(
        "[validity]\nexclusive = [[{}]]\n",
        quoted.join(", ")
    ));
    let abs = spec(&src);
    assert_eq!(abs.num_states(), 65);
    let s = abs.abstract_state(&[Value::Int(63)]).unwrap();
    assert_eq!(abs.code_of(s), Some(1u64 << 63));
    assert_eq!(abs.state_name(1u64 << 63), "{q63}");
    src.push_str("[labels]\nlast = \"q63\"\n");
    let abs = spec(&src);
    assert_eq!(abs.label_states("last").unwrap().count_ones(..), 1);
}

/// SafetyDrift's risk level by the 12 ordered rules, first match wins (independent of the spec).
/// The rules are transcribed literally, redundancies included.
#[allow(clippy::nonminimal_bool, clippy::overly_complex_bool_expr)]
fn risk(d: i64, t: i64, r: i64) -> &'static str {
    let (sens, cred) = (3, 4);
    let (internal, fw, ce, net, irr) = (2, 1, 2, 3, 2);
    if d >= cred && t >= net && r == irr || d >= sens && t >= net && r == irr {
        "VIOLATED"
    } else if d >= cred && t >= ce || d >= sens && t >= net {
        "CRITICAL"
    } else if d >= cred || d >= sens && t >= ce || d >= sens && t >= fw && r == irr {
        "ELEVATED"
    } else if d >= sens && t >= fw
        || d >= internal && t >= net
        || d >= sens
        || d >= internal && t >= fw
    {
        "MILD"
    } else {
        "SAFE"
    }
}

#[test]
fn safetydrift_spec_has_60_states_and_the_labels_partition_them() {
    let abs = spec(SAFETYDRIFT);
    assert_eq!(abs.num_states(), 60);
    let levels = ["SAFE", "MILD", "ELEVATED", "CRITICAL", "VIOLATED"];
    let sets: Vec<_> = levels
        .iter()
        .map(|l| abs.label_states(l).unwrap())
        .collect();
    let mut seen = std::collections::HashSet::new();
    for d in 0..5 {
        for t in 0..4 {
            for r in 0..3 {
                let s = abs
                    .abstract_state(&[Value::Int(d), Value::Int(t), Value::Int(r)])
                    .unwrap() as usize;
                assert!(seen.insert(s), "(d, t, r) map to distinct states");
                let holding: Vec<&str> = levels
                    .iter()
                    .zip(&sets)
                    .filter(|(_, set)| set.contains(s))
                    .map(|(l, _)| *l)
                    .collect();
                assert_eq!(holding, vec![risk(d, t, r)], "state ({d}, {t}, {r})");
            }
        }
    }
    assert_eq!(seen.len(), 60);
    // Monotone d and t; VIOLATED is absorbing.
    let st = |d, t, r| {
        abs.code_of(
            abs.abstract_state(&[Value::Int(d), Value::Int(t), Value::Int(r)])
                .unwrap(),
        )
        .unwrap()
    };
    assert!(abs.is_valid_transition(st(1, 0, 0), st(3, 2, 1)));
    assert!(!abs.is_valid_transition(st(3, 0, 0), st(2, 0, 0)));
    assert!(!abs.is_valid_transition(st(0, 2, 0), st(0, 1, 0)));
    assert!(
        abs.is_valid_transition(st(0, 2, 2), st(0, 2, 0)),
        "r may go down"
    );
    assert!(
        !abs.is_valid_transition(st(3, 3, 2), st(3, 3, 1)),
        "VIOLATED is absorbing"
    );
    assert!(abs.is_valid_transition(st(3, 3, 2), st(4, 3, 2)));
    // Counts the label sizes by hand from the rules: VIOLATED = d in {SENS, CRED}, t = NET,
    // r = IRR: 2 states.
    assert_eq!(sets[4].count_ones(..), 2);
}

#[test]
fn microwave_spec() {
    let abs = spec(MICROWAVE);
    // {open, toggled}: 3 combinations; {fork_inside, holding}: 3; finished: 2.
    assert_eq!(abs.num_states(), 18);
    let unsafe_states = abs.label_states("unsafe").unwrap();
    // fork_inside & toggled: open is then false; finished free: 2 states.
    assert_eq!(unsafe_states.count_ones(..), 2);
    let s = abs
        .abstract_state(&[
            Value::Int(2),
            Value::Bool(false),
            Value::Bool(true),
            Value::Bool(false),
        ])
        .unwrap();
    assert!(unsafe_states.contains(s as usize));
    // The fork cannot leave a closed microwave.
    let inside_closed = abs.parse_state_name("{fork_inside}").unwrap();
    let holding = abs.parse_state_name("{holding}").unwrap();
    let inside_open = abs.parse_state_name("{ fork_inside, open }").unwrap();
    assert!(!abs.is_valid_transition(inside_closed, holding));
    assert!(abs.is_valid_transition(inside_open, holding));
    // Door open and power on at once is not a state.
    let bad = abs
        .abstract_state(&[
            Value::Int(0),
            Value::Bool(true),
            Value::Bool(true),
            Value::Bool(false),
        ])
        .unwrap_err();
    assert!(bad.to_string().contains("exclusive"), "{bad}");
}

#[test]
fn located_spec_errors() {
    // Undeclared variable in a predicate: line 5, column of `y` inside the string.
    let src = "[variables]\nx = { type = \"int\", min = 0, max = 3 }\n\n[predicates]\np = \"x > 1 & y\"\n";
    let (line, col, msg) = spec_err(src);
    assert_eq!((line, col), (5, 14), "{msg}");
    assert!(msg.contains("undeclared name `y`"), "{msg}");

    // Type error: an int predicate.
    let src =
        "[variables]\nx = { type = \"int\", min = 0, max = 3 }\n[predicates]\np = \"x + 1\"\n";
    let (line, _, msg) = spec_err(src);
    assert_eq!(line, 4);
    assert!(msg.contains("not bool"), "{msg}");

    // Syntax error inside the expression: the column points at the bad token.
    let src = "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x & & x\"\n";
    let (line, col, msg) = spec_err(src);
    assert_eq!((line, col), (4, 10), "{msg}");

    // Undeclared predicate in a constraint, and a primed undeclared one.
    let src = "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\n[validity]\nmonotone = [\"q\"]\n";
    let (line, col, _) = spec_err(src);
    assert_eq!((line, col), (6, 14));
    let src = "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\n[validity]\ninvalid_transition = \"p & !q'\"\n";
    let (line, col, msg) = spec_err(src);
    assert_eq!((line, col), (6, 28), "{msg}");
    assert!(msg.contains("`q'`"), "{msg}");
    // A syntax error after a prime: columns map back to the original text.
    let src = "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\n[validity]\ninvalid_transition = \"p' & )\"\n";
    let (line, col, _) = spec_err(src);
    assert_eq!((line, col), (6, 28));

    // A variable in a label (labels are over predicates).
    let src = "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\n[labels]\nbad = \"p & x\"\n";
    let (line, col, msg) = spec_err(src);
    assert_eq!((line, col), (6, 12));
    assert!(msg.contains("over predicates"), "{msg}");

    // A contradiction: no valid state left.
    let src = "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\n[validity]\ninvalid_state = \"p | !p\"\n";
    let (line, _, msg) = spec_err(src);
    assert_eq!(line, 6);
    assert!(msg.contains("no valid abstract state"), "{msg}");

    // Bad TOML, unknown keys, unknown types, bad enum values.
    let (line, _, _) = spec_err("[variables]\nx = { type = \"bool\" \n");
    assert_eq!(line, 2);
    let (line, _, msg) =
        spec_err("[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\n[extra]\n");
    assert_eq!(line, 5, "{msg}");
    let (line, _, msg) =
        spec_err("[variables]\nx = { type = \"float\" }\n[predicates]\np = \"x\"\n");
    assert_eq!(line, 2);
    assert!(msg.contains("unknown variable type"), "{msg}");
    let (line, _, _) =
        spec_err("[variables]\nx = { type = \"enum\", values = [\"a\", \"a\"] }\n[predicates]\np = \"x = a\"\n");
    assert_eq!(line, 2);
    let (line, _, msg) =
        spec_err("[variables]\nx = { type = \"int\" }\n[predicates]\np = \"x = 1\"\n");
    assert_eq!(line, 2);
    assert!(msg.contains("min"), "{msg}");
    // A predicate over another predicate.
    let (line, _, msg) =
        spec_err("[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x\"\nq = \"p\"\n");
    assert_eq!(line, 5);
    assert!(msg.contains("over variables"), "{msg}");

    // The Display form has the file, line and column; the diagnostic adds the caret.
    let e = Abstraction::parse(
        "[variables]\nx = { type = \"bool\" }\n[predicates]\np = \"x & zz\"\n",
        "my.toml",
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(m.starts_with("my.toml:4:10: undeclared name `zz`"), "{m}");
    let d = e.diagnostic().to_string();
    assert!(d.contains("\n4 | p = \"x & zz\"\n  |          ^^\n"), "{d}");
}

#[test]
fn enum_constants_and_order() {
    let abs = spec(
        "[variables]\nlevel = { type = \"enum\", values = [\"LOW\", \"MID\", \"HIGH\"] }\n\
         other = { type = \"enum\", values = [\"LOW\", \"OTHER\"] }\n\
         [predicates]\nhigh = \"level >= MID\"\nlow2 = \"other = LOW\"\n",
    );
    let vals = |l: &str, o: &str| {
        abs.concrete_values(&[
            ("level".into(), RawValue::Json(serde_json::json!(l))),
            ("other".into(), RawValue::Text(o.into())),
        ])
    };
    let c = vals("HIGH", "LOW").unwrap();
    assert_eq!(abs.encode(&c).unwrap(), 0b11);
    let c = vals("LOW", "OTHER").unwrap();
    assert_eq!(abs.encode(&c).unwrap(), 0b00);
    assert!(vals("NOPE", "OTHER")
        .unwrap_err()
        .to_string()
        .contains("one of LOW, MID, HIGH"));
    // Shared enum value names must agree on their position.
    let (line, _, msg) = spec_err(
        "[variables]\na = { type = \"enum\", values = [\"PP\", \"Q\"] }\nb = { type = \"enum\", values = [\"Q\"] }\n[predicates]\np = \"a = Q\"\n",
    );
    assert_eq!(line, 3);
    assert!(msg.contains("position"), "{msg}");
}

#[test]
fn concrete_value_errors() {
    let abs = spec(FOUR);
    let v = |j: serde_json::Value| abs.concrete_values(&[("x".into(), RawValue::Json(j))]);
    assert!(v(serde_json::json!(3)).is_ok());
    assert!(v(serde_json::json!(16))
        .unwrap_err()
        .to_string()
        .contains("outside its range"));
    assert!(v(serde_json::json!("3"))
        .unwrap_err()
        .to_string()
        .contains("expected an int"));
    assert!(abs
        .concrete_values(&[])
        .unwrap_err()
        .to_string()
        .contains("missing variable `x`"));
}

proptest! {
    #[test]
    fn encode_decode_round_trip(x in 0i64..16) {
        let abs = spec(FOUR);
        let s = abs.abstract_state(&[Value::Int(x)]).unwrap();
        let code = abs.code_of(s).unwrap();
        let bits = abs.decode(code);
        // Independent evaluation of the four predicates.
        prop_assert_eq!(bits.clone(), vec![x == 1, x == 2, x == 3, x >= 8]);
        prop_assert_eq!(abs.encode_bits(&bits), code);
        prop_assert_eq!(abs.parse_state_name(&abs.state_name(code)).unwrap(), code);
    }

    #[test]
    fn safetydrift_round_trip(d in 0i64..5, t in 0i64..4, r in 0i64..3) {
        let abs = spec(SAFETYDRIFT);
        let code = abs.encode(&[Value::Int(d), Value::Int(t), Value::Int(r)]).unwrap();
        let bits = abs.decode(code);
        let expect = vec![d >= 1, d >= 2, d >= 3, d >= 4, t >= 1, t >= 2, t >= 3, r == 1, r == 2];
        prop_assert_eq!(bits.clone(), expect);
        prop_assert_eq!(abs.encode_bits(&bits), code);
        prop_assert!(abs.is_valid_state(code));
    }

    #[test]
    fn enumeration_matches_brute_force(mask_a in 0u64..64, mask_b in 0u64..64) {
        // Six predicates over a bool vector; random exclusive group and a random invalid_state
        // "all of mask_b"; compare with a brute-force filter over all 64 bit-vectors.
        let mut src = String::from("[variables]\n");
        for i in 0..6 { src.push_str(&format!("v{i} = {{ type = \"bool\" }}\n")); }
        src.push_str("[predicates]\n");
        for i in 0..6 { src.push_str(&format!("p{i} = \"v{i}\"\n")); }
        let group: Vec<String> = (0..6).filter(|i| mask_a >> i & 1 == 1).map(|i| format!("\"p{i}\"")).collect();
        let conj: Vec<String> = (0..6).filter(|i| mask_b >> i & 1 == 1).map(|i| format!("p{i}")).collect();
        src.push_str(&format!("[validity]\nexclusive = [[{}]]\n", group.join(", ")));
        let all_b = if conj.is_empty() { "true".to_string() } else { conj.join(" & ") };
        src.push_str(&format!("invalid_state = \"{all_b}\"\n"));
        let expected: Vec<u64> = (0u64..64)
            .filter(|c| (c & mask_a).count_ones() <= 1 && (c & mask_b) != mask_b)
            .collect();
        match Abstraction::parse(&src, "p.toml") {
            Ok(abs) => prop_assert_eq!(abs.valid_states(), &expected[..]),
            Err(_) => prop_assert!(expected.is_empty()),
        }
    }
}

fn read_all(text: &str, format: TraceFormat) -> Vec<Result<crate::Trace, AbstractionError>> {
    TraceReader::new(text.as_bytes(), format, "t.jsonl").collect()
}

#[test]
fn jsonl_traces() {
    let text =
        "{\"id\": \"a\", \"category\": \"c1\", \"steps\": [{\"state\": \"S\"}, {\"x\": 3}]}\n\
                \n\
                {\"steps\": []}\n\
                {\"id\": 7, \"steps\": [{\"x\": 1}\n\
                [1, 2]\n\
                {\"id\": \"b\", \"steps\": [{\"state\": 5}]}\n";
    let r = read_all(text, TraceFormat::JsonLines);
    assert_eq!(r.len(), 5);
    let a = r[0].as_ref().unwrap();
    assert_eq!(a.id, "a");
    assert_eq!(a.category.as_deref(), Some("c1"));
    assert_eq!(a.steps[0].kind, StepKind::Named("S".into()));
    assert!(matches!(&a.steps[1].kind, StepKind::Values(v) if v[0].0 == "x"));
    let empty = r[1].as_ref().unwrap();
    assert_eq!(
        (empty.id.as_str(), empty.line, empty.steps.len()),
        ("line 3", 3, 0)
    );
    for (i, line) in [(2, 4), (3, 5), (4, 6)] {
        let e = r[i].as_ref().unwrap_err();
        assert_eq!(e.location().unwrap().line, line, "{e}");
        assert!(
            e.to_string().starts_with(&format!("t.jsonl:{line}:")),
            "{e}"
        );
        assert!(e.location().unwrap().column >= 1, "{e}");
    }
}

#[test]
fn csv_traces() {
    let text = "trace,step,category,x\n\
                t1,0,c,1\n\
                t1,1,c,2\n\
                t2,0,,3\n\
                t2,0,,4\n\
                t2,1,,5\n\
                t3,0,,1\n\
                t1,5,c,1\n\
                t4,zero,,1\n\
                t5,0,,2\n";
    let r = read_all(text, TraceFormat::Csv);
    let ok: Vec<_> = r.iter().filter_map(|x| x.as_ref().ok()).collect();
    let ids: Vec<&str> = ok.iter().map(|t| t.id.as_str()).collect();
    // t2 has a repeated step (dropped), t1 reappears (error), t4 has a bad step number.
    assert_eq!(ids, ["t1", "t3", "t5"]);
    assert_eq!(ok[0].steps.len(), 2);
    assert_eq!(ok[0].category.as_deref(), Some("c"));
    assert_eq!(ok[0].steps[1].line, 3);
    let errs: Vec<usize> = r
        .iter()
        .filter_map(|x| x.as_ref().err())
        .map(|e| e.location().unwrap().line)
        .collect();
    assert_eq!(errs, [5, 8, 9]);
    // Missing header columns.
    let r = read_all("id,x\n1,2\n", TraceFormat::Csv);
    assert_eq!(r.len(), 1);
    assert!(r[0]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("`trace` and `step`"));
}

#[test]
fn a_byte_order_mark_before_the_first_trace_is_skipped() {
    let r = read_all(
        "\u{feff}{\"id\": \"a\", \"steps\": [{\"state\": \"S\"}]}\n",
        TraceFormat::JsonLines,
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].as_ref().unwrap().id, "a");
    let r = read_all("\u{feff}trace,step,state\nt,0,S\n", TraceFormat::Csv);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].as_ref().unwrap().id, "t");
}

#[test]
fn invalid_json_line_names_only_the_file_line() {
    let r = read_all(
        "{\"id\": \"a\", \"steps\": [{\"state\": \"S\"}]}\n{bad json\n",
        TraceFormat::JsonLines,
    );
    let e = r[1].as_ref().unwrap_err();
    assert_eq!(e.location().unwrap().line, 2);
    assert_eq!(e.location().unwrap().column, 2);
    let m = e.to_string();
    assert!(m.starts_with("t.jsonl:2:2: invalid JSON"), "{m}");
    // serde's own "at line 1 column 2" contradicted the file line 2.
    assert!(!m.contains("line 1"), "{m}");
}

#[test]
fn csv_row_with_more_fields_than_the_header_is_an_error() {
    // Before: the extra cell was silently ignored, hiding a shifted or mistyped row.
    let r = read_all("trace,step,x\nt1,0,1\nt1,1,2,7\n", TraceFormat::Csv);
    let e = r
        .iter()
        .find_map(|x| x.as_ref().err())
        .expect("an error for the 4-field row");
    assert_eq!(e.location().unwrap().line, 3);
    assert!(
        e.to_string()
            .contains("4 fields, but the header names 3 columns"),
        "{e}"
    );
}

#[test]
fn csv_steps_abstract_with_the_spec() {
    let abs = spec(FOUR);
    let r = read_all("trace,step,x\nt,0,1\nt,1,9\nt,2,99\n", TraceFormat::Csv);
    let t = r[0].as_ref().unwrap();
    assert_eq!(
        abs.code_of(abs.step_state(&t.steps[0], "f.csv").unwrap()),
        Some(0b0001)
    );
    assert_eq!(
        abs.code_of(abs.step_state(&t.steps[1], "f.csv").unwrap()),
        Some(0b1000)
    );
    let e = abs.step_state(&t.steps[2], "f.csv").unwrap_err();
    // The caret is under the offending cell.
    assert_eq!(
        e.diagnostic().to_string(),
        "error: variable `x` = 99 is outside its range [0, 15]\n --> f.csv:4:5\n  |\n4 | t,2,99\n  |     ^^\n"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// No input, however mangled, makes the readers or the spec parser panic.
    #[test]
    fn arbitrary_input_never_panics(text in "[\\[\\]{}\",:a-z0-9 =\\n'.&|!-]{0,200}") {
        for format in [TraceFormat::JsonLines, TraceFormat::Csv] {
            for item in TraceReader::new(text.as_bytes(), format, "x") {
                if let Err(e) = item {
                    prop_assert!(e.location().is_some_and(|l| l.line >= 1));
                }
            }
        }
        let _ = Abstraction::parse(&text, "x.toml");
        let with_header = format!("[variables]\nx = {{ type = \"bool\" }}\n[predicates]\np = \"{}\"\n", text.replace(['"', '\n', '\\'], " "));
        if let Err(e) = Abstraction::parse(&with_header, "x.toml") {
            prop_assert!(e.location().is_some_and(|l| l.line >= 1 && l.column >= 1));
        }
    }
}
