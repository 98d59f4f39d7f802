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
#[cfg(test)]
mod together;
pub mod tpp;

use super::nodes::Nodes;
use crate::hash::KeyMap;
use crate::spec::Params;
use crate::units::Nanos;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A memory node's index, fastest first.
pub type Node = u8;
/// The fastest node.
pub const FAST: Node = 0;

/// One page moved (or to move) between nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub page: u64,
    pub from: Node,
    pub to: Node,
}

/// What a policy asks of the model in one event: a buffer the model
/// reuses (no allocation per reference) and empties as it carries the
/// requests out ([`Nodes::apply`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Moves {
    /// Named pages to move, in order.
    pub moves: Vec<Move>,
    /// Demote this many victims of a node (its CLOCK order) to the nearest
    /// slower node with room: reclaim that demotes.
    pub reclaim: Vec<(Node, u64)>,
    /// Swap out this many victims of a node: reclaim without demotion
    /// (the model's pager does it; the nodes leave it alone).
    pub evict: Vec<(Node, u64)>,
    /// Pages of the slower nodes to make inaccessible now (a scan pass).
    pub scan: u64,
}

impl Moves {
    pub fn push(&mut self, m: Move) {
        self.moves.push(m);
    }
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty() && self.reclaim.is_empty() && self.evict.is_empty() && self.scan == 0
    }
}

/// Which references a policy hears of: the model calls it for those only
/// (one dynamic call per reference at most, none for most references of
/// the sampled and scan-based policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hears {
    /// None (`none`, `oracle-static`).
    Nothing,
    /// Every reference (`oracle-epoch`'s counter).
    Every,
    /// One read in `read_period` and one write in `write_period` (PEBS:
    /// one sample per period of events; counted by a [`Sampler`]).
    Sampled { read_period: u64, write_period: u64 },
    /// The first reference to a scanned page (a hint fault).
    HintFaults,
}

/// Counts references down to the next sample, reads and writes apart:
/// PEBS takes one record every `period` events, no randomness.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampler {
    period: [u64; 2],
    left: [u64; 2],
}

impl Sampler {
    pub fn new(read_period: u64, write_period: u64) -> Self {
        let period = [read_period.max(1), write_period.max(1)];
        Sampler {
            period,
            left: period,
        }
    }
    /// Whether this reference is sampled.
    #[inline(always)]
    pub fn sample(&mut self, write: bool) -> bool {
        let i = write as usize;
        self.left[i] -= 1;
        if self.left[i] == 0 {
            self.left[i] = self.period[i];
            true
        } else {
            false
        }
    }
}

/// A policy's own counts, for the result.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PolicyReport {
    /// Samples taken (HeMem, Memtis).
    pub samples: u64,
    /// Hint faults handled (Linux, TPP).
    pub hint_faults: u64,
    /// Scan passes and the pages they made inaccessible (Linux, TPP).
    pub scans: u64,
    /// Promotion candidates (Linux: hint faults under the threshold).
    pub candidates: u64,
    /// Promotions the policy declined, by reason.
    pub refused_threshold: u64,
    pub refused_rate_limit: u64,
    pub refused_watermark: u64,
    pub refused_inactive: u64,
    /// Times every count was halved (HeMem, Memtis).
    pub coolings: u64,
    /// The hot threshold at the end: ms (Linux) or a bin (Memtis).
    pub threshold: Option<f64>,
}

/// What a policy may know when it is built.
pub struct BuildCtx<'a> {
    pub page_bytes: u64,
    /// Frames per node, fastest first.
    pub frames: Vec<u64>,
    /// Accesses per page over the whole run (`oracle-static`'s pre-pass).
    pub counts: Option<&'a KeyMap<u64>>,
    /// Accesses per page in each epoch (`oracle-epoch`'s pre-pass).
    pub epoch_counts: Option<&'a [KeyMap<u64>]>,
}

/// The events a migration policy hears. Who guarantees what: the model
/// calls `on_access` only for the references [`Hears`] names, with the
/// page resident on `node`; `on_hint_fault` only for a page made
/// inaccessible by a scan the policy asked for; `tick` once the model's
/// clock reaches `next_tick`; `on_insert` after a page entered memory on
/// `node`, `on_remove` after it left. Times are the model's logical clock,
/// in ns. The policy reads the nodes, never changes them: it asks through
/// `m`.
pub trait MigrationPolicy: Send {
    fn hears(&self) -> Hears;
    fn on_access(
        &mut self,
        _page: u64,
        _node: Node,
        _write: bool,
        _t_ns: f64,
        _nodes: &Nodes,
        _m: &mut Moves,
    ) {
    }
    fn on_hint_fault(
        &mut self,
        _page: u64,
        _node: Node,
        _scanned_ns: f64,
        _t_ns: f64,
        _nodes: &Nodes,
        _m: &mut Moves,
    ) {
    }
    /// When `tick` is next due (ns); infinity for never.
    fn next_tick(&self) -> f64 {
        f64::INFINITY
    }
    fn tick(&mut self, _t_ns: f64, _nodes: &Nodes, _m: &mut Moves) {}
    /// The node for `page` entering memory, overriding the placement rule
    /// (the oracles); None: the rule decides.
    fn place(&mut self, _page: u64, _nodes: &Nodes) -> Option<Node> {
        None
    }
    fn on_insert(&mut self, _page: u64, _node: Node, _nodes: &Nodes, _m: &mut Moves) {}
    fn on_remove(&mut self, _page: u64) {}
    fn report(&self) -> PolicyReport;
}

