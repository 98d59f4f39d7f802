//! The order of an exclusive hierarchy whose tiers are all LRU or FIFO, kept
//! as one list across the tiers instead of one list per tier.
//!
//! In such a hierarchy a demotion takes tier j's last entry and makes it
//! tier j+1's first: with the tiers' lists laid end to end, the entry does not
//! move at all, only the boundary between the two tiers does. So the tiers
//! share one doubly linked list over the store's slots, each tier owning a
//! segment of it (its first and last slot), and a demotion costs two
//! boundary updates instead of an unlink from one list and a push onto
//! another (four cache lines, two of them misses, per demotion). Everything
//! else (counters, costs, admission, the pending victims and their order)
//! stays the hierarchy's general code: [`Segment`] is the [`Policy`] the tier
//! is driven with, so the order of events, and with it every result, is the
//! same as with per-tier LRU and FIFO lists (tests/segments.rs compares the
//! two request by request).
//!
//! Why the segments stay contiguous: entries enter an exclusive hierarchy
//! only at tier 0's front (fills and promotions; every exclusive path goes
//! through tier 0), a tier evicts its last entry, and the tier below adopts
//! it at its front. A victim waiting to be adopted (in no tier) sits between
//! the segment it left and the one it joins, in eviction order, so whichever
//! tier adopts it finds it right before its first entry. A victim no tier
//! takes (too large, refused) is unlinked ([`Segments::discard`]).

use crate::index::prefetch;
use crate::policy::Policy;
use crate::request::Request;

pub(super) const NIL: u32 = u32::MAX;
/// A slot in no segment (never linked, or unlinked).
const UNLINKED: u32 = u32::MAX - 1;

pub struct Segments {
    /// (prev, next) per slot, over the whole list.
    links: Vec<[u32; 2]>,
    /// The list's first slot.
    first: u32,
    /// Per tier: its first and last slot (NIL when it holds nothing).
    pub(super) head: Vec<u32>,
    pub(super) tail: Vec<u32>,
    /// Per tier: a hit moves the entry to the front (LRU), or not (FIFO).
    lru: Vec<bool>,
}

impl Segments {
    /// One segment per tier, `lru[j]` telling tier j's order.
    pub fn new(lru: Vec<bool>) -> Self {
        let n = lru.len();
        Segments {
            links: Vec::new(),
            first: NIL,
            head: vec![NIL; n],
            tail: vec![NIL; n],
            lru,
        }
    }

