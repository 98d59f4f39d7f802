//! Bonnie's random-seek test (Tim Bray, Bonnie, 1990; bonnie.c): the
//! S1 "Bonnie random seeks on a 1 GB file" load.
//!
//! Modelled: Bonnie first writes its test file sequentially (its block-write
//! phase), which leaves it in the page cache; `write_first = false` starts
//! with the seeks alone. Then `seekers` processes (bonnie.c:
//! `SeekProcCount = 3`) each do `seeks` seeks (`Seeks = 4000`): a random
//! chunk of `chunk` bytes (`Chunk = 8192` in Bray's bonnie.c, 16384 in
//! Bonnie 1.4) is read, and in `rewrite_share` of the seeks (`UpdateSeek =
//! 10`: one in ten) dirtied and written back. The seekers run concurrently;
//! here they take turns, one seek each.
//!
//! `read_first = true` makes that first pass a sequential read: the pages
//! enter the cache clean, as they are when the seeks start after Bonnie's
//! rewrite and sequential-read phases have given the flush daemon time to
//! write the file out (S1's reproduction).
//!
//! Left out: the putc/getc and rewrite phases and the sequential read
//! (they touch every page once more, in order), and real interleaving of
//! the seekers by the scheduler.

use super::{check_at_least, check_share, scaled, unknown_preset, Common, ParamError, Run, Script};
use crate::request::Op;
use crate::rng::Rng;
use crate::units::{human_bytes, human_count};
use serde::{Deserialize, Serialize};

/// `[workload.bonnie]`: every key optional, over the preset's values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BonnieParams {
    pub file_size: Option<crate::units::Size>,
    pub seekers: Option<u64>,
    pub seeks: Option<u64>,
    pub chunk: Option<crate::units::Size>,
    pub rewrite_share: Option<f64>,
    pub write_first: Option<bool>,
    pub read_first: Option<bool>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BonnieSpec {
    pub file_size: u64,
    pub seekers: u64,
    /// Seeks per seeker.
    pub seeks: u64,
    pub chunk: u64,
    pub rewrite_share: f64,
    pub write_first: bool,
    /// The first pass over the file reads it instead of writing it.
    pub read_first: bool,
    pub seed: u64,
    pub page_size: u32,
}

pub const PRESETS: &[&str] = &["default", "s1"];

fn bytes(key: &str, s: crate::units::Size) -> Result<u64, ParamError> {
    match s {
        crate::units::Size::Absolute(n) => check_at_least(key, n, 1),
        crate::units::Size::Percent(_) => {
            Err(super::bad(key, "must be a size in bytes, not a share"))
        }
    }
}

impl BonnieSpec {
    pub fn resolve(preset: &str, p: &BonnieParams, c: Common) -> Result<BonnieSpec, ParamError> {
        // (file size, seeks per seeker). Bonnie's default file is 100 MiB;
        // S1 used 1 GB. The seek count scales with the file so a scaled
        // preset keeps Bonnie's seeks-per-block density.
        let (size, seeks) = match preset {
            "default" => (100u64 << 20, 4000u64),
            "s1" => (1u64 << 30, 4000),
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let file_size = match p.file_size {
            Some(s) => bytes("file_size", s)?,
            None => scaled(size, c.scale, 1),
        };
        let chunk = match p.chunk {
            Some(s) => bytes("chunk", s)?,
            None => 8192,
        };
        if chunk > file_size {
            return Err(super::bad(
                "chunk",
                format!("{chunk} B is larger than file_size = {file_size} B"),
            ));
        }
        let write_first = p.write_first.unwrap_or(true);
        let read_first = p.read_first.unwrap_or(false);
        if read_first && !write_first {
            return Err(super::bad(
                "read_first",
                "needs the first pass over the file; it cannot go with write_first = false",
            ));
        }
        if file_size > 1 << 44 {
            return Err(super::bad(
                "file_size",
                format!("{file_size} B is out of range; at most 16 TiB"),
            ));
        }
        Ok(BonnieSpec {
            file_size,
            seekers: check_at_least("seekers", p.seekers.unwrap_or(3), 1)?,
            seeks: p.seeks.unwrap_or(scaled(seeks, c.scale, 1)),
            chunk,
            rewrite_share: check_share("rewrite_share", p.rewrite_share.unwrap_or(0.1))?,
            write_first,
            read_first,
            seed: c.seed,
            page_size: c.page_size,
        })
    }
}

pub struct Bonnie {
    spec: BonnieSpec,
    rng: Rng,
    /// Pages of the file, pages per chunk, chunks in the file.
    pages: u64,
    chunk_pages: u64,
    chunks: u64,
    written: bool,
    done_seeks: u64,
    /// The chunk just read, to be written back.
    rewrite: Option<u64>,
}

impl Bonnie {
    pub fn new(spec: &BonnieSpec) -> Self {
        let chunk_pages = super::pages_of(spec.chunk, spec.page_size);
        let pages = super::pages_of(spec.file_size, spec.page_size);
        Bonnie {
            rng: Rng::new(spec.seed),
            pages,
            chunk_pages,
            // Bonnie seeks to chunk boundaries of the file.
            chunks: (spec.file_size / spec.chunk.max(1)).max(1),
            written: !spec.write_first,
            done_seeks: 0,
            rewrite: None,
            spec: spec.clone(),
        }
    }
}

impl Script for Bonnie {
    fn next_run(&mut self) -> Option<Run> {
        if !self.written {
            self.written = true;
            let op = if self.spec.read_first {
                Op::Read
            } else {
                Op::Write
            };
            return Some(Run::new(1, 0, self.pages, op));
        }
        if let Some(first) = self.rewrite.take() {
            return Some(Run::new(1, first, self.chunk_pages, Op::Write));
        }
        if self.done_seeks == self.spec.seekers * self.spec.seeks {
            return None;
        }
        self.done_seeks += 1;
        let offset = self.rng.below(self.chunks) * self.spec.chunk;
        let first = offset / self.spec.page_size as u64;
        let n = self.chunk_pages.min(self.pages - first);
        if self.rng.next_f64() < self.spec.rewrite_share {
            self.rewrite = Some(first);
        }
        Some(Run::new(1, first, n, Op::Read))
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        format!(
            "bonnie seeks: {} file, {} seekers x {} seeks of {}, {}% rewritten, seed {}",
            human_bytes(s.file_size),
            s.seekers,
            human_count(s.seeks),
            human_bytes(s.chunk),
            s.rewrite_share * 100.0,
            s.seed
        )
    }
}

super::benchmark!(BonnieSpec, BonnieParams, Bonnie);
#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::Paged;
    use super::*;

