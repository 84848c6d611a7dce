//! Canonical forms (issue 40, item 2): observed text and argument values are rewritten the
//! way a mail server, a browser or a reader would take them before values are extracted, so
//! that a rewrite of an attacker's value by the model does not make it a new value.
//!
//! In one pass, and only when the text needs it (text that is already canonical is scanned
//! as it is, without a copy):
//! - **invisible and look-alike characters** are folded ([`crate::words::fold`]: zero-width
//!   characters dropped, NFKC, Cyrillic and Greek look-alikes read as Latin letters);
//! - **IDNA**: an `xn--` label is decoded from punycode and folded too, so that
//!   `xn--pple-43d.example` and `аpple.example` (Cyrillic а) are both `apple.example`;
//! - **percent-encoding** of letters, digits and `@ . - _ : / ~ +` is decoded (also when the
//!   percent sign is itself encoded: `%2540` is `@`);
//! - **spelled separators**: `[at]`, `(at)`, `{at}`, `<at>`, `[@]`, `(@)` are `@`, and `[.]`,
//!   `(.)`, `{.}`, `[dot]`, `(dot)`, `{dot}`, `<dot>` are `.` (any case, spaces around them
//!   dropped) when a letter or digit stands on both sides;
//! - **URLs as a browser reads them**: in `http:`, `https:`, `ftp:`, `ws:` and `wss:` URLs any
//!   run of `/` and `\` after the scheme is `//`, a `\` in the rest is `/` (so
//!   `https://evil.example\@docs.corp/` is a URL of `evil.example`), user information (what
//!   comes before the last `@` of the authority: `https://docs.corp@evil.example/`) is dropped,
//!   and a host written as a number in any IPv4 spelling (`3232235777`, `0xC0A80101`,
//!   `0300.0250.1.1`, `192.168.257`) is written as a dotted quad.
//!
//! Every step is applied to observed text and to argument values alike, so that both sides
//! meet in the same form. The scanner then finds values in the canonical text; an e-mail
//! address also yields its domain as a value (a domain is a host, whoever names it).

/// Does `text` hold anything [`canonical`] would rewrite? (A fast check: a mask of the bytes
/// that may start a rewrite ([`starts`]) is made sixteen bytes at a time; only those bytes are
/// read further, the others never one by one.)
#[inline]
pub(super) fn needs(text: &[u8]) -> bool {
    let n = text.len();
    let mut k = 0;
    while k + 16 <= n {
        let mut m = start_mask(text, k);
        while m != 0 {
            let i = k + m.trailing_zeros() as usize;
            if !passed(text, i) && needs_at(text, i) {
                return true;
            }
            m &= m - 1;
        }
        k += 16;
    }
    (k..n).any(|i| needs_at(text, i))
}

/// [`starts`] of `text[k + i]` as bit `i`, for `i < 16` (`k + 16 <= text.len()`): one
/// load, one compare per byte value (what follows a `:` or a `-` is read by [`needs_at`]).
#[inline]
fn start_mask(text: &[u8], k: usize) -> u64 {
    use super::simd::{bits, eq, load};
    let b = load(text, k);
    let any = eq(b, b'%')
        | eq(b, b'[')
        | eq(b, b'(')
        | eq(b, b'{')
        | eq(b, b'<')
        | eq(b, b'\\')
        | eq(b, b':')
        | eq(b, b'-');
    // Non-ASCII bytes: their high bit is the mask's bit.
    bits(any | b)
}

/// May a rewrite start at a byte `b`? A superset of [`needs_at`] (its test): a non-ASCII
/// byte, one of `% [ ( { < \`, a `:` (a scheme's) or a `-` (an `xn--` label's).
#[cfg(test)]
fn starts(b: u8) -> bool {
    b >= 0x80 || matches!(b, b'%' | b'[' | b'(' | b'{' | b'<' | b'\\' | b':' | b'-')
}

