//! ARC (Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement
//! Cache", FAST 2003).
//!
//! T1 holds entries seen once recently, T2 entries seen at least twice; B1
//! and B2 are ghost lists of keys recently evicted from T1 and T2. A hit in
//! B1 raises the target size `p` of T1 by max(|B2|/|B1|, 1), a hit in B2
//! lowers it by max(|B1|/|B2|, 1); such a miss enters T2, any other miss T1.
//! REPLACE evicts T1's LRU entry into B1 when T1 is larger than `p` (or equal
//! to it on a B2 hit), else T2's LRU entry into B2. On a miss in all four
//! lists, case IV of the paper first trims the ghosts: when |T1|+|B1| would
//! exceed the capacity, B1's oldest key is dropped (or, B1 being empty, T1's
//! LRU entry is evicted without a ghost); otherwise, when all four lists
//! reach twice the capacity, B2's oldest key is dropped.
//!
//! Sizes are charges (objects with `unit_size`, else bytes) and `p` is a
//! real number, as in libCacheSim's `ARC` (ARC.c), which this follows step by
//! step including its size-aware case IV and its rule that an empty T2 sends
//! REPLACE to T1; the miss counts are equal. Ghosts hold at most the
//! capacity in charges (B1 + T1 <= c, all four <= 2c).

use super::lists::{grow, Ghosts, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::index::prefetch;
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArcParams {}

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 0;
const B2: usize = 1;

#[derive(Clone, Copy, PartialEq, Eq)]
enum GhostHit {
    None,
    B1,
    B2,
}

/// Per-slot state in separate arrays: packed into one 16-byte struct per
/// slot (key, charge, list) the ARC bench ran slower (8.8G cycles against
/// 7.5G, eighth session): a hit reads only `list` and `charge`, whose small
/// arrays stay in L2 on their own.
pub struct Arc {
    t: Lists,
    charge: Vec<u32>,
    keys: Vec<u64>,
    list: Vec<u8>,
    weight: [u64; 2],
    b: Ghosts,
    p: f64,
    c: u64,
    ctx: BuildCtx,
    /// The current miss: ghost list it was found in, and its charge.
    hit: GhostHit,
    incoming: u64,
}

impl PolicyBuild for Arc {
    type Params = ArcParams;
    fn build(_: &ArcParams, ctx: &BuildCtx) -> Self {
        Arc {
            t: Lists::new(2),
            charge: Vec::new(),
            keys: Vec::new(),
            list: Vec::new(),
            weight: [0; 2],
            b: Ghosts::new(2),
            p: 0.0,
            c: ctx.capacity,
            ctx: *ctx,
            hit: GhostHit::None,
            incoming: 0,
        }
    }
}

impl Arc {
    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let l = self.list[slot as usize] as usize;
        self.weight[l] -= self.charge[slot as usize] as u64;
        self.t.unlink(l, slot);
    }

    /// Evicts the LRU entry of `l`, keeping its key in ghost list `l`.
    fn demote(&mut self, l: usize) -> u32 {
        let s = self.t.back(l).expect("REPLACE on an empty list");
        self.unlink(s);
        self.b
            .push_front(l, self.keys[s as usize], self.charge[s as usize]);
        s
    }

    /// The list REPLACE takes from, given the current miss's ghost hit
    /// (`victim_hint` asks as if none was hit).
    #[inline(always)]
    fn replace_list(&self, hit: GhostHit) -> usize {
        let t1 = self.weight[T1] as f64;
        let from_t1 = (self.weight[T1] > 0
            && (t1 > self.p || (t1 == self.p && hit == GhostHit::B2)))
            || self.t.len(T2) == 0;
        if from_t1 {
            T1
        } else {
            T2
        }
    }

    fn replace(&mut self) -> u32 {
        self.demote(self.replace_list(self.hit))
    }
}

impl Policy for Arc {
    #[inline(always)]
    fn before_insert(&mut self, req: &Request) {
        self.incoming = self.ctx.charge(req.size) as u64;
        self.hit = GhostHit::None;
        let Some(q) = self.b.queue_of(req.key) else {
            return;
        };
        let (b1, b2) = (self.b.weight[B1] as f64, self.b.weight[B2] as f64);
        if q == B1 {
            self.p = (self.p + (b2 / b1).max(1.0)).min(self.c as f64);
            self.hit = GhostHit::B1;
        } else {
            self.p = (self.p - (b1 / b2).max(1.0)).max(0.0);
            self.hit = GhostHit::B2;
        }
        self.b.remove(req.key);
    }
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, req: &Request) {
        grow(&mut self.charge, slot, 0);
        grow(&mut self.keys, slot, 0);
        grow(&mut self.list, slot, 0);
        let c = self.ctx.charge(req.size);
        self.charge[slot as usize] = c;
        self.keys[slot as usize] = req.key;
        let l = if self.hit == GhostHit::None { T1 } else { T2 };
        self.hit = GhostHit::None;
        self.list[slot as usize] = l as u8;
        self.weight[l] += c as u64;
        self.t.push_front(l, slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        if self.list[slot as usize] as usize == T1 {
            self.unlink(slot);
            self.list[slot as usize] = T2 as u8;
            self.weight[T2] += self.charge[slot as usize] as u64;
            self.t.push_front(T2, slot);
        } else {
            self.t.move_to_front(T2, slot);
        }
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.unlink(slot);
    }
    /// The tier prefetches the victim's entry and index bucket with this;
    /// ARC loads its own state for it, the ghost bucket its key will take,
    /// and the oldest ghosts' keys, links and buckets, which the next miss's
    /// case IV drops. On the ARC bench (BENCHMARKS.md): -23% cycles against
    /// no hint, and the victim's ghost bucket -5% more.
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        let s = self.t.back_nth(self.replace_list(GhostHit::None), ahead)?;
        let i = s as usize;
        self.t.prefetch(s);
        prefetch(self.keys.as_ptr().wrapping_add(i));
        prefetch(self.charge.as_ptr().wrapping_add(i));
        prefetch(self.list.as_ptr().wrapping_add(i));
        if ahead == 0 {
            // The victim's key becomes a ghost: its bucket. (Its key was
            // prefetched as the victim after next, most of the time.)
            if let Some(m) = self.keys.get(i) {
                self.b.prefetch(*m);
            }
            // The next misses also drop the oldest ghosts (case IV).
            self.b.prefetch_back(B1);
            self.b.prefetch_back(B2);
        }
        Some(s)
    }
    fn evict(&mut self) -> u32 {
        if self.hit != GhostHit::None {
            return self.replace();
        }
        let (t1, t2) = (self.weight[T1], self.weight[T2]);
        let (b1, b2) = (self.b.weight[B1], self.b.weight[B2]);
        if t1 + b1 + self.incoming > self.c {
            if b1 > 0 {
                self.b.pop_back(B1);
                self.replace()
            } else {
                match self.t.back(T1) {
                    // T1 fills the cache: its LRU entry leaves no ghost.
                    Some(s) => {
                        self.unlink(s);
                        s
                    }
                    None => self.replace(),
                }
            }
        } else {
            if t1 + b1 + t2 + b2 >= 2 * self.c && b2 > 0 {
                self.b.pop_back(B2);
            }
            self.replace()
        }
    }
}
