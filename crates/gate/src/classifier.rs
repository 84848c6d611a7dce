//! SafetyDrift's action classifier: rules in TOML that map a tool call (its name and
//! arguments) to implications `(d', t', r')`.
//!
//! ```toml
//! version = 1
//! # Unknown tools get these implications; without `default` they cannot be mapped, and the
//! # monitor blocks them (fail closed).
//! default = { d = "INTERNAL", t = "FILE_WRITE", r = "PARTIALLY" }
//! # Optional: this file's rules come first, then the built-in default rule set; a pattern
//! # defined here replaces the default pattern of the same name.
//! extends = "default"
//!
//! [patterns.secret_path]            # argument patterns, by name
//! contains = [".env", "id_rsa", "credentials"]   # word-bounded, case-insensitive
//! keys = ["path", "file_path"]                   # optional: only these arguments
//! [patterns.external_email]
//! email = true                                   # an e-mail address ...
//! except = ["example.com"]                       # ... outside these domains
//! [patterns.external_url]
//! url = true                                     # an http(s):// or www. URL outside `except`
//!
//! [[rule]]                          # first match wins
//! id = "read-secret"
//! tools = ["read", "cat", "get file"]            # name patterns (see `words`)
//! args = ["secret_path"]                         # every listed pattern must match
//! implies = { d = "CREDENTIALS", t = "READ_ONLY", r = "FULLY_REVERSIBLE" }
//! ```
//!
//! **Provenance** (issue 25; see [`crate::provenance`] and [`crate::dtr::Prov`]). Top-level
//! `destinations = [...]` and `payloads = [...]` list argument-name words (matched against
//! the words of a top-level argument's name, split as tool names are: `recipient_iban` has the
//! words "recipient" and "iban"): such an argument is where data goes (or what is fetched) or
//! what is sent. A rule may replace either list for its calls (`destinations = ["to"]`,
//! `payloads = []`). A call's provenance `p` is the worst (UNTRUSTED > USER > NONE) of its
//! destination and payload arguments' provenance, and only a call that writes or cannot be
//! undone (its implication has t' ≥ FILE_WRITE or r' = IRREVERSIBLE) has such arguments: a
//! call that only reads sends nothing anywhere (its p is NONE). With `extends = "default"` a
//! file without the lists takes the default set's. A rule may also test provenance:
//!
//! ```toml
//! [[rule]]
//! id = "pay-untrusted"
//! tools = ["pay*", "send money"]
//! when = ["args.recipient untrusted"]   # every condition must hold
//! implies = { d = "SENSITIVE", t = "NETWORK", r = "IRREVERSIBLE" }
//! ```
//!
//! A condition is `args.NAME LEVEL` (the top-level argument `NAME`, case-insensitive, has
//! provenance `LEVEL`: `none`, `user` or `untrusted`; an absent argument matches nothing) or
//! `args.* LEVEL` (some top-level argument has it). Without a provenance store (plain
//! [`Classifier::classify`]) every argument's provenance is `none`.
//!
//! Classification allocates nothing: names are split into words on the stack and argument
//! text is searched with prebuilt automata.

use crate::dtr::{DataExposure, Implication, Prov, Reversibility, ToolEscalation};
use crate::error::{GateError, Result};
use crate::provenance::{ArgProvenance, Evidence, Provenance};
use crate::words::{on_boundaries, split_words, NamePattern, MAX_WORDS};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use augur_source::Span;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use toml::Spanned;

/// The built-in default rule set (`models/classifier.toml`).
pub const DEFAULT_RULES: &str = include_str!("../../../models/classifier.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClassifier {
    version: Option<Spanned<i64>>,
    default: Option<Spanned<RawImplies>>,
    extends: Option<Spanned<String>>,
    #[serde(default)]
    patterns: BTreeMap<String, Spanned<RawPattern>>,
    #[serde(default, rename = "rule")]
    rules: Vec<Spanned<RawRule>>,
    destinations: Option<Vec<String>>,
    payloads: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawImplies {
    d: Spanned<String>,
    t: Spanned<String>,
    r: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPattern {
    contains: Option<Vec<Spanned<String>>>,
    email: Option<bool>,
    url: Option<bool>,
    regex: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    except: Vec<String>,
    #[serde(default)]
    keys: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: Option<String>,
    description: Option<String>,
    tools: Option<Vec<Spanned<String>>>,
    args: Option<Vec<Spanned<String>>>,
    implies: Spanned<RawImplies>,
    destinations: Option<Vec<String>>,
    payloads: Option<Vec<String>>,
    when: Option<Vec<Spanned<String>>>,
}

/// How an argument pattern recognises text.
#[derive(Clone, Debug)]
enum ArgMatcher {
    /// Any of the needles, on word boundaries.
    Contains {
        automaton: AhoCorasick,
        needles: Vec<String>,
    },
    /// An e-mail address whose domain is not one of `except`.
    Email { except: Vec<String> },
    /// Any of the regular expressions (the `regex` crate's syntax).
    Regex { set: Vec<regex::Regex> },
    /// An http(s):// or www. URL whose host is not one of `except` (`markers` finds the
    /// URL starts).
    Url {
        except: Vec<String>,
        markers: AhoCorasick,
    },
}

/// A named argument pattern.
#[derive(Clone, Debug)]
pub struct ArgPattern {
    name: String,
    matcher: ArgMatcher,
    /// Lower-case argument names the pattern looks at (empty: all).
    keys: Vec<String>,
}

/// One rule: name patterns, argument patterns, implications.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule's id (`rule N` when the file gives none).
    pub id: String,
    /// What the rule is for.
    pub description: Option<String>,
    tools: Vec<NamePattern>,
    args: Vec<u16>,
    /// The implications of a matching call.
    pub implies: Implication,
    /// Its own destination words (`None`: the classifier's).
    destinations: Option<Vec<String>>,
    /// Its own payload words (`None`: the classifier's).
    payloads: Option<Vec<String>>,
    /// Provenance conditions (all must hold).
    when: Vec<ProvCond>,
}

/// A rule's provenance condition: `args.NAME LEVEL` or `args.* LEVEL`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ProvCond {
    /// The argument name (lower case); `None`: any argument.
    arg: Option<String>,
    level: Prov,
}

