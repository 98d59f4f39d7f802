//! The [`Store`]: the index (key -> slot) and each slot's key, size, dirty
//! bit and tier, shared by every tier of an exclusive hierarchy (see the
//! module doc of tier.rs), and the [`Victim`]s that leave it.

use super::aged::Aged;
use crate::index::{prefetch, SlotIndex};

/// An entry's tier while it is between tiers (evicted, not yet demoted).
pub(super) const IN_TRANSIT: u8 = u8::MAX;

/// The tier of an entry only ghosts hold (no tier holds the object).
pub(super) const GHOST: u8 = u8::MAX - 1;

/// The largest number of tiers a shared store can tell apart.
pub const MAX_TIERS: usize = GHOST as usize;

/// Marks an index value whose entry only ghosts hold: lookups of residents
/// pass over it without reading the entry. Slots stay below it.
const GHOST_BIT: u32 = 1 << 31;

/// A victim's slot when the entry was dropped from the store.
const NO_SLOT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Entry {
    pub(super) key: u64,
    pub(super) size: u32,
    pub(super) dirty: bool,
    /// The tier holding the entry, [`IN_TRANSIT`] or [`GHOST`].
    pub(super) tier: u8,
    /// How many tiers' policies hold the entry as a ghost (it stays in the
    /// store while any does).
    pub(super) ghosts: u8,
}

/// An entry leaving a tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    pub key: u64,
    pub size: u32,
    pub dirty: bool,
    /// The slot the entry keeps in a shared store while it moves down, or
    /// `u32::MAX` when it left the store.
    pub(super) slot: u32,
}

impl Victim {
    /// The slot the entry kept in the store (see [`Tier::insert`]'s `keep`).
    #[inline(always)]
    pub fn kept_slot(&self) -> Option<u32> {
        (self.slot != NO_SLOT).then_some(self.slot)
    }
}

/// The entries of one tier, or of all tiers of an exclusive hierarchy: the
/// index and the per-slot key, size, dirty bit and tier. One struct per slot,
/// so an eviction touches one cache line.
#[derive(Default)]
pub struct Store {
    index: SlotIndex,
    pub(super) entries: Vec<Entry>,
    pub(super) free: Vec<u32>,
    /// Entries only ghosts hold (their index values carry `GHOST_BIT`);
    /// while there are none, an insertion need not look for one.
    pub(super) ghost_only: usize,
    /// With periodic flushes (`track_dirty`): per tier, the slots that
    /// became dirty in it since its last flush, so that a flush visits
    /// those and not the whole index. A superset of the tier's dirty
    /// entries: a slot may repeat, or name an entry since cleaned, moved
    /// or dropped (`take_dirty` sorts those out).
    dirty_log: Option<Vec<Vec<u32>>>,
    /// With write-back by age or by a dirty threshold (`track_aged`): the
    /// entries in the order they became dirty and each tier's dirty amount
    /// (aged.rs). Then `dirty_log` is not kept.
    aged: Option<Box<Aged>>,
}

impl Store {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the per-tier logs of entries made dirty (for flushes).
    pub(crate) fn track_dirty(&mut self) {
        self.dirty_log.get_or_insert_with(Vec::new);
    }

    /// Keeps the entries in the order they became dirty, with the time,
    /// and each tier's dirty amount (aged.rs), instead of `track_dirty`'s
    /// log: for write-back by age and by a dirty threshold.
    pub(crate) fn track_aged(&mut self) {
        self.dirty_log = None;
        self.aged.get_or_insert_with(Default::default);
    }

    /// The aged books, when kept (`track_aged`).
    pub fn aged(&self) -> Option<&Aged> {
        self.aged.as_deref()
    }

    /// The aged books to change (the hierarchy sets the time and limits,
    /// and takes the oldest entries).
    pub(crate) fn aged_mut(&mut self) -> Option<&mut Aged> {
        self.aged.as_deref_mut()
    }

    /// The entry in `slot` has just become dirty in tier `level` (set
    /// dirty while clean, or placed dirty into the tier).
    #[inline(always)]
    pub(super) fn note_dirty(&mut self, level: usize, slot: u32) {
        if self.dirty_log.is_some() {
            self.log_dirty(level, slot);
        } else if let Some(a) = self.aged.as_deref_mut() {
            a.dirtied(level, slot, self.entries[slot as usize].size);
            // Bounded however rare the flushes are (as `log_dirty`).
            a.compact(level, 2 * self.entries.len() + 64);
        }
    }

