//! Memory and storage technologies: the built-in catalog (`data/techs.toml`,
//! every entry citing its source) and the overrides a config may add.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum TechError {
    #[error("unknown technology {name:?}; known: {known}")]
    Unknown { name: String, known: String },
    #[error("a new technology {name:?} needs `{missing}`, or `base` = the name of a catalog entry to start from")]
    Incomplete { name: String, missing: &'static str },
    #[error("technology {name:?} has no transfer model: {TRANSFER_FORMS}")]
    NoTransfer { name: String },
    #[error("technology {name:?} gives two transfer models; {TRANSFER_FORMS}, not both")]
    TwoTransfers { name: String },
    #[error("{field} = {value} is out of range: {allowed}")]
    Range {
        field: &'static str,
        value: f64,
        allowed: &'static str,
    },
}

/// What a medium's transfer model may be, for messages.
pub const TRANSFER_FORMS: &str = "give `bandwidth_mb_s` (MB/s), or `burst_bytes` and `burst_ns` \
     (the bytes one burst moves and its time in ns), each with its source";

/// One medium. Latencies in ns, bandwidth in MB/s (10^6 B/s).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Technology {
    pub name: String,
    pub kind: String,
    pub read_ns: f64,
    pub write_ns: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_ns: Option<f64>,
    /// The bytes one erase clears (a flash erase block): wear counting
    /// turns bytes programmed into erases with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erase_block_bytes: Option<u64>,
    /// The transfer model is this bandwidth, or a burst (`burst_bytes` moved
    /// in `burst_ns`): one of the two, never neither (`validate`), so no
    /// medium moves a page for free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_mb_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_ns: Option<f64>,
    /// Requests are rounded up to whole units when transferred.
    #[serde(default = "one")]
    pub access_unit: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_read_pj: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_write_pj: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_mw_per_gbit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_mw_per_gbit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density_gbit_cm2: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_usd_per_gbit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_area_f2: Option<[f64; 2]>,
    #[serde(default)]
    pub volatile: bool,
    #[serde(default)]
    pub byte_addressable: bool,
    /// Where the figures come from (a seed and its table, or a datasheet).
    pub source: String,
}

fn one() -> u32 {
    1
}

/// A config's `[techs.NAME]` table: a new entry (from `base`, or complete) or
/// an override of a catalog entry of the same name. Only the fields given change.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TechOverride {
    pub base: Option<String>,
    pub kind: Option<String>,
    pub read_ns: Option<crate::units::Nanos>,
    pub write_ns: Option<crate::units::Nanos>,
    pub erase_ns: Option<crate::units::Nanos>,
    pub erase_block_bytes: Option<u64>,
    pub bandwidth_mb_s: Option<f64>,
    pub burst_bytes: Option<u32>,
    pub burst_ns: Option<crate::units::Nanos>,
    pub access_unit: Option<u32>,
    pub energy_read_pj: Option<f64>,
    pub energy_write_pj: Option<f64>,
    pub active_mw_per_gbit: Option<f64>,
    pub idle_mw_per_gbit: Option<f64>,
    pub density_gbit_cm2: Option<f64>,
    pub price_usd_per_gbit: Option<f64>,
    pub endurance: Option<f64>,
    pub cell_area_f2: Option<[f64; 2]>,
    pub volatile: Option<bool>,
    pub byte_addressable: Option<bool>,
    pub source: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    tech: Vec<Technology>,
}

/// The built-in catalog, parsed once.
pub fn builtin() -> &'static [Technology] {
    static CATALOG: OnceLock<Vec<Technology>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let file: CatalogFile = toml::from_str(include_str!("../data/techs.toml"))
            .expect("the built-in catalog parses (tested)");
        file.tech
    })
}

/// The catalog a run uses: the built-in one plus a config's overrides.
#[derive(Clone, Debug)]
pub struct Catalog {
    techs: BTreeMap<String, Technology>,
}

impl Catalog {
    pub fn builtin() -> Self {
        Catalog {
            techs: builtin()
                .iter()
                .map(|t| (t.name.clone(), t.clone()))
                .collect(),
        }
    }

    /// A catalog of the given entries (already validated) instead of the
    /// built-in ones.
    pub fn from_entries(entries: Vec<Technology>) -> Self {
        Catalog {
            techs: entries.into_iter().map(|t| (t.name.clone(), t)).collect(),
        }
    }

    /// The entry named `name`, in any letter case (`"dram-ddr3"` is
    /// DRAM-DDR3); messages list the names as the catalog spells them.
    pub fn get(&self, name: &str) -> Result<&Technology, TechError> {
        self.canonical(name)
            .and_then(|n| self.techs.get(n))
            .ok_or_else(|| TechError::Unknown {
                name: name.to_string(),
                known: self.techs.keys().cloned().collect::<Vec<_>>().join(", "),
            })
    }

    /// The catalog's spelling of `name`, matched without regard to case.
    fn canonical(&self, name: &str) -> Option<&str> {
        if let Some((k, _)) = self.techs.get_key_value(name) {
            return Some(k);
        }
        self.techs
            .keys()
            .find(|k| k.eq_ignore_ascii_case(name))
            .map(String::as_str)
    }

