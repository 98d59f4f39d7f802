"""The ``tierlab`` command line, run as a user would: the installed command in
a subprocess, and ``tierlab.cli.main`` in process where output is checked in
detail."""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLES, TINY_KEYS, TINY_REQUESTS, Ran
from tierlab.models import MODELS

EXAMPLE_CONFIGS = ["quickstart.toml", "s1-esdc.toml", "s2-extended-buffer-cache.toml"]

TOP_KEYS = {"requests", "miss_ratio", "byte_miss_ratio", "amat_ns", "total_time_ns", "tiers"}
TIER_KEYS = {"name", "hits", "misses", "miss_ratio", "byte_miss_ratio", "evictions", "writebacks"}


def ok(r: Ran) -> Ran:
    assert r.code == 0, f"exit {r.code}\nstdout:\n{r.out}\nstderr:\n{r.err}"
    assert "Traceback" not in r.err
    return r


def check_summary_shape(s: dict[str, object]) -> None:
    assert TOP_KEYS <= s.keys(), TOP_KEYS - s.keys()
    assert isinstance(s["requests"], int)
    for k in ("miss_ratio", "byte_miss_ratio"):
        assert isinstance(s[k], float) and 0.0 <= s[k] <= 1.0, (k, s[k])
    for k in ("amat_ns", "total_time_ns"):
        assert isinstance(s[k], float) and s[k] >= 0.0 and math.isfinite(s[k]), (k, s[k])
    tiers = s["tiers"]
    assert isinstance(tiers, list) and tiers
    for t in tiers:
        assert TIER_KEYS <= t.keys(), TIER_KEYS - t.keys()
        assert isinstance(t["name"], str) and t["name"]
        for k in ("hits", "misses", "evictions", "writebacks"):
            assert isinstance(t[k], int) and t[k] >= 0, (k, t[k])
        for k in ("miss_ratio", "byte_miss_ratio"):
            assert 0.0 <= t[k] <= 1.0


# --------------------------------------------------------------------------
# tierlab run
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLE_CONFIGS)
def test_run_example_table(tierlab_cmd: Callable[..., Ran], name: str) -> None:
    r = ok(tierlab_cmd("run", EXAMPLES / name))
    assert "miss ratio" in r.out
    assert "AMAT" in r.out
    # Only warnings (an example whose device is busier than its serial run
    # is long says so, docs/time.md#feasibility); nothing else on stderr.
    assert all(line.startswith("warning: ") for line in r.err.splitlines()), r.err


@pytest.mark.parametrize("name", EXAMPLE_CONFIGS)
def test_run_example_json(tierlab_cmd: Callable[..., Ran], name: str) -> None:
    r = ok(tierlab_cmd("run", EXAMPLES / name, "--json"))
    s = json.loads(r.out)
    check_summary_shape(s)
    # Every request of a tierlab workload is a read or a write here.
    assert s["requests"] >= 2_000_000
    first = s["tiers"][0]
    assert first["hits"] + first["misses"] == s["requests"]
    # The whole-run misses are the last tier's misses.
    assert s["misses"] == s["tiers"][-1]["misses"]


def test_run_json_is_one_object_on_stdout(cli: Callable[..., Ran], zipf_config: Path) -> None:
    r = ok(cli("run", zipf_config, "--json"))
    assert r.err == ""
    s = json.loads(r.out)  # the whole of stdout is one JSON document
    check_summary_shape(s)
    assert s["requests"] == 5000
    assert [t["name"] for t in s["tiers"]] == ["dram", "flash"]
    assert s["reads"] + s["writes"] == 5000
    assert s["writes"] > 0


def test_run_same_config_same_numbers(cli: Callable[..., Ran], zipf_config: Path) -> None:
    a = json.loads(ok(cli("run", zipf_config, "--json")).out)
    b = json.loads(ok(cli("run", zipf_config, "--json")).out)
    assert a == b


