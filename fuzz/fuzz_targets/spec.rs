//! Abstraction specs (TOML).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match augur_abstraction::Abstraction::parse(text, "spec.toml") {
        Ok(a) => {
            let _ = a.num_states();
        }
        Err(e) => {
            augur_fuzz::assert_no_debug_text(&e.to_string(), text);
        }
    }
});
