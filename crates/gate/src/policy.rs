//! Policies: what the monitor does with a probability.
//!
//! ```toml
//! version = 1
//! horizon = 5            # optional: use P(F<=5 target) from the horizon curve instead of
//!                        # the compiled property's value (F properties only)
//! mode = "reflect"       # stop (default) | reflect | user_inspection
//! unobserved = "warn"    # optional: at least this verdict in a state never observed in training
//! ask_at = 0.25          # optional: the chain's probability from which a value from content
//!                        # the user delegated is asked (pause); below it, warn (issue 41)
//! always_block = ["delete production database", "wipe"]   # tool name patterns
//! always_allow = ["get current day"]
//! trusted_tools = ["list contacts"]  # optional: tools whose results are the user's own data
//! thresholds = [         # descending; the first with P >= at decides; below all: allow
//!   { at = 0.90, verdict = "block", message = "critical risk" },
//!   { at = 0.60, verdict = "pause" },
//!   { at = 0.30, verdict = "warn" },
//! ]
//! [category.banking]     # per-category overrides (any of the keys above)
//! thresholds = [{ at = 0.5, verdict = "pause" }]
//! ```
//!
//! `trusted_tools` (tool name patterns, each matched against the **whole** folded tool name:
//! `get contacts` trusts `get_contacts` and `GetContacts`, never `get_contacts_from_url` or
//! `mcp_get_contacts`) lists the tools whose results a session observes as *trusted* text, like
//! the user's request (issue 25, [`crate::provenance`]): a value first read from them counts as
//! the user's. Every other tool's result is untrusted. The default, [`DEFAULT_TRUSTED_TOOLS`],
//! holds only tools that read the user's own data and take no argument naming another party
//! (the user's contact list, the user's own profile); `trusted_tools = []` trusts no tool.
//! Trusting a tool is a judgement about who can write what it returns: an address book the
//! user keeps is written by the user; e-mails, files, web pages, calendars, messages, contact
//! forms and *anyone's* profile are written by others too, and a tool whose output third
//! parties write must never be trusted. Even a trusted tool vouches for nothing its own call
//! carried (a lookup that echoes the address it was asked for) nor for a value first seen in
//! untrusted text ([`crate::provenance`]).
//!
//! Verdicts, least to most severe: `allow` (also spelt `log`), `warn`, `pause`, `block`.

use crate::error::{GateError, Result};
use crate::words::NamePattern;
use augur_source::number::exact;
use augur_source::Span;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// The default `trusted_tools`: tools that read the user's own data and take no argument
/// naming another party (see the module documentation), matched as whole names.
pub const DEFAULT_TRUSTED_TOOLS: &[&str] = &[
    "list contacts",
    "get contacts",
    "list all contacts",
    "get all contacts",
    "get address book",
    "list address book",
    "get my profile",
    "get my contact info",
    "get my account info",
    // The user's own account number: no argument, nothing a third party writes (issue 41:
    // the user's identity from tools trusted by whole name).
    "get iban",
    "get my iban",
    "get account number",
    "get my account number",
];

/// The default trusted-tool patterns, compiled (whole names).
pub fn default_trusted_tools() -> Vec<NamePattern> {
    DEFAULT_TRUSTED_TOOLS
        .iter()
        .filter_map(|t| NamePattern::new(t).ok())
        .map(NamePattern::whole)
        .collect()
}

/// What the monitor tells the agent loop to do with an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Run it (and log it).
    Allow,
    /// Run it, with a warning.
    Warn,
    /// Hold it until a person approves.
    Pause,
    /// Do not run it.
    Block,
}

impl Verdict {
    /// All verdicts, least severe first.
    pub const ALL: [Verdict; 4] = [
        Verdict::Allow,
        Verdict::Warn,
        Verdict::Pause,
        Verdict::Block,
    ];

    /// `allow`, `warn`, `pause`, `block`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Warn => "warn",
            Verdict::Pause => "pause",
            Verdict::Block => "block",
        }
    }

    /// Parse a verdict name (`log` is `allow`), case-insensitive.
    pub fn parse(s: &str) -> Option<Verdict> {
        match s.trim().to_ascii_lowercase().as_str() {
            "allow" | "log" | "log_only" => Some(Verdict::Allow),
            "warn" => Some(Verdict::Warn),
            "pause" => Some(Verdict::Pause),
            "block" => Some(Verdict::Block),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Pro2Guard's enforcement modes, carried on every decision for the agent loop to act on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Stop the action.
    #[default]
    Stop,
    /// Hand the reason back to the agent and ask it to reconsider.
    Reflect,
    /// Ask a person.
    UserInspection,
}

impl Mode {
    /// `stop`, `reflect`, `user_inspection`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Stop => "stop",
            Mode::Reflect => "reflect",
            Mode::UserInspection => "user_inspection",
        }
    }

    fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "stop" => Some(Mode::Stop),
            "reflect" => Some(Mode::Reflect),
            "user_inspection" | "inspect" => Some(Mode::UserInspection),
            _ => None,
        }
    }
}

