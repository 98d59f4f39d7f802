//! LIRS (Jiang & Zhang, "LIRS: an efficient low inter-reference recency set
//! replacement policy to improve buffer cache performance", SIGMETRICS 2002).
//!
//! Entries are LIR (low inter-reference recency, never evicted) or HIR. The
//! LIR set takes all but `hir_ratio` of the capacity (at least one object's
//! worth stays HIR). Stack S orders recent entries: LIR, resident HIR and
//! non-resident HIR (ghost keys); its bottom is always LIR (pruning drops
//! HIR entries from the bottom). List Q holds the resident HIR entries, the
//! victims, oldest first. A hit on an HIR entry still in S, or a miss on a
//! ghost, makes it LIR and turns S's bottom LIR entry into a resident HIR at
//! Q's head. Until the LIR set is full, new entries are LIR.
//!
//! Variant: the paper leaves S unbounded; here the ghosts are at most as
//! many as the capacity in objects, the oldest ghost dropped first.
//! libCacheSim's `LIRS` (LIRS.c) uses the same 1% HIR share but bounds S
//! differently and decides its evictions from the incoming request's state,
//! so its miss ratios differ slightly (tests/test_vs_libcachesim.py).

use super::lists::{grow, Lists};
use super::{BuildCtx, Policy, PolicyBuild};
use crate::hash::KeyMap;
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LirsParams {
    /// The HIR share of the capacity, in (0, 1).
    pub hir_ratio: f64,
}

impl Default for LirsParams {
    fn default() -> Self {
        // The paper's 1%, as libCacheSim.
        LirsParams { hir_ratio: 0.01 }
    }
}

/// List numbers: S over ids (2*slot for residents, 2*ghost+1 for ghosts),
/// Q over slots, G over ghosts (age order).
const S: usize = 0;
const Q: usize = 0;
const G: usize = 0;
const NONE: u32 = u32::MAX;

pub struct Lirs {
    s: Lists,
    q: Lists,
    g: Lists,
    lir: Vec<bool>,
    in_s: Vec<bool>,
    charge: Vec<u32>,
    keys: Vec<u64>,
    ghost_keys: Vec<u64>,
    ghost_map: KeyMap<u32>,
    ghost_free: Vec<u32>,
    ghost_cap: usize,
    lir_weight: u64,
    lir_cap: u64,
    ctx: BuildCtx,
    /// The ghost of the key being inserted, if any.
    pending: u32,
}

impl PolicyBuild for Lirs {
    type Params = LirsParams;
    fn build(p: &LirsParams, ctx: &BuildCtx) -> Self {
        let hir = ((ctx.capacity as f64 * p.hir_ratio) as u64).max(1);
        Lirs {
            s: Lists::new(1),
            q: Lists::new(1),
            g: Lists::new(1),
            lir: Vec::new(),
            in_s: Vec::new(),
            charge: Vec::new(),
            keys: Vec::new(),
            ghost_keys: Vec::new(),
            ghost_map: KeyMap::default(),
            ghost_free: Vec::new(),
            ghost_cap: ctx.capacity.min(u32::MAX as u64 / 4) as usize,
            lir_weight: 0,
            lir_cap: ctx.capacity.saturating_sub(hir),
            ctx: *ctx,
            pending: NONE,
        }
    }
    fn check(p: &LirsParams) -> Result<(), String> {
        if p.hir_ratio > 0.0 && p.hir_ratio < 1.0 {
            Ok(())
        } else {
            Err(format!(
                "hir_ratio: {} is out of range; allowed (0, 1)",
                p.hir_ratio
            ))
        }
    }
}

impl Lirs {
    /// Drops HIR entries from S's bottom until it is LIR (or S is empty).
    fn prune(&mut self) {
        while let Some(id) = self.s.back(S) {
            if id & 1 == 1 {
                self.drop_ghost(id >> 1);
            } else if self.lir[(id >> 1) as usize] {
                break;
            } else {
                self.s.unlink(S, id);
                self.in_s[(id >> 1) as usize] = false;
            }
        }
    }

    fn drop_ghost(&mut self, g: u32) {
        self.s.unlink(S, 2 * g + 1);
        self.g.unlink(G, g);
        self.ghost_map.remove(&self.ghost_keys[g as usize]);
        self.ghost_free.push(g);
        if self.pending == g {
            self.pending = NONE;
        }
    }