/// The provenance of a call: its `p` and the argument and value that decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallProvenance<'a> {
    /// The worst provenance of its destination and payload arguments.
    pub p: Prov,
    /// The argument that decided it (`None` for p = NONE).
    pub arg: Option<&'a str>,
    /// What the store knows of the deciding value.
    pub evidence: ArgProvenance,
}

impl CallProvenance<'_> {
    /// No destination or payload argument with a value seen anywhere.
    pub const NONE: CallProvenance<'static> = CallProvenance {
        p: Prov::None,
        arg: None,
        evidence: ArgProvenance::None,
    };
}

/// Which rule decided a classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Matched {
    /// Rule `rule` (index into the rule list); `arg` names the argument pattern and the needle
    /// that matched, when the rule has argument patterns.
    Rule {
        /// Index of the rule.
        rule: u16,
        /// The first argument pattern of the rule and the needle of it that matched.
        arg: Option<ArgHit>,
    },
    /// No rule matched; the classifier's default applied.
    Default,
}

/// Which argument pattern matched, and for `contains` patterns which needle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ArgHit {
    /// Index of the pattern.
    pub pattern: u16,
    /// Index of the needle (`contains` patterns), or `u16::MAX`.
    pub needle: u16,
}

/// The classification of one tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Classification {
    /// `(d', t', r')`.
    pub implication: Implication,
    /// What decided it.
    pub matched: Matched,
}

/// A compiled rule set.
#[derive(Clone, Debug)]
pub struct Classifier {
    source: String,
    file: String,
    rules: Vec<Rule>,
    patterns: Vec<ArgPattern>,
    default: Option<Implication>,
    index: NameIndex,
    scan: ArgScan,
    destinations: Vec<String>,
    payloads: Vec<String>,
}

/// Most argument patterns scanned in one pass (beyond, each pattern searches on its own).
const SCANNED_PATTERNS: usize = 64;

/// Every `contains` needle of every argument pattern in one automaton, so that a call's
/// arguments are read once whatever the number of patterns.
#[derive(Clone, Debug, Default)]
struct ArgScan {
    /// All needles; automaton pattern `i` is `owners[i]`.
    automaton: Option<AhoCorasick>,
    /// (argument pattern, needle index in it) of each automaton pattern.
    owners: Vec<(u16, u16)>,
    /// Patterns that look at every argument.
    unkeyed: u64,
    /// Patterns that are e-mail or regex matchers (searched one by one, only when a rule whose
    /// name patterns match the call needs them).
    email: u64,
    /// Lower-case argument name → the keyed patterns that list it.
    keyed: rustc_hash::FxHashMap<Box<[u8]>, u64>,
    /// Patterns that are URL matchers (their markers are needles of the automaton, owned by
    /// pattern `u16::MAX`).
    url: u64,
}

impl ArgScan {
    fn build(patterns: &[ArgPattern]) -> ArgScan {
        if patterns.len() > SCANNED_PATTERNS {
            return ArgScan::default();
        }
        let mut needles: Vec<&str> = Vec::new();
        let mut scan = ArgScan::default();
        for (p, pat) in patterns.iter().enumerate() {
            if pat.keys.is_empty() {
                scan.unkeyed |= 1 << p;
            }
            for k in &pat.keys {
                *scan.keyed.entry(k.as_bytes().into()).or_default() |= 1 << p;
            }
            match &pat.matcher {
                ArgMatcher::Contains { needles: ns, .. } => {
                    for (j, n) in ns.iter().enumerate() {
                        needles.push(n);
                        scan.owners.push((p as u16, j as u16));
                    }
                }
                ArgMatcher::Email { .. } | ArgMatcher::Regex { .. } => scan.email |= 1 << p,
                ArgMatcher::Url { .. } => scan.url |= 1 << p,
            }
        }
        if scan.url != 0 {
            for (k, m) in URL_MARKERS.iter().enumerate() {
                needles.push(m);
                scan.owners.push((u16::MAX, k as u16));
            }
        }
        scan.automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&needles)
            .ok();
        scan
    }
}

