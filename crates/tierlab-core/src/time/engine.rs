//! The event engine: when each request and each device operation completes.
//!
//! A request is issued (by a closed-loop client, an open arrival, or the
//! one serial client) and at that moment runs through the hierarchy, which
//! decides what is hit, moved and written and notes the device operations
//! (hierarchy/ops.rs). The request then visits, in order: the network link
//! (its bytes), the CPU station (its CPU demand plus its software-stack
//! time) and one device per operation, in the order the hierarchy charged
//! them. Each station has servers and a queue (station.rs). Background
//! operations (periodic flushes, lazy write-backs) occupy devices but no
//! request waits for them, except a writer whose lazy buffer is full.
//!
//! Times are whole nanoseconds (u64): service times are the hierarchy's
//! whole-ns charges (cost.rs) or draws around them, rounded; events at equal
//! times are taken in the order they were scheduled, so a seed fixes the run.

use super::config::{Delay, Service};
use super::disk::{Disk, Pending};
use super::station::{Station, UNLIMITED};
use crate::hierarchy::ops::{DevOp, OpKind};
use crate::hierarchy::Hierarchy;
use crate::request::Request;
use crate::rng::Rng;
use hashbrown::HashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A time model's parts, resolved from the config (run/assembly.rs builds it).
pub struct Model {
    pub load: Load,
    pub cpus: Option<u32>,
    pub cpu: Option<Delay>,
    /// ns per byte on the link (0: no link).
    pub link_ns_per_byte: f64,
    pub devices: Vec<DeviceModel>,
    pub stack: StackModel,
    pub seed: u64,
    /// The backing store positions like a disk (disk.rs); none: its
    /// charges are its service times.
    pub disk: Option<super::disk::Disk>,
}

#[derive(Clone, Debug)]
pub enum Load {
    /// `clients` clients (1: serial), each thinking `think` between its
    /// response and its next request; by pid: one client per pid.
    Closed {
        clients: u32,
        think: Option<Delay>,
        by_pid: bool,
    },
    /// Arrivals at the trace's times (None) or Poisson at a rate per second.
    Open { rate: Option<f64> },
}

#[derive(Clone, Debug)]
pub struct DeviceModel {
    pub name: String,
    pub channels: u32,
    pub service: Service,
    pub reads_first: bool,
    pub read_while_write: bool,
    /// Lazy write-back buffer in bytes.
    pub lazy: Option<u64>,
    /// The software overhead inside each charge (whole ns): stack time.
    pub overhead: f64,
    /// Stack time per operation (block layer), and per byte moved.
    pub per_op_ns: f64,
    pub per_byte_ns: f64,
    /// Stack time per insertion (a write into a tier) and per byte of it.
    pub insert_ns: f64,
    pub insert_per_byte_ns: f64,
    /// A tier of a medium that erases: the time of one erase-block erase
    /// (the catalog's `erase_ns`, whole ns) and the bytes one erase clears
    /// (`erase_block_bytes`; a flashcache tier counts its own erases).
    pub erase: Option<(u64, Option<u64>)>,
    /// A tier with an FTL: the time of one GC copy (a page read and a
    /// page program), charged with its erases.
    pub copy_ns: u64,
}

/// Software-stack costs charged per request (system call, lookup).
#[derive(Clone, Debug, Default)]
pub struct StackModel {
    pub per_request_ns: f64,
}

/// Where each device's operations queue: `read` and `write` stations
/// (one, unless the medium reads while it writes).
#[derive(Clone, Debug)]
struct Dev {
    read: u16,
    write: u16,
    exponential: bool,
    reads_first: bool,
    overhead: f64,
    per_op_ns: f64,
    per_byte_ns: f64,
    insert_ns: f64,
    insert_per_byte_ns: f64,
    lazy: Option<Lazy>,
}

#[derive(Clone, Debug)]
struct Lazy {
    capacity: u64,
    used: u64,
    /// Requests blocked on a full buffer: (job, bytes, op service).
    blocked: VecDeque<(u32, u32, u64)>,
}

/// A tier whose erases take device time: its erases seen so far.
#[derive(Clone, Debug)]
struct Erasing {
    dev: usize,
    ns: u64,
    block_bytes: Option<u64>,
    seen: u64,
    /// While a tier that counts erases by bytes programmed has programmed
    /// `lo..hi` bytes, its count is still `seen` (no division per request).
    lo: u64,
    hi: u64,
    /// An FTL's copies: their time each, and those seen so far.
    copy_ns: u64,
    copies_seen: u64,
}

impl Erasing {
    /// The tier's count is now `count`.
    fn see(&mut self, count: u64) {
        self.seen = count;
        if let Some(b) = self.block_bytes {
            // Saturated: an empty range, and the exact count every time.
            self.lo = count.saturating_mul(b);
            self.hi = self.lo.saturating_add(b);
        }
    }

    /// Whether `erases_of(h, self)` is still `seen`, without its division.
    #[inline]
    fn unchanged(&self, h: &Hierarchy) -> bool {
        match h.dev_flash_erases(self.dev) {
            Some(c) => c == self.seen,
            None => match self.block_bytes {
                Some(_) => (self.lo..self.hi).contains(&h.dev_bytes_in(self.dev)),
                None => self.seen == 0,
            },
        }
    }
}