/// Is `text[i]` a `:` or a `-` of the mask that [`needs_at`] would pass at once (a `:` before
/// neither `/` nor a backslash, a `-` before no `-`: most of them)? Read inline, before the
/// call.
#[inline(always)]
fn passed(text: &[u8], i: usize) -> bool {
    match text[i] {
        b':' => !matches!(text.get(i + 1), Some(b'/' | b'\\')),
        b'-' => text.get(i + 1) != Some(&b'-'),
        _ => false,
    }
}

/// Does a rewrite start at (or, for an `xn--` label, two bytes before) `text[i]`?
#[inline]
fn needs_at(text: &[u8], i: usize) -> bool {
    match text[i] {
        0x80..=0xff => true,
        b'%' | b'[' | b'(' | b'{' | b'<' | b'\\' => rewrite_at(text, i),
        // A scheme's `:` is followed by `/` or a backslash (read first: most colons are not).
        b':' => {
            matches!(text.get(i + 1), Some(b'/' | b'\\'))
                && scheme_before(text, i).is_some()
                && url_needs(text, i + 1)
        }
        // The `--` of an `xn--` label that starts a label.
        b'-' => {
            i >= 2
                && text.get(i + 1) == Some(&b'-')
                && text[i - 2..i].eq_ignore_ascii_case(b"xn")
                && label_start(text, i - 2)
        }
        _ => false,
    }
}

/// [`needs`] as it was before the chunked test: the oracle of its property test.
#[cfg(test)]
fn needs_reference(text: &[u8]) -> bool {
    let mut i = 0;
    while i < text.len() {
        let hit = match text[i] {
            0x80..=0xff => true,
            b'%' | b'[' | b'(' | b'{' | b'<' | b'\\' => rewrite_at(text, i),
            b':' => scheme_before_reference(text, i).is_some() && url_needs_reference(text, i + 1),
            b'x' | b'X' => label_start(text, i) && starts_with_ci(&text[i..], b"xn--"),
            _ => false,
        };
        if hit {
            return true;
        }
        i += 1;
    }
    false
}

/// [`scheme_before`] as it was before the length match: part of [`needs_reference`].
#[cfg(test)]
fn scheme_before_reference(text: &[u8], colon: usize) -> Option<usize> {
    let mut a = colon;
    while a > 0 && text[a - 1].is_ascii_alphabetic() && colon - a < 5 {
        a -= 1;
    }
    if a > 0 && (text[a - 1].is_ascii_alphanumeric() || matches!(text[a - 1], b'+' | b'.' | b'-')) {
        return None;
    }
    let s = &text[a..colon];
    let known = [&b"http"[..], b"https", b"ftp", b"ws", b"wss"];
    (known.iter().any(|k| s.eq_ignore_ascii_case(k))
        && matches!(text.get(colon + 1), Some(b'/' | b'\\')))
    .then_some(a)
}

/// [`url_needs`] as it was before the one-pass authority: part of [`needs_reference`].
#[cfg(test)]
fn url_needs_reference(text: &[u8], i: usize) -> bool {
    let slashes = text[i..]
        .iter()
        .take_while(|&&c| c == b'/' || c == b'\\')
        .count();
    if slashes != 2 || text[i..i + 2] != *b"//" {
        return true;
    }
    let a = i + 2;
    let e = a + text[a..]
        .iter()
        .take_while(|&&c| !url_end(c) && !matches!(c, b'/' | b'\\' | b'?' | b'#'))
        .count();
    let auth = &text[a..e];
    if auth.contains(&b'@') || text.get(e) == Some(&b'\\') {
        return true;
    }
    let host_end = auth.iter().position(|&c| c == b':').unwrap_or(auth.len());
    ipv4(&auth[..host_end]).is_some_and(|ip| !is_dotted_quad(&auth[..host_end], ip))
}

