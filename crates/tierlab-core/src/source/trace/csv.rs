//! Delimited text traces with a column map (libCacheSim's csv reader takes the
//! same 1-based column numbers). Lines are read into one reused buffer and
//! parsed in place: no allocation per line.

use super::lines::{LineParser, Lines, TextReader};
use super::TraceError;
use crate::hash::KeyHasher;
use crate::request::{Op, Request};
use crate::source::formats::{self, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use serde::{Deserialize, Serialize};
use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// Which column holds what (1-based), and how the file is laid out.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CsvOptions {
    /// Column of the timestamp, or 0 for none (the line number is used).
    pub time: usize,
    /// Column of the object id.
    pub key: usize,
    /// Column of the object size, or 0 for none (`default_size` is used).
    pub size: usize,
    /// Column of the operation (read/get, write/set, delete/del), or 0 for none (all reads).
    pub op: usize,
    /// Column of the process or client id (an unsigned integer), or 0 for
    /// none (every request's pid is 0).
    pub pid: usize,
    /// Whether the first line is a header to skip.
    pub header: bool,
    /// The field separator, one ASCII character.
    pub delimiter: char,
    /// Size in bytes of every object when there is no size column.
    pub default_size: u32,
    /// Hash non-numeric keys to 64 bits instead of rejecting them.
    pub hash_keys: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            time: 1,
            key: 2,
            size: 3,
            op: 0,
            pid: 0,
            header: false,
            delimiter: ',',
            default_size: 4096,
            hash_keys: false,
        }
    }
}

impl CsvOptions {
    /// Checks the options themselves; returns (field, message) on error.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.key == 0 {
            return Err((
                "key",
                "the key column is required: a 1-based column number".into(),
            ));
        }
        if !self.delimiter.is_ascii() {
            return Err((
                "delimiter",
                format!("{:?} is not one ASCII character", self.delimiter),
            ));
        }
        // One role per column: the parser reads each column once (two roles
        // on one column failed every line with "column N is needed").
        let cols = [
            ("time", self.time),
            ("key", self.key),
            ("size", self.size),
            ("op", self.op),
            ("pid", self.pid),
        ];
        for (i, &(name, col)) in cols.iter().enumerate() {
            if let Some(&(other, _)) = cols[..i].iter().find(|c| col != 0 && c.1 == col) {
                return Err((
                    name,
                    format!(
                        "column {col} is also the {other} column; give each a column of its own \
                         (0 for none: time = line number, size = default_size{})",
                        if name == "op" { ", op = read" } else { "" }
                    ),
                ));
            }
        }
        Ok(())
    }
}

pub type CsvReader = TextReader<CsvParser>;

pub struct CsvParser {
    opts: CsvOptions,
    /// Fields wanted, in column order: (0-based column, role).
    want: Vec<(usize, Role)>,
    last_col: usize,
}

#[derive(Clone, Copy, Debug)]
enum Role {
    Time,
    Key,
    Size,
    Op,
    Pid,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Time => "time",
            Role::Key => "key",
            Role::Size => "size",
            Role::Op => "op",
            Role::Pid => "pid",
        }
    }
}

impl CsvReader {
    pub fn open(path: &Path, opts: &CsvOptions, skip_bad: bool) -> Result<Self, TraceError> {
        let mut want = Vec::new();
        for (col, role) in [
            (opts.time, Role::Time),
            (opts.key, Role::Key),
            (opts.size, Role::Size),
            (opts.op, Role::Op),
            (opts.pid, Role::Pid),
        ] {
            if col > 0 {
                want.push((col - 1, role));
            }
        }
        want.sort_by_key(|w| w.0);
        let last_col = want.last().map_or(0, |w| w.0);
        let mut lines = Lines::open(path, skip_bad)?;
        if opts.header {
            lines.next_line()?;
        }
        Ok(TextReader::new(
            lines,
            CsvParser {
                opts: opts.clone(),
                want,
                last_col,
            },
        ))
    }
}

