//! Random configs, written as TOML text the way a user writes them, never
//! panic: each ends in a result whose counters add up, or in one error line
//! that names a key path. 1-4 tiers of catalog media, every policy and
//! admission rule with random parameter values (sensible, absurd, NaN),
//! both fills, write modes, flush intervals, tiny capacities (smaller than
//! one object included), small generated workloads and CSV traces with
//! reads, writes and deletes of mixed sizes.
//!
//! Policy and admission names come from their registries, and each one's
//! parameter names from its own "unknown field" message: a new policy or
//! rule is fuzzed, with its parameters, without editing this file.

use proptest::prelude::*;
use proptest::test_runner::{
    Config as RunnerConfig, RngAlgorithm, TestCaseError, TestRng, TestRunner,
};
use std::fmt::Write as _;
use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tierlab_core::admission::AdmissionSpec;
use tierlab_core::config::Config;
use tierlab_core::policy::PolicySpec;
use tierlab_core::prelude::Runner;
use tierlab_core::spec::{Named, Params};
use tierlab_core::stats::RunResult;

/// A registry entry and the parameters it takes.
#[derive(Clone, Debug)]
struct Entry {
    name: &'static str,
    params: Vec<String>,
    /// The parameters without a default: always given.
    required: Vec<String>,
}

/// The parameters `name` takes, read from the message its registry gives
/// for a parameter it does not take (serde's "unknown field `x`, expected
/// one of `a`, `b`" / "expected `a`" / "there are no fields").
fn params_of<T: Named>(name: &str) -> Vec<String> {
    let mut probe = Params::new();
    probe.insert("fuzz_probe".into(), serde_json::Value::from(0));
    let Err(msg) = T::from_parts(name, probe) else {
        panic!("{} {name:?} accepts a parameter it does not have", T::WHAT);
    };
    let expected = msg.split_once("expected").map_or("", |(_, e)| e);
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The parameters `name` cannot do without, read from its "missing field
/// `x`" messages, one at a time.
fn required_of<T: Named>(name: &str) -> Vec<String> {
    let mut given = Params::new();
    for _ in 0..16 {
        let Err(msg) = T::from_parts(name, given.clone()) else {
            break;
        };
        let Some(field) = msg
            .strip_prefix("missing field `")
            .and_then(|m| m.split('`').next())
        else {
            break;
        };
        given.insert(field.to_string(), serde_json::Value::from(1));
    }
    given.keys().cloned().collect()
}

fn registry<T: Named>() -> Vec<Entry> {
    T::names()
        .iter()
        .map(|&name| Entry {
            name,
            params: params_of::<T>(name),
            required: required_of::<T>(name),
        })
        .collect()
}

/// A TOML value for a parameter: mostly of the kind parameters take, in
/// range or near it; sometimes absurd (a wrong type, negative, NaN).
fn value() -> impl Strategy<Value = String> {
    let ints = vec![1i64, 2, 3, 4, 7, 16, 100, 1000, 65536];
    let fractions = vec!["0.01", "0.1", "0.5", "0.9", "0.99", "1.0"];
    let wild = vec![
        "0",
        "-1",
        "18446744073709551615",
        "1.5",
        "-0.5",
        "1e300",
        "nan",
        "inf",
        "\"4KiB\"",
        "\"10%\"",
        "\"1ms\"",
        "\"x\"",
        "\"\"",
        "true",
        "[1]",
        "{}",
    ];
    prop_oneof![
        4 => prop::sample::select(ints).prop_map(|v| v.to_string()),
        3 => prop::sample::select(fractions).prop_map(str::to_string),
        1 => prop::sample::select(wild).prop_map(str::to_string),
    ]
}

/// `name` or `{ type = "name", p = v, ... }` with some of its parameters.
fn spec(entries: Vec<Entry>) -> impl Strategy<Value = String> {
    prop::sample::select(entries).prop_flat_map(|e| {
        let n = e.params.len();
        (
            Just(e),
            prop::sample::select(vec![true, false, false]),
            prop::collection::vec(prop::option::weighted(0.3, value()), n),
            prop::collection::vec(value(), n),
        )
            .prop_map(|(e, plain, optional, given)| {
                // A rule with required parameters is sometimes named alone
                // too: its "missing field" error is fuzzed as well.
                if plain && (e.required.is_empty() || optional.iter().all(|v| v.is_some())) {
                    return format!("{:?}", e.name);
                }
                let mut s = format!("{{ type = {:?}", e.name);
                for ((p, opt), v) in e.params.iter().zip(optional).zip(given) {
                    let v = if e.required.contains(p) { Some(v) } else { opt };
                    if let Some(v) = v {
                        write!(s, ", {p} = {v}").unwrap();
                    }
                }
                s + " }"
            })
    })
}

fn duration() -> impl Strategy<Value = String> {
    let valid = vec![
        "1",
        "100",
        "\"1ns\"",
        "\"1us\"",
        "\"50us\"",
        "\"1ms\"",
        "\"1s\"",
        "\"1e-9s\"",
    ];
    prop_oneof![
        6 => prop::sample::select(valid),
        1 => prop::sample::select(vec!["0", "-5", "\"1 fortnight\"", "nan"]),
    ]
    .prop_map(str::to_string)
}

/// Bytes (or objects with `unit_size`), down to less than one object.
fn capacity() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => (0u64..=8).prop_map(|v| v.to_string()),
        3 => (1u64..=200_000).prop_map(|v| v.to_string()),
        3 => prop::sample::select(vec![
            "\"100B\"",
            "\"4KiB\"",
            "\"64KiB\"",
            "\"1MiB\"",
            "\"0.01%\"",
            "\"1%\"",
            "\"10%\"",
            "\"50%\"",
            "\"100%\"",
        ])
        .prop_map(str::to_string),
        1 => prop::sample::select(vec!["\"250%\"", "\"0%\"", "-1", "\"1 bushel\""]).prop_map(str::to_string),
    ]
}

