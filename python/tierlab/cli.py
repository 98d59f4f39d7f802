"""The ``tierlab`` command line.

Data goes to stdout, diagnostics to stderr. Bad input of any kind ends in one
line ``error: ...`` and exit code 2; never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

# Only what building the parser needs is imported here; each subcommand
# imports its own modules, so that `tierlab mrc --no-plot` and `tierlab run
# --json` do not pay for pandas, rich, sqlite3 or Dask.
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path


EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def _add_trace_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=["oracle", "csv", "strace", "lackey", "msr", "twitter"],
        help="trace format (default: from the file name, .zst stripped: .csv/.txt csv, "
        ".strace strace, .lackey lackey, else oracle)",
    )
    p.add_argument(
        "--skip-bad",
        action="store_true",
        default=None,
        help="pass over malformed records of a text trace, counting them, instead of stopping",
    )


def build_parser() -> argparse.ArgumentParser:
    from tierlab import __version__

    p = argparse.ArgumentParser(
        prog="tierlab",
        description="Simulate extended memory hierarchies (DRAM, file memory, flash, "
        "SCM, disk) over traces and synthetic workloads.",
    )
    p.add_argument("--version", action="version", version=f"tierlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run a hierarchy config over its workload or a trace",
        description="Run a hierarchy config (TOML) over its [workload] or over --trace, "
        "and print per-tier results.",
    )
    run.add_argument("config", help="hierarchy config (TOML)")
    run.add_argument("--trace", help="trace file replacing the config's [workload]")
    _add_trace_opts(run)
    run.add_argument(
        "--unit-size",
        action="store_true",
        default=None,
        help="count every object as size 1; capacities count objects",
    )
    run.add_argument("--json", action="store_true", help="print the result as one JSON object")
    run.add_argument("--timeline", metavar="CSV", help="also write the interval timeline as CSV")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")

    techs = sub.add_parser(
        "techs",
        help="list the technology catalog",
        description="List the built-in technologies with their figures and sources.",
    )
    techs.add_argument("--json", action="store_true", help="print JSON")

    trace = sub.add_parser(
        "trace", help="inspect and convert traces", description="Inspect and convert traces."
    )
    tsub = trace.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")
    stats = tsub.add_parser(
        "stats",
        help="requests, unique keys, footprint, read/write mix",
        description="Print requests, unique keys, footprint bytes and read/write mix of a "
        "trace file, or of a config's [workload] (a .toml file).",
    )
    stats.add_argument("input", help="trace file, or a config whose [workload] to read")
    _add_trace_opts(stats)
    stats.add_argument("--json", action="store_true", help="print JSON")
    conv = tsub.add_parser(
        "convert",
        help="write a trace or a workload as oracleGeneral",
        description="Write a trace file (any readable format), or a config's [workload] "
        "(a .toml file), as libCacheSim's oracleGeneral binary format with next-access "
        "times, or as CSV (time,key,size,op with a header; operations kept).",
    )
    conv.add_argument("input", help="trace file, or a config whose [workload] to write")
    conv.add_argument("output", help="oracleGeneral file to write")
    conv.add_argument(
        "--to",
        choices=["oracle", "csv"],
        help="output format (default: csv for an OUTPUT ending in .csv or .txt, else oracle)",
    )
    _add_trace_opts(conv)
    gen = tsub.add_parser(
        "generate",
        help="write a benchmark generator's trace (PostMark, Bonnie, web, ...)",
        description="Write the trace of a seeded benchmark generator: postmark, bonnie, web "
        "(SURGE-like), specweb (SPECweb99-like), proxy or multiprogram (docs/workloads.md). "
        "The same kind, preset, seed and scale write the same bytes.",
    )
    gen.add_argument(
        "kind", metavar="KIND", help="postmark, bonnie, web, specweb, proxy or multiprogram"
    )
    gen.add_argument("-o", "--output", required=True, metavar="OUT", help="trace file to write")
    gen.add_argument(
        "--preset", help="parameter set, e.g. s1 or s2 for postmark (default: default)"
    )
    gen.add_argument("--seed", metavar="N", help="random seed (default 42)")
    gen.add_argument(
        "--scale", metavar="F", help="multiply the preset's files, requests and sizes by F"
    )
    gen.add_argument(
        "--format",
        choices=["oracle", "csv"],
        help="oracle (oracleGeneral: no op field, writes and deletes become reads) or csv "
        "(time,key,size,op: ops kept); default: csv for a .csv/.txt OUT, else oracle",
    )

    cap = sub.add_parser(
        "capture",
        help="capture a real program as a trace",
        description="Run a program under strace (files) or Valgrind lackey (memory) and "
        "write its accesses as a trace. Name the output X.strace / X.lackey to keep "
        "the tracer's log (reads, writes and deletes intact; tierlab run reads it); "
        "any other name is converted to oracleGeneral.",
    )
    csub = cap.add_subparsers(dest="capture_command", required=True, metavar="KIND")
    cf = csub.add_parser(
        "files",
        help="file I/O under strace, one request per page",
        description="Run CMD under strace -f and turn its file I/O (open, read, write, "
        "pread, pwrite, readv, writev, lseek, truncate, unlink, rename, close, dup, "
        "fork) into page-granular requests keyed by (file, page).",
    )
    cf.add_argument("-o", "--output", required=True, help="trace to write")
    cf.add_argument("--page-size", type=int, default=4096, help="bytes per page (default 4096)")
    cf.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    cm = csub.add_parser(
        "memory",
        help="memory accesses under Valgrind lackey",
        description="Run CMD under valgrind --tool=lackey --trace-mem=yes and turn its "
        "loads, stores and modifies into requests of --unit bytes keyed by address/unit.",
    )
    cm.add_argument("-o", "--output", required=True, help="trace to write")
    cm.add_argument(
        "--unit", type=int, default=4096, help="bytes per request: 4096 pages, 64 lines"
    )
    cm.add_argument(
        "--instructions", action="store_true", help="count instruction fetches as reads"
    )
    cm.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    mrc = sub.add_parser(
        "mrc",
        help="miss-ratio curve of a trace (CSV + PNG)",
        description="Write the miss-ratio curve of a trace file (or of a config's [workload]) "
        "as CSV with columns size,miss_ratio, and its plot beside it (OUT.png). Exact LRU by "
        "stack distances by default; --shards samples (SHARDS); --policy or --config "
        "simulates at --sizes.",
    )
    mrc.add_argument("input", help="trace file, or a config whose [workload] to read")
    _add_trace_opts(mrc)
    mrc.add_argument(
        "--unit-size",
        action="store_true",
        help="count every object as size 1; sizes count objects",
    )
    mrc.add_argument("--policy", help="simulate one tier of this policy at --sizes")
    mrc.add_argument(
        "--config", help="simulate this hierarchy (TOML) at --sizes, tier capacities scaled"
    )
    mrc.add_argument(
        "--sizes",
        nargs="+",
        metavar="SIZE",
        help="cache sizes: counts, sizes (1GiB) or shares (10%%); space- or comma-separated",
    )
    mrc.add_argument("--shards", type=float, metavar="RATE", help="SHARDS at this sampling rate")
    mrc.add_argument(
        "--shards-size", type=int, metavar="N", help="fixed-size SHARDS tracking N keys"
    )
    mrc.add_argument("-o", "--output", required=True, metavar="OUT.csv", help="CSV to write")
    mrc.add_argument(
        "--no-plot",
        action="store_true",
        help="write the CSV only (matplotlib's import takes longer than a SHARDS pass)",
    )
    mrc.add_argument("--no-progress", action="store_true", help="no progress bar")

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

    ex = sub.add_parser(
        "export",
        help="write a results store as CSV or Parquet",
        description="Write the points of a results store (one row each: axes, metrics, "
        "status) as CSV or Parquet, by the output's suffix.",
    )
    ex.add_argument("store", help="results file (SQLite) written by tierlab sweep")
    ex.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.csv or OUT.parquet")
    ex.add_argument("--experiment", help="only this experiment (a store may hold several)")

    _add_report_parsers(sub)

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
    bench.add_argument("--json", action="store_true", help="print JSON")
    return p


def _add_report_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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

    rr = sub.add_parser(
        "reproduce",
        help="rerun a source paper's experiment (s1, s2, s5) beside its figures",
        description="Run a bundled experiment (S1 Table II, S2's five PostMark runs, S5's "
        "storage types) through the sweep, print tierlab's figures beside the paper's and "
        "write the report (docs/reproduce-s1.md, -s2.md, -s5.md).",
    )
    rr.add_argument("name", metavar="NAME", help="s1, s2 or s5")
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


def _err(msg: str, hint: str | None = None) -> int:
    print(f"error: {msg}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    return EXIT_BAD_INPUT


@contextmanager
def _bar(enabled: bool, label: str, *, sweep: bool = False) -> Iterator[tuple[Any, Any] | None]:
    """A rich progress bar on stderr, only when stderr is a terminal; yields
    (bar, task) or None. ``sweep`` adds failed/left counts and time left."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from tierlab._format import console

    columns: list[ProgressColumn] = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if sweep:
        columns.append(TextColumn("{task.fields[failed]} failed, {task.fields[left]} left"))
    columns.append(TimeElapsedColumn())
    if sweep:
        columns.append(TimeRemainingColumn())
    with Progress(*columns, console=console(stderr=True), transient=True) as bar:
        if sweep:
            yield bar, bar.add_task(label, total=None, failed=0, left="?")
        else:
            yield bar, bar.add_task(label, total=None)


