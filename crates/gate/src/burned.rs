//! The ids of closed sessions, refused forever: a fixed-size Bloom filter.

/// The ids of closed sessions, in a fixed-size Bloom filter: `m` bits, `k` = 7 bit positions
/// per id (Kirsch–Mitzenmacher double hashing: `h1 + i·h2 mod m`, `h1` and `h2` the first two
/// little-endian 64-bit words of SHA-256(`augur-burned-id\0` ‖ id), `h2` made odd; a specified
/// hash, so that a filter saved in a state journal means the same to every build). No false
/// negatives: a burned id is refused forever, however many ids are burned after it. A fresh
/// id is refused (fail closed) with probability about `(1 - e^(-k·n/m))^k` after `n` burned
/// ids: with the default 2^23 bits (1 MiB), 1e-6 at n = 200 000 and 1e-3 at n = 600 000.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BurnedIds {
    bits: Vec<u64>,
    m: u64,
    count: u64,
}

impl BurnedIds {
    /// Hash functions per id.
    pub const K: u32 = 7;
    /// The default size, in bits (1 MiB).
    pub const DEFAULT_BITS: u64 = 1 << 23;
    /// The largest size, in bits (2^33: 1 GiB).
    pub const MAX_BITS: u64 = 1 << 33;

    /// A filter of `bits` bits (clamped to 64..=[`BurnedIds::MAX_BITS`], rounded up to a multiple of
    /// 64).
    pub fn new(bits: u64) -> BurnedIds {
        let words = bits.clamp(64, Self::MAX_BITS).div_ceil(64);
        BurnedIds {
            bits: vec![0; words as usize],
            m: words * 64,
            count: 0,
        }
    }

    fn positions(&self, id: &str) -> [u64; Self::K as usize] {
        use sha2::{Digest, Sha256};
        let digest = Sha256::new()
            .chain_update(b"augur-burned-id\0")
            .chain_update(id.as_bytes())
            .finalize();
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&digest[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        let (h1, h2) = (word(0), word(1) | 1);
        let mut a = [0; Self::K as usize];
        for (i, slot) in a.iter_mut().enumerate() {
            *slot = h1.wrapping_add((i as u64).wrapping_mul(h2)) % self.m;
        }
        a
    }

    /// Burn `id`.
    pub fn insert(&mut self, id: &str) {
        for p in self.positions(id) {
            self.bits[(p / 64) as usize] |= 1 << (p % 64);
        }
        self.count += 1;
    }

    /// Whether `id` may have been burned (always true for a burned id).
    pub fn contains(&self, id: &str) -> bool {
        self.positions(id)
            .iter()
            .all(|&p| self.bits[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }

    /// The estimated rate at which a fresh id is refused now, `(1 - e^(-k·n/m))^k`.
    pub fn false_refusal_rate(&self) -> f64 {
        let k = f64::from(Self::K);
        (1.0 - (-k * self.count as f64 / self.m as f64).exp()).powf(k)
    }

    /// The size in bits.
    pub fn bits(&self) -> u64 {
        self.m
    }

    /// The number of ids burned (counting repeats).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Add every id burned into `other` (a filter of the same size; else an error).
    pub fn union(&mut self, other: &BurnedIds) -> std::result::Result<(), String> {
        if other.m != self.m {
            return Err(format!(
                "a burned-id filter of {} bits cannot join one of {} bits",
                other.m, self.m
            ));
        }
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
        self.count += other.count;
        Ok(())
    }

    /// The non-zero 64-bit words, `(index, word)` (the filter's saved form).
    pub fn words(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.bits
            .iter()
            .enumerate()
            .filter(|(_, &w)| w != 0)
            .map(|(i, &w)| (i as u64, w))
    }

    /// A filter of `bits` bits with the given non-zero words and count (the inverse of
    /// [`BurnedIds::words`]). Errors when `bits` is not a multiple of 64 in 64..=2^33 or a
    /// word index is out of range.
    pub fn from_words(
        bits: u64,
        count: u64,
        words: impl IntoIterator<Item = (u64, u64)>,
    ) -> std::result::Result<BurnedIds, String> {
        if bits < 64 || !bits.is_multiple_of(64) || bits > Self::MAX_BITS {
            return Err(format!(
                "a burned-id filter has a multiple of 64 bits in 64..=2^33, not {bits}"
            ));
        }
        let mut f = BurnedIds::new(bits);
        for (i, w) in words {
            let slot = f
                .bits
                .get_mut(usize::try_from(i).unwrap_or(usize::MAX))
                .ok_or_else(|| format!("word {i} is beyond the filter's {bits} bits"))?;
            *slot |= w;
        }
        f.count = count;
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_filter_reads_back_the_same() {
        let mut f = BurnedIds::new(4096);
        for i in 0..300 {
            f.insert(&format!("id-{i}"));
        }
        let e = crate::journal::Entry::filter(&f);
        let text = serde_json::to_string(&e).unwrap();
        let back: crate::journal::Entry = serde_json::from_str(&text).unwrap();
        let g = back.to_filter().unwrap().unwrap();
        assert_eq!(f, g);
        assert!((0..300).all(|i| g.contains(&format!("id-{i}"))));
        // The positions are SHA-256's (a specified hash), pinned to values computed with Python's
        // hashlib (sha256(b"augur-burned-id\0run-1"), h1, h2 little-endian, h2 | 1, (h1 + i·h2)
        // mod 2^64 mod 2^23), so that a saved filter means the same to every build.
        let f = BurnedIds::new(1 << 23);
        assert_eq!(
            f.positions("run-1"),
            [7762456, 8175705, 200346, 613595, 1026844, 1440093, 1853342]
        );
    }
}
