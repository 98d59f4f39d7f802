//! Processes that run concurrently and block (`[vm.cpu]`): each process
//! (pid) of a `[vm]` trace runs its references on a hardware thread of its
//! own, one after another, each taking its CPU time (the reference's
//! translation and memory access plus `[run] compute` in user mode, fault
//! handlers in the kernel); a major fault blocks the process, not the
//! thread's neighbours, for the swap device's queue and service (one
//! first-come-first-served server, time/station.rs), so the others run
//! meanwhile. Synchronous swap-outs block the same way; with
//! `vm.sync_swap_out = false` they occupy the device without blocking.
//!
//! The references run in time order: the next is always that of the
//! process whose clock is earliest, so the pages' state changes in the
//! order the processes would touch them. This needs each process's next
//! reference at hand whatever the others have done: a first pass over the
//! trace finds the processes (in order of first appearance) and counts
//! their references, then each process reads its own references from a
//! stream of its own (the trace opened again, its other processes'
//! references passed over). A process that runs faster than the trace's
//! interleaving says therefore never waits for the others' references to
//! be read (a bounded read-ahead of one stream would make it wait: the
//! `multiprogram` generator's equal turns made every program finish
//! together). The cost: the trace is read once per process, plus once.
//!
//! Sharing a core: a thread runs at `vm.cpu.smt_speed` while another
//! thread of its core holds a process that is running (not blocked, not
//! finished), at full speed otherwise. Time-sharing a thread between
//! processes is not modelled: more processes than hardware threads is
//! refused.
//!
//! What runs a reference is a [`TimedRefs`] model: the virtual-memory core
//! itself (`[vm]` with `[[tier]]`), or the multilevel memory of
//! run/tiered.rs (`[[vm.node]]`), whose nodes are bandwidth servers the
//! processes queue on. One loop, one result builder per model.

use super::vm_core::{Core, Cost};
use crate::error::Error;
use crate::request::Request;
use crate::run::driver::{Clock, Common, Model};
use crate::run::timeline::Recorder;
use crate::source::setup::{Batches, BATCH};
use crate::source::trace::{TraceError, TraceSource};
use crate::source::Source;
use crate::spec::ConfigError;
use crate::stats::RunResult;
use std::collections::{BTreeMap, VecDeque};

/// One process's references of a trace: the others' passed over.
struct OnePid {
    src: Box<dyn TraceSource>,
    pid: u32,
    buf: Vec<Request>,
}

