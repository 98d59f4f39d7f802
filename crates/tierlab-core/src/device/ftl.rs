//! A page-mapped flash translation layer: what raw flash rated in
//! program/erase cycles does with a host's writes. Each logical page maps
//! to any physical page; a write goes to the write frontier (the open
//! block) and invalidates the page's old copy; when free blocks run short,
//! garbage collection picks a victim block, copies its valid pages to the
//! frontier and erases it. Over-provisioning (OP = (physical - logical) /
//! physical, Desnoyers' spare factor) is the room that makes victims with
//! invalid pages exist. What the host sees is the extra work: write
//! amplification (pages programmed per host page), GC reads and erases,
//! and the wear they spread over the blocks.
//!
//! The model is the one analysed in Desnoyers, "Analytic Modeling of SSD
//! Write Performance" (SYSTOR 2012) and simulated by his ftlsim: single
//! page writes, one frontier that takes host writes and GC copies alike,
//! a fixed reserve of free blocks. Victim choice: greedy (fewest valid
//! pages), cost-benefit (LFS's (1 - u) / 2u x age, Rosenblum & Ousterhout,
//! "The Design and Implementation of a Log-Structured File System", SOSP
//! 1991, used for flash by Kawaguchi et al., "A Flash-Memory Based File
//! System", USENIX 1995), FIFO (the oldest closed block: Desnoyers' LRU
//! cleaning). Wear levelling: dynamic (a new frontier is the least-erased
//! free block) and static (when the most- and least-erased blocks differ
//! by more than a threshold, the least-erased closed block, which holds
//! cold data, is cleaned so its block returns to use). TRIM drops a
//! logical page's mapping, so GC no longer copies it.
//! `closed_form_wa` (ftl_forms.rs) gives the analytic write amplification
//! the tests hold the simulation to.

use std::collections::{BTreeMap, VecDeque};

pub use super::ftl_forms::{closed_form_wa, greedy_closed_form_wa, lambert_w0};
pub use super::ftl_result::FtlResult;

/// How garbage collection picks the block to clean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Victim {
    Greedy,
    CostBenefit,
    Fifo,
}

/// The FTL's shape and policies (the `ftl = { ... }` key, resolved
/// against the medium: page and block in bytes become counts).
#[derive(Clone, Debug, PartialEq)]
pub struct FtlSpec {
    /// Logical pages the host addresses.
    pub logical_pages: u64,
    pub pages_per_block: u32,
    /// (physical - logical) / physical, in (0, 1).
    pub op: f64,
    pub victim: Victim,
    pub dynamic_wl: bool,
    /// Static wear levelling's erase-count spread threshold (None: off).
    pub static_wl: Option<u32>,
    /// Free blocks GC keeps in reserve (at least 1).
    pub reserve_blocks: u32,
}

#[derive(Debug, PartialEq)]
pub enum FtlError {
    /// Not enough physical blocks for the logical pages, the frontier and
    /// the reserve: the message names what to raise.
    TooSmall(String),
    /// More pages, or pages per block, than the model's tables hold.
    TooLarge { key: &'static str, msg: String },
    /// The tables could not be allocated.
    NoMemory(String),
}

impl FtlError {
    /// The config key the error is about, relative to the tier or the
    /// backing store (`ftl.op`, `capacity`, `ftl.block`).
    pub fn key(&self) -> &'static str {
        match self {
            FtlError::TooSmall(_) => "ftl.op",
            FtlError::TooLarge { key, .. } => key,
            FtlError::NoMemory(_) => "capacity",
        }
    }
}

impl std::fmt::Display for FtlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FtlError::TooSmall(m) | FtlError::NoMemory(m) => f.write_str(m),
            FtlError::TooLarge { msg, .. } => f.write_str(msg),
        }
    }
}

/// The most flash pages an FTL models: its tables take about 17 bytes a
/// physical page (the map, the reverse map, the free list and the
/// object chain), about 4.6 GB at the limit, where 16 TiB of 2 KiB
/// pages asked for a 34 GB map and aborted.
pub const MAX_PAGES: u64 = 1 << 28;
/// The most pages per erase block (real NAND has 64 to a few thousand):
/// greedy keeps a list per valid count.
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;

