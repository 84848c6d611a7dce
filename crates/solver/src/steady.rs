//! Steady state and long-run averages.
//!
//! For every bottom SCC `B`, the stationary distribution `π_B` is obtained from the expected
//! number of visits `v_s` to each state during an excursion from a reference state `r ∈ B`
//! (`v_r = 1`, `v_s = P(r,s) + Σ_{t ∈ B∖{r}} v_t·P(t,s)`), then `π_B = v / Σv`. This renewal
//! argument holds for periodic chains as well (no power iteration on `P` is involved), and the
//! visits system `v = Aᵀ·v + b` is of the same non-negative kind as reachability, so every
//! method (including exact and sound interval iteration) applies. The long-run value of a state
//! is `Σ_B P(reach B)·(π_B · values|_B)`, a reachability-style system over the transient states.

use crate::exact;
use crate::graph;
use crate::linear::{self, Problem};
use crate::numeric::{Result, Solution, SolveOptions, SolverError};
use crate::reach::{assemble, backward_within, Rewards};
use augur_dtmc::{Matrix, StateSet};
use num_rational::BigRational;
use num_traits::Zero;

/// The submatrix of `m` on `states` (sorted increasingly), with local indices, and its exact
/// entries when given. `local` is a scratch map from global to local ids, all `u32::MAX` on
/// entry and on exit.
fn submatrix(
    m: &Matrix,
    exact: Option<&[BigRational]>,
    states: &[u32],
    local: &mut [u32],
) -> Result<(Matrix, Option<Vec<BigRational>>)> {
    for (i, &s) in states.iter().enumerate() {
        local[s as usize] = i as u32;
    }
    let (ptr, idx, val) = graph::raw(m);
    let mut indptr = Vec::with_capacity(states.len() + 1);
    let mut indices = Vec::new();
    let mut data = Vec::new();
    let mut ex = exact.map(|_| Vec::new());
    indptr.push(0u32);
    for &s in states {
        let s = s as usize;
        for e in ptr[s] as usize..ptr[s + 1] as usize {
            let l = local[idx[e] as usize];
            if l != u32::MAX {
                indices.push(l);
                data.push(val[e]);
                if let (Some(v), Some(x)) = (ex.as_mut(), exact) {
                    v.push(x[e].clone());
                }
            }
        }
        indptr.push(indices.len() as u32);
    }
    for &s in states {
        local[s as usize] = u32::MAX;
    }
    let k = states.len();
    let sub = Matrix::try_new((k, k), indptr, indices, data)
        .map_err(|e| SolverError::Unsupported(format!("submatrix: {}", e.3)))?;
    Ok((sub, ex))
}

/// The long-run value of one bottom SCC: `g = π · values|_B`, with bounds and optionally exact.
struct BsccValue {
    value: f64,
    lo: f64,
    hi: f64,
    exact: Option<BigRational>,
    sound: bool,
    method: String,
}

fn bscc_value(
    transpose: &Matrix,
    exact_t: Option<&[BigRational]>,
    bscc: &[u32],
    values: &[f64],
    values_exact: Option<&[BigRational]>,
    local: &mut [u32],
    opts: &SolveOptions,
) -> Result<BsccValue> {
    // The exact value of state `s`: the caller's rational, else the double's own.
    let q = |s: u32| match values_exact {
        Some(q) => q[s as usize].clone(),
        None => exact::rat(values[s as usize]),
    };
    if bscc.len() == 1 {
        let v = values[bscc[0] as usize];
        return Ok(BsccValue {
            value: v,
            lo: v,
            hi: v,
            exact: match values_exact {
                Some(_) => Some(q(bscc[0])),
                None => exact::to_rational(v),
            },
            sound: true,
            method: "single state".into(),
        });
    }
    // Visits system on the transpose restricted to B, reference state = local 0.
    let (sub_t, sub_exact) = submatrix(transpose, exact_t, bscc, local)?;
    let k = bscc.len();
    let mut known = vec![0.0; k];
    known[0] = 1.0;
    let known_exact: Option<Vec<BigRational>> = sub_exact.as_ref().map(|_| {
        let mut v = vec![BigRational::zero(); k];
        v[0] = exact::rat(1.0);
        v
    });
    let problem = Problem {
        matrix: &sub_t,
        exact: sub_exact.as_deref(),
        unknowns: (1..k as u32).collect(),
        constant: vec![0.0; k - 1],
        known: &known,
        known_exact: known_exact.as_deref(),
        constant_exact: None,
        lower: 0.0,
        upper: None,
    };
    let solved = linear::solve(&problem, opts)?;
    let vals: Vec<f64> = bscc.iter().map(|&s| values[s as usize]).collect();
    if let Some(x) = &solved.exact {
        let mut num = q(bscc[0]);
        let mut den = exact::rat(1.0);
        for (i, v) in x.iter().enumerate() {
            num += v * q(bscc[i + 1]);
            den += v;
        }
        let g = num / den;
        let (lo, hi) = exact::to_f64_bounds(&g);
        return Ok(BsccValue {
            value: exact::to_f64(&g),
            lo,
            hi,
            exact: Some(g),
            sound: true,
            method: solved.method,
        });
    }
    // Float: g = Σ v_s·val_s / Σ v_s, with v_r = 1.
    let ratio = |v: &[f64]| {
        let mut num = vals[0];
        let mut den = 1.0;
        for (i, x) in v.iter().enumerate() {
            num += x * vals[i + 1];
            den += x;
        }
        (num, den)
    };
    let (num, den) = ratio(&solved.values);
    let value = num / den;
    let (lo, hi, sound) = match &solved.bounds {
        Some((l, h)) => {
            // values ≥ 0 here (shifted by the caller), so g ≥ Σ l·val / Σ h and ≤ Σ h·val / Σ l.
            let (nl, dl) = ratio(l);
            let (nh, dh) = ratio(h);
            (nl / dh, nh / dl, true)
        }
        None => (value, value, false),
    };
    Ok(BsccValue {
        value,
        lo,
        hi,
        exact: None,
        sound,
        method: solved.method,
    })
}

