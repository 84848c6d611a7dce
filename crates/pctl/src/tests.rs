//! Parser, printer and semantic-check tests.

use crate::*;
use augur_expr::{parse_expr, BinaryOp, Cmp, Expr, Func, Type, UnaryOp};
use proptest::prelude::*;

fn prop(s: &str) -> Property {
    parse_property(s).unwrap_or_else(|e| {
        panic!(
            "{s}\n{}",
            e.diagnostic(&augur_source::SourceFile::new("test", s))
        )
    })
}
fn sf(s: &str) -> StateFormula {
    prop(s).formula
}
fn ex(s: &str) -> StateFormula {
    StateFormula::Expr(parse_expr(s).unwrap().into())
}
fn label(s: &str) -> StateFormula {
    StateFormula::Label(s.to_string().into())
}
fn b(f: StateFormula) -> Box<StateFormula> {
    Box::new(f)
}
fn e(s: &str) -> Spanned<Expr> {
    parse_expr(s).unwrap().into()
}

/// Every property form named in issue 2 (and DESIGN.md): parses, and printing then parsing
/// gives the same AST.
const ISSUE_EXAMPLES: &[&str] = &[
    "true",
    "false",
    "\"label\"",
    "x>=3",
    "s=1 & t!=2",
    "!\"a\" & \"b\" | \"c\" => \"d\" <=> \"e\"",
    "(\"a\" | \"b\") & !(\"c\" => x=1)",
    "P>=0.9 [ F<=5 \"goal\" ]",
    "P=? [ F \"goal\" ]",
    "P=? [ a U b ]",
    "P<0.1 [ X \"done\" ]",
    "P<=0.5 [ G \"safe\" ]",
    "P>0 [ a W b ]",
    "P>=1 [ a R b ]",
    "R{\"cost\"}=? [ F done ]",
    "R=? [ F done ]",
    "R{\"cost\"}<=10 [ C<=5 ]",
    "R{2}>3.5 [ C ]",
    "R=? [ I=10 ]",
    "R=? [ S ]",
    "R{\"r\"}=? [ C{discount=0.9} ]",
    "R{\"r\"}=? [ C{discount=0.9}<=5 ]",
    "S=? [ up ]",
    "S>=0.5 [ \"up\" & x>2 ]",
    "T=? [ F \"Done\" ]",
    "P>=1 [ F P>0.5 [ X \"done\" ] ]",
    "P=? [ \"a\" U<=k \"b\" ]",
    "P=? [ F=2 s=1 ]",
    "P=? [ G>=10 s>4 ]",
    "P=? [ a R[1,3] b ]",
    "P=? [ a U<3 b ]",
    "P=? [ a U>2 b ]",
    "P=? [ a W>=1 b ]",
    "P=? [ F<=T \"goal\" ]",
    "P=? [ G=(k) (s=2) ]",
    "filter(max, R=? [ F \"stable\" ], \"init\")",
    "filter(state, R{\"b\"}=? [ C ], s=0)",
    "filter(forall, P>=0.5 [ F \"a\" ])",
    "filter(min, P=? [ F \"a\" ])",
    "filter(argmin, P=? [ F \"a\" ], x>0)",
    "filter(argmax, P=? [ F \"a\" ])",
    "filter(count, P>0.5 [ F \"a\" ])",
    "filter(sum, P=? [ F \"a\" ])",
    "filter(avg, P=? [ F \"a\" ])",
    "filter(first, P=? [ F \"a\" ])",
    "filter(range, P=? [ F \"a\" ])",
    "filter(exists, \"a\")",
    "filter(print, P=? [ F \"a\" ])",
    "filter(printall, P=? [ F \"a\" ])",
    "\"safe\": P<=0.01 [ F \"crash\" ]",
    "P>=p [ F \"a\" ] & P<=1-p [ G \"b\" ]",
    "x>0 ? y<1 : z",
];

#[test]
fn issue_examples_parse_and_round_trip() {
    for src in ISSUE_EXAMPLES {
        let p = prop(src);
        let printed = p.to_string();
        let back = prop(&printed);
        assert_eq!(back, p, "{src} printed as {printed}");
        // The canonical text is a fixed point.
        assert_eq!(back.to_string(), printed);
    }
}

#[test]
fn canonical_text() {
    let cases = [
        ("P=?[F s=2|s=4]", "P=? [ F s=2 | s=4 ]"),
        (
            "P>=1 [F P>0.5[X\"done\"]]",
            "P>=1 [ F P>0.5 [ X \"done\" ] ]",
        ),
        (
            "R{\"r\"}=?[C{discount=0.9}<=5]",
            "R{\"r\"}=? [ C{discount=0.9}<=5 ]",
        ),
        ("P=? [ G=(k) (s=2) ]", "P=? [ G=k s=2 ]"),
        ("P=? [ F<=(k+1) a ]", "P=? [ F<=(k+1) a ]"),
        ("P=? [ s!=3 U[ 0 , 4 ] s=3 ]", "P=? [ s!=3 U[0,4] s=3 ]"),
        (
            "filter(max, R=? [ F \"stable\" ], true)",
            "filter(max, R=? [ F \"stable\" ])",
        ),
        ("(\"a\")", "\"a\""),
        ("\"a\" & (x | y)", "\"a\" & (x | y)"),
        ("S = ? [ s=0 ]", "S=? [ s=0 ]"),
    ];
    for (src, want) in cases {
        assert_eq!(prop(src).to_string(), want, "{src}");
    }
}

#[test]
fn expressions_stay_one_leaf() {
    // Connectives over plain expressions fold into one expression, with PRISM's precedence.
    assert_eq!(sf("x>1 & y<2 | !z"), ex("x>1 & y<2 | !z"));
    assert_eq!(sf("!a & b | c => d"), ex("((!a & b) | c) => d"));
    assert_eq!(sf("x>0 ? y : z"), ex("x>0 ? y : z"));
    // A label makes the connective a state-formula connective; the other operand stays a leaf.
    assert_eq!(
        sf("!\"a\" & x>1 & y<2 | \"c\""),
        StateFormula::Or(
            b(StateFormula::And(
                b(StateFormula::And(
                    b(StateFormula::Not(b(label("a")))),
                    b(ex("x>1"))
                )),
                b(ex("y<2"))
            )),
            b(label("c"))
        )
    );
    assert_eq!(
        sf("\"a\" => x=1 <=> P>0.5 [ X y ]"),
        StateFormula::Implies(
            b(label("a")),
            b(StateFormula::Iff(
                b(ex("x=1")),
                b(StateFormula::Prob {
                    opt: None,
                    bound: Bound::Compare(Comparison::Gt, Expr::Double(0.5).into()).into(),
                    path: Box::new(PathFormula::Next(ex("y"))),
                })
            ))
        )
    );
}

#[test]
fn path_and_reward_trees() {
    assert_eq!(
        sf("P=? [ s<2 U=2 s=1 ]"),
        StateFormula::Prob {
            opt: None,
            bound: Bound::Query.into(),
            path: Box::new(PathFormula::Until(
                ex("s<2"),
                ex("s=1"),
                StepBound::Eq(Expr::Int(2).into()).into()
            )),
        }
    );
    assert_eq!(
        sf("P=? [ G[1,3] (s=1 | s=3) ]"),
        StateFormula::Prob {
            opt: None,
            bound: Bound::Query.into(),
            path: Box::new(PathFormula::Globally(
                ex("s=1 | s=3"),
                StepBound::Interval(Expr::Int(1).into(), Expr::Int(3).into()).into()
            )),
        }
    );
    assert_eq!(
        sf("R{\"a\"}<=2.5 [ C<=N ]"),
        StateFormula::Reward {
            opt: None,
            structure: Some(RewardRef::Name("a".into())),
            bound: Bound::Compare(Comparison::Le, Expr::Double(2.5).into()).into(),
            path: Box::new(RewardPath::Cumulative {
                bound: Some(e("N")),
                discount: None
            }),
        }
    );
    assert_eq!(
        sf("T=? [ F \"Done\" ]"),
        StateFormula::Time {
            bound: Bound::Query.into(),
            target: b(label("Done"))
        }
    );
    assert_eq!(
        sf("S<0.2 [ !\"up\" ]"),
        StateFormula::Steady {
            bound: Bound::Compare(Comparison::Lt, Expr::Double(0.2).into()).into(),
            formula: b(StateFormula::Not(b(label("up")))),
        }
    );
    // `<=` vs `<=>`, `=` vs `=>`, bound tokens next to `=` comparisons.
    assert_eq!(sf("a<=>b"), ex("a <=> b"));
    assert_eq!(sf("a=>b"), ex("a => b"));
    assert_eq!(
        sf("P=? [ F=2 s=2 ]"),
        StateFormula::Prob {
            opt: None,
            bound: Bound::Query.into(),
            path: Box::new(PathFormula::Eventually(
                ex("s=2"),
                StepBound::Eq(Expr::Int(2).into()).into()
            )),
        }
    );
    // `T` is not a keyword: a constant named T works in bounds and expressions.
    assert_eq!(sf("T<=5"), ex("T<=5"));
    assert_eq!(
        sf("P=? [ F<=T x ]"),
        StateFormula::Prob {
            opt: None,
            bound: Bound::Query.into(),
            path: Box::new(PathFormula::Eventually(
                ex("x"),
                StepBound::Le(e("T")).into()
            )),
        }
    );
    // A step bound followed by a formula starting with `-`.
    assert_eq!(
        sf("P=? [ F<=5 -x>0 ]"),
        StateFormula::Prob {
            opt: None,
            bound: Bound::Query.into(),
            path: Box::new(PathFormula::Eventually(
                ex("-x>0"),
                StepBound::Le(Expr::Int(5).into()).into()
            )),
        }
    );
    assert_eq!(
        sf("R{1}=? [ I=k+1 ]"),
        StateFormula::Reward {
            opt: None,
            structure: Some(RewardRef::Index(1)),
            bound: Bound::Query.into(),
            path: Box::new(RewardPath::Instantaneous(e("k+1"))),
        }
    );
    let unary_not = ex("!x");
    assert!(matches!(
        unary_not,
        StateFormula::Expr(Spanned {
            node: Expr::Unary(UnaryOp::Not, _),
            ..
        })
    ));
    assert!(matches!(
        sf("x | y"),
        StateFormula::Expr(Spanned {
            node: Expr::Binary(BinaryOp::Or, _, _),
            ..
        })
    ));
}

/// Asserts that `src` is rejected as invalid at `line`:`col` with a message containing `msg`.
fn rejects(src: &str, kind_invalid: bool, line: usize, col: usize, msg: &str) {
    // A property that fails a parse-time check is rejected alone (the file still parses);
    // `parse_property` fails.
    let err = match parse_properties(src) {
        Ok(mut f) if !f.rejected.is_empty() => {
            assert!(parse_property(src.trim_end_matches(';')).is_err() || src.contains('\n'));
            f.rejected.remove(0).error
        }
        Ok(f) => panic!("{src:?} parsed as {f:?}"),
        Err(e) => e,
    };
    assert_eq!(
        matches!(err, PctlError::Invalid(_)),
        kind_invalid,
        "{src}: {err:?}"
    );
    assert_eq!((err.line(), err.column()), (line, col), "{src}: {err}");
    assert!(err.to_string().contains(msg), "{src}: {err}");
}

