//! Line-by-line reading shared by the text readers (CSV, MSR, Twitter,
//! strace, lackey): one reused buffer, line numbers for errors, zstd-
//! compressed input (`.zst`) decompressed on the fly, and the `skip_bad`
//! count of records a reader passed over.

use super::{open_file, TraceError};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub struct Lines {
    pub path: PathBuf,
    input: Box<dyn BufRead + Send>,
    /// The current line, without its line ending.
    pub buf: Vec<u8>,
    pub lineno: u64,
    /// Records skipped as malformed (only when the reader was asked to).
    pub skipped: u64,
    pub skip_bad: bool,
}

/// Whether a path names zstd-compressed data.
pub fn is_zstd(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zst"))
}

/// Opens a file as a byte stream, decompressing `.zst`.
pub fn open_stream(path: &Path) -> Result<Box<dyn Read + Send>, TraceError> {
    let f = open_file(path)?;
    if is_zstd(path) {
        let d = zstd::stream::read::Decoder::new(f).map_err(|e| TraceError::io(path, e))?;
        Ok(Box::new(d))
    } else {
        Ok(Box::new(f))
    }
}

impl Lines {
    pub fn open(path: &Path, skip_bad: bool) -> Result<Self, TraceError> {
        Ok(Lines {
            path: path.to_path_buf(),
            input: Box::new(BufReader::with_capacity(1 << 20, open_stream(path)?)),
            buf: Vec::with_capacity(256),
            lineno: 0,
            skipped: 0,
            skip_bad,
        })
    }

    /// Reads the next line into `buf`; false at the end.
    pub fn next_line(&mut self) -> Result<bool, TraceError> {
        self.buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.io(e))?;
        if n == 0 {
            return Ok(false);
        }
        self.lineno += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
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