#[derive(Clone, Debug)]
struct Tier {
    tech: String,
    capacity: String,
    policy: String,
    admission: Option<String>,
    write: Option<&'static str>,
    flush: Option<String>,
    slowdown: Option<&'static str>,
    overhead: Option<String>,
}

fn tier(techs: Vec<String>) -> impl Strategy<Value = Tier> {
    (
        prop::sample::select(techs),
        capacity(),
        spec(registry::<PolicySpec>()),
        prop::option::of(spec(registry::<AdmissionSpec>())),
        prop::option::of(prop::sample::select(vec!["write-back", "write-through"])),
        prop::option::weighted(0.2, duration()),
        prop::option::weighted(0.2, prop::sample::select(vec!["1.0", "0.5", "8", "2.5"])),
        prop::option::weighted(0.2, duration()),
    )
        .prop_map(
            |(tech, capacity, policy, admission, write, flush, slowdown, overhead)| Tier {
                tech,
                capacity,
                policy,
                admission,
                write,
                flush,
                slowdown,
                overhead,
            },
        )
}

/// A request of a CSV trace: key, size, operation.
type Row = (u64, u32, &'static str);

#[derive(Clone, Debug)]
enum Workload {
    Generator {
        kind: &'static str,
        objects: u64,
        requests: u64,
        object_size: &'static str,
        write_ratio: f64,
        alpha: f64,
    },
    Csv(Vec<Row>),
}

fn workload() -> impl Strategy<Value = Workload> {
    let row = (
        0u64..300,
        prop_oneof![Just(0u32), 1u32..10_000, Just(4096), Just(1 << 20)],
        prop::sample::select(vec!["read", "read", "write", "delete"]),
    );
    prop_oneof![
        (
            prop::sample::select(vec!["zipf", "uniform", "scan", "loop"]),
            1u64..500,
            1u64..3000,
            prop::sample::select(vec!["1", "512", "4KiB", "100000", "1MiB"]),
            prop::sample::select(vec![0.0, 0.3, 1.0]),
            prop::sample::select(vec![0.0, 0.8, 1.2]),
        )
            .prop_map(
                |(kind, objects, requests, object_size, write_ratio, alpha)| {
                    Workload::Generator {
                        kind,
                        objects,
                        requests,
                        object_size,
                        write_ratio,
                        alpha,
                    }
                }
            ),
        prop::collection::vec(row, 1..3000).prop_map(Workload::Csv),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    workload: Workload,
    unit_size: bool,
    fill: Option<&'static str>,
    write: Option<&'static str>,
    flush: Option<String>,
    tiers: Vec<Tier>,
    backing: String,
    interval: Option<u64>,
    compute: Option<String>,
    max_requests: Option<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    let techs: Vec<String> = tierlab_core::tech::builtin()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    (
        workload(),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["exclusive", "inclusive"])),
        prop::option::of(prop::sample::select(vec!["write-back", "write-through"])),
        prop::option::weighted(0.3, duration()),
        prop::collection::vec(tier(techs.clone()), 1..=4),
        prop::sample::select(techs),
        prop::option::weighted(0.3, prop_oneof![1 => Just(0u64), 9 => 1u64..5000]),
        prop::option::weighted(0.2, duration()),
        prop::option::weighted(0.2, 0u64..3000),
    )
        .prop_map(
            |(
                workload,
                unit_size,
                fill,
                write,
                flush,
                tiers,
                backing,
                interval,
                compute,
                max_requests,
            )| Case {
                workload,
                unit_size,
                fill,
                write,
                flush,
                tiers,
                backing,
                interval,
                compute,
                max_requests,
            },
        )
}

