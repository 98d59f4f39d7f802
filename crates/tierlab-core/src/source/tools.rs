//! Tools over a source that run no cache: a trace's statistics (one pass:
//! counts, distinct keys, footprint) and its conversion to oracleGeneral or
//! CSV (`tierlab trace stats|convert`).

use super::setup::{pass, pass_upto, Progress, Room};
use super::Source;
use crate::hash::KeySet;
use crate::request::{Op, Request};
use crate::source::trace::output::OutputFile;
use crate::source::trace::TraceError;

/// What a workload touches.
#[derive(Clone, Debug, Default, serde::Serialize, PartialEq)]
pub struct TraceStats {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub deletes: u64,
    pub unique_keys: u64,
    /// Bytes of the distinct objects (first size seen).
    pub footprint_bytes: u64,
    pub bytes_requested: u64,
    pub min_size: u32,
    pub max_size: u32,
    /// Malformed records passed over (`skip_bad`).
    pub skipped: u64,
}

impl TraceStats {
    fn new() -> Self {
        TraceStats {
            min_size: u32::MAX,
            ..Default::default()
        }
    }

    /// Counts a batch; the set of keys seen grows without an abort (a
    /// failed allocation is [`TraceError::Memory`] naming `source`). Room
    /// for the whole batch is made once, before its loop: a check per
    /// request, and the call it made of the set's insert out of line, cost
    /// the footprint pre-pass a third more instructions (callgrind).
    fn add_batch(
        &mut self,
        batch: &[Request],
        seen: &mut KeySet,
        source: &Source,
    ) -> Result<(), TraceError> {
        let read = self.requests;
        seen.room_for(batch.len(), |n| {
            format!(
                "the set of distinct keys of {} ({n} so far, after {read} requests)",
                name(source)
            )
        })?;
        for r in batch {
            self.requests += 1;
            match r.op {
                Op::Read => self.reads += 1,
                Op::Write => self.writes += 1,
                Op::Delete => self.deletes += 1,
            }
            self.bytes_requested += r.size as u64;
            self.min_size = self.min_size.min(r.size);
            self.max_size = self.max_size.max(r.size);
            if seen.insert(r.key) {
                self.footprint_bytes += r.size as u64;
            }
        }
        Ok(())
    }

    fn finish(mut self, seen: &KeySet) -> Self {
        if self.requests == 0 {
            self.min_size = 0;
        }
        self.unique_keys = seen.len() as u64;
        self
    }
}

/// How a message names a source: its file, or "the workload" (a
/// generator, named by the config).
pub(crate) fn name(source: &Source) -> String {
    match source.path() {
        Some(p) => p.display().to_string(),
        None => "the workload".into(),
    }
}

/// One pass over a source: counts, distinct keys, footprint.
/// `progress` is told the requests read so far after each batch and returns
/// false to stop (the caller was interrupted).
pub fn trace_stats(source: &Source, progress: impl Progress) -> Result<TraceStats, TraceError> {
    trace_stats_upto(source, u64::MAX, progress)
}

/// [`trace_stats`] of the source's first `limit` requests (the footprint
/// pre-pass of a run cut at `[run] max_requests`).
pub fn trace_stats_upto(
    source: &Source,
    limit: u64,
    progress: impl Progress,
) -> Result<TraceStats, TraceError> {
    let mut seen = KeySet::default();
    let mut s = TraceStats::new();
    let p = pass_upto(source, limit, progress, |batch| {
        s.add_batch(batch, &mut seen, source)
    })?;
    s.skipped = p.skipped;
    Ok(s.finish(&seen))
}

/// Writes any source as oracleGeneral, with next-access times (the 1-based
/// virtual time of the key's next request, -1 for none, as libCacheSim's
/// converter writes them). The format has no operation field: writes and
/// deletes become reads there; the stats returned count the source's
/// operations so the caller can say so.
///
/// One pass over the source writes the records as they come; a second, over
/// the file written, from its end back, fills in their next-access times
/// (`oracle::fill_next_access`). Memory follows the distinct keys, not the
/// requests: the trace is never held (a 100M-request generator took 1.6 GB
/// when the times were computed in a pre-pass). `progress` sees the records
/// of both passes. `out` appears whole when the trace is written, or not at
/// all (trace/output.rs); it may not be the source's own file. An output
/// that cannot be rewritten in place (`.zst`, a device) is built in a hidden
/// plain file first, then copied to it.
pub fn convert_to_oracle(
    source: &Source,
    out: &std::path::Path,
    mut progress: impl Progress,
) -> Result<TraceStats, TraceError> {
    use crate::source::trace::oracle::{encode, fill_next_access};
    use std::io::Write;
    // Refused before the pass, which may be long.
    let mut out = OutputFile::create(out, source.path())?;
    let mut scratch = match out.plain_file()? {
        Some(_) => None,
        None => Some(OutputFile::scratch(out.path())?),
    };
    let file = scratch.as_mut().unwrap_or(&mut out);
    let path = file.path().to_path_buf();
    let mut seen = KeySet::default();
    let mut s = TraceStats::new();
    let p = pass(source, &mut progress, |batch| {
        let w = file.writer();
        for r in batch {
            w.write_all(&encode(r))
                .map_err(|e| TraceError::io(&path, e))?;
        }
        s.add_batch(batch, &mut seen, source)
    })?;
    let s = s.finish(&seen);
    drop(seen);
    let n = p.requests;
    let f = file.plain_file()?.expect("a plain file");
    fill_next_access(f, n, &path, |k| progress(n + k))?;
    if let Some(scratch) = scratch {
        scratch.copy_into(&mut out)?;
    }
    out.commit()?;
    Ok(TraceStats {
        skipped: p.skipped,
        ..s
    })
}

/// Writes any source as CSV, `time,key,size,op` with a header line and ops
/// `read`, `write`, `delete`: unlike oracleGeneral it keeps the operations.
/// Read back with `csv = { header = true, op = 4 }` (the Python layer sets
/// that when it sees the header).
/// `out` is written as by [`convert_to_oracle`].
pub fn write_csv(
    source: &Source,
    out: &std::path::Path,
    progress: impl Progress,
) -> Result<TraceStats, TraceError> {
    use std::io::Write;
    let mut out = OutputFile::create(out, source.path())?;
    let path = out.path().to_path_buf();
    let io = |e| TraceError::io(&path, e);
    let w = out.writer();
    writeln!(w, "{}", crate::source::trace::csv::HEADER).map_err(io)?;
    let mut seen = KeySet::default();
    let mut s = TraceStats::new();
    let p = pass(source, progress, |batch| {
        for r in batch {
            let op = match r.op {
                Op::Read => "read",
                Op::Write => "write",
                Op::Delete => "delete",
            };
            writeln!(w, "{},{},{},{op}", r.time, r.key, r.size).map_err(io)?;
        }
        s.add_batch(batch, &mut seen, source)
    })?;
    out.commit()?;
    s.skipped = p.skipped;
    Ok(s.finish(&seen))
}
