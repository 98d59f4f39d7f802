//! The virtual-memory layer's checks: what a TLB, a page size and a memory
//! size imply for the counts, the fault sequence against the tier engine's
//! CLOCK on the page-number stream, determinism, and bad input.

use std::io::Write;
use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;
use tierlab_core::stats::RunResult;

/// A lackey trace of `n` references by two processes: runs of sequential
/// 8-byte loads and stores over a few regions, then jumps (seeded LCG).
fn lackey(n: usize, seed: u64) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let mut x = seed;
    let mut next = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut s = String::new();
    let mut addr = 0x10_0000u64;
    for i in 0..n {
        if i % 97 == 0 {
            let pid = 100 + next() % 2;
            s.push_str(&format!("=={pid}== switch\n"));
        }
        if next() % 16 == 0 {
            // A jump within 2 MiB of one of four regions.
            addr = 0x10_0000 * (1 + next() % 4) + (next() % (2 << 20));
        } else {
            addr += 8;
        }
        let op = if next() % 4 == 0 { 'S' } else { 'L' };
        s.push_str(&format!(" {op} {addr:x},8\n"));
    }
    f.write_all(s.as_bytes()).unwrap();
    f
}

fn run(trace: &std::path::Path, memory: &str, vm: &str) -> RunResult {
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"lackey\"\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = {memory}\n\
         [backing]\ntech = \"PCM-SLC\"\n[vm]\n{vm}\n",
        trace.display()
    );
    Runner::run(&Config::from_toml_str(&toml).unwrap()).unwrap()
}

#[test]
fn a_tlb_as_large_as_the_pages_misses_on_first_touches_only() {
    let t = lackey(20_000, 1);
    let r = run(t.path(), "\"64MiB\"", "tlb = { entries = 100000 }");
    let v = r.vm.unwrap();
    assert!(v.pages_touched > 100, "{}", v.pages_touched);
    assert_eq!(v.tlb_misses, v.pages_touched);
    let small = run(t.path(), "\"64MiB\"", "tlb = { entries = 8 }")
        .vm
        .unwrap();
    assert!(small.tlb_misses > small.pages_touched);
}

#[test]
fn a_page_as_large_as_the_footprint_is_one_page_per_process() {
    let t = lackey(20_000, 2);
    let r = run(t.path(), "\"2GiB\"", "page_size = \"1GiB\"");
    let v = r.vm.unwrap();
    assert_eq!(r.processes.len(), 2);
    assert_eq!(v.pages_touched, 2);
    assert_eq!(v.tlb_misses, 2);
    assert_eq!(v.minor_faults, 2);
}

#[test]
fn memory_as_large_as_the_footprint_has_no_major_fault() {
    let t = lackey(20_000, 3);
    let r = run(t.path(), "\"100%\"", "page_size = 512");
    let v = r.vm.unwrap();
    assert_eq!(v.major_faults, 0);
    assert_eq!(v.swap_outs, 0);
    assert_eq!(v.minor_faults, v.pages_touched);
    assert_eq!(v.frames, v.pages_touched);
    let tight = run(t.path(), "\"25%\"", "page_size = 512").vm.unwrap();
    assert!(tight.major_faults > 0 && tight.swap_outs > 0);
    let per: u64 = r.processes.iter().map(|p| p.references).sum();
    assert_eq!(per, v.references);
}

/// The multiprogram generator under `[vm]`: one process per program, each
/// touching its own pages from address 0 (64 B lines, 64 to a 4 KiB page);
/// with room for every page, only first touches fault.
#[test]
fn multiprogram_by_address_is_one_address_space_per_program() {
    let toml = "[workload]\ntype = \"multiprogram\"\npreset = \"s3\"\nscale = 0.001\n\
                [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"100%\"\n[vm]\n";
    let r = Runner::run(&Config::from_toml_str(toml).unwrap()).unwrap();
    let v = r.vm.unwrap();
    let pids: Vec<u32> = r.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, (1..=8).collect::<Vec<u32>>());
    // S3's resident sizes x 0.001 in 4 KiB pages, each rounded.
    let pages: u64 = [873u64, 1600, 679, 501, 623, 123, 409, 828]
        .iter()
        .map(|m| ((m * 256) as f64 * 0.001).round() as u64)
        .sum();
    assert_eq!(v.pages_touched, pages);
    assert_eq!(v.references, 4 * 64 * pages);
    assert_eq!((v.major_faults, v.minor_faults), (0, pages));
}

