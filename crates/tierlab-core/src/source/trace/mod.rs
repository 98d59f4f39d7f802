//! Sources of requests: trace file readers, and the generators in
//! [`crate::source::synth`], behind one streaming trait. A trace is never loaded whole.

pub mod capture;
pub mod cpu_caches;
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
use std::path::Path;

/// Errors reading or writing traces (defined in the base layer, beside the
/// crate's `Error`, which wraps it).
pub use crate::error::TraceError;

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
