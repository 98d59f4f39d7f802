//! Memory pressure (`[vm.pressure]`: watermarks, kswapd, direct reclaim)
//! and Memorage (`[vm.memorage]`: borrowing the storage device's free
//! capacity): S3's checks and the watermark property.

use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;
use tierlab_core::stats::RunResult;

/// S3's eight programs at `scale` (the multiprogram generator by byte
/// address), 4.4 MiB x `mem` of memory, S3's fault costs, a ramdisk-like
/// swap device, and `extra` TOML appended.
fn s3(scale: f64, mem: &str, extra: &str) -> String {
    format!(
        "[workload]\ntype = \"multiprogram\"\npreset = \"s3\"\nscale = {scale}\nseed = 7\n\
         [workload.multiprogram]\nrequests = 1_500_000\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"{mem}\"\n\
         [backing]\ntech = \"DRAM-DDR3\"\n\
         [vm]\nfault_minor_ns = 21600\nfault_major_ns = 58600\n\
         [vm.cpu]\ncores = 4\nthreads_per_core = 2\n{extra}\n"
    )
}

fn run(toml: &str) -> RunResult {
    Runner::run(&Config::from_toml_str(toml).unwrap()).unwrap()
}

fn error(toml: &str) -> String {
    match Config::from_toml_str(toml) {
        Err(e) => e.to_string(),
        Ok(c) => match Runner::run(&c) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {toml}"),
        },
    }
}

const POOL: &str = "[vm.memorage]\npsd = \"64MiB\"\noccupancy = 0.0\nchunk = \"4MiB\"\n\
                    transfer_ns_per_gib = 1e6\n";

/// A deterministic mixer for the randomized property test.
fn lcg(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *x >> 33
}

#[test]
fn pressure_reclaims_ahead_and_honours_min() {
    // 5.6 MiB of resident sets on 4.4 MiB.
    let r = run(&s3(0.001, "4.4MiB", "[vm.pressure]\n"));
    let v = r.vm.unwrap();
    let [min, low, high] = v.watermarks.unwrap();
    // Linux 3.2: sqrt(16 x 4505 KiB) = 268 KiB = 67 pages.
    assert_eq!((min, low, high), (67, 83, 100));
    assert!(v.kswapd_scans.unwrap() > 0);
    assert!(v.kswapd_pages.unwrap() > 0);
    assert!(v.major_faults > 0);
    assert!(v.min_free_pages.unwrap() >= min, "{v:?}");
    // Every process ran all its references.
    assert_eq!(r.processes.len(), 8);
    assert!(r.processes.iter().all(|p| p.runtime_ns > 0.0));
    // The timeline's columns.
    let t = &r.timeline;
    assert_eq!(t.free_pages.len(), t.requests.len());
    assert_eq!(
        t.swap_out_pages.iter().sum::<u64>(),
        v.swap_outs,
        "swap-outs add up over the timeline"
    );
    assert_eq!(t.swap_in_pages.iter().sum::<u64>(), v.pages_read);
    assert!(r.memorage.is_none());
}

/// Watermarks honoured at every step: seeded random watermarks, memory
/// sizes, read-ahead and reclaim costs; after every allocation at least
/// `min` frames are free (the run records the fewest), and nothing is lost.
#[test]
fn watermarks_hold_at_every_step_randomized() {
    let mut x = 12345u64;
    for _ in 0..6 {
        let frames = 600 + lcg(&mut x) % 800;
        let min = 1 + lcg(&mut x) % 60;
        let low = min + lcg(&mut x) % 40;
        let high = low + lcg(&mut x) % 80;
        let ra = [1, 4, 8][(lcg(&mut x) % 3) as usize];
        let ns = (lcg(&mut x) % 3) as f64 * 500.0;
        let pool = if lcg(&mut x).is_multiple_of(2) {
            POOL
        } else {
            ""
        };
        let toml = s3(
            0.001,
            &format!("{}KiB", frames * 4),
            &format!(
                "[vm.pressure]\nmin = {min}\nlow = {low}\nhigh = {high}\n\
                 reclaim_ns_per_page = {ns}\n{pool}"
            ),
        )
        .replace("[vm.cpu]", &format!("read_ahead = {ra}\n[vm.cpu]"));
        let r = run(&toml);
        let v = r.vm.as_ref().unwrap();
        assert!(v.min_free_pages.unwrap() >= min, "{toml}\n{v:?}");
        assert!(r.timeline.free_pages.iter().all(|&f| f >= min), "{toml}");
        let refs: u64 = r.processes.iter().map(|p| p.references).sum();
        assert_eq!(refs, v.references);
        for p in &r.processes {
            let sum = p.user_ns.unwrap()
                + p.system_ns.unwrap()
                + p.blocked_ns.unwrap()
                + p.preempted_ns.unwrap();
            assert!(
                (sum - p.runtime_ns).abs() <= 1e-6 * p.runtime_ns + 2.0,
                "{sum} vs {}",
                p.runtime_ns
            );
        }
    }
}

