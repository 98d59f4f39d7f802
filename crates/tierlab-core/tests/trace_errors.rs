//! Bad trace files give precise errors (the file and the byte offset or line);
//! oracleGeneral files round-trip; the converter computes next-access times.

use std::io::Write;
use std::path::Path;
use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;
use tierlab_core::source::tools::convert_to_oracle;
use tierlab_core::source::tools::trace_stats;
use tierlab_core::source::trace::csv::CsvOptions;
use tierlab_core::source::trace::oracle::{OracleReader, OracleWriter};
use tierlab_core::source::trace::{TraceError, TraceSource};
use tierlab_core::source::Source;
use tierlab_core::{Op, Request};

fn record(time_s: u32, key: u64, size: u32, next: i64) -> Vec<u8> {
    let mut r = Vec::with_capacity(24);
    r.extend_from_slice(&time_s.to_le_bytes());
    r.extend_from_slice(&key.to_le_bytes());
    r.extend_from_slice(&size.to_le_bytes());
    r.extend_from_slice(&next.to_le_bytes());
    r
}

fn read_all(path: &Path) -> Result<Vec<Request>, TraceError> {
    let mut r = OracleReader::open(path)?;
    let (mut buf, mut all) = (Vec::new(), Vec::new());
    // An odd batch size: records must not straddle batches wrongly.
    while r.next_batch(&mut buf, 7)? > 0 {
        all.extend_from_slice(&buf);
    }
    Ok(all)
}

/// A one-tier config replaying `path` as an oracleGeneral trace.
fn run_oracle(path: &Path) -> Result<tierlab_core::stats::RunResult, tierlab_core::Error> {
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\nformat = \"oracle\"\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"1MiB\"\n",
        path.display().to_string()
    );
    Runner::run(&Config::from_toml_str(&toml).unwrap())
}

#[test]
fn truncated_oracle_file_names_the_file_and_the_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.oracleGeneral.bin");
    let mut bytes: Vec<u8> = (0..3)
        .flat_map(|i| record(i, 10 + i as u64, 4096, -1))
        .collect();
    bytes.extend_from_slice(&record(3, 13, 4096, -1)[..5]);
    std::fs::write(&path, &bytes).unwrap();

    let e = read_all(&path).unwrap_err();
    match &e {
        TraceError::Truncated {
            path: p,
            offset,
            len,
            ..
        } => {
            assert_eq!((p.as_path(), *offset, *len), (path.as_path(), 72, 77));
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("byte offset 72"), "{msg}");
    // The same through a whole run and through the statistics pass.
    let msg = run_oracle(&path).unwrap_err().to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("byte offset 72"),
        "{msg}"
    );
    let e = trace_stats(&Source::Oracle(path.clone()), |_| true).unwrap_err();
    assert!(e.to_string().contains("byte offset 72"), "{e}");

    // Shorter than one record: the truncated record starts at 0.
    std::fs::write(&path, [1u8; 23]).unwrap();
    let msg = read_all(&path).unwrap_err().to_string();
    assert!(msg.contains("byte offset 0"), "{msg}");
}

#[test]
fn empty_oracle_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.oracleGeneral.bin");
    std::fs::write(&path, b"").unwrap();
    let e = read_all(&path).unwrap_err();
    assert!(matches!(e, TraceError::Empty { .. }), "{e:?}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    let msg = run_oracle(&path).unwrap_err().to_string();
    assert!(msg.contains("no requests"), "{msg}");
}

#[test]
fn empty_csv_trace_is_an_error_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.csv");
    std::fs::write(&path, "# only a comment\n").unwrap();
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 4\n",
        path.display().to_string()
    );
    let msg = Runner::run(&Config::from_toml_str(&toml).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&path.display().to_string()) && msg.contains("no requests"),
        "{msg}"
    );
}

#[test]
fn missing_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nowhere.oracleGeneral.bin");
    let e = read_all(&path).unwrap_err();
    assert!(matches!(e, TraceError::Io { .. }), "{e:?}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    let msg = run_oracle(&path).unwrap_err().to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    let csv = dir.path().join("nowhere.csv");
    let e = convert_to_oracle(
        &Source::Csv(csv.clone(), CsvOptions::default(), false),
        &dir.path().join("out.bin"),
        |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains(&csv.display().to_string()), "{e}");
}

