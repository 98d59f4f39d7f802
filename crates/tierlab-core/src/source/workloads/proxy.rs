//! A web proxy's object reads with many one-hit objects: the load under
//! which S5 (Park & Bahn, 2020) finds that caching only on the second
//! reference pays on fast storage.
//!
//! Modelled: `objects` popular objects requested with Zipf popularity of
//! exponent `alpha` (proxy traces fit 0.64..0.83: Breslau et al., "Web
//! Caching and Zipf-like Distributions", INFOCOM 1999; default 0.8), and a
//! share `one_hit_share` of requests for objects requested once and never
//! again ("one-timers", half or more of a proxy's distinct objects: Mahanti,
//! Williamson & Eager, IEEE Network 2000). Sizes follow SURGE's model
//! ([`super::SurgeSizes`]); a request reads the whole object, page by page.
//!
//! Left out: expiry, validation and uncachable responses, and any
//! correlation of size with popularity.

use super::web::{check_alpha, WebParams};
use super::{
    check_at_least, check_share, scaled, unknown_preset, zipf_weights, Common, ParamError, Run,
    Script, SurgeSizes,
};
use crate::request::Op;
use crate::rng::Alias;
use crate::rng::Rng;
use crate::units::human_count;
use serde::{Deserialize, Serialize};

/// `[workload.proxy]`: every key optional, over the preset's values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyParams {
    pub objects: Option<u64>,
    pub requests: Option<u64>,
    pub alpha: Option<f64>,
    pub one_hit_share: Option<f64>,
    pub body_mu: Option<f64>,
    pub body_sigma: Option<f64>,
    pub tail_share: Option<f64>,
    pub tail_k: Option<f64>,
    pub tail_alpha: Option<f64>,
    pub max_size: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProxySpec {
    pub objects: u64,
    pub requests: u64,
    pub alpha: f64,
    pub one_hit_share: f64,
    pub sizes: SurgeSizes,
    pub seed: u64,
    pub page_size: u32,
}

pub const PRESETS: &[&str] = &["default", "s5"];

impl ProxySpec {
    pub fn resolve(preset: &str, p: &ProxyParams, c: Common) -> Result<ProxySpec, ParamError> {
        // (popular objects, requests). S5 gives no trace sizes: "s5" is a
        // proxy of 100,000 popular objects and a million requests, ours.
        let (objects, requests) = match preset {
            "default" => (20_000u64, 100_000u64),
            "s5" => (100_000, 1_000_000),
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let objects = check_at_least(
            "objects",
            p.objects.unwrap_or(scaled(objects, c.scale, 1)),
            1,
        )?;
        if objects > u32::MAX as u64 {
            return Err(super::bad(
                "objects",
                format!("{objects} is out of range; at most 4294967295"),
            ));
        }
        let sizes = WebParams {
            body_mu: p.body_mu,
            body_sigma: p.body_sigma,
            tail_share: p.tail_share,
            tail_k: p.tail_k,
            tail_alpha: p.tail_alpha,
            max_size: p.max_size,
            ..Default::default()
        }
        .sizes();
        Ok(ProxySpec {
            objects,
            requests: check_at_least(
                "requests",
                p.requests.unwrap_or(scaled(requests, c.scale, 1)),
                1,
            )?,
            alpha: check_alpha(p.alpha.unwrap_or(0.8))?,
            one_hit_share: check_share("one_hit_share", p.one_hit_share.unwrap_or(0.3))?,
            sizes: SurgeSizes::SURGE.with(&sizes)?,
            seed: c.seed,
            page_size: c.page_size,
        })
    }
}

pub struct Proxy {
    spec: ProxySpec,
    rng: Rng,
    sizes: Vec<u64>,
    popularity: Alias,
    done: u64,
    /// One-hit objects so far; their ids follow the popular ones.
    one_hits: u64,
}

impl Proxy {
    pub fn new(spec: &ProxySpec) -> Self {
        let mut rng = Rng::new(spec.seed);
        let sizes: Vec<u64> = (0..spec.objects)
            .map(|_| spec.sizes.sample(&mut rng))
            .collect();
        Proxy {
            popularity: Alias::new(&zipf_weights(sizes.len(), spec.alpha)),
            spec: spec.clone(),
            rng,
            sizes,
            done: 0,
            one_hits: 0,
        }
    }
}

impl Script for Proxy {
    fn next_run(&mut self) -> Option<Run> {
        if self.done == self.spec.requests {
            return None;
        }
        self.done += 1;
        let ps = self.spec.page_size;
        if self.rng.next_f64() < self.spec.one_hit_share {
            self.one_hits += 1;
            let size = self.spec.sizes.sample(&mut self.rng);
            let id = self.spec.objects + self.one_hits;
            return Some(Run::new(id, 0, super::pages_of(size, ps), Op::Read));
        }
        let i = self.popularity.sample(&mut self.rng);
        Some(Run::new(
            i as u64 + 1,
            0,
            super::pages_of(self.sizes[i], ps),
            Op::Read,
        ))
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        format!(
            "proxy: {} popular objects (zipf alpha {}), {}% one-hit requests, {} requests, seed {}",
            human_count(s.objects),
            s.alpha,
            s.one_hit_share * 100.0,
            human_count(s.requests),
            s.seed
        )
    }
}

super::benchmark!(ProxySpec, ProxyParams, Proxy);
#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use std::collections::HashMap;

    fn spec(p: ProxyParams, scale: f64, seed: u64) -> ProxySpec {
        let c = common(scale, seed);
        ProxySpec::resolve("s5", &p, c).unwrap()
    }

    #[test]
    fn one_hit_share_and_popular_slope() {
        let s = spec(
            ProxyParams {
                requests: Some(1_000_000),
                ..Default::default()
            },
            0.1,
            11,
        );
        let runs = runs(Proxy::new(&s));
        let mut counts: HashMap<u64, u64> = HashMap::new();
        for r in &runs {
            *counts.entry(r.id).or_default() += 1;
        }
        let one_hit = runs.iter().filter(|r| r.id > s.objects).count() as f64 / runs.len() as f64;
        assert!((one_hit - 0.3).abs() < 0.02, "one-hit share {one_hit}");
        assert!(counts
            .iter()
            .filter(|(&id, _)| id > s.objects)
            .all(|(_, &n)| n == 1));
        // Most distinct objects are one-timers, as in proxy traces.
        let once = counts.values().filter(|&&n| n == 1).count() as f64 / counts.len() as f64;
        assert!(once > 0.5, "{once}");
        let slope = zipf_slope(runs.iter().filter(|r| r.id <= s.objects).map(|r| r.id), 100);
        assert!((slope + 0.8).abs() < 0.05, "slope {slope}");
    }

    #[test]
    fn same_seed_same_runs() {
        let s = spec(ProxyParams::default(), 0.01, 1);
        assert_eq!(runs(Proxy::new(&s)), runs(Proxy::new(&s)));
        let t = ProxySpec {
            seed: 2,
            ..s.clone()
        };
        assert_ne!(runs(Proxy::new(&s)), runs(Proxy::new(&t)));
    }
}