#[test]
fn semantic_checks_are_located() {
    rejects(
        "P>=1.5 [ F \"a\" ]",
        true,
        1,
        4,
        "probability bound 1.5 is outside [0, 1]",
    );
    rejects("P<-0.5 [ F \"a\" ]", true, 1, 3, "outside [0, 1]");
    rejects("S>2 [ \"a\" ]", true, 1, 3, "outside [0, 1]");
    rejects(
        "\n  R{\"r\"}<-1 [ C ]",
        true,
        2,
        10,
        "reward bound -1 is negative",
    );
    rejects("T>=-2 [ F \"a\" ]", true, 1, 4, "negative");
    // Step bounds (PRISM's regression tests expect errors for these).
    rejects("P=? [ F<0 s=2 ]", true, 1, 8, "`<0` admits no step");
    rejects("P=? [ G<0 s<2 ]", true, 1, 8, "`<0` admits no step");
    rejects(
        "P=? [ a U[5,2] b ]",
        true,
        1,
        10,
        "step interval [5,2] is empty",
    );
    rejects("P=? [ F[1,0] true ]", true, 1, 8, "empty");
    rejects(
        "P=? [ G[-1,1] true ]",
        true,
        1,
        9,
        "step bound -1 is negative",
    );
    rejects("P=? [ F<=-1 true ]", true, 1, 10, "negative");
    rejects("P=? [ F<=1.5 \"a\" ]", true, 1, 10, "must be an integer");
    rejects("P=? [ F<=(1/2) \"a\" ]", true, 1, 10, "must be an integer");
    rejects("R=? [ C<=-3 ]", true, 1, 10, "negative");
    rejects("R=? [ I=0.5 ]", true, 1, 9, "must be an integer");
    rejects("R=? [ C{discount=1.5} ]", true, 1, 18, "discount");
    // Path formula where a state formula belongs, and the reverse.
    rejects(
        "S=? [ F \"up\" ]",
        true,
        1,
        7,
        "S[...] takes a state formula",
    );
    rejects("F \"up\"", true, 1, 1, "must be a state formula");
    rejects("\"a\" & (F \"b\")", true, 1, 8, "path formula cannot stand");
    rejects(
        "filter(max, F \"a\")",
        true,
        1,
        13,
        "filter(...) takes state formulas",
    );
    rejects("P=? [ \"up\" ]", true, 1, 7, "P[...] needs a path formula");
    rejects(
        "R=? [ G \"a\" ]",
        true,
        1,
        7,
        "R[...] takes a reward formula",
    );
    rejects("T=? [ G \"a\" ]", true, 1, 7, "T[...] takes an unbounded");
    rejects("R{0}=? [ C ]", true, 1, 3, "start at 1");
    rejects("R{99999999999}=? [ C ]", true, 1, 3, "start at 1");
    // `c ? a : b` over labels and operators is a state formula (typed when resolved).
    assert!(parse_properties("x>0 ? \"a\" : y").is_ok());
    // Files: duplicate names, located on their line.
    rejects(
        "const int N = 1;\nconst N = 2;\n",
        true,
        2,
        1,
        "declared twice",
    );
    rejects(
        "\"a\": true\n\"b\": false;\n\"a\": x>1",
        true,
        3,
        1,
        "defined twice",
    );
    rejects(
        "label \"l\" = x;\nlabel \"l\" = y;",
        true,
        2,
        7,
        "defined twice",
    );
    // The threshold may name constants: checked later, against the model.
    assert!(parse_property("P>=p [ F \"a\" ]").is_ok());
    assert!(parse_property("P=? [ F<k \"a\" ]").is_ok());
    assert!(parse_property("P=? [ F[k,2] \"a\" ]").is_ok());
}

#[test]
fn syntax_errors_are_located() {
    rejects("P=? [ F \"a\" ", false, 1, 13, "expected");
    rejects("P=? F \"a\"", false, 1, 5, "`[`");
    rejects(
        "const int N = 3;\nP=? [ F \"a\" ];\n  P>=0.5 [ a U ]",
        false,
        3,
        16,
        "expected",
    );
    rejects("P=?? [ F a ]", false, 1, 4, "expected");
    rejects("R{\"a\" =? [ C ]", false, 1, 7, "expected");
    rejects("filter(bogus, x)", false, 1, 8, "filter operator");
    let src = "P=? [ F \"a\" ]\n\tP=? [ G  ]";
    let err = parse_properties(src).unwrap_err();
    assert_eq!((err.line(), err.column()), (2, 11));
    let text = err
        .diagnostic(&augur_source::SourceFile::new("my.props", src))
        .to_string();
    assert!(text.contains("--> my.props:2:11"), "{text}");
    assert!(
        text.contains("2 | \tP=? [ G  ]\n  | \t         ^"),
        "{text}"
    );
    // A property must be complete, and --prop takes exactly one.
    assert!(parse_property("P=? [ F a ] P=? [ F b ]").is_err());
    assert!(parse_property("").is_err());
    // `min`/`max` only once.
    assert!(parse_property("Rmin{\"r\"}max=? [ F a ]").is_err());
}

#[test]
fn min_and_max_operators_parse_and_print_in_prism_spelling() {
    use crate::ast::Optimum;
    for (text, printed, want) in [
        ("Pmax=? [ F a ]", "Pmax=? [ F a ]", Some(Optimum::Max)),
        ("Pmin>=0.5 [ X a ]", "Pmin>=0.5 [ X a ]", Some(Optimum::Min)),
        (
            "Pmin<0.5 [ a U b ]",
            "Pmin<0.5 [ a U b ]",
            Some(Optimum::Min),
        ),
        ("P=? [ F a ]", "P=? [ F a ]", None),
    ] {
        let p = parse_property(text).unwrap();
        let StateFormula::Prob { opt, .. } = &p.formula else {
            panic!("{text}: {:?}", p.formula)
        };
        assert_eq!(*opt, want, "{text}");
        assert_eq!(p.formula.to_string(), printed);
    }
    for (text, printed, want) in [
        (
            "R{\"r\"}min=? [ F a ]",
            "R{\"r\"}min=? [ F a ]",
            Some(Optimum::Min),
        ),
        ("Rmax=? [ C<=3 ]", "Rmax=? [ C<=3 ]", Some(Optimum::Max)),
        ("Rmin<=2 [ F a ]", "Rmin<=2 [ F a ]", Some(Optimum::Min)),
        ("R{1}max>1 [ F a ]", "R{1}max>1 [ F a ]", Some(Optimum::Max)),
    ] {
        let p = parse_property(text).unwrap();
        let StateFormula::Reward { opt, .. } = &p.formula else {
            panic!("{text}: {:?}", p.formula)
        };
        assert_eq!(*opt, want, "{text}");
        assert_eq!(p.formula.to_string(), printed);
    }
}

#[test]
fn large_formulas_are_bounded() {
    // A long chain of labels and expressions as large as allowed works on a 2 MiB test thread
    // (parse, print, reparse, drop); a larger one is rejected with a located error.
    let n = augur_expr::syntax::MAX_DEPTH;
    let chain = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                "\"a\"".to_string()
            } else {
                format!("x{i}>0")
            }
        })
        .collect::<Vec<_>>();
    let ok = chain.join(" & ");
    let p = prop(&ok);
    assert_eq!(prop(&p.to_string()), p);
    // n operands use n-1 connectives: two more exceed the budget of MAX_DEPTH.
    let too_big = format!("{ok} & \"b\" & \"c\"");
    match parse_property(&too_big) {
        Err(err) => assert!(err.to_string().contains("formula too large"), "{err}"),
        Ok(_) => panic!("a formula with more than MAX_DEPTH connectives was accepted"),
    }
    let nested = format!("{}\"a\"{}", "P=? [ X ".repeat(40), " ]".repeat(40));
    assert_eq!(prop(&nested).to_string(), nested);
    let nots = format!("{}\"a\"", "!".repeat(n + 1));
    assert!(
        parse_property(&nots).is_err(),
        "too many negations accepted"
    );
}

#[test]
fn the_formula_size_limit_counts_each_formula_of_a_file() {
    // Three properties and a label of 1,500 connectives each: every one is within the limit
    // of MAX_DEPTH, though together they are far beyond it (issue 15, item 10).
    let n = 1500;
    assert!(n < augur_expr::syntax::MAX_DEPTH && 2 * n > augur_expr::syntax::MAX_DEPTH);
    let chain = |l: &str| vec![format!("\"{l}\""); n + 1].join(" & ");
    let text = format!(
        "label \"big\" = {};\nP=? [ F {} ]\nP=? [ G {} ]\n{}\n",
        chain("a"),
        chain("b"),
        chain("c"),
        chain("d")
    );
    let file = parse_properties(&text).expect("each formula is within the limit");
    assert_eq!(file.properties.len(), 3);
    assert_eq!(file.labels.len(), 1);
    // One formula beyond the limit is still refused, at that formula.
    let too_big = format!(
        "P=? [ F {} ]\nP=? [ F {} ]\n",
        chain("a"),
        vec!["\"b\""; augur_expr::syntax::MAX_DEPTH + 2].join(" & ")
    );
    match parse_properties(&too_big) {
        Err(err) => {
            assert!(err.to_string().contains("formula too large"), "{err}");
            assert!(err.to_string().contains("line 2"), "{err}");
        }
        Ok(_) => panic!("a formula beyond the limit was accepted"),
    }
}

#[test]
fn properties_files() {
    let src = "// a comment\nconst int T = 5;\nconst double p;\nconst N;\nconst bool b = true;\n\
               label \"x\" = s=2 | \"init\";\n\n\t\"safe\": P<=0.01 [ F \"crash\" ]\n\
               P=? [ F<=T \"goal\" ]; R{\"r\"}=? [ C ];;\n\
               P>=p [\n  F \"a\"\n]\n// trailing comment";
    let f = parse_properties(src)
        .unwrap_or_else(|e| panic!("{}", e.diagnostic(&augur_source::SourceFile::new("t", src))));
    assert_eq!(
        f.constants
            .iter()
            .map(|c| (c.name.as_str(), c.ty, c.value.is_some()))
            .collect::<Vec<_>>(),
        [
            ("T", Type::Int, true),
            ("p", Type::Double, false),
            ("N", Type::Int, false),
            ("b", Type::Bool, true)
        ]
    );
    assert_eq!(f.labels.len(), 1);
    assert_eq!(
        f.labels[0].formula,
        StateFormula::Or(b(ex("s=2")), b(label("init")))
    );
    let names: Vec<_> = f.properties.iter().map(|p| p.name.as_deref()).collect();
    assert_eq!(names, [Some("safe"), None, None, None]);
    // The canonical file text parses back to the same file.
    let printed = f.to_string();
    assert_eq!(parse_properties(&printed).unwrap(), f, "{printed}");
    assert_eq!(parse_properties("").unwrap(), PropertiesFile::default());
    assert_eq!(
        parse_properties(" // only a comment\n;").unwrap(),
        PropertiesFile::default()
    );
}

