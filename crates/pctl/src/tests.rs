//! Parser, printer and semantic-check tests.

use crate::*;
use augur_expr::{parse_expr, BinaryOp, Expr, Type, UnaryOp};
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
    StateFormula::Expr(parse_expr(s).unwrap())
}
fn label(s: &str) -> StateFormula {
    StateFormula::Label(s.into())
}
fn b(f: StateFormula) -> Box<StateFormula> {
    Box::new(f)
}
fn e(s: &str) -> Expr {
    parse_expr(s).unwrap()
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
                    bound: Bound::Compare(Comparison::Gt, Expr::Double(0.5)),
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
            bound: Bound::Query,
            path: Box::new(PathFormula::Until(
                ex("s<2"),
                ex("s=1"),
                StepBound::Eq(Expr::Int(2))
            )),
        }
    );
    assert_eq!(
        sf("P=? [ G[1,3] (s=1 | s=3) ]"),
        StateFormula::Prob {
            bound: Bound::Query,
            path: Box::new(PathFormula::Globally(
                ex("s=1 | s=3"),
                StepBound::Interval(Expr::Int(1), Expr::Int(3))
            )),
        }
    );
    assert_eq!(
        sf("R{\"a\"}<=2.5 [ C<=N ]"),
        StateFormula::Reward {
            structure: Some(RewardRef::Name("a".into())),
            bound: Bound::Compare(Comparison::Le, Expr::Double(2.5)),
            path: Box::new(RewardPath::Cumulative {
                bound: Some(e("N")),
                discount: None
            }),
        }
    );
    assert_eq!(
        sf("T=? [ F \"Done\" ]"),
        StateFormula::Time {
            bound: Bound::Query,
            target: b(label("Done"))
        }
    );
    assert_eq!(
        sf("S<0.2 [ !\"up\" ]"),
        StateFormula::Steady {
            bound: Bound::Compare(Comparison::Lt, Expr::Double(0.2)),
            formula: b(StateFormula::Not(b(label("up")))),
        }
    );
    // `<=` vs `<=>`, `=` vs `=>`, bound tokens next to `=` comparisons.
    assert_eq!(sf("a<=>b"), ex("a <=> b"));
    assert_eq!(sf("a=>b"), ex("a => b"));
    assert_eq!(
        sf("P=? [ F=2 s=2 ]"),
        StateFormula::Prob {
            bound: Bound::Query,
            path: Box::new(PathFormula::Eventually(
                ex("s=2"),
                StepBound::Eq(Expr::Int(2))
            )),
        }
    );
    // `T` is not a keyword: a constant named T works in bounds and expressions.
    assert_eq!(sf("T<=5"), ex("T<=5"));
    assert_eq!(
        sf("P=? [ F<=T x ]"),
        StateFormula::Prob {
            bound: Bound::Query,
            path: Box::new(PathFormula::Eventually(ex("x"), StepBound::Le(e("T")))),
        }
    );
    // A step bound followed by a formula starting with `-`.
    assert_eq!(
        sf("P=? [ F<=5 -x>0 ]"),
        StateFormula::Prob {
            bound: Bound::Query,
            path: Box::new(PathFormula::Eventually(
                ex("-x>0"),
                StepBound::Le(Expr::Int(5))
            )),
        }
    );
    assert_eq!(
        sf("R{1}=? [ I=k+1 ]"),
        StateFormula::Reward {
            structure: Some(RewardRef::Index(1)),
            bound: Bound::Query,
            path: Box::new(RewardPath::Instantaneous(e("k+1"))),
        }
    );
    let unary_not = ex("!x");
    assert!(matches!(
        unary_not,
        StateFormula::Expr(Expr::Unary(UnaryOp::Not, _))
    ));
    assert!(matches!(
        sf("x | y"),
        StateFormula::Expr(Expr::Binary(BinaryOp::Or, _, _))
    ));
}

