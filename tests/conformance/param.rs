//! Parametric DTMCs (issue 38): every property of PRISM's parametric regression tests in
//! `../shared/prism-tests-param`, once per command line of its `.args` file.
//!
//! - `param::FILE:LINE[-param p,q]`: `augur check MODEL PROPS -param p,q --json` (PRISM's own
//!   spelling) must give PRISM's `// RESULT:` function: the two are parsed as rational
//!   functions and must be equal (their difference the zero function), `Infinity` for an
//!   infinite reward.
//! - `param::FILE:LINE[-const p=0.5 -exact]` and `[... -ex]`: the point checker at that point
//!   (`--method exact`, and the default engine) must give PRISM's function evaluated there, to
//!   1e-9 relative.
//! - `param::FILE:LINE[-exact]` (files without parameters, PRISM's runs of its exact engine,
//!   which is its parametric engine): `--param ''` (the parametric engine with no parameter)
//!   must give the constant, and `--method exact` its value.

use crate::util;
use libtest_mimic::{Failed, Trial};
use num_rational::BigRational;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// Tolerance of the point runs (relative; absolute for 0).
const TOL: f64 = 1e-9;

#[derive(Clone, Debug)]
struct Case {
    line: usize,
    property: String,
    expected: String,
}

/// The properties of a file with their `// RESULT:` values.
fn cases(text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(c) = t.strip_prefix("//") {
            if let Some(r) = c.trim().strip_prefix("RESULT:") {
                pending = Some(r.trim().to_string());
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if let Some(expected) = pending.take() {
            out.push(Case {
                line: i + 1,
                property: t.trim_end_matches(';').to_string(),
                expected,
            });
        }
    }
    out
}

/// Every `.props` file below `dir`.
fn props_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            props_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "props") {
            out.push(p);
        }
    }
}

/// The command lines of a properties file: `X.prism.props.args`, else `X.prism.args`.
fn arg_lines(props: &Path, model: &Path) -> Vec<String> {
    let a = PathBuf::from(format!("{}.args", props.display()));
    let b = PathBuf::from(format!("{}.args", model.display()));
    let text = std::fs::read_to_string(&a)
        .or_else(|_| std::fs::read_to_string(&b))
        .unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// Adds the parametric cases; a summary for the banner.
pub fn trials(trials: &mut Vec<Trial>) -> String {
    let dir = match util::shared_dir("prism-tests-param") {
        Ok(d) => d,
        Err(reason) => {
            trials.push(crate::missing("param", reason));
            return "prism-tests-param absent".into();
        }
    };
    let mut files = Vec::new();
    props_files(&dir, &mut files);
    let mut n = 0;
    for props in files {
        let model = props.with_extension("");
        let text = std::fs::read_to_string(&props).unwrap_or_default();
        let file_name = props
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        for args in arg_lines(&props, &model) {
            for case in cases(&text) {
                n += 1;
                let (model, args2, case2) = (model.clone(), args.clone(), case.clone());
                trials.push(Trial::test(
                    format!("param::{file_name}:{}[{args}]", case.line),
                    move || run_case(&model, &args2, &case2),
                ));
            }
        }
    }
    format!("{n} PRISM parametric cases")
}

/// The parameters of a model: its undefined `const double`s.
fn undefined_doubles(model: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(model).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("const double "))
        .map(|r| r.trim().trim_end_matches(';').trim())
        .filter(|r| !r.contains('='))
        .map(str::to_string)
        .collect()
}

fn parse_function(text: &str, names: &[String]) -> Result<augur_ratfun::RatFunc, String> {
    let idx = |s: &str| names.iter().position(|n| n == s);
    augur_ratfun::parse(text, names.len(), &idx).map_err(|e| format!("cannot read `{text}`: {e}"))
}

