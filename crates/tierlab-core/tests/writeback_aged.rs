//! Write-back by age and by a dirty threshold (`flush_age`,
//! `dirty_threshold`, `dirty_memory`; docs/hierarchy.md): Linux 2.4's
//! kupdate and bdflush as general hierarchy features. Requests take 1 ms of
//! compute each, which dominates the DRAM latencies (< 1 us; the backing
//! store is DRAM too), so request i ends at about i ms of simulated time.

mod common;

use tierlab_core::config::Config;
use tierlab_core::hierarchy::Hierarchy;
use tierlab_core::{Op, Request};

fn dram(extra: &str) -> Hierarchy {
    let cfg = Config::from_toml_str(&format!(
        r#"
[hierarchy]
write = "write-back"
{extra}
[run]
compute = "1ms"
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = 10
policy = "lru"
[backing]
tech = "DRAM-DDR3"
"#
    ))
    .unwrap();
    common::build(&cfg, true)
}

fn read(h: &mut Hierarchy, key: u64) {
    h.access(&Request::read(key, 4096));
}

fn write(h: &mut Hierarchy, key: u64) {
    h.access(&Request::write(key, 4096));
}

fn dirty(h: &Hierarchy, key: u64) -> bool {
    h.entry(0, key).expect("key not held").1
}

/// Reads key 100 until the simulated clock passes `ms`.
fn idle_until(h: &mut Hierarchy, ms: f64) {
    while h.clock_ns < ms * 1e6 {
        read(h, 100);
    }
}

#[test]
fn a_periodic_flush_with_an_age_writes_back_only_entries_that_old() {
    // kupdate: checked every 5 ms, entries dirty for 30 ms written.
    let mut h = dram("flush_interval = \"5ms\"\nflush_age = \"30ms\"");
    write(&mut h, 1); // dirty from t = 0
    idle_until(&mut h, 20.0);
    write(&mut h, 2); // dirty from t = 20 ms
                      // Written again while dirty: keeps its first time (t = 0).
    write(&mut h, 1);
    idle_until(&mut h, 29.0);
    assert_eq!(h.backing.writes, 0, "nothing is 30 ms old before 30 ms");
    assert!(h.totals.flushes >= 5, "the checks ran every 5 ms");
    idle_until(&mut h, 31.0);
    assert_eq!(h.backing.writes, 1, "the check at 30 ms wrote key 1 only");
    assert!(!dirty(&h, 1) && dirty(&h, 2));
    idle_until(&mut h, 49.0);
    assert_eq!(h.backing.writes, 1, "key 2 is 30 ms old at 50 ms");
    idle_until(&mut h, 51.0);
    assert_eq!(h.backing.writes, 2);
    assert!(!dirty(&h, 2));
    assert_eq!(h.tiers[0].c.writebacks, 2);
}

#[test]
fn an_entry_cleaned_and_dirtied_again_ages_from_its_new_write() {
    let mut h = dram("flush_interval = \"5ms\"\nflush_age = \"10ms\"");
    write(&mut h, 1); // t = 0
    idle_until(&mut h, 11.0); // written back at the check at 10 ms
    assert_eq!(h.backing.writes, 1);
    write(&mut h, 1); // dirty again from t = 11 ms
    idle_until(&mut h, 19.0);
    assert_eq!(h.backing.writes, 1, "not 10 ms old at the check at 15 ms");
    idle_until(&mut h, 26.0);
    assert_eq!(h.backing.writes, 2, "written at the check at 25 ms");
}

#[test]
fn without_an_age_a_flush_writes_every_dirty_entry_as_before() {
    for extra in ["", "flush_age = \"0s\"\ndirty_threshold = 1.0"] {
        let mut h = dram(&format!("flush_interval = \"10ms\"\n{extra}"));
        write(&mut h, 1);
        idle_until(&mut h, 8.0);
        write(&mut h, 2);
        idle_until(&mut h, 11.0);
        assert_eq!(h.backing.writes, 2, "{extra:?}: both at the first flush");
    }
}

