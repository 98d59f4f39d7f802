//! `[workload]`: a tagged table (`type = "..."`) whose other keys are the
//! type's own, checked with their key paths, and the [`Source`] it becomes.
//!
//! Read by hand rather than as a serde internally-tagged enum: serde loses
//! the key path inside those, and every error here names its key
//! (`workload.postmark.files: ...`).

use super::formats::{self, Format, KeyError, TraceParams};
use super::generators;
use crate::source::synth::{Generator, SynthSpec};
use crate::source::trace::csv::{CsvOptions, CsvReader};
use crate::source::trace::lackey::LackeyReader;
use crate::source::trace::msr::MsrReader;
use crate::source::trace::oracle::{OracleReader, OracleStream};
use crate::source::trace::strace::StraceReader;
use crate::source::trace::twitter::TwitterReader;
use crate::source::trace::{TraceError, TraceSource};
use crate::spec::ConfigError;
use crate::spec::Params;
use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};

/// A workload checked and made concrete.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Synth(SynthSpec),
    /// A benchmark generator (PostMark, Bonnie, web, ...).
    Workload(generators::Spec),
    Oracle(PathBuf),
    /// CSV; column map; skip malformed lines.
    Csv(PathBuf, CsvOptions, bool),
    /// strace text; page size; skip malformed lines.
    Strace(PathBuf, u32, bool),
    /// lackey text; unit size, whether instruction fetches count; skip malformed lines.
    Lackey(PathBuf, u32, bool, bool),
    /// MSR Cambridge CSV; page size; skip malformed lines.
    Msr(PathBuf, u32, bool),
    /// Twitter cache-trace CSV; skip malformed lines.
    Twitter(PathBuf, bool),
    /// tierlab memtrace (binary, byte-addressed).
    Memtrace(PathBuf),
}

impl Source {
    /// The trace file read, if the requests come from one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Source::Synth(_) | Source::Workload(_) => None,
            Source::Oracle(p)
            | Source::Csv(p, ..)
            | Source::Strace(p, ..)
            | Source::Lackey(p, ..)
            | Source::Msr(p, ..)
            | Source::Twitter(p, ..)
            | Source::Memtrace(p) => Some(p),
        }
    }
}

/// Opens a fresh stream of the source's requests.
pub fn open(source: &Source) -> Result<Box<dyn TraceSource>, TraceError> {
    Ok(match source {
        Source::Synth(spec) => Box::new(Generator::try_new(spec.clone()).map_err(|m| {
            TraceError::io(Path::new("workload.objects"), std::io::Error::other(m))
        })?),
        Source::Oracle(path) if crate::source::trace::lines::is_zstd(path) => {
            Box::new(OracleStream::open(path)?)
        }
        Source::Workload(spec) => spec.open(),
        Source::Oracle(path) => Box::new(OracleReader::open(path)?),
        Source::Csv(path, opts, skip) => Box::new(CsvReader::open(path, opts, *skip)?),
        Source::Strace(path, page, skip) => Box::new(StraceReader::open(path, *page, *skip)?),
        Source::Lackey(path, unit, instr, skip) => {
            Box::new(LackeyReader::open(path, *unit, *instr, *skip)?)
        }
        Source::Msr(path, page, skip) => Box::new(MsrReader::open(path, *page, *skip)?),
        Source::Twitter(path, skip) => Box::new(TwitterReader::open(path, *skip)?),
        Source::Memtrace(path) => {
            Box::new(crate::source::trace::memtrace::MemtraceReader::open(path)?)
        }
    })
}

/// The keys of `type = "trace"` (the fields of [`TraceParams`]).
const TRACE_KEYS: &[&str] = &[
    "path",
    "format",
    "csv",
    "instructions",
    "skip_bad",
    "page_size",
];

/// `[workload]`: its type, `unit_size`, and the type's own keys, whose
/// names and types are checked when it is read and whose values when it
/// becomes a [`Source`].
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadConfig {
    /// `type`: a generator's name or `"trace"`.
    pub kind: String,
    /// Every object counts as size 1; capacities count objects
    /// (libCacheSim's ignore_obj_size).
    pub unit_size: bool,
    /// `seed` when the type takes one: the run's randomised policies draw
    /// from it too.
    pub seed: Option<u64>,
    params: Params,
}

/// Every `type` `[workload]` may take.
pub fn types() -> Vec<&'static str> {
    let mut v = generators::NAMES.to_vec();
    v.insert(4, "trace");
    v
}

fn keys_of(kind: &str) -> Option<Vec<&'static str>> {
    if kind == "trace" {
        Some(TRACE_KEYS.to_vec())
    } else {
        generators::keys(kind)
    }
}

/// A value into its serde struct, or the key path (relative to the
/// value; empty for the value itself) and what is wrong.
pub fn parse<P: DeserializeOwned>(v: impl Into<serde_json::Value>) -> Result<P, KeyError> {
    serde_path_to_error::deserialize(v.into()).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        (path, e.into_inner().to_string())
    })
}

fn err(key: &str, msg: impl Into<String>) -> KeyError {
    (key.to_string(), msg.into())
}

