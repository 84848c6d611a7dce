//! The English reason of a decision, rendered only when asked for.

use super::{Decision, Fired};
use crate::classifier::{ArgHit, Matched};
use crate::dtr::{Prov, Reversibility, SafetyState};
use crate::monitor::{Continuation, Mapping, Monitor, Table};
use crate::policy::{Rules, Verdict};

fn prob_phrase(m: &Monitor, h: Option<u32>) -> String {
    match (&m.stay, h) {
        (None, Some(h)) => format!("P({} within {h})", m.target_name()),
        (None, None) => format!("P({} eventually)", m.target_name()),
        (Some(_), Some(h)) if Some(h) != m.property_horizon => {
            format!("P({} within {h})", m.target_name())
        }
        (Some(_), _) => m.property.clone(),
    }
}

/// The names a reason mentions.
#[derive(Clone, Copy, Debug, Default)]
pub struct Names<'a> {
    /// The action's tool.
    pub tool: &'a str,
    /// The previous executed action's tool.
    pub previous: Option<&'a str>,
    /// The tool that raised the data exposure to its level, when not the previous one.
    pub raiser: Option<&'a str>,
}

/// The reason text of a decision: `read_file(.env) … write_file then send_email(external
/// email): CREDENTIALS·NETWORK·IRREVERSIBLE [VIOLATED, rule 1], P(violated within 5) = 1.00 ≥
/// 0.90 → block`.
pub fn render_reason(m: &Monitor, rules: &Rules, d: &Decision, names: &Names<'_>) -> String {
    let (tool, previous) = (names.tool, names.previous);
    use std::fmt::Write;
    let t = &m.tables[d.table as usize];
    let hit_text = |h: &Option<ArgHit>| -> String {
        match (h, m.classifier()) {
            (Some(h), Some(c)) => format!("({})", c.hit_text(h)),
            _ => String::new(),
        }
    };
    let mut s = String::new();
    if let (Some(r), Some(rh)) = (names.raiser, &d.raiser) {
        let _ = write!(s, "{r}{} … ", hit_text(rh));
    }
    if let (Some(prev), Some(ph)) = (previous, &d.previous) {
        let _ = write!(s, "{prev}{} then ", hit_text(ph));
    }
    let hit = d.classification.and_then(|c| match c.matched {
        Matched::Rule { arg, .. } => arg,
        Matched::Default => None,
    });
    let tool = if tool.is_empty() { "action" } else { tool };
    let _ = write!(s, "{tool}{}", hit_text(&hit));
    if let Fired::FailClosed(why) = d.fired {
        let _ = write!(s, ": {} → block", why.text());
        return s;
    }
    let state = match d.dtr_after {
        Some(dtr) if m.mapping == Mapping::Dtr => dtr.to_string(),
        Some(dtr) => format!("{dtr} ({})", t.name(d.state_after)),
        None => t.name(d.state_after).to_string(),
    };
    let _ = write!(s, ": {state}");
    if let Some((level, rule)) = d.risk_after {
        let _ = write!(s, " [{level}, rule {rule}]");
    }
    if let (Some(c), Some(cl)) = (d.classification, m.classifier()) {
        if c.matched == Matched::Default {
            let _ = write!(s, " [{}]", cl.describe(&c.matched));
        }
        if let Some(by) = c.declared {
            let _ = write!(s, " [raised by the tool's declaration: {}]", by.describe());
        }
    }
    let phrase = prob_phrase(m, d.horizon);
    // `= 0.12`, or with the robust section `= 0.12 (robust bound 0.31, 95% confidence)` (`over
    // the model's intervals` when they carry no confidence): the verdict compares the bound.
    let value = match d.bound {
        Some(b) => {
            let conf = match m.robust_confidence(d.table as usize) {
                Some(c) => format!(", {}% confidence", percent(c)),
                None => " over the model's intervals".to_string(),
            };
            format!("{:.2} (robust bound {b:.2}{conf})", d.probability)
        }
        None => format!("{:.2}", d.probability),
    };
    match d.fired {
        Fired::Threshold(i) => {
            let th = &rules.thresholds[i as usize];
            let _ = write!(s, ", {phrase} = {value} ≥ {:.2} → {}", th.at, d.verdict);
            if let Some(msg) = &th.message {
                let _ = write!(s, " ({msg})");
            }
        }
        Fired::BelowThresholds => {
            let lowest = rules.thresholds.last().map_or(1.0, |t| t.at);
            let _ = write!(s, ", {phrase} = {value} < {:.2} → {}", lowest, d.verdict);
        }
        Fired::AlwaysBlock(i) => {
            let pat = super::report::pattern(&rules.always_block, i);
            let _ = write!(s, ", {phrase} = {value}; `{pat}` is always blocked → block");
        }
        Fired::AlwaysAllow(i) => {
            let pat = super::report::pattern(&rules.always_allow, i);
            let _ = write!(s, ", {phrase} = {value}; `{pat}` is always allowed → allow");
        }
        Fired::Unobserved => {
            let _ = write!(
                s,
                ", {phrase} = {value}; the policy's verdict for unobserved states → {}",
                d.verdict
            );
        }
        Fired::ContentUnread => {
            let _ = write!(
                s,
                ", {phrase} = {value}; a value it sends may come from content the session could not read → {}",
                d.verdict
            );
        }
        Fired::NoProvenance => {
            let _ = write!(
                s,
                ", {phrase} = {value}; a destination no text held, after untrusted text was read (it may be a rewrite of a value in it) → {}",
                d.verdict
            );
        }
        Fired::Delegated | Fired::AfterInjection => {
            let why = if d.fired == Fired::Delegated {
                "a value it sends comes from content the user's request delegated"
            } else {
                "the request does not ask for it and an instruction to the assistant was seen"
            };
            let _ = write!(s, ", {phrase} = {value}; {why}");
            match rules.ask_at {
                Some(a) if d.verdict < Verdict::Pause => {
                    let _ = write!(
                        s,
                        ", below the policy's ask_at {a:.4}: not asked → {}",
                        d.verdict
                    );
                }
                _ => {
                    let _ = write!(s, " → {}", d.verdict);
                }
            }
        }
        Fired::FailClosed(_) => {}
    }
    if d.bounds[1] - d.bounds[0] > 1e-9 {
        let _ = write!(s, " (bounds [{:.4}, {:.4}])", d.bounds[0], d.bounds[1]);
    }
    if d.unobserved {
        let _ = write!(
            s,
            "; state {} was never observed in training: its probabilities are smoothing, not data",
            t.name(d.state_after)
        );
    }
    let path = t.path(d.state_after);
    if !path.is_empty() {
        let names: Vec<&str> = std::iter::once(d.state_after)
            .chain(path.iter().copied())
            .map(|x| t.name(x))
            .collect();
        let _ = write!(
            s,
            "; most probable path to {}: {} ({:.3})",
            m.target_name(),
            names.join(" → "),
            t.path_probability[d.state_after as usize]
        );
    }
    if let Some(c) = continuation(m, d) {
        let _ = write!(
            s,
            "; most probable continuation: {} ({}% of the risk, path probability {:.3})",
            describe_step(m, t, c.from, c.next),
            percent(c.share),
            c.probability
        );
    }
    s
}

