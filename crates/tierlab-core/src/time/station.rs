//! A service station: `servers` identical servers (a device's channels, the
//! CPU's cores; unlimited for a pure delay) in front of one queue with
//! three classes served in order, each first come, first served, without
//! preemption: 0 reads that go first (`reads_first`), 1 everything else, 2
//! lazy write-backs (served only when nothing else waits).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub const UNLIMITED: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct StationStats {
    /// Sum of service times (ns) of the operations served.
    pub busy_ns: u128,
    /// Time integral of the number waiting (ns x operations).
    pub queue_area: u128,
    /// Operations started, and of those, how long they waited in all.
    pub ops: u64,
    pub wait_ns: u128,
}

#[derive(Clone, Debug)]
pub struct Station {
    pub name: String,
    pub servers: u32,
    pub busy: u32,
    queues: [VecDeque<(u32, u64)>; 3],
    waiting: u32,
    last: u64,
    pub stats: StationStats,
    /// One class, first come, first served (no `reads_first`, no lazy
    /// write-backs): the station keeps when each server is next free, and an
    /// arrival takes the earliest (Lindley's recursion). Arrivals come in
    /// time order (the engine's events), so this is the FCFS queue exactly,
    /// without queueing the job or an event for its departure.
    fcfs: bool,
    /// When each server used so far is next free, earliest on top. A server
    /// never used is free since time 0, so it joins only when an arrival
    /// takes it: memory and time per arrival follow the servers in use, not
    /// the servers configured (a million channels cost no more than the
    /// operations that overlap).
    free_at: BinaryHeap<Reverse<u64>>,
}

impl Station {
    pub fn new(name: impl Into<String>, servers: u32) -> Self {
        Station {
            name: name.into(),
            servers,
            busy: 0,
            queues: Default::default(),
            waiting: 0,
            last: 0,
            stats: StationStats::default(),
            fcfs: false,
            free_at: BinaryHeap::new(),
        }
    }

    /// A station of one class: see `fcfs`.
    pub fn first_come_first_served(mut self) -> Self {
        if !self.unlimited() {
            self.fcfs = true;
            self.free_at = BinaryHeap::new();
        }
        self
    }

    pub fn is_fcfs(&self) -> bool {
        self.fcfs
    }

    /// An arrival at `now` wanting `service` at an FCFS station: when its
    /// service ends, and how long it waits first. The waits' sum is the
    /// integral of the queue length (each waiting operation adds its wait).
    #[inline]
    pub fn start_fcfs(&mut self, now: u64, service: u64) -> (u64, u64) {
        // An unused server is free since 0: the earliest of all.
        let unused = (self.free_at.len() as u64) < self.servers as u64;
        let free = if unused {
            0
        } else {
            self.free_at.peek().map_or(0, |f| f.0)
        };
        let start = now.max(free);
        let end = start + service;
        if unused {
            self.free_at.push(Reverse(end));
        } else if let Some(mut f) = self.free_at.peek_mut() {
            f.0 = end;
        }
        let wait = start - now;
        self.stats.busy_ns += service as u128;
        self.stats.ops += 1;
        self.stats.wait_ns += wait as u128;
        self.stats.queue_area += wait as u128;
        (end, wait)
    }

    pub fn unlimited(&self) -> bool {
        self.servers == UNLIMITED
    }

    /// Brings the queue-length integral up to `now`.
    #[inline]
    fn advance(&mut self, now: u64) {
        if self.waiting > 0 {
            self.stats.queue_area += self.waiting as u128 * (now - self.last) as u128;
        }
        self.last = now;
    }

    /// Job `job` arrives at `now` wanting `service` ns in class `class`:
    /// true if a server takes it at once (the caller schedules its end),
    /// false if it waits.
    #[inline]
    pub fn arrive(&mut self, now: u64, job: u32, class: usize, service: u64) -> bool {
        if self.busy < self.servers {
            if !self.unlimited() {
                self.busy += 1;
            }
            self.stats.busy_ns += service as u128;
            self.stats.ops += 1;
            return true;
        }
        self.advance(now);
        self.waiting += 1;
        self.queues[class].push_back((job, now));
        false
    }

    /// A server finished at `now`: the next waiting job, if any, starts on
    /// it; returns it with the time it waited. `service_of` gives a job's
    /// service time for the busy-time sum.
    #[inline]
    pub fn depart(&mut self, now: u64, service_of: impl Fn(u32) -> u64) -> Option<(u32, u64)> {
        if self.unlimited() {
            return None;
        }
        if self.waiting == 0 {
            self.busy -= 1;
            return None;
        }
        self.advance(now);
        let q = self.queues.iter_mut().find(|q| !q.is_empty())?;
        let (job, since) = q.pop_front()?;
        self.waiting -= 1;
        let waited = now - since;
        self.stats.busy_ns += service_of(job) as u128;
        self.stats.ops += 1;
        self.stats.wait_ns += waited as u128;
        Some((job, waited))
    }

    /// Whether any operation waits in a class ahead of `class`, or one of it.
    pub fn waiting(&self) -> u32 {
        self.waiting
    }

    /// Starts the statistics over at `now` (the end of the warm-up).
    pub fn reset_stats(&mut self, now: u64) {
        self.advance(now);
        self.stats = StationStats::default();
    }

    /// The queue-length integral brought up to `now`.
    pub fn finish(&mut self, now: u64) {
        self.advance(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_served_in_order() {
        let mut s = Station::new("d", 1);
        assert!(s.arrive(0, 1, 1, 10));
        assert!(!s.arrive(1, 2, 2, 10));
        assert!(!s.arrive(2, 3, 1, 10));
        assert!(!s.arrive(3, 4, 0, 10));
        let order: Vec<u32> = (0..3)
            .map(|i| s.depart(10 + i, |_| 10).unwrap().0)
            .collect();
        assert_eq!(order, vec![4, 3, 2]);
        assert!(s.depart(20, |_| 10).is_none());
        assert_eq!(s.busy, 0);
        // Waits: 4 from 3 to 10, 3 from 2 to 11, 2 from 1 to 12.
        assert_eq!(s.stats.wait_ns, 7 + 9 + 11);
        assert_eq!(s.stats.queue_area, 7 + 9 + 11);
    }

    #[test]
    fn fcfs_takes_the_earliest_free_server_and_grows_only_as_used() {
        // Lindley's recursion over every server, as the station once kept
        // it, against the heap of the servers used.
        let mut s = Station::new("d", 3).first_come_first_served();
        let mut free = [0u64; 3];
        let mut x = 12345u64;
        for i in 0..2000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (now, service) = (i * 7, (x >> 33) % 40);
            let k = (0..3).min_by_key(|&k| free[k]).unwrap();
            let start = now.max(free[k]);
            free[k] = start + service;
            assert_eq!(s.start_fcfs(now, service), (start + service, start - now));
        }
        let mut big = Station::new("d", UNLIMITED - 1).first_come_first_served();
        for i in 0..100 {
            assert_eq!(big.start_fcfs(i, 1000), (i + 1000, 0));
        }
        assert_eq!(big.free_at.len(), 100);
    }

    #[test]
    fn unlimited_servers_never_queue() {
        let mut s = Station::new("cpu", UNLIMITED);
        for j in 0..1000 {
            assert!(s.arrive(0, j, 1, 5));
        }
        assert_eq!(s.stats.busy_ns, 5000);
        assert!(s.depart(5, |_| 5).is_none());
    }
}
