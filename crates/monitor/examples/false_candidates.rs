//! The false-candidate rate of the provenance store's value rules (issue 40, item 1): on the
//! benign runs of a runs file (safe, no injection), every value of every call's arguments,
//! looked up in the run's store as the monitor's replay fills it (the user's request and
//! system prompt trusted, tool results untrusted unless a default-trusted tool's), counted by
//! kind: candidates, and those the store marks untrusted. No attack put anything in a benign
//! run, so each untrusted value there is a false candidate of the rule that made it a value
//! (a value the agent really copied from a tool result, an IBAN from a bill, is counted too:
//! the store cannot tell it from a planted one). Also: the benign runs with at least one
//! untrusted value of each kind, and those where a value of the kind made a call's
//! destination or payload untrusted (by the default classifier, `models/classifier.toml`, as
//! `monitor eval` classifies: the value that decides the call's provenance p).
//!
//! ```console
//! $ cargo run --release -p augur-monitor --example false_candidates -- runs.jsonl
//! ```

use augur_gate::classifier::Classifier;
use augur_gate::dtr::Prov;
use augur_gate::provenance::{ArgProvenance, ValueKind};
use augur_gate::{Policy, Session};
use augur_monitor::eval::observe_before;
use augur_monitor::runs::{read_runs_file, Label, RunStep};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Default)]
struct Count {
    candidates: usize,
    untrusted: usize,
    runs: usize,
    runs_sink: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: false_candidates RUNS.jsonl")?;
    let runs = read_runs_file(std::path::Path::new(&path))?;
    let monitor = Arc::new(augur_gate::builtin::gateway_monitor()?);
    let classifier = Classifier::default_rules();
    let policy = Arc::new(Policy {
        base: augur_gate::policy::Rules {
            trusted_tools: augur_gate::policy::default_trusted_tools(),
            ..Default::default()
        },
        categories: Vec::new(),
    });
    let mut by_kind: BTreeMap<&'static str, Count> = BTreeMap::new();
    let mut benign = 0;
    for run in runs
        .iter()
        .filter(|r| r.label == Label::Safe && r.injected == Some(false))
    {
        benign += 1;
        let mut s = Session::new(&monitor, &policy, None)?;
        let mut next = 0;
        let mut seen: BTreeMap<&'static str, (bool, bool)> = BTreeMap::new();
        for (k, step) in run.steps.iter().enumerate() {
            observe_before(&mut s, run, &mut next, k);
            let RunStep::Tool { tool, args } = step else {
                continue;
            };
            // The value that made the call's destination or payload untrusted, if one did.
            let decided = classifier.classify(tool, args).and_then(|c| {
                let cp = classifier.call_provenance(&c, args, s.provenance(), false);
                match cp.evidence {
                    ArgProvenance::Untrusted(e) if cp.p == Prov::Untrusted => Some(e.kind.as_str()),
                    _ => None,
                }
            });
            if let Some(kind) = decided {
                seen.entry(kind).or_default().1 = true;
            }
            let Some(map) = args.as_object() else {
                continue;
            };
            for v in map.values() {
                s.provenance().values_of(v, &mut |e| {
                    let kind = match e.kind {
                        ValueKind::MailDomain | ValueKind::ParentDomain => return,
                        k => k.as_str(),
                    };
                    let c = by_kind.entry(kind).or_default();
                    c.candidates += 1;
                    if e.untrusted.is_some() && e.trusted.is_none() {
                        c.untrusted += 1;
                        seen.entry(kind).or_default().0 = true;
                    }
                });
            }
            s.record(&step.action(), true);
        }
        for (kind, (any, sink)) in seen {
            let c = by_kind.entry(kind).or_default();
            c.runs += usize::from(any);
            c.runs_sink += usize::from(sink);
        }
    }
    println!("{benign} benign runs of {path}");
    println!("| kind | argument values | untrusted (false candidates) | rate | benign runs with one | benign runs where one decided a call's p = UNTRUSTED |");
    println!("|---|---|---|---|---|---|");
    for (kind, c) in &by_kind {
        println!(
            "| {kind} | {} | {} | {:.1}% | {} | {} |",
            c.candidates,
            c.untrusted,
            100.0 * c.untrusted as f64 / c.candidates.max(1) as f64,
            c.runs,
            c.runs_sink
        );
    }
    Ok(())
}
