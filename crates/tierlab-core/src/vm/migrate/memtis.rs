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

use super::{
    BuildCtx, Hears, MigrationBuild, MigrationPolicy, Move, Moves, Node, PolicyReport, FAST,
};
use crate::hash::KeyMap;
use crate::vm::nodes::Nodes;
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
    fn build(p: &MemtisParams, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
        Ok(Box::new(MemtisPolicy::new(p, ctx)))
    }
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

/// A count's histogram bin (`get_idx`): floor(log2(n + 1)), at most 15.
pub fn bin(n: u32) -> usize {
    ((u32::BITS - (n + 1).leading_zeros() - 1) as usize).min(BINS - 1)
}

/// `__adjust_active_threshold`: the bins from the top are taken while
/// their pages fit `max_pages`; the threshold is the lowest bin taken (0
/// when all fit), at least `min_bin`.
pub fn threshold(hist: &[u64; BINS], max_pages: u64, min_bin: usize) -> usize {
    let mut taken = 0u64;
    let mut idx = BINS as isize - 1;
    while idx >= 0 {
        let n = hist[idx as usize];
        if taken + n > max_pages {
            break;
        }
        taken += n;
        idx -= 1;
    }
    // The loop stops one bin below the last one taken (or at -1).
    let th = if idx == BINS as isize - 1 {
        idx
    } else {
        idx + 1
    };
    (th.max(0) as usize).max(min_bin)
}

pub struct MemtisPolicy {
    p: MemtisParams,
    page_bytes: u64,
    fast_frames: u64,
    counts: KeyMap<u32>,
    hist: [u64; BINS],
    th: usize,
    next_ns: f64,
    r: PolicyReport,
    /// Bytes migrated in each period (for the cap's check).
    pub period_bytes: Vec<u64>,
}

impl MemtisPolicy {
    pub fn new(p: &MemtisParams, ctx: &BuildCtx) -> Self {
        MemtisPolicy {
            page_bytes: ctx.page_bytes,
            fast_frames: ctx.frames[0],
            counts: KeyMap::default(),
            hist: [0; BINS],
            th: p.min_hot_bin as usize,
            next_ns: p.period_ms * 1e6,
            r: PolicyReport::default(),
            period_bytes: Vec::new(),
            p: p.clone(),
        }
    }

    fn wm_pages(&self, share: f64) -> u64 {
        (self.fast_frames as f64 * share).ceil() as u64
    }

    /// The hot threshold now (a bin).
    pub fn hot_bin(&self) -> usize {
        self.th
    }

    fn adapt(&mut self) {
        let max = self
            .fast_frames
            .saturating_sub(self.wm_pages(self.p.promotion_watermark));
        self.th = threshold(&self.hist, max, self.p.min_hot_bin as usize);
    }

    fn cool(&mut self) {
        self.r.coolings += 1;
        self.hist = [0; BINS];
        let hist = &mut self.hist;
        // A page cooled to 0 leaves the map (bin 0 is a count of 0: empty).
        self.counts.retain(|_, c| {
            *c >>= 1;
            if *c > 0 {
                hist[bin(*c)] += 1;
            }
            *c > 0
        });
    }
}

impl MigrationPolicy for MemtisPolicy {
    fn hears(&self) -> Hears {
        Hears::Sampled {
            read_period: self.p.sample_period,
            write_period: self.p.store_sample_period,
        }
    }

    fn on_access(
        &mut self,
        page: u64,
        _node: Node,
        _write: bool,
        _t_ns: f64,
        _nodes: &Nodes,
        _m: &mut Moves,
    ) {
        self.r.samples += 1;
        let c = self.counts.entry(page).or_insert(0);
        let was = if *c == 0 { None } else { Some(bin(*c)) };
        *c += 1;
        let now = bin(*c);
        if was != Some(now) {
            if let Some(w) = was {
                self.hist[w] -= 1;
            }
            self.hist[now] += 1;
        }
        if self.r.samples.is_multiple_of(self.p.adaptation_samples) {
            self.adapt();
        }
        if self.r.samples.is_multiple_of(self.p.cooling_samples) {
            self.cool();
        }
    }

    fn next_tick(&self) -> f64 {
        self.next_ns
    }

