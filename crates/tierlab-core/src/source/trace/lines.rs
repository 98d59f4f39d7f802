//! Line-by-line reading shared by the text readers (CSV, MSR, Twitter,
//! strace, lackey): one reused buffer, line numbers for errors, zstd-
//! compressed input (`.zst`) decompressed on the fly, the `skip_bad`
//! count of records a reader passed over, and [`TextReader`], the batch
//! loop every text reader runs around its [`LineParser`].

use super::limits::{Limits, LINE_VAR};
use super::{open_file, TraceError, TraceSource};
use crate::request::Request;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub struct Lines {
    pub path: PathBuf,
    input: Box<dyn BufRead + Send>,
    /// The current line, without its line ending.
    pub buf: Vec<u8>,
    pub lineno: u64,
    /// Records skipped as malformed (only when the reader was asked to).
    pub skipped: u64,
    pub skip_bad: bool,
    /// The bounds of lines and records ([`Limits`]).
    pub limits: Limits,
    /// Byte offset of the current line's start (decompressed, for zstd).
    pub offset: u64,
    /// Byte offset of the next line's start.
    next: u64,
}

/// Whether a path names zstd-compressed data.
pub fn is_zstd(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zst"))
}

/// Opens a file as a byte stream, decompressing `.zst`. A read error
/// (a corrupt or cut zstd frame, a failing disk) says at which byte of the
/// data it came, so every reader's message has the offset.
pub fn open_stream(path: &Path) -> Result<Box<dyn Read + Send>, TraceError> {
    let f = open_file(path)?;
    if is_zstd(path) {
        let compressed = Arc::new(AtomicU64::new(0));
        let counted = Counting {
            inner: f,
            n: compressed.clone(),
        };
        // A small input buffer keeps the compressed count near the frame
        // the decoder is at.
        let d =
            zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(32 << 10, counted))
                .map_err(|e| TraceError::io(path, e))?;
        Ok(Box::new(Located {
            inner: d,
            offset: 0,
            compressed: Some(compressed),
        }))
    } else {
        Ok(Box::new(Located {
            inner: f,
            offset: 0,
            compressed: None,
        }))
    }
}

/// Counts the bytes read through it (the compressed bytes under a decoder).
struct Counting<R> {
    inner: R,
    n: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A stream whose errors name the byte offset they came at.
struct Located<R> {
    inner: R,
    /// Bytes handed out so far (decompressed, for zstd).
    offset: u64,
    /// Compressed bytes read so far, for zstd.
    compressed: Option<Arc<AtomicU64>>,
}

impl<R: Read> Read for Located<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.offset += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                let at = match &self.compressed {
                    Some(c) => format!(
                        "zstd data unreadable after decompressed byte offset {} \
                         (within the first {} compressed bytes)",
                        self.offset,
                        c.load(Ordering::Relaxed)
                    ),
                    None => format!("byte offset {}", self.offset),
                };
                Err(std::io::Error::new(e.kind(), format!("{at}: {e}")))
            }
        }
    }
}

impl Lines {
    pub fn open(path: &Path, skip_bad: bool) -> Result<Self, TraceError> {
        let limits = Limits::get().map_err(|m| TraceError::io(path, std::io::Error::other(m)))?;
        Ok(Self::over(path, open_stream(path)?, skip_bad, limits))
    }

    /// Lines read from `input` (buffered), the trace at `path`.
    fn over(
        path: &Path,
        input: impl std::io::Read + Send + 'static,
        skip_bad: bool,
        limits: Limits,
    ) -> Self {
        Lines {
            path: path.to_path_buf(),
            input: Box::new(BufReader::with_capacity(1 << 20, input)),
            buf: Vec::with_capacity(256),
            lineno: 0,
            skipped: 0,
            skip_bad,
            limits,
            offset: 0,
            next: 0,
        }
    }

    /// [`Lines::open`] for a stream a tracer is writing as it runs (a
    /// FIFO that `tierlab capture` made): read once, front to back, so
    /// not refused as a trace file that is not a regular file is
    /// ([`open_file`]); never zstd. Opening a FIFO waits for its writer.
    pub fn open_fifo(path: &Path, skip_bad: bool) -> Result<Self, TraceError> {
        let limits = Limits::get().map_err(|m| TraceError::io(path, std::io::Error::other(m)))?;
        let f = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
        let located = Located {
            inner: f,
            offset: 0,
            compressed: None,
        };
        Ok(Self::over(path, located, skip_bad, limits))
    }

