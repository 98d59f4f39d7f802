//! FlashCache's wear-aware set-associative flash tier (Kgil and Mudge,
//! "FlashCache: a NAND flash memory file cache for low power web servers",
//! CASES 2006).
//!
//! The paper's cache holds pages and is managed in logical blocks: a set of
//! `ways` logical blocks (16), each `block` bytes (128 KiB) made of whole
//! erase blocks (4 of 32 KiB). Flash is programmed page by page and erased
//! a block at a time, so a logical block is filled in order and reclaimed
//! whole: the mapping here is
//! - an object (a page) belongs to set `fold_mul(key) % sets` (the paper's
//!   hash table of tags, partitioned into sets);
//! - each set has one open block that takes its insertions in order; an
//!   object that no longer fits opens another block of the set: a clean one
//!   (never written, or erased) if any, else a victim block is erased, all
//!   its objects evicted at once (one erase per erase block of it);
//! - the victim is the set's least recently used block (a block's recency is
//!   that of its latest inserted or hit object; blocks holding no object
//!   come first), unless its erase count exceeds the least-erased block's
//!   of the set by more than `hot_threshold`: then the least-erased block
//!   (a hot-block eviction);
//! - the wear status table counts erases per physical logical block; after
//!   an erase, a set whose blocks' total exceeds the coldest set's (on the
//!   least-erased blocks) by more than `swap_threshold`, and which has
//!   itself erased more blocks than that set, swaps physical blocks with it
//!   through a staging area (the cached objects stay in their sets: hits do
//!   not change), the erases and programs of the copy are counted.
//!
//! An object removed for another reason (invalidation, promotion) leaves a
//! hole until its block is erased, as in flash. An object larger than a
//! logical block takes a clean block by itself; when the tier is then over
//! its capacity, `evict` erases more blocks (the set's, then the next sets').
//! Evictions go to the tier one object at a time (`evict`), the block's
//! objects queued by `before_insert`, which `needs_room` reports.

use super::{BuildCtx, Policy, PolicyBuild};
use crate::device::wear::BlockWear;
use crate::request::Request;
use crate::units::{human_bytes, Size};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlashCacheParams {
    /// Logical blocks per set.
    pub ways: u32,
    /// A logical block, a whole number of erase blocks.
    pub block: Size,
    /// The unit the medium erases.
    pub erase_block: Size,
    /// The bytes an object stands for when capacities count objects.
    pub page: Size,
    /// Erases by which the LRU block must exceed the set's least-erased
    /// block for the least-erased one to be evicted instead.
    pub hot_threshold: u64,
    /// Erases by which a set's total must exceed the coldest set's for
    /// the two to swap blocks.
    pub swap_threshold: u64,
}

impl Default for FlashCacheParams {
    /// The paper's organisation (16 ways of 128 KiB, 4 erase blocks each;
    /// 4 KiB file pages). The paper gives no thresholds; these are
    /// tierlab's: a block erased 8 times more than its set's least-worn
    /// one, a set 256 erases (16 per block at 16 ways) above the coldest.
    fn default() -> Self {
        FlashCacheParams {
            ways: 16,
            block: Size::Absolute(128 << 10),
            erase_block: Size::Absolute(32 << 10),
            page: Size::Absolute(4 << 10),
            hot_threshold: 8,
            swap_threshold: 256,
        }
    }
}

fn bytes(field: &str, s: Size) -> Result<u64, String> {
    match s {
        Size::Absolute(0) => Err(format!("{field}: must be at least 1 byte")),
        Size::Absolute(n) => Ok(n),
        Size::Percent(_) => Err(format!(
            "{field}: must be a size in bytes such as \"128KiB\", not a share"
        )),
    }
}

