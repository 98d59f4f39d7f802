//! The run configuration: one serde schema for TOML files, the CLI and the
//! Python API (which hands the same structure over as JSON). Unknown keys are
//! rejected; every error names the key path and what is allowed.

pub mod checks;
pub mod memory;

use crate::admission::AdmissionSpec;
use crate::hierarchy::Fill;
use crate::policy::PolicySpec;
use crate::tech::{Catalog, TechOverride};
use crate::units::{Nanos, Size};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[workload]` and what it becomes: in `source` (with the registries of
/// generators and trace formats).
use crate::source::WorkloadConfig;
use crate::spec::ConfigError;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// What to run. A trace given on the command line replaces it.
    pub workload: Option<WorkloadConfig>,
    #[serde(default)]
    pub hierarchy: HierarchyConfig,
    /// Tiers, fastest first.
    #[serde(rename = "tier", default)]
    pub tiers: Vec<TierConfig>,
    #[serde(default)]
    pub backing: BackingConfig,
    /// Technologies added to or overriding the built-in catalog.
    #[serde(default)]
    pub techs: BTreeMap<String, TechOverride>,
    #[serde(default)]
    pub run: RunConfig,
    /// Virtual memory: translation and paging of a memory trace (vm/).
    #[serde(default)]
    pub vm: Option<crate::vm::config::VmConfig>,
    /// How requests arrive (time/): absent, serial.
    pub load: Option<crate::time::config::LoadConfig>,
    /// The CPU station and network link (time/).
    pub server: Option<crate::time::config::ServerConfig>,
    /// Software-stack costs (time/stack.rs).
    pub stack: Option<crate::time::stack::StackConfig>,
    /// One cost basis: every tier priced in one year (device/price.rs).
    pub cost: Option<crate::device::price::CostConfig>,
}

/// `[hierarchy] fill`: the cache layer's rule, or S4's lazy flash cache,
/// which fills as inclusive and writes into lower tiers through their
/// write-back buffers (a time-layer matter).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FillRule {
    Inclusive,
    #[default]
    Exclusive,
    Lazy,
}

impl FillRule {
    /// What the cache layer does.
    pub fn cache(self) -> Fill {
        match self {
            FillRule::Inclusive | FillRule::Lazy => Fill::Inclusive,
            FillRule::Exclusive => Fill::Exclusive,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    #[default]
    WriteBack,
    WriteThrough,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HierarchyConfig {
    #[serde(default)]
    pub fill: FillRule,
    /// Default write policy of every tier.
    #[serde(default)]
    pub write: WritePolicy,
    /// Default flush period of write-back tiers, in simulated time (S1).
    pub flush_interval: Option<Nanos>,
    /// Default age at which a periodic flush writes dirty data back
    /// (Linux 2.4's kupdate; docs/hierarchy.md). None: all dirty data.
    pub flush_age: Option<Nanos>,
    /// Default dirty share past which the oldest dirty data is written
    /// back (Linux 2.4's bdflush).
    pub dirty_threshold: Option<f64>,
    /// Default memory `dirty_threshold` is a share of (None: each tier's
    /// capacity).
    pub dirty_memory: Option<Size>,
    /// Default entries per write-back batch past the threshold (None: 1,
    /// exactly down to it; Linux 2.4's bdflush: 32).
    pub dirty_batch: Option<u64>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    pub name: Option<String>,
    pub tech: String,
    pub capacity: Size,
    #[serde(default)]
    pub policy: PolicySpec,
    /// Whether a missed object may enter this tier (default: always).
    #[serde(default)]
    pub admission: AdmissionSpec,
    /// Latencies multiplied, bandwidth divided by this factor (S1's file memory).
    #[serde(default = "one")]
    pub slowdown: f64,
    /// Software time added to every access of this tier.
    #[serde(default)]
    pub overhead: Nanos,
    pub write: Option<WritePolicy>,
    pub flush_interval: Option<Nanos>,
    /// This tier's `flush_age`, `dirty_threshold`, `dirty_memory`,
    /// `dirty_batch` (each `[hierarchy]`'s when left out).
    pub flush_age: Option<Nanos>,
    pub dirty_threshold: Option<f64>,
    pub dirty_memory: Option<Size>,
    pub dirty_batch: Option<u64>,
    /// The device this tier is to the time layer (time/config.rs).
    pub channels: Option<u64>,
    #[serde(default)]
    pub service: crate::time::config::Service,
    #[serde(default)]
    pub reads_first: bool,
    #[serde(default)]
    pub read_while_write: bool,
    pub lazy_writeback: Option<crate::time::config::LazyConfig>,
    /// Memory copies per transfer between main memory and this tier, at
    /// `[stack]`'s copy bandwidth (S1: copy_to_user and a bounce buffer).
    #[serde(default)]
    pub copies: u32,
    /// The tier's memory is mapped uncached: its copies run at
    /// `stack.uncached_copy_mb_s`.
    #[serde(default)]
    pub uncached: bool,
    /// What the medium does when idle: idle power, or S4's oracle
    /// power-down (device/energy.rs).
    #[serde(default)]
    pub power_down: crate::device::PowerDown,
    /// A flash translation layer under a tier on raw flash
    /// (device/ftl_spec.rs; docs/device.md#flash-translation-layer).
    pub ftl: Option<crate::device::ftl_spec::FtlConfig>,
}

impl TierConfig {
    pub fn device(&self) -> crate::time::config::DeviceKeys {
        crate::time::config::DeviceKeys {
            channels: self.channels,
            service: self.service,
            reads_first: self.reads_first,
            read_while_write: self.read_while_write,
            lazy_writeback: self.lazy_writeback.as_ref().map(|l| match l.size {
                Size::Absolute(b) => b,
                Size::Percent(_) => 0,
            }),
        }
    }
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BackingConfig {
    #[serde(default = "hdd")]
    pub tech: String,
    #[serde(default)]
    pub overhead: Nanos,
    pub channels: Option<u64>,
    #[serde(default)]
    pub service: crate::time::config::Service,
    #[serde(default)]
    pub reads_first: bool,
    #[serde(default)]
    pub read_while_write: bool,
    /// Refused with a message (a buffer belongs to a tier).
    pub lazy_writeback: Option<crate::time::config::LazyConfig>,
    /// The store's size in bytes: its background power and its FTL's
    /// logical space need it.
    pub capacity: Option<Size>,
    /// A flash translation layer under a backing store on raw flash
    /// (device/ftl_space.rs `BackingFtl`; docs/device.md#flash-translation-layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ftl: Option<crate::device::ftl_spec::FtlConfig>,
    #[serde(default)]
    pub power_down: crate::device::PowerDown,
    /// A disk that positions (time/disk.rs): its service time from the
    /// head's position instead of the catalog's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<crate::time::disk::DiskConfig>,
}

impl BackingConfig {
    pub fn device(&self) -> crate::time::config::DeviceKeys {
        crate::time::config::DeviceKeys {
            channels: self.channels,
            service: self.service,
            reads_first: self.reads_first,
            read_while_write: self.read_while_write,
            lazy_writeback: None,
        }
    }
}

fn hdd() -> String {
    "HDD".into()
}

impl Default for BackingConfig {
    fn default() -> Self {
        BackingConfig {
            tech: hdd(),
            overhead: Nanos(0.0),
            channels: None,
            service: Default::default(),
            reads_first: false,
            read_while_write: false,
            lazy_writeback: None,
            capacity: None,
            ftl: None,
            power_down: Default::default(),
            disk: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Requests per point of the timeline.
    pub interval: u64,
    /// Compute time between requests (simulated), for throughput.
    pub compute: Nanos,
    /// Stop after this many requests (all when absent).
    pub max_requests: Option<u64>,
    /// Requests, share, simulated time or passes after which every
    /// output starts counting (the cache keeps its state).
    pub warmup: Option<crate::time::config::Warmup>,
    /// Times the workload is run in a row, the cache kept between runs.
    pub passes: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            interval: 100_000,
            compute: Nanos(0.0),
            max_requests: None,
            warmup: None,
            passes: 1,
        }
    }
}

/// `power_down = "oracle"` needs the medium's power-down power.
fn power_down_check(
    cat: &crate::tech::Catalog,
    tech: &str,
    pd: crate::device::PowerDown,
    at: &str,
) -> Result<(), ConfigError> {
    let Ok(t) = cat.get(tech) else {
        return Ok(()); // reported at the tech key
    };
    if pd == crate::device::PowerDown::Oracle && t.powerdown_mw_per_gbit.is_none() {
        return Err(ConfigError::at(
            at,
            format!(
                "\"oracle\" spends idle time in power-down, and {} has no powerdown_mw_per_gbit; \
                 give one (with its source) in [techs.{}], or use \"none\"",
                t.name, t.name
            ),
        ));
    }
    Ok(())
}

/// Finite and greater than zero (NaN is neither).
/// The write-back keys of a tier (`at` = "tier[i].") or of `[hierarchy]`
/// (`at` = "hierarchy."): an age needs a flush period to be checked at, a
/// threshold is a share, its memory a non-zero size, its batch 1 or more.
fn aged_check(
    age: Option<Nanos>,
    every: Option<Nanos>,
    threshold: Option<f64>,
    memory: Option<Size>,
    batch: Option<u64>,
    at: &str,
) -> Result<(), ConfigError> {
    if let Some(a) = age {
        if !non_negative(a.0) {
            return Err(ConfigError::at(
                format!("{at}flush_age"),
                "must be a duration of zero or more",
            ));
        }
        if every.is_none() {
            return Err(ConfigError::at(
                format!("{at}flush_age"),
                "needs a flush_interval: the period at which the ages are checked (Linux 2.4's kupdate: 5s)",
            ));
        }
    }
    if let Some(t) = threshold {
        if !(t > 0.0 && t <= 1.0) {
            return Err(ConfigError::at(
                format!("{at}dirty_threshold"),
                format!("{t} is out of range; must be a share above 0 and at most 1 (Linux 2.4's bdflush: 0.3)"),
            ));
        }
    }
    if batch == Some(0) {
        return Err(ConfigError::at(
            format!("{at}dirty_batch"),
            "must be at least 1 (Linux 2.4's bdflush: 32)",
        ));
    }
    if memory == Some(Size::Absolute(0)) {
        return Err(ConfigError::at(
            format!("{at}dirty_memory"),
            "must be greater than zero",
        ));
    }
    Ok(())
}

fn positive(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

/// Finite and zero or more.
fn non_negative(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

fn from_de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Config, ConfigError> {
    let cfg: Config = serde_path_to_error::deserialize(d).map_err(de_error)?;
    cfg.validate()?;
    Ok(cfg)
}

/// A deserializer's error as a [`ConfigError`] at its key path.
fn de_error<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> ConfigError {
    let path = e.path().to_string();
    let path = if path == "." {
        "config".to_string()
    } else {
        path
    };
    let mut msg = e.into_inner().to_string();
    // The toml crate appends its own "in `a.b`" locator and serde_json a
    // position in the JSON the Python layer built: ours is the key path.
    if let Some(i) = msg.find("\nin `") {
        msg.truncate(i);
    }
    if let Some(i) = msg.rfind(" at line ") {
        if msg[i + 9..].split_once(" column ").is_some_and(|(l, c)| {
            l.bytes().all(|b| b.is_ascii_digit()) && c.bytes().all(|b| b.is_ascii_digit())
        }) {
            msg.truncate(i);
        }
    }
    // `[workload]` is read by hand (source::workload) and reports its
    // errors as `key: message`; the key goes into the path.
    // So is `[vm.migration]` (vm/migrate/mod.rs).
    if path == "workload" || path == "vm.migration" {
        if let Some((key, rest)) = msg.split_once(": ") {
            let is_key = key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.[]".contains(&b));
            if is_key && !key.is_empty() {
                return ConfigError::at(format!("{path}.{key}"), rest.trim_end());
            }
        }
    }
    ConfigError::at(path, msg.trim_end())
}

