//! Miss-ratio curves: the miss ratio of a cache at every size from one pass
//! over a trace.
//!
//! * [`exact`]: LRU by stack distances (Mattson et al., "Evaluation
//!   techniques for storage hierarchies", IBM Systems Journal 1970). The
//!   distance of a request is the size of the LRU stack above its key's
//!   previous request, including the key itself; an LRU cache of capacity
//!   `c` hits exactly the requests whose distance is at most `c`.
//!   - with unit sizes: the number of distinct keys requested since the key's
//!     previous request, plus one;
//!   - with sizes: the sum of the sizes of those distinct keys (each at the
//!     size of its latest request) plus the key's own current size. This is
//!     exactly tierlab's LRU tier (evict from the tail until the new object
//!     fits) for every capacity at least the largest object: a larger object
//!     is refused by the tier but still enters the stack here. Keys are
//!     assumed to keep their size; when a size changes, the latest is used.
//!
//!   Distances come from a Fenwick tree (Fenwick, "A new data structure for
//!   cumulative frequency tables", Software: Practice and Experience 1994)
//!   over request times: each key's weight sits at the time of its latest
//!   request, so the distance is a suffix sum, O(log n). Times are
//!   renumbered densely when the time range fills, so memory stays
//!   proportional to the distinct keys, not the trace length.
//! * [`shards`]: SHARDS (Waldspurger, Park, Garthwaite, Ahmad, "Efficient MRC
//!   Construction with SHARDS", FAST 2015): the same stack over the keys whose
//!   hash falls under a threshold, distances scaled by the inverse rate.
//!   Fixed rate with the paper's SHARDS_adj correction (§4.1), or a fixed
//!   number of sampled keys (§4.2) lowering the threshold as keys arrive.
//! * [`simulate_sizes`]: any policy or whole hierarchy, one simulator per
//!   size in parallel threads over one read of the trace.
//!
//! Deletes remove the key from the stack (its next request is a cold miss,
//! as in the tiers) and are not counted as requests.

use crate::config::{Config, ConfigError, Source};
use crate::error::Error;
use crate::index::{prefetch, SlotIndex};
use crate::request::{Op, Request};
use crate::sim::{open, trace_stats, BATCH};
use crate::trace::oracle::{OracleReader, RECORD};
use crate::trace::TraceError;
use crate::units::Size;
use std::path::Path;

