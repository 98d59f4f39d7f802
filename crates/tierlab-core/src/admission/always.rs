//! Admit everything: a tier without admission control (the default).

use super::{Admission, AdmissionBuild, AdmitCtx, BuildCtx};
use crate::request::Request;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AlwaysParams {}

pub struct Always;

impl AdmissionBuild for Always {
    type Params = AlwaysParams;
    fn build(_: &AlwaysParams, _: &BuildCtx) -> Self {
        Always
    }
}

impl Admission for Always {
    #[inline(always)]
    fn admit(&mut self, _: &Request, _: &AdmitCtx) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_every_object() {
        let mut a = Always;
        let ctx = AdmitCtx::default();
        assert!((0..100).all(|k| a.admit(&Request::read(k, 1 << 20), &ctx)));
    }
}
