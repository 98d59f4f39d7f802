//! `oracle-epoch`: a reference no real system has. The run is cut into
//! epochs of `epoch` references; at the start of each, the pages with the
//! most accesses *in that epoch* are moved to the fastest node (as many as
//! it holds) and the others off it, every move charged as a migration. It
//! needs per-epoch access counts before the run (a pre-pass). It bounds
//! what an online policy that migrates once per epoch could gain, not what
//! any policy could: it pays for its moves.

use super::MigrationBuild;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleEpochParams {
    /// References per epoch: required (no source gives one).
    pub epoch: u64,
}

/// Only for listing the keys (`epoch` has no default: it is required).
impl Default for OracleEpochParams {
    fn default() -> Self {
        OracleEpochParams { epoch: 0 }
    }
}

pub struct OracleEpoch;

impl MigrationBuild for OracleEpoch {
    type Params = OracleEpochParams;
    fn check(p: &OracleEpochParams) -> Result<(), (&'static str, String)> {
        if p.epoch == 0 {
            return Err(("epoch", "must be at least 1 reference".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epoch_of_zero_is_refused() {
        assert_eq!(
            OracleEpoch::check(&OracleEpochParams { epoch: 0 })
                .unwrap_err()
                .0,
            "epoch"
        );
        assert!(OracleEpoch::check(&OracleEpochParams { epoch: 1 }).is_ok());
    }
}
