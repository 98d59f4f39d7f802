"""``tierlab reproduce``: rerun a source paper's experiment beside its figures."""

from __future__ import annotations

import argparse

from tierlab.cli._common import BadArg, Files, err, number, sweep_progress


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from tierlab.reproductions import NAMES

    rr = sub.add_parser(
        "reproduce",
        help="rerun a source paper's experiment beside its figures",
        description="Run a source paper's bundled experiments through the sweep, print "
        "tierlab's figures beside the paper's (or, with --json, as one JSON object) and "
        "write the HTML report (docs/reproduce-NAME.md discusses each).",
    )
    rr.add_argument("name", metavar="NAME", help=", ".join(NAMES))
    rr.add_argument(
        "-o", "--output", metavar="DIR", help="store and report folder (default: tierlab-NAME)"
    )
    rr.add_argument(
        "--scheduler", metavar="ADDRESS", help="an existing Dask scheduler (default: local)"
    )
    rr.add_argument(
        "--workers", type=int, metavar="N", help="local cluster processes (default: one per core)"
    )
    rr.add_argument(
        "--scale",
        metavar="F",
        default="1",
        help="multiply the experiment's workload scale and absolute tier sizes by F",
    )
    rr.add_argument("--no-progress", action="store_true", help="no progress bar")
    rr.add_argument(
        "--json",
        action="store_true",
        help='print {"system", "figures": [{"id", "label", "paper", "tierlab", "unit"}]}',
    )


def files(a: argparse.Namespace) -> Files:
    # The experiment is bundled: the user names no input, only the folder.
    return Files([], [("-o", a.output, "dir")])


def handle(a: argparse.Namespace) -> int:
    from tierlab.reproduce import REPRODUCTIONS, print_reproduction, reproduce

    if a.name not in REPRODUCTIONS:
        return err(f"unknown reproduction {a.name!r}; expected one of {', '.join(REPRODUCTIONS)}")
    if a.workers is not None and a.workers < 1:
        return err(f"--workers {a.workers}: must be at least 1")
    try:
        scale = float(number("--scale", a.scale, float) or 0.0)
    except BadArg as e:
        return err(str(e))
    if not (scale > 0 and scale < float("inf")):
        return err(f"--scale {a.scale}: must be a positive number")
    with sweep_progress(not a.no_progress and not a.json, f"reproduce {a.name}") as cb:
        r = reproduce(
            a.name, a.output, scale=scale, scheduler=a.scheduler, workers=a.workers, progress=cb
        )
    print_reproduction(r, as_json=a.json)
    return 0
