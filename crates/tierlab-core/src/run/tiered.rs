//! Multilevel main memory's model on the one driver (docs/tiered-memory.md):
//! main memory as ordered nodes (`[[vm.node]]`, fastest first), each page
//! living on one node and accessed there in place, a placement rule for a
//! page entering memory (`[vm.placement]`) and a migration policy moving
//! pages between nodes (`[vm.migration]`, vm/migrate/).
//!
//! Each reference goes through the virtual-memory core (run/vm_core.rs) as
//! in a `[vm]` run, with the memory at node 0's cost and the frames of all
//! nodes together: translation, faults, read-ahead and swap are today's.
//! Then, for each page it touches, this model finds the page's node
//! (placing a page the first time it is referenced while resident) and
//! adds the difference between that node's access and node 0's to the
//! data time; the policy hears the reference if it listens to it
//! (`Hears`), and the moves it asks for are carried out by the nodes and
//! charged as overhead.
//!
//! Why the all-fast baseline is exact without a second pass: which pages
//! are resident, the TLBs and the walks do not depend on a page's node
//! here (the pager evicts by its own policy over all frames; a migration
//! moves a page between frames without a fault or a TLB change, its
//! shootdown charged as time only), so the same references with every
//! page on node 0 (one node of all the frames) make exactly the core's
//! figures less the node differences added here. Every charge is a whole
//! number of ns (cost.rs), so the subtraction is exact. A policy that
//! would swap pages out itself (`linux` without demotion) would break
//! this; it is refused (vm/tiered_config.rs).

use super::vm_core::{pages, Core, Cost, Ref};
use super::vm_procs::{Calendar, Procs, Sched, TimedRefs};
use crate::config::Config;
use crate::cost::AccessCost;
use crate::error::Error;
use crate::hash::KeyMap;
use crate::request::{Op, Request};
use crate::run::driver::{Clock, Common, Driver, Model, Stream, Warmup};
use crate::run::timeline::Recorder;
use crate::run::Runner;
use crate::source::setup::{page_counts, Batches, PageCounts, Progress, BATCH};
use crate::spec::ConfigError;
use crate::stats::Column;
use crate::stats::RunResult;
use crate::tech::{Catalog, Technology};
use crate::units::Size;
use crate::vm::migrate::{
    BuildCtx, CostConfig, Hears, MigrationConfig, MigrationPolicy, MigrationSpec, Moves, Node,
    Sampler, FAST,
};
use crate::vm::nodes::Nodes;
use crate::vm::paging::{Paging, VPN_BITS, VPN_MASK};
use crate::vm::placement::Placement;
use crate::vm::tiered_config::PlacementKind;
use crate::vm::tiered_result::{
    memory_totals, node_device, NodeResult, NodeWork, Overheads, TieredResult,
};
use crate::vm::walk::PTE_BYTES;

/// A node's access cost, with the small-access shortcut the core uses
/// (every access up to the transfer unit costs the same).
#[derive(Clone, Copy)]
struct NodeCost {
    cost: AccessCost,
    unit: u64,
    rd: f64,
    wr: f64,
}

impl NodeCost {
    fn new(cost: AccessCost) -> Self {
        NodeCost {
            cost,
            unit: cost.transfer_unit(),
            rd: cost.read(1),
            wr: cost.write(1),
        }
    }

    /// The access units an access of `part` bytes moves.
    #[inline(always)]
    fn units(&self, part: u32) -> u64 {
        if part as u64 <= self.unit {
            1
        } else {
            self.cost.pages(part)
        }
    }

    /// One access of `part` bytes: the same arithmetic as the core's.
    #[inline(always)]
    fn of(&self, part: u32, write: bool) -> f64 {
        if part as u64 <= self.unit {
            if write {
                self.wr
            } else {
                self.rd
            }
        } else {
            self.cost.access(part, write)
        }
    }
}

/// What the model reports of a node besides its counters: its medium
/// (priced in `[cost] year` when given) for its energy, wear and cost.
struct NodeMeta {
    name: String,
    tech: String,
    capacity: u64,
    medium: Technology,
}

