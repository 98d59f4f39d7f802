//! What the virtual-memory layer reports: the `vm` object and the
//! `processes` list of a run's result (`tierlab run --json`).

use serde::Serialize;

/// Translation, fault and time figures of a whole run. T_total = T_addr +
/// T_data, as "Issues in File Caching and Virtual Memory Paging with Fast SCM Storage" splits it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct VmResult {
    pub page_size: u64,
    pub frames: u64,
    /// Memory references of the trace (reads and writes).
    pub references: u64,
    /// Pages translated: one per reference, two for one that straddles a
    /// page boundary.
    pub translations: u64,
    /// Translations that missed every TLB level and walked the page table.
    pub tlb_misses: u64,
    pub tlb_miss_ratio: f64,
    /// First-level misses that the second level caught.
    pub tlb2_hits: u64,
    pub walks: u64,
    /// Memory references the walks made (levels per walk, fewer with a
    /// page-walk cache).
    pub walk_references: u64,
    pub walk_cache_hits: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Faults per translation.
    pub fault_rate: f64,
    /// Dirty pages written to the swap device on eviction.
    pub swap_outs: u64,
    /// Pages read from the swap device (faulting pages and read-ahead).
    pub pages_read: u64,
    pub read_ahead_pages: u64,
    /// Read-ahead pages evicted before any reference.
    pub read_ahead_unused: u64,
    /// Read-ahead pages referenced (`vm.read_ahead_mode = "adaptive"`
    /// only: the hits that size its window, vm/readahead.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_hits: Option<u64>,
    /// Distinct pages referenced (all processes).
    pub pages_touched: u64,
    /// Time of translation: TLB lookups and page-table walks.
    pub t_addr_ns: f64,
    /// Time of data: memory accesses of the references' sizes, fault
    /// handling and the swap device's reads and writes.
    pub t_data_ns: f64,
    /// (T_addr + T_data) / references.
    pub amat_ns: f64,
    /// `[vm.pressure]` only (vm/pressure.rs): the watermarks min, low,
    /// high in pages; kswapd's passes and the pages they freed; the
    /// allocations that reclaimed themselves (direct reclaim) and the pages
    /// they freed; the fewest frames free after any allocation; kswapd's
    /// CPU time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watermarks: Option<[u64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kswapd_scans: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kswapd_pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct_reclaims: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direct_reclaim_pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_free_pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kswapd_cpu_ns: Option<f64>,
    /// Regions collapsed into huge pages (`vm.huge_page` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub huge_promotions: Option<u64>,
}

/// One process (one address space): its references, faults and time.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ProcessResult {
    pub pid: u32,
    pub references: u64,
    /// Its references' T_addr + T_data plus the run's compute time per
    /// reference.
    pub runtime_ns: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub tlb_misses: u64,
    /// With `[vm.cpu]` (run/vm_procs.rs): `runtime_ns` is the wall clock from
    /// the run's start to the end of the process's last reference, split
    /// into CPU time in user mode (references, translation, memory
    /// accesses, compute), CPU time in the kernel (fault handlers, the
    /// faulting process's own swap-outs are device time) and time blocked on
    /// the swap device (queue and service of major faults' reads and of
    /// synchronous swap-outs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_ns: Option<f64>,
    /// references / major faults (references when there are none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references_per_major_fault: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references_per_minor_fault: Option<f64>,
    /// `[vm.pressure]` with no hardware thread to spare for kswapd: time
    /// kswapd took from this process's thread (run/vm_procs.rs); then
    /// `runtime_ns` = user + system + blocked + preempted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preempted_ns: Option<f64>,
}
