//! The engine's job stages: a request issued runs through the hierarchy,
//! and its device operations become the stages of its job (link, CPU,
//! one device each), with the background jobs they spawn (flushes, lazy
//! write-backs, erases, garbage collection); each stage queues at its
//! station, and the job completes after its last.

use super::*;

/// The erases tier `e.dev` has made so far, as the wear figures count them.
#[inline]
pub(super) fn erases_of(h: &Hierarchy, e: &Erasing) -> u64 {
    let (erases, bytes_in) = (h.dev_flash_erases(e.dev), h.dev_bytes_in(e.dev));
    crate::device::wear::erases_so_far(erases, bytes_in, e.block_bytes).unwrap_or(0)
}

/// One stage of a job: `service` ns at station `station` in queue class `class`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stage {
    pub(super) station: u16,
    pub(super) class: u8,
    /// `LAZY`: a write into a lazy buffer (dev in `station`), not a visit.
    pub(super) lazy: bool,
    pub(super) bytes: u32,
    pub(super) service: u64,
}

#[derive(Clone, Debug, Default)]
pub(super) struct Job {
    /// Client index, or `BACKGROUND`.
    pub(super) client: u32,
    pub(super) issued: u64,
    pub(super) size: u32,
    pub(super) counted: bool,
    pub(super) stages: Vec<Stage>,
    pub(super) at: usize,
    pub(super) wait: u64,
    pub(super) service: u64,
    pub(super) stack: u64,
}

/// The service time of `op` at device `d`: its charge less the software
/// overhead counted as stack time, or an exponential draw with that mean.
/// (A positioning disk's are set afterwards: `position`.)
#[inline]
pub(super) fn service_of(d: &Dev, op: &DevOp, rng: &mut Rng) -> u64 {
    let mean = (op.ns - d.overhead).max(0.0);
    if d.exponential {
        exp_draw(rng, mean)
    } else {
        crate::cost::whole_u64(mean)
    }
}

/// The positioning disk's service times for a request's operations on it
/// (device `dev`, `d`): first the write-backs of its flush, as Linux 2.4's
/// elevator issues them (disk.rs: sorted by block, adjacent ones merged),
/// queued as background operations ahead of the request's own (which reach
/// the disk after them); then the request's own, whose stages start at
/// `first` in the order of its operations.
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
pub(super) fn position(
    disk: &mut Disk,
    ops: &[DevOp],
    dev: usize,
    d: &Dev,
    stages: &mut [Stage],
    first: usize,
    batch: &mut Vec<Pending>,
    background_ops: &mut Vec<(u16, u64, u32, u64)>,
) {
    for op in ops {
        if op.background && op.dev as usize == dev {
            batch.push(Pending {
                block: disk.block_of(op.key),
                blocks: disk.blocks_of(op.bytes as u64),
                bytes: op.bytes as u64,
                copy: crate::cost::whole_u64(op.bytes as f64 * d.per_byte_ns),
            });
        }
    }
    if !batch.is_empty() {
        let station = d.write;
        disk.elevator(batch, |service, bytes, copy| {
            background_ops.push((station, service, bytes as u32, copy));
        });
    }
    for (at, op) in (first..).zip(ops.iter().filter(|op| !op.background)) {
        if op.dev as usize == dev {
            stages[at].service = disk.access_key(op.key, op.bytes, op.kind != OpKind::Read);
        }
    }
}

