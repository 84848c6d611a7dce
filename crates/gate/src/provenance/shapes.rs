//! The value shapes of issue 40's item 1, read by the scanner (`scan.rs`) in its one pass:
//! **tokens** (a code, key or secret, a slug, a host without a top-level domain) for a token no
//! typed rule took, and **phrases** (2–8 words, quoted or a whole short text), compared as a
//! whole. The rules look at shapes only: no list of names, values or phrases.

use super::found::{Found, Mode};
use super::parts::{is_date_like, trim_end};
use super::ValueKind;

/// The length of the host label at the start of `s` (letters, digits, `-`, `_`; no dot)
/// when it is a host without a top-level domain: at least 2 bytes with a letter, ending `s`
/// or followed by `/ : ? #`; else 0.
pub(super) fn label_run(s: &[u8]) -> usize {
    let run = s
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
        .unwrap_or(s.len());
    let ends = s
        .get(run)
        .is_none_or(|b| matches!(b, b'/' | b':' | b'?' | b'#'));
    if run >= 2 && ends && s[..run].iter().any(u8::is_ascii_alphabetic) {
        run
    } else {
        0
    }
}

/// How a token's bytes are normalised: ASCII lower case for a slug, a `host:port` or a
/// `user@host` (their separators are part of the value), letters and digits only for a code
/// or a key (`ABC-123` and `abc123` are one value).
pub(super) fn token_mode(t: &[u8]) -> Mode {
    if t.iter().any(|&b| matches!(b, b'/' | b'@' | b':')) {
        Mode::Lower
    } else {
        Mode::AlnumLower
    }
}

/// Tokens longer than this are not read as tokens.
const TOKEN_MAX: usize = 256;

/// A distinctive token at `text[a..end]` that no typed rule took (issue 40, item 1): of
/// ASCII letters, digits and `- _ . + = ~ / :` only, starting with a letter or digit, ≥ 5
/// bytes, and one of
/// - a **code, key or secret**: letters and digits mixed (≥ 1 of each, ≥ 5 together; no
///   `/` or `:`), not a date, and not a name with a small number: letters and digits
///   alternate (≥ 3 runs: `X7K9`, `gpt-4o`), or ≥ 4 digits (`PROMO2024`), or ≥ 12 letters
///   and digits (a key) — `External_0`, `room-12`, `Plan B2` are names;
/// - a **slug**: 2–4 segments of ≥ 2 bytes separated by `/`, each starting with a letter or
///   digit, ≥ 7 bytes in all, a letter among them (`owner/name`, `group/sub/repo`; not
///   `and/or`, `he/she`);
/// - **key material** with `/`: ≥ 16 letters and digits, both (base64);
/// - a **host without a top-level domain and its port**: `name:port` (a name of ≥ 2 bytes
///   with a letter, a port of 2–5 digits): the token and its name.
pub(super) fn token(text: &[u8], a: usize, end: usize, out: &mut impl FnMut(Found)) {
    let t = &text[a..end];
    if t.len() < 5 || t.len() > TOKEN_MAX || !t[0].is_ascii_alphanumeric() {
        return;
    }
    let (mut letters, mut digits, mut slashes, mut colon) = (0usize, 0usize, 0usize, None);
    // Runs of letters and of digits (other bytes between them do not end a run).
    let (mut runs, mut last_digit) = (0usize, None);
    for (k, &b) in t.iter().enumerate() {
        let digit = match b {
            b'0'..=b'9' => {
                digits += 1;
                true
            }
            b'a'..=b'z' | b'A'..=b'Z' => {
                letters += 1;
                false
            }
            b'/' => {
                slashes += 1;
                continue;
            }
            b':' if colon.is_none() => {
                colon = Some(k);
                continue;
            }
            b'-' | b'_' | b'.' | b'+' | b'=' | b'~' => continue,
            _ => return,
        };
        runs += usize::from(last_digit != Some(digit));
        last_digit = Some(digit);
    }
    if letters == 0 {
        return;
    }
    let found = |start: usize, end: usize| Found {
        kind: ValueKind::Token,
        start,
        end,
        mode: token_mode(&text[start..end]),
    };
    if let Some(c) = colon {
        let (name, port) = (&t[..c], &t[c + 1..]);
        let named = name.len() >= 2
            && name.iter().any(u8::is_ascii_alphabetic)
            && name
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if slashes == 0
            && named
            && (2..=5).contains(&port.len())
            && port.iter().all(u8::is_ascii_digit)
        {
            out(found(a, end));
            out(found(a, a + c));
        }
        return;
    }
    if slashes > 0 {
        let slug = slashes <= 3
            && t.len() >= 7
            && t.split(|&b| b == b'/')
                .all(|seg| seg.len() >= 2 && seg[0].is_ascii_alphanumeric());
        if slug || (letters + digits >= 16 && digits > 0) {
            out(found(a, end));
        }
        return;
    }
    // A label with a small number (`External_0`, `room-12`: two runs, few digits) is a name.
    let mixed = runs >= 3 || digits >= 4 || letters + digits >= 12;
    if digits > 0 && letters + digits >= 5 && mixed && !is_date_like(t) {
        out(found(a, end));
    }
}

