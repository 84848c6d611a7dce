//! Augur's built-in rule sets and monitors, compiled into the binary (issue 39).
//!
//! **Monitors.** [`gateway_monitor`] is what `augur mcp --upstream ...` gates with when no
//! `--monitor` is given, and [`claude_code_monitor`] (with [`claude_code_policy`]) what
//! `augur hook claude-code` gates with: both are SafetyDrift's 5-state risk-level chain
//! (`models/safetydrift.tra`, `P=? [ F<=5 "violated" ]`) compiled with the `provenance`
//! section, so that the risk level of a call's `(d, t, r, p)` — rule 14 included: a write,
//! network or irreversible action whose destination or payload was first seen in untrusted
//! text is VIOLATED — picks the chain's state. The gateway's uses the default classifier
//! (`models/classifier.toml`), the hook's the Claude Code rules
//! (`models/claude-code/classifier.toml`). The files are committed artefacts
//! (`crates/gate/builtin/*.json`): augur-monitor's test `gate_fixtures` compiles them again
//! and compares byte for byte (the gate links no compiler), and this module's tests check
//! that the classifier each embeds is the binary's own.
//!
//! **Versions of the built-in rule sets.** Every text the built-in classifiers ever had is
//! listed in [`HISTORY`] with its version (per rule set); a monitor file records the version
//! its classifier came from (`classifier.builtin`), and a file written before that field
//! existed is recognised by its classifier's SHA-256. A monitor whose built-in classifier is
//! older than this binary's is *stale* ([`stale`]): it was compiled before a classifier fix
//! (files compiled before issue 32's fixes still answer `warn` to `http_request`). A
//! classifier the user wrote matches no built-in text and is never stale.

use crate::error::Result;
use crate::monitor::{EmbeddedFile, Monitor};
use crate::policy::Policy;
use serde::{Deserialize, Serialize};

/// The Claude Code rules (`models/claude-code/classifier.toml`; they extend the default set).
pub const CLAUDE_CODE_RULES: &str = include_str!("../../../models/claude-code/classifier.toml");

/// The policy of the Claude Code hook's built-in monitor (`models/claude-code/policy.toml`).
pub const CLAUDE_CODE_POLICY: &str = include_str!("../../../models/claude-code/policy.toml");

/// The built-in gateway monitor's file (see the module documentation).
pub const GATEWAY_MONITOR: &str = include_str!("../builtin/gateway.json");

/// The built-in Claude Code monitor's file (see the module documentation).
pub const CLAUDE_CODE_MONITOR: &str = include_str!("../builtin/claude-code.json");

/// The name of the default rule set in [`HISTORY`] and in monitor files.
pub const DEFAULT: &str = "default";
/// The name of the Claude Code rule set.
pub const CLAUDE_CODE: &str = "claude-code";

/// Every text the built-in rule sets have had: (rule set, version, SHA-256 of the text), the
/// current one last for each set. A change of `models/classifier.toml` or
/// `models/claude-code/classifier.toml` adds a line with the next version (a test fails
/// until it does), so that monitors compiled before it are called stale.
pub const HISTORY: &[(&str, u32, &str)] = &[
    (
        DEFAULT,
        1,
        "f4ccf41ea048042290f47365b76f8b2530225315610052e57df9e3fd830ed3a6",
    ),
    (
        DEFAULT,
        2,
        "16af4c0a3e37e91ddb8b683312ad9c890d3db84cb2552ce4f2f304349ae5bfbd",
    ),
    (
        DEFAULT,
        3,
        "6997cec0fbb53a6b38da36d1b276c5613786ba78fd3cacf8d39c5e258c325e5e",
    ),
    (
        DEFAULT,
        4,
        "30e7caf05038992629be13bb0f552a04db3a91269e28ef489a81f71b437a9fd5",
    ),
    (
        DEFAULT,
        5,
        "6fa184ae994364680653daa702bc982d4157667ac8499690a156624c7afe841f",
    ),
    (
        DEFAULT,
        6,
        "3e8acbd322cf7d58718ba3240f28fa088f565680c9fa1ee14fcacadefaee6543",
    ),
    (
        CLAUDE_CODE,
        1,
        "b1133c53b9702fd4f6292195a9b77db2d91191bae9f75c1f6a52b87d33af8eb8",
    ),
    (
        CLAUDE_CODE,
        2,
        "3995fe33a56a531c63dc20a77ee26fb03f8368dd8b8cdf2a648bffb65a565e2b",
    ),
];

