//! Miss-ratio curves over the bench trace (Zipf 1.0, 2M requests, 100K
//! objects, oracleGeneral): exact LRU by stack distances and SHARDS at rate
//! 0.01, whole curve in objects. docs/mrc.md has the 20M-request figures.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tierlab_core::mrc::{exact, shards, MrcOptions, Sampling};
use tierlab_core::source::Source;

// Shared with the simulation benches; this one needs only the trace.
#[allow(dead_code)]
mod common;

fn bench(c: &mut Criterion) {
    let source = Source::Oracle(common::trace());
    let opts = MrcOptions {
        unit_size: true,
        sizes: None,
    };
    let mut g = c.benchmark_group("mrc");
    g.sample_size(10);
    g.throughput(Throughput::Elements(common::REQUESTS));
    g.bench_function("exact_lru", |b| {
        b.iter(|| exact(&source, &opts, |_| true).unwrap().sizes.len())
    });
    g.bench_function("shards_0.01", |b| {
        b.iter(|| {
            shards(&source, Sampling::Rate(0.01), &opts, |_| true)
                .unwrap()
                .sizes
                .len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