pub struct Tiered {
    c: Core,
    nodes: Nodes,
    placement: Placement,
    policy: Box<dyn MigrationPolicy>,
    hears: Hears,
    sampler: Sampler,
    /// The policy's next periodic work (ns), kept here so that a reference
    /// makes no call to learn it.
    next_tick: f64,
    m: Moves,
    cost: Vec<NodeCost>,
    charges: CostConfig,
    /// Data time beyond node 0's: what the all-fast run would not spend.
    extra_ns: f64,
    over: Overheads,
    promotions: u64,
    demotions: u64,
    migration_bytes: u64,
    refused: u64,
    ping_pong: u64,
    /// Page -> the epoch of its last promotion (ping-pong).
    promoted_in: KeyMap<u64>,
    epoch: u64,
    scanned_pages: u64,
    gone: Vec<u64>,
    meta: Vec<NodeMeta>,
    /// Per node: the migrations' copies and the pages placed on it, off
    /// the references' own accesses (its energy and wear).
    work: Vec<NodeWork>,
    /// `[cost] year`, when given.
    cost_year: Option<u32>,
    /// The figures at the last timeline point.
    mark: Mark,
    policy_name: &'static str,
    placement_name: &'static str,
    /// `[vm.cpu]`: the nodes as bandwidth servers (None: a serial run).
    q: Option<Box<NodeQueues>>,
    /// A timed reference's parts beyond the core's: data time beyond node
    /// 0's (user mode) and waits for the nodes' bandwidth.
    acc_user: f64,
    acc_stall: f64,
}

/// `[vm.cpu]` with nodes: each node a server of its medium's bandwidth,
/// which a reference's transfer and a migration's copy occupy (its
/// latency does not: a memory pipelines its accesses), first come first
/// served in time order (the calendar of run/vm_procs.rs).
struct NodeQueues {
    cal: Vec<Calendar>,
    /// Per node: the time accesses and copies waited for its bandwidth,
    /// and the time they held it.
    wait_ns: Vec<f64>,
    busy_ns: Vec<f64>,
    /// When the moves of the reference being run start: after its own
    /// accesses (a process's copies then never wait for its own access).
    copy_at: f64,
    /// The second pass's makespan: the same config with every page on
    /// node 0 (one node of all the frames, no migration).
    all_fast_ns: f64,
}

impl Tiered {
    /// `[vm.cpu]`: the nodes become bandwidth servers.
    fn queues(&mut self, all_fast_ns: f64) {
        let n = self.nodes.len();
        self.q = Some(Box::new(NodeQueues {
            cal: (0..n).map(|_| Calendar::default()).collect(),
            wait_ns: vec![0.0; n],
            busy_ns: vec![0.0; n],
            copy_at: 0.0,
            all_fast_ns,
        }));
    }

    /// The model's clock (ns): the references' time so far, compute and
    /// the overheads included; the policies' periods run on it.
    #[inline(always)]
    fn now(&self) -> f64 {
        self.c.v.t_addr_ns
            + self.c.v.t_data_ns
            + self.c.compute_ns * self.c.requests as f64
            + self.over.total_ns
    }

    /// One reference by the core's general path; returns its page when it
    /// touched one page (the page a run of repeats after it may take).
    #[inline(always)]
    fn reference(&mut self, r: &Request) -> Option<u64> {
        self.reference_at::<false>(r, 0.0).0
    }

    /// [`Tiered::reference`], with `TIMED` (`[vm.cpu]`) at its process's
    /// clock `t0`, its time in parts: the core's, the node differences in
    /// `acc_user`, the waits for the nodes in `acc_stall`.
    #[inline(always)]
    fn reference_at<const TIMED: bool>(&mut self, r: &Request, t0: f64) -> (Option<u64>, Cost) {
        let k = self.c.reference_cost::<TIMED>(r);
        let (key, size, _, op) = r.parts();
        if op == Op::Delete {
            return (None, k);
        }
        if !self.c.paging.gone.as_ref().is_none_or(|g| g.is_empty()) {
            self.left();
        }
        // The core numbered the reference's process.
        let pi = self.c.last_pid.1;
        let write = op == Op::Write;
        let t = if TIMED { t0 } else { self.now() };
        let mut heard = false;
        let (first, last) = pages(key, size, self.c.shift);
        for vpn in first..=last {
            let part = if first == last {
                size.max(1)
            } else {
                let lo = key.max(vpn << self.c.shift);
                let hi = (key + size.max(1) as u64).min((vpn + 1) << self.c.shift);
                (hi - lo) as u32
            };
            let tag = ((pi as u64) << VPN_BITS) | (vpn & VPN_MASK);
            heard |= self.page::<TIMED>(tag, part, write, pi, t);
        }
        if TIMED {
            // The policy's work follows the reference's own.
            if let Some(q) = &mut self.q {
                q.copy_at = t0 + k.user_ns + self.acc_user + self.acc_stall;
            }
        }
        self.settle(t, heard);
        let page = (first == last).then_some(((pi as u64) << VPN_BITS) | (first & VPN_MASK));
        (page, k)
    }

