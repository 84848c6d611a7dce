//! Seeded in-process mutation test (issue 15): thousands of mutants of every example file go
//! through the readers and parsers (through `augur-check`'s loader, as every front-end reads
//! them). For each mutant: no panic, and every rejection whose cause is in the input is a
//! located error (file, line, column) whose rendering carries no Rust Debug text. Limits hit
//! (a mutant that declares a huge model, a slow property) are stops, not input errors, and
//! are exempt; so are numerical failures (exit code 2, not the input's fault).
//!
//! The mutants are deterministic (a fixed seed per file): a failure prints the seed, the
//! mutant number and the mutant itself.

use augur_check::{
    CheckError, CheckOptions, CheckSession, Constants, Format, Limits, LoadOptions, Model,
    Properties,
};
use std::path::Path;
use std::time::Duration;

/// Mutants per example file (debug build: the whole test stays well under a minute).
const MUTANTS: usize = 1500;

/// A small, seeded xorshift generator (no dependency, stable across platforms).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that tend to find edge cases: huge and special numbers, brackets, quotes,
/// separators and keywords of every format.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "0.5",
    "1e308",
    "-1e308",
    "1e-320",
    "NaN",
    "inf",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "9223372036854775807",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "'",
    ",",
    ":",
    ";",
    "=",
    "->",
    "+",
    "&",
    "|",
    "!",
    "/",
    "*",
    "..",
    " ",
    "\n",
    "\t",
    "\u{feff}",
    "é",
    "init",
    "const",
    "formula",
    "label",
    "module",
    "endmodule",
    "rewards",
    "endrewards",
    "P=?",
    "R=?",
    "F",
    "G",
    "U",
    "X",
    "C<=",
    "I=",
    "S=?",
    "true",
    "false",
    "dtmc",
    "state",
    "action",
    "@nr_states",
    "@model",
    "\"states\"",
    "null",
    "#",
    "//",
];

/// One mutant of `text`: a few random edits (delete a range, insert a token, replace a
/// byte, duplicate or drop a line), kept valid UTF-8.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(3) {
        let at = boundary(&s, rng.below(s.len() + 1));
        match rng.below(6) {
            0 => {
                let end = boundary(&s, (at + 1 + rng.below(16)).min(s.len()));
                s.replace_range(at..end, "");
            }
            1 | 2 => s.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
            3 => {
                let end = boundary(&s, (at + 1).min(s.len()));
                let tok = TOKENS[rng.below(TOKENS.len())];
                s.replace_range(at..end, tok);
            }
            4 => {
                // Duplicate the line at `at`.
                let start = s[..at].rfind('\n').map_or(0, |i| i + 1);
                let end = s[at..].find('\n').map_or(s.len(), |i| at + i + 1);
                let line = s[start..end].to_string();
                s.insert_str(end, &line);
            }
            _ => {
                // A digit changed (numbers are what readers check most).
                if let Some(i) = s[at..].find(|c: char| c.is_ascii_digit()) {
                    let d = (b'0' + rng.below(10) as u8) as char;
                    s.replace_range(at + i..at + i + 1, &d.to_string());
                }
            }
        }
    }
    s
}

fn boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn limits() -> Limits {
    Limits::default()
        .with_max_states(5_000)
        .with_timeout(Duration::from_secs(2))
}

fn load_options() -> LoadOptions {
    LoadOptions {
        limits: limits(),
        ..LoadOptions::default()
    }
}

/// What went wrong with one mutant.
fn verdict(e: &CheckError) -> Option<String> {
    if e.stop().is_some() || e.is_internal() {
        return None; // a limit hit or a numerical failure: not an input error
    }
    let text = e.diagnostic().to_string();
    for bad in DEBUG_TEXT {
        if text.contains(bad) {
            return Some(format!("Debug text `{bad}` in the message:\n{text}"));
        }
    }
    if e.location().is_none() {
        return Some(format!("an input error without a location:\n{text}"));
    }
    None
}

