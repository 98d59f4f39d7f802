//! The workload generators: one file each (the synthetic patterns in
//! `synth.rs`, the benchmark generators under `workloads/`), registered
//! once in [`registry!`] below. The `[workload]` types, the keys each
//! reads, the benchmark spec enum and the list of names `_core.generators()`
//! exports all come from here.

use super::formats::KeyError;
use super::workload::parse;
use super::Source;
use crate::source::synth::{self, SynthParams, Synthetic};
use crate::source::trace::TraceSource;
use crate::source::workloads::{self as w, Benchmark, Common};
use crate::spec::Params;
use crate::units::Size;
use serde::Deserialize;

/// Registers every generator: `Variant => "name", Type;`, synthetic
/// patterns (a [`Synthetic`]) then benchmark generators (a [`Benchmark`]
/// spec, whose table is `[workload.<name>]`).
macro_rules! registry {
    (synthetic { $($sv:ident => $sn:literal, $sty:ty;)* }
     benchmark { $($bv:ident => $bn:literal, $bty:ty;)* }) => {
        /// A checked, concrete benchmark generator: what a `[workload]` of
        /// one of these types becomes.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Spec { $($bv($bty)),* }

        impl Spec {
            /// A fresh stream of the generator's requests.
            pub fn open(&self) -> Box<dyn TraceSource> {
                match self { $(Spec::$bv(s) => s.open()),* }
            }
        }

        /// Every generator's `type`.
        pub const NAMES: &[&str] = &[$($sn,)* $($bn),*];
        /// The benchmark generators (`tierlab trace generate KIND`).
        pub const BENCHMARKS: &[&str] = &[$($bn),*];

        /// The `[workload]` keys `type = name` reads (besides `type` and
        /// `unit_size`), or None when `name` is no generator.
        pub fn keys(name: &str) -> Option<Vec<&'static str>> {
            match name {
                $($sn => Some(<$sty>::KEYS.to_vec()),)*
                $($bn => Some(vec!["preset", "scale", "page_size", "seed", $bn]),)*
                _ => None,
            }
        }

        /// Why `key`, read by other types, is not read by `name`, when
        /// that needs saying.
        pub fn why_not(name: &str, key: &str) -> Option<&'static str> {
            match name {
                $($sn => <$sty>::why_not(key),)*
                _ => None,
            }
        }

        /// The keys' types checked (unknown keys, wrong types), not
        /// their ranges: the schema's part of the check.
        pub fn check(name: &str, params: &Params) -> Result<(), KeyError> {
            match name {
                $($sn => parse::<SynthParams>(params.clone()).map(drop),)*
                $($bn => bench_parts::<$bty>($bn, params).map(drop),)*
                _ => Ok(()),
            }
        }

        /// The source of generator `name`, every key checked.
        pub fn source(name: &str, params: &Params) -> Result<Source, KeyError> {
            match name {
                $($sn => parse::<SynthParams>(params.clone())?.spec::<$sty>().map(Source::Synth),)*
                $($bn => bench::<$bty>($bn, params).map(|s| Source::Workload(Spec::$bv(s))),)*
                _ => Err(("type".into(), format!("{name:?} is no generator"))),
            }
        }
    };
}

registry! {
    synthetic {
        Zipf => "zipf", synth::Zipf;
        Uniform => "uniform", synth::Uniform;
        Scan => "scan", synth::Scan;
        Loop => "loop", synth::Loop;
    }
    benchmark {
        Postmark => "postmark", w::postmark::PostmarkSpec;
        Bonnie => "bonnie", w::bonnie::BonnieSpec;
        Web => "web", w::web::WebSpec;
        Specweb => "specweb", w::specweb::SpecwebSpec;
        Proxy => "proxy", w::proxy::ProxySpec;
        Multiprogram => "multiprogram", w::multiprogram::MultiprogramSpec;
        Hotset => "hotset", w::hotset::HotsetSpec;
    }
}

/// The keys every benchmark generator reads besides its own table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BenchKeys {
    preset: Option<String>,
    scale: Option<f64>,
    page_size: Option<Size>,
    seed: Option<u64>,
}

/// A benchmark's common keys and its `[workload.<name>]` table, parsed.
fn bench_parts<B: Benchmark>(
    name: &str,
    params: &Params,
) -> Result<(BenchKeys, B::Table), KeyError> {
    let mut rest = params.clone();
    let table = match rest.remove(name) {
        Some(t) => parse::<B::Table>(t).map_err(|(k, m)| {
            (
                if k.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}.{k}")
                },
                m,
            )
        })?,
        None => B::Table::default(),
    };
    Ok((parse::<BenchKeys>(serde_json::Value::Object(rest))?, table))
}

fn bench<B: Benchmark>(name: &str, params: &Params) -> Result<B, KeyError> {
    let (k, table) = bench_parts::<B>(name, params)?;
    let scale = k.scale.unwrap_or(1.0);
    if !(scale.is_finite() && scale > 0.0 && scale <= 1000.0) {
        return Err((
            "scale".into(),
            format!(
                "{scale} is out of range; allowed > 0 up to 1000 (1 = the preset as published)"
            ),
        ));
    }
    let page_size = match k.page_size.unwrap_or(Size::Absolute(4096)) {
        Size::Absolute(n) if (512..=1 << 30).contains(&n) && n.is_power_of_two() => n as u32,
        Size::Absolute(n) => {
            return Err((
                "page_size".into(),
                format!("{n} is out of range; a power of two from 512 B to 1 GiB"),
            ))
        }
        Size::Percent(_) => {
            return Err((
                "page_size".into(),
                "must be a size in bytes, not a share".into(),
            ))
        }
    };
    let c = Common {
        scale,
        seed: k.seed.unwrap_or(42),
        page_size,
    };
    B::make(k.preset.as_deref().unwrap_or("default"), &table, c).map_err(|(key, msg)| {
        if key == "preset" {
            (key, msg)
        } else {
            (format!("{name}.{key}"), msg)
        }
    })
}
