//! Sessions: one agent run gated action by action.
//!
//! [`Session::gate`] classifies the proposed action (or abstracts the concrete state it comes
//! with), projects the state the action would lead to, looks up the compiled value there, and
//! applies the policy. It allocates nothing: the decision is plain data, and its reason is
//! rendered only when asked for ([`Session::reason`], [`Session::report`]).
//!
//! When the state moves: on `allow` and `warn` the session advances to the projected state; on
//! `pause` and `block` it stays until [`Session::record`] says the action was executed anyway
//! (a paused action a person approved). Recording `executed = false` after an allowed action
//! moves the session back.
//!
//! Classifier monitors: VIOLATED is absorbing — no later action, gated or recorded, moves a
//! session out of it (only [`Session::reset`] does) — and recording `executed = true` never
//! lowers the risk level.
//!
//! **Observations** (issue 25): [`Session::observe`] takes the text the agent saw — the user's
//! request and system prompt (trusted), each tool result (untrusted, unless the policy's
//! `trusted_tools` names the tool) — into the session's provenance store
//! ([`crate::provenance::Provenance`]). With a monitor that tracks provenance
//! ([`Monitor::tracks_provenance`]: the 180-state `(d, t, r, p)` monitors) every gated call
//! gets its p ([`crate::classifier::Classifier::call_provenance`]) and the decision's reason
//! says which argument, which value and where it was first seen. Memory: one store per
//! session, at most [`ProvenanceLimits::max_values`](crate::provenance::ProvenanceLimits)
//! values (default 16,384, about 2.6 MB at ~160 bytes each) plus at most 1024 tool names of
//! ≤ 64 bytes; a [`SessionStore`] of capacity `n` holds at most `n` stores (with the default
//! limits, `n × 2.7 MB` at worst). At a limit the store fails closed (unknown values count as
//! untrusted). A restored session (journal) has lost its store: every value not seen in
//! trusted text since counts as untrusted.
//!
//! Fail closed: a closed (expired, evicted) session, an action the classifier cannot map, a
//! concrete state the abstraction cannot map, or an action of the wrong kind for the monitor
//! gets `block` with the reason, never `allow`.

use crate::classifier::{ArgHit, CallProvenance, Classification, Matched};
use crate::dtr::{Prov, Reversibility, RiskLevel, SafetyState};
use crate::error::{MonitorError, Result};
use crate::monitor::{Continuation, Mapping, Monitor, PacStatus, Table};
use crate::policy::{Mode, Policy, Rules, Verdict};
use crate::provenance::{ArgProvenance, ObserveStats, Origin, Provenance, ProvenanceSnapshot};
use crate::runs::ObservationSource;
use augur_abstraction::VarKind;
use augur_expr::Value as EValue;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

/// A short string kept inline (tool names in decisions), so decisions never allocate.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct InlineName {
    len: u8,
    bytes: [u8; 47],
}

impl InlineName {
    /// The empty name.
    pub const EMPTY: InlineName = InlineName {
        len: 0,
        bytes: [0; 47],
    };

    /// `s`, cut at 47 bytes (on a character boundary).
    pub fn new(s: &str) -> InlineName {
        let mut end = s.len().min(47);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; 47];
        bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        InlineName {
            len: end as u8,
            bytes,
        }
    }

    /// Overwrite in place with `s` (cut at 47 bytes).
    pub fn set(&mut self, s: &str) {
        let mut end = s.len().min(47);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.bytes[..end].copy_from_slice(&s.as_bytes()[..end]);
        self.len = end as u8;
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).unwrap_or("")
    }
}

impl fmt::Debug for InlineName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for InlineName {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A tool call: its name and arguments (a JSON object; see [`ToolCall::parse_args`] for
/// arguments sent as a JSON string).
#[derive(Clone, Copy, Debug)]
pub struct ToolCall<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// Its arguments.
    pub args: &'a Value,
}

impl<'a> ToolCall<'a> {
    /// A tool call.
    pub fn new(name: &'a str, args: &'a Value) -> ToolCall<'a> {
        ToolCall { name, args }
    }

    /// Arguments as real OpenAI logs send them: a JSON string holding an object is parsed;
    /// an object (or anything else) is kept. An empty string is no arguments.
    pub fn parse_args(args: Value) -> std::result::Result<Value, String> {
        match args {
            Value::String(s) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(_) => Err("arguments given as a string must hold a JSON object".into()),
                Err(e) => Err(format!("arguments given as a string are not JSON: {e}")),
            },
            v => Ok(v),
        }
    }
}

/// What the agent proposes.
#[derive(Clone, Copy, Debug)]
pub enum Action<'a> {
    /// A tool call (`dtr` and `risk-level` monitors).
    Tool(ToolCall<'a>),
    /// The concrete state the action leads to (`abstraction` monitors), optionally with the
    /// tool's name (for `always_block` / `always_allow`).
    State {
        /// The tool, if known.
        tool: Option<&'a str>,
        /// Variable → value.
        state: &'a Map<String, Value>,
    },
}

impl Action<'_> {
    fn tool(&self) -> Option<&str> {
        match self {
            Action::Tool(t) => Some(t.name),
            Action::State { tool, .. } => *tool,
        }
    }
}

/// Why a decision failed closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailReason {
    /// The session was closed (expired or evicted).
    SessionClosed,
    /// No classifier rule matches the tool and the classifier has no default.
    Unmapped,
    /// A tool call given to an abstraction monitor.
    ToolCallForAbstraction,
    /// A concrete state given to a classifier monitor.
    StateForClassifier,
    /// The concrete state cannot be abstracted (a missing variable, a value out of range, an
    /// invalid abstract state).
    BadState,
}

impl FailReason {
    fn text(self) -> &'static str {
        match self {
            FailReason::SessionClosed => "the session has expired or was evicted; start a new session",
            FailReason::Unmapped => "no classifier rule matches this tool and the classifier has no default",
            FailReason::ToolCallForAbstraction => "this monitor was compiled for an abstraction spec and needs the concrete state, not a tool call",
            FailReason::StateForClassifier => "this monitor was compiled for a (d, t, r) classifier and needs a tool call, not a concrete state",
            FailReason::BadState => "the concrete state cannot be mapped to an abstract state of the monitor's spec",
        }
    }
}

/// The provenance of a gated call (monitors that track provenance): its p and what the store
/// knew of the value that decided it (the argument's name is kept in the session, see
/// [`Session::provenance_reason`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ProvenanceHit {
    /// The call's p.
    pub p: Prov,
    /// The deciding value's evidence.
    #[serde(skip)]
    pub evidence: ArgProvenance,
}

/// What decided a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "index")]
pub enum Fired {
    /// Threshold `i` of the policy.
    Threshold(u16),
    /// Below every threshold.
    BelowThresholds,
    /// `always_block` pattern `i`.
    AlwaysBlock(u16),
    /// `always_allow` pattern `i`.
    AlwaysAllow(u16),
    /// The policy's `unobserved` verdict (a state never observed in training).
    Unobserved,
    /// Failed closed.
    FailClosed(FailReason),
}

/// The monitor's decision on one action. Plain data (`Copy`): no allocation.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// The probability compared with the thresholds: the compiled property's value in the
    /// projected state (or `P(F≤h target)` with the policy's horizon). 1 when failing closed.
    pub probability: f64,
    /// Its sound bounds.
    pub bounds: [f64; 2],
    /// With the monitor's `robust` section: the robust upper bound (`Pmax` over the interval
    /// model, held with the section's confidence) in the projected state at the same horizon;
    /// the verdict is then decided on it rather than on `probability` (see
    /// [`Decision::decided`]).
    pub bound: Option<f64>,
    /// The horizon of that probability (`None`: unbounded).
    pub horizon: Option<u32>,
    /// The model state before the action.
    pub state_before: u32,
    /// The model state the action leads to (the state before when failing closed).
    pub state_after: u32,
    /// `(d, t, r)` before (classifier monitors).
    pub dtr_before: Option<SafetyState>,
    /// `(d, t, r)` after.
    pub dtr_after: Option<SafetyState>,
    /// Risk level before (classifier monitors).
    pub risk_before: Option<RiskLevel>,
    /// Risk level after, and the rule (1–12) that gave it.
    pub risk_after: Option<(RiskLevel, u8)>,
    /// What decided the verdict.
    pub fired: Fired,
    /// The policy's enforcement mode.
    pub mode: Mode,
    /// The classification of the tool call (classifier monitors).
    pub classification: Option<Classification>,
    /// Step number of this action in the session (0-based).
    pub step: u32,
    /// Whether the session moved to `state_after`.
    pub advanced: bool,
    /// The projected state was never observed in training (its row is not data).
    pub unobserved: bool,
    /// The previous executed action, for the reason: its argument hit (`Some(None)`: an action
    /// without one; `None`: no previous action). Its name, and this action's, are kept in the
    /// session (see [`Session::reason`]), so that a decision copies no text.
    pub previous: Option<Option<ArgHit>>,
    /// The earlier action that raised the data exposure to its current level, when it is not
    /// the previous one (its argument hit; its name is kept in the session).
    pub raiser: Option<Option<ArgHit>>,
    /// The session's name slot holding this action's tool name.
    #[serde(skip)]
    pub slot: u8,
    /// The table used.
    pub table: u16,
    /// The call's provenance (monitors that track provenance; `None` otherwise and when
    /// failing closed).
    pub provenance: Option<ProvenanceHit>,
}

