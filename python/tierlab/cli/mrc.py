"""``tierlab mrc``: a trace's miss-ratio curve as CSV and its plot."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tierlab.cli._common import Files, add_trace_opts, config_trace, err, progress, source

if TYPE_CHECKING:
    from pathlib import Path


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mrc = sub.add_parser(
        "mrc",
        help="miss-ratio curve of a trace (CSV + PNG)",
        description="Write the miss-ratio curve of a trace file (or of a config's [workload]) "
        "as CSV with columns size,miss_ratio, and its plot beside it (OUT.png). Exact LRU by "
        "stack distances by default; --shards samples (SHARDS); --policy or --config "
        "simulates at --sizes.",
    )
    mrc.add_argument("input", help="trace file, or a config whose [workload] to read")
    add_trace_opts(mrc)
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


def files(a: argparse.Namespace) -> Files:
    from pathlib import Path

    inputs = [*source(a.input), ("config", a.config), ("trace", config_trace(a.config))]
    outputs = [("-o", a.output, "file")]
    if not a.no_plot:
        outputs.append(("-o", str(Path(a.output).with_suffix(".png")), "file"))
    return Files(inputs, outputs)


def handle(a: argparse.Namespace) -> int:
    from pathlib import Path

    from tierlab.api import mrc_method, mrc_points

    out = Path(a.output)
    if out.suffix.lower() != ".csv":
        return err(f"-o {a.output}: the output must be a .csv file (the plot goes beside it)")
    sizes = None
    if a.sizes is not None:
        sizes = [s.strip() for arg in a.sizes for s in arg.split(",") if s.strip()]
    # The engine's rule for which method these options ask for; a bad
    # combination stops here, before the pass and matplotlib's import.
    method = mrc_method(
        policy=a.policy, sizes=sizes, shards=a.shards, shards_size=a.shards_size, config=a.config
    )
    # matplotlib takes ~0.9 s to import here, as long as the engine takes
    # for SHARDS on 20M requests: import it on the other core while the
    # engine (which releases the GIL) computes the curve.
    import threading

    warm = threading.Thread(target=_import_pyplot, name="import-matplotlib", daemon=True)
    if not a.no_plot:
        warm.start()
    with progress(not a.no_progress, "computing the curve") as cb:
        xs, ys, largest, left_out = mrc_points(
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
    # Sizes a SHARDS sample is too small for are left out by the engine
    # (the same rule as tierlab.mrc's), which says so.
    if left_out is not None:
        print(f"note: {left_out}", file=sys.stderr)
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
    if a.config:
        # The engine labels a hierarchy's curve "hierarchy (simulated)"; the
        # plot names the user's config file instead.
        method = f"{Path(a.config).name} (simulated)"
    simulated = a.policy is not None or a.config is not None
    objects = _counts_objects(a)
    _plot(xs, ys, png, f"{Path(a.input).name}: {method}", objects, simulated)
    print(f"wrote {len(xs):,} points to {out} and the plot to {png}")
    return 0


def _counts_objects(a: argparse.Namespace) -> bool:
    """Whether sizes count objects: --unit-size, or a config INPUT whose
    workload sets unit_size (it loaded already: the curve was computed)."""
    if a.unit_size:
        return True
    if not str(a.input).endswith(".toml"):
        return False
    from tierlab.config import load_config

    w = load_config(a.input).get("workload")
    return bool(isinstance(w, dict) and w.get("unit_size"))


def _axis_unit(largest: float) -> tuple[str, float]:
    """The byte unit the x axis counts in: the largest that the biggest size
    reaches, so that its ticks read 0, 100, 200 MiB."""
    for unit, f in (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10)):
        if largest >= f:
            return unit, f
    return "B", 1.0


def _objects_tick(v: float) -> str:
    """An x tick counting objects: 500, 10k, 2.5M."""
    for unit, f in (("M", 1e6), ("k", 1e3)):
        if abs(v) >= f:
            return f"{v / f:.3g}{unit}"
    return f"{v:.3g}"


def _import_pyplot() -> None:
    """Imports matplotlib's pyplot on the Agg backend (a failure shows when
    the plot is drawn)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except Exception:
        pass


def _plot(
    xs: list[int], ys: list[float], png: Path, title: str, objects: bool, simulated: bool
) -> None:
    """A one-pass curve as steps (its miss ratio holds between points);
    simulated sizes as points joined by lines (nothing is known between
    them). The x axis in KiB, MiB or GiB (whichever the largest size
    reaches), or in objects."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    unit, factor = ("objects", 1.0) if objects else _axis_unit(max(xs, default=0))
    sx = [x / factor for x in xs]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    if simulated:
        ax.plot(sx, ys, marker="o", markersize=4, linestyle="-")
    else:
        ax.step(sx, ys, where="post", marker="." if len(xs) <= 50 else None)
    ax.set_xlabel(f"cache size ({unit})")
    ax.set_ylabel("miss ratio")
    ax.set_ylim(0, max(1.0, max(ys, default=0.0)) * 1.02)
    positive = [x for x in sx if x > 0]
    if len(positive) > 1 and positive[-1] > 100 * positive[0]:
        ax.set_xscale("symlog", linthresh=positive[0])
    ax.set_xlim(left=0 if xs and xs[0] == 0 else None, right=max(sx) * 1.05 if sx else 1.0)
    if objects:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _objects_tick(v)))
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
