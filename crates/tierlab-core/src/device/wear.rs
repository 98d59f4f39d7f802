//! Wear of a tier's medium: bytes and pages programmed (counted per write
//! by the tier), erases (exact for a flashcache tier, else bytes programmed
//! over the catalog's erase block), the spread of erases over blocks where
//! the policy knows them, and what that means for the medium's life:
//! lifetime, drive writes per day (DWPD) and terabytes written (TBW).

use crate::tech::Technology;
use serde::Serialize;

/// A Julian year, as endurance ratings count them.
pub const SECONDS_PER_YEAR: f64 = 365.25 * 86_400.0;

/// Bytes the host may write before the medium reaches its endurance: every
/// cell rewritten `endurance` times, each host byte costing
/// `write_amplification` bytes of programming.
pub fn tbw_bytes(endurance: f64, capacity_bytes: f64, write_amplification: f64) -> f64 {
    endurance * capacity_bytes / write_amplification
}

/// Whole-device writes per day at the rate of `bytes_programmed` over
/// `seconds`.
pub fn dwpd(capacity_bytes: f64, bytes_programmed: f64, seconds: f64) -> f64 {
    bytes_programmed / seconds * 86_400.0 / capacity_bytes
}

/// Years until the medium wears out when written as in the run:
/// endurance x capacity / (write rate x write amplification). Infinite
/// when nothing was written.
pub fn lifetime_years(
    endurance: f64,
    capacity_bytes: f64,
    bytes_programmed: f64,
    seconds: f64,
    write_amplification: f64,
) -> f64 {
    let rate = bytes_programmed / seconds;
    tbw_bytes(endurance, capacity_bytes, write_amplification) / rate / SECONDS_PER_YEAR
}

/// How evenly erases spread over a tier's erase blocks.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WearSpread {
    /// Population standard deviation of erases per erase block.
    pub std: f64,
    /// The most-erased block's erases over the mean.
    pub max_over_mean: f64,
}

impl WearSpread {
    /// Of per-block erase counts (each logical block's erase blocks share
    /// its count: the spread is the same per erase block). None before the
    /// first erase.
    pub fn of(counts: &[u64]) -> Option<Self> {
        let n = counts.len() as f64;
        let sum: u64 = counts.iter().sum();
        if sum == 0 {
            return None;
        }
        let mean = sum as f64 / n;
        let var = counts
            .iter()
            .map(|&c| (c as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        let max = *counts.iter().max().unwrap() as f64;
        Some(WearSpread {
            std: var.sqrt(),
            max_over_mean: max / mean,
        })
    }
}

/// `[erases, erase blocks with that many]`, by erases: the wear histogram
/// of a table of per-logical-block counts, each standing for `per_block`
/// erase blocks.
pub fn histogram(counts: &[u64], per_block: u64) -> Vec<[u64; 2]> {
    let mut v = counts.to_vec();
    v.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::new();
    for c in v {
        match out.last_mut() {
            Some(last) if last[0] == c => last[1] += per_block,
            _ => out.push([c, per_block]),
        }
    }
    out
}

/// What a tier reports of a flashcache tier's wear (the policy's counters,
/// crate::policy::flashcache): defined here, below the cache layer, so that
/// the wear figures need no tier.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockWear {
    /// Erase-block erases: evictions', set swaps' and the staging area's.
    pub erases: u64,
    /// Logical blocks erased to make room (victims and reclaimed blocks).
    pub block_erases: u64,
    /// Victims chosen by wear rather than recency.
    pub hot_block_evictions: u64,
    pub hot_set_swaps: u64,
    /// Bytes the swaps programmed (copies into the staging area and both sets).
    pub swap_bytes_programmed: u64,
    /// Erases of each physical logical block (the wear status table).
    pub table: Vec<u64>,
    /// Erase blocks per logical block.
    pub erase_blocks_per_block: u64,
    /// Bytes the tier's blocks hold (sets x ways x block).
    pub capacity_bytes: u64,
}

/// A tier's wear in a run's result (flattened into its `TierResult`).
/// Null fields are unknown: erases of a medium that does not erase or
/// whose erase block the catalog lacks; the spread, histogram and
/// flashcache counters of other policies; rates without a capacity in
/// bytes (capacities counting objects) or an endurance.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TierWear {
    /// Bytes written into the tier: fills, demotions, write hits,
    /// write-backs received, and a flashcache tier's set-swap copies.
    pub bytes_programmed: u64,
    /// Erase-block erases.
    pub erases: Option<u64>,
    pub wear_spread: Option<WearSpread>,
    /// `[erases, erase blocks]` pairs (flashcache tiers).
    pub wear_histogram: Option<Vec<[u64; 2]>>,
    pub hot_block_evictions: Option<u64>,
    pub hot_set_swaps: Option<u64>,
    /// At the run's write rate, without write amplification (no FTL is
    /// modelled; a flashcache tier's copies are in bytes_programmed).
    pub lifetime_years: Option<f64>,
    pub dwpd: Option<f64>,
    /// Terabytes (10^12 bytes) writable over the medium's endurance.
    pub tbw_tb: Option<f64>,
}

/// Erase-block erases a tier has made so far: a flashcache policy's own
/// count (`flash_erases`), else the bytes programmed into it (`bytes_in`)
/// over `erase_block` (None when the block is unknown). Cheap: the time
/// model reads it after every request (time/engine.rs), and the wear
/// figures are built on it.
pub fn erases_so_far(
    flash_erases: Option<u64>,
    bytes_in: u64,
    erase_block: Option<u64>,
) -> Option<u64> {
    flash_erases.or_else(|| erase_block.map(|e| bytes_in / e))
}

