//! The pager's page table: for every page ever touched, its state bits and,
//! while it is resident, its slot in the memory tier's store.
//!
//! One entry per page answers both questions a reference asks (resident
//! where? on the swap device?) with one lookup, where a hashed map of state
//! bits beside the tier's own index took two or three, each a likely cache
//! miss on a large footprint. Entries sit in leaves of [`LEAF`] consecutive
//! page tags, as a radix page table's do: neighbouring pages share cache
//! lines and a run of references in one leaf finds it in the one-leaf
//! cache; only the leaf directory is hashed, and it is small (a leaf per
//! 64 pages: 1,024 leaves for the 65,536 pages of the VM benchmark).
//!
//! Sparse pages would cost a whole leaf each, so leaves are made only
//! while they stay dense: beyond [`FREE_LEAVES`] leaves, only while every
//! leaf holds [`MIN_PER_LEAF`] touched pages on average. A page whose leaf
//! is not made has its entry in a hashed spill map instead; a leaf made
//! later takes its spilled pages in. So memory stays within the leaves
//! allowed free plus 64 bytes a page (a hashed map of 16-byte entries at
//! half load pays 32).

use crate::index::SlotIndex;

/// Page tags per leaf (a power of two): 512 bytes of entries.
const LEAF_BITS: u32 = 6;
const LEAF: usize = 1 << LEAF_BITS;

/// Leaves made whatever their density (512 KiB of entries).
const FREE_LEAVES: usize = 1024;

/// Past [`FREE_LEAVES`], the touched pages per leaf below which pages go
/// to the spill map (an eighth of a leaf: 64 bytes a page at worst).
const MIN_PER_LEAF: u64 = (LEAF / 8) as u64;

/// A leaf's entries, on whole cache lines.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Leaf([u64; LEAF]);

/// An entry index with this bit is the spill map's entry (`spill[i & !SPILL]`).
const SPILL: usize = 1 << (usize::BITS - 1);

/// An entry's state bits are above its slot.
const BITS_SHIFT: u32 = 32;

/// The entry of a page never touched.
const UNTOUCHED: u64 = 0;

/// The slot part of a page that is not resident.
const NO_SLOT: u64 = u32::MAX as u64;

/// The state bit every touched page has (so that a touched page's entry
/// is never [`UNTOUCHED`], whatever its other bits).
pub const TOUCHED: u8 = 1;

/// No leaf is cached (no leaf has this number: tags are below 2^64 and
/// a leaf's number is a tag over [`LEAF`]).
const NO_LEAF: u64 = u64::MAX;

#[derive(Default)]
pub struct PageTable {
    /// Leaf number (tag >> LEAF_BITS) -> the leaf's first entry (its
    /// index in `e` times [`LEAF`]). The tier's open-addressing table: a
    /// lookup is one hash and, mostly, one compare (hashbrown's took a
    /// seventh of the benchmark's time).
    dir: SlotIndex,
    e: Vec<Leaf>,
    /// Pages whose leaf was not made: tag -> their entry in `spill`.
    spilled: SlotIndex,
    spill: Vec<u64>,
    /// The last leaf looked up and its first entry.
    last: (u64, u32),
    /// The leaf looked up before `last`: a read-ahead storm alternates
    /// between the faulting cluster's leaf and its victims' (older
    /// clusters'), which one cached leaf sent to the directory's hash on
    /// every page.
    prev: (u64, u32),
    /// Pages touched (entries not [`UNTOUCHED`]).
    len: u64,
}

impl PageTable {
    pub fn new() -> Self {
        PageTable {
            last: (NO_LEAF, 0),
            prev: (NO_LEAF, 0),
            ..Self::default()
        }
    }

    /// Pages touched.
    pub fn touched(&self) -> u64 {
        self.len
    }

    /// The index of `key`'s entry, made if it has none.
    #[inline(always)]
    pub fn index(&mut self, key: u64) -> usize {
        let leaf = key >> LEAF_BITS;
        let low = (key as usize) & (LEAF - 1);
        if leaf == self.last.0 {
            return self.last.1 as usize + low;
        }
        self.index_slow(key)
    }

    #[inline(never)]
    fn index_slow(&mut self, key: u64) -> usize {
        let leaf = key >> LEAF_BITS;
        let low = (key as usize) & (LEAF - 1);
        if leaf == self.prev.0 {
            std::mem::swap(&mut self.last, &mut self.prev);
            return self.last.1 as usize + low;
        }
        let base = match self.dir.get(leaf) {
            Some(b) => b,
            None => match self.spilled.get(key) {
                Some(i) => return SPILL | i as usize,
                None => match self.new_leaf(leaf) {
                    Some(b) => b,
                    None => return self.new_spill(key),
                },
            },
        };
        self.prev = self.last;
        self.last = (leaf, base);
        base as usize + low
    }