/// S3's check: no storage occupancy and a chunk as large as the deficit:
/// Memorage never swaps.
#[test]
fn memorage_with_a_free_psd_never_swaps() {
    let r = run(&s3(0.001, "4.4MiB", POOL));
    let v = r.vm.as_ref().unwrap();
    let m = r.memorage.as_ref().unwrap();
    assert_eq!((v.swap_outs, v.major_faults), (0, 0), "{v:?}\n{m:?}");
    assert_eq!(v.kswapd_pages, Some(0));
    assert!(m.borrows >= 1 && m.borrowed_bytes_max >= 4 << 20);
    assert!(m.swap_outs_avoided > 0 && m.remote_references > 0);
    assert!(m.transfer_ns > 0.0);
    // The baseline of the same config swaps.
    let b = run(&s3(0.001, "4.4MiB", &format!("{POOL}enabled = false\n")));
    let bv = b.vm.unwrap();
    assert!(bv.swap_outs > 0 && bv.major_faults > 0);
    assert!(b.memorage.is_none());
    // Memorage finishes first.
    assert!(r.total_time_ns < b.total_time_ns);
}

/// S3's check: a full PSD lends nothing, so Memorage is the baseline.
#[test]
fn memorage_with_a_full_psd_is_the_baseline() {
    let full = POOL.replace("occupancy = 0.0", "occupancy = 1.0");
    let mut r = run(&s3(0.001, "4.4MiB", &full));
    let b = run(&s3(0.001, "4.4MiB", &format!("{full}enabled = false\n")));
    let m = r.memorage.take().unwrap();
    assert_eq!((m.borrows, m.borrowed_bytes_max), (0, 0));
    assert_eq!(r.vm, b.vm);
    assert_eq!(r.processes, b.processes);
    assert_eq!(r.total_time_ns, b.total_time_ns);
    assert_eq!(r.timeline, b.timeline);
}

/// S3's check: one program alone with enough memory runs as fast under
/// both.
#[test]
fn one_program_with_enough_memory_runs_equally_fast() {
    let one = |extra: &str| {
        let toml = format!(
            "[workload]\ntype = \"multiprogram\"\nseed = 3\n\
             [[workload.multiprogram.program]]\nname = \"a\"\nrss = \"2MiB\"\nsequential = 1.0\n\
             [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"16MiB\"\n\
             [backing]\ntech = \"DRAM-DDR3\"\n\
             [vm]\nfault_minor_ns = 21600\n[vm.cpu]\ncores = 1\n{extra}"
        );
        run(&toml)
    };
    let m = one(POOL);
    let b = one(&format!("{POOL}enabled = false\n"));
    assert_eq!(m.memorage.as_ref().unwrap().borrows, 0);
    assert_eq!(m.processes, b.processes);
    assert_eq!(m.total_time_ns, b.total_time_ns);
}

/// Storage taking its capacity back: the occupancy rises to 1 during the
/// run; every chunk goes back and the pages that find no frame go.
#[test]
fn storage_shortage_takes_capacity_back() {
    let series = POOL.replace("occupancy = 0.0", "occupancy = [[0.0, 0.0], [0.01, 1.0]]");
    let r = run(&s3(0.001, "3MiB", &series));
    let m = r.memorage.as_ref().unwrap();
    assert!(m.borrows >= 1);
    assert_eq!(m.returns, m.borrows, "{m:?}");
    assert!(m.evicted_on_return > 0, "{m:?}");
    assert_eq!(*r.timeline.borrowed_bytes.last().unwrap(), 0);
}

#[test]
fn bad_input_names_the_key() {
    let base = s3(0.001, "4.4MiB", "");
    let cases = [
        ("[vm.pressure]\nmin = 10\nlow = 5\n", "vm.pressure.low"),
        (
            "[vm.pressure]\nmin = 10\nlow = 50\nhigh = 40\n",
            "vm.pressure.high",
        ),
        ("[vm.pressure]\nhigh = \"8MiB\"\n", "vm.pressure.high"),
        (
            &POOL.replace("chunk = \"4MiB\"", "chunk = \"128MiB\""),
            "vm.memorage.chunk",
        ),
        (
            &POOL.replace("occupancy = 0.0", "occupancy = 1.5"),
            "vm.memorage.occupancy",
        ),
        (
            &POOL.replace("occupancy = 0.0", "occupancy = -0.1"),
            "vm.memorage.occupancy",
        ),
        (
            &POOL.replace("occupancy = 0.0", "occupancy = [[1.0, 0.5], [0.5, 0.2]]"),
            "vm.memorage.occupancy[1]",
        ),
        (
            &POOL.replace("occupancy = 0.0", "occupancy = \"lots\""),
            "vm.memorage.occupancy: invalid type: string \"lots\", expected a fraction from 0 to 1",
        ),
        (
            "[vm.pressure]\nmin = -5\n",
            "vm.pressure.min: invalid value: integer `-5`, expected a whole number of pages",
        ),
        (
            &POOL
                .replace("remote_speed", "x")
                .replace("transfer", "remote_speed = 2.0\ntransfer"),
            "vm.memorage",
        ),
    ];
    for (extra, key) in cases {
        let e = error(&format!("{base}{extra}"));
        assert!(e.contains(key), "{extra}: {e}");
    }
    // Pressure needs [vm.cpu]; zero hardware threads.
    let no_cpu = base.replace("[vm.cpu]\ncores = 4\nthreads_per_core = 2\n", "");
    let e = error(&format!("{no_cpu}[vm.pressure]\n"));
    assert!(e.contains("vm.pressure") && e.contains("[vm.cpu]"), "{e}");
    let e = error(&base.replace("cores = 4", "cores = 0"));
    assert!(e.contains("vm.cpu.cores"), "{e}");
    let e = error(&format!(
        "{}[vm.pressure]\n",
        base.replace("[vm]\n", "[vm]\npolicy = \"arc\"\n")
    ));
    assert!(e.contains("vm.policy"), "{e}");
}
