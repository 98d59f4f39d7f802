//! What a tier's devices wear (and, with the catalog, draw and cost): the
//! figures a run reports beside its counters.

pub mod wear;
