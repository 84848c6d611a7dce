//! The cross-token state of the scanner: spaced IBANs, spaced phone numbers, amounts beside
//! a currency code.

use super::found::{Found, Mode};
use super::parts::{amount_range, eq_ignore_case_in, CURRENCY_CODES};
use super::scan::{C_AT, C_DIGIT, C_SLASH};
use super::ValueKind;
/// Byte kinds of the cross-token groups: a digit; a letter or digit (a spaced IBAN's group); a
/// digit, `+`, `-` or `.` (a phone number's group); a digit, `,` or `.` (a number).
pub(super) const G_DIGIT: u8 = 1;
pub(super) const G_ALNUM: u8 = 2;
pub(super) const G_PHONE: u8 = 4;
pub(super) const G_NUMBER: u8 = 8;
pub(super) const G_ALL: u8 = G_DIGIT | G_ALNUM | G_PHONE | G_NUMBER;
pub(super) const GROUP: [u8; 256] = {
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
pub(super) struct Groups {
    /// Previous token: (start, end) and whether it is a plain number / a currency code.
    pub(super) prev: Option<(usize, usize, bool, bool)>,
    /// A spaced IBAN being read: start, end, alphanumeric length.
    pub(super) iban: Option<(usize, usize, usize)>,
    /// Digit groups being read: start, end, digits, groups.
    pub(super) phone: Option<(usize, usize, usize, usize)>,
}

impl Groups {
    /// The token `text[s..e]`, `text[s..end]` without its trailing punctuation.
    #[inline]
    pub(super) fn token(
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
        self.live_token(text, (s, end, e), has_digit, out);
    }

    /// [`token`](Self::token) for a token that is not inert (apart, so that the inert
    /// tokens, most of them, take the short path inline).
    #[inline(always)]
    fn live_token(
        &mut self,
        text: &[u8],
        (s, end, e): (usize, usize, usize),
        has_digit: bool,
        out: &mut impl FnMut(Found),
    ) {
        let t = &text[s..end.max(s)];
        let gap_single = |from: usize| s == from + 1 && text[from] == b' ';
        // One pass: which of the group kinds every byte of `t` has, and its digits. A token
        // longer than four bytes is no IBAN group (the only use of `G_ALNUM`): without that
        // kind, a token with a letter is in none and its first letter ends the pass.
        let mut all = if t.len() > 4 { G_ALL & !G_ALNUM } else { G_ALL };
        let mut digits = 0usize;
        for &b in t {
            let k = GROUP[b as usize];
            all &= k;
            if all == 0 {
                // In no group kind: the digits are not looked at.
                break;
            }
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

    pub(super) fn flush_iban(&mut self, out: &mut impl FnMut(Found)) {
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

    pub(super) fn flush_phone(&mut self, out: &mut impl FnMut(Found)) {
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

    pub(super) fn finish(&mut self, out: &mut impl FnMut(Found)) {
        self.flush_iban(out);
        self.flush_phone(out);
    }
}
