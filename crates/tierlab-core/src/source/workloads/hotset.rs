//! A hot set that moves: the load under which page migration between a
//! fast and a slow memory node matters (multilevel main memory).
//!
//! Modelled: `pages` pages of one address space; a hot set of
//! `hot_share` of them, a window of consecutive pages, takes
//! `hot_access_share` of the references, uniform within it; the other
//! references are uniform over the pages outside the window. Every
//! `move_every` references the window moves forward by `shift_share` of
//! its own length, wrapping at the end of the address space (1 = the next
//! window is disjoint from the last). Each reference is one page, a write
//! with probability `write_ratio`.
//!
//! The shape follows HeMem's moving-hot-set GUPS benchmark (Raybuck et al.,
//! "HeMem: Scalable Tiered Memory Management for Big Data Applications and
//! Real NVM", SOSP 2021; its `gups-hotset-move` microbenchmark sends 90% of
//! the updates to a contiguous hot set, uniform within it, and moves the
//! set once): hence the default 90% of references to the hot set. The
//! hot set's size, the period and the shift are parameters of ours, with
//! no source; the defaults are round numbers.
//!
//! By byte address (what a `[vm]` run reads, [`HotsetSpec::by_address`]):
//! the same references, each one whole page of `page_size` bytes at byte
//! address page x `page_size` in one address space, pid 1; the `[vm]`
//! run then pages them at its own `vm.page_size`.
//!
//! Left out: reads and writes of more than one page, any skew inside the
//! hot or the cold set, hot sets that move other than forward.

use super::{check_at_least, check_share, scaled, unknown_preset, Common, ParamError, Run, Script};
use crate::request::{Op, Request};
use crate::rng::Rng;
use crate::source::trace::{TraceError, TraceSource};
use crate::units::human_count;
use serde::{Deserialize, Serialize};

/// `[workload.hotset]`: every key optional, over the preset's values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotsetParams {
    pub pages: Option<u64>,
    pub requests: Option<u64>,
    pub hot_share: Option<f64>,
    pub hot_access_share: Option<f64>,
    pub move_every: Option<u64>,
    pub shift_share: Option<f64>,
    pub write_ratio: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HotsetSpec {
    pub pages: u64,
    pub requests: u64,
    /// Pages in the hot window (at least 1, at most `pages`).
    pub hot_pages: u64,
    pub hot_access_share: f64,
    pub move_every: u64,
    /// Pages the window moves by at each move (at least 1).
    pub shift_pages: u64,
    pub write_ratio: f64,
    pub seed: u64,
    pub page_size: u32,
    /// Read by byte address (a `[vm]` run): each reference's key is its
    /// page's byte address, pid [`PID`]. Otherwise keys name (space, page).
    pub by_address: bool,
}

pub const PRESETS: &[&str] = &["default"];

/// The address space's id in the keys (`super::page_key`).
const SPACE: u64 = 1;

/// The process of every reference by byte address: the one address space.
pub const PID: u32 = 1;

