//! libCacheSim's oracleGeneral binary format: 24-byte little-endian records of
//! u32 timestamp (seconds), u64 object id, u32 object size, i64 next-access
//! virtual time (-1 when the object is not requested again).
//!
//! The reader memory-maps the file and decodes records in batches; memory use
//! does not grow with the trace.

use super::output::OutputFile;
use super::{TraceError, TraceSource};
use crate::request::{Op, Request};
use crate::source::formats::{self, Format, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use memmap2::Mmap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RECORD: usize = 24;

/// Records checked in full when a file is opened. A file of another format
/// read as oracleGeneral gives objects of hundreds of megabytes and runs
/// to the end without a word; past this sample each batch's first record
/// is checked, which costs nothing measurable on the per-request path.
const SAMPLE: usize = 1024;

/// Timestamps may step back (merged traces) but not by more than a day.
const MAX_BACKWARDS_S: u32 = 86_400;

/// The first record of `records` that cannot be oracleGeneral, as its
/// index and why.
pub fn check(records: &[u8]) -> Result<(), (usize, String)> {
    let mut last = 0u32;
    for (i, rec) in records.chunks_exact(RECORD).enumerate() {
        // Binary records hold zero or 0xff bytes in their small numbers
        // (a timestamp, a size, a next access of -1); 24 printable bytes
        // in a row are text.
        if formats::is_text(rec) {
            return Err((i, "24 bytes of text, not an oracleGeneral record".into()));
        }
        let t = u32::from_le_bytes(rec[0..4].try_into().unwrap());
        let next = i64::from_le_bytes(rec[16..24].try_into().unwrap());
        if next < -1 {
            return Err((
                i,
                format!("next-access time {next} is negative (-1 = none)"),
            ));
        }
        if i > 0 && t.saturating_add(MAX_BACKWARDS_S) < last {
            return Err((
                i,
                format!(
                    "timestamp {t} s goes back {} s from the record before",
                    last - t
                ),
            ));
        }
        last = t;
    }
    Ok(())
}

/// The error for a record at byte `offset` of `path` that is not
/// oracleGeneral, with a hint naming the format the file looks like.
fn not_oracle(path: &Path, offset: u64, why: String) -> TraceError {
    let hint = formats::hint(path, Format::Oracle).unwrap_or_else(|| {
        "hint: oracleGeneral is libCacheSim's binary format of 24-byte records; \
         give the trace's format (format = \"csv\", \"msr\", ...; --format)"
            .into()
    });
    TraceError::BadRecord {
        path: path.to_path_buf(),
        offset,
        msg: format!("{why}\n{hint}"),
    }
}

/// The registry's view of oracleGeneral ([`crate::source::formats`]).
pub struct OracleGeneral;

impl TraceFormat for OracleGeneral {
    const TITLE: &'static str = "oracleGeneral binary records";
    const KEYS: &'static [&'static str] = &[];

    fn source(path: PathBuf, _: &TraceParams, _: Option<&[u8]>) -> Result<Source, KeyError> {
        Ok(Source::Oracle(path))
    }

    fn sniff(head: &[u8]) -> Likeness {
        let whole = &head[..(head.len() / RECORD).min(SAMPLE) * RECORD];
        if !whole.is_empty() && check(whole).is_ok() {
            Likeness::Plausible
        } else {
            Likeness::No
        }
    }
}

pub struct OracleReader {
    path: PathBuf,
    map: Option<Mmap>,
    pos: usize,
    len: usize,
    /// Start of the part of the map not yet released.
    kept: usize,
}

/// Pages already decoded are handed back to the kernel in steps of this many
/// bytes, so a process streaming a 200M-request trace keeps a few MiB of it
/// resident, not the whole file.
const RELEASE_STEP: usize = 32 << 20;

