//! A run: a config, its source of requests and its hierarchy, advanced in
//! steps so that a caller (the Python binding) can show progress and stop on
//! Ctrl-C between steps.

use crate::config::Config;
use crate::error::Error;
use crate::hierarchy::Hierarchy;
use crate::request::Request;
use crate::source::setup::{pass, Batches, Progress, RunSetup};
use crate::source::trace::TraceError;
use crate::spec::ConfigError;
use crate::stats::{BackingMeta, Busy, RunResult, TierMeta, Timeline};

use crate::source::setup::BATCH;

use crate::request::{PREFETCH_FAR, PREFETCH_NEAR};
use crate::run::assembly::{backing_meta, build_hierarchy};

/// Requests in one pass over the setup's workload, read when the source
/// cannot say (a warm-up given as a share of a text trace).
fn count_requests(run: &RunSetup, progress: impl Progress) -> Result<u64, Error> {
    let mut n = 0u64;
    pass(&run.source, progress, |b| {
        n += b.len() as u64;
        Ok::<(), TraceError>(())
    })?;
    Ok(n.min(run.max_requests))
}

/// A serial run's counted time so far: its requests' access time plus
/// compute time (`total_time_ns`).
fn serial_time(h: &Hierarchy) -> f64 {
    h.totals.access_time_ns + h.compute_ns * h.totals.requests as f64
}

/// The timeline's bookkeeping: a point every `interval` requests; and the
/// serial loop's warm-up, which falls due on a countdown of its own.
struct Recorder {
    interval: u64,
    countdown: u64,
    timeline: Timeline,
    /// Lookups, misses and access time at the last point.
    mark: (u64, u64, f64),
    /// Requests (since the run began) after which counting starts; 0: none
    /// left to wait for.
    warmup: u64,
    /// Requests run before the counters started over.
    warmed_at: u64,
    /// Each device (tiers, then the backing store), for the energy of each
    /// interval; and the counted time at the last point (ns).
    devices: Vec<DeviceMark>,
    time_mark: f64,
}

/// A device's media and keys, and its counts at the last point of the
/// timeline: its energy over an interval is that of the counts' growth
/// (device/energy.rs).
struct DeviceMark {
    medium: crate::tech::Technology,
    capacity: Option<u64>,
    power_down: crate::device::PowerDown,
    channels: u32,
    last: Counts,
}

/// What the energy model needs of a device, cumulative since the counters
/// started.
#[derive(Clone, Copy, Default)]
struct Counts {
    pages_read: u64,
    pages_programmed: u64,
    erases: Option<u64>,
    busy_ns: f64,
}

impl Counts {
    /// Device `d` of `h` (`h.tiers.len()`: the backing store). Busy time
    /// from the counters (AccessCost::busy_ns): the service time of the
    /// operations issued so far, in serial and timed runs alike.
    fn of(h: &Hierarchy, d: usize, medium: &crate::tech::Technology) -> Self {
        match h.tiers.get(d) {
            Some(t) => {
                let c = &t.c;
                let erases = match t.block_wear() {
                    Some(b) => Some(b.erases),
                    None if medium.erase_ns.is_some() => {
                        medium.erase_block_bytes.map(|e| c.bytes_in / e)
                    }
                    None => None,
                };
                Counts {
                    pages_read: c.pages_read,
                    pages_programmed: c.pages_programmed,
                    erases,
                    busy_ns: t
                        .cost
                        .busy_ns(c.reads, c.writes, c.pages_read + c.pages_programmed),
                }
            }
            None => {
                let b = &h.backing;
                Counts {
                    pages_read: b.pages_read,
                    pages_programmed: b.pages_written,
                    erases: None,
                    busy_ns: h.backing_cost.busy_ns(
                        b.reads,
                        b.writes,
                        b.pages_read + b.pages_written,
                    ),
                }
            }
        }
    }
}

impl Recorder {
    fn new(interval: u64, warmup: u64) -> Self {
        Recorder {
            interval,
            countdown: if warmup > 0 {
                interval.min(warmup)
            } else {
                interval
            },
            timeline: Timeline::default(),
            mark: (0, 0, 0.0),
            warmup,
            warmed_at: 0,
            devices: Vec::new(),
            time_mark: 0.0,
        }
    }