/// One threshold: `P ≥ at` gives `verdict`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyThreshold {
    /// The probability at which it applies.
    pub at: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// A message for the decision's reason.
    pub message: Option<String>,
}

/// The settings that apply to one session (the policy's, with its category's overrides).
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    /// Descending thresholds.
    pub thresholds: Vec<PolicyThreshold>,
    /// Use P(F≤h target) from the horizon curve at this `h` instead of the property's value.
    pub horizon: Option<u32>,
    /// Where `horizon` is written in the policy file (for errors found when a session opens
    /// on a monitor: a horizon beyond its curve).
    pub horizon_at: Option<augur_source::Location>,
    /// Tools always blocked.
    pub always_block: Vec<NamePattern>,
    /// Tools always allowed.
    pub always_allow: Vec<NamePattern>,
    /// Enforcement mode.
    pub mode: Mode,
    /// The least verdict in a state never observed in training (learned models).
    pub unobserved: Option<Verdict>,
    /// Tools whose results are trusted observations (the user's own data); whole names.
    pub trusted_tools: Vec<NamePattern>,
    /// The chain's probability from which the session asks (pauses) about a value from
    /// content the user delegated, or an unrequested change after an injection (issue 41's
    /// pause tier); below it such a call is warned, not asked. `None` (the default): always
    /// asked. `monitor eval` and `monitor learn` choose it on training runs: the lowest whose
    /// share of benign runs paused is at most 10%.
    pub ask_at: Option<f64>,
}

impl Default for Rules {
    /// 0.9 → block, 0.6 → pause, 0.3 → warn (the thresholds of the `safetydrift` package's
    /// example), mode `stop`, no lists.
    fn default() -> Self {
        let t = |at, verdict| PolicyThreshold {
            at,
            verdict,
            message: None,
        };
        Rules {
            thresholds: vec![
                t(0.9, Verdict::Block),
                t(0.6, Verdict::Pause),
                t(0.3, Verdict::Warn),
            ],
            horizon: None,
            horizon_at: None,
            always_block: Vec::new(),
            always_allow: Vec::new(),
            mode: Mode::Stop,
            unobserved: None,
            trusted_tools: default_trusted_tools(),
            ask_at: None,
        }
    }
}

impl Rules {
    /// The verdict for probability `p` and the index of the threshold that gave it (`None`:
    /// below every threshold).
    pub fn verdict_for(&self, p: f64) -> (Verdict, Option<u16>) {
        for (i, t) in self.thresholds.iter().enumerate() {
            if p >= t.at {
                return (t.verdict, Some(i as u16));
            }
        }
        (Verdict::Allow, None)
    }

    /// Are the results of tool `name` trusted ([`Rules::trusted_tools`], whole folded names)?
    pub fn trusts(&self, name: &str) -> bool {
        self.trusted_tools.iter().any(|p| p.matches(name))
    }

    /// Rules with a single threshold `at` giving `verdict` (for evaluations and sweeps).
    pub fn single(at: f64, verdict: Verdict) -> Rules {
        Rules {
            thresholds: vec![PolicyThreshold {
                at,
                verdict,
                message: None,
            }],
            ..Rules::default()
        }
    }
}

/// A policy: base rules and per-category overrides.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Policy {
    /// The rules for every category without an override.
    pub base: Rules,
    /// Per-category rules (complete: the base with the category's keys replaced).
    pub categories: Vec<(String, Rules)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    horizon: Option<Spanned<i64>>,
    mode: Option<Spanned<String>>,
    unobserved: Option<Spanned<String>>,
    ask_at: Option<Spanned<f64>>,
    always_block: Option<Vec<Spanned<String>>>,
    always_allow: Option<Vec<Spanned<String>>>,
    thresholds: Option<Spanned<Vec<Spanned<RawThreshold>>>>,
    trusted_tools: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    version: Option<Spanned<i64>>,
    horizon: Option<Spanned<i64>>,
    mode: Option<Spanned<String>>,
    unobserved: Option<Spanned<String>>,
    ask_at: Option<Spanned<f64>>,
    always_block: Option<Vec<Spanned<String>>>,
    always_allow: Option<Vec<Spanned<String>>>,
    thresholds: Option<Spanned<Vec<Spanned<RawThreshold>>>>,
    trusted_tools: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    category: BTreeMap<String, Spanned<RawRules>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThreshold {
    at: Spanned<f64>,
    verdict: Spanned<String>,
    message: Option<String>,
}

