//! Second-hit admission with Bloom filters: the rule of `second-hit` (admit
//! a key refused recently) in bounded memory, at the price of false
//! positives (a key never refused is admitted as if it had been) and of
//! never forgetting an admitted key before its filter is cleared. The
//! design is CacheLib's RejectFirstAP over an ApproxSplitSet
//! (cachelib/allocator/nvmcache/NvmAdmissionPolicy.h,
//! cachelib/common/ApproxSplitSet.h): a ring of `splits` filters; refused
//! keys go into the newest; when it has taken `window / splits` keys the
//! oldest filter is cleared and becomes the newest. A key is found if any
//! filter holds it, so the policy remembers between the last
//! `window - window / splits` and `window` refusals.
//!
//! Sizes (Bloom 1970; the usual optimum, e.g. Broder & Mitzenmacher 2004):
//! each filter holds n = ceil(window / splits) keys with m = ceil(n ln(1/q)
//! / ln(2)^2) bits and k = ceil(log2(1/q)) hash functions, where q = 1 -
//! (1 - fp_rate)^(1/splits) is the false-positive rate per filter, so that a
//! lookup in all `splits` full filters is a false positive with probability
//! `fp_rate`. The k bit positions come from two hashes (Kirsch &
//! Mitzenmacher 2006: h1 + i h2). Memory: splits x m bits, at fp_rate
//! 0.01 about 1.2 bytes per remembered key with one filter and 1.6 with
//! four, against about 32 for `second-hit`.

use super::{Admission, AdmissionBuild, AdmitCtx, BuildCtx};
use crate::hash::fold_mul;
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BloomParams {
    /// Refused keys remembered (at most), 1..=2^32-1.
    pub window: u64,
    /// False-positive rate of a lookup with all filters full, in (0, 0.5].
    pub fp_rate: f64,
    /// Filters in the ring, 1..=64: more filters forget more gradually.
    pub splits: u32,
}

impl Default for BloomParams {
    fn default() -> Self {
        BloomParams {
            window: 100_000,
            fp_rate: 0.01,
            splits: 4,
        }
    }
}

pub struct BloomSecondHit {
    /// `splits` filters of `words` u64 each, one after the other.
    bits: Vec<u64>,
    words: usize,
    /// Bits per filter (`words * 64`).
    m: u64,
    k: u32,
    splits: usize,
    /// Keys per filter before rotation.
    per_filter: u64,
    /// The filter taking refused keys, and how many it took.
    cur: usize,
    count: u64,
}

/// The most memory the filters may take (a window of 100 million keys at
/// a 1% false-positive rate takes about 120 MiB).
const MAX_BYTES: u64 = 1 << 30;

/// The filters' sizes for a window and a false-positive rate.
struct Geometry {
    splits: usize,
    per_filter: u64,
    words: usize,
    k: u32,
}

impl Geometry {
    fn of(p: &BloomParams) -> Self {
        let splits = p.splits.clamp(1, 64) as usize;
        let n = p.window.max(1).div_ceil(splits as u64);
        let fp = p.fp_rate.clamp(1e-12, 0.5);
        let q = 1.0 - (1.0 - fp).powf(1.0 / splits as f64);
        let ln2 = std::f64::consts::LN_2;
        let m = (n as f64 * (1.0 / q).ln() / (ln2 * ln2)).ceil().max(64.0) as u64;
        Geometry {
            splits,
            per_filter: n,
            words: m.div_ceil(64) as usize,
            k: ((1.0 / q).log2().ceil() as u32).clamp(1, 32),
        }
    }

    fn bytes(&self) -> u64 {
        (self.words as u64).saturating_mul(self.splits as u64 * 8)
    }
}

impl AdmissionBuild for BloomSecondHit {
    type Params = BloomParams;
    fn build(p: &BloomParams, _: &BuildCtx) -> Self {
        let g = Geometry::of(p);
        BloomSecondHit {
            bits: vec![0; g.words * g.splits],
            words: g.words,
            m: g.words as u64 * 64,
            k: g.k,
            splits: g.splits,
            per_filter: g.per_filter,
            cur: 0,
            count: 0,
        }
    }
    fn memory(p: &BloomParams) -> Option<(&'static str, u64)> {
        Some(("window", Geometry::of(p).bytes()))
    }
    fn check(p: &BloomParams) -> Result<(), String> {
        if !(1..=u32::MAX as u64).contains(&p.window) {
            return Err(format!(
                "window: {} is out of range; allowed 1 to 4294967295 keys",
                p.window
            ));
        }
        let bytes = Geometry::of(p).bytes();
        if p.fp_rate > 0.0 && bytes > MAX_BYTES {
            return Err(format!(
                "window: {} keys at fp_rate {} need {} of filters, more than the {} allowed; \
                 a smaller window or a larger fp_rate",
                p.window,
                p.fp_rate,
                crate::units::human_bytes(bytes),
                crate::units::human_bytes(MAX_BYTES)
            ));
        }
        if !(p.fp_rate > 0.0 && p.fp_rate <= 0.5) {
            return Err(format!(
                "fp_rate: {} is out of range; allowed greater than 0.0, at most 0.5",
                p.fp_rate
            ));
        }
        if !(1..=64).contains(&p.splits) {
            return Err(format!(
                "splits: {} is out of range; allowed 1..=64",
                p.splits
            ));
        }
        Ok(())
    }
}

impl BloomSecondHit {
    #[inline(always)]
    fn hashes(key: u64) -> (u64, u64) {
        // Two unrelated mixes of the key; h2 odd so that h1 + i h2 cycles
        // through distinct values.
        let h1 = fold_mul(key);
        let h2 = fold_mul(key.rotate_left(32) ^ 0x5851_F42D_4C95_7F2D) | 1;
        (h1, h2)
    }

