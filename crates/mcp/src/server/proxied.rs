//! The gateway's access to the sessions (crate-private: the gateway is the only caller).

use super::*;
use augur_gate::classifier::ToolProfile;

/// The monitor's decision on a call the gateway proxies.
#[cfg(feature = "stdio")]
#[derive(Clone, Debug)]
pub(crate) struct ProxiedDecision {
    pub verdict: Verdict,
    pub probability: f64,
    pub reason: String,
    /// The reason with every argument value masked (a prefix and a digest): what the audit
    /// log writes.
    pub audit_reason: String,
    /// `none`, `user` or `untrusted`: where the arguments' values were first seen.
    pub provenance: &'static str,
    pub pause_id: Option<String>,
}

impl Server {
    /// The connection's session: `id` when it is open, else a fresh one.
    pub(crate) fn connection_session(&self, id: Option<&str>) -> Result<String> {
        if let Some(id) = id {
            if self.lock().open.contains_key(id) {
                return Ok(id.to_string());
            }
            return Err(ToolError::refused(format!(
                "session `{id}` is not open (the journal holds it as ended or expired)"
            )));
        }
        let id = self.open(None, None, Instant::now())?;
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        Ok(id)
    }

    /// Gates a proxied call (the classifier sees the upstream's own tool name): the session
    /// moves on allow and warn; a pause becomes the session's pending pause. An unknown or
    /// expired session, or a journal that cannot be written, is a block.
    pub(crate) fn gate_proxied(
        &self,
        id: &str,
        tool: &str,
        args: &Value,
        profile: Option<&ToolProfile>,
    ) -> ProxiedDecision {
        let now = Instant::now();
        let block = |reason: String| ProxiedDecision {
            verdict: Verdict::Block,
            probability: 1.0,
            audit_reason: reason.clone(),
            reason,
            provenance: "none",
            pause_id: None,
        };
        let decision = {
            let mut guard = self.lock();
            let s = &mut *guard;
            self.sweep(s, now);
            let next_pause = s.next_pause;
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return block(format!("{tool}: {why} → block"));
            }
            Self::touch(s, id, now);
            let Some(e) = s.open.get_mut(id) else {
                return block(format!("{tool}: the session is gone → block"));
            };
            let provenance = e.session.provenance().provenance_of(args).as_str();
            let d = e.session.gate(&Action::Tool(
                ToolCall::new(tool, args).with_profile(profile),
            ));
            let reason = e.session.reason(&d);
            let audit_reason = e.session.reason_masked(&d);
            let pause_id = PendingPause::after_gate(
                &mut e.pause,
                d.verdict,
                || format!("pause-{next_pause}"),
                Some(tool),
                args,
                None,
            );
            if pause_id.is_some() {
                s.next_pause += 1;
            }
            ProxiedDecision {
                verdict: d.verdict,
                probability: d.probability,
                reason,
                audit_reason,
                provenance,
                pause_id,
            }
        };
        match self.commit() {
            Ok(()) => decision,
            Err(e) => block(format!(
                "{tool}: the state journal cannot be written ({}) → block",
                e.render().trim_start_matches("error: ").trim_end()
            )),
        }
    }

    /// Runs `f` on open session `id` (swept, touched), then writes the journal: a session
    /// that is not open is refused.
    fn on_session<T>(&self, id: &str, f: impl FnOnce(&mut Session) -> T) -> Result<T> {
        let now = Instant::now();
        let out = {
            let mut guard = self.lock();
            let s = &mut *guard;
            self.sweep(s, now);
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return Err(ToolError::refused(why));
            }
            Self::touch(s, id, now);
            let e = s
                .open
                .get_mut(id)
                .ok_or_else(|| ToolError::refused("the session is gone"))?;
            f(&mut e.session)
        };
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        Ok(out)
    }

    /// Observes `text` in session `id`: the user's request (`tool` `None`, trusted) or the
    /// result of `tool` (untrusted unless the policy trusts the tool). Returns the number of
    /// values found.
    pub(crate) fn observe(&self, id: &str, tool: Option<&str>, text: &str) -> Result<usize> {
        use augur_gate::provenance::ObservationSource;
        let source = match tool {
            None => ObservationSource::User,
            Some(_) => ObservationSource::Tool,
        };
        self.on_session(id, |s| s.observe(source, tool, text).found)
    }

    /// Observes the result of the call `tool(args)` in session `id` (untrusted unless the
    /// policy trusts the tool, and then vouching for none of `args`' own values), and
    /// `unread`, the first part of it the gateway could not read (an image, a binary blob),
    /// which marks the session ([`augur_gate::Session::mark_unread`]); so does a result longer
    /// than the provenance store reads. Returns the number of values found.
    pub(crate) fn observe_result(
        &self,
        id: &str,
        tool: &str,
        args: &Value,
        text: &str,
        unread: Option<&str>,
    ) -> Result<usize> {
        self.on_session(id, |s| {
            let stats = s.observe_result(tool, None, args, text.as_bytes());
            let source = format!("the result of `{tool}`");
            if let Some(what) = unread {
                s.mark_unread(what, &source);
            }
            if stats.skipped > 0 {
                s.mark_unread(
                    &format!("the last {} bytes of a long result", stats.skipped),
                    &source,
                );
            }
            stats.found
        })
    }

    /// Marks session `id` as having been shown content the gateway could not read (`what`,
    /// in `source`): see [`augur_gate::Session::mark_unread`].
    pub(crate) fn mark_unread(&self, id: &str, what: &str, source: &str) -> Result<()> {
        self.on_session(id, |s| s.mark_unread(what, source))
    }

    /// Marks session `id`'s provenance store as lost (something it should have observed was
    /// not, e.g. a hook input that could not be read): from now on a value not seen in the
    /// user's words since counts as untrusted, as in a session restored without its store.
    pub(crate) fn lose_provenance(&self, id: &str) -> Result<()> {
        {
            let mut guard = self.lock();
            let s = &mut *guard;
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return Err(ToolError::refused(why));
            }
            let e = s
                .open
                .get_mut(id)
                .ok_or_else(|| ToolError::refused("the session is gone"))?;
            let mut snap = e.session.full_snapshot();
            snap.session.provenance_lost = true;
            e.session = Session::restore_full(&self.cfg.monitor, &self.cfg.policy, &snap)
                .map_err(|err| ToolError::new(ErrorKind::Internal, err.render()))?;
        }
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))
    }

    /// Records that the proxied call `tool(args)` was executed (its outcome may be unknown).
    pub(crate) fn record_proxied(
        &self,
        id: &str,
        tool: &str,
        args: &Value,
        profile: Option<&ToolProfile>,
    ) -> Result<()> {
        let now = Instant::now();
        {
            let mut guard = self.lock();
            let s = &mut *guard;
            if !s.open.contains_key(id) {
                let (_, why) = self.refusal(s, id);
                return Err(ToolError::refused(why));
            }
            Self::touch(s, id, now);
            if let Some(e) = s.open.get_mut(id) {
                e.session.record(
                    &Action::Tool(ToolCall::new(tool, args).with_profile(profile)),
                    true,
                );
            }
        }
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))
    }

    /// The session's pending pause, when it is `pause_id`: (tool, args).
    /// Answers session `id`'s pending pause `pause_id` for the gateway (a person answered it
    /// through MCP elicitation, or the harness's `approve` was checked by the gateway), then
    /// writes the journal. Refused as `approve`/`deny` are (another id, a gone session).
    pub(crate) fn answer_proxied_pause(
        &self,
        id: &str,
        pause_id: &str,
        approve: bool,
    ) -> Result<Value> {
        let mut args = Map::new();
        args.insert("session".into(), json!(id));
        args.insert("pause_id".into(), json!(pause_id));
        let answered = self.answer_pause(&args, Instant::now(), approve);
        self.commit()
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.render()))?;
        answered
    }

    pub(crate) fn pending_pause(&self, id: &str, pause_id: &str) -> Option<(String, Value)> {
        let s = self.lock();
        let p = s.open.get(id)?.pause.as_ref()?;
        (p.id == pause_id).then(|| (p.tool.clone(), p.args.clone()))
    }

    /// Whether session `id` has observed anything (a restored one that had: its store is
    /// lost, and what it had seen is unknown).
    pub(crate) fn has_observed(&self, id: &str) -> bool {
        let s = self.lock();
        s.open.get(id).is_some_and(|e| {
            let snap = e.session.snapshot();
            snap.observations > 0 || e.session.provenance_lost()
        })
    }
}
