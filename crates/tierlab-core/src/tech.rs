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
    #[error("technology {name:?} gives `price_usd_per_gbit` without `price_year`: give the year the price is from (memory prices fall by orders of magnitude over the years)")]
    PriceWithoutYear { name: String },
    #[error("technology {name:?} is defined relative to {to:?}, which {why}")]
    Relative {
        name: String,
        to: String,
        why: &'static str,
    },
    #[error("technology {name:?} gives `latency_relative_to` and its own `{field}`: give one or the other (a relative entry's latencies are computed from the other entry's)")]
    RelativeAndOwn { name: String, field: &'static str },
    #[error("cell_area_f2 = [{lo}, {hi}] is out of range: give [least, most], both positive, least first")]
    CellArea { lo: f64, hi: f64 },
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
    /// Absent in the catalog file for an entry defined relative to
    /// another (`latency_relative_to`): computed when the catalog loads.
    #[serde(default)]
    pub read_ns: f64,
    #[serde(default)]
    pub write_ns: f64,
    /// Whether `read_ns` and `write_ns` are the medium's own figures or
    /// as a load from the CPU sees them (device/basis.rs); every catalog
    /// entry states it, a config's new entry may.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_basis: Option<LatencyBasis>,
    /// Where the latencies come from, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_source: Option<String>,
    /// The entry whose latencies this one's are `latency_factor` times
    /// (CXL-DRAM: twice CPU-attached DRAM's), with its basis; recomputed
    /// when that entry changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_relative_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_factor: Option<f64>,
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
    /// Energy of one block erase (pJ), for media that erase before writing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_erase_pj: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_mw_per_gbit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_mw_per_gbit: Option<f64>,
    /// Background power in the deepest state that keeps the data (DRAM's
    /// power-down with self-refresh), mW per Gbit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub powerdown_mw_per_gbit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density_gbit_cm2: Option<f64>,
    /// US$ per Gbit (2^30 bits); meaningless without `price_year`, which
    /// `validate` requires beside it (prices of memory fall by orders of
    /// magnitude over the years the catalog spans).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_usd_per_gbit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_year: Option<u32>,
    /// More prices of the medium, each with its year and source
    /// (device/price.rs): `[cost] year` picks one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prices: Vec<PricePoint>,
    /// Write cycles per cell, or full-capacity writes for a whole drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endurance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_area_f2: Option<[f64; 2]>,
    /// The feature size F (nm) that `cell_area_f2` is in units of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_nm: Option<f64>,
    /// Share of blocks a part is guaranteed to ship good (S1's bad-block
    /// management); absent means every block is good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub good_block_fraction: Option<f64>,
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
    pub latency_basis: Option<LatencyBasis>,
    pub latency_source: Option<String>,
    pub latency_relative_to: Option<String>,
    pub latency_factor: Option<f64>,
    pub erase_ns: Option<crate::units::Nanos>,
    pub erase_block_bytes: Option<u64>,
    pub bandwidth_mb_s: Option<f64>,
    pub burst_bytes: Option<u32>,
    pub burst_ns: Option<crate::units::Nanos>,
    pub access_unit: Option<u32>,
    pub energy_read_pj: Option<f64>,
    pub energy_write_pj: Option<f64>,
    pub energy_erase_pj: Option<f64>,
    pub active_mw_per_gbit: Option<f64>,
    pub idle_mw_per_gbit: Option<f64>,
    pub powerdown_mw_per_gbit: Option<f64>,
    pub density_gbit_cm2: Option<f64>,
    pub price_usd_per_gbit: Option<f64>,
    pub price_year: Option<u32>,
    pub prices: Option<Vec<PricePoint>>,
    pub endurance: Option<f64>,
    pub cell_area_f2: Option<[f64; 2]>,
    pub feature_nm: Option<f64>,
    pub good_block_fraction: Option<f64>,
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
        let mut techs: BTreeMap<String, Technology> =
            file.tech.into_iter().map(|t| (t.name.clone(), t)).collect();
        resolve_relative(&mut techs)
            .expect("the built-in catalog's relative latencies resolve (tested)");
        techs.into_values().collect()
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
                let relative = o.latency_relative_to.is_some();
                need(o.read_ns.is_some() || relative, "read_ns")?;
                need(o.write_ns.is_some() || relative, "write_ns")?;
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
                    latency_basis: None,
                    latency_source: None,
                    latency_relative_to: None,
                    latency_factor: None,
                    erase_ns: None,
                    erase_block_bytes: None,
                    bandwidth_mb_s: None,
                    burst_bytes: None,
                    burst_ns: None,
                    access_unit: 1,
                    energy_read_pj: None,
                    energy_write_pj: None,
                    energy_erase_pj: None,
                    active_mw_per_gbit: None,
                    idle_mw_per_gbit: None,
                    powerdown_mw_per_gbit: None,
                    density_gbit_cm2: None,
                    price_usd_per_gbit: None,
                    price_year: None,
                    prices: Vec::new(),
                    endurance: None,
                    cell_area_f2: None,
                    feature_nm: None,
                    good_block_fraction: None,
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
        set!(
            kind,
            access_unit,
            volatile,
            byte_addressable,
            source,
            prices
        );
        // A new price with the base's year would date it wrongly: the
        // override names its own year.
        if o.price_usd_per_gbit.is_some() && o.price_year.is_none() {
            return Err((
                "price_year",
                TechError::PriceWithoutYear { name: name.into() },
            ));
        }
        set_opt!(
            bandwidth_mb_s,
            burst_bytes,
            energy_read_pj,
            energy_write_pj,
            energy_erase_pj,
            active_mw_per_gbit,
            idle_mw_per_gbit,
            powerdown_mw_per_gbit
        );
        set_opt!(
            erase_block_bytes,
            density_gbit_cm2,
            price_usd_per_gbit,
            price_year,
            endurance,
            cell_area_f2,
            feature_nm,
            good_block_fraction
        );
        if o.latency_relative_to.is_some() {
            for (field, given) in [
                ("read_ns", o.read_ns.is_some()),
                ("write_ns", o.write_ns.is_some()),
            ] {
                if given {
                    return Err((
                        "latency_relative_to",
                        TechError::RelativeAndOwn {
                            name: name.into(),
                            field,
                        },
                    ));
                }
            }
            t.latency_relative_to = o.latency_relative_to.clone();
            t.latency_factor = o.latency_factor.or(t.latency_factor).or(Some(1.0));
        } else if o.read_ns.is_some() || o.write_ns.is_some() {
            // Its own figures replace the relation, and the relation's
            // basis unless the override states one.
            t.latency_relative_to = None;
            t.latency_factor = None;
        } else if let Some(f) = o.latency_factor {
            t.latency_factor = Some(f);
        }
        if let Some(v) = o.read_ns {
            t.read_ns = v.0;
        }
        if let Some(v) = o.write_ns {
            t.write_ns = v.0;
        }
        set_opt!(latency_basis, latency_source);
        if let Some(v) = o.erase_ns {
            t.erase_ns = Some(v.0);
        }
        let mut techs = self.techs.clone();
        techs.insert(name.to_string(), t);
        resolve_relative(&mut techs)?;
        for t in techs.values() {
            validate(t)?;
        }
        self.techs = techs;
        Ok(())
    }
}

