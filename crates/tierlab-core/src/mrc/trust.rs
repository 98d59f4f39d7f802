//! Which sizes of a SHARDS curve its sample supports: the one rule that
//! `tierlab mrc` and `tierlab.mrc(...)` both apply (they used to differ:
//! the command dropped the sizes, the API kept them with no word).
//!
//! SHARDS scales each sampled reuse distance by 1/R (Waldspurger et al.,
//! "Efficient MRC Construction with SHARDS", FAST 2015, section 4.1): the
//! curve at a size s rests on the s*R sampled objects that fit in it, and
//! the smallest size it resolves is 1/R objects. With few of them it says
//! little: at 10 sampled objects (1,000 objects at R = 0.01) a Zipf(1)
//! curve read 0.69 where the exact one reads 0.53; at 50 it was within
//! 0.025 at rates 0.01 and 0.001 (docs/mrc.md, "SHARDS at small sizes").

use super::{Mrc, Sampling};
use crate::units::{human_bytes, human_count};

/// Sizes holding fewer sampled objects than this are left out of a SHARDS
/// curve.
pub const SHARDS_MIN_SAMPLED: u64 = 50;

/// The sizes a SHARDS curve left out, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct LeftOut {
    /// The smallest size the sample supports (bytes, or objects).
    pub below: u64,
    /// Points left out; 0 when every size was below (then all are kept,
    /// and the note says so).
    pub points: usize,
    /// The note that says so, one line, for stderr or a warning.
    pub note: String,
}

/// The smallest size whose miss ratio the sample supports, or None when
/// the rule does not apply (a sample of every object, or fixed-size SHARDS
/// at given sizes, whose footprint the curve does not know).
/// - At rate R: room for SHARDS_MIN_SAMPLED sampled objects, each counted
///   as large as the largest object (1 with unit sizes), so that with mixed
///   sizes the bound errs on the side of leaving a size out.
/// - With N keys: N sampled keys spread over the footprint F (the curve's
///   last size) put about N*s/F of them in a size s; none left out when the
///   N keys hold every object.
fn bound(sampling: Sampling, m: &Mrc, unit: bool, given_sizes: bool) -> Option<u64> {
    match sampling {
        Sampling::Rate(r) => {
            Some((SHARDS_MIN_SAMPLED as f64 * m.largest.max(1) as f64 / r).ceil() as u64)
        }
        Sampling::Size(keys) => {
            let footprint = *m.sizes.last()?;
            if given_sizes || (unit && keys as u64 >= footprint) {
                return None;
            }
            let b = (SHARDS_MIN_SAMPLED as f64 * footprint as f64 / keys as f64).ceil();
            Some(b as u64)
        }
    }
}

/// Leaves out of `m` the sizes below what its sample supports and records
/// them in `m.left_out`; when every size is below, keeps them all and says
/// so there.
pub(crate) fn trim(m: &mut Mrc, sampling: Sampling, unit: bool, given_sizes: bool) {
    let Some(below) = bound(sampling, m, unit, given_sizes) else {
        return;
    };
    let first = m.sizes.partition_point(|&s| s < below);
    if first == 0 {
        return;
    }
    let method = match sampling {
        Sampling::Rate(r) => format!("SHARDS at rate {r}"),
        Sampling::Size(n) => format!("SHARDS with {} keys", human_count(n as u64)),
    };
    let shown = if unit {
        format!("{} objects", human_count(below))
    } else {
        human_bytes(below)
    };
    let why = format!(
        "{method}: sizes below {shown} hold fewer than {SHARDS_MIN_SAMPLED} sampled objects, \
         too few to trust"
    );
    if first == m.sizes.len() {
        m.left_out = Some(LeftOut {
            below,
            points: 0,
            note: format!(
                "{why}, and every size here is below; the exact curve (without SHARDS) \
                 samples nothing"
            ),
        });
        return;
    }
    m.sizes.drain(..first);
    m.miss_ratios.drain(..first);
    if let Some(labels) = &mut m.labels {
        labels.drain(..first);
    }
    m.left_out = Some(LeftOut {
        below,
        points: first,
        note: format!(
            "{why}: {} points left out (the exact curve, without SHARDS, has them)",
            human_count(first as u64)
        ),
    });
}
