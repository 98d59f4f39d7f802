//! Turns accesses into simulated time: the one cost function, which
//! `tierlab.analysis.access_ns` asks for through the binding.
//!
//! An access to a medium costs its latency, plus the transfer of the request
//! rounded up to whole access units at the medium's bandwidth (or in whole
//! bursts, for a medium whose source gives a burst size and time), plus the
//! tier's software overhead (S3 measures 21.6 us minor / 58.6 us major fault
//! paths; S5 shows such overheads decide whether caching pays). Every access
//! is on the request's critical path: no overlap between tiers is modelled,
//! as in S1's emulator, whose page copies are synchronous (the time layer,
//! time/, queues these same charges on devices when a load is configured).
//!
//! Every charge is a whole number of nanoseconds (rounded to the nearest):
//! sums of them are then exact in any order, so a run's times do not
//! depend on how its accesses are added up, and a closed-loop run of one
//! client adds up to exactly the serial run's figures.

use crate::tech::Technology;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccessCost {
    /// Latency plus overhead of a read, and of a write.
    read_fixed: f64,
    write_fixed: f64,
    /// Nanoseconds per byte moved.
    ns_per_byte: f64,
    unit: u64,
    /// The software overhead inside the fixed parts (whole ns): the time
    /// layer counts it as stack time, not device time.
    overhead: f64,
    /// `!(unit - 1)` when the unit is a power of two (every catalog unit
    /// is), else 0: decided once here, not at each of a run's accesses.
    pow2_mask: u64,
    /// The medium's own access unit (its page: what one program writes).
    page: u32,
}

impl AccessCost {
    /// `slowdown` multiplies the latencies and divides the bandwidth (S1's
    /// file memory "k times slower than DRAM").
    pub fn new(t: &Technology, slowdown: f64, overhead_ns: f64) -> Self {
        let unit = t.access_unit.max(1) as u64;
        // A burst medium moves whole bursts: rounding to the least common
        // multiple of the access unit and the burst size charges both.
        let (ns_per_byte, unit) = match (t.bandwidth_mb_s, t.burst_bytes, t.burst_ns) {
            (_, Some(b), Some(ns)) if b > 0 => {
                let b = b as u64;
                (ns / b as f64, (unit / gcd(unit, b)).saturating_mul(b))
            }
            // `validate` refuses a medium without a transfer model; a
            // bandwidth of None here is only a hand-built Technology.
            (bw, _, _) => (bw.map_or(0.0, |mb| 1e3 / mb), unit),
        };
        let ns_per_byte = ns_per_byte * slowdown;
        let overhead_ns = whole(overhead_ns);
        AccessCost {
            overhead: overhead_ns,
            pow2_mask: if unit.is_power_of_two() {
                !(unit - 1)
            } else {
                0
            },
            read_fixed: t.read_ns * slowdown + overhead_ns,
            write_fixed: t.write_ns * slowdown + overhead_ns,
            ns_per_byte,
            unit,
            page: t.access_unit.max(1),
        }
    }

    /// The unit every transfer is rounded up to (bytes): an access of 1 to
    /// this many bytes costs the same as one of 1 byte.
    pub fn transfer_unit(&self) -> u64 {
        self.unit
    }

    /// The medium's access unit in bytes (a flash page).
    pub fn page(&self) -> u32 {
        self.page
    }

    /// Access units (pages) an access of `size` bytes reads or programs,
    /// rounded up: what the device layer charges per-access energy for.
    #[inline]
    pub fn pages(&self, size: u32) -> u64 {
        (size as u64).div_ceil(self.page as u64)
    }

    /// The device's share of `reads` and `writes` accesses that moved
    /// `pages` access units in all (ns): their charges less the software
    /// overhead in each, from counts alone (device/energy.rs, a serial
    /// run's busy time). Equal to the sum of the charges but for their
    /// rounding to whole ns, and for a burst medium whose bursts are not a
    /// whole number of its access units (NOR, FRAM), whose partial bursts
    /// it does not round up.
    pub fn busy_ns(&self, reads: u64, writes: u64, pages: u64) -> f64 {
        let bytes = pages as f64 * self.page as f64;
        reads as f64 * (self.read_fixed - self.overhead)
            + writes as f64 * (self.write_fixed - self.overhead)
            + bytes * self.ns_per_byte
    }

    /// The cost of one access of `size` bytes.
    pub fn access(&self, size: u32, write: bool) -> f64 {
        if write {
            self.write(size)
        } else {
            self.read(size)
        }
    }

    #[inline(always)]
    fn transfer(&self, size: u32) -> f64 {
        // Catalog units are powers of two: round with a mask, not a division.
        let bytes = if self.pow2_mask != 0 {
            (size as u64 + self.unit - 1) & self.pow2_mask
        } else {
            (size as u64).div_ceil(self.unit) * self.unit
        };
        // A u32 size rounded up to a u32 unit fits an i64, whose conversion
        // to f64 is one instruction (a u64's is a branchy sequence).
        bytes as i64 as f64 * self.ns_per_byte
    }

