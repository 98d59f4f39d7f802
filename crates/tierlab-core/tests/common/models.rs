//! Naive reference models of the policies added after LRU, FIFO and CLOCK:
//! plain vectors and linear searches, written from the rules in each
//! policy's doc comment, not from its code. Front of a deque = newest.

use std::collections::VecDeque;
use tierlab_core::policy::wtinylfu::FrequencySketch;
use tierlab_core::rng::Rng;

/// What a tier tells its policy, by key. `charge` is 1 per object with
/// unit sizes, else the size; `next` is the request's next access.
pub trait Model {
    fn hit(&mut self, key: u64, next: i64);
    fn before_insert(&mut self, _key: u64, _charge: u64) {}
    /// More evictions wanted although the capacity is not exceeded.
    fn needs_room(&self) -> bool {
        false
    }
    fn insert(&mut self, key: u64, charge: u64, next: i64);
    /// Picks and forgets the victim.
    fn evict(&mut self) -> u64;
    fn remove(&mut self, key: u64);
}

fn pos<T>(q: &VecDeque<T>, f: impl Fn(&T) -> bool) -> Option<usize> {
    q.iter().position(f)
}

// ---------------------------------------------------------------- SIEVE
#[derive(Default)]
pub struct Sieve {
    q: VecDeque<(u64, bool)>,
    hand: Option<u64>,
}
impl Model for Sieve {
    fn hit(&mut self, key: u64, _: i64) {
        let i = pos(&self.q, |e| e.0 == key).unwrap();
        self.q[i].1 = true;
    }
    fn insert(&mut self, key: u64, _: u64, _: i64) {
        self.q.push_front((key, false));
    }
    fn evict(&mut self) -> u64 {
        let mut i = match self.hand {
            Some(h) => pos(&self.q, |e| e.0 == h).unwrap(),
            None => self.q.len() - 1,
        };
        while self.q[i].1 {
            self.q[i].1 = false;
            i = if i == 0 { self.q.len() - 1 } else { i - 1 };
        }
        self.hand = (i > 0).then(|| self.q[i - 1].0);
        self.q.remove(i).unwrap().0
    }
    fn remove(&mut self, key: u64) {
        let i = pos(&self.q, |e| e.0 == key).unwrap();
        if self.hand == Some(key) {
            self.hand = (i > 0).then(|| self.q[i - 1].0);
        }
        self.q.remove(i);
    }
}

// ---------------------------------------------------------------- LFU
/// (key, requests, time of the last request); the victim has the fewest
/// requests, then the oldest last request.
#[derive(Default)]
pub struct Lfu {
    e: Vec<(u64, u64, u64)>,
    now: u64,
}
impl Model for Lfu {
    fn hit(&mut self, key: u64, _: i64) {
        self.now += 1;
        let e = self.e.iter_mut().find(|e| e.0 == key).unwrap();
        e.1 += 1;
        e.2 = self.now;
    }
    fn insert(&mut self, key: u64, _: u64, _: i64) {
        self.now += 1;
        self.e.push((key, 1, self.now));
    }
    fn evict(&mut self) -> u64 {
        let i = (0..self.e.len())
            .min_by_key(|&i| (self.e[i].1, self.e[i].2))
            .unwrap();
        self.e.remove(i).0
    }
    fn remove(&mut self, key: u64) {
        self.e.retain(|e| e.0 != key);
    }
}

// ---------------------------------------------------------------- Random
/// The same generator and the same packing of members as the engine: a
/// uniform pick among the members, the last member filling the hole.
pub struct Random {
    m: Vec<u64>,
    rng: Rng,
}
impl Random {
    pub fn new(seed: u64) -> Self {
        Random {
            m: Vec::new(),
            rng: Rng::new(seed),
        }
    }
}
impl Model for Random {
    fn hit(&mut self, _: u64, _: i64) {}
    fn insert(&mut self, key: u64, _: u64, _: i64) {
        self.m.push(key);
    }
    fn evict(&mut self) -> u64 {
        let i = self.rng.below(self.m.len() as u64) as usize;
        self.m.swap_remove(i)
    }
    fn remove(&mut self, key: u64) {
        let i = self.m.iter().position(|&k| k == key).unwrap();
        self.m.swap_remove(i);
    }
}

