//! The stack against a naive O(n) per request model, the exact curve against
//! simulated LRU tiers, SHARDS against the exact curve.

use super::hist::{bin_of, bin_top, AtSizes};
use super::shards::{sample_hash, Shards, MODULUS, RAW_CHUNK};
use super::*;
use crate::config::Config;
use crate::error::Error;
use crate::request::Request;
use crate::run::curve_sizes::scale;
use crate::run::Runner;
use crate::run::{curve, parse_sizes, resolve_sizes, simulate_sizes, Ask};
use crate::source::synth::{Pattern, SynthSpec};
use crate::source::tools::trace_stats;
use crate::source::Source;
use crate::units::Size;

/// A tiny deterministic generator (xorshift64*), so the tests need no crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The textbook LRU stack: a list, most recent first.
#[derive(Default)]
struct NaiveStack(Vec<(u64, u32)>);
impl NaiveStack {
    fn access(&mut self, key: u64, w: u32) -> Option<u64> {
        let pos = self.0.iter().position(|&(k, _)| k == key);
        let d = pos.map(|p| self.0[..p].iter().map(|&(_, w)| w as u64).sum::<u64>() + w as u64);
        if let Some(p) = pos {
            self.0.remove(p);
        }
        self.0.insert(0, (key, w));
        d
    }
    fn remove(&mut self, key: u64) {
        self.0.retain(|&(k, _)| k != key);
    }
}

#[test]
fn stack_distances_equal_the_naive_model() {
    // Long enough to renumber the time range several times (MIN_RANGE).
    // Sizes drawn anew at each request, or fixed (unit): a weight that
    // moves unchanged skips the shared part of its two tree paths. Many
    // keys: times hundreds of blocks apart, paths that join late.
    for (seed, keys, deletes, unit) in [
        (1u64, 50u64, false, false),
        (2, 300, true, false),
        (3, 3, true, false),
        (4, 300, true, true),
        (5, 4_000, false, true),
        (6, 4_000, true, false),
    ] {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut fast, mut naive) = (Stack::new(), NaiveStack::default());
        for i in 0..200_000 {
            // Skewed keys: half the requests go to a tenth of them.
            let key = if rng.below(2) == 0 {
                rng.below(keys / 10 + 1)
            } else {
                rng.below(keys)
            } * 0x1000;
            if deletes && rng.below(50) == 0 {
                fast.remove(key);
                naive.remove(key);
                continue;
            }
            let w = if unit { 1 } else { 1 + rng.below(5000) as u32 };
            assert_eq!(
                fast.access(key, w),
                naive.access(key, w),
                "request {i}, seed {seed}"
            );
            assert_eq!(fast.len(), naive.0.len());
        }
    }
}

#[test]
fn bins_round_trip() {
    let mut rng = Rng(99);
    for _ in 0..100_000 {
        let d = rng.next() >> rng.below(64);
        let b = bin_of(d);
        assert!(bin_top(b) >= d, "{d}");
        assert_eq!(bin_of(bin_top(b)), b);
        if let Some(next) = bin_top(b).checked_add(1) {
            assert_eq!(bin_of(next), b + 1);
        }
        // The bin is narrow: 1/2048 of the distance.
        assert!((bin_top(b) - d) as f64 <= d as f64 / 2048.0, "{d}");
    }
    // Below 2^12 every distance has its own bin.
    for d in 0..4096u64 {
        assert_eq!(bin_top(bin_of(d)), d);
    }
    assert_eq!(bin_top(bin_of(4096)), 4097);
}

#[test]
fn sizes_find_a_distance_as_a_binary_search_does() {
    let mut rng = Rng(7);
    for case in 0..200 {
        // Sizes small (one per log bin) and large (several in one bin),
        // repeated and unsorted, as a user may give them.
        let n = 1 + rng.below(60) as usize;
        let scale = 1u64 << rng.below(40);
        let sizes: Vec<u64> = (0..n).map(|_| rng.below(5000) * scale / 64).collect();
        let at = AtSizes::new(sizes.clone());
        let mut sorted = sizes;
        sorted.sort_unstable();
        sorted.dedup();
        let mut probes: Vec<u64> = sorted
            .iter()
            .flat_map(|&c| [c.saturating_sub(1), c, c + 1])
            .collect();
        probes.extend((0..300).map(|_| rng.next() >> rng.below(64)));
        probes.extend([0, u64::MAX]);
        for d in probes {
            let want = sorted.partition_point(|&c| c < d);
            assert_eq!(
                at.count_below(d),
                want,
                "case {case}, d {d}, sizes {sorted:?}"
            );
        }
    }
}

