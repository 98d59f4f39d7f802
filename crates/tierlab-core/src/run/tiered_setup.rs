//! Assembly of multilevel main memory's run (run/tiered.rs): the nodes,
//! their costs and media from the config and the catalog, the placement
//! and the policy, and the driver: serial, or with `[vm.cpu]` the
//! processes' loop after the all-fast second pass. A child of run/tiered.rs,
//! so it builds the model's private state directly.

use super::*;

/// The placement rule's name in results.
fn placement_name(kind: Option<PlacementKind>) -> &'static str {
    match kind.unwrap_or_default() {
        PlacementKind::FirstTouch => "first-touch",
        PlacementKind::SlowFirst => "slow-first",
        PlacementKind::Interleave => "interleave",
    }
}

/// The tag of page `vpn` of process `p` (vm/paging.rs).
fn tag(p: u64, vpn: u64) -> u64 {
    (p << VPN_BITS) | (vpn & VPN_MASK)
}

/// Assembles the run of a `[vm]` config with `[[vm.node]]`, telling
/// `progress` the references its pre-passes read (node capacities given as
/// a share of the footprint; the oracles' per-page counts; with `[vm.cpu]`
/// the all-fast second pass). Serial, the model runs the driver's batches;
/// with `[vm.cpu]` the processes' loop (run/vm_procs.rs) runs it.
pub fn runner(cfg: &Config, cat: &Catalog, mut progress: impl Progress) -> Result<Runner, Error> {
    let (mut model, batches, source) = build(cfg, cat, &mut progress)?;
    let interval = cfg.run.interval;
    let Some(cpu) = cfg.vm.as_ref().and_then(|v| v.cpu.as_ref()) else {
        return Ok(Runner::Tiered(Box::new(Driver::new(
            model,
            Stream::new(batches, None),
            interval,
            1,
            Warmup::default(),
        ))));
    };
    let all_fast_ns = all_fast_pass(cfg, cat, &model, &mut progress)?;
    model.queues(all_fast_ns);
    Ok(Runner::TieredProcs(Box::new(procs(
        model, batches, source, cpu, interval,
    ))))
}

/// The processes' driver over a built model.
fn procs(
    model: Tiered,
    batches: Batches,
    source: crate::source::Source,
    cpu: &crate::vm::config::CpuConfig,
    interval: u64,
) -> Driver<Procs<Tiered>, Stream> {
    Driver::new(
        Procs::new(model, Sched::new(cpu), source),
        Stream::new(batches, None),
        interval,
        1,
        Warmup::default(),
    )
}

/// `[vm.cpu]`'s all-fast time: the same config with one node of node 0's
/// medium holding all of `model`'s frames, no migration, run to its end
/// by the same processes' loop; its makespan.
fn all_fast_pass(
    cfg: &Config,
    cat: &Catalog,
    model: &Tiered,
    progress: &mut impl Progress,
) -> Result<f64, Error> {
    let mut base = cfg.clone();
    let vm = base.vm.as_mut().expect("a [vm] config");
    let frames: u64 = (0..model.nodes.len())
        .map(|n| model.nodes.frames(n as Node))
        .sum();
    let mut fast = vm.node[0].clone();
    fast.capacity = Size::Absolute(frames * model.nodes.page_bytes());
    vm.node = vec![fast];
    vm.migration = None;
    vm.placement = None;
    let (mut m, batches, source) = build(&base, cat, &mut *progress)?;
    m.queues(0.0);
    let cpu = cfg
        .vm
        .as_ref()
        .and_then(|v| v.cpu.as_ref())
        .expect("a [vm.cpu] config");
    let mut d = procs(m, batches, source, cpu, u64::MAX);
    while !d.step(1 << 16)? {
        if !progress(d.processed()) {
            return Err(crate::source::trace::TraceError::Interrupted.into());
        }
    }
    Ok(d.result().total_time_ns)
}

