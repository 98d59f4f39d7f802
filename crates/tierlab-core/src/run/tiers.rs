//! The tiers' model of a serial run: each request goes through the
//! hierarchy (hierarchy.rs) at once, and the run's time is the sum of
//! its requests' access and compute times. Its assembly, shared with the
//! timed model (run/timed.rs): the run setup, the hierarchy, the warm-up.

use crate::config::Config;
use crate::error::Error;
use crate::hierarchy::Hierarchy;
use crate::request::{Request, PREFETCH_FAR, PREFETCH_NEAR};
use crate::run::assembly::{backing_meta, hierarchy_of};
use crate::run::driver::{Clock, Common, Driver, Model, Stream, Warmup};
use crate::run::timeline::{mark_of, EnergyColumns, Recorder};
use crate::source::setup::{Progress, BATCH};
use crate::spec::ConfigError;
use crate::stats::{BackingMeta, Busy, RunResult, TierMeta};
use crate::tech::Catalog;
use crate::time::config::Warmup as WarmupConfig;

/// The hierarchy and what its result needs besides its counters.
pub struct Tiers {
    pub h: Hierarchy,
    pub meta: Vec<TierMeta>,
    pub backing: BackingMeta,
    pub unit_size: bool,
    pub energy: EnergyColumns,
    /// `[cost] year`: the run's money figures in that year's prices.
    pub cost_year: Option<u32>,
}

/// A serial run's counted time so far: its requests' access time plus
/// compute time (`total_time_ns`).
fn serial_time(h: &Hierarchy) -> f64 {
    h.totals.access_time_ns + h.compute_ns * h.totals.requests as f64
}

impl Model for Tiers {
    type Rec = Request;
    const CLOCK: Clock = Clock::Requests;

    #[inline]
    fn run(&mut self, rs: &[Request], _rec: &mut Recorder) -> Result<(), Error> {
        // The tiers' FTLs queue their work for the batch and run it at its
        // end (device/ftl_space.rs): nothing reads them in between, and
        // points, the warm-up's end and the result come between batches.
        let ftl = self.h.has_ftl();
        if ftl {
            self.h.defer_ftl(true);
        }
        for (i, r) in rs.iter().enumerate() {
            // Index lookups are cache misses on large tiers: start them
            // ahead, in two stages (see Hierarchy::prefetch_below).
            if let Some(far) = rs.get(i + PREFETCH_FAR) {
                self.h.prefetch_top(far.key);
            }
            if let Some(near) = rs.get(i + PREFETCH_NEAR) {
                self.h.prefetch_below(near.key);
            }
            self.h.access_inlined(r);
        }
        if ftl {
            self.h.flush_ftl();
        }
        Ok(())
    }

    fn issued(&self) -> u64 {
        self.h.totals.requests
    }

    fn point(&mut self, rec: &mut Recorder) {
        self.energy
            .push(&self.h, serial_time(&self.h), &mut rec.timeline);
        rec.point(mark_of(&self.h));
    }

    fn count_from_here(&mut self, _rec: &mut Recorder) {
        self.h.reset_counters();
        self.energy.restart();
    }

    fn result(&self, common: Common) -> RunResult {
        self.result_with(common, None)
    }
}

impl Tiers {
    /// The result, with the time model's figures when the run had one.
    pub fn result_with(
        &self,
        common: Common,
        timed: Option<&crate::run::timed::Timed>,
    ) -> RunResult {
        let mut r = RunResult::collect(
            &self.h,
            &self.meta,
            &self.backing,
            common.workload,
            self.unit_size,
            common.timeline,
        );
        r.skipped_records = common.skipped_records;
        if let Some(t) = timed {
            r.apply_time(t.time_result());
            // The devices' stations' busy time, over the elapsed time
            // after warm-up.
            let busy: Vec<Busy> = (0..=self.meta.len())
                .map(|d| {
                    let (ns, channels) = t.engine.device_busy(d).unwrap_or((0.0, 1));
                    Busy { ns, channels }
                })
                .collect();
            let elapsed = r.total_time_ns;
            r.set_energy(&self.meta, &self.backing, &busy, elapsed);
        }
        if let Some(year) = self.cost_year {
            let costs: Vec<f64> = r
                .tiers
                .iter()
                .filter_map(|t| t.area_cost.cost_usd)
                .collect();
            r.cost = Some(crate::device::price::RunCost::of(
                year,
                &costs,
                r.throughput_rps,
            ));
        }
        r
    }
}

