"""``tierlab bench``: times the engine on a trace file, per policy.

Speed claims are benchmarks, not tests: this reports the median of several
runs of the whole simulation (engine only, trace memory-mapped; timed with
``time.perf_counter``). ``benches/vs_libcachesim.py`` in the repository puts
these figures beside libCacheSim's on the same file. Each policy also runs
as a closed loop of 24 clients (the time model's event engine on top of the
same hierarchy), beside its serial row.
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


#: Clients of the closed-loop row: S4's web server had 24 connections open.
CLOSED_CLIENTS = 24


def _timed(cfg: dict[str, Any], repeat: int) -> tuple[dict[str, Any], list[float]]:
    times = []
    summary: dict[str, Any] = {}
    for _ in range(repeat):
        t0 = time.perf_counter()
        summary = simulate(cfg).summary
        times.append(time.perf_counter() - t0)
    return summary, times


def run_bench(
    trace: str,
    policies: list[str],
    capacity: str,
    tiers: int,
    repeat: int,
    closed: int = CLOSED_CLIENTS,
) -> list[dict[str, Any]]:
    """One row per policy in serial mode; with ``closed`` > 0, each followed
    by the same hierarchy under ``[load] type = "closed"`` with that many
    clients (the time model's event engine), with its speed relative to
    the serial row (``vs_serial``: closed req/s over serial req/s)."""
    rows = []
    for policy in policies:
        cfg = bench_config(trace, policy, capacity, tiers)
        runs: list[tuple[str, int | None, dict[str, Any]]] = [("serial", None, cfg)]
        if closed > 0:
            runs.append(("closed", closed, {**cfg, "load": {"type": "closed", "clients": closed}}))
        serial_rps = 0.0
        for load, clients, c in runs:
            summary, times = _timed(c, repeat)
            med = statistics.median(times)
            rps = summary["requests"] / med
            if load == "serial":
                serial_rps = rps
            rows.append(
                {
                    "policy": policy,
                    "tiers": tiers,
                    "load": load,
                    "clients": clients,
                    "requests": summary["requests"],
                    "miss_ratio": summary["miss_ratio"],
                    "capacity": [t["capacity"] for t in summary["tiers"]],
                    "median_s": med,
                    "median_rps": rps,
                    "vs_serial": rps / serial_rps,
                    "runs_s": times,
                }
            )
    return rows


def print_bench(trace: str, rows: list[dict[str, Any]]) -> None:
    from rich import box
    from rich.table import Table

    from tierlab._format import console

    # The trace, its length and the tier count are the same on every row:
    # in the title, so that the rows fit 80 columns.
    tiers = rows[0]["tiers"] if rows else 1
    n = f" ({rows[0]['requests']:,} requests)" if rows else ""
    # So are the capacities when every row has the same (they always do
    # from the CLI): a column of them left the ratio no room in 80 columns.
    caps = {"/".join(f"{c:,}" for c in r["capacity"]) for r in rows}
    one_cap = len(caps) == 1
    cap = f"capacities {next(iter(caps))} objects" if one_cap else "capacities in objects"
    t = Table(
        title=f"tierlab bench: {trace}{n}, {tiers} tier{'s' if tiers > 1 else ''}, "
        f"{cap}, times: median",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    closed = any(r["load"] != "serial" for r in rows)
    cols = ["policy", "load", *(["capacity"] * (not one_cap)), "miss ratio", "s", "req/s"]
    cols += ["ratio"] * closed
    for col in cols:
        left = col in ("policy", "load")
        t.add_column(
            col,
            justify="left" if left else "right",
            no_wrap=True,
        )
    for r in rows:
        serial = r["load"] == "serial"
        cells = [
            r["policy"], "serial" if serial else f"{r['load']} {r['clients']}",
            *(["/".join(f"{c:,}" for c in r["capacity"])] * (not one_cap)),
            f"{r['miss_ratio']:.4f}", f"{r['median_s']:.3f}", f"{r['median_rps'] / 1e6:.2f}M",
        ]  # fmt: skip
        if closed:
            cells.append("" if serial else f"{r['vs_serial']:.2f}x")
        t.add_row(*cells)
    console().print(t)
    if closed:
        console().print(
            'closed N: the same hierarchy under \\[load] type = "closed", clients = N '
            "(the time model's event engine); ratio: its req/s over the serial row's"
        )
