"""`tierlab run --scale F`: a generated workload and the absolute
capacities scaled together (the planner's 200 GB footprint run scaled down,
README "A capacity planner's questions")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran
from test_bad_input import assert_bad
from test_planner import ROOT, config


def test_scale_multiplies_the_workload_and_absolute_capacities(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    c = config(tmp_path)
    runs = {}
    for f in ("1", "2"):
        r = tierlab_cmd("run", c, "--json", "--no-progress", "--scale", f)
        assert r.code == 0, r.err
        runs[f] = json.loads(r.out)
    one, two = runs["1"], runs["2"]
    assert two["requests"] == 2 * one["requests"]
    assert "8,000 objects" in two["workload"] and "4,000 objects" in one["workload"]
    # The flash tier's absolute "8MiB" doubles; the DRAM tier's "5%" follows
    # the footprint the run touched.
    assert two["tiers"][1]["capacity"] == 2 * one["tiers"][1]["capacity"] == 2 * 8 * 2**20
    assert two["tiers"][0]["capacity"] > one["tiers"][0]["capacity"]
    # A --set value is applied after the scaling, as given.
    r = tierlab_cmd(
        "run", c, "--json", "--no-progress", "--scale", "2", "--set", 'tier[1].capacity="4MiB"'
    )
    assert r.code == 0, r.err
    assert json.loads(r.out)["tiers"][1]["capacity"] == 4 * 2**20


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--scale", "0"], ["--scale", "positive"]),
        (["--scale", "-3"], ["--scale", "positive"]),
        (["--scale", "nan"], ["--scale", "positive"]),
        (["--scale", "lots"], ["--scale", "positive"]),
        (["--scale", "2", "--trace", "TRACE"], ["--scale", "--trace"]),
    ],
)
def test_a_bad_scale_exits_2(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], args: list[str], needles: list[str]
) -> None:
    trace = ROOT / "tests" / "data" / "zipf-small.oracleGeneral.bin"
    args = [str(trace) if a == "TRACE" else a for a in args]
    r = tierlab_cmd("run", config(tmp_path), "--no-progress", *args)
    assert_bad(r, *needles)


def test_scale_refuses_what_has_no_footprint_to_scale(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    c = config(tmp_path)
    scan = tmp_path / "scan.toml"
    scan.write_text(c.read_text().replace('type = "zipf"\nobjects = 4000\n', 'type = "scan"\n'))
    assert_bad(tierlab_cmd("run", scan, "--no-progress", "--scale", "2"), "--scale", "scan")
    vm = ROOT / "examples" / "vm-paging.toml"
    assert_bad(tierlab_cmd("run", vm, "--no-progress", "--scale", "2"), "--scale", "[vm]")
