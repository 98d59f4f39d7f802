//! Write-budget admission: keeps the bytes written into a tier under a
//! budget in simulated time, to make a flash tier last (its endurance is a
//! number of full-device writes). The purpose is that of CacheLib's dynamic
//! admission (navy/admission_policy/DynamicRandomAP.h; Berg et al., "The
//! CacheLib Caching Engine", OSDI 2020, and Kangaroo, McAllister et al.,
//! SOSP 2021, which use it to meet a device-writes-per-day target).
//!
//! The rule differs, to be deterministic and exact: DynamicRandomAP admits
//! at random, tuning its probability every minute so that the cumulative
//! bytes written track the target; here an object is admitted when the
//! tier's bytes written so far (every byte written into it: fills,
//! demotions, writes, write-downs) plus the object's size stay within
//!
//! ```text
//! initial + bytes_per_day x (simulated time elapsed) / 1 day
//! ```
//!
//! A budget not used builds up (as DynamicRandomAP's target, which aims at
//! the cumulative bytes 24 h ahead). Writes to entries the tier already
//! holds are not asked about: they count, and may push the tier over the
//! line, after which nothing new is admitted until time catches up.

use super::{absolute, Admission, AdmissionBuild, AdmitCtx, BuildCtx};
use crate::request::Request;
use crate::units::Size;
use serde::{Deserialize, Serialize};

const DAY_NS: f64 = 86_400e9;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WriteBudgetParams {
    /// Bytes the tier may take per day of simulated time (required, > 0).
    pub bytes_per_day: Size,
    /// Bytes allowed at time 0, before any budget has built up.
    #[serde(default = "zero")]
    pub initial: Size,
}

fn zero() -> Size {
    Size::Absolute(0)
}

pub struct WriteBudget {
    per_ns: f64,
    initial: f64,
}

impl AdmissionBuild for WriteBudget {
    type Params = WriteBudgetParams;
    fn build(p: &WriteBudgetParams, _: &BuildCtx) -> Self {
        WriteBudget {
            per_ns: p.bytes_per_day.resolve(0) as f64 / DAY_NS,
            initial: p.initial.resolve(0) as f64,
        }
    }
    fn check(p: &WriteBudgetParams) -> Result<(), String> {
        if absolute("bytes_per_day", p.bytes_per_day)? == 0 {
            return Err("bytes_per_day: must be greater than zero".into());
        }
        absolute("initial", p.initial)?;
        Ok(())
    }
}

impl Admission for WriteBudget {
    #[inline]
    fn admit(&mut self, req: &Request, ctx: &AdmitCtx) -> bool {
        let allowed = self.initial + self.per_ns * ctx.now_ns;
        (ctx.bytes_written + req.size as u64) as f64 <= allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(per_day: u64, initial: u64) -> WriteBudget {
        let p = WriteBudgetParams {
            bytes_per_day: Size::Absolute(per_day),
            initial: Size::Absolute(initial),
        };
        assert!(WriteBudget::check(&p).is_ok());
        WriteBudget::build(&p, &BuildCtx { seed: 0, tier: 0 })
    }

    #[test]
    fn admits_exactly_while_under_the_line() {
        // 86.4 GB/day = 1 byte per microsecond.
        let mut a = build(86_400_000_000, 100);
        let at = |a: &mut WriteBudget, now_us: f64, written: u64, size: u32| {
            a.admit(
                &Request::read(1, size),
                &AdmitCtx {
                    now_ns: now_us * 1e3,
                    bytes_written: written,
                },
            )
        };
        assert!(at(&mut a, 0.0, 0, 100), "the initial allowance");
        assert!(!at(&mut a, 0.0, 0, 101));
        assert!(!at(&mut a, 0.0, 100, 1));
        assert!(at(&mut a, 50.0, 100, 50));
        assert!(!at(&mut a, 50.0, 100, 51));
    }

    /// Written bytes never pass the line when every write is an admitted
    /// fill, whatever the demand: a tier taking a 4 KiB object per
    /// microsecond of demand (4 GB/s) under a 1 TB/day budget.
    #[test]
    fn written_bytes_stay_under_the_budget_over_time() {
        let per_day = 1_000_000_000_000u64;
        let initial = 1 << 20;
        let mut a = build(per_day, initial);
        let mut written = 0u64;
        let mut admitted = 0u64;
        let n = 10_000_000u64;
        for i in 0..n {
            let now_ns = i as f64 * 1e3;
            let ctx = AdmitCtx {
                now_ns,
                bytes_written: written,
            };
            if a.admit(&Request::read(i, 4096), &ctx) {
                written += 4096;
                admitted += 1;
            }
            let line = initial as f64 + per_day as f64 * now_ns / DAY_NS;
            assert!(written as f64 <= line, "over budget at {now_ns} ns");
        }
        // And the budget is used, not just respected: within one object.
        let end = initial as f64 + per_day as f64 * (n - 1) as f64 * 1e3 / DAY_NS;
        assert!(written as f64 > end - 4096.0, "{written} of {end}");
        assert!(admitted < n / 10);
    }

    #[test]
    fn parameters_are_checked() {
        let bad = |bytes_per_day, initial| {
            WriteBudget::check(&WriteBudgetParams {
                bytes_per_day,
                initial,
            })
            .unwrap_err()
        };
        assert_eq!(
            bad(Size::Absolute(0), Size::Absolute(0)),
            "bytes_per_day: must be greater than zero"
        );
        assert!(bad(Size::Percent(5.0), Size::Absolute(0))
            .starts_with("bytes_per_day: must be a size in bytes"));
        assert!(bad(Size::Absolute(1), Size::Percent(5.0))
            .starts_with("initial: must be a size in bytes"));
    }
}
