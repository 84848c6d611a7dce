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
//! [patterns.amount]
//! names = ["amount", "total"]     # a top-level argument whose name has one of these words
//!
//! [[rule]]                          # first match wins
//! id = "read-secret"
//! tools = ["read", "cat", "get file"]            # name patterns (see `words`)
//! unless = ["^list"]                             # optional: name patterns that exclude
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
//! A list holding `"*"` (`destinations = ["*"]`) makes every argument one: what a rule for a
//! state-changing action says (the starred repository, the added key, the setting's new value
//! all matter). `default_destinations` and `default_payloads` are the roles of a call no rule
//! matched (absent: the file's lists, or the extended set's).
//!
//! **Declarations** (issue 40; [`Classifier::profile`], [`Classifier::classify_declared`]):
//! what a tool's server declares of it — description, input schema, MCP annotations — read
//! once per tool into a [`ToolProfile`] that may only raise the classification of its calls.
//!
//! Classification allocates nothing: names are split into words on the stack and argument
//! text is searched with prebuilt automata.

use crate::dtr::{DataExposure, Implication, Prov, Reversibility, ToolEscalation};
use crate::error::{GateError, Result};
use crate::provenance::{ArgProvenance, Evidence, Provenance};
use crate::words::{on_boundaries, split_words, NamePattern, MAX_WORDS};
use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Anchored, MatchKind};
use augur_source::Span;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use toml::Spanned;

mod args;
mod declared;
mod parse;

pub use args::ArgPattern;
use args::{
    build_regex, email_at, url_outside, ArgMatcher, ArgScan, Hits, NameIndex, PatternRegex,
    AT_OWNER, INDEXED_RULES, REMEMBERED_LISTS, SCANNED_PATTERNS, URL_MARKERS,
};
pub use declared::{join, Declared, ToolDeclaration, ToolProfile};

/// The built-in default rule set (`models/classifier.toml`).
pub const DEFAULT_RULES: &str = include_str!("../../../../models/classifier.toml");

/// One rule: name patterns, argument patterns, implications.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule's id (`rule N` when the file gives none).
    pub id: String,
    /// What the rule is for.
    pub description: Option<String>,
    tools: Vec<NamePattern>,
    /// Name patterns that exclude a tool the `tools` patterns match (`unless = ["^get"]`).
    unless: Vec<NamePattern>,
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
    /// The tool's declaration raised it ([`Classifier::classify_declared`]), and why: then
    /// every argument is a destination and a payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<Declared>,
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
    /// The destination and payload words of a call no rule matched (`default_destinations`,
    /// `default_payloads`; `["*"]`: every argument).
    default_destinations: Vec<String>,
    default_payloads: Vec<String>,
    /// `["*"]`: the roles of a call its declaration raised.
    all: Vec<String>,
}

