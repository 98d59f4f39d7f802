//! Human-readable sizes and durations in configs.
//!
//! Sizes: an integer (bytes, or objects with `unit_size`), `"512MiB"`,
//! `"1.4GiB"`, `"4KB"` (decimal), or `"10%"` of the workload's footprint.
//! Durations: a number of nanoseconds or `"30s"`, `"2us"`, `"1.5ms"`, `"55ns"`.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

const SIZE_FORMS: &str =
    "an integer, a size such as \"512MiB\", \"1.4GiB\", \"4KB\", or a share of the footprint such as \"10%\"";
const DURATION_FORMS: &str =
    "a number of nanoseconds or a duration such as \"55ns\", \"2us\", \"1.5ms\", \"30s\"";

/// A capacity or object size as written in a config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    /// Bytes (or objects, when sizes are ignored).
    Absolute(u64),
    /// Percent of the workload's footprint, resolved after a pre-pass.
    Percent(f64),
}

impl Size {
    /// Resolves against a footprint (bytes, or objects with unit sizes).
    /// Rounds down, as libCacheSim does for fractional cache sizes.
    pub fn resolve(self, footprint: u64) -> u64 {
        match self {
            Size::Absolute(n) => n,
            Size::Percent(p) => ((footprint as f64) * p / 100.0).floor() as u64,
        }
    }
}

pub fn parse_size(s: &str) -> Result<Size, String> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p.trim().parse().map_err(|_| bad_size(s))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(format!(
                "{s:?} is out of range: a share must be in (0%, 100%]"
            ));
        }
        return Ok(Size::Percent(v));
    }
    let (num, unit) = split_unit(t);
    let v: f64 = num.trim().parse().map_err(|_| bad_size(s))?;
    let mult: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KiB" | "K" => 1024.0,
        "MiB" | "M" => 1024f64.powi(2),
        "GiB" | "G" => 1024f64.powi(3),
        "TiB" | "T" => 1024f64.powi(4),
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        _ => return Err(bad_size(s)),
    };
    if !(v.is_finite() && v >= 0.0) {
        return Err(bad_size(s));
    }
    whole_bytes(v * mult, &format!("{s:?}")).map(Size::Absolute)
}

/// A size in bytes rounded to a whole number, refused (rather than
/// saturated, as `as u64` would) when it does not fit in 64 bits.
/// `written` is the value as the message shows it.
fn whole_bytes(v: f64, written: &str) -> Result<u64, String> {
    let n = v.round();
    // 2^64 is the first f64 past u64::MAX.
    if n >= 18_446_744_073_709_551_616.0 {
        return Err(format!(
            "{written} is too large; a size must be below 16 EiB (2^64 bytes)"
        ));
    }
    Ok(n as u64)
}

/// Splits `"1.5e-3ms"` into its number and its unit at the first letter
/// that is not a number's exponent (an `e` or `E` after a digit, before a
/// digit or a signed one), so `"1e-6s"` means a microsecond and not a
/// number `1` in unit `e-6s`.
fn split_unit(t: &str) -> (&str, &str) {
    let b = t.as_bytes();
    let exponent = |i: usize| {
        let digit = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
        matches!(b[i], b'e' | b'E')
            && i > 0
            && (b[i - 1].is_ascii_digit() || b[i - 1] == b'.')
            && (digit(i + 1) || (matches!(b.get(i + 1), Some(b'+' | b'-')) && digit(i + 2)))
    };
    let split = (0..b.len())
        .find(|&i| b[i].is_ascii_alphabetic() && !exponent(i))
        .unwrap_or(b.len());
    t.split_at(split)
}

fn bad_size(s: &str) -> String {
    format!("{s:?} is not a size; expected {SIZE_FORMS}")
}

/// Parses a duration to nanoseconds.
pub fn parse_duration_ns(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, unit) = split_unit(t);
    let v: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("{s:?} is not a duration; expected {DURATION_FORMS}"))?;
    let mult = match unit.trim() {
        "" | "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "{s:?} has an unknown unit; expected {DURATION_FORMS}"
            ))
        }
    };
    Ok(v * mult)
}

