//! Candidate tier rules of issue 41 (items 1 and 3), measured before they are built into the
//! session: on a runs file, the provenance rule alone (`eval::provenance_flag`) is replayed
//! with each rule below deciding between `block` and `pause`, and the figures by tier are
//! printed (`eval::tier_metrics`: prevented, blocked outright, and per class the share of runs
//! blocked and paused).
//!
//! The provenance rule flags a call with a destination or payload argument whose value was
//! first seen in untrusted text (a tool result). Each such value has the step of the result it
//! came from. The rules:
//! - **all block**: today's rule;
//! - **delegated, no signal: pause**: the result came from a *delegated* call (one of its
//!   argument strings, at least three characters, occurs word-bounded in the user's request,
//!   folded to lower case, or is a value of user provenance) and carries no injection signal
//!   (`augur_gate::injection::detect` on the result's text): pause; otherwise block;
//! - **… a signal blocks only the values in its window (W bytes)**: as above, but a delegated
//!   result with a signal pauses its values that do not occur within W bytes of the signal's
//!   evidence (the participants of a calendar event whose description holds an injection);
//! - **… a signal blocks only the values within its extent**: as above, with the window the
//!   detector reports (`InjectionSignal::extent`: the instruction's chained cues and its last
//!   sentence);
//! - **no signal: pause (any source)**: any result without a signal pauses (not a rule the issue
//!   allows: undelegated untrusted content must block; shown as the signal's upper bound).
//!
//! ```console
//! $ cargo run --release -p augur-monitor --example tier_rules -- RUNS.jsonl
//! ```
//!
//! (RUNS.jsonl: the runs file `augur monitor agentdojo` writes; docs/monitor.md, "Issue 41:
//! candidate tier rules".)

use augur_gate::classifier::Classifier;
use augur_gate::intent::occurs_word_bounded;
use augur_gate::policy::Verdict;
use augur_gate::provenance::{ArgProvenance, Origin, Provenance};
use augur_gate::words::NamePattern;
use augur_monitor::eval::{flagged_arguments, tier_metrics, Rate};
use augur_monitor::runs::{read_runs_file, ObservationSource, Run, RunStep};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// How a flagged value's source decides.
#[derive(Clone, Copy)]
enum Rule {
    AllBlock,
    /// Delegated and no signal in the window (`None`: anywhere in the result) pauses.
    Delegated(Option<usize>),
    /// Delegated and the value not within the signal's extent (the instruction's cues and
    /// its last sentence) pauses.
    DelegatedExtent,
    NoSignalAnySource,
}

fn leaves<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
        _ => out.push(v),
    }
}

/// The text of `text` within `w` bytes of `span`, lower-cased.
fn window(text: &str, span: std::ops::Range<usize>, w: usize) -> String {
    let mut a = span.start.saturating_sub(w);
    let mut e = (span.end + w).min(text.len());
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    while !text.is_char_boundary(e) {
        e += 1;
    }
    text[a..e].to_lowercase()
}

