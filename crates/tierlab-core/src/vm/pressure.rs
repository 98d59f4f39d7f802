//! Memory pressure as Linux handles it (`[vm.pressure]`): free-frame
//! watermarks min < low < high, a background reclaimer (kswapd) woken when
//! an allocation leaves fewer than `low` frames free, which evicts until
//! `high` are free, and direct reclaim by the allocating process when an
//! allocation would leave fewer than `min`.
//!
//! Free frames are the frame limit (the memory tier's frames, plus any
//! frames borrowed by Memorage, vm/memorage.rs) less the resident pages.
//! The pager (vm/paging.rs) asks [`Pressure::before_alloc`] before it
//! takes a frame and [`Pressure::after_alloc`] after; the scheduler
//! (run/vm_procs.rs) runs kswapd as an actor of its earliest-clock loop.
//!
//! The default watermarks are Linux 3.2's (the kernel of S3's platform,
//! S3 Table 2: 3.2.8), mm/page_alloc.c: `init_per_zone_wmark_min` sets
//! min_free_kbytes = sqrt(16 x lowmem KiB), clamped to 128 KiB .. 64 MiB,
//! and `setup_per_zone_wmarks` sets low = min + min/4 and high = min +
//! min/2. Direct reclaim frees at least SWAP_CLUSTER_MAX = 32 pages per
//! call (mm/vmscan.c, `try_to_free_pages`' nr_to_reclaim), as does each
//! pass of kswapd here.

use crate::spec::ConfigError;
use crate::units::{parse_size, Nanos, Size};
use serde::{Deserialize, Serialize};

/// Pages one reclaim pass frees at most (kswapd) or at least (direct
/// reclaim): Linux's SWAP_CLUSTER_MAX (include/linux/swap.h).
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// Linux 3.2's bounds of min_free_kbytes (mm/page_alloc.c).
const MIN_FREE_KBYTES_FLOOR: u64 = 128;
const MIN_FREE_KBYTES_CAP: u64 = 65_536;

