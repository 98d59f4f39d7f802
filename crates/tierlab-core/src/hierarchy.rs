//! Tiers from fastest to slowest above a backing store that always hits, and
//! the rules that move data between them (docs/hierarchy.md says the same):
//!
//! | fill | miss in tier i, found lower | eviction from tier i |
//! |---|---|---|
//! | inclusive | filled into every tier above where it was found | dropped; dirty data written to i+1 |
//! | exclusive | moved up into tier 0 only | moved down into tier i+1 |
//!
//! Writes allocate in tier 0 without reading the object from below (a write
//! replaces the whole object). A write-back tier keeps it dirty until it is
//! evicted or flushed; a write-through tier passes the write down at once. A
//! delete invalidates the key everywhere. Every byte that reaches the backing
//! store is counted.
//!
//! Every placement of an object a tier does not hold asks that tier's
//! admission policy first (`insert_at`; admission/mod.rs). A refused object
//! is handled as one too large for the tier: a fill or a clean demotion is
//! simply not made, a dirty demotion goes on to the backing store, a
//! refused write allocation in tier 0 is written down (as write-through),
//! and an exclusive promotion refused by tier 0 leaves the object where it
//! was. No data is lost.
//!
//! The tiers of an exclusive hierarchy share one [`Store`] (tier/store.rs): one
//! probe finds a key at any depth, and a promotion or demotion changes the
//! policies' lists and the entry's tier, not the index. An inclusive
//! hierarchy gives each tier its own store.
//!
//! How the tiers keep their order is one choice, made once in
//! [`Hierarchy::new`] from the tiers (`Path`): each tier's own policy; or,
//! when every tier of an exclusive hierarchy is LRU or FIFO, segments of
//! one list (segments.rs), where a demotion moves a boundary, not an
//! entry; if every such tier also admits everything, reads and demotions
//! skip the admission and dispatch steps that cannot apply (lean.rs), and
//! if they also count objects, a read's fill and its chain of demotions
//! run as one loop without the pending queue (lean.rs). Every path
//! inserts through the same rules (`Insert::call`, tier/insert.rs), and
//! the rules above do not change: tests/hierarchy_props.rs runs each fast
//! path against the per-tier one request by request.
//!
//! Data on its way down (write-through, inclusive write-back, periodic
//! flushes) and the backing store's books live in writeback.rs.

mod devices;
mod lean;
pub mod ops;
mod segments;
mod writeback;

use crate::cost::AccessCost;
use crate::index::SlotIndex;
use crate::policy::Policy;
use crate::request::{Op, Request};
use crate::tier::{Store, Tier, Victim};
use ops::{OpKind, OpLog};
use segments::Segments;
use serde::{Deserialize, Serialize};
use writeback::{leave_tier, write_backing};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fill {
    Inclusive,
    /// A victim hierarchy (S2's extended buffer cache, ZFS L2ARC).
    #[default]
    Exclusive,
}

/// The store below the last tier: it holds everything.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BackingCounters {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Those reads and writes in the medium's access units, each rounded
    /// up (device/energy.rs).
    pub pages_read: u64,
    pub pages_written: u64,
}

/// Whole-run counters (the per-tier ones live in each tier).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Totals {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub deletes: u64,
    /// Reads and writes found in no tier.
    pub misses: u64,
    pub bytes_requested: u64,
    pub bytes_missed: u64,
    /// Sum of request latencies (ns).
    pub access_time_ns: f64,
    /// Time spent by periodic flushes (background: not in any request's latency).
    pub flush_time_ns: f64,
    pub flushes: u64,
}