impl Decision {
    /// The probability the verdict was decided on: the robust bound when there is one, else
    /// the point estimate.
    pub fn decided(&self) -> f64 {
        self.bound.unwrap_or(self.probability)
    }
}

/// A session's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Actions gated.
    pub steps: u32,
    /// Decisions per verdict: allow, warn, pause, block.
    pub decisions: [u32; 4],
    /// The highest probability decided on (the robust bound with the `robust` section).
    pub peak_probability: f64,
    /// The highest risk level reached (classifier monitors).
    pub peak_risk: Option<RiskLevel>,
    /// Actions executed despite pause/block (recorded).
    pub overridden: u32,
}

/// The last gated action, until a record says what happened to it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// `(d, t, r)` and model state before it.
    pub before: (SafetyState, u32),
    /// `(d, t, r)` and model state it projects.
    pub after: (SafetyState, u32),
    /// Whether the session advanced on it (allow, warn).
    pub advanced: bool,
    /// The name slot holding its tool.
    pub slot: u8,
    /// Its argument hit.
    pub hit: Option<ArgHit>,
}

/// Everything a session holds besides the shared monitor and policy: what a state journal
/// ([`crate::journal`]) writes after every move and [`Session::restore`] reads back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionSnapshot {
    /// The category it was opened with.
    pub category: Option<String>,
    /// `(d, t, r)` (classifier monitors; START for abstraction monitors).
    pub dtr: SafetyState,
    /// The model state.
    pub state: u32,
    /// Actions gated so far.
    pub step: u32,
    /// The last gated action awaiting a record (a pause or block a person may approve).
    pub pending: Option<Pending>,
    /// The name slots: the latest action, the previous executed one, the raiser.
    pub names: [String; 3],
    /// The step and argument hit of the action that raised the data exposure.
    pub raiser: Option<(u32, Option<ArgHit>)>,
    /// The slot, argument hit and step of the previous executed action.
    pub previous: Option<(u8, Option<ArgHit>, u32)>,
    /// The counts.
    pub summary: Summary,
    /// Observations taken so far (0 in journals written before observations existed).
    #[serde(default)]
    pub observations: u32,
    /// The provenance store was lost (a restart): unknown values count as untrusted.
    #[serde(default)]
    pub provenance_lost: bool,
}

/// A session with its provenance store, as plain data: what a process that keeps one session
/// between short runs (`augur hook claude-code --state FILE`) saves after each event and reads
/// back with [`Session::restore_full`]. Unlike a [`SessionSnapshot`] alone, nothing observed
/// is lost: `session.provenance_lost` is true only when the session had lost its store
/// before (see [`Session::lose_provenance`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FullSnapshot {
    /// The session's state.
    pub session: SessionSnapshot,
    /// Its provenance store.
    pub provenance: ProvenanceSnapshot,
}

/// One agent run being gated.
#[derive(Clone, Debug)]
pub struct Session {
    monitor: Arc<Monitor>,
    policy: Arc<Policy>,
    category: Option<String>,
    rules_index: Option<usize>,
    table: usize,
    dtr: SafetyState,
    state: u32,
    step: u32,
    closed: bool,
    pending: Option<Pending>,
    /// The tool names of the latest action and of the previous executed one, in two slots
    /// written in place (no copy of text per decision).
    /// Slot 2: the action that raised the data exposure to its current level.
    names: [InlineName; 3],
    /// The step and argument hit of that action.
    raiser: Option<(u32, Option<ArgHit>)>,
    /// The slot and argument hit of the previous executed action.
    previous: Option<(u8, Option<ArgHit>, u32)>,
    summary: Summary,
    buf: Vec<EValue>,
    /// The values observed and where (see the module documentation).
    prov: Provenance,
    /// The store lost what it held (a restored session): fail closed.
    prov_lost: bool,
    /// Observations taken.
    observations: u32,
    /// The argument that decided the latest decision's provenance.
    prov_arg: InlineName,
}

impl Session {
    /// A session at the start state, using `category`'s table (or the fallback). Errors when
    /// the category has no table and there is no fallback, or when the policy's horizon does
    /// not fit the monitor.
    pub fn new(
        monitor: &Arc<Monitor>,
        policy: &Arc<Policy>,
        category: Option<&str>,
    ) -> Result<Session> {
        let table = monitor.table_for(category).ok_or_else(|| {
            let known: Vec<&str> = monitor
                .tables
                .iter()
                .filter_map(|t| t.category.as_deref())
                .collect();
            MonitorError::Mismatch(format!(
                "category `{}` has no table and the monitor has no fallback (tables: {})",
                category.unwrap_or("(none)"),
                known.join(", ")
            ))
        })?;
        let rules_index = category.and_then(|c| policy.categories.iter().position(|(n, _)| n == c));
        let rules = rules_index.map_or(&policy.base, |i| &policy.categories[i].1);
        if let Some(h) = rules.horizon {
            // Located at the policy's `horizon` when it was read from a file.
            let mismatch = |message: String| match &rules.horizon_at {
                Some(at) => MonitorError::located(at.clone(), message),
                None => MonitorError::Mismatch(message),
            };
            if monitor.stay.is_some() && Some(h) != monitor.property_horizon {
                return Err(mismatch(format!(
                    "the policy's horizon {h} applies to F properties; the monitor was compiled for {}",
                    monitor.property
                )));
            }
            if h > monitor.horizon_max {
                return Err(mismatch(format!(
                    "the policy's horizon {h} is beyond the monitor's horizon curve (1..{}); recompile with --horizon {h}",
                    monitor.horizon_max
                )));
            }
        }
        let capacity = monitor.abstraction().map_or(0, |a| a.variables().len());
        let t = &monitor.tables[table];
        Ok(Session {
            monitor: Arc::clone(monitor),
            policy: Arc::clone(policy),
            category: category.map(str::to_string),
            rules_index,
            table,
            dtr: SafetyState::START,
            state: t.initial,
            step: 0,
            closed: false,
            pending: None,
            names: [InlineName::EMPTY; 3],
            raiser: None,
            previous: None,
            summary: Summary::default(),
            buf: Vec::with_capacity(capacity),
            prov: Provenance::new(),
            prov_lost: false,
            observations: 0,
            prov_arg: InlineName::EMPTY,
        })
    }

    fn rules(&self) -> &Rules {
        self.rules_index
            .map_or(&self.policy.base, |i| &self.policy.categories[i].1)
    }

    fn tab(&self) -> &Table {
        &self.monitor.tables[self.table]
    }

    /// The monitor.
    pub fn monitor(&self) -> &Arc<Monitor> {
        &self.monitor
    }

    /// The session's category.
    pub fn category(&self) -> Option<&str> {
        self.category.as_deref()
    }

    /// The current model state.
    pub fn state(&self) -> u32 {
        self.state
    }

    /// The current `(d, t, r)` (classifier monitors; START for abstraction monitors).
    pub fn dtr(&self) -> SafetyState {
        self.dtr
    }

    /// The counts so far.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Back to the start state with fresh counts (the session stays open).
    pub fn reset(&mut self) {
        self.dtr = SafetyState::START;
        self.state = self.tab().initial;
        self.step = 0;
        self.pending = None;
        self.previous = None;
        self.raiser = None;
        self.summary = Summary::default();
        self.prov = Provenance::new();
        self.prov_lost = false;
        self.observations = 0;
    }

    /// Observe text the agent saw (see the module documentation): the user's request, the
    /// system prompt, or the result of `tool` (the step of a tool result is the latest gated
    /// call's). A tool result is trusted when the policy's `trusted_tools` names the tool.
    pub fn observe(
        &mut self,
        source: ObservationSource,
        tool: Option<&str>,
        text: &str,
    ) -> ObserveStats {
        let step = self.step.checked_sub(1);
        self.observe_at(source, tool, step, text.as_bytes())
    }

