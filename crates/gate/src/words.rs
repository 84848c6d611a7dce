//! Word-boundary, case-insensitive matching of tool names and argument text, without
//! allocation.
//!
//! A tool name is split into words at every character that is not a letter or digit and at
//! every lower-to-upper case change: `send_email`, `sendEmail`, `send-email` and `Send Email`
//! are all the words `send email`; an acronym ends before a capitalised word (`HTTPPost` is
//! `HTTP Post`, `SMTPSend` is `SMTP Send`). Text is first [`fold`]ed (look-alike letters,
//! full-width forms and invisible characters). A name pattern is a sequence of words that must appear
//! contiguously (`get file` matches `get_file_by_id` but not `file_get`); a word ending in `*`
//! matches any word it begins (`pay*` matches `payment`); a leading `^` anchors the pattern at
//! the first word, a trailing `$` at the last. So `drop` does not match `dropbox_upload`, and
//! `merge pull request` does not match `merge_sort`.

use std::borrow::Cow;
use unicode_normalization::UnicodeNormalization;

/// The text as the classifier and the policy lists see it: ASCII text unchanged (no
/// allocation); other text in Unicode compatibility form (NFKC: full-width `ｓｅｎｄ` is `send`,
/// `＠` is `@`), without invisible characters (zero-width spaces and joiners, soft hyphens,
/// bidi controls, variation selectors, tags), and with Cyrillic and Greek letters that look
/// like Latin ones read as those (`ѕеnd` is `send`). So a look-alike name or address cannot
/// slip past a rule written in ASCII.
#[inline]
pub fn fold(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    fold_non_ascii(text)
}

/// [`fold`] of text with a non-ASCII character.
#[inline(never)]
fn fold_non_ascii(text: &str) -> Cow<'_, str> {
    Cow::Owned(
        // Invisible characters go first, so that they cannot keep a letter and its accent
        // apart from the composition, then again after it (compatibility forms of them).
        text.chars()
            .filter(|&c| !invisible(c))
            .nfkc()
            .filter(|&c| !invisible(c))
            .map(latin_look_alike)
            .collect(),
    )
}

/// Characters that show nothing (format and default-ignorable code points).
pub(crate) fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// A Cyrillic or Greek letter drawn like a Latin one, as that Latin letter.
pub(crate) fn latin_look_alike(c: char) -> char {
    match c {
        'а' => 'a',
        'А' | 'Α' => 'A',
        'в' | 'В' | 'Β' => 'B',
        'с' | 'ϲ' => 'c',
        'С' | 'Ϲ' => 'C',
        'ԁ' => 'd',
        'е' => 'e',
        'Е' | 'Ε' => 'E',
        'ԍ' => 'G',
        'һ' => 'h',
        'Н' | 'Η' => 'H',
        'і' | 'ι' => 'i',
        'І' | 'Ι' | 'Ӏ' => 'I',
        'ј' => 'j',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'Ν' => 'N',
        'о' | 'ο' => 'o',
        'О' | 'Ο' => 'O',
        'р' | 'ρ' => 'p',
        'Р' | 'Ρ' => 'P',
        'ԛ' => 'q',
        'ѕ' => 's',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'υ' => 'u',
        'ѵ' | 'ν' => 'v',
        'ԝ' => 'w',
        'Ԝ' => 'W',
        'х' | 'χ' => 'x',
        'Х' | 'Χ' => 'X',
        'у' => 'y',
        'У' | 'Υ' => 'Y',
        'Ζ' => 'Z',
        'ı' => 'i',
        _ => c,
    }
}

/// Most words of a name that are looked at (the rest are ignored).
pub const MAX_WORDS: usize = 24;

/// The words of `text` as byte ranges, into `out`; returns how many.
pub fn split_words(text: &str, out: &mut [(u16, u16); MAX_WORDS]) -> usize {
    let b = text.as_bytes();
    let len = b.len().min(u16::MAX as usize);
    let b = &b[..len];
    let mut n = 0;
    let mut i = 0;
    while i < len && n < MAX_WORDS {
        while i < len && BYTE_CLASS[b[i] as usize] == NOT_WORD {
            i += 1;
        }
        if i >= len {
            break;
        }
        let start = i;
        let mut prev = BYTE_CLASS[b[i] as usize];
        i += 1;
        while i < len {
            let c = BYTE_CLASS[b[i] as usize];
            // A word ends at a non-word byte, at a lower-to-upper case change, and before the
            // capital that starts a capitalised word after an acronym (`HTTPPost`).
            if c == NOT_WORD
                || (c == UPPER
                    && (prev == LOWER
                        || (prev == UPPER
                            && i + 1 < len
                            && BYTE_CLASS[b[i + 1] as usize] == LOWER)))
            {
                break;
            }
            prev = c;
            i += 1;
        }
        out[n] = (start as u16, i as u16);
        n += 1;
    }
    n
}

