//! The time model against queueing theory (time/theory.rs): M/M/1, M/D/1,
//! M/M/c and Cobham's priority queue under open Poisson load; exact mean
//! value analysis of a closed network; Little's law and the response-time
//! law on every run; one closed client equal to the serial loop; one seed,
//! one result.
//!
//! Each queue is one tier that every request hits (one object, a warm-up
//! past its first miss), whose medium takes exactly the service time asked
//! for: its latency, and a bandwidth so high that a transfer rounds to no
//! nanosecond. A million arrivals or more per case: at utilisation 0.8 the
//! mean wait of an M/M/1 queue over a million arrivals has a standard
//! error near 1% (its correlation time is about 90 service times).

use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;
use tierlab_core::stats::RunResult;
use tierlab_core::time::result::{StationResult, TimeResult};
use tierlab_core::time::theory;

/// One tier of medium SRV (reads `read` ns, writes `write` ns) that every
/// request hits, under `load` (TOML lines), with `extra` tier keys.
fn single_queue(
    requests: u64,
    read: u64,
    write: u64,
    write_ratio: f64,
    tier: &str,
    load: &str,
) -> String {
    format!(
        r#"
[workload]
type = "zipf"
alpha = 1.0
objects = 1
requests = {requests}
object_size = 4096
write_ratio = {write_ratio}
seed = 11

[techs.SRV]
base = "DRAM-DDR3"
read_ns = {read}
write_ns = {write}
bandwidth_mb_s = 1e15

[[tier]]
tech = "SRV"
capacity = "1MiB"
{tier}

[run]
warmup = 1000

{load}
"#
    )
}

fn run(toml: &str) -> RunResult {
    let cfg = Config::from_toml_str(toml).unwrap();
    Runner::run(&cfg).unwrap()
}

fn timed(r: &RunResult) -> &TimeResult {
    r.time.as_ref().expect("a time model ran")
}

fn station<'a>(t: &'a TimeResult, name: &str) -> &'a StationResult {
    t.stations
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no station {name}"))
}

fn close(what: &str, got: f64, want: f64, tol: f64) {
    let err = (got - want).abs() / want;
    assert!(
        err <= tol,
        "{what}: {got:.2} against {want:.2} ({:.2}% off, {:.1}% allowed)",
        err * 100.0,
        tol * 100.0
    );
}

/// L = X W: requests in the system on average, against throughput times
/// the mean response time.
fn littles_law(t: &TimeResult) {
    close(
        "Little's law",
        t.mean_in_system,
        t.throughput_rps * t.latency_ns.mean / 1e9,
        0.01,
    );
}

const S: f64 = 10_000.0;

fn open_poisson(rho: f64, servers: u32, service: &str, requests: u64) -> (TimeResult, f64) {
    let lambda = rho * servers as f64 / S * 1e9;
    let toml = single_queue(
        requests,
        S as u64,
        S as u64,
        0.0,
        &format!("channels = {servers}\nservice = \"{service}\""),
        &format!("[load]\ntype = \"open\"\nrate = {lambda}"),
    );
    let r = run(&toml);
    let t = timed(&r).clone();
    littles_law(&t);
    (t, lambda / 1e9)
}

#[test]
fn mm1_mean_wait() {
    for rho in [0.5, 0.8] {
        let (t, lambda) = open_poisson(rho, 1, "exponential", 2_000_000);
        let want = theory::mm1_wait(lambda, S);
        close(
            &format!("M/M/1 wait at rho {rho}"),
            station(&t, "srv").queue_ns,
            want,
            0.02,
        );
        close(
            &format!("M/M/1 utilisation at rho {rho}"),
            station(&t, "srv").utilization.unwrap(),
            rho,
            0.01,
        );
    }
}

#[test]
fn md1_mean_wait() {
    for rho in [0.5, 0.8] {
        let (t, lambda) = open_poisson(rho, 1, "fixed", 1_000_000);
        let want = theory::md1_wait(lambda, S);
        close(
            &format!("M/D/1 wait at rho {rho}"),
            station(&t, "srv").queue_ns,
            want,
            0.02,
        );
    }
}

