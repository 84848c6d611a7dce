//! Byte masks sixteen bytes at a time (the `wide` crate's portable vectors: SSE2 on x86-64,
//! NEON on AArch64, a scalar fallback elsewhere; no `unsafe` here): which bytes of a text
//! are of a class, as one bit per byte (bit `i` for byte `i`), so that the scanner and the
//! canonical-form check jump from one interesting byte to the next with `trailing_zeros`
//! instead of reading the others one by one.

use wide::u8x16;

/// The sixteen bytes of `text` from `k` (`k + 16 <= text.len()`).
#[inline(always)]
pub(super) fn load(text: &[u8], k: usize) -> u8x16 {
    let a: [u8; 16] = text[k..k + 16].try_into().expect("sixteen bytes");
    u8x16::new(a)
}

/// Lanes equal to `b` (all ones) or not (zero).
#[inline(always)]
pub(super) fn eq(v: u8x16, b: u8) -> u8x16 {
    v.cmp_eq(u8x16::splat(b))
}

/// Lanes in `lo..=hi` (all ones) or not (zero).
#[inline(always)]
pub(super) fn in_range(v: u8x16, lo: u8, hi: u8) -> u8x16 {
    let d = v - u8x16::splat(lo);
    d.min(u8x16::splat(hi - lo)).cmp_eq(d)
}

/// One bit per lane: its high bit (bit `i` for lane `i`).
#[inline(always)]
pub(super) fn bits(v: u8x16) -> u64 {
    u64::from(v.move_mask() as u32 & 0xffff)
}

/// The bytes at which the scanner's skip of plain text stops, as bit `i` for `text[k + i]`
/// (`k + 16 <= text.len()`): the bytes that are not plain (`stop_byte`, its test) and the
/// quotes.
#[inline(always)]
pub(super) fn stop_mask(text: &[u8], k: usize) -> u64 {
    let v = load(text, k);
    // `. /` digits `:`, `@` and capitals, `" # $` (a quote and two value bytes side by
    // side), `+ \ ~`, the other two quotes; non-ASCII by its high bit.
    let value = in_range(v, b'.', b':')
        | in_range(v, b'@', b'Z')
        | in_range(v, b'"', b'$')
        | eq(v, b'+')
        | eq(v, b'\\')
        | eq(v, b'~');
    let quote = eq(v, b'\'') | eq(v, b'`');
    bits(value | quote) | bits(v)
}

/// [`stop_mask`] of the fewer than sixteen bytes `t` (a text's last bytes): read padded with
/// spaces, which the skip does not stop at.
#[inline]
pub(super) fn stop_mask_tail(t: &[u8]) -> u64 {
    let mut a = [b' '; 16];
    a[..t.len()].copy_from_slice(t);
    stop_mask(&a, 0)
}

/// The byte test [`stop_mask`] stands for: a digit, a capital, one of `. @ : / \ ~ $ + #`, a
/// non-ASCII byte, or a quote.
#[cfg(test)]
pub(super) fn stop_byte(b: u8) -> bool {
    b >= 0x80
        || b.is_ascii_digit()
        || b.is_ascii_uppercase()
        || matches!(
            b,
            b'.' | b'@' | b':' | b'/' | b'\\' | b'~' | b'$' | b'+' | b'#' | b'"' | b'\'' | b'`'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value in every lane: the masks are the byte tests they stand for.
    #[test]
    fn masks_are_the_byte_tests() {
        for start in (0..=255u8).step_by(16) {
            let text: Vec<u8> = (0..16).map(|i| start.wrapping_add(i)).collect();
            let v = load(&text, 0);
            let of = |p: &dyn Fn(u8) -> bool| {
                text.iter()
                    .enumerate()
                    .fold(0u64, |m, (i, &b)| m | (u64::from(p(b)) << i))
            };
            assert_eq!(bits(eq(v, b'%')), of(&|b| b == b'%'));
            assert_eq!(
                bits(in_range(v, b'a', b'z')),
                of(&|b| b.is_ascii_lowercase())
            );
            assert_eq!(bits(in_range(v, 0, b' ')), of(&|b| b <= b' '));
            assert_eq!(
                bits(in_range(v, b'.', b':')),
                of(&|b| (b'.'..=b':').contains(&b))
            );
            assert_eq!(bits(v), of(&|b| b >= 0x80));
            assert_eq!(stop_mask(&text, 0), of(&stop_byte));
            for len in 0..16 {
                let tail = of(&stop_byte) & ((1u64 << len) - 1);
                assert_eq!(stop_mask_tail(&text[..len]), tail, "{start} {len}");
            }
        }
    }
}
