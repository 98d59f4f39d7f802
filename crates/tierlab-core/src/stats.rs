//! What a run reports: whole-run and per-tier figures and an interval
//! timeline. Serialised as the JSON object of `tierlab run --json`.

use crate::device::wear::TierWear;
use crate::device::{Activity, AreaCost, DeviceEnergy, PowerDown, RunEnergy};
use crate::hierarchy::{BackingCounters, Hierarchy, Totals};
use crate::tech::Technology;
use crate::tier::TierCounters;
use crate::units::human_bytes;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TierResult {
    pub name: String,
    pub tech: String,
    pub policy: String,
    pub admission: String,
    /// Bytes, or objects when `unit_size`.
    pub capacity: u64,
    pub used: u64,
    pub objects: u64,
    pub write: String,
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
    #[serde(flatten)]
    pub counters: TierCounters,
    #[serde(flatten)]
    pub wear: TierWear,
    /// `area_cm2`, `area_basis`, `cost_usd`, `cost_per_usable_gbit`: null
    /// when the catalog lacks a figure or the capacity counts objects.
    #[serde(flatten)]
    pub area_cost: AreaCost,
    /// `energy_j`, `power_w`, `energy` (by part), `energy_unknown`,
    /// `device_busy_ns`, `active_share`, `power_down` (docs/device.md).
    #[serde(flatten)]
    pub energy: DeviceEnergy,
    /// The flash translation layer's figures (absent without `ftl`):
    /// docs/device.md#flash-translation-layer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ftl: Option<crate::device::ftl::FtlResult>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BackingResult {
    pub tech: String,
    #[serde(flatten)]
    pub counters: BackingCounters,
    #[serde(flatten)]
    pub energy: DeviceEnergy,
    /// The backing store's FTL figures (absent without `[backing] ftl`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ftl: Option<crate::device::ftl::FtlResult>,
}

/// A column a model adds to the timeline by name: counts or figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Column {
    Counts(Vec<u64>),
    Figures(Vec<f64>),
}

