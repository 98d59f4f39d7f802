//! MSR Cambridge block traces (Narayanan et al., "Write off-loading",
//! FAST 2008; SNIA IOTTA): CSV lines
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` with the
//! timestamp in Windows FILETIME (100 ns ticks since 1601), Type `Read` or
//! `Write`, offset and size in bytes. Each request becomes one request per
//! page it covers, keyed by (host and disk, page).

use super::csv::{parse_u64, show, trim};
use super::limits::Limits;
use super::lines::{LineParser, Lines, TextReader};
use super::TraceError;
use crate::hash::KeyHasher;
use crate::request::{Op, Request};
use crate::source::formats::{self, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// FILETIME of the Unix epoch: 1970-01-01 in 100 ns ticks since 1601-01-01.
const UNIX_EPOCH_TICKS: u64 = 116_444_736_000_000_000;

pub type MsrReader = TextReader<MsrParser>;

pub struct MsrParser {
    page: u64,
    /// The most bytes one record may cover.
    limits: Limits,
    /// Pages of the current record still to emit: (device hash, next, last, op, time).
    pending: Option<(u64, u64, u64, Op, u64)>,
}

impl MsrReader {
    pub fn open(path: &Path, page_size: u32, skip_bad: bool) -> Result<Self, TraceError> {
        let lines = Lines::open(path, skip_bad)?;
        let limits = lines.limits;
        Ok(TextReader::new(
            lines,
            MsrParser {
                page: page_size.max(1) as u64,
                limits,
                pending: None,
            },
        ))
    }
}

impl MsrParser {
    fn record(&self, line: &[u8]) -> Result<(u64, u64, u64, Op, u64), String> {
        let f: Vec<&[u8]> = line.split(|b| *b == b',').map(trim).collect();
        if f.len() < 6 {
            return Err(format!(
                "{} field(s); expected Timestamp,Hostname,DiskNumber,Type,Offset,Size[,ResponseTime]",
                f.len()
            ));
        }
        let num = |i: usize, what: &str| {
            parse_u64(f[i]).ok_or_else(|| {
                format!(
                    "field {} ({what}) is {}, not an unsigned integer",
                    i + 1,
                    show(f[i])
                )
            })
        };
        let ticks = num(0, "Timestamp")?;
        let op = match f[3] {
            b"Read" | b"read" | b"R" => Op::Read,
            b"Write" | b"write" | b"W" => Op::Write,
            other => {
                return Err(format!(
                    "field 4 (Type) is {}; expected Read or Write",
                    show(other)
                ))
            }
        };
        let (offset, size) = (num(4, "Offset")?, num(5, "Size")?);
        self.limits.check_record(size)?;
        let mut h = KeyHasher::default();
        h.write(f[1]);
        h.write(b",");
        h.write(f[2]);
        // The device takes the top 24 bits of the key, the page the low 40.
        let device = h.finish() & !((1u64 << 40) - 1);
        let time = ticks.saturating_sub(UNIX_EPOCH_TICKS).saturating_mul(100);
        let first = offset / self.page;
        let last = offset.saturating_add(size.max(1) - 1) / self.page;
        Ok((device, first, last, op, time))
    }
}

/// A record covers a range of pages: parsing queues the range, and
/// `pending` hands out one page's request at a time.
impl LineParser for MsrParser {
    const KIND: &'static str = "MSR Cambridge trace";
    const FORMAT: crate::source::formats::Format = crate::source::formats::Format::Msr;

    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Option<Request>, String> {
        if !line.is_empty() {
            let r = self.record(line).map_err(|e| {
                if lineno == 1 && is_header(line) {
                    format!("{e}\nhint: this line is a header, which MSR-Cambridge traces do not have: delete it, or give skip_bad = true (--skip-bad)")
                } else {
                    e
                }
            })?;
            self.pending = Some(r);
        }
        Ok(None)
    }

    fn pending(&mut self) -> Option<Request> {
        let (dev, next, last, op, time) = self.pending?;
        self.pending = (next < last).then_some((dev, next + 1, last, op, time));
        Some(Request {
            time,
            key: dev | (next & ((1u64 << 40) - 1)),
            size: self.page as u32,
            op,
            pid: 0,
            next_access: -1,
        })
    }
}

/// The registry's view of MSR-Cambridge traces ([`crate::source::formats`]).
pub struct Msr;

/// The header line some copies of the MSR-Cambridge traces carry.
fn is_header(l: &[u8]) -> bool {
    l.starts_with(b"Timestamp,Hostname,DiskNumber,Type")
}

impl TraceFormat for Msr {
    const TITLE: &'static str = "an MSR-Cambridge block trace";
    const KEYS: &'static [&'static str] = &["page_size"];

    fn source(path: PathBuf, p: &TraceParams, _: Option<&[u8]>) -> Result<Source, KeyError> {
        let page = formats::page_size(p)?;
        Ok(Source::Msr(path, page, p.skip_bad.unwrap_or(false)))
    }

    fn sniff(head: &[u8]) -> Likeness {
        let record = |l: &[u8]| {
            let f: Vec<&[u8]> = l.split(|b| *b == b',').map(trim).collect();
            (6..=7).contains(&f.len())
                && [0, 2, 4, 5].iter().all(|&i| parse_u64(f[i]).is_some())
                && matches!(f[3], b"Read" | b"Write" | b"read" | b"write")
        };
        // A header line counts: a header alone still reads as MSR.
        formats::every_line(head, 8, |i, l| Some(record(l) || (i == 0 && is_header(l))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::trace::TraceSource;
    use std::io::Write;

    fn read(text: &str, skip: bool) -> Result<(Vec<Request>, u64), TraceError> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let mut r = MsrReader::open(f.path(), 4096, skip)?;
        let mut all = Vec::new();
        let mut buf = Vec::new();
        while r.next_batch(&mut buf, 2)? > 0 {
            all.extend_from_slice(&buf);
        }
        Ok((all, r.skipped()))
    }

    #[test]
    fn splits_into_pages_with_unix_time() {
        let t = "128166372003061629,hm,1,Read,4096,8192,100\n128166372003061639,hm,1,Write,100,10,50\n128166372003061639,hm,2,Write,100,10,50\n";
        let (r, _) = read(t, false).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(
            (r[0].key & 0xff, r[1].key & 0xff, r[2].key & 0xff),
            (1, 2, 0)
        );
        assert_eq!((r[0].op, r[2].op), (Op::Read, Op::Write));
        assert_ne!(r[3].key, r[2].key, "another disk is another device");
        // 2007-02-22, as MSR's traces are.
        assert_eq!(r[0].time / 1_000_000_000, 1_172_163_600);
    }

    #[test]
    fn bad_lines_name_the_line_or_are_skipped_and_counted() {
        let t = "128166372003061629,hm,1,Read,4096,8192,100\n128166372003061629,hm,1,Erase,0,1,1\nnope\n";
        let e = read(t, false).unwrap_err().to_string();
        assert!(
            e.contains(":2: field 4 (Type) is \"Erase\"; expected Read or Write"),
            "{e}"
        );
        let (r, skipped) = read(t, true).unwrap();
        assert_eq!((r.len(), skipped), (2, 2));
    }
}