/// How a policy is made from its `[vm.migration]` keys.
pub trait MigrationBuild {
    /// The policy's parameters: a serde struct with defaults, unknown keys
    /// rejected.
    type Params: DeserializeOwned + Serialize + Default + Clone + fmt::Debug + PartialEq;
    /// Rejects parameters out of range: Err((key, message)).
    fn check(_: &Self::Params) -> Result<(), (&'static str, String)> {
        Ok(())
    }
    /// The policy, for nodes of `ctx.frames`; Err when it needs what the
    /// context lacks (the oracles' pre-pass counts).
    fn build(p: &Self::Params, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String>;
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

            /// The policy, built for `ctx`'s nodes.
            pub fn build(&self, ctx: &BuildCtx) -> Result<Box<dyn MigrationPolicy>, String> {
                match self { $(MigrationSpec::$variant(p) => <$ty as MigrationBuild>::build(p, ctx)),* }
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
/// Each default follows docs/tiered-memory.md's "How a default cost is
/// chosen": no publication gives any of these events' time with its machine
/// (docs/notes/tiered-memory-sources.md, section 5), so four are this
/// project's own measurement, `benches/migration_costs.c`, the middle of
/// three runs' medians (101 rounds each) on 2026-12-05 on a KVM guest of 2
/// vCPUs, AMD EPYC family 25 model 1 (Zen 3) at 2.45 GHz, Linux 6.18, under
/// load: that machine's figures, a virtual machine's (its IPIs exit to the
/// hypervisor). The fifth, the sample, cannot be measured there (no hardware
/// PMU) and has no qualifying publication: 0, so the result lists it in
/// `uncharged`. The copy itself is not a key: a page's bytes at the slower
/// of the two nodes' bandwidths (read from one, written to the other).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CostConfig {
    /// A NUMA hint fault's handling (Linux, TPP). Default 1,750 ns: the
    /// benchmark's minor fault that maps one page the page cache holds (a
    /// hint fault restores a PROT_NONE PTE instead of looking the page up).
    pub hint_fault_ns: Nanos,
    /// Unmapping and remapping a migrated page. Default 4,578 ns: the
    /// benchmark's pair of one-page mprotect calls (PROT_NONE, then
    /// read-write) in one thread, system calls included.
    pub pte_update_ns: Nanos,
    /// The TLB shootdown after a migrated page's unmapping. Default
    /// 11,153 ns: the benchmark's single-page shootdown to one other CPU
    /// running the process (the pair with a second thread less the pair
    /// alone, per shootdown interrupt received).
    pub tlb_shootdown_ns: Nanos,
    /// Processing one access sample (HeMem, Memtis: PEBS records). Default
    /// 250 ns, rule 3 of docs/tiered-memory.md: the middle of the one
    /// published figure, "every time PEBS saves context information, the
    /// target workload slows down by 200-300 ns" (Akiyama and Hirofuchi,
    /// ROSS 2017, abstract), whose machine is in a body not read; not
    /// measurable on the benchmark's machine (no PMU).
    pub sample_ns: Nanos,
    /// Making one page inaccessible in a scan pass (Linux, TPP). Default
    /// 174 ns: the benchmark's mprotect(PROT_NONE) of 64 MiB of present
    /// 4 KiB pages, per page (the walk task_numa_work makes).
    pub scan_ns: Nanos,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig {
            hint_fault_ns: Nanos(1750.0),
            pte_update_ns: Nanos(4578.0),
            tlb_shootdown_ns: Nanos(11153.0),
            sample_ns: Nanos(250.0),
            scan_ns: Nanos(174.0),
        }
    }
}

impl CostConfig {
    pub fn each(&self) -> [(&'static str, f64); 5] {
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
    fn cost_defaults_are_the_benchmark_figures_and_a_key_set_keeps_the_rest() {
        // benches/migration_costs.c's medians (docs/tiered-memory.md, "How a
        // default cost is chosen"); the sample has no source: 0.
        let d = cfg(r#"{"type": "none"}"#).unwrap().cost;
        let want = [
            ("hint_fault_ns", 1750.0),
            ("pte_update_ns", 4578.0),
            ("tlb_shootdown_ns", 11153.0),
            ("sample_ns", 250.0),
            ("scan_ns", 174.0),
        ];
        assert_eq!(d.each(), want);
        assert_eq!(d, CostConfig::default());
        let c = cfg(r#"{"type": "none", "cost": {"sample_ns": 100, "scan_ns": 0}}"#)
            .unwrap()
            .cost;
        assert_eq!((c.sample_ns.0, c.scan_ns.0), (100.0, 0.0));
        assert_eq!(
            (c.hint_fault_ns, c.pte_update_ns, c.tlb_shootdown_ns),
            (d.hint_fault_ns, d.pte_update_ns, d.tlb_shootdown_ns)
        );
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