/// The page-level misses equal the tier engine's CLOCK on the page-number
/// stream (the lackey reader keyed by 4 KiB page, sizes ignored, frames as
/// the capacity): the fault sequence is CLOCK's miss sequence.
#[test]
fn faults_are_clocks_misses_on_the_page_stream() {
    // One process: the tier engine has one key space.
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let t = lackey(30_000, 4);
    let text = std::fs::read_to_string(t.path()).unwrap();
    let one: String = text
        .lines()
        .filter(|l| !l.starts_with("=="))
        // Aligned, so that no reference straddles two pages.
        .map(|l| {
            let (head, rest) = l.split_at(3);
            let (addr, _) = rest.split_once(',').unwrap();
            let a = u64::from_str_radix(addr, 16).unwrap() & !7;
            format!("{head}{a:x},8\n")
        })
        .collect();
    f.write_all(one.as_bytes()).unwrap();
    let v = run(f.path(), "\"256KiB\"", "tlb = { entries = 16 }")
        .vm
        .unwrap();
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"lackey\"\nunit_size = true\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 64\npolicy = \"clock\"\n",
        f.path().display()
    );
    let tiers = Runner::run(&Config::from_toml_str(&toml).unwrap()).unwrap();
    assert_eq!(v.frames, 64);
    assert_eq!(v.minor_faults + v.major_faults, tiers.misses);
    assert!(v.major_faults > 0);
}

#[test]
fn the_memory_tier_wears_by_the_pages_brought_in() {
    // Each fault (and page read ahead) writes one page into memory; the
    // rates are over the memory's capacity in bytes and the run's time.
    let t = lackey(20_000, 3);
    let r = run(t.path(), "\"256KiB\"", "");
    let v = r.vm.as_ref().unwrap();
    let m = &r.tiers[0];
    assert!(v.pages_read > 0);
    assert_eq!(m.wear.bytes_programmed, m.counters.bytes_in);
    assert_eq!(m.wear.bytes_programmed % 4096, 0);
    assert!(m.wear.bytes_programmed >= (v.minor_faults + v.major_faults) * 4096);
    let per_day = m.wear.bytes_programmed as f64 / (r.total_time_ns / 1e9) * 86_400.0;
    let dwpd = m.wear.dwpd.unwrap();
    assert!((dwpd - per_day / m.capacity as f64).abs() <= 1e-9 * dwpd);
    assert!(m.wear.tbw_tb.is_some());
}

/// Runs of repeated pages are taken whole (the policy told once per run)
/// or cut at every reference (a timeline row each): the same figures, with
/// the policies whose repeat hits are one step (CLOCK, LRU, ARC) and one
/// whose are not (LFU), with and without TLB latency and compute time.
#[test]
fn runs_of_repeats_cut_anywhere_give_the_same_figures() {
    let t = lackey(20_000, 6);
    for vm in [
        "",
        "policy = \"lru\"\ntlb = { entries = 8, latency_ns = 0.7 }",
        "policy = \"arc\"\nread_ahead = 4",
        "policy = \"lfu\"",
        "policy = { type = \"clock\", bits = 3 }",
    ] {
        let mut a = None;
        for (interval, compute) in [
            (1, 0.0),
            (7, 0.0),
            (1_000_000, 0.0),
            (1, 2.5),
            (1_000_000, 2.5),
        ] {
            let toml = format!(
                "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"lackey\"\n\
                 [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"96KiB\"\n\
                 [backing]\ntech = \"PCM-SLC\"\n[run]\ninterval = {interval}\ncompute = {compute}\n\
                 [vm]\n{vm}\n",
                t.path().display()
            );
            let mut r = Runner::run(&Config::from_toml_str(&toml).unwrap()).unwrap();
            r.timeline = Default::default();
            let key = (compute, r);
            match &a {
                Some((c, prev)) if *c == compute => {
                    assert_eq!(prev, &key.1, "{vm}, interval {interval}")
                }
                _ => a = Some(key),
            }
        }
    }
}

