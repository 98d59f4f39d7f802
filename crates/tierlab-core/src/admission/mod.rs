//! Admission policies: whether an object about to be placed in a tier may
//! enter it. One file each behind [`Admission`], registered once in
//! [`registry!`] below (the same design as `policy/mod.rs`).
//!
//! Who guarantees what:
//! - the hierarchy asks a tier's admission only for an object the tier does
//!   not hold and can hold (not larger than the whole tier): a fill after a
//!   read from below, an exclusive promotion, a demotion from the tier
//!   above, a write allocation, a write-down that would allocate. Writes to
//!   an entry the tier already holds are never asked about;
//! - `admit` answers for this one placement; a rejected object is not placed
//!   (what happens to it instead is in hierarchy.rs and docs/hierarchy.md);
//! - `now_ns` is the hierarchy's simulated clock (never the wall clock), and
//!   `bytes_written` the tier's `bytes_in` counter: every byte written into
//!   the tier so far, the traffic that wears flash out.

mod always;
mod bloom;
mod probabilistic;
mod second_hit;
mod size;
mod write_budget;

use crate::request::Request;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What an admission policy may look at besides the request.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdmitCtx {
    /// Simulated time (ns) at the start of the current request.
    pub now_ns: f64,
    /// Bytes written into the tier so far (its `bytes_in`).
    pub bytes_written: u64,
}

/// The one question a tier asks its admission policy.
pub trait Admission {
    /// May the object of `req` (not held by the tier) be placed now?
    fn admit(&mut self, req: &Request, ctx: &AdmitCtx) -> bool;
}

/// What an admission policy may know when it is built.
#[derive(Clone, Copy, Debug)]
pub struct BuildCtx {
    /// The run's seed, for randomised policies.
    pub seed: u64,
    /// The tier's index, so that two randomised tiers draw unrelated streams.
    pub tier: usize,
}

/// How an admission policy is made from its parameters.
pub trait AdmissionBuild: Admission + Sized {
    /// The parameters: a serde struct, unknown keys rejected. Parameters
    /// without a sensible default (a budget, a probability) are required.
    type Params: DeserializeOwned + Serialize + Clone + fmt::Debug + PartialEq;
    fn build(params: &Self::Params, ctx: &BuildCtx) -> Self;
    /// Rejects parameters out of range, naming the field.
    fn check(_: &Self::Params) -> Result<(), String> {
        Ok(())
    }
    /// Memory `build` allocates up front: (the parameter that sizes it,
    /// bytes). A policy that grows as it is used has none.
    fn memory(_: &Self::Params) -> Option<(&'static str, u64)> {
        None
    }
}