@pytest.mark.parametrize("fmt", ["oracle", "csv"])
def test_run_trace_formats_agree(
    cli: Callable[..., Ran], tiers_config: Path, oracle_trace: Path, csv_trace: Path, fmt: str
) -> None:
    path = oracle_trace if fmt == "oracle" else csv_trace
    s = json.loads(ok(cli("run", tiers_config, "--trace", path, "--format", fmt, "--json")).out)
    check_summary_shape(s)
    assert s["requests"] == TINY_REQUESTS
    # The format is also guessed from the file name.
    guessed = json.loads(ok(cli("run", tiers_config, "--trace", path, "--json")).out)
    assert guessed["tiers"] == s["tiers"]


def test_run_csv_and_oracle_give_the_same_counts(
    cli: Callable[..., Ran], tiers_config: Path, oracle_trace: Path, csv_trace: Path
) -> None:
    o = json.loads(ok(cli("run", tiers_config, "--trace", oracle_trace, "--json")).out)
    c = json.loads(ok(cli("run", tiers_config, "--trace", csv_trace, "--json")).out)
    for k in ("requests", "misses", "miss_ratio", "byte_miss_ratio", "amat_ns"):
        assert o[k] == c[k], k
    assert [t["hits"] for t in o["tiers"]] == [t["hits"] for t in c["tiers"]]


def test_run_trace_replaces_the_workload(
    cli: Callable[..., Ran], zipf_config: Path, oracle_trace: Path
) -> None:
    s = json.loads(ok(cli("run", zipf_config, "--trace", oracle_trace, "--json")).out)
    assert s["requests"] == TINY_REQUESTS
    assert "oracleGeneral" in s["workload"]


def test_run_set_overrides_a_key_for_one_run(
    cli: Callable[..., Ran], write_config: Callable[..., Path], make_oracle
) -> None:
    # LRU over a loop of 5 keys: 4 objects of room always miss, 5 keep them.
    trace = make_oracle("loop.bin", [1, 2, 3, 4, 5] * 20)
    cfg = write_config('[[tier]]\ntech = "DRAM-DDR3"\ncapacity = 4\n', "c.toml")
    before = cfg.read_text()

    def misses(*sets: str) -> int:
        args = [a for s in sets for a in ("--set", s)]
        r = ok(cli("run", cfg, "--trace", trace, "--unit-size", *args, "--json"))
        return int(json.loads(r.out)["misses"])

    assert misses() == 100
    assert misses("tier[0].capacity=5") == 5
    # A TOML string value, and a table created on the way.
    assert misses('tier[0].policy="fifo"', "tier[0].capacity=5") == 5
    assert cfg.read_text() == before  # the file is not touched


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("tier0", "--set 'tier0': expected KEY=VALUE"),
        ("tier[3].capacity=5", "--set tier[3].capacity: tier[3]: the base config has 1 entry"),
        ("tier..x=1", "--set tier..x: 'tier..x': empty segment"),
        ("tier[0].capacity=-3", "tier[0].capacity: -3 is negative"),
        ("tier[0].nonsense=1", "tier[0]"),
    ],
)
def test_run_set_bad_input(
    cli: Callable[..., Ran], write_config: Callable[..., Path], arg: str, message: str
) -> None:
    cfg = write_config('[[tier]]\ntech = "DRAM-DDR3"\ncapacity = 4\n', "c.toml")
    r = cli("run", cfg, "--set", arg)
    assert r.code == 2, r
    assert message in r.err
    assert "Traceback" not in r.err


def test_run_relative_trace_path_in_config(
    tierlab_cmd: Callable[..., Ran], trace_config: Path
) -> None:
    # [workload].path is relative to the config's folder, not to the cwd.
    r = ok(tierlab_cmd("run", trace_config, "--json", cwd=trace_config.parent.parent))
    assert json.loads(r.out)["requests"] == TINY_REQUESTS


def test_run_unit_size(cli: Callable[..., Ran], write_config: Callable[..., Path], make_oracle):
    # A loop over 5 keys of 4 KiB: 4 objects of room with unit sizes, LRU
    # always misses; 5 objects of room keeps them all after the first pass.
    trace = make_oracle("loop.bin", [1, 2, 3, 4, 5] * 20)
    cfg4 = write_config('[[tier]]\ntech = "DRAM-DDR3"\ncapacity = 4\n', "c4.toml")
    cfg5 = write_config('[[tier]]\ntech = "DRAM-DDR3"\ncapacity = 5\n', "c5.toml")
    s4 = json.loads(ok(cli("run", cfg4, "--trace", trace, "--unit-size", "--json")).out)
    s5 = json.loads(ok(cli("run", cfg5, "--trace", trace, "--unit-size", "--json")).out)
    assert s4["unit_size"] is True
    assert (s4["misses"], s5["misses"]) == (100, 5)
    assert s5["tiers"][0]["capacity"] == 5
    assert s5["tiers"][0]["used"] == 5
    # Without --unit-size, capacity 5 is 5 bytes: nothing fits.
    b = json.loads(ok(cli("run", cfg5, "--trace", trace, "--json")).out)
    assert b["unit_size"] is False
    assert b["misses"] == 100
    assert b["tiers"][0]["rejected"] == 100


