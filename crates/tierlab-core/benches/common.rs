//! Shared set-up of the criterion benches: a Zipf(1.0) oracleGeneral trace
//! written once under target/, so every bench measures reading and
//! simulating a real file as `tierlab run` does.

use std::path::PathBuf;
use tierlab_core::config::Config;
use tierlab_core::source::tools::convert_to_oracle;

pub const REQUESTS: u64 = 2_000_000;
pub const OBJECTS: u64 = 100_000;

pub fn trace() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!(
        "bench-zipf1-{OBJECTS}-{REQUESTS}.oracleGeneral.bin"
    ));
    if !path.exists() {
        let gen = Config::from_toml_str(&format!(
            "[workload]\ntype = \"zipf\"\nalpha = 1.0\nobjects = {OBJECTS}\nrequests = {REQUESTS}\nseed = 42\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 1\n"
        ))
        .expect("bench workload config");
        let source = gen.workload.as_ref().unwrap().source().unwrap();
        convert_to_oracle(&source, &path, |_| true).expect("write the bench trace");
    }
    path
}

/// A config over the bench trace with the given tier tables.
// Each bench compiles this module on its own; the readers bench needs no config.
#[allow(dead_code)]
pub fn config(tiers: &str) -> Config {
    let t = trace();
    Config::from_toml_str(&format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nunit_size = true\n[hierarchy]\nfill = \"exclusive\"\n{tiers}",
        t.to_str().unwrap()
    ))
    .expect("bench config")
}
