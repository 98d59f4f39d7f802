//! No silent infeasibility: a device whose busy time is more than its
//! channels can give in the run's simulated time did work the run's clock
//! never paid for. The serial loop charges each request its foreground
//! accesses and lets background work (write-backs, periodic flushes,
//! demotions) run free, so a write-heavy run can report a throughput its
//! disk could never sustain (S1's PostMark at its preset: the disk busy
//! eight times the run). The run keeps its figures (they are what the
//! serial model means, and the reproductions are built on it) and says so,
//! naming the device and the fix: a `[load]`, under which requests wait
//! for busy devices (docs/time.md#feasibility).

/// Busy time beyond this share over the capacity is reported (rounding in
/// the stations' sums must not warn).
const SLACK: f64 = 1e-9;

/// The first words of every such warning, so a result rebuilt with other
/// busy times (a time model's, after the serial sums) can drop the old ones.
pub const PREFIX: &str = "device ";

/// The warning for a device (`what`: `tier "flash"` or `backing`) busy
/// `busy_ns` over `channels` in `elapsed_ns` of simulated time; None when
/// it fits. `timed`: the run had a time model (its clock waited for the
/// foreground, but background work still outlasted it).
pub fn warning(
    what: &str,
    tech: &str,
    busy_ns: f64,
    channels: u32,
    elapsed_ns: f64,
    timed: bool,
) -> Option<String> {
    let why = if timed {
        "its queued background work (write-backs, flushes, erases) outlasts the run, so the \
         load offered is more than it serves; lower [load]'s rate or clients, or give it \
         more channels"
    } else {
        "the serial loop (no [load]) lets background work (write-backs, flushes) run free \
         of the run's clock, so throughput and lifetime rates are not physical; give [load] \
         (type = \"closed\", clients = 1 waits for the device as a single client would)"
    };
    warning_because(what, tech, busy_ns, channels, elapsed_ns, why)
}

/// [`warning`] with the run's own reason and fix (`why`): a paging run
/// has no `[load]` to give.
pub fn warning_because(
    what: &str,
    tech: &str,
    busy_ns: f64,
    channels: u32,
    elapsed_ns: f64,
    why: &str,
) -> Option<String> {
    let capacity = channels.max(1) as f64 * elapsed_ns;
    if elapsed_ns.is_nan() || elapsed_ns <= 0.0 || busy_ns <= capacity * (1.0 + SLACK) {
        return None;
    }
    Some(format!(
        "{PREFIX}{what} ({tech}, {channels} channel{s}) was busy {:.3} s in {:.3} s of \
         simulated time ({:.1}x what it can serve): {why} (docs/time.md#feasibility).",
        busy_ns / 1e9,
        elapsed_ns / 1e9,
        busy_ns / capacity,
        s = if channels == 1 { "" } else { "s" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_when_busy_exceeds_channels_times_time() {
        assert!(warning("backing", "HDD", 9e9, 1, 10e9, false).is_none());
        assert!(warning("backing", "HDD", 30e9, 4, 10e9, false).is_none());
        let w = warning("backing", "HDD", 1065e9, 1, 134e9, false).unwrap();
        assert!(w.starts_with(PREFIX), "{w}");
        assert!(
            w.contains("backing (HDD, 1 channel)") && w.contains("7.9x"),
            "{w}"
        );
        assert!(w.contains("[load]"), "{w}");
        let w = warning("tier \"flash\"", "NAND-SLC", 50e9, 2, 10e9, true).unwrap();
        assert!(w.contains("2 channels") && w.contains("outlasts"), "{w}");
        // No time, nothing to compare with.
        assert!(warning("backing", "HDD", 1.0, 1, 0.0, false).is_none());
    }
}
