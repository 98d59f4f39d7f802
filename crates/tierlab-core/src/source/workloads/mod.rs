//! Seeded generators modelled on the source systems' benchmarks (docs/sources.md):
//! PostMark and Bonnie (S1, S2), SURGE-like and SPECweb99-like web loads
//! (S4), a proxy mix with many one-hit objects (S5) and a multiprogrammed
//! memory mix with S3's eight SPEC CPU2006 footprints, and a hot set that
//! moves (multilevel main memory). docs/workloads.md says what each models
//! and leaves out.
//!
//! Every generator is a [`Script`] of *runs*: an operation on consecutive
//! pages of one file (or one program's memory). [`Paged`] streams the runs
//! as page-granular [`Request`]s, so a generator's state is proportional to
//! its files or objects, never to the number of requests. The only source of
//! randomness is [`crate::rng::Rng`], so a seed gives the same trace on
//! every machine.

use crate::request::{Op, Request};
use crate::rng::Rng;
use crate::source::trace::{TraceError, TraceSource};
use serde::{Deserialize, Serialize};

/// The key of page `page` of file (or program) `id`: the id in the high 32
/// bits, so keys of different files never collide and a key names its file.
#[inline]
pub fn page_key(id: u64, page: u64) -> u64 {
    (id << 32) | page
}

/// The file (or program) id of a key made by [`page_key`].
#[inline]
pub fn key_file(key: u64) -> u64 {
    key >> 32
}

/// Pages needed for `bytes` (at least one: an empty file still has an inode
/// page worth of metadata in a page cache; we count its first page).
#[inline]
pub fn pages_of(bytes: u64, page_size: u32) -> u64 {
    bytes.div_ceil(page_size as u64).max(1)
}

/// `pages` consecutive pages from `first` of file `id`, all with one op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub id: u64,
    pub first: u64,
    pub pages: u64,
    pub op: Op,
}

impl Run {
    pub fn new(id: u64, first: u64, pages: u64, op: Op) -> Self {
        Run {
            id,
            first,
            pages,
            op,
        }
    }
}

/// A generator as a sequence of runs; `None` ends the trace.
pub trait Script: Send {
    fn next_run(&mut self) -> Option<Run>;
    /// What the generator is, for messages and results.
    fn describe(&self) -> String;
}

/// Streams a [`Script`]'s runs as page requests of `page_size` bytes; the
/// time of a request is its index (logical time: a generator has no clock).
pub struct Paged<S: Script> {
    script: S,
    page_size: u32,
    run: Option<Run>,
    done_in_run: u64,
    emitted: u64,
}

impl<S: Script> Paged<S> {
    pub fn new(script: S, page_size: u32) -> Self {
        Paged {
            script,
            page_size,
            run: None,
            done_in_run: 0,
            emitted: 0,
        }
    }
}

impl<S: Script> TraceSource for Paged<S> {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        while out.len() < max {
            let run = match self.run {
                Some(r) if self.done_in_run < r.pages => r,
                _ => match self.script.next_run() {
                    Some(r) => {
                        self.run = Some(r);
                        self.done_in_run = 0;
                        continue;
                    }
                    None => {
                        self.run = None;
                        break;
                    }
                },
            };
            let n = (run.pages - self.done_in_run).min((max - out.len()) as u64);
            for i in 0..n {
                out.push(Request {
                    time: self.emitted,
                    key: page_key(run.id, run.first + self.done_in_run + i),
                    size: self.page_size,
                    op: run.op,
                    pid: 0,
                    next_access: -1,
                });
                self.emitted += 1;
            }
            self.done_in_run += n;
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        None
    }
    fn describe(&self) -> String {
        format!(
            "{}, {} pages",
            self.script.describe(),
            crate::units::human_bytes(self.page_size as u64)
        )
    }
}

/// A benchmark generator as the registry (`source::generators`) sees it:
/// its `[workload.<type>]` table over a preset, and its stream.
pub trait Benchmark: Sized {
    /// `[workload.<type>]`: every key optional, unknown keys rejected.
    type Table: serde::de::DeserializeOwned + Default;
    /// The preset's values, scaled, then the table's overrides, checked.
    fn make(preset: &str, table: &Self::Table, c: Common) -> Result<Self, ParamError>;
    /// A fresh stream of its requests.
    fn open(&self) -> Box<dyn TraceSource>;
}