/// The model of a `[vm]` config with `[[vm.node]]`, its batches and its
/// source (which the processes' loop opens again, once per process).
fn build(
    cfg: &Config,
    cat: &Catalog,
    mut progress: impl Progress,
) -> Result<(Tiered, Batches, crate::source::Source), Error> {
    let vm = cfg
        .vm
        .as_ref()
        .ok_or_else(|| ConfigError::at("vm", "missing"))?;
    let w = cfg.workload()?;
    let source = crate::source::byte_source(w.source()?)?;
    let page = vm.page_bytes();
    let shift = page.trailing_zeros();
    let mig: MigrationConfig = vm.migration.clone().unwrap_or_default();
    let limit = cfg.run.max_requests.unwrap_or(u64::MAX);
    let shares = vm
        .node
        .iter()
        .any(|n| !matches!(n.capacity, Size::Absolute(_)));
    let counts = matches!(mig.spec, MigrationSpec::OracleStatic(_));
    let epoch = match &mig.spec {
        MigrationSpec::OracleEpoch(p) => Some(p.epoch),
        _ => None,
    };
    let pc = if shares || counts || epoch.is_some() {
        page_counts(&source, shift, tag, counts, epoch, limit, &mut progress)?
    } else {
        PageCounts::default()
    };
    let mut frames = Vec::with_capacity(vm.node.len());
    let mut cost = Vec::with_capacity(vm.node.len());
    let mut meta = Vec::with_capacity(vm.node.len());
    for (i, n) in vm.node.iter().enumerate() {
        let capacity = match n.capacity {
            Size::Absolute(b) => b,
            share => share.resolve(pc.footprint_pages * page),
        };
        let node_frames = crate::run::vm_core::frames(
            capacity,
            page,
            format!("vm.node[{i}].capacity"),
            &n.capacity,
        )?;
        let tech = cat
            .get(&n.tech)
            .map_err(|e| ConfigError::at(format!("vm.node[{i}].tech"), e.to_string()))?;
        // One cost basis: the medium's price in `[cost] year`.
        let medium = match &cfg.cost {
            Some(c) => crate::device::price::in_year(tech, c.year)
                .map_err(|e| ConfigError::at("cost.year", format!("vm.node[{i}]: {e}")))?,
            None => tech.clone(),
        };
        frames.push(node_frames);
        cost.push(NodeCost::new(AccessCost::new(tech, 1.0, 0.0)));
        meta.push(NodeMeta {
            name: n.name(),
            tech: n.tech.clone(),
            capacity,
            medium,
        });
    }
    let total_frames: u64 = frames.iter().sum();
    if total_frames > u32::MAX as u64 {
        return Err(ConfigError::at(
            "vm.node",
            format!(
                "{total_frames} frames in all; at most {} (frame numbers are 32-bit)",
                u32::MAX
            ),
        )
        .into());
    }
    // The memory as a whole, for the result's one tier: one node's own
    // name, several nodes' "memory"; node 0's medium and all the bytes.
    let fast = cat.get(&vm.node[0].tech).expect("checked above");
    let capacity: u64 = meta.iter().map(|m| m.capacity).sum();
    let name = if meta.len() == 1 {
        meta[0].name.clone()
    } else {
        "memory".to_string()
    };
    let mem = cost[0].cost;
    let backing = cat
        .get(&cfg.backing.tech)
        .map_err(|e| ConfigError::at("backing.tech", e.to_string()))?;
    let dev = AccessCost::new(backing, 1.0, cfg.backing.overhead.0);
    let seed = w.seed.unwrap_or(42);
    let batches = Batches::new(crate::source::open(&source)?, BATCH).limit(limit);
    let mut paging = Paging::new(vm, total_frames, mem, seed, name);
    paging.gone = Some(Vec::new());
    let mut c = crate::run::vm::core(
        cfg,
        cat,
        paging,
        total_frames,
        (mem, dev),
        (&vm.node[0].tech, fast, capacity),
    )?;
    // Huge pages are not modelled across nodes (refused at the config).
    c.tlb_huge = None;
    c.huge_bytes = 0;
    let ctx = BuildCtx {
        page_bytes: page,
        frames: frames.clone(),
        counts: pc.counts.as_ref(),
        epoch_counts: pc.epochs.as_deref(),
    };
    let policy = mig
        .spec
        .build(&ctx)
        .map_err(|e| ConfigError::at("vm.migration.type", e))?;
    let hears = policy.hears();
    let sampler = match hears {
        Hears::Sampled {
            read_period,
            write_period,
        } => Sampler::new(read_period, write_period),
        _ => Sampler::new(u64::MAX, u64::MAX),
    };
    let model = Tiered {
        c,
        nodes: Nodes::new(page, &frames),
        placement: Placement::new(vm.placement.as_ref(), frames.len()),
        next_tick: policy.next_tick(),
        hears,
        sampler,
        policy,
        m: Moves::default(),
        cost,
        charges: mig.cost.clone(),
        extra_ns: 0.0,
        over: Overheads::default(),
        promotions: 0,
        demotions: 0,
        migration_bytes: 0,
        refused: 0,
        ping_pong: 0,
        promoted_in: KeyMap::default(),
        epoch: cfg.run.interval.max(1),
        scanned_pages: 0,
        gone: Vec::new(),
        work: vec![NodeWork::default(); meta.len()],
        meta,
        cost_year: cfg.cost.as_ref().map(|c| c.year),
        mark: Mark::default(),
        policy_name: mig.spec.name(),
        placement_name: placement_name(vm.placement.as_ref().map(|p| p.kind)),
        q: None,
        acc_user: 0.0,
        acc_stall: 0.0,
    };
    Ok((model, batches, source))
}
