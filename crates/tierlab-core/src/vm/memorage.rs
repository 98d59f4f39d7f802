//! Memorage (Jung and Cho, ICS 2013), `[vm.memorage]`: main memory borrows
//! the free capacity of the persistent-RAM storage device (PSD) instead of
//! swapping, and gives it back when pressure is gone or storage runs
//! short.
//!
//! - Borrowing (S3 Section 3.3.2, Figure 4): when an allocation would leave
//!   fewer than `high` frames free (Memorage's watermark, one page below
//!   pages_high), before any reclaim, the allocator asks the pool for a
//!   chunk (2 GiB in S3) of the PSD's free capacity, psd x (1 -
//!   occupancy) less what is borrowed already; it gets a chunk, or what is
//!   left when less, or nothing (then reclaim and swap as usual). The
//!   frame limit grows by the pages borrowed. The transfer costs
//!   `transfer_ns_per_gib` per GiB (S3 Figure 6: linear in the size) of
//!   the allocating process's system time.
//! - Frames know local from borrowed: the memory tier's frames are used
//!   first (a NUMA allocator's local node), borrowed ones after. A
//!   reference to a page in a borrowed frame runs its memory access at
//!   `remote_speed` (S3 Section 4.3: the PSD node's STREAM bandwidth was
//!   about 15% below local memory's).
//! - Shrinking (S3 Section 3.3.2): `aggressive` and `balanced` give the
//!   last chunk back as soon as that leaves `high` frames free (when pages
//!   are freed: a process exits); `lazy` only when storage runs short.
//!   The pages in frames given back move (a page copy each, counted in
//!   `migrations`): `balanced` moves the most referenced pages into local
//!   frames first, so the pages left on the PSD are the coldest (S3: "it
//!   considers reclaiming frequently referenced pages first");
//!   `aggressive` moves them in page order.
//! - Storage shortage: when `occupancy` rises (a series over simulated
//!   time) above what the borrowed capacity leaves, chunks go back at once;
//!   pages that find no free frame are evicted (written to the swap device
//!   when dirty).

use crate::hash::KeyMap;
use crate::spec::ConfigError;
use crate::units::{Nanos, Size};
use serde::{Deserialize, Serialize};

const GIB: f64 = (1u64 << 30) as f64;

/// The PSD's file-system occupancy: one fraction, or `[seconds, fraction]`
/// points over simulated time (each holds from its time to the next; the
/// first also before it).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Occupancy {
    Fixed(f64),
    Series(Vec<[f64; 2]>),
}

