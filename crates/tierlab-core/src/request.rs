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
            next_access: -1,
        }
    }
    pub fn write(key: u64, size: u32) -> Self {
        Request {
            time: 0,
            key,
            size,
            op: Op::Write,
            next_access: -1,
        }
    }
}
