//! Argument patterns: what the rules recognise in a call's arguments, read in one pass.

use super::*;

/// How an argument pattern recognises text.
#[derive(Clone, Debug)]
pub(super) enum ArgMatcher {
    /// Any of the needles, on word boundaries.
    Contains {
        automaton: AhoCorasick,
        needles: Vec<String>,
    },
    /// An e-mail address whose domain is not one of `except`.
    Email { except: Vec<String> },
    /// A top-level argument whose name has one of these words (lower case) and a value
    /// (not null, `false`, empty text or an empty list).
    Names { words: Vec<String> },
    /// Any of the regular expressions (the `regex` crate's syntax).
    Regex { set: Vec<PatternRegex> },
    /// An http(s):// or www. URL whose host is not one of `except` (`markers` finds the
    /// URL starts).
    Url {
        except: Vec<String>,
        markers: AhoCorasick,
    },
}

/// A pattern's regular expression, compiled while its file is read or when first searched.
#[derive(Clone, Debug)]
pub(super) struct PatternRegex {
    pub(super) source: Box<str>,
    /// `None` once compiling failed: only a deferred expression can (the built-in set's,
    /// which its tests compile), and it then counts as found (fails closed).
    re: std::sync::OnceLock<Option<regex::Regex>>,
}

/// The one way a pattern's regular expression is compiled (its size bounded).
pub(super) fn build_regex(source: &str) -> std::result::Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(source).size_limit(1 << 20).build()
}

impl PatternRegex {
    /// An expression already compiled.
    pub(super) fn compiled(source: &str, re: regex::Regex) -> PatternRegex {
        PatternRegex {
            source: source.into(),
            re: std::sync::OnceLock::from(Some(re)),
        }
    }

    /// An expression compiled when first searched.
    pub(super) fn deferred(source: &str) -> PatternRegex {
        PatternRegex {
            source: source.into(),
            re: std::sync::OnceLock::new(),
        }
    }

    /// Whether the expression matches somewhere in `s`.
    pub(super) fn is_match(&self, s: &str) -> bool {
        match self.re.get_or_init(|| build_regex(&self.source).ok()) {
            Some(re) => re.is_match(s),
            None => true,
        }
    }

    /// Whether it compiles and matches no empty text (what reading a file checks).
    #[cfg(test)]
    pub(super) fn checks(&self) -> bool {
        build_regex(&self.source).is_ok_and(|re| !re.is_match(""))
    }
}

/// A named argument pattern.
#[derive(Clone, Debug)]
pub struct ArgPattern {
    pub(super) name: String,
    pub(super) matcher: ArgMatcher,
    /// Lower-case argument names the pattern looks at (empty: all).
    pub(super) keys: Vec<String>,
}

/// The owner of the automaton's `@` needle (see [`ArgScan::email`]).
pub(super) const AT_OWNER: u16 = u16::MAX - 1;

/// Most argument patterns scanned in one pass (beyond, each pattern searches on its own).
pub(super) const SCANNED_PATTERNS: usize = 64;

/// Every `contains` needle of every argument pattern in one automaton, so that a call's
/// arguments are read once whatever the number of patterns.
#[derive(Clone, Debug, Default)]
pub(super) struct ArgScan {
    /// All needles; automaton pattern `i` is `owners[i]`. A DFA searched by a loop of our own
    /// (every match, overlapping, as `find_overlapping_iter` reports them, in the same order).
    pub(super) automaton: Option<aho_corasick::dfa::DFA>,
    /// (argument pattern, needle index in it) of each automaton pattern.
    pub(super) owners: Vec<(u16, u16)>,
    /// Patterns that look at every argument.
    pub(super) unkeyed: u64,
    /// Patterns that are regex or argument-name matchers (searched one by one, only when a
    /// rule whose name patterns match the call needs them).
    pub(super) apart: u64,
    /// Patterns that are e-mail matchers (an `@` is a needle of the automaton, owned by
    /// pattern [`AT_OWNER`]: every eligible e-mail pattern judges the address around it).
    pub(super) email: u64,
    /// Lower-case argument name → the keyed patterns that list it.
    pub(super) keyed: rustc_hash::FxHashMap<Box<[u8]>, u64>,
    /// Patterns that are URL matchers (their markers are needles of the automaton, owned by
    /// pattern `u16::MAX`).
    pub(super) url: u64,
}

