//! What a tier's devices are worth beside their timing: die area and price
//! from the catalog (`area_cost`), what the writes a run sends them wear
//! (`wear`), and the energy they draw (`energy`), reported beside the
//! counters.

pub mod area_cost;
pub mod basis;
pub mod energy;
pub mod ftl;
pub mod ftl_forms;
pub mod ftl_result;
pub mod ftl_space;
pub mod ftl_spec;
pub mod overload;
pub mod price;
pub mod wear;

pub use area_cost::{area_cost, AreaBasis, AreaCost, BITS_PER_GBIT};
pub use basis::LatencyBasis;
pub use energy::{Activity, DeviceEnergy, PowerDown, RunEnergy};
