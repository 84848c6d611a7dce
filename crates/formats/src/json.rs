//! Augur's own JSON model format ([`DtmcJson`], serde).
//!
//! ```json
//! {
//!   "states": 3,
//!   "initial": [0],
//!   "transitions": [[0, 1, 0.5], [0, 2, 0.5], [1, 1, 1.0], [2, 2, 1.0]],
//!   "labels": {"goal": [2]},
//!   "rewards": [{"name": "steps", "state": [1, 0, 0]}],
//!   "valuations": {"names": ["x"], "types": ["int"], "states": [[0], [1], [2]]}
//! }
//! ```
//!
//! `transitions` is a list of `[src, dst, prob]`; alternatively `rows` gives, for each state in
//! order, a list of `[dst, prob]`. `labels` is an object (name → states) or a list of
//! `{"name": .., "states": [..]}` (the writer uses the list, which keeps label order).
//! A reward structure has an optional `name`, an optional dense `state` vector and optional
//! `transitions` as `[src, dst, reward]`. `initial` may be omitted when an `"init"` label
//! exists. `counts` and `metadata` are passed through untouched (the learning code stores
//! transition counts there).
//!
//! An interval DTMC (docs/robust.md) gives `intervals` in place of `transitions`: one object
//! `{"src": 0, "dst": 1, "lo": 0.3, "hi": 0.5}` per transition ([`IntervalJson`]; a point
//! probability is `lo = hi`). Each interval is checked (`lo ≤ hi`, within `[0, 1]`, located at
//! its `lo`) and each state's intervals must hold a distribution (`Σlo ≤ 1 ≤ Σhi`).
//!
//! A learned model may instead keep its rows implicit (see [`crate::smoothing`]): a
//! `smoothing` field in place of `transitions`/`rows`, applied to the observed counts of
//! `counts.transitions` (`counts.num_states` must equal `states`):
//!
//! ```json
//! {
//!   "states": 3,
//!   "initial": [0],
//!   "smoothing": {"alpha": 0.5, "unobserved": "uniform",
//!                 "successor_sets": ["all", [2]], "successors": [0, 1, 0]},
//!   "counts": {"num_states": 3, "transitions": [[0, 1, 3], [0, 2, 1]]}
//! }
//! ```
//!
//! `successor_sets` lists the distinct sets of valid successors (`"all"`, or states in
//! increasing order), `successors` gives each state's set, `unobserved` (`"uniform"`, the
//! default, or `"absorbing"`) what an unobserved row becomes when α = 0. The reader counts the
//! transitions the rows make and refuses more than [`ReadOptions::max_smoothed_transitions`]
//! (located at `smoothing`) before making them; a bad rule or count is located at its value.

use crate::error::{FormatError, Place, Result};
use crate::io::ReadOptions;
use crate::smoothing::{SmoothedRows, Smoothing, SmoothingError};
use augur_dtmc::DtmcError;
use augur_dtmc::{BuildReport, DtmcBuilder};
use augur_dtmc::{Dtmc, Valuations};
use augur_expr::{Type, Value};
use augur_source::json::JsonPath;
use augur_source::{Location, Span};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// A label in the list form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelJson {
    /// The label's name.
    pub name: String,
    /// Its states.
    pub states: Vec<u32>,
}

/// Labels: a list (keeps order) or an object name → states.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LabelsJson {
    /// `[{"name": "goal", "states": [2]}]`
    List(Vec<LabelJson>),
    /// `{"goal": [2]}` (in file order; a name given twice is an error when building, not
    /// silently the last one).
    Map(LabelMap),
}

/// The object form of the labels, `{"goal": [2]}`: every entry, in file order, duplicates
/// kept (a map would keep only the last of two entries with the same name).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LabelMap(pub Vec<(String, Vec<u32>)>);

impl Serialize for LabelMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for LabelMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = LabelMap;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of label names to lists of states")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<LabelMap, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Vec<u32>>()? {
                    entries.push((k, v));
                }
                Ok(LabelMap(entries))
            }
        }
        d.deserialize_map(Visitor)
    }
}

impl Default for LabelsJson {
    fn default() -> Self {
        LabelsJson::List(Vec::new())
    }
}

/// A reward structure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewardJson {
    /// The structure's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One reward per state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Vec<f64>>,
    /// `[src, dst, reward]` triples (zero rewards may be omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transitions: Option<Vec<(u32, u32, f64)>>,
}

/// State valuations: variable names, their types, one row of values per state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValuationsJson {
    /// Variable names.
    pub names: Vec<String>,
    /// Variable types (`"int"`, `"double"`, `"bool"`).
    pub types: Vec<Type>,
    /// One list of values per state.
    pub states: Vec<Vec<Value>>,
}