    /// The entry in `slot` is about to leave its tier (moved out, dropped):
    /// with aged books, a dirty one is no longer dirty there.
    #[inline(always)]
    pub(super) fn leaving(&mut self, slot: u32) {
        if let Some(a) = self.aged.as_deref_mut() {
            let e = &self.entries[slot as usize];
            if e.dirty && (e.tier as usize) < MAX_TIERS {
                a.cleaned(e.tier as usize, slot, e.size);
            }
        }
    }

    fn log_dirty(&mut self, level: usize, slot: u32) {
        let logs = self.dirty_log.as_mut().expect("tracking dirty entries");
        if logs.len() <= level {
            logs.resize_with(level + 1, Vec::new);
        }
        logs[level].push(slot);
        // Bounded between flushes however rare they are: past twice the
        // store's slots, the log keeps only the entries it still needs.
        if logs[level].len() > 2 * self.entries.len() + 64 {
            let kept = self.take_dirty(level);
            self.dirty_log.as_mut().expect("tracking")[level] = kept;
        }
    }

    /// The slots of tier `level`'s dirty entries, in slot order (flushes
    /// write them in that order), emptying its log. Work in proportion to
    /// the entries made dirty since the last call, not to the store.
    pub(crate) fn take_dirty(&mut self, level: usize) -> Vec<u32> {
        let Some(log) = self.dirty_log.as_mut().and_then(|l| l.get_mut(level)) else {
            return Vec::new();
        };
        let mut v = std::mem::take(log);
        v.sort_unstable();
        v.dedup();
        v.retain(|&slot| {
            let e = &self.entries[slot as usize];
            // Still indexed at this slot (a dropped entry's fields stay
            // behind in a free slot), still in the tier, still dirty.
            e.dirty && e.tier as usize == level && self.get(e.key) == Some(slot)
        });
        v
    }

    /// Entries indexed (in a tier, between tiers during a demotion, or kept
    /// as ghosts).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Entries kept only because policies hold them as ghosts.
    pub fn ghost_only(&self) -> usize {
        self.ghost_only
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Starts loading the bucket a lookup of `key` will probe.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.index.prefetch(key);
    }

    /// Starts loading what removing `key` from the index reads.
    #[inline(always)]
    pub fn prefetch_removal(&self, key: u64) {
        self.index.prefetch_removal(key);
    }

    /// `prefetch` with the key's [`SlotIndex::hash`] already computed.
    #[inline(always)]
    pub fn prefetch_hashed(&self, h: u64) {
        self.index.prefetch_hashed(h);
    }

    /// Starts loading a slot's entry.
    #[inline(always)]
    pub fn prefetch_entry(&self, slot: u32) {
        prefetch(self.entries.as_ptr().wrapping_add(slot as usize));
    }

    /// The slot of `key` in whichever tier holds it.
    #[inline(always)]
    pub fn get_hashed(&self, key: u64, h: u64) -> Option<u32> {
        self.index.get_below(key, h, GHOST_BIT)
    }

    #[inline(always)]
    pub fn get(&self, key: u64) -> Option<u32> {
        self.get_hashed(key, SlotIndex::hash(key))
    }

    /// The slot of `key` when only ghosts hold it.
    #[inline(always)]
    pub(super) fn ghost_of(&self, key: u64) -> Option<u32> {
        if self.ghost_only == 0 {
            return None;
        }
        self.index
            .get(key)
            .filter(|&v| v & GHOST_BIT != 0)
            .map(|v| v & !GHOST_BIT)
    }

    /// A policy has let go of its ghost in `slot` (`Policy::forgotten`):
    /// the entry leaves the store when nothing else holds it.
    #[inline(always)]
    pub(super) fn unghost(&mut self, slot: u32) {
        let e = &mut self.entries[slot as usize];
        debug_assert!(e.ghosts > 0, "unghost of an entry no policy holds");
        e.ghosts -= 1;
        if e.ghosts == 0 && e.tier == GHOST {
            self.index.remove(e.key);
            self.free.push(slot);
            self.ghost_only -= 1;
        }
    }