/// Would the byte at `i` (one of `% [ ( { < \`) start a rewrite?
fn rewrite_at(text: &[u8], i: usize) -> bool {
    match text[i] {
        b'%' => percent_at(text, i).is_some() || double_percent_at(text, i).is_some(),
        b'\\' => true,
        _ => spelled_at(text, i).is_some(),
    }
}

/// The canonical form of `text` into `out` (cleared first); `false` (and `out` left empty)
/// when `text` is canonical already. `tmp` is scratch space (both are reused by the caller,
/// so that a store allocates only while they grow).
pub(super) fn canonical(text: &[u8], out: &mut Vec<u8>, tmp: &mut Vec<u8>) -> bool {
    out.clear();
    if !needs(text) {
        return false;
    }
    // 1. Unicode: fold look-alikes and invisible characters; decode `xn--` labels.
    let mut src: &[u8] = text;
    if text.iter().any(|&b| b >= 0x80) || has_xn(text) {
        tmp.clear();
        fold_unicode(text, tmp);
        src = tmp;
    }
    // 2. ASCII rewrites.
    rewrite(src, out);
    true
}

fn has_xn(text: &[u8]) -> bool {
    text.windows(4)
        .enumerate()
        .any(|(i, w)| w.eq_ignore_ascii_case(b"xn--") && label_start(text, i))
}

fn label_start(text: &[u8], i: usize) -> bool {
    i == 0 || !(text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'-')
}

fn starts_with_ci(t: &[u8], p: &[u8]) -> bool {
    t.len() >= p.len() && t[..p.len()].eq_ignore_ascii_case(p)
}

/// Fold `text` (UTF-8 where valid; invalid bytes kept) into `out`, decoding `xn--` labels.
fn fold_unicode(text: &[u8], out: &mut Vec<u8>) {
    for chunk in text.utf8_chunks() {
        let valid = chunk.valid();
        let mut rest = valid;
        while !rest.is_empty() {
            // An `xn--` label: decode it, then fold what it decodes to.
            let b = rest.as_bytes();
            let at = b
                .windows(4)
                .enumerate()
                .position(|(i, w)| {
                    w.eq_ignore_ascii_case(b"xn--") && {
                        let whole = valid.len() - rest.len() + i;
                        label_start(valid.as_bytes(), whole)
                    }
                })
                .unwrap_or(b.len());
            push_folded(&rest[..at], out);
            rest = &rest[at..];
            if rest.is_empty() {
                break;
            }
            let len = rest
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'-')
                .count();
            let label = &rest[..len];
            match idna::punycode::decode_to_string(&label[4..]) {
                Some(u) if !u.is_empty() => push_folded(&u, out),
                _ => out.extend_from_slice(label.as_bytes()),
            }
            rest = &rest[len..];
        }
        out.extend_from_slice(chunk.invalid());
    }
}

fn push_folded(s: &str, out: &mut Vec<u8>) {
    if s.is_ascii() {
        out.extend_from_slice(s.as_bytes());
    } else {
        out.extend_from_slice(crate::words::fold(s).as_bytes());
    }
}

/// The byte a `%XX` at `text[i..]` stands for, when it is one [`canonical`] decodes.
fn percent_at(text: &[u8], i: usize) -> Option<u8> {
    text.get(i..i + 3).and_then(percent_byte)
}

/// A percent-encoded percent sign before a `XX` that [`percent_byte`] decodes (`%2540`):
/// the byte.
fn double_percent_at(text: &[u8], i: usize) -> Option<u8> {
    let w = text.get(i..i + 5)?;
    if !w[1..3].eq_ignore_ascii_case(b"25") {
        return None;
    }
    percent_byte(&[b'%', w[3], w[4]])
}

