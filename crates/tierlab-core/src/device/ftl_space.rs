//! A tier's objects as logical pages of its FTL. A cache tier names
//! objects by key, not by address: each object gets whole logical pages
//! from a free list when it enters and keeps them while it stays (an
//! overwrite reprograms the same logical pages, as a file system rewrites
//! a file's blocks in place); when it leaves, its pages return to the
//! free list and, with TRIM, are dropped from the FTL's map. Without
//! TRIM they stay valid to the FTL until reused, which is what makes
//! TRIM matter. The pages of one object are chained through `next`, so
//! nothing is allocated per request.
//!
//! Objects are found by the tier's store slot, which an entry keeps while
//! it is in the tier (and across a move between the tiers of a shared
//! store): an array read where a map from keys took two cold probes per
//! departure (BENCHMARKS.md, the FTL's run cost).

use super::ftl::{Ftl, FtlError, FtlSpec};

const END: u32 = u32::MAX;

/// An object's pages: the chain's head (the page taken last), the page
/// after it (`END` for a one-page object) and the length. Most objects
/// are one or two pages (4 KiB on 2 KiB flash pages): kept here, their
/// pages are known without reading the chain, a cold line per departure.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pages {
    head: u32,
    second: u32,
    len: u32,
}

const NO_PAGES: Pages = Pages {
    head: END,
    second: END,
    len: 0,
};

pub struct FtlSpace {
    /// Read from outside through `ftl()`, which checks the queue is empty.
    ftl: Ftl,
    page: u64,
    trim: bool,
    /// Per store slot: the pages of the object in that slot (`NO_PAGES`:
    /// none in this tier).
    objects: Vec<Pages>,
    next: Vec<u32>,
    free: Vec<u32>,
    /// Pages written while no logical page was free (objects whose sizes
    /// round up to more pages than the capacity holds): written to a page
    /// picked from the key, shared with another object.
    overflow_pages: u64,
    /// Pages GC and levelling copied so far (each a read and a program):
    /// the time model charges them to the device with the erases.
    copies: u64,
    /// With `defer`, the tier's operations wait here, in order, and run
    /// when it fills or is flushed (`drain`). A serial run queues a batch
    /// of requests' worth and flushes at the batch's end: the FTL's work
    /// then runs apart from the cache's, and neither's lines evict the
    /// other's in the middle of its work (BENCHMARKS.md, the FTL's run
    /// cost). The operations and their order are the same, so every count
    /// is too.
    queue: Vec<Cmd>,
    defer: bool,
}

/// A queued operation: `write`, `fill` or `remove` of the object in
/// `slot`.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Write,
    Fill,
    Remove,
}

#[derive(Clone, Copy, Debug)]
struct Cmd {
    key: u64,
    slot: u32,
    size: u32,
    kind: Kind,
}

/// Operations a queue holds before it runs them: more than a batch of
/// requests (`source::setup::BATCH`, 4,096) makes in a tier on most runs
/// (a removal and a fill, and a write, per request), so it runs once a
/// batch; a batch that makes more (a flush writing many objects back)
/// runs it when full. 24 bytes each: 384 KiB a tier with an FTL,
/// allocated when a serial run first queues.
const QUEUE: usize = 16384;
/// How far ahead of its turn a queued operation's object record is asked
/// for; its pages' map entries at half the distance, their blocks at a
/// quarter (each address needs the line before it).
const AHEAD: usize = 8;

impl FtlSpace {
    pub fn new(spec: FtlSpec, page: u64, trim: bool) -> Result<Self, FtlError> {
        let n = spec.logical_pages as usize;
        let ftl = Ftl::new(spec)?;
        Ok(FtlSpace {
            ftl,
            page: page.max(1),
            trim,
            objects: Vec::new(),
            next: super::ftl::table(n, END, "object chain")?,
            // Popped from the end: page 0 first.
            free: {
                let mut f = super::ftl::table(n, 0u32, "free list")?;
                for (p, x) in f.iter_mut().rev().enumerate() {
                    *x = p as u32;
                }
                f
            },
            overflow_pages: 0,
            copies: 0,
            queue: Vec::new(),
            defer: false,
        })
    }

    pub fn page_bytes(&self) -> u64 {
        self.page
    }

    /// The FTL, for its counters and figures: nothing may wait in the
    /// queue (`flush` first).
    pub fn ftl(&self) -> &Ftl {
        debug_assert!(self.queue.is_empty(), "the FTL read with operations queued");
        &self.ftl
    }

