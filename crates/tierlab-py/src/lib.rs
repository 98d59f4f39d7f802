//! `tierlab._core`: converts between Python and tierlab-core, releases the
//! GIL around the engine and lets Ctrl-C through. Nothing else lives here.

use pyo3::prelude::*;
use tierlab_core::prelude::{
    self as tl, AccessCost, Catalog, Config, Error, Runner, TechOverride, Technology,
};

/// An exception of `tierlab.errors` (the one exception hierarchy, defined
/// in Python so that its classes can also be the built-in exceptions a
/// Python user catches: `ConfigError` a `ValueError`, a missing trace a
/// `FileNotFoundError`), made with `args` (the message, then the key path
/// or the file).
fn py_error(class: &str, args: (String, Option<String>)) -> PyErr {
    Python::with_gil(|py| {
        let made = py
            .import("tierlab.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.call1(args));
        match made {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        }
    })
}

/// A ConfigError with no key path (the message names its argument).
fn config_error(msg: String) -> PyErr {
    py_error("ConfigError", (msg, None))
}

/// What a binding function fails with: a core error, raised as its Python
/// exception by the one mapping below, or a Python error (a progress
/// callback's, Ctrl-C's KeyboardInterrupt) passed through. `?` converts
/// any core error into it, so no function maps errors by hand.
enum Failure {
    Core(Error),
    Py(PyErr),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl From<tl::ConfigError> for Failure {
    fn from(e: tl::ConfigError) -> Self {
        Failure::Core(e.into())
    }
}

impl From<tl::TraceError> for Failure {
    fn from(e: tl::TraceError) -> Self {
        Failure::Core(e.into())
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Py(e)
    }
}

/// The one mapping from core errors to Python exceptions.
impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Core(Error::Config(e)) => {
                let key = (!e.path.is_empty()).then(|| e.path.clone());
                py_error("ConfigError", (e.to_string(), key))
            }
            Failure::Core(Error::Trace(e)) => {
                use tl::TraceError as T;
                match &e {
                    T::Io { path, source } if source.kind() == std::io::ErrorKind::NotFound => {
                        let file = Some(path.display().to_string());
                        py_error("TraceNotFoundError", (e.to_string(), file))
                    }
                    _ => py_error("TraceError", (e.to_string(), None)),
                }
            }
            Failure::Py(e) => e,
        }
    }
}

type Res<T> = Result<T, Failure>;

/// Requests between two progress reports of the trace tools and curves.
const EVERY: u64 = 1_000_000;

/// The one progress mechanism of every long call: the engine calls `tick`
/// with the requests done so far, from threads that do not hold the GIL;
/// every `every` requests it takes the GIL to check for Ctrl-C and call the
/// Python callback with (done, total). A raised exception stops the engine
/// (`tick` returns false) and is re-raised by `finish`.
struct Progress {
    cb: Option<Py<PyAny>>,
    total: Option<u64>,
    every: u64,
    next: u64,
    err: Option<PyErr>,
}

