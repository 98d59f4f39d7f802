//! The memory nodes of multilevel main memory (docs/tiered-memory.md):
//! main memory as ordered nodes, fastest first (node 0), each with its own
//! frames. A resident page lives in one frame of one node and is accessed
//! there in place.
//!
//! Kept here, for the model and for the migration policies to read: each
//! node's frames and free list, the page -> frame map (the node follows
//! from the frame), each frame's page, a referenced bit per frame with a
//! CLOCK hand per node (the victim order when a node must make room: the
//! kernel's inactive-list tail, approximated by second chance, as
//! vm/paging.rs approximates the LRU lists), the time each frame was made
//! inaccessible by a scan (hint faults, `linux` and `tpp`), and per-node
//! counters. [`Nodes::apply`] carries out what a policy asked for
//! ([`Moves`]), room permitting: the policy decides what, the nodes
//! decide whether there is room.

use super::migrate::{Move, Moves, Node};
use crate::hash::KeyMap;

pub use super::tiered_config::MAX_NODES;

/// No page in this frame.
const EMPTY: u64 = u64::MAX;

/// Per-node counts of what happened on it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeCounters {
    pub accesses: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes: u64,
    /// The references' access units read and written on this node (each
    /// access rounded up to whole units of its medium), and the bytes the
    /// writes among them carried: its energy and wear (device/).
    pub units_read: u64,
    pub units_written: u64,
    pub bytes_written: u64,
    /// Access time spent on this node (ns).
    pub time_ns: f64,
    /// Pages migrated into this node from a slower one / from a faster one.
    pub promoted_in: u64,
    pub demoted_in: u64,
    /// Pages migrated off this node.
    pub migrated_out: u64,
}

/// What [`Nodes::apply`] carried out: every move made, in order (for the
/// model's charges and ping-pong count), and the requests it could not
/// satisfy for want of room.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applied {
    pub moves: Vec<Move>,
    pub refused: u64,
}

impl Applied {
    pub fn promotions(&self) -> u64 {
        self.moves.iter().filter(|m| m.to < m.from).count() as u64
    }
    pub fn demotions(&self) -> u64 {
        self.moves.iter().filter(|m| m.to > m.from).count() as u64
    }
}

pub struct Nodes {
    page_bytes: u64,
    /// Node `n`'s frames are `base[n] .. base[n + 1]`.
    base: Vec<u64>,
    free: Vec<Vec<u32>>,
    /// Page -> frame.
    map: KeyMap<u32>,
    /// Frame -> page (EMPTY when free).
    owner: Vec<u64>,
    referenced: Vec<bool>,
    /// Per node: the CLOCK hand, a frame offset within the node.
    hand: Vec<u64>,
    /// Frame -> time it was made inaccessible by a scan (ns), or NaN.
    scanned_at: Vec<f64>,
    /// The scanner's next frame (a global frame number).
    scan_cursor: u64,
    /// Frame -> references to its page (counted by [`Nodes::touch`],
    /// moving with the page), and the counts of pages that left memory:
    /// each page's accesses over the run, for the static oracle's share
    /// beside the run's (docs/tiered-memory.md).
    count: Vec<u64>,
    saved: KeyMap<u64>,
    pub counters: Vec<NodeCounters>,
}