/// `n` copies of `v`, or `NoMemory` naming `what`.
pub(crate) fn table<T: Clone>(n: usize, v: T, what: &str) -> Result<Vec<T>, FtlError> {
    let mut t = Vec::new();
    t.try_reserve_exact(n).map_err(|_| {
        FtlError::NoMemory(format!(
            "the FTL's {what} of {n} entries ({} bytes) could not be allocated: lower the \
             capacity or raise ftl.page",
            n as u128 * std::mem::size_of::<T>() as u128
        ))
    })?;
    t.resize(n, v);
    Ok(t)
}

impl FtlSpec {
    /// Physical blocks for `logical_pages` at `op`: logical / (1 - op)
    /// pages, rounded up to whole blocks.
    pub fn physical_blocks(&self) -> u64 {
        let phys = (self.logical_pages as f64 / (1.0 - self.op)).ceil() as u64;
        phys.div_ceil(self.pages_per_block as u64)
    }
}

/// The work one host operation caused beyond itself (for the time
/// model: GC occupies the device).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub reads: u32,
    pub writes: u32,
    pub erases: u32,
}

/// Counters over the FTL's life (or since `reset_counters`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct FtlCounters {
    pub host_pages_written: u64,
    pub gc_pages_read: u64,
    pub gc_pages_written: u64,
    /// Pages moved by static wear levelling (read and written).
    pub wl_pages_moved: u64,
    pub erases: u64,
    pub trims: u64,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Open,
    Closed,
}

/// One erase block's bookkeeping, side by side: a host write's
/// invalidation reads and writes all of it (one cache line where three
/// arrays took three).
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Valid pages.
    valid: u32,
    /// Greedy: the block's place in its bucket (NONE: in none).
    pos: u32,
    state: State,
}

pub struct Ftl {
    spec: FtlSpec,
    nblocks: u32,
    ppb: u32,
    /// A physical page's block, without a division: `ppn >> shift` when
    /// pages per block is a power of two (`magic` 0), else the high half
    /// of `magic x ppn` (Lemire, Kaser & Kurz, "Faster Remainder by
    /// Direct Computation", 2019: exact for 32-bit operands).
    shift: u32,
    magic: u64,
    /// Logical page -> physical page (NONE: unmapped).
    map: Vec<u32>,
    /// Physical page -> the logical page last programmed there; read only
    /// where `bits` says the page is valid, so it is never cleared (an
    /// invalidation writes a bit of a small array, not a random line of a
    /// large one).
    rmap: Vec<u32>,
    /// `words` u64s per block, bit i set while page i holds valid data.
    /// A block's bits are all set when it opens: pages are programmed in
    /// order and only a closed (full) block is cleaned, so a bit that
    /// matters was set by its program.
    bits: Vec<u64>,
    words: u32,
    blk: Vec<Block>,
    erases: Vec<u32>,
    /// When each closed block took its last page, in host writes (age for
    /// cost-benefit) and in closes (FIFO order).
    closed_at: Vec<u64>,
    close_seq: Vec<u64>,
    next_seq: u64,
    /// Free blocks: in erase order without dynamic wear levelling; with
    /// it, by (erase count, block), most-worn first, so the least-worn is
    /// popped from the end (a sorted vector: GC keeps only a few free
    /// blocks, so an insertion moves a few entries).
    free_fifo: VecDeque<u32>,
    free_by_wear: Vec<(u32, u32)>,
    /// Greedy: closed blocks by valid count (each block's position in
    /// `Block::pos`); no bucket below `low` holds a block.
    buckets: Vec<Vec<u32>>,
    low: usize,
    /// FIFO: closed blocks in close order (stale entries skipped).
    fifo: VecDeque<(u32, u64)>,
    /// With static levelling: erase counts of all blocks, count -> blocks
    /// (the spread it watches).
    wear: BTreeMap<u32, u32>,
    open: u32,
    fill: u32,
    /// Static levelling's own frontier for the cold data it moves: the
    /// most-worn free block, so a worn block rests under data that is not
    /// rewritten, and cold data does not mix with hot writes (in the hot
    /// frontier it was cleaned again at once).
    cold: u32,
    cold_fill: u32,
    in_gc: bool,
    erases_at_reset: Vec<u32>,
    /// A victim's valid pages (logical numbers) on their way to the
    /// frontier; kept for its allocation.
    moving: Vec<u32>,
    /// Since the FTL was made (`counted`: since the warm-up).
    pub c: FtlCounters,
    c0: FtlCounters,
    work: Work,
}