/// A memtrace is read in place by the serial loop (its records, not
/// decoded requests): the same figures and timelines as the lackey text it
/// was converted from, plain or zstd, whole or cut by `max_requests`.
#[test]
fn a_memtrace_read_in_place_gives_its_lackey_texts_figures() {
    use tierlab_core::source::Source;
    let t = lackey(30_000, 8);
    let dir = tempfile::tempdir().unwrap();
    let lk = Source::Lackey(t.path().to_path_buf(), 0, false, false);
    let plain = dir.path().join("t.memtrace");
    let zst = dir.path().join("t.memtrace.zst");
    let n = tierlab_core::source::trace::memtrace::write_memtrace(&lk, &plain, |_| true).unwrap();
    assert_eq!(n, 30_000);
    let z = std::fs::File::create(&zst).unwrap();
    zstd::stream::copy_encode(std::fs::File::open(&plain).unwrap(), z, 3).unwrap();
    let run_as = |path: &std::path::Path, format: &str, vm: &str, limit: u64| {
        let toml = format!(
            "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"{format}\"\n\
             [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"96KiB\"\n\
             [backing]\ntech = \"PCM-SLC\"\n[run]\ninterval = 777\nmax_requests = {limit}\n\
             [vm]\n{vm}\n",
            path.display()
        );
        let mut r = Runner::run(&Config::from_toml_str(&toml).unwrap()).unwrap();
        r.workload = String::new();
        r
    };
    for vm in [
        "",
        "policy = \"lru\"\ntlb = { entries = 8, latency_ns = 0.7 }",
        "policy = \"arc\"\nread_ahead = 4\nfirst_touch = \"swap\"",
        "page_size = 512\ntlb = { entries = 16, ways = 4 }\ntlb2 = { entries = 64 }",
        "huge_page = \"64KiB\"\npage_size = 4096",
    ] {
        for limit in [30_000, 12_345] {
            let want = run_as(t.path(), "lackey", vm, limit);
            assert!(!want.timeline.requests.is_empty());
            for p in [&plain, &zst] {
                assert_eq!(
                    run_as(p, "memtrace", vm, limit),
                    want,
                    "{vm}, {}",
                    p.display()
                );
            }
        }
    }
}

/// A lackey trace of 8-byte loads at the given byte addresses.
fn loads(addrs: impl IntoIterator<Item = u64>) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    let s: String = addrs.into_iter().map(|a| format!(" L {a:x},8\n")).collect();
    f.write_all(s.as_bytes()).unwrap();
    f
}

const REGION: u64 = 0x4000_0000; // 2 MiB-aligned

/// `pages` 4 KiB pages of the region, in order, `passes` times.
fn sweep(pages: u64, passes: u64) -> tempfile::NamedTempFile {
    loads((0..passes).flat_map(move |_| (0..pages).map(|p| REGION + p * 4096 + 8)))
}

/// khugepaged's rule: a 2 MiB region collapses once all 512 of its 4 KiB
/// pages are resident, not before; after it, the whole footprint takes one
/// huge TLB entry (a second pass misses once), and a walk is one level
/// shorter (3 references, not 4).
#[test]
fn a_full_region_becomes_one_huge_page() {
    let huge = "huge_page = \"2MiB\"\ntlb = { entries = 4 }\ntlb_huge = { entries = 1 }";
    let v = run(sweep(511, 2).path(), "\"4MiB\"", huge).vm.unwrap();
    assert_eq!(v.huge_promotions, Some(0), "511 of 512 pages: no collapse");
    assert_eq!(v.tlb_misses, 2 * 511);
    let v = run(sweep(512, 2).path(), "\"4MiB\"", huge).vm.unwrap();
    assert_eq!(v.huge_promotions, Some(1));
    // Pass 1: 512 base misses; pass 2: one huge translation.
    assert_eq!(v.tlb_misses, 512 + 1);
    assert_eq!(v.walk_references, 512 * 4 + 3);
    assert_eq!(v.minor_faults, 512);
    assert_eq!(v.major_faults, 0);
    // Memory below a huge page never holds a whole region.
    let v = run(sweep(512, 2).path(), "\"1MiB\"", huge).vm.unwrap();
    assert_eq!(v.huge_promotions, Some(0));
}

