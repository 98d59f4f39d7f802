//! The virtual-memory run: its own loop over the request batches of a
//! byte-addressed memory trace. Each reference is split at page
//! boundaries; each page is translated (TLB levels, then a page-table
//! walk) and then accessed (a hit, or a minor or major fault), and its time
//! is T_addr + T_data ("Issues in File Caching and Virtual Memory Paging with Fast SCM Storage", section 3).
//! A hit costs a memory access of the reference's own size, not a page
//! transfer.

use super::vm_procs::Sched;
use crate::config::Config;
use crate::cost::AccessCost;
use crate::device::wear::TierWear;
use crate::device::DeviceEnergy;
use crate::error::Error;
use crate::hash::{KeyMap, KeySet};
use crate::hierarchy::BackingCounters;
use crate::request::{Op, Request};
use crate::source::setup::{pass, Batches, Progress, BATCH};
use crate::source::trace::memtrace::{MemtraceReader, Rec};
use crate::source::trace::TraceError;
use crate::source::Source;
use crate::spec::ConfigError;
use crate::stats::{ratio, BackingResult, RunResult, TierResult, Timeline};
use crate::units::Size;
use crate::vm::config::VmConfig;
use crate::vm::paging::{Paging, VPN_BITS, VPN_MASK};
use crate::vm::result::{ProcessResult, VmResult};
use crate::vm::tlb::Tlb;
use crate::vm::walk::{Walker, PTE_BYTES};

/// A memory reference as the loop reads it: a decoded request, or a
/// memtrace record in place (its reader's buffer, no decoding pass).
pub(super) trait Ref {
    /// Address, size, pid and operation.
    fn parts(&self) -> (u64, u32, u32, Op);
}

impl Ref for Request {
    #[inline(always)]
    fn parts(&self) -> (u64, u32, u32, Op) {
        (self.key, self.size, self.pid, self.op)
    }
}

impl Ref for Rec {
    #[inline(always)]
    fn parts(&self) -> (u64, u32, u32, Op) {
        (self.key(), self.size(), self.pid(), self.op())
    }
}

/// A memtrace read in place by the serial loop: its records up to `[run]
/// max_requests`.
struct Raw {
    reader: MemtraceReader,
    left: u64,
    done: bool,
}

/// The figures a run of repeats adds up ([`Core::run_from`]).
#[derive(Clone, Copy)]
struct RunSums {
    t_addr: f64,
    t_data: f64,
    runtime: f64,
    writes: u64,
    bytes: u64,
}

/// Pages of `[key, key + size)`: first and last page number.
#[inline(always)]
fn pages(key: u64, size: u32, shift: u32) -> (u64, u64) {
    let last = key.saturating_add(size.max(1) as u64 - 1);
    (key >> shift, last >> shift)
}

pub struct VmRun {
    batches: Batches,
    /// A memtrace without `[vm.cpu]`: read in place, not through `batches`.
    raw: Option<Raw>,
    describe: String,
    c: Core,
    /// `[vm.cpu]`: processes on hardware threads (run/vm_procs.rs).
    sched: Option<Sched>,
    /// The trace, opened again per process under `[vm.cpu]` (run/vm_procs.rs).
    source: Source,
}

/// Everything but the source: what each reference updates.
pub(super) struct Core {
    shift: u32,
    page: u64,
    tlb: Tlb,
    tlb2: Option<Tlb>,
    /// `vm.tlb_huge`: huge pages' own TLB (else they share `tlb`).
    tlb_huge: Option<Tlb>,
    /// A huge page's bytes (0: huge pages off).
    huge_bytes: u64,
    walker: Walker,
    paging: Paging,
    mem: AccessCost,
    /// The memory's transfer unit and its read and write of 1 byte: every
    /// reference up to the unit costs one of these.
    mem_small: (u64, f64, f64),
    dev: AccessCost,
    pte_ns: f64,
    fault_minor_ns: f64,
    fault_major_ns: f64,
    sync_swap_out: bool,
    compute_ns: f64,
    pids: KeyMap<u32>,
    last_pid: (u32, u32),
    procs: Vec<ProcessResult>,
    v: VmResult,
    requests: u64,
    reads: u64,
    writes: u64,
    deletes: u64,
    bytes: u64,
    faulted: u64,
    backing: BackingCounters,
    tier_meta: (String, String, u64),
    /// The memory tier's die area and price (device/area_cost.rs).
    area_cost: crate::device::area_cost::AreaCost,
    /// The memory tier's medium, for its wear (device/wear.rs).
    medium: crate::tech::Technology,
    backing_tech: String,
    skipped: u64,
    interval: u64,
    countdown: u64,
    mark: (u64, u64, f64),
    timeline: Timeline,
    /// A `[vm.cpu]` run's wall clock (its last process's end).
    makespan: Option<f64>,
    /// `[vm.pressure]`: CPU time per page reclaimed.
    reclaim_ns: f64,
    /// `[vm.memorage]`: a borrowed frame's access time over a local one's,
    /// less 1.
    remote_extra: f64,
    /// Swap-outs and pages read at the last timeline row.
    pressure_mark: (u64, u64),
}

