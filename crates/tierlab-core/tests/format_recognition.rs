//! Files in the wrong format stop with the place and the format they look
//! like (issue 21, defects 4 and 5); formats are recognised from content.

use std::path::Path;
use tierlab_core::config::Config;
use tierlab_core::prelude::Runner;
use tierlab_core::source::formats::{self, Format};
use tierlab_core::source::tools::trace_stats;
use tierlab_core::source::trace::csv::CsvOptions;
use tierlab_core::source::Source;

const MSR: &str = "128166372003061629,web,0,Read,3296370688,4096,2070\n\
                   128166372016853454,web,0,Write,3296370688,8192,1302\n\
                   128166372026382157,web,1,Read,1112612864,4096,1252\n";

fn run(path: &Path, format: Option<&str>) -> Result<tierlab_core::stats::RunResult, String> {
    let fmt = format.map_or(String::new(), |f| format!("format = {f:?}\n"));
    let toml = format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\n{fmt}[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = \"1MiB\"\n",
        path.display().to_string()
    );
    let cfg = Config::from_toml_str(&toml).map_err(|e| e.to_string())?;
    Runner::run(&cfg).map_err(|e| e.to_string())
}

/// Text whose length is a multiple of 24 bytes ran as oracleGeneral:
/// objects of 174 MB to 1.9 GB, exit 0.
#[test]
fn text_read_as_oracle_stops_with_the_offset_and_the_likely_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.bin");
    // 24 lines of 24 bytes: CSV text, a whole number of 24-byte records.
    let text: String = (0..24)
        .map(|i| format!("{:>10},{:>6},{:>5}\n", i, i % 7, 4096))
        .collect();
    assert_eq!(text.len() % 24, 0);
    std::fs::write(&path, &text).unwrap();
    let e = run(&path, Some("oracle")).unwrap_err();
    assert!(
        e.contains("trace.bin: byte offset 0: 24 bytes of text"),
        "{e}"
    );
    assert!(
        e.contains("hint: this looks like CSV text; give format = \"csv\""),
        "{e}"
    );
    // The zstd stream reader checks the same.
    let zst = dir.path().join("trace.bin.zst");
    std::fs::write(&zst, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
    let e = trace_stats(&Source::Oracle(zst), |_| true)
        .unwrap_err()
        .to_string();
    assert!(e.contains("byte offset 0: 24 bytes of text"), "{e}");
    // Without a format it is recognised as CSV and runs.
    let r = run(&path, None).unwrap();
    assert_eq!(r.requests, 24);
    // Prose nobody recognises is read as oracleGeneral and refused.
    let prose = dir.path().join("notes");
    std::fs::write(&prose, "a".repeat(23) + "\n").unwrap();
    let e = run(&prose, None).unwrap_err();
    assert!(
        e.contains("byte offset 0: 24 bytes of text") && e.contains("hint: oracleGeneral is"),
        "{e}"
    );
}

#[test]
fn text_after_binary_records_is_caught_at_a_batch_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.bin");
    let mut bytes = Vec::new();
    for i in 0..5000u32 {
        bytes.extend_from_slice(&i.to_le_bytes());
        bytes.extend_from_slice(&(i as u64 % 100).to_le_bytes());
        bytes.extend_from_slice(&4096u32.to_le_bytes());
        bytes.extend_from_slice(&(-1i64).to_le_bytes());
    }
    let at = bytes.len();
    bytes.extend(std::iter::repeat_n(b'x', 24 * 5000));
    std::fs::write(&path, &bytes).unwrap();
    let e = trace_stats(&Source::Oracle(path), |_| true)
        .unwrap_err()
        .to_string();
    // The first batch after the text starts (batches of 4096 records).
    let off = (at / 24).div_ceil(4096) * 4096 * 24;
    assert!(
        e.contains(&format!("byte offset {off}: 24 bytes of text")),
        "{e}"
    );
}

/// `trace stats web_0.csv` on an MSR-Cambridge file suggested hashing keys
/// (the host name).
#[test]
fn msr_read_as_csv_hints_msr_not_hash_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("web_0.csv");
    std::fs::write(&path, MSR).unwrap();
    let src = Source::Csv(path.clone(), CsvOptions::default(), false);
    let e = trace_stats(&src, |_| true).unwrap_err().to_string();
    assert!(
        e.contains("hint: this looks like an MSR-Cambridge block trace; give format = \"msr\""),
        "{e}"
    );
    assert!(!e.contains("hash_keys"), "{e}");
    // Recognised without a format: it runs as MSR (4 pages of 4 KiB).
    assert_eq!(formats::guess(&path), Some(Format::Msr));
    assert_eq!(run(&path, None).unwrap().requests, 4);
}

#[test]
fn msr_with_a_header_line_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("web_0.csv");
    std::fs::write(
        &path,
        format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{MSR}"),
    )
    .unwrap();
    assert_eq!(formats::guess(&path), Some(Format::Msr));
    let e = run(&path, None).unwrap_err();
    assert!(
        e.contains("web_0.csv:1:") && e.contains("hint: this line is a header"),
        "{e}"
    );
}

#[test]
fn a_tierlab_csv_is_read_by_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    std::fs::write(
        &path,
        "time,key,size,op\n1,5,100,write\n2,5,100,read\n3,5,100,delete\n",
    )
    .unwrap();
    let cfg = Config::from_toml_str(&format!(
        "[workload]\ntype = \"trace\"\npath = {:?}\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 1\n",
        path.display().to_string()
    ))
    .unwrap();
    match cfg.workload().unwrap().source().unwrap() {
        Source::Csv(_, o, _) => assert_eq!((o.header, o.op), (true, 4)),
        other => panic!("{other:?}"),
    }
}
