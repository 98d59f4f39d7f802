"""S3's unbanded sensitivity variants (docs/reproduce-s3.md, "Why tierlab
differs (C10): what decides which programs gain"): each changes one thing
of the compared pair, and the restated preset list runs the preset's own
stream."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import tierlab
from tierlab.reproductions import s3


def test_restated_preset_runs_the_presets_stream() -> None:
    cfg = copy.deepcopy(s3.sensitivity_experiment("compared", 0.05)["base"])
    cfg["vm"]["memorage"]["enabled"] = False
    preset = tierlab.simulate(cfg).summary
    cfg["workload"]["multiprogram"] = {"program": s3.preset_programs(cfg["workload"]["scale"])}
    listed = tierlab.simulate(cfg).summary
    assert preset["vm"]["major_faults"] > 0
    assert listed["processes"] == preset["processes"]
    assert listed["vm"] == preset["vm"]


def test_each_variant_changes_one_thing() -> None:
    ref = s3.sensitivity_experiment("compared")
    assert [a["values"] for a in ref["axis"]] == [[False, True], [0.56]]
    for v in s3.SENSITIVITY:
        e = s3.sensitivity_experiment(v)
        assert e["experiment"]["name"] == f"s3-{v}"
        assert s3.sensitivity_experiment(v, 2.0)["experiment"]["name"] == f"s3-{v}-x2"
        assert e["base"]["vm"] == ref["base"]["vm"] and e["base"]["tier"] == ref["base"]["tier"]
    w = s3.sensitivity_experiment("run-length-2")["base"]["workload"]
    # 4 references per 64 B line of 144,282 pages by default (scale 0.1), doubled.
    assert w["multiprogram"] == {"requests": 2 * 4 * 64 * 144_282}
    progs = s3.sensitivity_experiment("random")["base"]["workload"]["multiprogram"]["program"]
    for p, q in zip(progs, s3.preset_programs(0.1), strict=True):
        if p["name"] in s3.NOT_GAINING:
            assert (p["sequential"], p["strided"], p["random"], p["hot"]) == (0, 0, 1, 0)
            assert p["rss"] == q["rss"] and p["write_ratio"] == q["write_ratio"]
        else:
            assert p == q
    rc = s3.sensitivity_experiment("reclaim-cost")
    assert rc["axis"][0]["values"] == [False]
    assert rc["axis"][2]["values"] == list(s3.RECLAIM_NS)
    assert not any(k.startswith("memorage.") for k in rc["experiment"]["metrics"])
    with pytest.raises(ValueError, match="unknown variant"):
        s3.sensitivity_experiment("faster")


def test_sensitivity_runs_and_gives_gains(tmp_path: Path) -> None:
    out = tmp_path / "new"  # made by the run
    t = s3.sensitivity("random", out, scale=0.05, workers=1)
    assert (out / "s3-random-x0.05.sqlite").is_file()
    assert sorted(t["run"].unique()) == ["baseline", "memorage"]
    assert set(t["program"]) == set(s3.PROGRAMS) and len(t) == 16
    m = t[t["run"] == "memorage"]
    assert (m["major_faults"] == 0).all()
    b = t[t["run"] == "baseline"].set_index("program")
    mm = m.set_index("program")
    for _, r in t.iterrows():
        want = 1 - mm.at[r["program"], "runtime_s"] / b.at[r["program"], "runtime_s"]
        assert r["gain"] == pytest.approx(want)
