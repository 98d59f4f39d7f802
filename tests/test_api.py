"""The Python API: ``tierlab.simulate`` and its RunResult, ``trace_stats``,
``techs``, and the package's doctests."""

from __future__ import annotations

import doctest
import importlib
import json
import math
import pkgutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import tierlab
from conftest import TINY_REQUESTS, TWO_TIERS, ZIPF_WORKLOAD, Ran

TIMELINE_COLUMNS = {
    "requests", "lookups", "miss_ratio", "amat_ns", "cumulative_miss_ratio", "energy_j", "power_w",
}  # fmt: skip


def small_dict(**run: object) -> dict[str, object]:
    return {
        "workload": {"type": "zipf", "objects": 500, "requests": 5000, "object_size": 4096},
        "tier": [
            {"name": "dram", "tech": "DRAM-DDR3", "capacity": "10%", "policy": "lru"},
            {"name": "ssd", "tech": "SSD-SATA", "capacity": "40%", "policy": "fifo"},
        ],
        "run": dict(run),
    }


# --------------------------------------------------------------------------
# simulate: the three kinds of config, and --json
# --------------------------------------------------------------------------


def test_path_text_and_dict_agree(zipf_config: Path) -> None:
    text = zipf_config.read_text()
    import tomllib

    as_dict = tomllib.loads(text)
    a = tierlab.simulate(zipf_config)
    b = tierlab.simulate(str(zipf_config))
    c = tierlab.simulate(text)
    d = tierlab.simulate(as_dict)
    assert isinstance(a, tierlab.RunResult)
    assert a.summary == b.summary == c.summary == d.summary
    # The dict passed in is not changed.
    assert as_dict == tomllib.loads(text)


def test_summary_equals_cli_json(
    zipf_config: Path, tierlab_cmd: Callable[..., Ran], oracle_trace: Path, tiers_config: Path
) -> None:
    cli = tierlab_cmd("run", zipf_config, "--json")
    assert cli.code == 0, cli.err
    assert tierlab.simulate(zipf_config).summary == json.loads(cli.out)
    cli = tierlab_cmd("run", tiers_config, "--trace", oracle_trace, "--unit-size", "--json")
    assert cli.code == 0, cli.err
    api = tierlab.simulate(tiers_config, trace=oracle_trace, unit_size=True)
    assert api.summary == json.loads(cli.out)


def test_to_json_parses(zipf_config: Path) -> None:
    r = tierlab.simulate(zipf_config)
    assert json.loads(r.to_json()) == r.summary


def test_trace_argument(tiers_config: Path, oracle_trace: Path, csv_trace: Path) -> None:
    o = tierlab.simulate(tiers_config, trace=oracle_trace)
    c = tierlab.simulate(tiers_config, trace=str(csv_trace), format="csv")
    assert o.summary["requests"] == c.summary["requests"] == TINY_REQUESTS
    assert o.summary["tiers"] == c.summary["tiers"]
    # A dict config with no [workload] and a trace works the same.
    import tomllib

    d = tierlab.simulate(tomllib.loads(TWO_TIERS), trace=oracle_trace)
    assert d.summary["tiers"] == o.summary["tiers"]


def test_unit_size_without_trace() -> None:
    cfg = {
        "workload": {"type": "loop", "objects": 10, "requests": 100},
        "tier": [{"tech": "DRAM-DDR3", "capacity": 10}],
    }
    # 10 bytes hold no 4 KiB object; 10 objects hold the whole loop.
    assert tierlab.simulate(cfg).summary["misses"] == 100
    r = tierlab.simulate(cfg, unit_size=True)
    assert r.summary["unit_size"] is True
    assert r.summary["misses"] == 10


# --------------------------------------------------------------------------
# RunResult: tiers and timeline as DataFrames
# --------------------------------------------------------------------------


def test_tiers_dataframe(zipf_config: Path) -> None:
    r = tierlab.simulate(zipf_config)
    df = r.tiers
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(r.summary["tiers"]) == 2
    # Indexed by tier name (issue 21: it was a RangeIndex, and a tier's row
    # had to be found by position or by filtering the "name" column).
    assert list(df.index) == ["dram", "flash"] and df.index.name == "name"
    for col in ("hits", "misses", "miss_ratio", "byte_miss_ratio", "evictions", "writebacks"):
        assert list(df[col]) == [t[col] for t in r.summary["tiers"]], col
    assert df.loc["dram", "hits"] + df.loc["dram", "misses"] == r.summary["requests"]
    assert df.loc["flash", "tech"] == r.summary["tiers"][1]["tech"]