// ---------------------------------------------------------------- Belady
/// The victim's next access is farthest (never = farthest), ties to the larger key.
#[derive(Default)]
pub struct Belady {
    e: Vec<(u64, u64)>,
}
fn far(next: i64) -> u64 {
    if next < 0 {
        u64::MAX
    } else {
        next as u64
    }
}
impl Model for Belady {
    fn hit(&mut self, key: u64, next: i64) {
        self.e.iter_mut().find(|e| e.0 == key).unwrap().1 = far(next);
    }
    fn insert(&mut self, key: u64, _: u64, next: i64) {
        self.e.push((key, far(next)));
    }
    fn evict(&mut self) -> u64 {
        let i = (0..self.e.len())
            .max_by_key(|&i| (self.e[i].1, self.e[i].0))
            .unwrap();
        self.e.remove(i).0
    }
    fn remove(&mut self, key: u64) {
        self.e.retain(|e| e.0 != key);
    }
}

// ---------------------------------------------------------------- LRU-K
/// Full request history per entry; fewer than k requests go first, by first
/// request, then the oldest k-th most recent request.
pub struct LruK {
    k: usize,
    e: Vec<(u64, Vec<u64>)>,
    now: u64,
}
impl LruK {
    pub fn new(k: usize) -> Self {
        LruK {
            k,
            e: Vec::new(),
            now: 0,
        }
    }
}
impl Model for LruK {
    fn hit(&mut self, key: u64, _: i64) {
        self.now += 1;
        self.e
            .iter_mut()
            .find(|e| e.0 == key)
            .unwrap()
            .1
            .push(self.now);
    }
    fn insert(&mut self, key: u64, _: u64, _: i64) {
        self.now += 1;
        self.e.push((key, vec![self.now]));
    }
    fn evict(&mut self) -> u64 {
        let k = self.k;
        let i = (0..self.e.len())
            .min_by_key(|&i| {
                let h = &self.e[i].1;
                if h.len() < k {
                    (0, h[0])
                } else {
                    (1, h[h.len() - k])
                }
            })
            .unwrap();
        self.e.remove(i).0
    }
    fn remove(&mut self, key: u64) {
        self.e.retain(|e| e.0 != key);
    }
}

/// A FIFO of ghost keys bounded by the sum of their charges.
#[derive(Default)]
struct GhostFifo {
    q: VecDeque<(u64, u64)>,
    cap: u64,
}
impl GhostFifo {
    fn add(&mut self, key: u64, c: u64) {
        if c > self.cap {
            return;
        }
        while self.q.iter().map(|e| e.1).sum::<u64>() + c > self.cap {
            self.q.pop_back();
        }
        self.q.push_front((key, c));
    }
    fn take(&mut self, key: u64) -> bool {
        match pos(&self.q, |e| e.0 == key) {
            Some(i) => {
                self.q.remove(i);
                true
            }
            None => false,
        }
    }
}

fn weight(q: &VecDeque<(u64, u64)>) -> u64 {
    q.iter().map(|e| e.1).sum()
}

fn take(q: &mut VecDeque<(u64, u64)>, key: u64) -> Option<(u64, u64)> {
    let i = pos(q, |e| e.0 == key)?;
    q.remove(i)
}

