//! Golden numbers: exact hit and miss counts on a small committed trace,
//! tests/data/zipf-small.oracleGeneral.bin at the repository root (20,000
//! requests of a Zipf(1.0) workload over 2,000 objects of 4 KiB, seed 7).

mod common;

use common::{Kind, Naive, NaiveTwo};
use std::path::PathBuf;
use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;
use tierlab_core::source::tools::convert_to_oracle;

const TRACE_TOML: &str = r#"
[workload]
type = "zipf"
alpha = 1.0
objects = 2000
requests = 20000
seed = 7
[[tier]]
tech = "DRAM-DDR3"
capacity = 1
"#;

fn trace_path() -> PathBuf {
    common::repo_root().join("tests/data/zipf-small.oracleGeneral.bin")
}

fn write_trace(out: &std::path::Path) {
    let cfg = Config::from_toml_str(TRACE_TOML).unwrap();
    let src = cfg.workload().unwrap().source().unwrap();
    convert_to_oracle(&src, out, |_| true).unwrap();
}

fn run(tiers: &str, fill: &str, unit: bool) -> tierlab_core::stats::RunResult {
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"oracle\"\nunit_size = {unit}\n[hierarchy]\nfill = \"{fill}\"\n{tiers}",
        trace_path().display().to_string()
    );
    Runner::run(&Config::from_toml_str(&toml).unwrap()).unwrap()
}

fn tier(name: &str, cap: &str, policy: &str) -> String {
    format!(
        "[[tier]]\nname = \"{name}\"\ntech = \"DRAM-DDR3\"\ncapacity = {cap}\npolicy = {policy}\n"
    )
}

fn trace_keys() -> Vec<(u64, u32)> {
    use tierlab_core::source::trace::TraceSource;
    let mut r = tierlab_core::source::trace::oracle::OracleReader::open(&trace_path()).unwrap();
    let mut buf = Vec::new();
    let mut all = Vec::new();
    while r.next_batch(&mut buf, 1000).unwrap() > 0 {
        all.extend(buf.iter().map(|q| (q.key, q.size)));
    }
    all
}

/// A policy's TOML value and its naive model.
fn model(policy: &str) -> Kind {
    match policy {
        "\"lru\"" => Kind::Lru,
        "\"fifo\"" => Kind::Fifo,
        "\"clock\"" => Kind::Clock { max: 1 },
        "{ type = \"clock\", bits = 2 }" => Kind::Clock { max: 3 },
        _ => unreachable!("{policy}"),
    }
}

#[test]
fn committed_trace_matches_its_generator() {
    // Same seed, same requests, forever (docs/workloads.md): the generator and the
    // converter still write exactly the committed bytes. To write the file
    // anew (only ever on purpose): TIERLAB_REGENERATE=1 cargo test --test golden.
    if std::env::var_os("TIERLAB_REGENERATE").is_some() {
        write_trace(&trace_path());
    }
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("zipf.bin");
    write_trace(&fresh);
    let committed = std::fs::read(trace_path()).unwrap();
    assert_eq!(committed.len(), 20_000 * 24);
    assert!(
        std::fs::read(&fresh).unwrap() == committed,
        "the zipf generator or convert_to_oracle no longer writes the committed trace"
    );
    let keys = trace_keys();
    let unique: std::collections::HashSet<u64> = keys.iter().map(|k| k.0).collect();
    assert_eq!((keys.len(), unique.len()), (20_000, 1807));
}

/// Single tier, capacity in objects. Cross-checked: every value equals the
/// naive model of tests/common (asserted below) and libCacheSim 0.3.5
/// (`LRU`, `FIFO`, `Clock(init_freq=0, n_bit_counter=1 or 2)`,
/// `ignore_obj_size=True`, on this file; see tests/test_vs_libcachesim.py).
const SINGLE: &[(&str, u64, u64)] = &[
    // (policy, capacity, hits); misses = 20,000 - hits
    ("\"lru\"", 1, 505),
    ("\"lru\"", 10, 3614),
    ("\"lru\"", 50, 8089),
    ("\"lru\"", 200, 12159),
    ("\"lru\"", 1000, 17077),
    ("\"fifo\"", 1, 505),
    ("\"fifo\"", 10, 3118),
    ("\"fifo\"", 50, 7055),
    ("\"fifo\"", 200, 11162),
    ("\"fifo\"", 1000, 16518),
    ("\"clock\"", 1, 505),
    ("\"clock\"", 10, 3907),
    ("\"clock\"", 50, 8380),
    ("\"clock\"", 200, 12406),
    ("\"clock\"", 1000, 17143),
    ("{ type = \"clock\", bits = 2 }", 10, 4293),
    ("{ type = \"clock\", bits = 2 }", 50, 8741),
    ("{ type = \"clock\", bits = 2 }", 200, 12687),
    ("{ type = \"clock\", bits = 2 }", 1000, 17199),
];