/// Distinct pages a source touches at `shift` (a pre-pass, for a memory
/// capacity given as a share of the footprint).
fn footprint_pages(source: &Source, shift: u32, progress: impl Progress) -> Result<u64, Error> {
    let mut seen = KeySet::default();
    pass(source, progress, |batch| {
        for r in batch {
            let (a, b) = pages(r.key, r.size, shift);
            for p in a..=b {
                seen.insert(((r.pid as u64) << VPN_BITS) | (p & VPN_MASK));
            }
        }
        Ok::<(), TraceError>(())
    })?;
    Ok(seen.len() as u64)
}

impl VmRun {
    pub fn new(cfg: &Config, mut progress: impl Progress) -> Result<Self, Error> {
        let vm: &VmConfig = cfg
            .vm
            .as_ref()
            .ok_or_else(|| ConfigError::at("vm", "missing"))?;
        let w = cfg.workload()?;
        let source = crate::source::byte_source(w.source()?)?;
        let page = vm.page_bytes();
        let shift = page.trailing_zeros();
        let t = &cfg.tiers[0];
        let capacity = match t.capacity {
            Size::Absolute(n) => n,
            share => share.resolve(footprint_pages(&source, shift, &mut progress)? * page),
        };
        let frames = capacity / page;
        if frames == 0 {
            return Err(ConfigError::at(
                "tier[0].capacity",
                format!(
                    "\"{}\" is {capacity} B, less than one page of vm.page_size = {page} B: \
                     the frame count would be zero",
                    t.capacity
                ),
            )
            .into());
        }
        let cat = cfg.catalog()?;
        let tech = cat
            .get(&t.tech)
            .map_err(|e| ConfigError::at("tier[0].tech", e.to_string()))?;
        let mem = AccessCost::new(tech, t.slowdown, t.overhead.0);
        let backing = cat
            .get(&cfg.backing.tech)
            .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
        let dev = AccessCost::new(backing, 1.0, cfg.backing.overhead.0);
        let seed = w.seed.unwrap_or(42);
        let batches = Batches::new(crate::source::open(&source)?, BATCH)
            .limit(cfg.run.max_requests.unwrap_or(u64::MAX));
        let mut paging = Paging::new(vm, frames, mem, seed, cfg.tier_name(0));
        let mut reclaim_ns = 0.0;
        let mut remote_extra = 0.0;
        if vm.pressure_key().is_some() {
            let pc = vm.pressure.clone().unwrap_or_default();
            let w = pc.watermarks(frames, page)?;
            reclaim_ns = pc.reclaim_ns_per_page.0;
            let pool = vm
                .memorage
                .as_ref()
                .filter(|m| m.enabled)
                .map(|m| crate::vm::memorage::Pool::new(m, page));
            if let Some(p) = &pool {
                remote_extra = 1.0 / p.remote_speed - 1.0;
            }
            paging = paging.with_pressure(crate::vm::pressure::Pressure::new(w, reclaim_ns), pool);
        }
        let max_requests = cfg.run.max_requests.unwrap_or(u64::MAX);
        let raw = match (&source, &vm.cpu) {
            (Source::Memtrace(p), None) => Some(Raw {
                reader: MemtraceReader::open(p)?,
                left: max_requests,
                done: false,
            }),
            _ => None,
        };
        Ok(VmRun {
            raw,
            sched: vm.cpu.as_ref().map(|c| {
                let s = Sched::new(c);
                if vm.pressure_key().is_some() {
                    s.with_pressure()
                } else {
                    s
                }
            }),
            source,
            describe: batches.describe(),
            batches,
            c: Core {
                shift,
                page,
                tlb: Tlb::new(&vm.tlb),
                tlb2: vm.tlb2.as_ref().map(Tlb::new),
                tlb_huge: vm.tlb_huge.as_ref().map(Tlb::new),
                huge_bytes: vm.huge_bytes().unwrap_or(0),
                walker: Walker::new(vm),
                paging,
                reclaim_ns,
                remote_extra,
                pressure_mark: (0, 0),
                pte_ns: mem.read(PTE_BYTES),
                mem_small: (mem.transfer_unit(), mem.read(1), mem.write(1)),
                mem,
                dev,
                fault_minor_ns: vm.fault_minor_ns.0,
                fault_major_ns: vm.fault_major_ns.0,
                sync_swap_out: vm.sync_swap_out,
                compute_ns: cfg.run.compute.0,
                pids: KeyMap::default(),
                last_pid: (u32::MAX, 0),
                procs: Vec::new(),
                v: VmResult {
                    page_size: page,
                    frames,
                    ..VmResult::default()
                },
                requests: 0,
                reads: 0,
                writes: 0,
                deletes: 0,
                bytes: 0,
                faulted: 0,
                backing: BackingCounters::default(),
                tier_meta: (t.tech.clone(), vm.policy.name().into(), capacity),
                area_cost: crate::device::area_cost::area_cost(tech, capacity, false),
                medium: tech.clone(),
                backing_tech: cfg.backing.tech.clone(),
                interval: cfg.run.interval,
                countdown: cfg.run.interval,
                mark: (0, 0, 0.0),
                timeline: Timeline::default(),
                skipped: 0,
                makespan: None,
            },
        })
    }

