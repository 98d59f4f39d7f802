//! Second-hit admission (S5's admission control, Park & Bahn 2020: "insert
//! only on the second reference"; CacheLib's RejectFirstAP,
//! cachelib/allocator/nvmcache/NvmAdmissionPolicy.h, is the same idea).
//!
//! Precisely: the policy remembers the keys of its last `window` refusals,
//! oldest first. An object offered to the tier is admitted if its key is
//! remembered, and then forgotten; otherwise it is refused and remembered,
//! the oldest remembered key being forgotten when `window` are held. An
//! offer is a placement the tier would make (a miss served from below, a
//! demotion, a write allocation), so for a tier above its backing store the
//! "second reference" is the second miss of the key within the last
//! `window` distinct refused keys. Memory: at most `window` keys, about 32
//! bytes each (a ring of keys plus a hash map).

use super::{Admission, AdmissionBuild, AdmitCtx, BuildCtx};
use crate::hash::KeyMap;
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SecondHitParams {
    /// Refused keys remembered, 1..=2^32-1.
    pub window: u64,
}

impl Default for SecondHitParams {
    fn default() -> Self {
        SecondHitParams { window: 100_000 }
    }
}

pub struct SecondHit {
    /// Remembered keys in refusal order; `ring[(seq % window)]` is the key of
    /// refusal number `seq`. Admitted keys leave stale slots behind.
    ring: Vec<u64>,
    window: u64,
    /// Refusals so far.
    seq: u64,
    /// Remembered key -> its refusal number (tells a stale slot from a live one).
    live: KeyMap<u64>,
}

impl AdmissionBuild for SecondHit {
    type Params = SecondHitParams;
    fn build(p: &SecondHitParams, _: &BuildCtx) -> Self {
        SecondHit {
            ring: Vec::new(),
            window: p.window.max(1),
            seq: 0,
            live: KeyMap::default(),
        }
    }
    fn check(p: &SecondHitParams) -> Result<(), String> {
        if (1..=u32::MAX as u64).contains(&p.window) {
            Ok(())
        } else {
            Err(format!(
                "window: {} is out of range; allowed 1 to 4294967295 keys",
                p.window
            ))
        }
    }
}

impl Admission for SecondHit {
    #[inline]
    fn admit(&mut self, req: &Request, _: &AdmitCtx) -> bool {
        if self.live.remove(&req.key).is_some() {
            return true;
        }
        // Grown on demand: a large window costs memory only once it fills.
        let pos = (self.seq % self.window) as usize;
        if pos == self.ring.len() {
            self.ring.push(req.key);
        } else {
            let old = std::mem::replace(&mut self.ring[pos], req.key);
            let old_seq = self.seq - self.window;
            if self.live.get(&old) == Some(&old_seq) {
                self.live.remove(&old);
            }
        }
        self.live.insert(req.key, self.seq);
        self.seq += 1;
        false
    }
}

impl SecondHit {
    /// Keys remembered now (for tests).
    pub fn remembered(&self) -> usize {
        self.live.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(window: u64) -> SecondHit {
        SecondHit::build(&SecondHitParams { window }, &BuildCtx { seed: 0, tier: 0 })
    }

    fn offers(a: &mut SecondHit, keys: &[u64]) -> Vec<bool> {
        let ctx = AdmitCtx::default();
        keys.iter()
            .map(|&k| a.admit(&Request::read(k, 1), &ctx))
            .collect()
    }

    #[test]
    fn admits_exactly_the_second_reference() {
        let mut a = build(3);
        // 1 refused, 2 refused, 1 admitted (second), 1 refused again (a third
        // offer starts over: the key was forgotten when admitted).
        assert_eq!(
            offers(&mut a, &[1, 2, 1, 1, 1]),
            [false, false, true, false, true]
        );
    }

    #[test]
    fn the_window_counts_refusals() {
        let mut a = build(3);
        // Refusals 1, 2, 3 fill the window; 4 pushes 1 out.
        assert_eq!(offers(&mut a, &[1, 2, 3, 4]), [false; 4]);
        assert_eq!(offers(&mut a, &[1]), [false], "1 fell out of the window");
        // Its refusal pushed 2 out: remembered now 3, 4, 1.
        assert_eq!(offers(&mut a, &[3, 4]), [true, true]);
        assert_eq!(a.remembered(), 1, "only 1 left");
        assert_eq!(offers(&mut a, &[2, 1]), [false, true]);
    }

    #[test]
    fn stale_slots_do_not_forget_a_key_refused_again() {
        let mut a = build(2);
        // 1 refused (seq 0), admitted; refused again (seq 1); 2 refused (seq 2)
        // overwrites slot 0, whose key 1 is stale there and must stay live.
        assert_eq!(offers(&mut a, &[1, 1, 1, 2]), [false, true, false, false]);
        assert_eq!(offers(&mut a, &[1]), [true]);
    }

    #[test]
    fn memory_is_bounded_by_the_window() {
        let mut a = build(100);
        let keys: Vec<u64> = (0..10_000).collect();
        offers(&mut a, &keys);
        assert_eq!(a.remembered(), 100);
        assert_eq!(a.ring.len(), 100);
    }

    #[test]
    fn window_out_of_range_is_rejected() {
        assert!(SecondHit::check(&SecondHitParams { window: 0 }).is_err());
        assert!(SecondHit::check(&SecondHitParams { window: 1 << 32 }).is_err());
    }
}