    /// The tier holding the entry in `slot`.
    #[inline(always)]
    pub fn tier_of(&self, slot: u32) -> usize {
        self.entries[slot as usize].tier as usize
    }

    pub fn key_of(&self, slot: u32) -> u64 {
        self.entries[slot as usize].key
    }

    pub fn size_of(&self, slot: u32) -> u32 {
        self.entries[slot as usize].size
    }

    pub fn is_dirty(&self, slot: u32) -> bool {
        self.entries[slot as usize].dirty
    }

    pub fn set_dirty(&mut self, slot: u32, dirty: bool) {
        let e = &mut self.entries[slot as usize];
        let (was, level, size) = (e.dirty, e.tier as usize, e.size);
        e.dirty = dirty;
        if self.aged.is_some() {
            // Aged books change on transitions only, of an entry in a tier:
            // one written again while dirty keeps its place and time (Linux
            // 2.4's `mark_buffer_dirty` stamps a buffer only when it was
            // clean).
            if level < MAX_TIERS && was != dirty {
                if dirty {
                    self.note_dirty(level, slot);
                } else if let Some(a) = self.aged.as_deref_mut() {
                    a.cleaned(level, slot, size);
                }
            }
        } else if dirty {
            self.note_dirty(level, slot);
        }
    }

    /// Takes tier `level`'s dirty entries from the oldest (aged books
    /// only; see `Aged::take_oldest`): those dirty since `cutoff` or
    /// before, or with `amount`, the oldest up to that charge.
    pub(crate) fn take_oldest(
        &mut self,
        level: usize,
        cutoff: f64,
        amount: Option<u64>,
    ) -> Vec<u32> {
        let entries = &self.entries;
        match self.aged.as_deref_mut() {
            Some(a) => a.take_oldest(level, cutoff, amount, |s| entries[s as usize].size as u64),
            None => Vec::new(),
        }
    }

    /// Drops the entry in `slot` from the store (index and slot) and returns
    /// it, with whether its slot is free now; it goes back on the free list
    /// unless `reuse`. An entry some policy holds as a ghost stays instead,
    /// marked as one in its index bucket.
    #[inline(always)]
    pub(super) fn drop_slot(&mut self, slot: u32, reuse: bool) -> (Victim, bool) {
        self.leaving(slot);
        let e = &mut self.entries[slot as usize];
        let v = Victim {
            key: e.key,
            size: e.size,
            dirty: e.dirty,
            slot: NO_SLOT,
        };
        if e.ghosts > 0 {
            e.tier = GHOST;
            self.set_index(v.key, slot | GHOST_BIT);
            self.ghost_only += 1;
            return (v, false);
        }
        self.index.remove(v.key);
        if !reuse {
            self.free.push(slot);
        }
        (v, true)
    }

    /// Rewrites the index value of a stored `key` (its slot, marked with
    /// `GHOST_BIT` or not): an entry becoming a ghost's only, or revived.
    #[inline(always)]
    pub(super) fn set_index(&mut self, key: u64, value: u32) {
        let ix = self.index.slot_mut_hashed(key, SlotIndex::hash(key));
        *ix.expect("a stored entry is indexed") = value;
    }

    /// Drops the entry of a victim that kept its slot but found no tier.
    pub fn discard(&mut self, v: &Victim) {
        if let Some(s) = v.kept_slot() {
            self.drop_slot(s, false);
        }
    }

    /// A new entry: takes `reuse` or a free slot, and indexes it.
    #[inline(always)]
    pub(super) fn add(&mut self, e: Entry, reuse: Option<u32>) -> u32 {
        let slot = match reuse.or_else(|| self.free.pop()) {
            Some(f) => {
                self.entries[f as usize] = e;
                f
            }
            None => {
                assert!(
                    self.entries.len() < GHOST_BIT as usize,
                    "more than 2^31 entries in one store"
                );
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        };
        self.index.insert(e.key, slot);
        slot
    }

    /// Every (key, slot) held by `tier`, in table order.
    pub fn iter_tier(&self, tier: usize) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.index
            .iter()
            .filter(move |&(_, s)| s & GHOST_BIT == 0 && self.tier_of(s) == tier)
    }
}
