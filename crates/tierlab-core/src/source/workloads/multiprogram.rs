//! Multiprogrammed memory: N programs with given resident sizes and
//! access-pattern mixes, interleaved in round-robin quanta. The `s3` preset
//! is S3's experiment (Jung & Cho, "Memorage", ICS 2013): eight memory-bound
//! SPEC CPU2006 programs run together, RSS bwaves 873 MB, mcf 1600, milc 679,
//! zeusmp 501, cactusADM 623, leslie3d 123, lbm 409, GemsFDTD 828 (5.6 GB).
//!
//! Modelled: each access is a page of one program's memory, chosen by one
//! of four patterns drawn with the program's weights: `sequential` (a
//! cursor sweeping the pages in order), `strided` (a cursor stepping
//! `stride` pages, shifted by one page at each wrap so every page is
//! visited), `random` (uniform) and `hot` (a hot set of `hot_fraction` of
//! the pages receives `hot_share` of these accesses, the rest go to the
//! cold pages). An access is a write with probability `write_ratio`.
//! Programs take turns, `quantum` accesses each.
//!
//! By byte address (what a `[vm]` run reads, [`MultiprogramSpec::by_address`]):
//! the same patterns move in `line`s (64 B: a last-level-cache line, the
//! unit a memory-bound program's references reach memory in), each
//! reference is one line, `pid` is the program's index + 1 and `key` the
//! line's byte address in the program's own address space; a sweep then
//! touches each 4 KiB page 64 times in a row, and `strided` is a
//! column-order sweep of a row-major array whose rows are `stride` pages.
//!
//! Left out: CPU caches (these are the accesses that reach memory), program
//! phases, memory growth and release, and the real programs' address
//! streams: S3 gives only the resident sizes; the pattern mixes of the
//! `s3` preset are our reading of the programs (streaming stencils for
//! bwaves, lbm, leslie3d, zeusmp, GemsFDTD, cactusADM and milc; pointer
//! chasing for mcf), not measurements.

use super::{
    bad, check_at_least, check_share, scaled, unknown_preset, Common, ParamError, Run, Script,
};
use crate::request::{Op, Request};
use crate::rng::Alias;
use crate::rng::Rng;
use crate::source::trace::{TraceError, TraceSource};
use crate::units::human_count;
use crate::units::Size;
use serde::{Deserialize, Serialize};

/// One `[[workload.multiprogram.program]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramParams {
    pub name: Option<String>,
    pub rss: Size,
    #[serde(default)]
    pub sequential: f64,
    #[serde(default)]
    pub strided: f64,
    #[serde(default)]
    pub random: f64,
    #[serde(default)]
    pub hot: f64,
    pub stride: Option<u64>,
    pub hot_fraction: Option<f64>,
    pub hot_share: Option<f64>,
    pub write_ratio: Option<f64>,
}

