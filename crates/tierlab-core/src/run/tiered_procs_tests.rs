//! The checks of multilevel main memory under `[vm.cpu]` (the nodes as
//! bandwidth servers of the processes' loop): one process alone is the
//! serial run; processes sharing a node queue for its bandwidth, which
//! never serves more than its time; the all-fast second pass is the run of
//! one node of all the frames; same seed, same result.

use super::tests::{node, text, tiered};
use crate::config::Config;
use crate::cost::AccessCost;
use crate::run::Runner;
use crate::stats::RunResult;

fn run(text: &str) -> RunResult {
    Runner::run(&Config::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))).unwrap()
}

/// One process: the serial tests' moving hot set (`write_ratio` 0.25),
/// `rest` after `[vm]`.
fn hotset(rest: &str) -> String {
    text(0.25, rest)
}

/// Four programs at once (the `multiprogram` generator's default mix,
/// scaled down), one 64 B line per reference.
fn programs(rest: &str) -> String {
    format!(
        r#"
[workload]
type = "multiprogram"
seed = 3
scale = 0.03
[backing]
tech = "SSD-NVME-TLC"
[vm]
page_size = "4KiB"
{rest}
"#
    )
}

/// The epoch oracle hears every reference and moves pages at each epoch:
/// the serial loop takes its references one by one too.
const EPOCH: &str = "[vm.migration]\ntype = \"oracle-epoch\"\nepoch = 20000\n\
                     [vm.migration.cost]\npte_update_ns = 500\ntlb_shootdown_ns = 1000\n";

#[test]
fn one_process_alone_is_the_serial_run() {
    let nodes = format!(
        "{}{}{EPOCH}",
        node("dram", "DRAM-DDR4", "10%"),
        node("cxl", "CXL-DRAM", "100%")
    );
    let serial = run(&hotset(&nodes));
    let timed = run(&hotset(&format!("{nodes}[vm.cpu]\ncores = 1\n")));
    let (s, t) = (tiered(&serial), tiered(&timed));
    assert!(s.promotions > 0 && s.demotions > 0, "{s:?}");
    // The same decisions, the same charges: nothing waits for a node when
    // one process runs (its copies follow its own accesses).
    assert_eq!((t.promotions, t.demotions), (s.promotions, s.demotions));
    assert_eq!(t.overhead.total_ns, s.overhead.total_ns);
    for n in &t.nodes {
        assert_eq!(n.wait_ns, Some(0.0), "{}", n.name);
        assert!(n.bandwidth_busy_ns.unwrap() > 0.0);
    }
    assert!(s.nodes.iter().all(|n| n.wait_ns.is_none()));
    assert_eq!(t.time_ns, s.time_ns);
    assert_eq!(t.all_fast_time_ns, s.all_fast_time_ns);
    assert_eq!(timed.total_time_ns, serial.total_time_ns);
    assert!(t.slowdown_basis.starts_with("a second pass"));
    // The process's time is its CPU time: user (the node differences in
    // it) and kernel (the faults and the policy's overheads).
    let p = &timed.processes[0];
    assert_eq!(p.user_ns.unwrap() + p.system_ns.unwrap(), p.runtime_ns);
}

#[test]
fn processes_sharing_a_node_queue_for_its_bandwidth() {
    // Four programs, most of their pages on DCPMM (slow-first): each line
    // moves one 256 B access unit at 6,566 MB/s, 39 ns of a 344 ns access.
    let rest = format!(
        "{}{}[vm.placement]\ntype = \"slow-first\"\n[vm.cpu]\ncores = 4\n",
        node("dram", "DRAM-DDR4", "20%"),
        node("pm", "DCPMM", "100%")
    );
    let r = run(&programs(&rest));
    let t = tiered(&r);
    assert_eq!(r.processes.len(), 4);
    let pm = &t.nodes[1];
    assert!(pm.accesses > t.nodes[0].accesses, "{t:?}");
    // The node's bandwidth is held exactly for its accesses' transfers
    // (no migration here), never for longer than the run.
    let cat = crate::tech::Catalog::builtin();
    let c = AccessCost::new(cat.get("DCPMM").unwrap(), 1.0, 0.0);
    assert_eq!(
        pm.bandwidth_busy_ns.unwrap(),
        pm.accesses as f64 * c.transfer_ns(64)
    );
    assert!(pm.bandwidth_busy_ns.unwrap() <= r.total_time_ns);
    // Four processes at once wait for it; the same programs one at a time
    // (one hardware thread each, on their own) do not.
    assert!(pm.wait_ns.unwrap() > 0.0, "{t:?}");
    for p in &r.processes {
        assert!(p.runtime_ns >= p.user_ns.unwrap() + p.system_ns.unwrap() - 1e-6);
    }
    assert!(t.slowdown > 1.0);
    assert_eq!(t.time_ns, r.total_time_ns);
}

#[test]
fn the_all_fast_pass_is_the_run_of_one_node_of_all_the_frames() {
    let cpu = "[vm.cpu]\ncores = 2\nthreads_per_core = 2\n";
    let r = run(&programs(&format!(
        "{}{}[vm.migration]\ntype = \"hemem\"\nsample_period = 7\nperiod_ms = 1\n{cpu}",
        node("dram", "DRAM-DDR4", "10%"),
        node("cxl", "CXL-DRAM", "100%")
    )));
    let t = tiered(&r);
    assert!(t.promotions > 0, "{t:?}");
    let frames: u64 = t.nodes.iter().map(|n| n.frames).sum();
    let fast = run(&programs(&format!(
        "{}{cpu}",
        node("dram", "DRAM-DDR4", &format!("{}KiB", frames * 4))
    )));
    assert_eq!(t.all_fast_time_ns, fast.total_time_ns);
    assert_eq!(tiered(&fast).slowdown, 1.0);
}

#[test]
fn same_seed_same_result() {
    let rest = format!(
        "{}{}[vm.migration]\ntype = \"tpp\"\n[vm.cpu]\ncores = 4\n",
        node("dram", "DRAM-DDR4", "25%"),
        node("cxl", "CXL-DRAM", "100%")
    );
    let a = serde_json::to_string(&run(&programs(&rest))).unwrap();
    assert_eq!(a, serde_json::to_string(&run(&programs(&rest))).unwrap());
}
