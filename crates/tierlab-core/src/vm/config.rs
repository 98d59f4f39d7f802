//! `[vm]`: the virtual-memory layer's parameters, their schema and their
//! checks (every error names its key path, `vm.tlb.ways`).
//!
//! The memory the frames live in is `tier[0]` (its technology and
//! capacity: frames = capacity / page size); the swap device is
//! `[backing]`. The page size applies at simulation time, so one
//! byte-addressed trace serves a whole page-size sweep.

use super::readahead::ReadAheadMode;
use crate::policy::PolicySpec;
use crate::spec::ConfigError;
use crate::units::{Nanos, Size};
use serde::{Deserialize, Serialize};

/// Smallest and largest page: 512 B is the smallest page "Storage-class
/// memory and the page size" considers (a last-level cache block); 1 GiB
/// is x86-64's largest page.
pub const MIN_PAGE: u64 = 512;
pub const MAX_PAGE: u64 = 1 << 30;
/// Most pages read ahead on a major fault (Linux's swap cluster, the bound
/// "Issues in File Caching and Virtual Memory Paging with Fast SCM Storage" states).
pub const MAX_READ_AHEAD: u32 = 128;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VmConfig {
    /// Bytes per page, a power of two from 512 B to 1 GiB.
    #[serde(default = "page_4k")]
    pub page_size: Size,
    /// The first-level TLB (data, and instructions unless `itlb` is given).
    #[serde(default)]
    pub tlb: TlbConfig,
    /// A second-level TLB, looked up after a first-level miss.
    pub tlb2: Option<TlbConfig>,
    /// Page-table walks: levels and an optional page-walk cache.
    #[serde(default)]
    pub walk: WalkConfig,
    /// The page-replacement policy of the frames (second-chance CLOCK by
    /// default, as in "Issues in File Caching and Virtual Memory Paging with Fast SCM Storage").
    #[serde(default = "clock")]
    pub policy: PolicySpec,
    /// Pages read per major fault (the faulting page's aligned cluster),
    /// 1 = the faulting page alone (off), at most 128.
    #[serde(default = "one")]
    pub read_ahead: u32,
    /// Whether a major fault reads all `read_ahead` pages (`fixed`) or
    /// Linux's adaptive swap-in window of up to `read_ahead` pages
    /// (`adaptive`, vm/readahead.rs). Left out of a written config when
    /// fixed, so configs without it hash and print as before.
    #[serde(default, skip_serializing_if = "ReadAheadMode::is_fixed")]
    pub read_ahead_mode: ReadAheadMode,
    /// Where a page touched for the first time comes from: `zero-fill`
    /// (anonymous memory: a minor fault) or `swap` (the page is on the
    /// swap device already: a major fault, as in a trace-driven model where
    /// every page starts on storage).
    #[serde(default)]
    pub first_touch: FirstTouch,
    /// Handler cost of a minor and of a major fault (software only; the
    /// device's time is added to a major fault). 0 by default: the banded
    /// model of "Issues in File Caching and Virtual Memory Paging with Fast SCM Storage" charges none.
    #[serde(default)]
    pub fault_minor_ns: Nanos,
    #[serde(default)]
    pub fault_major_ns: Nanos,
    /// Dirty pages written to the swap device on eviction are on the
    /// faulting reference's critical path (synchronous reclaim).
    #[serde(default = "yes")]
    pub sync_swap_out: bool,
    /// Processes that run concurrently on hardware threads and block on
    /// major faults (vm/procs.rs); without it a process's time is the sum
    /// of its references' times.
    pub cpu: Option<CpuConfig>,
    /// Free-frame watermarks, kswapd and direct reclaim (vm/pressure.rs);
    /// without it a fault into full memory evicts one victim itself.
    pub pressure: Option<super::pressure::PressureConfig>,
    /// Memory that borrows the storage device's free capacity
    /// (vm/memorage.rs); implies `[vm.pressure]` (its defaults when absent).
    pub memorage: Option<super::memorage::MemorageConfig>,
    /// Huge pages beside `page_size` (transparent huge pages, e.g. 2 MiB
    /// over 4 KiB): an aligned region of this size whose base pages are
    /// all resident is collapsed into one huge page (khugepaged's rule,
    /// vm/paging.rs). None: one page size.
    pub huge_page: Option<Size>,
    /// A TLB of its own for huge pages' translations; without it they
    /// share `tlb`.
    pub tlb_huge: Option<TlbConfig>,
    /// `[[vm.node]]`: main memory as nodes, fastest first (multilevel main
    /// memory, vm/tiered_config.rs). Empty: the one `[[tier]]` is memory.
    /// Left out of a written config when empty, as are the next two, so
    /// configs without them hash and print as before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node: Vec<super::tiered_config::NodeConfig>,
    /// `[vm.placement]`: the node of a page entering memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<super::tiered_config::PlacementConfig>,
    /// `[vm.migration]`: the policy that moves pages between nodes, and
    /// the costs of its events (vm/migrate/).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<super::migrate::MigrationConfig>,
}

