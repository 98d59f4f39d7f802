//! A memory trace below the CPU's caches: a program's loads and stores
//! (a Valgrind lackey log) filtered through set-associative caches, the
//! last level's misses written as a memtrace. The model is Valgrind
//! Cachegrind's (`cg_sim.c`; the Cachegrind manual, "Simulation
//! details"): each level set-associative with LRU replacement, write-
//! allocate, no write-backs (Cachegrind counts none), the next level
//! seeing only the misses of the one before; so the trace is what
//! Cachegrind counts as last-level misses (`DLmr`, `DLmw`), one request
//! per missed line. S5 (docs/reproduce-s5.md, rule P4) reads its traces
//! this way.
//!
//! An access that spans lines is an access to each; the part of it in a
//! line that missed goes to the next level (which may split it by its own
//! line size). A request is the missed last-level line: its byte address
//! (the line's first byte), the line's size, read or write as the access
//! was, the access's pid.

use super::lackey::LackeyReader;
use super::memtrace::MemtraceWriter;
use super::output::OutputFile;
use super::{TraceError, TraceSource};
use crate::request::{Op, Request};
use std::path::Path;

/// One cache level: total bytes, ways, line bytes (Cachegrind's
/// `--D1=size,assoc,line_size` and `--LL=...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub size: u64,
    pub ways: u32,
    pub line: u32,
}

impl Geometry {
    /// Parses `SIZE,WAYS,LINE` (bytes, plain numbers, as Cachegrind's
    /// options) and checks it as Cachegrind does (`cg_arch.c`,
    /// `check_cache`): the line a power of two of 16 bytes or more (the
    /// memtrace's 16-bit size caps it at 32 KiB), the set count (size /
    /// (ways x line)) a whole power of two.
    pub fn parse(text: &str) -> Result<Self, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let [size, ways, line] = parts[..] else {
            return Err(format!(
                "{text:?}: expected SIZE,WAYS,LINE in bytes (65536,2,64)"
            ));
        };
        let num = |what: &str, v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{text:?}: {what} {v:?} is not a whole number"))
        };
        let (size, ways, line) = (num("size", size)?, num("ways", ways)?, num("line", line)?);
        let g = Geometry {
            size,
            ways: u32::try_from(ways).map_err(|_| format!("{text:?}: too many ways"))?,
            line: u32::try_from(line).map_err(|_| format!("{text:?}: line too large"))?,
        };
        g.check().map_err(|m| format!("{text:?}: {m}"))?;
        Ok(g)
    }

    pub fn check(&self) -> Result<(), String> {
        let (size, ways, line) = (self.size, self.ways as u64, self.line as u64);
        if !line.is_power_of_two() || !(16..=32768).contains(&line) {
            return Err(format!(
                "the line ({line} bytes) must be a power of two from 16 to 32768"
            ));
        }
        if ways == 0 || size == 0 || size % (ways * line) != 0 {
            return Err(format!(
                "the size ({size} bytes) must be a whole number of sets of {ways} ways x {line} bytes"
            ));
        }
        let sets = size / (ways * line);
        if !sets.is_power_of_two() {
            return Err(format!("the set count ({sets}) must be a power of two"));
        }
        Ok(())
    }

    fn sets(&self) -> u64 {
        self.size / (self.ways as u64 * self.line as u64)
    }
}

/// A tag no line has (line numbers are addresses over 16 or more).
const EMPTY: u64 = u64::MAX;

/// One level's sets: each set's tags, most recently used first.
struct Level {
    shift: u32,
    set_mask: u64,
    ways: usize,
    tags: Vec<u64>,
}

impl Level {
    fn new(g: &Geometry) -> Self {
        let sets = g.sets();
        Level {
            shift: g.line.trailing_zeros(),
            set_mask: sets - 1,
            ways: g.ways as usize,
            tags: vec![EMPTY; (sets * g.ways as u64) as usize],
        }
    }

    /// References line number `line`: whether it hit. Either way it becomes
    /// its set's most recent; a miss drops the set's least recent.
    #[inline]
    fn reference(&mut self, line: u64) -> bool {
        let set = (line & self.set_mask) as usize * self.ways;
        let tags = &mut self.tags[set..set + self.ways];
        match tags.iter().position(|&t| t == line) {
            Some(i) => {
                tags[..=i].rotate_right(1);
                true
            }
            None => {
                tags.rotate_right(1);
                tags[0] = line;
                false
            }
        }
    }
}

/// The levels, nearest the CPU first.
pub struct Caches {
    levels: Vec<Level>,
}

impl Caches {
    pub fn new(geometries: &[Geometry]) -> Self {
        Caches {
            levels: geometries.iter().map(Level::new).collect(),
        }
    }

