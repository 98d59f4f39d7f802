//! libCacheSim's oracleGeneral binary format: 24-byte little-endian records of
//! u32 timestamp (seconds), u64 object id, u32 object size, i64 next-access
//! virtual time (-1 when the object is not requested again).
//!
//! The reader reads the file a chunk at a time and decodes records in
//! batches; memory use does not grow with the trace. It reads rather than
//! maps: a file truncated under a mapping kills the process with SIGBUS
//! when a page past the new end is touched, where a read returns short and
//! the error names the file.

use super::output::OutputFile;
use super::{TraceError, TraceSource};
use crate::request::{Op, Request};
use crate::source::formats::{self, Format, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use std::io::{Read, Seek, Write};
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
    file: std::fs::File,
    /// Bytes read from the file and not yet handed out: `buf[head..tail]`.
    buf: Vec<u8>,
    head: usize,
    tail: usize,
    /// File offset just after the last byte read into `buf`.
    read_to: u64,
    /// The file's length when it was opened: the records it holds.
    len: u64,
}

/// Bytes read from the file at a time: a multiple of the record, large
/// enough that a read's system call is nothing beside decoding its 43,690
/// records, small enough to stay in L2. Read, not mapped: a file truncated
/// under a mapping kills the process with SIGBUS when the missing page is
/// touched, where a read returns short and names the file.
const CHUNK: usize = RECORD * 43_690;

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
        let mut r = OracleReader {
            path: path.to_path_buf(),
            file,
            buf: Vec::new(),
            head: 0,
            tail: 0,
            read_to: 0,
            len,
        };
        r.fill(SAMPLE * RECORD)?;
        let sample = r.buffered();
        if let Err((i, why)) = check(&sample[..sample.len().min(SAMPLE * RECORD)]) {
            return Err(not_oracle(path, (i * RECORD) as u64, why));
        }
        Ok(r)
    }

    /// The bytes read and not yet handed out.
    #[inline]
    fn buffered(&self) -> &[u8] {
        &self.buf[self.head..self.tail]
    }

    /// File offset of the next byte to hand out.
    #[inline]
    fn pos(&self) -> u64 {
        self.read_to - (self.tail - self.head) as u64
    }

    /// Reads until `want` bytes are buffered, or the file's length (as
    /// opened) is. A file that ends before that length was truncated
    /// while being read: an error naming it and where it ends.
    fn fill(&mut self, want: usize) -> Result<(), TraceError> {
        let have = self.tail - self.head;
        let left = self.len - self.read_to;
        if have >= want || left == 0 {
            return Ok(());
        }
        // Whole chunks, but no further than the file's length.
        let target = want
            .max(CHUNK)
            .min(have + left.min(usize::MAX as u64) as usize);
        self.buf.copy_within(self.head..self.tail, 0);
        self.head = 0;
        self.tail = have;
        if self.buf.len() < target {
            self.buf.resize(target, 0);
        }
        while self.tail < target {
            match self.file.read(&mut self.buf[self.tail..target]) {
                Ok(0) => {
                    return Err(TraceError::Shrunk {
                        path: self.path.clone(),
                        offset: self.read_to,
                        len: self.len,
                    })
                }
                Ok(n) => {
                    self.tail += n;
                    self.read_to += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.path, e)),
            }
        }
        Ok(())
    }

    /// The next up to `max` records undecoded (a whole number of
    /// 24-byte records; empty at the end), for passes that read one or two
    /// fields of most records and drop most of them (SHARDS sampling):
    /// decoding full [`Request`]s first would cost more than the pass.
    pub fn next_raw(&mut self, max: usize) -> Result<&[u8], TraceError> {
        let want = (max as u64 * RECORD as u64).min(self.len - self.pos()) as usize;
        self.fill(want)?;
        let start = self.head;
        self.head += want;
        Ok(&self.buf[start..start + want])
    }

    /// Moves past the next up to `records` records without reading them,
    /// for a pass that splits a file between readers by chunks.
    pub fn skip(&mut self, records: usize) -> Result<(), TraceError> {
        let bytes = (records as u64).saturating_mul(RECORD as u64);
        let have = (self.tail - self.head) as u64;
        if bytes <= have {
            self.head += bytes as usize;
            return Ok(());
        }
        self.head = 0;
        self.tail = 0;
        self.read_to = self.read_to.saturating_add(bytes - have).min(self.len);
        self.file
            .seek(std::io::SeekFrom::Start(self.read_to))
            .map_err(|e| TraceError::io(&self.path, e))?;
        Ok(())
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

impl TraceSource for OracleReader {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let pos = self.pos();
        let want = (max as u64 * RECORD as u64).min(self.len - pos) as usize;
        if want == 0 {
            return Ok(0);
        }
        self.fill(want)?;
        let recs = &self.buf[self.head..self.head + want];
        if formats::is_text(&recs[..RECORD]) {
            let why = "24 bytes of text, not an oracleGeneral record".to_string();
            return Err(not_oracle(&self.path, pos, why));
        }
        out.extend(recs.chunks_exact(RECORD).map(decode));
        self.head += want;
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.len / RECORD as u64)
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

/// The oracleGeneral record of `r`.
#[inline]
pub fn encode(r: &Request) -> [u8; RECORD] {
    let mut rec = [0u8; RECORD];
    // oracleGeneral keeps whole seconds in 32 bits; saturate rather than wrap.
    let secs = (r.time / 1_000_000_000).min(u32::MAX as u64) as u32;
    rec[0..4].copy_from_slice(&secs.to_le_bytes());
    rec[4..12].copy_from_slice(&r.key.to_le_bytes());
    rec[12..16].copy_from_slice(&r.size.to_le_bytes());
    rec[16..24].copy_from_slice(&r.next_access.to_le_bytes());
    rec
}

/// Fills in the next-access times of the `n` records of the oracleGeneral
/// file `f` (written with any), from its end back, a chunk at a time: a
/// record's next access is the 1-based position of its key's next
/// request, -1 when there is none, as libCacheSim's converter writes
/// them. Memory: one chunk and a map from each distinct key to its next
/// request (`what` names the output in a memory error). `progress` sees
/// the records filled so far and returns false to stop.
pub fn fill_next_access(
    f: &mut std::fs::File,
    n: u64,
    what: &Path,
    mut progress: impl crate::source::setup::Progress,
) -> Result<(), TraceError> {
    use crate::source::setup::Room;
    let io = |e| TraceError::io(what, e);
    let mut next: crate::hash::KeyMap<u64> = Default::default();
    let mut buf = vec![0u8; CHUNK];
    let mut end = n;
    while end > 0 {
        let start = end.saturating_sub((CHUNK / RECORD) as u64);
        let bytes = &mut buf[..((end - start) as usize * RECORD)];
        f.seek(std::io::SeekFrom::Start(start * RECORD as u64))
            .map_err(io)?;
        f.read_exact(bytes).map_err(io)?;
        for (i, rec) in bytes.chunks_exact_mut(RECORD).enumerate().rev() {
            let key = u64::from_le_bytes(rec[4..12].try_into().unwrap());
            next.room_for_one(|k| {
                format!(
                    "filling in the next-access times of {}: the next request of {k} distinct keys",
                    what.display()
                )
            })?;
            let at = next
                .insert(key, start + i as u64)
                .map_or(-1, |j| j as i64 + 1);
            rec[16..24].copy_from_slice(&at.to_le_bytes());
        }
        f.seek(std::io::SeekFrom::Start(start * RECORD as u64))
            .map_err(io)?;
        f.write_all(bytes).map_err(io)?;
        end = start;
        if !progress(n - end) {
            return Err(TraceError::Interrupted);
        }
    }
    Ok(())
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
        let out = &mut self.out;
        out.writer().write_all(&encode(r)).map_err(|e| out.err(e))
    }

    pub fn finish(self) -> Result<(), TraceError> {
        self.out.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_truncated_while_read_is_an_error_naming_it() {
        // Mapped, the reader died of SIGBUS touching a page past the new
        // end (the whole test binary with it).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.oracleGeneral.bin");
        let mut w = OracleWriter::create(&path).unwrap();
        let n = 3 * CHUNK as u64 / RECORD as u64;
        for key in 0..n {
            w.write(&Request {
                time: 0,
                key,
                size: 1,
                op: Op::Read,
                pid: 0,
                next_access: -1,
            })
            .unwrap();
        }
        w.finish().unwrap();
        let mut r = OracleReader::open(&path).unwrap();
        let mut out = Vec::new();
        assert_eq!(r.next_batch(&mut out, 4096).unwrap(), 4096);
        let cut = (CHUNK + CHUNK / 2) as u64;
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(cut)
            .unwrap();
        let e = loop {
            match r.next_batch(&mut out, 4096) {
                Ok(0) => panic!("read to the end of a truncated file"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(
            matches!(e, TraceError::Shrunk { offset, len, .. } if offset == cut && len == n * RECORD as u64),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("cut.oracleGeneral.bin") && msg.contains("truncated while being read"),
            "{msg}"
        );
    }

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
        assert_eq!(keys(r.next_raw(3).unwrap()), [0, 1, 2]);
        r.skip(100).unwrap();
        assert_eq!(keys(r.next_raw(2).unwrap()), [103, 104]);
        r.skip(890).unwrap();
        assert_eq!(keys(r.next_raw(10).unwrap()), [995, 996, 997, 998, 999]);
        r.skip(usize::MAX).unwrap();
        assert!(r.next_raw(10).unwrap().is_empty());
        // Past the buffered chunk: a skip that seeks.
        let mut r = OracleReader::open(&path).unwrap();
        r.skip(10).unwrap();
        assert_eq!(keys(r.next_raw(1).unwrap()), [10]);
    }
}
