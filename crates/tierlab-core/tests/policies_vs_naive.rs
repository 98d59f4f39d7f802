//! Every eviction policy against a naive reference model (tests/common):
//! a single-tier hierarchy and the model see the same seeded traces and must
//! agree request by request on hit or miss, and on the set of keys held.

mod common;

use common::{build, sorted_keys, variants, Keys, Naive};
use tierlab_core::policy::NAMES;
use tierlab_core::Request;

const LEN: usize = 3000;

#[test]
fn every_policy_has_a_naive_model() {
    let missing: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|n| variants(n).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "no naive model for {missing:?}: add one to tests/common/mod.rs (`variants`)"
    );
}

/// Named traces for a cache of `cap` objects; every shape is scaled to it.
fn shapes(seed: u64, cap: usize) -> Vec<(String, Vec<u64>)> {
    let mut k = Keys::new(seed, 8 * cap + 2000);
    vec![
        ("zipf0.8".into(), k.zipf((4 * cap).max(8), 0.8, LEN)),
        ("zipf1.2".into(), k.zipf((2 * cap).max(4), 1.2, LEN)),
        ("uniform".into(), k.uniform(cap + cap / 2 + 2, LEN)),
        (
            "scan-mix".into(),
            k.scan_mix((cap / 2).max(2), cap + 1, LEN),
        ),
        ("loop-cap+1".into(), k.looped(cap + 1, LEN)),
        ("loop-cap".into(), k.looped(cap, LEN)),
    ]
}

/// 1-based position of each request's next request to the same key, -1
/// for none (oracleGeneral's convention), by a quadratic search.
fn next_access(trace: &[(u64, u32)]) -> Vec<i64> {
    (0..trace.len())
        .map(|i| {
            (i + 1..trace.len())
                .find(|&j| trace[j].0 == trace[i].0)
                .map_or(-1, |j| j as i64 + 1)
        })
        .collect()
}

fn compare(policy: &str, model: Naive, unit: bool, trace: &[(u64, u32)], what: &str) {
    let mut h = build(&common::single_tier(policy, model.cap), unit);
    let mut m = model;
    let mut hits = 0;
    let next = next_access(trace);
    for (i, &(key, size)) in trace.iter().enumerate() {
        let (level, _) = h.access(&Request {
            next_access: next[i],
            ..Request::read(key, size)
        });
        m.next = next[i];
        let want = m.access(key, size);
        assert_eq!(
            level == Some(0),
            want,
            "{what}, policy {policy}: request #{i} (key {key:#x}, size {size}): engine {}, model {}",
            if level == Some(0) { "hit" } else { "miss" },
            if want { "hit" } else { "miss" },
        );
        hits += want as u64;
        if i % 61 == 0 || i + 1 == trace.len() {
            assert_eq!(
                sorted_keys(&h, 0),
                m.sorted_keys(),
                "{what}, policy {policy}: contents differ after request #{i}"
            );
        }
    }
    let t = &h.tiers[0];
    assert_eq!(t.c.hits, hits, "{what}, policy {policy}");
    assert_eq!(
        t.c.misses,
        trace.len() as u64 - hits,
        "{what}, policy {policy}"
    );
    assert_eq!(
        t.c.evictions, m.evictions,
        "{what}, policy {policy}: evictions"
    );
    assert_eq!(
        t.c.rejected, m.rejected,
        "{what}, policy {policy}: rejected"
    );
    assert_eq!(t.used(), m.used, "{what}, policy {policy}: used");
    assert!(t.used() <= t.capacity);
}

#[test]
fn unit_size_hits_match_the_naive_model() {
    for name in NAMES {
        let vs = variants(name).unwrap_or_else(|| panic!("no naive model for {name}"));
        for (policy, kind) in vs {
            for cap in [1usize, 2, 3, 7, 32, 200] {
                for seed in 1..=3u64 {
                    for (shape, keys) in shapes(seed * 1000 + cap as u64, cap) {
                        // Sizes vary wildly: with unit_size they must not matter.
                        let mut r = tierlab_core::rng::Rng::new(seed);
                        let trace: Vec<(u64, u32)> = keys
                            .iter()
                            .map(|&k| (k, 1 + r.below(1 << 20) as u32))
                            .collect();
                        let what = format!("{shape} seed {seed} capacity {cap} objects");
                        compare(
                            &policy,
                            Naive::new(kind, cap as u64, true),
                            true,
                            &trace,
                            &what,
                        );
                    }
                }
            }
        }
    }
}

/// Byte capacities and variable sizes: objects larger than the tier are
/// rejected without evicting anything; a read hit keeps the stored size even
/// when the request names another one (as libCacheSim does).
#[test]
fn sized_objects_match_the_naive_model() {
    for name in NAMES {
        let vs = variants(name).unwrap();
        for (policy, kind) in vs {
            for cap in [1u64, 100, 1000, 4096, 20_000] {
                for seed in 1..=3u64 {
                    let mut k = Keys::new(seed + 77, 3000);
                    let n = 300;
                    let mut r = tierlab_core::rng::Rng::new(seed * 31 + cap);
                    // A fixed size per object: mostly small, a few larger than
                    // the capacity, a few empty.
                    let sizes: Vec<u32> = (0..3000)
                        .map(|_| match r.below(100) {
                            0 => 0,
                            1..=3 => (cap + 1 + r.below(cap + 1)) as u32,
                            4..=10 => 1 + r.below(4000) as u32,
                            _ => 1 + r.below(400) as u32,
                        })
                        .collect();
                    let index = |key: u64, k: &Keys| (0..3000).find(|&i| k.id(i) == key).unwrap();
                    for (shape, keys) in [
                        ("zipf", k.zipf(n, 0.9, LEN)),
                        ("scan-mix", k.scan_mix(50, 100, LEN)),
                    ] {
                        let trace: Vec<(u64, u32)> = keys
                            .iter()
                            .map(|&key| {
                                let s = sizes[index(key, &k)];
                                // Now and then the same object asks for another size.
                                let s = if r.below(20) == 0 {
                                    1 + r.below(600) as u32
                                } else {
                                    s
                                };
                                (key, s)
                            })
                            .collect();
                        let what = format!("sized {shape} seed {seed} capacity {cap} B");
                        compare(&policy, Naive::new(kind, cap, false), false, &trace, &what);
                    }
                }
            }
        }
    }
}
