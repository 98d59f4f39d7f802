//! Setting up a pass over a source, in one place for every command: the
//! footprint pre-pass (capacities and sizes given as a share of it), the
//! next-access pre-pass (Belady needs each request's next access), and the
//! batch loop with progress and interruption. `run` (the driver of run/driver.rs),
//! `mrc` (exact, SHARDS, simulated sizes), `trace stats|convert` and the
//! benches all read their requests through here, so a curve and a run of
//! the same config see the same requests, cut at the same limit, with the
//! same next-access times.
//!
//! The per-request work stays with the caller: [`Batches::next_batch`] hands out
//! a slice, and [`Batches::drive`] calls a closure once per batch (generic,
//! so each caller's loop is compiled into its own code, as if written there).

use crate::error::Error;
use crate::hash::{KeyMap, KeySet};
use crate::request::Request;
use crate::source::open;
#[cfg(test)]
use crate::source::trace::next_access::next_access_times;
use crate::source::trace::next_access::{next_access_times_upto, WithNextAccess};
use crate::source::trace::{TraceError, TraceSource};
use crate::source::{Source, WorkloadConfig};
use crate::spec::ConfigError;
use crate::units::Size;

/// Requests decoded per batch: large enough to amortise the one dynamic call
/// per batch, small enough to stay in L1/L2.
pub const BATCH: usize = 4096;

/// How a pass reports progress: told the requests read so far (pre-passes
/// included), returns false to stop (the caller was interrupted).
pub trait Progress: FnMut(u64) -> bool {}
impl<F: FnMut(u64) -> bool> Progress for F {}

/// A stream of requests read batch by batch, up to a limit.
pub struct Batches {
    src: Box<dyn TraceSource>,
    buf: Vec<Request>,
    size: usize,
    read: u64,
    limit: u64,
    /// Requests read by the pre-passes before this stream: progress counts
    /// on from there, so that a caller's "every N requests" ticks go on.
    offset: u64,
    done: bool,
}

impl Batches {
    /// Batches of `size` requests from `src`, to its end.
    pub fn new(src: Box<dyn TraceSource>, size: usize) -> Self {
        Batches {
            src,
            buf: Vec::with_capacity(size),
            size,
            read: 0,
            limit: u64::MAX,
            offset: 0,
            done: false,
        }
    }

    /// A fresh stream of the source's requests in batches of [`BATCH`].
    pub fn open(source: &Source) -> Result<Self, TraceError> {
        Ok(Batches::new(open(source)?, BATCH))
    }

    /// Stops after `max` requests (`[run] max_requests`).
    pub fn limit(mut self, max: u64) -> Self {
        self.limit = max;
        self
    }

    /// The next batch, or None when the source (or the limit) is reached.
    #[inline]
    pub fn next_batch(&mut self) -> Result<Option<&[Request]>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let want = (self.limit - self.read).min(self.size as u64) as usize;
        if want == 0 || self.src.next_batch(&mut self.buf, want)? == 0 {
            self.done = true;
            return Ok(None);
        }
        self.read += self.buf.len() as u64;
        Ok(Some(&self.buf))
    }

    /// `next_batch`, handed over in `out` without a copy: the stream's
    /// buffer and `out` are swapped (what `out` held is dropped). False
    /// when the source (or the limit) is reached.
    pub fn next_batch_swap(&mut self, out: &mut Vec<Request>) -> Result<bool, TraceError> {
        if self.next_batch()?.is_none() {
            return Ok(false);
        }
        std::mem::swap(&mut self.buf, out);
        self.buf.clear();
        Ok(true)
    }

    /// Requests handed out so far.
    pub fn read(&self) -> u64 {
        self.read
    }

    /// Requests read so far, the pre-passes' included: what progress sees.
    pub fn progress_count(&self) -> u64 {
        self.offset + self.read
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Total requests of the stream, when known.
    pub fn len_hint(&self) -> Option<u64> {
        self.src.len_hint().map(|n| n.min(self.limit))
    }

    pub fn describe(&self) -> String {
        self.src.describe()
    }

    /// Malformed records passed over (`skip_bad`).
    pub fn skipped(&self) -> u64 {
        self.src.skipped()
    }

    /// A source that gave no requests at all is an error.
    pub fn check_empty(&self) -> Result<(), TraceError> {
        crate::source::trace::empty_check(self.read, &*self.src)
    }

    /// The batch loop: `each` sees every batch left, then `progress` the
    /// count so far; false from it stops the pass with
    /// [`TraceError::Interrupted`]. An empty source is an error. Returns the
    /// requests read.
    #[inline]
    pub fn drive<E: From<TraceError>>(
        &mut self,
        mut progress: impl Progress,
        mut each: impl FnMut(&[Request]) -> Result<(), E>,
    ) -> Result<u64, E> {
        while let Some(batch) = self.next_batch()? {
            each(batch)?;
            if !progress(self.offset + self.read) {
                return Err(TraceError::Interrupted.into());
            }
        }
        self.check_empty()?;
        Ok(self.read)
    }
}

