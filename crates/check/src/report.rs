//! [`Report`]: the JSON of `augur check --json`, one serde type shared by every front-end (the
//! CLI prints it, the MCP server and the Python package return it). The schema is documented in
//! `docs/json.md`; [`SCHEMA_VERSION`] changes when a field changes meaning or disappears
//! (adding a field does not change it).

use crate::error::CheckError;
use crate::model::Model;
use crate::result::{Bounds, CheckResult, InitialFilter, Scalar};
use serde::de::{self, Deserializer};
use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

/// The version of the JSON schema of [`Report`] (`"schema_version"`).
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON document of `augur check --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The model checked.
    pub model: ModelSummary,
    /// One entry per property, in order.
    pub results: Vec<PropertyReport>,
    /// The model's and the properties' warnings (what the CLI prints as `warning: ...` on
    /// stderr): a nondeterministic choice resolved uniformly, a deadlock given a self-loop, a
    /// property ignored, ...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The model part of a [`Report`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSummary {
    /// Number of states.
    pub states: usize,
    /// Number of transitions (stored matrix entries).
    pub transitions: usize,
    /// The initial states.
    pub initial: Vec<u32>,
    /// Seconds spent reading and building the model.
    pub build_seconds: f64,
}

/// The result of one property in a [`Report`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropertyReport {
    /// The property's name, if any.
    pub name: Option<String>,
    /// The property as written (canonical text).
    pub property: String,
    /// The reported value: a number, `true`/`false`, `"inf"`/`"-inf"`; `null` on error.
    pub value: Option<Scalar>,
    /// Guaranteed bounds `[lo, hi]` of the value (sound methods), else `null`.
    pub bounds: Option<Bounds>,
    /// What computed the value; `null` on error.
    pub method: Option<String>,
    /// The exact rational of the value (`"1/3"`, `"12"`, `"-5/4"`) when it was computed
    /// exactly (`--method exact`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<String>,
    /// Seconds spent on the property.
    pub seconds: f64,
    /// How the value was obtained from several initial states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<FilterReport>,
    /// Remarks (undecided comparisons, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// On an interval model: the rows the reading scaled to hold a distribution, when the
    /// value was checked on them (absent otherwise, and always under `--method exact`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_rows_normalised: Option<u32>,
    /// For a top-level `print`/`printall` filter: `[state, value]` pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<Vec<(u32, Scalar)>>,
    /// With `--all-states`: the value of every state, in state order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub states: Option<Vec<Scalar>>,
    /// Why the property could not be checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// PRISM's filter over several initial states, as reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum FilterReport {
    /// Numeric property: the value is the minimum over the initial states.
    Range {
        /// Number of initial states.
        initial_states: usize,
        /// Smallest value.
        min: Scalar,
        /// Largest value.
        max: Scalar,
    },
    /// Boolean property: whether it holds in all the initial states.
    Forall {
        /// Number of initial states.
        initial_states: usize,
    },
}

impl Report {
    /// An empty report on `model`.
    pub fn new(model: &Model) -> Report {
        let d = model.dtmc();
        Report {
            schema_version: SCHEMA_VERSION,
            model: ModelSummary {
                states: d.num_states(),
                transitions: d.num_transitions(),
                initial: d.initial.clone(),
                build_seconds: model.build_seconds(),
            },
            results: Vec::new(),
            warnings: model.warnings().to_vec(),
        }
    }

    /// Adds the outcome of one property (`name` and `property` identify it on error);
    /// `all_states` adds the value of every state.
    pub fn push(
        &mut self,
        name: Option<&str>,
        property: &str,
        outcome: &Result<CheckResult, CheckError>,
        all_states: bool,
    ) {
        self.results.push(match outcome {
            Ok(r) => PropertyReport::of_result(r, all_states, self.model.states),
            Err(e) => PropertyReport::of_error(name, property, e),
        });
    }

    /// The JSON text (one line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

impl PropertyReport {
    /// The entry of a checked property.
    pub fn of_result(r: &CheckResult, all_states: bool, num_states: usize) -> PropertyReport {
        PropertyReport {
            name: r.name.clone(),
            property: r.property.clone(),
            value: Some(r.value),
            bounds: r.bounds,
            method: Some(r.method.to_string()),
            exact: r.exact.as_ref().map(|q| q.to_string()),
            seconds: r.seconds,
            filter: r.initial_filter.as_ref().map(|f| match *f {
                InitialFilter::Range { count, min, max } => FilterReport::Range {
                    initial_states: count,
                    min: Scalar::Num(min),
                    max: Scalar::Num(max),
                },
                InitialFilter::Forall { count } => FilterReport::Forall {
                    initial_states: count,
                },
            }),
            notes: r.notes.clone(),
            interval_rows_normalised: r.method.normalised_rows(),
            printed: r.printed.clone(),
            states: all_states.then(|| r.states.to_vec(num_states)),
            error: None,
        }
    }

    /// The entry of a property that could not be checked.
    pub fn of_error(name: Option<&str>, property: &str, e: &CheckError) -> PropertyReport {
        PropertyReport {
            name: name.map(str::to_string),
            property: property.to_string(),
            value: None,
            bounds: None,
            method: None,
            exact: None,
            seconds: 0.0,
            filter: None,
            notes: Vec::new(),
            interval_rows_normalised: None,
            printed: None,
            states: None,
            error: Some(e.to_string()),
        }
    }
}

/// A number in JSON: finite numbers as numbers, `"inf"`/`"-inf"`, `null` for NaN.
fn number<S: Serializer>(x: f64, s: S) -> Result<S::Ok, S::Error> {
    if x == f64::INFINITY {
        s.serialize_str("inf")
    } else if x == f64::NEG_INFINITY {
        s.serialize_str("-inf")
    } else if x.is_nan() {
        s.serialize_none()
    } else {
        s.serialize_f64(x)
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::Bool(b) => s.serialize_bool(b),
            Scalar::Num(x) => number(x, s),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Scalar, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Num(f64),
            Text(String),
            Null(()),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(b) => Ok(Scalar::Bool(b)),
            Raw::Num(x) => Ok(Scalar::Num(x)),
            Raw::Text(t) if t == "inf" => Ok(Scalar::Num(f64::INFINITY)),
            Raw::Text(t) if t == "-inf" => Ok(Scalar::Num(f64::NEG_INFINITY)),
            Raw::Text(t) => Err(de::Error::custom(format!(
                "expected a number, a boolean, \"inf\" or \"-inf\", found \"{t}\""
            ))),
            Raw::Null(()) => Ok(Scalar::Num(f64::NAN)),
        }
    }
}

impl Serialize for Bounds {
    /// `[lo, hi]`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&Scalar::Num(self.lo))?;
        t.serialize_element(&Scalar::Num(self.hi))?;
        t.end()
    }
}

impl<'de> Deserialize<'de> for Bounds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bounds, D::Error> {
        let (lo, hi) = <(Scalar, Scalar)>::deserialize(d)?;
        match (lo, hi) {
            (Scalar::Num(lo), Scalar::Num(hi)) => Ok(Bounds { lo, hi }),
            _ => Err(de::Error::custom("bounds must be numbers")),
        }
    }
}
