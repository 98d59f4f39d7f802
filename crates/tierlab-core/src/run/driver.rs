//! The one driver: the loop every run goes through, whatever its model.
//! It owns what all runs share: reading the source batch by batch, its
//! passes (`run.passes`) and `run.max_requests` (the feed's limit), the
//! warm-up by requests or by passes, stepping a budget of requests at a
//! time (so that the caller shows progress and stops on Ctrl-C between
//! steps), the empty-run check, the timeline's points and its final point,
//! and the result's common parts (workload, skipped records, timeline).
//!
//! A model is what one request does: the tiers of a serial run
//! (run/tiers.rs), the same under the time model's events (run/timed.rs),
//! the virtual-memory core (run/vm.rs) and its processes on hardware
//! threads (run/vm_procs.rs). It implements [`Model`]; the driver is
//! generic over it and over its [`Feed`], so each pairing is compiled
//! into its own loop (the hot paths keep their speed: nothing dynamic per
//! request). Adding a model is one file implementing [`Model`] and one
//! line in run/assembly.rs that builds it.

use crate::error::Error;
use crate::request::Request;
use crate::run::timeline::Recorder;
use crate::source::setup::{Batches, RunSetup, BATCH};
use crate::source::trace::TraceError;
use crate::stats::{RunResult, Timeline};

/// Who decides when a timeline point falls due.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Clock {
    /// The driver, every `interval` requests handed to the model (serial
    /// models: a request is done when `run` returns); the warm-up by
    /// requests ends on the same count.
    Requests,
    /// The model: its requests finish later than they are handed in (the
    /// time model's events: it asks [`Recorder::due`] after each stretch),
    /// or it runs them in an order of its own after the feed ended (the
    /// processes' earliest-clock order: [`Recorder::count`] per request).
    /// It ends its own warm-up.
    Model,
}

/// What the driver asks of a model.
pub trait Model {
    /// A request as the feed hands it.
    type Rec;
    const CLOCK: Clock;

    /// Runs `rs` in order. Under [`Clock::Requests`] the driver never
    /// hands more than the requests up to the next point or the warm-up's
    /// end.
    fn run(&mut self, rs: &[Self::Rec], rec: &mut Recorder) -> Result<(), Error>;

    /// A buffer for the feed's next batch, handed over without a copy
    /// (the buffer and the feed's are swapped), when the model can take
    /// it so; [`Model::run_buffer`] then runs it. None: [`Model::run`].
    fn buffer(&mut self, _rec: &mut Recorder) -> Option<&mut Vec<Self::Rec>> {
        None
    }

    /// Runs the batch the feed put in [`Model::buffer`].
    fn run_buffer(&mut self, _rec: &mut Recorder) -> Result<(), Error> {
        unreachable!("a model that gives no buffer gets none back")
    }