#[test]
fn mmc_mean_wait_erlang_c() {
    for rho in [0.5, 0.8] {
        let (t, lambda) = open_poisson(rho, 4, "exponential", 2_000_000);
        let want = theory::mmc_wait(lambda, S, 4);
        close(
            &format!("M/M/4 wait at rho {rho}"),
            station(&t, "srv").queue_ns,
            want,
            0.02,
        );
    }
}

#[test]
fn reads_first_matches_cobham() {
    // Reads (class 0) 6 us, writes (class 1) 14 us, 30% writes: total
    // utilisation 0.7 x 6 + 0.3 x 14 = 8.4 us per request.
    let (read, write, w) = (6_000.0, 14_000.0, 0.3);
    let mean = (1.0 - w) * read + w * write;
    let lambda = 0.8 / mean;
    let toml = single_queue(
        2_000_000,
        read as u64,
        write as u64,
        w,
        "service = \"exponential\"\nreads_first = true",
        &format!("[load]\ntype = \"open\"\nrate = {}", lambda * 1e9),
    );
    let r = run(&toml);
    let t = timed(&r);
    littles_law(t);
    let waits = theory::cobham_priority_waits(&[
        ((1.0 - w) * lambda, read, 2.0 * read * read),
        (w * lambda, write, 2.0 * write * write),
    ]);
    // The station's mean wait per request mixes the classes by their shares.
    let want = (1.0 - w) * waits[0] + w * waits[1];
    close(
        "priority wait (mixed)",
        station(t, "srv").queue_ns,
        want,
        0.02,
    );
    // Without priority the same load waits as one M/G/1 queue.
    let second = (1.0 - w) * 2.0 * read * read + w * 2.0 * write * write;
    let fcfs = theory::mg1_wait(lambda, mean, second);
    let r = run(&toml.replace("reads_first = true", ""));
    close(
        "FCFS wait (M/G/1)",
        station(timed(&r), "srv").queue_ns,
        fcfs,
        0.02,
    );
}

#[test]
fn closed_network_matches_mva() {
    // 10 clients thinking 100 us (exponential), a 2-core CPU of 30 us per
    // request, one device of 12 us: every station exponential.
    let (n, z, cpu, dev) = (10usize, 100_000.0, 30_000.0, 12_000.0);
    let toml = single_queue(
        1_000_000,
        dev as u64,
        dev as u64,
        0.0,
        "service = \"exponential\"",
        &format!(
            "[load]\ntype = \"closed\"\nclients = {n}\nthink = {{ dist = \"exponential\", mean = {z} }}\n\
             [server]\ncpus = 2\ncpu = {{ dist = \"exponential\", mean = {cpu} }}"
        ),
    );
    let r = run(&toml);
    let t = timed(&r);
    littles_law(t);
    let m = theory::mva(
        &[
            theory::Station::Queue {
                demand: cpu,
                servers: 2,
            },
            theory::Station::Queue {
                demand: dev,
                servers: 1,
            },
        ],
        n,
        z,
    );
    close("MVA throughput", t.throughput_rps / 1e9, m.throughput, 0.02);
    close("MVA response", t.latency_ns.mean, m.response, 0.02);
    close(
        "MVA CPU utilisation",
        station(t, "cpu").utilization.unwrap(),
        m.utilization[0],
        0.02,
    );
    // The response-time law, R = N/X - Z, holds for any closed run.
    close(
        "response-time law",
        t.latency_ns.mean,
        theory::response_time_law(n, t.throughput_rps / 1e9, z),
        0.01,
    );
}

/// A 3-tier exclusive hierarchy with writes: every path of the cache layer
/// (fills, demotions, write-backs to the backing store).
const THREE_TIER: &str = r#"
[workload]
type = "zipf"
alpha = 0.9
objects = 20000
requests = 200000
object_size = 4096
write_ratio = 0.3
seed = 5

[[tier]]
tech = "DRAM-DDR3"
capacity = "5%"
[[tier]]
tech = "NAND-SLC"
capacity = "10%"
policy = "clock"
[[tier]]
tech = "SSD-SATA"
capacity = "20%"
policy = "fifo"
"#;

