//! Fixtures shared by the checker's unit tests: models whose variable `s` is the state index,
//! random interval DTMCs, and the values of a property in every state.

use crate::result::{NumValues, StateValues};
use crate::{CheckOptions, CheckSession, Method};
use augur_dtmc::{Dtmc, Matrix, Valuations};
use augur_expr::{Type, Value};
use augur_pctl::BigRational;
use proptest::prelude::*;

/// The DTMC of `matrix`, starting in state 0, whose single variable `s` equals the state
/// index.
pub(super) fn indexed(matrix: Matrix) -> Dtmc {
    let n = matrix.rows();
    Dtmc {
        matrix,
        initial: vec![0],
        labels: vec![],
        rewards: vec![],
        valuations: Some(Valuations::new(
            vec!["s".into()],
            vec![Type::Int],
            (0..n as i64).map(Value::Int).collect(),
        )),
        exact: None,
        intervals: None,
    }
}

/// A random interval DTMC on `n` states with bounds in sixteenths (so the decimals written
/// and the doubles are the same rationals). Row `s` goes to the states of `mask[s]` (itself
/// when empty) with a point `c/16` (every `c ≥ 1`, `Σc = 16`: `units` hands out the 16 − m
/// spare sixteenths), widened to `[c − down, c + up] / 16` within `[0, 1]`.
pub(super) fn random_idtmc(n: usize, mask: &[bool], units: &[u8], down: &[u8], up: &[u8]) -> Dtmc {
    random_idtmc_with(n, mask, units, down, up, |_, _, lo, hi| (lo, hi))
}

/// [`random_idtmc`] with each interval `[lo, hi]` of `s → t` replaced by
/// `change(s, t, lo, hi)` before the model is built.
pub(super) fn random_idtmc_with(
    n: usize,
    mask: &[bool],
    units: &[u8],
    down: &[u8],
    up: &[u8],
    change: impl Fn(usize, usize, f64, f64) -> (f64, f64),
) -> Dtmc {
    let mut tri = sprs::TriMatI::<f64, u32>::new((n, n));
    let mut entries = Vec::new();
    for s in 0..n {
        let mut succ: Vec<usize> = (0..n).filter(|&t| mask[s * n + t]).collect();
        if succ.is_empty() {
            succ.push(s);
        }
        let m = succ.len();
        let mut c = vec![1u32; m];
        for &u in units[s * 16..s * 16 + 16 - m].iter() {
            c[u as usize % m] += 1;
        }
        for (i, &t) in succ.iter().enumerate() {
            let k = s * n + t;
            let lo = c[i].saturating_sub(u32::from(down[k])) as f64 / 16.0;
            let hi = (c[i] + u32::from(up[k])).min(16) as f64 / 16.0;
            tri.add_triplet(s, t, f64::from(c[i]) / 16.0);
            let (lo, hi) = change(s, t, lo, hi);
            entries.push((s as u32, t as u32, lo, hi));
        }
    }
    Dtmc::from_interval_entries(indexed(tri.to_csr()), entries).expect("valid intervals")
}

/// [`random_idtmc`] on `n` states with point intervals, and one more state `n`, unreachable
/// from the others, that goes to 0 (15/16: the spare units all go to the first successor) and
/// to itself (1/16), widened by 4/16 both ways within `[0, 1]`: a proper interval, so that the
/// robust paths run.
pub(super) fn points_and_one_interval(n: usize, mask: &[bool], units: &[u8]) -> Dtmc {
    let zeros = vec![0u8; (n + 1) * (n + 1)];
    let mut mask2 = vec![false; (n + 1) * (n + 1)];
    for s in 0..n {
        for t in 0..n {
            mask2[s * (n + 1) + t] = mask[s * n + t];
        }
    }
    mask2[n * (n + 1) + n] = true;
    mask2[n * (n + 1)] = true;
    let mut units2 = units.to_vec();
    units2.extend(std::iter::repeat_n(0u8, 16));
    let (mut up2, mut down2) = (zeros.clone(), zeros);
    for k in [n * (n + 1), n * (n + 1) + n] {
        up2[k] = 4;
        down2[k] = 4;
    }
    random_idtmc(n + 1, &mask2, &units2, &down2, &up2)
}

/// The arguments of [`random_idtmc`] for 2 to 5 states, and a goal state.
pub(super) fn arb() -> impl Strategy<Value = (usize, Vec<bool>, Vec<u8>, Vec<u8>, Vec<u8>, usize)> {
    (2usize..6).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec(prop::bool::weighted(0.45), n * n),
            proptest::collection::vec(any::<u8>(), n * 16),
            proptest::collection::vec(0u8..4, n * n),
            proptest::collection::vec(0u8..4, n * n),
            0..n,
        )
    })
}

/// The values of `prop` in every state with `method`.
pub(super) fn values(d: &Dtmc, prop: &str, method: Method) -> NumValues {
    let opts = CheckOptions {
        method,
        ..CheckOptions::default()
    };
    let r = CheckSession::for_dtmc(d, opts)
        .check_str(prop)
        .unwrap_or_else(|e| panic!("{prop}: {}", e.diagnostic()));
    match r.states {
        StateValues::Num(v) => v,
        StateValues::Bool(_) => panic!("{prop}: a number expected"),
    }
}

/// The exact values of `prop` in every state, all finite.
pub(super) fn exact_finite(d: &Dtmc, prop: &str) -> Vec<BigRational> {
    values(d, prop, Method::Exact)
        .exact
        .expect("exact rationals")
        .into_iter()
        .map(|q| q.expect("finite"))
        .collect()
}

/// The default method's bounds of `prop` in every state (its values when it has none).
pub(super) fn bounds(d: &Dtmc, prop: &str) -> (Vec<f64>, Vec<f64>) {
    let v = values(d, prop, Method::Auto);
    v.bounds.unwrap_or((v.values.clone(), v.values))
}
