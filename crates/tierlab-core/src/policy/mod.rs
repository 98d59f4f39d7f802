//! Eviction policies: one file each behind [`Policy`], registered once in
//! [`registry!`] below.
//!
//! The tier owns the index (key -> slot), the sizes, dirty bits and counters;
//! a policy only orders slots and keeps per-slot state. Slots are dense `u32`
//! indices the tier reuses, so a policy keeps its state in vectors indexed by
//! slot and grows them on first sight of a slot.
//!
//! Who guarantees what:
//! - the tier calls `on_insert` only for a slot the policy does not track,
//!   and `on_hit` / `on_remove` only for tracked slots;
//! - `evict` is called only while at least one slot is tracked; it must pick
//!   a tracked slot, stop tracking it and return it.

mod arc;
mod belady;
mod clock;
mod fifo;
pub mod flashcache;
mod lfu;
mod lirs;
mod list;
pub mod lists;
mod lru;
mod lru_k;
mod random;
mod s3fifo;
mod sieve;
mod two_q;
pub mod wtinylfu;

pub use list::SlotList;

use crate::request::Request;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The events a tier reports to its eviction policy.
pub trait Policy {
    /// A new entry now lives in `slot`.
    fn on_insert(&mut self, slot: u32, req: &Request);
    /// The entry in `slot` was requested again.
    fn on_hit(&mut self, slot: u32, req: &Request);
    /// `n` hits in a row on the entry in `slot`, no other event between
    /// them (a run of references to one page, run/vm.rs); `req` stands for
    /// each of them (they differ at most in their operation, which no
    /// policy's `on_hit` reads). Must leave the policy as `n` calls of
    /// `on_hit` would: the default makes them; a policy for which a hit
    /// right after a hit on the same entry changes nothing (LRU: the entry
    /// is at the head already; CLOCK once its counter is full) overrides
    /// it with the one step that matters.
    #[inline(always)]
    fn on_hits(&mut self, slot: u32, req: &Request, n: u64) {
        for _ in 0..n {
            self.on_hit(slot, req);
        }
    }
    /// The entry in `slot` leaves for another reason than eviction
    /// (invalidation, promotion to a faster tier).
    fn on_remove(&mut self, slot: u32);
    /// A miss on `req.key` is about to be inserted; the `evict` calls that
    /// follow make room for it, then `on_insert` places it. Policies whose
    /// choice of victim depends on the incoming key (ARC's ghost hits, 2Q's
    /// and S3-FIFO's ghost queues, LIRS's non-resident entries) learn it here.
    /// `slot`: the key's entry when the store has one, the slot `on_insert`
    /// will get: an entry moving between tiers, or one kept for ghosts (this
    /// policy's, see `ghosted`, or another tier's).
    #[inline(always)]
    fn before_insert(&mut self, _req: &Request, _slot: Option<u32>) {}
    /// After `before_insert` and each `evict`: whether the policy wants
    /// more evictions before the insertion although the tier has room
    /// (a set-associative policy whose set is full, flashcache.rs, which
    /// erases whole blocks). Every other policy says false, which the
    /// insertion, monomorphic per policy, compiles away.
    #[inline(always)]
    fn needs_room(&self) -> bool {
        false
    }
    /// Picks the victim, stops tracking it and returns its slot.
    fn evict(&mut self) -> u32;
    /// Whether the policy keeps the slot `evict` has just returned as a
    /// ghost: the store then keeps the entry (in no tier once no tier holds
    /// it) until the policy reports it `forgotten`, and a request for the
    /// key hands that slot to `before_insert`. Ghost queues kept this way
    /// cost no table of their own (tier/store.rs).
    #[inline(always)]
    fn ghosted(&self) -> bool {
        false
    }
    /// True when no policy of the store this policy's tier lives in keeps
    /// ghosts, so that an insertion need not look for a key's ghost: the
    /// segments of an all-LRU/FIFO hierarchy (hierarchy/segments.rs). A
    /// policy without ghosts of its own may share a store with ARC's.
    const STORE_GHOSTLESS: bool = false;
    /// Like `victim_hint`, for the ghosts (see `ghosted`) the policy may
    /// forget `ahead` insertions from now, one candidate per ghost queue:
    /// the tier prefetches their entries and index buckets, which releasing
    /// them touches.
    #[inline(always)]
    fn ghost_hints(&self, _ahead: usize) -> [Option<u32>; 2] {
        [None, None]
    }
    /// A ghost slot (see `ghosted`) the policy has stopped tracking since
    /// the last call, for the store to release; the tier asks after each
    /// insertion until there is none.
    #[inline(always)]
    fn forgotten(&mut self) -> Option<u32> {
        None
    }
    /// The slot `evict` would most likely pick `ahead` evictions from now
    /// (0: the next one), if cheap to tell. A hint only: the tier prefetches
    /// those entries, and the policy may prefetch its own state for them, so
    /// that evictions do not wait for memory.
    fn victim_hint(&self, _ahead: usize) -> Option<u32> {
        None
    }
    /// A hint: the tier expects `slot` to be hit (or inserted) soon; start
    /// loading the state that `on_hit` or `on_insert` of it will touch.
    #[inline(always)]
    fn prefetch(&self, _slot: u32) {}
}

