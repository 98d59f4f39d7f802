//! A miss-ratio curve with the engine alone, no Python: for timing a pass
//! and for comparing curves between builds byte for byte
//! (`cargo run --release --example mrc -- TRACE --shards 0.01 > a.csv`).
//! The curve goes to stdout as `size,miss_ratio` (shortest round-trip
//! decimals, so equal text means equal values); each pass's time to stderr.

use std::time::Instant;
use tierlab_core::prelude::{exact, shards, MrcOptions, Sampling, Source};

const USAGE: &str = "usage: mrc TRACE.oracleGeneral.bin [--shards RATE | --shards-size N] \
                     [--bytes] [--repeat K]";

fn fail(msg: &str) -> ! {
    eprintln!("{msg}\n{USAGE}");
    std::process::exit(2)
}

fn value<T: std::str::FromStr>(args: &mut impl Iterator<Item = String>, flag: &str) -> T {
    args.next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| fail(&format!("{flag} needs a number")))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut sampling = None;
    let mut unit_size = true;
    let mut repeat = 1usize;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--shards" => sampling = Some(Sampling::Rate(value(&mut args, &a))),
            "--shards-size" => sampling = Some(Sampling::Size(value(&mut args, &a))),
            "--bytes" => unit_size = false,
            "--repeat" => repeat = value(&mut args, &a),
            _ if a.starts_with('-') => fail(&format!("unknown option {a}")),
            _ => path = Some(a),
        }
    }
    let path = path.unwrap_or_else(|| fail("give a trace"));
    let source = Source::Oracle(path.into());
    let opts = MrcOptions {
        unit_size,
        sizes: None,
    };
    let mut curve = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let r = match sampling {
            Some(s) => shards(&source, s, &opts, |_| true),
            None => exact(&source, &opts, |_| true).map_err(Into::into),
        };
        let secs = t.elapsed().as_secs_f64();
        let m = r.unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        });
        eprintln!(
            "{secs:.4} s, {} requests, {} sampled",
            m.requests, m.sampled
        );
        curve = Some(m);
    }
    let m = curve.expect("at least one pass");
    let mut out = String::new();
    for (s, r) in m.sizes.iter().zip(&m.miss_ratios) {
        out.push_str(&format!("{s},{r}\n"));
    }
    print!("{out}");
}