    pub fn len_hint(&self) -> Option<u64> {
        self.batches.len_hint()
    }

    pub fn processed(&self) -> u64 {
        self.c.requests
    }

    /// Runs about `max` more requests (whole batches); true when the
    /// source is exhausted.
    pub fn step(&mut self, max: u64) -> Result<bool, Error> {
        if let Some(s) = &mut self.sched {
            let done = s.step(&mut self.batches, &mut self.c, &self.source, max)?;
            let c = &mut self.c;
            if done && c.requests == 0 {
                return Err(TraceError::Empty {
                    path: self.describe.clone().into(),
                }
                .into());
            }
            if done {
                if c.countdown != c.interval {
                    c.record();
                }
                s.finish(c);
            }
            return Ok(done);
        }
        let c = &mut self.c;
        let stop = c.requests.saturating_add(max);
        let done = match &mut self.raw {
            Some(raw) => {
                while c.requests < stop && !raw.done {
                    let want = raw.left.min(BATCH as u64) as usize;
                    let recs = if want == 0 {
                        &[]
                    } else {
                        raw.reader.next_records(want)?
                    };
                    if recs.is_empty() {
                        raw.done = true;
                        break;
                    }
                    raw.left -= recs.len() as u64;
                    c.batch(recs);
                }
                raw.done
            }
            None => {
                while c.requests < stop {
                    let Some(buf) = self.batches.next_batch()? else {
                        break;
                    };
                    c.batch(buf);
                }
                self.batches.is_done()
            }
        };
        if done && c.requests == 0 {
            return Err(TraceError::Empty {
                path: self.describe.clone().into(),
            }
            .into());
        }
        if done && c.countdown != c.interval {
            c.record();
        }
        Ok(done)
    }

    pub fn run_to_end(&mut self) -> Result<(), Error> {
        while !self.step(u64::MAX)? {}
        Ok(())
    }

    /// The `vm` object.
    pub fn vm_result(&self) -> VmResult {
        self.c.vm_result()
    }

    /// The run's result: the hierarchy's figures with the memory tier as
    /// its one tier (hits and misses per page reference) and the swap
    /// device as its backing store, plus `vm` and `processes`.
    pub fn result(&self) -> RunResult {
        let mut r = self.c.result(self.describe.clone());
        r.skipped_records = self.batches.skipped();
        r
    }