#[test]
fn one_closed_client_equals_the_serial_loop() {
    // The serial loop does not charge erases (the time model does: see the
    // next test); with a middle tier that does not erase, the two agree in
    // every figure.
    let three_tier = THREE_TIER.replace("NAND-SLC", "PCM-SLC");
    let serial = run(&three_tier);
    assert!(serial.time.is_none());
    for load in [
        "[load]\ntype = \"closed\"\nclients = 1",
        "[load]\ntype = \"serial\"",
    ] {
        let closed = run(&format!("{three_tier}\n{load}\n"));
        let t = timed(&closed);
        assert_eq!(closed.tiers, serial.tiers, "{load}");
        assert_eq!(closed.backing, serial.backing);
        assert_eq!(closed.access_time_ns, serial.access_time_ns);
        assert_eq!(closed.amat_ns, serial.amat_ns);
        // Exactly: charges are whole nanoseconds, so sums do not depend on
        // their order.
        assert_eq!(closed.total_time_ns, serial.total_time_ns, "{load}");
        assert_eq!(closed.throughput_rps, serial.throughput_rps);
        assert_eq!(t.latency_ns.mean, serial.amat_ns);
        assert_eq!(t.queue_ns, 0.0);
        littles_law(t);
    }
}

#[test]
fn one_closed_client_is_the_serial_loop_plus_its_erases() {
    // NAND erases: the same cache decisions, and every erase the wear
    // model counts adds the catalog's 1.5 ms to the run, nothing else.
    let serial = run(THREE_TIER);
    let closed = run(&format!(
        "{THREE_TIER}\n[load]\ntype = \"closed\"\nclients = 1\n"
    ));
    let erases = serial.tiers[1].wear.erases.expect("NAND erases");
    assert!(erases > 100, "{erases}");
    for (c, s) in closed.tiers.iter().zip(&serial.tiers) {
        assert_eq!(c.counters, s.counters);
        assert_eq!(c.wear.erases, s.wear.erases);
    }
    assert_eq!(closed.backing.counters, serial.backing.counters);
    assert_eq!(
        closed.total_time_ns,
        serial.total_time_ns + erases as f64 * 1_500_000.0
    );
    let t = timed(&closed);
    assert_eq!(t.queue_ns, 0.0);
    littles_law(t);
}

#[test]
fn wear_rates_follow_the_elapsed_time() {
    // Concurrent clients finish the run sooner than the serial sum: the
    // NAND tier's lifetime and drive writes per day are rates over the
    // time the run reports, not over the serial sum it replaced.
    let toml = format!("{THREE_TIER}\n[load]\ntype = \"closed\"\nclients = 16\n")
        .replace("tech = \"NAND-SLC\"", "tech = \"NAND-SLC\"\nchannels = 8")
        .replace("tech = \"SSD-SATA\"", "tech = \"SSD-SATA\"\nchannels = 8");
    let r = run(&format!("{toml}[backing]\nchannels = 8\n"));
    let serial = run(THREE_TIER);
    assert!(
        r.total_time_ns < serial.total_time_ns / 2.0,
        "{} against {}",
        r.total_time_ns,
        serial.total_time_ns
    );
    let nand = &r.tiers[1];
    let bytes = nand.wear.bytes_programmed as f64;
    assert!(bytes > 0.0);
    let s = r.total_time_ns / 1e9;
    let cap = nand.capacity as f64;
    close(
        "lifetime_years",
        nand.wear.lifetime_years.unwrap(),
        1e5 * cap / (bytes / s) / tierlab_core::device::wear::SECONDS_PER_YEAR,
        1e-9,
    );
    close(
        "dwpd",
        nand.wear.dwpd.unwrap(),
        bytes / s * 86_400.0 / cap,
        1e-9,
    );
}

#[test]
fn same_seed_same_result() {
    let toml = format!(
        "{THREE_TIER}\n[load]\ntype = \"closed\"\nclients = 8\nthink = {{ dist = \"exponential\", mean = \"20us\" }}\n[server]\ncpus = 2\ncpu = {{ dist = \"exponential\", mean = \"5us\" }}\n"
    );
    let toml = toml.replace(
        "policy = \"clock\"",
        "policy = \"clock\"\nservice = \"exponential\"\nchannels = 2",
    );
    let a = serde_json::to_string(&run(&toml)).unwrap();
    let b = serde_json::to_string(&run(&toml)).unwrap();
    assert_eq!(a, b);
    let other =
        serde_json::to_string(&run(&toml.replace("clients = 8", "clients = 8\nseed = 9"))).unwrap();
    assert_ne!(a, other, "load.seed changes the draws");
}

