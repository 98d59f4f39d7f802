//! Helpers shared by the integration tests: naive reference models of the
//! eviction policies, seeded trace shapes and config builders. Each test
//! binary uses a part of this module.
#![allow(dead_code)]

pub mod models;

use models::Model;
use std::collections::VecDeque;
use tierlab_core::config::Config;
use tierlab_core::hierarchy::Hierarchy;
use tierlab_core::rng::Rng;

/// A policy as the naive models know it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Lru,
    Fifo,
    /// CLOCK with a saturating counter of `max` = 2^bits - 1.
    Clock {
        max: u8,
    },
    Sieve,
    Lfu,
    /// Seeded as the tests' hierarchies are (seed 1).
    Random,
    Belady,
    LruK(usize),
    TwoQ(f64, f64),
    S3Fifo(f64, f64, u8),
    Arc,
    Lirs(f64),
    WTinyLfu(f64, f64),
    /// FlashCache with blocks of one charge unit: (ways, hot, swap).
    FlashCache(usize, u64, u64),
}

impl Kind {
    /// The model of a policy kept in `models`, for a capacity of `cap`.
    fn model(self, cap: u64) -> Option<Box<dyn Model>> {
        Some(match self {
            Kind::Lru | Kind::Fifo | Kind::Clock { .. } => return None,
            Kind::Sieve => Box::<models::Sieve>::default(),
            Kind::Lfu => Box::<models::Lfu>::default(),
            Kind::Random => Box::new(models::Random::new(1)),
            Kind::Belady => Box::<models::Belady>::default(),
            Kind::LruK(k) => Box::new(models::LruK::new(k)),
            Kind::TwoQ(i, o) => Box::new(models::TwoQ::new(cap, i, o)),
            Kind::S3Fifo(s, g, t) => Box::new(models::S3Fifo::new(cap, s, g, t)),
            Kind::Arc => Box::new(models::Arc::new(cap)),
            Kind::Lirs(h) => Box::new(models::Lirs::new(cap, h)),
            Kind::WTinyLfu(w, p) => Box::new(models::WTinyLfu::new(cap, w, p)),
            Kind::FlashCache(ways, hot, swap) => Box::new(models::FlashCache::new(
                cap / ways as u64,
                ways,
                1,
                1,
                hot,
                swap,
            )),
        })
    }
}

/// The policy variants a naive model exists for, as (TOML value of a tier's
/// `policy`, model). `None` when `name` has no model: a new policy must add
/// one here (see policies_vs_naive.rs, `every_policy_has_a_naive_model`).
pub fn variants(name: &str) -> Option<Vec<(String, Kind)>> {
    Some(match name {
        "lru" => vec![("\"lru\"".into(), Kind::Lru)],
        "fifo" => vec![("\"fifo\"".into(), Kind::Fifo)],
        "clock" => [1u8, 2, 3, 8]
            .iter()
            .map(|&b| {
                (
                    format!("{{ type = \"clock\", bits = {b} }}"),
                    Kind::Clock {
                        max: ((1u32 << b) - 1) as u8,
                    },
                )
            })
            .collect(),
        "sieve" => vec![("\"sieve\"".into(), Kind::Sieve)],
        "lfu" => vec![("\"lfu\"".into(), Kind::Lfu)],
        "random" => vec![("\"random\"".into(), Kind::Random)],
        "belady" => vec![("\"belady\"".into(), Kind::Belady)],
        "arc" => vec![("\"arc\"".into(), Kind::Arc)],
        "lru-k" => [1usize, 2, 3]
            .iter()
            .map(|&k| (format!("{{ type = \"lru-k\", k = {k} }}"), Kind::LruK(k)))
            .collect(),
        "2q" => vec![
            ("\"2q\"".into(), Kind::TwoQ(0.25, 0.5)),
            (
                "{ type = \"2q\", kin = 0.5, kout = 1.0 }".into(),
                Kind::TwoQ(0.5, 1.0),
            ),
        ],
        "s3-fifo" => vec![
            ("\"s3-fifo\"".into(), Kind::S3Fifo(0.1, 0.9, 2)),
            (
                "{ type = \"s3-fifo\", small_size_ratio = 0.3, ghost_size_ratio = 0.5, move_to_main_threshold = 1 }".into(),
                Kind::S3Fifo(0.3, 0.5, 1),
            ),
        ],
        "lirs" => vec![
            ("\"lirs\"".into(), Kind::Lirs(0.01)),
            (
                "{ type = \"lirs\", hir_ratio = 0.25 }".into(),
                Kind::Lirs(0.25),
            ),
        ],
        "w-tinylfu" => vec![
            ("\"w-tinylfu\"".into(), Kind::WTinyLfu(0.01, 0.8)),
            (
                "{ type = \"w-tinylfu\", window_ratio = 0.2, protected_ratio = 0.5 }".into(),
                Kind::WTinyLfu(0.2, 0.5),
            ),
        ],
        // Blocks of one byte (one object with unit sizes) and one way fit
        // every capacity the shared tests use: each set one block, objects
        // larger than it alone in theirs (flashcache_props.rs tests the
        // organisation at larger geometries).
        "flashcache" => vec![(
            "{ type = \"flashcache\", ways = 1, block = 1, erase_block = 1, page = 1, hot_threshold = 0, swap_threshold = 3 }".into(),
            Kind::FlashCache(1, 0, 3),
        )],
        _ => return None,
    })
}

