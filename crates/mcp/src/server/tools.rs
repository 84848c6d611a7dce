//! The tools' handlers: gate, record, a session's state and summary, pauses, and the checking tools (check, horizon, explain, pac).

use super::args::*;
use super::*;

/// Releases a check slot when dropped.
pub(super) struct CheckSlot<'a>(&'a AtomicUsize);

impl Drop for CheckSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Server {
    pub(super) fn gate(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let a: GateArgs = parse(args)?;
        let id = a.session.as_str();
        let tool = a.tool.as_deref();
        let state = a.state.as_ref();
        if tool.is_none() && state.is_none() {
            return Err(ToolError::param("give `tool` (with `args`) or `state`"));
        }
        let call_args = call_args(a.args)?;
        let mut guard = self.lock();
        let s = &mut *guard;
        self.sweep(s, now);
        let next_pause = s.next_pause;
        if !s.open.contains_key(id) {
            let (kind, why) = self.refusal(s, id);
            return Ok(json!({
                "session": id,
                "tool": tool.unwrap_or(""),
                "verdict": Verdict::Block,
                "probability": 1.0,
                "refused": kind,
                "rule": format!("fail_closed: {kind}_session"),
                "reason": format!("{}: {why} → block", tool.unwrap_or("action")),
            }));
        }
        Self::touch(s, id, now);
        let e = s
            .open
            .get_mut(id)
            .ok_or_else(|| ToolError::refused("the session is gone"))?;
        let action = match state {
            Some(st) => Action::State { tool, state: st },
            None => Action::Tool(ToolCall::new(tool.unwrap_or(""), &call_args)),
        };
        let proxied = self.cfg.gateway_tools.as_ref().is_some_and(|t| {
            tool.is_some_and(|n| t.read().unwrap_or_else(|e| e.into_inner()).contains(n))
        });
        if proxied {
            // The gateway gates this call when it is made: answer on a copy of the session.
            let mut dry = e.session.clone();
            let d = dry.gate(&action);
            let mut v = serde_json::to_value(dry.report(&d, id))
                .map_err(|err| ToolError::new(ErrorKind::Internal, err.to_string()))?;
            v["dry_run"] = json!(true);
            v["note"] = json!("the gateway gates this tool itself when you call it; this answer did not move the session");
            return Ok(v);
        }
        let d = e.session.gate(&action);
        let report: DecisionReport = e.session.report(&d, id);
        let mut v = serde_json::to_value(&report)
            .map_err(|err| ToolError::new(ErrorKind::Internal, err.to_string()))?;
        let pid = PendingPause::after_gate(
            &mut e.pause,
            d.verdict,
            || format!("pause-{next_pause}"),
            tool,
            &call_args,
            state,
        );
        if let Some(pid) = pid {
            v["pause_id"] = json!(pid);
            s.next_pause += 1;
        }
        Ok(v)
    }

    pub(super) fn record(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let a: RecordArgs = parse(args)?;
        let executed = a.executed.unwrap_or(true);
        if !executed && !self.cfg.harness {
            return Err(ToolError::refused(
                "record with executed=false is harness-only: it would move the monitor back; start the server with --harness",
            ));
        }
        let tool = a.tool.as_str();
        let call_args = call_args(a.args)?;
        let state = a.state;
        self.with_session(&a.session, now, |id, e| {
            let action = match &state {
                Some(st) => Action::State {
                    tool: Some(tool),
                    state: st,
                },
                None => Action::Tool(ToolCall::new(tool, &call_args)),
            };
            let changed = e.session.record(&action, executed);
            e.pause = None;
            Ok(json!({"session": id, "changed": changed, "state": state_name(&e.session)}))
        })
    }

    pub(super) fn answer_pause(
        &self,
        args: &Map<String, Value>,
        now: Instant,
        approve: bool,
    ) -> Result<Value> {
        let a: PauseArgs = parse(args)?;
        let pid = a.pause_id.as_str();
        self.with_session(&a.session, now, |id, e| {
            let changed = pause::answer(&mut e.session, &mut e.pause, pid, approve)?;
            Ok(json!({
                "session": id,
                "pause_id": pid,
                "approved": approve,
                "changed": changed,
                "state": state_name(&e.session),
            }))
        })
    }

    pub(super) fn end_session(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let a: SessionArgs = parse(args)?;
        let id = a.session.as_str();
        let mut s = self.lock();
        self.sweep(&mut s, now);
        if s.open.remove(id).is_none() {
            let (_, why) = self.refusal(&s, id);
            return Err(ToolError::refused(why));
        }
        self.bury(&mut s, id.to_string());
        Ok(json!({"session": id, "ended": true}))
    }

