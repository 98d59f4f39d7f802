//! `[[vm.node]]`, `[vm.placement]` and `[vm.migration]`: multilevel main
//! memory's keys (docs/tiered-memory.md), their schema and checks. Every
//! error names its key path (`vm.node[1].capacity`,
//! `vm.migration.hot_threshold_ms`).
//!
//! The nodes are main memory, fastest first, each a catalog medium with a
//! capacity; under them the swap device is `[backing]` as before. The
//! migration policies' own keys are read by their files under
//! vm/migrate/.

use super::config::VmConfig;
use crate::spec::ConfigError;
use crate::tech::Catalog;
use crate::units::Size;
use serde::{Deserialize, Serialize};

/// `[[vm.node]]`: one memory node.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    /// Its name in results; by default the technology's, lower-cased.
    pub name: Option<String>,
    /// A catalog entry or a `[techs]` name.
    pub tech: String,
    /// Bytes, or a share of the footprint (as a `[[tier]]`'s capacity).
    pub capacity: Size,
}

impl NodeConfig {
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.tech.to_lowercase())
    }
}

/// `[vm.placement]`: where a page entering memory goes.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PlacementConfig {
    #[serde(rename = "type", default)]
    pub kind: PlacementKind,
    /// `interleave` only: pages per turn of each node, one per node (1 to
    /// 255, as Linux's weighted interleave takes them); all 1 by default.
    pub weights: Option<Vec<u32>>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementKind {
    /// The fastest node with a free frame (Linux's local allocation with
    /// fallback down the tiers).
    #[default]
    FirstTouch,
    /// The slowest node with a free frame first.
    SlowFirst,
    /// Round-robin by weight over the nodes, in first-touch order.
    Interleave,
}

/// Most nodes: a page's node fits in 4 bits (vm/nodes.rs).
pub const MAX_NODES: usize = 16;

/// Linux's weighted interleave takes a weight of 1 to 255 per node
/// (`/sys/kernel/mm/mempolicy/weighted_interleave/nodeN`, a u8).
pub const MAX_WEIGHT: u32 = 255;

/// Whether the config asks for multilevel main memory at all.
pub fn configured(vm: &VmConfig) -> bool {
    !vm.node.is_empty() || vm.placement.is_some() || vm.migration.is_some()
}

/// The checks of the three tables that need nothing but `[vm]`.
pub fn validate(vm: &VmConfig) -> Result<(), ConfigError> {
    if !configured(vm) {
        return Ok(());
    }
    if vm.node.is_empty() {
        let by = if vm.placement.is_some() {
            "vm.placement"
        } else {
            "vm.migration"
        };
        return Err(ConfigError::at(
            "vm.node",
            format!(
                "{by} given without memory nodes: at least one [[vm.node]] (tech, capacity) is \
                 required, fastest first"
            ),
        ));
    }
    if vm.node.len() > MAX_NODES {
        return Err(ConfigError::at(
            "vm.node",
            format!("{} nodes given; at most {MAX_NODES}", vm.node.len()),
        ));
    }
    let page = vm.page_bytes();
    let mut names = std::collections::HashSet::new();
    for (i, n) in vm.node.iter().enumerate() {
        if let Size::Absolute(b) = n.capacity {
            if b < page {
                return Err(ConfigError::at(
                    format!("vm.node[{i}].capacity"),
                    format!(
                        "{b} B holds no page of vm.page_size = {page} B: the node would have \
                         no frame"
                    ),
                ));
            }
        }
        if !names.insert(n.name()) {
            return Err(ConfigError::at(
                format!("vm.node[{i}].name"),
                format!(
                    "{:?} names an earlier node too; give each node its own name",
                    n.name()
                ),
            ));
        }
    }
    if let Some(p) = &vm.placement {
        match (&p.weights, p.kind) {
            (Some(_), k) if k != PlacementKind::Interleave => {
                return Err(ConfigError::at(
                    "vm.placement.weights",
                    "only for type = \"interleave\"",
                ))
            }
            (Some(w), _) => {
                if w.len() != vm.node.len() {
                    return Err(ConfigError::at(
                        "vm.placement.weights",
                        format!(
                            "{} nodes, {} weights: one weight per [[vm.node]], in their order",
                            vm.node.len(),
                            w.len()
                        ),
                    ));
                }
                if let Some(bad) = w.iter().find(|&&x| !(1..=MAX_WEIGHT).contains(&x)) {
                    return Err(ConfigError::at(
                        "vm.placement.weights",
                        format!("{bad} is out of range; 1 to {MAX_WEIGHT} pages per turn"),
                    ));
                }
            }
            _ => {}
        }
    }
    if vm.memorage.is_some() {
        return Err(ConfigError::at(
            "vm.memorage",
            "not modelled together with [[vm.node]] yet (how borrowed storage frames and \
             memory nodes share pages is not designed); remove one of the two",
        ));
    }
    if vm.huge_page.is_some() {
        return Err(ConfigError::at(
            "vm.huge_page",
            "not modelled together with [[vm.node]] yet; remove one of the two",
        ));
    }
    Ok(())
}