/// Leaves per Fenwick node: one cache line of u32 weights, so a distance
/// costs one miss for the leaf line and a walk over a tree 16 times smaller
/// than the time range (it stays in L2 for a million keys).
const BLOCK: usize = 16;
/// Blocks apart below which [`Stack`] walks its two tree paths jointly.
const NEAR: usize = 64;
/// Smallest time range; it grows to twice the live keys at each renumbering.
const MIN_RANGE: usize = 1 << 16;
/// How many requests ahead [`exact`] prefetches a key's index bucket (and
/// half as many ahead, its leaf block): far enough to cover a memory
/// latency at ~100 ns per request.
const AHEAD: usize = 16;

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
    largest: u32,
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
    fn prefetch_key(&self, h: u64) {
        self.map.prefetch_hashed(h);
    }

    /// Starts loading the leaf block (and its first tree node) of a key
    /// requested very soon; its bucket should be cached by now.
    #[inline(always)]
    fn prefetch_leaf(&self, key: u64, h: u64) {
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
    fn access_hashed(&mut self, key: u64, h: u64, w: u32) -> Option<u64> {
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

/// Sub-buckets per power of two of the log-linear histogram: distances below
/// 2^12 are kept exactly, larger ones in bins 1/2048 of their value wide.
const SUB_BITS: u32 = 12;

#[inline(always)]
fn bin_of(d: u64) -> usize {
    let bits = 64 - d.leading_zeros();
    if bits <= SUB_BITS {
        return d as usize;
    }
    let shift = bits - SUB_BITS;
    let half = 1usize << (SUB_BITS - 1);
    (1 << SUB_BITS) + (shift as usize - 1) * half + ((d >> shift) as usize - half)
}

/// The largest distance in bin `b` (the curve is exact at these sizes).
fn bin_top(b: usize) -> u64 {
    let full = 1usize << SUB_BITS;
    if b < full {
        return b as u64;
    }
    let half = 1usize << (SUB_BITS - 1);
    let shift = ((b - full) / half + 1) as u32;
    let lead = ((b - full) % half + half) as u64;
    ((lead + 1) << shift) - 1
}

/// Where distances are counted.
enum Bins {
    /// Log-linear bins over all distances.
    Log,
    /// Bin i: distances above sizes[i-1] and at most sizes[i] (sorted sizes).
    At(AtSizes),
}

/// Sorted, distinct sizes, and how to find a distance's bin among them
/// without a binary search per request (SHARDS at 100 sizes spent a fifth
/// of its pass in that search's mispredicted branches).
struct AtSizes {
    sizes: Vec<u64>,
    /// `below[l]`: how many sizes lie below the first distance of log bin
    /// `l` (`bin_of`), for every log bin up to the one past the largest
    /// size. Most log bins hold no size, and then that count is the answer.
    below: Vec<u32>,
}

impl AtSizes {
    fn new(mut sizes: Vec<u64>) -> Self {
        sizes.sort_unstable();
        sizes.dedup();
        assert!(sizes.len() < u32::MAX as usize, "too many sizes");
        let past = sizes.last().map_or(0, |&m| bin_of(m) + 1);
        let below = (0..=past)
            .map(|l| {
                let first = if l == 0 { 0 } else { bin_top(l - 1) + 1 };
                sizes.partition_point(|&c| c < first) as u32
            })
            .collect();
        AtSizes { sizes, below }
    }

    /// How many sizes lie below `d`: `sizes.partition_point(|&c| c < d)`.
    #[inline(always)]
    fn count_below(&self, d: u64) -> usize {
        let l = bin_of(d);
        match self.below.get(l..l + 2) {
            Some(&[lo, hi]) if lo == hi => lo as usize,
            // A size inside d's log bin: search the few there.
            Some(&[lo, hi]) => {
                let (lo, hi) = (lo as usize, hi as usize);
                lo + self.sizes[lo..hi].partition_point(|&c| c < d)
            }
            // Past the largest size's bin: every size is below d.
            _ => self.sizes.len(),
        }
    }
}

/// Weighted counts of stack distances and of first requests.
struct Hist {
    bins: Bins,
    counts: Vec<f64>,
    cold: f64,
}

impl Hist {
    fn new(sizes: Option<&[u64]>) -> Self {
        match sizes {
            Some(s) => {
                let at = AtSizes::new(s.to_vec());
                Hist {
                    counts: vec![0.0; at.sizes.len() + 1],
                    bins: Bins::At(at),
                    cold: 0.0,
                }
            }
            None => Hist {
                bins: Bins::Log,
                counts: Vec::new(),
                cold: 0.0,
            },
        }
    }

    #[inline(always)]
    fn add(&mut self, d: Option<u64>, w: f64) {
        let Some(d) = d else {
            self.cold += w;
            return;
        };
        let b = match &self.bins {
            Bins::Log => {
                let b = bin_of(d);
                if b >= self.counts.len() {
                    self.counts.resize(b + 1, 0.0);
                }
                b
            }
            // A request misses at every size below its distance.
            Bins::At(at) => at.count_below(d),
        };
        self.counts[b] += w;
    }

    /// (size, miss ratio) points, sizes increasing; `total` normalises.
    fn curve(&self, total: f64) -> Vec<(u64, f64)> {
        let ratio = |m: f64| if total > 0.0 { m / total } else { 0.0 };
        match &self.bins {
            Bins::At(AtSizes { sizes, .. }) => {
                // Misses at sizes[j]: the cold ones and every bin above j.
                let mut above = 0.0;
                let mut out = vec![(0, 0.0); sizes.len()];
                for j in (0..sizes.len()).rev() {
                    above += self.counts[j + 1];
                    out[j] = (sizes[j], ratio(self.cold + above));
                }
                out
            }
            Bins::Log => {
                let mut above: f64 = self.counts.iter().sum();
                let mut out = vec![(0, ratio(self.cold + above))];
                for (b, &c) in self.counts.iter().enumerate() {
                    if c != 0.0 {
                        above -= c;
                        out.push((bin_top(b), ratio(self.cold + above)));
                    }
                }
                out
            }
        }
    }
}

/// A miss-ratio curve and how it was made.
#[derive(Clone, Debug, PartialEq)]
pub struct Mrc {
    /// Cache size (bytes, or objects with unit sizes), increasing.
    pub sizes: Vec<u64>,
    pub miss_ratios: Vec<f64>,
    /// Requests read (deletes included).
    pub requests: u64,
    /// Requests that went into the curve (all, or those sampled).
    pub sampled: u64,
    /// The largest object (bytes; 1 with unit sizes) in the stack the curve
    /// comes from, 0 for a simulated curve. At sizes below it the one-pass
    /// curve counts that object in the stack, though an LRU tier of that
    /// size refuses it: there it can read higher than the tier's.
    pub largest: u64,
}

impl Mrc {
    fn new(points: Vec<(u64, f64)>, requests: u64, sampled: u64, largest: u64) -> Self {
        let (sizes, miss_ratios) = points.into_iter().unzip();
        Mrc {
            sizes,
            miss_ratios,
            requests,
            sampled,
            largest,
        }
    }

    /// The miss ratio at `size`: the curve's value at the largest point not
    /// above it (the curve is a step function, exact at its points).
    pub fn at(&self, size: u64) -> f64 {
        let i = self.sizes.partition_point(|&s| s <= size);
        if i == 0 {
            1.0
        } else {
            self.miss_ratios[i - 1]
        }
    }
}

/// Options shared by the one-pass curves.
#[derive(Clone, Debug, Default)]
pub struct MrcOptions {
    /// Every object counts as size 1; sizes count objects.
    pub unit_size: bool,
    /// Evaluate exactly at these sizes (bytes or objects) instead of at the
    /// log-spaced points of the whole curve.
    pub sizes: Option<Vec<u64>>,
}

/// How progress is reported: told the requests read so far, returns false
/// to stop (the caller was interrupted).
pub trait Progress: FnMut(u64) -> bool {}
impl<F: FnMut(u64) -> bool> Progress for F {}

/// Requests between progress calls on the raw path.
const RAW_CHUNK: usize = 1 << 16;

/// The exact LRU miss-ratio curve of a source, in one pass.
pub fn exact(
    source: &Source,
    opts: &MrcOptions,
    mut progress: impl Progress,
) -> Result<Mrc, TraceError> {
    let mut stack = Stack::new();
    let mut hist = Hist::new(opts.sizes.as_deref());
    let unit = opts.unit_size;
    let mut src = open(source)?;
    let mut buf = Vec::with_capacity(BATCH);
    let (mut n, mut counted) = (0u64, 0u64);
    while src.next_batch(&mut buf, BATCH)? > 0 {
        for (i, r) in buf.iter().enumerate() {
            // Two prefetch stages: the bucket of a key AHEAD requests on,
            // then, once that bucket is cached, the leaf block of a key
            // AHEAD / 2 on. Only hints: a key whose time changes in between
            // just wastes one prefetch.
            if let Some(f) = buf.get(i + AHEAD) {
                stack.prefetch_key(SlotIndex::hash(f.key));
            }
            if let Some(f) = buf.get(i + AHEAD / 2) {
                stack.prefetch_leaf(f.key, SlotIndex::hash(f.key));
            }
            if r.op == Op::Delete {
                stack.remove(r.key);
                continue;
            }
            let w = if unit { 1 } else { r.size };
            hist.add(stack.access_hashed(r.key, SlotIndex::hash(r.key), w), 1.0);
            counted += 1;
        }
        n += buf.len() as u64;
        if !progress(n) {
            return Err(TraceError::Interrupted);
        }
    }
    crate::trace::empty_check(n, &*src)?;
    Ok(Mrc::new(
        hist.curve(counted as f64),
        n,
        counted,
        stack.largest as u64,
    ))
}

/// SHARDS sampling: a fixed rate, or a fixed number of sampled keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Keep keys whose hash falls below rate * 2^24.
    Rate(f64),
    /// Keep at most this many keys, lowering the threshold as needed.
    Size(usize),
}

/// The hash space SHARDS samples from (the paper's P).
const MODULUS: u64 = 1 << 24;

/// The sampling hash: splitmix64's finaliser (Steele, Lea, Flood, "Fast
/// splittable pseudorandom number generators", OOPSLA 2014). Independent of
/// the map's hash, whose low bits pick buckets: sampling on those would
/// leave the stack's map with a few crowded buckets.
#[inline(always)]
fn sample_hash(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) & (MODULUS - 1)
}

