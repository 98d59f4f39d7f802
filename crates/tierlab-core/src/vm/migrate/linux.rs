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

use super::{
    BuildCtx, Hears, MigrationBuild, MigrationPolicy, Move, Moves, Node, PolicyReport, FAST,
};
use crate::vm::nodes::Nodes;
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
    fn build(p: &LinuxParams, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
        Ok(Box::new(LinuxPolicy::new(p, ctx)))
    }
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

/// A node's watermarks in pages, as `__setup_per_zone_wmarks()` spaces
/// them: min is the node's share of `min_free_kbytes`, then each of low,
/// high and promo one step above the last, the step being
/// `max(min / 4, frames x watermark_scale_factor / 10,000)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub promo: u64,
}

/// `min_free_kbytes` as `calculate_min_free_kbytes()` sets it:
/// int_sqrt(lowmem KiB x 16), clamped to 128 KiB .. 256 MiB (the cap
/// 6.x has; vm/pressure.rs keeps Linux 3.2's 64 MiB for S3).
pub fn min_free_kbytes(total_bytes: u64) -> u64 {
    ((total_bytes / 1024 * 16) as f64)
        .sqrt()
        .floor()
        .clamp(128.0, 262_144.0) as u64
}

/// Every node's watermarks (`frames` per node, fastest first).
pub fn watermarks(frames: &[u64], page_bytes: u64, wsf: u64) -> Vec<Watermarks> {
    let total: u64 = frames.iter().sum();
    let min_pages = min_free_kbytes(total * page_bytes) * 1024 / page_bytes;
    frames
        .iter()
        .map(|&f| {
            // Each zone's share of the minimum, in proportion to its pages.
            let min = (min_pages as u128 * f as u128 / total.max(1) as u128) as u64;
            let step = (min / 4).max((f as u128 * wsf as u128 / 10_000) as u64);
            Watermarks {
                min,
                low: min + step,
                high: min + 2 * step,
                promo: min + 3 * step,
            }
        })
        .collect()
}

const MS: f64 = 1e6;

/// The NUMA-balancing scanner (`task_tick_numa`, `task_numa_work`):
/// first pass `scan_delay_ms` in, then one pass of `scan_size_mb` every
/// `task_scan_start()` period. Shared with `tpp`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scanner {
    scan_mb: u64,
    period_min_ms: u64,
    page_bytes: u64,
    pub next_ns: f64,
    pub passes: u64,
}

/// `MAX_SCAN_WINDOW`: never scan more than 2560 MB/s.
const MAX_SCAN_WINDOW: u64 = 2560;

impl Scanner {
    pub fn new(delay_ms: u64, period_min_ms: u64, scan_mb: u64, page_bytes: u64) -> Self {
        Scanner {
            scan_mb,
            period_min_ms,
            page_bytes,
            next_ns: delay_ms as f64 * MS,
            passes: 0,
        }
    }

    /// Pages per pass.
    pub fn pass_pages(&self) -> u64 {
        ((self.scan_mb << 20) / self.page_bytes).max(1)
    }

    /// `task_scan_min()` in ms for a task of `resident` pages:
    /// max(1000 / (2560 / scan_size), scan_period_min / windows), windows
    /// = the resident pages in whole passes.
    pub fn period_ms(&self, resident: u64) -> u64 {
        let per = self.pass_pages();
        let windows = resident.max(per).div_ceil(per);
        let floor_windows = if self.scan_mb < MAX_SCAN_WINDOW {
            MAX_SCAN_WINDOW / self.scan_mb
        } else {
            1
        };
        (1000 / floor_windows).max(self.period_min_ms / windows)
    }

    /// A pass now, when due: asks for it and sets the next.
    pub fn tick(&mut self, t_ns: f64, nodes: &Nodes, m: &mut Moves) {
        if t_ns < self.next_ns {
            return;
        }
        m.scan += self.pass_pages();
        self.passes += 1;
        self.next_ns = t_ns + self.period_ms(nodes.resident()) as f64 * MS;
    }
}