/// The config's TOML text; a CSV workload is written to `trace`.
fn toml_text(c: &Case, trace: &std::path::Path) -> String {
    let mut s = String::from("[workload]\n");
    match &c.workload {
        Workload::Generator {
            kind,
            objects,
            requests,
            object_size,
            write_ratio,
            alpha,
        } => {
            writeln!(s, "type = {kind:?}\nrequests = {requests}").unwrap();
            writeln!(
                s,
                "object_size = {object_size:?}\nwrite_ratio = {write_ratio:?}"
            )
            .unwrap();
            if *kind != "scan" {
                writeln!(s, "objects = {objects}").unwrap();
            }
            if *kind == "zipf" {
                writeln!(s, "alpha = {alpha:?}").unwrap();
            }
        }
        Workload::Csv(rows) => {
            let mut f = std::fs::File::create(trace).unwrap();
            let mut text = String::new();
            for (i, (key, size, op)) in rows.iter().enumerate() {
                writeln!(text, "{i},{key},{size},{op}").unwrap();
            }
            f.write_all(text.as_bytes()).unwrap();
            writeln!(
                s,
                "type = \"trace\"\nformat = \"csv\"\npath = '{}'",
                trace.display()
            )
            .unwrap();
            writeln!(s, "csv = {{ op = 4 }}").unwrap();
        }
    }
    writeln!(s, "unit_size = {}", c.unit_size).unwrap();
    s += "\n[hierarchy]\n";
    if let Some(f) = c.fill {
        writeln!(s, "fill = {f:?}").unwrap();
    }
    if let Some(w) = c.write {
        writeln!(s, "write = {w:?}").unwrap();
    }
    if let Some(d) = &c.flush {
        writeln!(s, "flush_interval = {d}").unwrap();
    }
    for (i, t) in c.tiers.iter().enumerate() {
        writeln!(s, "\n[[tier]]\nname = \"t{i}\"\ntech = {:?}", t.tech).unwrap();
        writeln!(s, "capacity = {}\npolicy = {}", t.capacity, t.policy).unwrap();
        if let Some(a) = &t.admission {
            writeln!(s, "admission = {a}").unwrap();
        }
        if let Some(w) = t.write {
            writeln!(s, "write = {w:?}").unwrap();
        }
        if let Some(d) = &t.flush {
            writeln!(s, "flush_interval = {d}").unwrap();
        }
        if let Some(k) = t.slowdown {
            writeln!(s, "slowdown = {k}").unwrap();
        }
        if let Some(d) = &t.overhead {
            writeln!(s, "overhead = {d}").unwrap();
        }
    }
    writeln!(s, "\n[backing]\ntech = {:?}\n\n[run]", c.backing).unwrap();
    if let Some(n) = c.interval {
        writeln!(s, "interval = {n}").unwrap();
    }
    if let Some(d) = &c.compute {
        writeln!(s, "compute = {d}").unwrap();
    }
    if let Some(n) = c.max_requests {
        writeln!(s, "max_requests = {n}").unwrap();
    }
    s
}

