"""``tierlab bench``: times the engine on a trace file, per policy.

Speed claims are benchmarks, not tests: this reports the median of several
runs of the whole simulation (engine only, trace memory-mapped; timed with
``time.perf_counter``). ``benches/vs_libcachesim.py`` in the repository puts
these figures beside libCacheSim's on the same file.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from tierlab import _core
from tierlab.api import simulate
from tierlab.errors import ConfigError


def bench_config(trace: str, policy: str, capacity: str | int, tiers: int) -> dict[str, Any]:
    """The config a bench point runs: one tier, or DRAM + NAND + SSD exclusive."""
    cap: str | int = int(capacity) if str(capacity).isdigit() else capacity
    w = {"type": "trace", "path": trace, "format": "oracle", "unit_size": True}
    if tiers == 1:
        tier = [{"name": "cache", "tech": "DRAM-DDR3", "capacity": cap, "policy": policy}]
    else:
        # Split the capacity 1:2:4 over the three tiers.
        def part(k: int) -> str | int:
            if isinstance(cap, int):
                return max(1, cap * k // 7)
            # A share as the engine reads one (an out-of-range share or a
            # non-size is its error).
            try:
                kind, n = _core.parse_size(cap)
            except ConfigError as e:
                raise ConfigError(f"--capacity {cap}: {e}") from None
            if kind == "percent":
                return f"{n * k / 7:g}%"
            raise ConfigError(
                f"--capacity {cap}: with --tiers 3 give objects or a share such as 10%"
            )

        tier = [
            {"name": "dram", "tech": "DRAM-DDR3", "capacity": part(1), "policy": policy},
            {"name": "nand", "tech": "NAND-SLC", "capacity": part(2), "policy": policy},
            {"name": "ssd", "tech": "SSD-SATA", "capacity": part(4), "policy": policy},
        ]
    return {
        "workload": w,
        "hierarchy": {"fill": "exclusive"},
        "tier": tier,
        "backing": {"tech": "HDD"},
    }


def run_bench(
    trace: str, policies: list[str], capacity: str, tiers: int, repeat: int
) -> list[dict[str, Any]]:
    rows = []
    for policy in policies:
        cfg = bench_config(trace, policy, capacity, tiers)
        times = []
        summary: dict[str, Any] = {}
        for _ in range(repeat):
            t0 = time.perf_counter()
            summary = simulate(cfg).summary
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        rows.append(
            {
                "policy": policy,
                "tiers": tiers,
                "requests": summary["requests"],
                "miss_ratio": summary["miss_ratio"],
                "capacity": [t["capacity"] for t in summary["tiers"]],
                "median_s": med,
                "median_rps": summary["requests"] / med,
                "runs_s": times,
            }
        )
    return rows


def print_bench(trace: str, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    from tierlab._format import console

    t = Table(title=f"tierlab bench: {trace}", title_justify="left")
    for col in ("policy", "tiers", "capacity (objects)", "requests", "miss ratio", "median s",
                "median req/s"):  # fmt: skip
        t.add_column(col, justify="left" if col == "policy" else "right")
    for r in rows:
        t.add_row(
            r["policy"], str(r["tiers"]), "/".join(f"{c:,}" for c in r["capacity"]),
            f"{r['requests']:,}", f"{r['miss_ratio']:.6f}", f"{r['median_s']:.3f}",
            f"{r['median_rps'] / 1e6:.2f}M",
        )  # fmt: skip
    console().print(t)
