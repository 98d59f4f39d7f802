//! A serial run queues its tiers' FTL operations and runs them once a
//! batch of requests (device/ftl_space.rs); a time model runs each at
//! once, as it must, since it reads the counters after every request. The
//! FTL's counts depend only on the operations' order, which a closed loop
//! of one client keeps: both runs must count alike, with a warm-up and
//! timeline points falling inside batches. Built with debug assertions,
//! the serial run also proves nothing read the FTL with operations queued.

use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;

const BASE: &str = r#"
[workload]
type = "zipf"
alpha = 0.8
objects = 20_000
requests = 150_000
object_size = "4KiB"
write_ratio = 0.5
seed = 3

[hierarchy]
fill = "exclusive"

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "4MiB"
policy = "lru"

[[tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "24MiB"
policy = "clock"
ftl = { op = 0.1, trim = TRIM }

[backing]
tech = "HDD"

[run]
warmup = 12345
interval = 10_007
"#;

fn run(trim: bool, load: &str) -> tierlab_core::stats::RunResult {
    let text = BASE.replace("TRIM", &trim.to_string()) + load;
    Runner::run(&Config::from_toml_str(&text).unwrap()).unwrap()
}

#[test]
fn a_serial_runs_queued_ftl_counts_as_a_time_model_does() {
    for trim in [false, true] {
        let serial = run(trim, "");
        let timed = run(trim, "[load]\ntype = \"closed\"\nclients = 1\n");
        let (s, t) = (
            serial.tiers[1].ftl.as_ref().unwrap(),
            timed.tiers[1].ftl.as_ref().unwrap(),
        );
        assert!(s.erases > 100, "GC ran: {s:?}");
        assert_eq!(
            serial.tiers[1].counters.writes,
            timed.tiers[1].counters.writes
        );
        assert_eq!(s.host_pages_written, t.host_pages_written);
        assert_eq!(s.gc_pages_written, t.gc_pages_written);
        assert_eq!(s.erases, t.erases);
        assert_eq!(s.trims, t.trims);
        assert_eq!(s.erases_per_block_max, t.erases_per_block_max);
        assert_eq!(s.write_amplification, t.write_amplification);
        assert_eq!(s.erases_per_block_std, t.erases_per_block_std);
        // The timeline's points fell inside the batches of 4,096.
        assert!(serial.timeline.requests.len() > 10);
    }
}