#[test]
fn concurrency_hides_a_slow_tier_until_a_station_saturates() {
    // More clients overlap more device time: throughput grows with them
    // until the busiest station saturates, and the response-time law holds.
    let mut last = 0.0;
    for n in [1, 4, 24] {
        let toml = format!("{THREE_TIER}\n[load]\ntype = \"closed\"\nclients = {n}\n")
            .replace("tech = \"NAND-SLC\"", "tech = \"NAND-SLC\"\nchannels = 8")
            .replace("tech = \"SSD-SATA\"", "tech = \"SSD-SATA\"\nchannels = 8");
        let r = run(&format!("{toml}[backing]\nchannels = 8\n"));
        let t = timed(&r);
        littles_law(t);
        close(
            &format!("response-time law, {n} clients"),
            t.latency_ns.mean,
            theory::response_time_law(n, t.throughput_rps / 1e9, 0.0),
            0.01,
        );
        assert!(
            t.throughput_rps > last,
            "{n} clients: {} <= {last}",
            t.throughput_rps
        );
        last = t.throughput_rps;
        for s in &t.stations {
            if let Some(u) = s.utilization {
                assert!(u <= 1.0 + 1e-9, "{}: utilisation {u}", s.name);
            }
        }
    }
}

#[test]
fn warmup_counts_from_its_end_and_keeps_the_cache_warm() {
    let cold = run(THREE_TIER);
    let warm = run(&THREE_TIER.replace("seed = 5", "seed = 5\n").replace(
        "[[tier]]\ntech = \"DRAM-DDR3\"",
        "[run]\nwarmup = \"50%\"\n[[tier]]\ntech = \"DRAM-DDR3\"",
    ));
    assert_eq!(warm.requests, 100_000);
    assert!(warm.miss_ratio < cold.miss_ratio);
    let passes = run(&format!(
        "{THREE_TIER}\n[run]\npasses = 3\nwarmup = \"1 pass\"\n"
    ));
    assert_eq!(passes.requests, 400_000);
    let timed_warm = run(&format!(
        "{THREE_TIER}\n[run]\nwarmup = 50000\n[load]\ntype = \"closed\"\nclients = 4\n"
    ));
    let t = timed(&timed_warm);
    assert_eq!(timed_warm.requests, 150_000);
    assert_eq!(t.warmup_requests, 50_000);
    assert!(t.warmup_ns > 0.0);
    littles_law(t);
}

