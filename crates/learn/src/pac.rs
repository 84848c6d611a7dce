//! PAC sample-size bounds for learned DTMCs (Pro2Guard, after Chen et al. / Sun et al.).
//!
//! A state `p` with `n_p` observed outgoing transitions and empirical frequencies `p̂_pq` is
//! (ε, δ)-PAC when, for every successor `q`,
//!
//! ```text
//! n_p ≥ (2/ε²) · ln(2/δ') · (1/4 − (max(0, |1/2 − p̂_pq| − 2ε/3))²),     δ' = δ/m,
//! ```
//!
//! `m` the number of states. The right-hand side is largest for the `p̂` closest to 1/2, so that
//! successor binds. Edge cases, handled explicitly:
//! - `n_p = 0`: there is no `p̂`; the worst case `p̂ = 1/2` is used (inner term 1/4), so the
//!   state needs `(1/(2ε²))·ln(2/δ')` observations;
//! - `p̂ = 1/2`: `|1/2 − p̂| − 2ε/3 < 0`, clamped to 0, the inner term is exactly 1/4;
//! - the clamped difference `|1/2 − p̂| − 2ε/3` below zero (p̂ within 2ε/3 of 1/2) is read as 0:
//!   the bound never rewards a p̂ near 1/2 with a smaller n. The whole bracket
//!   `1/4 − x²` stays positive because `0 ≤ x ≤ 1/2 − 2ε/3 < 1/2`.
//!
//! States with at most one valid successor (marked with
//! [`TransitionCounts::mark_determined`]) have nothing to estimate: their bound is 0.
//!
//! The simpler Hoeffding bound `n_p ≥ ln(2/δ')/(2ε²)` does not depend on p̂.
//!
//! ```
//! use augur_learn::pac::{required_samples, PacBound};
//! // Pro2Guard's worked example: m = 10, ε = 0.05, δ = 0.01, p̂ = 0.2.
//! let n = required_samples(Some(0.2), 10, 0.05, 0.01, PacBound::ChenEtAl).unwrap();
//! assert!((1087.0..1088.0).contains(&n));
//! ```

use serde::Serialize;

use crate::error::{LearnError, Result};
use crate::learn::TransitionCounts;

/// Which sample-size bound to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PacBound {
    /// Pro2Guard's bound after Chen et al.: depends on the p̂ closest to 1/2.
    #[serde(rename = "chen")]
    ChenEtAl,
    /// Hoeffding: `ln(2/δ')/(2ε²)`, independent of p̂.
    Hoeffding,
}

fn check_params(m: usize, epsilon: f64, delta: f64) -> Result<()> {
    if m == 0 {
        return Err(LearnError::BadPacParameter(
            "the number of states m must be at least 1".into(),
        ));
    }
    if !(epsilon > 0.0 && epsilon < 1.0) {
        return Err(LearnError::BadPacParameter(format!(
            "epsilon = {epsilon}: it must be in (0, 1)"
        )));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(LearnError::BadPacParameter(format!(
            "delta = {delta}: it must be in (0, 1)"
        )));
    }
    Ok(())
}

/// The right-hand side of the bound (a real number; the required count is its ceiling) for
/// the binding frequency `p_hat` (`None` when the state has no observation), `m` states,
/// accuracy `epsilon` and confidence `delta` (δ' = δ/m).
pub fn required_samples(
    p_hat: Option<f64>,
    m: usize,
    epsilon: f64,
    delta: f64,
    bound: PacBound,
) -> Result<f64> {
    check_params(m, epsilon, delta)?;
    let delta_prime = delta / m as f64;
    let log_term = (2.0 / delta_prime).ln();
    let r = match bound {
        PacBound::Hoeffding => log_term / (2.0 * epsilon * epsilon),
        PacBound::ChenEtAl => {
            let p = match p_hat {
                // n_p = 0: worst case.
                None => 0.5,
                Some(p) if (0.0..=1.0).contains(&p) => p,
                Some(p) => {
                    return Err(LearnError::BadPacParameter(format!(
                        "p-hat = {p}: it must be in [0, 1]"
                    )))
                }
            };
            // The difference below zero (p̂ within 2ε/3 of 1/2, p̂ = 1/2 included) counts as 0.
            let x = ((0.5 - p).abs() - 2.0 * epsilon / 3.0).max(0.0);
            let inner = 0.25 - x * x;
            2.0 / (epsilon * epsilon) * log_term * inner
        }
    };
    // A bound of 2^64 or more (or infinite, e.g. ε = 1e-300) does not fit the u64 count: the
    // ceiling would saturate to u64::MAX and be reported as if it were the answer.
    if r.is_nan() || r >= u64::MAX as f64 {
        return Err(LearnError::BadPacParameter(format!(
            "epsilon = {epsilon}, delta = {delta}: the required number of observations \
             ({r:e}) is too large to count; choose a larger epsilon or delta"
        )));
    }
    Ok(r)
}

/// The integer number of observations required: the ceiling of [`required_samples`].
pub fn required_count(
    p_hat: Option<f64>,
    m: usize,
    epsilon: f64,
    delta: f64,
    bound: PacBound,
) -> Result<u64> {
    let r = required_samples(p_hat, m, epsilon, delta, bound)?;
    Ok(r.ceil() as u64)
}

