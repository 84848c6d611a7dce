//! Interval DTMCs (IDTMCs): every transition probability lies in an interval `[lo, hi]` and
//! nature picks, anew at every step, a distribution within the intervals (an interval MDP with
//! one action per state, as in PRISM 4.8 and Storm).
//!
//! An interval model is a [`Dtmc`] whose [`Dtmc::intervals`] is set: the CSR pattern of its
//! matrix holds every transition some resolution can take, the matrix's values are one
//! resolution (a point inside every row's polytope, so every [`Dtmc`] invariant holds and
//! labels, rewards, valuations and state names are those of a DTMC), and [`Intervals`] holds
//! `lo` and `hi`, aligned with `matrix.data()`. Models without intervals have
//! `intervals: None` and are untouched.

use crate::{Dtmc, Matrix};
use serde::{Deserialize, Serialize};

/// Tolerance of the interval checks (`lo ≤ hi`, bounds in `[0, 1]`, `Σlo ≤ 1 ≤ Σhi`).
/// A row it accepts but that holds no distribution as written (`Σhi < 1` or `Σlo > 1`) is
/// normalised on reading ([`Dtmc::from_interval_bounds`], counted in
/// [`Intervals::normalised`]) so that no later decision depends on it: see
/// [`INTERVAL_ROUNDING`].
pub const INTERVAL_TOLERANCE: f64 = 1e-9;

/// Rounding slack of the float decisions on the (normalised) *row sums* of an interval model:
/// a row can keep all its mass inside a set `C` when the transitions leaving `C` have
/// `lo = 0` and those inside `Σhi ≥ 1 − INTERVAL_ROUNDING` (a float sum of decimals that add
/// up to 1 may fall short of 1 by a few ulps). It covers rounding only, not
/// [`INTERVAL_TOLERANCE`]: the reading normalises a row with `Σhi < 1` (`Σlo > 1`) within the
/// tolerance by scaling its upper (lower) bounds to sum to 1, which only widens the intervals
/// of a row that would otherwise hold no distribution and keeps every bound's sign (a bound
/// above 0 stays above 0, one of 0 stays 0), so that no edge and no qualitative answer (zero
/// or one) changes. A positive lower bound is kept as written, **whatever its size** (issue 39): it
/// is an exit nature cannot avoid, an edge of every graph decision (`[1e-13, 1]` can make
/// `Pmin` 1 rather than 0). Without the scaling, a row whose upper bounds sum to
/// `1 − 5·10⁻¹⁰` would be accepted as full but not be able to keep its mass anywhere (an end
/// component missed: `Pmin > Pmax` for LTL). A tiny positive lower bound inside a loop can
/// make the robust iteration leak too slowly to converge: that is an error naming the sweep
/// limit, never another model's value; `--method exact` reads the bounds as written (or
/// computed in rationals) and decides exactly.
pub const INTERVAL_ROUNDING: f64 = 1e-12;

/// The interval bounds of an interval DTMC's transitions, aligned with the stored entries of
/// [`Dtmc::matrix`] (`lo[i] ≤ matrix.data()[i] ≤ hi[i]`).
///
/// Invariants (established by [`Dtmc::from_interval_bounds`]): `0 ≤ lo ≤ hi ≤ 1`, `hi > 0`
/// for every stored entry, and the bounds are *tight*: each `lo[i]` and `hi[i]` is attained by
/// some distribution of the row (`lo[i] ≥ 1 − Σ_{j≠i} hi[j]`, `hi[i] ≤ 1 − Σ_{j≠i} lo[j]`).
/// Tightness lets graph algorithms read an entry with `lo > 0` as an edge nature cannot remove.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Intervals {
    /// Lower bounds, one per stored transition.
    pub lo: Vec<f64>,
    /// Upper bounds, one per stored transition.
    pub hi: Vec<f64>,
    /// The exact bounds, when the source was read exactly (a PRISM model built under
    /// `--method exact`: `[1/3, 2/3]` is 1/3..2/3); `None` means each bound is the decimal its
    /// double prints as (explicit files: the decimals as written).
    #[serde(skip)]
    pub exact: Option<Box<ExactIntervals>>,
    /// The bounds as read (clamped to `[0, 1]`, before tightening), aligned with `lo`, when
    /// tightening changed some bound (`None`: `lo` and `hi` are as read). Exact mode reads
    /// them as the decimals written: the tightened `1 − 0.1` is 0.8999999999999999, not 9/10.
    #[serde(skip)]
    pub written: Option<Box<(Vec<f64>, Vec<f64>)>>,
    /// What the reading changed within the load tolerance (see [`INTERVAL_ROUNDING`]):
    /// `None` when every row holds a distribution as written. The checker reports it in the
    /// method and the JSON of every result of a float method (which check the normalised
    /// bounds; `--method exact` reads the bounds as written).
    #[serde(skip)]
    pub normalised: Option<Normalised>,
}

