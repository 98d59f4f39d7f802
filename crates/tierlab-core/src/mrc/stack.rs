//! The LRU stack of the exact and SHARDS curves: O(log n) distances from a
//! Fenwick tree over request times (module docs of [`super`]).

use crate::index::{prefetch, SlotIndex};

/// Leaves per Fenwick node: one cache line of u32 weights, so a distance
/// costs one miss for the leaf line and a walk over a tree 16 times smaller
/// than the time range (it stays in L2 for a million keys).
const BLOCK: usize = 16;
/// Blocks apart below which [`Stack`] walks its two tree paths jointly.
const NEAR: usize = 64;
/// Smallest time range; it grows to twice the live keys at each renumbering.
const MIN_RANGE: usize = 1 << 16;

/// An LRU stack of keys and their weights (sizes, or 1) with O(log n)
/// distances.
pub struct Stack {
    /// Key -> time of its latest request. The tier's open-addressing index,
    /// not a hashbrown map, so [`exact`] can prefetch the bucket of a
    /// request to come, then the leaf its time points at: the two cache
    /// misses that dominate a distance on a large stack.
    map: SlotIndex,
    /// Weight of the key whose latest request was at each time, 0 if none.
    leaves: Vec<u32>,
    /// Fenwick tree over per-block sums, 1-based.
    tree: Vec<u64>,
    /// Sum of all weights.
    total: u64,
    now: usize,
    /// Scratch for renumbering.
    rank: Vec<u32>,
    /// The largest weight that entered the stack: below it, the curve counts
    /// an object an LRU tier of that size would refuse (module docs).
    pub(super) largest: u32,
}

impl Default for Stack {
    fn default() -> Self {
        Self::new()
    }
}

impl Stack {
    pub fn new() -> Self {
        Stack {
            map: SlotIndex::new(),
            leaves: vec![0; MIN_RANGE],
            tree: vec![0; MIN_RANGE / BLOCK + 1],
            total: 0,
            now: 0,
            rank: Vec::new(),
            largest: 0,
        }
    }

    /// Keys in the stack.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Starts loading the index bucket of a key requested soon.
    #[inline(always)]
    pub(super) fn prefetch_key(&self, h: u64) {
        self.map.prefetch_hashed(h);
    }

    /// Starts loading the leaf block (and its first tree node) of a key
    /// requested very soon; its bucket should be cached by now.
    #[inline(always)]
    pub(super) fn prefetch_leaf(&self, key: u64, h: u64) {
        if let Some(t) = self.map.get_hashed(key, h) {
            let t = t as usize;
            let b = t / BLOCK;
            prefetch(self.leaves.as_ptr().wrapping_add(b * BLOCK));
            prefetch(self.leaves.as_ptr().wrapping_add(t));
            prefetch(self.tree.as_ptr().wrapping_add(b));
        }
    }

