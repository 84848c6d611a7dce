//! A decision as plain data (no allocation): the verdict, the values it came from, what fired.

use crate::classifier::{ArgHit, Classification};
use crate::dtr::{Prov, RiskLevel, SafetyState};
use crate::policy::{Mode, Verdict};
use crate::provenance::ArgProvenance;
use serde::{Deserialize, Serialize};

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
    pub(crate) fn text(self) -> &'static str {
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
/// [`Session::provenance_reason`](super::Session::provenance_reason)).
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
    /// Paused: a destination or payload value was never seen in trusted text, and the
    /// session was shown content it could not read (an image, a blob) that may have
    /// supplied it.
    ContentUnread,
    /// Paused (issue 40, the named fallback): a network or irreversible call's destination
    /// holds a value no text held (neither the user, nor a tool result, nor the agent's own
    /// earlier arguments), in a session that has read untrusted text: a rewrite or split of
    /// a value of that text that the store cannot recognise looks like this.
    NoProvenance,
    /// Paused (issue 41): a destination or payload value came from a result the user's
    /// request delegated ([`crate::intent`]), which either carried an instruction to the
    /// assistant elsewhere or was used for an action the request does not ask for.
    Delegated,
    /// Paused (issue 41): a call that writes or cannot be undone, which the request does not
    /// ask for, after an instruction to the assistant was seen in an untrusted result.
    AfterInjection,
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
    /// session (see [`Session::reason`](super::Session::reason)), so that a decision copies no text.
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
