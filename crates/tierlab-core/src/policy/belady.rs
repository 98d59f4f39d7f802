//! Belady's MIN (Belady, "A study of replacement algorithms for a
//! virtual-storage computer", IBM Systems Journal 1966): evict the entry
//! whose next request is farthest in the future; one that is never
//! requested again (next access -1) is farthest of all.
//!
//! Demand-fetch form: every miss is inserted (no bypass), as libCacheSim's
//! `Belady`, whose miss counts are therefore equal. Needs each request's next
//! access time: oracleGeneral traces carry it, other sources get it from a
//! pre-pass (`trace::next_access`). The next access of each entry is kept
//! here from its insertion or last hit; a demotion in an exclusive hierarchy
//! brings none (-1), so a demoted entry counts as never used again in the
//! tier below. Ties (several entries never used again) go to the larger key:
//! any choice gives the same hits. A heap: O(log n) per request.

use super::lists::SlotHeap;
use super::{BuildCtx, Policy, PolicyBuild};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BeladyParams {}

pub struct Belady {
    /// Min-heap of (u64::MAX - next access, u64::MAX - key): its top is the
    /// farthest next access.
    heap: SlotHeap,
}

#[inline(always)]
fn priority(req: &Request) -> (u64, u64) {
    let next = if req.next_access < 0 {
        u64::MAX
    } else {
        req.next_access as u64
    };
    (u64::MAX - next, u64::MAX - req.key)
}

impl PolicyBuild for Belady {
    type Params = BeladyParams;
    fn build(_: &BeladyParams, _: &BuildCtx) -> Self {
        Belady {
            heap: SlotHeap::default(),
        }
    }
}

impl Policy for Belady {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, req: &Request) {
        self.heap.push(slot, priority(req));
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, req: &Request) {
        self.heap.update(slot, priority(req));
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