/// How the tiers keep their order and how a read's insertions run, chosen
/// once in [`Hierarchy::new`] (`Path::choose`). Each is exact: the same
/// events in the same order, so the same slots, counts and floating-point
/// sums, as `PerTier`. A byte, apart from the segments it may use (in
/// `Hierarchy::segments`): matching an enum that held them cost the 3-tier
/// bench 2.7% more instructions (the niche-encoded tag is decoded on every
/// request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Each tier's own policy orders its entries: any policies, inclusive
    /// or exclusive.
    PerTier,
    /// Exclusive, every tier LRU or FIFO: one list over the shared store,
    /// each tier a segment of it (segments.rs). A demotion moves a
    /// boundary: 15% fewer cycles on the 3-tier bench (sixth session,
    /// docs/notes/engineering.md).
    Segments,
    /// Segments, and every tier admits everything: reads and demotions
    /// insert through `lean_insert` (lean.rs), which asks no admission
    /// policy and dispatches on no fill or path: 8% fewer instructions on
    /// a byte-sized 3-tier LRU/FIFO/LRU hierarchy than `Segments` (1.64G
    /// against 1.78G by callgrind, 3M Zipf requests, when the paths became
    /// this enum).
    Lean,
    /// Lean, and every tier counts objects: a read's fill and the chain of
    /// demotions it causes run as one loop with no queue (`lean_fill_unit`,
    /// lean.rs; -9% instructions, -11% cycles on the 3-tier bench, seventh
    /// session).
    UnitChain,
}

impl Path {
    /// The path for these tiers, and the one list of their order when the
    /// path keeps one.
    fn choose(tiers: &[Tier], fill: Fill) -> (Path, Option<Segments>) {
        let orders: Option<Vec<bool>> = tiers.iter().map(Tier::list_order).collect();
        let Some(orders) = orders.filter(|o| fill == Fill::Exclusive && o.len() > 1) else {
            return (Path::PerTier, None);
        };
        let g = Some(Segments::new(orders));
        if !tiers.iter().all(Tier::admits_all) {
            return (Path::Segments, g);
        }
        // Unit charges: one eviction per insertion, so a chain with no queue.
        if tiers.iter().all(|t| t.counts_objects() && t.capacity >= 1) {
            (Path::UnitChain, g)
        } else {
            (Path::Lean, g)
        }
    }
}

pub struct Hierarchy {
    pub tiers: Vec<Tier>,
    /// One store shared by all tiers (exclusive), or one per tier (inclusive).
    stores: Vec<Store>,
    shared: bool,
    pub fill: Fill,
    pub backing_cost: AccessCost,
    pub backing: BackingCounters,
    /// The backing store's flash translation layer (`[backing] ftl` on
    /// raw flash): told of every write to the store (writeback.rs).
    pub backing_ftl: Option<Box<crate::device::ftl_space::BackingFtl>>,
    pub totals: Totals,
    /// Per-tier flush period in simulated ns (infinite when none).
    flush_every: Vec<f64>,
    /// Per-tier time of the next flush, and the earliest of them.
    flush_due: Vec<f64>,
    next_flush: f64,
    /// Per tier: a periodic flush writes back only entries dirty this long
    /// (ns; 0: all). None when no tier has an age or a dirty threshold:
    /// then the stores keep the plain dirty logs (writeback.rs). When Some,
    /// `next_flush` is -inf, so that every request ends in `flush`, which
    /// stamps the aged books with the time and runs the daemons that are
    /// due: the request path itself carries no test for the aged books.
    flush_age: Option<Vec<f64>>,
    /// Some tier writes back its oldest dirty entries past a threshold.
    dirty_limits: bool,
    /// Simulated clock: latencies plus compute time so far.
    pub clock_ns: f64,
    pub compute_ns: f64,
    pending: Vec<(usize, Victim)>,
    /// How the tiers keep their order (see the module doc).
    path: Path,
    /// The tiers' order as one list: there unless the path is `PerTier`.
    segments: Option<Segments>,
    /// The device operations of the current request, for the time layer
    /// (off in serial runs).
    pub ops: OpLog,
}

/// Whether a placement asks the tier's admission policy first, or places an
/// object the tier has already admitted (a promotion asked before the entry
/// left its tier; a write replacing an entry admitted when it entered).
#[derive(Clone, Copy)]
enum Admit {
    Ask,
    Already,
}

