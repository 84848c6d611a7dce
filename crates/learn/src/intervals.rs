//! Learned interval DTMCs whose intervals hold, all at once, with a stated confidence
//! (`augur learn --intervals --confidence C`; docs/robust.md, "Learning with a guarantee").
//!
//! **The per-entry interval.** For a transition `s → j` observed `c` times in the `n`
//! departures from `s`, at level `δ_e`:
//!
//! ```text
//! I(c, n, δ_e) = { p ∈ [0, 1] : (n + 1) · C(n, c) · p^c · (1 − p)^(n − c) > δ_e }
//! ```
//!
//! an interval around `p̂ = c/n` (its left side is concave in `ln`, and at `p̂` it is ≥ 1 > δ_e);
//! `[0, 1]` when `n = 0`. With `c = 0` it is `[0, 1 − (δ_e/(n+1))^(1/n)]`.
//!
//! **Why it holds at a random n.** The departures from `s` are i.i.d. draws from the true row
//! `P(s, ·)` (the strong Markov property), so the indicators "the i-th departure from `s` goes
//! to `j`" are i.i.d. Bernoulli(p). `M_n = ∫₀¹ q^S(1−q)^(n−S) dq / (p^S (1−p)^(n−S)) =
//! 1 / ((n+1)·C(n,S)·p^S(1−p)^(n−S))` (S the successes among the first n) is the likelihood
//! ratio of the uniform mixture against the truth: a non-negative martingale with `M_0 = 1`.
//! Ville's inequality gives `P(∃ n : M_n ≥ 1/δ_e) ≤ δ_e`: the true `p` lies in `I(S_n, n, δ_e)`
//! for **every** n at once (Robbins' mixture confidence sequence), so in particular for the
//! number of departures the traces happen to contain, which depends on the draws themselves.
//! A fixed-n interval (Clopper–Pearson, Wilson, Hoeffding) is not valid at such a random n.
//!
//! **The union bound.** With `δ = 1 − confidence`, every estimated pair gets `δ_e = δ/K`, `K`
//! the number of estimated `(state, successor)` pairs: every state with at least two valid
//! successors `V(s)` counts `|V(s)|` pairs, or 1 when `|V(s)| = 2` (the two entries are
//! complements: `I(n − c, n, δ_e) = 1 − I(c, n, δ_e)`, one event). `K` is fixed by the
//! model's states and validity, not by the counts. Then every entry of every row holds its
//! true probability, simultaneously, with probability ≥ 1 − δ, and the true chain is one
//! resolution of the interval model: its `P` lies in `[Pmin, Pmax]`.
//!
//! **Rows.** A state with one valid successor gets `[1, 1]` (fixed by validity), a state with
//! none a self-loop `[1, 1]` (as the point learner makes it), a state never left `[0, 1]` on each
//! valid successor, a transition the learner knows to be impossible no entry (0). The rows are
//! valid IDTMC rows: `p̂` lies in every interval of an observed row, so `Σlo ≤ 1 ≤ Σhi`.
//!
//! ```
//! use augur_learn::intervals::entry_interval;
//! // 0 of 99: the upper bound is 1 − (δ/100)^(1/99).
//! let (lo, hi) = entry_interval(0, 99, 0.05);
//! assert_eq!(lo, 0.0);
//! assert!((hi - (1.0 - (0.05f64 / 100.0).powf(1.0 / 99.0))).abs() < 1e-12);
//! ```

use augur_dtmc::{Dtmc, Matrix};
use augur_formats::smoothing::{SmoothedRows, SuccessorSet};
use serde::Serialize;

use crate::error::{LearnError, Result};

/// The name of the method, as recorded in a learned model's metadata.
pub const INTERVAL_METHOD: &str = "beta-mixture-union";

/// Checks a confidence level: a number in (0, 1).
pub fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(LearnError::BadConfidence(confidence))
    }
}

/// `ln((n + 1) · C(n, c))`, through `ln Γ`.
fn ln_mixture_norm(c: u64, n: u64) -> f64 {
    let (c, n) = (c as f64, n as f64);
    (n + 1.0).ln() + libm::lgamma(n + 1.0) - libm::lgamma(c + 1.0) - libm::lgamma(n - c + 1.0)
}

