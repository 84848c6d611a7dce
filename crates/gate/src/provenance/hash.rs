//! The keyed hash of a normalised value: a secret per store, eight bytes at a time.

/// The secret of a store's [`KeyHasher`]: two random words drawn when the store is made, so
/// that which values share a key cannot be worked out offline (hash flooding). A shared key
/// never makes two values one: the store compares the normalised text on every hit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct HashKeys {
    /// The initial state.
    pub(super) k0: u64,
    /// The multiplier (odd for a random store; 0 only in tests, where every value of one
    /// length gets one key).
    pub(super) k1: u64,
}

impl std::fmt::Debug for HashKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HashKeys(..)")
    }
}

impl HashKeys {
    /// Fresh random keys (from the thread's random generator, seeded by the OS).
    pub(super) fn random() -> HashKeys {
        HashKeys {
            k0: rand::random(),
            k1: rand::random::<u64>() | 1,
        }
    }
}

/// A streaming keyed 64-bit hash of a byte string: little-endian words of eight bytes (the
/// last one zero-padded), each mixed into the state by a folded multiply (the two halves of
/// the 128-bit product xored) by the secret multiplier, then the length and splitmix64's
/// finaliser. A function of the bytes and the keys only: feeding them one by one or eight at
/// a time (at offsets that are multiples of 8) gives the same hash.
pub(super) struct KeyHasher {
    k1: u64,
    acc: u64,
    word: u64,
    fill: u32,
    len: u64,
}

/// The key of normalised bytes, fed one at a time (tests check `Found::key` against it; a
/// restored snapshot keys its stored texts with it).
pub(super) fn key_of_bytes(bytes: &[u8], keys: HashKeys) -> Option<u64> {
    let mut h = KeyHasher::new(keys);
    for &b in bytes {
        h.byte(b);
    }
    h.finish()
}

#[inline]
pub(super) fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl KeyHasher {
    #[inline]
    pub(super) fn new(keys: HashKeys) -> KeyHasher {
        KeyHasher {
            k1: keys.k1,
            acc: keys.k0,
            word: 0,
            fill: 0,
            len: 0,
        }
    }

    #[inline]
    pub(super) fn word(&mut self, w: u64) {
        debug_assert_eq!(self.fill, 0);
        self.acc = fold_mul(self.acc ^ w, self.k1);
        self.len += 8;
    }

    #[inline]
    pub(super) fn byte(&mut self, b: u8) {
        self.word |= u64::from(b) << (8 * self.fill);
        self.fill += 1;
        if self.fill == 8 {
            let w = self.word;
            self.word = 0;
            self.fill = 0;
            self.word(w);
        }
    }

    #[inline]
    pub(super) fn finish(self) -> Option<u64> {
        let len = self.len + u64::from(self.fill);
        if len == 0 {
            return None;
        }
        let acc = fold_mul(self.acc ^ self.word, self.k1) ^ len;
        Some(finalise(acc))
    }
}

#[inline]
pub(super) fn finalise(mut h: u64) -> u64 {
    // splitmix64's finaliser.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}
