//! Pauses: asking the person (MCP elicitation, input_required) and approving or denying a paused call.

use super::*;

/// A paused call the gateway asked the user about in an `input_required` result.
pub(super) struct Ask {
    pid: String,
    p: Arc<Proxied>,
    at: Instant,
    /// The pause's `augur` object (verdict, reason, probability, provenance).
    augur: Value,
}

/// The key of the approval question in an `input_required` result's `inputRequests`.
pub const ASK_KEY: &str = "augur_approve";

/// The `elicitation/create` parameters of a paused call's question (`message`) with one
/// boolean, `approve`.
pub(super) fn approval_request(message: String) -> Result<ElicitRequestParams, String> {
    serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {"approve": {
                "type": "boolean",
                "title": "Run this call",
                "description": "true runs the call once; anything else denies it",
                "default": false,
            }},
            "required": ["approve"],
        },
    }))
    .map_err(|e| format!("the elicitation request could not be built ({e})"))
}

/// The user's answer: `Ok(())` only for `accept` with `approve: true`, else why not.
pub(super) fn approval(r: &ElicitResult) -> Result<(), String> {
    match r.action {
        ElicitationAction::Accept
            if r.content.as_ref().and_then(|c| c.get("approve")) == Some(&json!(true)) =>
        {
            Ok(())
        }
        ElicitationAction::Accept => Err("accepted without `approve: true`".into()),
        ElicitationAction::Decline => Err("declined".into()),
        ElicitationAction::Cancel => Err("cancelled".into()),
        _ => Err("an unknown answer".into()),
    }
}

impl Gateway {
    /// `approve` of paused call `pid` by the harness: `None` when it is not one of the
    /// gateway's pauses (the server answers it); otherwise the session must be the
    /// gateway's, then as [`Gateway::resume`].
    pub(super) async fn approve(
        &self,
        args: &Map<String, Value>,
        pid: &str,
        t0: Instant,
    ) -> Option<CallToolResult> {
        let inner = &self.inner;
        let (p, at) = inner
            .pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(pid)
            .map(|(p, at)| (Arc::clone(p), *at))?;
        let session = args.get("session").and_then(Value::as_str).unwrap_or("");
        if session != inner.session {
            return Some(text_error(
                format!(
                    "`{pid}` is a pause of session `{}`, not `{session}`",
                    inner.session
                ),
                json!({"error": "refused"}),
            ));
        }
        Some(self.resume(pid, p, at, t0).await)
    }