/// The interval `I(c, n, δ)` of the module docs: every `p` with
/// `(n + 1)·C(n, c)·p^c·(1 − p)^(n − c) > δ`, outward-rounded (the endpoints are found by
/// bisection and the outer end of the last bracket is returned). `[0, 1]` when `n = 0`;
/// `c` is capped at `n`; `δ` must be in (0, 1).
pub fn entry_interval(c: u64, n: u64, delta: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let c = c.min(n);
    let norm = ln_mixture_norm(c, n) - delta.ln();
    let (cf, rf) = (c as f64, (n - c) as f64);
    // > 0 inside the interval.
    let g = |p: f64| {
        let a = if c == 0 { 0.0 } else { cf * p.ln() };
        let b = if c == n { 0.0 } else { rf * (-p).ln_1p() };
        norm + a + b
    };
    let p_hat = cf / n as f64;
    let lo = if c == 0 {
        0.0
    } else {
        // g(0) = −∞ < 0 < g(p̂).
        boundary(&g, p_hat, 0.0)
    };
    let hi = if c == n {
        1.0
    } else {
        boundary(&g, p_hat, 1.0)
    };
    (lo.min(p_hat), hi.max(p_hat))
}

/// Where `g > 0` ends between `inside` (`g > 0`) and `out` (`g ≤ 0`), by bisection to the
/// last representable midpoint: the last point found outside (a conservative end).
fn boundary(g: &dyn Fn(f64) -> f64, mut inside: f64, mut out: f64) -> f64 {
    for _ in 0..200 {
        let mid = 0.5 * (out + inside);
        if mid <= out.min(inside) || mid >= out.max(inside) {
            break;
        }
        if g(mid) > 0.0 {
            inside = mid;
        } else {
            out = mid;
        }
    }
    out
}

/// A learned interval model's rows: for each state, its transitions with `[lo, hi]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnedIntervals {
    /// The confidence level the intervals hold with, simultaneously.
    pub confidence: f64,
    /// `K`: the estimated `(state, successor)` pairs the error `1 − confidence` is split over.
    pub pairs: u64,
    /// `δ_e = (1 − confidence)/K`: each pair's level.
    pub entry_delta: f64,
    /// Row `i`'s transitions are `targets/lo/hi[indptr[i]..indptr[i + 1]]`, by target.
    pub indptr: Vec<u32>,
    /// The target of each transition.
    pub targets: Vec<u32>,
    /// Lower bounds.
    pub lo: Vec<f64>,
    /// Upper bounds.
    pub hi: Vec<f64>,
}

/// What [`LearnedIntervals`] records about itself in a learned model's metadata.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalsMetadata {
    /// The confidence level.
    pub confidence: f64,
    /// [`INTERVAL_METHOD`].
    pub method: &'static str,
    /// `K`.
    pub pairs: u64,
    /// `δ_e`.
    pub entry_delta: f64,
}

impl LearnedIntervals {
    /// The metadata of the intervals (recorded under `metadata.learned.intervals`).
    pub fn metadata(&self) -> IntervalsMetadata {
        IntervalsMetadata {
            confidence: self.confidence,
            method: INTERVAL_METHOD,
            pairs: self.pairs,
            entry_delta: self.entry_delta,
        }
    }

    /// The number of transitions.
    pub fn num_transitions(&self) -> usize {
        self.targets.len()
    }

    /// The interval model over `shell` (a chain of the same states whose labels, valuations
    /// and initial states are kept; its transitions are replaced): checked and tightened by
    /// [`Dtmc::from_interval_bounds`].
    pub fn to_dtmc(&self, mut shell: Dtmc) -> Result<Dtmc> {
        let n = self.indptr.len() - 1;
        shell.matrix = Matrix::try_new(
            (n, n),
            self.indptr.clone(),
            self.targets.clone(),
            self.hi.clone(),
        )
        .map_err(|(_, _, _, e)| LearnError::BadCounts(format!("matrix structure: {e}")))?;
        Dtmc::from_interval_bounds(shell, self.lo.clone(), self.hi.clone()).map_err(|p| {
            LearnError::BadCounts(format!(
                "learned intervals: {}",
                p.message(&|s| s.to_string())
            ))
        })
    }
}