/// The state of a SHARDS pass.
struct Shards {
    stack: Stack,
    hist: Hist,
    threshold: u64,
    unit: bool,
    /// Fixed size: the sampled keys by hash, largest first out.
    heap: Option<(std::collections::BinaryHeap<(u64, u64)>, usize)>,
    sampled: u64,
    /// MODULUS / threshold: 1 / the sampling rate.
    inv_rate: f64,
}

impl Shards {
    fn new(sampling: Sampling, opts: &MrcOptions) -> Result<Self, ConfigError> {
        let (threshold, heap) = match sampling {
            Sampling::Rate(r) => {
                if !(r > 0.0 && r <= 1.0) {
                    return Err(ConfigError::at(
                        "shards",
                        format!("{r} is out of range; the sampling rate must be in (0, 1]"),
                    ));
                }
                ((r * MODULUS as f64).round().max(1.0) as u64, None)
            }
            Sampling::Size(s) => {
                if s == 0 {
                    return Err(ConfigError::at(
                        "shards_size",
                        "must be at least 1 sampled key",
                    ));
                }
                (MODULUS, Some((std::collections::BinaryHeap::new(), s)))
            }
        };
        Ok(Shards {
            stack: Stack::new(),
            hist: Hist::new(opts.sizes.as_deref()),
            threshold,
            unit: opts.unit_size,
            heap,
            sampled: 0,
            inv_rate: MODULUS as f64 / threshold as f64,
        })
    }

