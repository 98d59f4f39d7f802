//! One entry point for every run: the one driver (run/driver.rs) with the
//! model a config asks for, built by run/assembly.rs. The binding and the
//! CLI step a [`Runner`] and never ask which model it drives; each variant
//! is the driver compiled for one model and its feed.

use crate::config::Config;
use crate::error::Error;
use crate::run::driver::{Driver, Stream};
use crate::run::tiered::Tiered;
use crate::run::tiers::Tiers;
use crate::run::timed::Timed;
use crate::run::vm::VmDriver;
use crate::run::vm_procs::Procs;
use crate::source::setup::Progress;
use crate::stats::RunResult;

pub enum Runner {
    Tiers(Box<Driver<Tiers, Stream>>),
    Timed(Box<Driver<Timed, Stream>>),
    Vm(VmDriver),
    Tiered(Box<Driver<Tiered, Stream>>),
    TieredProcs(Box<Driver<Procs<Tiered>, Stream>>),
}

/// `$body` with `$d` bound to the driver, whichever it is.
macro_rules! each {
    ($self:expr, $d:ident => $body:expr) => {
        match $self {
            Runner::Tiers($d) => $body,
            Runner::Timed($d) => $body,
            Runner::Tiered($d) => $body,
            Runner::TieredProcs($d) => $body,
            Runner::Vm(v) => match v {
                VmDriver::Raw($d) => $body,
                VmDriver::Stream($d) => $body,
                VmDriver::Procs($d) => $body,
            },
        }
    };
}

impl Runner {
    pub fn new(cfg: &Config) -> Result<Self, Error> {
        Self::with_progress(cfg, |_| true)
    }

    /// [`Runner::new`], telling `progress` the requests its pre-passes
    /// read; false from it stops them.
    pub fn with_progress(cfg: &Config, progress: impl Progress) -> Result<Self, Error> {
        crate::run::assembly::runner(cfg, progress)
    }

    pub fn len_hint(&self) -> Option<u64> {
        each!(self, d => d.len_hint())
    }

    pub fn processed(&self) -> u64 {
        each!(self, d => d.processed())
    }

    /// Runs about `max` more requests; true when the run is over.
    pub fn step(&mut self, max: u64) -> Result<bool, Error> {
        each!(self, d => d.step(max))
    }

    pub fn result(&self) -> RunResult {
        each!(self, d => d.result())
    }

    /// Builds and runs a config to the end.
    pub fn run(cfg: &Config) -> Result<RunResult, Error> {
        let mut r = Runner::new(cfg)?;
        while !r.step(u64::MAX)? {}
        Ok(r.result())
    }
}