#[test]
fn serde_round_trip() {
    let f = parse_properties("const int k = 2;\nlabel \"l\" = x>1;\n\"n\": P>=0.5 [ \"a\" U<=k \"b\" ]\nR{\"r\"}=? [ C{discount=0.5}<=3 ]\nfilter(max, S=? [ \"up\" ], \"init\")").unwrap();
    let json = serde_json::to_string(&f).unwrap();
    let back: PropertiesFile = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
}

// ---- property-based tests ----

fn arb_expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (0i64..100).prop_map(Expr::Int),
        (0u32..64).prop_map(|n| Expr::Double(f64::from(n) / 16.0)),
        any::<bool>().prop_map(Expr::Bool),
        prop::sample::select(vec!["x", "y", "s", "k", "T"]).prop_map(|s| Expr::Ident(s.into())),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        let op = prop::sample::select(vec![
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Cmp(Cmp::Eq),
            BinaryOp::Cmp(Cmp::Lt),
            BinaryOp::Cmp(Cmp::Ge),
            BinaryOp::And,
            BinaryOp::Or,
            BinaryOp::Implies,
            BinaryOp::Iff,
        ]);
        prop_oneof![
            (op, inner.clone(), inner.clone()).prop_map(|(o, l, r)| Expr::Binary(
                o,
                Box::new(l),
                Box::new(r)
            )),
            inner
                .clone()
                .prop_map(|a| Expr::Unary(UnaryOp::Not, Box::new(a))),
            inner
                .clone()
                .prop_map(|a| Expr::Unary(UnaryOp::Neg, Box::new(a))),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| Expr::Ite(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            )),
            (inner.clone(), inner).prop_map(|(a, b)| Expr::Call(Func::Pow, vec![a, b])),
        ]
    })
}

fn arb_name() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9 _:-]{0,6}"
}

fn arb_prob_bound() -> impl Strategy<Value = Bound> {
    let cmp = prop::sample::select(vec![
        Comparison::Lt,
        Comparison::Le,
        Comparison::Gt,
        Comparison::Ge,
    ]);
    prop_oneof![
        Just(Bound::Query),
        (cmp.clone(), 0u32..=8)
            .prop_map(|(c, n)| Bound::Compare(c, Expr::Double(f64::from(n) / 8.0).into())),
        (cmp, Just(Expr::Ident("p".into()))).prop_map(|(c, e)| Bound::Compare(c, e.into())),
    ]
}

fn arb_reward_bound() -> impl Strategy<Value = Bound> {
    let cmp = prop::sample::select(vec![
        Comparison::Lt,
        Comparison::Le,
        Comparison::Gt,
        Comparison::Ge,
    ]);
    prop_oneof![
        Just(Bound::Query),
        (cmp.clone(), 0i64..50).prop_map(|(c, n)| Bound::Compare(c, Expr::Int(n).into())),
        (cmp, 0u32..100)
            .prop_map(|(c, n)| Bound::Compare(c, Expr::Double(f64::from(n) / 4.0).into())),
    ]
}

fn arb_steps() -> impl Strategy<Value = Spanned<Expr>> {
    prop_oneof![
        (0i64..30).prop_map(Expr::Int),
        Just(Expr::Ident("k".into())),
        Just(parse_expr("k+1").unwrap()),
        Just(Expr::Ident("floor".into())),
    ]
    .prop_map(Spanned::from)
}

fn arb_step_bound() -> impl Strategy<Value = Spanned<StepBound>> {
    prop_oneof![
        Just(StepBound::Unbounded),
        (1i64..30).prop_map(|n| StepBound::Lt(Expr::Int(n).into())),
        arb_steps().prop_map(StepBound::Le),
        arb_steps().prop_map(StepBound::Gt),
        arb_steps().prop_map(StepBound::Ge),
        arb_steps().prop_map(StepBound::Eq),
        (0i64..10, 0i64..10)
            .prop_map(|(a, d)| StepBound::Interval(Expr::Int(a).into(), Expr::Int(a + d).into())),
        Just(StepBound::Interval(e("k"), e("2*k"))),
    ]
    .prop_map(Spanned::from)
}

/// Builds the formula the parser would build: connectives and negations whose operands are all
/// expressions become one expression.
fn normalise(f: StateFormula) -> StateFormula {
    use StateFormula as S;
    let bin = |op: BinaryOp, l: StateFormula, r: StateFormula| match (normalise(l), normalise(r)) {
        (S::Expr(a), S::Expr(b)) => {
            S::Expr(Expr::Binary(op, Box::new(a.node), Box::new(b.node)).into())
        }
        (l, r) => match op {
            BinaryOp::And => S::And(b(l), b(r)),
            BinaryOp::Or => S::Or(b(l), b(r)),
            BinaryOp::Implies => S::Implies(b(l), b(r)),
            _ => S::Iff(b(l), b(r)),
        },
    };
    match f {
        S::Not(a) => match normalise(*a) {
            S::Expr(e) => S::Expr(Expr::Unary(UnaryOp::Not, Box::new(e.node)).into()),
            a => S::Not(b(a)),
        },
        S::And(l, r) => bin(BinaryOp::And, *l, *r),
        S::Or(l, r) => bin(BinaryOp::Or, *l, *r),
        S::Implies(l, r) => bin(BinaryOp::Implies, *l, *r),
        S::Iff(l, r) => bin(BinaryOp::Iff, *l, *r),
        S::Prob { opt, bound, path } => S::Prob {
            opt,
            bound,
            path: Box::new(normalise_path(*path)),
        },
        S::Reward {
            structure,
            opt,
            bound,
            path,
        } => S::Reward {
            structure,
            opt,
            bound,
            path: Box::new(match *path {
                RewardPath::Reachability(a) => RewardPath::Reachability(normalise(a)),
                // What the parser builds of an LTL formula in `R[...]`: an unbounded `F φ` is
                // a reachability reward; other co-safe path formulas are kept (a bounded `F`,
                // a state formula or a formula that is not co-safe is an error: replaced).
                RewardPath::Ltl(l) => match normalise_ltl(l).into_path() {
                    Some(PathFormula::Eventually(
                        a,
                        Spanned {
                            node: StepBound::Unbounded,
                            ..
                        },
                    )) => RewardPath::Reachability(a),
                    Some(PathFormula::Eventually(..)) | None => RewardPath::LongRun,
                    Some(p) if p.to_ltl().is_co_safe() => RewardPath::Ltl(p.to_ltl()),
                    Some(_) => RewardPath::LongRun,
                },
                p => p,
            }),
        },
        S::Steady { bound, formula } => S::Steady {
            bound,
            formula: b(normalise(*formula)),
        },
        S::Time { bound, target } => S::Time {
            bound,
            target: b(normalise(*target)),
        },
        S::Filter {
            op,
            property,
            states,
        } => S::Filter {
            op,
            property: b(normalise(*property)),
            states: b(normalise(*states)),
        },
        S::Apply { op, args } => {
            let args: Vec<StateFormula> = args.into_iter().map(normalise).collect();
            let exprs: Vec<Expr> = args
                .iter()
                .filter_map(|a| match a {
                    S::Expr(e) => Some(e.node.clone()),
                    _ => None,
                })
                .collect();
            if exprs.len() < args.len() {
                return S::Apply { op, args };
            }
            let mut it = exprs.into_iter();
            let mut next = || Box::new(it.next().unwrap());
            S::Expr(
                match op.node {
                    Operator::Neg => Expr::Unary(UnaryOp::Neg, next()),
                    Operator::Binary(o) => {
                        let l = next();
                        Expr::Binary(o, l, next())
                    }
                    Operator::Ite => {
                        let (c, a) = (next(), next());
                        Expr::Ite(c, a, next())
                    }
                    Operator::Call(f) => Expr::Call(f, args.iter().map(|_| *next()).collect()),
                }
                .into(),
            )
        }
        f => f,
    }
}

fn normalise_path(p: PathFormula) -> PathFormula {
    match p {
        PathFormula::Next(a) => PathFormula::Next(normalise(a)),
        PathFormula::Until(a, c, k) => PathFormula::Until(normalise(a), normalise(c), k),
        PathFormula::Eventually(a, k) => PathFormula::Eventually(normalise(a), k),
        PathFormula::Globally(a, k) => PathFormula::Globally(normalise(a), k),
        PathFormula::WeakUntil(a, c, k) => PathFormula::WeakUntil(normalise(a), normalise(c), k),
        PathFormula::Release(a, c, k) => PathFormula::Release(normalise(a), normalise(c), k),
        PathFormula::Ltl(l) => normalise_ltl(*l)
            .into_path()
            .unwrap_or_else(|| PathFormula::Next(StateFormula::Label("a".to_string().into()))),
    }
}

/// Builds the LTL formula the parser would build: connectives (and negations) whose operands
/// are all state formulas are state formulas.
fn normalise_ltl(l: LtlPath) -> LtlPath {
    use LtlPath as L;
    use StateFormula as S;
    let n = |x: Box<LtlPath>| Box::new(normalise_ltl(*x));
    let bin = |l: Box<LtlPath>,
               r: Box<LtlPath>,
               st: fn(Box<S>, Box<S>) -> S,
               lt: fn(Box<L>, Box<L>) -> L| {
        match (normalise_ltl(*l), normalise_ltl(*r)) {
            (L::State(a), L::State(c)) => L::State(normalise(st(b(a), b(c)))),
            (x, y) => lt(Box::new(x), Box::new(y)),
        }
    };
    match l {
        L::State(s) => L::State(normalise(s)),
        L::Not(a) => match normalise_ltl(*a) {
            L::State(s) => L::State(normalise(S::Not(b(s)))),
            a => L::Not(Box::new(a)),
        },
        L::And(x, y) => bin(x, y, S::And, L::And),
        L::Or(x, y) => bin(x, y, S::Or, L::Or),
        L::Implies(x, y) => bin(x, y, S::Implies, L::Implies),
        L::Iff(x, y) => bin(x, y, S::Iff, L::Iff),
        L::Next(a) => L::Next(n(a)),
        L::Eventually(a, k) => L::Eventually(n(a), k),
        L::Globally(a, k) => L::Globally(n(a), k),
        L::Until(x, y, k) => L::Until(n(x), n(y), k),
        L::WeakUntil(x, y, k) => L::WeakUntil(n(x), n(y), k),
        L::Release(x, y, k) => L::Release(n(x), n(y), k),
    }
}

fn arb_ltl(state: BoxedStrategy<StateFormula>) -> impl Strategy<Value = LtlPath> {
    use LtlPath as L;
    state.prop_map(L::State).prop_recursive(3, 12, 2, |i| {
        let two = (i.clone(), i.clone());
        let bound = arb_step_bound().boxed();
        prop_oneof![
            i.clone().prop_map(|a| L::Not(Box::new(a))),
            two.clone()
                .prop_map(|(x, y)| L::And(Box::new(x), Box::new(y))),
            two.clone()
                .prop_map(|(x, y)| L::Or(Box::new(x), Box::new(y))),
            two.clone()
                .prop_map(|(x, y)| L::Implies(Box::new(x), Box::new(y))),
            two.clone()
                .prop_map(|(x, y)| L::Iff(Box::new(x), Box::new(y))),
            i.clone().prop_map(|a| L::Next(Box::new(a))),
            (i.clone(), bound.clone()).prop_map(|(a, k)| L::Eventually(Box::new(a), k)),
            (i.clone(), bound.clone()).prop_map(|(a, k)| L::Globally(Box::new(a), k)),
            (i.clone(), i.clone(), bound.clone()).prop_map(|(x, y, k)| L::Until(
                Box::new(x),
                Box::new(y),
                k
            )),
            (i.clone(), i.clone(), bound.clone()).prop_map(|(x, y, k)| L::WeakUntil(
                Box::new(x),
                Box::new(y),
                k
            )),
            (i.clone(), i, bound).prop_map(|(x, y, k)| L::Release(Box::new(x), Box::new(y), k)),
        ]
    })
}