fn zipf_config(objects: u64, requests: u64, write_ratio: f64, policy: &str, extra: &str) -> Config {
    Config::from_toml_str(&format!(
        "[workload]\ntype = \"zipf\"\nalpha = 0.9\nobjects = {objects}\nrequests = {requests}\n\
         write_ratio = {write_ratio}\nseed = 5\n{extra}\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 1\npolicy = \"{policy}\"\n"
    ))
    .unwrap()
}

fn zipf_source(objects: u64, requests: u64, alpha: f64, size: u32) -> Source {
    Source::Synth(SynthSpec {
        pattern: Pattern::Zipf { alpha },
        objects,
        requests,
        object_size: size,
        seed: 11,
        write_ratio: 0.0,
    })
}

/// Runs one LRU (or any policy) tier at `capacity` through the simulator.
fn simulated(cfg: &Config, capacity: u64) -> f64 {
    let mut c = cfg.clone();
    c.tiers[0].capacity = Size::Absolute(capacity);
    Runner::run(&c).unwrap().miss_ratio
}

#[test]
fn exact_curve_equals_simulated_lru_in_objects() {
    let cfg = zipf_config(2000, 60_000, 0.2, "lru", "unit_size = true");
    let source = cfg.workload.as_ref().unwrap().source().unwrap();
    let sizes = vec![1, 7, 100, 333, 1000, 1999, 2000, 5000];
    let opts = MrcOptions {
        unit_size: true,
        sizes: Some(sizes.clone()),
    };
    let at = exact(&source, &opts, |_| true).unwrap();
    let whole = exact(
        &source,
        &MrcOptions {
            unit_size: true,
            sizes: None,
        },
        |_| true,
    )
    .unwrap();
    for (i, &c) in sizes.iter().enumerate() {
        let sim = simulated(&cfg, c);
        assert_eq!(at.miss_ratios[i], sim, "capacity {c}");
        // Below 4096 objects the whole curve has a point at every distance.
        assert_eq!(whole.at(c), sim, "capacity {c}");
    }
}

#[test]
fn exact_curve_equals_simulated_lru_in_bytes() {
    // Varied sizes: the synthetic object size is fixed, so write a CSV
    // with per-key sizes instead.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    let mut rng = Rng(7);
    let mut text = String::new();
    let mut largest = 0;
    for i in 0..40_000u64 {
        let k = rng.below(40).min(rng.below(800));
        let size = 100 + (k * 7919) % 4000;
        largest = largest.max(size);
        text += &format!("{i},{k},{size}\n");
    }
    std::fs::write(&path, text).unwrap();
    let cfg = Config::from_toml_str(&format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 1\npolicy = \"lru\"\n",
        path.to_str().unwrap()
    ))
    .unwrap();
    let source = cfg.workload.as_ref().unwrap().source().unwrap();
    // At least the largest object (at most 4099 bytes), where the definition is exact.
    let sizes = vec![4100, 10_000, 123_457, 400_000, 1_000_000, 2_000_000];
    let opts = MrcOptions {
        unit_size: false,
        sizes: Some(sizes.clone()),
    };
    let at = exact(&source, &opts, |_| true).unwrap();
    for (i, &c) in sizes.iter().enumerate() {
        assert_eq!(at.miss_ratios[i], simulated(&cfg, c), "capacity {c}");
    }
    // The curve says from which size on it is exact.
    assert_eq!(at.largest, largest);
    let sampled = shards(&source, Sampling::Rate(1.0), &opts, |_| true).unwrap();
    assert_eq!(sampled.largest, largest);
    let unit = MrcOptions {
        unit_size: true,
        sizes: None,
    };
    assert_eq!(exact(&source, &unit, |_| true).unwrap().largest, 1);
}

