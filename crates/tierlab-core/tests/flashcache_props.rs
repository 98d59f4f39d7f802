//! The flashcache policy against its naive model (tests/common/models.rs),
//! request by request at random geometries, with deletes and objects larger
//! than a block; then the paper's qualitative claims: wear-aware replacement
//! spreads erases more evenly than plain set-LRU on a skewed workload, and
//! set swaps are rare.

mod common;

use common::models::{FlashCache, Model};
use common::{build, sorted_keys, Keys};
use proptest::prelude::*;
use tierlab_core::config::Config;
use tierlab_core::device::wear::WearSpread;
use tierlab_core::hierarchy::Hierarchy;
use tierlab_core::{Op, Request};

#[derive(Clone, Debug)]
struct Geo {
    sets: u64,
    ways: usize,
    /// A block in charge units (objects, or bytes).
    block: u64,
    /// Erase blocks per logical block.
    k: u64,
    hot: u64,
    swap: u64,
}

fn config(g: &Geo) -> Config {
    let cap = g.sets * g.ways as u64 * g.block;
    // With unit sizes a page is 1 byte, so `block` bytes are `block` objects.
    let erase = g.block / g.k;
    Config::from_toml_str(&format!(
        "[[tier]]\nname = \"flash\"\ntech = \"NAND-SLC\"\ncapacity = {cap}\n\
         policy = {{ type = \"flashcache\", ways = {}, block = {}, erase_block = {erase}, \
         page = 1, hot_threshold = {}, swap_threshold = {} }}\n",
        g.ways, g.block, g.hot, g.swap
    ))
    .unwrap()
}

/// The model as a tier: a hit, or an insertion with its evictions.
struct ModelTier {
    m: FlashCache,
    unit: bool,
    cap: u64,
    used: u64,
    /// Key -> charge.
    held: std::collections::BTreeMap<u64, u64>,
}

impl ModelTier {
    fn access(&mut self, op: Op, key: u64, size: u32) -> Option<bool> {
        let c = if self.unit { 1 } else { size as u64 };
        if op == Op::Delete {
            if let Some(c) = self.held.remove(&key) {
                self.m.remove(key);
                self.used -= c;
            }
            return None;
        }
        if let Some(&held) = self.held.get(&key) {
            if op == Op::Write && !self.unit && held != c {
                // A write of another size replaces the entry.
                self.held.remove(&key);
                self.m.remove(key);
                self.used -= held;
                self.insert(key, c);
            } else {
                self.m.hit(key, -1);
            }
            return Some(true);
        }
        self.insert(key, c);
        Some(false)
    }

    fn insert(&mut self, key: u64, c: u64) {
        if c > self.cap {
            return;
        }
        self.m.before_insert(key, c);
        while self.used + c > self.cap || self.m.needs_room() {
            let v = self.m.evict();
            self.used -= self.held.remove(&v).expect("the model evicted a held key");
        }
        self.m.insert(key, c, -1);
        self.held.insert(key, c);
        self.used += c;
    }
}

fn run_both(g: &Geo, unit: bool, reqs: &[(Op, u64, u32)]) {
    let mut h: Hierarchy = build(&config(g), unit);
    let cap = g.sets * g.ways as u64 * g.block;
    let mut m = ModelTier {
        m: FlashCache::new(g.sets, g.ways, g.block, g.k, g.hot, g.swap),
        unit,
        cap,
        used: 0,
        held: Default::default(),
    };
    for (i, &(op, key, size)) in reqs.iter().enumerate() {
        let r = Request {
            op,
            ..Request::read(key, size)
        };
        let (level, _) = h.access(&r);
        let want = m.access(op, key, size);
        if let Some(want) = want {
            assert_eq!(
                level == Some(0),
                want,
                "{g:?} unit {unit}: request #{i} {op:?} {key:#x} {size}"
            );
        }
        assert_eq!(
            sorted_keys(&h, 0),
            m.held.keys().copied().collect::<Vec<_>>(),
            "{g:?} unit {unit}: contents after request #{i}"
        );
    }
    let w = h.tiers[0].block_wear().unwrap();
    let mm = &m.m;
    assert_eq!(w.table, mm.wear, "{g:?}: wear status table");
    assert_eq!(w.erases, mm.erases, "{g:?}: erases");
    assert_eq!(w.hot_block_evictions, mm.hot_evictions, "{g:?}: hot blocks");
    assert_eq!(w.hot_set_swaps, mm.swaps, "{g:?}: swaps");
    // One byte per charge unit in both modes here (page = 1).
    assert_eq!(w.swap_bytes_programmed, mm.swap_programmed, "{g:?}");
    assert_eq!(h.tiers[0].used(), m.used);
}