    /// kmigraterd: hot pages of slower nodes up (hottest first), cold
    /// fast pages down to keep `demotion_watermark` of the fast node free,
    /// at most `max_migration_MBps` x the period.
    fn tick(&mut self, t_ns: f64, nodes: &Nodes, m: &mut Moves) {
        let period = self.p.period_ms * 1e6;
        while self.next_ns <= t_ns {
            self.next_ns += period;
        }
        let cap = (self.p.max_migration_mbps as f64 * (1u64 << 20) as f64 * self.p.period_ms / 1e3)
            as u64
            / self.page_bytes;
        let mut budget = cap;
        let hot_of = |c: u32| bin(c) >= self.th && c > 0;
        let mut hot: Vec<(u32, u64, Node)> = self
            .counts
            .iter()
            .filter(|(_, &c)| hot_of(c))
            .filter_map(|(&p, &c)| match nodes.node_of(p) {
                Some(n) if n != FAST => Some((c, p, n)),
                _ => None,
            })
            .collect();
        hot.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut cold: Vec<(u32, u64)> = nodes
            .pages_on(FAST)
            .map(|p| (self.counts.get(&p).copied().unwrap_or(0), p))
            .filter(|&(c, _)| !hot_of(c))
            .collect();
        // Coldest last, popped first.
        cold.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
        let keep = self.wm_pages(self.p.demotion_watermark);
        let mut free = nodes.free(FAST);
        let mut moved = 0u64;
        let mut hot = hot.into_iter().peekable();
        loop {
            if budget == 0 {
                break;
            }
            if free < keep || (free <= keep && hot.peek().is_some()) {
                // Below the watermark, or no room above it for the next
                // promotion: demote the coldest fast page.
                let Some((_, victim)) = cold.pop() else { break };
                m.push(Move {
                    page: victim,
                    from: FAST,
                    to: FAST + 1,
                });
                budget -= 1;
                moved += 1;
                free += 1;
                continue;
            }
            let Some((_, page, from)) = hot.next() else {
                break;
            };
            m.push(Move {
                page,
                from,
                to: FAST,
            });
            budget -= 1;
            moved += 1;
            free -= 1;
        }
        self.period_bytes.push(moved * self.page_bytes);
    }

    fn on_remove(&mut self, page: u64) {
        if let Some(c) = self.counts.remove(&page) {
            if c > 0 {
                self.hist[bin(c)] -= 1;
            }
        }
    }

    fn report(&self) -> PolicyReport {
        PolicyReport {
            threshold: Some(self.th as f64),
            ..self.r.clone()
        }
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

    fn ctx(frames: &[u64]) -> BuildCtx<'static> {
        BuildCtx {
            page_bytes: 4096,
            frames: frames.to_vec(),
            counts: None,
            epoch_counts: None,
        }
    }

    #[test]
    fn bins_are_log2_of_count_plus_one() {
        let b: Vec<usize> = [0, 1, 2, 3, 6, 7, 14, 15, u32::MAX - 1]
            .iter()
            .map(|&n| bin(n))
            .collect();
        assert_eq!(b, [0, 1, 1, 2, 2, 3, 3, 4, 15]);
    }

    #[test]
    fn the_hot_set_fits_the_fast_node() {
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..1000 {
            let mut hist = [0u64; BINS];
            for h in hist.iter_mut() {
                *h = rng.below(200);
            }
            let max = rng.below(1500);
            let th = threshold(&hist, max, 1);
            let hot: u64 = hist[th..].iter().sum();
            if th > 1 && th < BINS - 1 {
                // It fits, and one bin lower would not.
                assert!(hot <= max, "{hist:?} {max} {th}");
                assert!(hot + hist[th - 1] > max, "{hist:?} {max} {th}");
            }
            if th == BINS - 1 && hist[BINS - 1] <= max {
                assert!(hot + hist[BINS - 2] > max);
            }
        }
        // Everything fits: the threshold is the lowest allowed bin.
        assert_eq!(threshold(&[1; BINS], 100, 1), 1);
        assert_eq!(threshold(&[1; BINS], 100, 0), 0);
    }

    #[test]
    fn adaptation_fits_the_fast_node_less_its_watermark() {
        // Fast node of 100 frames, 3% watermark: 97 hot pages at most.
        let frames = [100, 1000];
        let n = Nodes::new(4096, &frames);
        let p = MemtisParams {
            adaptation_samples: 450,
            ..MemtisParams::default()
        };
        let mut mt = MemtisPolicy::new(&p, &ctx(&frames));
        let mut m = Moves::default();
        // 50 pages with 7 samples (bin 3), 100 with 1 (bin 1): 450 samples.
        for page in 0..50 {
            for _ in 0..7 {
                mt.on_access(page, 1, false, 0.0, &n, &mut m);
            }
        }
        for page in 50..150 {
            mt.on_access(page, 1, false, 0.0, &n, &mut m);
        }
        // Adapted at the 450th sample: bins 2 and up (50 pages) fit, bins
        // 1 and up (150) would not.
        assert_eq!(mt.hot_bin(), 2);
        assert_eq!(mt.report().threshold, Some(2.0));
    }

    #[test]
    fn migration_per_period_is_capped() {
        // 1 MiB/s x 500 ms = 128 pages of 4 KiB per period.
        let frames = [1000, 1000];
        let mut n = Nodes::new(4096, &frames);
        let p = MemtisParams {
            max_migration_mbps: 1,
            ..MemtisParams::default()
        };
        let mut mt = MemtisPolicy::new(&p, &ctx(&frames));
        let mut m = Moves::default();
        for page in 0..900 {
            n.insert(page, 1).unwrap();
            mt.on_access(page, 1, false, 0.0, &n, &mut m);
        }
        mt.tick(500e6, &n, &mut m);
        let a = n.apply(&mut m);
        assert_eq!(a.promotions(), 128);
        assert_eq!(mt.period_bytes, [128 * 4096]);
    }
}