impl TraceSource for OnePid {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.is_empty() {
            if self.src.next_batch(&mut self.buf, max)? == 0 {
                break;
            }
            out.extend(self.buf.iter().filter(|r| r.pid == self.pid));
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> String {
        format!("{} (pid {})", self.src.describe(), self.pid)
    }
}

/// A model the processes' loop runs references through, each at its
/// process's clock: the virtual-memory core, or a model built on it.
pub trait TimedRefs {
    /// Whether the model keeps queues of its own (stalls, bookings to
    /// forget): without them the loop does none of that work.
    const QUEUES: bool = false;
    fn core(&mut self) -> &mut Core;
    fn core_ref(&self) -> &Core;
    /// One reference of a process whose clock reads `t0` (ns): the state
    /// it changes and its time in parts ([`Cost::stall_ns`]: waits that
    /// the hardware thread's speed does not scale).
    fn reference(&mut self, r: &Request, t0: f64) -> Cost;
    /// No reference starts before `t` (ns) any more.
    fn forget_before(&mut self, _t: u64) {}
    /// A timeline row.
    fn point(&mut self, rec: &mut Recorder);
    fn result(&self, common: Common) -> RunResult;
}

impl TimedRefs for Core {
    #[inline(always)]
    fn core(&mut self) -> &mut Core {
        self
    }
    fn core_ref(&self) -> &Core {
        self
    }
    #[inline(always)]
    fn reference(&mut self, r: &Request, _t0: f64) -> Cost {
        self.reference_cost::<true>(r)
    }
    fn point(&mut self, rec: &mut Recorder) {
        Core::point(self, rec);
    }
    fn result(&self, common: Common) -> RunResult {
        Core::result(self, common)
    }
}

pub(super) struct Sched {
    threads: u32,
    per_core: u32,
    smt_speed: f64,
    /// Each process's next references, read from its own stream.
    queues: Vec<VecDeque<Request>>,
    streams: Vec<Batches>,
    /// Each process's pid and references, in order of first appearance
    /// (the first pass).
    counts: Vec<(u32, u64)>,
    clock: Vec<f64>,
    /// The last block on the swap device of each process: from (after its
    /// reference's CPU time) until.
    blocked_from: Vec<f64>,
    blocked_until: Vec<f64>,
    user: Vec<f64>,
    system: Vec<f64>,
    blocked: Vec<f64>,
    swap: Calendar,
    /// `[vm.pressure]`: kswapd, process exits (vm/pressure.rs).
    kswapd: Option<Kswapd>,
    exited: Vec<bool>,
    preempted: Vec<f64>,
    /// References since the model last forgot its old bookings.
    since_forget: u32,
}

/// The swap device: one server whose reservations are kept as a calendar
/// of busy intervals. The processes' requests reach it in the order the
/// earliest-clock loop runs them, which is not quite time order (a process
/// runs ahead by its reference's CPU time, and one whose next reference is
/// not read yet waits while the others run on). A first-come-first-served
/// queue that took arrivals in that order (Lindley's recursion, as
/// time/station.rs does) would make a request that arrives earlier in time
/// but later in the loop wait for every request already booked after it.
/// The calendar serves a request at the first idle gap from its own time
/// on that is long enough. For arrivals in time order this is the same
/// FCFS queue; otherwise a later request keeps its slot (no preemption).
#[derive(Default)]
pub(super) struct Calendar {
    /// Busy intervals by start: start -> end (ns), not overlapping.
    busy: BTreeMap<u64, u64>,
    booked: u64,
}

impl Calendar {
    /// Books `service` ns for a request arriving at `now`; returns its end.
    pub(super) fn reserve(&mut self, now: u64, service: u64) -> u64 {
        if service == 0 {
            return now;
        }
        let mut t = now;
        if let Some((_, &e)) = self.busy.range(..=t).next_back() {
            t = t.max(e);
        }
        while let Some((&s, &e)) = self.busy.range(t..).next() {
            if s >= t + service {
                break;
            }
            t = e;
        }
        self.busy.insert(t, t + service);
        self.booked += 1;
        t + service
    }

    /// Forgets the intervals that end by `t` (no request arrives before it).
    pub(super) fn forget_before(&mut self, t: u64) {
        let key = match self.busy.range(..=t).next_back() {
            Some((&s, &e)) if e > t => s,
            _ => t,
        };
        self.busy = self.busy.split_off(&key);
    }
}

/// kswapd: a kernel thread of the earliest-clock loop. It runs on a
/// hardware thread no process holds when there is one; otherwise on the
/// last thread, whose process it preempts for its CPU time (the process's
/// clock moves by it, unless the process is blocked then).
struct Kswapd {
    awake: bool,
    clock: f64,
    cpu_ns: f64,
}

/// What the earliest-clock loop does next under pressure.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Act {
    Ref(usize),
    Exit(usize),
    Kswapd,
}

impl Sched {
    pub fn new(c: &crate::vm::config::CpuConfig) -> Self {
        Sched {
            threads: c.threads(),
            per_core: c.threads_per_core,
            smt_speed: c.smt_speed,
            queues: Vec::new(),
            streams: Vec::new(),
            counts: Vec::new(),
            clock: Vec::new(),
            blocked_from: Vec::new(),
            blocked_until: Vec::new(),
            user: Vec::new(),
            system: Vec::new(),
            blocked: Vec::new(),
            swap: Calendar::default(),
            kswapd: None,
            exited: Vec::new(),
            preempted: Vec::new(),
            since_forget: 0,
        }
    }

    /// Memory pressure: kswapd and process exits join the loop.
    pub fn with_pressure(mut self) -> Self {
        self.kswapd = Some(Kswapd {
            awake: false,
            clock: 0.0,
            cpu_ns: 0.0,
        });
        self
    }

    /// The wall clock at the end of the last reference of any process.
    pub fn makespan(&self) -> f64 {
        self.clock.iter().copied().fold(0.0, f64::max)
    }

    fn live(&self, i: usize) -> bool {
        !self.queues[i].is_empty() || !self.streams[i].is_done()
    }

