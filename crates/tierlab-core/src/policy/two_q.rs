//! 2Q (Johnson & Shasha, "2Q: a low overhead high performance buffer
//! management replacement algorithm", VLDB 1994), the full version: A1in, a
//! FIFO of first-time entries (`kin`, 25% of the capacity); A1out, a ghost
//! FIFO of keys evicted from A1in (`kout`, 50%); Am, an LRU of the rest.
//!
//! A miss whose key is in A1out enters Am; any other miss enters A1in. A hit
//! in A1in changes nothing, a hit in Am moves the entry to Am's head. The
//! victim is A1in's oldest entry while A1in holds more than its share (its
//! key then enters A1out), else Am's least recent entry. These are the
//! paper's rules with its recommended sizes, and those of libCacheSim's
//! `TwoQ` (Ain-size-ratio 0.25, Aout-size-ratio 0.5), so the miss counts are
//! equal; libCacheSim stores nothing when A1in's share is under one object
//! (caches of fewer than 4 objects), while here such a cache still works.

use super::lists::{grow, Ghosts, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TwoQParams {
    /// A1in's share of the capacity, in (0, 1).
    pub kin: f64,
    /// A1out's size (ghost keys) as a share of the capacity, in [0, 10].
    pub kout: f64,
}

impl Default for TwoQParams {
    fn default() -> Self {
        TwoQParams {
            kin: 0.25,
            kout: 0.5,
        }
    }
}

const AIN: usize = 0;
const AM: usize = 1;

pub struct TwoQ {
    q: Lists,
    charge: Vec<u32>,
    keys: Vec<u64>,
    queue: Vec<u8>,
    weight: [u64; 2],
    in_cap: u64,
    out_cap: u64,
    out: Ghosts,
    ctx: BuildCtx,
    ghost_hit: bool,
}

impl PolicyBuild for TwoQ {
    type Params = TwoQParams;
    fn build(p: &TwoQParams, ctx: &BuildCtx) -> Self {
        TwoQ {
            q: Lists::new(2),
            charge: Vec::new(),
            keys: Vec::new(),
            queue: Vec::new(),
            weight: [0; 2],
            in_cap: (ctx.capacity as f64 * p.kin) as u64,
            out_cap: (ctx.capacity as f64 * p.kout) as u64,
            out: Ghosts::new(1),
            ctx: *ctx,
            ghost_hit: false,
        }
    }
    fn check(p: &TwoQParams) -> Result<(), String> {
        if !(p.kin > 0.0 && p.kin < 1.0) {
            return Err(format!("kin: {} is out of range; allowed (0, 1)", p.kin));
        }
        if !(0.0..=10.0).contains(&p.kout) {
            return Err(format!("kout: {} is out of range; allowed [0, 10]", p.kout));
        }
        Ok(())
    }
}

impl TwoQ {
    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let q = self.queue[slot as usize] as usize;
        self.weight[q] -= self.charge[slot as usize] as u64;
        self.q.unlink(q, slot);
    }

    fn remember(&mut self, slot: u32) {
        let (key, c) = (self.keys[slot as usize], self.charge[slot as usize]);
        if c as u64 > self.out_cap {
            return;
        }
        while self.out.weight[0] + c as u64 > self.out_cap {
            self.out.pop_back(0);
        }
        self.out.push_front(0, key, c);
    }
}

impl Policy for TwoQ {
    #[inline(always)]
    fn before_insert(&mut self, req: &Request, _: Option<u32>) {
        self.ghost_hit = self.out.remove(req.key).is_some();
    }
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, req: &Request) {
        grow(&mut self.charge, slot, 0);
        grow(&mut self.keys, slot, 0);
        grow(&mut self.queue, slot, 0);
        let c = self.ctx.charge(req.size);
        self.charge[slot as usize] = c;
        self.keys[slot as usize] = req.key;
        let q = if std::mem::take(&mut self.ghost_hit) {
            AM
        } else {
            AIN
        };
        self.queue[slot as usize] = q as u8;
        self.weight[q] += c as u64;
        self.q.push_front(q, slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        if self.queue[slot as usize] as usize == AM {
            self.q.move_to_front(AM, slot);
        }
    }
    /// An Am entry is at Am's head after one hit, an A1in hit changes
    /// nothing: the rest change nothing.
    #[inline(always)]
    fn on_hits(&mut self, slot: u32, req: &Request, n: u64) {
        if n > 0 {
            self.on_hit(slot, req);
        }
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.unlink(slot);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        if self.weight[AIN] > self.in_cap || self.q.len(AM) == 0 {
            let t = self
                .q
                .back(AIN)
                .expect("evict is called only on a non-empty tier");
            self.unlink(t);
            self.remember(t);
            t
        } else {
            let t = self.q.back(AM).unwrap();
            self.unlink(t);
            t
        }
    }
}
