"""Reports: plots (PNG and SVG, matplotlib Agg) and one self-contained HTML
file per experiment, from a results store.

The plots are picked from the experiment's axes (docs/reports.md):

- a ``tier[i].slowdown`` axis and a ``tier[i].capacity`` axis: throughput
  against the tier's size, one line per slowdown (S1 Fig. 8), and the
  equivalent-capacity table (S1 Table II);
- a ``tier[i].admission`` axis and a ``backing.tech`` axis: storage access
  time of each cache configuration relative to the first one, per storage
  technology (S5 Figs. 3-5), and the gain table;
- kept timelines: the miss ratio over time, one line per point, with the
  boundaries of successive PostMark runs when the workload has ``runs``
  (S2);
- runs with a time model: throughput and p99 latency against the
  ``load.clients`` axis (else the first axis);
- runs with device energy: mean power by device and state (reads,
  writes, erases, active, idle, power-down), one bar per run; and the wear
  histogram of each flashcache tier (docs/device.md);
- any other sweep: each metric against the first axis.

Every report also holds the table of all results.
"""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab._atomic import atomic_path, atomic_write
from tierlab.errors import StoreError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

_SLOWDOWN = re.compile(r"^tier\[(\d+)\]\.slowdown$")
_CAPACITY = re.compile(r"^tier\[(\d+)\]\.capacity$")
_ADMISSION = re.compile(r"^tier\[(\d+)\]\.admission$")
_BACKING = "backing.tech"
#: Results tables longer than this are cut in the HTML (the store has them all).
MAX_TABLE_ROWS = 500


@dataclass
class Plot:
    """A figure of a report: its file name stem, the figure, and a caption
    that says what is plotted against what, from which runs."""

    name: str
    figure: Figure
    caption: str


@dataclass
class Section:
    """A part of a report: a heading, a paragraph, tables and figures."""

    title: str
    text: str = ""
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[Plot] = field(default_factory=list)


@dataclass
class Report:
    """What :func:`write_report` wrote."""

    experiment: str
    html: Path
    plots: list[Path]
    sections: list[Section]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower() or "x"


def _label(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _numeric(values: pd.Series) -> pd.Series | None:
    """The axis values as numbers ("10%" -> 10.0), or None."""
    import pandas as pd

    def conv(v: Any) -> float:
        if isinstance(v, bool):
            raise ValueError
        if isinstance(v, int | float):
            return float(v)
        s = str(v).strip()
        return float(s[:-1]) if s.endswith("%") else float(s)

    try:
        return pd.Series([conv(v) for v in values], index=values.index, dtype=float)
    except (TypeError, ValueError):
        return None


def _figure(width: float = 7.0, height: float = 4.5, ncols: int = 1) -> tuple[Figure, Any]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols if ncols > 1 else width, height), dpi=100)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, axes


