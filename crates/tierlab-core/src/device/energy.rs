//! Energy and power of a device (a tier or the backing store) over a run:
//! the dynamic energy of the operations it served, from the catalog's
//! per-access energies, plus its background power by state over the run's
//! counted time, from the catalog's power per Gbit x its capacity.
//!
//! - Dynamic: each access unit read costs `energy_read_pj`, each one
//!   programmed `energy_write_pj`, each erase-block erase `energy_erase_pj`.
//!   The counts are the cache layer's own counters (`pages_read`,
//!   `pages_programmed`, the wear model's `erases`), kept per event: no
//!   scan of anything per request.
//! - Background: the device is *active* for its busy share of the counted
//!   time and *idle* (or, with `power_down = "oracle"`, in *power-down*)
//!   for the rest. The busy share is busy time over channels x elapsed
//!   time (each channel holds an equal share of the capacity), at most 1.
//!   Busy time is the device's service time: the time model's station
//!   busy time, or in a serial run the sum of the device's charges less the
//!   tier's software overhead. Elapsed time is the time model's elapsed
//!   time after warm-up, or the serial run's simulated time after it.
//! - Oracle power-down, as FlashCache (Kgil and Mudge, CASES 2006, section
//!   6.2) assumes for its DRAM baseline: the device enters power-down
//!   "whenever possible", i.e. every idle nanosecond is spent at the
//!   power-down power (S4 Table 1 footnote: DDR2 18 mW per Gbit), with no
//!   wake-up delay or energy.
//!
//! A figure the catalog lacks gives a null part, never a zero; a part with
//! no activity (no reads, say) is 0 whatever the catalog says. `energy_j`
//! adds the known parts and `energy_unknown` names those left out, so a
//! non-empty list says the total is a lower bound.

use crate::device::BITS_PER_GBIT;
use crate::tech::Technology;
use serde::{Deserialize, Serialize};

/// What a device does with its idle time (config key `power_down`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PowerDown {
    /// Idle time at the idle power (S4's DRAM "with no power management").
    #[default]
    None,
    /// Every idle nanosecond at the power-down power, with no wake-up cost:
    /// S4's oracle power management of DRAM.
    Oracle,
}

/// What a device did over the counted part of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Activity {
    /// Access units (the medium's pages) read and programmed: each
    /// operation rounded up to whole units.
    pub pages_read: u64,
    pub pages_programmed: u64,
    /// Erase-block erases; None when unknown (wear.rs).
    pub erases: Option<u64>,
    /// Service time, summed over the device's channels (ns).
    pub busy_ns: f64,
    pub channels: u32,
    /// Counted time (ns): after warm-up.
    pub elapsed_ns: f64,
    /// Bytes of the device's medium; None when unknown (capacities counting
    /// objects, a backing store without `capacity`).
    pub capacity_bytes: Option<u64>,
}

/// Energy by part (joules). Null: the catalog lacks the figure.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct EnergyParts {
    pub read_j: Option<f64>,
    pub write_j: Option<f64>,
    pub erase_j: Option<f64>,
    /// active_j + idle_j + powerdown_j.
    pub background_j: Option<f64>,
    pub active_j: Option<f64>,
    pub idle_j: Option<f64>,
    pub powerdown_j: Option<f64>,
}

/// A device's energy and power, flattened into its tier's (or the backing
/// store's) result.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DeviceEnergy {
    /// The known parts added up (J); null when no part is known.
    pub energy_j: Option<f64>,
    /// `energy_j` over the counted time (W).
    pub power_w: Option<f64>,
    pub energy: EnergyParts,
    /// Parts with activity whose catalog figure is missing ("read",
    /// "write", "erase", "background"): left out of `energy_j`.
    pub energy_unknown: Vec<&'static str>,
    /// The device's service time (ns), summed over its channels.
    pub device_busy_ns: f64,
    /// The share of capacity x time spent active (a fraction).
    pub active_share: Option<f64>,
    pub power_down: PowerDown,
}

/// pJ to J.
const J_PER_PJ: f64 = 1e-12;

/// The energy of `count` operations at `pj` each: 0 with no operations
/// (whatever the catalog says), None when there are some and no figure.
fn dynamic(count: u64, pj: Option<f64>) -> Option<f64> {
    if count == 0 {
        return Some(0.0);
    }
    pj.map(|e| count as f64 * e * J_PER_PJ)
}

/// Whether the medium erases before it writes (flash).
fn erases(t: &Technology) -> bool {
    t.erase_ns.is_some() || t.energy_erase_pj.is_some() || t.erase_block_bytes.is_some()
}

impl DeviceEnergy {
    /// Energy not modelled for this device: every part unknown.
    pub fn unknown() -> Self {
        DeviceEnergy {
            energy_unknown: vec!["read", "write", "erase", "background"],
            ..Default::default()
        }
    }

