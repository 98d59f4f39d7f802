//! Building blocks shared by the multi-queue policies (ARC, 2Q, S3-FIFO,
//! LIRS, W-TinyLFU, LFU, Belady, LRU-K): several doubly linked lists over one
//! arena of `u32` ids, ghost queues of non-resident keys, and an indexed
//! binary heap. No allocation per operation once the arrays have grown.

use crate::index::{prefetch, SlotIndex};

pub const NIL: u32 = u32::MAX;

/// Grows a per-slot vector to hold `slot`, doubling so growth is amortised.
#[inline(always)]
pub fn grow<T: Clone>(v: &mut Vec<T>, slot: u32, fill: T) {
    let need = slot as usize + 1;
    if need > v.len() {
        let n = need.max(v.len() * 2).max(64);
        v.resize(n, fill);
    }
}

/// Several doubly linked lists sharing one link arena: an id is in at most
/// one list at a time. Head is the newest end, tail the oldest.
#[derive(Clone, Debug, Default)]
pub struct Lists {
    links: Vec<[u32; 2]>,
    /// (head, tail) per list.
    ends: Vec<[u32; 2]>,
    lens: Vec<usize>,
}

impl Lists {
    pub fn new(n: usize) -> Self {
        Lists {
            links: Vec::new(),
            ends: vec![[NIL, NIL]; n],
            lens: vec![0; n],
        }
    }

    /// Adds an empty list, returning its number.
    pub fn add_list(&mut self) -> usize {
        self.ends.push([NIL, NIL]);
        self.lens.push(0);
        self.ends.len() - 1
    }

    pub fn n_lists(&self) -> usize {
        self.ends.len()
    }

    #[inline(always)]
    pub fn len(&self, l: usize) -> usize {
        self.lens[l]
    }

    #[inline(always)]
    pub fn push_front(&mut self, l: usize, id: u32) {
        grow(&mut self.links, id, [NIL, NIL]);
        let head = self.ends[l][0];
        self.links[id as usize] = [NIL, head];
        if head != NIL {
            self.links[head as usize][0] = id;
        } else {
            self.ends[l][1] = id;
        }
        self.ends[l][0] = id;
        self.lens[l] += 1;
    }

    #[inline(always)]
    pub fn push_back(&mut self, l: usize, id: u32) {
        grow(&mut self.links, id, [NIL, NIL]);
        let tail = self.ends[l][1];
        self.links[id as usize] = [tail, NIL];
        if tail != NIL {
            self.links[tail as usize][1] = id;
        } else {
            self.ends[l][0] = id;
        }
        self.ends[l][1] = id;
        self.lens[l] += 1;
    }

    #[inline(always)]
    pub fn unlink(&mut self, l: usize, id: u32) {
        let [p, n] = self.links[id as usize];
        if p != NIL {
            self.links[p as usize][1] = n;
        } else {
            self.ends[l][0] = n;
        }
        if n != NIL {
            self.links[n as usize][0] = p;
        } else {
            self.ends[l][1] = p;
        }
        self.lens[l] -= 1;
    }

    #[inline(always)]
    pub fn move_to_front(&mut self, l: usize, id: u32) {
        if self.ends[l][0] != id {
            self.unlink(l, id);
            self.push_front(l, id);
        }
    }

    #[inline(always)]
    pub fn back(&self, l: usize) -> Option<u32> {
        let t = self.ends[l][1];
        (t != NIL).then_some(t)
    }

    #[inline(always)]
    pub fn front(&self, l: usize) -> Option<u32> {
        let h = self.ends[l][0];
        (h != NIL).then_some(h)
    }

    #[inline(always)]
    pub fn pop_back(&mut self, l: usize) -> Option<u32> {
        let t = self.back(l)?;
        self.unlink(l, t);
        Some(t)
    }

    /// Starts loading `id`'s links.
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        prefetch(self.links.as_ptr().wrapping_add(id as usize));
    }

    /// The neighbour towards the head (newer), if any.
    #[inline(always)]
    pub fn newer(&self, id: u32) -> Option<u32> {
        let p = self.links[id as usize][0];
        (p != NIL).then_some(p)
    }

    /// The id `n` places before the tail of list `l`.
    #[inline(always)]
    pub fn back_nth(&self, l: usize, n: usize) -> Option<u32> {
        let mut cur = self.ends[l][1];
        for _ in 0..n {
            if cur == NIL {
                return None;
            }
            cur = self.links[cur as usize][0];
        }
        (cur != NIL).then_some(cur)
    }
}

