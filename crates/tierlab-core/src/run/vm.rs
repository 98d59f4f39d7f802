//! The virtual-memory run's serial model and its assembly: the memory
//! trace's references go through the per-reference core (run/vm_core.rs)
//! in trace order, a memtrace read in place (its reader's buffer, no
//! decoding pass); with `[vm.cpu]` its processes' model takes over
//! (run/vm_procs.rs). Both plug into the one driver (run/driver.rs).

use super::vm_core::{frames, pages, Core, Ref};
use super::vm_procs::{Procs, Sched};
use crate::config::Config;
use crate::cost::AccessCost;
use crate::error::Error;
use crate::hash::{KeyMap, KeySet};
use crate::hierarchy::BackingCounters;
use crate::run::driver::{Clock, Common, Driver, Feed, Model, Stream, Warmup};
use crate::run::timeline::Recorder;
use crate::source::setup::{pass_upto, Batches, Progress, BATCH};
use crate::source::trace::memtrace::{MemtraceReader, Rec};
use crate::source::trace::TraceError;
use crate::source::Source;
use crate::spec::ConfigError;
use crate::stats::RunResult;
use crate::tech::Catalog;
use crate::units::Size;
use crate::vm::config::VmConfig;
use crate::vm::paging::{Paging, VPN_BITS, VPN_MASK};
use crate::vm::result::VmResult;
use crate::vm::tlb::Tlb;
use crate::vm::walk::{Walker, PTE_BYTES};
use std::marker::PhantomData;

/// A memtrace read in place by the serial loop: its records up to `[run]
/// max_requests`.
/// Its description and length come from a stream of the same source
/// (opened, never read).
pub struct Raw {
    reader: MemtraceReader,
    left: u64,
    done: bool,
    stream: Batches,
}

impl Feed for Raw {
    type Rec = Rec;
    #[inline]
    fn next(&mut self) -> Result<Option<&[Rec]>, Error> {
        let want = self.left.min(BATCH as u64) as usize;
        if self.done || want == 0 {
            self.done = true;
            return Ok(None);
        }
        let recs = self.reader.next_records(want)?;
        if recs.is_empty() {
            self.done = true;
            return Ok(None);
        }
        self.left -= recs.len() as u64;
        Ok(Some(recs))
    }
    fn reopen(&mut self) -> Result<(), Error> {
        unreachable!("a [vm] run has one pass (config/checks.rs)")
    }
    fn len_hint(&self) -> Option<u64> {
        self.stream.len_hint()
    }
    fn skipped(&self) -> u64 {
        self.stream.skipped()
    }
    fn describe(&self) -> String {
        self.stream.describe()
    }
}

/// The serial model: references in trace order, each done when the next
/// starts; `R` the feed's record.
pub struct VmSerial<R> {
    c: Core,
    rec: PhantomData<R>,
}

impl<R: Ref> Model for VmSerial<R> {
    type Rec = R;
    const CLOCK: Clock = Clock::Requests;

    #[inline]
    fn run(&mut self, rs: &[R], _rec: &mut Recorder) -> Result<(), Error> {
        self.c.batch(rs);
        Ok(())
    }

    fn issued(&self) -> u64 {
        self.c.requests
    }

    fn point(&mut self, rec: &mut Recorder) {
        self.c.point(rec);
    }

    fn count_from_here(&mut self, _rec: &mut Recorder) {
        unreachable!("a [vm] run has no warm-up (config/checks.rs)")
    }

    fn result(&self, common: Common) -> RunResult {
        self.c.result(common)
    }
}

/// A `[vm]` run's driver: the serial model over a memtrace read in place
/// or over the source's requests, or the processes' model.
pub enum VmDriver {
    Raw(Box<Driver<VmSerial<Rec>, Raw>>),
    Stream(Box<Driver<VmSerial<crate::request::Request>, Stream>>),
    Procs(Box<Driver<Procs, Stream>>),
}