/// Why a pass cannot have memory it asked for (see [`TraceError::Memory`]).
pub const NOT_ALLOCATED: &str = "which could not be allocated";

/// The hint of a pre-pass that cannot have the memory it needs.
pub const MEMORY_HINT: &str =
    "set [run] max_requests (a run's pre-passes read no further than it), or a smaller workload";

/// A set or map of keys that can make room for one more without an abort.
pub trait Room {
    /// Bytes per entry (the entry and its control byte).
    const ENTRY: u64;
    fn len_and_capacity(&self) -> (usize, usize);
    fn try_more(&mut self, more: usize) -> bool;

    /// Room for one more entry, grown as an insert would grow it
    /// (doubling), but a failed allocation is [`TraceError::Memory`]
    /// naming `what(entries held)` and the bytes asked, not an abort. Two lengths
    /// compared per insert: nothing measurable in a pass.
    #[inline]
    fn room_for_one(&mut self, what: impl FnOnce(usize) -> String) -> Result<(), TraceError> {
        self.room_for(1, what)
    }

    /// [`Room::room_for_one`] for `n` more entries at once (a batch's keys,
    /// not all distinct: room for all is room enough).
    #[inline]
    fn room_for(&mut self, n: usize, what: impl FnOnce(usize) -> String) -> Result<(), TraceError> {
        let (len, cap) = self.len_and_capacity();
        if len.saturating_add(n) <= cap {
            return Ok(());
        }
        let more = len.max(1024).max(n);
        if self.try_more(more) {
            return Ok(());
        }
        let buckets = ((len + more) as u64 * 8 / 7).next_power_of_two();
        Err(TraceError::Memory {
            what: what(len),
            bytes: buckets.saturating_mul(Self::ENTRY),
            why: NOT_ALLOCATED.into(),
            hint: MEMORY_HINT.into(),
        })
    }
}

impl Room for KeySet {
    const ENTRY: u64 = 9;
    fn len_and_capacity(&self) -> (usize, usize) {
        (self.len(), self.capacity())
    }
    fn try_more(&mut self, more: usize) -> bool {
        self.try_reserve(more).is_ok()
    }
}

impl<V> Room for KeyMap<V> {
    const ENTRY: u64 = 9 + std::mem::size_of::<V>() as u64;
    fn len_and_capacity(&self) -> (usize, usize) {
        (self.len(), self.capacity())
    }
    fn try_more(&mut self, more: usize) -> bool {
        self.try_reserve(more).is_ok()
    }
}

/// What a whole pass read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub requests: u64,
    /// Malformed records passed over (`skip_bad`).
    pub skipped: u64,
}

/// One pass over a source: opens it and [`Batches::drive`]s `each`.
pub fn pass<E: From<TraceError>>(
    source: &Source,
    progress: impl Progress,
    each: impl FnMut(&[Request]) -> Result<(), E>,
) -> Result<Pass, E> {
    pass_upto(source, u64::MAX, progress, each)
}

/// [`pass`] over the source's first `limit` requests (`[run]
/// max_requests`): a pre-pass of a run reads what the run will read, and
/// no more, however long the source.
pub fn pass_upto<E: From<TraceError>>(
    source: &Source,
    limit: u64,
    progress: impl Progress,
    each: impl FnMut(&[Request]) -> Result<(), E>,
) -> Result<Pass, E> {
    let mut b = Batches::open(source)?.limit(limit);
    let requests = b.drive(progress, each)?;
    Ok(Pass {
        requests,
        skipped: b.skipped(),
    })
}

/// The footprint a share resolves against (bytes of the distinct objects,
/// or distinct keys with `unit_size`), read in a pre-pass only when one of
/// `sizes` is a share; 0 when none is (nothing needs it). Also returns the
/// requests the pre-pass read (0 without one), for progress.
pub fn footprint<'a>(
    source: &Source,
    unit_size: bool,
    sizes: impl IntoIterator<Item = &'a Size>,
    progress: impl Progress,
) -> Result<(u64, u64), TraceError> {
    footprint_upto(source, unit_size, sizes, u64::MAX, progress)
}