/// The PAC verdict for one state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatePac {
    /// The state index.
    pub state: u32,
    /// The state has at most one valid successor: its row is fixed by validity, nothing is
    /// estimated, and the bound is 0.
    pub determined: bool,
    /// `n_p`: observed valid outgoing transitions.
    pub observations: u64,
    /// The binding successor (the p̂ closest to 1/2), if the state was observed.
    pub binding_successor: Option<u32>,
    /// Its empirical frequency.
    pub binding_p_hat: Option<f64>,
    /// The bound's right-hand side.
    pub required_exact: f64,
    /// Its ceiling: the observations required.
    pub required: u64,
    /// `n_p ≥ required`.
    pub holds: bool,
    /// `max(0, required − n_p)`: how many more observations out of this state are needed.
    pub more_needed: u64,
}

/// The PAC verdict for a whole learned model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PacReport {
    /// The bound used.
    pub bound: PacBound,
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// m, the number of states.
    pub states: usize,
    /// δ' = δ/m.
    pub delta_prime: f64,
    /// Every state's verdict, by index.
    pub per_state: Vec<StatePac>,
    /// Whether every state satisfies its bound (the paper's stopping condition).
    pub holds: bool,
    /// Whether every state with at least one observation satisfies its bound.
    pub holds_on_visited: bool,
    /// States with no observation at all and not determined (they cannot hold).
    pub unvisited: usize,
    /// Sum of `more_needed` over the states.
    pub total_more_needed: u64,
}

