//! memtrace: tierlab's compact binary memory trace, what `tierlab trace
//! convert --to memtrace` writes from a lackey trace (or any source). An
//! 8-byte magic `TLMEMTR1`, then 16-byte little-endian records: byte
//! address (u64), pid (u32), size in bytes (u16), op (u8: 0 read, 1
//! write, 2 instruction fetch), a zero byte. Fixed records decode without
//! parsing text: the point of the format is to read a capture many times
//! (a page-size sweep) far faster than its lackey text. Plain or zstd
//! (`.zst`).

use super::output::OutputFile;
use super::{TraceError, TraceSource};
use crate::request::{Op, Request};
use crate::source::formats::{KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"TLMEMTR1";
pub const RECORD: usize = 16;

/// One memtrace record as the file holds it. Read in place: a batch of
/// records is the bytes of the file, not decoded into [`Request`]s (the
/// virtual-memory loop reads these directly, a third of a request's bytes
/// and no decoding pass). Little-endian fields, converted on access (a
/// no-op on little-endian hosts).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rec {
    addr: u64,
    pid: u32,
    size: u16,
    op: u8,
    pad: u8,
}

// Rec is the 16-byte record with no padding: any 16 bytes are a Rec.
const _: () = assert!(std::mem::size_of::<Rec>() == RECORD);

impl Rec {
    /// The byte address.
    #[inline(always)]
    pub fn key(&self) -> u64 {
        u64::from_le(self.addr)
    }

    #[inline(always)]
    pub fn pid(&self) -> u32 {
        u32::from_le(self.pid)
    }

    /// Size in bytes.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        u16::from_le(self.size) as u32
    }

    /// The operation: a fetch (2) reads; the reader has checked that the
    /// byte is 0, 1 or 2.
    #[inline(always)]
    pub fn op(&self) -> Op {
        if self.op == 1 {
            Op::Write
        } else {
            Op::Read
        }
    }
}

pub struct MemtraceReader {
    path: PathBuf,
    input: Box<dyn Read + Send>,
    /// Read buffer: records `..have / RECORD` are read and handed out by
    /// the last call; bytes `whole..have` are a partial record, moved to
    /// the front by the next call.
    buf: Vec<Rec>,
    have: usize,
    whole: usize,
    /// Bytes consumed so far, the magic included (for error offsets).
    offset: u64,
    done: bool,
    count: u64,
    len: Option<u64>,
}

impl MemtraceReader {
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let mut input = super::lines::open_stream(path)?;
        let mut magic = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            let n = input
                .read(&mut magic[got..])
                .map_err(|e| TraceError::io(path, e))?;
            if n == 0 {
                break;
            }
            got += n;
        }
        if got < 8 || &magic != MAGIC {
            return Err(TraceError::BadRecord {
                path: path.to_path_buf(),
                offset: 0,
                msg: "not a tierlab memtrace (it starts with the 8 bytes TLMEMTR1)".into(),
            });
        }
        let len = if super::lines::is_zstd(path) {
            None
        } else {
            std::fs::metadata(path)
                .ok()
                .map(|m| m.len().saturating_sub(8) / RECORD as u64)
        };
        Ok(MemtraceReader {
            path: path.to_path_buf(),
            input,
            buf: Vec::new(),
            have: 0,
            whole: 0,
            offset: 8,
            done: false,
            count: 0,
            len,
        })
    }

    /// The next up to `max` records, in place (empty at the end). A
    /// truncated last record or an op outside 0..=2 is an error that names
    /// its byte offset; the records of a batch with a bad op are not
    /// handed out.
    pub fn next_records(&mut self, max: usize) -> Result<&[Rec], TraceError> {
        // The partial record the last call left, to the front.
        let bytes = as_bytes_mut(&mut self.buf);
        bytes.copy_within(self.whole..self.have, 0);
        self.have -= self.whole;
        self.whole = 0;
        if self.buf.len() < max {
            self.buf.resize(max, Rec::default());
        }
        let want = max * RECORD;
        let bytes = as_bytes_mut(&mut self.buf);
        while !self.done && self.have < want {
            let n = self
                .input
                .read(&mut bytes[self.have..want])
                .map_err(|e| TraceError::io(&self.path, e))?;
            self.have += n;
            if n == 0 {
                self.done = true;
            }
        }
        let whole = self.have / RECORD * RECORD;
        if self.done && whole < self.have {
            return Err(TraceError::BadRecord {
                path: self.path.clone(),
                offset: self.offset + whole as u64,
                msg: format!("truncated record: records are {RECORD} bytes"),
            });
        }
        let recs = &self.buf[..whole / RECORD];
        // Ops 0, 1 and 2 give op + 1 in 1..=3, no bit above the low two
        // set; any other byte sets one. One branch-free pass; the first bad
        // record is looked for only when there is one.
        let bad = recs.iter().fold(0u32, |b, r| b | ((r.op as u32 + 1) & !3));
        if bad != 0 {
            let i = recs
                .iter()
                .position(|r| r.op > 2)
                .expect("a bad op was seen");
            return Err(TraceError::BadRecord {
                path: self.path.clone(),
                offset: self.offset + (i * RECORD) as u64 + 14,
                msg: format!("op {} is not 0 (read), 1 (write) or 2 (fetch)", recs[i].op),
            });
        }
        self.whole = whole;
        self.count += (whole / RECORD) as u64;
        self.offset += whole as u64;
        Ok(recs)
    }
}

