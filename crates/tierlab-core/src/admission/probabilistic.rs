//! Probabilistic admission: each placement is admitted with probability `p`,
//! independently (libCacheSim's `prob` admission, cache/admission/prob.c;
//! CacheLib's RejectRandomAP). Objects requested often are offered often
//! and so get in sooner; one-hit objects mostly stay out.
//!
//! Seeded from the run's seed and the tier's index: the same run admits the
//! same objects on every machine, and two tiers draw unrelated streams.

use super::{Admission, AdmissionBuild, AdmitCtx, BuildCtx};
use crate::request::Request;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProbabilisticParams {
    /// Probability of admitting one placement, 0.0..=1.0 (required).
    pub p: f64,
}

pub struct Probabilistic {
    rng: Rng,
    /// `p` scaled to the 53-bit draws of `Rng::next_f64`, compared as integers.
    threshold: u64,
}

impl AdmissionBuild for Probabilistic {
    type Params = ProbabilisticParams;
    fn build(p: &ProbabilisticParams, ctx: &BuildCtx) -> Self {
        Probabilistic {
            // A different stream from the workload generator's (same seed).
            rng: Rng::new(ctx.seed ^ 0xAD31_5510_0000_0000 ^ (ctx.tier as u64 + 1)),
            threshold: (p.p.clamp(0.0, 1.0) * (1u64 << 53) as f64) as u64,
        }
    }
    fn check(p: &ProbabilisticParams) -> Result<(), String> {
        if (0.0..=1.0).contains(&p.p) {
            Ok(())
        } else {
            Err(format!("p: {} is out of range; allowed 0.0 to 1.0", p.p))
        }
    }
}

impl Admission for Probabilistic {
    #[inline]
    fn admit(&mut self, _: &Request, _: &AdmitCtx) -> bool {
        (self.rng.next_u64() >> 11) < self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(p: f64, seed: u64, tier: usize) -> Probabilistic {
        Probabilistic::build(&ProbabilisticParams { p }, &BuildCtx { seed, tier })
    }

    fn draws(a: &mut Probabilistic, n: u64) -> Vec<bool> {
        let ctx = AdmitCtx::default();
        (0..n)
            .map(|k| a.admit(&Request::read(k, 1), &ctx))
            .collect()
    }

    #[test]
    fn admitted_share_is_within_four_sigma_of_p() {
        let n = 100_000u64;
        for p in [0.01, 0.1, 0.5, 0.9] {
            let got = draws(&mut build(p, 7, 0), n).iter().filter(|&&b| b).count() as f64;
            let sigma = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (got - n as f64 * p).abs() < 4.0 * sigma,
                "p = {p}: {got} of {n} admitted"
            );
        }
    }

    #[test]
    fn extremes_are_exact() {
        assert!(draws(&mut build(0.0, 1, 0), 1000).iter().all(|&b| !b));
        assert!(draws(&mut build(1.0, 1, 0), 1000).iter().all(|&b| b));
    }

    #[test]
    fn seeded_per_run_and_tier() {
        let a = draws(&mut build(0.5, 3, 0), 256);
        assert_eq!(
            a,
            draws(&mut build(0.5, 3, 0), 256),
            "same seed, same answers"
        );
        assert_ne!(a, draws(&mut build(0.5, 4, 0), 256), "another seed");
        assert_ne!(a, draws(&mut build(0.5, 3, 1), 256), "another tier");
    }

    #[test]
    fn p_out_of_range_is_rejected() {
        for p in [-0.1, 1.01, f64::NAN] {
            assert!(
                Probabilistic::check(&ProbabilisticParams { p }).is_err(),
                "{p}"
            );
        }
    }
}