impl Progress {
    fn new(cb: Option<Bound<'_, PyAny>>, total: Option<u64>, every: u64) -> Self {
        let every = every.max(1);
        Progress {
            cb: cb.map(|c| c.unbind()),
            total,
            every,
            next: every,
            err: None,
        }
    }
    fn tick(&mut self, n: u64) -> bool {
        if n < self.next {
            return true;
        }
        self.next = n + self.every;
        self.report(n)
    }
    /// Reports `n` now (the last count of a call, whatever `every` is).
    fn report(&mut self, n: u64) -> bool {
        Python::with_gil(|py| {
            let r = py.check_signals().and_then(|_| match &self.cb {
                Some(cb) => cb.call1(py, (n, self.total)).map(|_| ()),
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
    fn finish<T, E: Into<Error>>(self, r: Result<T, E>) -> Res<T> {
        match (self.err, r) {
            (Some(e), _) => Err(e.into()),
            (None, r) => r.map_err(|e| Failure::Core(e.into())),
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
) -> Res<String> {
    let cfg = Config::from_json_str(config_json)?;
    // Progress from the start: the pre-passes (a footprint for a share,
    // Belady's next-access times) report their count and stop on Ctrl-C.
    let mut p = Progress::new(progress, None, chunk);
    let s = py.allow_threads(|| Runner::with_progress(&cfg, |n| p.tick(n)));
    let mut s = match (p.err.take(), s) {
        (Some(e), _) => return Err(e.into()),
        (None, s) => s?,
    };
    p.total = s.len_hint();
    let r = py.allow_threads(|| -> Result<(), Error> {
        loop {
            let done = s.step(chunk.max(1))?;
            // Every chunk is reported, the last (shorter) one included.
            if !p.report(s.processed()) || done {
                return Ok(());
            }
        }
    });
    p.finish(r)?;
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
/// `[workload]` (schema and ranges; of a trace file only the first bytes
/// are read, to recognise its format), or None.
#[pyfunction]
fn workload_error(config_json: &str) -> Option<(String, String)> {
    tl::workload_only_from_json(config_json)
        .err()
        .map(|e| (e.path, e.msg))
}

/// bound_message(s) -> str: a message that may echo a user's value, cut
/// to a readable length by the engine's one rule (every echoed word of more
/// than 100 characters clipped, the whole to 2,000).
#[pyfunction]
fn bound_message(s: &str) -> String {
    tl::bound_message(s)
}

/// trace_formats() -> list[str]: the values `format` may take.
#[pyfunction]
fn trace_formats() -> Vec<&'static str> {
    tl::FORMAT_NAMES.to_vec()
}

/// generators() -> list[str]: the benchmark generators
/// (`tierlab trace generate KIND`).
#[pyfunction]
fn generators() -> Vec<&'static str> {
    tl::BENCHMARKS.to_vec()
}

/// workload_types() -> list[str]: the values `[workload] type` may take.
#[pyfunction]
fn workload_types() -> Vec<&'static str> {
    tl::workload_types()
}

/// guess_format(path) -> str | None: the format a trace file is read as
/// when none is given (from its content, else its name); None when
/// neither tells (it is then read as oracleGeneral, checked as it goes).
#[pyfunction]
fn guess_format(path: std::path::PathBuf) -> Option<&'static str> {
    tl::guess_format(&path).map(|f| f.name())
}

/// human_bytes(n) -> str: a byte count as every output writes it ("4 KiB",
/// "1.50 GiB"): the engine's rule, so Python's tables and the engine's
/// messages agree.
#[pyfunction]
fn human_bytes(n: u64) -> String {
    tl::human_bytes(n)
}

/// capture_start_failure(format, log_path, status) -> str | None
///
/// Why the program `tierlab capture` ran under a tracer did not start
/// (None: it did), from its exit status and, for strace, the tracer's log.
#[pyfunction]
fn capture_start_failure(format: &str, log_path: &str, status: i32) -> Res<Option<String>> {
    let log = std::path::Path::new(log_path);
    Ok(tl::capture_start_failure(format, log, status)?)
}

/// cache_geometry(text, key) -> (size, ways, line)
///
/// Parses a cache level `SIZE,WAYS,LINE` (bytes) as `tierlab capture
/// memory --cache` takes it; a ConfigError naming `key` when it is not one.
#[pyfunction]
fn cache_geometry(text: &str, key: &str) -> Res<(u64, u32, u32)> {
    let g = tl::CacheGeometry::parse(text).map_err(|m| tl::ConfigError::at(key.to_string(), m))?;
    Ok((g.size, g.ways, g.line))
}

/// filter_lackey(log_path, out_path, caches, fifo=False, instructions=False, limit=None)
///     -> (accesses, requests, ended)
///
/// Reads a lackey log (a FIFO Valgrind writes, with `fifo`) through the
/// caches (SIZE, WAYS, LINE each, nearest the CPU first) and writes the
/// last level's misses to `out_path` as memtrace, up to `limit` requests.
#[pyfunction]
#[pyo3(signature = (log_path, out_path, caches, fifo=false, instructions=false, limit=None))]
fn filter_lackey(
    py: Python<'_>,
    log_path: std::path::PathBuf,
    out_path: std::path::PathBuf,
    caches: Vec<(u64, u32, u32)>,
    fifo: bool,
    instructions: bool,
    limit: Option<u64>,
) -> Res<(u64, u64, bool)> {
    let mut geoms = Vec::new();
    for (i, &(size, ways, line)) in caches.iter().enumerate() {
        let g = tl::CacheGeometry { size, ways, line };
        g.check()
            .map_err(|m| tl::ConfigError::at(format!("caches[{i}]"), m))?;
        geoms.push(g);
    }
    // Ticks count the log's accesses, so that Ctrl-C and SIGTERM reach the
    // caller while a program runs for minutes between two misses.
    let mut rep = Progress::new(None, None, EVERY);
    let r = py.allow_threads(|| {
        tl::filter_lackey(
            &log_path,
            fifo,
            &out_path,
            &geoms,
            instructions,
            limit,
            |n| rep.tick(n),
        )
    });
    let f = rep.finish(r)?;
    Ok((f.accesses, f.requests, f.ended))
}

/// techs(overrides_json=None) -> str
///
/// The technology catalog as a JSON list: the built-in one, or with a
/// config's `[techs]` table (JSON of name -> override) applied.
#[pyfunction]
#[pyo3(signature = (overrides_json=None))]
fn techs(overrides_json: Option<&str>) -> Res<String> {
    let c = catalog(overrides_json, None)?;
    let all: Vec<_> = c.all().collect();
    Ok(serde_json::to_string(&all).expect("the catalog serialises"))
}

/// The built-in catalog, or the entries of `entries_json` (a JSON list as
/// `techs()` gives), with `overrides_json` (a config's `[techs]`) applied.
fn catalog(overrides_json: Option<&str>, entries_json: Option<&str>) -> Res<Catalog> {
    let conf = |path: String, msg: String| tl::ConfigError::at(path, msg);
    let mut c = match entries_json {
        None => Catalog::builtin(),
        Some(j) => {
            let entries: Vec<Technology> = serde_json::from_str(j).map_err(|e| {
                conf(
                    "catalog".to_string(),
                    format!("{e}; expected entries as tierlab.techs() gives them"),
                )
            })?;
            for t in &entries {
                tl::validate_tech(t)
                    .map_err(|(f, e)| conf(format!("catalog.{}.{f}", t.name), e.to_string()))?;
            }
            Catalog::from_entries(entries)
        }
    };
    if let Some(j) = overrides_json {
        let o: std::collections::BTreeMap<String, TechOverride> =
            serde_json::from_str(j).map_err(|e| conf("techs".into(), e.to_string()))?;
        for (name, t) in &o {
            c.apply(name, t)
                .map_err(|(f, e)| conf(format!("techs.{name}.{f}"), e.to_string()))?;
        }
    }
    Ok(c)
}

/// tech(name, catalog_json=None) -> str
///
/// One catalog entry as JSON, its name matched in any letter case; from
/// `catalog_json` (a JSON list as `techs()` gives) when given.
#[pyfunction]
#[pyo3(signature = (name, catalog_json=None))]
fn tech(name: &str, catalog_json: Option<&str>) -> Res<String> {
    let c = catalog(None, catalog_json)?;
    // A message with no key path: the name is an argument, not a config key.
    let t = c
        .get(name)
        .map_err(|e| Failure::Py(config_error(e.to_string())))?;
    Ok(serde_json::to_string(t).expect("an entry serialises"))
}

/// access_ns(tech_json, size, op="read", slowdown=1.0, overhead_ns=0.0) -> float
///
/// The engine's cost of one access of `size` bytes to the medium
/// `tech_json` (an entry as `techs()` gives it), by the engine's own cost
/// function.
#[pyfunction]
#[pyo3(signature = (tech_json, size, op="read", slowdown=1.0, overhead_ns=0.0))]
fn access_ns(tech_json: &str, size: u32, op: &str, slowdown: f64, overhead_ns: f64) -> Res<f64> {
    use tl::ConfigError as E;
    let t: Technology = serde_json::from_str(tech_json).map_err(|e| {
        E::at(
            "tech",
            format!("{e}; expected an entry as tierlab.techs() gives it"),
        )
    })?;
    tl::validate_tech(&t).map_err(|(f, e)| E::at(format!("tech.{f}"), e.to_string()))?;
    let write = match op {
        "read" => false,
        "write" => true,
        _ => return Err(E::at("op", format!("{op:?}; expected read or write")).into()),
    };
    if !(slowdown.is_finite() && slowdown > 0.0) {
        let msg = format!("{slowdown} is out of range: must be a positive number");
        return Err(E::at("slowdown", msg).into());
    }
    if !(overhead_ns.is_finite() && overhead_ns >= 0.0) {
        let msg = format!("{overhead_ns} is out of range: must be a number of ns >= 0");
        return Err(E::at("overhead_ns", msg).into());
    }
    Ok(AccessCost::new(&t, slowdown, overhead_ns).access(size, write))
}

/// parse_size(text) -> tuple[str, float]
///
/// A size as configs write it: ("bytes", n) for "64MiB", "4KB", "512", or
/// ("percent", p) for a share of the footprint "10%"; a ConfigError naming
/// the accepted forms otherwise.
#[pyfunction]
fn parse_size(text: &str) -> Res<(&'static str, f64)> {
    use tl::Size;
    match tl::parse_size(text) {
        Ok(Size::Absolute(n)) => Ok(("bytes", n as f64)),
        Ok(Size::Percent(p)) => Ok(("percent", p)),
        // No key path: the caller knows where the text came from.
        Err(msg) => Err(Failure::Py(config_error(msg))),
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
) -> Res<String> {
    let source = workload_source(config_json)?;
    let mut rep = Progress::new(progress, None, EVERY);
    let r = py.allow_threads(|| tl::trace_stats(&source, |n| rep.tick(n)));
    let st = rep.finish(r)?;
    Ok(serde_json::to_string(&st).expect("stats serialise"))
}

/// trace_convert(config_json, out_path, csv=False, progress=None, memtrace=False) -> str
///
/// Writes the config's workload as an oracleGeneral file, or with `csv` as
/// CSV `time,key,size,op` with a header (operations kept), or with
/// `memtrace` as tierlab's binary memory trace (by byte address); returns
/// its stats as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, out_path, csv=false, progress=None, memtrace=false))]
fn trace_convert(
    py: Python<'_>,
    config_json: &str,
    out_path: std::path::PathBuf,
    csv: bool,
    progress: Option<Bound<'_, PyAny>>,
    memtrace: bool,
) -> Res<String> {
    let source = workload_source(config_json)?;
    let mut rep = Progress::new(progress, None, EVERY);
    if memtrace {
        let r = py.allow_threads(|| {
            tl::write_memtrace(&source, &out_path, |n| rep.tick(n))?;
            let written = tl::Source::Memtrace(out_path.clone());
            tl::trace_stats(&written, |_| true).map_err(Error::from)
        });
        let st = rep.finish(r)?;
        return Ok(serde_json::to_string(&st).expect("stats serialise"));
    }
    let r = py.allow_threads(|| {
        let tick = |n| rep.tick(n);
        if csv {
            tl::write_csv(&source, &out_path, tick)
        } else {
            tl::convert_to_oracle(&source, &out_path, tick)
        }
    });
    let st = rep.finish(r)?;
    Ok(serde_json::to_string(&st).expect("stats serialise"))
}

/// The workload of a config that may have no tiers (trace tools need none).
fn workload_source(config_json: &str) -> Res<tl::Source> {
    let w = tl::workload_only_from_json(config_json)?;
    Ok(w.source()?)
}

/// The JSON text of an optional argument, parsed.
fn json_arg(name: &str, text: Option<&str>) -> Res<Option<serde_json::Value>> {
    text.map(|t| {
        serde_json::from_str(t).map_err(|e| tl::ConfigError::at(name, e.to_string()).into())
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
) -> Res<tl::Ask> {
    Ok(tl::Ask {
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
) -> Res<String> {
    let ask = mrc_ask(sizes, shards_rate, shards_size, policy_json, hierarchy_json)?;
    let m = ask.method()?;
    Ok(m.label())
}

/// `mrc`'s answer as Python gets it (below).
type MrcTuple = (
    Vec<u64>,
    Vec<f64>,
    u64,
    String,
    Option<Vec<String>>,
    Option<String>,
);

/// mrc(config_json, sizes=None, shards_rate=None, shards_size=None,
///     policy_json=None, hierarchy_json=None, progress=None)
///     -> (list[int], list[float], int, str, list[str] | None, str | None)
///
/// A miss-ratio curve of the config's workload as (sizes, miss ratios, the
/// largest object in the stack: 0 for a simulated curve, the method's
/// label, and with sizes given each point's size as given: sizes that
/// resolve alike make one point, labelled by the first given; and the note
/// saying which sizes a SHARDS sample was too small for, left out). The core chooses the method (its `Ask`): exact
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
) -> Res<MrcTuple> {
    let ask = mrc_ask(sizes, shards_rate, shards_size, policy_json, hierarchy_json)?;
    let mut rep = Progress::new(progress, None, EVERY);
    let r = py.allow_threads(|| tl::curve(config_json, &ask, |n| rep.tick(n)));
    let (m, method) = rep.finish(r)?;
    let note = m.left_out.map(|l| l.note);
    Ok((
        m.sizes,
        m.miss_ratios,
        m.largest,
        method.label(),
        m.labels,
        note,
    ))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", tl::VERSION)?;
    m.add("STRACE_SYSCALLS", tl::STRACE_SYSCALLS)?;
    // The exceptions live in tierlab.errors (pure Python, importing nothing
    // of the engine); _core's names stay for code that caught them here.
    let errors = m.py().import("tierlab.errors")?;
    for name in ["TierlabError", "ConfigError", "TraceError"] {
        m.add(name, errors.getattr(name)?)?;
    }
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(techs, m)?)?;
    m.add_function(wrap_pyfunction!(tech, m)?)?;
    m.add_function(wrap_pyfunction!(access_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats, m)?)?;
    m.add_function(wrap_pyfunction!(bound_message, m)?)?;
    m.add_function(wrap_pyfunction!(generators, m)?)?;
    m.add_function(wrap_pyfunction!(workload_types, m)?)?;
    m.add_function(wrap_pyfunction!(guess_format, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema_error, m)?)?;
    m.add_function(wrap_pyfunction!(workload_error, m)?)?;
    m.add_function(wrap_pyfunction!(capture_start_failure, m)?)?;
    m.add_function(wrap_pyfunction!(cache_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(filter_lackey, m)?)?;
    m.add_function(wrap_pyfunction!(human_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(mrc, m)?)?;
    m.add_function(wrap_pyfunction!(mrc_method, m)?)?;
    m.add("CSV_HEADER", tl::CSV_HEADER)?;
    Ok(())
}
