//! Seeded synthetic workloads: Zipf, uniform, sequential scan and loop,
//! drawn from [`crate::rng::Rng`] (the same seed, the same trace, forever).

use crate::request::{Op, Request};
use crate::rng::{Alias, Rng};
use crate::source::formats::KeyError;
use crate::source::trace::{TraceError, TraceSource};
use crate::units::{human_bytes, human_count};

/// The shapes of synthetic workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pattern {
    /// Object i+1 with probability proportional to 1/(i+1)^alpha.
    Zipf {
        alpha: f64,
    },
    Uniform,
    /// Keys 1, 2, 3, ... each requested once.
    Scan,
    /// Keys 1..=objects in order, over and over.
    Loop,
}

/// Parameters shared by every generator.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthSpec {
    pub pattern: Pattern,
    pub objects: u64,
    pub requests: u64,
    pub object_size: u32,
    pub seed: u64,
    /// Share of requests that are writes.
    pub write_ratio: f64,
}

/// `[workload]` keys of the generators of this file; which of them a type
/// reads is its [`Synthetic::KEYS`].
#[derive(Clone, Debug, Default, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SynthParams {
    pub alpha: Option<f64>,
    pub objects: Option<u64>,
    pub requests: Option<u64>,
    pub object_size: Option<crate::units::Size>,
    pub seed: Option<u64>,
    pub write_ratio: Option<f64>,
}

/// One of this file's generators, as the registry (`source::generators`)
/// sees it.
pub trait Synthetic {
    /// The `[workload]` keys it reads.
    const KEYS: &'static [&'static str];
    /// Why a key other types read is not one of its own, when that needs
    /// saying.
    fn why_not(_key: &str) -> Option<&'static str> {
        None
    }
    fn pattern(p: &SynthParams) -> Result<Pattern, KeyError>;
}

const COMMON: [&str; 4] = ["requests", "object_size", "seed", "write_ratio"];

pub struct Zipf;
pub struct Uniform;
pub struct Scan;
pub struct Loop;

impl Synthetic for Zipf {
    const KEYS: &'static [&'static str] = &[
        "alpha", "objects", COMMON[0], COMMON[1], COMMON[2], COMMON[3],
    ];
    fn pattern(p: &SynthParams) -> Result<Pattern, KeyError> {
        if let Some(o) = p.objects.filter(|&o| o > MAX_ZIPF_OBJECTS) {
            return Err(bad(
                "objects",
                format!(
                    "{o} is out of range; at most {MAX_ZIPF_OBJECTS} objects for zipf \
                     (its table takes about 40 bytes an object while it is built)"
                ),
            ));
        }
        let alpha = p.alpha.unwrap_or(1.0);
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(bad(
                "alpha",
                format!("{alpha} is out of range; must be zero or more"),
            ));
        }
        Ok(Pattern::Zipf { alpha })
    }
}

impl Synthetic for Uniform {
    const KEYS: &'static [&'static str] = &["objects", COMMON[0], COMMON[1], COMMON[2], COMMON[3]];
    fn pattern(_: &SynthParams) -> Result<Pattern, KeyError> {
        Ok(Pattern::Uniform)
    }
}

impl Synthetic for Scan {
    const KEYS: &'static [&'static str] = &COMMON;
    fn why_not(key: &str) -> Option<&'static str> {
        (key == "objects").then_some(
            "a scan requests `requests` distinct keys once each; type = \"loop\" cycles over `objects`",
        )
    }
    fn pattern(_: &SynthParams) -> Result<Pattern, KeyError> {
        Ok(Pattern::Scan)
    }
}

impl Synthetic for Loop {
    const KEYS: &'static [&'static str] = &["objects", COMMON[0], COMMON[1], COMMON[2], COMMON[3]];
    fn pattern(_: &SynthParams) -> Result<Pattern, KeyError> {
        Ok(Pattern::Loop)
    }
}

fn bad(key: &str, msg: impl Into<String>) -> KeyError {
    (key.to_string(), msg.into())
}