/// Phrases have at most this many bytes (issue 40, item 1).
pub(super) const PHRASE_MAX: usize = 96;

/// Is `b` a quote that may open a phrase?
#[inline]
pub(super) fn is_quote(b: u8) -> bool {
    matches!(b, b'"' | b'\'' | b'`')
}

/// The phrase quoted at `text[q]` (a quote), if it opens one: the quote follows no letter or
/// digit and precedes no space; the span ends at the first same quote that follows no space
/// and precedes no letter or digit, within [`PHRASE_MAX`] bytes and on one line (an
/// apostrophe inside, `Emma's notes`, does not end it).
#[inline]
pub(super) fn quoted_phrase(text: &[u8], q: usize, out: &mut impl FnMut(Found)) {
    let c = text[q];
    if q > 0 && text[q - 1].is_ascii_alphanumeric() {
        return;
    }
    match text.get(q + 1) {
        Some(&b) if b > b' ' && b != c => {}
        _ => return,
    }
    let lim = (q + 2 + PHRASE_MAX).min(text.len());
    for i in q + 2..lim {
        let b = text[i];
        if b == c
            && text[i - 1] != b' '
            && text.get(i + 1).is_none_or(|x| !x.is_ascii_alphanumeric())
        {
            phrase(text, q + 1, i, out);
            return;
        }
        if b < b' ' {
            return;
        }
    }
}

/// `text[a..b]` (trailing punctuation dropped) as a phrase: 2–8 words separated by spaces,
/// at least 4 letters, at most [`PHRASE_MAX`] bytes, of letters, digits, non-ASCII bytes and
/// the punctuation of prose (`- ' , . ! ? & : #`) only: text with an address's or a markup's
/// bytes (`@ / < ( [ { = $ %`, a quote, a control byte) is not a phrase.
fn phrase(text: &[u8], a: usize, b: usize, out: &mut impl FnMut(Found)) {
    let b = trim_end(text, a, b);
    let t = &text[a..b];
    if t.len() < 5 || t.len() > PHRASE_MAX || t[0] == b' ' {
        return;
    }
    let (mut words, mut letters) = (1usize, 0usize);
    for (k, &x) in t.iter().enumerate() {
        if x == b' ' {
            words += usize::from(t[k - 1] != b' ');
        } else if x.is_ascii_alphabetic() {
            letters += 1;
        } else if !(x.is_ascii_digit()
            || x >= 0x80
            || matches!(
                x,
                b'-' | b'\'' | b',' | b'.' | b'!' | b'?' | b'&' | b':' | b'#'
            ))
        {
            return;
        }
    }
    if (2..=8).contains(&words) && letters >= 4 {
        out(Found {
            kind: ValueKind::Phrase,
            start: a,
            end: b,
            mode: Mode::Lower,
        });
    }
}

/// A whole short text as a phrase (an argument string that is a title, a result that is one
/// line): surrounding spaces and quotes dropped.
pub(super) fn whole_phrase(text: &[u8], out: &mut impl FnMut(Found)) {
    if text.len() > PHRASE_MAX + 8 {
        return;
    }
    let skip = |b: u8| b.is_ascii_whitespace() || is_quote(b);
    let a = text.iter().position(|&b| !skip(b)).unwrap_or(text.len());
    let b = text.iter().rposition(|&b| !skip(b)).map_or(a, |p| p + 1);
    if a < b {
        phrase(text, a, b, out);
    }
}
