//! [`Constants`]: values given by the user for constants (`--const N=3,p=0.5`).

use crate::error::{CheckError, Result};
use augur_expr::Value;

/// Values of constants given by the user (the CLI's `--const N=3,p=0.5`, an MCP request's
/// constants): the undefined constants of a PRISM model or a properties file, or names used
/// directly in a property. A later value of the same name replaces the earlier one.
///
/// ```
/// use augur_check::Constants;
/// use augur_expr::Value;
/// let mut c = Constants::parse("N=3,p=0.5").unwrap();
/// c.add("N=4,q=1/3").unwrap();
/// assert_eq!(c.get("N"), Some(Value::Int(4)));
/// assert_eq!(c.get("p"), Some(Value::Double(0.5)));
/// assert_eq!(c.get("q"), Some(Value::Double(1.0 / 3.0)));
/// assert_eq!(c.exact()["q"].to_string(), "1/3");
/// assert!(Constants::parse("N=").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Constants {
    values: Vec<(String, Value)>,
    /// The exact rationals of the values given as numbers (`1/3` is 1/3, `0.1` is 1/10).
    exact: std::collections::BTreeMap<String, augur_pctl::BigRational>,
}

impl Constants {
    /// No values.
    pub fn new() -> Constants {
        Constants::default()
    }

    /// Parses assignments `N=3,p=0.5,b=true`.
    pub fn parse(text: &str) -> Result<Constants> {
        let mut c = Constants::new();
        c.add(text)?;
        Ok(c)
    }

    /// Adds the assignments of `text` (`N=3,p=0.5`); errors are located in a text named
    /// `constants` (see [`Constants::add_from`]).
    pub fn add(&mut self, text: &str) -> Result<()> {
        self.add_from("constants", text)
    }

    /// Adds the assignments of `text`, locating errors (with a caret) in a text named
    /// `source_name` (the CLI's `--const`).
    pub fn add_from(&mut self, source_name: &str, text: &str) -> Result<()> {
        let parsed = augur_expr::parse_const_assignments(text).map_err(|e| {
            CheckError::Input(Box::new(
                e.diagnostic(&augur_source::SourceFile::new(source_name, text)),
            ))
        })?;
        for (name, value) in parsed {
            self.set(name, value);
        }
        // The exact value of each number as written (parse_const_assignments accepted the text).
        for part in text.split(',') {
            if let Some((name, value)) = part.split_once('=') {
                if let Some(q) = augur_expr::literal_rational(value) {
                    self.exact.insert(name.trim().to_string(), q);
                }
            }
        }
        Ok(())
    }

    /// The exact rationals of the values given as numbers (`p=1/3` is exactly 1/3).
    pub fn exact(&self) -> &std::collections::BTreeMap<String, augur_pctl::BigRational> {
        &self.exact
    }

    /// Sets one value.
    pub fn set(&mut self, name: impl Into<String>, value: Value) {
        let name = name.into();
        self.exact.remove(&name);
        self.values.retain(|(n, _)| *n != name);
        self.values.push((name, value));
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// The values, in the order given.
    pub fn as_slice(&self) -> &[(String, Value)] {
        &self.values
    }

    /// Whether no value is given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl FromIterator<(String, Value)> for Constants {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Constants {
        let mut c = Constants::new();
        for (n, v) in iter {
            c.set(n, v);
        }
        c
    }
}

