//! The parts of a token the scanner reads: trailing punctuation, currency codes and symbols,
//! file extensions, hosts, amounts, dates.

use super::scan::TRAILING;
#[inline]
pub(super) const fn is_email_local(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// [`is_email_local`] as a table.
pub(super) const EMAIL_LOCAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = is_email_local(i as u8);
        i += 1;
    }
    t
};

pub(super) const CURRENCY_CODES: &[&[u8]] = &[
    b"USD", b"EUR", b"GBP", b"CHF", b"JPY", b"CAD", b"AUD", b"CNY", b"INR", b"SEK", b"NOK", b"DKK",
    b"PLN",
];
pub(super) const CURRENCY_SYMBOLS: &[&[u8]] = &[
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
pub(super) const fn pack_lower(s: &[u8]) -> u64 {
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

/// [`FILE_EXTENSIONS`] packed ([`pack_lower`]) and sorted, for a binary search.
pub(super) const FILE_EXTENSION_KEYS: [u64; FILE_EXTENSIONS.len()] = {
    let mut k = [0u64; FILE_EXTENSIONS.len()];
    let mut i = 0;
    while i < k.len() {
        k[i] = pack_lower(FILE_EXTENSIONS[i]);
        // Insertion sort (a `const` context has no `sort`).
        let mut j = i;
        while j > 0 && k[j - 1] > k[j] {
            let t = k[j];
            k[j] = k[j - 1];
            k[j - 1] = t;
            j -= 1;
        }
        i += 1;
    }
    k
};

/// Is `ext` one of [`FILE_EXTENSIONS`], in any case?
#[inline]
pub(super) fn is_file_extension(ext: &[u8]) -> bool {
    // Every extension has 1–4 bytes (checked by a test).
    ext.len() <= 4 && FILE_EXTENSION_KEYS.binary_search(&pack_lower(ext)).is_ok()
}

pub(super) fn eq_ignore_case_in(s: &[u8], list: &[&[u8]]) -> bool {
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
pub(super) const H_LABEL: u8 = 8;
pub(super) const H_DIGIT: u8 = H_LABEL | 1;
pub(super) const H_ALPHA: u8 = H_LABEL | 2;
pub(super) const H_MISC: u8 = H_LABEL | 4;
pub(super) const H_DOT: u8 = 16;
pub(super) const HOST: [u8; 256] = {
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
    let mut i = 0;
    loop {
        // One label: its bytes' kinds or-ed (all digits: `H_DIGIT`; all letters: `H_ALPHA`).
        let start = i;
        let mut kinds = 0;
        let k = loop {
            let k = s.get(i).map_or(0, |&b| HOST[b as usize]);
            if k & H_LABEL == 0 {
                break k;
            }
            kinds |= k;
            i += 1;
        };
        let (digits_only, alpha_only) = (kinds == H_DIGIT, kinds == H_ALPHA);
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
#[inline(always)]
pub(super) fn skip_www_host(s: &[u8], a: usize, b: usize) -> (usize, usize) {
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
pub(super) fn is_number(t: &[u8]) -> bool {
    !t.is_empty()
        && t[0].is_ascii_digit()
        && t.iter()
            .all(|&b| b.is_ascii_digit() || b == b',' || b == b'.')
}

/// The canonical range of a plain number `t[a..b]`: leading zeros and trailing decimal zeros
/// (and a trailing `.`) dropped. Numbers with more than one `.` are not amounts.
#[inline(always)]
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