    /// Builds and runs a config to the end.
    pub fn run(cfg: &Config) -> Result<RunResult, Error> {
        let mut s = VmRun::new(cfg, |_| true)?;
        s.run_to_end()?;
        Ok(s.result())
    }
}

/// A reference's time in parts (a `[vm.cpu]` run): CPU time in user mode
/// and in the kernel, and the swap device's service for its reads and its
/// swap-outs.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cost {
    pub pi: u32,
    pub user_ns: f64,
    pub system_ns: f64,
    pub read_ns: f64,
    pub write_ns: f64,
}

impl Core {
    pub(super) fn sync_swap_out(&self) -> bool {
        self.sync_swap_out
    }

    pub(super) fn procs_mut(&mut self) -> &mut [ProcessResult] {
        &mut self.procs
    }

    pub(super) fn set_makespan(&mut self, t: f64) {
        self.makespan = Some(t);
    }

    pub(super) fn set_kswapd_cpu(&mut self, ns: f64) {
        self.v.kswapd_cpu_ns = Some(ns);
    }

    pub(super) fn paging_mut(&mut self) -> &mut Paging {
        &mut self.paging
    }

    pub(super) fn reclaim_ns(&self) -> f64 {
        self.reclaim_ns
    }

    /// The swap device's time to write `n` pages.
    pub(super) fn page_writes_ns(&self, n: u64) -> f64 {
        n as f64 * self.dev.write(self.page as u32)
    }

    /// Counts `n` pages written to the swap device off any reference's
    /// path (kswapd, capacity taken back) and shoots down the translations
    /// of the pages that left memory.
    pub(super) fn after_background(&mut self, n: u64) {
        self.backing.writes += n;
        self.backing.bytes_written += n * self.page;
        for &k in &self.paging.victims {
            self.tlb.invalidate(k);
            if let Some(t2) = &mut self.tlb2 {
                t2.invalidate(k);
            }
        }
    }

    /// After a reference: a timeline row every `interval` references.
    #[inline(always)]
    pub(super) fn tick(&mut self) {
        self.countdown -= 1;
        if self.countdown == 0 {
            self.record();
        }
    }

    /// The index of `pid`'s address space (and its results).
    #[inline(always)]
    pub(super) fn process(&mut self, pid: u32) -> u32 {
        if self.last_pid.0 == pid {
            return self.last_pid.1;
        }
        let n = self.procs.len() as u32;
        let i = *self.pids.entry(pid as u64).or_insert(n);
        if i == n {
            self.procs.push(ProcessResult {
                pid,
                ..ProcessResult::default()
            });
        }
        self.last_pid = (pid, i);
        i
    }

    /// One batch of the serial loop: runs of repeats taken together, the
    /// rest one by one; a timeline row every `interval` references.
    #[inline(always)]
    fn batch<R: Ref>(&mut self, buf: &[R]) {
        let mut i = 0;
        // A run that ended on a reference outside its page (not at the
        // batch's end or a timeline mark): that reference is no repeat,
        // so it goes to the general path without the check.
        let mut ended = false;
        while i < buf.len() {
            let n = match if ended { 0 } else { self.repeats(&buf[i..]) } {
                0 => {
                    self.reference(&buf[i]);
                    ended = false;
                    1
                }
                n => {
                    ended = i + n < buf.len() && (n as u64) < self.countdown;
                    n
                }
            };
            i += n;
            self.countdown -= n as u64;
            if self.countdown == 0 {
                self.record();
            }
        }
    }

    /// The time of reading `n` pages from the device in one access.
    fn device_read(&self, n: u32) -> f64 {
        let one = self.dev.read(self.page as u32);
        one + (n.max(1) - 1) as f64 * (one - self.dev.read(0))
    }

