"""Experiments, sweeps on Dask and the SQLite results store.

Sweeps here run in the test's process on Dask's threaded scheduler (the
default for a few points), on real local Dask clusters (more points, or
``in_process=False``), and on an existing one started with the
``dask scheduler`` / ``dask worker`` commands. The resume test kills a
running sweep with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import tierlab
from conftest import Ran, interruptible, tierlab_argv
from test_bad_input import assert_bad
from tierlab.config import parse_path
from tierlab.experiment import load_experiment
from tierlab.store import load_experiment_meta, load_timelines

BASE = """\
[base.workload]
type = "zipf"
alpha = 0.9
objects = 2000
requests = 20000
object_size = "4KiB"
write_ratio = 0.1

[[base.tier]]
name = "esdc"
tech = "FILE-MEMORY"
capacity = "10%"
policy = "lru"

[base.backing]
tech = "HDD"

[base.run]
interval = 5000
"""


def experiment(name: str, axes: str, extra: str = "") -> str:
    return f'[experiment]\nname = "{name}"\n{extra}\n{BASE}\n{axes}'


SLOWDOWN_BY_CAPACITY = """\
[[axis]]
key = "tier[0].slowdown"
values = [1, 3]

[[axis]]
key = "tier[0].capacity"
range = { from = "5%", to = "15%", step = "5%" }
"""


# --------------------------------------------------------------------------
# expansion
# --------------------------------------------------------------------------


def test_points_are_the_product_of_axes_times_repetitions() -> None:
    e = load_experiment(experiment("grid", SLOWDOWN_BY_CAPACITY, "repetitions = 2\nseed = 7"))
    assert len(e.points) == 2 * 3 * 2
    got = [
        (p.labels["tier[0].slowdown"], p.labels["tier[0].capacity"], p.rep, p.seed)
        for p in e.points
    ]
    assert got[:4] == [(1, "5%", 0, 7), (1, "5%", 1, 8), (1, "10%", 0, 7), (1, "10%", 1, 8)]
    assert got[-1] == (3, "15%", 1, 8)
    assert [p.index for p in e.points] == list(range(12))
    p = e.points[-1]
    assert p.config["tier"][0]["slowdown"] == 3
    assert p.config["tier"][0]["capacity"] == "15%"
    assert p.config["workload"]["seed"] == 8
    # every point is a different config, so a different hash
    assert len({p.hash for p in e.points}) == 12


def test_hash_depends_on_the_config_only() -> None:
    a = load_experiment(experiment("a", SLOWDOWN_BY_CAPACITY))
    b = load_experiment(experiment("b", SLOWDOWN_BY_CAPACITY, 'description = "other"'))
    assert [p.hash for p in a.points] == [p.hash for p in b.points]
    c = load_experiment(
        experiment("a", SLOWDOWN_BY_CAPACITY), overrides={"workload.requests": 30000}
    )
    assert not {p.hash for p in a.points} & {p.hash for p in c.points}
    assert all(p.config["workload"]["requests"] == 30000 for p in c.points)


@pytest.mark.parametrize(
    ("rng", "values"),
    [
        ("{ from = 1, to = 5, step = 2 }", [1, 3, 5]),
        ("{ from = 0.1, to = 0.3, step = 0.1 }", [0.1, 0.2, 0.3]),
        ("{ from = 0.5, to = 1.0, num = 3 }", [0.5, 0.75, 1]),
        ('{ from = "1MiB", to = "3MiB", num = 3 }', [1 << 20, 2 << 20, 3 << 20]),
        (
            '{ from = "64KiB", to = "1MiB", num = 5, scale = "log" }',
            [65536, 131072, 262144, 524288, 1048576],
        ),
        ('{ from = "10%", to = "40%", num = 4 }', ["10%", "20%", "30%", "40%"]),
        # Sizes as the engine parses them (_core.parse_size): decimal units,
        # fractions and exponents.
        ('{ from = "4KB", to = "12KB", step = "4KB" }', [4000, 8000, 12000]),
        ('{ from = "0.5KiB", to = "1.5 KiB", step = "512" }', [512, 1024, 1536]),
        ('{ from = "1e3", to = "2e3", num = 2 }', [1000, 2000]),
    ],
)
def test_ranges(rng: str, values: list[object]) -> None:
    # Each range on a key that takes its kind of value: every point's config
    # is checked against the schema when the experiment loads.
    sizes = '"' in rng
    key = "tier[0].capacity" if sizes else "workload.alpha"
    e = load_experiment(experiment("r", f'[[axis]]\nkey = "{key}"\nrange = {rng}\n'))
    assert [p.labels[key] for p in e.points] == values


def test_table_values_take_labels() -> None:
    axis = """\