/// Where a request was found: a tier index, or `tiers.len()` for the backing store.
pub type Level = usize;

impl Hierarchy {
    pub fn new(
        tiers: Vec<Tier>,
        fill: Fill,
        backing_cost: AccessCost,
        flush_every: Vec<f64>,
        compute_ns: f64,
    ) -> Self {
        let next_flush = flush_every.iter().copied().fold(f64::INFINITY, f64::min);
        let shared = fill == Fill::Exclusive;
        let stores = if shared { 1 } else { tiers.len().max(1) };
        let (path, segments) = Path::choose(&tiers, fill);
        let mut stores: Vec<Store> = (0..stores).map(|_| Store::new()).collect();
        if next_flush.is_finite() {
            // Flushes visit the entries made dirty, not the whole index.
            stores.iter_mut().for_each(Store::track_dirty);
        }
        Hierarchy {
            flush_due: flush_every.clone(),
            tiers,
            stores,
            shared,
            fill,
            backing_cost,
            backing: BackingCounters::default(),
            backing_ftl: None,
            totals: Totals::default(),
            flush_every,
            next_flush,
            flush_age: None,
            dirty_limits: false,
            clock_ns: 0.0,
            compute_ns,
            pending: Vec::with_capacity(16),
            path,
            segments,
            ops: OpLog::default(),
        }
    }

    /// Write-back by age and by a dirty threshold, per tier (Linux 2.4's
    /// kupdate and bdflush; docs/hierarchy.md): `ages[j]`, the age in ns
    /// at which a periodic flush of tier j writes a dirty entry back (0:
    /// every dirty entry, as without ages); `limits[j]`, the dirty amount
    /// in the tier's charge units past which its oldest dirty entries are
    /// written back, in batches of the second number of entries, until it
    /// is at the limit again. Call before the first
    /// request; without it (or with no age and no limit) flushes write
    /// every dirty entry.
    pub fn with_aged_writeback(mut self, ages: Vec<f64>, limits: Vec<Option<(u64, u64)>>) -> Self {
        assert_eq!(
            self.totals.requests, 0,
            "with_aged_writeback after requests"
        );
        assert_eq!(ages.len(), self.tiers.len());
        assert_eq!(limits.len(), self.tiers.len());
        if ages.iter().all(|&a| a == 0.0) && limits.iter().all(Option::is_none) {
            return self;
        }
        for s in &mut self.stores {
            s.track_aged();
        }
        for (j, l) in limits.iter().enumerate() {
            let unit = self.tiers[j].counts_objects();
            let sx = self.sx(j);
            if let Some(a) = self.stores[sx].aged_mut() {
                let (limit, batch) = l.unwrap_or((u64::MAX, 1));
                a.set_limit(j, limit, unit, batch);
            }
        }
        self.dirty_limits = limits.iter().any(Option::is_some);
        self.flush_age = Some(ages);
        self.next_flush = f64::NEG_INFINITY;
        self.stamp_aged();
        self
    }

    /// Sets the simulated clock (the time model, before each request).
    #[inline(always)]
    pub fn set_clock(&mut self, now_ns: f64) {
        self.clock_ns = now_ns;
        if self.flush_age.is_some() {
            self.stamp_aged();
        }
    }

    /// The time the aged books stamp entries made dirty with, from now on:
    /// the clock at the start of the next request (set after each request,
    /// after a delete, and when the time model sets the clock).
    #[cold]
    pub(crate) fn stamp_aged(&mut self) {
        let now = self.clock_ns;
        for s in &mut self.stores {
            if let Some(a) = s.aged_mut() {
                a.now = now;
            }
        }
    }

    /// Some store's tier is past its dirty threshold.
    #[inline(always)]
    fn over_dirty(&self) -> bool {
        self.stores.iter().any(|s| s.aged().is_some_and(|a| a.over))
    }

