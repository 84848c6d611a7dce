//! Provenance (library part of issue 25): which values an agent saw where, and where a call's
//! argument came from.
//!
//! **Values** are extracted from observed text and from call arguments (every string and
//! number leaf of a JSON value) in one pass of a hand-written byte scanner:
//!
//! | kind | recognised | normalised form |
//! |---|---|---|
//! | e-mail | `local@domain.tld` (also inside `mailto:`, `to=…`, `<…>`) | lower case |
//! | URL | `scheme://…` | scheme and `www.` dropped, lower case, trailing `/` dropped; its host is a second value |
//! | domain | `name.tld` (last label 2–24 letters), IPv4, optionally `/path` | `www.` dropped, lower case; with a path, its host is a second value |
//! | IBAN | 2 letters, 2 digits, 11–30 letters or digits; also in groups of 1–4 separated by single spaces | letters and digits only, lower case |
//! | account-like identifier | a token of letters, digits, `-`, `+`, `.` holding ≥ 7 digits (not a date) | letters and digits only, lower case |
//! | phone | `+`/digit groups (`+1 555 123 4567`, `(555) 123-4567`, `555.123.4567`) with 7–15 digits | digits only |
//! | file path | starts with `/`, `~/`, `./`, `../`, `X:\`, or has a `/` and a file extension; a bare file name with a common extension | lower case, trailing `/` dropped |
//! | money amount | a number with a currency symbol (`$ € £ ¥`) or ISO code (`USD`, `EUR`, …) beside it; every number leaf of an argument | digits and `.`: thousands separators, leading zeros, trailing decimal zeros dropped (`$1,000.50` → `1000.5`) |
//! | token (issue 40, item 1) | a token no rule above took, of ASCII letters, digits and `- _ . + = ~ / :`, ≥ 5 bytes: a code, key or secret (letters and digits mixed: ≥ 3 alternating runs, or ≥ 4 digits, or ≥ 12 letters and digits; not a date), a slug (`owner/name`: 2–4 segments of ≥ 2 bytes, ≥ 7 bytes), key material with `/` (≥ 16 letters and digits), `host:port` at a host without a top-level domain (and the host); a URL's host without a top-level domain; `user@host` at one | letters and digits only, lower case (`ABC-123` is `abc123`); lower case as written when it holds `/`, `@` or `:` |
//! | phrase (issue 40, item 1) | 2–8 words (≥ 4 letters, ≤ 96 bytes, only letters, digits, non-ASCII and `- ' , . ! ? & : #` between spaces): quoted in text (`"…"`, `'…'`, `` `…` ``, on one line), or a whole short text or argument string (a title) | lower case, compared as a whole |
//!
//! Every normalised form also drops trailing punctuation (`. , : ; ! ?` and closing brackets
//! and quotes) and lower-cases ASCII letters (paths and URL paths included: a case-only
//! difference is taken as the same value). Identifiers and phone numbers share their form
//! (digits only), so a number written once with dashes and once without is one value.
//! Person names, plain words, words joined by `-` or `_` without a digit, a label with a
//! small number (`External_0`) and short numbers are **not** values: they are too common to
//! say where anything came from; a phrase is a value only as a whole (quoted, or a whole
//! short string), never each of its words. Non-ASCII bytes are kept as they are (not case-folded); the
//! scanner reads bytes, so invalid UTF-8 is read like any other text.
//!
//! **The store** ([`Provenance`], one per session) keeps, per normalised value, its normalised
//! text, its first trusted sighting and its first untrusted sighting (origin, tool name,
//! step). Values are found by a 64-bit hash of their normalised bytes keyed with a random
//! secret per store, and a hash hit counts only when the stored text is the value's text: two
//! values that share a hash (by chance, or found by an attacker) stay two values, so an
//! untrusted value can never borrow a trusted one's sighting. An
//! argument's provenance ([`Provenance::provenance_of`]) is
//! - **untrusted** when one of its values occurs only in untrusted text (in an argument with
//!   several values, one such value is enough: a trusted value beside it does not launder it);
//! - **user** when it has a value that occurs in trusted text (also when that value occurs in
//!   untrusted text too) and none of the above;
//! - **none** when none of its values was seen anywhere (the model wrote it).
//!
//! **No laundering** (issue 39): only the user's own text (the request, the system prompt)
//! makes a value the user's once it has been seen in untrusted text; a trusted tool's result
//! that repeats it (a contacts lookup answering `Contact with email 'x@evil.example' not
//! found`) does not. And a tool's result never vouches for a value its own call's arguments
//! carried ([`Provenance::observe_result`]): a lookup echoes what it was asked.
//!
//! **Limits** (per store, [`ProvenanceLimits`]): at most `max_values` stored values,
//! `max_text_bytes` bytes of their normalised texts, and `max_scan_bytes` bytes scanned per
//! observation (the rest of a longer observation is not read). When a limit is hit the store
//! is *incomplete* and fails closed from then on: a value it has not stored counts as
//! untrusted (it may be in what was not stored or not read), and trusted observations no
//! longer make anything user. Memory is bounded by about `max_values × 104 + max_text_bytes`
//! bytes (40 per value's entry, at most 64 per value in the index, which is at most half
//! full; about 3.8 MB with the defaults) plus at most 1024 tool names of ≤ 64 bytes.
//!
//! ```
//! use augur_gate::provenance::{ArgProvenance, Origin, Provenance};
//! let mut p = Provenance::new();
//! p.observe(Origin::User, "Please pay the bill in bill.txt");
//! p.observe(Origin::Tool { tool: "read_file", step: 0 }, "Send $98.70 to IBAN US133000000121212121212.");
//! let arg = serde_json::json!({"recipient": "us13 3000 0001 2121 2121 212", "file": "bill.txt"});
//! assert!(matches!(p.provenance_of(&arg["recipient"]), ArgProvenance::Untrusted(_)));
//! assert!(matches!(p.provenance_of(&arg["file"]), ArgProvenance::User(_)));
//! assert_eq!(p.provenance_of(&serde_json::json!("hello")), ArgProvenance::None);
//! let why = p.explain("recipient", &p.provenance_of(&arg["recipient"]));
//! assert_eq!(why, "recipient us133000000121212121212 first appeared in the result of `read_file` at step 0; the user's request does not contain it");
//! ```

