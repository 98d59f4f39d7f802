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
    pub ftl: Ftl,
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
    pub overflow_pages: u64,
    /// Pages GC and levelling copied so far (each a read and a program):
    /// the time model charges them to the device with the erases.
    pub copies: u64,
}

impl FtlSpace {
    pub fn new(spec: FtlSpec, page: u64, trim: bool) -> Result<Self, FtlError> {
        let n = spec.logical_pages as usize;
        let ftl = Ftl::new(spec)?;
        Ok(FtlSpace {
            ftl,
            page: page.max(1),
            trim,
            objects: Vec::new(),
            next: vec![END; n],
            // Popped from the end: page 0 first.
            free: (0..n as u32).rev().collect(),
            overflow_pages: 0,
            copies: 0,
        })
    }

    pub fn page_bytes(&self) -> u64 {
        self.page
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
    pub fn write(&mut self, key: u64, slot: u32, size: u32) {
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
            self.remove(slot);
        }
        self.take(key, slot, n);
    }

    /// Object `key` of `size` bytes entered the tier in store slot `slot`
    /// (a fill, a demotion received): it holds no pages here yet, so its
    /// record is not read.
    pub fn fill(&mut self, key: u64, slot: u32, size: u32) {
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
    pub fn remove(&mut self, slot: u32) {
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
    FtlSpace::new(spec, page, cfg.trim).map_err(|e| ("ftl.op", e.to_string()))
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
    BackingFtl::new(spec, page).map_err(|e| ("ftl.op", e.to_string()))
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
