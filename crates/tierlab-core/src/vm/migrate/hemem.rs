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

use super::{
    BuildCtx, Hears, MigrationBuild, MigrationPolicy, Move, Moves, Node, PolicyReport, FAST,
};
use crate::hash::KeyMap;
use crate::units::Size;
use crate::vm::nodes::Nodes;
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
    fn build(p: &HememParams, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
        Ok(Box::new(HememPolicy::new(p, ctx)))
    }
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

pub struct HememPolicy {
    p: HememParams,
    page_bytes: u64,
    /// Read and write samples per page.
    counts: KeyMap<[u32; 2]>,
    next_ns: f64,
    r: PolicyReport,
    /// Bytes migrated in each period so far (for the cap's check).
    pub period_bytes: Vec<u64>,
}

impl HememPolicy {
    pub fn new(p: &HememParams, ctx: &BuildCtx) -> Self {
        HememPolicy {
            page_bytes: ctx.page_bytes,
            counts: KeyMap::default(),
            next_ns: p.period_ms * 1e6,
            r: PolicyReport::default(),
            period_bytes: Vec::new(),
            p: p.clone(),
        }
    }

    fn hot(&self, c: [u32; 2]) -> bool {
        c[0] as u64 >= self.p.hot_read || c[1] as u64 >= self.p.hot_write
    }
}

impl MigrationPolicy for HememPolicy {
    fn hears(&self) -> Hears {
        Hears::Sampled {
            read_period: self.p.sample_period,
            write_period: self.p.sample_period,
        }
    }

    fn on_access(
        &mut self,
        page: u64,
        _node: Node,
        write: bool,
        _t_ns: f64,
        _nodes: &Nodes,
        _m: &mut Moves,
    ) {
        self.r.samples += 1;
        let c = self.counts.entry(page).or_insert([0, 0]);
        c[write as usize] += 1;
        // Global cooling (pebs.c at the submission): when one count
        // reaches the threshold, every page's counts are halved.
        if c[write as usize] as u64 >= self.p.cooling_threshold {
            self.r.coolings += 1;
            self.counts.retain(|_, c| {
                c[0] >>= 1;
                c[1] >>= 1;
                c[0] + c[1] > 0
            });
        }
    }

    fn next_tick(&self) -> f64 {
        self.next_ns
    }

    /// The migration pass: hot pages on slower nodes up to the fastest,
    /// hottest first, cold fastest-node pages down to make room, at most
    /// `migrate_bytes_per_period` moved (both directions count).
    fn tick(&mut self, t_ns: f64, nodes: &Nodes, m: &mut Moves) {
        let period = self.p.period_ms * 1e6;
        while self.next_ns <= t_ns {
            self.next_ns += period;
        }
        let mut budget = self.p.cap_bytes() / self.page_bytes;
        let mut hot: Vec<(u32, u64, Node)> = self
            .counts
            .iter()
            .filter(|(_, &c)| self.hot(c))
            .filter_map(|(&p, &c)| match nodes.node_of(p) {
                Some(n) if n != FAST => Some((c[0].max(c[1]), p, n)),
                _ => None,
            })
            .collect();
        // Hottest first; ties by page, for the same result every run.
        hot.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut cold: Vec<u64> = if hot.is_empty() {
            Vec::new()
        } else {
            let mut c: Vec<u64> = nodes
                .pages_on(FAST)
                .filter(|p| !self.counts.get(p).is_some_and(|&c| self.hot(c)))
                .collect();
            c.sort_unstable_by(|a, b| b.cmp(a)); // popped lowest first
            c
        };
        let mut free = nodes.free(FAST);
        let mut moved = 0u64;
        for (_, page, from) in hot {
            if free == 0 {
                // Room first: a cold page down, to the slowest node with room
                // (the model's apply refuses it when none has room).
                let Some(victim) = cold.pop() else { break };
                if budget < 2 {
                    break;
                }
                m.push(Move {
                    page: victim,
                    from: FAST,
                    to: nodes.slowest(),
                });
                budget -= 1;
                moved += 1;
                free += 1;
            }
            if budget == 0 {
                break;
            }
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
        self.counts.remove(&page);
    }

    fn report(&self) -> PolicyReport {
        self.r.clone()
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

    fn ctx(frames: &[u64]) -> BuildCtx<'static> {
        BuildCtx {
            page_bytes: 4096,
            frames: frames.to_vec(),
            counts: None,
            epoch_counts: None,
        }
    }

    #[test]
    fn hot_at_the_threshold_and_cooled_by_halving() {
        let n = Nodes::new(4096, &[10, 10]);
        let mut h = HememPolicy::new(&HememParams::default(), &ctx(&[10, 10]));
        let mut m = Moves::default();
        for _ in 0..7 {
            h.on_access(1, 1, false, 0.0, &n, &mut m);
        }
        assert!(!h.hot(h.counts[&1]));
        h.on_access(1, 1, false, 0.0, &n, &mut m);
        assert!(h.hot(h.counts[&1]), "8 read samples");
        h.on_access(2, 1, true, 0.0, &n, &mut m);
        // Page 1 reaches 18: every count halves (page 2's 1 write goes).
        for _ in 0..10 {
            h.on_access(1, 1, false, 0.0, &n, &mut m);
        }
        assert_eq!((h.counts[&1], h.counts.get(&2)), ([9, 0], None));
        assert_eq!(h.report().coolings, 1);
    }

    #[test]
    fn each_period_moves_at_most_the_cap() {
        // 100 hot pages on the slow node, a full fast node of cold pages,
        // a cap of 10 pages (40 KiB) per 10 ms period.
        let frames = [50, 200];
        let mut n = Nodes::new(4096, &frames);
        for p in 0..50 {
            n.insert(1000 + p, FAST).unwrap();
        }
        let p = HememParams {
            migrate_bytes_per_period: Size::Absolute(40 << 10),
            ..HememParams::default()
        };
        let mut h = HememPolicy::new(&p, &ctx(&frames));
        let mut m = Moves::default();
        for page in 0..100 {
            n.insert(page, 1).unwrap();
            for _ in 0..8 {
                h.on_access(page, 1, false, 0.0, &n, &mut m);
            }
        }
        let mut promoted = 0;
        for period in 1..=20 {
            let t = period as f64 * 10e6;
            assert_eq!(h.next_tick(), t);
            h.tick(t, &n, &mut m);
            let a = n.apply(&mut m);
            assert!(a.moves.len() <= 10, "period {period}: {}", a.moves.len());
            promoted += a.promotions();
        }
        assert!(h.period_bytes.iter().all(|&b| b <= 40 << 10));
        // Room made by demoting cold pages: the fast node ends all hot.
        assert_eq!(promoted, 50);
        assert!(n.pages_on(FAST).all(|p| p < 100));
    }
}