impl Ftl {
    /// Whether `spec` leaves GC room to work: every victim must hold an
    /// invalid page, so the logical pages fit in the blocks outside the
    /// frontier, the reserve and one more.
    pub fn check(spec: &FtlSpec) -> Result<(), FtlError> {
        let ppb = spec.pages_per_block;
        if ppb > MAX_PAGES_PER_BLOCK {
            return Err(FtlError::TooLarge {
                key: "ftl.block",
                msg: format!(
                    "{ppb} pages per erase block: at most {MAX_PAGES_PER_BLOCK} are modelled \
                     (real NAND has 64 to a few thousand); raise ftl.page or lower ftl.block"
                ),
            });
        }
        let nblocks = spec.physical_blocks();
        let pages = nblocks.saturating_mul(ppb as u64);
        if pages > MAX_PAGES {
            return Err(FtlError::TooLarge {
                key: "capacity",
                msg: format!(
                    "{} logical pages at op = {} need {pages} flash pages: at most {MAX_PAGES} are \
                     modelled (the FTL's tables take about 17 bytes a page); lower the capacity \
                     or raise ftl.page",
                    spec.logical_pages, spec.op
                ),
            });
        }
        let reserve = spec.reserve_blocks.max(1);
        let open = if spec.static_wl.is_some() { 2 } else { 1 };
        let room = nblocks.saturating_sub(reserve as u64 + open + 1) * ppb as u64;
        if spec.logical_pages == 0 || spec.logical_pages > room {
            return Err(FtlError::TooSmall(format!(
                "{} logical pages need more than {} blocks of {} pages at op = {}: raise op or \
                 the capacity (the frontiers and {} reserve blocks hold no data)",
                spec.logical_pages, nblocks, ppb, spec.op, reserve
            )));
        }
        Ok(())
    }

    pub fn new(spec: FtlSpec) -> Result<Self, FtlError> {
        Self::check(&spec)?;
        let ppb = spec.pages_per_block;
        // At most MAX_PAGES pages (check): the count fits.
        let nblocks = spec.physical_blocks() as u32;
        let reserve = spec.reserve_blocks.max(1);
        let n = nblocks as usize;
        let words = ppb.div_ceil(64);
        let (shift, magic) = if ppb.is_power_of_two() {
            (ppb.trailing_zeros(), 0)
        } else {
            (0, u64::MAX / ppb as u64 + 1)
        };
        let mut f = Ftl {
            nblocks,
            ppb,
            shift,
            magic,
            map: table(spec.logical_pages as usize, NONE, "map")?,
            rmap: table(n * ppb as usize, NONE, "reverse map")?,
            bits: vec![0; n * words as usize],
            words,
            blk: vec![
                Block {
                    valid: 0,
                    pos: NONE,
                    state: State::Free,
                };
                n
            ],
            erases: vec![0; n],
            closed_at: vec![0; n],
            close_seq: vec![0; n],
            next_seq: 0,
            free_fifo: VecDeque::with_capacity(n),
            // Block 1 (the least-worn, lowest) at the end: taken first.
            free_by_wear: Vec::with_capacity(n),
            buckets: vec![Vec::new(); ppb as usize + 1],
            low: 0,
            fifo: VecDeque::with_capacity(n),
            wear: BTreeMap::from([(0, nblocks)]),
            open: 0,
            fill: 0,
            cold: NONE,
            cold_fill: 0,
            in_gc: false,
            erases_at_reset: vec![0; n],
            moving: Vec::with_capacity(ppb as usize),
            c: FtlCounters::default(),
            c0: FtlCounters::default(),
            work: Work::default(),
            spec: FtlSpec {
                reserve_blocks: reserve,
                ..spec
            },
        };
        if f.spec.dynamic_wl {
            f.free_by_wear.extend((1..nblocks).rev().map(|b| (0, b)));
        } else {
            f.free_fifo.extend(1..nblocks);
        }
        f.open_block(0);
        Ok(f)
    }

    pub fn spec(&self) -> &FtlSpec {
        &self.spec
    }

    pub fn blocks(&self) -> u32 {
        self.nblocks
    }

    /// The flash under the logical space, in bytes of `page_bytes` pages.
    pub fn physical_bytes(&self, page_bytes: u64) -> u64 {
        self.nblocks as u64 * self.ppb as u64 * page_bytes
    }