/// The most probable continuation a decision's reason states: at `warn` and above, with the
/// `explanations` section, when the target can still be reached (a lookup).
pub fn continuation(m: &Monitor, d: &Decision) -> Option<Continuation> {
    if matches!(d.fired, Fired::FailClosed(_)) || d.verdict < Verdict::Warn {
        return None;
    }
    m.explanation(d.table as usize, d.state_after, d.horizon)
}

/// A share or confidence as a percentage without needless digits: `62`, `95`, `99.9`.
fn percent(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{}", p.round())
    } else {
        format!("{p:.1}")
    }
}

/// What kind of action a step of the model from state `from` to state `to` is, in words:
/// for a `dtr` monitor its `(d, t, r)` change ("an irreversible network send of sensitive data
/// (INTERNAL·READ_ONLY·FULLY_REVERSIBLE → SENSITIVE·NETWORK·IRREVERSIBLE)"), for a
/// `risk-level` or `abstraction` monitor the two states' names.
pub fn describe_step(m: &Monitor, t: &Table, from: u32, to: u32) -> String {
    match m.mapping {
        Mapping::Dtr => {
            let dtr = |s: u32| {
                t.map
                    .iter()
                    .position(|&x| x == s)
                    .and_then(SafetyState::from_index)
            };
            match (dtr(from), dtr(to)) {
                (Some(a), Some(b)) => format!("{} ({a} → {b})", dtr_action(a, b)),
                _ => format!("a step to {}", t.name(to)),
            }
        }
        Mapping::RiskLevel | Mapping::Abstraction => {
            format!("a step from {} to {}", t.name(from), t.name(to))
        }
    }
}

/// The action that takes a session from `a` to `b`, in words ("a network send of sensitive
/// data").
pub fn dtr_action(a: SafetyState, b: SafetyState) -> String {
    use crate::dtr::{DataExposure as D, ToolEscalation as T};
    // The tool is known when t rises (it is the new t) or stays READ_ONLY (a read); else it
    // is some tool of at most t.
    let noun = if b.t > a.t {
        match b.t {
            T::FileWrite => "file write",
            T::CodeExec => "code run",
            T::Network => "network send",
            T::ReadOnly => "read",
        }
    } else if b.t == T::ReadOnly && b.d > a.d {
        "read"
    } else {
        "action"
    };
    let adjective = match b.r {
        Reversibility::Irreversible => "irreversible ",
        Reversibility::Partially => "partly reversible ",
        Reversibility::FullyReversible => "",
    };
    let data = |d: D| match d {
        D::None => "no data",
        D::Public => "public data",
        D::Internal => "internal data",
        D::Sensitive => "sensitive data",
        D::Credentials => "credentials",
    };
    let of = if b.d > a.d && noun == "action" {
        format!(" exposing {}", data(b.d))
    } else if b.d > a.d {
        format!(" of {}", data(b.d))
    } else if b.d > D::None && noun != "action" {
        format!(" with {} exposed", data(b.d))
    } else {
        String::new()
    };
    let untrusted = if b.p == Prov::Untrusted && a.p != Prov::Untrusted {
        " to an untrusted destination"
    } else {
        ""
    };
    let phrase = format!("{adjective}{noun}");
    let article = if phrase.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {phrase}{of}{untrusted}")
}