/// A naive model of one tier: a deque, newest entry at the front, linear
/// search; the newer policies' orders live in `models`.
pub struct Naive {
    pub kind: Kind,
    pub cap: u64,
    /// Every object counts 1 (capacity in objects).
    pub unit: bool,
    pub used: u64,
    /// (key, size, reference counter), newest first.
    pub q: VecDeque<(u64, u32, u8)>,
    pub evictions: u64,
    pub rejected: u64,
    ext: Option<Box<dyn Model>>,
    /// The next access of the request being served (Belady).
    pub next: i64,
}

impl Naive {
    pub fn new(kind: Kind, cap: u64, unit: bool) -> Self {
        Naive {
            kind,
            cap,
            unit,
            used: 0,
            q: VecDeque::new(),
            evictions: 0,
            rejected: 0,
            ext: kind.model(cap),
            next: -1,
        }
    }

    fn charge(&self, size: u32) -> u64 {
        if self.unit {
            1
        } else {
            size as u64
        }
    }

    pub fn pos(&self, key: u64) -> Option<usize> {
        self.q.iter().position(|e| e.0 == key)
    }

    pub fn contains(&self, key: u64) -> bool {
        self.pos(key).is_some()
    }

    /// A hit on a present key; the stored size does not change.
    pub fn hit(&mut self, key: u64) {
        let i = self.pos(key).expect("hit on an absent key");
        if let Some(m) = &mut self.ext {
            m.hit(key, self.next);
            return;
        }
        match self.kind {
            Kind::Lru => {
                let e = self.q.remove(i).unwrap();
                self.q.push_front(e);
            }
            Kind::Fifo => {}
            Kind::Clock { max } => {
                let f = &mut self.q[i].2;
                if *f < max {
                    *f += 1;
                }
            }
            _ => unreachable!("kept in `models`"),
        }
    }

    pub fn remove(&mut self, key: u64) -> Option<(u64, u32)> {
        let i = self.pos(key)?;
        let e = self.q.remove(i).unwrap();
        if let Some(m) = &mut self.ext {
            m.remove(key);
        }
        self.used -= self.charge(e.1);
        Some((e.0, e.1))
    }

    fn evict_one(&mut self) -> (u64, u32) {
        loop {
            let back = self.q.len() - 1;
            if let Kind::Clock { .. } = self.kind {
                if self.q[back].2 > 0 {
                    let mut e = self.q.pop_back().unwrap();
                    e.2 -= 1;
                    self.q.push_front(e);
                    continue;
                }
            }
            let e = self.q.pop_back().unwrap();
            self.used -= self.charge(e.1);
            self.evictions += 1;
            return (e.0, e.1);
        }
    }

    /// Inserts an absent key, evicting the oldest entries until it fits;
    /// returns the victims in eviction order, or None when the object is
    /// larger than the whole capacity (nothing is evicted then).
    pub fn insert(&mut self, key: u64, size: u32) -> Option<Vec<(u64, u32)>> {
        debug_assert!(!self.contains(key));
        let c = self.charge(size);
        if c > self.cap {
            self.rejected += 1;
            return None;
        }
        let mut victims = Vec::new();
        if let Some(mut m) = self.ext.take() {
            m.before_insert(key, c);
            while self.used + c > self.cap || m.needs_room() {
                let k = m.evict();
                let i = self
                    .pos(k)
                    .unwrap_or_else(|| panic!("{:?}: the model evicted an absent key", self.kind));
                let e = self.q.remove(i).unwrap();
                self.used -= self.charge(e.1);
                self.evictions += 1;
                victims.push((e.0, e.1));
            }
            m.insert(key, c, self.next);
            self.ext = Some(m);
        } else {
            while self.used + c > self.cap {
                victims.push(self.evict_one());
            }
        }
        self.q.push_front((key, size, 0));
        self.used += c;
        Some(victims)
    }

    /// A read through a single cache: true on a hit.
    pub fn access(&mut self, key: u64, size: u32) -> bool {
        if self.contains(key) {
            self.hit(key);
            true
        } else {
            self.insert(key, size);
            false
        }
    }

    pub fn sorted_keys(&self) -> Vec<u64> {
        let mut k: Vec<u64> = self.q.iter().map(|e| e.0).collect();
        k.sort_unstable();
        k
    }
}