/// The result of scanning a call's arguments: per pattern, the first hit. E-mail and regex
/// patterns are searched when a rule first needs them (`searched`).
struct Hits {
    found: u64,
    searched: u64,
    needle: [u16; SCANNED_PATTERNS],
}

/// Most rules the name index handles (beyond, rules are tried one by one).
const INDEXED_RULES: usize = 512;

/// Name patterns by their first word, so a call looks at the few patterns that can match
/// instead of all of them.
#[derive(Clone, Debug, Default)]
struct NameIndex {
    /// Lower-case first word → (rule, pattern) whose first word is exactly it.
    exact: rustc_hash::FxHashMap<Box<[u8]>, Vec<(u16, u16)>>,
    /// Patterns whose first word is a `word*` prefix, by the prefix's first byte (lower case).
    prefix: rustc_hash::FxHashMap<u8, Vec<(u16, u16)>>,
    /// Rules without name patterns (argument patterns only): always candidates.
    any_name: [u64; INDEXED_RULES / 64],
}

impl NameIndex {
    fn build(rules: &[Rule]) -> NameIndex {
        let mut ix = NameIndex::default();
        for (r, rule) in rules.iter().enumerate().take(INDEXED_RULES) {
            if rule.tools.is_empty() {
                ix.any_name[r / 64] |= 1 << (r % 64);
            }
            for (p, pat) in rule.tools.iter().enumerate() {
                let key = (r as u16, p as u16);
                match pat.exact_first_word() {
                    Some(w) => ix.exact.entry(w.as_bytes().into()).or_default().push(key),
                    None => ix.prefix.entry(pat.first_byte()).or_default().push(key),
                }
            }
        }
        ix
    }
}

fn level<T>(
    file: &str,
    src: &str,
    s: &Spanned<String>,
    parse: fn(&str) -> Option<T>,
    what: &str,
    names: String,
) -> Result<T> {
    parse(s.get_ref()).ok_or_else(|| {
        GateError::at(
            file,
            src,
            Span::from(s.span()),
            format!("unknown {what} `{}` (expected one of {names})", s.get_ref()),
        )
    })
}

fn implies(file: &str, src: &str, raw: &RawImplies) -> Result<Implication> {
    Ok(Implication {
        d: level(
            file,
            src,
            &raw.d,
            DataExposure::parse,
            "data exposure",
            DataExposure::names(),
        )?,
        t: level(
            file,
            src,
            &raw.t,
            ToolEscalation::parse,
            "tool escalation",
            ToolEscalation::names(),
        )?,
        r: level(
            file,
            src,
            &raw.r,
            Reversibility::parse,
            "reversibility",
            Reversibility::names(),
        )?,
    })
}

impl Classifier {
    /// The built-in default rule set.
    pub fn default_rules() -> Classifier {
        // The default file is part of the crate and is tested; failing here is a build bug.
        Classifier::parse(DEFAULT_RULES, "<default classifier>")
            .unwrap_or_else(|e| panic!("the built-in classifier does not parse: {}", e.render()))
    }

    /// Read a rule set from a file.
    pub fn from_file(path: &std::path::Path) -> Result<Classifier> {
        let text = crate::read_text(path)?;
        Classifier::parse(&text, &path.display().to_string())
    }

