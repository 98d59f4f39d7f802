//! A SPECweb99-like web server load (SPEC, SPECweb99 Release 1.02 design
//! document, 1999-2000): S4's second workload, a 1.8 GB fileset with 70%
//! static and 30% dynamic requests.
//!
//! Modelled: SPECweb99's fileset, directories of four classes of nine files
//! (class 0: 102..918 B in steps of 102 B; class 1: 1..9 KiB; class 2:
//! 10..90 KiB; class 3: 100..900 KiB; 5,119,470 B a directory), as many
//! directories as fit `fileset`. A request picks a directory with Zipf
//! popularity (alpha 1), a class with SPECweb99's mix (35%, 50%, 14%, 1%)
//! and a file of the class with SPECweb99's fixed within-class mix (3.9,
//! 5.9, 8.8, 17.7, 35.3, 11.8, 7.1, 5.0, 4.4%), and reads the whole file.
//! SPECweb99's request mix: 70% static GET, 12.45% dynamic GET and 0.15%
//! CGI GET (each reads the file), 12.6% dynamic GET with ad rotation (also
//! reads one page of the user-profile file and one of the ads file), 4.8%
//! POST (writes the tail page of the post log; one 128 B record per POST,
//! our assumption).
//!
//! Left out: the CPU work of dynamic pages, the ads' expiry and
//! regeneration (`Custom.Ads` is rewritten by the server periodically),
//! the post log's reset between runs and HTTP keep-alive.

use super::{
    check_at_least, scaled, unknown_preset, zipf_weights, Common, ParamError, Run, Script,
};
use crate::request::Op;
use crate::rng::Alias;
use crate::rng::Rng;
use crate::units::{human_bytes, human_count};
use serde::{Deserialize, Serialize};

/// Bytes of one SPECweb99 directory: sum over classes of unit * (1 + ... + 9).
pub const DIR_BYTES: u64 = 45 * (102 + 1024 + 10_240 + 102_400);
const CLASS_UNIT: [u64; 4] = [102, 1024, 10_240, 102_400];
const CLASS_MIX: [f64; 4] = [0.35, 0.50, 0.14, 0.01];
const FILE_MIX: [f64; 9] = [
    0.039, 0.059, 0.088, 0.177, 0.353, 0.118, 0.071, 0.050, 0.044,
];
/// SPECweb99's request mix: static, dynamic GET (with CGI), ad rotation, POST.
const STATIC: f64 = 0.70;
const DYNAMIC_GET: f64 = 0.1245 + 0.0015;
const AD_ROTATION: f64 = 0.126;
/// Bytes of a post-log record (ours).
const POST_RECORD: u64 = 128;

/// `[workload.specweb]`: every key optional, over the preset's values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecwebParams {
    pub fileset: Option<crate::units::Size>,
    pub requests: Option<u64>,
    pub users: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SpecwebSpec {
    pub dirs: u64,
    pub requests: u64,
    pub users: u64,
    pub seed: u64,
    pub page_size: u32,
}

pub const PRESETS: &[&str] = &["default", "s4"];

impl SpecwebSpec {
    pub fn resolve(preset: &str, p: &SpecwebParams, c: Common) -> Result<SpecwebSpec, ParamError> {
        let (fileset, requests) = match preset {
            "default" => (100u64 << 20, 20_000u64),
            // S4 (Kgil & Mudge, CASES 2006): SPECweb99 over 1.8 GB.
            "s4" => (1_800_000_000, 1_000_000),
            other => return Err(unknown_preset(other, PRESETS)),
        };
        let fileset =
            super::web::size_bytes("fileset", p.fileset)?.unwrap_or(scaled(fileset, c.scale, 1));
        if fileset > 1 << 44 {
            return Err(super::bad(
                "fileset",
                format!("{fileset} B is out of range; at most 16 TiB"),
            ));
        }
        Ok(SpecwebSpec {
            dirs: (fileset / DIR_BYTES).max(1),
            requests: check_at_least(
                "requests",
                p.requests.unwrap_or(scaled(requests, c.scale, 1)),
                1,
            )?,
            // SPECweb99 keeps one User.Personality record per user; 1,000
            // users is ours.
            users: check_at_least("users", p.users.unwrap_or(1000), 1)?,
            seed: c.seed,
            page_size: c.page_size,
        })
    }
}

pub struct Specweb {
    spec: SpecwebSpec,
    rng: Rng,
    dirs: Alias,
    classes: Alias,
    files: Alias,
    done: u64,
    posts: u64,
    /// Runs still to emit for the current request (ad rotation has three).
    pending: [Option<Run>; 2],
}

