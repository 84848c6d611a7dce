//! Transition counts as a keyed artefact: counts keyed by state name (not by per-file state
//! index), so that the counts of shards of a trace set can be summed, in any order, and a
//! model learned from the sum exactly as from the whole set.
//!
//! The JSON form (`augur learn --counts-only`, read by `augur learn --from-counts` and
//! `augur pac --counts`), documented in docs/scale.md:
//!
//! ```json
//! {"format": "augur-counts", "version": 1, "order": 1, "end_state": null,
//!  "groups": [{"category": null, "traces": 2, "steps": 4,
//!              "states": ["a", "b"],
//!              "initial": [["a", 2]],
//!              "transitions": [["a", "a", 1], ["a", "b", 1]],
//!              "invalid": [],
//!              "ends": [["a", 1], ["b", 1]]}]}
//! ```
//!
//! A state is its name; in a chain of order k > 1 it is the tuple of the names of its last
//! (up to k) states, an array. `states` lists the states in first-seen order (a learner
//! numbers them so); `ends` counts where traces ended (for `--end-state`).
//!
//! ```
//! use augur_abstraction::{TraceFormat, TraceReader};
//! use augur_learn::counts::KeyedCounts;
//! use augur_learn::pipeline::{count_from_traces, learn_from_counts, LearnOptions};
//! let opts = LearnOptions::default();
//! let count = |text: &str| {
//!     let reader = TraceReader::new(text.as_bytes(), TraceFormat::JsonLines, "t.jsonl");
//!     count_from_traces(reader, "t.jsonl", None, &opts).unwrap().counts
//! };
//! let a = count("{\"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n");
//! let b = count("{\"steps\": [{\"state\": \"y\"}, {\"state\": \"y\"}]}\n");
//! let both = count("{\"steps\": [{\"state\": \"x\"}, {\"state\": \"y\"}]}\n\
//!                   {\"steps\": [{\"state\": \"y\"}, {\"state\": \"y\"}]}\n");
//! assert_eq!(KeyedCounts::sum(&[a.clone(), b.clone()])?, both);
//! let models = learn_from_counts(&[a, b], None, &opts)?;
//! assert_eq!(models[0].state_names, ["x", "y"]);
//! # Ok::<(), augur_learn::LearnError>(())
//! ```

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::{LearnError, Result};

/// The `format` of a counts file.
pub const COUNTS_FORMAT: &str = "augur-counts";
/// The `version` of the counts schema this crate writes and reads.
pub const COUNTS_VERSION: u32 = 1;

/// A state of the counts: its name, or (order k > 1) the names of its last up to k states.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StateKey {
    /// A state of a first-order chain, by name.
    Name(String),
    /// A state of a chain of order k > 1: the tuple of the names of its last states.
    Tuple(Vec<String>),
}

/// Keyed transition counts of one or more trace files (see the [module](self) docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyedCounts {
    /// Always [`COUNTS_FORMAT`].
    pub format: String,
    /// The schema version, [`COUNTS_VERSION`].
    pub version: u32,
    /// The chain's order k the traces were counted for.
    pub order: usize,
    /// The end state asked for when counting (`--end-state`), if any; informational: trace
    /// ends are always counted, and the learner's own option decides.
    #[serde(default)]
    pub end_state: Option<String>,
    /// The counts by category (one group, without category, unless counted by category).
    pub groups: Vec<GroupCounts>,
}

/// The counts of one category (or of all traces).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupCounts {
    /// The category (`None` when not counted by category).
    #[serde(default)]
    pub category: Option<String>,
    /// Number of (non-empty) traces counted.
    pub traces: u64,
    /// Number of trace steps counted.
    pub steps: u64,
    /// Every state, in first-seen order.
    pub states: Vec<StateKey>,
    /// `[state, count]`: how often each state started a trace.
    #[serde(default)]
    pub initial: Vec<(StateKey, u64)>,
    /// `[from, to, count]`: the observed valid transitions.
    #[serde(default)]
    pub transitions: Vec<(StateKey, StateKey, u64)>,
    /// `[from, to, count]`: the observed invalid (dropped) transitions.
    #[serde(default)]
    pub invalid: Vec<(StateKey, StateKey, u64)>,
    /// `[state, count]`: how many traces ended in each state.
    #[serde(default)]
    pub ends: Vec<(StateKey, u64)>,
}

impl KeyedCounts {
    /// Parses a counts file's text (`path` names it in errors). Here rather than with a
    /// generic parser in the caller, so that the reading is compiled once, optimised.
    pub fn from_json(text: &str, path: &std::path::Path) -> Result<KeyedCounts> {
        Ok(augur_formats::json::parse_json(text, path)?)
    }