    /// Turns LIR entries from S's bottom into resident HIR entries at Q's
    /// head until the LIR set fits its share.
    fn shrink_lir(&mut self) {
        while self.lir_weight > self.lir_cap {
            // S's bottom is LIR after pruning: LIR entries are always in S.
            self.prune();
            let Some(id) = self.s.back(S) else { break };
            let slot = id >> 1;
            self.s.unlink(S, id);
            self.in_s[slot as usize] = false;
            self.lir[slot as usize] = false;
            self.lir_weight -= self.charge[slot as usize] as u64;
            self.q.push_front(Q, slot);
        }
        self.prune();
    }

    /// Keeps the key of a resident HIR entry leaving the cache as a ghost in
    /// its place in S.
    fn make_ghost(&mut self, slot: u32) {
        let key = self.keys[slot as usize];
        let g = match self.ghost_free.pop() {
            Some(g) => {
                self.ghost_keys[g as usize] = key;
                g
            }
            None => {
                self.ghost_keys.push(key);
                (self.ghost_keys.len() - 1) as u32
            }
        };
        self.ghost_map.insert(key, g);
        self.s.insert_before(S, 2 * slot, 2 * g + 1);
        self.s.unlink(S, 2 * slot);
        self.g.push_front(G, g);
        while self.g.len(G) > self.ghost_cap {
            let old = self.g.back(G).unwrap();
            self.drop_ghost(old);
        }
    }

    fn evict_lir(&mut self) -> u32 {
        // Only when Q is empty: every resident entry is LIR.
        self.prune();
        let id = self
            .s
            .back(S)
            .expect("evict is called only on a non-empty tier");
        let slot = id >> 1;
        self.s.unlink(S, id);
        self.lir[slot as usize] = false;
        self.lir_weight -= self.charge[slot as usize] as u64;
        self.prune();
        slot
    }
}

impl Policy for Lirs {
    #[inline(always)]
    fn before_insert(&mut self, req: &Request, _: Option<u32>) {
        self.pending = self.ghost_map.get(&req.key).copied().unwrap_or(NONE);
    }
    fn on_insert(&mut self, slot: u32, req: &Request) {
        for v in [&mut self.lir, &mut self.in_s] {
            grow(v, slot, false);
        }
        grow(&mut self.charge, slot, 0);
        grow(&mut self.keys, slot, 0);
        let s = slot as usize;
        let c = self.ctx.charge(req.size);
        self.charge[s] = c;
        self.keys[s] = req.key;
        self.in_s[s] = true;
        let g = std::mem::replace(&mut self.pending, NONE);
        if g != NONE && self.ghost_keys[g as usize] == req.key {
            // A ghost in S: its recency beats S's bottom LIR entry.
            self.drop_ghost(g);
            self.lir[s] = true;
            self.lir_weight += c as u64;
            self.s.push_front(S, 2 * slot);
            self.shrink_lir();
        } else if self.lir_weight + c as u64 <= self.lir_cap {
            self.lir[s] = true;
            self.lir_weight += c as u64;
            self.s.push_front(S, 2 * slot);
        } else {
            self.lir[s] = false;
            self.s.push_front(S, 2 * slot);
            self.q.push_front(Q, slot);
        }
    }
    fn on_hit(&mut self, slot: u32, _: &Request) {
        let s = slot as usize;
        if self.lir[s] {
            self.s.move_to_front(S, 2 * slot);
            // Usually a no-op (S's bottom is LIR), but entries larger than
            // the LIR share can leave HIR entries under the first LIR one.
            self.prune();
        } else if self.in_s[s] {
            self.q.unlink(Q, slot);
            self.s.move_to_front(S, 2 * slot);
            self.lir[s] = true;
            self.lir_weight += self.charge[s] as u64;
            self.shrink_lir();
        } else {
            self.in_s[s] = true;
            self.s.push_front(S, 2 * slot);
            self.q.move_to_front(Q, slot);
        }
    }
    fn on_remove(&mut self, slot: u32) {
        let s = slot as usize;
        if self.lir[s] {
            self.lir[s] = false;
            self.lir_weight -= self.charge[s] as u64;
            self.s.unlink(S, 2 * slot);
            self.prune();
        } else {
            self.q.unlink(Q, slot);
            if self.in_s[s] {
                self.s.unlink(S, 2 * slot);
            }
        }
        self.in_s[s] = false;
    }
    fn evict(&mut self) -> u32 {
        let Some(slot) = self.q.pop_back(Q) else {
            return self.evict_lir();
        };
        if self.in_s[slot as usize] {
            self.in_s[slot as usize] = false;
            self.make_ghost(slot);
        }
        slot
    }
}