    #[inline(always)]
    fn request(&mut self, key: u64, size: u32, op: Op) {
        self.request_hashed(key, sample_hash(key), size, op);
    }

    /// `request` of a key whose [`sample_hash`] is `h`.
    #[inline(always)]
    fn request_hashed(&mut self, key: u64, h: u64, size: u32, op: Op) {
        if h >= self.threshold {
            return;
        }
        if op == Op::Delete {
            self.stack.remove(key);
            return;
        }
        self.sampled += 1;
        // 1/R, kept rather than divided for on every sampled request (on a
        // Zipf trace ~10% of all requests hit sampled hot keys).
        let inv_rate = self.inv_rate;
        let w = if self.unit { 1 } else { size };
        let d = self.stack.access(key, w);
        // Scale the sampled stack's distance up to the whole trace's. Under
        // a fixed size the rate falls over time; counting each request with
        // weight 1/rate equals the paper's rescaling of the histogram by
        // R_new/R_old at each change, up to the final normalisation.
        // Rounded half up by hand: `f64::round` is a libm call (3% of the
        // pass). The same value here: x >= 1 whenever d >= 1 (1/R >= 1),
        // and for x >= 1, floor(x + 0.5) equals round(x).
        let scaled = d.map(|d| (d as f64 * inv_rate + 0.5) as u64);
        self.hist.add(scaled, inv_rate);
        if d.is_none() {
            if let Some((heap, max)) = &mut self.heap {
                heap.push((h, key));
                if heap.len() > *max {
                    // Lower the threshold to the largest hash and drop every
                    // key at it (Waldspurger et al. 2015, §4.2).
                    let top = heap.peek().expect("non-empty").0;
                    self.threshold = top;
                    self.inv_rate = MODULUS as f64 / top as f64;
                    while heap.peek().is_some_and(|&(t, _)| t == top) {
                        let (_, k) = heap.pop().expect("peeked");
                        self.stack.remove(k);
                    }
                }
            }
        }
    }

