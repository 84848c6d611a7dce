//! Sessions by id: opening, expiry, burned ids, and the state journal that keeps them across a restart.

use super::*;

pub(super) struct Entry {
    pub(super) session: Session,
    pub(super) last: Instant,
    pub(super) pause: Option<PendingPause>,
}

pub(super) struct Sessions {
    pub(super) open: HashMap<String, Entry>,
    /// The latest burned ids, exactly (at most max(4 × max_sessions, 4096)), oldest first.
    pub(super) gone: HashSet<String>,
    pub(super) gone_order: VecDeque<String>,
    /// Every burned id, in a Bloom filter (no false negatives): what keeps an id refused once
    /// the exact list has rolled over.
    pub(super) burned: BurnedIds,
    /// (last use, id) in time order; an entry is stale when the session was used since.
    pub(super) order: VecDeque<(Instant, String)>,
    pub(super) next_pause: u64,
    pub(super) journal: Option<Journal>,
    /// Ids burned since the last commit.
    pub(super) unsaved_burns: Vec<String>,
    /// Sessions moved since the last commit.
    pub(super) dirty: Vec<String>,
    pub(super) pause_saved: u64,
}

pub(super) fn valid_id(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > defaults::MAX_ID_BYTES
        || id.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(ToolError::param(format!(
            "a session id is 1 to {} bytes without spaces or control characters",
            defaults::MAX_ID_BYTES
        )));
    }
    Ok(())
}

impl Server {
    /// Unix seconds of `t`.
    pub(super) fn unix_of(&self, t: Instant) -> u64 {
        let (base, unix) = self.epoch;
        match t.checked_duration_since(base) {
            Some(d) => unix + d.as_secs(),
            None => unix.saturating_sub(base.duration_since(t).as_secs()),
        }
    }

    pub(super) fn restore(
        &self,
        path: &std::path::Path,
    ) -> augur_monitor::Result<journal::Restored> {
        let header = journal::Header::new("mcp", &self.cfg.monitor);
        let loaded = journal::load(path, &header)?;
        let mut report = loaded.report(path);
        let (base, unix) = self.epoch;
        let ttl = self.cfg.session_ttl;
        let asked = self.cfg.burned_bits;
        let mut open: HashMap<String, (u64, Entry)> = HashMap::new();
        let mut guard = self.lock();
        let s = &mut *guard;
        for (line, e) in loaded.entries {
            match e {
                journal::Entry::Session {
                    id,
                    t,
                    session,
                    pause,
                } => {
                    let restored = Session::restore(&self.cfg.monitor, &self.cfg.policy, &session)
                        .map_err(|err| {
                            Loaded::error_at(path, line, format!("session `{id}`: {err}"))
                        })?;
                    let pause = match pause {
                        None => None,
                        Some(v) => {
                            Some(serde_json::from_value::<PendingPause>(v).map_err(|err| {
                                Loaded::error_at(
                                    path,
                                    line,
                                    format!("session `{id}`: pause: {err}"),
                                )
                            })?)
                        }
                    };
                    open.insert(
                        id,
                        (
                            t,
                            Entry {
                                session: restored,
                                last: base,
                                pause,
                            },
                        ),
                    );
                }
                journal::Entry::Burn { id } => {
                    open.remove(&id);
                    remember_gone(s, &self.cfg, id, true);
                }
                journal::Entry::Gone { ids } => {
                    for id in ids {
                        open.remove(&id);
                        remember_gone(s, &self.cfg, id, false);
                    }
                }
                ref f @ journal::Entry::Filter { .. } => {
                    f.merge_filter(&mut s.burned, path, line)?
                }
                journal::Entry::NextPause { n } => s.next_pause = s.next_pause.max(n),
            }
        }
        if s.burned.bits() != BurnedIds::new(asked).bits() {
            report.kept_bits = Some((asked, s.burned.bits()));
        }
        let mut open: Vec<(String, (u64, Entry))> = open.into_iter().collect();
        open.sort_by(|a, b| (a.1 .0, &a.0).cmp(&(b.1 .0, &b.0)));
        for (id, (t, mut e)) in open {
            let age = Duration::from_secs(unix.saturating_sub(t));
            if age > ttl {
                report.expired += 1;
                remember_gone(s, &self.cfg, id, true);
                continue;
            }
            e.last = base.checked_sub(age).unwrap_or(base);
            s.order.push_back((e.last, id.clone()));
            s.open.insert(id, e);
        }
        report.open = s.open.len();
        report.burned = s.burned.count();
        s.unsaved_burns.clear();
        s.dirty.clear();
        s.pause_saved = s.next_pause;
        let entries = self.snapshot_entries(s);
        s.journal = Some(Journal::create(path, header, &entries)?);
        Ok(report)
    }

