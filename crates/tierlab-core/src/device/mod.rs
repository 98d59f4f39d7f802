//! What a tier's device is worth beside its timing: die area and price from
//! the catalog (`area_cost`). Figures per simulated time (energy, power,
//! wear) need the time model and live with it.

pub mod area_cost;

pub use area_cost::{area_cost, AreaBasis, AreaCost, BITS_PER_GBIT};