/// A huge page is evicted and swapped back in whole: 2 MiB each way.
#[test]
fn a_huge_page_moves_whole() {
    // The region, then 4 MiB (two regions) elsewhere, then the region
    // again, with 3 MiB of memory under LRU: each huge page is the oldest
    // when room runs out.
    let other = 0x8000_0000u64;
    let t = loads(
        (0..512)
            .map(|p| REGION + p * 4096)
            .chain((0..512).map(|p| other + p * 4096))
            .chain((0..512).map(|p| other + (512 + p) * 4096))
            .chain((0..4).map(|p| REGION + p * 4096)),
    );
    let r = run(
        t.path(),
        "\"3MiB\"",
        "huge_page = \"2MiB\"\npolicy = \"lru\"",
    );
    let v = r.vm.unwrap();
    assert_eq!(
        v.huge_promotions,
        Some(3),
        "the other two regions collapsed too"
    );
    assert_eq!(v.major_faults, 1, "the region comes back in one fault");
    assert_eq!(r.backing.counters.bytes_read, 2 << 20);
    assert!(r.backing.counters.bytes_written >= 2 << 20);
    assert_eq!(r.backing.counters.bytes_written % (2 << 20), 0);
}

/// With huge pages that never form (memory below a region), every figure
/// is as without them: `page_size` alone is unchanged.
#[test]
fn huge_pages_that_never_form_change_nothing() {
    let t = lackey(20_000, 8);
    for policy in ["clock", "lru", "lfu"] {
        let base = format!("policy = \"{policy}\"\nread_ahead = 4\nfirst_touch = \"swap\"");
        let (a, mut b) = pair(t.path(), "\"256KiB\"", &base, "huge_page = \"2MiB\"");
        let v = b.vm.as_mut().unwrap();
        assert_eq!(v.huge_promotions.take(), Some(0));
        assert_eq!(a, b, "{policy}");
    }
}

#[test]
fn same_seed_same_result() {
    let t = lackey(10_000, 5);
    let a = run(t.path(), "\"30%\"", "policy = \"random\"");
    let b = run(t.path(), "\"30%\"", "policy = \"random\"");
    assert_eq!(a, b);
}

/// Runs of `vm`, and of `vm` with `extra`, over the same trace and memory.
fn pair(trace: &std::path::Path, memory: &str, vm: &str, extra: &str) -> (RunResult, RunResult) {
    (
        run(trace, memory, vm),
        run(trace, memory, &format!("{vm}\n{extra}")),
    )
}

const ADAPTIVE: &str = "read_ahead_mode = \"adaptive\"";

/// Adaptive read-ahead (vm/readahead.rs) with a largest window of one page
/// is no read-ahead, as fixed with one page is: every figure the same.
#[test]
fn adaptive_read_ahead_of_one_page_is_fixed_of_one() {
    let t = lackey(20_000, 9);
    let base = "first_touch = \"swap\"\nread_ahead = 1";
    let (a, mut b) = pair(t.path(), "\"256KiB\"", base, ADAPTIVE);
    let v = b.vm.as_mut().unwrap();
    assert_eq!(v.read_ahead_hits.take(), Some(0));
    assert_eq!(a, b);
    assert!(a.vm.unwrap().major_faults > 100);
}

/// A sequential stream uses every page read ahead, so Linux's window
/// doubles from 1 to the maximum and stays there. Over 4096 pages in
/// order with a maximum of 128: major faults at pages 0, 1, 2 (windows 1,
/// 2, 2: aligned blocks, so the fault at 1 reads nothing new and the one
/// at 2 reads page 3), 4 (1 hit: 4), 8, 16, 32, 64 (hits 3..31: 8..64),
/// 128 (63 hits: 128), then one per 128 pages: 9 + 30 faults. Fixed
/// read-ahead faults once per 128-page cluster: 32.
#[test]
fn a_sequential_stream_ramps_the_window_up_to_the_maximum() {
    let t = loads((0..4096u64).map(|p| REGION + p * 4096));
    let vm = "first_touch = \"swap\"\nread_ahead = 128";
    let (fixed, v) = pair(t.path(), "\"64MiB\"", vm, ADAPTIVE);
    let (fixed, v) = (fixed.vm.unwrap(), v.vm.unwrap());
    assert_eq!(fixed.major_faults, 32);
    assert_eq!(v.major_faults, 39);
    assert_eq!(v.read_ahead_pages, 4096 - 39);
    assert_eq!(v.read_ahead_hits, Some(4096 - 39));
    assert_eq!(v.read_ahead_unused, 0);
    assert_eq!(v.pages_read, 4096);
}