/// What every result must satisfy, whatever the config.
fn check_result(r: &RunResult, c: &Case) -> Result<(), String> {
    let ok = |cond: bool, what: &str| if cond { Ok(()) } else { Err(what.to_string()) };
    let lookups = r.reads + r.writes;
    ok(
        r.requests == lookups + r.deletes,
        "requests = reads + writes + deletes",
    )?;
    ok(
        r.hits + r.misses == lookups,
        "hits + misses = reads + writes",
    )?;
    if let Some(max) = c.max_requests.filter(|&m| m > 0) {
        ok(r.requests <= max, "requests <= run.max_requests")?;
    }
    let mut above = lookups; // lookups reaching the next tier down
    let mut hits = 0;
    for t in &r.tiers {
        let k = &t.counters;
        ok(
            k.hits + k.misses == above,
            &format!("{}: hits + misses = misses of the tier above", t.name),
        )?;
        ok(
            t.used <= t.capacity,
            &format!("{}: used <= capacity", t.name),
        )?;
        ok(
            (0.0..=1.0).contains(&t.miss_ratio),
            &format!("{}: miss ratio in [0, 1]", t.name),
        )?;
        above = k.misses;
        hits += k.hits;
    }
    ok(
        above == r.misses,
        "the last tier's misses are the run's misses",
    )?;
    ok(hits == r.hits, "the tiers' hits add up to the run's")?;
    let first = &r.tiers[0].counters;
    ok(
        first.hit_bytes + first.miss_bytes == r.bytes_requested,
        "the first tier sees every byte requested",
    )?;
    ok((0.0..=1.0).contains(&r.miss_ratio), "miss ratio in [0, 1]")?;
    ok(
        (0.0..=1.0).contains(&r.byte_miss_ratio),
        "byte miss ratio in [0, 1]",
    )?;
    for (what, x) in [
        ("amat_ns", r.amat_ns),
        ("total_time_ns", r.total_time_ns),
        ("throughput_rps", r.throughput_rps),
    ] {
        ok(
            x.is_finite() && x >= 0.0,
            &format!("{what} is {x}: finite and >= 0"),
        )?;
    }
    ok(
        r.timeline.lookups.iter().sum::<u64>() == lookups,
        "the timeline's lookups add up to the run's",
    )
}

/// Parses and runs one case: `Ok(message)` for a config refused with one
/// error line, `Ok("")` for a result that adds up, `Err` for anything else.
fn outcome(c: &Case, text: &str) -> Result<String, String> {
    let config_error = |e: tierlab_core::spec::ConfigError| {
        if e.path.is_empty() || e.msg.is_empty() {
            return Err(format!(
                "a config error without a key path or a message: {e:?}"
            ));
        }
        Ok(e.to_string())
    };
    let cfg = match Config::from_toml_str(text) {
        Ok(cfg) => cfg,
        Err(e) => return config_error(e),
    };
    match Runner::run(&cfg) {
        Ok(r) => check_result(&r, c)
            .map(|()| String::new())
            .map_err(|what| format!("{what}\n{r:#?}")),
        Err(tierlab_core::Error::Config(e)) => config_error(e),
        Err(e) => Ok(e.to_string()),
    }
}

