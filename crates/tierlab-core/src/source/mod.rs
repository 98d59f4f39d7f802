//! Where requests come from and how a pass over them is set up.

pub mod setup;
