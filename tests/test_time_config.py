"""The time model's keys ([load], [server], device keys, run.warmup) through the
command line: bad input exits 2 with one line naming the key path and what
is allowed; good input prints the time model's figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran
from test_bad_input import assert_bad

#: A small two-tier config the cases add their keys to (as TOML text, so a
#: case can also break a table the base already has).
WORKLOAD = """\
[workload]
type = "zipf"
objects = 500
requests = 2_000
object_size = "4KiB"
seed = 3
"""

TIERS = """\
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "10%"
policy = "lru"
{tier0}
[[tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "30%"
policy = "lru"
{tier1}
[backing]
tech = "HDD"
{backing}
"""


def config(
    tmp_path: Path, extra: str = "", *, tier0: str = "", tier1: str = "", backing: str = ""
) -> Path:
    p = tmp_path / "c.toml"
    p.write_text(
        WORKLOAD + extra + "\n" + TIERS.format(tier0=tier0, tier1=tier1, backing=backing),
        encoding="utf-8",
    )
    return p


CLOSED = '[load]\ntype = "closed"\nclients = 4\n'


@pytest.mark.parametrize(
    ("case", "keys", "needles"),
    [
        ("zero clients", {"extra": '[load]\ntype = "closed"\nclients = 0\n'}, ["load.clients"]),
        ("zero tier channels", {"extra": CLOSED, "tier0": "channels = 0"}, ["tier[0].channels"]),
        ("zero backing channels", {"extra": CLOSED, "backing": "channels = 0"},
         ["backing.channels"]),
        ("zero cpus", {"extra": CLOSED + "[server]\ncpus = 0\n"}, ["server.cpus"]),
        ("negative think (a number)", {"extra": CLOSED + "think = -5\n"}, ["load.think"]),
        ("negative think (a duration)", {"extra": CLOSED + 'think = "-5us"\n'}, ["load.think"]),
        ("negative think (a distribution)",
         {"extra": CLOSED + 'think = { dist = "exponential", mean = "-5us" }\n'}, ["load.think"]),
        ("open without a rate on a trace without timestamps", {"extra": '[load]\ntype = "open"\n'},
         ["load.rate"]),
        ("warm-up longer than the run", {"extra": CLOSED + "[run]\nwarmup = 100_000\n"},
         ["run.warmup"]),
        ("warm-up of every pass", {"extra": CLOSED + '[run]\npasses = 2\nwarmup = "2 passes"\n'},
         ["run.warmup"]),
        ("unknown key in [load]", {"extra": CLOSED + 'colour = "red"\n'}, ["load.colour"]),
        ("clients in an open load",
         {"extra": '[load]\ntype = "open"\nrate = 1000\nclients = 4\n'},
         ["load.clients", 'not used by type = "open"']),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_bad_time_keys(
    cli: Callable[..., Ran], tmp_path: Path, case: str, keys: dict[str, str], needles: list[str]
) -> None:
    assert_bad(cli("run", config(tmp_path, **keys), "--json"), *needles)


def test_warmup_duration_longer_than_the_run(cli: Callable[..., Ran], tmp_path: Path) -> None:
    assert_bad(
        cli("run", config(tmp_path, CLOSED + '[run]\nwarmup = "100s"\n'), "--json"), "run.warmup"
    )


def test_lazy_buffer_smaller_than_a_page(cli: Callable[..., Ran], tmp_path: Path) -> None:
    """A lazy write-back buffer that cannot hold one 4 KiB page would block
    every write into the tier for ever."""
    c = config(
        tmp_path,
        CLOSED + '[hierarchy]\nfill = "lazy"\n',
        tier1='lazy_writeback = { size = "1KiB" }',
    )
    assert_bad(cli("run", c, "--json"), "tier[1].lazy_writeback.size")


def test_zero_lazy_buffer(cli: Callable[..., Ran], tmp_path: Path) -> None:
    c = config(
        tmp_path,
        CLOSED + '[hierarchy]\nfill = "lazy"\n',
        tier1='lazy_writeback = { size = "0B" }',
    )
    assert_bad(cli("run", c, "--json"), "tier[1].lazy_writeback.size")


# --------------------------------------------------------------------------
# good input: what `tierlab run` prints
# --------------------------------------------------------------------------


def test_run_prints_the_time_model(cli: Callable[..., Ran], tmp_path: Path) -> None:
    c = config(tmp_path, CLOSED + '[server]\ncpus = 2\ncpu = "10us"\n')
    r = cli("run", c, "--no-progress")
    assert r.code == 0, r.err
    for needle in (
        "time model: closed load, 4 clients",
        "latency mean",
        "p99",
        "per request: stack",
        "queue",
        "stations",
        "cpu",
        "backing",
        "clients",
    ):
        assert needle in r.out, (needle, r.out)
    j = cli("run", c, "--json")
    s = json.loads(j.out)
    tm = s["time"]
    assert tm["load"] == "closed" and tm["clients"] == 4
    assert f"{tm['throughput_rps']:,.0f} req/s" in r.out
    # Little's law on the printed run: L = X R.
    assert tm["mean_in_system"] == pytest.approx(
        tm["throughput_rps"] * tm["latency_ns"]["mean"] / 1e9, rel=0.01
    )


def test_run_without_time_model_prints_no_time_lines(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    r = cli("run", config(tmp_path), "--no-progress")
    assert r.code == 0, r.err
    assert "time model" not in r.out and "stations" not in r.out


def test_many_clients_are_capped(cli: Callable[..., Ran], tmp_path: Path) -> None:
    c = config(tmp_path, '[load]\ntype = "closed"\nclients = 40\n')
    r = cli("run", c, "--no-progress")
    assert r.code == 0, r.err
    assert "+ 24 more clients" in r.out, r.out


# --------------------------------------------------------------------------
# the Python API, the sweep store and the report
# --------------------------------------------------------------------------


def test_run_result_time_accessors(tmp_path: Path) -> None:
    import tierlab

    r = tierlab.simulate(config(tmp_path, CLOSED + '[server]\ncpus = 2\ncpu = "10us"\n'))
    assert r.time is not None and r.time["load"] == "closed"
    assert r.latency is not None and r.latency == r.summary["latency_ns"]
    assert r.latency["p50"] <= r.latency["p99"] <= r.latency["max"]
    st = r.stations
    assert {"cpu", "dram", "flash", "backing"} <= set(st.index), st
    assert st.loc["cpu", "servers"] == 2
    assert 0 < st.loc["cpu", "utilization"] <= 1
    assert list(st.columns) == [
        "servers", "utilization", "busy_ns", "mean_queue", "ops", "queue_ns", "service_ns",
    ]  # fmt: skip
    cl = r.clients
    assert len(cl) == 4 and cl["requests"].sum() == r.time["completed"]
    # Without a time model: None and empty frames with the same columns.
    plain = tierlab.simulate(config(tmp_path))
    assert plain.time is None and plain.latency is None
    assert plain.stations.empty and list(plain.stations.columns) == list(st.columns)
    assert plain.clients.empty and list(plain.clients.columns) == list(cl.columns)


CLIENT_SWEEP = """
[experiment]
name = "clients"
[base.workload]
type = "zipf"
objects = 400
requests = 3000
object_size = "4KiB"
[base.load]
type = "closed"
clients = 1
[base.server]
cpus = 2
cpu = "20us"
[[base.tier]]
tech = "DRAM-DDR3"
capacity = "20%"
[base.backing]
tech = "SSD-SATA"
[[axis]]
key = "load.clients"
values = [1, 2, 8]
"""


def test_sweep_over_clients_stores_time_columns_and_reports_them(tmp_path: Path) -> None:
    import tierlab
    from tierlab.report import write_report

    store = tmp_path / "c.sqlite"
    tierlab.sweep(CLIENT_SWEEP, store=store, workers=1)
    df = tierlab.load(store)
    assert (df["status"] == "ok").all(), df["error"]
    for col in ("throughput_rps", "latency_ns.mean", "latency_ns.p50", "latency_ns.p99",
                "time.stack_ns", "time.queue_ns", "time.service_ns"):  # fmt: skip
        assert col in df.columns, col
    # Per-client figures are not kept by default (four columns per client).
    assert not any(c.startswith("time.per_client.") for c in df.columns)
    d = df.set_index("load.clients")
    # More clients on two cores: more throughput, then more waiting.
    assert d.loc[8, "throughput_rps"] > d.loc[1, "throughput_rps"]
    assert d.loc[8, "time.queue_ns"] > d.loc[1, "time.queue_ns"]
    r = write_report(store, tmp_path / "rep")
    # Titles name the axis in words (plotting.py), not by its key path.
    assert r.sections[0].title == "Throughput and p99 latency against clients"
    assert any(p.name == "clients-throughput-p99.png" for p in r.plots), r.plots


def test_readme_time_section_shows_what_the_example_prints(
    cli: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's output lines for examples/time-closed.toml are the ones
    it prints (the engine is deterministic: same seed, same figures)."""
    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Time: concurrency", 1)[1].split("\n## ", 1)[0]
    shown = section.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert any(line.startswith("tail latency p99") for line in shown)
    monkeypatch.chdir(REPO)
    r = cli("run", "examples/time-closed.toml", "--no-progress")
    assert r.code == 0, r.err
    printed = [line.rstrip() for line in r.out.splitlines()]
    for line in shown:
        assert line in printed, (line, r.out)
    # The TOML the section shows is the example's (comments aside).
    import tierlab

    toml = section.split("```toml\n", 1)[1].split("```", 1)[0]
    shown_run = tierlab.simulate(toml).summary
    assert (
        shown_run["time"]
        == json.loads(cli("run", "examples/time-closed.toml", "--json").out)["time"]
    )


# --------------------------------------------------------------------------
# tierlab bench: the closed-loop row beside the serial one
# --------------------------------------------------------------------------


def test_bench_closed_row_beside_serial(cli: Callable[..., Ran], tmp_path: Path) -> None:
    from conftest import write_oracle

    t = write_oracle(tmp_path / "t.oracleGeneral.bin", [i % 97 for i in range(20_000)])
    r = cli("bench", t, "--tiers", "3", "--policies", "lru,fifo", "--repeat", "1", "--json")
    assert r.code == 0, r.err
    rows = json.loads(r.out)
    assert [(x["policy"], x["load"], x["clients"]) for x in rows] == [
        ("lru", "serial", None), ("lru", "closed", 24),
        ("fifo", "serial", None), ("fifo", "closed", 24),
    ]  # fmt: skip
    for serial, closed in (rows[0:2], rows[2:4]):
        # The cache layer is the same: the time model only decides when.
        assert closed["miss_ratio"] == serial["miss_ratio"]
        assert closed["requests"] == serial["requests"] == 20_000
        assert closed["vs_serial"] == pytest.approx(closed["median_rps"] / serial["median_rps"])
    text = cli("bench", t, "--tiers", "3", "--policies", "lru", "--repeat", "1")
    assert text.code == 0 and "closed 24" in text.out and "ratio" in text.out, text.out
    only = cli("bench", t, "--policies", "lru", "--repeat", "1", "--closed", "0", "--json")
    assert [x["load"] for x in json.loads(only.out)] == ["serial"]


def test_bench_negative_closed(cli: Callable[..., Ran], tmp_path: Path) -> None:
    from conftest import write_oracle

    t = write_oracle(tmp_path / "t.oracleGeneral.bin", [1, 2, 3] * 10)
    assert_bad(cli("bench", t, "--closed", "-1", "--repeat", "1"), "--closed")
