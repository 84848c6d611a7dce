//! `augur check --param` (issue 38): rational functions, their JSON, located refusals,
//! regions, optimisation, and DRN with parameters; and the PRISM reader on a model with one
//! command per state (issue 43, item 4).

use crate::util::{augur, code, stderr, stdout, stdout_json};
use augur_ratfun::RatFunc;
use num_rational::BigRational;
use serde_json::Value as Json;

fn names() -> Vec<String> {
    vec!["p".into(), "q".into()]
}

fn func(text: &str) -> RatFunc {
    let n = names();
    let idx = |s: &str| n.iter().position(|x| x == s);
    augur_ratfun::parse(text, 2, &idx).unwrap_or_else(|e| panic!("`{text}`: {e}"))
}

/// The RESULT functions of models/lossy.props, in order.
fn expected() -> Vec<RatFunc> {
    let text = std::fs::read_to_string(crate::util::model("lossy.props")).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("// RESULT:"))
        .map(|r| func(r.trim()))
        .collect()
}

#[test]
fn functions_of_the_example_are_its_results() {
    let run = augur(&[
        "check",
        "models/lossy.pm",
        "models/lossy.props",
        "--param",
        "p,q",
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let out = stdout_json(&run);
    let results = out["results"].as_array().unwrap();
    let want = expected();
    assert_eq!(results.len(), want.len());
    for (r, w) in results.iter().zip(&want) {
        let got = func(r["function"].as_str().unwrap());
        assert!((&got - w).is_zero(), "{}: {}", r["property"], r["function"]);
        // The coefficient lists are the function: evaluated at a point, the same value.
        let x = [
            BigRational::new(1.into(), 3.into()),
            BigRational::new(2.into(), 7.into()),
        ];
        let poly = |list: &Json| -> BigRational {
            list.as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let c: BigRational = t["coefficient"].as_str().unwrap().parse().unwrap();
                    let e = t["exponents"].as_array().unwrap();
                    e.iter().zip(&x).fold(c, |acc, (k, xi)| {
                        acc * num_traits::pow(xi.clone(), k.as_u64().unwrap() as usize)
                    })
                })
                .sum()
        };
        assert_eq!(
            poly(&r["numerator"]) / poly(&r["denominator"]),
            got.eval(&x).unwrap()
        );
    }
    assert_eq!(out["model"]["parameters"][0]["name"], "p");
    // The text output: one line per property, the function in PRISM's notation.
    let text = stdout(&augur(&[
        "check",
        "models/lossy.pm",
        "--param",
        "p,q",
        "--prop",
        "R{\"tries\"}=? [ F s>0 ]",
    ]));
    assert_eq!(text, "R{\"tries\"}=? [ F s>0 ] = p^2+p+1\n");
}