/// [`footprint`] of the source's first `limit` requests: the footprint of
/// what a run cut at `[run] max_requests` reads, read in as many.
pub fn footprint_upto<'a>(
    source: &Source,
    unit_size: bool,
    sizes: impl IntoIterator<Item = &'a Size>,
    limit: u64,
    progress: impl Progress,
) -> Result<(u64, u64), TraceError> {
    if !sizes.into_iter().any(|s| matches!(s, Size::Percent(_))) {
        return Ok((0, 0));
    }
    let s = crate::source::tools::trace_stats_upto(source, limit, progress)?;
    let f = if unit_size {
        s.unique_keys
    } else {
        s.footprint_bytes
    };
    Ok((f, s.requests))
}

/// Pages by reference, for a paging run of multilevel main memory: the
/// distinct pages (the footprint a node's share resolves against) and, on
/// request, each page's references over the run and in each epoch (the
/// oracles' pre-pass). A page is `tag(process, page number)`, the process
/// numbered by its first reference that is not a delete, as the paging
/// run numbers them; a reference counts once per page it spans.
#[derive(Clone, Debug, Default)]
pub struct PageCounts {
    /// Distinct pages of every record, deletes included, keyed by the
    /// record's pid (as the `[vm]` run's footprint pass counts them).
    pub footprint_pages: u64,
    /// References per page (when asked for).
    pub counts: Option<KeyMap<u64>>,
    /// References per page in each epoch of `epoch` page references (when
    /// asked for).
    pub epochs: Option<Vec<KeyMap<u64>>>,
    /// Records the pre-pass read.
    pub read: u64,
}

/// [`PageCounts`] of the first `limit` records of `source` at pages of
/// `1 << shift` bytes: counts when `counts`, per-epoch counts when `epoch`
/// is Some (page references per epoch). Bounded by `limit` like every
/// pre-pass (`[run] max_requests`).
pub fn page_counts(
    source: &Source,
    shift: u32,
    tag: impl Fn(u64, u64) -> u64,
    counts: bool,
    epoch: Option<u64>,
    limit: u64,
    progress: impl Progress,
) -> Result<PageCounts, TraceError> {
    let mut seen = KeySet::default();
    let mut pids: KeyMap<u64> = KeyMap::default();
    let mut all: KeyMap<u64> = KeyMap::default();
    let mut epochs: Vec<KeyMap<u64>> = Vec::new();
    let mut refs = 0u64;
    let pass = pass_upto(source, limit, progress, |batch| {
        for r in batch {
            let first = r.key >> shift;
            let last = r.key.saturating_add(r.size.max(1) as u64 - 1) >> shift;
            for p in first..=last {
                seen.insert(tag(r.pid as u64, p));
            }
            if r.op == crate::request::Op::Delete || !(counts || epoch.is_some()) {
                continue;
            }
            let n = pids.len() as u64;
            let pi = *pids.entry(r.pid as u64).or_insert(n);
            for p in first..=last {
                let t = tag(pi, p);
                if counts {
                    *all.entry(t).or_insert(0) += 1;
                }
                if let Some(e) = epoch {
                    let i = (refs / e) as usize;
                    if i == epochs.len() {
                        epochs.push(KeyMap::default());
                    }
                    *epochs[i].entry(t).or_insert(0) += 1;
                }
                refs += 1;
            }
        }
        Ok::<(), TraceError>(())
    })?;
    Ok(PageCounts {
        footprint_pages: seen.len() as u64,
        counts: counts.then_some(all),
        epochs: epoch.map(|_| epochs),
        read: pass.requests,
    })
}

/// Whether a source's requests carry their next-access times already
/// (oracleGeneral, plain or zstd-compressed).
pub fn carries_next_access(source: &Source) -> bool {
    matches!(source, Source::Oracle(_))
}

/// A fresh stream of the source's requests in batches of `size`; with
/// `next_access`, each request carries the time of its key's next one:
/// from the file when it has them, else from a pre-pass over the keys
/// (whose progress counts before the stream's). `limit`: the requests the
/// caller will read (`max_requests`), which bounds the pre-pass's memory.
pub fn open_stream(
    source: &Source,
    size: usize,
    next_access: bool,
    limit: u64,
    progress: impl Progress,
) -> Result<Batches, TraceError> {
    if next_access && !carries_next_access(source) {
        let (next, read) = next_access_times_upto(source, limit, progress)?;
        let src = Box::new(WithNextAccess::new(next, open(source)?));
        let mut b = Batches::new(src, size);
        b.offset = read;
        return Ok(b);
    }
    Ok(Batches::new(open(source)?, size))
}