    /// Pages GC and levelling have copied so far (`ftl`'s condition).
    pub fn copies(&self) -> u64 {
        debug_assert!(self.queue.is_empty(), "the FTL read with operations queued");
        self.copies
    }

    /// Pages written onto a shared page so far (`ftl`'s condition).
    pub fn overflow_pages(&self) -> u64 {
        debug_assert!(self.queue.is_empty(), "the FTL read with operations queued");
        self.overflow_pages
    }

    fn program(&mut self, lpn: u64) {
        let w = self.ftl.write(lpn);
        self.copies += w.writes as u64;
    }

    /// The page after `p` in object `o`'s chain (head, second, then the
    /// chain through `next`).
    #[inline(always)]
    fn after(&self, o: &Pages, p: u32) -> u32 {
        if p == o.head {
            o.second
        } else if o.len > 2 {
            self.next[p as usize]
        } else {
            END
        }
    }

    /// Object `key` of `size` bytes, in store slot `slot`, was programmed
    /// into the tier (a write hit, a write-back received): an object the
    /// tier may hold already.
    #[inline(always)]
    pub fn write(&mut self, key: u64, slot: u32, size: u32) {
        self.tell(Cmd {
            key,
            slot,
            size,
            kind: Kind::Write,
        });
    }

    /// Queues `c` (`defer`) or runs it now.
    #[inline(always)]
    fn tell(&mut self, c: Cmd) {
        if !self.defer {
            return self.run(c);
        }
        self.queue.push(c);
        if self.queue.len() == QUEUE {
            self.drain();
        }
    }

    #[inline(always)]
    fn run(&mut self, c: Cmd) {
        match c.kind {
            Kind::Write => self.write_now(c.key, c.slot, c.size),
            Kind::Fill => self.fill_now(c.key, c.slot, c.size),
            Kind::Remove => self.remove_now(c.slot),
        }
    }

    /// Runs the queued operations, in order.
    #[inline]
    pub fn flush(&mut self) {
        if !self.queue.is_empty() {
            self.drain();
        }
    }

    /// Whether operations wait in the queue (`queue`): on in a serial
    /// run, which flushes before it reads a counter; off under a time
    /// model, which reads the counters after each request.
    pub fn set_defer(&mut self, on: bool) {
        self.flush();
        if on && self.queue.capacity() == 0 {
            self.queue.reserve_exact(QUEUE);
        }
        self.defer = on;
    }

    /// Runs the queue, each operation's record and pages asked for a few
    /// operations ahead: their lines are random, and loaded one at a time
    /// each waited for its own.
    #[inline(never)]
    fn drain(&mut self) {
        let q = std::mem::take(&mut self.queue);
        for (i, c) in q.iter().enumerate() {
            if let Some(a) = q.get(i + AHEAD) {
                crate::index::prefetch(self.objects.as_ptr().wrapping_add(a.slot as usize));
            }
            if let Some(a) = q.get(i + AHEAD / 2) {
                self.prefetch_pages(a, false);
            }
            if let Some(a) = q.get(i + AHEAD / 4) {
                self.prefetch_pages(a, true);
            }
            self.run(*c);
        }
        self.queue = q;
        self.queue.clear();
    }

    /// Starts loading what command `a` will read of the FTL: the map
    /// entries (and blocks) of the pages it holds, which it rewrites
    /// (a write) or frees for the next fill to rewrite (a removal).
    #[inline(always)]
    fn prefetch_pages(&self, a: &Cmd, blocks: bool) {
        if matches!(a.kind, Kind::Fill) {
            return;
        }
        if let Some(o) = self.objects.get(a.slot as usize) {
            for p in [o.head, o.second] {
                if p == END {
                    break;
                }
                if blocks {
                    self.ftl.prefetch_page(p as u64);
                } else {
                    self.ftl.prefetch(p as u64);
                }
            }
        }
    }

    fn write_now(&mut self, key: u64, slot: u32, size: u32) {
        let n = (size as u64).div_ceil(self.page).max(1) as u32;
        let held = self.objects.get(slot as usize).copied().unwrap_or(NO_PAGES);
        if held.head != END {
            if held.len == n {
                // Both map entries on their way before the first program
                // waits for its own.
                if held.second != END {
                    self.ftl.prefetch(held.second as u64);
                }
                let mut p = held.head;
                while p != END {
                    self.program(p as u64);
                    p = self.after(&held, p);
                }
                return;
            }
            self.remove_now(slot);
        }
        self.take(key, slot, n);
    }