impl ArgScan {
    pub(super) fn build(patterns: &[ArgPattern]) -> ArgScan {
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
                ArgMatcher::Regex { .. } | ArgMatcher::Names { .. } => scan.apart |= 1 << p,
                ArgMatcher::Email { .. } => scan.email |= 1 << p,
                ArgMatcher::Url { .. } => scan.url |= 1 << p,
            }
        }
        if scan.url != 0 {
            for (k, m) in URL_MARKERS.iter().enumerate() {
                needles.push(m);
                scan.owners.push((u16::MAX, k as u16));
            }
        }
        if scan.email != 0 {
            needles.push("@");
            scan.owners.push((AT_OWNER, 0));
        }
        scan.automaton = aho_corasick::dfa::Builder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(&needles)
            .ok();
        scan
    }
}

/// The result of scanning a call's arguments: per pattern, the first hit. Regex and
/// argument-name patterns are searched when a rule first needs them (`searched`).
pub(super) struct Hits {
    pub(super) found: u64,
    pub(super) searched: u64,
    pub(super) needle: [u16; SCANNED_PATTERNS],
}

impl Hits {
    /// Nothing found or searched yet.
    pub(super) const EMPTY: Hits = Hits {
        found: 0,
        searched: 0,
        needle: [0; SCANNED_PATTERNS],
    };
}

/// Most rules the name index handles (beyond, rules are tried one by one).
pub(super) const INDEXED_RULES: usize = 512;

/// Name patterns by their first word, so a call looks at the few patterns that can match
/// instead of all of them.
#[derive(Clone, Debug, Default)]
pub(super) struct NameIndex {
    /// Lower-case first word → (rule, pattern) whose first word is exactly it.
    pub(super) exact: rustc_hash::FxHashMap<Box<[u8]>, Vec<(u16, u16)>>,
    /// Patterns whose first word is a `word*` prefix, by the prefix's first byte (lower case).
    pub(super) prefix: rustc_hash::FxHashMap<u8, Vec<(u16, u16)>>,
    /// Rules without name patterns (argument patterns only): always candidates.
    pub(super) any_name: [u64; INDEXED_RULES / 64],
    /// The rules' `unless` patterns.
    pub(super) unless: UnlessLists,
}

/// The distinct `unless` lists of the rules, each judged at most once per call: rules share
/// lists (the default rules' read verbs, `^get`, `^list`, ..., are one list of 22 patterns
/// on a dozen rules), and a list's `^word` patterns are one lookup of the name's first word.
#[derive(Clone, Debug, Default)]
pub(super) struct UnlessLists {
    /// Per rule, the index of its list (`u16::MAX`: none).
    pub(super) of_rule: Vec<u16>,
    pub(super) lists: Vec<UnlessList>,
}

/// One `unless` list.
#[derive(Clone, Debug, Default)]
pub(super) struct UnlessList {
    /// The words of its `^word` patterns (lower case): the list excepts a name whose first
    /// word, in lower case, is one of them.
    pub(super) first_words: rustc_hash::FxHashSet<Box<[u8]>>,
    /// Its other patterns, tried one by one.
    pub(super) rest: Vec<NamePattern>,
}

/// Most distinct `unless` lists whose judgements a call remembers (beyond, a list is judged
/// for each rule that has it).
pub(super) const REMEMBERED_LISTS: usize = 64;

impl UnlessLists {
    fn build(rules: &[Rule]) -> UnlessLists {
        let mut ids: rustc_hash::FxHashMap<Vec<&str>, u16> = Default::default();
        let mut u = UnlessLists::default();
        for rule in rules {
            if rule.unless.is_empty() {
                u.of_rule.push(u16::MAX);
                continue;
            }
            let key: Vec<&str> = rule.unless.iter().map(NamePattern::as_str).collect();
            let next = u.lists.len() as u16;
            let id = *ids.entry(key).or_insert(next);
            if id == next {
                let mut list = UnlessList::default();
                for p in &rule.unless {
                    match p.first_word_only() {
                        Some(w) => {
                            list.first_words.insert(w.as_bytes().into());
                        }
                        None => list.rest.push(p.clone()),
                    }
                }
                u.lists.push(list);
            }
            u.of_rule.push(id);
        }
        u
    }
}

