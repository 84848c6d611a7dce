//! The compiled monitor and its file format (`monitor.json`).
//!
//! ```json
//! {"format": "augur-monitor", "version": 1,
//!  "property": "P=? [ F<=5 \"violated\" ]", "target": "\"violated\"", "stay": null,
//!  "property_horizon": 5, "horizon_max": 5,
//!  "mapping": "risk-level",               // or "dtr", "abstraction": how actions map to states
//!  "classifier": {"file": "...", "text": "<TOML>", "sha256": "...",
//!                 "builtin": {"name": "default", "version": 5}},   // built-in rules only
//!  "abstraction": null,
//!  "tables": [{"category": null,          // null: the fallback for unknown categories
//!              "model": {"file": "...", "sha256": "...", "states": 5, "transitions": 13},
//!              "state_names": [...], "initial": 0,
//!              "map": [...],              // abstract state (dtr index, risk level, spec index) → model state
//!              "value": [...], "lower": [...], "upper": [...],   // the property, sound bounds
//!              "curve": [...],            // P(F<=h target), state-major, h = 1..horizon_max
//!              "expected_steps": [...],   // null where the target is not reached surely
//!              "path_next": [...], "path_probability": [...],    // most probable path to the target
//!              "learning": [{"observations": 12, "wilson": [lo, hi], "pac": "short", "more_needed": 30}] | null}],
//!  "sections": {"provenance": {"levels": ["NONE", "USER", "UNTRUSTED"], "risk_rule": 14},
//!               "robust": {"confidence": 0.95, "tables": [{"intervals": "learned", "confidence": 0.95,
//!                          "method": "beta-mixture-union", "value": [...], "upper": [...], "curve": [...]}]},
//!               "explanations": {"tables": [{"next": [...], "probability": [...]}]}}}
//! ```
//!
//! **Versions.** `monitor compile` writes version 2; version 1 files (written before issue 25)
//! still load and decide as they did. Version 2 adds `sections`, an object of *optional
//! sections*, each a feature a monitor may use (absent: the monitor does not use it):
//! - `provenance`: the `(d, t, r, p)` state of a `dtr` monitor (180 states, `map` has 180
//!   entries; see [`crate::dtr::Prov`]), or of a `risk-level` monitor (5 entries: the risk
//!   level of `(d, t, r, p)` picks the state): sessions track where each call's destination
//!   and payload arguments came from, and risk rule 14 applies.
//! - `robust` (`monitor compile --robust`): per table, the tables of `Pmax` of the property
//!   over an interval DTMC (nature maximising, anew at every step): `value` and its sound
//!   `upper` bound for the property, `curve` for `P(φ U≤h ψ)`, `h = 1..H` (state-major, as
//!   the point `curve`), with how the intervals were obtained (`intervals`: `learned` from the
//!   model's counts at the stated `confidence`, or `model`: the interval model's own, with the
//!   confidence it records, if any). A session using it decides on the bound ([`RobustTable`]).
//! - `explanations` (`monitor compile --explain`): per table, the most probable path to the
//!   target within `h` steps from every state, `h = 1..H` (state-major): its next state
//!   (`next`, null when there is none) and its probability; a decision at `warn` or above
//!   says what kind of action that next step is and its share of the risk (its probability
//!   over the curve's value; for an unbounded property, the point table's `path_next` and
//!   `path_probability` over `value`).
//!
//! A section this Augur does not know is an error, never ignored: a section can change
//! decisions, so a reader that skipped it could allow what its writer meant to block (fail
//! closed). A version-1 file cannot have sections.

use crate::classifier::Classifier;
use crate::error::{GateError, Result};
use augur_abstraction::Abstraction;
use augur_source::json::JsonPath;
use augur_source::{Location, Span};
use serde::{Deserialize, Serialize};

/// The `format` field of every monitor file.
pub const FORMAT: &str = "augur-monitor";
/// The version this Augur writes.
pub const VERSION: u32 = 2;
/// The versions this Augur reads.
pub const VERSIONS_READ: [u32; 2] = [1, 2];
/// The optional sections this Augur knows (see the module documentation).
pub const KNOWN_SECTIONS: [&str; 3] = ["provenance", "robust", "explanations"];

/// The optional sections of a version-2 monitor file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sections {
    /// The provenance dimension p of a `dtr` monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ProvenanceSection>,
    /// Robust upper bounds (`Pmax` over interval models): sessions decide on them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust: Option<RobustSection>,
    /// The most probable continuation of every state, per horizon, for the reasons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanations: Option<ExplanationsSection>,
}