impl TierWear {
    /// The wear of a tier that received `bytes_in` bytes (its counter),
    /// reports `bw` (a flashcache tier's block wear) and has made
    /// `flash_erases` erases by its own count (a flashcache policy's or an
    /// FTL's; None: counted from `bytes_in`), of medium `tech`
    /// and `capacity_bytes` (None when its capacity counts objects), over
    /// `seconds` of simulated time. Also returns the pages a flashcache
    /// tier's swaps programmed, which the tier's own counter (per write)
    /// does not include.
    pub fn of(
        bw: Option<BlockWear>,
        flash_erases: Option<u64>,
        bytes_in: u64,
        tech: &Technology,
        capacity_bytes: Option<u64>,
        seconds: f64,
    ) -> (Self, u64) {
        let swap_bytes = bw.as_ref().map_or(0, |b| b.swap_bytes_programmed);
        let bytes = bytes_in + swap_bytes;
        let extra_pages = swap_bytes.div_ceil(tech.access_unit.max(1) as u64);
        let erases = (bw.is_some() || tech.erase_ns.is_some())
            .then(|| erases_so_far(flash_erases, bytes_in, tech.erase_block_bytes))
            .flatten();
        let capacity = match &bw {
            Some(b) => Some(b.capacity_bytes as f64),
            None => capacity_bytes.map(|c| c as f64),
        };
        let timed = seconds > 0.0 && seconds.is_finite();
        let rate_of = |f: &dyn Fn(f64) -> f64| capacity.filter(|_| timed).map(f);
        let w = TierWear {
            bytes_programmed: bytes,
            erases,
            wear_spread: bw.as_ref().and_then(|b| WearSpread::of(&b.table)),
            wear_histogram: bw
                .as_ref()
                .map(|b| histogram(&b.table, b.erase_blocks_per_block)),
            hot_block_evictions: bw.as_ref().map(|b| b.hot_block_evictions),
            hot_set_swaps: bw.as_ref().map(|b| b.hot_set_swaps),
            lifetime_years: tech
                .endurance
                .filter(|_| bytes > 0)
                .and_then(|e| rate_of(&|c| lifetime_years(e, c, bytes as f64, seconds, 1.0))),
            dwpd: rate_of(&|c| dwpd(c, bytes as f64, seconds)),
            tbw_tb: tech
                .endurance
                .and_then(|e| capacity.map(|c| tbw_bytes(e, c, 1.0) / 1e12)),
        };
        (w, extra_pages)
    }

    /// The rates over `to_s` seconds instead of the `from_s` they were
    /// computed over (a time model's elapsed time replaces the serial sum):
    /// lifetime grows and DWPD shrinks in proportion. Unknown when either
    /// time is not a positive duration.
    pub fn retime(&mut self, from_s: f64, to_s: f64) {
        let ok = |t: f64| t > 0.0 && t.is_finite();
        if !(ok(from_s) && ok(to_s)) {
            self.lifetime_years = None;
            self.dwpd = None;
            return;
        }
        let k = to_s / from_s;
        self.lifetime_years = self.lifetime_years.map(|y| y * k);
        self.dwpd = self.dwpd.map(|d| d / k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetime_dwpd_and_tbw_by_hand() {
        // 1 GiB at 1e6 cycles written at 8 MiB/s: 2^30 * 1e6 / 2^23 s.
        let gib = (1u64 << 30) as f64;
        let s = 1000.0;
        let written = 8.0 * (1 << 20) as f64 * s;
        let years = lifetime_years(1e6, gib, written, s, 1.0);
        assert!((years - 128e6 / SECONDS_PER_YEAR).abs() < 1e-9, "{years}");
        // Write amplification 2 halves it.
        assert!((lifetime_years(1e6, gib, written, s, 2.0) - years / 2.0).abs() < 1e-9);
        // 8 MiB/s for a day is 675 GiB: 675 drive writes of 1 GiB.
        assert!((dwpd(gib, written, s) - 675.0).abs() < 1e-9);
        assert_eq!(tbw_bytes(1e5, gib, 1.0), 1e5 * gib);
        // Lifetime is TBW over the write rate.
        let rate = written / s;
        assert!((years * SECONDS_PER_YEAR * rate - tbw_bytes(1e6, gib, 1.0)).abs() < 1.0);
        assert!(lifetime_years(1e6, gib, 0.0, s, 1.0).is_infinite());
    }

    #[test]
    fn retime_recomputes_the_rates_over_the_new_time() {
        let gib = (1u64 << 30) as f64;
        let written = 8.0 * (1 << 20) as f64 * 1000.0;
        let mut w = TierWear {
            bytes_programmed: written as u64,
            lifetime_years: Some(lifetime_years(1e6, gib, written, 1000.0, 1.0)),
            dwpd: Some(dwpd(gib, written, 1000.0)),
            ..Default::default()
        };
        w.retime(1000.0, 4000.0);
        let years = lifetime_years(1e6, gib, written, 4000.0, 1.0);
        assert!((w.lifetime_years.unwrap() - years).abs() < 1e-9 * years);
        assert!((w.dwpd.unwrap() - dwpd(gib, written, 4000.0)).abs() < 1e-9);
        w.retime(4000.0, 0.0);
        assert_eq!((w.lifetime_years, w.dwpd), (None, None));
    }

    #[test]
    fn spread_and_histogram() {
        assert_eq!(WearSpread::of(&[0, 0, 0]), None);
        let w = WearSpread::of(&[2, 2, 2, 2]).unwrap();
        assert_eq!((w.std, w.max_over_mean), (0.0, 1.0));
        let w = WearSpread::of(&[0, 4]).unwrap();
        assert_eq!((w.std, w.max_over_mean), (2.0, 2.0));
        assert_eq!(histogram(&[3, 1, 3, 0], 4), vec![[0, 4], [1, 4], [3, 8]]);
    }
}