    /// The feed has no request left (after the last pass).
    fn source_ended(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// After the source ended: the model's remaining work (events still
    /// queued, processes still running their own streams), about `budget`
    /// requests of it; true when nothing is left.
    fn drain(&mut self, _budget: u64, _rec: &mut Recorder) -> Result<bool, Error> {
        Ok(true)
    }

    /// Requests handed to the model so far: since its counters last
    /// started over ([`Clock::Requests`]), or in all ([`Clock::Model`]).
    fn issued(&self) -> u64;

    /// A timeline point now (the recorder's common columns, the model's
    /// own).
    fn point(&mut self, rec: &mut Recorder);

    /// Counting starts over from here: the warm-up's end.
    fn count_from_here(&mut self, rec: &mut Recorder);

    /// Checks on a finished run that only the model can make (a warm-up
    /// that outlasted the run).
    fn check_finished(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Whether the finished run ends on a point: when requests were
    /// counted since the last one.
    fn final_point(&self, rec: &Recorder) -> bool {
        rec.pending()
    }

    /// The run's result, from the driver's common parts.
    fn result(&self, common: Common) -> RunResult;
}

/// The result's parts the driver owns.
pub struct Common {
    /// What the feed reads (`workload` in the result).
    pub workload: String,
    pub skipped_records: u64,
    pub timeline: Timeline,
}

/// Where a run's requests come from, a batch at a time.
pub trait Feed {
    type Rec;
    fn next(&mut self) -> Result<Option<&[Self::Rec]>, Error>;
    /// The next batch into `out` without a copy where the feed can (its
    /// buffer and `out` swapped); false when the feed has none left.
    fn next_into(&mut self, out: &mut Vec<Self::Rec>) -> Result<bool, Error>
    where
        Self::Rec: Clone,
    {
        out.clear();
        match self.next()? {
            Some(b) => {
                out.extend_from_slice(b);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    /// The source again from its start, for the next pass.
    fn reopen(&mut self) -> Result<(), Error>;
    /// Requests in one pass, when known (after `max_requests`).
    fn len_hint(&self) -> Option<u64>;
    /// Malformed records passed over in this pass.
    fn skipped(&self) -> u64;
    fn describe(&self) -> String;
}

/// A run's requests from its setup (trace or generator), cut at
/// `max_requests`; opened again per pass.
pub struct Stream {
    pub batches: Batches,
    setup: Option<RunSetup>,
}

impl Stream {
    /// `batches`, which `setup` opens again for each further pass (None:
    /// one pass only).
    pub fn new(batches: Batches, setup: Option<RunSetup>) -> Self {
        Stream { batches, setup }
    }

    pub fn setup(&self) -> Option<&RunSetup> {
        self.setup.as_ref()
    }
}

impl Feed for Stream {
    type Rec = Request;
    #[inline]
    fn next(&mut self) -> Result<Option<&[Request]>, Error> {
        Ok(self.batches.next_batch()?)
    }
    #[inline]
    fn next_into(&mut self, out: &mut Vec<Request>) -> Result<bool, Error> {
        Ok(self.batches.next_batch_swap(out)?)
    }
    fn reopen(&mut self) -> Result<(), Error> {
        let setup = self
            .setup
            .as_ref()
            .expect("a run of several passes keeps its setup");
        self.batches = setup.open(BATCH, |_| true)?;
        Ok(())
    }
    fn len_hint(&self) -> Option<u64> {
        let n = self.batches.len_hint()?;
        Some(match &self.setup {
            Some(s) => n.min(s.max_requests),
            None => n,
        })
    }
    fn skipped(&self) -> u64 {
        self.batches.skipped()
    }
    fn describe(&self) -> String {
        self.batches.describe()
    }
}

/// The warm-up the driver ends: requests (counted from the run's start)
/// and the pass counting starts with (1: the first).
#[derive(Clone, Copy, Debug, Default)]
pub struct Warmup {
    pub requests: u64,
    pub count_from_pass: u64,
}

enum Phase {
    Feeding,
    Draining,
    Done,
}

pub struct Driver<M: Model, F: Feed<Rec = M::Rec>>
where
    M::Rec: Clone,
{
    model: M,
    feed: F,
    rec: Recorder,
    describe: String,
    phase: Phase,
    /// Warm-up by requests still to end (0: none).
    warmup: u64,
    /// Requests run before the counters started over.
    warmed_at: u64,
    passes_left: u64,
    pass: u64,
    count_from_pass: u64,
    /// Malformed records passed over in the passes before this one.
    skipped_before: u64,
}

impl<M: Model, F: Feed<Rec = M::Rec>> Driver<M, F>
where
    M::Rec: Clone,
{
    /// `passes` over `feed` (at least 1), a point every `interval`.
    pub fn new(model: M, feed: F, interval: u64, passes: u64, warmup: Warmup) -> Self {
        let requests = if M::CLOCK == Clock::Requests {
            warmup.requests
        } else {
            0
        };
        Driver {
            model,
            describe: feed.describe(),
            feed,
            rec: {
                let mut r = Recorder::new(interval);
                if requests > 0 {
                    r.countdown = interval.min(requests);
                }
                r
            },
            phase: Phase::Feeding,
            warmup: requests,
            warmed_at: 0,
            passes_left: passes.max(1) - 1,
            pass: 1,
            count_from_pass: warmup.count_from_pass.max(1),
            skipped_before: 0,
        }
    }

    /// Total requests, when known.
    pub fn len_hint(&self) -> Option<u64> {
        Some(self.feed.len_hint()? * (self.pass + self.passes_left))
    }

    /// Requests run so far (over every pass, the warm-up included).
    pub fn processed(&self) -> u64 {
        self.warmed_at + self.model.issued()
    }

    pub fn is_done(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Runs about `max` more requests (whole batches). Returns true when
    /// the run is over.
    pub fn step(&mut self, max: u64) -> Result<bool, Error> {
        let stop = self.processed().saturating_add(max);
        loop {
            match self.phase {
                Phase::Done => return Ok(true),
                _ if self.processed() >= stop => return Ok(false),
                Phase::Feeding => {
                    if let Some(buf) = self.model.buffer(&mut self.rec) {
                        if self.feed.next_into(buf)? {
                            self.model.run_buffer(&mut self.rec)?;
                        } else {
                            self.feed_ran_out()?;
                        }
                        continue;
                    }
                    let Some(batch) = self.feed.next()? else {
                        self.feed_ran_out()?;
                        continue;
                    };
                    if M::CLOCK == Clock::Model {
                        self.model.run(batch, &mut self.rec)?;
                        continue;
                    }
                    // Cut at the points and the warm-up's end.
                    let mut b = batch;
                    while !b.is_empty() {
                        let n = b.len().min(self.rec.countdown as usize);
                        let (now, rest) = b.split_at(n);
                        self.model.run(now, &mut self.rec)?;
                        b = rest;
                        self.rec.countdown -= n as u64;
                        if self.rec.countdown == 0 {
                            tick(
                                &mut self.model,
                                &mut self.rec,
                                &mut self.warmup,
                                &mut self.warmed_at,
                            );
                        }
                    }
                }
                Phase::Draining => {
                    let budget = stop - self.processed();
                    if self.model.drain(budget, &mut self.rec)? {
                        self.finish()?;
                    }
                }
            }
        }
    }

    pub fn run_to_end(&mut self) -> Result<(), Error> {
        while !self.step(u64::MAX)? {}
        Ok(())
    }

    /// The counters start over, after `at` requests.
    fn restart(&mut self, at: u64) {
        restart(&mut self.model, &mut self.rec, &mut self.warmed_at, at);
    }

    /// The feed has no batch left: the next pass starts, or, after the
    /// last, the model hears it and drains.
    fn feed_ran_out(&mut self) -> Result<(), Error> {
        if !self.next_pass()? {
            self.model.source_ended()?;
            self.phase = Phase::Draining;
        }
        Ok(())
    }

    /// The next pass over the feed, if any is left: the stream opened
    /// again, the model as it is. A warm-up of whole passes ends here.
    fn next_pass(&mut self) -> Result<bool, Error> {
        if self.passes_left == 0 {
            return Ok(false);
        }
        self.passes_left -= 1;
        self.pass += 1;
        self.skipped_before += self.feed.skipped();
        self.feed.reopen()?;
        if self.pass == self.count_from_pass {
            match M::CLOCK {
                Clock::Requests => {
                    let at = self.model.issued();
                    self.restart(at);
                }
                Clock::Model => self.model.count_from_here(&mut self.rec),
            }
        }
        Ok(true)
    }

    /// The run is over: it must have run something; its last point.
    fn finish(&mut self) -> Result<(), Error> {
        self.phase = Phase::Done;
        if self.processed() == 0 {
            return Err(TraceError::Empty {
                path: self.describe.clone().into(),
            }
            .into());
        }
        self.model.check_finished()?;
        if self.model.final_point(&self.rec) {
            self.model.point(&mut self.rec);
        }
        Ok(())
    }

    pub fn result(&self) -> RunResult {
        self.model.result(Common {
            workload: self.describe.clone(),
            skipped_records: self.skipped_before + self.feed.skipped(),
            timeline: self.rec.timeline.clone(),
        })
    }
}

/// The countdown ran out: the warm-up's end, a point, or both. (The
/// driver's parts apart: its feed's batch is still borrowed.)
#[cold]
fn tick<M: Model>(model: &mut M, rec: &mut Recorder, warmup: &mut u64, warmed_at: &mut u64) {
    let counted = model.issued();
    if *warmup > 0 && counted >= *warmup {
        *warmup = 0;
        restart(model, rec, warmed_at, counted);
        return;
    }
    model.point(rec);
    rec.countdown = rec.interval;
    if *warmup > 0 {
        rec.countdown = rec.countdown.min(*warmup - counted);
    }
}

/// The counters start over, after `at` requests.
fn restart<M: Model>(model: &mut M, rec: &mut Recorder, warmed_at: &mut u64, at: u64) {
    *warmed_at += at;
    rec.restart();
    model.count_from_here(rec);
}
