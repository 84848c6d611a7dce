//! The scanner as it was before issue 25 item 7 (one pass over the bytes, then several short
//! passes per token, values hashed through an iterator chain), kept unchanged as the test
//! oracle of the fast scanner in `scan.rs`: the property tests check that both find the same
//! values, of the same kinds, normalised the same way, in the same order.
#![allow(dead_code)]

use super::ValueKind;
use serde_json::Value;

/// What the reference scanner finds in `text`: (kind, normalised bytes), in order, with
/// repeats.
pub(super) fn values(text: &[u8]) -> Vec<(ValueKind, Vec<u8>)> {
    let mut out = Vec::new();
    scan(text, &mut |f: Found| {
        out.push((f.kind, f.bytes(text).collect()));
    });
    out
}

/// The text the store kept for each value of `text` before issue 25 item 7 (the normalised
/// bytes cut at `max`, lossily decoded, `…` when the raw value was longer than `max`), with
/// the value's normalised bytes; in order, with repeats.
pub(super) fn display_texts(text: &[u8], max: usize) -> Vec<(Vec<u8>, String)> {
    let mut out = Vec::new();
    scan(text, &mut |f: Found| {
        let norm: Vec<u8> = f.bytes(text).collect();
        let cut: Vec<u8> = f.bytes(text).take(max).collect();
        let mut shown = String::from_utf8_lossy(&cut).into_owned();
        if norm.len() > max {
            shown.push('…');
        }
        out.push((norm, shown));
    });
    out
}

/// What the reference finds in the leaves of a JSON value: (kind, normalised bytes), in
/// order, with repeats.
pub(super) fn json_values(v: &Value) -> Vec<(ValueKind, Vec<u8>)> {
    let mut out = Vec::new();
    json_leaves(v, &mut |bytes: &[u8], f: Found| {
        out.push((f.kind, f.bytes(bytes).collect()));
    });
    out
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

impl Found {
    fn bytes<'t>(&self, text: &'t [u8]) -> impl Iterator<Item = u8> + 't {
        let mode = self.mode;
        text[self.start..self.end]
            .iter()
            .filter_map(move |&b| mode.map(b))
    }
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
pub(super) fn host_len(s: &[u8]) -> usize {
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