/// The rows of an interval model that the reading normalised ([`Intervals::normalised`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Normalised {
    /// Rows whose bounds were scaled to sum to 1 (`Σhi < 1` or `Σlo > 1` within
    /// [`INTERVAL_TOLERANCE`]).
    pub rows: u32,
    /// The first state (in state order) with a scaled row.
    pub first_state: u32,
}

/// The exact `[lo, hi]` of every stored transition, aligned with [`Intervals::lo`] (as read,
/// not tightened).
#[derive(Clone, Debug, PartialEq)]
pub struct ExactIntervals {
    /// Exact lower bounds.
    pub lo: Vec<num_rational::BigRational>,
    /// Exact upper bounds.
    pub hi: Vec<num_rational::BigRational>,
}

/// A row of interval bounds that cannot hold a probability distribution, or a bad bound.
#[derive(Clone, Debug, PartialEq)]
pub enum IntervalProblem {
    /// `lo > hi`, or a bound outside `[0, 1]` (or not finite) on transition `entry` of `state`.
    Bound {
        /// Source state.
        state: u32,
        /// Target state.
        target: u32,
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// `Σlo > 1` or `Σhi < 1`: no distribution of the row lies within the intervals.
    Row {
        /// The state.
        state: u32,
        /// Sum of the lower bounds.
        sum_lo: f64,
        /// Sum of the upper bounds.
        sum_hi: f64,
    },
}

impl IntervalProblem {
    /// The state whose row has the problem.
    pub fn state(&self) -> u32 {
        match *self {
            IntervalProblem::Bound { state, .. } | IntervalProblem::Row { state, .. } => state,
        }
    }