mod canon;
mod index;
mod scan;
mod shapes;

use index::Index;
use rustc_hash::FxHashMap;
use scan::{
    amount_range, find, is_sep, json_leaves, number_leaf, scan, skip_www, string_leaf, trim_end,
    trim_tail, Found, HashKeys, Mode, NormBuf,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an observed text came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObservationSource {
    /// The user's request (trusted).
    User,
    /// The system prompt (trusted).
    System,
    /// A tool's result (untrusted unless a policy says otherwise).
    Tool,
}

/// Bytes of a stored value's text kept for reasons (longer values are cut, with `…`).
pub const DISPLAY_MAX: usize = 96;
/// Distinct tool names kept per store (more are named `(another tool)`).
pub const MAX_TOOLS: usize = 1024;
/// Bytes of a tool name kept.
const TOOL_NAME_MAX: usize = 64;

/// The kind of an extracted value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// An e-mail address.
    Email,
    /// A URL with a scheme.
    Url,
    /// A bare domain (or IPv4 address), possibly with a path.
    Domain,
    /// An IBAN.
    Iban,
    /// An account-like identifier (≥ 7 digits).
    Account,
    /// A phone number.
    Phone,
    /// A file path or file name.
    Path,
    /// A money amount (or a number leaf of an argument).
    Amount,
    /// The domain of an e-mail address (derived by the store, never by [`extract`]): as an
    /// observed value it is a host like any other (a fetch of `https://evil.example/` after
    /// a result naming `attacker@evil.example`); as the domain of an argument's e-mail
    /// address it counts only where the domain was seen as a host itself (a URL, a bare
    /// domain), not only inside other addresses: an address the model composed at a
    /// colleague's domain is not a value of the text that named the colleague.
    #[serde(rename = "mail_domain")]
    MailDomain,
    /// A parent domain of a host in an argument (`evil.example` of
    /// `https://mail.evil.example/`; derived by the store on the argument side only): a send
    /// to a subdomain of a host a result named carries a value of that result.
    #[serde(rename = "parent_domain")]
    ParentDomain,
    /// A distinctive token of no typed shape (issue 40, item 1): a code mixing letters and
    /// digits (`X7K9Q2`, `PROMO-2024`), a key, token or secret (`sk_live_4eC39HqLyjWDarjtT1zdp7dc`),
    /// a slug (`owner/name`), a host without a top-level domain (`http://intranet/`,
    /// `build-box:8080`, `root@build-box`).
    Token,
    /// A phrase of 2–8 words (issue 40, item 1): quoted in text (`"Project Nightshade
    /// launch"`), or a whole short text or argument string (a title): compared as a whole.
    Phrase,
}

impl ValueKind {
    /// Derived by the store from another value of an argument (an address's domain, a host's
    /// parent), not found in text as such.
    pub fn derived(self) -> bool {
        matches!(self, ValueKind::MailDomain | ValueKind::ParentDomain)
    }

    /// A value of a typed shape (an address, a URL, a host, an IBAN, an identifier with
    /// digits, a phone number, a path, an amount), not one of the shapes of issue 40's item 1
    /// ([`ValueKind::Token`], [`ValueKind::Phrase`]): what the AgentDojo converter takes as
    /// identifiers of an attacker's call, as it did before that item.
    pub fn typed(self) -> bool {
        !matches!(self, ValueKind::Token | ValueKind::Phrase)
    }

    /// Its name (`email`, `url`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Email => "email",
            ValueKind::Url => "url",
            ValueKind::Domain => "domain",
            ValueKind::MailDomain => "mail domain",
            ValueKind::ParentDomain => "parent domain",
            ValueKind::Iban => "iban",
            ValueKind::Account => "account",
            ValueKind::Phone => "phone",
            ValueKind::Path => "path",
            ValueKind::Amount => "amount",
            ValueKind::Token => "token",
            ValueKind::Phrase => "phrase",
        }
    }
}

/// A value extracted and normalised (the allocating form, for converters and tests).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Extracted {
    /// Its kind.
    pub kind: ValueKind,
    /// Its normalised text.
    pub text: String,
}

/// Every value of `text`, normalised, in order of appearance, without duplicates.
pub fn extract(text: &str) -> Vec<Extracted> {
    let mut out: Vec<Extracted> = Vec::new();
    let mut buf = Vec::new();
    scan(text.as_bytes(), &mut |f: Found| {
        buf.clear();
        buf.extend(f.bytes(text.as_bytes()));
        let t = String::from_utf8_lossy(&buf).into_owned();
        if !out.iter().any(|x| x.text == t) {
            out.push(Extracted {
                kind: f.kind,
                text: t,
            });
        }
    });
    out
}

/// Every value of every string and number leaf of `v` (object keys are not read).
pub fn extract_json(v: &Value) -> Vec<Extracted> {
    let mut out: Vec<Extracted> = Vec::new();
    let mut buf = Vec::new();
    json_leaves(v, &mut |bytes: &[u8], f: Found| {
        buf.clear();
        buf.extend(f.bytes(bytes));
        let t = String::from_utf8_lossy(&buf).into_owned();
        if !out.iter().any(|x| x.text == t) {
            out.push(Extracted {
                kind: f.kind,
                text: t,
            });
        }
    });
    out
}

