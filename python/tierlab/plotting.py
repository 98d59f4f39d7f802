"""The figure helpers every report and reproduction draws with: one look
(colours, line styles, axes from zero), readable names and units for
config key paths and their values, and human units on axes.

``figure()`` is the one way a report makes a figure; ``param_name`` and
``param_value`` turn ``tier[0].capacity = 6710886`` into
``tier 0 capacity = 6.4 MiB`` for legends, titles and captions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Line styles a figure cycles through once its ten colours are used, so
#: that the eleventh line is not the first line's twin.
_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"))


def figure(width: float = 7.0, height: float = 4.5, ncols: int = 1) -> tuple[Figure, Any]:
    """A matplotlib figure (Agg, no pyplot state) of ``ncols`` axes side by
    side, each ``width`` by ``height`` inches. Lines cycle through the ten
    tab10 colours with a solid line and round marker first, then with a
    dashed line and square marker, and so on: up to 40 lines stay apart."""
    import matplotlib

    matplotlib.use("Agg")
    from cycler import cycler
    from matplotlib.colors import TABLEAU_COLORS
    from matplotlib.figure import Figure

    colors = list(TABLEAU_COLORS.values())  # tab10, matplotlib's default cycle
    styles = cycler(linestyle=[s for s, _ in _STYLES]) + cycler(marker=[m for _, m in _STYLES])
    fig = Figure(figsize=(width * ncols if ncols > 1 else width, height), dpi=100)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    for ax in axes:
        ax.set_prop_cycle(styles * cycler(color=colors))
    return fig, axes


def from_zero(ax: Axes, top: float | None = None) -> None:
    """A y axis that starts at zero (a 2% change must not look like a
    cliff), unless it is logarithmic or the data go below zero."""
    if ax.get_yscale() == "log":
        return
    lo, hi = ax.get_ylim()
    if lo >= 0 or (lo < 0 and all(v >= 0 for v in _ydata(ax))):
        ax.set_ylim(0, hi if top is None else top)


def _ydata(ax: Axes) -> list[float]:
    import numpy as np

    out: list[float] = []
    for line in ax.get_lines():
        ys = np.asarray(line.get_ydata(), dtype=float)
        out.extend(float(v) for v in ys[~np.isnan(ys)])
    for patch in ax.patches:
        height = getattr(patch, "get_height", None)  # bars are Rectangles
        if height is not None:
            out.append(float(height()))
    return out


def value_text(v: Any) -> str:
    """A value as written: 3.0 as 3."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


#: Config keys (their last part) whose numbers are bytes.
_BYTES = ("capacity", "object_size", "page_size", "block_size", "size", "memory")
# A tier's key path, or its results column (tier.0.capacity).
_TIER = re.compile(r"^tier(?:\[(\d+)\]|\.(\d+))\.")
_NAMES = {
    "backing.tech": "storage",
    "load.clients": "clients",
    "workload.postmark.runs": "PostMark runs",
    "hierarchy.fill": "fill rule",
    "hierarchy.write": "write policy",
}


def param_name(key: str) -> str:
    """A config key path as a reader says it: ``tier[0].capacity`` ->
    ``tier 0 capacity``, ``backing.tech`` -> ``storage``,
    ``vm.page_size`` -> ``vm page size``.

    >>> param_name("tier[1].policy"), param_name("tier.1.policy"), param_name("load.clients")
    ('tier 1 policy', 'tier 1 policy', 'clients')
    """
    if key in _NAMES:
        return _NAMES[key]
    name = _TIER.sub(lambda m: f"tier {m.group(1) or m.group(2)} ", key)
    return name.replace(".", " ").replace("_", " ")


def param_value(key: str, v: Any, counts: str = "bytes") -> str:
    """A swept value as a reader reads it: bytes of a size key in KiB, MiB
    or GiB (objects when ``counts`` is ``"objects"``), a share or a name as
    written.

    >>> param_value("tier[0].capacity", 6710886), param_value("tier[0].capacity", "10%")
    ('6.4 MiB', '10%')
    """
    last = key.rsplit(".", 1)[-1]
    number = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    if number and last in _BYTES:
        if counts == "objects":
            return f"{v:,.0f} objects"
        div, unit = size_unit(float(v))
        shown = float(v) / div
        return f"{shown:.3g} {unit}" if div > 1 else f"{shown:,.0f} B"
    if number and last.endswith("_ns"):
        return human_time(float(v))
    return value_text(v)


def where(combo: dict[str, Any], counts: str = "bytes") -> str:
    """A combination of axis values, for a legend or title:
    ``tier 0 slowdown = 3, tier 0 capacity = 6.4 MiB``."""
    return ", ".join(f"{param_name(k)} = {param_value(k, v, counts)}" for k, v in combo.items())


def as_numbers(values: pd.Series) -> pd.Series | None:
    """The axis values as numbers ("10%" -> 10.0), or None when one is a
    name (a policy, a technology): such an axis is categorical."""
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


def combos(df: pd.DataFrame, cols: Sequence[str]) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The rows of each combination of ``cols`` (in order of appearance)."""
    if not cols:
        return [({}, df)]
    out = []
    for key, g in df.groupby(list(cols), sort=False, dropna=False):
        kt = key if isinstance(key, tuple) else (key,)
        out.append((dict(zip(cols, kt, strict=True)), g))
    return out


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


def time_unit(largest_ns: float) -> tuple[float, str]:
    """The unit (divisor from ns, name) in which ``largest_ns`` reads as a
    number between 1 and 1000: every report draws times this way.

    >>> time_unit(850), time_unit(2.5e6), time_unit(4e9)
    ((1.0, 'ns'), (1000000.0, 'ms'), (1000000000.0, 's'))
    """
    for div, name in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if largest_ns >= div:
            return div, name
    return 1.0, "ns"


def human_time(ns: float) -> str:
    div, unit = time_unit(abs(ns))
    return f"{ns / div:.3g} {unit}"


#: Axis names of the figures the reports draw most.
AXIS_LABELS = {
    "throughput_rps": "throughput (requests/s)",
    "miss_ratio": "miss ratio",
    "byte_miss_ratio": "byte miss ratio",
    "amat_ns": "mean access time",
    "access_time_ns": "storage access time",
    "total_time_ns": "simulated time",
    "latency_ns.p99": "p99 latency",
    "energy_j": "energy (J)",
    "power_w": "power (W)",
}


def axis_label(metric: str, unit: str = "") -> str:
    """A metric as an axis names it, with its unit: ``amat_ns`` in ``us``
    -> ``mean access time (us)``; ``tiers.0.hits`` -> ``tier 0 hits``."""
    name = AXIS_LABELS.get(metric)
    if name is None:
        name = re.sub(r"^tiers\.(\d+)\.", r"tier \1 ", metric)
        name = re.sub(r"_(ns|us|s)$", "", name).replace(".", " ").replace("_", " ")
    return f"{name} ({unit})" if unit else name


def thousands() -> Any:
    """A tick formatter: 12,000 rather than 12000 or 1.2e4."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _pos: f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}")


def counted(n: int, what: str) -> str:
    """``1 point``, ``2 points``."""
    return f"{n:,} {what}" + ("" if n == 1 else "s")