/// Implements [`Benchmark`] for a generator whose spec has `resolve` and a
/// `page_size`, and whose [`Script`] is built by `new(&spec)`.
macro_rules! benchmark {
    ($spec:ty, $table:ty, $script:ty) => {
        impl $crate::source::workloads::Benchmark for $spec {
            type Table = $table;
            fn make(
                preset: &str,
                table: &$table,
                c: $crate::source::workloads::Common,
            ) -> Result<Self, $crate::source::workloads::ParamError> {
                <$spec>::resolve(preset, table, c)
            }
            fn open(&self) -> Box<dyn $crate::source::trace::TraceSource> {
                Box::new($crate::source::workloads::Paged::new(
                    <$script>::new(self),
                    self.page_size,
                ))
            }
        }
    };
}
pub(crate) use benchmark;

pub mod bonnie;
pub mod hotset;
pub mod multiprogram;
pub mod postmark;
pub mod proxy;
pub mod specweb;
pub mod web;

/// What every generator of this module takes besides its own table: the
/// preset to start from, a scale factor, the seed and the page size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Common {
    pub scale: f64,
    pub seed: u64,
    pub page_size: u32,
}

/// A parameter problem: the key (relative to the generator's table, or
/// `preset`) and what is wrong.
pub type ParamError = (String, String);

pub(crate) fn bad(key: &str, msg: impl Into<String>) -> ParamError {
    (key.to_string(), msg.into())
}

/// `n * scale` rounded, at least `min` (a scaled-down preset keeps at least
/// one file, one program page, ...).
pub(crate) fn scaled(n: u64, scale: f64, min: u64) -> u64 {
    ((n as f64 * scale).round() as u64).max(min)
}

pub(crate) fn check_share(key: &str, v: f64) -> Result<f64, ParamError> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(bad(key, format!("{v} is out of range; allowed 0.0 to 1.0")))
    }
}

pub(crate) fn check_at_least(key: &str, v: u64, min: u64) -> Result<u64, ParamError> {
    if v >= min {
        Ok(v)
    } else {
        Err(bad(
            key,
            format!("{v} is out of range; must be at least {min}"),
        ))
    }
}

pub(crate) fn check_positive(key: &str, v: f64) -> Result<f64, ParamError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(bad(
            key,
            format!("{v} is out of range; must be finite and > 0"),
        ))
    }
}

pub(crate) fn unknown_preset(name: &str, known: &[&str]) -> ParamError {
    bad(
        "preset",
        format!(
            "unknown preset {name:?}; expected one of {}",
            known.join(", ")
        ),
    )
}

/// A standard normal draw (Box-Muller; the second value is discarded so the
/// generator needs no state between draws).
pub(crate) fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64(); // (0, 1]: ln is finite
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Web file sizes as SURGE draws them (Barford & Crovella, SIGMETRICS 1998,
/// Table 1): a lognormal body (mu 9.357, sigma 1.318 in ln bytes) and, for
/// a share of the files, a Pareto tail (k = 133,000 B, alpha = 1.1). Sizes
/// are capped at `max` so one tail draw cannot dwarf the fileset.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurgeSizes {
    pub body_mu: f64,
    pub body_sigma: f64,
    pub tail_share: f64,
    pub tail_k: f64,
    pub tail_alpha: f64,
    pub max: u64,
}

impl SurgeSizes {
    /// SURGE's fitted values. The tail share is the share of files above the
    /// body/tail cut-off in SURGE's model (about 7%); 64 MiB caps the tail.
    pub const SURGE: SurgeSizes = SurgeSizes {
        body_mu: 9.357,
        body_sigma: 1.318,
        tail_share: 0.07,
        tail_k: 133_000.0,
        tail_alpha: 1.1,
        max: 64 << 20,
    };

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let v = if rng.next_f64() < self.tail_share {
            let u = 1.0 - rng.next_f64(); // (0, 1]
            self.tail_k / u.powf(1.0 / self.tail_alpha)
        } else {
            (self.body_mu + self.body_sigma * normal(rng)).exp()
        };
        (v.round() as u64).clamp(1, self.max)
    }

    /// Overrides from a config table, each checked.
    pub fn with(mut self, o: &SizeParams) -> Result<Self, ParamError> {
        if let Some(v) = o.body_mu {
            if !v.is_finite() || !(0.0..=40.0).contains(&v) {
                return Err(bad(
                    "body_mu",
                    format!("{v} is out of range; allowed 0.0 to 40.0 (ln bytes)"),
                ));
            }
            self.body_mu = v;
        }
        if let Some(v) = o.body_sigma {
            if !v.is_finite() || !(0.0..=10.0).contains(&v) {
                return Err(bad(
                    "body_sigma",
                    format!("{v} is out of range; allowed 0.0 to 10.0"),
                ));
            }
            self.body_sigma = v;
        }
        if let Some(v) = o.tail_share {
            self.tail_share = check_share("tail_share", v)?;
        }
        if let Some(v) = o.tail_k {
            self.tail_k = check_positive("tail_k", v)?;
        }
        if let Some(v) = o.tail_alpha {
            self.tail_alpha = check_positive("tail_alpha", v)?;
        }
        if let Some(v) = o.max_size {
            self.max = check_at_least("max_size", v, 1)?;
        }
        Ok(self)
    }
}