impl Sections {
    /// No section.
    pub fn is_empty(&self) -> bool {
        self.provenance.is_none() && self.robust.is_none() && self.explanations.is_none()
    }
}

/// How a robust table's intervals were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalSource {
    /// Learned at compile time from the model's transition counts, holding simultaneously
    /// with the stated confidence (augur-learn's `intervals`).
    Learned,
    /// The interval model's own intervals (an IDTMC given as the model).
    Model,
}

/// The `robust` section: one [`RobustTable`] per table, in the same order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobustSection {
    /// The confidence asked for (`--confidence`; `None`: the models' own).
    pub confidence: Option<f64>,
    /// One per table.
    pub tables: Vec<RobustTable>,
}

/// `Pmax` of a table's property over its interval model: with probability at least
/// `confidence` (when stated) the true chain is one of the model's resolutions, so its value
/// is at most these numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobustTable {
    /// Where the intervals come from.
    pub intervals: IntervalSource,
    /// The confidence the intervals hold with, simultaneously (`None`: the model's intervals
    /// are given without one).
    pub confidence: Option<f64>,
    /// How the intervals were computed (`beta-mixture-union` for learned ones), when known.
    pub method: Option<String>,
    /// `Pmax` of the property in every state.
    pub value: Vec<f64>,
    /// Its sound upper bound (equal to `value` for a bounded property): what sessions use.
    pub upper: Vec<f64>,
    /// `Pmax(φ U≤h ψ)`, state-major: `curve[s·horizon_max + h − 1]`.
    pub curve: Vec<f64>,
}

/// The `explanations` section: one [`ExplanationTable`] per table, in the same order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplanationsSection {
    /// One per table.
    pub tables: Vec<ExplanationTable>,
}

/// The most probable path to the target within `h` steps, per state and `h = 1..H`
/// (state-major: index `s·horizon_max + h − 1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplanationTable {
    /// For the property itself (its step bound, or unbounded): the most probable path's next
    /// state from every state.
    pub value_next: Vec<Option<u32>>,
    /// That path's probability.
    pub value_probability: Vec<f64>,
    /// Per state and horizon: the path's next state (`None` at a target state or when the target cannot be reached
    /// within `h` steps).
    pub next: Vec<Option<u32>>,
    /// The path's probability.
    pub probability: Vec<f64>,
}

/// What a decision's reason says about the most probable continuation (see
/// [`Monitor::explanation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Continuation {
    /// The state the continuation starts from.
    pub from: u32,
    /// Its next state.
    pub next: u32,
    /// The probability of the most probable path.
    pub probability: f64,
    /// That probability over the state's risk (the point value at the same horizon), in [0, 1].
    pub share: f64,
}

/// The `provenance` section: the states are `(d, t, r, p)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceSection {
    /// The levels of p in index order: `["NONE", "USER", "UNTRUSTED"]`.
    pub levels: Vec<String>,
    /// The risk rule that makes an untrusted write or irreversible action VIOLATED (14).
    pub risk_rule: u8,
    /// The learned chain's predicates, when its tables are over the 960 chain states
    /// ([`crate::dtr::SafetyState::chain_index`]): `["delegated", "signal", "unrequested"]`
    /// (issue 41). Absent: the 180 `(d, t, r, p)` states. A reader that does not know the
    /// field rejects the file (it would look the states up wrongly).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predicates: Vec<String>,
}

impl ProvenanceSection {
    /// The section this Augur writes for 180-state tables.
    pub fn current() -> ProvenanceSection {
        ProvenanceSection {
            levels: crate::dtr::Prov::ALL
                .iter()
                .map(|p| p.as_str().to_string())
                .collect(),
            risk_rule: 14,
            predicates: Vec::new(),
        }
    }

    /// The section this Augur writes for the 960-state chain's tables.
    pub fn with_predicates() -> ProvenanceSection {
        ProvenanceSection {
            predicates: crate::dtr::Predicates::NAMES
                .iter()
                .map(|p| p.to_string())
                .collect(),
            ..ProvenanceSection::current()
        }
    }

    /// Whether the tables are over the 960 chain states.
    pub fn has_predicates(&self) -> bool {
        !self.predicates.is_empty()
    }
}