    /// Writes the counts as one line of JSON (without its line break).
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> serde_json::Result<()> {
        serde_json::to_writer(w, self)
    }

    /// Counts of the given order and groups, with the current format and version.
    pub fn new(order: usize, end_state: Option<String>, groups: Vec<GroupCounts>) -> Self {
        KeyedCounts {
            format: COUNTS_FORMAT.to_string(),
            version: COUNTS_VERSION,
            order,
            end_state,
            groups,
        }
    }

    /// Checks the format, version and order, that every state key has the order's shape, that
    /// every state a count names is listed in `states`, and that the counts are those of
    /// traces (each error names the group and the entry, `groups[0].transitions[3]`): no key is
    /// listed twice in a list (each list gives a key its total once: a repeated entry is
    /// refused, not summed); the traces starting (`initial`) and ending (`ends`) add up to
    /// `traces`; `steps` is the moves (`transitions` and `invalid`) plus one last step per
    /// trace; and every state is entered (as a trace's start or a move's target) as often as
    /// it is left (by a move or a trace's end).
    pub fn check(&self) -> Result<()> {
        if self.format != COUNTS_FORMAT {
            return Err(LearnError::BadCounts(format!(
                "format is `{}`, not `{COUNTS_FORMAT}`",
                self.format
            )));
        }
        if self.version != COUNTS_VERSION {
            return Err(LearnError::BadCounts(format!(
                "schema version {} is not supported (this Augur reads version {COUNTS_VERSION})",
                self.version
            )));
        }
        if !(1..=8).contains(&self.order) {
            return Err(LearnError::BadOrder(self.order));
        }
        for g in &self.groups {
            let listed: std::collections::HashSet<&StateKey> = g.states.iter().collect();
            if listed.len() != g.states.len() {
                return Err(LearnError::BadCounts(format!(
                    "{}: a state is listed twice in `states`",
                    g.what()
                )));
            }
            for s in &g.states {
                check_shape(s, self.order)?;
            }
            let keys = g
                .initial
                .iter()
                .map(|(s, _)| s)
                .chain(g.ends.iter().map(|(s, _)| s))
                .chain(g.transitions.iter().flat_map(|(f, t, _)| [f, t]))
                .chain(g.invalid.iter().flat_map(|(f, t, _)| [f, t]));
            for s in keys {
                if !listed.contains(s) {
                    return Err(LearnError::BadCounts(format!(
                        "{}: state {} is counted but not listed in `states`",
                        g.what(),
                        s.display()
                    )));
                }
            }
        }
        for (i, g) in self.groups.iter().enumerate() {
            g.check_consistent(i)?;
        }
        Ok(())
    }

    /// The sum of `shards` (which must have the same order): groups of the same category
    /// added, states in the order they first appear in the shards as given, every list
    /// sorted by key (so the sum of the same shards in any order differs only in `states`).
    /// The end state is the first shard's that has one.
    pub fn sum(shards: &[KeyedCounts]) -> Result<KeyedCounts> {
        let Some(first) = shards.first() else {
            return Err(LearnError::NoTraces);
        };
        let mut acc: BTreeMap<Option<String>, GroupSum> = BTreeMap::new();
        for shard in shards {
            shard.check()?;
            if shard.order != first.order {
                return Err(LearnError::BadCounts(format!(
                    "counts of order {} and {} cannot be added",
                    first.order, shard.order
                )));
            }
            for g in &shard.groups {
                acc.entry(g.category.clone()).or_default().add(g)?;
            }
        }
        Ok(KeyedCounts::new(
            first.order,
            shards.iter().find_map(|s| s.end_state.clone()),
            acc.into_iter().map(|(c, g)| g.finish(c)).collect(),
        ))
    }

    /// Sorts every list of every group by key (`states` keeps its first-seen order), a
    /// canonical form to compare counts by.
    pub fn sorted(mut self) -> Self {
        for g in &mut self.groups {
            g.initial.sort();
            g.transitions.sort();
            g.invalid.sort();
            g.ends.sort();
        }
        self
    }
}