/// The normalised form of `raw` taken as a value of `kind` (what the scanner stores for it).
/// Idempotent: `normalise(k, &normalise(k, s)) == normalise(k, s)`.
pub fn normalise(kind: ValueKind, raw: &str) -> String {
    let mut t = raw.as_bytes();
    loop {
        let u = t.trim_ascii();
        let u = &u[..trim_end(u, 0, u.len())];
        if u.len() == t.len() {
            break;
        }
        t = u;
    }
    let mode = match kind {
        ValueKind::Email | ValueKind::Path | ValueKind::Phrase => Mode::Lower,
        ValueKind::Token => shapes::token_mode(t),
        ValueKind::Url | ValueKind::Domain | ValueKind::MailDomain | ValueKind::ParentDomain => {
            Mode::Lower
        }
        ValueKind::Iban => Mode::AlnumLower,
        ValueKind::Account => {
            if t.iter().any(u8::is_ascii_alphabetic) {
                Mode::AlnumLower
            } else {
                Mode::Digits
            }
        }
        ValueKind::Phone => Mode::Digits,
        ValueKind::Amount => Mode::Amount,
    };
    let (mut a, mut b) = (0, t.len());
    match kind {
        ValueKind::Url | ValueKind::Domain | ValueKind::MailDomain | ValueKind::ParentDomain => {
            if let Some(p) = find(t, b"://") {
                a = p + 3;
            }
            a = skip_www(t, a, b);
            b = trim_tail(t, a, b, true);
        }
        ValueKind::Email => {
            if t.len() > 7 && t[..7].eq_ignore_ascii_case(b"mailto:") {
                a = 7;
            }
        }
        ValueKind::Path => b = trim_tail(t, a, b, true),
        ValueKind::Amount => {
            let digits: Vec<u8> = t.iter().filter_map(|&x| Mode::Amount.map(x)).collect();
            return match amount_range(&digits, 0, digits.len()) {
                Some((x, y)) => String::from_utf8_lossy(&digits[x..y]).into_owned(),
                None => String::new(),
            };
        }
        ValueKind::Iban
        | ValueKind::Account
        | ValueKind::Phone
        | ValueKind::Token
        | ValueKind::Phrase => {}
    }
    let f = Found {
        kind,
        start: a,
        end: b,
        mode,
    };
    String::from_utf8_lossy(&f.bytes(t).collect::<Vec<u8>>()).into_owned()
}

/// Every value the store reads in (canonical) text: the scanner's, and for an e-mail
/// address its domain too (a domain is a host whoever names it: a send to `x@evil.example`
/// after a result naming `evil.example` carries a value of that result).
fn store_values(text: &[u8], out: &mut impl FnMut(Found)) {
    scan(text, &mut |f: Found| {
        out(f);
        email_domain(text, &f, &mut |d| out(d));
    });
}

/// The domain of an e-mail address found at `f`.
fn email_domain(text: &[u8], f: &Found, out: &mut impl FnMut(Found)) {
    if f.kind != ValueKind::Email {
        return;
    }
    if let Some(at) = text[f.start..f.end].iter().rposition(|&b| b == b'@') {
        let a = f.start + at + 1;
        if a < f.end {
            out(Found {
                kind: ValueKind::MailDomain,
                start: a,
                end: f.end,
                mode: Mode::Lower,
            });
        }
    }
}

/// The parent domains of the host of a value found in an argument (an address's domain, a
/// URL's or bare domain's host), down to two labels, except a two-label parent that is a
/// public registry's own (`co.uk`, `com.au`: a second-level label of at most three letters
/// under a two-letter top-level one).
fn parent_domains(text: &[u8], f: &Found, out: &mut impl FnMut(Found)) {
    let (mut a, end) = match f.kind {
        ValueKind::Email => match text[f.start..f.end].iter().rposition(|&b| b == b'@') {
            Some(at) => (f.start + at + 1, f.end),
            None => return,
        },
        ValueKind::Url | ValueKind::Domain => (f.start, f.end),
        _ => return,
    };
    let host_end = a + text[a..end]
        .iter()
        .position(|&b| matches!(b, b'/' | b':' | b'?' | b'#'))
        .unwrap_or(end - a);
    let host = &text[a..host_end];
    if host.first().is_some_and(u8::is_ascii_digit)
        && host.iter().all(|b| b.is_ascii_digit() || *b == b'.')
    {
        return; // an IPv4 address has no parents
    }
    while let Some(dot) = text[a..host_end].iter().position(|&b| b == b'.') {
        let p = a + dot + 1;
        let rest = &text[p..host_end];
        let dots = rest.iter().filter(|&&b| b == b'.').count();
        if dots == 0 {
            break;
        }
        if dots == 1 {
            let (sld, tld) = rest.split_at(rest.iter().position(|&b| b == b'.').unwrap_or(0));
            if tld.len() == 3 && sld.len() <= 3 {
                break;
            }
        }
        out(Found {
            kind: ValueKind::ParentDomain,
            start: p,
            end: host_end,
            mode: Mode::Lower,
        });
        a = p;
    }
}

/// The leaves of an argument as the store reads them: each string in its canonical form
/// (see `canon`), e-mail domains included ([`store_values`]). Allocates only for a string
/// that needs rewriting.
fn canonical_leaves(v: &Value, out: &mut impl FnMut(&[u8], Found)) {
    let (mut buf, mut tmp) = (Vec::new(), Vec::new());
    canonical_leaves_with(v, &mut buf, &mut tmp, out);
}

fn canonical_leaves_with(
    v: &Value,
    buf: &mut Vec<u8>,
    tmp: &mut Vec<u8>,
    out: &mut impl FnMut(&[u8], Found),
) {
    match v {
        Value::String(s) => {
            let bytes: &[u8] = if canon::canonical(s.as_bytes(), buf, tmp) {
                buf
            } else {
                s.as_bytes()
            };
            string_leaf(bytes, &mut |b: &[u8], f: Found| {
                out(b, f);
                email_domain(b, &f, &mut |d| out(b, d));
                parent_domains(b, &f, &mut |d| out(b, d));
            });
        }
        Value::Number(n) => number_leaf(n, out),
        Value::Array(a) => a
            .iter()
            .for_each(|x| canonical_leaves_with(x, buf, tmp, out)),
        Value::Object(m) => m
            .values()
            .for_each(|x| canonical_leaves_with(x, buf, tmp, out)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// Where an observation came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin<'a> {
    /// The user's request (trusted).
    User,
    /// The system prompt (trusted).
    System,
    /// The result of a tool a policy marks trusted, at step `step`.
    TrustedTool {
        /// The tool.
        tool: &'a str,
        /// The step (0-based index of the call).
        step: u32,
    },
    /// The result of tool `tool` at step `step` (untrusted).
    Tool {
        /// The tool.
        tool: &'a str,
        /// The step (0-based index of the call).
        step: u32,
    },
    /// The arguments the agent gave a call to `tool` at step `step` (issue 40, item 4): a
    /// value first seen there is the agent's own, and stays so when results repeat it.
    Agent {
        /// The tool.
        tool: &'a str,
        /// The step (0-based index of the call).
        step: u32,
    },
}

impl Origin<'_> {
    /// Is text from here trusted?
    pub fn trusted(&self) -> bool {
        !matches!(self, Origin::Tool { .. } | Origin::Agent { .. })
    }
}

/// Where a value was seen: the origin's kind, the tool (an index into the store's names) and
/// the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sighting {
    /// What kind of origin.
    pub origin: OriginKind,
    tool: u32,
    /// The step of the tool call whose result held it (0 for the user and system).
    pub step: u32,
}

