//! Which curve a caller gets: the one rule choosing among the exact LRU
//! curve, SHARDS and simulated sizes from what was asked (`tierlab mrc`'s
//! options, `tierlab.mrc(...)`'s arguments), and the pass that follows.

use super::curve_sizes::simulate_resolved;
use crate::config::{workload_only_from_json, Config};
use crate::error::Error;
use crate::mrc::{exact, shards, Mrc, MrcOptions, Sampling};
use crate::source::setup::Progress;
use crate::spec::ConfigError;
use serde_json::{json, Value};

/// What a caller asks of a curve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ask {
    /// Sizes as capacities are written ("10%", "1GiB", 4096).
    pub sizes: Option<Vec<String>>,
    /// SHARDS at this sampling rate.
    pub shards_rate: Option<f64>,
    /// SHARDS keeping at most this many keys.
    pub shards_size: Option<usize>,
    /// A policy (a name, or a table with `type`) simulated as one tier.
    pub policy: Option<Value>,
    /// A config whose hierarchy is simulated whole (its workload is
    /// replaced by the curve's).
    pub hierarchy: Option<Value>,
}

/// How a curve is computed.
#[derive(Clone, Debug, PartialEq)]
pub enum Method {
    /// LRU by stack distances, exact.
    Exact,
    /// LRU by SHARDS sampling.
    Shards(Sampling),
    /// One tier of this policy (a name or a table) simulated at each size.
    Policy(Value),
    /// The hierarchy of a config simulated at each size.
    Hierarchy,
}

impl Ask {
    /// The method that answers, or why the options do not go together;
    /// checked before any pass.
    pub fn method(&self) -> Result<Method, ConfigError> {
        let err = |m: &str| Err(ConfigError::at("mrc", m));
        let sampling = match (self.shards_rate, self.shards_size) {
            (Some(_), Some(_)) => {
                return err("give shards (a rate) or shards_size (a key count), not both")
            }
            (Some(r), None) => Some(Sampling::Rate(r)),
            (None, Some(s)) => Some(Sampling::Size(s)),
            (None, None) => None,
        };
        let simulated = match (&self.policy, &self.hierarchy) {
            (Some(_), Some(_)) => {
                return err("give policy (one tier) or config (a hierarchy), not both")
            }
            (Some(p), None) => Some(Method::Policy(p.clone())),
            (None, Some(_)) => Some(Method::Hierarchy),
            (None, None) => None,
        };
        match (simulated, sampling) {
            (Some(_), Some(_)) => {
                err("SHARDS samples the LRU curve; it cannot be combined with policy or config")
            }
            (Some(_), None) if self.sizes.as_ref().is_none_or(|s| s.is_empty()) => {
                err("policy and config are simulated at given sizes; give sizes")
            }
            (Some(m), None) => Ok(m),
            (None, Some(s)) => Ok(Method::Shards(s)),
            (None, None) => Ok(Method::Exact),
        }
    }
}

impl Method {
    /// A short name for plot titles and messages.
    pub fn label(&self) -> String {
        match self {
            Method::Exact => "LRU (exact)".into(),
            Method::Shards(Sampling::Rate(r)) => format!("LRU, SHARDS rate {r}"),
            Method::Shards(Sampling::Size(n)) => format!("LRU, SHARDS {n} keys"),
            Method::Policy(p) => {
                let name = match p {
                    Value::String(s) => s.clone(),
                    Value::Object(t) => t
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("policy")
                        .into(),
                    other => other.to_string(),
                };
                format!("{name} (simulated)")
            }
            Method::Hierarchy => "hierarchy (simulated)".into(),
        }
    }
}

/// The curve `ask` asks for, of the workload of `config_json` (a config as
/// JSON; only its `[workload]` is read), and the method that made it.
/// Simulated methods run the config a run would (one DRAM tier of the
/// policy, or the given hierarchy), through the same setup as `run`.
/// With sizes given, the curve's `labels` hold each point's size as given.
/// A SHARDS curve leaves out the sizes its sample is too small for
/// (`Mrc::left_out` says which).
pub fn curve(
    config_json: &str,
    ask: &Ask,
    progress: impl Progress,
) -> Result<(Mrc, Method), Error> {
    let method = ask.method()?;
    let sizes = ask
        .sizes
        .as_deref()
        .map(super::curve_sizes::parse_sizes)
        .transpose()?;
    let w = workload_only_from_json(config_json)?;
    let (mut mrc, resolved) = match &method {
        Method::Exact | Method::Shards(_) => {
            let source = w.source()?;
            let sizes = sizes
                .map(|s| super::curve_sizes::resolve_sizes(&source, &s, w.unit_size))
                .transpose()?;
            let opts = MrcOptions {
                unit_size: w.unit_size,
                sizes,
            };
            let mrc = match &method {
                Method::Shards(s) => shards(&source, *s, &opts, progress)?,
                _ => exact(&source, &opts, progress)?,
            };
            (mrc, opts.sizes)
        }
        Method::Policy(_) | Method::Hierarchy => {
            let mut cfg = match (&method, &ask.hierarchy) {
                (Method::Policy(p), _) => {
                    json!({"tier": [{"tech": "DRAM-DDR3", "capacity": 1, "policy": p}]})
                }
                (_, Some(h)) => h.clone(),
                _ => unreachable!("a hierarchy method has a hierarchy"),
            };
            let Value::Object(table) = &mut cfg else {
                return Err(ConfigError::at("config", "must be a table").into());
            };
            // The workload as the caller wrote it (checked above).
            let given: Value = serde_json::from_str(config_json)
                .map_err(|e| ConfigError::at("workload", e.to_string()))?;
            table.insert("workload".into(), given["workload"].clone());
            let cfg = Config::from_json_str(&cfg.to_string())?;
            let (mrc, resolved) = simulate_resolved(&cfg, &sizes.unwrap_or_default(), progress)?;
            (mrc, Some(resolved))
        }
    };
    if let (Some(given), Some(resolved)) = (&ask.sizes, resolved) {
        mrc.label(given, &resolved);
    }
    if let Method::Shards(s) = &method {
        crate::mrc::trust::trim(&mut mrc, *s, w.unit_size, ask.sizes.is_some());
    }
    Ok((mrc, method))
}
