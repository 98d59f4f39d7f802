//! The software stack's costs: the time a request spends in the operating
//! system's code (system calls, page-cache lookups, insertions, the block
//! layer, page faults, memory copies), kept apart from the devices' time.
//!
//! `[stack]` in a config is a [`StackConfig`]: an optional named preset
//! (`data/stacks.toml`, every value citing its source) and keys that
//! override it. [`StackConfig::resolve`] turns it into plain figures,
//! [`StackCosts`]. Everything defaults to zero, so a run without `[stack]`
//! costs what it did before the time model.

use crate::spec::ConfigError;
use crate::units::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `[stack]`: a preset and the keys that override it. Durations are written
/// as numbers of ns or with a unit ("1.5us"); bandwidths in MB/s (10^6 B/s).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    /// A named preset from the built-in list ([`presets`]); the other keys
    /// override its values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// System call and VFS path, once per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syscall: Option<Nanos>,
    /// A page-cache lookup, once per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<Nanos>,
    /// The fixed part of an insertion into a cache tier (allocation and
    /// bookkeeping), once per insertion; the copy is charged at `copy_mb_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert: Option<Nanos>,
    /// The block layer and driver, once per I/O on a block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_io: Option<Nanos>,
    /// The page-fault handler's fast path (the page is in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_minor: Option<Nanos>,
    /// The page-fault handler's slow path (the page is read from storage),
    /// excluding the device's own time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_major: Option<Nanos>,
    /// Memory copy bandwidth, MB/s: insertions, and copies between main
    /// memory and an extended tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_mb_s: Option<f64>,
    /// The same when the extended memory is mapped uncached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncached_copy_mb_s: Option<f64>,
}

/// The resolved costs: ns per event, MB/s per copy. Zero (or `None` for a
/// bandwidth: copies take no time) means no cost.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct StackCosts {
    pub syscall_ns: f64,
    pub lookup_ns: f64,
    pub insert_ns: f64,
    pub block_io_ns: f64,
    pub fault_minor_ns: f64,
    pub fault_major_ns: f64,
    pub copy_mb_s: Option<f64>,
    pub uncached_copy_mb_s: Option<f64>,
}

impl StackCosts {
    /// The time to copy `bytes`, ns: at the uncached bandwidth when
    /// `uncached` and one is given, else at the copy bandwidth (uncached
    /// memory is never faster, so this errs on the fast side); zero when no
    /// bandwidth applies.
    pub fn copy_ns(&self, bytes: u64, uncached: bool) -> f64 {
        let bw = if uncached {
            self.uncached_copy_mb_s.or(self.copy_mb_s)
        } else {
            self.copy_mb_s
        };
        // MB/s = 10^6 B/s = 10^-3 B/ns.
        bw.map_or(0.0, |mb_s| bytes as f64 * 1e3 / mb_s)
    }
}

/// A value as `data/stacks.toml` writes it: the figure and where it comes
/// from.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Sourced<T> {
    value: T,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetEntry {
    name: String,
    description: String,
    syscall: Option<Sourced<Nanos>>,
    lookup: Option<Sourced<Nanos>>,
    insert: Option<Sourced<Nanos>>,
    block_io: Option<Sourced<Nanos>>,
    fault_minor: Option<Sourced<Nanos>>,
    fault_major: Option<Sourced<Nanos>>,
    copy_mb_s: Option<Sourced<f64>>,
    uncached_copy_mb_s: Option<Sourced<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    preset: Vec<PresetEntry>,
}

/// A named set of stack costs for one platform.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    pub name: String,
    pub description: String,
    /// The values it sets, as a config would write them (`preset` unset);
    /// a field the sources do not give stays `None`.
    pub values: StackConfig,
    /// Field name (as in `[stack]`) -> the source of its value.
    pub sources: BTreeMap<String, String>,
}

impl From<PresetEntry> for Preset {
    fn from(e: PresetEntry) -> Self {
        let mut sources = BTreeMap::new();
        fn take<T>(
            sources: &mut BTreeMap<String, String>,
            field: &str,
            v: Option<Sourced<T>>,
        ) -> Option<T> {
            v.map(|s| {
                sources.insert(field.to_string(), s.source);
                s.value
            })
        }
        let values = StackConfig {
            preset: None,
            syscall: take(&mut sources, "syscall", e.syscall),
            lookup: take(&mut sources, "lookup", e.lookup),
            insert: take(&mut sources, "insert", e.insert),
            block_io: take(&mut sources, "block_io", e.block_io),
            fault_minor: take(&mut sources, "fault_minor", e.fault_minor),
            fault_major: take(&mut sources, "fault_major", e.fault_major),
            copy_mb_s: take(&mut sources, "copy_mb_s", e.copy_mb_s),
            uncached_copy_mb_s: take(&mut sources, "uncached_copy_mb_s", e.uncached_copy_mb_s),
        };
        Preset {
            name: e.name,
            description: e.description,
            values,
            sources,
        }
    }
}

