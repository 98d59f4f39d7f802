//! Trace outputs appear whole or not at all, and never over their input
//! (trace/output.rs).

use std::io::Write;
use std::path::Path;
use tierlab_core::source::tools::convert_to_oracle;
use tierlab_core::source::tools::write_csv;
use tierlab_core::source::trace::csv::CsvOptions;
use tierlab_core::source::trace::output::OutputFile;
use tierlab_core::source::trace::TraceError;
use tierlab_core::source::Source;

/// The files in a directory, sorted (a failed conversion must leave none of
/// its own).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn converting_a_trace_onto_itself_is_refused_and_keeps_it() {
    // Regression: `trace convert a.csv a.csv` truncated a.csv before reading it.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "1,2,3\n2,3,3\n").unwrap();
    let src = Source::Csv(csv.clone(), CsvOptions::default(), false);
    let e = convert_to_oracle(&src, &csv, |_| true).unwrap_err();
    assert!(e.to_string().contains("is the input trace"), "{e}");
    let e = write_csv(&src, &csv, |_| true).unwrap_err();
    assert!(e.to_string().contains("is the input trace"), "{e}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "1,2,3\n2,3,3\n");
    assert_eq!(listing(dir.path()), ["a.csv"]);
}

#[test]
fn a_failed_or_interrupted_conversion_keeps_the_old_output() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.csv");
    let mut text: String = (0..5000).map(|i| format!("{i},{},1\n", i % 7)).collect();
    text.push_str("5000,oops,1\n");
    std::fs::write(&bad, text).unwrap();
    let good = dir.path().join("good.csv");
    std::fs::write(&good, "1,2,3\n").unwrap();
    let out = dir.path().join("out.csv");
    std::fs::write(&out, "precious").unwrap();
    let bad_src = Source::Csv(bad.clone(), CsvOptions::default(), false);
    let good_src = Source::Csv(good.clone(), CsvOptions::default(), false);
    // CSV output has no first pass: the bad line is met after 5,000 written.
    let e = write_csv(&bad_src, &out, |_| true).unwrap_err();
    assert!(e.to_string().contains("bad.csv:5001"), "{e}");
    let e = convert_to_oracle(&bad_src, &out, |_| true).unwrap_err();
    assert!(e.to_string().contains("bad.csv:5001"), "{e}");
    // Interrupted in the second pass (after the first pass's 1 record).
    let e = convert_to_oracle(&good_src, &out, |n| n < 2).unwrap_err();
    assert!(matches!(e, TraceError::Interrupted), "{e:?}");
    let e = write_csv(&good_src, &out, |_| false).unwrap_err();
    assert!(matches!(e, TraceError::Interrupted), "{e:?}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
    assert_eq!(listing(dir.path()), ["bad.csv", "good.csv", "out.csv"]);
    // And a finished one replaces it.
    convert_to_oracle(&good_src, &out, |_| true).unwrap();
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 24);
    assert_eq!(listing(dir.path()), ["bad.csv", "good.csv", "out.csv"]);
}

#[test]
fn an_uncommitted_output_leaves_the_old_file_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    std::fs::write(&out, "old").unwrap();
    let mut f = OutputFile::create(&out, None).unwrap();
    f.writer().write_all(b"new, but not finished").unwrap();
    drop(f);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    assert_eq!(listing(dir.path()), ["t.csv"]);
}

#[test]
fn a_committed_output_replaces_the_file_and_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let mut f = OutputFile::create(&out, None).unwrap();
    f.writer().write_all(b"new").unwrap();
    f.commit().unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert_eq!(listing(dir.path()), ["t.csv"]);
}

#[test]
fn writes_through_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.bin");
    let link = dir.path().join("link.bin");
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut f = OutputFile::create(&link, None).unwrap();
    f.writer().write_all(b"new").unwrap();
    f.commit().unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
}

#[test]
fn refuses_the_input_and_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.csv");
    std::fs::write(&input, "1,2,3\n").unwrap();
    let hard = dir.path().join("hard.csv");
    std::fs::hard_link(&input, &hard).unwrap();
    for out in [&input, &hard] {
        let e = OutputFile::create(out, Some(&input)).err().unwrap();
        assert!(e.to_string().contains("is the input trace"), "{e}");
    }
    let e = OutputFile::create(dir.path(), None).err().unwrap();
    assert!(e.to_string().contains("is a directory"), "{e}");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), "1,2,3\n");
    assert_eq!(listing(dir.path()), ["hard.csv", "in.csv"]);
}

#[test]
fn a_missing_directory_is_named_with_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("no-such-dir").join("t.bin");
    let e = OutputFile::create(&out, None).err().unwrap();
    assert!(e.to_string().starts_with(&out.display().to_string()), "{e}");
}

#[test]
fn a_device_is_written_directly_not_replaced() {
    // Renaming a file over /dev/null would replace the device.
    let dev = Path::new("/dev/null");
    let before = std::fs::metadata(dev).unwrap();
    let mut f = OutputFile::create(dev, None).unwrap();
    f.writer().write_all(b"into the void").unwrap();
    f.commit().unwrap();
    let after = std::fs::metadata(dev).unwrap();
    assert!(!after.is_file(), "/dev/null became a regular file");
    use std::os::unix::fs::MetadataExt;
    assert_eq!((after.ino(), after.rdev()), (before.ino(), before.rdev()));
}
