//! A driver for counting the instructions (`valgrind --tool=callgrind`) of the gate bench's
//! operations, without the timing noise of a shared machine (on a VM whose neighbours come
//! and go, criterion's times of one build vary by a factor of two from run to run; the
//! instruction count of a build does not):
//!
//! ```text
//! cargo build --release -p augur-gate --example gate_cost
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/gate_cost send 2000
//! ```
//!
//! `MODE` is one of
//! - `send`: `gate` with classification of the bench's `send_email` call (3 arguments) on
//!   the committed 60-state monitor, the session reset every 8 calls as the bench does;
//! - `read`: the same with its `read_file` call (1 argument);
//! - `builtin`: the built-in gateway monitor's `gate` of that `send_email` call (classification
//!   and provenance, a 10 kB inbox observed first);
//! - `observe-new`: a 10 kB tool result observed into a fresh provenance store (its
//!   creation included);
//! - `observe-stored`: the same result observed again (its values stored);
//! - `none`: the setup alone;
//!
//! and the second argument is how many times. Instructions per operation: (total − total of
//! `none` with the same N) / N. Used for the A/B figures of docs/monitor.md ("Numbers").

#[path = "../benches/support/prescreen.rs"]
mod prescreen;

use augur_gate::provenance::{ObservationSource, Origin, Provenance};
use augur_gate::session::{Action, ToolCall};
use augur_gate::{Monitor, Policy, Session};
use serde_json::json;
use std::hint::black_box;
use std::sync::Arc;

fn main() {
    let (mode, n) =
        prescreen::mode_and_count("gate_cost send|read|builtin|observe-new|observe-stored|none N");
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/safetydrift-60.json"
    );
    let m = Arc::new(Monitor::load(std::path::Path::new(file)).expect("the 60-state monitor"));
    let policy = Arc::new(Policy::default());
    let mut s = Session::new(&m, &policy, None).expect("a session");
    let send = json!({"recipients": ["mark.black@gmail.com"], "subject": "Quarterly numbers",
                      "body": "Hi Mark, the summary is attached. Best, Emma"});
    let read = json!({"file_path": "/workspace/reports/q3-summary.txt"});
    let inbox = prescreen::tool_result_10kb();
    let builtin = Arc::new(augur_gate::builtin::gateway_monitor().expect("the built-in monitor"));
    let mut b = Session::new(&builtin, &policy, None).expect("a session");
    b.observe(
        ObservationSource::User,
        None,
        "Send the quarterly numbers to mark.black@gmail.com",
    );
    b.observe(ObservationSource::Tool, Some("read_inbox"), &inbox);
    let origin = Origin::Tool {
        tool: "read_inbox",
        step: 1,
    };
    let mut stored = Provenance::new();
    stored.observe(Origin::User, "Please pay the invoice in my inbox.");
    stored.observe(origin, &inbox);
    let gate = |s: &mut Session, tool: &str, args: &serde_json::Value, i: usize| {
        if i % 8 == 7 {
            s.reset();
        }
        black_box(s.gate(&Action::Tool(ToolCall::new(
            black_box(tool),
            black_box(args),
        ))));
    };
    for i in 0..n {
        match mode.as_str() {
            "send" => gate(&mut s, "send_email", &send, i),
            "read" => gate(&mut s, "read_file", &read, i),
            "builtin" => {
                black_box(b.gate(&Action::Tool(ToolCall::new(
                    black_box("send_email"),
                    black_box(&send),
                ))));
            }
            "observe-new" => {
                let mut p = Provenance::new();
                black_box(p.observe(origin, black_box(&inbox)));
            }
            "observe-stored" => {
                black_box(stored.observe(origin, black_box(&inbox)));
            }
            "none" => {}
            other => {
                eprintln!("unknown mode {other}");
                std::process::exit(2);
            }
        }
    }
}