    /// A leaf for `leaf` if it may be made (its spilled pages moved in).
    #[cold]
    fn new_leaf(&mut self, leaf: u64) -> Option<u32> {
        let leaves = self.e.len();
        if leaves >= FREE_LEAVES && self.len < MIN_PER_LEAF * (leaves as u64 + 1) {
            return None;
        }
        let base = u32::try_from(leaves * LEAF).expect("page table below 2^32 entries");
        let mut l = Leaf([UNTOUCHED; LEAF]);
        if !self.spilled.is_empty() {
            for (low, e) in l.0.iter_mut().enumerate() {
                if let Some(i) = self.spilled.remove((leaf << LEAF_BITS) | low as u64) {
                    // (Its spill entry stays behind, unreferenced.)
                    *e = self.spill[i as usize];
                }
            }
        }
        self.e.push(l);
        self.dir.insert(leaf, base);
        Some(base)
    }

    #[cold]
    fn new_spill(&mut self, key: u64) -> usize {
        let i = u32::try_from(self.spill.len()).expect("spill map below 2^32 entries");
        self.spill.push(UNTOUCHED);
        self.spilled.insert(key, i);
        SPILL | i as usize
    }

    #[inline(always)]
    fn at(&self, i: usize) -> u64 {
        if i & SPILL != 0 {
            return self.spill[i & !SPILL];
        }
        self.e[i >> LEAF_BITS].0[i & (LEAF - 1)]
    }

    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut u64 {
        if i & SPILL != 0 {
            return &mut self.spill[i & !SPILL];
        }
        &mut self.e[i >> LEAF_BITS].0[i & (LEAF - 1)]
    }

    /// Starts loading `key`'s entry (made if it has none, as the lookup
    /// that follows would make it): the caller has other work to do
    /// before it reads the entry.
    #[inline(always)]
    pub fn prefetch(&mut self, key: u64) {
        let i = self.index(key);
        let p: *const u64 = if i & SPILL != 0 {
            &self.spill[i & !SPILL]
        } else {
            &self.e[i >> LEAF_BITS].0[i & (LEAF - 1)]
        };
        crate::index::prefetch(p);
    }

    /// The state bits of the entry at `i` (0: never touched).
    #[inline(always)]
    pub fn bits_at(&self, i: usize) -> u8 {
        (self.at(i) >> BITS_SHIFT) as u8
    }

    /// The slot of the page whose entry is at `i`, if resident.
    #[inline(always)]
    pub fn slot_at(&self, i: usize) -> Option<u32> {
        let e = self.at(i);
        let s = e & NO_SLOT;
        (e != UNTOUCHED && s != NO_SLOT).then_some(s as u32)
    }

    /// Marks the page at `i` touched; returns its bits before.
    #[inline(always)]
    pub fn touch_at(&mut self, i: usize) -> u8 {
        let e = self.at(i);
        if e == UNTOUCHED {
            *self.at_mut(i) = ((TOUCHED as u64) << BITS_SHIFT) | NO_SLOT;
            self.len += 1;
        }
        (e >> BITS_SHIFT) as u8
    }

    /// Marks `key` touched; returns its bits before.
    #[cfg(test)]
    #[inline]
    pub fn touch(&mut self, key: u64) -> u8 {
        let i = self.index(key);
        self.touch_at(i)
    }

    /// `key`'s state bits (0: never touched).
    #[cfg(test)]
    #[inline]
    pub fn bits(&mut self, key: u64) -> u8 {
        let i = self.index(key);
        self.bits_at(i)
    }

    /// `key`'s slot, if resident.
    #[inline]
    pub fn slot(&mut self, key: u64) -> Option<u32> {
        let i = self.index(key);
        self.slot_at(i)
    }

    /// Adds state bits to touched `key`.
    #[cfg(test)]
    #[inline]
    pub fn set_bits(&mut self, key: u64, bits: u8) {
        let i = self.index(key);
        debug_assert_ne!(self.at(i), UNTOUCHED, "only a touched page gets bits");
        *self.at_mut(i) |= (bits as u64) << BITS_SHIFT;
    }

    /// Removes state bits `bits` from the entry at `i` (touched); returns
    /// its bits before.
    #[inline(always)]
    pub fn clear_bits_at(&mut self, i: usize, bits: u8) -> u8 {
        let e = self.at_mut(i);
        let before = (*e >> BITS_SHIFT) as u8;
        *e &= !((bits as u64) << BITS_SHIFT);
        before
    }

    /// Adds state bits to the touched page at `i`.
    #[inline(always)]
    pub fn set_bits_at(&mut self, i: usize, bits: u8) {
        debug_assert_ne!(self.at(i), UNTOUCHED, "only a touched page gets bits");
        *self.at_mut(i) |= (bits as u64) << BITS_SHIFT;
    }