@contextmanager
def _progress(enabled: bool, label: str) -> Iterator[Callable[[int, int | None], None] | None]:
    """Requests done (of a total when known)."""
    with _bar(enabled, label) as b:
        if b is None:
            yield None
            return
        bar, task = b

        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _note_skipped(n: int) -> None:
    if n:
        print(f"note: skipped {n:,} malformed records (--skip-bad)", file=sys.stderr)


def _warn(summary: dict[str, Any]) -> None:
    """The engine's warnings about a run's figures (a tier that refused
    objects larger than its capacity), one line each on stderr."""
    for w in summary.get("warnings", ()):
        print(f"warning: {w}", file=sys.stderr)


def cmd_run(a: argparse.Namespace) -> int:
    # The engine's dicts, not a RunResult (a dataclass): `run --json` then
    # skips dataclasses' import, and prints what RunResult.to_json would.
    from tierlab.api import output_problem, simulate_raw, summary_json

    if a.timeline:
        from tierlab.config import load_config

        workload = load_config(a.config).get("workload")
        read = [a.config, a.trace, workload.get("path") if isinstance(workload, dict) else None]
        problem = output_problem(a.timeline, read, label="--timeline")
        if problem:
            return _err(problem)
    with _progress(not a.no_progress and not a.json, "simulating") as cb:
        out = simulate_raw(
            a.config,
            a.trace,
            format=a.format,
            unit_size=a.unit_size,
            skip_bad=a.skip_bad,
            progress=cb,
        )
    summary = out["summary"]
    _note_skipped(summary["skipped_records"])
    _warn(summary)
    if a.timeline:
        from tierlab._result import RunResult

        RunResult(summary, out["timeline"]).timeline.to_csv(a.timeline, index=False)
    if a.json:
        print(summary_json(summary))
    else:
        from tierlab._format import print_run

        print_run(summary)
    return 0