pub struct LinuxPolicy {
    p: LinuxParams,
    scanner: Scanner,
    wm: Watermarks,
    /// `max(1 GiB, node / 16)` in pages (`pgdat_free_space_enough`).
    enough: u64,
    /// The rate limit in pages per second.
    limit: u64,
    /// PGPROMOTE_CANDIDATE, and the rate window's start and count there.
    cand: u64,
    rl_start_ms: f64,
    rl_cand: u64,
    /// The adjusted threshold (0: none), its period's start and count.
    th_ms: f64,
    th_start_ms: f64,
    th_cand: u64,
    r: PolicyReport,
}

impl LinuxPolicy {
    pub fn new(p: &LinuxParams, ctx: &BuildCtx) -> Self {
        let page = ctx.page_bytes;
        let wm = watermarks(&ctx.frames, page, p.watermark_scale_factor)[0];
        LinuxPolicy {
            scanner: Scanner::new(p.scan_delay_ms, p.scan_period_min_ms, p.scan_size_mb, page),
            wm,
            enough: ((1u64 << 30) / page).max(ctx.frames[0] >> 4),
            limit: ((p.promote_rate_limit_mbps << 20) / page).max(1),
            cand: 0,
            rl_start_ms: 0.0,
            rl_cand: 0,
            th_ms: 0.0,
            th_start_ms: 0.0,
            th_cand: 0,
            r: PolicyReport::default(),
            p: p.clone(),
        }
    }

    /// `numa_promotion_adjust_threshold()`: once per scan_period_max,
    /// one step of 2 x hot_threshold / 16 toward `limit x period`
    /// candidates per period.
    fn adjust_threshold(&mut self, now_ms: f64) {
        let period = self.p.scan_period_max_ms as f64;
        if now_ms - self.th_start_ms <= period {
            return;
        }
        self.th_start_ms = now_ms;
        let ref_th = self.p.hot_threshold_ms as f64;
        let ref_cand = self.limit * self.p.scan_period_max_ms / 1000;
        let diff = self.cand - self.th_cand;
        let unit = ref_th * 2.0 / ADJUST_STEPS;
        let mut th = if self.th_ms > 0.0 { self.th_ms } else { ref_th };
        if diff > ref_cand * 11 / 10 {
            th = (th - unit).max(unit);
        } else if diff < ref_cand * 9 / 10 {
            th = (th + unit).min(ref_th * 2.0);
        }
        self.th_cand = self.cand;
        self.th_ms = th;
    }

    /// `numa_promotion_rate_limit()`: counts the candidate, then refuses
    /// when this second's candidates reach the limit.
    fn rate_limited(&mut self, now_ms: f64) -> bool {
        self.cand += 1;
        if now_ms - self.rl_start_ms > 1000.0 {
            self.rl_start_ms = now_ms;
            self.rl_cand = self.cand - 1;
        }
        self.cand - self.rl_cand >= self.limit
    }

    /// kswapd's target in tiering mode (`pgdat_balanced` at WMARK_PROMO):
    /// demote (or, without demotion, swap out) until the fast node's free
    /// pages reach its promo watermark.
    fn wake_kswapd(&self, nodes: &Nodes, m: &mut Moves) {
        let free = nodes.free(FAST);
        let want = self.wm.promo.min(nodes.frames(FAST)).saturating_sub(free);
        if want == 0 {
            return;
        }
        if self.p.demotion_enabled && nodes.len() > 1 {
            m.reclaim.push((FAST, want));
        } else {
            m.evict.push((FAST, want));
        }
    }
}

/// `NUMA_MIGRATION_ADJUST_STEPS`.
const ADJUST_STEPS: f64 = 16.0;

impl MigrationPolicy for LinuxPolicy {
    fn hears(&self) -> Hears {
        Hears::HintFaults
    }

