//! The insertions of a lean hierarchy: exclusive, every tier LRU or FIFO
//! (so the tiers are segments of one list, segments.rs) and admitting every
//! object. Reads (`read_request::<true>`) and demotions
//! (`settle_exclusive::<true, true>`) insert through here.
//!
//! These are the general insertions (`place`, `insert_admitted_as`, and
//! `Tier::place_with` driven by a `Segment`) with what such a hierarchy
//! cannot need taken out: no admission policy to ask, no per-tier policy
//! to dispatch to, no request to build for a demotion. The events, their
//! order and every count and time are the general paths' (the segments
//! proptest in tests/hierarchy_props.rs compares the two request by
//! request); only the instructions spent on them differ (-8% on the 3-tier
//! benchmark, BENCHMARKS.md). When every tier also counts objects (unit
//! sizes), a read's fill and its chain of demotions run as one loop with
//! no queue (`lean_fill_unit`: a further -9% instructions, -11% cycles).

use super::segments::{Segments, NIL};
use super::{leave_tier, write_backing, Hierarchy};
use crate::request::Request;
use crate::tier::{Store, Tier, Victim};

impl Hierarchy {
    /// `place(0, req, false, Admit::Ask)` of a lean hierarchy: a read that missed
    /// everywhere fills tier 0. Returns the write's time (0 if not placed).
    #[inline(always)]
    pub(super) fn place_lean(&mut self, req: &Request) -> f64 {
        let t = &mut self.tiers[0];
        // Admitted without asking; counted as the general path counts it.
        if t.fits(req.size) {
            t.c.admitted += 1;
        }
        if !self.lean_insert(0, None, req.key, req.size, false) {
            return 0.0;
        }
        self.tiers[0].cost.write(req.size)
    }

    /// `insert_admitted_as` into tier `k` of a lean hierarchy: `slot` is the
    /// entry's when it is in the store already (in no tier). The same
    /// events as `Tier::place_with` driven by a `Segment`, in the same order.
    /// Demotions come here from `settle_exclusive::<true, true>`.
    #[inline(always)]
    pub(super) fn lean_insert(
        &mut self,
        k: usize,
        slot: Option<u32>,
        key: u64,
        size: u32,
        dirty: bool,
    ) -> bool {
        let n = self.tiers.len();
        let t = &mut self.tiers[k];
        let s = &mut self.stores[0];
        let g = self
            .segments
            .as_mut()
            .expect("a lean hierarchy has segments");
        if !t.fits(size) {
            t.c.rejected += 1;
            return false;
        }
        let pending = &mut self.pending;
        let last = k + 1 == n;
        place::<false>(t, g, s, k, last, slot, key, size, dirty, |v| {
            pending.push((k, v))
        });
        true
    }

    /// `lean_insert(0, slot, key, size, dirty)` and then the demotions that
    /// `settle_exclusive::<true, true>` would make after it, for a lean
    /// hierarchy whose tiers count objects (`unit_lean`): every entry is
    /// charged 1, so an insertion evicts at most one entry (a full tier's
    /// last), and the chain of demotions needs no queue. The same events in
    /// the same order, so the same slots, counts and floating-point sums
    /// (the segments proptest compares them request by request). Returns
    /// the read's latency: `lat` (its time so far), plus tier 0's write,
    /// plus the time `settle` would have returned, summed in the order the
    /// general path sums them (`access` adds `settle`'s time last).
    ///
    /// One copy, called like `settle_exclusive`: inlined into both of its
    /// callers in the loop, the 3-tier bench ran 9% more cycles for 7%
    /// fewer instructions; as a call, 8% fewer cycles (BENCHMARKS.md).
    #[inline(never)]
    pub(super) fn lean_fill_unit(
        &mut self,
        lat: f64,
        slot: Option<u32>,
        key: u64,
        size: u32,
        dirty: bool,
    ) -> f64 {
        let n = self.tiers.len();
        let g = self
            .segments
            .as_mut()
            .expect("a lean hierarchy has segments");
        let s = &mut self.stores[0];
        let mut victim = None;
        place::<true>(
            &mut self.tiers[0],
            g,
            s,
            0,
            n == 1,
            slot,
            key,
            size,
            dirty,
            |v| victim = Some(v),
        );
        let lat = lat + self.tiers[0].cost.write(size);
        let mut settled = 0.0;
        let mut j = 0;
        // As settle_exclusive::<true, true> handles each queued victim.
        while let Some(v) = victim.take() {
            let size = v.size;
            let Some(keep_dirty) = leave_tier(
                &mut self.tiers,
                &mut self.backing,
                &self.backing_cost,
                j,
                &v,
                &mut settled,
            ) else {
                break;
            };
            let below = &mut self.tiers[j + 1];
            // Unit charges fit every tier (`unit_lean` asks for capacities of 1 or more).
            below.c.admitted += 1;
            let Some(slot) = v.kept_slot() else {
                unreachable!("a victim above the last tier left the store")
            };
            let last = j + 2 == n;
            place::<true>(
                below,
                g,
                s,
                j + 1,
                last,
                Some(slot),
                v.key,
                size,
                keep_dirty,
                |v| victim = Some(v),
            );
            settled += self.tiers[j + 1].cost.write(size);
            if v.dirty && !keep_dirty {
                settled += write_backing(&mut self.backing, &self.backing_cost, size);
            }
            j += 1;
        }
        lat + settled
    }
}

/// The insertion of `lean_insert` into tier `t` (number `k`, `last` when it
/// is the last tier), which fits the object: evicts the tier's last entries
/// until it fits, handing `queue` each victim that moves on (every one
/// above the last tier, and the dirty ones of the last), and links the
/// entry at the tier's front. `UNIT`: the tier counts objects, so one
/// eviction at most (a loop the compiler cannot bound cost the 3-tier
/// bench 5% more instructions).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn place<const UNIT: bool>(
    t: &mut Tier,
    g: &mut Segments,
    s: &mut Store,
    k: usize,
    last: bool,
    slot: Option<u32>,
    key: u64,
    size: u32,
    dirty: bool,
    mut queue: impl FnMut(Victim),
) {
    let mut b = t.books();
    debug_assert!(
        !UNIT || b.charge(size) == 1,
        "UNIT for a tier that counts bytes"
    );
    let charge = if UNIT { 1 } else { b.charge(size) };
    let mut reuse = None;
    if b.overflows(charge) {
        loop {
            let v = g.evict_tail(k);
            let victim = b.evicted(s, v, !last, false, &mut reuse);
            // Every victim above the last tier moves down; of the last
            // tier's, the dirty ones are written back.
            if victim.dirty || !last {
                queue(victim);
            }
            // A unit-charged tier is never over its capacity: one made room.
            if UNIT || !b.overflows(charge) {
                break;
            }
        }
        prefetch_next_victims(g, s, k, last);
    }
    let slot = b.filled(s, slot, key, size, dirty, charge, reuse);
    g.join_front(k, slot);
}

/// Starts loading what the next evictions from tier `k` will touch (as
/// `Insert::call` does through `victim_hint`).
#[inline(always)]
fn prefetch_next_victims(g: &Segments, s: &Store, k: usize, last: bool) {
    let next = g.tail[k];
    if next == NIL {
        return;
    }
    g.prefetch(next);
    if last {
        s.prefetch_removal(s.key_of(next));
    }
    if next != g.head[k] {
        let after = g.link(next)[0];
        if after != NIL {
            g.prefetch(after);
            s.prefetch_entry(after);
        }
    }
}