    /// [`Session::observe`] with the step of the call whose result it is (`None`: the latest
    /// gated call's) and bytes (invalid UTF-8 is read as it is).
    pub fn observe_at(
        &mut self,
        source: ObservationSource,
        tool: Option<&str>,
        step: Option<u32>,
        text: &[u8],
    ) -> ObserveStats {
        if self.closed {
            return ObserveStats::default();
        }
        self.observations = self.observations.saturating_add(1);
        let name = tool.unwrap_or("");
        let step = step.or(self.step.checked_sub(1)).unwrap_or(0);
        let origin = match source {
            ObservationSource::User => Origin::User,
            ObservationSource::System => Origin::System,
            ObservationSource::Tool if self.rules().trusts(name) => {
                Origin::TrustedTool { tool: name, step }
            }
            ObservationSource::Tool => Origin::Tool { tool: name, step },
        };
        self.prov.observe_bytes(origin, text)
    }

    /// The session's provenance store.
    pub fn provenance(&self) -> &Provenance {
        &self.prov
    }

    /// Whether the provenance store lost what it held (a restored session).
    pub fn provenance_lost(&self) -> bool {
        self.prov_lost
    }

    /// Close the session: every later `gate` blocks.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Whether it is closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The session's state as plain data (see [`SessionSnapshot`]).
    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            category: self.category.clone(),
            dtr: self.dtr,
            state: self.state,
            step: self.step,
            pending: self.pending,
            names: self.names.map(|n| n.as_str().to_string()),
            raiser: self.raiser,
            previous: self.previous,
            summary: self.summary,
            observations: self.observations,
            provenance_lost: self.prov_lost || self.observations > 0,
        }
    }

    /// The session and its provenance store as plain data (see [`FullSnapshot`]).
    pub fn full_snapshot(&self) -> FullSnapshot {
        let mut session = self.snapshot();
        session.provenance_lost = self.prov_lost;
        FullSnapshot {
            session,
            provenance: self.prov.snapshot(),
        }
    }

    /// A session in the state a [`FullSnapshot`] holds, its provenance store included. Errors
    /// as [`Session::restore`] does, and for a store no session could have written.
    pub fn restore_full(
        monitor: &Arc<Monitor>,
        policy: &Arc<Policy>,
        snap: &FullSnapshot,
    ) -> Result<Session> {
        let mut s = Session::restore(monitor, policy, &snap.session)?;
        s.prov = Provenance::from_snapshot(&snap.provenance)
            .map_err(|e| MonitorError::Mismatch(format!("provenance: {e}")))?;
        s.prov_lost = snap.session.provenance_lost;
        Ok(s)
    }

    /// Mark the provenance store as lost (something the session should have observed was
    /// not: a tool result that could not be read): from then on it fails closed, as a
    /// restored session does — a value not seen in trusted text since counts as untrusted.
    pub fn lose_provenance(&mut self) {
        self.prov_lost = true;
    }

    /// A session in the state `snap` holds (an open session: a closed one is not journaled).
    /// Errors, with the reason, when the snapshot does not fit the monitor and the policy: a
    /// category without a table, a model state out of range, a model state that is not the
    /// one its `(d, t, r)` maps to, a name slot out of range.
    pub fn restore(
        monitor: &Arc<Monitor>,
        policy: &Arc<Policy>,
        snap: &SessionSnapshot,
    ) -> Result<Session> {
        let mut s = Session::new(monitor, policy, snap.category.as_deref())?;
        if !monitor.tracks_provenance() {
            let with_p = std::iter::once(snap.dtr)
                .chain(snap.pending.iter().flat_map(|p| [p.before.0, p.after.0]))
                .find(|d| d.p != Prov::None);
            if let Some(d) = with_p {
                return Err(MonitorError::Mismatch(format!(
                    "state {d} has a provenance but the monitor does not track provenance"
                )));
            }
        }
        let n = s.tab().state_names.len();
        let classifier = monitor.mapping != Mapping::Abstraction;
        let check = |what: &str, dtr: SafetyState, state: u32| -> Result<()> {
            if state as usize >= n {
                return Err(MonitorError::Mismatch(format!(
                    "{what}: model state {state} is out of range (the table has {n} states)"
                )));
            }
            if classifier && s.state_of(dtr) != state {
                return Err(MonitorError::Mismatch(format!(
                    "{what}: model state {state} is not the state of {dtr} ({})",
                    s.state_of(dtr)
                )));
            }
            if !classifier && dtr != SafetyState::START {
                return Err(MonitorError::Mismatch(format!(
                    "{what}: an abstraction monitor's session has no (d, t, r) but {dtr}"
                )));
            }
            Ok(())
        };
        check("state", snap.dtr, snap.state)?;
        if let Some(p) = &snap.pending {
            check("pending.before", p.before.0, p.before.1)?;
            check("pending.after", p.after.0, p.after.1)?;
            if p.slot > 1 {
                return Err(MonitorError::Mismatch(format!(
                    "pending.slot {} is not 0 or 1",
                    p.slot
                )));
            }
        }
        if let Some((slot, _, _)) = snap.previous {
            if slot > 1 {
                return Err(MonitorError::Mismatch(format!(
                    "previous: slot {slot} is not 0 or 1"
                )));
            }
        }
        s.dtr = snap.dtr;
        s.state = snap.state;
        s.step = snap.step;
        s.pending = snap.pending;
        for (slot, name) in s.names.iter_mut().zip(&snap.names) {
            slot.set(name);
        }
        s.raiser = snap.raiser;
        s.previous = snap.previous;
        s.summary = snap.summary;
        s.observations = snap.observations;
        // The journal does not hold the provenance store: a session that had observed
        // anything has lost it, and fails closed (unknown values count as untrusted).
        s.prov_lost = snap.provenance_lost || snap.observations > 0;
        Ok(s)
    }

    /// The value used for decisions in model state `s`: `(p, lo, hi, horizon)`.
    fn value_at(&self, s: u32) -> (f64, f64, f64, Option<u32>) {
        let t = self.tab();
        let s = s as usize;
        match self.rules().horizon {
            Some(h) => {
                let v = t.curve[s * self.monitor.horizon_max as usize + h as usize - 1];
                (v, v, v, Some(h))
            }
            None => (
                t.value[s],
                t.lower[s],
                t.upper[s],
                self.monitor.property_horizon,
            ),
        }
    }

    /// Write the tool's name into the slot that does not hold the previous executed action.
    fn name_slot(&mut self, tool: Option<&str>) -> u8 {
        let slot = match self.previous {
            Some((0, _, _)) => 1,
            _ => 0,
        };
        self.names[slot as usize].set(tool.unwrap_or(""));
        slot
    }

    fn previous_hit(&self) -> Option<Option<ArgHit>> {
        self.previous.map(|(_, h, _)| h)
    }

    /// The raiser of the data exposure, unless it is the previous action.
    fn raiser_hit(&self) -> Option<Option<ArgHit>> {
        match (self.raiser, self.previous) {
            (Some((rs, h)), Some((_, _, ps))) if rs != ps => Some(h),
            _ => None,
        }
    }

    /// An executed action (in `slot`, at `step`) moves the session from `before`: it becomes
    /// the previous action, and the raiser when it raised the data exposure.
    fn executed(&mut self, slot: u8, hit: Option<ArgHit>, step: u32, before: SafetyState) {
        self.previous = Some((slot, hit, step));
        if self.monitor.mapping != Mapping::Abstraction && self.dtr.d > before.d {
            self.names[2] = self.names[slot as usize];
            self.raiser = Some((step, hit));
        }
    }

    fn fail(&mut self, tool: Option<&str>, why: FailReason) -> Decision {
        let slot = self.name_slot(tool);
        let step = self.step;
        self.step += 1;
        self.summary.steps += 1;
        self.summary.decisions[Verdict::Block as usize] += 1;
        let classifier = self.monitor.mapping != Mapping::Abstraction;
        self.pending = None;
        Decision {
            verdict: Verdict::Block,
            probability: 1.0,
            bounds: [1.0, 1.0],
            bound: None,
            horizon: None,
            state_before: self.state,
            state_after: self.state,
            dtr_before: classifier.then_some(self.dtr),
            dtr_after: None,
            risk_before: classifier.then(|| self.dtr.risk_level()),
            risk_after: None,
            fired: Fired::FailClosed(why),
            mode: self.rules().mode,
            classification: None,
            step,
            advanced: false,
            unobserved: false,
            previous: self.previous_hit(),
            raiser: self.raiser_hit(),
            slot,
            table: self.table as u16,
            provenance: None,
        }
    }

    /// The abstract state of a concrete state, through the monitor's spec (no allocation: the
    /// values go into the session's buffer).
    fn abstract_index(&mut self, state: &Map<String, Value>) -> Option<u32> {
        let spec = self.monitor.runtime.abstraction.as_ref()?;
        self.buf.clear();
        for var in spec.variables() {
            let raw = state.get(var.name.as_str())?;
            let v = match (&var.kind, raw) {
                (VarKind::Bool, Value::Bool(b)) => EValue::Bool(*b),
                (VarKind::Int { min, max }, Value::Number(n)) => {
                    let i = n.as_i64()?;
                    if i < *min || i > *max {
                        return None;
                    }
                    EValue::Int(i)
                }
                (VarKind::Double, Value::Number(n)) => EValue::Double(n.as_f64()?),
                (VarKind::Enum(names), Value::String(s)) => {
                    EValue::Int(names.iter().position(|n| n == s)? as i64)
                }
                _ => return None,
            };
            self.buf.push(v);
        }
        let code = spec.encode(&self.buf).ok()?;
        spec.index_of(code)
    }

    /// Decide on a proposed action (see the module docs). Allocates nothing.
    pub fn gate(&mut self, action: &Action<'_>) -> Decision {
        let tool = action.tool();
        if self.closed {
            return self.fail(tool, FailReason::SessionClosed);
        }
        let mapping = self.monitor.mapping;
        let (dtr_after, state_after, classification, hit) = match (mapping, action) {
            (Mapping::Abstraction, Action::Tool(_)) => {
                return self.fail(tool, FailReason::ToolCallForAbstraction)
            }
            (Mapping::Dtr | Mapping::RiskLevel, Action::State { .. }) => {
                return self.fail(tool, FailReason::StateForClassifier)
            }
            (Mapping::Abstraction, Action::State { state, .. }) => match self.abstract_index(state)
            {
                Some(i) => (self.dtr, self.tab().map[i as usize], None, None),
                None => return self.fail(tool, FailReason::BadState),
            },
            (_, Action::Tool(call)) => {
                let tracks = self.monitor.tracks_provenance();
                let (c, cp) = {
                    let Some(cl) = self.monitor.runtime.classifier.as_ref() else {
                        return self.fail(tool, FailReason::Unmapped);
                    };
                    let store = tracks.then_some(&self.prov);
                    let Some(c) = cl.classify_with(call.name, call.args, store) else {
                        return self.fail(tool, FailReason::Unmapped);
                    };
                    let cp = if tracks {
                        Some(cl.call_provenance(&c, call.args, &self.prov, self.prov_lost))
                    } else {
                        None
                    };
                    (c, cp)
                };
                return self.gate_with(call.name, c, cp);
            }
        };
        self.decide(tool, dtr_after, state_after, classification, hit, None)
    }

    /// [`Session::gate`] for a tool call already classified: the table lookup, the policy and
    /// the state update alone (an abstraction monitor fails closed).
    pub fn gate_classified(&mut self, tool: &str, c: Classification) -> Decision {
        self.gate_with(tool, c, None)
    }

    /// [`Session::gate_classified`] with the call's provenance (p = NONE without).
    fn gate_with(
        &mut self,
        tool: &str,
        c: Classification,
        cp: Option<CallProvenance<'_>>,
    ) -> Decision {
        if self.closed {
            return self.fail(Some(tool), FailReason::SessionClosed);
        }
        let mapping = self.monitor.mapping;
        if mapping == Mapping::Abstraction {
            return self.fail(Some(tool), FailReason::ToolCallForAbstraction);
        }
        let p = cp.map_or(Prov::None, |cp| cp.p);
        let next = absorbing(self.dtr, self.dtr.update_p(c.implication, p));
        let hit = match c.matched {
            Matched::Rule { arg, .. } => arg,
            Matched::Default => None,
        };
        let provenance = cp.map(|cp| {
            self.prov_arg.set(cp.arg.unwrap_or(""));
            ProvenanceHit {
                p: cp.p,
                evidence: cp.evidence,
            }
        });
        let state_after = self.state_of(next);
        self.decide(Some(tool), next, state_after, Some(c), hit, provenance)
    }

    /// The model state of a safety state (classifier monitors).
    fn state_of(&self, s: SafetyState) -> u32 {
        let idx = match self.monitor.mapping {
            Mapping::Dtr => s.index(),
            _ => s.risk_level().index(),
        };
        self.tab().map[idx]
    }

    /// Move a classifier session to `s` after an action the agent reports as executed: never
    /// to a lower risk level than the current one (see [`no_lower`]), and the peak risk
    /// follows.
    fn apply_executed(&mut self, s: SafetyState) {
        let s = no_lower(self.dtr, s);
        self.dtr = s;
        self.state = self.state_of(s);
        let r = s.risk_level();
        if self.summary.peak_risk.is_none_or(|q| r > q) {
            self.summary.peak_risk = Some(r);
        }
    }

    fn decide(
        &mut self,
        tool: Option<&str>,
        dtr_after: SafetyState,
        state_after: u32,
        classification: Option<Classification>,
        hit: Option<ArgHit>,
        provenance: Option<ProvenanceHit>,
    ) -> Decision {
        let slot = self.name_slot(tool);
        let mapping = self.monitor.mapping;
        let (p, lo, hi, horizon) = self.value_at(state_after);
        // With the robust section the verdict is decided on the bound (a lookup).
        let bound = self
            .monitor
            .robust_bound(self.table, state_after, self.rules().horizon);
        let decided = bound.unwrap_or(p);
        let rules = self.rules();
        let name = tool.unwrap_or("");
        let (mut verdict, mut fired) =
            if let Some(i) = rules.always_block.iter().position(|pat| pat.matches(name)) {
                (Verdict::Block, Fired::AlwaysBlock(i as u16))
            } else if let Some(i) = rules.always_allow.iter().position(|pat| pat.matches(name)) {
                (Verdict::Allow, Fired::AlwaysAllow(i as u16))
            } else {
                match rules.verdict_for(decided) {
                    (v, Some(i)) => (v, Fired::Threshold(i)),
                    (v, None) => (v, Fired::BelowThresholds),
                }
            };
        let unobserved = self
            .tab()
            .learning
            .as_ref()
            .is_some_and(|l| l[state_after as usize].pac == PacStatus::Unobserved);
        if unobserved && !matches!(fired, Fired::AlwaysAllow(_) | Fired::AlwaysBlock(_)) {
            if let Some(min) = rules.unobserved {
                if min > verdict {
                    verdict = min;
                    fired = Fired::Unobserved;
                }
            }
        }
        let mode = rules.mode;
        let classifier = mapping != Mapping::Abstraction;
        let advanced = verdict <= Verdict::Warn;
        let before = (self.dtr, self.state);
        let decision = Decision {
            verdict,
            probability: p,
            bounds: [lo, hi],
            bound,
            horizon,
            state_before: self.state,
            state_after,
            dtr_before: classifier.then_some(self.dtr),
            dtr_after: classifier.then_some(dtr_after),
            risk_before: classifier.then(|| self.dtr.risk_level()),
            risk_after: classifier.then(|| dtr_after.risk()),
            fired,
            mode,
            classification,
            step: self.step,
            advanced,
            unobserved,
            previous: self.previous_hit(),
            raiser: self.raiser_hit(),
            slot,
            table: self.table as u16,
            provenance,
        };
        self.pending = Some(Pending {
            before,
            after: (dtr_after, state_after),
            advanced,
            slot,
            hit,
        });
        if advanced {
            self.dtr = dtr_after;
            self.state = state_after;
            self.executed(slot, hit, decision.step, before.0);
        }
        self.step += 1;
        let s = &mut self.summary;
        s.steps += 1;
        s.decisions[verdict as usize] += 1;
        if decided > s.peak_probability {
            s.peak_probability = decided;
        }
        if classifier {
            let r = dtr_after.risk_level();
            if s.peak_risk.is_none_or(|q| r > q) && advanced {
                s.peak_risk = Some(r);
            }
        }
        decision
    }

    /// Say what happened to the last gated action: `executed = true` after a pause or block
    /// moves the session to the state it projected (a person approved it); `executed = false`
    /// after an allow or warn moves the session back. Without a gated action before it, an
    /// executed action is classified and applied. An executed action never lowers the risk
    /// level, and nothing moves a session out of VIOLATED. Returns whether the state changed
    /// (`true` for an executed action applied even when the state stays).
    pub fn record(&mut self, action: &Action<'_>, executed: bool) -> bool {
        if self.closed {
            return false;
        }
        match self.pending.take() {
            Some(p) if self.names[p.slot as usize].as_str() == action.tool().unwrap_or("") => {
                match (p.advanced, executed) {
                    (false, true) => {
                        if self.monitor.mapping == Mapping::Abstraction {
                            (self.dtr, self.state) = p.after;
                        } else {
                            self.apply_executed(p.after.0);
                        }
                        self.executed(p.slot, p.hit, self.step.saturating_sub(1), p.before.0);
                        self.summary.overridden += 1;
                        true
                    }
                    // VIOLATED is absorbing: the agent's word that an allowed action into it
                    // did not run does not take the session out (fail closed).
                    (true, false)
                        if self.monitor.mapping != Mapping::Abstraction
                            && self.dtr.risk_level() == RiskLevel::Violated =>
                    {
                        false
                    }
                    (true, false) => {
                        (self.dtr, self.state) = p.before;
                        true
                    }
                    _ => false,
                }
            }
            _ if executed => {
                // Not the action last gated: apply it as it is (never lowering the risk).
                let (step, summary, dtr) = (self.step, self.summary, self.dtr);
                let d = self.gate(action);
                (self.step, self.summary) = (step, summary);
                if matches!(d.fired, Fired::FailClosed(_)) {
                    return false;
                }
                match d.dtr_after {
                    Some(after) => {
                        self.dtr = dtr;
                        self.apply_executed(after);
                    }
                    None if !d.advanced => self.state = d.state_after,
                    None => {}
                }
                self.pending = None;
                true
            }
            _ => false,
        }
    }

    /// The tool names of a decision, of the previous executed action and of the action that
    /// raised the data exposure (valid for the session's latest decision: the next `gate`
    /// reuses the slots).
    pub fn names(&self, d: &Decision) -> Names<'_> {
        let slot = d.slot as usize & 1;
        Names {
            tool: self.names[slot].as_str(),
            previous: d.previous.map(|_| self.names[slot ^ 1].as_str()),
            raiser: d.raiser.map(|_| self.names[2].as_str()),
        }
    }

    /// The provenance part of the latest decision's reason, when its p is not NONE: which
    /// argument, which value, where it was first seen ("recipient us13… first appeared in the
    /// result of `read_file` at step 2; the user's request does not contain it").
    pub fn provenance_reason(&self, d: &Decision) -> Option<String> {
        let h = d.provenance.filter(|h| h.p != Prov::None)?;
        let arg = self.prov_arg.as_str();
        Some(match h.evidence {
            ArgProvenance::Untrusted(e) if e.at_cap && self.prov_lost => format!(
                "{arg} holds a {} value not seen in trusted text since the session was restored (the restart lost what the session had observed: fails closed)",
                e.kind.as_str()
            ),
            ev => self.prov.explain(arg, &ev),
        })
    }

    /// The reason of the session's latest decision, for a person (allocates).
    pub fn reason(&self, d: &Decision) -> String {
        let mut r = render_reason(&self.monitor, self.rules(), d, &self.names(d));
        if let Some(p) = self.provenance_reason(d) {
            r.push_str("; ");
            r.push_str(&p);
        }
        r
    }

    /// The latest decision as owned, serialisable data with names and the reason (for JSON
    /// front-ends).
    pub fn report(&self, d: &Decision, session: &str) -> DecisionReport {
        let mut r = report(&self.monitor, self.rules(), d, session, &self.names(d));
        if let Some(h) = d.provenance {
            r.provenance = Some(h.p);
            if let Some(p) = self.provenance_reason(d) {
                r.reason.push_str("; ");
                r.reason.push_str(&p);
                r.provenance_reason = Some(p);
            }
        }
        r
    }
}