def test_run_timeline_csv(cli: Callable[..., Ran], tiers_config: Path, oracle_trace, tmp_path):
    out = tmp_path / "timeline.csv"
    r = ok(cli("run", tiers_config, "--trace", oracle_trace, "--timeline", out, "--json"))
    s = json.loads(r.out)
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert set(rows[0]) == {
        "requests", "lookups", "miss_ratio", "amat_ns", "cumulative_miss_ratio", "energy_j",
        "power_w",
    }  # fmt: skip
    # [run] interval = 500 over 2,000 requests: four points.
    assert [int(r["requests"]) for r in rows] == [500, 1000, 1500, 2000]
    assert float(rows[-1]["cumulative_miss_ratio"]) == pytest.approx(s["miss_ratio"])
    mean = sum(float(r["miss_ratio"]) for r in rows) / len(rows)
    assert mean == pytest.approx(s["miss_ratio"])


def test_run_table_names_tiers_and_backing(cli: Callable[..., Ran], zipf_config: Path) -> None:
    r = ok(cli("run", zipf_config, "--no-progress"))
    for word in ("dram", "flash", "backing", "DRAM-DDR3", "NAND-SLC", "HDD", "exclusive"):
        assert word in r.out, word
    assert r.err == ""


def test_run_warns_when_a_tier_is_smaller_than_one_object(
    cli: Callable[..., Ran], write_config: Callable[..., Path]
) -> None:
    # Defect 10: "0.01%" of a 4 KiB-page footprint resolved to a tier of a
    # few hundred bytes, which refused every object with no word.
    cfg = write_config(
        '[workload]\ntype = "zipf"\nobjects = 900\nrequests = 3000\nobject_size = "4KiB"\n'
        "seed = 1\n\n"
        '[[tier]]\nname = "dram"\ntech = "DRAM-DDR3"\ncapacity = "0.01%"\npolicy = "lru"\n\n'
        '[[tier]]\nname = "flash"\ntech = "NAND-SLC"\ncapacity = "50%"\npolicy = "lru"\n'
    )
    r = ok(cli("run", cfg, "--json"))
    s = json.loads(r.out)
    dram, flash = s["tiers"]
    assert 0 < dram["capacity"] < 4096
    assert dram["rejected"] == dram["misses"] == s["requests"]
    assert dram["rejected_bytes"] == 4096 * s["requests"]
    assert dram["largest_rejected"] == 4096
    assert flash["rejected"] == flash["rejected_bytes"] == flash["largest_rejected"] == 0
    assert len(s["warnings"]) == 1
    (line,) = r.err.splitlines()
    assert line.startswith(f'warning: tier "dram" ({dram["capacity"]} B) refused 3000 objects')
    assert "largest 4 KiB" in line
    assert "tier[0].capacity 4096 (bytes) or more" in line
    table = ok(cli("run", cfg, "--no-progress"))
    assert "refused (too large)" in table.out
    assert table.err == r.err


def test_run_without_refusals_has_no_warnings(cli: Callable[..., Ran], zipf_config: Path) -> None:
    s = json.loads(ok(cli("run", zipf_config, "--json")).out)
    assert s["warnings"] == []
    assert all(t["rejected"] == 0 for t in s["tiers"])


# --------------------------------------------------------------------------
# tierlab techs
# --------------------------------------------------------------------------


def test_techs_table(tierlab_cmd: Callable[..., Ran]) -> None:
    r = ok(tierlab_cmd("techs", columns=200))
    for t in json.loads(ok(tierlab_cmd("techs", "--json")).out):
        assert t["name"] in r.out