    /// The references at the front of `rs` (at most up to the next
    /// timeline mark) that repeat the page of the reference before them,
    /// which hit: that page is still the first TLB level's last entry and
    /// resident (an eviction would have cleared both), so the general path
    /// ([`Core::reference`]) would find a TLB hit that changes no order and
    /// a page hit the policy is told of. This is that path less its
    /// lookups, its sums kept in registers over the run and added in the
    /// same order (the same figures to the last bit), and the policy told
    /// of the run's hits once at its end (`Policy::on_hits`: nothing else
    /// reaches the policy in between). Returns how many it took (0: the
    /// first is not such a repeat).
    #[inline(always)]
    fn repeats<R: Ref>(&mut self, rs: &[R]) -> usize {
        let tag = self.paging.last_hit();
        let (pid, pi) = self.last_pid;
        // (No page and an empty TLB are both u64::MAX, whose process
        // bits name no process.)
        if tag != self.tlb.last() || tag >> VPN_BITS != pi as u64 {
            return 0;
        }
        let Some(r0) = rs.first() else {
            return 0;
        };
        let (key, size, rpid, op) = r0.parts();
        let (first, last) = pages(key, size, self.shift);
        if rpid != pid || first != last || first & VPN_MASK != tag & VPN_MASK || op == Op::Delete {
            return 0;
        }
        let lo = first << self.shift;
        // Without TLB latency and compute time (the usual case) each
        // reference adds only its data time: x + 0.0 is x for the sums'
        // non-negative values, so both loops give the same bits.
        if self.tlb.latency_ns == 0.0 && self.compute_ns == 0.0 {
            self.run_from::<R, true>(rs, lo, pi)
        } else {
            self.run_from::<R, false>(rs, lo, pi)
        }
    }

    /// [`Core::repeats`] once its first reference is a repeat (out of
    /// line: most calls stop before). The run is the references up to the
    /// next timeline mark that stay within the bytes of the first one's
    /// page, `[lo, lo + page)` (the first does; one whose page number
    /// differs above the tag's bits is left to the general path, which
    /// finds the same repeat). One pass finds the run and sums its
    /// figures: the general path's sums kept in registers and added in its
    /// order, the TLB and the pager told once at the end. `ZERO`: no TLB
    /// latency and no compute time.
    #[inline(never)]
    fn run_from<R: Ref, const ZERO: bool>(&mut self, rs: &[R], lo: u64, pi: u32) -> usize {
        let rs = &rs[..rs.len().min(self.countdown as usize)];
        let mut sums = RunSums {
            t_addr: self.v.t_addr_ns,
            t_data: self.v.t_data_ns,
            runtime: self.procs[pi as usize].runtime_ns,
            writes: 0,
            bytes: 0,
        };
        let mut m = self.scan::<R, ZERO, true>(rs, 0, lo, &mut sums);
        if rs
            .get(m)
            .is_some_and(|r| r.parts().1 as u64 > self.mem_small.0)
        {
            // A reference larger than the memory's transfer unit stopped
            // the loop (or ended the run): the rest of the run, if any, by
            // the cost model.
            m = self.scan::<R, ZERO, false>(rs, m, lo, &mut sums);
        }
        if m == 0 {
            // (Only a first reference past the address space's end, whose
            // page sum saturated: the general path takes it.)
            return 0;
        }
        let n = m as u64;
        let RunSums {
            t_addr,
            t_data,
            runtime,
            writes,
            bytes,
        } = sums;
        self.requests += n;
        self.writes += writes;
        self.reads += n - writes;
        self.bytes += bytes;
        self.v.translations += n;
        self.tlb.repeat_n(n);
        self.paging.repeats(n, writes);
        self.v.t_addr_ns = t_addr;
        self.v.t_data_ns = t_data;
        let p = &mut self.procs[pi as usize];
        p.references += n;
        p.runtime_ns = runtime;
        m
    }