    /// Touched `key` left memory: no slot, state bits `add` added and
    /// `clear` removed, in one lookup; returns its bits before.
    #[inline]
    pub fn leave(&mut self, key: u64, add: u8, clear: u8) -> u8 {
        let i = self.index(key);
        debug_assert_ne!(self.at(i), UNTOUCHED, "only a touched page leaves");
        let e = self.at_mut(i);
        let before = (*e >> BITS_SHIFT) as u8;
        let bits = (before | add) & !clear;
        *e = ((bits as u64) << BITS_SHIFT) | NO_SLOT;
        before
    }

    /// The touched page at `i` is resident in `slot` (None: not resident).
    #[inline(always)]
    pub fn set_slot_at(&mut self, i: usize, slot: Option<u32>) {
        debug_assert_ne!(self.at(i), UNTOUCHED, "only a touched page is placed");
        let s = slot.map_or(NO_SLOT, u64::from);
        let e = self.at_mut(i);
        *e = (*e & !NO_SLOT) | s;
    }

    /// Touched `key` is resident in `slot` (None: not resident).
    #[cfg(test)]
    #[inline]
    pub fn set_slot(&mut self, key: u64, slot: Option<u32>) {
        let i = self.index(key);
        debug_assert_ne!(self.at(i), UNTOUCHED, "only a touched page is placed");
        let s = slot.map_or(NO_SLOT, u64::from);
        let e = self.at_mut(i);
        *e = (*e & !NO_SLOT) | s;
    }

    /// Forgets every page whose tag has `high` above bit `shift` (a
    /// process's pages); returns how many were touched.
    pub fn drop_where(&mut self, shift: u32, high: u64) -> u64 {
        let mut n = 0;
        for (leaf, base) in self.dir.iter() {
            if (leaf << LEAF_BITS) >> shift == high {
                let l = &mut self.e[base as usize >> LEAF_BITS].0;
                n += l.iter().filter(|&&e| e != UNTOUCHED).count() as u64;
                l.fill(UNTOUCHED);
            }
        }
        for (k, i) in self.spilled.iter() {
            if k >> shift == high {
                n += (self.spill[i as usize] != UNTOUCHED) as u64;
                self.spill[i as usize] = UNTOUCHED;
            }
        }
        self.len -= n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_bits_and_slots_apart() {
        let mut t = PageTable::new();
        assert_eq!(t.bits(7), 0);
        assert_eq!(t.slot(7), None);
        assert_eq!(t.touch(7), 0);
        assert_eq!(t.touch(7), TOUCHED);
        assert_eq!(t.slot(7), None);
        t.set_slot(7, Some(0));
        assert_eq!(t.slot(7), Some(0));
        t.set_bits(7, 2);
        assert_eq!((t.bits(7), t.slot(7)), (TOUCHED | 2, Some(0)));
        t.set_slot(7, None);
        assert_eq!((t.bits(7), t.slot(7)), (TOUCHED | 2, None));
        // Another leaf, far away, and the first one again.
        let far = (3 << 40) | 123_456;
        t.touch(far);
        t.set_slot(far, Some(5));
        assert_eq!((t.slot(7), t.slot(far), t.touched()), (None, Some(5), 2));
        assert_eq!(t.drop_where(40, 3), 1);
        assert_eq!((t.bits(far), t.slot(far), t.touched()), (0, None, 1));
        assert_eq!(t.bits(7), TOUCHED | 2);
    }

    #[test]
    fn sparse_pages_spill_and_a_leaf_made_later_takes_them_in() {
        let mut t = PageTable::new();
        // One page per leaf: the free leaves, then the spill map.
        let n = FREE_LEAVES as u64 + 100;
        for p in 0..n {
            t.touch(p << 20);
            t.set_slot(p << 20, Some(p as u32));
        }
        assert_eq!(
            (t.e.len(), t.spilled.len(), t.touched()),
            (FREE_LEAVES, 100, n)
        );
        for p in 0..n {
            assert_eq!(t.slot(p << 20), Some(p as u32));
        }
        // Dense pages in a spilled page's leaf make the leaf again once
        // there are enough of them; the spilled page moves in.
        let k = (n - 1) << 20;
        t.set_bits(k, 2);
        for p in 1..(MIN_PER_LEAF * (FREE_LEAVES as u64 + 1)) {
            t.touch((5 << 40) | p);
        }
        t.touch(k + 1);
        assert!(t.dir.get(k >> LEAF_BITS).is_some() && t.spilled.get(k).is_none());
        assert_eq!((t.bits(k), t.slot(k)), (TOUCHED | 2, Some((n - 1) as u32)));
        let before = t.touched();
        assert_eq!(t.drop_where(40, 0), n + 1);
        assert_eq!(t.touched(), before - n - 1);
        assert_eq!((t.bits(k), t.slot(0)), (0, None));
    }
}
