//! Seeded, reproducible simulation of a DTMC.
//!
//! [`Simulator`] yields traces (state index sequences): each starts in an initial state drawn
//! uniformly from `dtmc.initial`, takes at most `max_steps` transitions and stops early in an
//! absorbing state (a state whose only transition is a self-loop) after taking its self-loop
//! once, so that a learner reading the trace sees the state stay where it is. The random
//! generator is ChaCha8 seeded with the user's seed, so the same seed gives the same traces on
//! every platform. [`state_names`] names states for writing traces.
//!
//! ```
//! use augur_learn::{learn, AllValid, TransitionCounts};
//! use augur_learn::simulate::Simulator;
//! let mut c = TransitionCounts::new(2);
//! c.observe_trace(&[0, 1], &AllValid);
//! let dtmc = learn(&c, &AllValid, 0.0).unwrap().dtmc; // 0 -> 1 surely, 1 uniform over {0, 1}
//! let traces: Vec<Vec<u32>> = Simulator::new(&dtmc, 42, 5).unwrap().take(3).collect();
//! assert!(traces.iter().all(|t| t[0] == 0 && t[1] == 1 && t.len() <= 6));
//! ```

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{LearnError, Result};
use augur_dtmc::{Dtmc, Valuations};
use augur_expr::Value;

/// Writes trace number `i` of a simulation (`trace`, its states' indices into `names`) as one
/// line of the JSON Lines trace format, line break included:
/// `{"category": C, "id": "sim-I", "steps": [{"state": NAME}, ...]}` (`category` only when
/// given). Compiled here, optimised, rather than in the binary.
pub fn write_trace_jsonl(
    w: &mut dyn std::io::Write,
    i: usize,
    trace: &[u32],
    names: &[String],
    category: Option<&str>,
) -> std::io::Result<()> {
    let steps: Vec<_> = trace
        .iter()
        .map(|&s| serde_json::json!({"state": names[s as usize]}))
        .collect();
    let mut t = serde_json::json!({"id": format!("sim-{i}"), "steps": steps});
    if let Some(c) = category {
        t["category"] = serde_json::json!(c);
    }
    serde_json::to_writer(&mut *w, &t)?;
    writeln!(w)
}

/// An endless iterator of simulated traces (take as many as needed).
#[derive(Debug)]
pub struct Simulator<'a> {
    dtmc: &'a Dtmc,
    rng: ChaCha8Rng,
    max_steps: usize,
    absorbing: Vec<bool>,
}

impl<'a> Simulator<'a> {
    /// A simulator of `dtmc` with the given seed, taking at most `max_steps` transitions per
    /// trace. Errors if the model has no initial state or an empty row.
    pub fn new(dtmc: &'a Dtmc, seed: u64, max_steps: usize) -> Result<Self> {
        if dtmc.initial.is_empty() {
            return Err(LearnError::Simulation(
                "the model has no initial state".into(),
            ));
        }
        let n = dtmc.num_states();
        if let Some(&s) = dtmc.initial.iter().find(|&&s| s as usize >= n) {
            return Err(LearnError::StateOutOfRange {
                index: s,
                num_states: n,
            });
        }
        let mut absorbing = vec![false; n];
        for (i, row) in dtmc.matrix.outer_iterator().enumerate() {
            if row.nnz() == 0 {
                return Err(LearnError::Simulation(format!(
                    "state {i} has no outgoing transition"
                )));
            }
            absorbing[i] = row.nnz() == 1 && row.indices()[0] as usize == i;
        }
        Ok(Simulator {
            dtmc,
            rng: ChaCha8Rng::seed_from_u64(seed),
            max_steps,
            absorbing,
        })
    }

    fn step(&mut self, s: u32) -> u32 {
        // Rows are non-empty (checked in `new`).
        let row = self.dtmc.matrix.outer_view(s as usize);
        let Some(row) = row else { return s };
        let u: f64 = self.rng.gen();
        let mut acc = 0.0;
        let mut last = s;
        for (j, &p) in row.iter() {
            acc += p;
            last = j as u32;
            if u < acc {
                return last;
            }
        }
        // Rounding left the cumulative sum just below 1: the last entry takes the rest.
        last
    }
}

impl Iterator for Simulator<'_> {
    type Item = Vec<u32>;

    fn next(&mut self) -> Option<Vec<u32>> {
        let k = self.dtmc.initial.len();
        let start = self.dtmc.initial[self.rng.gen_range(0..k)];
        let mut trace = Vec::with_capacity(self.max_steps.min(1024) + 1);
        trace.push(start);
        let mut s = start;
        for _ in 0..self.max_steps {
            let absorbing = self.absorbing[s as usize];
            s = self.step(s);
            trace.push(s);
            if absorbing {
                break;
            }
        }
        Some(trace)
    }
}

fn format_value(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Bool(b) => b.to_string(),
    }
}

