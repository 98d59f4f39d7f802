//! A doubly linked list over slot indices, stored as two `u32` arrays: the
//! building block of LRU, FIFO and CLOCK. No allocation per operation once the
//! arrays have grown to the tier's largest slot.

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct SlotList {
    /// (prev, next) per slot: one cache line touched per neighbour.
    links: Vec<[u32; 2]>,
    head: u32,
    tail: u32,
    len: usize,
}

impl SlotList {
    pub fn new() -> Self {
        SlotList {
            links: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn ensure(&mut self, slot: u32) {
        let need = slot as usize + 1;
        if need > self.links.len() {
            let n = need.max(self.links.len() * 2).max(64);
            self.links.resize(n, [NIL, NIL]);
        }
    }

    /// Inserts an untracked slot at the head (most recent end).
    #[inline(always)]
    pub fn push_front(&mut self, slot: u32) {
        self.ensure(slot);
        let s = slot as usize;
        self.links[s] = [NIL, self.head];
        if self.head != NIL {
            self.links[self.head as usize][0] = slot;
        } else {
            self.tail = slot;
        }
        self.head = slot;
        self.len += 1;
    }

    /// Removes a tracked slot.
    #[inline(always)]
    pub fn unlink(&mut self, slot: u32) {
        let s = slot as usize;
        let [p, n] = self.links[s];
        if p != NIL {
            self.links[p as usize][1] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.links[n as usize][0] = p;
        } else {
            self.tail = p;
        }
        self.len -= 1;
    }

    #[inline(always)]
    pub fn move_to_front(&mut self, slot: u32) {
        if self.head != slot {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    /// The least recently pushed slot.
    #[inline(always)]
    pub fn back(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }

    /// Starts loading a slot's links (for a coming eviction).
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        crate::index::prefetch(self.links.as_ptr().wrapping_add(slot as usize));
    }

    /// The slot `n` places before the tail (0: the tail); None past the head.
    #[inline(always)]
    pub fn back_nth(&self, n: usize) -> Option<u32> {
        let mut cur = self.tail;
        for _ in 0..n {
            if cur == NIL {
                return None;
            }
            cur = self.links[cur as usize][0];
        }
        (cur != NIL).then_some(cur)
    }

    #[inline(always)]
    pub fn pop_back(&mut self) -> Option<u32> {
        let t = self.back()?;
        self.unlink(t);
        Some(t)
    }

    /// Slots from head (newest) to tail, for tests and debugging.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            (cur != NIL).then(|| {
                let s = cur;
                cur = self.links[s as usize][1];
                s
            })
        })
    }
}
