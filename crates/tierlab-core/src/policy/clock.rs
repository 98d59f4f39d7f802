//! CLOCK (second chance; Corbató 1968), in its FIFO-with-reinsertion form.
//!
//! Each entry has a small reference counter (`bits` wide, 1 by default, the
//! classic reference bit), zero on insertion and raised by one per hit up to
//! its maximum. The hand looks at the oldest entry: a non-zero counter is
//! decremented and the entry goes back to the head; a zero counter is evicted.
//! With `bits = 1` this is the second-chance algorithm S5 uses for page
//! replacement, and the same as libCacheSim's Clock with its defaults.

use super::{BuildCtx, Policy, PolicyBuild, SlotList};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ClockParams {
    /// Width of the reference counter, 1..=8 bits.
    pub bits: u8,
}

impl Default for ClockParams {
    fn default() -> Self {
        ClockParams { bits: 1 }
    }
}

pub struct Clock {
    list: SlotList,
    freq: Vec<u8>,
    max: u8,
}

impl PolicyBuild for Clock {
    type Params = ClockParams;
    fn build(p: &ClockParams, _: &BuildCtx) -> Self {
        // `check` rejects bits outside 1..=8 at load; clamp as a second guard.
        let bits = p.bits.clamp(1, 8) as u32;
        Clock {
            list: SlotList::new(),
            freq: Vec::new(),
            max: ((1u32 << bits) - 1) as u8,
        }
    }
    fn check(p: &ClockParams) -> Result<(), String> {
        if (1..=8).contains(&p.bits) {
            Ok(())
        } else {
            Err(format!("bits: {} is out of range; allowed 1..=8", p.bits))
        }
    }
}

impl Policy for Clock {
    #[inline(always)]
    fn on_insert(&mut self, slot: u32, _: &Request) {
        let s = slot as usize;
        if s >= self.freq.len() {
            self.freq
                .resize((s + 1).max(self.freq.len() * 2).max(64), 0);
        }
        self.freq[s] = 0;
        self.list.push_front(slot);
    }
    #[inline(always)]
    fn on_hit(&mut self, slot: u32, _: &Request) {
        let f = &mut self.freq[slot as usize];
        if *f < self.max {
            *f += 1;
        }
    }
    /// The counter rises by one per hit up to its maximum.
    #[inline(always)]
    fn on_hits(&mut self, slot: u32, _: &Request, n: u64) {
        let f = &mut self.freq[slot as usize];
        *f = (*f as u64).saturating_add(n).min(self.max as u64) as u8;
    }
    #[inline(always)]
    fn on_remove(&mut self, slot: u32) {
        self.list.unlink(slot);
    }
    #[inline(always)]
    fn evict(&mut self) -> u32 {
        loop {
            let t = self
                .list
                .back()
                .expect("evict is called only on a non-empty tier");
            let f = &mut self.freq[t as usize];
            if *f == 0 {
                self.list.unlink(t);
                return t;
            }
            *f -= 1;
            self.list.move_to_front(t);
        }
    }
    #[inline(always)]
    fn prefetch(&self, slot: u32) {
        crate::index::prefetch(self.freq.as_ptr().wrapping_add(slot as usize));
        self.list.prefetch(slot);
    }
    #[inline(always)]
    fn victim_hint(&self, ahead: usize) -> Option<u32> {
        let slot = self.list.back_nth(ahead)?;
        self.list.prefetch(slot);
        Some(slot)
    }
}