/// The classes of bytes [`split_words`] tells apart.
const NOT_WORD: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
/// A digit or a non-ASCII byte.
const OTHER_WORD: u8 = 3;

/// Each byte's class (see [`is_word_byte`]).
static BYTE_CLASS: [u8; 256] = {
    let mut t = [NOT_WORD; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = if b.is_ascii_lowercase() {
            LOWER
        } else if b.is_ascii_uppercase() {
            UPPER
        } else if is_word_byte(b) {
            OTHER_WORD
        } else {
            NOT_WORD
        };
        c += 1;
    }
    t
};

/// Letters, digits and any non-ASCII byte (so non-English names stay whole words).
const fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c >= 0x80
}

/// One word of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PatternWord {
    /// Lower case.
    word: String,
    /// `word*`: matches any word starting with it.
    prefix: bool,
}

impl PatternWord {
    /// Whether it matches the word `w` (ASCII case aside).
    fn matches(&self, w: &[u8]) -> bool {
        let pw = self.word.as_bytes();
        if self.prefix {
            w.len() >= pw.len() && w[..pw.len()].eq_ignore_ascii_case(pw)
        } else {
            w.eq_ignore_ascii_case(pw)
        }
    }
}

/// A compiled name pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamePattern {
    text: String,
    words: Vec<PatternWord>,
    anchor_start: bool,
    anchor_end: bool,
}

impl NamePattern {
    /// Compile a pattern; `Err` says why it is not one.
    pub fn new(text: &str) -> Result<NamePattern, String> {
        let mut t = text.trim();
        let anchor_start = t.starts_with('^');
        if anchor_start {
            t = &t[1..];
        }
        let anchor_end = t.ends_with('$');
        if anchor_end {
            t = &t[..t.len() - 1];
        }
        let mut words = Vec::new();
        for piece in t.split(|c: char| !(c.is_alphanumeric() || c == '*')) {
            if piece.is_empty() {
                continue;
            }
            let (body, prefix) = match piece.strip_suffix('*') {
                Some(b) => (b, true),
                None => (piece, false),
            };
            if body.is_empty() || body.contains('*') {
                return Err(format!(
                    "`{piece}`: `*` may only end a word that has letters before it"
                ));
            }
            let mut buf = [(0u16, 0u16); MAX_WORDS];
            let n = split_words(body, &mut buf);
            for (k, &(s, e)) in buf[..n].iter().enumerate() {
                words.push(PatternWord {
                    word: body[s as usize..e as usize].to_ascii_lowercase(),
                    prefix: prefix && k + 1 == n,
                });
            }
        }
        if words.is_empty() {
            return Err("a name pattern needs at least one word".into());
        }
        if words.len() > MAX_WORDS {
            return Err(format!("a name pattern has at most {MAX_WORDS} words"));
        }
        Ok(NamePattern {
            text: text.trim().to_string(),
            words,
            anchor_start,
            anchor_end,
        })
    }

