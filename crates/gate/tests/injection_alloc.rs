//! The injection signal allocates nothing on ASCII text without a hit (the common case of
//! the observe path): counted with an instrumented global allocator.

use augur_gate::injection::detect;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Run without a test harness (`harness = false`; the counts are the whole process's, see
/// ARCHITECTURE.md "Tests"): the process has one thread, this one.
fn main() {
    ascii_text_without_a_hit_allocates_nothing();
    println!("test ascii_text_without_a_hit_allocates_nothing ... ok");
}

/// The signal on ASCII text without a hit, counted.
fn ascii_text_without_a_hit_allocates_nothing() {
    let text = "- id: 7\n  sender: anna@example.com\n  subject: Lunch\n  body: Please send me the \
                slides before Friday and book the room. Thanks!\n"
        .repeat(40);
    assert!(detect(&text).is_none());
    let region = Region::new(GLOBAL);
    for _ in 0..50 {
        assert!(detect(&text).is_none());
    }
    let stats = region.change();
    assert_eq!(stats.allocations, 0, "{stats:?}");
}
