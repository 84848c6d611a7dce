//! The value scanner: one pass over the bytes splits tokens (separators, commas that are not
//! thousands separators) while collecting each token's byte classes (eight bytes' classes in
//! one word at a time); a token whose classes cannot make a value (a plain word) costs only
//! that pass and an update of the cross-token state (spaced IBANs, spaced phone numbers,
//! amounts beside a currency code). A found value is normalised once, on the stack
//! ([`Found::normalise_into`]), then keyed eight bytes at a time and compared with `==`; a value
//! too long for the buffer is keyed and compared straight from the text while normalising.
//!
//! `reference.rs` keeps the scanner as it was before these changes; the property tests check
//! that both find the same values.

use super::shapes::{is_quote, label_run, quoted_phrase, token, token_mode, whole_phrase};
use super::ValueKind;
use serde_json::Value;

/// How a value's bytes are normalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
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
    pub(super) fn map(self, b: u8) -> Option<u8> {
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
pub(super) struct Found {
    pub(super) kind: ValueKind,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) mode: Mode,
}

impl Found {
    /// Is the normalised form of `t` (this value's bytes) one byte for each byte, the ASCII
    /// lower case of `t`? Always in [`Mode::Lower`]; in the other modes when the mode keeps
    /// every byte (an IBAN or identifier without spaces or dashes, an amount without thousands
    /// separators): then lower-casing is what the mode does to each byte (digits and `.` are
    /// left as they are), and keys and comparisons can go eight bytes at a time.
    #[inline]
    fn one_to_one(&self, t: &[u8]) -> bool {
        let need = match self.mode {
            Mode::Lower => return true,
            Mode::Digits => K_DIGIT,
            Mode::AlnumLower => K_ALNUM,
            Mode::Amount => K_AMOUNT,
        };
        t.iter().all(|&b| KEEP[b as usize] & need != 0)
    }

    /// The normalised bytes.
    pub(super) fn bytes<'t>(&self, text: &'t [u8]) -> impl Iterator<Item = u8> + 't {
        let mode = self.mode;
        text[self.start..self.end]
            .iter()
            .filter_map(move |&b| mode.map(b))
    }

    /// 64-bit hash of the normalised bytes ([`KeyHasher`] keyed with `keys`); `None` when
    /// they are empty.
    #[inline]
    pub(super) fn key(&self, text: &[u8], keys: HashKeys) -> Option<u64> {
        let t = &text[self.start..self.end];
        let mut h = KeyHasher::new(keys);
        if self.one_to_one(t) {
            // Eight bytes at a time: the normalised form is the lower case, byte for byte.
            let mut chunks = t.chunks_exact(8);
            for c in &mut chunks {
                let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                h.word(lower8(w));
            }
            for &b in chunks.remainder() {
                h.byte(b.to_ascii_lowercase());
            }
        } else {
            let mode = self.mode;
            for &b in t {
                if let Some(x) = mode.map(b) {
                    h.byte(x);
                }
            }
        }
        h.finish()
    }

    /// Are the normalised bytes exactly `stored`?
    #[inline]
    pub(super) fn eq_normalised(&self, text: &[u8], stored: &[u8]) -> bool {
        let t = &text[self.start..self.end];
        if self.one_to_one(t) {
            // One byte for one byte (`stored` is lower case already), eight at a time.
            eq_mapped(t, stored, lower8, |b| b.to_ascii_lowercase())
        } else {
            self.bytes(text).eq(stored.iter().copied())
        }
    }

    /// Normalise into `buf` (one branch-free pass): the normalised length, or `None` when
    /// the value's bytes do not fit [`INLINE`] (then the streaming methods above serve).
    #[inline]
    pub(super) fn normalise_into(&self, text: &[u8], buf: &mut NormBuf) -> Option<usize> {
        let t = &text[self.start..self.end];
        if t.len() > INLINE {
            return None;
        }
        let need = match self.mode {
            Mode::Lower => {
                let out = &mut buf.0[..t.len()];
                out.copy_from_slice(t);
                out.make_ascii_lowercase();
                return Some(t.len());
            }
            Mode::Digits => K_DIGIT,
            Mode::AlnumLower => K_ALNUM,
            Mode::Amount => K_AMOUNT,
        };
        // Every byte is written at the next position; the position moves on only for a byte
        // the mode keeps (lower-casing leaves digits and `.` as they are).
        let mut n = 0;
        for &b in t {
            buf.0[n] = b.to_ascii_lowercase();
            n += usize::from(KEEP[b as usize] & need != 0);
        }
        Some(n)
    }

    /// Append the normalised bytes to `out`.
    pub(super) fn write_normalised(&self, text: &[u8], out: &mut Vec<u8>) {
        let t = &text[self.start..self.end];
        if self.one_to_one(t) {
            let from = out.len();
            out.extend_from_slice(t);
            out[from..].make_ascii_lowercase();
        } else {
            out.extend(self.bytes(text));
        }
    }
}