    /// Whether another thread of `i`'s core runs a process at `t`: one that
    /// is live and not blocked on the swap device at `t`. (The fault
    /// handler before a block is CPU time: the sibling is busy then.)
    fn sibling_busy(&self, i: usize, t: f64) -> bool {
        let core = i as u32 / self.per_core;
        (core * self.per_core..(core + 1) * self.per_core)
            .map(|j| j as usize)
            .filter(|&j| j != i && j < self.queues.len())
            .any(|j| self.live(j) && !(self.blocked_from[j] <= t && t < self.blocked_until[j]))
    }

    /// The first pass (the driver's feed, with its `[run] max_requests`
    /// limit): registers each process in order of first appearance and
    /// counts its references.
    #[inline]
    fn count(&mut self, rs: &[Request], c: &mut Core) -> Result<(), Error> {
        for r in rs {
            let i = c.process(r.pid) as usize;
            if i >= self.counts.len() {
                if i as u32 >= self.threads {
                    return Err(ConfigError::at(
                        "vm.cpu",
                        format!(
                            "the trace has more processes (pid {} is number {}) than \
                             hardware threads (cores x threads_per_core = {}); sharing a \
                             thread between processes is not modelled",
                            r.pid,
                            i + 1,
                            self.threads
                        ),
                    )
                    .into());
                }
                self.counts.push((r.pid, 0));
            }
            self.counts[i].1 += 1;
        }
        Ok(())
    }

    /// After the first pass: one stream per process, limited to its
    /// count, so that the processes together run exactly the references
    /// the trace gives.
    fn open(&mut self, source: &Source) -> Result<(), Error> {
        for (pid, n) in std::mem::take(&mut self.counts) {
            let src = OnePid {
                src: crate::source::open(source)?,
                pid,
                buf: Vec::with_capacity(BATCH),
            };
            self.streams
                .push(Batches::new(Box::new(src), BATCH).limit(n));
            self.queues.push(VecDeque::new());
            for v in [
                &mut self.clock,
                &mut self.blocked_from,
                &mut self.blocked_until,
                &mut self.user,
                &mut self.system,
                &mut self.blocked,
                &mut self.preempted,
            ] {
                v.push(0.0);
            }
            self.exited.push(false);
        }
        Ok(())
    }

    /// Whether process `i` has a next reference at hand, read from its
    /// stream when its queue is empty.
    fn ensure(&mut self, i: usize) -> Result<bool, Error> {
        if self.queues[i].is_empty() {
            if let Some(buf) = self.streams[i].next_batch()? {
                self.queues[i].extend(buf.iter().copied());
            }
        }
        Ok(!self.queues[i].is_empty())
    }

    /// Process `i`'s next reference; returns the time its CPU part ends
    /// (before any block on the device).
    fn run_ref<M: TimedRefs>(&mut self, i: usize, m: &mut M, rec: &mut Recorder) -> f64 {
        {
            let r = self.queues[i].pop_front().expect("not empty");
            let t0 = self.clock[i];
            let speed = if self.smt_speed < 1.0 && self.sibling_busy(i, t0) {
                self.smt_speed
            } else {
                1.0
            };
            let k = m.reference(&r, t0);
            debug_assert_eq!(k.pi as usize, i);
            let (mut user, system) = (k.user_ns / speed, k.system_ns / speed);
            if M::QUEUES {
                user += k.stall_ns;
            }
            self.user[i] += user;
            self.system[i] += system;
            let mut t = t0 + user + system;
            let cpu_end = t;
            let c = m.core();
            let sync = c.sync_swap_out();
            let block = k.read_ns + if sync { k.write_ns } else { 0.0 };
            if block > 0.0 {
                let now = t.round() as u64;
                let end = self.swap.reserve(now, block.round() as u64);
                self.blocked[i] += end as f64 - t;
                self.blocked_from[i] = t;
                t = end as f64;
                self.blocked_until[i] = t;
            }
            if !sync && k.write_ns > 0.0 {
                self.swap
                    .reserve(t.round() as u64, k.write_ns.round() as u64);
            }
            self.clock[i] = t;
            if rec.count() {
                m.point(rec);
            }
            if M::QUEUES {
                self.since_forget += 1;
            }
            if self.swap.booked >= 4096 || (M::QUEUES && self.since_forget >= 4096) {
                // Every later request arrives at or after the earliest
                // clock of a process with references left (and kswapd's).
                let mut t = (0..self.queues.len())
                    .filter(|&j| self.live(j))
                    .map(|j| self.clock[j])
                    .fold(f64::INFINITY, f64::min);
                if let Some(k) = self.kswapd.as_ref().filter(|k| k.awake) {
                    t = t.min(k.clock);
                }
                if t.is_finite() {
                    let t = t.max(0.0) as u64;
                    if self.swap.booked >= 4096 {
                        self.swap.booked = 0;
                        self.swap.forget_before(t);
                    }
                    if M::QUEUES && self.since_forget >= 4096 {
                        self.since_forget = 0;
                        m.forget_before(t);
                    }
                }
            }
            cpu_end
        }
    }

