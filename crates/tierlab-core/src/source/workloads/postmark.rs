//! PostMark (Katcher, "PostMark: A New File System Benchmark", NetApp
//! TR3022, 1997): the small-file load of mail and news servers, used by S1
//! and S2.
//!
//! Modelled: an initial pool of `files` files with sizes uniform in
//! `min_size..=max_size`, each created by writing all its pages; then
//! `transactions` transactions, each a read-or-append on a random live file
//! (read with probability `read_bias`: the whole file is read; an append
//! writes a random amount from the size range after the file's end) and a
//! create-or-delete (create with probability `create_bias`: a new file
//! written whole; a delete removes a random live file, every page); at the
//! end the remaining files are deleted, as PostMark does. PostMark's biases
//! are integers 0..10 (`set bias read 5`); here they are the probabilities
//! they stand for (5 -> 0.5).
//!
//! `runs` > 1 runs PostMark that many times in a row (S2 reports miss rates
//! over five successive PostMark processes): each run builds a new pool,
//! runs its transactions and deletes what is left; file ids keep counting,
//! so no key of one run is reused by the next, and the random stream goes
//! on, so each run draws other sizes and picks.
//!
//! Left out: directories and file names (metadata I/O), PostMark's
//! read/write block sizes (the page cache sees whole pages either way), and
//! inode reuse (a new file never takes a deleted file's keys).

use super::{
    bad, check_at_least, check_share, scaled, unknown_preset, Common, ParamError, Run, Script,
};
use crate::request::Op;
use crate::rng::Rng;
use crate::units::{human_bytes, human_count};
use serde::{Deserialize, Serialize};

/// `[workload.postmark]`: every key optional, over the preset's values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostmarkParams {
    pub files: Option<u64>,
    pub transactions: Option<u64>,
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    pub read_bias: Option<f64>,
    pub create_bias: Option<f64>,
    pub runs: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PostmarkSpec {
    pub files: u64,
    pub transactions: u64,
    pub min_size: u64,
    pub max_size: u64,
    pub read_bias: f64,
    pub create_bias: f64,
    /// PostMark runs in a row (not scaled).
    pub runs: u64,
    pub seed: u64,
    pub page_size: u32,
}

pub const PRESETS: &[&str] = &["default", "s1", "s2"];

impl PostmarkSpec {
    /// `files`, `transactions`, size range, read bias, create bias.
    fn preset(name: &str) -> Result<(u64, u64, u64, u64, f64, f64), ParamError> {
        Ok(match name {
            // PostMark 1.5's own defaults: 500 files of 500..10,000 B, 500
            // transactions, biases 5 (TR3022).
            "default" => (500, 500, 500, 10_000, 0.5, 0.5),
            // S1 (Koob et al., WMPI 2006): 100,000 files of 500..15,000 B,
            // 100,000 transactions; biases left at PostMark's defaults.
            "s1" => (100_000, 100_000, 500, 15_000, 0.5, 0.5),
            // S2 (Koob et al., slides): 10,000 files of 400,000..800,000 B,
            // 50,000 transactions, "create favoured over delete, read
            // favoured over append". The slides give no numbers; 7 of 10
            // (0.7) is our assumption.
            "s2" => (10_000, 50_000, 400_000, 800_000, 0.7, 0.7),
            other => return Err(unknown_preset(other, PRESETS)),
        })
    }

    /// The preset's values, scaled (files and transactions times `scale`),
    /// then the table's overrides, each checked.
    pub fn resolve(
        preset: &str,
        p: &PostmarkParams,
        c: Common,
    ) -> Result<PostmarkSpec, ParamError> {
        let (f, t, lo, hi, rb, cb) = Self::preset(preset)?;
        let files = check_at_least("files", p.files.unwrap_or(scaled(f, c.scale, 1)), 1)?;
        let transactions = p.transactions.unwrap_or(scaled(t, c.scale, 0));
        let min_size = check_at_least("min_size", p.min_size.unwrap_or(lo), 1)?;
        let max_size = p.max_size.unwrap_or(hi);
        if max_size < min_size {
            return Err(bad(
                "max_size",
                format!("{max_size} is less than min_size = {min_size}"),
            ));
        }
        if max_size > 1 << 40 {
            return Err(bad(
                "max_size",
                format!("{max_size} is out of range; at most 1 TiB"),
            ));
        }
        Ok(PostmarkSpec {
            files,
            transactions,
            min_size,
            max_size,
            read_bias: check_share("read_bias", p.read_bias.unwrap_or(rb))?,
            create_bias: check_share("create_bias", p.create_bias.unwrap_or(cb))?,
            runs: check_at_least("runs", p.runs.unwrap_or(1), 1)?,
            seed: c.seed,
            page_size: c.page_size,
        })
    }
}