/// A transition of an interval DTMC: `src -> dst` with probability in `[lo, hi]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalJson {
    /// Source state.
    pub src: u32,
    /// Target state.
    pub dst: u32,
    /// Lower bound of the probability.
    pub lo: f64,
    /// Upper bound of the probability.
    pub hi: f64,
}

/// The JSON document of a DTMC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DtmcJson {
    /// Number of states.
    pub states: usize,
    /// Initial states (default: the `"init"` label).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub initial: Vec<u32>,
    /// `[src, dst, prob]` triples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transitions: Option<Vec<(u32, u32, f64)>>,
    /// Alternatively: per state, `[dst, prob]` pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Vec<(u32, f64)>>>,
    /// Alternatively (an interval DTMC): every transition with its probability interval,
    /// `{"src": 0, "dst": 1, "lo": 0.3, "hi": 0.5}` (a point probability is `lo = hi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals: Option<Vec<IntervalJson>>,
    /// Alternatively (a learned model): the smoothing rule, applied to the observed counts of
    /// `counts.transitions` (see [`crate::smoothing`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoothing: Option<Smoothing>,
    /// Labels.
    #[serde(default)]
    pub labels: LabelsJson,
    /// Reward structures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewards: Vec<RewardJson>,
    /// State valuations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valuations: Option<ValuationsJson>,
    /// Transition counts (learned models); passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<serde_json::Value>,
    /// Free-form metadata; passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
}

impl DtmcJson {
    /// The JSON form of a model (transitions as triples, labels as a list).
    pub fn from_dtmc(d: &Dtmc) -> Self {
        let mut transitions = Vec::with_capacity(d.num_transitions());
        for s in 0..d.num_states() {
            transitions.extend(d.successors(s).map(|(t, p)| (s as u32, t, p)));
        }
        let labels = LabelsJson::List(
            d.labels
                .iter()
                .map(|(n, set)| LabelJson {
                    name: n.clone(),
                    states: set.ones().map(|s| s as u32).collect(),
                })
                .collect(),
        );
        let rewards = d
            .rewards
            .iter()
            .map(|r| RewardJson {
                name: r.name.clone(),
                state: r.state.clone(),
                transitions: r.transition.as_ref().map(|v| {
                    let mut out = Vec::new();
                    for s in 0..d.num_states() {
                        for k in d.row_range(s) {
                            if let Some(&x) = v.get(k) {
                                if x != 0.0 {
                                    out.push((s as u32, d.matrix.indices()[k], x));
                                }
                            }
                        }
                    }
                    out
                }),
            })
            .collect();
        let valuations = d.valuations.as_ref().map(|v| ValuationsJson {
            names: v.names.clone(),
            types: v.types.clone(),
            states: (0..v.num_states())
                .map(|s| v.row(s).unwrap_or_default())
                .collect(),
        });
        let intervals = d.intervals.as_ref().map(|iv| {
            let mut out = Vec::with_capacity(d.num_transitions());
            for s in 0..d.num_states() {
                for k in d.row_range(s) {
                    out.push(IntervalJson {
                        src: s as u32,
                        dst: d.matrix.indices()[k],
                        lo: iv.lo[k],
                        hi: iv.hi[k],
                    });
                }
            }
            out
        });
        DtmcJson {
            states: d.num_states(),
            initial: d.initial.clone(),
            transitions: if intervals.is_some() {
                None
            } else {
                Some(transitions)
            },
            rows: None,
            intervals,
            smoothing: None,
            labels,
            rewards,
            valuations,
            counts: None,
            metadata: None,
        }
    }

