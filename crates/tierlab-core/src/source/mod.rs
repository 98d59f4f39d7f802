//! Where requests come from: a `[workload]` (a generator or a trace file)
//! checked into a [`Source`], the registries of generators
//! ([`generators`]) and trace formats ([`formats`]), [`open`], which turns a
//! source into a stream of requests, and [`setup`], the one run-setup path
//! (the footprint and next-access pre-passes and the one batch loop) every
//! entry point uses.

pub mod formats;
pub mod generators;
pub mod setup;
pub mod synth;
pub mod tools;
pub mod trace;
pub mod workload;
pub mod workloads;

pub use workload::{byte_source, open, Source, WorkloadConfig};