    /// Writes logical page `lpn`; returns the GC and levelling work it
    /// set off (copies read and written, erases).
    pub fn write(&mut self, lpn: u64) -> Work {
        self.work = Work::default();
        let lpn = self.logical(lpn);
        self.invalidate(lpn);
        self.c.host_pages_written += 1;
        self.program(lpn as u32);
        self.work
    }

    /// `lpn` in the logical space (wrapped around it): no division for a
    /// page inside it, as every page but an overflow is.
    #[inline(always)]
    fn logical(&self, lpn: u64) -> usize {
        let n = self.map.len() as u64;
        (if lpn < n { lpn } else { lpn % n }) as usize
    }

    /// Starts loading logical page `lpn`'s map entry, for a write of it
    /// soon.
    #[inline(always)]
    pub fn prefetch(&self, lpn: u64) {
        crate::index::prefetch(self.map.as_ptr().wrapping_add(self.logical(lpn)));
    }

    /// Starts loading what a write of logical page `lpn` reads after its
    /// map entry (which should be on its way: `prefetch`): when it is
    /// mapped, its block's validity word and bookkeeping.
    #[inline(always)]
    pub fn prefetch_page(&self, lpn: u64) {
        let lpn = self.logical(lpn);
        let ppn = self.map[lpn];
        if ppn != NONE {
            let b = self.block_of(ppn);
            let i = ppn - b * self.ppb;
            crate::index::prefetch(
                self.bits
                    .as_ptr()
                    .wrapping_add(b as usize * self.words as usize + (i / 64) as usize),
            );
            crate::index::prefetch(self.blk.as_ptr().wrapping_add(b as usize));
        }
    }

    /// Drops logical page `lpn`'s mapping (TRIM): GC will not copy it.
    pub fn trim(&mut self, lpn: u64) {
        let lpn = self.logical(lpn);
        if self.map[lpn] != NONE {
            self.invalidate(lpn);
            self.c.trims += 1;
        }
    }

    /// Starts the counted part of a run (after warm-up): the figures
    /// (`counted`, `write_amplification`, `result`) count from here; `c`
    /// runs on (the time model follows its erases).
    pub fn reset_counters(&mut self) {
        self.c0 = self.c.clone();
        self.erases_at_reset.clone_from(&self.erases);
    }

    /// The counters since `reset_counters`.
    pub fn counted(&self) -> FtlCounters {
        let (c, z) = (&self.c, &self.c0);
        FtlCounters {
            host_pages_written: c.host_pages_written - z.host_pages_written,
            gc_pages_read: c.gc_pages_read - z.gc_pages_read,
            gc_pages_written: c.gc_pages_written - z.gc_pages_written,
            wl_pages_moved: c.wl_pages_moved - z.wl_pages_moved,
            erases: c.erases - z.erases,
            trims: c.trims - z.trims,
        }
    }

    /// Pages programmed per host page written since `reset_counters` (1
    /// before the first write).
    pub fn write_amplification(&self) -> f64 {
        let c = self.counted();
        if c.host_pages_written == 0 {
            return 1.0;
        }
        (c.host_pages_written + c.gc_pages_written + c.wl_pages_moved) as f64
            / c.host_pages_written as f64
    }

    /// Pages programmed (host, GC and levelling) since `reset_counters`.
    pub fn pages_programmed(&self) -> u64 {
        let c = self.counted();
        c.host_pages_written + c.gc_pages_written + c.wl_pages_moved
    }

    pub fn erase_counts(&self) -> &[u32] {
        &self.erases
    }

    /// The block holding physical page `ppn`.
    #[inline(always)]
    fn block_of(&self, ppn: u32) -> u32 {
        if self.magic == 0 {
            ppn >> self.shift
        } else {
            ((self.magic as u128 * ppn as u128) >> 64) as u32
        }
    }

    fn invalidate(&mut self, lpn: usize) {
        let ppn = self.map[lpn];
        if ppn == NONE {
            return;
        }
        self.map[lpn] = NONE;
        let b = self.block_of(ppn);
        let i = ppn - b * self.ppb;
        self.bits[b as usize * self.words as usize + (i / 64) as usize] &= !(1u64 << (i % 64));
        let blk = self.blk[b as usize];
        if blk.state == State::Closed && self.spec.victim == Victim::Greedy {
            // Out of its bucket and into the one below.
            self.unbucket(b, blk.valid, blk.pos);
            self.blk[b as usize].valid = blk.valid - 1;
            self.bucket(b);
        } else {
            self.blk[b as usize].valid = blk.valid - 1;
        }
    }

