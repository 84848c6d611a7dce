//! Parametric explicit models: transition probabilities written as rational functions of
//! parameters, in Storm's DRN (`@parameters` names them, `1 : (-1)*p+1`), PRISM's `.tra`
//! (`0 1 1-p`; the parameters are the names the values use, in order of appearance) and
//! Augur's JSON (`"parameters": ["p"]`, a transition's probability a string `"1-p"`).
//!
//! Each function is read exactly ([`augur_ratfun::parse`]) and replaced by its value at a
//! reference point that the caller picks from the parameters' names; the file so instantiated
//! is read by the ordinary reader (labels, rewards, initial states, every check of its rows),
//! and the functions are aligned with the matrix it builds (duplicate transitions summed, as
//! the reader sums them). [`write_drn`] writes a chain and its functions back as DRN.

use crate::error::{FormatError, Result};
use crate::ReadOptions;
use augur_dtmc::Dtmc;
use augur_ratfun::{ParametricValues, RatFunc};
use augur_source::{Location, Span};
use std::collections::HashMap;
use std::io::{Cursor, Write};
use std::path::Path;

/// A parametric model read from a file: the chain at the reference point and the functions.
#[derive(Clone, Debug)]
pub struct ParametricRead {
    /// The chain at the reference point.
    pub dtmc: Dtmc,
    /// The functions, aligned with `dtmc`'s matrix.
    pub values: ParametricValues,
}

/// The reference point for the parameters of a file, given their names.
pub type ReferenceFn<'a> = dyn Fn(&[String]) -> Vec<f64> + 'a;

/// Reads a parametric `.drn`, `.tra` or `.json` model.
pub fn read_parametric(path: &Path, reference: &ReferenceFn<'_>) -> Result<ParametricRead> {
    let text = std::fs::read_to_string(path).map_err(|e| FormatError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "drn" => read_drn_text(&text, path, reference),
        "tra" => read_tra_text(&text, path, reference),
        "json" => read_json_text(&text, path, reference),
        _ => Err(FormatError::Unsupported {
            format: ext.into(),
            message: "parametric models are read from .drn, .tra and .json files".into(),
        }),
    }
}

fn syntax(path: &Path, text: &str, offset: usize, len: usize, message: String) -> FormatError {
    FormatError::Syntax {
        location: Location::at(
            &path.display().to_string(),
            text,
            Span::new(offset, offset + len.max(1)),
        ),
        message,
    }
}

/// A transition read from the file: source, target, function.
struct Entry {
    s: u32,
    t: u32,
    f: RatFunc,
}

/// Parses `expr` (at byte `offset` of `text`) as a function of `names`.
fn function(
    expr: &str,
    offset: usize,
    names: &[String],
    path: &Path,
    text: &str,
) -> Result<RatFunc> {
    let idx = |s: &str| names.iter().position(|n| n == s);
    augur_ratfun::parse(expr, names.len(), &idx).map_err(|e| {
        syntax(
            path,
            text,
            offset + e.offset(),
            1,
            format!("in the probability `{}`: {e}", expr.trim()),
        )
    })
}

fn value_text(f: &RatFunc, x: &[f64]) -> String {
    format!("{:?}", f.eval_f64(x))
}

/// Aligns the entries with the matrix of `dtmc` (entries of the same transition summed).
fn align(dtmc: &Dtmc, entries: Vec<Entry>, n: usize) -> Vec<RatFunc> {
    let mut sum: HashMap<(u32, u32), RatFunc> = HashMap::new();
    for e in entries {
        let v = sum.entry((e.s, e.t)).or_insert_with(|| RatFunc::zero(n));
        *v = &*v + &e.f;
    }
    let mut out = Vec::with_capacity(dtmc.matrix.nnz());
    for s in 0..dtmc.num_states() {
        for k in dtmc.row_range(s) {
            let t = dtmc.matrix.indices()[k];
            out.push(
                sum.remove(&(s as u32, t))
                    .unwrap_or_else(|| RatFunc::one(n)),
            );
        }
    }
    out
}

fn values(params: Vec<String>, transitions: Vec<RatFunc>, dtmc: &Dtmc) -> ParametricValues {
    let n = params.len();
    ParametricValues {
        params,
        transitions,
        state_rewards: dtmc
            .rewards
            .iter()
            .map(|r| {
                r.state
                    .as_ref()
                    .map(|v| v.iter().map(|x| RatFunc::constant(exact(*x), n)).collect())
            })
            .collect(),
        transition_rewards: dtmc
            .rewards
            .iter()
            .map(|r| {
                r.transition
                    .as_ref()
                    .map(|v| v.iter().map(|x| RatFunc::constant(exact(*x), n)).collect())
            })
            .collect(),
    }
}