/// The built-in presets (`data/stacks.toml`), parsed once.
pub fn presets() -> &'static [Preset] {
    static PRESETS: OnceLock<Vec<Preset>> = OnceLock::new();
    PRESETS.get_or_init(|| {
        let file: PresetFile = toml::from_str(include_str!("../../data/stacks.toml"))
            .expect("the built-in stack presets parse (tested)");
        file.preset.into_iter().map(Preset::from).collect()
    })
}

/// The preset named `name`, in any letter case.
pub fn preset(name: &str) -> Option<&'static Preset> {
    presets().iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// A duration key's value, refused when negative or not finite.
fn duration(key: &str, v: Nanos) -> Result<f64, ConfigError> {
    if v.0.is_finite() && v.0 >= 0.0 {
        Ok(v.0)
    } else {
        Err(ConfigError::at(
            format!("stack.{key}"),
            format!(
                "{} is out of range; must be a duration of zero or more (\"2us\", 150)",
                v.0
            ),
        ))
    }
}

/// A bandwidth key's value, refused unless positive and finite.
fn bandwidth(key: &str, v: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(ConfigError::at(
            format!("stack.{key}"),
            format!(
                "{v} is out of range; must be a bandwidth in MB/s (10^6 B/s) greater than zero"
            ),
        ))
    }
}

impl StackConfig {
    /// The costs this section gives: the preset's values, then the keys
    /// given here on top. Errors name the key (`stack.preset`,
    /// `stack.syscall`, ...) and what is allowed.
    pub fn resolve(&self) -> Result<StackCosts, ConfigError> {
        let mut costs = StackCosts::default();
        if let Some(name) = &self.preset {
            let p = preset(name).ok_or_else(|| {
                let known: Vec<&str> = presets().iter().map(|p| p.name.as_str()).collect();
                ConfigError::at(
                    "stack.preset",
                    format!("unknown preset {name:?}; known: {}", known.join(", ")),
                )
            })?;
            p.values.apply(&mut costs)?;
        }
        self.apply(&mut costs)?;
        Ok(costs)
    }