    fn finish(mut self, requests: u64, counted: u64) -> Mrc {
        // SHARDS_adj (§4.1): a sampled request stands for 1/R requests, so
        // the sampled weights should add up to the requests counted; the
        // difference goes to the smallest distance. It removes most of the
        // error that a few very frequent keys in or out of the sample cause.
        // The paper applies it to fixed-rate sampling; with weights 1/R(t)
        // the same correction applies to the fixed-size variant, where
        // without it one hot key in the sample skews the whole curve (an
        // MAE of 0.05 instead of 0.003 on the Zipf test below).
        let weight = self.hist.cold + self.hist.counts.iter().sum::<f64>();
        self.hist.add(Some(1), counted as f64 - weight);
        // When hot keys are over-represented in the sample (a Zipf trace
        // whose top keys hash under the threshold), the correction is
        // negative and sizes below the sampling resolution (about 1/R
        // objects) come out above 1 (10.6 at size 1 on the 20M-request Zipf
        // trace at R = 0.01). A miss ratio is a share: clamp it.
        let curve = self
            .hist
            .curve(counted as f64)
            .into_iter()
            .map(|(s, m)| (s, m.clamp(0.0, 1.0)))
            .collect();
        Mrc::new(curve, requests, self.sampled, self.stack.largest as u64)
    }
}

/// The sampled records of one chunk: (key, sampling hash, size).
type Sampled = Vec<(u64, u64, u32)>;

/// Keeps the records of `raw` whose key hashes under `limit`.
#[inline(always)]
fn sample_raw(raw: &[u8], limit: u64, out: &mut Sampled) {
    out.clear();
    for rec in raw.chunks_exact(RECORD) {
        let key = u64::from_le_bytes(rec[4..12].try_into().expect("8 bytes"));
        let h = sample_hash(key);
        if h < limit {
            let size = u32::from_le_bytes(rec[12..16].try_into().expect("4 bytes"));
            out.push((key, h, size));
        }
    }
}

/// Chunks a thread may have filtered ahead of the stack (see
/// [`filter_oracle`]); enough to ride out a chunk of the other thread's.
const OWN_AHEAD: usize = 4;