def test_techs_table_names_readable_at_80_columns(tierlab_cmd: Callable[..., Ran]) -> None:
    """Regression: at 80 columns (a default terminal, or any
    pipe) the table squeezes ten columns and cuts every name to "DRAM…",
    "NAND…": the one thing a user needs from it, the name to put in `tech =`,
    cannot be read."""
    r = ok(tierlab_cmd("techs", columns=80))
    missing = [
        t["name"]
        for t in json.loads(ok(tierlab_cmd("techs", "--json")).out)
        if t["name"] not in r.out
    ]
    assert not missing, f"names cut in the 80-column table: {missing}"


def _page_amat(tierlab_cmd: Callable[..., Ran], tmp: Path, tech: str) -> float:
    """`tierlab run`'s AMAT of one tier of ``tech`` holding the whole
    footprint of 4 KiB pages, over a backing store of the same medium (so a
    cold miss costs that medium too, not a disk that would swamp it)."""
    cfg = tmp / f"{tech}.toml"
    cfg.write_text(
        '[workload]\ntype = "zipf"\nobjects = 2000\nrequests = 50000\n'
        'object_size = "4KiB"\nseed = 7\n\n'
        f'[[tier]]\ntech = "{tech}"\ncapacity = "100%"\n\n[backing]\ntech = "{tech}"\n'
    )
    s = json.loads(ok(tierlab_cmd("run", cfg, "--json")).out)
    assert s["tiers"][0]["evictions"] == 0
    return float(s["amat_ns"])


def test_page_access_order_as_run_reports_it(tierlab_cmd: Callable[..., Ran], tmp_path) -> None:
    """Defect 3 of issue 21: PCM-SLC, PCM-MLC, STT-MRAM, ReRAM, FRAM and
    NOR had no bandwidth, so a 4 KiB page moved in the access latency alone
    and a PCM tier beat DRAM (AMAT 311 ns against 621 ns). Every medium now
    has a transfer model with its source, and the order of page access
    times is the media's."""
    amat = {
        t: _page_amat(tierlab_cmd, tmp_path, t)
        for t in ("DRAM-DDR3", "PCM-SLC", "PCM-MLC", "NOR", "FRAM", "NAND-SLC", "HDD")
    }
    assert amat["DRAM-DDR3"] < amat["PCM-SLC"] <= amat["PCM-MLC"], amat
    assert amat["NOR"] > amat["DRAM-DDR3"] and amat["FRAM"] > amat["DRAM-DDR3"], amat
    assert amat["NAND-SLC"] < amat["HDD"], amat


def test_techs_json_every_medium_has_a_transfer_model(tierlab_cmd: Callable[..., Ran]) -> None:
    for t in json.loads(ok(tierlab_cmd("techs", "--json")).out):
        burst = "burst_bytes" in t and "burst_ns" in t
        assert ("bandwidth_mb_s" in t) != burst, t["name"]


def test_techs_json_entries_have_sources(tierlab_cmd: Callable[..., Ran]) -> None:
    techs = json.loads(ok(tierlab_cmd("techs", "--json")).out)
    assert isinstance(techs, list) and len(techs) >= 13
    names = [t["name"] for t in techs]
    assert len(set(names)) == len(names)
    for t in techs:
        assert isinstance(t["source"], str) and t["source"].strip(), t["name"]
        assert t["read_ns"] > 0 and t["write_ns"] > 0, t["name"]
        assert t["access_unit"] >= 1
    for name in ("DRAM-DDR2", "DRAM-DDR3", "FILE-MEMORY", "NAND-SLC", "HDD", "SSD-SATA"):
        assert name in names


# --------------------------------------------------------------------------
# tierlab trace stats / convert
# --------------------------------------------------------------------------


def expected_stats(trace: Path) -> dict[str, int]:
    import numpy as np
    from conftest import ORACLE_RECORD

    rec = np.fromfile(trace, dtype=ORACLE_RECORD)
    _, first = np.unique(rec["obj_id"], return_index=True)
    return {
        "requests": int(rec.size),
        "reads": int(rec.size),
        "writes": 0,
        "deletes": 0,
        "unique_keys": int(first.size),
        "footprint_bytes": int(rec["obj_size"][first].sum()),
        "bytes_requested": int(rec["obj_size"].sum()),
        "min_size": int(rec["obj_size"].min()),
        "max_size": int(rec["obj_size"].max()),
        "skipped": 0,
    }