    /// An access of `size` bytes at `addr`; `miss(line_addr, line_size)`
    /// for each last-level line it missed.
    pub fn access(&mut self, addr: u64, size: u64, mut miss: impl FnMut(u64, u32)) {
        self.at(0, addr, size.max(1), &mut miss);
    }

    fn at(&mut self, level: usize, addr: u64, size: u64, miss: &mut impl FnMut(u64, u32)) {
        let shift = self.levels[level].shift;
        let end = addr.saturating_add(size);
        for line in addr >> shift..=(end - 1) >> shift {
            if self.levels[level].reference(line) {
                continue;
            }
            let start = line << shift;
            if level + 1 == self.levels.len() {
                miss(start, 1 << shift);
            } else {
                let lo = addr.max(start);
                let hi = end.min(start.saturating_add(1 << shift));
                self.at(level + 1, lo, hi - lo, miss);
            }
        }
    }
}

/// What [`filter_lackey`] read and wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filtered {
    /// Accesses read from the log.
    pub accesses: u64,
    /// Requests written: last-level misses.
    pub requests: u64,
    /// Whether the log ended (false: the limit or `progress` stopped the
    /// reading).
    pub ended: bool,
}

/// Reads a lackey log (a file, or a FIFO Valgrind writes as the program
/// runs) through `caches` and writes the last level's misses to `out` as
/// memtrace, stopping after `limit` requests if given. `instructions`:
/// instruction fetches are accesses too (by default only loads, stores
/// and modifies are, as `tierlab capture memory` keeps them). `progress`
/// is told the accesses read after each batch; false stops the reading,
/// keeping the misses written so far.
pub fn filter_lackey(
    log: &Path,
    fifo: bool,
    out: &Path,
    caches: &[Geometry],
    instructions: bool,
    limit: Option<u64>,
    mut progress: impl FnMut(u64) -> bool,
) -> Result<Filtered, TraceError> {
    if caches.is_empty() {
        return Err(TraceError::io(
            out,
            std::io::Error::other("no cache to filter through"),
        ));
    }
    let mut reader = if fifo {
        LackeyReader::open_fifo(log, 0, instructions)?
    } else {
        LackeyReader::open(log, 0, instructions, false)?
    };
    let mut w = MemtraceWriter::new(OutputFile::create(out, Some(log))?)?;
    let mut model = Caches::new(caches);
    let mut f = Filtered::default();
    let limit = limit.unwrap_or(u64::MAX);
    let mut batch = Vec::with_capacity(4096);
    let mut missed: Vec<(u64, u32)> = Vec::with_capacity(4);
    'read: loop {
        if reader.next_batch(&mut batch, 4096)? == 0 {
            f.ended = true;
            break;
        }
        for r in &batch {
            f.accesses += 1;
            missed.clear();
            // With unit 0 the reader gives byte addresses and sizes.
            model.access(r.key, r.size as u64, |a, s| missed.push((a, s)));
            for &(addr, size) in &missed {
                if f.requests == limit {
                    break 'read;
                }
                w.write(&Request {
                    time: f.requests,
                    key: addr,
                    size,
                    op: if r.op == Op::Write {
                        Op::Write
                    } else {
                        Op::Read
                    },
                    pid: r.pid,
                    next_access: -1,
                })?;
                f.requests += 1;
            }
        }
        // Told the accesses read, not the misses written: a program whose
        // misses are rare still reaches the caller (its Ctrl-C and SIGTERM)
        // about once a second. Stopped, the misses so far are kept.
        if !progress(f.accesses) {
            break;
        }
    }
    w.finish()?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::trace::memtrace::MemtraceReader;
    use std::io::Write;

    /// A naive model: per set a list, most recent first, searched and
    /// reordered by hand.
    fn naive(g: &Geometry, lines: &[u64]) -> Vec<bool> {
        let sets = g.sets();
        let mut s: Vec<Vec<u64>> = vec![Vec::new(); sets as usize];
        lines
            .iter()
            .map(|&l| {
                let v = &mut s[(l % sets) as usize];
                let hit = v.contains(&l);
                v.retain(|&t| t != l);
                v.insert(0, l);
                v.truncate(g.ways as usize);
                hit
            })
            .collect()
    }

    #[test]
    fn one_level_is_lru_per_set() {
        let g = Geometry::parse("1024,4,64").unwrap(); // 4 sets of 4 ways
        let mut rng = crate::rng::Rng::new(7);
        let lines: Vec<u64> = (0..20_000).map(|_| rng.below(64)).collect();
        let mut l = Level::new(&g);
        let got: Vec<bool> = lines.iter().map(|&x| l.reference(x)).collect();
        assert_eq!(got, naive(&g, &lines));
        assert!(got.iter().any(|&h| h) && got.iter().any(|&h| !h));
    }

    #[test]
    fn the_last_level_sees_the_first_levels_misses() {
        // D1: 2 sets x 1 way of 64 B; LL: 1 set x 2 ways of 128 B.
        let d1 = Geometry::parse("128,1,64").unwrap();
        let ll = Geometry::parse("256,2,128").unwrap();
        let mut c = Caches::new(&[d1, ll]);
        let mut run = |a: u64, s: u64| {
            let mut m = Vec::new();
            c.access(a, s, |x, n| m.push((x, n)));
            m
        };
        assert_eq!(run(0, 8), vec![(0, 128)], "cold in both");
        assert_eq!(run(64, 8), vec![], "D1 misses, LL holds 0..128");
        assert_eq!(run(8, 4), vec![], "a D1 hit");
        // Spans 60..68: line 0 (hit) and line 64 (hit in D1).
        assert_eq!(run(60, 8), vec![]);
        assert_eq!(run(128, 8), vec![(128, 128)]);
        assert_eq!(run(256, 8), vec![(256, 128)], "LL evicts 0..128 (LRU)");
        // D1 set 0 holds 256 now; 0 misses D1 and LL.
        assert_eq!(run(0, 1), vec![(0, 128)]);
        // A span across LL lines that misses both: two requests.
        assert_eq!(run(1020, 8), vec![(896, 128), (1024, 128)]);
    }

    #[test]
    fn geometry_is_checked_as_cachegrind_does() {
        assert_eq!(
            Geometry::parse("262144,8,64").unwrap(),
            Geometry {
                size: 262144,
                ways: 8,
                line: 64
            }
        );
        for bad in [
            "262144,8",
            "262144,8,63",
            "262144,8,8",
            "196608,8,64",
            "x,8,64",
            "0,8,64",
        ] {
            assert!(Geometry::parse(bad).is_err(), "{bad}");
        }
        // 12 MiB, 16 ways: 12,288 sets, not a power of two.
        assert!(Geometry::parse("12582912,16,64")
            .unwrap_err()
            .contains("power of two"));
    }

    #[test]
    fn a_log_is_filtered_to_the_last_levels_misses_up_to_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.lackey");
        let mut f = std::fs::File::create(&log).unwrap();
        writeln!(f, "==42== lackey").unwrap();
        // Loads of 0, 8 (same line), a store to 4096, a modify of 8192,
        // an instruction fetch, then 0 again.
        for l in [
            " L 00000000,8",
            " L 00000008,8",
            " S 00001000,4",
            " M 00002000,4",
            "I  00003000,4",
            " L 00000000,8",
        ] {
            writeln!(f, "{l}").unwrap();
        }
        drop(f);
        let out = dir.path().join("t.memtrace");
        let g = [Geometry::parse("256,1,64").unwrap()]; // 4 sets, direct
        let r = filter_lackey(&log, false, &out, &g, false, None, |_| true).unwrap();
        assert_eq!(
            r,
            Filtered {
                accesses: 5,
                requests: 4,
                ended: true
            }
        );
        let mut rd = MemtraceReader::open(&out).unwrap();
        let recs: Vec<(u64, u32, Op, u32)> = rd
            .next_records(100)
            .unwrap()
            .iter()
            .map(|x| (x.key(), x.size(), x.op(), x.pid()))
            .collect();
        // 4096 and 8192 map to set 0 and push 0 out (one way).
        assert_eq!(
            recs,
            vec![
                (0, 64, Op::Read, 42),
                (4096, 64, Op::Write, 42),
                (8192, 64, Op::Write, 42),
                (0, 64, Op::Read, 42)
            ]
        );
        let r = filter_lackey(&log, false, &out, &g, true, Some(2), |_| true).unwrap();
        assert_eq!((r.requests, r.ended), (2, false));
    }

    #[test]
    fn the_caller_stops_the_reading_between_batches() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.lackey");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
        writeln!(f, "==7== lackey").unwrap();
        for i in 0..10_000u64 {
            writeln!(f, " L {:08x},8", i * 64).unwrap(); // a new line each
        }
        drop(f);
        let out = dir.path().join("t.memtrace");
        let g = [Geometry::parse("256,1,64").unwrap()];
        let mut told = Vec::new();
        let all = filter_lackey(&log, false, &out, &g, false, None, |n| {
            told.push(n);
            true
        })
        .unwrap();
        assert_eq!(
            (all.accesses, all.requests, all.ended),
            (10_000, 10_000, true)
        );
        // After each batch of 4,096 lines (the last, 1,808, ends the log).
        assert_eq!(told, vec![4096, 8192, 10_000]);
        let stopped = filter_lackey(&log, false, &out, &g, false, None, |n| n < 8192).unwrap();
        assert_eq!(
            (stopped.accesses, stopped.requests, stopped.ended),
            (8192, 8192, false)
        );
        // What was written before the stop is a whole trace.
        let mut rd = MemtraceReader::open(&out).unwrap();
        assert_eq!(rd.next_records(10_000).unwrap().len(), 8192);
    }
}
