//! The timeline of a run: a point every `[run] interval` requests (or
//! lookups, for the event-driven models), each with the interval's miss
//! ratio and mean access time and the run's cumulative miss ratio; models
//! add their own columns (the devices' energy, the pager's free frames).
//! The driver (run/driver.rs) owns the recorder and decides when a point
//! falls due for the models that count requests; an event-driven model
//! asks [`Recorder::due`] after each stretch of events.

use crate::hierarchy::Hierarchy;
use crate::stats::{BackingMeta, TierMeta, Timeline};

/// A model's counted figures at a point, since its counters started.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mark {
    /// Requests counted.
    pub requests: u64,
    /// Reads and writes (a delete looks nothing up).
    pub lookups: u64,
    /// Lookups that missed (a `[vm]` run: references that faulted).
    pub misses: u64,
    /// Access time summed over the lookups (ns).
    pub access_ns: f64,
}

/// The timeline's common columns and the figures at its last point.
pub struct Recorder {
    pub interval: u64,
    /// Requests until the next point (or the warm-up's end): the driver's
    /// count, or a model's that counts its own ([`crate::run::driver::Clock::Model`]).
    pub countdown: u64,
    pub timeline: Timeline,
    last: Mark,
}

impl Recorder {
    pub fn new(interval: u64) -> Self {
        Recorder {
            interval,
            countdown: interval,
            timeline: Timeline::default(),
            last: Mark::default(),
        }
    }

    /// The counters started over: so does the timeline.
    pub fn restart(&mut self) {
        self.timeline = Timeline::default();
        self.last = Mark::default();
        self.countdown = self.interval;
    }

    /// One request more: true when a point falls due (the countdown then
    /// starts again).
    #[inline(always)]
    pub fn count(&mut self) -> bool {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.countdown = self.interval;
            return true;
        }
        false
    }

    /// Requests were counted since the last point.
    pub fn pending(&self) -> bool {
        self.countdown != self.interval
    }

    /// Whether an event-driven model's lookups have passed the next point.
    #[inline]
    pub fn due(&self, lookups: u64) -> bool {
        lookups >= self.last.lookups + self.interval
    }

    /// A point with the figures `m`.
    #[cold]
    pub fn point(&mut self, m: Mark) {
        let dl = m.lookups - self.last.lookups;
        let t = &mut self.timeline;
        t.requests.push(m.requests);
        t.lookups.push(dl);
        t.miss_ratio
            .push(crate::stats::ratio(m.misses - self.last.misses, dl));
        t.amat_ns.push(if dl > 0 {
            (m.access_ns - self.last.access_ns) / dl as f64
        } else {
            0.0
        });
        t.cumulative_miss_ratio
            .push(crate::stats::ratio(m.misses, m.lookups));
        self.last = m;
    }
}

/// The tiers' figures at a point: lookups, misses, access time.
pub fn mark_of(h: &Hierarchy) -> Mark {
    let t = &h.totals;
    Mark {
        requests: t.requests,
        lookups: t.reads + t.writes,
        misses: t.misses,
        access_ns: t.access_time_ns,
    }
}

/// The energy columns of a tier run: each device's (tiers, then the
/// backing store) energy over an interval is that of its counts' growth
/// (device/energy.rs).
#[derive(Default)]
pub struct EnergyColumns {
    devices: Vec<DeviceMark>,
    /// The counted time at the last point (ns).
    time_mark: f64,
}

/// A device's media and keys, and its counts at the last point.
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

impl EnergyColumns {
    /// The devices: tiers of `capacities`, then the backing store, with
    /// these channels.
    pub fn new(
        meta: &[TierMeta],
        capacities: &[Option<u64>],
        backing: &BackingMeta,
        channels: &[u32],
    ) -> Self {
        let devices = meta
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
        EnergyColumns {
            devices,
            time_mark: 0.0,
        }
    }

    /// The counters started over.
    pub fn restart(&mut self) {
        self.time_mark = 0.0;
        for d in &mut self.devices {
            d.last = Counts::default();
        }
    }

    /// The devices' energy over the interval ending now (J; null when no
    /// device's energy is known) and its mean power (W); `now_ns` the
    /// counted time.
    pub fn push(&mut self, h: &Hierarchy, now_ns: f64, t: &mut Timeline) {
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
        t.energy_j.push(total);
        t.power_w.push(
            total
                .filter(|_| elapsed > 0.0)
                .map(|j| j / (elapsed * 1e-9)),
        );
    }
}
