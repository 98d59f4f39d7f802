//! SIEVE (Zhang et al., "SIEVE is Simpler than LRU", NSDI 2024).
//!
//! One FIFO queue, a visited bit per entry and a hand. New entries enter at
//! the head unvisited; a hit only sets the bit. To evict, the hand moves from
//! where it stopped last (the tail at first) towards the head, clearing
//! visited bits, and evicts the first unvisited entry; survivors keep their
//! place, unlike CLOCK's reinsertion. When the hand passes the head it wraps
//! to the tail. This is the paper's algorithm and libCacheSim's `Sieve`
//! (hand on the evicted entry's newer neighbour); the miss counts are equal.
//! The hand's walk is amortised O(1): each step clears a bit set by a hit.

use super::lists::{grow, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SieveParams {}

pub struct Sieve {
    list: Lists,
    visited: Vec<bool>,
    /// Where the next eviction starts looking; None: at the tail.
    hand: Option<u32>,
}

impl PolicyBuild for Sieve {
    type Params = SieveParams;
    fn build(_: &SieveParams, _: &BuildCtx) -> Self {
        Sieve {
            list: Lists::new(1),
            visited: Vec::new(),
            hand: None,
        }
    }
}

impl Policy for Sieve {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        grow(&mut self.visited, slot, false);
        self.visited[slot as usize] = false;
        self.list.push_front(0, slot);
    }
    #[inline(always)]
    fn prefetch(&self, slot: u32) {
        crate::index::prefetch(self.visited.as_ptr().wrapping_add(slot as usize));
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        self.visited[slot as usize] = true;
    }
    /// The visited bit is set after one hit.
    #[inline(always)]
    fn on_hits(&mut self, slot: u32, req: &Request, n: u64) {
        if n > 0 {
            self.on_hit(slot, req);
        }
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        if self.hand == Some(slot) {
            self.hand = self.list.newer(slot);
        }
        self.list.unlink(0, slot);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        let tail = || {
            self.list
                .back(0)
                .expect("evict is called only on a non-empty tier")
        };
        let mut cur = match self.hand {
            Some(h) => h,
            None => tail(),
        };
        while self.visited[cur as usize] {
            self.visited[cur as usize] = false;
            cur = match self.list.newer(cur) {
                Some(n) => n,
                None => self.list.back(0).unwrap(),
            };
        }
        self.hand = self.list.newer(cur);
        self.list.unlink(0, cur);
        cur
    }
}
