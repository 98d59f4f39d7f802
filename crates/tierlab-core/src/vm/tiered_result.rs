//! The `tiered` object of a run result: what multilevel main memory did
//! (docs/tiered-memory.md#outputs). Absent from a result without
//! `[[vm.node]]`, so every other run's output is unchanged.

use super::migrate::PolicyReport;
use serde::Serialize;

/// One memory node's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NodeResult {
    pub name: String,
    pub tech: String,
    pub capacity: u64,
    pub frames: u64,
    /// Page references served on this node (a reference spanning two
    /// pages counts on each page's node), reads and writes among them.
    pub accesses: u64,
    pub reads: u64,
    pub writes: u64,
    pub bytes: u64,
    /// Data access time on this node (ns): its references' accesses at its
    /// medium's latency and bandwidth.
    pub time_ns: f64,
    pub mean_access_ns: f64,
    /// This node's share of all page references and of their data time.
    pub access_share: f64,
    pub time_share: f64,
    /// Pages migrated in from a slower node, in from a faster one, and out.
    pub promoted_in: u64,
    pub demoted_in: u64,
    pub migrated_out: u64,
    /// Pages on the node at the end.
    pub resident_pages: u64,
}

/// Time the policy's work took (ns), by kind: charged to the run
/// (`time_ns`, `slowdown`) beside the references' own time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Overheads {
    /// Copies (the slower node's access of a page), page-table updates and
    /// TLB shootdowns of the migrations.
    pub migrations_ns: f64,
    pub hint_faults_ns: f64,
    pub samples_ns: f64,
    pub scans_ns: f64,
    pub total_ns: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TieredResult {
    /// `vm.migration.type` and `vm.placement.type`.
    pub policy: String,
    pub placement: String,
    /// The Linux version whose behaviour the policy models (`linux`, `tpp`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    pub nodes: Vec<NodeResult>,
    /// Node 0's share of page references, and the static oracle's: the
    /// share the most referenced pages would take on node 0's frames over
    /// the whole run (from this run's per-page counts).
    pub fast_share_of_accesses: f64,
    pub oracle_fast_share_of_accesses: f64,
    pub promotions: u64,
    pub demotions: u64,
    pub migration_bytes: u64,
    /// Moves a policy asked for that found no room.
    pub refused_moves: u64,
    /// Demotions of a page promoted in the same epoch of
    /// `ping_pong_epoch` references (the timeline's interval,
    /// `run.interval`), and their share of the demotions.
    pub ping_pong: u64,
    pub ping_pong_share: f64,
    pub ping_pong_epoch: u64,
    pub overhead: Overheads,
    /// The policy's own counts (samples, hint faults, scans, refusals by
    /// reason, its final hot threshold).
    pub policy_report: PolicyReport,
    /// Pages a scan made inaccessible.
    pub scanned_pages: u64,
    /// `[vm.migration.cost]` keys left at 0: those events were not charged.
    pub uncharged: Vec<String>,
    /// The run's time (references plus compute) with the overheads, the
    /// same trace with every page on node 0, and their ratio.
    pub time_ns: f64,
    pub all_fast_time_ns: f64,
    pub slowdown: f64,
    pub slowdown_basis: String,
    /// The run's simulated time (the policies' periods run on it).
    pub simulated_s: f64,
}
