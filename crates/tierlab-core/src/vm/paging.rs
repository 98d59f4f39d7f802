//! Demand paging: the frames of the memory tier (capacity / page size),
//! replaced by any registered policy (second-chance CLOCK by default), and
//! the swap device below them.
//!
//! A reference to a resident page is a hit. A reference to a page that is
//! not resident faults:
//! - minor: the page was never touched and is zero-filled (`first_touch =
//!   "zero-fill"`), or it is in memory already, brought in by read-ahead
//!   and not yet mapped (Linux's swap cache);
//! - major: the page is read from the swap device, with the other pages of
//!   its aligned read-ahead cluster that are on the device and not resident
//!   (one device access: latency + pages x page size / bandwidth).
//!
//! A dirty page evicted is written to the swap device (a swap-out); a clean
//! one whose swap copy is valid is dropped.

use super::config::{FirstTouch, VmConfig};
use super::memorage::{Pool, Shrink};
use super::pressure::{Before, Pressure};
use super::readahead::Window;
use super::table::PageTable;
use crate::admission::AdmissionSpec;
use crate::cost::AccessCost;
use crate::hash::{KeyMap, KeySet};
use crate::policy::BuildCtx;
use crate::request::Request;
use crate::tier::{Store, Tier, Victim};

/// Bits of a page tag that hold the page number; the process's index is
/// above them. 2^40 pages cover a 48-bit address space at 512 B pages.
pub const VPN_BITS: u32 = 40;
pub const VPN_MASK: u64 = (1 << VPN_BITS) - 1;

/// No page tag is this (process indexes stay far below 2^24).
const NO_PAGE: u64 = u64::MAX;

/// The bit that marks a huge page's tag: its page number is the region's
/// (the base page number over the base pages per huge page).
pub const HUGE: u64 = 1 << 63;

/// A page's state bit: the swap device holds a valid copy of the page
/// (every touched page has `table::TOUCHED`, with or without it).
const ON_SWAP: u8 = 2;

/// A page's state bit: resident, read ahead and not referenced since (its
/// first reference is a minor fault; evicted with it, it was read for
/// nothing). A bit of the entry the reference looks up anyway, where a
/// hashed set of such pages cost two hash operations per page a
/// read-ahead brought in (the S5 reproduction's read-ahead storms).
const UNMAPPED: u8 = 4;

/// What a page reference cost the pager.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fault {
    pub minor: bool,
    pub major: bool,
    /// The page was not resident: the memory tier missed (a minor fault
    /// may also be a resident page's, mapped again).
    pub missed: bool,
    /// Pages read from the device (the faulting page and its read-ahead).
    pub pages_read: u32,
    /// Dirty pages written to the device to make room.
    pub swap_outs: u32,
    /// Of `swap_outs`, huge pages (each moves a huge page's bytes).
    pub huge_swap_outs: u32,
}

/// Under `[vm.pressure]`: what the allocations since the timed loop last
/// took it cost the allocating process (not in [`Fault`], which the serial
/// loop copies on every reference).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AllocCost {
    /// Pages reclaimed by the process itself (direct reclaim).
    pub reclaimed: u64,
    /// Time of Memorage's borrows (`[vm.memorage]`).
    pub borrow_ns: f64,
}

