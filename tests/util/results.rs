//! The one reader of PRISM's `// RESULT:` annotations and the one comparison of a result with
//! its expected value.
//!
//! A properties file in PRISM's test format has a line `// RESULT: value` above every tested
//! property; the value is a number, a fraction (`1/6`), `Infinity`, `true`/`false`, or `Error`
//! (the property must be rejected). `const` and `label` lines are declarations that every
//! property may use.

use serde_json::Value as Json;
use std::fmt;

/// PRISM's expected result of one property.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// A finite number (fractions are divided out).
    Num(f64),
    /// `Infinity` (an infinite expected reward); Augur's JSON writes `"inf"`.
    Infinity,
    /// `true` or `false`.
    Bool(bool),
    /// `Error`: the property must be rejected with a located error.
    Error,
}

impl Expected {
    /// Reads the text after `// RESULT:`.
    pub fn parse(text: &str) -> Result<Expected, String> {
        let t = text.trim();
        let num = |s: &str| {
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("cannot read RESULT `{t}`"))
        };
        Ok(match t {
            "Error" => Expected::Error,
            "true" => Expected::Bool(true),
            "false" => Expected::Bool(false),
            "Infinity" => Expected::Infinity,
            _ => match t.split_once('/') {
                Some((n, d)) => Expected::Num(num(n)? / num(d)?),
                None => Expected::Num(num(t)?),
            },
        })
    }

    /// Whether the JSON `value` of a result is this one: numbers within `tol` relative
    /// (absolute when the expected value is 0), `"inf"` for `Infinity`, booleans equal.
    pub fn matches(&self, got: &Json, tol: f64) -> bool {
        match (self, got) {
            (Expected::Num(w), Json::Number(g)) => close(g.as_f64().unwrap_or(f64::NAN), *w, tol),
            (Expected::Infinity, Json::String(s)) => s == "inf",
            (Expected::Bool(w), Json::Bool(g)) => w == g,
            _ => false,
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Num(x) => write!(f, "{x}"),
            Expected::Infinity => f.write_str("Infinity"),
            Expected::Bool(b) => write!(f, "{b}"),
            Expected::Error => f.write_str("Error"),
        }
    }
}

/// Whether `got` is within `tol` of `want`: relative, or absolute when `want` is 0.
pub fn close(got: f64, want: f64, tol: f64) -> bool {
    if want == 0.0 {
        got.abs() <= tol
    } else {
        (got - want).abs() <= tol * want.abs()
    }
}

/// One annotated property.
#[derive(Clone, Debug)]
pub struct Case {
    /// The line of the property in its file (1-based).
    pub line: usize,
    /// PRISM's expected result.
    pub expected: Expected,
    /// The property as written (without a trailing `;`).
    pub property: String,
}

/// The annotated properties of a file and the declarations they may use.
#[derive(Clone, Debug, Default)]
pub struct PropsFile {
    /// The `const` and `label` lines, in order.
    pub decls: Vec<String>,
    /// Every property preceded by a `// RESULT:` line.
    pub cases: Vec<Case>,
}

impl PropsFile {
    /// Reads a properties file; a RESULT value that cannot be read is an error naming its line.
    pub fn parse(text: &str) -> Result<PropsFile, String> {
        let mut out = PropsFile::default();
        let mut pending: Option<Expected> = None;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if let Some(r) = t.strip_prefix("// RESULT:") {
                pending = Some(Expected::parse(r).map_err(|e| format!("line {}: {e}", i + 1))?);
            } else if t.is_empty() || t.starts_with("//") {
                continue;
            } else if t.starts_with("const ") || t.starts_with("label ") {
                out.decls.push(t.to_string());
            } else if let Some(expected) = pending.take() {
                out.cases.push(Case {
                    line: i + 1,
                    expected,
                    property: t.trim_end_matches(';').trim().to_string(),
                });
            }
        }
        Ok(out)
    }

    /// Reads the properties file at `path`.
    pub fn read(path: &std::path::Path) -> Result<PropsFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        PropsFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The text of a properties file with the declarations, then `properties` one per line.
    /// The first property is on line `decls.len() + 1`.
    pub fn text_with<'a>(&self, properties: impl IntoIterator<Item = &'a str>) -> String {
        let mut text = String::new();
        for d in &self.decls {
            text.push_str(d);
            text.push('\n');
        }
        for p in properties {
            text.push_str(p);
            text.push_str(";\n");
        }
        text
    }
}

#[test]
fn result_lines_are_read() {
    let f = PropsFile::parse(
        "const int k = 2;\n// RESULT: 1/4\nP=? [ F<=k \"a\" ];\n// plain comment\nP=? [ X \"b\" ]\n\
         // RESULT: Infinity\nR=? [ F \"b\" ]\nlabel \"c\" = s=1;\n// RESULT: Error\n  P=? [ F<0 \"a\" ]\n",
    )
    .unwrap();
    assert_eq!(f.decls, ["const int k = 2;", "label \"c\" = s=1;"]);
    let got: Vec<_> = f
        .cases
        .iter()
        .map(|c| (c.line, c.expected.clone(), c.property.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (3, Expected::Num(0.25), "P=? [ F<=k \"a\" ]"),
            (7, Expected::Infinity, "R=? [ F \"b\" ]"),
            (10, Expected::Error, "P=? [ F<0 \"a\" ]"),
        ]
    );
    assert!(PropsFile::parse("// RESULT: 1/x\nP=? [ F true ]\n")
        .unwrap_err()
        .contains("line 1"));
    assert!(Expected::Num(0.25).matches(&serde_json::json!(0.25000000001), 1e-9));
    assert!(!Expected::Num(0.25).matches(&serde_json::json!(0.2501), 1e-9));
    assert!(Expected::Num(0.0).matches(&serde_json::json!(1e-12), 1e-9));
    assert!(Expected::Infinity.matches(&serde_json::json!("inf"), 1e-9));
    assert!(!Expected::Bool(true).matches(&serde_json::json!(1.0), 1e-9));
}