#[test]
fn simulated_sizes_equal_single_runs() {
    for policy in ["fifo", "clock", "lru"] {
        let cfg = zipf_config(3000, 50_000, 0.1, policy, "unit_size = true");
        let sizes = [Size::Absolute(10), Size::Percent(5.0), Size::Absolute(900)];
        let mrc = simulate_sizes(&cfg, &sizes, |_| true).unwrap();
        // 5% of the 3,000-object footprint (as far as the trace touches it).
        let footprint = trace_stats(&cfg.workload.as_ref().unwrap().source().unwrap(), |_| true)
            .unwrap()
            .unique_keys;
        let want = [10, footprint * 5 / 100, 900];
        let mut want_sorted = want.to_vec();
        want_sorted.sort_unstable();
        assert_eq!(mrc.sizes, want_sorted);
        for (i, &c) in mrc.sizes.iter().enumerate() {
            assert_eq!(mrc.miss_ratios[i], simulated(&cfg, c), "{policy} at {c}");
        }
    }
}

#[test]
fn simulated_sizes_scale_every_tier() {
    let cfg = Config::from_toml_str(
        "[workload]\ntype = \"zipf\"\nalpha = 1.0\nobjects = 2000\nrequests = 30000\nunit_size = true\nseed = 3\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 100\npolicy = \"lru\"\n\
         [[tier]]\ntech = \"NAND-SLC\"\ncapacity = 300\npolicy = \"fifo\"\n",
    )
    .unwrap();
    let mrc = simulate_sizes(&cfg, &[Size::Absolute(800)], |_| true).unwrap();
    let mut c = cfg.clone();
    c.tiers[0].capacity = Size::Absolute(200);
    c.tiers[1].capacity = Size::Absolute(600);
    assert_eq!(mrc.miss_ratios[0], Runner::run(&c).unwrap().miss_ratio);
}

#[test]
fn belady_curve_equals_belady_runs() {
    // A generator carries no next-access times: the curve must get them
    // from the same pre-pass as the run (it used to get none, and Belady
    // then evicted blindly: 0.560 / 0.346 against the run's 0.466 / 0.246).
    let cfg = zipf_config(1000, 20_000, 0.0, "belady", "unit_size = true");
    let ask = Ask {
        sizes: Some(vec!["100".into(), "400".into()]),
        policy: Some(serde_json::json!("belady")),
        ..Ask::default()
    };
    let json = serde_json::to_string(&cfg).unwrap();
    let (m, method) = curve(&json, &ask, |_| true).unwrap();
    assert_eq!(method.label(), "belady (simulated)");
    assert_eq!(m.sizes, vec![100, 400]);
    assert_eq!(m.labels, Some(vec!["100".into(), "400".into()]));
    for (i, c) in [100, 400].into_iter().enumerate() {
        assert_eq!(m.miss_ratios[i], simulated(&cfg, c), "belady at {c}");
    }
    // And Belady beats LRU there, as it must.
    let lru = zipf_config(1000, 20_000, 0.0, "lru", "unit_size = true");
    assert!(m.miss_ratios[0] < simulated(&lru, 100));
}

#[test]
fn points_keep_the_sizes_as_given() {
    // The caller maps points back to what it wrote: the engine sorts and
    // merges sizes, so it says which given size each point is (the first
    // spelling of a size given twice).
    let cfg = zipf_config(1000, 20_000, 0.0, "lru", "unit_size = true");
    let json = serde_json::to_string(&cfg).unwrap();
    let given = ["400", "1KiB", "10%", "100", "1024"];
    let ask = Ask {
        sizes: Some(given.iter().map(|s| s.to_string()).collect()),
        ..Ask::default()
    };
    let (m, _) = curve(&json, &ask, |_| true).unwrap();
    let labels = m.labels.clone().unwrap();
    assert_eq!(labels.len(), m.sizes.len());
    let tenth = m.sizes[labels.iter().position(|l| l == "10%").unwrap()];
    let mut want = vec![(100, "100"), (400, "400"), (1024, "1KiB"), (tenth, "10%")];
    want.sort();
    let got: Vec<(u64, &str)> = m
        .sizes
        .iter()
        .copied()
        .zip(labels.iter().map(|l| l.as_str()))
        .collect();
    assert_eq!(got, want);
    // SHARDS alike (at rate 1, whose sample supports every size here: at
    // 0.5 the sizes below 100 objects are left out, trust.rs); no sizes,
    // no labels.
    let sampled = Ask {
        shards_rate: Some(1.0),
        ..ask.clone()
    };
    assert_eq!(
        curve(&json, &sampled, |_| true).unwrap().0.labels,
        Some(labels)
    );
    assert_eq!(
        curve(&json, &Ask::default(), |_| true).unwrap().0.labels,
        None
    );
}

