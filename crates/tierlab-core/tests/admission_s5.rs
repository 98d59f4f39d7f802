//! S5 (Park & Bahn 2020, docs/sources.md), file caching on fast SCM storage: an LRU
//! cache barely pays when storage is only ~30% slower than a cache access,
//! because each miss also pays the insertion of an object that is often
//! never hit again; admitting only on the second reference pays. On a hard
//! disk, plain LRU caching pays handsomely. S5 reports LRU < 3%,
//! second-reference admission 20-40% and disk caching ~70% lower access
//! time than no cache, on web and proxy traces. This reproduces the
//! qualitative claim on a proxy-like trace generated here (a Zipf hot set
//! mixed with objects requested once); the figures are printed, not tuned.
//! Run with `--nocapture` to see them.

mod common;

use tierlab_core::config::Config;
use tierlab_core::Request;

/// A proxy-like trace: with probability `one_hit`, an object never
/// requested before (and never again); otherwise Zipf(0.8) over `hot`
/// objects.
fn proxy_trace(seed: u64, hot: usize, one_hit: f64, len: usize) -> Vec<u64> {
    let mut keys = common::Keys::new(seed, hot + len);
    let zipf = keys.zipf(hot, 0.8, len);
    let mut fresh = hot;
    let mut out = Vec::with_capacity(len);
    for z in zipf {
        if keys.rng().next_f64() < one_hit {
            out.push(keys.id(fresh));
            fresh += 1;
        } else {
            out.push(z);
        }
    }
    out
}

/// Total access time of the trace through one 4 KiB-page cache of
/// `capacity` pages above `backing`.
fn access_time(trace: &[u64], backing: &str, admission: &str, capacity: u64) -> (f64, f64) {
    // S5's cost model: a hit costs t, a miss with caching Tm = T + the
    // insertion, a miss without it T, with storage T only ~30% slower than
    // t on SCM. S5's cache is the OS page cache: a hit is a software path,
    // not a bare DRAM access; an insertion is a copy into DRAM. So the tier
    // reads in t = 8.7 us + 4 KiB at DRAM bandwidth = 9.02 us, 1/1.3 of an
    // SCM read (SCM-OPTANE: 10 us + 4 KiB at 2400 MB/s = 11.71 us), and
    // writes (inserts) at DRAM cost, 0.33 us.
    let cfg = Config::from_toml_str(&format!(
        r#"
[techs.PAGE-CACHE]
base = "DRAM-DDR3"
read_ns = "8.7us"
[[tier]]
name = "page-cache"
tech = "PAGE-CACHE"
capacity = {capacity}
policy = "lru"
admission = {admission}
[backing]
tech = "{backing}"
"#
    ))
    .unwrap();
    let mut h = common::build(&cfg, true);
    for &k in trace {
        h.access(&Request::read(k, 4096));
    }
    let c = &h.tiers[0].c;
    (
        h.totals.access_time_ns,
        c.hits as f64 / (c.hits + c.misses) as f64,
    )
}

#[test]
fn second_reference_admission_pays_on_scm_where_lru_barely_does() {
    let trace = proxy_trace(5, 50_000, 0.4, 400_000);
    let capacity = 5_000;
    let mut gains = std::collections::BTreeMap::new();
    for backing in ["SCM-OPTANE", "HDD"] {
        let (none, _) = access_time(
            &trace,
            backing,
            "{ type = \"probabilistic\", p = 0.0 }",
            capacity,
        );
        for (name, adm) in [
            ("lru", "\"always\""),
            ("second-hit", "{ type = \"second-hit\", window = 50_000 }"),
        ] {
            let (t, hit) = access_time(&trace, backing, adm, capacity);
            let gain = 1.0 - t / none;
            println!(
                "{backing:10} {name:10} hit ratio {hit:.3}  access time {:.3} s  gain over no cache {:+.1}%",
                t / 1e9,
                gain * 100.0
            );
            gains.insert((backing, name), gain);
        }
    }
    let g = |b, n| gains[&(b, n)];
    // Measured here (seed 5): SCM LRU +2.8%, SCM second-hit +6.5%, HDD LRU
    // +21.9%, HDD second-hit +29.6%. The qualitative claims, with margins:
    // on SCM, second-reference admission at least doubles LRU's small gain...
    let (lru, second) = (g("SCM-OPTANE", "lru"), g("SCM-OPTANE", "second-hit"));
    assert!(second > 2.0 * lru && second > lru + 0.02, "{gains:?}");
    // ... and plain LRU caching pays several times more on a disk than on SCM.
    assert!(g("HDD", "lru") > 3.0 * lru.max(0.0), "{gains:?}");
}