    /// The problem in words, naming the state as `describe` writes it (e.g. its valuation).
    pub fn message(&self, describe: &dyn Fn(u32) -> String) -> String {
        match *self {
            IntervalProblem::Bound {
                state,
                target,
                lo,
                hi,
            } => {
                let what = if !(lo.is_finite() && hi.is_finite()) {
                    "is not a pair of finite numbers"
                } else if lo > hi {
                    "has lo > hi"
                } else {
                    "is not within [0, 1]"
                };
                format!(
                    "interval [{lo}, {hi}] of transition {} -> {} {what}",
                    describe(state),
                    describe(target)
                )
            }
            IntervalProblem::Row {
                state,
                sum_lo,
                sum_hi,
            } => {
                let why = if sum_lo > 1.0 {
                    format!("the lower bounds sum to {sum_lo} > 1")
                } else {
                    format!("the upper bounds sum to {sum_hi} < 1")
                };
                format!(
                    "the intervals of state {} cannot hold a probability distribution: {why}",
                    describe(state)
                )
            }
        }
    }
}

/// Checks the sums of the bounds of `state`'s row: `Σlo ≤ 1 ≤ Σhi` within
/// [`INTERVAL_TOLERANCE`], else [`IntervalProblem::Row`].
pub fn check_row_sums(state: u32, sum_lo: f64, sum_hi: f64) -> Result<(), IntervalProblem> {
    if sum_lo > 1.0 + INTERVAL_TOLERANCE || sum_hi < 1.0 - INTERVAL_TOLERANCE {
        return Err(IntervalProblem::Row {
            state,
            sum_lo,
            sum_hi,
        });
    }
    Ok(())
}

/// The `t ∈ [0, 1]` of one resolution `lo + t·(hi − lo)` of a row whose bounds sum to
/// `sum_lo`, `sum_hi` (checked by [`check_row_sums`]): the resolution the readers store as
/// the chain's probabilities.
pub fn row_resolution(state: u32, sum_lo: f64, sum_hi: f64) -> Result<f64, IntervalProblem> {
    check_row_sums(state, sum_lo, sum_hi)?;
    Ok(if sum_hi > sum_lo {
        ((1.0 - sum_lo) / (sum_hi - sum_lo)).clamp(0.0, 1.0)
    } else {
        0.0
    })
}

/// Checks one interval bound: finite, `0 ≤ lo ≤ hi ≤ 1` within [`INTERVAL_TOLERANCE`].
pub fn interval_ok(lo: f64, hi: f64) -> bool {
    lo.is_finite()
        && hi.is_finite()
        && lo >= -INTERVAL_TOLERANCE
        && hi <= 1.0 + INTERVAL_TOLERANCE
        && lo <= hi + INTERVAL_TOLERANCE
}

impl Dtmc {
    /// Whether this is an interval model.
    pub fn is_interval(&self) -> bool {
        self.intervals.is_some()
    }

    /// [`Dtmc::from_interval_bounds`] from interval entries `(src, dst, lo, hi)` as a file lists
    /// them: a row with entries takes its bounds from them only (entries of the same
    /// transition add up), a row without keeps its matrix values as point intervals.
    pub fn from_interval_entries(
        skeleton: Dtmc,
        entries: impl IntoIterator<Item = (u32, u32, f64, f64)>,
    ) -> Result<Dtmc, IntervalProblem> {
        let (mut lo, mut hi) = (
            skeleton.matrix.data().to_vec(),
            skeleton.matrix.data().to_vec(),
        );
        let mut cleared = vec![false; skeleton.num_states()];
        for (s, d, l, h) in entries {
            if !cleared[s as usize] {
                cleared[s as usize] = true;
                for k in skeleton.row_range(s as usize) {
                    lo[k] = 0.0;
                    hi[k] = 0.0;
                }
            }
            if let Some(k) = skeleton.transition_index(s, d) {
                lo[k] += l;
                hi[k] += h;
            }
        }
        Dtmc::from_interval_bounds(skeleton, lo, hi)
    }

