//! Calibration of the chain's probabilities (issue 41, item 4): is a call given probability
//! p followed by a violation about a fraction p of the time?
//!
//! Each test call k of a run contributes one pair: the probability the monitor gave it (the
//! value of `P=? [ F<=H "VIOLATED" ]` in the state the call leads to) and whether the run's
//! violation step v lies within that horizon (k ≤ v ≤ k + H). Calls after the violation step
//! are left out (the run is violated already), as are violating runs without a known step;
//! safe runs' calls (attempts included: their goal was not achieved) are all negatives. The
//! pairs fall into ten equal-width bins of probability; the expected calibration error is the
//! mean over the pairs of |mean probability − observed frequency| of their bin.

use super::*;

/// One bin of predicted probability.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CalibrationBin {
    /// The bin's lower end (inclusive).
    pub lo: f64,
    /// Its upper end (exclusive; inclusive for the last bin).
    pub hi: f64,
    /// The mean probability of its calls (`NaN` when empty).
    pub mean_predicted: f64,
    /// Its calls followed by a violation within the horizon, with the Wilson interval.
    pub observed: Rate,
}

/// The calibration table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The horizon H of the event.
    pub horizon: u32,
    /// Ten bins, lowest first.
    pub bins: Vec<CalibrationBin>,
    /// Expected calibration error.
    pub ece: f64,
}

/// The calibration of per-call probabilities `traces` on `runs` at horizon `horizon`.
pub fn calibration(runs: &[&Run], traces: &[RunProbabilities], horizon: u32) -> Calibration {
    const BINS: usize = 10;
    let mut sum = [0.0f64; BINS];
    let mut n = [0u64; BINS];
    let mut hits = [0u64; BINS];
    for (r, t) in runs.iter().zip(traces) {
        let violation = match r.label {
            Label::Unsafe => match r.violation_step {
                Some(v) => Some(v),
                None => continue,
            },
            Label::Safe => None,
        };
        for (k, &p) in t.probabilities.iter().enumerate() {
            if violation.is_some_and(|v| k > v) {
                break;
            }
            let p = p.clamp(0.0, 1.0);
            let b = ((p * BINS as f64) as usize).min(BINS - 1);
            sum[b] += p;
            n[b] += 1;
            hits[b] += u64::from(violation.is_some_and(|v| v <= k + horizon as usize));
        }
    }
    let total: u64 = n.iter().sum();
    let mut ece = 0.0;
    let bins = (0..BINS)
        .map(|b| {
            let mean = if n[b] == 0 {
                f64::NAN
            } else {
                sum[b] / n[b] as f64
            };
            let observed = Rate::new(hits[b], n[b]);
            if n[b] > 0 {
                ece += n[b] as f64 / total as f64 * (mean - observed.rate).abs();
            }
            CalibrationBin {
                lo: b as f64 / BINS as f64,
                hi: (b + 1) as f64 / BINS as f64,
                mean_predicted: mean,
                observed,
            }
        })
        .collect();
    Calibration { horizon, bins, ece }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: Label, violation: Option<usize>) -> Run {
        crate::eval::tests::bare_run(label, None, violation, None)
    }

    fn trace(ps: &[f64]) -> RunProbabilities {
        RunProbabilities {
            probabilities: ps.to_vec(),
        }
    }

    #[test]
    fn a_calibrated_set_has_no_error_and_events_follow_the_horizon() {
        // Unsafe run violating at call 3, horizon 1: calls 2 and 3 are positives, 0 and 1
        // negatives, 4 left out.
        let u = run(Label::Unsafe, Some(3));
        let s = run(Label::Safe, None);
        let none = run(Label::Unsafe, None);
        let c = calibration(
            &[&u, &s, &none],
            &[
                trace(&[0.0, 0.0, 1.0, 1.0, 1.0]),
                trace(&[0.0, 0.0]),
                trace(&[0.5, 0.5]),
            ],
            1,
        );
        assert_eq!(c.bins.len(), 10);
        assert_eq!((c.bins[0].observed.k, c.bins[0].observed.n), (0, 4));
        assert_eq!((c.bins[9].observed.k, c.bins[9].observed.n), (2, 2));
        assert_eq!(c.bins[5].observed.n, 0, "a run without a step is left out");
        assert_eq!(c.ece, 0.0);
    }

    #[test]
    fn the_error_is_the_weighted_gap_between_prediction_and_frequency() {
        // Four safe calls predicted 0.25 (bin 2: observed 0), four violating calls predicted
        // 0.75 (bin 7: observed 1): ECE = ½·0.25 + ½·0.25.
        let s = run(Label::Safe, None);
        let u = run(Label::Unsafe, Some(3));
        let c = calibration(&[&s, &u], &[trace(&[0.25; 4]), trace(&[0.75; 4])], 5);
        assert_eq!((c.bins[2].observed.k, c.bins[2].observed.n), (0, 4));
        assert_eq!((c.bins[7].observed.k, c.bins[7].observed.n), (4, 4));
        assert!((c.bins[2].mean_predicted - 0.25).abs() < 1e-12);
        assert!((c.ece - 0.25).abs() < 1e-12, "{}", c.ece);
    }
}
