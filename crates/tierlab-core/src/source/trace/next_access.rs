//! Next-access times for sources that have none (CSV files, generators), so
//! that Belady can run on them: one pre-pass over the keys, then the
//! requests stream again with `next_access` filled in. The times follow
//! libCacheSim's oracleGeneral converter: the 1-based position of the key's
//! next request, -1 when there is none.

use super::{TraceError, TraceSource};
use crate::hash::KeyMap;
use crate::request::Request;
use crate::source::setup::{Batches, Progress};
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
    // Keys of the window still waiting for their next access, with the
    // index of their last request in it; None until the window is read.
    let mut waiting: Option<KeyMap<usize>> = None;
    let mut pos: u64 = 0;
    'read: while let Some(batch) = b.next_batch()? {
        for r in batch {
            if pos < limit {
                keys.push(r.key);
            } else {
                let w = waiting.get_or_insert_with(|| resolve(&keys, &mut next));
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
        resolve(&keys, &mut next);
    }
    Ok((next, pos))
}

/// The next-access times within `keys` into `next`; returns the keys
/// whose last request in `keys` has no next one there, with its index.
fn resolve(keys: &[u64], next: &mut Vec<i64>) -> KeyMap<usize> {
    next.clear();
    next.resize(keys.len(), -1);
    let mut last: KeyMap<u64> = Default::default();
    let mut waiting: KeyMap<usize> = Default::default();
    for (i, k) in keys.iter().enumerate().rev() {
        match last.insert(*k, i as u64) {
            Some(j) => next[i] = j as i64 + 1,
            None => {
                waiting.insert(*k, i);
            }
        }
    }
    waiting
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
