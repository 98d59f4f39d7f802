//! Sources of requests: trace file readers, and the generators in
//! [`crate::synth`], behind one streaming trait. A trace is never loaded whole.

pub mod capture;
pub mod csv;
pub mod lackey;
pub mod limits;
pub mod lines;
pub mod memtrace;
pub mod msr;
pub mod next_access;
pub mod oracle;
pub mod output;
pub mod strace;
pub mod twitter;

use crate::request::Request;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors reading or writing traces. Every variant names the file and the
/// place in it, so a user can find the bad record.
#[derive(Debug, Error)]
pub enum TraceError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: truncated record at byte offset {offset}: the file is {len} bytes, not a multiple of the {record}-byte oracleGeneral record")]
    Truncated {
        path: PathBuf,
        offset: u64,
        len: u64,
        record: u64,
    },
    /// A binary record that cannot be what the reader reads.
    #[error("{path}: byte offset {offset}: {msg}")]
    BadRecord {
        path: PathBuf,
        offset: u64,
        msg: String,
    },
    #[error("{path}:{line}: {msg}")]
    Malformed {
        path: PathBuf,
        line: u64,
        msg: String,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("{path}: the trace holds no requests")]
    Empty { path: PathBuf },
}

impl TraceError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        TraceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A source that gave no requests at all is an error (every command says
/// so alike, rather than reporting on, or writing, an empty trace).
pub fn empty_check(n: u64, src: &dyn TraceSource) -> Result<(), TraceError> {
    if n == 0 {
        return Err(TraceError::Empty {
            path: src.describe().into(),
        });
    }
    Ok(())
}

/// Opens a trace file for reading; a directory is refused by name (opening
/// one succeeds on Linux and would fail later with a misleading message).
///
/// A pipe, a FIFO, a socket or a device is refused too, before it is
/// opened (opening a FIFO blocks until a writer comes): a trace is read
/// more than once (its head for its format, pre-passes, the run), which a
/// stream cannot give, and a device such as `/dev/zero` never ends.
pub fn open_file(path: &Path) -> Result<std::fs::File, TraceError> {
    let meta = std::fs::metadata(path).map_err(|e| TraceError::io(path, e))?;
    if meta.is_dir() {
        return Err(TraceError::io(
            path,
            std::io::Error::other("is a directory, not a trace file"),
        ));
    }
    if !meta.is_file() {
        return Err(TraceError::io(
            path,
            std::io::Error::other(
                "is not a regular file (a pipe, a FIFO or a device): a trace is read more \
                 than once (its format, pre-passes, the run); write it to a file first",
            ),
        ));
    }
    std::fs::File::open(path).map_err(|e| TraceError::io(path, e))
}

/// A stream of requests, read in batches so the per-request loop stays free of
/// dynamic calls.
pub trait TraceSource: Send {
    /// Clears `out` and fills it with up to `max` requests. Returns how many;
    /// zero means the source is exhausted.
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError>;
    /// The total number of requests, when known without reading (progress bars).
    fn len_hint(&self) -> Option<u64>;
    /// A short description for messages.
    fn describe(&self) -> String;
    /// Malformed records passed over (only with `skip_bad`).
    fn skipped(&self) -> u64 {
        0
    }
}

/// The formats a trace file may have (their registry is `source::formats`).
pub use crate::source::formats::Format;