    /// How many references at the front of `rs` repeat page `tag` (one
    /// page each, same process, no delete): the core takes them as a run.
    #[inline(always)]
    fn repeats(&self, rs: &[Request], tag: u64) -> usize {
        let (pid, pi) = self.c.last_pid;
        let page = tag & VPN_MASK;
        if tag >> VPN_BITS != pi as u64 {
            return 0;
        }
        let shift = self.c.shift;
        rs.iter()
            .take_while(|r| {
                let (first, last) = pages(r.key, r.size, shift);
                r.pid == pid && r.op != Op::Delete && first == last && first & VPN_MASK == page
            })
            .count()
    }

    /// A run of references to page `tag` after one that touched it, which
    /// the core ran by its repeat path ([`Core::batch`]): the page is on
    /// the node where the reference before left it (nothing enters or
    /// leaves memory in a run of hits, and moves wait for the run's end),
    /// so its node is looked up once; the sampled policies hear their
    /// samples; a scan or a tick waits for the run's end (a run is a few
    /// references: microseconds against the policies' milliseconds).
    fn run_of(&mut self, rs: &[Request], tag: u64) {
        let Some(f) = self.nodes.frame_of(tag) else {
            return;
        };
        let node = self.nodes.node_of_frame(f);
        let pi = self.c.last_pid.1 as usize;
        let t = self.now();
        let (fast, here) = (self.cost[FAST as usize], self.cost[node as usize]);
        let (mut extra, mut heard) = (0.0, false);
        for r in rs {
            let write = r.op == Op::Write;
            let part = r.size.max(1);
            let d = here.of(part, write);
            if node != FAST {
                extra += d - fast.of(part, write);
            }
            self.nodes
                .record(node, write, part as u64, here.units(part), d);
            if let Hears::Sampled { .. } = self.hears {
                heard |= self.sampled(tag, node, write, t);
            }
        }
        self.nodes.touch_n(f, rs.len() as u64);
        if node != FAST {
            self.extra_ns += extra;
            self.c.v.t_data_ns += extra;
            self.c.procs[pi].runtime_ns += extra;
        }
        let t = self.now();
        self.settle(t, heard);
    }

    /// One page part of a reference: its node (placed if new), its access
    /// there, what the policy hears. Returns whether the policy was called.
    #[inline(always)]
    fn page<const TIMED: bool>(
        &mut self,
        tag: u64,
        part: u32,
        write: bool,
        pi: u32,
        t: f64,
    ) -> bool {
        let mut heard = false;
        let f = match self.nodes.frame_of(tag) {
            Some(f) => f,
            None => {
                // A later part of the same reference may have evicted it.
                if !self.c.paging.resident(tag) {
                    return false;
                }
                let Some(n) = self
                    .policy
                    .place(tag, &self.nodes)
                    .or_else(|| self.placement.place(&self.nodes))
                else {
                    unreachable!("the nodes hold a subset of the pager's resident pages")
                };
                let f = self
                    .nodes
                    .insert(tag, n)
                    .expect("placed on a node with room");
                self.policy.on_insert(tag, n, &self.nodes, &mut self.m);
                self.filled(n);
                heard = true;
                f
            }
        };
        let node = self.nodes.node_of_frame(f);
        let hint = self.nodes.touch(f);
        let d = self.cost[node as usize].of(part, write);
        if node != FAST {
            let extra = d - self.cost[FAST as usize].of(part, write);
            self.extra_ns += extra;
            self.c.v.t_data_ns += extra;
            self.c.procs[pi as usize].runtime_ns += extra;
            if TIMED {
                self.acc_user += extra;
            }
        }
        if TIMED {
            let busy = self.cost[node as usize].cost.transfer_ns(part);
            self.acc_stall += self.book(node, t, busy);
        }
        let c = &self.cost[node as usize];
        let units = c.units(part);
        self.nodes.record(node, write, part as u64, units, d);
        match self.hears {
            Hears::Nothing => {}
            Hears::Every => {
                self.policy
                    .on_access(tag, node, write, t, &self.nodes, &mut self.m);
                heard = true;
            }
            Hears::Sampled { .. } => {
                heard |= self.sampled(tag, node, write, t);
            }
            Hears::HintFaults => {
                if let Some(s) = hint {
                    self.over.hint_faults_ns += self.charges.hint_fault_ns.0;
                    self.over.total_ns += self.charges.hint_fault_ns.0;
                    self.policy
                        .on_hint_fault(tag, node, s, t, &self.nodes, &mut self.m);
                    heard = true;
                }
            }
        }
        heard
    }

