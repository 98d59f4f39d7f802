//! Data on its way down: write-back of dirty data (a write passed on from
//! a write-through tier, a dirty victim of an inclusive hierarchy, the
//! flush daemons: periodic, by age, by a dirty threshold) and the backing
//! store's books. Apart from the read and
//! write paths in hierarchy.rs, which call into it; the exclusive demotion
//! loop (`settle_exclusive`) stays there, beside the insertions it drives,
//! and reaches the backing store through `leave_tier` and `write_backing`
//! here, as the lean paths (lean.rs) do.

use super::ops::{OpKind, OpLog};
use super::{Admit, BackingCounters, Fill, Hierarchy};
use crate::cost::AccessCost;
use crate::device::ftl_space::BackingFtl;
use crate::request::{Op, Request};
use crate::tier::{Tier, Victim};

impl Hierarchy {
    /// Writes data down from level `j`: in an inclusive hierarchy to the first
    /// lower tier (allocating there if needed) and on through write-through
    /// tiers; in an exclusive one lower tiers never hold the key, so straight
    /// to the backing store.
    pub(super) fn write_down(&mut self, mut j: usize, key: u64, size: u32) -> f64 {
        let n = self.tiers.len();
        if self.fill == Fill::Exclusive {
            j = n;
        }
        let mut lat = 0.0;
        while j < n {
            let t = &mut self.tiers[j];
            let st = &mut self.stores[j];
            let wb = t.write_back;
            let w = t.cost.write(size);
            let held = t.lookup(st, key);
            if let Some(s) = held.filter(|&s| st.size_of(s) == size) {
                lat += self.ops.note(j, OpKind::Write, size, w);
                t.c.writes += 1;
                t.c.bytes_in += size as u64;
                t.programmed(key, s, size);
                if wb {
                    st.set_dirty(s, true);
                    return lat;
                }
            } else {
                // Absent, or held at another size: the written object
                // replaces the stale copy, so the bytes below add up.
                if let Some(s) = held {
                    t.remove(st, s);
                    t.c.replaced += 1;
                }
                let r = Request {
                    key,
                    size,
                    op: Op::Write,
                    ..Default::default()
                };
                if self.insert_at(j, None, &r, wb, Admit::Ask) {
                    lat += self.ops.note(j, OpKind::Write, size, w);
                    if wb {
                        return lat;
                    }
                }
            }
            j += 1;
        }
        lat + self.backing_write(key, size)
    }

    pub(super) fn backing_write(&mut self, key: u64, size: u32) -> f64 {
        write_backing(
            &mut self.backing,
            &self.backing_cost,
            &mut self.backing_ftl,
            &mut self.ops,
            self.tiers.len(),
            key,
            size,
        )
    }

    /// Inclusive: only dirty victims are queued; their data is written down.
    pub(super) fn settle_inclusive(&mut self) -> f64 {
        let mut lat = 0.0;
        let mut i = 0;
        while i < self.pending.len() {
            let (j, v) = self.pending[i];
            i += 1;
            debug_assert!(v.dirty);
            let t = &mut self.tiers[j];
            t.c.bytes_out += v.size as u64;
            t.c.writebacks += 1;
            lat += self.write_down(j + 1, v.key, v.size);
        }
        self.pending.clear();
        lat
    }

    /// The flush daemons: every tier whose flush period has come writes
    /// back its dirty entries, all of them (`flush_age` 0) or those dirty
    /// for `flush_age` or longer, oldest first (Linux 2.4's kupdate); and
    /// every tier whose dirty amount is past its threshold writes back its
    /// oldest dirty entries until it is at the threshold again (bdflush).
    /// Background work: its time is kept apart from request latencies.
    #[cold]
    pub(super) fn flush(&mut self, req: &Request) {
        let now = self.clock_ns;
        let mut lat = 0.0;
        self.ops.set_background(true);
        for j in 0..self.tiers.len() {
            let sx = self.sx(j);
            // The age the periodic flush wrote back to, if it ran.
            let mut cutoff = None;
            if now >= self.flush_due[j] {
                let dirty = match self.flush_age.as_ref() {
                    None => {
                        let dirty = self.stores[sx].take_dirty(j);
                        debug_assert_eq!(dirty, self.tiers[j].dirty_slots(&self.stores[sx]));
                        dirty
                    }
                    Some(ages) if ages[j] > 0.0 => {
                        cutoff = Some(now - ages[j]);
                        self.stores[sx].take_oldest(j, now - ages[j], None)
                    }
                    Some(_) => {
                        // Every dirty entry, in slot order as without ages.
                        let mut d = self.stores[sx].take_oldest(j, f64::INFINITY, None);
                        d.sort_unstable();
                        d
                    }
                };
                lat += self.write_back_slots(j, dirty);
                self.totals.flushes += 1;
                let every = self.flush_every[j];
                self.flush_due[j] = ((now / every).floor() + 1.0) * every;
            }
            if let Some((dirty, limit)) = self.stores[sx].aged().map(|a| a.dirty(j)) {
                if dirty > limit {
                    let oldest = self.stores[sx].take_oldest(j, f64::INFINITY, Some(dirty - limit));
                    lat += self.write_back_slots(j, oldest);
                }
                debug_assert!(self.aged_books_hold(j, cutoff));
            }
        }
        for s in &mut self.stores {
            if let Some(a) = s.aged_mut() {
                a.over = false;
            }
        }
        if !self.pending.is_empty() {
            lat += self.settle(req);
        }
        self.ops.set_background(false);
        self.totals.flush_time_ns += lat;
        self.next_flush = self.flush_due.iter().copied().fold(f64::INFINITY, f64::min);
    }