    /// Block `b` becomes a frontier: every bit set (see `bits`).
    fn open_block(&mut self, b: u32) {
        self.blk[b as usize].state = State::Open;
        let w = self.words as usize;
        let at = b as usize * w;
        self.bits[at..at + w].fill(u64::MAX);
        if !self.ppb.is_multiple_of(64) {
            self.bits[at + w - 1] = (1u64 << (self.ppb % 64)) - 1;
        }
    }

    /// Programs `lpn` into static levelling's cold frontier.
    fn program_cold(&mut self, lpn: u32) {
        if self.cold == NONE || self.cold_fill == self.ppb {
            if self.cold != NONE {
                self.close(self.cold);
            }
            self.cold = self.take_worn();
            self.open_block(self.cold);
            self.cold_fill = 0;
        }
        let ppn = self.cold * self.ppb + self.cold_fill;
        self.cold_fill += 1;
        self.map[lpn as usize] = ppn;
        self.rmap[ppn as usize] = lpn;
        self.blk[self.cold as usize].valid += 1;
    }

    /// Programs `lpn` into the write frontier. Inlined into a host write:
    /// the frontier's turnover is apart.
    #[inline(always)]
    fn program(&mut self, lpn: u32) {
        if self.fill == self.ppb {
            self.new_frontier();
        }
        let ppn = self.open * self.ppb + self.fill;
        self.fill += 1;
        self.map[lpn as usize] = ppn;
        self.rmap[ppn as usize] = lpn;
        self.blk[self.open as usize].valid += 1;
    }

    /// Programs GC's copies `lpns` into the write frontier, in order, a
    /// run of pages per frontier block: as many `program`s, without a
    /// test per page.
    fn program_run(&mut self, lpns: &[u32]) {
        let mut k = 0;
        while k < lpns.len() {
            if self.fill == self.ppb {
                self.new_frontier();
            }
            let n = (lpns.len() - k).min((self.ppb - self.fill) as usize);
            let ppn0 = self.open * self.ppb + self.fill;
            let dst = &mut self.rmap[ppn0 as usize..ppn0 as usize + n];
            for ((&lpn, r), ppn) in lpns[k..k + n].iter().zip(dst).zip(ppn0..) {
                *r = lpn;
                self.map[lpn as usize] = ppn;
            }
            self.fill += n as u32;
            self.blk[self.open as usize].valid += n as u32;
            k += n;
        }
    }

    /// The frontier is full: it closes, a free block opens, and GC runs
    /// until the reserve is back (unless this program is GC's own).
    #[cold]
    #[inline(never)]
    fn new_frontier(&mut self) {
        loop {
            self.close(self.open);
            self.open = self.take_free();
            self.open_block(self.open);
            self.fill = 0;
            if self.in_gc {
                return;
            }
            self.in_gc = true;
            let mut guard = 0u64;
            while self.free_len() < self.spec.reserve_blocks as usize {
                self.collect();
                guard += 1;
                assert!(guard <= 4 * self.nblocks as u64, "GC made no progress");
            }
            self.in_gc = false;
            // GC's copies can fill the new frontier to its last page (a
            // victim with every page valid: FIFO under skewed writes), and
            // the write that called for it needs a page: another block.
            if self.fill < self.ppb {
                return;
            }
        }
    }

    fn close(&mut self, b: u32) {
        self.blk[b as usize].state = State::Closed;
        self.closed_at[b as usize] = self.c.host_pages_written;
        self.close_seq[b as usize] = self.next_seq;
        match self.spec.victim {
            Victim::Greedy => self.bucket(b),
            Victim::Fifo => self.fifo.push_back((b, self.next_seq)),
            Victim::CostBenefit => {}
        }
        self.next_seq += 1;
    }

    fn free_len(&self) -> usize {
        if self.spec.dynamic_wl {
            self.free_by_wear.len()
        } else {
            self.free_fifo.len()
        }
    }

    fn put_free(&mut self, b: u32) {
        self.blk[b as usize].state = State::Free;
        if self.spec.dynamic_wl {
            let key = (self.erases[b as usize], b);
            let at = self.free_by_wear.partition_point(|&k| k > key);
            self.free_by_wear.insert(at, key);
        } else {
            self.free_fifo.push_back(b);
        }
    }