/// The canonical name of a state from its valuation: when every variable is boolean, the set of
/// true ones, `{a,b}` (the abstraction crate's names for abstract states); otherwise
/// `x=1,y=true`.
pub fn valuation_name(vals: &Valuations, state: usize) -> String {
    let row = vals.row(state).unwrap_or_default();
    if row.iter().all(|v| matches!(v, Value::Bool(_))) {
        let trues: Vec<&str> = vals
            .names
            .iter()
            .zip(&row)
            .filter(|(_, v)| matches!(v, Value::Bool(true)))
            .map(|(n, _)| n.as_str())
            .collect();
        format!("{{{}}}", trues.join(","))
    } else {
        vals.names
            .iter()
            .zip(&row)
            .map(|(n, v)| format!("{n}={}", format_value(v)))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A name for every state, for writing traces: from the valuation when the model has one;
/// else the first label (in model order, `init` and `deadlock` excluded) that holds exactly
/// that state (a model learned from named abstract states has one such label per state);
/// else `s<i>`.
pub fn state_names(dtmc: &Dtmc) -> Vec<String> {
    let n = dtmc.num_states();
    if let Some(vals) = &dtmc.valuations {
        if vals.num_values() == n * vals.names.len() {
            return (0..n).map(|s| valuation_name(vals, s)).collect();
        }
    }
    let mut names: Vec<Option<String>> = vec![None; n];
    for (name, set) in &dtmc.labels {
        if name == "init" || name == "deadlock" || set.count_ones(..) != 1 {
            continue;
        }
        if let Some(s) = set.ones().next() {
            if s < n && names[s].is_none() {
                names[s] = Some(name.clone());
            }
        }
    }
    names
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.unwrap_or_else(|| format!("s{i}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{learn, TransitionCounts};
    use fixedbitset::FixedBitSet;

    #[test]
    fn a_trace_is_written_as_one_line_of_the_trace_format() {
        let names = ["idle".to_string(), "say \"hi\"".to_string()];
        let mut out = Vec::new();
        write_trace_jsonl(&mut out, 7, &[0, 1, 1], &names, None).unwrap();
        write_trace_jsonl(&mut out, 8, &[1], &names, Some("benign")).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"id":"sim-7","steps":[{"state":"idle"},{"state":"say \"hi\""},{"state":"say \"hi\""}]}"#,
                "\n",
                r#"{"category":"benign","id":"sim-8","steps":[{"state":"say \"hi\""}]}"#,
                "\n"
            )
        );
    }

    fn chain() -> Dtmc {
        // 0 -> {0: 1/2, 1: 1/2}? Built from counts: 0->0 once, 0->1 once, 1->2 once, 2 absorbing.
        let valid = |f: u32, t: u32| t == 2 || f == 0;
        let mut c = TransitionCounts::new(3);
        c.observe_trace(&[0, 0, 1, 2], &valid);
        learn(&c, &valid, 0.0).unwrap().dtmc
    }

    #[test]
    fn reproducible_and_stops_in_absorbing_states() {
        let d = chain();
        let a: Vec<_> = Simulator::new(&d, 7, 50).unwrap().take(20).collect();
        let b: Vec<_> = Simulator::new(&d, 7, 50).unwrap().take(20).collect();
        assert_eq!(a, b);
        let c: Vec<_> = Simulator::new(&d, 8, 50).unwrap().take(20).collect();
        assert_ne!(a, c, "another seed gives other traces");
        for t in &a {
            assert_eq!(t[0], 0);
            // State 2 is absorbing: a trace ends with its self-loop taken once after the first
            // visit (or at the first visit when max_steps is reached), and 1 always goes to 2.
            let pos2 = t.iter().position(|&s| s == 2);
            if let Some(p) = pos2 {
                assert!(p + 2 == t.len() || p + 1 == t.len() && t.len() == 51);
                assert!(t[p..].iter().all(|&s| s == 2));
            } else {
                assert_eq!(t.len(), 51);
            }
        }
    }

    #[test]
    fn max_steps_bounds_length() {
        let d = chain();
        for t in Simulator::new(&d, 1, 1).unwrap().take(50) {
            assert!(t.len() <= 2);
        }
        for t in Simulator::new(&d, 1, 0).unwrap().take(5) {
            assert_eq!(t, vec![0]);
        }
    }

    #[test]
    fn frequencies_match_probabilities() {
        // State 0 moves to 0 or 1 with 1/2 each: over 4000 first steps the frequency of 0->0
        // is within 5 standard deviations (5·sqrt(1/4/4000) ≈ 0.04) of 1/2.
        let d = chain();
        let firsts = Simulator::new(&d, 3, 1)
            .unwrap()
            .take(4000)
            .filter(|t| t[1] == 0)
            .count();
        assert!((firsts as f64 / 4000.0 - 0.5).abs() < 0.04);
    }

    #[test]
    fn names() {
        let mut d = chain();
        assert_eq!(state_names(&d), vec!["s0", "s1", "s2"]);
        let mut a = FixedBitSet::with_capacity(3);
        a.insert(1);
        d.labels.push(("init".into(), a.clone()));
        d.labels.push(("one".into(), a));
        assert_eq!(state_names(&d), vec!["s0", "one", "s2"]);
        d.valuations = Some(Valuations::new(
            vec!["p".into(), "q".into()],
            vec![augur_expr::Type::Bool, augur_expr::Type::Bool],
            vec![
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(true),
            ],
        ));
        assert_eq!(state_names(&d), vec!["{}", "{p}", "{p,q}"]);
    }
}
