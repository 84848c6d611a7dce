//! A session as plain data: what a state journal or a hook's state file keeps.

use super::{Pending, Summary};
use crate::classifier::ArgHit;
use crate::dtr::SafetyState;
use crate::intent::{Intent, SignalSeen};
use crate::provenance::ProvenanceSnapshot;
use serde::{Deserialize, Serialize};

/// Everything a session holds besides the shared monitor and policy: what a state journal
/// ([`crate::journal`]) writes after every move and [`Session::restore`](super::Session::restore) reads back.
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
    /// The first content the session could not read (see
    /// [`Session::mark_unread`](super::Session::mark_unread)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<Unread>,
    /// The first instruction to the assistant seen in content the user did not write (issue
    /// 41): the one part of the session's intent a journal keeps, so that a restored session
    /// still pauses the state changes after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<SignalSeen>,
}

/// Content a session could not read (an image, audio, a binary blob, a result past the size
/// cap): what, where, and after which step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unread {
    /// What it was (`an image`, `a binary blob of type application/pdf`, ...).
    pub what: String,
    /// Where (`the result of `read_inbox``, `resource mail://inbox/latest`).
    pub source: String,
    /// The latest gated step when it was shown (`None`: before the first).
    pub step: Option<u32>,
}

/// A session with its provenance store, as plain data: what a process that keeps one session
/// between short runs (`augur hook claude-code --state FILE`) saves after each event and reads
/// back with [`Session::restore_full`](super::Session::restore_full). Unlike a [`SessionSnapshot`] alone, nothing observed
/// is lost: `session.provenance_lost` is true only when the session had lost its store
/// before (see [`Session::lose_provenance`](super::Session::lose_provenance)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FullSnapshot {
    /// The session's state.
    pub session: SessionSnapshot,
    /// Its provenance store.
    pub provenance: ProvenanceSnapshot,
    /// Its intent and the person's approvals (absent in files written before they were
    /// kept: the session then knows only `session.signal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentState>,
}

/// What a session knows of the user's intent, as plain data (part of a [`FullSnapshot`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentState {
    /// The request, the delegated results, the signals seen.
    pub intent: Intent,
    /// Keys of the delegated values a person approved, by tool (not asked again). Keys are
    /// the standard library's `DefaultHasher` of (tool, value): a binary built with another
    /// Rust release may key them differently, and then asks again.
    #[serde(default)]
    pub approved: Vec<u64>,
    /// The key of the delegated value of the paused call awaiting its record.
    #[serde(default)]
    pub pending_approval: Option<u64>,
}
