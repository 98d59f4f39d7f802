//! The time model's configuration: `[load]`, `[server]`, the device keys of
//! each tier and of `[backing]`, and `[run] warmup`. Parsed with the rest of
//! the config (config.rs); checked here, each error at its key path.

use crate::spec::ConfigError;
use crate::units::{parse_duration_ns, Nanos};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How requests arrive.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LoadType {
    /// One request after another (today's model).
    #[default]
    Serial,
    /// `clients` clients, each issuing its next request when its last one
    /// completes and its think time has passed.
    Closed,
    /// Arrivals at the trace's timestamps or at a Poisson `rate`.
    Open,
}

/// How a closed load deals the trace's requests to its clients.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Deal {
    /// The next request of the trace goes to whichever client is ready.
    #[default]
    Order,
    /// Each distinct `pid` of the trace is one client, which issues that
    /// pid's requests in trace order.
    Pid,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    #[serde(rename = "type", default)]
    pub kind: LoadType,
    /// Closed: the number of clients (with `deal = "pid"`: found in the
    /// trace, and this must be absent).
    pub clients: Option<u64>,
    /// Closed: the delay between a client's response and its next request.
    pub think: Option<Delay>,
    #[serde(default)]
    pub deal: Deal,
    /// Open: Poisson arrivals per second; absent: the trace's timestamps.
    pub rate: Option<f64>,
    /// Seed of the time model's random draws (think times, service times,
    /// arrivals); default: the workload's seed.
    pub seed: Option<u64>,
}

/// The server every request passes: a CPU station and a network link.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Cores; absent: unlimited (no contention for the CPU).
    pub cpus: Option<u64>,
    /// Service demand of one request on a core.
    pub cpu: Option<Delay>,
    /// A network link each request's bytes cross, e.g. "1Gbit/s".
    pub link: Option<Rate>,
}

/// A device's service-time distribution around the charge of each access.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// Exactly the access's charge (latency + size / bandwidth).
    #[default]
    Fixed,
    /// Exponentially distributed with the charge as its mean (validation
    /// against queueing theory; variability).
    Exponential,
}

/// `lazy_writeback = { size = "4MiB" }`: writes into this tier go to a
/// buffer of `size` bytes and reach the device when it has no other work.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LazyConfig {
    pub size: crate::units::Size,
}

/// The device keys shared by `[[tier]]` and `[backing]` (written out in
/// both: serde cannot flatten into a struct that refuses unknown keys).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceKeys {
    pub channels: Option<u64>,
    pub service: Service,
    pub reads_first: bool,
    pub read_while_write: bool,
    pub lazy_writeback: Option<u64>,
}

impl DeviceKeys {
    /// Whether any key differs from the serial model's device (one channel
    /// that nothing queues on).
    pub fn configured(&self) -> bool {
        *self != DeviceKeys::default()
    }

    pub fn check(&self, at: &str) -> Result<(), ConfigError> {
        if self.channels == Some(0) {
            return Err(ConfigError::at(
                format!("{at}.channels"),
                "must be at least 1 (parallel units of the device)",
            ));
        }
        if let Some(b) = self.lazy_writeback {
            if b == 0 {
                return Err(ConfigError::at(
                    format!("{at}.lazy_writeback.size"),
                    "must be greater than zero",
                ));
            }
        }
        Ok(())
    }
}

const MAX_MEAN_NS: f64 = 1e14;

/// A delay: a duration ("50us"), or `{ dist = "exponential", mean = "50us" }`
/// or `{ dist = "fixed", mean = ... }`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "kebab-case")]
pub enum Delay {
    Fixed { mean: Nanos },
    Exponential { mean: Nanos },
}

impl Delay {
    pub fn mean_ns(&self) -> f64 {
        match self {
            Delay::Fixed { mean } | Delay::Exponential { mean } => mean.0,
        }
    }