/// The fixed-rate and fixed-size passes over an oracleGeneral file, on two
/// threads sharing the filtering. The file is cut into chunks of RAW_CHUNK
/// records that both threads claim from a counter, each through a reader
/// of its own (its own map, releasing what it has passed, so memory stays
/// bounded), and reduce to the records whose key hashes under the
/// threshold. This thread runs the chunks through the stack strictly in
/// trace order and reports progress after each. While the chunk it needs
/// next is still being filtered by the other thread, it claims and filters
/// one further on instead of waiting, up to OWN_AHEAD, so the split follows
/// the work: on the 20M-request Zipf bench trace a tenth of the requests
/// reach the stack at rate 0.01 (hot keys sampled) and this thread filters
/// about a sixth of the chunks; at rate 0.001, about half. (Alternating
/// chunks between the threads was hardly faster than one filtering thread
/// at 0.01: this one then has the stack and half the filtering.)
///
/// A fixed-size pass only ever lowers its threshold: the filters read it at
/// each chunk and may let through keys the stack has since dropped, which
/// `request_hashed` checks again, so the curve is the one a single thread
/// computes. Returns the records read; an interruption stops both threads.
fn filter_oracle(path: &Path, s: &mut Shards, progress: &mut impl Progress) -> Result<u64, Error> {
    use crate::trace::TraceSource;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
    use std::sync::mpsc::{self, TryRecvError};
    let mut other = OracleReader::open(path)?;
    let mut mine = OracleReader::open(path)?;
    let chunks = (other.len_hint().expect("a mapped file's length") as usize).div_ceil(RAW_CHUNK);
    let claims = AtomicUsize::new(0);
    let threshold = AtomicU64::new(s.threshold);
    // Two batches in flight let the other thread run ahead; used buffers go
    // back to it so that the pass allocates a handful.
    let (full_tx, full_rx) = mpsc::sync_channel::<(usize, Sampled, u64)>(2);
    let (empty_tx, empty_rx) = mpsc::channel::<Sampled>();
    let (claims_ref, th) = (&claims, &threshold);
    let mut n = 0u64;
    let mut interrupted = false;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // Claims only grow, so the reader only moves forward.
            let mut at = 0;
            loop {
                let k = claims_ref.fetch_add(1, Relaxed);
                if k >= chunks {
                    break;
                }
                other.skip((k - at) * RAW_CHUNK);
                let raw = other.next_raw(RAW_CHUNK);
                at = k + 1;
                let mut out = empty_rx.try_recv().unwrap_or_default();
                sample_raw(raw, th.load(Relaxed), &mut out);
                // The receiver is gone when the pass was interrupted.
                if full_tx.send((k, out, (raw.len() / RECORD) as u64)).is_err() {
                    break;
                }
            }
        });
        // Moved in here so that leaving the loop early drops it, which
        // stops the other thread at its next send.
        let full_rx = full_rx;
        let mut own: VecDeque<(usize, Sampled, u64)> = VecDeque::new();
        let mut spare: Vec<Sampled> = Vec::new();
        let (mut at, mut next) = (0, 0);
        while next < chunks {
            let (k, batch, records) = if own.front().is_some_and(|b| b.0 == next) {
                own.pop_front().expect("front")
            } else {
                // Every chunk below `next` went through the stack and those
                // this thread claimed are in `own`: if `next` is not there,
                // the other thread claimed it, and since it sends its
                // chunks in the order it claimed them, it sends `next` now.
                match full_rx.try_recv() {
                    Ok(b) => b,
                    // Only if the other thread panicked; the scope raises it.
                    Err(TryRecvError::Disconnected) => break,
                    Err(TryRecvError::Empty) => {
                        // `next` is still being filtered: filter a later
                        // chunk meanwhile, unless OWN_AHEAD are waiting or
                        // none is left.
                        let claim = (own.len() < OWN_AHEAD)
                            .then(|| claims.fetch_add(1, Relaxed))
                            .filter(|&k| k < chunks);
                        if let Some(k) = claim {
                            mine.skip((k - at) * RAW_CHUNK);
                            let raw = mine.next_raw(RAW_CHUNK);
                            at = k + 1;
                            let mut out = spare.pop().unwrap_or_default();
                            sample_raw(raw, s.threshold, &mut out);
                            own.push_back((k, out, (raw.len() / RECORD) as u64));
                            continue;
                        }
                        match full_rx.recv() {
                            Ok(b) => b,
                            Err(_) => break,
                        }
                    }
                }
            };
            assert_eq!(k, next, "chunks out of order");
            for &(key, h, size) in &batch {
                s.request_hashed(key, h, size, Op::Read);
            }
            threshold.store(s.threshold, Relaxed);
            n += records;
            next += 1;
            if spare.len() < OWN_AHEAD {
                spare.push(batch);
            } else {
                let _ = empty_tx.send(batch);
            }
            if !progress(n) {
                interrupted = true;
                break;
            }
        }
    });
    if interrupted {
        return Err(TraceError::Interrupted.into());
    }
    Ok(n)
}

