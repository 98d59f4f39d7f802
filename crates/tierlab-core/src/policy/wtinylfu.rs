//! W-TinyLFU (Einziger, Friedman & Manes, "TinyLFU: A Highly Efficient Cache
//! Admission Policy", ACM TOS 2017), in Caffeine's form: a window LRU
//! (`window_ratio` of the capacity, 1% by default) in front of a segmented
//! LRU main cache (probation, and protected with `protected_ratio` of main,
//! 80%), and a count-min sketch of recent request frequencies.
//!
//! Misses enter the window; its overflow enters probation while the cache
//! has room. When an eviction is due and the window is full,
//! the window's LRU entry (the candidate) competes with main's victim
//! (probation's LRU, else protected's): the candidate moves to probation if
//! the sketch estimates it strictly more frequent, and the other one leaves.
//! A probation hit moves the entry to protected, whose overflow goes back to
//! probation's head. The sketch has 4 rows of 4-bit counters, as wide as the
//! next power of two of the capacity (objects; bytes are capped at 2^24
//! counters per row), and halves every counter after 10 x width increments
//! (the paper's reset), which keeps the per-request cost amortised O(1).
//! Every request is counted. No doorkeeper.
//!
//! libCacheSim's `WTinyLFU` has the same structure but its own sketch hashes
//! and sizes, so single runs differ slightly (tests/test_vs_libcachesim.py).

use super::lists::{grow, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::hash::fold_mul;
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct WTinyLfuParams {
    /// The window's share of the capacity, in (0, 1).
    pub window_ratio: f64,
    /// The protected segment's share of the main cache, in [0, 1).
    pub protected_ratio: f64,
}

impl Default for WTinyLfuParams {
    fn default() -> Self {
        // Caffeine's and libCacheSim's 1% window, Caffeine's 80% protected.
        WTinyLfuParams {
            window_ratio: 0.01,
            protected_ratio: 0.8,
        }
    }
}

/// A count-min sketch of 4-bit counters (stored one per byte for speed),
/// halved after `10 x width` increments. Public so the tests' naive model of
/// W-TinyLFU can use the same estimates.
#[derive(Clone, Debug)]
pub struct FrequencySketch {
    rows: Vec<u8>,
    mask: usize,
    width: usize,
    added: u64,
    sample: u64,
}

const ROW_SEEDS: [u64; 4] = [
    0x9E37_79B9_7F4A_7C15,
    0xC2B2_AE3D_27D4_EB4F,
    0x1656_67B1_9E37_79F9,
    0x27D4_EB2F_1656_67C5,
];

impl FrequencySketch {
    pub fn new(capacity: u64) -> Self {
        let width = (capacity.clamp(16, 1 << 24) as usize).next_power_of_two();
        FrequencySketch {
            rows: vec![0; 4 * width],
            mask: width - 1,
            width,
            added: 0,
            sample: 10 * width as u64,
        }
    }

    #[inline(always)]
    fn index(&self, key: u64, row: usize) -> usize {
        row * self.width + (fold_mul(key ^ ROW_SEEDS[row]) as usize & self.mask)
    }

    /// Counts one request of `key`.
    #[inline(always)]
    pub fn add(&mut self, key: u64) {
        for r in 0..4 {
            let i = self.index(key, r);
            if self.rows[i] < 15 {
                self.rows[i] += 1;
            }
        }
        self.added += 1;
        if self.added >= self.sample {
            for c in &mut self.rows {
                *c >>= 1;
            }
            self.added /= 2;
        }
    }

    /// The estimated recent request count of `key`.
    #[inline(always)]
    pub fn estimate(&self, key: u64) -> u8 {
        (0..4).map(|r| self.rows[self.index(key, r)]).min().unwrap()
    }
}

const WINDOW: usize = 0;
const PROBATION: usize = 1;
const PROTECTED: usize = 2;

pub struct WTinyLfu {
    q: Lists,
    list: Vec<u8>,
    charge: Vec<u32>,
    keys: Vec<u64>,
    weight: [u64; 3],
    window_cap: u64,
    protected_cap: u64,
    sketch: FrequencySketch,
    ctx: BuildCtx,
}

impl PolicyBuild for WTinyLfu {
    type Params = WTinyLfuParams;
    fn build(p: &WTinyLfuParams, ctx: &BuildCtx) -> Self {
        let window_cap = ((ctx.capacity as f64 * p.window_ratio) as u64).max(1);
        let main = ctx.capacity.saturating_sub(window_cap);
        WTinyLfu {
            q: Lists::new(3),
            list: Vec::new(),
            charge: Vec::new(),
            keys: Vec::new(),
            weight: [0; 3],
            window_cap,
            protected_cap: (main as f64 * p.protected_ratio) as u64,
            sketch: FrequencySketch::new(ctx.capacity),
            ctx: *ctx,
        }
    }
    fn check(p: &WTinyLfuParams) -> Result<(), String> {
        if !(p.window_ratio > 0.0 && p.window_ratio < 1.0) {
            return Err(format!(
                "window_ratio: {} is out of range; allowed (0, 1)",
                p.window_ratio
            ));
        }
        if !(0.0..1.0).contains(&p.protected_ratio) {
            return Err(format!(
                "protected_ratio: {} is out of range; allowed [0, 1)",
                p.protected_ratio
            ));
        }
        Ok(())
    }
}

impl WTinyLfu {
    #[inline(always)]
    fn push(&mut self, l: usize, slot: u32) {
        self.list[slot as usize] = l as u8;
        self.weight[l] += self.charge[slot as usize] as u64;
        self.q.push_front(l, slot);
    }

    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let l = self.list[slot as usize] as usize;
        self.weight[l] -= self.charge[slot as usize] as u64;
        self.q.unlink(l, slot);
    }

    fn main_victim(&self) -> Option<u32> {
        self.q.back(PROBATION).or_else(|| self.q.back(PROTECTED))
    }
}

