//! The rules that span a config's sections (a key of one section allowed
//! or required by another's): in one place, called once by
//! `Config::validate` after each section has checked itself.

use super::Config;
use crate::policy::PolicySpec;
use crate::spec::ConfigError;
use crate::time::config::{self, Deal, LoadType};
use crate::time::disk;
use crate::time::MAX_CLIENTS;
use crate::units::Size;
use crate::vm::config::VmConfig;

/// Checks the time model's keys against the rest of the config (called
/// by `Config::validate`).
pub fn time(cfg: &Config) -> Result<(), ConfigError> {
    for (i, t) in cfg.tiers.iter().enumerate() {
        t.device().check(&format!("tier[{i}]"))?;
    }
    if cfg.backing.lazy_writeback.is_some() {
        return Err(ConfigError::at(
            "backing.lazy_writeback",
            "not available on the backing store; give it to a tier",
        ));
    }
    cfg.backing.device().check("backing")?;
    if let Some(d) = &cfg.backing.disk {
        // One head, moved in the order operations are issued (disk.rs).
        let refuse = |k: &str, why: &str| {
            Err(ConfigError::at(
                format!("backing.{k}"),
                format!("not available with backing.disk: {why}"),
            ))
        };
        if cfg.backing.channels.is_some_and(|c| c > 1) {
            return refuse(
                "channels",
                "the disk has one head (leave channels out or 1)",
            );
        }
        if cfg.backing.service != config::Service::Fixed {
            return refuse("service", "the disk's times come from its head's position");
        }
        if cfg.backing.reads_first {
            return refuse(
                "reads_first",
                "the head moves in the order operations are issued; reads going first would reorder them",
            );
        }
        if cfg.backing.read_while_write {
            return refuse("read_while_write", "one head reads and writes");
        }
        disk::Disk::new(d)?;
    }
    if let Some(s) = &cfg.stack {
        s.resolve()?;
    }
    if cfg.hierarchy.fill == crate::config::FillRule::Lazy {
        if cfg.tiers.len() < 2 {
            return Err(ConfigError::at(
                "hierarchy.fill",
                "\"lazy\" needs at least two tiers (writes into the tiers below the first go through their write-back buffers)",
            ));
        }
        for (i, t) in cfg.tiers.iter().enumerate().skip(1) {
            if t.lazy_writeback.is_none() {
                return Err(ConfigError::at(
                    format!("tier[{i}].lazy_writeback"),
                    "required by hierarchy.fill = \"lazy\": give each tier below the first a buffer, e.g. lazy_writeback = { size = \"4MiB\" }",
                ));
            }
        }
    }
    if let Some(l) = &cfg.load {
        let p = |k: &str| format!("load.{k}");
        let unused = |k: &str, what: &str| {
            Err(ConfigError::at(
                p(k),
                format!("not used by type = \"{what}\""),
            ))
        };
        let name = match l.kind {
            LoadType::Serial => "serial",
            LoadType::Closed => "closed",
            LoadType::Open => "open",
        };
        if l.kind != LoadType::Closed {
            if l.clients.is_some() {
                return unused("clients", name);
            }
            if l.think.is_some() {
                return unused("think", name);
            }
            if l.deal != Deal::Order {
                return unused("deal", name);
            }
        }
        if l.kind != LoadType::Open && l.rate.is_some() {
            return unused("rate", name);
        }
        if l.kind == LoadType::Closed {
            match (l.deal, l.clients) {
                (Deal::Order, None) => {
                    return Err(ConfigError::at(
                        p("clients"),
                        "required by type = \"closed\": the number of clients (or deal = \"pid\" for one client per pid of the trace)",
                    ))
                }
                (Deal::Order, Some(0)) => {
                    return Err(ConfigError::at(p("clients"), "must be at least 1"))
                }
                (Deal::Pid, Some(_)) => {
                    return Err(ConfigError::at(
                        p("clients"),
                        "not used with deal = \"pid\": there is one client per pid of the trace",
                    ))
                }
                _ => {}
            }
            if let Some(c) = l.clients.filter(|&c| c > MAX_CLIENTS) {
                return Err(ConfigError::at(
                    p("clients"),
                    format!(
                        "{c} is out of range; at most {MAX_CLIENTS} clients (each keeps its own \
                         state and event, about 64 bytes, from the start of the run)"
                    ),
                ));
            }
        }
        if let Some(t) = &l.think {
            t.check(&p("think"))?;
        }
        if let Some(r) = l.rate {
            if !(r.is_finite() && r > 0.0) {
                return Err(ConfigError::at(
                    p("rate"),
                    format!("{r} is out of range; arrivals per second, greater than zero"),
                ));
            }
        }
    }
    if let Some(s) = &cfg.server {
        if s.cpus == Some(0) {
            return Err(ConfigError::at(
                "server.cpus",
                "must be at least 1 (leave it out for unlimited CPUs)",
            ));
        }
        if s.cpus.is_some_and(|c| c >= u32::MAX as u64) {
            return Err(ConfigError::at("server.cpus", "at most 4294967294"));
        }
        if let Some(c) = &s.cpu {
            c.check("server.cpu")?;
        }
    }
    if cfg.vm.is_some() && cfg.backing.ftl.is_some() {
        return Err(ConfigError::at(
            "backing.ftl",
            "not available with [vm] yet: the swap device's writes do not go through an FTL",
        ));
    }
    if cfg.vm.is_some() {
        if let Some(i) = cfg.tiers.iter().position(|t| t.ftl.is_some()) {
            return Err(ConfigError::at(
                format!("tier[{i}].ftl"),
                "not available with [vm]: the memory tier's pages do not go through an FTL (it would be ignored)",
            ));
        }
    }
    if cfg.vm.is_some() && time_model(cfg) {
        return Err(ConfigError::at(
            "vm",
            "a [vm] run has no time model yet: leave out [load], [server], [stack] and the device keys",
        ));
    }
    if cfg.run.passes == 0 {
        return Err(ConfigError::at(
            "run.passes",
            "must be at least 1 (the workload is run this many times in a row)",
        ));
    }
    if let Some(config::Warmup::Passes(n)) = cfg.run.warmup {
        if n >= cfg.run.passes {
            return Err(ConfigError::at(
                "run.warmup",
                format!(
                    "{n} pass(es) of warm-up leave nothing to count: run.passes is {}",
                    cfg.run.passes
                ),
            ));
        }
    }
    Ok(())
}