impl Nodes {
    /// `frames[n]` frames on node `n`, fastest first; each at least 1, at
    /// most [`MAX_NODES`] nodes (checked by the config: here, a panic).
    pub fn new(page_bytes: u64, frames: &[u64]) -> Self {
        assert!(!frames.is_empty() && frames.len() <= MAX_NODES);
        assert!(frames.iter().all(|&f| f > 0));
        let mut base = vec![0u64];
        for f in frames {
            base.push(base.last().unwrap() + f);
        }
        let total = *base.last().unwrap();
        assert!(total <= u32::MAX as u64, "frame numbers are 32-bit");
        // Free lists popped from the end: lowest frames first.
        let free = (0..frames.len())
            .map(|n| (base[n]..base[n + 1]).rev().map(|f| f as u32).collect())
            .collect();
        Nodes {
            page_bytes,
            free,
            map: KeyMap::default(),
            owner: vec![EMPTY; total as usize],
            referenced: vec![false; total as usize],
            hand: vec![0; frames.len()],
            scanned_at: vec![f64::NAN; total as usize],
            scan_cursor: base[1].min(total),
            count: vec![0; total as usize],
            saved: KeyMap::default(),
            counters: vec![NodeCounters::default(); frames.len()],
            base,
        }
    }

    pub fn page_bytes(&self) -> u64 {
        self.page_bytes
    }
    pub fn len(&self) -> usize {
        self.hand.len()
    }
    pub fn is_empty(&self) -> bool {
        self.hand.is_empty()
    }
    /// The slowest node.
    pub fn slowest(&self) -> Node {
        (self.len() - 1) as Node
    }
    pub fn frames(&self, n: Node) -> u64 {
        self.base[n as usize + 1] - self.base[n as usize]
    }
    pub fn free(&self, n: Node) -> u64 {
        self.free[n as usize].len() as u64
    }
    pub fn used(&self, n: Node) -> u64 {
        self.frames(n) - self.free(n)
    }
    /// Resident pages on every node.
    pub fn resident(&self) -> u64 {
        self.map.len() as u64
    }
    pub fn node_of_frame(&self, f: u32) -> Node {
        // At most 16 nodes: a short scan beats a binary search.
        let f = f as u64;
        (self.base[1..].iter().position(|&b| f < b).unwrap_or(0)) as Node
    }
    pub fn node_of(&self, page: u64) -> Option<Node> {
        self.map.get(&page).map(|&f| self.node_of_frame(f))
    }
    pub fn frame_of(&self, page: u64) -> Option<u32> {
        self.map.get(&page).copied()
    }

    /// Places `page` on node `n`; None when `n` has no free frame.
    pub fn insert(&mut self, page: u64, n: Node) -> Option<u32> {
        debug_assert!(!self.map.contains_key(&page));
        let f = self.free[n as usize].pop()?;
        self.map.insert(page, f);
        self.owner[f as usize] = page;
        self.referenced[f as usize] = true;
        self.scanned_at[f as usize] = f64::NAN;
        self.count[f as usize] = if self.saved.is_empty() {
            0
        } else {
            self.saved.remove(&page).unwrap_or(0)
        };
        Some(f)
    }

    /// Takes `page` out of memory (swap-out, process end); its node.
    pub fn remove(&mut self, page: u64) -> Option<Node> {
        let f = self.map.remove(&page)?;
        let n = self.node_of_frame(f);
        let c = std::mem::take(&mut self.count[f as usize]);
        if c > 0 {
            self.saved.insert(page, c);
        }
        self.release(f, n);
        Some(n)
    }

    /// Every page's references counted by [`Nodes::touch`] over the run,
    /// resident or not (pages never touched are left out).
    pub fn access_counts(&self) -> Vec<u64> {
        let mut out: Vec<u64> = self.saved.values().copied().collect();
        out.extend(self.count.iter().copied().filter(|&c| c > 0));
        out
    }

    fn release(&mut self, f: u32, n: Node) {
        self.owner[f as usize] = EMPTY;
        self.referenced[f as usize] = false;
        self.scanned_at[f as usize] = f64::NAN;
        self.free[n as usize].push(f);
    }

    /// A reference to the page in frame `f`: its referenced bit, and the
    /// time it was scanned if it was (the reference is then a hint fault
    /// and the page accessible again).
    #[inline(always)]
    pub fn touch(&mut self, f: u32) -> Option<f64> {
        self.referenced[f as usize] = true;
        self.count[f as usize] += 1;
        let s = self.scanned_at[f as usize];
        if s.is_nan() {
            None
        } else {
            self.scanned_at[f as usize] = f64::NAN;
            Some(s)
        }
    }