// ---------------------------------------------------------------- 2Q
pub struct TwoQ {
    ain: VecDeque<(u64, u64)>,
    am: VecDeque<(u64, u64)>,
    out: GhostFifo,
    in_cap: u64,
    ghost_hit: bool,
}
impl TwoQ {
    pub fn new(cap: u64, kin: f64, kout: f64) -> Self {
        TwoQ {
            ain: VecDeque::new(),
            am: VecDeque::new(),
            out: GhostFifo {
                q: VecDeque::new(),
                cap: (cap as f64 * kout) as u64,
            },
            in_cap: (cap as f64 * kin) as u64,
            ghost_hit: false,
        }
    }
}
impl Model for TwoQ {
    fn hit(&mut self, key: u64, _: i64) {
        if let Some(e) = take(&mut self.am, key) {
            self.am.push_front(e);
        }
    }
    fn before_insert(&mut self, key: u64, _: u64) {
        self.ghost_hit = self.out.take(key);
    }
    fn insert(&mut self, key: u64, c: u64, _: i64) {
        if self.ghost_hit {
            self.am.push_front((key, c));
        } else {
            self.ain.push_front((key, c));
        }
    }
    fn evict(&mut self) -> u64 {
        if weight(&self.ain) > self.in_cap || self.am.is_empty() {
            let (k, c) = self.ain.pop_back().unwrap();
            self.out.add(k, c);
            k
        } else {
            self.am.pop_back().unwrap().0
        }
    }
    fn remove(&mut self, key: u64) {
        take(&mut self.ain, key).or_else(|| take(&mut self.am, key));
    }
}

// ---------------------------------------------------------------- S3-FIFO
pub struct S3Fifo {
    /// (key, charge, counter)
    small: VecDeque<(u64, u64, u8)>,
    main: VecDeque<(u64, u64, u8)>,
    ghost: GhostFifo,
    small_cap: u64,
    main_cap: u64,
    threshold: u8,
    has_evicted: bool,
    ghost_hit: bool,
}
impl S3Fifo {
    pub fn new(cap: u64, small: f64, ghost: f64, threshold: u8) -> Self {
        let small_cap = (cap as f64 * small) as u64;
        S3Fifo {
            small: VecDeque::new(),
            main: VecDeque::new(),
            ghost: GhostFifo {
                q: VecDeque::new(),
                cap: (cap as f64 * ghost) as u64,
            },
            small_cap,
            main_cap: cap - small_cap,
            threshold,
            has_evicted: false,
            ghost_hit: false,
        }
    }
}
fn w3(q: &VecDeque<(u64, u64, u8)>) -> u64 {
    q.iter().map(|e| e.1).sum()
}
impl Model for S3Fifo {
    fn hit(&mut self, key: u64, _: i64) {
        let e = self
            .small
            .iter_mut()
            .chain(self.main.iter_mut())
            .find(|e| e.0 == key)
            .unwrap();
        e.2 = (e.2 + 1).min(3);
    }
    fn before_insert(&mut self, key: u64, _: u64) {
        self.ghost_hit = self.ghost.take(key);
    }
    fn insert(&mut self, key: u64, c: u64, _: i64) {
        if self.ghost_hit || (!self.has_evicted && w3(&self.small) >= self.small_cap) {
            self.main.push_front((key, c, 0));
        } else {
            self.small.push_front((key, c, 0));
        }
        self.ghost_hit = false;
    }
    fn evict(&mut self) -> u64 {
        self.has_evicted = true;
        if w3(&self.main) <= self.main_cap && !self.small.is_empty() {
            while let Some(mut e) = self.small.pop_back() {
                if e.2 >= self.threshold {
                    e.2 = 0;
                    self.main.push_front(e);
                } else {
                    self.ghost.add(e.0, e.1);
                    return e.0;
                }
            }
        }
        loop {
            let mut e = self.main.pop_back().unwrap();
            if e.2 == 0 {
                return e.0;
            }
            e.2 = e.2.min(3) - 1;
            self.main.push_front(e);
        }
    }
    fn remove(&mut self, key: u64) {
        self.small.retain(|e| e.0 != key);
        self.main.retain(|e| e.0 != key);
    }
}