#[test]
fn prism_spelling_and_partial_instantiation() {
    // -param p with --const q: a function of p alone.
    let run = augur(&[
        "check",
        "models/lossy.pm",
        "-param",
        "p",
        "--const",
        "q=0.5",
        "--prop",
        "P=? [ F \"delivered\" ]",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    assert_eq!(stdout(&run), "P=? [ F \"delivered\" ] = (-p^3+1)/2\n");
}

#[test]
fn a_parameter_where_it_would_change_the_graph_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("g.pm");
    std::fs::write(&m, "dtmc\nconst double p;\nmodule m\n  s : [0..1] init 0;\n  [] s=0 & p>0.5 -> (s'=1);\n  [] s=1 -> true;\nendmodule\n").unwrap();
    let run = augur(&[
        "check",
        m.to_str().unwrap(),
        "--param",
        "p",
        "--prop",
        "P=? [ F s=1 ]",
    ]);
    assert_eq!(code(&run), 1);
    let err = stderr(&run);
    assert!(
        err.contains("parameter `p` in a guard would change the chain's graph"),
        "{err}"
    );
    assert!(err.contains("g.pm:5:12") && err.contains('^'), "{err}");
    // A name that is no undefined constant; malformed bounds, located in the option; a
    // parameter in a property.
    refused("p,x", "P=? [ F s=1 ]", "no undefined constant `x`");
    refused(
        "p=0.9:0.1,q",
        "P=? [ F s=1 ]",
        "the bounds of `p` are empty",
    );
    refused("p,q", "P>=p [ F s=1 ]", "names parameter `p`");
}

/// `augur check models/lossy.pm --param PARAMS --prop PROP` fails (exit 1) saying `needle`.
fn refused(params: &str, prop: &str, needle: &str) {
    let run = augur(&[
        "check",
        "models/lossy.pm",
        "--param",
        params,
        "--prop",
        prop,
    ]);
    assert_eq!(code(&run), 1);
    assert!(stderr(&run).contains(needle), "{}", stderr(&run));
}

#[test]
fn regions_refine_to_the_coverage_and_draw_the_plane() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("plane.svg");
    let run = augur(&[
        "check",
        "models/lossy.pm",
        "--param",
        "p,q",
        "--prop",
        "P<=0.1 [ F \"failed\" ]",
        "--region",
        "0.01<=p<=0.5,0.01<=q<=0.1",
        "--refine",
        "0.9",
        "--region-svg",
        svg.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let out = stdout_json(&run);
    let region = &out["results"][0]["region"];
    assert!(region["coverage"].as_f64().unwrap() >= 0.9);
    let f = func("1-(1-p)*(1-q)*(1+p+p^2)");
    // Every decided box agrees with the function at its corners and centre.
    for b in region["boxes"].as_array().unwrap() {
        let v = b["verdict"].as_str().unwrap();
        let side = |n: &str, i: usize| -> BigRational {
            b["box"][n][i].as_str().unwrap().parse().unwrap()
        };
        for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let x = [side("p", i), side("q", j)];
            let val = f.eval(&x).unwrap();
            let holds = val <= BigRational::new(1.into(), 10.into());
            match v {
                "safe" => assert!(holds, "{b}"),
                "unsafe" => assert!(!holds, "{b}"),
                _ => {}
            }
        }
    }
    let doc = std::fs::read_to_string(&svg).unwrap();
    assert!(doc.starts_with("<svg") && doc.contains("<rect"), "{doc}");
    // A region where a transition vanishes is refused: the graph would change.
    let run = augur(&[
        "check",
        "models/lossy.pm",
        "--param",
        "p,q",
        "--prop",
        "P<=0.1 [ F \"failed\" ]",
        "--region",
        "0<=p<=0.5,0.01<=q<=0.1",
    ]);
    assert_eq!(code(&run), 1);
    assert!(
        stderr(&run).contains("leaves (0, 1] at p=0"),
        "{}",
        stderr(&run)
    );
}

#[test]
fn the_optimum_is_bounded_soundly() {
    let run = augur(&[
        "check",
        "models/lossy.pm",
        "--param",
        "p=0.05:0.5,q=0.01:0.2",
        "--prop",
        "P=? [ F \"delivered\" ]",
        "--optimize",
        "min",
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let o = &stdout_json(&run)["results"][0]["optimum"];
    // (1-p)(1-q)(1+p+p^2) = (1-p^3)(1-q) decreases in both: least at p=1/2, q=1/5, 0.7.
    assert_eq!(o["point"]["p"], "1/2");
    assert_eq!(o["point"]["q"], "1/5");
    let (lo, hi) = (
        o["bounds"][0].as_f64().unwrap(),
        o["bounds"][1].as_f64().unwrap(),
    );
    assert!(
        lo <= 0.7 && 0.7 <= hi && hi - lo <= 1e-6 * 0.7 + 1e-12,
        "{o}"
    );
}

#[test]
fn drn_with_parameters_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let drn = dir.path().join("lossy.drn");
    let run = augur(&[
        "export",
        "models/lossy.pm",
        "--param",
        "p,q",
        "--to",
        "drn",
        "-o",
        drn.to_str().unwrap(),
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let text = std::fs::read_to_string(&drn).unwrap();
    assert!(text.contains("@parameters\np q\n"), "{text}");
    let run = augur(&[
        "check",
        drn.to_str().unwrap(),
        "--param",
        "p,q",
        "--prop",
        "P=? [ F \"delivered\" ]",
        "--json",
    ]);
    assert_eq!(code(&run), 0, "{}", stderr(&run));
    let got = func(
        stdout_json(&run)["results"][0]["function"]
            .as_str()
            .unwrap(),
    );
    assert!((&got - &expected()[0]).is_zero());
    // A malformed function is located in the file.
    std::fs::write(&drn, text.replacen("p*q-p-q+1", "p*q-p-+", 1)).unwrap();
    let run = augur(&[
        "check",
        drn.to_str().unwrap(),
        "--param",
        "p,q",
        "--prop",
        "P=? [ F \"delivered\" ]",
    ]);
    assert_eq!(code(&run), 1);
    assert!(stderr(&run).contains("lossy.drn:15:"), "{}", stderr(&run));
}

/// A chain of `n` states written as `augur explain --output` writes subsystems: one module,
/// one command per state.
fn one_command_per_state(n: usize) -> String {
    let mut t = String::with_capacity(n * 48);
    t.push_str(&format!(
        "dtmc\n\nmodule augur_model\n  s : [0..{}] init 0;\n",
        n - 1
    ));
    for s in 0..n {
        let next = (s + 1).min(n - 1);
        t.push_str(&format!("  [] s={s} -> 0.5:(s'={next}) + 0.5:(s'=0);\n"));
    }
    t.push_str("endmodule\n");
    t
}

#[test]
fn a_model_with_one_command_per_state_loads_in_bounded_memory() {
    // 10^6 commands in release builds (the subsystems `explain` writes for 10^6-state models),
    // 3·10^5 in debug builds; both once took memory and time quadratic in the commands (the
    // reader tested every command in every state, and kept the parse tree of the whole file).
    let n = if cfg!(debug_assertions) {
        300_000
    } else {
        1_000_000
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.pm"), one_command_per_state(n)).unwrap();
    let run = crate::hostile_input::augur(
        dir.path(),
        &["check", "big.pm", "--prop", "P=? [ X s=1 ]", "--json"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out: Json = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(out["model"]["states"], n);
    assert_eq!(out["results"][0]["value"], 0.5);
}