impl<'de> Deserialize<'de> for Occupancy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Occupancy;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a fraction from 0 to 1, or a list of [seconds, fraction] points")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Occupancy, E> {
                Ok(Occupancy::Fixed(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Occupancy, E> {
                Ok(Occupancy::Fixed(v as f64))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Occupancy, E> {
                Ok(Occupancy::Fixed(v as f64))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Occupancy, A::Error> {
                let mut v = Vec::new();
                while let Some(p) = seq.next_element::<[f64; 2]>()? {
                    v.push(p);
                }
                Ok(Occupancy::Series(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Shrink {
    #[default]
    Balanced,
    Aggressive,
    Lazy,
}

/// `[vm.memorage]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MemorageConfig {
    /// false: the baseline (swap on the PSD) from the same config.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The storage device's capacity.
    pub psd: Size,
    /// Its file-system occupancy, a fraction in [0, 1] or a series.
    pub occupancy: Occupancy,
    /// Capacity moved per borrow (S3 Section 3.3.2: 2 GB).
    #[serde(default = "two_gib")]
    pub chunk: Size,
    /// Time to lend (or take back) one GiB. Required: S3's Figure 6 gives
    /// it only as a plot (linear in the size); state your figure.
    pub transfer_ns_per_gib: Nanos,
    /// Speed of a memory access to a borrowed frame as a fraction of a
    /// local one (S3 Section 4.3: about 15% lower bandwidth).
    #[serde(default = "remote")]
    pub remote_speed: f64,
    #[serde(default)]
    pub shrink: Shrink,
}

fn yes() -> bool {
    true
}
fn two_gib() -> Size {
    Size::Absolute(2 << 30)
}
fn remote() -> f64 {
    0.85
}

fn fraction(path: &str, f: f64) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&f) {
        Ok(())
    } else {
        Err(ConfigError::at(
            path,
            format!("{f} is out of range; a fraction from 0 to 1"),
        ))
    }
}

impl MemorageConfig {
    fn bytes(path: &str, s: Size) -> Result<u64, ConfigError> {
        match s {
            Size::Absolute(n) if n > 0 => Ok(n),
            other => Err(ConfigError::at(
                path,
                format!("{other} is out of range; a size above zero such as \"2GiB\""),
            )),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let psd = Self::bytes("vm.memorage.psd", self.psd)?;
        let chunk = Self::bytes("vm.memorage.chunk", self.chunk)?;
        if chunk > psd {
            return Err(ConfigError::at(
                "vm.memorage.chunk",
                format!("{chunk} B is larger than the PSD (vm.memorage.psd = {psd} B)"),
            ));
        }
        match &self.occupancy {
            Occupancy::Fixed(f) => fraction("vm.memorage.occupancy", *f)?,
            Occupancy::Series(v) => {
                if v.is_empty() {
                    return Err(ConfigError::at(
                        "vm.memorage.occupancy",
                        "an empty series; give a fraction or [seconds, fraction] points",
                    ));
                }
                let mut last = f64::NEG_INFINITY;
                for (i, [t, f]) in v.iter().enumerate() {
                    let path = format!("vm.memorage.occupancy[{i}]");
                    if !(t.is_finite() && *t >= 0.0 && *t >= last) {
                        return Err(ConfigError::at(
                            path,
                            format!("time {t} s is out of order; times are seconds from 0, rising"),
                        ));
                    }
                    last = *t;
                    fraction(&path, *f)?;
                }
            }
        }
        let t = self.transfer_ns_per_gib.0;
        if !(t.is_finite() && t >= 0.0) {
            return Err(ConfigError::at(
                "vm.memorage.transfer_ns_per_gib",
                format!("{t} ns is out of range; must be zero or more"),
            ));
        }
        if !(self.remote_speed > 0.0 && self.remote_speed <= 1.0) {
            return Err(ConfigError::at(
                "vm.memorage.remote_speed",
                format!(
                    "{} is out of range; a fraction above 0 and at most 1",
                    self.remote_speed
                ),
            ));
        }
        Ok(())
    }
}

/// The `memorage` object of a run's result.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MemorageResult {
    /// The most capacity borrowed at once.
    pub borrowed_bytes_max: u64,
    /// Chunks borrowed and given back.
    pub borrows: u64,
    pub returns: u64,
    /// Time of the transfers (borrows: the allocating process's system
    /// time; returns: the background thread's).
    pub transfer_ns: f64,
    /// Allocations served by a borrowed frame: each is a frame the
    /// baseline would have had to reclaim (a swap-out when its victim was
    /// dirty), so an upper bound of the swap-outs avoided.
    pub swap_outs_avoided: u64,
    /// Pages moved out of frames given back (into free frames).
    pub migrations: u64,
    /// Pages evicted because storage took its capacity back and no frame
    /// was free for them.
    pub evicted_on_return: u64,
    /// References to pages in borrowed frames.
    pub remote_references: u64,
}

/// The pool's state.
pub struct Pool {
    pub enabled_shrink: Shrink,
    psd_pages: u64,
    chunk_pages: u64,
    page: u64,
    occupancy: Occupancy,
    /// Index of the occupancy point in force.
    point: usize,
    occ_now: f64,
    ns_per_gib: f64,
    pub remote_speed: f64,
    /// Pages per chunk borrowed, last on top.
    chunks: Vec<u64>,
    pub borrowed: u64,
    /// Resident pages in borrowed frames, with their references since.
    pub remote: KeyMap<u32>,
    pub r: MemorageResult,
}

impl Pool {
    pub fn new(c: &MemorageConfig, page: u64) -> Self {
        let bytes = |s: Size| match s {
            Size::Absolute(n) => n,
            Size::Percent(_) => 0,
        };
        let occ_now = match &c.occupancy {
            Occupancy::Fixed(f) => *f,
            Occupancy::Series(v) => v[0][1],
        };
        Pool {
            enabled_shrink: c.shrink,
            psd_pages: bytes(c.psd) / page,
            chunk_pages: (bytes(c.chunk) / page).max(1),
            page,
            occupancy: c.occupancy.clone(),
            point: 0,
            occ_now,
            ns_per_gib: c.transfer_ns_per_gib.0,
            remote_speed: c.remote_speed,
            chunks: Vec::new(),
            borrowed: 0,
            remote: KeyMap::default(),
            r: MemorageResult::default(),
        }
    }

    /// Whether the occupancy changes over time.
    pub fn has_series(&self) -> bool {
        matches!(self.occupancy, Occupancy::Series(_))
    }

    /// Moves the occupancy to time `t_ns`; true when it changed.
    pub fn advance(&mut self, t_ns: f64) -> bool {
        let Occupancy::Series(v) = &self.occupancy else {
            return false;
        };
        let mut changed = false;
        while self.point + 1 < v.len() && v[self.point + 1][0] * 1e9 <= t_ns {
            self.point += 1;
            changed |= v[self.point][1] != self.occ_now;
            self.occ_now = v[self.point][1];
        }
        changed
    }

    /// Pages of the PSD free of files.
    fn lendable(&self) -> u64 {
        (self.psd_pages as f64 * (1.0 - self.occ_now)).floor() as u64
    }

    fn transfer(&self, pages: u64) -> f64 {
        (pages * self.page) as f64 / GIB * self.ns_per_gib
    }

    /// A borrow: the pages lent (0: none free) and the transfer's time.
    pub fn borrow(&mut self) -> (u64, f64) {
        let n = self
            .lendable()
            .saturating_sub(self.borrowed)
            .min(self.chunk_pages);
        if n == 0 {
            return (0, 0.0);
        }
        self.chunks.push(n);
        self.borrowed += n;
        self.r.borrows += 1;
        let t = self.transfer(n);
        self.r.transfer_ns += t;
        self.r.borrowed_bytes_max = self.r.borrowed_bytes_max.max(self.borrowed * self.page);
        (n, t)
    }

    /// Pages borrowed beyond what storage now leaves free.
    pub fn excess(&self) -> u64 {
        self.borrowed.saturating_sub(self.lendable())
    }

    /// The chunk a shrink would give back next (0: none).
    pub fn last_chunk(&self) -> u64 {
        self.chunks.last().copied().unwrap_or(0)
    }

    /// Gives the last chunk back: its pages.
    pub fn give_back(&mut self) -> u64 {
        let n = self.chunks.pop().unwrap_or(0);
        self.borrowed -= n;
        self.r.returns += 1;
        self.r.transfer_ns += self.transfer(n);
        n
    }

    /// `n` resident pages in borrowed frames, which leave the remote set:
    /// with `balanced`, the most referenced (`hottest`, to move into local
    /// frames) or the least (to evict); otherwise in page order.
    pub fn take_out(&mut self, n: u64, hottest: bool) -> Vec<u64> {
        if n == 0 {
            return Vec::new();
        }
        let mut v: Vec<(u64, u32)> = self.remote.iter().map(|(&k, &c)| (k, c)).collect();
        if self.enabled_shrink == Shrink::Balanced {
            if hottest {
                v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            } else {
                v.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
            }
        } else {
            v.sort_unstable();
        }
        v.truncate(n as usize);
        for (k, _) in &v {
            self.remote.remove(k);
        }
        v.into_iter().map(|(k, _)| k).collect()
    }
}