#[derive(Clone, Copy, Debug)]
struct File {
    id: u64,
    bytes: u64,
}

enum Phase {
    Pool,
    ReadOrAppend,
    CreateOrDelete,
    Teardown,
}

pub struct Postmark {
    spec: PostmarkSpec,
    rng: Rng,
    /// Live files, in no order: a random pick and a delete are O(1).
    live: Vec<File>,
    next_id: u64,
    phase: Phase,
    done_transactions: u64,
    done_runs: u64,
}

impl Postmark {
    pub fn new(spec: &PostmarkSpec) -> Self {
        Postmark {
            rng: Rng::new(spec.seed),
            live: Vec::with_capacity(spec.files as usize),
            next_id: 1,
            phase: Phase::Pool,
            done_transactions: 0,
            done_runs: 0,
            spec: spec.clone(),
        }
    }

    fn pages(&self, bytes: u64) -> u64 {
        super::pages_of(bytes, self.spec.page_size)
    }

    fn size(&mut self) -> u64 {
        let s = &self.spec;
        s.min_size + self.rng.below(s.max_size - s.min_size + 1)
    }

    fn create(&mut self) -> Run {
        let f = File {
            id: self.next_id,
            bytes: self.size(),
        };
        self.next_id += 1;
        self.live.push(f);
        Run::new(f.id, 0, self.pages(f.bytes), Op::Write)
    }

    /// The bytes of every live file (for checks).
    pub fn live_sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.live.iter().map(|f| f.bytes)
    }
}

impl Script for Postmark {
    fn next_run(&mut self) -> Option<Run> {
        loop {
            match self.phase {
                Phase::Pool => {
                    if (self.live.len() as u64) < self.spec.files {
                        return Some(self.create());
                    }
                    self.phase = Phase::ReadOrAppend;
                }
                Phase::ReadOrAppend => {
                    if self.done_transactions == self.spec.transactions {
                        self.phase = Phase::Teardown;
                        continue;
                    }
                    self.phase = Phase::CreateOrDelete;
                    if self.live.is_empty() {
                        continue;
                    }
                    let i = self.rng.below(self.live.len() as u64) as usize;
                    let f = self.live[i];
                    if self.rng.next_f64() < self.spec.read_bias {
                        return Some(Run::new(f.id, 0, self.pages(f.bytes), Op::Read));
                    }
                    // Append: the partly filled last page and the new ones.
                    let add = self.size();
                    let first = f.bytes / self.spec.page_size as u64;
                    let end = self.pages(f.bytes + add);
                    self.live[i].bytes += add;
                    return Some(Run::new(f.id, first, end - first, Op::Write));
                }
                Phase::CreateOrDelete => {
                    self.phase = Phase::ReadOrAppend;
                    self.done_transactions += 1;
                    // PostMark creates when there is nothing to delete.
                    if self.live.is_empty() || self.rng.next_f64() < self.spec.create_bias {
                        return Some(self.create());
                    }
                    let i = self.rng.below(self.live.len() as u64) as usize;
                    let f = self.live.swap_remove(i);
                    return Some(Run::new(f.id, 0, self.pages(f.bytes), Op::Delete));
                }
                Phase::Teardown => {
                    if let Some(f) = self.live.pop() {
                        return Some(Run::new(f.id, 0, self.pages(f.bytes), Op::Delete));
                    }
                    // Stays done: a finished trace is asked again by its reader.
                    if self.done_runs + 1 >= self.spec.runs {
                        self.done_runs = self.spec.runs;
                        return None;
                    }
                    self.done_runs += 1;
                    // The next run: a new pool (new ids), new transactions.
                    self.phase = Phase::Pool;
                    self.done_transactions = 0;
                }
            }
        }
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        let runs = if s.runs > 1 {
            format!(", {} runs in a row", s.runs)
        } else {
            String::new()
        };
        format!(
            "postmark: {} files of {}..{}, {} transactions (read bias {}, create bias {}){runs}, seed {}",
            human_count(s.files),
            human_bytes(s.min_size),
            human_bytes(s.max_size),
            human_count(s.transactions),
            s.read_bias,
            s.create_bias,
            s.seed
        )
    }
}