/// What a run of a config reads, made concrete once for every command
/// that runs its hierarchy (`run`, `mrc --policy|--config`).
#[derive(Clone, Debug)]
pub struct RunSetup {
    pub source: Source,
    /// Every object counts as size 1.
    pub unit_size: bool,
    /// Seeds randomised policies.
    pub seed: u64,
    /// What shares resolve against (bytes, or objects with `unit_size`);
    /// 0 when no capacity or size is a share.
    pub footprint: u64,
    /// A tier runs Belady: the stream carries next-access times.
    pub next_access: bool,
    /// `[run] max_requests`, or no limit.
    pub max_requests: u64,
    /// Requests the footprint pre-pass read (progress counts on from it).
    pub read: u64,
}

impl RunSetup {
    /// The setup of `workload`: its source, checked, and the footprint
    /// read when one of `shares` (tier capacities, mrc's sizes) is a share
    /// of it; `next_access` when a tier needs next-access times (Belady);
    /// `max_requests` from `[run]`. (A config's: run/assembly.rs.)
    pub fn new<'a>(
        w: &WorkloadConfig,
        shares: impl IntoIterator<Item = &'a Size>,
        next_access: bool,
        max_requests: Option<u64>,
        progress: impl Progress,
    ) -> Result<Self, Error> {
        let source = w.source()?;
        let max_requests = max_requests.unwrap_or(u64::MAX);
        let (footprint, read) =
            footprint_upto(&source, w.unit_size, shares, max_requests, progress)?;
        Ok(RunSetup {
            source,
            unit_size: w.unit_size,
            seed: w.seed.unwrap_or(42),
            footprint,
            next_access,
            max_requests,
            read,
        })
    }

    /// The requests of one pass of the run (the source's, cut at
    /// `max_requests`), counted in a pre-pass that reads no further than
    /// the run will: for a warm-up given as a share of a source that
    /// cannot say its length. `progress` counts on from the footprint
    /// pre-pass; false from it stops the count.
    pub fn count_requests(&self, mut progress: impl Progress) -> Result<u64, TraceError> {
        let before = self.read;
        let p = pass_upto(
            &self.source,
            self.max_requests,
            |n| progress(before + n),
            |_| Ok::<(), TraceError>(()),
        )?;
        Ok(p.requests)
    }

    /// The run's requests in batches of `size`, cut at `max_requests`,
    /// with next-access times when a tier needs them.
    pub fn open(&self, size: usize, mut progress: impl Progress) -> Result<Batches, TraceError> {
        let before = self.read;
        let mut b = open_stream(
            &self.source,
            size,
            self.next_access,
            self.max_requests,
            |n| progress(before + n),
        )?;
        b.offset += before;
        Ok(b.limit(self.max_requests))
    }
}

