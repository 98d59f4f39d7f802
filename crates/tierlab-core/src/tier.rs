//! One level of the hierarchy: a medium, a capacity, an eviction policy and
//! the counters. The tier owns the index and the per-entry sizes and dirty
//! bits; its policy only orders slots.

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

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    size: u32,
    dirty: bool,
}

/// An entry leaving a tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    pub key: u64,
    pub size: u32,
    pub dirty: bool,
}

/// What the tier keeps per slot and about its slots, apart from the policy
/// (split out so an operation can borrow it beside the concrete policy).
struct Slots {
    used: u64,
    unit: bool,
    index: SlotIndex,
    /// Per slot; one struct so an eviction touches one cache line.
    entries: Vec<Entry>,
    free: Vec<u32>,
}

impl Slots {
    #[inline(always)]
    fn charge(&self, size: u32) -> u64 {
        if self.unit {
            1
        } else {
            size as u64
        }
    }

    #[inline(always)]
    fn release(&mut self, slot: u32) -> Victim {
        let v = self.vacate(slot);
        self.free.push(slot);
        v
    }

    /// `release` without putting the slot on the free list: the caller
    /// reuses it (or frees it) itself.
    #[inline(always)]
    fn vacate(&mut self, slot: u32) -> Victim {
        let e = self.entries[slot as usize];
        let v = Victim {
            key: e.key,
            size: e.size,
            dirty: e.dirty,
        };
        self.index.remove(v.key);
        self.used -= self.charge(v.size);
        v
    }
}

pub struct Tier {
    pub name: String,
    /// Bytes, or objects when sizes are ignored.
    pub capacity: u64,
    slots: Slots,
    policy: AnyPolicy,
    /// After an insertion that evicted: the key the policy expected to evict
    /// next (a prefetch hint for the tier below; may be stale later).
    next_victim: Option<u64>,
    admission: AnyAdmission,
    pub write_back: bool,
    pub cost: AccessCost,
    pub c: TierCounters,
}

impl Tier {
    pub fn new(
        name: String,
        capacity: u64,
        unit: bool,
        policy: AnyPolicy,
        admission: AnyAdmission,
        write_back: bool,
        cost: AccessCost,
    ) -> Self {
        Tier {
            name,
            capacity,
            slots: Slots {
                used: 0,
                unit,
                index: SlotIndex::new(),
                entries: Vec::new(),
                free: Vec::new(),
            },
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
        self.slots.charge(size)
    }

    /// Space in use (bytes, or objects).
    pub fn used(&self) -> u64 {
        self.slots.used
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.slots.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.index.is_empty()
    }

    /// Starts loading what a lookup of `key` will touch first.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.slots.index.prefetch(key);
    }

    pub fn contains(&self, key: u64) -> bool {
        self.slots.index.get(key).is_some()
    }

    #[inline(always)]
    pub fn lookup(&self, key: u64) -> Option<u32> {
        self.slots.index.get(key)
    }

    /// `lookup` with the key's [`SlotIndex::hash`] already computed.
    #[inline(always)]
    pub fn lookup_hashed(&self, key: u64, h: u64) -> Option<u32> {
        self.slots.index.get_hashed(key, h)
    }

    /// `prefetch` with the key's [`SlotIndex::hash`] already computed.
    #[inline(always)]
    pub fn prefetch_hashed(&self, h: u64) {
        self.slots.index.prefetch_hashed(h);
    }

    /// A hit: the policy learns of it. Sizes are not changed by a read hit
    /// (as in libCacheSim); a write replaces the entry instead.
    #[inline(always)]
    pub fn touch(&mut self, slot: u32, req: &Request) {
        self.policy.on_hit(slot, req);
    }

    pub fn is_dirty(&self, slot: u32) -> bool {
        self.slots.entries[slot as usize].dirty
    }

    pub fn set_dirty(&mut self, slot: u32, dirty: bool) {
        self.slots.entries[slot as usize].dirty = dirty;
    }

