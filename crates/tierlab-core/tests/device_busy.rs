//! A serial run's device busy time (the energy model's active time,
//! device/energy.rs) is computed from the tiers' and the backing store's
//! counters, not summed per charge: it must equal the sum of every device
//! operation the hierarchy charges (its operation log, as the time layer
//! sees it), less the software overhead in each, on every path (exclusive
//! and inclusive, segments and per-tier lists, write-back flushes), for
//! sizes that are not whole pages.

use tierlab_core::config::Config;
use tierlab_core::request::{Op, Request};
use tierlab_core::rng::Rng;
use tierlab_core::run::assembly::build_hierarchy;

fn check(toml: &str) {
    let cfg = Config::from_toml_str(toml).unwrap();
    let (mut h, _) = build_hierarchy(&cfg, 0, false, 1).unwrap();
    h.ops.enable();
    let n = h.tiers.len();
    let overhead: Vec<f64> = h
        .tiers
        .iter()
        .map(|t| t.cost.overhead())
        .chain([h.backing_cost.overhead()])
        .collect();
    let mut noted = vec![0.0f64; n + 1];
    let mut ops = vec![0u64; n + 1];
    let mut rng = Rng::new(11);
    for i in 0..30_000u64 {
        let op = match rng.below(10) {
            0..=2 => Op::Write,
            3 => Op::Delete,
            _ => Op::Read,
        };
        let r = Request {
            time: i * 1000,
            key: rng.below(3000),
            size: 1000 + rng.below(8000) as u32,
            op,
            ..Default::default()
        };
        h.access(&r);
        for o in h.ops.ops() {
            noted[o.dev as usize] += o.ns - overhead[o.dev as usize];
            ops[o.dev as usize] += 1;
        }
        h.ops.clear();
    }
    for (j, t) in h.tiers.iter().enumerate() {
        let c = &t.c;
        let busy = t
            .cost
            .busy_ns(c.reads, c.writes, c.pages_read + c.pages_programmed);
        // Each charge is rounded to whole ns: at most 0.5 ns apart each.
        assert!(ops[j] > 100, "tier {j} saw {} operations", ops[j]);
        assert!(
            (busy - noted[j]).abs() <= 0.5 * ops[j] as f64 + 1e-6 * noted[j],
            "tier {j}: {busy} from the counters, {} charged",
            noted[j]
        );
        assert_eq!(c.reads + c.writes, ops[j], "tier {j}: operations");
    }
    let b = &h.backing;
    let busy = h
        .backing_cost
        .busy_ns(b.reads, b.writes, b.pages_read + b.pages_written);
    assert_eq!(b.reads + b.writes, ops[n]);
    assert!((busy - noted[n]).abs() <= 0.5 * ops[n] as f64 + 1e-6 * noted[n]);
}

const TIERS: &str = r#"
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "2MiB"
policy = "POLICY"
[[tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "6MiB"
policy = "POLICY"
overhead = "3us"
[[tier]]
name = "ssd"
tech = "SSD-SATA"
capacity = "8MiB"
[backing]
tech = "HDD"
overhead = "1us"
"#;

#[test]
fn busy_from_counters_is_the_sum_of_the_charges() {
    for fill in ["exclusive", "inclusive"] {
        for write in ["write-back", "write-through"] {
            // LRU takes the segments paths in an exclusive hierarchy, CLOCK
            // the per-tier ones; flushes write dirty entries down.
            for policy in ["lru", "clock"] {
                let toml = format!(
                    "[hierarchy]\nfill = \"{fill}\"\nwrite = \"{write}\"\nflush_interval = \"50ms\"\n{}",
                    TIERS.replace("POLICY", policy)
                );
                check(&toml);
            }
        }
    }
}