    /// Energy per interval for these devices (tiers of `capacities`, then
    /// the backing store) with these channels.
    fn with_devices(
        mut self,
        meta: &[TierMeta],
        capacities: &[Option<u64>],
        backing: &BackingMeta,
        channels: &[u32],
    ) -> Self {
        self.devices = meta
            .iter()
            .zip(capacities)
            .map(|(m, &c)| (m.medium.clone(), c, m.power_down))
            .chain([(backing.medium.clone(), backing.capacity, backing.power_down)])
            .zip(channels)
            .map(|((medium, capacity, power_down), &channels)| DeviceMark {
                medium,
                capacity,
                power_down,
                channels,
                last: Counts::default(),
            })
            .collect();
        self
    }

    /// The counters started over: so does the timeline.
    fn restart(&mut self, warmed_at: u64) {
        self.warmup = 0;
        self.warmed_at = warmed_at;
        self.timeline = Timeline::default();
        self.mark = (0, 0, 0.0);
        self.countdown = self.interval;
        self.time_mark = 0.0;
        for d in &mut self.devices {
            d.last = Counts::default();
        }
    }

    /// The serial loop's countdown ran out: the warm-up's end, a point of
    /// the timeline, or both.
    #[cold]
    fn tick(&mut self, h: &mut Hierarchy) {
        if self.warmup > 0 && h.totals.requests >= self.warmup {
            let at = h.totals.requests;
            h.reset_counters();
            self.restart(at);
            return;
        }
        self.record(h, serial_time(h));
        if self.warmup > 0 {
            self.countdown = self.countdown.min(self.warmup - h.totals.requests);
        }
    }

    /// The timed loop's check, after each stretch of events; `now_ns` the
    /// counted time.
    fn maybe_record(&mut self, h: &Hierarchy, now_ns: f64) {
        let t = &h.totals;
        let next = self.mark.0 + self.interval;
        if t.reads + t.writes >= next {
            self.record(h, now_ns);
        }
    }

    /// A point of the timeline; `now_ns` the counted time so far.
    #[cold]
    fn record(&mut self, h: &Hierarchy, now_ns: f64) {
        self.interval_energy(h, now_ns);
        let t = &h.totals;
        self.countdown = self.interval;
        let lookups = t.reads + t.writes;
        let (l0, m0, a0) = self.mark;
        let dl = lookups - l0;
        self.timeline.requests.push(t.requests);
        self.timeline.lookups.push(dl);
        self.timeline
            .miss_ratio
            .push(crate::stats::ratio(t.misses - m0, dl));
        self.timeline.amat_ns.push(if dl > 0 {
            (t.access_time_ns - a0) / dl as f64
        } else {
            0.0
        });
        self.timeline
            .cumulative_miss_ratio
            .push(crate::stats::ratio(t.misses, lookups));
        self.mark = (lookups, t.misses, t.access_time_ns);
    }

    /// The devices' energy over the interval ending now (J; null when no
    /// device's energy is known) and its mean power (W).
    fn interval_energy(&mut self, h: &Hierarchy, now_ns: f64) {
        if self.devices.is_empty() {
            return;
        }
        let elapsed = now_ns - self.time_mark;
        self.time_mark = now_ns;
        let mut total: Option<f64> = None;
        for (d, m) in self.devices.iter_mut().enumerate() {
            let now = Counts::of(h, d, &m.medium);
            let a = crate::device::Activity {
                pages_read: now.pages_read - m.last.pages_read,
                pages_programmed: now.pages_programmed - m.last.pages_programmed,
                erases: now
                    .erases
                    .map(|e| e.saturating_sub(m.last.erases.unwrap_or(0))),
                busy_ns: now.busy_ns - m.last.busy_ns,
                channels: m.channels,
                elapsed_ns: elapsed,
                capacity_bytes: m.capacity,
            };
            m.last = now;
            if let Some(j) = crate::device::DeviceEnergy::of(&m.medium, &a, m.power_down).energy_j {
                total = Some(total.unwrap_or(0.0) + j);
            }
        }
        self.timeline.energy_j.push(total);
        self.timeline.power_w.push(
            total
                .filter(|_| elapsed > 0.0)
                .map(|j| j / (elapsed * 1e-9)),
        );
    }
}