    /// The energy of a device of medium `t` that did `a`, with idle time
    /// spent as `pd` says.
    pub fn of(t: &Technology, a: &Activity, pd: PowerDown) -> Self {
        let read_j = dynamic(a.pages_read, t.energy_read_pj);
        let write_j = dynamic(a.pages_programmed, t.energy_write_pj);
        let erase_j = if !erases(t) {
            Some(0.0)
        } else {
            match a.erases {
                Some(n) => dynamic(n, t.energy_erase_pj),
                None => None,
            }
        };
        let elapsed = if a.elapsed_ns.is_finite() && a.elapsed_ns > 0.0 {
            a.elapsed_ns
        } else {
            0.0
        };
        let active_share = (elapsed > 0.0)
            .then(|| (a.busy_ns / (a.channels.max(1) as f64 * elapsed)).clamp(0.0, 1.0));
        // Background: mW per Gbit x Gbit x seconds = mJ.
        let state = |mw: Option<f64>, ns: f64| -> Option<f64> {
            if ns <= 0.0 {
                return Some(0.0);
            }
            let gbit = a.capacity_bytes? as f64 * 8.0 / BITS_PER_GBIT;
            mw.map(|p| p * 1e-3 * gbit * ns * 1e-9)
        };
        let share = active_share.unwrap_or(0.0);
        let active_ns = share * elapsed;
        let idle_ns = elapsed - active_ns;
        let active_j = state(t.active_mw_per_gbit, active_ns);
        let (idle_j, powerdown_j) = match pd {
            PowerDown::None => (state(t.idle_mw_per_gbit, idle_ns), Some(0.0)),
            PowerDown::Oracle => (Some(0.0), state(t.powerdown_mw_per_gbit, idle_ns)),
        };
        let background_j = match (active_j, idle_j, powerdown_j) {
            (Some(x), Some(y), Some(z)) => Some(x + y + z),
            _ => None,
        };
        let mut unknown = Vec::new();
        let mut total = 0.0;
        // Whether some known part had activity: a total of zeros of idle
        // parts beside unknown ones is no figure.
        let mut measured = false;
        for (name, part, active) in [
            ("read", read_j, a.pages_read > 0),
            ("write", write_j, a.pages_programmed > 0),
            ("erase", erase_j, a.erases.unwrap_or(0) > 0),
            ("background", background_j, elapsed > 0.0),
        ] {
            match part {
                Some(j) => {
                    total += j;
                    measured |= active;
                }
                None => unknown.push(name),
            }
        }
        let total = (unknown.is_empty() || measured).then_some(total);
        DeviceEnergy {
            energy_j: total,
            power_w: total
                .filter(|_| elapsed > 0.0)
                .map(|j| j / (elapsed * 1e-9)),
            energy: EnergyParts {
                read_j,
                write_j,
                erase_j,
                background_j,
                active_j,
                idle_j,
                powerdown_j,
            },
            energy_unknown: unknown,
            device_busy_ns: a.busy_ns,
            active_share,
            power_down: pd,
        }
    }
}

/// A run's total over its devices: the known energies added up (null when
/// none is known), their power over `elapsed_ns`, and the devices' unknown
/// parts as "device.part".
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RunEnergy {
    pub energy_j: Option<f64>,
    pub power_w: Option<f64>,
    pub energy_unknown: Vec<String>,
}

