//! Writing a trace file without losing one.
//!
//! A conversion writes into a new file beside its output and renames it over
//! the output only once the whole trace is written. So a conversion that
//! fails (a malformed line half way through a CSV), is interrupted (Ctrl-C)
//! or cannot finish (a full disk) leaves a file already at the output as it
//! was, and no partial file behind. An output that is the input itself is
//! refused before anything is written: writing it in place would truncate
//! the trace being read (`tierlab trace convert a.csv a.csv` used to leave
//! a.csv with a header and nothing else). An output that exists and is not
//! a regular file (`/dev/stdout`, `/dev/null`, a FIFO) is written directly:
//! renaming a file over a device would replace the device. An output named
//! `.zst` is written zstd-compressed, as every reader decompresses a file
//! of that name.

use super::lines::is_zstd;
use super::TraceError;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where the buffered bytes go: the file, or a zstd frame in it.
pub enum Sink {
    Plain(File),
    Zstd(zstd::Encoder<'static, File>),
}

impl Sink {
    fn new(path: &Path, f: File) -> std::io::Result<Self> {
        Ok(if is_zstd(path) {
            // Level 3: zstd's default, fast enough to keep up with a reader.
            let mut e = zstd::Encoder::new(f, 3)?;
            // A frame checksum: without one, a damaged block can decode
            // into other records without a word.
            e.include_checksum(true)?;
            Sink::Zstd(e)
        } else {
            Sink::Plain(f)
        })
    }

