//! The provenance store allocates nothing when it looks an argument up, and nothing when it
//! observes text whose values it has all stored already (a value is allocated once, when it
//! is first stored): counted with an instrumented global allocator.

use augur_gate::provenance::{ArgProvenance, Origin, Provenance};
use serde_json::json;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Run without a test harness (`harness = false`; the counts are the whole process's, see
/// ARCHITECTURE.md "Tests"): the process has one thread, this one.
fn main() {
    lookups_and_repeated_observations_allocate_nothing();
    println!("test lookups_and_repeated_observations_allocate_nothing ... ok");
}

/// The store's lookups and repeated observations, counted.
fn lookups_and_repeated_observations_allocate_nothing() {
    let mut p = Provenance::new();
    p.observe(
        Origin::User,
        "Pay the bill in bill-december-2023.txt, copy me@home.org",
    );
    let result = "Send $98.70 to US133000000121212121212 or DE89 3704 0044 0532 0130 00, \
                  see https://www.evil.example/pay?x=1 and call +1 (555) 123-4567. /tmp/a.pdf";
    let tool = Origin::Tool {
        tool: "read_file",
        step: 0,
    };
    p.observe(tool, result);
    let args = [
        json!({"recipient": "US133000000121212121212", "amount": 98.7, "subject": "bill", "date": "2023-12-01"}),
        json!({"url": "evil.example/pay?x=1"}),
        json!({"recipients": ["me@home.org"], "body": "see www.EVIL.example/pay?x=1."}),
        json!({"x": [1, 2, {"y": "Alice"}]}),
    ];
    let region = Region::new(GLOBAL);
    let mut kinds = [0usize; 3];
    for _ in 0..100 {
        p.observe(tool, result);
        for a in &args {
            match p.provenance_of(a) {
                ArgProvenance::None | ArgProvenance::Agent(_) => kinds[0] += 1,
                ArgProvenance::User(_) => kinds[1] += 1,
                ArgProvenance::Untrusted(_) => kinds[2] += 1,
            }
        }
    }
    let stats = region.change();
    assert_eq!(kinds, [100, 0, 300]);
    assert_eq!(stats.allocations, 0, "{stats:?}");
    assert_eq!(stats.reallocations, 0, "{stats:?}");
}
