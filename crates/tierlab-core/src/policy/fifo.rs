//! First in, first out: evict the entry inserted longest ago; hits change nothing.

use super::{BuildCtx, Policy, PolicyBuild, SlotList};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FifoParams {}

pub struct Fifo {
    list: SlotList,
}

impl PolicyBuild for Fifo {
    type Params = FifoParams;
    fn build(_: &FifoParams, _: &BuildCtx) -> Self {
        Fifo {
            list: SlotList::new(),
        }
    }
}

impl Policy for Fifo {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        self.list.push_front(slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, _: u32, _: &Request) {}
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
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        let slot = self.list.back_nth(ahead)?;
        self.list.prefetch(slot);
        Some(slot)
    }
}
