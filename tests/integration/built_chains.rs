//! Snapshot tests of whole built chains: every PRISM-language example in `models/` is built
//! and exported (`augur export --to json`), and rendered state by state (valuation, labels,
//! state rewards, every transition with its probability and transition rewards); the text is
//! compared with the committed snapshot in `tests/integration/snapshots/`. A change in state
//! exploration, numbering, synchronisation, rewards or deadlock handling shows here as a diff
//! of the chain (review with `cargo insta review`, or `INSTA_UPDATE=always` and read the diff).
//!
//! The numbers in the snapshots were checked against the derivations in `models/README.md`
//! (state counts, the probabilities of the first transitions); the snapshots keep every other
//! detail from drifting unseen.

use crate::util::{code, model, stderr, stdout_json};
use serde_json::Value as Json;
use std::fmt::Write;

/// `augur export models/NAME.pm --to json [--const C]`, which must succeed, rendered as text:
/// one block per state.
fn built(name: &str, consts: Option<&str>) -> String {
    let path = model(&format!("{name}.pm")).display().to_string();
    let mut args = vec!["export", path.as_str(), "--to", "json"];
    if let Some(c) = consts {
        args.extend(["--const", c]);
    }
    let o = crate::util::augur(&args);
    assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
    render(&stdout_json(&o))
}

/// The chain as text: `state S (x=.., y=..) [labels] {reward: value}`, then `-> T: p {reward:
/// value}` per transition.
fn render(m: &Json) -> String {
    let n = m["states"].as_u64().expect("states") as usize;
    let vals = &m["valuations"];
    let names: Vec<&str> = vals["names"]
        .as_array()
        .map(|a| a.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let valuation = |s: usize| -> String {
        let row = &vals["states"][s];
        names
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{v}={}", row[i]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let empty = Vec::new();
    let labels = m["labels"].as_array().unwrap_or(&empty);
    let rewards = m["rewards"].as_array().unwrap_or(&empty);
    let mut out = format!("{n} states, initial {}\n", m["initial"]);
    for s in 0..n {
        let mut line = format!("state {s} ({})", valuation(s));
        for l in labels {
            if l["states"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .any(|x| x == s)
            {
                write!(line, " \"{}\"", l["name"].as_str().unwrap_or("?")).unwrap();
            }
        }
        for r in rewards {
            let v = &r["state"][s];
            if v.as_f64().is_some_and(|x| x != 0.0) {
                write!(line, " {{{}: {v}}}", r["name"]).unwrap();
            }
        }
        out.push_str(&line);
        out.push('\n');
        for t in m["transitions"].as_array().unwrap_or(&empty) {
            if t[0] != s {
                continue;
            }
            let mut line = format!("  -> {}: {}", t[1], t[2]);
            for r in rewards {
                for rt in r["transitions"].as_array().unwrap_or(&empty) {
                    if rt[0] == t[0] && rt[1] == t[1] {
                        write!(line, " {{{}: {}}}", r["name"], rt[2]).unwrap();
                    }
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn merge_chain() {
    insta::assert_snapshot!(built("merge", None));
}

#[test]
fn ring3_chain() {
    insta::assert_snapshot!(built("ring3", None));
}

#[test]
fn sync3_chain() {
    insta::assert_snapshot!(built("sync3", Some("p=0.2")));
}
