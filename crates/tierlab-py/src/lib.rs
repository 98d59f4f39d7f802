//! `tierlab._core`: converts between Python and tierlab-core, releases the
//! GIL around the engine and lets Ctrl-C through. Nothing else lives here.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tierlab_core::config::Config;
use tierlab_core::sim::{self, Simulation};
use tierlab_core::Error;

create_exception!(
    _core,
    TierlabError,
    PyException,
    "Base class of tierlab's errors."
);
create_exception!(
    _core,
    ConfigError,
    TierlabError,
    "A config is invalid: the message names the key path."
);
create_exception!(
    _core,
    TraceError,
    TierlabError,
    "A trace cannot be read: the message names the file and the place."
);

/// The one mapping from core errors to Python exceptions.
fn to_py(e: Error) -> PyErr {
    match e {
        Error::Config(e) => ConfigError::new_err(e.to_string()),
        Error::Trace(e) => TraceError::new_err(e.to_string()),
    }
}

/// Runs the engine in chunks of `chunk` requests with the GIL released,
/// checking for Ctrl-C and reporting progress between chunks.
fn drive(
    py: Python<'_>,
    progress: Option<&Bound<'_, PyAny>>,
    total: Option<u64>,
    mut step: impl FnMut() -> Result<(bool, u64), Error> + Send,
) -> PyResult<()> {
    loop {
        let (done, n) = py.allow_threads(&mut step).map_err(to_py)?;
        py.check_signals()?;
        if let Some(cb) = progress {
            cb.call1((n, total))?;
        }
        if done {
            return Ok(());
        }
    }
}

/// simulate(config_json, progress=None, chunk=1_000_000) -> str
///
/// Runs a config (JSON of the TOML schema) and returns the result as JSON:
/// {"summary": {...}, "timeline": {...}}.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, chunk=1_000_000))]
fn simulate(
    py: Python<'_>,
    config_json: &str,
    progress: Option<Bound<'_, PyAny>>,
    chunk: u64,
) -> PyResult<String> {
    let cfg = Config::from_json_str(config_json).map_err(|e| to_py(e.into()))?;
    let mut s = py.allow_threads(|| Simulation::new(&cfg)).map_err(to_py)?;
    let total = s.len_hint();
    drive(py, progress.as_ref(), total, || {
        let done = s.step(chunk.max(1))?;
        Ok((done, s.processed()))
    })?;
    let r = s.result();
    let out = serde_json::json!({ "summary": r, "timeline": r.timeline });
    Ok(out.to_string())
}

/// config_schema_error(config_json) -> tuple[str, str] | None
///
/// The key path and message of the config's first schema error (an unknown
/// key, a wrong type), or None; ranges and references are not checked.
#[pyfunction]
fn config_schema_error(config_json: &str) -> Option<(String, String)> {
    Config::check_json_schema(config_json)
        .err()
        .map(|e| (e.path, e.msg))
}

/// workload_error(config_json) -> tuple[str, str] | None
///
/// The key path and message of the first error of the config's
/// `[workload]` (schema and ranges; no file is opened), or None.
#[pyfunction]
fn workload_error(config_json: &str) -> Option<(String, String)> {
    tierlab_core::config::workload_only_from_json(config_json)
        .err()
        .map(|e| (e.path, e.msg))
}

/// techs() -> str: the built-in technology catalog as a JSON list.
#[pyfunction]
fn techs() -> String {
    serde_json::to_string(tierlab_core::tech::builtin()).expect("the catalog serialises")
}

/// Calls a Python progress callback from engine threads every `every`
/// requests, taking the GIL only then; a raised exception (Ctrl-C included)
/// stops the engine and is re-raised.
struct Reporter {
    cb: Option<Py<PyAny>>,
    every: u64,
    next: u64,
    err: Option<PyErr>,
}

impl Reporter {
    fn new(cb: Option<Bound<'_, PyAny>>) -> Self {
        Reporter {
            cb: cb.map(|c| c.unbind()),
            every: 1_000_000,
            next: 1_000_000,
            err: None,
        }
    }
    fn tick(&mut self, n: u64) -> bool {
        if n < self.next {
            return true;
        }
        self.next = n + self.every;
        Python::with_gil(|py| {
            let r = py.check_signals().and_then(|_| match &self.cb {
                Some(cb) => cb.call1(py, (n, None::<u64>)).map(|_| ()),
                None => Ok(()),
            });
            match r {
                Ok(()) => true,
                Err(e) => {
                    self.err = Some(e);
                    false
                }
            }
        })
    }
    fn finish<T, E: Into<Error>>(self, r: Result<T, E>) -> PyResult<T> {
        match (self.err, r) {
            (Some(e), _) => Err(e),
            (None, r) => r.map_err(|e| to_py(e.into())),
        }
    }
}

/// trace_stats(config_json, progress=None) -> str
///
/// One pass over the config's workload; JSON of the counts and footprint.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn trace_stats(
    py: Python<'_>,
    config_json: &str,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let source = workload_source(config_json)?;
    let mut rep = Reporter::new(progress);
    let r = py.allow_threads(|| sim::trace_stats(&source, |n| rep.tick(n)));
    let st = rep.finish(r)?;
    Ok(serde_json::to_string(&st).expect("stats serialise"))
}