/// Sizes made absolute against a footprint; a size that comes to less than
/// one unit is an error naming it (`what[i]`, as the user wrote it).
pub fn resolve(sizes: &[Size], footprint: u64, what: &str) -> Result<Vec<u64>, ConfigError> {
    let out: Vec<u64> = sizes.iter().map(|s| s.resolve(footprint)).collect();
    if let Some(i) = out.iter().position(|&s| s == 0) {
        return Err(ConfigError::at(
            format!("{what}[{i}]"),
            format!(
                "\"{}\" of a footprint of {footprint} is less than one unit; use a larger share or an absolute size",
                sizes[i]
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::synth::{Pattern, SynthSpec};

    fn zipf(requests: u64) -> Source {
        Source::Synth(SynthSpec {
            pattern: Pattern::Zipf { alpha: 1.0 },
            objects: 100,
            requests,
            object_size: 1,
            seed: 7,
            write_ratio: 0.0,
        })
    }

    #[test]
    fn batches_stop_at_the_limit_and_the_end() {
        let mut b = Batches::new(open(&zipf(10_000)).unwrap(), 3000).limit(7000);
        let mut lens = Vec::new();
        while let Some(batch) = b.next_batch().unwrap() {
            lens.push(batch.len());
        }
        assert_eq!(lens, [3000, 3000, 1000]);
        assert!(b.is_done() && b.next_batch().unwrap().is_none());
        assert_eq!(b.len_hint(), Some(7000));
        let p = pass(&zipf(10_000), |_| true, |_| Ok::<(), TraceError>(())).unwrap();
        assert_eq!(p.requests, 10_000);
    }

    #[test]
    fn a_pass_stops_when_progress_says_so() {
        let mut calls = 0;
        let r = pass(
            &zipf(100_000),
            |_| {
                calls += 1;
                calls < 3
            },
            |_| Ok::<(), TraceError>(()),
        );
        assert!(matches!(r, Err(TraceError::Interrupted)));
        assert_eq!(calls, 3);
    }

    #[test]
    fn pre_passes_read_no_further_than_the_run() {
        // A capacity as a share of a 2-billion-request source, with
        // max_requests = 20,000: the footprint pass reads 20,000 requests
        // (it read all 2 billion), and the footprint is theirs.
        let long = zipf(2_000_000_000);
        let share = [Size::Percent(50.0)];
        let mut last = 0;
        let (f, read) = footprint_upto(&long, false, &share, 20_000, |n| {
            last = n;
            true
        })
        .unwrap();
        assert_eq!((read, last), (20_000, 20_000));
        let whole = crate::source::tools::trace_stats(&zipf(20_000), |_| true).unwrap();
        assert_eq!(f, whole.footprint_bytes);
        // A run's setup cuts it the same way, and so does its count of
        // requests (a warm-up share of a source of unknown length).
        let cfg = crate::config::Config::from_toml_str(
            "[workload]\ntype = \"zipf\"\nobjects = 100\nrequests = 2_000_000_000\n\
             [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"50%\"\n",
        )
        .unwrap();
        let w = cfg.workload().unwrap();
        let run = RunSetup::new(w, &share, false, Some(20_000), |_| true).unwrap();
        assert_eq!(run.read, 20_000);
        let mut seen = 0;
        let n = run
            .count_requests(|n| {
                seen = n;
                true
            })
            .unwrap();
        assert_eq!((n, seen), (20_000, 40_000));
        // Without a limit a pass reads on, and stops when progress says so.
        let mut calls = 0;
        let r = footprint(&long, false, &share, |_| {
            calls += 1;
            calls < 5
        });
        assert!(matches!(r, Err(TraceError::Interrupted)), "{r:?}");
    }

    #[test]
    fn a_set_that_cannot_grow_is_an_error_naming_the_bytes() {
        // A set grows through room_for_one as an insert would grow it...
        let mut set = KeySet::default();
        for k in 0..10_000 {
            set.room_for_one(|_| unreachable!()).unwrap();
            set.insert(k);
        }
        assert!(set.capacity() >= 10_000);
        // ...and one whose allocation fails says what asked and how much.
        struct Full;
        impl Room for Full {
            const ENTRY: u64 = 16;
            fn len_and_capacity(&self) -> (usize, usize) {
                (7000, 7000)
            }
            fn try_more(&mut self, _: usize) -> bool {
                false
            }
        }
        let e = Full.room_for_one(|n| format!("the {n} keys")).unwrap_err();
        // 14,000 entries at 8/7 per bucket: 16,384 buckets of 16 bytes.
        assert_eq!(
            e.to_string(),
            format!(
                "the 7000 keys needs 262144 bytes (256 KiB) of memory, which could not be allocated\nhint: {MEMORY_HINT}"
            )
        );
    }

    #[test]
    fn next_access_times_come_from_a_pre_pass() {
        // The stream's times equal those a direct pass computes, and
        // progress counts the pre-pass first.
        let want = next_access_times(&zipf(5000), |_| true).unwrap();
        let mut seen = Vec::new();
        let mut b = open_stream(&zipf(5000), BATCH, true, u64::MAX, |n| {
            seen.push(n);
            true
        })
        .unwrap();
        assert_eq!(seen.last(), Some(&5000));
        let mut got = Vec::new();
        b.drive(
            |n| {
                seen.push(n);
                true
            },
            |batch| {
                got.extend(batch.iter().map(|r| r.next_access));
                Ok::<(), TraceError>(())
            },
        )
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(seen.last(), Some(&10_000));
        assert!(want.iter().any(|&t| t > 0) && want.contains(&-1));
    }

    #[test]
    fn next_access_times_up_to_a_limit_are_exact_in_its_memory() {
        let whole = next_access_times(&zipf(20_000), |_| true).unwrap();
        for limit in [0, 1, 77, 4096, 5000, 19_999, 20_000, 50_000] {
            let (cut, read) = next_access_times_upto(&zipf(20_000), limit, |_| true).unwrap();
            let n = (limit as usize).min(whole.len());
            assert_eq!(cut, whole[..n], "limit {limit}");
            assert!(read >= n as u64 && read <= 20_000);
        }
        // 100 keys: every one comes back soon, so reading stops early.
        let (_, read) = next_access_times_upto(&zipf(1_000_000), 1000, |_| true).unwrap();
        assert!(read < 100_000, "{read}");
    }
}
