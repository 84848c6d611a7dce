//! Well-definedness of a parametric chain: every row sums to 1 as a function, and every
//! transition function stays in (0, 1] over the parameters' bounds (graph-preserving: the
//! chain has the same graph at every point, so one elimination answers for all of them).
//!
//! The second check samples each distinct function exactly (the box's corners, centre and a
//! grid) and bounds it soundly on sub-boxes ([`bounds`], interval arithmetic with bisection).
//! A point where a function leaves (0, 1] is a refusal naming the state and the point when
//! the user gave the bounds (`--param p=0.1:0.9`, closed); within the default bounds (0, 1),
//! open, it is a warning, since the function is still right where the chain is well defined
//! (PRISM answers such models, e.g. its `dtmc_steady_1` test with `1-2*p`).

use crate::error::{ParamError, Result};
use crate::model::ParametricModel;
use crate::space::{point_text, Region};
use augur_ratfun::{rational_f64, CompiledFunc, RatFunc};
use num_rational::BigRational;
use num_traits::{One, Zero};
use rustc_hash::FxHashSet;

/// Checks `m`; refusals are errors, doubts within default bounds become `m.warnings`.
pub(crate) fn check(m: &mut ParametricModel) -> Result<()> {
    let names = m.names();
    let d = m.model.dtmc();
    let describe = |s: usize| d.describe_state(s).unwrap_or_else(|| format!("state {s}"));
    // Rows sum to 1.
    for s in 0..d.num_states() {
        let mut sum = RatFunc::zero(m.n_params());
        for k in d.row_range(s) {
            sum = &sum + &m.transitions[k];
        }
        if !sum.is_one() {
            return Err(ParamError::input(format!(
                "{}: the probabilities of {} sum to {}, not 1 (as a function of the parameters)",
                m.model.name(),
                describe(s),
                sum.display(&names)
            )));
        }
    }
    // Graph preservation, once per distinct function.
    let region = Region::of(&m.params);
    let open = m.params.iter().map(|p| !p.given).collect::<Vec<_>>();
    let mut warned = false;
    for (s, k, key) in distinct_functions(m, &names) {
        let f = &m.transitions[k];
        {
            if let Some((x, v)) = violation(f, &region, &open) {
                let t = d.matrix.indices()[k] as usize;
                let what = match v {
                    None => "has a pole".to_string(),
                    Some(v) => format!("is {}", augur_ratfun::rational_text(&v)),
                };
                let message = format!(
                    "{}: the transition {} -> {} has probability {key}, which {what} at {} (a graph-preserving chain keeps every transition in (0, 1] over the parameters' bounds)",
                    m.model.name(),
                    describe(s),
                    describe(t),
                    point_text(&x, &names)
                );
                if m.params.iter().any(|p| p.given) {
                    return Err(ParamError::input(message));
                }
                if !warned {
                    m.warnings.push(format!(
                        "{message}; the results hold where the chain is well defined (give bounds, e.g. --param {}=LO:HI, to have them checked)",
                        names.first().cloned().unwrap_or_default()
                    ));
                    warned = true;
                }
            }
        }
    }
    Ok(())
}

/// A point of the box (open in the dimensions of `open`) where `f` is not in (0, 1], with
/// its value there (`None`: a pole).
pub(crate) fn violation(
    f: &RatFunc,
    region: &Region,
    open: &[bool],
) -> Option<(Vec<BigRational>, Option<BigRational>)> {
    let c = f.compiled();
    let bad = |x: &[BigRational]| -> Option<Option<BigRational>> {
        // Screened in floating point: a value well inside (0, 1) needs no exact evaluation
        // (the exact one decides every point near or beyond the ends).
        let xf: Vec<f64> = x.iter().map(rational_f64).collect();
        let v = c.eval(&xf);
        if v.is_finite() && v > 1e-6 && v < 1.0 - 1e-6 {
            return None;
        }
        match f.eval(x) {
            None => Some(None),
            Some(v) if v <= BigRational::zero() || v > BigRational::one() => Some(Some(v)),
            Some(_) => None,
        }
    };
    // Sample points: a grid of 9 per dimension (7 inner for open dimensions), up to 4096.
    let n = region.bounds.len();
    let per = match n {
        0 => 1,
        1 => 33,
        2 => 17,
        3 => 9,
        _ => 5,
    };
    let total = (per as u64).saturating_pow(n as u32).min(4096);
    for idx in 0..total {
        let mut x = Vec::with_capacity(n);
        let mut rest = idx;
        for (i, (lo, hi)) in region.bounds.iter().enumerate() {
            let j = rest % per as u64;
            rest /= per as u64;
            let (num, den) = if open[i] {
                (j + 1, per as u64 + 1)
            } else {
                (j, (per as u64 - 1).max(1))
            };
            let w = BigRational::new((num as i64).into(), (den as i64).into());
            x.push(lo + (hi - lo) * w);
        }
        if let Some(v) = bad(&x) {
            return Some((x, v));
        }
    }
    // Sound bounds on sub-boxes (in floating point: a split box is covered by its halves
    // whatever the midpoint's rounding): where a box is not proven inside (0, 1], its centre
    // and corners are tried.
    let outer: Vec<(f64, f64)> = region
        .bounds
        .iter()
        .map(|(l, h)| (rational_f64(l), rational_f64(h)))
        .collect();
    let mut stack = vec![(outer.clone(), 0u32)];
    let mut leaves = 0;
    while let Some((b, depth)) = stack.pop() {
        let (lo, hi) = bounds_f64(&c, &b);
        if lo > 0.0 && hi <= 1.0 {
            continue;
        }
        let centre: Vec<f64> = b.iter().map(|(l, h)| l + (h - l) / 2.0).collect();
        let corners = (0..1usize << n).map(|mask| {
            b.iter()
                .enumerate()
                .map(|(i, (l, h))| if mask >> i & 1 == 1 { *h } else { *l })
                .collect::<Vec<f64>>()
        });
        for x in std::iter::once(centre).chain(corners) {
            let inside = x
                .iter()
                .zip(&outer)
                .zip(open)
                .all(|((v, (l, h)), o)| !*o || (v > l && v < h));
            let exact: Option<Vec<BigRational>> =
                x.iter().map(|&v| BigRational::from_float(v)).collect();
            if let (true, Some(x)) = (inside, exact) {
                if let Some(v) = bad(&x) {
                    return Some((x, v));
                }
            }
        }
        leaves += 1;
        if depth < 12 && leaves < 2000 {
            let k = (0..n)
                .max_by(|&i, &j| (b[i].1 - b[i].0).total_cmp(&(b[j].1 - b[j].0)))
                .unwrap_or(0);
            if n > 0 {
                let mid = b[k].0 + (b[k].1 - b[k].0) / 2.0;
                let (mut x, mut y) = (b.clone(), b);
                x[k].1 = mid;
                y[k].0 = mid;
                stack.push((x, depth + 1));
                stack.push((y, depth + 1));
            }
        }
    }
    None
}