fn arb_state() -> impl Strategy<Value = StateFormula> {
    let leaf = prop_oneof![
        arb_expr().prop_map(|e| StateFormula::Expr(e.into())),
        arb_name().prop_map(|l| StateFormula::Label(l.into())),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let path = prop_oneof![
            inner.clone().prop_map(PathFormula::Next),
            (inner.clone(), inner.clone(), arb_step_bound())
                .prop_map(|(a, c, k)| PathFormula::Until(a, c, k)),
            (inner.clone(), arb_step_bound()).prop_map(|(a, k)| PathFormula::Eventually(a, k)),
            (inner.clone(), arb_step_bound()).prop_map(|(a, k)| PathFormula::Globally(a, k)),
            (inner.clone(), inner.clone(), arb_step_bound())
                .prop_map(|(a, c, k)| PathFormula::WeakUntil(a, c, k)),
            (inner.clone(), inner.clone(), arb_step_bound())
                .prop_map(|(a, c, k)| PathFormula::Release(a, c, k)),
            arb_ltl(inner.clone().boxed()).prop_map(|l| PathFormula::Ltl(Box::new(l))),
        ]
        .boxed();
        let reward_path = prop_oneof![
            inner.clone().prop_map(RewardPath::Reachability),
            (
                prop::option::of(arb_steps()),
                prop::option::of((0u32..=4).prop_map(|n| Expr::Double(f64::from(n) / 4.0).into()))
            )
                .prop_map(|(bound, discount)| RewardPath::Cumulative { bound, discount }),
            arb_steps().prop_map(RewardPath::Instantaneous),
            Just(RewardPath::LongRun),
            arb_ltl(inner.clone().boxed()).prop_map(RewardPath::Ltl),
        ]
        .boxed();
        let structure = prop::option::of(prop_oneof![
            arb_name().prop_map(RewardRef::Name),
            (1u32..5).prop_map(RewardRef::Index),
        ]);
        let arith_op = prop::sample::select(
            BinaryOp::ALL
                .into_iter()
                .filter(|op| {
                    !matches!(
                        op,
                        BinaryOp::And | BinaryOp::Or | BinaryOp::Implies | BinaryOp::Iff
                    )
                })
                .collect::<Vec<_>>(),
        );
        let func = prop::sample::select(vec![
            Func::Min,
            Func::Max,
            Func::Floor,
            Func::Ceil,
            Func::Round,
            Func::Pow,
            Func::Mod,
            Func::Log,
        ]);
        let filter_op = prop::sample::select(vec![
            FilterOp::Min,
            FilterOp::Max,
            FilterOp::Argmin,
            FilterOp::Argmax,
            FilterOp::Count,
            FilterOp::Sum,
            FilterOp::Avg,
            FilterOp::First,
            FilterOp::Range,
            FilterOp::Forall,
            FilterOp::Exists,
            FilterOp::State,
            FilterOp::Print,
            FilterOp::Printall,
        ]);
        prop_oneof![
            inner.clone().prop_map(|a| StateFormula::Not(b(a))).boxed(),
            (inner.clone(), inner.clone())
                .prop_map(|(l, r)| StateFormula::And(b(l), b(r)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(|(l, r)| StateFormula::Or(b(l), b(r)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(|(l, r)| StateFormula::Implies(b(l), b(r)))
                .boxed(),
            (inner.clone(), inner.clone())
                .prop_map(|(l, r)| StateFormula::Iff(b(l), b(r)))
                .boxed(),
            (arb_optimum(), arb_prob_bound(), path)
                .prop_map(|(opt, bound, p)| StateFormula::Prob {
                    opt,
                    bound: bound.into(),
                    path: Box::new(p)
                })
                .boxed(),
            (structure, arb_optimum(), arb_reward_bound(), reward_path)
                .prop_map(|(structure, opt, bound, p)| StateFormula::Reward {
                    structure,
                    opt,
                    bound: bound.into(),
                    path: Box::new(p)
                })
                .boxed(),
            (arb_prob_bound(), inner.clone())
                .prop_map(|(bound, f)| StateFormula::Steady {
                    bound: bound.into(),
                    formula: b(f)
                })
                .boxed(),
            (arb_reward_bound(), inner.clone())
                .prop_map(|(bound, f)| StateFormula::Time {
                    bound: bound.into(),
                    target: b(f)
                })
                .boxed(),
            (filter_op, inner.clone(), inner.clone())
                .prop_map(|(op, p, s)| StateFormula::Filter {
                    op: op.into(),
                    property: b(p),
                    states: b(s)
                })
                .boxed(),
            (arith_op, inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| StateFormula::Apply {
                    op: Operator::Binary(op).into(),
                    args: vec![l, r]
                })
                .boxed(),
            inner
                .clone()
                .prop_map(|a| StateFormula::Apply {
                    op: Operator::Neg.into(),
                    args: vec![a]
                })
                .boxed(),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, e)| StateFormula::Apply {
                    op: Operator::Ite.into(),
                    args: vec![c, a, e]
                })
                .boxed(),
            (func, prop::collection::vec(inner, 1..3))
                .prop_map(|(f, mut args)| {
                    let n = match f {
                        Func::Pow | Func::Mod | Func::Log => 2,
                        Func::Floor | Func::Ceil | Func::Round => 1,
                        _ => args.len(),
                    };
                    while args.len() < n {
                        args.push(args[0].clone());
                    }
                    args.truncate(n);
                    StateFormula::Apply {
                        op: Operator::Call(f).into(),
                        args,
                    }
                })
                .boxed(),
        ]
    })
}

proptest! {
    #[test]
    fn random_asts_round_trip(f in arb_state(), name in prop::option::of(arb_name())) {
        let p = Property { name, ..Property::new(normalise(f)) };
        let text = p.to_string();
        let back = parse_property(&text);
        prop_assert_eq!(back.as_ref(), Ok(&p), "printed as {}", text);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..80)) {
        let s = String::from_utf8_lossy(&bytes);
        let _ = parse_properties(&s);
        let _ = parse_property(&s);
    }

    #[test]
    fn random_strings_never_panic(s in "\\PC{0,60}") {
        let _ = parse_properties(&s);
        let _ = parse_property(&s);
    }

    #[test]
    fn random_pctl_soup_never_panics(s in "[PRSTFGXUWCI{}\\[\\]()<>=!&|?:,;\"a-c0-9. -]{0,50}") {
        let _ = parse_properties(&s);
        if let Ok(p) = parse_property(&s) {
            prop_assert_eq!(parse_property(&p.to_string()), Ok(p));
        }
    }
}

// ---- resolution ----

mod resolution {
    use super::*;
    use crate::resolve::*;
    use augur_expr::Value;
    use augur_source::SourceFile;
    use num_bigint::BigInt;
    use num_rational::BigRational;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn model() -> ModelNames {
        ModelNames {
            labels: vec!["a".into(), "goal".into()],
            variables: vec![("x".into(), Type::Int), ("y".into(), Type::Bool)],
            reward_structures: vec!["time".into(), "".into()],
            ranges: vec![("x".into(), 0, 3)],
        }
    }