#[test]
fn single_tier_hits_and_misses() {
    let keys = trace_keys();
    for &(policy, cap, hits) in SINGLE {
        let r = run(&tier("t0", &cap.to_string(), policy), "exclusive", true);
        let what = format!("{policy} capacity {cap}");
        assert_eq!(
            (r.requests, r.hits, r.misses),
            (20_000, hits, 20_000 - hits),
            "{what}"
        );
        assert_eq!(r.tiers[0].counters.hits, hits, "{what}");
        assert_eq!(r.backing.counters.reads, 20_000 - hits, "{what}");
        let mut m = Naive::new(model(policy), cap, true);
        let naive = keys.iter().filter(|&&(k, s)| m.access(k, s)).count() as u64;
        assert_eq!(
            naive, hits,
            "{what}: the naive model disagrees with the golden value"
        );
    }
}

#[test]
fn byte_capacity_equals_object_capacity_for_equal_sizes() {
    // Every object is 4 KiB: 800 KiB hold 200 objects, as LRU 200 above.
    let r = run(&tier("t0", "\"800KiB\"", "\"lru\""), "exclusive", false);
    assert_eq!((r.hits, r.misses), (12159, 7841));
    assert!(r.tiers[0].used <= 800 * 1024);
}

/// Two tiers of 50 and 200 objects: (fill, tier 0 policy, tier 1 policy,
/// tier 0 hits, tier 1 hits, misses). Cross-checked:
/// - every row equals the naive two-tier model of tests/common (asserted below);
/// - exclusive: tier 0 sees every request and takes every object it misses,
///   so its hits are those of the single tier above (lru 8089, clock 8380,
///   fifo 7055); LRU over LRU is one LRU of 250 objects, whose 7155 misses
///   libCacheSim's LRU(250) gives too;
/// - inclusive: tier 0 is LRU(50) (8089 hits, 11911 misses) and tier 1
///   replays tier 0's misses: libCacheSim's LRU/FIFO/Clock(200) on that miss
///   stream give 3972/3282/4234 hits.
const TWO: &[(&str, &str, &str, u64, u64, u64)] = &[
    ("exclusive", "\"lru\"", "\"lru\"", 8089, 4756, 7155),
    ("exclusive", "\"clock\"", "\"lru\"", 8380, 4477, 7143),
    ("exclusive", "\"fifo\"", "\"lru\"", 7055, 5783, 7162),
    ("inclusive", "\"lru\"", "\"lru\"", 8089, 3972, 7939),
    ("inclusive", "\"lru\"", "\"fifo\"", 8089, 3282, 8629),
    ("inclusive", "\"lru\"", "\"clock\"", 8089, 4234, 7677),
];

#[test]
fn two_tier_hits_and_misses() {
    let keys = trace_keys();
    for &(fill, p0, p1, h0, h1, misses) in TWO {
        let r = run(&(tier("t0", "50", p0) + &tier("t1", "200", p1)), fill, true);
        let what = format!("{fill} {p0} 50 + {p1} 200");
        let (t0, t1) = (&r.tiers[0].counters, &r.tiers[1].counters);
        assert_eq!((t0.hits, t1.hits, r.misses), (h0, h1, misses), "{what}");
        assert_eq!(t1.hits + t1.misses, t0.misses, "{what}");
        assert_eq!(r.backing.counters.reads, misses, "{what}");
        assert_eq!(r.backing.counters.writes, 0, "{what}: a read-only trace");
        if fill == "exclusive" {
            assert_eq!(t1.promotions, h1, "{what}");
        }
        let mut m = NaiveTwo {
            t: [
                Naive::new(model(p0), 50, true),
                Naive::new(model(p1), 200, true),
            ],
            exclusive: fill == "exclusive",
        };
        let mut levels = [0u64; 3];
        for &(k, s) in &keys {
            levels[m.access(k, s)] += 1;
        }
        assert_eq!(
            levels,
            [h0, h1, misses],
            "{what}: the naive model disagrees"
        );
    }
}
