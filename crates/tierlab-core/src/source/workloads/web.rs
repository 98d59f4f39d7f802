//! A static web server's file reads, SURGE-like (Barford & Crovella,
//! "Generating Representative Web Workloads for Network and Server
//! Performance Evaluation", SIGMETRICS 1998): S4's SURGE load over a 1.5 GB
//! fileset.
//!
//! Modelled: a fileset of files whose sizes follow SURGE's model (a
//! lognormal body and a Pareto tail, [`super::SurgeSizes`]), drawn until
//! their sum reaches `fileset` bytes; file popularity Zipf with exponent
//! `alpha` (SURGE uses Zipf's law, alpha = 1), independent of size as in
//! SURGE; each request reads the whole file, page by page.
//!
//! Left out: SURGE's user equivalents (ON/OFF times, embedded objects per
//! page) and its temporal locality model (lognormal stack distances): the
//! popularity draws here are independent, so only the popularity skew makes
//! requests repeat.

use super::{
    bad, check_at_least, scaled, unknown_preset, zipf_weights, Common, ParamError, Run, Script,
    SizeParams, SurgeSizes,
};
use crate::request::Op;
use crate::rng::Alias;
use crate::rng::Rng;
use crate::units::{human_bytes, human_count};
use serde::{Deserialize, Serialize};

/// `[workload.web]`: every key optional, over the preset's values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebParams {
    pub fileset: Option<crate::units::Size>,
    pub requests: Option<u64>,
    pub alpha: Option<f64>,
    pub body_mu: Option<f64>,
    pub body_sigma: Option<f64>,
    pub tail_share: Option<f64>,
    pub tail_k: Option<f64>,
    pub tail_alpha: Option<f64>,
    pub max_size: Option<u64>,
}