#[test]
fn the_method_follows_from_what_was_asked() {
    let sizes = Some(vec!["10".to_string()]);
    let ask = |a: Ask| a.method().map(|m| m.label()).map_err(|e| e.to_string());
    assert_eq!(ask(Ask::default()), Ok("LRU (exact)".into()));
    let rate = Ask {
        shards_rate: Some(0.01),
        ..Ask::default()
    };
    assert_eq!(ask(rate.clone()), Ok("LRU, SHARDS rate 0.01".into()));
    let keys = Ask {
        shards_size: Some(1000),
        ..Ask::default()
    };
    assert_eq!(ask(keys), Ok("LRU, SHARDS 1000 keys".into()));
    let table = Ask {
        policy: Some(serde_json::json!({"type": "clock", "bits": 2})),
        sizes: sizes.clone(),
        ..Ask::default()
    };
    assert_eq!(ask(table.clone()), Ok("clock (simulated)".into()));
    let hierarchy = Ask {
        hierarchy: Some(serde_json::json!({})),
        sizes: sizes.clone(),
        ..Ask::default()
    };
    assert_eq!(ask(hierarchy), Ok("hierarchy (simulated)".into()));
    let both = Ask {
        shards_size: Some(5),
        ..rate.clone()
    };
    assert!(ask(both).unwrap_err().contains("not both"));
    let two = Ask {
        hierarchy: Some(serde_json::json!({})),
        ..table.clone()
    };
    assert!(ask(two).unwrap_err().contains("not both"));
    let sampled = Ask {
        shards_rate: Some(0.1),
        ..table.clone()
    };
    assert!(ask(sampled).unwrap_err().contains("cannot be combined"));
    for none in [None, Some(vec![])] {
        let unsized_ = Ask {
            sizes: none,
            ..table.clone()
        };
        assert!(ask(unsized_).unwrap_err().contains("give sizes"));
    }
}

#[test]
fn progress_counts_on_over_the_pre_passes() {
    // A share needs the footprint pre-pass and Belady the next-access one:
    // the count the caller sees only grows, past the trace's length (a
    // caller that ticks every N requests keeps ticking).
    let cfg = zipf_config(500, 10_000, 0.0, "belady", "unit_size = true");
    let mut seen = Vec::new();
    simulate_sizes(&cfg, &[Size::Percent(10.0)], |n| {
        seen.push(n);
        true
    })
    .unwrap();
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert_eq!(*seen.last().unwrap(), 30_000);
}

/// Mean absolute error of `approx` against `exact` at the same sizes.
fn mae(a: &Mrc, b: &Mrc) -> f64 {
    assert_eq!(a.sizes, b.sizes);
    let n = a.sizes.len() as f64;
    a.miss_ratios
        .iter()
        .zip(&b.miss_ratios)
        .map(|(x, y)| (x - y).abs())
        .sum::<f64>()
        / n
}