    /// A person approved paused call `pid`: within `--pause-timeout` the session records it
    /// as executed and the call runs (once); later, or when it is no longer the session's
    /// pending pause, it is denied and not run.
    pub(super) async fn resume(
        &self,
        pid: &str,
        p: Arc<Proxied>,
        at: Instant,
        t0: Instant,
    ) -> CallToolResult {
        let inner = &self.inner;
        let Some((_, call_args)) = inner.server.pending_pause(&inner.session, pid) else {
            inner
                .pauses
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(pid);
            return text_error(
                format!("`{pid}` is not the session's pending pause (a later action superseded it, or it was answered)"),
                json!({"error": "refused"}),
            );
        };
        inner
            .pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(pid);
        if at.elapsed() > inner.pause_timeout {
            let _ = inner
                .server
                .answer_proxied_pause(&inner.session, pid, false);
            return text_error(
                format!(
                    "`{pid}` waited longer than --pause-timeout ({} s): it is denied and was not executed",
                    inner.pause_timeout.as_secs()
                ),
                json!({"error": "refused"}),
            );
        }
        if let Err(e) = inner.server.answer_proxied_pause(&inner.session, pid, true) {
            return text_error(e.message, json!({"error": "refused"}));
        }
        let args = match call_args {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        self.proxied(p, args, t0, Some(pid)).await
    }

    /// Denies paused call `pid` (the user declined, cancelled or did not answer): the session
    /// stays where it was and the call is not run; the audit log gets a `denied` line.
    pub(super) fn deny(
        &self,
        pid: &str,
        p: &Proxied,
        why: &str,
        pause: &Value,
        t0: Instant,
    ) -> CallToolResult {
        let inner = &self.inner;
        inner
            .pauses
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(pid);
        let args = inner
            .server
            .pending_pause(&inner.session, pid)
            .map_or(Value::Null, |(_, a)| a);
        let _ = inner
            .server
            .answer_proxied_pause(&inner.session, pid, false);
        let reason = pause.get("reason").and_then(Value::as_str).unwrap_or("");
        let provenance = match pause.get("provenance").and_then(Value::as_str) {
            Some("user") => "user",
            Some("untrusted") => "untrusted",
            _ => "none",
        };
        let not_approved = format!("the user did not approve it ({why})");
        let line = AuditLine {
            probability: pause
                .get("probability")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            reason,
            provenance,
            outcome: "denied",
            error: Some(&not_approved),
            pause_id: Some(pid),
            upstream_us: None,
            gateway_us: t0.elapsed().as_micros() as u64,
            ..self.audit_line(p, &args, "pause")
        };
        if let Err(withheld) = self.audit(&line) {
            return withheld;
        }
        text_error(
            format!(
                "Augur paused this call to `{}` and asked the user, who did not approve it ({why}); it was NOT executed. Do not retry it: tell the user, or choose another way.",
                p.exposed
            ),
            json!({"verdict": "pause", "pause_id": pid, "approved": false, "why": why}),
        )
    }

    /// A paused call's answer from the user through MCP elicitation (`elicitation/create`,
    /// protocols up to 2025-11-25): `Ok(())` only for `accept` with `approve: true`; the
    /// reason otherwise (decline, cancel, no answer within `--pause-timeout`, an error).
    pub(super) async fn elicit(
        &self,
        peer: &Peer<RoleServer>,
        message: String,
    ) -> Result<(), String> {
        let params = approval_request(message)?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(self.inner.pause_timeout);
        options.max_total_timeout = Some(self.inner.pause_timeout);
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| format!("the elicitation request failed ({e})"))?;
        match handle.await_response().await {
            Ok(ClientResult::ElicitResult(r)) => approval(&r),
            Ok(_) => Err("an answer that is not an elicitation result".into()),
            Err(rmcp::ServiceError::Timeout { .. }) => Err(format!(
                "no answer within --pause-timeout ({} s)",
                self.inner.pause_timeout.as_secs()
            )),
            Err(e) => Err(format!("the elicitation failed ({e})")),
        }
    }

    /// Whether `peer` (the client) can be asked through `elicitation/create`: it declared
    /// form elicitation and the protocol allows server-to-client requests (before 2026-07-28).
    pub(super) fn can_elicit(peer: &Peer<RoleServer>) -> bool {
        peer.peer_info().is_some_and(|info| {
            info.protocol_version < ProtocolVersion::V_2026_07_28
                && info
                    .capabilities
                    .elicitation
                    .as_ref()
                    .is_some_and(|e| e.form.is_some() || e.url.is_none())
        })
    }