    /// Runs about `max` more references in time order; true when every
    /// process is done. The next action is the earliest of the processes'
    /// next references and their exits (a process whose references are all
    /// done leaves; under pressure it frees its memory at its clock), and,
    /// under pressure, kswapd's next pass while it is awake.
    fn step<M: TimedRefs>(
        &mut self,
        m: &mut M,
        max: u64,
        rec: &mut Recorder,
    ) -> Result<bool, Error> {
        let pressure = self.kswapd.is_some();
        let mut n = 0u64;
        while n < max {
            let mut next: Option<(f64, Act)> = None;
            for i in 0..self.queues.len() {
                // Without pressure a process's stream is read when it runs
                // (whether a sibling is live depends on it: see `live`).
                let act = if !pressure {
                    if !self.live(i) {
                        continue;
                    }
                    Act::Ref(i)
                } else if self.ensure(i)? {
                    Act::Ref(i)
                } else if !self.exited[i] {
                    Act::Exit(i)
                } else {
                    continue;
                };
                if next.is_none_or(|(t, _)| self.clock[i] < t) {
                    next = Some((self.clock[i], act));
                }
            }
            let Some((t, mut act)) = next else {
                return Ok(true);
            };
            if let Some(k) = self.kswapd.as_ref() {
                if k.awake && k.clock < t {
                    act = Act::Kswapd;
                }
                let now = if act == Act::Kswapd { k.clock } else { t };
                let c = m.core();
                if c.paging_mut().pool.as_ref().is_some_and(|p| p.has_series()) {
                    let dirty = c.paging_mut().storage_tick(now);
                    self.background_writes(c, now, dirty);
                    self.wake(c, now);
                }
            }
            match act {
                Act::Ref(i) => {
                    if !pressure && !self.ensure(i)? {
                        // Its stream has just ended: the next earliest runs.
                        continue;
                    }
                    n += 1;
                    let t_alloc = self.run_ref(i, m, rec);
                    if pressure {
                        self.wake(m.core(), t_alloc);
                    }
                }
                Act::Exit(i) => {
                    self.exited[i] = true;
                    let c = m.core();
                    c.paging_mut().release(i as u32);
                    c.after_background(0);
                }
                Act::Kswapd => self.kswapd_pass(m.core()),
            }
        }
        Ok(if pressure {
            self.exited.iter().all(|&e| e)
        } else {
            (0..self.queues.len()).all(|i| !self.live(i))
        })
    }

    /// Wakes kswapd at `t` if an allocation asked for it.
    fn wake(&mut self, c: &mut Core, t: f64) {
        let p = c.paging_mut().pressure.as_mut().expect("pressure");
        if !std::mem::take(&mut p.wake) {
            return;
        }
        let k = self.kswapd.as_mut().expect("pressure");
        if !k.awake {
            k.awake = true;
            k.clock = k.clock.max(t);
        }
    }

    /// Dirty pages written off any process's path at `t`: they occupy the
    /// swap device without blocking anyone.
    fn background_writes(&mut self, c: &mut Core, t: f64, dirty: u64) {
        if dirty > 0 {
            let w = c.page_writes_ns(dirty);
            self.swap.reserve(t.round() as u64, w.round() as u64);
        }
        c.after_background(dirty);
    }

