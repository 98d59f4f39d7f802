//! Least recently used: evict the entry whose last request is oldest.

use super::{BuildCtx, Policy, PolicyBuild, SlotList};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LruParams {}

pub struct Lru {
    list: SlotList,
}

impl PolicyBuild for Lru {
    type Params = LruParams;
    fn build(_: &LruParams, _: &BuildCtx) -> Self {
        Lru {
            list: SlotList::new(),
        }
    }
}

impl Policy for Lru {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        self.list.push_front(slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        self.list.move_to_front(slot);
    }
    /// The entry is at the head after one hit: the rest change nothing.
    #[inline(always)]
    fn on_hits(&mut self, slot: u32, req: &Request, n: u64) {
        if n > 0 {
            self.on_hit(slot, req);
        }
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.list.unlink(slot);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        self.list
            .pop_back()
            .expect("evict is called only on a non-empty tier")
    }
    #[inline(always)]
    fn prefetch(&self, slot: u32) {
        self.list.prefetch(slot);
    }
    #[inline(always)]
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        let slot = self.list.back_nth(ahead)?;
        self.list.prefetch(slot);
        Some(slot)
    }
}