/// A random stream (no page next to the one before, no page twice) never
/// uses a page read ahead, so the window stays at the faulting page alone,
/// where fixed read-ahead reads a whole cluster per fault.
#[test]
fn a_random_stream_keeps_the_window_at_one_page() {
    let mut x = 11u64;
    let mut seen = std::collections::HashSet::new();
    let mut pages = vec![];
    while pages.len() < 3000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let p = (x >> 33) % (1 << 20);
        let next_to_last = pages.last().is_some_and(|&l: &u64| l.abs_diff(p) <= 1);
        if !next_to_last && seen.insert(p) {
            pages.push(p);
        }
    }
    let t = loads(pages.iter().map(|p| REGION + p * 4096));
    let vm = "first_touch = \"swap\"\nread_ahead = 128";
    let (fixed, v) = pair(t.path(), "\"64MiB\"", vm, ADAPTIVE);
    let (fixed, v) = (fixed.vm.unwrap(), v.vm.unwrap());
    assert!(
        fixed.read_ahead_pages > 10_000,
        "{}",
        fixed.read_ahead_pages
    );
    assert_eq!(v.major_faults, 3000);
    assert_eq!((v.read_ahead_pages, v.pages_read), (0, 3000));
    assert_eq!(v.read_ahead_hits, Some(0));
}

#[test]
fn adaptive_read_ahead_same_seed_same_result() {
    let t = lackey(20_000, 10);
    let vm = "policy = \"random\"\nfirst_touch = \"swap\"\nread_ahead = 64\nread_ahead_mode = \"adaptive\"";
    let a = run(t.path(), "\"128KiB\"", vm);
    let b = run(t.path(), "\"128KiB\"", vm);
    assert_eq!(a, b);
    let v = a.vm.unwrap();
    assert!(v.read_ahead_hits.unwrap() > 0 && v.read_ahead_pages > 0);
}

fn config_error(memory: &str, vm: &str, workload: &str) -> String {
    let toml = format!(
        "[workload]\n{workload}\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = {memory}\n[vm]\n{vm}\n"
    );
    match Config::from_toml_str(&toml) {
        Err(e) => e.to_string(),
        Ok(c) => match Runner::new(&c) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted: {toml}"),
        },
    }
}

