//! The PRISM language: parse, compile and explore (within small limits).
#![no_main]
use augur_check::{Format, Model};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = Model::from_text("m.pm", text, Format::Prism, &augur_fuzz::load_options()) {
        augur_fuzz::assert_no_debug_text(&e.diagnostic().to_string(), text);
    }
});
