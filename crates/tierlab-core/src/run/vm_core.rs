//! The virtual-memory model's per-reference core: each reference is split
//! at page boundaries; each page is translated (TLB levels, then a
//! page-table walk) and then accessed (a hit, or a minor or major fault),
//! and its time is T_addr + T_data ("Issues in File Caching and Virtual
//! Memory Paging with Fast SCM Storage", section 3). A hit costs a memory
//! access of the reference's own size, not a page transfer. The serial
//! model (run/vm.rs) and the processes' model (run/vm_procs.rs) drive it.

use crate::cost::AccessCost;
use crate::device::wear::TierWear;
use crate::device::{Activity, DeviceEnergy};
use crate::hash::KeyMap;
use crate::hierarchy::BackingCounters;
use crate::request::{Op, Request};
use crate::run::driver::Common;
use crate::run::timeline::{Mark, Recorder};
use crate::source::trace::memtrace::Rec;
use crate::stats::{ratio, BackingMeta, BackingResult, RunCounts, RunResult, TierResult};
use crate::tier::TierCounters;
use crate::vm::paging::{Paging, VPN_BITS, VPN_MASK};
use crate::vm::result::{ProcessResult, VmResult};
use crate::vm::tlb::Tlb;
use crate::vm::walk::Walker;

/// A memory reference as the loop reads it: a decoded request, or a
/// memtrace record in place (its reader's buffer, no decoding pass).
pub trait Ref {
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
pub(super) fn pages(key: u64, size: u32, shift: u32) -> (u64, u64) {
    let last = key.saturating_add(size.max(1) as u64 - 1);
    (key >> shift, last >> shift)
}

/// The frames of `capacity` bytes of memory in pages of `page` bytes, or
/// the error at `key` (its value as written: `written`) when not one page
/// fits.
pub(super) fn frames(
    capacity: u64,
    page: u64,
    key: String,
    written: &crate::units::Size,
) -> Result<u64, crate::spec::ConfigError> {
    match capacity / page {
        0 => Err(crate::spec::ConfigError::at(
            key,
            format!(
                "\"{written}\" is {capacity} B, less than one page of vm.page_size = {page} B: \
                 it would hold no frame"
            ),
        )),
        n => Ok(n),
    }
}

/// Everything but the source: what each reference updates.
pub struct Core {
    pub(super) shift: u32,
    pub(super) page: u64,
    pub(super) tlb: Tlb,
    pub(super) tlb2: Option<Tlb>,
    /// `vm.tlb_huge`: huge pages' own TLB (else they share `tlb`).
    pub(super) tlb_huge: Option<Tlb>,
    /// A huge page's bytes (0: huge pages off).
    pub(super) huge_bytes: u64,
    pub(super) walker: Walker,
    pub(super) paging: Paging,
    pub(super) mem: AccessCost,
    /// The memory's transfer unit and its read and write of 1 byte: every
    /// reference up to the unit costs one of these.
    pub(super) mem_small: (u64, f64, f64),
    pub(super) dev: AccessCost,
    pub(super) pte_ns: f64,
    pub(super) fault_minor_ns: f64,
    pub(super) fault_major_ns: f64,
    pub(super) sync_swap_out: bool,
    pub(super) compute_ns: f64,
    pub(super) pids: KeyMap<u32>,
    pub(super) last_pid: (u32, u32),
    pub(super) procs: Vec<ProcessResult>,
    pub(super) v: VmResult,
    pub(super) requests: u64,
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) deletes: u64,
    pub(super) bytes: u64,
    pub(super) faulted: u64,
    /// The bytes of the references that faulted (the run's byte miss
    /// ratio), and of the page parts the memory tier missed (its byte miss
    /// ratio; every other byte requested is a hit): docs/vm.md#byte-miss-ratio.
    pub(super) bytes_faulted: u64,
    pub(super) miss_bytes: u64,
    pub(super) backing: BackingCounters,
    pub(super) tier_meta: (String, String, u64),
    /// The memory tier's die area and price (device/area_cost.rs).
    pub(super) area_cost: crate::device::area_cost::AreaCost,
    /// The memory tier's medium, for its wear (device/wear.rs).
    pub(super) medium: crate::tech::Technology,
    /// The swap device: its medium, capacity and power-down (its energy).
    pub(super) backing_meta: BackingMeta,
    pub(super) backing_channels: u32,
    /// The swap device's service time: its reads on major faults and its
    /// page writes, wherever they are charged (device/energy.rs).
    pub(super) swap_busy_ns: f64,
    /// A `[vm.cpu]` run's wall clock (its last process's end).
    pub(super) makespan: Option<f64>,
    /// `[vm.pressure]`: CPU time per page reclaimed.
    pub(super) reclaim_ns: f64,
    /// `[vm.memorage]`: a borrowed frame's access time over a local one's,
    /// less 1.
    pub(super) remote_extra: f64,
    /// Swap-outs and pages read at the last timeline row.
    pub(super) pressure_mark: (u64, u64),
}