impl Specweb {
    pub fn new(spec: &SpecwebSpec) -> Self {
        Specweb {
            rng: Rng::new(spec.seed),
            dirs: Alias::new(&zipf_weights(spec.dirs as usize, 1.0)),
            classes: Alias::new(&CLASS_MIX),
            files: Alias::new(&FILE_MIX),
            done: 0,
            posts: 0,
            pending: [None, None],
            spec: spec.clone(),
        }
    }

    fn special(&self, n: u64) -> u64 {
        self.spec.dirs * 36 + n
    }

    fn file_run(&mut self) -> Run {
        let d = self.dirs.sample(&mut self.rng) as u64;
        let c = self.classes.sample(&mut self.rng);
        let f = self.files.sample(&mut self.rng) as u64;
        let bytes = CLASS_UNIT[c] * (f + 1);
        let id = 1 + d * 36 + c as u64 * 9 + f;
        Run::new(id, 0, super::pages_of(bytes, self.spec.page_size), Op::Read)
    }
}

impl Script for Specweb {
    fn next_run(&mut self) -> Option<Run> {
        for p in &mut self.pending {
            if let Some(r) = p.take() {
                return Some(r);
            }
        }
        if self.done == self.spec.requests {
            return None;
        }
        self.done += 1;
        let ps = self.spec.page_size as u64;
        let u = self.rng.next_f64();
        if u < STATIC + DYNAMIC_GET {
            return Some(self.file_run());
        }
        if u < STATIC + DYNAMIC_GET + AD_ROTATION {
            // User profile (one 64 B record per user, ours) and an ad from
            // Custom.Ads (360 ads of 128 B, ours), then the page itself.
            let user_pages = super::pages_of(self.spec.users * 64, self.spec.page_size);
            let ad_pages = super::pages_of(360 * 128, self.spec.page_size);
            let up = self.rng.below(user_pages);
            let ad = self.rng.below(ad_pages);
            self.pending = [
                Some(Run::new(self.special(2), ad, 1, Op::Read)),
                Some(self.file_run()),
            ];
            return Some(Run::new(self.special(1), up, 1, Op::Read));
        }
        let page = self.posts * POST_RECORD / ps;
        self.posts += 1;
        Some(Run::new(self.special(3), page, 1, Op::Write))
    }

    fn describe(&self) -> String {
        let s = &self.spec;
        format!(
            "specweb (SPECweb99-like): {} directories ({}), {} requests, seed {}",
            human_count(s.dirs),
            human_bytes(s.dirs * DIR_BYTES),
            human_count(s.requests),
            s.seed
        )
    }
}

super::benchmark!(SpecwebSpec, SpecwebParams, Specweb);
#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::*;

    fn spec(scale: f64, seed: u64) -> SpecwebSpec {
        let c = common(scale, seed);
        SpecwebSpec::resolve("s4", &SpecwebParams::default(), c).unwrap()
    }

    #[test]
    fn dir_bytes_and_preset() {
        assert_eq!(DIR_BYTES, 5_119_470);
        // 1.8 GB holds 351 directories.
        assert_eq!(spec(1.0, 1).dirs, 351);
    }

    #[test]
    fn request_mix_classes_and_directories() {
        let s = spec(0.5, 5);
        let runs = runs(Specweb::new(&s));
        let n = s.requests as f64;
        let files: Vec<&Run> = runs.iter().filter(|r| r.id <= s.dirs * 36).collect();
        let posts = runs.iter().filter(|r| r.op == Op::Write).count() as f64 / n;
        let ads = runs.iter().filter(|r| r.id == s.dirs * 36 + 1).count() as f64 / n;
        assert_eq!(files.len() as u64 + (posts * n).round() as u64, s.requests);
        assert!((posts - 0.048).abs() < 0.02, "posts {posts}");
        assert!((ads - 0.126).abs() < 0.02, "ad rotation {ads}");
        for (c, want) in CLASS_MIX.iter().enumerate() {
            let got = files
                .iter()
                .filter(|r| ((r.id - 1) % 36) / 9 == c as u64)
                .count() as f64
                / files.len() as f64;
            assert!((got - want).abs() < 0.01, "class {c}: {got} vs {want}");
        }
        let slope = zipf_slope(files.iter().map(|r| (r.id - 1) / 36), 50);
        assert!((slope + 1.0).abs() < 0.05, "directory slope {slope}");
    }

    #[test]
    fn same_seed_same_runs() {
        let a = runs(Specweb::new(&spec(0.01, 3)));
        assert_eq!(a, runs(Specweb::new(&spec(0.01, 3))));
        assert_ne!(a, runs(Specweb::new(&spec(0.01, 4))));
    }
}