    /// The journal entries of the sessions now (compaction).
    pub(super) fn snapshot_entries(&self, s: &Sessions) -> Vec<journal::Entry> {
        let mut v = vec![
            journal::Entry::filter(&s.burned),
            journal::Entry::Gone {
                ids: s.gone_order.iter().cloned().collect(),
            },
            journal::Entry::NextPause { n: s.next_pause },
        ];
        let mut open: Vec<(&String, &Entry)> = s.open.iter().collect();
        open.sort_by(|a, b| (a.1.last, a.0).cmp(&(b.1.last, b.0)));
        for (id, e) in open {
            v.push(self.session_entry(id, e));
        }
        v
    }

    pub(super) fn session_entry(&self, id: &str, e: &Entry) -> journal::Entry {
        journal::Entry::Session {
            id: id.to_string(),
            t: self.unix_of(e.last),
            session: Box::new(e.session.snapshot()),
            pause: e.pause.as_ref().and_then(|p| serde_json::to_value(p).ok()),
        }
    }

    /// Write what changed to the journal (burned ids, moved sessions, the pause counter),
    /// compacting it when it has grown too large.
    pub(super) fn commit(&self) -> augur_monitor::Result<()> {
        let mut guard = self.lock();
        let s = &mut *guard;
        if s.journal.is_none() {
            s.unsaved_burns.clear();
            s.dirty.clear();
            return Ok(());
        }
        let mut entries: Vec<journal::Entry> = s
            .unsaved_burns
            .drain(..)
            .map(|id| journal::Entry::Burn { id })
            .collect();
        let dirty = std::mem::take(&mut s.dirty);
        for id in dirty {
            if let Some(e) = s.open.get(&id) {
                entries.push(self.session_entry(&id, e));
            }
        }
        if s.next_pause != s.pause_saved {
            entries.push(journal::Entry::NextPause { n: s.next_pause });
            s.pause_saved = s.next_pause;
        }
        if let Some(j) = s.journal.as_mut() {
            j.append(&entries)?;
        }
        if s.journal.as_ref().is_some_and(Journal::wants_compaction) {
            let snap = self.snapshot_entries(s);
            if let Some(j) = s.journal.as_mut() {
                j.compact(&snap)?;
            }
        }
        Ok(())
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        // A panic while holding the lock cannot leave the map inconsistent in a way that
        // matters more than refusing service; recover the guard.
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn open_tool(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let a: super::args::OpenArgs = super::args::parse(args)?;
        let id = self.open(a.session.as_deref(), a.category.as_deref(), now)?;
        Ok(json!({"session": id}))
    }

    /// Expire the sessions idle for longer than the time to live: O(1) amortised per call
    /// (the queue's front is the least recently used session once its stale entries, of
    /// sessions used again since, are dropped).
    pub(super) fn sweep(&self, s: &mut Sessions, now: Instant) {
        let ttl = self.cfg.session_ttl;
        while let Some((t, id)) = s.order.front() {
            let live = s.open.get(id).is_some_and(|e| e.last == *t);
            if !live {
                s.order.pop_front();
                continue;
            }
            if now.saturating_duration_since(*t) <= ttl {
                return;
            }
            if let Some((_, id)) = s.order.pop_front() {
                s.open.remove(&id);
                self.bury(s, id);
            }
        }
    }

    /// Mark `id` used at `now` (the expiry queue gets an entry; stale ones are dropped in
    /// bulk when they outnumber the open sessions, amortised O(1)).
    pub(super) fn touch(s: &mut Sessions, id: &str, now: Instant) {
        if let Some(e) = s.open.get_mut(id) {
            if e.last != now {
                e.last = now;
                s.order.push_back((now, id.to_string()));
            }
        }
        if s.order.len() > 2 * s.open.len() + 64 {
            let open = &s.open;
            s.order
                .retain(|(t, k)| open.get(k).is_some_and(|e| e.last == *t));
        }
        if s.journal.is_some() && !s.dirty.iter().any(|d| d == id) {
            s.dirty.push(id.to_string());
        }
    }

    pub(super) fn bury(&self, s: &mut Sessions, id: String) {
        remember_gone(s, &self.cfg, id, true);
    }

    /// Whether `id` was ever used (open, or burned: exactly among the latest, or in the
    /// filter).
    pub(super) fn used(s: &Sessions, id: &str) -> bool {
        s.open.contains_key(id) || s.gone.contains(id) || s.burned.contains(id)
    }

    pub(super) fn open(
        &self,
        id: Option<&str>,
        category: Option<&str>,
        now: Instant,
    ) -> Result<String> {
        let mut s = self.lock();
        self.sweep(&mut s, now);
        if s.open.len() >= self.cfg.max_sessions {
            return Err(ToolError::refused(format!(
                "the maximum of {} open sessions is reached; end a session first",
                self.cfg.max_sessions
            )));
        }
        let id = match id {
            Some(id) => {
                valid_id(id)?;
                if Self::used(&s, id) {
                    return Err(ToolError::refused(format!(
                        "session `{id}` exists or existed: ids are not reused"
                    )));
                }
                id.to_string()
            }
            None => loop {
                let id = format!("s-{:032x}", rand::random::<u128>());
                if !Self::used(&s, &id) {
                    break id;
                }
            },
        };
        let session = Session::new(&self.cfg.monitor, &self.cfg.policy, category)
            .map_err(|e| ToolError::gate(&e))?;
        s.open.insert(
            id.clone(),
            Entry {
                session,
                last: now,
                pause: None,
            },
        );
        s.order.push_back((now, id.clone()));
        Self::touch(&mut s, &id, now);
        Ok(id)
    }

    pub(super) fn refusal(&self, s: &Sessions, id: &str) -> (&'static str, String) {
        if s.gone.contains(id) || s.burned.contains(id) {
            (
                "expired",
                format!("session `{id}` has expired or was ended; it is never restarted: ask the harness for a new session"),
            )
        } else {
            (
                "unknown",
                format!("session `{id}` is unknown: use the session id the harness gave you"),
            )
        }
    }

    /// Runs `f` on an open session; an unknown or expired id is a refused tool error.
    pub(super) fn with_session(
        &self,
        id: &str,
        now: Instant,
        f: impl FnOnce(&str, &mut Entry) -> Result<Value>,
    ) -> Result<Value> {
        let mut s = self.lock();
        self.sweep(&mut s, now);
        if !s.open.contains_key(id) {
            let (_, why) = self.refusal(&s, id);
            return Err(ToolError::refused(why));
        }
        Self::touch(&mut s, id, now);
        let e = s
            .open
            .get_mut(id)
            .ok_or_else(|| ToolError::refused("the session is gone"))?;
        f(id, e)
    }
}

/// Burn `id`: into the exact list of the latest (bounded: the oldest roll over) and, when
/// `filter`, into the Bloom filter that keeps it refused forever; journaled at the next commit.
pub(super) fn remember_gone(s: &mut Sessions, cfg: &Config, id: String, filter: bool) {
    if filter {
        s.burned.insert(&id);
        if s.journal.is_some() {
            s.unsaved_burns.push(id.clone());
        }
    }
    if s.gone.insert(id.clone()) {
        s.gone_order.push_back(id);
        let cap = (4 * cfg.max_sessions).max(4096);
        while s.gone_order.len() > cap {
            if let Some(old) = s.gone_order.pop_front() {
                s.gone.remove(&old);
            }
        }
    }
}
