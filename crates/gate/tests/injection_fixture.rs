//! The injection signal (issue 41, item 2) on `fixtures/injection-texts.json`: injections
//! written without the development data's template, and benign texts that look like
//! instructions but address a person. The counts are the ones measured when the rules were
//! written (docs/monitor.md, "Issue 41: the injection signal"); a change of the rules that
//! loses an injection or flags one more benign text fails here, and the lists name which.

use augur_gate::injection::detect;
use serde_json::Value;

fn fixture() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/injection-texts.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn texts<'a>(v: &'a Value, key: &str) -> Vec<(&'a str, &'a str)> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["note"].as_str().unwrap(), e["text"].as_str().unwrap()))
        .collect()
}

/// The notes of the texts of `key` whose detection is `hit`.
fn notes(v: &Value, key: &str, hit: bool) -> Vec<String> {
    texts(v, key)
        .iter()
        .filter(|(_, t)| detect(t).is_some() == hit)
        .map(|(n, _)| n.to_string())
        .collect()
}

fn missed(v: &Value, key: &str) -> Vec<String> {
    notes(v, key, false)
}

fn flagged(v: &Value, key: &str) -> Vec<String> {
    notes(v, key, true)
}

/// The injections the rules were written with: all detected.
#[test]
fn recall_on_injections_written_without_the_template() {
    let v = fixture();
    assert!(texts(&v, "injections").len() >= 30);
    assert_eq!(missed(&v, "injections"), Vec::<String>::new());
}

/// The benign texts the rules were written with: none flagged.
#[test]
fn false_positives_on_instruction_like_benign_texts() {
    let v = fixture();
    assert_eq!(flagged(&v, "benign"), Vec::<String>::new());
}

/// The held-out lists, written after the rules and not used to tune them: 14 of 20
/// injections detected (these six missed), none of the 15 benign texts flagged.
#[test]
fn held_out_recall_and_false_positives() {
    let v = fixture();
    assert_eq!(texts(&v, "held_out_injections").len(), 20);
    assert_eq!(missed(&v, "held_out_injections"), HELD_OUT_MISSED);
    assert_eq!(flagged(&v, "held_out_benign"), Vec::<String>::new());
}

/// Every signal's span lies in its text and its quote is short and quotes the evidence.
#[test]
fn spans_and_quotes() {
    let v = fixture();
    for (note, t) in texts(&v, "injections")
        .into_iter()
        .chain(texts(&v, "benign"))
    {
        if let Some(s) = detect(t) {
            assert!(s.span.start < s.span.end && s.span.end <= t.len(), "{note}");
            assert!(
                t.is_char_boundary(s.span.start) && t.is_char_boundary(s.span.end),
                "{note}"
            );
            let q = s.quote(t);
            assert!(q.len() <= augur_gate::injection::QUOTE_BYTES, "{note}: {q}");
            assert!(!s.cues.is_empty() && s.score >= augur_gate::injection::THRESHOLD);
        }
    }
}

/// The held-out injections the rules miss (measured): an address to "automated readers" or
/// "shopping assistants" with no second cue, a bracketed note to "the scheduling assistant"
/// (hiding from attendees, not the user), a commit message to "AI reviewers", letters spaced
/// out, and an instruction written as a file name.
const HELD_OUT_MISSED: &[&str] = &[
    "PDF footer in white text",
    "product review to shopping agent",
    "calendar invite with agenda",
    "git commit message",
    "spaced-out letters",
    "instructions in a filename list",
];

/// What the rules still get wrong among the texts they were tuned on (`known_limits`: the
/// 2026-12-01 probe of tools AgentDojo does not have; docs/monitor.md, "Issue 41: the
/// injection signal"): a note to "automated code reviewers" with no second cue is missed;
/// an announcement about a language model that asks for questions, and a note to "assistant
/// managers" (`if you are an assistant …`, a strong rule), are flagged. Pinned both ways: a
/// rule change that fixes one moves it to the tuned lists, one that breaks another fails
/// above.
#[test]
fn known_limits_are_as_documented() {
    let v = fixture();
    let limits = v["known_limits"].as_array().unwrap();
    assert_eq!(limits.len(), 3);
    for e in limits {
        let (note, text) = (e["note"].as_str().unwrap(), e["text"].as_str().unwrap());
        let injection = e["injection"].as_bool().unwrap();
        let detected = e["detected"].as_bool().unwrap();
        // Each is a mistake: an injection missed or a benign text flagged.
        assert_ne!(injection, detected, "{note}");
        assert_eq!(detect(text).is_some(), detected, "{note}");
    }
}
