//! LFU: evict the least frequently used entry; among the least frequent, the
//! least recently used (the one that reached that count first).
//!
//! Frequency counts from 1 at insertion and is forgotten on eviction (no
//! aging), as in libCacheSim's `LFU` (LFU.c, whose buckets append on entry
//! and evict from the front: the same tie rule, so the miss counts are
//! equal). The classic O(1) structure (Shah, Mitra & Matani, "An O(1)
//! algorithm for implementing the LFU cache eviction scheme", 2010): one list
//! per frequency over the slot arena. The lowest non-empty frequency is kept;
//! an insertion resets it to 1, and after an eviction or removal empties its
//! bucket it moves up over empty buckets, which an insertion (the usual next
//! event) makes moot, so the walk is short in practice.

use super::lists::{grow, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LfuParams {}

pub struct Lfu {
    /// List f-1 holds the entries requested f times, oldest arrival at the tail.
    buckets: Lists,
    freq: Vec<u32>,
    min: usize,
}

impl PolicyBuild for Lfu {
    type Params = LfuParams;
    fn build(_: &LfuParams, _: &BuildCtx) -> Self {
        Lfu {
            buckets: Lists::new(1),
            freq: Vec::new(),
            min: 0,
        }
    }
}

impl Policy for Lfu {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        grow(&mut self.freq, slot, 0);
        self.freq[slot as usize] = 0;
        self.buckets.push_front(0, slot);
        self.min = 0;
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        let f = self.freq[slot as usize] as usize;
        self.buckets.unlink(f, slot);
        if f + 1 == self.buckets.n_lists() {
            self.buckets.add_list();
        }
        self.buckets.push_front(f + 1, slot);
        self.freq[slot as usize] += 1;
        if self.min == f && self.buckets.len(f) == 0 {
            self.min = f + 1;
        }
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        let f = self.freq[slot as usize] as usize;
        self.buckets.unlink(f, slot);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        while self.buckets.len(self.min) == 0 {
            self.min += 1;
            if self.min == self.buckets.n_lists() {
                // Removals emptied every bucket above the old minimum.
                self.min = 0;
            }
        }
        self.buckets
            .pop_back(self.min)
            .expect("evict is called only on a non-empty tier")
    }
    #[inline(always)]
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        self.buckets.back_nth(self.min, ahead)
    }
}