/// Asserts that `src` is rejected as invalid at `line`:`col` with a message containing `msg`.
fn rejects(src: &str, kind_invalid: bool, line: usize, col: usize, msg: &str) {
    let err = match parse_properties(src) {
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
    rejects(
        "x>0 ? \"a\" : y",
        true,
        1,
        7,
        "branches of `c ? a : b` must be expressions",
    );
    rejects("x>0 ? y : P>0.5 [ F z ]", true, 1, 11, "branches");
    rejects("\"c\" ? y : z", true, 1, 1, "condition of `c ? a : b`");
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
    assert!(parse_property("Pmax=? [ F a ]").is_err());
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
            BinaryOp::Eq,
            BinaryOp::Lt,
            BinaryOp::Ge,
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
            (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| Expr::Ite(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            )),
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
            .prop_map(|(c, n)| Bound::Compare(c, Expr::Double(f64::from(n) / 8.0))),
        (cmp, Just(Expr::Ident("p".into()))).prop_map(|(c, e)| Bound::Compare(c, e)),
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
        (cmp.clone(), 0i64..50).prop_map(|(c, n)| Bound::Compare(c, Expr::Int(n))),
        (cmp, 0u32..100).prop_map(|(c, n)| Bound::Compare(c, Expr::Double(f64::from(n) / 4.0))),
    ]
}

fn arb_steps() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (0i64..30).prop_map(Expr::Int),
        Just(Expr::Ident("k".into())),
        Just(parse_expr("k+1").unwrap()),
        Just(Expr::Ident("floor".into())),
    ]
}

fn arb_step_bound() -> impl Strategy<Value = StepBound> {
    prop_oneof![
        Just(StepBound::Unbounded),
        (1i64..30).prop_map(|n| StepBound::Lt(Expr::Int(n))),
        arb_steps().prop_map(StepBound::Le),
        arb_steps().prop_map(StepBound::Gt),
        arb_steps().prop_map(StepBound::Ge),
        arb_steps().prop_map(StepBound::Eq),
        (0i64..10, 0i64..10).prop_map(|(a, d)| StepBound::Interval(Expr::Int(a), Expr::Int(a + d))),
        Just(StepBound::Interval(
            Expr::Ident("k".into()),
            parse_expr("2*k").unwrap()
        )),
    ]
}