impl Config {
    pub fn from_toml_str(s: &str) -> Result<Self, ConfigError> {
        // Syntax first (its error carries line and column), then the schema
        // from the parsed table, whose errors carry the key path.
        let v: toml::Table = s.parse().map_err(|e: toml::de::Error| {
            // One line: the place and the parser's message, without the
            // source excerpt and caret lines the toml crate's Display adds.
            let place = e.span().map_or(String::new(), |r| {
                let before = &s.as_bytes()[..r.start.min(s.len())];
                let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                let col = before.len()
                    - before
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                format!("line {line}, column {}: ", col + 1)
            });
            let msg = e.message().trim_end().replace('\n', "; ");
            ConfigError::at("config", format!("{place}{msg}"))
        })?;
        from_de(toml::Value::Table(v))
    }

    pub fn from_json_str(s: &str) -> Result<Self, ConfigError> {
        let mut d = serde_json::Deserializer::from_str(s);
        from_de(&mut d)
    }

    /// The schema's verdict alone (unknown keys, wrong types), without
    /// `validate`'s ranges and references: a sweep checks every point with
    /// it before running any, since such an error fails every point alike.
    pub fn check_json_schema(s: &str) -> Result<(), ConfigError> {
        let mut d = serde_json::Deserializer::from_str(s);
        serde_path_to_error::deserialize::<_, Config>(&mut d)
            .map(drop)
            .map_err(de_error)
    }

