//! One level of the hierarchy: a medium, a capacity, an eviction policy and
//! the counters; and the [`Store`] its entries live in.
//!
//! A store holds the index (key -> slot) and each slot's key, size, dirty bit
//! and tier. In an inclusive hierarchy every tier has a store of its own (a
//! key may be in several tiers). In an exclusive one a key lives in one tier
//! at a time, so all tiers share one store: a lookup probes one table
//! whatever the depth, and an entry keeps its slot and its index bucket while
//! it is demoted or promoted; only the policies' lists change. The tier
//! itself keeps its policy (which orders the store's slots it holds), its
//! space in use and its counters.
//!
//! A policy that remembers evicted keys (ARC's ghost lists) keeps them as
//! slots of the store too: an entry stays while any policy holds it as a
//! ghost, in no tier when no tier holds the object, and its index bucket
//! says so. One probe then tells a request's key resident, ghost or new, as
//! in libCacheSim's hash table, instead of a second table of ghosts probed on
//! every miss (the ARC bench's largest stall, BENCHMARKS.md).

use crate::admission::{Admission, AdmitCtx, AnyAdmission};
use crate::cost::AccessCost;
use crate::index::{prefetch, SlotIndex};
use crate::policy::{AnyPolicy, Policy, PolicyFn};
use crate::request::Request;
use serde::Serialize;

/// Counters of one tier. Lookups are the requests that reached this tier.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct TierCounters {
    pub hits: u64,
    pub misses: u64,
    pub hit_bytes: u64,
    pub miss_bytes: u64,
    /// Read requests served from this tier.
    pub reads: u64,
    /// Writes into this tier: write requests, fills, demotions, write-backs received.
    pub writes: u64,
    /// Entries inserted (fills, demotions, write-allocations).
    pub fills: u64,
    pub evictions: u64,
    /// Dirty entries written to a lower level (on eviction or flush).
    pub writebacks: u64,
    /// Entries moved up out of this tier (exclusive hierarchy hits).
    pub promotions: u64,
    /// Entries received from the tier above on its eviction.
    pub demotions: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Entries dropped by delete requests.
    pub invalidations: u64,
    /// Objects that could not be placed (larger than the whole tier).
    pub rejected: u64,
    /// Placements the admission policy allowed.
    pub admitted: u64,
    /// Placements the admission policy refused (the object was not placed).
    pub rejected_admission: u64,
    /// Entries dropped because a write of another size replaced them.
    pub replaced: u64,
}

/// The space an object of `size` takes: its bytes, or 1 when sizes are
/// ignored (capacities count objects).
#[inline(always)]
fn charge(unit: bool, size: u32) -> u64 {
    if unit {
        1
    } else {
        size as u64
    }
}

/// An entry's tier while it is between tiers (evicted, not yet demoted).
const IN_TRANSIT: u8 = u8::MAX;

/// The tier of an entry only ghosts hold (no tier holds the object).
const GHOST: u8 = u8::MAX - 1;

/// The largest number of tiers a shared store can tell apart.
pub const MAX_TIERS: usize = GHOST as usize;

/// Marks an index value whose entry only ghosts hold: lookups of residents
/// pass over it without reading the entry. Slots stay below it.
const GHOST_BIT: u32 = 1 << 31;

/// A victim's slot when the entry was dropped from the store.
const NO_SLOT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    size: u32,
    dirty: bool,
    /// The tier holding the entry, [`IN_TRANSIT`] or [`GHOST`].
    tier: u8,
    /// How many tiers' policies hold the entry as a ghost (it stays in the
    /// store while any does).
    ghosts: u8,
}

/// An entry leaving a tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    pub key: u64,
    pub size: u32,
    pub dirty: bool,
    /// The slot the entry keeps in a shared store while it moves down, or
    /// `u32::MAX` when it left the store.
    slot: u32,
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
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// Entries only ghosts hold (their index values carry `GHOST_BIT`);
    /// while there are none, an insertion need not look for one.
    ghost_only: usize,
    /// With periodic flushes (`track_dirty`): per tier, the slots that
    /// became dirty in it since its last flush, so that a flush visits
    /// those and not the whole index. A superset of the tier's dirty
    /// entries: a slot may repeat, or name an entry since cleaned, moved
    /// or dropped (`take_dirty` sorts those out).
    dirty_log: Option<Vec<Vec<u32>>>,
}