/// The erases tier `e.dev` has made so far, as the wear figures count them.
#[inline]
fn erases_of(h: &Hierarchy, e: &Erasing) -> u64 {
    let (erases, bytes_in) = (h.dev_flash_erases(e.dev), h.dev_bytes_in(e.dev));
    crate::device::wear::erases_so_far(erases, bytes_in, e.block_bytes).unwrap_or(0)
}

/// One stage of a job: `service` ns at station `station` in queue class `class`.
#[derive(Clone, Copy, Debug)]
struct Stage {
    station: u16,
    class: u8,
    /// `LAZY`: a write into a lazy buffer (dev in `station`), not a visit.
    lazy: bool,
    bytes: u32,
    service: u64,
}

#[derive(Clone, Debug, Default)]
struct Job {
    /// Client index, or `BACKGROUND`.
    client: u32,
    issued: u64,
    size: u32,
    counted: bool,
    stages: Vec<Stage>,
    at: usize,
    wait: u64,
    service: u64,
    stack: u64,
}

/// The service time of `op` at device `d`: its charge less the software
/// overhead counted as stack time, or an exponential draw with that mean.
/// (A positioning disk's are set afterwards: `position`.)
#[inline]
fn service_of(d: &Dev, op: &DevOp, rng: &mut Rng) -> u64 {
    let mean = (op.ns - d.overhead).max(0.0);
    if d.exponential {
        exp_draw(rng, mean)
    } else {
        crate::cost::whole_u64(mean)
    }
}

/// The positioning disk's service times for a request's operations on it
/// (device `dev`, `d`): first the write-backs of its flush, as Linux 2.4's
/// elevator issues them (disk.rs: sorted by block, adjacent ones merged),
/// queued as background operations ahead of the request's own (which reach
/// the disk after them); then the request's own, whose stages start at
/// `first` in the order of its operations.
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn position(
    disk: &mut Disk,
    ops: &[DevOp],
    dev: usize,
    d: &Dev,
    stages: &mut [Stage],
    first: usize,
    batch: &mut Vec<Pending>,
    background_ops: &mut Vec<(u16, u64, u32, u64)>,
) {
    for op in ops {
        if op.background && op.dev as usize == dev {
            batch.push(Pending {
                block: disk.block_of(op.key),
                blocks: disk.blocks_of(op.bytes as u64),
                bytes: op.bytes as u64,
                copy: crate::cost::whole_u64(op.bytes as f64 * d.per_byte_ns),
            });
        }
    }
    if !batch.is_empty() {
        let station = d.write;
        disk.elevator(batch, |service, bytes, copy| {
            background_ops.push((station, service, bytes as u32, copy));
        });
    }
    for (at, op) in (first..).zip(ops.iter().filter(|op| !op.background)) {
        if op.dev as usize == dev {
            stages[at].service = disk.access_key(op.key, op.bytes, op.kind != OpKind::Read);
        }
    }
}

/// An exponential draw of mean `mean`, rounded to whole ns.
#[inline]
fn exp_draw(rng: &mut Rng, mean: f64) -> u64 {
    // 1 - U is in (0, 1]: its log is finite.
    let u = 1.0 - rng.next_f64();
    crate::cost::whole_u64(-mean * u.ln())
}