    fn consts(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    fn resolve_with(text: &str, c: &BTreeMap<String, Value>) -> Result<ResolvedProperty> {
        let m = model();
        let source = Arc::new(SourceFile::new("--prop", text));
        let p = parse_property(text)?;
        Resolver::new(&m, c).resolve(&p, &source)
    }

    fn resolve(text: &str, c: &[(&str, Value)]) -> Result<ResolvedProperty> {
        resolve_with(text, &consts(c))
    }

    /// The rendered error of a property that must not resolve (or parse).
    fn error(text: &str, c: &[(&str, Value)]) -> (String, usize, usize, String) {
        match resolve(text, c) {
            Ok(r) => panic!("{text} resolved to {r:?}"),
            Err(e) => (
                e.message().to_string(),
                e.line(),
                e.column(),
                e.diagnostic(&SourceFile::new("--prop", text)).to_string(),
            ),
        }
    }

    #[test]
    fn a_step_bound_is_an_integer_whether_literal_or_constant() {
        // Issue 9: `F<=3.0` was refused but `F<=k` with k = 3.0 accepted by the checker.
        let (lit, _, col, _) = error("P=? [ F<=3.0 \"a\" ]", &[]);
        let (named, _, col2, render) = error("P=? [ F<=k \"a\" ]", &[("k", Value::Double(3.0))]);
        assert_eq!(lit, "step bound must be an integer, found 3.0");
        assert_eq!(named, lit);
        assert_eq!((col, col2), (10, 10));
        assert_eq!(
            render,
            "error: step bound must be an integer, found 3.0\n --> --prop:1:10\n  |\n1 | P=? [ F<=k \"a\" ]\n  |          ^\n"
        );
        // Every kind of step bound, the same words.
        for text in [
            "P=? [ F[k,4] \"a\" ]",
            "P=? [ \"a\" U=k x>0 ]",
            "R=? [ C<=k ]",
        ] {
            assert_eq!(error(text, &[("k", Value::Double(3.0))]).0, lit, "{text}");
        }
        assert_eq!(
            error("R=? [ I=k ]", &[("k", Value::Double(3.0))]).0,
            "step must be an integer, found 3.0"
        );
        // An integer-valued constant is fine.
        let ok = resolve("P=? [ F<=k \"a\" ]", &[("k", Value::Int(3))]).unwrap();
        let ResolvedFormula::Prob { path, .. } = ok.formula else {
            panic!()
        };
        let ResolvedPath::Eventually(_, steps) = *path else {
            panic!()
        };
        assert_eq!((steps.lower, steps.upper), (0, Some(3)));
    }

    #[test]
    fn a_threshold_out_of_range_has_one_message() {
        // Issue 9: `P>=1.5` and `P>=p` with p = 1.5 gave two different messages.
        let (lit, _, c1, _) = error("P>=1.5 [ F \"a\" ]", &[]);
        let (named, _, c2, _) = error("P>=p [ F \"a\" ]", &[("p", Value::Double(1.5))]);
        assert_eq!(lit, "probability bound 1.5 is outside [0, 1]");
        assert_eq!(named, lit);
        assert_eq!((c1, c2), (4, 4));
        let (lit, ..) = error("R{\"time\"}<-2.0 [ F \"a\" ]", &[]);
        let (named, ..) = error("R{\"time\"}<r [ F \"a\" ]", &[("r", Value::Double(-2.0))]);
        assert_eq!(lit, "reward bound -2.0 is negative");
        assert_eq!(named, lit);
        let (lit, ..) = error("R=? [ C{discount=1.5} ]", &[]);
        let (named, ..) = error("R=? [ C{discount=d} ]", &[("d", Value::Double(1.5))]);
        assert_eq!(lit, "discount factor 1.5 is not in [0, 1]");
        assert_eq!(named, lit);
        assert_eq!(
            error("S<q [ y ]", &[("q", Value::Int(2))]).0,
            "probability bound 2 is outside [0, 1]"
        );
        assert_eq!(
            error("P>=b [ F y ]", &[("b", Value::Bool(true))]).0,
            "the bound must be a number, found true"
        );
    }

    #[test]
    fn every_bound_is_checked_once_constants_are_known() {
        let text = "P>=p [ \"a\" U[lo,hi] x>N ] & R{\"time\"}<=c [ C{discount=d}<=k ] | S<q [ y ]";
        let c = |p: f64, lo: i64, hi: i64, c: f64, d: f64, k: i64| {
            vec![
                ("p", Value::Double(p)),
                ("lo", Value::Int(lo)),
                ("hi", Value::Int(hi)),
                ("N", Value::Int(3)),
                ("c", Value::Double(c)),
                ("d", Value::Double(d)),
                ("k", Value::Int(k)),
                ("q", Value::Double(0.25)),
            ]
        };
        let ok = resolve(text, &c(0.5, 1, 4, 2.0, 0.9, 5)).unwrap();
        assert_eq!(ok.text, text);
        // Constants are substituted into the expression leaves, once.
        let ResolvedFormula::Or(l, _) = &ok.formula else {
            panic!("{ok:?}")
        };
        let ResolvedFormula::And(p, _) = &**l else {
            panic!()
        };
        let ResolvedFormula::Prob {
            threshold: Some(t),
            path,
            ..
        } = &**p
        else {
            panic!()
        };
        assert_eq!((t.cmp, t.value.value), (Comparison::Ge, 0.5));
        let ResolvedPath::Until(_, ResolvedFormula::Expr { expr, ty, .. }, steps) = &**path else {
            panic!()
        };
        assert_eq!((expr.to_string(), *ty), ("x>3".to_string(), Type::Bool));
        assert_eq!((steps.lower, steps.upper), (1, Some(4)));
        for (bad, msg, col) in [
            (
                c(1.5, 1, 4, 2.0, 0.9, 5),
                "probability bound 1.5 is outside [0, 1]",
                4,
            ),
            (
                c(0.5, 4, 1, 2.0, 0.9, 5),
                "step interval [4,1] is empty",
                13,
            ),
            (c(0.5, -1, 1, 2.0, 0.9, 5), "step bound -1 is negative", 14),
            (
                c(0.5, 1, 4, -2.0, 0.9, 5),
                "reward bound -2.0 is negative",
                40,
            ),
            (
                c(0.5, 1, 4, 2.0, 1.5, 5),
                "discount factor 1.5 is not in [0, 1]",
                55,
            ),
            (c(0.5, 1, 4, 2.0, 0.9, -5), "step bound -5 is negative", 59),
        ] {
            let err = resolve(text, &bad).unwrap_err();
            assert!(matches!(err, PctlError::Resolve(_)), "{err:?}");
            assert_eq!(err.to_string(), msg);
            assert_eq!((err.line(), err.column()), (1, col), "{msg}");
        }
        // `<k` with k = 0, located at the whole step bound as the parser does for `<0`.
        let (msg, _, col, _) = error("P=? [ F<k \"a\" ]", &[("k", Value::Int(0))]);
        assert_eq!(msg, error("P=? [ F<0 \"a\" ]", &[]).0);
        assert_eq!(col, 8);
        // A bound must be constant, and every name must be known.
        assert_eq!(
            error("P=? [ F<=x \"a\" ]", &[]).0,
            "step bound must be constant, but `x` is a model variable"
        );
        assert_eq!(
            error("P>=p [ F \"a\" ]", &[]).0,
            "unknown constant `p` in the bound"
        );
        assert_eq!(
            error("P=? [ F z>1 ]", &[]).0,
            "unknown variable or constant `z`"
        );
    }

    #[test]
    fn thresholds_keep_their_exact_rationals() {
        let exact = |text: &str, c: &[(&str, Value)]| {
            let r = resolve(text, c).unwrap();
            let ResolvedFormula::Prob {
                threshold: Some(t), ..
            } = r.formula
            else {
                panic!()
            };
            t.value.exact
        };
        let q = |n: i64, d: i64| BigRational::new(BigInt::from(n), BigInt::from(d));
        assert_eq!(exact("P>=0.7 [ F \"a\" ]", &[]), q(7, 10));
        assert_eq!(exact("P>=1/3 [ F \"a\" ]", &[]), q(1, 3));
        assert_eq!(
            exact("P>=p [ F \"a\" ]", &[("p", Value::Double(0.1))]),
            q(1, 10)
        );
        assert_eq!(
            exact("P>=1-p [ F \"a\" ]", &[("p", Value::Double(0.1))]),
            q(9, 10)
        );
        assert_eq!(exact("P>=1 [ F \"a\" ]", &[]), q(1, 1));
    }

    #[test]
    fn labels_and_reward_structures_are_resolved() {
        let m = model();
        let c = consts(&[("N", Value::Int(2))]);
        let file_text = "label \"near\" = x>=N-1 & \"goal\";\nlabel \"far\" = !\"near\";\nlabel \"loop\" = \"loop2\";\nlabel \"loop2\" = \"loop\" | y;\nP=? [ F \"far\" ] + 0";
        let file = parse_properties("label \"near\" = x>=N-1 & \"goal\";\nlabel \"far\" = !\"near\";\nlabel \"loop\" = \"loop2\";\nlabel \"loop2\" = \"loop\" | y;").unwrap();
        let fsrc = Arc::new(SourceFile::new("p.props", file_text));
        let mut r = Resolver::new(&m, &c).with_labels(&file.labels, Arc::clone(&fsrc));
        let text = "P=? [ \"near\" U \"far\" ] ";
        let src = Arc::new(SourceFile::new("--prop", text));
        let p = r.resolve(&parse_property(text).unwrap(), &src).unwrap();
        let ResolvedFormula::Prob { path, .. } = &p.formula else {
            panic!()
        };
        let ResolvedPath::Until(
            ResolvedFormula::FileLabel { label: near, .. },
            ResolvedFormula::FileLabel { label: far, .. },
            _,
        ) = &**path
        else {
            panic!("{path:?}")
        };
        // "far" refers to "near": the same resolved definition, shared.
        let ResolvedFormula::Not(inner) = &far.formula else {
            panic!()
        };
        let ResolvedFormula::FileLabel { label: near2, .. } = &**inner else {
            panic!()
        };
        assert!(Arc::ptr_eq(near, near2));
        assert!(matches!(&near.formula, ResolvedFormula::And(..)));
        // A label defined in terms of itself, located in the file.
        let err = r
            .resolve(&parse_property("\"loop\"").unwrap(), &src)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "label \"loop\" is defined in terms of itself"
        );
        assert_eq!((err.line(), err.column()), (4, 17));
        assert!(err
            .diagnostic(&SourceFile::new("", ""))
            .to_string()
            .contains("--> p.props:4:17"));
        // "init" without a model label: the initial states.
        let i = r
            .resolve(&parse_property("\"init\"").unwrap(), &src)
            .unwrap();
        assert!(matches!(i.formula, ResolvedFormula::Initial { .. }));
        let (msg, _, col, _) = error("P=? [ F \"nope\" ]", &[]);
        assert_eq!(
            msg,
            "unknown label \"nope\" (known labels: \"a\", \"goal\", \"init\")"
        );
        assert_eq!(col, 9);
        // Reward structures by name, index, or the first by default.
        let idx = |text: &str| match resolve(text, &[]).unwrap().formula {
            ResolvedFormula::Reward { structure, .. } => structure,
            f => panic!("{f:?}"),
        };
        assert_eq!(idx("R=? [ S ]"), 0);
        assert_eq!(idx("R{\"time\"}=? [ S ]"), 0);
        assert_eq!(idx("R{2}=? [ S ]"), 1);
        let (msg, _, col, _) = error("P>0 [ F R{\"cost\"}>1 [ S ] ]", &[]);
        assert_eq!(
            msg,
            "unknown reward structure \"cost\" (the model has 1 \"time\", 2 (unnamed))"
        );
        assert_eq!(col, 9);
        assert!(error("R{3}=? [ S ]", &[]).0.contains("number 3"));
    }

    #[test]
    fn booleans_and_numbers_are_checked() {
        let (msg, _, col, render) = error("\"a\" & P=? [ F \"goal\" ]", &[]);
        assert_eq!(
            msg,
            "expected a boolean state formula, found a numeric one: P=? [ F \"goal\" ]"
        );
        assert_eq!(col, 7);
        assert!(
            render.ends_with("1 | \"a\" & P=? [ F \"goal\" ]\n  |       ^^^\n"),
            "{render}"
        );
        assert_eq!(
            error("P=? [ F x+1 ]", &[]).0,
            "expected a boolean state formula, found a numeric one: x+1"
        );
        assert_eq!(
            error("filter(count, P=? [ F \"a\" ])", &[]).0,
            "filter count needs a boolean property"
        );
        assert_eq!(
            error("filter(max, \"a\")", &[]).0,
            "filter max needs a numeric property"
        );
        assert!(error("x & y", &[]).0.contains("type error"));
        // Kinds.
        let kind = |t: &str| resolve(t, &[]).unwrap().formula.kind();
        assert_eq!(kind("P=? [ F \"a\" ]"), Kind::Num);
        assert_eq!(kind("P>0.5 [ F \"a\" ]"), Kind::Bool);
        assert_eq!(kind("x+1"), Kind::Num);
        assert_eq!(kind("filter(count, \"a\")"), Kind::Num);
        assert_eq!(kind("filter(argmax, P=? [ F \"a\" ])"), Kind::Bool);
        assert_eq!(kind("filter(first, P=? [ F \"a\" ])"), Kind::Num);
    }

    #[test]
    fn model_formulas_are_expanded_first() {
        let m = model();
        let c = consts(&[]);
        let expand = |e: &Expr| e.substitute(|n| (n == "far").then(|| parse_expr("x>5").unwrap()));
        let text = "P=? [ F far ]";
        let src = Arc::new(SourceFile::new("--prop", text));
        let r = Resolver::new(&m, &c)
            .with_formulas(&expand)
            .resolve(&parse_property(text).unwrap(), &src)
            .unwrap();
        // The text stays as written; the formula uses the expansion.
        assert_eq!(r.text, text);
        let ResolvedFormula::Prob { path, .. } = r.formula else {
            panic!()
        };
        let ResolvedPath::Eventually(ResolvedFormula::Expr { expr, .. }, _) = *path else {
            panic!()
        };
        assert_eq!(expr.to_string(), "x>5");
    }

    #[test]
    fn idents_labels_substitute() {
        let f = sf("P>=p [ \"a\" U[lo,hi] x>N ] & R{\"r\"}<=c [ C{discount=d}<=k ] | S<q [ y ]");
        let ids: Vec<_> = f.idents().into_iter().collect();
        assert_eq!(ids, ["N", "c", "d", "hi", "k", "lo", "p", "q", "x", "y"]);
        let labels: Vec<_> = f.labels().into_iter().collect();
        assert_eq!(labels, ["a"]);
        let h = sf("P>=p [ F<=k x=1 ]").substitute(|n| (n == "x").then(|| Expr::Ident("z".into())));
        assert_eq!(h.to_string(), "P>=p [ F<=k z=1 ]");
    }

