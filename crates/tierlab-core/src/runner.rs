//! One entry point for every run: the tier engine ([`Simulation`]) or,
//! under `[vm]`, the virtual-memory layer ([`VmRun`]), each with its own
//! loop. The binding and the CLI step a [`Runner`] and never ask which.

use crate::config::Config;
use crate::error::Error;
use crate::run::vm::VmRun;
use crate::sim::Simulation;
use crate::source::setup::Progress;
use crate::stats::RunResult;

pub enum Runner {
    Tiers(Box<Simulation>),
    Vm(Box<VmRun>),
}

impl Runner {
    pub fn new(cfg: &Config) -> Result<Self, Error> {
        Self::with_progress(cfg, |_| true)
    }

    pub fn with_progress(cfg: &Config, progress: impl Progress) -> Result<Self, Error> {
        Ok(if cfg.vm.is_some() {
            Runner::Vm(Box::new(VmRun::new(cfg, progress)?))
        } else {
            Runner::Tiers(Box::new(Simulation::with_progress(cfg, progress)?))
        })
    }

    pub fn len_hint(&self) -> Option<u64> {
        match self {
            Runner::Tiers(s) => s.len_hint(),
            Runner::Vm(v) => v.len_hint(),
        }
    }

    pub fn processed(&self) -> u64 {
        match self {
            Runner::Tiers(s) => s.processed(),
            Runner::Vm(v) => v.processed(),
        }
    }

    /// Runs about `max` more requests; true when the source is exhausted.
    pub fn step(&mut self, max: u64) -> Result<bool, Error> {
        match self {
            Runner::Tiers(s) => s.step(max),
            Runner::Vm(v) => v.step(max),
        }
    }

    pub fn result(&self) -> RunResult {
        match self {
            Runner::Tiers(s) => s.result(),
            Runner::Vm(v) => v.result(),
        }
    }

    /// Builds and runs a config to the end.
    pub fn run(cfg: &Config) -> Result<RunResult, Error> {
        let mut r = Runner::new(cfg)?;
        while !r.step(u64::MAX)? {}
        Ok(r.result())
    }
}