/// Computes every entry defined relative to another from it (its
/// latencies times `latency_factor`, its basis), in dependency order, so a
/// change to CPU-attached DRAM carries into CXL-DRAM.
pub fn resolve_relative(
    techs: &mut BTreeMap<String, Technology>,
) -> Result<(), (&'static str, TechError)> {
    let relative: Vec<String> = techs
        .values()
        .filter(|t| t.latency_relative_to.is_some())
        .map(|t| t.name.clone())
        .collect();
    let mut done: Vec<String> = Vec::new();
    // Each round resolves the entries whose base is absolute or resolved;
    // a round that resolves nothing is a cycle.
    while done.len() < relative.len() {
        let before = done.len();
        for name in &relative {
            if done.contains(name) {
                continue;
            }
            let t = &techs[name];
            let to = t.latency_relative_to.clone().unwrap_or_default();
            let err = |why| {
                Err((
                    "latency_relative_to",
                    TechError::Relative {
                        name: name.clone(),
                        to: to.clone(),
                        why,
                    },
                ))
            };
            let Some(key) = techs.keys().find(|k| k.eq_ignore_ascii_case(&to)).cloned() else {
                return err("is not in the catalog");
            };
            if relative.contains(&key) && !done.contains(&key) {
                continue;
            }
            let base = techs[&key].clone();
            let f = t.latency_factor.unwrap_or(1.0);
            if !(f > 0.0 && f.is_finite()) {
                return Err((
                    "latency_factor",
                    TechError::Range {
                        field: "latency_factor",
                        value: f,
                        allowed: "must be a positive number",
                    },
                ));
            }
            let t = techs.get_mut(name).expect("listed above");
            t.read_ns = base.read_ns * f;
            t.write_ns = base.write_ns * f;
            t.latency_basis = base.latency_basis;
            done.push(name.clone());
        }
        if done.len() == before {
            let name = relative
                .iter()
                .find(|n| !done.contains(n))
                .cloned()
                .unwrap_or_default();
            let to = techs[&name].latency_relative_to.clone().unwrap_or_default();
            return Err((
                "latency_relative_to",
                TechError::Relative {
                    name,
                    to,
                    why: "is defined relative to it in turn (a cycle)",
                },
            ));
        }
    }
    Ok(())
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
    // Device figures: energies and powers may be 0 (a medium that draws
    // nothing in a state) but never negative; the rest must be positive.
    let nonneg = |f: &'static str, v: Option<f64>| match v {
        Some(v) if !(v >= 0.0 && v.is_finite()) => Err((
            f,
            TechError::Range {
                field: f,
                value: v,
                allowed: "must be zero or a positive number",
            },
        )),
        _ => Ok(()),
    };
    nonneg("energy_read_pj", t.energy_read_pj)?;
    nonneg("energy_write_pj", t.energy_write_pj)?;
    nonneg("energy_erase_pj", t.energy_erase_pj)?;
    nonneg("active_mw_per_gbit", t.active_mw_per_gbit)?;
    nonneg("idle_mw_per_gbit", t.idle_mw_per_gbit)?;
    nonneg("powerdown_mw_per_gbit", t.powerdown_mw_per_gbit)?;
    nonneg("price_usd_per_gbit", t.price_usd_per_gbit)?;
    for (f, v) in [
        ("endurance", t.endurance),
        ("density_gbit_cm2", t.density_gbit_cm2),
        ("feature_nm", t.feature_nm),
    ] {
        if let Some(v) = v {
            pos(f, v)?;
        }
    }
    if let Some(g) = t.good_block_fraction {
        if !(g > 0.0 && g <= 1.0) {
            return Err((
                "good_block_fraction",
                TechError::Range {
                    field: "good_block_fraction",
                    value: g,
                    allowed: "must be a share of the blocks, more than 0 and at most 1",
                },
            ));
        }
    }
    if let Some([lo, hi]) = t.cell_area_f2 {
        if !(lo > 0.0 && lo <= hi && hi.is_finite()) {
            return Err(("cell_area_f2", TechError::CellArea { lo, hi }));
        }
    }
    if t.price_usd_per_gbit.is_some() && t.price_year.is_none() {
        return Err((
            "price_year",
            TechError::PriceWithoutYear {
                name: t.name.clone(),
            },
        ));
    }
    if let Some(y) = t.price_year {
        if !(1950..=2100).contains(&y) {
            return Err((
                "price_year",
                TechError::Range {
                    field: "price_year",
                    value: y as f64,
                    allowed: "must be a calendar year, 1950 to 2100",
                },
            ));
        }
    }
    for p in &t.prices {
        if !(p.usd_per_gbit >= 0.0 && p.usd_per_gbit.is_finite()) {
            return Err((
                "prices",
                TechError::Range {
                    field: "prices.usd_per_gbit",
                    value: p.usd_per_gbit,
                    allowed: "must be zero or a positive number",
                },
            ));
        }
        if !(1950..=2100).contains(&p.year) {
            return Err((
                "prices",
                TechError::Range {
                    field: "prices.year",
                    value: p.year as f64,
                    allowed: "must be a calendar year, 1950 to 2100",
                },
            ));
        }
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

/// Which latency a catalog entry's `read_ns` and `write_ns` are.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LatencyBasis {
    /// The medium's own access time, without the path from the CPU.
    Device,
    /// As a load from the CPU (or a drive's host) sees it.
    Loaded,
}

impl LatencyBasis {
    pub fn as_str(self) -> &'static str {
        match self {
            LatencyBasis::Device => "device",
            LatencyBasis::Loaded => "loaded",
        }
    }
}

/// One price of a medium: US$ per Gbit (2^30 bits) in `year`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PricePoint {
    pub year: u32,
    pub usd_per_gbit: f64,
    pub source: String,
}

#[cfg(test)]
mod tests;