impl Store {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the per-tier logs of entries made dirty (for flushes).
    pub(crate) fn track_dirty(&mut self) {
        self.dirty_log.get_or_insert_with(Vec::new);
    }

    /// The entry in `slot` has just become dirty in tier `level`.
    #[inline(always)]
    fn note_dirty(&mut self, level: usize, slot: u32) {
        if self.dirty_log.is_some() {
            self.log_dirty(level, slot);
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
    fn ghost_of(&self, key: u64) -> Option<u32> {
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
    fn unghost(&mut self, slot: u32) {
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
        e.dirty = dirty;
        if dirty {
            let level = e.tier as usize;
            self.note_dirty(level, slot);
        }
    }

    /// Drops the entry in `slot` from the store (index and slot) and returns
    /// it, with whether its slot is free now; it goes back on the free list
    /// unless `reuse`. An entry some policy holds as a ghost stays instead,
    /// marked as one in its index bucket.
    #[inline(always)]
    fn drop_slot(&mut self, slot: u32, reuse: bool) -> (Victim, bool) {
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
    fn set_index(&mut self, key: u64, value: u32) {
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
    fn add(&mut self, e: Entry, reuse: Option<u32>) -> u32 {
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

pub struct Tier {
    pub name: String,
    /// Bytes, or objects when sizes are ignored.
    pub capacity: u64,
    /// This tier's position, as its store records it.
    level: u8,
    unit: bool,
    used: u64,
    len: usize,
    policy: AnyPolicy,
    /// After an insertion that evicted: the slot the policy expected to
    /// evict next (a prefetch hint for the tier below; may be stale later).
    next_victim: Option<u32>,
    admission: AnyAdmission,
    pub write_back: bool,
    pub cost: AccessCost,
    pub c: TierCounters,
}

impl Tier {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        level: usize,
        capacity: u64,
        unit: bool,
        policy: AnyPolicy,
        admission: AnyAdmission,
        write_back: bool,
        cost: AccessCost,
    ) -> Self {
        assert!(level < MAX_TIERS, "at most {MAX_TIERS} tiers");
        Tier {
            name,
            capacity,
            level: level as u8,
            unit,
            used: 0,
            len: 0,
            policy,
            next_victim: None,
            admission,
            write_back,
            cost,
            c: TierCounters::default(),
        }
    }

    #[inline(always)]
    fn charge(&self, size: u32) -> u64 {
        charge(self.unit, size)
    }

    /// Whether every object counts as 1 (unit sizes; capacity in objects).
    pub fn counts_objects(&self) -> bool {
        self.unit
    }

    /// Space in use (bytes, or objects).
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slot of `key` if this tier holds it (its store may be shared).
    #[inline(always)]
    pub fn lookup(&self, s: &Store, key: u64) -> Option<u32> {
        s.get(key)
            .filter(|&slot| s.tier_of(slot) == self.level as usize)
    }

    /// A hit: the policy learns of it. Sizes are not changed by a read hit
    /// (as in libCacheSim); a write replaces the entry instead.
    #[inline(always)]
    pub fn touch(&mut self, slot: u32, req: &Request) {
        self.policy.on_hit(slot, req);
    }

    /// Starts loading the policy state a hit on (or an insertion of) `slot`
    /// will touch.
    #[inline(always)]
    pub fn prefetch_slot(&self, slot: u32) {
        self.policy.prefetch(slot);
    }

    /// Whether the admission policy admits every object (then never asked).
    pub fn admits_all(&self) -> bool {
        self.admission.is_always()
    }

    /// The tier's space, length and counters, for an insertion that keeps
    /// the order itself (hierarchy/lean.rs).
    #[inline(always)]
    pub(crate) fn books(&mut self) -> Books<'_> {
        self.parts().1
    }

    /// The policy and the books, borrowed apart (an insertion needs both).
    #[inline(always)]
    fn parts(&mut self) -> (&mut AnyPolicy, Books<'_>) {
        (
            &mut self.policy,
            Books {
                used: &mut self.used,
                len: &mut self.len,
                c: &mut self.c,
                capacity: self.capacity,
                level: self.level,
                unit: self.unit,
            },
        )
    }

    /// Whether an object of `size` can be held at all.
    #[inline(always)]
    pub fn fits(&self, size: u32) -> bool {
        self.charge(size) <= self.capacity
    }

    /// Asks the admission policy whether `req`'s object (not held, and not
    /// larger than the tier) may be placed now, counting the answer.
    #[inline(always)]
    pub fn admits(&mut self, req: &Request, now_ns: f64) -> bool {
        // The default admits everything: one predictable branch, no call.
        let ok = self.admission.is_always()
            || self.admission.admit(
                req,
                &AdmitCtx {
                    now_ns,
                    bytes_written: self.c.bytes_in,
                },
            );
        if ok {
            self.c.admitted += 1;
        } else {
            self.c.rejected_admission += 1;
        }
        ok
    }

    /// Inserts `req.key`, evicting until it fits and handing each victim to
    /// `victims`. `slot`: None for a key not in `s`; the entry's slot when
    /// it is in `s` but in no tier (promoted or demoted into this one, of a
    /// shared store), which it keeps. With `keep`, victims keep their slot
    /// and index bucket in `s` (they move to the next tier of a shared store,
    /// which adopts them or discards them); otherwise they leave the store.
    /// Returns false, touching nothing, when the object exceeds the capacity.
    #[inline(always)]
    pub fn insert(
        &mut self,
        s: &mut Store,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
        keep: bool,
        victims: impl FnMut(Victim),
    ) -> bool {
        self.place(None::<&mut AnyPolicy>, s, slot, req, dirty, keep, victims)
    }

    /// [`Tier::insert`] with the order of
    /// the tier's entries kept by `p` instead of the tier's own policy: the
    /// segments of an exclusive hierarchy of LRU and FIFO tiers, one list
    /// across all tiers (hierarchy/segments.rs).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn place_with<P: Policy>(
        &mut self,
        p: &mut P,
        s: &mut Store,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
        keep: bool,
        victims: impl FnMut(Victim),
    ) -> bool {
        self.place(Some(p), s, slot, req, dirty, keep, victims)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn place<P: Policy>(
        &mut self,
        ext: Option<&mut P>,
        s: &mut Store,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
        keep: bool,
        victims: impl FnMut(Victim),
    ) -> bool {
        let charge = self.charge(req.size);
        if charge > self.capacity {
            self.c.rejected += 1;
            return false;
        }
        let (policy, b) = self.parts();
        let ins = Insert {
            s,
            b,
            charge,
            slot,
            req,
            dirty,
            keep,
            victims,
        };
        let next = match ext {
            Some(p) => ins.call(p),
            None => policy.with(ins),
        };
        self.next_victim = next;
        true
    }

    /// How the tier orders its entries when that order is a plain list:
    /// `Some(true)` for LRU (a hit moves the entry to the front), `Some(false)`
    /// for FIFO (hits change nothing), `None` for every other policy.
    pub fn list_order(&self) -> Option<bool> {
        match self.policy {
            AnyPolicy::Lru(_) => Some(true),
            AnyPolicy::Fifo(_) => Some(false),
            _ => None,
        }
    }

    /// After the last insertion, if it evicted: the slot the policy expected
    /// to evict next. A hint for prefetching; it may be stale by now.
    #[inline(always)]
    pub fn next_victim_hint(&self) -> Option<u32> {
        self.next_victim
    }

    /// Takes an entry out of this tier for a reason other than eviction and
    /// drops it from the store.
    pub fn remove(&mut self, s: &mut Store, slot: u32) -> Victim {
        self.detach(s, slot);
        s.drop_slot(slot, false).0
    }

    /// [`Tier::remove`] with the entry's order kept by `p` (see [`Tier::place_with`]).
    pub fn remove_with<P: Policy>(&mut self, p: &mut P, s: &mut Store, slot: u32) -> Victim {
        p.on_remove(slot);
        self.leave(s, slot);
        s.drop_slot(slot, false).0
    }

    /// Takes an entry out of this tier, keeping it in the store (in no tier)
    /// for another tier of a shared store to take in ([`Tier::insert`] with its slot).
    #[inline(always)]
    pub fn detach(&mut self, s: &mut Store, slot: u32) {
        self.policy.on_remove(slot);
        self.leave(s, slot);
    }

    /// [`Tier::detach`] with the entry's order kept by `p` (see [`Tier::place_with`]).
    #[inline(always)]
    pub fn detach_with<P: Policy>(&mut self, p: &mut P, s: &mut Store, slot: u32) {
        p.on_remove(slot);
        self.leave(s, slot);
    }

    /// The tier's side of an entry leaving it: space, length, the entry's tier.
    #[inline(always)]
    fn leave(&mut self, s: &mut Store, slot: u32) {
        let e = &mut s.entries[slot as usize];
        debug_assert_eq!(e.tier, self.level);
        e.tier = IN_TRANSIT;
        self.used -= self.charge(e.size);
        self.len -= 1;
    }

    /// Slots holding dirty data, in slot order (deterministic), by a scan of
    /// the whole index: what `Store::take_dirty` must agree with (checked
    /// at every flush in debug builds).
    pub fn dirty_slots(&self, s: &Store) -> Vec<u32> {
        let mut v: Vec<u32> = s
            .iter_tier(self.level as usize)
            .map(|(_, slot)| slot)
            .filter(|&slot| s.is_dirty(slot))
            .collect();
        v.sort_unstable();
        v
    }
}

/// The body of [`Tier::insert`] and [`Tier::place_with`], run against the
/// concrete policy so that its events (before_insert, evict, victim_hint,
/// on_insert) inline without a branch each.
struct Insert<'a, F> {
    s: &'a mut Store,
    b: Books<'a>,
    charge: u64,
    /// The entry's slot when it is already in the store.
    slot: Option<u32>,
    req: &'a Request,
    dirty: bool,
    keep: bool,
    victims: F,
}

impl<F: FnMut(Victim)> PolicyFn for Insert<'_, F> {
    /// The slot of the next victim, when this insertion evicted.
    type Out = Option<u32>;

    #[inline(always)]
    fn call<P: Policy>(mut self, p: &mut P) -> Option<u32> {
        let (s, req, charge) = (self.s, self.req, self.charge);
        // A key only ghosts hold comes back into its own entry; the policy
        // learns which (its ghost, or another tier's).
        let slot = self.slot.or_else(|| {
            let g = s.ghost_of(req.key)?;
            // `filled` revives the ghost's entry after the evictions: load
            // it while they run (on the ARC bench it was a demand miss).
            s.prefetch_entry(g);
            Some(g)
        });
        p.before_insert(req, slot);
        let mut next = None;
        let mut reuse = None;
        if self.b.overflows(charge) {
            while self.b.overflows(charge) {
                let victim = p.evict();
                let v = self
                    .b
                    .evicted(s, victim, self.keep, p.ghosted(), &mut reuse);
                (self.victims)(v);
            }
            // Evictions are misses in memory (the victim's entry, then its
            // index bucket): prefetch the entry of the victim after next and
            // the bucket of the next one, whose entry the previous eviction
            // prefetched. A victim that keeps its slot leaves its bucket
            // alone: only its entry is wanted.
            if let Some(n) = p.victim_hint(0) {
                next = Some(n);
                if !self.keep {
                    s.prefetch_removal(s.key_of(n));
                }
            }
            if let Some(after) = p.victim_hint(1) {
                s.prefetch_entry(after);
            }
            // The same two stages for the ghost the next insertion drops.
            // (Unrolled by hand: a loop over the array was not compiled away
            // for policies without ghosts.)
            let [a, b] = p.ghost_hints(0);
            if let Some(g) = a {
                s.prefetch_removal(s.key_of(g));
            }
            if let Some(g) = b {
                s.prefetch_removal(s.key_of(g));
            }
            let [a, b] = p.ghost_hints(1);
            if let Some(g) = a {
                s.prefetch_entry(g);
            }
            if let Some(g) = b {
                s.prefetch_entry(g);
            }
        }
        let slot = self
            .b
            .filled(s, slot, req.key, req.size, self.dirty, charge, reuse);
        p.on_insert(slot, req);
        // After the entry is in the tier: its own ghost, if forgotten now,
        // must not take the entry out of the store.
        while let Some(g) = p.forgotten() {
            s.unghost(g);
        }
        next
    }
}

/// What an insertion changes in a tier besides its policy's order: space,
/// length, counters. Apart from the tier so that the policy can be borrowed
/// at the same time ([`Tier::place`]), and shared by every insertion path
/// (`Insert::call`, and the lean path of hierarchy/lean.rs).
pub(crate) struct Books<'a> {
    used: &'a mut u64,
    len: &'a mut usize,
    c: &'a mut TierCounters,
    capacity: u64,
    level: u8,
    unit: bool,
}

impl Books<'_> {
    /// The space `size` takes in the tier (bytes, or 1 with unit sizes).
    #[inline(always)]
    pub(crate) fn charge(&self, size: u32) -> u64 {
        charge(self.unit, size)
    }

    /// Whether `charge` more than the tier holds exceeds its capacity.
    #[inline(always)]
    pub(crate) fn overflows(&self, charge: u64) -> bool {
        *self.used + charge > self.capacity
    }

    /// The tier's and the store's side of evicting `slot`, which the order
    /// has just given up. With `keep` the victim keeps its slot and index
    /// bucket (it moves to the next tier of a shared store); otherwise it
    /// leaves the store, and the last such victim's slot is kept in `reuse`
    /// for the entry coming in: the free list would hand it back anyway
    /// (last in, first out), so it is not pushed and popped, and the slots
    /// assigned are the same. `ghosted`: the policy keeps the victim as a
    /// ghost, so its entry stays (in no tier, if it leaves the tier's store).
    #[inline(always)]
    pub(crate) fn evicted(
        &mut self,
        s: &mut Store,
        slot: u32,
        keep: bool,
        ghosted: bool,
        reuse: &mut Option<u32>,
    ) -> Victim {
        let e = &mut s.entries[slot as usize];
        if ghosted {
            e.ghosts += 1;
        }
        *self.used -= charge(self.unit, e.size);
        let v = if keep {
            e.tier = IN_TRANSIT;
            Victim {
                key: e.key,
                size: e.size,
                dirty: e.dirty,
                slot,
            }
        } else {
            let (v, freed) = s.drop_slot(slot, true);
            if freed {
                if let Some(prev) = reuse.replace(slot) {
                    s.free.push(prev);
                }
            }
            v
        };
        *self.len -= 1;
        self.c.evictions += 1;
        v
    }

    /// An entry joins the tier after its evictions: `slot` when it is in
    /// the store already (in no tier: in transit, or a ghost's, whose object
    /// comes back at `size`), else a new one (`reuse`, or a free slot).
    /// Returns its slot.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn filled(
        &mut self,
        s: &mut Store,
        slot: Option<u32>,
        key: u64,
        size: u32,
        dirty: bool,
        charge: u64,
        reuse: Option<u32>,
    ) -> u32 {
        let slot = match slot {
            Some(slot) => {
                if let Some(r) = reuse {
                    s.free.push(r);
                }
                let e = &mut s.entries[slot as usize];
                if e.tier == GHOST {
                    e.size = size;
                    s.set_index(key, slot);
                    s.ghost_only -= 1;
                } else {
                    debug_assert_eq!(e.tier, IN_TRANSIT);
                }
                let e = &mut s.entries[slot as usize];
                e.tier = self.level;
                e.dirty = dirty;
                slot
            }
            None => s.add(
                Entry {
                    key,
                    size,
                    dirty,
                    tier: self.level,
                    ghosts: 0,
                },
                reuse,
            ),
        };
        if dirty {
            s.note_dirty(self.level as usize, slot);
        }
        *self.used += charge;
        *self.len += 1;
        self.c.fills += 1;
        self.c.writes += 1;
        self.c.bytes_in += size as u64;
        slot
    }
}