impl SynthParams {
    /// The spec of generator `G`, every key checked.
    pub fn spec<G: Synthetic>(&self) -> Result<SynthSpec, KeyError> {
        let requests = self
            .requests
            .ok_or_else(|| bad("requests", "required: the number of requests to generate"))?;
        if requests == 0 {
            return Err(bad("requests", "must be at least 1"));
        }
        let objects = if G::KEYS.contains(&"objects") {
            match self.objects {
                Some(0) => return Err(bad("objects", "must be at least 1")),
                Some(o) => o,
                None => return Err(bad("objects", "required: the number of distinct objects")),
            }
        } else {
            requests
        };
        let pattern = G::pattern(self)?;
        use crate::units::Size;
        let object_size = match self.object_size.unwrap_or(Size::Absolute(4096)) {
            Size::Absolute(n) if n >= 1 && n <= u32::MAX as u64 => n as u32,
            Size::Absolute(n) => {
                return Err(bad(
                    "object_size",
                    format!("{n} is out of range; allowed 1 B to 4 GiB - 1"),
                ))
            }
            Size::Percent(_) => {
                return Err(bad("object_size", "must be a size in bytes, not a share"))
            }
        };
        let write_ratio = self.write_ratio.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&write_ratio) {
            return Err(bad(
                "write_ratio",
                format!("{write_ratio} is out of range; allowed 0.0 to 1.0"),
            ));
        }
        Ok(SynthSpec {
            pattern,
            objects,
            requests,
            object_size,
            seed: self.seed.unwrap_or(42),
            write_ratio,
        })
    }
}

/// The most objects a Zipf generator draws from: its alias table takes
/// about 40 bytes an object while it is built (16 kept), 2.5 GiB here.
pub const MAX_ZIPF_OBJECTS: u64 = 1 << 26;

pub struct Generator {
    spec: SynthSpec,
    rng: Rng,
    alias: Option<Alias>,
    emitted: u64,
    /// A batch's Zipf coins, between its draws and its keys.
    coins: Vec<f64>,
}

