//! A translation lookaside buffer: `entries` translations in sets of
//! `ways`, LRU within a set (the TLB replacement "Storage-class memory and
//! the page size" adopts). The entry count need not be a power of two: the
//! set is the tag modulo the number of sets.

use super::config::TlbConfig;
use crate::index::SlotIndex;

const EMPTY: u64 = u64::MAX;

/// Sets wider than this find a tag through an index (tag -> entry)
/// instead of scanning the set: a fully associative 64-entry TLB would
/// otherwise compare 64 tags on every miss.
const SCAN_WAYS: usize = 8;

/// The LRU order of each set is a ring of its entries, linked both ways:
/// `head` is the most recent entry, the one before it (`prev[head]`) the
/// least recent. A hit moves its entry to the head; a miss reuses the
/// least recent entry by turning the ring one step (no unlinking); an
/// invalidated entry moves to the tail, so an empty entry is always older
/// than every valid one.
pub struct Tlb {
    sets: u64,
    /// `sets` is a power of two: the set is the tag's low bits (no
    /// division; one set when fully associative).
    pow2: bool,
    ways: usize,
    tags: Vec<u64>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: Vec<u32>,
    /// Where each resident tag is, for sets wider than [`SCAN_WAYS`]
    /// (the tier's open-addressing table: a miss looks up, removes and
    /// inserts, a third of hashbrown's instructions for each).
    index: Option<SlotIndex>,
    /// The tag of the last lookup: it is its set's most recent entry, so a
    /// repeat is a hit that changes no order (most references repeat the
    /// page before them).
    last: u64,
    pub latency_ns: f64,
    pub hits: u64,
    pub misses: u64,
}

impl Tlb {
    /// (sets, ways) of a TLB of `c`.
    fn geometry(c: &TlbConfig) -> (usize, usize) {
        let ways = c.ways().max(1) as usize;
        ((c.entries as usize / ways).max(1), ways)
    }

    /// The index's capacity for `n` entries: at most an eighth full up to
    /// 256 entries (32 KiB of buckets at most; 8 KiB at 64), a quarter
    /// full above: short probe runs for the lookup and the backward shift
    /// of a removal, which every miss of a full TLB makes (a quarter full,
    /// the 64-entry TLB of the VM benchmark spent 9% more instructions
    /// probing), without doubling a large second level's table.
    fn index_capacity(n: usize) -> usize {
        if n <= 256 {
            4 * n
        } else {
            2 * n
        }
    }

    /// The bytes a TLB of `c` allocates (a tag and two ring links per
    /// entry, a head per set, the index of a wide set): what
    /// `config::memory` asks the allocator for before the run builds it.
    pub fn bytes(c: &TlbConfig) -> u64 {
        let (sets, ways) = Self::geometry(c);
        let n = (sets * ways) as u64;
        let index = if ways > SCAN_WAYS {
            SlotIndex::bytes_with_capacity(Self::index_capacity(n as usize))
        } else {
            0
        };
        n * (8 + 4 + 4) + sets as u64 * 4 + index
    }

    pub fn new(c: &TlbConfig) -> Self {
        let (sets, ways) = Self::geometry(c);
        let n = sets * ways;
        // Each set's ring in slot order: base, base + 1, ..., back to base.
        let next = (0..n)
            .map(|i| {
                (if (i + 1) % ways == 0 {
                    i + 1 - ways
                } else {
                    i + 1
                }) as u32
            })
            .collect();
        let prev = (0..n)
            .map(|i| (if i % ways == 0 { i + ways - 1 } else { i - 1 }) as u32)
            .collect();
        Tlb {
            sets: sets as u64,
            pow2: sets.is_power_of_two(),
            ways,
            tags: vec![EMPTY; n],
            prev,
            next,
            head: (0..sets).map(|s| (s * ways) as u32).collect(),
            index: (ways > SCAN_WAYS).then(|| SlotIndex::with_capacity(Self::index_capacity(n))),
            last: EMPTY,
            latency_ns: c.latency_ns.0,
            hits: 0,
            misses: 0,
        }
    }

    #[inline(always)]
    fn set(&self, tag: u64) -> usize {
        if self.pow2 {
            (tag & (self.sets - 1)) as usize
        } else {
            (tag % self.sets) as usize
        }
    }

    /// The entry holding `tag` in set `set`, if any.
    #[inline(always)]
    fn find(&self, set: usize, tag: u64) -> Option<usize> {
        match &self.index {
            Some(m) => m.get(tag).map(|s| s as usize),
            None => {
                let base = set * self.ways;
                self.tags[base..base + self.ways]
                    .iter()
                    .position(|&t| t == tag)
                    .map(|w| base + w)
            }
        }
    }