    /// Cleans the dirty entries in `slots` of tier `j` and writes their
    /// data down, in that order; their time.
    fn write_back_slots(&mut self, j: usize, slots: Vec<u32>) -> f64 {
        let sx = self.sx(j);
        let mut lat = 0.0;
        for s in slots {
            let st = &mut self.stores[sx];
            let (key, size) = (st.key_of(s), st.size_of(s));
            st.set_dirty(s, false);
            self.tiers[j].c.writebacks += 1;
            self.tiers[j].c.bytes_out += size as u64;
            lat += self.write_down(j + 1, key, size);
        }
        lat
    }

    /// The invariant of aged books after a flush of tier `j` (checked in
    /// debug builds; the whole-index scan is the reference): the live log
    /// items are exactly the tier's dirty entries, the dirty amount is
    /// theirs and within the limit, and when the periodic flush ran with
    /// an age, no entry dirty since `cutoff` or before is left.
    fn aged_books_hold(&self, j: usize, cutoff: Option<f64>) -> bool {
        let st = self.store(j);
        let Some(a) = st.aged() else {
            return true;
        };
        let dirty = self.tiers[j].dirty_slots(st);
        let (amount, limit) = a.dirty(j);
        let unit = self.tiers[j].counts_objects();
        let want: u64 = dirty
            .iter()
            .map(|&s| if unit { 1 } else { st.size_of(s) as u64 })
            .sum();
        let mut live = a.live_slots(j);
        live.sort_unstable();
        let age_ok = cutoff.is_none_or(|c| a.oldest(j).is_none_or(|at| at > c));
        live == dirty && amount == want && amount <= limit && age_ok
    }
}

/// The books of a queued victim `v` leaving tier `j` of an exclusive
/// hierarchy, as `settle_exclusive` and `lean_fill_unit` (lean.rs) handle
/// it: data out of tier j; from the last tier (only dirty victims are
/// queued there) a write to the backing store, its time added to `lat`,
/// and `None`; else the demotion counted in tier j+1, and whether that
/// tier keeps the data dirty (a write-through tier holds no dirty data:
/// the data goes on to the store).
// Fields of `Hierarchy` borrowed apart: lean.rs holds others at the call.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn leave_tier(
    tiers: &mut [Tier],
    backing: &mut BackingCounters,
    backing_cost: &AccessCost,
    backing_ftl: &mut Option<Box<BackingFtl>>,
    ops: &mut OpLog,
    j: usize,
    v: &Victim,
    lat: &mut f64,
) -> Option<bool> {
    let up = &mut tiers[j];
    up.c.bytes_out += v.size as u64;
    if v.dirty {
        up.c.writebacks += 1;
    }
    let Some(below) = tiers.get_mut(j + 1) else {
        let n = tiers.len();
        *lat += write_backing(backing, backing_cost, backing_ftl, ops, n, v.key, v.size);
        return None;
    };
    below.c.demotions += 1;
    Some(v.dirty && below.write_back)
}

/// A write of `size` bytes to the backing store: counted, and its time.
/// Apart from `Hierarchy` for callers that hold other fields of it borrowed
/// (lean.rs).
#[inline(always)]
pub(super) fn write_backing(
    c: &mut BackingCounters,
    cost: &AccessCost,
    ftl: &mut Option<Box<BackingFtl>>,
    ops: &mut OpLog,
    dev: usize,
    key: u64,
    size: u32,
) -> f64 {
    c.writes += 1;
    c.bytes_written += size as u64;
    c.pages_written += cost.pages(size);
    if let Some(f) = ftl {
        f.write(key, size);
    }
    ops.note_key(dev, OpKind::Write, key, size, cost.write(size))
}