    pub(super) fn session_state(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let a: SessionArgs = parse(args)?;
        self.with_session(&a.session, now, |id, e| {
            let s = &e.session;
            let classifier = s.monitor().classifier().is_some();
            Ok(json!({
                "session": id,
                "category": s.category(),
                "state": state_name(s),
                "dtr": classifier.then(|| s.dtr().to_string()),
                "risk": classifier.then(|| s.dtr().risk_level()),
                "steps": s.summary().steps,
                "pending_pause": e.pause.as_ref().map(|p| json!({"pause_id": p.id, "tool": p.tool})),
            }))
        })
    }

    pub(super) fn summary(&self, args: &Map<String, Value>, now: Instant) -> Result<Value> {
        let a: SessionArgs = parse(args)?;
        self.with_session(&a.session, now, |id, e| {
            let sum = e.session.summary();
            Ok(json!({
                "session": id,
                "steps": sum.steps,
                "allow": sum.decisions[Verdict::Allow as usize],
                "warn": sum.decisions[Verdict::Warn as usize],
                "pause": sum.decisions[Verdict::Pause as usize],
                "block": sum.decisions[Verdict::Block as usize],
                "peak_probability": sum.peak_probability,
                "peak_risk": sum.peak_risk,
                "overridden": sum.overridden,
                "state": state_name(&e.session),
            }))
        })
    }

    pub(super) fn limits(&self) -> Limits {
        Limits::default()
            .with_max_states(self.cfg.max_states)
            .with_max_smoothed_transitions(self.cfg.max_smoothed_transitions)
            .with_timeout(self.cfg.timeout)
            .with_deadline(Instant::now() + self.cfg.timeout)
    }

    pub(super) fn heavy(&self, f: impl FnOnce() -> Result<Value>) -> Result<Value> {
        let n = self.checks_running.fetch_add(1, Ordering::SeqCst);
        let _slot = CheckSlot(&self.checks_running);
        if n >= self.cfg.max_concurrent_checks {
            return Err(ToolError::refused(format!(
                "busy: {} checks are running (the server's maximum); try again later",
                self.cfg.max_concurrent_checks
            )));
        }
        f()
    }

