//! Next-access times for sources that have none (CSV files, generators), so
//! that Belady can run on them: one pre-pass over the keys, then the
//! requests stream again with `next_access` filled in. The times follow
//! libCacheSim's oracleGeneral converter: the 1-based position of the key's
//! next request, -1 when there is none.

use super::{TraceError, TraceSource};
use crate::hash::KeyMap;
use crate::request::Request;
use crate::source::setup::{pass, Progress};
use crate::source::Source;

/// Next-access times of a whole source, in request order. Memory: 8 bytes
/// per request for the result, plus 8 per request for the keys while it
/// runs. `progress` sees the requests read and returns false to stop.
pub fn next_access_times(source: &Source, progress: impl Progress) -> Result<Vec<i64>, TraceError> {
    let mut keys: Vec<u64> = Vec::new();
    pass(source, progress, |batch| {
        keys.extend(batch.iter().map(|r| r.key));
        Ok::<(), TraceError>(())
    })?;
    let mut next = vec![-1i64; keys.len()];
    let mut last: KeyMap<u64> = Default::default();
    for (i, k) in keys.iter().enumerate().rev() {
        if let Some(j) = last.insert(*k, i as u64) {
            next[i] = j as i64 + 1;
        }
    }
    Ok(next)
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
