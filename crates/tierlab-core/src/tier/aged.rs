//! Dirty entries in the order they became dirty, with the time, and each
//! tier's dirty amount: what write-back by age (`flush_age`) and by a dirty
//! threshold (`dirty_threshold`) need (hierarchy/writeback.rs; docs/hierarchy.md).
//!
//! Linux 2.4 keeps dirty buffers on one list in the order they became dirty
//! (`__mark_dirty` stamps `b_flushtime = jiffies + age_buffer` and refiles
//! the buffer at the tail of `BUF_DIRTY`; fs/buffer.c), so its flush daemons
//! write from the head: kupdate the buffers whose time has come, bdflush the
//! oldest until the dirty share is back under `nfract`. A buffer already
//! dirty keeps its stamp when written again. The log below is that list: an
//! item is appended when an entry becomes dirty in a tier (not when a dirty
//! entry is written again), and an item stays behind, stale, when its entry
//! is cleaned, leaves the tier or the store; a sequence number per slot tells
//! the live item from stale ones, so nothing is searched when an entry
//! leaves.

use std::collections::VecDeque;

/// One entry becoming dirty in a tier.
#[derive(Clone, Copy, Debug)]
struct Dirtied {
    slot: u32,
    /// The slot's transition number then: the item is live while the slot's
    /// number is still this one.
    seq: u32,
    /// Simulated time (ns) it became dirty.
    at: f64,
}

/// Per tier of a store: the log of entries made dirty and the dirty amount.
#[derive(Clone, Debug, Default)]
struct Level {
    log: VecDeque<Dirtied>,
    /// The tier's dirty entries, in its charge units (bytes, or objects).
    dirty: u64,
    /// Above this, the hierarchy writes back the oldest (u64::MAX: never).
    limit: u64,
    /// The tier counts objects, not bytes.
    unit: bool,
    /// A threshold's write-back takes whole batches of this many entries
    /// (bdflush's `NRSYNC`, 32 buffers; 1: exactly down to the limit).
    batch: u64,
}

/// The aged dirty books of one store (`Store::track_aged`).
#[derive(Clone, Debug, Default)]
pub struct Aged {
    /// The simulated time now, as the hierarchy last set it (before each
    /// request): the time an entry made dirty is stamped with.
    pub(crate) now: f64,
    /// Per slot: the number of the slot's last transition to dirty.
    seq_of: Vec<u32>,
    next_seq: u32,
    levels: Vec<Level>,
    /// Some tier's dirty amount is above its limit.
    pub(crate) over: bool,
}

impl Aged {
    fn level(&mut self, level: usize) -> &mut Level {
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, || Level {
                limit: u64::MAX,
                ..Default::default()
            });
        }
        &mut self.levels[level]
    }

    /// Tier `level` writes back its oldest dirty entries past `limit`
    /// (charge units: objects when `unit`, else bytes), in whole batches of
    /// `batch` entries.
    pub(crate) fn set_limit(&mut self, level: usize, limit: u64, unit: bool, batch: u64) {
        let l = self.level(level);
        l.limit = limit;
        l.unit = unit;
        l.batch = batch.max(1);
    }

    /// The entry in `slot` (of `size` bytes) has become dirty in tier `level`.
    pub(super) fn dirtied(&mut self, level: usize, slot: u32, size: u32) {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        let s = slot as usize;
        if self.seq_of.len() <= s {
            self.seq_of.resize(s + 1, u32::MAX);
        }
        self.seq_of[s] = seq;
        let at = self.now;
        let l = self.level(level);
        l.dirty += if l.unit { 1 } else { size as u64 };
        l.log.push_back(Dirtied { slot, seq, at });
        if l.dirty > l.limit {
            self.over = true;
        }
    }

    /// A dirty entry of `size` bytes is no longer dirty in tier `level`
    /// (cleaned, moved out, dropped). Its log item goes stale.
    pub(super) fn cleaned(&mut self, level: usize, slot: u32, size: u32) {
        let l = self.level(level);
        l.dirty -= if l.unit { 1 } else { size as u64 };
        // A new transition number for the slot: its item is stale now.
        if let Some(q) = self.seq_of.get_mut(slot as usize) {
            *q = u32::MAX;
        }
    }

    /// Tier `level`'s dirty amount (charge units) and its limit.
    pub fn dirty(&self, level: usize) -> (u64, u64) {
        self.levels
            .get(level)
            .map_or((0, u64::MAX), |l| (l.dirty, l.limit))
    }

    /// Whether the item is its slot's live one.
    fn live(&self, d: &Dirtied) -> bool {
        self.seq_of.get(d.slot as usize) == Some(&d.seq)
    }

    /// The log of tier `level` is longer than `bound`: keeps its live
    /// items only, in order, so that it stays in proportion to the store.
    pub(super) fn compact(&mut self, level: usize, bound: usize) {
        if self.levels.get(level).is_none_or(|l| l.log.len() <= bound) {
            return;
        }
        let mut log = std::mem::take(&mut self.levels[level].log);
        log.retain(|d| self.live(d));
        self.levels[level].log = log;
    }

    /// Takes from the head of tier `level`'s log, oldest first, the live
    /// entries that became dirty at or before `cutoff` (kupdate:
    /// `sync_old_buffers` writes from the head while the head's flush time
    /// has come); with `amount`, instead, the oldest live entries until
    /// their charge (`charge` of a slot) reaches `amount`, in whole batches
    /// of the level's `batch` entries (bdflush: batches of the oldest until
    /// the dirty share is under the threshold). Their slots,
    /// oldest first; the caller cleans them (which makes their items stale).
    pub(super) fn take_oldest(
        &mut self,
        level: usize,
        cutoff: f64,
        amount: Option<u64>,
        charge: impl Fn(u32) -> u64,
    ) -> Vec<u32> {
        let mut out = Vec::new();
        let Some(l) = self.levels.get_mut(level) else {
            return out;
        };
        let (unit, batch) = (l.unit, l.batch.max(1));
        let mut log = std::mem::take(&mut l.log);
        let mut got = 0u64;
        while let Some(d) = log.front().copied() {
            match amount {
                Some(a) if got >= a && (out.len() as u64).is_multiple_of(batch) => break,
                None if d.at > cutoff => break,
                _ => {}
            }
            log.pop_front();
            if self.live(&d) {
                out.push(d.slot);
                got += if unit { 1 } else { charge(d.slot) };
            }
        }
        self.levels[level].log = log;
        out
    }

    /// The slots of tier `level`'s live items, oldest first (checks).
    pub fn live_slots(&self, level: usize) -> Vec<u32> {
        self.levels.get(level).map_or_else(Vec::new, |l| {
            l.log
                .iter()
                .filter(|d| self.live(d))
                .map(|d| d.slot)
                .collect()
        })
    }

    /// When tier `level`'s oldest dirty entry became dirty (checks).
    pub fn oldest(&self, level: usize) -> Option<f64> {
        self.levels
            .get(level)?
            .log
            .iter()
            .filter(|d| self.live(d))
            .map(|d| d.at)
            .reduce(f64::min)
    }
}
