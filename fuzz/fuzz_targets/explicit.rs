//! PRISM's explicit files: the input is split at NUL bytes into `.tra`, `.lab`, `.srew`,
//! `.trew` and `.sta` (missing parts are absent files).
#![no_main]
use augur_formats::explicit::{read_prism_explicit_from, ExplicitInputs};
use libfuzzer_sys::fuzz_target;
use std::io::{BufRead, Cursor};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0);
    let tra = parts.next().unwrap_or_default();
    let mut readers: Vec<Option<Cursor<&[u8]>>> = (0..4).map(|_| parts.next().map(Cursor::new)).collect();
    let mut tra = Cursor::new(tra);
    let [lab, srew, trew, sta] = &mut readers[..] else {
        return;
    };
    fn dynr<'a>(p: &'a Path, r: &'a mut Option<Cursor<&[u8]>>) -> Option<(&'a Path, &'a mut dyn BufRead)> {
        r.as_mut().map(|r| (p, r as &mut dyn BufRead))
    }
    let inputs = ExplicitInputs {
        tra: (Path::new("m.tra"), &mut tra),
        lab: dynr(Path::new("m.lab"), lab),
        srew: dynr(Path::new("m.srew"), srew),
        trew: dynr(Path::new("m.trew"), trew),
        sta: dynr(Path::new("m.sta"), sta),
    };
    if let Err(e) = read_prism_explicit_from(inputs, &augur_fuzz::read_options()) {
        let _ = e.to_string();
    }
});