/// Values whose raw bytes are at most this long are normalised on the stack, once, then
/// hashed eight bytes at a time and compared with `==` ([`Found::normalise_into`]).
pub(super) const INLINE: usize = 128;

/// A buffer for one normalised value (eight spare bytes, so that the last word of a key can
/// be read whole).
pub(super) struct NormBuf(pub(super) [u8; INLINE + 8]);

impl NormBuf {
    /// A zeroed buffer.
    pub(super) fn new() -> NormBuf {
        NormBuf([0; INLINE + 8])
    }

    /// The key of its first `len` bytes (what [`key_of_bytes`] gives for them): eight bytes
    /// at a time, the last word read whole and masked.
    #[inline]
    pub(super) fn key(&self, len: usize, keys: HashKeys) -> Option<u64> {
        if len == 0 {
            return None;
        }
        let b = &self.0;
        let mut acc = keys.k0;
        let mut i = 0;
        while i + 8 <= len {
            let w = u64::from_le_bytes([
                b[i],
                b[i + 1],
                b[i + 2],
                b[i + 3],
                b[i + 4],
                b[i + 5],
                b[i + 6],
                b[i + 7],
            ]);
            acc = fold_mul(acc ^ w, keys.k1);
            i += 8;
        }
        let rest = len - i;
        let w = u64::from_le_bytes([
            b[i],
            b[i + 1],
            b[i + 2],
            b[i + 3],
            b[i + 4],
            b[i + 5],
            b[i + 6],
            b[i + 7],
        ]);
        // `rest` < 8: keep its bytes (the padding of the streaming hasher is zeros).
        let w = if rest == 0 {
            0
        } else {
            w & (u64::MAX >> (64 - 8 * rest))
        };
        let acc = fold_mul(acc ^ w, keys.k1) ^ len as u64;
        Some(finalise(acc))
    }
}

/// Bytes each [`Mode`] other than `Lower` keeps (bits): digits (`Digits`), letters and digits
/// (`AlnumLower`), digits and `.` (`Amount`).
const K_DIGIT: u8 = 1;
const K_ALNUM: u8 = 2;
const K_AMOUNT: u8 = 4;
const KEEP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_digit() {
            K_DIGIT | K_ALNUM | K_AMOUNT
        } else if b.is_ascii_alphabetic() {
            K_ALNUM
        } else if b == b'.' {
            K_AMOUNT
        } else {
            0
        };
        i += 1;
    }
    t
};

/// `a == b`, eight bytes at a time, inline (values are short: a call of libc's `memcmp` per
/// value cost more than the comparison).
#[inline]
pub(super) fn eq_bytes(a: &[u8], b: &[u8]) -> bool {
    eq_mapped(a, b, |w| w, |b| b)
}

/// Is `a`, mapped by `word` eight bytes at a time (and by `byte` in its last bytes), exactly
/// `b`? `word` must map each byte of a little-endian word as `byte` does.
#[inline]
fn eq_mapped(a: &[u8], b: &[u8], word: impl Fn(u64) -> u64, byte: impl Fn(u8) -> u8) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in (&mut x).zip(&mut y) {
        let p = u64::from_le_bytes([p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]]);
        let q = u64::from_le_bytes([q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]]);
        if word(p) != q {
            return false;
        }
    }
    let mut diff = 0;
    for (&p, &q) in x.remainder().iter().zip(y.remainder()) {
        diff |= byte(p) ^ q;
    }
    diff == 0
}

/// ASCII lower case of eight bytes at once (non-ASCII bytes unchanged).
#[inline]
pub(super) fn lower8(w: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let low = w & LOW7;
    // Per byte (7 bits, no carry out): the high bit is set when the byte is >= b'A', and when
    // it is > b'Z'.
    let ge_a = low + 0x3f3f_3f3f_3f3f_3f3f;
    let gt_z = low + 0x2525_2525_2525_2525;
    let upper = ge_a & !gt_z & !w & HIGH;
    w | (upper >> 2)
}