impl CsvParser {
    // Inline: TextReader's loop is instantiated in the crate that names
    // CsvReader (the readers bench, the Python module), and a per-line call
    // across crates costs the CSV reader about a fifth of its speed.
    #[inline]
    fn parse_line(&self, line: &[u8], lineno: u64) -> Result<Request, String> {
        let delim = self.opts.delimiter as u8;
        let mut req = Request {
            time: lineno,
            key: 0,
            size: self.opts.default_size,
            op: Op::Read,
            pid: 0,
            next_access: -1,
        };
        let mut wi = 0;
        let mut fields = 0;
        for (col, field) in line.split(|b| *b == delim).enumerate() {
            fields = col + 1;
            if col > self.last_col {
                break;
            }
            if self.want[wi].0 != col {
                continue;
            }
            let role = self.want[wi].1;
            let f = trim(field);
            match role {
                Role::Time => req.time = self.num(f, col, role)?,
                Role::Key => {
                    req.key = match parse_u64(f) {
                        Some(k) => k,
                        None if self.opts.hash_keys && !f.is_empty() => {
                            let mut h = KeyHasher::default();
                            h.write(f);
                            h.finish()
                        }
                        None => {
                            return Err(format!(
                                "column {} (key) is {}, not an unsigned integer\nhint: set hash_keys = true in [workload.csv] to hash non-numeric keys",
                                col + 1,
                                show(f)
                            ))
                        }
                    }
                }
                Role::Size => {
                    let v = self.num(f, col, role)?;
                    req.size = u32::try_from(v).map_err(|_| {
                        format!("column {} (size) is {v}, larger than 4 GiB - 1", col + 1)
                    })?;
                }
                Role::Op => req.op = parse_op(f).ok_or_else(|| {
                    format!(
                        "column {} (op) is {}; expected read/get, write/set or delete/del",
                        col + 1,
                        show(f)
                    )
                })?,
                Role::Pid => {
                    let v = self.num(f, col, role)?;
                    req.pid = u32::try_from(v).map_err(|_| {
                        format!("column {} (pid) is {v}, larger than 2^32 - 1", col + 1)
                    })?;
                }
            }
            wi += 1;
            if wi == self.want.len() {
                return Ok(req);
            }
        }
        Err(format!(
            "{} field(s), but column {} ({}) is needed (delimiter {:?})",
            fields,
            self.want[wi].0 + 1,
            self.want[wi].1.name(),
            self.opts.delimiter
        ))
    }

    #[inline]
    fn num(&self, f: &[u8], col: usize, role: Role) -> Result<u64, String> {
        if let Some(v) = parse_u64(f) {
            return Ok(v);
        }
        // Timestamps are often written as decimals; keep the integer part.
        if matches!(role, Role::Time) {
            if let Some(v) = std::str::from_utf8(f)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
            {
                if v >= 0.0 && v.is_finite() {
                    return Ok(v as u64);
                }
            }
        }
        Err(format!(
            "column {} ({}) is {}, not an unsigned integer",
            col + 1,
            role.name(),
            show(f)
        ))
    }
}

/// A field for an error message: quoted, and cut short (a binary file read
/// as CSV has "fields" of megabytes).
pub(crate) fn show(f: &[u8]) -> String {
    const MAX: usize = 40;
    let s = String::from_utf8_lossy(&f[..f.len().min(MAX)]);
    if f.len() > MAX {
        format!("{:?}... ({} bytes)", s, f.len())
    } else {
        format!("{s:?}")
    }
}

pub(crate) fn trim(f: &[u8]) -> &[u8] {
    let s = f
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(f.len());
    let e = f
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(s, |e| e + 1);
    let f = &f[s..e];
    // Quoted fields: strip one pair of quotes.
    if f.len() >= 2 && f[0] == b'"' && f[f.len() - 1] == b'"' {
        &f[1..f.len() - 1]
    } else {
        f
    }
}

