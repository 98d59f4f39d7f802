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

use super::linux::{check_scan, check_wsf};
use super::MigrationBuild;
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