    /// A sampled policy's sampler on one reference: a taken sample is
    /// charged and told to the policy. Whether it was.
    #[inline(always)]
    fn sampled(&mut self, tag: u64, node: Node, write: bool, t: f64) -> bool {
        if !self.sampler.sample(write) {
            return false;
        }
        self.over.samples_ns += self.charges.sample_ns.0;
        self.over.total_ns += self.charges.sample_ns.0;
        self.policy
            .on_access(tag, node, write, t, &self.nodes, &mut self.m);
        true
    }

    /// A page placed on node `n` as it enters memory: its frame written
    /// whole (the swap device's read into it, or its zero-fill).
    #[cold]
    fn filled(&mut self, n: Node) {
        let page = self.nodes.page_bytes() as u32;
        let c = &self.cost[n as usize].cost;
        let w = &mut self.work[n as usize];
        w.units_written += c.pages(page);
        w.bytes_written += page as u64;
        w.busy_ns += c.write(page);
    }

    /// `[vm.cpu]`: node `n`'s bandwidth held for `busy` ns from `t` on, as
    /// soon as it is free; returns the wait.
    fn book(&mut self, n: Node, t: f64, busy: f64) -> f64 {
        let q = self.q.as_mut().expect("a timed run");
        let busy = busy as u64;
        if busy == 0 {
            return 0.0;
        }
        let now = t.max(0.0).round() as u64;
        let end = q.cal[n as usize].reserve(now, busy);
        let wait = (end - now - busy) as f64;
        q.wait_ns[n as usize] += wait;
        q.busy_ns[n as usize] += busy as f64;
        wait
    }

    /// Pages the pager let go of leave their nodes.
    #[cold]
    fn left(&mut self) {
        let Some(mut g) = self.c.paging.gone.replace(std::mem::take(&mut self.gone)) else {
            return;
        };
        for &p in &g {
            if self.nodes.remove(p).is_some() {
                self.policy.on_remove(p);
            }
        }
        g.clear();
        self.gone = g;
    }

    /// Carries out what the policy asked: a scan, then the moves, each
    /// charged.
    #[cold]
    /// After the policy heard references at time `t` (`heard`), or when
    /// its next tick is due: the tick, the moves it asked for, and its next
    /// tick's time (one place for the per-reference and the run-of-repeats
    /// paths).
    #[inline]
    fn settle(&mut self, t: f64, mut heard: bool) {
        if t >= self.next_tick {
            self.policy.tick(t, &self.nodes, &mut self.m);
            heard = true;
        }
        if heard {
            if !self.m.is_empty() {
                self.apply(t);
            }
            self.next_tick = self.policy.next_tick();
        }
    }