/// The kind of an [`Origin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OriginKind {
    /// The user's request.
    User,
    /// The system prompt.
    System,
    /// A trusted tool's result.
    TrustedTool,
    /// An untrusted tool's result.
    Tool,
    /// The agent's own arguments to a call.
    Agent,
}

/// What the store knows of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The stored value (see [`Provenance::value_text`]); `None` when the store does not hold
    /// it.
    pub id: Option<u32>,
    /// Its kind as first stored (or as found in the argument when it is not stored).
    pub kind: ValueKind,
    /// Its first trusted sighting.
    pub trusted: Option<Sighting>,
    /// Its first untrusted sighting.
    pub untrusted: Option<Sighting>,
    /// Not stored, counted as untrusted because the store is incomplete (a limit was hit).
    pub at_cap: bool,
    /// Its first sighting in the agent's own arguments, when that came before any untrusted
    /// one (the value is the agent's).
    pub agent: Option<Sighting>,
}

/// An argument's provenance, with the value that decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgProvenance {
    /// No value of the argument was seen anywhere (the model wrote it).
    None,
    /// A value occurs in trusted text, and no value occurs only in untrusted text.
    User(Evidence),
    /// A value occurs only in untrusted text (or is unknown to an incomplete store).
    Untrusted(Evidence),
    /// No value occurs in trusted or untrusted text before the agent wrote it: a value the
    /// agent chose in an earlier call (a path it cloned to, a file it wrote), repeated since
    /// by results perhaps. As [`ArgProvenance::None`] for the risk, with its own reason.
    Agent(Evidence),
}

impl ArgProvenance {
    /// `none`, `user` or `untrusted`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ArgProvenance::None => "none",
            ArgProvenance::User(_) => "user",
            ArgProvenance::Untrusted(_) => "untrusted",
            ArgProvenance::Agent(_) => "agent",
        }
    }
}

/// Per-store limits (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvenanceLimits {
    /// Distinct values stored (default 16,384).
    pub max_values: usize,
    /// Bytes scanned per observation (default 1 MiB).
    pub max_scan_bytes: usize,
    /// Bytes of stored values' normalised texts (default 2 MiB; at most 4 GiB are used).
    pub max_text_bytes: usize,
}

impl Default for ProvenanceLimits {
    fn default() -> Self {
        ProvenanceLimits {
            max_values: 16_384,
            max_scan_bytes: 1 << 20,
            max_text_bytes: 2 << 20,
        }
    }
}

/// Why a store is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Incomplete {
    /// `max_values` values (or `max_text_bytes` bytes of their texts) are stored; more were
    /// seen.
    Values,
    /// An observation was longer than `max_scan_bytes`; its rest was not read.
    Bytes,
}

#[derive(Clone, Debug)]
struct Entry {
    kind: ValueKind,
    /// Its normalised text: `texts[text_start..text_start + text_len]`.
    text_start: u32,
    text_len: u32,
    /// The next stored value with the same key ([`NO_ENTRY`]: none).
    next: u32,
    trusted: Option<Sighting>,
    /// Its first untrusted sighting, or its first sighting in the agent's own arguments
    /// (origin [`OriginKind::Agent`]) when that came first: then the value is the agent's
    /// and later untrusted sightings are not recorded (one slot keeps an entry at 40 bytes).
    untrusted: Option<Sighting>,
    /// Seen as a host itself (a URL's host or a bare domain), not only as an e-mail's domain.
    host: bool,
}

impl Entry {
    /// The first untrusted sighting (not the agent's).
    fn untrusted(&self) -> Option<Sighting> {
        self.untrusted.filter(|s| s.origin != OriginKind::Agent)
    }

    /// The first sighting in the agent's own arguments, when it came before any untrusted one.
    fn agent(&self) -> Option<Sighting> {
        self.untrusted.filter(|s| s.origin == OriginKind::Agent)
    }
}

const NO_ENTRY: u32 = u32::MAX;

/// A found value's normalised bytes (in a [`NormBuf`] when they fit) and key.
struct Keyed<'a> {
    key: u64,
    /// The normalised bytes; `None` for a value too long for the buffer (then compared and
    /// written from the scanned text).
    norm: Option<&'a [u8]>,
}

impl<'a> Keyed<'a> {
    /// Normalise `f` once (into `buf` when it fits) and key it; `None` when it is empty.
    #[inline]
    fn new(f: &Found, text: &[u8], keys: HashKeys, buf: &'a mut NormBuf) -> Option<Keyed<'a>> {
        match f.normalise_into(text, buf) {
            Some(len) => {
                let key = buf.key(len, keys)?;
                Some(Keyed {
                    key,
                    norm: Some(&buf.0[..len]),
                })
            }
            None => Some(Keyed {
                key: f.key(text, keys)?,
                norm: None,
            }),
        }
    }

    #[inline]
    fn eq(&self, f: &Found, text: &[u8], stored: &[u8]) -> bool {
        match self.norm {
            Some(n) => scan::eq_bytes(n, stored),
            None => f.eq_normalised(text, stored),
        }
    }
}

/// The stored value that is `f` (keyed `k`): the chain of values with that key, compared
/// by normalised text.
#[inline]
fn lookup(
    index: &Index,
    entries: &[Entry],
    texts: &[u8],
    k: &Keyed<'_>,
    f: &Found,
    text: &[u8],
) -> Option<u32> {
    let mut i = index.get(k.key)?;
    while i != NO_ENTRY {
        let e = &entries[i as usize];
        let start = e.text_start as usize;
        if k.eq(f, text, &texts[start..start + e.text_len as usize]) {
            return Some(i);
        }
        i = e.next;
    }
    None
}

/// What one observation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObserveStats {
    /// Values found (with repeats).
    pub found: usize,
    /// Values stored for the first time.
    pub new: usize,
    /// Bytes scanned.
    pub scanned: usize,
    /// Bytes not read (beyond `max_scan_bytes`).
    pub skipped: usize,
}