/// How actions are mapped to the model's states, chosen at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mapping {
    /// The classifier's `(d, t, r)` triple is the state (60-state models).
    Dtr,
    /// The risk level of the `(d, t, r)` triple picks the state labelled with it (the 5-state
    /// risk-level chain; labels matched case-insensitively).
    RiskLevel,
    /// Actions carry a concrete state, which the abstraction spec maps to a bit-vector state.
    Abstraction,
}

impl Mapping {
    /// `dtr`, `risk-level`, `abstraction`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mapping::Dtr => "dtr",
            Mapping::RiskLevel => "risk-level",
            Mapping::Abstraction => "abstraction",
        }
    }

    /// Parse `dtr`, `risk-level` (or `risk`), `abstraction`.
    pub fn parse(s: &str) -> Option<Mapping> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "dtr" => Some(Mapping::Dtr),
            "risk-level" | "risk" => Some(Mapping::RiskLevel),
            "abstraction" => Some(Mapping::Abstraction),
            _ => None,
        }
    }
}

/// A file embedded in the monitor (the classifier rules or the abstraction spec).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddedFile {
    /// Where it was read from.
    pub file: String,
    /// Its text.
    pub text: String,
    /// SHA-256 of the text.
    pub sha256: String,
    /// For a classifier compiled from one of Augur's built-in rule sets: which, and the
    /// version of it (see [`crate::builtin`]); absent for a classifier the user wrote (never
    /// stale) and in files written before issue 39 (then recognised by `sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<crate::builtin::BuiltinClassifier>,
}

/// The source model of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model's file (or a name for an in-memory model).
    pub file: String,
    /// SHA-256 of the bytes read.
    pub sha256: String,
    /// Number of states.
    pub states: usize,
    /// Number of transitions.
    pub transitions: usize,
}

/// PAC status of a learned state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PacStatus {
    /// Enough observations for the (ε, δ) bound.
    Holds,
    /// Observed, but fewer times than the bound asks.
    Short,
    /// Never left in the training runs: its row is smoothing or the uniform fallback, not data.
    Unobserved,
    /// Its row is fixed by validity (at most one valid successor): nothing to learn.
    Determined,
}

/// What learning knew about one state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearningStatus {
    /// Observed outgoing transitions `n_p`.
    pub observations: u64,
    /// Wilson 95% interval of the most frequent successor's frequency (`[0, 1]` unobserved).
    pub wilson: [f64; 2],
    /// PAC status.
    pub pac: PacStatus,
    /// Observations still needed for the bound.
    pub more_needed: u64,
}

/// One compiled table: a category's model checked in every state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// The category (`None`: the fallback for categories without a table of their own).
    pub category: Option<String>,
    /// The source model.
    pub model: ModelInfo,
    /// A name per model state.
    pub state_names: Vec<String>,
    /// Where sessions start (a model state).
    pub initial: u32,
    /// Abstract state → model state (60 entries for `dtr` (180 with the provenance section), 5 for `risk-level`, one per valid
    /// abstract state for `abstraction`).
    pub map: Vec<u32>,
    /// The property's value in every state.
    pub value: Vec<f64>,
    /// Sound lower bounds.
    pub lower: Vec<f64>,
    /// Sound upper bounds.
    pub upper: Vec<f64>,
    /// `P(φ U≤h target)`, state-major: `curve[s·horizon_max + h − 1]`.
    pub curve: Vec<f64>,
    /// Expected steps to the target (`None`: infinite).
    pub expected_steps: Vec<Option<f64>>,
    /// The next state on the most probable path to the target (`None` at the target or when
    /// the target cannot be reached).
    pub path_next: Vec<Option<u32>>,
    /// The probability of that path.
    pub path_probability: Vec<f64>,
    /// Per-state learning status, for learned models.
    pub learning: Option<Vec<LearningStatus>>,
}

impl Table {
    /// Number of model states.
    pub fn num_states(&self) -> usize {
        self.value.len()
    }

    /// The most probable path from `state` to the target (states after `state`, ending at a
    /// target state), empty when `state` is a target or the target is unreachable.
    pub fn path(&self, state: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut s = state;
        while let Some(Some(next)) = self.path_next.get(s as usize) {
            out.push(*next);
            s = *next;
            if out.len() > self.num_states() {
                break;
            }
        }
        out
    }

    /// The name of a model state.
    pub fn name(&self, state: u32) -> &str {
        self.state_names
            .get(state as usize)
            .map_or("?", |s| s.as_str())
    }
}

