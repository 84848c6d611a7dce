//! Trace ends as a state of their own (`augur learn --end-state NAME`).
//!
//! A learned chain says where runs go, not where they stop: a trace's last state is just a
//! state, and with smoothing (α > 0, or the uniform rows of never-left states) every state
//! reaches every valid state, so an unbounded question such as `P=? [ F "VIOLATED" ]` is 1 on
//! any learned model with a reachable violation. With an end state, the last state of every
//! trace moves once more, to an extra state `NAME`:
//!
//! - the move `last → NAME` is counted like any observed transition (so `P(i, NAME)` is the
//!   fraction of the visits of `i` that ended the run, smoothed like every other entry);
//! - it is valid from every state (a run may stop anywhere; [`EndValidity`]), and `NAME`'s
//!   only successor is itself (absorbing, fixed by validity, exempt from PAC bounds);
//! - `NAME` is labelled `NAME`; with valuations (a spec) it has every predicate false and a
//!   boolean variable `NAME` that is true there alone.
//!
//! Then `P=? [ F "VIOLATED" ]` is the probability that a run violates before it ends.
//!
//! ```
//! use augur_learn::end_state::EndValidity;
//! use augur_learn::{learn, AllValid, TransitionCounts};
//! use std::collections::BTreeMap;
//! let mut counts = TransitionCounts::new(2);
//! counts.observe_trace(&[0, 1], &AllValid);
//! counts.observe_trace(&[0], &AllValid);
//! // Trace 1 ended in state 1, trace 2 in state 0.
//! let end = counts.observe_ends(&BTreeMap::from([(1, 1), (0, 1)])).unwrap();
//! let validity = EndValidity { base: &AllValid, end };
//! let learned = learn(&counts, &validity, 0.0).unwrap();
//! // From 0: one run moved to 1, one ended.
//! assert_eq!(learned.dtmc.matrix.get(0, end as usize).copied(), Some(0.5));
//! assert_eq!(learned.dtmc.matrix.get(end as usize, end as usize).copied(), Some(1.0));
//! ```

use crate::error::{LearnError, Result};
use crate::learn::Validity;
use augur_dtmc::{Dtmc, Valuations};
use augur_expr::{Type, Value};

/// The validity of a chain with an end state `end` (the last index): `base` between the other
/// states, the move into `end` from every state, and only the self-loop out of `end`.
pub struct EndValidity<'a> {
    /// The validity of the states before the end state.
    pub base: &'a dyn Validity,
    /// The end state's index.
    pub end: u32,
}

impl Validity for EndValidity<'_> {
    fn is_valid_transition(&self, from: u32, to: u32) -> bool {
        if from == self.end {
            to == self.end
        } else if to == self.end {
            true
        } else {
            to < self.end && self.base.is_valid_transition(from, to)
        }
    }

    fn every_successor_valid(&self, from: u32, num_states: usize) -> bool {
        // Every state before the end state, and the end state.
        from != self.end
            && num_states == self.end as usize + 1
            && self.base.every_successor_valid(from, self.end as usize)
    }

    fn valid_successors(&self, from: u32, num_states: usize) -> Vec<u32> {
        if from == self.end {
            return vec![self.end];
        }
        let mut v = self
            .base
            .valid_successors(from, (self.end as usize).min(num_states));
        v.push(self.end);
        v
    }

    fn num_valid_successors(&self, from: u32, num_states: usize) -> usize {
        if from == self.end {
            return 1;
        }
        self.base
            .num_valid_successors(from, (self.end as usize).min(num_states))
            + 1
    }
}

/// Words that cannot name the end state: literals and PRISM's built-in labels.
const RESERVED: [&str; 4] = ["true", "false", "init", "deadlock"];

/// Refuses an end-state name that is not an identifier (`[A-Za-z_][A-Za-z0-9_]*`, as the
/// variable it becomes must be) or is reserved.
pub fn check_name(name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(LearnError::BadEndState {
            name: name.to_string(),
            why: why.to_string(),
        })
    };
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return bad("it must be an identifier (a letter or `_`, then letters, digits, `_`)");
    }
    if RESERVED.contains(&name) {
        return bad("it is a reserved word");
    }
    Ok(())
}

/// Refuses an end-state name that is already a state name, label (of `dtmc`, or one of
/// `label_names`) or variable of the model.
pub fn check_unused(
    name: &str,
    state_names: &[String],
    label_names: &[String],
    dtmc: &Dtmc,
) -> Result<()> {
    let clash = |what: &str| {
        Err(LearnError::BadEndState {
            name: name.to_string(),
            why: format!("the learned model already has a {what} of that name; choose another"),
        })
    };
    if state_names.iter().any(|n| n == name) {
        return clash("state");
    }
    if label_names.iter().any(|l| l == name) || dtmc.labels.iter().any(|(l, _)| l == name) {
        return clash("label");
    }
    if dtmc
        .valuations
        .as_ref()
        .is_some_and(|v| v.names.iter().any(|n| n == name))
    {
        return clash("variable (predicate)");
    }
    Ok(())
}

