//! The tiers' model under the time model: requests go to the event engine
//! (time/engine.rs), which runs them through the hierarchy as clients
//! issue them or as they arrive; the engine says when it needs the next
//! request. Requests finish later than they are handed in, so this model
//! keeps its own timeline points (after each stretch of events) and its
//! own warm-up (the engine starts counting at a request, a time or a
//! pass).

use crate::config::Config;
use crate::error::Error;
use crate::request::Request;
use crate::run::driver::{Clock, Common, Driver, Model, Stream};
use crate::run::tiers::{Assembled, Tiers};
use crate::run::timeline::{mark_of, Recorder};
use crate::source::setup::{Progress, BATCH};
use crate::spec::ConfigError;
use crate::stats::RunResult;
use crate::tech::Catalog;
use crate::time::config::{LoadType, Warmup};
use crate::time::engine::{Engine, Load};

pub struct Timed {
    tiers: Tiers,
    pub engine: Engine,
    load: &'static str,
    clients: Option<u32>,
    by_pid: bool,
    /// Requests handed to the engine.
    fed: u64,
    /// The engine ran to its first need of a request.
    primed: bool,
    done: bool,
}

impl Timed {
    /// Events until the engine needs a request (true) or has nothing left
    /// to do (false); then the warm-up's end and the timeline's point, if
    /// either fell due.
    fn events(&mut self, rec: &mut Recorder) -> bool {
        let hungry = self.engine.run_until_hungry(&mut self.tiers.h);
        if self.engine.warm_event {
            self.engine.warm_event = false;
            rec.restart();
            self.tiers.energy.restart();
        }
        let t = &self.tiers.h.totals;
        if rec.due(t.reads + t.writes) {
            self.point(rec);
        }
        hungry
    }

    /// The engine's first stretch of events, to its first need of a
    /// request (once, before the first request is handed in).
    fn prime(&mut self, rec: &mut Recorder) {
        if !self.primed {
            self.primed = true;
            self.events(rec);
        }
    }

    /// The engine's figures for the result.
    pub fn time_result(&self) -> crate::time::result::TimeResult {
        crate::time::result::TimeResult::collect(&self.engine, self.load, self.clients, self.by_pid)
    }
}

impl Model for Timed {
    type Rec = Request;
    const CLOCK: Clock = Clock::Model;

    fn run(&mut self, rs: &[Request], rec: &mut Recorder) -> Result<(), Error> {
        self.prime(rec);
        if self.engine.takes_batches() {
            // A closed loop takes the whole batch at once.
            self.engine.feed_all(&mut self.tiers.h, rs);
            self.fed += rs.len() as u64;
            self.events(rec);
            return Ok(());
        }
        // An open load: one arrival read ahead at a time.
        for r in rs {
            self.engine.feed(&mut self.tiers.h, *r);
            self.fed += 1;
            self.events(rec);
        }
        Ok(())
    }

    fn buffer(&mut self, rec: &mut Recorder) -> Option<&mut Vec<Request>> {
        self.prime(rec);
        // A closed loop dealing in order takes the next batch as its
        // buffer of requests, without a copy.
        self.engine.order_buffer()
    }

    fn run_buffer(&mut self, rec: &mut Recorder) -> Result<(), Error> {
        self.fed += self.engine.order_len() as u64;
        self.events(rec);
        Ok(())
    }

    fn source_ended(&mut self) -> Result<(), Error> {
        self.engine.source_ended();
        Ok(())
    }

    fn drain(&mut self, _budget: u64, rec: &mut Recorder) -> Result<bool, Error> {
        self.prime(rec);
        if !self.events(rec) && !self.done {
            self.engine.finish();
            self.done = true;
        }
        Ok(self.done)
    }

    fn issued(&self) -> u64 {
        self.engine.issued
    }

    fn point(&mut self, rec: &mut Recorder) {
        let now = self.engine.now.saturating_sub(self.engine.start_ns) as f64;
        self.tiers
            .energy
            .push(&self.tiers.h, now, &mut rec.timeline);
        rec.point(mark_of(&self.tiers.h));
    }

    fn count_from_here(&mut self, _rec: &mut Recorder) {
        // Counting starts with the first request of this pass.
        self.engine.warmup_requests = self.fed;
    }

    fn check_finished(&self) -> Result<(), Error> {
        let e = &self.engine;
        if e.warmup_pending && !e.warmed {
            return Err(ConfigError::at(
                "run.warmup",
                format!(
                    "the warm-up outlasts the run ({} requests, {:.3} s simulated): nothing was counted; give a shorter warm-up",
                    e.issued,
                    e.now as f64 / 1e9
                ),
            )
            .into());
        }
        Ok(())
    }

    fn final_point(&self, _rec: &Recorder) -> bool {
        true
    }

    fn result(&self, common: Common) -> RunResult {
        self.tiers.result_with(common, Some(self))
    }
}

/// The timed tier run of `cfg`, from its tier assembly.
pub fn driver(
    cfg: &Config,
    cat: &Catalog,
    mut a: Assembled,
    progress: impl Progress,
) -> Result<Driver<Timed, Stream>, Error> {
    let setup = a.stream.setup().expect("a tier run keeps its setup");
    let mut model = crate::run::assembly::model(cfg, cat, setup.seed)?;
    if let Some(disk) = model.disk.as_mut() {
        // Where the workload's files lie on the disk: a pre-pass over the
        // keys it names (time/disk.rs).
        let mut pass = setup.open(BATCH, progress)?;
        let mut pages = crate::time::disk::Pages::default();
        while let Some(batch) = pass.next_batch()? {
            for r in batch {
                pages.add(r.key);
            }
        }
        disk.layout = crate::time::disk::Layout::from_pages(pages);
    }
    let (load, clients, by_pid) = match &model.load {
        Load::Closed {
            clients, by_pid, ..
        } => (
            match cfg.load.as_ref().map(|l| l.kind) {
                Some(LoadType::Closed) => "closed",
                _ => "serial",
            },
            (!by_pid).then_some(*clients),
            *by_pid,
        ),
        Load::Open { .. } => ("open", None, false),
    };
    if load == "open"
        && cfg.load.as_ref().is_some_and(|l| l.rate.is_none())
        && !crate::time::has_timestamps(&setup.source)
    {
        return Err(ConfigError::at(
            "load.rate",
            format!(
                "required: {} has no timestamps to arrive at; give a Poisson rate (arrivals per second)",
                a.stream.batches.describe()
            ),
        )
        .into());
    }
    a.tiers.h.ops.enable();
    let warmup = a.warmup.requests;
    let mut engine = Engine::new(model);
    engine.warmup_requests = warmup;
    engine.warmup_pending = warmup > 0
        || matches!(
            cfg.run.warmup,
            Some(Warmup::Duration(_)) | Some(Warmup::Passes(_))
        );
    engine.warmup_ns = match cfg.run.warmup {
        Some(Warmup::Duration(d)) => Some(crate::cost::whole(d.0) as u64),
        _ => None,
    };
    engine.start();
    let timed = Timed {
        tiers: a.tiers,
        engine,
        load,
        clients,
        by_pid,
        fed: 0,
        primed: false,
        done: false,
    };
    Ok(Driver::new(timed, a.stream, a.interval, a.passes, a.warmup))
}