/// Most base pages one huge page may hold (a 1 GiB page of 512 B pages).
pub const MAX_HUGE_RATIO: u64 = 1 << 21;

/// `[vm.cpu]`: the hardware threads the processes of a `[vm]` run share.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    pub cores: u32,
    #[serde(default = "one")]
    pub threads_per_core: u32,
    /// Speed of a hardware thread, as a fraction of its speed alone on the
    /// core, while its sibling thread on the same core is running (not
    /// blocked, not finished). 1.0 (the default) leaves the sharing of a
    /// core out; no measured value is built in: state the one you use.
    #[serde(default = "full")]
    pub smt_speed: f64,
}

fn full() -> f64 {
    1.0
}

impl CpuConfig {
    pub fn threads(&self) -> u32 {
        self.cores.saturating_mul(self.threads_per_core)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.cores == 0 {
            return Err(ConfigError::at(
                "vm.cpu.cores",
                "must be at least 1 (zero hardware threads run nothing)",
            ));
        }
        if self.threads_per_core == 0 {
            return Err(ConfigError::at(
                "vm.cpu.threads_per_core",
                "must be at least 1 (zero hardware threads run nothing)",
            ));
        }
        if !(self.smt_speed > 0.0 && self.smt_speed <= 1.0) {
            return Err(ConfigError::at(
                "vm.cpu.smt_speed",
                format!(
                    "{} is out of range; a fraction above 0 and at most 1",
                    self.smt_speed
                ),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FirstTouch {
    #[default]
    ZeroFill,
    Swap,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TlbConfig {
    /// Translations held; need not be a power of two.
    pub entries: u32,
    /// Entries per set (LRU within a set); `entries` = fully associative.
    pub ways: Option<u32>,
    /// Time of a lookup (the t_epsilon of T_addr).
    #[serde(default)]
    pub latency_ns: Nanos,
}

/// 64 entries, fully associative: the TLB size at which the hit ratio of
/// "Issues in File Caching and Virtual Memory Paging with Fast SCM Storage" (Figure 10) has flattened.
impl Default for TlbConfig {
    fn default() -> Self {
        TlbConfig {
            entries: 64,
            ways: None,
            latency_ns: Nanos(0.0),
        }
    }
}

impl TlbConfig {
    pub fn ways(&self) -> u32 {
        self.ways.unwrap_or(self.entries)
    }
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WalkConfig {
    /// Memory references per walk; by default x86-64's radix table over a
    /// 48-bit address space: ceil((48 - log2(page)) / 9) levels (4 at
    /// 4 KiB, 3 at 2 MiB, 2 at 1 GiB, 5 at 512 B).
    pub levels: Option<u32>,
    /// A page-walk cache of the upper levels' entries: a walk whose upper
    /// levels hit it references memory for the leaf only.
    pub cache: Option<WalkCacheConfig>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WalkCacheConfig {
    pub entries: u32,
    #[serde(default)]
    pub latency_ns: Nanos,
}

fn page_4k() -> Size {
    Size::Absolute(4096)
}
fn clock() -> PolicySpec {
    PolicySpec::named("clock").expect("clock is registered")
}
fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}

/// Virtual-address bits the default walk covers (x86-64, 4-level paging).
pub const VA_BITS: u32 = 48;
/// Index bits per page-table level (512 eight-byte entries per 4 KiB table).
pub const BITS_PER_LEVEL: u32 = 9;

impl VmConfig {
    /// The table that turns memory pressure on (`vm.memorage` implies it),
    /// or None.
    pub fn pressure_key(&self) -> Option<&'static str> {
        if self.memorage.is_some() {
            Some("vm.memorage")
        } else if self.pressure.is_some() {
            Some("vm.pressure")
        } else {
            None
        }
    }

    /// The page size in bytes (checked by `validate`).
    pub fn page_bytes(&self) -> u64 {
        match self.page_size {
            Size::Absolute(n) => n,
            Size::Percent(_) => 4096,
        }
    }

    /// The huge page size in bytes, if huge pages are on (checked by
    /// `validate`).
    pub fn huge_bytes(&self) -> Option<u64> {
        match self.huge_page {
            Some(Size::Absolute(n)) => Some(n),
            _ => None,
        }
    }

    /// Memory references of one walk.
    pub fn walk_levels(&self) -> u32 {
        self.walk.levels.unwrap_or_else(|| {
            let shift = self.page_bytes().trailing_zeros();
            (VA_BITS.saturating_sub(shift))
                .div_ceil(BITS_PER_LEVEL)
                .max(1)
        })
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self.page_size {
            Size::Absolute(n) if n.is_power_of_two() && (MIN_PAGE..=MAX_PAGE).contains(&n) => {}
            other => {
                return Err(ConfigError::at(
                    "vm.page_size",
                    format!("{other} is out of range; a power of two from 512 B to 1 GiB"),
                ))
            }
        }
        super::tiered_config::validate(self)?;
        check_tlb("vm.tlb", &self.tlb)?;
        if let Some(t) = &self.tlb2 {
            check_tlb("vm.tlb2", t)?;
        }
        if let Some(l) = self.walk.levels {
            if !(1..=6).contains(&l) {
                return Err(ConfigError::at(
                    "vm.walk.levels",
                    format!("{l} is out of range; 1 to 6 memory references per walk"),
                ));
            }
        }
        if let Some(c) = &self.walk.cache {
            if c.entries == 0 {
                return Err(ConfigError::at(
                    "vm.walk.cache.entries",
                    "must be at least 1 (leave vm.walk.cache out for none)",
                ));
            }
            check_entries("vm.walk.cache.entries", c.entries)?;
            non_negative("vm.walk.cache.latency_ns", c.latency_ns)?;
        }
        if !(1..=MAX_READ_AHEAD).contains(&self.read_ahead) {
            return Err(ConfigError::at(
                "vm.read_ahead",
                format!(
                    "{} is out of range; 1 (off) to {MAX_READ_AHEAD} pages per major fault",
                    self.read_ahead
                ),
            ));
        }
        if self.read_ahead_mode == ReadAheadMode::Adaptive && !self.read_ahead.is_power_of_two() {
            return Err(ConfigError::at(
                "vm.read_ahead",
                format!(
                    "{} is not a power of two; with vm.read_ahead_mode = \"adaptive\" it is the \
                     largest window, a power of two (Linux: 2^page_cluster)",
                    self.read_ahead
                ),
            ));
        }
        non_negative("vm.fault_minor_ns", self.fault_minor_ns)?;
        non_negative("vm.fault_major_ns", self.fault_major_ns)?;
        if let Some(c) = &self.cpu {
            c.validate()?;
        }
        if let Some(p) = &self.pressure {
            p.validate()?;
        }
        if let Some(m) = &self.memorage {
            m.validate()?;
        }
        if let Some(key) = self.pressure_key() {
            if self.cpu.is_none() {
                return Err(ConfigError::at(
                    key,
                    "needs [vm.cpu]: kswapd is a thread that runs beside the processes, \
                     which only a timed run has; add [vm.cpu] with cores (and threads_per_core)",
                ));
            }
            if !matches!(
                self.policy.name(),
                "clock" | "lru" | "fifo" | "sieve" | "lfu" | "lru-k" | "random"
            ) {
                return Err(ConfigError::at(
                    "vm.policy",
                    format!(
                        "{} sizes its queues by the capacity, which changes under {key}; \
                         use clock, lru, fifo, sieve, lfu, lru-k or random",
                        self.policy.name()
                    ),
                ));
            }
        }
        if let Some(h) = self.huge_page {
            let page = self.page_bytes();
            match h {
                Size::Absolute(n)
                    if n.is_power_of_two()
                        && n > page
                        && n <= MAX_PAGE
                        && n / page <= MAX_HUGE_RATIO => {}
                other => {
                    return Err(ConfigError::at(
                        "vm.huge_page",
                        format!(
                            "{other} is out of range; a power of two larger than vm.page_size \
                             ({page} B), at most 1 GiB"
                        ),
                    ))
                }
            }
        }
        if let (Some(_), Some(key)) = (self.huge_page, self.pressure_key()) {
            // Under pressure the pager counts frames in pages; with huge
            // pages the tier counts bytes. Until the two agree, refuse.
            return Err(ConfigError::at(
                "vm.huge_page",
                format!(
                    "huge pages are not modelled together with [{key}] yet; remove one of the two"
                ),
            ));
        }
        if let Some(t) = &self.tlb_huge {
            if self.huge_page.is_none() {
                return Err(ConfigError::at(
                    "vm.tlb_huge",
                    "a TLB for huge pages needs vm.huge_page (e.g. \"2MiB\")",
                ));
            }
            check_tlb("vm.tlb_huge", t)?;
        }
        if let PolicySpec::Belady(_) = self.policy {
            return Err(ConfigError::at(
                "vm.policy",
                "belady needs next-access times, which a memory trace does not carry",
            ));
        }
        Ok(())
    }
}

fn non_negative(path: &str, n: Nanos) -> Result<(), ConfigError> {
    if n.0.is_finite() && n.0 >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::at(
            path,
            format!("{} ns is out of range; must be zero or more", n.0),
        ))
    }
}

/// The most entries a TLB or page-walk cache may have: each holds a tag
/// and its set's links from the start (real TLBs hold a few thousand).
pub const MAX_TLB_ENTRIES: u32 = 1 << 20;

fn check_tlb(path: &str, t: &TlbConfig) -> Result<(), ConfigError> {
    if t.entries == 0 {
        return Err(ConfigError::at(
            format!("{path}.entries"),
            "must be at least 1",
        ));
    }
    check_entries(&format!("{path}.entries"), t.entries)?;
    let ways = t.ways();
    if ways == 0 || ways > t.entries {
        return Err(ConfigError::at(
            format!("{path}.ways"),
            format!(
                "{ways} is out of range; 1 to entries ({}) ways per set",
                t.entries
            ),
        ));
    }
    if !t.entries.is_multiple_of(ways) {
        return Err(ConfigError::at(
            format!("{path}.ways"),
            format!(
                "{ways} does not divide entries ({}): every set has the same number of ways",
                t.entries
            ),
        ));
    }
    non_negative(&format!("{path}.latency_ns"), t.latency_ns)
}

fn check_entries(path: &str, n: u32) -> Result<(), ConfigError> {
    if n > MAX_TLB_ENTRIES {
        return Err(ConfigError::at(
            path,
            format!("{n} is out of range; at most {MAX_TLB_ENTRIES} entries"),
        ));
    }
    Ok(())
}