/// Runs `parse` on `MUTANTS` mutants of `file`, collecting the findings. The harness must
/// exercise the error paths: a good share of the mutants is rejected with a located error.
fn mutants(file: &str, findings: &mut Vec<String>, parse: &dyn Fn(&str) -> Result<(), CheckError>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    // The original is accepted.
    if let Err(e) = parse(&text) {
        findings.push(format!(
            "{file}: the unmutated file is rejected: {}",
            e.diagnostic()
        ));
    }
    let seed = file.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let mut rng = Rng(seed | 1);
    let mut located = 0;
    for i in 0..MUTANTS {
        let m = mutate(&text, &mut rng);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parse(&m)));
        let finding = match r {
            Err(_) => Some("a panic".to_string()),
            Ok(Err(e)) => {
                let v = verdict(&e);
                located += usize::from(v.is_none() && e.location().is_some());
                v
            }
            Ok(Ok(())) => None,
        };
        if let Some(f) = finding {
            findings.push(format!(
                "{file}, mutant {i} (seed {seed:#x}): {f}\n--- mutant:\n{m}\n---"
            ));
        }
    }
    eprintln!("{file}: {located} of {MUTANTS} mutants rejected with a located error");
    if located < MUTANTS / 10 {
        findings.push(format!(
            "{file}: only {located} of {MUTANTS} mutants rejected with a located error"
        ));
    }
}

fn model<'a>(
    name: &'a str,
    format: Format,
    constants: &'a str,
) -> impl Fn(&str) -> Result<(), CheckError> + 'a {
    move |text| {
        let mut opts = load_options();
        if !constants.is_empty() {
            opts.constants = Constants::parse(constants).unwrap();
        }
        Model::from_text(name, text, format, &opts).map(|_| ())
    }
}

/// A properties file: parsed, compiled against `model` and checked.
fn properties(name: &str, model: Model) -> impl Fn(&str) -> Result<(), CheckError> + '_ {
    properties_with(name, model, augur_check::Method::default())
}

/// [`properties`] with a solving method (`--method exact` computes constants in rationals).
fn properties_with(
    name: &str,
    model: Model,
    method: augur_check::Method,
) -> impl Fn(&str) -> Result<(), CheckError> + '_ {
    move |text| {
        let props = Properties::parse_file(name, text)?;
        let compiled = props.compile(&model, &Constants::default())?;
        let options = CheckOptions {
            limits: limits(),
            method,
            ..CheckOptions::default()
        };
        let mut session = CheckSession::new(&model, options);
        for r in session.check_all(&compiled) {
            r?;
        }
        Ok(())
    }
}

fn load(file: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    Model::load(&path, &load_options()).unwrap()
}

#[test]
fn mutants_of_every_example_file_fail_cleanly() {
    let mut findings = Vec::new();
    for (f, c) in [
        ("models/sync3.pm", "p=0.2"),
        ("models/ring3.pm", ""),
        ("models/merge.pm", ""),
    ] {
        mutants(f, &mut findings, &model(f, Format::Prism, c));
    }
    for (f, format) in [
        ("models/gambler.drn", Format::Drn),
        ("models/die.json", Format::Json),
        ("models/safetydrift.tra", Format::Tra),
    ] {
        mutants(f, &mut findings, &model(f, format, ""));
    }
    mutants(
        "models/gambler.props",
        &mut findings,
        &properties("gambler.props", load("models/gambler.drn")),
    );
    mutants(
        "models/die.props",
        &mut findings,
        &properties("die.props", load("models/die.json")),
    );
    mutants(
        "models/sync3.props",
        &mut findings,
        &properties("sync3.props", {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/sync3.pm");
            let mut opts = load_options();
            opts.constants = Constants::parse("p=0.2").unwrap();
            Model::load(&path, &opts).unwrap()
        }),
    );
    let total = findings.len();
    findings.truncate(8);
    assert!(
        total == 0,
        "{total} findings; the first:\n\n{}",
        findings.join("\n\n")
    );
}

