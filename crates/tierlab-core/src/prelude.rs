//! The crate's public face: what the Python binding (crates/tierlab-py)
//! and the examples use, in one place. They import from here and nothing
//! deeper (tests/layers.rs checks it), so the layers beneath can move
//! without breaking them.

pub use crate::config::{workload_only_from_json, Config};
pub use crate::cost::AccessCost;
pub use crate::error::Error;
pub use crate::mrc::{exact, shards, MrcOptions, Sampling};
pub use crate::run::Runner;
pub use crate::run::{curve, Ask};
pub use crate::source::formats::{guess as guess_format, NAMES as FORMAT_NAMES};
pub use crate::source::generators::BENCHMARKS;
pub use crate::source::tools::{convert_to_oracle, trace_stats, write_csv};
pub use crate::source::trace::capture::start_failure as capture_start_failure;
pub use crate::source::trace::cpu_caches::{filter_lackey, Geometry as CacheGeometry};
pub use crate::source::trace::csv::HEADER as CSV_HEADER;
pub use crate::source::trace::memtrace::write_memtrace;
pub use crate::source::trace::strace::SYSCALLS as STRACE_SYSCALLS;
pub use crate::source::trace::TraceError;
pub use crate::source::workload::types as workload_types;
pub use crate::source::Source;
pub use crate::spec::ConfigError;
pub use crate::tech::{validate as validate_tech, Catalog, TechOverride, Technology};
pub use crate::units::{bound_message, human_bytes, parse_size, Size};
pub use crate::VERSION;