// ---------------------------------------------------------------- ARC
pub struct Arc {
    t1: VecDeque<(u64, u64)>,
    t2: VecDeque<(u64, u64)>,
    b1: VecDeque<(u64, u64)>,
    b2: VecDeque<(u64, u64)>,
    p: f64,
    c: u64,
    /// 0: no ghost hit, 1: in B1, 2: in B2.
    hit: u8,
    incoming: u64,
}
impl Arc {
    pub fn new(c: u64) -> Self {
        Arc {
            t1: VecDeque::new(),
            t2: VecDeque::new(),
            b1: VecDeque::new(),
            b2: VecDeque::new(),
            p: 0.0,
            c,
            hit: 0,
            incoming: 0,
        }
    }
    fn replace(&mut self) -> u64 {
        let t1 = weight(&self.t1);
        if (t1 > 0 && (t1 as f64 > self.p || (t1 as f64 == self.p && self.hit == 2)))
            || self.t2.is_empty()
        {
            let e = self.t1.pop_back().unwrap();
            self.b1.push_front(e);
            e.0
        } else {
            let e = self.t2.pop_back().unwrap();
            self.b2.push_front(e);
            e.0
        }
    }
}
impl Model for Arc {
    fn hit(&mut self, key: u64, _: i64) {
        let e = take(&mut self.t1, key)
            .or_else(|| take(&mut self.t2, key))
            .unwrap();
        self.t2.push_front(e);
    }
    fn before_insert(&mut self, key: u64, c: u64) {
        self.incoming = c;
        self.hit = 0;
        let (b1, b2) = (weight(&self.b1) as f64, weight(&self.b2) as f64);
        if take(&mut self.b1, key).is_some() {
            self.p = (self.p + (b2 / b1).max(1.0)).min(self.c as f64);
            self.hit = 1;
        } else if take(&mut self.b2, key).is_some() {
            self.p = (self.p - (b1 / b2).max(1.0)).max(0.0);
            self.hit = 2;
        }
    }
    fn insert(&mut self, key: u64, c: u64, _: i64) {
        if self.hit == 0 {
            self.t1.push_front((key, c));
        } else {
            self.t2.push_front((key, c));
        }
        self.hit = 0;
    }
    fn evict(&mut self) -> u64 {
        if self.hit != 0 {
            return self.replace();
        }
        let (t1, t2, b1, b2) = (
            weight(&self.t1),
            weight(&self.t2),
            weight(&self.b1),
            weight(&self.b2),
        );
        if t1 + b1 + self.incoming > self.c {
            if b1 > 0 {
                self.b1.pop_back();
                self.replace()
            } else if let Some(e) = self.t1.pop_back() {
                e.0
            } else {
                self.replace()
            }
        } else {
            if t1 + b1 + t2 + b2 >= 2 * self.c && b2 > 0 {
                self.b2.pop_back();
            }
            self.replace()
        }
    }
    fn remove(&mut self, key: u64) {
        take(&mut self.t1, key).or_else(|| take(&mut self.t2, key));
    }
}