/// Two tiers over a disk, a skewed load with writes, for the features below.
const TWO_TIER: &str = r#"
[workload]
type = "zipf"
alpha = 0.9
objects = 5000
requests = 50000
object_size = 4096
write_ratio = 0.3
seed = 3

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "10%"
[[tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "40%"
"#;

#[test]
fn link_and_stack_costs_are_charged_as_configured() {
    let r = run(&format!(
        "{TWO_TIER}\n[load]\ntype = \"closed\"\nclients = 1\n[server]\nlink = \"1Gbit/s\"\n\
         [stack]\nsyscall = \"1us\"\nlookup = \"500ns\"\n"
    ));
    let t = timed(&r);
    // 4096 bytes at 125e6 B/s: 32,768 ns on the link per request.
    assert_eq!(station(t, "link").service_ns, 32_768.0);
    // No per-operation costs are set: the stack time is the request's own.
    assert_eq!(t.stack_ns, 1_500.0);
    // One client: nothing waits; the response is stack + service.
    assert_eq!(t.queue_ns, 0.0);
    close(
        "breakdown",
        t.stack_ns + t.service_ns,
        t.latency_ns.mean,
        1e-9,
    );
    // Block storage pays the block layer per operation, memory does not.
    let r = run(&format!(
        "{TWO_TIER}\n[load]\ntype = \"serial\"\n[stack]\nblock_io = \"10us\"\n"
    ));
    let t = timed(&r);
    let flash_and_disk_ops = (r.tiers[1].counters.reads
        + r.tiers[1].counters.writes
        + r.backing.counters.reads
        + r.backing.counters.writes) as f64;
    close(
        "block layer time",
        t.stack_ns * t.completed as f64,
        10_000.0 * flash_and_disk_ops,
        1e-9,
    );
}

#[test]
fn lazy_buffers_take_flash_writes_off_the_critical_path() {
    let base = format!("{TWO_TIER}\n[load]\ntype = \"closed\"\nclients = 4\n");
    let eager = run(&base.replace("fill = \"exclusive\"", "").replace(
        "[[tier]]\nname = \"dram\"",
        "[hierarchy]\nfill = \"inclusive\"\n[[tier]]\nname = \"dram\"",
    ));
    let lazy = run(&base
        .replace(
            "[[tier]]\nname = \"dram\"",
            "[hierarchy]\nfill = \"lazy\"\n[[tier]]\nname = \"dram\"",
        )
        .replace(
            "capacity = \"40%\"",
            "capacity = \"40%\"\nlazy_writeback = { size = \"64KiB\" }",
        ));
    // The same cache decisions: lazy fills as inclusive does. (Wear rates
    // are over each run's elapsed time, which differs: not compared.)
    assert_eq!(lazy.tiers.len(), eager.tiers.len());
    for (l, e) in lazy.tiers.iter().zip(&eager.tiers) {
        assert_eq!(l.counters, e.counters, "{}", l.name);
        assert_eq!(l.wear.bytes_programmed, e.wear.bytes_programmed);
        assert_eq!(l.wear.erases, e.wear.erases);
    }
    let (e, l) = (timed(&eager), timed(&lazy));
    assert!(l.background_ops > 0);
    assert!(
        l.latency_ns.mean < e.latency_ns.mean,
        "lazy {} against eager {}",
        l.latency_ns.mean,
        e.latency_ns.mean
    );
    littles_law(l);
}

#[test]
fn flushes_and_separate_write_channels_are_devices_work() {
    let r = run(
        &format!("{TWO_TIER}\n[load]\ntype = \"closed\"\nclients = 2\n").replace(
            "capacity = \"40%\"",
            "capacity = \"40%\"\nread_while_write = true\nflush_interval = \"1ms\"",
        ),
    );
    let t = timed(&r);
    assert!(
        r.flushes > 0 && t.background_ops > 0,
        "{} flushes",
        r.flushes
    );
    assert!(station(t, "flash (writes)").ops > 0);
}

#[test]
fn clients_by_pid_issue_their_own_requests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pids.csv");
    let mut text = String::new();
    for i in 0..3000u64 {
        // pid 7 issues every third request, pids 1 and 2 the rest.
        let pid = [7, 1, 2][(i % 3) as usize];
        text.push_str(&format!("{i},{},4096,{pid}\n", i % 100));
    }
    std::fs::write(&path, text).unwrap();
    let r = run(&format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"csv\"\ncsv = {{ pid = 4 }}\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"1MiB\"\n\
         [load]\ntype = \"closed\"\ndeal = \"pid\"\n",
        path.to_str().unwrap()
    ));
    let t = timed(&r);
    let mut pids: Vec<(u32, u64)> = t
        .per_client
        .iter()
        .map(|c| (c.client, c.requests))
        .collect();
    pids.sort();
    assert_eq!(pids, vec![(1, 1000), (2, 1000), (7, 1000)]);
    assert_eq!(t.clients, None);
    littles_law(t);
}

/// S1's extended-storage disk cache: one uncached file-memory tier reached
/// by page copies, each repeated `slowdown` times, over a disk.
fn esdc(capacity: &str, extra: &str) -> String {
    format!(
        r#"
[workload]
type = "zipf"
alpha = 0.8
objects = 2000
requests = 20000
object_size = 4096
write_ratio = 0.3
seed = 5

[hierarchy]
fill = "exclusive"
write = "write-back"
{extra}

[[tier]]
name = "esdc"
tech = "FILE-MEMORY"
capacity = "{capacity}"
copies = 1
uncached = true
slowdown = 3

[backing]
tech = "HDD"

[load]
type = "closed"
clients = 1

[server]
cpus = 1

[stack]
uncached_copy_mb_s = 100
"#
    )
}

