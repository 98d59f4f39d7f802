//! The trace formats: one file each under `trace/` (its reader and its
//! [`TraceFormat`]), registered once in [`registry!`] below. The config's
//! `format` values, the list of names `_core.trace_formats()` exports, the
//! keys each format reads and the recognition of a file from its content
//! all come from here.

use super::Source;
use crate::source::trace::csv::CsvOptions;
use crate::source::trace::{csv, lackey, memtrace, msr, oracle, strace, twitter};
use crate::units::Size;
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A problem with a `[workload]` key: the key (relative to `workload`) and
/// what is wrong.
pub type KeyError = (String, String);

/// `[workload]` of `type = "trace"`: unknown keys rejected.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceParams {
    pub path: Option<PathBuf>,
    pub format: Option<Format>,
    pub csv: Option<CsvOptions>,
    /// lackey traces: also count instruction fetches as reads.
    pub instructions: Option<bool>,
    /// Text traces: pass over malformed records, counting them, instead of
    /// stopping at the first (`--skip-bad`).
    pub skip_bad: Option<bool>,
    /// Bytes per request of an strace or MSR trace, or the page or cache
    /// line of a lackey trace; 4096.
    pub page_size: Option<Size>,
}

/// How surely the first bytes of a file are in a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Likeness {
    No,
    /// Could be (a generic shape: numeric CSV, binary records).
    Plausible,
    /// Has the format's own marks (its header, its keywords).
    Sure,
}

/// What a trace format says about itself.
pub trait TraceFormat {
    /// Its name for messages ("MSR-Cambridge CSV").
    const TITLE: &'static str;
    /// The `[workload]` keys it reads besides `path`, `format`, `skip_bad`.
    const KEYS: &'static [&'static str];
    /// The source for `path`; `first_line` is the file's first line when
    /// it could be read (a format may take its layout from a header).
    fn source(
        path: PathBuf,
        p: &TraceParams,
        first_line: Option<&[u8]>,
    ) -> Result<Source, KeyError>;
    /// Whether `head`, the first bytes of a file (decompressed), look like
    /// this format.
    fn sniff(head: &[u8]) -> Likeness;
}

/// Registers every trace format: `Variant => "name", Type;`. The order is
/// the order of preference when two formats are equally likely.
macro_rules! registry {
    ($($variant:ident => $name:literal, $ty:ty;)*) => {
        /// The formats a trace file may have.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
        pub enum Format { $(#[serde(rename = $name)] $variant),* }

        /// The names `format` may take.
        pub const NAMES: &[&str] = &[$($name),*];
        const ALL: &[Format] = &[$(Format::$variant),*];

        impl Format {
            pub fn name(self) -> &'static str {
                match self { $(Format::$variant => $name),* }
            }
            pub fn title(self) -> &'static str {
                match self { $(Format::$variant => <$ty>::TITLE),* }
            }
            pub fn keys(self) -> &'static [&'static str] {
                match self { $(Format::$variant => <$ty>::KEYS),* }
            }
            pub fn source(self, path: PathBuf, p: &TraceParams, first_line: Option<&[u8]>) -> Result<Source, KeyError> {
                match self { $(Format::$variant => <$ty>::source(path, p, first_line)),* }
            }
            fn sniff(self, head: &[u8]) -> Likeness {
                match self { $(Format::$variant => <$ty>::sniff(head)),* }
            }
        }
    };
}

registry! {
    Oracle => "oracle", oracle::OracleGeneral;
    Csv => "csv", csv::Csv;
    Strace => "strace", strace::Strace;
    Lackey => "lackey", lackey::Lackey;
    Msr => "msr", msr::Msr;
    Twitter => "twitter", twitter::Twitter;
    Memtrace => "memtrace", memtrace::Memtrace;
}

impl Format {
    pub fn from_name(name: &str) -> Option<Format> {
        ALL.iter().copied().find(|f| f.name() == name)
    }
}

/// Bytes of a file looked at to recognise its format.
const HEAD: usize = 64 << 10;