def cmd_techs(a: argparse.Namespace) -> int:
    import json

    from tierlab.api import techs

    t = techs()
    if a.json:
        print(json.dumps(t, indent=1))
    else:
        from tierlab._format import print_techs

        print_techs(t)
    return 0


def _number(flag: str, text: str | None, kind: type[int] | type[float]) -> int | float | None:
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise _BadArg(f"{flag} {text!r}: expected {what}") from None


class _BadArg(Exception):
    pass


def cmd_generate(a: argparse.Namespace) -> int:
    from tierlab.api import GENERATORS, output_format, trace_generate

    if a.kind not in GENERATORS:
        return _err(f"unknown generator {a.kind!r}; expected one of {', '.join(GENERATORS)}")
    try:
        seed = _number("--seed", a.seed, int)
        scale = _number("--scale", a.scale, float)
    except _BadArg as e:
        return _err(str(e))
    with _progress(True, f"generating {a.kind}") as cb:
        s = trace_generate(
            a.kind,
            a.output,
            preset=a.preset,
            seed=None if seed is None else int(seed),
            scale=scale,
            format=a.format,
            progress=cb,
        )
    print(
        f"wrote {s['requests']:,} requests ({s['reads']:,} reads, {s['writes']:,} writes, "
        f"{s['deletes']:,} deletes; {s['unique_keys']:,} keys) to {a.output}"
    )
    if output_format(a.output, a.format) == "oracle" and (s["writes"] or s["deletes"]):
        print(
            "note: oracleGeneral has no operation field: the writes and deletes were written "
            "as reads",
            file=sys.stderr,
        )
        print("hint: --format csv (or an OUT ending in .csv) keeps them", file=sys.stderr)
    return 0


