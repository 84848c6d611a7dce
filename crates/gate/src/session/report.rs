//! The wire types of decisions: the JSON report `monitor gate` prints and the audit record.

use super::{continuation, describe_step, render_reason, Decision, Fired, Names};
use crate::dtr::{Prov, RiskLevel};
use crate::monitor::Monitor;
use crate::policy::{Mode, Rules, Verdict};
use crate::words::NamePattern;
use serde::{Deserialize, Serialize};

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

/// The text of pattern `i` of `list` (empty when there is none).
pub(super) fn pattern(list: &[NamePattern], i: u16) -> &str {
    list.get(i as usize).map_or("", |p| p.as_str())
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
        Fired::AlwaysBlock(i) => format!("always_block {}", pattern(&rules.always_block, i)),
        Fired::AlwaysAllow(i) => format!("always_allow {}", pattern(&rules.always_allow, i)),
        Fired::Unobserved => "unobserved state".into(),
        Fired::ContentUnread => "unread content".into(),
        Fired::NoProvenance => "no provenance".into(),
        Fired::Delegated => "delegated content".into(),
        Fired::AfterInjection => "after an injection".into(),
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