/// Labels and valuations for the end state, the last of `dtmc`'s states: the labels (made for
/// the other states) grow by one state that none of them holds, the label `name` holds there
/// alone; valuations get a boolean column `name`, true there alone, every other column false.
pub fn decorate(dtmc: &mut Dtmc, name: &str) {
    grow_by_one_state(dtmc, Some(name));
    let end = dtmc.num_states() - 1;
    let mut own = fixedbitset::FixedBitSet::with_capacity(end + 1);
    own.insert(end);
    dtmc.labels.push((name.to_string(), own));
}

/// Labels and valuations (made for all states but the last) for one more state, the last: no
/// label holds there, every variable is false (0); with `column`, a boolean variable of that
/// name, true there alone.
pub(crate) fn grow_by_one_state(dtmc: &mut Dtmc, column: Option<&str>) {
    let n = dtmc.num_states();
    let last = n - 1;
    for (_, set) in dtmc.labels.iter_mut() {
        set.grow(n);
    }
    if let Some(v) = &dtmc.valuations {
        let cols = v.names.len();
        let extra = usize::from(column.is_some());
        let mut values = Vec::with_capacity(n * (cols + extra));
        for s in 0..last {
            values.extend(v.row(s).unwrap_or_else(|| vec![Value::Bool(false); cols]));
            if extra == 1 {
                values.push(Value::Bool(false));
            }
        }
        values.extend(v.types.iter().map(|&t| default_value(t)));
        let mut names = v.names.clone();
        let mut types = v.types.clone();
        if let Some(c) = column {
            values.push(Value::Bool(true));
            names.push(c.to_string());
            types.push(Type::Bool);
        }
        dtmc.valuations = Some(Valuations::new(names, types, values));
    }
}

/// The value of a column in the end state: false, 0.
fn default_value(t: Type) -> Value {
    match t {
        Type::Bool => Value::Bool(false),
        Type::Int => Value::Int(0),
        Type::Double => Value::Double(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{learn, AllValid, TransitionCounts};
    use std::collections::BTreeMap;

    #[test]
    fn end_validity_enters_from_everywhere_and_leaves_nowhere() {
        let base = |f: u32, t: u32| t >= f;
        let v = EndValidity {
            base: &base,
            end: 3,
        };
        assert_eq!(v.valid_successors(0, 4), [0, 1, 2, 3]);
        assert_eq!(v.valid_successors(2, 4), [2, 3]);
        assert_eq!(v.valid_successors(3, 4), [3]);
        assert_eq!(v.num_valid_successors(1, 4), 3);
        assert!(!v.is_valid_transition(3, 0) && v.is_valid_transition(1, 3));
        assert!(!v.is_valid_transition(2, 1));
    }

    /// Traces a b, a a b, a: from a, 4 moves were seen (a→b twice, a→a once, a→END once).
    #[test]
    fn smoothed_rows_include_the_end() {
        let mut c = TransitionCounts::new(2);
        c.observe_trace(&[0, 1], &AllValid);
        c.observe_trace(&[0, 0, 1], &AllValid);
        c.observe_trace(&[0], &AllValid);
        let end = c.observe_ends(&BTreeMap::from([(1, 2), (0, 1)])).unwrap();
        assert_eq!((end, c.traces(), c.steps()), (2, 3, 6));
        let v = EndValidity {
            base: &AllValid,
            end,
        };
        c.mark_determined(&v);
        assert_eq!(c.determined().iter().copied().collect::<Vec<_>>(), [2]);
        let l = learn(&c, &v, 1.0).unwrap();
        let p = |i: usize, j: usize| l.dtmc.matrix.get(i, j).copied().unwrap_or(0.0);
        // Row a: counts (a 1, b 2, END 1) + α = 1 each over 4 + 3.
        assert_eq!(
            (p(0, 0), p(0, 1), p(0, 2)),
            (2.0 / 7.0, 3.0 / 7.0, 2.0 / 7.0)
        );
        // Row b: END twice: (0 + 1, 0 + 1, 2 + 1) / 5.
        assert_eq!((p(1, 0), p(1, 1), p(1, 2)), (0.2, 0.2, 0.6));
        assert_eq!(p(2, 2), 1.0);
        assert!(c.observe_ends(&BTreeMap::from([(9, 1)])).is_err());
    }

    #[test]
    fn names_are_identifiers_not_taken() {
        assert!(check_name("DONE").is_ok() && check_name("_end2").is_ok());
        for bad in ["", "2x", "a-b", "run end", "true", "init"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let mut one = TransitionCounts::new(1);
        one.observe_trace(&[0], &AllValid);
        let mut d = learn(&one, &AllValid, 0.0).unwrap().dtmc;
        d.labels
            .push(("x".into(), fixedbitset::FixedBitSet::with_capacity(1)));
        let e = check_unused("x", &[], &[], &d).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid end state `x`: the learned model already has a label of that name; choose another"
        );
        assert!(check_unused("s0", &["s0".into()], &[], &d).is_err());
        assert!(check_unused("DONE", &["s0".into()], &[], &d).is_ok());
    }
}