/// The geometry `p` gives a tier of `ctx.capacity`: (sets, block capacity
/// in the tier's units). Err: (parameter, message).
pub(super) fn geometry(
    p: &FlashCacheParams,
    ctx: &BuildCtx,
) -> Result<(u64, u64), (&'static str, String)> {
    let block = bytes("block", p.block).map_err(|e| ("block", e))?;
    let page = bytes("page", p.page).map_err(|e| ("page", e))?;
    let (unit, what) = if ctx.unit_size {
        if !block.is_multiple_of(page) {
            return Err((
                "page",
                format!(
                    "a logical block of {} is not a whole number of {} pages; capacities count objects (pages), so `block` must be a multiple of `page`",
                    human_bytes(block),
                    human_bytes(page)
                ),
            ));
        }
        (block / page, "objects")
    } else {
        (block, "bytes")
    };
    let set = unit * p.ways as u64;
    if !ctx.capacity.is_multiple_of(set) {
        return Err((
            "ways",
            format!(
                "{} ways of {} logical blocks ({} {what} a set) do not divide the tier's capacity of {} {what}; give a capacity that is a multiple of {} {what}, or other ways or block",
                p.ways,
                human_bytes(block),
                set,
                ctx.capacity,
                set
            ),
        ));
    }
    Ok((ctx.capacity / set, unit))
}

/// The most logical blocks a FlashCache tier may have (16 TiB of the
/// default 128 KiB blocks): its tables take about 80 bytes a block from
/// the start (the block, its wear, its set's share), and its slots are
/// numbered in 32 bits.
pub const MAX_BLOCKS: u64 = 1 << 27;

/// `p` against the capacity of the tier it is built for: a geometry the
/// capacity divides, of at most [`MAX_BLOCKS`] blocks whose tables the
/// allocator gives (asked here, before `build`, which cannot fail).
pub(super) fn fit(p: &FlashCacheParams, ctx: &BuildCtx) -> Result<(), (&'static str, String)> {
    let (sets, _) = geometry(p, ctx)?;
    let blocks = sets.saturating_mul(p.ways as u64);
    if blocks > MAX_BLOCKS {
        return Err((
            "block",
            format!(
                "a capacity of {} in blocks of {} makes {blocks} blocks; at most {MAX_BLOCKS} (a larger block, or a smaller capacity)",
                ctx.capacity,
                human_bytes(p.block.resolve(0)),
            ),
        ));
    }
    let per_set = 4 + 4 + 8 + 8;
    let bytes = blocks * (std::mem::size_of::<Block>() as u64 + 8) + sets * per_set;
    crate::spec::probe_memory("", &format!("the tables of {blocks} blocks"), bytes)
        .map_err(|e| ("block", e.msg))
}

const NONE: u32 = u32::MAX;

/// One logical block: where its data is (the sets' view; its wear is its
/// physical block's).
#[derive(Clone, Default)]
struct Block {
    /// Charge units programmed since the last erase (holes included).
    written: u64,
    /// The tick of its latest insertion or hit.
    last: u64,
    /// Objects it holds.
    live: u32,
    /// Its objects' slots in insertion order, NONE where one was removed
    /// (eviction order stays oldest first).
    slots: Vec<u32>,
}

pub struct FlashCache {
    sets: u64,
    ways: u32,
    /// A logical block's capacity in charge units.
    block_cap: u64,
    /// Bytes per charge unit (1, or `page` with unit sizes).
    unit_bytes: u64,
    hot: u64,
    swap: u64,
    unit: bool,
    erase_per_block: u64,
    /// Logical blocks, set by set.
    blocks: Vec<Block>,
    /// Per set: the way taking insertions, or NONE.
    open: Vec<u32>,
    /// Per set: its physical group (blocks `g * ways ..`).
    group: Vec<u32>,
    /// Per physical block: erases (the wear status table).
    wear: Vec<u64>,
    /// Per physical group: its blocks' erases.
    group_total: Vec<u64>,
    /// A lower bound of the least group total (exact after each scan);
    /// totals only grow, so a stale one is still a bound.
    min_total: u64,
    /// The set on the least-erased group at the last scan, while no swap
    /// and no erase of that group has happened since (then it still is).
    coldest: Option<u64>,
    /// Per set: blocks it erased to make room (its own hotness, which
    /// moves with it, unlike its physical blocks' wear).
    set_erases: Vec<u64>,
    /// Per slot: its block (set * ways + way) and place in the block's list.
    slot_block: Vec<u32>,
    slot_pos: Vec<u32>,
    tick: u64,
    /// The set of the insertion in progress.
    target: u64,
    /// Slots of erased blocks still to be handed to the tier, last first.
    pending: Vec<u32>,
    pub(crate) stats: BlockWear,
}

