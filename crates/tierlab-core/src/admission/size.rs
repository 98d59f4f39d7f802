//! Size threshold: admit objects of at most `max_size` bytes. A large object
//! takes the room of many small ones for what is often one hit; the same
//! rule as libCacheSim's `size` admission (cache/admission/size.c).

use super::{absolute, Admission, AdmissionBuild, AdmitCtx, BuildCtx};
use crate::request::Request;
use crate::units::Size;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SizeParams {
    /// Largest object admitted, in bytes (required).
    pub max_size: Size,
}

pub struct SizeLimit {
    max: u64,
}

impl AdmissionBuild for SizeLimit {
    type Params = SizeParams;
    fn build(p: &SizeParams, _: &BuildCtx) -> Self {
        SizeLimit {
            max: p.max_size.resolve(0),
        }
    }
    fn check(p: &SizeParams) -> Result<(), String> {
        if absolute("max_size", p.max_size)? == 0 {
            return Err("max_size: must be at least 1 byte".into());
        }
        Ok(())
    }
}

impl Admission for SizeLimit {
    #[inline]
    fn admit(&mut self, req: &Request, _: &AdmitCtx) -> bool {
        req.size as u64 <= self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_up_to_the_limit_inclusive() {
        let p = SizeParams {
            max_size: Size::Absolute(4096),
        };
        let mut a = SizeLimit::build(&p, &BuildCtx { seed: 0, tier: 0 });
        let ctx = AdmitCtx::default();
        assert!(a.admit(&Request::read(1, 1), &ctx));
        assert!(a.admit(&Request::read(1, 4096), &ctx));
        assert!(!a.admit(&Request::read(1, 4097), &ctx));
        assert!(SizeLimit::check(&SizeParams {
            max_size: Size::Absolute(0)
        })
        .is_err());
    }
}