/// Builds the formula the parser would build: connectives and negations whose operands are all
/// expressions become one expression.
fn normalise(f: StateFormula) -> StateFormula {
    use StateFormula as S;
    let bin = |op: BinaryOp, l: StateFormula, r: StateFormula| match (normalise(l), normalise(r)) {
        (S::Expr(a), S::Expr(b)) => S::Expr(Expr::Binary(op, Box::new(a), Box::new(b))),
        (l, r) => match op {
            BinaryOp::And => S::And(b(l), b(r)),
            BinaryOp::Or => S::Or(b(l), b(r)),
            BinaryOp::Implies => S::Implies(b(l), b(r)),
            _ => S::Iff(b(l), b(r)),
        },
    };
    match f {
        S::Not(a) => match normalise(*a) {
            S::Expr(e) => S::Expr(Expr::Unary(UnaryOp::Not, Box::new(e))),
            a => S::Not(b(a)),
        },
        S::And(l, r) => bin(BinaryOp::And, *l, *r),
        S::Or(l, r) => bin(BinaryOp::Or, *l, *r),
        S::Implies(l, r) => bin(BinaryOp::Implies, *l, *r),
        S::Iff(l, r) => bin(BinaryOp::Iff, *l, *r),
        S::Prob { bound, path } => S::Prob {
            bound,
            path: Box::new(normalise_path(*path)),
        },
        S::Reward {
            structure,
            bound,
            path,
        } => S::Reward {
            structure,
            bound,
            path: Box::new(match *path {
                RewardPath::Reachability(a) => RewardPath::Reachability(normalise(a)),
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
    }
}

fn arb_state() -> impl Strategy<Value = StateFormula> {
    let leaf = prop_oneof![
        arb_expr().prop_map(StateFormula::Expr),
        arb_name().prop_map(StateFormula::Label),
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
        ]
        .boxed();
        let reward_path = prop_oneof![
            inner.clone().prop_map(RewardPath::Reachability),
            (
                prop::option::of(arb_steps()),
                prop::option::of((0u32..=4).prop_map(|n| Expr::Double(f64::from(n) / 4.0)))
            )
                .prop_map(|(bound, discount)| RewardPath::Cumulative { bound, discount }),
            arb_steps().prop_map(RewardPath::Instantaneous),
            Just(RewardPath::LongRun),
        ]
        .boxed();
        let structure = prop::option::of(prop_oneof![
            arb_name().prop_map(RewardRef::Name),
            (1u32..5).prop_map(RewardRef::Index),
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
            (arb_prob_bound(), path)
                .prop_map(|(bound, p)| StateFormula::Prob {
                    bound,
                    path: Box::new(p)
                })
                .boxed(),
            (structure, arb_reward_bound(), reward_path)
                .prop_map(|(structure, bound, p)| StateFormula::Reward {
                    structure,
                    bound,
                    path: Box::new(p)
                })
                .boxed(),
            (arb_prob_bound(), inner.clone())
                .prop_map(|(bound, f)| StateFormula::Steady {
                    bound,
                    formula: b(f)
                })
                .boxed(),
            (arb_reward_bound(), inner.clone())
                .prop_map(|(bound, f)| StateFormula::Time {
                    bound,
                    target: b(f)
                })
                .boxed(),
            (filter_op, inner.clone(), inner)
                .prop_map(|(op, p, s)| StateFormula::Filter {
                    op,
                    property: b(p),
                    states: b(s)
                })
                .boxed(),
        ]
    })
}

proptest! {
    #[test]
    fn random_asts_round_trip(f in arb_state(), name in prop::option::of(arb_name())) {
        let p = Property { name, formula: normalise(f) };
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

#[test]
fn instantiate_substitutes_and_rechecks_bounds() {
    use augur_expr::Value;
    let f = sf("P>=p [ \"a\" U[lo,hi] x>N ] & R{\"r\"}<=c [ C{discount=d}<=k ] | S<q [ y ]");
    let ids: Vec<_> = f.idents().into_iter().collect();
    assert_eq!(ids, ["N", "c", "d", "hi", "k", "lo", "p", "q", "x", "y"]);
    let labels: Vec<_> = f.labels().into_iter().collect();
    assert_eq!(labels, ["a"]);
    let consts = |p: f64, lo: i64, hi: i64, c: f64, d: f64, k: i64| {
        vec![
            ("p".to_string(), Value::Double(p)),
            ("lo".into(), Value::Int(lo)),
            ("hi".into(), Value::Int(hi)),
            ("N".into(), Value::Int(3)),
            ("c".into(), Value::Double(c)),
            ("d".into(), Value::Double(d)),
            ("k".into(), Value::Int(k)),
            ("q".into(), Value::Double(0.25)),
        ]
    };
    let ok = f.instantiate(&consts(0.5, 1, 4, 2.0, 0.9, 5)).unwrap();
    assert_eq!(
        ok.to_string(),
        "P>=0.5 [ \"a\" U[1,4] x>3 ] & R{\"r\"}<=2.0 [ C{discount=0.9}<=5 ] | S<0.25 [ y ]"
    );
    // Each bound, once known, is checked as at parse time.
    for (bad, msg) in [
        (
            consts(1.5, 1, 4, 2.0, 0.9, 5),
            "probability bound 1.5 is outside [0, 1]",
        ),
        (
            consts(0.5, 4, 1, 2.0, 0.9, 5),
            "step interval [4,1] is empty",
        ),
        (consts(0.5, -1, 1, 2.0, 0.9, 5), "step bound -1 is negative"),
        (
            consts(0.5, 1, 4, -2.0, 0.9, 5),
            "reward bound -2.0 is negative",
        ),
        (
            consts(0.5, 1, 4, 2.0, 1.5, 5),
            "discount factor 1.5 is not in [0, 1]",
        ),
        (consts(0.5, 1, 4, 2.0, 0.9, -5), "step bound -5 is negative"),
    ] {
        let err = f.instantiate(&bad).unwrap_err();
        assert!(matches!(err, PctlError::Instantiate { .. }), "{err:?}");
        assert!(err.to_string().contains(msg), "{err}");
        assert_eq!(err.line(), 0);
    }
    // Non-integer step bounds and `<0` from constants.
    let g = sf("P=? [ F<k \"a\" ]");
    let err = g.instantiate(&[("k".into(), Value::Int(0))]).unwrap_err();
    assert!(err.to_string().contains("`<0` admits no step"), "{err}");
    let err = g
        .instantiate(&[("k".into(), Value::Double(2.5))])
        .unwrap_err();
    assert!(err.to_string().contains("must be an integer"), "{err}");
    // Unknown names stay (they may be model variables).
    assert_eq!(g.instantiate(&[]).unwrap(), g);
    // substitute renames in every expression.
    let h = sf("P>=p [ F<=k x=1 ]").substitute(|n| (n == "x").then(|| Expr::Ident("z".into())));
    assert_eq!(h.to_string(), "P>=p [ F<=k z=1 ]");
}

#[test]
fn crlf_and_unicode_locations() {
    // Windows line endings and non-ASCII text before the error: columns count characters.
    let src = "\"ünïcødé\": P=? [ F \"é\" ]\r\n\"b\": P>=2 [ F x ]\r\n";
    let err = parse_properties(src).unwrap_err();
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