[[axis]]
key = "tier[0].admission"
values = [{ type = "always" }, { type = "second-hit", window = 1000 }]
labels = ["lru", "2nd-hit"]
"""
    e = load_experiment(experiment("t", axis))
    assert [p.labels["tier[0].admission"] for p in e.points] == ["lru", "2nd-hit"]
    assert e.points[1].config["tier"][0]["admission"] == {"type": "second-hit", "window": 1000}


def test_parse_path() -> None:
    assert parse_path("tier[1].policy.type") == ["tier", 1, "policy", "type"]
    assert parse_path("techs.MY-TECH.read_ns") == ["techs", "MY-TECH", "read_ns"]


# --------------------------------------------------------------------------
# sweeps
# --------------------------------------------------------------------------


def test_sweep_runs_every_point_and_matches_simulate(tmp_path: Path) -> None:
    text = experiment("grid", SLOWDOWN_BY_CAPACITY, "timeline = true")
    store = tmp_path / "grid.sqlite"
    r = tierlab.sweep(text, store=store, workers=2)
    assert (r.total, r.done, r.skipped, r.failed) == (6, 6, 0, 0)
    df = tierlab.load(store)
    assert len(df) == 6
    assert list(df["point"]) == list(range(6))
    assert set(df["status"]) == {"ok"}
    assert {"tier.0.slowdown", "tier.0.capacity", "miss_ratio", "tiers.0.hits"} <= set(df)
    # a point's figures are exactly those of the same config run directly
    p = load_experiment(text).points[3]
    direct = tierlab.simulate(p.config).summary
    row = df[df["hash"] == p.hash].iloc[0]
    assert row["miss_ratio"] == direct["miss_ratio"]
    assert row["tiers.0.hits"] == direct["tiers"][0]["hits"]
    assert row["throughput_rps"] == direct["throughput_rps"]
    assert row["version"] == tierlab.__version__
    # timelines were kept: 20,000 requests every 5,000
    t = load_timelines(store)
    assert len(t) == 6 * 4
    assert list(t.columns[:5]) == [
        "experiment",
        "hash",
        "rep",
        "tier.0.slowdown",
        "tier.0.capacity",
    ]
    meta = load_experiment_meta(store)
    assert meta["name"] == "grid" and meta["points"] == 6
    assert [a["key"] for a in meta["axes"]] == ["tier[0].slowdown", "tier[0].capacity"]
    # run again: nothing to do
    r2 = tierlab.sweep(text, store=store, workers=1)
    assert (r2.done, r2.skipped) == (0, 6)


def test_failed_points_are_recorded_and_the_sweep_goes_on(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    axis = '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["10%", 0, "20%"]\n'
    exp = tmp_path / "e.toml"
    exp.write_text(experiment("withbad", axis, 'metrics = ["miss_ratio"]'))
    r = tierlab_cmd("sweep", exp, "--workers", "1", cwd=tmp_path)
    assert r.code == 0, r.err
    assert "3 points: 2 run, 0 already in the store, 1 failed" in r.out
    assert "failed: tier[0].capacity=0, rep=0: tier[0].capacity: must be greater than zero" in (
        r.err
    )
    df = tierlab.load(tmp_path / "withbad.sqlite")
    assert list(df["status"]) == ["ok", "error", "ok"]
    assert df["error"][1] == "tier[0].capacity: must be greater than zero"
    assert list(df.columns).count("miss_ratio") == 1
    # only the kept metric, no others
    assert "throughput_rps" not in df
    # a failed point is tried again next time, the finished ones are not
    r = tierlab_cmd("sweep", exp, "--workers", "1", cwd=tmp_path)
    assert "3 points: 0 run, 2 already in the store, 1 failed" in r.out


@pytest.mark.parametrize(
    ("axis", "needle"),
    [
        ('key = "tier[0].nope"\nvalues = [1]', "axis[0].key: tier[0].nope: unknown field `nope`"),
        ('key = "tier[0].policy"\nvalues = ["lru", "nope"]', "axis[0].values: tier[0].policy"),
        ('key = "workload.alpha"\nvalues = [1.0, "x"]', "axis[0].values: workload.alpha = 'x'"),
        (
            'key = "tier[0].admission"\nvalues = [{ type = "second-hit", nope = 1 }]',
            "axis[0].values: tier[0].admission",
        ),
    ],
    ids=["unknown key", "unknown policy", "wrong type", "unknown field in a value"],
)
def test_schema_errors_stop_the_sweep_before_it_runs(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], axis: str, needle: str
) -> None:
    """Regression: an axis key the config does not have (or a policy name no
    engine knows) failed every point one by one, exit 0. The schema is now
    checked for every point when the experiment loads; values out of range
    still fail their point alone (test above)."""
    exp = tmp_path / "e.toml"
    exp.write_text(experiment("schema", f"[[axis]]\n{axis}\n"))
    for dry in ([], ["--dry-run"]):
        assert_bad(tierlab_cmd("sweep", exp, "--workers", "1", *dry, cwd=tmp_path), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.toml"]


def test_unknown_key_in_the_base_config_stops_the_sweep(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    exp = tmp_path / "e.toml"
    text = experiment("base", SLOWDOWN_BY_CAPACITY).replace(
        "[[base.tier]]\n", "[[base.tier]]\nrepetitions = 2\n", 1
    )
    assert "repetitions = 2" in text
    exp.write_text(text)
    assert_bad(tierlab_cmd("sweep", exp, cwd=tmp_path), "base.tier[0].repetitions: unknown field")


def test_dry_run_counts_and_writes_nothing(tmp_path: Path, tierlab_cmd: Callable[..., Ran]) -> None:
    exp = tmp_path / "e.toml"
    exp.write_text(experiment("dry", SLOWDOWN_BY_CAPACITY, "repetitions = 2"))
    r = tierlab_cmd("sweep", exp, "--dry-run", cwd=tmp_path)
    assert r.code == 0, r.err
    assert r.out.splitlines() == [
        "tier[0].slowdown: 2 values: 1, 3",
        "tier[0].capacity: 3 values: 5%, 10%, 15%",
        "repetitions: 2",
        "dry: 12 points: 0 already in dry.sqlite, 12 to run",
    ]
    assert not (tmp_path / "dry.sqlite").exists()
    tierlab.sweep(
        exp, store=tmp_path / "dry.sqlite", workers=1, overrides={"workload.requests": 1000}
    )
    # other requests: other points; the same ones: all in the store
    r = tierlab_cmd("sweep", exp, "--dry-run", cwd=tmp_path)
    assert r.out.splitlines()[-1].endswith("0 already in dry.sqlite, 12 to run")
    r = tierlab_cmd("sweep", exp, "--dry-run", "--set", "workload.requests=1000", cwd=tmp_path)
    assert r.out.splitlines()[-1].endswith("12 already in dry.sqlite, 0 to run")


def test_dry_run_shows_sizes_in_human_units(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    """Issue 21: a capacity axis in bytes (a range of "32MiB" steps) was listed
    as 33554432, 67108864, ...; counts of objects stay counts."""
    axis = (
        '[[axis]]\nkey = "tier[0].capacity"\n'
        'range = { from = "1MiB", to = "3MiB", step = "1MiB" }\n'
    )
    exp = tmp_path / "e.toml"
    exp.write_text(experiment("human", axis))
    r = tierlab_cmd("sweep", exp, "--dry-run", cwd=tmp_path)
    assert r.code == 0, r.err
    assert r.out.splitlines()[0] == "tier[0].capacity: 3 values: 1 MiB, 2 MiB, 3 MiB"
    units = '[[axis]]\nkey = "tier[0].capacity"\nvalues = [100, 2000]\n'
    exp.write_text(
        experiment("objects", units).replace("write_ratio", "unit_size = true\nwrite_ratio")
    )
    r = tierlab_cmd("sweep", exp, "--dry-run", cwd=tmp_path)
    assert r.code == 0, r.err
    assert r.out.splitlines()[0] == "tier[0].capacity: 2 values: 100, 2000"


@pytest.mark.parametrize("dry", [True, False], ids=["dry-run", "sweep"])
@pytest.mark.parametrize("where", ["missing folder", "directory", "not a store"])
def test_bad_store_path_is_refused_before_anything_runs(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], dry: bool, where: str
) -> None:
    """Regression: a dry run printed the axes, then failed on a bad store
    (output on stdout despite the error), called a directory "no such
    results file", and passed a store in a missing folder that the sweep
    itself refuses."""
    exp = tmp_path / "e.toml"
    exp.write_text(experiment("bad", SLOWDOWN_BY_CAPACITY))
    # (The experiment file itself as the store is refused as an input:
    # tests/test_outputs.py.)
    other = tmp_path / "notes.txt"
    other.write_text("not a store\n")
    store, needle = {
        "missing folder": (tmp_path / "nope" / "r.sqlite", "no such directory"),
        "directory": (tmp_path, "is a directory"),
        "not a store": (other, "not a tierlab results store"),
    }[where]
    args: list[object] = ["sweep", exp, "--store", store, "--workers", "1"]
    assert_bad(tierlab_cmd(*args, *(["--dry-run"] if dry else [])), str(store), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.toml", "notes.txt"]
    assert other.read_text() == "not a store\n"


def test_export_csv_and_parquet(tmp_path: Path, tierlab_cmd: Callable[..., Ran]) -> None:
    store = tmp_path / "s.sqlite"
    tierlab.sweep(experiment("ex", SLOWDOWN_BY_CAPACITY), store=store, workers=1)
    df = tierlab.load(store)
    for name in ("out.csv", "out.parquet"):
        r = tierlab_cmd("export", store, "-o", tmp_path / name)
        assert r.code == 0, r.err
        assert r.out.strip() == f"wrote 6 points to {tmp_path / name}"
    csv = pd.read_csv(tmp_path / "out.csv")
    pq = pd.read_parquet(tmp_path / "out.parquet")
    for got in (csv, pq):
        assert list(got.columns) == list(df.columns)
        assert list(got["miss_ratio"]) == list(df["miss_ratio"])


def _rows(store: Path) -> dict[str, str]:
    """hash -> finished_at of the rows committed so far (read-only)."""
    if not store.exists():
        return {}
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        return dict(db.execute("SELECT hash, finished_at FROM runs WHERE status='ok'"))
    except sqlite3.OperationalError:  # tables not created yet
        return {}
    finally:
        db.close()


def test_killed_sweep_resumes_without_recomputing(tmp_path: Path) -> None:
    """A real SIGKILL of the sweep and its Dask workers mid-run; the second
    run keeps every committed point and computes only the rest."""
    axis = '[[axis]]\nkey = "tier[0].capacity"\nrange = { from = "1%", to = "10%", step = "1%" }\n'
    # ~0.3 s per point on one worker: long enough to kill in the middle.
    text = experiment("kill", axis).replace("requests = 20000", "requests = 4_000_000")
    text = text.replace("objects = 2000", "objects = 200_000")
    exp = tmp_path / "kill.toml"
    exp.write_text(text)
    store = tmp_path / "kill.sqlite"
    log = tmp_path / "first-run.log"
    with open(log, "wb") as out:
        p = subprocess.Popen(
            [*tierlab_argv(), "sweep", str(exp), "--workers", "1", "--no-progress"],
            cwd=tmp_path,
            stdout=out,
            stderr=out,
            start_new_session=True,  # its own process group: the Dask workers die with it
        )
    deadline = time.monotonic() + 120
    try:
        while len(_rows(store)) < 3:
            assert p.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "no point finished in 120 s"
            time.sleep(0.05)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    before = _rows(store)
    assert 3 <= len(before) < 10, f"{len(before)} points finished before the kill"

    r = subprocess.run(
        [*tierlab_argv(), "sweep", str(exp), "--workers", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert (
        f"10 points: {10 - len(before)} run, {len(before)} already in the store, 0 failed"
        in r.stdout
    )
    after = _rows(store)
    assert len(after) == 10
    # the points finished before the kill were not recomputed
    assert {h: after[h] for h in before} == before
    df = tierlab.load(store)
    assert df["tier.0.capacity"].tolist() == [f"{i}%" for i in range(1, 11)]
    assert df["miss_ratio"].is_monotonic_decreasing


def test_ctrl_c_stops_a_sweep_and_keeps_what_finished(tmp_path: Path) -> None:
    axis = '[[axis]]\nkey = "tier[0].capacity"\nrange = { from = "1%", to = "10%", step = "1%" }\n'
    text = experiment("intr", axis).replace("requests = 20000", "requests = 4_000_000")
    exp = tmp_path / "intr.toml"
    exp.write_text(text.replace("objects = 2000", "objects = 200_000"))
    store = tmp_path / "intr.sqlite"
    argv = [*tierlab_argv(), "sweep", str(exp), "--workers", "2"]
    with interruptible(argv, cwd=tmp_path, new_session=True) as p:
        deadline = time.monotonic() + 120
        while not _rows(store) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        # As Ctrl-C in a terminal does: SIGINT to the whole process group,
        # the Dask workers too. Regression: each worker printed its
        # KeyboardInterrupt traceback before the sweep's "interrupted".
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted"], err
    # Fails if no point was stored before Ctrl-C or if all ten ran despite it;
    # how many finished in between depends on timing, so a range is the
    # strictest assertion that holds.
    assert 1 <= len(_rows(store)) < 10


def test_sweep_beside_another_cluster_prints_only_its_own(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    """Regression: with another Dask cluster running (its dashboard on port
    8787), every sweep warned that the port was in use. A sweep prints its
    result and nothing else. The port is held here as that cluster's
    dashboard holds it (or is held already, by a cluster of someone else)."""
    import socket

    exp = tmp_path / "e.toml"
    exp.write_text(experiment("quiet", SLOWDOWN_BY_CAPACITY))
    with socket.socket() as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            held.bind(("0.0.0.0", 8787))
            held.listen()
        except OSError:
            pass  # taken already: the condition holds
        r = tierlab_cmd("sweep", exp, "--workers", "1", cwd=tmp_path, timeout=180)
    assert r.code == 0, r.err
    assert "6 points: 6 run" in r.out
    assert r.err == ""


def test_sweep_on_an_existing_cluster(tmp_path: Path, tierlab_cmd: Callable[..., Ran]) -> None:
    """--scheduler: a cluster started apart, as on a real cluster."""
    sched_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    worker_cmd = [sys.executable, "-m", "distributed.cli.dask_worker"]
    procs = [
        subprocess.Popen(
            [
                *dask,
                "--scheduler-file",
                str(sched_file),
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                "--no-dashboard",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() or not sched_file.read_text().strip():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        procs.append(
            subprocess.Popen(
                [
                    *worker_cmd,
                    "--scheduler-file",
                    str(sched_file),
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        address = json.loads(sched_file.read_text())["address"]
        exp = tmp_path / "e.toml"
        exp.write_text(experiment("remote", SLOWDOWN_BY_CAPACITY))
        r = tierlab_cmd("sweep", exp, "--scheduler", address, cwd=tmp_path, timeout=180)
        assert r.code == 0, r.err
        assert "6 points: 6 run" in r.out
        assert set(tierlab.load(tmp_path / "remote.sqlite")["status"]) == {"ok"}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)


# --------------------------------------------------------------------------
# bad input: one line, exit 2
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            '[experiment]\nname = "x"\nrepeats = 2\n' + BASE,
            "experiment.repeats: unknown key; expected one of",
        ),
        ('[experiment]\ndescription = "no name"\n' + BASE, "experiment.name: required"),
        (BASE, "experiment: missing [experiment] table"),
        ('[experiment]\nname = "x"\n', "base: missing"),
        (
            experiment("x", '[[axis]]\nkey = "tier[3].capacity"\nvalues = [1]\n'),
            "axis[0].key: tier[3]: the base config has 1 entry in tier",
        ),
        (
            experiment("x", '[[axis]]\nkey = "tier[0]..capacity"\nvalues = [1]\n'),
            "axis[0].key: 'tier[0]..capacity': empty segment",
        ),
        (
            experiment(
                "x",
                '[[axis]]\nkey = "workload.alpha"\nvalues = [1]\nrange = { from = 1, '
                "to = 2, num = 2 }\n",
            ),
            "axis[0]: give values = [...] or range",
        ),
        (
            experiment(
                "x", '[[axis]]\nkey = "workload.alpha"\nrange = { from = 1, to = 2, num = 0 }\n'
            ),
            "axis[0].range.num: 0; expected an integer from 1",
        ),
        (
            experiment(
                "x", '[[axis]]\nkey = "workload.alpha"\nrange = { from = 3, to = 2, step = 1 }\n'
            ),
            "axis[0].range.to: 2 is below from = 3",
        ),
        (
            experiment(
                "x",
                '[[axis]]\nkey = "workload.alpha"\nrange = { from = "1MiB", '
                'to = "9 furlongs", num = 2 }\n',
            ),
            "axis[0].range.to: '9 furlongs'",
        ),
        (
            experiment("x", '[[axis]]\nkey = "workload.alpha"\nvalues = [1, 2]\nlabels = ["a"]\n'),
            "axis[0].labels: expected a list of 2 labels",
        ),
        (experiment("x", "", "repetitions = 0"), "experiment.repetitions: 0"),
        (
            experiment("x", "", 'metrics = ["miss_ratio", "hit_rate"]'),
            "experiment.metrics: unknown 'hit_rate' in the first finished point's summary; "
            "the sweep stopped there; a run's summary has access_time_ns, amat_ns,",
        ),
    ],
)
def test_bad_experiments(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], text: str, needle: str
) -> None:
    exp = tmp_path / "bad.toml"
    exp.write_text(text)
    r = tierlab_cmd("sweep", exp, "--workers", "1", cwd=tmp_path)
    assert_bad(r, needle)
    with pytest.raises(
        tierlab.ConfigError,
        match=needle.replace("[", r"\[").replace("(", r"\(").replace(".", r"\."),
    ):
        tierlab.sweep(exp, store=tmp_path / "api.sqlite", workers=1)


def test_bad_store_and_arguments(tmp_path: Path, tierlab_cmd: Callable[..., Ran]) -> None:
    assert_bad(
        tierlab_cmd("export", tmp_path / "none.sqlite", "-o", tmp_path / "o.csv"),
        "none.sqlite: no such results file",
    )
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database, just text " * 100)
    assert_bad(
        tierlab_cmd("export", junk, "-o", tmp_path / "o.csv"),
        "junk.sqlite: not a tierlab results store",
    )
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    assert_bad(
        tierlab_cmd("export", other, "-o", tmp_path / "o.csv"),
        "other.sqlite: not a tierlab results store",
    )
    with pytest.raises(tierlab.StoreError, match="not a tierlab results store"):
        tierlab.load(junk)
    exp = tmp_path / "e.toml"
    exp.write_text(experiment("ok", ""))
    assert_bad(
        tierlab_cmd("sweep", exp, "--set", "workload.alpha"),
        "--set 'workload.alpha': expected KEY=VALUE",
    )
    assert_bad(tierlab_cmd("sweep", exp, "--workers", "0"), "--workers 0: must be at least 1")
    assert_bad(tierlab_cmd("sweep", tmp_path / "nope.toml"), "nope.toml: no such experiment file")
    assert_bad(
        tierlab_cmd("sweep", exp, "--store", tmp_path / "no" / "dir.sqlite"), "no such directory"
    )
    tierlab.sweep(exp, store=tmp_path / "r.sqlite", workers=1)
    assert_bad(
        tierlab_cmd("export", tmp_path / "r.sqlite", "-o", tmp_path / "o.xlsx"),
        "o.xlsx: the output must end in .csv or .parquet",
    )
    assert_bad(
        tierlab_cmd(
            "export", tmp_path / "r.sqlite", "-o", tmp_path / "o.csv", "--experiment", "nope"
        ),
        "no experiment 'nope' (it holds: ok)",
    )


def test_docs_python_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """docs/experiments.md's Python block runs as written (its store moved to tmp_path)."""
    from conftest import REPO
    from test_readme import shell_blocks

    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert shell_blocks(text), "docs/experiments.md shows no command"
    monkeypatch.chdir(REPO)
    exec(compile(code.replace("/tmp/", f"{tmp_path}/"), "experiments.md", "exec"), {})
    assert len(tierlab.load(tmp_path / "slowdown.sqlite")) == 40