    /// Writes the keys given here into `costs`.
    fn apply(&self, costs: &mut StackCosts) -> Result<(), ConfigError> {
        let durations = [
            ("syscall", self.syscall, &mut costs.syscall_ns),
            ("lookup", self.lookup, &mut costs.lookup_ns),
            ("insert", self.insert, &mut costs.insert_ns),
            ("block_io", self.block_io, &mut costs.block_io_ns),
            ("fault_minor", self.fault_minor, &mut costs.fault_minor_ns),
            ("fault_major", self.fault_major, &mut costs.fault_major_ns),
        ];
        for (key, v, slot) in durations {
            if let Some(v) = v {
                *slot = duration(key, v)?;
            }
        }
        let bandwidths = [
            ("copy_mb_s", self.copy_mb_s, &mut costs.copy_mb_s),
            (
                "uncached_copy_mb_s",
                self.uncached_copy_mb_s,
                &mut costs.uncached_copy_mb_s,
            ),
        ];
        for (key, v, slot) in bandwidths {
            if let Some(v) = v {
                *slot = Some(bandwidth(key, v)?);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> StackConfig {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn presets_parse_resolve_and_cite_every_value() {
        let all = presets();
        assert!(all.len() >= 2);
        for p in all {
            assert!(p.description.len() > 10, "{} has no description", p.name);
            let costs = StackConfig {
                preset: Some(p.name.clone()),
                ..Default::default()
            }
            .resolve()
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
            // Every value it sets has a source, and every source a value.
            let set = serde_json::to_value(&p.values).unwrap();
            let set: Vec<&String> = set.as_object().unwrap().keys().collect();
            let cited: Vec<&String> = p.sources.keys().collect();
            assert_eq!(set, cited, "{}", p.name);
            assert!(!set.is_empty(), "{} sets nothing", p.name);
            for (field, src) in &p.sources {
                assert!(src.len() > 15, "{}.{field}: source {src:?}", p.name);
            }
            assert_ne!(costs, StackCosts::default(), "{}", p.name);
        }
        // Names are unique without regard to case.
        for (i, p) in all.iter().enumerate() {
            for q in &all[i + 1..] {
                assert!(!p.name.eq_ignore_ascii_case(&q.name), "{} twice", p.name);
            }
        }
    }

    #[test]
    fn linux_3_carries_the_measured_fault_paths() {
        let c = parse(r#"preset = "linux-3""#).resolve().unwrap();
        assert_eq!(c.fault_minor_ns, 21_600.0);
        assert_eq!(c.fault_major_ns, 58_600.0);
        // 4 KiB at the preset's copy bandwidth takes the measured 0.47 us.
        assert!(
            (c.copy_ns(4096, false) - 470.0).abs() < 1.0,
            "{}",
            c.copy_ns(4096, false)
        );
        assert!(preset("LINUX-3").is_some());
        assert!(preset("linux-2.4-p4").is_some());
    }

    #[test]
    fn no_stack_costs_nothing() {
        let c = StackConfig::default().resolve().unwrap();
        assert_eq!(c, StackCosts::default());
        assert_eq!(c.copy_ns(4096, true), 0.0);
        assert_eq!(c.syscall_ns, 0.0);
    }

    #[test]
    fn keys_override_the_preset() {
        let base = parse(r#"preset = "linux-3""#).resolve().unwrap();
        let c = parse(
            r#"
preset = "linux-3"
fault_minor = "1.5us"
syscall = 250
copy_mb_s = 1000
"#,
        )
        .resolve()
        .unwrap();
        assert_eq!(c.fault_minor_ns, 1500.0);
        assert_eq!(c.syscall_ns, 250.0);
        assert_eq!(c.copy_mb_s, Some(1000.0));
        // What was not overridden keeps the preset's value.
        assert_eq!(c.fault_major_ns, base.fault_major_ns);
        // Without a preset only the keys given count.
        let c = parse(r#"block_io = "2us""#).resolve().unwrap();
        assert_eq!(
            c,
            StackCosts {
                block_io_ns: 2000.0,
                ..Default::default()
            }
        );
    }

    #[test]
    fn copy_time_from_bandwidth() {
        let c = StackCosts {
            copy_mb_s: Some(4000.0),
            uncached_copy_mb_s: Some(500.0),
            ..Default::default()
        };
        // 4096 B at 4000 MB/s = 1.024 us; uncached at 500 MB/s = 8.192 us.
        assert!((c.copy_ns(4096, false) - 1024.0).abs() < 1e-9);
        assert!((c.copy_ns(4096, true) - 8192.0).abs() < 1e-9);
        // No uncached figure: the cached one.
        let c = StackCosts {
            copy_mb_s: Some(4000.0),
            ..Default::default()
        };
        assert!((c.copy_ns(4096, true) - 1024.0).abs() < 1e-9);
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse(r#"preset = "windows-95""#).resolve().unwrap_err();
        assert_eq!(e.path, "stack.preset");
        assert!(
            e.msg.contains("windows-95") && e.msg.contains("linux-3"),
            "{}",
            e.msg
        );
        assert!(e.msg.contains("linux-2.4-p4"), "{}", e.msg);

        let e = parse("syscall = -5").resolve().unwrap_err();
        assert_eq!(e.path, "stack.syscall");
        assert!(e.msg.contains("-5"), "{}", e.msg);

        let e = parse(
            r#"preset = "linux-3"
fault_major = "-1us""#,
        )
        .resolve()
        .unwrap_err();
        assert_eq!(e.path, "stack.fault_major");

        let e = parse("copy_mb_s = 0").resolve().unwrap_err();
        assert_eq!(e.path, "stack.copy_mb_s");
        let e = parse("uncached_copy_mb_s = -3.0").resolve().unwrap_err();
        assert_eq!(e.path, "stack.uncached_copy_mb_s");
        let e = parse("lookup = nan").resolve().unwrap_err();
        assert_eq!(e.path, "stack.lookup");
        let e = parse("copy_mb_s = inf").resolve().unwrap_err();
        assert_eq!(e.path, "stack.copy_mb_s");

        // Unknown keys and malformed durations are refused when parsed.
        let e = toml::from_str::<StackConfig>("syscal = 5").unwrap_err();
        assert!(e.to_string().contains("syscal"), "{e}");
        let e = toml::from_str::<StackConfig>(r#"insert = "3 parsecs""#).unwrap_err();
        assert!(e.to_string().contains("unit"), "{e}");
    }
}