    /// Object `key` of `size` bytes entered the tier in store slot `slot`
    /// (a fill, a demotion received): it holds no pages here yet, so its
    /// record is not read.
    #[inline(always)]
    pub fn fill(&mut self, key: u64, slot: u32, size: u32) {
        self.tell(Cmd {
            key,
            slot,
            size,
            kind: Kind::Fill,
        });
    }

    fn fill_now(&mut self, key: u64, slot: u32, size: u32) {
        debug_assert_eq!(
            self.objects.get(slot as usize).copied().unwrap_or(NO_PAGES),
            NO_PAGES,
            "an object entering the tier holds no pages"
        );
        let n = (size as u64).div_ceil(self.page).max(1) as u32;
        self.take(key, slot, n);
    }

    /// Gives the object in `slot` `n` new pages and programs them.
    fn take(&mut self, key: u64, slot: u32, n: u32) {
        let mut o = NO_PAGES;
        // The chain through `next` is read only past an object's second
        // page: a one- or two-page object (most) writes none of it, a
        // random line less per fill.
        let chain = n > 2;
        for i in 0..n {
            match self.free.pop() {
                Some(p) => {
                    if chain {
                        self.next[p as usize] = o.head;
                    }
                    o.second = o.head;
                    o.head = p;
                    o.len += 1;
                    self.program(p as u64);
                }
                None => {
                    let p = crate::hash::fold_mul(key ^ i as u64) % self.next.len() as u64;
                    self.overflow_pages += 1;
                    self.program(p);
                }
            }
        }
        // Pages that overflowed are not the object's: it holds those taken
        // from the free list (none: it is not held, and its next write
        // takes pages again).
        if o.head != END {
            let at = slot as usize;
            if at >= self.objects.len() {
                self.objects.resize(at + 1, NO_PAGES);
            }
            self.objects[at] = o;
        }
    }

    /// The object in store slot `slot` left the tier: its logical pages
    /// are free again (and trimmed, with TRIM). A page's `next` is left
    /// as it is: it is set again when the page is taken.
    #[inline(always)]
    pub fn remove(&mut self, slot: u32) {
        self.tell(Cmd {
            key: 0,
            slot,
            size: 0,
            kind: Kind::Remove,
        });
    }

    fn remove_now(&mut self, slot: u32) {
        let Some(o) = self.objects.get_mut(slot as usize) else {
            return;
        };
        let o = std::mem::replace(o, NO_PAGES);
        let mut p = o.head;
        while p != END {
            let nx = self.after(&o, p);
            if self.trim {
                self.ftl.trim(p as u64);
            } else {
                // Last in, first out: the next object to enter takes this
                // page, and its program reads the page's map entry.
                self.ftl.prefetch(p as u64);
            }
            self.free.push(p);
            p = nx;
        }
    }

    /// The FTL's figures count from here (after warm-up); `copies` and
    /// the FTL's own counters run on for the time model.
    pub fn reset_counters(&mut self) {
        self.flush();
        self.ftl.reset_counters();
        self.overflow_pages = 0;
    }
}

/// The backing store's FTL (`[backing] ftl = { ... }` on raw flash). The
/// store holds every object, so its logical space (`backing.capacity`)
/// starts full: every logical page is written once, in order, before the
/// run (WA 1, no GC), and the counters start after that, as a store that
/// already holds the data set. An object takes logical pages on its first
/// write-back and keeps them (nothing leaves the store); objects are
/// numbered in the order they are first written (the store has no slots).
pub struct BackingFtl {
    pub space: FtlSpace,
    ids: crate::hash::KeyMap<u32>,
}

impl BackingFtl {
    pub fn new(spec: FtlSpec, page: u64) -> Result<Self, FtlError> {
        let n = spec.logical_pages;
        let mut space = FtlSpace::new(spec, page, false)?;
        for lpn in 0..n {
            space.ftl.write(lpn);
        }
        space.ftl.reset_counters();
        Ok(BackingFtl {
            space,
            ids: crate::hash::KeyMap::default(),
        })
    }

    /// `size` bytes of object `key` written to the store.
    pub fn write(&mut self, key: u64, size: u32) {
        let next = self.ids.len() as u32;
        let id = *self.ids.entry(key).or_insert(next);
        self.space.write(key, id, size);
    }
}