#[test]
fn shards_is_close_to_exact_on_zipf() {
    let objects = 100_000;
    let source = zipf_source(objects, 2_000_000, 1.0, 4096);
    let grid: Vec<u64> = (1..=100).map(|i| i * objects / 100).collect();
    for unit in [true, false] {
        let scale = if unit { 1 } else { 4096 };
        let opts = MrcOptions {
            unit_size: unit,
            sizes: Some(grid.iter().map(|s| s * scale).collect()),
        };
        let ex = exact(&source, &opts, |_| true).unwrap();
        let rate = shards(&source, Sampling::Rate(0.1), &opts, |_| true).unwrap();
        let fixed = shards(&source, Sampling::Size(8192), &opts, |_| true).unwrap();
        let (e_rate, e_fixed) = (mae(&rate, &ex), mae(&fixed, &ex));
        assert!(e_rate < 0.003, "rate 0.1, unit {unit}: MAE {e_rate}");
        assert!(e_fixed < 0.005, "8192 keys, unit {unit}: MAE {e_fixed}");
        // The fixed-size pass kept its bound on the keys it tracks.
        assert!(fixed.sampled < rate.sampled * 2);
    }
}

#[test]
fn shards_at_rate_one_is_exact() {
    let source = zipf_source(5000, 100_000, 0.8, 512);
    let opts = MrcOptions {
        unit_size: true,
        sizes: None,
    };
    let ex = exact(&source, &opts, |_| true).unwrap();
    let all = shards(&source, Sampling::Rate(1.0), &opts, |_| true).unwrap();
    assert_eq!(all, ex);
    // A sample larger than the keys never lowers the threshold.
    let big = shards(&source, Sampling::Size(10_000), &opts, |_| true).unwrap();
    assert_eq!(big, ex);
}

#[test]
fn shards_oracle_fast_path_equals_generic_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.oracleGeneral.bin");
    let source = zipf_source(20_000, 300_000, 1.0, 4096);
    crate::source::tools::convert_to_oracle(&source, &path, |_| true).unwrap();
    let oracle = Source::Oracle(path);
    let opts = MrcOptions::default();
    let fast = shards(&oracle, Sampling::Rate(0.05), &opts, |_| true).unwrap();
    let slow = shards(&source, Sampling::Rate(0.05), &opts, |_| true).unwrap();
    assert_eq!(fast, slow);
    assert!(fast.sampled > 0 && fast.sampled < fast.requests);
}

#[test]
fn bad_shards_parameters_are_refused() {
    let source = zipf_source(10, 10, 1.0, 1);
    let opts = MrcOptions::default();
    for s in [Sampling::Rate(0.0), Sampling::Rate(1.5), Sampling::Size(0)] {
        assert!(shards(&source, s, &opts, |_| true).is_err(), "{s:?}");
    }
}

#[test]
fn interrupted_passes_stop() {
    let source = zipf_source(10, 100_000, 1.0, 1);
    let opts = MrcOptions::default();
    assert!(matches!(
        exact(&source, &opts, |_| false),
        Err(TraceError::Interrupted)
    ));
    assert!(matches!(
        shards(&source, Sampling::Rate(0.5), &opts, |_| false),
        Err(Error::Trace(TraceError::Interrupted))
    ));
}

#[test]
fn sizes_parse_and_resolve() {
    let s = parse_sizes(&["10%", "1KiB", "7"]).unwrap();
    assert_eq!(
        s,
        vec![Size::Percent(10.0), Size::Absolute(1024), Size::Absolute(7)]
    );
    let e = parse_sizes(&["1", "lots"]).unwrap_err();
    assert_eq!(e.path, "sizes[1]");
    assert_eq!(parse_sizes(&["0"]).unwrap_err().path, "sizes[0]");
    assert!(parse_sizes::<&str>(&[]).is_err());
    let source = zipf_source(1000, 5000, 1.0, 100);
    let stats = trace_stats(&source, |_| true).unwrap();
    let r = resolve_sizes(&source, &s, true).unwrap();
    assert_eq!(r, vec![stats.unique_keys / 10, 1024, 7]);
    let bytes = resolve_sizes(&source, &s, false).unwrap();
    assert_eq!(bytes[0], stats.footprint_bytes / 10);
    let tiny = resolve_sizes(&source, &[Size::Percent(0.0001)], true).unwrap_err();
    assert!(tiny.to_string().starts_with("sizes[0]:"), "{tiny}");
}

