//! One token classified: which values it holds (e-mail, URL, domain, path, IBAN,
//! identifier, amount, or a token shape of `shapes.rs`).

use super::found::{Found, Mode};
use super::parts::{
    amount_range, host_len, is_date_like, is_file_extension, is_number, skip_www_host, trim_tail,
    CURRENCY_SYMBOLS, EMAIL_LOCAL, HOST, H_LABEL,
};
use super::scan::{C_AT, C_COLON, C_DIGIT, C_DOT, C_OTHER, C_SLASH};
use super::shapes::{label_run, token, token_mode};
use super::ValueKind;
/// Classify one token `text[s..e]` (separators already removed; `text[s..end]` without its
/// trailing punctuation); push what it holds.
#[inline(always)]
pub(super) fn classify(
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
        // The scheme: the letters before the colon.
        let a = s + tok[..p]
            .iter()
            .rposition(|b| !b.is_ascii_alphabetic())
            .map_or(0, |q| q + 1);
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
        // The local part: back from the `@` to the last byte before it that is not one of
        // an address's (in one pass over the bytes before it, through a table).
        let mut a = s + tok[..p]
            .iter()
            .rposition(|&b| !EMAIL_LOCAL[b as usize])
            .map_or(0, |q| q + 1);
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
    // The token's `/` and `\` are all in `text[a..end]` (neither is leading or trailing
    // punctuation): its flags say whether it has one.
    if flags & (C_DOT | C_SLASH | C_COLON | C_OTHER) != 0
        && path_or_domain(text, a, end, flags & C_SLASH != 0, out)
    {
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

/// A file path, or a domain with an optional path, at `text[a..end]` (`has_slash`: it holds
/// a `/` or a `\`): pushed, and true.
#[inline(always)]
pub(super) fn path_or_domain(
    text: &[u8],
    a: usize,
    end: usize,
    has_slash: bool,
    out: &mut impl FnMut(Found),
) -> bool {
    let t = &text[a..end];
    debug_assert_eq!(has_slash, t.contains(&b'/') || t.contains(&b'\\'));
    // 3. A file path.
    let rooted = match t {
        [b'/', ..] | [b'~' | b'.', b'/', ..] | [b'.', b'.', b'/', ..] => true,
        [l, b':', b'\\', ..] => l.is_ascii_alphabetic(),
        _ => false,
    };
    // 4. A domain (with an optional path) — unless it is a file name.
    // A host starts with a label byte: without one there is none to read (what
    // `skip_www_host` would find: no `www.`, no host).
    let (www, hl) = if HOST[t[0] as usize] & H_LABEL != 0 {
        skip_www_host(text, a, end)
    } else {
        (a, 0)
    };
    let host_then = (www + hl < end).then(|| text[www + hl]);
    if !rooted
        && hl > 0
        && matches!(
            host_then,
            None | Some(b'/') | Some(b':') | Some(b'?') | Some(b'#')
        )
        && !(host_then.is_none() && www == a && has_extension(&text[www..end]))
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
        || (has_slash && has_extension(t))
        || (!has_slash && has_extension(t) && t.contains(&b'.') && t[0] != b'.')
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

/// Does the last segment of `x` (after its last `/` or `\\`) end in a file extension: a `.`
/// that is not the segment's first byte, then one of [`FILE_EXTENSIONS`]? One pass from the
/// end, to the segment's last dot.
///
/// [`FILE_EXTENSIONS`]: super::parts::FILE_EXTENSIONS
#[inline]
pub(super) fn has_extension(x: &[u8]) -> bool {
    let mut i = x.len();
    while i > 0 {
        match x[i - 1] {
            b'.' => {
                return i >= 2 && !matches!(x[i - 2], b'/' | b'\\') && is_file_extension(&x[i..])
            }
            b'/' | b'\\' => return false,
            _ => i -= 1,
        }
    }
    false
}

/// Money with a symbol, an IBAN, an identifier or phone number at `text[a..end]`.
#[inline(always)]
pub(super) fn value_with_digits(text: &[u8], a: usize, end: usize, out: &mut impl FnMut(Found)) {
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

pub(super) fn is_iban(t: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The extension test as it was (the last segment split off, its last dot found): the
    /// oracle of [`has_extension`].
    fn has_extension_reference(x: &[u8]) -> bool {
        let last = x.rsplit(|&b| b == b'/' || b == b'\\').next().unwrap_or(x);
        match last.iter().rposition(|&b| b == b'.') {
            Some(d) if d > 0 => is_file_extension(&last[d + 1..]),
            _ => false,
        }
    }

    /// Every string of up to five bytes from an alphabet of separators, dots, letters of
    /// extensions and others, and longer paths and names around them.
    #[test]
    fn has_extension_is_the_reference() {
        let alphabet: &[u8] = b"./\\pdfPxA1 ";
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..5 {
            let longer: Vec<Vec<u8>> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, Vec::len))
                .flat_map(|t| {
                    alphabet.iter().map(move |&b| {
                        let mut u = t.clone();
                        u.push(b);
                        u
                    })
                })
                .collect();
            texts.extend(longer);
        }
        for t in &texts {
            for (pre, post) in [
                ("", ""),
                ("/shared/q0", ""),
                ("a.b\\c", ".txt"),
                ("x", ".JSON"),
            ] {
                let mut x = pre.as_bytes().to_vec();
                x.extend_from_slice(t);
                x.extend_from_slice(post.as_bytes());
                assert_eq!(
                    has_extension(&x),
                    has_extension_reference(&x),
                    "{:?}",
                    String::from_utf8_lossy(&x)
                );
            }
        }
    }
}
