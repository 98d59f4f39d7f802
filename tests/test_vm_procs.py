"""Processes that run concurrently and block on major faults (``[vm.cpu]``,
vm/procs.rs): each process's time splits into user, system and blocked time;
processes overlap on hardware threads; the sharing of a core slows both
threads; bad input exits 2 with the key path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tierlab
from conftest import Ran
from test_vm import config, lackey

FAULTS = {"fault_minor_ns": 21_600, "fault_major_ns": 58_600}


def run(trace: Path, cpu: dict[str, Any] | None, memory: Any = "25%") -> dict[str, Any]:
    c = config(trace, memory, **FAULTS)
    c["run"] = {"compute": "2ns"}
    if cpu is not None:
        c["vm"]["cpu"] = cpu
    return tierlab.simulate(c).summary


def test_without_vm_cpu_the_processes_carry_no_time_split(tmp_path: Path) -> None:
    s = run(lackey(tmp_path / "a.lackey", 5_000, 1, pids=(1, 2)), None)
    for p in s["processes"]:
        assert "user_ns" not in p and "blocked_ns" not in p
    assert s["total_time_ns"] == pytest.approx(sum(p["runtime_ns"] for p in s["processes"]))


def test_one_process_alone_takes_its_serial_time_split_three_ways(tmp_path: Path) -> None:
    t = lackey(tmp_path / "b.lackey", 20_000, 2)
    serial = run(t, None)
    timed = run(t, {"cores": 1})
    (a,), (b,) = serial["processes"], timed["processes"]
    assert b["major_faults"] == a["major_faults"] > 10
    # Alone, the device never has a queue: the same time, now split.
    assert b["runtime_ns"] == pytest.approx(a["runtime_ns"], rel=1e-6)
    assert b["user_ns"] + b["system_ns"] + b["blocked_ns"] == pytest.approx(b["runtime_ns"])
    assert b["system_ns"] == pytest.approx(b["minor_faults"] * 21_600 + b["major_faults"] * 58_600)
    assert b["references_per_major_fault"] == pytest.approx(b["references"] / b["major_faults"])
    assert timed["total_time_ns"] == pytest.approx(b["runtime_ns"])


def test_processes_overlap_and_queue_at_the_swap_device(tmp_path: Path) -> None:
    t = lackey(tmp_path / "c.lackey", 40_000, 3, pids=(10, 11, 12, 13))
    serial = run(t, None)
    timed = run(t, {"cores": 2, "threads_per_core": 2})
    procs = timed["processes"]
    assert len(procs) == 4
    # Wall clock: the longest process, far below the serial sum.
    assert timed["total_time_ns"] == pytest.approx(max(p["runtime_ns"] for p in procs))
    assert timed["total_time_ns"] < 0.5 * serial["total_time_ns"]
    for p in procs:
        assert p["user_ns"] + p["system_ns"] + p["blocked_ns"] == pytest.approx(p["runtime_ns"])
        assert p["blocked_ns"] > 0
    # Two threads of a core at 60% speed while both run: slower.
    shared = run(t, {"cores": 2, "threads_per_core": 2, "smt_speed": 0.6})
    assert shared["total_time_ns"] > timed["total_time_ns"]


@pytest.mark.parametrize(
    ("cpu", "message"),
    [
        ("cores = 0", "vm.cpu.cores: must be at least 1"),
        ("cores = 4\nthreads_per_core = 0", "vm.cpu.threads_per_core: must be at least 1"),
        ("cores = 4\nsmt_speed = 1.5", "vm.cpu.smt_speed: 1.5 is out of range"),
        ("cores = 1", "vm.cpu: the trace has more processes"),
    ],
)
def test_bad_vm_cpu_exits_2_with_the_key(
    tmp_path: Path, cli: Callable[..., Ran], cpu: str, message: str
) -> None:
    t = lackey(tmp_path / "d.lackey", 500, 4, pids=(1, 2))
    cfg = tmp_path / "vm.toml"
    cfg.write_text(
        f'[workload]\ntype = "trace"\npath = {json.dumps(str(t))}\nformat = "lackey"\n'
        f'[[tier]]\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\n[vm.cpu]\n{cpu}\n'
    )
    r = cli("run", cfg)
    assert r.code == 2, r.err
    assert message in r.err and "Traceback" not in r.err