/// An operation that runs against whichever policy a tier has
/// ([`AnyPolicy::with`]): a generic closure, which Rust spells as a trait.
pub trait PolicyFn {
    type Out;
    fn call<P: Policy>(self, p: &mut P) -> Self::Out;
}

/// What a policy may know when it is built.
#[derive(Clone, Copy, Debug)]
pub struct BuildCtx {
    /// The tier's capacity (bytes, or objects when sizes are ignored).
    pub capacity: u64,
    /// The run's seed, for randomised policies.
    pub seed: u64,
    /// Every object counts as 1 (the capacity is in objects).
    pub unit_size: bool,
}

impl BuildCtx {
    /// What an object of `size` takes of the capacity.
    #[inline(always)]
    pub fn charge(&self, size: u32) -> u32 {
        if self.unit_size {
            1
        } else {
            size
        }
    }
}

/// How a policy is made from its parameters.
pub trait PolicyBuild: Policy + Sized {
    /// The policy's parameters: a serde struct with defaults, unknown keys rejected.
    type Params: DeserializeOwned + Serialize + Default + Clone + fmt::Debug + PartialEq;
    fn build(params: &Self::Params, ctx: &BuildCtx) -> Self;
    /// Rejects parameters out of range, naming the field.
    fn check(_: &Self::Params) -> Result<(), String> {
        Ok(())
    }
}

