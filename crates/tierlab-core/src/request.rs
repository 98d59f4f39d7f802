//! The unit of work: one access to one object.

/// What a request does to its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Op {
    #[default]
    Read,
    Write,
    /// Invalidates the key in every tier; never a hit or a miss.
    Delete,
}

/// One access. Small and `Copy` so batches stay in cache lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Request {
    /// Trace time in nanoseconds (logical: from the trace, never the wall clock).
    pub time: u64,
    /// Object or page id.
    pub key: u64,
    /// Object size in bytes.
    pub size: u32,
    pub op: Op,
    /// The process or client that issued it, 0 when the source names none
    /// (strace's pid, a CSV `pid` column, a multiprogram workload's
    /// program). The time layer deals requests to clients by it; the
    /// virtual-memory layer gives each its own address space.
    pub pid: u32,
    /// Index of the next request to the same key, -1 when there is none
    /// (oracleGeneral's next-access virtual time; used by Belady).
    pub next_access: i64,
}

impl Request {
    pub fn read(key: u64, size: u32) -> Self {
        Request {
            time: 0,
            key,
            size,
            op: Op::Read,
            pid: 0,
            next_access: -1,
        }
    }
    pub fn write(key: u64, size: u32) -> Self {
        Request {
            time: 0,
            key,
            size,
            op: Op::Write,
            pid: 0,
            next_access: -1,
        }
    }
}

/// How many requests ahead a loop over a batch of requests prefetches tier 0's index bucket, and
/// the lower tiers' buckets of keys not in tier 0 (measured on the 20M Zipf
/// trace of BENCHMARKS.md: single-tier LRU 15% faster by the minimum of
/// five runs than without; a third stage prefetching the entry was slower).
pub(crate) const PREFETCH_FAR: usize = 24;
pub(crate) const PREFETCH_NEAR: usize = 16;