// ---------------------------------------------------------------- LIRS
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum St {
    Lir,
    Hir,
    Ghost,
}
/// S as a deque of (key, state), newest first; Q of resident HIR keys,
/// newest first; ghost ages, newest first; charges of residents.
pub struct Lirs {
    s: VecDeque<(u64, St)>,
    q: VecDeque<u64>,
    ages: VecDeque<u64>,
    charge: std::collections::HashMap<u64, u64>,
    lir_cap: u64,
    ghost_cap: usize,
    pending: bool,
}
impl Lirs {
    pub fn new(c: u64, hir_ratio: f64) -> Self {
        let hir = ((c as f64 * hir_ratio) as u64).max(1);
        Lirs {
            s: VecDeque::new(),
            q: VecDeque::new(),
            ages: VecDeque::new(),
            charge: Default::default(),
            lir_cap: c.saturating_sub(hir),
            ghost_cap: c as usize,
            pending: false,
        }
    }
    fn lir_weight(&self) -> u64 {
        self.s
            .iter()
            .filter(|e| e.1 == St::Lir)
            .map(|e| self.charge[&e.0])
            .sum()
    }
    fn is_lir(&self, key: u64) -> bool {
        self.s.iter().any(|e| e.0 == key && e.1 == St::Lir)
    }
    fn prune(&mut self) {
        while let Some(&(k, st)) = self.s.back() {
            if st == St::Lir {
                break;
            }
            self.s.pop_back();
            if st == St::Ghost {
                self.ages.retain(|&a| a != k);
            }
        }
    }
    fn shrink(&mut self) {
        while self.lir_weight() > self.lir_cap {
            self.prune();
            let Some((k, _)) = self.s.pop_back() else {
                break;
            };
            self.q.push_front(k);
        }
        // Keep S's bottom LIR.
        self.prune();
    }
}
impl Model for Lirs {
    fn hit(&mut self, key: u64, _: i64) {
        let i = pos(&self.s, |e| e.0 == key);
        match i {
            Some(i) if self.s[i].1 == St::Lir => {
                let e = self.s.remove(i).unwrap();
                self.s.push_front(e);
                self.prune();
            }
            Some(i) => {
                self.s.remove(i);
                self.q.retain(|&k| k != key);
                self.s.push_front((key, St::Lir));
                self.shrink();
            }
            None => {
                self.s.push_front((key, St::Hir));
                self.q.retain(|&k| k != key);
                self.q.push_front(key);
            }
        }
    }
    fn before_insert(&mut self, key: u64, _: u64) {
        self.pending = self.s.iter().any(|e| e.0 == key && e.1 == St::Ghost);
    }
    fn insert(&mut self, key: u64, c: u64, _: i64) {
        self.charge.insert(key, c);
        // The ghost may have been dropped by the evictions just made.
        let ghost = self.pending && self.s.iter().any(|e| e.0 == key && e.1 == St::Ghost);
        self.pending = false;
        if ghost {
            self.s.retain(|e| e.0 != key);
            self.ages.retain(|&a| a != key);
            self.s.push_front((key, St::Lir));
            self.shrink();
        } else if self.lir_weight() + c <= self.lir_cap {
            self.s.push_front((key, St::Lir));
        } else {
            self.s.push_front((key, St::Hir));
            self.q.push_front(key);
        }
    }
    fn evict(&mut self) -> u64 {
        match self.q.pop_back() {
            Some(k) => {
                if let Some(i) = pos(&self.s, |e| e.0 == k) {
                    self.s[i].1 = St::Ghost;
                    self.ages.push_front(k);
                    while self.ages.len() > self.ghost_cap {
                        let old = self.ages.pop_back().unwrap();
                        self.s.retain(|e| e.0 != old);
                    }
                }
                self.charge.remove(&k);
                k
            }
            None => {
                self.prune();
                let (k, _) = self.s.pop_back().unwrap();
                self.prune();
                self.charge.remove(&k);
                k
            }
        }
    }
    fn remove(&mut self, key: u64) {
        let lir = self.is_lir(key);
        self.s.retain(|e| e.0 != key);
        self.q.retain(|&k| k != key);
        if lir {
            self.prune();
        }
        self.charge.remove(&key);
    }
}

// ---------------------------------------------------------------- W-TinyLFU
pub struct WTinyLfu {
    window: VecDeque<(u64, u64)>,
    probation: VecDeque<(u64, u64)>,
    protected: VecDeque<(u64, u64)>,
    window_cap: u64,
    protected_cap: u64,
    sketch: FrequencySketch,
}
impl WTinyLfu {
    pub fn new(c: u64, window: f64, protected: f64) -> Self {
        let window_cap = ((c as f64 * window) as u64).max(1);
        WTinyLfu {
            window: VecDeque::new(),
            probation: VecDeque::new(),
            protected: VecDeque::new(),
            window_cap,
            protected_cap: (c.saturating_sub(window_cap) as f64 * protected) as u64,
            sketch: FrequencySketch::new(c),
        }
    }
}
impl Model for WTinyLfu {
    fn hit(&mut self, key: u64, _: i64) {
        self.sketch.add(key);
        if let Some(e) = take(&mut self.window, key) {
            self.window.push_front(e);
        } else if let Some(e) = take(&mut self.protected, key) {
            self.protected.push_front(e);
        } else {
            let e = take(&mut self.probation, key).unwrap();
            self.protected.push_front(e);
            while weight(&self.protected) > self.protected_cap {
                let d = self.protected.pop_back().unwrap();
                self.probation.push_front(d);
            }
        }
    }
    fn before_insert(&mut self, key: u64, _: u64) {
        self.sketch.add(key);
    }
    fn insert(&mut self, key: u64, c: u64, _: i64) {
        self.window.push_front((key, c));
        while weight(&self.window) > self.window_cap {
            let e = self.window.pop_back().unwrap();
            self.probation.push_front(e);
        }
    }
    fn evict(&mut self) -> u64 {
        let victim = self.probation.back().or(self.protected.back()).copied();
        if weight(&self.window) >= self.window_cap {
            let cand = self.window.pop_back().unwrap();
            let Some(v) = victim else { return cand.0 };
            if self.sketch.estimate(cand.0) > self.sketch.estimate(v.0) {
                self.probation.push_front(cand);
                take(&mut self.probation, v.0).or_else(|| take(&mut self.protected, v.0));
                v.0
            } else {
                cand.0
            }
        } else {
            match victim {
                Some(v) => {
                    take(&mut self.probation, v.0).or_else(|| take(&mut self.protected, v.0));
                    v.0
                }
                None => self.window.pop_back().unwrap().0,
            }
        }
    }
    fn remove(&mut self, key: u64) {
        take(&mut self.window, key)
            .or_else(|| take(&mut self.probation, key))
            .or_else(|| take(&mut self.protected, key));
    }
}

