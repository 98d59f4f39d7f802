//! Runs a config with the engine alone, no Python: for profiling
//! (`perf record cargo run --release --example run -- CONFIG.toml`).
//! With `TIERLAB_RUN_JSON=1` it also prints the result's JSON, which
//! checks that a change to the engine leaves every count as it was. A
//! `[vm]` config runs the virtual-memory loop, as `tierlab run` does.

use std::time::Instant;
use tierlab_core::prelude::{Config, Runner};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run CONFIG.toml");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    let cfg = Config::from_toml_str(&text).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let t = Instant::now();
    match Runner::run(&cfg) {
        Ok(r) => {
            let s = t.elapsed().as_secs_f64();
            println!(
                "{} requests, miss ratio {:.6}, {:.3} s, {:.2} M req/s",
                r.requests,
                r.miss_ratio,
                s,
                r.requests as f64 / s / 1e6
            );
            if std::env::var_os("TIERLAB_RUN_JSON").is_some() {
                println!(
                    "{}",
                    serde_json::to_string(&r).expect("a result serialises")
                );
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
