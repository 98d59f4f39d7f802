//! strace text (`strace -f -ttt -s 0 -e trace=...`) turned into page-granular
//! file requests: one request per page a read or write touches, keyed by
//! (file, page), with deletes for the pages an unlink or truncate drops.
//!
//! The model keeps what the kernel keeps: per process, a table from file
//! descriptor to an open file description (file, offset, append flag) that
//! `dup`s and forked children share, so offsets advance as they do for the
//! program. Files are named by the path given to open (no cwd tracking: a
//! relative path is its own file), and a rename carries a file's pages to
//! its new name. Reads and writes on descriptors that were not opened on a
//! traced path (pipes, sockets, inherited stdio) are not file I/O here and
//! are left out; so are failed calls and memory-mapped I/O. A path given to
//! an `*at` call is taken relative to the directory its descriptor was
//! opened on (`rm -rf` and `find` unlink through directory descriptors).

use super::limits::Limits;
use super::lines::{LineParser, Lines, TextReader};
use super::TraceError;
use crate::request::{Op, Request};
use crate::source::formats::{self, KeyError, Likeness, TraceFormat, TraceParams};
use crate::source::Source;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// The syscalls `tierlab capture files` asks strace for.
/// `execve` is not file I/O: its results tell whether the program started
/// (`capture::start_failure`).
pub const SYSCALLS: &str = "open,openat,openat2,creat,read,write,pread64,pwrite64,readv,writev,copy_file_range,sendfile,lseek,truncate,ftruncate,unlink,unlinkat,rmdir,rename,renameat,renameat2,close,dup,dup2,dup3,fcntl,clone,clone3,fork,vfork,execve,execveat";

#[derive(Clone, Copy, Debug)]
struct Ofd {
    file: u32,
    offset: u64,
    append: bool,
}

#[derive(Default)]
struct FileState {
    /// Bytes written or read past so far: the extent deletes must cover.
    size: u64,
    /// Bytes the file's reads and writes have covered in all: a delete of
    /// more than this (and the record limit) is a sparse extent no trace
    /// of real I/O makes, and would cost time without bound.
    covered: u64,
}

/// Pages of one call still to hand out: the pages `next..end` of `file`.
/// Queued as a range, not as requests, so one call of any size holds
/// constant memory.
#[derive(Clone, Copy, Debug)]
struct Span {
    time: u64,
    pid: u32,
    file: u32,
    next: u64,
    end: u64,
    op: Op,
}

pub type StraceReader = TextReader<StraceParser>;

pub struct StraceParser {
    page: u64,
    /// Per pid: fd -> index into `ofds`.
    fds: HashMap<u32, HashMap<i64, usize>>,
    ofds: Vec<Ofd>,
    /// The paths of the descriptions opened on directories (`O_DIRECTORY`,
    /// `O_PATH`): what an `*at` call's relative path is relative to.
    dirs: HashMap<usize, String>,
    /// Path -> file id (ids are never reused: a file created again after an
    /// unlink is a new file).
    names: HashMap<String, u32>,
    files: Vec<FileState>,
    /// A call strace split with `<unfinished ...>`, per pid.
    unfinished: HashMap<u32, String>,
    /// Requests of the calls parsed so far, not yet handed out: one call can
    /// make any number (a large write, an unlink of a large file).
    out: VecDeque<Span>,
    /// The most bytes one call may cover.
    limits: Limits,
    /// The pid of the call being parsed: its requests carry it.
    pid: u32,
}

impl StraceReader {
    pub fn open(path: &Path, page_size: u32, skip_bad: bool) -> Result<Self, TraceError> {
        let lines = Lines::open(path, skip_bad)?;
        let limits = lines.limits;
        Ok(TextReader::new(
            lines,
            StraceParser {
                limits,
                page: page_size.max(1) as u64,
                fds: HashMap::new(),
                ofds: Vec::new(),
                dirs: HashMap::new(),
                names: HashMap::new(),
                files: Vec::new(),
                unfinished: HashMap::new(),
                out: VecDeque::new(),
                pid: 0,
            },
        ))
    }
}