impl WorkloadConfig {
    /// Checks a `[workload]` table's type, its keys and their types.
    pub fn from_params(mut params: Params) -> Result<Self, KeyError> {
        let all = types();
        let kind = match params.remove("type") {
            Some(serde_json::Value::String(s)) => s,
            Some(other) => {
                return Err(err(
                    "type",
                    format!(
                        "{other} is not a workload type; expected one of {}",
                        all.join(", ")
                    ),
                ))
            }
            None => {
                return Err(err(
                    "type",
                    format!("missing; expected one of {}", all.join(", ")),
                ))
            }
        };
        let keys = keys_of(&kind).ok_or_else(|| {
            err(
                "type",
                format!(
                    "unknown workload type {kind:?}; expected one of {}",
                    all.join(", ")
                ),
            )
        })?;
        let unit_size = match params.remove("unit_size") {
            None => false,
            Some(v) => parse::<bool>(v).map_err(|(_, m)| err("unit_size", m))?,
        };
        for key in params.keys() {
            let elsewhere = all
                .iter()
                .any(|t| keys_of(t).is_some_and(|k| k.contains(&key.as_str())));
            if !keys.contains(&key.as_str()) && elsewhere {
                let why =
                    generators::why_not(&kind, key).map_or(String::new(), |w| format!(" ({w})"));
                return Err(err(key, format!("not used by type = {kind:?}{why}")));
            }
        }
        if kind == "trace" {
            parse::<TraceParams>(params.clone())?;
        } else {
            generators::check(&kind, &params)?;
        }
        let seed = params.get("seed").and_then(|v| v.as_u64());
        Ok(WorkloadConfig {
            kind,
            unit_size,
            seed,
            params,
        })
    }

    /// Whether the table sets `key` (other than `type` and `unit_size`).
    pub fn has(&self, key: &str) -> bool {
        self.params.contains_key(key)
    }

    /// The concrete source, or the key that is wrong.
    pub fn source(&self) -> Result<Source, ConfigError> {
        let r = if self.kind == "trace" {
            trace(&self.params)
        } else {
            generators::source(&self.kind, &self.params)
        };
        r.map_err(|(k, m)| {
            let path = if k.is_empty() {
                "workload".into()
            } else {
                format!("workload.{k}")
            };
            ConfigError::at(path, m)
        })
    }
}

/// A trace file's source: its format given, or recognised (from the
/// content, else the name), and the keys that format reads.
fn trace(params: &Params) -> Result<Source, KeyError> {
    let p: TraceParams = parse(params.clone())?;
    let path = p
        .path
        .clone()
        .ok_or_else(|| err("path", "required for type = \"trace\""))?;
    let head = formats::head(&path);
    let (format, how) = match p.format {
        Some(f) => (f, "given"),
        None => match formats::guess_from(head.as_deref(), &path) {
            Some(g) => g,
            None => (Format::Oracle, "guessed from the file name"),
        },
    };
    let name = format.name();
    for (key, set) in [
        ("csv", p.csv.is_some()),
        ("page_size", p.page_size.is_some()),
        ("instructions", p.instructions.is_some()),
    ] {
        if set && !format.keys().contains(&key) {
            let what = match key {
                "csv" => "only for format = \"csv\"".to_string(),
                _ => format!("not used by type = \"trace\" with format = \"{name}\""),
            };
            return Err(err(
                key,
                format!("{what}; this trace is read as {name} (format {how})"),
            ));
        }
    }
    format.source(path, &p, head.as_deref().map(formats::first_line))
}

/// `[workload]` as written: a table with `type` and the type's keys.
impl<'de> Deserialize<'de> for WorkloadConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = Params::deserialize(d)?;
        // `key: message`: the config reader puts the key after `workload.`.
        WorkloadConfig::from_params(m).map_err(|(k, m)| {
            serde::de::Error::custom(if k.is_empty() { m } else { format!("{k}: {m}") })
        })
    }
}

impl Serialize for WorkloadConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = self.params.clone();
        m.insert("type".into(), self.kind.clone().into());
        m.insert("unit_size".into(), self.unit_size.into());
        m.serialize(s)
    }
}

/// The source a `[vm]` run reads: a memory trace, by byte address.
pub fn byte_source(source: Source) -> Result<Source, ConfigError> {
    match source {
        // Unit 0: one request per access, keyed by its byte address.
        Source::Lackey(p, _, instr, skip) => Ok(Source::Lackey(p, 0, instr, skip)),
        s @ (Source::Csv(..) | Source::Memtrace(..)) => Ok(s),
        // The multiprogram mix by byte address: one cache line per
        // reference, each program its own pid and address space.
        Source::Workload(generators::Spec::Multiprogram(m)) => Ok(Source::Workload(
            generators::Spec::Multiprogram(m.by_address()),
        )),
        // The moving hot set by byte address: one page per reference.
        Source::Workload(generators::Spec::Hotset(h)) => {
            Ok(Source::Workload(generators::Spec::Hotset(h.by_address())))
        }
        other => Err(ConfigError::at(
            "workload",
            format!(
                "{} has no memory addresses; [vm] reads a memory trace: a Valgrind lackey \
                 trace, a tierlab memtrace (tierlab trace convert --to memtrace), a CSV \
                 whose key is a byte address, or the multiprogram or hotset generator",
                describe(&other)
            ),
        )),
    }
}

fn describe(s: &Source) -> String {
    match s.path() {
        Some(p) => format!("{} (read as {:?})", p.display(), kind(s)),
        None => "a generated workload".into(),
    }
}

fn kind(s: &Source) -> &'static str {
    match s {
        Source::Oracle(_) => "oracle",
        Source::Strace(..) => "strace",
        Source::Msr(..) => "msr",
        Source::Twitter(..) => "twitter",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_keys_are_the_fields_of_trace_params() {
        for k in TRACE_KEYS {
            let mut m = Params::new();
            m.insert(k.to_string(), serde_json::Value::Null);
            assert!(parse::<TraceParams>(m).is_ok(), "{k}");
        }
    }

    #[test]
    fn every_type_is_accepted() {
        for t in types() {
            let mut m = Params::new();
            m.insert("type".into(), t.into());
            let w = WorkloadConfig::from_params(m).unwrap();
            assert_eq!(w.kind, t);
        }
    }
}