const BACKGROUND: u32 = u32::MAX;
const ISSUE: u32 = 1 << 31;
const ARRIVAL: u32 = u32::MAX;
/// No job to enter now (`issue` scheduled it, or no request was issued).
const NO_JOB: u32 = u32::MAX;

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
    fn new(stations: usize, clients: usize) -> Self {
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
    fn record(&mut self, v: u64) {
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

pub struct Engine {
    load: Load,
    think: Option<Delay>,
    cpu_demand: Option<Delay>,
    cpu_station: Option<u16>,
    link_station: Option<u16>,
    link_ns_per_byte: f64,
    pub stations: Vec<Station>,
    devs: Vec<Dev>,
    /// Tiers whose erases are device operations (none: no cost).
    erasing: Vec<Erasing>,
    /// The positioning disk (the last device), and the write-backs a
    /// request's flush sends it, gathered for the elevator (a reused
    /// buffer).
    disk: Option<Box<Disk>>,
    disk_batch: Vec<Pending>,
    /// Erases a request caused: (stage index or `usize::MAX` for
    /// background, station, class, service), a reused buffer.
    erase_stages: Vec<(usize, u16, u8, u64)>,
    stack: StackModel,
    rng: Rng,
    pub now: u64,
    seq: u64,
    /// Events, earliest first: (time << 64) | (sequence << 32) | tag, one
    /// integer to compare (the sequence, mod 2^32, orders events of equal
    /// time as they were scheduled).
    heap: BinaryHeap<Reverse<u128>>,
    /// A request's background operations (station, service, bytes, copy
    /// time on the CPU), kept between its op loop and their start (a reused
    /// buffer).
    background_ops: Vec<(u16, u64, u32, u64)>,
    /// The earliest event, when it was scheduled earlier than every event
    /// in `heap` (a key smaller than the heap's least): kept out of the
    /// heap, so that the common case, a stage that ends before anything
    /// queued (a hit while the other clients wait on slower devices), costs
    /// no heap push and pop. Together with `heap` it is the same queue.
    front: Option<u128>,
    /// No software-stack cost anywhere: `issue` skips adding zeros.
    stackless: bool,
    /// A stage whose end comes before every queued event is taken at once,
    /// without an event (`enter`): a closed load, where nothing but the
    /// queued events can happen meanwhile. Not an open load, whose next
    /// arrival is read only when the engine asks for it.
    inline: bool,
    /// Nested issues within one event (`complete` issues the client's next
    /// request at once): bounded, past it an event is scheduled.
    depth: u32,
    jobs: Vec<Job>,
    free: Vec<u32>,
    /// By pid: each client's requests not yet issued, and pid -> client.
    queues: Vec<VecDeque<Request>>,
    /// In order: the requests read and not yet issued are `order[order_at..]`
    /// (a cursor over a plain buffer, refilled a batch at a time).
    order: Vec<Request>,
    order_at: usize,
    pids: HashMap<u32, u32>,
    pub client_pids: Vec<u32>,
    /// Clients ready to issue but with no request (pid mode: waiting for
    /// the trace to reach one of theirs).
    idle: Vec<bool>,
    /// Open: the next arrival read ahead, and the trace time of the first.
    next_arrival: Option<Request>,
    trace_t0: Option<u64>,
    last_arrival: u64,
    in_system: u64,
    last_area: u64,
    pub issued: u64,
    /// Requests counted from here (the end of the warm-up).
    pub counting_from: u64,
    pub start_ns: u64,
    pub tally: Tally,
    source_done: bool,
    /// Warm-up: counting starts at this request (0: at once) or at this
    /// simulated time; `warmed` says it has started, `warm_event` that it
    /// has just started (the driver restarts its timeline).
    pub warmup_requests: u64,
    pub warmup_ns: Option<u64>,
    pub warmed: bool,
    pub warm_event: bool,
    /// A warm-up is configured: nothing counts until `warmed`.
    pub warmup_pending: bool,
}

impl Engine {
    pub fn new(m: Model) -> Self {
        let mut stations = Vec::new();
        // Stations of one class are FCFS by Lindley's recursion
        // (station.rs); `reads_first` and lazy write-backs need the queue.
        let mut add_as = |name: String, servers: u32, fcfs: bool| {
            let s = Station::new(name, servers);
            stations.push(if fcfs { s.first_come_first_served() } else { s });
            (stations.len() - 1) as u16
        };
        let cpu_station = match (m.cpus, m.cpu.is_some() || m.stack.per_request_ns > 0.0) {
            (Some(c), _) => Some(add_as("cpu".into(), c, true)),
            (None, true) => Some(add_as("cpu".into(), UNLIMITED, true)),
            (None, false) => None,
        };
        let link_station = (m.link_ns_per_byte > 0.0).then(|| add_as("link".into(), 1, true));
        let mut devs = Vec::new();
        let mut erasing = Vec::new();
        for (i, d) in m.devices.iter().enumerate() {
            if let Some((ns, block_bytes)) = d.erase {
                erasing.push(Erasing {
                    dev: i,
                    ns,
                    block_bytes,
                    seen: 0,
                    lo: 0,
                    hi: 0,
                    copy_ns: d.copy_ns,
                    copies_seen: 0,
                });
                erasing.last_mut().expect("just pushed").see(0);
            }
            let fcfs = !d.reads_first && d.lazy.is_none();
            let read = add_as(d.name.clone(), d.channels, fcfs);
            let write = if d.read_while_write {
                add_as(format!("{} (writes)", d.name), d.channels, fcfs)
            } else {
                read
            };
            devs.push(Dev {
                read,
                write,
                exponential: d.service == Service::Exponential,
                reads_first: d.reads_first,
                overhead: d.overhead,
                per_op_ns: d.per_op_ns,
                per_byte_ns: d.per_byte_ns,
                insert_ns: d.insert_ns,
                insert_per_byte_ns: d.insert_per_byte_ns,
                lazy: d.lazy.map(|capacity| Lazy {
                    capacity,
                    used: 0,
                    blocked: VecDeque::new(),
                }),
            });
        }
        let (think, clients) = match &m.load {
            Load::Closed { clients, think, .. } => (*think, *clients as usize),
            Load::Open { .. } => (None, 0),
        };
        let n_st = stations.len();
        let stackless = m.stack.per_request_ns == 0.0
            && devs.iter().all(|d| {
                d.overhead == 0.0
                    && d.per_op_ns == 0.0
                    && d.per_byte_ns == 0.0
                    && d.insert_ns == 0.0
                    && d.insert_per_byte_ns == 0.0
            });
        Engine {
            think,
            cpu_demand: m.cpu,
            cpu_station,
            link_station,
            link_ns_per_byte: m.link_ns_per_byte,
            stations,
            devs,
            erasing,
            disk: m.disk.map(Box::new),
            disk_batch: Vec::new(),
            erase_stages: Vec::new(),
            stack: m.stack,
            rng: Rng::new(m.seed ^ 0x7469_6d65),
            now: 0,
            seq: 0,
            heap: BinaryHeap::with_capacity(64),
            background_ops: Vec::new(),
            front: None,
            depth: 0,
            stackless,
            inline: matches!(m.load, Load::Closed { .. }),
            jobs: Vec::new(),
            free: Vec::new(),
            queues: Vec::new(),
            order: Vec::new(),
            order_at: 0,
            pids: HashMap::new(),
            client_pids: Vec::new(),
            idle: Vec::new(),
            next_arrival: None,
            trace_t0: None,
            last_arrival: 0,
            in_system: 0,
            last_area: 0,
            issued: 0,
            counting_from: 0,
            start_ns: 0,
            tally: Tally::new(n_st, clients),
            source_done: false,
            warmup_requests: 0,
            warmup_ns: None,
            warmed: false,
            warm_event: false,
            warmup_pending: false,
            load: m.load,
        }
    }

    /// Starts the clients (closed) or the arrivals (open).
    pub fn start(&mut self) {
        if let Load::Closed {
            clients, by_pid, ..
        } = self.load
        {
            if !by_pid {
                for c in 0..clients {
                    self.schedule(0, ISSUE | c);
                }
                self.idle = vec![false; clients as usize];
            }
        }
        // Open loads and pid clients start as the trace is read (`feed`).
    }

    #[inline]
    fn schedule(&mut self, t: u64, tag: u32) {
        self.seq += 1;
        let key = ((t as u128) << 64) | (((self.seq as u32) as u128) << 32) | tag as u128;
        match self.front {
            Some(f) if key < f => {
                self.heap.push(Reverse(f));
                self.front = Some(key);
            }
            Some(_) => self.heap.push(Reverse(key)),
            None => {
                if self.heap.peek().is_none_or(|&Reverse(m)| key < m) {
                    self.front = Some(key);
                } else {
                    self.heap.push(Reverse(key));
                }
            }
        }
    }

    /// The time of the earliest queued event (`u64::MAX`: none).
    #[inline]
    fn earliest(&self) -> u64 {
        match self.front {
            Some(k) => (k >> 64) as u64,
            None => self
                .heap
                .peek()
                .map_or(u64::MAX, |&Reverse(k)| (k >> 64) as u64),
        }
    }

    /// The earliest event, taken out of the queue.
    #[inline]
    fn pop(&mut self) -> Option<u128> {
        match self.front.take() {
            Some(k) => Some(k),
            None => self.heap.pop().map(|Reverse(k)| k),
        }
    }

    #[inline]
    fn draw(&mut self, d: Delay) -> u64 {
        match d {
            Delay::Fixed { mean } => crate::cost::whole_u64(mean.0),
            Delay::Exponential { mean } => self.exp(mean.0),
        }
    }

    #[inline]
    fn exp(&mut self, mean: f64) -> u64 {
        exp_draw(&mut self.rng, mean)
    }

    fn alloc(&mut self) -> u32 {
        if let Some(j) = self.free.pop() {
            return j;
        }
        self.jobs.push(Job::default());
        (self.jobs.len() - 1) as u32
    }

    /// Whether the engine needs the next request of the trace now (it has
    /// a client ready, or an arrival to read ahead) and has not been told
    /// the trace ended.
    pub fn wants(&self) -> bool {
        !self.source_done
    }

    /// Whether requests may be handed in a batch at a time (closed loads
    /// queue them; an open load reads one arrival ahead).
    pub fn takes_batches(&self) -> bool {
        matches!(self.load, Load::Closed { .. })
    }

    pub fn source_ended(&mut self) {
        self.source_done = true;
    }

    pub fn idle(&self) -> bool {
        self.front.is_none() && self.heap.is_empty()
    }

    /// Runs events until a client or an arrival needs a request from the
    /// trace (returns true) or nothing is left to do (false). Requests are
    /// handed in with `feed`.
    pub fn run_until_hungry(&mut self, h: &mut Hierarchy) -> bool {
        loop {
            if matches!(self.load, Load::Open { .. })
                && self.next_arrival.is_none()
                && !self.source_done
            {
                return true;
            }
            let Some(key) = self.pop() else {
                return !self.source_done;
            };
            let (t, tag) = ((key >> 64) as u64, key as u32);
            self.depth = 0;
            self.advance(t);
            if tag == ARRIVAL {
                let r = self.next_arrival.take().expect("an arrival was read ahead");
                let j = self.issue(h, BACKGROUND - 1, r);
                self.enter(h, j);
            } else if tag & ISSUE != 0 {
                let c = tag & !ISSUE;
                if let Some(j) = self.issue_next(h, c) {
                    self.enter(h, j);
                    continue;
                }
                if self.source_done {
                    // The trace has ended and the client stops.
                    continue;
                }
                // No request for this client until more of the trace is
                // read: a pid client waits idle (`feed` wakes it), any
                // other takes the next request read.
                if !matches!(self.load, Load::Closed { by_pid: true, .. }) {
                    self.schedule(t, tag);
                }
                return true;
            } else {
                self.stage_done(h, tag);
            }
        }
    }

    #[inline]
    fn advance(&mut self, t: u64) {
        if t > self.last_area {
            self.tally.in_system_area += self.in_system as u128 * (t - self.last_area) as u128;
            self.last_area = t;
        }
        self.now = t;
    }

    /// Hands the engine the trace's next request (the hierarchy sees it
    /// when it is issued, not here).
    pub fn feed(&mut self, _h: &mut Hierarchy, r: Request) {
        match self.load {
            Load::Open { rate } => {
                let t = match rate {
                    Some(rate) => self.last_arrival + self.exp(1e9 / rate),
                    None => {
                        let t0 = *self.trace_t0.get_or_insert(r.time);
                        // A trace whose times go back arrives at once.
                        (r.time.saturating_sub(t0)).max(self.last_arrival)
                    }
                };
                self.last_arrival = t;
                self.next_arrival = Some(r);
                self.schedule(t, ARRIVAL);
            }
            Load::Closed { by_pid: true, .. } => {
                let c = match self.pids.get(&r.pid) {
                    Some(&c) => c,
                    None => {
                        let c = self.queues.len() as u32;
                        self.pids.insert(r.pid, c);
                        self.queues.push(VecDeque::new());
                        self.client_pids.push(r.pid);
                        self.tally.clients.push((0, 0));
                        self.idle.push(true);
                        c
                    }
                };
                self.queues[c as usize].push_back(r);
                if self.idle[c as usize] {
                    self.idle[c as usize] = false;
                    self.schedule(self.now, ISSUE | c);
                }
            }
            Load::Closed { .. } => self.feed_all(_h, &[r]),
        }
    }

    /// A closed loop dealing in order whose requests are all issued: its
    /// buffer of requests, emptied, for the caller to fill (or swap) with
    /// the next ones in order. None otherwise (`feed_all` then).
    pub fn order_buffer(&mut self) -> Option<&mut Vec<Request>> {
        if !matches!(self.load, Load::Closed { by_pid: false, .. })
            || self.order_at < self.order.len()
        {
            return None;
        }
        self.order.clear();
        self.order_at = 0;
        Some(&mut self.order)
    }

    /// Hands the engine the trace's next requests, in order: `feed` for
    /// each, in one step where a closed loop deals them in order.
    pub fn feed_all(&mut self, h: &mut Hierarchy, rs: &[Request]) {
        if let Load::Closed { by_pid: false, .. } = self.load {
            // Taken by the first ready client: `issue_next` asks.
            self.order.drain(..self.order_at);
            self.order_at = 0;
            self.order.extend_from_slice(rs);
            return;
        }
        for r in rs {
            self.feed(h, *r);
        }
    }

    /// Client `c` issues its next request, if it has one: None if it has
    /// none, else the job to `enter` now (`NO_JOB`: none).
    fn issue_next(&mut self, h: &mut Hierarchy, c: u32) -> Option<u32> {
        if let Load::Closed { by_pid: true, .. } = self.load {
            let Some(r) = self.queues[c as usize].pop_front() else {
                // Idle until `feed` brings one of its requests.
                self.idle[c as usize] = true;
                return None;
            };
            return Some(self.issue(h, c, r));
        }
        let at = self.order_at;
        let &r = self.order.get(at)?;
        self.order_at = at + 1;
        // Requests are issued in trace order: start loading the index
        // buckets of later ones, as the serial loop does (sim.rs).
        if let Some(far) = self.order.get(at + crate::request::PREFETCH_FAR) {
            h.prefetch_top(far.key);
        }
        if let Some(near) = self.order.get(at + crate::request::PREFETCH_NEAR) {
            h.prefetch_below(near.key);
        }
        Some(self.issue(h, c, r))
    }

    /// Runs `r` through the hierarchy now and readies its job: returns it,
    /// for the caller to `enter` at once, or `NO_JOB` when its first step
    /// is an event (a stack delay).
    fn issue(&mut self, h: &mut Hierarchy, client: u32, r: Request) -> u32 {
        if !self.warmed {
            let by_count = self.warmup_requests > 0 && self.issued >= self.warmup_requests;
            let by_time = self.warmup_ns.is_some_and(|w| self.now >= w);
            if by_count || by_time {
                // The cold state stays; every figure starts over.
                h.reset_counters();
                self.start_counting();
                for e in &mut self.erasing {
                    e.see(erases_of(h, e));
                }
            }
        }
        h.clock_ns = self.now as f64;
        h.ops.clear();
        h.access_inlined(&r);
        self.issued += 1;
        let j = self.alloc();
        let mut stack = self.stack.per_request_ns;
        let mut cpu_service = 0;
        if self.cpu_station.is_some() {
            if let Some(d) = self.cpu_demand {
                cpu_service = self.draw(d);
            }
        }
        // The job's stages are written in place (its record keeps their
        // buffer from one request to the next). Background operations get
        // their service drawn here, in the order of the operations, and
        // start after the loop, before the job enters its first stage.
        let Engine {
            jobs,
            devs,
            rng,
            background_ops,
            stackless,
            link_station,
            cpu_station,
            link_ns_per_byte,
            disk,
            disk_batch,
            ..
        } = self;
        let stages = &mut jobs[j as usize].stages;
        stages.clear();
        stages.reserve(h.ops.ops().len() + 2);
        if let Some(l) = *link_station {
            stages.push(Stage {
                station: l,
                class: 1,
                lazy: false,
                bytes: 0,
                service: crate::cost::whole_u64(r.size as f64 * *link_ns_per_byte),
            });
        }
        let cpu_at = stages.len();
        if let Some(c) = *cpu_station {
            stages.push(Stage {
                station: c,
                class: 1,
                lazy: false,
                bytes: 0,
                service: 0,
            });
        }
        let last_dev = devs.len() - 1;
        for op in h.ops.ops() {
            let d = &devs[op.dev as usize];
            let service = service_of(d, op, rng);
            let write = op.kind != OpKind::Read;
            if op.background {
                if disk.is_some() && op.dev as usize == last_dev {
                    // The elevator's (`position`).
                    continue;
                }
                let copy = crate::cost::whole_u64(op.bytes as f64 * d.per_byte_ns);
                let station = if write { d.write } else { d.read };
                background_ops.push((station, service, op.bytes, copy));
                continue;
            }
            if !*stackless {
                stack += d.overhead + d.per_op_ns + op.bytes as f64 * d.per_byte_ns;
                if write && (op.dev as usize) < last_dev {
                    stack += d.insert_ns + op.bytes as f64 * d.insert_per_byte_ns;
                }
            }
            let (station, class) = if write {
                (d.write, 1)
            } else {
                (d.read, if d.reads_first { 0 } else { 1 })
            };
            let lazy = write && d.lazy.is_some();
            stages.push(Stage {
                station: if lazy { op.dev as u16 } else { station },
                class,
                lazy,
                bytes: op.bytes,
                service,
            });
        }
        if let Some(k) = disk.as_deref_mut() {
            let first = cpu_at + usize::from(cpu_station.is_some());
            let d = &devs[last_dev];
            position(
                k,
                h.ops.ops(),
                last_dev,
                d,
                stages,
                first,
                disk_batch,
                background_ops,
            );
        }
        let stack = crate::cost::whole_u64(stack);
        if self.cpu_station.is_some() {
            self.jobs[j as usize].stages[cpu_at].service = cpu_service + stack;
        }
        if !self.erasing.is_empty() {
            self.erases(h, j, cpu_at + usize::from(self.cpu_station.is_some()));
        }
        if !self.background_ops.is_empty() {
            let ops = std::mem::take(&mut self.background_ops);
            for &(station, service, bytes, copy) in &ops {
                self.spawn_flush(station, service, bytes, copy);
            }
            self.background_ops = ops;
            self.background_ops.clear();
        }
        let counted = self.counting();
        let job = &mut self.jobs[j as usize];
        job.client = client;
        job.issued = self.now;
        job.size = r.size;
        job.counted = counted;
        job.at = 0;
        job.wait = 0;
        job.service = 0;
        // Without a CPU station the stack time is a pure delay before the
        // devices (none when it is zero).
        job.stack = stack;
        self.in_system += 1;
        let delay = if self.cpu_station.is_none() { stack } else { 0 };
        if delay > 0 {
            job.at = usize::MAX;
            self.schedule(self.now + delay, j);
            return NO_JOB;
        }
        j
    }

    /// The erases request `j`'s access made on erasing tiers, as device
    /// operations of the erase time each on the tier's write station: on
    /// the request's path just before its first write to the tier (a block
    /// is erased before it is programmed), else, when its writes there are
    /// background or lazy, as background work (class 2 on a lazy device:
    /// with the write-backs it makes room for). Its ops start at stage
    /// `base`.
    fn erases(&mut self, h: &Hierarchy, j: u32, base: usize) {
        // Most requests erase nothing: leave before any bookkeeping.
        if self.erasing.iter().all(|e| e.unchanged(h)) {
            return;
        }
        let mut found = std::mem::take(&mut self.erase_stages);
        for e in &mut self.erasing {
            let count = erases_of(h, e);
            let n = count.saturating_sub(e.seen);
            e.see(count);
            let copies = h.dev_ftl_copies(e.dev).unwrap_or(0);
            let c = copies.saturating_sub(e.copies_seen);
            e.copies_seen = copies;
            if n == 0 && c == 0 {
                continue;
            }
            let d = &self.devs[e.dev];
            let mut at = base;
            let mut pos = usize::MAX;
            if d.lazy.is_none() {
                for op in h.ops.ops() {
                    if op.background {
                        continue;
                    }
                    if op.dev as usize == e.dev && op.kind != OpKind::Read {
                        pos = at;
                        break;
                    }
                    at += 1;
                }
            }
            let class = if d.lazy.is_some() { 2 } else { 1 };
            found.push((pos, d.write, class, n * e.ns + c * e.copy_ns));
        }
        // Later positions first, so that each insertion leaves the earlier
        // ones in place.
        found.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
        for &(pos, station, class, service) in &found {
            if pos == usize::MAX {
                self.spawn_background(station, class, service, 0, None);
            } else {
                let stage = Stage {
                    station,
                    class,
                    lazy: false,
                    bytes: 0,
                    service,
                };
                self.jobs[j as usize].stages.insert(pos, stage);
            }
        }
        found.clear();
        self.erase_stages = found;
    }

    fn spawn_background(
        &mut self,
        station: u16,
        class: u8,
        service: u64,
        bytes: u32,
        lazy_dev: Option<u16>,
    ) {
        let j = self.spawn_job(station, class, service, bytes, lazy_dev);
        let st = self.jobs[j as usize].stages[0];
        self.arrive(j, st);
    }

    /// A flush write-back: a job of its own. Its memory copies (a tier's
    /// `copies`, the bounce copy of a write-back), `copy` ns, are kernel
    /// work on the CPU station before the device: S1's flush daemon copied
    /// each dirty page to a bounce buffer.
    fn spawn_flush(&mut self, station: u16, service: u64, bytes: u32, copy: u64) {
        let Some(c) = self.cpu_station.filter(|_| copy > 0) else {
            self.spawn_background(station, 1, service, bytes, None);
            return;
        };
        let j = self.spawn_job(station, 1, service, bytes, None);
        let cpu = Stage {
            station: c,
            class: 1,
            lazy: false,
            bytes: 0,
            service: copy,
        };
        self.jobs[j as usize].stages.insert(0, cpu);
        self.arrive(j, cpu);
    }

    /// A background job of one device stage, not yet arrived anywhere.
    fn spawn_job(
        &mut self,
        station: u16,
        class: u8,
        service: u64,
        bytes: u32,
        lazy_dev: Option<u16>,
    ) -> u32 {
        let j = self.alloc();
        let job = &mut self.jobs[j as usize];
        job.client = BACKGROUND;
        job.counted = false;
        job.stages.clear();
        job.stages.push(Stage {
            station,
            class,
            lazy: false,
            bytes,
            service,
        });
        // The buffer it drains, to free its bytes when done.
        job.size = lazy_dev.map_or(u32::MAX, u32::from);
        job.stack = 0;
        job.at = 0;
        job.issued = self.now;
        if self.counting() {
            self.tally.background_ops += 1;
        }
        j
    }

    /// Job `j` (`NO_JOB`: none) enters its stage `at` (from the first),
    /// skipping stages of no time, or completes.
    #[inline]
    fn enter(&mut self, h: &mut Hierarchy, j: u32) {
        self.enter_from(h, j, self.inline);
    }

    /// `enter`. With `inline`, a stage that ends before every queued event
    /// ends at once, as if `run_until_hungry` had taken its event next (no
    /// other event can come first): the job goes on to its next stage, and
    /// a client that completes issues its next request in the same loop.
    /// The order of everything that happens is the events' order; only the
    /// queue is left out. Only a caller with nothing left to do at this
    /// time may ask for it (not `release`, which enters several jobs).
    fn enter_from(&mut self, h: &mut Hierarchy, mut j: u32, inline: bool) {
        loop {
            if j == NO_JOB {
                return;
            }
            let job = &mut self.jobs[j as usize];
            if job.at == usize::MAX {
                job.at = 0;
            }
            let Some(&st) = job.stages.get(job.at) else {
                j = self.complete(h, j, inline);
                continue;
            };
            if st.lazy {
                // A write into a lazy buffer: on its way at once if the
                // buffer has room, else blocked until it has.
                let dev = st.station as usize;
                let l = self.devs[dev].lazy.as_mut().expect("a lazy device");
                // A write larger than the whole buffer goes when it is empty.
                let fits = l.used + st.bytes as u64 <= l.capacity || l.used == 0;
                if l.blocked.is_empty() && fits {
                    l.used += st.bytes as u64;
                    let station = self.devs[dev].write;
                    self.spawn_background(station, 2, st.service, st.bytes, Some(dev as u16));
                    self.jobs[j as usize].at += 1;
                    continue;
                }
                l.blocked.push_back((j, st.bytes, st.service));
                if self.jobs[j as usize].counted {
                    self.tally.blocked_writes += 1;
                }
                // Stays at this stage; `release` moves it on and adds the
                // time blocked to its wait (minus now here, plus then).
                self.jobs[j as usize].wait = self.jobs[j as usize].wait.wrapping_sub(self.now);
                return;
            }
            // A stage of no time (no CPU demand, no stack cost) is no visit.
            if st.service == 0 {
                self.jobs[j as usize].at += 1;
                continue;
            }
            let station = &mut self.stations[st.station as usize];
            if station.is_fcfs() {
                // `start_stage` and `finish_stage` of an FCFS station, for
                // the common case in one place.
                let (end, waited) = station.start_fcfs(self.now, st.service);
                let job = &mut self.jobs[j as usize];
                job.wait += waited;
                let counted = job.counted;
                if counted {
                    self.tally.station_wait[st.station as usize] += waited as u128;
                }
                if inline && end < self.earliest() {
                    self.seq += 1;
                    self.depth = 0;
                    self.advance(end);
                    let job = &mut self.jobs[j as usize];
                    job.service += st.service;
                    job.at += 1;
                    if counted {
                        self.tally.station_service[st.station as usize] += st.service as u128;
                    }
                    continue;
                }
                self.schedule(end, j);
                return;
            }
            let Some(end) = self.start_stage(j, st) else {
                // Queued at the station.
                return;
            };
            if inline && end < self.earliest() {
                // Its end is the next event: taken now, as the loop of
                // `run_until_hungry` would (the sequence number too).
                self.seq += 1;
                self.depth = 0;
                self.advance(end);
                self.finish_stage(h, j);
                continue;
            }
            self.schedule(end, j);
            return;
        }
    }

    /// Job `j` arrives at the station of its current stage, `st`: if a
    /// server takes it at once, returns when its service ends (the caller
    /// schedules that), else it waits in the station's queue.
    #[inline]
    fn start_stage(&mut self, j: u32, st: Stage) -> Option<u64> {
        let station = &mut self.stations[st.station as usize];
        if station.is_fcfs() {
            let (end, waited) = station.start_fcfs(self.now, st.service);
            let job = &mut self.jobs[j as usize];
            job.wait += waited;
            if job.counted {
                self.tally.station_wait[st.station as usize] += waited as u128;
            }
            return Some(end);
        }
        station
            .arrive(self.now, j, st.class as usize, st.service)
            .then_some(self.now + st.service)
    }

    /// Job `j` arrives at the station of its current stage, `st`.
    #[inline]
    fn arrive(&mut self, j: u32, st: Stage) {
        if let Some(end) = self.start_stage(j, st) {
            self.schedule(end, j);
        }
    }

    /// Job `j` finished the service of its current stage.
    fn stage_done(&mut self, h: &mut Hierarchy, j: u32) {
        if self.jobs[j as usize].at == usize::MAX {
            // The stack delay of a run without a CPU station.
            self.enter(h, j);
            return;
        }
        if self.finish_stage(h, j) {
            self.enter(h, j);
        }
    }

    /// The end of job `j`'s current stage at its station: the station's
    /// next waiting job starts, and the job moves past the stage. Returns
    /// whether it is a request's job, to `enter` its next stage.
    #[inline]
    fn finish_stage(&mut self, h: &mut Hierarchy, j: u32) -> bool {
        let job = &self.jobs[j as usize];
        let st = job.stages[job.at];
        let jobs = &self.jobs;
        let station = &mut self.stations[st.station as usize];
        if station.is_fcfs() {
            // Nothing waits in an FCFS station's queue (`start_fcfs`).
        } else if let Some((next, waited)) = station.depart(self.now, |k| {
            let jb = &jobs[k as usize];
            jb.stages[jb.at].service
        }) {
            let nj = &mut self.jobs[next as usize];
            let nst = nj.stages[nj.at];
            nj.wait += waited;
            if nj.counted {
                self.tally.station_wait[nst.station as usize] += waited as u128;
            }
            self.schedule(self.now + nst.service, next);
        }
        let job = &mut self.jobs[j as usize];
        job.service += st.service;
        if job.counted {
            self.tally.station_service[st.station as usize] += st.service as u128;
        }
        job.at += 1;
        if job.client == BACKGROUND {
            if job.at < job.stages.len() {
                // A flush's copy done on the CPU: now its device.
                let next = job.stages[job.at];
                self.arrive(j, next);
                return false;
            }
            let lazy = job.size;
            self.free.push(j);
            if lazy != u32::MAX {
                self.release(h, lazy as usize, st.bytes as u64);
            }
            return false;
        }
        true
    }

    /// A lazy write-back of device `dev` finished: its bytes leave the
    /// buffer, and blocked writers that now fit go on, in order.
    fn release(&mut self, h: &mut Hierarchy, dev: usize, bytes: u64) {
        self.devs[dev].lazy.as_mut().expect("a lazy device").used -= bytes;
        loop {
            let l = self.devs[dev].lazy.as_mut().expect("a lazy device");
            let Some(&(j, b, service)) = l.blocked.front() else {
                return;
            };
            if l.used + b as u64 > l.capacity && l.used > 0 {
                return;
            }
            l.blocked.pop_front();
            l.used += b as u64;
            let station = self.devs[dev].write;
            self.spawn_background(station, 2, service, b, Some(dev as u16));
            let job = &mut self.jobs[j as usize];
            job.wait = job.wait.wrapping_add(self.now);
            job.at += 1;
            // More blocked writers may go at this time: no stage ends
            // ahead of its event here.
            self.enter_from(h, j, false);
        }
    }

    /// Job `j` completes. Returns the job of the client's next request when
    /// it issues at once, to be entered (else `NO_JOB`); with `inline`
    /// (see `enter_from`), also when its think time ends before every
    /// queued event.
    fn complete(&mut self, h: &mut Hierarchy, j: u32, inline: bool) -> u32 {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let latency = now - job.issued;
        self.in_system -= 1;
        if job.counted {
            let t = &mut self.tally;
            t.completed += 1;
            t.bytes += job.size as u64;
            t.latency_sum += latency as u128;
            t.wait_sum += job.wait as u128;
            // The CPU stage served the stack time too: it is counted as
            // stack, not service.
            let in_cpu = if self.cpu_station.is_some() {
                job.stack
            } else {
                0
            };
            t.service_sum += (job.service - in_cpu) as u128;
            t.stack_sum += job.stack as u128;
            t.record(latency.max(1));
            if let Some(c) = t.clients.get_mut(job.client as usize) {
                c.0 += 1;
                c.1 += latency as u128;
            }
        }
        let client = job.client;
        self.free.push(j);
        if let Load::Closed { .. } = self.load {
            let think = self.think.map_or(0, |d| self.draw(d));
            // No think time: the client issues at once, without an event
            // (unless requests of no time nest too deep). Only in order
            // mode, where any request read is the client's.
            let in_order = !matches!(self.load, Load::Closed { by_pid: true, .. })
                && self.order_at < self.order.len();
            if think == 0 && self.depth < 16 && in_order {
                self.depth += 1;
                return self.issue_next(h, client).unwrap_or(NO_JOB);
            }
            let t = now + think;
            if inline && think > 0 && in_order && t < self.earliest() {
                // The client's issue is the next event: taken now, as the
                // loop of `run_until_hungry` would.
                self.seq += 1;
                self.depth = 0;
                self.advance(t);
                return self.issue_next(h, client).unwrap_or(NO_JOB);
            }
            self.schedule(t, ISSUE | client);
        }
        NO_JOB
    }

    /// Whether what happens now counts (no warm-up, or past it).
    #[inline]
    fn counting(&self) -> bool {
        self.warmed || !self.warmup_pending
    }

    /// The end of the warm-up: every figure counts from now.
    pub fn start_counting(&mut self) {
        self.warmed = true;
        self.warm_event = true;
        self.counting_from = self.issued;
        self.start_ns = self.now;
        let n = self.stations.len();
        let clients = self.tally.clients.len();
        self.tally = Tally::new(n, clients);
        for s in &mut self.stations {
            s.reset_stats(self.now);
        }
        self.last_area = self.now;
    }

    /// Device `d`'s busy time since counting started (ns; its read and
    /// write stations together) and its channels; None past the devices.
    pub fn device_busy(&self, d: usize) -> Option<(f64, u32)> {
        let dev = self.devs.get(d)?;
        let read = &self.stations[dev.read as usize];
        let mut ns = read.stats.busy_ns as f64;
        if dev.write != dev.read {
            ns += self.stations[dev.write as usize].stats.busy_ns as f64;
        }
        Some((ns, read.servers))
    }

    /// Brings the time integrals up to the last event.
    pub fn finish(&mut self) {
        let now = self.now;
        for s in &mut self.stations {
            s.finish(now);
        }
    }
}