/// The size keys shared by the web and proxy tables.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SizeParams {
    pub body_mu: Option<f64>,
    pub body_sigma: Option<f64>,
    pub tail_share: Option<f64>,
    pub tail_k: Option<f64>,
    pub tail_alpha: Option<f64>,
    pub max_size: Option<u64>,
}

/// Zipf weights 1/rank^alpha for ranks 1..=n.
pub(crate) fn zipf_weights(n: usize, alpha: f64) -> Vec<f64> {
    (1..=n).map(|i| (i as f64).powf(-alpha)).collect()
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// The common parameters the generator tests use: 4 KiB pages.
    pub fn common(scale: f64, seed: u64) -> Common {
        Common {
            scale,
            seed,
            page_size: 4096,
        }
    }

    /// Every request of a source.
    pub fn all(mut src: impl TraceSource) -> Vec<Request> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while src.next_batch(&mut buf, 1000).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    /// Every run of a script.
    pub fn runs(mut s: impl Script) -> Vec<Run> {
        std::iter::from_fn(|| s.next_run()).collect()
    }

    /// Least-squares slope of ln(count) against ln(rank) over the `head`
    /// most requested ids: -alpha for a Zipf popularity.
    pub fn zipf_slope(ids: impl Iterator<Item = u64>, head: usize) -> f64 {
        let mut counts: std::collections::HashMap<u64, u64> = Default::default();
        for id in ids {
            *counts.entry(id).or_default() += 1;
        }
        let mut c: Vec<u64> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.truncate(head);
        let pts: Vec<(f64, f64)> = c
            .iter()
            .enumerate()
            .map(|(i, &n)| (((i + 1) as f64).ln(), (n as f64).ln()))
            .collect();
        let n = pts.len() as f64;
        let (mx, my) = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        sxy / sxx
    }

    /// The q-quantile of a sample (nearest rank).
    pub fn quantile(v: &mut [u64], q: f64) -> u64 {
        v.sort_unstable();
        v[((v.len() - 1) as f64 * q).round() as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    struct Two(u32);
    impl Script for Two {
        fn next_run(&mut self) -> Option<Run> {
            self.0 += 1;
            match self.0 {
                1 => Some(Run::new(1, 0, 3, Op::Write)),
                2 => Some(Run::new(2, 5, 2, Op::Read)),
                _ => None,
            }
        }
        fn describe(&self) -> String {
            "two runs".into()
        }
    }

    #[test]
    fn paged_streams_runs_across_batches() {
        let mut p = Paged::new(Two(0), 512);
        let mut buf = Vec::new();
        assert_eq!(p.next_batch(&mut buf, 2).unwrap(), 2);
        assert_eq!(p.next_batch(&mut buf, 2).unwrap(), 2);
        assert_eq!(buf[0].key, page_key(1, 2));
        assert_eq!((buf[1].key, buf[1].op), (page_key(2, 5), Op::Read));
        assert_eq!(p.next_batch(&mut buf, 2).unwrap(), 1);
        assert_eq!(
            (buf[0].key, buf[0].time, buf[0].size),
            (page_key(2, 6), 4, 512)
        );
        assert_eq!(p.next_batch(&mut buf, 2).unwrap(), 0);
    }

    #[test]
    fn surge_sizes_have_the_lognormal_median_and_a_tail() {
        let s = SurgeSizes::SURGE;
        let mut rng = Rng::new(3);
        let mut v: Vec<u64> = (0..200_000).map(|_| s.sample(&mut rng)).collect();
        // 93% of draws are lognormal with median e^9.357 = 11,575 B; the 7%
        // tail lies above k = 133,000, which moves the mixture's median to
        // the body's 0.5/0.93 quantile: e^(9.357 + 1.318 * 0.0933) = 13,049 B.
        let med = quantile(&mut v, 0.5) as f64;
        assert!((med / 13_049.0 - 1.0).abs() < 0.03, "median {med}");
        let above = v.iter().filter(|&&x| x >= 133_000).count() as f64 / v.len() as f64;
        // The tail plus the body's own mass above k (1 - Phi(1.86) = 3.1% of 93%).
        assert!((above - (0.07 + 0.93 * 0.0314)).abs() < 0.005, "{above}");
        assert!(v.iter().all(|&x| (1..=s.max).contains(&x)));
    }
}