impl WebParams {
    pub(crate) fn sizes(&self) -> SizeParams {
        SizeParams {
            body_mu: self.body_mu,
            body_sigma: self.body_sigma,
            tail_share: self.tail_share,
            tail_k: self.tail_k,
            tail_alpha: self.tail_alpha,
            max_size: self.max_size,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct WebSpec {
    pub fileset: u64,
    pub requests: u64,
    pub alpha: f64,
    pub sizes: SurgeSizes,
    pub seed: u64,
    pub page_size: u32,
}

pub const PRESETS: &[&str] = &["default", "s4"];

pub(crate) fn size_bytes(
    key: &str,
    s: Option<crate::units::Size>,
) -> Result<Option<u64>, ParamError> {
    match s {
        None => Ok(None),
        Some(crate::units::Size::Absolute(n)) => check_at_least(key, n, 1).map(Some),
        Some(crate::units::Size::Percent(_)) => {
            Err(bad(key, "must be a size in bytes, not a share"))
        }
    }
}

pub(crate) fn check_alpha(v: f64) -> Result<f64, ParamError> {
    if v.is_finite() && (0.0..=5.0).contains(&v) {
        Ok(v)
    } else {
        Err(bad(
            "alpha",
            format!("{v} is out of range; allowed 0.0 to 5.0"),
        ))
    }
}

impl WebSpec {
    pub fn resolve(preset: &str, p: &WebParams, c: Common) -> Result<WebSpec, ParamError> {
        // (fileset bytes, whole-file requests).
        let (fileset, requests) = match preset {
            "default" => (64u64 << 20, 20_000u64),
            // S4 (Kgil & Mudge, CASES 2006): SURGE over a 1.5 GB fileset.
            "s4" => (1_500_000_000, 200_000),
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let fileset = size_bytes("fileset", p.fileset)?.unwrap_or(scaled(fileset, c.scale, 1));
        if fileset > 1 << 44 {
            return Err(bad(
                "fileset",
                format!("{fileset} B is out of range; at most 16 TiB"),
            ));
        }
        Ok(WebSpec {
            fileset,
            requests: check_at_least(
                "requests",
                p.requests.unwrap_or(scaled(requests, c.scale, 1)),
                1,
            )?,
            alpha: check_alpha(p.alpha.unwrap_or(1.0))?,
            sizes: SurgeSizes::SURGE.with(&p.sizes())?,
            seed: c.seed,
            page_size: c.page_size,
        })
    }
}

/// Sizes drawn until they sum to at least `fileset` bytes.
pub(crate) fn draw_fileset(sizes: &SurgeSizes, fileset: u64, rng: &mut Rng) -> Vec<u64> {
    let mut v = Vec::new();
    let mut sum = 0u64;
    while sum < fileset {
        let s = sizes.sample(rng);
        sum += s;
        v.push(s);
    }
    v
}

pub struct Web {
    spec: WebSpec,
    rng: Rng,
    sizes: Vec<u64>,
    popularity: Alias,
    done: u64,
}

impl Web {
    pub fn new(spec: &WebSpec) -> Self {
        let mut rng = Rng::new(spec.seed);
        let sizes = draw_fileset(&spec.sizes, spec.fileset, &mut rng);
        let popularity = Alias::new(&zipf_weights(sizes.len(), spec.alpha));
        Web {
            spec: spec.clone(),
            rng,
            sizes,
            popularity,
            done: 0,
        }
    }

    /// File sizes in bytes, most popular first.
    pub fn file_sizes(&self) -> &[u64] {
        &self.sizes
    }
}

impl Script for Web {
    fn next_run(&mut self) -> Option<Run> {
        if self.done == self.spec.requests {
            return None;
        }
        self.done += 1;
        let i = self.popularity.sample(&mut self.rng);
        let pages = super::pages_of(self.sizes[i], self.spec.page_size);
        Some(Run::new(i as u64 + 1, 0, pages, Op::Read))
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        format!(
            "web (SURGE-like): {} files, {}, zipf alpha {}, {} requests, seed {}",
            human_count(self.sizes.len() as u64),
            human_bytes(self.sizes.iter().sum::<u64>()),
            s.alpha,
            human_count(s.requests),
            s.seed
        )
    }
}

super::benchmark!(WebSpec, WebParams, Web);
#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{key_file, Paged};
    use super::*;

    fn spec(p: WebParams, scale: f64, seed: u64) -> WebSpec {
        let c = common(scale, seed);
        WebSpec::resolve("s4", &p, c).unwrap()
    }

    #[test]
    fn zipf_slope_is_alpha() {
        for alpha in [0.8, 1.0] {
            // One-page files so that requests are pages; 2M requests.
            let p = WebParams {
                alpha: Some(alpha),
                fileset: Some(crate::units::Size::Absolute(20_000 * 4096)),
                requests: Some(2_000_000),
                max_size: Some(4096),
                tail_share: Some(0.0),
                body_mu: Some(20.0),
                body_sigma: Some(0.0),
                ..Default::default()
            };
            let s = spec(p, 1.0, 7);
            let g = Web::new(&s);
            assert_eq!(g.file_sizes().len(), 20_000);
            let reqs = all(Paged::new(g, 4096));
            assert_eq!(reqs.len(), 2_000_000);
            let slope = zipf_slope(reqs.iter().map(|r| key_file(r.key)), 100);
            assert!((slope + alpha).abs() < 0.05, "alpha {alpha}: slope {slope}");
        }
    }

    #[test]
    fn fileset_and_whole_file_reads() {
        let s = spec(WebParams::default(), 0.02, 3);
        let g = Web::new(&s);
        let sizes = g.file_sizes().to_vec();
        let total: u64 = sizes.iter().sum();
        assert!(
            total >= s.fileset && total - s.fileset <= s.sizes.max,
            "{total}"
        );
        let runs = runs(g);
        assert_eq!(runs.len() as u64, s.requests);
        for r in &runs {
            assert_eq!(r.op, Op::Read);
            assert_eq!(r.first, 0);
            assert_eq!(r.pages, sizes[r.id as usize - 1].div_ceil(4096).max(1));
        }
    }

    #[test]
    fn same_seed_same_trace() {
        let s = spec(WebParams::default(), 0.002, 1);
        let a = all(Paged::new(Web::new(&s), 4096));
        assert_eq!(a, all(Paged::new(Web::new(&s), 4096)));
        let s2 = WebSpec { seed: 2, ..s };
        assert_ne!(a, all(Paged::new(Web::new(&s2), 4096)));
    }
}