    /// Ends the zstd frame (nothing for a plain file).
    fn finish(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(_) => Ok(()),
            Sink::Zstd(e) => e.do_finish(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(f) => f.write(buf),
            Sink::Zstd(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(f) => f.flush(),
            Sink::Zstd(e) => e.flush(),
        }
    }
}

/// A trace file being written: [`OutputFile::writer`] to write,
/// [`OutputFile::commit`] to put it in place; dropped uncommitted, it
/// removes what it wrote.
pub struct OutputFile {
    /// Where the trace goes (a symbolic link's target: the link stays).
    path: PathBuf,
    /// The file written, renamed to `path` by `commit` (None: `path` is
    /// not a regular file and is written directly).
    tmp: Option<PathBuf>,
    out: BufWriter<Sink>,
    committed: bool,
}

impl OutputFile {
    /// Starts writing `path`; `input` is the file the trace is read from,
    /// if any, which `path` must not be.
    pub fn create(path: &Path, input: Option<&Path>) -> Result<Self, TraceError> {
        if let Some(input) = input {
            if same_file(path, input) {
                return Err(TraceError::io(
                    path,
                    std::io::Error::other("is the input trace; write the output to another file"),
                ));
            }
        }
        // Write through a link, as opening the link would, rather than
        // replacing it with a file.
        let path = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
            }
            _ => path.to_path_buf(),
        };
        let existing = std::fs::metadata(&path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(TraceError::io(
                &path,
                std::io::Error::other("is a directory; name a file to write"),
            ));
        }
        if existing.as_ref().is_some_and(|m| !m.is_file()) {
            let f = OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| TraceError::io(&path, e))?;
            let sink = Sink::new(&path, f).map_err(|e| TraceError::io(&path, e))?;
            return Ok(OutputFile {
                path,
                tmp: None,
                out: BufWriter::with_capacity(1 << 20, sink),
                committed: false,
            });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .ok_or_else(|| TraceError::io(&path, std::io::Error::other("names no file")))?
            .to_string_lossy()
            .into_owned();
        let (tmp, f) = create_new_beside(&dir, &name).map_err(|e| TraceError::io(&path, e))?;
        let sink = match Sink::new(&path, f) {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(TraceError::io(&path, e));
            }
        };
        let file = OutputFile {
            path,
            tmp: Some(tmp.clone()),
            out: BufWriter::with_capacity(1 << 20, sink),
            committed: false,
        };
        // A file rewritten in place would have kept its permissions.
        if let Some(m) = existing {
            std::fs::set_permissions(&tmp, m.permissions()).map_err(|e| file.err(e))?;
        }
        Ok(file)
    }

    /// The file the trace ends up in (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where to write the trace's bytes.
    pub fn writer(&mut self) -> &mut BufWriter<Sink> {
        &mut self.out
    }

    /// An error writing the output, naming it.
    pub fn err(&self, e: std::io::Error) -> TraceError {
        TraceError::io(&self.path, e)
    }

    /// A hidden file to build a trace in before it goes to `beside` (an
    /// output that cannot be rewritten in place: compressed, or a
    /// device): beside it when its folder takes files, else in the
    /// system's temporary folder. Never committed: dropped, it is removed.
    pub fn scratch(beside: &Path) -> Result<Self, TraceError> {
        let name = beside
            .file_name()
            .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
        let device = std::fs::metadata(beside).is_ok_and(|m| !m.is_file());
        let dir = match beside.parent() {
            _ if device => std::env::temp_dir(),
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let (tmp, f) = create_new_beside(&dir, &name)
            .or_else(|_| create_new_beside(&std::env::temp_dir(), &name))
            .map_err(|e| TraceError::io(beside, e))?;
        Ok(OutputFile {
            path: beside.to_path_buf(),
            tmp: Some(tmp),
            out: BufWriter::with_capacity(1 << 20, Sink::Plain(f)),
            committed: false,
        })
    }

    /// The file written, flushed, when it is a plain file that can be read
    /// back and rewritten in place (not compressed, not a device); None
    /// otherwise.
    pub fn plain_file(&mut self) -> Result<Option<&mut File>, TraceError> {
        if self.tmp.is_none() {
            return Ok(None);
        }
        self.out
            .flush()
            .map_err(|e| TraceError::io(&self.path, e))?;
        Ok(match self.out.get_mut() {
            Sink::Plain(f) => Some(f),
            Sink::Zstd(_) => None,
        })
    }

    /// Copies this (plain, scratch) file's bytes into `out`'s writer.
    pub fn copy_into(mut self, out: &mut OutputFile) -> Result<(), TraceError> {
        use std::io::Seek;
        let path = self.path.clone();
        let f = self.plain_file()?.expect("a scratch file is plain");
        f.seek(std::io::SeekFrom::Start(0))
            .map_err(|e| TraceError::io(&path, e))?;
        std::io::copy(f, out.writer()).map_err(|e| out.err(e))?;
        Ok(())
    }

    /// Flushes the trace and puts it in place of the output.
    pub fn commit(mut self) -> Result<(), TraceError> {
        self.out.flush().map_err(|e| self.err(e))?;
        self.out.get_mut().finish().map_err(|e| self.err(e))?;
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, &self.path).map_err(|e| self.err(e))?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            // Best effort: the error that dropped it is the one to report.
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Creates a file that did not exist in `dir`, named after `name` and this
/// process (hidden, so a listing of the directory does not show it).
fn create_new_beside(dir: &Path, name: &str) -> std::io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let tmp = dir.join(format!(".{name}.tierlab-{pid}-{n}.part"));
        // Readable too: an oracleGeneral output is read back to fill in
        // its next-access times (tools.rs).
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Whether two paths name one file (through links, hard or symbolic).
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false; // One does not exist, so they are not the same file.
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn write(path: &Path, bytes: &[u8]) {
        let mut out = OutputFile::create(path, None).unwrap();
        out.writer().write_all(bytes).unwrap();
        out.commit().unwrap();
    }

    #[test]
    fn an_output_named_zst_is_compressed_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let z = dir.path().join("t.memtrace.zst");
        write(&z, &bytes);
        let raw = std::fs::read(&z).unwrap();
        assert_eq!(&raw[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
        assert!(raw.len() < bytes.len());
        let mut back = Vec::new();
        super::super::lines::open_stream(&z)
            .unwrap()
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, bytes);
        // A plain name stays plain.
        let p = dir.path().join("t.memtrace");
        write(&p, &bytes);
        assert_eq!(std::fs::read(&p).unwrap(), bytes);
    }
}