    #[inline(always)]
    pub fn read(&self, size: u32) -> f64 {
        whole(self.read_fixed + self.transfer(size))
    }

    #[inline(always)]
    pub fn write(&self, size: u32) -> f64 {
        whole(self.write_fixed + self.transfer(size))
    }

    /// The transfer part of an access of `size` bytes (ns, whole): the
    /// time it holds the medium's bandwidth, its latency left out (the
    /// nodes as bandwidth servers, run/tiered.rs).
    pub fn transfer_ns(&self, size: u32) -> f64 {
        whole(self.transfer(size))
    }

    /// The software overhead in every charge (ns).
    pub fn overhead(&self) -> f64 {
        self.overhead
    }
}

/// 1.5 x 2^52: a float this large has no fraction bits, so adding it
/// rounds to a whole number (to nearest, ties to even).
const ROUND: f64 = 6_755_399_441_055_744.0;

/// `ns` rounded to the nearest whole nanosecond. Two additions: the
/// baseline x86-64 target has no rounding instruction (`f64::round` is a
/// call to libm), and Rust's float-to-integer casts saturate (a compare and
/// moves each); exact for charges from 0 to 2^51 ns (26 days).
#[inline(always)]
pub fn whole(ns: f64) -> f64 {
    (ns + ROUND) - ROUND
}

/// `ns` (0 to 2^52) rounded to the nearest whole nanosecond, as an
/// integer: the bits of `ns + 2^52` hold it in their mantissa.
#[inline(always)]
pub fn whole_u64(ns: f64) -> u64 {
    const TWO52: f64 = 4_503_599_627_370_496.0;
    debug_assert!((0.0..TWO52).contains(&ns), "{ns} ns out of range");
    (ns + TWO52).to_bits() - TWO52.to_bits()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tech::Catalog;

    #[test]
    fn nand_page_read_and_slowdown() {
        let c = Catalog::builtin();
        let nand = AccessCost::new(c.get("NAND-SLC").unwrap(), 1.0, 0.0);
        // 25 us + 4096 B at 50 MB/s (81.92 us), S4's figures.
        assert!((nand.read(4096) - (25_000.0 + 81_920.0)).abs() < 1e-6);
        // A 100-byte read still moves one 2 KiB page.
        assert!((nand.read(100) - (25_000.0 + 40_960.0)).abs() < 1e-6);
        let fm = AccessCost::new(c.get("FILE-MEMORY").unwrap(), 3.0, 0.0);
        let dram = AccessCost::new(c.get("FILE-MEMORY").unwrap(), 1.0, 0.0);
        assert!((fm.read(4096) - 3.0 * dram.read(4096)).abs() < 1e-6);
    }

    #[test]
    fn burst_media_move_whole_bursts() {
        let c = Catalog::builtin();
        let nor = AccessCost::new(c.get("NOR").unwrap(), 1.0, 0.0);
        // 200 ns + 128 pages of 32 bytes at 475 ns each (M29EW page reads).
        assert!((nor.read(4096) - (200.0 + 128.0 * 475.0)).abs() < 1e-6);
        // One byte still moves a whole page.
        assert!((nor.read(1) - (200.0 + 475.0)).abs() < 1e-6);
        let fram = AccessCost::new(c.get("FRAM").unwrap(), 2.0, 0.0);
        assert!((fram.read(3) - 2.0 * (55.0 + 2.0 * 25.0)).abs() < 1e-6);
    }

    #[test]
    fn rounding_to_whole_ns() {
        for (x, w) in [
            (0.0, 0.0),
            (0.4, 0.0),
            (0.6, 1.0),
            (106_919.7, 106_920.0),
            (7447.27, 7447.0),
        ] {
            assert_eq!(whole(x), w, "{x}");
            assert_eq!(whole_u64(x), w as u64, "{x}");
        }
        assert_eq!(whole_u64(8.5e12), 8_500_000_000_000);
    }

    #[test]
    fn page_access_order() {
        // The defect: PCM moved a 4 KiB page in no time and beat DRAM.
        let c = Catalog::builtin();
        let page = |n: &str| AccessCost::new(c.get(n).unwrap(), 1.0, 0.0).read(4096);
        assert!(page("DRAM-DDR3") < page("PCM-SLC"));
        assert!(page("PCM-SLC") <= page("PCM-MLC"));
        assert!(page("NOR") > page("DRAM-DDR3"));
        assert!(page("FRAM") > page("DRAM-DDR3"));
        assert!(page("NAND-SLC") < page("HDD"));
    }
}