def test_trace_stats_file(tierlab_cmd: Callable[..., Ran], oracle_trace: Path) -> None:
    s = json.loads(ok(tierlab_cmd("trace", "stats", oracle_trace, "--json")).out)
    assert s == expected_stats(oracle_trace)
    assert s["unique_keys"] <= TINY_KEYS
    table = ok(tierlab_cmd("trace", "stats", oracle_trace))
    assert f"{TINY_REQUESTS:,}" in table.out
    assert "unique keys" in table.out


def test_trace_stats_csv(cli: Callable[..., Ran], oracle_trace: Path, csv_trace: Path) -> None:
    s = json.loads(ok(cli("trace", "stats", csv_trace, "--format", "csv", "--json")).out)
    assert s == expected_stats(oracle_trace)


def test_trace_stats_config(cli: Callable[..., Ran], zipf_config: Path, trace_config, oracle_trace):
    s = json.loads(ok(cli("trace", "stats", zipf_config, "--json")).out)
    assert s["requests"] == 5000
    assert s["reads"] + s["writes"] == 5000
    assert s["writes"] > 0
    assert s["min_size"] == s["max_size"] == 4096
    assert s["footprint_bytes"] == 4096 * s["unique_keys"]
    assert s["unique_keys"] <= 1000
    # A config whose workload is a trace file reads that file.
    t = json.loads(ok(cli("trace", "stats", trace_config, "--json")).out)
    assert t == expected_stats(oracle_trace)