/// Long-run average of `values` for every state: `Σ_B P(reach B)·(π_B · values|_B)` over the
/// bottom SCCs `B`, with `π_B` the stationary distribution of `B`.
///
/// With `values` the indicator of a set φ this is PRISM's `S=? [φ]`; with the expected one-step
/// rewards it is `R=? [S]`. `transpose` is the transpose of `matrix`, `exact` the optional
/// exact transition probabilities aligned with `matrix.data()`. Bounds are reported when the
/// method is sound (for a BSCC solved by interval iteration, `π` is bounded by the visits'
/// bounds; the transient part's bounds are widened by the largest BSCC-value uncertainty).
/// The exact method solves with the values' exact rationals when [`Rewards`] has them.
pub fn long_run_average<'a>(
    matrix: &Matrix,
    transpose: &Matrix,
    exact: Option<&[BigRational]>,
    values: impl Into<Rewards<'a>>,
    opts: &SolveOptions,
) -> Result<Solution> {
    let Rewards {
        values,
        exact: values_exact,
    } = values.into();
    let n = matrix.rows();
    if values_exact.is_some_and(|q| q.len() != n) {
        return Err(SolverError::Unsupported(format!(
            "exact values: {} entries for {n} states",
            values_exact.map_or(0, |q| q.len())
        )));
    }
    if matrix.cols() != n || transpose.rows() != n || transpose.cols() != n {
        return Err(SolverError::Unsupported(
            "matrix and transpose must be square and of the same size".into(),
        ));
    }
    if values.len() != n {
        return Err(SolverError::Unsupported(format!(
            "{} values for {n} states",
            values.len()
        )));
    }
    if let Some((s, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(SolverError::Unsupported(format!(
            "value of state {s} is {v}, must be finite"
        )));
    }
    if let Some(e) = exact {
        if e.len() != matrix.nnz() {
            return Err(SolverError::Unsupported(format!(
                "{} exact probabilities for {} transitions",
                e.len(),
                matrix.nnz()
            )));
        }
    }
    if n == 0 {
        return Ok(Solution {
            values: vec![],
            bounds: Some((vec![], vec![])),
            method: "empty model".into(),
            exact: Some(vec![]),
        });
    }
    // Shift to non-negative values (the reach probabilities of the BSCCs sum to 1 in every
    // state, so the shift is undone by adding it back).
    let shift = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(0.0);
    let shifted: Vec<f64> = values.iter().map(|v| v - shift).collect();
    let shifted_exact: Option<Vec<BigRational>> = values_exact.map(|q| {
        let sq = exact::rat(shift);
        q.iter().map(|v| v - &sq).collect()
    });
    // Exact entries of the transpose, aligned with its data (needed for exact BSCC solves).
    let exact_t: Option<Vec<BigRational>> = match exact {
        Some(ex) => {
            // Transpose a matrix of entry positions to map each transpose entry to its source.
            let pos: Vec<f64> = (0..matrix.nnz()).map(|e| e as f64).collect();
            let pm = Matrix::try_new(
                (n, n),
                matrix.indptr().raw_storage().to_vec(),
                matrix.indices().to_vec(),
                pos,
            )
            .map_err(|e| SolverError::Unsupported(format!("matrix: {}", e.3)))?;
            let pt = graph::transpose(&pm);
            Some(pt.data().iter().map(|&p| ex[p as usize].clone()).collect())
        }
        None => None,
    };
    let sccs = graph::scc(matrix);
    let bsccs = graph::bsccs_of(matrix, &sccs);
    let mut local = vec![u32::MAX; n];
    let mut known = vec![0.0; n];
    let mut known_exact: Option<Vec<BigRational>> = Some(vec![BigRational::zero(); n]);
    let mut in_bscc = StateSet::with_capacity(n);
    let mut positive = StateSet::with_capacity(n);
    let mut all_sound = true;
    let mut widen_lo: f64 = 0.0;
    let mut widen_hi: f64 = 0.0;
    let mut g_hi = vec![0.0; n];
    let mut g_lo = vec![0.0; n];
    let mut bscc_methods: Vec<String> = Vec::new();
    for b in &bsccs {
        let g = bscc_value(
            transpose,
            exact_t.as_deref(),
            b,
            &shifted,
            shifted_exact.as_deref(),
            &mut local,
            opts,
        )?;
        all_sound &= g.sound;
        widen_lo = widen_lo.max(g.value - g.lo);
        widen_hi = widen_hi.max(g.hi - g.value);
        if b.len() > 1 && !bscc_methods.contains(&g.method) && bscc_methods.len() < 3 {
            bscc_methods.push(g.method.clone());
        }
        for &s in b {
            let s = s as usize;
            in_bscc.insert(s);
            known[s] = g.value;
            g_lo[s] = g.lo;
            g_hi[s] = g.hi;
            if g.value > 0.0 || g.hi > 0.0 {
                positive.insert(s);
            }
        }
        match (&mut known_exact, g.exact) {
            (Some(ke), Some(q)) => {
                for &s in b {
                    ke[s as usize] = q.clone();
                }
            }
            _ => known_exact = None,
        }
    }
    // Transient states that can reach a BSCC with a positive value.
    let mut transient = StateSet::with_capacity(n);
    transient.insert_range(..);
    transient.difference_with(&in_bscc);
    let mut reach_pos = backward_within(transpose, &positive, &{
        let mut w = transient.clone();
        w.union_with(&positive);
        w
    });
    reach_pos.difference_with(&in_bscc);
    let unknowns: Vec<u32> = reach_pos.ones().map(|s| s as u32).collect();
    let upper = known.iter().copied().fold(0.0, f64::max);
    let problem = Problem {
        matrix,
        exact,
        constant: vec![0.0; unknowns.len()],
        unknowns,
        known: &known,
        known_exact: known_exact.as_deref(),
        constant_exact: None,
        lower: 0.0,
        upper: Some(upper),
    };
    let solved = linear::solve(&problem, opts)?;
    let unknowns = problem.unknowns;
    let bscc_note = if bscc_methods.is_empty() {
        String::new()
    } else {
        format!("; stationary distributions: {}", bscc_methods.join(", "))
    };
    let method = format!(
        "{} BSCCs; transient part: {}{}",
        bsccs.len(),
        solved.method,
        bscc_note
    );
    let known_q = known_exact.clone();
    let mut sol = assemble(known, known_q.as_deref(), &unknowns, solved);
    if known_exact.is_none() {
        // The BSCC values were not exact: neither is what was solved from them.
        sol.exact = None;
    }
    sol.method = method;
    if !all_sound {
        sol.bounds = None;
    }
    if let Some((lo, hi)) = &mut sol.bounds {
        for s in 0..n {
            if in_bscc.contains(s) {
                lo[s] = g_lo[s];
                hi[s] = g_hi[s];
            } else if reach_pos.contains(s) {
                lo[s] -= widen_lo;
                hi[s] += widen_hi;
            }
        }
    }
    if shift != 0.0 {
        for v in sol.values.iter_mut() {
            *v += shift;
        }
        let q = exact::rat(shift);
        for v in sol.exact.iter_mut().flatten().flatten() {
            *v += &q;
        }
        if let Some((lo, hi)) = &mut sol.bounds {
            for v in lo.iter_mut().chain(hi.iter_mut()) {
                *v += shift;
            }
        }
    }
    Ok(sol)
}
