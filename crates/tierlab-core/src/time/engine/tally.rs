//! The engine's tallies: per-request accumulators since the end of the
//! warm-up (latency, waits, service, histograms, per-station and
//! per-client sums), read by time/result.rs.

/// Slots of `Tally::pending` (a power of two).
const PENDING: usize = 32;

/// Per-request accumulators since the end of the warm-up.
#[derive(Clone, Debug)]
pub struct Tally {
    pub completed: u64,
    pub bytes: u64,
    pub latency_sum: u128,
    pub wait_sum: u128,
    pub service_sum: u128,
    pub stack_sum: u128,
    /// Per station: the counted requests' waits and services there.
    pub station_wait: Vec<u128>,
    pub station_service: Vec<u128>,
    pub hist: hdrhistogram::Histogram<u64>,
    /// Latencies not yet in `hist`, as (latency, count) in a small table
    /// by latency: a run repeats a few latencies (a hit at each tier that
    /// waited nowhere), each recorded once per eviction from the table
    /// rather than once per request. `histogram` gives the whole histogram
    /// (the same: an HDR histogram's counts do not depend on the order of
    /// its records).
    pending: Box<[(u64, u64); PENDING]>,
    /// Time integral of requests in the system (ns x requests).
    pub in_system_area: u128,
    pub background_ops: u64,
    pub blocked_writes: u64,
    /// Per client: (requests, latency sum).
    pub clients: Vec<(u64, u128)>,
}

impl Tally {
    pub(super) fn new(stations: usize, clients: usize) -> Self {
        Tally {
            completed: 0,
            bytes: 0,
            latency_sum: 0,
            wait_sum: 0,
            service_sum: 0,
            stack_sum: 0,
            station_wait: vec![0; stations],
            station_service: vec![0; stations],
            // 1 ns to about 5 simulated days at 3 significant digits.
            hist: hdrhistogram::Histogram::new_with_bounds(1, 1 << 58, 3)
                .expect("valid histogram bounds"),
            pending: Box::new([(0, 0); PENDING]),
            in_system_area: 0,
            background_ops: 0,
            blocked_writes: 0,
            clients: vec![(0, 0); clients],
        }
    }

    /// Records one latency (ns, at least 1).
    #[inline]
    pub(super) fn record(&mut self, v: u64) {
        let slot =
            (v.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - PENDING.trailing_zeros())) as usize;
        let p = &mut self.pending[slot];
        if p.0 == v {
            p.1 += 1;
            return;
        }
        if p.1 > 0 {
            self.hist.saturating_record_n(p.0, p.1);
        }
        *p = (v, 1);
    }

    /// Every latency recorded so far.
    pub fn histogram(&self) -> std::borrow::Cow<'_, hdrhistogram::Histogram<u64>> {
        if self.pending.iter().all(|p| p.1 == 0) {
            return std::borrow::Cow::Borrowed(&self.hist);
        }
        let mut h = self.hist.clone();
        for &(v, n) in self.pending.iter().filter(|p| p.1 > 0) {
            h.saturating_record_n(v, n);
        }
        std::borrow::Cow::Owned(h)
    }
}