impl GroupCounts {
    /// The cross-checks of [`KeyedCounts::check`] on group `index`.
    fn check_consistent(&self, index: usize) -> Result<()> {
        let what = self.what();
        let bad = |m: String| Err(LearnError::BadCounts(format!("{what}: {m}")));
        // Each key once per list.
        fn repeated<K: std::hash::Hash + Eq>(
            keys: impl Iterator<Item = K>,
        ) -> Option<(usize, usize)> {
            let mut first: HashMap<K, usize> = HashMap::new();
            for (j, k) in keys.enumerate() {
                if let Some(&i) = first.get(&k) {
                    return Some((i, j));
                }
                first.insert(k, j);
            }
            None
        }
        let again = |list: &str, i: usize, j: usize, key: String| {
            bad(format!(
                "groups[{index}].{list}[{j}] lists {key} again (first at {list}[{i}]); a counts file gives each key its total once"
            ))
        };
        if let Some((i, j)) = repeated(self.initial.iter().map(|(s, _)| s)) {
            return again("initial", i, j, self.initial[j].0.display());
        }
        if let Some((i, j)) = repeated(self.ends.iter().map(|(s, _)| s)) {
            return again("ends", i, j, self.ends[j].0.display());
        }
        for (list, moves) in [
            ("transitions", &self.transitions),
            ("invalid", &self.invalid),
        ] {
            if let Some((i, j)) = repeated(moves.iter().map(|(f, t, _)| (f, t))) {
                let (f, t, _) = &moves[j];
                return again(list, i, j, format!("{} -> {}", f.display(), t.display()));
            }
        }
        // Totals (in u128: no sum of u64 counts overflows it).
        let sum = |v: &mut dyn Iterator<Item = u64>| v.map(u128::from).sum::<u128>();
        let traces = u128::from(self.traces);
        let started = sum(&mut self.initial.iter().map(|&(_, n)| n));
        if started != traces {
            return bad(format!(
                "groups[{index}].initial counts {started} traces starting, but `traces` is {traces}"
            ));
        }
        let ended = sum(&mut self.ends.iter().map(|&(_, n)| n));
        if ended != traces {
            return bad(format!(
                "groups[{index}].ends counts {ended} traces ending, but `traces` is {traces}"
            ));
        }
        let moves = sum(&mut self
            .transitions
            .iter()
            .chain(&self.invalid)
            .map(|&(_, _, n)| n));
        if u128::from(self.steps) != moves + traces {
            return bad(format!(
                "groups[{index}].steps is {}, but the moves (transitions and invalid: {moves}) and the traces' last steps ({traces}) add up to {}",
                self.steps,
                moves + traces
            ));
        }
        // Every state entered as often as it is left.
        let mut balance: HashMap<&StateKey, (u128, u128)> = HashMap::new();
        for (s, n) in &self.initial {
            balance.entry(s).or_default().0 += u128::from(*n);
        }
        for (f, t, n) in self.transitions.iter().chain(&self.invalid) {
            balance.entry(t).or_default().0 += u128::from(*n);
            balance.entry(f).or_default().1 += u128::from(*n);
        }
        for (s, n) in &self.ends {
            balance.entry(s).or_default().1 += u128::from(*n);
        }
        // (In `states` order, so that the error names the first such state.)
        for s in &self.states {
            if let Some(&(entered, left)) = balance.get(s) {
                if entered != left {
                    return bad(format!(
                        "groups[{index}]: state {} is entered {entered} times (as a trace's start or a move's target) but left {left} times (by a move or a trace's end)",
                        s.display()
                    ));
                }
            }
        }
        Ok(())
    }

    fn what(&self) -> String {
        match &self.category {
            Some(c) => format!("category `{c}`"),
            None => "the counts".to_string(),
        }
    }
}

impl StateKey {
    /// The key as shown in messages: `name` or `(a,b)`.
    pub fn display(&self) -> String {
        match self {
            StateKey::Name(n) => format!("`{n}`"),
            StateKey::Tuple(t) => format!("({})", t.join(",")),
        }
    }
}

fn check_shape(s: &StateKey, order: usize) -> Result<()> {
    match (s, order) {
        (StateKey::Name(_), 1) => Ok(()),
        (StateKey::Tuple(t), k) if k > 1 && (1..=k).contains(&t.len()) => Ok(()),
        (s, 1) => Err(LearnError::BadCounts(format!(
            "state {} is a tuple, but the counts are of order 1 (a state is a name)",
            s.display()
        ))),
        (s, k) => Err(LearnError::BadCounts(format!(
            "state {} is not a tuple of 1 to {k} names (the counts are of order {k})",
            s.display()
        ))),
    }
}

/// One category's counts being summed.
#[derive(Default)]
struct GroupSum {
    traces: u64,
    steps: u64,
    states: Vec<StateKey>,
    seen: HashMap<StateKey, ()>,
    initial: BTreeMap<StateKey, u64>,
    transitions: BTreeMap<(StateKey, StateKey), u64>,
    invalid: BTreeMap<(StateKey, StateKey), u64>,
    ends: BTreeMap<StateKey, u64>,
}