impl Policy for WTinyLfu {
    #[inline(always)]
    fn before_insert(&mut self, req: &Request, _: Option<u32>) {
        self.sketch.add(req.key);
    }
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, req: &Request) {
        grow(&mut self.list, slot, 0);
        grow(&mut self.charge, slot, 0);
        grow(&mut self.keys, slot, 0);
        self.charge[slot as usize] = self.ctx.charge(req.size);
        self.keys[slot as usize] = req.key;
        self.push(WINDOW, slot);
        // While the cache has room (this insertion needed no eviction, or
        // the evictions made room), window overflow enters probation
        // without competing; once it is full, `evict` holds the contest.
        while self.weight[WINDOW] > self.window_cap {
            let t = self.q.back(WINDOW).unwrap();
            self.unlink(t);
            self.push(PROBATION, t);
        }
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, req: &Request) {
        self.sketch.add(req.key);
        match self.list[slot as usize] as usize {
            PROBATION => {
                self.unlink(slot);
                self.push(PROTECTED, slot);
                while self.weight[PROTECTED] > self.protected_cap {
                    let t = self.q.back(PROTECTED).unwrap();
                    self.unlink(t);
                    self.push(PROBATION, t);
                }
            }
            l => self.q.move_to_front(l, slot),
        }
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.unlink(slot);
    }
    fn evict(&mut self) -> u32 {
        let victim = self.main_victim();
        if self.weight[WINDOW] >= self.window_cap {
            let cand = self.q.back(WINDOW).expect("a full window holds an entry");
            self.unlink(cand);
            let Some(v) = victim else { return cand };
            let (fc, fv) = (
                self.sketch.estimate(self.keys[cand as usize]),
                self.sketch.estimate(self.keys[v as usize]),
            );
            if fc > fv {
                self.push(PROBATION, cand);
                self.unlink(v);
                v
            } else {
                cand
            }
        } else {
            let v = victim
                .or_else(|| self.q.back(WINDOW))
                .expect("evict is called only on a non-empty tier");
            self.unlink(v);
            v
        }
    }
}