impl PolicyBuild for FlashCache {
    type Params = FlashCacheParams;
    fn build(p: &FlashCacheParams, ctx: &BuildCtx) -> Self {
        // `fit` has refused a capacity these parameters do not divide.
        let (sets, block_cap) = geometry(p, ctx).expect("checked by PolicySpec::fit");
        let ways = p.ways;
        let n = (sets * ways as u64) as usize;
        let block_bytes = p.block.resolve(0);
        let erase = p.erase_block.resolve(0);
        FlashCache {
            sets,
            ways,
            block_cap,
            unit_bytes: if ctx.unit_size { p.page.resolve(0) } else { 1 },
            hot: p.hot_threshold,
            swap: p.swap_threshold,
            unit: ctx.unit_size,
            erase_per_block: block_bytes / erase,
            blocks: vec![Block::default(); n],
            open: vec![NONE; sets as usize],
            group: (0..sets as u32).collect(),
            wear: vec![0; n],
            group_total: vec![0; sets as usize],
            min_total: 0,
            coldest: None,
            set_erases: vec![0; sets as usize],
            slot_block: Vec::new(),
            slot_pos: Vec::new(),
            tick: 0,
            target: 0,
            pending: Vec::new(),
            stats: BlockWear {
                erase_blocks_per_block: block_bytes / erase,
                capacity_bytes: n as u64 * block_bytes,
                ..Default::default()
            },
        }
    }
    fn check(p: &FlashCacheParams) -> Result<(), String> {
        if p.ways == 0 {
            return Err("ways: must be at least 1".into());
        }
        let block = bytes("block", p.block)?;
        let erase = bytes("erase_block", p.erase_block)?;
        bytes("page", p.page)?;
        if !block.is_multiple_of(erase) {
            return Err(format!(
                "block: a logical block of {} is not a whole number of {} erase blocks (erase_block)",
                human_bytes(block),
                human_bytes(erase)
            ));
        }
        Ok(())
    }
}

impl FlashCache {
    /// The set an object belongs to: its key's hash modulo the sets.
    #[inline(always)]
    pub fn set_of(key: u64, sets: u64) -> u64 {
        crate::hash::fold_mul(key) % sets
    }

    /// What an object takes of its block: its charge, and an empty object
    /// one byte (a block holding objects is never clean).
    #[inline(always)]
    fn charge(&self, size: u32) -> u64 {
        if self.unit {
            1
        } else {
            (size as u64).max(1)
        }
    }

    #[inline(always)]
    fn phys(&self, set: u64, way: u32) -> usize {
        self.group[set as usize] as usize * self.ways as usize + way as usize
    }

    /// The block to evict among the ways of `set` that `ok` allows (one at
    /// least): the least recent (empty blocks first), or the least erased
    /// when the least recent's erases exceed theirs by more than the
    /// threshold.
    fn choose(&mut self, set: u64, ok: impl Fn(&Block, u32) -> bool) -> u32 {
        let base = (set * self.ways as u64) as usize;
        let rank = |b: &Block| (b.live > 0, b.last);
        let mut lru: Option<u32> = None;
        let mut least: Option<u32> = None;
        for w in 0..self.ways {
            let b = &self.blocks[base + w as usize];
            if !ok(b, w) {
                continue;
            }
            if lru.is_none_or(|l| rank(b) < rank(&self.blocks[base + l as usize])) {
                lru = Some(w);
            }
            let wr = self.wear[self.phys(set, w)];
            if least.is_none_or(|l| {
                let wl = self.wear[self.phys(set, l)];
                (wr, rank(b)) < (wl, rank(&self.blocks[base + l as usize]))
            }) {
                least = Some(w);
            }
        }
        let (lru, least) = (lru.expect("a candidate block"), least.unwrap());
        if self.wear[self.phys(set, lru)] > self.wear[self.phys(set, least)] + self.hot {
            self.stats.hot_block_evictions += 1;
            least
        } else {
            lru
        }
    }