impl Classifier {
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
                    // Found under this word: its first word is this word.
                    let pat = &self.rules[r as usize].tools[p as usize];
                    if pat.matches_at_after_first(tool, words, i) {
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
        // The name's first word in lower case (for the `unless` lists' `^word` patterns).
        let first = match words.first() {
            Some(&(s, e)) if ((e - s) as usize) <= lower.len() => {
                let lw = &mut lower[..(e - s) as usize];
                lw.copy_from_slice(&tool.as_bytes()[s as usize..e as usize]);
                lw.make_ascii_lowercase();
                Some(&*lw)
            }
            Some(_) => {
                unindexed = true;
                None
            }
            None => None,
        };
        // The `unless` lists judged so far, and which of them except the name.
        let (mut judged, mut excepts) = (0u64, 0u64);
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
            let excepted = if unindexed {
                rule.unless.iter().any(|p| p.matches_words(tool, words))
            } else {
                match self.index.unless.of_rule[i] {
                    u16::MAX => false,
                    u if (u as usize) < REMEMBERED_LISTS => {
                        let bit = 1u64 << u;
                        if judged & bit == 0 {
                            judged |= bit;
                            let list = &self.index.unless.lists[u as usize];
                            if list.excepts(tool, words, first) {
                                excepts |= bit;
                            }
                        }
                        excepts & bit != 0
                    }
                    u => self.index.unless.lists[u as usize].excepts(tool, words, first),
                }
            };
            if excepted {
                continue;
            }
            let mut first_hit = None;
            if !rule.args.is_empty() && hits.is_none() && self.scan.automaton.is_some() {
                self.scan_args_into(args, hits.insert(Hits::EMPTY));
            }
            for &k in &rule.args {
                let found = match &mut hits {
                    Some(h) => {
                        if h.searched >> k & 1 == 0 {
                            // A regex or argument-name pattern: searched now, once per call.
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
                declared: None,
            });
        }
        self.default.map(|implication| Classification {
            implication,
            matched: Matched::Default,
            declared: None,
        })
    }

    /// The destination words of a call classified `c` (the rule's own, else the classifier's;
    /// for an unknown tool the classifier's `default_destinations`; `["*"]`, every argument,
    /// for a call its declaration raised).
    pub fn destination_words(&self, c: &Classification) -> &[String] {
        self.role_words(
            c,
            |r| r.destinations.as_deref(),
            &self.destinations,
            &self.default_destinations,
        )
    }

    /// The payload words of a call classified `c` (as [`Classifier::destination_words`]).
    pub fn payload_words(&self, c: &Classification) -> &[String] {
        self.role_words(
            c,
            |r| r.payloads.as_deref(),
            &self.payloads,
            &self.default_payloads,
        )
    }

    /// The words of one argument role for a call classified `c`: the matched rule's own
    /// (`of_rule`), else the classifier's (`shared`); `default` for an unknown tool; every
    /// argument for a call its declaration raised.
    fn role_words<'a>(
        &'a self,
        c: &Classification,
        of_rule: impl Fn(&'a Rule) -> Option<&'a [String]>,
        shared: &'a [String],
        default: &'a [String],
    ) -> &'a [String] {
        if c.declared.is_some() {
            return &self.all;
        }
        match c.matched {
            Matched::Rule { rule, .. } => self
                .rules
                .get(rule as usize)
                .and_then(of_rule)
                .unwrap_or(shared),
            Matched::Default => default,
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
        // A destination no text of the user's holds (the agent's own, or no text's): the
        // call is not USER on its payload alone (issue 41: USER exempts it from the
        // exfiltration rules, so the destination must be the user's).
        let mut dest_not_user = false;
        for (name, v) in map {
            let is_dest = name_has_word(name, dest);
            if !is_dest && !name_has_word(name, pay) {
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
                ArgProvenance::None | ArgProvenance::Agent(_) => Prov::None,
                ArgProvenance::User(_) => Prov::User,
                ArgProvenance::Untrusted(_) => Prov::Untrusted,
            };
            if is_dest && p == Prov::None && has_content(v) {
                dest_not_user = true;
            }
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
        if best.p == Prov::User && dest_not_user {
            return CallProvenance::NONE;
        }
        best
    }

    /// The first destination value (else the first payload value) of a call classified `c`
    /// (one that writes or cannot be undone, as in [`Classifier::call_provenance`]) that was
    /// never seen in trusted text, with its argument's name and value: what a session that
    /// could not read some content pauses on. Allocates nothing.
    pub fn unseen_value<'a>(
        &self,
        c: &Classification,
        args: &'a Value,
        prov: &Provenance,
    ) -> Option<(&'a str, &'a Value, Evidence)> {
        let imp = c.implication;
        if imp.t < ToolEscalation::FileWrite && imp.r != Reversibility::Irreversible {
            return None;
        }
        let map = args.as_object()?;
        let (dest, pay) = (self.destination_words(c), self.payload_words(c));
        // Typed values of destinations first (the reason then names where the call goes: an
        // address, not a code in its body, when a declaration makes every argument a
        // destination), then any value of a destination, then of a payload.
        for (words, typed_only) in [(dest, true), (dest, false), (pay, false)] {
            for (name, v) in map {
                if !name_has_word(name, words) {
                    continue;
                }
                let mut unseen: Option<Evidence> = None;
                prov.values_of(v, &mut |e: Evidence| {
                    // A phrase the agent composed (a message's body) is not what unread
                    // content would supply unseen: identifiers, codes and keys are.
                    let kind_counts = e.kind != crate::provenance::ValueKind::Phrase
                        && (!typed_only || e.kind.typed());
                    if unseen.is_none() && e.trusted.is_none() && kind_counts {
                        unseen = Some(e);
                    }
                });
                if let Some(e) = unseen {
                    return Some((name.as_str(), v, e));
                }
            }
        }
        None
    }

    /// The first destination argument of a network or irreversible call classified `c`
    /// whose values no text held (provenance none: not the user's, no tool result's, not the
    /// agent's earlier arguments): what the fallback of issue 40 pauses on in a session that
    /// has read untrusted text. An argument with no value the store reads (a plain word) is
    /// not one, unless `plain`: then a destination holding no tracked value at all
    /// (`unknown`, `IBAN_PLACEHOLDER`, a name, or nothing: a `null` recipient) is one too — a
    /// destination nothing says is anyone's (issue 41: where the exfiltration rules would
    /// decide by the verb). Allocates nothing.
    pub fn untraced_destination<'a>(
        &self,
        c: &Classification,
        args: &'a Value,
        prov: &Provenance,
        plain: bool,
    ) -> Option<(&'a str, &'a Value)> {
        self.destination_where(c, args, |v| {
            // A distinctive value: a bare number (an id, an amount) is not one.
            let (mut any, mut distinctive) = (false, false);
            prov.values_of(v, &mut |e| {
                any = true;
                distinctive |= e.kind != crate::provenance::ValueKind::Amount;
            });
            // A value only the agent's own earlier arguments held is no more traced than one
            // never seen: it may be an attacker's value the agent rewrote.
            (plain && !any)
                || (distinctive
                    && matches!(
                        prov.provenance_of(v),
                        ArgProvenance::None | ArgProvenance::Agent(_)
                    ))
        })
    }