fn verdicts(
    classifier: &Classifier,
    trusted: &[NamePattern],
    run: &Run,
    rule: Rule,
) -> Vec<Verdict> {
    let mut store = Provenance::new();
    let mut next = 0;
    let mut delegated: HashSet<u32> = HashSet::new();
    // Per result step with a signal: its text and the evidence's span.
    let mut signals: HashMap<u32, (String, std::ops::Range<usize>, std::ops::Range<usize>)> =
        HashMap::new();
    let mut request = String::new();
    let mut out = Vec::with_capacity(run.steps.len());
    for (k, step) in run.steps.iter().enumerate() {
        while let Some(o) = run.observations.get(next).filter(|o| o.before_step <= k) {
            next += 1;
            let tool = o.tool.as_deref().unwrap_or("");
            let at = o.step.unwrap_or(o.before_step.saturating_sub(1)) as u32;
            let origin = match o.source {
                ObservationSource::User => {
                    request.push(' ');
                    request.push_str(&o.text.to_lowercase());
                    Origin::User
                }
                ObservationSource::System => Origin::System,
                ObservationSource::Tool if trusted.iter().any(|p| p.matches(tool)) => {
                    Origin::TrustedTool { tool, step: at }
                }
                ObservationSource::Tool => Origin::Tool { tool, step: at },
            };
            if o.source == ObservationSource::Tool {
                if let Some(s) = augur_gate::injection::detect(&o.text) {
                    signals.insert(at, (o.text.clone(), s.span, s.extent));
                }
            }
            match run.steps.get(at as usize) {
                Some(RunStep::Tool { args, .. }) if o.source == ObservationSource::Tool => {
                    store.observe_result(origin, o.text.as_bytes(), args);
                }
                _ => {
                    store.observe(origin, &o.text);
                }
            }
        }
        let RunStep::Tool { tool, args } = step else {
            out.push(Verdict::Allow);
            continue;
        };
        let mut all = Vec::new();
        leaves(args, &mut all);
        let names_the_request = |v: &Value| match v {
            Value::String(s) => {
                let s = s.trim().to_lowercase();
                s.len() >= 3 && occurs_word_bounded(&request, &s)
            }
            _ => false,
        };
        if all.iter().any(|v| {
            matches!(store.provenance_of(v), ArgProvenance::User(_)) || names_the_request(v)
        }) {
            delegated.insert(k as u32);
        }
        let mut verdict = Verdict::Allow;
        for (_, v, e) in flagged_arguments(classifier, &store, tool, args) {
            let source = e.untrusted.map(|s| s.step);
            // Whether the value comes from the signal's text (within `w` bytes of its
            // evidence; `None`: anywhere in the result).
            // `Some(usize::MAX)`: within the signal's extent.
            let from_signal = |s: u32, w: Option<usize>| {
                signals.get(&s).is_some_and(|(text, span, extent)| {
                    let Some(w) = w else { return true };
                    let win = if w == usize::MAX {
                        window(text, extent.clone(), 0)
                    } else {
                        window(text, span.clone(), w)
                    };
                    let mut vs = Vec::new();
                    leaves(v, &mut vs);
                    vs.iter().any(|l| match l {
                        Value::String(x) => {
                            let x = x.to_lowercase();
                            x.len() >= 3
                                && (win.contains(&x)
                                    || x.split_whitespace()
                                        .any(|t| t.len() >= 6 && win.contains(t)))
                        }
                        _ => false,
                    })
                })
            };
            let this = match (rule, source) {
                (Rule::Delegated(w), Some(s)) if delegated.contains(&s) && !from_signal(s, w) => {
                    Verdict::Pause
                }
                (Rule::DelegatedExtent, Some(s))
                    if delegated.contains(&s) && !from_signal(s, Some(usize::MAX)) =>
                {
                    Verdict::Pause
                }
                (Rule::NoSignalAnySource, Some(s)) if !from_signal(s, None) => Verdict::Pause,
                _ => Verdict::Block,
            };
            verdict = verdict.max(this);
        }
        out.push(verdict);
    }
    out
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: tier_rules RUNS.jsonl");
        std::process::exit(1);
    };
    let runs = match read_runs_file(std::path::Path::new(&path)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let classifier = Classifier::default_rules();
    let trusted = augur_gate::policy::default_trusted_tools();
    let refs: Vec<&Run> = runs.iter().collect();
    let p = |r: &Rate| format!("{:.1}% ({}/{})", 100.0 * r.rate, r.k, r.n);
    println!("| rule | prevented | blocked outright | benign blocked | benign paused | injected non-violating blocked | paused |");
    println!("|---|---|---|---|---|---|---|");
    for (rule, name) in [
        (
            Rule::AllBlock,
            "all block (the provenance rule alone)".to_string(),
        ),
        (Rule::Delegated(None), "delegated, no signal: pause".into()),
        (
            Rule::Delegated(Some(0)),
            "… a signal blocks the values within 0 bytes of its evidence".into(),
        ),
        (Rule::Delegated(Some(150)), "… within 150 bytes".into()),
        (Rule::Delegated(Some(300)), "… within 300 bytes".into()),
        (
            Rule::DelegatedExtent,
            "… within its extent (the instruction's cues and last sentence)".into(),
        ),
        (
            Rule::NoSignalAnySource,
            "no signal: pause, any source (upper bound)".into(),
        ),
    ] {
        let vs: Vec<Vec<Verdict>> = runs
            .iter()
            .map(|r| verdicts(&classifier, &trusted, r, rule))
            .collect();
        let t = tier_metrics(&refs, &vs);
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            p(&t.prevented),
            p(&t.blocked_outright),
            p(&t.benign.blocked),
            p(&t.benign.paused),
            p(&t.injected_safe.blocked),
            p(&t.injected_safe.paused)
        );
    }
}