    pub fn all(&self) -> impl Iterator<Item = &Technology> {
        self.techs.values()
    }

    /// Applies one override. Errors are (field, error) so the caller can build
    /// the key path.
    pub fn apply(&mut self, name: &str, o: &TechOverride) -> Result<(), (&'static str, TechError)> {
        // `[techs.hdd]` overrides HDD, as `tech = "hdd"` names it.
        let name = self.canonical(name).unwrap_or(name).to_string();
        let name = name.as_str();
        let mut t = match (&o.base, self.techs.get(name)) {
            (Some(base), _) => self.get(base).map_err(|e| ("base", e))?.clone(),
            (None, Some(t)) => t.clone(),
            (None, None) => {
                let need = |v: bool, f: &'static str| {
                    if v {
                        Ok(())
                    } else {
                        Err((
                            f,
                            TechError::Incomplete {
                                name: name.into(),
                                missing: f,
                            },
                        ))
                    }
                };
                need(o.read_ns.is_some(), "read_ns")?;
                need(o.write_ns.is_some(), "write_ns")?;
                need(o.source.is_some(), "source")?;
                if o.bandwidth_mb_s.is_none() && o.burst_bytes.is_none() && o.burst_ns.is_none() {
                    return Err((
                        "bandwidth_mb_s",
                        TechError::NoTransfer { name: name.into() },
                    ));
                }
                Technology {
                    name: name.into(),
                    kind: "custom".into(),
                    read_ns: 0.0,
                    write_ns: 0.0,
                    erase_ns: None,
                    erase_block_bytes: None,
                    bandwidth_mb_s: None,
                    burst_bytes: None,
                    burst_ns: None,
                    access_unit: 1,
                    energy_read_pj: None,
                    energy_write_pj: None,
                    active_mw_per_gbit: None,
                    idle_mw_per_gbit: None,
                    density_gbit_cm2: None,
                    price_usd_per_gbit: None,
                    endurance: None,
                    cell_area_f2: None,
                    volatile: false,
                    byte_addressable: false,
                    source: String::new(),
                }
            }
        };
        t.name = name.to_string();
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = &o.$f { t.$f = v.clone().into(); } )* };
        }
        macro_rules! set_opt {
            ($($f:ident),*) => { $( if let Some(v) = &o.$f { t.$f = Some(v.clone().into()); } )* };
        }
        // The override's transfer model replaces the base's, whichever form
        // either is in; giving both forms is refused by `validate`.
        if o.bandwidth_mb_s.is_some() && o.burst_bytes.is_none() && o.burst_ns.is_none() {
            t.burst_bytes = None;
            t.burst_ns = None;
        }
        if o.bandwidth_mb_s.is_none() && (o.burst_bytes.is_some() || o.burst_ns.is_some()) {
            t.bandwidth_mb_s = None;
        }
        if let Some(v) = o.burst_ns {
            t.burst_ns = Some(v.0);
        }
        set!(kind, access_unit, volatile, byte_addressable, source);
        set_opt!(
            bandwidth_mb_s,
            burst_bytes,
            energy_read_pj,
            energy_write_pj,
            active_mw_per_gbit,
            idle_mw_per_gbit
        );
        set_opt!(
            erase_block_bytes,
            density_gbit_cm2,
            price_usd_per_gbit,
            endurance,
            cell_area_f2
        );
        if let Some(v) = o.read_ns {
            t.read_ns = v.0;
        }
        if let Some(v) = o.write_ns {
            t.write_ns = v.0;
        }
        if let Some(v) = o.erase_ns {
            t.erase_ns = Some(v.0);
        }
        validate(&t)?;
        self.techs.insert(name.to_string(), t);
        Ok(())
    }
}