impl RunEnergy {
    pub fn of<'a>(
        devices: impl IntoIterator<Item = (&'a str, &'a DeviceEnergy)>,
        elapsed_ns: f64,
    ) -> Self {
        let mut total: Option<f64> = None;
        let mut unknown = Vec::new();
        for (name, d) in devices {
            if let Some(j) = d.energy_j {
                total = Some(total.unwrap_or(0.0) + j);
            }
            unknown.extend(d.energy_unknown.iter().map(|p| format!("{name}.{p}")));
        }
        RunEnergy {
            energy_j: total,
            power_w: total
                .filter(|_| elapsed_ns.is_finite() && elapsed_ns > 0.0)
                .map(|j| j / (elapsed_ns * 1e-9)),
            energy_unknown: unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tech::Catalog;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-30)
    }

    #[test]
    fn dram_background_by_state_and_the_oracle() {
        let c = Catalog::builtin();
        let ddr2 = c.get("DRAM-DDR2").unwrap();
        // 128 MiB = 1 Gbit, busy 1 s of 4 s on one channel.
        let a = Activity {
            busy_ns: 1e9,
            channels: 1,
            elapsed_ns: 4e9,
            capacity_bytes: Some(128 << 20),
            pages_read: 10,
            ..Default::default()
        };
        let e = DeviceEnergy::of(ddr2, &a, PowerDown::None);
        // S4 Table 1: 878 mW active, 80 mW idle per Gbit.
        assert!(close(e.energy.active_j.unwrap(), 0.878));
        assert!(close(e.energy.idle_j.unwrap(), 0.080 * 3.0));
        assert_eq!(e.energy.powerdown_j, Some(0.0));
        // DDR2 has no per-access energy: reads are unknown, left out.
        assert_eq!(e.energy.read_j, None);
        assert_eq!(e.energy_unknown, vec!["read"]);
        assert_eq!(e.energy.write_j, Some(0.0));
        assert_eq!(e.energy.erase_j, Some(0.0));
        assert!(close(e.energy_j.unwrap(), 0.878 + 0.24));
        assert!(close(e.power_w.unwrap(), (0.878 + 0.24) / 4.0));
        assert_eq!(e.active_share, Some(0.25));
        // The oracle: the 3 idle seconds at 18 mW per Gbit.
        let o = DeviceEnergy::of(ddr2, &a, PowerDown::Oracle);
        assert_eq!(o.energy.idle_j, Some(0.0));
        assert!(close(o.energy.powerdown_j.unwrap(), 0.018 * 3.0));
        assert!(close(o.energy.background_j.unwrap(), 0.878 + 0.054));
    }

    #[test]
    fn nand_dynamic_energy_and_channels() {
        let c = Catalog::builtin();
        let nand = c.get("NAND-SLC").unwrap();
        // 1 GiB = 8 Gbit on 8 channels, 8 s busy in all over 2 s: half the
        // capacity-time active.
        let a = Activity {
            pages_read: 1000,
            pages_programmed: 200,
            erases: Some(3),
            busy_ns: 8e9,
            channels: 8,
            elapsed_ns: 2e9,
            capacity_bytes: Some(1 << 30),
        };
        let e = DeviceEnergy::of(nand, &a, PowerDown::None);
        // S3: 10 nJ per page access; erase 15 mA x 3.3 V x 1.5 ms.
        assert!(close(e.energy.read_j.unwrap(), 1000.0 * 10e-9));
        assert!(close(e.energy.write_j.unwrap(), 200.0 * 10e-9));
        assert!(close(e.energy.erase_j.unwrap(), 3.0 * 74.25e-6));
        assert_eq!(e.active_share, Some(0.5));
        // S4: 27 mW active, 6 uW idle per Gbit; 8 Gbit, 1 s each.
        assert!(close(e.energy.active_j.unwrap(), 0.027 * 8.0));
        assert!(close(e.energy.idle_j.unwrap(), 6e-6 * 8.0));
        assert!(e.energy_unknown.is_empty());
        // Flash has no power-down figure: the oracle leaves it unknown.
        let o = DeviceEnergy::of(nand, &a, PowerDown::Oracle);
        assert_eq!(o.energy.powerdown_j, None);
        assert_eq!(o.energy_unknown, vec!["background"]);
        // Erases unknown (no erase block) on an erasing medium: unknown.
        let u = DeviceEnergy::of(nand, &Activity { erases: None, ..a }, PowerDown::None);
        assert_eq!(u.energy.erase_j, None);
    }

    #[test]
    fn no_capacity_no_time_no_figures() {
        let c = Catalog::builtin();
        let hdd = c.get("HDD").unwrap();
        let a = Activity {
            pages_read: 5,
            busy_ns: 1e6,
            channels: 1,
            elapsed_ns: 1e9,
            ..Default::default()
        };
        let e = DeviceEnergy::of(hdd, &a, PowerDown::None);
        assert_eq!(e.energy_j, None);
        assert_eq!(e.energy_unknown, vec!["read", "background"]);
        // Nothing elapsed: no power, and no background to spend.
        let z = DeviceEnergy::of(
            c.get("DRAM-DDR2").unwrap(),
            &Activity {
                elapsed_ns: 0.0,
                capacity_bytes: Some(1 << 20),
                ..Default::default()
            },
            PowerDown::None,
        );
        assert_eq!(z.energy_j, Some(0.0));
        assert_eq!((z.power_w, z.active_share), (None, None));
    }

    #[test]
    fn run_total_adds_the_known() {
        let c = Catalog::builtin();
        let a = Activity {
            busy_ns: 0.0,
            channels: 1,
            elapsed_ns: 1e9,
            capacity_bytes: Some(128 << 20),
            ..Default::default()
        };
        let d = DeviceEnergy::of(c.get("DRAM-DDR2").unwrap(), &a, PowerDown::None);
        let h = DeviceEnergy::of(
            c.get("HDD").unwrap(),
            &Activity {
                capacity_bytes: None,
                ..a
            },
            PowerDown::None,
        );
        let r = RunEnergy::of([("dram", &d), ("backing", &h)], 1e9);
        assert!(close(r.energy_j.unwrap(), 0.080));
        assert!(close(r.power_w.unwrap(), 0.080));
        assert_eq!(r.energy_unknown, vec!["backing.background".to_string()]);
    }
}
