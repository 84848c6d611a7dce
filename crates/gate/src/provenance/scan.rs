//! The value scanner: one pass over the bytes splits tokens (separators, commas that are not
//! thousands separators) while collecting each token's byte classes (eight bytes' classes in
//! one word at a time); plain text (lower-case words, separators) is passed sixteen bytes at a
//! time by a vector mask of the bytes that may matter (`simd::stop_mask`), and a number of at
//! most six digits is not classified; a token whose classes cannot make a value (a plain word)
//! costs only that pass and an update of the cross-token state (spaced IBANs, spaced phone
//! numbers, amounts beside a currency code). A found value is normalised once, on the stack
//! ([`Found::normalise_into`]), then keyed eight bytes at a time and compared with `==`; a value
//! too long for the buffer is keyed and compared straight from the text while normalising.
//!
//! `reference.rs` keeps the scanner as it was before these changes; the property tests check
//! that both find the same values.

use super::classify::classify;
use super::found::{Found, Mode};
use super::groups::Groups;
use super::parts::{amount_range, is_number, trim_end};
use super::shapes::{is_quote, quoted_phrase, whole_phrase};
#[cfg(test)]
use super::simd::stop_byte;
use super::simd::{stop_mask, stop_mask_tail};
use super::ValueKind;
use serde_json::Value;

/// Byte classes of the scanner (bits): a separator, a comma, a digit, and the bytes that can
/// make a token a value (`.`, `@`, `:`, `/` or backslash, and `~ $ + #` or non-ASCII). A token
/// with none of the last five and no digit holds no value and is not classified; the others
/// skip the checks their bytes rule out.
const C_SEP: u8 = 1;
const C_COMMA: u8 = 2;
pub(super) const C_DIGIT: u8 = 4;
pub(super) const C_DOT: u8 = 8;
pub(super) const C_AT: u8 = 16;
pub(super) const C_COLON: u8 = 32;
pub(super) const C_SLASH: u8 = 64;
pub(super) const C_OTHER: u8 = 128;
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

/// Bytes of plain text: separators, commas and bytes of class 0 except capitals (the
/// definition the skip's `stop_byte` is tested against).
#[cfg(test)]
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = matches!(CLASS[i], 0 | C_SEP | C_COMMA) && !(i as u8).is_ascii_uppercase();
        i += 1;
    }
    t
};

/// What the plain-text skip does at a byte of its mask ([`stop_mask`]): read the quoted
/// phrase a quote may open and go on (`S_QUOTE`), go on past a capital before a lower-case
/// letter (`S_CAPITAL`) or a `.` or `:` after a letter at a token's end (`S_END`), else stop.
const S_QUOTE: u8 = 1;
const S_CAPITAL: u8 = 2;
const S_END: u8 = 3;
const SKIP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if matches!(b, b'"' | b'\'' | b'`') {
            S_QUOTE
        } else if b.is_ascii_uppercase() {
            S_CAPITAL
        } else if b == b'.' || b == b':' {
            S_END
        } else {
            0
        };
        i += 1;
    }
    t
};

