//! `memtis`: Memtis (Lee et al., "MEMTIS: Efficient Memory Tiering with
//! Dynamic Page Classification and Page Size Determination", SOSP 2023).
//!
//! Source: the authors' repository `cosmoss-jigu/memtis` (a Linux 5.15.19
//! tree): defaults in `mm/mempolicy.c` and `include/linux/htmm.h`, the
//! histogram and threshold in `mm/htmm_core.c` (`get_idx`,
//! `__adjust_active_threshold`), sampling in `mm/htmm_sampler.c`,
//! migration in `mm/htmm_migrater.c` (docs/notes/tiered-memory-sources.md,
//! section 4).
//!
//! Modelled: one load sample every `sample_period` reads and one store
//! sample every `store_sample_period` writes; a page with `n` samples is in
//! histogram bin floor(log2(n + 1)), at most 15; every
//! `adaptation_samples` samples the hot threshold is recomputed: the bins
//! from 15 down are added while their pages fit the fastest node less its
//! promotion watermark, and the threshold is the lowest bin so reached (at
//! least `min_hot_bin`); every `cooling_samples` samples every count is
//! halved; every `period_ms` the migration daemon promotes hot pages from
//! slower nodes and demotes cold fast-node pages to keep
//! `demotion_watermark` of the fast node free, at most
//! `max_migration_MBps`. Left out: the sampler's CPU-budget period
//! changes, huge-page splitting, the warm set.

use super::MigrationBuild;
use serde::{Deserialize, Serialize};

/// Histogram bins (`htmm.h`: 16).
pub const BINS: usize = 16;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MemtisParams {
    pub sample_period: u64,
    pub store_sample_period: u64,
    pub cooling_samples: u64,
    pub adaptation_samples: u64,
    pub min_hot_bin: u64,
    pub period_ms: f64,
    pub promotion_watermark: f64,
    pub demotion_watermark: f64,
    #[serde(rename = "max_migration_MBps")]
    pub max_migration_mbps: u64,
}

impl Default for MemtisParams {
    fn default() -> Self {
        MemtisParams {
            sample_period: 199,
            store_sample_period: 100_007,
            cooling_samples: 2_000_000,
            adaptation_samples: 100_000,
            min_hot_bin: 1,
            period_ms: 500.0,
            promotion_watermark: 0.03,
            demotion_watermark: 0.02,
            max_migration_mbps: 2048,
        }
    }
}

pub struct Memtis;

impl MigrationBuild for Memtis {
    type Params = MemtisParams;
    fn check(p: &MemtisParams) -> Result<(), (&'static str, String)> {
        for (k, v) in [
            ("sample_period", p.sample_period),
            ("store_sample_period", p.store_sample_period),
            ("cooling_samples", p.cooling_samples),
            ("adaptation_samples", p.adaptation_samples),
            ("max_migration_MBps", p.max_migration_mbps),
        ] {
            if v == 0 {
                return Err((k, "must be at least 1".into()));
            }
        }
        if p.min_hot_bin >= BINS as u64 {
            return Err((
                "min_hot_bin",
                format!(
                    "{} is out of range; a bin from 0 to {}",
                    p.min_hot_bin,
                    BINS - 1
                ),
            ));
        }
        if !(p.period_ms.is_finite() && p.period_ms > 0.0) {
            return Err((
                "period_ms",
                format!("{} is out of range; must be > 0", p.period_ms),
            ));
        }
        for (k, v) in [
            ("promotion_watermark", p.promotion_watermark),
            ("demotion_watermark", p.demotion_watermark),
        ] {
            if !(v.is_finite() && (0.0..0.5).contains(&v)) {
                return Err((
                    k,
                    format!("{v} is out of range; a share of the fast node from 0 to below 0.5"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_name_their_key() {
        let d = MemtisParams::default();
        assert!(Memtis::check(&d).is_ok());
        let bad = |p: MemtisParams| Memtis::check(&p).unwrap_err().0;
        assert_eq!(
            bad(MemtisParams {
                min_hot_bin: 16,
                ..d.clone()
            }),
            "min_hot_bin"
        );
        assert_eq!(
            bad(MemtisParams {
                promotion_watermark: 0.7,
                ..d.clone()
            }),
            "promotion_watermark"
        );
        assert_eq!(
            bad(MemtisParams {
                sample_period: 0,
                ..d
            }),
            "sample_period"
        );
    }
}