    pub(super) fn source<'a>(&self, m: &'a ModelArgs) -> Result<ModelSource<'a>> {
        match (m.model_text.as_deref(), m.model_path.as_deref()) {
            (Some(t), None) => {
                if t.len() > self.cfg.max_text_bytes {
                    return Err(ToolError::refused(format!(
                        "model_text has {} bytes; this server takes at most {}",
                        t.len(),
                        self.cfg.max_text_bytes
                    )));
                }
                Ok(ModelSource::Text {
                    text: t,
                    format: m.format.map(TextFormat::as_str),
                })
            }
            (None, Some(p)) => {
                if m.format.is_some() {
                    return Err(ToolError::param(
                        "`format` is for model_text; a file's format comes from its extension",
                    ));
                }
                Ok(ModelSource::Path(p))
            }
            (Some(_), Some(_)) => Err(ToolError::param(
                "give exactly one of model_text and model_path, not both",
            )),
            (None, None) => Err(ToolError::param("give model_text or model_path")),
        }
    }

    pub(super) fn check(&self, args: &Map<String, Value>) -> Result<Value> {
        let a: CheckArgs = parse(args)?;
        let props = match &a.properties {
            Value::Array(a) => a
                .iter()
                .map(|p| {
                    p.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| ToolError::param("`properties` must be a list of strings"))
                })
                .collect::<Result<Vec<_>>>()?,
            Value::String(s) => vec![s.clone()],
            _ => {
                return Err(ToolError::param(
                    "`properties` (a list of PCTL strings) is required",
                ))
            }
        };
        if props.len() > defaults::MAX_PROPERTIES {
            return Err(ToolError::refused(format!(
                "{} properties; at most {} per request",
                props.len(),
                defaults::MAX_PROPERTIES
            )));
        }
        let method = a.method.as_deref().map(ops::parse_method).transpose()?;
        let constants = ops::constants_from_json(a.model.constants.as_ref())?;
        let source = self.source(&a.model)?;
        let limits = self.limits();
        let exact = method == Some(augur_check::Method::Exact);
        let model = ops::load_model(source, self.cfg.root.as_deref(), &constants, exact, &limits)?;
        let req = CheckRequest {
            properties: props,
            constants,
            method,
            all_states: a.all_states.unwrap_or(false),
        };
        let out = ops::check(&model, &req, &limits)?;
        if let Some((_, first)) = out.errors.first() {
            let mut e = first.clone();
            let all: Vec<&str> = out.errors.iter().map(|(_, e)| e.message.as_str()).collect();
            e.message = format!("{}\n\n{}", all.join("\n"), out.report.to_json());
            return Err(e);
        }
        serde_json::to_value(&out.report)
            .map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))
    }

    pub(super) fn horizon(&self, args: &Map<String, Value>) -> Result<Value> {
        let a: HorizonArgs = parse(args)?;
        let target = a.target.as_str();
        let max = a.max;
        if max == 0 || max > self.cfg.max_horizon as u64 {
            return Err(ToolError::param(format!(
                "`max` must be in 1..={}",
                self.cfg.max_horizon
            )));
        }
        let all_states = a.all_states.unwrap_or(false);
        let constants = ops::constants_from_json(a.model.constants.as_ref())?;
        let source = self.source(&a.model)?;
        let limits = self.limits();
        let model = ops::load_model(source, self.cfg.root.as_deref(), &constants, false, &limits)?;
        if all_states && model.dtmc().num_states().saturating_mul(max as usize) > 1_000_000 {
            return Err(ToolError::refused(
                "the table for all states would have more than 1,000,000 entries; ask for the initial state's curve (all_states=false)",
            ));
        }
        ops::horizon(
            &model,
            target,
            max as usize,
            &constants,
            all_states,
            &limits,
        )
    }

    pub(super) fn explain(&self, args: &Map<String, Value>) -> Result<Value> {
        let a: ExplainArgs = parse(args)?;
        let paths = usize::try_from(a.paths.unwrap_or(10)).unwrap_or(usize::MAX);
        let subsystem = a.subsystem.map(|s| match s {
            SubsystemArg::Heuristic => augur_explain::SubsystemKind::Heuristic,
            SubsystemArg::Minimal => augur_explain::SubsystemKind::Minimal,
        });
        let constants = ops::constants_from_json(a.model.constants.as_ref())?;
        let source = self.source(&a.model)?;
        let limits = self.limits();
        let model = ops::load_model(source, self.cfg.root.as_deref(), &constants, false, &limits)?;
        let req = ops::ExplainRequest {
            property: a.property,
            constants,
            paths,
            from: a.from,
            subsystem,
            dot: a.dot.unwrap_or(false),
            prism: a.prism.unwrap_or(false),
            names: None,
        };
        ops::explain(&model, &req, &limits)
    }

    pub(super) fn pac(&self, args: &Map<String, Value>) -> Result<Value> {
        let a: PacArgs = parse(args)?;
        let (epsilon, delta) = (a.epsilon, a.delta);
        let hoeffding = a.hoeffding.unwrap_or(false);
        let (states, text, path) = (a.states, a.model_text.as_deref(), a.model_path.as_deref());
        match (states, text, path) {
            (Some(m), None, None) => ops::pac_calculator(
                m as usize,
                a.p_hat,
                a.observations,
                epsilon,
                delta,
                hoeffding,
            ),
            (None, Some(t), None) => {
                if t.len() > self.cfg.max_text_bytes {
                    return Err(ToolError::refused("model_text is too large"));
                }
                ops::pac_learned(ops::TEXT_NAME, t, epsilon, delta, hoeffding)
            }
            (None, None, Some(p)) => {
                let real = ops::resolve_under(self.cfg.root.as_deref(), p)?;
                let meta = std::fs::metadata(&real)
                    .map_err(|e| ToolError::new(ErrorKind::Model, format!("{p}: {e}")))?;
                if meta.len() > self.cfg.max_text_bytes as u64 {
                    return Err(ToolError::refused(format!("{p} is too large")));
                }
                let text = augur_check::read_text(&real).map_err(|e| ToolError::check(&e))?;
                ops::pac_learned(p, &text, epsilon, delta, hoeffding)
            }
            _ => Err(ToolError::param(
                "give exactly one of model_text, model_path (a learned model) or states (the calculator)",
            )),
        }
    }
}

/// The arguments of a gated or recorded call: an object, a JSON string holding one, or none.
fn call_args(raw: Option<Value>) -> Result<Value> {
    match raw.unwrap_or(Value::Null) {
        Value::Null => Ok(Value::Object(Map::new())),
        v @ (Value::Object(_) | Value::String(_)) => {
            ToolCall::parse_args(v).map_err(|e| ToolError::param(format!("`args`: {e}")))
        }
        _ => Err(ToolError::param(
            "`args` must be an object or a JSON string",
        )),
    }
}

pub(super) fn state_name(s: &Session) -> String {
    let m = s.monitor();
    let t = m.table_for(s.category()).map(|i| &m.tables[i]);
    t.map_or_else(|| s.state().to_string(), |t| t.name(s.state()).to_string())
}
