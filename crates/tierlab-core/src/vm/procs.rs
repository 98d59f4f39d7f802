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

use super::run::Core;
use crate::config::ConfigError;
use crate::config::Source;
use crate::error::Error;
use crate::request::Request;
use crate::source::setup::{Batches, BATCH};
use crate::trace::{TraceError, TraceSource};
use std::collections::VecDeque;

use crate::time::station::Station;

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

pub(super) struct Sched {
    threads: u32,
    per_core: u32,
    smt_speed: f64,
    /// Each process's next references, read from its own stream.
    queues: Vec<VecDeque<Request>>,
    streams: Vec<Batches>,
    /// The processes and their streams are set up (the first pass ran).
    started: bool,
    clock: Vec<f64>,
    /// The last block on the swap device of each process: from (after its
    /// reference's CPU time) until.
    blocked_from: Vec<f64>,
    blocked_until: Vec<f64>,
    user: Vec<f64>,
    system: Vec<f64>,
    blocked: Vec<f64>,
    swap: Station,
}

impl Sched {
    pub fn new(c: &super::config::CpuConfig) -> Self {
        Sched {
            threads: c.threads(),
            per_core: c.threads_per_core,
            smt_speed: c.smt_speed,
            queues: Vec::new(),
            streams: Vec::new(),
            started: false,
            clock: Vec::new(),
            blocked_from: Vec::new(),
            blocked_until: Vec::new(),
            user: Vec::new(),
            system: Vec::new(),
            blocked: Vec::new(),
            swap: Station::new("swap", 1).first_come_first_served(),
        }
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

    /// The first pass: reads the whole trace (`batches`, with its
    /// `[run] max_requests` limit), registers each process in order of first
    /// appearance and counts its references; then opens one stream per
    /// process, limited to that count, so that the processes together run
    /// exactly the references the trace gives.
    fn start(&mut self, batches: &mut Batches, c: &mut Core, source: &Source) -> Result<(), Error> {
        self.started = true;
        let mut counts: Vec<(u32, u64)> = Vec::new();
        while let Some(buf) = batches.next_batch()? {
            for r in buf {
                let i = c.process(r.pid) as usize;
                if i >= counts.len() {
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
                    counts.push((r.pid, 0));
                }
                counts[i].1 += 1;
            }
        }
        for (pid, n) in counts {
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
            ] {
                v.push(0.0);
            }
        }
        Ok(())
    }

    /// Process `i`'s next reference, read from its stream when its queue
    /// is empty; None when it has none left.
    fn next_of(&mut self, i: usize) -> Result<Option<Request>, Error> {
        if self.queues[i].is_empty() {
            if let Some(buf) = self.streams[i].next_batch()? {
                self.queues[i].extend(buf.iter().copied());
            }
        }
        Ok(self.queues[i].pop_front())
    }

    /// Runs about `max` more references; true when every process is done.
    pub(super) fn step(
        &mut self,
        batches: &mut Batches,
        c: &mut Core,
        source: &Source,
        max: u64,
    ) -> Result<bool, Error> {
        if !self.started {
            self.start(batches, c, source)?;
        }
        let mut n = 0u64;
        while n < max {
            let Some(i) = (0..self.queues.len())
                .filter(|&i| self.live(i))
                .min_by(|&a, &b| self.clock[a].total_cmp(&self.clock[b]))
            else {
                return Ok(true);
            };
            let Some(r) = self.next_of(i)? else {
                // Its stream has just ended: the next earliest runs.
                continue;
            };
            n += 1;
            let t0 = self.clock[i];
            let speed = if self.smt_speed < 1.0 && self.sibling_busy(i, t0) {
                self.smt_speed
            } else {
                1.0
            };
            let k = c.reference_cost::<true>(&r);
            debug_assert_eq!(k.pi as usize, i);
            let (user, system) = (k.user_ns / speed, k.system_ns / speed);
            self.user[i] += user;
            self.system[i] += system;
            let mut t = t0 + user + system;
            let sync = c.sync_swap_out();
            let block = k.read_ns + if sync { k.write_ns } else { 0.0 };
            if block > 0.0 {
                let now = t.round() as u64;
                let (end, _) = self.swap.start_fcfs(now, block.round() as u64);
                self.blocked[i] += end as f64 - t;
                self.blocked_from[i] = t;
                t = end as f64;
                self.blocked_until[i] = t;
            }
            if !sync && k.write_ns > 0.0 {
                self.swap
                    .start_fcfs(t.round() as u64, k.write_ns.round() as u64);
            }
            self.clock[i] = t;
            c.tick();
        }
        Ok((0..self.queues.len()).all(|i| !self.live(i)))
    }

    /// Writes the processes' times into their results.
    pub(super) fn finish(&self, c: &mut Core) {
        c.set_makespan(self.makespan());
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
        }
    }
}
