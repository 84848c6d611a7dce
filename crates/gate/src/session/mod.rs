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
//! ([`Monitor::tracks_provenance`]: the 180-state `(d, t, r, p)` monitors and the 960-state chains) every gated call
//! gets its p ([`crate::classifier::Classifier::call_provenance`]) and the decision's reason
//! says which argument, which value and where it was first seen. Memory: one store per
//! session, at most [`ProvenanceLimits::max_values`](crate::provenance::ProvenanceLimits)
//! values (default 16,384, about 2.6 MB at ~160 bytes each) plus at most 1024 tool names of
//! ≤ 64 bytes; a [`SessionStore`](crate::store::SessionStore) of capacity `n` holds at most `n` stores (with the default
//! limits, `n × 2.7 MB` at worst). At a limit the store fails closed (unknown values count as
//! untrusted). A restored session (journal) has lost its store: every value not seen in
//! trusted text since counts as untrusted.
//!
//! **Unread content** (issue 39): what the session is told it could not read
//! ([`Session::mark_unread`]: an image, audio, a binary blob, a result past the size cap)
//! may carry any value. From then on a call that writes or cannot be undone, one of whose
//! destination or payload values was never seen in trusted text, is paused at least
//! ([`Fired::ContentUnread`]).
//!
//! Fail closed: a closed (expired, evicted) session, an action the classifier cannot map, a
//! concrete state the abstraction cannot map, or an action of the wrong kind for the monitor
//! gets `block` with the reason, never `allow`.

mod action;
mod decision;
mod reasons;
mod report;
mod snapshot;
mod why;

pub use action::{Action, InlineName, ToolCall};
pub use decision::{Decision, FailReason, Fired, Pending, ProvenanceHit, Summary};
pub use reasons::{continuation, describe_step, dtr_action, render_reason, Names};
pub use report::{report, AuditRecord, ContinuationReport, DecisionReport};
pub use snapshot::{FullSnapshot, IntentState, SessionSnapshot, Unread};

use crate::classifier::{ArgHit, CallProvenance, Classification, Matched};
use crate::dtr::{Predicates, Prov, Reversibility, RiskLevel, SafetyState, ToolEscalation};
use crate::error::{GateError, Result};
use crate::intent::{Intent, Tier, TierHit};
use crate::monitor::{Mapping, Monitor, PacStatus, Table};
use crate::policy::{Policy, Rules, Verdict};
use crate::provenance::{
    ArgProvenance, Evidence, ObservationSource, ObserveStats, Origin, Provenance,
};
use augur_abstraction::VarKind;
use augur_expr::Value as EValue;
use serde_json::{Map, Value};
use std::sync::Arc;

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
    /// Content the session could not read (see [`Session::mark_unread`]).
    unread: Option<Unread>,
    /// The argument, its text and the value's evidence that made the latest decision pause
    /// for unread content.
    unread_hit: Option<(InlineName, InlineName, Evidence)>,
    /// The destination argument and its text that made the latest decision pause for having
    /// no provenance ([`Fired::NoProvenance`]).
    untraced_hit: Option<(InlineName, InlineName)>,
    /// What the user's request named and delegated, and the injection signals seen
    /// ([`crate::intent`]).
    intent: Intent,
    /// The argument, its text and the tier of the latest decision's untrusted value (issue
    /// 41), when it has one.
    tier_hit: Option<(InlineName, InlineName, TierHit)>,
    /// The latest decision is a call the request does not ask for, after an injection
    /// signal.
    after_signal: bool,
    /// The argument, and its text, of the latest decision that occurs inside an instruction
    /// to the assistant ([`Intent::argument_in_an_instruction`]).
    injected_arg: Option<(InlineName, InlineName)>,
    /// Delegated values the person approved (issue 41: the same value to the same tool is not
    /// asked twice in a session): keys of (tool, value), at most [`APPROVALS_MAX`]; not
    /// journaled (a restored session asks again).
    approved: Vec<u64>,
    /// The latest decision's delegated value was approved before.
    approved_hit: bool,
    /// The key of the latest decision's delegated value, not yet approved.
    delegated_key: Option<u64>,
    /// The key a `record(executed = true)` of the pending paused call approves.
    pending_approval: Option<u64>,
}