    /// Parse a rule set; every error is located in `file`.
    pub fn parse(src: &str, file: &str) -> Result<Classifier> {
        let raw: RawClassifier = toml::from_str(src).map_err(|e| GateError::toml(file, src, &e))?;
        if let Some(v) = &raw.version {
            if *v.get_ref() != 1 {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(v.span()),
                    format!(
                        "unsupported classifier version {} (this Augur reads version 1)",
                        v.get_ref()
                    ),
                ));
            }
        }
        let base = match &raw.extends {
            None => None,
            Some(e) if e.get_ref() == "default" => Some(Classifier::default_rules()),
            Some(e) => {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(e.span()),
                    format!(
                    "`extends = \"{}\"`: only \"default\" (the built-in rule set) can be extended",
                    e.get_ref()
                ),
                ))
            }
        };
        let mut patterns: Vec<ArgPattern> = Vec::new();
        for (name, p) in &raw.patterns {
            patterns.push(parse_pattern(file, src, name, p)?);
        }
        // Patterns of the default set that this file does not redefine.
        if let Some(b) = &base {
            for p in &b.patterns {
                if !patterns.iter().any(|q| q.name == p.name) {
                    patterns.push(p.clone());
                }
            }
        }
        let mut rules = Vec::new();
        for (i, r) in raw.rules.iter().enumerate() {
            rules.push(parse_rule(file, src, i, r, &patterns)?);
        }
        let mut default = match &raw.default {
            Some(d) => Some(implies(file, src, d.get_ref())?),
            None => None,
        };
        let base_words = base
            .as_ref()
            .map(|b| (b.destinations.clone(), b.payloads.clone()));
        if let Some(b) = base {
            // The default set's rules refer to its patterns by index: re-point them.
            for r in b.rules {
                let args = r
                    .args
                    .iter()
                    .map(|&k| {
                        let name = &b.patterns[k as usize].name;
                        patterns
                            .iter()
                            .position(|p| &p.name == name)
                            .unwrap_or(k as usize) as u16
                    })
                    .collect();
                rules.push(Rule { args, ..r });
            }
            if raw.default.is_none() {
                default = b.default;
            }
        }
        if rules.len() > u16::MAX as usize || patterns.len() > u16::MAX as usize {
            return Err(GateError::at(
                file,
                src,
                Span::point(0),
                "too many rules or patterns",
            ));
        }
        let words = |w: &Option<Vec<String>>, base: Option<&Vec<String>>| -> Vec<String> {
            match w {
                Some(w) => w.iter().map(|x| x.trim().to_ascii_lowercase()).collect(),
                None => base.cloned().unwrap_or_default(),
            }
        };
        let destinations = words(&raw.destinations, base_words.as_ref().map(|b| &b.0));
        let payloads = words(&raw.payloads, base_words.as_ref().map(|b| &b.1));
        let index = NameIndex::build(&rules);
        let scan = ArgScan::build(&patterns);
        Ok(Classifier {
            source: src.to_string(),
            file: file.to_string(),
            rules,
            patterns,
            default,
            index,
            scan,
            destinations,
            payloads,
        })
    }

    /// The TOML text it was read from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The file it was read from.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The rules, in order (the default set's rules last when `extends = "default"`).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The implications for tools no rule matches (`None`: such tools cannot be mapped).
    pub fn default_implication(&self) -> Option<Implication> {
        self.default
    }

    /// Classify a tool call: the first rule whose name patterns (any of them) match the tool
    /// name and whose argument patterns (all of them) match the arguments; else the default;
    /// `None` when there is no default. The tool name and every argument string (and object
    /// key) are [`fold`](crate::words::fold)ed first. Allocates nothing for ASCII calls.
    pub fn classify(&self, tool: &str, args: &Value) -> Option<Classification> {
        self.classify_with(tool, args, None)
    }

    /// [`Classifier::classify`] with a provenance store for the rules' `when` conditions
    /// (`None`: every argument's provenance is `none`). Allocates nothing for ASCII calls.
    pub fn classify_with(
        &self,
        tool: &str,
        args: &Value,
        prov: Option<&Provenance>,
    ) -> Option<Classification> {
        let folded = crate::words::fold(tool);
        let tool = folded.as_ref();
        let mut buf = [(0u16, 0u16); MAX_WORDS];
        let n = split_words(tool, &mut buf);
        let words = &buf[..n];
        // The rules whose name patterns match, found through the index.
        let mut named = self.index.any_name;
        let mut lower = [0u8; 64];
        let mut unindexed = self.rules.len() > INDEXED_RULES;
        for (i, &(s, e)) in words.iter().enumerate() {
            let w = &tool.as_bytes()[s as usize..e as usize];
            if w.len() > lower.len() {
                unindexed = true;
                break;
            }
            let lw = &mut lower[..w.len()];
            lw.copy_from_slice(w);
            lw.make_ascii_lowercase();
            if let Some(cands) = self.index.exact.get(&*lw) {
                for &(r, p) in cands {
                    if self.rules[r as usize].tools[p as usize].matches_at(tool, words, i) {
                        named[r as usize / 64] |= 1 << (r % 64);
                    }
                }
            }
            if let Some(cands) = lw.first().and_then(|b| self.index.prefix.get(b)) {
                for &(r, p) in cands {
                    if self.rules[r as usize].tools[p as usize].matches_at(tool, words, i) {
                        named[r as usize / 64] |= 1 << (r % 64);
                    }
                }
            }
        }
        let mut hits: Option<Hits> = None;
        'rules: for (i, rule) in self.rules.iter().enumerate() {
            let name_ok = if unindexed || i >= INDEXED_RULES {
                rule.tools.is_empty() || rule.tools.iter().any(|p| p.matches_words(tool, words))
            } else {
                named[i / 64] >> (i % 64) & 1 == 1
            };
            if !name_ok {
                continue;
            }
            let mut first_hit = None;
            if !rule.args.is_empty() && hits.is_none() && self.scan.automaton.is_some() {
                hits = Some(self.scan_args(args));
            }
            for &k in &rule.args {
                let found = match &mut hits {
                    Some(h) => {
                        if h.searched >> k & 1 == 0 {
                            // An e-mail or regex pattern: searched now, once per call.
                            h.searched |= 1 << k;
                            if let Some(n) = self.patterns[k as usize].find(args) {
                                h.found |= 1 << k;
                                h.needle[k as usize] = n;
                            }
                        }
                        (h.found >> k & 1 == 1).then(|| h.needle[k as usize])
                    }
                    None => self.patterns[k as usize].find(args),
                };
                match found {
                    Some(needle) => {
                        if first_hit.is_none() {
                            first_hit = Some(ArgHit { pattern: k, needle });
                        }
                    }
                    None => continue 'rules,
                }
            }
            if !rule.when.iter().all(|c| cond_holds(c, args, prov)) {
                continue 'rules;
            }
            return Some(Classification {
                implication: rule.implies,
                matched: Matched::Rule {
                    rule: i as u16,
                    arg: first_hit,
                },
            });
        }
        self.default.map(|implication| Classification {
            implication,
            matched: Matched::Default,
        })
    }

    /// The destination words of a call classified `c` (the rule's own, else the classifier's).
    pub fn destination_words(&self, c: &Classification) -> &[String] {
        match c.matched {
            Matched::Rule { rule, .. } => self
                .rules
                .get(rule as usize)
                .and_then(|r| r.destinations.as_deref())
                .unwrap_or(&self.destinations),
            Matched::Default => &self.destinations,
        }
    }

    /// The payload words of a call classified `c` (the rule's own, else the classifier's).
    pub fn payload_words(&self, c: &Classification) -> &[String] {
        match c.matched {
            Matched::Rule { rule, .. } => self
                .rules
                .get(rule as usize)
                .and_then(|r| r.payloads.as_deref())
                .unwrap_or(&self.payloads),
            Matched::Default => &self.payloads,
        }
    }

    /// The provenance of a call classified `c` (see the module documentation): the worst
    /// provenance of its destination and payload arguments, NONE for a call that neither
    /// writes nor is irreversible. With `lost` (the store lost what it held: a restarted
    /// session) a value the store does not know as trusted counts as untrusted (fail
    /// closed). Allocates nothing.
    pub fn call_provenance<'a>(
        &self,
        c: &Classification,
        args: &'a Value,
        prov: &Provenance,
        lost: bool,
    ) -> CallProvenance<'a> {
        let imp = c.implication;
        if imp.t < ToolEscalation::FileWrite && imp.r != Reversibility::Irreversible {
            return CallProvenance::NONE;
        }
        let Some(map) = args.as_object() else {
            return CallProvenance::NONE;
        };
        let (dest, pay) = (self.destination_words(c), self.payload_words(c));
        if dest.is_empty() && pay.is_empty() {
            return CallProvenance::NONE;
        }
        let mut best = CallProvenance::NONE;
        for (name, v) in map {
            if !name_has_word(name, dest) && !name_has_word(name, pay) {
                continue;
            }
            let mut ap = prov.provenance_of(v);
            if lost && !matches!(ap, ArgProvenance::Untrusted(_)) {
                // Values seen before the loss are unknown now: only a trusted sighting since
                // makes a value user.
                let mut unknown: Option<Evidence> = None;
                prov.values_of(v, &mut |e: Evidence| {
                    if unknown.is_none() && e.trusted.is_none() {
                        unknown = Some(Evidence { at_cap: true, ..e });
                    }
                });
                if let Some(e) = unknown {
                    ap = ArgProvenance::Untrusted(e);
                }
            }
            let p = match ap {
                ArgProvenance::None => Prov::None,
                ArgProvenance::User(_) => Prov::User,
                ArgProvenance::Untrusted(_) => Prov::Untrusted,
            };
            if p > best.p {
                best = CallProvenance {
                    p,
                    arg: Some(name.as_str()),
                    evidence: ap,
                };
                if p == Prov::Untrusted {
                    break;
                }
            }
        }
        best
    }

    /// Scan every argument string once for every pattern (see [`ArgScan`]).
    fn scan_args(&self, args: &Value) -> Hits {
        let mut h = Hits {
            found: 0,
            searched: !self.scan.email,
            needle: [0; SCANNED_PATTERNS],
        };
        self.scan_value(args, self.scan.unkeyed, &mut h);
        h
    }

    fn scan_value(&self, v: &Value, eligible: u64, h: &mut Hits) {
        match v {
            Value::String(s) => self.scan_str(s, eligible, h),
            Value::Array(items) => {
                for x in items {
                    self.scan_value(x, eligible, h);
                }
            }
            Value::Object(map) => {
                for (k, x) in map {
                    // A key is text too: an address or a path used as a key is seen.
                    self.scan_str(k, self.scan.unkeyed, h);
                    let e = eligible | self.keyed_patterns(k);
                    self.scan_value(x, e, h);
                }
            }
            _ => {}
        }
    }

    fn scan_str(&self, s: &str, eligible: u64, h: &mut Hits) {
        {
            {
                // E-mail and regex patterns are searched apart (see `Hits`).
                let want = eligible & !h.found & !self.scan.email;
                if want == 0 {
                    return;
                }
                let folded = crate::words::fold(s);
                let s: &str = folded.as_ref();
                if let Some(ac) = &self.scan.automaton {
                    let hay = s.as_bytes();
                    for m in ac.find_overlapping_iter(s) {
                        let (p, j) = self.scan.owners[m.pattern().as_usize()];
                        if p == u16::MAX {
                            // A URL start: every eligible URL pattern judges its host.
                            let mut urls = want & self.scan.url & !h.found;
                            while urls != 0 {
                                let q = urls.trailing_zeros() as usize;
                                urls &= urls - 1;
                                if let ArgMatcher::Url { except, .. } = &self.patterns[q].matcher {
                                    if url_outside(
                                        s,
                                        m.start(),
                                        URL_MARKERS[j as usize].len(),
                                        except,
                                    ) {
                                        h.found |= 1 << q;
                                        h.needle[q] = u16::MAX;
                                    }
                                }
                            }
                            continue;
                        }
                        let bit = 1u64 << p;
                        if want & bit != 0
                            && h.found & bit == 0
                            && on_boundaries(hay, m.start(), m.end())
                        {
                            h.found |= bit;
                            h.needle[p as usize] = j;
                        }
                    }
                }
            }
        }
    }

    /// The keyed patterns that look at argument `k` (its name, case-insensitive).
    fn keyed_patterns(&self, k: &str) -> u64 {
        if self.scan.keyed.is_empty() {
            return 0;
        }
        let mut lower = [0u8; 64];
        if k.len() > lower.len() {
            let mut e = 0;
            for (p, pat) in self.patterns.iter().enumerate().take(SCANNED_PATTERNS) {
                if pat.keys.iter().any(|want| want.eq_ignore_ascii_case(k)) {
                    e |= 1 << p;
                }
            }
            return e;
        }
        let lk = &mut lower[..k.len()];
        lk.copy_from_slice(k.as_bytes());
        lk.make_ascii_lowercase();
        self.scan.keyed.get(&*lk).copied().unwrap_or(0)
    }

    /// A short description of what matched: `rule send-external (argument external_email)`,
    /// `the default for unknown tools`.
    pub fn describe(&self, m: &Matched) -> String {
        match m {
            Matched::Default => "the default for unknown tools".into(),
            Matched::Rule { rule, arg } => {
                let id = self
                    .rules
                    .get(*rule as usize)
                    .map_or("?", |r| r.id.as_str());
                match arg {
                    Some(h) => format!("rule {id} ({})", self.hit_text(h)),
                    None => format!("rule {id}"),
                }
            }
        }
    }

    /// The text of an argument hit: the needle (`.env`) or the pattern's name.
    pub fn hit_text(&self, h: &ArgHit) -> String {
        match self.patterns.get(h.pattern as usize) {
            Some(ArgPattern {
                matcher: ArgMatcher::Contains { needles, .. },
                ..
            }) => needles.get(h.needle as usize).cloned().unwrap_or_default(),
            Some(p) => p.name.replace('_', " "),
            None => String::new(),
        }
    }
}