fn percent_byte(w: &[u8]) -> Option<u8> {
    if w.len() < 3 || w[0] != b'%' {
        return None;
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = hex(w[1])? * 16 + hex(w[2])?;
    (b.is_ascii_alphanumeric()
        || matches!(b, b'@' | b'.' | b'-' | b'_' | b':' | b'/' | b'~' | b'+'))
    .then_some(b)
}

/// A spelled separator at `text[i..]` (`[at]`, `(dot)`, ...): the byte it stands for and its
/// length.
fn spelled_at(text: &[u8], i: usize) -> Option<(u8, usize)> {
    let close = match text[i] {
        b'[' => b']',
        b'(' => b')',
        b'{' => b'}',
        b'<' => b'>',
        _ => return None,
    };
    let mut j = i + 1;
    while text.get(j) == Some(&b' ') {
        j += 1;
    }
    let rest = &text[j.min(text.len())..];
    let (b, n) = if starts_with_ci(rest, b"at") {
        (b'@', 2)
    } else if starts_with_ci(rest, b"dot") {
        (b'.', 3)
    } else if rest.first() == Some(&b'@') {
        (b'@', 1)
    } else if rest.first() == Some(&b'.') {
        (b'.', 1)
    } else {
        return None;
    };
    j += n;
    while text.get(j) == Some(&b' ') {
        j += 1;
    }
    if text.get(j) != Some(&close) {
        return None;
    }
    Some((b, j + 1 - i))
}

/// The scheme ending at the `:` at `colon`, when it is one whose URLs a browser reads with
/// backslashes as slashes: its start.
fn scheme_before(text: &[u8], colon: usize) -> Option<usize> {
    // The letters before the colon (at most five), lower-cased (`| 0x20`) and packed while
    // they are read, the last in the lowest byte.
    let mut a = colon;
    let mut key = 0u64;
    while a > 0 && colon - a < 5 {
        let c = text[a - 1];
        if !c.is_ascii_alphabetic() {
            break;
        }
        key |= u64::from(c | 0x20) << (8 * (colon - a));
        a -= 1;
    }
    if a > 0 && (text[a - 1].is_ascii_alphanumeric() || matches!(text[a - 1], b'+' | b'.' | b'-')) {
        return None;
    }
    const WS: u64 = scheme_key(b"ws");
    const FTP: u64 = scheme_key(b"ftp");
    const WSS: u64 = scheme_key(b"wss");
    const HTTP: u64 = scheme_key(b"http");
    const HTTPS: u64 = scheme_key(b"https");
    let known = matches!(key, WS | FTP | WSS | HTTP | HTTPS);
    (known && matches!(text.get(colon + 1), Some(b'/' | b'\\'))).then_some(a)
}

/// The ASCII letters `s` lower-cased and packed as [`scheme_before`] reads them (the last in
/// the lowest byte): one key for a scheme in any case.
const fn scheme_key(s: &[u8]) -> u64 {
    let mut k = 0u64;
    let mut i = 0;
    while i < s.len() {
        k = k << 8 | (s[i] | 0x20) as u64;
        i += 1;
    }
    k
}

/// Bytes of an authority: bit 0 ends it ([`url_end`], `/ \ ? #`), bit 1 is `@`.
const AUTHORITY: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let end = c.is_ascii_whitespace()
            || matches!(
                c,
                b'"' | b'\'' | b'<' | b'>' | b'`' | b'/' | b'\\' | b'?' | b'#'
            );
        t[i] = end as u8 | (((c == b'@') as u8) << 1);
        i += 1;
    }
    t
};

/// Where the authority starting at `a` ends (a browser ends it at `/ \ ? #`), and whether it
/// holds an `@`.
/// Sixteen bytes at a time ([`authority_mask`]), then byte by byte.
#[inline]
fn authority(text: &[u8], a: usize) -> (usize, bool) {
    let mut e = a;
    let mut at = 0;
    while e + 16 <= text.len() {
        let (end, ats) = authority_mask(text, e);
        if end != 0 {
            let p = end.trailing_zeros();
            return (e + p as usize, (at | (ats & ((1 << p) - 1))) != 0);
        }
        at |= ats;
        e += 16;
    }
    authority_bytes(text, e, at != 0)
}