    /// Bit `i` of the key in a filter: its word and mask.
    #[inline(always)]
    fn bit(&self, h: (u64, u64), i: u32) -> (usize, u64) {
        let x = h.0.wrapping_add((i as u64).wrapping_mul(h.1));
        // Lemire's multiply-shift maps x to [0, m) without a division.
        let b = ((x as u128 * self.m as u128) >> 64) as u64;
        ((b / 64) as usize, 1u64 << (b % 64))
    }

    fn in_filter(&self, f: usize, h: (u64, u64)) -> bool {
        let base = f * self.words;
        (0..self.k).all(|i| {
            let (w, mask) = self.bit(h, i);
            self.bits[base + w] & mask != 0
        })
    }

    /// Whether any filter holds `key` (no side effect).
    pub fn contains(&self, key: u64) -> bool {
        let h = Self::hashes(key);
        (0..self.splits).any(|f| self.in_filter(f, h))
    }

    fn remember(&mut self, key: u64) {
        let h = Self::hashes(key);
        let base = self.cur * self.words;
        for i in 0..self.k {
            let (w, mask) = self.bit(h, i);
            self.bits[base + w] |= mask;
        }
        self.count += 1;
        if self.count >= self.per_filter {
            self.cur = (self.cur + 1) % self.splits;
            let base = self.cur * self.words;
            self.bits[base..base + self.words].fill(0);
            self.count = 0;
        }
    }

    /// Memory held by the filters, in bytes.
    pub fn bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

impl Admission for BloomSecondHit {
    #[inline]
    fn admit(&mut self, req: &Request, _: &AdmitCtx) -> bool {
        if self.contains(req.key) {
            return true;
        }
        self.remember(req.key);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn build(window: u64, fp_rate: f64, splits: u32) -> BloomSecondHit {
        let p = BloomParams {
            window,
            fp_rate,
            splits,
        };
        assert!(BloomSecondHit::check(&p).is_ok());
        BloomSecondHit::build(&p, &BuildCtx { seed: 0, tier: 0 })
    }

    fn offer(a: &mut BloomSecondHit, k: u64) -> bool {
        a.admit(&Request::read(k, 1), &AdmitCtx::default())
    }

    /// Share of `n` never-seen random keys that the filters claim to hold.
    fn measured_fp(a: &BloomSecondHit, seed: u64, n: u64) -> f64 {
        let mut rng = Rng::new(seed);
        (0..n).filter(|_| a.contains(rng.next_u64())).count() as f64 / n as f64
    }

    #[test]
    fn admits_the_second_reference() {
        let mut a = build(1000, 0.01, 4);
        assert!(!offer(&mut a, 1));
        assert!(!offer(&mut a, 2));
        assert!(offer(&mut a, 1));
        assert!(offer(&mut a, 2));
        assert!(!offer(&mut a, 3));
    }

    #[test]
    fn rotation_forgets_the_oldest_filter() {
        // Two filters of two keys: refusing 3 and 4 fills the second filter,
        // and the rotation clears the first, which held 1 and 2.
        let mut a = build(4, 0.01, 2);
        for k in 1..=4 {
            assert!(!offer(&mut a, k));
        }
        assert!(!offer(&mut a, 1), "forgotten with its filter");
        assert!(offer(&mut a, 3), "still in the newer filter");
    }

    #[test]
    fn one_filter_false_positive_rate_is_near_the_configured_one() {
        for fp in [0.1, 0.01, 0.001] {
            let n = 20_000;
            let mut a = build(n, fp, 1);
            // n - 1 distinct keys: one filter, full, not yet rotated.
            let mut rng = Rng::new(1);
            for _ in 0..n - 1 {
                a.remember(rng.next_u64());
            }
            let got = measured_fp(&a, 2, 200_000);
            assert!(
                got > fp * 0.5 && got < fp * 1.5,
                "fp_rate {fp}: measured {got}"
            );
        }
    }

    #[test]
    fn split_filters_stay_under_the_configured_rate() {
        let fp = 0.01;
        let mut a = build(40_000, fp, 4);
        let mut rng = Rng::new(3);
        // Many rotations: three full filters and a partly filled one.
        for _ in 0..130_000 {
            offer(&mut a, rng.next_u64());
        }
        let got = measured_fp(&a, 4, 200_000);
        assert!(got > fp * 0.4 && got < fp * 1.2, "measured {got}");
    }

    #[test]
    fn memory_is_bounded_and_small() {
        let a = build(1_000_000, 0.01, 4);
        // About 1.2 bytes per key at 1% (more with splits: each filter is
        // sized for a lower rate).
        assert!(a.bytes() < 2_000_000, "{} bytes", a.bytes());
        let mut a = build(1000, 0.01, 4);
        let before = a.bytes();
        for k in 0..100_000 {
            offer(&mut a, k);
        }
        assert_eq!(a.bytes(), before);
    }

    #[test]
    fn parameters_out_of_range_are_rejected() {
        let ok = BloomParams::default();
        for bad in [
            BloomParams {
                window: 0,
                ..ok.clone()
            },
            BloomParams {
                fp_rate: 0.0,
                ..ok.clone()
            },
            BloomParams {
                fp_rate: 0.6,
                ..ok.clone()
            },
            BloomParams {
                fp_rate: f64::NAN,
                ..ok.clone()
            },
            BloomParams {
                splits: 0,
                ..ok.clone()
            },
            BloomParams {
                splits: 65,
                ..ok.clone()
            },
        ] {
            assert!(BloomSecondHit::check(&bad).is_err(), "{bad:?}");
        }
    }
}