impl UnlessList {
    /// Whether it excepts the name `name` (split into `words`), whose first word in lower
    /// case is `first` (`None`: the name has no word).
    pub(super) fn excepts(&self, name: &str, words: &[(u16, u16)], first: Option<&[u8]>) -> bool {
        first.is_some_and(|w| self.first_words.contains(w))
            || self.rest.iter().any(|p| p.matches_words(name, words))
    }
}

impl NameIndex {
    pub(super) fn build(rules: &[Rule]) -> NameIndex {
        let mut ix = NameIndex {
            unless: UnlessLists::build(rules),
            ..NameIndex::default()
        };
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

impl ArgPattern {
    /// The needle index (or `u16::MAX`) of the first match in any argument it looks at.
    pub(super) fn find(&self, args: &Value) -> Option<u16> {
        if let ArgMatcher::Names { words } = &self.matcher {
            return args
                .as_object()?
                .iter()
                .find(|(k, v)| has_value(v) && name_has_word(k, words))
                .map(|_| u16::MAX);
        }
        self.walk(args, self.keys.is_empty())
    }

    pub(super) fn walk(&self, v: &Value, key_ok: bool) -> Option<u16> {
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

    pub(super) fn find_in(&self, s: &str) -> Option<u16> {
        let hay = s.as_bytes();
        match &self.matcher {
            ArgMatcher::Contains { automaton, .. } => automaton
                .find_overlapping_iter(s)
                .find(|m| on_boundaries(hay, m.start(), m.end()))
                .map(|m| m.pattern().as_usize() as u16),
            ArgMatcher::Regex { set } => set.iter().position(|re| re.is_match(s)).map(|i| i as u16),
            // Argument names are looked at by `find` alone.
            ArgMatcher::Names { .. } => None,
            ArgMatcher::Email { except } => hay
                .iter()
                .enumerate()
                .any(|(at, &c)| c == b'@' && email_at(s, at, except))
                .then_some(u16::MAX),
            ArgMatcher::Url { except, markers } => markers
                .find_iter(s)
                .any(|m| url_outside(s, m.start(), m.len(), except))
                .then_some(u16::MAX),
        }
    }
}

/// Whether an argument value says something (not null, `false`, empty text or list).
fn has_value(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

/// Whether the `@` at byte `at` of `s` is an address's (a local part before it, then a domain
/// with a dot or an address literal, `user@[192.0.2.1]`) whose domain is not one of `except`.
pub(super) fn email_at(s: &str, at: usize, except: &[String]) -> bool {
    let hay = s.as_bytes();
    if at == 0 || !is_local_char(hay[at - 1]) {
        return false;
    }
    if hay.get(at + 1) == Some(&b'[') && hay[at + 2..].contains(&b']') {
        // An address literal, `user@[192.0.2.1]`, `user@[IPv6:2001:db8::1]`.
        return true;
    }
    let dlen = hay[at + 1..]
        .iter()
        .take_while(|&&c| is_host_char(c))
        .count();
    let domain = s[at + 1..at + 1 + dlen].trim_end_matches('.');
    domain.contains('.') && !excepted(domain, except)
}

/// What starts a URL.
pub(super) const URL_MARKERS: [&str; 3] = ["https://", "http://", "www."];

/// Whether the URL whose marker (of length `len`) starts at byte `i` of `s` has a host outside
/// `except` (`www.` counts only at the start of a host).
pub(super) fn url_outside(s: &str, i: usize, len: usize, except: &[String]) -> bool {
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
pub(super) fn is_local_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c >= 0x80 || matches!(c, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// A byte of a host name (non-ASCII: internationalised domains such as `bücher.de`).
pub(super) fn is_host_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c >= 0x80 || matches!(c, b'.' | b'-')
}

/// `host` is one of `except` or a subdomain of one (case-insensitive). `www.` is ignored.
pub(super) fn excepted(host: &str, except: &[String]) -> bool {
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