/// Does an argument name have one of `words` (lower case) among its words?
pub(crate) fn name_has_word(name: &str, words: &[String]) -> bool {
    if words.is_empty() {
        return false;
    }
    let mut buf = [(0u16, 0u16); MAX_WORDS];
    let n = split_words(name, &mut buf);
    buf[..n].iter().any(|&(a, b)| {
        let w = &name[a as usize..b as usize];
        words.iter().any(|x| x.eq_ignore_ascii_case(w))
    })
}

/// Does a `when` condition hold for these arguments?
fn cond_holds(c: &ProvCond, args: &Value, prov: Option<&Provenance>) -> bool {
    let level_of = |v: &Value| match prov.map(|p| p.provenance_of(v)) {
        Some(ArgProvenance::User(_)) => Prov::User,
        Some(ArgProvenance::Untrusted(_)) => Prov::Untrusted,
        _ => Prov::None,
    };
    let Some(map) = args.as_object() else {
        return false;
    };
    match &c.arg {
        Some(name) => map
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .is_some_and(|(_, v)| level_of(v) == c.level),
        None => map.values().any(|v| level_of(v) == c.level),
    }
}

/// Parse a `when` condition: `args.NAME LEVEL` or `args.* LEVEL`.
fn parse_cond(text: &str) -> std::result::Result<ProvCond, String> {
    let mut parts = text.split_whitespace();
    let (Some(target), Some(level), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(format!(
            "`{text}`: a condition is `args.NAME LEVEL` or `args.* LEVEL` (LEVEL: none, user, untrusted)"
        ));
    };
    let Some(name) = target.strip_prefix("args.").filter(|n| !n.is_empty()) else {
        return Err(format!(
            "`{target}`: a condition tests an argument, `args.NAME` or `args.*`"
        ));
    };
    let level = Prov::parse(level).ok_or_else(|| {
        format!("unknown provenance `{level}` (expected one of none, user, untrusted)")
    })?;
    Ok(ProvCond {
        arg: (name != "*").then(|| name.to_ascii_lowercase()),
        level,
    })
}