/// The FTL a tier's `ftl` key asks for, on `tech` with `capacity` bytes
/// of logical space; errors are (key, message) for the caller's path.
pub fn build(
    cfg: &super::ftl_spec::FtlConfig,
    tech: &crate::tech::Technology,
    capacity: u64,
    unit_size: bool,
    flashcache: bool,
) -> Result<FtlSpace, (&'static str, String)> {
    let (spec, page) = shape(cfg, tech, capacity, unit_size, flashcache)?;
    FtlSpace::new(spec, page, cfg.trim).map_err(|e| (e.key(), e.to_string()))
}

/// The FTL's shape and its page in bytes, or why not.
fn shape(
    cfg: &super::ftl_spec::FtlConfig,
    tech: &crate::tech::Technology,
    capacity: u64,
    unit_size: bool,
    flashcache: bool,
) -> Result<(FtlSpec, u64), (&'static str, String)> {
    if unit_size {
        return Err((
            "ftl",
            "an FTL maps bytes to flash pages: it needs capacities in bytes, not \
             workload.unit_size"
                .into(),
        ));
    }
    let spec = cfg
        .resolve(tech, capacity, flashcache)
        .map_err(|e| (e.key, e.msg))?;
    let page = match cfg.page {
        Some(crate::units::Size::Absolute(b)) => b,
        _ => tech.access_unit as u64,
    };
    Ok((spec, page))
}