    /// The run of [`Core::run_from`] from `rs[i]` on: adds each reference
    /// to `s` while it stays in the page, returns where it stopped. With
    /// `SMALL` it also stops at a reference larger than the memory's
    /// transfer unit, so that the loop makes no call and its sums stay in
    /// registers (a call would spill them: no vector register survives a
    /// call).
    #[inline(always)]
    fn scan<R: Ref, const ZERO: bool, const SMALL: bool>(
        &self,
        rs: &[R],
        mut i: usize,
        lo: u64,
        s: &mut RunSums,
    ) -> usize {
        let pid = self.last_pid.0;
        let page = self.page;
        let lat = self.tlb.latency_ns;
        let compute = self.compute_ns;
        let (unit, rd, wr) = self.mem_small;
        let mut x = *s;
        while let Some(r) = rs.get(i) {
            let (key, bytes, rpid, op) = r.parts();
            let size = bytes.max(1) as u64;
            if !(rpid == pid
                && op != Op::Delete
                && size <= page
                && key.wrapping_sub(lo) <= page - size)
            {
                break;
            }
            let write = op == Op::Write;
            let d = if size <= unit {
                if write {
                    wr
                } else {
                    rd
                }
            } else if SMALL {
                break;
            } else {
                self.mem.access(size as u32, write)
            };
            x.writes += write as u64;
            x.bytes += bytes as u64;
            if ZERO {
                x.t_data += d;
                x.runtime += d;
            } else {
                x.t_addr += lat;
                x.t_data += d;
                x.runtime += lat + d + compute;
            }
            i += 1;
        }
        *s = x;
        i
    }

    #[inline(always)]
    fn reference(&mut self, r: &impl Ref) {
        self.reference_cost::<false>(r);
    }

    /// One reference: the paging and translation state it changes and its
    /// figures; with `TIMED` (a `[vm.cpu]` run, run/vm_procs.rs) also its time
    /// split into CPU and device parts, which the scheduler adds to the
    /// process instead of `runtime_ns` (without it the split is not
    /// computed: the serial loop does no extra work).
    #[inline(always)]
    pub(super) fn reference_cost<const TIMED: bool>(&mut self, r: &impl Ref) -> Cost {
        let mut cost = Cost::default();
        let (key, size, pid, op) = r.parts();
        self.requests += 1;
        let write = match op {
            Op::Read => {
                self.reads += 1;
                false
            }
            Op::Write => {
                self.writes += 1;
                true
            }
            Op::Delete => {
                self.deletes += 1;
                if TIMED {
                    cost.pi = self.process(pid);
                }
                return cost;
            }
        };
        self.bytes += size as u64;
        let pi = self.process(pid);
        let (first, last) = pages(key, size, self.shift);
        let (mut t_addr, mut t_data) = (0.0, 0.0);
        let (mut minor, mut major, mut misses) = (0u64, 0u64, 0u64);
        for vpn in first..=last {
            let part = if first == last {
                size.max(1)
            } else {
                let lo = key.max(vpn << self.shift);
                let hi = (key + size.max(1) as u64).min((vpn + 1) << self.shift);
                (hi - lo) as u32
            };
            let mut tag = ((pi as u64) << VPN_BITS) | (vpn & VPN_MASK);
            self.v.translations += 1;
            let huge = self.huge_bytes > 0 && {
                match self.paging.huge_of(tag) {
                    Some(h) => {
                        tag = h;
                        true
                    }
                    None => false,
                }
            };
            // The pager's entry loads while the TLB is looked up.
            self.paging.prefetch(tag);
            if huge {
                // A huge page's translation: its own TLB if configured, no
                // second level, a walk one level shorter.
                let t = self.tlb_huge.as_mut().unwrap_or(&mut self.tlb);
                t_addr += t.latency_ns;
                if !t.access(tag) {
                    misses += 1;
                    t_addr += self.walker.walk_huge() as f64 * self.pte_ns;
                }
            } else {
                t_addr += self.tlb.latency_ns;
            }
            if !huge && !self.tlb.access(tag) {
                let caught = match &mut self.tlb2 {
                    Some(t2) => {
                        t_addr += t2.latency_ns;
                        t2.access(tag)
                    }
                    None => false,
                };
                if caught {
                    self.v.tlb2_hits += 1;
                } else {
                    misses += 1;
                    let (refs, t) = self.walker.walk(tag);
                    t_addr += t + refs as f64 * self.pte_ns;
                }
            }
            let f = self.paging.access(tag, write);
            // Up to the memory's transfer unit, the precomputed access.
            let (unit, rd, wr) = self.mem_small;
            let d = if part as u64 <= unit {
                if write {
                    wr
                } else {
                    rd
                }
            } else {
                self.mem.access(part, write)
            };
            t_data += d;
            if TIMED {
                cost.user_ns += d;
                if self.remote_extra > 0.0 && self.paging.note_remote(tag) {
                    // A page in a borrowed frame: its access at remote_speed.
                    let extra = d * self.remote_extra;
                    cost.user_ns += extra;
                    t_data += extra;
                }
                if self.paging.pressure.is_some() {
                    let a = std::mem::take(&mut self.paging.alloc_cost);
                    let k = a.reclaimed as f64 * self.reclaim_ns + a.borrow_ns;
                    cost.system_ns += k;
                    t_data += k;
                }
            }
            if f.minor {
                minor += 1;
                t_data += self.fault_minor_ns;
                if TIMED {
                    cost.system_ns += self.fault_minor_ns;
                }
            }
            if f.major {
                major += 1;
                // A huge page comes back whole (one read of its bytes).
                let read = if huge {
                    self.dev.read(self.huge_bytes as u32)
                } else {
                    self.device_read(f.pages_read)
                };
                t_data += self.fault_major_ns + read;
                if TIMED {
                    cost.system_ns += self.fault_major_ns;
                    cost.read_ns += read;
                }
                self.backing.reads += 1;
                self.backing.bytes_read += if huge {
                    self.huge_bytes
                } else {
                    f.pages_read as u64 * self.page
                };
            }
            if f.swap_outs > 0 {
                let n = f.swap_outs as u64;
                let big = f.huge_swap_outs as u64;
                self.backing.writes += n;
                self.backing.bytes_written += (n - big) * self.page + big * self.huge_bytes;
                let mut w = (n - big) as f64 * self.dev.write(self.page as u32);
                if big > 0 {
                    w += big as f64 * self.dev.write(self.huge_bytes as u32);
                }
                if self.sync_swap_out {
                    t_data += w;
                }
                if TIMED {
                    cost.write_ns += w;
                }
            }
            for &k in &self.paging.victims {
                self.tlb.invalidate(k);
                if let Some(t2) = &mut self.tlb2 {
                    t2.invalidate(k);
                }
                if let Some(th) = &mut self.tlb_huge {
                    th.invalidate(k);
                }
            }
        }
        if minor + major > 0 {
            self.faulted += 1;
        }
        self.v.tlb_misses += misses;
        self.v.t_addr_ns += t_addr;
        self.v.t_data_ns += t_data;
        let p = &mut self.procs[pi as usize];
        p.references += 1;
        if TIMED {
            cost.pi = pi;
            cost.user_ns += t_addr + self.compute_ns;
        } else {
            p.runtime_ns += t_addr + t_data + self.compute_ns;
        }
        p.minor_faults += minor;
        p.major_faults += major;
        p.tlb_misses += misses;
        cost
    }

