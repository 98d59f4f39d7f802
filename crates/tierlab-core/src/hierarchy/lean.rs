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
//! benchmark, BENCHMARKS.md).

use super::segments::{Segments, NIL};
use super::Hierarchy;
use crate::request::Request;
use crate::tier::Store;

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
        let last = k + 1 == self.tiers.len();
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
        let mut b = t.books();
        let charge = b.charge(size);
        let mut reuse = None;
        if b.overflows(charge) {
            while b.overflows(charge) {
                let v = g.evict_tail(k);
                let victim = b.evicted(s, v, !last, false, &mut reuse);
                // Every victim above the last tier moves down; of the last
                // tier's, the dirty ones are written back.
                if victim.dirty || !last {
                    self.pending.push((k, victim));
                }
            }
            prefetch_next_victims(g, s, k, last);
        }
        let slot = b.filled(s, slot, key, size, dirty, charge, reuse);
        g.join_front(k, slot);
        true
    }
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
