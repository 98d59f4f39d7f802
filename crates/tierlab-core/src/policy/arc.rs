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
//!
//! Ghosts are slots of the tier's store, as residents are (`Policy::ghosted`,
//! tier/store.rs): the four lists share one arena of slots, and a ghost hit is
//! known from the slot the store's one probe found, with no table of
//! ghosts to probe on every miss. On the ARC bench that table's probe was
//! the largest stall (BENCHMARKS.md).

use super::lists::{grow, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::index::prefetch;
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArcParams {}

/// The lists, and a slot's `list` when it is in none of them.
const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;
const NONE: u8 = u8::MAX;

/// Per-slot state in separate arrays: packed into one 16-byte struct per
/// slot (key, charge, list) the ARC bench ran slower (8.8G cycles against
/// 7.5G, eighth session): a hit reads only `list` and `charge`, whose small
/// arrays stay in L2 on their own.
pub struct Arc {
    /// T1, T2, B1, B2 over the store's slots.
    lists: Lists,
    /// The charge of a slot's object, resident or ghost.
    charge: Vec<u32>,
    /// The list a slot is in, or [`NONE`].
    list: Vec<u8>,
    /// Total charge per list.
    weight: [u64; 4],
    p: f64,
    c: u64,
    ctx: BuildCtx,
    /// The current miss: the ghost list it was found in (B1, B2 or NONE),
    /// and its charge.
    hit: u8,
    incoming: u64,
    /// The last victim stays as a ghost.
    ghosted: bool,
    /// Ghosts dropped since the store last asked.
    forgotten: Vec<u32>,
}

impl PolicyBuild for Arc {
    type Params = ArcParams;
    fn build(_: &ArcParams, ctx: &BuildCtx) -> Self {
        Arc {
            lists: Lists::new(4),
            charge: Vec::new(),
            list: Vec::new(),
            weight: [0; 4],
            p: 0.0,
            c: ctx.capacity,
            ctx: *ctx,
            hit: NONE,
            incoming: 0,
            ghosted: false,
            forgotten: Vec::new(),
        }
    }
}

impl Arc {
    /// Takes `slot` out of its list.
    #[inline(always)]
    fn unlink(&mut self, slot: u32) -> u8 {
        let l = self.list[slot as usize];
        self.weight[l as usize] -= self.charge[slot as usize] as u64;
        self.lists.unlink(l as usize, slot);
        self.list[slot as usize] = NONE;
        l
    }

    #[inline(always)]
    fn push(&mut self, l: u8, slot: u32) {
        self.list[slot as usize] = l;
        self.weight[l as usize] += self.charge[slot as usize] as u64;
        self.lists.push_front(l as usize, slot);
    }

    /// Drops a ghost: the store may let its entry go.
    #[inline(always)]
    fn forget(&mut self, slot: u32) {
        self.unlink(slot);
        self.forgotten.push(slot);
    }

    /// Evicts the LRU entry of T1 or T2, keeping it as a ghost in B1 or B2.
    fn demote(&mut self, l: u8) -> u32 {
        let s = self
            .lists
            .back(l as usize)
            .expect("REPLACE on an empty list");
        self.unlink(s);
        self.push(l + 2, s);
        self.ghosted = true;
        s
    }

    /// The list REPLACE takes from, given the current miss's ghost hit
    /// (`victim_hint` asks as if none was hit).
    #[inline(always)]
    fn replace_list(&self, hit: u8) -> u8 {
        let t1w = self.weight[T1 as usize];
        let t1 = t1w as f64;
        let from_t1 = (t1w > 0 && (t1 > self.p || (t1 == self.p && hit == B2)))
            || self.lists.len(T2 as usize) == 0;
        if from_t1 {
            T1
        } else {
            T2
        }
    }

    fn replace(&mut self) -> u32 {
        self.demote(self.replace_list(self.hit))
    }

    /// Drops the oldest ghost of `l` (case IV).
    fn drop_oldest(&mut self, l: u8) {
        if let Some(g) = self.lists.back(l as usize) {
            self.forget(g);
        }
    }
}

impl Policy for Arc {
    #[inline(always)]
    fn before_insert(&mut self, req: &Request, slot: Option<u32>) {
        self.incoming = self.ctx.charge(req.size) as u64;
        self.hit = NONE;
        let Some(s) = slot else {
            return;
        };
        let q = self.list.get(s as usize).copied().unwrap_or(NONE);
        let (b1, b2) = (
            self.weight[B1 as usize] as f64,
            self.weight[B2 as usize] as f64,
        );
        if q == B1 {
            self.p = (self.p + (b2 / b1).max(1.0)).min(self.c as f64);
        } else if q == B2 {
            self.p = (self.p - (b1 / b2).max(1.0)).max(0.0);
        } else {
            // Not a ghost of this tier (another tier's, or in transit).
            return;
        }
        self.hit = q;
        self.forget(s);
    }
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, req: &Request) {
        grow(&mut self.charge, slot, 0);
        grow(&mut self.list, slot, NONE);
        debug_assert_eq!(self.list[slot as usize], NONE, "insert of a tracked slot");
        self.charge[slot as usize] = self.ctx.charge(req.size);
        let l = if self.hit == NONE { T1 } else { T2 };
        self.hit = NONE;
        self.push(l, slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        if self.list[slot as usize] == T1 {
            self.unlink(slot);
            self.push(T2, slot);
        } else {
            self.lists.move_to_front(T2 as usize, slot);
        }
    }
    /// The entry is at T2's head after one hit: the rest change nothing.
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
    /// The tier prefetches the victim's entry and index bucket with this;
    /// ARC loads its own state for it. On the ARC bench (BENCHMARKS.md):
    /// -23% cycles against no hint.
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        let s = self
            .lists
            .back_nth(self.replace_list(NONE) as usize, ahead)?;
        let i = s as usize;
        self.lists.prefetch(s);
        prefetch(self.charge.as_ptr().wrapping_add(i));
        prefetch(self.list.as_ptr().wrapping_add(i));
        Some(s)
    }
    /// Case IV trims B1 or B2 by the weights at the next miss, which are
    /// too close to call: both lists' oldest ghosts, and this policy's
    /// state for them. Guessing one list from the current weights gained
    /// 2% cycles on the ARC bench, both 18% (five paired rounds).
    #[inline(always)]
    fn ghost_hints(&self, ahead: usize) -> [Option<u32>; 2] {
        [B1, B2].map(|l| {
            let g = self.lists.back_nth(l as usize, ahead)?;
            self.lists.prefetch(g);
            prefetch(self.charge.as_ptr().wrapping_add(g as usize));
            prefetch(self.list.as_ptr().wrapping_add(g as usize));
            Some(g)
        })
    }
    fn evict(&mut self) -> u32 {
        self.ghosted = false;
        if self.hit != NONE {
            return self.replace();
        }
        let w = self.weight;
        let (t1, t2, b1, b2) = (
            w[T1 as usize],
            w[T2 as usize],
            w[B1 as usize],
            w[B2 as usize],
        );
        if t1 + b1 + self.incoming > self.c {
            if b1 > 0 {
                self.drop_oldest(B1);
                self.replace()
            } else {
                match self.lists.back(T1 as usize) {
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
                self.drop_oldest(B2);
            }
            self.replace()
        }
    }
    #[inline(always)]
    fn ghosted(&self) -> bool {
        self.ghosted
    }
    #[inline(always)]
    fn forgotten(&mut self) -> Option<u32> {
        self.forgotten.pop()
    }
}
