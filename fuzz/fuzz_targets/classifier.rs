//! Monitor classifiers (TOML), and tool calls through the default classifier. Rejected: a
//! located error without Debug text. The input is also classified as a tool name and as
//! argument text (look-alikes, invisible characters, addresses, URLs; issue 22, class 6): no
//! panic, and a name's classification does not change when zero-width characters are added.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = augur_gate::Classifier::parse(text, "classifier.toml") {
        augur_fuzz::assert_no_debug_text(&e.to_string(), text);
    }
    static DEFAULT: OnceLock<augur_gate::Classifier> = OnceLock::new();
    let c = DEFAULT.get_or_init(augur_gate::Classifier::default_rules);
    let args = serde_json::json!({"to": text, text: {"body": [text]}, "url": text});
    let plain = c.classify(text, &args);
    let hidden: String = text.chars().flat_map(|ch| [ch, '\u{200B}']).collect();
    let again = c.classify(&hidden, &args);
    assert_eq!(
        plain.map(|x| x.implication),
        again.map(|x| x.implication),
        "zero-width characters changed the classification of {text:?}"
    );
});
