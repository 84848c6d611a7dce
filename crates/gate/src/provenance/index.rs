//! The store's index: a key's high 32 bits (its *tag*) → the last stored value with that tag,
//! in one open-addressing table (linear probing, at most half full, a tag's home slot is its
//! high bits: keys are already well mixed and keyed by the store's secret, so they are not
//! hashed again). A slot is 8 bytes (tag, id): half the memory a fresh store writes for a
//! 64-bit key. Two keys with one tag share a slot, and the store chains their values (each
//! entry's `next`) and compares each value's text, so a shared tag costs a longer chain, never
//! a wrong answer. One probe sequence per lookup; growing moves the (tag, id) pairs without
//! rehashing any value.

/// An empty slot's id.
const EMPTY: u32 = u32::MAX;

/// Key → id, open addressing.
#[derive(Clone, Debug, Default)]
pub(super) struct Index {
    /// (tag, id); `id == EMPTY` for an empty slot. A power of two slots (at most 2^32), or
    /// none.
    slots: Vec<(u32, u32)>,
    /// Tags held.
    len: usize,
}

impl Index {
    /// `32 - log2(slots)`: a tag's home is `tag >> shift`.
    #[inline]
    fn shift(&self) -> u32 {
        32 - self.slots.len().trailing_zeros()
    }

    /// The id stored for `key`'s tag (the last value stored with a key of that tag).
    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let tag = tag(key);
        let mask = self.slots.len() - 1;
        let mut i = (tag >> self.shift()) as usize;
        loop {
            let (t, id) = self.slots[i];
            if id == EMPTY {
                return None;
            }
            if t == tag {
                return Some(id);
            }
            i = (i + 1) & mask;
        }
    }

    /// Room for `additional` more keys without growing.
    pub(super) fn reserve(&mut self, additional: usize) {
        let need = self.len + additional;
        if need * 2 <= self.slots.len() {
            return;
        }
        let slots = (need * 2).next_power_of_two().max(16);
        let old = std::mem::replace(&mut self.slots, vec![(0, EMPTY); slots]);
        self.len = 0;
        for (t, id) in old {
            if id != EMPTY {
                self.insert_new(t, id);
            }
        }
    }

    /// Store `id` for `key`'s tag: the id it replaces, if any (the last value stored with a
    /// key of that tag).
    #[inline]
    pub(super) fn insert(&mut self, key: u64, id: u32) -> Option<u32> {
        debug_assert_ne!(id, EMPTY);
        self.reserve(1);
        let tag = tag(key);
        let mask = self.slots.len() - 1;
        let mut i = (tag >> self.shift()) as usize;
        loop {
            let slot = &mut self.slots[i];
            if slot.1 == EMPTY {
                *slot = (tag, id);
                self.len += 1;
                return None;
            }
            if slot.0 == tag {
                return Some(std::mem::replace(&mut slot.1, id));
            }
            i = (i + 1) & mask;
        }
    }

    /// `insert` of a tag not held, with room for it.
    fn insert_new(&mut self, tag: u32, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = (tag >> self.shift()) as usize;
        while self.slots[i].1 != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = (tag, id);
        self.len += 1;
    }
}

/// A key's tag: its high 32 bits.
#[inline]
fn tag(key: u64) -> u32 {
    (key >> 32) as u32
}
