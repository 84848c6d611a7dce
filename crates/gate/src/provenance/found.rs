//! A found value and its normalised form: how its bytes are normalised ([`Mode`]), kept on the
//! stack when short ([`NormBuf`]), compared eight bytes at a time.

use super::hash::{finalise, fold_mul, HashKeys, KeyHasher};
use super::ValueKind;
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
    #[inline(always)]
    pub(super) fn normalise_into(&self, text: &[u8], buf: &mut NormBuf) -> Option<usize> {
        let t = &text[self.start..self.end];
        if t.len() > INLINE {
            return None;
        }
        let need = match self.mode {
            Mode::Lower => {
                // Eight bytes at a time while the text goes on for eight more (the bytes
                // written past the value's end are not part of it: `buf.0[..len]` is).
                let mut i = 0;
                while i < t.len() {
                    let Some(w) = text.get(self.start + i..self.start + i + 8) else {
                        for (o, &b) in buf.0[i..t.len()].iter_mut().zip(&t[i..]) {
                            *o = b.to_ascii_lowercase();
                        }
                        break;
                    };
                    let w = lower8(word_at(w, 0));
                    buf.0[i..i + 8].copy_from_slice(&w.to_le_bytes());
                    i += 8;
                }
                return Some(t.len());
            }
            Mode::Digits => K_DIGIT,
            Mode::AlnumLower => K_ALNUM,
            Mode::Amount => K_AMOUNT,
        };
        // Eight bytes at a time: the bytes the mode keeps (an IBAN's or identifier's letters
        // and digits; a phone number's or amount's digits without the spaces, dashes or
        // commas between them) lower-cased and closed up in one word ([`compact8`]), written
        // whole at the next position (the bytes past what is kept are not part of the
        // value: `buf.0[..n]` is, and the next word overwrites them).
        let mut n = 0;
        let mut words = t.chunks_exact(8);
        for c in &mut words {
            let (w, kept) = compact8(word_at(c, 0), self.mode);
            // `n + 8` is at most the bytes read so far, at most `INLINE`.
            buf.0[n..n + 8].copy_from_slice(&w.to_le_bytes());
            n += kept;
        }
        let rest = words.remainder();
        if !rest.is_empty() && t.len() >= 8 {
            // The last bytes as one word: the text's last eight bytes shifted down, the bytes
            // above them filled with `0` (kept by every mode, and past the value's end once
            // closed up: `n + 8` is at most `INLINE + 8 - rest.len()`).
            let r = rest.len();
            let w = word_at(t, t.len() - 8) >> (8 * (8 - r)) | ZEROS << (8 * r);
            let (w, kept) = compact8(w, self.mode);
            buf.0[n..n + 8].copy_from_slice(&w.to_le_bytes());
            return Some(n + kept - (8 - r));
        }
        for &b in rest {
            // `n` is below the value's length (at most `INLINE`, a power of two) when a byte
            // is written: the mask changes nothing and spares the bounds check.
            buf.0[n & (INLINE - 1)] = LOWER[b as usize];
            n += usize::from(KEEP[b as usize] & need != 0);
        }
        Some(n)
    }

    /// [`normalise_into`](Self::normalise_into) and the key of the normalised bytes
    /// ([`NormBuf::key`]; `None` when they are empty): in [`Mode::Lower`] in one pass, each
    /// word keyed as it is written (the last one masked to the value's bytes).
    #[inline(always)]
    pub(super) fn normalise_keyed(
        &self,
        text: &[u8],
        buf: &mut NormBuf,
        keys: HashKeys,
    ) -> Option<(usize, Option<u64>)> {
        if self.mode != Mode::Lower {
            let len = self.normalise_into(text, buf)?;
            return Some((len, buf.key(len, keys)));
        }
        let t = &text[self.start..self.end];
        let len = t.len();
        if len > INLINE {
            return None;
        }
        if len == 0 {
            return Some((0, None));
        }
        let mut acc = keys.k0;
        let mut i = 0;
        while i + 8 <= len {
            let w = lower8(word_at(t, i));
            buf.0[i..i + 8].copy_from_slice(&w.to_le_bytes());
            acc = fold_mul(acc ^ w, keys.k1);
            i += 8;
        }
        let rest = len - i;
        let w = if rest == 0 {
            0
        } else {
            // The last bytes, as one word: read on into the text when it goes on for eight
            // bytes, else the value's last eight bytes shifted down (or byte by byte when
            // the value is shorter); the bytes past the value's end masked off.
            let raw = match text.get(self.start + i..self.start + i + 8) {
                Some(w) => word_at(w, 0) & (u64::MAX >> (64 - 8 * rest)),
                None if len >= 8 => word_at(t, len - 8) >> (8 * (8 - rest)),
                None => {
                    let mut a = [0u8; 8];
                    a[..rest].copy_from_slice(&t[i..]);
                    u64::from_le_bytes(a)
                }
            };
            lower8(raw)
        };
        buf.0[i..i + 8].copy_from_slice(&w.to_le_bytes());
        let acc = fold_mul(acc ^ w, keys.k1) ^ len as u64;
        Some((len, Some(finalise(acc))))
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

    /// The key of its first `len` bytes (what [`key_of_bytes`](super::hash::key_of_bytes)
    /// gives for them): eight bytes at a time, the last word read whole and masked.
    #[inline(always)]
    pub(super) fn key(&self, len: usize, keys: HashKeys) -> Option<u64> {
        if len == 0 {
            return None;
        }
        let b = &self.0;
        let mut acc = keys.k0;
        let mut i = 0;
        while i + 8 <= len {
            let w = word_at(b, i);
            acc = fold_mul(acc ^ w, keys.k1);
            i += 8;
        }
        let rest = len - i;
        let w = word_at(b, i);
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

/// ASCII lower case of each byte, as a table.
const LOWER: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).to_ascii_lowercase();
        i += 1;
    }
    t
};

