//! The crate's top-level error: one variant per module that can fail.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
}