    fn apply(&mut self, t: f64) {
        if self.m.scan > 0 {
            let n = self.nodes.scan(self.m.scan, t);
            self.scanned_pages += n;
            let ns = n as f64 * self.charges.scan_ns.0;
            self.over.scans_ns += ns;
            self.over.total_ns += ns;
        }
        // Swap-outs asked by a policy are refused with the config
        // (vm/tiered_config.rs): they would change what is resident.
        debug_assert!(self.m.evict.is_empty());
        self.m.evict.clear();
        let a = self.nodes.apply(&mut self.m);
        self.refused += a.refused;
        let epoch = self.c.requests / self.epoch;
        let page = self.nodes.page_bytes();
        let fixed = self.charges.pte_update_ns.0 + self.charges.tlb_shootdown_ns.0;
        for mv in &a.moves {
            let (from, to) = (&self.cost[mv.from as usize], &self.cost[mv.to as usize]);
            // The copy: the slower end's access of a whole page.
            let (rd, wr) = (from.cost.read(page as u32), to.cost.write(page as u32));
            let copy = rd.max(wr);
            // Each end is busy for its own part: a page read on the
            // source, a page written on the destination (its wear).
            let (ru, wu) = (from.cost.pages(page as u32), to.cost.pages(page as u32));
            let w = &mut self.work[mv.from as usize];
            w.units_read += ru;
            w.busy_ns += rd;
            let w = &mut self.work[mv.to as usize];
            w.units_written += wu;
            w.bytes_written += page;
            w.busy_ns += wr;
            self.over.migrations_ns += copy + fixed;
            self.over.total_ns += copy + fixed;
            if let Some(q) = &self.q {
                // Each end's bandwidth for its part of the copy, from when
                // the copies before it (one thread's, one after another)
                // are done: it ends when the later of the two does.
                let at = q.copy_at;
                let page = page as u32;
                let (rb, wb) = (from.cost.transfer_ns(page), to.cost.transfer_ns(page));
                let (from, to) = (mv.from, mv.to);
                let wait = self.book(from, at, rb).max(self.book(to, at, wb));
                self.acc_stall += wait;
                if let Some(q) = &mut self.q {
                    q.copy_at = at + copy + fixed + wait;
                }
            }
            self.migration_bytes += page;
            if mv.to < mv.from {
                self.promotions += 1;
                self.promoted_in.insert(mv.page, epoch);
            } else {
                self.demotions += 1;
                if self.promoted_in.get(&mv.page) == Some(&epoch) {
                    self.ping_pong += 1;
                }
            }
        }
    }

    /// The timeline's columns over the interval since the last point: each
    /// node's accesses (`accesses_<node>`), node 0's share of them
    /// (`fast_share`), `promotions`, `demotions`, `migration_bytes` and
    /// the policy's `overhead_ns`.
    #[cold]
    fn columns(&mut self, rec: &mut Recorder) {
        let cols = &mut rec.timeline.columns;
        let mut count = |name: String, v: u64| {
            if let Column::Counts(c) = cols
                .entry(name)
                .or_insert_with(|| Column::Counts(Vec::new()))
            {
                c.push(v);
            }
        };
        let now: Vec<u64> = self.nodes.counters.iter().map(|c| c.accesses).collect();
        let last = &self.mark;
        let delta: Vec<u64> = now
            .iter()
            .enumerate()
            .map(|(i, a)| a - last.accesses.get(i).copied().unwrap_or(0))
            .collect();
        for (m, d) in self.meta.iter().zip(&delta) {
            count(format!("accesses_{}", m.name), *d);
        }
        count("promotions".into(), self.promotions - last.promotions);
        count("demotions".into(), self.demotions - last.demotions);
        count(
            "migration_bytes".into(),
            self.migration_bytes - last.migration_bytes,
        );
        let all: u64 = delta.iter().sum();
        let mut figure = |name: &str, v: f64| {
            if let Column::Figures(c) = cols
                .entry(name.into())
                .or_insert_with(|| Column::Figures(Vec::new()))
            {
                c.push(v);
            }
        };
        figure(
            "fast_share",
            if all > 0 {
                delta[0] as f64 / all as f64
            } else {
                0.0
            },
        );
        figure("overhead_ns", self.over.total_ns - last.overhead_ns);
        self.mark = Mark {
            accesses: now,
            promotions: self.promotions,
            demotions: self.demotions,
            migration_bytes: self.migration_bytes,
            overhead_ns: self.over.total_ns,
        };
    }

    /// The run's time with the overheads, and the same references with
    /// every page on node 0.
    fn times(&self) -> (f64, f64) {
        if let Some(q) = &self.q {
            return (self.c.makespan.unwrap_or(0.0), q.all_fast_ns);
        }
        let compute = self.c.compute_ns * self.c.requests as f64;
        let access = self.c.v.t_addr_ns + self.c.v.t_data_ns;
        (
            access + compute + self.over.total_ns,
            access - self.extra_ns + compute,
        )
    }