    /// Turns `skeleton` (whose matrix holds the transitions, values ignored) into an interval
    /// model with the bounds `lo`, `hi` aligned with `skeleton.matrix.data()`: checks every
    /// bound and row, tightens the bounds, drops the transitions no resolution can take
    /// (tight `hi = 0`, with their transition rewards) and stores as the matrix's values the
    /// resolution `lo + t·(hi − lo)` with one `t ∈ [0, 1]` per row (positive exactly on the
    /// transitions some resolution takes). `skeleton.exact` is dropped.
    pub fn from_interval_bounds(
        mut skeleton: Dtmc,
        lo: Vec<f64>,
        hi: Vec<f64>,
    ) -> Result<Dtmc, IntervalProblem> {
        let n = skeleton.num_states();
        let ptr: Vec<u32> = skeleton.row_ptr().to_vec();
        let indices: Vec<u32> = skeleton.matrix.indices().to_vec();
        assert_eq!(lo.len(), indices.len(), "one lower bound per transition");
        assert_eq!(hi.len(), indices.len(), "one upper bound per transition");
        let mut keep = vec![true; indices.len()];
        let (mut tlo, mut thi, mut point) = (lo.clone(), hi.clone(), vec![0.0; indices.len()]);
        let (mut clo, mut chi) = (lo.clone(), hi.clone());
        let mut tightened = false;
        let mut normalised: Option<Normalised> = None;
        for s in 0..n {
            let r = ptr[s] as usize..ptr[s + 1] as usize;
            let (mut sum_lo, mut sum_hi) = (0.0, 0.0);
            for i in r.clone() {
                if !interval_ok(lo[i], hi[i]) {
                    return Err(IntervalProblem::Bound {
                        state: s as u32,
                        target: indices[i],
                        lo: lo[i],
                        hi: hi[i],
                    });
                }
                sum_lo += lo[i].max(0.0);
                sum_hi += hi[i].min(1.0);
            }
            check_row_sums(s as u32, sum_lo, sum_hi)?;
            // Normalised (see [`INTERVAL_ROUNDING`]): a row within the tolerance of full
            // (`Σhi < 1`) or of over-full (`Σlo > 1`) has both its bounds scaled to `Σhi = 1`
            // (`Σlo = 1`; a point stays a point, a bound keeps its sign), so that every later
            // decision on a row sum ("can the row keep its mass in this set?") needs only a
            // rounding slack. Every lower bound above 0 stays above 0: an edge nature cannot
            // remove. Only a scaling by more than rounding (decimals summing to
            // 0.9999999999999999) counts as a change to report.
            let scale = if sum_hi < 1.0 {
                1.0 / sum_hi
            } else if sum_lo > 1.0 {
                1.0 / sum_lo
            } else {
                1.0
            };
            let scaled = sum_hi < 1.0 - INTERVAL_ROUNDING || sum_lo > 1.0 + INTERVAL_ROUNDING;
            let (mut sum_lo, mut sum_hi) = (0.0, 0.0);
            for i in r.clone() {
                let l = lo[i].clamp(0.0, 1.0);
                let (l, h) = (l, hi[i].clamp(0.0, 1.0).max(l));
                (clo[i], chi[i]) = (l, h);
                // Scaling keeps a positive bound positive (a tiny one may not underflow to 0).
                let l = if l > 0.0 {
                    (l * scale).clamp(f64::MIN_POSITIVE, 1.0)
                } else {
                    0.0
                };
                let h = (h * scale).min(1.0).max(l);
                (tlo[i], thi[i]) = (l, h);
                sum_lo += l;
                sum_hi += h;
            }
            if scaled {
                let c = normalised.get_or_insert(Normalised {
                    rows: 0,
                    first_state: s as u32,
                });
                c.rows += 1;
            }
            for i in r.clone() {
                let (l, h) = (tlo[i], thi[i]);
                // Tightened only by more than rounding (1 − 0.8 is 0.19999999999999996: keep a
                // written 0.2).
                let l2 = l.max(1.0 - (sum_hi - h));
                let l2 = if l2 - l > INTERVAL_TOLERANCE { l2 } else { l };
                let h2 = h.min(1.0 - (sum_lo - l));
                let h2 = if h - h2 > INTERVAL_TOLERANCE { h2 } else { h };
                // Rounding may cross the two by an ulp; keep lo ≤ hi.
                let (l2, h2) = (l2.clamp(0.0, 1.0), h2.clamp(0.0, 1.0));
                tlo[i] = l2.min(h2);
                thi[i] = h2.max(l2.min(h2));
                tightened |= tlo[i] != clo[i] || thi[i] != chi[i];
            }
            let (sl, sh): (f64, f64) = r
                .clone()
                .fold((0.0, 0.0), |(a, b), i| (a + tlo[i], b + thi[i]));
            let t = if sh - sl > 0.0 {
                ((1.0 - sl) / (sh - sl)).clamp(0.0, 1.0)
            } else {
                0.0
            };
            for i in r.clone() {
                point[i] = tlo[i] + t * (thi[i] - tlo[i]);
                if thi[i] <= 0.0 || point[i] <= 0.0 {
                    keep[i] = false;
                }
            }
            // A row whose entries all vanished cannot happen (Σhi ≥ 1), but keep one entry
            // rather than break the matrix's invariant.
            if r.clone().all(|i| !keep[i]) {
                if let Some(i) = r.clone().max_by(|&a, &b| thi[a].total_cmp(&thi[b])) {
                    keep[i] = true;
                    point[i] = 1.0;
                    tlo[i] = 1.0;
                    thi[i] = 1.0;
                }
            }
        }
        // Drop the transitions no resolution takes.
        let mut new_ptr = Vec::with_capacity(n + 1);
        let (mut ni, mut nd, mut nlo, mut nhi) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut wlo, mut whi) = (Vec::new(), Vec::new());
        new_ptr.push(0u32);
        for s in 0..n {
            for i in ptr[s] as usize..ptr[s + 1] as usize {
                if keep[i] {
                    ni.push(indices[i]);
                    nd.push(point[i]);
                    nlo.push(tlo[i]);
                    nhi.push(thi[i]);
                    if tightened {
                        wlo.push(clo[i]);
                        whi.push(chi[i]);
                    }
                }
            }
            new_ptr.push(ni.len() as u32);
        }
        for rs in &mut skeleton.rewards {
            if let Some(t) = &mut rs.transition {
                let mut k = 0;
                t.retain(|_| {
                    k += 1;
                    keep[k - 1]
                });
            }
        }
        skeleton.matrix = Matrix::new((n, n), new_ptr, ni, nd);
        skeleton.exact = None;
        skeleton.intervals = Some(Box::new(Intervals {
            lo: nlo,
            hi: nhi,
            exact: None,
            written: tightened.then(|| Box::new((wlo, whi))),
            normalised,
        }));
        Ok(skeleton)
    }
}