    /// The pattern anchored at both ends: it matches a name whose words are exactly its words
    /// (what `always_allow` needs: `get current day` is not `get_current_day_and_send_email`).
    pub fn whole(mut self) -> NamePattern {
        self.anchor_start = true;
        self.anchor_end = true;
        self
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The first word (lower case) when it must match exactly (not a `word*` prefix): the key
    /// under which the classifier indexes the pattern.
    pub(crate) fn exact_first_word(&self) -> Option<&str> {
        self.words
            .first()
            .filter(|w| !w.prefix)
            .map(|w| w.word.as_str())
    }

    /// The word (lower case) of a pattern `^word`: one whole word anchored at the name's
    /// start, which matches exactly the names whose first word is it.
    pub(crate) fn first_word_only(&self) -> Option<&str> {
        match self.words.as_slice() {
            [w] if self.anchor_start && !self.anchor_end && !w.prefix => Some(&w.word),
            _ => None,
        }
    }

    /// The first byte of the first word (lower case).
    pub(crate) fn first_byte(&self) -> u8 {
        self.words
            .first()
            .and_then(|w| w.word.bytes().next())
            .unwrap_or(0)
    }

    /// Whether the pattern matches with its first word at word `start` of `name`.
    pub(crate) fn matches_at(&self, name: &str, words: &[(u16, u16)], start: usize) -> bool {
        let m = self.words.len();
        if start + m > words.len()
            || (self.anchor_start && start != 0)
            || (self.anchor_end && start + m != words.len())
        {
            return false;
        }
        self.words_match(name, &words[start..start + m])
    }

    /// [`NamePattern::matches_at`] for a pattern whose first word (exact, not a `word*`
    /// prefix) is known to equal word `start` of `name` (ASCII case aside): the name index
    /// found it under that word. Only the other words are compared.
    pub(crate) fn matches_at_after_first(
        &self,
        name: &str,
        words: &[(u16, u16)],
        start: usize,
    ) -> bool {
        let m = self.words.len();
        if start + m > words.len()
            || (self.anchor_start && start != 0)
            || (self.anchor_end && start + m != words.len())
        {
            return false;
        }
        self.words[1..]
            .iter()
            .zip(&words[start + 1..start + m])
            .all(|(p, &(s, e))| p.matches(&name.as_bytes()[s as usize..e as usize]))
    }

    /// Whether the pattern's words match `words` (as many as the pattern has), one by one.
    fn words_match(&self, name: &str, words: &[(u16, u16)]) -> bool {
        self.words
            .iter()
            .zip(words)
            .all(|(p, &(s, e))| p.matches(&name.as_bytes()[s as usize..e as usize]))
    }

    /// Whether the pattern matches a name already split by [`split_words`].
    pub fn matches_words(&self, name: &str, words: &[(u16, u16)]) -> bool {
        let m = self.words.len();
        if m > words.len() {
            return false;
        }
        let last_start = words.len() - m;
        let starts = if self.anchor_start {
            0..=0
        } else {
            0..=last_start
        };
        for start in starts {
            if self.anchor_end && start != last_start {
                continue;
            }
            if self.words_match(name, &words[start..start + m]) {
                return true;
            }
        }
        false
    }

    /// Whether the pattern matches `name` (after [`fold`]).
    pub fn matches(&self, name: &str) -> bool {
        let name = fold(name);
        let name = name.as_ref();
        let mut buf = [(0u16, 0u16); MAX_WORDS];
        let n = split_words(name, &mut buf);
        self.matches_words(name, &buf[..n])
    }
}

/// Whether the match `[start, end)` of a needle in `hay` sits on word boundaries: an edge of
/// the needle that is a letter or digit must meet a non-word character, the text's end, or a
/// lower-to-upper case change.
pub fn on_boundaries(hay: &[u8], start: usize, end: usize) -> bool {
    if start >= end || end > hay.len() {
        return false;
    }
    let first = hay[start];
    let last = hay[end - 1];
    let left_ok = !is_word_byte(first)
        || start == 0
        || !is_word_byte(hay[start - 1])
        || (hay[start - 1].is_ascii_lowercase() && first.is_ascii_uppercase());
    let right_ok = !is_word_byte(last)
        || end == hay.len()
        || !is_word_byte(hay[end])
        || (last.is_ascii_lowercase() && hay[end].is_ascii_uppercase());
    left_ok && right_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        let mut buf = [(0u16, 0u16); MAX_WORDS];
        let n = split_words(s, &mut buf);
        buf[..n]
            .iter()
            .map(|&(a, b)| &s[a as usize..b as usize])
            .collect()
    }

    /// The plain definition of [`split_words`], byte by byte (what the table-driven loop must
    /// agree with).
    fn split_words_reference(text: &str, out: &mut [(u16, u16); MAX_WORDS]) -> usize {
        let b = text.as_bytes();
        let mut n = 0;
        let mut i = 0;
        let len = b.len().min(u16::MAX as usize);
        while i < len && n < MAX_WORDS {
            while i < len && !is_word_byte(b[i]) {
                i += 1;
            }
            if i >= len {
                break;
            }
            let start = i;
            i += 1;
            while i < len
                && is_word_byte(b[i])
                && !(b[i - 1].is_ascii_lowercase() && b[i].is_ascii_uppercase())
                && !(b[i - 1].is_ascii_uppercase()
                    && b[i].is_ascii_uppercase()
                    && i + 1 < len
                    && b[i + 1].is_ascii_lowercase())
            {
                i += 1;
            }
            out[n] = (start as u16, i as u16);
            n += 1;
        }
        n
    }

