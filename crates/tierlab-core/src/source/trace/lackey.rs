//! Valgrind lackey memory traces (`valgrind --tool=lackey --trace-mem=yes`):
//! lines `I  addr,size` (instruction fetch), ` L addr,size` (load),
//! ` S addr,size` (store), ` M addr,size` (modify: a load and a store of the
//! same data, counted as one write). Each access becomes one request per
//! unit (page or cache line) it touches, keyed by address / unit; with unit
//! 0 (the virtual-memory layer's byte addressing) one request per access,
//! keyed by its address, of its size. Lines that are Valgrind's own
//! messages (`==pid== ...`) are skipped; their pid becomes the requests'.

use super::limits::Limits;
use super::lines::{LineParser, Lines, TextReader};
use super::TraceError;
use crate::request::{Op, Request};
use crate::source::formats::{self, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use std::path::{Path, PathBuf};

pub type LackeyReader = TextReader<LackeyParser>;

pub struct LackeyParser {
    /// The most bytes one access may cover.
    limits: Limits,
    /// Bytes per request; 0: by byte address, one request per access.
    unit: u64,
    /// From Valgrind's `==pid==` lines.
    pid: u32,
    instructions: bool,
    /// Requests emitted so far: the trace has no clock, so this is the time.
    count: u64,
    /// Units of an access that straddles units, still to emit.
    pending: Option<(u64, u64, Op)>,
}

impl LackeyReader {
    /// `unit`: bytes per request (4096 for pages, 64 for cache lines), or
    /// 0 for one request per access at its byte address.
    /// `instructions`: also turn instruction fetches into reads.
    pub fn open(
        path: &Path,
        unit: u32,
        instructions: bool,
        skip_bad: bool,
    ) -> Result<Self, TraceError> {
        Ok(Self::with_lines(
            Lines::open(path, skip_bad)?,
            unit,
            instructions,
        ))
    }

    /// [`LackeyReader::open`] on a FIFO Valgrind writes as the program
    /// runs ([`Lines::open_fifo`]).
    pub fn open_fifo(path: &Path, unit: u32, instructions: bool) -> Result<Self, TraceError> {
        Ok(Self::with_lines(
            Lines::open_fifo(path, false)?,
            unit,
            instructions,
        ))
    }

    fn with_lines(lines: Lines, unit: u32, instructions: bool) -> Self {
        let limits = lines.limits;
        TextReader::new(
            lines,
            LackeyParser {
                limits,
                unit: unit as u64,
                pid: 0,
                instructions,
                count: 0,
                pending: None,
            },
        )
    }
}

impl LackeyParser {
    /// Parses a line into (first unit, last unit, op), or None to skip it;
    /// with unit 0, (address, size, op).
    fn access(&mut self, t: &[u8]) -> Result<Option<(u64, u64, Op)>, String> {
        if t.starts_with(b"==") || t.starts_with(b"--") {
            if let Some(pid) = valgrind_pid(t) {
                self.pid = pid;
            }
            return Ok(None);
        }
        if t.is_empty() {
            return Ok(None);
        }
        let show = || String::from_utf8_lossy(&t[..t.len().min(60)]).into_owned();
        if t.len() < 4 {
            return Err(format!(
                "{:?} is not a lackey record (` L addr,size`)",
                show()
            ));
        }
        let op = match (t[0], t[1]) {
            (b'I', b' ') if self.instructions => Op::Read,
            (b'I', b' ') => return Ok(None),
            (b' ', b'L') => Op::Read,
            (b' ', b'S') | (b' ', b'M') => Op::Write,
            _ => {
                return Err(format!(
                    "{:?} is not a lackey record (` L addr,size`)",
                    show()
                ))
            }
        };
        let body = std::str::from_utf8(&t[2..])
            .map_err(|_| format!("{:?} is not text", show()))?
            .trim();
        let (addr, size) = body
            .split_once(',')
            .ok_or_else(|| format!("{:?}: expected `addr,size`", show()))?;
        let addr = u64::from_str_radix(addr.trim(), 16)
            .map_err(|_| format!("{:?}: address is not hexadecimal", show()))?;
        let size: u64 = size
            .trim()
            .parse()
            .map_err(|_| format!("{:?}: size is not a number", show()))?;
        self.limits.check_record(size)?;
        if self.unit == 0 {
            return Ok(Some((addr, size.clamp(1, u32::MAX as u64), op)));
        }
        let last = addr.saturating_add(size.max(1) - 1);
        Ok(Some((addr / self.unit, last / self.unit, op)))
    }
}

/// The pid of a Valgrind message line, `==1234== ...`.
fn valgrind_pid(t: &[u8]) -> Option<u32> {
    let rest = &t[2..];
    let end = rest.iter().position(|&b| b == b'=' || b == b'-')?;
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

/// An access covers a range of units: parsing queues the range, and
/// `pending` hands out one unit's request at a time.
impl LineParser for LackeyParser {
    const KIND: &'static str = "Valgrind lackey trace";
    const FORMAT: crate::source::formats::Format = crate::source::formats::Format::Lackey;

    fn parse(&mut self, line: &[u8], _lineno: u64) -> Result<Option<Request>, String> {
        self.pending = self.access(line)?;
        Ok(None)
    }

    fn pending(&mut self) -> Option<Request> {
        let (first, last, op) = self.pending?;
        let time = self.count;
        self.count += 1;
        if self.unit == 0 {
            self.pending = None;
            return Some(Request {
                time,
                key: first,
                size: last as u32,
                op,
                pid: self.pid,
                next_access: -1,
            });
        }
        self.pending = (first < last).then_some((first + 1, last, op));
        Some(Request {
            time,
            key: first,
            size: self.unit as u32,
            op,
            pid: self.pid,
            next_access: -1,
        })
    }
}

/// The registry's view of lackey traces ([`crate::source::formats`]).
pub struct Lackey;

impl TraceFormat for Lackey {
    const TITLE: &'static str = "a Valgrind lackey trace";
    const KEYS: &'static [&'static str] = &["page_size", "instructions"];

    fn source(path: PathBuf, p: &TraceParams, _: Option<&[u8]>) -> Result<Source, KeyError> {
        let unit = formats::page_size(p)?;
        Ok(Source::Lackey(
            path,
            unit,
            p.instructions.unwrap_or(false),
            p.skip_bad.unwrap_or(false),
        ))
    }

    fn sniff(head: &[u8]) -> Likeness {
        // ` L 7ff000,8` / `I  04001234,3`, after Valgrind's `==pid==` lines.
        let access = |l: &[u8]| {
            let rest = match l {
                [b'I', b' ', b' ', rest @ ..] => rest,
                [b' ', b'L' | b'S' | b'M', b' ', rest @ ..] => rest,
                _ => return false,
            };
            let Some(comma) = rest.iter().position(|&b| b == b',') else {
                return false;
            };
            let (addr, size) = (&rest[..comma], &rest[comma + 1..]);
            !addr.is_empty()
                && addr.iter().all(u8::is_ascii_hexdigit)
                && !size.is_empty()
                && size.iter().all(u8::is_ascii_digit)
        };
        formats::every_line(head, 64, |_, l| {
            // Valgrind's own `==pid==` and `--pid--` lines.
            (!(l.starts_with(b"==") || l.starts_with(b"--"))).then(|| access(l))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::trace::TraceSource;
    use std::io::Write;

    fn read(text: &str, unit: u32, instr: bool) -> Result<Vec<(u64, Op)>, TraceError> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let mut r = LackeyReader::open(f.path(), unit, instr, false)?;
        let mut all = Vec::new();
        let mut buf = Vec::new();
        while r.next_batch(&mut buf, 2)? > 0 {
            all.extend(buf.iter().map(|q| (q.key, q.op)));
        }
        Ok(all)
    }

    #[test]
    fn loads_stores_modifies_and_straddles() {
        let t = "==1== Lackey\nI  04000000,3\n L 1000,8\n S 1ffc,8\n M 3000,4\n";
        assert_eq!(
            read(t, 4096, false).unwrap(),
            vec![
                (1, Op::Read),
                (1, Op::Write),
                (2, Op::Write),
                (3, Op::Write)
            ]
        );
        assert_eq!(read(t, 4096, true).unwrap()[0], (0x4000, Op::Read));
        assert_eq!(read(" L 40,8\n", 64, false).unwrap(), vec![(1, Op::Read)]);
    }

    #[test]
    fn by_byte_address_with_the_pid() {
        let t = "==77== Lackey\n L 1ffc,8\n--78-- x\n S 10,4\n";
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(t.as_bytes()).unwrap();
        let mut r = LackeyReader::open(f.path(), 0, false, false).unwrap();
        let mut buf = Vec::new();
        r.next_batch(&mut buf, 10).unwrap();
        let got: Vec<_> = buf.iter().map(|q| (q.key, q.size, q.op, q.pid)).collect();
        assert_eq!(
            got,
            vec![(0x1ffc, 8, Op::Read, 77), (0x10, 4, Op::Write, 78)]
        );
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let e = read(" L 1000,8\n X zz\n", 4096, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains(":2: \" X zz\" is not a lackey record"), "{e}");
        let e = read(" L 10g0,8\n", 4096, false).unwrap_err().to_string();
        assert!(
            e.contains(":1: \" L 10g0,8\": address is not hexadecimal"),
            "{e}"
        );
    }
}
