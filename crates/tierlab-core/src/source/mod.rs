//! Where requests come from: a `[workload]` (a generator or a trace file)
//! checked into a [`Source`], the registries of generators
//! ([`generators`]) and trace formats ([`formats`]), and [`open`], which
//! turns a source into a stream of requests.

pub mod formats;
pub mod generators;
pub mod workload;

pub use workload::{open, Source, WorkloadConfig};
