//! A static web server's file reads, SURGE-like (Barford & Crovella,
//! "Generating Representative Web Workloads for Network and Server
//! Performance Evaluation", SIGMETRICS 1998): S4's SURGE load over a 1.5 GB
//! fileset.
//!
//! Modelled: a fileset of files whose sizes follow SURGE's model (a
//! lognormal body and a Pareto tail, [`super::SurgeSizes`]), drawn until
//! their sum reaches `fileset` bytes; file popularity Zipf with exponent
//! `alpha` (SURGE uses Zipf's law, alpha = 1), independent of size as in
//! SURGE; each request reads the whole file, page by page. An optional head
//! (`head_size`, `head_share`): one file of that size, the first, draws that
//! share of the requests, and the Zipf law spreads the rest over the other
//! files (S4: "a static web page which is approximately 16KB in file size is
//! requested 50% of the time").
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
    pub head_size: Option<crate::units::Size>,
    pub head_share: Option<f64>,
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
    /// (bytes, share of the requests) of the head file, when there is one.
    pub head: Option<(u64, f64)>,
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
        // (fileset bytes, whole-file requests, head file (bytes, share)).
        let (fileset, requests, head) = match preset {
            "default" => (64u64 << 20, 20_000u64, None),
            // S4 (Kgil & Mudge, CASES 2006) 5.1.2: SURGE over a 1.5 GB fileset,
            // "a static web page which is approximately 16KB in file size is
            // requested 50% of the time".
            "s4" => (1_500_000_000, 200_000, Some((16u64 << 10, 0.5))),
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let fileset = size_bytes("fileset", p.fileset)?.unwrap_or(scaled(fileset, c.scale, 1));
        if fileset > 1 << 44 {
            return Err(bad(
                "fileset",
                format!("{fileset} B is out of range; at most 16 TiB"),
            ));
        }
        let head = resolve_head(p, head, fileset)?;
        Ok(WebSpec {
            fileset,
            requests: check_at_least(
                "requests",
                p.requests.unwrap_or(scaled(requests, c.scale, 1)),
                1,
            )?,
            alpha: check_alpha(p.alpha.unwrap_or(1.0))?,
            sizes: SurgeSizes::SURGE.with(&p.sizes())?,
            head,
            seed: c.seed,
            page_size: c.page_size,
        })
    }
}

/// The head file over the preset's: `head_share = 0` removes it; a
/// `head_size` without a share (and no preset head) is refused.
fn resolve_head(
    p: &WebParams,
    preset: Option<(u64, f64)>,
    fileset: u64,
) -> Result<Option<(u64, f64)>, ParamError> {
    let size = size_bytes("head_size", p.head_size)?.or(preset.map(|h| h.0));
    let share = match p.head_share {
        Some(v) if !(v.is_finite() && (0.0..1.0).contains(&v)) => {
            return Err(bad(
                "head_share",
                format!("{v} is out of range; allowed 0.0 to below 1.0"),
            ))
        }
        Some(v) => Some(v),
        None => preset.map(|h| h.1),
    };
    match (size, share) {
        (_, Some(0.0)) => Ok(None),
        (None, None) => Ok(None),
        (Some(_), None) => Err(bad("head_size", "needs head_share")),
        (None, Some(_)) => Err(bad("head_share", "needs head_size")),
        (Some(b), Some(_)) if b > fileset => Err(bad(
            "head_size",
            format!("{b} B is out of range; at most the fileset, {fileset} B"),
        )),
        (Some(b), Some(v)) => Ok(Some((b, v))),
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
        let (sizes, weights) = match spec.head {
            None => {
                let sizes = draw_fileset(&spec.sizes, spec.fileset, &mut rng);
                let w = zipf_weights(sizes.len(), spec.alpha);
                (sizes, w)
            }
            Some((bytes, share)) => {
                // The head first, then SURGE's files for the remaining bytes,
                // Zipf over them for the remaining share.
                let mut sizes = vec![bytes];
                sizes.extend(draw_fileset(
                    &spec.sizes,
                    spec.fileset.saturating_sub(bytes),
                    &mut rng,
                ));
                let rest = zipf_weights(sizes.len() - 1, spec.alpha);
                let sum: f64 = rest.iter().sum();
                let mut w = vec![if rest.is_empty() { 1.0 } else { share }];
                w.extend(rest.iter().map(|x| (1.0 - share) * x / sum));
                (sizes, w)
            }
        };
        let popularity = Alias::new(&weights);
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
        let head = match s.head {
            Some((b, v)) => format!(", head {} at {v}", human_bytes(b)),
            None => String::new(),
        };
        format!(
            "web (SURGE-like): {} files, {}, zipf alpha {}{head}, {} requests, seed {}",
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
                head_share: Some(0.0),
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
    fn head_file_draws_its_share() {
        let p = WebParams {
            fileset: Some(crate::units::Size::Absolute(64 << 20)),
            requests: Some(200_000),
            ..Default::default()
        };
        let s = spec(p.clone(), 1.0, 5);
        assert_eq!(s.head, Some((16 << 10, 0.5)));
        let g = Web::new(&s);
        assert_eq!(g.file_sizes()[0], 16 << 10);
        let total: u64 = g.file_sizes().iter().sum();
        assert!(total >= s.fileset, "{total}");
        let runs = runs(g);
        let head = runs.iter().filter(|r| r.id == 1).count() as f64 / runs.len() as f64;
        assert!((head - 0.5).abs() < 0.005, "head share {head}");
        for r in runs.iter().filter(|r| r.id == 1) {
            assert_eq!(r.pages, 4);
        }
        // The rest is Zipf over the other files: file 2 draws about twice file 3.
        let n2 = runs.iter().filter(|r| r.id == 2).count() as f64;
        let n3 = runs.iter().filter(|r| r.id == 3).count() as f64;
        assert!((n2 / n3 - 2.0).abs() < 0.15, "{n2} / {n3}");
        // A share of 0 removes the head: the preset's s4 draws Zipf over all.
        let off = spec(
            WebParams {
                head_share: Some(0.0),
                ..p.clone()
            },
            1.0,
            5,
        );
        assert_eq!(off.head, None);
        let d = WebSpec::resolve("default", &p, common(1.0, 5)).unwrap();
        assert_eq!(d.head, None);
    }

    #[test]
    fn head_keys_are_checked() {
        let c = common(1.0, 1);
        let err = |p: WebParams| WebSpec::resolve("default", &p, c).unwrap_err();
        let kib = |n: u64| Some(crate::units::Size::Absolute(n << 10));
        assert_eq!(
            err(WebParams {
                head_size: kib(16),
                ..Default::default()
            })
            .0,
            "head_size"
        );
        assert_eq!(
            err(WebParams {
                head_share: Some(0.5),
                ..Default::default()
            })
            .0,
            "head_share"
        );
        for v in [1.0, -0.1, f64::NAN] {
            let e = err(WebParams {
                head_size: kib(16),
                head_share: Some(v),
                ..Default::default()
            });
            assert_eq!(e.0, "head_share", "{v}");
        }
        let e = err(WebParams {
            head_size: kib(1 << 30),
            head_share: Some(0.5),
            ..Default::default()
        });
        assert!(e.1.contains("at most the fileset"), "{}", e.1);
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
