//! Many sessions by id: expiry, eviction, burned ids and the state journal.

use crate::burned::BurnedIds;
use crate::error::Result;
use crate::monitor::Monitor;
use crate::policy::{Mode, Policy, Rules, Verdict};
use crate::session::{Action, Decision, FailReason, Fired, Session, ToolCall};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Why a session could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionRefused {
    /// The id belonged to a session that expired or was evicted: it is never restarted.
    Expired,
    /// The session could not be opened (unknown category without fallback, bad horizon).
    Open(String),
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
        let mut report = loaded.report(path);
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
                ref f @ Entry::Filter { .. } => f.merge_filter(&mut self.burned, path, line)?,
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

    /// Whether a session with this id is open.
    pub fn contains(&self, id: &str) -> bool {
        self.sessions.contains_key(id)
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