    /// One kswapd pass at its clock.
    fn kswapd_pass(&mut self, c: &mut Core) {
        let t = self.kswapd.as_ref().expect("pressure").clock;
        let (pages, dirty, done) = c.paging_mut().kswapd_pass();
        self.background_writes(c, t, dirty);
        let cpu = pages as f64 * c.reclaim_ns();
        // No spare hardware thread: kswapd takes the last one's time.
        let n = self.queues.len();
        if cpu > 0.0 && n >= self.threads as usize {
            let j = self.threads as usize - 1;
            let running = !self.exited[j] && self.blocked_until[j] <= t && self.clock[j] >= t;
            if running {
                self.clock[j] += cpu;
                self.preempted[j] += cpu;
            }
        }
        let k = self.kswapd.as_mut().expect("pressure");
        k.clock = t + cpu;
        k.cpu_ns += cpu;
        if done || pages == 0 {
            k.awake = false;
        }
    }

    /// Writes the processes' times into their results.
    pub(super) fn finish(&self, c: &mut Core) {
        c.set_makespan(self.makespan());
        if let Some(k) = &self.kswapd {
            c.set_kswapd_cpu(k.cpu_ns);
        }
        for (i, p) in c.procs_mut().iter_mut().enumerate() {
            if i >= self.clock.len() {
                break;
            }
            p.runtime_ns = self.clock[i];
            p.user_ns = Some(self.user[i]);
            p.system_ns = Some(self.system[i]);
            p.blocked_ns = Some(self.blocked[i]);
            let refs = p.references as f64;
            p.references_per_major_fault = Some(refs / p.major_faults.max(1) as f64);
            p.references_per_minor_fault = Some(refs / p.minor_faults.max(1) as f64);
            if self.kswapd.is_some() {
                p.preempted_ns = Some(self.preempted[i]);
            }
        }
    }
}

/// The processes' model (`[vm.cpu]`): the feed's pass registers the
/// processes and counts their references; then each runs its own stream
/// on its hardware thread, in time order ([`Sched`]), through model `M`
/// (the core, or the nodes of run/tiered.rs).
pub struct Procs<M = Core> {
    m: M,
    sched: Sched,
    source: Source,
}

impl<M: TimedRefs> Procs<M> {
    pub(super) fn new(m: M, sched: Sched, source: Source) -> Self {
        Procs { m, sched, source }
    }
}

impl<M: TimedRefs> Model for Procs<M> {
    type Rec = Request;
    const CLOCK: Clock = Clock::Model;

    fn run(&mut self, rs: &[Request], _rec: &mut Recorder) -> Result<(), Error> {
        self.sched.count(rs, self.m.core())
    }

    fn source_ended(&mut self) -> Result<(), Error> {
        self.sched.open(&self.source)
    }

    fn drain(&mut self, budget: u64, rec: &mut Recorder) -> Result<bool, Error> {
        let done = self.sched.step(&mut self.m, budget, rec)?;
        if done {
            self.sched.finish(self.m.core());
        }
        Ok(done)
    }

    fn issued(&self) -> u64 {
        self.m.core_ref().requests
    }

    fn point(&mut self, rec: &mut Recorder) {
        self.m.point(rec);
    }

    fn count_from_here(&mut self, _rec: &mut Recorder) {
        unreachable!("a [vm] run has no warm-up (config/checks.rs)")
    }

    fn result(&self, common: Common) -> RunResult {
        self.m.result(common)
    }
}

#[cfg(test)]
mod tests {
    use super::Calendar;
    use crate::time::station::Station;

    #[test]
    fn in_time_order_the_calendar_is_the_fcfs_queue() {
        let mut c = Calendar::default();
        let mut s = Station::new("swap", 1).first_come_first_served();
        let mut x = 7u64;
        let mut now = 0;
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            now += (x >> 40) % 500;
            let service = (x >> 20) % 700 + 1;
            assert_eq!(c.reserve(now, service), s.start_fcfs(now, service).0);
            if now % 7 == 0 {
                c.forget_before(now);
            }
        }
    }

    #[test]
    fn an_earlier_request_booked_later_takes_the_idle_gap() {
        let mut c = Calendar::default();
        // A process far ahead books [1000, 1100).
        assert_eq!(c.reserve(1000, 100), 1100);
        // One behind arrives at 10: served at once, not after 1100.
        assert_eq!(c.reserve(10, 50), 60);
        // A gap too short for it is passed over.
        assert_eq!(c.reserve(950, 100), 1200);
        assert_eq!(c.reserve(1050, 10), 1210);
    }
}
