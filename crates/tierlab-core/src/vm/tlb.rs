//! A translation lookaside buffer: `entries` translations in sets of
//! `ways`, LRU within a set (the TLB replacement "Storage-class memory and
//! the page size" adopts). The entry count need not be a power of two: the
//! set is the tag modulo the number of sets.

use super::config::TlbConfig;

const EMPTY: u64 = u64::MAX;

pub struct Tlb {
    sets: u64,
    ways: usize,
    tags: Vec<u64>,
    /// Last use of each entry; the smallest of a set is its LRU entry.
    stamps: Vec<u64>,
    clock: u64,
    /// The tag of the last lookup: it is its set's most recent entry, so a
    /// repeat is a hit that changes no order (most references repeat the
    /// page before them).
    last: u64,
    pub latency_ns: f64,
    pub hits: u64,
    pub misses: u64,
}

impl Tlb {
    pub fn new(c: &TlbConfig) -> Self {
        let ways = c.ways().max(1) as usize;
        let sets = (c.entries as usize / ways).max(1);
        Tlb {
            sets: sets as u64,
            ways,
            tags: vec![EMPTY; sets * ways],
            stamps: vec![0; sets * ways],
            clock: 0,
            last: EMPTY,
            latency_ns: c.latency_ns.0,
            hits: 0,
            misses: 0,
        }
    }

    #[inline(always)]
    fn set(&self, tag: u64) -> usize {
        (tag % self.sets) as usize * self.ways
    }

    /// Looks `tag` up; a miss installs it over its set's LRU entry.
    /// Returns whether it hit.
    #[inline]
    pub fn access(&mut self, tag: u64) -> bool {
        if tag == self.last {
            self.hits += 1;
            return true;
        }
        self.last = tag;
        self.clock += 1;
        let base = self.set(tag);
        let tags = &self.tags[base..base + self.ways];
        if let Some(w) = tags.iter().position(|&t| t == tag) {
            self.stamps[base + w] = self.clock;
            self.hits += 1;
            return true;
        }
        self.misses += 1;
        let stamps = &self.stamps[base..base + self.ways];
        // An empty entry has stamp 0, the oldest.
        let mut victim = 0;
        for (w, &s) in stamps.iter().enumerate() {
            if s < stamps[victim] {
                victim = w;
            }
        }
        self.tags[base + victim] = tag;
        self.stamps[base + victim] = self.clock;
        false
    }

    /// Drops `tag`'s translation (its page left memory: a shootdown).
    pub fn invalidate(&mut self, tag: u64) {
        if self.last == tag {
            self.last = EMPTY;
        }
        let base = self.set(tag);
        for w in base..base + self.ways {
            if self.tags[w] == tag {
                self.tags[w] = EMPTY;
                self.stamps[w] = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    fn tlb(entries: u32, ways: u32) -> Tlb {
        Tlb::new(&TlbConfig {
            entries,
            ways: Some(ways),
            latency_ns: Nanos(0.0),
        })
    }

    #[test]
    fn lru_within_a_set() {
        let mut t = tlb(2, 2);
        assert!(!t.access(1));
        assert!(!t.access(2));
        assert!(t.access(1));
        // 2 is the LRU entry now.
        assert!(!t.access(3));
        assert!(t.access(1));
        assert!(!t.access(2));
        assert_eq!((t.hits, t.misses), (2, 4));
    }

    #[test]
    fn sets_split_tags_and_entries_need_not_be_powers_of_two() {
        // 3 sets of 2 ways: tags 0, 3, 6 share set 0.
        let mut t = tlb(6, 2);
        for k in [0, 3, 6] {
            assert!(!t.access(k));
        }
        assert!(!t.access(0), "0 was set 0's LRU entry");
        // Set 1 is empty: 1 misses, then hits, while set 0 keeps its two.
        assert!(!t.access(1));
        assert!(t.access(1));
        assert!(t.access(6));
        assert!(t.access(0));
        t.invalidate(0);
        assert!(!t.access(0));
        assert_eq!(t.misses, 6);
    }
}