    /// Builds the model. Errors name the place in the document as a
    /// [`FormatError::AtJsonPath`] (e.g. `transitions[3][1]: state 7 out of range (3 states)`),
    /// which [`read_json`] locates in the text.
    pub fn to_dtmc(&self, opts: &ReadOptions) -> Result<(Dtmc, BuildReport)> {
        let n = self.states;
        let root = JsonPath::root;
        let invalid = |p: JsonPath, m: String| DtmcError::Invalid(m).at_json_path(p);
        // The element of a `[src, dst, x]` triple (or `[dst, x]` pair: `first` = 1) that an
        // error of `add_transition`-like calls is about.
        let element = |e: &DtmcError, src: u32, first: usize| match e {
            DtmcError::StateOutOfRange { state, .. } if *state == u64::from(src) && first == 0 => 0,
            DtmcError::StateOutOfRange { .. } => 1 - first,
            _ => 2 - first,
        };
        if let Some(max) = opts.max_states.filter(|&m| n > m) {
            return Err(invalid(
                root().key("states"),
                format!(
                    "the file declares {n} states, more than the limit of {max} \
                     (raise it with --max-states)"
                ),
            ));
        }
        let mut b = DtmcBuilder::new(n);
        // For each state, the index of its last transition in `transitions` (to locate row
        // errors; empty for the `rows` form, whose rows are their own places).
        let mut last: Vec<u32> = Vec::new();
        if let Some(iv) = &self.intervals {
            if self.transitions.is_some() || self.rows.is_some() || self.smoothing.is_some() {
                return Err(invalid(
                    root().key("intervals"),
                    "give either `intervals` or `transitions`/`rows`/`smoothing`, not both".into(),
                ));
            }
            self.interval_rows(iv, &mut b)?;
        }
        match (&self.transitions, &self.rows, &self.smoothing) {
            (Some(_), Some(_), _) => {
                return Err(invalid(
                    root().key("rows"),
                    "give either `transitions` or `rows`, not both".into(),
                ))
            }
            (Some(_), None, Some(_)) | (None, Some(_), Some(_)) => {
                return Err(invalid(
                    root().key("smoothing"),
                    "give either `transitions`, `rows` or `smoothing`, not two of them".into(),
                ))
            }
            (None, None, None) if self.intervals.is_some() => {}
            (None, None, None) => {
                return Err(invalid(
                    root(),
                    "missing `transitions` (or `rows`, or `smoothing`)".into(),
                ))
            }
            (None, None, Some(rule)) => {
                let rows = self.smoothed_rows(rule)?;
                let count = rows.num_transitions();
                if let Some(limit) = opts.max_smoothed_transitions {
                    if count > limit as u64 {
                        return Err(FormatError::TooManySmoothedTransitions {
                            states: n,
                            transitions: count,
                            limit,
                        }
                        .at_json_path(root().key("smoothing")));
                    }
                }
                b = DtmcBuilder::with_capacity(n, count as usize);
                let mut bad = None;
                rows.for_each_entry(|i, j, p| {
                    if bad.is_none() {
                        bad = b.add_transition(i, j, p).err();
                    }
                });
                if let Some(e) = bad {
                    return Err(e.at_json_path(root().key("smoothing")));
                }
            }
            (Some(ts), None, None) => {
                for (i, &(s, t, p)) in ts.iter().enumerate() {
                    b.add_transition(s, t, p).map_err(|e| {
                        let k = element(&e, s, 0);
                        e.at_json_path(root().key("transitions").index(i).index(k))
                    })?;
                    // (`s` is a state of the model: `add_transition` checked it.)
                    if last.len() <= s as usize {
                        last.resize(s as usize + 1, u32::MAX);
                    }
                    last[s as usize] = i as u32;
                }
            }
            (None, Some(rows), None) => {
                if rows.len() != n {
                    return Err(invalid(
                        root().key("rows"),
                        format!("`rows` has {} rows for {n} states", rows.len()),
                    ));
                }
                for (s, row) in rows.iter().enumerate() {
                    for (j, &(t, p)) in row.iter().enumerate() {
                        b.add_transition(s as u32, t, p).map_err(|e| {
                            let k = element(&e, s as u32, 1);
                            e.at_json_path(root().key("rows").index(s).index(j).index(k))
                        })?;
                    }
                }
            }
        }
        // Labels, with the place of each one's list of states.
        let labels: Vec<(&str, &[u32], JsonPath)> = match &self.labels {
            LabelsJson::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let p = root().key("labels").index(i).key("states");
                    (x.name.as_str(), &x.states[..], p)
                })
                .collect(),
            LabelsJson::Map(m) => {
                m.0.iter()
                    .map(|(k, v)| (k.as_str(), &v[..], root().key("labels").key(k.clone())))
                    .collect()
            }
        };
        let mut seen = std::collections::HashSet::new();
        for (i, (name, _, _)) in labels.iter().enumerate() {
            if !seen.insert(*name) {
                let place = match &self.labels {
                    LabelsJson::List(_) => root().key("labels").index(i).key("name"),
                    LabelsJson::Map(_) => root().key("labels").key(name.to_string()),
                };
                return Err(invalid(place, format!("label \"{name}\" defined twice")));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (i, r) in self.rewards.iter().enumerate() {
            if let Some(name) = &r.name {
                if !seen.insert(name.as_str()) {
                    return Err(invalid(
                        root().key("rewards").index(i).key("name"),
                        format!("reward structure \"{name}\" defined twice"),
                    ));
                }
            }
        }
        for (name, states, place) in &labels {
            b.label_index(name);
            for (k, &s) in states.iter().enumerate() {
                b.add_label_state(name, s)
                    .map_err(|e| e.at_json_path(place.clone().index(k)))?;
            }
        }
        let mut initial: Vec<u32> = self.initial.clone();
        let mut initial_place = root().key("initial");
        if initial.is_empty() {
            if let Some((_, st, place)) = labels.iter().find(|(n, _, _)| *n == "init") {
                initial = st.to_vec();
                initial_place = place.clone();
            }
        }
        for (k, &s) in initial.iter().enumerate() {
            b.add_initial(s)
                .map_err(|e| e.at_json_path(initial_place.clone().index(k)))?;
        }
        for (i, r) in self.rewards.iter().enumerate() {
            let k = b.add_reward_structure(r.name.as_deref());
            let at = |x: &str| root().key("rewards").index(i).key(x);
            if let Some(v) = &r.state {
                if v.len() != n {
                    return Err(invalid(
                        at("state"),
                        format!("{} values for {n} states", v.len()),
                    ));
                }
                b.declare_state_rewards(k)?;
                for (s, &x) in v.iter().enumerate() {
                    if x != 0.0 || !x.is_finite() {
                        b.add_state_reward(k, s as u32, x)
                            .map_err(|e| e.at_json_path(at("state").index(s)))?;
                    }
                }
            }
            if let Some(ts) = &r.transitions {
                b.declare_transition_rewards(k)?;
                for (j, &(s, t, x)) in ts.iter().enumerate() {
                    b.add_transition_reward(k, s, t, x).map_err(|e| {
                        let p = at("transitions").index(j);
                        let p = match &e {
                            DtmcError::StateOutOfRange { state, .. } if *state == u64::from(s) => {
                                p.index(0)
                            }
                            DtmcError::StateOutOfRange { .. } => p.index(1),
                            DtmcError::BadReward { .. } => p.index(2),
                            _ => p,
                        };
                        e.at_json_path(p)
                    })?;
                }
            }
        }
        if let Some(v) = &self.valuations {
            b.set_valuations(valuations_from_json(v, n)?);
        }
        b.fix_deadlocks(opts.fix_deadlocks);
        let row_place = |s: u32| -> Option<JsonPath> {
            if self.rows.is_some() {
                return Some(root().key("rows").index(s as usize));
            }
            if self.smoothing.is_some() {
                return Some(root().key("smoothing"));
            }
            let i = *last.get(s as usize).filter(|&&i| i != u32::MAX)?;
            Some(root().key("transitions").index(i as usize).index(2))
        };
        let (dtmc, report) = b.build().map_err(|e| {
            let place = match &e {
                DtmcError::RowSum { state, .. } => row_place(*state),
                DtmcError::BadProbability { src, .. } => row_place(*src),
                DtmcError::NoInitialState => Some(root().key("initial")),
                _ => None,
            };
            match place {
                Some(p) => e.at_json_path(p),
                None => e.into(),
            }
        })?;
        let Some(iv) = &self.intervals else {
            return Ok((dtmc, report));
        };
        let dtmc = Dtmc::from_interval_entries(dtmc, iv.iter().map(|e| (e.src, e.dst, e.lo, e.hi)))
            .map_err(|p| invalid(root().key("intervals"), p.message(&|x| x.to_string())))?;
        Ok((dtmc, report))
    }

    /// Checks an interval DTMC's transitions (each interval, then each row) and adds one
    /// resolution of every row (`lo + t·(hi − lo)`) to `b`.
    fn interval_rows(&self, iv: &[IntervalJson], b: &mut DtmcBuilder) -> Result<()> {
        let n = self.states;
        let at = |i: usize, k: &str| JsonPath::root().key("intervals").index(i).key(k);
        let invalid = |p: JsonPath, m: String| DtmcError::Invalid(m).at_json_path(p);
        for (i, e) in iv.iter().enumerate() {
            for (k, s) in [("src", e.src), ("dst", e.dst)] {
                if s as usize >= n {
                    return Err(invalid(
                        at(i, k),
                        format!("state {s} out of range ({n} states)"),
                    ));
                }
            }
            if !augur_dtmc::interval::interval_ok(e.lo, e.hi) {
                let what = if e.lo > e.hi {
                    "has lo > hi"
                } else {
                    "is not within [0, 1]"
                };
                return Err(invalid(
                    at(i, "lo"),
                    format!("interval [{}, {}] {what}", e.lo, e.hi),
                ));
            }
        }
        let mut order: Vec<usize> = (0..iv.len()).collect();
        order.sort_by_key(|&i| (iv[i].src, iv[i].dst));
        let mut start = 0;
        while start < order.len() {
            let s = iv[order[start]].src;
            let end = start
                + order[start..]
                    .iter()
                    .take_while(|&&i| iv[i].src == s)
                    .count();
            let row = &order[start..end];
            let (sl, sh) = row
                .iter()
                .fold((0.0, 0.0), |(x, y), &i| (x + iv[i].lo, y + iv[i].hi));
            let t = augur_dtmc::interval::row_resolution(s, sl, sh).map_err(|p| {
                let last = row.iter().copied().max().unwrap_or(0);
                invalid(at(last, "src"), p.message(&|x| x.to_string()))
            })?;
            for &i in row {
                let p = iv[i].lo + t * (iv[i].hi - iv[i].lo);
                if p > 0.0 {
                    b.add_transition(s, iv[i].dst, p)
                        .map_err(|e| e.at_json_path(at(i, "dst")))?;
                }
            }
            start = end;
        }
        Ok(())
    }
}

