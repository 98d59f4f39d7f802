"""``tierlab export``: a results store as CSV or Parquet."""

from __future__ import annotations

import argparse

from tierlab.cli._common import Files


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ex = sub.add_parser(
        "export",
        help="write a results store as CSV or Parquet",
        description="Write the points of a results store (one row each: axes, metrics, "
        "status) as CSV or Parquet, by the output's suffix.",
    )
    ex.add_argument("store", help="results file (SQLite) written by tierlab sweep")
    ex.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.csv or OUT.parquet")
    ex.add_argument("--experiment", help="only this experiment (a store may hold several)")


def files(a: argparse.Namespace) -> Files:
    return Files([("store", a.store)], [("-o", a.output, "file")])


def handle(a: argparse.Namespace) -> int:
    from tierlab.store import export

    n = export(a.store, a.output, a.experiment)
    print(f"wrote {n:,} points to {a.output}")
    return 0
