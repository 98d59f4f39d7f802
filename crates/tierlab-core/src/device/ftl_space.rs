//! A tier's objects as logical pages of its FTL. A cache tier names
//! objects by key, not by address: each object gets whole logical pages
//! from a free list when it enters and keeps them while it stays (an
//! overwrite reprograms the same logical pages, as a file system rewrites
//! a file's blocks in place); when it leaves, its pages return to the
//! free list and, with TRIM, are dropped from the FTL's map. Without
//! TRIM they stay valid to the FTL until reused, which is what makes
//! TRIM matter. The pages of one object are chained through `next`, so
//! nothing is allocated per request.

use super::ftl::{Ftl, FtlError, FtlSpec, Work};
use crate::hash::KeyMap;

const END: u32 = u32::MAX;

pub struct FtlSpace {
    pub ftl: Ftl,
    page: u64,
    trim: bool,
    heads: KeyMap<u32>,
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
            heads: KeyMap::default(),
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

    fn add(&mut self, w: Work) {
        self.copies += w.writes as u64;
    }

    /// Object `key` of `size` bytes was programmed into the tier (a fill,
    /// a write hit, a write-back received).
    pub fn write(&mut self, key: u64, size: u32) {
        let n = (size as u64).div_ceil(self.page).max(1) as u32;
        if let Some(&head) = self.heads.get(&key) {
            let mut len = 0;
            let mut p = head;
            while p != END {
                len += 1;
                p = self.next[p as usize];
            }
            if len == n {
                let mut p = head;
                while p != END {
                    let w = self.ftl.write(p as u64);
                    self.add(w);
                    p = self.next[p as usize];
                }
                return;
            }
            self.remove(key);
        }
        let mut head = END;
        for i in 0..n {
            match self.free.pop() {
                Some(p) => {
                    self.next[p as usize] = head;
                    head = p;
                    let w = self.ftl.write(p as u64);
                    self.add(w);
                }
                None => {
                    let p = crate::hash::fold_mul(key ^ i as u64) % self.next.len() as u64;
                    self.overflow_pages += 1;
                    let w = self.ftl.write(p);
                    self.add(w);
                }
            }
        }
        if head != END {
            self.heads.insert(key, head);
        }
    }

    /// Object `key` left the tier: its logical pages are free again
    /// (and trimmed, with TRIM).
    pub fn remove(&mut self, key: u64) {
        let Some(mut p) = self.heads.remove(&key) else {
            return;
        };
        while p != END {
            let nx = self.next[p as usize];
            self.next[p as usize] = END;
            if self.trim {
                self.ftl.trim(p as u64);
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

/// The FTL a tier's `ftl` key asks for, on `tech` with `capacity` bytes
/// of logical space; errors are (key, message) for the caller's path.
pub fn build(
    cfg: &super::ftl_spec::FtlConfig,
    tech: &crate::tech::Technology,
    capacity: u64,
    unit_size: bool,
    flashcache: bool,
) -> Result<FtlSpace, (&'static str, String)> {
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
    FtlSpace::new(spec, page, cfg.trim).map_err(|e| ("ftl.op", e.to_string()))
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
        s.write(7, 4096);
        assert_eq!(s.ftl.c.host_pages_written, 2);
        s.write(7, 4096);
        assert_eq!(s.ftl.c.host_pages_written, 4);
        assert_eq!(s.free.len(), 64 * 32 - 2);
        s.remove(7);
        assert_eq!(s.free.len(), 64 * 32);
        assert_eq!(s.ftl.c.trims, 2);
        // A size change takes new pages.
        s.write(8, 100);
        s.write(8, 5000);
        assert_eq!(s.free.len(), 64 * 32 - 3);
        let mut no = space(false);
        no.write(1, 2048);
        no.remove(1);
        assert_eq!(no.ftl.c.trims, 0);
    }

    #[test]
    fn a_cache_churning_through_its_space_garbage_collects() {
        let mut s = space(true);
        let mut rng = crate::rng::Rng::new(3);
        let mut live: Vec<u64> = Vec::new();
        for k in 0..20_000u64 {
            if live.len() >= 900 {
                let i = rng.below(live.len() as u64) as usize;
                s.remove(live.swap_remove(i));
            }
            s.write(k, 4096);
            live.push(k);
        }
        assert!(s.ftl.c.erases > 0);
        assert_eq!(s.copies, s.ftl.c.gc_pages_written + s.ftl.c.wl_pages_moved);
        assert_eq!(s.overflow_pages, 0);
        assert!(s.ftl.write_amplification() >= 1.0);
    }
}