/// Compute the PAC verdict of every state of a model from its transition counts.
pub fn pac_report(
    counts: &TransitionCounts,
    epsilon: f64,
    delta: f64,
    bound: PacBound,
) -> Result<PacReport> {
    let m = counts.num_states();
    check_params(m, epsilon, delta)?;
    let mut per_state = Vec::with_capacity(m);
    for p in 0..m as u32 {
        let n_p = counts.row_total(p);
        let mut binding: Option<(u32, f64)> = None;
        if n_p > 0 {
            for (q, c) in counts.row(p) {
                let ph = c as f64 / n_p as f64;
                let closer = match binding {
                    None => true,
                    Some((_, b)) => (0.5 - ph).abs() < (0.5 - b).abs(),
                };
                if closer {
                    binding = Some((q, ph));
                }
            }
        }
        let determined = counts.determined().contains(&p);
        let exact = if determined {
            0.0
        } else {
            required_samples(binding.map(|b| b.1), m, epsilon, delta, bound)?
        };
        let required = exact.ceil() as u64;
        per_state.push(StatePac {
            state: p,
            determined,
            observations: n_p,
            binding_successor: binding.map(|b| b.0),
            binding_p_hat: binding.map(|b| b.1),
            required_exact: exact,
            required,
            holds: n_p >= required,
            more_needed: required.saturating_sub(n_p),
        });
    }
    let holds = per_state.iter().all(|s| s.holds);
    let holds_on_visited = per_state
        .iter()
        .filter(|s| s.observations > 0 || s.determined)
        .all(|s| s.holds);
    let unvisited = per_state
        .iter()
        .filter(|s| s.observations == 0 && !s.determined)
        .count();
    let total_more_needed = per_state.iter().map(|s| s.more_needed).sum();
    Ok(PacReport {
        bound,
        epsilon,
        delta,
        states: m,
        delta_prime: delta / m as f64,
        per_state,
        holds,
        holds_on_visited,
        unvisited,
        total_more_needed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::AllValid;

    #[test]
    fn worked_example_from_pro2guard() {
        // By hand: δ' = 0.01/10 = 0.001, ln(2/δ') = ln 2000 = 7.600902...,
        // 2/ε² = 2/0.0025 = 800, |1/2 − 0.2| − 2·0.05/3 = 0.3 − 0.033333 = 0.266667,
        // squared 0.071111, 1/4 − 0.071111 = 0.178889,
        // 800 · 7.600902 · 0.178889 = 1087.77. The paper says "approximately 1087".
        let r = required_samples(Some(0.2), 10, 0.05, 0.01, PacBound::ChenEtAl).unwrap();
        let by_hand = 800.0 * 2000f64.ln() * (0.25 - (0.3 - 0.1 / 3.0) * (0.3 - 0.1 / 3.0));
        assert!((r - by_hand).abs() < 1e-9);
        assert!((r - 1087.77).abs() < 0.01, "{r}");
        let need = required_count(Some(0.2), 10, 0.05, 0.01, PacBound::ChenEtAl).unwrap();
        assert_eq!(need, 1088);
        assert!(400 < need, "400 samples are not enough");
    }

    #[test]
    fn edge_cases() {
        let (m, e, d) = (10, 0.05, 0.01);
        let half = required_samples(Some(0.5), m, e, d, PacBound::ChenEtAl).unwrap();
        // p̂ = 1/2: inner term 1/4 exactly: (2/ε²)·ln(2/δ')/4 = 200 · ln 2000.
        assert!((half - 200.0 * 2000f64.ln()).abs() < 1e-9);
        // n_p = 0 is the worst case, equal to p̂ = 1/2.
        let none = required_samples(None, m, e, d, PacBound::ChenEtAl).unwrap();
        assert_eq!(none, half);
        // p̂ within 2ε/3 of 1/2: the negative difference is clamped, same as 1/2.
        let near = required_samples(Some(0.49), m, e, d, PacBound::ChenEtAl).unwrap();
        assert_eq!(near, half);
        // p̂ = 0 or 1: x = 1/2 − 2ε/3, smaller but positive.
        let zero = required_samples(Some(0.0), m, e, d, PacBound::ChenEtAl).unwrap();
        let one = required_samples(Some(1.0), m, e, d, PacBound::ChenEtAl).unwrap();
        assert_eq!(zero, one);
        assert!(zero > 0.0 && zero < half);
        // Hoeffding: ln(2/δ')/(2ε²) = ln 2000 / 0.005 = 200 · ln 2000, the same as p̂ = 1/2.
        let h = required_samples(Some(0.2), m, e, d, PacBound::Hoeffding).unwrap();
        assert!((h - 2000f64.ln() / 0.005).abs() < 1e-9);
        for bad in [
            required_samples(Some(0.2), 0, e, d, PacBound::ChenEtAl),
            required_samples(Some(0.2), m, 0.0, d, PacBound::ChenEtAl),
            required_samples(Some(0.2), m, e, 1.0, PacBound::ChenEtAl),
            required_samples(Some(1.2), m, e, d, PacBound::ChenEtAl),
            required_samples(Some(f64::NAN), m, e, d, PacBound::ChenEtAl),
        ] {
            assert!(matches!(bad, Err(LearnError::BadPacParameter(_))));
        }
    }

    #[test]
    fn a_bound_too_large_to_count_is_an_error_not_u64_max() {
        // ε = 1e-300: 2/ε² overflows to inf; before, the count saturated to u64::MAX and the
        // calculator printed "required n ≥ inf → 18446744073709551615 observations".
        for bound in [PacBound::ChenEtAl, PacBound::Hoeffding] {
            let e = required_count(Some(0.2), 10, 1e-300, 0.01, bound).unwrap_err();
            assert!(e.to_string().contains("too large to count"), "{e}");
            // δ so small that 2/δ' overflows.
            assert!(required_samples(None, 10, 0.05, 1e-320, bound).is_err());
        }
        // ε = 1e-9 is fine: Hoeffding ln(2000)/(2·1e-18) ≈ 3.8e18 < 2^64 ≈ 1.8e19.
        let h = required_count(None, 10, 1e-9, 0.01, PacBound::Hoeffding).unwrap();
        assert!(h > 3_000_000_000_000_000_000);
    }

    #[test]
    fn report_per_state() {
        // Two states: 0 observed 400 times (80 to itself, 320 to state 1), 1 never left.
        let mut c = TransitionCounts::new(2);
        for _ in 0..80 {
            c.observe_trace(&[0, 0], &AllValid);
        }
        for _ in 0..320 {
            c.observe_trace(&[0, 1], &AllValid);
        }
        let r = pac_report(&c, 0.05, 0.01, PacBound::ChenEtAl).unwrap();
        let s0 = &r.per_state[0];
        assert_eq!(s0.observations, 400);
        // p̂ = 0.2 and 0.8 are equally far from 1/2; the first (successor 0) is kept.
        assert_eq!(s0.binding_successor, Some(0));
        assert_eq!(s0.binding_p_hat, Some(0.2));
        // m = 2 here, so δ' = 0.005: 800 · ln(400) · 0.178889.
        let expect = 800.0 * 400f64.ln() * (0.25 - (0.3 - 0.1 / 3.0f64).powi(2));
        assert!((s0.required_exact - expect).abs() < 1e-9);
        assert!(!s0.holds);
        assert_eq!(s0.more_needed, s0.required - 400);
        assert_eq!(r.per_state[1].observations, 0);
        assert_eq!(r.unvisited, 1);
        assert!(!r.holds && !r.holds_on_visited);
        // With state 1 absorbing by validity, it is exempt; state 0 still needs more.
        let valid = |f: u32, t: u32| f == 0 || t == 1;
        c.mark_determined(&valid);
        let r = pac_report(&c, 0.05, 0.01, PacBound::ChenEtAl).unwrap();
        assert!(r.per_state[1].determined && r.per_state[1].holds);
        assert_eq!(r.unvisited, 0);
        // n_p = 400 is below the required ceil(800·ln 400·0.178889) = 858.
        assert!(!r.holds);
        // Enough: 4000 observations with p̂ = 0.2 and 0.8.
        for _ in 0..720 {
            c.observe_trace(&[0, 0], &valid);
        }
        for _ in 0..2880 {
            c.observe_trace(&[0, 1], &valid);
        }
        let r = pac_report(&c, 0.05, 0.01, PacBound::ChenEtAl).unwrap();
        assert!(r.holds && r.holds_on_visited);
        assert_eq!(r.total_more_needed, 0);
    }
}