    pub fn check(&self, at: &str) -> Result<(), ConfigError> {
        let m = self.mean_ns();
        if !(m.is_finite() && m >= 0.0) {
            return Err(ConfigError::at(
                at,
                format!("{m} ns is out of range; must be zero or more"),
            ));
        }
        // Draws reach about 37 means; times are whole ns below 2^52.
        if m > MAX_MEAN_NS {
            return Err(ConfigError::at(
                at,
                format!("{m} ns is out of range; at most 1e14 ns (about 28 hours)"),
            ));
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Delay;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a duration such as \"50us\", or { dist = \"exponential\" or \"fixed\", mean = \"50us\" }",
                )
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Delay, E> {
                Ok(Delay::Fixed {
                    mean: Nanos(v as f64),
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Delay, E> {
                Ok(Delay::Fixed {
                    mean: Nanos(v as f64),
                })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Delay, E> {
                Ok(Delay::Fixed { mean: Nanos(v) })
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Delay, E> {
                parse_duration_ns(v)
                    .map(|ns| Delay::Fixed { mean: Nanos(ns) })
                    .map_err(E::custom)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut m: A) -> Result<Delay, A::Error> {
                let mut dist: Option<String> = None;
                let mut mean: Option<Nanos> = None;
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "dist" => dist = Some(m.next_value()?),
                        "mean" => mean = Some(m.next_value()?),
                        other => return Err(de::Error::unknown_field(other, &["dist", "mean"])),
                    }
                }
                let mean = mean.ok_or_else(|| de::Error::missing_field("mean"))?;
                match dist.as_deref() {
                    Some("exponential") => Ok(Delay::Exponential { mean }),
                    Some("fixed") | None => Ok(Delay::Fixed { mean }),
                    Some(other) => Err(de::Error::custom(format!(
                        "unknown dist {other:?}; expected one of fixed, exponential"
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A transfer rate in bytes per second, written "1Gbit/s", "125MB/s",
/// "10GiB/s" or a number of bytes per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Rate(pub f64);

pub const RATE_FORMS: &str = "a rate such as \"1Gbit/s\", \"125MB/s\" or \"10GiB/s\" \
    (bit, kbit, Mbit, Gbit; B, KB, MB, GB: powers of 1000; KiB, MiB, GiB: of 1024), \
    or bytes per second";

pub fn parse_rate(s: &str) -> Result<f64, String> {
    let bad = || format!("{s:?} is not a rate; write {RATE_FORMS}");
    let t = s.trim();
    let t = t
        .strip_suffix("/s")
        .or_else(|| t.strip_suffix("ps"))
        .ok_or_else(bad)?;
    let split = t.find(|c: char| c.is_ascii_alphabetic()).ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let factor = match unit.trim() {
        "bit" | "b" => 1.0 / 8.0,
        "kbit" | "Kbit" | "kb" => 1e3 / 8.0,
        "Mbit" | "Mb" => 1e6 / 8.0,
        "Gbit" | "Gb" => 1e9 / 8.0,
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let r = v * factor;
    if !(r.is_finite() && r > 0.0) {
        return Err(format!("{s:?} is out of range; a rate must be positive"));
    }
    Ok(r)
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Rate;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(RATE_FORMS)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rate, E> {
                self.visit_f64(v as f64)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rate, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rate, E> {
                if v.is_finite() && v > 0.0 {
                    Ok(Rate(v))
                } else {
                    Err(E::custom(format!(
                        "{v} is out of range; a rate must be positive"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Rate, E> {
                parse_rate(v).map(Rate).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `[run] warmup`: requests, a share of the run, a simulated duration, or
/// whole passes over the workload.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Warmup {
    Requests(u64),
    Share(f64),
    Duration(Nanos),
    Passes(u64),
}

pub const WARMUP_FORMS: &str = "a request count (100000), a share of the run (\"20%\"), \
    a simulated duration (\"10ms\") or whole passes over the workload (\"1 pass\", with run.passes)";

impl<'de> Deserialize<'de> for Warmup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Warmup;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(WARMUP_FORMS)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Warmup, E> {
                Ok(Warmup::Requests(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Warmup, E> {
                u64::try_from(v)
                    .map(Warmup::Requests)
                    .map_err(|_| E::custom(format!("{v} is negative; {WARMUP_FORMS}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Warmup, E> {
                let t = v.trim();
                if let Some(p) = t.strip_suffix('%') {
                    let x: f64 = p
                        .trim()
                        .parse()
                        .map_err(|_| E::custom(format!("{v:?} is not {WARMUP_FORMS}")))?;
                    if !(0.0..100.0).contains(&x) {
                        return Err(E::custom(format!(
                            "{v:?} is out of range; a share from 0% up to (not including) 100%"
                        )));
                    }
                    return Ok(Warmup::Share(x / 100.0));
                }
                for suffix in [" passes", " pass", "passes", "pass"] {
                    if let Some(n) = t.strip_suffix(suffix) {
                        return n
                            .trim()
                            .parse()
                            .map(Warmup::Passes)
                            .map_err(|_| E::custom(format!("{v:?} is not {WARMUP_FORMS}")));
                    }
                }
                parse_duration_ns(t)
                    .map(|ns| Warmup::Duration(Nanos(ns)))
                    .map_err(|_| E::custom(format!("{v:?} is not {WARMUP_FORMS}")))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1Gbit/s").unwrap(), 125e6);
        assert_eq!(parse_rate("125 MB/s").unwrap(), 125e6);
        assert_eq!(parse_rate("1GiB/s").unwrap(), 1073741824.0);
        assert!(parse_rate("fast").unwrap_err().contains("not a rate"));
        assert!(parse_rate("0Gbit/s").unwrap_err().contains("positive"));
    }

    #[test]
    fn delays_and_warmups() {
        #[derive(Deserialize)]
        struct T {
            d: Delay,
            w: Warmup,
        }
        let t: T = toml::from_str("d = \"50us\"\nw = \"20%\"").unwrap();
        assert_eq!(t.d, Delay::Fixed { mean: Nanos(50e3) });
        assert_eq!(t.w, Warmup::Share(0.2));
        let t: T = toml::from_str("d = { dist = \"exponential\", mean = \"1ms\" }\nw = \"1 pass\"")
            .unwrap();
        assert_eq!(t.d, Delay::Exponential { mean: Nanos(1e6) });
        assert_eq!(t.w, Warmup::Passes(1));
        let t: T = toml::from_str("d = 3\nw = \"10ms\"").unwrap();
        assert_eq!(t.w, Warmup::Duration(Nanos(1e7)));
        let e = toml::from_str::<T>("d = { dist = \"normal\", mean = 1 }\nw = 1")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("unknown dist \"normal\""), "{e}");
        let e = toml::from_str::<T>("d = 1\nw = \"100%\"")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("out of range"), "{e}");
    }
}
