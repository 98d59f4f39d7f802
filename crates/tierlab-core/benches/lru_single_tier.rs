//! One LRU tier holding 10% of the footprint, the reference scenario
//! at a tenth of its length (see BENCHMARKS.md for the 20M-request figures).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tierlab_core::prelude::Runner;

mod common;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("single_tier");
    g.sample_size(10);
    g.throughput(Throughput::Elements(common::REQUESTS));
    for policy in ["lru", "fifo", "clock"] {
        let cfg = common::config(&format!(
            "[[tier]]\nname = \"cache\"\ntech = \"DRAM-DDR3\"\ncapacity = \"10%\"\npolicy = \"{policy}\"\n"
        ));
        g.bench_function(policy, |b| b.iter(|| Runner::run(&cfg).unwrap().misses));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
