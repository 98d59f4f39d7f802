//! LRU-K (O'Neil, O'Neil & Weikum, "The LRU-K page replacement algorithm
//! for database disk buffering", SIGMOD 1993): evict the entry whose K-th
//! most recent request is oldest (largest backward K-distance). Entries
//! requested fewer than K times have an infinite distance and go first,
//! oldest insertion first.
//!
//! Variant: the history of an entry is dropped on eviction (no retained
//! information period) and there is no correlated-reference period: every
//! request counts. `k = 1` is LRU. Time is the count of requests this policy
//! has seen. A heap over the resident entries: O(log n) per request.

use super::lists::{grow, SlotHeap};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LruKParams {
    /// How many recent requests count, 1..=16.
    pub k: u32,
}

impl Default for LruKParams {
    fn default() -> Self {
        LruKParams { k: 2 }
    }
}

pub struct LruK {
    k: usize,
    /// The last k request times per slot, a ring indexed by `count % k`.
    hist: Vec<u64>,
    count: Vec<u32>,
    heap: SlotHeap,
    now: u64,
}

impl PolicyBuild for LruK {
    type Params = LruKParams;
    fn build(p: &LruKParams, _: &BuildCtx) -> Self {
        LruK {
            k: p.k.clamp(1, 16) as usize,
            hist: Vec::new(),
            count: Vec::new(),
            heap: SlotHeap::default(),
            now: 0,
        }
    }
    fn check(p: &LruKParams) -> Result<(), String> {
        if (1..=16).contains(&p.k) {
            Ok(())
        } else {
            Err(format!("k: {} is out of range; allowed 1..=16", p.k))
        }
    }
}

impl LruK {
    /// Records a request of `slot` and returns its heap priority: (0, first
    /// request) below k requests, else (1, k-th most recent request).
    #[inline(always)]
    fn record(&mut self, slot: u32) -> (u64, u64) {
        self.now += 1;
        let s = slot as usize;
        let n = self.count[s] as usize;
        self.hist[s * self.k + n % self.k] = self.now;
        self.count[s] = (n + 1) as u32;
        if n + 1 < self.k {
            (0, self.hist[s * self.k])
        } else {
            // The oldest of the last k times is the next ring position.
            (1, self.hist[s * self.k + (n + 1) % self.k])
        }
    }
}

impl Policy for LruK {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        grow(&mut self.count, slot, 0);
        let need = (slot as usize + 1) * self.k;
        if need > self.hist.len() {
            self.hist.resize(need.max(self.hist.len() * 2), 0);
        }
        self.count[slot as usize] = 0;
        let pri = self.record(slot);
        self.heap.push(slot, pri);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        let pri = self.record(slot);
        self.heap.update(slot, pri);
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.heap.remove(slot);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        self.heap
            .pop()
            .expect("evict is called only on a non-empty tier")
    }
    #[inline(always)]
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        (ahead == 0).then(|| self.heap.peek()).flatten()
    }
}
