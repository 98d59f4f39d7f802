//! The virtual-memory layer: a byte-addressed memory trace translated
//! (TLB levels, page-table walks) and paged (frames of the memory tier,
//! minor and major faults, read-ahead, swap-outs to the `[backing]`
//! device), each reference timed as T_addr + T_data. One file per part:
//! `config` (`[vm]`), `tlb`, `walk`, `paging`, `result` (the `vm` object and
//! `processes`), `run` (the loop over the trace), `procs` (processes on hardware
//! threads that block on major faults, `[vm.cpu]`), `pressure` (watermarks,
//! kswapd, direct reclaim, `[vm.pressure]`), `memorage` (memory that borrows
//! the storage device's free capacity, `[vm.memorage]`), `readahead` (how
//! many pages a major fault reads, `vm.read_ahead_mode`), `table` (the
//! pager's page table: each page's state bits and slot). Multilevel main
//! memory (docs/tiered-memory.md): `tiered_config` (`[[vm.node]]`,
//! `[vm.placement]`, `[vm.migration]`), `nodes` (the nodes' frames),
//! `placement`, `migrate` (the migration policies, one file each),
//! `tiered_result` (the result's `tiered` object); the model that runs
//! them is run/tiered.rs.

pub mod config;
pub mod memorage;
pub mod migrate;
pub mod nodes;
pub mod paging;
pub mod placement;
pub mod pressure;
pub mod readahead;
pub mod result;
mod table;
pub mod tiered_config;
pub mod tiered_result;
pub mod tlb;
pub mod walk;

pub use config::VmConfig;
pub use memorage::MemorageResult;
pub use result::{ProcessResult, VmResult};