/// Issue 22's classes as seeds: a model whose synchronised commands multiply identical
/// branches, and properties with nested bounded LTL, references used twice at every level
/// and constant arithmetic (checked by the default method and in exact rationals, where a
/// mutant's `pow` may pass the size budget).
#[test]
fn mutants_of_the_hostile_seeds_fail_cleanly() {
    let mut findings = Vec::new();
    let model_file = "tests/fixtures/mutation/sync_branches.pm";
    mutants(
        model_file,
        &mut findings,
        &model(model_file, Format::Prism, ""),
    );
    for method in [augur_check::Method::default(), augur_check::Method::Exact] {
        mutants(
            "tests/fixtures/mutation/nested.props",
            &mut findings,
            &properties_with("nested.props", load(model_file), method),
        );
    }
    let total = findings.len();
    findings.truncate(8);
    assert!(
        total == 0,
        "{total} findings; the first:\n\n{}",
        findings.join("\n\n")
    );
}

/// Rust Debug output and grammar rule names that must never reach a user.
const DEBUG_TEXT: &[&str] = &["Some(", "Prob {", "Bool(", "kw_", "Int(", "Double("];

#[test]
fn rendered_error_snapshots_carry_no_debug_text() {
    // Every snapshot of a user-facing message (one per reader and error family).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/snapshots");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "snap") {
            let text = std::fs::read_to_string(&path).unwrap();
            // The snapshot's body, after insta's header.
            let body = text.splitn(3, "---").nth(2).unwrap_or(&text);
            for bad in DEBUG_TEXT {
                assert!(
                    !body.contains(bad),
                    "{}: `{bad}` in\n{body}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked > 10,
        "only {checked} snapshots found in {}",
        dir.display()
    );
}

/// What is wrong with a monitor-side input that was accepted (issue 22, class 5): a policy or
/// monitor file that would let an attack through must be refused, not loaded.
fn accepted_but_unsafe_policy(p: &augur_gate::Policy) -> Option<String> {
    let all = std::iter::once(&p.base).chain(p.categories.iter().map(|(_, r)| r));
    for r in all {
        if r.thresholds.is_empty() {
            return Some("a policy without thresholds was accepted".into());
        }
        for w in r.thresholds.windows(2) {
            if w[1].at >= w[0].at || w[1].verdict > w[0].verdict {
                return Some(format!(
                    "thresholds not descending with non-increasing verdicts were accepted: {:?}",
                    r.thresholds
                ));
            }
        }
        for a in &r.always_allow {
            let name = format!("{}_and_send_email", a.as_str().replace(['^', '$', '*'], ""));
            if a.matches(&name) {
                return Some(format!("`always_allow` `{}` matches `{name}`", a.as_str()));
            }
        }
    }
    None
}

fn accepted_but_unsafe_monitor(m: &augur_gate::Monitor) -> Option<String> {
    for t in &m.tables {
        for k in 0..t.value.len() {
            if !(t.lower[k] <= t.value[k] && t.value[k] <= t.upper[k]) {
                return Some(format!("value {k} outside its bounds was accepted"));
            }
        }
    }
    let c = m.classifier.as_ref()?;
    let recorded = augur_gate::monitor::EmbeddedFile {
        sha256: String::new(),
        ..c.clone()
    };
    // A classifier whose text no longer matches its hash must not load: re-serialise the
    // accepted file with the text kept and the hash blanked, and expect a refusal.
    let mut j: serde_json::Value = serde_json::from_str(&m.to_json()).ok()?;
    j["classifier"] = serde_json::to_value(&recorded).ok()?;
    augur_gate::Monitor::from_json(&j.to_string(), "m.json")
        .is_ok()
        .then(|| "a monitor whose classifier hash does not match was accepted".to_string())
}

/// Mutants of the monitor's inputs (issue 22): the shipped policy and classifier, and a
/// compiled monitor file. Every rejection is a located error without Debug text; every
/// acceptance is safe (see `accepted_but_unsafe_*`).
#[test]
fn mutants_of_the_monitor_files_fail_cleanly_or_load_safely() {
    type Check = dyn Fn(&str) -> Result<Option<String>, augur_gate::GateError>;
    let policy: &Check =
        &|t| augur_gate::Policy::parse(t, "policy.toml").map(|p| accepted_but_unsafe_policy(&p));
    let classifier: &Check = &|t| {
        augur_gate::Classifier::parse(t, "classifier.toml").map(|c| {
            // Hostile calls through an accepted classifier: no panic.
            for (tool, args) in [
                (
                    "ｓｅｎｄ\u{200B}_email",
                    serde_json::json!({"x@[::1]": ["é@bücher.de"]}),
                ),
                (
                    "HTTPPost",
                    serde_json::json!({"url": "https://a.b@evil.com/?q=1"}),
                ),
                ("", serde_json::json!(null)),
            ] {
                let _ = c.classify(tool, &args);
            }
            None
        })
    };
    let monitor: &Check =
        &|t| augur_gate::Monitor::from_json(t, "m.json").map(|m| accepted_but_unsafe_monitor(&m));
    let mut findings = Vec::new();
    for (file, check) in [
        ("models/monitor/policy.toml", policy),
        ("models/classifier.toml", classifier),
        ("tests/fixtures/errors/monitor/risk.json", monitor),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        match check(&text) {
            Ok(None) => {}
            Ok(Some(f)) => findings.push(format!("{file}: the original: {f}")),
            Err(e) => findings.push(format!("{file}: the original is rejected: {}", e.render())),
        }
        let seed = file.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        let mut rng = Rng(seed | 1);
        let n = if file.ends_with(".json") {
            300
        } else {
            MUTANTS / 3
        };
        let mut located = 0;
        for i in 0..n {
            let m = mutate(&text, &mut rng);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&m)));
            let finding = match r {
                Err(_) => Some("a panic".to_string()),
                Ok(Ok(f)) => f,
                Ok(Err(e)) => {
                    let d = e.diagnostic();
                    let text = d.to_string();
                    if let Some(bad) = DEBUG_TEXT.iter().find(|b| text.contains(*b)) {
                        Some(format!("Debug text `{bad}` in the message:\n{text}"))
                    } else if d.location.is_none() {
                        Some(format!("an input error without a location:\n{text}"))
                    } else {
                        located += 1;
                        None
                    }
                }
            };
            if let Some(f) = finding {
                findings.push(format!(
                    "{file}, mutant {i} (seed {seed:#x}): {f}\n--- mutant:\n{m}\n---"
                ));
            }
        }
        eprintln!("{file}: {located} of {n} mutants rejected with a located error");
    }
    let total = findings.len();
    findings.truncate(4);
    assert!(
        total == 0,
        "{total} findings; the first:\n\n{}",
        findings.join("\n\n")
    );
}

