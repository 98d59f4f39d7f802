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

pub mod aged;
mod insert;
mod store;

use insert::{Books, EvictOne, Insert};
use store::IN_TRANSIT;
pub use store::{Store, Victim, MAX_TIERS};

use crate::admission::{Admission, AdmitCtx, AnyAdmission};
use crate::cost::AccessCost;
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
    /// Their bytes.
    pub rejected_bytes: u64,
    /// The largest of them, in bytes (0 when none).
    pub largest_rejected: u64,
    /// Placements the admission policy allowed.
    pub admitted: u64,
    /// Placements the admission policy refused (the object was not placed).
    pub rejected_admission: u64,
    /// Entries dropped because a write of another size replaced them.
    pub replaced: u64,
    /// Medium pages (its access unit) programmed: each write into the
    /// tier (fill, demotion, write hit, write-back received) rounded up to
    /// whole pages.
    pub pages_programmed: u64,
    /// Medium pages read by read hits, each rounded up to whole pages
    /// (device/energy.rs: the reads' dynamic energy).
    pub pages_read: u64,
}

/// How many of the medium's pages a write of some bytes programs: a shift
/// when the page is a power of two (every catalog unit is), else a division.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pages {
    page: u32,
    /// log2(page), or u32::MAX when the page is not a power of two. Eight
    /// bytes in all: the books of every insertion copy them.
    shift: u32,
}

impl Pages {
    fn new(page: u32) -> Self {
        let page = page.max(1);
        Pages {
            page,
            shift: if page.is_power_of_two() {
                page.trailing_zeros()
            } else {
                u32::MAX
            },
        }
    }

    #[inline(always)]
    pub(crate) fn of(self, size: u32) -> u64 {
        let bytes = size as u64 + (self.page - 1) as u64;
        if self.shift != u32::MAX {
            bytes >> self.shift
        } else {
            bytes / self.page as u64
        }
    }
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
    /// After an insertion through the tier's own policy that evicted: the
    /// slot it expected to evict next (a prefetch hint for the tier below;
    /// may be stale later).
    next_victim: Option<u32>,
    admission: AnyAdmission,
    pub write_back: bool,
    pub cost: AccessCost,
    /// The medium's page, for `pages_programmed`.
    pub(crate) pages: Pages,
    pub c: TierCounters,
    /// A flash translation layer under the tier (`ftl = { ... }` on raw
    /// flash): device/ftl.rs.
    pub ftl: Option<Box<crate::device::ftl_space::FtlSpace>>,
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
            pages: Pages::new(cost.page()),
            cost,
            c: TierCounters::default(),
            ftl: None,
        }
    }

    /// An object of `size` programmed into the tier outside an insertion
    /// (a write hit, a write-back received): its pages counted, and its
    /// FTL told.
    #[inline(always)]
    pub fn programmed(&mut self, key: u64, slot: u32, size: u32) {
        self.c.pages_programmed += self.pages.of(size);
        if let Some(f) = self.ftl.as_deref_mut() {
            f.write(key, slot, size);
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

    /// `n` hits in a row on `slot` with nothing between them: as `n`
    /// calls of [`Tier::touch`] (the policy's `on_hits`).
    #[inline(always)]
    pub fn touch_n(&mut self, slot: u32, req: &Request, n: u64) {
        self.policy.on_hits(slot, req, n);
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
                pages: self.pages,
                ftl: self.ftl.as_deref_mut(),
            },
        )
    }

    /// Whether an object of `size` can be held at all.
    #[inline(always)]
    pub fn fits(&self, size: u32) -> bool {
        self.charge(size) <= self.capacity
    }

    /// Counts an object refused for its size (larger than the whole tier):
    /// off the hot path, on the refusal branch only.
    #[cold]
    #[inline(never)]
    fn refuse(&mut self, size: u32) {
        self.c.rejected += 1;
        self.c.rejected_bytes += size as u64;
        self.c.largest_rejected = self.c.largest_rejected.max(size as u64);
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
        self.place::<AnyPolicy, false>(None, s, slot, req, dirty, keep, victims)
    }

    /// [`Tier::insert`] with the order of
    /// the tier's entries kept by `p` instead of the tier's own policy: the
    /// segments of an exclusive hierarchy of LRU and FIFO tiers, one list
    /// across all tiers (hierarchy/segments.rs). `UNIT`: the tier counts
    /// objects and holds one at least (the caller has checked), so every
    /// object fits and one eviction makes room.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn place_with<P: Policy, const UNIT: bool>(
        &mut self,
        p: &mut P,
        s: &mut Store,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
        keep: bool,
        victims: impl FnMut(Victim),
    ) -> bool {
        self.place::<P, UNIT>(Some(p), s, slot, req, dirty, keep, victims)
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn place<P: Policy, const UNIT: bool>(
        &mut self,
        ext: Option<&mut P>,
        s: &mut Store,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
        keep: bool,
        victims: impl FnMut(Victim),
    ) -> bool {
        debug_assert!(
            !UNIT || (self.unit && self.capacity >= 1),
            "UNIT: objects, 1+"
        );
        let charge = if UNIT { 1 } else { self.charge(req.size) };
        if !UNIT && charge > self.capacity {
            self.refuse(req.size);
            return false;
        }
        let (policy, b) = self.parts();
        let ins = Insert::<_, UNIT> {
            s,
            b,
            charge,
            slot,
            req,
            dirty,
            keep,
            victims,
        };
        match ext {
            // Segments prefetch the next victims' links themselves.
            Some(p) => {
                ins.call(p);
            }
            None => self.next_victim = policy.with(ins),
        }
        true
    }

    /// Evicts the entry the policy picks, as an insertion would to make
    /// room, without inserting anything: the victim leaves the store. None
    /// when the tier is empty. For reclaim ahead of demand (vm/pressure.rs:
    /// kswapd and direct reclaim keep free frames above a watermark), off
    /// every insertion's path.
    pub fn evict_one(&mut self, s: &mut Store) -> Option<Victim> {
        if self.len == 0 {
            return None;
        }
        let (policy, b) = self.parts();
        Some(policy.with(EvictOne { s, b }))
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

    /// The wear a flashcache tier's policy counts (None for other policies).
    pub fn block_wear(&self) -> Option<crate::device::wear::BlockWear> {
        match &self.policy {
            AnyPolicy::FlashCache(p) => Some(p.wear()),
            _ => None,
        }
    }

    /// Erase-block erases a flashcache tier's policy has counted so far
    /// (None for other policies): cheap, for the time model's erase
    /// operations.
    pub fn flash_erases(&self) -> Option<u64> {
        match &self.policy {
            AnyPolicy::FlashCache(p) => Some(p.stats.erases),
            _ => self.ftl.as_ref().map(|f| f.ftl().c.erases),
        }
    }

    /// Pages the tier's FTL has copied so far (GC and levelling, each a
    /// read and a program): None without an FTL. For the time model.
    pub fn ftl_copies(&self) -> Option<u64> {
        self.ftl.as_ref().map(|f| f.copies())
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
        debug_assert_eq!(s.entries[slot as usize].tier, self.level);
        if let Some(f) = self.ftl.as_deref_mut() {
            f.remove(slot);
        }
        s.leaving(slot);
        let e = &mut s.entries[slot as usize];
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
