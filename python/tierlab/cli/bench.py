"""``tierlab bench``: time the engine on a trace."""

from __future__ import annotations

import argparse

from tierlab.cli._common import Files, err


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser(
        "bench",
        help="time tierlab on a trace",
        description="Time the engine on an oracleGeneral trace for a set of policies "
        "(median of repeats). benches/vs_libcachesim.py puts these figures beside "
        "libCacheSim's.",
    )
    bench.add_argument("trace", help="oracleGeneral trace file")
    bench.add_argument("--policies", default="lru,fifo,clock", help="comma-separated policies")
    bench.add_argument(
        "--capacity", default="10%", help="cache size: objects, a size, or a share (default 10%%)"
    )
    bench.add_argument(
        "--tiers",
        type=int,
        choices=[1, 3],
        default=1,
        help="1: one tier; 3: DRAM + NAND + SSD exclusive, capacity split 1:2:4",
    )
    bench.add_argument("--repeat", type=int, default=5, help="repetitions (median reported)")
    bench.add_argument(
        "--closed",
        type=int,
        default=24,
        metavar="N",
        help='also run each policy as a closed loop of N clients ([load] type = "closed"), '
        "beside the serial row with the ratio of their speeds (default 24; 0: serial only)",
    )
    bench.add_argument("--json", action="store_true", help="print JSON")


def files(a: argparse.Namespace) -> Files:
    return Files([("trace", a.trace)], [])


def handle(a: argparse.Namespace) -> int:
    import json

    from tierlab.bench import print_bench, run_bench

    if a.repeat < 1:
        return err(f"--repeat {a.repeat}: must be at least 1")
    policies = [p.strip() for p in a.policies.split(",") if p.strip()]
    if not policies:
        return err(f"--policies {a.policies!r}: name at least one policy, e.g. lru,fifo,clock")
    if a.closed < 0:
        return err(f"--closed {a.closed}: must be 0 (serial only) or a number of clients")
    rows = run_bench(a.trace, policies, a.capacity, a.tiers, a.repeat, a.closed)
    if a.json:
        print(json.dumps(rows))
    else:
        print_bench(a.trace, rows)
    return 0