/// The bytes that end an authority (bit 0 of [`AUTHORITY`]) and the `@`s (bit 1) among
/// `text[k..k + 16]`, as bit `i` for `text[k + i]`.
#[inline(always)]
fn authority_mask(text: &[u8], k: usize) -> (u64, u64) {
    use super::simd::{bits, eq, in_range, load};
    let v = load(text, k);
    // White space (`\t \n`, `\x0c \r`, space), `" #`, `'`, `/`, `<`, `> ?`, `\`, `` ` ``.
    let end = in_range(v, 0x09, 0x0a)
        | in_range(v, 0x0c, 0x0d)
        | eq(v, b' ')
        | in_range(v, b'"', b'#')
        | eq(v, b'\'')
        | eq(v, b'/')
        | eq(v, b'<')
        | in_range(v, b'>', b'?')
        | eq(v, b'\\')
        | eq(v, b'`');
    (bits(end), bits(eq(v, b'@')))
}

/// [`authority`] byte by byte from `e` (`at`: an `@` was read before `e`).
#[inline]
fn authority_bytes(text: &[u8], mut e: usize, at: bool) -> (usize, bool) {
    let mut at = u8::from(at) << 1;
    while let Some(&c) = text.get(e) {
        let k = AUTHORITY[c as usize];
        if k & 1 != 0 {
            break;
        }
        at |= k;
        e += 1;
    }
    (e, at != 0)
}

/// Where the authority starting at `a` ends.
fn authority_end(text: &[u8], a: usize) -> usize {
    authority(text, a).0
}

fn url_end(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>' | b'`')
}

/// Does the URL whose scheme's `:` is just before `i` need a rewrite?
fn url_needs(text: &[u8], i: usize) -> bool {
    // Exactly `//` after the scheme.
    if text.get(i..i + 2) != Some(b"//") || matches!(text.get(i + 2), Some(b'/' | b'\\')) {
        return true;
    }
    let a = i + 2;
    let (e, at) = authority(text, a);
    if at || text.get(e) == Some(&b'\\') {
        return true;
    }
    let auth = &text[a..e];
    // Only a host that starts with a digit may be an IPv4 address in another spelling.
    if !auth.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    let host_end = auth.iter().position(|&c| c == b':').unwrap_or(auth.len());
    ipv4(&auth[..host_end]).is_some_and(|ip| !is_dotted_quad(&auth[..host_end], ip))
}

/// Write the ASCII rewrites of `text` (see the module documentation) into `out`.
fn rewrite(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(text.len());
    let mut i = 0;
    // Inside a URL's path (after its authority): a `\` is a `/`.
    let mut in_path = false;
    while i < text.len() {
        let b = text[i];
        if in_path && url_end(b) {
            in_path = false;
        }
        match b {
            b'%' => {
                if let Some(d) = percent_at(text, i) {
                    out.push(d);
                    i += 3;
                    continue;
                }
                if let Some(d) = double_percent_at(text, i) {
                    out.push(d);
                    i += 5;
                    continue;
                }
            }
            b'\\' if in_path => {
                out.push(b'/');
                i += 1;
                continue;
            }
            b'[' | b'(' | b'{' | b'<' => {
                if let Some((sep, n)) = spelled_at(text, i) {
                    let before = out.iter().rev().take_while(|&&c| c == b' ').count();
                    let prev = out.len().checked_sub(before + 1).map(|k| out[k]);
                    let mut j = i + n;
                    while text.get(j) == Some(&b' ') {
                        j += 1;
                    }
                    let next = text.get(j).copied();
                    if prev.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
                        && next.is_some_and(|c| c.is_ascii_alphanumeric())
                    {
                        out.truncate(out.len() - before);
                        out.push(sep);
                        i = j;
                        continue;
                    }
                }
            }
            b':' if scheme_before(text, i).is_some() => {
                out.push(b':');
                out.extend_from_slice(b"//");
                i += 1;
                while i < text.len() && (text[i] == b'/' || text[i] == b'\\') {
                    i += 1;
                }
                // The authority: user information dropped, a numeric host as a dotted quad.
                let e = authority_end(text, i);
                let mut a = i;
                if let Some(at) = text[i..e].iter().rposition(|&c| c == b'@') {
                    a = i + at + 1;
                }
                let auth = &text[a..e];
                let host_end = auth.iter().position(|&c| c == b':').unwrap_or(auth.len());
                match ipv4(&auth[..host_end]) {
                    Some(ip) => {
                        let (quad, n) = dotted_quad(ip);
                        out.extend_from_slice(&quad[..n]);
                        out.extend_from_slice(&auth[host_end..]);
                    }
                    None => out.extend_from_slice(auth),
                }
                i = e;
                in_path = true;
                continue;
            }
            _ => {}
        }
        out.push(b);
        i += 1;
    }
}