/// The values a session has seen and where (see the module documentation).
#[derive(Clone, Debug)]
pub struct Provenance {
    limits: ProvenanceLimits,
    /// This store's hash secret.
    keys: HashKeys,
    /// Key → the last stored value with that key (the others follow its `next` chain).
    index: Index,
    entries: Vec<Entry>,
    /// The stored values' normalised texts, one after the other (one allocation, grown by
    /// doubling).
    texts: Vec<u8>,
    tools: Vec<Box<str>>,
    tool_ids: FxHashMap<Box<str>, u32>,
    incomplete: Option<Incomplete>,
    /// Scratch space for canonical forms of observed text (reused: an observation allocates
    /// only while they grow).
    canon: (Vec<u8>, Vec<u8>),
    /// Untrusted text was observed (whether or not it held a value).
    untrusted_seen: bool,
}

impl Default for Provenance {
    fn default() -> Self {
        Provenance::new()
    }
}

const OTHER_TOOL: u32 = u32::MAX;

impl Provenance {
    /// An empty store with the default limits.
    pub fn new() -> Provenance {
        Provenance::with_limits(ProvenanceLimits::default())
    }

    /// An empty store with these limits.
    pub fn with_limits(limits: ProvenanceLimits) -> Provenance {
        Provenance::with_keys(limits, HashKeys::random())
    }

    fn with_keys(limits: ProvenanceLimits, keys: HashKeys) -> Provenance {
        Provenance {
            limits,
            keys,
            index: Index::default(),
            entries: Vec::new(),
            texts: Vec::new(),
            tools: Vec::new(),
            tool_ids: FxHashMap::default(),
            incomplete: None,
            canon: (Vec::new(), Vec::new()),
            untrusted_seen: false,
        }
    }

    /// Its limits.
    pub fn limits(&self) -> ProvenanceLimits {
        self.limits
    }

    /// Distinct values stored.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No value stored?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether untrusted text (an untrusted tool's result) was observed, whether or not it
    /// held a value: what the fallback for values the store cannot trace asks (a destination
    /// no text held, in a session that read untrusted text, may be a rewrite of one).
    pub fn seen_untrusted(&self) -> bool {
        self.untrusted_seen
    }

    /// Why the store is incomplete (a limit was hit), if it is: then unknown values count as
    /// untrusted and trusted observations make nothing user.
    pub fn incomplete(&self) -> Option<Incomplete> {
        self.incomplete
    }

    fn tool_id(&mut self, tool: &str) -> u32 {
        let tool = &tool[..floor_char_boundary(tool, TOOL_NAME_MAX)];
        if let Some(&i) = self.tool_ids.get(tool) {
            return i;
        }
        if self.tools.len() >= MAX_TOOLS {
            return OTHER_TOOL;
        }
        let i = self.tools.len() as u32;
        self.tools.push(tool.into());
        self.tool_ids.insert(tool.into(), i);
        i
    }

    /// Observe text the agent saw.
    pub fn observe(&mut self, origin: Origin<'_>, text: &str) -> ObserveStats {
        self.observe_bytes(origin, text.as_bytes())
    }

    /// Observe bytes the agent saw (invalid UTF-8 is read as it is).
    pub fn observe_bytes(&mut self, origin: Origin<'_>, text: &[u8]) -> ObserveStats {
        self.observe_inner(origin, text, &[])
    }

    /// Observe a tool's result, `args` being the call's own arguments (see the module
    /// documentation, "No laundering"): a trusted tool's result vouches for none of the values
    /// its own call carried (a lookup that answers `no contact with email 'x@evil.example'`
    /// echoes what it was asked), so those values are not made the user's by it.
    pub fn observe_result(
        &mut self,
        origin: Origin<'_>,
        text: &[u8],
        args: &Value,
    ) -> ObserveStats {
        // The call ran: a value its arguments carried that no text held before is the
        // agent's own (issue 40, item 4).
        if let Origin::TrustedTool { tool, step } | Origin::Tool { tool, step } = origin {
            self.observe_agent(tool, step, args);
        }
        if !matches!(origin, Origin::TrustedTool { .. }) {
            return self.observe_inner(origin, text, &[]);
        }
        // The call's own values, normalised (a trusted tool is rare: this allocates).
        let mut own: Vec<(u64, Vec<u8>)> = Vec::new();
        let keys = self.keys;
        canonical_leaves(args, &mut |bytes: &[u8], f: Found| {
            let mut buf = NormBuf::new();
            let Some(k) = Keyed::new(&f, bytes, keys, &mut buf) else {
                return;
            };
            let norm = match k.norm {
                Some(n) => n.to_vec(),
                None => {
                    let mut v = Vec::new();
                    f.write_normalised(bytes, &mut v);
                    v
                }
            };
            own.push((k.key, norm));
        });
        self.observe_inner(origin, text, &own)
    }

    /// Record the values of the arguments the agent gave a call to `tool` at step `step`
    /// (string leaves; see [`Origin::Agent`]): a value no text held before is the agent's
    /// own from then on; a value already seen keeps its sightings.
    pub fn observe_agent(&mut self, tool: &str, step: u32, args: &Value) {
        match args {
            Value::String(s) => {
                self.observe_inner(Origin::Agent { tool, step }, s.as_bytes(), &[]);
            }
            Value::Array(a) => a.iter().for_each(|x| self.observe_agent(tool, step, x)),
            Value::Object(m) => m.values().for_each(|x| self.observe_agent(tool, step, x)),
            _ => {}
        }
    }

