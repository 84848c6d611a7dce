//! Interval DTMCs (issue 23): every property of PRISM's interval-DTMC regression suite
//! (`../shared/prism-tests-idtmc`) and every value of Storm's `RobustDtmcPrctlModelCheckerTest`
//! (its models are in `tests/fixtures/idtmc`).
//!
//! - `idtmc::FILE:LINE[CONSTS]`: a property of a PRISM properties file, preceded by
//!   `// RESULT (N=16,MAX=2,err=0.01): value` lines (or `// RESULT: value`), run once per
//!   command line of the `.args` file beside it (lines starting with `#` are PRISM's runs with
//!   other solvers), with that line's `-const` values; the RESULT whose constants the run has is
//!   its expected value. `augur check --json --epsilon 1e-10` must give it to 1e-6 (relative,
//!   absolute for 0); `?` (no reference value) must give a number. A property whose RESULT has
//!   no matching run is not a case.
//! - `storm_idtmc::NAME`: the values of Storm's test (min and max of each model), to 1e-6.

use crate::util;
use crate::util::results::close;
use libtest_mimic::{Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// Tolerance of the interval-DTMC reference values (relative; absolute for 0).
const TOL: f64 = 1e-6;

#[derive(Clone, Debug)]
struct Case {
    line: usize,
    property: String,
    /// `None` for `?`.
    expected: Option<f64>,
    consts: Vec<(String, String)>,
}

/// `N=16,MAX=2` → pairs.
fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

fn parse_value(v: &str) -> Result<Option<f64>, String> {
    let v = v.trim();
    if v == "?" {
        return Ok(None);
    }
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .map_err(|_| format!("cannot read `{v}`"))
    };
    Ok(Some(match v.split_once('/') {
        Some((a, b)) => num(a)? / num(b)?,
        None => num(v)?,
    }))
}

/// The declarations and the annotated properties of a file: each property with its RESULT
/// lines as `(constants, value)`.
#[allow(clippy::type_complexity)]
fn parse_props(
    text: &str,
) -> Result<
    (
        Vec<String>,
        Vec<(usize, String, Vec<(Vec<(String, String)>, Option<f64>)>)>,
    ),
    String,
> {
    let (mut decls, mut props) = (Vec::new(), Vec::new());
    let mut pending = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(c) = t.strip_prefix("//") {
            let c = c.trim();
            if let Some(r) = c.strip_prefix("RESULT") {
                let r = r.trim();
                let (consts, rest) = match r.strip_prefix('(') {
                    Some(x) => {
                        let (c, rest) = x.split_once(')').ok_or(format!("line {}", i + 1))?;
                        (pairs(c), rest)
                    }
                    None => (Vec::new(), r),
                };
                let v = rest
                    .trim()
                    .strip_prefix(':')
                    .ok_or(format!("line {}", i + 1))?;
                pending.push((
                    consts,
                    parse_value(v).map_err(|e| format!("line {}: {e}", i + 1))?,
                ));
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if t.starts_with("const ") || t.starts_with("label ") {
            decls.push(t.to_string());
        } else if !pending.is_empty() {
            let p = t.trim_end_matches(';').trim().to_string();
            props.push((i + 1, p, std::mem::take(&mut pending)));
        }
    }
    Ok((decls, props))
}

/// The `-const` values of each (non-`#`) line of an `.args` file; one empty run without one.
fn runs(args: Option<&Path>) -> Vec<Vec<(String, String)>> {
    let Some(text) = args.and_then(|p| std::fs::read_to_string(p).ok()) else {
        return vec![Vec::new()];
    };
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        let mut consts = Vec::new();
        for w in toks.windows(2) {
            if w[0] == "-const" {
                consts.extend(pairs(w[1]));
            }
        }
        out.push(consts);
    }
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}

fn same_value(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

pub fn trials(trials: &mut Vec<Trial>) -> String {
    let storm = storm_trials(trials);
    let dir = match util::shared_dir("prism-tests-idtmc") {
        Ok(d) => d,
        Err(reason) => {
            trials.push(crate::missing("idtmc", reason));
            return format!("prism-tests-idtmc absent; {storm}");
        }
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "props"));
    files.sort();
    let mut n = 0;
    for props in files {
        let name = props
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `m.prism.props`, `m.prism.cosafe.props` belong to `m.prism`.
        let model = match name.find(".prism") {
            Some(i) => dir.join(&name[..i + ".prism".len()]),
            None => continue,
        };
        let args = [
            props.with_extension("props.args"),
            model.with_extension("prism.args"),
        ]
        .into_iter()
        .find(|p| p.is_file());
        let text = std::fs::read_to_string(&props).unwrap_or_default();
        let (decls, annotated) = match parse_props(&text) {
            Ok(x) => x,
            Err(e) => {
                let msg = format!("{name}: {e}");
                trials.push(Trial::test(format!("idtmc::{name}"), move || {
                    Err(msg.into())
                }));
                continue;
            }
        };
        for run in runs(args.as_deref()) {
            for (line, property, results) in &annotated {
                let Some((_, expected)) = results.iter().find(|(c, _)| {
                    c.iter()
                        .all(|(k, v)| run.iter().any(|(k2, v2)| k == k2 && same_value(v, v2)))
                }) else {
                    continue;
                };
                n += 1;
                let case = Case {
                    line: *line,
                    property: property.clone(),
                    expected: *expected,
                    consts: run.clone(),
                };
                let label = if run.is_empty() {
                    String::new()
                } else {
                    let kv: Vec<String> = run.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    format!("[{}]", kv.join(","))
                };
                let test_name = format!("idtmc::{name}:{line}{label}");
                let (model, decls) = (model.clone(), decls.clone());
                trials.push(Trial::test(test_name, move || {
                    run_case(&model, &decls, &case)
                }));
            }
        }
    }
    format!("{n} interval-DTMC regression properties; {storm}")
}