def test_trace_convert_round_trip(
    tierlab_cmd: Callable[..., Ran], oracle_trace: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy.oracleGeneral.bin"
    r = ok(tierlab_cmd("trace", "convert", oracle_trace, out))
    assert f"{TINY_REQUESTS:,} requests" in r.out
    src = json.loads(ok(tierlab_cmd("trace", "stats", oracle_trace, "--json")).out)
    dst = json.loads(ok(tierlab_cmd("trace", "stats", out, "--json")).out)
    assert dst == src
    # Times, ids, sizes and next-access times survive exactly.
    assert out.read_bytes() == oracle_trace.read_bytes()


def test_trace_convert_csv_to_oracle(
    cli: Callable[..., Ran], csv_trace: Path, oracle_trace: Path, tiers_config: Path, tmp_path
) -> None:
    out = tmp_path / "from-csv.bin"
    ok(cli("trace", "convert", csv_trace, out, "--format", "csv"))
    src = json.loads(ok(cli("trace", "stats", csv_trace, "--json")).out)
    dst = json.loads(ok(cli("trace", "stats", out, "--json")).out)
    assert dst == src
    # Same requests, so the same simulation.
    a = json.loads(ok(cli("run", tiers_config, "--trace", out, "--json")).out)
    b = json.loads(ok(cli("run", tiers_config, "--trace", oracle_trace, "--json")).out)
    assert a["tiers"] == b["tiers"]


def test_trace_convert_config_workload(
    cli: Callable[..., Ran], write_config: Callable[..., Path], tmp_path: Path
) -> None:
    cfg = write_config(
        '[workload]\ntype = "zipf"\nobjects = 300\nrequests = 3000\nobject_size = 512\n', "w.toml"
    )
    out = tmp_path / "zipf.bin"
    ok(cli("trace", "convert", cfg, out))
    assert out.stat().st_size == 24 * 3000
    src = json.loads(ok(cli("trace", "stats", cfg, "--json")).out)
    dst = json.loads(ok(cli("trace", "stats", out, "--json")).out)
    assert dst == src


def test_trace_convert_keeps_the_op_mix(
    cli: Callable[..., Ran], write_config: Callable[..., Path], tmp_path: Path
) -> None:
    """Regression: oracleGeneral has no op field, and
    `trace convert` silently turns writes and deletes into reads (its own
    summary even reports them as reads). A convert that cannot keep the
    trace's meaning should refuse, or at least say so: nothing is silently
    dropped."""
    (tmp_path / "ops.csv").write_text("1,10,4096,get\n2,11,4096,set\n3,10,4096,del\n")
    cfg = write_config('[workload]\ntype = "trace"\npath = "ops.csv"\ncsv = { op = 4 }\n', "o.toml")
    out = tmp_path / "ops.bin"
    r = cli("trace", "convert", cfg, out)
    if r.code == 0 and "write" not in r.err and "delete" not in r.err:
        src = json.loads(ok(cli("trace", "stats", cfg, "--json")).out)
        dst = json.loads(ok(cli("trace", "stats", out, "--json")).out)
        assert (dst["reads"], dst["writes"], dst["deletes"]) == (
            src["reads"],
            src["writes"],
            src["deletes"],
        ), "convert silently turned writes/deletes into reads"


# --------------------------------------------------------------------------
# tierlab bench
# --------------------------------------------------------------------------


def test_bench_table(tierlab_cmd: Callable[..., Ran], oracle_trace: Path) -> None:
    r = ok(tierlab_cmd("bench", oracle_trace, "--repeat", "1"))
    for p in ("lru", "fifo", "clock"):
        assert p in r.out
    # Every closed row's ratio whole in 80 columns (it was cut to "0.4..."
    # when a capacity column took the room), the shared capacity in the title.
    assert len(re.findall(r" \d+\.\d\dx", r.out)) == 3, r.out
    assert "…" not in r.out and "capacities " in r.out


def test_bench_json(cli: Callable[..., Ran], oracle_trace: Path) -> None:
    rows = json.loads(ok(cli("bench", oracle_trace, "--repeat", "1", "--json")).out)
    # Each policy serial, then as a closed loop of 24 clients.
    assert [(r["policy"], r["load"]) for r in rows] == [
        (p, load) for p in ("lru", "fifo", "clock") for load in ("serial", "closed")
    ]
    for r in rows:
        assert r["requests"] == TINY_REQUESTS
        assert 0.0 < r["miss_ratio"] <= 1.0
        assert len(r["runs_s"]) == 1
        assert r["median_s"] > 0
    # 10% of the unique keys, as objects.
    uniq = expected_stats(oracle_trace)["unique_keys"]
    assert rows[0]["capacity"] == [uniq // 10]


def test_bench_three_tiers(cli: Callable[..., Ran], oracle_trace: Path) -> None:
    rows = json.loads(
        ok(
            cli(
                "bench", oracle_trace, "--repeat", "1", "--json", "--tiers", "3",
                "--capacity", "70", "--policies", "lru",
            )
        ).out
    )  # fmt: skip
    assert rows[0]["capacity"] == [10, 20, 40]


# --------------------------------------------------------------------------
# --help and --version
# --------------------------------------------------------------------------

HELP = [
    [],
    ["run"],
    ["techs"],
    ["trace"],
    ["trace", "stats"],
    ["trace", "convert"],
    ["trace", "generate"],
    ["bench"],
    ["capture"],
    ["capture", "files"],
    ["capture", "memory"],
    ["mrc"],
    ["sweep"],
    ["export"],
    ["report"],
    ["reproduce"],
    ["model"],
    *[["model", name] for name in MODELS],
]


@pytest.mark.parametrize("words", HELP, ids=lambda w: " ".join(w) or "tierlab")
def test_help(tierlab_cmd: Callable[..., Ran], words: list[str]) -> None:
    r = ok(tierlab_cmd(*words, "--help"))
    assert r.out.startswith("usage: tierlab")
    assert r.err == ""


def test_every_command_has_help() -> None:
    """HELP above lists every command and subcommand the parser has."""
    import argparse

    from tierlab.cli import build_parser

    def walk(p: argparse.ArgumentParser, prefix: list[str]) -> list[list[str]]:
        found = [prefix]
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    found += walk(sub, [*prefix, name])
        return found

    assert sorted(walk(build_parser(), [])) == sorted(HELP)


def test_version(tierlab_cmd: Callable[..., Ran]) -> None:
    import tierlab as tl

    r = ok(tierlab_cmd("--version"))
    assert r.out.strip() == f"tierlab {tl.__version__}"


def test_no_command_is_a_usage_error(tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd()
    assert r.code == 2
    assert r.out == ""
    assert "usage: tierlab" in r.err
    assert "Traceback" not in r.err