fn geo() -> impl Strategy<Value = Geo> {
    (
        1u64..=4,
        1usize..=4,
        1u64..=3,
        0u64..=2,
        0u64..=6,
        prop::bool::ANY,
    )
        .prop_map(|(sets, ways, kk, hot, swap, big)| {
            // Blocks of k erase blocks of 1 or 64 units.
            let erase = if big { 64 } else { 1 };
            Geo {
                sets,
                ways,
                block: kk * erase,
                k: kk,
                hot,
                swap,
            }
        })
}

fn requests(unit: bool) -> impl Strategy<Value = Vec<(Op, u64, u32)>> {
    let op = prop_oneof![8 => Just(Op::Read), 2 => Just(Op::Write), 1 => Just(Op::Delete)];
    // A skewed key space: low keys far more often.
    let key = prop_oneof![6 => 0u64..8, 3 => 0u64..40, 1 => 0u64..400];
    let size = if unit {
        (1u32..=1).boxed()
    } else {
        (1u32..=200).boxed()
    };
    prop::collection::vec((op, key, size), 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn unit_sizes_match_the_model(g in geo(), reqs in requests(true)) {
        run_both(&g, true, &reqs);
    }

    #[test]
    fn byte_sizes_match_the_model(g in geo(), reqs in requests(false)) {
        run_both(&g, false, &reqs);
    }
}

/// A Zipf trace of `n` pages at the paper's geometry scaled down: 16 ways
/// of 32 pages (128 KiB of 4 KiB pages), 8 sets (16 MiB). With `hot_set`,
/// every fourth request is a new page of set 0, which then erases more
/// than the others.
fn zipf_run(hot: u64, swap: u64, n: usize, hot_set: bool) -> (WearSpread, u64, u64) {
    let cfg = Config::from_toml_str(&format!(
        "[[tier]]\nname = \"flash\"\ntech = \"NAND-SLC\"\ncapacity = \"16MiB\"\n\
         policy = {{ type = \"flashcache\", hot_threshold = {hot}, swap_threshold = {swap} }}\n"
    ))
    .unwrap();
    let mut h = build(&cfg, false);
    let mut k = Keys::new(7, 40_000);
    let mut fresh =
        (1u64 << 40..).filter(|&key| FlashCache::new(8, 1, 1, 1, 0, 0).set_of(key) == 0);
    for (i, key) in k.zipf(40_000, 0.9, n).into_iter().enumerate() {
        let key = if hot_set && i % 4 == 0 {
            fresh.next().unwrap()
        } else {
            key
        };
        h.access(&Request::read(key, 4096));
    }
    let w = h.tiers[0].block_wear().unwrap();
    (
        WearSpread::of(&w.table).unwrap(),
        w.hot_set_swaps,
        w.block_erases,
    )
}

#[test]
fn wear_aware_replacement_evens_out_wear() {
    let n = 300_000;
    let (plain, _, _) = zipf_run(u64::MAX / 2, u64::MAX / 2, n, false);
    let (aware, swaps, _) = zipf_run(2, 64, n, false);
    assert!(
        aware.std < plain.std / 2.0 && aware.max_over_mean < plain.max_over_mean,
        "wear-aware {aware:?} against set-LRU {plain:?}"
    );
    // Hashing spreads misses evenly over the sets: no set is hot.
    assert_eq!(swaps, 0);
}

#[test]
fn set_swaps_level_a_hot_set_and_are_rare() {
    let n = 300_000;
    let (plain, none, _) = zipf_run(8, u64::MAX / 2, n, true);
    let (swapped, swaps, erased) = zipf_run(8, 256, n, true);
    assert_eq!(none, 0);
    assert!(swaps >= 1, "the hot set never swapped");
    assert!(
        swaps * 100 < erased,
        "{swaps} swaps for {erased} block erases"
    );
    assert!(
        swapped.max_over_mean < plain.max_over_mean,
        "with swaps {swapped:?}, without {plain:?}"
    );
}

/// The wear figures of a DRAM + NAND run recomputed by hand from the
/// counters and the catalog: erases of a plain NAND tier from its bytes
/// and the datasheet's erase block, lifetime, DWPD and TBW from its
/// endurance; a flashcache tier's from its own exact counts.
#[test]
fn wear_figures_recomputed_by_hand() {
    use tierlab_core::device::wear::{WearSpread as Spread, SECONDS_PER_YEAR};
    use tierlab_core::prelude::Runner;
    for policy in ["\"clock\"", "{ type = \"flashcache\", hot_threshold = 2 }"] {
        let cfg = Config::from_toml_str(&format!(
            "[workload]\ntype = \"zipf\"\nalpha = 0.9\nobjects = 20000\nrequests = 200000\n\
             object_size = \"4KiB\"\nseed = 3\n\
             [hierarchy]\nfill = \"exclusive\"\n\
             [[tier]]\nname = \"dram\"\ntech = \"DRAM-DDR3\"\ncapacity = \"4MiB\"\n\
             [[tier]]\nname = \"flash\"\ntech = \"NAND-SLC\"\ncapacity = \"16MiB\"\npolicy = {policy}\n"
        ))
        .unwrap();
        let r = Runner::run(&cfg).unwrap();
        let (dram, t) = (&r.tiers[0], &r.tiers[1]);
        // DRAM does not erase; its endurance (1e16) still bounds its life.
        assert_eq!(dram.wear.erases, None);
        assert_eq!(dram.wear.bytes_programmed, dram.counters.bytes_in);
        // 4 KiB objects: two 2 KiB NAND pages each, one DRAM access unit
        // of 64 bytes per 64.
        assert_eq!(dram.counters.pages_programmed, dram.counters.bytes_in / 64);
        let secs = r.total_time_ns / 1e9;
        let cap = 16.0 * (1u64 << 20) as f64;
        let bytes = t.wear.bytes_programmed as f64;
        let swaps = t.wear.hot_set_swaps;
        if policy == "\"clock\"" {
            assert_eq!(t.counters.pages_programmed, t.counters.bytes_in / 2048);
            assert_eq!(t.wear.erases, Some(t.counters.bytes_in / 131072));
            assert_eq!(t.wear.wear_spread, None);
            assert_eq!(swaps, None);
        } else {
            let w = &t.wear;
            assert!(w.erases.unwrap() > 0);
            // No set is hot under a hashed Zipf workload: nothing copied.
            assert_eq!((swaps, w.bytes_programmed), (Some(0), t.counters.bytes_in));
            // Each erased logical block is 4 erase blocks of 32 KiB; the
            // histogram's erase blocks add up to the tier's 512.
            let hist = w.wear_histogram.as_ref().unwrap();
            assert_eq!(hist.iter().map(|p| p[1]).sum::<u64>(), 512);
            assert_eq!(
                hist.iter().map(|p| p[0] * p[1]).sum::<u64>(),
                w.erases.unwrap()
            );
            let per_block: Vec<u64> = hist
                .iter()
                .flat_map(|p| std::iter::repeat_n(p[0], (p[1] / 4) as usize))
                .collect();
            assert_eq!(w.wear_spread, Spread::of(&per_block));
        }
        let years = 1e5 * cap / (bytes / secs) / SECONDS_PER_YEAR;
        assert!((t.wear.lifetime_years.unwrap() / years - 1.0).abs() < 1e-12);
        assert!((t.wear.dwpd.unwrap() / (bytes / secs * 86400.0 / cap) - 1.0).abs() < 1e-12);
        assert!((t.wear.tbw_tb.unwrap() - 1e5 * cap / 1e12).abs() < 1e-9);
    }
}