const _: () = assert!(INLINE.is_power_of_two());

/// Bytes each [`Mode`] other than `Lower` keeps (bits): digits (`Digits`), letters and digits
/// (`AlnumLower`), digits and `.` (`Amount`).
pub(super) const K_DIGIT: u8 = 1;
pub(super) const K_ALNUM: u8 = 2;
pub(super) const K_AMOUNT: u8 = 4;
pub(super) const KEEP: [u8; 256] = {
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
pub(super) fn eq_mapped(
    a: &[u8],
    b: &[u8],
    word: impl Fn(u64) -> u64,
    byte: impl Fn(u8) -> u8,
) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        let mut diff = 0;
        for (&p, &q) in a.iter().zip(b) {
            diff |= byte(p) ^ q;
        }
        return diff == 0;
    }
    let mut i = 0;
    while i + 8 <= n {
        if word(word_at(a, i)) != word_at(b, i) {
            return false;
        }
        i += 8;
    }
    // The last bytes: the last eight, read again in part (`word` maps each byte alone).
    i == n || word(word_at(a, n - 8)) == word_at(b, n - 8)
}

/// The high bit of each byte of `w` that is an ASCII byte in `lo..=hi` (`lo >= 1`), eight
/// bytes at once.
#[inline]
pub(super) fn in_range8(w: u64, lo: u8, hi: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let low = w & LOW7;
    // Per byte (7 bits, no carry out): the high bit is set when the byte is >= lo, and when
    // it is > hi.
    let ge = low + ONES * u64::from(0x80 - lo);
    let gt = low + ONES * u64::from(0x7f - hi);
    ge & !gt & !w & HIGH
}

/// The high bit of each byte of `w` that `mode` (not [`Mode::Lower`]) keeps (as its lower
/// case, as [`KEEP`] says byte by byte).
#[inline(always)]
fn kept_mask8(w: u64, mode: Mode) -> u64 {
    let digits = in_range8(w, b'0', b'9');
    match mode {
        Mode::Lower | Mode::Digits => digits,
        Mode::AlnumLower => digits | in_range8(lower8(w), b'a', b'z'),
        Mode::Amount => digits | in_range8(w, b'.', b'.'),
    }
}

/// Does `mode` (not [`Mode::Lower`]) keep all eight bytes of `w`?
#[cfg(test)]
fn kept8(w: u64, mode: Mode) -> bool {
    kept_mask8(w, mode) == HIGH8
}

/// The high bit of each byte.
const HIGH8: u64 = 0x8080_8080_8080_8080;

/// The bytes of `w` that `mode` (not [`Mode::Lower`]) keeps, lower-cased and closed up in
/// order from the lowest byte (what [`Mode::map`] gives byte by byte), and how many: each
/// dropped byte, from the highest down, is taken out by moving the bytes above it down one
/// (the bytes above the kept ones are left over, not part of the result).
#[inline(always)]
fn compact8(w: u64, mode: Mode) -> (u64, usize) {
    let mut drop = !kept_mask8(w, mode) & HIGH8;
    let mut v = lower8(w);
    let mut kept = 8;
    while drop != 0 {
        // The highest dropped byte: the bytes below it stay, those above move down.
        let q = (63 - drop.leading_zeros()) & !7;
        let below = (1u64 << q) - 1;
        v = (v & below) | ((v >> 8) & !below);
        drop &= below;
        kept -= 1;
    }
    (v, kept)
}

/// Eight ASCII `0` bytes (a byte every mode keeps, as it is).
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// ASCII lower case of eight bytes at once (non-ASCII bytes unchanged).
#[inline]
pub(super) fn lower8(w: u64) -> u64 {
    w | (in_range8(w, b'A', b'Z') >> 2)
}