#[test]
fn scaling_keeps_the_total() {
    assert_eq!(scale(&[189, 568], 757, 400), vec![100, 300]);
    assert_eq!(scale(&[1, 1, 1], 3, 10), vec![4, 3, 3]);
    assert_eq!(scale(&[5], 5, 77), vec![77]);
    assert_eq!(scale(&[1, 1000], 1001, 2), vec![1, 2]);
}

#[test]
fn shards_miss_ratios_stay_within_0_and_1() {
    // A hot key in the sample and cold keys outside it: the sampled weight
    // (100 requests x 1/R) far exceeds the requests counted, and SHARDS_adj
    // turns negative. Regression: the curve reached 10.6 at size 1 on the
    // 20M-request Zipf trace.
    let rate = 0.01;
    let threshold = (rate * MODULUS as f64).round() as u64;
    let hot = (0u64..).find(|&k| sample_hash(k) < threshold).unwrap();
    let cold: Vec<u64> = (1_000_000u64..)
        .filter(|&k| sample_hash(k) >= threshold)
        .take(400)
        .collect();
    let opts = MrcOptions {
        unit_size: true,
        sizes: None,
    };
    let mut s = Shards::new(Sampling::Rate(rate), &opts).unwrap();
    let mut n = 0;
    for (i, &c) in cold.iter().enumerate() {
        if i % 4 == 0 {
            s.request(hot, 1, Op::Read);
            n += 1;
        }
        s.request(c, 1, Op::Read);
        n += 1;
    }
    let weight_over_counted = s.sampled as f64 / rate / n as f64;
    assert!(weight_over_counted > 10.0, "{weight_over_counted}");
    let m = s.finish(n, n);
    assert!(
        m.miss_ratios.iter().all(|r| (0.0..=1.0).contains(r)),
        "{:?}",
        m.miss_ratios
    );
    assert_eq!(m.miss_ratios[0], 1.0);
}

/// Writes `n` reads of an oracleGeneral trace: a few hundred hot keys and
/// 50,000 others, sizes varying by key and now and then by request (the
/// stack keeps a key's latest size). Returns the file and a zstd copy.
fn oracle_trace(dir: &std::path::Path, n: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    use crate::source::trace::oracle::OracleWriter;
    let path = dir.join(format!("t{n}.oracleGeneral.bin"));
    let mut w = OracleWriter::create(&path).unwrap();
    let mut rng = Rng(n as u64 | 1);
    for i in 0..n {
        let key = if rng.below(10) < 3 {
            rng.below(300)
        } else {
            1000 + rng.below(50_000)
        };
        let size = if i % 97 == 0 {
            1 + rng.below(100) as u32
        } else {
            1 + (key.wrapping_mul(2_654_435_761) % 10_000) as u32
        };
        w.write(&Request {
            time: i as u64 * 1_000_000_000,
            key,
            size,
            op: Op::Read,
            pid: 0,
            next_access: -1,
        })
        .unwrap();
    }
    w.finish().unwrap();
    let zst = dir.join(format!("t{n}.oracleGeneral.bin.zst"));
    let mut input = std::fs::File::open(&path).unwrap();
    let output = std::fs::File::create(&zst).unwrap();
    zstd::stream::copy_encode(&mut input, output, 1).unwrap();
    (path, zst)
}

#[test]
fn shards_oracle_chunks_equal_the_generic_path() {
    // The mapped file is filtered chunk by chunk on two threads; the `.zst`
    // copy is decoded and sampled one request at a time in order. One
    // partial chunk, two whole ones (even), four and a partial (odd).
    let dir = tempfile::tempdir().unwrap();
    for n in [1000, 2 * RAW_CHUNK, 4 * RAW_CHUNK + 12_345] {
        let (mapped, zst) = oracle_trace(dir.path(), n);
        let (mapped, zst) = (Source::Oracle(mapped), Source::Oracle(zst));
        for unit_size in [true, false] {
            let opts = MrcOptions {
                unit_size,
                sizes: None,
            };
            for sampling in [Sampling::Rate(0.05), Sampling::Size(300)] {
                let mut seen = Vec::new();
                let fast = shards(&mapped, sampling, &opts, |r| {
                    seen.push(r);
                    true
                })
                .unwrap();
                let slow = shards(&zst, sampling, &opts, |_| true).unwrap();
                let what = format!("{n} requests, {sampling:?}, unit {unit_size}");
                assert_eq!(fast, slow, "{what}");
                assert_eq!(fast.requests, n as u64, "{what}");
                assert!(fast.sampled > 0 && fast.sampled < fast.requests, "{what}");
                // Progress after each chunk, in order.
                let chunks: Vec<u64> = (1..=n.div_ceil(RAW_CHUNK))
                    .map(|c| (c * RAW_CHUNK).min(n) as u64)
                    .collect();
                assert_eq!(seen, chunks, "{what}");
            }
        }
    }
}