/// The next safety state of a session in `cur` (`next` is `cur.update(a)`): VIOLATED is
/// absorbing, so from a VIOLATED state the latest action's reversibility stays IRREVERSIBLE
/// (d and t only grow, so the state still matches rule 1, 2 or 13).
pub(crate) fn absorbing(cur: SafetyState, next: SafetyState) -> SafetyState {
    if cur.risk_level() == RiskLevel::Violated {
        // An untrusted action stays the latest one's p (rule 14 keeps holding: r = IRREVERSIBLE).
        let p = if cur.p == Prov::Untrusted {
            Prov::Untrusted
        } else {
            next.p
        };
        SafetyState {
            r: Reversibility::Irreversible,
            p,
            ..next
        }
    } else {
        next
    }
}

/// Where an action the agent reports as executed moves a session in `cur` (`next` has
/// `d`, `t` ≥ those of `cur`): to `next`, unless that is a lower risk level (a reversible
/// action after an irreversible one), then to `next` with `cur`'s reversibility. The risk
/// rules only ever require a larger `d` or `t` or IRREVERSIBLE, so with `d` and `t` no smaller
/// and the same `r` the level is no lower: a record never lowers the risk.
fn no_lower(cur: SafetyState, next: SafetyState) -> SafetyState {
    let next = SafetyState {
        d: next.d.max(cur.d),
        t: next.t.max(cur.t),
        r: next.r,
        p: next.p,
    };
    if next.risk_level() < cur.risk_level() {
        SafetyState {
            r: cur.r,
            p: cur.p,
            ..next
        }
    } else {
        next
    }
}

