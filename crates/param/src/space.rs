//! The parameter space: parameters with their bounds (`--param p,q`, `--param p=0.1:0.9`,
//! PRISM's `-param p=0:1`), boxes (`--region '0.1<=p<=0.4,0.2<=q<=0.5'`) and points.

use crate::error::{ParamError, Result};
use augur_ratfun::{decimal, rational_text};
use augur_source::{Diagnostic, Location, SourceFile, Span};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// A parameter and its bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameter {
    /// The name (an undefined `const double` of the model, or a name of an explicit file).
    pub name: String,
    /// The lower bound.
    pub lo: BigRational,
    /// The upper bound.
    pub hi: BigRational,
    /// Whether the user gave the bounds (then they are closed and well-definedness over them is
    /// required); default bounds are the open interval (0, 1).
    pub given: bool,
}

/// A box of the parameter space: one closed interval per parameter, in parameter order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// `[lo, hi]` per parameter.
    pub bounds: Vec<(BigRational, BigRational)>,
}

impl Region {
    /// The box of the parameters' bounds.
    pub fn of(params: &[Parameter]) -> Region {
        Region {
            bounds: params
                .iter()
                .map(|p| (p.lo.clone(), p.hi.clone()))
                .collect(),
        }
    }

    /// The volume (product of the widths).
    pub fn volume(&self) -> BigRational {
        self.bounds
            .iter()
            .fold(BigRational::one(), |v, (lo, hi)| v * (hi - lo))
    }

    /// The centre.
    pub fn centre(&self) -> Vec<BigRational> {
        let two = BigRational::from_integer(2.into());
        self.bounds
            .iter()
            .map(|(lo, hi)| (lo + hi) / &two)
            .collect()
    }

