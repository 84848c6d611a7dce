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
//!
//! Every normalised form also drops trailing punctuation (`. , : ; ! ?` and closing brackets
//! and quotes) and lower-cases ASCII letters (paths and URL paths included: a case-only
//! difference is taken as the same value). Identifiers and phone numbers share their form
//! (digits only), so a number written once with dashes and once without is one value.
//! Person names, plain words and short numbers are **not** values: they are too common to say
//! where anything came from. Non-ASCII bytes are kept as they are (not case-folded); the
//! scanner reads bytes, so invalid UTF-8 is read like any other text.
//!
//! **The store** ([`Provenance`], one per session) keeps, per normalised value (keyed by a
//! 64-bit hash of its normalised bytes: two different values colliding is taken as one), its
//! first trusted sighting and its first untrusted sighting (origin, tool name, step). An
//! argument's provenance ([`Provenance::provenance_of`]) is
//! - **untrusted** when one of its values occurs only in untrusted text (in an argument with
//!   several values, one such value is enough: a trusted value beside it does not launder it);
//! - **user** when it has a value that occurs in trusted text (also when that value occurs in
//!   untrusted text too) and none of the above;
//! - **none** when none of its values was seen anywhere (the model wrote it).
//!
//! **Limits** (per store, [`ProvenanceLimits`]): at most `max_values` stored values and `max_scan_bytes`
//! bytes scanned per observation (the rest of a longer observation is not read). When a limit
//! is hit the store is *incomplete* and fails closed from then on: a value it has not stored
//! counts as untrusted (it may be in what was not stored or not read), and trusted
//! observations no longer make anything user. Memory is bounded by about
//! `max_values × (96 + 64)` bytes plus at most 1024 tool names of ≤ 64 bytes.
//!
//! ```
//! use augur_monitor::provenance::{ArgProvenance, Origin, Provenance};
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

use rustc_hash::FxHashMap;
use serde_json::Value;

/// Bytes of a stored value's text kept for reasons (longer values are cut, with `…`).
pub const DISPLAY_MAX: usize = 96;
/// Distinct tool names kept per store (more are named `(another tool)`).
pub const MAX_TOOLS: usize = 1024;
/// Bytes of a tool name kept.
const TOOL_NAME_MAX: usize = 64;

/// The kind of an extracted value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
}

impl ValueKind {
    /// Its name (`email`, `url`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Email => "email",
            ValueKind::Url => "url",
            ValueKind::Domain => "domain",
            ValueKind::Iban => "iban",
            ValueKind::Account => "account",
            ValueKind::Phone => "phone",
            ValueKind::Path => "path",
            ValueKind::Amount => "amount",
        }
    }
}

/// How a value's bytes are normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// ASCII lower case.
    Lower,
    /// ASCII digits only.
    Digits,
    /// ASCII letters and digits, lower case.
    AlnumLower,
    /// Digits and `.` (thousands separators dropped).
    Amount,
}

impl Mode {
    #[inline]
    fn map(self, b: u8) -> Option<u8> {
        match self {
            Mode::Lower => Some(b.to_ascii_lowercase()),
            Mode::Digits => b.is_ascii_digit().then_some(b),
            Mode::AlnumLower => b.is_ascii_alphanumeric().then(|| b.to_ascii_lowercase()),
            Mode::Amount => (b.is_ascii_digit() || b == b'.').then_some(b),
        }
    }
}

/// One value found by the scanner: a byte range of the scanned text and how to normalise it.
#[derive(Clone, Copy, Debug)]
struct Found {
    kind: ValueKind,
    start: usize,
    end: usize,
    mode: Mode,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

impl Found {
    fn bytes<'t>(&self, text: &'t [u8]) -> impl Iterator<Item = u8> + 't {
        let mode = self.mode;
        text[self.start..self.end]
            .iter()
            .filter_map(move |&b| mode.map(b))
    }

    /// 64-bit hash of the normalised bytes (FNV-1a, then a finaliser); `None` when they are
    /// empty.
    fn key(&self, text: &[u8]) -> Option<u64> {
        let mut h = FNV_OFFSET;
        let mut n = 0usize;
        for b in self.bytes(text) {
            h ^= u64::from(b);
            h = h.wrapping_mul(FNV_PRIME);
            n += 1;
        }
        (n > 0).then(|| finalise(h))
    }

    fn write_display(&self, text: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend(self.bytes(text).take(DISPLAY_MAX));
    }
}