def _combos(df: pd.DataFrame, cols: Sequence[str]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The rows of each combination of ``cols`` (in order of appearance)."""
    if not cols:
        return [({}, df)]
    out = []
    for key, g in df.groupby(list(cols), sort=False, dropna=False):
        kt = key if isinstance(key, tuple) else (key,)
        out.append((dict(zip(cols, kt, strict=True)), g))
    return out


def _where(combo: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {_label(v)}" for k, v in combo.items())


# --------------------------------------------------------------------------
# S1: throughput against size, one line per slowdown
# --------------------------------------------------------------------------


def size_unit(largest: float) -> tuple[float, str]:
    """The binary unit (divisor, name) in which ``largest`` bytes reads as a
    number between 1 and 1024: axes and tables of sizes in human units.

    >>> size_unit(268435456), size_unit(1.5 * 2**30), size_unit(500)
    ((1048576, 'MiB'), (1073741824, 'GiB'), (1, 'B'))
    """
    for div, name in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if largest >= div:
            return div, name
    return 1, "B"


def capacity_counts(store: str | os.PathLike[str], experiment: str) -> str:
    """What the runs' ``tiers.i.capacity`` counts: ``"bytes"``, or
    ``"objects"`` when every run ignores object sizes (``unit_size``), or
    ``""`` when the runs differ."""
    import json

    from tierlab.store import Store

    kinds = set()
    with Store(store, create=False) as s:
        for r in s.rows(experiment):
            w = json.loads(r["config"]).get("workload") or {}
            kinds.add("objects" if isinstance(w, dict) and w.get("unit_size") else "bytes")
    return kinds.pop() if len(kinds) == 1 else ""


def _capacity_scale(d: pd.DataFrame, column: str, counts: str) -> tuple[float, str]:
    """The divisor and unit of a capacity column: a binary unit for bytes."""
    if counts == "bytes":
        return size_unit(float(d[column].max()))
    return 1, counts or "bytes or objects"


def capacity_slowdown_section(
    df: pd.DataFrame,
    slowdown: str,
    capacity: str,
    others: Sequence[str],
    counts: str = "bytes",
) -> Section:
    """Throughput against the tier's capacity, one line per slowdown, one plot
    per combination of the other axes; the equivalent-capacity table.

    Sizes are the runs' own ``tiers.i.capacity``, in a binary unit when
    ``counts`` is ``"bytes"`` (see :func:`capacity_counts`); without that
    metric the capacity axis is plotted as given, and the section says the
    table needs it rather than promising it."""
    from tierlab.analysis import equivalent_capacity, ratio_summary

    tier = _SLOWDOWN.match(slowdown)
    idx = tier.group(1) if tier else "0"
    cap_metric = f"tiers.{idx}.capacity"
    d = df[df["status"] == "ok"].copy()
    metric = "throughput_rps" if "throughput_rps" in d.columns else _metrics(d)[0]
    has_cap = cap_metric in d.columns
    div, unit = _capacity_scale(d, cap_metric, counts) if has_cap else (1, "")
    if has_cap:
        d["_x"] = d[cap_metric].astype(float) / div
        xlabel = f"tier {idx} capacity ({unit})"
    else:
        x = _numeric(d[capacity])
        d["_x"] = x if x is not None else d[capacity].astype(str)
        xlabel = f"{capacity} (as swept)"
    table = has_cap and bool((d[slowdown] == 1).any())
    text = (
        "As S1 Fig. 8: each line is one slowdown of the tier's medium; the mean over repetitions. "
    )
    if table:
        text += (
            "The tables give, for each slowdown, the capacity at which the slow tier "
            "matches the throughput of slowdown 1 at each swept capacity (linear "
            "interpolation between swept sizes; empty where the slow tier never reaches "
            "it within the sweep), and that capacity as a ratio to the slowdown-1 "
            "capacity (S1 Table II)."
        )
    elif not has_cap:
        text += (
            f"The equivalent-capacity table (S1 Table II) needs each run's capacity: "
            f"add {cap_metric!r} to the experiment's metrics."
        )
    else:
        text += "The equivalent-capacity table (S1 Table II) needs a slowdown of 1 to compare with."
    sec = Section("Throughput against capacity, one line per slowdown", text)
    for combo, g in _combos(d, others):
        fig, (ax,) = _figure()
        m = g.groupby([slowdown, capacity], sort=False)[["_x", metric]].mean().reset_index()
        m = m.sort_values([slowdown, "_x"])
        for s, line in m.groupby(slowdown, sort=True):
            ax.plot(line["_x"], line[metric], marker="o", ms=3, label=f"slowdown {_label(s)}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(_axis_label(metric))
        if has_cap:
            ax.xaxis.set_major_formatter(_thousands())
        vals = m[metric][m[metric] > 0]
        log = bool(len(vals) and vals.max() > 100 * vals.min())
        if log:
            # Throughput spans orders of magnitude once the tier holds the whole
            # footprint (no disk reads left): a linear axis would flatten the
            # sizes where the lines must be compared.
            ax.set_yscale("log")
            ax.set_ylabel(f"{_axis_label(metric)} (log scale)")
        else:
            ax.yaxis.set_major_formatter(_thousands())
        ax.set_title(_where(combo) or "all points", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        runs = len(g)
        caption = (
            f"{_axis_label(metric)} against {xlabel}, one line per value of {slowdown}"
            f" ({_where(combo) or 'all points'}; {_count(runs, 'run')}"
            f"{', mean over repetitions' if g['rep'].nunique() > 1 else ''})."
        )
        sec.figures.append(Plot(f"throughput-{_slug(_where(combo) or 'all')}", fig, caption))
    if table:
        eq = equivalent_capacity(
            d,
            slowdown=slowdown,
            capacity=cap_metric,
            metric=metric,
            by=list(others),
            group=capacity,
        )
        summ = ratio_summary(eq, by=list(others))
        sec.tables.append(("Equivalent capacity ratio per slowdown (mean, min, max)", summ))
        show = eq.copy()
        show["capacity"] = show["capacity"] / div
        show["equivalent_capacity"] = show["equivalent_capacity"] / div
        show = show.rename(
            columns={
                "capacity": f"capacity ({unit})",
                "target": f"target {metric}",
                "equivalent_capacity": f"equivalent ({unit})",
            }
        )
        sec.tables.append(("Equivalent capacity at each swept capacity", show))
    return sec


_AXIS_LABELS = {
    "throughput_rps": "throughput (requests/s)",
    "latency_ns.p99": "p99 latency (ns)",
    "miss_ratio": "miss ratio",
    "byte_miss_ratio": "byte miss ratio",
    "amat_ns": "mean access time (ns)",
    "access_time_ns": "storage access time (ns)",
    "total_time_ns": "simulated time (ns)",
}


def _axis_label(metric: str) -> str:
    return _AXIS_LABELS.get(metric, metric)


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}")


def _count(n: int, what: str) -> str:
    """``1 point``, ``2 points``."""
    return f"{n:,} {what}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------
# S5: storage access time per storage technology and cache configuration
# --------------------------------------------------------------------------


def admission_storage_section(
    df: pd.DataFrame, admission: str, others: Sequence[str], baseline: Any | None = None
) -> Section:
    """Storage access time of each cache configuration relative to the
    baseline configuration (default: the first), per storage technology."""
    from tierlab.analysis import gain_over_baseline

    d = df[df["status"] == "ok"]
    metric = next(
        (m for m in ("access_time_ns", "total_time_ns", "amat_ns") if m in d.columns),
        _metrics(d)[0],
    )
    configs = list(dict.fromkeys(df[admission]))
    base = configs[0] if baseline is None else baseline
    g = gain_over_baseline(
        d, config=admission, baseline=base, metric=metric, by=[_BACKING, *others]
    )
    sec = Section(
        "Storage access time per storage technology and cache",
        f"As S5 Figs. 3-5: {metric} of each cache configuration relative to "
        f"'{_label(base)}' on the same storage (1 = the same time; lower is better); "
        "gain = 1 - relative time.",
    )
    techs = list(dict.fromkeys(df[_BACKING]))
    # One figure per combination of the other axes but the last, one panel per
    # value of the last.
    outer, inner = list(others[:-1]), list(others[-1:])
    for combo, sub in _combos(g, outer):
        panels = _combos(sub, inner)
        if inner:
            # Panels in the axis's order (df is in point order), not the
            # order the gain table happens to be grouped in ("10%" < "5%").
            order = {v: i for i, v in enumerate(dict.fromkeys(df[inner[0]]))}
            panels.sort(key=lambda p: order.get(p[0][inner[0]], len(order)))
        fig, axes = _figure(5.0 if len(panels) > 1 else 7.0, 4.5, len(panels))
        for ax, (pc, pg) in zip(axes, panels, strict=True):
            width = 0.8 / max(1, len(configs))
            for j, c in enumerate(configs):
                ys = [
                    float(pg[(pg[_BACKING] == t) & (pg["config"] == c)]["metric"].mean())
                    / float(pg[(pg[_BACKING] == t) & (pg["config"] == c)]["baseline"].mean())
                    for t in techs
                ]
                xs = [i + (j - (len(configs) - 1) / 2) * width for i in range(len(techs))]
                ax.bar(xs, ys, width, label=_label(c))
            ax.set_xticks(range(len(techs)), [_label(t) for t in techs], fontsize=8)
            ax.set_ylabel(f"{_axis_label(metric).removesuffix(' (ns)')} relative to {_label(base)}")
            ax.set_title(_where(pc) or "all points", fontsize=9)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].legend(fontsize=8)
        if combo:
            fig.suptitle(_where(combo), fontsize=10)
        fig.tight_layout()
        runs = d
        for k, v in combo.items():
            runs = runs[runs[k] == v]
        caption = (
            f"{_axis_label(metric).removesuffix(' (ns)')} of each value of {admission} "
            "relative to "
            f"'{_label(base)}', one bar group per {_BACKING}"
            + (f", one panel per value of {inner[0]}" if inner else "")
            + f" ({_where(combo) or 'all points'}; {_count(len(runs), 'run')}"
            + (", mean over repetitions" if runs["rep"].nunique() > 1 else "")
            + ")."
        )
        sec.figures.append(Plot(f"access-time-{_slug(_where(combo) or 'all')}", fig, caption))
    table = g[g["config"] != base].copy()
    sec.tables.append((f"Gain in {metric} over '{_label(base)}'", table))
    return sec


# --------------------------------------------------------------------------
# S2: miss ratio over time
# --------------------------------------------------------------------------


def run_boundaries(config: dict[str, Any]) -> list[int]:
    """For a PostMark workload with ``runs`` > 1, the request count at the end
    of each run (generated, not simulated: the first k runs of a trace are
    the trace of ``runs = k``); [] for any other workload."""
    import copy

    from tierlab.api import trace_stats

    w = config.get("workload")
    if not isinstance(w, dict) or w.get("type") != "postmark":
        return []
    runs = int((w.get("postmark") or {}).get("runs", 1))
    if runs < 2:
        return []
    out = []
    for k in range(1, runs + 1):
        c = copy.deepcopy(config)
        c["workload"]["postmark"]["runs"] = k
        out.append(int(trace_stats({"workload": c["workload"]})["requests"]))
    return out


def timeline_section(
    store: str | os.PathLike[str], experiment: str, axes: Sequence[str]
) -> Section | None:
    """Miss ratio over time, one line per point (first repetition), with the
    boundaries of successive PostMark runs. An axis over the number of runs
    (``workload.postmark.runs``) is shown at its largest value only."""
    import json

    from tierlab.store import Store, load_timelines

    t = load_timelines(store, experiment)
    if t.empty or "miss_ratio" not in t.columns:
        return None
    t = t[t["rep"] == t["rep"].min()]
    axes = list(axes)
    runs_ax = next((a for a in axes if a.endswith(".runs")), None)
    if runs_ax is not None:
        t = t[t[runs_ax] == t[runs_ax].max()]
        axes.remove(runs_ax)
    keep = set(t["hash"])
    bounds: list[int] = []
    with Store(store, create=False) as s:
        for r in s.rows(experiment):
            if r["hash"] in keep:
                bounds = run_boundaries(json.loads(r["config"]))
                break
    sec = Section(
        "Miss ratio over time",
        "The hierarchy's miss ratio in each interval of the timeline (first "
        "repetition), one line per point"
        + ("; dotted lines mark the end of each successive PostMark run." if bounds else "."),
    )
    fig, (ax,) = _figure(8.0, 4.5)
    for combo, g in _combos(t, axes):
        g = g.sort_values("requests")
        # An interval of deletes only (PostMark's end of run) has no lookups and
        # no miss ratio: a gap in the line, not a drop to 0.
        y = g["miss_ratio"].where(g["lookups"] > 0) if "lookups" in g else g["miss_ratio"]
        ax.plot(g["requests"] / 1e6, y, lw=1.2, label=_where(combo) or "run")
    for b in bounds[:-1]:
        ax.axvline(b / 1e6, color="grey", ls=":", lw=1)
    ax.set_xlabel("requests (millions)")
    ax.set_ylabel("miss ratio per interval")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    lines = len(_combos(t, axes))
    sec.figures.append(
        Plot(
            "miss-ratio-over-time",
            fig,
            f"Miss ratio of each timeline interval against requests simulated, "
            f"{_count(lines, 'line')} (one per point"
            + (f": {', '.join(axes)}" if axes else "")
            + (f"; at the largest {runs_ax}" if runs_ax else "")
            + "; first repetition)"
            + ("; dotted lines: end of each PostMark run." if bounds else "."),
        )
    )
    return sec


# --------------------------------------------------------------------------
# any sweep
# --------------------------------------------------------------------------


_NOT_METRICS = {
    "experiment", "point", "hash", "status", "error", "rep", "seed",
    "elapsed_s", "version", "finished_at",
}  # fmt: skip


#: A device's energy breakdown and busy time: drawn by the device section,
#: not one plot per part in the generic one.
_DEVICE_PARTS = re.compile(
    r"(^|\.)energy\.|(^|\.)(device_busy_ns|active_share|pages_read|pages_written)$"
)


def _metrics(df: pd.DataFrame, axes: Sequence[str] = ()) -> list[str]:
    import pandas as pd

    return [
        c
        for c in df.columns
        if c not in _NOT_METRICS
        and c not in axes
        and not str(c).startswith("_")
        and not _DEVICE_PARTS.search(str(c))
        and pd.api.types.is_numeric_dtype(df[c])
    ]


def generic_section(
    df: pd.DataFrame, axes: Sequence[str], max_plots: int = 12, counts: str = "bytes"
) -> Section:
    """Each metric against the first axis, one line per combination of the
    other axes (mean over repetitions)."""
    sec = Section(
        "Each metric against the first axis",
        "Mean over repetitions; one line per combination of the other axes.",
    )
    d = df[df["status"] == "ok"].copy()
    if not axes or d.empty:
        return sec
    first, rest = axes[0], list(axes[1:])
    xlabel = first
    cap = _CAPACITY.match(first)
    cap_metric = f"tiers.{cap.group(1)}.capacity" if cap else ""
    sizes = cap_metric in d.columns
    if sizes:
        # A capacity axis is drawn in the runs' own bytes, in a binary unit
        # (a share such as "10%" resolves to different bytes per footprint).
        div, unit = _capacity_scale(d, cap_metric, counts)
        d["_x"] = d[cap_metric].astype(float) / div
        xlabel = f"tier {cap.group(1) if cap else 0} capacity ({unit})"
        numeric = True
    else:
        x = _numeric(d[first])
        d["_x"] = x if x is not None else d[first].astype(str)
        numeric = x is not None
    for metric in _metrics(d, axes)[:max_plots]:
        fig, (ax,) = _figure()
        for combo, g in _combos(d, rest):
            if numeric:
                m = g.groupby(first, sort=False)[["_x", metric]].mean().sort_values("_x")
                xs, ys = list(m["_x"]), list(m[metric])
            else:
                mm = g.groupby("_x", sort=False)[metric].mean()
                xs, ys = list(mm.index), list(mm.values)
            ax.plot(xs, ys, marker="o", ms=3, label=_where(combo) or metric)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(_axis_label(metric))
        if sizes:
            ax.xaxis.set_major_formatter(_thousands())
        ax.grid(True, alpha=0.3)
        if rest:
            ax.legend(fontsize=7)
        fig.tight_layout()
        caption = (
            f"{_axis_label(metric)} against {xlabel}"
            + (f", one line per combination of {', '.join(rest)}" if rest else "")
            + f" ({_count(len(d), 'run')}"
            + (", mean over repetitions" if d["rep"].nunique() > 1 else "")
            + ")."
        )
        sec.figures.append(Plot(_slug(metric), fig, caption))
    return sec


_P99 = "latency_ns.p99"
_CLIENTS = "load.clients"


def time_section(df: pd.DataFrame, axes: Sequence[str]) -> Section | None:
    """Throughput and p99 latency against the swept axis (``load.clients``
    when it is one; else the first), one line per combination of the
    others: the knee where added clients stop adding throughput and start
    adding waiting. None unless the runs had a time model and kept both."""
    d = df[df["status"] == "ok"].copy()
    if not axes or d.empty or _P99 not in d.columns or "throughput_rps" not in d.columns:
        return None
    if d[_P99].isna().all():
        return None
    x = _CLIENTS if _CLIENTS in axes else axes[0]
    rest = [a for a in axes if a != x]
    xs = _numeric(d[x])
    d["_x"] = xs if xs is not None else d[x].astype(str)
    fig, (a1, a2) = _figure(5.5, 4.0, ncols=2)
    for combo, g in _combos(d, rest):
        m = g.groupby("_x", sort=xs is not None)[["throughput_rps", _P99]].mean()
        label = _where(combo) or None
        a1.plot(list(m.index), list(m["throughput_rps"]), marker="o", ms=3, label=label)
        a2.plot(list(m.index), list(m[_P99] / 1e3), marker="o", ms=3, label=label)
    a1.set_ylabel(_axis_label("throughput_rps"))
    a1.yaxis.set_major_formatter(_thousands())
    a2.set_ylabel("p99 latency (us)")
    for ax in (a1, a2):
        ax.set_xlabel(x)
        ax.grid(True, alpha=0.3)
        if rest:
            ax.legend(fontsize=7)
    fig.tight_layout()
    sec = Section(
        f"Throughput and p99 latency against {x}",
        "From the time model (docs/time.md): requests completed per second of "
        "simulated time, and the 99th percentile of request latency.",
    )
    sec.figures.append(
        Plot(
            "throughput-p99",
            fig,
            f"Throughput and p99 latency against {x}"
            + (f", one line per combination of {', '.join(rest)}" if rest else "")
            + f" ({_count(len(d), 'run')}"
            + (", mean over repetitions" if d["rep"].nunique() > 1 else "")
            + ").",
        )
    )
    return sec


# --------------------------------------------------------------------------
# Device figures: power by device and state, wear histograms
# --------------------------------------------------------------------------

#: The energy parts drawn, in stacking order, and their legend labels.
_STATES = (
    ("read_j", "reads"),
    ("write_j", "writes"),
    ("erase_j", "erases"),
    ("active_j", "active"),
    ("idle_j", "idle"),
    ("powerdown_j", "power-down"),
)
_TIER_ENERGY = re.compile(r"^tiers\.(\d+)\.energy_j$")
_HIST = re.compile(r"^tiers\.(\d+)\.wear_histogram\.(\d+)\.([01])$")
#: Runs drawn in the power and wear figures (the table has them all).
MAX_DEVICE_RUNS = 12


def _run_labels(d: pd.DataFrame, axes: Sequence[str]) -> list[str]:
    if not axes:
        return [f"run {i + 1}" for i in range(len(d))]
    return [", ".join(_label(r[a]) for a in axes) for _, r in d.iterrows()]


def device_section(df: pd.DataFrame, axes: Sequence[str]) -> Section | None:
    """Mean power of each device by state, a stacked bar per run and device
    (energy of each part over the counted time), and each flashcache tier's
    wear histogram. None when the runs kept no device energy."""
    import numpy as np

    d = df[df["status"] == "ok"].head(MAX_DEVICE_RUNS)
    tiers = sorted(int(m.group(1)) for c in d.columns if (m := _TIER_ENERGY.match(str(c))))
    devices = [(f"tiers.{i}", f"tier {i}") for i in tiers]
    if "backing.energy_j" in d.columns:
        devices.append(("backing", "backing"))
    time_col = "total_time_ns"
    if d.empty or not devices or time_col not in d.columns:
        return None
    # Devices with a known energy (the default HDD backing store has none).
    have = [(p, name) for p, name in devices if d[f"{p}.energy_j"].notna().any()]
    if not have:
        return None
    sec = Section(
        "Power by device and state",
        "Mean power after warm-up (docs/device.md): each part's energy over "
        "the counted simulated time. A part the catalog has no figure for is "
        "left out (the run's energy_unknown names it).",
    )
    seconds = d[time_col].astype(float).to_numpy() / 1e9
    labels = _run_labels(d, axes)
    fig, (ax,) = _figure(max(7.0, 1.2 * len(labels) * len(have)), 4.5)
    width = 0.8 / len(have)
    highest = 0.0
    x = np.arange(len(labels))
    colors = ("tab:blue", "tab:orange", "tab:red", "tab:green", "tab:gray", "tab:purple")
    hatches = ("", "//", "..", "xx", "\\\\", "++")
    for j, (p, name) in enumerate(have):
        bottom = np.zeros(len(labels))
        for (k, state), color in zip(_STATES, colors, strict=True):
            col = f"{p}.energy.{k}"
            if col not in d.columns:
                continue
            j_ = d[col].astype(float).fillna(0.0).to_numpy()
            w = np.divide(j_, seconds, out=np.zeros_like(j_), where=seconds > 0)
            ax.bar(
                x + j * width, w, width, bottom=bottom, color=color,
                hatch=hatches[j % len(hatches)], edgecolor="black", linewidth=0.3,
                label=state if j == 0 else None,
            )  # fmt: skip
            bottom += w
        highest = max(highest, float(bottom.max(initial=0.0)))
        for xi, top in zip(x, bottom, strict=True):
            ax.annotate(name, (xi + j * width, top), ha="center", va="bottom", fontsize=6)
    ax.set_xticks(x + width * (len(have) - 1) / 2, labels, fontsize=7)
    ax.set_ylabel("power (W)")
    if highest > 0:
        ax.set_ylim(0, highest * 1.12)  # room for the device labels over the bars
    ax.set_xlabel(", ".join(axes) if axes else "run")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    sec.figures.append(
        Plot(
            "power-by-state",
            fig,
            f"Mean power of each device ({', '.join(n for _, n in have)}) by state, "
            f"one bar per run and device ({_count(len(d), 'run')}).",
        )
    )
    # Wear histograms: `[erases, erase blocks]` pairs, stored flattened.
    hist: dict[int, dict[int, dict[str, str]]] = {}
    for c in d.columns:
        if m := _HIST.match(str(c)):
            tier, pair, part = int(m.group(1)), int(m.group(2)), m.group(3)
            hist.setdefault(tier, {}).setdefault(pair, {})[part] = str(c)
    for tier, pairs in sorted(hist.items()):
        fig, (ax,) = _figure()
        for (_, r), label in zip(d.iterrows(), labels, strict=True):
            pts = sorted(
                (float(r[cols["0"]]), float(r[cols["1"]]))
                for cols in pairs.values()
                if "0" in cols and "1" in cols and not math.isnan(float(r[cols["0"]]))
            )
            if pts:
                ax.step([p[0] for p in pts], [p[1] for p in pts], where="mid",
                        marker="o", ms=3, label=label)  # fmt: skip
        ax.set_xlabel("erases per erase block")
        ax.set_ylabel("erase blocks")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        sec.figures.append(
            Plot(
                f"wear-histogram-tier-{tier}",
                fig,
                f"Wear histogram of tier {tier}: erase blocks by erases, one line per run.",
            )
        )
    return sec


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------


def build_sections(
    store: str | os.PathLike[str], experiment: str | None = None
) -> tuple[dict[str, Any], pd.DataFrame, list[Section]]:
    """The experiment's metadata, its results and the report sections its
    axes call for."""
    from tierlab.store import load, load_experiment_meta

    meta = load_experiment_meta(store, experiment)
    name = meta["name"]
    df = load(store, name)
    axes = [a["key"] for a in meta.get("axes", [])]
    sections: list[Section] = []
    slow = next((a for a in axes if _SLOWDOWN.match(a)), None)
    cap = next((a for a in axes if _CAPACITY.match(a)), None)
    adm = next((a for a in axes if _ADMISSION.match(a)), None)
    if df.empty or not (df["status"] == "ok").any():
        return meta, df, sections
    counts = capacity_counts(store, name)
    if slow and cap:
        others = [a for a in axes if a not in (slow, cap)]
        sections.append(capacity_slowdown_section(df, slow, cap, others, counts))
    if adm and _BACKING in axes:
        sections.append(
            admission_storage_section(df, adm, [a for a in axes if a not in (adm, _BACKING)])
        )
    if meta.get("timeline"):
        tl = timeline_section(store, name, axes)
        if tl is not None:
            sections.append(tl)
    specific = bool(sections)
    timed = time_section(df, axes)
    if timed is not None:
        sections.insert(0, timed)
    if not specific:
        sections.append(generic_section(df, axes, counts=counts))
    device = device_section(df, axes)
    if device is not None:
        sections.append(device)
    return meta, df, sections


def _png_b64(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _table_html(df: pd.DataFrame) -> str:
    shown = formatted(df.head(MAX_TABLE_ROWS))
    out: str = shown.to_html(index=False, border=0, classes="results")
    if len(df) > MAX_TABLE_ROWS:
        out += f"<p>(first {MAX_TABLE_ROWS} of {len(df):,} rows)</p>"
    return out


def formatted(df: pd.DataFrame, na: str = "") -> pd.DataFrame:
    """The table as text, one number format per column: a missing value is
    ``na`` (never "None" or "nan"), whole numbers get thousands separators,
    and the other numbers of a column get the same decimals (four
    significant digits at the column's largest value, fewer when the
    values need fewer)."""
    return df.apply(lambda col: col.map(column_format(list(col), na)))


def _is_number(v: Any) -> bool:
    # numbers.Real covers numpy's scalars too (numpy's bool is not one); a
    # bool is a word, not a number.
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def column_format(values: Sequence[Any], na: str = "") -> Any:
    """The one formatter of a column of values.

    >>> f = column_format([0.5, 0.123456, None])
    >>> f(0.5), f(0.123456), f(None)
    ('0.5000', '0.1235', '')
    >>> f = column_format([286088.1, 30503.25])
    >>> f(286088.1), f(30503.25)
    ('286,088', '30,503')
    >>> f = column_format([1, 2.0, "n/a"])
    >>> f(1), f(2.0), f("n/a")
    ('1', '2', 'n/a')
    >>> f = column_format([0.6, 1.0])
    >>> f(0.6), f(1.0)
    ('0.6', '1.0')
    """
    nums = [float(v) for v in values if _is_number(v) and math.isfinite(v)]
    decimals = 0
    if nums:
        top = max(abs(x) for x in nums)
        digits = math.floor(math.log10(top)) + 1 if top > 0 else 1
        most = min(8, max(0, 4 - digits))
        # No more decimals than the column's values need: 0.6 and 1.0 as given
        # (0.6, 1.0), not 0.6000 and 1.0000.
        decimals = next(
            (
                k
                for k in range(most + 1)
                if all(abs(round(x, k) - x) <= 1e-9 * max(1, abs(x)) for x in nums)
            ),
            most,
        )

    def fmt(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return na
        if not _is_number(v):
            return str(v)
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:,.{decimals}f}"

    return fmt


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; } h3 { font-size: 1em; }
table.results { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
table.results th, table.results td { padding: 2px 8px; border-bottom: 1px solid #ddd;
  text-align: right; }
table.results th { background: #f4f4f4; }
img { max-width: 100%; } .meta { color: #555; font-size: 0.9em; }
figcaption { font-size: 0.9em; color: #333; } figcaption .file { color: #777; }
"""


def make_folder(out: Path) -> None:
    """Creates the folder a command writes into (and its parents); a file
    in the way is named as such, not as mkdir's "File exists"."""
    for p in (out, *out.parents):
        if p.exists() and not p.is_dir():
            raise StoreError(f"{p}: is a file; the output is a folder (-o DIR)")
    out.mkdir(parents=True, exist_ok=True)


def _not_the_store(p: Path, store: str | os.PathLike[str]) -> None:
    """A report's file may not replace the store it reports on (a store
    named like the report's page, in the report's folder)."""
    from tierlab.errors import StoreError

    try:
        same = os.path.samefile(p, store)
    except OSError:
        return  # p does not exist yet
    if same:
        raise StoreError(
            f"{p}: is the results store the report reads; write the report to another "
            "folder (-o DIR)"
        )


def write_report(
    store: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    *,
    experiment: str | None = None,
    extra: Sequence[Section] = (),
) -> Report:
    """Writes the plots (PNG and SVG) and one self-contained HTML file of an
    experiment's results.

    Parameters
    ----------
    store
        A results store (``tierlab sweep``).
    out_dir
        Where to write (created if absent); default ``<experiment>-report``
        beside the store.
    experiment
        Which experiment, when the store holds several.
    extra
        Sections put first (``tierlab reproduce``'s comparison with the paper).

    Returns
    -------
    Report
        The HTML file and the plot files.
    """
    from tierlab import __version__
    from tierlab.store import Store

    with Store(store, create=False):
        pass  # a missing file or another kind of file fails here, with StoreError
    meta, df, sections = build_sections(store, experiment)
    name = meta["name"]
    out = Path(out_dir) if out_dir is not None else Path(store).parent / f"{name}-report"
    make_folder(out)
    sections = [*extra, *sections]
    plots: list[Path] = []
    body: list[str] = []
    ok = int((df["status"] == "ok").sum()) if not df.empty else 0
    failed = int((df["status"] == "error").sum()) if not df.empty else 0
    axes = [a["key"] for a in meta.get("axes", [])]
    body.append(f"<h1>{html.escape(name)}</h1>")
    if meta.get("description"):
        body.append(f"<p>{html.escape(meta['description'])}</p>")
    body.append(
        f"<p class='meta'>{_count(ok, 'point')} ok, {failed:,} failed; axes: "
        f"{html.escape(', '.join(axes) or 'none')}; repetitions: "
        f"{meta.get('repetitions', 1)}; store: {html.escape(str(store))}; "
        f"report by tierlab {html.escape(__version__)}.</p>"
    )
    used: set[str] = set()
    for sec in sections:
        body.append(f"<h2>{html.escape(sec.title)}</h2>")
        if sec.text:
            body.append(f"<p>{html.escape(sec.text)}</p>")
        for plot in sec.figures:
            fig = plot.figure
            stem = f"{name}-{plot.name}"
            while stem in used:
                stem += "-2"
            used.add(stem)
            for ext in ("png", "svg"):
                p = out / f"{stem}.{ext}"
                _not_the_store(p, store)
                with atomic_path(p) as tmp:
                    fig.savefig(tmp, format=ext)
                plots.append(p)
            body.append(
                f"<figure><img alt='{html.escape(plot.caption)}' "
                f"src='data:image/png;base64,{_png_b64(fig)}'/>"
                f"<figcaption>{html.escape(plot.caption)} "
                f"<span class='file'>({html.escape(stem)}.svg)</span></figcaption></figure>"
            )
        for title, table in sec.tables:
            body.append(f"<h3>{html.escape(title)}</h3>")
            body.append(_table_html(table))
    body.append("<h2>All results</h2>")
    cols = [c for c in df.columns if c not in ("hash", "version", "finished_at", "experiment")]
    body.append(_table_html(df[cols]))
    if failed:
        errs = df[df["status"] == "error"][[*axes, "rep", "error"]]
        body.append("<h3>Failed points</h3>")
        body.append(_table_html(errs))
    page = (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>tierlab: {html.escape(name)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
    path = out / f"{name}.html"
    _not_the_store(path, store)
    with atomic_write(path) as f:
        f.write(page)
    return Report(name, path, plots, sections)
