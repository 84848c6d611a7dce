//! A driver for counting instructions (`valgrind --tool=callgrind`) of the injection signal
//! and of what a pre-screen of its rules would search for, on the 10 kB tool result of the
//! gate bench (no hit), without the timing noise of a shared machine:
//!
//! ```text
//! cargo build --release -p augur-gate --example injection_prescreen_cost
//! valgrind --tool=callgrind target/release/examples/injection_prescreen_cost detect 200
//! ```
//!
//! `MODE` is `detect` (`injection::detect`), `keys` (the fold and the key words of a sound
//! pre-screen, packed searchers), `automaton` (the same keys, one automaton), `rare` (the
//! fold and 32 rare keys, one packed searcher) or `none` (the setup alone); the second
//! argument is how many times. Instructions per call: (total − total of `none`) / N. See
//! docs/monitor.md, "Issue 41: the injection signal".

#[path = "../benches/support/prescreen.rs"]
mod prescreen;

use prescreen::{
    count_keys, packed_searchers, prescreen_fold, tool_result_10kb, PRESCREEN_KEYS, RARE_KEYS,
};
use std::hint::black_box;

fn main() {
    let (mode, n) =
        prescreen::mode_and_count("injection_prescreen_cost detect|keys|automaton|rare|none N");
    let text = tool_result_10kb();
    let mut buf = vec![0u8; text.len()];
    // Setup common to every mode (so that `none` subtracts it).
    assert!(augur_gate::injection::detect(&text).is_none());
    let all = packed_searchers(PRESCREEN_KEYS);
    let rare = packed_searchers(RARE_KEYS);
    let dfa = aho_corasick::AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .build(PRESCREEN_KEYS)
        .expect("an automaton of the keys");
    let mut found = 0usize;
    for _ in 0..n {
        found += match mode.as_str() {
            "detect" => usize::from(augur_gate::injection::detect(black_box(&text)).is_some()),
            "keys" => {
                prescreen_fold(black_box(text.as_bytes()), &mut buf);
                count_keys(&all, &buf)
            }
            "automaton" => {
                prescreen_fold(black_box(text.as_bytes()), &mut buf);
                dfa.find_iter(&buf[..]).count()
            }
            "rare" => {
                prescreen_fold(black_box(text.as_bytes()), &mut buf);
                count_keys(&rare, &buf)
            }
            "none" => 0,
            other => {
                eprintln!("unknown mode {other}");
                std::process::exit(1);
            }
        };
    }
    println!("{mode} x{n}: {found} found");
}
