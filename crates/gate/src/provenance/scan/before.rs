//! The scanner's token loop as it was at a559cb9 (before the block-wise token reader): the
//! oracle of the property tests that check the new loop finds the same values, of every kind
//! (tokens and phrases too), in the same order.

use super::{
    fold8, is_trailing_punct, short_number, BOUNDARY, BOUNDARY8, CLASS, C_COMMA, C_SEP, C_VALUE,
};
use crate::provenance::classify::classify;
use crate::provenance::found::Found;
use crate::provenance::groups::Groups;
use crate::provenance::parts::trim_end;
use crate::provenance::shapes::{is_quote, quoted_phrase, whole_phrase};
use crate::provenance::simd::{stop_mask, stop_mask_tail};

/// Scan `text` once; call `out` for every value found (possibly twice for one value).
pub(in crate::provenance) fn scan(text: &[u8], out: &mut impl FnMut(Found)) {
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
                    let b = text[j];
                    if is_quote(b) {
                        quoted_phrase(text, j, out);
                        continue;
                    }
                    let next = text.get(j + 1).copied();
                    if b.is_ascii_uppercase() && next.is_some_and(|x| x.is_ascii_lowercase()) {
                        continue;
                    }
                    if matches!(b, b'.' | b':')
                        && j > i
                        && text[j - 1].is_ascii_alphabetic()
                        && next.is_none_or(|x| CLASS[x as usize] == C_SEP)
                    {
                        continue;
                    }
                    stop = j;
                    break 'skip;
                }
                k += 16;
            }
            // The start of the token `stop` is in: after the last separator or comma before it.
            let mut tok = stop;
            while tok > i && !BOUNDARY[text[tok - 1] as usize] {
                tok -= 1;
            }
            // Back to the start of the token holding the byte the skip stopped at.
            let j = tok;
            debug_assert!(j == i || BOUNDARY[text[j - 1] as usize]);
            if j > i {
                // The token at `j` holds the byte the skip stopped at (or is the last one):
                // read it now (skipping again from `j` would stop at the same byte and come
                // back to `j`).
                groups.prev = None;
                i = j;
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
                let w = super::class8(w.try_into().expect("eight bytes"));
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
            // A number of at most six digits (`0`, `555`, `2024.`) is no value: not an
            // amount without a symbol or code, an identifier (≥ 7 digits) or a token (which
            // has a letter); its only part is in the groups below.
            if core & C_VALUE != 0 && !short_number(&text[s..end]) {
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