/// Mutants of a state journal (issue 22, class 3: sessions survive restarts). The journal is
/// written by a live store (a VIOLATED session, a session at MILD, an ended id, ids burned past
/// a small filter's rollover of an exact list). The original restores every session in its
/// state, keeps VIOLATED absorbing and the burned ids refused; every mutant is refused with a
/// located error (file:line) without Debug text, or restores sessions that gate without a
/// panic and never leave VIOLATED.
#[test]
fn mutants_of_a_state_journal_fail_cleanly_or_restore_safely() {
    use augur_gate::dtr::RiskLevel;
    use augur_gate::session::{Action, ToolCall};
    use augur_gate::store::SessionStore;
    use std::sync::Arc;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let monitor = Arc::new(
        augur_gate::Monitor::load(&root.join("tests/fixtures/errors/monitor/risk.json")).unwrap(),
    );
    let policy = Arc::new(augur_gate::Policy::default());
    let store = || {
        SessionStore::new(Arc::clone(&monitor), Arc::clone(&policy), None, 4).with_burned_bits(256)
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.jsonl");
    let calls: Vec<(&str, serde_json::Value)> = vec![
        ("get_iban", serde_json::json!({})),
        ("execute_python", serde_json::json!({"code": "1+1"})),
        (
            "get_webpage",
            serde_json::json!({"url": "www.informations.com"}),
        ),
        (
            "send_money",
            serde_json::json!({"recipient": "XX", "amount": 1}),
        ),
    ];
    let tool = |i: usize| Action::Tool(ToolCall::new(calls[i].0, &calls[i].1));
    let mut s = store();
    s.restore(&path, 1_000).unwrap();
    for i in 0..4 {
        s.get("v", None, 1_000).unwrap().gate(&tool(i));
        s.commit().unwrap();
    }
    s.get("v", None, 1_000).unwrap().record(&tool(3), true);
    s.commit().unwrap();
    s.get("m", None, 1_000).unwrap().gate(&tool(0));
    s.commit().unwrap();
    for i in 0..40 {
        let id = format!("gone{i}");
        s.get(&id, None, 1_000).unwrap().gate(&tool(0));
        s.end(&id);
        s.commit().unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    drop(s);

    // The original.
    let mut s = store();
    let r = s.restore(&path, 1_000).unwrap();
    assert_eq!((r.open, r.burned), (2, 40), "{r:?}");
    let v = s.get("v", None, 1_000).unwrap();
    assert_eq!(v.dtr().risk_level(), RiskLevel::Violated);
    v.gate(&tool(0));
    assert!(!v.record(&tool(0), false) || v.dtr().risk_level() == RiskLevel::Violated);
    assert_eq!(v.dtr().risk_level(), RiskLevel::Violated);
    for i in 0..40 {
        assert!(
            s.get(&format!("gone{i}"), None, 1_000).is_err(),
            "gone{i} reopened"
        );
    }

    let mut rng = Rng(0x6a6f_7572_6e61_6c01);
    let mut findings = Vec::new();
    let mut located = 0;
    let n = 300;
    for i in 0..n {
        let m = mutate(&text, &mut rng);
        std::fs::write(&path, &m).unwrap();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut s = store();
            match s.restore(&path, 1_000) {
                Err(e) => Err(e),
                Ok(_) => {
                    let ids: Vec<String> = s.sessions().map(|(id, _)| id.to_string()).collect();
                    for id in ids {
                        let Ok(sess) = s.get(&id, None, 1_000) else {
                            continue;
                        };
                        for k in 0..4 {
                            let was = sess.dtr().risk_level() == RiskLevel::Violated;
                            sess.gate(&tool(k));
                            sess.record(&tool(k), k % 2 == 0);
                            let d = sess.gate(&tool(k));
                            let _ = sess.report(&d, &id);
                            if was && sess.dtr().risk_level() != RiskLevel::Violated {
                                return Ok(Some(format!("session {id} left VIOLATED")));
                            }
                        }
                    }
                    Ok(None)
                }
            }
        }));
        let finding = match r {
            Err(_) => Some("a panic".to_string()),
            Ok(Ok(f)) => f,
            Ok(Err(e)) => {
                let d = e.diagnostic();
                let shown = d.to_string();
                if let Some(bad) = DEBUG_TEXT.iter().find(|b| shown.contains(*b)) {
                    Some(format!("Debug text `{bad}` in the message:\n{shown}"))
                } else if d.location.as_ref().is_none_or(|l| l.line == 0) {
                    Some(format!("an error without a line:\n{shown}"))
                } else {
                    located += 1;
                    None
                }
            }
        };
        if let Some(f) = finding {
            findings.push(format!("journal mutant {i}: {f}\n--- mutant:\n{m}\n---"));
        }
    }
    eprintln!("state journal: {located} of {n} mutants rejected with a located error");
    assert!(located > n / 4, "only {located} of {n} mutants rejected");
    let total = findings.len();
    findings.truncate(3);
    assert!(
        total == 0,
        "{total} findings; the first:\n\n{}",
        findings.join("\n\n")
    );
}
