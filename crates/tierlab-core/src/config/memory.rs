//! The memory a config's size-like keys make the run allocate before its
//! first request (a TLB's entries, a Bloom window's filters, a closed
//! load's clients), asked of the allocator when the config is checked:
//! more than the machine or the process's memory limit gives is one line
//! naming the key and the bytes (exit 2), not an abort while the run
//! builds. Each key also has a documented maximum (docs/config.md); keys
//! whose structures grow as they are used (a tier's `channels`,
//! `server.cpus`, a second-hit window) cost only what the run uses.

use super::Config;
use crate::source::Source;
use crate::spec::{probe_memory, ConfigError};
use crate::time::config::{Deal, LoadType};
use crate::time::CLIENT_BYTES;
use crate::vm::tlb::Tlb;

/// The most points a run's timeline may have where the run's length is
/// known before it starts (a generator's `requests` times `run.passes`,
/// or `run.max_requests` below it): each point takes about 450 bytes at
/// the run's end (its figures, then the lists `RunResult.timeline` is
/// made of), so 2^20 points take about 450 MiB. `interval = 1` over a
/// 20-million-request generator asked for about 9 GB.
pub const MAX_TIMELINE_POINTS: u64 = 1 << 20;

/// Asks for each up-front structure's memory in turn (called by
/// `Config::validate` after every other check).
pub fn check(cfg: &Config) -> Result<(), ConfigError> {
    timeline(cfg)?;
    for (i, t) in cfg.tiers.iter().enumerate() {
        if let Some((key, bytes)) = t.admission.memory() {
            probe_memory(
                &format!("tier[{i}].admission.{key}"),
                "the admission policy's filters",
                bytes,
            )?;
        }
    }
    if let Some(l) = &cfg.load {
        if let (LoadType::Closed, Deal::Order, Some(c)) = (l.kind, l.deal, l.clients) {
            probe_memory(
                "load.clients",
                &format!("{c} clients"),
                c.saturating_mul(CLIENT_BYTES),
            )?;
        }
    }
    if let Some(vm) = &cfg.vm {
        let tlbs = [
            ("vm.tlb.entries", Some(vm.tlb.clone())),
            ("vm.tlb2.entries", vm.tlb2.clone()),
            ("vm.tlb_huge.entries", vm.tlb_huge.clone()),
        ];
        for (key, tlb) in tlbs {
            if let Some(t) = tlb {
                probe_memory(
                    key,
                    &format!("the {} entries of a TLB", t.entries),
                    Tlb::bytes(&t),
                )?;
            }
        }
        if let Some(c) = &vm.walk.cache {
            let t = crate::vm::config::TlbConfig {
                entries: c.entries,
                ways: None,
                latency_ns: c.latency_ns,
            };
            probe_memory(
                "vm.walk.cache.entries",
                &format!("the {} entries of the page-walk cache", c.entries),
                Tlb::bytes(&t),
            )?;
        }
    }
    Ok(())
}

/// `run.interval` against the run's known length: see
/// [`MAX_TIMELINE_POINTS`]. A trace's length is not known before it is
/// read; its timeline's memory follows its points.
fn timeline(cfg: &Config) -> Result<(), ConfigError> {
    let Some(Ok(Source::Synth(spec))) = cfg.workload.as_ref().map(|w| w.source()) else {
        return Ok(());
    };
    let mut n = spec.requests.saturating_mul(cfg.run.passes);
    if let Some(m) = cfg.run.max_requests {
        n = n.min(m);
    }
    let interval = cfg.run.interval.max(1);
    let points = n.div_ceil(interval);
    if points > MAX_TIMELINE_POINTS {
        return Err(ConfigError::at(
            "run.interval",
            format!(
                "{interval} request(s) a point over a run of {n} requests make {points} timeline \
                 points; at most {MAX_TIMELINE_POINTS} (about 450 bytes each): an interval of at \
                 least {} requests",
                n.div_ceil(MAX_TIMELINE_POINTS)
            ),
        ));
    }
    Ok(())
}
