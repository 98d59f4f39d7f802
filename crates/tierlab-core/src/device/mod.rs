//! What a tier's devices are worth beside their timing: die area and price
//! from the catalog (`area_cost`), and what the writes a run sends them wear
//! (`wear`), reported beside the counters.

pub mod area_cost;
pub mod wear;

pub use area_cost::{area_cost, AreaBasis, AreaCost, BITS_PER_GBIT};