#[test]
fn bad_input_names_the_key_or_the_file() {
    let t = lackey(10, 6);
    let w = format!(
        "type = \"trace\"\npath = {:?}\nformat = \"lackey\"",
        t.path().display()
    );
    for (memory, vm, want) in [
        (
            "\"1MiB\"",
            "page_size = 3000",
            "vm.page_size: 3000 is out of range; a power of two",
        ),
        (
            "\"1MiB\"",
            "page_size = 256",
            "vm.page_size: 256 is out of range",
        ),
        (
            "\"1MiB\"",
            "tlb = { entries = 4, ways = 8 }",
            "vm.tlb.ways: 8 is out of range; 1 to entries (4)",
        ),
        (
            "\"1MiB\"",
            "[run]\npasses = 2",
            "run.passes: 2 given; a [vm] run reads its trace once",
        ),
        (
            "\"1MiB\"",
            "[run]\nwarmup = 1000",
            "run.warmup: not used under [vm]",
        ),
        (
            "\"1MiB\"",
            "tlb = { entries = 6, ways = 4 }",
            "vm.tlb.ways: 4 does not divide entries (6)",
        ),
        (
            "\"1MiB\"",
            "tlb2 = { entries = 0 }",
            "vm.tlb2.entries: must be at least 1",
        ),
        (
            "1000",
            "",
            "tier[0].capacity: 1000 B holds no page of vm.page_size = 4096 B",
        ),
        (
            "\"1%\"",
            "page_size = \"1GiB\"",
            "tier[0].capacity: \"1%\" is",
        ),
        (
            "\"1MiB\"",
            "read_ahead = 129",
            "vm.read_ahead: 129 is out of range",
        ),
        (
            "\"1MiB\"",
            "read_ahead_mode = \"sometimes\"",
            "vm.read_ahead_mode: unknown variant `sometimes`, expected `fixed` or `adaptive`",
        ),
        (
            "\"1MiB\"",
            "read_ahead = 100\nread_ahead_mode = \"adaptive\"",
            "vm.read_ahead: 100 is not a power of two",
        ),
        (
            "\"1MiB\"",
            "colour = 1",
            "vm.colour: unknown field `colour`",
        ),
        (
            "\"1MiB\"",
            "huge_page = \"3MiB\"",
            "vm.huge_page: 3145728 is out of range; a power of two larger than vm.page_size",
        ),
        (
            "\"1MiB\"",
            "page_size = \"4KiB\"\nhuge_page = \"4KiB\"",
            "vm.huge_page: 4096 is out of range",
        ),
        (
            "\"1MiB\"",
            "tlb_huge = { entries = 8 }",
            "vm.tlb_huge: a TLB for huge pages needs vm.huge_page",
        ),
        (
            "\"1MiB\"",
            "huge_page = \"2MiB\"\ntlb_huge = { entries = 8, ways = 3 }",
            "vm.tlb_huge.ways: 3 does not divide entries (8)",
        ),
    ] {
        let e = config_error(memory, vm, &w);
        assert!(e.starts_with(want), "{vm}:\n{e}");
    }
    let e = config_error("\"1MiB\"", "", &format!("{w}\npage_size = 512"));
    assert!(
        e.starts_with("workload.page_size: not used under [vm]"),
        "{e}"
    );
    let e = config_error(
        "\"1MiB\"",
        "",
        "type = \"zipf\"\nobjects = 10\nrequests = 10",
    );
    assert!(
        e.starts_with("workload: a generated workload has no memory addresses"),
        "{e}"
    );
    // A lackey file with no reference in it.
    let mut empty = tempfile::NamedTempFile::new().unwrap();
    empty.write_all(b"==1== Lackey\n==1== done\n").unwrap();
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"lackey\"\n\
         [[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"1MiB\"\n[vm]\n",
        empty.path().display()
    );
    let e = Runner::run(&Config::from_toml_str(&toml).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains(&empty.path().display().to_string()), "{e}");
}

/// memtrace reads at least 20x faster than the lackey text of the same
/// references (the reader alone, best of three). A speed claim measured
/// by wall time, which the shared CI machine cannot hold to; run on demand:
/// `cargo test --release -p tierlab-core --test vm_checks -- --ignored`.
#[test]
#[ignore = "timed: a speed claim, run on demand in release (see the doc comment)"]
fn memtrace_reads_20x_faster_than_lackey() {
    use tierlab_core::source::Source;
    let t = lackey(2_000_000, 7);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.memtrace");
    let lk = Source::Lackey(t.path().to_path_buf(), 0, false, false);
    let n = tierlab_core::source::trace::memtrace::write_memtrace(&lk, &out, |_| true).unwrap();
    assert_eq!(n, 2_000_000);
    let time = |s: &Source| {
        (0..3)
            .map(|_| {
                let start = std::time::Instant::now();
                let mut src = tierlab_core::source::open(s).unwrap();
                let mut buf = Vec::new();
                let mut sum = 0u64;
                while src.next_batch(&mut buf, 4096).unwrap() > 0 {
                    sum = buf.iter().fold(sum, |a, r| a ^ r.key);
                }
                std::hint::black_box(sum);
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (a, b) = (time(&lk), time(&Source::Memtrace(out)));
    eprintln!("lackey {a:.3} s, memtrace {b:.4} s: {:.1}x", a / b);
    assert!(a / b >= 20.0, "{:.1}x", a / b);
}