/// The rational a reward is written as (the shortest decimal of its double).
fn exact(x: f64) -> num_rational::BigRational {
    augur_expr::decimal_rational(x)
        .unwrap_or_else(|| num_rational::BigRational::from_integer(0.into()))
}

fn read_drn_text(text: &str, path: &Path, reference: &ReferenceFn<'_>) -> Result<ParametricRead> {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut entries = Vec::new();
    let mut state: Option<u32> = None;
    let mut in_model = false;
    let mut after_params = false;
    let mut x: Vec<f64> = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let t = line.trim();
        if after_params {
            after_params = false;
            names = t.split_whitespace().map(str::to_string).collect();
            x = reference(&names);
            out.push('\n');
            continue;
        }
        if t == "@parameters" {
            after_params = true;
        } else if t == "@model" {
            in_model = true;
        } else if in_model {
            if let Some(rest) = t.strip_prefix("state ") {
                state = rest.split_whitespace().next().and_then(|s| s.parse().ok());
            } else if !t.starts_with("action") && !t.is_empty() && !t.starts_with("//") {
                if let (Some((dst, expr)), Some(s)) = (t.split_once(':'), state) {
                    if let Ok(dst) = dst.trim().parse::<u32>() {
                        let expr_at = start + line.find(expr).unwrap_or(0);
                        let f = function(expr, expr_at, &names, path, text)?;
                        let lead = &line[..line.len() - line.trim_start().len()];
                        out.push_str(&format!("{lead}{dst} : {}\n", value_text(&f, &x)));
                        entries.push(Entry { s, t: dst, f });
                        continue;
                    }
                }
            }
        }
        out.push_str(line);
    }
    let (dtmc, _) = crate::drn::read_drn(Cursor::new(out), path, &ReadOptions::default())?;
    let transitions = align(&dtmc, entries, names.len());
    let values = values(names, transitions, &dtmc);
    Ok(ParametricRead { dtmc, values })
}

/// The identifiers of an expression, in order of first appearance.
fn identifiers(expr: &str, into: &mut Vec<String>) {
    let b = expr.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // `1e-3`: an exponent, not a name.
            let exponent = (b[st] == b'e' || b[st] == b'E')
                && st > 0
                && (b[st - 1].is_ascii_digit() || b[st - 1] == b'.');
            let name = &expr[st..i];
            if !exponent && !into.iter().any(|n| n == name) {
                into.push(name.to_string());
            }
        } else {
            i += 1;
        }
    }
}

fn read_tra_text(text: &str, path: &Path, reference: &ReferenceFn<'_>) -> Result<ParametricRead> {
    // First pass: the parameters, in order of appearance.
    let mut names = Vec::new();
    let mut rows: Vec<(usize, &str, u32, u32, usize)> = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        if i == 0 || line.trim().is_empty() {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(s), Some(t)) = (it.next(), it.next()) else {
            continue;
        };
        let (Ok(s), Ok(t)) = (s.parse::<u32>(), t.parse::<u32>()) else {
            continue;
        };
        // The value: the rest of the line after the two state numbers.
        let after_s = line.find(char::is_whitespace).unwrap_or(0);
        let rest = &line[after_s..];
        let rest_trim = rest.trim_start();
        let after_t = rest_trim
            .find(char::is_whitespace)
            .unwrap_or(rest_trim.len());
        let value = rest_trim[after_t..].trim();
        let value_at = start + line.len() - line.trim_start().len()
            + line.trim_start().find(value).unwrap_or(0);
        let value_at = value_at.max(start);
        identifiers(value, &mut names);
        rows.push((i, value, s, t, value_at));
    }
    let x = reference(&names);
    let mut entries = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rows_iter = rows.into_iter().peekable();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        match rows_iter.peek() {
            Some((li, value, s, t, at)) if *li == i => {
                let f = function(value, *at, &names, path, text)?;
                out.push_str(&format!("{s} {t} {}\n", value_text(&f, &x)));
                entries.push(Entry { s: *s, t: *t, f });
                rows_iter.next();
            }
            _ => out.push_str(line),
        }
    }
    let tmp_lab = path.with_extension("lab");
    let mut tra = Cursor::new(out);
    let lab_text = std::fs::read_to_string(&tmp_lab).ok();
    let mut lab = lab_text.as_deref().map(Cursor::new);
    let inputs = crate::explicit::ExplicitInputs {
        tra: (path, &mut tra),
        lab: lab
            .as_mut()
            .map(|r| (tmp_lab.as_path(), r as &mut dyn std::io::BufRead)),
        srew: None,
        trew: None,
        sta: None,
    };
    let (dtmc, _) = crate::explicit::read_prism_explicit_from(inputs, &ReadOptions::default())?;
    let transitions = align(&dtmc, entries, names.len());
    let values = values(names, transitions, &dtmc);
    Ok(ParametricRead { dtmc, values })
}

