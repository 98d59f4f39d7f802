//! tierlab-core: the engine of tierlab.
//!
//! Requests stream from a [`trace::TraceSource`] (a file reader or a seeded
//! generator) through a [`hierarchy::Hierarchy`] of [`tier::Tier`]s above a
//! backing store. Each tier orders its entries with an eviction
//! [`policy::Policy`]; the [`cost`] model turns the events into simulated time.
//! [`run::Runner`] drives a config's model (run/driver.rs: the one
//! driver) over its source and produces a [`stats::RunResult`]. Nothing
//! here depends on Python.

pub mod admission;
pub mod config;
pub mod cost;
pub mod device;
pub mod error;
pub mod hash;
pub mod hierarchy;
pub mod index;
pub mod mrc;
pub mod policy;
pub mod prelude;
pub mod request;
pub mod rng;
pub mod run;
pub mod source;
pub mod spec;
pub mod stats;
pub mod tech;
pub mod tier;
pub mod time;
pub mod units;
pub mod vm;

pub use error::Error;
pub use request::{Op, Request};

/// The crate version, recorded in every result.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