/// The path of an oracleGeneral source that can be mapped: not a `.zst`
/// one, which is a stream to decode and takes the generic path.
fn mapped_oracle(source: &Source) -> Option<&Path> {
    match source {
        Source::Oracle(path) if !crate::trace::lines::is_zstd(path) => Some(path),
        _ => None,
    }
}

/// The SHARDS approximation of the LRU miss-ratio curve.
pub fn shards(
    source: &Source,
    sampling: Sampling,
    opts: &MrcOptions,
    mut progress: impl Progress,
) -> Result<Mrc, Error> {
    let mut s = Shards::new(sampling, opts)?;
    let (mut n, mut counted) = (0u64, 0u64);
    if let Some(path) = mapped_oracle(source) {
        // oracleGeneral holds only reads: look at the key of each raw
        // record and decode the size of the few sampled ones, on two
        // threads.
        n = filter_oracle(path, &mut s, &mut progress)?;
        counted = n;
    } else {
        let mut src = open(source)?;
        let mut buf = Vec::with_capacity(BATCH);
        while src.next_batch(&mut buf, BATCH)? > 0 {
            for r in &buf {
                counted += (r.op != Op::Delete) as u64;
                s.request(r.key, r.size, r.op);
            }
            n += buf.len() as u64;
            if !progress(n) {
                return Err(TraceError::Interrupted.into());
            }
        }
        crate::trace::empty_check(n, &*src)?;
    }
    Ok(s.finish(n, counted))
}

/// Capacities `caps` (adding up to `sum`) scaled to add up to `size`:
/// rounded down, then the units left over go to the largest remainders
/// (Hamilton's method), so the total is exactly `size`; at least one each.
fn scale(caps: &[u64], sum: u64, size: u64) -> Vec<u64> {
    let exact: Vec<(u64, u128)> = caps
        .iter()
        .map(|&c| {
            let p = c as u128 * size as u128;
            ((p / sum as u128) as u64, p % sum as u128)
        })
        .collect();
    let mut out: Vec<u64> = exact.iter().map(|e| e.0).collect();
    let left = size.saturating_sub(out.iter().sum());
    let mut order: Vec<usize> = (0..caps.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(exact[i].1));
    for &i in order.iter().take(left as usize) {
        out[i] += 1;
    }
    out.iter().map(|&c| c.max(1)).collect()
}

/// Requests read at once and handed to every simulator.
const SIM_BATCH: usize = 1 << 16;