/// The checks that need the catalog and the rest of the config: each
/// node's technology, no `[[tier]]` beside the nodes (the nodes are the
/// memory), and the parts not modelled with nodes yet.
pub fn check_with(vm: &VmConfig, cat: &Catalog, tiers: usize) -> Result<(), ConfigError> {
    if !configured(vm) {
        return Ok(());
    }
    for (i, n) in vm.node.iter().enumerate() {
        cat.get(&n.tech)
            .map_err(|e| ConfigError::at(format!("vm.node[{i}].tech"), e.to_string()))?;
    }
    if tiers > 0 {
        return Err(ConfigError::at(
            "tier",
            "with [[vm.node]] the nodes are the memory that holds the frames: leave [[tier]] \
             out ([backing] stays the swap device)",
        ));
    }
    // Not modelled with nodes yet: said, not run in silence.
    if vm.pressure.is_some() {
        return Err(ConfigError::at(
            "vm.pressure",
            "not modelled together with [[vm.node]] yet (each node's watermarks are the \
             policies' own); remove one of the two",
        ));
    }
    if let Some(m) = &vm.migration {
        if let super::migrate::MigrationSpec::Linux(p) = &m.spec {
            // Reclaim without demotion swaps fast-node pages out: a policy
            // that changes what is resident, which the model's exact
            // all-fast baseline (run/tiered.rs) does not allow yet.
            if !p.demotion_enabled || vm.node.len() < 2 {
                let key = if p.demotion_enabled {
                    "vm.node"
                } else {
                    "vm.migration.demotion_enabled"
                };
                return Err(ConfigError::at(
                    key,
                    "type = \"linux\" is run with demotion to a slower node only (at least two \
                     nodes, demotion_enabled = true): reclaim that swaps fast-node pages out is \
                     not modelled yet",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vm(toml: &str) -> VmConfig {
        toml::from_str(toml).unwrap()
    }

    fn err(toml: &str) -> ConfigError {
        let v = vm(toml);
        v.validate()
            .and_then(|_| check_with(&v, &Catalog::builtin(), 0))
            .unwrap_err()
    }

    const TWO: &str = r#"
[[node]]
tech = "DRAM-DDR4"
capacity = "25%"
[[node]]
name = "cxl"
tech = "DRAM-DDR4"
capacity = "100%"
"#;

    #[test]
    fn without_nodes_nothing_changes() {
        let v = vm("page_size = \"4KiB\"");
        assert!(!configured(&v));
        assert!(v.validate().is_ok());
        assert!(check_with(&v, &Catalog::builtin(), 1).is_ok());
        // Nothing new is written out either: configs hash as before.
        let s = serde_json::to_string(&v).unwrap();
        for k in ["node", "placement", "migration"] {
            assert!(!s.contains(&format!("\"{k}\"")), "{s}");
        }
    }

    #[test]
    fn a_good_config_passes_and_the_parts_not_modelled_are_refused() {
        let good = vm(&format!(
            "{TWO}[placement]\ntype = \"interleave\"\nweights = [3, 1]\n\
             [migration]\ntype = \"linux\"\nhot_threshold_ms = 500\n[migration.cost]\nhint_fault_ns = 1000\n"
        ));
        assert!(good.validate().is_ok());
        assert!(check_with(&good, &Catalog::builtin(), 0).is_ok());
        let e = err(&format!(
            "{TWO}[migration]\ntype = \"linux\"\ndemotion_enabled = false\n"
        ));
        assert_eq!(e.path, "vm.migration.demotion_enabled");
        let one = "[[node]]\ntech = \"DRAM-DDR4\"\ncapacity = \"1MiB\"\n";
        assert_eq!(
            err(&format!("{one}[migration]\ntype = \"linux\"\n")).path,
            "vm.node"
        );
        // [vm.cpu] runs with nodes (run/tiered_procs_tests.rs).
        let v = vm(&format!("{TWO}[cpu]\ncores = 1\n"));
        assert!(check_with(&v, &Catalog::builtin(), 0).is_ok());
        let v = vm(&format!("{TWO}[migration]\ntype = \"linux\"\n"));
        assert_eq!(v.migration.as_ref().unwrap().spec.name(), "linux");
        // A [[tier]] beside the nodes is refused first.
        assert_eq!(
            check_with(&v, &Catalog::builtin(), 1).unwrap_err().path,
            "tier"
        );
    }

    #[test]
    fn bad_input_names_its_key_path() {
        let path = |t: &str| err(t).path;
        // No node (a policy alone).
        assert_eq!(path("[migration]\ntype = \"none\"\n"), "vm.node");
        assert_eq!(path("[placement]\ntype = \"slow-first\"\n"), "vm.node");
        // A node smaller than one page.
        assert_eq!(
            path("[[node]]\ntech = \"DRAM-DDR4\"\ncapacity = \"4KiB\"\n[[node]]\ntech = \"PCM-SLC\"\ncapacity = 100\n"),
            "vm.node[1].capacity"
        );
        // An unknown technology.
        assert_eq!(
            path("[[node]]\ntech = \"DRAM-DDR9\"\ncapacity = \"1MiB\"\n"),
            "vm.node[0].tech"
        );
        // Two nodes of one name.
        assert_eq!(
            path("[[node]]\ntech = \"DRAM-DDR4\"\ncapacity = \"1MiB\"\n[[node]]\ntech = \"DRAM-DDR4\"\ncapacity = \"1MiB\"\n"),
            "vm.node[1].name"
        );
        // Weights of the wrong length, out of range, or without interleave.
        let e = err(&format!(
            "{TWO}[placement]\ntype = \"interleave\"\nweights = [1, 2, 3]\n"
        ));
        assert_eq!(
            (e.path.as_str(), e.msg.starts_with("2 nodes, 3 weights")),
            ("vm.placement.weights", true)
        );
        assert_eq!(
            path(&format!(
                "{TWO}[placement]\ntype = \"interleave\"\nweights = [0, 1]\n"
            )),
            "vm.placement.weights"
        );
        assert_eq!(
            path(&format!("{TWO}[placement]\nweights = [1, 1]\n")),
            "vm.placement.weights"
        );
        // With [vm.memorage].
        assert_eq!(
            path(&format!(
                "{TWO}[memorage]\npsd = \"64GiB\"\noccupancy = 0.5\ntransfer_ns_per_gib = 1000\n"
            )),
            "vm.memorage"
        );
    }
}