/// A compiled monitor.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Monitor {
    /// Always `augur-monitor`.
    pub format: String,
    /// The file format version.
    pub version: u32,
    /// The property, as compiled (canonical PCTL).
    pub property: String,
    /// The target of the property (the right operand of F / U), as PCTL.
    pub target: String,
    /// The left operand of U (`None` for F).
    pub stay: Option<String>,
    /// The property's step bound (`None`: unbounded).
    pub property_horizon: Option<u32>,
    /// The horizon curve's length H.
    pub horizon_max: u32,
    /// How actions map to states.
    pub mapping: Mapping,
    /// The classifier rules (`dtr`, `risk-level`).
    pub classifier: Option<EmbeddedFile>,
    /// The abstraction spec (`abstraction`).
    pub abstraction: Option<EmbeddedFile>,
    /// `[ε, δ]` of the learning status' PAC bound.
    pub pac: Option<[f64; 2]>,
    /// The tables; at most one without a category (the fallback).
    pub tables: Vec<Table>,
    /// The optional sections (version 2).
    #[serde(default, skip_serializing_if = "Sections::is_empty")]
    pub sections: Sections,
    /// The embedded files, parsed ([`Monitor::prepare`]); not part of the file.
    #[serde(skip)]
    pub runtime: Runtime,
}

/// The embedded files, parsed once by [`Monitor::prepare`] (a monitor built by hand starts with
/// `Runtime::default()`).
#[derive(Clone, Debug, Default)]
pub struct Runtime {
    pub(crate) classifier: Option<Classifier>,
    pub(crate) abstraction: Option<Abstraction>,
}

impl Monitor {
    /// The parsed classifier (`dtr` and `risk-level` monitors).
    pub fn classifier(&self) -> Option<&Classifier> {
        self.runtime.classifier.as_ref()
    }

    /// The parsed abstraction spec (`abstraction` monitors).
    pub fn abstraction(&self) -> Option<&Abstraction> {
        self.runtime.abstraction.as_ref()
    }

    /// The table for a category: its own, else the fallback.
    pub fn table_for(&self, category: Option<&str>) -> Option<usize> {
        let own = category.and_then(|c| {
            self.tables
                .iter()
                .position(|t| t.category.as_deref() == Some(c))
        });
        own.or_else(|| self.tables.iter().position(|t| t.category.is_none()))
    }

    /// Whether sessions track provenance: a `dtr` monitor with the `provenance` section
    /// (180 states), or a `risk-level` monitor with it (the risk level of `(d, t, r, p)`,
    /// rule 14 included, picks the chain's state: the built-in gateway monitor).
    pub fn tracks_provenance(&self) -> bool {
        matches!(self.mapping, Mapping::Dtr | Mapping::RiskLevel)
            && self.sections.provenance.is_some()
    }

    /// Whether its tables are over the learned chain's 960 states, `(d, t, r, p)` with the
    /// predicates delegated, `i` and `u` (issue 41; [`ProvenanceSection::predicates`]).
    pub fn chain_predicates(&self) -> bool {
        self.mapping == Mapping::Dtr
            && self
                .sections
                .provenance
                .as_ref()
                .is_some_and(ProvenanceSection::has_predicates)
    }

    /// The embedded classifier when it is an *older* version of one of Augur's built-in rule
    /// sets than this binary's (compiled before a classifier fix): see
    /// [`crate::builtin::stale`]. A classifier the user wrote is never stale.
    pub fn stale_classifier(&self) -> Option<crate::builtin::Stale> {
        crate::builtin::stale(self.classifier.as_ref()?)
    }

    /// The robust bound of model state `state` of table `table` at `horizon` (the curve's,
    /// `1..=horizon_max`; anything else: the property's own), when the monitor has the
    /// `robust` section. A lookup.
    #[inline]
    pub fn robust_bound(&self, table: usize, state: u32, horizon: Option<u32>) -> Option<f64> {
        let r = self.sections.robust.as_ref()?.tables.get(table)?;
        let s = state as usize;
        match horizon {
            Some(h) if (1..=self.horizon_max).contains(&h) => r
                .curve
                .get(s * self.horizon_max as usize + h as usize - 1)
                .copied(),
            _ => r.upper.get(s).copied(),
        }
    }

    /// The confidence of table `table`'s robust bound, when it has one.
    pub fn robust_confidence(&self, table: usize) -> Option<f64> {
        self.sections.robust.as_ref()?.tables.get(table)?.confidence
    }