fn prob_phrase(m: &Monitor, h: Option<u32>) -> String {
    match (&m.stay, h) {
        (None, Some(h)) => format!("P({} within {h})", m.target_name()),
        (None, None) => format!("P({} eventually)", m.target_name()),
        (Some(_), Some(h)) if Some(h) != m.property_horizon => {
            format!("P({} within {h})", m.target_name())
        }
        (Some(_), _) => m.property.clone(),
    }
}

/// The names a reason mentions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Names<'a> {
    /// The action's tool.
    pub tool: &'a str,
    /// The previous executed action's tool.
    pub previous: Option<&'a str>,
    /// The tool that raised the data exposure to its level, when not the previous one.
    pub raiser: Option<&'a str>,
}

/// The reason text of a decision: `read_file(.env) … write_file then send_email(external
/// email): CREDENTIALS·NETWORK·IRREVERSIBLE [VIOLATED, rule 1], P(violated within 5) = 1.00 ≥
/// 0.90 → block`.
pub fn render_reason(m: &Monitor, rules: &Rules, d: &Decision, names: &Names<'_>) -> String {
    let (tool, previous) = (names.tool, names.previous);
    use std::fmt::Write;
    let t = &m.tables[d.table as usize];
    let hit_text = |h: &Option<ArgHit>| -> String {
        match (h, m.classifier()) {
            (Some(h), Some(c)) => format!("({})", c.hit_text(h)),
            _ => String::new(),
        }
    };
    let mut s = String::new();
    if let (Some(r), Some(rh)) = (names.raiser, &d.raiser) {
        let _ = write!(s, "{r}{} … ", hit_text(rh));
    }
    if let (Some(prev), Some(ph)) = (previous, &d.previous) {
        let _ = write!(s, "{prev}{} then ", hit_text(ph));
    }
    let hit = d.classification.and_then(|c| match c.matched {
        Matched::Rule { arg, .. } => arg,
        Matched::Default => None,
    });
    let tool = if tool.is_empty() { "action" } else { tool };
    let _ = write!(s, "{tool}{}", hit_text(&hit));
    if let Fired::FailClosed(why) = d.fired {
        let _ = write!(s, ": {} → block", why.text());
        return s;
    }
    let state = match d.dtr_after {
        Some(dtr) if m.mapping == Mapping::Dtr => dtr.to_string(),
        Some(dtr) => format!("{dtr} ({})", t.name(d.state_after)),
        None => t.name(d.state_after).to_string(),
    };
    let _ = write!(s, ": {state}");
    if let Some((level, rule)) = d.risk_after {
        let _ = write!(s, " [{level}, rule {rule}]");
    }
    if let (Some(c), Some(cl)) = (d.classification, m.classifier()) {
        if c.matched == Matched::Default {
            let _ = write!(s, " [{}]", cl.describe(&c.matched));
        }
    }
    let phrase = prob_phrase(m, d.horizon);
    // `= 0.12`, or with the robust section `= 0.12 (robust bound 0.31, 95% confidence)` (`over
    // the model's intervals` when they carry no confidence): the verdict compares the bound.
    let value = match d.bound {
        Some(b) => {
            let conf = match m.robust_confidence(d.table as usize) {
                Some(c) => format!(", {}% confidence", percent(c)),
                None => " over the model's intervals".to_string(),
            };
            format!("{:.2} (robust bound {b:.2}{conf})", d.probability)
        }
        None => format!("{:.2}", d.probability),
    };
    match d.fired {
        Fired::Threshold(i) => {
            let th = &rules.thresholds[i as usize];
            let _ = write!(s, ", {phrase} = {value} ≥ {:.2} → {}", th.at, d.verdict);
            if let Some(msg) = &th.message {
                let _ = write!(s, " ({msg})");
            }
        }
        Fired::BelowThresholds => {
            let lowest = rules.thresholds.last().map_or(1.0, |t| t.at);
            let _ = write!(s, ", {phrase} = {value} < {:.2} → {}", lowest, d.verdict);
        }
        Fired::AlwaysBlock(i) => {
            let pat = rules
                .always_block
                .get(i as usize)
                .map_or("", |p| p.as_str());
            let _ = write!(s, ", {phrase} = {value}; `{pat}` is always blocked → block");
        }
        Fired::AlwaysAllow(i) => {
            let pat = rules
                .always_allow
                .get(i as usize)
                .map_or("", |p| p.as_str());
            let _ = write!(s, ", {phrase} = {value}; `{pat}` is always allowed → allow");
        }
        Fired::Unobserved => {
            let _ = write!(
                s,
                ", {phrase} = {value}; the policy's verdict for unobserved states → {}",
                d.verdict
            );
        }
        Fired::FailClosed(_) => {}
    }
    if d.bounds[1] - d.bounds[0] > 1e-9 {
        let _ = write!(s, " (bounds [{:.4}, {:.4}])", d.bounds[0], d.bounds[1]);
    }
    if d.unobserved {
        let _ = write!(
            s,
            "; state {} was never observed in training: its probabilities are smoothing, not data",
            t.name(d.state_after)
        );
    }
    let path = t.path(d.state_after);
    if !path.is_empty() {
        let names: Vec<&str> = std::iter::once(d.state_after)
            .chain(path.iter().copied())
            .map(|x| t.name(x))
            .collect();
        let _ = write!(
            s,
            "; most probable path to {}: {} ({:.3})",
            m.target_name(),
            names.join(" → "),
            t.path_probability[d.state_after as usize]
        );
    }
    if let Some(c) = continuation(m, d) {
        let _ = write!(
            s,
            "; most probable continuation: {} ({}% of the risk, path probability {:.3})",
            describe_step(m, t, c.from, c.next),
            percent(c.share),
            c.probability
        );
    }
    s
}

