//! The time layer: when each request and each device operation completes
//! (docs/time.md). The cache layer says what happened (hierarchy/ops.rs);
//! this layer queues it on a CPU station, a network link and the devices,
//! under a serial, closed or open load.
//!
//! A config that sets none of its keys runs the serial loop of sim.rs,
//! untouched and as fast as before; any of them runs the event engine
//! (engine.rs), whose one-client closed run adds up to the same figures.

pub mod config;
pub mod disk;
pub mod engine;
pub mod result;
pub mod stack;
pub mod station;
pub mod theory;

use crate::config::{Config, ConfigError};
use crate::tech::Catalog;
use config::{Deal, LoadType};
use engine::{DeviceModel, Load, Model, StackModel};

/// The most clients a closed load may have: every client is started, and
/// keeps its state, from the first request on (2^20 of them take about
/// 64 MiB, and a closed system with more is not one a trace can fill).
pub const MAX_CLIENTS: u64 = 1 << 20;

/// Whether the config asks for the event engine: a `[load]` or `[server]`
/// table, a device key on a tier or the backing store, a lazy fill, or a
/// warm-up given as simulated time.
pub fn configured(cfg: &Config) -> bool {
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

/// Whether a source's requests carry times an open load can arrive at:
/// traces with a time field; generators and files read without one number
/// their requests instead.
pub fn has_timestamps(s: &crate::source::Source) -> bool {
    use crate::source::Source;
    match s {
        Source::Oracle(_) | Source::Msr(..) | Source::Twitter(..) | Source::Strace(..) => true,
        Source::Csv(_, opts, _) => opts.time != 0,
        Source::Lackey(..) | Source::Memtrace(_) | Source::Synth(_) | Source::Workload(_) => false,
    }
}

/// Checks the time model's keys (called by `Config::validate`).
pub fn validate(cfg: &Config) -> Result<(), ConfigError> {
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
    if cfg.vm.is_some() && configured(cfg) {
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

/// The engine's model of a config. `seed`: the workload's, used when
/// `load.seed` is absent.
pub fn model(cfg: &Config, seed: u64) -> Result<Model, ConfigError> {
    let cat: Catalog = cfg.catalog()?;
    let default_load = config::LoadConfig::default();
    let l = cfg.load.as_ref().unwrap_or(&default_load);
    // `run.compute` is time the program spends between requests: a
    // client's think time (added to `load.think`).
    let compute = cfg.run.compute.0;
    let think = match (l.think, compute > 0.0) {
        (Some(t), false) => Some(t),
        (None, true) => Some(config::Delay::Fixed {
            mean: crate::units::Nanos(compute),
        }),
        (Some(config::Delay::Fixed { mean }), true) => Some(config::Delay::Fixed {
            mean: crate::units::Nanos(mean.0 + compute),
        }),
        (Some(config::Delay::Exponential { .. }), true) => {
            return Err(ConfigError::at(
                "run.compute",
                "cannot be added to an exponential load.think; fold it into load.think's mean",
            ))
        }
        (None, false) => None,
    };
    let load = match l.kind {
        LoadType::Serial => Load::Closed {
            clients: 1,
            think,
            by_pid: false,
        },
        LoadType::Closed => Load::Closed {
            clients: l.clients.unwrap_or(0) as u32,
            think,
            by_pid: l.deal == Deal::Pid,
        },
        LoadType::Open => Load::Open { rate: l.rate },
    };
    let server = cfg.server.clone().unwrap_or_default();
    let mut devices = Vec::with_capacity(cfg.tiers.len() + 1);
    for (i, t) in cfg.tiers.iter().enumerate() {
        let d = t.device();
        let tech = cat
            .get(&t.tech)
            .map_err(|e| ConfigError::at(format!("tier[{i}].tech"), e.to_string()))?;
        let mut m = device_model(cfg.tier_name(i), &d, crate::cost::whole(t.overhead.0));
        // A medium that erases: each erase the wear model counts is an
        // operation of `erase_ns` on the tier (engine.rs).
        m.erase = tech
            .erase_ns
            .map(|ns| (crate::cost::whole_u64(ns), tech.erase_block_bytes));
        if t.ftl.is_some() {
            // An FTL's garbage collection: its erases (counted by the FTL)
            // and its copies, each a page read and a page program on the
            // die (no transfer over the channel), occupy the device.
            m.erase = Some((
                tech.erase_ns.map_or(0, crate::cost::whole_u64),
                tech.erase_block_bytes,
            ));
            m.copy_ns = crate::cost::whole_u64(tech.read_ns + tech.write_ns);
        }
        devices.push(m);
    }
    let b = cfg.backing.device();
    devices.push(device_model(
        "backing".into(),
        &b,
        crate::cost::whole(cfg.backing.overhead.0),
    ));
    let stack = match &cfg.stack {
        Some(s) => s.resolve()?,
        None => stack::StackCosts::default(),
    };
    // ns per byte at a bandwidth in MB/s (10^6 B/s); none: no cost.
    let per_byte = |mb_s: Option<f64>| mb_s.map_or(0.0, |b| 1e3 / b);
    let copy = per_byte(stack.copy_mb_s);
    let uncached = per_byte(stack.uncached_copy_mb_s.or(stack.copy_mb_s));
    let techs: Vec<&str> = cfg
        .tiers
        .iter()
        .map(|t| t.tech.as_str())
        .chain([cfg.backing.tech.as_str()])
        .collect();
    for (i, d) in devices.iter_mut().enumerate() {
        let tech = cat
            .get(techs[i])
            .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
        if is_block_device(tech) {
            d.per_op_ns = stack.block_io_ns;
        }
        if let Some(t) = cfg.tiers.get(i) {
            d.insert_ns = stack.insert_ns;
            d.insert_per_byte_ns = copy;
            d.per_byte_ns = copies_ns_per_byte(t, copy, uncached);
        }
    }
    // Pages move between the backing store and the last tier through memory
    // too: S1's disk reads and write-backs went through bounce buffers in
    // low memory, one more copy to or from the extended tier each, repeated
    // like the others. Only a last tier with `copies` asks for it.
    if let (Some(t), Some(b)) = (cfg.tiers.last(), devices.last_mut()) {
        b.per_byte_ns = copies_ns_per_byte(t, copy, uncached);
    }
    Ok(Model {
        load,
        cpus: server.cpus.map(|c| c as u32),
        cpu: server.cpu,
        link_ns_per_byte: server.link.map_or(0.0, |r| 1e9 / r.0),
        devices,
        stack: StackModel {
            per_request_ns: stack.syscall_ns + stack.lookup_ns,
        },
        seed: l.seed.unwrap_or(seed),
        disk: match &cfg.backing.disk {
            Some(d) => Some(disk::Disk::new(d)?),
            None => None,
        },
    })
}

/// Time per byte of a tier's `copies`: each copy at the copy bandwidth
/// (uncached or not), repeated `slowdown` times (S1 emulated a k times
/// slower file memory by repeating every page copy k times).
fn copies_ns_per_byte(t: &crate::config::TierConfig, copy: f64, uncached: f64) -> f64 {
    t.copies as f64 * t.slowdown * if t.uncached { uncached } else { copy }
}

/// Storage reached through the block layer and a driver: media neither
/// byte-addressable nor file memory (which S1 reached by page copies).
pub fn is_block_device(t: &crate::tech::Technology) -> bool {
    !t.byte_addressable && t.kind != "file-memory"
}

fn device_model(name: String, d: &config::DeviceKeys, overhead: f64) -> DeviceModel {
    DeviceModel {
        name,
        channels: d.channels.unwrap_or(1) as u32,
        service: d.service,
        reads_first: d.reads_first,
        read_while_write: d.read_while_write,
        lazy: d.lazy_writeback,
        overhead,
        per_op_ns: 0.0,
        per_byte_ns: 0.0,
        insert_ns: 0.0,
        insert_per_byte_ns: 0.0,
        erase: None,
        copy_ns: 0,
    }
}