struct Ctx<'a> {
    file: &'a str,
    src: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: std::ops::Range<usize>, msg: impl Into<String>) -> GateError {
        GateError::at(self.file, self.src, Span::from(span), msg)
    }

    fn patterns(&self, list: &[Spanned<String>]) -> Result<Vec<NamePattern>> {
        list.iter()
            .map(|s| {
                NamePattern::new(s.get_ref())
                    .map_err(|m| self.err(s.span(), format!("tool name pattern: {m}")))
            })
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        into: &mut Rules,
        horizon: &Option<Spanned<i64>>,
        mode: &Option<Spanned<String>>,
        unobserved: &Option<Spanned<String>>,
        ask_at: &Option<Spanned<f64>>,
        always_block: &Option<Vec<Spanned<String>>>,
        always_allow: &Option<Vec<Spanned<String>>>,
        thresholds: &Option<Spanned<Vec<Spanned<RawThreshold>>>>,
        trusted_tools: &Option<Vec<Spanned<String>>>,
    ) -> Result<()> {
        if let Some(l) = trusted_tools {
            // Trust is granted to whole tool names only: `get contacts` must not trust
            // `get_contacts_from_url`, whose result a web page writes.
            into.trusted_tools = self
                .patterns(l)?
                .into_iter()
                .map(NamePattern::whole)
                .collect();
        }
        if let Some(h) = horizon {
            let v = *h.get_ref();
            if !(1..=100_000).contains(&v) {
                return Err(self.err(
                    h.span(),
                    format!("horizon {v}: expected a number of steps from 1 to 100000"),
                ));
            }
            into.horizon = Some(v as u32);
            into.horizon_at = Some(augur_source::Location::at(
                self.file,
                self.src,
                Span::from(h.span()),
            ));
        }
        if let Some(m) = mode {
            into.mode = Mode::parse(m.get_ref()).ok_or_else(|| {
                self.err(
                    m.span(),
                    format!(
                        "unknown mode `{}` (expected stop, reflect or user_inspection)",
                        m.get_ref()
                    ),
                )
            })?;
        }
        if let Some(u) = unobserved {
            into.unobserved = Some(Verdict::parse(u.get_ref()).ok_or_else(|| {
                self.err(
                    u.span(),
                    format!(
                        "unknown verdict `{}` (expected allow, warn, pause or block)",
                        u.get_ref()
                    ),
                )
            })?);
        }
        if let Some(a) = ask_at {
            let v = *a.get_ref();
            if !(0.0..=1.0).contains(&v) {
                return Err(self.err(
                    a.span(),
                    format!("ask_at {} is not a probability in [0, 1]", exact(v)),
                ));
            }
            into.ask_at = Some(v);
        }
        if let Some(l) = always_block {
            into.always_block = self.patterns(l)?;
        }
        if let Some(l) = always_allow {
            // An allow list names whole tools: `get current day` must not allow
            // `get_current_day_and_send_email` (`always_block` keeps word matching: when in
            // doubt, block).
            into.always_allow = self
                .patterns(l)?
                .into_iter()
                .map(NamePattern::whole)
                .collect();
        }
        if let Some(ts) = thresholds {
            if ts.get_ref().is_empty() {
                return Err(self.err(
                    ts.span(),
                    "an empty threshold list allows every action: give at least one threshold",
                ));
            }
            let mut out: Vec<PolicyThreshold> = Vec::new();
            for t in ts.get_ref() {
                let raw = t.get_ref();
                let at = *raw.at.get_ref();
                if !(0.0..=1.0).contains(&at) {
                    return Err(self.err(
                        raw.at.span(),
                        format!("threshold {} is not a probability in [0, 1]", exact(at)),
                    ));
                }
                if let Some(prev) = out.last() {
                    if at >= prev.at {
                        return Err(self.err(
                            raw.at.span(),
                            format!(
                                "thresholds must be in descending order: {} comes after {}",
                                exact(at),
                                exact(prev.at)
                            ),
                        ));
                    }
                }
                let verdict = Verdict::parse(raw.verdict.get_ref()).ok_or_else(|| {
                    self.err(
                        raw.verdict.span(),
                        format!(
                            "unknown verdict `{}` (expected allow, log, warn, pause or block)",
                            raw.verdict.get_ref()
                        ),
                    )
                })?;
                if let Some(prev) = out.last() {
                    if verdict > prev.verdict {
                        return Err(self.err(
                            raw.verdict.span(),
                            format!(
                                "verdicts must not get milder as P grows: `{verdict}` at P >= {} but only `{}` at P >= {}",
                                exact(at),
                                prev.verdict,
                                exact(prev.at)
                            ),
                        ));
                    }
                }
                out.push(PolicyThreshold {
                    at,
                    verdict,
                    message: raw.message.clone(),
                });
            }
            into.thresholds = out;
        }
        Ok(())
    }
}

