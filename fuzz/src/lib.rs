//! Shared setup of the fuzz targets: the limits every load runs under (so a fuzzer input
//! that declares a huge model is refused, as the CLI's default `--max-states` refuses it,
//! instead of exhausting the fuzzer's memory), and the check that a message carries no Rust
//! Debug text.

use augur_check::{LoadOptions, Limits};
use std::time::Duration;

/// The state limit of every load (small: the fuzzer looks for crashes, not big models).
pub const MAX_STATES: usize = 20_000;

/// Load options with [`MAX_STATES`] and a short time limit.
pub fn load_options() -> LoadOptions {
    LoadOptions {
        limits: Limits::default()
            .with_max_states(MAX_STATES)
            .with_timeout(Duration::from_secs(2)),
        ..LoadOptions::default()
    }
}

/// Read options for the explicit readers with [`MAX_STATES`].
pub fn read_options() -> augur_formats::ReadOptions {
    augur_formats::ReadOptions {
        max_states: Some(MAX_STATES),
        ..augur_formats::ReadOptions::default()
    }
}

/// Panics (a finding) when a user-facing message shows Rust Debug output.
pub fn assert_no_debug_text(message: &str, input: &str) {
    for bad in ["Prob {", "Bool(true)", "Bool(false)", "kw_", "Some(\""] {
        if message.contains(bad) && !input.contains(bad) {
            panic!("Debug text `{bad}` in a message: {message}");
        }
    }
}