pub struct Simulation {
    h: Hierarchy,
    meta: Vec<TierMeta>,
    backing: BackingMeta,
    batches: Batches,
    describe: String,
    unit_size: bool,
    rec: Recorder,
    /// The setup, to run the workload again (`run.passes`).
    setup: RunSetup,
    passes_left: u64,
    /// Warm-up by passes: counting starts with this pass (1-based).
    count_from_pass: u64,
    pass: u64,
    /// Malformed records passed over in the passes before this one.
    skipped_before: u64,
    timed: Option<Timed>,
    /// `[cost] year`: the run's money figures in that year's prices.
    cost_year: Option<u32>,
}

/// The event engine of a run with a time model (time/).
struct Timed {
    engine: crate::time::engine::Engine,
    load: &'static str,
    clients: Option<u32>,
    by_pid: bool,
    /// Requests read from the trace, not yet handed to the engine.
    buf: Vec<Request>,
    pos: usize,
    fed: u64,
    done: bool,
}

impl Simulation {
    pub fn new(cfg: &Config) -> Result<Self, Error> {
        Self::with_progress(cfg, |_| true)
    }

    /// [`Simulation::new`], telling `progress` the requests its pre-passes
    /// read (the footprint for capacities given as a share, next-access
    /// times for Belady); false from it stops them.
    pub fn with_progress(cfg: &Config, mut progress: impl Progress) -> Result<Self, Error> {
        use crate::time::config::Warmup;
        if cfg.vm.is_some() {
            return Err(
                ConfigError::at("vm", "a [vm] run is a runner::Runner's (vm::VmRun)").into(),
            );
        }
        let run = crate::run::assembly::run_setup(cfg, &[], &mut progress)?;
        let (mut h, meta) = build_hierarchy(cfg, run.footprint, run.unit_size, run.seed)?;
        let batches = run.open(BATCH, &mut progress)?;
        let passes = cfg.run.passes.max(1);
        // The warm-up in requests, when it is a count or a share.
        let warmup = match cfg.run.warmup {
            None | Some(Warmup::Passes(_)) | Some(Warmup::Duration(_)) => 0,
            Some(Warmup::Requests(n)) => n,
            Some(Warmup::Share(f)) => {
                let per_pass = match batches.len_hint() {
                    Some(n) => n.min(run.max_requests),
                    None => count_requests(&run, &mut progress)?,
                };
                (f * (per_pass * passes) as f64).round() as u64
            }
        };
        let per_pass = batches.len_hint().map(|n| n.min(run.max_requests));
        if let (Some(n), Some(Warmup::Requests(_) | Warmup::Share(_))) = (per_pass, cfg.run.warmup)
        {
            if warmup >= n * passes {
                return Err(ConfigError::at(
                    "run.warmup",
                    format!(
                        "{warmup} requests of warm-up are the whole run ({} requests): nothing would be counted",
                        n * passes
                    ),
                )
                .into());
            }
        }
        let count_from_pass = match cfg.run.warmup {
            Some(Warmup::Passes(k)) => k + 1,
            _ => 1,
        };
        let timed = if crate::config::checks::time_model(cfg) {
            let mut model = crate::run::assembly::model(cfg, run.seed)?;
            if let Some(disk) = model.disk.as_mut() {
                // Where the workload's files lie on the disk: a pre-pass
                // over the keys it names (time/disk.rs).
                let mut pass = run.open(BATCH, |_| true)?;
                let mut pages = crate::time::disk::Pages::default();
                while let Some(batch) = pass.next_batch()? {
                    for r in batch {
                        pages.add(r.key);
                    }
                }
                disk.layout = crate::time::disk::Layout::from_pages(pages);
            }
            let (load, clients, by_pid) = match &model.load {
                crate::time::engine::Load::Closed {
                    clients, by_pid, ..
                } => (
                    match cfg.load.as_ref().map(|l| l.kind) {
                        Some(crate::time::config::LoadType::Closed) => "closed",
                        _ => "serial",
                    },
                    (!by_pid).then_some(*clients),
                    *by_pid,
                ),
                crate::time::engine::Load::Open { .. } => ("open", None, false),
            };
            if load == "open"
                && cfg.load.as_ref().is_some_and(|l| l.rate.is_none())
                && !crate::time::has_timestamps(&run.source)
            {
                return Err(ConfigError::at(
                    "load.rate",
                    format!(
                        "required: {} has no timestamps to arrive at; give a Poisson rate (arrivals per second)",
                        batches.describe()
                    ),
                )
                .into());
            }
            h.ops.enable();
            let mut engine = crate::time::engine::Engine::new(model);
            engine.warmup_requests = warmup;
            engine.warmup_pending = warmup > 0
                || matches!(
                    cfg.run.warmup,
                    Some(Warmup::Duration(_)) | Some(Warmup::Passes(_))
                );
            engine.warmup_ns = match cfg.run.warmup {
                Some(Warmup::Duration(d)) => Some(crate::cost::whole(d.0) as u64),
                _ => None,
            };
            engine.start();
            Some(Timed {
                engine,
                load,
                clients,
                by_pid,
                buf: Vec::with_capacity(BATCH),
                pos: 0,
                fed: 0,
                done: false,
            })
        } else {
            None
        };
        // A serial run's devices have one channel; a timed run's, their own.
        let channels: Vec<u32> = cfg
            .tiers
            .iter()
            .map(|t| t.channels)
            .chain([cfg.backing.channels])
            .map(|c| match (&timed, c) {
                (Some(_), Some(n)) => n.min(u32::MAX as u64) as u32,
                _ => 1,
            })
            .collect();
        let capacities: Vec<Option<u64>> = h
            .tiers
            .iter()
            .map(|t| (!run.unit_size).then_some(t.capacity))
            .collect();
        let backing = backing_meta(cfg)?;
        Ok(Simulation {
            rec: Recorder::new(cfg.run.interval, if timed.is_some() { 0 } else { warmup })
                .with_devices(&meta, &capacities, &backing, &channels),
            h,
            meta,
            backing,
            describe: batches.describe(),
            batches,
            unit_size: run.unit_size,
            setup: run,
            passes_left: passes - 1,
            count_from_pass,
            pass: 1,
            skipped_before: 0,
            timed,
            cost_year: cfg.cost.as_ref().map(|c| c.year),
        })
    }

