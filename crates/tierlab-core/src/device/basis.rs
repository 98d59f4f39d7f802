//! The latency basis of a catalog figure: a medium's own access time (a
//! cell or array figure, a chip's datasheet time, a disk's seek and
//! rotation) or the time a load from the CPU sees (through the cache miss
//! path, the memory controller and any link, or a drive as the host
//! measures it). The two differ by the path from the CPU, about 100 ns
//! for memory: S3's DRAM cell figure is 10 ns, CPU-attached DRAM is loaded
//! in just under 100 ns (Intel Architecture Day 2018). A hierarchy that
//! puts a device figure beside a loaded one models a gap its sources do
//! not have, so the run warns (`mixed_warning`).

/// Defined beside the catalog (`tech`), whose entries carry it.
pub use crate::tech::LatencyBasis;

/// Below this read latency the path from the CPU (about 100 ns, see the
/// module comment) is 10% or more of a figure, so mixing bases changes
/// the answer; a drive's or a disk's figures (microseconds and up) swamp it.
pub const MIXED_BELOW_NS: f64 = 1000.0;

/// One device of a hierarchy, as the basis check sees it.
pub struct Placed<'a> {
    /// `tier "dram"` or `backing`.
    pub what: String,
    pub tech: &'a str,
    pub read_ns: f64,
    pub basis: Option<LatencyBasis>,
}

/// The warning for a hierarchy whose fast devices (read under
/// `MIXED_BELOW_NS`) mix device and loaded figures; None when they agree
/// or an entry states no basis (a config's own entry without
/// `latency_basis`).
pub fn mixed_warning(devices: &[Placed]) -> Option<String> {
    let fast: Vec<&Placed> = devices
        .iter()
        .filter(|d| d.read_ns < MIXED_BELOW_NS && d.basis.is_some())
        .collect();
    let list = |b: LatencyBasis| {
        fast.iter()
            .filter(|d| d.basis == Some(b))
            .map(|d| format!("{} ({}, {} ns)", d.what, d.tech, d.read_ns))
            .collect::<Vec<_>>()
    };
    let (device, loaded) = (list(LatencyBasis::Device), list(LatencyBasis::Loaded));
    if device.is_empty() || loaded.is_empty() {
        return None;
    }
    Some(format!(
        "latency bases mixed: {} give the medium's own (device) latency, {} the latency \
         a load from the CPU sees; the gap between them is partly the CPU's path (about \
         100 ns), not the media. Use entries of one basis (DRAM-DDR4 is CPU-attached DRAM \
         as loaded), or give techs.NAME.read_ns, write_ns and latency_basis \
         (docs/techs.md#latency-basis).",
        device.join(", "),
        loaded.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(what: &str, read_ns: f64, basis: Option<LatencyBasis>) -> Placed<'static> {
        Placed {
            what: what.into(),
            tech: "T",
            read_ns,
            basis,
        }
    }

    #[test]
    fn warns_only_when_fast_devices_mix_bases() {
        use LatencyBasis::*;
        let w = mixed_warning(&[
            p("tier \"a\"", 10.0, Some(Device)),
            p("tier \"b\"", 200.0, Some(Loaded)),
        ])
        .unwrap();
        assert!(w.contains("tier \"a\"") && w.contains("tier \"b\""), "{w}");
        // A drive's loaded figure beside a DRAM cell figure: the CPU's path is lost in it.
        assert!(mixed_warning(&[
            p("a", 10.0, Some(Device)),
            p("backing", 85_000.0, Some(Loaded))
        ])
        .is_none());
        assert!(mixed_warning(&[p("a", 10.0, Some(Device)), p("b", 20.0, Some(Device))]).is_none());
        assert!(mixed_warning(&[p("a", 10.0, Some(Device)), p("b", 200.0, None)]).is_none());
    }
}
