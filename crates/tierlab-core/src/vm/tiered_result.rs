//! The `tiered` object of a run result: what multilevel main memory did
//! (docs/tiered-memory.md#outputs). Absent from a result without
//! `[[vm.node]]`, so every other run's output is unchanged.

use super::migrate::PolicyReport;
use super::nodes::NodeCounters;
use crate::device::energy::EnergyParts;
use crate::device::wear::{dwpd, TierWear};
use crate::device::{area_cost, Activity, AreaCost, DeviceEnergy, PowerDown};
use crate::tech::Technology;
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
    /// `[vm.cpu]`: the time its references and the migrations' copies
    /// waited for its bandwidth, and the time they held it (ns; each node
    /// one server of its medium's bandwidth, run/tiered.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth_busy_ns: Option<f64>,
    /// This node's share of all page references and of their data time.
    pub access_share: f64,
    pub time_share: f64,
    /// Pages migrated in from a slower node, in from a faster one, and out.
    pub promoted_in: u64,
    pub demoted_in: u64,
    pub migrated_out: u64,
    /// Pages on the node at the end.
    pub resident_pages: u64,
    /// Access units of its medium read and programmed: the references',
    /// the migrations' copies (a page read on the source, written on the
    /// destination) and the pages placed on it as they entered memory;
    /// node 0's also the page-table walks' reads.
    pub pages_read: u64,
    pub pages_programmed: u64,
    /// `bytes_programmed` (the writes', the copies' in and the fills'
    /// bytes), `lifetime_years`, `dwpd`, `tbw_tb`: device/wear.rs over the
    /// run's time.
    #[serde(flatten)]
    pub wear: TierWear,
    /// `area_cm2`, `cost_usd`, `price_year`...: its capacity at its
    /// medium's price (in `[cost] year` when given).
    #[serde(flatten)]
    pub area_cost: AreaCost,
    /// `energy_j`, `power_w`, `energy`, `energy_unknown`,
    /// `device_busy_ns`, `active_share`, `power_down`: device/energy.rs.
    #[serde(flatten)]
    pub energy: DeviceEnergy,
}

/// What a node did besides its references' own accesses: the migrations'
/// copies and the pages placed on it (each a whole page written), and on
/// node 0 the page-table walks' reads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeWork {
    pub units_read: u64,
    pub units_written: u64,
    pub bytes_written: u64,
    /// Its service time for them (ns).
    pub busy_ns: f64,
}

/// A node's wear, area and cost, and energy: the device layer's figures
/// for a device of `medium` and `capacity` bytes that served the accesses
/// of `c` and did `w`, over `elapsed_ns` of the run (one channel; idle time
/// at the idle power: a node has no power-down key).
pub fn node_device(
    medium: &Technology,
    capacity: u64,
    c: &NodeCounters,
    w: &NodeWork,
    elapsed_ns: f64,
) -> (u64, u64, TierWear, AreaCost, DeviceEnergy) {
    let (read, programmed) = (
        c.units_read + w.units_read,
        c.units_written + w.units_written,
    );
    let (wear, _) = TierWear::of(
        None,
        None,
        c.bytes_written + w.bytes_written,
        medium,
        Some(capacity),
        elapsed_ns / 1e9,
    );
    let energy = DeviceEnergy::of(
        medium,
        &Activity {
            pages_read: read,
            pages_programmed: programmed,
            erases: wear.erases,
            busy_ns: c.time_ns + w.busy_ns,
            channels: 1,
            elapsed_ns,
            capacity_bytes: Some(capacity),
        },
        PowerDown::None,
    );
    (
        read,
        programmed,
        wear,
        area_cost(medium, capacity, false),
        energy,
    )
}

/// `Some(sum)` of parts all known, else None.
fn sum_all(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    xs.sum()
}

