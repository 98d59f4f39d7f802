"""Processes that run concurrently and block on major faults (``[vm.cpu]``,
run/vm_procs.rs): each process's time splits into user, system and blocked time;
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


def two_programs(requests: int) -> dict[str, Any]:
    """A small program that fits in memory and a large one that thrashes,
    in the multiprogram generator's equal turns."""
    return {
        "workload": {
            "type": "multiprogram",
            "seed": 5,
            "multiprogram": {
                "requests": requests,
                "program": [
                    {"name": "small", "rss": "256KiB", "sequential": 1.0},
                    {"name": "large", "rss": "8MiB", "sequential": 1.0},
                ],
            },
        },
        "tier": [{"tech": "DRAM-DDR3", "capacity": "4MiB"}],
        "backing": {"tech": "PCM-SLC"},
        "vm": {**FAULTS, "cpu": {"cores": 2}},
    }


def test_a_fast_process_does_not_wait_for_the_trace_to_reach_it() -> None:
    # 3 M references in equal turns: the small program's come far ahead of
    # where the thrashing one has got to, more than one stream could hold
    # read ahead (2^20 references). Each process reads its own references, so the small
    # program, all hits after its first touches, ends long before the
    # thrashing one and waits at the swap device only for its own faults.
    s = tierlab.simulate(two_programs(3_000_000)).summary
    small, large = s["processes"]
    assert small["references"] == large["references"] == 1_500_000
    assert small["major_faults"] < 100 < 5_000 < large["major_faults"]
    # Blocked only for its own few faults (before, it waited on the device
    # at the clock of references read far ahead: 79% of its runtime).
    assert small["blocked_ns"] < 0.05 * small["runtime_ns"]
    assert small["runtime_ns"] < 0.03 * large["runtime_ns"]
    assert s["total_time_ns"] == pytest.approx(large["runtime_ns"])
    assert s["requests"] == 3_000_000


def test_max_requests_limits_the_processes_together(tmp_path: Path) -> None:
    # [run] max_requests cuts the trace, not each process's stream.
    c = two_programs(20_000)
    c["run"] = {"max_requests": 3_500}
    s = tierlab.simulate(c).summary
    assert s["requests"] == 3_500
    # Turns of 1,000: small, large, small, then 500 of large.
    assert [p["references"] for p in s["processes"]] == [2_000, 1_500]


def test_run_prints_the_time_split_and_references_per_fault(
    tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    t = lackey(tmp_path / "e.lackey", 5_000, 6, pids=(1, 2))
    cfg = tmp_path / "vm.toml"
    cfg.write_text(
        f'[workload]\ntype = "trace"\npath = {json.dumps(str(t))}\nformat = "lackey"\n'
        '[[tier]]\ntech = "DRAM-DDR3"\ncapacity = "25%"\n[backing]\ntech = "PCM-SLC"\n'
        "[vm]\nfault_major_ns = 58600\n[vm.cpu]\ncores = 2\n"
    )
    r = cli("run", cfg, "--no-progress")
    assert r.code == 0, r.err
    assert "runtime = user + system + blocked" in r.out.replace("\n", " ")
    for col in ("user", "system", "blocked", "refs/major", "refs/minor"):
        assert col in r.out, col
    s = tierlab.simulate(cfg).summary
    assert any(p["major_faults"] for p in s["processes"])
    for p in s["processes"]:
        # The printed figures are the run's: references per major fault.
        if p["major_faults"]:
            assert f"{p['references_per_major_fault']:,.1f}" in r.out
    # Without [vm.cpu] there is no time split to print.
    cfg.write_text(cfg.read_text().split("[vm.cpu]")[0])
    r = cli("run", cfg, "--no-progress")
    assert r.code == 0 and "user + system + blocked" not in r.out


def test_the_memorage_object_is_printed() -> None:
    # The printer over a summary's `memorage` object (issue 26's keys).
    import io

    from rich.console import Console
    from tierlab._format import print_memorage

    buf = io.StringIO()
    c = Console(file=buf, width=200)
    print_memorage(
        c,
        {
            "borrowed_bytes_max": 2 << 30,
            "borrows": 1,
            "returns": 0,
            "transfer_ns": 1.5e9,
            "swap_outs_avoided": 12_345,
        },
    )
    out = buf.getvalue()
    assert "borrowed at most 2 GiB" in out or "borrowed at most 2.0 GiB" in out, out
    assert "borrows 1" in out and "returns 0" in out
    assert "transfer time 1.5 s" in out and "swap-outs avoided 12,345" in out


def test_a_sibling_in_its_fault_handler_shares_the_core() -> None:
    # One core, two threads at half speed while both run. The thrashing
    # program spends most of its time in fault handlers, which is CPU time
    # on its thread: the small program shares the core all along, so its
    # user time nearly doubles against a run without core sharing (it
    # blocks on its own few faults, when the other runs alone). Before,
    # a sibling counted as idle through the handler of a fault it then
    # blocked on: 1.0x.
    def small_user(smt: float) -> float:
        c = two_programs(200_000)
        c["vm"]["cpu"] = {"cores": 1, "threads_per_core": 2, "smt_speed": smt}
        c["vm"]["first_touch"] = "swap"  # major faults from the first sweep on
        small, large = tierlab.simulate(c).summary["processes"]
        assert large["system_ns"] > 3 * large["blocked_ns"]
        return float(small["user_ns"])

    assert 1.6 < small_user(0.5) / small_user(1.0) <= 2.0