/// One point per `run.interval` requests: figures over that interval, plus
/// the cumulative miss ratio.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Timeline {
    pub requests: Vec<u64>,
    /// Reads and writes in the interval. An interval of deletes only has
    /// none, and its miss ratio and AMAT (0) mean nothing: plots skip it.
    pub lookups: Vec<u64>,
    pub miss_ratio: Vec<f64>,
    pub amat_ns: Vec<f64>,
    pub cumulative_miss_ratio: Vec<f64>,
    /// Every device's known energy over the interval (J; null when none is
    /// known) and its mean power (W): device/energy.rs, with each device's
    /// busy time from its counters. Absent from a `[vm]` run's timeline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub energy_j: Vec<Option<f64>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub power_w: Vec<Option<f64>>,
    /// `[vm.pressure]` runs only (docs/memorage.md): free frames and
    /// borrowed bytes at the row, pages swapped out and read from the swap
    /// device over the interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub free_pages: Vec<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub borrowed_bytes: Vec<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub swap_out_pages: Vec<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub swap_in_pages: Vec<u64>,
    /// Columns a model names itself (multilevel memory's per-node
    /// accesses, docs/tiered-memory.md#outputs): absent otherwise.
    #[serde(flatten)]
    pub columns: std::collections::BTreeMap<String, Column>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunResult {
    pub version: String,
    pub workload: String,
    pub unit_size: bool,
    pub fill: String,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub deletes: u64,
    pub hits: u64,
    pub misses: u64,
    /// Misses of every tier over reads and writes.
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
    pub bytes_requested: u64,
    /// Mean access time of reads and writes (ns).
    pub amat_ns: f64,
    /// Access time of all requests plus compute time (simulated ns).
    pub total_time_ns: f64,
    pub access_time_ns: f64,
    pub compute_time_ns: f64,
    /// Periodic flushes (background; not part of total_time_ns).
    pub flush_time_ns: f64,
    pub flushes: u64,
    /// Requests per simulated second.
    pub throughput_rps: f64,
    /// Requested bytes per simulated second.
    pub throughput_bytes_per_s: f64,
    /// Response-time percentiles (time model only; null in the serial
    /// loop, which keeps no per-request times).
    pub latency_ns: Option<crate::time::result::LatencyStats>,
    /// The time model's figures (null without one): docs/time.md.
    pub time: Option<crate::time::result::TimeResult>,
    pub backing: BackingResult,
    pub tiers: Vec<TierResult>,
    /// Malformed trace records passed over (only with `skip_bad`).
    pub skipped_records: u64,
    /// What the user should know about this run's figures (one line each,
    /// printed by `tierlab run` on stderr): tiers that refused objects
    /// larger than their whole capacity.
    pub warnings: Vec<String>,
    /// Not part of the summary: served separately as a table.
    #[serde(skip)]
    pub timeline: Timeline,
    /// Translation and fault figures of a `[vm]` run (null otherwise).
    pub vm: Option<crate::vm::VmResult>,
    /// Each process's (address space's) figures of a `[vm]` run.
    pub processes: Vec<crate::vm::ProcessResult>,
    /// `[vm.memorage]`'s figures (absent otherwise): docs/memorage.md.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memorage: Option<crate::vm::MemorageResult>,
    /// Multilevel main memory's figures (absent without `[[vm.node]]`):
    /// docs/tiered-memory.md#outputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiered: Option<crate::vm::tiered_result::TieredResult>,
    /// `energy_j`, `power_w`: every device's known energy added up, over
    /// the counted time; `energy_unknown`: the parts left out.
    #[serde(flatten)]
    pub run_energy: RunEnergy,
    /// `[cost] year`'s figures: total, throughput per US$ (absent
    /// without `[cost]`): docs/device.md#cost-basis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::device::price::RunCost>,
}

/// The run-wide counts a model keeps, from which [`RunResult::build`]
/// computes the result's ratios, means and rates (the one place they are
/// computed, for every model).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunCounts {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub deletes: u64,
    /// Lookups (reads and writes) that missed every tier; in a `[vm]` run,
    /// references that faulted.
    pub misses: u64,
    pub bytes_requested: u64,
    /// The bytes of the lookups that missed.
    pub bytes_missed: u64,
    /// Access time summed over the requests (ns).
    pub access_time_ns: f64,
    pub compute_time_ns: f64,
    pub flush_time_ns: f64,
    pub flushes: u64,
    /// The run's length, when it is not its access plus compute time
    /// (processes that overlap: run/vm_procs.rs).
    pub elapsed_ns: Option<f64>,
}

impl RunCounts {
    /// The run's counted length (ns).
    pub fn total_time_ns(&self) -> f64 {
        self.elapsed_ns
            .unwrap_or(self.access_time_ns + self.compute_time_ns)
    }
}

impl TierResult {
    /// A tier's result: its facts and counters, with its ratios computed
    /// here (every model's tiers alike). Energy is set afterwards
    /// ([`RunResult::set_energy`]).
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        name: String,
        (tech, policy, admission): (&str, &str, &str),
        capacity: u64,
        (used, objects): (u64, u64),
        write: &str,
        counters: TierCounters,
        wear: TierWear,
        area_cost: AreaCost,
        ftl: Option<crate::device::ftl::FtlResult>,
    ) -> TierResult {
        let c = &counters;
        TierResult {
            name,
            tech: tech.into(),
            policy: policy.into(),
            admission: admission.into(),
            capacity,
            used,
            objects,
            write: write.into(),
            miss_ratio: ratio(c.misses, c.hits + c.misses),
            byte_miss_ratio: ratio(c.miss_bytes, c.hit_bytes + c.miss_bytes),
            counters,
            wear,
            area_cost,
            energy: DeviceEnergy::default(),
            ftl,
        }
    }
}

pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Static facts about each tier the hierarchy does not keep.
pub struct TierMeta {
    pub tech: String,
    pub policy: String,
    pub admission: String,
    /// The tier's medium as the run's catalog has it (overrides applied).
    pub medium: Technology,
    /// The tier's area and cost, fixed by its medium and capacity.
    pub area_cost: AreaCost,
    pub power_down: PowerDown,
}

/// The backing store's facts, for its energy.
#[derive(Clone, Debug)]
pub struct BackingMeta {
    pub tech: String,
    pub medium: Technology,
    /// Bytes (`backing.capacity`), if given.
    pub capacity: Option<u64>,
    pub power_down: PowerDown,
}

/// A device's busy time (ns, over its channels) and its channels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Busy {
    pub ns: f64,
    pub channels: u32,
}

impl RunResult {
    /// A tier run's result: the hierarchy's counts and tiers through the
    /// one builder ([`RunResult::build`]), the devices' energy from their
    /// counters.
    pub fn collect(
        h: &Hierarchy,
        meta: &[TierMeta],
        backing: &BackingMeta,
        workload: String,
        unit_size: bool,
        timeline: Timeline,
    ) -> Self {
        let t: &Totals = &h.totals;
        let counts = RunCounts {
            requests: t.requests,
            reads: t.reads,
            writes: t.writes,
            deletes: t.deletes,
            misses: t.misses,
            bytes_requested: t.bytes_requested,
            bytes_missed: t.bytes_missed,
            access_time_ns: t.access_time_ns,
            compute_time_ns: h.compute_ns * t.requests as f64,
            flush_time_ns: t.flush_time_ns,
            flushes: t.flushes,
            elapsed_ns: None,
        };
        let total = counts.total_time_ns();
        let tiers: Vec<TierResult> = h
            .tiers
            .iter()
            .zip(meta)
            .map(|(tier, m)| {
                // The serial run's simulated time; a time model's elapsed
                // time replaces it (`apply_time`).
                let (wear, swap_pages) = TierWear::of(
                    tier.block_wear(),
                    tier.flash_erases(),
                    tier.c.bytes_in,
                    &m.medium,
                    (!unit_size).then_some(tier.capacity),
                    total / 1e9,
                );
                let mut counters = tier.c.clone();
                counters.pages_programmed += swap_pages;
                TierResult::build(
                    tier.name.clone(),
                    (&m.tech, &m.policy, &m.admission),
                    tier.capacity,
                    (tier.used(), tier.len() as u64),
                    if tier.write_back {
                        "write-back"
                    } else {
                        "write-through"
                    },
                    counters,
                    wear,
                    m.area_cost,
                    tier.ftl.as_ref().map(|f| crate::device::ftl::FtlResult {
                        overflow_pages: f.overflow_pages(),
                        ..f.ftl()
                            .result(f.page_bytes(), m.medium.endurance, total / 1e9)
                    }),
                )
            })
            .collect();
        let placed: Vec<crate::device::basis::Placed> = meta
            .iter()
            .zip(&tiers)
            .map(|(m, t)| crate::device::basis::Placed {
                what: format!("tier {:?}", t.name),
                tech: &m.medium.name,
                read_ns: m.medium.read_ns,
                basis: m.medium.latency_basis,
            })
            .chain([crate::device::basis::Placed {
                what: "backing".into(),
                tech: &backing.medium.name,
                read_ns: backing.medium.read_ns,
                basis: backing.medium.latency_basis,
            }])
            .collect();
        let basis_warning = crate::device::basis::mixed_warning(&placed);
        let mut r = RunResult::build(
            workload,
            unit_size,
            format!("{:?}", h.fill).to_lowercase(),
            counts,
            tiers,
            BackingResult {
                tech: backing.tech.clone(),
                counters: h.backing.clone(),
                energy: DeviceEnergy::default(),
                ftl: h
                    .backing_ftl
                    .as_ref()
                    .map(|f| crate::device::ftl::FtlResult {
                        overflow_pages: f.space.overflow_pages(),
                        ..f.space.ftl().result(
                            f.space.page_bytes(),
                            backing.medium.endurance,
                            total / 1e9,
                        )
                    }),
            },
            timeline,
        );
        r.warnings.extend(basis_warning);
        // A serial run's devices are busy for their charges less the
        // software overhead inside each, from the counters (a flashcache
        // tier's swap copies are programs but no charge); a time model
        // replaces these with its stations' busy time (`set_energy` again).
        let b = &h.backing;
        let busy: Vec<Busy> = h
            .tiers
            .iter()
            .map(|t| {
                t.cost
                    .busy_ns(t.c.reads, t.c.writes, t.c.pages_read + t.c.pages_programmed)
            })
            .chain([h
                .backing_cost
                .busy_ns(b.reads, b.writes, b.pages_read + b.pages_written)])
            .map(|ns| Busy { ns, channels: 1 })
            .collect();
        r.set_energy(meta, backing, &busy, total);
        r
    }

