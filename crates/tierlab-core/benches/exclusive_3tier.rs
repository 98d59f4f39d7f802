//! A 3-tier exclusive hierarchy (DRAM, NAND, SSD; 1:2:4 of 10% of the
//! footprint) with LRU everywhere: every DRAM eviction is a demotion.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tierlab_core::prelude::Runner;

mod common;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("exclusive_3tier");
    g.sample_size(10);
    g.throughput(Throughput::Elements(common::REQUESTS));
    let cfg = common::config(
        "[[tier]]\nname = \"dram\"\ntech = \"DRAM-DDR3\"\ncapacity = \"1.4286%\"\n\
         [[tier]]\nname = \"nand\"\ntech = \"NAND-SLC\"\ncapacity = \"2.8571%\"\n\
         [[tier]]\nname = \"ssd\"\ntech = \"SSD-SATA\"\ncapacity = \"5.7143%\"\n",
    );
    g.bench_function("lru", |b| b.iter(|| Runner::run(&cfg).unwrap().misses));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
