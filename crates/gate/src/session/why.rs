//! The reasons of a session's decisions, for a person and for the audit (the provenance,
//! unread-content, no-provenance and intent parts, and the JSON report).

use super::*;

impl Session {
    /// The provenance part of the latest decision's reason, when its p is not NONE: which
    /// argument, which value, where it was first seen ("recipient us13… first appeared in the
    /// result of `read_file` at step 2; the user's request does not contain it").
    pub fn provenance_reason(&self, d: &Decision) -> Option<String> {
        self.provenance_reason_with(d, false)
    }

    fn provenance_reason_with(&self, d: &Decision, mask: bool) -> Option<String> {
        let h = d.provenance.filter(|h| h.p != Prov::None)?;
        if let Some((arg, shown)) = &self.injected_arg {
            let value = shown_or_masked(shown.as_str(), mask);
            let s = self.intent.argument_in_an_instruction_of(shown.as_str());
            return Some(format!(
                "{} {value} occurs inside {}{}: block",
                arg.as_str(),
                s.map_or("an instruction to the assistant", |s| s
                    .description
                    .as_str()),
                s.map_or_else(String::new, |s| format!(
                    " in the result of `{}` at step {}",
                    s.tool, s.step
                ))
            ));
        }
        let arg = self.prov_arg.as_str();
        Some(match h.evidence {
            ArgProvenance::Untrusted(e) if e.at_cap && self.prov_lost => format!(
                "{arg} holds a {} value not seen in trusted text since the session was restored (the restart lost what the session had observed: fails closed)",
                e.kind.as_str()
            ),
            ev => self.prov.explain_with(arg, &ev, mask),
        })
    }

    /// Why the latest decision paused for content the session could not read
    /// ([`Fired::ContentUnread`]): which argument, which value, what was unread.
    pub fn unread_reason(&self, d: &Decision) -> Option<String> {
        self.unread_reason_with(d, false)
    }

    fn unread_reason_with(&self, d: &Decision, mask: bool) -> Option<String> {
        if d.fired != Fired::ContentUnread {
            return None;
        }
        let (arg, shown, e) = self.unread_hit.as_ref()?;
        let u = self.unread.as_ref()?;
        let value =
            e.id.and_then(|i| self.prov.value_text(i))
                .unwrap_or_else(|| shown.as_str().to_string());
        let value = shown_or_masked(&value, mask);
        let at = u.step.map_or_else(String::new, |s| format!(" at step {s}"));
        Some(format!(
            "{} {value} was not seen in trusted text, and the session could not read {} in {}{at}, which may have supplied it: ask the user",
            arg.as_str(),
            u.what,
            u.source
        ))
    }

    /// The reason of the session's latest decision, for a person (allocates).
    pub fn reason(&self, d: &Decision) -> String {
        self.reason_with(d, false)
    }

    /// [`Session::reason`] with every argument value masked ([`crate::provenance::mask_value`]):
    /// what an audit log writes (the reason shown to a person keeps the values).
    pub fn reason_masked(&self, d: &Decision) -> String {
        self.reason_with(d, true)
    }

    fn reason_with(&self, d: &Decision, mask: bool) -> String {
        let mut r = render_reason(&self.monitor, self.rules(), d, &self.names(d));
        for part in [
            self.provenance_reason_with(d, mask),
            self.unread_reason_with(d, mask),
            self.untraced_reason_with(d, mask),
            self.intent_reason_with(d, mask),
        ]
        .into_iter()
        .flatten()
        {
            r.push_str("; ");
            r.push_str(&part);
        }
        r
    }

    /// The intent part of the latest decision's reason (issue 41): where a value the user
    /// delegated came from, or the instruction after which an unrequested change pauses.
    pub fn intent_reason(&self, d: &Decision) -> Option<String> {
        self.intent_reason_with(d, false)
    }

