//! Every trace reader, fed any bytes, returns requests or an error: never a
//! panic (bad input is an error that says where). Found by hand first:
//! binary bytes read as strace panicked slicing the error message's excerpt
//! inside a multi-byte character.
//!
//! The inputs mix raw bytes with lines built from the pieces real records
//! are made of (numbers, separators, syscall names, quotes, parentheses,
//! multi-byte characters), so the parsers get past their first check.

use proptest::prelude::*;
use std::path::Path;
use tierlab_core::source::tools::trace_stats;
use tierlab_core::source::trace::csv::CsvOptions;
use tierlab_core::source::Source;

const PIECES: &[&str] = &[
    "0",
    "1",
    "4096",
    "18446744073709551616",
    "-1",
    "1.5",
    "1700000000.123456",
    ",",
    ", ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "(",
    ")",
    "\"",
    "\\",
    "\\\"",
    "=",
    " = ",
    "...",
    "<unfinished ...>",
    "<... read resumed>",
    "openat(AT_FDCWD, \"/tmp/f\", O_RDONLY) = 3",
    "read(3, \"\"..., 4096) = 4096",
    "write(",
    "lseek(3, 0, SEEK_SET) = 0",
    "clone(",
    "rename(\"a\", \"b\")",
    "unlink(\"",
    "O_APPEND",
    "O_TRUNC",
    " L ",
    " S ",
    " M ",
    "I  ",
    "0x1fff000",
    "04001a2b,8",
    "Read",
    "Write",
    "get",
    "set",
    "delete",
    "key:1",
    "é",
    "€",
    "\u{1F600}",
    "\u{0}",
    "\u{ff}",
];

/// Bytes: some raw, some assembled from `PIECES`.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let raw = proptest::collection::vec(any::<u8>(), 0..600);
    let built = proptest::collection::vec(
        prop_oneof![
            4 => (0..PIECES.len()).prop_map(|i| PIECES[i].as_bytes().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 1..4),
        ],
        0..120,
    )
    .prop_map(|parts| parts.concat());
    prop_oneof![1 => raw, 3 => built]
}

/// Every reader over the file at `p` (skipping bad records or not).
fn sources(p: &Path) -> Vec<Source> {
    let p = p.to_path_buf();
    let mut v = vec![Source::Oracle(p.clone())];
    for skip in [false, true] {
        for opts in [
            CsvOptions::default(),
            CsvOptions {
                op: 4,
                header: true,
                hash_keys: true,
                ..CsvOptions::default()
            },
        ] {
            v.push(Source::Csv(p.clone(), opts, skip));
        }
        v.push(Source::Strace(p.clone(), 4096, skip));
        v.push(Source::Lackey(p.clone(), 64, true, skip));
        v.push(Source::Msr(p.clone(), 4096, skip));
        v.push(Source::Twitter(p.clone(), skip));
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn no_reader_panics(bytes in input()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, &bytes).unwrap();
        for src in sources(&path) {
            // Ok or Err are both answers; a panic fails the test.
            let _ = trace_stats(&src, |_| true);
        }
        // The zstd stream reader too (the name selects it).
        let zst = dir.path().join("t.zst");
        std::fs::write(&zst, &bytes).unwrap();
        let _ = trace_stats(&Source::Oracle(zst), |_| true);
    }
}
