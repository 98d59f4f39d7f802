//! Exact internal order of each policy on tiny sequences.

use super::*;

fn req() -> Request {
    Request::read(0, 1)
}

fn build(name: &str) -> AnyPolicy {
    PolicySpec::named(name).unwrap().build(&BuildCtx {
        capacity: 4,
        seed: 1,
        unit_size: true,
    })
}

#[test]
fn lru_evicts_least_recent() {
    let mut p = build("lru");
    for s in 0..3 {
        p.on_insert(s, &req());
    }
    p.on_hit(0, &req());
    assert_eq!(p.evict(), 1);
    assert_eq!(p.evict(), 2);
    assert_eq!(p.evict(), 0);
}

#[test]
fn fifo_ignores_hits() {
    let mut p = build("fifo");
    for s in 0..3 {
        p.on_insert(s, &req());
    }
    p.on_hit(0, &req());
    p.on_remove(1);
    assert_eq!(p.evict(), 0);
    assert_eq!(p.evict(), 2);
}

#[test]
fn clock_gives_one_second_chance() {
    let mut p = build("clock");
    for s in 0..3 {
        p.on_insert(s, &req());
    }
    p.on_hit(0, &req());
    p.on_hit(0, &req());
    // 0 is referenced: it goes back to the head with its bit cleared.
    assert_eq!(p.evict(), 1);
    assert_eq!(p.evict(), 2);
    assert_eq!(p.evict(), 0);
}

#[test]
fn clock_with_two_bits_counts_hits() {
    let mut p = PolicySpec::from_parts(
        "clock",
        serde_json::json!({"bits": 2}).as_object().unwrap().clone(),
    )
    .unwrap()
    .build(&BuildCtx {
        capacity: 4,
        seed: 1,
        unit_size: true,
    });
    p.on_insert(0, &req());
    p.on_insert(1, &req());
    p.on_hit(0, &req());
    p.on_hit(0, &req());
    p.on_hit(1, &req());
    // 0 (counter 2) survives two passes, 1 (counter 1) one.
    assert_eq!(p.evict(), 1);
    assert_eq!(p.evict(), 0);
}

fn tier_policy(policy: &str) -> Result<crate::config::Config, String> {
    crate::config::Config::from_toml_str(&format!(
        "[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 10\npolicy = {policy}\n"
    ))
    .map_err(|e| e.to_string())
}

#[test]
fn every_policy_loads_by_name_and_parameters_from_toml() {
    for name in NAMES {
        let cfg = tier_policy(&format!("{name:?}")).unwrap();
        assert_eq!(cfg.tiers[0].policy.name(), *name);
    }
    let cfg = tier_policy("{ type = \"lru-k\", k = 3 }").unwrap();
    assert_eq!(
        cfg.tiers[0].policy,
        PolicySpec::LruK(lru_k::LruKParams { k: 3 })
    );
}

#[test]
fn bad_policy_parameters_name_the_allowed_range() {
    for (policy, want) in [
        (
            "{ type = \"lru-k\", k = 0 }",
            "tier[0].policy: k: 0 is out of range; allowed 1..=16",
        ),
        (
            "{ type = \"s3-fifo\", small_size_ratio = 1.0 }",
            "tier[0].policy: small_size_ratio: 1 is out of range; allowed (0, 1)",
        ),
        (
            "{ type = \"2q\", kin = 0.0 }",
            "tier[0].policy: kin: 0 is out of range; allowed (0, 1)",
        ),
        (
            "{ type = \"lirs\", hir_ratio = 1.5 }",
            "tier[0].policy: hir_ratio: 1.5 is out of range; allowed (0, 1)",
        ),
        (
            "{ type = \"w-tinylfu\", window_ratio = 0.0 }",
            "tier[0].policy: window_ratio: 0 is out of range; allowed (0, 1)",
        ),
        (
            "{ type = \"arc\", p = 3 }",
            "tier[0].policy: unknown field `p`",
        ),
        (
            "{ type = \"sieve\", hand = 1 }",
            "tier[0].policy: unknown field `hand`",
        ),
    ] {
        let err = tier_policy(policy).unwrap_err();
        assert!(err.contains(want), "{policy}: {err}");
    }
}

#[test]
fn random_is_deterministic_per_seed() {
    let run = |seed| {
        let mut p = PolicySpec::named("random").unwrap().build(&BuildCtx {
            capacity: 8,
            seed,
            unit_size: true,
        });
        for s in 0..8 {
            p.on_insert(s, &req());
        }
        (0..8).map(|_| p.evict()).collect::<Vec<u32>>()
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5), run(6));
}

/// `on_hits(n)` leaves every policy as `n` calls of `on_hit` would: the
/// same victims, in the same order, over random inserts, runs of hits and
/// evictions (fresh slots only, so ghosts never come back). flashcache
/// (which keeps the default) needs a capacity of whole sets.
#[test]
fn on_hits_is_n_hits_for_every_policy() {
    for &name in NAMES.iter().filter(|&&n| n != "flashcache") {
        let mk = || {
            PolicySpec::named(name).unwrap().build(&BuildCtx {
                capacity: 8,
                seed: 3,
                unit_size: true,
            })
        };
        let (mut a, mut b) = (mk(), mk());
        let mut rng = crate::rng::Rng::new(7);
        let mut tracked: Vec<u32> = Vec::new();
        let mut next = 0u32;
        let evict = |a: &mut AnyPolicy, b: &mut AnyPolicy, tracked: &mut Vec<u32>| {
            let v = a.evict();
            assert_eq!(v, b.evict(), "{name}: victims differ");
            tracked.retain(|&s| s != v);
            while a.forgotten().is_some() {}
            while b.forgotten().is_some() {}
        };
        for _ in 0..3000 {
            let roll = rng.below(4);
            if tracked.is_empty() || (roll == 0 && tracked.len() < 8) {
                let slot = next;
                next += 1;
                let r = Request::read(slot as u64, 1);
                a.before_insert(&r, None);
                b.before_insert(&r, None);
                while a.needs_room() {
                    assert!(b.needs_room());
                    evict(&mut a, &mut b, &mut tracked);
                }
                a.on_insert(slot, &r);
                b.on_insert(slot, &r);
                tracked.push(slot);
            } else if roll == 1 && tracked.len() == 8 {
                evict(&mut a, &mut b, &mut tracked);
            } else {
                let slot = tracked[rng.below(tracked.len() as u64) as usize];
                let n = rng.below(5);
                let r = Request::read(slot as u64, 1);
                for _ in 0..n {
                    a.on_hit(slot, &r);
                }
                b.on_hits(slot, &r, n);
            }
        }
        while !tracked.is_empty() {
            evict(&mut a, &mut b, &mut tracked);
        }
    }
}