/// The records' bytes, to read into.
fn as_bytes_mut(recs: &mut [Rec]) -> &mut [u8] {
    // SAFETY: Rec is repr(C), 16 bytes of integers with no padding (checked
    // above): its bytes are initialised, any bytes are a valid Rec, and u8
    // needs no alignment.
    unsafe { std::slice::from_raw_parts_mut(recs.as_mut_ptr().cast::<u8>(), recs.len() * RECORD) }
}

impl TraceSource for MemtraceReader {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let start = self.count;
        let recs = self.next_records(max)?;
        // An exact-size iterator: no capacity check per record.
        out.extend(recs.iter().enumerate().map(|(i, r)| Request {
            time: start + i as u64,
            key: r.key(),
            pid: r.pid(),
            size: r.size(),
            op: r.op(),
            next_access: -1,
        }));
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        self.len
    }
    fn describe(&self) -> String {
        format!("tierlab memtrace {}", self.path.display())
    }
}

/// Writes memtrace records (the file appears whole at `finish`).
pub struct MemtraceWriter {
    out: OutputFile,
}

impl MemtraceWriter {
    pub fn new(mut out: OutputFile) -> Result<Self, TraceError> {
        out.writer().write_all(MAGIC).map_err(|e| out.err(e))?;
        Ok(MemtraceWriter { out })
    }

    /// One record; a size over 65535 bytes is refused (no memory access
    /// is that large: the trace is not a memory trace).
    pub fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let size = u16::try_from(r.size).map_err(|_| {
            self.out.err(std::io::Error::other(format!(
                "a reference of {} bytes does not fit a memtrace record (65535 at most): \
                 is the source a memory trace?",
                r.size
            )))
        })?;
        let mut rec = [0u8; RECORD];
        rec[0..8].copy_from_slice(&r.key.to_le_bytes());
        rec[8..12].copy_from_slice(&r.pid.to_le_bytes());
        rec[12..14].copy_from_slice(&size.to_le_bytes());
        rec[14] = match r.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Delete => 1,
        };
        let out = &mut self.out;
        out.writer().write_all(&rec).map_err(|e| out.err(e))
    }

    pub fn finish(self) -> Result<(), TraceError> {
        self.out.commit()
    }
}

/// Writes a memory trace (lackey, memtrace, a CSV of byte addresses) as
/// memtrace, read by byte address as a `[vm]` run reads it; returns the
/// records written. `out` may not be the source's own file.
pub fn write_memtrace(
    source: &Source,
    out: &Path,
    progress: impl crate::source::setup::Progress,
) -> Result<u64, crate::error::Error> {
    let source = crate::source::byte_source(source.clone())?;
    let mut w = MemtraceWriter::new(OutputFile::create(out, source.path())?)?;
    let p = crate::source::setup::pass(&source, progress, |batch| {
        batch.iter().try_for_each(|r| w.write(r))
    })?;
    w.finish()?;
    Ok(p.requests)
}

/// The registry's view of memtrace files ([`crate::source::formats`]).
pub struct Memtrace;

impl TraceFormat for Memtrace {
    const TITLE: &'static str = "a tierlab memtrace";
    const KEYS: &'static [&'static str] = &[];

    fn source(path: PathBuf, _: &TraceParams, _: Option<&[u8]>) -> Result<Source, KeyError> {
        Ok(Source::Memtrace(path))
    }

    fn sniff(head: &[u8]) -> Likeness {
        if head.starts_with(MAGIC) {
            Likeness::Sure
        } else {
            Likeness::No
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_records() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.memtrace");
        let mut w = MemtraceWriter::new(OutputFile::create(&p, None).unwrap()).unwrap();
        let reqs = [
            Request {
                key: 0x7ff0_1234,
                size: 8,
                op: Op::Write,
                pid: 42,
                ..Request::default()
            },
            Request {
                key: 0x10,
                size: 3,
                op: Op::Read,
                pid: 1,
                ..Request::default()
            },
        ];
        for r in &reqs {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        let mut r = MemtraceReader::open(&p).unwrap();
        assert_eq!(r.len_hint(), Some(2));
        let mut out = Vec::new();
        r.next_batch(&mut out, 10).unwrap();
        let got: Vec<_> = out.iter().map(|q| (q.key, q.size, q.op, q.pid)).collect();
        assert_eq!(
            got,
            vec![(0x7ff0_1234, 8, Op::Write, 42), (0x10, 3, Op::Read, 1)]
        );
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[8 + 16 + 14] = 9;
        std::fs::write(&p, &bytes).unwrap();
        let e = MemtraceReader::open(&p)
            .unwrap()
            .next_batch(&mut out, 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("byte offset 38: op 9 is not 0 (read), 1 (write) or 2 (fetch)"),
            "{e}"
        );
        std::fs::write(&p, &bytes[..30]).unwrap();
        let e = MemtraceReader::open(&p)
            .unwrap()
            .next_batch(&mut out, 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("byte offset 24: truncated record: records are 16 bytes"),
            "{e}"
        );
        std::fs::write(&p, b"nope").unwrap();
        assert!(MemtraceReader::open(&p).is_err());
    }
}