fn add_to<K: Ord>(map: &mut BTreeMap<K, u64>, key: K, n: u64) -> Result<()> {
    let e = map.entry(key).or_insert(0);
    *e = e
        .checked_add(n)
        .ok_or_else(|| LearnError::BadCounts("the counts add up past 2^64 - 1".into()))?;
    Ok(())
}

impl GroupSum {
    fn add(&mut self, g: &GroupCounts) -> Result<()> {
        let overflow = || LearnError::BadCounts("the counts add up past 2^64 - 1".into());
        self.traces = self.traces.checked_add(g.traces).ok_or_else(overflow)?;
        self.steps = self.steps.checked_add(g.steps).ok_or_else(overflow)?;
        for s in &g.states {
            if self.seen.insert(s.clone(), ()).is_none() {
                self.states.push(s.clone());
            }
        }
        for (s, n) in &g.initial {
            add_to(&mut self.initial, s.clone(), *n)?;
        }
        for (f, t, n) in &g.transitions {
            add_to(&mut self.transitions, (f.clone(), t.clone()), *n)?;
        }
        for (f, t, n) in &g.invalid {
            add_to(&mut self.invalid, (f.clone(), t.clone()), *n)?;
        }
        for (s, n) in &g.ends {
            add_to(&mut self.ends, s.clone(), *n)?;
        }
        Ok(())
    }

    fn finish(self, category: Option<String>) -> GroupCounts {
        GroupCounts {
            category,
            traces: self.traces,
            steps: self.steps,
            states: self.states,
            initial: self.initial.into_iter().collect(),
            transitions: self
                .transitions
                .into_iter()
                .map(|((f, t), n)| (f, t, n))
                .collect(),
            invalid: self
                .invalid
                .into_iter()
                .map(|((f, t), n)| (f, t, n))
                .collect(),
            ends: self.ends.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three traces: `ok bad`, `ok ok`, `ok ok` (the docs' example, docs/scale.md).
    fn three_traces() -> KeyedCounts {
        serde_json::from_str(
            r#"{"format":"augur-counts","version":1,"order":1,"end_state":null,"groups":[{"category":null,"traces":3,"steps":6,"states":["ok","bad"],"initial":[["ok",3]],"transitions":[["ok","bad",1],["ok","ok",2]],"invalid":[],"ends":[["bad",1],["ok",2]]}]}"#,
        )
        .unwrap()
    }

    fn refused(c: &KeyedCounts) -> String {
        c.check().unwrap_err().to_string()
    }

    /// Issue 43: counts that no traces give are refused, each error naming the entry.
    #[test]
    fn counts_are_cross_checked() {
        let good = three_traces();
        good.check().unwrap();
        // A key twice (it was summed).
        let mut c = good.clone();
        c.groups[0].transitions = vec![
            (StateKey::Name("ok".into()), StateKey::Name("bad".into()), 1),
            (StateKey::Name("ok".into()), StateKey::Name("ok".into()), 1),
            (StateKey::Name("ok".into()), StateKey::Name("ok".into()), 1),
        ];
        let e = refused(&c);
        assert!(
            e.contains(
                "groups[0].transitions[2] lists `ok` -> `ok` again (first at transitions[1])"
            ),
            "{e}"
        );
        // Steps that the moves and trace ends do not add up to.
        let mut c = good.clone();
        c.groups[0].steps = 60;
        let e = refused(&c);
        assert!(e.contains("groups[0].steps is 60, but the moves (transitions and invalid: 3) and the traces' last steps (3) add up to 6"), "{e}");
        // Trace starts or ends that are not the traces.
        let mut c = good.clone();
        c.groups[0].initial[0].1 = 2;
        assert!(
            refused(&c).contains("groups[0].initial counts 2 traces starting, but `traces` is 3")
        );
        let mut c = good.clone();
        c.groups[0].ends[0].1 = 2;
        assert!(refused(&c).contains("groups[0].ends counts 4 traces ending"));
        // A trace ending in a state no trace enters (the totals agree: a move went elsewhere).
        let mut c = good.clone();
        c.groups[0].states.push(StateKey::Name("never".into()));
        c.groups[0].ends = vec![
            (StateKey::Name("bad".into()), 1),
            (StateKey::Name("never".into()), 1),
            (StateKey::Name("ok".into()), 1),
        ];
        let e = refused(&c);
        assert!(
            e.contains("state `ok` is entered 5 times (as a trace's start or a move's target) but left 4 times"),
            "{e}"
        );
        // The sum of consistent shards is consistent.
        KeyedCounts::sum(&[good.clone(), good])
            .unwrap()
            .check()
            .unwrap();
    }
}