    fn observe_inner(
        &mut self,
        origin: Origin<'_>,
        text: &[u8],
        own: &[(u64, Vec<u8>)],
    ) -> ObserveStats {
        let (kind, tool, step) = match origin {
            Origin::User => (OriginKind::User, OTHER_TOOL, 0),
            Origin::System => (OriginKind::System, OTHER_TOOL, 0),
            Origin::TrustedTool { tool, step } => {
                (OriginKind::TrustedTool, self.tool_id(tool), step)
            }
            Origin::Tool { tool, step } => (OriginKind::Tool, self.tool_id(tool), step),
            Origin::Agent { tool, step } => (OriginKind::Agent, self.tool_id(tool), step),
        };
        let agent = kind == OriginKind::Agent;
        if kind == OriginKind::Tool {
            self.untrusted_seen = true;
        }
        let sighting = Sighting {
            origin: kind,
            tool,
            step,
        };
        let trusted = origin.trusted();
        // Only the user's own text (the request, the system prompt) may make a value first
        // seen in untrusted text the user's; a trusted tool that repeats it may not.
        let user_text = matches!(origin, Origin::User | Origin::System);
        let mut stats = ObserveStats::default();
        let scanned = if text.len() > self.limits.max_scan_bytes {
            // Cut at a separator when one is near, so the last token is not a fragment.
            let mut cut = self.limits.max_scan_bytes;
            let floor = cut.saturating_sub(256);
            while cut > floor && !is_sep(text[cut]) {
                cut -= 1;
            }
            if cut == floor {
                cut = self.limits.max_scan_bytes;
            }
            self.incomplete.get_or_insert(Incomplete::Bytes);
            stats.skipped = text.len() - cut;
            &text[..cut]
        } else {
            text
        };
        stats.scanned = scanned.len();
        // The canonical form of the text (see `canon`), when it differs.
        let (mut canon_out, mut canon_tmp) = std::mem::take(&mut self.canon);
        let scanned: &[u8] = if canon::canonical(scanned, &mut canon_out, &mut canon_tmp) {
            &canon_out
        } else {
            scanned
        };
        // Room for a new value per 64 bytes read (within the cap), so that a value-dense
        // result does not grow the table step by step; reserved when the first new value is
        // stored (an observation of stored values allocates nothing).
        let room =
            (scanned.len() / 64).min(self.limits.max_values.saturating_sub(self.entries.len()));
        let mut reserved = false;
        let Provenance {
            limits,
            keys,
            index,
            entries,
            incomplete,
            texts,
            ..
        } = self;
        let keys = *keys;
        let mut buf = NormBuf::new();
        store_values(scanned, &mut |f: Found| {
            let Some(k) = Keyed::new(&f, scanned, keys, &mut buf) else {
                return;
            };
            stats.found += 1;
            // A value the call's own arguments carried: the result does not vouch for it.
            let echoed = !own.is_empty()
                && own
                    .iter()
                    .any(|(key, norm)| *key == k.key && k.eq(&f, scanned, norm));
            if let Some(i) = lookup(index, entries, texts, &k, &f, scanned) {
                let e = &mut entries[i as usize];
                e.host |= f.kind == ValueKind::Domain;
                if trusted {
                    let vouched = user_text || (e.untrusted.is_none() && !echoed);
                    if e.trusted.is_none() && incomplete.is_none() && vouched {
                        e.trusted = Some(sighting);
                    }
                } else if !agent && e.untrusted.is_none() {
                    // A value the agent wrote first stays the agent's when results repeat it
                    // (its slot holds the agent's sighting).
                    e.untrusted = Some(sighting);
                }
                return;
            }
            if echoed {
                // Not stored: it is as unknown as before the call (the model wrote it, or it
                // came from somewhere the store has not seen).
                return;
            }
            if entries.len() >= limits.max_values {
                *incomplete = Some(Incomplete::Values);
                return;
            }
            if trusted && incomplete.is_some() {
                // A trusted sighting of a new value cannot be kept as user once incomplete;
                // leave it unknown (counts as untrusted).
                return;
            }
            let text_start = texts.len();
            // The raw length bounds the normalised one.
            let budget = limits.max_text_bytes.min(u32::MAX as usize);
            if f.end - f.start > budget.saturating_sub(text_start) {
                *incomplete = Some(Incomplete::Values);
                return;
            }
            if !reserved {
                reserved = true;
                if entries.capacity() - entries.len() < room {
                    entries.reserve(room);
                    index.reserve(room);
                    texts.reserve(room * 32);
                }
            }
            match k.norm {
                Some(n) => texts.extend_from_slice(n),
                None => f.write_normalised(scanned, texts),
            }
            let id = entries.len() as u32;
            let next = index.insert(k.key, id).unwrap_or(NO_ENTRY);
            entries.push(Entry {
                kind: f.kind,
                text_start: text_start as u32,
                text_len: (texts.len() - text_start) as u32,
                next,
                trusted: trusted.then_some(sighting),
                untrusted: (!trusted).then_some(sighting),
                host: f.kind == ValueKind::Domain,
            });
            stats.new += 1;
        });
        self.canon = (canon_out, canon_tmp);
        stats
    }

    /// What the store knows of the value `f` of `text`.
    fn evidence(&self, f: &Found, text: &[u8]) -> Option<Evidence> {
        let mut buf = NormBuf::new();
        let k = Keyed::new(f, text, self.keys, &mut buf)?;
        Some(
            match lookup(&self.index, &self.entries, &self.texts, &k, f, text) {
                // An argument's e-mail domain counts only where it was seen as a host.
                Some(i) if f.kind == ValueKind::MailDomain && !self.entries[i as usize].host => {
                    return None
                }
                Some(i) => {
                    let e = &self.entries[i as usize];
                    Evidence {
                        id: Some(i),
                        kind: e.kind,
                        trusted: e.trusted,
                        untrusted: e.untrusted(),
                        at_cap: false,
                        agent: e.agent(),
                    }
                }
                None if f.kind.derived() => return None,
                None => Evidence {
                    id: None,
                    kind: f.kind,
                    trusted: None,
                    untrusted: None,
                    at_cap: self.incomplete.is_some(),
                    agent: None,
                },
            },
        )
    }

    /// The provenance of an argument (every string and number leaf of `v`; see the module
    /// documentation). Does not allocate.
    pub fn provenance_of(&self, v: &Value) -> ArgProvenance {
        let mut user = None;
        let mut untrusted = None;
        let mut agent = None;
        // Whether the value the next derived ones come from is the user's: then its domain
        // and parents say nothing more.
        let mut primary_user = false;
        canonical_leaves(v, &mut |bytes: &[u8], f: Found| {
            if untrusted.is_some() || (f.kind.derived() && primary_user) {
                return;
            }
            let ev = self.evidence(&f, bytes);
            if !f.kind.derived() {
                primary_user = ev.is_some_and(|e| e.trusted.is_some());
            }
            let Some(ev) = ev else {
                return;
            };
            if ev.trusted.is_some() {
                user.get_or_insert(ev);
            } else if ev.untrusted.is_some() || ev.at_cap {
                untrusted = Some(ev);
            } else if ev.agent.is_some() {
                agent.get_or_insert(ev);
            }
        });
        match (untrusted, user, agent) {
            (Some(e), _, _) => ArgProvenance::Untrusted(e),
            (None, Some(e), _) => ArgProvenance::User(e),
            (None, None, Some(e)) => ArgProvenance::Agent(e),
            (None, None, None) => ArgProvenance::None,
        }
    }