super::benchmark!(PostmarkSpec, PostmarkParams, Postmark);
#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{key_file, Paged};
    use super::*;
    use std::collections::HashMap;

    fn spec(preset: &str, scale: f64, seed: u64) -> PostmarkSpec {
        let c = common(scale, seed);
        PostmarkSpec::resolve(preset, &PostmarkParams::default(), c).unwrap()
    }

    #[test]
    fn s1_preset_is_the_paper_and_scales() {
        let s = spec("s1", 1.0, 1);
        assert_eq!((s.files, s.transactions), (100_000, 100_000));
        assert_eq!((s.min_size, s.max_size), (500, 15_000));
        let s = spec("s2", 0.1, 1);
        assert_eq!((s.files, s.transactions), (1_000, 5_000));
        assert_eq!((s.min_size, s.max_size), (400_000, 800_000));
    }

    #[test]
    fn pool_sizes_are_uniform_over_the_range() {
        let s = spec("s1", 0.2, 5);
        let mut g = Postmark::new(&s);
        for _ in 0..s.files {
            g.next_run();
        }
        let mut v: Vec<u64> = g.live_sizes().collect();
        assert_eq!(v.len(), 20_000);
        // Uniform on 500..=15,000: quartiles at 4,125, 7,750 and 11,375 B.
        for (q, want) in [(0.25, 4_125.0), (0.5, 7_750.0), (0.75, 11_375.0)] {
            let got = quantile(&mut v, q) as f64;
            assert!(
                (got - want).abs() < 0.02 * 14_500.0,
                "q{q}: {got} vs {want}"
            );
        }
        assert!(v.iter().all(|&x| (500..=15_000).contains(&x)));
    }

    #[test]
    fn biases_give_the_transaction_mix() {
        let s = spec("s2", 0.1, 9); // biases 0.7 and 0.7
        let runs = runs(Postmark::new(&s));
        // Pool, then two runs per transaction (the pool never empties here).
        let tx = &runs[s.files as usize..(s.files + 2 * s.transactions) as usize];
        let (mut reads, mut appends, mut creates, mut deletes) = (0u64, 0u64, 0u64, 0u64);
        for r in tx {
            match r.op {
                Op::Read => reads += 1,
                // Files are >= 400,000 B: an append never starts at page 0.
                Op::Write if r.first == 0 => creates += 1,
                Op::Write => appends += 1,
                Op::Delete => deletes += 1,
            }
        }
        assert_eq!(reads + appends, s.transactions);
        assert_eq!(creates + deletes, s.transactions);
        let n = s.transactions as f64;
        let read_share = reads as f64 / n;
        let create_share = creates as f64 / n;
        assert!((read_share - 0.7).abs() < 0.02, "read share {read_share}");
        assert!(
            (create_share - 0.7).abs() < 0.02,
            "create share {create_share}"
        );
        // The teardown deletes exactly the files still live.
        let teardown = runs.len() - tx.len() - s.files as usize;
        assert_eq!(teardown as u64, s.files + creates - deletes);
    }

    #[test]
    fn page_trace_keeps_files_consistent_and_ends_empty() {
        let s = spec("s1", 0.05, 2);
        let reqs = all(Paged::new(Postmark::new(&s), 4096));
        // A file's pages are written before they are read and never touched
        // after its delete; every file is deleted by the end.
        let mut state: HashMap<u64, u8> = HashMap::new(); // 1 written, 2 deleted
        for r in &reqs {
            let st = state.entry(r.key).or_insert(0);
            match r.op {
                Op::Write => {
                    assert_ne!(*st, 2, "write after delete");
                    *st = 1
                }
                Op::Read => assert_eq!(*st, 1, "read of an unwritten page {:x}", r.key),
                Op::Delete => {
                    assert_eq!(*st, 1);
                    *st = 2
                }
            }
        }
        assert!(state.values().all(|&v| v == 2));
        let files: std::collections::HashSet<u64> = reqs.iter().map(|r| key_file(r.key)).collect();
        assert!(files.len() as u64 >= s.files);
    }

    #[test]
    fn successive_runs_use_new_files_and_each_ends_empty() {
        // s2: files of >= 400,000 B, so only a create writes page 0.
        let one = spec("s2", 0.01, 3);
        let p = PostmarkParams {
            runs: Some(3),
            ..Default::default()
        };
        let three = PostmarkSpec::resolve("s2", &p, common(0.01, 3)).unwrap();
        assert_eq!(three.runs, 3);
        let first = runs(Postmark::new(&one));
        let all3 = runs(Postmark::new(&three));
        // The first run is the single run, request for request.
        assert_eq!(&all3[..first.len()], &first[..]);
        // Each run starts with a pool of `files` creates after the previous
        // run's teardown emptied the file system.
        let mut live: std::collections::HashSet<u64> = Default::default();
        let mut seen: std::collections::HashSet<u64> = Default::default();
        let mut pools = 0;
        let mut i = 0;
        while i < all3.len() {
            if live.is_empty() {
                pools += 1;
                for r in &all3[i..i + one.files as usize] {
                    assert_eq!((r.op, r.first), (Op::Write, 0), "a pool creates files");
                }
            }
            let r = all3[i];
            match r.op {
                Op::Write if r.first == 0 => {
                    // A create: an id never seen before, in this run or another.
                    assert!(seen.insert(r.id), "file id {} reused", r.id);
                    live.insert(r.id);
                }
                Op::Delete => assert!(live.remove(&r.id)),
                _ => assert!(live.contains(&r.id)),
            }
            i += 1;
        }
        assert!(live.is_empty());
        assert_eq!(pools, 3);
        assert!(all3.len() > 2 * first.len());
        // A finished trace stays finished when asked again.
        let mut g = Postmark::new(&three);
        while g.next_run().is_some() {}
        assert!(g.next_run().is_none() && g.next_run().is_none());
    }

    #[test]
    fn runs_must_be_at_least_one() {
        let p = PostmarkParams {
            runs: Some(0),
            ..Default::default()
        };
        assert_eq!(
            PostmarkSpec::resolve("s1", &p, common(1.0, 1)).unwrap_err(),
            bad("runs", "0 is out of range; must be at least 1")
        );
    }

    #[test]
    fn same_seed_same_trace_other_seed_differs() {
        let a = all(Paged::new(Postmark::new(&spec("s1", 0.01, 4)), 4096));
        let b = all(Paged::new(Postmark::new(&spec("s1", 0.01, 4)), 4096));
        let c = all(Paged::new(Postmark::new(&spec("s1", 0.01, 5)), 4096));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let c = common(1.0, 1);
        let p = PostmarkParams {
            min_size: Some(10),
            max_size: Some(5),
            ..Default::default()
        };
        assert_eq!(
            PostmarkSpec::resolve("s1", &p, c).unwrap_err().0,
            "max_size"
        );
        let p = PostmarkParams {
            read_bias: Some(1.5),
            ..Default::default()
        };
        assert_eq!(
            PostmarkSpec::resolve("s1", &p, c).unwrap_err(),
            bad("read_bias", "1.5 is out of range; allowed 0.0 to 1.0")
        );
        assert_eq!(
            PostmarkSpec::resolve("s9", &PostmarkParams::default(), c)
                .unwrap_err()
                .1,
            "unknown preset \"s9\"; expected one of default, s1, s2"
        );
    }
}
