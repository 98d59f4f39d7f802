//! `none`: static placement. Pages stay on the node the placement rule
//! gave them until they leave memory; the baseline every other policy is
//! compared with.

use super::MigrationBuild;
use serde::{Deserialize, Serialize};

/// No keys besides `type` and `cost`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoneParams {}

pub struct Static;

impl MigrationBuild for Static {
    type Params = NoneParams;
}