/// The interval rows of a learned chain `rows` (its counts and valid successors) at
/// `confidence` (see the module docs); refused with [`LearnError::TooManyTransitions`] when
/// they would have more than `limit` transitions (counted first).
pub fn learn_intervals(
    rows: &SmoothedRows,
    confidence: f64,
    limit: usize,
) -> Result<LearnedIntervals> {
    check_confidence(confidence)?;
    let n = rows.num_states();
    let rule = rows.rule();
    let set = |i: usize| &rule.successor_sets[rule.successors[i] as usize];
    let mut transitions = 0u64;
    let mut pairs = 0u64;
    for i in 0..n {
        let k = set(i).len(n) as u64;
        transitions += k.max(1);
        pairs += match k {
            0 | 1 => 0,
            2 => 1,
            k => k,
        };
    }
    if transitions > limit as u64 || transitions > u64::from(u32::MAX) {
        return Err(LearnError::TooManyTransitions {
            transitions,
            states: n,
            limit,
        });
    }
    let entry_delta = (1.0 - confidence) / pairs.max(1) as f64;
    // The counts by row (sorted by row and target).
    let mut counts: Vec<(u32, u32, u64)> = rows.counts().collect();
    counts.sort_unstable();
    let mut out = LearnedIntervals {
        confidence,
        pairs,
        entry_delta,
        indptr: Vec::with_capacity(n + 1),
        targets: Vec::with_capacity(transitions as usize),
        lo: Vec::with_capacity(transitions as usize),
        hi: Vec::with_capacity(transitions as usize),
    };
    out.indptr.push(0);
    let mut at = 0usize;
    for i in 0..n {
        let start = at;
        while at < counts.len() && counts[at].0 as usize == i {
            at += 1;
        }
        let row = &counts[start..at];
        let total: u64 = row.iter().map(|t| t.2).sum();
        let successors: Vec<u32> = match set(i) {
            SuccessorSet::All => (0..n as u32).collect(),
            SuccessorSet::List(v) => v.clone(),
        };
        let mut push = |j: u32, lo: f64, hi: f64| {
            out.targets.push(j);
            out.lo.push(lo);
            out.hi.push(hi);
        };
        match successors.len() {
            0 => push(i as u32, 1.0, 1.0),
            1 => push(successors[0], 1.0, 1.0),
            _ if total == 0 => successors.iter().for_each(|&j| push(j, 0.0, 1.0)),
            _ => {
                // Every unobserved successor has the same interval: computed once.
                let unseen = entry_interval(0, total, entry_delta);
                let mut r = 0;
                for &j in &successors {
                    while r < row.len() && row[r].1 < j {
                        r += 1;
                    }
                    let (lo, hi) = match row.get(r) {
                        Some(&(_, t, c)) if t == j => entry_interval(c, total, entry_delta),
                        _ => unseen,
                    };
                    push(j, lo, hi);
                }
            }
        }
        out.indptr.push(out.targets.len() as u32);
    }
    Ok(out)
}

/// One state's part in the width `Pmax − Pmin` of a property on a learned interval model, for
/// [`predicted_width`] (`augur pac --width`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WidthState {
    /// The state.
    pub state: u32,
    /// Departures observed from it (`n_s`).
    pub departures: u64,
    /// Departures per trace so far (`n_s / traces`): what one more trace like the others
    /// adds, on average.
    pub per_trace: f64,
    /// Its contribution to the width: the width minus the width with its row made a point
    /// (its empirical frequencies; uniform when never left), both checked robustly.
    pub contribution: f64,
    /// The count of the row's widest interval (of `departures`), the one whose shrinking
    /// stands for the row's.
    pub widest_count: u64,
    /// The row's number of valid successors.
    pub successors: usize,
}

impl WidthState {
    /// The factor by which the row's widest interval shrinks with `more` departures (the
    /// frequency kept as observed; uniform over the successors when never left): its width
    /// at `departures + more` over its width now, both by [`entry_interval`] at `delta`.
    pub fn shrink(&self, more: f64, delta: f64) -> f64 {
        if more <= 0.0 {
            return 1.0;
        }
        let n = self.departures;
        let width = |c: u64, n: u64| {
            let (lo, hi) = entry_interval(c, n, delta);
            hi - lo
        };
        let p_hat = if n == 0 {
            1.0 / self.successors.max(1) as f64
        } else {
            self.widest_count as f64 / n as f64
        };
        let now = width(self.widest_count.min(n), n);
        let later_n = (n as f64 + more).min(u64::MAX as f64 / 2.0) as u64;
        let later = width((p_hat * later_n as f64).round() as u64, later_n);
        if now > 0.0 {
            (later / now).min(1.0)
        } else {
            1.0
        }
    }
}