impl DtmcJson {
    /// The implicit rows of a learned model: `rule` over the observed counts of
    /// `counts.transitions` (`counts.num_states` must be the model's number of states). Errors
    /// name the place in the document.
    pub fn smoothed_rows(&self, rule: &Smoothing) -> Result<SmoothedRows> {
        let root = JsonPath::root;
        let invalid = |p: JsonPath, m: String| DtmcError::Invalid(m).at_json_path(p);
        let n = self.states;
        let Some(counts) = &self.counts else {
            return Err(invalid(
                root().key("smoothing"),
                "`smoothing` needs the observed counts in `counts` (`num_states`, `transitions`)"
                    .into(),
            ));
        };
        let counts: CountsPart = serde_path_to_error::deserialize(counts).map_err(|e| {
            let mut p = root().key("counts");
            for seg in e.path().iter() {
                p = match seg {
                    serde_path_to_error::Segment::Seq { index } => p.index(*index),
                    serde_path_to_error::Segment::Map { key } => p.key(key.clone()),
                    _ => p,
                };
            }
            invalid(p, e.into_inner().to_string())
        })?;
        if counts.num_states != n {
            return Err(invalid(
                root().key("counts").key("num_states"),
                format!(
                    "the counts are over {} states, the model has {n}",
                    counts.num_states
                ),
            ));
        }
        SmoothedRows::new(n, rule.clone(), &counts.transitions).map_err(|e| {
            let s = || root().key("smoothing");
            let c = |i: usize| root().key("counts").key("transitions").index(i);
            let place = match &e {
                SmoothingError::BadAlpha(_) | SmoothingError::AlphaTooLarge { .. } => {
                    s().key("alpha")
                }
                SmoothingError::SuccessorsLength { .. } => s().key("successors"),
                SmoothingError::NoSuchSet { state, .. } => s().key("successors").index(*state),
                SmoothingError::BadSet { set, position, .. } => {
                    s().key("successor_sets").index(*set).index(*position)
                }
                SmoothingError::CountState { index, element, .. } => c(*index).index(*element),
                SmoothingError::CountNotValid { index, .. } => c(*index).index(1),
                SmoothingError::CountOverflow { index, .. } => c(*index).index(2),
            };
            FormatError::from(e).at_json_path(place)
        })
    }
}