/// A watermark: a whole number of pages, or a size ("16MiB").
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Amount {
    Pages(u64),
    Size(String),
}

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Amount;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number of pages (0 or more) or a size such as \"16MiB\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Amount, E> {
                Ok(Amount::Pages(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Amount, E> {
                u64::try_from(v)
                    .map(Amount::Pages)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Amount, E> {
                Ok(Amount::Size(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl Amount {
    /// In pages of `page` bytes (a size rounds down), or what is wrong.
    pub fn pages(&self, page: u64) -> Result<u64, String> {
        match self {
            Amount::Pages(n) => Ok(*n),
            Amount::Size(s) => match parse_size(s)? {
                Size::Absolute(b) => Ok(b / page),
                Size::Percent(_) => Err(format!(
                    "{s:?}: a share is not allowed here; give a page count or a size such as \"16MiB\""
                )),
            },
        }
    }
}

/// `[vm.pressure]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PressureConfig {
    /// Below this many free frames an allocation reclaims itself (direct
    /// reclaim). Default: Linux 3.2's min_free_kbytes of the memory tier.
    pub min: Option<Amount>,
    /// An allocation that leaves fewer free frames wakes kswapd. Default
    /// min + min/4.
    pub low: Option<Amount>,
    /// kswapd sleeps again once this many frames are free. Default min +
    /// min/2.
    pub high: Option<Amount>,
    /// CPU time to reclaim one page (kswapd's, or the allocating process's
    /// system time in direct reclaim). 0 by default: no measured figure is
    /// built in, and S3's measured major-fault latency (Section 4.2,
    /// 58.6 us) already contains the reclaim its fault triggered.
    #[serde(default)]
    pub reclaim_ns_per_page: Nanos,
}

/// The three watermarks in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

impl PressureConfig {
    /// The watermarks for `frames` frames of `page` bytes, checked: min <=
    /// low <= high < frames. Errors name the key.
    pub fn watermarks(&self, frames: u64, page: u64) -> Result<Watermarks, ConfigError> {
        let get = |key: &str, a: &Option<Amount>| -> Result<Option<u64>, ConfigError> {
            a.as_ref()
                .map(|a| a.pages(page))
                .transpose()
                .map_err(|m| ConfigError::at(format!("vm.pressure.{key}"), m))
        };
        let min = match get("min", &self.min)? {
            Some(m) => m,
            None => default_min(frames, page),
        };
        let low = get("low", &self.low)?.unwrap_or(min + min / 4);
        let high = get("high", &self.high)?.unwrap_or(min + min / 2);
        if low < min {
            return Err(ConfigError::at(
                "vm.pressure.low",
                format!("{low} pages is below min ({min} pages); the watermarks must be min <= low <= high"),
            ));
        }
        if high < low {
            return Err(ConfigError::at(
                "vm.pressure.high",
                format!("{high} pages is below low ({low} pages); the watermarks must be min <= low <= high"),
            ));
        }
        if high >= frames {
            return Err(ConfigError::at(
                "vm.pressure.high",
                format!(
                    "{high} pages leaves no frame to use: the memory has {frames} frames; \
                     give watermarks below the frame count"
                ),
            ));
        }
        Ok(Watermarks { min, low, high })
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.reclaim_ns_per_page.0;
        if !(n.is_finite() && n >= 0.0) {
            return Err(ConfigError::at(
                "vm.pressure.reclaim_ns_per_page",
                format!("{n} ns is out of range; must be zero or more"),
            ));
        }
        Ok(())
    }
}

/// Linux 3.2's min watermark for `frames` frames of `page` bytes, in
/// pages: sqrt(16 x KiB), clamped to 128 KiB .. 64 MiB.
pub fn default_min(frames: u64, page: u64) -> u64 {
    let kib = frames.saturating_mul(page) / 1024;
    let min_kib =
        ((kib as f64 * 16.0).sqrt() as u64).clamp(MIN_FREE_KBYTES_FLOOR, MIN_FREE_KBYTES_CAP);
    (min_kib * 1024).div_ceil(page)
}

/// What the allocator must do before it takes a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before {
    /// Take it.
    Go,
    /// Reclaim this many pages first (direct reclaim), then take it.
    Reclaim(u64),
}

/// The watermarks and what reclaim has done.
#[derive(Clone, Debug)]
pub struct Pressure {
    pub w: Watermarks,
    pub reclaim_ns_per_page: f64,
    /// An allocation left fewer than `low` frames free since kswapd last
    /// looked (the scheduler wakes it).
    pub wake: bool,
    /// kswapd passes (each frees up to SWAP_CLUSTER_MAX pages).
    pub kswapd_scans: u64,
    pub kswapd_pages: u64,
    /// Allocations that reclaimed themselves, and the pages they freed.
    pub direct_reclaims: u64,
    pub direct_reclaim_pages: u64,
    /// The fewest free frames after any allocation (the property tests
    /// check it never falls below `min`).
    pub min_free_seen: u64,
}

impl Pressure {
    pub fn new(w: Watermarks, reclaim_ns_per_page: f64) -> Self {
        Pressure {
            w,
            reclaim_ns_per_page,
            wake: false,
            kswapd_scans: 0,
            kswapd_pages: 0,
            direct_reclaims: 0,
            direct_reclaim_pages: 0,
            min_free_seen: u64::MAX,
        }
    }

    /// Before an allocation with `free` frames free: Linux's
    /// zone_watermark_ok at min (an order-0 allocation needs more than
    /// min free), else direct reclaim of at least SWAP_CLUSTER_MAX pages
    /// and enough to pass.
    #[inline]
    pub fn before_alloc(&self, free: u64) -> Before {
        if free > self.w.min {
            Before::Go
        } else {
            Before::Reclaim((self.w.min + 1 - free).max(SWAP_CLUSTER_MAX))
        }
    }

    /// After an allocation that left `free` frames free.
    #[inline]
    pub fn after_alloc(&mut self, free: u64) {
        self.min_free_seen = self.min_free_seen.min(free);
        if free < self.w.low {
            self.wake = true;
        }
    }

    /// Pages a kswapd pass frees with `free` frames free: up to
    /// SWAP_CLUSTER_MAX, until `high` are free.
    pub fn kswapd_goal(&self, free: u64) -> u64 {
        self.w.high.saturating_sub(free).min(SWAP_CLUSTER_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_defaults() {
        // 4.4 GiB of 4 KiB pages: sqrt(16 x 4,613,734 KiB) = 8,591 KiB.
        let frames = (4.4 * (1u64 << 30) as f64) as u64 / 4096;
        let w = PressureConfig::default().watermarks(frames, 4096).unwrap();
        assert_eq!(w.min, 2148); // 8,591 KiB in 4 KiB pages, rounded up
        assert_eq!(w.low, w.min + w.min / 4);
        assert_eq!(w.high, w.min + w.min / 2);
        // The floor: 128 KiB for a tiny memory.
        assert_eq!(default_min(16, 4096), 32);
        // The cap: 64 MiB.
        assert_eq!(default_min(1 << 30, 4096), 16384);
    }

    #[test]
    fn out_of_order_names_the_key() {
        let c = PressureConfig {
            min: Some(Amount::Pages(10)),
            low: Some(Amount::Pages(5)),
            ..Default::default()
        };
        assert_eq!(c.watermarks(100, 4096).unwrap_err().path, "vm.pressure.low");
        let c = PressureConfig {
            high: Some(Amount::Size("1MiB".into())),
            ..Default::default()
        };
        assert_eq!(
            c.watermarks(200, 4096).unwrap_err().path,
            "vm.pressure.high"
        );
    }

    #[test]
    fn direct_reclaim_below_min() {
        let p = Pressure::new(
            Watermarks {
                min: 4,
                low: 5,
                high: 6,
            },
            0.0,
        );
        assert_eq!(p.before_alloc(5), Before::Go);
        assert_eq!(p.before_alloc(4), Before::Reclaim(32));
    }
}