impl Engine {
    /// Runs `r` through the hierarchy now and readies its job: returns it,
    /// for the caller to `enter` at once, or `NO_JOB` when its first step
    /// is an event (a stack delay).
    pub(super) fn issue(&mut self, h: &mut Hierarchy, client: u32, r: Request) -> u32 {
        if !self.warmed {
            let by_count = self.warmup_requests > 0 && self.issued >= self.warmup_requests;
            let by_time = self.warmup_ns.is_some_and(|w| self.now >= w);
            if by_count || by_time {
                // The cold state stays; every figure starts over.
                h.reset_counters();
                self.start_counting();
                for e in &mut self.erasing {
                    e.see(erases_of(h, e));
                }
            }
        }
        h.set_clock(self.now as f64);
        h.ops.clear();
        h.access_inlined(&r);
        self.issued += 1;
        let j = self.alloc();
        let mut stack = self.stack.per_request_ns;
        let mut cpu_service = 0;
        if self.cpu_station.is_some() {
            if let Some(d) = self.cpu_demand {
                cpu_service = self.draw(d);
            }
        }
        // The job's stages are written in place (its record keeps their
        // buffer from one request to the next). Background operations get
        // their service drawn here, in the order of the operations, and
        // start after the loop, before the job enters its first stage.
        let Engine {
            jobs,
            devs,
            rng,
            background_ops,
            stackless,
            link_station,
            cpu_station,
            link_ns_per_byte,
            disk,
            disk_batch,
            ..
        } = self;
        let stages = &mut jobs[j as usize].stages;
        stages.clear();
        stages.reserve(h.ops.ops().len() + 2);
        if let Some(l) = *link_station {
            stages.push(Stage {
                station: l,
                class: 1,
                lazy: false,
                bytes: 0,
                service: crate::cost::whole_u64(r.size as f64 * *link_ns_per_byte),
            });
        }
        let cpu_at = stages.len();
        if let Some(c) = *cpu_station {
            stages.push(Stage {
                station: c,
                class: 1,
                lazy: false,
                bytes: 0,
                service: 0,
            });
        }
        let last_dev = devs.len() - 1;
        for op in h.ops.ops() {
            let d = &devs[op.dev as usize];
            let service = service_of(d, op, rng);
            let write = op.kind != OpKind::Read;
            if op.background {
                if disk.is_some() && op.dev as usize == last_dev {
                    // The elevator's (`position`).
                    continue;
                }
                let copy = crate::cost::whole_u64(op.bytes as f64 * d.per_byte_ns);
                let station = if write { d.write } else { d.read };
                background_ops.push((station, service, op.bytes, copy));
                continue;
            }
            if !*stackless {
                stack += d.overhead + d.per_op_ns + op.bytes as f64 * d.per_byte_ns;
                if write && (op.dev as usize) < last_dev {
                    stack += d.insert_ns + op.bytes as f64 * d.insert_per_byte_ns;
                }
            }
            let (station, class) = if write {
                (d.write, 1)
            } else {
                (d.read, if d.reads_first { 0 } else { 1 })
            };
            let lazy = write && d.lazy.is_some();
            stages.push(Stage {
                station: if lazy { op.dev as u16 } else { station },
                class,
                lazy,
                bytes: op.bytes,
                service,
            });
        }
        if let Some(k) = disk.as_deref_mut() {
            let first = cpu_at + usize::from(cpu_station.is_some());
            let d = &devs[last_dev];
            position(
                k,
                h.ops.ops(),
                last_dev,
                d,
                stages,
                first,
                disk_batch,
                background_ops,
            );
        }
        let stack = crate::cost::whole_u64(stack);
        if self.cpu_station.is_some() {
            self.jobs[j as usize].stages[cpu_at].service = cpu_service + stack;
        }
        if !self.erasing.is_empty() {
            self.erases(h, j, cpu_at + usize::from(self.cpu_station.is_some()));
        }
        if !self.background_ops.is_empty() {
            let ops = std::mem::take(&mut self.background_ops);
            for &(station, service, bytes, copy) in &ops {
                self.spawn_flush(station, service, bytes, copy);
            }
            self.background_ops = ops;
            self.background_ops.clear();
        }
        let counted = self.counting();
        let job = &mut self.jobs[j as usize];
        job.client = client;
        job.issued = self.now;
        job.size = r.size;
        job.counted = counted;
        job.at = 0;
        job.wait = 0;
        job.service = 0;
        // Without a CPU station the stack time is a pure delay before the
        // devices (none when it is zero).
        job.stack = stack;
        self.in_system += 1;
        let delay = if self.cpu_station.is_none() { stack } else { 0 };
        if delay > 0 {
            job.at = usize::MAX;
            self.schedule(self.now + delay, j);
            return NO_JOB;
        }
        j
    }