/// Approvals kept per session (see [`Session::record`]); past it the person is asked again.
pub const APPROVALS_MAX: usize = 256;

/// The key of a delegated value sent by a tool (no allocation).
fn approval_key(tool: &str, value: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tool.hash(&mut h);
    value.hash(&mut h);
    h.finish()
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
            GateError::Mismatch(format!(
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
                Some(at) => GateError::located(at.clone(), message),
                None => GateError::Mismatch(message),
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
            unread: None,
            unread_hit: None,
            untraced_hit: None,
            intent: Intent::new(),
            tier_hit: None,
            after_signal: false,
            injected_arg: None,
            approved: Vec::new(),
            approved_hit: false,
            delegated_key: None,
            pending_approval: None,
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
        self.unread = None;
        self.unread_hit = None;
        self.untraced_hit = None;
        self.intent.clear();
        self.tier_hit = None;
        self.after_signal = false;
        self.injected_arg = None;
        self.approved.clear();
        self.approved_hit = false;
        self.delegated_key = None;
        self.pending_approval = None;
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
            ObservationSource::User => {
                self.intent.observe_request(&String::from_utf8_lossy(text));
                Origin::User
            }
            ObservationSource::System => Origin::System,
            ObservationSource::Tool if self.rules().trusts(name) => {
                Origin::TrustedTool { tool: name, step }
            }
            ObservationSource::Tool => {
                // A result without its call's arguments: delegated by the tool's name alone.
                self.intent.observe_result(
                    step,
                    name,
                    &Value::Null,
                    &String::from_utf8_lossy(text),
                    &self.prov,
                );
                Origin::Tool { tool: name, step }
            }
        };
        self.prov.observe_bytes(origin, text)
    }

    /// Observe the result of a call to `tool` whose arguments were `args` (the step of the
    /// call: `None`, the latest gated call's). Like [`Session::observe_at`] with
    /// [`ObservationSource::Tool`], except that a trusted tool's result vouches for none of
    /// the values `args` carried (no laundering, [`crate::provenance`]).
    pub fn observe_result(
        &mut self,
        tool: &str,
        step: Option<u32>,
        args: &Value,
        text: &[u8],
    ) -> ObserveStats {
        if self.closed {
            return ObserveStats::default();
        }
        self.observations = self.observations.saturating_add(1);
        let step = step.or(self.step.checked_sub(1)).unwrap_or(0);
        let origin = if self.rules().trusts(tool) {
            Origin::TrustedTool { tool, step }
        } else {
            self.intent.observe_result(
                step,
                tool,
                args,
                &String::from_utf8_lossy(text),
                &self.prov,
            );
            Origin::Tool { tool, step }
        };
        self.prov.observe_result(origin, text, args)
    }

    /// Record that the agent was shown content the session could not read (`what`: an
    /// image, audio, a binary blob, a result past the size cap; `source`: where, e.g. "the
    /// result of `read_inbox`"): a value in it can never be traced. From then on a write,
    /// network or irreversible call whose destination or payload holds a value not seen in
    /// trusted text is paused at least ([`Fired::ContentUnread`]), never allowed; a value
    /// seen in untrusted text is still UNTRUSTED (blocked). The first such content is kept
    /// for the reasons.
    pub fn mark_unread(&mut self, what: &str, source: &str) {
        if self.closed || self.unread.is_some() {
            return;
        }
        self.unread = Some(Unread {
            what: what.to_string(),
            source: source.to_string(),
            step: self.step.checked_sub(1),
        });
    }

    /// The first content the session could not read, if any ([`Session::mark_unread`]).
    pub fn unread(&self) -> Option<&Unread> {
        self.unread.as_ref()
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
            unread: self.unread.clone(),
            signal: self.intent.first_signal().cloned(),
        }
    }

    /// The session and its provenance store as plain data (see [`FullSnapshot`]).
    pub fn full_snapshot(&self) -> FullSnapshot {
        let mut session = self.snapshot();
        session.provenance_lost = self.prov_lost;
        FullSnapshot {
            session,
            provenance: self.prov.snapshot(),
            intent: Some(IntentState {
                intent: self.intent.clone(),
                approved: self.approved.clone(),
                pending_approval: self.pending_approval,
            }),
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
            .map_err(|e| GateError::Mismatch(format!("provenance: {e}")))?;
        s.prov_lost = snap.session.provenance_lost;
        // A file written before the intent was kept has none: the session knows only the
        // signal its session part holds, as a journal's does (failing closed).
        if let Some(i) = &snap.intent {
            i.intent.check_limits().map_err(GateError::Mismatch)?;
            if i.approved.len() > APPROVALS_MAX {
                return Err(GateError::Mismatch(format!(
                    "the intent holds {} approvals, over the limit of {APPROVALS_MAX}",
                    i.approved.len()
                )));
            }
            s.intent = i.intent.clone();
            s.approved = i.approved.clone();
            s.pending_approval = i.pending_approval;
        }
        Ok(s)
    }

    /// Mark the provenance store as lost (something the session should have observed was
    /// not: a tool result that could not be read): from then on it fails closed, as a
    /// restored session does — a value not seen in trusted text since counts as untrusted.
    pub fn lose_provenance(&mut self) {
        self.prov_lost = true;
    }

    /// A session in the state `snap` holds (an open session: a closed one is not journaled).
    /// Its provenance store is lost when it had observed anything, and of its intent it keeps
    /// only the first instruction to the assistant seen (`snap.signal`): both fail closed.
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
                return Err(GateError::Mismatch(format!(
                    "state {d} has a provenance but the monitor does not track provenance"
                )));
            }
        }
        let n = s.tab().state_names.len();
        let classifier = monitor.mapping != Mapping::Abstraction;
        let check = |what: &str, dtr: SafetyState, state: u32| -> Result<()> {
            if state as usize >= n {
                return Err(GateError::Mismatch(format!(
                    "{what}: model state {state} is out of range (the table has {n} states)"
                )));
            }
            if classifier && s.state_of(dtr) != state {
                return Err(GateError::Mismatch(format!(
                    "{what}: model state {state} is not the state of {dtr} ({})",
                    s.state_of(dtr)
                )));
            }
            if !classifier && dtr != SafetyState::START {
                return Err(GateError::Mismatch(format!(
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
                return Err(GateError::Mismatch(format!(
                    "pending.slot {} is not 0 or 1",
                    p.slot
                )));
            }
        }
        if let Some((slot, _, _)) = snap.previous {
            if slot > 1 {
                return Err(GateError::Mismatch(format!(
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
        s.unread = snap.unread.clone();
        // Nor its intent but its first signal: knowing no request, it pauses every state change
        // after it (a restart never allows what the session before it would have paused).
        if let Some(sig) = &snap.signal {
            s.intent = Intent::with_signal(sig.clone());
        }
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
                    let Some(c) = cl.classify_declared(call.name, call.args, store, call.profile)
                    else {
                        return self.fail(tool, FailReason::Unmapped);
                    };
                    let mut cp = if tracks {
                        Some(cl.call_provenance(&c, call.args, &self.prov, self.prov_lost))
                    } else {
                        None
                    };
                    // Issue 41's tiers: an untrusted value from content the user delegated.
                    self.tier_hit = None;
                    self.after_signal = false;
                    if let Some(cp) = cp.as_mut() {
                        let imp = c.implication;
                        let changes = imp.t >= ToolEscalation::FileWrite
                            || imp.r == Reversibility::Irreversible;
                        // A destination the request names, too plain to be tracked (`Apple`):
                        // the user's.
                        if changes && cp.p == Prov::None {
                            if let Some(name) =
                                self.intent.request_names_destinations(cl, &c, call.args)
                            {
                                cp.p = Prov::User;
                                cp.arg = Some(name);
                            }
                        }
                        if cp.p == Prov::Untrusted && !self.prov_lost {
                            self.tier_hit = self.call_tier(cl, &c, call.args);
                            if let Some((_, _, h)) = &self.tier_hit {
                                if h.tier <= Tier::Delegated {
                                    // The user's by delegation: decided as a USER value (a
                                    // delegated one also pauses, below).
                                    cp.p = Prov::User;
                                }
                            }
                        }
                        // Any argument inside an instruction to the assistant: the call is the
                        // injection's (the file id it asked to delete).
                        self.injected_arg = None;
                        if changes && cp.p != Prov::Untrusted {
                            if let Some((name, v, _)) = self.intent.argument_in_an_instruction(
                                call.args,
                                &self.prov,
                                !Intent::name_says_action(call.name),
                            ) {
                                self.injected_arg = Some((InlineName::new(name), shown_text(v)));
                                cp.p = Prov::Untrusted;
                                cp.arg = Some(name);
                            }
                        }
                        // A state change, not a read over the network (a fetch changes
                        // nothing).
                        let fetch = crate::intent::is_fetch(&c);
                        // A delegated value the person approved for this tool before: not
                        // asked again.
                        self.approved_hit = false;
                        self.delegated_key = None;
                        if let Some((_, shown, h)) = &self.tier_hit {
                            if h.tier == Tier::Delegated {
                                let k = approval_key(call.name, shown.as_str());
                                if self.approved.contains(&k) {
                                    self.approved_hit = true;
                                } else {
                                    self.delegated_key = Some(k);
                                }
                            }
                        }
                        // A tool whose name does not say what it does (`Bash` running `curl`)
                        // is asked for when the user's own words gave its destination (no
                        // tier: not delegated); a named action is judged by its name alone.
                        let to_the_users = cp.p == Prov::User
                            && !Intent::name_says_action(call.name)
                            && self.tier_hit.is_none()
                            && cp.arg.is_some_and(|a| {
                                crate::classifier::name_has_word(a, cl.destination_words(&c))
                            });
                        self.after_signal = changes
                            && !fetch
                            && cp.p != Prov::Untrusted
                            && !to_the_users
                            && self.intent.after_signal(call.name).is_some();
                    }
                    // Content the session could not read: a destination or payload value not
                    // seen in trusted text may have come from it (pause at least).
                    let unseen = match (&cp, &self.unread) {
                        (Some(cp), Some(_)) if cp.p != Prov::Untrusted => {
                            cl.unseen_value(&c, call.args, &self.prov)
                        }
                        _ => None,
                    };
                    // The named fallback: a destination no text held, after untrusted text.
                    // A payment or a send is then decided by that provenance, not by its verb
                    // (issue 41): it pauses, decided as the user's value once the person
                    // approves (as a delegated value), instead of the exfiltration rules'
                    // block. So does a destination too plain to be tracked (`unknown`, a
                    // placeholder): nothing says whose it is.
                    let by_verb = crate::intent::violated_by_verb(self.dtr, c.implication);
                    let untraced = match &cp {
                        Some(cp) if cp.p == Prov::None && self.prov.seen_untrusted() => {
                            cl.untraced_destination(&c, call.args, &self.prov, by_verb)
                        }
                        _ => None,
                    };
                    if let (Some(cp), Some((arg, _)), true) = (cp.as_mut(), untraced, by_verb) {
                        cp.p = Prov::User;
                        cp.arg = Some(arg);
                    }
                    self.untraced_hit =
                        untraced.map(|(arg, v)| (InlineName::new(arg), shown_text(v)));
                    self.unread_hit = unseen.map(|(arg, v, e)| {
                        // The argument's text for the reason (this path pauses: it may
                        // allocate).
                        (InlineName::new(arg), shown_text(v), e)
                    });
                    (c, cp)
                };
                return self.gate_with(call.name, c, cp);
            }
        };
        self.decide(tool, dtr_after, state_after, classification, hit, None)
    }

    /// The tier of a call's most severe untrusted destination or payload value, with its
    /// argument's name and text (see [`crate::intent`]).
    fn call_tier(
        &self,
        cl: &crate::classifier::Classifier,
        c: &Classification,
        args: &Value,
    ) -> Option<(InlineName, InlineName, TierHit)> {
        let (name, v, h) = self.intent.call_tier(cl, c, args, &self.prov)?;
        Some((InlineName::new(name), shown_text(v), h))
    }

    /// The session's intent: what the request named and delegated ([`crate::intent`]).
    pub fn intent(&self) -> &Intent {
        &self.intent
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
        if provenance.is_none() {
            self.unread_hit = None;
            self.tier_hit = None;
            self.after_signal = false;
            self.injected_arg = None;
            self.approved_hit = false;
            self.delegated_key = None;
        }
        // The learned chain's predicates (issue 41), for a monitor whose tables have them.
        let x = if self.monitor.chain_predicates() {
            let delegated = p == Prov::User
                && self
                    .tier_hit
                    .as_ref()
                    .is_some_and(|(_, _, h)| matches!(h.tier, Tier::Requested | Tier::Delegated));
            let mut x = self.intent.predicates(tool, &c, delegated);
            // `i` is never unset: a restored session (its intent not journaled) keeps the
            // signal its state had.
            x.signal |= self.dtr.x.signal;
            x
        } else {
            Predicates::default()
        };
        let next = absorbing(self.dtr, self.dtr.update_p(c.implication, p).with_x(x));
        let state_after = self.state_of(next);
        self.decide(Some(tool), next, state_after, Some(c), hit, provenance)
    }

    /// The model state of a safety state (classifier monitors).
    fn state_of(&self, s: SafetyState) -> u32 {
        let idx = match self.monitor.mapping {
            Mapping::Dtr if self.monitor.chain_predicates() => s.chain_index(),
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
        // Unread content (an image, a blob) may have supplied a value the store cannot
        // trace: such a value is paused at least, whatever the chain says.
        // So is a destination no text held, after untrusted text (the fallback of issue 40).
        // So is a value from delegated content (issue 41), and an unrequested change after an
        // instruction to the assistant was seen.
        if provenance.is_some()
            && verdict < Verdict::Pause
            && !matches!(fired, Fired::AlwaysBlock(_))
        {
            let delegated = !self.approved_hit
                && self
                    .tier_hit
                    .as_ref()
                    .is_some_and(|(_, _, h)| h.tier == Tier::Delegated);
            let why = if self.unread_hit.is_some() {
                Some(Fired::ContentUnread)
            } else if self.untraced_hit.is_some() {
                Some(Fired::NoProvenance)
            } else if delegated {
                Some(Fired::Delegated)
            } else if self.after_signal {
                Some(Fired::AfterInjection)
            } else {
                None
            };
            if let Some(why) = why {
                // The pause tier's two rules are asked from the policy's `ask_at` on (the
                // chain decides how worried to be); below it, warned. The fail-closed
                // fallbacks (content unread, no provenance) always pause.
                let asked = !matches!(why, Fired::Delegated | Fired::AfterInjection)
                    || rules.ask_at.is_none_or(|a| decided >= a);
                verdict = if asked {
                    Verdict::Pause
                } else {
                    verdict.max(Verdict::Warn)
                };
                fired = why;
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
        self.pending_approval = if fired == Fired::Delegated {
            self.delegated_key
        } else {
            None
        };
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
                        // A paused delegated value the person approved: not asked again for
                        // this tool in this session (the value stays untrusted elsewhere).
                        if let Some(k) = self.pending_approval.take() {
                            if self.approved.len() < APPROVALS_MAX && !self.approved.contains(&k) {
                                self.approved.push(k);
                            }
                        }
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
}

/// An argument's text for a reason (allocates: used on paths that pause).
fn shown_text(v: &Value) -> InlineName {
    match v {
        Value::String(t) => InlineName::new(t),
        Value::Array(a) => a
            .iter()
            .find_map(Value::as_str)
            .map_or_else(|| InlineName::new(&v.to_string()), InlineName::new),
        v => InlineName::new(&v.to_string()),
    }
}

/// The next safety state of a session in `cur` (`next` is `cur.update(a)`): VIOLATED is
/// absorbing, so from a VIOLATED state the latest action's reversibility stays IRREVERSIBLE
/// (d and t only grow, so the state still matches rule 1, 2 or 13).
pub fn absorbing(cur: SafetyState, next: SafetyState) -> SafetyState {
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
        x: next.x,
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
