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

mod stages;
mod tally;
use stages::Job;
pub use tally::Tally;

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

    /// Requests in the order buffer (a closed loop dealing in order).
    pub fn order_len(&self) -> usize {
        self.order.len()
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
        // buckets of later ones, as the serial loop does (run/tiers.rs).
        if let Some(far) = self.order.get(at + crate::request::PREFETCH_FAR) {
            h.prefetch_top(far.key);
        }
        if let Some(near) = self.order.get(at + crate::request::PREFETCH_NEAR) {
            h.prefetch_below(near.key);
        }
        Some(self.issue(h, c, r))
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