    /// The erases request `j`'s access made on erasing tiers, as device
    /// operations of the erase time each on the tier's write station: on
    /// the request's path just before its first write to the tier (a block
    /// is erased before it is programmed), else, when its writes there are
    /// background or lazy, as background work (class 2 on a lazy device:
    /// with the write-backs it makes room for). Its ops start at stage
    /// `base`.
    pub(super) fn erases(&mut self, h: &Hierarchy, j: u32, base: usize) {
        // Most requests erase nothing: leave before any bookkeeping.
        if self.erasing.iter().all(|e| e.unchanged(h)) {
            return;
        }
        let mut found = std::mem::take(&mut self.erase_stages);
        for e in &mut self.erasing {
            let count = erases_of(h, e);
            let n = count.saturating_sub(e.seen);
            e.see(count);
            let copies = h.dev_ftl_copies(e.dev).unwrap_or(0);
            let c = copies.saturating_sub(e.copies_seen);
            e.copies_seen = copies;
            if n == 0 && c == 0 {
                continue;
            }
            let d = &self.devs[e.dev];
            let mut at = base;
            let mut pos = usize::MAX;
            if d.lazy.is_none() {
                for op in h.ops.ops() {
                    if op.background {
                        continue;
                    }
                    if op.dev as usize == e.dev && op.kind != OpKind::Read {
                        pos = at;
                        break;
                    }
                    at += 1;
                }
            }
            let class = if d.lazy.is_some() { 2 } else { 1 };
            found.push((pos, d.write, class, n * e.ns + c * e.copy_ns));
        }
        // Later positions first, so that each insertion leaves the earlier
        // ones in place.
        found.sort_unstable_by_key(|b| std::cmp::Reverse(b.0));
        for &(pos, station, class, service) in &found {
            if pos == usize::MAX {
                self.spawn_background(station, class, service, 0, None);
            } else {
                let stage = Stage {
                    station,
                    class,
                    lazy: false,
                    bytes: 0,
                    service,
                };
                self.jobs[j as usize].stages.insert(pos, stage);
            }
        }
        found.clear();
        self.erase_stages = found;
    }

    pub(super) fn spawn_background(
        &mut self,
        station: u16,
        class: u8,
        service: u64,
        bytes: u32,
        lazy_dev: Option<u16>,
    ) {
        let j = self.spawn_job(station, class, service, bytes, lazy_dev);
        let st = self.jobs[j as usize].stages[0];
        self.arrive(j, st);
    }

    /// A flush write-back: a job of its own. Its memory copies (a tier's
    /// `copies`, the bounce copy of a write-back), `copy` ns, are kernel
    /// work on the CPU station before the device: S1's flush daemon copied
    /// each dirty page to a bounce buffer.
    pub(super) fn spawn_flush(&mut self, station: u16, service: u64, bytes: u32, copy: u64) {
        let Some(c) = self.cpu_station.filter(|_| copy > 0) else {
            self.spawn_background(station, 1, service, bytes, None);
            return;
        };
        let j = self.spawn_job(station, 1, service, bytes, None);
        let cpu = Stage {
            station: c,
            class: 1,
            lazy: false,
            bytes: 0,
            service: copy,
        };
        self.jobs[j as usize].stages.insert(0, cpu);
        self.arrive(j, cpu);
    }

    /// A background job of one device stage, not yet arrived anywhere.
    pub(super) fn spawn_job(
        &mut self,
        station: u16,
        class: u8,
        service: u64,
        bytes: u32,
        lazy_dev: Option<u16>,
    ) -> u32 {
        let j = self.alloc();
        let job = &mut self.jobs[j as usize];
        job.client = BACKGROUND;
        job.counted = false;
        job.stages.clear();
        job.stages.push(Stage {
            station,
            class,
            lazy: false,
            bytes,
            service,
        });
        // The buffer it drains, to free its bytes when done.
        job.size = lazy_dev.map_or(u32::MAX, u32::from);
        job.stack = 0;
        job.at = 0;
        job.issued = self.now;
        if self.counting() {
            self.tally.background_ops += 1;
        }
        j
    }

    /// Job `j` (`NO_JOB`: none) enters its stage `at` (from the first),
    /// skipping stages of no time, or completes.
    #[inline]
    pub(super) fn enter(&mut self, h: &mut Hierarchy, j: u32) {
        self.enter_from(h, j, self.inline);
    }

