//! The tier's index: key -> slot, open addressing with linear probing.
//!
//! Written here rather than taken from hashbrown for one reason: the
//! simulation loop knows the keys of the next requests, and this table can
//! prefetch the bucket a key will probe, hiding the cache miss that dominates
//! a large tier's lookup. Deletion shifts later entries back (no tombstones),
//! so probe runs stay short however many keys come and go.

use crate::hash::fold_mul;

const EMPTY: u32 = u32::MAX;

/// Asks the CPU to start loading the cache line at `p`.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint; it never faults, even on a bad address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Bucket {
    key: u64,
    slot: u32,
    /// The low half of the key's hash, in what would be padding: deletion
    /// and growth find a moved key's home without hashing it again.
    hash: u32,
}

const VACANT: Bucket = Bucket {
    key: 0,
    slot: EMPTY,
    hash: 0,
};

pub struct SlotIndex {
    buckets: Vec<Bucket>,
    mask: usize,
    len: usize,
}

impl Default for SlotIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl SlotIndex {
    pub fn new() -> Self {
        SlotIndex {
            buckets: vec![VACANT; 16],
            mask: 15,
            len: 0,
        }
    }

    /// A table that holds `n` keys without growing.
    /// The bytes [`SlotIndex::with_capacity`]`(n)` allocates.
    pub fn bytes_with_capacity(n: usize) -> u64 {
        let buckets = (2 * n as u64).next_power_of_two().max(16);
        buckets.saturating_mul(std::mem::size_of::<Bucket>() as u64)
    }

