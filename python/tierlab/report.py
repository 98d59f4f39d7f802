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
- flash tiers with an FTL and a cost: lifetime against cost, one point per
  run (:mod:`tierlab.report_lifetime`);
- a ``vm.node[0].capacity`` axis and a migration-policy axis: slowdown
  against the fast node's share, one line per policy, the oracles dashed,
  and the fast share x policy table (:mod:`tierlab.report_tiered`);
- any other sweep: each metric against the first axis.

Every report also holds the table of all results. This module builds the
sections; :mod:`tierlab.report_html` writes them as HTML (``write_report``,
also reachable here), with the figure helpers of :mod:`tierlab.plotting`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab.plotting import (
    as_numbers,
    axis_label,
    combos,
    counted,
    figure,
    from_zero,
    param_name,
    param_value,
    size_unit,
    thousands,
    time_unit,
    value_text,
    where,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

# Axis columns, as tierlab.load names them (tier.0.capacity).
_SLOWDOWN = re.compile(r"^tier\.(\d+)\.slowdown$")
_CAPACITY = re.compile(r"^tier\.(\d+)\.capacity$")
_ADMISSION = re.compile(r"^tier\.(\d+)\.admission$")
_BACKING = "backing.tech"


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


# --------------------------------------------------------------------------
# S1: throughput against size, one line per slowdown
# --------------------------------------------------------------------------


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
        x = as_numbers(d[capacity])
        d["_x"] = x if x is not None else d[capacity].astype(str)
        xlabel = f"{param_name(capacity)} (as swept)"
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
    for combo, g in combos(d, others):
        fig, (ax,) = figure()
        m = g.groupby([slowdown, capacity], sort=False)[["_x", metric]].mean().reset_index()
        m = m.sort_values([slowdown, "_x"])
        for s, line in m.groupby(slowdown, sort=True):
            ax.plot(line["_x"], line[metric], ms=3, label=f"slowdown {value_text(s)}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(axis_label(metric))
        if has_cap:
            ax.xaxis.set_major_formatter(thousands())
        vals = m[metric][m[metric] > 0]
        log = bool(len(vals) and vals.max() > 100 * vals.min())
        if log:
            # Throughput spans orders of magnitude once the tier holds the whole
            # footprint (no disk reads left): a linear axis would flatten the
            # sizes where the lines must be compared.
            ax.set_yscale("log")
            ax.set_ylabel(f"{axis_label(metric)} (log scale)")
        else:
            ax.yaxis.set_major_formatter(thousands())
            from_zero(ax)
        if combo:
            ax.set_title(where(combo, counts), fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        runs = len(g)
        caption = (
            f"{axis_label(metric)} against {xlabel}, one line per {param_name(slowdown)}"
            f" ({where(combo, counts) + '; ' if combo else ''}{counted(runs, 'run')}"
            f"{', mean over repetitions' if g['rep'].nunique() > 1 else ''})."
        )
        stem = "-".join(["throughput", *([_slug(where(combo, counts))] if combo else [])])
        sec.figures.append(Plot(stem, fig, caption))
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
        show = equivalent_table(eq, unit, div, f"target {metric}")
        sec.tables.append(("Equivalent capacity at each swept capacity", show))
    return sec


def equivalent_table(eq: pd.DataFrame, unit: str, div: float, target: str) -> pd.DataFrame:
    """The equivalent-capacity table as a report shows it: capacities in
    `unit` (bytes over `div`), the target column named `target`; every
    report of this figure (a slowdown sweep's, S1's) in the same units."""
    show = eq.copy()
    show["capacity"] = show["capacity"] / div
    show["equivalent_capacity"] = show["equivalent_capacity"] / div
    return show.rename(
        columns={
            "capacity": f"capacity ({unit})",
            "target": target,
            "equivalent_capacity": f"equivalent ({unit})",
        }
    )


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
        f"'{value_text(base)}' on the same storage (1 = the same time; lower is better); "
        "gain = 1 - relative time.",
    )
    techs = list(dict.fromkeys(df[_BACKING]))
    # One figure per combination of the other axes but the last, one panel per
    # value of the last.
    outer, inner = list(others[:-1]), list(others[-1:])
    for combo, sub in combos(g, outer):
        panels = combos(sub, inner)
        if inner:
            # Panels in the axis's order (df is in point order), not the
            # order the gain table happens to be grouped in ("10%" < "5%").
            order = {v: i for i, v in enumerate(dict.fromkeys(df[inner[0]]))}
            panels.sort(key=lambda p: order.get(p[0][inner[0]], len(order)))
        fig, axes = figure(5.0 if len(panels) > 1 else 7.0, 4.5, len(panels))
        for ax, (pc, pg) in zip(axes, panels, strict=True):
            width = 0.8 / max(1, len(configs))
            for j, c in enumerate(configs):
                ys = [
                    float(pg[(pg[_BACKING] == t) & (pg["config"] == c)]["metric"].mean())
                    / float(pg[(pg[_BACKING] == t) & (pg["config"] == c)]["baseline"].mean())
                    for t in techs
                ]
                xs = [i + (j - (len(configs) - 1) / 2) * width for i in range(len(techs))]
                ax.bar(xs, ys, width, label=value_text(c))
            ax.set_xticks(range(len(techs)), [value_text(t) for t in techs], fontsize=8)
            ax.set_ylabel(f"{axis_label(metric)} relative to {value_text(base)}")
            if pc:
                ax.set_title(where(pc), fontsize=9)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.grid(True, axis="y", alpha=0.3)
        axes[0].legend(fontsize=8)
        if combo:
            fig.suptitle(where(combo), fontsize=10)
        fig.tight_layout()
        runs = d
        for k, v in combo.items():
            runs = runs[runs[k] == v]
        caption = (
            f"{axis_label(metric)} of each {param_name(admission)} "
            "relative to "
            f"'{value_text(base)}', one bar group per {param_name(_BACKING)}"
            + (f", one panel per {param_name(inner[0])}" if inner else "")
            + f" ({where(combo) + '; ' if combo else ''}{counted(len(runs), 'run')}"
            + (", mean over repetitions" if runs["rep"].nunique() > 1 else "")
            + ")."
        )
        stem = "-".join(["access-time", *([_slug(where(combo))] if combo else [])])
        sec.figures.append(Plot(stem, fig, caption))
    table = g[g["config"] != base].copy()
    sec.tables.append((f"Gain in {metric} over '{value_text(base)}'", table))
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
    fig, (ax,) = figure(8.0, 4.5)
    for combo, g in combos(t, axes):
        g = g.sort_values("requests")
        # An interval of deletes only (PostMark's end of run) has no lookups and
        # no miss ratio: a gap in the line, not a drop to 0.
        y = g["miss_ratio"].where(g["lookups"] > 0) if "lookups" in g else g["miss_ratio"]
        ax.plot(
            g["requests"] / 1e6,
            y,
            lw=1.2,
            ms=3,
            markevery=max(1, len(g) // 8),
            label=where(combo) or "run",
        )
    for b in bounds[:-1]:
        ax.axvline(b / 1e6, color="grey", ls=":", lw=1)
    ax.set_xlabel("requests (millions)")
    ax.set_ylabel("miss ratio per interval")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    lines = len(combos(t, axes))
    sec.figures.append(
        Plot(
            "miss-ratio-over-time",
            fig,
            f"Miss ratio of each timeline interval against requests simulated, "
            f"{counted(lines, 'line')} (one per point"
            + (f": {', '.join(param_name(a) for a in axes)}" if axes else "")
            + (f"; at the largest {param_name(runs_ax)}" if runs_ax else "")
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


def _draw(
    ax: Any, lines: list[tuple[str | None, list[Any], list[float]]], categories: list[str] | None
) -> None:
    """Lines of (label, xs, ys) on ``ax``. A numeric x axis joins each
    line's points; a categorical one (a policy, a technology) draws each
    line's points apart, side by side at each category, and joins nothing:
    there is nothing between two policies."""
    if categories is None:
        for label, xs, ys in lines:
            ax.plot(xs, ys, ms=3, label=label)
        return
    pos = {c: i for i, c in enumerate(categories)}
    step = 0.6 / max(1, len(lines))
    for k, (label, xs, ys) in enumerate(lines):
        off = (k - (len(lines) - 1) / 2) * step
        ax.plot([pos[x] + off for x in xs], ys, linestyle="none", ms=5, label=label)
    # Many names side by side run into each other: slanted then.
    slant = 30 if len(categories) > 8 else 0
    ax.set_xticks(
        range(len(categories)),
        categories,
        fontsize=8,
        rotation=slant,
        ha="right" if slant else "center",
    )
    ax.set_xlim(-0.5, len(categories) - 0.5)


def _legend(ax: Any, entries: int, title: str | None = None) -> None:
    """A legend inside the axes for a few entries, beside them for many;
    ``title`` names the one axis its entries are values of."""
    kw: dict[str, Any] = {"fontsize": 7, "title": title, "title_fontsize": 7}
    if entries > 6:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, **kw)
    else:
        ax.legend(**kw)


def _line_label(combo: dict[str, Any], counts: str = "bytes") -> str | None:
    """A legend entry: the value alone when one axis makes the lines (the
    legend's title names it), else ``name = value, ...``."""
    if len(combo) == 1:
        ((k, v),) = combo.items()
        return param_value(k, v, counts)
    return where(combo, counts) or None


def _time_scaled(metric: str, values: Sequence[float]) -> tuple[float, str]:
    """The divisor and unit a metric is drawn in: times (``_ns``) in ns, us,
    ms or s by their largest value; anything else as it is."""
    if metric.endswith("_ns") or "_ns." in metric:
        finite = [abs(float(v)) for v in values if v == v]
        return time_unit(max(finite, default=0.0))
    return 1.0, ""


#: The metrics the generic section draws first, in this order.
_FIRST = [
    "miss_ratio",
    "byte_miss_ratio",
    "throughput_rps",
    "amat_ns",
    "latency_ns.p99",
    "access_time_ns",
    "total_time_ns",
]


def generic_section(
    df: pd.DataFrame, axes: Sequence[str], max_plots: int = 12, counts: str = "bytes"
) -> Section:
    """Each metric against the first axis, one line per combination of the
    other axes (mean over repetitions)."""
    sec = Section(
        f"Each metric against {param_name(axes[0]) if axes else 'the first axis'}",
        "Mean over repetitions"
        + (
            f"; one line (or, against names, one marker) per combination of "
            f"{', '.join(param_name(a) for a in axes[1:])}."
            if len(axes) > 1
            else "."
        ),
    )
    d = df[df["status"] == "ok"].copy()
    if not axes or d.empty:
        return sec
    first, rest = axes[0], list(axes[1:])
    xlabel = param_name(first)
    cap = _CAPACITY.match(first)
    cap_metric = f"tiers.{cap.group(1)}.capacity" if cap else ""
    sizes = cap_metric in d.columns
    categories: list[str] | None = None
    if sizes:
        # A capacity axis is drawn in the runs' own bytes, in a binary unit
        # (a share such as "10%" resolves to different bytes per footprint).
        div, unit = _capacity_scale(d, cap_metric, counts)
        d["_x"] = d[cap_metric].astype(float) / div
        xlabel = f"tier {cap.group(1) if cap else 0} capacity ({unit})"
    else:
        x = as_numbers(d[first])
        if x is None:
            d["_x"] = [param_value(first, v, counts) for v in d[first]]
            categories = list(dict.fromkeys(d["_x"]))
        else:
            d["_x"] = x
    # The figures a reader compares first, first; a metric the same at every
    # point (deletes, flush time in a run without flushes) draws a flat line
    # that says nothing: the table of all results has it.
    shown = [m for m in _metrics(d, axes) if len(d) < 2 or d[m].nunique(dropna=True) > 1]
    shown.sort(key=lambda m: _FIRST.index(m) if m in _FIRST else len(_FIRST))
    if len(shown) < len(_metrics(d, axes)):
        sec.text += " Metrics the same at every point are in the table of all results only."
    for metric in shown[:max_plots]:
        lines: list[tuple[str | None, list[Any], list[float]]] = []
        for combo, g in combos(d, rest):
            if categories is None:
                m = g.groupby(first, sort=False)[["_x", metric]].mean().sort_values("_x")
                xs, ys = list(m["_x"]), list(m[metric])
            else:
                mm = g.groupby("_x", sort=False)[metric].mean()
                xs, ys = list(mm.index), list(mm.values)
            lines.append((_line_label(combo, counts), xs, ys))
        div, unit = _time_scaled(metric, [y for _, _, ys in lines for y in ys])
        lines = [(lab, xs, [y / div for y in ys]) for lab, xs, ys in lines]
        fig, (ax,) = figure(8.5 if len(lines) > 6 else 7.0, 4.5)
        _draw(ax, lines, categories)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(axis_label(metric, unit))
        if sizes:
            ax.xaxis.set_major_formatter(thousands())
        ax.yaxis.set_major_formatter(thousands())
        from_zero(ax)
        ax.grid(True, alpha=0.3)
        if rest:
            _legend(ax, len(lines), param_name(rest[0]) if len(rest) == 1 else None)
        fig.tight_layout()
        caption = (
            f"{axis_label(metric, unit)} against {xlabel}"
            + (
                f", one {'line' if categories is None else 'marker'} per combination of "
                f"{', '.join(param_name(a) for a in rest)}"
                if rest
                else ""
            )
            + f" ({counted(len(d), 'run')}"
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
    xs = as_numbers(d[x])
    categories = None
    if xs is None:
        d["_x"] = [param_value(x, v) for v in d[x]]
        categories = list(dict.fromkeys(d["_x"]))
    else:
        d["_x"] = xs
    tput: list[tuple[str | None, list[Any], list[float]]] = []
    p99: list[tuple[str | None, list[Any], list[float]]] = []
    for combo, g in combos(d, rest):
        m = g.groupby("_x", sort=xs is not None)[["throughput_rps", _P99]].mean()
        label = _line_label(combo)
        tput.append((label, list(m.index), list(m["throughput_rps"])))
        p99.append((label, list(m.index), list(m[_P99])))
    div, unit = time_unit(max(float(v) for _, _, ys in p99 for v in ys if v == v))
    p99 = [(lab, xv, [v / div for v in ys]) for lab, xv, ys in p99]
    fig, (a1, a2) = figure(5.5, 4.0, ncols=2)
    _draw(a1, tput, categories)
    _draw(a2, p99, categories)
    a1.set_ylabel(axis_label("throughput_rps"))
    a1.yaxis.set_major_formatter(thousands())
    a2.set_ylabel(axis_label(_P99, unit))
    for ax in (a1, a2):
        ax.set_xlabel(param_name(x))
        from_zero(ax)
        ax.grid(True, alpha=0.3)
    if rest:
        _legend(a2, len(tput), param_name(rest[0]) if len(rest) == 1 else None)
    fig.tight_layout()
    sec = Section(
        f"Throughput and p99 latency against {param_name(x)}",
        "From the time model (docs/time.md): requests completed per second of "
        "simulated time, and the 99th percentile of request latency.",
    )
    sec.figures.append(
        Plot(
            "throughput-p99",
            fig,
            f"Throughput and p99 latency against {param_name(x)}"
            + (
                f", one line per combination of {', '.join(param_name(a) for a in rest)}"
                if rest
                else ""
            )
            + f" ({counted(len(d), 'run')}"
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
    return [", ".join(param_value(a, r[a]) for a in axes) for _, r in d.iterrows()]


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
    fig, (ax,) = figure(max(7.0, 1.2 * len(labels) * len(have)), 4.5)
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
    ax.set_xlabel(", ".join(param_name(a) for a in axes) if axes else "run")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    sec.figures.append(
        Plot(
            "power-by-state",
            fig,
            f"Mean power of each device ({', '.join(n for _, n in have)}) by state, "
            f"one bar per run and device ({counted(len(d), 'run')}).",
        )
    )
    # Wear histograms: `[erases, erase blocks]` pairs, stored flattened.
    hist: dict[int, dict[int, dict[str, str]]] = {}
    for c in d.columns:
        if m := _HIST.match(str(c)):
            tier, pair, part = int(m.group(1)), int(m.group(2)), m.group(3)
            hist.setdefault(tier, {}).setdefault(pair, {})[part] = str(c)
    for tier, pairs in sorted(hist.items()):
        fig, (ax,) = figure()
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
    from tierlab.config import column_name
    from tierlab.store import load, load_experiment_meta

    meta = load_experiment_meta(store, experiment)
    name = meta["name"]
    df = load(store, name)
    axes = [column_name(a["key"]) for a in meta.get("axes", [])]
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
    from tierlab.report_tiered import tiered_section

    tiered = tiered_section(df, axes)
    if tiered is not None:
        sections.append(tiered)
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
    from tierlab.report_lifetime import lifetime_cost_section

    lifetime = lifetime_cost_section(df, axes)
    if lifetime is not None:
        sections.append(lifetime)
    return meta, df, sections


# The HTML writer moved to tierlab.report_html; its names stay reachable
# here (``from tierlab.report import write_report``) without an import
# cycle: report_html imports the sections from this module.
_HTML_NAMES = frozenset({"write_report", "make_folder", "formatted", "column_format"})


def __getattr__(name: str) -> Any:
    if name in _HTML_NAMES:
        from tierlab import report_html

        return getattr(report_html, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