    fn spec(scale: f64, seed: u64) -> BonnieSpec {
        let c = common(scale, seed);
        BonnieSpec::resolve("s1", &BonnieParams::default(), c).unwrap()
    }

    #[test]
    fn defaults_are_bonnies() {
        let s = spec(1.0, 1);
        assert_eq!((s.seekers, s.seeks, s.chunk), (3, 4000, 8192));
        assert_eq!(s.file_size, 1 << 30);
        assert_eq!(s.rewrite_share, 0.1);
    }

    #[test]
    fn seeks_are_uniform_chunks_with_a_tenth_rewritten() {
        let mut s = spec(0.25, 3);
        s.seeks = 20_000;
        let reqs = all(Paged::new(Bonnie::new(&s), 4096));
        let pages = (s.file_size / 4096) as usize;
        // The sequential write of the whole file, then the seeks.
        assert!(reqs[..pages]
            .iter()
            .enumerate()
            .all(|(i, r)| r.op == Op::Write && r.key == super::super::page_key(1, i as u64)));
        let seeks = &reqs[pages..];
        let reads = seeks.iter().filter(|r| r.op == Op::Read).count();
        let writes = seeks.iter().filter(|r| r.op == Op::Write).count();
        // Two pages per 8 KiB chunk.
        assert_eq!(reads, 2 * 3 * 20_000);
        let share = writes as f64 / reads as f64;
        assert!((share - 0.1).abs() < 0.02, "rewrite share {share}");
        // Chunks start on chunk boundaries and cover the file evenly: the
        // first read page of each seek is even, its mean is the middle.
        let firsts: Vec<u64> = seeks
            .iter()
            .filter(|r| r.op == Op::Read)
            .step_by(2)
            .map(|r| r.key & 0xFFFF_FFFF)
            .collect();
        assert!(firsts.iter().all(|p| p % 2 == 0));
        let mean = firsts.iter().sum::<u64>() as f64 / firsts.len() as f64;
        assert!((mean / (pages as f64 / 2.0) - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn read_first_reads_the_file_then_seeks_the_same() {
        let s = spec(0.01, 2);
        let r = BonnieSpec {
            read_first: true,
            ..s.clone()
        };
        let (a, b) = (
            all(Paged::new(Bonnie::new(&s), 4096)),
            all(Paged::new(Bonnie::new(&r), 4096)),
        );
        let pages = s.file_size.div_ceil(4096) as usize;
        assert_eq!(a.len(), b.len());
        assert!(b[..pages].iter().all(|q| q.op == Op::Read));
        assert!(a[..pages].iter().all(|q| q.op == Op::Write));
        assert_eq!(a[pages..], b[pages..]);
        let c = common(0.01, 2);
        let p = BonnieParams {
            read_first: Some(true),
            write_first: Some(false),
            ..Default::default()
        };
        let e = BonnieSpec::resolve("s1", &p, c).unwrap_err();
        assert!(format!("{e:?}").contains("read_first"), "{e:?}");
    }

    #[test]
    fn same_seed_same_trace() {
        let a = all(Paged::new(Bonnie::new(&spec(0.01, 4)), 4096));
        assert_eq!(a, all(Paged::new(Bonnie::new(&spec(0.01, 4)), 4096)));
        assert_ne!(a, all(Paged::new(Bonnie::new(&spec(0.01, 5)), 4096)));
    }
}