/// The eight bytes of `b` from `i`, little-endian.
#[inline(always)]
fn word_at(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`kept8`] is [`KEEP`] of each of the eight bytes.
    fn check_kept8(w: u64) {
        for (mode, need) in [
            (Mode::Digits, K_DIGIT),
            (Mode::AlnumLower, K_ALNUM),
            (Mode::Amount, K_AMOUNT),
        ] {
            let bytewise = w
                .to_le_bytes()
                .iter()
                .all(|&b| KEEP[b as usize] & need != 0);
            assert_eq!(kept8(w, mode), bytewise, "{w:#018x} {mode:?}");
        }
    }

    /// Every byte value at every position of a word otherwise kept by every mode.
    #[test]
    fn kept8_is_keep_of_each_byte_at_every_position() {
        for pos in 0..8 {
            for b in 0..=255u8 {
                let mut bytes = *b"01234567";
                bytes[pos] = b;
                check_kept8(u64::from_le_bytes(bytes));
            }
        }
    }

    /// Normalised on the stack as byte by byte ([`Mode::map`]), in every mode other than
    /// `Lower`, for values of 1–40 bytes with any byte value at any one position (the last
    /// bytes taken as one word when the mode keeps all of them, or byte by byte).
    #[test]
    fn normalise_into_is_the_mode_of_each_byte() {
        let base = b"AB12cd34.EF56gh78.IJ90kl12.MN34op56.QR78";
        for mode in [Mode::Digits, Mode::AlnumLower, Mode::Amount] {
            for len in 1..=base.len() {
                for pos in 0..len {
                    for b in 0..=255u8 {
                        let mut text = base[..len].to_vec();
                        text[pos] = b;
                        let f = Found {
                            kind: super::super::ValueKind::Account,
                            start: 0,
                            end: len,
                            mode,
                        };
                        let want: Vec<u8> = f.bytes(&text).collect();
                        let mut buf = NormBuf([0xa5; INLINE + 8]);
                        let n = f.normalise_into(&text, &mut buf).expect("short");
                        assert_eq!(&buf.0[..n], &want[..], "{mode:?} {len} {pos} {b:#04x}");
                    }
                }
            }
        }
    }

    /// Normalised and keyed in one pass as in two ([`Found::normalise_into`], then
    /// [`NormBuf::key`]), in every mode, at every length up to 40 bytes, with the text ending
    /// at the value or going on after it, and with stale bytes in the buffer.
    #[test]
    fn normalise_keyed_is_normalise_then_key() {
        use super::super::hash::key_of_bytes;
        let keys = HashKeys {
            k0: 0x0123_4567_89ab_cdef,
            k1: 0x9e37_79b9_7f4a_7c15,
        };
        let base = b"Ab1.-C d2\xE9Fg3,hI4@jK5/lM6:nO7 pQ8.rS9";
        for mode in [Mode::Lower, Mode::Digits, Mode::AlnumLower, Mode::Amount] {
            for start in 0..3 {
                for len in 0..=base.len() - start {
                    for after in [0, 1, 7, 8] {
                        let end = start + len;
                        let text = &base[..(end + after).min(base.len())];
                        let f = Found {
                            kind: super::super::ValueKind::Token,
                            start,
                            end,
                            mode,
                        };
                        let want: Vec<u8> = f.bytes(text).collect();
                        let mut buf = NormBuf([0xa5; INLINE + 8]);
                        let (n, key) = f.normalise_keyed(text, &mut buf, keys).expect("short");
                        assert_eq!(&buf.0[..n], &want[..], "{mode:?} {start} {len} {after}");
                        assert_eq!(
                            key,
                            key_of_bytes(&want, keys),
                            "{mode:?} {start} {len} {after}"
                        );
                    }
                }
            }
        }
    }

    /// Equal mapped exactly when the mapped bytes are equal, at every length (the last
    /// bytes read again as a whole word) and with a difference at every position.
    #[test]
    fn eq_mapped_is_bytewise_equality() {
        let a: Vec<u8> = (0..40u8)
            .map(|i| b"AbC.9zQ-"[usize::from(i % 8)] ^ (i & 0x20))
            .collect();
        for n in 0..=a.len() {
            let low = a[..n].to_ascii_lowercase();
            assert!(eq_mapped(&a[..n], &low, lower8, |b| b.to_ascii_lowercase()));
            if n > 0 {
                // One byte short: unequal lengths.
                let short = &low[..n - 1];
                assert!(!eq_mapped(&a[..n], short, lower8, |b| b.to_ascii_lowercase()));
            }
            for pos in 0..n {
                for x in [1u8, 0x20, 0x80] {
                    let mut other = low.clone();
                    other[pos] ^= x;
                    let equal = a[..n].to_ascii_lowercase() == other;
                    assert_eq!(
                        eq_mapped(&a[..n], &other, lower8, |b| b.to_ascii_lowercase()),
                        equal,
                        "{n} {pos} {x:#x}"
                    );
                }
            }
        }
    }

    proptest! {
        /// Any word, and words of kept bytes with one byte changed.
        #[test]
        fn kept8_is_keep_of_each_byte(w in any::<u64>(), s in "[0-9a-zA-Z.]{8}", pos in 0..8usize, b in any::<u8>()) {
            check_kept8(w);
            let mut bytes: [u8; 8] = s.as_bytes().try_into().expect("eight bytes");
            check_kept8(u64::from_le_bytes(bytes));
            bytes[pos] = b;
            check_kept8(u64::from_le_bytes(bytes));
        }
    }
}