    /// The catalog with this config's overrides applied.
    pub fn catalog(&self) -> Result<Catalog, ConfigError> {
        let mut c = Catalog::builtin();
        for (name, o) in &self.techs {
            c.apply(name, o)
                .map_err(|(f, e)| ConfigError::at(format!("techs.{name}.{f}"), e.to_string()))?;
        }
        Ok(c)
    }

    /// Checks what serde cannot: ranges, required combinations, references.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let cat = self.catalog()?;
        // With [[vm.node]] the nodes are the memory (vm/tiered_config.rs).
        let nodes = self
            .vm
            .as_ref()
            .is_some_and(crate::vm::tiered_config::configured);
        if self.tiers.is_empty() && !nodes {
            return Err(ConfigError::at(
                "tier",
                "at least one [[tier]] is required (tiers are listed fastest first)",
            ));
        }
        if self.tiers.len() > crate::tier::MAX_TIERS {
            return Err(ConfigError::at(
                "tier",
                format!(
                    "{} tiers given; at most {} are allowed",
                    self.tiers.len(),
                    crate::tier::MAX_TIERS
                ),
            ));
        }
        let mut names = std::collections::HashSet::new();
        for (i, t) in self.tiers.iter().enumerate() {
            let p = |f: &str| format!("tier[{i}].{f}");
            cat.get(&t.tech)
                .map_err(|e| ConfigError::at(p("tech"), e.to_string()))?;
            if t.capacity == Size::Absolute(0) {
                return Err(ConfigError::at(p("capacity"), "must be greater than zero"));
            }
            if !positive(t.slowdown) {
                return Err(ConfigError::at(p("slowdown"), format!("{} is out of range; must be a positive factor (1 = the medium's own speed)", t.slowdown)));
            }
            if !non_negative(t.overhead.0) {
                return Err(ConfigError::at(
                    p("overhead"),
                    format!("{} ns is out of range; must be zero or more", t.overhead.0),
                ));
            }
            if let Some(f) = t.flush_interval {
                if !positive(f.0) {
                    return Err(ConfigError::at(
                        p("flush_interval"),
                        "must be a positive duration",
                    ));
                }
            }
            aged_check(
                t.flush_age,
                t.flush_interval.or(self.hierarchy.flush_interval),
                t.dirty_threshold,
                t.dirty_memory,
                t.dirty_batch,
                &p(""),
            )?;
            power_down_check(&cat, &t.tech, t.power_down, &p("power_down"))?;
            if !names.insert(self.tier_name(i)) {
                return Err(ConfigError::at(
                    p("name"),
                    format!(
                        "{:?} is used by two tiers; names must be unique",
                        self.tier_name(i)
                    ),
                ));
            }
        }
        cat.get(&self.backing.tech)
            .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
        if !non_negative(self.backing.overhead.0) {
            return Err(ConfigError::at("backing.overhead", "must be zero or more"));
        }
        match self.backing.capacity {
            Some(Size::Percent(_)) => {
                return Err(ConfigError::at(
                    "backing.capacity",
                    "must be a size in bytes such as \"160GB\", not a share",
                ))
            }
            Some(Size::Absolute(0)) => {
                return Err(ConfigError::at(
                    "backing.capacity",
                    "must be greater than zero",
                ))
            }
            _ => {}
        }
        power_down_check(
            &cat,
            &self.backing.tech,
            self.backing.power_down,
            "backing.power_down",
        )?;
        if let Some(f) = self.hierarchy.flush_interval {
            if !positive(f.0) {
                return Err(ConfigError::at(
                    "hierarchy.flush_interval",
                    "must be a positive duration",
                ));
            }
        }
        let h = &self.hierarchy;
        let every =
            h.flush_interval.is_some() || self.tiers.iter().any(|t| t.flush_interval.is_some());
        aged_check(
            h.flush_age,
            // Checked per tier above; here only that some tier flushes.
            h.flush_interval.or(every.then_some(Nanos(1.0))),
            h.dirty_threshold,
            h.dirty_memory,
            h.dirty_batch,
            "hierarchy.",
        )?;
        if self.run.max_requests == Some(0) {
            return Err(ConfigError::at(
                "run.max_requests",
                "must be at least 1 (leave it out to run the whole workload)",
            ));
        }
        if self.run.interval == 0 {
            return Err(ConfigError::at(
                "run.interval",
                "must be at least 1 request",
            ));
        }
        if !non_negative(self.run.compute.0) {
            return Err(ConfigError::at("run.compute", "must be zero or more"));
        }
        if let Some(w) = &self.workload {
            w.source()?;
        }
        for (i, t) in self.tiers.iter().enumerate() {
            if let Some(l) = &t.lazy_writeback {
                let p = format!("tier[{i}].lazy_writeback.size");
                let unit = cat.get(&t.tech).map(|x| x.access_unit.max(1)).unwrap_or(1) as u64;
                match l.size {
                    Size::Percent(_) => {
                        return Err(ConfigError::at(
                            p,
                            "must be an absolute size such as \"4MiB\"",
                        ))
                    }
                    Size::Absolute(b) if b < unit => {
                        return Err(ConfigError::at(
                            p,
                            format!("{b} B is smaller than one page of {} ({unit} B)", t.tech),
                        ))
                    }
                    _ => {}
                }
            }
        }
        checks::time(self)?;
        if let Some(vm) = &self.vm {
            checks::vm(self, vm)?;
        }
        memory::check(self)
    }

    pub fn tier_name(&self, i: usize) -> String {
        self.tiers[i]
            .name
            .clone()
            .unwrap_or_else(|| self.tiers[i].tech.to_lowercase())
    }

    pub fn workload(&self) -> Result<&WorkloadConfig, ConfigError> {
        self.workload.as_ref().ok_or_else(|| {
            ConfigError::at("workload", "missing: add a [workload] table or give a trace file (tierlab run CONFIG --trace PATH)")
        })
    }
}