    /// Tier `j`'s view, to drive the tier with.
    #[inline(always)]
    pub fn at(&mut self, j: usize) -> Segment<'_> {
        Segment { g: self, j }
    }

    /// Unlinks a victim that kept its slot but that no tier took.
    #[inline]
    pub fn discard(&mut self, slot: u32) {
        self.unlink(slot);
    }

    /// Starts loading a slot's links.
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        prefetch(self.links.as_ptr().wrapping_add(slot as usize));
    }

    #[inline(always)]
    fn ensure(&mut self, slot: u32) {
        let need = slot as usize + 1;
        if need > self.links.len() {
            let n = need.max(self.links.len() * 2).max(64);
            self.links.resize(n, [UNLINKED, UNLINKED]);
        }
    }

    /// The links of a slot that is linked or being linked: `ensure` has
    /// grown the array past every such slot, and links only name such slots.
    #[inline(always)]
    pub(super) fn link(&self, slot: u32) -> &[u32; 2] {
        debug_assert!((slot as usize) < self.links.len());
        // SAFETY: see above; every caller passes a slot on the list, or the
        // slot `push_front` has just ensured.
        unsafe { self.links.get_unchecked(slot as usize) }
    }

    #[inline(always)]
    fn link_mut(&mut self, slot: u32) -> &mut [u32; 2] {
        debug_assert!((slot as usize) < self.links.len());
        // SAFETY: as for `link`.
        unsafe { self.links.get_unchecked_mut(slot as usize) }
    }

    #[inline(always)]
    fn is_linked(&self, slot: u32) -> bool {
        self.links
            .get(slot as usize)
            .is_some_and(|l| l[0] != UNLINKED)
    }

    #[inline(always)]
    fn unlink(&mut self, slot: u32) {
        let [p, n] = *self.link(slot);
        debug_assert!(p != UNLINKED, "unlink of an unlinked slot");
        if p != NIL {
            self.link_mut(p)[1] = n;
        } else {
            self.first = n;
        }
        if n != NIL {
            self.link_mut(n)[0] = p;
        }
        *self.link_mut(slot) = [UNLINKED, UNLINKED];
    }

    /// Links `slot` right before `at` (NIL: at the end of the list).
    #[inline(always)]
    fn link_before(&mut self, slot: u32, at: u32) {
        debug_assert!(at != NIL, "the end of the list is never a target");
        let p = self.link(at)[0];
        *self.link_mut(slot) = [p, at];
        self.link_mut(at)[0] = slot;
        if p != NIL {
            self.link_mut(p)[1] = slot;
        } else {
            self.first = slot;
        }
    }

    /// Links `slot` right after `at`.
    fn link_after(&mut self, slot: u32, at: u32) {
        let n = self.link(at)[1];
        *self.link_mut(slot) = [at, n];
        self.link_mut(at)[1] = slot;
        if n != NIL {
            self.link_mut(n)[0] = slot;
        }
    }

    /// Links an unlinked `slot` at the front of tier `j`'s segment.
    #[inline(always)]
    fn push_front(&mut self, j: usize, slot: u32) {
        self.ensure(slot);
        let h = self.head[j];
        if h != NIL {
            self.link_before(slot, h);
        } else if let Some(above) = (0..j).rev().find(|&i| self.tail[i] != NIL) {
            // Tier j is empty: after the nearest tier above that is not.
            // (Exclusive hierarchies add unlinked entries to tier 0 only.)
            self.link_after(slot, self.tail[above]);
        } else if self.first != NIL {
            self.link_before(slot, self.first);
        } else {
            *self.link_mut(slot) = [NIL, NIL];
            self.first = slot;
        }
        self.head[j] = slot;
        if self.tail[j] == NIL {
            self.tail[j] = slot;
        }
    }

    /// An entry joins tier `j` at its front: a victim of the tier above,
    /// waiting right before this tier's first entry, joins where it is; any
    /// other entry is linked there.
    #[inline(always)]
    pub(super) fn join_front(&mut self, j: usize, slot: u32) {
        if self.is_linked(slot) {
            debug_assert!(self.head[j] == NIL || self.links[slot as usize][1] == self.head[j]);
            self.head[j] = slot;
            if self.tail[j] == NIL {
                self.tail[j] = slot;
            }
        } else {
            self.push_front(j, slot);
        }
    }

    /// Tier `j`'s last entry leaves its segment; it stays linked where it
    /// is (the tier below adopts it there) unless `j` is the last tier.
    #[inline(always)]
    pub(super) fn evict_tail(&mut self, j: usize) -> u32 {
        let v = self.tail[j];
        debug_assert!(v != NIL, "evicting from an empty tier");
        self.leave(j, v);
        if j + 1 == self.head.len() {
            self.unlink(v);
        }
        v
    }

    /// Takes `slot` out of tier `j`'s segment, moving its boundaries.
    #[inline(always)]
    fn leave(&mut self, j: usize, slot: u32) {
        let [p, n] = *self.link(slot);
        let (h, t) = (self.head[j], self.tail[j]);
        if h == slot && t == slot {
            self.head[j] = NIL;
            self.tail[j] = NIL;
        } else if h == slot {
            self.head[j] = n;
        } else if t == slot {
            self.tail[j] = p;
        }
    }
}

/// Tier `j`'s segment, as the [`Policy`] the tier is driven with.
pub struct Segment<'a> {
    g: &'a mut Segments,
    j: usize,
}

impl Policy for Segment<'_> {
    /// Segments only exist where every tier is LRU or FIFO.
    const STORE_GHOSTLESS: bool = true;

    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        self.g.join_front(self.j, slot);
    }

    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        let (g, j) = (&mut *self.g, self.j);
        if g.lru[j] && g.head[j] != slot {
            // Not the first, so the segment has another entry to keep.
            g.leave(j, slot);
            g.unlink(slot);
            let h = g.head[j];
            g.link_before(slot, h);
            g.head[j] = slot;
        }
    }

    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.g.leave(self.j, slot);
        self.g.unlink(slot);
    }

    /// The segment's last entry leaves it; it stays linked where it is (the
    /// tier below adopts it there) unless this is the last tier.
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        self.g.evict_tail(self.j)
    }

    #[inline(always)]
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        let g = &*self.g;
        let mut cur = g.tail[self.j];
        for _ in 0..ahead {
            if cur == NIL || cur == g.head[self.j] {
                return None;
            }
            cur = g.link(cur)[0];
        }
        (cur != NIL).then(|| {
            g.prefetch(cur);
            cur
        })
    }

    #[inline(always)]
    fn prefetch(&self, slot: u32) {
        self.g.prefetch(slot);
    }
}