/// The most probable continuation a decision's reason states: at `warn` and above, with the
/// `explanations` section, when the target can still be reached (a lookup).
pub fn continuation(m: &Monitor, d: &Decision) -> Option<Continuation> {
    if matches!(d.fired, Fired::FailClosed(_)) || d.verdict < Verdict::Warn {
        return None;
    }
    m.explanation(d.table as usize, d.state_after, d.horizon)
}

/// A share or confidence as a percentage without needless digits: `62`, `95`, `99.9`.
fn percent(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{}", p.round())
    } else {
        format!("{p:.1}")
    }
}

/// What kind of action a step of the model from state `from` to state `to` is, in words:
/// for a `dtr` monitor its `(d, t, r)` change ("an irreversible network send of sensitive data
/// (INTERNAL·READ_ONLY·FULLY_REVERSIBLE → SENSITIVE·NETWORK·IRREVERSIBLE)"), for a
/// `risk-level` or `abstraction` monitor the two states' names.
pub fn describe_step(m: &Monitor, t: &Table, from: u32, to: u32) -> String {
    match m.mapping {
        Mapping::Dtr => {
            let dtr = |s: u32| {
                t.map
                    .iter()
                    .position(|&x| x == s)
                    .and_then(SafetyState::from_index)
            };
            match (dtr(from), dtr(to)) {
                (Some(a), Some(b)) => format!("{} ({a} → {b})", dtr_action(a, b)),
                _ => format!("a step to {}", t.name(to)),
            }
        }
        Mapping::RiskLevel | Mapping::Abstraction => {
            format!("a step from {} to {}", t.name(from), t.name(to))
        }
    }
}

/// The action that takes a session from `a` to `b`, in words ("a network send of sensitive
/// data").
pub(crate) fn dtr_action(a: SafetyState, b: SafetyState) -> String {
    use crate::dtr::{DataExposure as D, ToolEscalation as T};
    // The tool is known when t rises (it is the new t) or stays READ_ONLY (a read); else it
    // is some tool of at most t.
    let noun = if b.t > a.t {
        match b.t {
            T::FileWrite => "file write",
            T::CodeExec => "code run",
            T::Network => "network send",
            T::ReadOnly => "read",
        }
    } else if b.t == T::ReadOnly && b.d > a.d {
        "read"
    } else {
        "action"
    };
    let adjective = match b.r {
        Reversibility::Irreversible => "irreversible ",
        Reversibility::Partially => "partly reversible ",
        Reversibility::FullyReversible => "",
    };
    let data = |d: D| match d {
        D::None => "no data",
        D::Public => "public data",
        D::Internal => "internal data",
        D::Sensitive => "sensitive data",
        D::Credentials => "credentials",
    };
    let of = if b.d > a.d && noun == "action" {
        format!(" exposing {}", data(b.d))
    } else if b.d > a.d {
        format!(" of {}", data(b.d))
    } else if b.d > D::None && noun != "action" {
        format!(" with {} exposed", data(b.d))
    } else {
        String::new()
    };
    let untrusted = if b.p == Prov::Untrusted && a.p != Prov::Untrusted {
        " to an untrusted destination"
    } else {
        ""
    };
    let phrase = format!("{adjective}{noun}");
    let article = if phrase.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {phrase}{of}{untrusted}")
}

/// A decision with names and reason: what `monitor gate` prints, one JSON line per action.
#[derive(Clone, Debug, Serialize)]
pub struct DecisionReport {
    /// The session id.
    pub session: String,
    /// Step in the session.
    pub step: u32,
    /// The tool.
    pub tool: String,
    /// `allow`, `warn`, `pause`, `block`.
    pub verdict: Verdict,
    /// The probability compared with the thresholds.
    pub probability: f64,
    /// Its sound bounds.
    pub bounds: [f64; 2],
    /// The robust upper bound the verdict was decided on (monitors with the `robust`
    /// section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
    /// The confidence the bound holds with (`None` with the bound: the model's intervals,
    /// given without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// The horizon of the probability.
    pub horizon: Option<u32>,
    /// The state the action leads to (a model state name).
    pub state: String,
    /// The state before.
    pub state_before: String,
    /// `(d, t, r)` after, for classifier monitors.
    pub dtr: Option<String>,
    /// Risk level after.
    pub risk: Option<RiskLevel>,
    /// The risk rule (1–12).
    pub risk_rule: Option<u8>,
    /// What decided: `threshold 0.60`, `always_block send_mass_email`, `fail_closed: ...`,
    /// with the classifier rule when there is one.
    pub rule: String,
    /// The enforcement mode.
    pub mode: Mode,
    /// Whether the session moved to `state`.
    pub advanced: bool,
    /// The projected state was never observed in training.
    pub unobserved: bool,
    /// The most probable path from `state` to the target, with its probability.
    pub path: Vec<String>,
    /// That path's probability.
    pub path_probability: f64,
    /// The reason, for a person (and for the agent in `reflect` mode).
    pub reason: String,
    /// The call's p (monitors that track provenance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Prov>,
    /// Which argument and value decided p and where it was first seen (p ≠ NONE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance_reason: Option<String>,
    /// The most probable continuation (at `warn` and above, monitors with the
    /// `explanations` section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation: Option<ContinuationReport>,
}

/// The most probable continuation of a decision, for JSON front-ends.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContinuationReport {
    /// Its next state (a model state name).
    pub next: String,
    /// What kind of action that step is ([`describe_step`]).
    pub action: String,
    /// The probability of the most probable path to the target.
    pub probability: f64,
    /// Its share of the risk (the path's probability over the point value), in [0, 1].
    pub share: f64,
}

/// Build the report of a decision.
pub fn report(
    m: &Monitor,
    rules: &Rules,
    d: &Decision,
    session: &str,
    names: &Names<'_>,
) -> DecisionReport {
    let t = &m.tables[d.table as usize];
    let mut rule = match d.fired {
        Fired::Threshold(i) => format!(
            "threshold {}",
            rules.thresholds.get(i as usize).map_or(0.0, |t| t.at)
        ),
        Fired::BelowThresholds => "below thresholds".into(),
        Fired::AlwaysBlock(i) => format!(
            "always_block {}",
            rules
                .always_block
                .get(i as usize)
                .map_or("", |p| p.as_str())
        ),
        Fired::AlwaysAllow(i) => format!(
            "always_allow {}",
            rules
                .always_allow
                .get(i as usize)
                .map_or("", |p| p.as_str())
        ),
        Fired::Unobserved => "unobserved state".into(),
        Fired::FailClosed(why) => format!(
            "fail_closed: {}",
            serde_json::to_value(why)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
    };
    if let (Some(c), Some(cl)) = (d.classification, m.classifier()) {
        rule.push_str(&format!("; classified by {}", cl.describe(&c.matched)));
    }
    let failed = matches!(d.fired, Fired::FailClosed(_));
    let path: Vec<String> = if failed {
        Vec::new()
    } else {
        t.path(d.state_after)
            .iter()
            .map(|&s| t.name(s).to_string())
            .collect()
    };
    DecisionReport {
        session: session.to_string(),
        step: d.step,
        tool: names.tool.to_string(),
        verdict: d.verdict,
        probability: d.probability,
        bounds: d.bounds,
        bound: d.bound,
        confidence: d.bound.and_then(|_| m.robust_confidence(d.table as usize)),
        horizon: d.horizon,
        state: t.name(d.state_after).to_string(),
        state_before: t.name(d.state_before).to_string(),
        dtr: d.dtr_after.map(|s| s.to_string()),
        risk: d.risk_after.map(|r| r.0),
        risk_rule: d.risk_after.map(|r| r.1),
        rule,
        mode: d.mode,
        advanced: d.advanced,
        unobserved: d.unobserved,
        path,
        path_probability: if failed {
            0.0
        } else {
            t.path_probability[d.state_after as usize]
        },
        reason: render_reason(m, rules, d, names),
        provenance: None,
        provenance_reason: None,
        continuation: continuation(m, d).map(|c| ContinuationReport {
            next: t.name(c.next).to_string(),
            action: describe_step(m, t, c.from, c.next),
            probability: c.probability,
            share: c.share,
        }),
    }
}

/// One line of the audit log: enough to review and replay a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AuditRecord {
    /// The session.
    pub session: String,
    /// Step in the session.
    pub step: u32,
    /// The tool.
    pub action: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The probability.
    pub probability: f64,
    /// The robust bound the verdict was decided on (monitors with the `robust` section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
    /// What decided.
    pub rule: String,
    /// The state the action leads to.
    pub state: String,
    /// Whether the session advanced.
    pub advanced: bool,
}