    /// The first destination argument of a network or irreversible call classified `c` whose
    /// value satisfies `pred`.
    fn destination_where<'a>(
        &self,
        c: &Classification,
        args: &'a Value,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<(&'a str, &'a Value)> {
        let imp = c.implication;
        if imp.t < ToolEscalation::Network && imp.r != Reversibility::Irreversible {
            return None;
        }
        let dest = self.destination_words(c);
        args.as_object()?
            .iter()
            .find(|(name, v)| name_has_word(name, dest) && pred(v))
            .map(|(name, v)| (name.as_str(), v))
    }

    /// Scan every argument string once for every pattern (see [`ArgScan`]).
    #[cfg(test)]
    fn scan_args(&self, args: &Value) -> Hits {
        let mut h = Hits::EMPTY;
        self.scan_args_into(args, &mut h);
        h
    }

    /// [`Classifier::scan_args`] into `h` (no copy of the hits).
    fn scan_args_into(&self, args: &Value, h: &mut Hits) {
        h.searched = !self.scan.apart;
        self.scan_value(args, self.scan.unkeyed, h);
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
        // Regex and argument-name patterns are searched apart (see `Hits`).
        let want = eligible & !h.found & !self.scan.apart;
        if want == 0 {
            return;
        }
        let Some(dfa) = &self.scan.automaton else {
            return;
        };
        let folded = crate::words::fold(s);
        let s: &str = folded.as_ref();
        // Every match of every needle, overlapping, by end and then in the automaton's order
        // (what `find_overlapping_iter` reports, without its per-byte bookkeeping).
        let Ok(mut sid) = dfa.start_state(Anchored::No) else {
            return;
        };
        if dfa.is_match(sid) {
            self.scan_matches(dfa, sid, s, 0, want, h);
        }
        let hay = s.as_bytes();
        let mut i = 0;
        while i < hay.len() {
            // Up to the next special state (a match) with nothing but transitions in the
            // loop, so that it keeps its values in registers.
            let mut special = false;
            while i < hay.len() {
                sid = dfa.next_state(Anchored::No, sid, hay[i]);
                i += 1;
                if dfa.is_special(sid) {
                    special = true;
                    break;
                }
            }
            if !special || dfa.is_dead(sid) {
                return;
            }
            if dfa.is_match(sid) {
                self.scan_matches(dfa, sid, s, i, want, h);
            }
        }
    }

    /// The needles that match in state `sid`, ending at byte `end` of `s`.
    #[inline(never)]
    fn scan_matches(
        &self,
        dfa: &aho_corasick::dfa::DFA,
        sid: StateID,
        s: &str,
        end: usize,
        want: u64,
        h: &mut Hits,
    ) {
        let hay = s.as_bytes();
        for k in 0..dfa.match_len(sid) {
            let pid = dfa.match_pattern(sid, k);
            let start = end - dfa.pattern_len(pid);
            let (p, j) = self.scan.owners[pid.as_usize()];
            if p == u16::MAX {
                // A URL start: every eligible URL pattern judges its host.
                let mut urls = want & self.scan.url & !h.found;
                while urls != 0 {
                    let q = urls.trailing_zeros() as usize;
                    urls &= urls - 1;
                    if let ArgMatcher::Url { except, .. } = &self.patterns[q].matcher {
                        if url_outside(s, start, URL_MARKERS[j as usize].len(), except) {
                            h.found |= 1 << q;
                            h.needle[q] = u16::MAX;
                        }
                    }
                }
                continue;
            }
            if p == AT_OWNER {
                // An `@`: every eligible e-mail pattern judges the address around it.
                let mut emails = want & self.scan.email & !h.found;
                while emails != 0 {
                    let q = emails.trailing_zeros() as usize;
                    emails &= emails - 1;
                    if let ArgMatcher::Email { except } = &self.patterns[q].matcher {
                        if email_at(s, start, except) {
                            h.found |= 1 << q;
                            h.needle[q] = u16::MAX;
                        }
                    }
                }
                continue;
            }
            let bit = 1u64 << p;
            if want & bit != 0 && h.found & bit == 0 && on_boundaries(hay, start, end) {
                h.found |= bit;
                h.needle[p as usize] = j;
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
        self.describe_rule(m)
    }

    /// [`Classifier::describe`] of a classification, with what its declaration raised:
    /// `rule create-file, raised by the tool's declaration (destructiveHint)`.
    pub fn describe_classification(&self, c: &Classification) -> String {
        let base = self.describe_rule(&c.matched);
        match c.declared {
            Some(d) => format!(
                "{base}, raised by the tool's declaration ({})",
                d.describe()
            ),
            None => base,
        }
    }

    fn describe_rule(&self, m: &Matched) -> String {
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

/// Does an argument name have one of `words` (lower case) among its words? `*` is every
/// name.
/// Whether an argument holds something: a number, a boolean, a non-blank string, or an array
/// or object with such a leaf.
fn has_content(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(_) | Value::Number(_) => true,
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(a) => a.iter().any(has_content),
        Value::Object(m) => m.values().any(has_content),
    }
}

pub(crate) fn name_has_word(name: &str, words: &[String]) -> bool {
    if words.is_empty() {
        return false;
    }
    if words.iter().any(|w| w == "*") {
        return true;
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

#[cfg(test)]
mod tests;