    /// How the all-fast time was found, for the result.
    fn slowdown_basis(&self) -> String {
        let (fast, frames) = (
            &self.meta[0].name,
            (0..self.nodes.len())
                .map(|n| self.nodes.frames(n as Node))
                .sum::<u64>(),
        );
        if self.q.is_some() {
            return format!(
                "a second pass in the same command: the same config with every page on {fast} \
                 (one node of all {frames} frames, no migration) under the same [vm.cpu], its \
                 processes' makespan (queueing for the nodes' bandwidth changes with the pages \
                 on each node, so this run's own figures cannot give it)"
            );
        }
        format!(
            "the same references with every page on {fast} (one node of all {frames} frames, no \
             migration): the pager's and the TLBs' figures do not depend on a page's node, so \
             this run's figures less its nodes' extra access time, exactly, in the same pass"
        )
    }

    fn tiered_result(&self) -> TieredResult {
        let total_acc: u64 = self.nodes.counters.iter().map(|c| c.accesses).sum();
        let total_ns: f64 = self.nodes.counters.iter().map(|c| c.time_ns).sum();
        let share = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let (time, all_fast) = self.times();
        let nodes: Vec<NodeResult> = self
            .meta
            .iter()
            .zip(&self.nodes.counters)
            .enumerate()
            .map(|(i, (m, c))| {
                let mut w = self.work[i];
                if i == FAST as usize {
                    // The page-table walks' references, on node 0.
                    let refs = self.c.walker.references;
                    w.units_read += refs;
                    w.busy_ns += refs as f64 * self.cost[0].cost.read(PTE_BYTES);
                }
                let (pages_read, pages_programmed, wear, area_cost, energy) =
                    node_device(&m.medium, m.capacity, c, &w, time);
                NodeResult {
                    name: m.name.clone(),
                    tech: m.tech.clone(),
                    capacity: m.capacity,
                    frames: self.nodes.frames(i as Node),
                    accesses: c.accesses,
                    reads: c.reads,
                    writes: c.writes,
                    bytes: c.bytes,
                    time_ns: c.time_ns,
                    mean_access_ns: share(c.time_ns, c.accesses as f64),
                    wait_ns: self.q.as_ref().map(|q| q.wait_ns[i]),
                    bandwidth_busy_ns: self.q.as_ref().map(|q| q.busy_ns[i]),
                    access_share: share(c.accesses as f64, total_acc as f64),
                    time_share: share(c.time_ns, total_ns),
                    promoted_in: c.promoted_in,
                    demoted_in: c.demoted_in,
                    migrated_out: c.migrated_out,
                    resident_pages: self.nodes.used(i as Node),
                    pages_read,
                    pages_programmed,
                    wear,
                    area_cost,
                    energy,
                }
            })
            .collect();
        // The static oracle's share: the most referenced pages on node 0's
        // frames for the whole run.
        let mut counts = self.nodes.access_counts();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = counts.iter().take(self.nodes.frames(FAST) as usize).sum();
        let report = self.policy.report();
        let kernel = matches!(self.policy_name, "linux" | "tpp")
            .then(|| crate::vm::migrate::linux::KERNEL.to_string());
        TieredResult {
            policy: self.policy_name.into(),
            placement: self.placement_name.into(),
            kernel,
            fast_share_of_accesses: nodes.first().map_or(0.0, |n| n.access_share),
            oracle_fast_share_of_accesses: share(top as f64, total_acc as f64),
            nodes,
            promotions: self.promotions,
            demotions: self.demotions,
            migration_bytes: self.migration_bytes,
            refused_moves: self.refused,
            ping_pong: self.ping_pong,
            ping_pong_share: share(self.ping_pong as f64, self.demotions as f64),
            ping_pong_epoch: self.epoch,
            overhead: self.over.clone(),
            policy_report: report,
            scanned_pages: self.scanned_pages,
            uncharged: self
                .charges
                .each()
                .iter()
                .filter(|(_, v)| *v == 0.0)
                .map(|(k, _)| k.to_string())
                .collect(),
            time_ns: time,
            all_fast_time_ns: all_fast,
            slowdown: share(time, all_fast),
            slowdown_basis: self.slowdown_basis(),
            simulated_s: time / 1e9,
        }
    }
}

impl Model for Tiered {
    type Rec = Request;
    const CLOCK: Clock = Clock::Requests;

    /// Each reference by the core's general path, and the run of repeats
    /// after it by the core's repeat path (not for a policy that hears
    /// every reference: the epoch oracle counts each).
    #[inline]
    fn run(&mut self, rs: &[Request], _rec: &mut Recorder) -> Result<(), Error> {
        let runs = self.hears != Hears::Every;
        let mut i = 0;
        while i < rs.len() {
            let page = self.reference(&rs[i]);
            i += 1;
            if let (true, Some(tag)) = (runs, page) {
                let n = self.repeats(&rs[i..], tag);
                if n > 0 {
                    self.c.batch(&rs[i..i + n]);
                    self.run_of(&rs[i..i + n], tag);
                    i += n;
                }
            }
        }
        Ok(())
    }