    /// Each device's energy and power, and the run's, from the counters,
    /// `busy` (one per tier, then the backing store) and the counted time.
    /// The one result builder: every model's result is made here from its
    /// counts, tiers and backing store, so that each figure has one
    /// definition. Tiers that refused objects larger than their capacity
    /// are warned of.
    pub fn build(
        workload: String,
        unit_size: bool,
        fill: String,
        c: RunCounts,
        tiers: Vec<TierResult>,
        backing: BackingResult,
        timeline: Timeline,
    ) -> RunResult {
        let lookups = c.reads + c.writes;
        let total = c.total_time_ns();
        let per_s = |x: f64| if total > 0.0 { x * 1e9 / total } else { 0.0 };
        let warnings: Vec<String> = tiers
            .iter()
            .enumerate()
            .filter_map(|(i, t)| refusal_warning(i, t, unit_size))
            .collect();
        RunResult {
            version: crate::VERSION.into(),
            workload,
            unit_size,
            fill,
            requests: c.requests,
            reads: c.reads,
            writes: c.writes,
            deletes: c.deletes,
            hits: lookups - c.misses,
            misses: c.misses,
            miss_ratio: ratio(c.misses, lookups),
            byte_miss_ratio: ratio(c.bytes_missed, c.bytes_requested),
            bytes_requested: c.bytes_requested,
            amat_ns: if lookups > 0 {
                c.access_time_ns / lookups as f64
            } else {
                0.0
            },
            total_time_ns: total,
            access_time_ns: c.access_time_ns,
            compute_time_ns: c.compute_time_ns,
            flush_time_ns: c.flush_time_ns,
            flushes: c.flushes,
            throughput_rps: per_s(c.requests as f64),
            throughput_bytes_per_s: per_s(c.bytes_requested as f64),
            latency_ns: None,
            time: None,
            backing,
            tiers,
            skipped_records: 0,
            warnings,
            timeline,
            vm: None,
            processes: Vec::new(),
            memorage: None,
            tiered: None,
            run_energy: RunEnergy::default(),
            cost: None,
        }
    }