    /// The next pass over the workload (`run.passes`), if any is left: the
    /// stream opened again, the cache as it is. A warm-up of whole passes
    /// ends here.
    fn next_pass(&mut self) -> Result<bool, Error> {
        if self.passes_left == 0 {
            return Ok(false);
        }
        self.passes_left -= 1;
        self.pass += 1;
        let skipped = self.batches.skipped();
        self.batches = self.setup.open(BATCH, |_| true)?;
        self.skipped_before += skipped;
        if self.pass == self.count_from_pass {
            match &mut self.timed {
                // Counting starts with the first request of this pass.
                Some(t) => t.engine.warmup_requests = t.fed,
                None => {
                    let at = self.h.totals.requests;
                    self.h.reset_counters();
                    self.rec.restart(at);
                }
            }
        }
        Ok(true)
    }

    /// Total requests, when known.
    pub fn len_hint(&self) -> Option<u64> {
        let per_pass = self.batches.len_hint()?.min(self.setup.max_requests);
        Some(per_pass * (self.pass + self.passes_left))
    }

    /// Requests run so far (over every pass, the warm-up included).
    pub fn processed(&self) -> u64 {
        match &self.timed {
            Some(t) => t.engine.issued,
            None => self.rec.warmed_at + self.h.totals.requests,
        }
    }

    pub fn is_done(&self) -> bool {
        match &self.timed {
            Some(t) => t.done,
            None => self.batches.is_done() && self.passes_left == 0,
        }
    }

    /// Runs about `max` more requests (whole batches). Returns true when the
    /// source is exhausted.
    pub fn step(&mut self, max: u64) -> Result<bool, Error> {
        if self.timed.is_some() {
            return self.step_timed(max);
        }
        let stop = self.processed().saturating_add(max);
        while self.processed() < stop {
            let Some(buf) = self.batches.next_batch()? else {
                if self.next_pass()? {
                    continue;
                }
                break;
            };
            for (i, r) in buf.iter().enumerate() {
                // Index lookups are cache misses on large tiers: start them
                // ahead, in two stages (see Hierarchy::prefetch_below).
                if let Some(far) = buf.get(i + PREFETCH_FAR) {
                    self.h.prefetch_top(far.key);
                }
                if let Some(near) = buf.get(i + PREFETCH_NEAR) {
                    self.h.prefetch_below(near.key);
                }
                self.h.access_inlined(r);
                self.rec.countdown -= 1;
                if self.rec.countdown == 0 {
                    self.rec.tick(&mut self.h);
                }
            }
        }
        let done = self.is_done();
        if done && self.processed() == 0 {
            return Err(self.empty());
        }
        if done && self.rec.countdown != self.rec.interval {
            self.rec.record(&self.h, serial_time(&self.h));
        }
        Ok(done)
    }

