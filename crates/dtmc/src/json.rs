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

use crate::builder::{BuildReport, DtmcBuilder};
use crate::error::{DtmcError, Result};
use crate::io::ReadOptions;
use crate::model::{Dtmc, Valuations};
use augur_expr::{Type, Value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
    /// `{"goal": [2]}`
    Map(BTreeMap<String, Vec<u32>>),
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
        DtmcJson {
            states: d.num_states(),
            initial: d.initial.clone(),
            transitions: Some(transitions),
            rows: None,
            labels,
            rewards,
            valuations,
            counts: None,
            metadata: None,
        }
    }

    /// Builds the model (errors are located by JSON path, e.g. `transitions[3]`).
    pub fn to_dtmc(&self, opts: &ReadOptions) -> Result<(Dtmc, BuildReport)> {
        let n = self.states;
        let ctx = |what: String, e: DtmcError| DtmcError::Invalid(format!("{what}: {e}"));
        let mut b = DtmcBuilder::new(n);
        match (&self.transitions, &self.rows) {
            (Some(_), Some(_)) => {
                return Err(DtmcError::Invalid(
                    "give either `transitions` or `rows`, not both".into(),
                ))
            }
            (None, None) => {
                return Err(DtmcError::Invalid(
                    "missing `transitions` (or `rows`)".into(),
                ))
            }
            (Some(ts), None) => {
                for (i, &(s, t, p)) in ts.iter().enumerate() {
                    b.add_transition(s, t, p)
                        .map_err(|e| ctx(format!("transitions[{i}]"), e))?;
                }
            }
            (None, Some(rows)) => {
                if rows.len() != n {
                    return Err(DtmcError::Invalid(format!(
                        "`rows` has {} rows for {n} states",
                        rows.len()
                    )));
                }
                for (s, row) in rows.iter().enumerate() {
                    for (j, &(t, p)) in row.iter().enumerate() {
                        b.add_transition(s as u32, t, p)
                            .map_err(|e| ctx(format!("rows[{s}][{j}]"), e))?;
                    }
                }
            }
        }
        let labels: Vec<(&str, &[u32])> = match &self.labels {
            LabelsJson::List(l) => l.iter().map(|x| (x.name.as_str(), &x.states[..])).collect(),
            LabelsJson::Map(m) => m.iter().map(|(k, v)| (k.as_str(), &v[..])).collect(),
        };
        for (i, (name, _)) in labels.iter().enumerate() {
            if labels[..i].iter().any(|(m, _)| m == name) {
                return Err(DtmcError::Invalid(format!(
                    "labels[{i}]: label \"{name}\" defined twice"
                )));
            }
        }
        for (i, r) in self.rewards.iter().enumerate() {
            if let Some(name) = &r.name {
                if self.rewards[..i]
                    .iter()
                    .any(|q| q.name.as_ref() == Some(name))
                {
                    return Err(DtmcError::Invalid(format!(
                        "rewards[{i}]: reward structure \"{name}\" defined twice"
                    )));
                }
            }
        }
        for (name, states) in &labels {
            b.label_index(name);
            for &s in *states {
                b.add_label_state(name, s)
                    .map_err(|e| ctx(format!("label \"{name}\""), e))?;
            }
        }
        let mut initial: Vec<u32> = self.initial.clone();
        if initial.is_empty() {
            if let Some((_, st)) = labels.iter().find(|(n, _)| *n == "init") {
                initial = st.to_vec();
            }
        }
        for &s in &initial {
            b.add_initial(s).map_err(|e| ctx("initial".into(), e))?;
        }
        for (i, r) in self.rewards.iter().enumerate() {
            let k = b.add_reward_structure(r.name.as_deref());
            let where_ = |x: &str| format!("rewards[{i}].{x}");
            if let Some(v) = &r.state {
                if v.len() != n {
                    return Err(DtmcError::Invalid(format!(
                        "{}: {} values for {n} states",
                        where_("state"),
                        v.len()
                    )));
                }
                b.declare_state_rewards(k)?;
                for (s, &x) in v.iter().enumerate() {
                    if x != 0.0 || !x.is_finite() {
                        b.add_state_reward(k, s as u32, x)
                            .map_err(|e| ctx(where_("state"), e))?;
                    }
                }
            }
            if let Some(ts) = &r.transitions {
                b.declare_transition_rewards(k)?;
                for (j, &(s, t, x)) in ts.iter().enumerate() {
                    b.add_transition_reward(k, s, t, x)
                        .map_err(|e| ctx(format!("rewards[{i}].transitions[{j}]"), e))?;
                }
            }
        }
        if let Some(v) = &self.valuations {
            b.set_valuations(valuations_from_json(v, n)?);
        }
        b.fix_deadlocks(opts.fix_deadlocks);
        b.build()
    }
}