pub struct Paging {
    pub frames: u64,
    tier: Tier,
    store: Store,
    first_touch: FirstTouch,
    /// How many of the `read_ahead` pages a major fault reads (vm/readahead.rs).
    pub window: Window,
    /// The page size: the size of the frames' entries (bytes in and out).
    page: u32,
    /// Every page ever brought into memory: its state bits ([`ON_SWAP`])
    /// and, while resident, its slot (vm/table.rs): a reference looks its
    /// page up once, not in the tier's index and a map of bits.
    table: PageTable,
    /// Victims of the current reference (their translations are shot down).
    pub victims: Vec<u64>,
    /// Multilevel main memory (run/tiered.rs): every page that left
    /// memory since the model last emptied it, across the page parts of a
    /// reference (`victims` keeps only the last part's). None: not kept.
    pub gone: Option<Vec<u64>>,
    /// The page of the last reference and its slot, while no page has
    /// entered or left memory since that reference: a repeat (most
    /// references repeat the page before them) is a hit found without the
    /// index.
    last: (u64, u32),
    pub minor_faults: u64,
    pub major_faults: u64,
    pub swap_outs: u64,
    pub pages_read: u64,
    pub read_ahead_pages: u64,
    /// Pages read ahead and evicted before any reference.
    pub read_ahead_unused: u64,
    /// `[vm.pressure]`: the frame limit is enforced here, by reclaim ahead
    /// of demand (vm/pressure.rs), not by the tier's capacity.
    pub pressure: Option<Pressure>,
    /// `[vm.memorage]`: the borrowed frames (vm/memorage.rs).
    pub pool: Option<Pool>,
    /// Frames usable now: `frames` plus those borrowed.
    pub limit: u64,
    /// Pages of processes that ended (no longer in `table`).
    released_pages: u64,
    /// Allocation costs not yet taken by the timed loop.
    pub alloc_cost: AllocCost,
    /// Huge pages: base pages per huge page (0: off) and its log2.
    ratio: u64,
    ratio_shift: u32,
    /// Resident base pages per region (a huge page's worth of base pages,
    /// keyed by its huge tag), while it has any.
    resident: KeyMap<u32>,
    /// Regions collapsed into huge pages (they stay huge).
    promoted: KeySet,
    /// Regions whose base pages became all resident (to collapse).
    full: Vec<u64>,
    /// Collapses made (khugepaged's rule).
    pub promotions: u64,
}

impl Paging {
    pub fn new(c: &VmConfig, frames: u64, memory: AccessCost, seed: u64, name: String) -> Self {
        let page = c.page_bytes();
        let ratio = c.huge_bytes().map_or(0, |h| h / page);
        // With huge pages the frames count bytes (a huge page takes `ratio`
        // frames); else each entry is one frame.
        let (capacity, unit) = if ratio > 0 {
            (frames * page, false)
        } else {
            (frames, true)
        };
        let policy = c.policy.build(&BuildCtx {
            capacity,
            seed,
            unit_size: unit,
        });
        let admission =
            AdmissionSpec::default().build(&crate::admission::BuildCtx { seed, tier: 0 });
        Paging {
            frames,
            tier: Tier::new(name, 0, capacity, unit, policy, admission, true, memory),
            store: Store::new(),
            first_touch: c.first_touch,
            window: Window::new(c.read_ahead_mode, c.read_ahead),
            page: c.page_bytes() as u32,
            table: PageTable::new(),
            victims: Vec::new(),
            gone: None,
            last: (NO_PAGE, 0),
            minor_faults: 0,
            major_faults: 0,
            swap_outs: 0,
            pages_read: 0,
            read_ahead_pages: 0,
            read_ahead_unused: 0,
            pressure: None,
            pool: None,
            limit: frames,
            released_pages: 0,
            alloc_cost: AllocCost::default(),
            ratio,
            ratio_shift: ratio.trailing_zeros(),
            resident: KeyMap::default(),
            promoted: KeySet::default(),
            full: Vec::new(),
            promotions: 0,
        }
    }

    /// Whether huge pages are on.
    #[inline(always)]
    pub fn huge_on(&self) -> bool {
        self.ratio > 0
    }

    /// The huge page a base page `key` lies in, if its region was collapsed.
    #[inline]
    pub fn huge_of(&self, key: u64) -> Option<u64> {
        let h = self.region(key);
        self.promoted.contains(&h).then_some(h)
    }

    /// The tag of the region (huge page) base page `key` lies in.
    #[inline(always)]
    fn region(&self, key: u64) -> u64 {
        let vpn = key & VPN_MASK;
        HUGE | (key - vpn) | (vpn >> self.ratio_shift)
    }

    /// Bytes of the memory in use.
    pub fn used_bytes(&self) -> u64 {
        if self.ratio > 0 {
            self.tier.used()
        } else {
            self.tier.used() * self.page as u64
        }
    }

    /// Memory pressure (and Memorage's pool): from now on the tier never
    /// evicts by itself; allocations keep free frames above the
    /// watermarks (vm/pressure.rs).
    pub fn with_pressure(mut self, p: Pressure, pool: Option<Pool>) -> Self {
        self.tier.capacity = u64::MAX / 2;
        self.pressure = Some(p);
        self.pool = pool;
        self
    }