/// The first bytes of a file (decompressed when `.zst`), or None when it
/// cannot be read (the reader then reports why, with the file's name).
pub fn head(path: &Path) -> Option<Vec<u8>> {
    let mut r = crate::source::trace::lines::open_stream(path).ok()?;
    let mut buf = Vec::with_capacity(HEAD);
    r.by_ref().take(HEAD as u64).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// The format `head` looks most like, if any: the surest, ties to the
/// earlier registry line.
pub fn recognise(head: &[u8]) -> Option<Format> {
    let mut best = (Likeness::No, None);
    for &f in ALL {
        let l = f.sniff(head);
        if l > best.0 {
            best = (l, Some(f));
        }
    }
    best.1
}

/// The one format-guessing rule: from the content when it can be read and
/// is recognised, else from the name (`.csv`/`.txt`, `.strace`,
/// `.lackey`, with or without `.zst`); None when neither tells (the file
/// is then read as oracleGeneral, whose reader checks what it reads).
pub fn guess(path: &Path) -> Option<Format> {
    guess_from(head(path).as_deref(), path).map(|g| g.0)
}

/// [`guess`] from the file's `head` when already read, with how the
/// format was found (for messages).
pub fn guess_from(head: Option<&[u8]>, path: &Path) -> Option<(Format, &'static str)> {
    if let Some(f) = head.and_then(recognise) {
        return Some((f, "recognised from the file's content"));
    }
    let name = path.to_string_lossy().to_lowercase();
    let name = name.strip_suffix(".zst").unwrap_or(&name);
    let f = if name.ends_with(".csv") || name.ends_with(".txt") {
        Format::Csv
    } else if name.ends_with(".strace") {
        Format::Strace
    } else if name.ends_with(".lackey") {
        Format::Lackey
    } else if name.ends_with(".memtrace") {
        Format::Memtrace
    } else {
        return None;
    };
    Some((f, "guessed from the file name"))
}

/// The hint for a file that did not read as `read_as`: the format its
/// content looks like, when another.
pub fn hint(path: &Path, read_as: Format) -> Option<String> {
    let f = recognise(&head(path)?)?;
    (f != read_as).then(|| {
        format!(
            "hint: this looks like {}; give format = \"{}\" (--format {})",
            f.title(),
            f.name(),
            f.name()
        )
    })
}

/// The first line of `head`, without its line ending.
pub fn first_line(head: &[u8]) -> &[u8] {
    let end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
    let l = &head[..end];
    l.strip_suffix(b"\r").unwrap_or(l)
}

/// Up to `n` lines of `head` that are neither blank nor the last
/// (possibly cut) line, for sniffers that look at a few records.
pub fn lines(head: &[u8], n: usize) -> impl Iterator<Item = &[u8]> {
    let whole = match head.iter().rposition(|&b| b == b'\n') {
        Some(i) => &head[..i],
        None => head,
    };
    whole
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.is_empty())
        .take(n)
}

/// A line format's verdict on a file's head: `Sure` when each of its first
/// `n` lines is a record (`line(i, l)` is `Some(true)`) or a line the format
/// passes over (`None`: a header, a tracer's own message), and at least one
/// is a record; `No` at the first line that is neither (`Some(false)`).
pub fn every_line(
    head: &[u8],
    n: usize,
    mut line: impl FnMut(usize, &[u8]) -> Option<bool>,
) -> Likeness {
    let mut records = 0;
    for (i, l) in lines(head, n).enumerate() {
        match line(i, l) {
            Some(true) => records += 1,
            Some(false) => return Likeness::No,
            None => {}
        }
    }
    if records > 0 {
        Likeness::Sure
    } else {
        Likeness::No
    }
}

/// Whether `b` is text: printable ASCII, tab, CR or LF.
pub fn is_text(b: &[u8]) -> bool {
    b.iter()
        .all(|&c| (0x20..0x7f).contains(&c) || matches!(c, b'\t' | b'\n' | b'\r'))
}

/// The page size a text format reads, checked: a power of two, 1 B to 1 GiB.
pub fn page_size(p: &TraceParams) -> Result<u32, KeyError> {
    match p.page_size.unwrap_or(Size::Absolute(4096)) {
        Size::Absolute(n) if n.is_power_of_two() && n <= 1 << 30 => Ok(n as u32),
        other => Err((
            "page_size".into(),
            format!("{other} is out of range; a power of two from 1 B to 1 GiB"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_recognised() {
        let msr = b"128166372003061629,web,0,Read,3296370688,4096,2070\n128166372016853454,web,0,Write,3296370688,4096,1302\n";
        assert_eq!(recognise(msr), Some(Format::Msr));
        let msr_header = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n128166372003061629,web,0,Read,3296370688,4096,2070\n";
        assert_eq!(recognise(msr_header), Some(Format::Msr));
        let tw = b"0,q:q1.1.0,12,200,3,get,0\n1,q:q1.1.2,12,0,3,set,3600\n";
        assert_eq!(recognise(tw), Some(Format::Twitter));
        let lackey = b"==123== Lackey\nI  04001234,3\n L 7ff000,8\n S 7ff008,4\n";
        assert_eq!(recognise(lackey), Some(Format::Lackey));
        let st = b"4242  1700000000.123456 openat(AT_FDCWD, \"a\", O_RDONLY) = 3\n4242  1700000000.123460 read(3, \"\"..., 4096) = 4096\n";
        assert_eq!(recognise(st), Some(Format::Strace));
        assert_eq!(
            recognise(b"time,key,size,op\n0,1,4096,read\n"),
            Some(Format::Csv)
        );
        assert_eq!(recognise(b"1,2,3\n4,5,6\n"), Some(Format::Csv));
        let mut bin = Vec::new();
        for i in 0..10u64 {
            bin.extend_from_slice(&(i as u32).to_le_bytes());
            bin.extend_from_slice(&(i * 7).to_le_bytes());
            bin.extend_from_slice(&4096u32.to_le_bytes());
            bin.extend_from_slice(&(-1i64).to_le_bytes());
        }
        assert_eq!(recognise(&bin), Some(Format::Oracle));
        assert_eq!(recognise(b"hello world, this is prose\n"), None);
    }

    #[test]
    fn names_round_trip() {
        for n in NAMES {
            assert_eq!(Format::from_name(n).unwrap().name(), *n);
            let f: Format = serde_json::from_value(serde_json::json!(n)).unwrap();
            assert_eq!(f.name(), *n);
        }
    }
}