#[test]
fn oracle_write_read_round_trip_preserves_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rt.oracleGeneral.bin");
    let mut rng = tierlab_core::rng::Rng::new(5);
    let mut reqs: Vec<Request> = (0..1000)
        .map(|i| Request {
            // oracleGeneral keeps whole seconds: whole seconds survive.
            time: (i / 3) * 1_000_000_000,
            key: rng.next_u64(),
            size: rng.next_u64() as u32,
            op: Op::Read,
            pid: 0,
            next_access: rng.below(5000) as i64 - 1,
        })
        .collect();
    reqs.push(Request {
        time: u32::MAX as u64 * 1_000_000_000,
        key: u64::MAX,
        size: u32::MAX,
        op: Op::Read,
        pid: 0,
        next_access: i64::MAX,
    });
    let mut w = OracleWriter::create(&path).unwrap();
    for r in &reqs {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        24 * reqs.len() as u64
    );
    assert_eq!(read_all(&path).unwrap(), reqs);
    // The layout is libCacheSim's: u32 time, u64 id, u32 size, i64 next.
    let bytes = std::fs::read(&path).unwrap();
    let last = &bytes[bytes.len() - 24..];
    assert_eq!(
        last,
        record(u32::MAX, u64::MAX, u32::MAX, i64::MAX).as_slice()
    );
    assert_eq!(
        OracleReader::open(&path).unwrap().len_hint(),
        Some(reqs.len() as u64)
    );

    // Sub-second times are cut to whole seconds; times past 2^32 s saturate.
    let mut w = OracleWriter::create(&path).unwrap();
    for t in [1_999_999_999u64, u64::MAX] {
        w.write(&Request {
            time: t,
            ..Request::read(1, 1)
        })
        .unwrap();
    }
    w.finish().unwrap();
    let times: Vec<u64> = read_all(&path).unwrap().iter().map(|r| r.time).collect();
    assert_eq!(times, [1_000_000_000, u32::MAX as u64 * 1_000_000_000]);
}

#[test]
fn convert_to_oracle_computes_next_access_times() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("tiny.csv");
    let mut f = std::fs::File::create(&csv).unwrap();
    // time,key,size: keys 10 20 10 30 20 10 40
    f.write_all(b"1,10,100\n2,20,200\n3,10,100\n4,30,300\n5,20,250\n7,10,100\n9,40,4\n")
        .unwrap();
    drop(f);
    let out = dir.path().join("tiny.oracleGeneral.bin");
    let stats = convert_to_oracle(
        &Source::Csv(csv, CsvOptions::default(), false),
        &out,
        |_| true,
    )
    .unwrap();
    assert_eq!(stats.requests, 7);
    assert_eq!(stats.unique_keys, 4);
    assert_eq!(stats.footprint_bytes, 100 + 200 + 300 + 4);

    let got = read_all(&out).unwrap();
    let keys: Vec<u64> = got.iter().map(|r| r.key).collect();
    assert_eq!(keys, [10, 20, 10, 30, 20, 10, 40]);
    let sizes: Vec<u32> = got.iter().map(|r| r.size).collect();
    assert_eq!(sizes, [100, 200, 100, 300, 250, 100, 4]);
    // 1-based index of the next request to the same key, -1 when none.
    let next: Vec<i64> = got.iter().map(|r| r.next_access).collect();
    assert_eq!(next, [3, 5, 6, -1, -1, -1, -1]);
}

#[test]
fn convert_to_oracle_handles_one_request_and_long_runs() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("one.csv");
    std::fs::write(&csv, "1,5,10\n").unwrap();
    let out = dir.path().join("one.bin");
    convert_to_oracle(
        &Source::Csv(csv.clone(), CsvOptions::default(), false),
        &out,
        |_| true,
    )
    .unwrap();
    assert_eq!(read_all(&out).unwrap()[0].next_access, -1);

    // More requests than one batch of the converter: indices stay global.
    let mut text = String::new();
    let n = 10_000u64;
    for i in 0..n {
        text += &format!("{i},{},1\n", i % 3);
    }
    std::fs::write(&csv, text).unwrap();
    convert_to_oracle(
        &Source::Csv(csv, CsvOptions::default(), false),
        &out,
        |_| true,
    )
    .unwrap();
    let got = read_all(&out).unwrap();
    assert_eq!(got.len() as u64, n);
    for (i, r) in got.iter().enumerate() {
        let want = if i as u64 + 3 < n { i as i64 + 4 } else { -1 };
        assert_eq!(r.next_access, want, "request #{}", i + 1);
    }
}
