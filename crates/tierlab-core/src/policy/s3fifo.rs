//! S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction",
//! SOSP 2023): a small FIFO (10% of the capacity), a main FIFO with a 2-bit
//! CLOCK counter, and a ghost FIFO of keys recently evicted from the small
//! queue (as large as 90% of the capacity).
//!
//! A miss whose key is in the ghost enters main, any other enters small. A
//! hit raises the entry's counter (saturating at 3). Eviction takes from
//! main when main is over its share or small is empty, else from small:
//! small's oldest entry moves to main if it was hit at least
//! `move_to_main_threshold` times, else it is evicted and its key enters the
//! ghost; main's oldest entry with a non-zero counter goes back to main's
//! head with its counter decreased, one with zero is evicted.
//!
//! This follows libCacheSim's `S3FIFO` (S3FIFO.c, the current version) also
//! in two details of its own: until the first eviction, a miss that finds
//! the small queue full enters main, and an entry moving from small to main
//! starts there with counter 0. Queue sizes are charges (objects with
//! `unit_size`, else bytes). One difference: libCacheSim refuses objects
//! not smaller than the small queue (so a cache of fewer than 10 objects
//! stores nothing at all); here every object that fits the tier is stored.

use super::lists::{grow, Ghosts, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct S3FifoParams {
    /// The small queue's share of the capacity, in (0, 1).
    pub small_size_ratio: f64,
    /// The ghost queue's size as a share of the capacity, in [0, 10].
    pub ghost_size_ratio: f64,
    /// Hits in the small queue that earn a move to main, 1..=3.
    pub move_to_main_threshold: u8,
}

impl Default for S3FifoParams {
    fn default() -> Self {
        // The paper's and libCacheSim's defaults.
        S3FifoParams {
            small_size_ratio: 0.1,
            ghost_size_ratio: 0.9,
            move_to_main_threshold: 2,
        }
    }
}

const SMALL: usize = 0;
const MAIN: usize = 1;

pub struct S3Fifo {
    q: Lists,
    freq: Vec<u8>,
    charge: Vec<u32>,
    keys: Vec<u64>,
    queue: Vec<u8>,
    weight: [u64; 2],
    small_cap: u64,
    main_cap: u64,
    ghost: Ghosts,
    ghost_cap: u64,
    threshold: u8,
    ctx: BuildCtx,
    has_evicted: bool,
    ghost_hit: bool,
}

impl PolicyBuild for S3Fifo {
    type Params = S3FifoParams;
    fn build(p: &S3FifoParams, ctx: &BuildCtx) -> Self {
        // Truncated as libCacheSim does (integer sizes from a product).
        let small_cap = (ctx.capacity as f64 * p.small_size_ratio) as u64;
        S3Fifo {
            q: Lists::new(2),
            freq: Vec::new(),
            charge: Vec::new(),
            keys: Vec::new(),
            queue: Vec::new(),
            weight: [0; 2],
            small_cap,
            main_cap: ctx.capacity - small_cap,
            ghost: Ghosts::new(1),
            ghost_cap: (ctx.capacity as f64 * p.ghost_size_ratio) as u64,
            threshold: p.move_to_main_threshold,
            ctx: *ctx,
            has_evicted: false,
            ghost_hit: false,
        }
    }
    fn check(p: &S3FifoParams) -> Result<(), String> {
        if !(p.small_size_ratio > 0.0 && p.small_size_ratio < 1.0) {
            return Err(format!(
                "small_size_ratio: {} is out of range; allowed (0, 1)",
                p.small_size_ratio
            ));
        }
        if !(0.0..=10.0).contains(&p.ghost_size_ratio) {
            return Err(format!(
                "ghost_size_ratio: {} is out of range; allowed [0, 10]",
                p.ghost_size_ratio
            ));
        }
        if !(1..=3).contains(&p.move_to_main_threshold) {
            return Err(format!(
                "move_to_main_threshold: {} is out of range; allowed 1..=3",
                p.move_to_main_threshold
            ));
        }
        Ok(())
    }
}

impl S3Fifo {
    #[inline(always)]
    fn push(&mut self, q: usize, slot: u32) {
        self.queue[slot as usize] = q as u8;
        self.weight[q] += self.charge[slot as usize] as u64;
        self.q.push_front(q, slot);
    }

    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let q = self.queue[slot as usize] as usize;
        self.weight[q] -= self.charge[slot as usize] as u64;
        self.q.unlink(q, slot);
    }

    fn remember(&mut self, slot: u32) {
        if self.ghost_cap == 0 {
            return;
        }
        let (key, c) = (self.keys[slot as usize], self.charge[slot as usize]);
        if c as u64 > self.ghost_cap {
            return;
        }
        while self.ghost.weight[0] + c as u64 > self.ghost_cap {
            self.ghost.pop_back(0);
        }
        self.ghost.push_front(0, key, c);
    }

    /// Evicts from main, or returns None when main is empty.
    fn evict_main(&mut self) -> Option<u32> {
        loop {
            let t = self.q.back(MAIN)?;
            let f = self.freq[t as usize];
            self.unlink(t);
            if f == 0 {
                return Some(t);
            }
            self.freq[t as usize] = f.min(3) - 1;
            self.push(MAIN, t);
        }
    }
}

impl Policy for S3Fifo {
    #[inline(always)]
    fn before_insert(&mut self, req: &Request, _: Option<u32>) {
        self.ghost_hit = self.ghost.remove(req.key).is_some();
    }
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, req: &Request) {
        grow(&mut self.freq, slot, 0);
        grow(&mut self.charge, slot, 0);
        grow(&mut self.keys, slot, 0);
        grow(&mut self.queue, slot, 0);
        self.freq[slot as usize] = 0;
        self.charge[slot as usize] = self.ctx.charge(req.size);
        self.keys[slot as usize] = req.key;
        let q = if std::mem::take(&mut self.ghost_hit)
            || (!self.has_evicted && self.weight[SMALL] >= self.small_cap)
        {
            MAIN
        } else {
            SMALL
        };
        self.push(q, slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        let f = &mut self.freq[slot as usize];
        *f = (*f + 1).min(3);
    }
    /// The counter rises by one per hit up to 3.
    #[inline(always)]
    fn on_hits(&mut self, slot: u32, _: &Request, n: u64) {
        let f = &mut self.freq[slot as usize];
        *f = (*f as u64).saturating_add(n).min(3) as u8;
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.unlink(slot);
    }
    fn evict(&mut self) -> u32 {
        self.has_evicted = true;
        if self.weight[MAIN] <= self.main_cap && self.q.len(SMALL) > 0 {
            while let Some(t) = self.q.back(SMALL) {
                self.unlink(t);
                if self.freq[t as usize] >= self.threshold {
                    self.freq[t as usize] = 0;
                    self.push(MAIN, t);
                } else {
                    self.remember(t);
                    return t;
                }
            }
        }
        self.evict_main()
            .expect("evict is called only on a non-empty tier")
    }
}