/// A host written as an IPv4 address in any spelling `inet_aton` accepts (1 to 4 parts,
/// each decimal, `0x` hexadecimal or `0`-led octal; the last part fills the remaining
/// bytes).
pub(super) fn ipv4(host: &[u8]) -> Option<u32> {
    let host = host.strip_suffix(b".").unwrap_or(host);
    if host.is_empty() || !host[0].is_ascii_digit() {
        return None;
    }
    let mut parts = [0u64; 4];
    let mut n = 0;
    for part in host.split(|&c| c == b'.') {
        if n == 4 || part.is_empty() {
            return None;
        }
        let (digits, radix) =
            if part.len() > 2 && (part[1] == b'x' || part[1] == b'X') && part[0] == b'0' {
                (&part[2..], 16)
            } else if part.len() > 1 && part[0] == b'0' {
                (&part[1..], 8)
            } else {
                (part, 10)
            };
        let s = std::str::from_utf8(digits).ok()?;
        if s.is_empty() || s.len() > 12 || !s.bytes().all(|c| (c as char).is_digit(radix)) {
            return None;
        }
        parts[n] = u64::from_str_radix(s, radix).ok()?;
        n += 1;
    }
    let last_bits = 8 * (5 - n as u32);
    let mut ip: u64 = 0;
    for (k, &p) in parts[..n - 1].iter().enumerate() {
        if p > 255 {
            return None;
        }
        ip |= p << (24 - 8 * k as u32);
    }
    let last = parts[n - 1];
    if last_bits < 64 && last >= 1u64 << last_bits {
        return None;
    }
    ip |= last;
    u32::try_from(ip).ok()
}

fn is_dotted_quad(host: &[u8], ip: u32) -> bool {
    let (quad, n) = dotted_quad(ip);
    host == &quad[..n]
}