#[test]
fn uncached_copies_repeat_with_the_slowdown_and_cover_the_disk_transfers() {
    // 4096 B at 100 MB/s is 40,960 ns, three times over at slowdown 3.
    let copy = 3.0 * 40_960.0;
    let r = run(&esdc("25%", ""));
    let t = timed(&r);
    let c = &r.tiers[0].counters;
    let b = &r.backing.counters;
    assert!(c.reads > 0 && c.writes > 0 && b.reads > 0 && b.writes > 0);
    // A copy for every page that enters or leaves the tier: hits read to
    // the process, writes and fills into it, and the bounce-buffer copy of
    // every disk read and write-back.
    let copies = (c.reads + c.writes + b.reads + b.writes) as f64;
    close(
        "copy time",
        t.stack_ns * t.completed as f64,
        copy * copies,
        1e-9,
    );
    // The flush daemon's bounce copies are CPU work too: with every page
    // held (no evictions), each disk write is a flushed page, copied on the
    // CPU before the disk takes it.
    let r = run(&esdc("100%", "flush_interval = \"2ms\""));
    let t = timed(&r);
    let b = &r.backing.counters;
    assert!(r.flushes > 0 && b.writes > 0 && r.tiers[0].counters.evictions == 0);
    close(
        "CPU busy time",
        station(t, "cpu").busy_ns,
        t.stack_ns * t.completed as f64 + copy * b.writes as f64,
        1e-9,
    );
}

/// TWO_TIER with its flash tier's erase time `erase_ns` (NAND-SLC
/// otherwise), `clients` closed clients and `extra` flash tier keys.
fn erasing(erase_ns: u64, clients: u32, extra: &str) -> RunResult {
    let toml = format!(
        "{TWO_TIER}\n[techs.FLASH]\nbase = \"NAND-SLC\"\nerase_ns = {erase_ns}\n\
         [load]\ntype = \"closed\"\nclients = {clients}\n"
    )
    .replace("tech = \"NAND-SLC\"", "tech = \"FLASH\"")
    .replace(
        "capacity = \"40%\"",
        &format!("capacity = \"40%\"\n{extra}"),
    );
    run(&toml)
}

#[test]
fn erases_take_device_time_and_block_reads_unless_read_while_write() {
    // One client: every erase the wear model counts adds its erase time to
    // the flash station's busy time, nothing else changes.
    let (a, b) = (erasing(1_500_000, 1, ""), erasing(3_000_000, 1, ""));
    let erases = a.tiers[1].wear.erases.expect("NAND erases");
    assert!(erases > 10, "{erases} erases");
    assert_eq!(b.tiers[1].wear.erases, Some(erases));
    let busy = |r: &RunResult, s: &str| station(timed(r), s).busy_ns;
    assert_eq!(
        busy(&b, "flash") - busy(&a, "flash"),
        erases as f64 * 1_500_000.0
    );
    assert_eq!(busy(&a, "dram"), busy(&b, "dram"));
    // And the requests wait for them: erase 1.5 ms x erases more in all.
    let total = |r: &RunResult| timed(r).latency_ns.mean * timed(r).completed as f64;
    close(
        "latency sum",
        total(&b) - total(&a),
        erases as f64 * 1_500_000.0,
        1e-6,
    );

    // Two clients: an erase holds the flash's only channel, so reads queue
    // behind it; a medium that reads while it writes erases on its write
    // channel, and the read channel never serves one.
    let (a, b) = (erasing(1_500_000, 2, ""), erasing(3_000_000, 2, ""));
    assert!(
        station(timed(&b), "flash").queue_ns > station(timed(&a), "flash").queue_ns,
        "reads wait longer behind longer erases"
    );
    let rww = "read_while_write = true";
    let (a, b) = (erasing(1_500_000, 2, rww), erasing(3_000_000, 2, rww));
    assert_eq!(busy(&a, "flash"), busy(&b, "flash"));
    assert_eq!(
        busy(&b, "flash (writes)") - busy(&a, "flash (writes)"),
        erases as f64 * 1_500_000.0
    );
}