    /// The warnings of resolving `text` on [`model`] (where `x : [0..3]`).
    fn warnings(text: &str) -> Vec<String> {
        let m = model();
        let c = consts(&[("N", Value::Int(4)), ("h", Value::Double(2.5))]);
        let source = Arc::new(SourceFile::new("--prop", text));
        let mut resolver = Resolver::new(&m, &c);
        resolver
            .resolve(&parse_property(text).unwrap(), &source)
            .unwrap();
        resolver
            .take_warnings()
            .iter()
            .map(|d| d.message.clone())
            .collect()
    }

    #[test]
    fn a_comparison_outside_a_variables_range_warns() {
        let never = |cmp: &str| format!("{cmp} never holds: x ranges over 0..3");
        assert_eq!(warnings("P=? [ F x=5 ]"), [never("x=5")]);
        assert_eq!(warnings("P=? [ F x>3 ]"), [never("x>3")]);
        assert_eq!(warnings("P=? [ F x<0 ]"), [never("x<0")]);
        assert_eq!(warnings("P=? [ F x>=4 ]"), [never("x>=4")]);
        assert_eq!(warnings("P=? [ F x<=-1 ]"), [never("x<= -1")]);
        assert_eq!(warnings("P=? [ F 4<=x ]"), [never("4<=x")]);
        assert_eq!(warnings("P=? [ F x=1.5 ]"), [never("x=1.5")]);
        // Constants are folded first; the comparison is named inside a larger expression.
        assert_eq!(warnings("P=? [ F x=N ]"), [never("x=4")]);
        assert_eq!(warnings("P=? [ F y & x=7 ]"), [never("x=7")]);
        // Warned once per comparison, each where it is.
        assert_eq!(
            warnings("P=? [ x!=9 U x=9 ] + P=? [ F x<0 ]"),
            [never("x=9"), never("x<0")]
        );
        let m = model();
        let c = consts(&[]);
        let text = "P=? [ F x=5 ]";
        let source = Arc::new(SourceFile::new("--prop", text));
        let mut resolver = Resolver::new(&m, &c);
        resolver
            .resolve(&parse_property(text).unwrap(), &source)
            .unwrap();
        assert_eq!(
            resolver.take_warnings()[0].to_string(),
            "warning: x=5 never holds: x ranges over 0..3\n --> --prop:1:9\n  |\n1 | P=? [ F x=5 ]\n  |         ^^^\n"
        );
        assert!(resolver.take_warnings().is_empty(), "taken once");
        // Located at the comparison itself when it is written as printed (but for spaces).
        let located = |text: &str| {
            let source = Arc::new(SourceFile::new("--prop", text));
            let mut resolver = Resolver::new(&m, &c);
            resolver
                .resolve(&parse_property(text).unwrap(), &source)
                .unwrap();
            let w = resolver.take_warnings();
            let l = w[0].location.as_ref().unwrap();
            (l.column, l.width)
        };
        assert_eq!(located("P=? [ F y | x = 5 ]"), (13, 5));
        assert_eq!(located("P=? [ F x=35 | x=5 ]"), (9, 4));
        assert_eq!(located("P=? [ F x<= -1 ]"), (9, 6));
    }