/// `ip` as a dotted quad (`a.b.c.d`) in a buffer, and its length.
fn dotted_quad(ip: u32) -> ([u8; 16], usize) {
    use std::io::Write;
    let mut w = std::io::Cursor::new([0u8; 16]);
    let [p, q, r, s] = ip.to_be_bytes();
    let _ = write!(w, "{p}.{q}.{r}.{s}");
    let n = w.position() as usize;
    (w.into_inner(), n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// The chunked check answers as the byte-by-byte one, on text dense with the bytes a
        /// rewrite starts at (and their near misses) at every offset of a chunk.
        #[test]
        fn the_chunked_check_agrees_with_the_reference(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                "a", "b c ", "x", "xn", "xn--", "XN--bcher", "-", "--", ":", "://", ":\\", "http", "https:",
                "https://", "https:\\\\h", "//", "%", "%40", "%2540", "%zz", "[at]", "[", "(dot)", "(",
                "{", "<at>", "<", "\\", "é", "\u{200b}", "a@b", "1.2.3.4", "0x7f000001",
                "https://a@b/", "http://3405803783/", "w", "........", "ftp://", "WSS://", "Ws:/",
                "https:///", "http://1.2.3.4:80/", "http://0300.0250.1.1/", "http://a\\", "@", "?", "#",
                "\t", "\"", "hTTp", "sftp://", "8", "127.1", ".",
            ]), 0..80),
            pad in 0usize..40,
        ) {
            let text: String = " ".repeat(pad) + &parts.concat();
            prop_assert_eq!(needs(text.as_bytes()), needs_reference(text.as_bytes()), "{:?}", text);
        }

        /// The same on arbitrary bytes.
        #[test]
        fn the_chunked_check_agrees_on_any_bytes(text in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(needs(&text), needs_reference(&text));
        }
    }

    fn canon(s: &str) -> String {
        let (mut out, mut tmp) = (Vec::new(), Vec::new());
        if canonical(s.as_bytes(), &mut out, &mut tmp) {
            String::from_utf8_lossy(&out).into_owned()
        } else {
            s.to_string()
        }
    }

    /// The authority read sixteen bytes at a time is the authority read byte by byte: every
    /// byte value at every position of a 40-byte authority (ending it, an `@`, or neither),
    /// with an `@` before it or not, and texts ending inside the authority.
    #[test]
    fn authority_is_the_bytewise_authority() {
        let base = b"www.docs0.example.org:8080.a-b_c.d.e.f.g";
        for pos in 0..base.len() {
            for b in 0..=255u8 {
                let mut text = base.to_vec();
                text[pos] = b;
                for pre in [&b""[..], b"x@"] {
                    let mut t = pre.to_vec();
                    t.extend_from_slice(&text);
                    for len in [t.len(), pre.len() + pos + 1, pre.len() + 17] {
                        let t = &t[..len.min(t.len())];
                        let want = authority_bytes(t, 0, false);
                        assert_eq!(authority(t, 0), want, "{:?}", String::from_utf8_lossy(t));
                    }
                }
            }
        }
    }

    /// The authority table is the byte tests it stands for.
    #[test]
    fn the_authority_table_is_the_byte_tests() {
        for c in 0..=255u8 {
            let end = url_end(c) || matches!(c, b'/' | b'\\' | b'?' | b'#');
            assert_eq!(AUTHORITY[c as usize] & 1 != 0, end, "{c:#x}");
            assert_eq!(AUTHORITY[c as usize] & 2 != 0, c == b'@', "{c:#x}");
        }
    }

    /// The mask is the byte test, for every byte at every lane.
    #[test]
    fn the_start_mask_is_the_start_test() {
        for b in 0..=255u8 {
            for lane in 0..16 {
                let mut text = [b'a'; 16];
                text[lane] = b;
                let bit = start_mask(&text, 0) >> lane & 1 == 1;
                assert_eq!(bit, starts(b), "{b:#04x} at {lane}");
                assert_eq!(start_mask(&text, 0) & !(1 << lane), 0, "{b:#04x} at {lane}");
            }
        }
    }

    /// The scheme before a colon as the reference reads it: the known schemes in any case,
    /// their near misses, longer and shorter runs of letters, and what may stand before them.
    #[test]
    fn scheme_before_is_the_reference() {
        let schemes = [
            "", "w", "ws", "WS", "wS", "wss", "Wss", "ftp", "FTP", "ftps", "http", "HTTP", "hTtP",
            "https", "HTTPS", "httpx", "htt", "sftp", "xhttps", "ws2", "wt", "ftq", "gttp",
            "http[",
        ];
        for pre in ["", " ", "a", "1", "+", ".", "-", "(", "/", "é"] {
            for s in schemes {
                for after in [":/", ":\\", ":", ":x"] {
                    let text = format!("{pre}{s}{after}");
                    let colon = pre.len() + s.len();
                    if text.as_bytes()[colon] != b':' {
                        continue;
                    }
                    assert_eq!(
                        scheme_before(text.as_bytes(), colon),
                        scheme_before_reference(text.as_bytes(), colon),
                        "{text:?}"
                    );
                }
            }
        }
    }

    /// No rewrite starts at a byte the mask leaves out, whatever bytes stand around it.
    #[test]
    fn needs_at_is_false_where_the_mask_is() {
        for b in (0..=255u8).filter(|&b| !starts(b)) {
            for c in 0..=255u8 {
                for text in [
                    [b'x', b'n', b, c, c],
                    [c, c, b, c, c],
                    [b'-', b'-', b, c, b'-'],
                ] {
                    assert!(!needs_at(&text, 2), "{b:#04x} {c:#04x} {text:?}");
                }
            }
        }
    }

    #[test]
    fn spelled_separators_percent_and_invisible_characters() {
        assert_eq!(
            canon("attacker [at] evil [dot] example"),
            "attacker@evil.example"
        );
        assert_eq!(canon("attacker(at)evil(.)example"), "attacker@evil.example");
        assert_eq!(canon("evil[.]example and {dot}"), "evil.example and {dot}");
        assert_eq!(canon("attacker%40evil%2Eexample"), "attacker@evil.example");
        assert_eq!(canon("attacker%2540evil.example"), "attacker@evil.example");
        assert_eq!(canon("a%20b stays"), "a%20b stays");
        assert_eq!(
            canon("att\u{200b}acker@ev\u{00ad}il.example"),
            "attacker@evil.example"
        );
        assert_eq!(canon("аttacker@еvil.example"), "attacker@evil.example");
        assert_eq!(
            canon("ａｔｔａｃｋｅｒ＠evil.example"),
            "attacker@evil.example"
        );
        // Plain text is left alone (no copy).
        let (mut out, mut tmp) = (Vec::new(), Vec::new());
        assert!(!canonical(
            b"see (below) [1] <b>x</b> at 5 pm",
            &mut out,
            &mut tmp
        ));
    }

    #[test]
    fn urls_as_a_browser_reads_them() {
        assert_eq!(
            canon("https://docs.corp@evil.example/x"),
            "https://evil.example/x"
        );
        assert_eq!(
            canon("https:\\\\evil.example\\a\\b"),
            "https://evil.example/a/b"
        );
        assert_eq!(
            canon("https://evil.example\\@docs.corp/"),
            "https://evil.example/@docs.corp/"
        );
        assert_eq!(canon("http://3232235777/a"), "http://192.168.1.1/a");
        assert_eq!(canon("http://0xC0A80101/"), "http://192.168.1.1/");
        assert_eq!(
            canon("http://0300.0250.1.1:8080/"),
            "http://192.168.1.1:8080/"
        );
        assert_eq!(canon("http://192.168.257/"), "http://192.168.1.1/");
        assert_eq!(canon("http://127.1/"), "http://127.0.0.1/");
        let (mut out, mut tmp) = (Vec::new(), Vec::new());
        assert!(!canonical(
            b"http://192.168.1.1/ and https://a.example/b",
            &mut out,
            &mut tmp
        ));
    }

    #[test]
    fn idna_labels_are_decoded_and_folded() {
        assert_eq!(canon("mail xn--bcher-kva.example"), "mail bücher.example");
        // `xn--pple-43d` is Cyrillic а + "pple".
        assert_eq!(
            canon("https://xn--pple-43d.example/"),
            "https://apple.example/"
        );
        assert_eq!(canon("https://аpple.example/"), "https://apple.example/");
    }

    #[test]
    fn ipv4_spellings() {
        assert_eq!(ipv4(b"192.168.1.1"), Some(0xC0A8_0101));
        assert_eq!(ipv4(b"3232235777"), Some(0xC0A8_0101));
        assert_eq!(ipv4(b"0xc0.0xa8.1.1"), Some(0xC0A8_0101));
        assert_eq!(ipv4(b"256.1.1.1"), None);
        assert_eq!(ipv4(b"1.2.3.4.5"), None);
        assert_eq!(ipv4(b"evil.example"), None);
        assert_eq!(ipv4(b"4294967296"), None);
    }
}