/// The secret of a store's [`KeyHasher`]: two random words drawn when the store is made, so
/// that which values share a key cannot be worked out offline (hash flooding). A shared key
/// never makes two values one: the store compares the normalised text on every hit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct HashKeys {
    /// The initial state.
    pub(super) k0: u64,
    /// The multiplier (odd for a random store; 0 only in tests, where every value of one
    /// length gets one key).
    pub(super) k1: u64,
}

impl std::fmt::Debug for HashKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HashKeys(..)")
    }
}

impl HashKeys {
    /// Fresh random keys (from the thread's random generator, seeded by the OS).
    pub(super) fn random() -> HashKeys {
        HashKeys {
            k0: rand::random(),
            k1: rand::random::<u64>() | 1,
        }
    }
}

/// A streaming keyed 64-bit hash of a byte string: little-endian words of eight bytes (the
/// last one zero-padded), each mixed into the state by a folded multiply (the two halves of
/// the 128-bit product xored) by the secret multiplier, then the length and splitmix64's
/// finaliser. A function of the bytes and the keys only: feeding them one by one or eight at
/// a time (at offsets that are multiples of 8) gives the same hash.
struct KeyHasher {
    k1: u64,
    acc: u64,
    word: u64,
    fill: u32,
    len: u64,
}

/// The key of normalised bytes, fed one at a time (tests check `Found::key` against it; a
/// restored snapshot keys its stored texts with it).
pub(super) fn key_of_bytes(bytes: &[u8], keys: HashKeys) -> Option<u64> {
    let mut h = KeyHasher::new(keys);
    for &b in bytes {
        h.byte(b);
    }
    h.finish()
}

#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl KeyHasher {
    #[inline]
    fn new(keys: HashKeys) -> KeyHasher {
        KeyHasher {
            k1: keys.k1,
            acc: keys.k0,
            word: 0,
            fill: 0,
            len: 0,
        }
    }

    #[inline]
    fn word(&mut self, w: u64) {
        debug_assert_eq!(self.fill, 0);
        self.acc = fold_mul(self.acc ^ w, self.k1);
        self.len += 8;
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        self.word |= u64::from(b) << (8 * self.fill);
        self.fill += 1;
        if self.fill == 8 {
            let w = self.word;
            self.word = 0;
            self.fill = 0;
            self.word(w);
        }
    }

    #[inline]
    fn finish(self) -> Option<u64> {
        let len = self.len + u64::from(self.fill);
        if len == 0 {
            return None;
        }
        let acc = fold_mul(self.acc ^ self.word, self.k1) ^ len;
        Some(finalise(acc))
    }
}

#[inline]
fn finalise(mut h: u64) -> u64 {
    // splitmix64's finaliser.
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

/// Bytes of plain text: separators, commas and bytes of class 0 except capitals.
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = matches!(CLASS[i], 0 | C_SEP | C_COMMA) && !(i as u8).is_ascii_uppercase();
        i += 1;
    }
    t
};

/// Are all eight bytes ASCII lower-case letters or spaces (all [`PLAIN`])?
#[inline]
pub(super) fn lower_or_space8(w: u64) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let low = w & LOW7;
    // Per byte (7 bits, no carry out): high bit set when >= b'a', and when > b'z'.
    let ge_a = low + 0x1f1f_1f1f_1f1f_1f1f;
    let gt_z = low + 0x0505_0505_0505_0505;
    let lower = ge_a & !gt_z & !w;
    // High bit set for a byte that is not a space (exact: no borrow between bytes).
    let x = w ^ 0x2020_2020_2020_2020;
    let not_space = ((x & LOW7) + LOW7) | x;
    (lower | !not_space) & HIGH == HIGH
}

/// [`CLASS`] of eight bytes, one per byte of a little-endian word.
#[inline]
fn class8(w: &[u8]) -> u64 {
    let c = |k: usize| u64::from(CLASS[w[k] as usize]) << (8 * k);
    c(0) | c(1) | c(2) | c(3) | c(4) | c(5) | c(6) | c(7)
}

/// The union of the eight classes of a [`class8`] word.
#[inline]
fn fold8(mut w: u64) -> u8 {
    w |= w >> 32;
    w |= w >> 16;
    w |= w >> 8;
    w as u8
}