    pub fn set_energy(
        &mut self,
        meta: &[TierMeta],
        backing: &BackingMeta,
        busy: &[Busy],
        elapsed_ns: f64,
    ) {
        let unit = self.unit_size;
        for ((t, m), b) in self.tiers.iter_mut().zip(meta).zip(busy) {
            let a = Activity {
                pages_read: t.counters.pages_read,
                pages_programmed: t.counters.pages_programmed,
                erases: t.wear.erases,
                busy_ns: b.ns,
                channels: b.channels,
                elapsed_ns,
                capacity_bytes: (!unit).then_some(t.capacity),
            };
            t.energy = DeviceEnergy::of(&m.medium, &a, m.power_down);
        }
        if let Some(b) = busy.get(self.tiers.len()) {
            let c = &self.backing.counters;
            let a = Activity {
                pages_read: c.pages_read,
                pages_programmed: c.pages_written,
                // Erases are counted for tiers, and for a backing store
                // with an FTL; else unknown, and a medium that erases
                // says so.
                erases: self.backing.ftl.as_ref().map(|f| f.erases),
                busy_ns: b.ns,
                channels: b.channels,
                elapsed_ns,
                capacity_bytes: backing.capacity,
            };
            self.backing.energy = DeviceEnergy::of(&backing.medium, &a, backing.power_down);
        }
        let devices = self
            .tiers
            .iter()
            .map(|t| (t.name.as_str(), &t.energy))
            .chain([("backing", &self.backing.energy)]);
        self.run_energy = RunEnergy::of(devices, elapsed_ns);
        self.warn_overloaded(busy, elapsed_ns);
    }

    /// Warns of each device busier than its channels over `elapsed_ns`
    /// (device/overload.rs), replacing the warnings of an earlier call.
    fn warn_overloaded(&mut self, busy: &[Busy], elapsed_ns: f64) {
        use crate::device::overload;
        self.warnings.retain(|w| !w.starts_with(overload::PREFIX));
        let timed = self.time.is_some();
        let names = self
            .tiers
            .iter()
            .map(|t| (format!("tier {:?}", t.name), t.tech.clone()))
            .chain([("backing".to_string(), self.backing.tech.clone())]);
        let found: Vec<String> = names
            .zip(busy)
            .filter_map(|((what, tech), b)| {
                overload::warning(&what, &tech, b.ns, b.channels, elapsed_ns, timed)
            })
            .collect();
        self.warnings.extend(found);
    }
}

impl RunResult {
    /// A time model's figures: elapsed time and throughput replace the
    /// serial sums (`access_time_ns` and `amat_ns` stay the unqueued sums of
    /// the accesses' charges).
    pub fn apply_time(&mut self, t: crate::time::result::TimeResult) {
        // Wear rates were taken over the serial sum this replaces.
        for tier in &mut self.tiers {
            tier.wear
                .retime(self.total_time_ns / 1e9, t.elapsed_ns / 1e9);
            if let Some(f) = &mut tier.ftl {
                f.retime(self.total_time_ns / 1e9, t.elapsed_ns / 1e9);
            }
        }
        if let Some(f) = &mut self.backing.ftl {
            f.retime(self.total_time_ns / 1e9, t.elapsed_ns / 1e9);
        }
        self.total_time_ns = t.elapsed_ns;
        self.throughput_rps = t.throughput_rps;
        self.throughput_bytes_per_s = t.throughput_bytes_per_s;
        self.latency_ns = Some(t.latency_ns.clone());
        self.time = Some(t);
    }
}

/// The warning for tier `i` when it refused objects for their size (larger
/// than its whole capacity), with the fix: a tier smaller than the objects
/// it is meant to hold otherwise runs with a miss ratio of 1 and no word.
fn refusal_warning(i: usize, t: &TierResult, unit_size: bool) -> Option<String> {
    let c = &t.counters;
    if c.rejected == 0 {
        return None;
    }
    let (cap, largest) = if unit_size {
        (format!("{} objects", t.capacity), "1 object".to_string())
    } else {
        (human_bytes(t.capacity), human_bytes(c.largest_rejected))
    };
    let need = if unit_size {
        "1".to_string()
    } else {
        format!("{} (bytes)", c.largest_rejected)
    };
    Some(format!(
        "tier {:?} ({cap}) refused {} objects ({}) larger than its whole capacity, \
         the largest {largest}: they were not cached in it. Give tier[{i}].capacity \
         {need} or more to hold them.",
        t.name,
        c.rejected,
        human_bytes(c.rejected_bytes),
    ))
}
