//! The values of a text or an argument, as the allocating API gives them (for converters and
//! tests), and the values the store reads in: e-mail domains, parent domains, canonical leaves.

use super::*;

/// The kind of an extracted value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
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
    /// The domain of an e-mail address (derived by the store, never by [`extract`]): as an
    /// observed value it is a host like any other (a fetch of `https://evil.example/` after
    /// a result naming `attacker@evil.example`); as the domain of an argument's e-mail
    /// address it counts only where the domain was seen as a host itself (a URL, a bare
    /// domain), not only inside other addresses: an address the model composed at a
    /// colleague's domain is not a value of the text that named the colleague.
    #[serde(rename = "mail_domain")]
    MailDomain,
    /// A parent domain of a host in an argument (`evil.example` of
    /// `https://mail.evil.example/`; derived by the store on the argument side only): a send
    /// to a subdomain of a host a result named carries a value of that result.
    #[serde(rename = "parent_domain")]
    ParentDomain,
    /// A distinctive token of no typed shape (issue 40, item 1): a code mixing letters and
    /// digits (`X7K9Q2`, `PROMO-2024`), a key, token or secret (`sk_live_4eC39HqLyjWDarjtT1zdp7dc`),
    /// a slug (`owner/name`), a host without a top-level domain (`http://intranet/`,
    /// `build-box:8080`, `root@build-box`).
    Token,
    /// A phrase of 2–8 words (issue 40, item 1): quoted in text (`"Project Nightshade
    /// launch"`), or a whole short text or argument string (a title): compared as a whole.
    Phrase,
}

impl ValueKind {
    /// Derived by the store from another value of an argument (an address's domain, a host's
    /// parent), not found in text as such.
    pub fn derived(self) -> bool {
        matches!(self, ValueKind::MailDomain | ValueKind::ParentDomain)
    }

    /// A value of a typed shape (an address, a URL, a host, an IBAN, an identifier with
    /// digits, a phone number, a path, an amount), not one of the shapes of issue 40's item 1
    /// ([`ValueKind::Token`], [`ValueKind::Phrase`]): what the AgentDojo converter takes as
    /// identifiers of an attacker's call, as it did before that item.
    pub fn typed(self) -> bool {
        !matches!(self, ValueKind::Token | ValueKind::Phrase)
    }

    /// Its name (`email`, `url`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Email => "email",
            ValueKind::Url => "url",
            ValueKind::Domain => "domain",
            ValueKind::MailDomain => "mail domain",
            ValueKind::ParentDomain => "parent domain",
            ValueKind::Iban => "iban",
            ValueKind::Account => "account",
            ValueKind::Phone => "phone",
            ValueKind::Path => "path",
            ValueKind::Amount => "amount",
            ValueKind::Token => "token",
            ValueKind::Phrase => "phrase",
        }
    }
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
        push_new(&mut out, &mut buf, text.as_bytes(), &f)
    });
    out
}

/// Every value of every string and number leaf of `v` (object keys are not read).
pub fn extract_json(v: &Value) -> Vec<Extracted> {
    let mut out: Vec<Extracted> = Vec::new();
    let mut buf = Vec::new();
    json_leaves(v, &mut |bytes: &[u8], f: Found| {
        push_new(&mut out, &mut buf, bytes, &f)
    });
    out
}