fn finalise(mut h: u64) -> u64 {
    // splitmix64's finaliser: spreads FNV's low-entropy high bits.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Byte classes of the scanner (bits): a separator, a comma, a digit, and the bytes that can
/// make a token a value (`.`, `@`, `:`, `/` or backslash, and `~ $ + #` or non-ASCII). A token
/// with none of the last five and no digit holds no value and is not classified; the others
/// skip the checks their bytes rule out.
const C_SEP: u8 = 1;
const C_COMMA: u8 = 2;
const C_DIGIT: u8 = 4;
const C_DOT: u8 = 8;
const C_AT: u8 = 16;
const C_COLON: u8 = 32;
const C_SLASH: u8 = 64;
const C_OTHER: u8 = 128;
const C_VALUE: u8 = C_DIGIT | C_DOT | C_AT | C_COLON | C_SLASH | C_OTHER;

const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if is_sep(b) {
            C_SEP
        } else if b == b',' {
            C_COMMA
        } else if b.is_ascii_digit() {
            C_DIGIT
        } else if b == b'.' {
            C_DOT
        } else if b == b'@' {
            C_AT
        } else if b == b':' {
            C_COLON
        } else if b == b'/' || b == b'\\' {
            C_SLASH
        } else if b >= 0x80 || matches!(b, b'~' | b'$' | b'+' | b'#') {
            C_OTHER
        } else {
            0
        };
        i += 1;
    }
    t
};

#[inline]
const fn is_sep(b: u8) -> bool {
    b <= b' '
        || b == 0x7f
        || matches!(
            b,
            b'"' | b'\''
                | b'`'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b';'
                | b'|'
                | b'*'
        )
}

#[inline]
fn is_trailing_punct(b: u8) -> bool {
    matches!(
        b,
        b'.' | b',' | b':' | b';' | b'!' | b'?' | b')' | b']' | b'}' | b'>' | b'"' | b'\''
    )
}

#[inline]
fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b >= 0x80
}

#[inline]
fn is_email_local(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}

const CURRENCY_CODES: &[&[u8]] = &[
    b"USD", b"EUR", b"GBP", b"CHF", b"JPY", b"CAD", b"AUD", b"CNY", b"INR", b"SEK", b"NOK", b"DKK",
    b"PLN",
];
const CURRENCY_SYMBOLS: &[&[u8]] = &[
    "$".as_bytes(),
    "€".as_bytes(),
    "£".as_bytes(),
    "¥".as_bytes(),
];
const FILE_EXTENSIONS: &[&[u8]] = &[
    b"txt", b"pdf", b"doc", b"docx", b"xls", b"xlsx", b"csv", b"json", b"md", b"png", b"jpg",
    b"jpeg", b"gif", b"py", b"rs", b"js", b"ts", b"sh", b"yaml", b"yml", b"toml", b"xml", b"zip",
    b"tar", b"gz", b"log", b"env", b"pptx", b"ppt", b"html", b"htm", b"ini", b"cfg", b"conf",
    b"key", b"pem", b"db", b"sql", b"c", b"h", b"go", b"java", b"rb", b"tex",
];

fn eq_ignore_case_in(s: &[u8], list: &[&[u8]]) -> bool {
    list.iter().any(|x| x.eq_ignore_ascii_case(s))
}

/// Trim trailing punctuation of `tok[a..b]`, returning the new end.
fn trim_end(tok: &[u8], a: usize, mut b: usize) -> usize {
    while b > a && (is_trailing_punct(tok[b - 1]) || tok[b - 1].is_ascii_whitespace()) {
        b -= 1;
    }
    b
}

/// A valid host (`name.tld`, IPv4) at the start of `s`: its length, or 0.
fn host_len(s: &[u8]) -> usize {
    let mut end = 0;
    while end < s.len() && (is_label_byte(s[end]) || s[end] == b'.') {
        end += 1;
    }
    let mut host = &s[..end];
    while host.last() == Some(&b'.') {
        host = &host[..host.len() - 1];
    }
    if host.is_empty() {
        return 0;
    }
    let mut labels = 0;
    let mut all_numeric = true;
    let mut last: &[u8] = &[];
    for l in host.split(|&b| b == b'.') {
        if l.is_empty() || l.len() > 63 {
            return 0;
        }
        labels += 1;
        all_numeric &= l.len() <= 3 && l.iter().all(u8::is_ascii_digit);
        last = l;
    }
    let ipv4 = labels == 4 && all_numeric;
    let named =
        labels >= 2 && (2..=24).contains(&last.len()) && last.iter().all(u8::is_ascii_alphabetic);
    if ipv4 || named {
        host.len()
    } else {
        0
    }
}

