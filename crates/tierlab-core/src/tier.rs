//! One level of the hierarchy: a medium, a capacity, an eviction policy and
//! the counters. The tier owns the index and the per-entry sizes and dirty
//! bits; its policy only orders slots.

use crate::admission::{Admission, AdmitCtx, AnyAdmission};
use crate::cost::AccessCost;
use crate::index::{prefetch, SlotIndex};
use crate::policy::{AnyPolicy, Policy};
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

pub struct Tier {
    pub name: String,
    /// Bytes, or objects when sizes are ignored.
    pub capacity: u64,
    used: u64,
    unit: bool,
    index: SlotIndex,
    /// Per slot; one struct so an eviction touches one cache line.
    entries: Vec<Entry>,
    free: Vec<u32>,
    policy: AnyPolicy,
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
            used: 0,
            unit,
            index: SlotIndex::new(),
            entries: Vec::new(),
            free: Vec::new(),
            policy,
            admission,
            write_back,
            cost,
            c: TierCounters::default(),
        }
    }

    #[inline(always)]
    fn charge(&self, size: u32) -> u64 {
        if self.unit {
            1
        } else {
            size as u64
        }
    }

    /// Space in use (bytes, or objects).
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Starts loading what a lookup of `key` will touch first.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        self.index.prefetch(key);
    }

    pub fn contains(&self, key: u64) -> bool {
        self.index.get(key).is_some()
    }

    #[inline(always)]
    pub fn lookup(&self, key: u64) -> Option<u32> {
        self.index.get(key)
    }

    /// A hit: the policy learns of it. Sizes are not changed by a read hit
    /// (as in libCacheSim); a write replaces the entry instead.
    #[inline(always)]
    pub fn touch(&mut self, slot: u32, req: &Request) {
        self.policy.on_hit(slot, req);
    }

    pub fn is_dirty(&self, slot: u32) -> bool {
        self.entries[slot as usize].dirty
    }

    pub fn set_dirty(&mut self, slot: u32, dirty: bool) {
        self.entries[slot as usize].dirty = dirty;
    }

    pub fn size_of(&self, slot: u32) -> u32 {
        self.entries[slot as usize].size
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
    pub fn insert(&mut self, req: &Request, dirty: bool, mut victims: impl FnMut(Victim)) -> bool {
        let charge = self.charge(req.size);
        if charge > self.capacity {
            self.c.rejected += 1;
            return false;
        }
        self.policy.before_insert(req);
        if self.used + charge > self.capacity {
            while self.used + charge > self.capacity {
                let slot = self.policy.evict();
                let v = self.release(slot);
                self.c.evictions += 1;
                victims(v);
            }
            // Evictions are misses in memory (the victim's entry, then its
            // index bucket): prefetch the entry of the victim after next and
            // the bucket of the next one, whose entry the previous eviction
            // prefetched.
            if let Some(key) = self.next_victim_key() {
                self.index.prefetch(key);
            }
            if let Some(after) = self.policy.victim_hint(1) {
                prefetch(self.entries.as_ptr().wrapping_add(after as usize));
            }
        }
        let e = Entry {
            key: req.key,
            size: req.size,
            dirty,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.entries[s as usize] = e;
                s
            }
            None => {
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        };
        self.index.insert(req.key, slot);
        self.used += charge;
        self.c.fills += 1;
        self.c.writes += 1;
        self.c.bytes_in += req.size as u64;
        self.policy.on_insert(slot, req);
        true
    }

    /// The key the policy expects to evict next, if it can tell cheaply.
    #[inline(always)]
    pub fn next_victim_key(&self) -> Option<u64> {
        self.policy
            .victim_hint(0)
            .map(|s| self.entries[s as usize].key)
    }

    /// Removes an entry for a reason other than eviction.
    pub fn remove(&mut self, slot: u32) -> Victim {
        self.policy.on_remove(slot);
        self.release(slot)
    }

    #[inline(always)]
    fn release(&mut self, slot: u32) -> Victim {
        let e = self.entries[slot as usize];
        let v = Victim {
            key: e.key,
            size: e.size,
            dirty: e.dirty,
        };
        self.index.remove(v.key);
        self.used -= self.charge(v.size);
        self.free.push(slot);
        v
    }

    /// Slots holding dirty data, in slot order (deterministic), for flushes.
    pub fn dirty_slots(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .index
            .iter()
            .map(|(_, s)| s)
            .filter(|&s| self.entries[s as usize].dirty)
            .collect();
        v.sort_unstable();
        v
    }

    pub fn key_of(&self, slot: u32) -> u64 {
        self.entries[slot as usize].key
    }

    /// Every key held, for invariant checks in tests.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.index.iter().map(|(k, _)| k)
    }
}