    /// Reads the next line into `buf`; false at the end. A line longer
    /// than [`Limits::line`] is an error at its offset: it is never held
    /// whole (`/dev/zero` read as text has no line end at all).
    pub fn next_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        // Room for the line and its "\r\n", and one byte to tell a line
        // that is too long.
        let max = self.limits.line.saturating_add(3);
        let n = (&mut self.input)
            .take(max)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.io(e))?;
        if n == 0 {
            return Ok(false);
        }
        self.offset = self.next;
        self.next += n as u64;
        self.lineno += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        if self.buf.len() as u64 > self.limits.line {
            return Err(TraceError::BadRecord {
                path: self.path.clone(),
                offset: self.offset,
                msg: format!(
                    "line {} is longer than the {} limit of a line\n\
                     hint: set {LINE_VAR} (e.g. {LINE_VAR}=16MiB) to read longer lines",
                    self.lineno,
                    crate::units::human_bytes(self.limits.line)
                ),
            });
        }
        Ok(true)
    }

    fn io(&self, e: std::io::Error) -> TraceError {
        // A corrupt zstd frame surfaces as an I/O error: say where.
        if self.lineno > 0 {
            TraceError::Malformed {
                path: self.path.clone(),
                line: self.lineno + 1,
                msg: e.to_string(),
            }
        } else {
            TraceError::io(&self.path, e)
        }
    }

    pub fn err(&self, msg: impl Into<String>) -> TraceError {
        TraceError::Malformed {
            path: self.path.clone(),
            line: self.lineno,
            msg: msg.into(),
        }
    }

    /// A bad record: an error, or (with `skip_bad`) counted and passed over.
    pub fn bad(&mut self, e: TraceError) -> Result<(), TraceError> {
        if self.skip_bad {
            self.skipped += 1;
            Ok(())
        } else {
            Err(e)
        }
    }
}

/// How one kind of text trace turns its lines into requests. The batch loop,
/// end of input, and what a bad line costs are [`TextReader`]'s, so a reader
/// says only what its lines mean.
pub trait LineParser: Send {
    /// The kind of trace, as [`TraceSource::describe`] names it before the path.
    const KIND: &'static str;
    /// The format it reads, for the hint when a file does not read as it.
    const FORMAT: crate::source::formats::Format;

    /// Parses one line (without its line ending; `lineno` counts from 1).
    /// `Ok(None)` when the line yields no request now: blank lines, comments,
    /// records that are not I/O, and lines whose requests were queued for
    /// [`LineParser::pending`]. An error is the message alone: the caller
    /// adds file and line, and counts it instead under `skip_bad`.
    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Option<Request>, String>;

    /// The next request an earlier line queued (one record can cover several
    /// pages). Drained before another line is read, so a batch that fills up
    /// mid-record resumes there on the next call.
    #[inline]
    fn pending(&mut self) -> Option<Request> {
        None
    }
}

/// A text trace: [`Lines`] read through a [`LineParser`]. Generic rather
/// than boxed so each reader's parse is inlined into its own loop (the CSV
/// reader runs at tens of millions of lines a second).
pub struct TextReader<P> {
    lines: Lines,
    parser: P,
    done: bool,
}

impl<P: LineParser> TextReader<P> {
    pub fn new(lines: Lines, parser: P) -> Self {
        TextReader {
            lines,
            parser,
            done: false,
        }
    }
}

impl<P: LineParser> TraceSource for TextReader<P> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.len() < max {
            if let Some(r) = self.parser.pending() {
                out.push(r);
                continue;
            }
            // Once the input has ended, later calls return empty batches
            // without asking the stream again.
            if self.done || !self.lines.next_line()? {
                self.done = true;
                break;
            }
            match self.parser.parse(&self.lines.buf, self.lines.lineno) {
                // One request's size is bounded like a record's (the
                // readers that split records into pages check before).
                Ok(Some(r)) if r.size as u64 > self.lines.limits.record => {
                    let e = self
                        .lines
                        .err(self.lines.limits.record_error(r.size as u64));
                    self.lines.bad(e)?
                }
                Ok(Some(r)) => out.push(r),
                Ok(None) => {}
                Err(msg) => {
                    let e = self.lines.err(msg);
                    self.lines.bad(e).map_err(|e| with_hint(e, P::FORMAT))?
                }
            }
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> String {
        format!("{} {}", P::KIND, self.lines.path.display())
    }
    fn skipped(&self) -> u64 {
        self.lines.skipped
    }
}

/// A bad record's error, its hint replaced by one naming the format the
/// file looks like when that is not the one it was read as (an MSR trace
/// read as CSV would otherwise be told to hash its host names).
fn with_hint(e: TraceError, read_as: crate::source::formats::Format) -> TraceError {
    match e {
        TraceError::Malformed { path, line, msg } => {
            let msg = match crate::source::formats::hint(&path, read_as) {
                Some(h) => {
                    let bare = msg.split_once("\nhint: ").map_or(msg.as_str(), |m| m.0);
                    format!("{bare}\n{h}")
                }
                None => msg,
            };
            TraceError::Malformed { path, line, msg }
        }
        e => e,
    }
}