/// The miss ratio of a whole hierarchy at each of `sizes`, one simulator
/// per size, all fed from one read of the trace by parallel threads.
///
/// A size is the total capacity of the hierarchy: each tier's capacity in
/// the config is scaled by size / (sum of the config's capacities), so a
/// single tier gets exactly `size` and several keep their proportions,
/// rounded to add up to `size` (at least one unit each). Sizes given as a share resolve against the
/// footprint (bytes, or objects with `unit_size`), like capacities.
pub fn simulate_sizes(
    cfg: &Config,
    sizes: &[Size],
    mut progress: impl Progress,
) -> Result<Mrc, Error> {
    let w = cfg.workload()?;
    let source = w.source()?;
    let needs_footprint = sizes
        .iter()
        .chain(cfg.tiers.iter().map(|t| &t.capacity))
        .any(|s| matches!(s, Size::Percent(_)));
    let footprint = if needs_footprint {
        let s = trace_stats(&source, |_| true)?;
        if w.unit_size {
            s.unique_keys
        } else {
            s.footprint_bytes
        }
    } else {
        0
    };
    let mut abs: Vec<u64> = sizes.iter().map(|s| s.resolve(footprint)).collect();
    abs.sort_unstable();
    abs.dedup();
    if abs.is_empty() {
        return Err(ConfigError::at("sizes", "give at least one size").into());
    }
    if abs[0] == 0 {
        return Err(ConfigError::at(
            "sizes",
            format!("a size resolves to 0 (footprint {footprint}); every size must be at least one unit"),
        )
        .into());
    }
    let caps: Vec<u64> = cfg
        .tiers
        .iter()
        .map(|t| t.capacity.resolve(footprint).max(1))
        .collect();
    let sum: u64 = caps.iter().sum();
    let seed = w.seed.unwrap_or(42);
    let mut sims = Vec::with_capacity(abs.len());
    for &size in &abs {
        let mut c = cfg.clone();
        for (t, cap) in c.tiers.iter_mut().zip(scale(&caps, sum, size)) {
            t.capacity = Size::Absolute(cap);
        }
        sims.push(crate::sim::build_hierarchy(&c, footprint, w.unit_size, seed)?.0);
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(sims.len())
        .max(1);
    let per = sims.len().div_ceil(threads);
    let mut src = open(&source)?;
    let mut buf: Vec<Request> = Vec::with_capacity(SIM_BATCH);
    let mut n = 0u64;
    let limit = cfg.run.max_requests.unwrap_or(u64::MAX);
    while n < limit {
        let want = (limit - n).min(SIM_BATCH as u64) as usize;
        if src.next_batch(&mut buf, want)? == 0 {
            break;
        }
        let batch = &buf;
        std::thread::scope(|sc| {
            for group in sims.chunks_mut(per) {
                sc.spawn(move || {
                    for h in group {
                        for r in batch {
                            h.access_inlined(r);
                        }
                    }
                });
            }
        });
        n += buf.len() as u64;
        if !progress(n) {
            return Err(TraceError::Interrupted.into());
        }
    }
    crate::trace::empty_check(n, &*src)?;
    let points = abs
        .iter()
        .zip(&sims)
        .map(|(&s, h)| {
            let t = &h.totals;
            (s, crate::stats::ratio(t.misses, t.reads + t.writes))
        })
        .collect();
    Ok(Mrc::new(points, n, n, 0))
}

#[cfg(test)]
mod tests;

/// Parses sizes as capacities are written ("10%", "1GiB", 4096); the error
/// names the position in the list.
pub fn parse_sizes<S: AsRef<str>>(sizes: &[S]) -> Result<Vec<Size>, ConfigError> {
    if sizes.is_empty() {
        return Err(ConfigError::at("sizes", "give at least one size"));
    }
    sizes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            match crate::units::parse_size(s.as_ref()) {
                Ok(Size::Absolute(0)) => Err("must be greater than zero".to_string()),
                r => r,
            }
            .map_err(|m| ConfigError::at(format!("sizes[{i}]"), m))
        })
        .collect()
}

/// Sizes made absolute: a share resolves against the source's footprint
/// (bytes, or distinct keys with `unit_size`), read in a pre-pass only when
/// a share is given.
pub fn resolve_sizes(source: &Source, sizes: &[Size], unit_size: bool) -> Result<Vec<u64>, Error> {
    let footprint = if sizes.iter().any(|s| matches!(s, Size::Percent(_))) {
        let st = trace_stats(source, |_| true)?;
        if unit_size {
            st.unique_keys
        } else {
            st.footprint_bytes
        }
    } else {
        0
    };
    let out: Vec<u64> = sizes.iter().map(|s| s.resolve(footprint)).collect();
    if let Some(i) = out.iter().position(|&s| s == 0) {
        return Err(ConfigError::at(
            format!("sizes[{i}]"),
            format!(
                "\"{}\" of a footprint of {footprint} is less than one unit; use a larger share or an absolute size",
                sizes[i]
            ),
        )
        .into());
    }
    Ok(out)
}
