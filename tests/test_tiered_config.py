"""Multilevel main memory's keys ([[vm.node]], [vm.placement],
[vm.migration]): every bad input exits 2 with its key path, and a good
config runs, its result carrying the `tiered` object
(docs/tiered-memory.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import tierlab
from conftest import Ran

HEAD = """\
[workload]
type = "hotset"
scale = 0.01
[backing]
tech = "PCM-SLC"
[vm]
page_size = "4KiB"
"""

TWO_NODES = """\
[[vm.node]]
name = "dram"
tech = "DRAM-DDR4"
capacity = "25%"
[[vm.node]]
name = "cxl"
tech = "DRAM-DDR4"
capacity = "100%"
"""

# (name, the config after HEAD, the key path, a word of the message)
BAD = [
    ("no-node", '[vm.migration]\ntype = "linux"\n', "vm.node", "at least one [[vm.node]]"),
    (
        "node-below-a-page",
        TWO_NODES.replace('capacity = "100%"', "capacity = 1000"),
        "vm.node[1].capacity",
        "holds no page",
    ),
    (
        "unknown-policy",
        TWO_NODES + '[vm.migration]\ntype = "autonuma"\n',
        "vm.migration.type",
        "none, linux, tpp, hemem, memtis, oracle-static, oracle-epoch",
    ),
    (
        "weights-length",
        TWO_NODES + '[vm.placement]\ntype = "interleave"\nweights = [3, 1, 1]\n',
        "vm.placement.weights",
        "2 nodes, 3 weights",
    ),
    (
        "parameter-range",
        TWO_NODES + '[vm.migration]\ntype = "linux"\nhot_threshold_ms = 0\n',
        "vm.migration.hot_threshold_ms",
        "at least 1",
    ),
    (
        "memtis-bin-range",
        TWO_NODES + '[vm.migration]\ntype = "memtis"\nmin_hot_bin = 16\n',
        "vm.migration.min_hot_bin",
        "out of range",
    ),
    (
        "other-policys-key",
        TWO_NODES + '[vm.migration]\ntype = "linux"\nhot_read = 4\n',
        "vm.migration.hot_read",
        'read by type = "hemem"',
    ),
    (
        "negative-cost",
        TWO_NODES + '[vm.migration]\ntype = "hemem"\n[vm.migration.cost]\nsample_ns = -1\n',
        "vm.migration.cost.sample_ns",
        "zero or more",
    ),
    (
        "with-memorage",
        TWO_NODES + '[vm.memorage]\npsd = "64GiB"\noccupancy = 0.5\ntransfer_ns_per_gib = 1000\n',
        "vm.memorage",
        "not modelled together with [[vm.node]]",
    ),
    (
        "unknown-tech",
        TWO_NODES.replace('"DRAM-DDR4"\ncapacity = "100%"', '"CXL-9000"\ncapacity = "100%"'),
        "vm.node[1].tech",
        "CXL-9000",
    ),
    (
        "linux-without-demotion",
        TWO_NODES + '[vm.migration]\ntype = "linux"\ndemotion_enabled = false\n',
        "vm.migration.demotion_enabled",
        "not modelled yet",
    ),
    (
        "tier-beside-nodes",
        TWO_NODES + '[[tier]]\ntech = "DRAM-DDR4"\ncapacity = "25%"\n',
        "tier",
        "leave [[tier]] out",
    ),
]


@pytest.mark.parametrize(("name", "rest", "path", "word"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_exits_2_with_the_key_path(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, name: str, rest: str, path: str, word: str
) -> None:
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text(HEAD + rest)
    r = tierlab_cmd("run", cfg)
    assert r.code == 2 and r.out == "", r.err
    assert "Traceback" not in r.err and "panicked" not in r.err
    assert r.err_lines[0].startswith(f"error: {path}: "), r.err
    assert word in r.err, r.err


def test_a_good_config_runs_and_reports_its_nodes(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    cfg = tmp_path / "tiered.toml"
    cfg.write_text(
        HEAD
        + TWO_NODES
        + '[vm.placement]\ntype = "interleave"\nweights = [3, 1]\n'
        + '[vm.migration]\ntype = "linux"\n[vm.migration.cost]\nhint_fault_ns = 500\n'
    )
    r = tierlab_cmd("run", cfg)
    assert r.code == 0, r.err
    assert "memory nodes: placement interleave, migration linux (Linux 6.6)" in r.out
    assert "slowdown " in r.out and "static oracle" in r.out
    # DRAM-DDR4 has no energy figures: the memory's energy is unknown, not
    # a blank, though its unknown parts are named by node (`dram.read`).
    energy = next(line for line in r.out.splitlines() if line.startswith("│ energy "))
    assert energy.split("│")[2].strip() == "unknown", energy
    # The API: the same object, and the oracles' pre-pass runs.
    out = tierlab.simulate(
        {
            "workload": {"type": "hotset", "scale": 0.01},
            "backing": {"tech": "PCM-SLC"},
            "vm": {
                "node": [
                    {"tech": "DRAM-DDR4", "capacity": "25%"},
                    {"name": "slow", "tech": "PCM-SLC", "capacity": "100%"},
                ],
                "migration": {"type": "oracle-epoch", "epoch": 1000},
            },
        }
    )
    t = out.summary["tiered"]
    assert t["policy"] == "oracle-epoch"
    assert [n["name"] for n in t["nodes"]] == ["dram-ddr4", "slow"]
    assert sum(n["accesses"] for n in t["nodes"]) == out.summary["requests"]
    assert t["slowdown"] >= 1.0
    # Each node's device figures, and the memory's from them.
    slow = t["nodes"][1]
    assert slow["energy"]["read_j"] is not None and slow["energy_j"] is not None
    assert slow["bytes_programmed"] > 0 and slow["lifetime_years"] > 0
    assert out.summary["tiers"][0]["tech"] == "DRAM-DDR4+PCM-SLC"
    # The timeline's node columns add up to the object's figures.
    tl = out.timeline
    assert int(tl["accesses_dram-ddr4"].sum()) == t["nodes"][0]["accesses"]
    assert int(tl["accesses_slow"].sum()) == slow["accesses"]
    assert int(tl["promotions"].sum()) == t["promotions"]
    assert tl["fast_share"].between(0, 1).all()


def test_with_cpu_the_nodes_are_bandwidth_servers(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    """[vm.cpu] with nodes runs (it was refused): the nodes' table gains the
    bandwidth used and the waits, and the slowdown is a second pass's."""
    cfg = tmp_path / "cpu.toml"
    cfg.write_text(
        HEAD.replace('type = "hotset"\nscale = 0.01', 'type = "multiprogram"\nscale = 0.03')
        + TWO_NODES.replace(
            'tech = "DRAM-DDR4"\ncapacity = "100%"', 'tech = "DCPMM"\ncapacity = "100%"'
        )
        + '[vm.migration]\ntype = "tpp"\n[vm.cpu]\ncores = 4\n'
    )
    r = tierlab_cmd("run", cfg)
    assert r.code == 0, r.err
    assert "memory nodes: bandwidth" in r.out and "wait per access" in r.out
    assert "(a second pass on the same cores)" in " ".join(r.out.split())
    j = tierlab_cmd("run", cfg, "--json")
    assert j.code == 0, j.err
    t = json.loads(j.out)["tiered"]
    assert t["slowdown_basis"].startswith("a second pass")
    assert all(n["wait_ns"] >= 0 and n["bandwidth_busy_ns"] > 0 for n in t["nodes"])
    assert t["nodes"][1]["wait_ns"] > 0