def cmd_trace(a: argparse.Namespace) -> int:
    import json

    from tierlab.api import output_format, trace_convert, trace_stats

    if a.trace_command == "generate":
        return cmd_generate(a)
    if a.trace_command == "stats":
        with _progress(not a.json, "reading") as cb:
            s = trace_stats(a.input, a.format, skip_bad=a.skip_bad, progress=cb)
        _note_skipped(s["skipped"])
        if a.json:
            print(json.dumps(s))
        else:
            from tierlab._format import print_stats

            print_stats(a.input, s)
        return 0
    # oracleGeneral needs next-access times: a first pass over the input.
    passes = "2 passes" if output_format(a.output, a.to) == "oracle" else "1 pass"
    with _progress(True, f"converting ({passes})") as cb:
        s = trace_convert(a.input, a.output, a.format, to=a.to, skip_bad=a.skip_bad, progress=cb)
    _note_skipped(s["skipped"])
    print(f"wrote {s['requests']:,} requests ({s['unique_keys']:,} keys) to {a.output}")
    if output_format(a.output, a.to) == "oracle" and (s["writes"] or s["deletes"]):
        print(
            f"note: oracleGeneral has no operation field: {s['writes']:,} writes and "
            f"{s['deletes']:,} deletes were written as reads",
            file=sys.stderr,
        )
    return 0


def cmd_capture(a: argparse.Namespace) -> int:
    from tierlab.capture import capture_files, capture_memory, check_unit

    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if a.capture_command == "files":
        check_unit(a.page_size, "--page-size", "strace")
        c = capture_files(cmd, a.output, page_size=a.page_size)
    else:
        check_unit(a.unit, "--unit", "lackey")
        c = capture_memory(cmd, a.output, unit=a.unit, instructions=a.instructions)
    s = c.stats
    print(
        f"captured {s['requests']:,} requests ({s['reads']:,} reads, {s['writes']:,} writes, "
        f"{s['deletes']:,} deletes; {s['unique_keys']:,} keys) to {c.output}",
        file=sys.stderr,
    )
    if not str(c.output).endswith((".strace", ".lackey")) and (s["writes"] or s["deletes"]):
        print(
            "note: oracleGeneral has no operation field: writes and deletes were written "
            "as reads (name the output .strace / .lackey to keep them)",
            file=sys.stderr,
        )
    if c.exit_code != 0:
        print(f"note: the program exited with status {c.exit_code}", file=sys.stderr)
    return 0


