//! Where stack distances are counted: log-linear bins over every distance,
//! or one bin per size asked for.

/// Sub-buckets per power of two of the log-linear histogram: distances below
/// 2^12 are kept exactly, larger ones in bins 1/2048 of their value wide.
const SUB_BITS: u32 = 12;

#[inline(always)]
pub(super) fn bin_of(d: u64) -> usize {
    let bits = 64 - d.leading_zeros();
    if bits <= SUB_BITS {
        return d as usize;
    }
    let shift = bits - SUB_BITS;
    let half = 1usize << (SUB_BITS - 1);
    (1 << SUB_BITS) + (shift as usize - 1) * half + ((d >> shift) as usize - half)
}

/// The largest distance in bin `b` (the curve is exact at these sizes).
pub(super) fn bin_top(b: usize) -> u64 {
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
pub(super) struct AtSizes {
    pub(super) sizes: Vec<u64>,
    /// `below[l]`: how many sizes lie below the first distance of log bin
    /// `l` (`bin_of`), for every log bin up to the one past the largest
    /// size. Most log bins hold no size, and then that count is the answer.
    below: Vec<u32>,
}

impl AtSizes {
    pub(super) fn new(mut sizes: Vec<u64>) -> Self {
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
    pub(super) fn count_below(&self, d: u64) -> usize {
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
pub(super) struct Hist {
    bins: Bins,
    pub(super) counts: Vec<f64>,
    pub(super) cold: f64,
}

impl Hist {
    pub(super) fn new(sizes: Option<&[u64]>) -> Self {
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
    pub(super) fn add(&mut self, d: Option<u64>, w: f64) {
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
    pub(super) fn curve(&self, total: f64) -> Vec<(u64, f64)> {
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