/// Registers every policy: `Variant => "name", Type;`. This is the only place
/// a new policy is named; the config enum, the dispatch enum and the list of
/// names all come from here.
macro_rules! registry {
    ($($variant:ident => $name:literal, $ty:ty;)*) => {
        /// A policy of any kind: enum dispatch, one predictable branch per event.
        pub enum AnyPolicy { $($variant($ty)),* }

        /// A tier's `policy`: its name and parameters.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "type")]
        pub enum PolicySpec { $(#[serde(rename = $name)] $variant(<$ty as PolicyBuild>::Params)),* }

        /// The names a tier's `policy` may take.
        pub const NAMES: &[&str] = &[$($name),*];

        impl PolicySpec {
            pub fn name(&self) -> &'static str {
                match self { $(PolicySpec::$variant(_) => $name),* }
            }
            /// The policy with default parameters.
            pub fn named(name: &str) -> Result<Self, String> {
                Self::from_parts(name, serde_json::Map::new())
            }
            fn from_parts(name: &str, params: serde_json::Map<String, serde_json::Value>) -> Result<Self, String> {
                match name {
                    $($name => {
                        let p = crate::spec::params_from(params)?;
                        <$ty>::check(&p)?;
                        Ok(PolicySpec::$variant(p))
                    })*
                    _ => Err(format!("unknown policy {name:?}; expected one of {}", NAMES.join(", "))),
                }
            }
            pub fn build(&self, ctx: &BuildCtx) -> AnyPolicy {
                match self { $(PolicySpec::$variant(p) => AnyPolicy::$variant(<$ty>::build(p, ctx))),* }
            }
        }

        impl AnyPolicy {
            /// Runs `f` on the concrete policy: one branch here, then every
            /// event `f` reports inlines into monomorphic code, instead of a
            /// branch per event (an insertion that evicts reports four or five).
            #[inline(always)]
            pub fn with<F: PolicyFn>(&mut self, f: F) -> F::Out {
                match self { $(AnyPolicy::$variant(p) => f.call(p)),* }
            }
        }

        impl Policy for AnyPolicy {
            #[inline(always)]
            fn on_insert(&mut self, slot: u32, req: &Request) {
                match self { $(AnyPolicy::$variant(p) => p.on_insert(slot, req)),* }
            }
            #[inline(always)]
            fn on_hit(&mut self, slot: u32, req: &Request) {
                match self { $(AnyPolicy::$variant(p) => p.on_hit(slot, req)),* }
            }
            #[inline(always)]
            fn on_hits(&mut self, slot: u32, req: &Request, n: u64) {
                match self { $(AnyPolicy::$variant(p) => p.on_hits(slot, req, n)),* }
            }
            #[inline(always)]
            fn on_remove(&mut self, slot: u32) {
                match self { $(AnyPolicy::$variant(p) => p.on_remove(slot)),* }
            }
            #[inline(always)]
            fn before_insert(&mut self, req: &Request, slot: Option<u32>) {
                match self { $(AnyPolicy::$variant(p) => p.before_insert(req, slot)),* }
            }
            #[inline(always)]
            fn ghosted(&self) -> bool {
                match self { $(AnyPolicy::$variant(p) => p.ghosted()),* }
            }
            #[inline(always)]
            fn ghost_hints(&self, ahead: usize) -> [Option<u32>; 2] {
                match self { $(AnyPolicy::$variant(p) => p.ghost_hints(ahead)),* }
            }
            #[inline(always)]
            fn forgotten(&mut self) -> Option<u32> {
                match self { $(AnyPolicy::$variant(p) => p.forgotten()),* }
            }
            #[inline(always)]
            fn needs_room(&self) -> bool {
                match self { $(AnyPolicy::$variant(p) => p.needs_room()),* }
            }
            #[inline(always)]
            fn evict(&mut self) -> u32 {
                match self { $(AnyPolicy::$variant(p) => p.evict()),* }
            }
            #[inline(always)]
            fn victim_hint(&self, ahead: usize) -> Option<u32> {
                match self { $(AnyPolicy::$variant(p) => p.victim_hint(ahead)),* }
            }
            #[inline(always)]
            fn prefetch(&self, slot: u32) {
                match self { $(AnyPolicy::$variant(p) => p.prefetch(slot)),* }
            }

        }
    };
}

registry! {
    Lru => "lru", lru::Lru;
    Fifo => "fifo", fifo::Fifo;
    Clock => "clock", clock::Clock;
    Arc => "arc", arc::Arc;
    TwoQ => "2q", two_q::TwoQ;
    S3Fifo => "s3-fifo", s3fifo::S3Fifo;
    Sieve => "sieve", sieve::Sieve;
    Lfu => "lfu", lfu::Lfu;
    Lirs => "lirs", lirs::Lirs;
    WTinyLfu => "w-tinylfu", wtinylfu::WTinyLfu;
    LruK => "lru-k", lru_k::LruK;
    Random => "random", random::Random;
    Belady => "belady", belady::Belady;
    FlashCache => "flashcache", flashcache::FlashCache;
}

impl PolicySpec {
    /// Whether the policy reads each request's next access (Belady's
    /// oracle): the run then feeds it next-access times.
    pub fn needs_next_access(&self) -> bool {
        matches!(self, PolicySpec::Belady(_))
    }

    /// Checks the parameters against the tier they are built for (its
    /// capacity, known once a share is resolved): Err((parameter, message)).
    pub fn fit(&self, ctx: &BuildCtx) -> Result<(), (&'static str, String)> {
        match self {
            PolicySpec::FlashCache(p) => flashcache::fit(p, ctx),
            _ => Ok(()),
        }
    }
}

impl crate::spec::Named for PolicySpec {
    const WHAT: &'static str = "policy";
    fn names() -> &'static [&'static str] {
        NAMES
    }
    fn from_parts(name: &str, params: crate::spec::Params) -> Result<Self, String> {
        PolicySpec::from_parts(name, params)
    }
}

/// `policy = "lru"` or `policy = { type = "clock", bits = 2 }`.
impl<'de> Deserialize<'de> for PolicySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::spec::deserialize(d)
    }
}

impl Default for PolicySpec {
    fn default() -> Self {
        PolicySpec::Lru(Default::default())
    }
}

#[cfg(test)]
mod tests;