impl fmt::Display for Size {
    /// As a user writes it.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Size::Absolute(n) => write!(f, "{n}"),
            Size::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(SIZE_FORMS)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size::Absolute(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                if v < 0 {
                    return Err(E::custom(format!("{v} is negative; expected {SIZE_FORMS}")));
                }
                Ok(Size::Absolute(v as u64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Size, E> {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(E::custom(format!(
                        "{v} is not a size; expected {SIZE_FORMS}"
                    )));
                }
                whole_bytes(v, &format!("{v:e}"))
                    .map(Size::Absolute)
                    .map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
                parse_size(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Size::Absolute(n) => s.serialize_u64(*n),
            Size::Percent(p) => s.serialize_str(&format!("{p}%")),
        }
    }
}

/// A duration in nanoseconds, written as a number or a string with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize)]
#[serde(transparent)]
pub struct Nanos(pub f64);

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Nanos;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(DURATION_FORMS)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Nanos, E> {
                Ok(Nanos(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Nanos, E> {
                Ok(Nanos(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Nanos, E> {
                Ok(Nanos(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Nanos, E> {
                parse_duration_ns(v).map(Nanos).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A byte count as people read it: "370 B", "4 KiB" (a whole number of
/// the unit, written whole), "1.50 GiB".
pub fn human_bytes(n: u64) -> String {
    let mut x = n as f64;
    let mut div = 1u64;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"] {
        if x < 1024.0 || unit == "TiB" {
            return if n.is_multiple_of(div) {
                format!("{} {unit}", n / div)
            } else {
                format!("{x:.2} {unit}")
            };
        }
        x /= 1024.0;
        div <<= 10;
    }
    unreachable!("TiB takes any size")
}

/// `s` cut to its first `max` characters, with how long it was, for
/// messages that echo a value the user gave: a value of any length makes a
/// message of bounded length.
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(s),
        Some((end, _)) => std::borrow::Cow::Owned(format!(
            "{}... ({} characters)",
            &s[..end],
            s.chars().count()
        )),
    }
}

/// A message of bounded length that may echo values the user gave: each
/// word (a run without spaces) longer than 100 characters is clipped to
/// its first 60, and the whole to 2,000. A 5,000-character key or value
/// makes a line a reader can still read.
pub fn bound_message(s: &str) -> String {
    const WORD: usize = 100;
    const TOTAL: usize = 2000;
    if s.len() <= WORD && !s.contains(['\n', '\r']) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len().min(TOTAL + 40));
    for (i, w) in s.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if w.chars().count() > WORD {
            out.push_str(&clip(w, 60));
        } else {
            out.push_str(w);
        }
    }
    clip(&out, TOTAL).into_owned()
}

/// A count with thousands separated: "2,000,000".
pub fn human_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn messages_echo_long_values_clipped() {
        let v = "x".repeat(5000);
        let m = bound_message(&format!("unknown field `{v}`, expected one of `a`, `b`"));
        assert!(m.len() < 150, "{m}");
        assert!(m.contains(" characters)") && m.ends_with("expected one of `a`, `b`"));
        let short = "tier[0].capacity: \"0\" must be at least 1";
        assert_eq!(bound_message(short), short);
        assert!(bound_message(&"a b ".repeat(2000)).chars().count() < 2100);
    }

    #[test]
    fn human_bytes_reads_as_written() {
        assert_eq!(human_bytes(370), "370 B");
        assert_eq!(human_bytes(4096), "4 KiB");
        assert_eq!(human_bytes(4097), "4.00 KiB");
        assert_eq!(human_bytes(3 << 29), "1.50 GiB");
        assert_eq!(human_bytes(5 << 40), "5 TiB");
        assert_eq!(human_bytes(5 << 50), "5120 TiB");
        assert_eq!(human_count(0), "0");
        assert_eq!(human_count(999), "999");
        assert_eq!(human_count(200_000), "200,000");
        assert_eq!(human_count(2_000_000), "2,000,000");
    }

    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MiB").unwrap(), Size::Absolute(512 << 20));
        assert_eq!(parse_size("4KiB").unwrap(), Size::Absolute(4096));
        assert_eq!(parse_size("4KB").unwrap(), Size::Absolute(4000));
        assert_eq!(parse_size("1.5GiB").unwrap(), Size::Absolute(3 << 29));
        assert_eq!(parse_size("10%").unwrap(), Size::Percent(10.0));
        assert!(parse_size("10 bananas").is_err());
        assert!(parse_size("0%").is_err());
        assert!(parse_size("-5MiB").is_err());
        assert_eq!(parse_size("1e3KiB").unwrap(), Size::Absolute(1_024_000));
        assert_eq!(parse_size("2E6").unwrap(), Size::Absolute(2_000_000));
        assert!(parse_size("1e3e3KiB").is_err());
        assert_eq!(Size::Percent(10.0).resolve(914_860), 91_486);
        // Past 64 bits: an error, not a saturated u64::MAX.
        assert!(parse_size("99999999999999999999 GiB")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("18446744073709551616").is_err());
        assert_eq!(
            parse_size("18446744073709549568").unwrap(),
            Size::Absolute(18_446_744_073_709_549_568)
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("30s").unwrap(), 30e9);
        assert_eq!(parse_duration_ns("2us").unwrap(), 2000.0);
        assert_eq!(parse_duration_ns("55").unwrap(), 55.0);
        assert!(parse_duration_ns("3 fortnights").is_err());
        // An exponent belongs to the number, not to the unit.
        assert_eq!(parse_duration_ns("1e-6s").unwrap(), 1e3);
        assert_eq!(parse_duration_ns("2.5E+3us").unwrap(), 2.5e6);
        assert_eq!(parse_duration_ns("1e3").unwrap(), 1e3);
        assert!(parse_duration_ns("1e").is_err());
        assert!(parse_duration_ns("1e400s").is_err(), "not finite");
        assert!(parse_duration_ns("e3s").is_err());
    }
}
