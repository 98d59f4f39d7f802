//! Migration policies of multilevel main memory (docs/tiered-memory.md):
//! one file each, registered once in [`registry!`] below, each citing its
//! source in its header.
//!
//! A policy decides *what* to move; the model decides whether there is
//! room and what a move costs. The `[vm.migration]` table is read here:
//! `type` names the policy, the other keys are its parameters (a serde
//! struct per policy, unknown keys rejected), and `cost` is
//! [`CostConfig`], shared by all.

pub mod hemem;
pub mod linux;
pub mod memtis;
pub mod none;
pub mod oracle_epoch;
pub mod oracle_static;
pub mod tpp;

use crate::spec::Params;
use crate::units::Nanos;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// How a policy is made from its `[vm.migration]` keys.
pub trait MigrationBuild {
    /// The policy's parameters: a serde struct with defaults, unknown keys
    /// rejected.
    type Params: DeserializeOwned + Serialize + Default + Clone + fmt::Debug + PartialEq;
    /// Rejects parameters out of range: Err((key, message)).
    fn check(_: &Self::Params) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// A problem with a `[vm.migration]` key: the key (relative to the table)
/// and what is wrong.
pub type KeyError = (String, String);

/// Registers every migration policy: `Variant => "name", Type;`. The only
/// place a policy is named; the spec enum and the list of names come from
/// here.
macro_rules! registry {
    ($($variant:ident => $name:literal, $ty:ty;)*) => {
        /// A `[vm.migration]` policy: its name and checked parameters.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "type")]
        pub enum MigrationSpec {
            $(#[serde(rename = $name)] $variant(<$ty as MigrationBuild>::Params)),*
        }

        /// The names `vm.migration.type` may take.
        pub const NAMES: &[&str] = &[$($name),*];

        impl MigrationSpec {
            pub fn name(&self) -> &'static str {
                match self { $(MigrationSpec::$variant(_) => $name),* }
            }

            /// The policy `name` with `params` (the table without `type`
            /// and `cost`), every key checked.
            pub fn from_parts(name: &str, params: Params) -> Result<Self, KeyError> {
                match name {
                    $($name => {
                        let p = parse::<<$ty as MigrationBuild>::Params>(name, params)?;
                        <$ty as MigrationBuild>::check(&p).map_err(|(k, m)| (k.to_string(), m))?;
                        Ok(MigrationSpec::$variant(p))
                    })*
                    _ => Err(("type".into(), format!(
                        "unknown migration policy {name:?}; expected one of {}",
                        NAMES.join(", ")
                    ))),
                }
            }
        }

        /// The keys each policy reads, for the message of a key given to
        /// the wrong one.
        fn keys_of(name: &str) -> Vec<String> {
            match name {
                $($name => field_names::<<$ty as MigrationBuild>::Params>(),)*
                _ => Vec::new(),
            }
        }
    };
}

registry! {
    Static => "none", none::Static;
    Linux => "linux", linux::Linux;
    Tpp => "tpp", tpp::Tpp;
    Hemem => "hemem", hemem::Hemem;
    Memtis => "memtis", memtis::Memtis;
    OracleStatic => "oracle-static", oracle_static::OracleStatic;
    OracleEpoch => "oracle-epoch", oracle_epoch::OracleEpoch;
}

impl Default for MigrationSpec {
    fn default() -> Self {
        MigrationSpec::Static(Default::default())
    }
}

/// A policy's fields, as its default serialises them.
fn field_names<P: Serialize + Default>() -> Vec<String> {
    match serde_json::to_value(P::default()) {
        Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// A policy's table into its struct. A key another policy reads is named
/// as such (`hot_read` is read by type = "hemem"), as `[workload]` does.
fn parse<P: DeserializeOwned + Serialize + Default>(
    name: &str,
    params: Params,
) -> Result<P, KeyError> {
    let own = field_names::<P>();
    for key in params.keys() {
        if own.contains(key) {
            continue;
        }
        let readers: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| *n != name && keys_of(n).contains(key))
            .collect();
        let msg = if readers.is_empty() {
            format!(
                "unknown key for type = {name:?}; it reads {}",
                if own.is_empty() {
                    "no keys besides cost".to_string()
                } else {
                    own.join(", ")
                }
            )
        } else {
            format!(
                "not read by type = {name:?}; read by type = {}",
                readers
                    .iter()
                    .map(|r| format!("{r:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err((key.clone(), msg));
    }
    serde_path_to_error::deserialize(serde_json::Value::Object(params)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        match inner.strip_prefix("missing field `") {
            Some(rest) => (
                rest.trim_end_matches('`').to_string(),
                format!("required by type = {name:?}"),
            ),
            None => (path, inner),
        }
    })
}

/// `[vm.migration.cost]`: the CPU time of each event of migration, in ns.
/// No default has a measured source yet (docs/notes/tiered-memory-sources.md,
/// section 5), so each is 0, and the result says the cost was not charged.
/// The copy itself is not a key: a page's bytes at the slower of the two
/// nodes' bandwidths (read from one, written to the other).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CostConfig {
    /// A NUMA hint fault's handling (Linux, TPP).
    #[serde(default)]
    pub hint_fault_ns: Nanos,
    /// Unmapping and remapping a migrated page.
    #[serde(default)]
    pub pte_update_ns: Nanos,
    /// The TLB shootdown after a migrated page's unmapping.
    #[serde(default)]
    pub tlb_shootdown_ns: Nanos,
    /// Processing one access sample (HeMem, Memtis: PEBS records).
    #[serde(default)]
    pub sample_ns: Nanos,
    /// Making one page inaccessible in a scan pass (Linux, TPP).
    #[serde(default)]
    pub scan_ns: Nanos,
}

impl CostConfig {
    fn each(&self) -> [(&'static str, f64); 5] {
        [
            ("hint_fault_ns", self.hint_fault_ns.0),
            ("pte_update_ns", self.pte_update_ns.0),
            ("tlb_shootdown_ns", self.tlb_shootdown_ns.0),
            ("sample_ns", self.sample_ns.0),
            ("scan_ns", self.scan_ns.0),
        ]
    }

    pub fn check(&self) -> Result<(), KeyError> {
        for (k, v) in self.each() {
            if !(v.is_finite() && v >= 0.0) {
                return Err((
                    format!("cost.{k}"),
                    format!("{v} ns is out of range; must be zero or more"),
                ));
            }
        }
        Ok(())
    }
}

/// `[vm.migration]`: the policy and the costs of its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MigrationConfig {
    pub spec: MigrationSpec,
    pub cost: CostConfig,
}

impl MigrationConfig {
    /// The table as written (without its key path): Err((key, message)).
    pub fn from_params(mut m: Params) -> Result<Self, KeyError> {
        let cost = match m.remove("cost") {
            None => CostConfig::default(),
            Some(v) => serde_path_to_error::deserialize::<_, CostConfig>(v).map_err(|e| {
                let path = e.path().to_string();
                let inner = e.inner().to_string();
                if path == "." {
                    ("cost".to_string(), inner)
                } else {
                    (format!("cost.{path}"), inner)
                }
            })?,
        };
        cost.check()?;
        let name = match m.remove("type") {
            Some(serde_json::Value::String(s)) => s,
            Some(other) => {
                return Err((
                    "type".into(),
                    format!(
                        "{other} is not a migration policy name; expected one of {}",
                        NAMES.join(", ")
                    ),
                ))
            }
            None => {
                return Err((
                    "type".into(),
                    format!("missing; expected one of {}", NAMES.join(", ")),
                ))
            }
        };
        let canonical = NAMES
            .iter()
            .find(|n| n.eq_ignore_ascii_case(&name))
            .copied()
            .unwrap_or(&name);
        Ok(MigrationConfig {
            spec: MigrationSpec::from_parts(canonical, m)?,
            cost,
        })
    }
}

/// `[vm.migration]` as written. Errors read `key: message`; the config
/// reader puts the key after `vm.migration.`.
impl<'de> Deserialize<'de> for MigrationConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = Params::deserialize(d)?;
        MigrationConfig::from_params(m)
            .map_err(|(k, m)| serde::de::Error::custom(format!("{k}: {m}")))
    }
}

impl Serialize for MigrationConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = serde_json::to_value(&self.spec).map_err(serde::ser::Error::custom)?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert(
                "cost".into(),
                serde_json::to_value(&self.cost).map_err(serde::ser::Error::custom)?,
            );
        }
        v.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Result<MigrationConfig, KeyError> {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        match v {
            serde_json::Value::Object(m) => MigrationConfig::from_params(m),
            _ => unreachable!(),
        }
    }