    /// Whether the client is asked through an `input_required` result (SEP-2322): the request
    /// is on protocol 2026-07-28 or later and its client declared form elicitation.
    pub(super) fn can_ask_modern(context: &RequestContext<RoleServer>) -> bool {
        context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
            && context
                .client_capabilities()
                .and_then(|c| c.elicitation)
                .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// A paused call put to the user in an `input_required` result: the approval question
    /// under [`ASK_KEY`], and a `requestState` the retry must echo (the pause id and 128
    /// random bits, kept here: nothing in it is trusted).
    pub(super) fn ask(
        &self,
        pid: String,
        p: Arc<Proxied>,
        message: String,
        augur: Value,
        t0: Instant,
    ) -> CallToolResponse {
        let params = match approval_request(message) {
            Ok(params) => params,
            Err(why) => return self.deny(&pid, &p, &why, &augur, t0).into(),
        };
        let state = format!("{pid}.{:032x}", rand::random::<u128>());
        let mut requests = InputRequests::new();
        requests.insert(
            ASK_KEY.to_string(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        );
        let mut asks = self.inner.asks.lock().unwrap_or_else(|e| e.into_inner());
        asks.clear();
        asks.insert(
            state.clone(),
            Ask {
                pid,
                p,
                at: Instant::now(),
                augur,
            },
        );
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }

    /// The retry of a call the gateway answered with `input_required`: `state` must be the
    /// `requestState` it issued (once), for the same tool and arguments, within
    /// `--pause-timeout`, with the user's answer under [`ASK_KEY`] accepting with `approve:
    /// true`; then the paused call runs (once). Anything else denies it and nothing runs.
    pub(super) async fn answered(
        &self,
        state: &str,
        name: &str,
        args: Option<&Map<String, Value>>,
        responses: Option<&InputResponses>,
        t0: Instant,
    ) -> CallToolResult {
        let ask = self
            .inner
            .asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(state);
        let Some(ask) = ask else {
            return text_error(
                format!("this call of `{name}` carries a requestState the gateway did not issue, or one already answered or superseded; it was NOT executed"),
                json!({"error": "refused"}),
            );
        };
        let paused_args = self
            .inner
            .server
            .pending_pause(&self.inner.session, &ask.pid)
            .map(|(_, a)| a);
        let given = Value::Object(args.cloned().unwrap_or_default());
        let why = if ask.p.exposed != name {
            Err(format!(
                "the answer came with a call of another tool (`{name}`)"
            ))
        } else if paused_args.as_ref().is_some_and(|a| *a != given) {
            Err("the answer came with other arguments than the paused call's".to_string())
        } else if ask.at.elapsed() > self.inner.pause_timeout {
            Err(format!(
                "no answer within --pause-timeout ({} s)",
                self.inner.pause_timeout.as_secs()
            ))
        } else {
            match responses.and_then(|r| r.get(ASK_KEY)) {
                None => Err(format!("no answer under `{ASK_KEY}`")),
                Some(v) => match serde_json::from_value::<ElicitResult>(v.clone()) {
                    Ok(r) => approval(&r),
                    Err(e) => Err(format!("an answer that is not an elicitation result ({e})")),
                },
            }
        };
        match why {
            Ok(()) => self.resume(&ask.pid, ask.p, ask.at, t0).await,
            Err(why) => self.deny(&ask.pid, &ask.p, &why, &ask.augur, t0),
        }
    }
}

impl Gateway {
    /// A paused proxied call: the user is asked through elicitation when the client can be;
    /// else the pause result goes back as it is.
    pub(super) async fn paused(
        &self,
        result: CallToolResult,
        p: Arc<Proxied>,
        context: &RequestContext<RoleServer>,
        t0: Instant,
    ) -> CallToolResponse {
        let peer = &context.peer;
        let augur = result
            .structured_content
            .as_ref()
            .and_then(|s| s.get("augur"))
            .cloned();
        let Some(pid) = augur
            .as_ref()
            .filter(|a| a.get("verdict") == Some(&json!("pause")))
            .and_then(|a| a.get("pause_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return result.into();
        };
        let modern = Self::can_ask_modern(context);
        if !modern && !Self::can_elicit(peer) {
            return result.into();
        }
        let reason = augur
            .as_ref()
            .and_then(|a| a.get("reason"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let args = self
            .inner
            .server
            .pending_pause(&self.inner.session, &pid)
            .map(|(_, a)| a.to_string())
            .unwrap_or_default();
        let message = format!(
            "Augur paused a call of the agent: `{}` (upstream `{}`) with {args}. Reason: {reason}. Run it once?",
            p.exposed,
            self.inner.upstreams[p.upstream].name()
        );
        if modern {
            return self.ask(pid, p, message, augur.unwrap_or(Value::Null), t0);
        }
        let at = Instant::now();
        match self.elicit(peer, message).await {
            Ok(()) => self.resume(&pid, p, at, t0).await,
            Err(why) => self.deny(&pid, &p, &why, augur.as_ref().unwrap_or(&Value::Null), t0),
        }
        .into()
    }
}
