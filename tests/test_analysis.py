"""Analyses on small inputs whose answers are worked out by hand, and the
timing model of ``access_ns`` against the engine's own charges."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import tierlab
from tierlab.analysis import (
    access_ns,
    break_even_hits,
    break_even_table,
    crossing,
    equivalent_capacity,
    gain_over_baseline,
    ratio_summary,
)


def s1_frame() -> pd.DataFrame:
    # Two repetitions per point; their means are the curves
    # slowdown 1: 10, 20, 30 and slowdown 2: 5, 15, 25 at 100, 200, 300 B.
    rows = []
    for s, ys in ((1, (10, 20, 30)), (2, (5, 15, 25))):
        for c, y in zip((100, 200, 300), ys, strict=True):
            for rep, dy in ((0, -1.0), (1, 1.0)):
                rows.append(
                    {
                        "status": "ok",
                        "rep": rep,
                        "workload.type": "w",
                        "tier.0.slowdown": s,
                        "tiers.0.capacity": c,
                        "throughput_rps": y + dy,
                    }
                )
    # A failed point is left out.
    rows.append(
        {
            "status": "error",
            "rep": 0,
            "workload.type": "w",
            "tier[0].slowdown": 2,
            "tiers.0.capacity": 100,
            "throughput_rps": 1e9,
        }
    )
    return pd.DataFrame(rows)


def test_equivalent_capacity_interpolates_between_swept_sizes() -> None:
    eq = equivalent_capacity(s1_frame(), by=["workload.type"])
    assert list(eq["capacity"]) == [100, 200, 300]
    # 10 is reached halfway from 100 (5) to 200 (15): 150; 20 at 250; 30 never.
    assert list(eq["equivalent_capacity"][:2]) == [150.0, 250.0]
    assert list(eq["ratio"][:2]) == [1.5, 1.25]
    assert math.isnan(eq["ratio"].iloc[2])
    s = ratio_summary(eq, by=["workload.type"])
    assert s.to_dict("records") == [
        {"workload.type": "w", "slowdown": 2, "mean": 1.375, "min": 1.25, "max": 1.5, "n": 2}
    ]


def test_equivalent_capacity_needs_the_baseline() -> None:
    df = s1_frame()
    with pytest.raises(ValueError, match="slowdown"):
        equivalent_capacity(df[df["tier.0.slowdown"] == 2])


def test_crossing_edges() -> None:
    assert crossing([1, 2], [3, 5], 3) == 1.0  # reached at the first point exactly
    assert math.isnan(crossing([1, 2], [4, 5], 3))  # starts above: no extrapolation
    assert crossing([1, 2, 3], [0, 2, 2], 2) == 2.0  # the first size reaching it
    assert math.isnan(crossing([], [], 1))


def test_break_even_hits_by_hand() -> None:
    # t = 1, T = 1.3, Tm = 1.3 + 1: n*0.3 > 1 -> n = 4 (3 hits save only 0.9).
    assert break_even_hits(1.0, 1.3, 2.3) == 4
    # Exactly on the line is not a gain: n*0.5 > 1 needs n = 3.
    assert break_even_hits(1.0, 1.5, 2.5) == 3
    assert break_even_hits(1.0, 1000.0, 1001.0) == 1
    assert break_even_hits(2.0, 1.0, 3.0) == math.inf


def test_access_ns_follows_the_timing_model() -> None:
    # docs/hierarchy.md: 25,000 + 4,096 x 20 and one whole 2 KiB page for 100 B.
    assert access_ns("NAND-SLC", 4096) == 106_920.0
    assert access_ns("NAND-SLC", 100) == 65_960.0
    # Write latency, slowdown (latency and transfer) and overhead.
    assert access_ns("NAND-SLC", 2048, "write", slowdown=2, overhead_ns=5) == (
        (200_000 + 2048 * 20) * 2 + 5
    )
    # Every medium has a transfer model (defect 3 of issue 21: PCM had none
    # and moved a 4 KiB page in its 20 ns latency): 20 ns + 4,096 B at 400 MB/s.
    assert access_ns("PCM-SLC", 4096) == 20.0 + 4096 * 1000 / 400
    # A burst medium moves whole bursts: NOR's 32-byte pages, 475 ns each.
    assert access_ns("NOR", 4096) == 200.0 + 128 * 475.0
    assert access_ns("NOR", 1) == 200.0 + 475.0
    # Names in any letter case.
    assert access_ns("nand-slc", 4096) == 106_920.0
    with pytest.raises(tierlab.ConfigError, match="NOPE"):
        access_ns("NOPE")


def test_access_ns_matches_the_engine() -> None:
    # A loop over 2 keys in a tier that holds both: 2 cold reads from the disk
    # (each also written into the tier), then 98 hits.
    r = tierlab.simulate(
        {
            "workload": {"type": "loop", "objects": 2, "requests": 100, "object_size": "4KiB"},
            "tier": [{"tech": "FILE-MEMORY", "capacity": "1MiB", "slowdown": 3}],
            "backing": {"tech": "HDD"},
        }
    )
    hit = access_ns("FILE-MEMORY", 4096, slowdown=3)
    miss = access_ns("HDD", 4096) + access_ns("FILE-MEMORY", 4096, "write", slowdown=3)
    assert r.summary["access_time_ns"] == pytest.approx(98 * hit + 2 * miss, rel=1e-12)


def test_break_even_table_uses_the_catalog() -> None:
    be = break_even_table(["DRAM-DDR3"], ["HDD", "PCM-SLC", "STT-MRAM"])
    t = access_ns("DRAM-DDR3", 4096)
    assert list(be["t_ns"]) == [t, t, t]
    assert be["break_even_hits"].iloc[0] == 1.0
    # A 4 KiB PCM read (20 ns + 10.24 us at 400 MB/s) is slower than DRAM's
    # 330 ns: one hit pays. (Before issue 21 PCM had no bandwidth, read a
    # page in 20 ns and a DRAM cache in front of it never paid.)
    assert be["break_even_hits"].iloc[1] == 1.0
    # STT-MRAM reads a page as fast as DRAM (same latency, DDR3-1600
    # interface): a cache no faster than its storage never pays.
    assert be["break_even_hits"].iloc[2] == math.inf
    # The catalog as a DataFrame (tierlab.techs()) serves as well.
    assert break_even_table(["DRAM-DDR3"], ["NOR"], catalog=tierlab.techs())["T_ns"].iloc[
        0
    ] == access_ns("NOR", 4096)


def test_gain_over_baseline_by_hand() -> None:
    df = pd.DataFrame(
        {
            "storage": ["hdd"] * 3 + ["scm"] * 3,
            "cache": ["none", "lru", "adm"] * 2,
            "access_time_ns": [100.0, 30.0, 40.0, 10.0, 9.8, 7.0],
            "status": "ok",
        }
    )
    g = gain_over_baseline(df, config="cache", baseline="none", by=["storage"])
    got = {(r.storage, r.config): round(r.gain, 6) for r in g.itertuples()}
    assert got == {
        ("hdd", "none"): 0.0, ("hdd", "lru"): 0.7, ("hdd", "adm"): 0.6,
        ("scm", "none"): 0.0, ("scm", "lru"): 0.02, ("scm", "adm"): 0.3,
    }  # fmt: skip
    with pytest.raises(ValueError, match="no runs with cache = .nothing."):
        gain_over_baseline(df, config="cache", baseline="nothing", by=["storage"])