# --------------------------------------------------------------------------
# named metrics: a likely misspelling said at once; a metric added later
# --------------------------------------------------------------------------

TWO_SIZES = '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["5%", "10%"]\n'


def test_a_misspelt_metric_stops_the_sweep_at_the_first_point(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    """Regression (issue 38, item 7): a misspelt metric was an error only
    after every point ran. The first finished point has the tier the metric
    names but not its field: the sweep stops there (exit 2, one line, no
    traceback), and that point is recorded as failed, so that the corrected
    experiment runs it again."""
    five = '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["2%", "4%", "6%", "8%", "10%"]\n'
    exp = tmp_path / "typo.toml"
    exp.write_text(experiment("typo", five, 'metrics = ["miss_ratio", "tiers.0.hitz"]'))
    r = tierlab_cmd("sweep", exp, "--workers", "1", "--no-progress", cwd=tmp_path)
    assert r.code == 2 and "Traceback" not in r.err
    assert r.err.splitlines() == [
        "error: experiment.metrics: unknown 'tiers.0.hitz' in the first finished point's "
        "summary; 'tiers.0.hitz' (did you mean 'tiers.0.hits'?); the sweep stopped there"
    ]
    df = tierlab.load(tmp_path / "typo.sqlite")
    assert df["status"].tolist() == ["error"]  # one point ran, and it failed
    # A top-level figure misspelt without a near match stops too; on a
    # cluster as in this process.
    miss = tmp_path / "miss.toml"
    miss.write_text(experiment("miss", five, 'metrics = ["miss_rate"]'))
    for in_process in (True, False):
        store = tmp_path / f"miss-{in_process}.sqlite"
        with pytest.raises(tierlab.ConfigError, match="unknown 'miss_rate' in the first"):
            tierlab.sweep(miss, store=store, workers=1, in_process=in_process)
        assert len(tierlab.load(store)) == 1
    fixed = experiment("typo", five, 'metrics = ["miss_ratio", "tiers.0.hits"]')
    rep = tierlab.sweep(fixed, store=tmp_path / "typo.sqlite", workers=1)
    assert (rep.done, rep.skipped) == (5, 0)


def test_a_near_miss_metric_under_an_absent_object_is_warned_at_the_first_point(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    """A metric under an object the first point lacks may belong to other
    points (a pool switched off at some): with a near match it is warned at
    once, and an error at the end if no point has it."""
    exp = tmp_path / "typo.toml"
    exp.write_text(experiment("typo", TWO_SIZES, 'metrics = ["miss_ratio", "tier.0.hits"]'))
    r = tierlab_cmd("sweep", exp, "--workers", "1", cwd=tmp_path)
    # The warning came at the first point, on its own line; the error at
    # the end, with the near match (exit 2, no traceback).
    warned, error = r.err.splitlines()
    assert r.code == 2 and "Traceback" not in r.err
    assert warned.startswith("warning: experiment.metrics: 'tier.0.hits' is not in the first")
    assert "which has 'tiers.0.hits'" in warned
    assert error.startswith("error: experiment.metrics: unknown 'tier.0.hits'; 'tier.0.hits' ")
    assert "(did you mean 'tiers.0.hits'?)" in error
    with pytest.warns(tierlab.MetricWarning, match="'tier.0.hits' is not in the first"):
        with pytest.raises(tierlab.ConfigError, match="did you mean 'tiers.0.hits'"):
            tierlab.sweep(exp, store=tmp_path / "api.sqlite", workers=1)


def test_a_metric_differing_only_in_an_index_is_not_warned(tmp_path: Path) -> None:
    import warnings

    exp = tmp_path / "idx.toml"
    exp.write_text(experiment("idx", TWO_SIZES, 'metrics = ["tiers.0.hits", "tiers.1.hits"]'))
    # One tier: no point has tiers.1 (an error at the end), but it is no
    # misspelling of tiers.0.hits, so nothing is said at the first point.
    with warnings.catch_warnings():
        warnings.simplefilter("error", tierlab.MetricWarning)
        with pytest.raises(tierlab.ConfigError, match=r"unknown 'tiers\.1\.hits'; a run's"):
            tierlab.sweep(exp, store=tmp_path / "idx.sqlite", workers=1)


def test_a_metric_added_later_runs_the_stored_points_again(tmp_path: Path) -> None:
    store = tmp_path / "added.sqlite"
    first = experiment("added", TWO_SIZES, 'metrics = ["miss_ratio"]')
    assert tierlab.sweep(first, store=store, workers=1).done == 2
    # The store kept miss_ratio only: the points must run again to have hits.
    more = experiment("added", TWO_SIZES, 'metrics = ["miss_ratio", "tiers.0.hits"]')
    assert tierlab.sweep(more, store=store, dry_run=True).skipped == 0
    rep = tierlab.sweep(more, store=store, workers=1)
    assert (rep.skipped, rep.done) == (0, 2)
    df = tierlab.load(store)
    assert len(df) == 2 and (df["tiers.0.hits"] > 0).all()
    again = tierlab.sweep(more, store=store, workers=1)
    assert (again.skipped, again.done) == (2, 0)


# --------------------------------------------------------------------------
# sweeps from a plain script (issue 38, item 2)
# --------------------------------------------------------------------------

SCRIPT = """\
import sys, time
import tierlab
t0 = time.perf_counter()
r = tierlab.sweep({exp!r}, store={store!r}{extra})
print(r.done, round(time.perf_counter() - t0, 3), "distributed" in sys.modules)
"""


def test_a_small_sweep_runs_in_a_plain_script_without_a_cluster(tmp_path: Path) -> None:
    """Regression: tierlab.sweep() in a script without a main guard re-ran
    the script in every worker and ended in "Nanny failed to start" and a
    150-line traceback; three tiny points took 6 s of Dask start-up. A sweep
    of at most IN_PROCESS_POINTS points runs in the script's process on
    Dask's threaded scheduler: no cluster, no second run of the script."""
    from tierlab._sweep import IN_PROCESS_POINTS

    three = '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["5%", "10%", "15%"]\n'
    exp = tmp_path / "three.toml"
    exp.write_text(experiment("three", three))
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT.format(exp=str(exp), store=str(tmp_path / "s.sqlite"), extra=""))
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    done, seconds, cluster = r.stdout.split()
    # No cluster: distributed was not even imported (a local cluster alone
    # took 3-6 s to start). The time is not asserted: it is the machine's.
    assert (done, cluster) == ("3", "False"), r.stdout
    assert float(seconds) > 0
    assert r.stderr == ""
    assert IN_PROCESS_POINTS >= 3
    df = tierlab.load(tmp_path / "s.sqlite")
    assert df["miss_ratio"].is_monotonic_decreasing and len(df) == 3


def test_a_cluster_sweep_from_an_unguarded_script_says_what_to_do(tmp_path: Path) -> None:
    """A sweep that needs worker processes, called at a script's top level
    outside the main guard, stops before it starts anything, with one line
    naming the script and the line and what to do; under the guard it runs."""
    exp = tmp_path / "grid.toml"
    exp.write_text(experiment("grid", SLOWDOWN_BY_CAPACITY))
    store = str(tmp_path / "g.sqlite")
    script = tmp_path / "plain.py"
    script.write_text(
        SCRIPT.format(exp=str(exp), store=store, extra=", workers=1, in_process=False")
    )
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert f"ConfigError: {script}:4: tierlab.sweep() is called outside " in last
    assert "hint: put the call under that guard, or pass in_process=True" in last
    assert "Nanny" not in r.stderr and not Path(store).exists()
    guarded = tmp_path / "guarded.py"
    body = SCRIPT.format(exp=str(exp), store=store, extra=", workers=1, in_process=False")
    lines = body.splitlines()
    guarded.write_text(
        "\n".join(lines[:2])
        + '\nif __name__ == "__main__":\n'
        + "\n".join("    " + line for line in lines[2:])
        + "\n"
    )
    r = subprocess.run(
        [sys.executable, str(guarded)], capture_output=True, text=True, timeout=180, cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "6" and r.stdout.split()[2] == "True"


def test_ctrl_c_stops_an_in_process_sweep(tmp_path: Path) -> None:
    """In this process the running points stop at their next million
    requests on Ctrl-C, and the finished ones are kept."""
    axis = '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["1%", "2%", "3%", "4%", "5%", "6%"]\n'
    text = experiment("intr", axis).replace("requests = 20000", "requests = 6_000_000")
    exp = tmp_path / "intr.toml"
    exp.write_text(text.replace("objects = 2000", "objects = 200_000"))
    store = tmp_path / "intr.sqlite"
    argv = [*tierlab_argv(), "sweep", str(exp), "--workers", "1"]
    with interruptible(argv, cwd=tmp_path, new_session=True) as p:
        deadline = time.monotonic() + 120
        while not _rows(store) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        t0 = time.monotonic()
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
        stopped_in = time.monotonic() - t0
    assert p.returncode == 130, err
    assert err.strip().splitlines() == ["interrupted"], err
    assert 1 <= len(_rows(store)) < 6
    assert stopped_in < 5.0


# --------------------------------------------------------------------------
# a local cluster that loses its workers
# --------------------------------------------------------------------------

LOSES_WORKERS = """\
import os, signal, sys, threading, time
import tierlab, tierlab._sweep

tierlab._sweep.WORKERLESS_S = 3.0


def workers():
    # This process's children that run a Dask worker (not the resource tracker).
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{{pid}}/stat") as f:
                ppid = f.read().rsplit(")", 1)[1].split()[1]
            with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                cmd = f.read()
        except (OSError, IndexError):
            continue
        if ppid == me and b"spawn_main" in cmd:
            yield int(pid)


stop = threading.Event()


def kill_every_worker():
    # Each worker the nanny starts again dies before it can take a point,
    # as on a machine where no restart succeeds.
    while not stop.is_set():
        for pid in workers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def progress(done, failed, total):
    if done == 1 and not failed:
        threading.Thread(target=kill_every_worker, daemon=True).start()


if __name__ == "__main__":
    t0 = time.monotonic()
    r = tierlab.sweep({exp!r}, store={store!r}, workers=1, in_process=False, progress=progress)
    stop.set()
    print(r.done, r.failed, round(time.monotonic() - t0))
    print(*r.errors, sep="\\n")
"""


def test_a_sweep_whose_local_cluster_lost_its_workers_ends(tmp_path: Path) -> None:
    """Regression: a full-scale `tierlab reproduce s1` at load 9 sat idle for
    45 minutes with no worker process left (each had exited and none was
    restarted) until killed: Dask waits for a worker forever. A local
    cluster without a worker for WORKERLESS_S ends the sweep, its points not
    run reported failed, and the store keeps the ones that finished."""
    axis = '[[axis]]\nkey = "tier[0].capacity"\nrange = { from = "1%", to = "12%", step = "1%" }\n'
    # ~0.3 s per point: the first finishes well before the twelfth.
    text = experiment("lost", axis).replace("requests = 20000", "requests = 2_000_000")
    exp = tmp_path / "lost.toml"
    exp.write_text(text.replace("objects = 2000", "objects = 200_000"))
    store = tmp_path / "lost.sqlite"
    script = tmp_path / "lose.py"
    script.write_text(LOSES_WORKERS.format(exp=str(exp), store=str(store)))
    # Its own process group: a hung sweep is killed with its workers.
    with interruptible([sys.executable, str(script)], tmp_path, new_session=True) as p:
        try:
            out, err = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            pytest.fail("the sweep did not end after its workers were lost")
    assert p.returncode == 0, err
    first, *errors = out.strip().splitlines()
    done, failed, _seconds = (int(x) for x in first.split())
    assert done >= 1 and failed >= 1 and done + failed == 12, out
    lost = [e for e in errors if "the local Dask cluster had no worker for 3 s" in e]
    assert lost and len(errors) == failed, out
    db = sqlite3.connect(store)
    try:
        statuses = [s for (s,) in db.execute("SELECT status FROM runs")]
    finally:
        db.close()
    assert statuses.count("ok") == done and statuses.count("error") == failed