    /// The bytes its buckets take.
    pub fn bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Bucket>()
    }

    pub fn with_capacity(n: usize) -> Self {
        let buckets = (2 * n).next_power_of_two().max(16);
        SlotIndex {
            buckets: vec![VACANT; buckets],
            mask: buckets - 1,
            len: 0,
        }
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        fold_mul(key) as usize & self.mask
    }

    /// The hash a key's bucket comes from. Every tier's table uses the same
    /// hash (only the mask differs), so a caller probing several tiers for
    /// one key computes it once and passes it to the `_hashed` methods.
    #[inline(always)]
    pub fn hash(key: u64) -> u64 {
        fold_mul(key)
    }

    /// The bucket at `i`, which every caller has masked into range.
    #[inline(always)]
    fn at(&self, i: usize) -> Bucket {
        debug_assert!(i <= self.mask);
        // SAFETY: `buckets.len() == mask + 1` always, and `i <= mask`.
        unsafe { *self.buckets.get_unchecked(i) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Starts loading the bucket `key` will probe first.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        prefetch(self.buckets.as_ptr().wrapping_add(self.home(key)));
    }

    /// Starts loading what removing `key` reads: its home bucket, and the
    /// one after it, which the backward shift reads next (in the next cache
    /// line when home is the last bucket of its line: a quarter of keys).
    #[inline(always)]
    pub fn prefetch_removal(&self, key: u64) {
        let i = self.home(key);
        prefetch(self.buckets.as_ptr().wrapping_add(i));
        prefetch(self.buckets.as_ptr().wrapping_add((i + 1) & self.mask));
    }

    /// Starts loading the bucket of a key whose [`SlotIndex::hash`] is `h`.
    #[inline(always)]
    pub fn prefetch_hashed(&self, h: u64) {
        prefetch(self.buckets.as_ptr().wrapping_add(h as usize & self.mask));
    }

    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.get_hashed(key, fold_mul(key))
    }

    /// `get` of a key whose [`SlotIndex::hash`] is `h`.
    #[inline(always)]
    pub fn get_hashed(&self, key: u64, h: u64) -> Option<u32> {
        self.find(key, h).map(|i| self.at(i).slot)
    }

    /// `get_hashed`, taking a present key whose slot is `limit` or more
    /// for absent (a store marks entries only ghosts hold that way).
    #[inline(always)]
    pub fn get_below(&self, key: u64, h: u64, limit: u32) -> Option<u32> {
        let slot = self.at(self.find(key, h)?).slot;
        (slot < limit).then_some(slot)
    }

    /// The bucket holding `key` (whose hash is `h`), if any.
    #[inline(always)]
    fn find(&self, key: u64, h: u64) -> Option<usize> {
        debug_assert_eq!(h, fold_mul(key));
        let mut i = h as usize & self.mask;
        loop {
            let b = self.at(i);
            if b.slot == EMPTY {
                return None;
            }
            if b.key == key {
                return Some(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts a key known to be absent.
    #[inline(always)]
    pub fn insert(&mut self, key: u64, slot: u32) {
        self.insert_hashed(key, fold_mul(key), slot);
    }

    /// `insert` of a key whose [`SlotIndex::hash`] is `h`.
    #[inline(always)]
    pub fn insert_hashed(&mut self, key: u64, h: u64, slot: u32) {
        debug_assert!(slot != EMPTY);
        debug_assert_eq!(h, fold_mul(key));
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
        }
        let mut i = h as usize & self.mask;
        while self.at(i).slot != EMPTY {
            debug_assert!(self.at(i).key != key, "insert of a present key");
            i = (i + 1) & self.mask;
        }
        self.buckets[i] = Bucket {
            key,
            slot,
            hash: h as u32,
        };
        self.len += 1;
    }

    /// Removes a key; returns its slot if it was present.
    #[inline(always)]
    pub fn remove(&mut self, key: u64) -> Option<u32> {
        let i = self.find(key, fold_mul(key))?;
        let slot = self.buckets[i].slot;
        // Backward-shift deletion: move up any later entry of the run whose
        // home is not between the hole and itself.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let b = self.at(j);
            if b.slot == EMPTY {
                break;
            }
            let h = b.hash as usize & self.mask;
            // Is h cyclically in (hole, j]? Then b must stay.
            let stays = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !stays {
                self.buckets[hole] = b;
                hole = j;
            }
        }
        self.buckets[hole] = VACANT;
        self.len -= 1;
        Some(slot)
    }

    #[cold]
    fn grow(&mut self) {
        let n = self.buckets.len() * 2;
        // Buckets keep 32 bits of hash, enough to place a key in up to 2^32
        // buckets (2^31 keys, a 64 GiB table): refuse to grow past that.
        assert!(n - 1 <= u32::MAX as usize, "index larger than 2^32 buckets");
        let old = std::mem::replace(&mut self.buckets, vec![VACANT; n]);
        self.mask = self.buckets.len() - 1;
        self.len = 0;
        for b in old {
            if b.slot != EMPTY {
                let mut i = b.hash as usize & self.mask;
                while self.at(i).slot != EMPTY {
                    i = (i + 1) & self.mask;
                }
                self.buckets[i] = b;
                self.len += 1;
            }
        }
    }

    /// The slot of a present key, to change in place (`h` is its
    /// [`SlotIndex::hash`]); the new value must not be `u32::MAX`.
    #[inline(always)]
    pub fn slot_mut_hashed(&mut self, key: u64, h: u64) -> Option<&mut u32> {
        let i = self.find(key, h)?;
        Some(&mut self.buckets[i].slot)
    }

    /// Every present key's slot, to renumber in place (never to `u32::MAX`).
    pub fn slots_mut(&mut self) -> impl Iterator<Item = &mut u32> + '_ {
        self.buckets
            .iter_mut()
            .filter(|b| b.slot != EMPTY)
            .map(|b| &mut b.slot)
    }

    /// Every (key, slot), in table order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.buckets
            .iter()
            .filter(|b| b.slot != EMPTY)
            .map(|b| (b.key, b.slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::HashMap;

    #[test]
    fn with_capacity_holds_its_keys_without_growing() {
        let mut t = SlotIndex::with_capacity(64);
        let buckets = t.buckets.len();
        for k in 0..64u64 {
            t.insert(k << 12, k as u32);
        }
        assert_eq!(t.buckets.len(), buckets);
        assert!((0..64u64).all(|k| t.get(k << 12) == Some(k as u32)));
    }

    #[test]
    fn matches_a_hashmap_under_churn() {
        let mut rng = Rng::new(3);
        let mut idx = SlotIndex::new();
        let mut model: HashMap<u64, u32> = HashMap::new();
        for step in 0..200_000u32 {
            // Few distinct keys, page-aligned ones too: long probe runs and wrap-around.
            let key = rng.below(3000) * if step % 3 == 0 { 4096 } else { 1 };
            match rng.below(3) {
                0 => {
                    if let std::collections::hash_map::Entry::Vacant(e) = model.entry(key) {
                        e.insert(step);
                        idx.insert(key, step);
                    }
                }
                1 => assert_eq!(idx.remove(key), model.remove(&key)),
                _ => assert_eq!(idx.get(key), model.get(&key).copied()),
            }
            assert_eq!(idx.len(), model.len());
        }
        let mut all: Vec<_> = idx.iter().collect();
        all.sort_unstable();
        let mut want: Vec<_> = model.into_iter().collect();
        want.sort_unstable();
        assert_eq!(all, want);
    }
}
