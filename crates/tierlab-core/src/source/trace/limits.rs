//! The bounds every trace reader keeps, so that a small hostile file cannot
//! take unbounded memory or time: the longest line a text reader holds
//! (`TIERLAB_MAX_LINE`, 1 MiB) and the most bytes one record may cover
//! (`TIERLAB_MAX_RECORD`, 4 GiB: above the 2 GiB Linux moves in one
//! `read` or `write`, and above the 32-bit sizes of the binary formats).
//! A record of an MSR, strace or lackey trace becomes one request per page
//! it covers, so its size bounds the work it makes; a line is held whole
//! while it is parsed, so its length bounds the memory. Both are read from
//! the environment when a reader opens, so a run, a curve, `trace stats`
//! and the Python API override them alike.

use crate::units::{parse_size, Size};

/// The environment variable that overrides [`Limits::line`].
pub const LINE_VAR: &str = "TIERLAB_MAX_LINE";
/// The environment variable that overrides [`Limits::record`].
pub const RECORD_VAR: &str = "TIERLAB_MAX_RECORD";

/// The default longest line, in bytes.
pub const DEFAULT_LINE: u64 = 1 << 20;
/// The default most bytes one record covers.
pub const DEFAULT_RECORD: u64 = 4 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of the longest line a text reader reads.
    pub line: u64,
    /// Bytes one record (a read, a write, a delete of a file's pages, an
    /// access) may cover.
    pub record: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            line: DEFAULT_LINE,
            record: DEFAULT_RECORD,
        }
    }
}

impl Limits {
    /// The limits in force: the defaults, or the environment's overrides.
    /// A malformed override is an error naming the variable.
    pub fn get() -> Result<Limits, String> {
        Ok(Limits {
            line: var(LINE_VAR, DEFAULT_LINE)?,
            record: var(RECORD_VAR, DEFAULT_RECORD)?,
        })
    }

    /// The message for a record of `bytes` over the limit.
    pub fn record_error(&self, bytes: u64) -> String {
        format!(
            "the record covers {bytes} bytes, more than the {} limit of one record\n\
             hint: set {RECORD_VAR} (e.g. {RECORD_VAR}=64GiB) to read larger records",
            crate::units::human_bytes(self.record)
        )
    }

    /// Checks a record's size against [`Limits::record`].
    #[inline]
    pub fn check_record(&self, bytes: u64) -> Result<(), String> {
        if bytes > self.record {
            Err(self.record_error(bytes))
        } else {
            Ok(())
        }
    }
}

/// The environment variable that sets the memory a pre-pass may plan to
/// hold (Belady's next-access times: 16 bytes a request).
pub const PREPASS_VAR: &str = "TIERLAB_MAX_PREPASS";

/// The memory a pre-pass may plan to hold, and where that bound comes
/// from: `TIERLAB_MAX_PREPASS`, else the memory the system has available
/// now (Linux's `MemAvailable`), else none (only a failed allocation
/// stops it). Checked before the pass starts when the source knows its
/// length, and as it grows otherwise: an allocation the kernel grants but
/// cannot back would end in the OOM killer, long after the pass began.
pub fn prepass_budget() -> Result<Option<(u64, String)>, String> {
    if std::env::var_os(PREPASS_VAR).is_some() {
        let n = var(PREPASS_VAR, 0)?;
        return Ok(Some((
            n,
            format!("{PREPASS_VAR}={}", crate::units::human_bytes(n)),
        )));
    }
    Ok(mem_available().map(|n| {
        (
            n,
            format!("{} the system has available", crate::units::human_bytes(n)),
        )
    }))
}

/// Linux's estimate of the memory available to a new program, in bytes.
fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

fn var(name: &str, default: u64) -> Result<u64, String> {
    let Some(v) = std::env::var_os(name) else {
        return Ok(default);
    };
    let v = v.to_string_lossy();
    match parse_size(v.trim()) {
        Ok(Size::Absolute(n)) if n > 0 => Ok(n),
        _ => Err(format!(
            "{name}={:?} is not a size in bytes (e.g. 1MiB, 4GiB)",
            crate::units::clip(&v, 40)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_over_the_limit_are_refused_with_the_variable() {
        let l = Limits {
            line: 10,
            record: 4096,
        };
        assert!(l.check_record(4096).is_ok());
        let e = l.check_record(4097).unwrap_err();
        assert!(e.contains("4097 bytes") && e.contains(RECORD_VAR), "{e}");
    }
}
