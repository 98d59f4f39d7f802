//! Twitter's production cache traces (Yang, Yue, Rashmi, OSDI 2020;
//! github.com/twitter/cache-trace): CSV lines
//! `timestamp,anonymized key,key size,value size,client id,operation,TTL`.
//! The key is hashed to 64 bits; the object's size is key size plus value
//! size; `get`/`gets` read, `delete` deletes, every other operation (`set`,
//! `add`, `replace`, `cas`, `append`, `prepend`, `incr`, `decr`) writes.

use super::csv::{parse_u64, show, trim};
use super::lines::{LineParser, Lines, TextReader};
use super::TraceError;
use crate::hash::KeyHasher;
use crate::request::{Op, Request};
use crate::source::formats::{self, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

pub type TwitterReader = TextReader<TwitterParser>;

pub struct TwitterParser;

impl TwitterReader {
    pub fn open(path: &Path, skip_bad: bool) -> Result<Self, TraceError> {
        Ok(TextReader::new(Lines::open(path, skip_bad)?, TwitterParser))
    }
}

impl LineParser for TwitterParser {
    const KIND: &'static str = "Twitter cache trace";
    const FORMAT: crate::source::formats::Format = crate::source::formats::Format::Twitter;

    fn parse(&mut self, line: &[u8], _lineno: u64) -> Result<Option<Request>, String> {
        if line.is_empty() {
            return Ok(None);
        }
        let f: Vec<&[u8]> = line.splitn(8, |b| *b == b',').map(trim).collect();
        if f.len() < 6 {
            return Err(format!(
                "{} field(s); expected timestamp,key,key size,value size,client id,operation,TTL",
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
        let time = num(0, "timestamp")?;
        let size = num(2, "key size")? + num(3, "value size")?;
        let op = match f[5] {
            b"get" | b"gets" => Op::Read,
            b"delete" => Op::Delete,
            b"set" | b"add" | b"replace" | b"cas" | b"append" | b"prepend" | b"incr" | b"decr" => Op::Write,
            other => return Err(format!("field 6 (operation) is {}; expected get, gets, set, add, replace, cas, append, prepend, incr, decr or delete", show(other))),
        };
        let mut h = KeyHasher::default();
        h.write(f[1]);
        Ok(Some(Request {
            time: time.saturating_mul(1_000_000_000),
            key: h.finish(),
            size: u32::try_from(size)
                .map_err(|_| format!("object size {size} is larger than 4 GiB - 1"))?,
            op,
            pid: 0,
            next_access: -1,
        }))
    }
}

/// The registry's view of Twitter cache traces ([`crate::source::formats`]).
pub struct Twitter;

impl TraceFormat for Twitter {
    const TITLE: &'static str = "a Twitter cache trace";
    const KEYS: &'static [&'static str] = &[];

    fn source(path: PathBuf, p: &TraceParams, _: Option<&[u8]>) -> Result<Source, KeyError> {
        Ok(Source::Twitter(path, p.skip_bad.unwrap_or(false)))
    }

    fn sniff(head: &[u8]) -> Likeness {
        let record = |l: &[u8]| {
            let f: Vec<&[u8]> = l.split(|b| *b == b',').map(trim).collect();
            f.len() == 7
                && [0, 2, 3, 4, 6].iter().all(|&i| parse_u64(f[i]).is_some())
                && matches!(
                    f[5],
                    b"get"
                        | b"gets"
                        | b"set"
                        | b"add"
                        | b"replace"
                        | b"cas"
                        | b"append"
                        | b"prepend"
                        | b"delete"
                        | b"incr"
                        | b"decr"
                )
        };
        formats::every_line(head, 8, |_, l| Some(record(l)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::trace::TraceSource;
    use std::io::Write;

    #[test]
    fn parses_ops_sizes_and_errors() {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(b"0,abc,10,100,1,get,0\n1,abc,10,200,1,set,3600\n2,xyz,5,0,2,delete,0\n3,abc,1,1,1,frobnicate,0\n").unwrap();
        let mut r = TwitterReader::open(f.path(), false).unwrap();
        let mut buf = Vec::new();
        let e = r.next_batch(&mut buf, 10).unwrap_err().to_string();
        assert!(
            e.contains(":4: field 6 (operation) is \"frobnicate\""),
            "{e}"
        );
        let mut r = TwitterReader::open(f.path(), true).unwrap();
        r.next_batch(&mut buf, 10).unwrap();
        assert_eq!(buf.len(), 3);
        assert_eq!(r.skipped(), 1);
        assert_eq!(
            (buf[0].size, buf[0].op, buf[1].op, buf[2].op),
            (110, Op::Read, Op::Write, Op::Delete)
        );
        assert_eq!(buf[0].key, buf[1].key);
        assert_eq!(buf[1].time, 1_000_000_000);
    }
}