    /// Each value of an argument with what the store knows of it.
    pub fn values_of(&self, v: &Value, f: &mut impl FnMut(Evidence)) {
        canonical_leaves(v, &mut |bytes: &[u8], found: Found| {
            if found.kind.derived() {
                return;
            }
            if let Some(e) = self.evidence(&found, bytes) {
                f(e);
            }
        });
    }

    /// A stored value's normalised text, for a person: cut at [`DISPLAY_MAX`] bytes (`…`
    /// after a longer value), invalid UTF-8 replaced.
    pub fn value_text(&self, id: u32) -> Option<String> {
        let e = self.entries.get(id as usize)?;
        let start = e.text_start as usize;
        let t = self.texts.get(start..start + e.text_len as usize)?;
        let mut s = String::from_utf8_lossy(&t[..t.len().min(DISPLAY_MAX)]).into_owned();
        if t.len() > DISPLAY_MAX {
            s.push('…');
        }
        Some(s)
    }

    /// The tool of a sighting (`None` for the user and system prompt).
    pub fn tool_name(&self, s: &Sighting) -> Option<&str> {
        match s.origin {
            OriginKind::User | OriginKind::System => None,
            _ => Some(
                self.tools
                    .get(s.tool as usize)
                    .map_or("(another tool)", |t| &**t),
            ),
        }
    }

    /// Where a sighting was, for a person: "the user's request", "the result of `read_file`
    /// at step 2".
    pub fn describe(&self, s: &Sighting) -> String {
        match s.origin {
            OriginKind::User => "the user's request".into(),
            OriginKind::System => "the system prompt".into(),
            OriginKind::TrustedTool | OriginKind::Tool => format!(
                "the result of `{}` at step {}",
                self.tool_name(s).unwrap_or_default(),
                s.step
            ),
            OriginKind::Agent => format!(
                "the agent's own arguments to `{}` at step {}",
                self.tool_name(s).unwrap_or_default(),
                s.step
            ),
        }
    }

    /// A reason for an argument's provenance, e.g. "recipient us13… first appeared in the
    /// result of `read_file` at step 2; the user's request does not contain it".
    pub fn explain(&self, arg: &str, p: &ArgProvenance) -> String {
        self.explain_with(arg, p, false)
    }

    /// [`Provenance::explain`] with the value masked ([`mask_value`]) when `mask` is set: what
    /// an audit log writes.
    pub fn explain_with(&self, arg: &str, p: &ArgProvenance, mask: bool) -> String {
        let text = |e: &Evidence| {
            e.id.and_then(|i| self.value_text(i))
                .map(|t| if mask { mask_value(&t) } else { t })
                .unwrap_or_else(|| "(a value not stored)".to_string())
        };
        match p {
            ArgProvenance::None => format!("{arg}: no value of it was seen before (written by the model)"),
            ArgProvenance::User(e) => {
                let s = e.trusted.map(|s| self.describe(&s)).unwrap_or_default();
                format!("{arg} {} occurs in {s}", text(e))
            }
            ArgProvenance::Agent(e) => {
                let s = e.agent.map(|s| self.describe(&s)).unwrap_or_default();
                format!(
                    "{arg} {} is the agent's own value: it first appeared in {s}, before any tool result held it",
                    text(e)
                )
            }
            ArgProvenance::Untrusted(e) => match e.untrusted {
                Some(s) => format!(
                    "{arg} {} first appeared in {}; the user's request does not contain it",
                    text(e),
                    self.describe(&s)
                ),
                None => format!(
                    "{arg} holds a {} value not stored: the provenance store is at its limit (fails closed)",
                    e.kind.as_str()
                ),
            },
        }
    }
}

/// A value as an audit log shows it: its first two characters and a digest of the whole,
/// `ma…#5f1e09c2` (the first 8 hex digits of the SHA-256 of the text given), so that lines can
/// be matched with each other and with the person's answer without the log holding the value.
pub fn mask_value(text: &str) -> String {
    let head: String = text.chars().take(2).collect();
    let digest = crate::sha256_hex([text.as_bytes()]);
    format!("{head}…#{}", &digest[..8])
}

/// A sighting as plain data ([`ProvenanceSnapshot`]): the origin's kind, the index of its
/// tool in [`ProvenanceSnapshot::tools`] (absent for the user, the system prompt and tools
/// beyond [`MAX_TOOLS`]) and the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedSighting {
    /// The origin's kind.
    pub origin: OriginKind,
    /// The tool's index in the snapshot's `tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<u32>,
    /// The step.
    pub step: u32,
}

/// One stored value as plain data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedValue {
    /// Its kind.
    pub kind: ValueKind,
    /// Its whole normalised text (what a lookup compares; the hash key is not saved: it
    /// depends on the store's secret, drawn anew by the store that reads the snapshot).
    pub text: String,
    /// Its first trusted sighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted: Option<SavedSighting>,
    /// Its first untrusted sighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<SavedSighting>,
    /// Its first sighting in the agent's own arguments (the value is the agent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<SavedSighting>,
}

/// Everything a [`Provenance`] store holds, as plain data: what a process that keeps a
/// session between runs (`augur hook claude-code --state FILE`) saves and reads back with
/// [`Provenance::from_snapshot`]. Values are in the order of their texts, so equal stores
/// save equally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvenanceSnapshot {
    /// The store's limits.
    pub limits: ProvenanceLimits,
    /// Why it is incomplete, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// Untrusted text was observed ([`Provenance::seen_untrusted`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untrusted_seen: bool,
    /// The tool names sightings refer to, in order of first sighting.
    pub tools: Vec<String>,
    /// The stored values.
    pub values: Vec<SavedValue>,
}