/// A built-in rule set and its version, as a monitor file records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltinClassifier {
    /// `default` or `claude-code`.
    pub name: String,
    /// Its version ([`HISTORY`]).
    pub version: u32,
}

/// The current version of a built-in rule set (`None`: no such set).
pub fn current_version(name: &str) -> Option<u32> {
    HISTORY
        .iter()
        .filter(|(n, _, _)| *n == name)
        .map(|&(_, v, _)| v)
        .max()
}

/// The built-in rule set (and version) whose text hashes to `sha256`, if any.
pub fn recognise(sha256: &str) -> Option<BuiltinClassifier> {
    HISTORY
        .iter()
        .find(|(_, _, h)| h.eq_ignore_ascii_case(sha256.trim()))
        .map(|&(name, version, _)| BuiltinClassifier {
            name: name.to_string(),
            version,
        })
}

/// What to record for a classifier compiled from `text`: its built-in rule set and version
/// when it is the current text of one (a copy of a built-in file counts), else `None`.
pub fn current(text: &str) -> Option<BuiltinClassifier> {
    recognise(&crate::sha256_hex([text.as_bytes()]))
        .filter(|b| current_version(&b.name) == Some(b.version))
}

/// An embedded classifier older than this binary's version of its built-in rule set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stale {
    /// The rule set (`default`, `claude-code`).
    pub name: String,
    /// The version the monitor was compiled with.
    pub version: u32,
    /// This binary's version.
    pub current: u32,
}

impl Stale {
    /// The warning for a monitor read from `file` (one line, with the command that recompiles
    /// it).
    pub fn message(&self, file: &str, monitor: &Monitor) -> String {
        let model = monitor
            .tables
            .iter()
            .find(|t| t.category.is_none())
            .or(monitor.tables.first())
            .map_or("MODEL", |t| t.model.file.as_str());
        let classifier = if self.name == CLAUDE_CODE {
            " --classifier models/claude-code/classifier.toml"
        } else {
            ""
        };
        let states = match monitor.mapping {
            crate::Mapping::Dtr => " --states dtr",
            _ => "",
        };
        format!(
            "{file}: its classifier is Augur's built-in `{}` rules version {}, older than this Augur's version {}: it was compiled before fixes of the classifier and may allow what this Augur blocks; recompile it: augur monitor compile {model} --prop '{}'{states}{classifier} -o {file}",
            self.name, self.version, self.current, monitor.property
        )
    }
}

/// Whether an embedded classifier is an older version of a built-in rule set (see the module
/// documentation): recognised by its hash (files of every age), else by the version it
/// records.
pub fn stale(f: &EmbeddedFile) -> Option<Stale> {
    let b = recognise(&f.sha256).or_else(|| f.builtin.clone())?;
    let current = current_version(&b.name)?;
    (b.version < current).then_some(Stale {
        name: b.name,
        version: b.version,
        current,
    })
}

/// The built-in gateway monitor (see the module documentation).
pub fn gateway_monitor() -> Result<Monitor> {
    Monitor::from_json(GATEWAY_MONITOR, "<built-in gateway monitor>")
}

/// The built-in monitor of `augur hook claude-code` (see the module documentation).
pub fn claude_code_monitor() -> Result<Monitor> {
    Monitor::from_json(CLAUDE_CODE_MONITOR, "<built-in Claude Code monitor>")
}

/// The policy of the built-in Claude Code monitor: only a VIOLATED state blocks, `P ≥ 0.9`
/// warns, the reason goes back to the agent.
pub fn claude_code_policy() -> Result<Policy> {
    Policy::parse(CLAUDE_CODE_POLICY, "<built-in Claude Code policy>")
}

