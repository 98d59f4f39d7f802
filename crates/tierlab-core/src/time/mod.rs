//! The time model: when each request and each device operation completes.
pub mod stack;
pub mod theory;