/// Strip a leading `www.` (any case) if a host follows.
fn skip_www(s: &[u8], a: usize, b: usize) -> usize {
    if b - a > 4 && s[a..a + 4].eq_ignore_ascii_case(b"www.") && host_len(&s[a + 4..b]) > 0 {
        a + 4
    } else {
        a
    }
}

/// Is `t` a plain number (digits, `,` and `.`, starting with a digit)?
fn is_number(t: &[u8]) -> bool {
    !t.is_empty()
        && t[0].is_ascii_digit()
        && t.iter()
            .all(|&b| b.is_ascii_digit() || b == b',' || b == b'.')
}

/// The canonical range of a plain number `t[a..b]`: leading zeros and trailing decimal zeros
/// (and a trailing `.`) dropped. Numbers with more than one `.` are not amounts.
fn amount_range(t: &[u8], mut a: usize, mut b: usize) -> Option<(usize, usize)> {
    // `,` (a thousands separator) is invisible here: the normalised form drops it.
    let dots = t[a..b].iter().filter(|&&x| x == b'.').count();
    if dots > 1 || !t[a..b].iter().any(u8::is_ascii_digit) {
        return None;
    }
    if dots == 1 {
        while b > a && matches!(t[b - 1], b'0' | b',') {
            b -= 1;
        }
        if b > a && t[b - 1] == b'.' {
            b -= 1;
        }
    }
    while b > a && t[b - 1] == b',' {
        b -= 1;
    }
    while a < b && matches!(t[a], b'0' | b',') {
        match t[a + 1..b].iter().find(|&&c| c != b',') {
            Some(c) if c.is_ascii_digit() => a += 1,
            _ => break,
        }
    }
    while a < b && t[a] == b',' {
        a += 1;
    }
    (b > a).then_some((a, b))
}

/// Drop trailing punctuation and (with `slashes`) trailing `/` and `\\` until neither is left.
fn trim_tail(t: &[u8], a: usize, mut b: usize, slashes: bool) -> usize {
    loop {
        let b0 = b;
        b = trim_end(t, a, b);
        while slashes && b > a + 1 && matches!(t[b - 1], b'/' | b'\\') {
            b -= 1;
        }
        if b == b0 {
            return b;
        }
    }
}

fn is_date_like(t: &[u8]) -> bool {
    // dddd-dd-dd, dd.dd.dddd, dd/dd/dddd and the like (optionally followed by more).
    if !t
        .iter()
        .all(|&b| b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'/'))
    {
        return false;
    }
    let mut groups = [0usize; 3];
    let mut n = 0;
    for g in t.split(|&b| matches!(b, b'-' | b'.' | b'/')) {
        if n < 3 {
            groups[n] = g.len();
        }
        n += 1;
    }
    n >= 3
        && ((groups[0] == 4 && groups[1] <= 2 && groups[2] <= 2)
            || (groups[0] <= 2 && groups[1] <= 2 && (groups[2] == 4 || groups[2] == 2)))
}