    /// The two halves across the widest dimension.
    pub fn split(&self) -> (Region, Region) {
        let (k, _) = self
            .bounds
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| (i, hi - lo))
            .max_by(|a, b| a.1.cmp(&b.1))
            .unwrap_or((0, BigRational::zero()));
        let two = BigRational::from_integer(2.into());
        let mid = (&self.bounds[k].0 + &self.bounds[k].1) / &two;
        let mut a = self.clone();
        let mut b = self.clone();
        a.bounds[k].1 = mid.clone();
        b.bounds[k].0 = mid;
        (a, b)
    }

    /// Every corner (2^n points).
    pub fn corners(&self) -> Vec<Vec<BigRational>> {
        let n = self.bounds.len();
        (0..1usize << n)
            .map(|mask| {
                (0..n)
                    .map(|i| {
                        if mask >> i & 1 == 1 {
                            self.bounds[i].1.clone()
                        } else {
                            self.bounds[i].0.clone()
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// `0.1<=p<=0.4,0.2<=q<=0.5` with the parameters' names.
    pub fn text(&self, names: &[String]) -> String {
        self.bounds
            .iter()
            .zip(names)
            .map(|((lo, hi), n)| format!("{}<={n}<={}", rational_text(lo), rational_text(hi)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A point as `p=1/3, q=1/2`.
pub fn point_text(x: &[BigRational], names: &[String]) -> String {
    x.iter()
        .zip(names)
        .map(|(v, n)| format!("{n}={}", rational_text(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn located(option: &str, text: &str, span: Span, message: impl Into<String>) -> ParamError {
    let src = SourceFile::new(option, text);
    ParamError::Input(Box::new(Diagnostic::error(message).at(src.location(span))))
}

/// A number of an option: a decimal or a fraction `a/b`.
pub fn number(text: &str) -> Option<BigRational> {
    let t = text.trim();
    match t.split_once('/') {
        Some((a, b)) => {
            let (a, b) = (decimal(a.trim())?, decimal(b.trim())?);
            (!b.is_zero()).then(|| a / b)
        }
        None => {
            let (neg, body) = match t.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, t),
            };
            let q = decimal(body)?;
            Some(if neg { -q } else { q })
        }
    }
}

/// The comma-separated items of an option's text, each trimmed, with its span.
fn items(text: &str) -> Vec<(Span, &str)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for part in text.split(',') {
        let start = offset + (part.len() - part.trim_start().len());
        offset += part.len() + 1;
        let item = part.trim();
        if !item.is_empty() {
            out.push((Span::new(start, start + item.len()), item));
        }
    }
    out
}

/// Parses the `--param` arguments (each `p,q` or `p=0.1:0.9,q`; repeated options add up):
/// names in order of first appearance, bounds default (0, 1).
pub fn parse_params(args: &[String]) -> Result<Vec<Parameter>> {
    let mut out: Vec<Parameter> = Vec::new();
    for text in args {
        for (span, item) in items(text) {
            let (name, bounds) = match item.split_once('=') {
                Some((n, b)) => (n.trim(), Some(b)),
                None => (item, None),
            };
            let ident = !name.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident {
                return Err(located(
                    "--param",
                    text,
                    span,
                    format!("`{name}` is not a parameter name"),
                ));
            }
            let (lo, hi, given) = match bounds {
                None => (BigRational::zero(), BigRational::one(), false),
                Some(b) => {
                    let (l, h) = b.split_once(':').ok_or_else(|| {
                        located(
                            "--param",
                            text,
                            span,
                            format!("bounds of `{name}` are written LO:HI (`{name}=0.1:0.9`)"),
                        )
                    })?;
                    let (Some(l), Some(h)) = (number(l), number(h)) else {
                        return Err(located(
                            "--param",
                            text,
                            span,
                            format!("bounds of `{name}` must be numbers (`{name}=0.1:0.9`)"),
                        ));
                    };
                    if l >= h {
                        return Err(located(
                            "--param",
                            text,
                            span,
                            format!(
                                "the bounds of `{name}` are empty: {} is not below {}",
                                rational_text(&l),
                                rational_text(&h)
                            ),
                        ));
                    }
                    (l, h, true)
                }
            };
            if out.iter().any(|p| p.name == name) {
                return Err(located(
                    "--param",
                    text,
                    span,
                    format!("parameter `{name}` is given twice"),
                ));
            }
            out.push(Parameter {
                name: name.to_string(),
                lo,
                hi,
                given,
            });
        }
    }
    Ok(out)
}

/// Parses `--region '0.1<=p<=0.4,0.2<=q<=0.5'` over `params` (a parameter not named keeps its
/// bounds); each interval must lie within the parameter's bounds.
pub fn parse_region(text: &str, params: &[Parameter]) -> Result<Region> {
    let mut region = Region::of(params);
    for (span, item) in items(text) {
        let pieces: Vec<&str> = item.split("<=").map(str::trim).collect();
        let [lo, name, hi] = pieces.as_slice() else {
            return Err(located(
                "--region",
                text,
                span,
                "each interval is written LO<=NAME<=HI",
            ));
        };
        let Some(i) = params.iter().position(|p| p.name == *name) else {
            return Err(located(
                "--region",
                text,
                span,
                format!("`{name}` is not a parameter (declare it with --param)"),
            ));
        };
        let (Some(lo), Some(hi)) = (number(lo), number(hi)) else {
            return Err(located(
                "--region",
                text,
                span,
                "the bounds must be numbers",
            ));
        };
        if lo > hi {
            return Err(located(
                "--region",
                text,
                span,
                format!("the interval of `{name}` is empty"),
            ));
        }
        let p = &params[i];
        if lo < p.lo || hi > p.hi {
            return Err(located("--region", text, span, format!(
                "the interval of `{name}` leaves its bounds [{}, {}] (give wider ones with --param {name}=LO:HI)",
                rational_text(&p.lo), rational_text(&p.hi)
            )));
        }
        region.bounds[i] = (lo, hi);
    }
    Ok(region)
}

/// The reference point: a point inside every parameter's bounds, away from their ends and from
/// simple fractions, where the chain's graph is the parametric model's (every transition
/// function that is not the zero function is non-zero there, unless it vanishes on a set of
/// measure zero through this very point).
pub fn reference_point(params: &[Parameter]) -> Vec<BigRational> {
    // sqrt(2) - 1 and sqrt(3) - 1.5 ... as fractions with large prime denominators.
    let weights = [
        (41_421_356i64, 100_000_007i64),
        (36_602_540, 100_000_037),
        (27_639_320, 100_000_039),
        (61_803_398, 100_000_049),
    ];
    params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (a, b) = weights[i % weights.len()];
            let w = BigRational::new(BigInt::from(a + i as i64), BigInt::from(b));
            &p.lo + (&p.hi - &p.lo) * w
        })
        .collect()
}

/// Where an error about a point of an option is shown.
pub fn option_location(option: &str, text: &str) -> Location {
    SourceFile::new(option, text).location(Span::new(0, text.len()))
}
