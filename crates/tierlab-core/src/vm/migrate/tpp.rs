//! `tpp`: Transparent Page Placement (Al Maruf et al., "TPP: Transparent
//! Page Placement for CXL-Enabled Tiered-Memory", ASPLOS 2023).
//!
//! Sources: the paper's design (as read through a third party's reading
//! notes of its arXiv version, 2206.02878v2, pages 7-8: the paper itself
//! was not read, docs/notes/tiered-memory-sources.md section 2), and the
//! TPP patch series' `do_numa_page()` (`mm/memory.c`): "Only migrate pages
//! that are active on non-toptier node": a hint fault on a slow-node page
//! that is not on the active LRU list only marks it accessed
//! (`mark_page_accessed`), so a page is promoted at its second hint fault.
//!
//! Modelled: the scanner of `linux` (same keys, same defaults); promotion
//! at a hint fault of an active slow-node page, with no hot threshold and
//! no rate limit (TPP predates both); demotion ahead of allocation: the
//! fast node's background reclaim demotes its coldest pages until its free
//! pages reach the demotion watermark, `demote_scale_factor` / 10,000 of the
//! node (2% by default, the sysctl `vm.demote_scale_factor` = 200 that
//! public experiment scripts set on TPP kernels; the paper's section on
//! decoupling allocation and reclamation gives 2%). Left out: page-type
//! aware allocation (file pages first on the slow node): a memory trace
//! has no page types.

use super::linux::{check_scan, check_wsf, watermarks, Scanner, Watermarks};
use super::{
    BuildCtx, Hears, MigrationBuild, MigrationPolicy, Move, Moves, Node, PolicyReport, FAST,
};
use crate::hash::KeyMap;
use crate::vm::nodes::Nodes;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TppParams {
    /// The scanner's knobs, as `linux` (Linux's debugfs defaults).
    pub scan_delay_ms: u64,
    pub scan_period_min_ms: u64,
    pub scan_period_max_ms: u64,
    pub scan_size_mb: u64,
    /// Free pages the fast node's reclaim keeps, in 1/10,000 of the node.
    pub demote_scale_factor: u64,
    /// `vm.watermark_scale_factor`: the allocation watermarks' spacing.
    pub watermark_scale_factor: u64,
}

impl Default for TppParams {
    fn default() -> Self {
        TppParams {
            scan_delay_ms: 1000,
            scan_period_min_ms: 1000,
            scan_period_max_ms: 60_000,
            scan_size_mb: 256,
            demote_scale_factor: 200,
            watermark_scale_factor: 10,
        }
    }
}

pub struct Tpp;

impl MigrationBuild for Tpp {
    type Params = TppParams;
    fn build(p: &TppParams, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
        Ok(Box::new(TppPolicy::new(p, ctx)))
    }
    fn check(p: &TppParams) -> Result<(), (&'static str, String)> {
        check_scan(
            p.scan_delay_ms,
            p.scan_period_min_ms,
            p.scan_period_max_ms,
            p.scan_size_mb,
        )?;
        if !(1..=5000).contains(&p.demote_scale_factor) {
            return Err((
                "demote_scale_factor",
                format!(
                    "{} is out of range; 1 to 5000 (1/10,000 of the fast node kept free)",
                    p.demote_scale_factor
                ),
            ));
        }
        check_wsf(p.watermark_scale_factor)
    }
}

/// A slow-node page's place on the kernel's LRU lists, as
/// `mark_page_accessed()` moves it: inactive, inactive and referenced,
/// active.
const REFERENCED: u8 = 1;
const ACTIVE: u8 = 2;

pub struct TppPolicy {
    scanner: Scanner,
    wm: Watermarks,
    /// Free pages the fast node's reclaim keeps (the demotion watermark).
    demote_wm: u64,
    /// LRU state of the slow-node pages that had a hint fault.
    lru: KeyMap<u8>,
    r: PolicyReport,
}

impl TppPolicy {
    pub fn new(p: &TppParams, ctx: &BuildCtx) -> Self {
        let wm = watermarks(&ctx.frames, ctx.page_bytes, p.watermark_scale_factor)[0];
        TppPolicy {
            scanner: Scanner::new(
                p.scan_delay_ms,
                p.scan_period_min_ms,
                p.scan_size_mb,
                ctx.page_bytes,
            ),
            wm,
            demote_wm: (ctx.frames[0] * p.demote_scale_factor / 10_000).max(wm.high),
            lru: KeyMap::default(),
            r: PolicyReport::default(),
        }
    }