/// Classify one token `text[s..e]` (separators already removed); push what it holds.
fn classify(text: &[u8], s: usize, e: usize, flags: u8, out: &mut impl FnMut(Found)) {
    let tok = &text[s..e];
    let end = trim_end(text, s, e);
    if end <= s {
        return;
    }
    // 1. A URL: `scheme://…`.
    if let Some(p) = (flags & C_COLON != 0 && flags & C_SLASH != 0)
        .then(|| find(tok, b"://"))
        .flatten()
    {
        let colon = s + p;
        let mut a = colon;
        while a > s && text[a - 1].is_ascii_alphabetic() {
            a -= 1;
        }
        let mut hs = colon + 3;
        if a == colon || hs >= end {
            return;
        }
        hs = skip_www(text, hs, end);
        let hl = host_len(&text[hs..end]);
        let b = trim_tail(text, hs, end, true);
        if b > hs {
            out(Found {
                kind: ValueKind::Url,
                start: hs,
                end: b,
                mode: Mode::Lower,
            });
        }
        if hl > 0 && hs + hl < b {
            out(Found {
                kind: ValueKind::Domain,
                start: hs,
                end: hs + hl,
                mode: Mode::Lower,
            });
        }
        return;
    }
    // 2. An e-mail address.
    if let Some(p) = (flags & C_AT != 0)
        .then(|| tok.iter().position(|&b| b == b'@'))
        .flatten()
    {
        let at = s + p;
        let mut a = at;
        while a > s && is_email_local(text[a - 1]) {
            a -= 1;
        }
        while a < at && text[a] == b'.' {
            a += 1;
        }
        let hl = host_len(&text[at + 1..end]);
        if a < at && hl > 0 {
            out(Found {
                kind: ValueKind::Email,
                start: a,
                end: at + 1 + hl,
                mode: Mode::Lower,
            });
        }
        return;
    }
    // Leading punctuation that is not part of a path.
    let mut a = s;
    while a < end && matches!(text[a], b',' | b':' | b'!' | b'?' | b'=') {
        a += 1;
    }
    if a >= end {
        return;
    }
    if flags & (C_DOT | C_SLASH | C_COLON | C_OTHER) != 0 && path_or_domain(text, a, end, out) {
        return;
    }
    if flags & (C_DIGIT | C_OTHER) == 0 {
        return;
    }
    value_with_digits(text, a, end, out);
}

/// A file path, or a domain with an optional path, at `text[a..end]`: pushed, and true.
fn path_or_domain(text: &[u8], a: usize, end: usize, out: &mut impl FnMut(Found)) -> bool {
    let t = &text[a..end];
    // 3. A file path.
    let has_slash = t.contains(&b'/') || t.contains(&b'\\');
    let rooted = t[0] == b'/'
        || t.starts_with(b"~/")
        || t.starts_with(b"./")
        || t.starts_with(b"../")
        || (t.len() > 2 && t[0].is_ascii_alphabetic() && t[1] == b':' && t[2] == b'\\');
    let ext_of = |x: &[u8]| -> bool {
        let last = x.rsplit(|&b| b == b'/' || b == b'\\').next().unwrap_or(x);
        match last.iter().rposition(|&b| b == b'.') {
            Some(d) if d > 0 => eq_ignore_case_in(&last[d + 1..], FILE_EXTENSIONS),
            _ => false,
        }
    };
    // 4. A domain (with an optional path) — unless it is a file name.
    let www = skip_www(text, a, end);
    let hl = host_len(&text[www..end]);
    let host_then = (www + hl < end).then(|| text[www + hl]);
    if !rooted
        && hl > 0
        && matches!(
            host_then,
            None | Some(b'/') | Some(b':') | Some(b'?') | Some(b'#')
        )
        && !(host_then.is_none() && www == a && ext_of(&text[www..end]))
    {
        let b = trim_tail(text, www, end, true).max(www + hl);
        out(Found {
            kind: ValueKind::Domain,
            start: www,
            end: b,
            mode: Mode::Lower,
        });
        if b > www + hl {
            out(Found {
                kind: ValueKind::Domain,
                start: www,
                end: www + hl,
                mode: Mode::Lower,
            });
        }
        return true;
    }
    if (rooted && t.len() >= 2)
        || (has_slash && ext_of(t))
        || (!has_slash && ext_of(t) && t.contains(&b'.') && t[0] != b'.')
    {
        let b = trim_tail(text, a, end, true);
        if b < a + 2 {
            return true;
        }
        out(Found {
            kind: ValueKind::Path,
            start: a,
            end: b,
            mode: Mode::Lower,
        });
        return true;
    }
    false
}