/// The robust one-step value of a row: `opt_P Σ_j P(j)·w(j)` over the distributions `P` with
/// `lo ≤ P ≤ hi`, `ΣP = 1` (`maximise` chooses max or min). Solved exactly by the greedy
/// algorithm: every successor gets its `lo`, the remaining mass `1 − Σlo` goes to the best
/// (max) or worst (min) successors first, up to their `hi`. `order` is scratch space (reused
/// across rows: no allocation once it has grown to the widest row).
pub fn robust_row_value(
    lo: &[f64],
    hi: &[f64],
    w: &[f64],
    maximise: bool,
    order: &mut Vec<u32>,
) -> f64 {
    let k = lo.len();
    if k == 1 {
        return w[0];
    }
    let mut value = 0.0;
    let mut rest = 1.0;
    for j in 0..k {
        value += weighted(lo[j], w[j]);
        rest -= lo[j];
    }
    if rest <= 0.0 {
        return value;
    }
    order.clear();
    order.extend(0..k as u32);
    if maximise {
        order.sort_unstable_by(|&a, &b| w[b as usize].total_cmp(&w[a as usize]));
    } else {
        order.sort_unstable_by(|&a, &b| w[a as usize].total_cmp(&w[b as usize]));
    }
    distribute_rest(lo, hi, w, order, value, rest)
}

/// `p·w`, with a probability of 0 contributing 0 even when `w` is infinite (an infinite
/// reward nature gives no mass to; IEEE's 0·∞ would be NaN).
#[inline]
pub fn weighted(p: f64, w: f64) -> f64 {
    if p == 0.0 {
        0.0
    } else {
        p * w
    }
}