    #[cold]
    fn record(&mut self) {
        self.countdown = self.interval;
        let lookups = self.reads + self.writes;
        let time = self.v.t_addr_ns + self.v.t_data_ns;
        let (l0, m0, a0) = self.mark;
        let dl = lookups - l0;
        let t = &mut self.timeline;
        t.requests.push(self.requests);
        t.lookups.push(dl);
        t.miss_ratio.push(ratio(self.faulted - m0, dl));
        t.amat_ns
            .push(if dl > 0 { (time - a0) / dl as f64 } else { 0.0 });
        t.cumulative_miss_ratio.push(ratio(self.faulted, lookups));
        self.mark = (lookups, self.faulted, time);
        if self.paging.pressure.is_some() {
            let p = &self.paging;
            let (o0, r0) = self.pressure_mark;
            t.free_pages.push(p.free());
            t.borrowed_bytes
                .push(p.pool.as_ref().map_or(0, |x| x.borrowed * self.page));
            t.swap_out_pages.push(p.swap_outs - o0);
            t.swap_in_pages.push(p.pages_read - r0);
            self.pressure_mark = (p.swap_outs, p.pages_read);
        }
    }

    /// The `vm` object.
    fn vm_result(&self) -> VmResult {
        let mut v = self.v.clone();
        v.references = self.reads + self.writes;
        v.tlb_miss_ratio = ratio(v.tlb_misses, v.translations);
        v.walks = self.walker.walks;
        v.walk_references = self.walker.references;
        v.walk_cache_hits = self.walker.cache_hits();
        v.minor_faults = self.paging.minor_faults;
        v.major_faults = self.paging.major_faults;
        v.fault_rate = ratio(v.minor_faults + v.major_faults, v.translations);
        v.swap_outs = self.paging.swap_outs;
        v.pages_read = self.paging.pages_read;
        v.read_ahead_pages = self.paging.read_ahead_pages;
        v.read_ahead_unused = self.paging.read_ahead_unused;
        let w = &self.paging.window;
        v.read_ahead_hits = w.adaptive().then_some(w.total_hits);
        v.pages_touched = self.paging.pages_touched();
        if let Some(p) = &self.paging.pressure {
            v.watermarks = Some([p.w.min, p.w.low, p.w.high]);
            v.kswapd_scans = Some(p.kswapd_scans);
            v.kswapd_pages = Some(p.kswapd_pages);
            v.direct_reclaims = Some(p.direct_reclaims);
            v.direct_reclaim_pages = Some(p.direct_reclaim_pages);
            v.min_free_pages = Some(if p.min_free_seen == u64::MAX {
                self.paging.free()
            } else {
                p.min_free_seen
            });
        }
        v.huge_promotions = self.paging.huge_on().then_some(self.paging.promotions);
        v.amat_ns = if v.references > 0 {
            (v.t_addr_ns + v.t_data_ns) / v.references as f64
        } else {
            0.0
        };
        v
    }

