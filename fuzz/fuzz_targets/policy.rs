//! Monitor policies (TOML). Rejected: a located error without Debug text. Accepted (issue 22,
//! class 5): non-empty thresholds, descending, verdicts never milder as P grows, and
//! `always_allow` patterns that match whole names only.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match augur_gate::Policy::parse(text, "policy.toml") {
        Err(e) => augur_fuzz::assert_no_debug_text(&e.to_string(), text),
        Ok(p) => {
            for r in std::iter::once(&p.base).chain(p.categories.iter().map(|(_, r)| r)) {
                assert!(!r.thresholds.is_empty(), "an empty threshold list was accepted");
                for w in r.thresholds.windows(2) {
                    assert!(w[1].at < w[0].at, "thresholds not descending: {:?}", r.thresholds);
                    assert!(w[1].verdict <= w[0].verdict, "verdicts milder as P grows: {:?}", r.thresholds);
                }
                for a in &r.always_allow {
                    let name = format!("{}_and_send_email", a.as_str().replace(['^', '$', '*'], ""));
                    assert!(!a.matches(&name), "`{}` allows `{name}`", a.as_str());
                }
            }
        }
    }
});
