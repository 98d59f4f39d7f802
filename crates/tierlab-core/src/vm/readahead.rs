//! Swap-in read-ahead: how many pages a major fault reads with the
//! faulting page (`vm.read_ahead_mode`, `vm.read_ahead` the most).
//!
//! - `fixed`: always the whole aligned cluster of `read_ahead` pages, as
//!   "Issues in File Caching and Virtual Memory Paging with Fast SCM
//!   Storage" states it ("loads maximum 128 pages together").
//! - `adaptive`: Linux's swap-in read-ahead window, which sizes each
//!   cluster by how many read-ahead pages were used since the last one.
//!   The rule is that of Linux 3.14, mm/swap_state.c (`swapin_nr_pages`,
//!   the detector added by "swap: add a simple detector for inappropriate
//!   swapin readahead"; later kernels moved it into `__swapin_nr_pages`
//!   with the same arithmetic):
//!   1. hits = read-ahead pages found in the swap cache by a fault since
//!      the last window was chosen (Linux's `swapin_readahead_hits`,
//!      counted when a fault finds a page that read-ahead brought in and
//!      no one used yet), then reset to 0;
//!   2. with no hits the window is 2 pages if this fault's page is next to
//!      (one above or one below) the page of the last fault that had no
//!      hits, else 1 (the faulting page alone), and this fault's page is
//!      remembered for that test; with hits it is hits + 2 rounded up to a
//!      power of two, at least 4;
//!   3. it is capped at the maximum (Linux: 2^page_cluster; here
//!      `read_ahead`, a power of two in this mode);
//!   4. it never falls below half the previous window (a window shrinks
//!      by at most half per fault).
//!
//!   The window's pages are the aligned block of that many pages around
//!   the faulting one (Linux: offset & ~(window - 1)).
//!
//! Left out: Linux keeps one detector for the whole machine, over swap
//! offsets; here it is one per run (all processes share it, as in Linux)
//! over virtual page numbers, as the fixed cluster is (docs/vm.md,
//! Approximations). Linux 4.14's VMA-based read-ahead for non-rotating swap
//! devices places the same window by the fault's direction instead of
//! aligning it; not modelled.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ReadAheadMode {
    /// Every major fault reads its aligned cluster of `read_ahead` pages.
    #[default]
    Fixed,
    /// Linux's swap-in window, up to `read_ahead` pages.
    Adaptive,
}

impl ReadAheadMode {
    /// For serde: the default is left out of a written config.
    pub fn is_fixed(&self) -> bool {
        *self == ReadAheadMode::Fixed
    }
}

/// The read-ahead window of one run's pager.
#[derive(Clone, Debug)]
pub struct Window {
    max: u64,
    adaptive: bool,
    /// Read-ahead pages used since the last window was chosen.
    hits: u64,
    /// The page of the last fault that found no hits (None before any).
    prev: Option<u64>,
    /// The last window chosen, in pages (0 before any).
    last: u64,
    /// Read-ahead pages used over the run (first references to a page
    /// brought in by read-ahead).
    pub total_hits: u64,
}

impl Window {
    pub fn new(mode: ReadAheadMode, max: u32) -> Self {
        Window {
            max: max.max(1) as u64,
            adaptive: mode == ReadAheadMode::Adaptive,
            hits: 0,
            prev: None,
            last: 0,
            total_hits: 0,
        }
    }

    pub fn adaptive(&self) -> bool {
        self.adaptive
    }

    /// The most pages a fault reads (`read_ahead`).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// A page read ahead was referenced for the first time.
    #[inline]
    pub fn hit(&mut self) {
        self.hits += 1;
        self.total_hits += 1;
    }

    /// The pages a major fault on page `key` reads, itself included: its
    /// aligned block of this many pages.
    #[inline]
    pub fn pages(&mut self, key: u64) -> u64 {
        if !self.adaptive {
            return self.max;
        }
        let hits = std::mem::take(&mut self.hits);
        let mut w = if hits == 0 {
            let next_to = self.prev.is_some_and(|p| key.abs_diff(p) == 1);
            self.prev = Some(key);
            if next_to {
                2
            } else {
                1
            }
        } else {
            (hits + 2).next_power_of_two().max(4)
        };
        w = w.min(self.max).max(self.last / 2);
        self.last = w;
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adaptive(max: u32) -> Window {
        Window::new(ReadAheadMode::Adaptive, max)
    }

    /// An adaptive window of at most `max` pages after `hits` hits.
    fn with_hits(max: u32, hits: u32) -> Window {
        let mut w = adaptive(max);
        for _ in 0..hits {
            w.hit();
        }
        w
    }

    /// The windows of faults at `keys`, in turn.
    fn windows(w: &mut Window, keys: &[u64]) -> Vec<u64> {
        keys.iter().map(|&k| w.pages(k)).collect()
    }

    #[test]
    fn fixed_is_always_the_maximum() {
        let mut w = Window::new(ReadAheadMode::Fixed, 8);
        for k in [5, 900, 6, 7] {
            assert_eq!(w.pages(k), 8);
        }
        w.hit();
        assert_eq!(w.pages(1), 8);
        assert_eq!(w.total_hits, 1);
    }

    #[test]
    fn no_hits_and_no_neighbour_reads_one_page() {
        let keys = [100, 7, 5000, 42, 9];
        assert_eq!(windows(&mut adaptive(128), &keys), [1; 5]);
    }

    #[test]
    fn a_neighbour_of_the_last_fault_reads_two() {
        // Above and below count; after 2, 2 / 2 = 1 is the floor.
        assert_eq!(windows(&mut adaptive(128), &[10, 11, 10, 50]), [1, 2, 2, 1]);
    }

    #[test]
    fn hits_round_up_to_a_power_of_two_of_at_least_four() {
        for (hits, want) in [
            (1, 4),
            (2, 4),
            (3, 8),
            (6, 8),
            (7, 16),
            (30, 32),
            (200, 128),
        ] {
            assert_eq!(with_hits(128, hits).pages(1000), want, "{hits} hits");
        }
        // The hits are used once: the next fault without any starts over
        // (but not below half the last window).
        let w = &mut with_hits(128, 3);
        assert_eq!(windows(w, &[0, 500, 900, 1300]), [8, 4, 2, 1]);
    }

    #[test]
    fn capped_at_the_maximum() {
        assert_eq!(with_hits(4, 50).pages(3), 4);
        assert_eq!(windows(&mut with_hits(1, 1), &[3, 4]), [1, 1]);
    }

    #[test]
    fn a_window_whose_pages_are_all_used_doubles_up_to_the_maximum() {
        // A sequential reader uses every page read ahead before the next
        // fault: hits = window - 1, so the next window is the next power
        // of two up from window + 1.
        let mut w = adaptive(128);
        let mut seen = vec![];
        let mut key = 0;
        for _ in 0..10 {
            let n = w.pages(key);
            seen.push(n);
            for _ in 1..n {
                w.hit();
            }
            key += n;
        }
        assert_eq!(seen, vec![1, 2, 4, 8, 16, 32, 64, 128, 128, 128]);
    }
}
