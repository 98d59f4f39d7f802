//! The checks of multilevel main memory's model (issue 40's "Done when"),
//! each on whole runs through the one driver: one node is today's run;
//! a fast node holding the footprint moves nothing; two equal nodes cost
//! only their migrations; the all-fast baseline is the run of one node of
//! all the frames; the static oracle beats the static placements and its
//! time is the sum from per-page counts; HeMem's cap; same seed, same
//! result.

use crate::config::Config;
use crate::cost::AccessCost;
use crate::run::Runner;
use crate::stats::RunResult;
use crate::vm::tiered_result::TieredResult;

/// A moving hot set of 4,000 pages (one 4 KiB page per reference), read
/// by a `[vm]` run, with `rest` after it.
fn config(rest: &str) -> Config {
    config_w(0.25, rest)
}

/// [`config`] with writes at `write_ratio`.
fn config_w(write_ratio: f64, rest: &str) -> Config {
    Config::from_toml_str(&text(write_ratio, rest)).unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn text(write_ratio: f64, rest: &str) -> String {
    format!(
        r#"
[workload]
type = "hotset"
seed = 7
[workload.hotset]
pages = 4000
requests = 200000
hot_share = 0.05
move_every = 20000
write_ratio = {write_ratio}
[backing]
tech = "PCM-SLC"
[vm]
page_size = "4KiB"
tlb = {{ entries = 64 }}
{rest}
"#
    )
}

fn run(rest: &str) -> RunResult {
    Runner::run(&config(rest)).unwrap()
}

pub(super) fn tiered(r: &RunResult) -> &TieredResult {
    r.tiered
        .as_ref()
        .expect("a run with nodes has a tiered object")
}

pub(super) fn node(name: &str, tech: &str, capacity: &str) -> String {
    format!("[[vm.node]]\nname = \"{name}\"\ntech = \"{tech}\"\ncapacity = \"{capacity}\"\n")
}

/// HeMem with periods short enough to act within 200,000 references
/// (tens of ms of simulated time): a sampled policy that migrates.
const HEMEM: &str = "[vm.migration]\ntype = \"hemem\"\nsample_period = 7\nperiod_ms = 1\n";

#[test]
fn one_node_is_todays_run_byte_for_byte() {
    for (tech, cap) in [("DRAM-DDR3", "30%"), ("DRAM-DDR4", "1MiB")] {
        let today = run(&format!(
            "[[tier]]\ntech = \"{tech}\"\ncapacity = \"{cap}\"\n"
        ));
        let mut one = run(&format!(
            "[[vm.node]]\ntech = \"{tech}\"\ncapacity = \"{cap}\"\n"
        ));
        let t = one.tiered.take().unwrap();
        assert!(today.vm.as_ref().unwrap().major_faults > 0 || cap == "30%");
        assert_eq!(
            serde_json::to_string(&today).unwrap(),
            serde_json::to_string(&one).unwrap()
        );
        assert_eq!((t.promotions, t.demotions, t.slowdown), (0, 0, 1.0));
        assert_eq!(t.fast_share_of_accesses, 1.0);
    }
}

#[test]
fn a_fast_node_that_holds_the_footprint_moves_nothing() {
    let r = run(&format!(
        "{}{}{HEMEM}[vm.migration.cost]\nsample_ns = 100\n",
        node("dram", "DRAM-DDR4", "100%"),
        node("pcm", "PCM-SLC", "100%")
    ));
    let t = tiered(&r);
    assert_eq!((t.promotions, t.demotions, t.migration_bytes), (0, 0, 0));
    assert_eq!(t.nodes[1].accesses, 0);
    assert!(t.policy_report.samples > 0);
    // The overhead is the samples', charged; the slowdown is 1 plus it.
    assert_eq!(t.overhead.total_ns, t.policy_report.samples as f64 * 100.0);
    assert_eq!(t.time_ns, t.all_fast_time_ns + t.overhead.total_ns);
    let want = 1.0 + t.overhead.total_ns / t.all_fast_time_ns;
    assert!(
        (t.slowdown - want).abs() < 1e-12,
        "{} vs {want}",
        t.slowdown
    );
    assert!(t.slowdown > 1.0);
    assert_eq!(
        r.total_time_ns, t.time_ns,
        "the run's time has the overhead"
    );
}

#[test]
fn two_equal_nodes_cost_only_their_migrations() {
    let r = run(&format!(
        "{}{}{HEMEM}[vm.migration.cost]\npte_update_ns = 500\ntlb_shootdown_ns = 1000\n",
        node("a", "DRAM-DDR4", "10%"),
        node("b", "DRAM-DDR4", "100%")
    ));
    let t = tiered(&r);
    assert!(t.promotions > 10 && t.demotions > 0, "{t:?}");
    // Access time = the all-fast run's.
    let v = r.vm.as_ref().unwrap();
    let compute = r.compute_time_ns;
    assert_eq!(v.t_addr_ns + v.t_data_ns + compute, t.all_fast_time_ns);
    // Overhead = migrations x (the copy + the page-table update + the
    // shootdown), the copy one page read or written on DRAM-DDR4.
    let cat = crate::tech::Catalog::builtin();
    let c = AccessCost::new(cat.get("DRAM-DDR4").unwrap(), 1.0, 0.0);
    let copy = c.read(4096).max(c.write(4096));
    let moves = (t.promotions + t.demotions) as f64;
    assert_eq!(t.overhead.migrations_ns, moves * (copy + 1500.0));
    // Plus HeMem's samples at the default sample_ns.
    let sample = crate::vm::migrate::CostConfig::default().sample_ns.0;
    assert!(sample > 0.0);
    assert_eq!(
        t.overhead.samples_ns,
        t.policy_report.samples as f64 * sample
    );
    assert_eq!(
        t.overhead.total_ns,
        t.overhead.migrations_ns + t.overhead.samples_ns
    );
    assert_eq!(t.time_ns, t.all_fast_time_ns + t.overhead.total_ns);
    assert_eq!(t.migration_bytes, (t.promotions + t.demotions) * 4096);
}

#[test]
fn two_equal_nodes_at_the_default_costs_cost_their_events_only() {
    // Linux's scanner at the default [vm.migration.cost] (the benchmark's
    // figures, docs/tiered-memory.md): the access time is still the
    // all-fast run's, and the overhead is each event times its default.
    let r = run(&format!(
        "{}{}[vm.migration]\ntype = \"linux\"\nscan_delay_ms = 1\nscan_period_min_ms = 100\n\
         scan_size_mb = 1\nhot_threshold_ms = 5\n",
        node("a", "DRAM-DDR4", "10%"),
        node("b", "DRAM-DDR4", "100%")
    ));
    let t = tiered(&r);
    assert!(t.promotions > 0 && t.policy_report.hint_faults > 0 && t.scanned_pages > 0);
    let v = r.vm.as_ref().unwrap();
    assert_eq!(
        v.t_addr_ns + v.t_data_ns + r.compute_time_ns,
        t.all_fast_time_ns
    );
    let d = crate::vm::migrate::CostConfig::default();
    let cat = crate::tech::Catalog::builtin();
    let c = AccessCost::new(cat.get("DRAM-DDR4").unwrap(), 1.0, 0.0);
    let copy = c.read(4096).max(c.write(4096));
    let moves = (t.promotions + t.demotions) as f64;
    let per_move = copy + d.pte_update_ns.0 + d.tlb_shootdown_ns.0;
    assert_eq!(t.overhead.migrations_ns, moves * per_move);
    assert_eq!(
        t.overhead.hint_faults_ns,
        t.policy_report.hint_faults as f64 * d.hint_fault_ns.0
    );
    assert_eq!(t.overhead.scans_ns, t.scanned_pages as f64 * d.scan_ns.0);
    assert!(d.hint_fault_ns.0 > 0.0 && d.pte_update_ns.0 > 0.0 && d.scan_ns.0 > 0.0);
    // Every key has a sourced default: none is left uncharged.
    assert!(t.uncharged.is_empty(), "{:?}", t.uncharged);
    assert_eq!(t.time_ns, t.all_fast_time_ns + t.overhead.total_ns);
}

#[test]
fn the_all_fast_baseline_is_the_run_of_one_node_of_all_the_frames() {
    // DRAM over PCM with swap (the nodes hold 60% of the footprint):
    // the baseline this pass computes equals a second run with one DRAM
    // node of both nodes' bytes, exactly.
    let r = run(&format!(
        "{}{}{HEMEM}",
        node("dram", "DRAM-DDR4", "400KiB"),
        node("pcm", "PCM-SLC", "9200KiB")
    ));
    let t = tiered(&r);
    assert!(r.vm.as_ref().unwrap().major_faults > 0, "swap is used");
    assert!(t.promotions > 0 && t.slowdown > 1.0);
    let fast = run(&node("dram", "DRAM-DDR4", "9600KiB"));
    assert_eq!(t.all_fast_time_ns, fast.total_time_ns);
    let f = tiered(&fast);
    assert_eq!(f.time_ns, fast.total_time_ns);
    assert_eq!(
        (r.vm.as_ref().unwrap().major_faults, r.misses),
        (fast.vm.as_ref().unwrap().major_faults, fast.misses)
    );
}

#[test]
fn the_static_oracle_is_the_least_static_placement_and_the_sum_of_its_counts() {
    let nodes = format!(
        "{}{}",
        node("dram", "DRAM-DDR4", "8%"),
        node("pcm", "PCM-SLC", "100%")
    );
    let reads = |rest: &str| Runner::run(&config_w(0.0, &format!("{nodes}{rest}"))).unwrap();
    let data = |r: &RunResult| tiered(r).nodes.iter().map(|n| n.time_ns).sum::<f64>();
    let oracle = reads("[vm.migration]\ntype = \"oracle-static\"\n");
    let o = tiered(&oracle);
    for placement in ["first-touch", "slow-first", "interleave"] {
        let r = reads(&format!("[vm.placement]\ntype = \"{placement}\"\n"));
        assert!(data(&oracle) <= data(&r), "{placement}");
    }
    // By hand: count each page's references, put the most counted on the
    // fast node's frames, add count x the node's read of a page.
    let mut counts = crate::hash::KeyMap::<u64>::default();
    let cfg = config_w(0.0, "[[tier]]\ntech = \"DRAM-DDR4\"\ncapacity = \"100%\"\n");
    let src = crate::source::byte_source(cfg.workload().unwrap().source().unwrap()).unwrap();
    let mut b = crate::source::setup::Batches::open(&src).unwrap();
    while let Some(batch) = b.next_batch().unwrap() {
        for q in batch {
            *counts.entry(q.key >> 12).or_insert(0) += 1;
        }
    }
    let mut c: Vec<u64> = counts.values().copied().collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let k = o.nodes[0].frames as usize;
    let cat = crate::tech::Catalog::builtin();
    let cost = |t: &str| AccessCost::new(cat.get(t).unwrap(), 1.0, 0.0).read(4096);
    let fast: u64 = c[..k].iter().sum();
    let slow: u64 = c[k..].iter().sum();
    assert_eq!(
        data(&oracle),
        fast as f64 * cost("DRAM-DDR4") + slow as f64 * cost("PCM-SLC")
    );
    assert_eq!(o.nodes[0].accesses, fast);
    assert_eq!(o.fast_share_of_accesses, o.oracle_fast_share_of_accesses);
    assert_eq!((o.promotions, o.demotions), (0, 0));
}

#[test]
fn hemem_moves_at_most_its_cap_per_period() {
    // A cap of 4 pages per 1 ms period: over the run's periods, no more.
    let r = run(&format!(
        "{}{}[vm.migration]\ntype = \"hemem\"\nsample_period = 3\nperiod_ms = 1\n\
         migrate_bytes_per_period = \"16KiB\"\n",
        node("dram", "DRAM-DDR4", "5%"),
        node("pcm", "PCM-SLC", "100%")
    ));
    let t = tiered(&r);
    let periods = (t.simulated_s * 1e3).ceil() as u64;
    assert!(t.promotions > 0);
    assert!(
        t.migration_bytes <= periods * 16 * 1024,
        "{} B in {periods} periods",
        t.migration_bytes
    );
}

#[test]
fn same_seed_same_result() {
    let rest = format!(
        "{}{}{HEMEM}",
        node("dram", "DRAM-DDR4", "10%"),
        node("cxl", "CXL-DRAM", "100%")
    );
    let a = serde_json::to_string(&run(&rest)).unwrap();
    assert_eq!(a, serde_json::to_string(&run(&rest)).unwrap());
    let c = Config::from_toml_str(&text(0.25, &rest).replace("seed = 7", "seed = 8")).unwrap();
    let other = serde_json::to_string(&Runner::run(&c).unwrap()).unwrap();
    assert_ne!(a, other);
}

/// Every policy, its periods short enough to act within the test's trace.
const POLICIES: [&str; 7] = [
    "none",
    "linux\nscan_delay_ms = 1\nscan_period_min_ms = 100\nscan_size_mb = 1\nhot_threshold_ms = 5",
    "tpp\nscan_delay_ms = 1\nscan_period_min_ms = 100\nscan_size_mb = 1",
    "hemem\nsample_period = 7\nperiod_ms = 1",
    "memtis\nsample_period = 7\nstore_sample_period = 7\nperiod_ms = 1\n\
     adaptation_samples = 500\ncooling_samples = 5000",
    "oracle-static",
    "oracle-epoch\nepoch = 20000",
];

#[test]
fn with_room_to_spare_no_policy_moves_a_page() {
    // First-touch on a fast node of twice the footprint (4,000 pages of
    // 4 KiB in 32 MiB): every page is on it from its first reference, and
    // the node stays above every watermark (the kernel's reclaim keeps free pages: a node that only
    // just holds the footprint demotes under `linux` and `tpp`). So
    // nothing moves, and the slowdown is 1 plus the policy's overhead.
    for policy in POLICIES {
        let (name, params) = policy.split_once('\n').unwrap_or((policy, ""));
        let r = run(&format!(
            "{}{}[vm.migration]\ntype = \"{name}\"\n{params}\n",
            node("dram", "DRAM-DDR4", "32MiB"),
            node("cxl", "CXL-DRAM", "100%")
        ));
        let t = tiered(&r);
        assert_eq!((t.promotions, t.demotions), (0, 0), "{name}: {t:?}");
        assert_eq!(t.nodes[1].accesses, 0, "{name}");
        assert_eq!(
            t.time_ns,
            t.all_fast_time_ns + t.overhead.total_ns,
            "{name}"
        );
        let want = 1.0 + t.overhead.total_ns / t.all_fast_time_ns;
        assert!((t.slowdown - want).abs() < 1e-12, "{name}");
    }
}

#[test]
fn every_policy_runs_and_reports() {
    for policy in POLICIES {
        let (name, params) = policy.split_once('\n').unwrap_or((policy, ""));
        let r = run(&format!(
            "{}{}[vm.migration]\ntype = \"{name}\"\n{params}\n[vm.migration.cost]\nhint_fault_ns = 1000\n",
            node("dram", "DRAM-DDR4", "10%"),
            node("cxl", "CXL-DRAM", "100%")
        ));
        let t = tiered(&r);
        assert_eq!(t.policy, name);
        assert!(t.slowdown >= 1.0, "{name}: {}", t.slowdown);
        let acc: u64 = t.nodes.iter().map(|n| n.accesses).sum();
        assert_eq!(acc, r.requests, "{name}");
        // (TPP promotes only above the fast node's high watermark, which
        // the kernel's formulas put out of reach on a node this small.)
        if !matches!(name, "none" | "oracle-static" | "tpp") {
            assert!(t.promotions > 0, "{name} promoted nothing: {t:?}");
        }
        if matches!(name, "linux" | "tpp") {
            assert!(
                t.policy_report.hint_faults > 0 && t.scanned_pages > 0,
                "{name}"
            );
            assert_eq!(
                t.overhead.hint_faults_ns,
                t.policy_report.hint_faults as f64 * 1000.0
            );
            assert_eq!(t.kernel.as_deref(), Some("6.6"));
        }
    }
}

#[test]
fn each_node_has_its_energy_wear_and_cost_and_the_memory_sums_them() {
    // DRAM over PCM, both holding the footprint between them (no swap):
    // every page placed once, migrations both ways.
    let r = run(&format!(
        "{}{}{HEMEM}",
        node("dram", "DRAM-DDR4", "10%"),
        node("pcm", "PCM-SLC", "100%")
    ));
    let t = tiered(&r);
    assert!(t.promotions > 0 && t.demotions > 0, "{t:?}");
    assert_eq!(r.vm.as_ref().unwrap().major_faults, 0);
    let (dram, pcm) = (&t.nodes[0], &t.nodes[1]);
    // Bytes programmed: the references' writes, a whole page per page
    // placed (each page once: nothing leaves memory) and per migration in.
    let writes: u64 = t
        .nodes
        .iter()
        .map(|n| n.wear.bytes_programmed - 4096 * (n.promoted_in + n.demoted_in))
        .sum::<u64>();
    let placed = r.vm.as_ref().unwrap().pages_touched;
    assert_eq!(writes, r.writes * 4096 + placed * 4096, "one-page writes");
    assert_eq!(
        pcm.wear.bytes_programmed % 4096,
        0,
        "whole pages and page-sized writes"
    );
    // PCM's energy: 100 pJ per 64-byte unit read or programmed (S3), the
    // copies' units included (a page is 64 units).
    let units_in = 64 * (pcm.promoted_in + pcm.demoted_in);
    assert!(pcm.pages_programmed >= units_in + pcm.writes);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    assert!(close(
        pcm.energy.energy.read_j.unwrap(),
        pcm.pages_read as f64 * 100e-12
    ));
    assert!(close(
        pcm.energy.energy.write_j.unwrap(),
        pcm.pages_programmed as f64 * 100e-12
    ));
    assert!(pcm.pages_read >= pcm.reads + 64 * pcm.migrated_out);
    // Its lifetime: 1e8 cycles over the bytes it took at the run's rate.
    let s = r.total_time_ns / 1e9;
    let want = crate::device::wear::lifetime_years(
        1e8,
        pcm.capacity as f64,
        pcm.wear.bytes_programmed as f64,
        s,
        1.0,
    );
    assert!(close(pcm.wear.lifetime_years.unwrap(), want));
    // DRAM-DDR4 has no per-access energy: unknown, named in the run's
    // total by node; the memory tier adds what is known.
    assert!(dram.energy.energy_unknown.contains(&"read"));
    assert!(r
        .run_energy
        .energy_unknown
        .contains(&"dram.read".to_string()));
    let m = &r.tiers[0];
    assert_eq!(m.tech, "DRAM-DDR4+PCM-SLC");
    assert_eq!(
        m.wear.bytes_programmed,
        dram.wear.bytes_programmed + pcm.wear.bytes_programmed
    );
    let first = [pcm, dram]
        .iter()
        .filter_map(|n| n.wear.lifetime_years)
        .min_by(f64::total_cmp);
    assert_eq!(m.wear.lifetime_years, first);
    assert!(close(
        m.energy.device_busy_ns,
        dram.energy.device_busy_ns + pcm.energy.device_busy_ns
    ));
    assert_eq!(m.energy.energy.read_j, None, "DRAM's reads are unknown");
    // Without [cost] each node at its catalog price: PCM has none.
    assert_eq!(pcm.area_cost.cost_usd, None);
    assert_eq!(m.area_cost.cost_usd, None);
    assert!(r.cost.is_none());
}

#[test]
fn cost_year_prices_every_node_and_the_run_adds_them() {
    let rest = format!(
        "{}{}{HEMEM}",
        node("dram", "DRAM-DDR4", "10%"),
        node("cxl", "CXL-DRAM", "100%")
    );
    let cfg = Config::from_toml_str(&format!("{}\n[cost]\nyear = 2023\n", text(0.25, &rest)))
        .unwrap_or_else(|e| panic!("{e}"));
    let r = Runner::run(&cfg).unwrap();
    let t = tiered(&r);
    let cat = crate::tech::Catalog::builtin();
    for n in &t.nodes {
        let priced = crate::device::price::in_year(cat.get(&n.tech).unwrap(), 2023).unwrap();
        let want = crate::device::area_cost(&priced, n.capacity, false);
        assert_eq!(n.area_cost, want);
        assert_eq!(n.area_cost.price_year, Some(2023));
    }
    let total: f64 = t.nodes.iter().map(|n| n.area_cost.cost_usd.unwrap()).sum();
    let c = r.cost.as_ref().expect("[cost] gives the run's cost");
    assert_eq!((c.year, c.total_usd), (2023, total));
    assert_eq!(r.tiers[0].area_cost.cost_usd, Some(total));
    // A year a node's medium has no price for: the key path, by node.
    let bad = Config::from_toml_str(&format!("{}\n[cost]\nyear = 1999\n", text(0.25, &rest)));
    let e = match bad {
        Err(e) => e.to_string(),
        Ok(c) => Runner::run(&c).unwrap_err().to_string(),
    };
    assert!(e.contains("cost.year") && e.contains("vm.node[0]"), "{e}");
}

#[test]
fn the_timeline_has_the_nodes_columns_and_they_add_up() {
    use crate::stats::Column;
    let rest = format!(
        "{}{}{HEMEM}[vm.migration.cost]\npte_update_ns = 500\n",
        node("dram", "DRAM-DDR4", "10%"),
        node("pcm", "PCM-SLC", "100%")
    );
    let cfg = Config::from_toml_str(&format!("{}\n[run]\ninterval = 20000\n", text(0.25, &rest)))
        .unwrap_or_else(|e| panic!("{e}"));
    let r = Runner::run(&cfg).unwrap();
    let t = tiered(&r);
    let tl = &r.timeline;
    assert_eq!(tl.requests.len(), 10);
    let counts = |k: &str| match tl.columns.get(k) {
        Some(Column::Counts(v)) => v.clone(),
        other => panic!("{k}: {other:?}"),
    };
    let figures = |k: &str| match tl.columns.get(k) {
        Some(Column::Figures(v)) => v.clone(),
        other => panic!("{k}: {other:?}"),
    };
    for n in &t.nodes {
        let v = counts(&format!("accesses_{}", n.name));
        assert_eq!(v.len(), 10);
        assert_eq!(v.iter().sum::<u64>(), n.accesses, "{}", n.name);
    }
    assert_eq!(counts("promotions").iter().sum::<u64>(), t.promotions);
    assert_eq!(counts("demotions").iter().sum::<u64>(), t.demotions);
    assert_eq!(
        counts("migration_bytes").iter().sum::<u64>(),
        t.migration_bytes
    );
    let over: f64 = figures("overhead_ns").iter().sum();
    assert!((over - t.overhead.total_ns).abs() < 1e-6 * t.overhead.total_ns);
    // The moving hot set: migrations happen in more than one interval,
    // and the fast share moves with them.
    assert!(counts("promotions").iter().filter(|&&p| p > 0).count() > 1);
    let fast = figures("fast_share");
    let (d, p) = (counts("accesses_dram"), counts("accesses_pcm"));
    for i in 0..10 {
        assert!((fast[i] - d[i] as f64 / (d[i] + p[i]) as f64).abs() < 1e-12);
    }
    // Without nodes no such column.
    let plain = Config::from_toml_str(&format!(
        "{}\n[run]\ninterval = 20000\n",
        text(
            0.25,
            "[[tier]]\ntech = \"DRAM-DDR4\"\ncapacity = \"100%\"\n"
        )
    ))
    .unwrap();
    assert!(Runner::run(&plain).unwrap().timeline.columns.is_empty());
}
