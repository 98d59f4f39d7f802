//! One cost basis: a medium's prices as a series, each point with its year
//! and source, so that a run can price every tier in one year (`[cost]
//! year = N`) instead of each medium at whatever year its one price is
//! from (a 2006 flash price beside a 2015 DRAM price made flash look 38x
//! dearer per bit). Without `[cost]` each tier keeps its catalog price and
//! the output names its year.

use crate::tech::Technology;
use serde::{Deserialize, Serialize};

/// Defined beside the catalog (`tech`), whose entries carry a series.
pub use crate::tech::PricePoint;

/// `[cost]`: the year every tier is priced in.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CostConfig {
    pub year: u32,
}

/// The years `t` has a price for, oldest first.
pub fn years(t: &Technology) -> Vec<u32> {
    let mut y: Vec<u32> = t
        .prices
        .iter()
        .map(|p| p.year)
        .chain(t.price_year)
        .collect();
    y.sort_unstable();
    y.dedup();
    y
}

/// `t` priced in `year`: its price and price year replaced by that year's
/// point; an error (for `cost.year`) when no point has that year.
pub fn in_year(t: &Technology, year: u32) -> Result<Technology, String> {
    let p = t
        .prices
        .iter()
        .find(|p| p.year == year)
        .map(|p| p.usd_per_gbit)
        .or_else(|| {
            (t.price_year == Some(year))
                .then_some(t.price_usd_per_gbit)
                .flatten()
        });
    match p {
        Some(p) => {
            let mut t = t.clone();
            t.price_usd_per_gbit = Some(p);
            t.price_year = Some(year);
            Ok(t)
        }
        None => {
            let have = years(t);
            Err(format!(
                "{} has no price in {year} ({}); give one as techs.{}.prices = \
                 [{{ year = {year}, usd_per_gbit = ..., source = \"...\" }}] or choose a year it has",
                t.name,
                if have.is_empty() {
                    "it has none".to_string()
                } else {
                    format!(
                        "its prices are from {}",
                        have.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    )
                },
                t.name
            ))
        }
    }
}

/// A run's money figures under one cost basis.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunCost {
    /// The year every tier is priced in.
    pub year: u32,
    /// The tiers' costs added up (US$; the backing store is not priced).
    pub total_usd: f64,
    /// Requests per simulated second per US$ of tiers.
    pub throughput_rps_per_usd: f64,
    /// US$ of tiers per million requests per second of throughput.
    pub usd_per_million_rps: f64,
}

impl RunCost {
    pub fn of(year: u32, tier_costs: &[f64], throughput_rps: f64) -> Self {
        let total: f64 = tier_costs.iter().sum();
        RunCost {
            year,
            total_usd: total,
            throughput_rps_per_usd: if total > 0.0 {
                throughput_rps / total
            } else {
                0.0
            },
            usd_per_million_rps: if throughput_rps > 0.0 {
                total / throughput_rps * 1e6
            } else {
                0.0
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tech::Catalog;

    #[test]
    fn prices_a_medium_in_a_year_or_says_which_it_has() {
        let c = Catalog::builtin();
        let ddr4 = c.get("DRAM-DDR4").unwrap();
        for y in years(ddr4) {
            let t = in_year(ddr4, y).unwrap();
            assert_eq!(t.price_year, Some(y));
            assert!(t.price_usd_per_gbit.unwrap() > 0.0);
        }
        let e = in_year(ddr4, 1999).unwrap_err();
        assert!(
            e.contains("no price in 1999") && e.contains("its prices are from"),
            "{e}"
        );
        let e = in_year(c.get("HDD").unwrap(), 2023).unwrap_err();
        assert!(e.contains("it has none"), "{e}");
        // Every point names its year in its source and is positive.
        for t in crate::tech::builtin() {
            for p in &t.prices {
                assert!(p.usd_per_gbit > 0.0, "{}", t.name);
                assert!(
                    p.source.contains(&p.year.to_string()),
                    "{}: {}",
                    t.name,
                    p.year
                );
            }
        }
    }

    #[test]
    fn ddr5_and_qlc_are_priced_in_their_points_years_only() {
        let c = Catalog::builtin();
        for (name, year, usd) in [
            // US$6.01 per 16 Gb chip (SemiMedia, June 2025).
            ("DRAM-DDR5", 2025, 6.01 / 16.0),
            // US$219.99 per 10^12 bytes (Crucial P1, November 2018).
            (
                "NAND-QLC",
                2018,
                219.99 / (1e12 * 8.0 / (1u64 << 30) as f64),
            ),
            // US$69 per 10^12 bytes (Crucial P310, October 2025).
            ("NAND-QLC", 2025, 69.0 / (1e12 * 8.0 / (1u64 << 30) as f64)),
        ] {
            let t = in_year(c.get(name).unwrap(), year).unwrap();
            let p = t.price_usd_per_gbit.unwrap();
            assert!(
                (p - usd).abs() < 1e-6 * usd.max(1.0),
                "{name} {year}: {p} vs {usd}"
            );
            assert_eq!(t.price_year, Some(year));
        }
        // No DDR5 or QLC point for 2023 (docs/device.md#cost-basis).
        for name in ["DRAM-DDR5", "NAND-QLC"] {
            let e = in_year(c.get(name).unwrap(), 2023).unwrap_err();
            assert!(e.contains("no price in 2023") && e.contains("2025"), "{e}");
        }
    }

    #[test]
    fn run_cost_is_total_and_rates() {
        let r = RunCost::of(2023, &[10.0, 30.0], 2000.0);
        assert_eq!(r.total_usd, 40.0);
        assert_eq!(r.throughput_rps_per_usd, 50.0);
        assert_eq!(r.usd_per_million_rps, 20_000.0);
    }
}
