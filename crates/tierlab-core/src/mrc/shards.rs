//! SHARDS (Waldspurger et al., FAST 2015; module docs of [`super`]): the
//! generic pass over any source, and a two-thread pass over a mapped
//! oracleGeneral file that filters raw records.

use super::hist::Hist;
use super::stack::Stack;
use super::{Mrc, MrcOptions, Progress};
use crate::error::Error;
use crate::request::Op;
use crate::source::setup::Batches;
use crate::source::trace::oracle::{OracleReader, RECORD};
use crate::source::trace::TraceError;
use crate::source::Source;
use crate::spec::ConfigError;
use std::path::Path;

/// Requests between progress calls on the raw path.
pub(super) const RAW_CHUNK: usize = 1 << 16;

/// SHARDS sampling: a fixed rate, or a fixed number of sampled keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Keep keys whose hash falls below rate * 2^24.
    Rate(f64),
    /// Keep at most this many keys, lowering the threshold as needed.
    Size(usize),
}

/// The hash space SHARDS samples from (the paper's P).
pub(super) const MODULUS: u64 = 1 << 24;

/// The sampling hash: splitmix64's finaliser (Steele, Lea, Flood, "Fast
/// splittable pseudorandom number generators", OOPSLA 2014). Independent of
/// the map's hash, whose low bits pick buckets: sampling on those would
/// leave the stack's map with a few crowded buckets.
#[inline(always)]
pub(super) fn sample_hash(k: u64) -> u64 {
    let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) & (MODULUS - 1)
}

/// The state of a SHARDS pass.
pub(super) struct Shards {
    stack: Stack,
    hist: Hist,
    threshold: u64,
    unit: bool,
    /// Fixed size: the sampled keys by hash, largest first out.
    heap: Option<(std::collections::BinaryHeap<(u64, u64)>, usize)>,
    pub(super) sampled: u64,
    /// MODULUS / threshold: 1 / the sampling rate.
    inv_rate: f64,
}

impl Shards {
    pub(super) fn new(sampling: Sampling, opts: &MrcOptions) -> Result<Self, ConfigError> {
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
    pub(super) fn request(&mut self, key: u64, size: u32, op: Op) {
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

    pub(super) fn finish(mut self, requests: u64, counted: u64) -> Mrc {
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
    use crate::source::trace::TraceSource;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
    use std::sync::mpsc::{self, TryRecvError};
    let mut other = OracleReader::open(path)?;
    let mut mine = OracleReader::open(path)?;
    let chunks = (other.len_hint().expect("a file's length") as usize).div_ceil(RAW_CHUNK);
    let claims = AtomicUsize::new(0);
    let threshold = AtomicU64::new(s.threshold);
    // Two batches in flight let the other thread run ahead; used buffers go
    // back to it so that the pass allocates a handful.
    let (full_tx, full_rx) = mpsc::sync_channel::<(usize, Sampled, u64)>(2);
    let (empty_tx, empty_rx) = mpsc::channel::<Sampled>();
    let (claims_ref, th) = (&claims, &threshold);
    let mut n = 0u64;
    let mut interrupted = false;
    let mut failed: Option<TraceError> = None;
    std::thread::scope(|scope| {
        let filter = scope.spawn(move || -> Result<(), TraceError> {
            // Claims only grow, so the reader only moves forward.
            let mut at = 0;
            loop {
                let k = claims_ref.fetch_add(1, Relaxed);
                if k >= chunks {
                    break Ok(());
                }
                other.skip((k - at) * RAW_CHUNK)?;
                let raw = other.next_raw(RAW_CHUNK)?;
                at = k + 1;
                let mut out = empty_rx.try_recv().unwrap_or_default();
                sample_raw(raw, th.load(Relaxed), &mut out);
                // The receiver is gone when the pass was interrupted.
                if full_tx.send((k, out, (raw.len() / RECORD) as u64)).is_err() {
                    break Ok(());
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
                            let raw = match mine.skip((k - at) * RAW_CHUNK) {
                                Ok(()) => mine.next_raw(RAW_CHUNK),
                                Err(e) => Err(e),
                            };
                            let raw = match raw {
                                Ok(raw) => raw,
                                Err(e) => {
                                    failed = Some(e);
                                    break;
                                }
                            };
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
        // The other thread stops at its next send once the receiver is
        // gone; its read error, if any, ended the loop above.
        drop(full_rx);
        match filter.join() {
            Ok(Err(e)) if failed.is_none() => failed = Some(e),
            Ok(_) => {}
            Err(panic) => std::panic::resume_unwind(panic),
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    if interrupted {
        return Err(TraceError::Interrupted.into());
    }
    Ok(n)
}

/// The path of an oracleGeneral source read in raw chunks: not a `.zst`
/// one, which is a stream to decode and takes the generic path.
fn mapped_oracle(source: &Source) -> Option<&Path> {
    match source {
        Source::Oracle(path) if !crate::source::trace::lines::is_zstd(path) => Some(path),
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
    let (n, counted) = if let Some(path) = mapped_oracle(source) {
        // oracleGeneral holds only reads: look at the key of each raw
        // record and decode the size of the few sampled ones, on two
        // threads.
        let n = filter_oracle(path, &mut s, &mut progress)?;
        (n, n)
    } else {
        let mut counted = 0u64;
        let n = Batches::open(source)?.drive(progress, |buf| {
            for r in buf {
                counted += (r.op != Op::Delete) as u64;
                s.request(r.key, r.size, r.op);
            }
            Ok::<(), TraceError>(())
        })?;
        (n, counted)
    };
    Ok(s.finish(n, counted))
}