    /// `enter`. With `inline`, a stage that ends before every queued event
    /// ends at once, as if `run_until_hungry` had taken its event next (no
    /// other event can come first): the job goes on to its next stage, and
    /// a client that completes issues its next request in the same loop.
    /// The order of everything that happens is the events' order; only the
    /// queue is left out. Only a caller with nothing left to do at this
    /// time may ask for it (not `release`, which enters several jobs).
    pub(super) fn enter_from(&mut self, h: &mut Hierarchy, mut j: u32, inline: bool) {
        loop {
            if j == NO_JOB {
                return;
            }
            let job = &mut self.jobs[j as usize];
            if job.at == usize::MAX {
                job.at = 0;
            }
            let Some(&st) = job.stages.get(job.at) else {
                j = self.complete(h, j, inline);
                continue;
            };
            if st.lazy {
                // A write into a lazy buffer: on its way at once if the
                // buffer has room, else blocked until it has.
                let dev = st.station as usize;
                let l = self.devs[dev].lazy.as_mut().expect("a lazy device");
                // A write larger than the whole buffer goes when it is empty.
                let fits = l.used + st.bytes as u64 <= l.capacity || l.used == 0;
                if l.blocked.is_empty() && fits {
                    l.used += st.bytes as u64;
                    let station = self.devs[dev].write;
                    self.spawn_background(station, 2, st.service, st.bytes, Some(dev as u16));
                    self.jobs[j as usize].at += 1;
                    continue;
                }
                l.blocked.push_back((j, st.bytes, st.service));
                if self.jobs[j as usize].counted {
                    self.tally.blocked_writes += 1;
                }
                // Stays at this stage; `release` moves it on and adds the
                // time blocked to its wait (minus now here, plus then).
                self.jobs[j as usize].wait = self.jobs[j as usize].wait.wrapping_sub(self.now);
                return;
            }
            // A stage of no time (no CPU demand, no stack cost) is no visit.
            if st.service == 0 {
                self.jobs[j as usize].at += 1;
                continue;
            }
            let station = &mut self.stations[st.station as usize];
            if station.is_fcfs() {
                // `start_stage` and `finish_stage` of an FCFS station, for
                // the common case in one place.
                let (end, waited) = station.start_fcfs(self.now, st.service);
                let job = &mut self.jobs[j as usize];
                job.wait += waited;
                let counted = job.counted;
                if counted {
                    self.tally.station_wait[st.station as usize] += waited as u128;
                }
                if inline && end < self.earliest() {
                    self.seq += 1;
                    self.depth = 0;
                    self.advance(end);
                    let job = &mut self.jobs[j as usize];
                    job.service += st.service;
                    job.at += 1;
                    if counted {
                        self.tally.station_service[st.station as usize] += st.service as u128;
                    }
                    continue;
                }
                self.schedule(end, j);
                return;
            }
            let Some(end) = self.start_stage(j, st) else {
                // Queued at the station.
                return;
            };
            if inline && end < self.earliest() {
                // Its end is the next event: taken now, as the loop of
                // `run_until_hungry` would (the sequence number too).
                self.seq += 1;
                self.depth = 0;
                self.advance(end);
                self.finish_stage(h, j);
                continue;
            }
            self.schedule(end, j);
            return;
        }
    }

    /// Job `j` arrives at the station of its current stage, `st`: if a
    /// server takes it at once, returns when its service ends (the caller
    /// schedules that), else it waits in the station's queue.
    #[inline]
    pub(super) fn start_stage(&mut self, j: u32, st: Stage) -> Option<u64> {
        let station = &mut self.stations[st.station as usize];
        if station.is_fcfs() {
            let (end, waited) = station.start_fcfs(self.now, st.service);
            let job = &mut self.jobs[j as usize];
            job.wait += waited;
            if job.counted {
                self.tally.station_wait[st.station as usize] += waited as u128;
            }
            return Some(end);
        }
        station
            .arrive(self.now, j, st.class as usize, st.service)
            .then_some(self.now + st.service)
    }

    /// Job `j` arrives at the station of its current stage, `st`.
    #[inline]
    pub(super) fn arrive(&mut self, j: u32, st: Stage) {
        if let Some(end) = self.start_stage(j, st) {
            self.schedule(end, j);
        }
    }

    /// Job `j` finished the service of its current stage.
    pub(super) fn stage_done(&mut self, h: &mut Hierarchy, j: u32) {
        if self.jobs[j as usize].at == usize::MAX {
            // The stack delay of a run without a CPU station.
            self.enter(h, j);
            return;
        }
        if self.finish_stage(h, j) {
            self.enter(h, j);
        }
    }