/// Distinct pages the first `limit` references of a source touch at
/// `shift` (a pre-pass, for a memory capacity given as a share of the
/// footprint: it reads what the run will read, and no more).
fn footprint_pages(
    source: &Source,
    shift: u32,
    limit: u64,
    progress: impl Progress,
) -> Result<u64, Error> {
    let mut seen = KeySet::default();
    pass_upto(source, limit, progress, |batch| {
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

/// Assembles the `[vm]` run of `cfg`, telling `progress` the references
/// its footprint pre-pass reads (a memory capacity given as a share).
pub fn assemble(
    cfg: &Config,
    cat: &Catalog,
    mut progress: impl Progress,
) -> Result<VmDriver, Error> {
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
        share => {
            let limit = cfg.run.max_requests.unwrap_or(u64::MAX);
            share.resolve(footprint_pages(&source, shift, limit, &mut progress)? * page)
        }
    };
    let frames = frames(capacity, page, "tier[0].capacity".into(), &t.capacity)?;
    let tech = cat
        .get(&t.tech)
        .map_err(|e| ConfigError::at("tier[0].tech", e.to_string()))?;
    let mem = AccessCost::new(tech, t.slowdown, t.overhead.0);
    let backing = cat
        .get(&cfg.backing.tech)
        .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
    let dev = AccessCost::new(backing, 1.0, cfg.backing.overhead.0);
    let seed = w.seed.unwrap_or(42);
    let max_requests = cfg.run.max_requests.unwrap_or(u64::MAX);
    let batches = Batches::new(crate::source::open(&source)?, BATCH).limit(max_requests);
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
    let mut c = core(
        cfg,
        cat,
        paging,
        frames,
        (mem, dev),
        (&t.tech, tech, capacity),
    )?;
    c.reclaim_ns = reclaim_ns;
    c.remote_extra = remote_extra;
    let interval = cfg.run.interval;
    let one = Warmup::default();
    if let Some(cpu) = &vm.cpu {
        let mut sched = Sched::new(cpu);
        if vm.pressure_key().is_some() {
            sched = sched.with_pressure();
        }
        let procs = Procs::new(c, sched, source);
        return Ok(VmDriver::Procs(Box::new(Driver::new(
            procs,
            Stream::new(batches, None),
            interval,
            1,
            one,
        ))));
    }
    Ok(match &source {
        Source::Memtrace(p) => VmDriver::Raw(Box::new(Driver::new(
            VmSerial {
                c,
                rec: PhantomData,
            },
            Raw {
                reader: MemtraceReader::open(p)?,
                left: max_requests,
                done: false,
                stream: batches,
            },
            interval,
            1,
            one,
        ))),
        _ => VmDriver::Stream(Box::new(Driver::new(
            VmSerial {
                c,
                rec: PhantomData,
            },
            Stream::new(batches, None),
            interval,
            1,
            one,
        ))),
    })
}

/// The per-reference core of a run over `frames` frames of memory
/// `tier = (tech name, medium, capacity)`, with the memory's and the swap
/// device's costs `(mem, dev)`: one constructor for every model built on
/// it (the `[vm]` models here, the multilevel one in run/tiered.rs).
pub(super) fn core(
    cfg: &Config,
    cat: &Catalog,
    paging: Paging,
    frames: u64,
    (mem, dev): (AccessCost, AccessCost),
    (tech_name, tech, capacity): (&str, &crate::tech::Technology, u64),
) -> Result<Core, Error> {
    let vm: &VmConfig = cfg
        .vm
        .as_ref()
        .ok_or_else(|| ConfigError::at("vm", "missing"))?;
    let page = vm.page_bytes();
    Ok(Core {
        shift: page.trailing_zeros(),
        page,
        tlb: Tlb::new(&vm.tlb),
        tlb2: vm.tlb2.as_ref().map(Tlb::new),
        tlb_huge: vm.tlb_huge.as_ref().map(Tlb::new),
        huge_bytes: vm.huge_bytes().unwrap_or(0),
        walker: Walker::new(vm),
        paging,
        reclaim_ns: 0.0,
        remote_extra: 0.0,
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
        bytes_faulted: 0,
        miss_bytes: 0,
        backing: BackingCounters::default(),
        tier_meta: (tech_name.to_string(), vm.policy.name().into(), capacity),
        area_cost: crate::device::area_cost::area_cost(tech, capacity, false),
        medium: tech.clone(),
        backing_meta: crate::run::assembly::backing_meta(cfg, cat)?,
        backing_channels: cfg.backing.channels.unwrap_or(1).min(u32::MAX as u64) as u32,
        swap_busy_ns: 0.0,
        makespan: None,
    })
}