impl Provenance {
    /// The store as plain data (see [`ProvenanceSnapshot`]).
    pub fn snapshot(&self) -> ProvenanceSnapshot {
        let saved = |s: Option<Sighting>| {
            s.map(|s| SavedSighting {
                origin: s.origin,
                tool: (s.tool != OTHER_TOOL).then_some(s.tool),
                step: s.step,
            })
        };
        let mut values: Vec<SavedValue> = self
            .entries
            .iter()
            .map(|e| {
                let start = e.text_start as usize;
                let text = &self.texts[start..start + e.text_len as usize];
                SavedValue {
                    kind: e.kind,
                    text: String::from_utf8_lossy(text).into_owned(),
                    trusted: saved(e.trusted),
                    untrusted: saved(e.untrusted()),
                    agent: saved(e.agent()),
                }
            })
            .collect();
        values.sort_by(|a, b| (&a.text, a.kind as u8).cmp(&(&b.text, b.kind as u8)));
        ProvenanceSnapshot {
            limits: self.limits,
            incomplete: self.incomplete,
            untrusted_seen: self.untrusted_seen,
            tools: self.tools.iter().map(|t| t.to_string()).collect(),
            values,
        }
    }

    /// The store a snapshot holds, under a fresh secret. Errors, with the reason, for a
    /// snapshot that no store could have written: more values, text or tools than its limits
    /// allow, a value twice, a sighting of a tool not in `tools` (or a tool on a user or system
    /// sighting), a trusted sighting of an untrusted origin or the reverse.
    pub fn from_snapshot(snap: &ProvenanceSnapshot) -> std::result::Result<Provenance, String> {
        if snap.values.len() > snap.limits.max_values {
            return Err(format!(
                "{} values stored, beyond the limit of {}",
                snap.values.len(),
                snap.limits.max_values
            ));
        }
        let text_bytes: usize = snap.values.iter().map(|v| v.text.len()).sum();
        if text_bytes > snap.limits.max_text_bytes {
            return Err(format!(
                "{text_bytes} bytes of value text, beyond the limit of {}",
                snap.limits.max_text_bytes
            ));
        }
        if snap.tools.len() > MAX_TOOLS {
            return Err(format!(
                "{} tool names, beyond the limit of {MAX_TOOLS}",
                snap.tools.len()
            ));
        }
        let mut p = Provenance::with_limits(snap.limits);
        p.incomplete = snap.incomplete;
        p.untrusted_seen = snap.untrusted_seen || snap.values.iter().any(|v| v.untrusted.is_some());
        for t in &snap.tools {
            let t = &t[..floor_char_boundary(t, TOOL_NAME_MAX)];
            if p.tool_ids.contains_key(t) {
                return Err(format!("the tool name `{t}` is listed twice"));
            }
            let i = p.tools.len() as u32;
            p.tools.push(t.into());
            p.tool_ids.insert(t.into(), i);
        }
        let tools = p.tools.len();
        let sighting = |s: Option<SavedSighting>, trusted: bool, which: usize| {
            let Some(s) = s else { return Ok(None) };
            let ok_origin = match s.origin {
                OriginKind::User | OriginKind::System => trusted && s.tool.is_none(),
                OriginKind::TrustedTool => trusted,
                OriginKind::Tool | OriginKind::Agent => !trusted,
            };
            if !ok_origin {
                return Err(format!(
                    "value {which}: a {} sighting cannot come from {:?}{}",
                    if trusted { "trusted" } else { "untrusted" },
                    s.origin,
                    if s.tool.is_some() { " with a tool" } else { "" }
                ));
            }
            let tool = match s.tool {
                None => OTHER_TOOL,
                Some(i) if (i as usize) < tools => i,
                Some(i) => {
                    return Err(format!(
                        "value {which}: tool {i} is not one of the {tools} tool names"
                    ))
                }
            };
            Ok(Some(Sighting {
                origin: s.origin,
                tool,
                step: s.step,
            }))
        };
        for (which, v) in snap.values.iter().enumerate() {
            let trusted = sighting(v.trusted, true, which)?;
            let untrusted = sighting(v.untrusted, false, which)?;
            let agent = sighting(v.agent, false, which)?;
            if untrusted.is_some_and(|s| s.origin == OriginKind::Agent)
                || agent.is_some_and(|s| s.origin != OriginKind::Agent)
            {
                return Err(format!(
                    "value {which}: an agent sighting belongs in `agent`, and only there"
                ));
            }
            if trusted.is_none() && untrusted.is_none() && agent.is_none() {
                return Err(format!("value {which}: no sighting"));
            }
            if untrusted.is_some() && agent.is_some() {
                return Err(format!(
                    "value {which}: an untrusted and an agent sighting (the first one stays)"
                ));
            }
            let untrusted = untrusted.or(agent);
            let bytes = v.text.as_bytes();
            let Some(key) = scan::key_of_bytes(bytes, p.keys) else {
                return Err(format!("value {which}: an empty text"));
            };
            // The chain of values with this key: the same text twice is refused.
            let mut i = p.index.get(key).unwrap_or(NO_ENTRY);
            while i != NO_ENTRY {
                let e = &p.entries[i as usize];
                let start = e.text_start as usize;
                if &p.texts[start..start + e.text_len as usize] == bytes {
                    return Err(format!("value {which} is stored twice"));
                }
                i = e.next;
            }
            let text_start = p.texts.len() as u32;
            p.texts.extend_from_slice(bytes);
            let id = p.entries.len() as u32;
            let next = p.index.insert(key, id).unwrap_or(NO_ENTRY);
            p.entries.push(Entry {
                kind: v.kind,
                text_start,
                text_len: bytes.len() as u32,
                next,
                trusted,
                untrusted,
                host: v.kind == ValueKind::Domain,
            });
        }
        Ok(p)
    }
}

#[cfg(test)]
impl Provenance {
    /// The stored value whose normalised text is `norm` (a linear search).
    fn id_of_normalised(&self, norm: &[u8]) -> Option<u32> {
        self.entries
            .iter()
            .position(|e| {
                let start = e.text_start as usize;
                &self.texts[start..start + e.text_len as usize] == norm
            })
            .map(|i| i as u32)
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
