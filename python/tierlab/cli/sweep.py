"""``tierlab sweep``: an experiment's points on Dask into a results store."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from tierlab.cli._common import BadArg, Files, err, overrides, sweep_progress

if TYPE_CHECKING:
    from tierlab.experiment import Axis, Experiment


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sw = sub.add_parser(
        "sweep",
        help="run an experiment's points on Dask into a results store",
        description="Run every point of an experiment (a base config, parameter axes, "
        "repetitions; docs/experiments.md) on a Dask cluster and keep the results in a "
        "SQLite store. Points already in the store are skipped, so an interrupted sweep "
        "resumes where it stopped; a point that fails is recorded with its error.",
    )
    sw.add_argument("experiment", help="experiment file (TOML)")
    sw.add_argument("--store", metavar="PATH", help="results file (default: the experiment's)")
    sw.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster)",
    )
    sw.add_argument(
        "--workers", type=int, metavar="N", help="local cluster processes (default: one per core)"
    )
    sw.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a config key path in every point, e.g. workload.scale=0.1 (TOML value)",
    )
    sw.add_argument(
        "--dry-run",
        action="store_true",
        help="list the axes and count the points (and those already in the store); run nothing",
    )
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")


def files(a: argparse.Namespace) -> Files:
    """The experiment file and every trace its points read; the store (the
    experiment's when --store is not given). An experiment that does not
    load names no more files: the sweep reports why it does not load."""
    from tierlab.errors import TierlabError
    from tierlab.experiment import load_experiment

    inputs: list[tuple[str, object]] = [("experiment", a.experiment)]
    store: object = a.store
    try:
        exp = load_experiment(a.experiment, overrides(a.set))
    except (TierlabError, BadArg):
        return Files(inputs, [("--store", store, "file")])
    traces = {_trace_of(p.config) for p in exp.points}
    inputs += [("trace", t) for t in sorted(t for t in traces if t is not None)]
    if store is None:
        return Files(inputs, [("store", exp.store, "file")])
    return Files(inputs, [("--store", store, "file")])


def _trace_of(config: dict[str, Any]) -> str | None:
    w = config.get("workload")
    path = w.get("path") if isinstance(w, dict) else None
    return path if isinstance(path, str) else None


def handle(a: argparse.Namespace) -> int:
    from tierlab._sweep import sweep

    if a.workers is not None and a.workers < 1:
        return err(f"--workers {a.workers}: must be at least 1")
    try:
        sets = overrides(a.set)
    except BadArg as e:
        return err(str(e))
    if a.dry_run:
        from tierlab.experiment import load_experiment

        exp = load_experiment(a.experiment, sets)
    with sweep_progress(not a.no_progress and not a.dry_run, "sweep") as cb:
        r = sweep(
            exp if a.dry_run else a.experiment,
            store=a.store,
            scheduler=a.scheduler,
            workers=a.workers,
            progress=cb,
            overrides=None if a.dry_run else sets,
            dry_run=a.dry_run,
            notice=lambda msg: print(f"warning: {msg}", file=sys.stderr),
        )
    if a.dry_run:
        # After the sweep's checks (of the store too): bad input prints nothing.
        for ax in exp.axes:
            shown = ", ".join(axis_label(exp, ax, v) for v in ax.labels)
            print(f"{ax.key}: {len(ax.labels)} values: {shown}")
        if exp.repetitions > 1:
            print(f"repetitions: {exp.repetitions}")
        print(
            f"{r.experiment}: {r.total} points: {r.skipped} already in {r.store}, "
            f"{r.total - r.skipped} to run"
        )
        return 0
    for failure in r.errors:
        print(f"failed: {failure}", file=sys.stderr)
    print(
        f"{r.experiment}: {r.total} points: {r.done} run, {r.skipped} already in the store, "
        f"{r.failed} failed; results in {r.store}"
    )
    return 0


# Config keys whose numbers are bytes (objects when the workload counts every
# object as one) and times in nanoseconds: the dry run shows them in human
# units; any other value as written.
_BYTES = ("capacity", "object_size", "page_size", "block_size", "size")
_NS = "_ns"


def axis_label(exp: Experiment, ax: Axis, label: object) -> str:
    """An axis value as the dry run shows it: a byte count as KiB/MiB/GiB, a
    time in ns as ns/us/ms/s, anything else (a share, a name) as written."""
    if not isinstance(label, int | float) or isinstance(label, bool):
        return str(label)
    last = ax.key.rsplit(".", 1)[-1]
    if last.endswith(_NS):
        from tierlab._format import human_ns

        return human_ns(label)
    if last in _BYTES and not _unit_size(exp):
        from tierlab._format import human_bytes

        return human_bytes(label)
    return str(label)


def _unit_size(exp: Experiment) -> bool:
    w = exp.points[0].config.get("workload") if exp.points else None
    return bool(isinstance(w, dict) and w.get("unit_size"))