    proptest::proptest! {
        #[test]
        fn split_words_agrees_with_the_reference(
            text in "([a-zA-Z0-9_ .-]|é|ß|\\u{200B}){0,40}",
            many in 0usize..3,
        ) {
            // Long names too: past MAX_WORDS words the rest is ignored.
            let text = text.repeat(1 + many * 10);
            let (mut fast, mut slow) = ([(0u16, 0u16); MAX_WORDS], [(0u16, 0u16); MAX_WORDS]);
            let n = split_words(&text, &mut fast);
            let m = split_words_reference(&text, &mut slow);
            proptest::prop_assert_eq!(&fast[..n], &slow[..m], "{:?}", text);
        }
    }

    #[test]
    fn names_split_at_separators_and_case_changes() {
        assert_eq!(words("send_email"), ["send", "email"]);
        assert_eq!(words("sendEmail"), ["send", "Email"]);
        assert_eq!(words("HTTPRequest"), ["HTTP", "Request"]);
        assert_eq!(words("SMTPSend"), ["SMTP", "Send"]);
        assert_eq!(words("HTTPPost"), ["HTTP", "Post"]);
        assert_eq!(words("HTTP"), ["HTTP"]);
        assert_eq!(words("getURL"), ["get", "URL"]);
        assert_eq!(words("  get-file.by id "), ["get", "file", "by", "id"]);
        assert_eq!(words("__"), Vec::<&str>::new());
    }

    #[test]
    fn word_boundaries() {
        let p = |s: &str| NamePattern::new(s).unwrap();
        assert!(!p("deploy").matches("merge_sort"));
        assert!(!p("merge pull request").matches("merge_sort"));
        assert!(p("merge pull request").matches("github_merge_pull_request"));
        assert!(!p("drop").matches("dropbox_upload"));
        assert!(p("drop").matches("drop_table"));
        assert!(p("DROP").matches("dbDropTable"));
        assert!(p("get file").matches("get_file_by_id"));
        assert!(!p("get file").matches("file_get"));
        assert!(p("pay*").matches("make_payment"));
        assert!(!p("pay*").matches("repay"));
        assert!(p("^get").matches("get_hotels"));
        assert!(!p("^get").matches("budget_get"));
        assert!(p("email$").matches("send_email"));
        assert!(!p("email$").matches("email_send"));
        assert!(NamePattern::new("  ").is_err());
        assert!(NamePattern::new("*").is_err());
        assert!(NamePattern::new("a*b").is_err());
    }

    #[test]
    fn look_alikes_and_invisible_characters_fold_to_ascii() {
        assert_eq!(fold("send_email"), "send_email");
        assert!(matches!(fold("send_email"), Cow::Borrowed(_)));
        assert_eq!(fold("ｓｅｎｄ＿ｅｍａｉｌ"), "send_email");
        assert_eq!(fold("se\u{200B}nd_em\u{2060}ail\u{FEFF}"), "send_email");
        assert_eq!(fold("ѕеnd_еmаіl"), "send_email");
        assert_eq!(fold("evil＠evil．com"), "evil@evil.com");
        assert_eq!(fold("bücher.de"), "bücher.de");
        let p = NamePattern::new("wipe").unwrap();
        assert!(p.matches("wi\u{200B}pe_all"));
        assert!(p.matches("ｗｉｐｅ"));
    }

    #[test]
    fn needle_boundaries() {
        let b = |hay: &str, needle: &str| {
            let s = hay.to_ascii_lowercase().find(needle).unwrap();
            on_boundaries(hay.as_bytes(), s, s + needle.len())
        };
        assert!(b("/app/.env", ".env"));
        assert!(b("/app/.env.local", ".env"));
        assert!(!b("/app/.environment", ".env"));
        assert!(b("~/.aws/credentials", "credentials"));
        assert!(!b("mycredentials", "credentials"));
        assert!(b("awsCredentials", "credentials"));
        assert!(b("id_rsa.pub", "id_rsa"));
    }
}