fn run_case(c: &Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let text = toml_text(c, &dir.path().join("t.csv"));
    let msg = match catch_unwind(AssertUnwindSafe(|| outcome(c, &text))) {
        Ok(Ok(msg)) => msg,
        Ok(Err(e)) => return Err(TestCaseError::fail(format!("{e}\nconfig:\n{text}"))),
        Err(_) => return Err(TestCaseError::fail(format!("panicked on config:\n{text}"))),
    };
    prop_assert!(
        !msg.contains('\n'),
        "an error of more than one line: {msg:?}\nconfig:\n{text}"
    );
    Ok(())
}

#[test]
fn random_configs_end_in_a_result_or_one_error_line() {
    // The same cases on every run (CI must not flake); PROPTEST_CASES
    // explores further from the same start.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(600);
    let config = RunnerConfig {
        cases,
        failure_persistence: None,
        ..RunnerConfig::default()
    };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(config, rng);
    runner.run(&case(), |c| run_case(&c)).unwrap();
}

#[test]
fn every_registry_entry_is_fuzzed_with_its_parameters() {
    // A rule whose parameters could not be read would be fuzzed with its
    // defaults only: the probe must find the parameters the docs name.
    let clock = registry::<PolicySpec>()
        .into_iter()
        .find(|e| e.name == "clock");
    assert!(clock.is_some_and(|e| !e.params.is_empty()));
    let admission = registry::<AdmissionSpec>();
    let p = admission
        .iter()
        .find(|e| e.name == "probabilistic")
        .unwrap();
    assert!(p.params == ["p"] && p.required == ["p"], "{p:?}");
    let second_hit = admission.iter().find(|e| e.name == "second-hit").unwrap();
    assert!(second_hit.required.is_empty() && second_hit.params == ["window"]);
}

/// Found by the fuzzer: a TOML value the parser cannot hold
/// (`bits = 18446744073709551615`) gave the toml crate's five-line message
/// with a source excerpt and a caret.
#[test]
fn a_toml_syntax_error_is_one_line_with_its_place() {
    let text = "[workload]\ntype = \"zipf\"\nbits = 18446744073709551615\n";
    let e = Config::from_toml_str(text).unwrap_err().to_string();
    assert_eq!(
        e,
        "config: line 3, column 8: number too large to fit in target type"
    );
    let e = Config::from_toml_str("[workload\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("config: line 1, column ") && !e.contains('\n'),
        "{e}"
    );
}

/// A longer search that lists every failing case instead of stopping (and
/// shrinking) at the first: `PROPTEST_CASES=20000 cargo test --release -p
/// tierlab-core --test config_fuzz -- --ignored`.
#[test]
#[ignore = "minutes long; run by hand after changing the engine"]
fn explore_many_configs() {
    use proptest::strategy::ValueTree;
    let cases: u32 = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5000);
    let mut runner = TestRunner::new_with_rng(
        RunnerConfig::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let strategy = case();
    let mut failures = Vec::new();
    // What the cases ended in: a result, or the errors by key path (a fuzzer
    // whose cases all fail on one key explores nothing past it).
    let mut ends = std::collections::BTreeMap::<String, u32>::new();
    for _ in 0..cases {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        let text = toml_text(&c, &std::env::temp_dir().join("config_fuzz_explore.csv"));
        let end = match catch_unwind(AssertUnwindSafe(|| outcome(&c, &text))) {
            Ok(Ok(m)) if m.is_empty() => "result".to_string(),
            Ok(Ok(m)) => {
                if std::env::var_os("FUZZ_VERBOSE").is_some() {
                    eprintln!("{m}");
                }
                m.split(':').next().unwrap_or("").to_string()
            }
            _ => "failure".to_string(),
        };
        *ends.entry(end).or_default() += 1;
        if let Err(e) = run_case(&c) {
            eprintln!("{e}\n");
            failures.push(e);
        }
    }
    eprintln!("{ends:#?}");
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed",
        failures.len()
    );
}