    /// Erases block `way` of `set`: its objects queued for eviction, its
    /// erases counted; then the set-level check.
    fn erase(&mut self, set: u64, way: u32) {
        let i = (set * self.ways as u64 + way as u64) as usize;
        let b = &mut self.blocks[i];
        debug_assert!(b.written > 0, "only a programmed block is erased");
        b.written = 0;
        b.live = 0;
        // Oldest first: `pending` is popped from its end.
        self.pending
            .extend(b.slots.drain(..).rev().filter(|&s| s != NONE));
        let p = self.phys(set, way);
        self.wear[p] += 1;
        self.group_total[self.group[set as usize] as usize] += 1;
        self.stats.erases += self.erase_per_block;
        self.stats.block_erases += 1;
        self.set_erases[set as usize] += 1;
        self.check_swap(set);
    }

    /// Swaps `set` with the coldest set (on the least-erased physical
    /// blocks, the first such set) when its blocks' erases exceed that
    /// set's by more than the threshold and it has itself erased more
    /// blocks than that set: the hot set moves onto fresh blocks, and the
    /// set taking its worn ones, which erases less, does not swap them
    /// straight back.
    fn check_swap(&mut self, set: u64) {
        let total = self.group_total[self.group[set as usize] as usize];
        if total <= self.min_total.saturating_add(self.swap) {
            return;
        }
        let cold = match self.coldest {
            Some(c) if self.group_total[self.group[c as usize] as usize] == self.min_total => c,
            _ => {
                let (mut cold, mut min) = (0, u64::MAX);
                for s in 0..self.sets {
                    let t = self.group_total[self.group[s as usize] as usize];
                    if t < min {
                        (cold, min) = (s, t);
                    }
                }
                self.min_total = min;
                self.coldest = Some(cold);
                cold
            }
        };
        if total > self.min_total + self.swap
            && self.set_erases[set as usize] > self.set_erases[cold as usize]
        {
            self.swap_sets(set, cold);
            self.coldest = None;
        }
    }

    /// The hot set's data goes to the cold set's physical blocks and the
    /// cold set's (through the staging area) to the hot set's: every
    /// physical block that held data is erased before it is programmed
    /// again, and the staging area after the copy.
    fn swap_sets(&mut self, hot: u64, cold: u64) {
        let (gh, gc) = (self.group[hot as usize], self.group[cold as usize]);
        let w = self.ways as usize;
        let mut programmed = 0;
        for way in 0..w {
            let hw = self.blocks[hot as usize * w + way].written;
            let cw = self.blocks[cold as usize * w + way].written;
            if cw > 0 {
                // To the staging area, its physical block erased, and back
                // into the hot set's old block; the staging area erased.
                self.wear[gc as usize * w + way] += 1;
                self.group_total[gc as usize] += 1;
                self.stats.erases += 2 * self.erase_per_block;
                programmed += 2 * cw;
            }
            if hw > 0 {
                self.wear[gh as usize * w + way] += 1;
                self.group_total[gh as usize] += 1;
                self.stats.erases += self.erase_per_block;
                programmed += hw;
            }
        }
        self.group.swap(hot as usize, cold as usize);
        self.stats.swap_bytes_programmed += programmed * self.unit_bytes;
        self.stats.hot_set_swaps += 1;
    }

    /// The wear the policy has counted, and its status table.
    pub fn wear(&self) -> BlockWear {
        BlockWear {
            table: self.wear.clone(),
            ..self.stats.clone()
        }
    }

