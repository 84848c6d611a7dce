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
mod classify;
mod explain;
mod found;
mod groups;
mod hash;
mod index;
mod parts;
mod scan;
mod shapes;
mod simd;
mod snapshot;
mod values;

pub use snapshot::{mask_value, ProvenanceSnapshot, SavedSighting, SavedValue};
use values::{canonical_leaves, store_values};
pub use values::{extract, extract_json, normalise, Extracted, ValueKind};

use classify::find;
use found::{Found, Mode, NormBuf};
use hash::HashKeys;
use index::Index;
use parts::{amount_range, skip_www, trim_end, trim_tail};
use rustc_hash::FxHashMap;
use scan::{is_sep, json_leaves, number_leaf, scan, string_leaf};
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
    #[inline(always)]
    fn new(f: &Found, text: &[u8], keys: HashKeys, buf: &'a mut NormBuf) -> Option<Keyed<'a>> {
        match f.normalise_keyed(text, buf, keys) {
            Some((len, key)) => {
                let key = key?;
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
            Some(n) => found::eq_bytes(n, stored),
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
        // Room for a new value per 48 bytes read (within the cap), so that a value-dense
        // result does not grow the table step by step (an e-mail listing holds one per 57
        // bytes or so: the entries are not moved while it is read, and the index, two slots
        // per value rounded up to a power of two, keeps its size); reserved when the first new
        // value is stored (an observation of stored values allocates nothing).
        let room =
            (scanned.len() / 48).min(self.limits.max_values.saturating_sub(self.entries.len()));
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