/// Registers every admission policy: `Variant => "name", Type;`. The only
/// place one is named; the config enum, the dispatch enum and the list of
/// names come from here.
macro_rules! registry {
    ($($variant:ident => $name:literal, $ty:ty;)*) => {
        /// An admission policy of any kind: enum dispatch.
        pub enum AnyAdmission { $($variant($ty)),* }

        /// A tier's `admission`: its name and parameters.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "type")]
        pub enum AdmissionSpec { $(#[serde(rename = $name)] $variant(<$ty as AdmissionBuild>::Params)),* }

        /// The names a tier's `admission` may take.
        pub const NAMES: &[&str] = &[$($name),*];

        impl AdmissionSpec {
            pub fn name(&self) -> &'static str {
                match self { $(AdmissionSpec::$variant(_) => $name),* }
            }
            /// The policy with default parameters.
            pub fn named(name: &str) -> Result<Self, String> {
                Self::from_parts(name, serde_json::Map::new())
            }
            pub fn from_parts(name: &str, params: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
                match name {
                    $($name => {
                        let p = crate::spec::params_from(params)?;
                        <$ty>::check(&p)?;
                        Ok(AdmissionSpec::$variant(p))
                    })*
                    _ => Err(format!("unknown admission policy {name:?}; expected one of {}", NAMES.join(", "))),
                }
            }
            /// What [`AdmissionBuild::memory`] says of this policy.
            pub fn memory(&self) -> Option<(&'static str, u64)> {
                match self { $(AdmissionSpec::$variant(p) => <$ty>::memory(p)),* }
            }
            pub fn build(&self, ctx: &BuildCtx) -> AnyAdmission {
                match self { $(AdmissionSpec::$variant(p) => AnyAdmission::$variant(<$ty>::build(p, ctx))),* }
            }
        }

        impl Admission for AnyAdmission {
            #[inline(always)]
            fn admit(&mut self, req: &Request, ctx: &AdmitCtx) -> bool {
                match self { $(AnyAdmission::$variant(a) => a.admit(req, ctx)),* }
            }
        }
    };
}

registry! {
    Always => "always", always::Always;
    SecondHit => "second-hit", second_hit::SecondHit;
    Bloom => "bloom", bloom::BloomSecondHit;
    Probabilistic => "probabilistic", probabilistic::Probabilistic;
    Size => "size", size::SizeLimit;
    WriteBudget => "write-budget", write_budget::WriteBudget;
}

impl AnyAdmission {
    /// Whether every object is admitted: the tier then skips the call.
    #[inline(always)]
    pub fn is_always(&self) -> bool {
        matches!(self, AnyAdmission::Always(_))
    }
}

impl crate::spec::Named for AdmissionSpec {
    const WHAT: &'static str = "admission policy";
    fn names() -> &'static [&'static str] {
        NAMES
    }
    fn from_parts(name: &str, params: crate::spec::Params) -> Result<Self, String> {
        AdmissionSpec::from_parts(name, params)
    }
}

/// `admission = "second-hit"` or `admission = { type = "second-hit", window = 1000 }`.
impl<'de> Deserialize<'de> for AdmissionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::spec::deserialize(d)
    }
}

impl Default for AdmissionSpec {
    fn default() -> Self {
        AdmissionSpec::Always(Default::default())
    }
}

/// A required byte size given as a share of the footprint makes no sense
/// for a parameter: bytes only.
fn absolute(field: &str, s: crate::units::Size) -> Result<u64, String> {
    match s {
        crate::units::Size::Absolute(n) => Ok(n),
        crate::units::Size::Percent(_) => Err(format!(
            "{field}: must be a size in bytes such as \"1GiB\", not a share"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: serde_json::Value) -> Result<AdmissionSpec, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn names_and_tables_parse() {
        assert_eq!(
            parse(serde_json::json!("second-hit")).unwrap().name(),
            "second-hit"
        );
        let s = parse(serde_json::json!({"type": "probabilistic", "p": 0.25})).unwrap();
        assert_eq!(s.name(), "probabilistic");
        assert_eq!(AdmissionSpec::default().name(), "always");
    }

    #[test]
    fn bad_input_is_named() {
        let e = parse(serde_json::json!("sekond-hit")).unwrap_err();
        assert!(
            e.starts_with("unknown admission policy \"sekond-hit\"; expected one of always, second-hit, bloom, probabilistic, size, write-budget"),
            "{e}"
        );
        let e = parse(serde_json::json!({"window": 3})).unwrap_err();
        assert!(e.starts_with("missing `type`"), "{e}");
        let e = parse(serde_json::json!({"type": "second-hit", "windo": 3})).unwrap_err();
        assert!(e.starts_with("unknown field `windo`"), "{e}");
        let e = parse(serde_json::json!("probabilistic")).unwrap_err();
        assert!(e.starts_with("missing field `p`"), "{e}");
        let e = parse(serde_json::json!({"type": "probabilistic", "p": 1.5})).unwrap_err();
        assert!(e.starts_with("p: 1.5 is out of range"), "{e}");
        let e = parse(serde_json::json!({"type": "size", "max_size": "10%"})).unwrap_err();
        assert!(e.starts_with("max_size: must be a size in bytes"), "{e}");
    }
}