// ---------------------------------------------------------------- FlashCache
/// One logical block: charge units written since its erase, the tick of its
/// latest insertion or hit, its keys oldest first.
#[derive(Clone, Default)]
pub struct FcBlock {
    pub written: u64,
    pub last: u64,
    pub keys: Vec<u64>,
}

/// FlashCache (policy/flashcache.rs) from its rules, by key: sets of `ways`
/// blocks of `block` charge units; a key's set is `fold_mul(key) % sets`;
/// each set fills one open block; a full one gives way to a clean block,
/// else to a victim: the least recent block (empty ones first) unless it
/// has more than `hot` erases above the least-erased, which goes instead;
/// after an erase, a set whose physical blocks' erases exceed the coldest
/// set's (first by index) by more than `swap`, and which erased more blocks
/// itself than that set, trades physical blocks with it. Every scan is done
/// again each time.
pub struct FlashCache {
    pub sets: u64,
    pub ways: usize,
    pub block: u64,
    pub hot: u64,
    pub swap: u64,
    /// Erase blocks per logical block.
    pub k: u64,
    pub blocks: Vec<Vec<FcBlock>>,
    pub open: Vec<Option<usize>>,
    /// Per set: its physical group.
    pub group: Vec<usize>,
    /// Per physical block (group * ways + way): erases.
    pub wear: Vec<u64>,
    pub tick: u64,
    pub target: u64,
    pub pending: VecDeque<u64>,
    pub erases: u64,
    pub hot_evictions: u64,
    pub swaps: u64,
    /// Charge units the swaps programmed.
    pub swap_programmed: u64,
    /// Per set: blocks it erased to make room.
    pub set_erases: Vec<u64>,
}

impl FlashCache {
    pub fn new(sets: u64, ways: usize, block: u64, k: u64, hot: u64, swap: u64) -> Self {
        FlashCache {
            sets,
            ways,
            block,
            hot,
            swap,
            k,
            blocks: vec![vec![FcBlock::default(); ways]; sets as usize],
            open: vec![None; sets as usize],
            group: (0..sets as usize).collect(),
            wear: vec![0; sets as usize * ways],
            tick: 0,
            target: 0,
            pending: VecDeque::new(),
            erases: 0,
            hot_evictions: 0,
            swaps: 0,
            swap_programmed: 0,
            set_erases: vec![0; sets as usize],
        }
    }

    pub fn set_of(&self, key: u64) -> u64 {
        tierlab_core::hash::fold_mul(key) % self.sets
    }

    fn wear_of(&self, set: usize, way: usize) -> u64 {
        self.wear[self.group[set] * self.ways + way]
    }

    fn total(&self, set: usize) -> u64 {
        (0..self.ways).map(|w| self.wear_of(set, w)).sum()
    }