/// The class bits of a separator or comma in each byte of a [`class8`] word.
const BOUNDARY8: u64 = 0x0101_0101_0101_0101 * (C_SEP | C_COMMA) as u64;

/// Bytes after which a token starts in plain text: separators and commas.
const BOUNDARY: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = matches!(CLASS[i], C_SEP | C_COMMA);
        i += 1;
    }
    t
};

#[inline]
pub(super) const fn is_sep(b: u8) -> bool {
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
    TRAILING[b as usize] & 1 != 0
}

/// Bytes dropped from the end of a value: bit 0 trailing punctuation, bit 1 ASCII whitespace.
const TRAILING: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let punct = matches!(
            b,
            b'.' | b',' | b':' | b';' | b'!' | b'?' | b')' | b']' | b'}' | b'>' | b'"' | b'\''
        );
        t[i] = punct as u8 | ((b.is_ascii_whitespace() as u8) << 1);
        i += 1;
    }
    t
};

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
pub(super) const FILE_EXTENSIONS: &[&[u8]] = &[
    b"txt", b"pdf", b"doc", b"docx", b"xls", b"xlsx", b"csv", b"json", b"md", b"png", b"jpg",
    b"jpeg", b"gif", b"py", b"rs", b"js", b"ts", b"sh", b"yaml", b"yml", b"toml", b"xml", b"zip",
    b"tar", b"gz", b"log", b"env", b"pptx", b"ppt", b"html", b"htm", b"ini", b"cfg", b"conf",
    b"key", b"pem", b"db", b"sql", b"c", b"h", b"go", b"java", b"rb", b"tex",
];

/// Up to 7 bytes, ASCII lower case, packed with their length (0 for longer input).
const fn pack_lower(s: &[u8]) -> u64 {
    if s.is_empty() || s.len() > 7 {
        return 0;
    }
    let mut k = s.len() as u64;
    let mut i = 0;
    while i < s.len() {
        k |= (s[i].to_ascii_lowercase() as u64) << (8 * (i + 1));
        i += 1;
    }
    k
}

const FILE_EXTENSION_KEYS: [u64; FILE_EXTENSIONS.len()] = {
    let mut k = [0u64; FILE_EXTENSIONS.len()];
    let mut i = 0;
    while i < k.len() {
        k[i] = pack_lower(FILE_EXTENSIONS[i]);
        i += 1;
    }
    k
};

/// Is `ext` one of [`FILE_EXTENSIONS`], in any case?
#[inline]
pub(super) fn is_file_extension(ext: &[u8]) -> bool {
    // Every extension has 1–4 bytes (checked by a test).
    ext.len() <= 4 && FILE_EXTENSION_KEYS.contains(&pack_lower(ext))
}

fn eq_ignore_case_in(s: &[u8], list: &[&[u8]]) -> bool {
    list.iter().any(|x| x.eq_ignore_ascii_case(s))
}

/// Trim trailing punctuation of `tok[a..b]`, returning the new end.
pub(super) fn trim_end(tok: &[u8], a: usize, mut b: usize) -> usize {
    while b > a && TRAILING[tok[b - 1] as usize] != 0 {
        b -= 1;
    }
    b
}

/// Byte kinds of a host: label bytes (a digit, a letter, `-`, `_` or non-ASCII), the dot.
const H_LABEL: u8 = 8;
const H_DIGIT: u8 = H_LABEL | 1;
const H_ALPHA: u8 = H_LABEL | 2;
const H_MISC: u8 = H_LABEL | 4;
const H_DOT: u8 = 16;
const HOST: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_digit() {
            H_DIGIT
        } else if b.is_ascii_alphabetic() {
            H_ALPHA
        } else if b == b'-' || b == b'_' || b >= 0x80 {
            H_MISC
        } else if b == b'.' {
            H_DOT
        } else {
            0
        };
        i += 1;
    }
    t
};

