//! The baselines beside the monitor: the keyword blocklist and the provenance rule alone.

use super::*;

/// Argument-name words that make an argument a *destination* of a call (where data goes or
/// what is fetched): an argument whose name has one of these words (split as tool names are,
/// see the classifier) is one. Generic, until the classifier's rules say it per tool.
pub const DESTINATION_WORDS: &[&str] = &[
    "recipient",
    "recipients",
    "to",
    "cc",
    "bcc",
    "email",
    "emails",
    "mail",
    "address",
    "addresses",
    "url",
    "urls",
    "uri",
    "link",
    "links",
    "website",
    "webpage",
    "domain",
    "host",
    "server",
    "endpoint",
    "iban",
    "account",
    "phone",
    "number",
    "participant",
    "participants",
    "invitee",
    "invitees",
    "attendee",
    "attendees",
    "user",
    "users",
    "member",
    "members",
    "channel",
    "destination",
    "target",
    "path",
    "file",
    "filename",
    "folder",
    "directory",
];

/// Argument-name words that make an argument a *payload* (what is sent or written).
pub const PAYLOAD_WORDS: &[&str] = &[
    "body",
    "content",
    "contents",
    "message",
    "text",
    "data",
    "payload",
    "attachment",
    "attachments",
    "note",
    "notes",
    "description",
];

pub(super) fn name_has_word(name: &str, words: &[&str]) -> bool {
    let mut buf = [(0u16, 0u16); augur_gate::words::MAX_WORDS];
    let n = augur_gate::words::split_words(name, &mut buf);
    buf[..n].iter().any(|&(a, b)| {
        let w = &name[a as usize..b as usize];
        words.iter().any(|x| x.eq_ignore_ascii_case(w))
    })
}

/// Is an argument of this name a destination ([`DESTINATION_WORDS`])?
pub fn is_destination(name: &str) -> bool {
    name_has_word(name, DESTINATION_WORDS)
}

/// Is an argument of this name a payload ([`PAYLOAD_WORDS`])?
pub fn is_payload(name: &str) -> bool {
    name_has_word(name, PAYLOAD_WORDS)
}

/// The provenance rule alone: the first tool call of a run that has a destination or payload
/// argument (top-level argument names, [`is_destination`], [`is_payload`]) of provenance
/// *untrusted* (see [`augur_gate::provenance`]; the run's observations are fed to a store before
/// each call) and either
/// - writes or cannot be undone: the classifier's implication of the call has t ≥ FILE_WRITE
///   or r = IRREVERSIBLE (a call the classifier cannot map counts as such: fail closed), or
/// - goes to the network: the untrusted value is a destination's URL or domain (a fetch of a
///   link first seen in a tool result).
///
/// Tool results are trusted as [`EvalOptions::trusted_tools`] say (the same trust as the
/// chain's, so that the two differ only in the chain).
pub fn provenance_flag(classifier: &Classifier, run: &Run) -> Option<usize> {
    provenance_flag_with(
        classifier,
        &augur_gate::policy::default_trusted_tools(),
        run,
    )
}

/// Feed a run's observations made before step `k` (from `*next` on) to a store.
pub(super) fn feed(
    store: &mut augur_gate::provenance::Provenance,
    trusted: &[NamePattern],
    run: &Run,
    next: &mut usize,
    k: usize,
) {
    feed_with(store, None, trusted, run, next, k);
}

/// [`feed`], with the user's intent fed too (as a session feeds it).
pub(super) fn feed_with(
    store: &mut augur_gate::provenance::Provenance,
    mut intent: Option<&mut augur_gate::intent::Intent>,
    trusted: &[NamePattern],
    run: &Run,
    next: &mut usize,
    k: usize,
) {
    use crate::runs::{ObservationSource, RunStep};
    use augur_gate::provenance::Origin;
    while let Some(o) = run.observations.get(*next).filter(|o| o.before_step <= k) {
        *next += 1;
        let tool = o.tool.as_deref().unwrap_or("");
        let step = o.step.unwrap_or(o.before_step.saturating_sub(1)) as u32;
        let origin = match o.source {
            ObservationSource::User => Origin::User,
            ObservationSource::System => Origin::System,
            ObservationSource::Tool if trusted.iter().any(|p| p.matches(tool)) => {
                Origin::TrustedTool { tool, step }
            }
            ObservationSource::Tool => Origin::Tool { tool, step },
        };
        if let Some(intent) = intent.as_deref_mut() {
            match (&origin, run.steps.get(step as usize)) {
                (Origin::User, _) => intent.observe_request(&o.text),
                (Origin::Tool { .. }, Some(RunStep::Tool { args, .. })) => {
                    intent.observe_result(step, tool, args, &o.text, store)
                }
                (Origin::Tool { .. }, _) => {
                    intent.observe_result(step, tool, &serde_json::Value::Null, &o.text, store)
                }
                _ => {}
            }
        }
        // A tool's result vouches for nothing its own call carried (no laundering).
        match run.steps.get(step as usize) {
            Some(RunStep::Tool { args, .. }) if o.source == ObservationSource::Tool => {
                store.observe_result(origin, o.text.as_bytes(), args);
            }
            _ => {
                store.observe(origin, &o.text);
            }
        }
    }
}

/// [`provenance_flag`] with these trusted tools.
pub fn provenance_flag_with(
    classifier: &Classifier,
    trusted: &[NamePattern],
    run: &Run,
) -> Option<usize> {
    use crate::runs::RunStep;
    let mut store = augur_gate::provenance::Provenance::new();
    let mut next = 0;
    for (k, step) in run.steps.iter().enumerate() {
        feed(&mut store, trusted, run, &mut next, k);
        let RunStep::Tool { tool, args } = step else {
            continue;
        };
        if !flagged_arguments(classifier, &store, tool, args).is_empty() {
            return Some(k);
        }
    }
    None
}

/// The arguments for which the provenance rule flags a call (see [`provenance_flag`]): each
/// destination or payload argument of provenance *untrusted* when the call writes or cannot
/// be undone, or a destination whose untrusted value is a URL or a domain; with the name,
/// the value and the store's evidence.
pub fn flagged_arguments<'a>(
    classifier: &Classifier,
    store: &augur_gate::provenance::Provenance,
    tool: &str,
    args: &'a serde_json::Value,
) -> Vec<(
    &'a str,
    &'a serde_json::Value,
    augur_gate::provenance::Evidence,
)> {
    use augur_gate::dtr::{Reversibility, ToolEscalation};
    use augur_gate::provenance::{ArgProvenance, ValueKind};
    let Some(map) = args.as_object() else {
        return Vec::new();
    };
    let risky = classifier.classify(tool, args).is_none_or(|c| {
        c.implication.t >= ToolEscalation::FileWrite
            || c.implication.r == Reversibility::Irreversible
    });
    let mut out = Vec::new();
    for (name, v) in map {
        let dest = is_destination(name);
        if !dest && !is_payload(name) {
            continue;
        }
        if let ArgProvenance::Untrusted(e) = store.provenance_of(v) {
            let network = dest
                && matches!(
                    e.kind,
                    ValueKind::Url | ValueKind::Domain | ValueKind::MailDomain
                );
            if risky || network {
                out.push((name.as_str(), v, e));
            }
        }
    }
    out
}