    fn intent_reason_with(&self, d: &Decision, mask: bool) -> Option<String> {
        d.provenance?;
        let tool = self.names(d).tool;
        if d.fired == Fired::AfterInjection {
            let s = self.intent.first_signal()?;
            let then = if d.verdict < Verdict::Pause {
                "not asked, the chain's probability being below the policy's ask_at (warn)"
            } else {
                "ask the user"
            };
            let asked = if self.intent.request().trim().is_empty() {
                "no request of the user's is known (none was given, or the session was restored), so nothing asks for".to_string()
            } else {
                "the user's request does not ask for".to_string()
            };
            return Some(format!(
                "{asked} `{tool}`, and the result of `{}` at step {} carried {}: {then}",
                s.tool, s.step, s.description
            ));
        }
        let (arg, shown, h) = self.tier_hit.as_ref()?;
        let value = h
            .evidence
            .id
            .and_then(|i| self.prov.value_text(i))
            .unwrap_or_else(|| shown.as_str().to_string());
        let value = shown_or_masked(&value, mask);
        let arg = arg.as_str();
        let step = h.step?;
        let source = self
            .intent
            .signal(step)
            .map(|s| s.tool.clone())
            .or_else(|| {
                h.evidence
                    .untrusted
                    .and_then(|u| self.prov.tool_name(&u).map(str::to_string))
            })
            .unwrap_or_else(|| "a tool".into());
        let from = format!(
            "{arg} {value} comes from the result of `{source}` at step {step}, a source the user's request named"
        );
        if h.tier == Tier::Known {
            let at = self
                .intent
                .counterparty_of_text(shown.as_str())
                .unwrap_or(step);
            return Some(format!(
                "{arg} {value} is a recipient of a record the user authored (sender: the user) in the result at step {at}: a payee or contact the user already chose, decided as the user's value"
            ));
        }
        Some(match h.tier {
            Tier::Injected => format!(
                "{from}, but it is inside {}: block",
                self.intent
                    .signal(step)
                    .map_or("an instruction to the assistant", |s| s.description.as_str())
            ),
            Tier::Delegated if self.approved_hit => {
                format!("{from}; the person approved it for `{tool}` earlier in this session")
            }
            Tier::Delegated if d.verdict < Verdict::Pause => format!(
                "{from}: not asked, the chain's probability being below the policy's ask_at (warn)"
            ),
            Tier::Delegated => match self.intent.signal(step) {
                Some(s) => format!(
                    "{from} (that result also carried {}, elsewhere): ask the user before `{tool}` uses it",
                    s.description
                ),
                None => format!("{from}: ask the user before `{tool}` uses it"),
            },
            Tier::Requested => {
                format!("{from}, fetched exactly as it was given: decided as the user's value")
            }
            Tier::Untrusted | Tier::Known => return None,
        })
    }

    /// Why the latest decision paused for a destination without provenance
    /// ([`Fired::NoProvenance`]).
    fn untraced_reason_with(&self, d: &Decision, mask: bool) -> Option<String> {
        if d.fired != Fired::NoProvenance {
            return None;
        }
        let (arg, shown) = self.untraced_hit.as_ref()?;
        let value = shown_or_masked(shown.as_str(), mask);
        Some(format!(
            "{} {value} occurs in no text the session saw (not the user's, no tool result's, not an earlier call's), and the session has read untrusted text: it may be a rewritten or split value of that text (fallback of issue 40): ask the user",
            arg.as_str()
        ))
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
        for u in [
            self.unread_reason(d),
            self.untraced_reason_with(d, false),
            self.intent_reason(d),
        ]
        .into_iter()
        .flatten()
        {
            r.reason.push_str("; ");
            r.reason.push_str(&u);
            r.provenance_reason = Some(match r.provenance_reason.take() {
                Some(p) => format!("{p}; {u}"),
                None => u,
            });
        }
        r
    }
}

/// A value as a reason shows it: masked for the audit ([`crate::provenance::mask_value`]).
fn shown_or_masked(value: &str, mask: bool) -> String {
    if mask {
        crate::provenance::mask_value(value)
    } else {
        value.to_string()
    }
}