@pytest.mark.parametrize(
    ("interval", "points"),
    [(500, [500 * i for i in range(1, 11)]), (700, [700 * i for i in range(1, 8)] + [5000])],
    ids=["whole", "partial"],
)
def test_timeline_dataframe(interval: int, points: list[int]) -> None:
    r = tierlab.simulate(small_dict(interval=interval))
    tl = r.timeline
    assert isinstance(tl, pd.DataFrame)
    assert set(tl.columns) == TIMELINE_COLUMNS
    assert len(tl) == math.ceil(5000 / interval)
    assert list(tl["requests"]) == points
    assert tl["cumulative_miss_ratio"].iloc[-1] == pytest.approx(r.summary["miss_ratio"])
    assert ((tl["miss_ratio"] >= 0) & (tl["miss_ratio"] <= 1)).all()
    assert (tl["amat_ns"] > 0).all()
    # Interval figures weighted by their request counts give the whole run's.
    n = tl["requests"].diff().fillna(tl["requests"].iloc[0])
    assert (tl["miss_ratio"] * n).sum() / 5000 == pytest.approx(r.summary["miss_ratio"])
    assert (tl["amat_ns"] * n).sum() / 5000 == pytest.approx(r.summary["amat_ns"])
    assert list(tl["lookups"]) == list(n.astype(int))  # no deletes here


def test_timeline_interval_of_deletes_has_no_lookups() -> None:
    """PostMark ends by deleting its files: those intervals have 0 lookups."""
    w = {"type": "postmark", "preset": "default", "seed": 1}
    r = tierlab.simulate(
        {
            "workload": w,
            "tier": [{"tech": "DRAM-DDR3", "capacity": "10%"}],
            "run": {"interval": 20},
        }
    )
    tl = r.timeline
    assert tl["lookups"].sum() == r.summary["reads"] + r.summary["writes"]
    last = tl.iloc[-2]  # the final full interval falls in the deletes
    assert last["lookups"] == 0 and last["miss_ratio"] == 0 and last["amat_ns"] == 0


def test_timeline_default_interval() -> None:
    # run.interval defaults to 100,000: a 5,000-request run has one partial point.
    r = tierlab.simulate(small_dict())
    assert list(r.timeline["requests"]) == [5000]


# --------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------


def test_same_seed_same_result(zipf_config: Path) -> None:
    a = tierlab.simulate(zipf_config)
    b = tierlab.simulate(zipf_config)
    assert a.summary == b.summary
    assert a.timeline.equals(b.timeline)


def test_other_seed_other_result(write_config: Callable[..., Path]) -> None:
    a = tierlab.simulate(write_config(ZIPF_WORKLOAD + TWO_TIERS, "a.toml"))
    b = tierlab.simulate(
        write_config(ZIPF_WORKLOAD.replace("seed = 3", "seed = 4") + TWO_TIERS, "b.toml")
    )
    assert a.summary["misses"] != b.summary["misses"]


# --------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------


