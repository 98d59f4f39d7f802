"""What a capacity planner relies on (issue: answers a planner can trust):
the FTL under a flash tier, its refusals, the latency-basis and
infeasibility warnings, through the real command."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran
from test_bad_input import assert_bad

ROOT = Path(__file__).resolve().parent.parent
FTL = ROOT / "examples" / "flash-ftl.toml"

SMALL = """\
[workload]
type = "zipf"
objects = 4000
requests = 40_000
object_size = "4KiB"
seed = 3
write_ratio = 0.5

[[tier]]
name = "dram"
tech = "{tech0}"
capacity = "5%"
policy = "lru"

[[tier]]
name = "flash"
tech = "{tech1}"
capacity = "8MiB"
policy = "{policy}"
{ftl}
[backing]
tech = "HDD"
"""


def config(tmp_path: Path, **kw: str) -> Path:
    v = {"tech0": "DRAM-DDR3", "tech1": "NAND-SLC", "policy": "lru", "ftl": ""}
    v.update(kw)
    p = tmp_path / "c.toml"
    p.write_text(SMALL.format(**v))
    return p


def test_ftl_example_reports_write_amplification_and_lifetimes(
    tierlab_cmd: Callable[..., Ran],
) -> None:
    r = tierlab_cmd("run", FTL, "--json", "--no-progress")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    f = s["tiers"][1]["ftl"]
    assert f["write_amplification"] >= 1.0
    assert f["host_pages_written"] > 0
    assert f["op"] == 0.07 and f["victim"] == "greedy"
    assert "ftl" not in s["tiers"][0]
    # The levelled lifetime counts the amplified writes: never longer than
    # the tier's own figure without them.
    levelled = f["perfect_levelling_years"]
    assert levelled is not None and levelled > 0
    # The text table shows the FTL rows.
    t = tierlab_cmd("run", FTL, "--no-progress", columns=160)
    assert t.code == 0, t.err
    assert "FTL write amplification" in t.out


def test_more_over_provisioning_amplifies_less(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    was = []
    for op in (0.07, 0.4):
        c = config(tmp_path, ftl=f"ftl = {{ op = {op} }}")
        r = tierlab_cmd("run", c, "--json", "--no-progress")
        assert r.code == 0, r.err
        was.append(json.loads(r.out)["tiers"][1]["ftl"]["write_amplification"])
    assert was[0] > was[1] >= 1.0, was


@pytest.mark.parametrize(
    ("kw", "needles"),
    [
        ({"tech1": "SSD-NVME-TLC", "ftl": "ftl = { op = 0.1 }"}, ["tier[1].ftl", "own FTL"]),
        ({"policy": "flashcache", "ftl": "ftl = { op = 0.1 }"}, ["tier[1].ftl", "flashcache"]),
        ({"tech1": "DRAM-DDR3", "ftl": "ftl = { op = 0.1 }"}, ["tier[1].ftl", "erase blocks"]),
        ({"ftl": "ftl = { op = 0 }"}, ["tier[1].ftl.op", "less than 1"]),
        ({"ftl": "ftl = { op = 1.0 }"}, ["tier[1].ftl.op"]),
        (
            {"ftl": 'ftl = { op = 0.1, page = "4KiB", block = "2KiB" }'},
            ["tier[1].ftl.block", "smaller than a page"],
        ),
        ({"ftl": "ftl = { op = 0.1, colour = 1 }"}, ["colour"]),
    ],
)
def test_bad_ftl_keys_exit_2_with_the_key_path(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], kw: dict[str, str], needles: list[str]
) -> None:
    r = tierlab_cmd("run", config(tmp_path, **kw), "--no-progress")
    assert_bad(r, *needles)


def test_mixed_latency_bases_warn(tmp_path: Path, tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd("run", config(tmp_path, tech1="CXL-DRAM"), "--json", "--no-progress")
    assert r.code == 0, r.err
    w = [x for x in json.loads(r.out)["warnings"] if x.startswith("latency bases mixed")]
    assert len(w) == 1 and "DRAM-DDR3" in w[0] and "CXL-DRAM" in w[0], w
    assert "latency bases mixed" in r.err
    # One basis: no warning.
    r = tierlab_cmd(
        "run", config(tmp_path, tech0="DRAM-DDR4", tech1="CXL-DRAM"), "--json", "--no-progress"
    )
    assert not [x for x in json.loads(r.out)["warnings"] if x.startswith("latency bases")]


def test_serial_background_work_beyond_the_run_warns(tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd("run", ROOT / "examples" / "s1-postmark.toml", "--json", "--no-progress")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    w = [x for x in s["warnings"] if x.startswith("device backing")]
    assert len(w) == 1 and "[load]" in w[0], s["warnings"]
    busy = s["backing"]["device_busy_ns"]
    assert busy > s["total_time_ns"]
    assert "device backing" in r.err


def test_gc_occupies_the_flash_device_and_shows_in_the_tail(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    # The same run without the FTL: GC's copies and erases are what adds.
    plain = tmp_path / "plain.toml"
    plain.write_text(
        "\n".join(ln for ln in FTL.read_text().splitlines() if not ln.startswith("ftl = "))
    )
    runs = {}
    for name, cfg in (("ftl", FTL), ("plain", plain)):
        r = tierlab_cmd("run", cfg, "--json", "--no-progress")
        assert r.code == 0, r.err
        runs[name] = json.loads(r.out)
    f = runs["ftl"]["tiers"][1]["ftl"]
    assert f["erases"] > 0 and f["gc_pages_written"] > 0
    assert runs["ftl"]["latency_ns"]["p99"] > runs["plain"]["latency_ns"]["p99"]
    busy = [s["tiers"][1]["device_busy_ns"] for s in (runs["ftl"], runs["plain"])]
    assert busy[0] > busy[1], busy