    fn on_hint_fault(
        &mut self,
        page: u64,
        node: Node,
        scanned_ns: f64,
        t_ns: f64,
        nodes: &Nodes,
        m: &mut Moves,
    ) {
        self.r.hint_faults += 1;
        if node == FAST {
            return;
        }
        let now_ms = t_ns / MS;
        // should_numa_migrate_memory(), tiering branch.
        if nodes.free(FAST) > self.wm.promo + self.enough {
            self.th_ms = 0.0;
        } else {
            self.adjust_threshold(now_ms);
            let th = if self.th_ms > 0.0 {
                self.th_ms
            } else {
                self.p.hot_threshold_ms as f64
            };
            if (t_ns - scanned_ns) / MS >= th {
                self.r.refused_threshold += 1;
                return;
            }
            if self.rate_limited(now_ms) {
                self.r.refused_rate_limit += 1;
                return;
            }
            self.r.candidates += 1;
        }
        // numamigrate_isolate_folio(): the fast node above high + the page,
        // else kswapd is woken and the promotion refused for now.
        if nodes.free(FAST) <= self.wm.high + 1 {
            self.r.refused_watermark += 1;
            self.wake_kswapd(nodes, m);
            return;
        }
        m.push(Move {
            page,
            from: node,
            to: FAST,
        });
    }

    fn next_tick(&self) -> f64 {
        self.scanner.next_ns
    }

    fn tick(&mut self, t_ns: f64, nodes: &Nodes, m: &mut Moves) {
        self.scanner.tick(t_ns, nodes, m);
    }

    /// An allocation on the fast node below its low watermark wakes kswapd.
    fn on_insert(&mut self, _page: u64, node: Node, nodes: &Nodes, m: &mut Moves) {
        if node == FAST && nodes.free(FAST) < self.wm.low {
            self.wake_kswapd(nodes, m);
        }
    }

    fn report(&self) -> PolicyReport {
        PolicyReport {
            scans: self.scanner.passes,
            threshold: Some(if self.th_ms > 0.0 {
                self.th_ms
            } else {
                self.p.hot_threshold_ms as f64
            }),
            ..self.r.clone()
        }
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

    fn ctx(frames: &[u64]) -> BuildCtx<'static> {
        BuildCtx {
            page_bytes: 4096,
            frames: frames.to_vec(),
            counts: None,
            epoch_counts: None,
        }
    }

    /// Nodes of `frames` with the fast node `used` pages full.
    fn nodes(frames: &[u64], used: u64) -> Nodes {
        let mut n = Nodes::new(4096, frames);
        for p in 0..used {
            n.insert(1 << 40 | p, FAST).unwrap();
        }
        n
    }

    #[test]
    fn watermarks_follow_the_kernels_formulas() {
        // 16 GiB: min_free_kbytes = sqrt(16 GiB in KiB x 16) = 16384 KiB.
        assert_eq!(min_free_kbytes(16 << 30), 16_384);
        // The 6.x cap of 256 MiB from 4 TiB up, and the floor of 128 KiB.
        assert_eq!(min_free_kbytes(16 << 40), 262_144);
        assert_eq!(min_free_kbytes(1 << 20), 128);
        let w = watermarks(&[4 << 20], 4096, 10)[0]; // 16 GiB of 4 KiB pages
                                                     // min 4096 pages; step max(1024, 4194304 x 10 / 10000 = 4194).
        assert_eq!(
            w,
            Watermarks {
                min: 4096,
                low: 8290,
                high: 12_484,
                promo: 16_678
            }
        );
        // Two nodes share min in proportion to their pages.
        let w = watermarks(&[1 << 20, 3 << 20], 4096, 10);
        assert_eq!((w[0].min, w[1].min), (1024, 3072));
    }

    #[test]
    fn the_scan_period_is_task_scan_min() {
        let s = Scanner::new(1000, 1000, 256, 4096);
        assert_eq!(s.pass_pages(), 65_536);
        // One window: 1000 ms; 1 GiB = 4 windows: 250 ms; 40 windows:
        // the 100 ms floor (256 MiB of 2560 MB/s).
        assert_eq!(s.period_ms(10), 1000);
        assert_eq!(s.period_ms(4 * 65_536), 250);
        assert_eq!(s.period_ms(40 * 65_536), 100);
        // The first pass waits scan_delay_ms, then one per period.
        let n = nodes(&[10, 100], 0);
        let mut s = s;
        let mut m = Moves::default();
        s.tick(999e6, &n, &mut m);
        assert_eq!(m.scan, 0);
        s.tick(1000e6, &n, &mut m);
        assert_eq!((m.scan, s.passes, s.next_ns), (65_536, 1, 2000e6));
    }