/// Money with a symbol, an IBAN, an identifier or phone number at `text[a..end]`.
fn value_with_digits(text: &[u8], a: usize, end: usize, out: &mut impl FnMut(Found)) {
    let t = &text[a..end];
    // 5. Money with a symbol: `$1,000.00`, `100€`.
    for sym in CURRENCY_SYMBOLS {
        let (num_a, num_b) = if t.starts_with(sym) {
            (a + sym.len(), end)
        } else if t.ends_with(sym) && t.len() > sym.len() {
            (a, end - sym.len())
        } else {
            continue;
        };
        if num_b > num_a && is_number(&text[num_a..num_b]) {
            if let Some((x, y)) = amount_range(text, num_a, num_b) {
                out(Found {
                    kind: ValueKind::Amount,
                    start: x,
                    end: y,
                    mode: Mode::Amount,
                });
            }
        }
        return;
    }
    // 6. An IBAN without spaces.
    if is_iban(t) {
        out(Found {
            kind: ValueKind::Iban,
            start: a,
            end,
            mode: Mode::AlnumLower,
        });
        return;
    }
    // 7. An account-like identifier or a phone number: ≥ 7 digits.
    let digits = t.iter().filter(|b| b.is_ascii_digit()).count();
    if (7..=64).contains(&digits)
        && t.iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.' | b'#' | b'/'))
        && !is_date_like(t)
    {
        let letters = t.iter().any(u8::is_ascii_alphabetic);
        let (kind, mode) = if letters {
            (ValueKind::Account, Mode::AlnumLower)
        } else if t[0] == b'+' || t.iter().any(|&b| matches!(b, b'-' | b'.')) {
            (ValueKind::Phone, Mode::Digits)
        } else {
            (ValueKind::Account, Mode::Digits)
        };
        if !(t.iter().filter(|&&x| x == b'.').count() == 1 && !letters && is_number(t)) {
            out(Found {
                kind,
                start: a,
                end,
                mode,
            });
        }
    }
}

fn is_iban(t: &[u8]) -> bool {
    (15..=34).contains(&t.len())
        && t[0].is_ascii_alphabetic()
        && t[1].is_ascii_alphabetic()
        && t[2].is_ascii_digit()
        && t[3].is_ascii_digit()
        && t[4..].iter().all(u8::is_ascii_alphanumeric)
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    if h.len() < n.len() {
        return None;
    }
    // Tokens are short; a first-byte scan is enough.
    let mut i = 0;
    while let Some(p) = h[i..=h.len() - n.len()].iter().position(|&b| b == n[0]) {
        if &h[i + p..i + p + n.len()] == n {
            return Some(i + p);
        }
        i += p + 1;
        if i > h.len() - n.len() {
            break;
        }
    }
    None
}

/// The cross-token patterns: spaced IBANs, spaced phone numbers, amounts beside a currency
/// code.
#[derive(Default)]
struct Groups {
    /// Previous token: (start, end) and whether it is a plain number / a currency code.
    prev: Option<(usize, usize, bool, bool)>,
    /// A spaced IBAN being read: start, end, alphanumeric length.
    iban: Option<(usize, usize, usize)>,
    /// Digit groups being read: start, end, digits, groups.
    phone: Option<(usize, usize, usize, usize)>,
}