/// The first transition `(state, entry)` of every distinct non-constant function, with the
/// function's text.
fn distinct_functions(m: &ParametricModel, names: &[String]) -> Vec<(usize, usize, String)> {
    let d = m.model.dtmc();
    let mut seen: FxHashSet<&RatFunc> = FxHashSet::default();
    let mut out = Vec::new();
    for s in 0..d.num_states() {
        for k in d.row_range(s) {
            let f = &m.transitions[k];
            if f.is_polynomial() && f.numerator().is_constant() {
                continue;
            }
            // Equal functions have equal representations (lowest terms, normalised).
            if seen.insert(f) {
                out.push((s, k, f.display(names).to_string()));
            }
        }
    }
    out
}

/// Refuses a region over which the chain is not graph-preserving (a transition leaves (0, 1]
/// somewhere in the closed box), naming the transition and the point.
pub(crate) fn check_region(m: &ParametricModel, region: &Region) -> Result<()> {
    let names = m.names();
    let d = m.model.dtmc();
    let closed = vec![false; region.bounds.len()];
    for (s, k, key) in distinct_functions(m, &names) {
        let f = &m.transitions[k];
        {
            if let Some((x, _)) = violation(f, region, &closed) {
                let describe =
                    |s: usize| d.describe_state(s).unwrap_or_else(|| format!("state {s}"));
                return Err(ParamError::input(format!(
                    "--region {}: the transition {} -> {} has probability {key}, which leaves (0, 1] at {} inside the region; a region must keep the chain's graph (choose one inside the parameters' well-defined range)",
                    region.text(&names),
                    describe(s),
                    describe(d.matrix.indices()[k] as usize),
                    point_text(&x, &names)
                )));
            }
        }
    }
    Ok(())
}

/// Sound bounds of `f` over the box (interval arithmetic over the terms, each monomial's range
/// from the box's ends; widened by a relative 1e-12 for rounding). `(-inf, inf)` when the
/// denominator's range contains 0.
pub fn bounds(c: &CompiledFunc, _f: &RatFunc, b: &Region) -> (f64, f64) {
    let ranges: Vec<(f64, f64)> = b
        .bounds
        .iter()
        .map(|(l, h)| (rational_f64(l), rational_f64(h)))
        .collect();
    bounds_f64(c, &ranges)
}

/// [`bounds`] over a box given by `f64` ends.
fn bounds_f64(c: &CompiledFunc, b: &[(f64, f64)]) -> (f64, f64) {
    let n = poly_range(c.numerator(), b);
    let d = poly_range(c.denominator(), b);
    if d.0 <= 0.0 && d.1 >= 0.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let cands = [n.0 / d.0, n.0 / d.1, n.1 / d.0, n.1 / d.1];
    let lo = cands.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = cands.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let widen = |x: f64| x.abs() * 1e-12 + 1e-300;
    (lo - widen(lo), hi + widen(hi))
}

/// The range of a polynomial over a box, by interval arithmetic term by term.
fn poly_range(p: &[(Vec<u32>, f64)], ranges: &[(f64, f64)]) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for (m, c) in p {
        let (mut tl, mut th) = (*c, *c);
        for (&e, &(l, h)) in m.iter().zip(ranges) {
            if e == 0 {
                continue;
            }
            let (a, bb) = (l.powi(e as i32), h.powi(e as i32));
            let (ml, mh) = if l >= 0.0 {
                (a, bb)
            } else if e % 2 == 0 {
                (if h >= 0.0 { 0.0 } else { bb }, a.max(bb))
            } else {
                (a, bb)
            };
            let prods = [tl * ml, tl * mh, th * ml, th * mh];
            tl = prods.iter().copied().fold(f64::INFINITY, f64::min);
            th = prods.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        }
        lo += tl;
        hi += th;
    }
    (lo, hi)
}