    fn result(&self, workload: String) -> RunResult {
        let v = self.vm_result();
        let lookups = self.reads + self.writes;
        let access = v.t_addr_ns + v.t_data_ns;
        let compute = self.compute_ns * self.requests as f64;
        // With [vm.cpu] the processes overlap: the run takes as long as its
        // longest process (run/vm_procs.rs).
        let total = self.makespan.unwrap_or(access + compute);
        let per_s = |x: f64| if total > 0.0 { x * 1e9 / total } else { 0.0 };
        let tier = self.paging.tier();
        let (tech, policy, capacity) = self.tier_meta.clone();
        let (wear, _) = TierWear::of(
            tier.block_wear(),
            tier.flash_erases(),
            tier.c.bytes_in,
            &self.medium,
            Some(capacity),
            total / 1e9,
        );
        let c = tier.c.clone();
        let none = DeviceEnergy::unknown();
        let run_energy =
            crate::device::RunEnergy::of([(tier.name.as_str(), &none), ("backing", &none)], total);
        RunResult {
            version: crate::VERSION.into(),
            workload,
            unit_size: false,
            fill: "inclusive".into(),
            requests: self.requests,
            reads: self.reads,
            writes: self.writes,
            deletes: self.deletes,
            hits: lookups - self.faulted,
            misses: self.faulted,
            miss_ratio: ratio(self.faulted, lookups),
            byte_miss_ratio: ratio(c.misses, c.hits + c.misses),
            bytes_requested: self.bytes,
            amat_ns: v.amat_ns,
            total_time_ns: total,
            access_time_ns: access,
            compute_time_ns: compute,
            flush_time_ns: 0.0,
            flushes: 0,
            throughput_rps: per_s(self.requests as f64),
            throughput_bytes_per_s: per_s(self.bytes as f64),
            // No energy yet: the memory tier's busy time is not tracked
            // here (docs/device.md).
            backing: BackingResult {
                tech: self.backing_tech.clone(),
                counters: self.backing.clone(),
                energy: DeviceEnergy::unknown(),
                ftl: None,
            },
            tiers: vec![TierResult {
                name: tier.name.clone(),
                tech,
                policy,
                admission: "always".into(),
                capacity,
                used: self.paging.used_bytes(),
                objects: tier.len() as u64,
                write: "write-back".into(),
                miss_ratio: ratio(c.misses, c.hits + c.misses),
                byte_miss_ratio: ratio(c.misses, c.hits + c.misses),
                counters: c,
                wear,
                area_cost: self.area_cost,
                energy: DeviceEnergy::unknown(),
                ftl: None,
            }],
            skipped_records: self.skipped,
            warnings: Vec::new(),
            timeline: self.timeline.clone(),
            latency_ns: None,
            time: None,
            vm: Some(v),
            memorage: self.paging.pool.as_ref().map(|p| p.r.clone()),
            processes: self.procs.clone(),
            run_energy,
            cost: None,
        }
    }
}