#[inline]
pub(crate) fn parse_u64(f: &[u8]) -> Option<u64> {
    if f.is_empty() || f.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in f {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

pub(crate) fn parse_op(f: &[u8]) -> Option<Op> {
    let mut buf = [0u8; 16];
    if f.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(f) {
        *d = s.to_ascii_lowercase();
    }
    match &buf[..f.len()] {
        b"read" | b"get" | b"gets" | b"r" => Some(Op::Read),
        b"write" | b"set" | b"w" | b"put" | b"add" | b"replace" | b"cas" | b"append"
        | b"prepend" | b"update" => Some(Op::Write),
        b"delete" | b"del" | b"d" | b"remove" => Some(Op::Delete),
        _ => None,
    }
}

impl LineParser for CsvParser {
    const KIND: &'static str = "CSV file";
    const FORMAT: crate::source::formats::Format = crate::source::formats::Format::Csv;

    #[inline]
    fn parse(&mut self, line: &[u8], lineno: u64) -> Result<Option<Request>, String> {
        if line.is_empty() || line[0] == b'#' {
            return Ok(None);
        }
        self.parse_line(line, lineno).map(Some)
    }
}

/// The header of a CSV tierlab writes (`trace generate --format csv`,
/// `trace convert`): a file that starts with it is read by its columns.
pub const HEADER: &str = "time,key,size,op";

/// The registry's view of CSV ([`crate::source::formats`]).
pub struct Csv;

impl TraceFormat for Csv {
    const TITLE: &'static str = "CSV text";
    const KEYS: &'static [&'static str] = &["csv"];

    fn source(
        path: PathBuf,
        p: &TraceParams,
        first_line: Option<&[u8]>,
    ) -> Result<Source, KeyError> {
        let o = match &p.csv {
            Some(o) => o.clone(),
            // Its header names the columns, and the op column keeps
            // writes and deletes.
            None if first_line == Some(HEADER.as_bytes()) => CsvOptions {
                header: true,
                op: 4,
                ..CsvOptions::default()
            },
            None => CsvOptions::default(),
        };
        o.validate().map_err(|(f, m)| (format!("csv.{f}"), m))?;
        Ok(Source::Csv(path, o, p.skip_bad.unwrap_or(false)))
    }

    fn sniff(head: &[u8]) -> Likeness {
        if formats::first_line(head) == HEADER.as_bytes() {
            return Likeness::Sure;
        }
        // Numeric time, key and size columns (a header line allowed).
        let numeric = |l: &[u8]| {
            let f: Vec<&[u8]> = l.split(|b| *b == b',').map(trim).collect();
            f.len() >= 2 && f.iter().take(3).all(|x| parse_u64(x).is_some())
        };
        let mut n = 0;
        for (i, l) in formats::lines(head, 8).enumerate() {
            if !formats::is_text(l) || !(numeric(l) || i == 0) {
                return Likeness::No;
            }
            n += numeric(l) as usize;
        }
        if n > 0 {
            Likeness::Plausible
        } else {
            Likeness::No
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::trace::TraceSource;
    use std::io::Write;

    fn read_all(text: &str, opts: &CsvOptions) -> Result<Vec<Request>, TraceError> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let mut r = CsvReader::open(f.path(), opts, false)?;
        let mut all = Vec::new();
        let mut buf = Vec::new();
        while r.next_batch(&mut buf, 2)? > 0 {
            all.extend_from_slice(&buf);
        }
        Ok(all)
    }

    #[test]
    fn two_roles_on_one_column_are_refused() {
        let both = |time, size, op| CsvOptions {
            time,
            size,
            op,
            ..Default::default()
        };
        let (field, msg) = both(2, 3, 0).validate().unwrap_err();
        assert_eq!(field, "key");
        assert!(msg.starts_with("column 2 is also the time column"), "{msg}");
        let (field, msg) = both(1, 3, 3).validate().unwrap_err();
        assert_eq!(field, "op");
        assert!(msg.contains("also the size column"), "{msg}");
        assert!(both(0, 0, 3).validate().is_ok());
        assert!(both(1, 3, 4).validate().is_ok());
    }

    #[test]
    fn parses_columns_ops_and_header() {
        let opts = CsvOptions {
            op: 4,
            header: true,
            ..Default::default()
        };
        let reqs = read_all(
            "time,key,size,op\n1,10,4096,get\n2, 11 ,100,SET\r\n\n3,10,4096,del\n",
            &opts,
        )
        .unwrap();
        assert_eq!(reqs.len(), 3);
        assert_eq!(
            (reqs[1].key, reqs[1].size, reqs[1].op),
            (11, 100, Op::Write)
        );
        assert_eq!(reqs[2].op, Op::Delete);
    }

    #[test]
    fn pid_column() {
        let opts = CsvOptions {
            pid: 4,
            ..Default::default()
        };
        let reqs = read_all("1,10,4096,7\n2,11,4096,3\n", &opts).unwrap();
        assert_eq!((reqs[0].pid, reqs[1].pid), (7, 3));
        let e = read_all("1,10,4096,x\n", &opts).unwrap_err().to_string();
        assert!(e.contains("column 4 (pid)"), "{e}");
        let both = CsvOptions {
            pid: 3,
            ..Default::default()
        };
        assert_eq!(both.validate().unwrap_err().0, "pid");
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let opts = CsvOptions::default();
        let e = read_all("1,10,4096\n2,abc,4096\n", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("\nhint: set hash_keys = true in [workload.csv] to hash non-numeric keys"),
            "{e}"
        );
        assert!(e.contains(":2: column 2 (key)"), "{e}");
        let e = read_all("1,10\n", &opts).unwrap_err().to_string();
        assert!(
            e.contains(":1: 2 field(s), but column 3 (size) is needed"),
            "{e}"
        );
    }

    #[test]
    fn hashes_string_keys_when_asked() {
        let opts = CsvOptions {
            hash_keys: true,
            size: 0,
            ..Default::default()
        };
        let r = read_all("1,foo\n2,bar\n3,foo\n", &opts).unwrap();
        assert_eq!(r[0].key, r[2].key);
        assert_ne!(r[0].key, r[1].key);
        assert_eq!(r[0].size, 4096);
    }
}