/// The FTL `[backing] ftl` asks for, on `tech` with `capacity` bytes of
/// logical space; errors are (key, message) for the caller's path.
pub fn build_backing(
    cfg: &super::ftl_spec::FtlConfig,
    tech: &crate::tech::Technology,
    capacity: Option<u64>,
    unit_size: bool,
) -> Result<BackingFtl, (&'static str, String)> {
    if cfg.trim {
        return Err((
            "ftl.trim",
            "nothing leaves the backing store, so there is nothing to trim".into(),
        ));
    }
    let Some(capacity) = capacity else {
        return Err((
            "capacity",
            "an FTL on the backing store needs backing.capacity in bytes: its logical \
             space (the store holds the whole data set)"
                .into(),
        ));
    };
    let (spec, page) = shape(cfg, tech, capacity, unit_size, false)?;
    BackingFtl::new(spec, page).map_err(|e| (e.key(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ftl::Victim;

    fn space(trim: bool) -> FtlSpace {
        let spec = FtlSpec {
            logical_pages: 64 * 32,
            pages_per_block: 32,
            op: 0.2,
            victim: Victim::Greedy,
            dynamic_wl: true,
            static_wl: None,
            reserve_blocks: 2,
        };
        FtlSpace::new(spec, 2048, trim).unwrap()
    }

    #[test]
    fn objects_keep_their_pages_and_trim_frees_them() {
        let mut s = space(true);
        s.write(7, 3, 4096);
        assert_eq!(s.ftl.c.host_pages_written, 2);
        s.write(7, 3, 4096);
        assert_eq!(s.ftl.c.host_pages_written, 4);
        assert_eq!(s.free.len(), 64 * 32 - 2);
        s.remove(3);
        assert_eq!(s.free.len(), 64 * 32);
        assert_eq!(s.ftl.c.trims, 2);
        // Removing a slot that holds nothing changes nothing.
        s.remove(3);
        s.remove(1000);
        assert_eq!(s.free.len(), 64 * 32);
        // A size change takes new pages.
        s.write(8, 0, 100);
        s.write(8, 0, 5000);
        assert_eq!(s.free.len(), 64 * 32 - 3);
        let mut no = space(false);
        no.write(1, 0, 2048);
        no.remove(0);
        assert_eq!(no.ftl.c.trims, 0);
    }

    #[test]
    fn a_backing_store_starts_full_and_keeps_each_objects_pages() {
        let spec = space(false).ftl.spec().clone();
        let mut b = BackingFtl::new(spec, 2048).unwrap();
        // Every logical page written once, in order: nothing counted, no GC.
        assert_eq!(b.space.ftl.c.host_pages_written, 64 * 32);
        assert_eq!(b.space.ftl.counted().host_pages_written, 0);
        assert_eq!(b.space.ftl.c.erases, 0);
        b.write(42, 4096);
        b.write(42, 4096);
        b.write(7, 2048);
        assert_eq!(b.space.free.len(), 64 * 32 - 3);
        assert_eq!(b.space.ftl.counted().host_pages_written, 5);
        // A full space: random rewrites make GC copy.
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..20_000 {
            b.write(rng.below(900), 4096);
        }
        assert!(b.space.ftl.write_amplification() > 1.0);
        assert_eq!(b.space.overflow_pages, 0);
    }

    /// A random stream of a tier's operations: fills of objects not held,
    /// writes and removals of held ones, sizes of one to five pages.
    fn churn(
        s: &mut FtlSpace,
        seed: u64,
        ops: usize,
        mut between: impl FnMut(&mut FtlSpace, usize),
    ) {
        let mut rng = crate::rng::Rng::new(seed);
        let mut live: Vec<(u64, u32, u32)> = Vec::new();
        let mut free_slots: Vec<u32> = Vec::new();
        for k in 0..ops {
            let size = 2048 * (1 + rng.below(5) as u32) - rng.below(100) as u32;
            match rng.below(3) {
                0 if !live.is_empty() => {
                    let i = rng.below(live.len() as u64) as usize;
                    let (_, slot, _) = live.swap_remove(i);
                    s.remove(slot);
                    free_slots.push(slot);
                }
                1 if !live.is_empty() => {
                    let i = rng.below(live.len() as u64) as usize;
                    let (key, slot, _) = live[i];
                    // Half the writes keep the size (the same pages).
                    let size = if rng.below(2) == 0 { live[i].2 } else { size };
                    live[i].2 = size;
                    s.write(key, slot, size);
                }
                _ if live.len() < 500 => {
                    let slot = free_slots
                        .pop()
                        .unwrap_or(live.len() as u32 + free_slots.len() as u32);
                    s.fill(k as u64, slot, size);
                    live.push((k as u64, slot, size));
                }
                _ => {}
            }
            between(s, k);
        }
    }

    #[test]
    fn a_queue_changes_no_count() {
        for trim in [false, true] {
            let mut now = space(trim);
            churn(&mut now, 11, 60_000, |_, _| {});
            // Queued: flushed after 7 operations, and not again for 40,000
            // (more than the queue holds: it runs itself when full).
            let mut queued = space(trim);
            queued.set_defer(true);
            churn(&mut queued, 11, 60_000, |s, k| {
                if k == 7 || k == 40_007 {
                    s.flush();
                }
            });
            queued.flush();
            assert!(now.ftl().c.erases > 100, "GC ran");
            assert_eq!(queued.ftl().c, now.ftl().c);
            assert_eq!(queued.ftl().erase_counts(), now.ftl().erase_counts());
            assert_eq!(queued.copies(), now.copies());
            assert_eq!(queued.overflow_pages(), now.overflow_pages());
            assert_eq!(queued.objects, now.objects);
            assert_eq!(queued.free, now.free);
        }
    }

    #[test]
    fn turning_the_queue_off_runs_what_waits() {
        let mut s = space(true);
        s.set_defer(true);
        s.fill(1, 0, 4096);
        assert_eq!(s.ftl.c.host_pages_written, 0, "queued");
        s.set_defer(false);
        assert_eq!(s.ftl().c.host_pages_written, 2);
        s.fill(2, 1, 2048);
        assert_eq!(s.ftl().c.host_pages_written, 3, "at once");
    }

    #[test]
    fn a_cache_churning_through_its_space_garbage_collects() {
        let mut s = space(true);
        let mut rng = crate::rng::Rng::new(3);
        // (key, slot) of the objects held; slots reused as a store does.
        let mut live: Vec<(u64, u32)> = Vec::new();
        let mut free_slots: Vec<u32> = Vec::new();
        for k in 0..20_000u64 {
            if live.len() >= 900 {
                let i = rng.below(live.len() as u64) as usize;
                let (_, slot) = live.swap_remove(i);
                s.remove(slot);
                free_slots.push(slot);
            }
            let slot = free_slots.pop().unwrap_or(live.len() as u32);
            s.write(k, slot, 4096);
            live.push((k, slot));
        }
        assert!(s.ftl.c.erases > 0);
        assert_eq!(s.copies, s.ftl.c.gc_pages_written + s.ftl.c.wl_pages_moved);
        assert_eq!(s.overflow_pages, 0);
        assert!(s.ftl.write_amplification() >= 1.0);
    }
}