fn read_json_text(text: &str, path: &Path, reference: &ReferenceFn<'_>) -> Result<ParametricRead> {
    let bad = |m: String| FormatError::Syntax {
        location: Location::file(path.display().to_string()),
        message: m,
    };
    let mut doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let names: Vec<String> = match doc.as_object_mut().and_then(|o| o.remove("parameters")) {
        Some(serde_json::Value::Array(a)) => a
            .into_iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad("\"parameters\" must be a list of names".into()))?,
        Some(_) => return Err(bad("\"parameters\" must be a list of names".into())),
        None => Vec::new(),
    };
    let x = reference(&names);
    let mut entries = Vec::new();
    if let Some(serde_json::Value::Array(ts)) = doc.get_mut("transitions") {
        for (i, tr) in ts.iter_mut().enumerate() {
            let Some(a) = tr.as_array_mut() else { continue };
            if a.len() < 3 {
                continue;
            }
            let (Some(s), Some(t)) = (a[0].as_u64(), a[1].as_u64()) else {
                continue;
            };
            let f = match &a[2] {
                serde_json::Value::String(e) => {
                    let idx = |s: &str| names.iter().position(|n| n == s);
                    augur_ratfun::parse(e, names.len(), &idx).map_err(|err| {
                        bad(format!(
                            "transitions[{i}][2]: in the probability `{e}`: {err}"
                        ))
                    })?
                }
                serde_json::Value::Number(n) => RatFunc::constant(
                    augur_ratfun::decimal(&n.to_string().replace('-', ""))
                        .map(|q| {
                            if n.to_string().starts_with('-') {
                                -q
                            } else {
                                q
                            }
                        })
                        .ok_or_else(|| bad(format!("transitions[{i}][2]: not a number")))?,
                    names.len(),
                ),
                _ => continue,
            };
            a[2] = serde_json::Value::from(f.eval_f64(&x));
            entries.push(Entry {
                s: s as u32,
                t: t as u32,
                f,
            });
        }
    }
    let text2 = serde_json::to_string(&doc).map_err(|e| bad(e.to_string()))?;
    let (dtmc, _) = crate::json::read_json(Cursor::new(text2), path, &ReadOptions::default())?;
    let transitions = align(&dtmc, entries, names.len());
    let values = values(names, transitions, &dtmc);
    Ok(ParametricRead { dtmc, values })
}

/// Writes `dtmc` (the chain at a reference point) with its transitions' functions as DRN:
/// `@parameters` names them and every transition's value is its function in Storm's notation.
pub fn write_drn(dtmc: &Dtmc, values: &ParametricValues, w: &mut dyn Write) -> Result<()> {
    let mut plain = Vec::new();
    crate::drn::write_drn(dtmc, &mut plain)?;
    let plain = String::from_utf8_lossy(&plain);
    let mut k = 0;
    let mut after_params = false;
    for line in plain.lines() {
        if after_params {
            after_params = false;
            writeln!(w, "{}", values.params.join(" "))?;
            continue;
        }
        if line == "@parameters" {
            after_params = true;
            writeln!(w, "{line}")?;
            continue;
        }
        if let Some(rest) = line.strip_prefix("\t\t") {
            if let Some((dst, _)) = rest.split_once(" : ") {
                let f = values
                    .transitions
                    .get(k)
                    .ok_or_else(|| FormatError::Unsupported {
                        format: "drn".into(),
                        message: "fewer functions than transitions".into(),
                    })?;
                writeln!(w, "\t\t{dst} : {}", f.display(&values.params))?;
                k += 1;
                continue;
            }
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}
