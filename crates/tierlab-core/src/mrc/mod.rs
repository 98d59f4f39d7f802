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

//!
//! [`Method`] is the one place that chooses among them from what a caller
//! asked (`tierlab mrc`'s options, `tierlab.mrc(...)`'s arguments).
//!
//! Files: `stack.rs` the LRU stack, `hist.rs` the distance histograms,
//! `shards.rs` SHARDS, `simulate.rs` simulated sizes and size lists,
//! `run/curve.rs` the choice of method, `trust.rs` the sizes a SHARDS
//! sample supports. Every pass reads its source through
//! [`crate::source::setup`].

mod hist;
mod shards;
mod stack;
pub(crate) mod trust;

use crate::source::setup::Progress;
pub use shards::{shards, Sampling};
pub use stack::Stack;
pub use trust::{LeftOut, SHARDS_MIN_SAMPLED};

use crate::index::SlotIndex;
use crate::request::Op;
use crate::source::setup::Batches;
use crate::source::trace::TraceError;
use crate::source::Source;
use hist::Hist;

/// How many requests ahead [`exact`] prefetches a key's index bucket (and
/// half as many ahead, its leaf block): far enough to cover a memory
/// latency at ~100 ns per request.
const AHEAD: usize = 16;

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
    /// With sizes given (to [`curve`]): each point's size as the caller
    /// wrote it ("10%", "1MiB", "500"), in the order of the points. Sizes
    /// that resolve alike make one point, labelled as first given.
    pub labels: Option<Vec<String>>,
    /// A SHARDS curve through [`curve`]: the sizes its sample is too small
    /// for, left out (`trust.rs`), and the note that says so.
    pub left_out: Option<LeftOut>,
}

impl Mrc {
    pub(crate) fn new(points: Vec<(u64, f64)>, requests: u64, sampled: u64, largest: u64) -> Self {
        let (sizes, miss_ratios) = points.into_iter().unzip();
        Mrc {
            sizes,
            miss_ratios,
            requests,
            sampled,
            largest,
            labels: None,
            left_out: None,
        }
    }

    /// Labels each point with the first of `given` (sizes as written)
    /// whose resolved size (`resolved`, in the same order) is the point's.
    pub(crate) fn label(&mut self, given: &[String], resolved: &[u64]) {
        let labels = self
            .sizes
            .iter()
            .map(|s| {
                resolved
                    .iter()
                    .position(|r| r == s)
                    .map_or_else(|| s.to_string(), |i| given[i].clone())
            })
            .collect();
        self.labels = Some(labels);
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

/// The exact LRU miss-ratio curve of a source, in one pass.
pub fn exact(
    source: &Source,
    opts: &MrcOptions,
    progress: impl Progress,
) -> Result<Mrc, TraceError> {
    let mut stack = Stack::new();
    let mut hist = Hist::new(opts.sizes.as_deref());
    let unit = opts.unit_size;
    let mut counted = 0u64;
    let mut batches = Batches::open(source)?;
    let n = batches.drive(progress, |buf| {
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
        Ok::<(), TraceError>(())
    })?;
    Ok(Mrc::new(
        hist.curve(counted as f64),
        n,
        counted,
        stack.largest as u64,
    ))
}

#[cfg(test)]
mod tests;
