//! Random: evict an entry chosen uniformly at random.
//!
//! Deterministic: the generator (xoshiro256++) is seeded from the run's seed,
//! so the same config and trace give the same victims on every machine.
//! libCacheSim's `Random` draws from its own generator, so only the miss
//! ratio's expectation can agree, not single runs.

use super::lists::{grow, NIL};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomParams {}

pub struct Random {
    /// The tracked slots, densely packed; `pos` is each slot's index here.
    members: Vec<u32>,
    pos: Vec<u32>,
    rng: Rng,
}

impl PolicyBuild for Random {
    type Params = RandomParams;
    fn build(_: &RandomParams, ctx: &BuildCtx) -> Self {
        Random {
            members: Vec::new(),
            pos: Vec::new(),
            rng: Rng::new(ctx.seed),
        }
    }
}

impl Random {
    #[inline(always)]
    fn take(&mut self, i: usize) -> u32 {
        let slot = self.members.swap_remove(i);
        if let Some(&moved) = self.members.get(i) {
            self.pos[moved as usize] = i as u32;
        }
        self.pos[slot as usize] = NIL;
        slot
    }
}

impl Policy for Random {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        grow(&mut self.pos, slot, NIL);
        self.pos[slot as usize] = self.members.len() as u32;
        self.members.push(slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, _: u32, _: &Request) {}
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        let i = self.pos[slot as usize] as usize;
        self.take(i);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        assert!(
            !self.members.is_empty(),
            "evict is called only on a non-empty tier"
        );
        let i = self.rng.below(self.members.len() as u64) as usize;
        self.take(i)
    }
}
