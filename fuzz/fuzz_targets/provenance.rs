//! The provenance store on any bytes (issue 25, item 7 and "Bad input"): the input is observed
//! as an untrusted tool result by a store with small limits, then as the user's request by
//! another, and looked up as an argument, and its snapshot is read back. Findings: a panic; a
//! store over its limits; a snapshot that does not read back as the same store; a value
//! found in untrusted text that looks like the user's or like nothing (fail open); a value
//! found in the user's text that the store does not know.
#![no_main]
use augur_gate::provenance::{ArgProvenance, Origin, Provenance, ProvenanceLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = ProvenanceLimits {
        max_values: 16,
        max_scan_bytes: 4096,
        ..ProvenanceLimits::default()
    };
    let mut untrusted = Provenance::with_limits(limits);
    let st = untrusted.observe_bytes(Origin::Tool { tool: "t", step: 0 }, data);
    assert!(untrusted.len() <= limits.max_values);
    assert_eq!(st.scanned + st.skipped, data.len());
    // A store's snapshot reads back as the same store (a hook's state file; bytes that are
    // not UTF-8 included).
    let back = Provenance::from_snapshot(&untrusted.snapshot()).expect("its own snapshot");
    assert_eq!(back.snapshot(), untrusted.snapshot());
    let mut user = Provenance::with_limits(limits);
    user.observe_bytes(Origin::User, data);
    assert!(user.len() <= limits.max_values);
    // As an argument (valid UTF-8 only: a JSON string is text), the same scanner finds the same
    // values in it.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let arg = serde_json::json!({ "x": text });
    let found = st.found > 0;
    match untrusted.provenance_of(&arg) {
        ArgProvenance::Untrusted(_) => {}
        other => assert!(!found, "untrusted text's value looks {other:?}: {text:?}"),
    }
    if found && user.incomplete().is_none() {
        assert!(
            matches!(user.provenance_of(&arg), ArgProvenance::User(_)),
            "the user's value is not the user's: {text:?}"
        );
    }
    for p in [&untrusted, &user] {
        p.values_of(&arg, &mut |e| {
            let _ = p.explain("x", &ArgProvenance::Untrusted(e));
        });
    }
});