/// A reference's time in parts (a `[vm.cpu]` run): CPU time in user mode
/// and in the kernel, and the swap device's service for its reads and its
/// swap-outs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cost {
    pub pi: u32,
    pub user_ns: f64,
    pub system_ns: f64,
    pub read_ns: f64,
    pub write_ns: f64,
    /// Waits on the memory's own queues (the nodes of run/tiered.rs): time
    /// in user mode that the hardware thread's speed does not scale.
    pub stall_ns: f64,
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
        self.backing.pages_written += n * self.dev.pages(self.page as u32);
        self.swap_busy_ns += self.page_writes_ns(n);
        for &k in &self.paging.victims {
            self.tlb.invalidate(k);
            if let Some(t2) = &mut self.tlb2 {
                t2.invalidate(k);
            }
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

    /// References of the serial model, up to the next timeline point (the
    /// driver cuts its batches there): runs of repeats taken together, the
    /// rest one by one.
    #[inline(always)]
    pub(super) fn batch<R: Ref>(&mut self, buf: &[R]) {
        let mut i = 0;
        // A run that ended on a reference outside its page (not at the
        // slice's end, where a timeline point falls): that reference is no repeat,
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
                    ended = i + n < buf.len();
                    n
                }
            };
            i += n;
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
            m = self.scan_large::<R, ZERO>(rs, m, lo, &mut sums);
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
        // The sums are stored before the calls below: a sum live across a
        // call is spilled, and the register allocator may then keep it on
        // the stack inside the scan loop too (it did: +4 instructions per
        // reference of the run, callgrind).
        self.v.t_addr_ns = t_addr;
        self.v.t_data_ns = t_data;
        let p = &mut self.procs[pi as usize];
        p.references += n;
        p.runtime_ns = runtime;
        self.requests += n;
        self.writes += writes;
        self.reads += n - writes;
        self.bytes += bytes;
        self.v.translations += n;
        self.tlb.repeat_n(n);
        self.paging.repeats(n, writes);
        m
    }

    /// [`Core::scan`] past a reference larger than the memory's transfer
    /// unit, by the cost model. Out of line: the call it makes would
    /// otherwise share [`Core::run_from`]'s body with the small scan's
    /// loop, whose sums must stay in registers.
    #[inline(never)]
    fn scan_large<R: Ref, const ZERO: bool>(
        &self,
        rs: &[R],
        i: usize,
        lo: u64,
        s: &mut RunSums,
    ) -> usize {
        self.scan::<R, ZERO, false>(rs, i, lo, s)
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
            if f.missed {
                // The memory tier's missed bytes: the reference's in this
                // page (docs/vm.md#byte-miss-ratio); the rest of the bytes
                // requested are its hits.
                self.miss_bytes += if first == last {
                    size as u64
                } else {
                    part as u64
                };
            }
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
                let bytes = if huge {
                    self.huge_bytes
                } else {
                    f.pages_read as u64 * self.page
                };
                self.backing.bytes_read += bytes;
                self.backing.pages_read += self.dev.pages(bytes as u32);
                self.swap_busy_ns += read;
            }
            if f.swap_outs > 0 {
                let n = f.swap_outs as u64;
                let big = f.huge_swap_outs as u64;
                self.backing.writes += n;
                self.backing.bytes_written += (n - big) * self.page + big * self.huge_bytes;
                self.backing.pages_written += (n - big) * self.dev.pages(self.page as u32)
                    + big * self.dev.pages(self.huge_bytes as u32);
                let mut w = (n - big) as f64 * self.dev.write(self.page as u32);
                if big > 0 {
                    w += big as f64 * self.dev.write(self.huge_bytes as u32);
                }
                self.swap_busy_ns += w;
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
            self.bytes_faulted += size as u64;
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

    /// A timeline point: references that faulted count as misses; the
    /// pager's columns under `[vm.pressure]`.
    #[cold]
    pub(super) fn point(&mut self, rec: &mut Recorder) {
        rec.point(Mark {
            requests: self.requests,
            lookups: self.reads + self.writes,
            misses: self.faulted,
            access_ns: self.v.t_addr_ns + self.v.t_data_ns,
        });
        let t = &mut rec.timeline;
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
    pub(super) fn vm_result(&self) -> VmResult {
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

    /// The run's result through the one builder: the memory tier as its
    /// one tier (hits and misses per page reference), the swap device as
    /// its backing store, plus `vm`, `processes` and `memorage`.
    pub(super) fn result(&self, common: Common) -> RunResult {
        let v = self.vm_result();
        let counts = RunCounts {
            requests: self.requests,
            reads: self.reads,
            writes: self.writes,
            deletes: self.deletes,
            misses: self.faulted,
            bytes_requested: self.bytes,
            bytes_missed: self.bytes_faulted,
            access_time_ns: v.t_addr_ns + v.t_data_ns,
            compute_time_ns: self.compute_ns * self.requests as f64,
            flush_time_ns: 0.0,
            flushes: 0,
            // With [vm.cpu] the processes overlap: the run takes as long
            // as its longest process (run/vm_procs.rs).
            elapsed_ns: self.makespan,
        };
        let total = counts.total_time_ns();
        let tier = self.paging.tier();
        let (tech, policy, capacity) = &self.tier_meta;
        let (wear, _) = TierWear::of(
            tier.block_wear(),
            tier.flash_erases(),
            tier.c.bytes_in,
            &self.medium,
            Some(*capacity),
            total / 1e9,
        );
        let mut t = TierResult::build(
            tier.name.clone(),
            (tech, policy, "always"),
            *capacity,
            (self.paging.used_bytes(), tier.len() as u64),
            "write-back",
            TierCounters {
                hit_bytes: self.bytes - self.miss_bytes,
                miss_bytes: self.miss_bytes,
                // Every read and write reference is served by memory (after
                // its fault, if any), beside the pages placed in its frames
                // (the tier's own count of writes): docs/vm.md#outputs.
                reads: self.reads,
                writes: self.writes + tier.c.writes,
                ..tier.c.clone()
            },
            wear,
            self.area_cost,
            None,
        );
        // No energy yet: the memory tier's busy time is not tracked here
        // (docs/device.md).
        t.energy = DeviceEnergy::unknown();
        let b = &self.backing_meta;
        let swap = Activity {
            pages_read: self.backing.pages_read,
            pages_programmed: self.backing.pages_written,
            erases: None,
            busy_ns: self.swap_busy_ns,
            channels: self.backing_channels,
            elapsed_ns: total,
            capacity_bytes: b.capacity,
        };
        let swap_energy = DeviceEnergy::of(&b.medium, &swap, b.power_down);
        let mut r = RunResult::build(
            common.workload,
            false,
            "inclusive".into(),
            counts,
            vec![t],
            BackingResult {
                tech: b.tech.clone(),
                counters: self.backing.clone(),
                energy: swap_energy,
                ftl: None,
            },
            common.timeline,
        );
        r.run_energy = crate::device::RunEnergy::of(
            [
                (tier.name.as_str(), &r.tiers[0].energy),
                ("backing", &r.backing.energy),
            ],
            total,
        );
        // A swap device busier than the run is long (write-backs off the
        // references' path, `sync_swap_out = false`): said, as for tiers.
        r.warnings.extend(crate::device::overload::warning_because(
            "backing",
            &b.tech,
            self.swap_busy_ns,
            self.backing_channels,
            total,
            "swap-outs off the faulting references' time (vm.sync_swap_out = false) \
             are never waited for, so throughput and lifetime rates are not physical; \
             vm.sync_swap_out = true charges each to its reference",
        ));
        r.skipped_records = common.skipped_records;
        r.vm = Some(v);
        r.memorage = self.paging.pool.as_ref().map(|p| p.r.clone());
        r.processes = self.procs.clone();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::frames;
    use crate::units::Size;

    #[test]
    fn a_capacity_below_one_page_names_its_key() {
        let share = Size::Percent(0.1);
        assert_eq!(
            frames(8192, 4096, "tier[0].capacity".into(), &share).unwrap(),
            2
        );
        let e = frames(749, 4096, "vm.node[0].capacity".into(), &share).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("vm.node[0].capacity: "), "{text}");
        assert!(
            text.contains("749 B, less than one page of vm.page_size = 4096 B"),
            "{text}"
        );
    }
}