    /// `n` more references to the page in frame `f`, none of them a hint
    /// fault (a run of repeats after a [`Nodes::touch`]).
    #[inline(always)]
    pub fn touch_n(&mut self, f: u32, n: u64) {
        self.referenced[f as usize] = true;
        self.count[f as usize] += n;
    }

    /// Counts one access of `bytes` (`units` access units of the node's
    /// medium) on node `n` taking `ns`.
    #[inline(always)]
    pub fn record(&mut self, n: Node, write: bool, bytes: u64, units: u64, ns: f64) {
        let c = &mut self.counters[n as usize];
        c.accesses += 1;
        if write {
            c.writes += 1;
            c.units_written += units;
            c.bytes_written += bytes;
        } else {
            c.reads += 1;
            c.units_read += units;
        }
        c.bytes += bytes;
        c.time_ns += ns;
    }

    /// Moves `page` to node `to`, which must have a free frame.
    fn migrate(&mut self, page: u64, to: Node) -> Option<Move> {
        let f = *self.map.get(&page)?;
        let from = self.node_of_frame(f);
        if from == to {
            return None;
        }
        let g = self.free[to as usize].pop()?;
        self.owner[f as usize] = EMPTY;
        // A moved page keeps its referenced bit; its scan mark goes (the
        // migration remaps it accessible).
        let r = self.referenced[f as usize];
        let c = std::mem::take(&mut self.count[f as usize]);
        self.release(f, from);
        self.map.insert(page, g);
        self.owner[g as usize] = page;
        self.referenced[g as usize] = r;
        self.count[g as usize] = c;
        let c = &mut self.counters[to as usize];
        if to < from {
            c.promoted_in += 1;
        } else {
            c.demoted_in += 1;
        }
        self.counters[from as usize].migrated_out += 1;
        Some(Move { page, from, to })
    }

    /// The next victim of node `n` by second chance (CLOCK): the first
    /// page of the hand's sweep whose referenced bit is clear, clearing
    /// the bits it passes. None when the node holds no page.
    pub fn victim(&mut self, n: Node) -> Option<u64> {
        if self.used(n) == 0 {
            return None;
        }
        let (lo, len) = (self.base[n as usize], self.frames(n));
        // Two sweeps at most: the first clears every bit.
        for _ in 0..2 * len + 1 {
            let f = (lo + self.hand[n as usize]) as usize;
            self.hand[n as usize] = (self.hand[n as usize] + 1) % len;
            if self.owner[f] == EMPTY {
                continue;
            }
            if self.referenced[f] {
                self.referenced[f] = false;
            } else {
                return Some(self.owner[f]);
            }
        }
        None
    }

    /// Demotes node `n`'s next victim to the nearest slower node with a
    /// free frame; None when there is none (or `n` is empty).
    pub fn demote_one(&mut self, n: Node) -> Option<Move> {
        let to = (n + 1..self.len() as Node).find(|&s| self.free(s) > 0)?;
        let page = self.victim(n)?;
        self.migrate(page, to)
    }

    /// Makes the next `pages` resident pages of the slower nodes (all but
    /// node 0) inaccessible at `t_ns`, in frame order from where the last
    /// scan stopped, wrapping: Linux's scanner, which in tiering-only mode
    /// skips the top tier. The kernel walks virtual addresses; over a full
    /// cycle both orders mark every resident slow page once. Returns the
    /// pages marked.
    pub fn scan(&mut self, pages: u64, t_ns: f64) -> u64 {
        let (lo, hi) = (self.base[1.min(self.len())], *self.base.last().unwrap());
        if lo == hi {
            return 0;
        }
        let resident = hi - lo - (1..self.len()).map(|n| self.free(n as Node)).sum::<u64>();
        let want = pages.min(resident);
        let mut marked = 0;
        let mut f = self.scan_cursor.clamp(lo, hi - 1);
        while marked < want {
            if self.owner[f as usize] != EMPTY {
                self.scanned_at[f as usize] = t_ns;
                marked += 1;
            }
            f = if f + 1 == hi { lo } else { f + 1 };
        }
        self.scan_cursor = f;
        marked
    }