#[test]
fn interrupted_oracle_shards_stop() {
    let dir = tempfile::tempdir().unwrap();
    let (mapped, _) = oracle_trace(dir.path(), 6 * RAW_CHUNK);
    let source = Source::Oracle(mapped);
    let opts = MrcOptions::default();
    for stop in [1, 2, 3] {
        let mut calls = 0;
        let r = shards(&source, Sampling::Rate(0.05), &opts, |_| {
            calls += 1;
            calls < stop
        });
        assert!(matches!(r, Err(Error::Trace(TraceError::Interrupted))));
        assert_eq!(calls, stop);
    }
}

#[test]
fn shards_curves_leave_out_sizes_their_sample_cannot_support() {
    // Regression (issue 38, item 1): tierlab.mrc(trace, shards=0.01) kept
    // the sizes too small for its sample (miss ratio 1.0 where the exact
    // curve reads 0.73) while the CLI dropped them; the rule is here now.
    let cfg = zipf_config(20_000, 200_000, 0.0, "lru", "unit_size = true");
    let json = serde_json::to_string(&cfg).unwrap();
    let sizes = ["500", "1000", "5000", "10000"];
    let ask = Ask {
        sizes: Some(sizes.iter().map(|s| s.to_string()).collect()),
        shards_rate: Some(0.01),
        ..Ask::default()
    };
    let (m, _) = curve(&json, &ask, |_| true).unwrap();
    // 50 sampled objects at rate 0.01: 5,000 objects.
    assert_eq!(m.sizes, vec![5000, 10000]);
    assert_eq!(m.labels, Some(vec!["5000".into(), "10000".into()]));
    let left = m.left_out.expect("a note on the sizes left out");
    assert_eq!((left.below, left.points), (5000, 2));
    assert_eq!(
        left.note,
        "SHARDS at rate 0.01: sizes below 5,000 objects hold fewer than 50 sampled objects, \
         too few to trust: 2 points left out (the exact curve, without SHARDS, has them)"
    );
    // Every size below: all kept, and the note says so.
    let small = Ask {
        sizes: Some(vec!["100".into(), "200".into()]),
        ..ask.clone()
    };
    let (m, _) = curve(&json, &small, |_| true).unwrap();
    assert_eq!(m.sizes, vec![100, 200]);
    let left = m.left_out.unwrap();
    assert_eq!(left.points, 0);
    assert!(left.note.ends_with(
        "and every size here is below; the exact curve (without SHARDS) samples nothing"
    ));
    // The exact curve and a sample the sizes support leave nothing out.
    let exact = Ask {
        shards_rate: None,
        ..ask.clone()
    };
    assert_eq!(curve(&json, &exact, |_| true).unwrap().0.left_out, None);
    let whole = Ask {
        shards_rate: Some(1.0),
        ..ask
    };
    let (m, _) = curve(&json, &whole, |_| true).unwrap();
    assert_eq!((m.sizes.len(), m.left_out), (4, None));
    // Fixed-size SHARDS: N keys over the footprint F, sizes below 50*F/N.
    let fixed = Ask {
        shards_size: Some(1000),
        ..Ask::default()
    };
    let (m, _) = curve(&json, &fixed, |_| true).unwrap();
    let footprint = *m.sizes.last().unwrap();
    let below = (50 * footprint).div_ceil(1000);
    assert!(m.sizes[0] >= below && m.left_out.unwrap().below == below);
}