def cmd_mrc(a: argparse.Namespace) -> int:
    from pathlib import Path

    from tierlab.api import mrc_points, output_problem

    out = Path(a.output)
    if out.suffix.lower() != ".csv":
        return _err(f"-o {a.output}: the output must be a .csv file (the plot goes beside it)")
    problem = output_problem(a.output, [a.input, a.config], label="-o")
    if problem:
        return _err(problem)
    sizes = None
    if a.sizes is not None:
        sizes = [s.strip() for arg in a.sizes for s in arg.split(",") if s.strip()]
    # matplotlib takes ~0.9 s to import here, as long as the engine takes
    # for SHARDS on 20M requests: import it on the other core while the
    # engine (which releases the GIL) computes the curve.
    import threading

    warm = threading.Thread(target=_import_pyplot, name="import-matplotlib", daemon=True)
    if not a.no_plot:
        warm.start()
    with _progress(not a.no_progress, "computing the curve") as cb:
        xs, ys, largest = mrc_points(
            a.input,
            format=a.format,
            unit_size=a.unit_size,
            policy=a.policy,
            sizes=sizes,
            shards=a.shards,
            shards_size=a.shards_size,
            config=a.config,
            progress=cb,
        )
    # The csv module, not pandas: pandas' import alone costs more than SHARDS
    # takes on a 20M-request trace. Floats print as repr, as pandas does.
    import csv

    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["size", "miss_ratio"])
        w.writerows(zip(xs, ys, strict=True))
    # (Size 0, where every curve starts, holds nothing: no note for it.)
    if any(0 < x < largest for x in xs):
        print(
            f"note: below {largest:,} B (the largest object) the curve counts that object "
            "in the stack, though an LRU tier that small refuses it; "
            "--policy lru simulates those sizes exactly",
            file=sys.stderr,
        )
    if a.no_plot:
        print(f"wrote {len(xs):,} points to {out}")
        return 0
    png = out.with_suffix(".png")
    warm.join()
    method = (
        f"{a.policy} (simulated)"
        if a.policy
        else "hierarchy (simulated)"
        if a.config
        else f"LRU, SHARDS rate {a.shards}"
        if a.shards is not None
        else f"LRU, SHARDS {a.shards_size} keys"
        if a.shards_size is not None
        else "LRU (exact)"
    )
    _plot(xs, ys, png, f"{Path(a.input).name}: {method}", "objects" if a.unit_size else "bytes")
    print(f"wrote {len(xs):,} points to {out} and the plot to {png}")
    return 0


def _import_pyplot() -> None:
    """Imports matplotlib's pyplot on the Agg backend (a failure shows when
    the plot is drawn)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except Exception:
        pass


def _plot(xs: list[int], ys: list[float], png: Path, title: str, unit: str) -> None:
    """The curve as a step plot (the miss ratio holds between points)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    ax.step(xs, ys, where="post", marker="." if len(xs) <= 50 else None)
    ax.set_xlabel(f"cache size ({unit})")
    ax.set_ylabel("miss ratio")
    ax.set_ylim(0, max(1.0, max(ys, default=0.0)) * 1.02)
    if len(xs) > 1 and xs[-1] > 100 * max(1, xs[1]):
        ax.set_xscale("symlog", linthresh=max(1, xs[1]))
    ax.set_xlim(left=0, right=max(xs) * 1.05 if xs else 1.0)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)


def cmd_bench(a: argparse.Namespace) -> int:
    import json

    from tierlab.bench import print_bench, run_bench

    if a.repeat < 1:
        return _err(f"--repeat {a.repeat}: must be at least 1")
    policies = [p.strip() for p in a.policies.split(",") if p.strip()]
    if not policies:
        return _err(f"--policies {a.policies!r}: name at least one policy, e.g. lru,fifo,clock")
    rows = run_bench(a.trace, policies, a.capacity, a.tiers, a.repeat)
    if a.json:
        print(json.dumps(rows))
    else:
        print_bench(a.trace, rows)
    return 0


