"""``tierlab report``: plots and an HTML report of a results store."""

from __future__ import annotations

import argparse

from tierlab.cli._common import Files


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rp = sub.add_parser(
        "report",
        help="plots and an HTML report of a results store",
        description="Write the plots (PNG and SVG) and one self-contained HTML file of an "
        "experiment's results, picked from its axes (docs/reports.md).",
    )
    rp.add_argument("store", metavar="RESULTS", help="results file (SQLite) of tierlab sweep")
    rp.add_argument(
        "-o", "--output", metavar="DIR", help="output folder (default: <experiment>-report)"
    )
    rp.add_argument("--experiment", help="which experiment, when the store holds several")


def files(a: argparse.Namespace) -> Files:
    return Files([("store", a.store)], [("-o", a.output, "dir")])


def handle(a: argparse.Namespace) -> int:
    from tierlab.report import write_report

    r = write_report(a.store, a.output, experiment=a.experiment)
    print(f"wrote {r.html} and {len(r.plots)} plot files to {r.html.parent}")
    return 0