    /// Frames not holding a page.
    #[inline]
    pub fn free(&self) -> u64 {
        self.limit.saturating_sub(self.tier.len() as u64)
    }

    /// Before taking a frame under pressure: borrow (Memorage's watermark,
    /// before any reclaim), then direct reclaim below `min`.
    fn allocate(&mut self, f: &mut Fault) {
        let high = self.pressure.as_ref().map_or(0, |p| p.w.high);
        let free = self.free();
        if let Some(pool) = &mut self.pool {
            // After this allocation fewer than high would be free: one
            // page below pages_high, S3's WMARK_MEMORAGE.
            if free <= high {
                let (n, t) = pool.borrow();
                self.limit += n;
                self.alloc_cost.borrow_ns += t;
            }
        }
        let Some(p) = &self.pressure else { return };
        if let Before::Reclaim(n) = p.before_alloc(self.free()) {
            let mut got = 0;
            for _ in 0..n {
                match self.evict_one() {
                    Some(dirty) => {
                        got += 1;
                        f.swap_outs += dirty as u32;
                    }
                    None => break,
                }
            }
            self.alloc_cost.reclaimed += got;
            let p = self.pressure.as_mut().expect("pressure");
            p.direct_reclaims += 1;
            p.direct_reclaim_pages += got;
        }
    }

    /// After a page took a frame under pressure: local frames first, then
    /// borrowed ones; the watermarks (kswapd's wake-up).
    fn placed(&mut self, key: u64) {
        let resident = self.tier.len() as u64;
        if let Some(pool) = &mut self.pool {
            let local = resident - 1 - pool.remote.len() as u64;
            if local >= self.frames {
                pool.remote.insert(key, 0);
                pool.r.swap_outs_avoided += 1;
            }
        }
        let free = self.free();
        if let Some(p) = &mut self.pressure {
            p.after_alloc(free);
        }
    }

    /// Whether a read-ahead page may take a frame: never by reclaim or a
    /// borrow, only while more than `min` stay free after it.
    fn room_for_read_ahead(&self) -> bool {
        match &self.pressure {
            Some(p) => self.free() > p.w.min + 1,
            None => true,
        }
    }

    /// Evicts the policy's victim (reclaim ahead of demand): whether it was
    /// dirty (then swapped out), None when nothing is resident.
    pub fn evict_one(&mut self) -> Option<bool> {
        let v = self.tier.evict_one(&mut self.store)?;
        self.last.0 = NO_PAGE;
        self.gone(v.key, v.dirty);
        Some(v.dirty)
    }

    /// The books of a page that left memory: its translation to shoot
    /// down, its swap-out when dirty.
    fn gone(&mut self, key: u64, dirty: bool) {
        self.victims.push(key);
        if let Some(g) = &mut self.gone {
            g.push(key);
        }
        if let Some(pool) = &mut self.pool {
            pool.remote.remove(&key);
        }
        let add = if dirty {
            self.swap_outs += 1;
            self.tier.c.writebacks += 1;
            ON_SWAP
        } else {
            0
        };
        if self.table.leave(key, add, UNMAPPED) & UNMAPPED != 0 {
            self.read_ahead_unused += 1;
        }
    }

    /// One kswapd pass: up to SWAP_CLUSTER_MAX pages evicted toward
    /// `high` free. Returns (pages, dirty pages, whether `high` are free).
    pub fn kswapd_pass(&mut self) -> (u64, u64, bool) {
        self.victims.clear();
        let goal = match &self.pressure {
            Some(p) => p.kswapd_goal(self.free()),
            None => 0,
        };
        let (mut n, mut dirty) = (0, 0);
        for _ in 0..goal {
            match self.evict_one() {
                Some(d) => {
                    n += 1;
                    dirty += d as u64;
                }
                None => break,
            }
        }
        let free = self.free();
        let p = self.pressure.as_mut().expect("kswapd runs under pressure");
        p.kswapd_scans += 1;
        p.kswapd_pages += n;
        (n, dirty, free >= p.w.high)
    }