impl AuditRecord {
    /// The audit record of a report.
    pub fn from_report(r: &DecisionReport) -> AuditRecord {
        AuditRecord {
            session: r.session.clone(),
            step: r.step,
            action: r.tool.clone(),
            verdict: r.verdict,
            probability: r.probability,
            bound: r.bound,
            rule: r.rule.clone(),
            state: r.state.clone(),
            advanced: r.advanced,
        }
    }
}

/// Why a session could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionRefused {
    /// The id belonged to a session that expired or was evicted: it is never restarted.
    Expired,
    /// The session could not be opened (unknown category without fallback, bad horizon).
    Open(String),
}

/// The ids of closed sessions, in a fixed-size Bloom filter: `m` bits, `k` = 7 bit positions
/// per id (Kirsch–Mitzenmacher double hashing: `h1 + i·h2 mod m`, `h1` and `h2` the first two
/// little-endian 64-bit words of SHA-256(`augur-burned-id\0` ‖ id), `h2` made odd; a specified
/// hash, so that a filter saved in a state journal means the same to every build). No false
/// negatives: a burned id is refused forever, however many ids are burned after it. A fresh
/// id is refused (fail closed) with probability about `(1 - e^(-k·n/m))^k` after `n` burned
/// ids: with the default 2^23 bits (1 MiB), 1e-6 at n = 200 000 and 1e-3 at n = 600 000.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnedIds {
    bits: Vec<u64>,
    m: u64,
    count: u64,
}

impl BurnedIds {
    /// Hash functions per id.
    pub const K: u32 = 7;
    /// The default size, in bits (1 MiB).
    pub const DEFAULT_BITS: u64 = 1 << 23;
    /// The largest size, in bits (2^33: 1 GiB).
    pub const MAX_BITS: u64 = 1 << 33;

    /// A filter of `bits` bits (clamped to 64..=[`BurnedIds::MAX_BITS`], rounded up to a multiple of
    /// 64).
    pub fn new(bits: u64) -> BurnedIds {
        let words = bits.clamp(64, Self::MAX_BITS).div_ceil(64);
        BurnedIds {
            bits: vec![0; words as usize],
            m: words * 64,
            count: 0,
        }
    }

