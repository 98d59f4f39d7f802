"""The report's multilevel-main-memory figure and table: for a sweep of the
fast node's capacity (``vm.node[0].capacity``) and the migration policy
(``vm.migration.type``, or a ``vm.migration`` axis of tables with labels),
the slowdown against the fast node's share, one line per policy, the two
oracles (``oracle-static``, ``oracle-epoch``: references no real system
has) dashed; one figure per combination of the other axes (the workload,
say). The table gives, per fast share and policy, the slowdown, the
migrations (promotions + demotions), the ping-pong share of the demotions
and the policies' overhead (docs/tiered-memory.md, "Outputs").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tierlab.plotting import combos, counted, figure, param_value, where

if TYPE_CHECKING:
    import pandas as pd

    from tierlab.report import Section

#: The results columns of the two axes, as tierlab.load names them.
FAST_AXIS = "vm.node.0.capacity"
POLICY_AXES = ("vm.migration.type", "vm.migration")
#: The policies no real system has: drawn dashed.
ORACLES = ("oracle-static", "oracle-epoch")
#: The table's figures: (column, heading).
TABLE = (
    ("tiered.slowdown", "slowdown"),
    ("migrations", "migrations"),
    ("tiered.ping_pong_share", "ping-pong share"),
    ("overhead_ms", "overhead (ms)"),
    ("tiered.fast_share_of_accesses", "fast share of accesses"),
)


def fast_share(v: Any) -> float:
    """The fast node's capacity as a share of the footprint ("25%" ->
    0.25), or its bytes when the axis gave bytes; NaN for anything else.

    >>> fast_share("5%"), fast_share(4096), fast_share("x")
    (0.05, 4096.0, nan)
    """
    if isinstance(v, bool):
        return math.nan
    if isinstance(v, int | float):
        return float(v)
    s = str(v).strip()
    try:
        return float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        return math.nan


def _policy_axis(axes: Sequence[str]) -> str | None:
    return next((a for a in POLICY_AXES if a in axes), None)


def is_oracle(policy: Any) -> bool:
    """A label naming one of the oracles (``oracle-epoch``, or a label
    that starts with it, ``oracle-epoch-100k``)."""
    return str(policy).startswith(ORACLES)


def tiered_table(d: pd.DataFrame, fast: str, policy: str) -> pd.DataFrame:
    """One combination's rows as the report shows them: fast share and
    policy, then :data:`TABLE`'s figures (those the store has)."""
    import pandas as pd

    g = d.copy()
    if "tiered.promotions" in g.columns and "tiered.demotions" in g.columns:
        g["migrations"] = g["tiered.promotions"] + g["tiered.demotions"]
    if "tiered.overhead.total_ns" in g.columns:
        g["overhead_ms"] = g["tiered.overhead.total_ns"].astype(float) / 1e6
    order = {p: i for i, p in enumerate(dict.fromkeys(d[policy]))}
    g = g.assign(_x=g[fast].map(fast_share), _p=g[policy].map(order))
    g = g.sort_values(["_x", "_p"])
    out = pd.DataFrame(
        {
            "fast share": [param_value(FAST_AXIS, v) for v in g[fast]],
            "policy": [str(p) for p in g[policy]],
        }
    )
    for col, head in TABLE:
        if col in g.columns:
            out[head] = g[col].to_numpy()
    return out


def tiered_section(df: pd.DataFrame, axes: Sequence[str]) -> Section | None:
    """Slowdown against the fast node's share, one line per policy (the
    oracles dashed), and the table. None unless the experiment sweeps
    ``vm.node[0].capacity`` and the migration policy and its runs have a
    ``tiered.slowdown``."""
    from matplotlib.colors import TABLEAU_COLORS

    from tierlab.report import Plot, Section

    palette = list(TABLEAU_COLORS.values())
    policy = _policy_axis(axes)
    if FAST_AXIS not in axes or policy is None or "tiered.slowdown" not in df.columns:
        return None
    d = df[(df["status"] == "ok") & df["tiered.slowdown"].notna()]
    if d.empty:
        return None
    others = [a for a in axes if a not in (FAST_AXIS, policy)]
    groups = combos(d, others)
    policies = list(dict.fromkeys(d[policy]))
    sec = Section(
        "Slowdown against the fast node's share",
        "Each run's slowdown against the same trace with every page on the fast "
        "node (computed in the same pass, docs/tiered-memory.md), at each capacity "
        "of node 0, one line per migration policy; the oracles (dashed) are "
        "references no real system has. Migrations are promotions plus demotions; "
        "the ping-pong share is the share of demotions of a page promoted in the "
        "same epoch; the overhead is the policy's time (copies, hint faults, "
        "samples, scans) at the configured costs.",
    )
    for n, (combo, g) in enumerate(groups):
        fig, (ax,) = figure(7.0, 4.5)
        shares = _shares(g)
        for i, p in enumerate(policies):
            # One colour per policy in every figure, whatever lines it has.
            line = g[g[policy] == p].assign(_x=g[FAST_AXIS].map(fast_share))
            line = line.dropna(subset=["_x"]).sort_values("_x")
            if line.empty:
                continue
            xs = line["_x"] * (100 if shares else 1)
            ax.plot(
                xs,
                line["tiered.slowdown"].astype(float),
                label=str(p),
                color=palette[i % len(palette)],
                linestyle="--" if is_oracle(p) else "-",
                marker="s" if is_oracle(p) else "o",
                markersize=4,
            )
        ax.set_xlabel(
            "fast node's capacity (% of the footprint)"
            if shares
            else "fast node's capacity (bytes)"
        )
        ax.set_ylabel("slowdown against all pages on the fast node")
        ax.axhline(1.0, color="0.6", linewidth=0.8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, title="migration policy", title_fontsize=8)
        if combo:
            ax.set_title(where(combo), fontsize=9)
        fig.tight_layout()
        shown = f" ({where(combo)})" if combo else ""
        sec.figures.append(
            Plot(
                f"tiered-slowdown-{n}" if combo else "tiered-slowdown",
                fig,
                f"Slowdown against the fast node's share of the footprint{shown}, "
                f"one line per policy, the oracles dashed ({counted(len(g), 'run')}).",
            )
        )
        sec.tables.append((f"Fast share x policy{shown}", tiered_table(g, FAST_AXIS, policy)))
    return sec


def _shares(d: pd.DataFrame) -> bool:
    """Whether the fast node's capacities were given as shares ("25%")."""
    return all(str(v).strip().endswith("%") for v in d[FAST_AXIS])