impl Groups {
    fn token(
        &mut self,
        text: &[u8],
        s: usize,
        e: usize,
        has_digit: bool,
        out: &mut impl FnMut(Found),
    ) {
        let end = trim_end(text, s, e);
        let t = &text[s..end.max(s)];
        let gap_single = |from: usize| s == from + 1 && text[from] == b' ';
        // Spaced IBAN: `DE89 3704 0044 0532 0130 00`.
        let alnum_group = !t.is_empty()
            && t.len() <= 4
            && t.iter()
                .all(|&b| b.is_ascii_digit() || b.is_ascii_uppercase() || b.is_ascii_lowercase());
        let mut in_iban = false;
        match self.iban {
            Some((a, b, n)) if alnum_group && gap_single(b) && n + t.len() <= 34 => {
                self.iban = Some((a, end, n + t.len()));
                in_iban = true;
                if end < e {
                    self.flush_iban(out);
                }
            }
            _ => {
                self.flush_iban(out);
                if t.len() == 4
                    && t[0].is_ascii_alphabetic()
                    && t[1].is_ascii_alphabetic()
                    && t[2].is_ascii_digit()
                    && t[3].is_ascii_digit()
                {
                    self.iban = Some((s, end, 4));
                    in_iban = true;
                }
            }
        }
        // Spaced phone numbers: digit groups separated by spaces or brackets.
        let digits = if has_digit {
            t.iter().filter(|b| b.is_ascii_digit()).count()
        } else {
            0
        };
        let phone_group = has_digit
            && !t.is_empty()
            && t.iter()
                .all(|&b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.'))
            && (digits >= 2 || (t[0] == b'+' && digits >= 1))
            && digits <= 8;
        match self.phone {
            _ if in_iban => self.phone = None,
            Some((a, b, d, g))
                if phone_group
                    && s > b
                    && s - b <= 3
                    && text[b..s].iter().all(|&x| matches!(x, b' ' | b'(' | b')'))
                    && d + digits <= 15 =>
            {
                self.phone = Some((a, end, d + digits, g + 1));
            }
            _ => {
                self.flush_phone(out);
                if phone_group {
                    // Include an opening bracket right before.
                    self.phone = Some((s, end, digits, 1));
                }
            }
        }
        // Amounts beside a currency code: `100 USD`, `EUR 12.50`.
        let is_num = has_digit && is_number(t);
        let is_code = t.len() == 3
            && t.iter().all(u8::is_ascii_uppercase)
            && eq_ignore_case_in(t, CURRENCY_CODES);
        if let Some((pa, pb, pnum, pcode)) = self.prev {
            let adjacent = s > pb && s - pb <= 2 && text[pb..s].iter().all(|&x| x == b' ');
            if adjacent {
                let range = if pnum && is_code {
                    amount_range(text, pa, pb)
                } else if pcode && is_num {
                    amount_range(text, s, end)
                } else {
                    None
                };
                if let Some((x, y)) = range {
                    out(Found {
                        kind: ValueKind::Amount,
                        start: x,
                        end: y,
                        mode: Mode::Amount,
                    });
                }
            }
        }
        self.prev = Some((s, end, is_num, is_code));
    }

    fn flush_iban(&mut self, out: &mut impl FnMut(Found)) {
        if let Some((a, b, n)) = self.iban.take() {
            if (15..=34).contains(&n) {
                out(Found {
                    kind: ValueKind::Iban,
                    start: a,
                    end: b,
                    mode: Mode::AlnumLower,
                });
            }
        }
    }

    fn flush_phone(&mut self, out: &mut impl FnMut(Found)) {
        if let Some((a, b, d, g)) = self.phone.take() {
            if g >= 2 && (7..=15).contains(&d) {
                out(Found {
                    kind: ValueKind::Phone,
                    start: a,
                    end: b,
                    mode: Mode::Digits,
                });
            }
        }
    }

    fn finish(&mut self, out: &mut impl FnMut(Found)) {
        self.flush_iban(out);
        self.flush_phone(out);
    }
}

/// Scan `text` once; call `out` for every value found (possibly twice for one value).
fn scan(text: &[u8], out: &mut impl FnMut(Found)) {
    let mut groups = Groups::default();
    let n = text.len();
    let mut i = 0;
    while i < n {
        while i < n && CLASS[text[i] as usize] == C_SEP {
            i += 1;
        }
        let s = i;
        let (mut flags, mut before_last) = (0u8, 0u8);
        while i < n {
            let c = CLASS[text[i] as usize];
            if c == C_SEP {
                break;
            }
            // A comma separates unless it is a thousands separator (digit,digit).
            if c == C_COMMA
                && !(i > s
                    && text[i - 1].is_ascii_digit()
                    && text.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                break;
            }
            before_last = flags;
            flags |= c;
            i += 1;
        }
        if i > s {
            // Trailing punctuation (`word.`, `word:`) does not make a value.
            let core = if is_trailing_punct(text[i - 1]) {
                before_last
            } else {
                flags
            };
            if core & C_VALUE != 0 {
                classify(text, s, i, flags, out);
            }
            groups.token(text, s, i, flags & C_DIGIT != 0, out);
        }
        if i < n && text[i] == b',' {
            i += 1;
        }
    }
    groups.finish(out);
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

/// A number leaf (or a string that is one number) as an amount / identifier: its canonical
/// decimal form.
fn number_found(t: &[u8], out: &mut impl FnMut(&[u8], Found)) {
    let digits = t.iter().filter(|b| b.is_ascii_digit()).count();
    let (a, b) = if t.first() == Some(&b'-') {
        (1, t.len())
    } else {
        (0, t.len())
    };
    if a >= b || !is_number(&t[a..b]) {
        return;
    }
    if let Some((x, y)) = amount_range(t, a, b) {
        let kind = if digits >= 7 && !t.contains(&b'.') {
            ValueKind::Account
        } else {
            ValueKind::Amount
        };
        out(
            t,
            Found {
                kind,
                start: x,
                end: y,
                mode: Mode::Amount,
            },
        );
    }
}

/// Walk the leaves of a JSON value: `out(leaf bytes, found)`.
fn json_leaves(v: &Value, out: &mut impl FnMut(&[u8], Found)) {
    match v {
        Value::String(s) => {
            let t = s.trim().as_bytes();
            if is_number(t) && t.iter().filter(|&&b| b == b'.').count() <= 1 {
                number_found(t, out);
            }
            let bytes = s.as_bytes();
            scan(bytes, &mut |f| out(bytes, f));
        }
        Value::Number(n) => {
            let mut buf = [0u8; 40];
            let len = {
                use std::io::Write;
                let mut c = std::io::Cursor::new(&mut buf[..]);
                if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e15) {
                    let _ = write!(c, "{}", f as i64);
                } else {
                    let _ = write!(c, "{n}");
                }
                c.position() as usize
            };
            if !buf[..len].contains(&b'e') && !buf[..len].contains(&b'E') {
                number_found(&buf[..len], out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| json_leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| json_leaves(x, out)),
        Value::Bool(_) | Value::Null => {}
    }
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
        ValueKind::Email | ValueKind::Path => Mode::Lower,
        ValueKind::Url | ValueKind::Domain => Mode::Lower,
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
        ValueKind::Url | ValueKind::Domain => {
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
        ValueKind::Iban | ValueKind::Account | ValueKind::Phone => {}
    }
    let f = Found {
        kind,
        start: a,
        end: b,
        mode,
    };
    String::from_utf8_lossy(&f.bytes(t).collect::<Vec<u8>>()).into_owned()
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
}

impl Origin<'_> {
    /// Is text from here trusted?
    pub fn trusted(&self) -> bool {
        !matches!(self, Origin::Tool { .. })
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginKind {
    /// The user's request.
    User,
    /// The system prompt.
    System,
    /// A trusted tool's result.
    TrustedTool,
    /// An untrusted tool's result.
    Tool,
}

/// What the store knows of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// The value's key (see [`Provenance::value_text`]).
    pub key: u64,
    /// Its kind as first stored (or as found in the argument when it is not stored).
    pub kind: ValueKind,
    /// Its first trusted sighting.
    pub trusted: Option<Sighting>,
    /// Its first untrusted sighting.
    pub untrusted: Option<Sighting>,
    /// Not stored, counted as untrusted because the store is incomplete (a limit was hit).
    pub at_cap: bool,
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
}

impl ArgProvenance {
    /// `none`, `user` or `untrusted`.
    pub fn as_str(&self) -> &'static str {
        match self {
            ArgProvenance::None => "none",
            ArgProvenance::User(_) => "user",
            ArgProvenance::Untrusted(_) => "untrusted",
        }
    }
}

/// Per-store limits (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProvenanceLimits {
    /// Distinct values stored (default 16,384).
    pub max_values: usize,
    /// Bytes scanned per observation (default 1 MiB).
    pub max_scan_bytes: usize,
}

impl Default for ProvenanceLimits {
    fn default() -> Self {
        ProvenanceLimits {
            max_values: 16_384,
            max_scan_bytes: 1 << 20,
        }
    }
}

/// Why a store is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incomplete {
    /// `max_values` values are stored; more were seen.
    Values,
    /// An observation was longer than `max_scan_bytes`; its rest was not read.
    Bytes,
}