    /// Makes room in the target set's open block for `charge`.
    fn open_block(&mut self, set: u64, charge: u64) {
        let o = self.open[set as usize];
        if o != NONE
            && self.blocks[(set * self.ways as u64 + o as u64) as usize].written + charge
                <= self.block_cap
        {
            return;
        }
        let base = (set * self.ways as u64) as usize;
        let clean = (0..self.ways).find(|&w| self.blocks[base + w as usize].written == 0);
        let way = match clean {
            Some(w) => w,
            None => {
                let w = self.choose(set, |_, _| true);
                self.erase(set, w);
                w
            }
        };
        self.open[set as usize] = way;
    }

    /// The tier is over its capacity with nothing queued (objects larger
    /// than a block): erases a block holding objects, of the target set
    /// but not its open block, else of the next sets.
    #[cold]
    fn reclaim(&mut self) {
        for i in 0..self.sets {
            let set = (self.target + i) % self.sets;
            let skip = if i == 0 {
                self.open[set as usize]
            } else {
                NONE
            };
            let base = (set * self.ways as u64) as usize;
            let any = (0..self.ways).any(|w| w != skip && self.blocks[base + w as usize].live > 0);
            if any {
                let w = self.choose(set, |b, w| w != skip && b.live > 0);
                self.erase(set, w);
                return;
            }
        }
        unreachable!("evict is called only while the tier holds an object");
    }
}

impl Policy for FlashCache {
    #[inline]
    fn before_insert(&mut self, req: &Request, _: Option<u32>) {
        let set = Self::set_of(req.key, self.sets);
        self.target = set;
        self.open_block(set, self.charge(req.size));
    }

    #[inline(always)]
    fn needs_room(&self) -> bool {
        !self.pending.is_empty()
    }

    fn on_insert(&mut self, slot: u32, req: &Request) {
        let set = Self::set_of(req.key, self.sets);
        debug_assert_eq!(set, self.target, "before_insert named the set");
        let way = self.open[set as usize];
        let i = (set * self.ways as u64 + way as u64) as usize;
        self.tick += 1;
        let c = self.charge(req.size);
        let b = &mut self.blocks[i];
        b.written += c;
        b.last = self.tick;
        let s = slot as usize;
        if s >= self.slot_block.len() {
            let n = (s + 1).max(self.slot_block.len() * 2).max(64);
            self.slot_block.resize(n, NONE);
            self.slot_pos.resize(n, 0);
        }
        self.slot_block[s] = i as u32;
        self.slot_pos[s] = b.slots.len() as u32;
        b.slots.push(slot);
        b.live += 1;
    }

