//! The compiled monitors that augur-gate's tests, doc example and bench read
//! (`crates/gate/tests/fixtures/`; the gate links no compiler), and the built-in monitors the
//! binary gates with (`crates/gate/builtin/`: the gateway's and the Claude Code hook's,
//! `augur_gate::builtin`), are exactly what this compiler writes today: each is compiled here
//! and compared with the committed file byte for byte, so a change of the compiler, of the
//! file format or of a built-in classifier cannot leave the gate with a stale file.
//! `AUGUR_BLESS=1 cargo test -p augur-monitor --test monitor gate_fixtures` rewrites them.

use augur_gate::dtr::{DataExposure, Reversibility, SafetyState, ToolEscalation};
use augur_gate::monitor::Mapping;
use augur_monitor::compile::{compile_dtmcs, CompileOptions, Source};
use augur_monitor::eval::learn_dtr;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn compare_or_bless(name: &str, compiled: &augur_gate::Monitor) {
    compare_or_bless_at("crates/gate/tests/fixtures", name, compiled);
}

fn compare_or_bless_at(dir: &str, name: &str, compiled: &augur_gate::Monitor) {
    let path = root().join(dir).join(name);
    let text = compiled.to_json();
    if std::env::var_os("AUGUR_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (AUGUR_BLESS=1 writes it)", path.display()));
    assert!(
        committed == text,
        "{} differs from what the compiler writes today (AUGUR_BLESS=1 rewrites it)",
        path.display()
    );
}

/// The paper's 5-state risk-level chain, `P=? [ F<=5 "violated" ]` (augur-gate's doc example).
#[test]
fn the_risk_level_fixture_is_todays_compile() {
    let (dtmc, _) =
        augur_formats::read_model(&root().join("models/safetydrift.tra"), &Default::default())
            .unwrap();
    let m = compile_dtmcs(
        vec![Source::new(dtmc, "safetydrift.tra")],
        &CompileOptions::new("P=? [ F<=5 \"violated\" ]"),
    )
    .unwrap();
    compare_or_bless("safetydrift-risk.json", &m);
}

/// The 60-state SafetyDrift (d, t, r) monitor learned from models/safetydrift/traces.jsonl,
/// H = 20 (augur-gate's bench, the numbers of issue 10).
#[test]
fn the_sixty_state_fixture_is_todays_compile() {
    let text = std::fs::read_to_string(root().join("models/safetydrift/traces.jsonl")).unwrap();
    let trajs: Vec<Vec<SafetyState>> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    SafetyState::new(
                        DataExposure::parse(s["d"].as_str().unwrap()).unwrap(),
                        ToolEscalation::parse(s["t"].as_str().unwrap()).unwrap(),
                        Reversibility::parse(s["r"].as_str().unwrap()).unwrap(),
                    )
                })
                .collect()
        })
        .collect();
    let refs: Vec<&[SafetyState]> = trajs.iter().map(Vec::as_slice).collect();
    let (dtmc, counts) = learn_dtr(&refs, 0.1).unwrap();
    let mut src = Source::new(dtmc, "safetydrift 60-state");
    src.counts = Some(counts);
    let mut o = CompileOptions::new("P=? [ F<=5 \"VIOLATED\" ]");
    o.horizon = Some(20);
    o.mapping = Some(Mapping::Dtr);
    let m = compile_dtmcs(vec![src], &o).unwrap();
    compare_or_bless("safetydrift-60.json", &m);
}

/// A built-in monitor: the risk-level chain with the provenance section and a built-in
/// classifier (`augur_gate::builtin`).
fn builtin(classifier: augur_gate::Classifier) -> augur_gate::Monitor {
    let (dtmc, _) =
        augur_formats::read_model(&root().join("models/safetydrift.tra"), &Default::default())
            .unwrap();
    let mut o = CompileOptions::new("P=? [ F<=5 \"violated\" ]");
    o.mapping = Some(Mapping::RiskLevel);
    o.provenance = true;
    o.classifier = Some(classifier);
    compile_dtmcs(vec![Source::new(dtmc, "safetydrift.tra")], &o).unwrap()
}

/// The gateway's built-in monitor: the default classifier.
#[test]
fn the_built_in_gateway_monitor_is_todays_compile() {
    let m = builtin(augur_gate::Classifier::default_rules());
    assert!(m.tracks_provenance());
    compare_or_bless_at("crates/gate/builtin", "gateway.json", &m);
}

/// The Claude Code hook's built-in monitor: the Claude Code rules.
#[test]
fn the_built_in_claude_code_monitor_is_todays_compile() {
    let c = augur_gate::Classifier::parse(
        augur_gate::builtin::CLAUDE_CODE_RULES,
        "models/claude-code/classifier.toml",
    )
    .unwrap();
    let m = builtin(c);
    compare_or_bless_at("crates/gate/builtin", "claude-code.json", &m);
}