#[derive(Clone, Debug)]
struct Entry {
    kind: ValueKind,
    text: Box<str>,
    trusted: Option<Sighting>,
    untrusted: Option<Sighting>,
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
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    limits: ProvenanceLimits,
    entries: FxHashMap<u64, Entry>,
    tools: Vec<Box<str>>,
    tool_ids: FxHashMap<Box<str>, u32>,
    incomplete: Option<Incomplete>,
    scratch: Vec<u8>,
}

const OTHER_TOOL: u32 = u32::MAX;

impl Provenance {
    /// An empty store with the default limits.
    pub fn new() -> Provenance {
        Provenance::with_limits(ProvenanceLimits::default())
    }

    /// An empty store with these limits.
    pub fn with_limits(limits: ProvenanceLimits) -> Provenance {
        Provenance {
            limits,
            ..Default::default()
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
        let (kind, tool, step) = match origin {
            Origin::User => (OriginKind::User, OTHER_TOOL, 0),
            Origin::System => (OriginKind::System, OTHER_TOOL, 0),
            Origin::TrustedTool { tool, step } => {
                (OriginKind::TrustedTool, self.tool_id(tool), step)
            }
            Origin::Tool { tool, step } => (OriginKind::Tool, self.tool_id(tool), step),
        };
        let sighting = Sighting {
            origin: kind,
            tool,
            step,
        };
        let trusted = origin.trusted();
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
        let Provenance {
            limits,
            entries,
            incomplete,
            scratch,
            ..
        } = self;
        scan(scanned, &mut |f: Found| {
            let Some(key) = f.key(scanned) else {
                return;
            };
            stats.found += 1;
            if let Some(e) = entries.get_mut(&key) {
                if trusted {
                    if e.trusted.is_none() && incomplete.is_none() {
                        e.trusted = Some(sighting);
                    }
                } else if e.untrusted.is_none() {
                    e.untrusted = Some(sighting);
                }
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
            f.write_display(scanned, scratch);
            let mut text = String::from_utf8_lossy(scratch).into_owned();
            if f.end - f.start > DISPLAY_MAX {
                text.push('…');
            }
            entries.insert(
                key,
                Entry {
                    kind: f.kind,
                    text: text.into_boxed_str(),
                    trusted: trusted.then_some(sighting),
                    untrusted: (!trusted).then_some(sighting),
                },
            );
            stats.new += 1;
        });
        stats
    }

    fn evidence(&self, key: u64, kind: ValueKind) -> Evidence {
        match self.entries.get(&key) {
            Some(e) => Evidence {
                key,
                kind: e.kind,
                trusted: e.trusted,
                untrusted: e.untrusted,
                at_cap: false,
            },
            None => Evidence {
                key,
                kind,
                trusted: None,
                untrusted: None,
                at_cap: self.incomplete.is_some(),
            },
        }
    }

    /// The provenance of an argument (every string and number leaf of `v`; see the module
    /// documentation). Does not allocate.
    pub fn provenance_of(&self, v: &Value) -> ArgProvenance {
        let mut user = None;
        let mut untrusted = None;
        json_leaves(v, &mut |bytes: &[u8], f: Found| {
            if untrusted.is_some() {
                return;
            }
            let Some(key) = f.key(bytes) else { return };
            let ev = self.evidence(key, f.kind);
            if ev.trusted.is_some() {
                user.get_or_insert(ev);
            } else if ev.untrusted.is_some() || ev.at_cap {
                untrusted = Some(ev);
            }
        });
        match (untrusted, user) {
            (Some(e), _) => ArgProvenance::Untrusted(e),
            (None, Some(e)) => ArgProvenance::User(e),
            (None, None) => ArgProvenance::None,
        }
    }

    /// Each value of an argument with what the store knows of it.
    pub fn values_of(&self, v: &Value, f: &mut impl FnMut(Evidence)) {
        json_leaves(v, &mut |bytes: &[u8], found: Found| {
            if let Some(key) = found.key(bytes) {
                f(self.evidence(key, found.kind));
            }
        });
    }

    /// A stored value's normalised text (cut at [`DISPLAY_MAX`] bytes).
    pub fn value_text(&self, key: u64) -> Option<&str> {
        self.entries.get(&key).map(|e| &*e.text)
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
        }
    }

    /// A reason for an argument's provenance, e.g. "recipient us13… first appeared in the
    /// result of `read_file` at step 2; the user's request does not contain it".
    pub fn explain(&self, arg: &str, p: &ArgProvenance) -> String {
        let text = |e: &Evidence| {
            self.value_text(e.key)
                .unwrap_or("(a value not stored)")
                .to_string()
        };
        match p {
            ArgProvenance::None => format!("{arg}: no value of it was seen before (written by the model)"),
            ArgProvenance::User(e) => {
                let s = e.trusted.map(|s| self.describe(&s)).unwrap_or_default();
                format!("{arg} {} occurs in {s}", text(e))
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
mod tests;
