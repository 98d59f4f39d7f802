//! An insertion into a tier: the rules (evict until the object fits, the
//! victims' books, the entry's fill, the prefetches for the next
//! evictions) written once, in [`Insert::call`], for every path that
//! inserts (a tier's own policy, the segments of an exclusive LRU/FIFO
//! hierarchy, its unit-size chain of demotions); and the [`Books`] an
//! insertion keeps in the tier besides its policy's order.

use super::store::{Entry, Store, Victim, GHOST, IN_TRANSIT};
use super::{charge, TierCounters};
use crate::policy::{Policy, PolicyFn};
use crate::request::Request;

/// The body of [`Tier::insert`] and [`Tier::place_with`], run against the
/// concrete policy so that its events (before_insert, evict, victim_hint,
/// on_insert) inline without a branch each. `UNIT`: the tier counts
/// objects and holds one at least (the caller has checked), so one
/// eviction always makes room: a loop the compiler cannot bound cost the
/// 3-tier bench 5% more instructions (seventh session, docs/notes).
pub(super) struct Insert<'a, F, const UNIT: bool> {
    pub(super) s: &'a mut Store,
    pub(super) b: Books<'a>,
    pub(super) charge: u64,
    /// The entry's slot when it is already in the store.
    pub(super) slot: Option<u32>,
    pub(super) req: &'a Request,
    pub(super) dirty: bool,
    pub(super) keep: bool,
    pub(super) victims: F,
}

impl<F: FnMut(Victim), const UNIT: bool> PolicyFn for Insert<'_, F, UNIT> {
    /// The slot of the next victim, when this insertion evicted.
    type Out = Option<u32>;

    #[inline(always)]
    fn call<P: Policy>(mut self, p: &mut P) -> Option<u32> {
        let (s, req, charge) = (self.s, self.req, self.charge);
        // A key only ghosts hold comes back into its own entry; the policy
        // learns which (its ghost, or another tier's).
        let slot = self.slot.or_else(|| {
            if P::STORE_GHOSTLESS {
                return None;
            }
            let g = s.ghost_of(req.key)?;
            // `filled` revives the ghost's entry after the evictions: load
            // it while they run (on the ARC bench it was a demand miss).
            s.prefetch_entry(g);
            Some(g)
        });
        p.before_insert(req, slot);
        let mut next = None;
        let mut reuse = None;
        if self.b.overflows(charge) || p.needs_room() {
            loop {
                let victim = p.evict();
                let v = self
                    .b
                    .evicted(s, victim, self.keep, p.ghosted(), &mut reuse);
                (self.victims)(v);
                // A unit-charged tier is never over its capacity: one made
                // room (UNIT is only for the segments' LRU and FIFO, which
                // never need room).
                if UNIT || !(self.b.overflows(charge) || p.needs_room()) {
                    break;
                }
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

/// One eviction with no insertion after it ([`super::Tier::evict_one`]):
/// the victim's books as [`Insert::call`] keeps them, its slot back on the
/// store's free list, and the ghosts the policy forgets released.
pub(super) struct EvictOne<'a> {
    pub(super) s: &'a mut Store,
    pub(super) b: Books<'a>,
}

impl PolicyFn for EvictOne<'_> {
    type Out = Victim;

    fn call<P: Policy>(mut self, p: &mut P) -> Victim {
        let victim = p.evict();
        let mut reuse = None;
        let v = self
            .b
            .evicted(self.s, victim, false, p.ghosted(), &mut reuse);
        if let Some(slot) = reuse {
            self.s.free.push(slot);
        }
        while let Some(g) = p.forgotten() {
            self.s.unghost(g);
        }
        v
    }
}

/// What an insertion changes in a tier besides its policy's order: space,
/// length, counters. Apart from the tier so that the policy can be borrowed
/// at the same time ([`Tier::place`]).
pub(super) struct Books<'a> {
    pub(super) used: &'a mut u64,
    pub(super) len: &'a mut usize,
    pub(super) c: &'a mut TierCounters,
    pub(super) capacity: u64,
    pub(super) level: u8,
    pub(super) unit: bool,
    pub(super) pages: super::Pages,
    /// The tier's flash translation layer, when it has one: told of every
    /// object programmed and every one that leaves.
    pub(super) ftl: Option<&'a mut crate::device::ftl_space::FtlSpace>,
}

impl Books<'_> {
    /// Whether `charge` more than the tier holds exceeds its capacity.
    #[inline(always)]
    pub(super) fn overflows(&self, charge: u64) -> bool {
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
    pub(super) fn evicted(
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
        if let Some(f) = self.ftl.as_deref_mut() {
            f.remove(slot);
        }
        *self.used -= charge(self.unit, e.size);
        let v = if keep {
            let v = Victim {
                key: e.key,
                size: e.size,
                dirty: e.dirty,
                slot,
            };
            s.leaving(slot);
            s.entries[slot as usize].tier = IN_TRANSIT;
            v
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
    pub(super) fn filled(
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
        self.c.pages_programmed += self.pages.of(size);
        if let Some(f) = self.ftl.as_deref_mut() {
            f.fill(key, slot, size);
        }
        slot
    }
}