/// Whether the config asks for the event engine: a `[load]` or `[server]`
/// table, a device key on a tier or the backing store, a lazy fill, or a
/// warm-up given as simulated time.
pub fn time_model(cfg: &Config) -> bool {
    cfg.load.is_some()
        || cfg.server.is_some()
        || cfg.stack.is_some()
        || cfg.tiers.iter().any(|t| t.copies > 0 || t.uncached)
        || cfg.tiers.iter().any(|t| t.device().configured())
        || cfg.backing.device().configured()
        || cfg.backing.disk.is_some()
        || cfg.hierarchy.fill == crate::config::FillRule::Lazy
        || matches!(cfg.run.warmup, Some(config::Warmup::Duration(_)))
}

/// The checks `[vm]` makes of the rest of the config: one memory tier (the
/// frames), its policy left to `vm.policy`, no `workload.page_size`
/// (the page size is `vm.page_size`, applied at simulation time), and
/// neither `run.passes` nor `run.warmup` (the paging loop reads its trace
/// once, counting from the first reference).
pub fn vm(cfg: &Config, vm: &VmConfig) -> Result<(), ConfigError> {
    vm.validate()?;
    if cfg.tiers.len() > 1 {
        return Err(ConfigError::at(
            "tier",
            format!(
                "{} tiers given; under [vm] the one [[tier]] is the memory that holds the \
                 frames and [backing] is the swap device",
                cfg.tiers.len()
            ),
        ));
    }
    if let Some(t) = cfg.tiers.first() {
        if t.policy != PolicySpec::default() {
            return Err(ConfigError::at(
                "tier[0].policy",
                "not used under [vm]: the frames are replaced by vm.policy (clock by default)",
            ));
        }
        if let Size::Absolute(n) = t.capacity {
            if n < vm.page_bytes() {
                return Err(ConfigError::at(
                    "tier[0].capacity",
                    format!(
                        "{n} B holds no page of vm.page_size = {} B: the frame count would be zero",
                        vm.page_bytes()
                    ),
                ));
            }
        }
    }
    // The paging loop reads its trace once and counts from the first
    // reference: refused rather than silently ignored.
    if cfg.run.passes != 1 {
        return Err(ConfigError::at(
            "run.passes",
            format!(
                "{} given; a [vm] run reads its trace once (1, the default); run the trace \
                 twice by concatenating it",
                cfg.run.passes
            ),
        ));
    }
    if cfg.run.warmup.is_some() {
        return Err(ConfigError::at(
            "run.warmup",
            "not used under [vm]: a paging run counts from the first reference (cold faults \
             are part of its figures)",
        ));
    }
    if let Some(w) = &cfg.workload {
        if w.has("page_size") {
            return Err(ConfigError::at(
                "workload.page_size",
                "not used under [vm]: the trace is read by byte address and vm.page_size \
                 applies at simulation time (one trace serves a page-size sweep)",
            ));
        }
    }
    // Multilevel main memory: the nodes' technologies, no [[tier]] beside
    // them, and (until its model runs) a clean refusal.
    crate::vm::tiered_config::check_with(vm, &cfg.catalog()?, cfg.tiers.len())
}
