//! The store's index: key → the last stored value with that key, in one open-addressing table
//! (linear probing, at most half full, a key's home slot is its high bits: keys are already
//! well mixed and keyed by the store's secret, so they are not hashed again). One probe
//! sequence per lookup; growing moves the (key, id) pairs without rehashing any value.

/// An empty slot's id.
const EMPTY: u32 = u32::MAX;

/// Key → id, open addressing.
#[derive(Clone, Debug, Default)]
pub(super) struct Index {
    /// (key, id); `id == EMPTY` for an empty slot. A power of two slots, or none.
    slots: Vec<(u64, u32)>,
    /// Keys held.
    len: usize,
}

impl Index {
    /// `64 - log2(slots)`: a key's home is `key >> shift`.
    #[inline]
    fn shift(&self) -> u32 {
        64 - self.slots.len().trailing_zeros()
    }

    /// The id stored for `key`.
    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = (key >> self.shift()) as usize;
        loop {
            let (k, id) = self.slots[i];
            if id == EMPTY {
                return None;
            }
            if k == key {
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
        for (k, id) in old {
            if id != EMPTY {
                self.insert_new(k, id);
            }
        }
    }

    /// Store `id` for `key`: the id it replaces, if any.
    #[inline]
    pub(super) fn insert(&mut self, key: u64, id: u32) -> Option<u32> {
        debug_assert_ne!(id, EMPTY);
        self.reserve(1);
        let mask = self.slots.len() - 1;
        let mut i = (key >> self.shift()) as usize;
        loop {
            let slot = &mut self.slots[i];
            if slot.1 == EMPTY {
                *slot = (key, id);
                self.len += 1;
                return None;
            }
            if slot.0 == key {
                return Some(std::mem::replace(&mut slot.1, id));
            }
            i = (i + 1) & mask;
        }
    }

    /// `insert` of a key not held, with room for it.
    fn insert_new(&mut self, key: u64, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = (key >> self.shift()) as usize;
        while self.slots[i].1 != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = (key, id);
        self.len += 1;
    }
}