    /// The most probable continuation from model state `state` of table `table` at `horizon`
    /// (the curve's, `1..=horizon_max`; anything else: the property's own), when the monitor has the
    /// `explanations` section and the target can be reached (and `state` is not a target).
    pub fn explanation(
        &self,
        table: usize,
        state: u32,
        horizon: Option<u32>,
    ) -> Option<Continuation> {
        let e = self.sections.explanations.as_ref()?.tables.get(table)?;
        let t = self.tables.get(table)?;
        let s = state as usize;
        let (next, probability, risk) = match horizon {
            Some(h) if (1..=self.horizon_max).contains(&h) => {
                let i = s * self.horizon_max as usize + h as usize - 1;
                (*e.next.get(i)?, *e.probability.get(i)?, *t.curve.get(i)?)
            }
            _ => (
                *e.value_next.get(s)?,
                *e.value_probability.get(s)?,
                *t.value.get(s)?,
            ),
        };
        let next = next?;
        let share = if risk > 0.0 {
            (probability / risk).clamp(0.0, 1.0)
        } else {
            0.0
        };
        Some(Continuation {
            from: state,
            next,
            probability,
            share,
        })
    }

    /// The target's name for messages: a label's name without quotes.
    pub fn target_name(&self) -> &str {
        self.target.trim_matches('"')
    }

    /// Serialise to pretty JSON.
    pub fn to_json(&self) -> String {
        // Serialising plain data with finite numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Write to a file.
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        let mut text = self.to_json();
        text.push('\n');
        std::fs::write(path, text).map_err(|e| GateError::Io {
            file: path.display().to_string(),
            source: e,
        })
    }

    /// Read a monitor file.
    pub fn load(path: &std::path::Path) -> Result<Monitor> {
        let text = crate::read_text(path)?;
        Monitor::from_json(&text, &path.display().to_string())
    }