    /// The fast node's background reclaim: demote until the demotion
    /// watermark is free (ahead of allocation).
    fn reclaim(&self, nodes: &Nodes, m: &mut Moves) {
        let free = nodes.free(FAST);
        let target = self.demote_wm.min(nodes.frames(FAST));
        if free < target && nodes.len() > 1 {
            m.reclaim.push((FAST, target - free));
        }
    }
}

impl MigrationPolicy for TppPolicy {
    fn hears(&self) -> Hears {
        Hears::HintFaults
    }

    fn on_hint_fault(
        &mut self,
        page: u64,
        node: Node,
        _scanned_ns: f64,
        _t_ns: f64,
        nodes: &Nodes,
        m: &mut Moves,
    ) {
        self.r.hint_faults += 1;
        if node == FAST {
            return;
        }
        // do_numa_page() with TPP: an inactive page is only marked
        // accessed; an active one is promoted.
        let s = self.lru.entry(page).or_insert(0);
        if *s < ACTIVE {
            *s += REFERENCED;
            self.r.refused_inactive += 1;
            return;
        }
        self.r.candidates += 1;
        // The migration path's check (migrate_balanced_pgdat): above high.
        if nodes.free(FAST) <= self.wm.high + 1 {
            self.r.refused_watermark += 1;
            self.reclaim(nodes, m);
            return;
        }
        self.lru.remove(&page);
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

    fn on_insert(&mut self, page: u64, node: Node, nodes: &Nodes, m: &mut Moves) {
        if node == FAST {
            self.lru.remove(&page);
            self.reclaim(nodes, m);
        }
    }

    fn on_remove(&mut self, page: u64) {
        self.lru.remove(&page);
    }

    fn report(&self) -> PolicyReport {
        PolicyReport {
            scans: self.scanner.passes,
            ..self.r.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(frames: &[u64]) -> BuildCtx<'static> {
        BuildCtx {
            page_bytes: 4096,
            frames: frames.to_vec(),
            counts: None,
            epoch_counts: None,
        }
    }

    #[test]
    fn a_page_is_promoted_once_active() {
        let frames = [1000, 1000];
        let mut n = Nodes::new(4096, &frames);
        n.insert(5, 1).unwrap();
        let mut t = TppPolicy::new(&TppParams::default(), &ctx(&frames));
        let mut m = Moves::default();
        // mark_page_accessed twice (referenced, then active), then promoted.
        t.on_hint_fault(5, 1, 0.0, 1.0, &n, &mut m);
        t.on_hint_fault(5, 1, 0.0, 2.0, &n, &mut m);
        assert!(m.moves.is_empty());
        t.on_hint_fault(5, 1, 0.0, 3.0, &n, &mut m);
        assert_eq!(
            m.moves,
            [Move {
                page: 5,
                from: 1,
                to: FAST
            }]
        );
        let r = t.report();
        assert_eq!((r.hint_faults, r.refused_inactive, r.candidates), (3, 2, 1));
    }

    #[test]
    fn reclaim_keeps_the_demotion_watermark_free_ahead_of_allocation() {
        // 2% of 100,000 frames = 2,000 kept free (above the high
        // watermark, 669 pages here).
        let frames = [100_000, 100_000];
        let mut n = Nodes::new(4096, &frames);
        let mut t = TppPolicy::new(&TppParams::default(), &ctx(&frames));
        let mut m = Moves::default();
        for p in 0..98_000 {
            n.insert(p, FAST).unwrap();
            t.on_insert(p, FAST, &n, &mut m);
        }
        assert!(m.reclaim.is_empty(), "2,000 free: at the watermark");
        n.insert(98_000, FAST).unwrap();
        t.on_insert(98_000, FAST, &n, &mut m);
        assert_eq!(m.reclaim, [(FAST, 1)]);
        let a = n.apply(&mut m);
        assert_eq!((a.demotions(), n.free(FAST)), (1, 2000));
    }
}