impl HotsetSpec {
    pub fn resolve(preset: &str, p: &HotsetParams, c: Common) -> Result<HotsetSpec, ParamError> {
        // (pages, requests, move_every): 256 MiB of 4 KiB pages, 2 M
        // references, ten moves. Ours: no source gives them.
        let (pages, requests, move_every) = match preset {
            "default" => (65_536u64, 2_000_000u64, 200_000u64),
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let pages = check_at_least("pages", p.pages.unwrap_or(scaled(pages, c.scale, 1)), 1)?;
        if pages > u32::MAX as u64 {
            return Err(super::bad(
                "pages",
                format!("{pages} is out of range; at most 4294967295 (page numbers are 32-bit)"),
            ));
        }
        let requests = check_at_least(
            "requests",
            p.requests.unwrap_or(scaled(requests, c.scale, 1)),
            1,
        )?;
        let hot_share = p.hot_share.unwrap_or(0.1);
        if !(hot_share.is_finite() && hot_share > 0.0 && hot_share <= 1.0) {
            return Err(super::bad(
                "hot_share",
                format!(
                    "{hot_share} is out of range; allowed > 0.0 up to 1.0 (a share of the pages)"
                ),
            ));
        }
        let hot_pages = ((pages as f64 * hot_share).round() as u64).clamp(1, pages);
        let shift_share = p.shift_share.unwrap_or(1.0);
        if !(shift_share.is_finite() && shift_share > 0.0 && shift_share <= 1.0) {
            return Err(super::bad(
                "shift_share",
                format!(
                    "{shift_share} is out of range; allowed > 0.0 up to 1.0 (a share of the hot set; 1 = the next hot set is disjoint)"
                ),
            ));
        }
        Ok(HotsetSpec {
            pages,
            requests,
            hot_pages,
            hot_access_share: check_share("hot_access_share", p.hot_access_share.unwrap_or(0.9))?,
            move_every: check_at_least(
                "move_every",
                p.move_every.unwrap_or(scaled(move_every, c.scale, 1)),
                1,
            )?,
            shift_pages: ((hot_pages as f64 * shift_share).round() as u64).max(1),
            write_ratio: check_share("write_ratio", p.write_ratio.unwrap_or(0.0))?,
            seed: c.seed,
            page_size: c.page_size,
            by_address: false,
        })
    }

    /// The same references by byte address (what a `[vm]` run reads).
    pub fn by_address(self) -> Self {
        HotsetSpec {
            by_address: true,
            ..self
        }
    }

    /// The first page of the hot window during reference `i` (from 0).
    pub fn hot_start(&self, i: u64) -> u64 {
        let moves = i / self.move_every;
        // u128: moves x shift may pass 2^64 on long traces.
        ((moves as u128 * self.shift_pages as u128) % self.pages as u128) as u64
    }

    /// Whether `page` is in the hot window that starts at `start`.
    pub fn in_window(&self, start: u64, page: u64) -> bool {
        (page + self.pages - start) % self.pages < self.hot_pages
    }
}

pub struct Hotset {
    spec: HotsetSpec,
    rng: Rng,
    done: u64,
}

impl Hotset {
    pub fn new(spec: &HotsetSpec) -> Self {
        Hotset {
            spec: spec.clone(),
            rng: Rng::new(spec.seed),
            done: 0,
        }
    }
}

impl Script for Hotset {
    fn next_run(&mut self) -> Option<Run> {
        let s = &self.spec;
        if self.done == s.requests {
            return None;
        }
        let start = s.hot_start(self.done);
        self.done += 1;
        let cold = s.pages - s.hot_pages;
        // A cold draw needs a cold page: with every page hot, every
        // reference is hot.
        let offset = if cold == 0 || self.rng.next_f64() < s.hot_access_share {
            self.rng.below(s.hot_pages)
        } else {
            s.hot_pages + self.rng.below(cold)
        };
        let page = (start + offset) % s.pages;
        let op = if s.write_ratio > 0.0 && self.rng.next_f64() < s.write_ratio {
            Op::Write
        } else {
            Op::Read
        };
        Some(Run::new(SPACE, page, 1, op))
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        format!(
            "hotset: {} of {} pages hot, {}% of references to them, moving by {} pages every {} references, {} requests, seed {}",
            human_count(s.hot_pages),
            human_count(s.pages),
            s.hot_access_share * 100.0,
            human_count(s.shift_pages),
            human_count(s.move_every),
            human_count(s.requests),
            s.seed
        )
    }
}

/// The generator by byte address: `key` = page x `page_size`, `size` =
/// the page, `pid` = [`PID`]; the time of a reference is its index, as in
/// [`super::Paged`].
struct ByAddress {
    gen: Hotset,
    emitted: u64,
}

impl TraceSource for ByAddress {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let size = self.gen.spec.page_size;
        while out.len() < max {
            let Some(run) = self.gen.next_run() else {
                break;
            };
            out.push(Request {
                time: self.emitted,
                key: run.first * size as u64,
                size,
                op: run.op,
                pid: PID,
                next_access: -1,
            });
            self.emitted += 1;
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.gen.spec.requests)
    }
    fn describe(&self) -> String {
        format!(
            "{}, pages of {} by byte address",
            self.gen.describe(),
            crate::units::human_bytes(self.gen.spec.page_size as u64)
        )
    }
}