    /// Parse and validate a monitor file's text; every error is located in the file (line,
    /// column and a caret under the value: JSON syntax, a value of the wrong type, a table of
    /// the wrong length, ...).
    pub fn from_json(text: &str, file: &str) -> Result<Monitor> {
        // The format and version first, so an old or foreign file gets a clear message.
        let head: serde_json::Value =
            serde_json::from_str(text).map_err(|e| json_error(file, text, &e))?;
        let bad = |path: JsonPath, msg: String| at_json_path(file, Some(text), &path, msg);
        match head.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            _ => return Err(bad(JsonPath::root().key("format"), format!("not an Augur monitor file (no \"format\": \"{FORMAT}\"); compile one with `augur monitor compile`"))),
        }
        let version = match head.get("version").and_then(|v| v.as_u64()) {
            Some(v) if VERSIONS_READ.iter().any(|&w| u64::from(w) == v) => v,
            v => {
                return Err(bad(JsonPath::root().key("version"), format!(
                    "monitor file version {} is not supported (this Augur reads versions 1 and 2); recompile it",
                    v.map_or("?".to_string(), |v| v.to_string())
                )))
            }
        };
        if let Some(sections) = head.get("sections") {
            let at = JsonPath::root().key("sections");
            if version < 2 {
                return Err(bad(
                    at,
                    "a version-1 monitor file has no optional sections (\"sections\" is version 2)"
                        .into(),
                ));
            }
            let Some(obj) = sections.as_object() else {
                return Err(bad(
                    at,
                    "\"sections\" must be an object of optional sections".into(),
                ));
            };
            if let Some(k) = obj.keys().find(|k| !KNOWN_SECTIONS.contains(&k.as_str())) {
                return Err(bad(
                    at.key(k),
                    format!(
                        "unknown optional section `{k}` (this Augur knows: {}): a section can change decisions, so it is refused rather than ignored; use the Augur that wrote the file or recompile it",
                        KNOWN_SECTIONS.join(", ")
                    ),
                ));
            }
        }
        drop(head);
        // The shape, located at the offending value.
        let mut m: Monitor =
            augur_source::json::parse_json(text, file).map_err(GateError::Input)?;
        m.prepare(file, Some(text))?;
        Ok(m)
    }

    /// Parse the embedded files and check that every table is consistent; errors are located
    /// at the offending value of `text` (the monitor file's text) when it is given. Reading a
    /// file does this; a monitor built by hand (the compiler) calls it before use.
    pub fn prepare(&mut self, file: &str, text: Option<&str>) -> Result<()> {
        let bad = |path: JsonPath, msg: String| at_json_path(file, text, &path, msg);
        let root = JsonPath::root;
        // An embedded file must be the one its hash records: an edited classifier (a rule
        // removed, an `always`-like rule added) would change every verdict silently.
        for (field, f) in [
            ("classifier", &self.classifier),
            ("abstraction", &self.abstraction),
        ] {
            if let Some(f) = f {
                let actual = crate::sha256_hex([f.text.as_bytes()]);
                if !actual.eq_ignore_ascii_case(f.sha256.trim()) {
                    return Err(bad(
                        root().key(field).key("sha256"),
                        format!(
                            "the embedded {field} does not match its recorded hash (its text hashes to {actual}): the file was edited after compiling; recompile it"
                        ),
                    ));
                }
            }
        }
        match self.mapping {
            Mapping::Dtr | Mapping::RiskLevel => {
                let c = self.classifier.as_ref().ok_or_else(|| {
                    bad(
                        root().key("mapping"),
                        format!(
                            "a `{}` monitor needs its classifier rules (\"classifier\")",
                            self.mapping.as_str()
                        ),
                    )
                })?;
                self.runtime.classifier = Some(Classifier::parse(
                    &c.text,
                    &format!("{file} (classifier from {})", c.file),
                )?);
            }
            Mapping::Abstraction => {
                let a = self.abstraction.as_ref().ok_or_else(|| {
                    bad(
                        root().key("mapping"),
                        "an `abstraction` monitor needs its abstraction spec (\"abstraction\")"
                            .into(),
                    )
                })?;
                let spec = Abstraction::parse(&a.text, &a.file).map_err(|e| {
                    bad(
                        root().key("abstraction").key("text"),
                        format!("embedded abstraction spec: {e}"),
                    )
                })?;
                self.runtime.abstraction = Some(spec);
            }
        }
        if self.horizon_max == 0 {
            return Err(bad(
                root().key("horizon_max"),
                "horizon_max must be at least 1".into(),
            ));
        }
        if self.tables.is_empty() {
            return Err(bad(root().key("tables"), "the monitor has no table".into()));
        }
        if let Some(second) = self
            .tables
            .iter()
            .enumerate()
            .filter(|(_, t)| t.category.is_none())
            .nth(1)
            .map(|(i, _)| i)
        {
            return Err(bad(
                root().key("tables").index(second).key("category"),
                "more than one fallback table (category null)".into(),
            ));
        }
        if let Some(p) = &self.sections.provenance {
            let at = root().key("sections").key("provenance");
            if !matches!(self.mapping, Mapping::Dtr | Mapping::RiskLevel) {
                return Err(bad(
                    at,
                    format!(
                        "the provenance section needs a `dtr` or `risk-level` monitor, not `{}`",
                        self.mapping.as_str()
                    ),
                ));
            }
            let want = ProvenanceSection::current();
            if p.levels != want.levels {
                return Err(bad(
                    at.key("levels"),
                    format!("provenance levels must be {:?}", want.levels),
                ));
            }
            if p.risk_rule != want.risk_rule {
                return Err(bad(
                    at.key("risk_rule"),
                    format!("provenance risk_rule must be {}", want.risk_rule),
                ));
            }
            let chain = ProvenanceSection::with_predicates();
            if p.has_predicates() && p.predicates != chain.predicates {
                return Err(bad(
                    at.key("predicates"),
                    format!(
                        "provenance predicates must be {:?} (or absent)",
                        chain.predicates
                    ),
                ));
            }
            if p.has_predicates() && self.mapping != Mapping::Dtr {
                return Err(bad(
                    at.key("predicates"),
                    "the chain's predicates need a `dtr` monitor".to_string(),
                ));
            }
        }
        let h = self.horizon_max as usize;
        let abstract_states = match self.mapping {
            Mapping::Dtr if self.chain_predicates() => crate::dtr::NUM_CHAIN_STATES,
            Mapping::Dtr if self.sections.provenance.is_some() => crate::dtr::NUM_DTRP_STATES,
            Mapping::Dtr => crate::dtr::NUM_DTR_STATES,
            Mapping::RiskLevel => 5,
            Mapping::Abstraction => self
                .runtime
                .abstraction
                .as_ref()
                .map_or(0, |a| a.num_states()),
        };
        for (i, t) in self.tables.iter().enumerate() {
            let n = t.num_states();
            let what = |field: &str| format!("tables[{i}].{field}");
            let at = |field: &str| root().key("tables").index(i).key(field);
            let check_len = |field: &str, len: usize, want: usize| -> Result<()> {
                if len != want {
                    return Err(bad(
                        at(field),
                        format!("{} has {len} entries, expected {want}", what(field)),
                    ));
                }
                Ok(())
            };
            if n == 0 {
                return Err(bad(at("value"), format!("{} is empty", what("value"))));
            }
            check_len("lower", t.lower.len(), n)?;
            check_len("upper", t.upper.len(), n)?;
            check_len("state_names", t.state_names.len(), n)?;
            check_len("curve", t.curve.len(), n * h)?;
            check_len("expected_steps", t.expected_steps.len(), n)?;
            check_len("path_next", t.path_next.len(), n)?;
            check_len("path_probability", t.path_probability.len(), n)?;
            check_len("map", t.map.len(), abstract_states)?;
            if let Some(l) = &t.learning {
                check_len("learning", l.len(), n)?;
            }
            let prob = |x: &f64| x.is_finite() && (0.0..=1.0).contains(x);
            for (field, v) in [
                ("value", &t.value),
                ("lower", &t.lower),
                ("upper", &t.upper),
                ("curve", &t.curve),
                ("path_probability", &t.path_probability),
            ] {
                if let Some(k) = v.iter().position(|x| !prob(x)) {
                    return Err(bad(
                        at(field).index(k),
                        format!("{}[{k}] = {} is not a probability", what(field), v[k]),
                    ));
                }
            }
            // The value must lie within its own sound bounds: a value above `upper` or below
            // `lower` is not what the checker computed.
            if let Some(k) =
                (0..n).find(|&k| !(t.lower[k] <= t.value[k] && t.value[k] <= t.upper[k]))
            {
                return Err(bad(
                    at("value").index(k),
                    format!(
                        "{}[{k}] = {} lies outside its bounds [{}, {}] (tables[{i}].lower[{k}], tables[{i}].upper[{k}])",
                        what("value"),
                        t.value[k],
                        t.lower[k],
                        t.upper[k]
                    ),
                ));
            }
            if let Some(k) = t
                .expected_steps
                .iter()
                .position(|e| e.is_some_and(|e| !(e.is_finite() && e >= 0.0)))
            {
                return Err(bad(
                    at("expected_steps").index(k),
                    format!(
                        "{}[{k}] is not a number of steps (finite, at least 0; null for infinite)",
                        what("expected_steps")
                    ),
                ));
            }
            let in_range = |s: u32| (s as usize) < n;
            if !in_range(t.initial) {
                return Err(bad(
                    at("initial"),
                    format!("{} = {} is not a state", what("initial"), t.initial),
                ));
            }
            if let Some(k) = t.map.iter().position(|&s| !in_range(s)) {
                return Err(bad(
                    at("map").index(k),
                    format!("{}[{k}] = {} is not a state", what("map"), t.map[k]),
                ));
            }
            if let Some(k) = t
                .path_next
                .iter()
                .position(|s| s.is_some_and(|s| !in_range(s)))
            {
                return Err(bad(
                    at("path_next").index(k),
                    format!("{}[{k}] is not a state", what("path_next")),
                ));
            }
        }
        self.check_robust(&bad)?;
        self.check_explanations(&bad)?;
        Ok(())
    }

    /// The `robust` section fits the tables: one per table, of their lengths, probabilities,
    /// and never below the point values (a bound below its estimate is not what compiling
    /// wrote).
    fn check_robust(&self, bad: &dyn Fn(JsonPath, String) -> GateError) -> Result<()> {
        let Some(r) = &self.sections.robust else {
            return Ok(());
        };
        let root = || JsonPath::root().key("sections").key("robust");
        if let Some(c) = r.confidence {
            if !(c > 0.0 && c < 1.0) {
                return Err(bad(
                    root().key("confidence"),
                    format!("confidence {c} is not in (0, 1)"),
                ));
            }
        }
        if r.tables.len() != self.tables.len() {
            return Err(bad(
                root().key("tables"),
                format!(
                    "the robust section has {} tables, the monitor {}",
                    r.tables.len(),
                    self.tables.len()
                ),
            ));
        }
        let h = self.horizon_max as usize;
        for (i, (rt, t)) in r.tables.iter().zip(&self.tables).enumerate() {
            let at = |field: &str| root().key("tables").index(i).key(field);
            let n = t.num_states();
            if let Some(c) = rt.confidence {
                if !(c > 0.0 && c < 1.0) {
                    return Err(bad(
                        at("confidence"),
                        format!("confidence {c} is not in (0, 1)"),
                    ));
                }
            }
            for (field, v, point, len) in [
                ("value", &rt.value, &t.value, n),
                ("upper", &rt.upper, &t.value, n),
                ("curve", &rt.curve, &t.curve, n * h),
            ] {
                if v.len() != len {
                    return Err(bad(
                        at(field),
                        format!(
                            "robust tables[{i}].{field} has {} entries, expected {len}",
                            v.len()
                        ),
                    ));
                }
                if let Some(k) = v.iter().zip(point).position(|(&x, &p)| {
                    !(x.is_finite() && (0.0..=1.0).contains(&x) && x >= p - 1e-9)
                }) {
                    return Err(bad(
                        at(field).index(k),
                        format!(
                            "robust tables[{i}].{field}[{k}] = {} is not a probability at least the point value {}",
                            v[k], point[k]
                        ),
                    ));
                }
            }
            if let Some(k) = (0..n).find(|&k| rt.upper[k] < rt.value[k] - 1e-9) {
                return Err(bad(
                    at("upper").index(k),
                    format!(
                        "robust tables[{i}].upper[{k}] = {} is below its value {}",
                        rt.upper[k], rt.value[k]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The `explanations` section fits the tables: one per table, of their lengths, states
    /// in range, probabilities.
    fn check_explanations(&self, bad: &dyn Fn(JsonPath, String) -> GateError) -> Result<()> {
        let Some(e) = &self.sections.explanations else {
            return Ok(());
        };
        let root = || JsonPath::root().key("sections").key("explanations");
        if e.tables.len() != self.tables.len() {
            return Err(bad(
                root().key("tables"),
                format!(
                    "the explanations section has {} tables, the monitor {}",
                    e.tables.len(),
                    self.tables.len()
                ),
            ));
        }
        let h = self.horizon_max as usize;
        for (i, (et, t)) in e.tables.iter().zip(&self.tables).enumerate() {
            let at = |field: &str| root().key("tables").index(i).key(field);
            let n = t.num_states();
            for (field, next, prob, len) in [
                ("value_next", &et.value_next, &et.value_probability, n),
                ("next", &et.next, &et.probability, n * h),
            ] {
                let pfield = if field == "next" {
                    "probability"
                } else {
                    "value_probability"
                };
                for (f, l) in [(field, next.len()), (pfield, prob.len())] {
                    if l != len {
                        return Err(bad(
                            at(f),
                            format!("explanations tables[{i}].{f} has {l} entries, expected {len}"),
                        ));
                    }
                }
                if let Some(k) = next.iter().position(|s| s.is_some_and(|s| s as usize >= n)) {
                    return Err(bad(
                        at(field).index(k),
                        format!("explanations tables[{i}].{field}[{k}] is not a state"),
                    ));
                }
                if let Some(k) = prob
                    .iter()
                    .position(|x| !(x.is_finite() && (0.0..=1.0).contains(x)))
                {
                    return Err(bad(
                        at(pfield).index(k),
                        format!(
                            "explanations tables[{i}].{pfield}[{k}] = {} is not a probability",
                            prob[k]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// An error at the value `path` of a monitor file's `text` (the whole file when there is no
/// text, or no such value in it).
fn at_json_path(file: &str, text: Option<&str>, path: &JsonPath, msg: String) -> GateError {
    match text.and_then(|t| Some((t, path.span_in(t)?))) {
        Some((t, span)) => GateError::at(file, t, span, msg),
        None => GateError::located(Location::file(file), msg),
    }
}

/// A JSON syntax error located at its line and column.
pub fn json_error(file: &str, text: &str, e: &serde_json::Error) -> GateError {
    let (line, col) = (e.line(), e.column());
    if line == 0 {
        return GateError::located(Location::file(file), e.to_string());
    }
    let line_text = text.lines().nth(line - 1).unwrap_or("");
    // serde_json's column is 1-based in bytes; convert to characters.
    let byte = col.saturating_sub(1).min(line_text.len());
    let mut b = byte;
    while !line_text.is_char_boundary(b) {
        b -= 1;
    }
    let loc = Location::in_line_bytes(
        file,
        line,
        line_text,
        Span::new(b, (b + 1).min(line_text.len())),
    );
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
    GateError::located(loc, msg)
}