/// The width predicted with `more[i]` more departures from `states[i]`: `current − Σ_s
/// contribution_s · (1 − shrink_s)`, each state's part shrinking as its widest interval does.
/// An estimate: it treats the contributions as additive (they interact through the values)
/// and keeps the observed frequencies.
pub fn predicted_width(current: f64, states: &[WidthState], more: &[f64], delta: f64) -> f64 {
    let gained: f64 = states
        .iter()
        .zip(more)
        .map(|(s, &m)| s.contribution.max(0.0) * (1.0 - s.shrink(m, delta)))
        .sum();
    (current - gained).max(0.0)
}

/// The fewest more traces like the observed ones (each adding `per_trace` departures to every
/// state, on average) after which [`predicted_width`] is at most `target`; `None` when not even
/// `max_traces` are predicted to do it (e.g. a state that matters is never visited).
pub fn traces_for_width(
    current: f64,
    target: f64,
    states: &[WidthState],
    delta: f64,
    max_traces: u64,
) -> Option<u64> {
    if current <= target {
        return Some(0);
    }
    let width_after = |t: u64| -> std::result::Result<f64, ()> {
        let more: Vec<f64> = states.iter().map(|s| s.per_trace * t as f64).collect();
        Ok(predicted_width(current, states, &more, delta))
    };
    fewest_traces(target, max_traces, 0.0, width_after).unwrap_or(None)
}

/// The fewest `t` in `1..=max_traces` with `width_after(t) ≤ target`, for a `width_after`
/// that does not grow with `t`: doubling, then bisection down to a relative `precision` of
/// `t` (0: exact). `None` when `width_after(max_traces)` is still above the target.
pub fn fewest_traces<E>(
    target: f64,
    max_traces: u64,
    precision: f64,
    mut width_after: impl FnMut(u64) -> std::result::Result<f64, E>,
) -> std::result::Result<Option<u64>, E> {
    let mut hi = 1u64;
    while width_after(hi)? > target {
        if hi >= max_traces {
            return Ok(None);
        }
        hi = hi.saturating_mul(2).min(max_traces);
    }
    let mut lo = hi / 2;
    // width_after(lo) > target (or lo = 0), width_after(hi) ≤ target.
    while hi - lo > 1 && (hi - lo) as f64 > precision * hi as f64 {
        let mid = lo + (hi - lo) / 2;
        if width_after(mid)? > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(hi))
}