impl OracleReader {
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let file = super::open_file(path)?;
        let len = file.metadata().map_err(|e| TraceError::io(path, e))?.len();
        if len % RECORD as u64 != 0 {
            return Err(TraceError::Truncated {
                path: path.to_path_buf(),
                offset: len - len % RECORD as u64,
                len,
                record: RECORD as u64,
            });
        }
        if len == 0 {
            return Err(TraceError::Empty {
                path: path.to_path_buf(),
            });
        }
        // SAFETY: the map is read-only; a trace file changed under a running
        // simulation gives wrong numbers, not unsoundness we can observe here.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| TraceError::io(path, e))?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let sample = &map[..(len as usize).min(SAMPLE * RECORD)];
        if let Err((i, why)) = check(sample) {
            return Err(not_oracle(path, (i * RECORD) as u64, why));
        }
        Ok(OracleReader {
            path: path.to_path_buf(),
            map: Some(map),
            pos: 0,
            len: len as usize,
            kept: 0,
        })
    }
}

#[inline(always)]
fn decode(rec: &[u8]) -> Request {
    let time = u32::from_le_bytes(rec[0..4].try_into().unwrap());
    let key = u64::from_le_bytes(rec[4..12].try_into().unwrap());
    let size = u32::from_le_bytes(rec[12..16].try_into().unwrap());
    let next_access = i64::from_le_bytes(rec[16..24].try_into().unwrap());
    Request {
        time: time as u64 * 1_000_000_000,
        key,
        size,
        op: Op::Read,
        pid: 0,
        next_access,
    }
}

impl OracleReader {
    /// The next up to `max` records undecoded (a whole number of
    /// 24-byte records; empty at the end), for passes that read one or two
    /// fields of most records and drop most of them (SHARDS sampling):
    /// decoding full [`Request`]s first would cost more than the pass.
    pub fn next_raw(&mut self, max: usize) -> &[u8] {
        if self.map.is_none() {
            return &[];
        }
        // At most one release step long: `release` keeps a step below `pos`
        // mapped, so it never drops a page of the slice handed out.
        let max = max.min(RELEASE_STEP / RECORD);
        let start = self.pos;
        let end = (self.pos + max * RECORD).min(self.len);
        self.pos = end;
        self.release();
        &self.map.as_ref().expect("mapped")[start..end]
    }

    /// Moves past the next up to `records` records without touching their
    /// pages, for a pass that splits a file between readers by chunks.
    /// Whatever it moves past is released like records read: memory stays
    /// bounded however far it skips.
    pub fn skip(&mut self, records: usize) {
        self.pos = self
            .pos
            .saturating_add(records.saturating_mul(RECORD))
            .min(self.len);
        self.release();
    }

    /// Hands pages already passed back to the kernel (see RELEASE_STEP).
    /// Keeps one step below `pos` mapped, so the slice `next_raw` returns
    /// (at most a step long, ending at `pos`) stays mapped. No other slice
    /// can be alive here: `next_raw`'s result borrows the reader, and every
    /// call that moves `pos` (and so releases) takes it mutably.
    fn release(&mut self) {
        let Some(map) = &self.map else { return };
        // A loop, not one step per call: `skip` may move `pos` by more.
        while self.pos - self.kept >= RELEASE_STEP + RELEASE_STEP {
            // Page-aligned start and length: the kept offset only ever moves by
            // RELEASE_STEP, a multiple of any page size.
            // SAFETY: a read-only shared file mapping; MADV_DONTNEED drops the
            // pages, and any later read of them would fault them back in from
            // the file. We never read below `pos` again anyway.
            #[cfg(unix)]
            let _ = unsafe {
                map.unchecked_advise_range(
                    memmap2::UncheckedAdvice::DontNeed,
                    self.kept,
                    RELEASE_STEP,
                )
            };
            self.kept += RELEASE_STEP;
        }
    }
}

impl TraceSource for OracleReader {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let Some(map) = &self.map else { return Ok(0) };
        let end = (self.pos + max * RECORD).min(self.len);
        if end > self.pos && formats::is_text(&map[self.pos..self.pos + RECORD]) {
            let why = "24 bytes of text, not an oracleGeneral record".to_string();
            return Err(not_oracle(&self.path, self.pos as u64, why));
        }
        out.extend(map[self.pos..end].chunks_exact(RECORD).map(decode));
        self.pos = end;
        self.release();
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        Some((self.len / RECORD) as u64)
    }
    fn describe(&self) -> String {
        format!("oracleGeneral file {}", self.path.display())
    }
}

