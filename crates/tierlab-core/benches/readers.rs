//! Trace readers alone: decoding oracleGeneral (read in 1 MiB chunks) and CSV
//! (one reused line buffer) into request batches, nothing simulated.
//! Targets: at least 100M req/s binary, 6M req/s CSV (BENCHMARKS.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::io::Write;
use tierlab_core::source::setup::BATCH;
use tierlab_core::source::trace::csv::{CsvOptions, CsvReader};
use tierlab_core::source::trace::oracle::OracleReader;
use tierlab_core::source::trace::TraceSource;

mod common;

fn drain(src: &mut dyn TraceSource) -> u64 {
    let mut buf = Vec::with_capacity(BATCH);
    let mut n = 0u64;
    while src.next_batch(&mut buf, BATCH).unwrap() > 0 {
        // Touch every request so the decode cannot be optimised away.
        n += buf.iter().map(|r| r.key & 1).sum::<u64>() + buf.len() as u64;
    }
    n
}

fn bench(c: &mut Criterion) {
    let oracle = common::trace();
    let csv = oracle.with_extension("csv");
    if !csv.exists() {
        let mut r = OracleReader::open(&oracle).unwrap();
        let mut out = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
        let mut buf = Vec::new();
        while r.next_batch(&mut buf, BATCH).unwrap() > 0 {
            for q in &buf {
                writeln!(out, "{},{},{}", q.time, q.key, q.size).unwrap();
            }
        }
    }
    let mut g = c.benchmark_group("readers");
    g.sample_size(10);
    g.throughput(Throughput::Elements(common::REQUESTS));
    g.bench_function("oracle", |b| {
        b.iter(|| drain(&mut OracleReader::open(&oracle).unwrap()))
    });
    g.bench_function("csv", |b| {
        b.iter(|| drain(&mut CsvReader::open(&csv, &CsvOptions::default(), false).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