/// A valid host (`name.tld`, IPv4) at the start of `s`: its length, or 0. The host is the
/// longest run of label bytes and dots, trailing dots dropped; every label has 1–63 bytes;
/// four labels of 1–3 digits, or ≥ 2 labels the last of which has 2–24 letters. One pass.
pub(super) fn host_len(s: &[u8]) -> usize {
    let mut labels = 0usize;
    let mut all_numeric = true;
    let mut host_end = 0;
    let (mut last_len, mut last_alpha) = (0, false);
    let (mut start, mut digits_only, mut alpha_only) = (0, true, true);
    let mut i = 0;
    loop {
        let k = s.get(i).map_or(0, |&b| HOST[b as usize]);
        if k & H_LABEL != 0 {
            digits_only &= k == H_DIGIT;
            alpha_only &= k == H_ALPHA;
            i += 1;
            continue;
        }
        // A dot or the end of the host closes the label `s[start..i]`.
        let len = i - start;
        if len == 0 {
            // An empty label: valid only in a run of trailing dots.
            let mut j = i;
            while s.get(j) == Some(&b'.') {
                j += 1;
            }
            if s.get(j).is_some_and(|&b| HOST[b as usize] & H_LABEL != 0) {
                return 0;
            }
            break;
        }
        if len > 63 {
            return 0;
        }
        labels += 1;
        all_numeric &= len <= 3 && digits_only;
        (last_len, last_alpha) = (len, alpha_only);
        host_end = i;
        if k != H_DOT {
            break;
        }
        i += 1;
        (start, digits_only, alpha_only) = (i, true, true);
    }
    let ipv4 = labels == 4 && all_numeric;
    let named = labels >= 2 && (2..=24).contains(&last_len) && last_alpha;
    if ipv4 || named {
        host_end
    } else {
        0
    }
}

/// Strip a leading `www.` (any case) if a host follows: the start and the length of the host
/// there (each host read once).
fn skip_www_host(s: &[u8], a: usize, b: usize) -> (usize, usize) {
    if b - a > 4 && s[a..a + 4].eq_ignore_ascii_case(b"www.") {
        let hl = host_len(&s[a + 4..b]);
        if hl > 0 {
            return (a + 4, hl);
        }
    }
    (a, host_len(&s[a..b]))
}