impl Policy {
    /// Read a policy file.
    pub fn from_file(path: &std::path::Path) -> Result<Policy> {
        let text = crate::read_text(path)?;
        Policy::parse(&text, &path.display().to_string())
    }

    /// Parse a policy; every error is located in `file`.
    pub fn parse(src: &str, file: &str) -> Result<Policy> {
        let raw: RawPolicy = toml::from_str(src).map_err(|e| GateError::toml(file, src, &e))?;
        let cx = Ctx { file, src };
        if let Some(v) = &raw.version {
            if *v.get_ref() != 1 {
                return Err(cx.err(
                    v.span(),
                    format!(
                        "unsupported policy version {} (this Augur reads version 1)",
                        v.get_ref()
                    ),
                ));
            }
        }
        let mut base = Rules::default();
        let r = &raw;
        cx.apply(
            &mut base,
            &r.horizon,
            &r.mode,
            &r.unobserved,
            &r.ask_at,
            &r.always_block,
            &r.always_allow,
            &r.thresholds,
            &r.trusted_tools,
        )?;
        let mut categories = Vec::new();
        for (name, c) in &raw.category {
            let mut rules = base.clone();
            let c = c.get_ref();
            cx.apply(
                &mut rules,
                &c.horizon,
                &c.mode,
                &c.unobserved,
                &c.ask_at,
                &c.always_block,
                &c.always_allow,
                &c.thresholds,
                &c.trusted_tools,
            )?;
            categories.push((name.clone(), rules));
        }
        Ok(Policy { base, categories })
    }

    /// The rules for a category (its override, else the base).
    pub fn rules_for(&self, category: Option<&str>) -> &Rules {
        category
            .and_then(|c| self.categories.iter().find(|(n, _)| n == c))
            .map_or(&self.base, |(_, r)| r)
    }