/// trace_convert(config_json, out_path, csv=False, progress=None) -> str
///
/// Writes the config's workload as an oracleGeneral file, or with `csv` as
/// CSV `time,key,size,op` with a header (operations kept); returns its stats
/// as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, out_path, csv=false, progress=None))]
fn trace_convert(
    py: Python<'_>,
    config_json: &str,
    out_path: std::path::PathBuf,
    csv: bool,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<String> {
    let source = workload_source(config_json)?;
    let mut rep = Reporter::new(progress);
    let r = py.allow_threads(|| {
        let tick = |n| rep.tick(n);
        if csv {
            sim::write_csv(&source, &out_path, tick)
        } else {
            sim::convert_to_oracle(&source, &out_path, tick)
        }
    });
    let st = rep.finish(r)?;
    Ok(serde_json::to_string(&st).expect("stats serialise"))
}

/// The workload of a config that may have no tiers (trace tools need none).
fn workload_source(config_json: &str) -> PyResult<tierlab_core::config::Source> {
    let w =
        tierlab_core::config::workload_only_from_json(config_json).map_err(|e| to_py(e.into()))?;
    w.source().map_err(|e| to_py(e.into()))
}

/// The JSON text of an optional argument, parsed.
fn json_arg(name: &str, text: Option<&str>) -> PyResult<Option<serde_json::Value>> {
    text.map(|t| {
        serde_json::from_str(t)
            .map_err(|e| to_py(tierlab_core::config::ConfigError::at(name, e.to_string()).into()))
    })
    .transpose()
}

/// What a caller of `mrc` or `mrc_method` asks, as the core takes it.
fn mrc_ask(
    sizes: Option<Vec<String>>,
    shards_rate: Option<f64>,
    shards_size: Option<usize>,
    policy_json: Option<&str>,
    hierarchy_json: Option<&str>,
) -> PyResult<tierlab_core::mrc::Ask> {
    Ok(tierlab_core::mrc::Ask {
        sizes,
        shards_rate,
        shards_size,
        policy: json_arg("policy", policy_json)?,
        hierarchy: json_arg("config", hierarchy_json)?,
    })
}

/// mrc_method(sizes=None, shards_rate=None, shards_size=None, policy_json=None,
///            hierarchy_json=None) -> str
///
/// The method `mrc` would use for these options, as a label ("LRU (exact)",
/// "fifo (simulated)", ...); raises ConfigError when they do not go
/// together. Reads nothing.
#[pyfunction]
#[pyo3(signature = (sizes=None, shards_rate=None, shards_size=None, policy_json=None, hierarchy_json=None))]
fn mrc_method(
    sizes: Option<Vec<String>>,
    shards_rate: Option<f64>,
    shards_size: Option<usize>,
    policy_json: Option<&str>,
    hierarchy_json: Option<&str>,
) -> PyResult<String> {
    let ask = mrc_ask(sizes, shards_rate, shards_size, policy_json, hierarchy_json)?;
    let m = ask.method().map_err(|e| to_py(e.into()))?;
    Ok(m.label())
}

/// mrc(config_json, sizes=None, shards_rate=None, shards_size=None,
///     policy_json=None, hierarchy_json=None, progress=None)
///     -> (list[int], list[float], int, str)
///
/// A miss-ratio curve of the config's workload as (sizes, miss ratios, the
/// largest object in the stack: 0 for a simulated curve, the method's
/// label). The core chooses the method (`tierlab_core::mrc::Ask`): exact
/// LRU by stack distances, SHARDS with a rate or a number of sampled keys,
/// or, with a policy (JSON: a name or a table) or a hierarchy config
/// (JSON), simulation at each of `sizes` (required then). Sizes are
/// strings as capacities are written.
#[pyfunction]
#[pyo3(signature = (config_json, sizes=None, shards_rate=None, shards_size=None, policy_json=None, hierarchy_json=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn mrc(
    py: Python<'_>,
    config_json: &str,
    sizes: Option<Vec<String>>,
    shards_rate: Option<f64>,
    shards_size: Option<usize>,
    policy_json: Option<&str>,
    hierarchy_json: Option<&str>,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<(Vec<u64>, Vec<f64>, u64, String)> {
    let ask = mrc_ask(sizes, shards_rate, shards_size, policy_json, hierarchy_json)?;
    let mut rep = Reporter::new(progress);
    let r = py.allow_threads(|| tierlab_core::mrc::curve(config_json, &ask, |n| rep.tick(n)));
    let (m, method) = rep.finish(r)?;
    Ok((m.sizes, m.miss_ratios, m.largest, method.label()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", tierlab_core::VERSION)?;
    m.add("STRACE_SYSCALLS", tierlab_core::trace::strace::SYSCALLS)?;
    m.add("TierlabError", m.py().get_type::<TierlabError>())?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    m.add("TraceError", m.py().get_type::<TraceError>())?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(techs, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema_error, m)?)?;
    m.add_function(wrap_pyfunction!(workload_error, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(mrc, m)?)?;
    m.add_function(wrap_pyfunction!(mrc_method, m)?)?;
    m.add("CSV_HEADER", sim::CSV_HEADER)?;
    Ok(())
}
