//! The time layer: when each request and each device operation completes
//! (docs/time.md). The cache layer says what happened (hierarchy/ops.rs);
//! this layer queues it on a CPU station, a network link and the devices,
//! under a serial, closed or open load.
//!
//! A config that sets none of its keys runs the serial model (run/tiers.rs),
//! untouched and as fast as before; any of them runs the event engine
//! (engine.rs), whose one-client closed run adds up to the same figures.

pub mod config;
pub mod disk;
pub mod engine;
pub mod result;
pub mod stack;
pub mod station;
pub mod theory;

/// The most clients a closed load may have: every client is started, and
/// keeps its state, from the first request on (2^20 of them take about
/// 64 MiB, and a closed system with more is not one a trace can fill).
pub const MAX_CLIENTS: u64 = 1 << 20;

/// Bytes a closed load's client takes from the start of the run, at most:
/// its first event in the engine's heap (16, doubled by the heap's growth),
/// its idle flag and its tally of requests and latency (32).
pub const CLIENT_BYTES: u64 = 64;

/// Whether a source's requests carry times an open load can arrive at:
/// traces with a time field; generators and files read without one number
/// their requests instead.
pub fn has_timestamps(s: &crate::source::Source) -> bool {
    use crate::source::Source;
    match s {
        Source::Oracle(_) | Source::Msr(..) | Source::Twitter(..) | Source::Strace(..) => true,
        Source::Csv(_, opts, _) => opts.time != 0,
        Source::Lackey(..) | Source::Memtrace(_) | Source::Synth(_) | Source::Workload(_) => false,
    }
}

/// Storage reached through the block layer and a driver: media neither
/// byte-addressable nor file memory (which S1 reached by page copies).
pub fn is_block_device(t: &crate::tech::Technology) -> bool {
    !t.byte_addressable && t.kind != "file-memory"
}