/// The part of a learned model's `counts` that its implicit rows use.
#[derive(Deserialize)]
struct CountsPart {
    num_states: usize,
    transitions: Vec<(u32, u32, u64)>,
}

fn valuations_from_json(v: &ValuationsJson, n: usize) -> Result<Valuations> {
    let at = || JsonPath::root().key("valuations");
    let invalid = |p: JsonPath, m: String| DtmcError::Invalid(m).at_json_path(p);
    let k = v.names.len();
    if v.types.len() != k {
        return Err(invalid(
            at().key("types"),
            format!("{k} names but {} types", v.types.len()),
        ));
    }
    let mut distinct = std::collections::HashSet::new();
    if let Some(j) = (0..k).find(|&j| !distinct.insert(v.names[j].as_str())) {
        return Err(invalid(
            at().key("names").index(j),
            format!("variable `{}` listed twice", v.names[j]),
        ));
    }
    if v.states.len() != n {
        return Err(invalid(
            at().key("states"),
            format!("{} rows for {n} states", v.states.len()),
        ));
    }
    let mut values = Vec::with_capacity(n * k);
    for (s, row) in v.states.iter().enumerate() {
        if row.len() != k {
            return Err(invalid(
                at().key("states").index(s),
                format!("{} values for {k} variables", row.len()),
            ));
        }
        for (j, (val, ty)) in row.iter().zip(&v.types).enumerate() {
            let val = match (val, ty) {
                (Value::Int(i), Type::Double) => Value::Double(*i as f64),
                (Value::Int(_), Type::Int)
                | (Value::Double(_), Type::Double)
                | (Value::Bool(_), Type::Bool) => *val,
                _ => {
                    return Err(invalid(
                        at().key("states").index(s).index(j),
                        format!("{val} is not of type {ty} (variable {})", v.names[j]),
                    ))
                }
            };
            values.push(val);
        }
    }
    Ok(Valuations::new(v.names.clone(), v.types.clone(), values))
}