/// Only the `[workload]` of a config; other tables are not looked at
/// (trace tools need no tiers).
pub fn workload_only_from_json(s: &str) -> Result<WorkloadConfig, ConfigError> {
    #[derive(Deserialize)]
    struct Only {
        workload: Option<WorkloadConfig>,
    }
    let mut d = serde_json::Deserializer::from_str(s);
    let only: Only = serde_path_to_error::deserialize(&mut d).map_err(de_error)?;
    let w = only.workload.ok_or_else(|| {
        ConfigError::at(
            "workload",
            "missing: a [workload] table or a trace file is required",
        )
    })?;
    w.source()?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
[workload]
type = "zipf"
alpha = 1.0
objects = 1000
requests = 10000
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "1MiB"
policy = "lru"
[[tier]]
tech = "NAND-SLC"
capacity = "10%"
policy = { type = "clock", bits = 2 }
"#;

    fn err(toml: &str) -> String {
        Config::from_toml_str(toml).unwrap_err().to_string()
    }

    #[test]
    fn parses_the_example() {
        let c = Config::from_toml_str(OK).unwrap();
        assert_eq!(c.tiers.len(), 2);
        assert_eq!(c.tier_name(1), "nand-slc");
        assert_eq!(c.tiers[1].policy.name(), "clock");
    }

    #[test]
    fn names_in_any_case() {
        let toml = OK
            .replace("tech = \"DRAM-DDR3\"", "tech = \"dram-ddr3\"")
            .replace("policy = \"lru\"", "policy = \"LRU\"")
            .replace("type = \"clock\"", "type = \"Clock\"");
        let c = Config::from_toml_str(&toml).unwrap();
        assert_eq!(c.tiers[0].policy.name(), "lru");
        assert_eq!(c.tiers[1].policy.name(), "clock");
        assert_eq!(
            c.catalog().unwrap().get(&c.tiers[0].tech).unwrap().name,
            "DRAM-DDR3"
        );
    }

    #[test]
    fn errors_name_the_key_path() {
        let e = err(&OK.replace("policy = \"lru\"", "policy = \"lruu\""));
        assert!(
            e.starts_with(
                "tier[0].policy: unknown policy \"lruu\"; expected one of lru, fifo, clock"
            ),
            "{e}"
        );
        let e = err(&OK.replace("bits = 2", "bits = 9"));
        assert!(e.contains("tier[1].policy: bits: 9 is out of range"), "{e}");
        let e = err(&OK.replace("bits = 2", "bitz = 2"));
        assert!(e.contains("tier[1].policy: unknown field `bitz`"), "{e}");
        let e = err(&OK.replace("capacity = \"1MiB\"", "capacity = 0"));
        assert_eq!(e, "tier[0].capacity: must be greater than zero");
        let e = err(&OK.replace("capacity = \"1MiB\"", "capacity = -5"));
        assert!(e.starts_with("tier[0].capacity: -5 is negative"), "{e}");
        let e = err(&OK.replace("tech = \"NAND-SLC\"", "tech = \"NAND-PLC\""));
        assert!(
            e.starts_with("tier[1].tech: unknown technology \"NAND-PLC\"; known: "),
            "{e}"
        );
        let e = err(&OK.replace("alpha = 1.0", "alpha = 1.0\ncolour = 3"));
        assert!(
            e.starts_with("workload.colour: unknown field `colour`, expected one of"),
            "{e}"
        );
        let e = err(&OK.replace("type = \"zipf\"", "type = \"zipfian\""));
        assert!(
            e.starts_with("workload.type: unknown workload type \"zipfian\"; expected one of zipf, uniform, scan, loop, trace, postmark"),
            "{e}"
        );
        let e = err(&format!(
            "{OK}\n[techs.SLOW]\nbase = \"HDD\"\nread_ns = -3\n"
        ));
        assert!(
            e.starts_with("techs.SLOW.read_ns: read_ns = -3 is out of range"),
            "{e}"
        );
        let e = err(&OK.replace(
            "[[tier]]\nname = \"dram\"",
            "[[tier]]\nname = \"dram\"\nslowdown = 0",
        ));
        assert!(e.starts_with("tier[0].slowdown: 0 is out of range"), "{e}");
        let e = err(&OK.replace("type = \"zipf\"", "type = \"trace\""));
        assert_eq!(e, "workload.alpha: not used by type = \"trace\"");
    }

    fn workload_err(w: &str) -> String {
        err(&format!(
            "[workload]\n{w}\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 1\n"
        ))
    }

    #[test]
    fn benchmark_workloads_check_every_key() {
        let ok = "[workload]\ntype = \"postmark\"\npreset = \"s2\"\nscale = 0.01\n[workload.postmark]\nread_bias = 0.9\n[[tier]]\ntech = \"DRAM-DDR3\"\ncapacity = 1\n";
        let c = Config::from_toml_str(ok).unwrap();
        match c.workload().unwrap().source().unwrap() {
            crate::source::Source::Workload(crate::source::generators::Spec::Postmark(p)) => {
                assert_eq!((p.files, p.transactions, p.read_bias), (100, 500, 0.9));
            }
            other => panic!("{other:?}"),
        }
        for (w, want) in [
            (
                "type = \"postmark\"\n[workload.postmark]\nfilez = 3",
                "workload.postmark.filez: unknown field `filez`, expected one of `files`",
            ),
            (
                "type = \"postmark\"\n[workload.postmark]\ncreate_bias = -1",
                "workload.postmark.create_bias: -1 is out of range; allowed 0.0 to 1.0",
            ),
            (
                "type = \"bonnie\"\npreset = \"s7\"",
                "workload.preset: unknown preset \"s7\"; expected one of default, s1",
            ),
            (
                "type = \"web\"\nscale = 0",
                "workload.scale: 0 is out of range",
            ),
            (
                "type = \"proxy\"\npage_size = 3000",
                "workload.page_size: 3000 is out of range; a power of two",
            ),
            (
                "type = \"specweb\"\n[workload.web]\nalpha = 1.0",
                "workload.web: not used by type = \"specweb\"",
            ),
            (
                "type = \"zipf\"\nobjects = 5\nrequests = 5\npreset = \"s1\"",
                "workload.preset: not used by type = \"zipf\"",
            ),
            (
                "type = \"multiprogram\"\nrequests = 5",
                "workload.requests: not used by type = \"multiprogram\"",
            ),
            (
                "type = \"multiprogram\"\n[[workload.multiprogram.program]]\nrss = \"1MiB\"\nrandom = 1\nwrite_ratio = 2",
                "workload.multiprogram.program[0].write_ratio: 2 is out of range",
            ),
            (
                "type = \"bonnie\"\n[workload.bonnie]\nchunk = \"2GiB\"\nfile_size = \"1GiB\"",
                "workload.bonnie.chunk: 2147483648 B is larger than file_size",
            ),
        ] {
            let e = workload_err(w);
            assert!(e.starts_with(want), "{w}:\n{e}");
        }
    }
}