    fn empty(&self) -> Error {
        TraceError::Empty {
            path: self.describe.clone().into(),
        }
        .into()
    }

    /// `step` with a time model: the engine runs events until it needs a
    /// request; requests go to it from the trace, a batch at a time to
    /// closed-loop clients, one at a time to open arrivals.
    fn step_timed(&mut self, max: u64) -> Result<bool, Error> {
        let stop = self.processed().saturating_add(max);
        loop {
            let Some(t) = self.timed.as_mut() else {
                unreachable!("a timed run")
            };
            if t.done {
                return Ok(true);
            }
            if t.engine.issued >= stop {
                return Ok(false);
            }
            let hungry = t.engine.run_until_hungry(&mut self.h);
            if t.engine.warm_event {
                t.engine.warm_event = false;
                self.rec.restart(t.engine.counting_from);
            }
            let now = t.engine.now.saturating_sub(t.engine.start_ns) as f64;
            self.rec.maybe_record(&self.h, now);
            if !hungry {
                t.engine.finish();
                t.done = true;
                if t.engine.issued == 0 {
                    return Err(self.empty());
                }
                if t.engine.warmup_pending && !t.engine.warmed {
                    return Err(ConfigError::at(
                        "run.warmup",
                        format!(
                            "the warm-up outlasts the run ({} requests, {:.3} s simulated): nothing was counted; give a shorter warm-up",
                            t.engine.issued,
                            t.engine.now as f64 / 1e9
                        ),
                    )
                    .into());
                }
                let now = t.engine.now.saturating_sub(t.engine.start_ns) as f64;
                self.rec.record(&self.h, now);
                return Ok(true);
            }
            if t.pos == t.buf.len() {
                t.buf.clear();
                t.pos = 0;
                // A closed loop dealing in order takes the next batch as
                // its buffer of requests, without a copy.
                if let Some(order) = t.engine.order_buffer() {
                    if self.batches.next_batch_swap(order)? {
                        t.fed += order.len() as u64;
                        continue;
                    }
                    self.batches_ran_out()?;
                    continue;
                }
                match self.batches.next_batch()? {
                    // A closed loop takes the whole batch at once, without
                    // a copy through `buf`.
                    Some(b) if t.engine.takes_batches() => {
                        t.engine.feed_all(&mut self.h, b);
                        t.fed += b.len() as u64;
                        continue;
                    }
                    Some(b) => t.buf.extend_from_slice(b),
                    None => {
                        self.batches_ran_out()?;
                        continue;
                    }
                }
            }
            let Some(t) = self.timed.as_mut() else {
                unreachable!()
            };
            // An open load: one arrival read ahead at a time.
            t.engine.feed(&mut self.h, t.buf[t.pos]);
            t.pos += 1;
            t.fed += 1;
        }
    }

    /// The timed loop's source has no batch left: the next pass over it
    /// starts, or, after the last pass, the engine hears that no request
    /// will come.
    fn batches_ran_out(&mut self) -> Result<(), Error> {
        if !self.next_pass()? {
            if let Some(t) = self.timed.as_mut() {
                t.engine.source_ended();
            }
        }
        Ok(())
    }

    pub fn run_to_end(&mut self) -> Result<(), Error> {
        while !self.step(u64::MAX)? {}
        Ok(())
    }

    pub fn result(&self) -> RunResult {
        let mut r = RunResult::collect(
            &self.h,
            &self.meta,
            &self.backing,
            self.describe.clone(),
            self.unit_size,
            self.rec.timeline.clone(),
        );
        r.skipped_records = self.skipped_before + self.batches.skipped();
        if let Some(t) = &self.timed {
            let tr =
                crate::time::result::TimeResult::collect(&t.engine, t.load, t.clients, t.by_pid);
            r.apply_time(tr);
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

    pub fn hierarchy(&self) -> &Hierarchy {
        &self.h
    }

    /// Builds and runs a config to the end.
    pub fn run(cfg: &Config) -> Result<RunResult, Error> {
        let mut s = Simulation::new(cfg)?;
        s.run_to_end()?;
        Ok(s.result())
    }
}
