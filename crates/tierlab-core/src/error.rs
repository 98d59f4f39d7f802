//! The crate's errors, in the base layer so that every layer may return
//! them: [`TraceError`] (reading or writing traces) and [`Error`], the
//! top-level error, one variant per kind of input that can be wrong.

use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] crate::spec::ConfigError),
    #[error(transparent)]
    Trace(#[from] TraceError),
}

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
    /// A pass that needs more memory than it may have: `what` names the
    /// pass and its source, `bytes` what it asked for, `why` why it may not
    /// have it (an allocation failed, or more than the pre-pass budget).
    #[error("{what} needs {bytes} bytes ({human}) of memory, {why}\nhint: {hint}", human = crate::units::human_bytes(*bytes))]
    Memory {
        what: String,
        bytes: u64,
        why: String,
        hint: String,
    },
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