def _overrides(pairs: list[str]) -> dict[str, object]:
    import tomllib

    out: dict[str, object] = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        if not eq or not key.strip():
            raise _BadArg(f"--set {pair!r}: expected KEY=VALUE, e.g. workload.scale=0.1")
        try:
            out[key.strip()] = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            out[key.strip()] = text  # a bare word: a string
    return out


@contextmanager
def _sweep_progress(enabled: bool, label: str) -> Iterator[Callable[[int, int, int], None] | None]:
    """Points done, failed and left."""
    with _bar(enabled, label, sweep=True) as b:
        if b is None:
            yield None
            return
        bar, task = b

        def update(done: int, failed: int, total: int) -> None:
            bar.update(task, completed=done, total=total, failed=failed, left=total - done)

        yield update


def cmd_sweep(a: argparse.Namespace) -> int:
    from tierlab._sweep import sweep

    if a.workers is not None and a.workers < 1:
        return _err(f"--workers {a.workers}: must be at least 1")
    try:
        overrides = _overrides(a.set)
    except _BadArg as e:
        return _err(str(e))
    if a.dry_run:
        from tierlab.experiment import load_experiment

        exp = load_experiment(a.experiment, overrides)
    with _sweep_progress(not a.no_progress and not a.dry_run, "sweep") as cb:
        r = sweep(
            exp if a.dry_run else a.experiment,
            store=a.store,
            scheduler=a.scheduler,
            workers=a.workers,
            progress=cb,
            overrides=None if a.dry_run else overrides,
            dry_run=a.dry_run,
        )
    if a.dry_run:
        # After the sweep's checks (of the store too): bad input prints nothing.
        for ax in exp.axes:
            shown = ", ".join(str(v) for v in ax.labels)
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


def cmd_export(a: argparse.Namespace) -> int:
    from tierlab.store import export

    n = export(a.store, a.output, a.experiment)
    print(f"wrote {n:,} points to {a.output}")
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    from tierlab.report import write_report

    r = write_report(a.store, a.output, experiment=a.experiment)
    print(f"wrote {r.html} and {len(r.plots)} plot files to {r.html.parent}")
    return 0


def cmd_reproduce(a: argparse.Namespace) -> int:
    from tierlab.reproduce import REPRODUCTIONS, print_reproduction, reproduce

    if a.name not in REPRODUCTIONS:
        return _err(f"unknown reproduction {a.name!r}; expected one of {', '.join(REPRODUCTIONS)}")
    if a.workers is not None and a.workers < 1:
        return _err(f"--workers {a.workers}: must be at least 1")
    try:
        scale = float(_number("--scale", a.scale, float) or 0.0)
    except _BadArg as e:
        return _err(str(e))
    if not (scale > 0 and scale < float("inf")):
        return _err(f"--scale {a.scale}: must be a positive number")
    with _sweep_progress(not a.no_progress, f"reproduce {a.name}") as cb:
        r = reproduce(
            a.name, a.output, scale=scale, scheduler=a.scheduler, workers=a.workers, progress=cb
        )
    print_reproduction(r)
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": cmd_run,
    "techs": cmd_techs,
    "trace": cmd_trace,
    "bench": cmd_bench,
    "capture": cmd_capture,
    "mrc": cmd_mrc,
    "sweep": cmd_sweep,
    "export": cmd_export,
    "report": cmd_report,
    "reproduce": cmd_reproduce,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tierlab`` command."""
    from tierlab.errors import ConfigError, TierlabError

    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ConfigError as e:
        return _err(str(e), _hint(str(e)))
    except TierlabError as e:
        return _err(str(e))
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        return _err(f"{where}{e.strerror or e}")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0


def _hint(msg: str) -> str | None:
    if "unknown technology" in msg:
        return "`tierlab techs` lists the catalog; [techs.NAME] in a config adds one"
    if msg.startswith("workload: missing"):
        return "tierlab run CONFIG --trace FILE"
    return None


if __name__ == "__main__":
    sys.exit(main())