    /// The most-worn free block (the oldest erased without dynamic
    /// levelling), for cold data.
    fn take_worn(&mut self) -> u32 {
        let b = if self.spec.dynamic_wl {
            (!self.free_by_wear.is_empty()).then(|| self.free_by_wear.remove(0).1)
        } else {
            self.free_fifo.pop_front()
        };
        b.expect("the reserve keeps a free block for levelling")
    }

    fn take_free(&mut self) -> u32 {
        let b = if self.spec.dynamic_wl {
            self.free_by_wear.pop().map(|(_, b)| b)
        } else {
            self.free_fifo.pop_front()
        };
        b.expect("the reserve keeps a free block for the frontier")
    }

    /// Closed block `b` into the bucket of its valid count, last.
    #[inline(always)]
    fn bucket(&mut self, b: u32) {
        let v = self.blk[b as usize].valid as usize;
        self.blk[b as usize].pos = self.buckets[v].len() as u32;
        self.buckets[v].push(b);
        self.low = self.low.min(v);
    }

    /// Block `b` out of bucket `v`, where it sits at `i`: the bucket's
    /// last block takes its place.
    #[inline(always)]
    fn unbucket(&mut self, b: u32, v: u32, i: u32) {
        let bucket = &mut self.buckets[v as usize];
        let last = bucket.pop().expect("a closed block is in its bucket");
        if last != b {
            bucket[i as usize] = last;
            self.blk[last as usize].pos = i;
        }
        self.blk[b as usize].pos = NONE;
    }

    /// The closed block to clean, taken out of the victim index.
    fn pick(&mut self) -> u32 {
        match self.spec.victim {
            Victim::Greedy => {
                let mut v = self.low;
                while self.buckets[v].is_empty() {
                    v += 1;
                    assert!(v < self.buckets.len(), "a closed block exists when GC runs");
                }
                self.low = v;
                let b = *self.buckets[v].last().expect("non-empty");
                let blk = self.blk[b as usize];
                self.unbucket(b, blk.valid, blk.pos);
                b
            }
            Victim::Fifo => loop {
                let (b, seq) = self.fifo.pop_front().expect("a closed block exists");
                if self.blk[b as usize].state == State::Closed && self.close_seq[b as usize] == seq
                {
                    return b;
                }
            },
            Victim::CostBenefit => {
                // LFS: benefit / cost = (1 - u) x age / (1 + u), u the
                // valid share (the copy costs a read and a write of u).
                let now = self.c.host_pages_written;
                let ppb = self.ppb as f64;
                let mut best = (f64::NEG_INFINITY, NONE);
                for b in 0..self.nblocks {
                    let blk = self.blk[b as usize];
                    if blk.state != State::Closed {
                        continue;
                    }
                    let u = blk.valid as f64 / ppb;
                    let age = (now - self.closed_at[b as usize]) as f64 + 1.0;
                    let score = (1.0 - u) * age / (1.0 + u);
                    if score > best.0 {
                        best = (score, b);
                    }
                }
                best.1
            }
        }
    }

    /// Cleans one victim: its valid pages to the frontier, then an erase.
    fn collect(&mut self) {
        let b = self.pick();
        let moved = self.evacuate(b, false);
        self.c.gc_pages_read += moved;
        self.c.gc_pages_written += moved;
        self.work.reads += moved as u32;
        self.work.writes += moved as u32;
        self.erase(b);
        if let Some(t) = self.spec.static_wl {
            self.level(t);
        }
    }

    /// Copies closed block `b`'s valid pages, in page order, to the hot
    /// frontier (or the cold one, `cold`): found by its bits, their
    /// logical pages read from `rmap`.
    fn evacuate(&mut self, b: u32, cold: bool) -> u64 {
        // Out of the victim indexes first: copies must not land on it.
        self.blk[b as usize].state = State::Free;
        let mut moving = std::mem::take(&mut self.moving);
        moving.clear();
        let base = b as usize * self.ppb as usize;
        let at = b as usize * self.words as usize;
        for (w, &word) in self.bits[at..at + self.words as usize].iter().enumerate() {
            let mut x = word;
            while x != 0 {
                let lpn = self.rmap[base + w * 64 + x.trailing_zeros() as usize];
                x &= x - 1;
                // Each copy's map entry is a random access: ask for them
                // all before the copies need them, so their misses overlap.
                crate::index::prefetch(self.map.as_ptr().wrapping_add(lpn as usize));
                moving.push(lpn);
            }
        }
        debug_assert_eq!(moving.len() as u32, self.blk[b as usize].valid);
        self.blk[b as usize].valid = 0;
        if cold {
            for &lpn in &moving {
                self.program_cold(lpn);
            }
        } else {
            self.program_run(&moving);
        }
        let moved = moving.len() as u64;
        self.moving = moving;
        moved
    }