    pub fn size_of(&self, slot: u32) -> u32 {
        self.slots.entries[slot as usize].size
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

    /// Inserts `req.key` (not present), evicting until it fits and handing
    /// each victim to `victims`.
    /// Returns false, touching nothing, when the object exceeds the capacity.
    #[inline]
    pub fn insert(&mut self, req: &Request, dirty: bool, victims: impl FnMut(Victim)) -> bool {
        let charge = self.charge(req.size);
        if charge > self.capacity {
            self.c.rejected += 1;
            return false;
        }
        self.next_victim = self.policy.with(Insert {
            s: &mut self.slots,
            c: &mut self.c,
            capacity: self.capacity,
            charge,
            req,
            dirty,
            victims,
        });
        true
    }

    /// After the last insertion, if it evicted: the key the policy expected
    /// to evict next. A hint for prefetching; it may be stale by now.
    #[inline(always)]
    pub fn next_victim_hint(&self) -> Option<u64> {
        self.next_victim
    }

    /// Removes an entry for a reason other than eviction.
    pub fn remove(&mut self, slot: u32) -> Victim {
        self.policy.on_remove(slot);
        self.slots.release(slot)
    }

    /// Slots holding dirty data, in slot order (deterministic), for flushes.
    pub fn dirty_slots(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .slots
            .index
            .iter()
            .map(|(_, s)| s)
            .filter(|&s| self.slots.entries[s as usize].dirty)
            .collect();
        v.sort_unstable();
        v
    }

    pub fn key_of(&self, slot: u32) -> u64 {
        self.slots.entries[slot as usize].key
    }

    /// Every key held, for invariant checks in tests.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.index.iter().map(|(k, _)| k)
    }
}

/// The body of [`Tier::insert`], run against the concrete policy so that its
/// events (before_insert, evict, victim_hint, on_insert) inline without a
/// branch each.
struct Insert<'a, F> {
    s: &'a mut Slots,
    c: &'a mut TierCounters,
    capacity: u64,
    charge: u64,
    req: &'a Request,
    dirty: bool,
    victims: F,
}

impl<F: FnMut(Victim)> PolicyFn for Insert<'_, F> {
    /// The key of the next victim, when this insertion evicted.
    type Out = Option<u64>;

    #[inline(always)]
    fn call<P: Policy>(mut self, p: &mut P) -> Option<u64> {
        let (s, req, charge) = (self.s, self.req, self.charge);
        p.before_insert(req);
        let mut next = None;
        // The last victim's slot takes the new entry: the free list would
        // hand it back anyway (last in, first out), so it is not pushed and
        // popped, and the slots assigned are the same.
        let mut reuse = None;
        if s.used + charge > self.capacity {
            while s.used + charge > self.capacity {
                let slot = p.evict();
                let v = s.vacate(slot);
                if let Some(prev) = reuse.replace(slot) {
                    s.free.push(prev);
                }
                self.c.evictions += 1;
                (self.victims)(v);
            }
            // Evictions are misses in memory (the victim's entry, then its
            // index bucket): prefetch the entry of the victim after next and
            // the bucket of the next one, whose entry the previous eviction
            // prefetched.
            if let Some(n) = p.victim_hint(0) {
                let key = s.entries[n as usize].key;
                s.index.prefetch(key);
                next = Some(key);
            }
            if let Some(after) = p.victim_hint(1) {
                prefetch(s.entries.as_ptr().wrapping_add(after as usize));
            }
        }
        let e = Entry {
            key: req.key,
            size: req.size,
            dirty: self.dirty,
        };
        let slot = match reuse.or_else(|| s.free.pop()) {
            Some(f) => {
                s.entries[f as usize] = e;
                f
            }
            None => {
                s.entries.push(e);
                (s.entries.len() - 1) as u32
            }
        };
        s.index.insert(req.key, slot);
        s.used += charge;
        self.c.fills += 1;
        self.c.writes += 1;
        self.c.bytes_in += req.size as u64;
        p.on_insert(slot, req);
        next
    }
}