    #[test]
    fn promotions_stay_under_the_rate_limit() {
        // 1 MiB/s = 256 pages a second; the fast node never has "enough"
        // free (1 GiB above promo), so every fault meets the limit.
        let p = LinuxParams {
            promote_rate_limit_mbps: 1,
            ..LinuxParams::default()
        };
        let n = nodes(&[1000, 100_000], 100);
        let mut l = LinuxPolicy::new(&p, &ctx(&[1000, 100_000]));
        let mut m = Moves::default();
        let mut per_second = [0u64; 3];
        // 3 s of hint faults, one every 0.1 ms, each 1 ms after its scan.
        for i in 0..30_000u64 {
            let t = i as f64 * 1e5;
            l.on_hint_fault(i, 1, t - 1e6, t, &n, &mut m);
            per_second[(t / 1e9) as usize] += m.moves.len() as u64;
            m.moves.clear();
        }
        for s in per_second {
            assert!(s > 0 && s < 256, "{per_second:?}");
        }
        let r = l.report();
        assert_eq!(r.hint_faults, 30_000);
        assert!(r.refused_rate_limit > 29_000, "{r:?}");
    }

    #[test]
    fn the_hot_threshold_adjusts_toward_the_rate_limit() {
        let p = LinuxParams {
            promote_rate_limit_mbps: 1,
            ..LinuxParams::default()
        };
        let n = nodes(&[1000, 100_000], 100);
        let mut l = LinuxPolicy::new(&p, &ctx(&[1000, 100_000]));
        let mut m = Moves::default();
        // A candidate every ms: 60,000 a period against 256 x 60 = 15,360
        // wanted: the threshold steps down by 125 ms each 60 s period.
        for i in 0..200_000u64 {
            let t = i as f64 * 1e6;
            l.on_hint_fault(i, 1, t - 1e6, t, &n, &mut m);
        }
        assert_eq!(l.report().threshold, Some(625.0));
        // Faults slower than any threshold: no candidate, so it steps up,
        // at most to twice the default.
        let mut l = LinuxPolicy::new(&p, &ctx(&[1000, 100_000]));
        let mut m = Moves::default();
        for i in 0..1000u64 {
            let t = i as f64 * 1e9;
            l.on_hint_fault(i, 1, t - 5e9, t, &n, &mut m);
        }
        assert_eq!(l.report().threshold, Some(2000.0));
        assert_eq!(l.report().refused_threshold, 1000);
        assert!(m.moves.is_empty());
    }

    #[test]
    fn a_fast_node_near_its_high_watermark_wakes_kswapd() {
        let p = LinuxParams::default();
        let frames = [1000, 100_000];
        let w = watermarks(&frames, 4096, 10)[0];
        // Free = high: refused, reclaim to promo asked.
        let n = nodes(&frames, 1000 - w.high);
        let mut l = LinuxPolicy::new(&p, &ctx(&frames));
        let mut m = Moves::default();
        l.on_hint_fault(7, 1, 0.0, 1e6, &n, &mut m);
        assert!(m.moves.is_empty());
        assert_eq!(m.reclaim, [(FAST, w.promo - w.high)]);
        assert_eq!(l.report().refused_watermark, 1);
        // Without demotion the reclaim swaps out instead.
        let mut l = LinuxPolicy::new(
            &LinuxParams {
                demotion_enabled: false,
                ..p
            },
            &ctx(&frames),
        );
        let mut m = Moves::default();
        l.on_hint_fault(7, 1, 0.0, 1e6, &n, &mut m);
        assert_eq!((m.reclaim.len(), m.evict.len()), (0, 1));
        // A fast-node fault is never promoted (tiering-only mode).
        let mut m = Moves::default();
        l.on_hint_fault(1 << 40, FAST, 0.0, 1e6, &n, &mut m);
        assert!(m.is_empty());
    }
}