    #[test]
    fn a_comparison_that_can_hold_does_not_warn() {
        for text in [
            "P=? [ F x=3 ]",
            "P=? [ F x=0 ]",
            "P=? [ F x>2 ]",
            "P=? [ F x<1 ]",
            "P=? [ F x<0.5 ]",
            "P=? [ F x>2.5 ]",
            "P=? [ F x>=3 ]",
            "P=? [ F x<=0 ]",
            "P=? [ F x!=5 ]",
            "P=? [ F x!=0 ]",
            "P=? [ F x<h ]",
            "P=? [ F 3>=x ]",
            // Not a variable against a constant: not judged.
            "P=? [ F x+1=5 ]",
            "P=? [ F x=x ]",
        ] {
            assert_eq!(warnings(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn an_unquoted_label_suggests_the_quoted_label() {
        let (message, line, column, render) = error("P=? [ F goal ]", &[]);
        assert_eq!(message, "unknown variable or constant `goal`");
        assert_eq!((line, column), (1, 9));
        assert!(
            render.ends_with(
                "  = note: did you mean the label \"goal\"? labels are written in quotes\n"
            ),
            "{render}"
        );
        // A name that is no label gets no such note.
        let (_, _, _, render) = error("P=? [ F z>1 ]", &[]);
        assert!(!render.contains("note"), "{render}");
    }
}

#[test]
fn crlf_and_unicode_locations() {
    // Windows line endings and non-ASCII text before the error: columns count characters.
    let src = "\"ünïcødé\": P=? [ F \"é\" ]\r\n\"b\": P>=2 [ F x ]\r\n";
    let err = parse_properties(src).unwrap().rejected.remove(0).error;
    assert_eq!((err.line(), err.column()), (2, 9));
    let text = err
        .diagnostic(&augur_source::SourceFile::new("w.props", src))
        .to_string();
    assert!(
        text.contains("2 | \"b\": P>=2 [ F x ]\n  |         ^\n"),
        "{text}"
    );
    let ok = parse_properties("\"ünï\": P=? [ F \"é\" ]\r\nS=? [ x ]\r\n").unwrap();
    assert_eq!(ok.properties.len(), 2);
    assert_eq!(ok.properties[0].name.as_deref(), Some("ünï"));
}

#[test]
fn ltl_path_formulas_parse_print_and_reparse() {
    for (text, printed) in [
        (r#"P=? [ G F "a" ]"#, r#"P=? [ G F "a" ]"#),
        ("P>=1 [ F G s=3 ]", "P>=1 [ F G s=3 ]"),
        ("P=? [ X F s=7 ]", "P=? [ X F s=7 ]"),
        (
            r#"P=? [ "a" U ("b" U "c") ]"#,
            r#"P=? [ "a" U ("b" U "c") ]"#,
        ),
        (
            r#"P=? [ ("a" U "b") U "c" ]"#,
            r#"P=? [ ("a" U "b") U "c" ]"#,
        ),
        (
            r#"P=? [ F P>0.5 [ G "a" ] ]"#,
            r#"P=? [ F P>0.5 [ G "a" ] ]"#,
        ),
        (
            r#"P=? [ (G F "a") & !(F G "b") ]"#,
            r#"P=? [ (G F "a") & !(F G "b") ]"#,
        ),
        (
            r#"P=? [ "a" & (F<=3 "b") | x>1 ]"#,
            r#"P=? [ "a" & (F<=3 "b") | x>1 ]"#,
        ),
        (r#"P=? [ "a" U X "b" ]"#, r#"P=? [ "a" U X "b" ]"#),
        (
            r#"P=? [ (X "a") => (G "b") ]"#,
            r#"P=? [ (X "a") => (G "b") ]"#,
        ),
    ] {
        let p = parse_property(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(p.to_string(), printed);
        assert_eq!(parse_property(printed).unwrap(), p);
    }
    // Single temporal operators over state formulas stay PCTL.
    let p = parse_property(r#"P=? [ "a" U "b" & "c" ]"#).unwrap();
    let StateFormula::Prob { path, .. } = p.formula else {
        panic!()
    };
    assert!(matches!(*path, PathFormula::Until(..)));
    let p = parse_property(r#"P=? [ G F "a" ]"#).unwrap();
    let StateFormula::Prob { path, .. } = p.formula else {
        panic!()
    };
    assert!(matches!(*path, PathFormula::Ltl(_)));
    // Path formulas outside P[...] are still errors, and P needs a temporal operator.
    for bad in [
        r#"S=? [ F G "a" ]"#,
        r#"("a" U "b") & "c""#,
        r#"P=? [ ("a") & "b" ]"#,
        r#"T=? [ F G "a" ]"#,
        r#"P=? [ "a" U "b" U "c" ]"#,
    ] {
        assert!(parse_property(bad).is_err(), "{bad}");
    }
}

/// Temporal operators as PRISM reads them (`ExpressionTemporalBinary`/`ExpressionTemporalUnary`
/// in PRISM's PrismParser.jj) and, where PRISM wants parentheses, as Storm reads them
/// (`prefixOperatorPathFormula` in Storm's FormulaParserGrammar.cpp): `X`, `F`, `G` reach as
/// far right as the formula goes; `U`, `W`, `R` do not associate.
#[test]
fn temporal_operators_reach_to_the_right_as_in_prism_and_storm() {
    for (written, explicit, printed) in [
        // PRISM's own reading (its manual: `E [ F "ready" & (X "launch") ]`).
        (
            r#"P=? [ F "a" & "b" ]"#,
            r#"P=? [ F ("a" & "b") ]"#,
            r#"P=? [ F "a" & "b" ]"#,
        ),
        (
            r#"P=? [ F "ready" & (X "launch") ]"#,
            r#"P=? [ F ("ready" & (X "launch")) ]"#,
            r#"P=? [ F ("ready" & (X "launch")) ]"#,
        ),
        (
            r#"P=? [ F "a" U "b" ]"#,
            r#"P=? [ (F "a") U "b" ]"#,
            r#"P=? [ (F "a") U "b" ]"#,
        ),
        (
            r#"P=? [ X "a" W "b" ]"#,
            r#"P=? [ (X "a") W "b" ]"#,
            r#"P=? [ (X "a") W "b" ]"#,
        ),
        (
            r#"P=? [ "a" U F "b" & "c" ]"#,
            r#"P=? [ "a" U (F ("b" & "c")) ]"#,
            r#"P=? [ "a" U F "b" & "c" ]"#,
        ),
        (
            r#"P=? [ G ("req" => F "ack") ]"#,
            r#"P=? [ G ("req" => (F "ack")) ]"#,
            r#"P=? [ G ("req" => (F "ack")) ]"#,
        ),
        (
            r#"P=? [ (G F "a") | (F G "b") ]"#,
            r#"P=? [ (G (F "a")) | (F (G "b")) ]"#,
            r#"P=? [ (G F "a") | (F G "b") ]"#,
        ),
        // Where PRISM needs parentheses, Storm's reading (the same reach).
        (
            r#"P=? [ F "a" & G "b" ]"#,
            r#"P=? [ F ("a" & (G "b")) ]"#,
            r#"P=? [ F ("a" & (G "b")) ]"#,
        ),
        (
            r#"P=? [ G F "a" | F G "b" ]"#,
            r#"P=? [ G (F ("a" | (F (G "b")))) ]"#,
            r#"P=? [ G F ("a" | (F G "b")) ]"#,
        ),
        (
            r#"P>=1 [ G F "a" & G F "b" ]"#,
            r#"P>=1 [ G (F ("a" & (G (F "b")))) ]"#,
            r#"P>=1 [ G F ("a" & (G F "b")) ]"#,
        ),
        (
            r#"P=? [ !F "a" ]"#,
            r#"P=? [ !(F "a") ]"#,
            r#"P=? [ !(F "a") ]"#,
        ),
        (
            r#"P=? [ !F "a" & "b" ]"#,
            r#"P=? [ !(F ("a" & "b")) ]"#,
            r#"P=? [ !(F "a" & "b") ]"#,
        ),
        (
            r#"P=? [ !!G "a" ]"#,
            r#"P=? [ !(!(G "a")) ]"#,
            r#"P=? [ !!(G "a") ]"#,
        ),
        (
            r#"P=? [ "a" U "b" & X "c" ]"#,
            r#"P=? [ "a" U ("b" & (X "c")) ]"#,
            r#"P=? [ "a" U ("b" & (X "c")) ]"#,
        ),
        (
            r#"P=? [ "a" & F "b" U "c" ]"#,
            r#"P=? [ ("a" & (F "b")) U "c" ]"#,
            r#"P=? [ "a" & (F "b") U "c" ]"#,
        ),
        (
            r#"P=? [ "a" => X "b" ]"#,
            r#"P=? [ "a" => (X "b") ]"#,
            r#"P=? [ "a" => (X "b") ]"#,
        ),
        (
            r#"P=? [ "a" <=> G<=3 "b" | "c" ]"#,
            r#"P=? [ "a" <=> (G<=3 ("b" | "c")) ]"#,
            r#"P=? [ "a" <=> (G<=3 "b" | "c") ]"#,
        ),
        (
            r#"P=? [ G "a" => F "b" ]"#,
            r#"P=? [ G ("a" => (F "b")) ]"#,
            r#"P=? [ G ("a" => (F "b")) ]"#,
        ),
    ] {
        let p = parse_property(written).unwrap_or_else(|e| panic!("{written}: {e}"));
        let q = parse_property(explicit).unwrap_or_else(|e| panic!("{explicit}: {e}"));
        assert_eq!(p, q, "{written} and {explicit}");
        assert_eq!(p.to_string(), printed, "{written}");
        assert_eq!(parse_property(printed).unwrap(), p, "{printed}");
    }
}

#[test]
fn temporal_operators_outside_a_path_formula_are_located_errors() {
    for (bad, column) in [
        (r#""a" & F "b""#, 7),
        (r#"S=? [ "a" & G "b" ]"#, 13),
        (r#"filter(forall, "a" | X "b")"#, 22),
        (r#"P=? [ "c" ? F "a" : "b" ]"#, 13),
        (r#"P=? [ F max(1, G x) > 0 ]"#, 16),
        (r#"P>0.5 [ F "a" ] & !G "b""#, 20),
    ] {
        let e = parse_property(bad).expect_err(bad);
        let text = e.to_string();
        assert!(text.contains("is a temporal operator"), "{bad}: {text}");
        let PctlError::Invalid(s) = &e else {
            panic!("{bad}: {e:?}")
        };
        assert_eq!(s.column, column, "{bad}: {text}");
    }
    let e = parse_properties("label \"x\" = \"a\" & F \"b\";\n").unwrap_err();
    assert!(e.to_string().contains("`F` is a temporal operator"), "{e}");
}

// ---- issue 13: the rest of PRISM's and Storm's property language ----

/// Parses, checks the canonical text, and that the text parses back to the same tree.
fn canonical(s: &str) -> String {
    let p = prop(s);
    let text = p.to_string();
    assert_eq!(prop(&text), p, "{s} printed as {text}");
    text
}

#[test]
fn old_style_filters_are_filters() {
    assert_eq!(
        canonical("P=? [ F \"goal\" {x=1} ]"),
        "filter(first, P=? [ F \"goal\" ], x=1)"
    );
    assert_eq!(
        canonical("S=? [ s=0 {\"init\"}{min} ]"),
        "filter(min, S=? [ s=0 ], \"init\")"
    );
    assert_eq!(
        canonical("R=? [ F \"stable\" {\"init\"}{max} ]"),
        "filter(max, R=? [ F \"stable\" ], \"init\")"
    );
    assert_eq!(
        canonical("P>0.5 [ X s=1 {s=0}{min}{max} ]"),
        "filter(range, P>0.5 [ X s=1 ], s=0)"
    );
    assert_eq!(
        canonical("R{\"c\"}=? [ C<=3 {true} ]"),
        "filter(first, R{\"c\"}=? [ C<=3 ])"
    );
}

#[test]
fn power_is_pow_with_prism_precedence() {
    // right associative, tighter than unary minus on its left, exponent may be negated
    assert_eq!(
        parse_expr("2^3^2").unwrap(),
        parse_expr("pow(2, pow(3, 2))").unwrap()
    );
    assert_eq!(
        parse_expr("-2^2").unwrap(),
        parse_expr("-pow(2, 2)").unwrap()
    );
    assert_eq!(
        parse_expr("2^-1").unwrap(),
        parse_expr("pow(2, -1)").unwrap()
    );
    assert_eq!(
        parse_expr("2*3^2").unwrap(),
        parse_expr("2*pow(3, 2)").unwrap()
    );
    let v = |s: &str| parse_expr(s).unwrap().eval(|_| None).unwrap();
    assert_eq!(v("2^3^2"), augur_expr::Value::Int(512));
    assert_eq!(v("-2^2"), augur_expr::Value::Int(-4));
    assert_eq!(
        v("2^0.5*2^0.5"),
        augur_expr::Value::Double(2.0000000000000004)
    );
    assert_eq!(v("(1/2)^2"), augur_expr::Value::Double(0.25));
    assert_eq!(
        canonical("P=? [ F<=2^2 x^2>3 ]"),
        "P=? [ F<=pow(2, 2) pow(x, 2)>3 ]"
    );
    let f = parse_properties("const int c = 2^3;\nP=? [ F x=c ]").unwrap();
    assert_eq!(f.constants[0].value, Some(parse_expr("pow(2, 3)").unwrap()));
}

#[test]
fn operators_inside_arithmetic_and_calls() {
    assert_eq!(
        canonical("round(1 + P=? [ F<=1 d=6 ])"),
        "round(1 + P=? [ F<=1 d=6 ])"
    );
    assert_eq!(canonical("P=? [ F s=7 ] + 0.5"), "P=? [ F s=7 ] + 0.5");
    assert_eq!(
        canonical("0.0 + filter(sum, P=? [ F s=7 ])"),
        "0.0 + filter(sum, P=? [ F s=7 ])"
    );
    assert_eq!(
        canonical("P>=0.5 [ F s=7 ] & P<0.9 [ F s=7 ]"),
        "P>=0.5 [ F s=7 ] & P<0.9 [ F s=7 ]"
    );
    assert_eq!(canonical("pow(2*\"one\", d+3)"), "pow(2 * \"one\", d+3)");
    assert_eq!(
        canonical("1 - (P=? [ F \"a\" ] + 2) * 3"),
        "1 - (P=? [ F \"a\" ] + 2) * 3"
    );
    assert_eq!(canonical("-P=? [ X \"a\" ]^2"), "-pow(P=? [ X \"a\" ], 2)");
    assert_eq!(
        canonical("\"a\" ? P=? [ F \"b\" ] : 0"),
        "\"a\" ? P=? [ F \"b\" ] : 0"
    );
    match sf("P=? [ F s=7 ] + 0.5") {
        StateFormula::Apply { op, args } => {
            assert_eq!(op.node, Operator::Binary(BinaryOp::Add));
            assert_eq!(args.len(), 2);
            assert_eq!(args[1], ex("0.5"));
        }
        other => panic!("{other:?}"),
    }
    // plain expressions stay one expression
    assert_eq!(sf("round(x/2) + 1 > y"), ex("round(x/2)+1>y"));
    let err = parse_property("floor(P=? [ F s=7 ], 2)").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 1: function `floor` takes 1 argument, found 2"
    );
}

#[test]
fn near_misses_of_operator_names_say_which_operator_to_write() {
    let hint = |text: &str| {
        let err = parse_property(text).unwrap_err();
        (err.message().to_string(), err.column())
    };
    let p = "(a probability is written `P=? [ ... ]` or `P>=0.5 [ ... ]`)";
    assert_eq!(
        hint("Pr=? [ F \"a\" ]"),
        (format!("unknown operator `Pr`: did you mean `P`? {p}"), 1)
    );
    assert_eq!(
        hint("Prob>=0.5 [ F \"a\" ]").0,
        format!("unknown operator `Prob`: did you mean `P`? {p}")
    );
    assert_eq!(
        hint("p < 0.1 [ F \"a\" ]").0,
        format!("unknown operator `p`: did you mean `P`? {p}")
    );
    assert_eq!(
        hint("\"n\": x=1 & Pr=? [ F \"a\" ]"),
        (format!("unknown operator `Pr`: did you mean `P`? {p}"), 12)
    );
    assert_eq!(
        hint("Rew{\"time\"}=? [ F \"a\" ]").0,
        "unknown operator `Rew`: did you mean `R`? (an expected reward is written `R=? [ ... ]` \
         or `R>=0.5 [ ... ]`)"
    );
    assert_eq!(
        hint("pmax=? [ F \"a\" ]").0,
        "unknown operator `pmax`: did you mean `Pmax`? (a probability is written `Pmax=? [ ... ]`)"
    );
    assert_eq!(
        hint("s=? [ \"a\" ]").0,
        "unknown operator `s`: did you mean `S`? (a long-run (steady-state) probability is \
         written `S=? [ ... ]` or `S>=0.5 [ ... ]`)"
    );
    // Other syntax errors keep their message, even next to a name on the list.
    assert_eq!(
        hint("P=? [ F \"a\" ").0,
        parse_property("P=? [ F \"a\" ").unwrap_err().message()
    );
    assert!(!hint("P=? [ F p<1 ]]").0.contains("did you mean"));
    assert!(!hint("P=? [ F s=1 & ]").0.contains("did you mean"));
    // The right spellings parse.
    for ok in [
        "P=? [ F \"a\" ]",
        "Pmax=? [ F \"a\" ]",
        "R{\"t\"}=? [ F \"a\" ]",
        "S=? [ \"a\" ]",
    ] {
        parse_property(ok).unwrap();
    }
}

#[test]
fn storm_spellings() {
    assert_eq!(canonical("LRA=? [ \"a\" ]"), "S=? [ \"a\" ]");
    assert_eq!(canonical("LRA>=0.5 [ x=1 ]"), "S>=0.5 [ x=1 ]");
    assert_eq!(canonical("R=? [ C<5 ]"), "R=? [ C<=4 ]");
    assert_eq!(canonical("R=? [ C<k ]"), "R=? [ C<=k-1 ]");
    assert_eq!(
        canonical("R=? [ Cdiscount=0.9 ]"),
        "R=? [ C{discount=0.9} ]"
    );
    assert_eq!(
        canonical("R=? [ C<=10discount=0.9 ]"),
        "R=? [ C{discount=0.9}<=10 ]"
    );
    assert_eq!(
        canonical("R=? [ C<=k discount=d ]"),
        "R=? [ C{discount=d}<=k ]"
    );
    assert_eq!(
        canonical("R=? [ C<=kdiscount=d ]"),
        "R=? [ C{discount=d}<=k ]"
    );
    assert_eq!(canonical("R{\"r\"}=? [ LRA ]"), "R{\"r\"}=? [ S ]");
    let err = parse_property("R=? [ C<0 ]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 1, column 8: step bound `<0` admits no step (use `<=0` or a larger bound)"
    );
}

#[test]
fn two_properties_on_one_line_are_an_error() {
    // separate lines need no `;`
    let f = parse_properties("P=? [ F x=1 ]\nP=? [ F x=2 ]\n\"a\": x\n(y)").unwrap();
    assert_eq!(f.properties.len(), 4);
    // one line needs one
    let f = parse_properties("P=? [ F x=1 ]; P=? [ F x=2 ]").unwrap();
    assert_eq!(f.properties.len(), 2);
    let err = parse_properties("P=? [ F true ]\nd (d+1)\nP=? [ F x=2 ]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 2, column 3: expected an operator, or `;` before another property on the same line"
    );
    // a call of a property is one property
    let f = parse_properties("round(P=?[F true])\n").unwrap();
    assert_eq!(f.properties.len(), 1);
    assert_eq!(f.properties[0].to_string(), "round(P=? [ F true ])");
    let err = parse_properties("\"a\" \"b\"").unwrap_err();
    assert_eq!(err.line(), 1);
    assert_eq!(err.column(), 5);
}

#[test]
fn a_rejected_property_fails_alone() {
    let f = parse_properties("P=? [ F x=1 ]\nP>=1.5 [ F x=2 ]\n\"n\": P=? [ F x=3 ]\n\"n\": x=4")
        .unwrap();
    assert_eq!(f.properties.len(), 2);
    assert_eq!(f.rejected.len(), 2);
    assert_eq!(f.rejected[0].index, 1);
    assert_eq!(
        f.rejected[0].error.to_string(),
        "line 2, column 4: probability bound 1.5 is outside [0, 1]"
    );
    assert_eq!(f.rejected[1].index, 3);
    assert_eq!(f.rejected[1].name.as_deref(), Some("n"));
    // a syntax error still stops the file
    assert!(parse_properties("P=? [ F x=1 ]\nP=? [ F ]").is_err());
}

/// `l` printed with as few parentheses as the grammar allows around temporal operators: a
/// prefix operator (`X`, `F`, `G`, `!`) bare as the last operand of a connective or after `!`, a
/// connective bare as the operand of `X`, `F`, `G` or of `U`, `W`, `R`, wherever the text
/// runs to the end of its scope (`tail`: `]`, `)` or the `U` that ends a left operand).
fn sparse(l: &LtlPath, tail: bool) -> String {
    use LtlPath as L;
    let unary = |l: &L| {
        matches!(
            l,
            L::Next(_) | L::Eventually(..) | L::Globally(..) | L::Not(_)
        )
    };
    let binary_temporal = |l: &L| matches!(l, L::Until(..) | L::WeakUntil(..) | L::Release(..));
    let atom = |s: &StateFormula| format!("({s})");
    let paren = |l: &L| match l {
        L::State(s) => atom(s),
        l => format!("({})", sparse(l, true)),
    };
    // The operand of a prefix operator (`X`, `F`, `G`, `!`).
    let prefix_operand = |a: &L| match a {
        L::State(s) => atom(s),
        a if binary_temporal(a) => paren(a),
        a if unary(a) || tail => sparse(a, tail),
        a => paren(a),
    };
    let connective = |op: &str, x: &L, y: &L| {
        let right = match y {
            L::State(s) => atom(s),
            y if unary(y) && tail => sparse(y, true),
            y => paren(y),
        };
        format!("{} {op} {right}", paren(x))
    };
    let temporal = |op: &str, x: &L, y: &L, k: &Spanned<StepBound>| {
        let left = match x {
            L::State(s) => atom(s),
            x if binary_temporal(x) => paren(x),
            x => sparse(x, true),
        };
        let right = match y {
            L::State(s) => atom(s),
            y if binary_temporal(y) => paren(y),
            y if unary(y) || tail => sparse(y, tail),
            y => paren(y),
        };
        format!("{left} {op}{k} {right}")
    };
    match l {
        L::State(s) => atom(s),
        // `!` binds tighter than the connectives: only a prefix operator follows it bare.
        L::Not(a) if unary(a) => format!("!{}", sparse(a, tail)),
        L::Not(a) => format!("!{}", paren(a)),
        L::And(x, y) => connective("&", x, y),
        L::Or(x, y) => connective("|", x, y),
        L::Implies(x, y) => connective("=>", x, y),
        L::Iff(x, y) => connective("<=>", x, y),
        L::Next(a) => format!("X {}", prefix_operand(a)),
        L::Eventually(a, k) => format!("F{k} {}", prefix_operand(a)),
        L::Globally(a, k) => format!("G{k} {}", prefix_operand(a)),
        L::Until(x, y, k) => temporal("U", x, y, k),
        L::WeakUntil(x, y, k) => temporal("W", x, y, k),
        L::Release(x, y, k) => temporal("R", x, y, k),
    }
}

proptest! {
    /// The grammar's reach of temporal operators: a formula written with the fewest
    /// parentheses (`F "a" & G "b"`, `!F "a"`, `F "a" U "b"`) parses to the tree it stands for,
    /// the same as its canonical (parenthesised, PRISM-readable) text.
    #[test]
    fn temporal_operators_without_parentheses_parse_as_they_reach(
        l in arb_ltl(arb_name().prop_map(|n| StateFormula::Label(n.into())).boxed())
    ) {
        let l = normalise_ltl(l);
        let Some(path) = l.clone().into_path() else {
            return Ok(());
        };
        let expected = Property::new(StateFormula::Prob { opt: None, bound: Bound::Query.into(), path: Box::new(path) });
        let text = format!("P=? [ {} ]", sparse(&l, true));
        let back = parse_property(&text);
        prop_assert_eq!(back.as_ref(), Ok(&expected), "written as {}", text);
        let canonical = expected.to_string();
        let back = parse_property(&canonical);
        prop_assert_eq!(back.as_ref(), Ok(&expected), "printed as {}", canonical);
    }
}

/// `None`, `Some(min)` or `Some(max)` (`P`, `Pmin`, `Pmax`; `R`, `Rmin`, `Rmax`).
fn arb_optimum() -> impl Strategy<Value = Option<crate::ast::Optimum>> {
    prop_oneof![
        Just(None),
        Just(Some(crate::ast::Optimum::Min)),
        Just(Some(crate::ast::Optimum::Max)),
    ]
}

/// `R[...]` takes a co-safe LTL formula besides `F φ` (PRISM's co-safe LTL rewards): parsed as
/// inside `P[...]`, printed back the same; an unbounded `F φ` stays a reachability reward, a
/// step-bounded one and formulas that are not co-safe are located errors.
#[test]
fn co_safe_ltl_in_the_reward_operator() {
    let path = |s: &str| match prop(s).formula {
        StateFormula::Reward { path, .. } => *path,
        f => panic!("{s}: {f:?}"),
    };
    assert_eq!(
        path("R=? [ F \"a\" ]"),
        RewardPath::Reachability(label("a"))
    );
    for (written, printed) in [
        ("R=? [ X F \"a\" ]", "R=? [ X F \"a\" ]"),
        (
            "R{\"r\"}max=? [ F \"a\" U \"b\" ]",
            "R{\"r\"}max=? [ (F \"a\") U \"b\" ]",
        ),
        ("R=? [ \"a\" U \"b\" ]", "R=? [ \"a\" U \"b\" ]"),
        (
            "R<=3 [ (F \"a\") & (F \"b\") ]",
            "R<=3 [ (F \"a\") & (F \"b\") ]",
        ),
        ("R=? [ X \"a\" ]", "R=? [ X \"a\" ]"),
        ("R=? [ G<=3 \"a\" ]", "R=? [ G<=3 \"a\" ]"),
        ("R=? [ !(\"a\" W \"b\") ]", "R=? [ !(\"a\" W \"b\") ]"),
        (
            "R=? [ F (\"a\" & X \"b\") ]",
            "R=? [ F (\"a\" & (X \"b\")) ]",
        ),
    ] {
        assert!(
            matches!(path(written), RewardPath::Ltl(_)),
            "{written}: {:?}",
            path(written)
        );
        assert_eq!(canonical(written), printed);
        assert_eq!(canonical(printed), printed);
    }
    for (src, col) in [
        ("R=? [ G \"a\" ]", 7),
        ("R=? [ F G \"a\" ]", 7),
        ("R=? [ !(F \"a\") ]", 7),
        ("R=? [ \"a\" W \"b\" ]", 7),
        ("R=? [ (F \"a\") <=> (X \"b\") ]", 7),
    ] {
        rejects(src, true, 1, col, "this one is not co-safe");
    }
    rejects(
        "R=? [ F<=3 \"a\" ]",
        true,
        1,
        7,
        "a step-bounded `F` is not one",
    );
    rejects("R=? [ \"a\" ]", true, 1, 7, "not a state formula");
}

#[test]
fn co_safety_is_syntactic_with_polarity() {
    let l = |s: &str| match prop(&format!("P=? [ {s} ]")).formula {
        StateFormula::Prob { path, .. } => path.to_ltl(),
        f => panic!("{s}: {f:?}"),
    };
    for s in [
        "F \"a\"",
        "\"a\" U \"b\"",
        "X X \"a\"",
        "!(G \"a\")",
        "!(\"a\" R \"b\")",
        "!(\"a\" W \"b\")",
        "G<=2 \"a\"",
        "\"a\" W[1,4] \"b\"",
        "(G \"a\") => (F \"b\") | (X \"c\")",
        "!((G \"a\") | (G \"b\"))",
        "(X \"a\") <=> (X \"b\")",
        "F>=2 \"a\"",
    ] {
        assert!(l(s).is_co_safe(), "{s} is co-safe");
    }
    for s in [
        "G \"a\"",
        "G>=2 \"a\"",
        "\"a\" W \"b\"",
        "\"a\" R \"b\"",
        "!(F \"a\")",
        "!(\"a\" U \"b\")",
        "(F \"a\") => (F \"b\")",
        "(F \"a\") <=> (X \"b\")",
        "G F \"a\"",
    ] {
        assert!(!l(s).is_co_safe(), "{s} is not co-safe");
    }
}

/// A reward path whose LTL text starts like one of R's own operators (`S`, `C`, `I`) prints
/// parenthesised, so that it reads back as the same path (found by `random_asts_round_trip`:
/// `R=? [ S=? [ 0 ] W<=13 ... ]` read back as the long-run reward and failed).
#[test]
fn a_reward_path_starting_like_an_r_operator_reads_back() {
    for (written, printed) in [
        (
            "R=? [ (S=? [ true ] W<=13 \"a\") ]",
            "R=? [ (S=? [ true ] W<=13 \"a\") ]",
        ),
        ("R=? [ Cx U \"a\" ]", "R=? [ Cx U \"a\" ]"),
    ] {
        assert_eq!(canonical(written), printed);
        assert_eq!(canonical(printed), printed);
    }
}

#[test]
fn no_grammar_rule_name_reaches_a_message() {
    // Every rule of the PCTL grammar (and of the expression grammar it includes) is
    // described in words, never by its name (issue 15, item 11).
    use crate::parser::{describe, Rule};
    let leaks = augur_expr::syntax::leaked_rule_names(Rule::all_rules(), describe);
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}