    /// A policy whose base flags `P ≥ at` with `verdict` and allows below.
    pub fn single(at: f64, verdict: Verdict) -> Policy {
        Policy {
            base: Rules::single(at, verdict),
            categories: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_policy() {
        let src = r#"
version = 1
horizon = 3
mode = "reflect"
unobserved = "warn"
always_block = ["wipe all data"]
always_allow = ["get current day"]
thresholds = [{ at = 0.8, verdict = "block", message = "too risky" }, { at = 0.2, verdict = "log" }]
[category.banking]
thresholds = [{ at = 0.5, verdict = "pause" }]
mode = "user_inspection"
ask_at = 0.5
"#;
        let p = Policy::parse(src, "p.toml").unwrap();
        assert_eq!(p.base.ask_at, None);
        assert_eq!(p.rules_for(Some("banking")).ask_at, Some(0.5));
        let e = Policy::parse("ask_at = 1.5\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("ask_at 1.5 is not a probability"), "{e}");
        assert_eq!(p.base.horizon, Some(3));
        assert_eq!(p.base.mode, Mode::Reflect);
        assert_eq!(p.base.unobserved, Some(Verdict::Warn));
        assert_eq!(p.base.verdict_for(0.85), (Verdict::Block, Some(0)));
        assert_eq!(p.base.verdict_for(0.8), (Verdict::Block, Some(0)));
        assert_eq!(p.base.verdict_for(0.5), (Verdict::Allow, Some(1)));
        assert_eq!(p.base.verdict_for(0.1), (Verdict::Allow, None));
        let b = p.rules_for(Some("banking"));
        assert_eq!(b.verdict_for(0.6), (Verdict::Pause, Some(0)));
        assert_eq!(b.mode, Mode::UserInspection);
        assert_eq!(b.horizon, Some(3)); // inherited
        assert!(b.always_block[0].matches("wipe_all_data"));
        assert_eq!(p.rules_for(Some("travel")), &p.base);
    }

    #[test]
    fn always_allow_matches_whole_names_and_always_block_words() {
        let p = Policy::parse(
            "always_allow = [\"get current day\", \"pay*\"]\nalways_block = [\"wipe\"]\n",
            "p.toml",
        )
        .unwrap();
        let allow = |n: &str| p.base.always_allow.iter().any(|a| a.matches(n));
        assert!(allow("get_current_day"));
        assert!(allow("GetCurrentDay"));
        assert!(allow("get-current-day"));
        assert!(!allow("get_current_day_and_send_email"));
        assert!(!allow("send_email_get_current_day"));
        assert!(!allow("mcp__evil__get_current_day"));
        assert!(allow("payment"));
        assert!(!allow("payment_to_attacker"));
        assert!(p.base.always_block[0].matches("wipe_all_data"));
        assert!(p.base.always_block[0].matches("secure_wipe"));
    }

    /// Trust is granted by whole folded tool name, in the default list and in a policy's:
    /// a tool whose name merely contains a trusted name reads text others write.
    #[test]
    fn trusted_tools_match_whole_names() {
        let r = Rules::default();
        for name in [
            "get_contacts",
            "listContacts",
            "get-address-book",
            "ｇｅｔ＿ｃｏｎｔａｃｔｓ",
        ] {
            assert!(r.trusts(name), "{name}");
        }
        for name in [
            "get_contact_page_from_url",
            "get_user_info_from_github",
            "read_contact_form_submissions",
            "get_profile",
            "search_contacts_by_name",
            "mcp_get_contacts",
            "get_contacts_and_send_email",
        ] {
            assert!(!r.trusts(name), "{name}");
        }
        let p = Policy::parse(
            "trusted_tools = [\"get contact*\", \"get user info\"]\n",
            "p.toml",
        )
        .unwrap();
        assert!(p.base.trusts("get_contacts"));
        assert!(p.base.trusts("get_user_info"));
        assert!(!p.base.trusts("get_contact_page_from_url"));
        assert!(!p.base.trusts("get_user_info_from_github"));
        assert!(!p.base.trusts("read_contact_form_submissions"));
    }

    #[test]
    fn default_thresholds() {
        let r = Rules::default();
        assert_eq!(r.verdict_for(0.95).0, Verdict::Block);
        assert_eq!(r.verdict_for(0.6).0, Verdict::Pause);
        assert_eq!(r.verdict_for(0.3).0, Verdict::Warn);
        assert_eq!(r.verdict_for(0.29).0, Verdict::Allow);
    }

    #[test]
    fn bad_policies_are_located_errors() {
        let cases: &[(&str, &str, (usize, usize))] = &[
            ("thresholds = [{ at = 1.5, verdict = \"block\" }]\n", "not a probability", (1, 22)),
            ("thresholds = [{ at = 0.5, verdict = \"stop\" }]\n", "unknown verdict `stop`", (1, 37)),
            ("thresholds = [{ at = 0.3, verdict = \"warn\" },\n  { at = 0.6, verdict = \"block\" }]\n", "descending order", (2, 10)),
            ("horizon = 0\n", "horizon 0", (1, 11)),
            ("mode = \"nuke\"\n", "unknown mode `nuke`", (1, 8)),
            ("always_block = [\"a*b\"]\n", "tool name pattern", (1, 17)),
            ("[category.x]\nthreshold = []\n", "unknown field `threshold`", (2, 1)),
            ("horizon = \"five\"\n", "invalid type", (1, 11)),
            ("version = 3\n", "unsupported policy version 3", (1, 11)),
            ("thresholds = []\n", "empty threshold list", (1, 14)),
            ("[category.x]\nthresholds = []\n", "empty threshold list", (2, 14)),
            ("thresholds = [{ at = 0.9, verdict = \"allow\" },\n  { at = 0.5, verdict = \"block\" }]\n", "must not get milder", (2, 25)),
            ("[category.x]\nthresholds = [{ at = 0.9, verdict = \"warn\" }, { at = 0.2, verdict = \"pause\" }]\n", "must not get milder", (2, 69)),
        ];
        for (src, msg, (line, col)) in cases {
            let e = Policy::parse(src, "p.toml").unwrap_err();
            let d = e.diagnostic();
            assert!(d.message.contains(msg), "{src:?}: {}", d.message);
            let loc = d.location.unwrap();
            assert_eq!(
                (loc.line, loc.column),
                (*line, *col),
                "{src:?}: {}",
                e.render()
            );
        }
    }
}