/// The policy of the built-in gateway monitor, when no `--policy` is given: the Claude Code
/// monitor's ([`claude_code_policy`]), since both are the same risk-level chain. Its graded
/// probabilities are SafetyDrift's smoothed guesses (MILD 0.45, ELEVATED and CRITICAL 0.30):
/// with [`Policy::default`]'s warning at 0.3, every call after a session's first file write
/// warned (151 of 219 calls of the recorded coding session, issue 42), so only a VIOLATED
/// state blocks and `P ≥ 0.9` warns; provenance's own pause (a destination no text held,
/// after untrusted text) is the rules', not a threshold's, and stays.
pub fn gateway_policy() -> Result<Policy> {
    Policy::parse(CLAUDE_CODE_POLICY, "<built-in gateway policy>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classifier::DEFAULT_RULES;

    /// A change of a built-in rule set must add its new text to [`HISTORY`] with the next
    /// version, or monitors compiled before the change would not be called stale.
    #[test]
    fn the_current_rule_sets_are_the_latest_versions_in_the_history() {
        for (name, text, file) in [
            (DEFAULT, DEFAULT_RULES, "models/classifier.toml"),
            (
                CLAUDE_CODE,
                CLAUDE_CODE_RULES,
                "models/claude-code/classifier.toml",
            ),
        ] {
            let sha = crate::sha256_hex([text.as_bytes()]);
            let b = recognise(&sha).unwrap_or_else(|| {
                panic!("{file} changed (sha256 {sha}): add it to builtin::HISTORY as `{name}` version {}", current_version(name).unwrap_or(0) + 1)
            });
            assert_eq!(b.name, name);
            assert_eq!(Some(b.version), current_version(name), "{file}");
            assert_eq!(current(text), Some(b));
        }
        // No text twice, versions counting up from 1 per set.
        for name in [DEFAULT, CLAUDE_CODE] {
            let versions: Vec<u32> = HISTORY
                .iter()
                .filter(|(n, _, _)| *n == name)
                .map(|&(_, v, _)| v)
                .collect();
            assert_eq!(versions, (1..=versions.len() as u32).collect::<Vec<_>>());
        }
        let mut hashes: Vec<&str> = HISTORY.iter().map(|&(_, _, h)| h).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), HISTORY.len());
    }

    /// The built-in monitors load, track provenance, and embed exactly the binary's own
    /// classifiers (the committed files agree with the built-in rules); the Claude Code
    /// policy fits its monitor.
    #[test]
    fn the_built_in_monitors_embed_the_built_in_classifiers() {
        for (m, text, name) in [
            (gateway_monitor().unwrap(), DEFAULT_RULES, DEFAULT),
            (
                claude_code_monitor().unwrap(),
                CLAUDE_CODE_RULES,
                CLAUDE_CODE,
            ),
        ] {
            assert!(m.tracks_provenance());
            let c = m.classifier.as_ref().unwrap();
            assert_eq!(c.text, text, "{name}");
            assert_eq!(
                c.builtin,
                Some(BuiltinClassifier {
                    name: name.into(),
                    version: current_version(name).unwrap()
                })
            );
            assert_eq!(m.stale_classifier(), None);
        }
        let m = std::sync::Arc::new(claude_code_monitor().unwrap());
        let p = std::sync::Arc::new(claude_code_policy().unwrap());
        crate::Session::new(&m, &p, None).unwrap();
    }

    /// An older built-in text is stale (recognised by its hash, whatever the file records);
    /// a text nobody shipped is the user's and never stale.
    #[test]
    fn older_built_in_classifiers_are_stale_and_the_users_never() {
        let f = |sha: &str, builtin: Option<BuiltinClassifier>| EmbeddedFile {
            file: "c.toml".into(),
            text: String::new(),
            sha256: sha.into(),
            builtin,
        };
        let old = HISTORY[0].2;
        let s = stale(&f(old, None)).unwrap();
        assert_eq!((s.name.as_str(), s.version), (DEFAULT, 1));
        assert_eq!(s.current, current_version(DEFAULT).unwrap());
        // A recorded version that is older.
        let rec = BuiltinClassifier {
            name: DEFAULT.into(),
            version: 1,
        };
        assert!(stale(&f("00", Some(rec))).is_some());
        // The user's own text.
        assert_eq!(stale(&f("00", None)), None);
        let sha = crate::sha256_hex([DEFAULT_RULES.as_bytes()]);
        assert_eq!(stale(&f(&sha, None)), None);
    }
}
