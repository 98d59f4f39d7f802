//! `oracle-static`: a reference no real system has. The pages with the
//! most accesses over the whole run live on the fastest node for the whole
//! run (as many as it holds), the others below it; nothing migrates. It
//! needs the run's per-page access counts before the run (a pre-pass over
//! the trace). Without contention, no other static placement of the same
//! capacities has a lower total access time: each access costs its node's
//! time, so the sum is least when the most-accessed pages take the fastest
//! frames (an exchange argument).

use super::MigrationBuild;
use serde::{Deserialize, Serialize};

/// No keys besides `type` and `cost`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleStaticParams {}

pub struct OracleStatic;

impl MigrationBuild for OracleStatic {
    type Params = OracleStaticParams;
}