/// Push the value found at `f` in `text`, normalised (through `buf`), unless `out` has it.
fn push_new(out: &mut Vec<Extracted>, buf: &mut Vec<u8>, text: &[u8], f: &Found) {
    buf.clear();
    buf.extend(f.bytes(text));
    let t = String::from_utf8_lossy(buf).into_owned();
    if !out.iter().any(|x| x.text == t) {
        out.push(Extracted {
            kind: f.kind,
            text: t,
        });
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
        ValueKind::Email | ValueKind::Path | ValueKind::Phrase => Mode::Lower,
        ValueKind::Token => shapes::token_mode(t),
        ValueKind::Url | ValueKind::Domain | ValueKind::MailDomain | ValueKind::ParentDomain => {
            Mode::Lower
        }
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
        ValueKind::Url | ValueKind::Domain | ValueKind::MailDomain | ValueKind::ParentDomain => {
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
        ValueKind::Iban
        | ValueKind::Account
        | ValueKind::Phone
        | ValueKind::Token
        | ValueKind::Phrase => {}
    }
    let f = Found {
        kind,
        start: a,
        end: b,
        mode,
    };
    String::from_utf8_lossy(&f.bytes(t).collect::<Vec<u8>>()).into_owned()
}

/// Every value the store reads in (canonical) text: the scanner's, and for an e-mail
/// address its domain too (a domain is a host whoever names it: a send to `x@evil.example`
/// after a result naming `evil.example` carries a value of that result).
pub(super) fn store_values(text: &[u8], out: &mut impl FnMut(Found)) {
    scan(text, &mut |f: Found| {
        out(f);
        email_domain(text, &f, &mut |d| out(d));
    });
}

/// The domain of an e-mail address found at `f`.
#[inline]
pub(super) fn email_domain(text: &[u8], f: &Found, out: &mut impl FnMut(Found)) {
    if f.kind != ValueKind::Email {
        return;
    }
    // An address the scanner found has one `@` (neither its local part nor its host holds
    // another): the first is the last.
    if let Some(at) = text[f.start..f.end].iter().position(|&b| b == b'@') {
        let a = f.start + at + 1;
        if a < f.end {
            out(Found {
                kind: ValueKind::MailDomain,
                start: a,
                end: f.end,
                mode: Mode::Lower,
            });
        }
    }
}

/// The parent domains of the host of a value found in an argument (an address's domain, a
/// URL's or bare domain's host), down to two labels, except a two-label parent that is a
/// public registry's own (`co.uk`, `com.au`: a second-level label of at most three letters
/// under a two-letter top-level one).
pub(super) fn parent_domains(text: &[u8], f: &Found, out: &mut impl FnMut(Found)) {
    let (mut a, end) = match f.kind {
        ValueKind::Email => match text[f.start..f.end].iter().rposition(|&b| b == b'@') {
            Some(at) => (f.start + at + 1, f.end),
            None => return,
        },
        ValueKind::Url | ValueKind::Domain => (f.start, f.end),
        _ => return,
    };
    let host_end = a + text[a..end]
        .iter()
        .position(|&b| matches!(b, b'/' | b':' | b'?' | b'#'))
        .unwrap_or(end - a);
    let host = &text[a..host_end];
    if host.first().is_some_and(u8::is_ascii_digit)
        && host.iter().all(|b| b.is_ascii_digit() || *b == b'.')
    {
        return; // an IPv4 address has no parents
    }
    while let Some(dot) = text[a..host_end].iter().position(|&b| b == b'.') {
        let p = a + dot + 1;
        let rest = &text[p..host_end];
        let dots = rest.iter().filter(|&&b| b == b'.').count();
        if dots == 0 {
            break;
        }
        if dots == 1 {
            let (sld, tld) = rest.split_at(rest.iter().position(|&b| b == b'.').unwrap_or(0));
            if tld.len() == 3 && sld.len() <= 3 {
                break;
            }
        }
        out(Found {
            kind: ValueKind::ParentDomain,
            start: p,
            end: host_end,
            mode: Mode::Lower,
        });
        a = p;
    }
}

/// The leaves of an argument as the store reads them: each string in its canonical form
/// (see `canon`), e-mail domains included ([`store_values`]). Allocates only for a string
/// that needs rewriting.
pub(super) fn canonical_leaves(v: &Value, out: &mut impl FnMut(&[u8], Found)) {
    let (mut buf, mut tmp) = (Vec::new(), Vec::new());
    canonical_leaves_with(v, &mut buf, &mut tmp, out);
}

pub(super) fn canonical_leaves_with(
    v: &Value,
    buf: &mut Vec<u8>,
    tmp: &mut Vec<u8>,
    out: &mut impl FnMut(&[u8], Found),
) {
    match v {
        Value::String(s) => {
            let bytes: &[u8] = if canon::canonical(s.as_bytes(), buf, tmp) {
                buf
            } else {
                s.as_bytes()
            };
            string_leaf(bytes, &mut |b: &[u8], f: Found| {
                out(b, f);
                email_domain(b, &f, &mut |d| out(b, d));
                parent_domains(b, &f, &mut |d| out(b, d));
            });
        }
        Value::Number(n) => number_leaf(n, out),
        Value::Array(a) => a
            .iter()
            .for_each(|x| canonical_leaves_with(x, buf, tmp, out)),
        Value::Object(m) => m
            .values()
            .for_each(|x| canonical_leaves_with(x, buf, tmp, out)),
        Value::Bool(_) | Value::Null => {}
    }
}
