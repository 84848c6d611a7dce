//! Monitor policies (TOML).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = augur_monitor::Policy::parse(text, "policy.toml") {
        augur_fuzz::assert_no_debug_text(&e.to_string(), text);
    }
});