    /// A process (index `pi`) has ended: its pages leave memory and the
    /// swap device without being written (Linux's exit_mmap), and
    /// Memorage may give capacity back (vm/memorage.rs).
    pub fn release(&mut self, pi: u32) {
        self.victims.clear();
        let mine = |k: u64| k >> VPN_BITS == pi as u64;
        let slots: Vec<(u64, u32)> = self.store.iter_tier(0).filter(|&(k, _)| mine(k)).collect();
        for (k, slot) in slots {
            self.tier.remove(&mut self.store, slot);
            self.victims.push(k);
            if let Some(g) = &mut self.gone {
                g.push(k);
            }
            if let Some(pool) = &mut self.pool {
                pool.remote.remove(&k);
            }
        }
        // (Its resident pages' entries, their state bits with them, go with
        // the rest.)
        self.released_pages += self.table.drop_where(VPN_BITS, pi as u64);
        self.last.0 = NO_PAGE;
        self.shrink();
    }

    /// `aggressive` and `balanced`: gives back the last chunk while that
    /// leaves `high` frames free; the pages in borrowed frames beyond what
    /// is still borrowed move into free frames.
    fn shrink(&mut self) {
        let high = self.pressure.as_ref().map_or(0, |p| p.w.high);
        loop {
            let free = self.free();
            let Some(pool) = &mut self.pool else { break };
            let c = pool.last_chunk();
            if pool.enabled_shrink == Shrink::Lazy || c == 0 || free < high + c {
                break;
            }
            let n = pool.give_back();
            self.limit -= n;
            let m = (pool.remote.len() as u64).saturating_sub(pool.borrowed);
            pool.take_out(m, true);
            pool.r.migrations += m;
        }
    }

    /// Storage needs capacity back at time `t_ns` (the occupancy rose):
    /// chunks go back until what is borrowed fits; their pages move to
    /// free local frames, the rest are evicted. Returns the dirty pages
    /// evicted (swap-outs the caller times).
    pub fn storage_tick(&mut self, t_ns: f64) -> u64 {
        self.victims.clear();
        let Some(pool) = &mut self.pool else { return 0 };
        if !pool.advance(t_ns) {
            return 0;
        }
        let mut dirty = 0;
        while self
            .pool
            .as_ref()
            .is_some_and(|p| p.excess() > 0 && p.last_chunk() > 0)
        {
            let resident = self.tier.len() as u64;
            let pool = self.pool.as_mut().expect("pool");
            let n = pool.give_back();
            self.limit -= n;
            let remote = pool.remote.len() as u64;
            let m = remote.saturating_sub(pool.borrowed);
            let local_free = self.frames.saturating_sub(resident - remote);
            let mv = m.min(local_free);
            pool.take_out(mv, true);
            pool.r.migrations += mv;
            let out = pool.take_out(m - mv, false);
            pool.r.evicted_on_return += out.len() as u64;
            for k in out {
                if let Some(slot) = self.tier.lookup(&self.store, k) {
                    let v = self.tier.remove(&mut self.store, slot);
                    self.tier.c.evictions += 1;
                    self.gone(k, v.dirty);
                    dirty += v.dirty as u64;
                }
            }
            self.last.0 = NO_PAGE;
        }
        let free = self.free();
        if let Some(p) = &mut self.pressure {
            if free < p.w.low {
                p.wake = true;
            }
        }
        dirty
    }