/// The span of the name in the declaration `const [type] name ...` of constant `name` in a
/// PRISM model or a properties file (comments and quoted text skipped), to point at it.
pub(crate) fn declaration_span(text: &str, name: &str) -> Option<augur_source::Span> {
    let bytes = text.as_bytes();
    let (mut prev, mut prev2) = ("", "");
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(bytes.len(), |k| i + k);
        } else if b == b'"' {
            i = text[i + 1..]
                .find(['"', '\n'])
                .map_or(bytes.len(), |k| i + k + 2);
        } else if b.is_ascii_alphabetic() || b == b'_' {
            let end = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(bytes.len(), |k| i + k);
            let word = &text[i..end];
            let after_const =
                prev == "const" || (matches!(prev, "int" | "double" | "bool") && prev2 == "const");
            if word == name && after_const {
                return Some(augur_source::Span::new(i, end));
            }
            (prev2, prev) = (prev, word);
            i = end;
        } else {
            if !b.is_ascii_whitespace() {
                (prev2, prev) = (prev, "");
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod declaration_tests {
    use super::declaration_span;
    use augur_source::Span;

    #[test]
    fn declarations_are_found_by_name() {
        let text = "// const int N\nconst int N = 3;\nlabel \"const M\" = true;\nconst M;\nconst double p = 1/M;";
        assert_eq!(declaration_span(text, "N"), Some(Span::new(25, 26)));
        assert_eq!(declaration_span(text, "M"), Some(Span::new(62, 63)));
        assert_eq!(declaration_span(text, "p"), Some(Span::new(78, 79)));
        assert_eq!(declaration_span(text, "q"), None);
    }
}
/// One constant given as a range of values (`--const N=1:2:9`, `N=1:9`, `p=0.1:0.1:0.5`):
/// PRISM's `-const` experiments run the properties for every value.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstRange {
    /// The constant's name.
    pub name: String,
    /// Every value, from the first to the last (the end included when a step lands on it).
    pub values: Vec<Value>,
    /// The exact rational of each value (`0.1:0.1:0.3` is 1/10, 2/10, 3/10 without drift).
    pub exact: Vec<augur_pctl::BigRational>,
}

/// The most runs an experiment may have (the product of the ranges' lengths).
pub const MAX_EXPERIMENT_RUNS: usize = 100_000;

/// The `--const` values of an experiment: fixed values and ranges; [`Experiments::runs`] is the
/// cartesian product of the ranges (the first range varies slowest, as PRISM prints them).
///
/// ```
/// use augur_check::Experiments;
/// let mut e = Experiments::default();
/// e.add_from("--const", "N=1:2:9,p=1/3").unwrap();
/// e.add_from("--const", "q=0.1:0.1:0.3").unwrap();
/// let runs = e.runs();
/// assert_eq!(runs.len(), 5 * 3);
/// assert_eq!(runs[0].0[0].to_string(), "1");
/// assert_eq!(runs[14].1.exact()["q"].to_string(), "3/10");
/// assert_eq!(runs[14].1.exact()["p"].to_string(), "1/3");
/// assert!(e.add_from("--const", "M=5:1").is_err()); // empty range
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Experiments {
    /// The values given as single values.
    pub fixed: Constants,
    /// The values given as ranges, in order.
    pub ranges: Vec<ConstRange>,
}

impl Experiments {
    /// Adds the assignments of `text` (`N=1:2:9,p=0.5`), locating errors with a caret in a text
    /// named `source_name`. A later value of a name replaces an earlier one.
    pub fn add_from(&mut self, source_name: &str, text: &str) -> Result<()> {
        let source = augur_source::SourceFile::new(source_name, text);
        let located = |e: augur_expr::ExprError| CheckError::Input(Box::new(e.diagnostic(&source)));
        // The ranges' values are blanked after their start (offsets are kept), so the fixed
        // parser checks names, duplicates and the start values with its own located errors.
        let mut blanked = String::with_capacity(text.len());
        let mut ranges = Vec::new();
        let mut offset = 0;
        for (i, part) in text.split(',').enumerate() {
            if i > 0 {
                blanked.push(',');
            }
            let at = offset;
            offset += part.len() + 1;
            let Some((name, value)) = part.split_once('=') else {
                blanked.push_str(part);
                continue;
            };
            let Some(colon) = value.find(':') else {
                blanked.push_str(part);
                continue;
            };
            blanked.push_str(name);
            blanked.push('=');
            blanked.push_str(&value[..colon]);
            blanked.push_str(&" ".repeat(value.len() - colon));
            let value_at = at + name.len() + 1;
            let trimmed = value.trim_start();
            let start = value_at + (value.len() - trimmed.len());
            let span = augur_source::Span::new(start, start + trimmed.trim_end().len());
            let bad = |message: String| augur_expr::ExprError::BadAssignment {
                text: part.trim().to_string(),
                message,
                span,
            };
            let r = parse_range(name.trim(), value).map_err(|m| located(bad(m)))?;
            ranges.push(r);
        }
        augur_expr::parse_const_assignments(&blanked).map_err(located)?;
        let mut fixed = self.fixed.clone();
        fixed.add_from(source_name, &blanked)?;
        for r in &ranges {
            fixed.values.retain(|(n, _)| *n != r.name);
            fixed.exact.remove(&r.name);
        }
        for r in ranges {
            self.ranges.retain(|x| x.name != r.name);
            self.ranges.push(r);
        }
        for (name, _) in fixed.as_slice() {
            self.ranges.retain(|x| x.name != *name);
        }
        self.fixed = fixed;
        let runs: usize = self
            .ranges
            .iter()
            .try_fold(1usize, |acc, r| acc.checked_mul(r.values.len()))
            .unwrap_or(usize::MAX);
        if runs > MAX_EXPERIMENT_RUNS {
            return Err(CheckError::input(format!(
                "{source_name}: the ranges give {runs} runs, more than {MAX_EXPERIMENT_RUNS}"
            )));
        }
        Ok(())
    }

    /// Whether some constant is given as a range.
    pub fn has_ranges(&self) -> bool {
        !self.ranges.is_empty()
    }

    /// Every run: the ranged constants' values (in the order of [`Experiments::ranges`]) and
    /// all the constants of the run (fixed and ranged). Without ranges, one run of the fixed
    /// values.
    pub fn runs(&self) -> Vec<(Vec<Value>, Constants)> {
        let mut out = vec![(Vec::new(), self.fixed.clone())];
        for r in &self.ranges {
            let mut next = Vec::with_capacity(out.len() * r.values.len());
            for (vals, c) in &out {
                for (v, q) in r.values.iter().zip(&r.exact) {
                    let mut vals = vals.clone();
                    vals.push(*v);
                    let mut c = c.clone();
                    c.set(r.name.clone(), *v);
                    if matches!(v, Value::Double(_)) {
                        c.exact.insert(r.name.clone(), q.clone());
                    }
                    next.push((vals, c));
                }
            }
            out = next;
        }
        out
    }
}

/// `start:end` or `start:step:end` (ints, or doubles computed in rationals); the message of
/// the error otherwise.
fn parse_range(name: &str, value: &str) -> std::result::Result<ConstRange, String> {
    use augur_pctl::BigRational;
    use num_traits::{Signed, Zero};
    let pieces: Vec<&str> = value.split(':').map(str::trim).collect();
    let (start, step, end) = match pieces.as_slice() {
        [a, b] => (*a, "1", *b),
        [a, s, b] => (*a, *s, *b),
        _ => {
            return Err(format!(
                "a range is `start:end` or `start:step:end`, got `{}`",
                value.trim()
            ))
        }
    };
    let number = |t: &str| -> std::result::Result<(Value, BigRational), String> {
        let v = augur_expr::parse_value(t)
            .filter(|v| !matches!(v, Value::Bool(_)))
            .ok_or_else(|| format!("`{t}` in a range is not a number"))?;
        let q = augur_expr::literal_rational(t)
            .ok_or_else(|| format!("`{t}` in a range is not a number"))?;
        Ok((v, q))
    };
    let (a, qa) = number(start)?;
    let (s, qs) = number(step)?;
    let (b, qb) = number(end)?;
    if qs.is_zero() {
        return Err("the step of a range must not be 0".into());
    }
    let ints = [a, s, b].iter().all(|v| matches!(v, Value::Int(_)));
    let mut values = Vec::new();
    let mut exact = Vec::new();
    let mut q = qa;
    while (qs.is_positive() && q <= qb) || (qs.is_negative() && q >= qb) {
        if values.len() >= MAX_EXPERIMENT_RUNS {
            return Err(format!(
                "the range has more than {MAX_EXPERIMENT_RUNS} values"
            ));
        }
        values.push(if ints {
            Value::Int(
                q.to_integer()
                    .try_into()
                    .map_err(|_| "the range leaves the 64-bit integers")?,
            )
        } else {
            Value::Double(augur_solver::exact::to_f64(&q))
        });
        exact.push(q.clone());
        q += &qs;
    }
    if values.is_empty() {
        return Err(format!(
            "the range {start}:{step}:{end} has no value (the step goes away from the end)"
        ));
    }
    Ok(ConstRange {
        name: name.to_string(),
        values,
        exact,
    })
}
