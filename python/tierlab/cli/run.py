"""``tierlab run``: a hierarchy config over its workload or a trace."""

from __future__ import annotations

import argparse

from tierlab.cli._common import (
    BadArg,
    Files,
    add_trace_opts,
    config_trace,
    err,
    note_skipped,
    overrides,
    progress,
    warn,
)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser(
        "run",
        help="run a hierarchy config over its workload or a trace",
        description="Run a hierarchy config (TOML) over its [workload] or over --trace, "
        "and print per-tier results.",
    )
    run.add_argument("config", help="hierarchy config (TOML)")
    run.add_argument("--trace", help="trace file replacing the config's [workload]")
    add_trace_opts(run)
    run.add_argument(
        "--unit-size",
        action="store_true",
        default=None,
        help="count every object as size 1; capacities count objects",
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help='set a config key path, e.g. vm.page_size="8KiB" or tier[0].capacity=4096 '
        "(TOML value; repeatable)",
    )
    run.add_argument(
        "--scale",
        metavar="F",
        help="multiply the generated workload (objects and requests, or a preset's scale) "
        "and the absolute capacities of the tiers and backing store by F; shares follow the "
        "footprint, --set values stay",
    )
    run.add_argument("--json", action="store_true", help="print the result as one JSON object")
    run.add_argument("--timeline", metavar="CSV", help="also write the interval timeline as CSV")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")


def files(a: argparse.Namespace) -> Files:
    # The config is read for its trace only when there is an output to check:
    # `run --json` stays as fast as the engine lets it.
    inner = config_trace(a.config) if a.timeline else None
    return Files(
        [("config", a.config), ("trace", a.trace), ("trace", inner)],
        [("--timeline", a.timeline, "file")],
    )


def handle(a: argparse.Namespace) -> int:
    # The engine's dicts, not a RunResult (a dataclass): `run --json` then
    # skips dataclasses' import, and prints what RunResult.to_json would.
    from tierlab.api import simulate_raw, summary_json

    try:
        sets = overrides(a.set)
    except BadArg as e:
        return err(str(e))
    if a.scale is not None:
        if a.trace is not None:
            return err("--scale: a --trace is not scaled; --scale applies to a generated workload")
        from tierlab.config import load_config
        from tierlab.reproduce import scaled_run

        try:
            factor = float(a.scale)
        except ValueError:
            return err(f"--scale {a.scale}: must be a positive number")
        # The scaled keys first: a --set of the same key wins.
        sets = {**scaled_run(load_config(a.config), factor), **sets}
    with progress(not a.no_progress and not a.json, "simulating") as cb:
        out = simulate_raw(
            a.config,
            a.trace,
            format=a.format,
            unit_size=a.unit_size,
            skip_bad=a.skip_bad,
            progress=cb,
            overrides=sets,
        )
    summary = out["summary"]
    note_skipped(summary["skipped_records"])
    warn(summary)
    if a.timeline:
        from tierlab._atomic import atomic_write
        from tierlab._result import RunResult

        with atomic_write(a.timeline, newline="") as f:
            RunResult(summary, out["timeline"]).timeline.to_csv(f, index=False)
    if a.json:
        print(summary_json(summary))
    else:
        from tierlab._format import print_run

        print_run(summary)
    return 0
