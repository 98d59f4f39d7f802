//! Assembly: a config's sections translated into the engine objects of the
//! layers below (the time model; the run setup; the curve's hierarchies),
//! with the catalog resolved from the config. The layers below never see a
//! whole `Config`: each takes its own typed section or the objects made here.

use crate::config::Config;
use crate::cost::AccessCost;
use crate::error::Error;
use crate::hierarchy::{Fill, Hierarchy};
use crate::policy::BuildCtx;
use crate::source::setup::{Progress, RunSetup};
use crate::spec::ConfigError;
use crate::stats::{BackingMeta, TierMeta};
use crate::tech::Catalog;
use crate::tier::Tier;
use crate::time::config::{self, Deal, LoadType};
use crate::time::engine::{DeviceModel, Load, Model, StackModel};
use crate::time::{disk, is_block_device, stack};
use crate::units::Size;

/// The engine's model of a config, its media from `cat`. `seed`: the
/// workload's, used when `load.seed` is absent.
pub fn model(cfg: &Config, cat: &Catalog, seed: u64) -> Result<Model, ConfigError> {
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
    let mut m = device_model(
        "backing".into(),
        &b,
        crate::cost::whole(cfg.backing.overhead.0),
    );
    if cfg.backing.ftl.is_some() {
        // As a tier's FTL above: GC's erases and copies occupy the store.
        let tech = cat
            .get(&cfg.backing.tech)
            .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
        m.erase = Some((
            tech.erase_ns.map_or(0, crate::cost::whole_u64),
            tech.erase_block_bytes,
        ));
        m.copy_ns = crate::cost::whole_u64(tech.read_ns + tech.write_ns);
    }
    devices.push(m);
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

/// Whether a tier of the config needs next-access times (its policy is
/// Belady's).
pub fn needs_next_access(cfg: &Config) -> bool {
    cfg.tiers.iter().any(|t| t.policy.needs_next_access())
}

/// The run setup of a config: its workload's source, checked, with the
/// footprint read when a tier's capacity or one of `sizes` (mrc's) is a
/// share of it.
pub fn run_setup(
    cfg: &Config,
    sizes: &[Size],
    progress: impl Progress,
) -> Result<RunSetup, crate::error::Error> {
    let w = cfg.workload()?;
    let shares = cfg.tiers.iter().map(|t| &t.capacity).chain(sizes);
    RunSetup::new(
        w,
        shares,
        needs_next_access(cfg),
        cfg.run.max_requests,
        progress,
    )
}

/// Builds the hierarchy a config describes (checked when it was parsed:
/// `Config::from_toml_str` and `from_json_str` validate). `footprint` (bytes, or objects
/// with `unit_size`) resolves capacities given as a share; `seed` seeds
/// randomised policies. Tests and benches use this to drive a hierarchy with
/// requests of their own.
pub fn build_hierarchy(
    cfg: &Config,
    footprint: u64,
    unit_size: bool,
    seed: u64,
) -> Result<(Hierarchy, Vec<TierMeta>), Error> {
    hierarchy_of(cfg, &cfg.catalog()?, footprint, unit_size, seed)
}

/// [`build_hierarchy`] with the run's catalog, resolved once.
pub fn hierarchy_of(
    cfg: &Config,
    cat: &Catalog,
    footprint: u64,
    unit_size: bool,
    seed: u64,
) -> Result<(Hierarchy, Vec<TierMeta>), Error> {
    let mut tiers = Vec::with_capacity(cfg.tiers.len());
    let mut meta = Vec::with_capacity(cfg.tiers.len());
    let mut flush = Vec::with_capacity(cfg.tiers.len());
    let (mut ages, mut limits) = (Vec::new(), Vec::new());
    for (i, t) in cfg.tiers.iter().enumerate() {
        let capacity = t.capacity.resolve(footprint);
        if capacity == 0 {
            return Err(ConfigError::at(
            format!("tier[{i}].capacity"),
            format!("\"{}\" of a footprint of {footprint} is less than one unit; use a larger share or an absolute size", t.capacity),
        )
        .into());
        }
        let tech = cat
            .get(&t.tech)
            .map_err(|e| ConfigError::at(format!("tier[{i}].tech"), e.to_string()))?;
        // One cost basis: the medium's price in `[cost] year`.
        let priced = match &cfg.cost {
            Some(c) => Some(
                crate::device::price::in_year(tech, c.year)
                    .map_err(|e| ConfigError::at("cost.year", format!("tier[{i}]: {e}")))?,
            ),
            None => None,
        };
        let tech = priced.as_ref().unwrap_or(tech);
        let write_back =
            t.write.unwrap_or(cfg.hierarchy.write) == crate::config::WritePolicy::WriteBack;
        let ctx = BuildCtx {
            capacity,
            seed,
            unit_size,
        };
        t.policy
            .fit(&ctx)
            .map_err(|(k, e)| ConfigError::at(format!("tier[{i}].policy.{k}"), e))?;
        let policy = t.policy.build(&ctx);
        let admission = t
            .admission
            .build(&crate::admission::BuildCtx { seed, tier: i });
        let flashcache = matches!(policy, crate::policy::AnyPolicy::FlashCache(_));
        tiers.push(Tier::new(
            cfg.tier_name(i),
            i,
            capacity,
            unit_size,
            policy,
            admission,
            write_back,
            AccessCost::new(tech, t.slowdown, t.overhead.0),
        ));
        if let Some(f) = &t.ftl {
            let last = tiers.last_mut().expect("just pushed");
            last.ftl = Some(Box::new(
                crate::device::ftl_space::build(f, tech, capacity, unit_size, flashcache)
                    .map_err(|(k, e)| ConfigError::at(format!("tier[{i}].{k}"), e))?,
            ));
        }
        meta.push(TierMeta {
            tech: t.tech.clone(),
            policy: t.policy.name().into(),
            admission: t.admission.name().into(),
            medium: tech.clone(),
            // An FTL's tier is its physical flash: over-provisioning costs.
            area_cost: crate::device::area_cost(
                tech,
                tiers[i]
                    .ftl
                    .as_ref()
                    .map_or(capacity, |f| f.ftl().physical_bytes(f.page_bytes())),
                unit_size,
            ),
            power_down: t.power_down,
        });
        let every = t
            .flush_interval
            .or(cfg.hierarchy.flush_interval)
            .map_or(f64::INFINITY, |n| n.0);
        flush.push(if write_back { every } else { f64::INFINITY });
        // Write-back by age and by a dirty threshold (Linux 2.4's kupdate
        // and bdflush; docs/hierarchy.md): write-back tiers only.
        let h = &cfg.hierarchy;
        ages.push(t.flush_age.or(h.flush_age).map_or(0.0, |a| a.0));
        limits.push(
            t.dirty_threshold
                .or(h.dirty_threshold)
                .filter(|_| write_back)
                .map(|share| {
                    let memory = t.dirty_memory.or(h.dirty_memory);
                    let of = memory.map_or(capacity, |m| m.resolve(footprint));
                    let batch = t.dirty_batch.or(h.dirty_batch).unwrap_or(1);
                    ((share * of as f64).floor() as u64, batch)
                }),
        );
    }
    let backing = cat
        .get(&cfg.backing.tech)
        .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
    let backing_cost = AccessCost::new(backing, 1.0, cfg.backing.overhead.0);
    let fill: Fill = cfg.hierarchy.fill.cache();
    let ftl = tiers.iter().any(|t| t.ftl.is_some());
    let mut h = Hierarchy::new(tiers, fill, backing_cost, flush, cfg.run.compute.0)
        .with_aged_writeback(ages, limits);
    if let Some(f) = &cfg.backing.ftl {
        let capacity = cfg.backing.capacity.map(|c| c.resolve(0));
        h.backing_ftl = Some(Box::new(
            crate::device::ftl_space::build_backing(f, backing, capacity, unit_size)
                .map_err(|(k, e)| ConfigError::at(format!("backing.{k}"), e))?,
        ));
    }
    // The shared-list paths move objects between tiers without the
    // tiers' insertions; an FTL must see every program and departure.
    let h = if ftl { h.without_segments() } else { h };
    Ok((h, meta))
}

/// The backing store's medium (from `cat`) and the keys its energy needs.
pub fn backing_meta(cfg: &Config, cat: &Catalog) -> Result<BackingMeta, Error> {
    let b = &cfg.backing;
    let medium = cat
        .get(&b.tech)
        .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?
        .clone();
    Ok(BackingMeta {
        tech: b.tech.clone(),
        medium,
        capacity: b.capacity.map(|c| c.resolve(0)),
        power_down: b.power_down,
    })
}

/// The run of `cfg`: the one driver with the model the config asks for,
/// each model's line below. `progress` hears the requests the pre-passes
/// read; false from it stops them.
pub fn runner(cfg: &Config, mut progress: impl Progress) -> Result<crate::run::Runner, Error> {
    use crate::run::Runner;
    // The catalog, resolved once (built-in media, then `[techs]`): every
    // part below reads this one.
    let cat = cfg.catalog()?;
    if cfg
        .vm
        .as_ref()
        .is_some_and(crate::vm::tiered_config::configured)
    {
        return crate::run::tiered::runner(cfg, &cat, progress);
    }
    if cfg.vm.is_some() {
        return Ok(Runner::Vm(crate::run::vm::assemble(cfg, &cat, progress)?));
    }
    let tiers = crate::run::tiers::assemble(cfg, &cat, &mut progress)?;
    if crate::config::checks::time_model(cfg) {
        return Ok(Runner::Timed(Box::new(crate::run::timed::driver(
            cfg,
            &cat,
            tiers,
            &mut progress,
        )?)));
    }
    Ok(Runner::Tiers(Box::new(crate::run::tiers::driver(tiers))))
}