/// A tier run's assembled parts: its model and feed, and what the
/// driver needs.
pub struct Assembled {
    pub tiers: Tiers,
    pub stream: Stream,
    pub warmup: Warmup,
    pub passes: u64,
    pub interval: u64,
}

/// Assembles a tier run from `cfg`, telling `progress` the requests its
/// pre-passes read (the footprint for capacities given as a share,
/// next-access times for Belady, the warm-up's share); false from it
/// stops them.
pub fn assemble(
    cfg: &Config,
    cat: &Catalog,
    mut progress: impl Progress,
) -> Result<Assembled, Error> {
    let run = crate::run::assembly::run_setup(cfg, &[], &mut progress)?;
    let (h, meta) = hierarchy_of(cfg, cat, run.footprint, run.unit_size, run.seed)?;
    let batches = run.open(BATCH, &mut progress)?;
    let passes = cfg.run.passes.max(1);
    // The warm-up in requests, when it is a count or a share.
    let requests = match cfg.run.warmup {
        None | Some(WarmupConfig::Passes(_)) | Some(WarmupConfig::Duration(_)) => 0,
        Some(WarmupConfig::Requests(n)) => n,
        Some(WarmupConfig::Share(f)) => {
            let per_pass = match batches.len_hint() {
                Some(n) => n.min(run.max_requests),
                // Read when the source cannot say (a warm-up given as a
                // share of a text trace), no further than the run.
                None => run.count_requests(&mut progress)?,
            };
            (f * (per_pass * passes) as f64).round() as u64
        }
    };
    let per_pass = batches.len_hint().map(|n| n.min(run.max_requests));
    if let (Some(n), Some(WarmupConfig::Requests(_) | WarmupConfig::Share(_))) =
        (per_pass, cfg.run.warmup)
    {
        if requests >= n * passes {
            return Err(ConfigError::at(
                "run.warmup",
                format!(
                    "{requests} requests of warm-up are the whole run ({} requests): nothing would be counted",
                    n * passes
                ),
            )
            .into());
        }
    }
    let count_from_pass = match cfg.run.warmup {
        Some(WarmupConfig::Passes(k)) => k + 1,
        _ => 1,
    };
    let timed = crate::config::checks::time_model(cfg);
    // A serial run's devices have one channel; a timed run's, their own.
    let channels: Vec<u32> = cfg
        .tiers
        .iter()
        .map(|t| t.channels)
        .chain([cfg.backing.channels])
        .map(|c| match (timed, c) {
            (true, Some(n)) => n.min(u32::MAX as u64) as u32,
            _ => 1,
        })
        .collect();
    let capacities: Vec<Option<u64>> = h
        .tiers
        .iter()
        .map(|t| (!run.unit_size).then_some(t.capacity))
        .collect();
    let backing = backing_meta(cfg, cat)?;
    Ok(Assembled {
        tiers: Tiers {
            energy: EnergyColumns::new(&meta, &capacities, &backing, &channels),
            h,
            meta,
            backing,
            unit_size: run.unit_size,
            cost_year: cfg.cost.as_ref().map(|c| c.year),
        },
        stream: Stream::new(batches, Some(run)),
        warmup: Warmup {
            requests,
            count_from_pass,
        },
        passes,
        interval: cfg.run.interval,
    })
}

/// The serial tier run of `cfg`.
pub fn driver(a: Assembled) -> Driver<Tiers, Stream> {
    Driver::new(a.tiers, a.stream, a.interval, a.passes, a.warmup)
}
