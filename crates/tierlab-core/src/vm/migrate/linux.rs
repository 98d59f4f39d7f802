//! `linux`: Linux's NUMA balancing in memory-tiering mode
//! (`kernel.numa_balancing = 2`), as in **Linux 6.6 (LTS)**, the first LTS
//! with the whole tiering series (Huang Ying, "NUMA balancing: optimize
//! memory placement for memory tiering system", 5.18 to 6.1).
//!
//! Sources (docs/notes/tiered-memory-sources.md, section 1): in
//! `kernel/sched/fair.c`, `should_numa_migrate_memory()` (its tiering
//! branch), `numa_promotion_rate_limit()`,
//! `numa_promotion_adjust_threshold()`, `numa_hint_fault_latency()`,
//! `task_scan_min()` / `task_scan_start()` and the debugfs knobs'
//! defaults; in `mm/migrate.c`, `migrate_balanced_pgdat()` and
//! `numamigrate_isolate_page()` (a promotion needs the fast node above its
//! high watermark, else kswapd is woken); in `mm/vmscan.c`, `can_demote()`
//! and `demote_folio_list()` (reclaim demotes instead of swapping when
//! `/sys/kernel/mm/numa/demotion_enabled` is set); in `mm/page_alloc.c`,
//! `__setup_per_zone_wmarks()` (`WMARK_PROMO`). Read in a Linux 6.3 tree
//! and in the 6.1 patches as posted; the 6.6 bodies were not re-read.
//!
//! Modelled: a scanner that every period makes the next `scan_size_mb` of
//! the process's slow-node pages inaccessible (fast-node pages are never
//! scanned in tiering-only mode); the next reference to such a page is a
//! hint fault whose latency is the time since its scan. The period stays
//! at `max(100 ms, scan_period_min_ms / windows)` (`task_scan_start()`):
//! in tiering-only mode no fault reaches the period's adaptation. Left
//! out: per-task CPU clocks (one clock), NUMA groups, huge pages.

use super::MigrationBuild;
use serde::{Deserialize, Serialize};

/// The kernel version whose defaults and behaviour this file models.
pub const KERNEL: &str = "6.6";

/// `[vm.migration]` with `type = "linux"`: the kernel's knobs and defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinuxParams {
    /// debugfs `sched/numa_balancing/scan_delay_ms`: before the first scan.
    pub scan_delay_ms: u64,
    /// debugfs `scan_period_min_ms`: shortest time to scan the whole space.
    pub scan_period_min_ms: u64,
    /// debugfs `scan_period_max_ms`: longest; also the period of the hot
    /// threshold's adjustment.
    pub scan_period_max_ms: u64,
    /// debugfs `scan_size_mb`: MiB made inaccessible per scan pass.
    pub scan_size_mb: u64,
    /// debugfs `hot_threshold_ms`: a hint fault sooner than this after
    /// its scan marks a hot page.
    pub hot_threshold_ms: u64,
    /// sysctl `kernel.numa_balancing_promote_rate_limit_MBps`: promotion
    /// candidates per second per node, MiB.
    #[serde(rename = "promote_rate_limit_MBps")]
    pub promote_rate_limit_mbps: u64,
    /// `/sys/kernel/mm/numa/demotion_enabled`. The kernel's default is
    /// false; tiering setups turn it on (the model's default, stated in
    /// docs/tiered-memory.md): without it the fast node's reclaim swaps.
    pub demotion_enabled: bool,
    /// sysctl `vm.watermark_scale_factor`, in 1/10,000 of the node: the
    /// spacing of the watermarks (min, low, high, promo).
    pub watermark_scale_factor: u64,
}

impl Default for LinuxParams {
    fn default() -> Self {
        LinuxParams {
            scan_delay_ms: 1000,
            scan_period_min_ms: 1000,
            scan_period_max_ms: 60_000,
            scan_size_mb: 256,
            hot_threshold_ms: 1000,
            promote_rate_limit_mbps: 65_536,
            demotion_enabled: true,
            watermark_scale_factor: 10,
        }
    }
}

/// Checks the scan keys Linux and TPP share.
pub(super) fn check_scan(
    delay: u64,
    min: u64,
    max: u64,
    size: u64,
) -> Result<(), (&'static str, String)> {
    let _ = delay; // 0 = scan at once: allowed.
    if min == 0 {
        return Err(("scan_period_min_ms", "must be at least 1 ms".into()));
    }
    if max < min {
        return Err((
            "scan_period_max_ms",
            format!("{max} is out of range; must be at least scan_period_min_ms ({min})"),
        ));
    }
    if size == 0 {
        return Err(("scan_size_mb", "must be at least 1 MiB".into()));
    }
    Ok(())
}

/// The kernel's range of `vm.watermark_scale_factor` (sysctl bounds 1 to 3000).
pub(super) fn check_wsf(v: u64) -> Result<(), (&'static str, String)> {
    if (1..=3000).contains(&v) {
        Ok(())
    } else {
        Err((
            "watermark_scale_factor",
            format!("{v} is out of range; 1 to 3000 (1/10,000 of the node)"),
        ))
    }
}

pub struct Linux;

impl MigrationBuild for Linux {
    type Params = LinuxParams;
    fn check(p: &LinuxParams) -> Result<(), (&'static str, String)> {
        check_scan(
            p.scan_delay_ms,
            p.scan_period_min_ms,
            p.scan_period_max_ms,
            p.scan_size_mb,
        )?;
        if p.hot_threshold_ms == 0 {
            return Err(("hot_threshold_ms", "must be at least 1".into()));
        }
        if p.promote_rate_limit_mbps == 0 {
            return Err((
                "promote_rate_limit_MBps",
                "must be at least 1 MiB/s (the kernel's default is 65536)".into(),
            ));
        }
        check_wsf(p.watermark_scale_factor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_kernels_and_ranges_name_their_key() {
        let d = LinuxParams::default();
        assert!(Linux::check(&d).is_ok());
        let bad = |p: LinuxParams| Linux::check(&p).unwrap_err().0;
        assert_eq!(
            bad(LinuxParams {
                hot_threshold_ms: 0,
                ..d.clone()
            }),
            "hot_threshold_ms"
        );
        assert_eq!(
            bad(LinuxParams {
                scan_period_max_ms: 10,
                ..d.clone()
            }),
            "scan_period_max_ms"
        );
        assert_eq!(
            bad(LinuxParams {
                promote_rate_limit_mbps: 0,
                ..d.clone()
            }),
            "promote_rate_limit_MBps"
        );
        assert_eq!(
            bad(LinuxParams {
                watermark_scale_factor: 3001,
                ..d
            }),
            "watermark_scale_factor"
        );
    }
}