    #[inline]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        self.tick += 1;
        self.blocks[self.slot_block[slot as usize] as usize].last = self.tick;
    }

    fn on_remove(&mut self, slot: u32) {
        let i = self.slot_block[slot as usize] as usize;
        let pos = self.slot_pos[slot as usize] as usize;
        let b = &mut self.blocks[i];
        b.slots[pos] = NONE;
        b.live -= 1;
        self.slot_block[slot as usize] = NONE;
    }

    fn evict(&mut self) -> u32 {
        if self.pending.is_empty() {
            self.reclaim();
        }
        let slot = self.pending.pop().expect("an erased block held objects");
        self.slot_block[slot as usize] = NONE;
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(capacity: u64) -> BuildCtx {
        BuildCtx {
            capacity,
            seed: 1,
            unit_size: true,
        }
    }

    fn params(ways: u32, block_pages: u64, hot: u64, swap: u64) -> FlashCacheParams {
        FlashCacheParams {
            ways,
            block: Size::Absolute(block_pages * 4096),
            erase_block: Size::Absolute(4096),
            page: Size::Absolute(4096),
            hot_threshold: hot,
            swap_threshold: swap,
        }
    }

    #[test]
    fn geometry_and_its_errors() {
        let p = params(2, 4, 8, 256);
        assert_eq!(geometry(&p, &ctx(24)), Ok((3, 4)));
        let (k, e) = geometry(&p, &ctx(20)).unwrap_err();
        assert_eq!(k, "ways");
        assert!(e.contains("multiple of 8 objects"), "{e}");
        let mut q = p.clone();
        q.page = Size::Absolute(3000);
        assert_eq!(geometry(&q, &ctx(24)).unwrap_err().0, "page");
        let mut q = p.clone();
        q.erase_block = Size::Absolute(3 * 4096);
        assert!(FlashCache::check(&q).unwrap_err().starts_with("block:"));
        q.ways = 0;
        assert!(FlashCache::check(&q).unwrap_err().starts_with("ways:"));
    }

    /// Inserts `key` as the tier would; returns the slots evicted.
    fn put(p: &mut FlashCache, slot: u32, key: u64) -> Vec<u32> {
        let r = Request::read(key, 4096);
        p.before_insert(&r, None);
        let mut out = vec![];
        while p.needs_room() {
            out.push(p.evict());
        }
        p.on_insert(slot, &r);
        out
    }

    /// One set: blocks fill in order, and the least recent block is erased
    /// whole, its objects evicted oldest first.
    #[test]
    fn evicts_whole_lru_blocks() {
        let mut p = FlashCache::build(&params(2, 2, 100, 1000), &ctx(4));
        for s in 0..4 {
            assert!(put(&mut p, s, s as u64).is_empty());
        }
        p.on_hit(0, &Request::read(0, 4096));
        assert_eq!(put(&mut p, 4, 9), vec![2, 3]);
        assert_eq!(p.wear, vec![0, 1]);
        assert!(put(&mut p, 5, 10).is_empty());
        assert_eq!(put(&mut p, 6, 11), vec![0, 1]);
        assert_eq!(p.wear, vec![1, 1]);
        // Two logical blocks erased, of two erase blocks each.
        assert_eq!((p.stats.erases, p.stats.block_erases), (4, 2));
    }

    #[test]
    fn hot_block_rule_spares_the_worn_lru_block() {
        let mut p = FlashCache::build(&params(2, 1, 1, 1000), &ctx(2));
        put(&mut p, 0, 1);
        put(&mut p, 1, 2);
        // Slot 1 (way 1) is hit before each insertion: way 0 is the LRU
        // block every time.
        let hit = |p: &mut FlashCache| p.on_hit(1, &Request::read(2, 4096));
        hit(&mut p);
        assert_eq!(put(&mut p, 2, 3), vec![0]);
        hit(&mut p);
        assert_eq!(put(&mut p, 3, 4), vec![2]);
        assert_eq!(p.wear, vec![2, 0]);
        hit(&mut p);
        // 2 erases > 0 + 1: the least-erased way 1 goes instead.
        assert_eq!(put(&mut p, 4, 5), vec![1]);
        assert_eq!(p.wear, vec![2, 1]);
        assert_eq!(p.stats.hot_block_evictions, 1);
    }

    #[test]
    fn a_hot_set_swaps_with_the_coldest() {
        // Two sets of one block of one page; a threshold of 2 erases.
        let mut p = FlashCache::build(&params(1, 1, 0, 2), &ctx(2));
        let sets = p.sets;
        let of = |set| (0..1000u64).filter(move |&k| FlashCache::set_of(k, sets) == set);
        put(&mut p, 0, of(1).next().unwrap());
        for (i, k) in of(0).take(6).enumerate() {
            put(&mut p, 1 + i as u32, k);
        }
        // Set 0 erased its block at each insertion from its 2nd; the
        // third erase made 3 > 0 + 2: a swap. Set 0's block had just been
        // erased (nothing to copy); set 1's page went through the staging
        // area (two programs; its block and the staging area erased). Set
        // 0's two later erases fell on its new physical block (group 1).
        assert_eq!(p.stats.hot_set_swaps, 1);
        assert_eq!(p.group, vec![1, 0]);
        assert_eq!(p.wear, vec![3, 3]);
        assert_eq!(p.stats.block_erases, 5);
        assert_eq!(p.stats.erases, 7);
        assert_eq!(p.stats.swap_bytes_programmed, 2 * 4096);
    }
}