    fn issued(&self) -> u64 {
        self.c.requests
    }

    fn point(&mut self, rec: &mut Recorder) {
        self.c.point(rec);
        self.columns(rec);
    }

    fn count_from_here(&mut self, _rec: &mut Recorder) {
        unreachable!("a [vm] run has no warm-up (config/checks.rs)")
    }

    /// The overheads are the run's time too: its elapsed time is the
    /// references' plus theirs (none: the references' alone, as a `[vm]`
    /// run's).
    fn source_ended(&mut self) -> Result<(), Error> {
        if self.over.total_ns > 0.0 {
            self.c.makespan = Some(self.times().0);
        }
        Ok(())
    }

    /// The core's result with the `tiered` object; with several nodes the
    /// memory tier's wear, area and cost and energy, and the run's energy,
    /// are the nodes' (with one, a `[vm]` run's result stands byte for
    /// byte: its memory energy is not modelled, docs/vm.md); with `[cost]
    /// year` the memory is priced by its nodes in that year.
    fn result(&self, common: Common) -> RunResult {
        let mut r = self.c.result(common);
        let t = self.tiered_result();
        let elapsed = r.total_time_ns;
        let (wear, cost, energy) = memory_totals(&t.nodes, elapsed);
        if t.nodes.len() > 1 {
            let tier = &mut r.tiers[0];
            tier.tech = self
                .meta
                .iter()
                .map(|m| m.tech.as_str())
                .collect::<Vec<_>>()
                .join("+");
            tier.wear = wear;
            tier.area_cost = cost;
            tier.energy = energy;
            let devices: Vec<(&str, &crate::device::DeviceEnergy)> = t
                .nodes
                .iter()
                .map(|n| (n.name.as_str(), &n.energy))
                .chain([("backing", &r.backing.energy)])
                .collect();
            r.run_energy = crate::device::RunEnergy::of(devices, elapsed);
        }
        if let Some(year) = self.cost_year {
            r.tiers[0].area_cost = cost;
            let costs: Vec<f64> = t
                .nodes
                .iter()
                .filter_map(|n| n.area_cost.cost_usd)
                .collect();
            r.cost = Some(crate::device::price::RunCost::of(
                year,
                &costs,
                r.throughput_rps,
            ));
        }
        r.tiered = Some(t);
        r
    }
}

/// `[vm.cpu]`: the processes' loop (run/vm_procs.rs) runs each reference
/// through the nodes at its process's clock. The node differences are user
/// time, the policy's overheads (hint faults, samples, scans, migrations)
/// the process's kernel time, the waits for the nodes' bandwidth stalls.
impl TimedRefs for Tiered {
    const QUEUES: bool = true;

    fn core(&mut self) -> &mut Core {
        &mut self.c
    }

    fn core_ref(&self) -> &Core {
        &self.c
    }

    fn reference(&mut self, r: &Request, t0: f64) -> Cost {
        let over = self.over.total_ns;
        self.acc_user = 0.0;
        self.acc_stall = 0.0;
        let (_, mut k) = self.reference_at::<true>(r, t0);
        k.user_ns += self.acc_user;
        k.system_ns += self.over.total_ns - over;
        k.stall_ns += self.acc_stall;
        k
    }

    fn forget_before(&mut self, t: u64) {
        if let Some(q) = &mut self.q {
            for c in &mut q.cal {
                c.forget_before(t);
            }
        }
    }

    fn point(&mut self, rec: &mut Recorder) {
        Model::point(self, rec);
    }

    fn result(&self, common: Common) -> RunResult {
        Model::result(self, common)
    }
}

/// What the timeline's columns count from: the figures at a point.
#[derive(Clone, Default)]
struct Mark {
    accesses: Vec<u64>,
    promotions: u64,
    demotions: u64,
    migration_bytes: u64,
    overhead_ns: f64,
}

#[path = "tiered_setup.rs"]
mod setup;
pub use setup::runner;

#[cfg(test)]
#[path = "tiered_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "tiered_procs_tests.rs"]
mod procs_tests;