impl StraceParser {
    fn file_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = self.files.len() as u32;
        self.files.push(FileState::default());
        self.names.insert(name.to_string(), id);
        id
    }

    fn key(&self, file: u32, page: u64) -> u64 {
        ((file as u64) << 32) | (page & 0xffff_ffff)
    }

    /// Requests for `len` bytes at `offset` of `file`; more than the
    /// record limit is an error.
    fn pages(&mut self, time: u64, file: u32, offset: u64, len: u64, op: Op) -> Result<(), String> {
        if len == 0 {
            return Ok(());
        }
        self.limits.check_record(len)?;
        let end = offset.saturating_add(len);
        self.out.push_back(Span {
            time,
            pid: self.pid,
            file,
            next: offset / self.page,
            end: (end - 1) / self.page + 1,
            op,
        });
        let f = &mut self.files[file as usize];
        f.size = f.size.max(end);
        f.covered = f.covered.saturating_add(len);
        Ok(())
    }

    /// Deletes for the pages of `file` from byte `from` on.
    fn drop_from(&mut self, time: u64, file: u32, from: u64) -> Result<(), String> {
        let f = &self.files[file as usize];
        let extent = f.size.saturating_sub(from);
        if extent > f.covered.max(self.limits.record) {
            return Err(format!(
                "deletes {extent} bytes of a file its reads and writes covered {} bytes of: \
                 a sparse extent over the limit of one record\n\
                 hint: set {} to a larger size to read it",
                f.covered,
                super::limits::RECORD_VAR
            ));
        }
        let first = from.div_ceil(self.page);
        let end = f.size.div_ceil(self.page);
        if first < end {
            self.out.push_back(Span {
                time,
                pid: self.pid,
                file,
                next: first,
                end,
                op: Op::Delete,
            });
        }
        let f = &mut self.files[file as usize];
        f.size = f.size.min(from);
        Ok(())
    }

    fn fd(&self, pid: u32, fd: i64) -> Option<usize> {
        self.fds.get(&pid).and_then(|t| t.get(&fd)).copied()
    }

    /// The file an `*at` call names: `rel` in the directory `dirfd` was
    /// opened on. `AT_FDCWD`, an absolute path or a descriptor not opened
    /// on a traced directory leave the path as given (no cwd tracking).
    fn at_path(&self, pid: u32, dirfd: Option<&String>, rel: String) -> String {
        if rel.starts_with('/') {
            return rel;
        }
        let dir = dirfd
            .and_then(|a| a.trim().parse::<i64>().ok())
            .and_then(|fd| self.fd(pid, fd))
            .and_then(|o| self.dirs.get(&o));
        match dir {
            Some(dir) => join(dir, &rel),
            None => rel,
        }
    }

    /// Parses one complete call: `name(args) = ret ...`.
    fn call(&mut self, pid: u32, time: u64, text: &str) -> Result<(), String> {
        self.pid = pid;
        let Some(open) = text.find('(') else {
            return Ok(());
        };
        let name = &text[..open];
        // strace pads short calls: `close(3)        = 0`.
        let Some(eq) = text.rfind(" = ") else {
            return Ok(());
        };
        let Some(close) = text[..eq].rfind(')').filter(|&c| c > open) else {
            return Err(format!("{name}: no closing parenthesis"));
        };
        let args = split_args(&text[open + 1..close]);
        let ret_text = text[eq + 3..].split_whitespace().next().unwrap_or("");
        let Ok(ret) = ret_text.parse::<i64>() else {
            if ret_text.starts_with("0x") || ret_text == "?" {
                return Ok(());
            }
            return Err(format!("{name}: result {ret_text:?} is not a number"));
        };
        if ret < 0 {
            return Ok(()); // failed calls change nothing
        }
        let num = |i: usize| -> Option<i64> { args.get(i).and_then(|a| a.trim().parse().ok()) };
        let pathname = |i: usize| args.get(i).and_then(|a| unquote(a)).map(clean);
        match name {
            // openat2's flags are in its `{flags=..., mode=..., resolve=...}`.
            "open" | "openat" | "openat2" | "creat" => {
                let at = name.starts_with("openat");
                let pi = usize::from(at);
                let Some(p) = pathname(pi) else {
                    return Err(format!("{name}: no path argument"));
                };
                let p = if at {
                    self.at_path(pid, args.first(), p)
                } else {
                    p
                };
                let flags = if name == "creat" {
                    "O_TRUNC"
                } else {
                    args.get(pi + 1).map_or("", |s| s.as_str())
                };
                let file = self.file_id(&p);
                if flags.contains("O_TRUNC") {
                    self.drop_from(time, file, 0)?;
                }
                let ofd = self.ofds.len();
                self.ofds.push(Ofd {
                    file,
                    offset: 0,
                    append: flags.contains("O_APPEND"),
                });
                if flags.contains("O_DIRECTORY") || flags.contains("O_PATH") {
                    self.dirs.insert(ofd, p);
                }
                self.fds.entry(pid).or_default().insert(ret, ofd);
            }
            "read" | "write" | "readv" | "writev" => {
                let Some(o) = num(0).and_then(|fd| self.fd(pid, fd)) else {
                    return Ok(());
                };
                let op = if name.starts_with("read") {
                    Op::Read
                } else {
                    Op::Write
                };
                let mut d = self.ofds[o];
                if op == Op::Write && d.append {
                    d.offset = self.files[d.file as usize].size;
                }
                self.pages(time, d.file, d.offset, ret as u64, op)?;
                d.offset = d.offset.saturating_add(ret as u64);
                self.ofds[o] = d;
            }
            "pread64" | "pwrite64" => {
                let Some(o) = num(0).and_then(|fd| self.fd(pid, fd)) else {
                    return Ok(());
                };
                let Some(off) = num(3) else {
                    return Err(format!("{name}: no offset argument"));
                };
                let op = if name == "pread64" {
                    Op::Read
                } else {
                    Op::Write
                };
                let file = self.ofds[o].file;
                self.pages(time, file, off as u64, ret as u64, op)?;
            }
            // copy_file_range(in, off_in, out, off_out, len, flags) and
            // sendfile(out, in, offset, count): a read of one file and a write
            // of another; a NULL offset means the descriptor's, which advances.
            "copy_file_range" | "sendfile" => {
                let (fin, offin, fout, offout) = if name == "sendfile" {
                    (1, 2, 0, usize::MAX)
                } else {
                    (0, 1, 2, 3)
                };
                let n = ret as u64;
                for (fdi, offi, op) in [(fin, offin, Op::Read), (fout, offout, Op::Write)] {
                    let Some(o) = num(fdi).and_then(|fd| self.fd(pid, fd)) else {
                        continue;
                    };
                    let file = self.ofds[o].file;
                    match args.get(offi).and_then(|a| bracketed(a)) {
                        Some(off) => self.pages(time, file, off, n, op)?,
                        None => {
                            let off = self.ofds[o].offset;
                            self.pages(time, file, off, n, op)?;
                            self.ofds[o].offset = self.ofds[o].offset.saturating_add(n);
                        }
                    }
                }
            }
            "lseek" => {
                if let Some(o) = num(0).and_then(|fd| self.fd(pid, fd)) {
                    self.ofds[o].offset = ret as u64;
                }
            }
            "ftruncate" => {
                if let (Some(o), Some(len)) = (num(0).and_then(|fd| self.fd(pid, fd)), num(1)) {
                    let file = self.ofds[o].file;
                    self.drop_from(time, file, len as u64)?;
                }
            }
            "truncate" => {
                if let (Some(p), Some(len)) = (pathname(0), num(1)) {
                    if let Some(&file) = self.names.get(&p) {
                        self.drop_from(time, file, len as u64)?;
                    }
                }
            }
            // A directory has no pages (rmdir and AT_REMOVEDIR need it
            // empty): removing its name makes a file created there later a
            // new file.
            "unlink" | "unlinkat" | "rmdir" => {
                let p = match name {
                    "unlinkat" => pathname(1).map(|p| self.at_path(pid, args.first(), p)),
                    _ => pathname(0),
                };
                if let Some(file) = p.and_then(|p| self.names.remove(&p)) {
                    self.drop_from(time, file, 0)?;
                }
            }
            "rename" | "renameat" | "renameat2" => {
                let (from, to) = if name == "rename" {
                    (pathname(0), pathname(1))
                } else {
                    (
                        pathname(1).map(|p| self.at_path(pid, args.first(), p)),
                        pathname(3).map(|p| self.at_path(pid, args.get(2), p)),
                    )
                };
                if let (Some(from), Some(to)) = (from, to) {
                    if let Some(file) = self.names.remove(&from) {
                        if let Some(old) = self.names.insert(to, file) {
                            self.drop_from(time, old, 0)?;
                        }
                    }
                }
            }
            "close" => {
                if let (Some(t), Some(fd)) = (self.fds.get_mut(&pid), num(0)) {
                    t.remove(&fd);
                }
            }
            "dup" | "dup2" | "dup3" => {
                if let Some(o) = num(0).and_then(|fd| self.fd(pid, fd)) {
                    self.fds.entry(pid).or_default().insert(ret, o);
                }
            }
            "fcntl" => {
                let dupfd = args.get(1).is_some_and(|a| a.trim().starts_with("F_DUPFD"));
                if let (true, Some(o)) = (dupfd, num(0).and_then(|fd| self.fd(pid, fd))) {
                    self.fds.entry(pid).or_default().insert(ret, o);
                }
            }
            // The child (its pid is the result) starts with the parent's
            // descriptors, sharing their offsets.
            "clone" | "clone3" | "fork" | "vfork" if ret > 0 => {
                let table = self.fds.get(&pid).cloned().unwrap_or_default();
                self.fds.insert(ret as u32, table);
            }
            _ => {}
        }
        Ok(())
    }

    fn parse_line(&mut self, line: &str) -> Result<(), String> {
        let text = line.trim_end();
        if text.is_empty() {
            return Ok(());
        }
        // Cut by bytes, not at a char (slicing a str there panicked on
        // binary input read as strace).
        let bad = || {
            format!(
                "expected `PID SECONDS.MICROS call(...)` (strace -f -ttt), not {}",
                crate::source::trace::csv::show(text.as_bytes())
            )
        };
        // strace pads the pid column when pids have fewer digits: fields are
        // separated by runs of spaces.
        let Some((pid, after)) = text.trim_start().split_once(' ') else {
            return Err(bad());
        };
        let Some((ts, rest)) = after.trim_start().split_once(' ') else {
            return Err(bad());
        };
        let (Ok(pid), Some(time)) = (pid.parse::<u32>(), parse_time_ns(ts)) else {
            return Err(bad());
        };
        let rest = rest.trim_start();
        if rest.starts_with("+++") || rest.starts_with("---") {
            return Ok(());
        }
        if let Some(head) = rest.strip_suffix("<unfinished ...>") {
            self.unfinished.insert(pid, head.trim_end().to_string());
            Ok(())
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            // `<... read resumed>, 4096) = 12`: join with the unfinished part.
            let after = tail.find("resumed>").map_or(tail, |i| &tail[i + 8..]);
            match self.unfinished.remove(&pid) {
                Some(head) => self.call(pid, time, &format!("{head}{after}")),
                None => Ok(()), // began before the trace started
            }
        } else {
            self.call(pid, time, rest)
        }
    }
}

