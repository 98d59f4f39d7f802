//! Config values written as a name or as a table with `type` and the
//! parameters (`policy = "lru"`, `admission = { type = "second-hit",
//! window = 1000 }`): one deserialiser shared by every registry, so their
//! error messages agree.

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::marker::PhantomData;
use thiserror::Error;

/// A config problem at a key path such as `tier[1].capacity`: the error of
/// every layer's config section, so it lives in the base layer.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{path}: {msg}")]
pub struct ConfigError {
    pub path: String,
    pub msg: String,
}

/// The longest key path an error echoes whole: a key written with 5,000
/// characters is cut to this many (and its length said), short enough
/// that the message's own bound leaves it as it is.
const KEY_CHARS: usize = 80;

impl ConfigError {
    /// The key path and the message, both of bounded length
    /// ([`crate::units::bound_message`]): an error may echo a key or a
    /// value of any length the user wrote.
    pub fn at(path: impl Into<String>, msg: impl Into<String>) -> Self {
        let (path, msg) = (path.into(), msg.into());
        ConfigError {
            path: crate::units::clip(&path, KEY_CHARS).into_owned(),
            msg: crate::units::bound_message(&msg),
        }
    }
}

/// Asks the allocator for `bytes` and gives them back at once: a
/// size-like key (a TLB's entries, a Bloom window, the clients) whose
/// structure the machine, or the process's memory limit, cannot hold is
/// one line naming the key and the bytes asked, before the run starts,
/// not an abort half way through building it. The structure is built
/// right after, in the same process; `what` says what needs the memory.
pub fn probe_memory(path: &str, what: &str, bytes: u64) -> Result<(), ConfigError> {
    let mut v: Vec<u8> = Vec::new();
    let ok = usize::try_from(bytes).is_ok_and(|n| v.try_reserve_exact(n).is_ok());
    drop(v);
    if ok {
        return Ok(());
    }
    Err(ConfigError::at(
        path,
        format!(
            "{what} need {bytes} bytes ({}) of memory, which could not be allocated",
            crate::units::human_bytes(bytes)
        ),
    ))
}

/// A parameter table without its `type`.
pub type Params = serde_json::Map<String, serde_json::Value>;

/// A registry's spec: made from a name and its parameters.
pub trait Named: Sized {
    /// What the value names, for messages ("policy", "admission policy").
    const WHAT: &'static str;
    /// The names the registry knows.
    fn names() -> &'static [&'static str];
    /// The spec for `name`, its parameters checked.
    fn from_parts(name: &str, params: Params) -> Result<Self, String>;
}

/// Parameters into their serde struct; the message names the parameter.
pub fn params_from<P: DeserializeOwned>(params: Params) -> Result<P, String> {
    serde_path_to_error::deserialize(serde_json::Value::Object(params)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        // Unknown and missing fields' messages already name them.
        if path == "." || inner.starts_with("unknown field") || inner.starts_with("missing field") {
            inner
        } else {
            format!("{path}: {inner}")
        }
    })
}

/// Deserialises a name or a table into `T`.
pub fn deserialize<'de, D: Deserializer<'de>, T: Named>(d: D) -> Result<T, D::Error> {
    struct V<T>(PhantomData<T>);
    impl<'de, T: Named> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(
                f,
                "a{} {} name ({}) or a table with `type` and its parameters",
                article(T::WHAT),
                T::WHAT,
                T::names().join(", ")
            )
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            T::from_parts(canonical::<T>(v), Params::new()).map_err(E::custom)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            let mut m: Params =
                Deserialize::deserialize(de::value::MapAccessDeserializer::new(map))?;
            let names = T::names().join(", ");
            let name = match m.remove("type") {
                Some(serde_json::Value::String(s)) => s,
                Some(other) => {
                    return Err(de::Error::custom(format!(
                        "type: {other} is not a{} {} name; expected one of {names}",
                        article(T::WHAT),
                        T::WHAT
                    )))
                }
                None => {
                    return Err(de::Error::custom(format!(
                        "missing `type`; expected one of {names}"
                    )))
                }
            };
            T::from_parts(canonical::<T>(&name), m).map_err(de::Error::custom)
        }
    }
    d.deserialize_any(V(PhantomData))
}

/// The registry's spelling of `name`, matched without regard to case
/// (`"LRU"` is `"lru"`); an unknown name is returned as written, for the
/// registry's own message, which lists the names as they are spelt.
fn canonical<T: Named>(name: &str) -> &str {
    T::names()
        .iter()
        .find(|n| n.eq_ignore_ascii_case(name))
        .copied()
        .unwrap_or(name)
}

fn article(what: &str) -> &'static str {
    if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "n"
    } else {
        ""
    }
}