impl Generator {
    pub fn new(spec: SynthSpec) -> Self {
        Self::try_new(spec).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As `new`, but a Zipf table the memory cannot hold is an error
    /// naming `workload.objects` and the bytes asked, not an abort.
    pub fn try_new(spec: SynthSpec) -> Result<Self, String> {
        let alias = match spec.pattern {
            Pattern::Zipf { alpha } => {
                // The four tables Alias::new builds, reserved up front.
                let n = spec.objects as usize;
                let mut probe: Vec<u64> = Vec::new();
                let want = n.saturating_mul(5);
                probe.try_reserve_exact(want).map_err(|_| {
                    format!(
                        "the Zipf table of {n} objects needs {} bytes of memory, which could not be allocated",
                        want as u128 * 8
                    )
                })?;
                drop(probe);
                let w: Vec<f64> = (1..=spec.objects)
                    .map(|i| (i as f64).powf(-alpha))
                    .collect();
                Some(Alias::new(&w))
            }
            _ => None,
        };
        Ok(Generator {
            rng: Rng::new(spec.seed),
            spec,
            alias,
            emitted: 0,
            coins: Vec::new(),
        })
    }

    /// The next key; a Zipf draw's column instead, its coin kept in
    /// `coins` and its column asked for, until `next_batch` resolves it.
    #[inline(always)]
    fn next_key(&mut self) -> u64 {
        match self.spec.pattern {
            Pattern::Zipf { .. } => match &self.alias {
                Some(a) => {
                    let (i, u) = a.draw(&mut self.rng);
                    a.prefetch(i);
                    self.coins.push(u);
                    i as u64
                }
                None => 1,
            },
            Pattern::Uniform => self.rng.below(self.spec.objects) + 1,
            Pattern::Scan => self.emitted + 1,
            Pattern::Loop => self.emitted % self.spec.objects + 1,
        }
    }
}

impl TraceSource for Generator {
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        out.clear();
        let n = (self.spec.requests - self.emitted).min(max as u64);
        self.coins.clear();
        for _ in 0..n {
            let key = self.next_key();
            let op = if self.spec.write_ratio > 0.0 && self.rng.next_f64() < self.spec.write_ratio {
                Op::Write
            } else {
                Op::Read
            };
            out.push(Request {
                time: self.emitted,
                key,
                size: self.spec.object_size,
                op,
                pid: 0,
                next_access: -1,
            });
            self.emitted += 1;
        }
        // A Zipf batch's random numbers came first, in the order one draw
        // at a time takes them (so the same trace), each draw's column
        // asked for as it was drawn; its keys now, the columns on their
        // way or in cache: the table's misses overlap, where one draw at a
        // time waited for each.
        if let (Pattern::Zipf { .. }, Some(a)) = (self.spec.pattern, &self.alias) {
            for (r, &u) in out.iter_mut().zip(&self.coins) {
                r.key = a.resolve(r.key as usize, u) as u64 + 1;
            }
        }
        Ok(out.len())
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.spec.requests)
    }
    fn describe(&self) -> String {
        let s = &self.spec;
        let shape = match s.pattern {
            Pattern::Zipf { alpha } => format!("zipf(alpha={alpha})"),
            Pattern::Uniform => "uniform".into(),
            Pattern::Scan => "scan".into(),
            Pattern::Loop => "loop".into(),
        };
        format!(
            "{shape} over {} objects of {}, {} requests, seed {}",
            human_count(s.objects),
            human_bytes(s.object_size as u64),
            human_count(s.requests),
            s.seed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(spec: SynthSpec) -> Vec<u64> {
        let mut g = Generator::new(spec);
        let mut out = Vec::new();
        let mut all = Vec::new();
        while g.next_batch(&mut out, 1000).unwrap() > 0 {
            all.extend(out.iter().map(|r| r.key));
        }
        all
    }

    fn spec(pattern: Pattern) -> SynthSpec {
        SynthSpec {
            pattern,
            objects: 1000,
            requests: 200_000,
            object_size: 4096,
            seed: 7,
            write_ratio: 0.0,
        }
    }

    #[test]
    fn describes_itself_in_human_units() {
        // The run header: it read "200000 objects of 4096 B, 2000000 requests".
        let g = Generator::new(SynthSpec {
            objects: 200_000,
            requests: 2_000_000,
            ..spec(Pattern::Zipf { alpha: 1.0 })
        });
        assert_eq!(
            g.describe(),
            "zipf(alpha=1) over 200,000 objects of 4 KiB, 2,000,000 requests, seed 7"
        );
    }

    #[test]
    fn same_seed_same_trace_and_fixed_stream() {
        let a = keys(spec(Pattern::Zipf { alpha: 1.0 }));
        assert_eq!(a, keys(spec(Pattern::Zipf { alpha: 1.0 })));
        // The stream itself is part of the contract: these values must never change.
        let mut r = Rng::new(42);
        assert_eq!(r.next_u64(), 15_021_278_609_987_233_951, "stream changed");
    }

    #[test]
    fn a_zipf_batch_draws_as_one_draw_at_a_time() {
        // The batch takes its random numbers in the order the plain loop
        // takes them: the same keys and operations.
        let s = SynthSpec {
            write_ratio: 0.3,
            objects: 5_000,
            ..spec(Pattern::Zipf { alpha: 0.8 })
        };
        let mut g = Generator::new(s.clone());
        let mut got = Vec::new();
        let mut out = Vec::new();
        while g.next_batch(&mut out, 777).unwrap() > 0 {
            got.extend(out.iter().map(|r| (r.key, r.op)));
        }
        let w: Vec<f64> = (1..=s.objects).map(|i| (i as f64).powf(-0.8)).collect();
        let a = Alias::new(&w);
        let mut rng = Rng::new(s.seed);
        let want: Vec<(u64, Op)> = (0..s.requests)
            .map(|_| {
                let key = a.sample(&mut rng) as u64 + 1;
                let op = if rng.next_f64() < 0.3 {
                    Op::Write
                } else {
                    Op::Read
                };
                (key, op)
            })
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn zipf_head_matches_its_probability() {
        let k = keys(spec(Pattern::Zipf { alpha: 1.0 }));
        let h: f64 = (1..=1000).map(|i| 1.0 / i as f64).sum();
        let expect = 1.0 / h; // share of key 1
        let got = k.iter().filter(|&&x| x == 1).count() as f64 / k.len() as f64;
        assert!((got - expect).abs() < 0.005, "{got} vs {expect}");
        assert!(k.iter().all(|&x| (1..=1000).contains(&x)));
    }

    #[test]
    fn loop_and_scan() {
        let mut s = spec(Pattern::Loop);
        s.requests = 2500;
        let k = keys(s.clone());
        assert_eq!(k[999], 1000);
        assert_eq!(k[1000], 1);
        s.pattern = Pattern::Scan;
        assert_eq!(keys(s)[2499], 2500);
    }
}
