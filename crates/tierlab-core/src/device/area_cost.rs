//! Die area and cost of a tier, from its capacity and its medium's catalog
//! figures. S4 compares memories by die area and price per Gbit (its
//! Table 1); S1 argues that a part sold with some blocks bad costs less per
//! usable bit. A Gbit is 2^30 bits throughout.

use crate::tech::Technology;
use serde::Serialize;

/// Bits in a Gbit: binary, as memory parts are sized.
pub const BITS_PER_GBIT: f64 = (1u64 << 30) as f64;

/// Where a tier's area comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AreaBasis {
    /// Capacity over the catalog's density: whole dies, periphery included.
    Density,
    /// Capacity x cell area (the midpoint of the catalog's F^2 range) x
    /// feature size squared: the cell array only, no periphery, so smaller
    /// than a die of that capacity.
    CellArea,
}

/// Area and cost of one tier; each figure None when the catalog lacks what
/// it needs, or when the tier's capacity counts objects (`unit_size`), which
/// have no size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AreaCost {
    pub area_cm2: Option<f64>,
    pub area_basis: Option<AreaBasis>,
    pub cost_usd: Option<f64>,
    pub cost_per_usable_gbit: Option<f64>,
    /// The year the price is from (null without a price).
    pub price_year: Option<u32>,
}

/// Area and cost of `capacity` bytes of `t` (objects, and so no figure, when
/// `unit_size`).
pub fn area_cost(t: &Technology, capacity: u64, unit_size: bool) -> AreaCost {
    if unit_size {
        return AreaCost::default();
    }
    let gbit = capacity as f64 * 8.0 / BITS_PER_GBIT;
    let (area_cm2, area_basis) = match (t.density_gbit_cm2, t.cell_area_f2, t.feature_nm) {
        (Some(d), _, _) => (Some(gbit / d), Some(AreaBasis::Density)),
        (None, Some([lo, hi]), Some(f_nm)) => {
            let f_cm = f_nm * 1e-7;
            let cell_cm2 = (lo + hi) / 2.0 * f_cm * f_cm;
            (
                Some(gbit * BITS_PER_GBIT * cell_cm2),
                Some(AreaBasis::CellArea),
            )
        }
        _ => (None, None),
    };
    let price = t.price_usd_per_gbit;
    AreaCost {
        area_cm2,
        area_basis,
        cost_usd: price.map(|p| gbit * p),
        // A part sold with a share g of its blocks good costs its price per
        // raw Gbit over g per Gbit it can hold.
        cost_per_usable_gbit: price.map(|p| p / t.good_block_fraction.unwrap_or(1.0)),
        price_year: price.and(t.price_year),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tech::Catalog;

    #[test]
    fn density_price_and_bad_blocks() {
        let c = Catalog::builtin();
        // 1 GiB of S4's NAND: 8 Gbit at 1.42 Gbit/cm^2 and $21/Gbit.
        let nand = area_cost(c.get("NAND-SLC").unwrap(), 1 << 30, false);
        assert!((nand.area_cm2.unwrap() - 8.0 / 1.42).abs() < 1e-12);
        assert_eq!(nand.area_basis, Some(AreaBasis::Density));
        assert!((nand.cost_usd.unwrap() - 168.0).abs() < 1e-9);
        // S1: at least 8,032 good blocks of 8,192.
        assert!((nand.cost_per_usable_gbit.unwrap() - 21.0 * 8192.0 / 8032.0).abs() < 1e-9);
        // DRAM has every block good.
        let dram = area_cost(c.get("DRAM-DDR2").unwrap(), 128 << 20, false);
        assert_eq!(dram.cost_per_usable_gbit, Some(48.0));
        assert!((dram.cost_usd.unwrap() - 48.0).abs() < 1e-9);
    }

    #[test]
    fn cell_area_when_no_density() {
        let mut t = Catalog::builtin().get("PCM-SLC").unwrap().clone();
        t.feature_nm = Some(45.0);
        let a = area_cost(&t, 1 << 27, false); // 1 Gbit
        let cell = 5.0 * (45e-7f64).powi(2);
        assert!((a.area_cm2.unwrap() - BITS_PER_GBIT * cell).abs() < 1e-12);
        assert_eq!(a.area_basis, Some(AreaBasis::CellArea));
        // Without a feature size there is no area, and no price no cost.
        t.feature_nm = None;
        let a = area_cost(&t, 1 << 27, false);
        assert_eq!((a.area_cm2, a.cost_usd), (None, None));
    }

    #[test]
    fn objects_have_no_area() {
        let c = Catalog::builtin();
        assert_eq!(
            area_cost(c.get("NAND-SLC").unwrap(), 1000, true),
            AreaCost::default()
        );
    }
}