    #[inline(always)]
    fn unlink(&mut self, s: usize) {
        let (p, n) = (self.prev[s], self.next[s]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
    }

    /// Links `s` just before `h` (between the tail and the head).
    #[inline(always)]
    fn link_before(&mut self, h: usize, s: usize) {
        let p = self.prev[h];
        self.prev[s] = p;
        self.next[s] = h as u32;
        self.next[p as usize] = s as u32;
        self.prev[h] = s as u32;
    }

    /// The tag of the last lookup, still resident (else none).
    #[inline(always)]
    pub fn last(&self) -> u64 {
        self.last
    }

    /// A repeat of [`Tlb::last`]: a hit that changes no order.
    #[inline(always)]
    pub fn repeat(&mut self) {
        self.hits += 1;
    }

    /// `n` repeats of [`Tlb::last`].
    #[inline(always)]
    pub fn repeat_n(&mut self, n: u64) {
        self.hits += n;
    }

    /// Looks `tag` up; a miss installs it over its set's LRU entry.
    /// Returns whether it hit.
    #[inline]
    pub fn access(&mut self, tag: u64) -> bool {
        if tag == self.last {
            self.repeat();
            return true;
        }
        self.last = tag;
        let set = self.set(tag);
        let h = self.head[set] as usize;
        if let Some(s) = self.find(set, tag) {
            self.hits += 1;
            if s != h {
                self.unlink(s);
                self.link_before(h, s);
                self.head[set] = s as u32;
            }
            return true;
        }
        self.misses += 1;
        // The tail becomes the head: one turn of the ring.
        let victim = self.prev[h] as usize;
        let old = std::mem::replace(&mut self.tags[victim], tag);
        if let Some(m) = &mut self.index {
            if old != EMPTY {
                m.remove(old);
            }
            m.insert(tag, victim as u32);
        }
        self.head[set] = victim as u32;
        false
    }

    /// Drops `tag`'s translation (its page left memory: a shootdown).
    pub fn invalidate(&mut self, tag: u64) {
        if self.last == tag {
            self.last = EMPTY;
        }
        let set = self.set(tag);
        let Some(s) = self.find(set, tag) else {
            return;
        };
        self.tags[s] = EMPTY;
        if let Some(m) = &mut self.index {
            m.remove(tag);
        }
        let h = self.head[set] as usize;
        if s == h {
            // The head's successor becomes the head: `s` is the tail.
            self.head[set] = self.next[s];
        } else {
            self.unlink(s);
            self.link_before(h, s);
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
    fn bytes_are_what_new_allocates() {
        for (entries, ways) in [
            (64, 64),
            (64, 4),
            (1000, 8),
            (4096, 4096),
            (1 << 20, 1 << 20),
        ] {
            let c = TlbConfig {
                entries,
                ways: Some(ways),
                latency_ns: Nanos(0.0),
            };
            let t = Tlb::new(&c);
            let index = t.index.as_ref().map_or(0, |m| m.bytes());
            let held = t.tags.capacity() * 8
                + (t.prev.capacity() + t.next.capacity() + t.head.capacity()) * 4
                + index;
            assert_eq!(
                Tlb::bytes(&c),
                held as u64,
                "{entries} entries, {ways} ways"
            );
        }
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

    /// The model the rings must match: each set a list, most recent first.
    struct Naive {
        sets: Vec<Vec<u64>>,
        ways: usize,
    }

    impl Naive {
        fn access(&mut self, tag: u64) -> bool {
            let n = self.sets.len() as u64;
            let set = &mut self.sets[(tag % n) as usize];
            let hit = match set.iter().position(|&t| t == tag) {
                Some(i) => {
                    set.remove(i);
                    true
                }
                None => {
                    set.truncate(self.ways - 1);
                    false
                }
            };
            set.insert(0, tag);
            hit
        }

        fn invalidate(&mut self, tag: u64) {
            let n = self.sets.len() as u64;
            self.sets[(tag % n) as usize].retain(|&t| t != tag);
        }
    }

    #[test]
    fn rings_and_the_index_are_lru_within_a_set() {
        // Scanned sets (ways <= 8) and indexed ones, one set or many.
        for (entries, ways) in [(1, 1), (4, 1), (6, 2), (8, 8), (64, 64), (48, 16), (30, 10)] {
            let mut t = tlb(entries, ways);
            let mut m = Naive {
                sets: vec![Vec::new(); (entries / ways) as usize],
                ways: ways as usize,
            };
            let mut x = 0x9E37_79B9_7F4A_7C15_u64 ^ entries as u64;
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let tag = x % (entries as u64 * 3);
                if x >> 60 == 0 {
                    t.invalidate(tag);
                    m.invalidate(tag);
                } else {
                    assert_eq!(t.access(tag), m.access(tag), "{entries}/{ways}: tag {tag}");
                }
            }
            assert!(t.hits > 0 && t.misses > 0);
        }
    }
}