/// Reads a JSON model. Syntax and shape errors carry line and column (and the JSON path of
/// the value being read); model errors are located at the value they are about (e.g.
/// `transitions[3][1]: state 7 out of range (3 states)`, with a caret under the `7`).
pub fn read_json(
    reader: impl BufRead,
    path: &Path,
    opts: &ReadOptions,
) -> Result<(Dtmc, BuildReport)> {
    let text = read_text(reader, path)?;
    let doc = parse_json_document(&text, path)?;
    doc.to_dtmc(opts)
        .map_err(|e| locate_json_error(e, &text, path))
}

/// Reads the JSON document without building the model (for access to `counts`/`metadata`).
pub fn read_json_document(reader: impl BufRead, path: &Path) -> Result<DtmcJson> {
    parse_json_document(&read_text(reader, path)?, path)
}

/// The whole text of a JSON file, without a UTF-8 byte-order mark (Windows editors), which
/// serde_json rejects.
fn read_text(mut reader: impl BufRead, path: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|source| FormatError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let mut text = augur_source::decode_utf8(&path.display().to_string(), bytes).map_err(|d| {
        FormatError::syntax(
            d.location
                .clone()
                .unwrap_or_else(|| Location::file(path.display().to_string())),
            d.message,
        )
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Parses `text` (the contents of `path`) as a [`DtmcJson`] document. Errors carry the line
/// and column serde reports, and the path of the value being read.
pub fn parse_json_document(text: &str, path: &Path) -> Result<DtmcJson> {
    parse_json(text, path)
}

/// Parses `text` (the contents of `path`) as any JSON document `T` (e.g. transition counts),
/// with errors located as for [`parse_json_document`] ([`augur_source::json::parse_json`]).
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T> {
    augur_source::json::parse_json(text, &path.display().to_string()).map_err(|d| {
        let d = *d;
        let location = d
            .location
            .unwrap_or_else(|| Location::file(path.display().to_string()));
        FormatError::syntax(location, d.message)
    })
}

/// The location of a model error at a JSON path ([`FormatError::AtJsonPath`]) in `text`.
fn locate_json_error(e: FormatError, text: &str, path: &Path) -> FormatError {
    let location = match &e {
        FormatError::AtJsonPath { path: p, .. } => match p.span_in(text) {
            Some(span) => location_in(text, path, span),
            None => Location::file(path.display().to_string()),
        },
        _ => Location::file(path.display().to_string()),
    };
    e.in_file(location)
}

/// The location of `span` of `text` (the contents of `path`).
fn location_in(text: &str, path: &Path, span: Span) -> Location {
    augur_source::json::location_in(text, &path.display().to_string(), span)
}

/// Writes a model as JSON (one line per transition triple for readability).
pub fn write_json(d: &Dtmc, w: &mut dyn Write) -> Result<()> {
    write_json_document(&DtmcJson::from_dtmc(d), w)
}

/// Writes a JSON document (e.g. one with `counts` filled in).
pub fn write_json_document(doc: &DtmcJson, w: &mut dyn Write) -> Result<()> {
    serde_json::to_writer(&mut *w, doc).map_err(|e| FormatError::Write(e.into()))?;
    writeln!(w)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `n` characters of the located line from the caret on.
    fn text_at(loc: &augur_source::Location, n: usize) -> String {
        let line = loc.line_text.as_deref().unwrap_or("");
        line.chars().skip(loc.column - 1).take(n).collect()
    }
    use std::io::Cursor;

    fn read(text: &str) -> Result<(Dtmc, BuildReport)> {
        read_json(
            Cursor::new(text.as_bytes()),
            Path::new("m.json"),
            &ReadOptions::default(),
        )
    }

    #[test]
    fn round_trip() {
        let d = crate::explicit::tests::sample();
        let mut out = Vec::new();
        write_json(&d, &mut out).unwrap();
        let (back, _) = read(std::str::from_utf8(&out).unwrap()).unwrap();
        crate::explicit::tests::assert_same(&d, &back);
    }

    #[test]
    fn hand_written_forms() {
        let (d, _) = read(
            r#"{"states": 2, "rows": [[[0, 0.5], [1, 0.5]], [[1, 1]]],
                "labels": {"init": [0], "done": [1]},
                "rewards": [{"name": "steps", "state": [1, 0]}],
                "valuations": {"names": ["x", "y"], "types": ["double", "bool"], "states": [[0, true], [1.5, false]]},
                "counts": {"0": {"1": 3}}}"#,
        )
        .unwrap();
        assert_eq!(d.initial, vec![0]);
        assert_eq!(
            d.label_names().collect::<Vec<_>>(),
            // The object form keeps the file's order ("init" and "deadlock" first, as always).
            ["init", "deadlock", "done"]
        );
        assert_eq!(
            d.valuations.as_ref().unwrap().get(0, 0).unwrap(),
            Value::Double(0.0)
        );
        let doc = read_json_document(
            Cursor::new(
                &br#"{"states":1,"transitions":[[0,0,1]],"initial":[0],"counts":[1,2]}"#[..],
            ),
            Path::new("x.json"),
        )
        .unwrap();
        assert_eq!(doc.counts, Some(serde_json::json!([1, 2])));
    }

    /// A learned model kept implicitly: 3 states, every state a valid successor of 0 and 2,
    /// only 2 of 1; counts 0 -> 1 (3 times) and 0 -> 2 (once).
    fn smoothed(alpha: f64, sets: &str, successors: &str, counts: &str) -> String {
        format!(
            r#"{{"states": 3, "initial": [0],
"smoothing": {{"alpha": {alpha}, "successor_sets": {sets}, "successors": {successors}}},
"counts": {{"num_states": 3, "transitions": {counts}}}}}"#
        )
    }

    #[test]
    fn implicit_rows_are_made_on_reading() {
        let text = smoothed(
            0.5,
            r#"["all", [2]]"#,
            "[0, 1, 0]",
            "[[0, 1, 3], [0, 2, 1]]",
        );
        let (d, _) = read(&text).unwrap();
        // Row 0: (c + α) / (4 + 3α); row 1: its one valid successor; row 2: α / 3α each.
        let t0 = 4.0 + 0.5 * 3.0;
        assert_eq!(d.matrix.get(0, 0).copied(), Some(0.5 / t0));
        assert_eq!(d.matrix.get(0, 1).copied(), Some(3.5 / t0));
        assert_eq!(d.matrix.get(0, 2).copied(), Some(1.5 / t0));
        assert_eq!(d.matrix.get(1, 2).copied(), Some(1.0));
        assert_eq!(d.matrix.get(2, 1).copied(), Some(0.5 / 1.5));
        assert_eq!(d.num_transitions(), 7);
        // α = 0: empirical frequencies, and uniform rows where nothing was observed.
        let (d, _) = read(&smoothed(
            0.0,
            r#"["all"]"#,
            "[0, 0, 0]",
            "[[0, 1, 3], [0, 2, 1]]",
        ))
        .unwrap();
        assert_eq!(d.matrix.get(0, 1).copied(), Some(0.75));
        assert_eq!(d.matrix.get(0, 0), None);
        assert_eq!(d.matrix.get(1, 0).copied(), Some(1.0 / 3.0));
        // Too many transitions for the limit: refused, located at `smoothing`.
        let e = read_json(
            Cursor::new(text.as_bytes()),
            Path::new("m.json"),
            &ReadOptions {
                max_smoothed_transitions: Some(6),
                ..ReadOptions::default()
            },
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("m.json:2:14: smoothing: the smoothed model has 3 states and 7 transitions, more than the limit of 6 transitions"),
            "{m}"
        );
        assert!(m.contains("--max-smoothed-transitions"), "{m}");
    }

    #[test]
    fn malformed_implicit_rows_are_located() {
        let all = r#"["all"]"#;
        let ok_counts = "[[0, 1, 3]]";
        // (text, the text under the caret, message)
        let cases: Vec<(String, &str, &str)> = vec![
            (smoothed(-1.0, all, "[0, 0, 0]", ok_counts), "-1", "smoothing.alpha: invalid smoothing: alpha = -1"),
            (smoothed(0.0, all, "[0, 0]", ok_counts), "[0, 0]", "smoothing.successors: invalid smoothing: 2 entries for 3 states"),
            (smoothed(0.0, all, "[0, 0, 5]", ok_counts), "5", "smoothing.successors[2]: invalid smoothing: set 5 out of range (1 sets)"),
            (smoothed(0.0, "[[2, 1]]", "[0, 0, 0]", "[]"), "1", "smoothing.successor_sets[0][1]: invalid smoothing: the states of a set must be listed in increasing order"),
            (smoothed(0.0, "[[7]]", "[0, 0, 0]", "[]"), "7", "smoothing.successor_sets[0][0]: invalid smoothing: state 7 out of range (3 states)"),
            (smoothed(0.0, r#"["some"]"#, "[0, 0, 0]", "[]"), "\"some\"", "smoothing.successor_sets[0]: invalid value"),
            (smoothed(0.0, all, "[0, 0, 0]", "[[0, 9, 3]]"), "9", "counts.transitions[0][1]: invalid smoothing: state 9 out of range (3 states)"),
            (smoothed(0.0, "[[2]]", "[0, 0, 0]", "[[0, 1, 3]]"), "1", "counts.transitions[0][1]: invalid smoothing: state 1 is not a valid successor of state 0"),
            (smoothed(0.0, all, "[0, 0, 0]", "[[0, 1, 18446744073709551615], [0, 2, 1]]"), "1", "counts.transitions[1][2]: invalid smoothing: the counts of state 0 add up past 2^64 - 1"),
            (smoothed(1e308, all, "[0, 0, 0]", ok_counts), "1000", "smoothing.alpha: invalid smoothing: alpha = 1e308"),
            (smoothed(0.0, all, "[0, 0, 0]", r#"[[0, 1, "x"]]"#), "\"x\"", "counts.transitions[0][2]: invalid model: invalid type"),
            (
                r#"{"states": 3, "initial": [0], "smoothing": {"alpha": 0, "successor_sets": ["all"], "successors": [0, 0, 0]}}"#.into(),
                "{",
                "smoothing: invalid model: `smoothing` needs the observed counts",
            ),
            (
                r#"{"states": 3, "initial": [0], "smoothing": {"alpha": 0, "successor_sets": ["all"], "successors": [0, 0, 0]}, "counts": {"num_states": 2, "transitions": []}}"#.into(),
                "2",
                "counts.num_states: invalid model: the counts are over 2 states, the model has 3",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]], "smoothing": {"alpha": 0, "successor_sets": ["all"], "successors": [0]}}"#.into(),
                "{",
                "smoothing: invalid model: give either `transitions`, `rows` or `smoothing`",
            ),
        ];
        for (text, under, msg) in &cases {
            let e = read(text).unwrap_err();
            let m = e.to_string();
            assert!(m.contains(msg), "{m}");
            assert!(m.starts_with("m.json:"), "{m}");
            let loc = e.location().expect("located");
            let shown = text_at(loc, under.chars().count());
            assert_eq!(shown, *under, "{m}");
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let (d, _) =
            read("\u{feff}{\"states\": 1, \"initial\": [0], \"rows\": [[[0, 1]]]}").unwrap();
        assert_eq!(d.num_states(), 1);
    }

    #[test]
    fn malformed() {
        // (text, line, the text under the caret, message)
        let cases: &[(&str, usize, &str, &str)] = &[
            (
                "{\"states\": 2,\n \"transitions\": [[0, 1, 0.5]\n",
                2, // after the last character
                "",
                "EOF",
            ),
            (
                "{\"states\": 2,\n \"transitions\": [[0, 1, \"x\"]]}",
                2,
                "\"x\"",
                "transitions[0][2]: invalid type",
            ),
            (
                "{\"states\": 2,\n \"transitions\": [[0, 1, 1], [1, 1]]}",
                2,
                "[1, 1]",
                "transitions[1]: invalid length 2",
            ),
            (
                "{\"states\": 2,\n\n \"bogus\": 1}",
                3,
                "\"bogus\"",
                "unknown field `bogus`",
            ),
            (
                r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 1], [1, 7, 1]]}"#,
                1,
                "7",
                "transitions[1][1]: state 7 out of range (2 states)",
            ),
            (
                r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 1.5], [1, 1, 1]]}"#,
                1,
                "1.5",
                "transitions[0][2]: probability 1.5",
            ),
            (
                r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 0.9], [1, 1, 1]]}"#,
                1,
                "0.9",
                "transitions[0][2]: row of state 0 sums to 0.9",
            ),
            (
                r#"{"states": 2, "initial": [0], "rows": [[[1, 0.5]], [[1, 1]]]}"#,
                1,
                "[[1, 0.5]]",
                "rows[0]: row of state 0 sums to 0.5",
            ),
            (
                r#"{"states": 2, "transitions": [[0, 1, 1], [1, 1, 1]]}"#,
                0,
                "",
                "no initial state",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]], "labels": {"a": [3]}}"#,
                1,
                "3",
                "labels.a[0]: state 3 out of range (1 states)",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]],
                    "labels": [{"name": "a", "states": [0]}, {"name": "a", "states": []}]}"#,
                2,
                "\"a\"",
                "labels[1].name: invalid model: label \"a\" defined twice",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]],
                    "rewards": [{"name": "r", "state": [1]}, {"name": "r", "state": [2]}]}"#,
                2,
                "\"r\"",
                "rewards[1].name: invalid model: reward structure \"r\" defined twice",
            ),
            (
                r#"{"states": 2, "initial": [0], "rows": [[[1, 1]], [[1, 1]]],
                    "valuations": {"names": ["x"], "types": ["int"], "states": [[0], [true]]}}"#,
                2,
                "true",
                "valuations.states[1][0]: invalid model: true is not of type int",
            ),
        ];
        for (text, line, under, msg) in cases {
            let e = read(text).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.line().unwrap_or(0), *line, "{m}");
            if let Some(loc) = e.location().filter(|l| l.column > 0) {
                let shown = text_at(loc, loc.width);
                assert_eq!(shown, *under, "{m}");
            }
            assert!(m.contains(msg), "{m}");
            assert!(m.starts_with("m.json"), "{m}");
        }
    }
}