    #[test]
    fn every_name_parses_with_its_defaults_and_round_trips() {
        for name in NAMES {
            let m = if *name == "oracle-epoch" {
                format!(r#"{{"type": "{name}", "epoch": 1000}}"#)
            } else {
                format!(r#"{{"type": "{name}"}}"#)
            };
            let c = cfg(&m).unwrap();
            assert_eq!(c.spec.name(), *name);
            let back = serde_json::to_value(&c).unwrap();
            let again = match back {
                serde_json::Value::Object(m) => MigrationConfig::from_params(m).unwrap(),
                _ => unreachable!(),
            };
            assert_eq!(again, c);
        }
    }

    #[test]
    fn unknown_policy_lists_the_registry() {
        let (k, m) = cfg(r#"{"type": "autonuma"}"#).unwrap_err();
        assert_eq!(k, "type");
        for n in NAMES {
            assert!(m.contains(n), "{m}");
        }
        assert_eq!(cfg(r#"{}"#).unwrap_err().0, "type");
        // Names match without regard to case, as cache policies do.
        assert_eq!(cfg(r#"{"type": "HeMem"}"#).unwrap().spec.name(), "hemem");
    }

    #[test]
    fn a_key_of_another_policy_names_its_reader() {
        let (k, m) = cfg(r#"{"type": "linux", "hot_read": 4}"#).unwrap_err();
        assert_eq!(k, "hot_read");
        assert!(m.contains("\"hemem\""), "{m}");
        let (k, m) = cfg(r#"{"type": "none", "bogus": 1}"#).unwrap_err();
        assert_eq!(k, "bogus");
        assert!(m.contains("unknown key"), "{m}");
        // A wrong type names the key.
        assert_eq!(
            cfg(r#"{"type": "linux", "scan_size_mb": "big"}"#)
                .unwrap_err()
                .0,
            "scan_size_mb"
        );
        assert_eq!(cfg(r#"{"type": "oracle-epoch"}"#).unwrap_err().0, "epoch");
    }

    #[test]
    fn costs_are_checked_by_key() {
        let (k, _) = cfg(r#"{"type": "none", "cost": {"hint_fault_ns": -1}}"#).unwrap_err();
        assert_eq!(k, "cost.hint_fault_ns");
        let (k, _) = cfg(r#"{"type": "none", "cost": {"copy_ns": 1}}"#).unwrap_err();
        assert!(k.starts_with("cost"), "{k}");
        let c = cfg(r#"{"type": "none", "cost": {"tlb_shootdown_ns": 2500}}"#).unwrap();
        assert_eq!(c.cost.tlb_shootdown_ns.0, 2500.0);
    }
}