/// `p=0.5,q=0.2` as rationals in the order of `names`.
fn point(consts: &str, names: &[String]) -> Result<Vec<BigRational>, String> {
    let mut x = Vec::new();
    for n in names {
        let v = consts
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| k.trim() == n)
            .map(|(_, v)| v.trim())
            .ok_or_else(|| format!("no value of {n} in {consts}"))?;
        x.push(augur_ratfun::decimal(v).ok_or_else(|| format!("cannot read {v}"))?);
    }
    Ok(x)
}

fn run_case(model: &Path, args: &str, case: &Case) -> Result<(), Failed> {
    let tmp = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let props = tmp.path().join("case.props");
    std::fs::write(&props, format!("{}\n", case.property))
        .map_err(|e| format!("writing {}: {e}", props.display()))?;
    let (model_s, props_s) = (model.display().to_string(), props.display().to_string());
    let names = undefined_doubles(model);
    let words: Vec<&str> = args.split_whitespace().collect();
    let what = format!("`{}` (RESULT: {})", case.property, case.expected);
    let value_of = |out: &Json| out["results"][0].clone();
    if let Some(i) = words.iter().position(|w| *w == "-param") {
        let spec = words.get(i + 1).copied().unwrap_or("");
        let run = util::augur(&["check", &model_s, &props_s, "--json", "-param", spec]);
        if util::code(&run) != 0 {
            return Err(
                format!("{what}: exit {}: {}", util::code(&run), util::stderr(&run)).into(),
            );
        }
        let res = value_of(&util::stdout_json(&run));
        return compare_function(&res, &case.expected, &names, &what);
    }
    if let Some(i) = words.iter().position(|w| *w == "-const") {
        let consts = words.get(i + 1).copied().unwrap_or("");
        let expected = parse_function(&case.expected, &names)?;
        let x = point(consts, &names)?;
        let want = expected
            .eval(&x)
            .ok_or_else(|| format!("{what}: the expected function has a pole at {consts}"))?;
        let want = augur_ratfun::rational_f64(&want);
        let mut argv = vec!["check", &model_s, &props_s, "--json", "--const", consts];
        if words.contains(&"-exact") {
            argv.extend(["--method", "exact"]);
        }
        let run = util::augur(&argv);
        if util::code(&run) != 0 {
            return Err(
                format!("{what}: exit {}: {}", util::code(&run), util::stderr(&run)).into(),
            );
        }
        let got = value_of(&util::stdout_json(&run))["value"].clone();
        return if util::results::close(got.as_f64().unwrap_or(f64::NAN), want, TOL) {
            Ok(())
        } else {
            Err(format!("{what} at {consts}: got {got}, want {want}").into())
        };
    }
    // No parameters (PRISM's exact engine): the parametric engine with none, and the exact
    // point checker.
    let run = util::augur(&["check", &model_s, &props_s, "--json", "--param", ""]);
    if util::code(&run) != 0 {
        return Err(format!("{what}: exit {}: {}", util::code(&run), util::stderr(&run)).into());
    }
    compare_function(
        &value_of(&util::stdout_json(&run)),
        &case.expected,
        &[],
        &what,
    )?;
    let run = util::augur(&["check", &model_s, &props_s, "--json", "--method", "exact"]);
    let got = value_of(&util::stdout_json(&run))["value"].clone();
    let want =
        util::results::Expected::parse(&case.expected).map_err(|e| format!("{what}: {e}"))?;
    if want.matches(&got, TOL) {
        Ok(())
    } else {
        Err(format!("{what}: --method exact gave {got}").into())
    }
}

fn compare_function(
    res: &Json,
    expected: &str,
    names: &[String],
    what: &str,
) -> Result<(), Failed> {
    let got = res["function"].as_str().unwrap_or("");
    if expected == "Infinity" || got == "Infinity" {
        return if expected == got {
            Ok(())
        } else {
            Err(format!("{what}: got {got}").into())
        };
    }
    let (e, g) = (
        parse_function(expected, names)?,
        parse_function(got, names)?,
    );
    if (&e - &g).is_zero() {
        Ok(())
    } else {
        Err(format!("{what}: got {got}").into())
    }
}