/// More departures per state, each from traces started in that state, after which
/// [`predicted_width`] is at most `target`: greedily, a quarter more departures at a time to
/// the state where they shrink the width most per departure. `None` when not even
/// `max_total` departures are predicted to do it.
pub fn departures_for_width(
    current: f64,
    target: f64,
    states: &[WidthState],
    delta: f64,
    max_total: u64,
) -> Option<Vec<u64>> {
    let mut more = vec![0f64; states.len()];
    let mut total = 0f64;
    while predicted_width(current, states, &more, delta) > target {
        let mut best: Option<(usize, f64, f64)> = None;
        for (i, s) in states.iter().enumerate() {
            if s.contribution <= 0.0 {
                continue;
            }
            let step = ((s.departures as f64 + more[i]) / 4.0).ceil().max(4.0);
            let gain =
                s.contribution * (s.shrink(more[i], delta) - s.shrink(more[i] + step, delta));
            let rate = gain / step;
            if rate > 0.0 && best.is_none_or(|(_, r, _)| rate > r) {
                best = Some((i, rate, step));
            }
        }
        let (i, _, step) = best?;
        more[i] += step;
        total += step;
        if total > max_total as f64 {
            return None;
        }
    }
    Some(more.into_iter().map(|m| m as u64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use augur_formats::smoothing::{Smoothing, UnobservedRule};

    /// `(n+1)·C(n,c)·p^c(1−p)^(n−c)`, by a product of small factors (no ln Γ).
    fn mixture_ratio(c: u64, n: u64, p: f64) -> f64 {
        let mut v = (n + 1) as f64;
        for k in 0..c {
            v *= (n - k) as f64 / (k + 1) as f64 * p;
        }
        v * (1.0 - p).powi((n - c) as i32)
    }

    #[test]
    fn closed_forms_at_the_extremes() {
        // c = 0: (n+1)(1−p)^n = δ at p = 1 − (δ/(n+1))^(1/n); c = n: the mirror image.
        for (n, d) in [(1u64, 0.5), (10, 0.05), (1000, 1e-4), (123_456, 0.01)] {
            let want = 1.0 - (d / (n + 1) as f64).powf(1.0 / n as f64);
            let (lo, hi) = entry_interval(0, n, d);
            assert_eq!(lo, 0.0);
            assert!(
                (hi - want).abs() < 1e-12 * want.max(1e-3),
                "{n} {d}: {hi} {want}"
            );
            assert!(hi >= want - 1e-15, "outward");
            let (lo, hi) = entry_interval(n, n, d);
            assert_eq!(hi, 1.0);
            assert!((lo - (1.0 - want)).abs() < 1e-12, "{n} {d}");
        }
        assert_eq!(entry_interval(3, 0, 0.05), (0.0, 1.0));
    }

    #[test]
    fn endpoints_solve_the_defining_equation() {
        // The ratio, computed by a product instead of ln Γ, equals δ at both endpoints.
        for (c, n, d) in [
            (3u64, 10u64, 0.05),
            (17, 40, 0.001),
            (50, 100, 0.2),
            (1, 7, 0.3),
        ] {
            let (lo, hi) = entry_interval(c, n, d);
            let p_hat = c as f64 / n as f64;
            assert!(lo < p_hat && p_hat < hi);
            for p in [lo, hi] {
                let r = mixture_ratio(c, n, p);
                assert!((r / d - 1.0).abs() < 1e-9, "{c}/{n} at {p}: {r} vs {d}");
            }
            // Strictly inside: above δ.
            assert!(mixture_ratio(c, n, (lo + p_hat) / 2.0) > d);
            // Complements: I(n − c) = 1 − I(c).
            let (l2, h2) = entry_interval(n - c, n, d);
            assert!((l2 - (1.0 - hi)).abs() < 1e-12 && (h2 - (1.0 - lo)).abs() < 1e-12);
        }
    }

    #[test]
    fn wider_than_a_fixed_n_interval_and_shrinking_like_one_over_root_n() {
        // Anytime validity costs width against Wilson's fixed-n interval at the same level.
        let z = crate::learn::WILSON_Z95;
        for n in [100u64, 10_000, 1_000_000] {
            let c = n / 4;
            let (lo, hi) = entry_interval(c, n, 0.05);
            let (wl, wh) = crate::learn::wilson_interval(c, n, z);
            assert!(lo < wl && hi > wh, "{n}");
        }
        // Width × √n grows only like √(ln n).
        let w = |n: u64| {
            let (lo, hi) = entry_interval(n / 4, n, 0.05);
            (hi - lo) * (n as f64).sqrt()
        };
        let (a, b) = (w(10_000), w(1_000_000));
        assert!(b > a && b < 1.3 * a, "{a} {b}");
    }

    fn rows(
        n: usize,
        sets: Vec<SuccessorSet>,
        of: Vec<u32>,
        counts: &[(u32, u32, u64)],
    ) -> SmoothedRows {
        let rule = Smoothing {
            alpha: 0.0,
            unobserved: UnobservedRule::Uniform,
            successor_sets: sets,
            successors: of,
        };
        SmoothedRows::new(n, rule, counts).unwrap()
    }

    #[test]
    fn rows_by_kind_and_the_union_bound() {
        // State 0: valid {0, 1, 2}, seen 0→1 ×30, 0→2 ×10 (0→0 never).
        // State 1: valid {1, 2}, never left. State 2: valid {2} only. State 3: none.
        let sets = vec![
            SuccessorSet::List(vec![0, 1, 2]),
            SuccessorSet::List(vec![1, 2]),
            SuccessorSet::List(vec![2]),
            SuccessorSet::List(vec![]),
        ];
        let r = rows(4, sets, vec![0, 1, 2, 3], &[(0, 1, 30), (0, 2, 10)]);
        let iv = learn_intervals(&r, 0.9, 1000).unwrap();
        // K = 3 (state 0) + 1 (state 1, two successors).
        assert_eq!(iv.pairs, 4);
        assert!((iv.entry_delta - 0.1 / 4.0).abs() < 1e-15);
        assert_eq!(iv.indptr, vec![0, 3, 5, 6, 7]);
        assert_eq!(iv.targets, vec![0, 1, 2, 1, 2, 2, 3]);
        let d = iv.entry_delta;
        assert_eq!((iv.lo[0], iv.hi[0]), entry_interval(0, 40, d));
        assert_eq!((iv.lo[1], iv.hi[1]), entry_interval(30, 40, d));
        assert_eq!((iv.lo[2], iv.hi[2]), entry_interval(10, 40, d));
        assert_eq!(&iv.lo[3..], &[0.0, 0.0, 1.0, 1.0]);
        assert_eq!(&iv.hi[3..], &[1.0, 1.0, 1.0, 1.0]);
        // A valid interval model (Σlo ≤ 1 ≤ Σhi), the impossible 1→0 absent.
        let shell = Dtmc {
            matrix: Matrix::new((4, 4), vec![0; 5], vec![], vec![]),
            initial: vec![0],
            labels: vec![],
            rewards: vec![],
            valuations: None,
            exact: None,
            intervals: None,
        };
        let m = iv.to_dtmc(shell).unwrap();
        assert!(m.is_interval());
        assert!(m.transition_index(1, 0).is_none());
        assert!(learn_intervals(&r, 0.9, 6).is_err());
        for bad in [0.0, 1.0, -0.5, f64::NAN, 2.0] {
            assert!(matches!(
                learn_intervals(&r, bad, 1000),
                Err(LearnError::BadConfidence(_))
            ));
        }
    }

    fn state(departures: u64, widest: u64, per_trace: f64, contribution: f64) -> WidthState {
        WidthState {
            state: 0,
            departures,
            per_trace,
            contribution,
            widest_count: widest,
            successors: 2,
        }
    }

    #[test]
    fn width_predictions() {
        let d = 0.01;
        let s = state(100, 50, 2.0, 0.3);
        // The shrink factor is the ratio of entry widths, by hand from entry_interval.
        let w = |c, n| {
            let (lo, hi) = entry_interval(c, n, d);
            hi - lo
        };
        assert_eq!(s.shrink(0.0, d), 1.0);
        assert!((s.shrink(300.0, d) - w(200, 400) / w(50, 100)).abs() < 1e-12);
        // Four times the departures: about half the width (a little more: √ln n).
        let f = s.shrink(300.0, d);
        assert!(f > 0.5 && f < 0.6, "{f}");
        // One state: width 0.5 now, 0.3 of it this state's.
        let states = [s.clone()];
        let p = predicted_width(0.5, &states, &[300.0], d);
        assert!((p - (0.5 - 0.3 * (1.0 - f))).abs() < 1e-12);
        // 150 traces bring 300 departures: the smallest count that reaches p.
        let t = traces_for_width(0.5, p, &states, d, 1 << 40).unwrap();
        assert!(predicted_width(0.5, &states, &[2.0 * t as f64], d) <= p);
        assert!(predicted_width(0.5, &states, &[2.0 * (t - 1) as f64], d) > p);
        assert!((149..=150).contains(&t), "{t}");
        // The part not due to this state cannot go: 0.2 is out of reach.
        assert_eq!(traces_for_width(0.5, 0.19, &states, d, 1 << 40), None);
        assert_eq!(traces_for_width(0.5, 0.6, &states, d, 1 << 40), Some(0));
        // A state never visited by the traces: more traces do not help it.
        let never = [state(0, 0, 0.0, 0.4)];
        assert_eq!(traces_for_width(0.5, 0.2, &never, d, 1 << 40), None);
        // ... but departures from it (traces started there) do.
        let m = departures_for_width(0.5, 0.2, &never, d, 1 << 40).unwrap();
        assert!(predicted_width(0.5, &never, &[m[0] as f64], d) <= 0.2);
        // Targeted departures go where they help most: the state with the larger part.
        let two = [state(100, 50, 1.0, 0.05), state(100, 50, 1.0, 0.3)];
        let m = departures_for_width(0.4, 0.3, &two, d, 1 << 40).unwrap();
        assert!(m[1] > m[0], "{m:?}");
    }

    #[test]
    fn fewest_traces_by_doubling_and_bisection() {
        // width 1/√(1 + t/100): at most 0.25 from t = 1500 on.
        let w = |t: u64| -> Result<f64, ()> { Ok(1.0 / (1.0 + t as f64 / 100.0).sqrt()) };
        assert_eq!(fewest_traces(0.25, 1 << 40, 0.0, w), Ok(Some(1500)));
        // Within 1%: at most 1% above the fewest.
        let t = fewest_traces(0.25, 1 << 40, 0.01, w).unwrap().unwrap();
        assert!((1500..=1515).contains(&t), "{t}");
        assert_eq!(fewest_traces(0.25, 1000, 0.0, w), Ok(None));
        assert_eq!(fewest_traces(0.0, 1 << 40, 0.0, w), Ok(None));
        assert_eq!(fewest_traces(2.0, 10, 0.0, w), Ok(Some(1)));
    }
}
