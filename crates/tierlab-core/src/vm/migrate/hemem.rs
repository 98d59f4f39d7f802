//! `hemem`: HeMem (Raybuck et al., "HeMem: Scalable Tiered Memory
//! Management for Big Data Applications and Real NVM", SOSP 2021).
//!
//! Source: the authors' repository `cuhk-mass/hemem`, `pebs.h` and
//! `pebs.c` at the SOSP submission commit aaa78a9 (2021-05-12), whose
//! constants are the defaults here: `SAMPLE_PERIOD` 5003,
//! `HOT_READ_THRESHOLD` 8, `HOT_WRITE_THRESHOLD` 8,
//! `PEBS_COOLING_THRESHOLD` 18, `PEBS_KSWAPD_INTERVAL` 10 ms,
//! `PEBS_KSWAPD_MIGRATE_RATE` 10 GiB (docs/notes/tiered-memory-sources.md,
//! section 3). Later commits use 19997, 4, 4 and 10; the paper's text is
//! recalled (not read) to give 4 for writes.
//!
//! Modelled: one sample every `sample_period` references (PEBS counts
//! events; reads and writes counted apart); a page is hot when its read
//! samples reach `hot_read` or its write samples `hot_write`; when a
//! page's count reaches `cooling_threshold`, every page's counts are
//! halved (the submission's global cooling); every `period_ms` hot pages on
//! slower nodes move to the fastest, cold fastest-node pages making room,
//! at most `migrate_bytes_per_period` per period. Left out: HeMem's 2 MiB
//! pages (the model's page is `vm.page_size`), its separate DRAM and NVM
//! load events (one read count).

use super::MigrationBuild;
use crate::units::Size;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HememParams {
    pub sample_period: u64,
    pub hot_read: u64,
    pub hot_write: u64,
    pub cooling_threshold: u64,
    pub period_ms: f64,
    pub migrate_bytes_per_period: Size,
}

impl Default for HememParams {
    fn default() -> Self {
        HememParams {
            sample_period: 5003,
            hot_read: 8,
            hot_write: 8,
            cooling_threshold: 18,
            period_ms: 10.0,
            migrate_bytes_per_period: Size::Absolute(10 << 30),
        }
    }
}

impl HememParams {
    /// The per-period cap in bytes (checked to be absolute).
    pub fn cap_bytes(&self) -> u64 {
        match self.migrate_bytes_per_period {
            Size::Absolute(n) => n,
            Size::Percent(_) => 0,
        }
    }
}

pub struct Hemem;

impl MigrationBuild for Hemem {
    type Params = HememParams;
    fn check(p: &HememParams) -> Result<(), (&'static str, String)> {
        if p.sample_period == 0 {
            return Err(("sample_period", "must be at least 1 reference".into()));
        }
        if p.hot_read == 0 {
            return Err(("hot_read", "must be at least 1 sample".into()));
        }
        if p.hot_write == 0 {
            return Err(("hot_write", "must be at least 1 sample".into()));
        }
        if p.cooling_threshold < p.hot_read.max(p.hot_write) {
            return Err((
                "cooling_threshold",
                format!(
                    "{} is out of range; at least the hot thresholds ({}): cooling below them \
                     would keep every page cold",
                    p.cooling_threshold,
                    p.hot_read.max(p.hot_write)
                ),
            ));
        }
        if !(p.period_ms.is_finite() && p.period_ms > 0.0) {
            return Err((
                "period_ms",
                format!("{} is out of range; must be > 0", p.period_ms),
            ));
        }
        match p.migrate_bytes_per_period {
            Size::Absolute(n) if n > 0 => Ok(()),
            Size::Absolute(_) => Err((
                "migrate_bytes_per_period",
                "must be more than 0 B (use type = \"none\" for no migration)".into(),
            )),
            Size::Percent(_) => Err((
                "migrate_bytes_per_period",
                "must be a size in bytes, not a share".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_name_their_key() {
        let d = HememParams::default();
        assert!(Hemem::check(&d).is_ok());
        let bad = |p: HememParams| Hemem::check(&p).unwrap_err().0;
        assert_eq!(
            bad(HememParams {
                sample_period: 0,
                ..d.clone()
            }),
            "sample_period"
        );
        assert_eq!(
            bad(HememParams {
                cooling_threshold: 4,
                ..d.clone()
            }),
            "cooling_threshold"
        );
        assert_eq!(
            bad(HememParams {
                period_ms: 0.0,
                ..d.clone()
            }),
            "period_ms"
        );
        assert_eq!(
            bad(HememParams {
                migrate_bytes_per_period: Size::Percent(5.0),
                ..d
            }),
            "migrate_bytes_per_period"
        );
    }
}