/// Strip a leading `www.` (any case) if a host follows.
pub(super) fn skip_www(s: &[u8], a: usize, b: usize) -> usize {
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
pub(super) fn amount_range(t: &[u8], mut a: usize, mut b: usize) -> Option<(usize, usize)> {
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
pub(super) fn trim_tail(t: &[u8], a: usize, mut b: usize, slashes: bool) -> usize {
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

pub(super) fn is_date_like(t: &[u8]) -> bool {
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

/// Classify one token `text[s..e]` (separators already removed; `text[s..end]` without its
/// trailing punctuation); push what it holds.
fn classify(
    text: &[u8],
    (s, end, e): (usize, usize, usize),
    flags: u8,
    out: &mut impl FnMut(Found),
) {
    let tok = &text[s..e];
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
        let hl;
        (hs, hl) = skip_www_host(text, hs, end);
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
        } else if hl == 0 {
            // A host without a top-level domain (`http://intranet/`): a token.
            let run = label_run(&text[hs..b]);
            if run > 0 && hs + run < b {
                out(Found {
                    kind: ValueKind::Token,
                    start: hs,
                    end: hs + run,
                    mode: token_mode(&text[hs..hs + run]),
                });
            }
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
        } else if a < at && hl == 0 && label_run(&text[at + 1..end]) == end - at - 1 {
            // `user@host` at a host without a top-level domain: a token.
            out(Found {
                kind: ValueKind::Token,
                start: a,
                end,
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
    let mut found = false;
    if flags & (C_DIGIT | C_OTHER) != 0 {
        value_with_digits(text, a, end, &mut |f| {
            found = true;
            out(f)
        });
    }
    if !found && flags & (C_DIGIT | C_SLASH | C_COLON) != 0 {
        token(text, a, end, out);
    }
}

/// A file path, or a domain with an optional path, at `text[a..end]`: pushed, and true.
fn path_or_domain(text: &[u8], a: usize, end: usize, out: &mut impl FnMut(Found)) -> bool {
    let t = &text[a..end];
    // 3. A file path.
    let has_slash = t.contains(&b'/') || t.contains(&b'\\');
    let rooted = match t {
        [b'/', ..] | [b'~' | b'.', b'/', ..] | [b'.', b'.', b'/', ..] => true,
        [l, b':', b'\\', ..] => l.is_ascii_alphabetic(),
        _ => false,
    };
    let ext_of = |x: &[u8]| -> bool {
        let last = x.rsplit(|&b| b == b'/' || b == b'\\').next().unwrap_or(x);
        match last.iter().rposition(|&b| b == b'.') {
            Some(d) if d > 0 => is_file_extension(&last[d + 1..]),
            _ => false,
        }
    };
    // 4. A domain (with an optional path) — unless it is a file name.
    let (www, hl) = skip_www_host(text, a, end);
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
    // 5. Money with a symbol: `$1,000.00`, `100€`. (Every symbol starts with `$`, 0xc2 or
    // 0xe2 and ends with `$`, 0xa3, 0xa5 or 0xac: a token with neither has none.)
    let maybe_symbol =
        matches!(t[0], b'$' | 0xc2 | 0xe2) || matches!(t[t.len() - 1], b'$' | 0xa3 | 0xa5 | 0xac);
    for sym in CURRENCY_SYMBOLS.iter().filter(|_| maybe_symbol) {
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

pub(super) fn find(h: &[u8], n: &[u8]) -> Option<usize> {
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

/// Byte kinds of the cross-token groups: a digit; a letter or digit (a spaced IBAN's group); a
/// digit, `+`, `-` or `.` (a phone number's group); a digit, `,` or `.` (a number).
const G_DIGIT: u8 = 1;
const G_ALNUM: u8 = 2;
const G_PHONE: u8 = 4;
const G_NUMBER: u8 = 8;
const G_ALL: u8 = G_DIGIT | G_ALNUM | G_PHONE | G_NUMBER;
const GROUP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_digit() {
            G_ALL
        } else if b.is_ascii_alphabetic() {
            G_ALNUM
        } else if b == b'.' {
            G_PHONE | G_NUMBER
        } else if b == b'+' || b == b'-' {
            G_PHONE
        } else if b == b',' {
            G_NUMBER
        } else {
            0
        };
        i += 1;
    }
    t
};

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
    /// The token `text[s..e]`, `text[s..end]` without its trailing punctuation.
    fn token(
        &mut self,
        text: &[u8],
        (s, end, e): (usize, usize, usize),
        flags: u8,
        out: &mut impl FnMut(Found),
    ) {
        let has_digit = flags & C_DIGIT != 0;
        // An inert token cannot be a group of a spaced IBAN or phone number, start one, be a
        // number or a currency code: it ends the groups being read and pairs with nothing
        // (what the general path below does with it). Sure to be inert: a token with `@` or
        // `/` (never trimmed), a longer word without digits, and a word without digits that
        // is no currency code when no IBAN is being read (the IBAN's first group has digits).
        let len = end - s;
        let inert = flags & (C_AT | C_SLASH) != 0
            || (!has_digit
                && (len > 4
                    || (self.iban.is_none() && (len != 3 || !text[s].is_ascii_uppercase()))));
        if inert {
            self.flush_iban(out);
            self.flush_phone(out);
            self.prev = None;
            return;
        }
        let t = &text[s..end.max(s)];
        let gap_single = |from: usize| s == from + 1 && text[from] == b' ';
        // One pass: which of the group kinds every byte of `t` has, and its digits.
        let (mut all, mut digits) = (G_ALL, 0usize);
        for &b in t {
            let k = GROUP[b as usize];
            all &= k;
            digits += usize::from(k & G_DIGIT);
        }
        // Spaced IBAN: `DE89 3704 0044 0532 0130 00`.
        let alnum_group = !t.is_empty() && t.len() <= 4 && all & G_ALNUM != 0;
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
        let phone_group = has_digit
            && !t.is_empty()
            && all & G_PHONE != 0
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
        let is_num = has_digit && !t.is_empty() && t[0].is_ascii_digit() && all & G_NUMBER != 0;
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
pub(super) fn scan(text: &[u8], out: &mut impl FnMut(Found)) {
    let mut groups = Groups::default();
    let n = text.len();
    let mut i = 0;
    while i < n {
        while i < n && CLASS[text[i] as usize] == C_SEP {
            if is_quote(text[i]) {
                quoted_phrase(text, i, out);
            }
            i += 1;
        }
        if groups.iban.is_none() && groups.phone.is_none() {
            // Plain text (lower-case words, separators, commas: no digit, no value byte, no
            // capital) holds no value and only inert tokens; with no group being read, skip it
            // to the start of the token holding the next other byte. A skipped token would
            // only have cleared the previous token.
            //
            // Also skipped: a capital followed by a lower-case letter (its token has a
            // lower-case letter, so it is no currency code, and it holds no value class: it
            // only clears the previous token, as an inert token does), and one `.` or `:`
            // after a letter at the end of a token (`Friday.`, `sender:`: trailing
            // punctuation, dropped before the token's classes are looked at).
            let mut j = i;
            loop {
                while let Some(w) = text.get(j..j + 8) {
                    let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
                    if !lower_or_space8(w) {
                        break;
                    }
                    j += 8;
                }
                let from = j;
                while let Some(&b) = text.get(j) {
                    if PLAIN[b as usize] {
                        if is_quote(b) {
                            quoted_phrase(text, j, out);
                        }
                        j += 1;
                        continue;
                    }
                    let next = text.get(j + 1).copied();
                    if b.is_ascii_uppercase() && next.is_some_and(|x| x.is_ascii_lowercase()) {
                        j += 2;
                        continue;
                    }
                    if matches!(b, b'.' | b':')
                        && j > i
                        && text[j - 1].is_ascii_alphabetic()
                        && next.is_none_or(|x| CLASS[x as usize] == C_SEP)
                    {
                        j += 1;
                        continue;
                    }
                    break;
                }
                if j == from {
                    break;
                }
            }
            while j > i && !BOUNDARY[text[j - 1] as usize] {
                j -= 1;
            }
            if j > i {
                groups.prev = None;
                i = j;
                continue;
            }
        }
        let s = i;
        // The classes of the token's bytes read eight at a time, or-ed per byte lane (folded
        // into one byte of flags once, below).
        let mut lanes = 0u64;
        loop {
            // Eight bytes at a time: their classes in one word, the token going on while none
            // is a separator or a comma.
            while let Some(w) = text.get(i..i + 8) {
                let w = class8(w);
                let stop = w & BOUNDARY8;
                if stop != 0 {
                    // The bytes before the first separator or comma belong to the token.
                    let p = stop.trailing_zeros() / 8;
                    lanes |= w & ((1u64 << (8 * p)) - 1);
                    i += p as usize;
                    break;
                }
                lanes |= w;
                i += 8;
            }
            // One byte: the separator or comma found above, or one of the last seven bytes.
            let Some(&b) = text.get(i) else { break };
            let c = CLASS[b as usize];
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
            lanes |= u64::from(c);
            i += 1;
        }
        let flags = fold8(lanes);
        if i > s {
            // Trailing punctuation (`word.`, `word:`) does not make a value: the classes of
            // the bytes before it decide (read again only when the last byte's class may be
            // the only source of a value class).
            let last = text[i - 1];
            let core = if !is_trailing_punct(last) || flags & C_VALUE & !CLASS[last as usize] != 0 {
                flags
            } else {
                text[s..i - 1]
                    .iter()
                    .fold(0u8, |a, &b| a | CLASS[b as usize])
            };
            let end = trim_end(text, s, i);
            if core & C_VALUE != 0 {
                classify(text, (s, end, i), flags, out);
            }
            groups.token(text, (s, end, i), flags, out);
        }
        if i < n && text[i] == b',' {
            i += 1;
        }
    }
    groups.finish(out);
    whole_phrase(text, out);
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

/// The values of one string leaf (a string that is one number also as a number).
pub(super) fn string_leaf(bytes: &[u8], out: &mut impl FnMut(&[u8], Found)) {
    let t = std::str::from_utf8(bytes).map_or(bytes.trim_ascii(), |s| s.trim().as_bytes());
    if is_number(t) && t.iter().filter(|&&b| b == b'.').count() <= 1 {
        number_found(t, out);
    }
    scan(bytes, &mut |f| out(bytes, f));
}

/// The number leaf `n` in its decimal form, as [`json_leaves`] reads it.
pub(super) fn number_leaf(n: &serde_json::Number, out: &mut impl FnMut(&[u8], Found)) {
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

/// Walk the leaves of a JSON value: `out(leaf bytes, found)`.
pub(super) fn json_leaves(v: &Value, out: &mut impl FnMut(&[u8], Found)) {
    match v {
        Value::String(s) => string_leaf(s.as_bytes(), out),
        Value::Number(n) => number_leaf(n, out),
        Value::Array(a) => a.iter().for_each(|x| json_leaves(x, out)),
        Value::Object(m) => m.values().for_each(|x| json_leaves(x, out)),
        Value::Bool(_) | Value::Null => {}
    }
}