#[test]
fn a_dirty_threshold_writes_back_the_oldest_until_under_it() {
    // bdflush: 30% of 10 objects = 3 dirty objects at most; no periodic
    // flush at all.
    let mut h = dram("dirty_threshold = 0.3");
    for k in 1..=3 {
        write(&mut h, k);
    }
    assert_eq!(h.backing.writes, 0, "3 dirty objects are at the threshold");
    write(&mut h, 4);
    assert_eq!(h.backing.writes, 1, "the 4th passes it: the oldest written");
    assert!(!dirty(&h, 1) && dirty(&h, 2) && dirty(&h, 3) && dirty(&h, 4));
    // Writing a dirty entry again changes nothing; a read changes nothing.
    write(&mut h, 2);
    read(&mut h, 1);
    assert_eq!(h.backing.writes, 1);
    write(&mut h, 5);
    assert_eq!(h.backing.writes, 2);
    assert!(!dirty(&h, 2), "the oldest dirty one was key 2");
    assert_eq!(h.totals.flushes, 0, "no periodic flush counted");
    assert!(h.totals.flush_time_ns > 0.0, "background time");
}

#[test]
fn a_dirty_threshold_counts_what_leaves_the_tier() {
    // Entries that leave dirty (deleted, evicted) no longer count.
    let mut h = dram("dirty_threshold = 0.3");
    for k in 1..=3 {
        write(&mut h, k);
    }
    h.access(&Request {
        op: Op::Delete,
        ..Request::read(1, 4096)
    });
    write(&mut h, 4);
    assert_eq!(h.backing.writes, 0, "3 dirty after the delete");
    // Fill the tier with clean reads: the dirty ones are evicted, each
    // written back on eviction, and leave the count.
    for k in 10..20 {
        read(&mut h, k);
    }
    let evicted = h.backing.writes;
    assert_eq!(evicted, 3, "the three dirty entries written on eviction");
    for k in 30..=32 {
        write(&mut h, k);
    }
    assert_eq!(
        h.backing.writes, evicted,
        "three dirty again: at the threshold"
    );
}

#[test]
fn a_dirty_batch_writes_whole_batches_of_the_oldest() {
    // bdflush writes batches of 32 (`NRSYNC`): here 3. Past 3 dirty, the 3
    // oldest go, not only the one over.
    let mut h = dram("dirty_threshold = 0.3\ndirty_batch = 3");
    for k in 1..=4 {
        write(&mut h, k);
    }
    assert_eq!(h.backing.writes, 3);
    assert!(!dirty(&h, 1) && !dirty(&h, 2) && !dirty(&h, 3) && dirty(&h, 4));
    // Under the threshold again until it is passed again.
    for k in 5..=6 {
        write(&mut h, k);
    }
    assert_eq!(h.backing.writes, 3);
    write(&mut h, 7);
    assert_eq!(h.backing.writes, 6, "4 dirty: a batch of the 3 oldest");
    assert!(dirty(&h, 7) && !dirty(&h, 4));
}

#[test]
fn dirty_memory_sets_what_the_threshold_is_a_share_of() {
    // 50% of 4 objects (not of the tier's 10) = 2.
    let mut h = dram("dirty_threshold = 0.5\ndirty_memory = 4");
    for k in 1..=3 {
        write(&mut h, k);
    }
    assert_eq!(h.backing.writes, 1);
}

#[test]
fn age_and_threshold_keys_are_checked() {
    let bad = [
        (
            "flush_age = \"30s\"",
            "hierarchy.flush_age",
            "needs a flush_interval",
        ),
        (
            "flush_interval = \"5s\"\nflush_age = \"-1s\"",
            "hierarchy.flush_age",
            "zero or more",
        ),
        (
            "dirty_threshold = 0",
            "hierarchy.dirty_threshold",
            "out of range",
        ),
        (
            "dirty_threshold = 1.5",
            "hierarchy.dirty_threshold",
            "out of range",
        ),
        (
            "dirty_threshold = 0.3\ndirty_memory = 0",
            "hierarchy.dirty_memory",
            "greater than zero",
        ),
        (
            "dirty_threshold = 0.3\ndirty_batch = 0",
            "hierarchy.dirty_batch",
            "at least 1",
        ),
    ];
    for (extra, key, msg) in bad {
        let text = format!("[hierarchy]\n{extra}\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 10\n");
        let err = Config::from_toml_str(&text)
            .and_then(|c| c.validate())
            .unwrap_err()
            .to_string();
        assert!(err.contains(key) && err.contains(msg), "{extra:?}: {err}");
    }
    // A tier's own key, at the tier's path.
    let err = Config::from_toml_str(
        "[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 10\nflush_age = \"30s\"\n",
    )
    .and_then(|c| c.validate())
    .unwrap_err()
    .to_string();
    assert!(err.contains("tier[0].flush_age"), "{err}");
}