    /// The end of job `j`'s current stage at its station: the station's
    /// next waiting job starts, and the job moves past the stage. Returns
    /// whether it is a request's job, to `enter` its next stage.
    #[inline]
    pub(super) fn finish_stage(&mut self, h: &mut Hierarchy, j: u32) -> bool {
        let job = &self.jobs[j as usize];
        let st = job.stages[job.at];
        let jobs = &self.jobs;
        let station = &mut self.stations[st.station as usize];
        if station.is_fcfs() {
            // Nothing waits in an FCFS station's queue (`start_fcfs`).
        } else if let Some((next, waited)) = station.depart(self.now, |k| {
            let jb = &jobs[k as usize];
            jb.stages[jb.at].service
        }) {
            let nj = &mut self.jobs[next as usize];
            let nst = nj.stages[nj.at];
            nj.wait += waited;
            if nj.counted {
                self.tally.station_wait[nst.station as usize] += waited as u128;
            }
            self.schedule(self.now + nst.service, next);
        }
        let job = &mut self.jobs[j as usize];
        job.service += st.service;
        if job.counted {
            self.tally.station_service[st.station as usize] += st.service as u128;
        }
        job.at += 1;
        if job.client == BACKGROUND {
            if job.at < job.stages.len() {
                // A flush's copy done on the CPU: now its device.
                let next = job.stages[job.at];
                self.arrive(j, next);
                return false;
            }
            let lazy = job.size;
            self.free.push(j);
            if lazy != u32::MAX {
                self.release(h, lazy as usize, st.bytes as u64);
            }
            return false;
        }
        true
    }

    /// A lazy write-back of device `dev` finished: its bytes leave the
    /// buffer, and blocked writers that now fit go on, in order.
    pub(super) fn release(&mut self, h: &mut Hierarchy, dev: usize, bytes: u64) {
        self.devs[dev].lazy.as_mut().expect("a lazy device").used -= bytes;
        loop {
            let l = self.devs[dev].lazy.as_mut().expect("a lazy device");
            let Some(&(j, b, service)) = l.blocked.front() else {
                return;
            };
            if l.used + b as u64 > l.capacity && l.used > 0 {
                return;
            }
            l.blocked.pop_front();
            l.used += b as u64;
            let station = self.devs[dev].write;
            self.spawn_background(station, 2, service, b, Some(dev as u16));
            let job = &mut self.jobs[j as usize];
            job.wait = job.wait.wrapping_add(self.now);
            job.at += 1;
            // More blocked writers may go at this time: no stage ends
            // ahead of its event here.
            self.enter_from(h, j, false);
        }
    }

    /// Job `j` completes. Returns the job of the client's next request when
    /// it issues at once, to be entered (else `NO_JOB`); with `inline`
    /// (see `enter_from`), also when its think time ends before every
    /// queued event.
    pub(super) fn complete(&mut self, h: &mut Hierarchy, j: u32, inline: bool) -> u32 {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let latency = now - job.issued;
        self.in_system -= 1;
        if job.counted {
            let t = &mut self.tally;
            t.completed += 1;
            t.bytes += job.size as u64;
            t.latency_sum += latency as u128;
            t.wait_sum += job.wait as u128;
            // The CPU stage served the stack time too: it is counted as
            // stack, not service.
            let in_cpu = if self.cpu_station.is_some() {
                job.stack
            } else {
                0
            };
            t.service_sum += (job.service - in_cpu) as u128;
            t.stack_sum += job.stack as u128;
            t.record(latency.max(1));
            if let Some(c) = t.clients.get_mut(job.client as usize) {
                c.0 += 1;
                c.1 += latency as u128;
            }
        }
        let client = job.client;
        self.free.push(j);
        if let Load::Closed { .. } = self.load {
            let think = self.think.map_or(0, |d| self.draw(d));
            // No think time: the client issues at once, without an event
            // (unless requests of no time nest too deep). Only in order
            // mode, where any request read is the client's.
            let in_order = !matches!(self.load, Load::Closed { by_pid: true, .. })
                && self.order_at < self.order.len();
            if think == 0 && self.depth < 16 && in_order {
                self.depth += 1;
                return self.issue_next(h, client).unwrap_or(NO_JOB);
            }
            let t = now + think;
            if inline && think > 0 && in_order && t < self.earliest() {
                // The client's issue is the next event: taken now, as the
                // loop of `run_until_hungry` would.
                self.seq += 1;
                self.depth = 0;
                self.advance(t);
                return self.issue_next(h, client).unwrap_or(NO_JOB);
            }
            self.schedule(t, ISSUE | client);
        }
        NO_JOB
    }
}
