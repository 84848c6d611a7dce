//! Trace files: JSON Lines and CSV long form (the first byte's parity chooses).
#![no_main]
use augur_abstraction::{TraceFormat, TraceReader};
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let format = if first % 2 == 0 { TraceFormat::JsonLines } else { TraceFormat::Csv };
    for (i, t) in TraceReader::new(Cursor::new(rest), format, "t").enumerate() {
        if let Err(e) = t {
            let _ = e.to_string();
        }
        if i > 100_000 {
            break;
        }
    }
});