/// Compiles argument pattern `name` of a rule file (`file`, text `src`).
fn parse_pattern(file: &str, src: &str, name: &str, p: &Spanned<RawPattern>) -> Result<ArgPattern> {
    let span = Span::from(p.span());
    let p = p.get_ref();
    let kinds = usize::from(p.contains.is_some())
        + usize::from(p.regex.is_some())
        + usize::from(p.email == Some(true))
        + usize::from(p.url == Some(true));
    if kinds != 1 {
        return Err(GateError::at(
            file,
            src,
            span,
            format!("pattern `{name}` needs exactly one of `contains = [...]`, `regex = [...]`, `email = true`, `url = true`"),
        ));
    }
    let matcher = if let Some(res) = &p.regex {
        if res.is_empty() {
            return Err(GateError::at(
                file,
                src,
                span,
                format!("pattern `{name}`: `regex` is empty"),
            ));
        }
        let mut set = Vec::new();
        for r in res {
            let re = regex::RegexBuilder::new(r.get_ref())
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    let msg = e.to_string();
                    let last = msg.lines().last().unwrap_or("").trim().to_string();
                    GateError::at(
                        file,
                        src,
                        Span::from(r.span()),
                        format!("pattern `{name}`: not a regular expression: {last}"),
                    )
                })?;
            if re.is_match("") {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(r.span()),
                    "a regular expression that matches empty text matches everything",
                ));
            }
            set.push(re);
        }
        ArgMatcher::Regex { set }
    } else if let Some(needles) = &p.contains {
        if needles.is_empty() {
            return Err(GateError::at(
                file,
                src,
                span,
                format!("pattern `{name}`: `contains` is empty"),
            ));
        }
        for n in needles {
            if n.get_ref().trim().is_empty() {
                return Err(GateError::at(
                    file,
                    src,
                    Span::from(n.span()),
                    "an empty needle matches everything",
                ));
            }
        }
        let list: Vec<String> = needles.iter().map(|n| n.get_ref().to_string()).collect();
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&list)
            .map_err(|e| GateError::at(file, src, span, format!("pattern `{name}`: {e}")))?;
        ArgMatcher::Contains {
            automaton,
            needles: list,
        }
    } else {
        let except = p
            .except
            .iter()
            .map(|d| d.trim().trim_start_matches('@').to_ascii_lowercase())
            .collect();
        if p.email == Some(true) {
            ArgMatcher::Email { except }
        } else {
            let markers = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostFirst)
                .kind(Some(AhoCorasickKind::DFA))
                // Arguments are short: a prefilter's set-up costs more than it saves.
                .prefilter(false)
                .build(["https://", "http://", "www."])
                .map_err(|e| GateError::at(file, src, span, format!("pattern `{name}`: {e}")))?;
            ArgMatcher::Url { except, markers }
        }
    };
    Ok(ArgPattern {
        name: name.to_string(),
        matcher,
        keys: p.keys.iter().map(|k| k.to_ascii_lowercase()).collect(),
    })
}