    fn erase(&mut self, b: u32) {
        let e = &mut self.erases[b as usize];
        if self.spec.static_wl.is_some() {
            let n = self
                .wear
                .get_mut(e)
                .expect("every block's count is in the histogram");
            *n -= 1;
            if *n == 0 {
                self.wear.remove(e);
            }
            *self.wear.entry(*e + 1).or_insert(0) += 1;
        }
        *e += 1;
        self.c.erases += 1;
        self.work.erases += 1;
        self.put_free(b);
    }

    /// Static wear levelling: when the erase counts spread by more than
    /// `threshold`, the least-erased closed block (cold data sits on it)
    /// is cleaned, so its block rejoins the free pool.
    fn level(&mut self, threshold: u32) {
        let (Some((&lo, _)), Some((&hi, _))) =
            (self.wear.first_key_value(), self.wear.last_key_value())
        else {
            return;
        };
        if hi - lo <= threshold {
            return;
        }
        let cold = (0..self.nblocks)
            .filter(|&b| self.blk[b as usize].state == State::Closed)
            .min_by_key(|&b| self.erases[b as usize]);
        let Some(b) = cold else { return };
        if self.erases[b as usize] + threshold >= hi {
            // The least-worn blocks are free already: nothing cold to move.
            return;
        }
        match self.spec.victim {
            Victim::Greedy => {
                let blk = self.blk[b as usize];
                self.unbucket(b, blk.valid, blk.pos);
            }
            // Stale FIFO entries are skipped when popped (state changes).
            Victim::Fifo | Victim::CostBenefit => {}
        }
        let moved = self.evacuate(b, true);
        self.c.wl_pages_moved += moved;
        self.work.reads += moved as u32;
        self.work.writes += moved as u32;
        self.erase(b);
    }

    /// Erases per block since `reset_counters`: mean, population
    /// standard deviation, max.
    pub fn erase_spread(&self) -> (f64, f64, u32) {
        let counted: Vec<u32> = self
            .erases
            .iter()
            .zip(&self.erases_at_reset)
            .map(|(e, r)| e - r)
            .collect();
        let n = counted.len() as f64;
        let mean = counted.iter().map(|&e| e as f64).sum::<f64>() / n;
        let var = counted
            .iter()
            .map(|&e| (e as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        (mean, var.sqrt(), counted.iter().copied().max().unwrap_or(0))
    }

    /// The figures a run reports, over `seconds` of counted time, for
    /// pages of `page_bytes` and a medium rated `endurance` cycles.
    pub fn result(&self, page_bytes: u64, endurance: Option<f64>, seconds: f64) -> FtlResult {
        let (mean, std, max) = self.erase_spread();
        let c = self.counted();
        let physical_bytes = self.nblocks as f64 * self.ppb as f64 * page_bytes as f64;
        let programmed_bytes = self.pages_programmed() as f64 * page_bytes as f64;
        let years = |x: Option<f64>| x.filter(|y| y.is_finite() && *y > 0.0);
        let per_year = super::wear::SECONDS_PER_YEAR;
        FtlResult {
            op: self.spec.op,
            victim: self.spec.victim,
            pages_per_block: self.ppb,
            page_bytes,
            physical_blocks: self.nblocks,
            physical_bytes: physical_bytes as u64,
            write_amplification: self.write_amplification(),
            host_pages_written: c.host_pages_written,
            gc_pages_read: c.gc_pages_read,
            gc_pages_written: c.gc_pages_written,
            wl_pages_moved: c.wl_pages_moved,
            erases: c.erases,
            trims: c.trims,
            overflow_pages: 0,
            erases_per_block_mean: mean,
            erases_per_block_std: std,
            erases_per_block_max: max,
            // The most-erased block wears out first, at its own rate.
            first_worn_years: years(endurance.map(|e| e * seconds / max as f64 / per_year)),
            // Every block erased alike: endurance x physical capacity over
            // the physical write rate.
            perfect_levelling_years: years(
                endurance.map(|e| e * physical_bytes / (programmed_bytes / seconds) / per_year),
            ),
        }
    }
}

#[cfg(test)]
#[path = "ftl_tests.rs"]
mod tests;
