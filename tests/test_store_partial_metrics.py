"""Metrics present in only some points of a sweep: a `[vm.memorage]` axis
switches the pool off at one point, whose summary has no `memorage` object.
The store keeps the pool's counters where they exist and nothing elsewhere
(NaN in tierlab.load); a path no point has is still an error (exit 2), and
the points run with it are recorded as failed, so the corrected experiment
runs them again."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import tierlab
from test_vm_memorage import small

POOL = ["memorage.borrows", "memorage.borrowed_bytes_max", "memorage.swap_outs_avoided"]


def pool_sweep(metrics: list[str]) -> dict[str, Any]:
    return {
        "experiment": {"name": "pool", "metrics": metrics},
        "base": small(occupancy=0.0),
        "axis": [{"key": "vm.memorage.enabled", "values": [False, True], "labels": ["off", "on"]}],
    }


def test_metrics_of_one_axis_value_are_kept_and_null_elsewhere(tmp_path: Path) -> None:
    store = tmp_path / "pool.sqlite"
    rep = tierlab.sweep(pool_sweep([*POOL, "vm.major_faults"]), store=store, workers=1)
    assert (rep.done, rep.failed) == (2, 0)
    df = tierlab.load(store)
    # The pool-less point comes first; the pool's columns keep the places
    # the experiment gave them.
    metric_cols = [c for c in df.columns if c == "vm.major_faults" or c.startswith("memorage.")]
    assert metric_cols == [*POOL, "vm.major_faults"]
    df = df.set_index("vm.memorage.enabled")
    assert list(df.index) == ["off", "on"]
    assert set(df["status"]) == {"ok"}
    on, off = df.loc["on"], df.loc["off"]
    assert on["memorage.borrows"] >= 1 and on["memorage.borrowed_bytes_max"] > 0
    assert not math.isnan(on["memorage.swap_outs_avoided"])
    for m in POOL:
        assert math.isnan(off[m]), m
    assert off["vm.major_faults"] > on["vm.major_faults"]
    # The row of the pool-less point holds no entry at all for the pool's
    # paths (not a null a summary could give): the store's JSON as written.
    db = sqlite3.connect(store)
    kept = {
        json.loads(labels)["vm.memorage.enabled"]: json.loads(metrics)
        for labels, metrics in db.execute("SELECT labels, metrics FROM runs")
    }
    assert set(kept["off"]) == {"vm.major_faults"}
    assert set(kept["on"]) == {"vm.major_faults", *POOL}
    # Sweeping again runs nothing: both points are in the store with a result.
    again = tierlab.sweep(pool_sweep([*POOL, "vm.major_faults"]), store=store, workers=1)
    assert (again.skipped, again.done) == (2, 0)


def test_a_path_no_point_has_fails_and_the_points_run_again(tmp_path: Path) -> None:
    store = tmp_path / "pool.sqlite"
    with pytest.raises(tierlab.ConfigError, match=r"unknown 'memorage\.borows'"):
        tierlab.sweep(pool_sweep(["memorage.borows"]), store=store, workers=1)
    df = tierlab.load(store)
    assert set(df["status"]) == {"error"}
    assert df["error"].str.contains("memorage.borows").all()
    rep = tierlab.sweep(pool_sweep(["memorage.borrows"]), store=store, workers=1)
    assert (rep.skipped, rep.done) == (0, 2)
    df = tierlab.load(store).set_index("vm.memorage.enabled")
    assert df.loc["on", "memorage.borrows"] >= 1
    assert math.isnan(df.loc["off", "memorage.borrows"])