/// `[workload.multiprogram]`: `program` replaces the preset's programs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiprogramParams {
    pub requests: Option<u64>,
    pub quantum: Option<u64>,
    /// Bytes per reference when a `[vm]` run reads the generator by byte
    /// address (one last-level-cache line, 64 B, by default).
    pub line: Option<Size>,
    #[serde(rename = "program")]
    pub programs: Option<Vec<ProgramParams>>,
    /// Keeps only the named programs (of the preset, or of `program`),
    /// e.g. one of `s5-desktop`'s to run it alone as S5 traced it.
    pub only: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProgramSpec {
    pub name: String,
    pub pages: u64,
    /// sequential, strided, random, hot.
    pub weights: [f64; 4],
    pub stride: u64,
    pub hot_fraction: f64,
    pub hot_share: f64,
    pub write_ratio: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MultiprogramSpec {
    pub programs: Vec<ProgramSpec>,
    pub requests: u64,
    /// `requests` was given (not the default for the unit).
    pub requests_given: bool,
    pub quantum: u64,
    pub seed: u64,
    pub page_size: u32,
    /// Bytes per reference by byte address.
    pub line: u32,
    /// Read by byte address (a `[vm]` run): each reference is one `line`
    /// of its program's memory, `pid` = program index + 1, `key` = the byte
    /// address in the program's own address space (from 0). Otherwise each
    /// reference is a page, keyed by [`super::page_key`].
    pub by_address: bool,
}

pub const PRESETS: &[&str] = &["default", "s3", "s5-desktop"];

/// name, RSS in KiB, weights (sequential, strided, random, hot), write
/// ratio, references (0: four per page or line, the generator's default).
type Preset = (&'static str, u64, [f64; 4], f64, u64);

const MIB: u64 = 1024;

/// S3's eight programs and resident sizes; mixes and write ratios are ours.
const S3: [Preset; 8] = [
    ("bwaves", 873 * MIB, [0.7, 0.2, 0.1, 0.0], 0.3, 0),
    ("mcf", 1600 * MIB, [0.1, 0.0, 0.6, 0.3], 0.2, 0),
    ("milc", 679 * MIB, [0.3, 0.6, 0.1, 0.0], 0.3, 0),
    ("zeusmp", 501 * MIB, [0.6, 0.3, 0.1, 0.0], 0.3, 0),
    ("cactusADM", 623 * MIB, [0.3, 0.6, 0.1, 0.0], 0.3, 0),
    ("leslie3d", 123 * MIB, [0.7, 0.2, 0.1, 0.0], 0.3, 0),
    ("lbm", 409 * MIB, [0.9, 0.0, 0.1, 0.0], 0.45, 0),
    ("GemsFDTD", 828 * MIB, [0.4, 0.5, 0.1, 0.0], 0.3, 0),
];

/// S5's five desktop programs ("Issues in File Caching and Virtual Memory
/// Paging with Fast SCM Storage", Table 1): footprints (MB read as MiB,
/// rounded to KiB), write shares and reference counts from the table;
/// the pattern mixes are our reading of the programs (docs/workloads.md).
/// gqview's row does not add up (645,399 writes + 265,286 reads against a
/// total of 610,685); we read the writes as 345,399, which makes the total.
const S5_DESKTOP: [Preset; 5] = [
    (
        "freecell",
        10_076,
        [0.3, 0.0, 0.2, 0.5],
        60_040.0 / 490_175.0,
        490_175,
    ),
    (
        "gedit",
        14_459,
        [0.4, 0.0, 0.2, 0.4],
        132_822.0 / 1_733_763.0,
        1_733_763,
    ),
    (
        "gqview",
        7_434,
        [0.5, 0.2, 0.1, 0.2],
        345_399.0 / 610_685.0,
        610_685,
    ),
    (
        "kghostview",
        17_388,
        [0.3, 0.0, 0.3, 0.4],
        103_540.0 / 1_546_135.0,
        1_546_135,
    ),
    (
        "xmms",
        8_049,
        [0.6, 0.0, 0.1, 0.3],
        978_242.0 / 1_168_939.0,
        1_168_939,
    ),
];

/// One program per pattern, 32 MiB each.
const DEFAULT: [Preset; 4] = [
    ("sequential", 32 * MIB, [1.0, 0.0, 0.0, 0.0], 0.3, 0),
    ("strided", 32 * MIB, [0.0, 1.0, 0.0, 0.0], 0.3, 0),
    ("random", 32 * MIB, [0.0, 0.0, 1.0, 0.0], 0.3, 0),
    ("hot-cold", 32 * MIB, [0.0, 0.0, 0.0, 1.0], 0.3, 0),
];

impl MultiprogramSpec {
    pub fn resolve(
        preset: &str,
        p: &MultiprogramParams,
        c: Common,
    ) -> Result<MultiprogramSpec, ParamError> {
        let base: &[Preset] = match preset {
            "default" => &DEFAULT,
            "s3" => &S3,
            "s5-desktop" => &S5_DESKTOP,
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let ps = c.page_size as u64;
        let (mut programs, mut refs): (Vec<ProgramSpec>, Vec<u64>) = match &p.programs {
            None => base
                .iter()
                .map(|&(name, kib, weights, write_ratio, refs)| {
                    (
                        ProgramSpec {
                            name: name.into(),
                            pages: scaled((kib << 10) / ps, c.scale, 1),
                            weights,
                            stride: 16,
                            hot_fraction: 0.1,
                            hot_share: 0.9,
                            write_ratio,
                        },
                        scaled(refs, c.scale, (refs > 0) as u64),
                    )
                })
                .unzip(),
            Some(list) => {
                if list.is_empty() {
                    return Err(bad("program", "at least one program is required"));
                }
                let programs = list
                    .iter()
                    .enumerate()
                    .map(|(i, q)| program(i, q, ps))
                    .collect::<Result<Vec<_>, _>>()?;
                let refs = vec![0; programs.len()];
                (programs, refs)
            }
        };
        if let Some(only) = &p.only {
            let names: Vec<String> = programs.iter().map(|q| q.name.clone()).collect();
            if only.is_empty() {
                return Err(bad("only", "give at least one program name"));
            }
            if let Some(n) = only.iter().find(|n| !names.contains(n)) {
                return Err(bad(
                    "only",
                    format!("{n:?} is not one of the programs: {}", names.join(", ")),
                ));
            }
            let keep: Vec<bool> = names.iter().map(|n| only.contains(n)).collect();
            let mut k = keep.iter();
            programs.retain(|_| *k.next().expect("one flag per program"));
            let mut k = keep.iter();
            refs.retain(|_| *k.next().expect("one flag per program"));
        }
        let total: u64 = programs.iter().map(|q| q.pages).sum();
        // A preset that gives each program's references (s5-desktop: S5's
        // Table 1) counts them; else four accesses per page: enough for the
        // sweeps to cover the footprint several times over.
        let preset_refs = refs.iter().all(|&r| r > 0);
        let requests = p.requests.unwrap_or(if preset_refs {
            refs.iter().sum()
        } else {
            4 * total
        });
        // S5's traces record every load and store (Valgrind): a reference
        // is a word, 8 B on x86-64, where S3's memory-bound programs are
        // read in last-level-cache lines.
        let default_line = if preset == "s5-desktop" && p.programs.is_none() {
            8
        } else {
            64
        };
        let line = match p.line.unwrap_or(Size::Absolute(default_line)) {
            Size::Absolute(n) if n >= 8 && n <= ps && n.is_power_of_two() => n as u32,
            Size::Absolute(n) => {
                return Err(bad(
                    "line",
                    format!(
                        "{n} is out of range; a power of two from 8 B to the page size ({ps} B)"
                    ),
                ))
            }
            Size::Percent(_) => return Err(bad("line", "must be a size in bytes, not a share")),
        };
        Ok(MultiprogramSpec {
            programs,
            requests: check_at_least("requests", requests, 1)?,
            requests_given: p.requests.is_some() || preset_refs,
            // A time slice worth of memory accesses that miss the CPU
            // caches; ours.
            quantum: check_at_least("quantum", p.quantum.unwrap_or(1000), 1)?,
            seed: c.seed,
            page_size: c.page_size,
            line,
            by_address: false,
        })
    }

    /// Lines per page.
    fn lines_per_page(&self) -> u64 {
        (self.page_size / self.line) as u64
    }

    /// The same programs read by byte address (what a `[vm]` run reads):
    /// references of `line` bytes; without a given `requests`, four
    /// references per line, as the paged default has four per page.
    pub fn by_address(mut self) -> Self {
        if !self.by_address {
            self.by_address = true;
            if !self.requests_given {
                self.requests *= self.lines_per_page();
            }
        }
        self
    }
}

fn program(i: usize, q: &ProgramParams, ps: u64) -> Result<ProgramSpec, ParamError> {
    let k = |f: &str| format!("program[{i}].{f}");
    let pages = match q.rss {
        Size::Absolute(n) if n >= 1 => super::pages_of(n, ps as u32),
        Size::Absolute(_) => return Err(bad(&k("rss"), "must be greater than zero")),
        Size::Percent(_) => return Err(bad(&k("rss"), "must be a size in bytes, not a share")),
    };
    if pages > u32::MAX as u64 {
        return Err(bad(&k("rss"), "out of range: at most 2^32 pages"));
    }
    let weights = [q.sequential, q.strided, q.random, q.hot];
    for (w, f) in weights
        .iter()
        .zip(["sequential", "strided", "random", "hot"])
    {
        if !w.is_finite() || *w < 0.0 {
            return Err(bad(
                &k(f),
                format!("{w} is out of range; a weight must be >= 0"),
            ));
        }
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(bad(
            &k("sequential"),
            "no pattern: give at least one of sequential, strided, random, hot a weight > 0",
        ));
    }
    Ok(ProgramSpec {
        name: q.name.clone().unwrap_or_else(|| format!("p{i}")),
        pages,
        weights,
        stride: check_at_least(&k("stride"), q.stride.unwrap_or(16), 1)?,
        hot_fraction: check_share(&k("hot_fraction"), q.hot_fraction.unwrap_or(0.1))?,
        hot_share: check_share(&k("hot_share"), q.hot_share.unwrap_or(0.9))?,
        write_ratio: check_share(&k("write_ratio"), q.write_ratio.unwrap_or(0.3))?,
    })
}

/// One program's cursors, in units: pages, or lines by byte address.
struct Program {
    spec: ProgramSpec,
    patterns: Alias,
    /// Units of its memory.
    units: u64,
    /// The strided cursor's step in units (`stride` pages).
    step: u64,
    seq: u64,
    strided: u64,
    lane: u64,
    hot_units: u64,
}

pub struct Multiprogram {
    spec: MultiprogramSpec,
    rng: Rng,
    programs: Vec<Program>,
    turn: usize,
    left_in_turn: u64,
    done: u64,
}

impl Multiprogram {
    pub fn new(spec: &MultiprogramSpec) -> Self {
        let per_page = if spec.by_address {
            spec.lines_per_page()
        } else {
            1
        };
        let programs = spec
            .programs
            .iter()
            .map(|p| {
                let units = p.pages * per_page;
                Program {
                    patterns: Alias::new(&p.weights),
                    units,
                    step: p.stride * per_page,
                    seq: 0,
                    strided: 0,
                    lane: 0,
                    hot_units: ((units as f64 * p.hot_fraction).round() as u64).clamp(1, units),
                    spec: p.clone(),
                }
            })
            .collect();
        Multiprogram {
            rng: Rng::new(spec.seed),
            programs,
            turn: 0,
            left_in_turn: spec.quantum,
            done: 0,
            spec: spec.clone(),
        }
    }
}

impl Multiprogram {
    /// The next reference: the program's index, the unit (page, or line by
    /// byte address) within its memory, and the operation.
    fn next_ref(&mut self) -> Option<(usize, u64, Op)> {
        if self.done == self.spec.requests {
            return None;
        }
        self.done += 1;
        if self.left_in_turn == 0 {
            self.turn = (self.turn + 1) % self.programs.len();
            self.left_in_turn = self.spec.quantum;
        }
        self.left_in_turn -= 1;
        let rng = &mut self.rng;
        let p = &mut self.programs[self.turn];
        let n = p.units;
        let unit = match p.patterns.sample(rng) {
            0 => {
                let v = p.seq;
                p.seq = (p.seq + 1) % n;
                v
            }
            1 => {
                // A column-order sweep of a row-major array whose rows are
                // `stride` pages: one unit per row, then the next column.
                let v = p.strided;
                p.strided += p.step;
                if p.strided >= n {
                    p.lane = (p.lane + 1) % p.step.min(n);
                    p.strided = p.lane;
                }
                v
            }
            2 => rng.below(n),
            _ => {
                let cold = n - p.hot_units;
                if cold == 0 || rng.next_f64() < p.spec.hot_share {
                    rng.below(p.hot_units)
                } else {
                    p.hot_units + rng.below(cold)
                }
            }
        };
        let op = if rng.next_f64() < p.spec.write_ratio {
            Op::Write
        } else {
            Op::Read
        };
        Some((self.turn, unit, op))
    }
}

impl Script for Multiprogram {
    fn next_run(&mut self) -> Option<Run> {
        let (i, page, op) = self.next_ref()?;
        Some(Run::new(i as u64 + 1, page, 1, op))
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        let names: Vec<&str> = s.programs.iter().map(|p| p.name.as_str()).collect();
        let unit = if s.by_address {
            format!("references of {} B by byte address", s.line)
        } else {
            "requests".into()
        };
        format!(
            "multiprogram: {} programs ({}), {} pages, {} {unit} in quanta of {}, seed {}",
            s.programs.len(),
            names.join(", "),
            human_count(s.programs.iter().map(|p| p.pages).sum::<u64>()),
            human_count(s.requests),
            human_count(s.quantum),
            s.seed
        )
    }
}

/// The generator by byte address: `pid` = program index + 1, `key` = the
/// byte address of the line in the program's own address space, `size` =
/// the line; the time of a reference is its index, as in [`Paged`].
///
/// [`Paged`]: super::Paged
pub struct ByAddress {
    gen: Multiprogram,
    emitted: u64,
}

impl TraceSource for ByAddress {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let line = self.gen.spec.line;
        while out.len() < max {
            let Some((i, unit, op)) = self.gen.next_ref() else {
                break;
            };
            out.push(Request {
                time: self.emitted,
                key: unit * line as u64,
                size: line,
                op,
                pid: i as u32 + 1,
                next_access: -1,
            });
            self.emitted += 1;
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.gen.spec.requests)
    }
    fn describe(&self) -> String {
        self.gen.describe()
    }
}

impl Multiprogram {
    /// The spec's stream: pages, or lines by byte address.
    pub fn spec_open(spec: &MultiprogramSpec) -> Box<dyn TraceSource> {
        let gen = Multiprogram::new(spec);
        if spec.by_address {
            Box::new(ByAddress { gen, emitted: 0 })
        } else {
            Box::new(super::Paged::new(gen, spec.page_size))
        }
    }
}

impl super::Benchmark for MultiprogramSpec {
    type Table = MultiprogramParams;
    fn make(preset: &str, table: &MultiprogramParams, c: Common) -> Result<Self, ParamError> {
        MultiprogramSpec::resolve(preset, table, c)
    }
    fn open(&self) -> Box<dyn TraceSource> {
        Multiprogram::spec_open(self)
    }
}
#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{key_file, Paged};
    use super::*;
    use std::collections::HashSet;

    fn spec(preset: &str, scale: f64, seed: u64) -> MultiprogramSpec {
        let c = common(scale, seed);
        MultiprogramSpec::resolve(preset, &MultiprogramParams::default(), c).unwrap()
    }

    #[test]
    fn s3_preset_has_the_papers_footprints() {
        let s = spec("s3", 1.0, 1);
        let mib: Vec<u64> = s.programs.iter().map(|p| (p.pages * 4096) >> 20).collect();
        assert_eq!(mib, [873, 1600, 679, 501, 623, 123, 409, 828]);
        assert_eq!(mib.iter().sum::<u64>(), 5636); // S3: "total 5.6 GB"
    }

    #[test]
    fn footprint_mix_and_quanta() {
        let mut s = spec("s3", 0.01, 3);
        let total: u64 = s.programs.iter().map(|p| p.pages).sum();
        assert_eq!(s.requests, 4 * total);
        // mcf sweeps in a tenth of its accesses: 25 accesses a page lets
        // its sweep cover its pages.
        s.requests = 25 * total;
        let reqs = all(Paged::new(Multiprogram::new(&s), 4096));
        assert_eq!(reqs.len() as u64, s.requests);
        let keys: HashSet<u64> = reqs.iter().map(|r| r.key).collect();
        // Sweeps touch every page of every program.
        assert_eq!(keys.len() as u64, total);
        for (i, p) in s.programs.iter().enumerate() {
            let id = i as u64 + 1;
            assert!(keys
                .iter()
                .filter(|&&k| key_file(k) == id)
                .all(|&k| (k & 0xFFFF_FFFF) < p.pages));
        }
        // Equal turns: the write share is the programs' mean write ratio.
        let want = s.programs.iter().map(|p| p.write_ratio).sum::<f64>() / 8.0;
        let got = reqs.iter().filter(|r| r.op == Op::Write).count() as f64 / reqs.len() as f64;
        assert!((got - want).abs() < 0.02, "{got} vs {want}");
        // Quanta of 1000 accesses, in program order.
        assert!(reqs[..1000].iter().all(|r| key_file(r.key) == 1));
        assert!(reqs[1000..2000].iter().all(|r| key_file(r.key) == 2));
    }

    #[test]
    fn hot_cold_and_strided_patterns() {
        let s = spec("default", 0.25, 4); // 2048 pages per program
        let reqs = all(Paged::new(Multiprogram::new(&s), 4096));
        let pages = s.programs[3].pages;
        let hot = (pages as f64 * 0.1).round() as u64;
        let hc: Vec<u64> = reqs
            .iter()
            .filter(|r| key_file(r.key) == 4)
            .map(|r| r.key & 0xFFFF_FFFF)
            .collect();
        let share = hc.iter().filter(|&&p| p < hot).count() as f64 / hc.len() as f64;
        assert!((share - 0.9).abs() < 0.02, "hot share {share}");
        let st: Vec<u64> = reqs
            .iter()
            .filter(|r| key_file(r.key) == 2)
            .map(|r| r.key & 0xFFFF_FFFF)
            .collect();
        assert_eq!(&st[..4], &[0, 16, 32, 48]);
        let sq: Vec<u64> = reqs
            .iter()
            .filter(|r| key_file(r.key) == 1)
            .map(|r| r.key & 0xFFFF_FFFF)
            .collect();
        assert!(sq.windows(2).all(|w| w[1] == (w[0] + 1) % pages));
    }

    #[test]
    fn same_seed_same_trace() {
        let a = all(Paged::new(Multiprogram::new(&spec("s3", 0.002, 1)), 4096));
        assert_eq!(
            a,
            all(Paged::new(Multiprogram::new(&spec("s3", 0.002, 1)), 4096))
        );
        assert_ne!(
            a,
            all(Paged::new(Multiprogram::new(&spec("s3", 0.002, 2)), 4096))
        );
    }

    fn drain(mut src: Box<dyn TraceSource>) -> Vec<Request> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while src.next_batch(&mut buf, 1000).unwrap() > 0 {
            out.extend_from_slice(&buf);
        }
        out
    }

    #[test]
    fn by_address_emits_pids_and_lines() {
        let mut s = spec("s3", 0.001, 5).by_address();
        let lines: Vec<u64> = s.programs.iter().map(|p| p.pages * 64).collect();
        // Four references per line by default, as four per page paged.
        assert_eq!(s.requests, 4 * lines.iter().sum::<u64>());
        s.requests = 40 * lines.iter().sum::<u64>();
        let reqs = drain(Multiprogram::spec_open(&s));
        assert_eq!(reqs.len() as u64, s.requests);
        assert!(reqs.iter().all(|r| r.size == 64 && r.key % 64 == 0));
        // Each program its own pid and address space from 0; the sweeps
        // touch every line of it.
        for (i, n) in lines.iter().enumerate() {
            let pid = i as u32 + 1;
            let keys: HashSet<u64> = reqs
                .iter()
                .filter(|r| r.pid == pid)
                .map(|r| r.key)
                .collect();
            assert_eq!(keys.len() as u64, *n, "program {pid}");
            assert_eq!(*keys.iter().max().unwrap(), (n - 1) * 64);
        }
        assert!(reqs[..1000].iter().all(|r| r.pid == 1));
        assert!(reqs[1000..2000].iter().all(|r| r.pid == 2));
        // A streaming sweep touches each 4 KiB page 64 times in a row.
        let lbm: Vec<u64> = reqs.iter().filter(|r| r.pid == 7).map(|r| r.key).collect();
        let in_order = lbm.windows(2).filter(|w| w[1] == w[0] + 64).count();
        assert!(in_order as f64 > 0.75 * lbm.len() as f64, "{in_order}");
    }

    #[test]
    fn by_address_strided_is_a_column_sweep() {
        let s = spec("default", 0.01, 4).by_address(); // 82 pages per program
        let st: Vec<u64> = drain(Multiprogram::spec_open(&s))
            .iter()
            .filter(|r| r.pid == 2)
            .map(|r| r.key)
            .collect();
        // Rows of 16 pages: one line per row, then the next line.
        assert_eq!(&st[..6], &[0, 65536, 131072, 196608, 262144, 327680]);
        assert_eq!(st[6], 64);
    }

    #[test]
    fn paged_output_is_unchanged_by_the_line_key() {
        let c = common(0.002, 1);
        let p = MultiprogramParams {
            line: Some(Size::Absolute(128)),
            ..Default::default()
        };
        let a = drain(Multiprogram::spec_open(&spec("s3", 0.002, 1)));
        let b = drain(Multiprogram::spec_open(
            &MultiprogramSpec::resolve("s3", &p, c).unwrap(),
        ));
        assert_eq!(a, b);
        assert!(a.iter().all(|r| r.size == 4096 && r.pid == 0));
        for bad_line in [4, 96, 8192] {
            let p = MultiprogramParams {
                line: Some(Size::Absolute(bad_line)),
                ..Default::default()
            };
            assert_eq!(
                MultiprogramSpec::resolve("s3", &p, c).unwrap_err().0,
                "line"
            );
        }
    }

    #[test]
    fn s5_desktop_has_the_papers_table_1() {
        let s = spec("s5-desktop", 1.0, 1);
        let kib: Vec<u64> = s.programs.iter().map(|p| p.pages * 4).collect();
        // 9.84, 14.12, 7.26, 16.98, 7.86 MiB, in whole 4 KiB pages.
        assert_eq!(kib, [10_076, 14_456, 7_432, 17_388, 8_048]);
        assert_eq!(
            s.requests,
            490_175 + 1_733_763 + 610_685 + 1_546_135 + 1_168_939
        );
        assert_eq!(s.line, 8);
        // The references are S5's, not four per line, under [vm] too.
        assert_eq!(s.clone().by_address().requests, s.requests);
        let c = common(1.0, 1);
        let one = |only: &[&str]| {
            let p = MultiprogramParams {
                only: Some(only.iter().map(|n| n.to_string()).collect()),
                ..Default::default()
            };
            MultiprogramSpec::resolve("s5-desktop", &p, c)
        };
        let gedit = one(&["gedit"]).unwrap();
        assert_eq!(gedit.programs.len(), 1);
        assert_eq!(gedit.requests, 1_733_763);
        assert!((gedit.programs[0].write_ratio - 132_822.0 / 1_733_763.0).abs() < 1e-12);
        let reqs = drain(Multiprogram::spec_open(&gedit.clone().by_address()));
        assert_eq!(reqs.len() as u64, 1_733_763);
        assert!(reqs.iter().all(|r| r.pid == 1 && r.size == 8));
        assert_eq!(one(&["emacs"]).unwrap_err().0, "only");
        assert_eq!(one(&[]).unwrap_err().0, "only");
        // Other presets keep their 64 B line and four references per unit.
        assert_eq!(spec("s3", 0.01, 1).line, 64);
    }

    #[test]
    fn bad_program_names_its_key() {
        let c = common(1.0, 1);
        let p = MultiprogramParams {
            programs: Some(vec![ProgramParams {
                name: None,
                rss: Size::Absolute(1 << 20),
                sequential: 0.0,
                strided: 0.0,
                random: 0.0,
                hot: 0.0,
                stride: None,
                hot_fraction: Some(2.0),
                hot_share: None,
                write_ratio: None,
            }]),
            ..Default::default()
        };
        assert_eq!(
            MultiprogramSpec::resolve("s3", &p, c).unwrap_err().0,
            "program[0].sequential"
        );
    }
}
