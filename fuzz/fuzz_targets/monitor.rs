//! Compiled monitor files (JSON). Rejected: a located error without Debug text. Accepted (issue
//! 22, class 5): every value inside its own bounds, and an embedded classifier whose text,
//! re-embedded under a wrong hash, is refused.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match augur_gate::Monitor::from_json(text, "m.monitor.json") {
        Err(e) => augur_fuzz::assert_no_debug_text(&e.to_string(), text),
        Ok(m) => {
            for t in &m.tables {
                for k in 0..t.value.len() {
                    assert!(t.lower[k] <= t.value[k] && t.value[k] <= t.upper[k]);
                }
            }
            if m.classifier.is_some() {
                let mut m2 = m.clone();
                if let Some(c) = m2.classifier.as_mut() {
                    c.sha256 = "0".repeat(64);
                }
                assert!(
                    augur_gate::Monitor::from_json(&m2.to_json(), "m2.json").is_err(),
                    "a classifier under a wrong hash was accepted"
                );
            }
        }
    }
});