/// Compiles rule `i` (0-based) of a rule file (`file`, text `src`), whose argument patterns
/// refer to `patterns`.
fn parse_rule(
    file: &str,
    src: &str,
    i: usize,
    r: &Spanned<RawRule>,
    patterns: &[ArgPattern],
) -> Result<Rule> {
    let span = Span::from(r.span());
    let r = r.get_ref();
    let id = r.id.clone().unwrap_or_else(|| format!("rule {}", i + 1));
    let mut tools = Vec::new();
    for t in r.tools.iter().flatten() {
        tools.push(NamePattern::new(t.get_ref()).map_err(|m| {
            GateError::at(file, src, Span::from(t.span()), format!("name pattern {m}"))
        })?);
    }
    let mut args = Vec::new();
    for a in r.args.iter().flatten() {
        let k = patterns
            .iter()
            .position(|p| &p.name == a.get_ref())
            .ok_or_else(|| {
                let known: Vec<&str> = patterns.iter().map(|p| p.name.as_str()).collect();
                GateError::at(
                    file,
                    src,
                    Span::from(a.span()),
                    format!(
                        "unknown argument pattern `{}` (defined: {})",
                        a.get_ref(),
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                )
            })?;
        args.push(k as u16);
    }
    if tools.is_empty() && args.is_empty() {
        return Err(GateError::at(
            file,
            src,
            span,
            format!("{id}: a rule needs `tools` or `args` (a rule matching every call would hide all later rules)"),
        ));
    }
    let mut when = Vec::new();
    for c in r.when.iter().flatten() {
        when.push(
            parse_cond(c.get_ref())
                .map_err(|m| GateError::at(file, src, Span::from(c.span()), m))?,
        );
    }
    let lower = |w: &Option<Vec<String>>| {
        w.as_ref()
            .map(|w| w.iter().map(|x| x.trim().to_ascii_lowercase()).collect())
    };
    Ok(Rule {
        id,
        description: r.description.clone(),
        tools,
        args,
        implies: implies(file, src, r.implies.get_ref())?,
        destinations: lower(&r.destinations),
        payloads: lower(&r.payloads),
        when,
    })
}

impl ArgPattern {
    /// The needle index (or `u16::MAX`) of the first match in any argument it looks at.
    fn find(&self, args: &Value) -> Option<u16> {
        self.walk(args, self.keys.is_empty())
    }

    fn walk(&self, v: &Value, key_ok: bool) -> Option<u16> {
        match v {
            Value::String(s) if key_ok => self.find_in(&crate::words::fold(s)),
            Value::Array(items) => items.iter().find_map(|x| self.walk(x, key_ok)),
            Value::Object(map) => map.iter().find_map(|(k, x)| {
                if self.keys.is_empty() {
                    if let Some(hit) = self.find_in(&crate::words::fold(k)) {
                        return Some(hit);
                    }
                }
                let ok = key_ok || self.keys.iter().any(|want| want.eq_ignore_ascii_case(k));
                self.walk(x, ok)
            }),
            _ => None,
        }
    }

    fn find_in(&self, s: &str) -> Option<u16> {
        let hay = s.as_bytes();
        match &self.matcher {
            ArgMatcher::Contains { automaton, .. } => automaton
                .find_overlapping_iter(s)
                .find(|m| on_boundaries(hay, m.start(), m.end()))
                .map(|m| m.pattern().as_usize() as u16),
            ArgMatcher::Regex { set } => set.iter().position(|re| re.is_match(s)).map(|i| i as u16),
            ArgMatcher::Email { except } => {
                let mut from = 0;
                while let Some(at) = s[from..].find('@').map(|i| i + from) {
                    from = at + 1;
                    let local = hay[..at]
                        .iter()
                        .rev()
                        .take_while(|&&c| is_local_char(c))
                        .count();
                    if local > 0 && hay.get(at + 1) == Some(&b'[') {
                        // An address literal, `user@[192.0.2.1]`, `user@[IPv6:2001:db8::1]`.
                        if hay[at + 2..].contains(&b']') {
                            return Some(u16::MAX);
                        }
                    }
                    let dlen = hay[at + 1..]
                        .iter()
                        .take_while(|&&c| is_host_char(c))
                        .count();
                    let domain = s[at + 1..at + 1 + dlen].trim_end_matches('.');
                    if local > 0 && domain.contains('.') && !excepted(domain, except) {
                        return Some(u16::MAX);
                    }
                }
                None
            }
            ArgMatcher::Url { except, markers } => markers
                .find_iter(s)
                .any(|m| url_outside(s, m.start(), m.len(), except))
                .then_some(u16::MAX),
        }
    }
}

/// What starts a URL.
const URL_MARKERS: [&str; 3] = ["https://", "http://", "www."];

/// Whether the URL whose marker (of length `len`) starts at byte `i` of `s` has a host outside
/// `except` (`www.` counts only at the start of a host).
fn url_outside(s: &str, i: usize, len: usize, except: &[String]) -> bool {
    let hay = s.as_bytes();
    let www = len == 4;
    if www && i > 0 && is_host_char(hay[i - 1]) {
        return false;
    }
    let mut start = if www { i } else { i + len };
    // `https://trusted.com@evil.com/`: what comes before `@` is user information, the host
    // follows it.
    let auth = hay[start..]
        .iter()
        .take_while(|&&c| {
            !matches!(c, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\')
                && !c.is_ascii_whitespace()
        })
        .count();
    if let Some(at) = hay[start..start + auth].iter().rposition(|&c| c == b'@') {
        start += at + 1;
    }
    if hay.get(start) == Some(&b'[') {
        // An IP literal, `http://[2001:db8::1]/`: never one of `except` unless written so.
        let end = hay[start..]
            .iter()
            .position(|&c| c == b']')
            .map_or(hay.len(), |e| start + e + 1);
        return !excepted(&s[start..end], except);
    }
    let hlen = hay[start..]
        .iter()
        .take_while(|&&c| is_host_char(c))
        .count();
    let host = s[start..start + hlen].trim_end_matches('.');
    !host.is_empty() && !excepted(host, except)
}

/// A byte of an address' local part (non-ASCII: internationalised addresses).
fn is_local_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c >= 0x80 || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// A byte of a host name (non-ASCII: internationalised domains such as `bücher.de`).
fn is_host_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c >= 0x80 || matches!(c, b'.' | b'-')
}

/// `host` is one of `except` or a subdomain of one (case-insensitive). `www.` is ignored.
fn excepted(host: &str, except: &[String]) -> bool {
    let h = host
        .strip_prefix("www.")
        .or_else(|| host.strip_prefix("WWW."))
        .unwrap_or(host);
    except.iter().any(|d| {
        let d = d.strip_prefix("www.").unwrap_or(d);
        h.eq_ignore_ascii_case(d)
            || (h.len() > d.len()
                && h.as_bytes()[h.len() - d.len() - 1] == b'.'
                && h[h.len() - d.len()..].eq_ignore_ascii_case(d))
    })
}

#[cfg(test)]
mod tests;