    /// Carries out a policy's requests, in order: named moves (a move to a
    /// faster node that is full first demotes that node's victim, when a
    /// slower node has room; a stale request, for a page no longer on its
    /// `from` node, is dropped), then reclaims (demote a node's victims).
    /// Clears `m`.
    pub fn apply(&mut self, m: &mut Moves) -> Applied {
        let mut out = Applied::default();
        for mv in m.moves.drain(..) {
            if self.node_of(mv.page) != Some(mv.from) || mv.from == mv.to {
                continue;
            }
            let mut mv = mv;
            if mv.to > mv.from && self.free(mv.to) == 0 {
                // A demotion into a full node goes to the nearest slower
                // node with room (the kernel's demotion target order).
                match (mv.to + 1..self.len() as Node).find(|&s| self.free(s) > 0) {
                    Some(s) => mv.to = s,
                    None => {
                        out.refused += 1;
                        continue;
                    }
                }
            }
            if self.free(mv.to) == 0 && mv.to < mv.from {
                match self.demote_one(mv.to) {
                    Some(d) => out.moves.push(d),
                    None => {
                        out.refused += 1;
                        continue;
                    }
                }
            }
            match self.migrate(mv.page, mv.to) {
                Some(done) => out.moves.push(done),
                None => out.refused += 1,
            }
        }
        for (n, pages) in m.reclaim.drain(..) {
            for _ in 0..pages {
                match self.demote_one(n) {
                    Some(d) => out.moves.push(d),
                    None => {
                        out.refused += 1;
                        break;
                    }
                }
            }
        }
        m.scan = 0;
        out
    }

