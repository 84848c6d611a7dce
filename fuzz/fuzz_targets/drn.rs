//! Storm's DRN.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let r = augur_formats::drn::read_drn(Cursor::new(data), Path::new("m.drn"), &augur_fuzz::read_options());
    if let Err(e) = r {
        let _ = e.to_string();
    }
});