/// Queues of non-resident keys (ghosts) with their charges, each bounded by
/// the policy, for 2Q and S3-FIFO (ARC keeps its ghosts in the tier's
/// store instead: arc.rs). A key is in at most one queue. Keys are indexed
/// by a [`SlotIndex`].
#[derive(Default)]
pub struct Ghosts {
    map: SlotIndex,
    keys: Vec<u64>,
    charge: Vec<u32>,
    queue: Vec<u8>,
    lists: Lists,
    /// Total charge per queue.
    pub weight: Vec<u64>,
    free: Vec<u32>,
}

impl Ghosts {
    pub fn new(queues: usize) -> Self {
        Ghosts {
            lists: Lists::new(queues),
            weight: vec![0; queues],
            ..Default::default()
        }
    }

    /// Adds `key` at the head of queue `q`.
    pub fn push_front(&mut self, q: usize, key: u64, charge: u32) {
        debug_assert!(self.map.get(key).is_none());
        let id = match self.free.pop() {
            Some(id) => {
                self.keys[id as usize] = key;
                self.charge[id as usize] = charge;
                self.queue[id as usize] = q as u8;
                id
            }
            None => {
                self.keys.push(key);
                self.charge.push(charge);
                self.queue.push(q as u8);
                (self.keys.len() - 1) as u32
            }
        };
        self.map.insert(key, id);
        self.lists.push_front(q, id);
        self.weight[q] += charge as u64;
    }

    /// Removes `key`; returns the queue it was in.
    #[inline(always)]
    pub fn remove(&mut self, key: u64) -> Option<usize> {
        let id = self.map.remove(key)?;
        let q = self.queue[id as usize] as usize;
        self.lists.unlink(q, id);
        self.weight[q] -= self.charge[id as usize] as u64;
        self.free.push(id);
        Some(q)
    }

    /// Drops the oldest key of queue `q`.
    pub fn pop_back(&mut self, q: usize) -> Option<u64> {
        let id = self.lists.back(q)?;
        let key = self.keys[id as usize];
        self.remove(key);
        Some(key)
    }

    pub fn len(&self, q: usize) -> usize {
        self.lists.len(q)
    }

    pub fn is_empty(&self, q: usize) -> bool {
        self.lists.len(q) == 0
    }
}

/// An indexed binary min-heap of slots by a `(u64, u64)` priority: O(log n)
/// insert, change and removal of any slot (Belady, LRU-K).
#[derive(Clone, Debug, Default)]
pub struct SlotHeap {
    heap: Vec<u32>,
    pos: Vec<u32>,
    pri: Vec<(u64, u64)>,
}

impl SlotHeap {
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn peek(&self) -> Option<u32> {
        self.heap.first().copied()
    }

    pub fn priority(&self, slot: u32) -> (u64, u64) {
        self.pri[slot as usize]
    }

    pub fn push(&mut self, slot: u32, pri: (u64, u64)) {
        grow(&mut self.pos, slot, NIL);
        grow(&mut self.pri, slot, (0, 0));
        self.pri[slot as usize] = pri;
        self.heap.push(slot);
        let i = self.heap.len() - 1;
        self.pos[slot as usize] = i as u32;
        self.up(i);
    }

    pub fn update(&mut self, slot: u32, pri: (u64, u64)) {
        let old = self.pri[slot as usize];
        self.pri[slot as usize] = pri;
        let i = self.pos[slot as usize] as usize;
        if pri < old {
            self.up(i);
        } else {
            self.down(i);
        }
    }

    pub fn remove(&mut self, slot: u32) {
        let i = self.pos[slot as usize] as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(i, last);
        self.pos[self.heap[i] as usize] = i as u32;
        self.heap.pop();
        self.pos[slot as usize] = NIL;
        if i < self.heap.len() {
            self.down(i);
            self.up(i);
        }
    }

    pub fn pop(&mut self) -> Option<u32> {
        let s = self.peek()?;
        self.remove(s);
        Some(s)
    }

    fn key(&self, i: usize) -> (u64, u64) {
        self.pri[self.heap[i] as usize]
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a] as usize] = a as u32;
        self.pos[self.heap[b] as usize] = b as u32;
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.key(i) < self.key(p) {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.key(l) < self.key(m) {
                m = l;
            }
            if r < n && self.key(r) < self.key(m) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
}

impl Lists {
    /// Puts untracked `id` just before (on the head side of) `at` in list `l`.
    pub fn insert_before(&mut self, l: usize, at: u32, id: u32) {
        grow(&mut self.links, id, [NIL, NIL]);
        let p = self.links[at as usize][0];
        self.links[id as usize] = [p, at];
        self.links[at as usize][0] = id;
        if p != NIL {
            self.links[p as usize][1] = id;
        } else {
            self.ends[l][0] = id;
        }
        self.lens[l] += 1;
    }
}