/// [`CLASS`] of eight bytes, one per byte of a little-endian word.
#[inline]
fn class8(w: &[u8; 8]) -> u64 {
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
pub(super) const TRAILING: [u8; 256] = {
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

/// Is `t` at most six ASCII digits (or empty)? Such a token holds no value ([`classify`]
/// finds none in it: the property tests compare with the reference scanner, which classifies
/// every token).
#[inline]
fn short_number(t: &[u8]) -> bool {
    t.len() <= 6 && t.iter().all(u8::is_ascii_digit)
}

/// Scan `text` once; call `out` for every value found (possibly twice for one value).
///
/// Never inlined into its caller: in one codegen unit LLVM otherwise inlines it into
/// `observe_inner`, and the merged function costs about 0.6% more instructions (346.5 k
/// against 344.3 k per 10 kB observation, `gate_cost observe-stored`).
#[inline(never)]
pub(super) fn scan(text: &[u8], out: &mut impl FnMut(Found)) {
    let mut groups = Groups::default();
    let n = text.len();
    let mut i = 0;
    while i < n {
        if groups.iban.is_none() && groups.phone.is_none() {
            // Plain text (lower-case words, separators, commas: no digit, no value byte, no
            // capital) holds no value and only inert tokens; with no group being read, skip it
            // (from the separators after the last token on) to the start of the token holding
            // the next other byte. A skipped token would only have cleared the previous token
            // (`groups.prev`), which needs nothing to be done: the previous token pairs only
            // with a token at most two spaces after it, and a skipped token between them
            // puts them at least three bytes apart.
            //
            // Also skipped: a capital followed by a lower-case letter (its token has a
            // lower-case letter, so it is no currency code, and it holds no value class: it
            // only clears the previous token, as an inert token does), and one `.` or `:`
            // after a letter at the end of a token (`Friday.`, `sender:`: trailing
            // punctuation, dropped before the token's classes are looked at).
            // The bytes the skip may stop at ([`stop_mask`]: the bytes that are not plain,
            // and the quotes) sixteen at a time; only those are looked at one by one.
            let mut stop = n;
            let mut k = i;
            'skip: while k < n {
                let mut m = if k + 16 <= n {
                    stop_mask(text, k)
                } else {
                    stop_mask_tail(&text[k..])
                };
                while m != 0 {
                    let j = k + m.trailing_zeros() as usize;
                    m &= m - 1;
                    match SKIP[text[j] as usize] {
                        S_QUOTE => {
                            quoted_phrase(text, j, out);
                            continue;
                        }
                        S_CAPITAL if text.get(j + 1).is_some_and(u8::is_ascii_lowercase) => {
                            continue;
                        }
                        S_END
                            if j > 0
                                && text[j - 1].is_ascii_alphabetic()
                                && text.get(j + 1).is_none_or(|&x| CLASS[x as usize] == C_SEP) =>
                        {
                            continue;
                        }
                        _ => {}
                    }
                    stop = j;
                    break 'skip;
                }
                k += 16;
            }
            // The start of the token `stop` is in: after the last separator or comma before
            // it (`i` itself when it is no separator and the token goes on to `stop`).
            let tok = i + text[i..stop]
                .iter()
                .rposition(|&b| BOUNDARY[b as usize])
                .map_or(0, |p| p + 1);
            debug_assert!(tok == n || !BOUNDARY[text[tok] as usize] || tok == i);
            i = tok;
        } else {
            while i < n && CLASS[text[i] as usize] == C_SEP {
                if is_quote(text[i]) {
                    quoted_phrase(text, i, out);
                }
                i += 1;
            }
        }
        let s = i;
        // The classes of the token's bytes read eight at a time, or-ed per byte lane (folded
        // into one byte of flags once, below).
        let mut lanes = 0u64;
        let mut boundary = None;
        // Whether the token ends at a comma (which is then passed).
        let mut comma = false;
        loop {
            // Eight bytes at a time: their classes in one word, the token going on while none
            // is a separator or a comma.
            while let Some(w) = text.get(i..).and_then(<[u8]>::first_chunk::<8>) {
                let w = class8(w);
                let stop = w & BOUNDARY8;
                if stop != 0 {
                    // The bytes before the first separator or comma belong to the token.
                    let p = stop.trailing_zeros() / 8;
                    lanes |= w & ((1u64 << (8 * p)) - 1);
                    i += p as usize;
                    boundary = Some((w >> (8 * p)) as u8);
                    break;
                }
                lanes |= w;
                i += 8;
            }
            // One byte: the separator or comma found above (its class read with the word's),
            // or one of the last seven bytes.
            let c = match boundary.take() {
                Some(c) => c,
                None => match text.get(i) {
                    Some(&b) => CLASS[b as usize],
                    None => break,
                },
            };
            if c == C_SEP {
                break;
            }
            // A comma separates unless it is a thousands separator (digit,digit).
            if c == C_COMMA
                && !(i > s
                    && text[i - 1].is_ascii_digit()
                    && text.get(i + 1).is_some_and(u8::is_ascii_digit))
            {
                comma = true;
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
            let end = if TRAILING[last as usize] == 0 {
                i
            } else {
                trim_end(text, s, i)
            };
            // A number of at most six digits (`0`, `555`, `2024.`) is no value: not an
            // amount without a symbol or code, an identifier (≥ 7 digits) or a token (which
            // has a letter); its only part is in the groups below.
            if core & C_VALUE != 0 && !short_number(&text[s..end]) {
                classify(text, (s, end, i), flags, out);
            }
            groups.token(text, (s, end, i), flags, out);
        }
        if comma {
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

#[cfg(test)]
pub(super) mod before;

#[cfg(test)]
mod tests {
    use super::*;

    /// The skip stops at exactly the bytes that are not plain, and at the quotes.
    #[test]
    fn the_skip_stops_at_the_bytes_that_are_not_plain_and_at_quotes() {
        for b in 0..=255u8 {
            assert_eq!(stop_byte(b), !PLAIN[b as usize] || is_quote(b), "{b:#x}");
            // The skip's table reads quotes as `is_quote` does.
            assert_eq!(SKIP[b as usize] == S_QUOTE, is_quote(b), "{b:#x}");
        }
    }

    /// The tokens `scan` does not classify: numbers of at most six digits, whatever
    /// punctuation ends them, yield nothing when classified.
    #[test]
    fn short_numbers_classified_yield_nothing() {
        for len in 1..=6 {
            for digit in b'0'..=b'9' {
                for tail in ["", ".", ":", ",", ".)", "!", "?", "'", ";"] {
                    let mut t: Vec<u8> = (0..len)
                        .map(|k| digit.wrapping_add(k as u8 * 3) % 10 + b'0')
                        .collect();
                    t.extend_from_slice(tail.as_bytes());
                    let end = trim_end(&t, 0, t.len());
                    assert!(short_number(&t[..end]));
                    let flags = t.iter().fold(0, |a, &b| a | CLASS[b as usize]);
                    let mut found = Vec::new();
                    classify(&t, (0, end, t.len()), flags, &mut |f| found.push(f));
                    assert!(
                        found.is_empty(),
                        "{:?}: {found:?}",
                        String::from_utf8_lossy(&t)
                    );
                }
            }
        }
    }
}