    fn positions(&self, id: &str) -> [u64; Self::K as usize] {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(b"augur-burned-id\0")
            .chain_update(id.as_bytes())
            .finalize();
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&digest[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        let (h1, h2) = (word(0), word(1) | 1);
        let mut a = [0; Self::K as usize];
        for (i, slot) in a.iter_mut().enumerate() {
            *slot = h1.wrapping_add((i as u64).wrapping_mul(h2)) % self.m;
        }
        a
    }

    /// Burn `id`.
    pub fn insert(&mut self, id: &str) {
        for p in self.positions(id) {
            self.bits[(p / 64) as usize] |= 1 << (p % 64);
        }
        self.count += 1;
    }

    /// Whether `id` may have been burned (always true for a burned id).
    pub fn contains(&self, id: &str) -> bool {
        self.positions(id)
            .iter()
            .all(|&p| self.bits[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }

    /// The estimated rate at which a fresh id is refused now, `(1 - e^(-k·n/m))^k`.
    pub fn false_refusal_rate(&self) -> f64 {
        let k = f64::from(Self::K);
        (1.0 - (-k * self.count as f64 / self.m as f64).exp()).powf(k)
    }

    /// The size in bits.
    pub fn bits(&self) -> u64 {
        self.m
    }

    /// The number of ids burned (counting repeats).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Add every id burned into `other` (a filter of the same size; else an error).
    pub fn union(&mut self, other: &BurnedIds) -> std::result::Result<(), String> {
        if other.m != self.m {
            return Err(format!(
                "a burned-id filter of {} bits cannot join one of {} bits",
                other.m, self.m
            ));
        }
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
        self.count += other.count;
        Ok(())
    }

    /// The non-zero 64-bit words, `(index, word)` (the filter's saved form).
    pub fn words(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.bits
            .iter()
            .enumerate()
            .filter(|(_, &w)| w != 0)
            .map(|(i, &w)| (i as u64, w))
    }

    /// A filter of `bits` bits with the given non-zero words and count (the inverse of
    /// [`BurnedIds::words`]). Errors when `bits` is not a multiple of 64 in 64..=2^33 or a
    /// word index is out of range.
    pub fn from_words(
        bits: u64,
        count: u64,
        words: impl IntoIterator<Item = (u64, u64)>,
    ) -> std::result::Result<BurnedIds, String> {
        if bits < 64 || !bits.is_multiple_of(64) || bits > Self::MAX_BITS {
            return Err(format!(
                "a burned-id filter has a multiple of 64 bits in 64..=2^33, not {bits}"
            ));
        }
        let mut f = BurnedIds::new(bits);
        for (i, w) in words {
            let slot = f
                .bits
                .get_mut(usize::try_from(i).unwrap_or(usize::MAX))
                .ok_or_else(|| format!("word {i} is beyond the filter's {bits} bits"))?;
            *slot |= w;
        }
        f.count = count;
        Ok(f)
    }
}

/// Many sessions by id, with expiry after `ttl` seconds without activity and eviction of the
/// least recently used beyond `capacity`. An id that expired, was evicted or ended is burned
/// ([`BurnedIds`]) and refused forever, never silently restarted at the start state. Expiry
/// and eviction are O(1) amortised per request: a queue of (last use, id) in time order, its
/// stale entries (the session was used again since) dropped when they reach the front.
///
/// With a state journal ([`SessionStore::restore`], [`crate::journal`]) every move is saved:
/// call [`SessionStore::commit`] after each request, before its answer is sent; times are then
/// seconds since the Unix epoch ([`crate::journal::unix_now`]).
pub struct SessionStore {
    monitor: Arc<Monitor>,
    policy: Arc<Policy>,
    sessions: HashMap<String, (Session, u64)>,
    order: VecDeque<(u64, String)>,
    burned: BurnedIds,
    ttl: Option<u64>,
    capacity: usize,
    journal: Option<crate::journal::Journal>,
    /// Ids burned since the last commit.
    unsaved_burns: Vec<String>,
    /// The session the last request used.
    dirty: Option<String>,
}

impl SessionStore {
    /// A store; `ttl` in seconds (`None`: never expire), `capacity` ≥ 1 open sessions, burned
    /// ids in a filter of [`BurnedIds::DEFAULT_BITS`].
    pub fn new(
        monitor: Arc<Monitor>,
        policy: Arc<Policy>,
        ttl: Option<u64>,
        capacity: usize,
    ) -> SessionStore {
        SessionStore {
            monitor,
            policy,
            sessions: HashMap::new(),
            order: VecDeque::new(),
            burned: BurnedIds::new(BurnedIds::DEFAULT_BITS),
            ttl,
            capacity: capacity.max(1),
            journal: None,
            unsaved_burns: Vec::new(),
            dirty: None,
        }
    }

    /// Open the state journal `path` (creating it when missing), restore its sessions and
    /// burned ids at time `now` (Unix seconds; sessions idle beyond the ttl expire), and
    /// compact it. From then on [`SessionStore::commit`] appends every move. Errors (located
    /// at the journal's line) for a journal of another server or monitor, a line that is not
    /// an entry, a session that does not fit the monitor.
    pub fn restore(
        &mut self,
        path: &std::path::Path,
        now: u64,
    ) -> Result<crate::journal::Restored> {
        use crate::journal::{self, Entry, Header, Loaded};
        let header = Header::new("gate", &self.monitor);
        let loaded = journal::load(path, &header)?;
        let mut report = journal::Restored {
            path: path.display().to_string(),
            existed: loaded.existed,
            partial: loaded.partial,
            ..Default::default()
        };
        let asked = self.burned.bits();
        let mut open: HashMap<String, (Session, u64)> = HashMap::new();
        for (line, e) in loaded.entries {
            match e {
                Entry::Session { id, t, session, .. } => {
                    let s =
                        Session::restore(&self.monitor, &self.policy, &session).map_err(|err| {
                            Loaded::error_at(path, line, format!("session `{id}`: {err}"))
                        })?;
                    open.insert(id, (s, t));
                }
                Entry::Burn { id } => {
                    open.remove(&id);
                    self.burned.insert(&id);
                }
                Entry::Gone { ids } => {
                    for id in ids {
                        open.remove(&id);
                        self.burned.insert(&id);
                    }
                }
                ref f @ Entry::Filter { .. } => {
                    let f = f
                        .to_filter()
                        .unwrap_or_else(|| Err("not a filter".into()))
                        .map_err(|m| Loaded::error_at(path, line, m))?;
                    if self.burned.count == 0 {
                        // The journal's filter, of the size it was written with.
                        self.burned = f;
                    } else {
                        self.burned
                            .union(&f)
                            .map_err(|m| Loaded::error_at(path, line, m))?;
                    }
                }
                Entry::NextPause { .. } => {}
            }
        }
        if self.burned.bits() != asked {
            report.kept_bits = Some((asked, self.burned.bits()));
        }
        let mut open: Vec<(String, (Session, u64))> = open.into_iter().collect();
        open.sort_by(|a, b| (a.1 .1, &a.0).cmp(&(b.1 .1, &b.0)));
        for (id, (s, t)) in open {
            self.order.push_back((t, id.clone()));
            self.sessions.insert(id, (s, t));
        }
        // Beyond the capacity, the least recently used are evicted (burned), as at run time.
        while self.sessions.len() > self.capacity {
            self.clean_front();
            match self.order.pop_front() {
                Some((_, lru)) => {
                    self.sessions.remove(&lru);
                    self.bury(&lru);
                }
                None => break,
            }
        }
        let before = self.sessions.len();
        self.expire(now);
        report.expired = before - self.sessions.len();
        report.open = self.sessions.len();
        report.burned = self.burned.count();
        self.unsaved_burns.clear();
        self.dirty = None;
        self.journal = Some(journal::Journal::create(
            path,
            header,
            &self.snapshot_entries(),
        )?);
        Ok(report)
    }

    /// The journal entries of the store now: the filter, then every open session.
    fn snapshot_entries(&self) -> Vec<crate::journal::Entry> {
        let mut v = vec![crate::journal::Entry::filter(&self.burned)];
        let mut open: Vec<(&String, &(Session, u64))> = self.sessions.iter().collect();
        open.sort_by(|a, b| (a.1 .1, a.0).cmp(&(b.1 .1, b.0)));
        for (id, (s, t)) in open {
            v.push(crate::journal::Entry::Session {
                id: id.clone(),
                t: *t,
                session: Box::new(s.snapshot()),
                pause: None,
            });
        }
        v
    }

    /// Save what the last request changed (ids burned, the state of the session it used) to
    /// the journal, if there is one, and compact it when it has grown too large. Call it
    /// before the request's answer is sent; on an error, send no answer (fail closed).
    pub fn commit(&mut self) -> Result<()> {
        let Some(journal) = self.journal.as_mut() else {
            self.unsaved_burns.clear();
            self.dirty = None;
            return Ok(());
        };
        let mut entries: Vec<crate::journal::Entry> = self
            .unsaved_burns
            .drain(..)
            .map(|id| crate::journal::Entry::Burn { id })
            .collect();
        if let Some(id) = self.dirty.take() {
            if let Some((s, t)) = self.sessions.get(&id) {
                entries.push(crate::journal::Entry::Session {
                    id,
                    t: *t,
                    session: Box::new(s.snapshot()),
                    pause: None,
                });
            }
        }
        journal.append(&entries)?;
        if journal.wants_compaction() {
            let snap = self.snapshot_entries();
            if let Some(j) = self.journal.as_mut() {
                j.compact(&snap)?;
            }
        }
        Ok(())
    }

    /// The open sessions and their ids (in no particular order).
    pub fn sessions(&self) -> impl Iterator<Item = (&str, &Session)> {
        self.sessions.iter().map(|(id, (s, _))| (id.as_str(), s))
    }

    /// The journal, if there is one.
    pub fn journal(&self) -> Option<&crate::journal::Journal> {
        self.journal.as_ref()
    }

    /// The number of open sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// The same store with a burned-id filter of `bits` bits (see [`BurnedIds`]).
    pub fn with_burned_bits(mut self, bits: u64) -> SessionStore {
        self.burned = BurnedIds::new(bits);
        self
    }

    /// The burned ids.
    pub fn burned(&self) -> &BurnedIds {
        &self.burned
    }

    fn bury(&mut self, id: &str) {
        self.burned.insert(id);
        if self.journal.is_some() {
            self.unsaved_burns.push(id.to_string());
        }
    }

    /// Drop the front of the queue while it is stale; the front is then the least recently
    /// used open session.
    fn clean_front(&mut self) {
        while let Some((t, id)) = self.order.front() {
            match self.sessions.get(id) {
                Some((_, last)) if last == t => return,
                _ => {
                    self.order.pop_front();
                }
            }
        }
    }

    /// Close sessions idle for longer than the ttl at time `now` (seconds).
    pub fn expire(&mut self, now: u64) {
        let Some(ttl) = self.ttl else { return };
        loop {
            self.clean_front();
            match self.order.front() {
                Some((t, _)) if now.saturating_sub(*t) > ttl => {
                    if let Some((_, id)) = self.order.pop_front() {
                        self.sessions.remove(&id);
                        self.bury(&id);
                    }
                }
                _ => return,
            }
        }
    }

    /// The session `id` at time `now`: an open one, or a new one at the start state for an id
    /// never seen. An expired, evicted or ended id is refused.
    pub fn get(
        &mut self,
        id: &str,
        category: Option<&str>,
        now: u64,
    ) -> std::result::Result<&mut Session, SessionRefused> {
        self.expire(now);
        if !self.sessions.contains_key(id) {
            if self.burned.contains(id) {
                return Err(SessionRefused::Expired);
            }
            let s = Session::new(&self.monitor, &self.policy, category)
                .map_err(|e| SessionRefused::Open(e.to_string()))?;
            if self.sessions.len() >= self.capacity {
                self.clean_front();
                if let Some((_, lru)) = self.order.pop_front() {
                    self.sessions.remove(&lru);
                    self.bury(&lru);
                }
            }
            self.sessions.insert(id.to_string(), (s, now));
            self.order.push_back((now, id.to_string()));
        }
        let entry = self.sessions.get_mut(id).ok_or(SessionRefused::Expired)?;
        if entry.1 != now {
            entry.1 = now;
            self.order.push_back((now, id.to_string()));
            // Stale entries never outnumber the open sessions by much: drop them all now
            // and then (amortised O(1) per request).
            if self.order.len() > 2 * self.sessions.len() + 64 {
                let sessions = &self.sessions;
                self.order
                    .retain(|(t, k)| sessions.get(k).is_some_and(|(_, last)| last == t));
            }
        }
        if self.journal.is_some() && self.dirty.as_deref() != Some(id) {
            self.dirty = Some(id.to_string());
        }
        let entry = self.sessions.get_mut(id).ok_or(SessionRefused::Expired)?;
        Ok(&mut entry.0)
    }

    /// Close and forget a session (its id is then refused).
    pub fn end(&mut self, id: &str) {
        if self.sessions.remove(id).is_some() {
            self.bury(id);
        }
    }

    /// The policy's rules for a session's category.
    pub fn rules_for(&self, category: Option<&str>) -> &Rules {
        self.policy.rules_for(category)
    }

    /// The monitor.
    pub fn monitor(&self) -> &Arc<Monitor> {
        &self.monitor
    }

    /// A block decision for a refused session (its reason: [`FailReason::SessionClosed`]).
    pub fn refused_decision(&self, tool: &str) -> Decision {
        let mut s = Session::new(&self.monitor, &self.policy, None)
            .or_else(|_| {
                let cat = self.monitor.tables[0].category.clone();
                Session::new(&self.monitor, &self.policy, cat.as_deref())
            })
            .ok();
        match s.as_mut() {
            Some(s) => {
                s.close();
                let args = Value::Null;
                s.gate(&Action::Tool(ToolCall::new(tool, &args)))
            }
            None => Decision {
                verdict: Verdict::Block,
                probability: 1.0,
                bounds: [1.0, 1.0],
                bound: None,
                horizon: None,
                state_before: 0,
                state_after: 0,
                dtr_before: None,
                dtr_after: None,
                risk_before: None,
                risk_after: None,
                fired: Fired::FailClosed(FailReason::SessionClosed),
                mode: Mode::Stop,
                classification: None,
                step: 0,
                advanced: false,
                unobserved: false,
                previous: None,
                raiser: None,
                slot: 0,
                table: 0,
                provenance: None,
            },
        }
    }
}

#[cfg(test)]
mod tests;