/// A two-tier hierarchy of naive tiers, reads only: the reference for the
/// golden two-tier numbers. Returns the level where each read was found.
pub struct NaiveTwo {
    pub t: [Naive; 2],
    pub exclusive: bool,
}

impl NaiveTwo {
    pub fn access(&mut self, key: u64, size: u32) -> usize {
        if self.t[0].contains(key) {
            self.t[0].hit(key);
            return 0;
        }
        let level = if self.t[1].contains(key) { 1 } else { 2 };
        if self.exclusive {
            if level == 1 {
                // The promoted copy takes the request's size (hierarchy.rs).
                self.t[1].remove(key);
            }
            if let Some(victims) = self.t[0].insert(key, size) {
                for (k, s) in victims {
                    self.t[1].insert(k, s);
                }
            }
        } else {
            if level == 1 {
                self.t[1].hit(key);
            } else {
                self.t[1].insert(key, size);
            }
            // Clean victims of an inclusive hierarchy are dropped.
            self.t[0].insert(key, size);
        }
        level
    }
}

/// Seeded trace shapes, as object ids (already spread over the u64 range).
pub struct Keys {
    rng: Rng,
    ids: Vec<u64>,
}

impl Keys {
    /// `n` distinct random non-zero 64-bit ids to draw from.
    pub fn new(seed: u64, n: usize) -> Self {
        let mut rng = Rng::new(seed);
        let mut ids = Vec::with_capacity(n);
        let mut seen = std::collections::HashSet::new();
        while ids.len() < n {
            let k = rng.next_u64() | 1;
            if seen.insert(k) {
                ids.push(k);
            }
        }
        Keys { rng, ids }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    pub fn id(&self, i: usize) -> u64 {
        self.ids[i]
    }

    /// Zipf-like ranks over the first `n` ids: rank i with weight 1/(i+1)^alpha.
    pub fn zipf(&mut self, n: usize, alpha: f64, len: usize) -> Vec<u64> {
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for i in 0..n {
            acc += 1.0 / ((i + 1) as f64).powf(alpha);
            cdf.push(acc);
        }
        (0..len)
            .map(|_| {
                let u = self.rng.next_f64() * acc;
                let i = cdf.partition_point(|&c| c <= u).min(n - 1);
                self.ids[i]
            })
            .collect()
    }

    pub fn uniform(&mut self, n: usize, len: usize) -> Vec<u64> {
        (0..len)
            .map(|_| self.ids[self.rng.below(n as u64) as usize])
            .collect()
    }

    /// A Zipf hot set over the first `hot` ids interrupted by loops over a
    /// cold range of `cold` ids and scans of never-seen ids.
    pub fn scan_mix(&mut self, hot: usize, cold: usize, len: usize) -> Vec<u64> {
        let mut out = Vec::with_capacity(len);
        let mut fresh = hot + cold;
        while out.len() < len {
            let burst = 20 + self.rng.below(200) as usize;
            out.extend(self.zipf(hot, 1.0, burst));
            match self.rng.below(3) {
                0 => {
                    let start = self.rng.below(cold as u64) as usize;
                    let n = 1 + self.rng.below(2 * cold as u64) as usize;
                    out.extend((0..n).map(|i| self.ids[hot + (start + i) % cold]));
                }
                1 => {
                    let n = 1 + self.rng.below(50) as usize;
                    for _ in 0..n {
                        if fresh < self.ids.len() {
                            out.push(self.ids[fresh]);
                            fresh += 1;
                        }
                    }
                }
                _ => {
                    for _ in 0..self.rng.below(100) {
                        let h = self.zipf(hot, 1.0, 1)[0];
                        out.push(h);
                        out.push(self.ids[hot + self.rng.below(cold as u64) as usize]);
                    }
                }
            }
        }
        out.truncate(len);
        out
    }

    /// Keys 0..n in order, over and over.
    pub fn looped(&self, n: usize, len: usize) -> Vec<u64> {
        (0..len).map(|i| self.ids[i % n]).collect()
    }
}

/// A single-tier config with the given TOML `policy` value and capacity.
pub fn single_tier(policy: &str, capacity: u64) -> Config {
    Config::from_toml_str(&format!(
        "[[tier]]\nname = \"t0\"\ntech = \"DRAM-DDR3\"\ncapacity = {capacity}\npolicy = {policy}\n"
    ))
    .unwrap()
}

pub fn build(cfg: &Config, unit: bool) -> Hierarchy {
    tierlab_core::run::assembly::build_hierarchy(cfg, 0, unit, 1)
        .unwrap()
        .0
}

pub fn sorted_keys(h: &Hierarchy, tier: usize) -> Vec<u64> {
    let mut k: Vec<u64> = h.entries(tier).map(|(k, _, _)| k).collect();
    k.sort_unstable();
    k
}

/// The repository root (two levels above this crate).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