    #[inline(always)]
    fn tree_add(&mut self, block: usize, v: u64) {
        let mut i = block + 1;
        let n = self.tree.len();
        while i < n {
            // Wrapping: removals add the two's complement.
            self.tree[i] = self.tree[i].wrapping_add(v);
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of the weights at times up to and including `t`.
    #[inline(always)]
    fn prefix_incl(&self, t: usize) -> u64 {
        let b = t / BLOCK;
        let mut s: u64 = self.leaves[b * BLOCK..=t].iter().map(|&w| w as u64).sum();
        let mut i = b;
        while i > 0 {
            s = s.wrapping_add(self.tree[i]);
            i &= i - 1;
        }
        s
    }

    /// Sum of the weights at times after `t` (up to `now`, past which
    /// every leaf is 0). Far apart: the total less a prefix walk. Close
    /// (a hot key's previous request, as SHARDS' small stacks mostly
    /// see): the blocks strictly between are the difference of two prefix
    /// walks that share every node below their meeting point, so walking
    /// both down together and stopping there reads a few nodes. On long
    /// distances the joint walk's branches mispredict (exact LRU over 1M
    /// keys: +18% instructions, +50% branch misses), hence [`NEAR`].
    #[inline(always)]
    fn after(&self, t: usize) -> u64 {
        let (bt, bn) = (t / BLOCK, self.now / BLOCK);
        if bn - bt > NEAR {
            return self.total.wrapping_sub(self.prefix_incl(t));
        }
        let sum = |r: &[u32]| r.iter().map(|&w| w as u64).sum::<u64>();
        if bt == bn {
            return sum(&self.leaves[t + 1..=self.now]);
        }
        let mut s = sum(&self.leaves[t + 1..(bt + 1) * BLOCK])
            .wrapping_add(sum(&self.leaves[bn * BLOCK..=self.now]));
        // Blocks bt+1 .. bn-1: prefix(bn) - prefix(bt+1), where prefix(b)
        // is the sum of the blocks below b (nodes b, b & (b-1), ...).
        let (mut i, mut j) = (bn, bt + 1);
        while i != j {
            if i > j {
                s = s.wrapping_add(self.tree[i]);
                i &= i - 1;
            } else {
                s = s.wrapping_sub(self.tree[j]);
                j &= j - 1;
            }
        }
        s
    }

    /// Moves a weight: `old` out of block `from`, `w` into block `to`
    /// (from <= to). Close blocks: the two update paths join at their first
    /// common node and add `w - old` together from there, nothing when the
    /// weights are equal (always, with unit sizes). Far apart: two walks.
    #[inline(always)]
    fn tree_move(&mut self, from: usize, old: u64, to: usize, w: u64) {
        if to - from > NEAR {
            self.tree_add(from, old.wrapping_neg());
            self.tree_add(to, w);
            return;
        }
        let n = self.tree.len();
        let (mut i, mut j) = (from + 1, to + 1);
        while i != j {
            if i < j {
                if i >= n {
                    break;
                }
                self.tree[i] = self.tree[i].wrapping_sub(old);
                i += i & i.wrapping_neg();
            } else {
                if j >= n {
                    break;
                }
                self.tree[j] = self.tree[j].wrapping_add(w);
                j += j & j.wrapping_neg();
            }
        }
        // Here i == j (both paths go on alike), or one path left the tree
        // and the other must still be walked to its end.
        if i == j {
            let delta = w.wrapping_sub(old);
            if delta != 0 {
                while i < n {
                    self.tree[i] = self.tree[i].wrapping_add(delta);
                    i += i & i.wrapping_neg();
                }
            }
        } else {
            while i < n {
                self.tree[i] = self.tree[i].wrapping_sub(old);
                i += i & i.wrapping_neg();
            }
            while j < n {
                self.tree[j] = self.tree[j].wrapping_add(w);
                j += j & j.wrapping_neg();
            }
        }
    }

    /// Requests `key` with weight `w`: returns its stack distance (weights of
    /// the distinct keys requested since its previous request, plus `w`), or
    /// None on its first request.
    #[inline]
    pub fn access(&mut self, key: u64, w: u32) -> Option<u64> {
        self.access_hashed(key, SlotIndex::hash(key), w)
    }

    /// `access` of a key whose [`SlotIndex::hash`] is `h`.
    #[inline(always)]
    pub(super) fn access_hashed(&mut self, key: u64, h: u64, w: u32) -> Option<u64> {
        if self.now == self.leaves.len() {
            self.renumber();
        }
        let now = self.now;
        let d = match self.map.slot_mut_hashed(key, h) {
            Some(e) => {
                let t = *e as usize;
                *e = now as u32;
                let old = self.leaves[t];
                // Read the suffix before moving the weight (leaves[now] is
                // still 0).
                let d = self.after(t) + w as u64;
                self.leaves[t] = 0;
                self.total -= old as u64;
                self.tree_move(t / BLOCK, old as u64, now / BLOCK, w as u64);
                Some(d)
            }
            None => {
                self.map.insert_hashed(key, h, now as u32);
                self.tree_add(now / BLOCK, w as u64);
                None
            }
        };
        self.leaves[now] = w;
        self.total += w as u64;
        self.now += 1;
        self.largest = self.largest.max(w);
        d
    }

    /// Drops `key` from the stack (a delete, or a key SHARDS stops sampling).
    pub fn remove(&mut self, key: u64) {
        if let Some(t) = self.map.remove(key) {
            let t = t as usize;
            let old = self.leaves[t];
            self.leaves[t] = 0;
            self.total -= old as u64;
            self.tree_add(t / BLOCK, (old as u64).wrapping_neg());
        }
    }

    /// Renumbers the live times densely, keeping their order, into a range
    /// twice the live keys: amortised O(1) per request (a renumbering costs
    /// O(range) and comes after at least half a range of requests).
    #[cold]
    fn renumber(&mut self) {
        let old = self.leaves.len();
        self.rank.clear();
        self.rank.resize(old, 0);
        for t in self.map.slots_mut() {
            self.rank[*t as usize] = 1;
        }
        let mut live = 0u32;
        for r in self.rank.iter_mut() {
            let is_live = *r;
            *r = live;
            live += is_live;
        }
        let range = (2 * live as usize).next_power_of_two().max(MIN_RANGE);
        // The weights live only in the leaves: move them to the new times.
        let old_leaves = std::mem::replace(&mut self.leaves, vec![0; range]);
        for t in self.map.slots_mut() {
            let new = self.rank[*t as usize];
            self.leaves[new as usize] = old_leaves[*t as usize];
            *t = new;
        }
        // Linear-time Fenwick build: each node passes its sum to its parent.
        self.tree.clear();
        self.tree.resize(range / BLOCK + 1, 0);
        for (b, chunk) in self.leaves.chunks_exact(BLOCK).enumerate() {
            self.tree[b + 1] = chunk.iter().map(|&w| w as u64).sum();
        }
        let n = self.tree.len();
        for i in 1..n {
            let p = i + (i & i.wrapping_neg());
            if p < n {
                self.tree[p] = self.tree[p].wrapping_add(self.tree[i]);
            }
        }
        self.now = live as usize;
    }
}