    /// Whether `key` (resident) is in a borrowed frame; counts the
    /// reference.
    #[inline]
    pub fn note_remote(&mut self, key: u64) -> bool {
        match &mut self.pool {
            Some(p) if !p.remote.is_empty() => match p.remote.get_mut(&key) {
                Some(c) => {
                    *c = c.saturating_add(1);
                    p.r.remote_references += 1;
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// Whether page `key` is resident (mapped or read ahead).
    pub fn resident(&mut self, key: u64) -> bool {
        self.table.slot(key).is_some()
    }

    pub fn tier(&self) -> &Tier {
        &self.tier
    }

    /// Distinct pages referenced.
    pub fn pages_touched(&self) -> u64 {
        self.table.touched() + self.released_pages
    }

    /// Whether the device holds a page of state `bits` when it is not
    /// resident.
    #[inline(always)]
    fn on_device_bits(&self, bits: u8) -> bool {
        // With pages that start on the device, every page's data is there
        // until it is written: a page read in and evicted clean keeps its
        // copy (as a swapped-in page keeps its swap slot), so it is read
        // again, never zero-filled.
        bits & ON_SWAP != 0 || self.first_touch == FirstTouch::Swap
    }

    /// The page the last reference hit, resident and mapped, while no page
    /// has entered or left memory since (else no page).
    #[inline(always)]
    pub fn last_hit(&self) -> u64 {
        self.last.0
    }

    /// A reference to page `key` as the frames' policy sees it: one page.
    #[inline(always)]
    fn request(&self, key: u64, write: bool) -> Request {
        Request {
            key,
            size: self.page,
            op: if write {
                crate::request::Op::Write
            } else {
                crate::request::Op::Read
            },
            ..Request::default()
        }
    }

    /// Another reference to [`Paging::last_hit`]'s page: a hit found
    /// without the index (most references repeat the page before them).
    #[inline(always)]
    pub fn repeat(&mut self, write: bool) {
        let slot = self.last.1;
        let req = self.request(self.last.0, write);
        self.tier.touch(slot, &req);
        if write {
            self.store.set_dirty(slot, true);
        }
        self.tier.c.hits += 1;
    }

    /// `n` more references to [`Paging::last_hit`]'s page, `writes` of
    /// them writes, with nothing between them: as `n` calls of
    /// [`Paging::repeat`], the policy told once ([`Policy::on_hits`]: a run
    /// of hits on one page is one step for most policies).
    ///
    /// [`Policy::on_hits`]: crate::policy::Policy::on_hits
    #[inline(always)]
    pub fn repeats(&mut self, n: u64, writes: u64) {
        let slot = self.last.1;
        let req = self.request(self.last.0, writes > 0);
        self.tier.touch_n(slot, &req, n);
        if writes > 0 {
            self.store.set_dirty(slot, true);
        }
        self.tier.c.hits += n;
    }

    /// Starts loading what [`Paging::access`] of `key` reads first (its
    /// page table entry), so that the miss overlaps the caller's TLB work.
    #[inline(always)]
    pub fn prefetch(&mut self, key: u64) {
        self.table.prefetch(key);
    }

    /// One reference to page `key` (a tag: process index and page number).
    #[inline]
    pub fn access(&mut self, key: u64, write: bool) -> Fault {
        self.victims.clear();
        let req = self.request(key, write);
        if self.last.0 == key {
            self.repeat(write);
            return Fault::default();
        }
        let i = self.table.index(key);
        debug_assert_eq!(
            self.table.slot_at(i),
            self.tier.lookup(&self.store, key),
            "the page table agrees with the tier"
        );
        if let Some(slot) = self.table.slot_at(i) {
            self.last = (key, slot);
            self.tier.touch(slot, &req);
            if write {
                self.store.set_dirty(slot, true);
            }
            self.tier.c.hits += 1;
            if self.table.bits_at(i) & UNMAPPED != 0 {
                self.table.clear_bits_at(i, UNMAPPED);
                self.minor_faults += 1;
                self.window.hit();
                return Fault {
                    minor: true,
                    ..Fault::default()
                };
            }
            return Fault::default();
        }
        self.tier.c.misses += 1;
        self.last.0 = NO_PAGE;
        let mut f = Fault {
            missed: true,
            ..Fault::default()
        };
        // The page's bits, its entry made: it is touched from now on (one
        // lookup for both).
        let bits = self.table.touch_at(i);
        let req = if key & HUGE != 0 {
            Request {
                size: self.page * self.ratio as u32,
                ..req
            }
        } else {
            req
        };
        if self.on_device_bits(bits) {
            f.major = true;
            self.major_faults += 1;
            self.insert(&req, write, &mut f, i);
            f.pages_read = 1;
            if self.window.max() > 1 && key & HUGE == 0 {
                self.read_around(key, &mut f);
            }
            self.pages_read += f.pages_read as u64;
        } else {
            // Zero-filled: dirty only once written (a page only read maps
            // the zero page and has nothing to save).
            f.minor = true;
            self.minor_faults += 1;
            self.insert(&req, write, &mut f, i);
        }
        if self.ratio > 0 {
            self.promote_full_regions(&mut f);
        }
        // The page is the last one referenced, resident and mapped from
        // now on (unless a collapse took it): the references after it in
        // its page are repeats, as after a hit (one lookup here instead of
        // one general reference after every fault).
        if let Some(slot) = self.table.slot(key) {
            self.last = (key, slot);
        }
        f
    }

    /// khugepaged's rule (Linux, Documentation/admin-guide/mm/transhuge.rst:
    /// khugepaged collapses a huge-page-aligned range of base pages into a
    /// huge page), applied at once: a region whose base pages are all
    /// resident is collapsed into one huge page. Its base pages leave (their
    /// translations are shot down, as victims) and the huge page takes their
    /// frames; it is dirty, having no swap copy of its own.
    fn promote_full_regions(&mut self, f: &mut Fault) {
        while let Some(h) = self.full.pop() {
            if self
                .resident
                .get(&h)
                .is_none_or(|&n| n as u64 != self.ratio)
            {
                continue;
            }
            self.resident.remove(&h);
            let vpn0 = (h & VPN_MASK) << self.ratio_shift;
            let base = (h & !HUGE) - (h & VPN_MASK);
            for k in (base | vpn0)..(base | vpn0) + self.ratio {
                let slot = self
                    .tier
                    .lookup(&self.store, k)
                    .expect("a full region's pages are resident");
                self.tier.remove(&mut self.store, slot);
                self.table.leave(k, 0, UNMAPPED);
                self.victims.push(k);
                if let Some(g) = &mut self.gone {
                    g.push(k);
                }
            }
            self.promoted.insert(h);
            self.promotions += 1;
            let i = self.table.index(h);
            self.table.touch_at(i);
            let req = Request {
                key: h,
                size: self.page * self.ratio as u32,
                ..Request::default()
            };
            self.insert(&req, true, f, i);
        }
    }

    /// The rest of `key`'s aligned cluster (of the window's pages,
    /// vm/readahead.rs) that is on the device and not resident, into memory
    /// unmapped. At most frames - 1 pages, so the faulting page stays.
    fn read_around(&mut self, key: u64, f: &mut Fault) {
        let ra = self.window.pages(key);
        let vpn = key & VPN_MASK;
        let base = key - vpn + (vpn - vpn % ra);
        let room = self.frames.saturating_sub(1);
        let mut n = 0;
        for k in base..base + ra {
            if n >= room {
                break;
            }
            if k == key {
                continue;
            }
            // One lookup of the page's entry for its checks, its touch and
            // its placing (the insertion's victims have entries already, so
            // looking theirs up makes none and `i` stays the page's).
            let i = self.table.index(k);
            if self.table.slot_at(i).is_some() || !self.on_device_bits(self.table.bits_at(i)) {
                continue;
            }
            if !self.room_for_read_ahead() {
                break;
            }
            let req = Request {
                key: k,
                size: self.page,
                ..Request::default()
            };
            self.table.touch_at(i);
            self.table.set_bits_at(i, UNMAPPED);
            self.insert(&req, false, f, i);
            n += 1;
        }
        f.pages_read += n as u32;
        self.read_ahead_pages += n;
    }

    /// Places page `req.key` (touched; its page table entry at `i`) in
    /// memory, evicting what the policy picks.
    fn insert(&mut self, req: &Request, dirty: bool, f: &mut Fault, i: usize) {
        if self.pressure.is_some() {
            return self.insert_under_pressure(req, dirty, f, i);
        }
        let mut out: [Option<Victim>; 2] = [None, None];
        let mut more = Vec::new();
        self.tier
            .insert(&mut self.store, None, req, dirty, false, |v| {
                if out[0].is_none() {
                    out[0] = Some(v)
                } else if out[1].is_none() {
                    out[1] = Some(v)
                } else {
                    more.push(v)
                }
            });
        if self.ratio > 0 && req.key & HUGE == 0 {
            let r = self.region(req.key);
            let n = self.resident.entry(r).or_insert(0);
            *n += 1;
            if *n as u64 == self.ratio {
                self.full.push(r);
            }
        }
        for v in out.into_iter().flatten().chain(more) {
            self.victims.push(v.key);
            if let Some(g) = &mut self.gone {
                g.push(v.key);
            }
            if self.ratio > 0 {
                if v.key & HUGE != 0 {
                    f.huge_swap_outs += v.dirty as u32;
                } else {
                    let r = self.region(v.key);
                    if let Some(n) = self.resident.get_mut(&r) {
                        *n -= 1;
                        if *n == 0 {
                            self.resident.remove(&r);
                        }
                    }
                }
            }
            let add = if v.dirty {
                f.swap_outs += 1;
                self.swap_outs += 1;
                self.tier.c.writebacks += 1;
                ON_SWAP
            } else {
                0
            };
            // Its entry: no slot, the swap copy's bit, no longer unmapped.
            if self.table.leave(v.key, add, UNMAPPED) & UNMAPPED != 0 {
                self.read_ahead_unused += 1;
            }
        }
        // The page's slot (none if the tier refused it), after its victims
        // left: one of theirs may be the slot it took.
        let slot = self.tier.lookup(&self.store, req.key);
        self.table.set_slot_at(i, slot);
    }

    /// [`Paging::insert`] under `[vm.pressure]`: room is made before (the
    /// tier's capacity is out of reach, so it evicts nothing itself).
    /// Apart, so that the serial loop's insertion carries one test for it.
    #[cold]
    #[inline(never)]
    fn insert_under_pressure(&mut self, req: &Request, dirty: bool, f: &mut Fault, i: usize) {
        self.allocate(f);
        self.tier
            .insert(&mut self.store, None, req, dirty, false, |_| {
                debug_assert!(false, "under pressure the tier never evicts itself")
            });
        let slot = self.tier.lookup(&self.store, req.key);
        self.table.set_slot_at(i, slot);
        self.placed(req.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::tech::Catalog;

    fn pager(extra: &str, frames: u64) -> Paging {
        let cfg = Config::from_toml_str(&format!(
            "[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"1MiB\"\n[vm]\n{extra}\n"
        ))
        .unwrap();
        let mem = AccessCost::new(Catalog::builtin().get("DRAM-DDR3").unwrap(), 1.0, 0.0);
        Paging::new(&cfg.vm.unwrap(), frames, mem, 1, "memory".into())
    }

    #[test]
    fn first_touch_is_minor_and_a_dirty_victim_is_swapped_back_in() {
        let mut p = pager("", 2);
        assert!(p.access(1, true).minor);
        assert!(p.access(2, false).minor);
        assert_eq!(p.access(1, false), Fault::default());
        let f = p.access(3, false);
        // CLOCK: 1 and 2 both referenced once... 1 had a hit, 2 did not.
        assert!(f.minor);
        assert_eq!(p.victims, vec![2]);
        assert_eq!(f.swap_outs, 0, "2 was only read");
        p.access(4, false);
        assert_eq!(p.victims, vec![1]);
        assert_eq!(p.swap_outs, 1, "1 was written");
        let f = p.access(1, false);
        assert!(f.major && f.pages_read == 1);
        assert_eq!((p.minor_faults, p.major_faults), (4, 1));
    }

    #[test]
    fn a_page_from_the_device_evicted_clean_is_read_again() {
        let mut p = pager("first_touch = \"swap\"", 1);
        assert!(p.access(1, false).major);
        assert!(p.access(2, false).major);
        assert_eq!(p.victims, vec![1]);
        assert_eq!(p.swap_outs, 0, "1 was only read");
        let f = p.access(1, false);
        assert!(f.major && f.pages_read == 1, "its copy is on the device");
        assert_eq!((p.minor_faults, p.major_faults), (0, 3));
    }

    #[test]
    fn read_ahead_brings_the_cluster_and_its_first_use_is_minor() {
        let mut p = pager("first_touch = \"swap\"\nread_ahead = 4", 16);
        let f = p.access(5, false);
        assert!(f.major);
        // Cluster 4..8 without 5.
        assert_eq!(f.pages_read, 4);
        assert!(p.access(6, false).minor);
        assert_eq!(p.access(6, false), Fault::default());
        assert!(p.access(8, false).major);
        assert_eq!(
            (p.major_faults, p.minor_faults, p.read_ahead_pages),
            (2, 1, 6)
        );
    }
}