/// Rejects figures no medium can have.
pub fn validate(t: &Technology) -> Result<(), (&'static str, TechError)> {
    let pos = |f: &'static str, v: f64| {
        if v > 0.0 && v.is_finite() {
            Ok(())
        } else {
            Err((
                f,
                TechError::Range {
                    field: f,
                    value: v,
                    allowed: "must be a positive number",
                },
            ))
        }
    };
    pos("read_ns", t.read_ns)?;
    pos("write_ns", t.write_ns)?;
    match (t.bandwidth_mb_s, t.burst_bytes, t.burst_ns) {
        (Some(b), None, None) => pos("bandwidth_mb_s", b)?,
        (None, Some(n), Some(ns)) => {
            if n == 0 {
                return Err((
                    "burst_bytes",
                    TechError::Range {
                        field: "burst_bytes",
                        value: 0.0,
                        allowed: "must be at least 1 byte",
                    },
                ));
            }
            pos("burst_ns", ns)?;
        }
        (None, None, None) => {
            return Err((
                "bandwidth_mb_s",
                TechError::NoTransfer {
                    name: t.name.clone(),
                },
            ))
        }
        (None, None, Some(_)) => {
            return Err((
                "burst_bytes",
                TechError::NoTransfer {
                    name: t.name.clone(),
                },
            ))
        }
        (None, Some(_), None) => {
            return Err((
                "burst_ns",
                TechError::NoTransfer {
                    name: t.name.clone(),
                },
            ))
        }
        (Some(_), _, _) => {
            return Err((
                "bandwidth_mb_s",
                TechError::TwoTransfers {
                    name: t.name.clone(),
                },
            ))
        }
    }
    if let Some(e) = t.erase_ns {
        pos("erase_ns", e)?;
    }
    if t.erase_block_bytes == Some(0) {
        return Err((
            "erase_block_bytes",
            TechError::Range {
                field: "erase_block_bytes",
                value: 0.0,
                allowed: "must be at least 1 byte",
            },
        ));
    }
    if t.access_unit == 0 {
        return Err((
            "access_unit",
            TechError::Range {
                field: "access_unit",
                value: 0.0,
                allowed: "must be at least 1 byte",
            },
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses_validates_and_cites() {
        let c = builtin();
        assert!(c.len() >= 13);
        for t in c {
            validate(t).unwrap_or_else(|(f, e)| panic!("{}: {f}: {e}", t.name));
            assert!(t.source.len() > 10, "{} has no source", t.name);
        }
        for name in [
            "DRAM-DDR2",
            "DRAM-DDR3",
            "FILE-MEMORY",
            "NAND-SLC",
            "NOR",
            "PCM-SLC",
            "PCM-MLC",
            "STT-MRAM",
            "ReRAM",
            "FRAM",
            "HDD",
            "SSD-SATA",
        ] {
            Catalog::builtin().get(name).unwrap();
        }
    }

    #[test]
    fn overrides() {
        let mut c = Catalog::builtin();
        let o = TechOverride {
            base: Some("PCM-SLC".into()),
            write_ns: Some(crate::units::Nanos(500.0)),
            ..Default::default()
        };
        c.apply("MY-PCM", &o).unwrap();
        assert_eq!(c.get("MY-PCM").unwrap().write_ns, 500.0);
        assert_eq!(c.get("MY-PCM").unwrap().read_ns, 20.0);
        let bad = TechOverride {
            read_ns: Some(crate::units::Nanos(-1.0)),
            ..Default::default()
        };
        assert_eq!(c.apply("HDD", &bad).unwrap_err().0, "read_ns");
        assert!(c.apply("NEW", &TechOverride::default()).is_err());
    }

    #[test]
    fn names_in_any_case() {
        let mut c = Catalog::builtin();
        assert_eq!(c.get("dram-ddr3").unwrap().name, "DRAM-DDR3");
        assert_eq!(c.get("Pcm-Slc").unwrap().name, "PCM-SLC");
        let e = c.get("nope").unwrap_err().to_string();
        assert!(e.contains("DRAM-DDR3") && e.contains("ReRAM"), "{e}");
        // `[techs.hdd]` changes HDD rather than adding a second entry.
        let o = TechOverride {
            read_ns: Some(crate::units::Nanos(1e6)),
            ..Default::default()
        };
        c.apply("hdd", &o).unwrap();
        assert_eq!(c.get("HDD").unwrap().read_ns, 1e6);
        assert_eq!(
            c.all()
                .filter(|t| t.name.eq_ignore_ascii_case("hdd"))
                .count(),
            1
        );
    }

    #[test]
    fn every_medium_needs_a_transfer_model() {
        for t in builtin() {
            let burst = t.burst_bytes.is_some() && t.burst_ns.is_some();
            assert!(
                t.bandwidth_mb_s.is_some() != burst,
                "{}: one transfer model",
                t.name
            );
        }
        let mut c = Catalog::builtin();
        let bare = TechOverride {
            read_ns: Some(crate::units::Nanos(5.0)),
            write_ns: Some(crate::units::Nanos(5.0)),
            source: Some("mine".into()),
            ..Default::default()
        };
        let (field, e) = c.apply("MINE", &bare).unwrap_err();
        assert_eq!(field, "bandwidth_mb_s");
        let msg = e.to_string();
        assert!(
            msg.contains("bandwidth_mb_s") && msg.contains("burst_ns"),
            "{msg}"
        );
        let burst = TechOverride {
            burst_bytes: Some(8),
            burst_ns: Some(crate::units::Nanos(10.0)),
            ..bare.clone()
        };
        c.apply("MINE", &burst).unwrap();
        // An override's model replaces the base's, whichever form.
        let bw = TechOverride {
            base: Some("MINE".into()),
            bandwidth_mb_s: Some(100.0),
            ..Default::default()
        };
        c.apply("MINE2", &bw).unwrap();
        assert_eq!(c.get("MINE2").unwrap().burst_bytes, None);
        let both = TechOverride {
            burst_bytes: Some(8),
            burst_ns: Some(crate::units::Nanos(10.0)),
            bandwidth_mb_s: Some(100.0),
            ..Default::default()
        };
        assert!(c
            .apply("HDD", &both)
            .unwrap_err()
            .1
            .to_string()
            .contains("not both"));
        let half = TechOverride {
            burst_bytes: Some(8),
            ..Default::default()
        };
        assert_eq!(c.apply("HDD", &half).unwrap_err().0, "burst_ns");
    }
}
