//! What a run reports of a tier's or the backing store's FTL
//! (`Ftl::result`), and its lifetimes rescaled to a time model's elapsed
//! time.

use super::ftl::Victim;

impl FtlResult {
    /// The lifetimes over `to_s` seconds instead of the `from_s` they were
    /// computed over (a time model's elapsed time replaces the serial
    /// sum): they scale with the time the same writes took.
    pub fn retime(&mut self, from_s: f64, to_s: f64) {
        let ok = |t: f64| t > 0.0 && t.is_finite();
        let k = if ok(from_s) && ok(to_s) {
            Some(to_s / from_s)
        } else {
            None
        };
        for y in [
            &mut self.first_worn_years,
            &mut self.perfect_levelling_years,
        ] {
            *y = match (*y, k) {
                (Some(v), Some(k)) => Some(v * k),
                _ => None,
            };
        }
    }
}

/// A flash tier's FTL figures in a run's result (docs/device.md#flash-translation-layer).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FtlResult {
    pub op: f64,
    pub victim: Victim,
    pub pages_per_block: u32,
    pub page_bytes: u64,
    pub physical_blocks: u32,
    pub physical_bytes: u64,
    /// Pages programmed (host, GC copies, levelling moves) per host page.
    pub write_amplification: f64,
    pub host_pages_written: u64,
    pub gc_pages_read: u64,
    pub gc_pages_written: u64,
    pub wl_pages_moved: u64,
    pub erases: u64,
    pub trims: u64,
    /// Pages written while no logical page was free (objects rounding up
    /// to more pages than the capacity holds), onto a shared page.
    pub overflow_pages: u64,
    pub erases_per_block_mean: f64,
    pub erases_per_block_std: f64,
    pub erases_per_block_max: u32,
    /// Years until the most-erased block reaches the endurance, at the
    /// run's rate (null: nothing erased, or no endurance).
    pub first_worn_years: Option<f64>,
    /// Years with perfect levelling: endurance x physical bytes / bytes
    /// programmed per second (write amplification included).
    pub perfect_levelling_years: Option<f64>,
}
