//! Next-access times for sources that have none (CSV files, generators), so
//! that Belady can run on them: one pre-pass over the keys, then the
//! requests stream again with `next_access` filled in. The times follow
//! libCacheSim's oracleGeneral converter: the 1-based position of the key's
//! next request, -1 when there is none.

use super::limits::{prepass_budget, PREPASS_VAR};
use super::{TraceError, TraceSource};
use crate::hash::KeyMap;
use crate::request::Request;
use crate::source::setup::{Batches, Progress, Room, MEMORY_HINT, NOT_ALLOCATED};
use crate::source::Source;

/// Next-access times of a whole source, in request order. Memory: 8 bytes
/// per request for the result, plus 8 per request for the keys while it
/// runs. `progress` sees the requests read and returns false to stop.
pub fn next_access_times(source: &Source, progress: impl Progress) -> Result<Vec<i64>, TraceError> {
    Ok(next_access_times_upto(source, u64::MAX, progress)?.0)
}

/// Next-access times of a source's first `limit` requests (a run's
/// `max_requests`), exact: a request whose next access comes after the
/// limit gets it, by reading on while any key of the first `limit` still
/// waits for one, keeping only those keys. Memory follows `limit`, not the
/// source (a 20,000-request run of a long generator holds 20,000 times).
/// Also returns the requests read, for progress. `progress` sees the
/// requests read after each batch and returns false to stop.
pub fn next_access_times_upto(
    source: &Source,
    limit: u64,
    mut progress: impl Progress,
) -> Result<(Vec<i64>, u64), TraceError> {
    let mut b = Batches::open(source)?;
    let mut keys: Vec<u64> = Vec::new();
    let mut next: Vec<i64> = Vec::new();
    // What the pass will hold, said before it starts when the source
    // knows its length: 16 bytes a request (the key now, the time after).
    if let Some(n) = b.len_hint().map(|n| n.min(limit)) {
        reserve(&mut keys, n as usize, source, 16)?;
        reserve(&mut next, n as usize, source, 0)?;
    }
    // Keys of the window still waiting for their next access, with the
    // index of their last request in it; None until the window is read.
    let mut waiting: Option<KeyMap<usize>> = None;
    let mut pos: u64 = 0;
    'read: while let Some(batch) = b.next_batch()? {
        // A source of unknown length: the keys grow as a Vec would
        // (doubling), without an abort.
        if pos < limit && keys.capacity() - keys.len() < batch.len() {
            let more = keys.len().max(batch.len());
            reserve(&mut keys, more, source, 16)?;
        }
        for r in batch {
            if pos < limit {
                keys.push(r.key);
            } else {
                if waiting.is_none() {
                    waiting = Some(resolve(&keys, &mut next, source)?);
                }
                let w = waiting.as_mut().expect("resolved");
                if let Some(i) = w.remove(&r.key) {
                    next[i] = pos as i64 + 1;
                }
                if w.is_empty() {
                    pos += 1;
                    break 'read;
                }
            }
            pos += 1;
        }
        if !progress(pos) {
            return Err(TraceError::Interrupted);
        }
    }
    if pos == 0 {
        b.check_empty()?;
    }
    if waiting.is_none() {
        resolve(&keys, &mut next, source)?;
    }
    Ok((next, pos))
}

/// Room for `more` elements in `v` (all of them up front when the
/// source's length is known), or [`TraceError::Memory`] naming the pass,
/// `source` and what it asks: `per` bytes a request in all (0: `v`'s own
/// element), checked against the pre-pass budget before it is allocated.
fn reserve<T>(v: &mut Vec<T>, more: usize, source: &Source, per: u64) -> Result<(), TraceError> {
    let n = (v.len() + more) as u64;
    let per = if per == 0 {
        std::mem::size_of::<T>() as u64
    } else {
        per
    };
    let bytes = n.saturating_mul(per);
    let err = |why: String| TraceError::Memory {
        what: format!(
            "Belady's next-access pre-pass over {n} requests of {} ({per} bytes a request)",
            crate::source::tools::name(source)
        ),
        bytes,
        why,
        hint: format!("{MEMORY_HINT}; {PREPASS_VAR}=SIZE sets what a pre-pass may hold"),
    };
    let budget = prepass_budget().map_err(&err)?;
    if let Some((limit, from)) = budget {
        if bytes > limit {
            return Err(err(format!("more than the {from}")));
        }
    }
    v.try_reserve_exact(more)
        .map_err(|_| err(NOT_ALLOCATED.into()))
}

/// The next-access times within `keys` into `next`; returns the keys
/// whose last request in `keys` has no next one there, with its index.
fn resolve(
    keys: &[u64],
    next: &mut Vec<i64>,
    source: &Source,
) -> Result<KeyMap<usize>, TraceError> {
    next.clear();
    reserve(next, keys.len(), source, 0)?;
    next.resize(keys.len(), -1);
    let mut last: KeyMap<u64> = Default::default();
    let mut waiting: KeyMap<usize> = Default::default();
    let what = |n: usize| {
        format!(
            "Belady's next-access pre-pass: the last request of each of {n} distinct keys of {}",
            crate::source::tools::name(source)
        )
    };
    for (i, k) in keys.iter().enumerate().rev() {
        last.room_for_one(what)?;
        match last.insert(*k, i as u64) {
            Some(j) => next[i] = j as i64 + 1,
            None => {
                waiting.room_for_one(what)?;
                waiting.insert(*k, i);
            }
        }
    }
    Ok(waiting)
}

/// A source whose requests carry the next-access times computed beforehand
/// from another stream of the same requests.
pub struct WithNextAccess {
    inner: Box<dyn TraceSource>,
    next: Vec<i64>,
    pos: usize,
}

impl WithNextAccess {
    /// `next`: the times of the source `inner` streams afresh, from
    /// [`next_access_times`].
    pub fn new(next: Vec<i64>, inner: Box<dyn TraceSource>) -> Self {
        WithNextAccess {
            inner,
            next,
            pos: 0,
        }
    }
}

impl TraceSource for WithNextAccess {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let n = self.inner.next_batch(out, max)?;
        for r in out.iter_mut() {
            // A source that grew between the passes gets "never" past the end.
            r.next_access = self.next.get(self.pos).copied().unwrap_or(-1);
            self.pos += 1;
        }
        Ok(n)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.next.len() as u64)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
}
