//! The run layer: what turns a config into engine objects and drives them.
//! `vm` and `vm_procs` drive the virtual-memory model, `tiered` its
//! multilevel main memory (the per-reference
//! core, its loop and its result); `curve` and `curve_sizes` answer
//! `tierlab mrc` from what was asked (a config's hierarchy simulated at
//! given sizes included); `assembly` translates a config's sections into
//! the engine objects of the layers below.

pub mod assembly;
pub mod curve;
pub mod curve_sizes;
pub mod driver;
pub mod runner;
pub mod tiered;
pub mod tiers;
pub mod timed;
pub mod timeline;
pub mod vm;
pub mod vm_core;
pub mod vm_procs;

pub use curve::{curve, Ask, Method};
pub use curve_sizes::{parse_sizes, resolve_sizes, simulate_sizes};
pub use runner::Runner;
