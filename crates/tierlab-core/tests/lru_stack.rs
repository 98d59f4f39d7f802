//! LRU's stack property across tiers: an exclusive hierarchy of LRU tiers of
//! unit-size objects holds, at every moment, exactly the most recent keys an
//! LRU of their total capacity would hold, ordered across tiers by recency.
//! So its overall hit/miss sequence must equal a single LRU's, request by
//! request, and a hit in tier j must be a hit at LRU stack depth
//! (sum of capacities above j, sum including j].

use tierlab_core::config::Config;
use tierlab_core::request::Request;
use tierlab_core::rng::Rng;
use tierlab_core::run::assembly::build_hierarchy;

fn hierarchy(caps: &[u64]) -> tierlab_core::hierarchy::Hierarchy {
    let mut toml = String::from("[hierarchy]\nfill = \"exclusive\"\n");
    for (i, c) in caps.iter().enumerate() {
        toml += &format!(
            "[[tier]]\nname = \"t{i}\"\ntech = \"DRAM-DDR3\"\ncapacity = {c}\npolicy = \"lru\"\n"
        );
    }
    let cfg = Config::from_toml_str(&toml).unwrap();
    build_hierarchy(&cfg, 0, true, 1).unwrap().0
}

/// Stack distance of each request (0-based depth; None for a first access).
fn stack_depths(keys: &[u64]) -> Vec<Option<usize>> {
    let mut stack: Vec<u64> = Vec::new();
    keys.iter()
        .map(|&k| {
            let d = stack.iter().position(|&x| x == k);
            if let Some(i) = d {
                stack.remove(i);
            }
            stack.insert(0, k);
            d
        })
        .collect()
}

#[test]
fn exclusive_lru_tiers_behave_as_one_lru_stack() {
    for seed in 0..20u64 {
        let mut rng = Rng::new(seed);
        let objects = 5 + rng.below(60);
        let caps: Vec<u64> = (0..1 + rng.below(3)).map(|_| 1 + rng.below(12)).collect();
        let keys: Vec<u64> = (0..3000)
            .map(|_| {
                // Skewed: square of a uniform draw favours small keys.
                let u = rng.below(objects);
                u * u / objects
            })
            .collect();
        let mut h = hierarchy(&caps);
        let n = caps.len();
        for (r, (&k, d)) in keys.iter().zip(stack_depths(&keys)).enumerate() {
            let (level, _) = h.access(&Request::read(k, 4096));
            let level = level.unwrap();
            let expect = match d {
                None => n,
                Some(d) => {
                    let mut acc = 0u64;
                    caps.iter()
                        .position(|&c| {
                            acc += c;
                            (d as u64) < acc
                        })
                        .unwrap_or(n)
                }
            };
            assert_eq!(
                level, expect,
                "seed {seed}, caps {caps:?}, request {r} key {k} depth {d:?}"
            );
        }
    }
}