impl super::Benchmark for HotsetSpec {
    type Table = HotsetParams;
    fn make(preset: &str, table: &HotsetParams, c: Common) -> Result<Self, ParamError> {
        HotsetSpec::resolve(preset, table, c)
    }
    fn open(&self) -> Box<dyn TraceSource> {
        if self.by_address {
            Box::new(ByAddress {
                gen: Hotset::new(self),
                emitted: 0,
            })
        } else {
            Box::new(super::Paged::new(Hotset::new(self), self.page_size))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn spec(p: HotsetParams, seed: u64) -> HotsetSpec {
        HotsetSpec::resolve("default", &p, common(1.0, seed)).unwrap()
    }

    fn small() -> HotsetParams {
        HotsetParams {
            pages: Some(10_000),
            requests: Some(400_000),
            move_every: Some(100_000),
            ..Default::default()
        }
    }

    #[test]
    fn same_seed_same_runs_and_different_seed_differs() {
        let s = spec(small(), 5);
        assert_eq!(runs(Hotset::new(&s)), runs(Hotset::new(&s)));
        let t = HotsetSpec {
            seed: 6,
            ..s.clone()
        };
        assert_ne!(runs(Hotset::new(&s)), runs(Hotset::new(&t)));
    }

    #[test]
    fn the_hot_set_takes_its_share_and_moves() {
        let s = spec(small(), 9);
        assert_eq!((s.hot_pages, s.shift_pages), (1_000, 1_000));
        let pages: Vec<u64> = runs(Hotset::new(&s)).iter().map(|r| r.first).collect();
        assert_eq!(pages.len(), 400_000);
        assert!(pages.iter().all(|&p| p < 10_000));
        for epoch in 0..4u64 {
            let span = &pages[(epoch * 100_000) as usize..((epoch + 1) * 100_000) as usize];
            let start = s.hot_start(epoch * 100_000);
            assert_eq!(start, epoch * 1_000);
            // The current window takes 90% of the references ...
            let now = span.iter().filter(|&&p| s.in_window(start, p)).count() as f64 / 1e5;
            assert!((now - 0.9).abs() < 0.005, "epoch {epoch}: {now}");
            // ... and, once it has moved, the last window only its share
            // of the cold references: 10% x 1,000 / 9,000 pages.
            if epoch > 0 {
                let prev = s.hot_start((epoch - 1) * 100_000);
                let was = span.iter().filter(|&&p| s.in_window(prev, p)).count() as f64 / 1e5;
                assert!((was - 0.1 / 9.0).abs() < 0.003, "epoch {epoch}: {was}");
            }
        }
    }

    #[test]
    fn a_partial_shift_keeps_part_of_the_set_and_wraps() {
        let s = spec(
            HotsetParams {
                pages: Some(100),
                hot_share: Some(0.4),
                shift_share: Some(0.25),
                move_every: Some(10),
                ..small()
            },
            1,
        );
        assert_eq!((s.hot_pages, s.shift_pages), (40, 10));
        assert_eq!(s.hot_start(9), 0);
        assert_eq!(s.hot_start(10), 10);
        // After 10 moves of 10 pages the window is back at 0.
        assert_eq!(s.hot_start(100), 0);
        assert!(s.in_window(90, 5) && s.in_window(90, 95) && !s.in_window(90, 30));
    }

    /// Every request of a boxed source.
    fn all_of(mut src: Box<dyn TraceSource>) -> Vec<Request> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while src.next_batch(&mut buf, 1000).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    #[test]
    fn by_address_is_the_same_pages_at_their_byte_addresses() {
        use super::super::Benchmark;
        let s = spec(small(), 7);
        let paged = all_of(s.open());
        let s8k = HotsetSpec {
            page_size: 8192,
            ..s.clone()
        };
        for (spec, size) in [(s.clone(), 4096u64), (s8k, 8192)] {
            let addr = all_of(spec.by_address().open());
            assert_eq!(addr.len(), paged.len());
            for (a, p) in addr.iter().zip(&paged) {
                // The same page and operation: the key is its byte address.
                assert_eq!(a.key, (p.key & 0xffff_ffff) * size);
                assert_eq!((a.size as u64, a.pid, a.op), (size, PID, p.op));
                assert_eq!(a.time, p.time);
            }
        }
        // Every address is page-aligned and inside the address space.
        let addr = all_of(s.clone().by_address().open());
        assert!(addr
            .iter()
            .all(|r| r.key % 4096 == 0 && r.key < 10_000 * 4096));
    }

    #[test]
    fn every_page_hot_and_writes() {
        let s = spec(
            HotsetParams {
                pages: Some(50),
                hot_share: Some(1.0),
                hot_access_share: Some(0.0),
                write_ratio: Some(0.25),
                ..small()
            },
            3,
        );
        let r = runs(Hotset::new(&s));
        assert!(r.iter().all(|r| r.first < 50 && r.pages == 1));
        let w = r.iter().filter(|r| r.op == Op::Write).count() as f64 / r.len() as f64;
        assert!((w - 0.25).abs() < 0.01, "{w}");
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let c = common(1.0, 1);
        let bad = |p: HotsetParams| HotsetSpec::resolve("default", &p, c).unwrap_err().0;
        assert_eq!(
            bad(HotsetParams {
                hot_share: Some(0.0),
                ..small()
            }),
            "hot_share"
        );
        assert_eq!(
            bad(HotsetParams {
                hot_share: Some(1.5),
                ..small()
            }),
            "hot_share"
        );
        assert_eq!(
            bad(HotsetParams {
                shift_share: Some(0.0),
                ..small()
            }),
            "shift_share"
        );
        assert_eq!(
            bad(HotsetParams {
                move_every: Some(0),
                ..small()
            }),
            "move_every"
        );
        assert_eq!(
            bad(HotsetParams {
                pages: Some(0),
                ..small()
            }),
            "pages"
        );
        assert_eq!(
            bad(HotsetParams {
                pages: Some(1 << 33),
                ..small()
            }),
            "pages"
        );
        assert_eq!(
            bad(HotsetParams {
                requests: Some(0),
                ..small()
            }),
            "requests"
        );
        assert_eq!(
            bad(HotsetParams {
                hot_access_share: Some(f64::NAN),
                ..small()
            }),
            "hot_access_share"
        );
        assert_eq!(
            bad(HotsetParams {
                write_ratio: Some(-0.1),
                ..small()
            }),
            "write_ratio"
        );
        assert_eq!(
            HotsetSpec::resolve("s1", &small(), c).unwrap_err().0,
            "preset"
        );
    }
}