/// `SECONDS.FRACTION` to nanoseconds, exactly (no float rounding).
fn parse_time_ns(ts: &str) -> Option<u64> {
    let (s, f) = ts.split_once('.').unwrap_or((ts, ""));
    if f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: u64 = if f.is_empty() { 0 } else { f.parse().ok()? };
    Some(s.parse::<u64>().ok()?.checked_mul(1_000_000_000)? + frac * 10u64.pow(9 - f.len() as u32))
}

/// Splits top-level arguments on commas outside quotes, braces and brackets.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut depth, mut quoted, mut escaped) = (0i32, false, false);
    for c in s.chars() {
        if quoted {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                quoted = false;
            }
            continue;
        }
        match c {
            '"' => {
                quoted = true;
                cur.push(c);
            }
            '{' | '[' | '(' => {
                depth += 1;
                cur.push(c);
            }
            '}' | ']' | ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// `rel` under `dir`, without the `.` components and doubled slashes that
/// would make one file two names (`..` stays: through a symlink it is not
/// the lexical parent).
fn join(dir: &str, rel: &str) -> String {
    let mut out = String::with_capacity(dir.len() + rel.len() + 1);
    if dir.starts_with('/') {
        out.push('/');
    }
    let parts = dir.split('/').chain(rel.split('/'));
    for part in parts.filter(|c| !c.is_empty() && *c != ".") {
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(part);
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// `p` as [`join`] writes paths, so that `./d//f` and `d/f` are one file;
/// most paths need nothing and are returned as they are.
fn clean(p: String) -> String {
    let untidy = p.contains("//")
        || p.contains("/./")
        || p.starts_with("./")
        || (p.len() > 1 && (p.ends_with('/') || p.ends_with("/.")));
    if untidy {
        join(&p, "")
    } else {
        p
    }
}

/// The value inside `[...]` (strace's way of showing a pointed-to offset,
/// `[0]` or `[0 => 4096]`: the value on entry comes first).
fn bracketed(a: &str) -> Option<u64> {
    let inner = a.trim().strip_prefix('[')?;
    inner
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A quoted strace string (`"a\"b"`), unescaped; None when not a string.
pub(crate) fn unquote(a: &str) -> Option<String> {
    let a = a.trim();
    let inner = a.strip_prefix('"')?;
    let end = inner.rfind('"')?;
    let mut out = String::new();
    let mut chars = inner[..end].chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// A call makes any number of requests, and calls change state later calls
/// read (offsets, names): parsing queues requests in `out`, and `pending`
/// hands them out in order.
impl LineParser for StraceParser {
    const KIND: &'static str = "strace file I/O";
    const FORMAT: crate::source::formats::Format = crate::source::formats::Format::Strace;

    fn parse(&mut self, line: &[u8], _lineno: u64) -> Result<Option<Request>, String> {
        // strace writes text; a line that is not UTF-8 is not strace's.
        let line = String::from_utf8_lossy(line);
        self.parse_line(&line)?;
        Ok(None)
    }

    fn pending(&mut self) -> Option<Request> {
        let s = *self.out.front()?;
        if s.next + 1 >= s.end {
            self.out.pop_front();
        } else if let Some(f) = self.out.front_mut() {
            f.next += 1;
        }
        Some(Request {
            time: s.time,
            key: self.key(s.file, s.next),
            size: self.page as u32,
            op: s.op,
            pid: s.pid,
            next_access: -1,
        })
    }
}

/// The registry's view of strace logs ([`crate::source::formats`]).
pub struct Strace;

impl TraceFormat for Strace {
    const TITLE: &'static str = "an strace log";
    const KEYS: &'static [&'static str] = &["page_size"];

    fn source(path: PathBuf, p: &TraceParams, _: Option<&[u8]>) -> Result<Source, KeyError> {
        let page = formats::page_size(p)?;
        Ok(Source::Strace(path, page, p.skip_bad.unwrap_or(false)))
    }

    fn sniff(head: &[u8]) -> Likeness {
        // `[pid] seconds.micros name(...` as `strace -f -ttt` writes it.
        let call = |l: &[u8]| {
            let Ok(l) = std::str::from_utf8(l) else {
                return false;
            };
            let mut w = l.split_whitespace();
            let mut t = w.next().unwrap_or("");
            if t.bytes().all(|b| b.is_ascii_digit()) {
                t = w.next().unwrap_or("");
            }
            let rest = w.next().unwrap_or("");
            parse_time_ns(t).is_some()
                && t.contains('.')
                && rest.split_once('(').is_some_and(|(name, _)| {
                    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                })
        };
        formats::every_line(head, 8, |_, l| {
            // Signals and exits (`--- SIGCHLD`, `+++ exited`) carry no call.
            if l.contains(&b'(') && call(l) {
                Some(true)
            } else if l
                .windows(8)
                .any(|w| w.starts_with(b"---") || w.starts_with(b"+++") || w == b"resumed>")
            {
                None
            } else {
                Some(false)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::trace::TraceSource;
    use std::io::Write;

    fn read(text: &str, page: u32) -> Result<Vec<Request>, TraceError> {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        let mut r = StraceReader::open(f.path(), page, false)?;
        let mut all = Vec::new();
        let mut buf = Vec::new();
        while r.next_batch(&mut buf, 3)? > 0 {
            all.extend_from_slice(&buf);
        }
        Ok(all)
    }

    #[test]
    fn offsets_dup_fork_unlink_and_resumed_calls() {
        let t = r#"100 1.000001 openat(AT_FDCWD, "/d/a", O_RDWR|O_CREAT, 0644) = 3
100   1.000002 write(3, ""..., 10000) = 10000
100 1.000003 lseek(3, 0, SEEK_SET) = 0
100 1.000004 read(3, <unfinished ...>
101 1.000005 +++ exited with 0 +++
100 1.000006 <... read resumed>""..., 4096) = 4096
100 1.000007 dup2(3, 7) = 7
100 1.000008 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 200
200 1.000009 read(7, ""..., 100) = 100
100 1.000010 pread64(3, ""..., 10, 8192) = 10
100 1.000011 read(0, ""..., 10) = 10
100 1.000012 openat(AT_FDCWD, "/d/b", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4
100 1.000012 copy_file_range(3, NULL, 4, NULL, 9223372035781033984, 0) = 5000
100 1.000012 copy_file_range(3, [0 => 10], 4, NULL, 10, 0) = 10
100 1.000012 openat(AT_FDCWD, "/d/missing", O_RDONLY) = -1 ENOENT (No such file or directory)
100 1.000013 unlink("/d/a")        = 0
"#;
        let r = read(t, 4096).unwrap();
        let ops: Vec<(u64, Op)> = r.iter().map(|q| (q.key, q.op)).collect();
        use Op::*;
        assert_eq!(
            ops,
            vec![
                (0, Write),
                (1, Write),
                (2, Write), // 10000 bytes from 0
                (0, Read),  // 4096 from 0 after lseek
                (1, Read),  // the child shares the offset: 4096..4196
                (2, Read),  // pread at 8192
                (1, Read),  // copy_file_range of 5000 bytes from /d/a's offset 4196
                (2, Read),
                (1 << 32, Write), // ... to /d/b at 0
                ((1 << 32) | 1, Write),
                (0, Read),              // 10 bytes from the explicit offset 0
                ((1 << 32) | 1, Write), // to /d/b's offset 5000
                (0, Delete),
                (1, Delete),
                (2, Delete),
            ]
        );
        assert_eq!(r[0].time, 1_000_002_000);
    }

    #[test]
    fn rename_keeps_pages_and_truncate_drops_them() {
        let t = r#"1 0.5 creat("x", 0644) = 3
1 0.6 write(3, ""..., 8192) = 8192
1 0.7 rename("x", "y") = 0
1 0.8 truncate("y", 100) = 0
1 0.9 openat(AT_FDCWD, "y", O_WRONLY|O_APPEND) = 4
1 1.0 write(4, ""..., 10) = 10
"#;
        let r = read(t, 4096).unwrap();
        let ops: Vec<(u64, Op)> = r.iter().map(|q| (q.key, q.op)).collect();
        assert_eq!(
            ops,
            vec![
                (0, Op::Write),
                (1, Op::Write),
                (1, Op::Delete),
                (0, Op::Write)
            ]
        );
    }

    /// `rm -rf d` as coreutils 9 does it: through directory descriptors
    /// (regression: unlinkat's path was taken as is, "f1", a file never
    /// written, and no deletes were recorded).
    #[test]
    fn rm_rf_unlinks_through_directory_descriptors() {
        let t = r#"5 1.0 openat(AT_FDCWD, "d/f1", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3
5 1.1 write(3, ""..., 5000) = 5000
5 1.2 openat(AT_FDCWD, "./d//sub/f2", O_WRONLY|O_CREAT, 0666) = 4
5 1.3 write(4, ""..., 10) = 10
6 2.0 openat(AT_FDCWD, "d", O_RDONLY|O_NOCTTY|O_NONBLOCK|O_NOFOLLOW|O_DIRECTORY) = 3
6 2.1 fcntl(3, F_DUPFD_CLOEXEC, 3) = 4
6 2.2 close(3) = 0
6 2.3 openat(4, "sub", O_RDONLY|O_NOCTTY|O_NONBLOCK|O_NOFOLLOW|O_DIRECTORY) = 5
6 2.4 unlinkat(5, "f2", 0) = 0
6 2.5 close(5) = 0
6 2.6 unlinkat(4, "sub", AT_REMOVEDIR) = 0
6 2.7 unlinkat(4, "f1", 0) = 0
6 2.8 close(4) = 0
6 2.9 unlinkat(AT_FDCWD, "d", AT_REMOVEDIR) = 0
"#;
        let r = read(t, 4096).unwrap();
        let ops: Vec<(u64, Op)> = r.iter().map(|q| (q.key, q.op)).collect();
        use Op::*;
        assert_eq!(
            ops,
            vec![
                (0, Write),
                (1, Write),
                (1 << 32, Write),
                (1 << 32, Delete), // d/sub/f2, through fd 5 on d/sub
                (0, Delete),       // d/f1, through fd 4 (a dup of fd 3 on d)
                (1, Delete),
            ]
        );
    }

    #[test]
    fn openat2_renameat_and_rmdir() {
        let t = r#"1 0.1 openat(AT_FDCWD, "/t", O_RDONLY|O_PATH|O_DIRECTORY) = 3
1 0.2 openat2(3, "a", {flags=O_RDWR|O_CREAT, mode=0644, resolve=0}, 24) = 4
1 0.3 write(4, ""..., 4096) = 4096
1 0.4 renameat2(3, "a", AT_FDCWD, "/t/b", RENAME_NOREPLACE) = 0
1 0.5 openat2(AT_FDCWD, "/t/b", {flags=O_WRONLY|O_TRUNC, resolve=0}, 24) = 5
1 0.6 write(5, ""..., 10) = 10
1 0.7 rmdir("/x") = 0
1 0.8 renameat(3, "b", 3, "c") = 0
1 0.9 unlink("/t/c") = 0
"#;
        let r = read(t, 4096).unwrap();
        let ops: Vec<(u64, Op)> = r.iter().map(|q| (q.key, q.op)).collect();
        use Op::*;
        // /t is file 0; /t/a (renamed to /t/b, then /t/c) is file 1.
        let a = 1 << 32;
        assert_eq!(ops, vec![(a, Write), (a, Delete), (a, Write), (a, Delete)]);
    }

    #[test]
    fn join_drops_dots_and_doubled_slashes() {
        assert_eq!(join("d", "f"), "d/f");
        assert_eq!(join("./d/", ".//f"), "d/f");
        assert_eq!(join("/", "f"), "/f");
        assert_eq!(join(".", "."), ".");
        assert_eq!(join("/a/../b", "f"), "/a/../b/f");
        assert_eq!(clean("./d//sub/./f/".into()), "d/sub/f");
        assert_eq!(clean("/".into()), "/");
        assert_eq!(clean(".".into()), ".");
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let e = read("1 0.5 close(3) = 0\nnot strace at all\n", 4096)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(":2: expected `PID SECONDS.MICROS call(...)`"),
            "{e}"
        );
    }
}