    /// The pages resident on node `n` (any order).
    pub fn pages_on(&self, n: Node) -> impl Iterator<Item = u64> + '_ {
        let (lo, hi) = (self.base[n as usize], self.base[n as usize + 1]);
        self.owner[lo as usize..hi as usize]
            .iter()
            .copied()
            .filter(|&p| p != EMPTY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_free_lists_and_the_page_map() {
        let mut n = Nodes::new(4096, &[2, 3]);
        assert_eq!(
            (n.len(), n.frames(0), n.frames(1), n.slowest()),
            (2, 2, 3, 1)
        );
        assert_eq!(n.insert(10, 0), Some(0));
        assert_eq!(n.insert(11, 0), Some(1));
        assert_eq!(n.insert(12, 0), None, "node 0 is full");
        assert_eq!(n.insert(12, 1), Some(2));
        assert_eq!((n.free(0), n.free(1), n.resident()), (0, 2, 3));
        assert_eq!(
            (n.node_of(11), n.node_of(12), n.node_of(13)),
            (Some(0), Some(1), None)
        );
        assert_eq!(n.remove(10), Some(0));
        assert_eq!((n.free(0), n.node_of(10)), (1, None));
        // The freed frame is reused.
        assert_eq!(n.insert(13, 0), Some(0));
        let mut on1: Vec<u64> = n.pages_on(1).collect();
        on1.sort();
        assert_eq!(on1, [12]);
    }

    #[test]
    fn clock_victims_spare_referenced_pages() {
        let mut n = Nodes::new(4096, &[3, 3]);
        for p in 0..3 {
            n.insert(p, 0);
        }
        // All referenced at insertion: the first sweep clears them all and
        // the second takes frame 0's page.
        assert_eq!(n.victim(0), Some(0));
        // Page 1 referenced again: passed over once more.
        let f1 = n.frame_of(1).unwrap();
        n.touch(f1);
        assert_eq!(n.victim(0), Some(2));
        assert_eq!(n.victim(1), None);
    }

    #[test]
    fn apply_makes_room_for_a_promotion_and_counts_it() {
        let mut n = Nodes::new(4096, &[1, 2]);
        n.insert(1, 0);
        n.insert(2, 1);
        let mut m = Moves::default();
        m.push(Move {
            page: 2,
            from: 1,
            to: 0,
        });
        let a = n.apply(&mut m);
        // Page 1 demoted to make room, then page 2 promoted.
        assert_eq!(
            a.moves,
            [
                Move {
                    page: 1,
                    from: 0,
                    to: 1
                },
                Move {
                    page: 2,
                    from: 1,
                    to: 0
                }
            ]
        );
        assert_eq!((a.promotions(), a.demotions(), a.refused), (1, 1, 0));
        assert_eq!((n.node_of(1), n.node_of(2)), (Some(1), Some(0)));
        assert_eq!(
            (n.counters[0].promoted_in, n.counters[1].demoted_in),
            (1, 1)
        );
        assert!(m.moves.is_empty());
        // A stale request (page 2 is no longer on node 1) is dropped.
        m.push(Move {
            page: 2,
            from: 1,
            to: 0,
        });
        assert_eq!(n.apply(&mut m), Applied::default());
        // No room anywhere below: the promotion is refused.
        let mut full = Nodes::new(4096, &[1, 1]);
        full.insert(1, 0);
        full.insert(2, 1);
        m.push(Move {
            page: 2,
            from: 1,
            to: 0,
        });
        assert_eq!(full.apply(&mut m).refused, 1);
        assert_eq!(full.node_of(2), Some(1));
    }

    #[test]
    fn scans_mark_slow_pages_once_and_a_touch_is_a_hint_fault() {
        let mut n = Nodes::new(4096, &[2, 4]);
        n.insert(1, 0);
        for p in 10..13 {
            n.insert(p, 1);
        }
        // Three slow pages resident: a scan of 2 then of 2 wraps.
        assert_eq!(n.scan(2, 5.0), 2);
        let fast = n.frame_of(1).unwrap();
        assert_eq!(n.touch(fast), None, "fast pages are never scanned");
        let f10 = n.frame_of(10).unwrap();
        assert_eq!(n.touch(f10), Some(5.0));
        assert_eq!(n.touch(f10), None, "the fault made it accessible");
        assert_eq!(n.scan(2, 7.0), 2);
        let f12 = n.frame_of(12).unwrap();
        assert_eq!(n.touch(f12), Some(7.0));
        assert_eq!(n.touch(f10), Some(7.0), "wrapped to the first frame");
        // More than resident: each page once.
        assert_eq!(n.scan(100, 9.0), 3);
    }

    #[test]
    fn reclaim_demotes_victims_until_the_slower_node_is_full() {
        let mut n = Nodes::new(4096, &[3, 2]);
        for p in 0..3 {
            n.insert(p, 0);
        }
        let mut m = Moves::default();
        m.reclaim.push((0, 3));
        let a = n.apply(&mut m);
        assert_eq!((a.demotions(), a.refused), (2, 1));
        assert_eq!((n.used(0), n.used(1)), (1, 2));
        let mut r = n.counters[0].clone();
        r.migrated_out -= 2;
        assert_eq!(r, NodeCounters::default());
        n.record(0, true, 64, 1, 10.0);
        assert_eq!((n.counters[0].writes, n.counters[0].bytes), (1, 64));
        assert_eq!(
            (n.counters[0].units_written, n.counters[0].bytes_written),
            (1, 64)
        );
        n.record(0, false, 100, 2, 10.0);
        assert_eq!(
            (n.counters[0].units_read, n.counters[0].bytes_written),
            (2, 64)
        );
    }
}