fn valuations_from_json(v: &ValuationsJson, n: usize) -> Result<Valuations> {
    let k = v.names.len();
    if v.types.len() != k {
        return Err(DtmcError::Invalid(format!(
            "valuations: {k} names but {} types",
            v.types.len()
        )));
    }
    if v.states.len() != n {
        return Err(DtmcError::Invalid(format!(
            "valuations: {} rows for {n} states",
            v.states.len()
        )));
    }
    let mut values = Vec::with_capacity(n * k);
    for (s, row) in v.states.iter().enumerate() {
        if row.len() != k {
            return Err(DtmcError::Invalid(format!(
                "valuations.states[{s}]: {} values for {k} variables",
                row.len()
            )));
        }
        for (j, (val, ty)) in row.iter().zip(&v.types).enumerate() {
            let val = match (val, ty) {
                (Value::Int(i), Type::Double) => Value::Double(*i as f64),
                (Value::Int(_), Type::Int)
                | (Value::Double(_), Type::Double)
                | (Value::Bool(_), Type::Bool) => *val,
                _ => {
                    return Err(DtmcError::Invalid(format!(
                        "valuations.states[{s}][{j}]: {val:?} is not of type {ty:?} (variable {})",
                        v.names[j]
                    )))
                }
            };
            values.push(val);
        }
    }
    Ok(Valuations::new(v.names.clone(), v.types.clone(), values))
}

/// Reads a JSON model. Syntax and shape errors carry line and column; model errors name the
/// JSON path (e.g. `transitions[3]: state 7 out of range (3 states)`).
pub fn read_json(
    reader: impl BufRead,
    path: &Path,
    opts: &ReadOptions,
) -> Result<(Dtmc, BuildReport)> {
    read_json_document(reader, path)?
        .to_dtmc(opts)
        .map_err(|e| e.in_file(path, None))
}

/// Reads the JSON document without building the model (for access to `counts`/`metadata`).
pub fn read_json_document(mut reader: impl BufRead, path: &Path) -> Result<DtmcJson> {
    // Skip a UTF-8 byte-order mark (Windows editors), which serde_json rejects.
    let bom = reader
        .fill_buf()
        .map_err(|source| DtmcError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .starts_with(b"\xef\xbb\xbf");
    if bom {
        reader.consume(3);
    }
    serde_json::from_reader(reader).map_err(|e| {
        if e.is_io() {
            DtmcError::Io {
                path: path.to_path_buf(),
                source: e.into(),
            }
        } else {
            DtmcError::syntax(
                path,
                e.line().max(1),
                Some(e.column().max(1)),
                strip_position(&e),
            )
        }
    })
}

fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Writes a model as JSON (one line per transition triple for readability).
pub fn write_json(d: &Dtmc, w: &mut dyn Write) -> Result<()> {
    write_json_document(&DtmcJson::from_dtmc(d), w)
}

/// Writes a JSON document (e.g. one with `counts` filled in).
pub fn write_json_document(doc: &DtmcJson, w: &mut dyn Write) -> Result<()> {
    serde_json::to_writer(&mut *w, doc).map_err(|e| DtmcError::Write(e.into()))?;
    writeln!(w)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
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
            ["done", "init", "deadlock"]
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

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let (d, _) =
            read("\u{feff}{\"states\": 1, \"initial\": [0], \"rows\": [[[0, 1]]]}").unwrap();
        assert_eq!(d.num_states(), 1);
    }

    #[test]
    fn malformed() {
        let cases: &[(&str, Option<usize>, &str)] = &[
            (
                "{\"states\": 2,\n \"transitions\": [[0, 1, 0.5]\n",
                Some(3),
                "EOF",
            ),
            (
                "{\"states\": 2,\n \"transitions\": [[0, 1, \"x\"]]}",
                Some(2),
                "invalid type",
            ),
            (
                "{\"states\": 2,\n\n \"bogus\": 1}",
                Some(3),
                "unknown field `bogus`",
            ),
            (
                r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 1], [1, 7, 1]]}"#,
                None,
                "transitions[1]: state 7 out of range (2 states)",
            ),
            (
                r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 1.5], [1, 1, 1]]}"#,
                None,
                "transitions[0]: probability 1.5",
            ),
            (
                r#"{"states": 2, "initial": [0], "transitions": [[0, 1, 0.9], [1, 1, 1]]}"#,
                None,
                "row of state 0 sums to 0.9",
            ),
            (
                r#"{"states": 2, "transitions": [[0, 1, 1], [1, 1, 1]]}"#,
                None,
                "no initial state",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]], "labels": {"a": [3]}}"#,
                None,
                "label \"a\": state 3 out of range (1 states)",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]],
                    "labels": [{"name": "a", "states": [0]}, {"name": "a", "states": []}]}"#,
                None,
                "labels[1]: label \"a\" defined twice",
            ),
            (
                r#"{"states": 1, "initial": [0], "transitions": [[0, 0, 1]],
                    "rewards": [{"name": "r", "state": [1]}, {"name": "r", "state": [2]}]}"#,
                None,
                "rewards[1]: reward structure \"r\" defined twice",
            ),
        ];
        for (text, line, msg) in cases {
            let e = read(text).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.line(), *line, "{m}");
            assert!(m.contains(msg), "{m}");
            assert!(m.starts_with("m.json"), "{m}");
        }
    }
}