fn run_case(model: &Path, decls: &[String], case: &Case) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let props = tmp.path().join("case.props");
    let mut text = decls.join("\n");
    text.push('\n');
    text.push_str(&case.property);
    text.push_str(";\n");
    std::fs::write(&props, text).map_err(|e| format!("writing case.props: {e}"))?;
    let consts: Vec<String> = case
        .consts
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let (m, p) = (model.display().to_string(), props.display().to_string());
    let mut args = vec!["check", &m, &p, "--json", "--epsilon", "1e-10"];
    let joined = consts.join(",");
    if !consts.is_empty() {
        args.extend(["--const", &joined]);
    }
    let what = format!("`{}` (line {})", case.property, case.line);
    check_value(&args, &what, case.expected)
}

/// Runs `augur` with `args` and compares the first result with `expected` (`None`: any number;
/// infinity is `"inf"`).
fn check_value(args: &[&str], what: &str, expected: Option<f64>) -> Result<(), Failed> {
    let run = util::augur(args);
    let (code, stdout, stderr) = (util::code(&run), util::stdout(&run), util::stderr(&run));
    if code != 0 {
        return Err(format!("{what}: exit {code}: {}", stderr.trim()).into());
    }
    let out: Json = serde_json::from_str(&stdout)
        .map_err(|e| format!("{what}: output is not JSON ({e}): {stdout}"))?;
    let got = &out["results"][0]["value"];
    let ok = match (expected, got) {
        (None, Json::Number(_)) => true,
        (Some(w), Json::String(s)) if w.is_infinite() => s == "inf",
        (Some(w), Json::Number(g)) => close(g.as_f64().unwrap_or(f64::NAN), w, TOL),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{what}: expected {expected:?}, got {got}").into())
    }
}

/// Storm's `RobustDtmcPrctlModelCheckerTest` (src/test/storm/modelchecker/prctl/dtmc/): its
/// models in `tests/fixtures/idtmc`, its values (`R=?` there is the default reward structure).
fn storm_trials(trials: &mut Vec<Trial>) -> String {
    let inf = f64::INFINITY;
    let cases: [(&str, &str, &str, f64, f64); 6] = [
        ("tiny-01", "tiny-01.drn", "P{} [ F \"target\" ]", 0.3, 0.5),
        (
            "die-one",
            "die-intervals.pm",
            "P{} [ F \"one\" ]",
            9.0 / 189.0,
            72.0 / 189.0,
        ),
        (
            "brp-32-2",
            "brp-32-2-intervals.pm",
            "P{} [ F \"error\" ]",
            2.559615918664207e-10,
            0.0008464876763422187,
        ),
        (
            "die-done-rewards",
            "die-intervals.pm",
            "R{} [ F \"done\" ]",
            3.25,
            4.6,
        ),
        (
            "tiny-03-rewards",
            "tiny-03.drn",
            "R{} [ F \"target\" ]",
            6.5,
            8.5,
        ),
        (
            "tiny-04-rewards",
            "tiny-04.drn",
            "R{} [ F \"target\" ]",
            inf,
            inf,
        ),
    ];
    let mut n = 0;
    for (name, file, prop, min, max) in cases {
        for (opt, want) in [("min", min), ("max", max)] {
            n += 1;
            let model = util::fixture(&format!("idtmc/{file}"))
                .display()
                .to_string();
            let prop = prop.replace("{}", &format!("{opt}=?"));
            trials.push(Trial::test(
                format!("storm_idtmc::{name}:{opt}"),
                move || {
                    let args = [
                        "check",
                        &model,
                        "--prop",
                        &prop,
                        "--json",
                        "--epsilon",
                        "1e-10",
                    ];
                    check_value(&args, &prop, Some(want))
                },
            ));
        }
    }
    format!("{n} values of Storm's robust DTMC test")
}