/// oracleGeneral compressed with zstd (`.zst`), decoded as a stream.
pub struct OracleStream {
    path: PathBuf,
    input: Box<dyn std::io::Read + Send>,
    buf: Vec<u8>,
    /// Bytes decoded so far (for the offset of a truncated record).
    offset: u64,
    done: bool,
}

impl OracleStream {
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        Ok(OracleStream {
            path: path.to_path_buf(),
            input: super::lines::open_stream(path)?,
            buf: Vec::new(),
            offset: 0,
            done: false,
        })
    }
}

impl TraceSource for OracleStream {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let want = max * RECORD;
        while !self.done && self.buf.len() < want {
            let start = self.buf.len();
            self.buf.resize(want, 0);
            let n = self
                .input
                .read(&mut self.buf[start..])
                .map_err(|e| TraceError::io(&self.path, e))?;
            self.buf.truncate(start + n);
            if n == 0 {
                self.done = true;
            }
        }
        let whole = self.buf.len() / RECORD * RECORD;
        if self.done && whole < self.buf.len() {
            let offset = self.offset + whole as u64;
            return Err(TraceError::Truncated {
                path: self.path.clone(),
                offset,
                len: offset + (self.buf.len() - whole) as u64,
                record: RECORD as u64,
            });
        }
        // The same checks as the mapped reader's: a sample at the start,
        // each batch's first record after it.
        let n = if self.offset == 0 {
            SAMPLE * RECORD
        } else {
            RECORD
        };
        if let Err((i, why)) = check(&self.buf[..whole.min(n)]) {
            return Err(not_oracle(
                &self.path,
                self.offset + (i * RECORD) as u64,
                why,
            ));
        }
        out.extend(self.buf[..whole].chunks_exact(RECORD).map(decode));
        self.buf.drain(..whole);
        self.offset += whole as u64;
        if self.done && self.offset == 0 && out.is_empty() {
            return Err(TraceError::Empty {
                path: self.path.clone(),
            });
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> String {
        format!("oracleGeneral file {} (zstd)", self.path.display())
    }
}

/// Writes oracleGeneral records (into an [`OutputFile`]: the file appears
/// whole at `finish`, or not at all).
pub struct OracleWriter {
    out: OutputFile,
}

impl OracleWriter {
    pub fn create(path: &Path) -> Result<Self, TraceError> {
        Ok(Self::new(OutputFile::create(path, None)?))
    }

    pub fn new(out: OutputFile) -> Self {
        OracleWriter { out }
    }

    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let mut rec = [0u8; RECORD];
        // oracleGeneral keeps whole seconds in 32 bits; saturate rather than wrap.
        let secs = (r.time / 1_000_000_000).min(u32::MAX as u64) as u32;
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..12].copy_from_slice(&r.key.to_le_bytes());
        rec[12..16].copy_from_slice(&r.size.to_le_bytes());
        rec[16..24].copy_from_slice(&r.next_access.to_le_bytes());
        let out = &mut self.out;
        out.writer().write_all(&rec).map_err(|e| out.err(e))
    }

    pub fn finish(self) -> Result<(), TraceError> {
        self.out.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_reads_and_skips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.oracleGeneral.bin");
        let mut w = OracleWriter::create(&path).unwrap();
        for key in 0..1000u64 {
            let r = Request {
                time: 0,
                key,
                size: 1,
                op: Op::Read,
                pid: 0,
                next_access: -1,
            };
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        let keys = |raw: &[u8]| -> Vec<u64> {
            raw.chunks_exact(RECORD)
                .map(|rec| decode(rec).key)
                .collect()
        };
        let mut r = OracleReader::open(&path).unwrap();
        assert_eq!(keys(r.next_raw(3)), [0, 1, 2]);
        r.skip(100);
        assert_eq!(keys(r.next_raw(2)), [103, 104]);
        r.skip(890);
        assert_eq!(keys(r.next_raw(10)), [995, 996, 997, 998, 999]);
        r.skip(usize::MAX);
        assert!(r.next_raw(10).is_empty());
    }
}