/// The memory as one tier, from its nodes: what the result's memory tier
/// reports of wear, area and cost, and energy with several nodes.
/// Energy: the nodes' known energies added (null when none is known), each
/// part only when every node knows it, the unknown parts of any node;
/// active share by capacity (the share of capacity x time active). Wear:
/// bytes added, the first node to wear out's lifetime, drive writes per
/// day over all the bytes, TBW when every node has one. Cost: added when
/// every node has one.
pub fn memory_totals(nodes: &[NodeResult], elapsed_ns: f64) -> (TierWear, AreaCost, DeviceEnergy) {
    let capacity: u64 = nodes.iter().map(|n| n.capacity).sum();
    let bytes: u64 = nodes.iter().map(|n| n.wear.bytes_programmed).sum();
    let seconds = elapsed_ns / 1e9;
    let wear = TierWear {
        bytes_programmed: bytes,
        erases: nodes.iter().map(|n| n.wear.erases).sum(),
        lifetime_years: nodes
            .iter()
            .filter_map(|n| n.wear.lifetime_years)
            .min_by(f64::total_cmp),
        dwpd: (seconds > 0.0 && seconds.is_finite() && capacity > 0)
            .then(|| dwpd(capacity as f64, bytes as f64, seconds)),
        tbw_tb: sum_all(nodes.iter().map(|n| n.wear.tbw_tb)),
        ..TierWear::default()
    };
    let same = |f: &dyn Fn(&NodeResult) -> Option<u32>| {
        let first = f(&nodes[0]);
        nodes
            .iter()
            .all(|n| f(n) == first)
            .then_some(first)
            .flatten()
    };
    let cost_usd = sum_all(nodes.iter().map(|n| n.area_cost.cost_usd));
    let gbit = capacity as f64 * 8.0 / crate::device::BITS_PER_GBIT;
    let basis = nodes[0].area_cost.area_basis;
    let cost = AreaCost {
        area_cm2: sum_all(nodes.iter().map(|n| n.area_cost.area_cm2)),
        area_basis: nodes
            .iter()
            .all(|n| n.area_cost.area_basis == basis)
            .then_some(basis)
            .flatten(),
        cost_usd,
        cost_per_usable_gbit: cost_usd.filter(|_| gbit > 0.0).map(|c| c / gbit),
        price_year: same(&|n| n.area_cost.price_year),
    };
    let e = |f: &dyn Fn(&EnergyParts) -> Option<f64>| {
        sum_all(nodes.iter().map(|n| f(&n.energy.energy)))
    };
    let known: Vec<f64> = nodes.iter().filter_map(|n| n.energy.energy_j).collect();
    let energy_j = (!known.is_empty()).then(|| known.iter().sum::<f64>());
    let mut unknown: Vec<&'static str> = Vec::new();
    for n in nodes {
        for p in &n.energy.energy_unknown {
            if !unknown.contains(p) {
                unknown.push(p);
            }
        }
    }
    let weighted: f64 = nodes
        .iter()
        .map(|n| n.energy.active_share.unwrap_or(0.0) * n.capacity as f64)
        .sum();
    let energy = DeviceEnergy {
        energy_j,
        power_w: energy_j
            .filter(|_| elapsed_ns > 0.0 && elapsed_ns.is_finite())
            .map(|j| j / (elapsed_ns * 1e-9)),
        energy: EnergyParts {
            read_j: e(&|p| p.read_j),
            write_j: e(&|p| p.write_j),
            erase_j: e(&|p| p.erase_j),
            background_j: e(&|p| p.background_j),
            active_j: e(&|p| p.active_j),
            idle_j: e(&|p| p.idle_j),
            powerdown_j: e(&|p| p.powerdown_j),
        },
        energy_unknown: unknown,
        device_busy_ns: nodes.iter().map(|n| n.energy.device_busy_ns).sum(),
        active_share: nodes
            .iter()
            .all(|n| n.energy.active_share.is_some())
            .then(|| weighted / capacity.max(1) as f64),
        power_down: PowerDown::None,
    };
    (wear, cost, energy)
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