/// The greedy step of [`robust_row_value`]: given `value = Σ lo(j)·w(j)` and the mass
/// `rest = 1 − Σ lo` still to place, gives it to the successors in `order` (local indices,
/// best first) up to their `hi`, and returns the row's value.
#[inline]
pub fn distribute_rest(
    lo: &[f64],
    hi: &[f64],
    w: &[f64],
    order: &[u32],
    mut value: f64,
    mut rest: f64,
) -> f64 {
    for &j in order {
        let j = j as usize;
        let add = (hi[j] - lo[j]).min(rest);
        if add > 0.0 {
            value += add * w[j];
            rest -= add;
            if rest <= 0.0 {
                break;
            }
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_row_value_matches_closed_forms() {
        let mut scratch = Vec::new();
        // [0.1,0.2] to a (w=1), [0.8,0.9] to b (w=0): max puts 0.2 on a, min 0.1.
        let (lo, hi, w) = ([0.1, 0.8], [0.2, 0.9], [1.0, 0.0]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(close(
            robust_row_value(&lo, &hi, &w, true, &mut scratch),
            0.2
        ));
        assert!(close(
            robust_row_value(&lo, &hi, &w, false, &mut scratch),
            0.1
        ));
        // Three successors [0,0.5] each, values 3, 2, 1: max = 0.5·3 + 0.5·2, min = 0.5·1 + 0.5·2.
        let (lo, hi, w) = ([0.0; 3], [0.5; 3], [3.0, 2.0, 1.0]);
        assert_eq!(robust_row_value(&lo, &hi, &w, true, &mut scratch), 2.5);
        assert_eq!(robust_row_value(&lo, &hi, &w, false, &mut scratch), 1.5);
    }

    #[test]
    fn bounds_are_tightened_and_impossible_transitions_dropped() {
        let mut b = crate::DtmcBuilder::new(3);
        b.add_transition(0, 0, 0.2).unwrap();
        b.add_transition(0, 1, 0.4).unwrap();
        b.add_transition(0, 2, 0.4).unwrap();
        b.add_transition(1, 1, 1.0).unwrap();
        b.add_transition(2, 2, 1.0).unwrap();
        b.add_initial(0).unwrap();
        let (d, _) = b.build().unwrap();
        // Row 0: [0,0] -> 0 (dropped), [0,0.6] -> 1, [0,0.6] -> 2: tight lo = 0.4 on both.
        let lo = vec![0.0, 0.0, 0.0, 1.0, 1.0];
        let hi = vec![0.0, 0.6, 0.6, 1.0, 1.0];
        let m = Dtmc::from_interval_bounds(d.clone(), lo, hi).unwrap();
        let iv = m.intervals.as_ref().unwrap();
        assert_eq!(m.matrix.indices(), &[1, 2, 1, 2]);
        assert!((iv.lo[0] - 0.4).abs() < 1e-15 && (iv.hi[0] - 0.6).abs() < 1e-15);
        assert_eq!(m.matrix.data()[..2], [0.5, 0.5]);
        m.validate().unwrap();
        // Σlo > 1 and lo > hi are refused.
        let bad = Dtmc::from_interval_bounds(
            d.clone(),
            vec![0.0, 0.6, 0.6, 1.0, 1.0],
            vec![0.0, 1.0, 1.0, 1.0, 1.0],
        );
        assert!(matches!(bad, Err(IntervalProblem::Row { state: 0, .. })));
        let bad = Dtmc::from_interval_bounds(
            d,
            vec![0.0, 0.7, 0.3, 1.0, 1.0],
            vec![0.0, 0.6, 0.6, 1.0, 1.0],
        );
        assert!(matches!(
            bad,
            Err(IntervalProblem::Bound {
                state: 0,
                target: 1,
                ..
            })
        ));
    }

    #[test]
    fn rows_within_the_tolerance_are_normalised_on_reading() {
        let mut b = crate::DtmcBuilder::new(3);
        b.add_transition(0, 1, 0.5).unwrap();
        b.add_transition(0, 2, 0.5).unwrap();
        b.add_transition(1, 1, 1.0).unwrap();
        b.add_transition(2, 0, 0.5).unwrap();
        b.add_transition(2, 2, 0.5).unwrap();
        b.add_initial(0).unwrap();
        let (d, _) = b.build().unwrap();
        let residue = 0.1 * 3.0 - 0.3;
        assert!(residue > 0.0 && residue < 1e-16);
        // Row 0: a residue lower bound (kept: an edge, whatever its size); row 1: a loop
        // 5e-10 short of full; row 2: a point interval within the tolerance of 0 (kept: a
        // point stays a point).
        let lo = vec![residue, 0.0, 1.0 - 5e-10, 5e-10, 1.0 - 5e-10];
        let hi = vec![1.0, 1.0, 1.0 - 5e-10, 5e-10, 1.0];
        let m = Dtmc::from_interval_bounds(d, lo.clone(), hi.clone()).unwrap();
        let iv = m.intervals.as_ref().unwrap();
        assert_eq!(iv.lo[..3], [residue, 0.0, 1.0]);
        assert_eq!(iv.hi[..3], [1.0, 1.0, 1.0]);
        assert_eq!(iv.lo[3], 5e-10);
        // Every row can now be filled: Σhi ≥ 1 and Σlo ≤ 1 in doubles.
        for s in 0..3 {
            let r = m.row_range(s);
            assert!(iv.hi[r.clone()].iter().sum::<f64>() >= 1.0, "row {s}");
            assert!(iv.lo[r].iter().sum::<f64>() <= 1.0, "row {s}");
        }
        // The bounds as read are kept for `--method exact`.
        let written = iv.written.as_deref().expect("changed on reading");
        assert_eq!((written.0[0], written.1[2]), (lo[0], hi[2]));
        // Counted for the checker: row 1 (scaled); row 2 sums to 1 up to rounding.
        let want = Normalised {
            rows: 1,
            first_state: 1,
        };
        assert_eq!(iv.normalised, Some(want));
        m.validate().unwrap();
    }

    #[test]
    fn a_written_lower_bound_above_rounding_is_kept() {
        let mut b = crate::DtmcBuilder::new(3);
        for t in 0..3 {
            b.add_transition(0, t, 1.0 / 3.0).unwrap();
        }
        b.add_transition(1, 1, 1.0).unwrap();
        b.add_transition(2, 2, 1.0).unwrap();
        b.add_initial(0).unwrap();
        let (d, _) = b.build().unwrap();
        // Row 0: [0,1] to itself, [1e-10,1] to 1 and 2 (the only exits nature cannot avoid):
        // above the rounding slack, so kept as written, and nothing to report. Decimals that
        // sum to 1 only up to rounding (0.1 + 0.2 + 0.7) are no change either.
        for (lo, hi) in [
            (vec![0.0, 1e-10, 1e-10, 1.0, 1.0], vec![1.0; 5]),
            (vec![0.1, 0.2, 0.7, 1.0, 1.0], vec![0.1, 0.2, 0.7, 1.0, 1.0]),
        ] {
            let m = Dtmc::from_interval_bounds(d.clone(), lo.clone(), hi).unwrap();
            let iv = m.intervals.as_ref().unwrap();
            assert_eq!(iv.lo, lo);
            assert_eq!(iv.normalised, None);
        }
        // Row 0 with lower bounds of 1e-13, or of a double's smallest positive value: kept as
        // written (an edge whatever its size), nothing normalised.
        for tiny in [1e-13, f64::MIN_POSITIVE] {
            let m = Dtmc::from_interval_bounds(
                d.clone(),
                vec![0.0, tiny, tiny, 1.0, 1.0],
                vec![1.0; 5],
            )
            .unwrap();
            let iv = m.intervals.as_ref().unwrap();
            assert_eq!(iv.lo[..3], [0.0, tiny, tiny]);
            assert_eq!(iv.normalised, None);
        }
        // Scaling a row keeps a tiny positive lower bound positive.
        let m = Dtmc::from_interval_bounds(
            d,
            vec![0.0, f64::MIN_POSITIVE, 0.0, 1.0, 1.0],
            vec![0.5, 0.5 - 5e-10, 1e-300, 1.0, 1.0],
        )
        .unwrap();
        let iv = m.intervals.as_ref().unwrap();
        assert!(iv.lo[1] > 0.0, "{:?}", iv.lo);
        assert_eq!(iv.normalised.map(|n| n.rows), Some(1));
    }
}