    /// Starts every counter over (the end of a warm-up); the tiers keep
    /// what they hold, the clock and flush schedule run on.
    pub fn reset_counters(&mut self) {
        self.totals = Totals::default();
        self.backing = BackingCounters::default();
        if let Some(f) = self.backing_ftl.as_deref_mut() {
            f.space.reset_counters();
        }
        for t in &mut self.tiers {
            t.c = Default::default();
            if let Some(f) = t.ftl.as_deref_mut() {
                f.reset_counters();
            }
        }
    }

    /// Drives LRU and FIFO tiers with their own per-tier lists, through the
    /// general paths, even where they could share one list (segments.rs)
    /// and chain their demotions (lean.rs): the reference the tests compare
    /// those with. Call before the first request.
    pub fn without_segments(mut self) -> Self {
        assert_eq!(self.totals.requests, 0, "without_segments after requests");
        self.path = Path::PerTier;
        self.segments = None;
        self
    }

    /// Whether the tiers' order is kept as one list (see the module doc).
    pub fn uses_segments(&self) -> bool {
        self.segments.is_some()
    }

    /// The path chosen for these tiers: "per-tier", "segments", "lean" or
    /// "unit-chain" (see the module doc).
    pub fn path_name(&self) -> &'static str {
        match self.path {
            Path::PerTier => "per-tier",
            Path::Segments => "segments",
            Path::Lean => "lean",
            Path::UnitChain => "unit-chain",
        }
    }

    /// A hit in tier `j`: its order learns of it.
    #[inline(always)]
    fn touch(&mut self, j: usize, slot: u32, req: &Request) {
        match self.segments.as_mut() {
            Some(g) => g.at(j).on_hit(slot, req),
            None => self.tiers[j].touch(slot, req),
        }
    }

    /// Takes an entry out of tier `j`, keeping it in the (shared) store.
    #[inline(always)]
    fn detach(&mut self, j: usize, slot: u32) {
        let sx = self.sx(j);
        let s = &mut self.stores[sx];
        match self.segments.as_mut() {
            Some(g) => self.tiers[j].detach_with(&mut g.at(j), s, slot),
            None => self.tiers[j].detach(s, slot),
        }
    }

    /// Takes an entry out of tier `j` and drops it from the store.
    fn remove(&mut self, j: usize, slot: u32) -> Victim {
        let sx = self.sx(j);
        let s = &mut self.stores[sx];
        match self.segments.as_mut() {
            Some(g) => self.tiers[j].remove_with(&mut g.at(j), s, slot),
            None => self.tiers[j].remove(s, slot),
        }
    }

    /// The store tier `j`'s entries live in.
    #[inline(always)]
    fn sx(&self, j: usize) -> usize {
        if self.shared {
            0
        } else {
            j
        }
    }

    /// The store of tier `j` (shared by every tier of an exclusive hierarchy).
    pub fn store(&self, j: usize) -> &Store {
        &self.stores[self.sx(j)]
    }

    /// The slot of `key` if tier `j` holds it.
    pub fn lookup(&self, j: usize, key: u64) -> Option<u32> {
        self.tiers[j].lookup(self.store(j), key)
    }

    /// Whether tier `j` holds `key`.
    pub fn holds(&self, j: usize, key: u64) -> bool {
        self.lookup(j, key).is_some()
    }

    /// (size, dirty) of `key` in tier `j`, if held.
    pub fn entry(&self, j: usize, key: u64) -> Option<(u32, bool)> {
        let s = self.store(j);
        self.lookup(j, key)
            .map(|slot| (s.size_of(slot), s.is_dirty(slot)))
    }

    /// Every (key, size, dirty) tier `j` holds, in table order.
    pub fn entries(&self, j: usize) -> impl Iterator<Item = (u64, u32, bool)> + '_ {
        // Tier j records itself as level j in its store.
        let s = self.store(j);
        s.iter_tier(j)
            .map(move |(k, slot)| (k, s.size_of(slot), s.is_dirty(slot)))
    }

    /// First stage of prefetching for a later request: the bucket of tier 0
    /// (of every tier, when they share a store).
    #[inline(always)]
    pub fn prefetch_top(&self, key: u64) {
        self.stores[0].prefetch(key);
    }

    /// Second stage, some requests later, when that bucket has arrived. A
    /// shared store: the entry, which tells the tier. Separate stores: if the
    /// key is not in tier 0 (as things stand now), the lower tiers will be
    /// probed, so start loading their buckets. Prefetching every tier for
    /// every request instead wastes memory bandwidth on lower-tier buckets
    /// that a tier-0 hit never reads.
    #[inline(always)]
    pub fn prefetch_below(&self, key: u64) {
        if self.tiers.len() > 1 {
            let h = SlotIndex::hash(key);
            if self.shared {
                if let Some(s) = self.stores[0].get_hashed(key, h) {
                    self.stores[0].prefetch_entry(s);
                    // One list for every tier: its links, whatever the tier.
                    if let Some(g) = self.segments.as_ref() {
                        g.prefetch(s);
                    }
                }
            } else if self.stores[0].get_hashed(key, h).is_none() {
                for s in &self.stores[1..] {
                    s.prefetch_hashed(h);
                }
            }
        }
    }

    /// Runs one request through the hierarchy; returns where it was found
    /// (`None` for a delete) and its latency in ns.
    ///
    /// One compiled copy, for callers outside the simulation loops (tests,
    /// tools). The loops (run/tiers.rs, run/curve_sizes.rs) call `access_inlined`: every call
    /// of that inlines the whole engine, and tests/hierarchy_props.rs, with
    /// fifteen such calls, took 132 s of CI's build to compile (10 s now).
    #[inline(never)]
    pub fn access(&mut self, req: &Request) -> (Option<Level>, f64) {
        self.access_inlined(req)
    }

    /// `access`, inlined into the loop that calls it.
    #[inline(always)]
    pub(crate) fn access_inlined(&mut self, req: &Request) -> (Option<Level>, f64) {
        self.totals.requests += 1;
        if req.op == Op::Delete {
            self.totals.deletes += 1;
            self.invalidate(req.key);
            self.clock_ns += self.compute_ns;
            if self.flush_age.is_some() {
                self.stamp_aged();
            }
            return (None, 0.0);
        }
        let n = self.tiers.len();
        let size = req.size as u64;
        let is_write = req.op == Op::Write;
        self.totals.bytes_requested += size;
        if is_write {
            self.totals.writes += 1;
        } else {
            self.totals.reads += 1;
        }

        let mut level = n;
        let mut slot = 0;
        // One hash for the key, whichever tiers it is looked up in.
        let h = SlotIndex::hash(req.key);
        if self.shared {
            // One probe for every tier; the entry says which holds it.
            if let Some(s) = self.stores[0].get_hashed(req.key, h) {
                slot = s;
                level = if n == 1 { 0 } else { self.stores[0].tier_of(s) };
            }
            for t in &mut self.tiers[..level] {
                t.c.misses += 1;
                t.c.miss_bytes += size;
            }
            if let Some(t) = self.tiers.get_mut(level) {
                t.c.hits += 1;
                t.c.hit_bytes += size;
            }
        } else {
            for (j, t) in self.tiers.iter_mut().enumerate() {
                if let Some(s) = self.stores[j].get_hashed(req.key, h) {
                    t.c.hits += 1;
                    t.c.hit_bytes += size;
                    level = j;
                    slot = s;
                    break;
                }
                t.c.misses += 1;
                t.c.miss_bytes += size;
            }
        }
        if level == n {
            self.totals.misses += 1;
            self.totals.bytes_missed += size;
        }

        let mut lat = if is_write {
            self.write_request(req, level, slot)
        } else {
            self.read_request(req, level, slot)
        };
        if !self.pending.is_empty() {
            lat += self.settle(req);
        }
        self.totals.access_time_ns += lat;
        self.clock_ns += lat + self.compute_ns;
        if self.clock_ns >= self.next_flush {
            self.flush(req);
        }
        (Some(level), lat)
    }

    /// A read found at `level` (`n`: nowhere). One copy for every path,
    /// which chooses how tier 0 takes the object: a copy per lean and
    /// other paths (a const generic) cost single-tier LRU 3% more
    /// instructions and the 3-tier bench 0.5%.
    #[inline(always)]
    fn read_request(&mut self, req: &Request, level: Level, slot: u32) -> f64 {
        let n = self.tiers.len();
        let mut lat;
        if level < n {
            let t = &mut self.tiers[level];
            lat = self
                .ops
                .note(level, OpKind::Read, req.size, t.cost.read(req.size));
            t.c.reads += 1;
            t.c.bytes_out += req.size as u64;
            t.c.pages_read += t.pages.of(req.size);
            if level == 0 {
                self.touch(0, slot, req);
                return lat;
            }
            let stored = self.store(level).size_of(slot);
            match self.fill {
                Fill::Exclusive => {
                    // The object moves up as stored (a read names no new size).
                    let up = Request {
                        size: stored,
                        ..*req
                    };
                    let now = self.clock_ns;
                    let top = &mut self.tiers[0];
                    // An object tier 0 cannot hold at all, or that its
                    // admission refuses, stays where it is: asked before the
                    // entry leaves tier `level`, so nothing is lost.
                    if !top.fits(stored) || !top.admits(&up, now) {
                        self.touch(level, slot, req);
                    } else {
                        // The entry keeps its slot in the shared store.
                        self.detach(level, slot);
                        self.tiers[level].c.promotions += 1;
                        let dirty = self.stores[0].is_dirty(slot);
                        // Tier 0 fits it (asked above), so it is placed.
                        let placed = match self.path {
                            Path::UnitChain => {
                                return self.lean_fill_unit(lat, Some(slot), &up, dirty)
                            }
                            Path::Lean => self.lean_insert(0, Some(slot), &up, dirty),
                            _ => self.insert_at(0, Some(slot), &up, dirty, Admit::Already),
                        };
                        debug_assert!(placed);
                        lat += self.ops.note(
                            0,
                            OpKind::Write,
                            stored,
                            self.tiers[0].cost.write(stored),
                        );
                    }
                }
                Fill::Inclusive => {
                    self.touch(level, slot, req);
                    for j in (0..level).rev() {
                        lat += self.place(j, req, false, Admit::Ask);
                    }
                }
            }
        } else {
            lat = self.ops.note_key(
                n,
                OpKind::Read,
                req.key,
                req.size,
                self.backing_cost.read(req.size),
            );
            self.backing.reads += 1;
            self.backing.bytes_read += req.size as u64;
            self.backing.pages_read += self.backing_cost.pages(req.size);
            match (self.fill, self.path) {
                (Fill::Exclusive, Path::UnitChain) => {
                    // Admitted without asking (it admits everything), and
                    // counted as `place` counts it; then the insertion and
                    // the demotions.
                    self.tiers[0].c.admitted += 1;
                    lat = self.lean_fill_unit(lat, None, req, false);
                }
                (Fill::Exclusive, Path::Lean) => lat += self.place_lean(req),
                (Fill::Exclusive, _) => lat += self.place(0, req, false, Admit::Ask),
                (Fill::Inclusive, _) => {
                    for j in (0..n).rev() {
                        lat += self.place(j, req, false, Admit::Ask);
                    }
                }
            }
        }
        lat
    }

    fn write_request(&mut self, req: &Request, level: Level, slot: u32) -> f64 {
        let n = self.tiers.len();
        if n == 0 {
            return self.backing_write(req.key, req.size);
        }
        let wb = self.tiers[0].write_back;
        let mut lat = 0.0;
        if level == 0 {
            // A write replaces the object: re-insert when its size changed.
            if self.stores[0].size_of(slot) != req.size {
                self.remove(0, slot);
                self.tiers[0].c.replaced += 1;
                // The key was admitted when it entered: not asked again.
                lat += self.place(0, req, wb, Admit::Already);
            } else {
                let t = &mut self.tiers[0];
                lat += self
                    .ops
                    .note(0, OpKind::Write, req.size, t.cost.write(req.size));
                t.c.writes += 1;
                t.c.bytes_in += req.size as u64;
                t.programmed(req.key, slot, req.size);
                self.touch(0, slot, req);
                if wb {
                    self.stores[0].set_dirty(slot, true);
                }
            }
        } else {
            if level < n && self.fill == Fill::Exclusive {
                self.remove(level, slot);
                self.tiers[level].c.promotions += 1;
            }
            lat += self.place(0, req, wb, Admit::Ask);
        }
        let in_top = self.holds(0, req.key);
        if !wb || !in_top {
            lat += self.write_down(1, req.key, req.size);
        }
        lat
    }

    /// Inserts into tier `j` (asking its admission policy unless `admit`
    /// says the object is admitted already), counting the write; victims go
    /// to `pending`. Returns the write's time, 0 if not placed.
    #[inline]
    fn place(&mut self, j: usize, req: &Request, dirty: bool, admit: Admit) -> f64 {
        if !self.insert_at(j, None, req, dirty, admit) {
            return 0.0;
        }
        self.ops.note(
            j,
            OpKind::Write,
            req.size,
            self.tiers[j].cost.write(req.size),
        )
    }

    /// Inserts into tier `j` unless its admission policy refuses the object
    /// (`Admit::Ask`; an object larger than the tier is not asked about:
    /// `insert` refuses it and counts it as `rejected`). `slot`: the entry's
    /// slot when it is already in the (shared) store, in no tier. Returns
    /// whether it was placed; the caller deals with an object that was not,
    /// as with one too large.
    #[inline(always)]
    fn insert_at(
        &mut self,
        j: usize,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
        admit: Admit,
    ) -> bool {
        match (self.segments.as_ref().is_some(), admit) {
            (true, Admit::Ask) => self.insert_at_as::<true>(j, slot, req, dirty),
            (false, Admit::Ask) => self.insert_at_as::<false>(j, slot, req, dirty),
            (true, Admit::Already) => self.insert_admitted_as::<true>(j, slot, req, dirty),
            (false, Admit::Already) => self.insert_admitted_as::<false>(j, slot, req, dirty),
        }
    }

    /// `insert_at` knowing whether the tiers are segments (`SEG`), so that
    /// a loop calling it (`settle_exclusive`) compiles one kind of list only.
    #[inline(always)]
    fn insert_at_as<const SEG: bool>(
        &mut self,
        j: usize,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
    ) -> bool {
        let now = self.clock_ns;
        let t = &mut self.tiers[j];
        if t.fits(req.size) && !t.admits(req, now) {
            return false;
        }
        self.insert_admitted_as::<SEG>(j, slot, req, dirty)
    }

    /// Inserts into tier `j` and queues its victims that move on: dirty ones,
    /// and in an exclusive hierarchy every one above the last tier (those
    /// keep their slot in the shared store until the tier below adopts or
    /// drops them). A clean victim that moves nowhere is simply dropped.
    /// `SEG`: the tiers are segments of one list (the caller has checked).
    #[inline(always)]
    fn insert_admitted_as<const SEG: bool>(
        &mut self,
        j: usize,
        slot: Option<u32>,
        req: &Request,
        dirty: bool,
    ) -> bool {
        let moves_clean = self.fill == Fill::Exclusive && j + 1 < self.tiers.len();
        let sx = self.sx(j);
        let pending = &mut self.pending;
        let (t, s) = (&mut self.tiers[j], &mut self.stores[sx]);
        let victims = |v: Victim| {
            if v.dirty || moves_clean {
                pending.push((j, v));
            }
        };
        let placed = if SEG {
            let Some(g) = self.segments.as_mut() else {
                unreachable!("SEG: the tiers are segments")
            };
            t.place_with::<_, false>(&mut g.at(j), s, slot, req, dirty, moves_clean, victims)
        } else {
            t.insert(s, slot, req, dirty, moves_clean, victims)
        };
        // With segments the victim's links are the tier below's too: the
        // eviction's hint has loaded them already.
        if placed && moves_clean && !SEG {
            // Tier j's next victim will be demoted into tier j+1: start
            // loading the policy state its insertion there will write.
            if let Some(v) = self.tiers[j].next_victim_hint() {
                self.tiers[j + 1].prefetch_slot(v);
            }
        }
        placed
    }

    /// Moves evicted entries down until nothing is pending, in eviction order.
    fn settle(&mut self, req: &Request) -> f64 {
        match (self.fill, self.path) {
            (Fill::Exclusive, Path::PerTier) => self.settle_exclusive::<false, false>(req.time),
            (Fill::Exclusive, Path::Segments) => self.settle_exclusive::<true, false>(req.time),
            (Fill::Exclusive, _) => self.settle_exclusive::<true, true>(req.time),
            (Fill::Inclusive, _) => self.settle_inclusive(),
        }
    }

    /// Exclusive: a victim above the last tier is demoted into the tier
    /// below; a dirty one of the last tier (the only ones queued there) is
    /// written to the backing store. One copy per kind of list (`SEG`: the
    /// tiers are segments), each apart from the inclusive half: the demotion
    /// loop is the 3-tier bench's hottest code, and compiled for one kind of
    /// list it runs 4% fewer instructions there (BENCHMARKS.md). `LEAN`
    /// (with `SEG`): the path is lean, and demotions take `lean_insert`.
    #[inline(never)]
    fn settle_exclusive<const SEG: bool, const LEAN: bool>(&mut self, time: u64) -> f64 {
        let mut lat = 0.0;
        let mut i = 0;
        while i < self.pending.len() {
            let (j, v) = self.pending[i];
            i += 1;
            let size = v.size;
            let Some(keep_dirty) = leave_tier(
                &mut self.tiers,
                &mut self.backing,
                &self.backing_cost,
                &mut self.backing_ftl,
                &mut self.ops,
                j,
                &v,
                &mut lat,
            ) else {
                continue;
            };
            let r = Request {
                key: v.key,
                size,
                op: Op::Read,
                time,
                pid: 0,
                next_access: -1,
            };
            let placed = if LEAN {
                // Every tier admits everything: counted, not asked.
                let below = &mut self.tiers[j + 1];
                if below.fits(size) {
                    below.c.admitted += 1;
                }
                // Victims above the last tier keep their slot (Tier::insert's
                // `keep`); knowing it is there spares the insertion a branch.
                let Some(slot) = v.kept_slot() else {
                    unreachable!("a victim above the last tier left the store")
                };
                self.lean_insert(j + 1, Some(slot), &r, keep_dirty)
            } else {
                self.insert_at_as::<SEG>(j + 1, v.kept_slot(), &r, keep_dirty)
            };
            if placed {
                lat += self.ops.note(
                    j + 1,
                    OpKind::Write,
                    size,
                    self.tiers[j + 1].cost.write(size),
                );
            } else {
                self.stores[0].discard(&v);
                if let (Some(g), Some(s)) = (self.segments.as_mut(), v.kept_slot()) {
                    g.discard(s);
                }
            }
            if v.dirty && !(placed && keep_dirty) {
                lat += self.backing_write(v.key, size);
            }
        }
        self.pending.clear();
        lat
    }

    fn invalidate(&mut self, key: u64) {
        if self.shared {
            if let Some(s) = self.stores[0].get(key) {
                let j = self.stores[0].tier_of(s);
                self.remove(j, s);
                self.tiers[j].c.invalidations += 1;
            }
            return;
        }
        for (t, st) in self.tiers.iter_mut().zip(&mut self.stores) {
            if let Some(s) = t.lookup(st, key) {
                t.remove(st, s);
                t.c.invalidations += 1;
            }
        }
    }
}
