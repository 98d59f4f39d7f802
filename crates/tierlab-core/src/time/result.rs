//! What the time layer reports (docs/time.md, "Outputs"): latency
//! percentiles, where the time went, and each station's load. Durations in
//! ns, rates per second, shares as fractions.

use super::engine::Engine;
use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LatencyStats {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// One station: a device (a tier, the backing store, or a device's write
/// channels when it reads while writing), the CPU or the link.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StationResult {
    pub name: String,
    /// Servers (channels, cores); null: unlimited.
    pub servers: Option<u32>,
    /// Busy time over elapsed time and servers (a fraction; null when
    /// the servers are unlimited).
    pub utilization: Option<f64>,
    pub busy_ns: f64,
    /// Time-average number of operations waiting.
    pub mean_queue: f64,
    /// Operations served (of requests and background work).
    pub ops: u64,
    /// Per request: mean time waiting here and mean service here.
    pub queue_ns: f64,
    pub service_ns: f64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ClientResult {
    /// The trace's pid (deal = "pid"), or the client's number.
    pub client: u32,
    pub requests: u64,
    pub mean_latency_ns: f64,
    pub throughput_rps: f64,
}

/// The time model's figures: the whole-run keys (`throughput_rps`,
/// `total_time_ns`, `latency_ns`) are also at the top of the run result.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TimeResult {
    /// serial, closed or open.
    pub load: String,
    pub clients: Option<u32>,
    /// Simulated time from the end of the warm-up to the last completion.
    pub elapsed_ns: f64,
    /// Requests completed (and counted) in it.
    pub completed: u64,
    pub throughput_rps: f64,
    pub throughput_bytes_per_s: f64,
    pub latency_ns: LatencyStats,
    /// Mean per request: software-stack time, time queued at any station,
    /// service time (devices, CPU demand, link).
    pub stack_ns: f64,
    pub queue_ns: f64,
    pub service_ns: f64,
    /// Time-average number of requests in the system (Little's L).
    pub mean_in_system: f64,
    /// Requests issued before counting started.
    pub warmup_requests: u64,
    pub warmup_ns: f64,
    /// Background device operations (flushes, lazy write-backs, erases
    /// off a request's path).
    pub background_ops: u64,
    /// Requests that found a lazy write-back buffer full.
    pub blocked_writes: u64,
    pub stations: Vec<StationResult>,
    pub per_client: Vec<ClientResult>,
}

impl TimeResult {
    pub fn collect(e: &Engine, load: &str, clients: Option<u32>, by_pid: bool) -> Self {
        let t = &e.tally;
        let elapsed = e.now.saturating_sub(e.start_ns) as f64;
        let n = t.completed as f64;
        let per_req = |x: u128| if n > 0.0 { x as f64 / n } else { 0.0 };
        let per_s = |x: f64| {
            if elapsed > 0.0 {
                x * 1e9 / elapsed
            } else {
                0.0
            }
        };
        let hist = t.histogram();
        let q = |p: f64| hist.value_at_quantile(p) as f64;
        let latency_ns = if t.completed > 0 {
            LatencyStats {
                mean: per_req(t.latency_sum),
                p50: q(0.5),
                p90: q(0.9),
                p99: q(0.99),
                p999: q(0.999),
                max: hist.max() as f64,
            }
        } else {
            LatencyStats::default()
        };
        let stations = e
            .stations
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let servers = (!s.unlimited()).then_some(s.servers);
                StationResult {
                    name: s.name.clone(),
                    servers,
                    utilization: servers.map(|c| {
                        if elapsed > 0.0 {
                            s.stats.busy_ns as f64 / (elapsed * c as f64)
                        } else {
                            0.0
                        }
                    }),
                    busy_ns: s.stats.busy_ns as f64,
                    mean_queue: if elapsed > 0.0 {
                        s.stats.queue_area as f64 / elapsed
                    } else {
                        0.0
                    },
                    ops: s.stats.ops,
                    queue_ns: per_req(t.station_wait[i]),
                    service_ns: per_req(t.station_service[i]),
                }
            })
            .collect();
        let per_client = t
            .clients
            .iter()
            .enumerate()
            .filter(|(_, c)| c.0 > 0)
            .map(|(i, c)| ClientResult {
                client: if by_pid { e.client_pids[i] } else { i as u32 },
                requests: c.0,
                mean_latency_ns: c.1 as f64 / c.0 as f64,
                throughput_rps: per_s(c.0 as f64),
            })
            .collect();
        TimeResult {
            load: load.into(),
            clients,
            elapsed_ns: elapsed,
            completed: t.completed,
            throughput_rps: per_s(n),
            throughput_bytes_per_s: per_s(t.bytes as f64),
            latency_ns,
            stack_ns: per_req(t.stack_sum),
            queue_ns: per_req(t.wait_sum),
            service_ns: per_req(t.service_sum),
            mean_in_system: if elapsed > 0.0 {
                t.in_system_area as f64 / elapsed
            } else {
                0.0
            },
            warmup_requests: e.counting_from,
            warmup_ns: e.start_ns as f64,
            background_ops: t.background_ops,
            blocked_writes: t.blocked_writes,
            stations,
            per_client,
        }
    }
}
