//! The insertions of the lean paths (`Path::Lean`, `Path::UnitChain`):
//! exclusive, every tier LRU or FIFO (so the tiers are segments of one
//! list, segments.rs) and admitting every object. Reads (`read_request`)
//! and demotions (`settle_exclusive::<true, true>`) insert through
//! `lean_insert`: `Tier::place_with` driven by the tier's segment, with
//! no admission policy to ask and no per-tier policy to dispatch to.
//!
//! When every tier also counts objects (unit sizes), every entry is charged
//! 1, so an insertion evicts at most one entry (a full tier's last), and a
//! read's fill and the chain of demotions it causes need no queue: one
//! loop, each step an insertion through the same rules as every other path
//! (`Tier::place_with`, `Insert::call` in tier/insert.rs) with the tier's
//! segment as its order. The events, their order and every count and time
//! are the general path's (the segments proptest in tests/hierarchy_props.rs
//! compares the two request by request); only the queue is gone (-9%
//! instructions, -11% cycles on the 3-tier benchmark, docs/notes).

use super::ops::OpKind;
use super::{leave_tier, write_backing, Hierarchy, Path};
use crate::request::{Op, Request};

impl Hierarchy {
    /// `place(0, req, false, Admit::Ask)` of a lean path: a read that
    /// missed everywhere fills tier 0. Returns the write's time (0 if not
    /// placed).
    #[inline(always)]
    pub(super) fn place_lean(&mut self, req: &Request) -> f64 {
        let t = &mut self.tiers[0];
        // Admitted without asking; counted as the general path counts it.
        if t.fits(req.size) {
            t.c.admitted += 1;
        }
        if !self.lean_insert(0, None, req, false) {
            return 0.0;
        }
        self.ops.note(
            0,
            OpKind::Write,
            req.size,
            self.tiers[0].cost.write(req.size),
        )
    }

    /// `insert_admitted_as::<true>` into tier `k` of a lean path, without
    /// its checks of the fill and the path: `slot` is the entry's when it
    /// is in the store already (in no tier). Demotions come here from
    /// `settle_exclusive::<true, true>`. Returns whether it was placed.
    #[inline(always)]
    pub(super) fn lean_insert(
        &mut self,
        k: usize,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
    ) -> bool {
        let last = k + 1 == self.tiers.len();
        let Some(g) = self.segments.as_mut() else {
            unreachable!("a lean path has segments")
        };
        let pending = &mut self.pending;
        // Every victim above the last tier moves down; of the last tier's,
        // the dirty ones are written back.
        self.tiers[k].place_with::<_, false>(
            &mut g.at(k),
            &mut self.stores[0],
            slot,
            req,
            dirty,
            !last,
            |v| {
                if v.dirty || !last {
                    pending.push((k, v))
                }
            },
        )
    }

    /// The insertion of `req` into tier 0 (`slot`: the entry's, when it is
    /// in the store already, in no tier; `req.size`: the size it is stored
    /// at) and then the demotions that `settle_exclusive` would make after
    /// it. The same events in the same order, so the same slots, counts and
    /// floating-point sums. Returns the read's latency: `lat` (its time so
    /// far), plus tier 0's write, plus the time `settle` would have
    /// returned, summed in the order the general path sums them (`access`
    /// adds `settle`'s time last).
    ///
    /// One copy, called like `settle_exclusive`: inlined into both of its
    /// callers in the loop, the 3-tier bench ran 9% more cycles for 7%
    /// fewer instructions; as a call, 8% fewer cycles (BENCHMARKS.md).
    #[inline(never)]
    pub(super) fn lean_fill_unit(
        &mut self,
        lat: f64,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
    ) -> f64 {
        let n = self.tiers.len();
        debug_assert_eq!(self.path, Path::UnitChain);
        let Some(g) = self.segments.as_mut() else {
            unreachable!("a unit chain has segments")
        };
        let s = &mut self.stores[0];
        let mut victim = None;
        // Every victim above the last tier moves down; of the last tier's,
        // the dirty ones are written back.
        let last = n == 1;
        self.tiers[0].place_with::<_, true>(&mut g.at(0), s, slot, req, dirty, !last, |v| {
            if v.dirty || !last {
                victim = Some(v)
            }
        });
        let lat = lat
            + self.ops.note(
                0,
                OpKind::Write,
                req.size,
                self.tiers[0].cost.write(req.size),
            );
        let mut settled = 0.0;
        let mut j = 0;
        // As settle_exclusive handles each queued victim.
        while let Some(v) = victim.take() {
            let size = v.size;
            let Some(keep_dirty) = leave_tier(
                &mut self.tiers,
                &mut self.backing,
                &self.backing_cost,
                &mut self.backing_ftl,
                &mut self.ops,
                j,
                &v,
                &mut settled,
            ) else {
                break;
            };
            let below = &mut self.tiers[j + 1];
            // Unit charges fit every tier (`UnitChain` asks for capacities
            // of 1 or more), which admit everything: counted, not asked.
            below.c.admitted += 1;
            // Victims above the last tier keep their slot (`keep`); knowing
            // it is there spares the insertion its new-entry branch.
            let Some(slot) = v.kept_slot() else {
                unreachable!("a victim above the last tier left the store")
            };
            let r = Request {
                key: v.key,
                size,
                op: Op::Read,
                time: req.time,
                pid: 0,
                next_access: -1,
            };
            let last = j + 2 == n;
            below.place_with::<_, true>(
                &mut g.at(j + 1),
                s,
                Some(slot),
                &r,
                keep_dirty,
                !last,
                |v| {
                    if v.dirty || !last {
                        victim = Some(v)
                    }
                },
            );
            settled += self.ops.note(
                j + 1,
                OpKind::Write,
                size,
                self.tiers[j + 1].cost.write(size),
            );
            if v.dirty && !keep_dirty {
                settled += write_backing(
                    &mut self.backing,
                    &self.backing_cost,
                    &mut self.backing_ftl,
                    &mut self.ops,
                    n,
                    v.key,
                    size,
                );
            }
            j += 1;
        }
        lat + settled
    }
}