def test_progress_counts_increase() -> None:
    calls: list[tuple[int, int | None]] = []
    cfg = {
        "workload": {"type": "zipf", "objects": 1000, "requests": 2_500_000, "object_size": 64},
        "tier": [{"tech": "DRAM-DDR3", "capacity": "10%"}],
    }
    r = tierlab.simulate(cfg, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= 3  # chunks of about a million requests
    # Two phases: the footprint pre-pass (the capacity is a share) reads
    # the 2.5M requests first, its calls with no total; then the run's,
    # with the run's total. Within each the count only grows.
    pre = [d for d, t in calls if t is None]
    run = [d for d, t in calls if t is not None]
    assert calls[: len(pre)] == [(d, None) for d in pre]
    for phase in (pre, run):
        assert phase == sorted(phase) and len(set(phase)) == len(phase)
    assert run[-1] == r.summary["requests"] == 2_500_000
    assert all(t == 2_500_000 for t in [t for _, t in calls if t is not None])


def test_progress_exception_stops_the_run() -> None:
    class Stop(Exception):
        pass

    def cb(done: int, total: int | None) -> None:
        raise Stop

    cfg = {
        "workload": {"type": "uniform", "objects": 100, "requests": 2_500_000},
        "tier": [{"tech": "DRAM-DDR3", "capacity": "10%"}],
    }
    with pytest.raises(Stop):
        tierlab.simulate(cfg, progress=cb)


# --------------------------------------------------------------------------
# trace_stats and techs
# --------------------------------------------------------------------------


def test_trace_stats(oracle_trace: Path, csv_trace: Path, trace_config: Path) -> None:
    s = tierlab.trace_stats(oracle_trace)
    assert s["requests"] == TINY_REQUESTS
    assert s["reads"] == TINY_REQUESTS
    assert 0 < s["unique_keys"] <= 200
    assert s["min_size"] <= s["max_size"]
    assert s["footprint_bytes"] <= s["bytes_requested"]
    assert tierlab.trace_stats(csv_trace) == s
    assert tierlab.trace_stats(str(csv_trace), "csv") == s
    assert tierlab.trace_stats(trace_config) == s


def test_trace_stats_of_workload(zipf_config: Path) -> None:
    s = tierlab.trace_stats(zipf_config)
    assert s["requests"] == 5000
    assert s["writes"] > 0
    assert tierlab.trace_stats(zipf_config.read_text()) == s
    import tomllib

    assert tierlab.trace_stats(tomllib.loads(zipf_config.read_text())) == s


def test_techs() -> None:
    import pandas as pd

    t = tierlab.techs()
    assert isinstance(t, pd.DataFrame) and len(t) >= 13
    by_name = t.set_index("name")
    assert by_name.loc["DRAM-DDR3", "read_ns"] == 10.0
    assert by_name.loc["NAND-SLC", "access_unit"] == 2048
    assert all(s.strip() for s in t["source"])
    # Every field of every entry of `tierlab techs --json` is a column, in
    # the engine's order; a figure an entry lacks is NaN.
    entries = json.loads(tierlab._core.techs())
    cols = list(t.columns)
    for e in entries:
        assert [c for c in cols if c in e] == list(e)
    assert set(cols) == {k for e in entries for k in e}
    assert pd.isna(by_name.loc["NOR", "bandwidth_mb_s"])
    assert by_name.loc["NOR", "burst_bytes"] == 32


def test_techs_override_in_config() -> None:
    base = {
        "workload": {"type": "loop", "objects": 10, "requests": 1000, "object_size": 64},
        "tier": [{"tech": "SLOW", "capacity": 640}],
        "techs": {"SLOW": {"base": "DRAM-DDR3", "read_ns": 10, "write_ns": 10}},
    }
    fast = tierlab.simulate(base).summary["amat_ns"]
    base["techs"]["SLOW"]["read_ns"] = "1ms"  # type: ignore[index]
    slow = tierlab.simulate(base).summary["amat_ns"]
    assert slow > fast
    # The built-in catalog is not changed by a config.
    assert tierlab.techs().set_index("name").loc["DRAM-DDR3", "read_ns"] == 10.0


def test_tech_and_policy_names_in_any_case() -> None:
    """Defect 12 of issue 21: `tech = "dram-ddr3"` and `policy = "LRU"` are
    the catalog's DRAM-DDR3 and the registry's lru."""
    cfg = {
        "workload": {"type": "zipf", "objects": 200, "requests": 5000, "seed": 3},
        "tier": [{"tech": "DRAM-DDR3", "capacity": 50, "policy": "lru"}],
        "backing": {"tech": "HDD"},
    }
    want = tierlab.simulate(cfg).summary
    cfg["tier"] = [{"tech": "dram-ddr3", "capacity": 50, "policy": "LRU"}]
    cfg["backing"] = {"tech": "hdd"}
    got = tierlab.simulate(cfg).summary
    assert got["amat_ns"] == want["amat_ns"]
    assert got["miss_ratio"] == want["miss_ratio"]
    # Messages still list the names as the catalog and registry spell them.
    with pytest.raises(tierlab.ConfigError, match="known: .*DRAM-DDR2, DRAM-DDR3"):
        tierlab.simulate({**cfg, "tier": [{"tech": "dram-ddr9", "capacity": 50}]})
    with pytest.raises(tierlab.ConfigError, match="expected one of lru, fifo"):
        tierlab.simulate({**cfg, "tier": [{"tech": "DRAM-DDR3", "capacity": 50, "policy": "LRUU"}]})


# --------------------------------------------------------------------------
# doctests
# --------------------------------------------------------------------------


def _package_modules() -> list[str]:
    names = ["tierlab"]
    # Subpackages too (tierlab.cli.*, tierlab.reproductions.*).
    for m in pkgutil.walk_packages(tierlab.__path__, "tierlab."):
        if not m.name.startswith("tierlab._core") and not m.name.endswith("__main__"):
            names.append(m.name)
    return sorted(names)


@pytest.mark.parametrize("name", _package_modules())
def test_doctests(name: str) -> None:
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0, f"{res.failed} of {res.attempted} doctest examples failed in {name}"
    if name in ("tierlab", "tierlab.api"):
        assert res.attempted > 0, f"{name} has no doctest examples"


def test_scan_objects_is_not_silently_ignored() -> None:
    """Regression: `type = "scan"` accepts `objects` but ignores it (a scan makes
    `requests` distinct keys), while the run's description says "scan over 3
    objects". Either objects bounds the keys, or giving it is an error like
    `alpha` for non-zipf types."""
    cfg = {
        "workload": {"type": "scan", "objects": 3, "requests": 50, "unit_size": True},
        "tier": [{"tech": "DRAM-DDR3", "capacity": 5}],
    }
    try:
        s = tierlab.trace_stats(cfg)
    except tierlab.ConfigError as e:
        assert "workload.objects" in str(e)
        return
    r = tierlab.simulate(cfg)
    assert f"over {s['unique_keys']} objects" in r.summary["workload"], (
        s["unique_keys"],
        r.summary["workload"],
    )


@pytest.mark.parametrize("caps", [(10, 20, 40), (1, 1, 1), (50, 5, 100)])
def test_exclusive_lru_tiers_equal_one_lru_of_their_sum(caps: tuple[int, int, int]) -> None:
    """With LRU in every tier, an exclusive (victim) stack is one LRU stack cut
    in pieces: its misses are those of one LRU tier of the total size."""
    w = {"type": "zipf", "alpha": 0.9, "objects": 2000, "requests": 30000,
         "unit_size": True, "seed": 11}  # fmt: skip
    techs = ["DRAM-DDR3", "NAND-SLC", "SSD-SATA"]
    tiers = [{"tech": t, "capacity": c, "policy": "lru"} for t, c in zip(techs, caps, strict=True)]
    three = tierlab.simulate({"workload": w, "hierarchy": {"fill": "exclusive"}, "tier": tiers})
    one = tierlab.simulate(
        {"workload": w, "tier": [{"tech": "DRAM-DDR3", "capacity": sum(caps), "policy": "lru"}]}
    )
    assert three.summary["misses"] == one.summary["misses"]
    # and the first tier alone misses as an LRU of its own size does
    first = tierlab.simulate(
        {"workload": w, "tier": [{"tech": "DRAM-DDR3", "capacity": caps[0], "policy": "lru"}]}
    )
    assert three.summary["tiers"][0]["misses"] == first.summary["misses"]


def test_format_is_documented_and_never_silently_ignored() -> None:
    """Regression (issue 38, item 3): the simulate and mrc docstrings said
    format is "oracle" or "csv", guessed from the name, while the engine
    reads seven formats and recognises them from content; and format= with
    no trace file was ignored without a word."""
    from tierlab import _core

    for fn in (tierlab.simulate, tierlab.mrc):
        doc = fn.__doc__ or ""
        for name in _core.trace_formats():
            assert f'``"{name}"``' in doc, (fn.__name__, name)
        assert "content" in doc and "guessed from its name" not in doc
    cfg = {
        "workload": {"type": "zipf", "objects": 100, "requests": 1000},
        "tier": [{"tech": "DRAM-DDR3", "capacity": "10%"}],
    }
    with pytest.raises(tierlab.ConfigError, match="format: 'csv' applies to a trace file"):
        tierlab.simulate(cfg, format="csv")
    with pytest.raises(tierlab.ConfigError, match="format: 'csv' applies to a trace file"):
        tierlab.mrc(cfg, format="csv")


def test_api_follows_python_and_pandas_conventions(tmp_path: Path) -> None:
    """Regression (issue 38, item 6): r.tiers had a nested dict column,
    finished_at was a string, a missing trace raised a TraceError that no
    `except FileNotFoundError` caught, and ConfigError had no key path."""
    from tierlab import _core

    cfg = {
        "workload": {"type": "zipf", "objects": 200, "requests": 2000, "object_size": "4KiB"},
        "tier": [{"name": "dram", "tech": "DRAM-DDR3", "capacity": "10%"}],
    }
    r = tierlab.simulate(cfg)
    tiers = r.tiers
    assert not any(isinstance(v, dict) for v in tiers.iloc[0].tolist())
    assert {"energy.read_j", "energy.write_j", "energy_j"} <= set(tiers.columns)
    assert tiers.loc["dram", "energy.read_j"] == r.summary["tiers"][0]["energy"]["read_j"]
    # The old nested column answers for one release, with a warning.
    with pytest.warns(DeprecationWarning, match=r"r.tiers\['energy'\]: the nested column"):
        old = tiers["energy"]
    assert old.loc["dram"] == r.summary["tiers"][0]["energy"]
    # Built-in exceptions: a missing trace is a FileNotFoundError.
    missing = tmp_path / "nope.oracleGeneral.bin"
    with pytest.raises(FileNotFoundError) as caught:
        tierlab.simulate(cfg, trace=missing)
    assert isinstance(caught.value, tierlab.TraceError)
    assert caught.value.filename == str(missing) and str(missing) in str(caught.value)
    bad = {**cfg, "tier": [{"tech": "DRAM-DDR3", "capacity": "lots"}]}
    with pytest.raises(ValueError) as err:
        tierlab.simulate(bad)
    assert isinstance(err.value, tierlab.ConfigError) and err.value.key == "tier[0].capacity"
    assert _core.ConfigError is tierlab.ConfigError and _core.TraceError is tierlab.TraceError
    # load(): finished_at is a time.
    exp = tmp_path / "e.toml"
    exp.write_text(
        '[experiment]\nname = "e"\n[base.workload]\ntype = "zipf"\nobjects = 200\n'
        'requests = 2000\n[[base.tier]]\ntech = "DRAM-DDR3"\ncapacity = "10%"\n'
        '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["5%", "10%"]\n'
    )
    tierlab.sweep(exp, store=tmp_path / "e.sqlite")
    df = tierlab.load(tmp_path / "e.sqlite")
    assert pd.api.types.is_datetime64_any_dtype(df["finished_at"])


def test_load_names_every_column_one_way(tmp_path: Path) -> None:
    """Regression (issue 38, item 6): load() named one parameter
    `tier[0].capacity` (its axis) and `tiers.0.capacity` (its metric). Every
    column is dotted now, an index a part of its own; the old axis names
    answer for one release with a DeprecationWarning."""
    from tierlab.config import parse_path

    exp = tmp_path / "e.toml"
    exp.write_text(
        '[experiment]\nname = "e"\nmetrics = ["miss_ratio", "tiers.0.capacity"]\n'
        "timeline = true\n"
        '[base.workload]\ntype = "zipf"\nobjects = 200\nrequests = 2000\n'
        "[base.run]\ninterval = 1000\n"
        '[[base.tier]]\ntech = "DRAM-DDR3"\ncapacity = "10%"\npolicy = "lru"\n'
        '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["5%", "10%"]\n'
        '[[axis]]\nkey = "tier.0.policy"\nvalues = ["lru", "fifo"]\n'
    )
    store = tmp_path / "e.sqlite"
    tierlab.sweep(exp, store=store)
    df = tierlab.load(store)
    axes = ["tier.0.capacity", "tier.0.policy"]
    assert [c for c in df.columns if c.startswith("tier")] == [*axes, "tiers.0.capacity"]
    assert not [c for c in df.columns if "[" in c]
    # A column name is a key path too: it parses as the bracketed one does.
    assert parse_path("tier.0.capacity") == parse_path("tier[0].capacity")
    assert set(df["tier.0.capacity"]) == {"5%", "10%"}
    assert df["tiers.0.capacity"].dtype.kind in "iu"
    # The old names, for one release.
    with pytest.warns(DeprecationWarning, match=r"'tier\[0\].capacity' is named 'tier.0.capacity'"):
        old = df["tier[0].capacity"]
    assert old.tolist() == df["tier.0.capacity"].tolist()
    ok = df[df["status"] == "ok"]
    with pytest.warns(DeprecationWarning):
        means = ok.groupby("tier[0].capacity")["miss_ratio"].mean()
    assert means.index.name == "tier.0.capacity" and len(means) == 2
    with pytest.warns(DeprecationWarning):
        wide = ok.pivot(index="tier[0].capacity", columns="tier.0.policy", values="miss_ratio")
    assert wide.shape == (2, 2)
    with pytest.raises(KeyError):
        df["tier[1].capacity"]  # not an axis: no alias
    t = tierlab.store.load_timelines(store)
    assert set(axes) <= set(t.columns)
    with pytest.warns(DeprecationWarning):
        assert set(t["tier[0].capacity"]) == {"5%", "10%"}