    fn choose(&mut self, set: usize, ok: &dyn Fn(&FcBlock, usize) -> bool) -> usize {
        let cands: Vec<usize> = (0..self.ways)
            .filter(|&w| ok(&self.blocks[set][w], w))
            .collect();
        let rank = |w: usize| {
            let b = &self.blocks[set][w];
            (!b.keys.is_empty(), b.last, w)
        };
        let lru = *cands.iter().min_by_key(|&&w| rank(w)).unwrap();
        let least = *cands
            .iter()
            .min_by_key(|&&w| (self.wear_of(set, w), rank(w)))
            .unwrap();
        if self.wear_of(set, lru) > self.wear_of(set, least) + self.hot {
            self.hot_evictions += 1;
            least
        } else {
            lru
        }
    }

    fn erase(&mut self, set: usize, way: usize) {
        let b = &mut self.blocks[set][way];
        b.written = 0;
        self.pending.extend(b.keys.drain(..));
        self.wear[self.group[set] * self.ways + way] += 1;
        self.erases += self.k;
        self.set_erases[set] += 1;
        let totals: Vec<u64> = (0..self.sets as usize).map(|s| self.total(s)).collect();
        let min = *totals.iter().min().unwrap();
        let cold = totals.iter().position(|&t| t == min).unwrap();
        if totals[set] > min + self.swap && self.set_erases[set] > self.set_erases[cold] {
            self.swaps += 1;
            let (gh, gc) = (self.group[set], self.group[cold]);
            for w in 0..self.ways {
                let (hw, cw) = (self.blocks[set][w].written, self.blocks[cold][w].written);
                if cw > 0 {
                    // Staged, its block erased, copied back; staging erased.
                    self.wear[gc * self.ways + w] += 1;
                    self.erases += 2 * self.k;
                    self.swap_programmed += 2 * cw;
                }
                if hw > 0 {
                    self.wear[gh * self.ways + w] += 1;
                    self.erases += self.k;
                    self.swap_programmed += hw;
                }
            }
            self.group.swap(set, cold);
        }
    }

    fn find(&self, key: u64) -> (usize, usize, usize) {
        for (s, bs) in self.blocks.iter().enumerate() {
            for (w, b) in bs.iter().enumerate() {
                if let Some(i) = b.keys.iter().position(|&k| k == key) {
                    return (s, w, i);
                }
            }
        }
        panic!("key {key:#x} not held");
    }
}

impl Model for FlashCache {
    fn hit(&mut self, key: u64, _: i64) {
        let (s, w, _) = self.find(key);
        self.tick += 1;
        self.blocks[s][w].last = self.tick;
    }
    fn before_insert(&mut self, key: u64, charge: u64) {
        // An empty object takes one byte of its block.
        let charge = charge.max(1);
        let set = self.set_of(key) as usize;
        self.target = set as u64;
        if let Some(o) = self.open[set] {
            if self.blocks[set][o].written + charge <= self.block {
                return;
            }
        }
        let way = match (0..self.ways).find(|&w| self.blocks[set][w].written == 0) {
            Some(w) => w,
            None => {
                let w = self.choose(set, &|_, _| true);
                self.erase(set, w);
                w
            }
        };
        self.open[set] = Some(way);
    }
    fn needs_room(&self) -> bool {
        !self.pending.is_empty()
    }
    fn insert(&mut self, key: u64, charge: u64, _: i64) {
        let charge = charge.max(1);
        let set = self.target as usize;
        let way = self.open[set].unwrap();
        self.tick += 1;
        let b = &mut self.blocks[set][way];
        b.written += charge;
        b.last = self.tick;
        b.keys.push(key);
    }
    fn evict(&mut self) -> u64 {
        if self.pending.is_empty() {
            // Over capacity with nothing queued: a block with keys of the
            // target set (not its open block), else of the next sets.
            for i in 0..self.sets {
                let set = ((self.target + i) % self.sets) as usize;
                let skip = if i == 0 { self.open[set] } else { None };
                let ok = move |b: &FcBlock, w: usize| Some(w) != skip && !b.keys.is_empty();
                if (0..self.ways).any(|w| ok(&self.blocks[set][w], w)) {
                    let w = self.choose(set, &ok);
                    self.erase(set, w);
                    break;
                }
            }
        }
        self.pending.pop_front().unwrap()
    }
    fn remove(&mut self, key: u64) {
        let (s, w, i) = self.find(key);
        self.blocks[s][w].keys.remove(i);
    }
}
