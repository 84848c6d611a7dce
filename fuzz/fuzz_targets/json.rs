//! Augur's JSON models (and, from the same text, transition counts as `pac --counts` reads
//! them).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("m.json");
    if let Err(e) = augur_formats::json::read_json(Cursor::new(data), path, &augur_fuzz::read_options()) {
        let _ = e.to_string();
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(c) = augur_formats::json::parse_json::<augur_learn::CountsJson>(text, path) {
            if let Ok(counts) = augur_learn::TransitionCounts::from_json_within(&c, augur_fuzz::MAX_STATES) {
                let _ = augur_learn::pac::pac_report(&counts, 0.1, 0.05, augur_learn::pac::PacBound::ChenEtAl);
            }
        }
    }
});
